//! The exact GP (method `full`): O(n³) time, O(n²) memory; the reference every
//! sparse method is compared with. `--subset N` (a general option) fits it on a random
//! subset, the "random active set" baseline of the PSDS paper.

use super::hyper::{default_hyper, fit_all, fit_free, pack_hyper, unpack_hyper};
use super::lowrank::ep::{refuse_shared, uses_ep};
use super::method::{Method, Objective, ValidRunSpec};
use crate::collapsed::{LatentPrior, Posterior};
use crate::data::TrainData;
use crate::ep;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::kernel::{KernelGrad, KernelKind};
use crate::likelihoods::LikelihoodKind;
use crate::linalg::{self, Jitter};
use crate::model_file::{Hyper, ModelFile};
use crate::params::Pins;
use crate::run_context::{Phase, RunContext};
use crate::run_spec::{LengthscaleStart, MethodOptions};
use nalgebra::{DMatrix, DVector};
use rand_chacha::ChaCha8Rng;
use std::f64::consts::PI;

pub struct Exact;

/// EP with the exact GP at a model's kernel (one process: not --distributed).
fn exact_ep(model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<ep::exact::ExactEp> {
    refuse_shared(exec)?;
    exec.check()?;
    let kernel = model.kernel();
    let settings = super::lowrank::ep::settings(model);
    ep::exact::fit(&*kernel, &data.x, &data.y, &settings, None)
}

/// K + σ²I factorised, with α = (K + σ²I)⁻¹ y.
struct Factor {
    k: DMatrix<f64>,
    l: DMatrix<f64>,
    jitter: f64,
    alpha: DVector<f64>,
    nlml: f64,
}

fn factor(model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<Factor> {
    exec.check()?;
    let kernel = model.kernel();
    let k = kernel.gram(&data.x, exec.par);
    exec.check()?;
    // The noise keeps K + σ²I positive definite; jitter only if σ² is tiny. The
    // factorisations copy K and add σ² (and the jitter) on the way: K + σ²I itself is
    // never held, one n×n matrix less. They look at the cancel token between panels.
    let noise = model.collapsed_noise()?;
    let policy = match model.jitter {
        Some(j) => Jitter::Fixed(j),
        None => match linalg::cholesky_shifted(&k, noise, exec)? {
            Some(l) => return finish(k, l, 0.0, &data.y, exec),
            // the kernel's prior variance (σ0² for the plain kernels), which the
            // jitter's gradient follows
            None => Jitter::Auto {
                scale: kernel
                    .prior_variance()
                    .unwrap_or(model.hyper.signal_variance),
            },
        },
    };
    let (l, jitter) = linalg::cholesky_jittered_exec(&k, noise, policy, exec)?;
    finish(k, l, jitter, &data.y, exec)
}

fn finish(k: DMatrix<f64>, l: DMatrix<f64>, jitter: f64, y: &[f64], exec: &Exec) -> Result<Factor> {
    exec.check()?;
    let n = y.len();
    let mut a = DMatrix::from_column_slice(n, 1, y);
    linalg::solve_lower(&l, &mut a, exec.par);
    let quad = a.norm_squared();
    linalg::solve_lower_transpose(&l, &mut a, exec.par);
    let nlml = 0.5 * quad + linalg::half_logdet(&l) + 0.5 * n as f64 * (2.0 * PI).ln();
    Ok(Factor {
        k,
        l,
        jitter,
        alpha: DVector::from_column_slice(a.as_slice()),
        nlml,
    })
}

impl Method for Exact {
    /// K is the model's kernel on the inputs, any kernel.
    fn takes_composed_kernel(&self) -> bool {
        true
    }
    /// The posterior is over the training targets y = f(X) + ε.
    fn predicts_summands(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "full"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["exact"]
    }
    fn summary(&self) -> &'static str {
        "exact GP, O(n³) (Rasmussen & Williams 2006); m is not used"
    }
    fn m_meaning(&self) -> &'static str {
        "unused (all training points)"
    }
    fn uses_m(&self) -> bool {
        false
    }
    fn stores_posterior(&self) -> bool {
        false
    }
    fn chunked(&self) -> std::result::Result<(), &'static str> {
        Err("the exact GP factorises the n×n kernel matrix of all training points at once")
    }

    fn cost(&self, n: usize, d: usize, _m: usize) -> super::cost::Cost {
        super::cost::Cost::exact(n, d)
    }

    fn init_uses_seed(&self, _options: &MethodOptions) -> bool {
        false
    }
    fn fits_by_lbfgs(&self, _options: &MethodOptions) -> bool {
        true
    }
    fn seed_help(&self) -> &'static str {
        "deterministic start (the defaults of docs/methods.md §0.4); the seed matters only with \
         --subset or --init-lengthscales-from-subset"
    }

    fn init(
        &self,
        _data: &TrainData,
        _spec: &ValidRunSpec,
        hyper: Hyper,
        _ctx: &RunContext,
        _rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        Ok(ModelFile::new(self.name(), hyper))
    }

    fn check(&self, _model: &ModelFile) -> Result<()> {
        Ok(())
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = Vec::new();
        pack_hyper(model, &mut theta);
        theta
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        unpack_hyper(theta, model);
    }

    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, crate::optim::Outcome)> {
        fit_all(self, model, data, spec.iters, ctx)
    }

    /// The Gaussian likelihood in closed form; the bernoulli (probit) by expectation
    /// propagation (`ep::exact`, GPML's `infEP`).
    fn refuses_likelihood(&self, kind: LikelihoodKind) -> Option<String> {
        match kind {
            LikelihoodKind::Bernoulli => None,
            kind => super::method::gaussian_only(kind),
        }
    }

    fn fits_bernoulli_by_ep(&self) -> bool {
        true
    }

    fn objective_name(&self, model: &ModelFile) -> &'static str {
        if matches!(uses_ep(model), Ok(true)) {
            "negative EP log evidence"
        } else {
            "NLML"
        }
    }

    fn objective(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<Objective> {
        if uses_ep(model)? {
            let fit = exact_ep(model, data, exec)?;
            let g = KernelGrad {
                params: fit.grad.clone(),
                a: None,
                b: None,
            };
            return Ok(Objective {
                nlml: fit.nlz,
                grad: super::hyper::head_grad(model, &[&g], 0.0, 0.0),
                jitter: 0.0,
            });
        }
        let f = factor(model, data, exec)?;
        // ∂NLML/∂K = ½(K⁻¹ − ααᵀ)
        let mut w = linalg::chol_inverse_exec(&f.l, exec)?;
        exec.check()?;
        linalg::gemm(
            &mut w,
            true,
            &DMatrix::from_column_slice(f.alpha.len(), 1, f.alpha.as_slice()),
            false,
            &DMatrix::from_column_slice(f.alpha.len(), 1, f.alpha.as_slice()),
            true,
            -1.0,
            exec.par,
        );
        w *= 0.5;
        let g = model
            .kernel()
            .grad(&data.x, &data.x, &f.k, &w, false, false, exec.par);
        let jitter = if model.jitter.is_none() && f.jitter > 0.0 {
            f.jitter * w.trace()
        } else {
            0.0
        };
        let grad = super::hyper::head_grad(model, &[&g], jitter, w.trace());
        Ok(Objective {
            nlml: f.nlml,
            grad,
            jitter: f.jitter,
        })
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<f64> {
        if uses_ep(model)? {
            return Ok(exact_ep(model, data, exec)?.nlz);
        }
        Ok(factor(model, data, exec)?.nlml)
    }

    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        if uses_ep(model)? {
            let (mean_weights, var_matrix) = exact_ep(model, data, exec)?.gaussian_form();
            let post = Posterior {
                mean_weights,
                var_matrix,
                latent_prior: LatentPrior::Kernel,
            };
            return Ok((post, Some(data.x.clone())));
        }
        let f = factor(model, data, exec)?;
        let post = Posterior {
            mean_weights: f.alpha.as_slice().to_vec(),
            var_matrix: linalg::chol_inverse_exec(&f.l, exec)?,
            latent_prior: LatentPrior::Kernel,
        };
        Ok((post, Some(data.x.clone())))
    }

    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Result<DMatrix<f64>> {
        Ok(model.kernel().gram(x, exec.par))
    }

    fn cross(
        &self,
        model: &ModelFile,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let basis = basis.ok_or_else(|| {
            Error::input("the exact GP predicts from its training data; pass --train")
        })?;
        // the kernel's own diagonal: a composed kernel's prior variance is not
        // [hyper]'s σ0² (and varies with x for a linear part)
        let kernel = model.kernel();
        Ok((kernel.matrix(basis, x, exec.par), kernel.diag(x)))
    }
}

/// Fit a full GP on `n_sub` random training points and return its hyperparameters
/// (the subset initialisation the inter-domain and PSDS papers use on pumadyn-32nm),
/// with the kernel `kernel`.
/// Reports its iterations as the `SubsetInit` phase and stops when the run is cancelled.
#[allow(clippy::too_many_arguments)] // the subset fit's settings and the run's fixed values
pub fn hyper_from_subset(
    data: &TrainData,
    n_sub: usize,
    kernel: KernelKind,
    iters: usize,
    start: LengthscaleStart,
    pins: &Pins,
    ctx: &RunContext,
    rng: &mut ChaCha8Rng,
) -> Result<Hyper> {
    let sub = subset(data, n_sub, rng);
    let hyper = default_hyper(&sub, start).with_kernel(kernel);
    let start = ModelFile::new(Exact.name(), hyper);
    Ok(fit_on(&sub, start, iters, pins, ctx)?.0.hyper)
}

/// The kernel a subset fit fits, and where its starts come from ([`subset_starts`]).
#[derive(Clone, Copy, Debug)]
pub enum SubsetKernel<'a> {
    /// A plain kernel: its starts from §0.4's defaults on the subset.
    Plain(KernelKind),
    /// A composed kernel (`--kernel` an expression) as the run's first start has it:
    /// a model of the exact GP holding the kernel with its values (the expression's,
    /// else each part's default start) and the variance its summands share as σ0².
    Composed(&'a ModelFile),
}

/// The starts of [`subset_start`]: for a plain kernel the half-range lengthscales of
/// §0.4 times 1, √D and 10 (long enough that every input starts nearly switched off and
/// ARD turns on the ones that matter), each with the noise at σ0²/4 (§0.4) and at
/// σ0²/100 (a signal-dominated split, RobustGP's); for a composed kernel the same
/// scalings per part ([`composed_starts`]). Each a model of the exact GP, with its
/// description ("ℓ half-range × 10, σ² = σ0²/100").
pub fn subset_starts(sub: &TrainData, kernel: SubsetKernel) -> Vec<(ModelFile, String)> {
    let kind = match kernel {
        SubsetKernel::Plain(kind) => kind,
        SubsetKernel::Composed(start) => return composed_starts(start),
    };
    let base = default_hyper(sub, LengthscaleStart::Range).with_kernel(kind);
    let root_d = (sub.x.ncols().max(1) as f64).sqrt();
    let mut starts = Vec::new();
    for (scale, name) in [(1.0, ""), (root_d, " × √D"), (10.0, " × 10")] {
        for split in [4.0, 100.0] {
            let mut h = base.clone();
            h.lengthscales.iter_mut().for_each(|l| *l *= scale);
            h.noise_variance = h.signal_variance / split;
            let start = ModelFile::new(Exact.name(), h);
            starts.push((start, format!("ℓ half-range{name}, σ² = σ0²/{split}")));
        }
    }
    starts
}

/// The key of a part's lengthscales in a composed kernel's block names (`se1.ls`).
const PART_LENGTHSCALES: &str = ".ls";

/// A composed kernel's subset starts: the plain kernel's scalings applied per part to
/// the kernel's own free parameters as the run starts them (`start`) — every free
/// lengthscale block (`label.ls`: an ARD part's, a periodic part's) times 1, √D (D the
/// part's own inputs, its block's length) and 10, each with the noise at σ0²/4 and
/// σ0²/100 (σ0² the variance the summands share, `start`'s). Variances, periods,
/// shapes and locations stay at their start; fixed parameters are no blocks of the
/// kernel (`Kernel::blocks` lists the free ones), so no start moves one. A kernel with
/// no free lengthscale has the two noise splits only.
fn composed_starts(start: &ModelFile) -> Vec<(ModelFile, String)> {
    let Some(composed) = &start.composed else {
        return Vec::new();
    };
    let lengthscales: Vec<_> = composed
        .kernel()
        .blocks()
        .into_iter()
        .filter(|b| b.name.ends_with(PART_LENGTHSCALES))
        .collect();
    let scales: &[(Option<f64>, &str)] = if lengthscales.is_empty() {
        &[(Some(1.0), "")]
    } else {
        &[(Some(1.0), ""), (None, " × √D"), (Some(10.0), " × 10")]
    };
    let mut starts = Vec::new();
    for &(scale, name) in scales {
        for split in [4.0, 100.0] {
            let mut s = start.clone();
            let kernel = s.composed.as_mut().expect("composed").kernel_mut();
            for b in &lengthscales {
                let by = scale.unwrap_or_else(|| (b.values.len() as f64).sqrt());
                let values: Vec<f64> = b.values.iter().map(|l| l * by).collect();
                kernel.set_block(&b.name, &values);
            }
            s.hyper.noise_variance = s.hyper.signal_variance / split;
            starts.push((s, format!("each part's ℓ{name}, σ² = σ0²/{split}")));
        }
    }
    starts
}

/// Fit a full GP on `n_sub` random training points from each of several starts
/// ([`subset_starts`]) and return the fit with the lowest NLML on the subset — a model
/// of the exact GP: its σ0², ℓ, σ², or its composed kernel's values and σ² — the start
/// a collapsed fit restarts from (docs/methods.md §0.4; measured in
/// docs/results/starts.md), with the description of the start it came from. One subset
/// for every start, drawn from `rng`.
pub fn subset_start(
    data: &TrainData,
    n_sub: usize,
    kernel: SubsetKernel,
    iters: usize,
    pins: &Pins,
    ctx: &RunContext,
    rng: &mut ChaCha8Rng,
) -> Result<(ModelFile, String)> {
    let sub = subset(data, n_sub, rng);
    let (fitted, _, name) = best_of_starts(&sub, kernel, iters, pins, ctx)?;
    Ok((fitted, name))
}

/// [`subset_start`] at a lower price, for the default second start
/// (docs/methods.md §0.4): the same `n_sub` random points drawn from `rng`, but the six
/// starts fitted on their first `n_warm` only (a random subset too; the exact GP costs
/// n³ per evaluation, so 1/64 of the price at a quarter of the points), and the best
/// then fitted on all `n_sub`. Where the part holds at least `per_parameter` points per
/// hyperparameter its end is near the optimum on all the points and is refined there
/// for at most `refine_iters` iterations (kin40k, 8 inputs: all six starts reach one
/// optimum, the refinement the full fit's); where it holds fewer, the part's end is no
/// such start (pumadyn-32nm, 32 inputs of which 4 matter: refined from the end on 384
/// points the start lands in a worse basin), so the winning start — and every start
/// whose end on the part is within [`TIE_NATS`] of it — is fitted on all `n_sub` from
/// where it began, for up to `iters` iterations, as in [`subset_start`], and
/// the lowest there kept: its result whenever the part rules out only starts all the
/// points would rank lower (docs/results/starts.md). With
/// `n_warm ≥ n_sub`, [`subset_start`].
#[allow(clippy::too_many_arguments)] // the two stages' sizes and the run's fixed values
pub fn subset_start_warm(
    data: &TrainData,
    sizes: (usize, usize),
    kernel: SubsetKernel,
    (iters, refine_iters): (usize, usize),
    pins: &Pins,
    ctx: &RunContext,
    rng: &mut ChaCha8Rng,
) -> Result<(ModelFile, String)> {
    let stages = (iters, refine_iters, WARM_PER_PARAMETER, TIE_NATS);
    warm_then_all(data, sizes, kernel, stages, pins, ctx, rng)
}

/// The points per hyperparameter (σ0², σ², each ℓ, …) the six starts' part must hold for
/// its best end to be refined on all of the subset; with fewer the winning start is fitted
/// on all of it from where it began ([`subset_start_warm`]). About
/// twenty observations per estimated parameter is the usual rule of thumb for a
/// likelihood's optimum to be close to where more data would put it. At the default
/// part ([`super::start::warm_subset`]) it holds from 1 to 10 inputs (kin40k's 8: 25 per
/// hyperparameter) and not from 11 on (elevators' 18: 12.5; pumadyn-32nm's 32: 11.3,
/// where the end refined from 384 points reached NMSE 0.0499 for vfe m = 25 seed 1 and
/// the start fitted on all 1000 0.0479; docs/results/starts.md).
pub const WARM_PER_PARAMETER: usize = 20;

/// [`subset_start_warm`] with the points per hyperparameter below which the
/// part's winning starts, not its end, are fitted on all of the subset, and the nats
/// within which a start ties with the part's winner ([`TIE_NATS`]).
#[allow(clippy::too_many_arguments)] // the two stages' sizes and the run's fixed values
pub fn warm_then_all(
    data: &TrainData,
    (n_sub, n_warm): (usize, usize),
    kernel: SubsetKernel,
    (iters, refine_iters, per_parameter, tie_nats): (usize, usize, usize, f64),
    pins: &Pins,
    ctx: &RunContext,
    rng: &mut ChaCha8Rng,
) -> Result<(ModelFile, String)> {
    let sub = subset(data, n_sub, rng);
    if n_warm >= sub.y.len() {
        let (hyper, _, name) = best_of_starts(&sub, kernel, iters, pins, ctx)?;
        return Ok((hyper, name));
    }
    let warm = TrainData {
        x: sub.x.rows(0, n_warm).into_owned(),
        y: sub.y[..n_warm].to_vec(),
        log_exposure: None,
    };
    let ends = fit_starts(&warm, kernel, iters, pins, ctx)?;
    let (end, part_best, name) = lowest(ends.clone(), warm.y.len())?;
    let parameters = Exact.pack(&end).len();
    // a composed kernel's thin part is refined like a full one: fitting its tied starts
    // on all n_sub points for up to `iters` each costs many full fits (elevators,
    // `linear + matern52` on 17 inputs, 36 parameters: 67.9 s against one start's 4.5;
    // docs/results/composed-kernels.md), far above the second start's budget
    let composed = matches!(kernel, SubsetKernel::Composed(_));
    if n_warm < per_parameter * parameters && !composed {
        // every start the part cannot rule out, fitted on all the points from where it
        // began; the lowest NLML there kept
        let mut whole = Vec::new();
        for (start, start_name) in subset_starts(&sub, kernel) {
            let tied = ends
                .iter()
                .any(|(_, f, n)| *n == start_name && *f <= part_best + tie_nats);
            if !tied {
                continue;
            }
            match fit_on(&sub, start, iters, pins, ctx) {
                Ok((fitted, f)) => whole.push((fitted, f, start_name)),
                // a start that fails on all the points is passed over
                Err(Error::Numerical(_)) => {}
                Err(e) => return Err(e),
            }
        }
        return Ok(match lowest(whole, sub.y.len()) {
            Ok((fitted, _, whole_name)) => (fitted, whole_name),
            // no tied start could be fitted on all the points: the part's end is a start
            Err(_) => (end, name),
        });
    }
    match fit_on(&sub, end.clone(), refine_iters, pins, ctx) {
        Ok((refined, f)) if f.is_finite() => Ok((refined, name)),
        // the refinement failed numerically: the small fit's end is still a start
        Ok(_) | Err(Error::Numerical(_)) => Ok((end, name)),
        Err(e) => Err(e),
    }
}

/// How far (nats) above the part's lowest NLML a start's end may be and still be fitted
/// on all the subset's points when the part is thin ([`subset_start_warm`]): the part
/// rules a start out only on very strong evidence, a log likelihood ratio above 5 (2·Δ
/// above 10, the top of Kass and Raftery's scale for Bayes factors). Closer than that, a
/// few hundred points in many inputs do not rank two starts as all the points would
/// (pumadyn-32nm seed 4: "× √D, σ² = σ0²/4" led "× √D, σ² = σ0²/100" by 3.5 nats on
/// 384 points, and on all 1000 ended 6.3 nats above it; docs/results/starts.md).
pub const TIE_NATS: f64 = 5.0;

/// Each of [`subset_starts`] fitted on `sub`: its end, NLML and description (a start the
/// exact GP cannot evaluate, a numerical failure, is left out). The starts are fitted
/// side by side, each on one thread ([`crate::side_by_side`]): an exact GP on a few
/// hundred points keeps one thread busy, not two. On one thread a start ends in the same
/// bits whatever the machine's cores; on 250 points (the part of up to 10 inputs, the
/// only part whose end is refined) in the bits it ended in over the pool's threads one
/// after another.
pub fn fit_starts(
    sub: &TrainData,
    kernel: SubsetKernel,
    iters: usize,
    pins: &Pins,
    ctx: &RunContext,
) -> Result<Vec<(ModelFile, f64, String)>> {
    let starts = subset_starts(sub, kernel);
    let fitted = crate::side_by_side::map(ctx, starts.len(), |k, c| {
        fit_on(sub, starts[k].0.clone(), iters, pins, c)
    });
    let mut ends = Vec::new();
    for ((_, name), fitted) in starts.into_iter().zip(fitted) {
        let Ok((fitted, f)) = fitted else {
            ctx.exec.check()?;
            continue;
        };
        if f.is_finite() {
            ends.push((fitted, f, name));
        }
    }
    Ok(ends)
}

/// The end with the lowest NLML (the first of equals), or the error that no start of the
/// full GP on `n` points could be fitted.
pub fn lowest(ends: Vec<(ModelFile, f64, String)>, n: usize) -> Result<(ModelFile, f64, String)> {
    let mut best: Option<(ModelFile, f64, String)> = None;
    for end in ends {
        if end.1.is_finite() && best.as_ref().is_none_or(|(_, b, _)| end.1 < *b) {
            best = Some(end);
        }
    }
    best.ok_or_else(|| {
        Error::numerical(format!(
            "no start of the full GP on {n} training points could be fitted"
        ))
    })
}

/// Each of [`subset_starts`] fitted on `sub`; the one with the lowest NLML (its
/// fitted model, NLML and description).
pub fn best_of_starts(
    sub: &TrainData,
    kernel: SubsetKernel,
    iters: usize,
    pins: &Pins,
    ctx: &RunContext,
) -> Result<(ModelFile, f64, String)> {
    lowest(fit_starts(sub, kernel, iters, pins, ctx)?, sub.y.len())
}

/// The exact GP on `sub` from `start` (a model of the exact GP), `iters` iterations as
/// the `SubsetInit` phase, the run's fixed σ0², ℓ, α, σ² (`pins`) held (a composed
/// kernel's fixed parameters are no parameters of its θ): the fitted model and its
/// final NLML (model units).
pub fn fit_on(
    sub: &TrainData,
    start: ModelFile,
    iters: usize,
    pins: &Pins,
    ctx: &RunContext,
) -> Result<(ModelFile, f64)> {
    let mut model = start;
    pins.apply(&mut model, true);
    let n = Exact.pack(&model).len();
    let (fitted, outcome) = fit_free(
        &Exact,
        model,
        sub,
        0..n,
        iters,
        Phase::SubsetInit,
        None,
        ctx,
    )?;
    if outcome.stop == crate::optim::Stop::Cancelled {
        return Err(Error::Cancelled);
    }
    Ok((fitted, outcome.f))
}

/// A random subset of the training data (without replacement).
pub fn subset(data: &TrainData, n_sub: usize, rng: &mut ChaCha8Rng) -> TrainData {
    let idx = rand::seq::index::sample(rng, data.y.len(), n_sub.min(data.y.len()));
    TrainData {
        x: DMatrix::from_fn(idx.len(), data.x.ncols(), |i, d| data.x[(idx.index(i), d)]),
        y: idx.iter().map(|i| data.y[i]).collect(),
        log_exposure: data
            .log_exposure
            .as_ref()
            .map(|e| idx.iter().map(|i| e[i]).collect()),
    }
}
