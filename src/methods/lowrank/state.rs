//! A low-rank model as its family's typed state through an L-BFGS fit
//! ([`TypedLowRank`]), and the objective at a state, in one piece or in chunks.

use super::{Family, FamilyState, LowRankMethod, ep};
use crate::collapsed::{self, Approx, Posterior};
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::methods::method::TypedModel;
use crate::model_file::ModelFile;
use crate::params::{self, ParamLayout};
use nalgebra::DMatrix;

impl<F: Family> LowRankMethod<F> {
    /// A typed model from a state built in code (e.g. with a kernel no model file
    /// names), evaluated with `approx`: what [`Method::typed_fit`] reads from a model.
    pub fn typed_from(&self, state: F::State, approx: Approx) -> Box<dyn TypedModel + '_> {
        Box::new(TypedLowRank {
            method: self,
            approx,
            ep: None,
            start: state.clone(),
            state,
        })
    }

    /// The objective and its gradient (into `grad`) at a state, on this process's rows:
    /// in one piece or chunk by chunk. Returns the objective and the jitter. A method
    /// that chooses its features (greedy, Nyström) calls it with the state it built.
    pub(crate) fn objective_of(
        &self,
        state: &F::State,
        data: &TrainData,
        approx: Approx,
        ep: Option<&ep::EpRun>,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        let s = &exec.scratch;
        grad.clear();
        if let Some(run) = ep {
            let fit = run.fit(&self.family, state, &data.x, &data.y, approx, exec)?;
            *grad = fit.grad;
            return Ok((fit.nlz, fit.jitter));
        }
        let (nlml, jitter) = match self.chunks(state, data.y.len(), exec)? {
            Some(chunks) => {
                self.objective_in_chunks(state, data, chunks, approx, exec, grad, None)?
            }
            None => {
                let (parts, extra) = self.family.parts(state, &data.x, true, exec)?;
                let lr = parts.low_rank(state.noise_variance(), approx);
                let adj = collapsed::nlml_and_adjoints(&lr, &data.y, exec)?;
                self.family
                    .pull_back_into(state, &data.x, &parts, extra, &adj, exec, grad)?;
                let out = (adj.nlml, adj.jitter);
                adj.recycle(s);
                parts.recycle(s);
                out
            }
        };
        if grad.iter().any(|v| !v.is_finite()) {
            return Err(Error::numerical(format!(
                "{}: the gradient is not finite",
                self.name
            )));
        }
        Ok((nlml, jitter))
    }
}

impl<F: Family> LowRankMethod<F> {
    /// The objective (the Gaussian evidence or bound) at a state, on this process's
    /// rows, in one piece or chunk by chunk.
    pub(crate) fn nlml_of(
        &self,
        state: &F::State,
        data: &TrainData,
        approx: Approx,
        exec: &Exec,
    ) -> Result<f64> {
        if let Some(chunks) = self.chunks(state, data.y.len(), exec)? {
            let nlml = self
                .summary_in_chunks(state, data, chunks, approx, exec, None)?
                .nlml();
            return if nlml.is_finite() {
                Ok(nlml)
            } else {
                Err(Error::numerical("the NLML is not finite"))
            };
        }
        let (parts, _) = self.family.parts(state, &data.x, false, exec)?;
        collapsed::nlml(
            &parts.low_rank(state.noise_variance(), approx),
            &data.y,
            exec,
        )
    }

    /// The posterior at a state, on this process's rows, in one piece or chunk by chunk.
    pub(crate) fn posterior_of(
        &self,
        state: &F::State,
        data: &TrainData,
        approx: Approx,
        exec: &Exec,
    ) -> Result<Posterior> {
        let degenerate = self.family.degenerate();
        if let Some(chunks) = self.chunks(state, data.y.len(), exec)? {
            let summary = self.summary_in_chunks(state, data, chunks, approx, exec, None)?;
            return Ok(summary.posterior(degenerate, exec.par));
        }
        let (parts, _) = self.family.parts(state, &data.x, false, exec)?;
        let lr = parts.low_rank(state.noise_variance(), approx);
        collapsed::posterior(&lr, &data.y, degenerate, exec)
    }

    /// Kuf and the prior diagonal at inputs `x`, from a state: what the posterior
    /// predicts with.
    pub(crate) fn cross_of(
        &self,
        state: &F::State,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let (parts, _) = self.family.parts(state, x, false, exec)?;
        Ok((parts.kuf, parts.kdiag))
    }
}

/// A low-rank model held as its family's typed state through an L-BFGS fit: θ is
/// unpacked into the state, never into a model file.
pub(super) struct TypedLowRank<'a, F: Family> {
    pub(super) method: &'a LowRankMethod<F>,
    pub(super) approx: Approx,
    /// Fitted by expectation propagation (the bernoulli likelihood): its settings and
    /// the sites each evaluation starts from, the last evaluation's.
    pub(super) ep: Option<ep::EpRun>,
    /// The state the fit started from: where fixed blocks are held.
    pub(super) start: F::State,
    pub(super) state: F::State,
}

impl<F: Family> TypedModel for TypedLowRank<'_, F> {
    fn unpack(&mut self, theta: &[f64], layout: &ParamLayout) {
        let family = &self.method.family;
        family.unpack_state(theta, &mut self.state);
        if layout.any_fixed() {
            family.hold_fixed_state(layout, &self.start, &mut self.state);
        }
    }

    fn objective_into(
        &self,
        data: &TrainData,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        self.method
            .objective_of(&self.state, data, self.approx, self.ep.as_ref(), exec, grad)
    }
}

/// The Gaussian noise σ² as a typed state holds it: its value, the floor θ packs it
/// above and whether θ holds it at all (a model whose likelihood is not Gaussian has no
/// σ² in θ: [`params::packs_noise`]). What [`crate::params::Head`] does with a model
/// file's `[hyper] noise_variance`, for a family's typed state.
#[derive(Clone, Copy, Debug)]
pub struct NoiseState {
    pub variance: f64,
    floor: f64,
    packs: bool,
}

impl NoiseState {
    /// The model's σ², its floor and whether θ holds it.
    pub fn of(model: &ModelFile) -> NoiseState {
        NoiseState {
            variance: model.hyper.noise_variance,
            floor: params::noise_floor(model),
            packs: params::packs_noise(model),
        }
    }

    /// σ² from its packed entry at the start of `theta` where θ holds it (as
    /// [`crate::params::Head::unpack`]); returns the number of entries read (1 or 0).
    pub fn unpack(&mut self, theta: &[f64]) -> usize {
        if !self.packs {
            return 0;
        }
        self.variance = self.floor + theta[0].exp();
        1
    }

    /// Push ∂/∂θ of the packed σ² (from ∂/∂σ², `d_noise`) where θ holds it (as
    /// [`params::push_noise_grad`]).
    pub fn push_grad(&self, d_noise: f64, grad: &mut Vec<f64>) {
        if self.packs {
            grad.push(params::noise_grad_at(self.variance, self.floor, d_noise));
        }
    }
}
