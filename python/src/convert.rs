//! numpy arrays and Python values in, numpy arrays out. Inputs are read in place from
//! the array's memory (any strides; a C- or Fortran-contiguous float64 array is read as
//! one slice); the Python layer converts other dtypes first.

use nalgebra::DMatrix;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

/// An n×d array as the n×d matrix sgpw's numerics take.
pub fn matrix(x: &PyReadonlyArray2<'_, f64>) -> DMatrix<f64> {
    let view = x.as_array();
    let (n, d) = view.dim();
    // ndarray's slices are in its logical order: rows of a C-ordered array, columns of
    // the transpose of a Fortran-ordered one
    if let Some(rows) = view.as_slice() {
        DMatrix::from_row_slice(n, d, rows)
    } else if let Some(columns) = view.t().as_slice() {
        DMatrix::from_column_slice(n, d, columns)
    } else {
        DMatrix::from_fn(n, d, |i, j| view[[i, j]])
    }
}

/// A 1-d array as a vector.
pub fn vector(y: &PyReadonlyArray1<'_, f64>) -> Vec<f64> {
    y.as_array().iter().copied().collect()
}

pub fn array<'py>(py: Python<'py>, v: Vec<f64>) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_vec(py, v)
}

/// An r×c matrix as an r×c (C-ordered) numpy array.
pub fn matrix_array<'py>(py: Python<'py>, m: &DMatrix<f64>) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let rows: Vec<f64> = m.transpose().as_slice().to_vec();
    PyArray1::from_vec(py, rows).reshape([m.nrows(), m.ncols()])
}

/// A keyword's value as the command line's text: a switch true/false, a number as Rust
/// prints it (the shortest text that reads back as the same float), a list
/// comma-separated; None is "not given" (the caller drops it).
pub fn setting_text(name: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(if v.extract::<bool>()? {
            "true"
        } else {
            "false"
        }
        .to_string());
    }
    if v.is_instance_of::<PyString>() {
        return v.extract::<String>();
    }
    if let Ok(i) = v.extract::<i64>() {
        return Ok(i.to_string());
    }
    if let Ok(f) = v.extract::<f64>() {
        return Ok(f.to_string());
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let parts: PyResult<Vec<String>> = v.try_iter()?.map(|e| setting_text(name, &e?)).collect();
        return Ok(parts?.join(","));
    }
    Err(PyValueError::new_err(format!(
        "{name} = {}: give a number, a string, True/False or a list",
        v.repr()?
    )))
}

/// A TOML value as plain Python values (tables as dicts, arrays as lists).
pub fn toml_to_py<'py>(py: Python<'py>, v: &toml::Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        toml::Value::String(s) => s.into_pyobject(py)?.into_any(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any(),
        toml::Value::Float(f) => f.into_pyobject(py)?.into_any(),
        toml::Value::Boolean(b) => PyBool::new(py, *b).to_owned().into_any(),
        toml::Value::Datetime(d) => d.to_string().into_pyobject(py)?.into_any(),
        toml::Value::Array(a) => {
            let list = PyList::empty(py);
            for e in a {
                list.append(toml_to_py(py, e)?)?;
            }
            list.into_any()
        }
        toml::Value::Table(t) => {
            let dict = PyDict::new(py);
            for (k, e) in t {
                dict.set_item(k, toml_to_py(py, e)?)?;
            }
            dict.into_any()
        }
    })
}
