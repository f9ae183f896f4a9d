//! What every method shares about its parameters: the default starting
//! hyperparameters, packing σ0², ℓ, σ² as logarithms at the head of the parameter
//! vector, and the optimiser runs over all or some of the packed entries.

use super::method::{Method, TypedModel};
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::kernel::KernelGrad;
use crate::model_file::{Hyper, ModelFile};
use crate::optim::{self, Outcome};
use crate::params::{Head, ParamLayout};
use crate::run_context::{Phase, RunContext};
use crate::run_spec::{LengthscaleStart, Positive};
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::ops::Range;

/// Default hyperparameters of docs/methods.md §0.4: σ0² = mean(y²) (y centred),
/// σ² = σ0²/4, and ℓ_d as `start` says: half the range of input d, times √D when
/// scaled (§0.4: the typical scaled distance between two inputs then stays of order one
/// however many inputs there are, instead of growing as √D).
pub fn default_hyper(data: &TrainData, start: LengthscaleStart) -> Hyper {
    let n = data.y.len().max(1) as f64;
    let sf2 = (data.y.iter().map(|v| v * v).sum::<f64>() / n).max(1e-12);
    let scale = match start {
        LengthscaleStart::Range => 1.0,
        LengthscaleStart::Scaled => (data.x.ncols().max(1) as f64).sqrt(),
    };
    let lengthscales = (0..data.x.ncols())
        .map(|d| {
            let c = data.x.column(d);
            let half = 0.5 * (c.max() - c.min());
            scale * if half > 0.0 { half } else { 1.0 }
        })
        .collect();
    Hyper::se(sf2, lengthscales, sf2 / 4.0)
}

/// Pack σ0², ℓ, the kernel's shape (rq's α), σ² as logarithms: the shared blocks of
/// [`crate::params`] at the head of every parameter vector; with a noise floor f, σ² is
/// packed as log(σ² − f), so no step can take it below f.
pub fn pack_hyper(model: &ModelFile, out: &mut Vec<f64>) {
    Head::pack(model, out)
}

/// The length of the packed head [log σ0², log ℓ, log α (rq), log σ²].
pub fn head_len(model: &ModelFile) -> usize {
    Head::of(model).len()
}

/// The gradient of the packed head ([`Head::grad`]).
pub fn head_grad(
    model: &ModelFile,
    grads: &[&KernelGrad],
    extra_signal: f64,
    d_noise: f64,
) -> Vec<f64> {
    Head::grad(model, grads, extra_signal, d_noise)
}

pub use crate::params::{noise_floor, noise_grad, push_noise_grad};

/// Inverse of [`pack_hyper`]; returns the number of entries read.
pub fn unpack_hyper(theta: &[f64], model: &mut ModelFile) -> usize {
    Head::unpack(theta, model)
}

/// σ0², ℓ, σ² as logarithms followed by a matrix of locations (pseudo-inputs,
/// spectral points), column-major: the parameter vector of fitc and ssgp.
pub fn pack_hyper_and(model: &ModelFile, points: Option<DMatrix<f64>>) -> Vec<f64> {
    let mut theta = Vec::new();
    pack_hyper(model, &mut theta);
    if let Some(p) = points {
        theta.extend_from_slice(p.as_slice());
    }
    theta
}

/// Inverse of [`pack_hyper_and`]: writes the hyperparameters into `model` and
/// returns the matrix (rows × D, one column per lengthscale) that follows them.
pub fn unpack_hyper_and(theta: &[f64], model: &mut ModelFile) -> DMatrix<f64> {
    let used = unpack_hyper(theta, model);
    let d = model.kernel_dim().max(1);
    let rows = (theta.len() - used) / d;
    DMatrix::from_column_slice(rows, d, &theta[used..used + rows * d])
}

/// Pick `m` distinct rows of `x` at random (inducing-point initialisation).
pub fn random_rows(x: &DMatrix<f64>, m: usize, rng: &mut ChaCha8Rng) -> DMatrix<f64> {
    let idx = rand::seq::index::sample(rng, x.nrows(), m.min(x.nrows()));
    DMatrix::from_fn(idx.len(), x.ncols(), |i, d| x[(idx.index(i), d)])
}

/// Minimise over every packed parameter with L-BFGS.
pub fn fit_all<M: Method + ?Sized>(
    method: &M,
    model: ModelFile,
    data: &TrainData,
    iters: usize,
    ctx: &RunContext,
) -> Result<(ModelFile, Outcome)> {
    let n = method.pack(&model).len();
    fit_free(
        method,
        model,
        data,
        0..n,
        iters,
        Phase::Fit { stage: 0 },
        None,
        ctx,
    )
}

/// The problem L-BFGS solves when it fits some packed entries of a model: the
/// optimiser's vector u holds the free entries only (none of a fixed block's), the
/// log-packed head mapped to `--positive`'s parameterisation.
pub struct FreeProblem<'a, M: Method + ?Sized> {
    method: &'a M,
    model: &'a ModelFile,
    /// θ at the start: what the entries u does not hold keep.
    full: Vec<f64>,
    layout: ParamLayout,
    /// The entries of θ that u holds, in order.
    free: Vec<usize>,
    /// The entries below this are the head `--positive` reparameterises.
    head_end: usize,
    positive: Positive,
    /// The model as typed values, where the method holds one ([`Method::typed_fit`]):
    /// each evaluation unpacks θ into it instead of into a copy of the model file.
    typed: Option<RefCell<Box<dyn TypedModel + 'a>>>,
}

impl<'a, M: Method + ?Sized> FreeProblem<'a, M> {
    /// Fit the entries `free` of `model`'s θ, less those of its fixed blocks.
    pub fn new(
        method: &'a M,
        model: &'a ModelFile,
        free: Range<usize>,
        positive: Positive,
    ) -> FreeProblem<'a, M> {
        let full = method.pack(model);
        let layout = ParamLayout::new(model, method.tail_blocks(), full.len());
        let free = layout.free(free);
        let head_end = positive_head_end(model, &full);
        FreeProblem {
            method,
            model,
            full,
            layout,
            free,
            head_end,
            positive,
            typed: method.typed_fit(model).map(RefCell::new),
        }
    }

    pub fn layout(&self) -> &ParamLayout {
        &self.layout
    }

    /// The entries of θ the optimiser moves.
    pub fn free(&self) -> &[usize] {
        &self.free
    }

    /// The optimiser's starting point.
    pub fn x0(&self) -> Vec<f64> {
        self.free
            .iter()
            .map(|&i| {
                if i < self.head_end {
                    self.positive.from_log(self.full[i])
                } else {
                    self.full[i]
                }
            })
            .collect()
    }

    /// θ at the optimiser's point u.
    pub fn theta(&self, u: &[f64]) -> Vec<f64> {
        let mut theta = self.full.clone();
        for (&i, v) in self.free.iter().zip(u) {
            theta[i] = *v;
        }
        for &i in self.free.iter().take_while(|&&i| i < self.head_end) {
            theta[i] = self.positive.log_of(theta[i]);
        }
        theta
    }

    /// θ written into `into` (a copy of the starting model), the fixed blocks exactly
    /// at their values.
    pub fn unpack_into(&self, theta: &[f64], into: &mut ModelFile) {
        self.method.unpack(theta, into);
        if self.layout.any_fixed() {
            self.layout.hold_fixed(self.model, into);
        }
    }

    /// The model at the optimiser's point u.
    pub fn model_at(&self, u: &[f64]) -> ModelFile {
        let mut m = self.model.clone();
        self.unpack_into(&self.theta(u), &mut m);
        m
    }

    /// The objective and its gradient in u: θ unpacked into the typed model where the
    /// method holds one (on one process: a shared evaluation announces a model file to
    /// the others), else into `scratch`, a copy of the model file.
    pub fn eval(
        &self,
        u: &[f64],
        data: &TrainData,
        scratch: &mut ModelFile,
        exec: &crate::exec::Exec,
    ) -> Result<(f64, Vec<f64>)> {
        let theta = self.theta(u);
        let evaluated = match &self.typed {
            Some(typed) if exec.share.is_none() => {
                let mut typed = typed.borrow_mut();
                typed.unpack(&theta, &self.layout);
                let mut grad = Vec::new();
                typed
                    .objective_into(data, exec, &mut grad)
                    .map(|(nlml, _)| (nlml, grad))
            }
            _ => {
                // unpack from the starting model each time: psds reads its points back
                // from w ⊙ ℓ, and a reused scratch would let them drift by rounding, so
                // the final model would not be bitwise the point the line search accepted
                scratch.clone_from(self.model);
                self.unpack_into(&theta, scratch);
                self.method
                    .objective(scratch, data, exec)
                    .map(|o| (o.nlml, o.grad))
            }
        };
        evaluated.map(|(nlml, grad)| {
            let mut g: Vec<f64> = self.free.iter().map(|&i| grad[i]).collect();
            let in_head = self.free.iter().take_while(|&&i| i < self.head_end).count();
            for k in 0..in_head {
                g[k] *= self.positive.dlog_du(u[k]);
            }
            (nlml, g)
        })
    }
}

/// Minimise over the packed entries `free` only, the others held at their values;
/// the entries of blocks the model fixes ([`ParamLayout::free`]) are never among them.
/// Iteration numbers reported to the context continue from `continues` (see
/// [`RunContext::on_iter`]).
#[allow(clippy::too_many_arguments)]
pub fn fit_free<M: Method + ?Sized>(
    method: &M,
    model: ModelFile,
    data: &TrainData,
    free: Range<usize>,
    iters: usize,
    phase: Phase,
    continues: Option<usize>,
    ctx: &RunContext,
) -> Result<(ModelFile, Outcome)> {
    let problem = FreeProblem::new(method, &model, free, ctx.positive());
    let mut scratch = model.clone();
    let objective = |u: &[f64]| problem.eval(u, data, &mut scratch, &ctx.exec);
    // a likelihood other than the Gaussian is fitted by EP here, whose evidence can
    // keep rising toward a limit as the latent scale grows (docs/methods.md §10): the
    // fit ends when its iterations stop gaining, not at the budget
    let ep = model.likelihood_kind() != crate::likelihoods::LikelihoodKind::Gaussian;
    let options = optim::Options {
        max_iters: iters,
        plateau_rows: ep.then_some(data.y.len()),
        ..Default::default()
    };
    let mut report = ctx.on_iter(phase, continues);
    let mut on_iter = |it: &optim::IterInfo| {
        let mut control = report(it);
        let at = it.iteration + continues.unwrap_or(0);
        if control == optim::Control::Continue && ctx.observes(phase, at) {
            control = ctx.observe(at, &problem.model_at(&it.x));
        }
        control
    };
    let outcome = optim::minimize(objective, &problem.x0(), &options, &mut on_iter)?;
    let theta = problem.theta(&outcome.x);
    let mut fitted = model.clone();
    problem.unpack_into(&theta, &mut fitted);
    Ok((
        fitted,
        Outcome {
            x: theta,
            ..outcome
        },
    ))
}

/// Where the log-packed head [log σ0², log ℓ, log α, log(σ² − floor)] ends in `full`:
/// the entries below it are those `--positive` reparameterises. 0 when the method's
/// vector does not begin with [`pack_hyper`]'s head.
fn positive_head_end(model: &ModelFile, full: &[f64]) -> usize {
    let mut h = Vec::new();
    pack_hyper(model, &mut h);
    let starts_with_head = full.len() >= h.len()
        && full[..h.len()]
            .iter()
            .zip(&h)
            .all(|(a, b)| a.to_bits() == b.to_bits());
    if starts_with_head { h.len() } else { 0 }
}

impl Positive {
    /// The optimiser's coordinate u of a positive value p = e^t given its logarithm t.
    pub fn from_log(self, t: f64) -> f64 {
        match self {
            Positive::Log => t,
            // u = log(e^p − 1): through expm1 for small p, as p + log(1 − e^−p) for
            // large p (where e^p would overflow)
            Positive::Softplus => {
                let p = t.exp();
                if p > 30.0 {
                    p + (-(-p).exp()).ln_1p()
                } else {
                    p.exp_m1().ln()
                }
            }
        }
    }

    /// The logarithm t of the positive value at coordinate u.
    pub fn log_of(self, u: f64) -> f64 {
        match self {
            Positive::Log => u,
            // softplus(u) = log(1 + e^u), whose logarithm is u to rounding below −30
            Positive::Softplus if u < -30.0 => u,
            Positive::Softplus => (u.max(0.0) + (-u.abs()).exp().ln_1p()).ln(),
        }
    }

    /// dt/du, to carry a gradient with respect to t over to u.
    pub fn dlog_du(self, u: f64) -> f64 {
        match self {
            Positive::Log => 1.0,
            // σ(u) / softplus(u)
            Positive::Softplus if u < -30.0 => 1.0,
            Positive::Softplus => {
                let sigmoid = 1.0 / (1.0 + (-u).exp());
                sigmoid / (u.max(0.0) + (-u.abs()).exp().ln_1p())
            }
        }
    }
}

/// Iteration budget of the next stage: what is left, split evenly over the stages
/// still to run (so a stage that converges early leaves its share to the next).
pub fn stage_budget(left: usize, stages_left: usize) -> usize {
    left.div_ceil(stages_left.max(1))
}

/// The outcome of a schedule so far followed by its next stage's: iterations and
/// evaluations add up, the trace runs on (the stage's initial value is the previous
/// stage's last), the rest is the last stage's.
pub fn chain(total: Option<Outcome>, out: Outcome) -> Outcome {
    match total {
        None => out,
        Some(t) => Outcome {
            iterations: t.iterations + out.iterations,
            evaluations: t.evaluations + out.evaluations,
            trace: t
                .trace
                .iter()
                .chain(out.trace.iter().skip(1))
                .copied()
                .collect(),
            ..out
        },
    }
}

/// Fit a schedule of stages, each over its own packed entries, within one iteration
/// budget; the trace and the iteration count run on across stages.
pub fn fit_stages<M: Method + ?Sized>(
    method: &M,
    model: ModelFile,
    data: &TrainData,
    stages: &[Range<usize>],
    iters: usize,
    ctx: &RunContext,
) -> Result<(ModelFile, Outcome)> {
    let mut model = model;
    let mut total: Option<Outcome> = None;
    for (k, free) in stages.iter().enumerate() {
        let used = total.as_ref().map_or(0, |t| t.iterations);
        let budget = stage_budget(iters - used.min(iters), stages.len() - k);
        let continues = total.as_ref().map(|t| t.iterations);
        let phase = Phase::Fit { stage: k + 1 };
        let (fitted, out) = fit_free(
            method,
            model,
            data,
            free.clone(),
            budget,
            phase,
            continues,
            ctx,
        )?;
        model = fitted;
        total = Some(chain(total, out));
        if total
            .as_ref()
            .is_some_and(|t| matches!(t.stop, optim::Stop::Cancelled | optim::Stop::EarlyStop))
        {
            break;
        }
    }
    let total = total.ok_or_else(|| Error::input("the stage schedule is empty"))?;
    Ok((model, total))
}
