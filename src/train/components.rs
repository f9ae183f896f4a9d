//! The posterior of each summand of a kernel whose top level is a sum (issue 42,
//! "Seeing the parts"; docs/methods.md "Seeing the parts"): what `sgpw predict
//! --components`, `sgpw plot --components` and the app's prediction chart show, all
//! through [`Predictor::components_with`].
//!
//! With f = Σ_j f_j (independent) and a posterior over u — the exact GP's training
//! targets, or inducing values f(Z) — stored as w = Kuu⁻¹μ_u and S = Kuu⁻¹ −
//! Kuu⁻¹Σ_uKuu⁻¹ (`collapsed::Posterior`), summand j's posterior at x* is
//!
//!   mean_j = K_j(x*, Z) w,  var_j = k_j(x*, x*) − K_j(x*, Z) S K_j(Z, x*),
//!
//! the total's formulas with K_j(Z, x*) = Cov(u, f_j(x*)) in place of K(Z, x*). For the
//! exact GP (Z = X, w = (K + σ²I)⁻¹y, S = (K + σ²I)⁻¹) this is the textbook
//! K_j(x*, X)(K + σ²I)⁻¹y and k_j − K_j(x*, X)(K + σ²I)⁻¹K_j(X, x*). The means add up
//! to the total's; the variances do not (the summands' posteriors are correlated).

use super::Predictor;
use super::predictor::to_model_units;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::kernel::summands::{Summand, summands};
use nalgebra::DMatrix;

/// One summand's posterior at the rows predicted, in the target's units: the mean
/// scaled by the target's standard deviation (the target's mean is the total's alone:
/// the summands' means add up to the total mean minus it), the variance by its square.
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentPrediction {
    /// The summand's short label (`se1`, `se2*periodic`).
    pub label: String,
    pub mean: Vec<f64>,
    pub var_latent: Vec<f64>,
}

impl Predictor {
    /// Why this model's prediction cannot be split by summand, if it cannot: its method's
    /// posterior is not over kernel values ([`crate::methods::Method::predicts_summands`]),
    /// or its kernel's top level is not a sum.
    pub fn components_refusal(&self) -> Option<String> {
        self.summands().err()
    }

    /// The summands with their labels, or why there are none.
    fn summands(&self) -> std::result::Result<Vec<Summand>, String> {
        let method = self.method();
        if !method.predicts_summands() {
            let takers: Vec<&str> = crate::methods::registry()
                .iter()
                .filter(|m| m.predicts_summands())
                .map(|m| m.name())
                .collect();
            return Err(format!(
                "method '{}' has no posterior over values of the kernel (training targets \
                 or inducing values) to split into the summands' posteriors; the methods \
                 that have one: {}",
                method.name(),
                takers.join(", ")
            ));
        }
        let model = self.model();
        let kernel = match &model.composed {
            Some(c) => c.expression(),
            None => model.hyper.kernel.name().to_string(),
        };
        model.composed.as_ref().and_then(summands).ok_or_else(|| {
            format!(
                "the model's kernel `{kernel}` is not a sum: components are the \
                     summands of a kernel whose top level is a sum; fit with one, e.g. \
                     --kernel \"se + periodic\""
            )
        })
    }

    /// Each summand's posterior mean and latent variance at the rows of `x` (data units;
    /// see [`ComponentPrediction`]), a chunk of rows at a time as
    /// [`Predictor::predict_with`]. An error saying why for a model that cannot be split
    /// ([`Predictor::components_refusal`]).
    pub fn components_with(
        &self,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<Vec<ComponentPrediction>> {
        let parts = self.summands().map_err(Error::input)?;
        let model = self.model();
        let scale = model.standardize.as_ref().map_or(1.0, |s| s.target_scale);
        let t = x.nrows();
        let rows = self.chunk_rows(exec);
        let mut out = Vec::with_capacity(parts.len());
        for (j, part) in parts.into_iter().enumerate() {
            // the model with this summand as its kernel: the method's cross-covariance
            // is then K_j(u, X*) and its prior diagonal k_j(x*, x*) (a spectral model's:
            // its features of summand j's terms, Method::summand_cross)
            let mut one = model.clone();
            one.composed = Some(part.kernel);
            let mut c = ComponentPrediction {
                label: part.label,
                mean: Vec::with_capacity(t),
                var_latent: Vec::with_capacity(t),
            };
            for start in (0..t).step_by(rows.max(1)) {
                exec.check()?;
                let len = rows.min(t - start);
                let xm = to_model_units(model, self.dim(), &x.rows(start, len).into_owned())?;
                let (kus, prior) =
                    self.method()
                        .summand_cross(model, &one, j, self.basis(), &xm, exec)?;
                let (mean, var) = self.posterior().predict(&kus, &prior, exec.par);
                c.mean.extend(mean.iter().map(|m| m * scale));
                c.var_latent.extend(var.iter().map(|v| v * scale * scale));
            }
            let bad = (0..t).find(|&i| !(c.mean[i].is_finite() && c.var_latent[i].is_finite()));
            if let Some(i) = bad {
                return Err(Error::numerical(format!(
                    "summand {}'s prediction at row {} is mean {}, variance {}: the model's \
                     numbers are too extreme for double precision",
                    c.label,
                    i + 1,
                    c.mean[i],
                    c.var_latent[i]
                )));
            }
            out.push(c);
        }
        Ok(out)
    }
}
