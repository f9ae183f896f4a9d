//! Data sets: loading (through polars, the only module that touches it),
//! validation, splits, standardisation and the synthetic generators.

pub mod arrays;
pub mod big;
pub mod csv_range;
pub mod data_file;
pub mod exposure;
pub mod file_rows;
pub mod guard;
pub mod load;
pub mod moments;
pub(crate) mod parquet_check;
mod parquet_pages;
pub mod parquet_values;
pub mod progress;
mod sample;
pub mod stream;
pub mod synthetic;
mod table;

use crate::likelihoods::ClassNames;
use nalgebra::{DMatrix, DVector};
use std::path::PathBuf;

pub use load::{load, load_for_fit, load_inputs, load_with_progress};
pub use progress::LoadProgress;

/// What to load and how to split it. Built from CLI flags or a session's `[[datasets]]`.
#[derive(Clone, Debug, Default)]
pub struct LoadSpec {
    pub train: PathBuf,
    /// A separate test file with the same columns.
    pub test: Option<PathBuf>,
    /// Fraction of the rows used for training when there is no test file (seeded shuffle).
    pub split: Option<f64>,
    pub seed: u64,
    /// Target column; default: the last column.
    pub target: Option<String>,
    /// Feature columns; default: every column but the target.
    pub features: Option<Vec<String>>,
    /// Drop rows with missing values instead of failing.
    pub drop_missing: bool,
}

/// A loaded regression data set: training part and optional test part, inputs as
/// given (n×D, one row per point), targets uncentred.
#[derive(Clone, Debug)]
pub struct Dataset {
    pub feature_names: Vec<String>,
    pub target_name: String,
    pub x_train: DMatrix<f64>,
    pub y_train: DVector<f64>,
    pub x_test: Option<DMatrix<f64>>,
    pub y_test: Option<DVector<f64>>,
    /// A target of two labels (text, or booleans): the labels of classes 0 and 1, which
    /// `y_train` and `y_test` hold as the codes 0 and 1 (`likelihoods::ClassNames`).
    /// None for a numeric target.
    pub classes: Option<ClassNames>,
    /// Human-readable remarks made while loading (dropped constant columns, dropped rows).
    pub notes: Vec<String>,
}

/// Training data in model units: inputs standardised if asked, targets centred
/// (and scaled if standardised). What every method fits and evaluates on.
#[derive(Clone, Debug)]
pub struct TrainData {
    pub x: DMatrix<f64>,
    pub y: Vec<f64>,
    /// log E_i of each row's exposure (poisson's `--exposure`), added to the latent f_i
    /// inside the likelihood; None: every E_i = 1.
    pub log_exposure: Option<Vec<f64>>,
}

impl Dataset {
    pub fn n_train(&self) -> usize {
        self.x_train.nrows()
    }
    pub fn n_test(&self) -> usize {
        self.x_test.as_ref().map_or(0, |x| x.nrows())
    }
    pub fn dim(&self) -> usize {
        self.x_train.ncols()
    }
}
