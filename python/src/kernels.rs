//! The kernel expression syntax for Python's kernel objects (`sgpw.kernels`): the parts
//! it names, read from the declaration `--kernel` is built from, and the check of an
//! expression by the same parser and builder, so an error carries the caret the command
//! line draws — no second parser in Python.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sgpw::kernel::KernelChoice;

/// Every part of the syntax: name, the arguments it takes besides `dims` and `fix`, and
/// the parameters `fix=` may name.
#[pyfunction]
pub fn kernel_parts(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    KernelChoice::parts()
        .into_iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("name", p.name)?;
            d.set_item("args", p.args.to_vec())?;
            d.set_item("fixable", p.fixable.to_vec())?;
            Ok(d)
        })
        .collect()
}

/// `text` checked as `--kernel` reads it and, given the inputs' names, built on them
/// (`KernelChoice::checked`): its canonical form, or ValueError with the caret message.
#[pyfunction]
#[pyo3(signature = (text, columns=None))]
pub fn check_kernel(text: &str, columns: Option<Vec<String>>) -> PyResult<String> {
    KernelChoice::checked(text, columns.as_deref()).map_err(PyValueError::new_err)
}
