//! The prediction chart's components (issue 42, "Seeing the parts"): for a kernel whose
//! top level is a sum, each summand's posterior mean and ±2σ latent band along the
//! chart's grid, from [`Predictor::components_with`] — what `sgpw plot --chart
//! prediction --components` draws as one panel per summand and what the app's
//! prediction pane cycles through (its `p` key).

use crate::exec::Exec;
use crate::train::Predictor;
use nalgebra::DMatrix;

/// One summand's posterior along the grid, in the target's units without the target's
/// mean (which the total alone carries).
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentCurve {
    /// The summand's short label (`se1`, `se2*periodic`).
    pub label: String,
    pub mean: Vec<f64>,
    pub sd_latent: Vec<f64>,
}

/// The summands' curves at the grid's rows `x`, or why the model has none.
pub fn compute(predictor: &Predictor, x: &DMatrix<f64>) -> Result<Vec<ComponentCurve>, String> {
    if let Some(why) = predictor.components_refusal() {
        return Err(why);
    }
    let parts = predictor
        .components_with(x, &Exec::default())
        .map_err(|e| e.to_string())?;
    Ok(parts
        .into_iter()
        .map(|c| ComponentCurve {
            label: c.label,
            sd_latent: c.var_latent.iter().map(|v| v.max(0.0).sqrt()).collect(),
            mean: c.mean,
        })
        .collect())
}
