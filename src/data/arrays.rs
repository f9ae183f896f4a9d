//! A data set handed over in memory (numpy arrays from Python) instead of read from a
//! file: the checks the loader makes on a file — finite values, matching shapes, a
//! target a fit can use, constant inputs dropped with a note — with messages that name
//! the array, and the row and column as Python indexes them.

use super::Dataset;
use super::load::{drop_constant_features, is_constant};
use crate::error::{Error, Result};
use crate::likelihoods::ClassNames;
use nalgebra::{DMatrix, DVector};

/// Training inputs and targets, and optionally a test set, as given.
pub struct Arrays {
    pub x_train: DMatrix<f64>,
    pub y_train: Vec<f64>,
    pub test: Option<(DMatrix<f64>, Vec<f64>)>,
    /// Names of the input columns (a DataFrame's); default x0, x1, …
    pub feature_names: Option<Vec<String>>,
    /// Name of the target (a Series'); default y.
    pub target_name: Option<String>,
    /// A target of labels (strings, booleans as "true"/"false"; None: missing) in place
    /// of `y_train`'s numbers, and the test set's in place of its: read as two classes
    /// by the loader's rule ([`ClassNames`]), the targets then their codes 0 and 1.
    pub labels: Option<Labels>,
}

/// The labels of a target of words, for training and (if any) the test set.
pub struct Labels {
    pub train: Vec<Option<String>>,
    pub test: Option<Vec<Option<String>>>,
    /// Whether they were booleans.
    pub booleans: bool,
}

fn as_str(v: &[Option<String>]) -> Vec<Option<&str>> {
    v.iter().map(Option::as_deref).collect()
}

/// `a`'s targets as numbers: its own, or its labels' class codes with the classes.
fn targets(a: &mut Arrays) -> Result<Option<ClassNames>> {
    let Some(labels) = a.labels.take() else {
        return Ok(None);
    };
    let train = &labels.train;
    let missing = |name: &str, v: &[Option<String>]| -> Result<()> {
        match v.iter().position(Option::is_none) {
            Some(i) => Err(Error::input(format!(
                "{name}[{i}] is missing: sgpw needs a label on every row (drop the rows \
                 with missing values first)"
            ))),
            None => Ok(()),
        }
    };
    missing("y", train)?;
    let (classes, codes) = ClassNames::of(&as_str(train), labels.booleans)
        .map_err(|b| Error::input(format!("y[{}]: {}", b.row, b.reason)))?;
    a.y_train = codes;
    if let (Some(test), Some((_, y))) = (&labels.test, a.test.as_mut()) {
        missing("y_test", test)?;
        *y = classes
            .codes(&as_str(test))
            .map_err(|b| Error::input(format!("y_test[{}]: {}", b.row, b.reason)))?;
    }
    Ok(Some(classes))
}

/// The names arrays get when nothing names them: `x0, x1, …` (Python counts from 0).
pub fn default_feature_names(d: usize) -> Vec<String> {
    (0..d).map(|j| format!("x{j}")).collect()
}

/// The data set a fit trains on, checked as a loaded file is.
pub fn dataset(mut a: Arrays) -> Result<Dataset> {
    let (n, d) = a.x_train.shape();
    if let Some(l) = &a.labels
        && l.train.len() != n
    {
        return Err(Error::input(format!(
            "y has {} values but X has {n} rows",
            l.train.len()
        )));
    }
    let classes = targets(&mut a)?;
    if n == 0 || d == 0 {
        return Err(Error::input(format!(
            "X has shape ({n}, {d}): a fit needs at least one row and one column"
        )));
    }
    check_targets("y", &a.y_train, "X", n)?;
    check_finite_inputs("X", &a.x_train)?;
    let names = match a.feature_names {
        Some(names) if names.len() != d => {
            return Err(Error::input(format!(
                "{} feature names for the {d} columns of X",
                names.len()
            )));
        }
        Some(names) => names,
        None => default_feature_names(d),
    };
    let target_name = a.target_name.unwrap_or_else(|| "y".to_string());
    if let Some(why) = super::moments::target_problem(&a.y_train) {
        return Err(Error::input(format!("the target y {why}")));
    }
    if let Some((x, y)) = &a.test {
        if x.ncols() != d {
            return Err(Error::input(format!(
                "X_test has {} columns but X has {d}",
                x.ncols()
            )));
        }
        check_targets("y_test", y, "X_test", x.nrows())?;
        check_finite_inputs("X_test", x)?;
    }
    let mut notes = Vec::new();
    let kept = drop_constant_features(
        &names,
        |j| is_constant(a.x_train.column(j).iter()),
        &mut notes,
        |msg| Error::input(format!("X: {msg}")),
    )?;
    let pick = |x: &DMatrix<f64>| DMatrix::from_fn(x.nrows(), kept.len(), |i, j| x[(i, kept[j])]);
    let (x_test, y_test) = match &a.test {
        Some((x, y)) => (Some(pick(x)), Some(DVector::from_column_slice(y))),
        None => (None, None),
    };
    let x_train = if kept.len() == d {
        a.x_train
    } else {
        pick(&a.x_train)
    };
    Ok(Dataset {
        feature_names: kept.iter().map(|&j| names[j].clone()).collect(),
        target_name,
        x_train,
        y_train: DVector::from_vec(a.y_train),
        x_test,
        y_test,
        classes,
        notes,
    })
}

/// One target per input row, every one finite.
fn check_targets(name: &str, y: &[f64], x_name: &str, rows: usize) -> Result<()> {
    if y.len() != rows {
        return Err(Error::input(format!(
            "{name} has {} values but {x_name} has {rows} rows",
            y.len()
        )));
    }
    if let Some((i, v)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::input(format!(
            "{name}[{i}] is {v}: sgpw needs finite values (drop or impute the rows with \
             missing values first)"
        )));
    }
    Ok(())
}

/// Inputs for a fit or a prediction: every value finite (named `X[i, j]`).
pub fn check_finite_inputs(name: &str, x: &DMatrix<f64>) -> Result<()> {
    // row by row, so the first bad row is the one named
    for i in 0..x.nrows() {
        for j in 0..x.ncols() {
            let v = x[(i, j)];
            if !v.is_finite() {
                return Err(Error::input(format!(
                    "{name}[{i}, {j}] is {v}: sgpw needs finite values (drop or impute the \
                     rows with missing values first)"
                )));
            }
        }
    }
    Ok(())
}
