//! A low-rank model as its family's typed state through an L-BFGS fit
//! ([`TypedLowRank`]), and the objective at a state, in one piece or in chunks.

use super::{Family, FamilyState, LowRankMethod, ep};
use crate::collapsed::{self, Approx, Posterior};
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::likelihoods::{Gaussian, Likelihood};
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
                let lr = parts.low_rank(state.collapsed_noise()?, approx);
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
            &parts.low_rank(state.collapsed_noise()?, approx),
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
        let lr = parts.low_rank(state.collapsed_noise()?, approx);
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

/// The model's likelihood as a family's typed state holds it: the Gaussian by value (an
/// evaluation reads the state afresh and allocates nothing), θ holding its σ² above the
/// model's noise floor as log(σ² − floor); any other boxed, θ holding none of its
/// parameters (the low-rank methods fit the bernoulli by EP, whose problem is its own:
/// `ep.rs`). The core asks it for [`Likelihood::collapsed_noise`], as a model file's
/// evaluation asks [`ModelFile::collapsed_noise`]. What [`crate::params::Head`] does with
/// a model file's Gaussian noise, for a family's typed state.
#[derive(Clone, Debug)]
pub enum StateLikelihood {
    Gaussian { noise: Gaussian, floor: f64 },
    Other(Box<dyn Likelihood>),
}

impl StateLikelihood {
    /// The model's likelihood, read once ([`params::packs_noise`]: the Gaussian's θ holds
    /// its noise); a bad `[likelihood]` table is an error located at it.
    pub fn of(model: &ModelFile) -> Result<StateLikelihood> {
        if params::packs_noise(model) {
            Ok(StateLikelihood::gaussian(
                model.collapsed_noise()?,
                params::noise_floor(model),
            ))
        } else {
            Ok(StateLikelihood::Other(model.likelihood()?))
        }
    }

    /// Gaussian noise with variance `variance` above `floor`, as a state built in code
    /// holds it.
    pub fn gaussian(variance: f64, floor: f64) -> StateLikelihood {
        StateLikelihood::Gaussian {
            noise: Gaussian::new(variance),
            floor,
        }
    }

    /// The likelihood itself.
    pub fn likelihood(&self) -> &dyn Likelihood {
        match self {
            StateLikelihood::Gaussian { noise, .. } => noise,
            StateLikelihood::Other(lik) => &**lik,
        }
    }

    /// σ² for the core, or the refusal naming the likelihood.
    pub fn collapsed_noise(&self) -> Result<f64> {
        self.likelihood().collapsed_noise()
    }

    /// Its parameters from their packed entries at the start of `theta`, where θ holds
    /// them (the Gaussian's σ², as [`crate::params::Head::unpack`]); returns the number
    /// of entries read (1 or 0).
    pub fn unpack(&mut self, theta: &[f64]) -> usize {
        match self {
            StateLikelihood::Gaussian { noise, floor } => {
                noise.variance = *floor + theta[0].exp();
                1
            }
            StateLikelihood::Other(_) => 0,
        }
    }

    /// The number of θ entries it holds (1 or 0).
    pub fn packed_len(&self) -> usize {
        usize::from(matches!(self, StateLikelihood::Gaussian { .. }))
    }

    /// ∂/∂θ of its packed entry from the core's ∂/∂σ² (`d_noise`), where θ holds one (as
    /// [`params::noise_grad`]).
    pub fn grad(&self, d_noise: f64) -> Option<f64> {
        match self {
            StateLikelihood::Gaussian { noise, floor } => {
                Some(params::noise_grad_at(noise.variance, *floor, d_noise))
            }
            StateLikelihood::Other(_) => None,
        }
    }

    /// [`StateLikelihood::grad`] pushed onto `grad` (as [`params::push_noise_grad`]).
    pub fn push_grad(&self, d_noise: f64, grad: &mut Vec<f64>) {
        grad.extend(self.grad(d_noise));
    }

    /// Set the Gaussian's σ² (a fit's, where the family fits it its own way: the RVM); a
    /// likelihood without Gaussian noise has none to set.
    pub fn set_collapsed_noise(&mut self, variance: f64) {
        if let StateLikelihood::Gaussian { noise, .. } = self {
            noise.variance = variance;
        }
    }

    /// Write its parameters into `model` (the Gaussian's σ²: [`ModelFile::set_gaussian`]);
    /// another likelihood's are not in θ, so the state never changes them.
    pub fn write(&self, model: &mut ModelFile) {
        if let StateLikelihood::Gaussian { noise, .. } = self {
            model.set_gaussian(noise);
        }
    }

    /// Its fixed block back at `start`'s values, exactly (the Gaussian's σ²; nothing else
    /// is packed).
    pub fn hold(&mut self, start: &StateLikelihood) {
        if let (
            StateLikelihood::Gaussian { noise, .. },
            StateLikelihood::Gaussian { noise: from, .. },
        ) = (self, start)
        {
            noise.variance = from.variance;
        }
    }
}
