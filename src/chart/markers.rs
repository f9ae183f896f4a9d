//! The data and the model's markers as the prediction chart and the probability map
//! draw them: how many points at most, and the method's markers in the data's units.

use crate::methods::{MarkerSize, Method};
use crate::model_file::ModelFile;

/// At most this many training points and as many test points are drawn: more only
/// blacken the chart (and make a figure's file huge); evenly spaced rows are kept.
pub const SCATTER: usize = 4000;

/// What `method` marks along `input` for `model`, in the data's original units (the
/// method gives them in model units: the standardisation is undone here). Nothing when
/// the method marks nothing or its markers cannot be read.
pub fn markers(
    method: &dyn Method,
    model: &ModelFile,
    input: usize,
) -> (Vec<f64>, Vec<MarkerSize>, String) {
    let Ok(m) = method.markers(model, input) else {
        return (Vec::new(), Vec::new(), String::new());
    };
    let (centre, scale) = model
        .standardize
        .as_ref()
        .and_then(|s| Some((*s.input_center.get(input)?, *s.input_scale.get(input)?)))
        .unwrap_or((0.0, 1.0));
    let mut xs = Vec::with_capacity(m.at.len());
    let mut sizes = Vec::new();
    for (k, v) in m.at.iter().enumerate() {
        let x = v * scale + centre;
        if x.is_finite() {
            xs.push(x);
            if let Some(s) = m.sizes.get(k) {
                sizes.push(*s);
            }
        }
    }
    if xs.is_empty() {
        return (Vec::new(), Vec::new(), String::new());
    }
    (xs, sizes, m.caption)
}
