//! Feature family × approximation = one low-rank method.
//!
//! A [`Family`] knows only its parameters: how to start them, how to pack them, how to
//! build (Kuf, Kuu, kdiag) from them at some inputs, and how to pull the likelihood
//! core's adjoints back to them. [`LowRankMethod`] pairs a family with an
//! approximation and implements [`Method`] once for all of them: objective, gradient,
//! posterior, prediction, staged fits and model checks go through this module and
//! `collapsed/`, never through a copy.

pub mod chunks;
pub mod ep;
pub mod family;
pub mod state;

use super::method::{Markers, Method, Objective, TraceMarks, TypedModel, ValidRunSpec};
use super::shared_rows::SharedEval;
use crate::collapsed::{Adjoints, Approx, Posterior, Work};
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::{Evaluation, Exec};
use crate::kernel::KernelKind;
use crate::likelihoods::LikelihoodKind;
use crate::linalg::Jitter;
use crate::model_file::{Hyper, ModelFile, Witness};
use crate::optim::Outcome;
use crate::params::TailBlock;
use crate::run_context::RunContext;
use crate::run_spec::{ApproxKind, DataShape, MethodOptions, Naming};
use crate::scratch::Scratch;
use chunks::{Chunks, kept_chunks};
pub use family::{Family, FamilyState, KuuMatrix, Parts};
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
pub use state::StateLikelihood;
use state::TypedLowRank;

/// Which approximation a method uses.
#[derive(Clone, Copy, Debug)]
pub enum ApproxChoice {
    /// Always this one (fitc, vfe, dtc, pep; the spectral methods, where every
    /// approximation is DTC because their diagonal d is zero).
    Fixed(ApproxKind),
    /// `--approx` chooses, this is the default (the inter-domain methods).
    Option(ApproxKind),
}

/// Default α of power EP (Bui et al.'s recommended middle ground).
pub const DEFAULT_ALPHA: f64 = 0.5;

/// The largest m a method accepts.
#[derive(Clone, Copy, Debug)]
pub enum MaxM {
    /// At most the number of training points.
    TrainingSize,
    /// At most this many, whatever n (a 2r×2r system for r spectral points).
    Fixed(usize),
}

/// A feature family with an approximation: one registered method.
pub struct LowRankMethod<F: Family> {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub m_meaning: &'static str,
    /// The options the method reads besides the general ones.
    pub options: &'static [&'static str],
    pub approx: ApproxChoice,
    pub max_m: MaxM,
    pub family: F,
}

impl<F: Family> LowRankMethod<F> {
    /// The approximation kind of a run's options.
    fn kind_of(&self, options: &MethodOptions) -> ApproxKind {
        match self.approx {
            ApproxChoice::Fixed(k) => k,
            ApproxChoice::Option(default) => options.approx.unwrap_or(default),
        }
    }

    /// The approximation of a model, from its `approx` and `alpha` keys.
    pub fn approx_of(&self, model: &ModelFile) -> Result<Approx> {
        let kind = match (self.approx, model.approx) {
            (ApproxChoice::Fixed(k), None) => k,
            (ApproxChoice::Fixed(k), Some(m)) if m == k => k,
            (ApproxChoice::Fixed(k), Some(m)) => {
                return Err(Error::input(format!(
                    "approx = \"{}\" does not apply to method '{}' (it is always {}); \
                     remove the key or change the method",
                    m.name(),
                    self.name,
                    k.name()
                )));
            }
            (ApproxChoice::Option(default), m) => m.unwrap_or(default),
        };
        let approx = match kind {
            ApproxKind::Fitc => Approx::Fitc,
            ApproxKind::Dtc => Approx::Dtc,
            ApproxKind::Vfe => Approx::Vfe,
            ApproxKind::Pep => Approx::Pep {
                alpha: model.alpha.ok_or_else(|| {
                    Error::input("a power-EP model needs its alpha (e.g. alpha = 0.5)")
                })?,
            },
        };
        if kind != ApproxKind::Pep && model.alpha.is_some() {
            return Err(Error::input(format!(
                "alpha applies to power EP only, not to {}",
                kind.name()
            )));
        }
        approx.check()
    }
}

impl<F: Family> Method for LowRankMethod<F> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn aliases(&self) -> &'static [&'static str] {
        self.aliases
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn m_meaning(&self) -> &'static str {
        self.m_meaning
    }
    fn options(&self) -> &'static [&'static str] {
        self.options
    }
    fn progress_unit(&self) -> &'static str {
        self.family.progress_unit()
    }
    fn uses_lengthscales(&self) -> bool {
        self.family.uses_lengthscales()
    }
    fn shares_rows(&self) -> bool {
        self.family.shares_rows()
    }
    fn model_tables(&self) -> &'static [&'static str] {
        self.family.tables()
    }
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        self.family.input_dims(model)
    }
    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        self.family.markers(model, input)
    }
    fn set_inducing_inputs(&self, model: &mut ModelFile, z: &DMatrix<f64>) -> Result<()> {
        self.family.set_inducing_inputs(model, z).ok_or_else(|| {
            Error::input(format!(
                "method '{}' has no inducing inputs to start at --inducing-inputs",
                self.name
            ))
        })
    }
    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Result<DMatrix<f64>> {
        self.family
            .prior_cov(model, x, exec)
            .ok_or_else(|| super::method::full_cov_refused(self.name))
    }
    fn trace_marks(&self, model: &ModelFile) -> TraceMarks {
        self.family.trace_marks(model)
    }
    fn max_m(&self, n_train: usize) -> usize {
        match self.max_m {
            MaxM::TrainingSize => n_train,
            MaxM::Fixed(k) => k,
        }
    }
    fn check_options(
        &self,
        options: &MethodOptions,
        data: DataShape,
        naming: Naming,
    ) -> Result<()> {
        if options.alpha.is_some() && self.kind_of(options) != ApproxKind::Pep {
            return Err(Error::input(format!(
                "alpha{} applies to power EP only; method '{}' uses {}",
                naming.flag("alpha"),
                self.name,
                self.kind_of(options).name()
            )));
        }
        self.family.check_options(options, data, naming)
    }
    fn refuses_kernel(&self, kind: KernelKind) -> Option<String> {
        self.family.refuses_kernel(kind)
    }
    fn takes_composed_kernel(&self) -> bool {
        self.family.takes_composed_kernel()
    }
    fn why_no_composed_kernel(&self) -> Option<&'static str> {
        self.family.why_no_composed_kernel()
    }
    fn refuses_kernel_expr(&self, expr: &crate::kernel::expression::KernelExpr) -> Option<String> {
        self.family.refuses_kernel_expr(expr)
    }
    fn init_for_kernel(
        &self,
        model: &mut ModelFile,
        spec: &ValidRunSpec,
        rng: &mut ChaCha8Rng,
    ) -> Result<()> {
        self.family.init_for_kernel(model, spec, rng)
    }
    fn kernel_input_name(&self) -> Option<&'static str> {
        self.family.kernel_input_name()
    }
    fn kernel_inputs(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
    ) -> Option<Result<(DMatrix<f64>, Vec<f64>)>> {
        self.family.kernel_inputs(model, x)
    }
    fn predicts_summands(&self) -> bool {
        self.family.predicts_summands()
    }
    fn summand_cross(
        &self,
        model: &ModelFile,
        one: &ModelFile,
        summand: usize,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        match self.family.summand_cross(model, summand, x, exec) {
            Some(r) => r,
            None => self.cross(one, basis, x, exec),
        }
    }
    fn objective_name(&self, model: &ModelFile) -> &'static str {
        if matches!(ep::uses_ep(model), Ok(true)) {
            return "negative EP log evidence";
        }
        self.approx_of(model).map_or("NLML", Approx::objective_name)
    }
    /// The Gaussian likelihood through the core; the bernoulli (probit) through
    /// expectation propagation with FITC, DTC or power EP ([`ep`]).
    fn refuses_likelihood(&self, kind: LikelihoodKind) -> Option<String> {
        match (kind, self.approx) {
            (LikelihoodKind::Bernoulli, ApproxChoice::Fixed(ApproxKind::Vfe)) => Some(
                "expectation propagation runs with FITC, DTC or power EP, not VFE's bound (use --method fitc, dtc or pep, or svgp for a variational classifier)"
                    .to_string(),
            ),
            (LikelihoodKind::Bernoulli, _) => None,
            (kind, _) => super::method::gaussian_only(kind),
        }
    }
    fn fits_bernoulli_by_ep(&self) -> bool {
        true
    }
    fn corrects_diagonal(&self, model: &ModelFile) -> bool {
        matches!(self.approx_of(model), Ok(Approx::Fitc | Approx::Pep { .. }))
    }
    fn init_uses_seed(&self, options: &MethodOptions) -> bool {
        self.family.init_uses_seed(options)
    }
    fn second_start(&self, options: &MethodOptions) -> bool {
        self.family.second_start(options)
    }
    fn seed_help(&self) -> &'static str {
        self.family.seed_help()
    }

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let mut model = self.family.init(data, spec, hyper, ctx, rng)?;
        model.method = self.name.to_string();
        let kind = self.kind_of(&spec.options);
        if let ApproxChoice::Option(default) = self.approx
            && kind != default
        {
            model.approx = Some(kind);
        }
        if kind == ApproxKind::Pep {
            model.alpha = Some(spec.options.alpha.unwrap_or(DEFAULT_ALPHA));
        }
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<()> {
        self.approx_of(model)?;
        let m = self.family.check(model)?;
        if let Some(p) = &model.posterior {
            p.check(m)?;
        }
        Ok(())
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        self.family.pack(model)
    }

    fn tail_blocks(&self) -> &'static [TailBlock] {
        self.family.tail_blocks()
    }

    fn fits_by_lbfgs(&self, options: &MethodOptions) -> bool {
        self.family.fits_by_lbfgs(options)
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        self.family.unpack(theta, model)
    }

    fn objective(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<Objective> {
        let mut grad = Vec::new();
        let (nlml, jitter) = self.objective_into(model, data, exec, &mut grad)?;
        Ok(Objective { nlml, grad, jitter })
    }

    fn objective_into(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        let approx = self.approx_of(model)?;
        let s = &exec.scratch;
        if by_ep(model)? {
            ep::refuse_shared(exec)?;
        }
        if let Some(share) = exec.share.as_deref() {
            grad.clear();
            let (m, params) = (self.family.check(model)?, self.family.pack(model).len());
            if share.is_root() {
                share.announce(Evaluation::Gradient, model)?;
            }
            let shared = SharedEval::new(share, m, params, approx);
            let chunks = Chunks::of(data.y.len(), exec, m);
            let state = self.family.state(model, s)?;
            let out = self
                .objective_in_chunks(&state, data, chunks, approx, exec, grad, Some(&shared))
                .map_err(|e| shared.failed(e, 2));
            self.family.recycle_state(state, s);
            return out;
        }
        let state = self.family.state(model, s)?;
        let ep_run = ep::uses_ep(model)?.then(|| ep::EpRun::new(ep::settings(model)));
        let out = self.objective_of(&state, data, approx, ep_run.as_ref(), exec, grad);
        self.family.recycle_state(state, s);
        out
    }

    fn typed_fit<'a>(&'a self, model: &ModelFile) -> Option<Box<dyn TypedModel + 'a>> {
        let approx = self.approx_of(model).ok()?;
        let ep = by_ep(model)
            .ok()?
            .then(|| ep::EpRun::new(ep::settings(model)));
        let state = self
            .family
            .state(model, &Scratch::default())
            .ok()?
            .into_owned();
        if state.as_model().is_some() {
            return None;
        }
        Some(Box::new(TypedLowRank {
            method: self,
            approx,
            ep,
            start: state.clone(),
            state,
        }))
    }

    fn work(&self, model: &ModelFile, n: usize, exec: &Exec) -> Result<Option<Work>> {
        let approx = self.approx_of(model)?;
        let m = self.family.check(model)?;
        let d = model.hyper.lengthscales.len();
        // the points of the chunks the second pass builds again
        let state = self.family.state(model, &exec.scratch)?;
        let rebuilt: usize = match self.chunks(&state, n, exec)? {
            None => 0,
            Some(chunks) => {
                let kept = kept_chunks(chunks, m, d, approx, exec);
                (0..chunks.len() - kept).map(|k| chunks.get(k).len()).sum()
            }
        };
        let none = DMatrix::zeros(0, d);
        let (parts, _) = self.family.parts(&state, &none, false, exec)?;
        self.family.recycle_state(state, &exec.scratch);
        let dense = matches!(parts.kuu, KuuMatrix::Dense(_));
        let builds = 1.0 + rebuilt as f64 / n.max(1) as f64;
        let Some(features) = self.family.feature_work(model, n, builds) else {
            return Ok(None);
        };
        let recomputed = if approx.per_point_lambda() {
            rebuilt
        } else {
            0
        };
        Ok(Some(Work {
            features,
            ..Work::of(approx, dense, n, m, recomputed)
        }))
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<f64> {
        let approx = self.approx_of(model)?;
        if by_ep(model)? {
            ep::refuse_shared(exec)?;
            let state = self.family.state(model, &exec.scratch)?;
            let settings = ep::settings(model);
            return ep::nlz(
                &self.family,
                &state,
                &data.x,
                &data.y,
                approx,
                &settings,
                exec,
            );
        }
        if exec.share.is_some() {
            let nlml = self
                .shared_summary(model, data, approx, exec, Evaluation::Value)?
                .nlml();
            return if nlml.is_finite() {
                Ok(nlml)
            } else {
                Err(Error::numerical("the NLML is not finite"))
            };
        }
        let state = self.family.state(model, &exec.scratch)?;
        self.nlml_of(&state, data, approx, exec)
    }

    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        let approx = self.approx_of(model)?;
        let degenerate = self.family.degenerate();
        if by_ep(model)? {
            ep::refuse_shared(exec)?;
            let state = self.family.state(model, &exec.scratch)?;
            let settings = ep::settings(model);
            let post = ep::posterior(
                &self.family,
                &state,
                &data.x,
                &data.y,
                approx,
                &settings,
                exec,
            )?;
            return Ok((post, None));
        }
        if exec.share.is_some() {
            let summary = self.shared_summary(model, data, approx, exec, Evaluation::Posterior)?;
            return Ok((summary.posterior(degenerate, exec.par), None));
        }
        let state = self.family.state(model, &exec.scratch)?;
        Ok((self.posterior_of(&state, data, approx, exec)?, None))
    }

    fn cross(
        &self,
        model: &ModelFile,
        _basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let state = self.family.state(model, &exec.scratch)?;
        self.cross_of(&state, x, exec)
    }

    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        self.family.fit(self, model, data, spec, ctx)
    }
}

/// Whether `model` is evaluated by EP (bernoulli with the probit link); otherwise by
/// the core's Gaussian evidence, whose σ² is the likelihood's: a likelihood with no
/// Gaussian noise is refused here, naming it, rather than evaluated with a σ² it does
/// not have.
fn by_ep(model: &ModelFile) -> Result<bool> {
    if ep::uses_ep(model)? {
        return Ok(true);
    }
    model.collapsed_noise()?;
    Ok(false)
}

/// ∂/∂log σ0² of an automatic jitter, which scales with σ0² (docs/methods.md §1.3).
pub fn jitter_grad(jitter_policy: Jitter, jitter: f64, d_kuu: &DMatrix<f64>) -> f64 {
    match jitter_policy {
        Jitter::Auto { .. } => jitter * d_kuu.trace(),
        Jitter::Fixed(_) => 0.0,
    }
}

/// ∂/∂log σ0² through a constant prior diagonal kdiag = σ0².
pub fn kdiag_grad(model: &ModelFile, adj: &Adjoints) -> f64 {
    kdiag_grad_at(model.hyper.signal_variance, adj)
}

/// [`kdiag_grad`] of a typed state whose prior diagonal is the constant `signal_variance`.
pub fn kdiag_grad_at(signal_variance: f64, adj: &Adjoints) -> f64 {
    signal_variance * adj.d_kdiag.iter().sum::<f64>()
}
