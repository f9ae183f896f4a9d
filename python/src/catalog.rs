//! What there is to choose from, read from the one declaration: the methods of the
//! registry and the keywords of `fit` (the run fields and options of `RunEntry`).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sgpw::run_spec::{GENERAL_OPTIONS, OptionField, option_fields, run_fields};

/// Every method: name, aliases, summary, what m counts, what the seed does, and the
/// options it reads (the general ones and its own).
#[pyfunction]
pub fn methods(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    sgpw::methods::registry()
        .iter()
        .map(|m| {
            let d = PyDict::new(py);
            d.set_item("name", m.name())?;
            d.set_item("aliases", m.aliases().to_vec())?;
            d.set_item("summary", m.summary())?;
            d.set_item("m", m.m_meaning())?;
            d.set_item("seed", m.seed_help())?;
            let options: Vec<&str> = GENERAL_OPTIONS
                .iter()
                .chain(m.options().iter())
                .copied()
                .collect();
            d.set_item("options", options)?;
            Ok(d)
        })
        .collect()
}

/// The Python name of a setting: its session key, except a list the command line
/// takes one value of (`seeds`: `seed`, as `fit --seed`).
fn keyword(f: &OptionField) -> String {
    let flag_name = f.flag.trim_start_matches("--").replace('-', "_");
    if f.list && !f.switch && f.key != flag_name && f.key.starts_with(&flag_name) {
        flag_name
    } else {
        f.key.clone()
    }
}

/// Every keyword `fit` takes, in declaration order: the run fields, then the options;
/// each with its key, flag, help, choices, whether it is a switch or a list, and the
/// command line's default.
#[pyfunction]
pub fn keywords(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    run_fields()
        .into_iter()
        .map(|f| (f, "run"))
        .chain(option_fields().into_iter().map(|f| (f, "option")))
        .map(|(f, kind)| {
            let d = PyDict::new(py);
            d.set_item("name", keyword(&f))?;
            d.set_item("kind", kind)?;
            d.set_item("key", &f.key)?;
            d.set_item("flag", &f.flag)?;
            d.set_item("help", &f.help)?;
            d.set_item("choices", &f.choices)?;
            d.set_item("switch", f.switch)?;
            d.set_item("list", f.list)?;
            d.set_item("default", &f.default)?;
            Ok(d)
        })
        .collect()
}
