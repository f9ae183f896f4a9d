//! A count model's exposure column (poisson's `--exposure`; docs/methods.md,
//! "Likelihoods"): y_i ~ Poisson(E_i · exp f(x_i)). The column is read with the inputs,
//! like any other, and taken out of them before a fit ([`split_off`]), so it is never an
//! input of the kernel; its values are checked (finite, > 0) with the row named, and
//! their logarithms are the offsets the likelihood adds to f.

use super::{Dataset, LoadSpec};
use crate::error::{Error, Result};
use nalgebra::DMatrix;

/// The exposure of the training rows and, where there is one, of the test rows, in the
/// rows' order.
#[derive(Clone, Debug, PartialEq)]
pub struct Exposure {
    pub column: String,
    pub train: Vec<f64>,
    pub test: Option<Vec<f64>>,
}

impl Exposure {
    /// log E of each training row: the offsets added to the latent f.
    pub fn log_train(&self) -> Vec<f64> {
        self.train.iter().map(|e| e.ln()).collect()
    }
}

/// Have `spec` read the exposure column `column` with the inputs: added to a list of
/// inputs the run gives (`--features`), refused when that list or the target names it.
pub fn read_with_inputs(spec: &mut LoadSpec, column: &str) -> Result<()> {
    let column = column.trim();
    if spec.target.as_deref().map(str::trim) == Some(column) {
        return Err(Error::input(format!(
            "--exposure {column} names the target (--target): the exposure scales the rate \
             of the counts, it is not what is counted"
        )));
    }
    if let Some(features) = spec.features.as_mut() {
        if features.iter().any(|f| f.trim() == column) {
            return Err(Error::input(format!(
                "--exposure {column} is also an input (--features): the exposure enters the \
                 likelihood as the offset log E, not the kernel; leave it out of --features"
            )));
        }
        features.push(column.to_string());
    }
    Ok(())
}

/// A fit whose rows are read in parts (a streamed file, the processes of a distributed
/// fit) does not carry an exposure column yet: refused before any work.
pub fn refuse_rows_by_parts(column: Option<&str>, how: &str) -> Result<()> {
    match column {
        Some(c) => Err(Error::input(format!(
            "--exposure {c}: {how} does not read an exposure column; fit in memory (leave \
             out --stream / --distributed)"
        ))),
        None => Ok(()),
    }
}

/// `data` without the input column `column`, and that column as the exposure. Refused,
/// naming the column (and the files and row when `files` says where the rows came
/// from), when the column is the target, is not among the inputs, or has a value that
/// is not a finite number > 0.
pub fn split_off(
    data: &Dataset,
    column: &str,
    files: Option<&LoadSpec>,
) -> Result<(Dataset, Exposure)> {
    let column = column.trim();
    let fail = |test: bool, msg: String| -> Error {
        match files {
            Some(spec) => match (test, &spec.test) {
                (true, Some(path)) => Error::data(path, msg),
                _ => Error::data(&spec.train, msg),
            },
            None => Error::input(msg),
        }
    };
    if column == data.target_name {
        return Err(fail(
            false,
            format!(
                "the exposure column '{column}' (--exposure) is also the target: the \
                 exposure scales the rate of the counts, it is not what is counted; name \
                 another column"
            ),
        ));
    }
    let Some(j) = data.feature_names.iter().position(|n| n == column) else {
        return Err(fail(
            false,
            format!(
                "no exposure column '{column}' (--exposure) among the data's columns \
                 other than the target '{}' (those read: {}); a column with one value in \
                 every row is dropped when the data are read, and an exposure the same for \
                 every row is better left out",
                data.target_name,
                data.feature_names.join(", ")
            ),
        ));
    };
    if data.feature_names.len() < 2 {
        return Err(fail(
            false,
            format!(
                "the exposure column '{column}' (--exposure) is the only column besides \
                 the target: a fit needs at least one input besides the exposure"
            ),
        ));
    }
    // the row as the user finds it: in a file read without a split or dropped rows the
    // data set's rows are the file's
    let in_file = files.is_some_and(|s| s.split.is_none() && !s.drop_missing);
    let check = |values: &[f64], test: bool| -> Result<()> {
        match crate::likelihoods::log_exposures(values) {
            Ok(_) => Ok(()),
            Err(i) => {
                let part = if test { "test" } else { "training" };
                let csv = files.is_some_and(|s| {
                    let path = if test {
                        s.test.as_ref()
                    } else {
                        Some(&s.train)
                    };
                    path.is_some_and(|p| p.to_string_lossy().to_lowercase().contains(".csv"))
                });
                let row = if in_file && csv {
                    format!("row {} (line {} of the file)", i + 1, i + 2)
                } else if in_file {
                    format!("row {}", i + 1)
                } else {
                    format!("{part} row {}", i + 1)
                };
                Err(fail(
                    test,
                    format!(
                        "the exposure column '{column}' (--exposure) at {row}: {} is not a \
                         positive number; each row's exposure (a time, an area, a \
                         population) must be a finite number > 0",
                        values[i]
                    ),
                ))
            }
        }
    };
    let train: Vec<f64> = data.x_train.column(j).iter().copied().collect();
    check(&train, false)?;
    let test: Option<Vec<f64>> = data
        .x_test
        .as_ref()
        .map(|x| x.column(j).iter().copied().collect());
    if let Some(t) = &test {
        check(t, true)?;
    }
    let without = |x: &DMatrix<f64>| x.clone().remove_column(j);
    let mut feature_names = data.feature_names.clone();
    feature_names.remove(j);
    let rest = Dataset {
        feature_names,
        x_train: without(&data.x_train),
        x_test: data.x_test.as_ref().map(without),
        ..data.clone()
    };
    Ok((
        rest,
        Exposure {
            column: column.to_string(),
            train,
            test,
        },
    ))
}
