//! The library's unit tests, one module per source module (`unit::methods::svgp::train`
//! tests `src/methods/svgp/train.rs`): the library is compiled once, not again as a
//! unit-test harness (`[lib] test = false`).

mod arg_values;
mod chart;
mod cli;
mod collapsed;
mod data;
mod ep;
mod exec;
mod fix;
mod kernel;
mod likelihoods;
mod linalg;
mod methods;
mod metrics;
mod model_file;
mod optim;
mod params;
mod plot;
mod run_spec;
mod scratch;
mod session;
mod side_by_side;
mod tui;
mod two_starts;
mod words;
