//! Sparse spectrum GPs, docs/methods.md §4 (Lázaro-Gredilla, Quiñonero-Candela &
//! Figueiras-Vidal): `psds` with r fixed spectral points from a Hammersley set, and
//! `ssgp` with the points learned as well.
//!
//! A feature family: `Kuf = Φᵀ` (2r×n, cosines then sines) and the diagonal
//! `Kuu = (r/σ0²) I`, which the likelihood core handles with scalings in place of
//! triangular solves. The approximation is DTC, and the only one that means anything
//! here: q_ii = (σ0²/r)‖φ(x_i)‖² = σ0² = k(x_i, x_i) exactly (cos² + sin² = 1), so the
//! FITC diagonal and VFE's trace term are zero and every approximation is DTC.
//!
//! Model files store the absolute frequencies `w_r = s_r / ℓ`; the optimiser sees the
//! unscaled points `s_r` (ssgp), so that ℓ keeps its meaning and the parameterisation
//! matches the authors' `ssgpr.m`.

use super::hyper::{pack_hyper, pack_hyper_and, unpack_hyper, unpack_hyper_and};
use super::lowrank::{
    ApproxChoice, Family, FamilyState, KuuMatrix, LowRankMethod, MaxM, Parts, StateLikelihood,
};
use super::method::ValidRunSpec;
use crate::collapsed::Adjoints;
use crate::data::TrainData;
use crate::error::Location;
use crate::error::{Error, Result};
use crate::exec::{Exec, Par};
use crate::kernel::spectral::{self, SpectralDensity};
use crate::kernel::{Kernel, KernelKind};
use crate::linalg::{self, Jitter};
use crate::model_file::{Hyper, ModelFile, ModelTable, Witness, matrix_to_rows, required_matrix};
use crate::params::{self, Holds, ParamLayout, TailBlock, Transform};
use crate::run_context::RunContext;
use crate::run_spec::{ApproxKind, MethodOptions, RunSpec, SpectralInit, Stage};
use crate::scratch::Scratch;
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ops::Range;

pub mod composed;
pub mod form;

/// `[spectral] frequencies`: the spectral points of PSDS / SSGP as absolute
/// frequencies w_r, r rows of D values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spectral {
    pub frequencies: Vec<Vec<f64>>,
}

impl ModelTable for Spectral {
    const NAME: &'static str = "spectral";
}

/// Spectral points, fixed (PSDS) or learned (SSGP).
pub struct SpectralPoints {
    pub learn_points: bool,
}

const M_MEANING: &str = "spectral points r (2r basis functions)";

/// The largest r: the model solves a 2r×2r system (2r = 8192 holds 512 MB per
/// matrix, and the core keeps a few), and far fewer points already match the full GP
/// on every data set the papers use.
pub const MAX_SPECTRAL_POINTS: usize = 4096;

/// PSDS-GP: spectral points fixed at a Hammersley set; learns σ0², ℓ, σ².
pub const PSDS: LowRankMethod<SpectralPoints> = LowRankMethod {
    name: "psds",
    aliases: &[],
    summary: "PSDS-GP: r fixed Hammersley spectral points (Lázaro-Gredilla et al. 2007); \
              deterministic, so the seed changes nothing",
    m_meaning: M_MEANING,
    options: &[],
    approx: ApproxChoice::Fixed(ApproxKind::Dtc),
    max_m: MaxM::Fixed(MAX_SPECTRAL_POINTS),
    family: SpectralPoints {
        learn_points: false,
    },
};

/// SSGP: spectral points learned together with σ0², ℓ, σ².
pub const SSGP: LowRankMethod<SpectralPoints> = LowRankMethod {
    name: "ssgp",
    aliases: &[],
    summary: "SSGP: r learned spectral points (Lázaro-Gredilla et al. 2010); --init psds|random, \
              --stages hyper,points (one shared iteration budget)",
    m_meaning: M_MEANING,
    options: &["init", "stages"],
    approx: ApproxChoice::Fixed(ApproxKind::Dtc),
    max_m: MaxM::Fixed(MAX_SPECTRAL_POINTS),
    family: SpectralPoints { learn_points: true },
};

/// Columns with fewer entries than this are filled on one thread.
const PAR_MIN_ENTRIES: usize = 1 << 15;

// ---------------------------------------------------------------- Hammersley points

/// The first `k` primes.
pub fn primes(k: usize) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::with_capacity(k);
    let mut c = 2u64;
    while out.len() < k {
        if out
            .iter()
            .take_while(|p| *p * *p <= c)
            .all(|p| !c.is_multiple_of(*p))
        {
            out.push(c);
        }
        c += 1;
    }
    out
}

/// Van der Corput radical inverse of `i` in `base`: the digits of i mirrored about
/// the radix point. In (0, 1) for every i ≥ 1.
pub fn radical_inverse(mut i: u64, base: u64) -> f64 {
    let b = base as f64;
    let (mut value, mut scale) = (0.0, 1.0 / b);
    while i > 0 {
        value += (i % base) as f64 * scale;
        i /= base;
        scale /= b;
    }
    value
}

/// r points of the D-dimensional Hammersley set in (0,1)^D (r×D): `(i + ½)/r` for the
/// first coordinate, radical inverses of `i + 1` in bases 2, 3, 5, … for the others,
/// so that no coordinate is 0 or 1 (docs/methods.md §4.2).
pub fn hammersley(r: usize, d: usize) -> DMatrix<f64> {
    let bases = primes(d.saturating_sub(1));
    DMatrix::from_fn(r, d, |i, k| {
        if k == 0 {
            (i as f64 + 0.5) / r as f64
        } else {
            radical_inverse(i as u64 + 1, bases[k - 1])
        }
    })
}

/// The inverse standard normal CDF, `√2 · erfinv(2h − 1)`.
pub fn normal_quantile(h: f64) -> f64 {
    std::f64::consts::SQRT_2 * statrs::function::erf::erf_inv(2.0 * h - 1.0)
}

/// The PSDS spectral points (r×D, unscaled: distributed as N(0, I)).
pub fn psds_points(r: usize, d: usize) -> DMatrix<f64> {
    hammersley(r, d).map(normal_quantile)
}

/// The fixed spectral points of a kernel (r×D, unscaled): for the SE kernel
/// [`psds_points`]; for a Matérn kernel the Hammersley set in D + 1 dimensions, its
/// first D coordinates mapped to a normal vector and scaled by the radial factor of
/// the last (docs/methods.md, "Kernels"). None for a kernel without a sampler (rq).
pub fn kernel_points(kernel: &dyn Kernel, r: usize, d: usize) -> Option<DMatrix<f64>> {
    let density = kernel.spectral()?;
    if density == SpectralDensity::Gaussian {
        return Some(psds_points(r, d));
    }
    let h = hammersley(r, d + 1);
    let mut s = DMatrix::from_fn(r, d, |i, k| normal_quantile(h[(i, k)]));
    for i in 0..r {
        let f = density.radial_factor(h[(i, d)])?;
        s.row_mut(i).scale_mut(f);
    }
    Some(s)
}

/// r spectral points drawn from a kernel's spectral density (unscaled); None for a
/// kernel without a sampler (rq).
pub fn draw_points(
    kernel: &dyn Kernel,
    r: usize,
    d: usize,
    rng: &mut ChaCha8Rng,
) -> Option<DMatrix<f64>> {
    let density = kernel.spectral()?;
    let mut s = DMatrix::zeros(r, d);
    for i in 0..r {
        for k in 0..d {
            s[(i, k)] = StandardNormal.sample(rng);
        }
        let f = density.draw_radial_factor(rng)?;
        s.row_mut(i).scale_mut(f);
    }
    Some(s)
}

// ---------------------------------------------------------------- features

/// The absolute frequencies of a model (r×D).
pub fn frequencies(model: &ModelFile) -> Result<DMatrix<f64>> {
    required_matrix(
        &Location::key(Spectral::NAME).then("frequencies"),
        &model.require::<Spectral>()?.frequencies,
        model.hyper.lengthscales.len(),
    )
}

/// The unscaled points `s = w ⊙ ℓ` (r×D).
pub fn unscaled_points(model: &ModelFile) -> Result<DMatrix<f64>> {
    Ok(unscaled(frequencies(model)?, &model.hyper.lengthscales))
}

/// `s = w ⊙ ℓ` column by column.
fn unscaled(mut w: DMatrix<f64>, lengthscales: &[f64]) -> DMatrix<f64> {
    for (d, l) in lengthscales.iter().enumerate() {
        w.column_mut(d).scale_mut(*l);
    }
    w
}

/// `w = s / ℓ` column by column, as [`set_points`] stores it.
fn scaled(s: &DMatrix<f64>, lengthscales: &[f64]) -> DMatrix<f64> {
    let mut w = s.clone();
    for (d, l) in lengthscales.iter().enumerate() {
        w.column_mut(d).scale_mut(1.0 / l);
    }
    w
}

/// Store the frequencies `w = s / ℓ` for unscaled points s.
pub fn set_points(model: &mut ModelFile, s: &DMatrix<f64>) {
    let w = scaled(s, &model.hyper.lengthscales);
    model.set(&Spectral {
        frequencies: matrix_to_rows(&w),
    });
}

/// Φᵀ (2r×n): column i holds `cos(w_1ᵀx_i), …, cos(w_rᵀx_i), sin(w_1ᵀx_i), …, sin(w_rᵀx_i)`.
pub fn features(w: &DMatrix<f64>, x: &DMatrix<f64>, par: Par) -> DMatrix<f64> {
    let r = w.nrows();
    let proj = linalg::mul(w, false, x, true, par); // r×n, entry (k,i) = w_kᵀ x_i
    let mut phi = DMatrix::zeros(2 * r, x.nrows());
    let fill = |(col, p): (&mut [f64], &[f64])| {
        let (c, s) = col.split_at_mut(r);
        for k in 0..r {
            (s[k], c[k]) = p[k].sin_cos();
        }
    };
    let (out, inp) = (phi.as_mut_slice(), proj.as_slice());
    if par.is_parallel() && r * x.nrows() >= PAR_MIN_ENTRIES {
        out.par_chunks_mut(2 * r)
            .zip(inp.par_chunks(r))
            .for_each(fill);
    } else {
        out.chunks_mut(2 * r).zip(inp.chunks(r)).for_each(fill);
    }
    phi
}

/// The features of one input as a slice (`out` has 2r entries).
pub fn features_of(w: &DMatrix<f64>, x: &[f64], out: &mut [f64]) {
    let r = w.nrows();
    for k in 0..r {
        let p: f64 = (0..x.len()).map(|d| w[(k, d)] * x[d]).sum();
        (out[r + k], out[k]) = p.sin_cos();
    }
}

/// `Kuu = (r/σ0²) I` (its 2r diagonal entries).
pub fn kuu_diagonal(signal_variance: f64, r: usize) -> Vec<f64> {
    vec![r as f64 / signal_variance; 2 * r]
}

/// Kuu is diagonal and positive, so no jitter is needed; an explicit `jitter` key is
/// still honoured as a fixed amount (batch and online models alike).
pub fn jitter(model: &ModelFile) -> Jitter {
    fixed_jitter(model.jitter)
}

/// [`jitter`] of a model whose `jitter` key is `jitter`.
fn fixed_jitter(jitter: Option<f64>) -> Jitter {
    Jitter::Fixed(jitter.unwrap_or(0.0))
}

/// PSDS's unpack: s stays where it is (it is read back from w ⊙ ℓ before ℓ changes).
fn unpack_keep_points(theta: &[f64], model: &mut ModelFile) {
    let s = unscaled_points(model).ok();
    unpack_hyper(theta, model);
    if let Some(s) = s {
        set_points(model, &s);
    }
}

/// The points of a composed model (its form read from its kernel).
fn composed_points(model: &ModelFile) -> Result<composed::Points> {
    composed::points(model, &composed::form_of(model)?)
}

/// The spectral families' parameters as typed values ([`Family::State`]): read from a
/// model once (an L-BFGS fit unpacks θ into them on every evaluation), or for one
/// evaluation outside a fit.
#[derive(Clone, Debug)]
pub struct SpectralState {
    points: StatePoints,
    likelihood: StateLikelihood,
    /// The model's `jitter` key (a fixed amount; none by default).
    jitter: Option<f64>,
}

/// The kernel and its spectral points as the state holds them.
#[derive(Clone, Debug)]
enum StatePoints {
    /// The plain kernel: σ0², ℓ (θ's head; rq's α kept in its place), the unscaled
    /// points s (what ssgp's θ holds; psds keeps its start's) and the absolute
    /// frequencies w = s/ℓ the file keeps.
    Plain {
        signal_variance: f64,
        lengthscales: Vec<f64>,
        rq_alpha: Option<f64>,
        s: DMatrix<f64>,
        w: DMatrix<f64>,
    },
    /// A kernel built from parts: the kernel, its points, and its spectral form and the
    /// points' evaluation at its values (derived after every change).
    Composed(Box<ComposedState>),
}

#[derive(Clone, Debug)]
struct ComposedState {
    kernel: Box<dyn Kernel>,
    points: composed::Points,
    form: form::Form,
    eval: composed::Eval,
    /// Why the form or the evaluation failed at the last values, if it did.
    broken: Option<String>,
    method: String,
}

impl ComposedState {
    /// The form and the evaluation at the kernel's values, as a model file's read
    /// gives them ([`composed::form_of`], [`composed::evaluate`]).
    fn derive(&mut self) {
        let derived = form::of_kernel(&*self.kernel)
            .map_err(|why| {
                Error::at(
                    Location::key("kernel"),
                    format!("[kernel]: method '{}' cannot use it: {why}", self.method),
                )
            })
            .and_then(|f| Ok((composed::evaluate(&f, &self.points)?, f)));
        match derived {
            Ok((eval, form)) => {
                (self.form, self.eval, self.broken) = (form, eval, None);
            }
            Err(e) => self.broken = Some(e.to_string()),
        }
    }
}

impl FamilyState for SpectralState {
    fn collapsed_noise(&self) -> Result<f64> {
        self.likelihood.collapsed_noise()
    }
}

impl Family for SpectralPoints {
    fn takes_composed_kernel(&self) -> bool {
        true
    }

    /// A sum's summands are independent feature models (docs/methods.md "Seeing the
    /// parts"): summand j's posterior reads the features of its own terms.
    fn predicts_summands(&self) -> bool {
        true
    }

    fn summand_cross(
        &self,
        model: &ModelFile,
        summand: usize,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Option<Result<(DMatrix<f64>, Vec<f64>)>> {
        model.composed.as_ref()?;
        Some(composed::summand_cross(model, summand, x, exec.par))
    }

    /// A kernel built from parts without a spectral form (docs/methods.md §4.5).
    fn refuses_kernel_expr(&self, expr: &crate::kernel::expression::KernelExpr) -> Option<String> {
        let name = if self.learn_points { "ssgp" } else { "psds" };
        form::refusal(expr).map(|why| format!("method '{name}' cannot use it: {why}"))
    }

    /// The spectral points of the model's composed kernel, in place of the plain
    /// kernel's `[spectral]` table.
    fn init_for_kernel(
        &self,
        model: &mut ModelFile,
        spec: &ValidRunSpec,
        rng: &mut ChaCha8Rng,
    ) -> Result<()> {
        if model.composed.is_none() {
            return Ok(());
        }
        let form = composed::form_of(model)?;
        let random = self.learn_points && spec.options.init == Some(SpectralInit::Random);
        let points = composed::init_points(&form, spec.m, random.then_some(rng))?;
        model.remove::<Spectral>();
        model.set(&points.table());
        Ok(())
    }

    type Extra = ();
    type State = SpectralState;

    fn state<'a>(
        &self,
        model: &'a ModelFile,
        _scratch: &Scratch,
    ) -> Result<Cow<'a, SpectralState>> {
        let points = match &model.composed {
            Some(c) => {
                let form = composed::form_of(model)?;
                let points = composed::points(model, &form)?;
                let eval = composed::evaluate(&form, &points)?;
                StatePoints::Composed(Box::new(ComposedState {
                    kernel: c.kernel().clone_box(),
                    points,
                    form,
                    eval,
                    broken: None,
                    method: model.method.clone(),
                }))
            }
            None => {
                let w = frequencies(model)?;
                let s = unscaled(w.clone(), &model.hyper.lengthscales);
                StatePoints::Plain {
                    signal_variance: model.hyper.signal_variance,
                    lengthscales: model.hyper.lengthscales.clone(),
                    rq_alpha: model.hyper.rq_alpha,
                    s,
                    w,
                }
            }
        };
        Ok(Cow::Owned(SpectralState {
            points,
            likelihood: StateLikelihood::of(model)?,
            jitter: model.jitter,
        }))
    }

    fn size(&self, state: &SpectralState) -> Result<usize> {
        Ok(match &state.points {
            StatePoints::Plain { w, .. } => 2 * w.nrows(),
            StatePoints::Composed(c) => 2 * c.points.len() + c.form.finite.len(),
        })
    }

    /// θ in [`Family::pack`]'s order into the state, as [`Family::unpack`] writes it
    /// into a model file: ssgp's points s from θ, psds's kept (the frequencies w = s/ℓ
    /// follow ℓ).
    fn unpack_state(&self, theta: &[f64], state: &mut SpectralState) {
        match &mut state.points {
            StatePoints::Plain {
                signal_variance,
                lengthscales,
                rq_alpha,
                s,
                w,
            } => {
                *signal_variance = theta[0].exp();
                for (l, t) in lengthscales.iter_mut().zip(&theta[1..]) {
                    *l = t.exp();
                }
                let mut at = 1 + lengthscales.len();
                if let Some(a) = rq_alpha.as_mut() {
                    *a = theta[at].exp();
                    at += 1;
                }
                at += state.likelihood.unpack(&theta[at..]);
                if self.learn_points {
                    let (r, d) = s.shape();
                    s.copy_from_slice(&theta[at..at + r * d]);
                }
                *w = scaled(s, lengthscales);
            }
            StatePoints::Composed(c) => {
                let k = c.kernel.params_len();
                c.kernel.set_log_params(&theta[..k]);
                let at = k + state.likelihood.unpack(&theta[k..]);
                if self.learn_points {
                    let z = &mut c.points.z;
                    let n = z.len();
                    z.copy_from_slice(&theta[at..at + n]);
                }
                c.derive();
            }
        }
    }

    /// The fixed shared blocks back at the start's values, exactly (the points' block
    /// is held by its transform, as [`ParamLayout::hold_fixed`] holds it).
    fn hold_fixed_state(
        &self,
        layout: &ParamLayout,
        start: &SpectralState,
        state: &mut SpectralState,
    ) {
        for b in layout.blocks().iter().filter(|b| b.fixed) {
            match (b.name, &mut state.points, &start.points) {
                (params::NOISE_VARIANCE, _, _) => state.likelihood.hold(&start.likelihood),
                (
                    params::SIGNAL_VARIANCE,
                    StatePoints::Plain {
                        signal_variance, ..
                    },
                    StatePoints::Plain {
                        signal_variance: from,
                        ..
                    },
                ) => *signal_variance = *from,
                (
                    params::LENGTHSCALES,
                    StatePoints::Plain { lengthscales, .. },
                    StatePoints::Plain {
                        lengthscales: from, ..
                    },
                ) => lengthscales.copy_from_slice(from),
                (
                    params::RQ_ALPHA,
                    StatePoints::Plain { rq_alpha, .. },
                    StatePoints::Plain { rq_alpha: from, .. },
                ) => *rq_alpha = *from,
                _ => {}
            }
        }
    }

    fn init_uses_seed(&self, options: &MethodOptions) -> bool {
        options.init == Some(SpectralInit::Random)
    }
    fn seed_help(&self) -> &'static str {
        "deterministic start: PSDS's Hammersley points do not depend on the seed (ssgp \
         --init random draws them from the seed)"
    }

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        _ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let (r, d) = (spec.m, data.x.ncols());
        let kind = hyper.kernel;
        let kernel = hyper.kernel();
        let s = match spec.options.init.unwrap_or(SpectralInit::Psds) {
            SpectralInit::Psds => kernel_points(&*kernel, r, d),
            SpectralInit::Random if kernel.spectral() == Some(SpectralDensity::Gaussian) => {
                Some(DMatrix::from_fn(r, d, |_, _| StandardNormal.sample(rng)))
            }
            SpectralInit::Random => draw_points(&*kernel, r, d, rng),
        }
        .ok_or_else(|| {
            Error::input(spectral::refusal(kind).unwrap_or_else(|| format!("kernel {kind}")))
        })?;
        let mut model = ModelFile::new(&spec.method, hyper);
        set_points(&mut model, &s);
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<usize> {
        if model.composed.is_some() {
            let form = composed::form_of(model)?;
            let points = composed::points(model, &form)?;
            return Ok(2 * points.len() + form.finite.len());
        }
        Ok(2 * frequencies(model)?.nrows())
    }

    fn refuses_kernel(&self, kind: KernelKind) -> Option<String> {
        spectral::refusal(kind)
    }

    fn tables(&self) -> &'static [&'static str] {
        &[Spectral::NAME, composed::SpectralTerms::NAME]
    }

    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        let mut w = vec![Witness::lengthscales(model)];
        w.extend(Witness::rows(model, Spectral::NAME, "frequencies"));
        w.extend(Witness::rows(
            model,
            composed::SpectralTerms::NAME,
            "points",
        ));
        w
    }

    fn tail_blocks(&self) -> &'static [TailBlock] {
        if self.learn_points {
            &[TailBlock {
                name: "spectral_points",
                transform: Transform::Own,
                len: None,
                holds: Holds::ByTransform,
            }]
        } else {
            &[]
        }
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        if model.composed.is_some() {
            let z = composed_points(model).map(|p| p.z);
            return pack_hyper_and(model, z.ok().filter(|_| self.learn_points));
        }
        if self.learn_points {
            pack_hyper_and(model, unscaled_points(model).ok())
        } else {
            let mut theta = Vec::new();
            pack_hyper(model, &mut theta);
            theta
        }
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        if model.composed.is_some() {
            if !self.learn_points {
                unpack_hyper(theta, model);
                return;
            }
            let z = unpack_hyper_and(theta, model);
            if let Ok(mut p) = composed_points(model)
                && p.z.shape() == z.shape()
            {
                p.z = z;
                model.set(&p.table());
            }
            return;
        }
        if self.learn_points {
            let s = unpack_hyper_and(theta, model);
            set_points(model, &s);
        } else {
            unpack_keep_points(theta, model);
        }
    }

    fn parts(
        &self,
        state: &SpectralState,
        x: &DMatrix<f64>,
        _for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, ())> {
        let jitter = fixed_jitter(state.jitter);
        let parts = match &state.points {
            StatePoints::Composed(c) => {
                if let Some(why) = &c.broken {
                    return Err(Error::input(why.clone()));
                }
                let kuf = composed::features(&c.form, &c.eval, x, exec.par);
                Parts {
                    kdiag: composed::kdiag(&c.eval, &kuf),
                    kuf,
                    kuu: KuuMatrix::Diagonal(composed::kuu_diagonal(&c.eval)),
                    jitter,
                }
            }
            StatePoints::Plain {
                signal_variance, w, ..
            } => Parts {
                kuf: features(w, x, exec.par),
                kuu: KuuMatrix::Diagonal(kuu_diagonal(*signal_variance, w.nrows())),
                // The approximate kernel's diagonal is exactly σ0² (cos² + sin² = 1), so
                // the degenerate and the "kernel" variance formulas agree.
                kdiag: vec![*signal_variance; x.nrows()],
                jitter,
            },
        };
        Ok((parts, ()))
    }

    /// [log σ0², log ℓ (D), log σ²] and, for ssgp, ∂/∂s (r×D column-major) at fixed
    /// s = w ⊙ ℓ.
    fn pull_back(
        &self,
        state: &SpectralState,
        x: &DMatrix<f64>,
        parts: &Parts,
        _extra: (),
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let (signal_variance, lengthscales, w) = match &state.points {
            StatePoints::Plain {
                signal_variance,
                lengthscales,
                w,
                ..
            } => (*signal_variance, lengthscales, w),
            StatePoints::Composed(c) => {
                let (mut grad, dz) = composed::pull_back(
                    &c.form,
                    &c.points,
                    &c.eval,
                    x,
                    &parts.kuf,
                    adj,
                    c.kernel.params_len(),
                    self.learn_points,
                    exec.par,
                );
                state.likelihood.push_grad(adj.d_noise, &mut grad);
                grad.extend(dz);
                return Ok(grad);
            }
        };
        let (r, dim) = w.shape();
        // ∂/∂(w_kᵀx_i) = −sin·D_cos + cos·D_sin; then ∂/∂W = G X.
        let mut g = DMatrix::zeros(r, x.nrows());
        let combine = |((gc, phi), dk): ((&mut [f64], &[f64]), &[f64])| {
            for k in 0..r {
                gc[k] = -phi[r + k] * dk[k] + phi[k] * dk[r + k];
            }
        };
        let (gs, phi, dk) = (g.as_mut_slice(), parts.kuf.as_slice(), adj.d_kuf.as_slice());
        if exec.par.is_parallel() {
            gs.par_chunks_mut(r.max(1))
                .zip(phi.par_chunks(2 * r))
                .zip(dk.par_chunks(2 * r))
                .for_each(combine);
        } else {
            gs.chunks_mut(r.max(1))
                .zip(phi.chunks(2 * r))
                .zip(dk.chunks(2 * r))
                .for_each(combine);
        }
        let d_w = linalg::mul(&g, false, x, false, exec.par); // r×D
        let mut grad = Vec::with_capacity(dim + 2 + if self.learn_points { r * dim } else { 0 });
        // ∂Kuu/∂log σ0² = −(r/σ0²) I (a fixed jitter does not scale)
        grad.push(-(r as f64 / signal_variance) * adj.d_kuu.trace());
        // w = s/ℓ: ∂w_kd/∂log ℓ_d = −w_kd
        grad.extend((0..dim).map(|d| -w.column(d).dot(&d_w.column(d))));
        state.likelihood.push_grad(adj.d_noise, &mut grad);
        if self.learn_points {
            for (d, l) in lengthscales.iter().enumerate() {
                grad.extend(d_w.column(d).iter().map(|v| v / l));
            }
        }
        Ok(grad)
    }

    fn degenerate(&self) -> bool {
        true
    }

    /// ssgp's `--stages`: hyperparameters, points, or all, each a range of the packed
    /// vector [log σ0², log ℓ, log σ², s].
    fn stages(&self, spec: &RunSpec, model: &ModelFile) -> Vec<Range<usize>> {
        let Some(stages) = &spec.options.stages else {
            return Vec::new();
        };
        let n_hyper = super::hyper::head_len(model);
        let n_all = self.pack(model).len();
        stages
            .iter()
            .map(|s| match s {
                Stage::Hyper => 0..n_hyper,
                Stage::Points => n_hyper..n_all,
                Stage::All => 0..n_all,
            })
            .collect()
    }
}
