//! sgpw from Python: the `_sgpw` extension module under the `sgpw` package. No numerics
//! here — it calls the library functions the command line calls (`train::fit`,
//! `Predictor`, `ModelFile`, the session runner and report), parses settings with the
//! command line's own parser, and runs long work with the GIL released.

mod catalog;
mod convert;
mod detached;
mod errors;
mod kernels;
mod model;
mod session;

use pyo3::prelude::*;

#[pymodule]
fn _sgpw(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::Model>()?;
    m.add_function(wrap_pyfunction!(model::fit, m)?)?;
    m.add_function(wrap_pyfunction!(model::load, m)?)?;
    m.add_function(wrap_pyfunction!(model::from_toml, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::methods, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::keywords, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::kernel_parts, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::check_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(session::session_run, m)?)?;
    m.add_function(wrap_pyfunction!(session::session_report, m)?)?;
    m.add(
        "NumericalError",
        m.py().get_type::<errors::NumericalError>(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
