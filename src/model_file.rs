//! Model files (TOML): the parameters of a fitted or hand-written model, the
//! transformation of its inputs and targets, and optionally its cached posterior.
//! The same tables are stored per result in session files.
//!
//! Every method reads and writes its parameters here, in physical units (variances,
//! lengthscales, absolute frequencies); the optimiser's log-space vector is private
//! to each method.
//!
//! One module per job: `schema` the shared tables as typed values and the file's
//! reading and writing; `tables` the method's own tables; `check` the check of the
//! shared part and the number of inputs; `fit_record` the `[fit]` record; `fit_notes`
//! what a fitted model's values warn of; `files` atomic writes and TOML line numbers.

mod check;
mod files;
mod fit_notes;
mod fit_record;
mod schema;
mod tables;

pub use check::{Witness, settle_dim};
pub use files::{atomic_write, line_of, temp_beside, toml_error};
pub use fit_notes::{
    COLLAPSE_ADVICE, COLLAPSE_RATIO, NOISE_COLLAPSE_RATIO, UNBOUNDED_LATENT_VARIANCE,
};
pub use fit_record::{CollapseRestart, FitInfo, SecondStart};
pub use schema::{Hyper, ModelFile, Standardize, jitter_policy, raw_scale_offset};
pub use tables::{ModelTable, required_matrix, rows_to_matrix};

pub use crate::matrix_rows::matrix_to_rows;
