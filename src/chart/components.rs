//! The prediction chart's components (issue 42, "Seeing the parts"): for a kernel whose
//! top level is a sum, each summand's posterior mean and ±2σ latent band along the
//! chart's grid, from [`Predictor::components_with`] — what `sgpw plot --chart
//! prediction --components` draws as one panel per summand and what the app's
//! prediction pane cycles through (its `c` key).

use super::prediction::Curves;
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

impl Curves {
    /// The chart of summand `k` (None past the last, or without summands): its mean and
    /// latent band on the same grid and markers, without the data (a summand is not
    /// observed) and without a noisy band (the noise is the total's); its y axis names
    /// the summand.
    pub fn component(&self, k: usize) -> Option<Curves> {
        let c = self.components.as_ref().ok()?.get(k)?;
        Some(Curves {
            target_name: format!("{}: {}", self.target_name, c.label),
            mean: c.mean.clone(),
            sd_latent: c.sd_latent.clone(),
            sd_noisy: c.sd_latent.clone(),
            train: Vec::new(),
            test: Vec::new(),
            negative: 0,
            components: Ok(Vec::new()),
            ..self.clone()
        })
    }

    /// The number of summands drawn apart (0 when the model has none).
    pub fn component_count(&self) -> usize {
        self.components.as_ref().map_or(0, Vec::len)
    }
}
