//! Expectation propagation through a low-rank method's family (binary classification
//! with the probit likelihood, docs/methods.md §10): the family builds Kuf, Kuu and the
//! prior diagonal as for a Gaussian fit, `crate::ep` runs EP and gives −log Z_EP with
//! its adjoints, and the family pulls them back to its parameters — so every family
//! that gives the core its parts (pseudo-inputs, the inter-domain and spectral
//! families) is a classifier with FITC, DTC or power EP.

use super::{Family, Parts};
use crate::collapsed::{Approx, LowRank, Posterior};
use crate::ep::{self, EpPosterior, EpSettings, Prediction, Sites};
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::likelihoods::{LikelihoodKind, Link};
use crate::model_file::ModelFile;
use nalgebra::DMatrix;

/// EP at a family's state: −log Z_EP, its gradient in the family's packed order (the
/// noise entry 0) and EP's posterior.
pub struct EpFit {
    pub nlz: f64,
    /// The absolute jitter on Kuu.
    pub jitter: f64,
    pub grad: Vec<f64>,
    pub posterior: EpPosterior,
}

/// Whether a model is fitted by EP: the bernoulli likelihood (probit only: EP's
/// moments are closed-form for it).
pub fn uses_ep(model: &ModelFile) -> Result<bool> {
    if model.likelihood_kind() != LikelihoodKind::Bernoulli {
        return Ok(false);
    }
    match model.likelihood.as_ref().and_then(|t| t.link) {
        Some(Link::Logit) => Err(Error::input(
            "[likelihood] link = \"logit\": expectation propagation here uses the probit \
             link (its moments are closed-form); remove the link or use svgp for logit",
        )),
        _ => Ok(true),
    }
}

/// EP's settings for a model: the defaults with the damping its `[likelihood]` table
/// carries (`--ep-damping`).
pub fn settings(model: &ModelFile) -> EpSettings {
    let mut s = EpSettings::default();
    if let Some(d) = model.likelihood.as_ref().and_then(|t| t.ep_damping) {
        s.damping = d;
    }
    s
}

/// EP through a fit's evaluations: its settings and the sites of the last evaluation
/// that converged, from which the next one starts (a warm start). EP's fixed point does
/// not depend on where the sites start, so the objective and its gradient are those of
/// a flat start to EP's tolerance; a warm start saves sweeps, since an optimiser's next
/// θ is close to its last. A warm start that fails (sites from a far-off θ that leave
/// a cavity improper, or too many sweeps) is run again from flat sites.
#[derive(Debug)]
pub struct EpRun {
    pub settings: EpSettings,
    warm: std::sync::Mutex<Option<Sites>>,
    /// Sweeps of the last evaluation, for tests and reports.
    last_sweeps: std::sync::atomic::AtomicUsize,
}

impl EpRun {
    /// From flat sites at the first evaluation.
    pub fn new(settings: EpSettings) -> EpRun {
        EpRun {
            settings,
            warm: std::sync::Mutex::new(None),
            last_sweeps: 0.into(),
        }
    }

    /// The sweeps the last evaluation took (0 before any).
    pub fn last_sweeps(&self) -> usize {
        self.last_sweeps.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// [`fit`] from the last converged sites (flat the first time, or if that fails),
    /// keeping the new fixed point's sites for the next call.
    #[allow(clippy::too_many_arguments)] // fit's arguments
    pub fn fit<F: Family>(
        &self,
        family: &F,
        state: &F::State,
        x: &DMatrix<f64>,
        y: &[f64],
        approx: Approx,
        exec: &Exec,
    ) -> Result<EpFit> {
        let start = self
            .warm
            .lock()
            .map(|w| w.clone())
            .unwrap_or_default()
            .filter(|s| s.tau.len() == y.len());
        let warm = start.is_some();
        let out = match fit(family, state, x, y, approx, &self.settings, start, exec) {
            Err(e) if warm && !e.is_cancelled() => {
                fit(family, state, x, y, approx, &self.settings, None, exec)
            }
            other => other,
        }?;
        self.last_sweeps
            .store(out.posterior.sweeps, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut w) = self.warm.lock() {
            *w = Some(out.posterior.sites.clone());
        }
        Ok(out)
    }
}

/// EP runs on one process's rows in memory: a distributed fit of it is refused.
pub fn refuse_shared(exec: &Exec) -> Result<()> {
    match exec.share {
        Some(_) => Err(Error::input(
            "expectation propagation (the bernoulli likelihood) runs in one process; \
             --distributed is for the Gaussian likelihood",
        )),
        None => Ok(()),
    }
}

/// `parts` as the core's low-rank form for EP. Its `noise` is not read: the probit
/// model has no Gaussian noise, and `ep::evidence` poses EP's Gaussian problem with
/// noise 1 itself (the sites' precisions scale the rest).
fn ep_low_rank(parts: &Parts, approx: Approx) -> LowRank<'_> {
    parts.low_rank(1.0, approx)
}

fn run(
    parts: &Parts,
    approx: Approx,
    y: &[f64],
    settings: &EpSettings,
    start: Option<Sites>,
) -> Result<EpPosterior> {
    let lr = ep_low_rank(parts, approx);
    let prior = ep::low_rank_prior(&lr)?;
    ep::run(&prior, y, start, settings)
}

/// Run EP for `family` at `state` on inputs `x` and 0/1 labels `y` (from `start`, or
/// flat sites) and return −log Z_EP with its gradient.
#[allow(clippy::too_many_arguments)] // the family, its state, the data, EP's settings
pub fn fit<F: Family>(
    family: &F,
    state: &F::State,
    x: &DMatrix<f64>,
    y: &[f64],
    approx: Approx,
    settings: &EpSettings,
    start: Option<Sites>,
    exec: &Exec,
) -> Result<EpFit> {
    let (parts, extra) = family.parts(state, x, true, exec)?;
    let posterior = run(&parts, approx, y, settings, start)?;
    let lr = ep_low_rank(&parts, approx);
    let adj = ep::low_rank_evidence(&lr, y, &posterior, exec)?;
    let grad = family.pull_back(state, x, &parts, extra, &adj, exec)?;
    Ok(EpFit {
        nlz: adj.nlml,
        jitter: adj.jitter,
        grad,
        posterior,
    })
}

/// −log Z_EP alone.
pub fn nlz<F: Family>(
    family: &F,
    state: &F::State,
    x: &DMatrix<f64>,
    y: &[f64],
    approx: Approx,
    settings: &EpSettings,
    exec: &Exec,
) -> Result<f64> {
    let (parts, _) = family.parts(state, x, false, exec)?;
    let posterior = run(&parts, approx, y, settings, None)?;
    let lr = ep_low_rank(&parts, approx);
    Ok(ep::low_rank_evidence(&lr, y, &posterior, exec)?.nlml)
}

/// EP's posterior over the inducing values as the core's [`Posterior`] (what a model
/// file stores and predicts the latent function with).
pub fn posterior<F: Family>(
    family: &F,
    state: &F::State,
    x: &DMatrix<f64>,
    y: &[f64],
    approx: Approx,
    settings: &EpSettings,
    exec: &Exec,
) -> Result<Posterior> {
    let (parts, _) = family.parts(state, x, false, exec)?;
    let post = run(&parts, approx, y, settings, None)?;
    let lr = ep_low_rank(&parts, approx);
    ep::low_rank_posterior(&lr, &post, family.degenerate(), exec)
}

/// The latent mean and variance and p(y = 1) at inputs `xs` under a fitted EP.
pub fn predict<F: Family>(
    family: &F,
    state: &F::State,
    posterior: &EpPosterior,
    xs: &DMatrix<f64>,
    exec: &Exec,
) -> Result<Prediction> {
    let (parts, _) = family.parts(state, xs, false, exec)?;
    let lr = ep_low_rank(&parts, Approx::Fitc);
    let vs = ep::whiten(lr.kuu, lr.jitter, lr.kuf)?;
    let kss = if family.degenerate() {
        vs.column_iter().map(|c| c.norm_squared()).collect()
    } else {
        parts.kdiag.clone()
    };
    Ok(Prediction::of(posterior.latent(&vs, &kss)))
}
