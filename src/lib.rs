//! sgpw — the sparse Gaussian-process workbench.
//!
//! Data flows one way: `data` loads a [`data::Dataset`], a method from
//! [`methods::registry`] initialises parameters, [`optim`] minimises the NLML
//! (computed by [`collapsed`] for every low-rank method), the fitted model
//! caches its posterior, and [`metrics`] scores its predictions.

pub mod arg_values;
pub mod chart;
pub mod cli;
pub mod collapsed;
pub mod data;
pub mod distributed;
pub mod ep;
pub mod error;
pub mod exec;
pub mod fix;
pub mod jobs;
pub mod kernel;
pub mod likelihoods;
pub mod linalg;
pub mod matrix_rows;
pub mod methods;
pub mod metrics;
pub mod model_file;
pub mod optim;
pub mod params;
pub mod plot;
pub mod results;
pub mod run_context;
pub mod run_spec;
pub mod scratch;
pub mod session;
pub mod side_by_side;
pub mod stream_fit;
pub mod train;
pub mod tui;
pub mod two_starts;
pub mod words;
