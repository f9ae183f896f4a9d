//! Sparse spectrum GPs, METHODS.md §4 (Lázaro-Gredilla, Quiñonero-Candela &
//! Figueiras-Vidal): `psds` with r fixed spectral points from a Hammersley set, and
//! `ssgp` with the points learned as well.
//!
//! The model is the likelihood core's DTC with `Kuf = Φᵀ` (2r×n, cosines then sines)
//! and `Kuu = (r/σ0²) I`. The NLML, gradient and posterior use the closed form of
//! METHODS.md §4, which does half the core's O(n·r²) work (its linear algebra measured
//! 2–3.7× faster at n = 10000, r = 100: `cargo bench --bench online`); the tests prove
//! it equal to the core ([`Path::Core`] keeps that route available).
//!
//! Model files store the absolute frequencies `w_r = s_r / ℓ`; the optimiser sees the unscaled points `s_r` (ssgp), so that ℓ
//! keeps its meaning and the parameterisation matches the authors' `ssgpr.m`.

use super::{Method, Objective, fit_all, pack_hyper, unpack_hyper};
use crate::error::{Error, Result};
use crate::likelihood::{self, LatentPrior, LowRank, Mode, Posterior};
use crate::linalg::{self, Jitter};
use crate::model_file::{Hyper, ModelFile, Spectral, matrix_to_rows, required_matrix};
use crate::optim::{self, Control, IterInfo, Outcome};
use crate::train::{RunSpec, TrainData};
use nalgebra::{DMatrix, DVector};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use std::f64::consts::PI;
use std::ops::Range;

/// PSDS-GP: spectral points fixed at a Hammersley set; learns σ0², ℓ, σ².
pub struct Psds;
/// SSGP: spectral points learned together with σ0², ℓ, σ².
pub struct Ssgp;

const M_MEANING: &str = "spectral points r (2r basis functions)";

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
/// so that no coordinate is 0 or 1 (METHODS.md §4).
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

// ---------------------------------------------------------------- features

/// The absolute frequencies of a model (r×D).
pub fn frequencies(model: &ModelFile) -> Result<DMatrix<f64>> {
    let rows = model.spectral.as_ref().map(|s| &s.frequencies);
    required_matrix("[spectral] frequencies", rows, model.dim())
}

/// The unscaled points `s = w ⊙ ℓ` (r×D).
pub fn unscaled_points(model: &ModelFile) -> Result<DMatrix<f64>> {
    let mut s = frequencies(model)?;
    for (d, l) in model.hyper.lengthscales.iter().enumerate() {
        s.column_mut(d).scale_mut(*l);
    }
    Ok(s)
}

/// Store the frequencies `w = s / ℓ` for unscaled points s.
pub fn set_points(model: &mut ModelFile, s: &DMatrix<f64>) {
    let mut w = s.clone();
    for (d, l) in model.hyper.lengthscales.iter().enumerate() {
        w.column_mut(d).scale_mut(1.0 / l);
    }
    model.spectral = Some(Spectral {
        frequencies: matrix_to_rows(&w),
    });
}

/// Φᵀ (2r×n): column i holds `cos(w_1ᵀx_i), …, cos(w_rᵀx_i), sin(w_1ᵀx_i), …, sin(w_rᵀx_i)`.
pub fn features(w: &DMatrix<f64>, x: &DMatrix<f64>) -> DMatrix<f64> {
    let r = w.nrows();
    let proj = linalg::mul(w, false, x, true); // r×n, entry (k,i) = w_kᵀ x_i
    let mut phi = DMatrix::zeros(2 * r, x.nrows());
    let fill = |(col, p): (&mut [f64], &[f64])| {
        let (c, s) = col.split_at_mut(r);
        for k in 0..r {
            (s[k], c[k]) = p[k].sin_cos();
        }
    };
    let (out, inp) = (phi.as_mut_slice(), proj.as_slice());
    if r * x.nrows() >= PAR_MIN_ENTRIES {
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

/// `Kuu = (r/σ0²) I` (2r×2r).
fn kuu(model: &ModelFile, r: usize) -> DMatrix<f64> {
    DMatrix::from_diagonal_element(2 * r, 2 * r, r as f64 / model.hyper.signal_variance)
}

/// Kuu is diagonal and positive, so no jitter is needed; an explicit `jitter` key is
/// still honoured as a fixed amount.
fn jitter(model: &ModelFile) -> Jitter {
    Jitter::Fixed(model.jitter.unwrap_or(0.0))
}

struct Parts {
    w: DMatrix<f64>,
    phi: DMatrix<f64>,
    kuu: DMatrix<f64>,
}

impl Parts {
    fn new(model: &ModelFile, x: &DMatrix<f64>) -> Result<Parts> {
        let w = frequencies(model)?;
        Ok(Parts {
            phi: features(&w, x),
            kuu: kuu(model, w.nrows()),
            w,
        })
    }

    fn low_rank<'a>(&'a self, model: &ModelFile) -> LowRank<'a> {
        LowRank {
            kuf: &self.phi,
            kuu: &self.kuu,
            mode: Mode::Dtc,
            kdiag: &[],
            noise: model.hyper.noise_variance,
            jitter: jitter(model),
        }
    }
}

/// Which evaluation of the NLML and its adjoints an objective uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The closed form of METHODS.md §4 (what psds and ssgp fit with).
    ClosedForm,
    /// The shared likelihood core (DTC, Kuf = Φᵀ, Kuu = (r/σ0²)I).
    Core,
}

/// The NLML and its derivatives with respect to Φᵀ (2r×n), log σ0² and log σ²
/// (through Kuu and the noise).
struct Lik {
    nlml: f64,
    jitter: f64,
    d_phi: DMatrix<f64>,
    d_log_sf2: f64,
    d_log_s2: f64,
}

fn lik_core(p: &Parts, model: &ModelFile, y: &[f64]) -> Result<Lik> {
    let adj = likelihood::nlml_and_adjoints(&p.low_rank(model), y)?;
    let r = p.w.nrows() as f64;
    Ok(Lik {
        nlml: adj.nlml,
        jitter: adj.jitter,
        // ∂Kuu/∂log σ0² = −(r/σ0²) I
        d_log_sf2: -(r / model.hyper.signal_variance) * adj.d_kuu.trace(),
        d_log_s2: adj.d_noise * model.hyper.noise_variance,
        d_phi: adj.d_kuf,
    })
}

/// METHODS.md §4 with Kuu = κI, κ = r/σ0² (+ a fixed jitter), c = σ²κ,
/// A = ΦᵀΦ + cI = LLᵀ, α = A⁻¹Φᵀy:
/// NLML = [yᵀy − ‖L⁻¹Φᵀy‖²]/(2σ²) + Σ log diag L − r log c + n/2 log 2πσ²,
/// ∂/∂Φᵀ = A⁻¹Φᵀ − α(y − Φα)ᵀ/σ², ∂/∂c = αᵀα/(2σ²) + ½ tr A⁻¹ − r/c.
/// Half the O(n·r²) work of the core (1 product + 2 triangular solves against 2 + 4).
/// c = σ²κ and the lower Cholesky factor of A = ΦᵀΦ + cI.
fn factor_closed(phi: &DMatrix<f64>, model: &ModelFile) -> Result<(DMatrix<f64>, f64)> {
    let m = phi.nrows();
    let r = (m / 2) as f64;
    let s2 = model.hyper.noise_variance;
    let c = s2 * (r / model.hyper.signal_variance + model.jitter.unwrap_or(0.0));
    if !(c.is_finite() && c > 0.0) {
        return Err(Error::numerical(format!(
            "rσ²/σ0² = {c:e} is not a positive number"
        )));
    }
    let mut a = DMatrix::from_diagonal_element(m, m, c);
    linalg::gemm(&mut a, true, phi, false, phi, true, 1.0);
    let l = linalg::cholesky_with(&a, 0.0).ok_or_else(|| {
        Error::numerical(format!(
            "ΦᵀΦ + (rσ²/σ0²) I is not positive definite (noise variance {s2:e}; NaN in the parameters?)"
        ))
    })?;
    Ok((l, c))
}

fn lik_closed(phi: &DMatrix<f64>, model: &ModelFile, y: &[f64], grad: bool) -> Result<Lik> {
    let (m, n) = phi.shape();
    if y.len() != n {
        return Err(Error::input("spectral likelihood: inconsistent shapes"));
    }
    let r = (m / 2) as f64;
    let (sf2, s2) = (model.hyper.signal_variance, model.hyper.noise_variance);
    let jitter = model.jitter.unwrap_or(0.0);
    let (l, c) = factor_closed(phi, model)?;
    let yv = DVector::from_column_slice(y);
    let mut alpha = DMatrix::from_column_slice(m, 1, (phi * &yv).as_slice());
    linalg::solve_lower(&l, &mut alpha);
    let (quad, yy) = (alpha.norm_squared(), yv.norm_squared());
    let nlml = (yy - quad) / (2.0 * s2) + linalg::half_logdet(&l) - r * c.ln()
        + 0.5 * n as f64 * (2.0 * PI * s2).ln();
    if !nlml.is_finite() {
        return Err(Error::numerical("the NLML is not finite"));
    }
    if !grad {
        return Ok(Lik {
            nlml,
            jitter,
            d_phi: DMatrix::zeros(0, 0),
            d_log_sf2: 0.0,
            d_log_s2: 0.0,
        });
    }
    linalg::solve_lower_transpose(&l, &mut alpha);
    let resid = &yv - phi.tr_mul(&alpha);
    let mut d_phi = phi.clone();
    linalg::solve_lower(&l, &mut d_phi);
    linalg::solve_lower_transpose(&l, &mut d_phi);
    let resid = DMatrix::from_column_slice(1, n, resid.as_slice());
    linalg::gemm(&mut d_phi, true, &alpha, false, &resid, false, -1.0 / s2);
    // tr A⁻¹ = ‖L⁻¹‖²_F, O(r³)
    let mut l_inv = DMatrix::identity(m, m);
    linalg::solve_lower(&l, &mut l_inv);
    let d_c = alpha.norm_squared() / (2.0 * s2) + 0.5 * l_inv.norm_squared() - r / c;
    let d_s2 = -(yy - quad) / (2.0 * s2 * s2) + 0.5 * n as f64 / s2;
    Ok(Lik {
        nlml,
        jitter,
        d_phi,
        // ∂c/∂log σ0² = −σ² r/σ0², ∂c/∂log σ² = c
        d_log_sf2: -d_c * s2 * r / sf2,
        d_log_s2: s2 * d_s2 + c * d_c,
    })
}

/// NLML and gradient: [log σ0², log ℓ (D), log σ²] and, if `points`, ∂/∂s (r×D
/// column-major) at fixed s = w ⊙ ℓ. psds and ssgp use `Path::ClosedForm`; the
/// tests prove it equal to `Path::Core`.
pub fn objective_via(
    path: Path,
    model: &ModelFile,
    data: &TrainData,
    points: bool,
) -> Result<Objective> {
    let p = Parts::new(model, &data.x)?;
    let lik = match path {
        Path::ClosedForm => lik_closed(&p.phi, model, &data.y, true)?,
        Path::Core => lik_core(&p, model, &data.y)?,
    };
    let (r, dim) = p.w.shape();
    // ∂/∂(w_kᵀx_i) = −sin·D_cos + cos·D_sin; then ∂/∂W = G X.
    let mut g = DMatrix::zeros(r, data.x.nrows());
    g.as_mut_slice()
        .par_chunks_mut(r.max(1))
        .zip(p.phi.as_slice().par_chunks(2 * r))
        .zip(lik.d_phi.as_slice().par_chunks(2 * r))
        .for_each(|((gc, phi), dk)| {
            for k in 0..r {
                gc[k] = -phi[r + k] * dk[k] + phi[k] * dk[r + k];
            }
        });
    let d_w = linalg::mul(&g, false, &data.x, false); // r×D
    let mut grad = Vec::with_capacity(dim + 2 + if points { r * dim } else { 0 });
    grad.push(lik.d_log_sf2);
    // w = s/ℓ: ∂w_kd/∂log ℓ_d = −w_kd
    grad.extend((0..dim).map(|d| -p.w.column(d).dot(&d_w.column(d))));
    grad.push(lik.d_log_s2);
    if points {
        for (d, l) in model.hyper.lengthscales.iter().enumerate() {
            grad.extend(d_w.column(d).iter().map(|v| v / l));
        }
    }
    Ok(Objective {
        nlml: lik.nlml,
        grad,
        jitter: lik.jitter,
    })
}

fn evaluate(model: &ModelFile, data: &TrainData, points: bool) -> Result<Objective> {
    objective_via(Path::ClosedForm, model, data, points)
}

fn check_spectral(model: &ModelFile) -> Result<()> {
    let r = frequencies(model)?.nrows();
    if let Some(p) = &model.posterior {
        p.check(2 * r)?;
    }
    Ok(())
}

fn nlml(model: &ModelFile, data: &TrainData) -> Result<f64> {
    let p = Parts::new(model, &data.x)?;
    Ok(lik_closed(&p.phi, model, &data.y, false)?.nlml)
}

fn posterior(model: &ModelFile, data: &TrainData) -> Result<(Posterior, Option<DMatrix<f64>>)> {
    Ok((posterior_via(Path::ClosedForm, model, data)?, None))
}

/// The degenerate posterior (METHODS.md §1): weights A⁻¹Φᵀy and S = −σ²A⁻¹, i.e.
/// `var_f = σ² φ*ᵀA⁻¹φ*`. The closed form reuses the fit's factorisation, so a point
/// the optimiser accepted can always be predicted from; the tests prove it equal to
/// the core's `posterior(.., degenerate = true)`.
pub fn posterior_via(path: Path, model: &ModelFile, data: &TrainData) -> Result<Posterior> {
    let p = Parts::new(model, &data.x)?;
    if path == Path::Core {
        return likelihood::posterior(&p.low_rank(model), &data.y, true);
    }
    if data.y.len() != p.phi.ncols() {
        return Err(Error::input("spectral posterior: inconsistent shapes"));
    }
    let (l, _) = factor_closed(&p.phi, model)?;
    let m = p.phi.nrows();
    let b = &p.phi * DVector::from_column_slice(&data.y);
    let mut w = DMatrix::from_column_slice(m, 1, b.as_slice());
    linalg::solve_lower(&l, &mut w);
    linalg::solve_lower_transpose(&l, &mut w);
    // S = −σ² (L⁻¹)ᵀL⁻¹ as a Gram product, so −φᵀSφ stays ≥ 0 even when A is
    // nearly singular (σ² → 0 on noiseless data)
    let mut l_inv = DMatrix::identity(m, m);
    linalg::solve_lower(&l, &mut l_inv);
    let s = linalg::mul(&l_inv, true, &l_inv, false) * -model.hyper.noise_variance;
    Ok(Posterior {
        mean_weights: w.as_slice().to_vec(),
        var_matrix: (&s + s.transpose()) * 0.5,
        latent_prior: LatentPrior::None,
    })
}

/// Φ(X*)ᵀ and the prior variances. The approximate kernel's diagonal is exactly σ0²
/// (cos² + sin² = 1), so the degenerate and the "kernel" variance formulas agree.
fn cross(model: &ModelFile, x: &DMatrix<f64>) -> Result<(DMatrix<f64>, Vec<f64>)> {
    let w = frequencies(model)?;
    Ok((
        features(&w, x),
        vec![model.hyper.signal_variance; x.nrows()],
    ))
}

fn init_model(name: &str, hyper: Hyper, s: &DMatrix<f64>) -> ModelFile {
    let mut model = ModelFile::new(name, hyper);
    set_points(&mut model, s);
    model
}

/// PSDS's unpack: s stays where it is (it is read back from w ⊙ ℓ before ℓ changes).
fn unpack_keep_points(theta: &[f64], model: &mut ModelFile) {
    let s = unscaled_points(model).ok();
    unpack_hyper(theta, model);
    if let Some(s) = s {
        set_points(model, &s);
    }
}

impl Method for Psds {
    fn name(&self) -> &'static str {
        "psds"
    }
    fn summary(&self) -> &'static str {
        "PSDS-GP: r fixed Hammersley spectral points (Lázaro-Gredilla et al. 2007)"
    }
    fn m_meaning(&self) -> &'static str {
        M_MEANING
    }
    // A = ΦᵀΦ + (rσ²/σ0²)I is positive definite for any r, so r > n is allowed.
    fn m_bounded_by_n(&self) -> bool {
        false
    }

    fn init(&self, data: &TrainData, spec: &RunSpec, rng: &mut ChaCha8Rng) -> Result<ModelFile> {
        Ok(init_model(
            self.name(),
            super::initial_hyper(data, spec, rng)?,
            &psds_points(spec.m, data.x.ncols()),
        ))
    }

    fn check(&self, model: &ModelFile) -> Result<()> {
        check_spectral(model)
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = Vec::new();
        pack_hyper(model, &mut theta);
        theta
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        unpack_keep_points(theta, model);
    }

    fn objective(&self, model: &ModelFile, data: &TrainData) -> Result<Objective> {
        evaluate(model, data, false)
    }

    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &RunSpec,
        on_iter: &mut dyn FnMut(&IterInfo) -> Control,
    ) -> Result<(ModelFile, Outcome)> {
        let n = self.pack(&model).len();
        fit_free(self, model, data, 0..n, spec.iters, None, on_iter)
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData) -> Result<f64> {
        nlml(model, data)
    }

    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        posterior(model, data)
    }

    fn cross(
        &self,
        model: &ModelFile,
        _basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        cross(model, x)
    }
}

/// One stage of ssgp's schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// σ0², ℓ, σ² with the points fixed.
    Hyper,
    /// The points with σ0², ℓ, σ² fixed.
    Points,
    /// Everything jointly.
    All,
}

/// The stages named in a run's options (empty = one joint fit).
pub fn stages(spec: &RunSpec) -> Result<Vec<Stage>> {
    let Some(names) = &spec.options.stages else {
        return Ok(Vec::new());
    };
    names
        .iter()
        .map(|s| match s.trim().to_ascii_lowercase().as_str() {
            "hyper" => Ok(Stage::Hyper),
            "points" => Ok(Stage::Points),
            "all" => Ok(Stage::All),
            other => Err(Error::input(format!(
                "unknown ssgp stage '{other}'; stages are hyper, points and all (e.g. --stages hyper,points)"
            ))),
        })
        .collect()
}

/// Iteration budget of the next stage: what is left, split evenly over the stages
/// still to run (so a stage that converges early leaves its share to the next).
fn stage_budget(left: usize, stages_left: usize) -> usize {
    left.div_ceil(stages_left.max(1))
}

/// Minimise over the packed entries `free` only, the others held at their values.
/// Iteration numbers and times reported to `on_iter` continue from `offset`; a later
/// stage (`offset` given) does not report its starting point again.
fn fit_free(
    method: &dyn Method,
    model: ModelFile,
    data: &TrainData,
    free: Range<usize>,
    iters: usize,
    offset: Option<(usize, f64)>,
    on_iter: &mut dyn FnMut(&IterInfo) -> Control,
) -> Result<(ModelFile, Outcome)> {
    let full = method.pack(&model);
    let mut scratch = model.clone();
    let objective = |sub: &[f64]| {
        let mut theta = full.clone();
        theta[free.clone()].copy_from_slice(sub);
        // unpack from the starting model each time: psds reads its points back from
        // w ⊙ ℓ, and a reused scratch would let them drift by rounding, so the final
        // model would not be bitwise the point the line search accepted
        scratch.clone_from(&model);
        method.unpack(&theta, &mut scratch);
        method
            .objective(&scratch, data)
            .map(|o| (o.nlml, o.grad[free.clone()].to_vec()))
    };
    let options = optim::Options {
        max_iters: iters,
        ..Default::default()
    };
    let mut relay = |it: &IterInfo| {
        let (done, secs) = offset.unwrap_or((0, 0.0));
        if offset.is_some() && it.iteration == 0 {
            return Control::Continue;
        }
        on_iter(&IterInfo {
            iteration: it.iteration + done,
            elapsed: it.elapsed + secs,
            ..it.clone()
        })
    };
    let outcome = optim::minimize(objective, &full[free.clone()], &options, &mut relay)?;
    let mut theta = full;
    theta[free].copy_from_slice(&outcome.x);
    let mut fitted = model;
    method.unpack(&theta, &mut fitted);
    Ok((
        fitted,
        Outcome {
            x: theta,
            ..outcome
        },
    ))
}

impl Method for Ssgp {
    fn name(&self) -> &'static str {
        "ssgp"
    }
    fn summary(&self) -> &'static str {
        "SSGP: r learned spectral points (Lázaro-Gredilla et al. 2010); --init psds|random, \
         --stages hyper,points (one shared iteration budget)"
    }
    fn m_meaning(&self) -> &'static str {
        M_MEANING
    }
    fn options(&self) -> &'static [&'static str] {
        &["init", "stages"]
    }
    fn m_bounded_by_n(&self) -> bool {
        false
    }

    fn init(&self, data: &TrainData, spec: &RunSpec, rng: &mut ChaCha8Rng) -> Result<ModelFile> {
        stages(spec)?; // reject a bad schedule before any work
        let (r, d) = (spec.m, data.x.ncols());
        let s = match spec.options.init.as_deref().map(str::trim) {
            None | Some("psds") => psds_points(r, d),
            Some("random") => DMatrix::from_fn(r, d, |_, _| StandardNormal.sample(rng)),
            Some(other) => {
                return Err(Error::input(format!(
                    "unknown ssgp init '{other}'; choose psds (Hammersley points) or random (N(0, I) draws)"
                )));
            }
        };
        Ok(init_model(
            self.name(),
            super::initial_hyper(data, spec, rng)?,
            &s,
        ))
    }

    fn check(&self, model: &ModelFile) -> Result<()> {
        check_spectral(model)
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        super::pack_hyper_and(model, unscaled_points(model).ok())
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        let s = super::unpack_hyper_and(theta, model);
        set_points(model, &s);
    }

    fn objective(&self, model: &ModelFile, data: &TrainData) -> Result<Objective> {
        evaluate(model, data, true)
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData) -> Result<f64> {
        nlml(model, data)
    }

    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        posterior(model, data)
    }

    fn cross(
        &self,
        model: &ModelFile,
        _basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        cross(model, x)
    }

    /// The joint fit, or the staged schedule of `--stages` within one iteration budget
    /// (see [`stage_budget`]); the trace and iteration count run on across stages.
    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &RunSpec,
        on_iter: &mut dyn FnMut(&IterInfo) -> Control,
    ) -> Result<(ModelFile, Outcome)> {
        let schedule = stages(spec)?;
        if schedule.is_empty() {
            return fit_all(self, model, data, spec.iters, on_iter);
        }
        let n_hyper = model.dim() + 2;
        let n_all = self.pack(&model).len();
        let mut model = model;
        let mut total: Option<Outcome> = None;
        let start = std::time::Instant::now();
        for (k, stage) in schedule.iter().enumerate() {
            let free = match stage {
                Stage::Hyper => 0..n_hyper,
                Stage::Points => n_hyper..n_all,
                Stage::All => 0..n_all,
            };
            let elapsed = start.elapsed().as_secs_f64();
            let offset = total.as_ref().map(|t| (t.iterations, elapsed));
            let used = total.as_ref().map_or(0, |t| t.iterations);
            let budget = stage_budget(spec.iters - used.min(spec.iters), schedule.len() - k);
            let (fitted, out) = fit_free(self, model, data, free, budget, offset, on_iter)?;
            model = fitted;
            total = Some(match total {
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
            });
            if total
                .as_ref()
                .is_some_and(|t| t.stop == optim::Stop::Cancelled)
            {
                break;
            }
        }
        let total = total.ok_or_else(|| Error::input("--stages is empty"))?;
        Ok((model, total))
    }
}
