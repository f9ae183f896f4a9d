//! sgpw's errors as Python exceptions: a bad argument, value or file is a `ValueError`
//! with the command line's message; numerical trouble is `sgpw.NumericalError` (a
//! `ValueError` too); a cancelled computation is `KeyboardInterrupt`.

use pyo3::PyErr;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use sgpw::error::Error;

pyo3::create_exception!(
    _sgpw,
    NumericalError,
    PyValueError,
    "A factorisation failed even with the largest jitter, or a value became NaN or infinite."
);

/// The Python exception for an sgpw error.
pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::Numerical(_) => NumericalError::new_err(e.to_string()),
        Error::Cancelled | Error::CancelledAfter(_) => PyKeyboardInterrupt::new_err("cancelled"),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// `?` on an sgpw result inside a function that returns a Python result.
pub trait OrPy<T> {
    fn or_py(self) -> pyo3::PyResult<T>;
}

impl<T> OrPy<T> for sgpw::error::Result<T> {
    fn or_py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
