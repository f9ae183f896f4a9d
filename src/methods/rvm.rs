//! The relevance vector machine (Tipping 2001), trained by the fast marginal-likelihood
//! algorithm of Tipping & Faul (2003): docs/methods.md §9.
//!
//! The model is y = Φw + ε with one basis function per relevance vector r_j (the run's
//! kernel centred on it, φ_j(x) = k(x, r_j)), optionally a constant one (the bias), a
//! precision α_j on each weight and noise σ²: the degenerate GP with covariance
//! `Φ A⁻¹ Φᵀ + σ²I`. On the likelihood core that is `Kuf = Φᵀ` (rows k(r_j, X), and a
//! row of ones for the bias) with the diagonal `Kuu = A = diag(α)` under DTC: the
//! objective (−log marginal likelihood), its gradient in σ0², ℓ, σ², log α, the
//! posterior (μ and Σ of the weights: `var_matrix = −Σ`), prediction (variance
//! σ² + φ(x)ᵀΣφ(x)), chunking and model files are the core's and [`LowRankMethod`]'s.
//!
//! What is the RVM's own is [`Family::fit`]: the sparse Bayesian loop of
//! [`sparse_bayes`](super::sparse_bayes) over all n training inputs as candidates, at
//! the kernel's σ0², ℓ fixed (from `--hyper-from-subset N`, by default a full GP on
//! min(n, 2000) random training points: start::hyper_for_fixed_kernel), re-estimating σ².

use super::hyper::{self, pack_hyper, unpack_hyper};
use super::lowrank::{
    ApproxChoice, Family, FamilyState, KuuMatrix, LowRankMethod, MaxM, Parts, StateLikelihood,
};
use super::method::{Markers, Method, TraceMarks, ValidRunSpec};
use super::sparse_bayes::{Candidates, FastRvm};
use crate::collapsed::Adjoints;
use crate::data::TrainData;
use crate::error::{Error, Location, Result};
use crate::exec::Exec;
use crate::kernel::ModelKernel;
use crate::linalg::Jitter;
use crate::model_file::{Hyper, ModelFile, ModelTable, Witness, matrix_to_rows, rows_to_matrix};
use crate::optim::{Control, Outcome, Stop};
use crate::params::{self, ParamLayout};
use crate::run_context::{Phase, RunContext};
use crate::run_spec::{ApproxKind, DataShape, MethodOptions, Naming};
use crate::scratch::Scratch;
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::time::Instant;

/// `[relevance]`: the relevance vectors and the precisions of their weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Relevance {
    /// The relevance vectors r_j (model units), M rows of D values.
    pub points: Vec<Vec<f64>>,
    /// α_j, the prior precision of the weight of k(·, r_j).
    pub alpha: Vec<f64>,
    /// The bias's α, when the constant basis function is in the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bias_alpha: Option<f64>,
    /// Training rows (0-based, of the data the model was fitted on) of the relevance
    /// vectors (informational).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<usize>,
}

impl ModelTable for Relevance {
    const NAME: &'static str = "relevance";
}

/// `[rvm]`: how the fit went (informational).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RvmFit {
    /// Steps of the fast algorithm (one addition, re-estimation or deletion each).
    pub steps: usize,
    /// Whether it stopped on its convergence test (else on the budget or --early-stop).
    pub converged: bool,
    /// The number of basis functions in the model after 0, 1, …, steps steps (the
    /// evidence trace's x axis).
    pub relevance_vectors: Vec<usize>,
    /// Seconds in the fast algorithm (without the subset fit).
    pub seconds: f64,
}

impl ModelTable for RvmFit {
    const NAME: &'static str = "rvm";
}

/// The RVM family.
pub struct RelevanceVectors;

pub const RVM: LowRankMethod<RelevanceVectors> = LowRankMethod {
    name: "rvm",
    aliases: &["relevance-vector-machine"],
    summary: "relevance vector machine (Tipping 2001) by the fast marginal-likelihood \
              algorithm (Tipping & Faul 2003): the kernel on every training input as a \
              candidate (--bias adds a constant), m = the most relevance vectors allowed; \
              σ0², ℓ from --hyper-from-subset N (default: a full GP on min(n, 2000) \
              points), σ² re-estimated",
    m_meaning: "relevance vectors (at most m; the fit decides how many)",
    options: &["hyper_from_subset", "bias"],
    approx: ApproxChoice::Fixed(ApproxKind::Dtc),
    max_m: MaxM::TrainingSize,
    family: RelevanceVectors,
};

/// The relevance vectors (M×D; M may be 0 in a model with the bias alone).
pub fn relevance_points(model: &ModelFile) -> Result<DMatrix<f64>> {
    let r = model.require::<Relevance>()?;
    let d = model.kernel_dim();
    if r.points.is_empty() {
        return Ok(DMatrix::zeros(0, d));
    }
    rows_to_matrix(&Location::key(Relevance::NAME).then("points"), &r.points, d)
}

/// The diagonal of Kuu: α of each relevance vector, then the bias's.
fn precisions(r: &Relevance) -> Vec<f64> {
    r.alpha.iter().copied().chain(r.bias_alpha).collect()
}

/// The RVM's values ([`Family::State`]): read from a model once, for an evaluation or a
/// fit (whose loop runs on [`FastRvm`]'s values and writes the model when observed and at
/// the end: [`RelevanceVectors::model_of`]).
#[derive(Clone, Debug)]
pub struct RvmState {
    kernel: ModelKernel,
    /// The relevance vectors r_j (M×D; M may be 0 with the bias alone).
    points: DMatrix<f64>,
    /// The diagonal of Kuu: α of each relevance vector, then the bias's.
    alpha: Vec<f64>,
    /// Whether the constant basis function is in the model (the last α is its).
    bias: bool,
    likelihood: StateLikelihood,
}

impl FamilyState for RvmState {
    fn collapsed_noise(&self) -> Result<f64> {
        self.likelihood.collapsed_noise()
    }
}

impl Family for RelevanceVectors {
    /// The basis functions are kernel columns k(·, x_j) at training points, through the
    /// model's `dyn Kernel`: any kernel.
    fn takes_composed_kernel(&self) -> bool {
        true
    }

    type Extra = ();
    type State = RvmState;

    fn state<'a>(&self, model: &'a ModelFile, _scratch: &Scratch) -> Result<Cow<'a, RvmState>> {
        let r = model.require::<Relevance>()?;
        Ok(Cow::Owned(RvmState {
            kernel: model.kernel(),
            points: relevance_points(model)?,
            alpha: precisions(&r),
            bias: r.bias_alpha.is_some(),
            likelihood: StateLikelihood::of(model)?,
        }))
    }

    fn size(&self, state: &RvmState) -> Result<usize> {
        Ok(state.alpha.len())
    }

    /// θ in [`Family::pack`]'s order, as [`Family::unpack`] writes it into a model.
    fn unpack_state(&self, theta: &[f64], state: &mut RvmState) {
        let k = state.kernel.params_len();
        state.kernel.set_log_params(&theta[..k]);
        let at = k + state.likelihood.unpack(&theta[k..]);
        for (a, t) in state.alpha.iter_mut().zip(&theta[at..]) {
            *a = t.exp();
        }
    }

    /// The shared blocks as [`ParamLayout::hold_fixed`] keeps them in a model (the
    /// precisions are one block `features`, held by its transform).
    fn hold_fixed_state(&self, layout: &ParamLayout, start: &RvmState, state: &mut RvmState) {
        for b in layout.blocks().iter().filter(|b| b.fixed) {
            match b.name {
                params::NOISE_VARIANCE => state.likelihood.hold(&start.likelihood),
                name => state.kernel.hold_block(&*start.kernel, name),
            }
        }
    }

    fn second_start(&self, _options: &MethodOptions) -> bool {
        false
    }
    fn seed_help(&self) -> &'static str {
        "the random subset of the full GP that sets σ0², ℓ, σ² (the fast algorithm \
         itself draws nothing)"
    }

    /// σ0², ℓ, σ² (from the subset fit), and so that the starting model is complete,
    /// the first training input as its one relevance vector (`fit` starts the
    /// algorithm afresh from σ0², ℓ, σ²).
    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let hyper = super::start::hyper_for_fixed_kernel(data, spec, hyper, true, ctx, rng)?;
        let mut model = ModelFile::new(&spec.method, hyper);
        let first = data.x.rows(0, 1.min(data.x.nrows())).into_owned();
        model.set(&Relevance {
            points: matrix_to_rows(&first),
            alpha: vec![1.0; first.nrows()],
            bias_alpha: spec.options.bias.then_some(1.0),
            rows: (0..first.nrows()).collect(),
        });
        Ok(model)
    }

    fn check_options(
        &self,
        options: &MethodOptions,
        _data: DataShape,
        naming: Naming,
    ) -> Result<()> {
        super::start::check_one_subset_fit("rvm", options, naming)
    }

    fn check(&self, model: &ModelFile) -> Result<usize> {
        let r = model.require::<Relevance>()?;
        let points = relevance_points(model)?;
        let at = Location::key(Relevance::NAME);
        if r.alpha.len() != points.nrows() {
            return Err(Error::at(
                at.then("alpha"),
                format!(
                    "[relevance] alpha holds {} values but points has {} rows (one precision \
                     per relevance vector)",
                    r.alpha.len(),
                    points.nrows()
                ),
            ));
        }
        if let Some(a) = precisions(&r)
            .iter()
            .find(|a| !(a.is_finite() && **a > 0.0))
        {
            return Err(Error::at(
                at.then("alpha"),
                format!("[relevance] alpha and bias_alpha must be positive and finite, not {a}"),
            ));
        }
        if !r.rows.is_empty() && r.rows.len() != points.nrows() {
            return Err(Error::at(
                at.then("rows"),
                format!(
                    "[relevance] rows lists {} training rows but points has {} (one per \
                     relevance vector, or none)",
                    r.rows.len(),
                    points.nrows()
                ),
            ));
        }
        let m = points.nrows() + usize::from(r.bias_alpha.is_some());
        if m == 0 {
            return Err(Error::at(
                at.then("points"),
                "[relevance] has no basis function: give points (with alpha) or bias_alpha",
            ));
        }
        if let Some(a) = model.alpha {
            return Err(Error::input(format!(
                "an rvm model has no alpha = {a} (that is power EP's; the precisions are \
                 [relevance] alpha): remove the key"
            )));
        }
        Ok(m)
    }

    fn tables(&self) -> &'static [&'static str] {
        &[Relevance::NAME, RvmFit::NAME]
    }

    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        let mut w = vec![Witness::lengthscales(model)];
        w.extend(Witness::rows(model, Relevance::NAME, "points"));
        w
    }

    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        let p = relevance_points(model)?;
        if input >= p.ncols() {
            return Ok(Markers::default());
        }
        Ok(Markers {
            at: p.column(input).iter().copied().collect(),
            sizes: Vec::new(),
            caption: format!("{} relevance vectors", p.nrows()),
        })
    }

    /// The number of basis functions after each step, beside the evidence curve.
    fn trace_marks(&self, model: &ModelFile) -> TraceMarks {
        TraceMarks {
            sizes: model
                .require::<RvmFit>()
                .map(|f| f.relevance_vectors)
                .unwrap_or_default(),
            size_name: "relevance vectors",
            ..TraceMarks::default()
        }
    }

    /// [log σ0², log ℓ, (log rq α), log σ², log α_j (M), log α of the bias].
    /// Its fit is the fast marginal-likelihood loop, not L-BFGS.
    fn fits_by_lbfgs(&self, _options: &crate::run_spec::MethodOptions) -> bool {
        false
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = Vec::new();
        pack_hyper(model, &mut theta);
        if let Ok(r) = model.require::<Relevance>() {
            theta.extend(precisions(&r).iter().map(|a| a.ln()));
        }
        theta
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        let used = unpack_hyper(theta, model);
        if let Ok(mut r) = model.require::<Relevance>() {
            let a: Vec<f64> = theta[used..].iter().map(|v| v.exp()).collect();
            let m = r.alpha.len();
            r.alpha = a[..m].to_vec();
            if r.bias_alpha.is_some() {
                r.bias_alpha = a.get(m).copied();
            }
            model.set(&r);
        }
    }

    fn parts(
        &self,
        state: &RvmState,
        x: &DMatrix<f64>,
        _for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, ())> {
        let (kernel, points) = (&state.kernel, &state.points);
        let k = kernel.matrix(points, x, exec.par);
        let kuf = if state.bias {
            let mut with_bias = k.insert_row(points.nrows(), 1.0);
            with_bias.row_mut(points.nrows()).fill(1.0);
            with_bias
        } else {
            k
        };
        let parts = Parts {
            kuf,
            kuu: KuuMatrix::Diagonal(state.alpha.clone()),
            kdiag: kernel.diag(x),
            // A = diag(α) is the prior precision itself: nothing to regularise
            jitter: Jitter::Fixed(0.0),
        };
        Ok((parts, ()))
    }

    fn pull_back(
        &self,
        state: &RvmState,
        x: &DMatrix<f64>,
        parts: &Parts,
        _extra: (),
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let (kernel, points) = (&state.kernel, &state.points);
        let m = points.nrows();
        let k = parts.kuf.rows(0, m).into_owned();
        let d_k = adj.d_kuf.rows(0, m).into_owned();
        let g = kernel.grad(points, x, &k, &d_k, false, false, exec.par);
        // the prior diagonal's contraction through the kernel (a composed kernel's k(x, x)
        // may vary with x), then the head by block in the kernel's own order (as
        // `params::Head::grad`: nothing else scales with σ0², A has no jitter), and σ²
        // where θ holds it
        let mut gd = vec![0.0; kernel.params_len()];
        kernel.diag_grad(x, &adj.d_kdiag, &mut gd);
        let mut grad = vec![0.0; kernel.params_len()];
        for p in [&g.params, &gd] {
            grad.iter_mut().zip(p).for_each(|(o, v)| *o += v);
        }
        kernel.log_prior_variance_grad(0.0, &mut grad);
        state.likelihood.push_grad(adj.d_noise, &mut grad);
        // Kuu_jj = α_j: ∂/∂log α_j = α_j ∂L/∂Kuu_jj
        let kuu = match &parts.kuu {
            KuuMatrix::Diagonal(a) => a,
            KuuMatrix::Dense(_) => unreachable!("the rvm builds a diagonal Kuu"),
        };
        grad.extend(kuu.iter().enumerate().map(|(j, a)| a * adj.d_kuu[(j, j)]));
        Ok(grad)
    }

    /// One addition, re-estimation or deletion (and every fifth a σ² re-estimate).
    fn progress_unit(&self) -> &'static str {
        "step"
    }

    fn degenerate(&self) -> bool {
        true
    }

    /// The fast marginal-likelihood algorithm from σ0², ℓ, σ² of `model`, one step per
    /// iteration of the budget, until its convergence test holds. The trace is the
    /// NLML (−log marginal likelihood) after 0, 1, … steps; `[rvm] relevance_vectors`
    /// holds the number of basis functions at each.
    fn fit(
        &self,
        method: &LowRankMethod<Self>,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        let started = Instant::now();
        let bias = spec.options.bias;
        // read once: the kernel the loop holds fixed and the likelihood
        let start = self.state(&model, &ctx.exec.scratch)?.into_owned();
        let floor = hyper::noise_floor(&model);
        // the selection regresses y with Gaussian noise, from the likelihood's σ²; a
        // likelihood without one (bernoulli, fitted by EP on the chosen basis) starts it
        // at 1 above the floor, the value such a model holds in σ²'s place
        // (`ModelFile::hold_unused_noise`)
        let noise = start.likelihood.likelihood().gaussian_noise();
        let cands = Candidates::new(&data.x, start.kernel.clone(), bias);
        let mut fast = FastRvm::new(
            cands,
            &data.y,
            noise.unwrap_or(floor + 1.0).max(floor),
            floor,
            true,
            spec.m,
            &ctx.exec,
        )?;
        let phase = Phase::Fit { stage: 0 };
        let mut trace = vec![-fast.log_ml()];
        let mut counts = vec![fast.active().len()];
        ctx.report(phase, 0, trace[0]);
        let mut stop = Stop::Budget;
        let mut model = model;
        let mut iterations = 0;
        while iterations < spec.iters {
            let step = fast.step(&ctx.exec)?;
            iterations += 1;
            trace.push(-fast.log_ml());
            counts.push(fast.active().len());
            ctx.report(phase, iterations, -fast.log_ml());
            if ctx.observes(phase, iterations) {
                let reached = self.model_of(&fast, data, &start, &model, bias);
                match ctx.observe(iterations, &reached) {
                    Control::Stop => return Err(Error::Cancelled),
                    Control::Finish => {
                        stop = Stop::EarlyStop;
                        break;
                    }
                    Control::Continue => {}
                }
            }
            if step.converged {
                stop = Stop::Converged;
                break;
            }
        }
        model = self.model_of(&fast, data, &start, &model, bias);
        model.set(&RvmFit {
            steps: iterations,
            converged: stop == Stop::Converged,
            relevance_vectors: counts,
            seconds: started.elapsed().as_secs_f64(),
        });
        let f = -fast.log_ml();
        Ok((
            model.clone(),
            Outcome {
                x: method.pack(&model),
                f,
                grad: Vec::new(),
                iterations,
                evaluations: iterations + 1,
                trace,
                stop,
            },
        ))
    }
}

impl RelevanceVectors {
    /// The fast algorithm's relevance vectors, α and σ² as a state (with `start`'s
    /// kernel, which the loop holds fixed) and the training rows of the vectors.
    fn state_of(
        &self,
        fast: &FastRvm,
        data: &TrainData,
        start: &RvmState,
        bias: bool,
    ) -> (RvmState, Vec<usize>) {
        let c = fast.candidates();
        let mut rows = Vec::new();
        let mut alpha = Vec::new();
        let mut bias_alpha = None;
        for (&m, &a) in fast.active().iter().zip(fast.alpha()) {
            if c.is_bias(m) {
                bias_alpha = Some(a);
            } else {
                rows.push(m);
                alpha.push(a);
            }
        }
        debug_assert!(bias || bias_alpha.is_none());
        alpha.extend(bias_alpha);
        let mut likelihood = start.likelihood.clone();
        likelihood.set_collapsed_noise(fast.noise());
        let state = RvmState {
            kernel: start.kernel.clone(),
            points: DMatrix::from_fn(rows.len(), data.x.ncols(), |i, d| data.x[(rows[i], d)]),
            alpha,
            bias: bias_alpha.is_some(),
            likelihood,
        };
        (state, rows)
    }

    /// `model` with the fast algorithm's state written in: its relevance vectors (at
    /// training `rows`), α and σ² (the kernel is the model's own).
    fn model_of(
        &self,
        fast: &FastRvm,
        data: &TrainData,
        start: &RvmState,
        model: &ModelFile,
        bias: bool,
    ) -> ModelFile {
        let (state, rows) = self.state_of(fast, data, start, bias);
        let mut model = model.clone();
        let m = state.points.nrows();
        model.set(&Relevance {
            points: matrix_to_rows(&state.points),
            alpha: state.alpha[..m].to_vec(),
            bias_alpha: state.bias.then(|| state.alpha[m]),
            rows,
        });
        state.likelihood.write(&mut model);
        model.posterior = None;
        model
    }
}
