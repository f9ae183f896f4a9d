//! psds and ssgp with a kernel built from parts (issue 42; docs/methods.md §4.5): the
//! spectral points of the kernel's [`Form`], split among its terms, stored in
//! `[spectral_terms]`, and the features, their diagonal Kuu and the pull-back of the
//! core's adjoints into the kernel's parameters and (ssgp) the points.
//!
//! Features: the cosines then the sines of the R spectral points (Kuu entries 1/a_i for
//! both), then the F explicit features (Kuu entries 1/b_j), so that
//! `q(x, z) = Σ_i a_i cos(w_iᵀ(x − z)) + Σ_j b_j φ_j(x) φ_j(z)`.

use super::form::{self, Form, Radial, Term};
use super::{hammersley, normal_quantile};
use crate::collapsed::Adjoints;
use crate::error::{Error, Location, Result};
use crate::exec::Par;
use crate::kernel::spectral::SpectralDensity;
use crate::linalg;
use crate::model_file::{ModelFile, ModelTable};
use nalgebra::DMatrix;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// `[spectral_terms]`: the spectral points of a composed kernel, one entry per point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpectralTerms {
    /// The term (of the kernel's spectral terms, in reading order) the point belongs to.
    pub term: Vec<usize>,
    /// The normal vector z (D values; ssgp learns it): w_d = z_d ρ / ℓ_d + 2π k_d / p_d.
    pub points: Vec<Vec<f64>>,
    /// The uniform coordinate h of a Student-t (matern) or Gamma (rq) radial factor ρ
    /// on each input its continuous part reads (0 elsewhere).
    pub radial: Vec<Vec<f64>>,
    /// The harmonic k of a periodic part on each input it reads, or a spectral
    /// mixture's sign ±1 (0 elsewhere).
    pub harmonics: Vec<Vec<i64>>,
    /// The point's fixed weight μ in its amplitude μ V Π c_|k|(z).
    pub weights: Vec<f64>,
}

impl ModelTable for SpectralTerms {
    const NAME: &'static str = "spectral_terms";
}

/// The points of a composed model as matrices (R×D each).
#[derive(Clone, Debug)]
pub struct Points {
    pub term: Vec<usize>,
    pub z: DMatrix<f64>,
    pub h: DMatrix<f64>,
    pub k: DMatrix<f64>,
    pub mu: Vec<f64>,
}

impl Points {
    pub fn len(&self) -> usize {
        self.term.len()
    }

    pub fn is_empty(&self) -> bool {
        self.term.is_empty()
    }

    pub fn table(&self) -> SpectralTerms {
        let rows = |m: &DMatrix<f64>| crate::model_file::matrix_to_rows(m);
        SpectralTerms {
            term: self.term.clone(),
            points: rows(&self.z),
            radial: rows(&self.h),
            harmonics: (0..self.len())
                .map(|i| self.k.row(i).iter().map(|v| *v as i64).collect())
                .collect(),
            weights: self.mu.clone(),
        }
    }
}

/// The spectral form of a model's composed kernel.
pub fn form_of(model: &ModelFile) -> Result<Form> {
    let c = model
        .composed
        .as_ref()
        .ok_or_else(|| Error::input("internal: a composed model without [kernel]"))?;
    form::of_kernel(c.kernel()).map_err(|why| {
        Error::at(
            Location::key("kernel"),
            format!("[kernel]: method '{}' cannot use it: {why}", model.method),
        )
    })
}

/// The points of a composed model, checked against its form.
pub fn points(model: &ModelFile, form: &Form) -> Result<Points> {
    let t = model.require::<SpectralTerms>()?;
    let at = Location::key(SpectralTerms::NAME);
    let r = t.term.len();
    let d = form.dim;
    let lens = [
        t.points.len(),
        t.radial.len(),
        t.harmonics.len(),
        t.weights.len(),
    ];
    if lens.iter().any(|l| *l != r) {
        return Err(Error::at(
            at,
            format!(
                "[{}] term, points, radial, harmonics and weights need one entry per point; \
                 they have {r}, {}, {}, {}, {}",
                SpectralTerms::NAME,
                lens[0],
                lens[1],
                lens[2],
                lens[3]
            ),
        ));
    }
    if let Some(i) = t.term.iter().position(|x| *x >= form.terms.len()) {
        return Err(Error::at(
            at.clone().then("term").index(i),
            format!(
                "[{}] term: point {} names term {}, but the kernel has {} spectral terms",
                SpectralTerms::NAME,
                i + 1,
                t.term[i],
                form.terms.len()
            ),
        ));
    }
    if let Some(i) = t.weights.iter().position(|w| !(w.is_finite() && *w > 0.0)) {
        return Err(Error::at(
            at.clone().then("weights").index(i),
            format!(
                "[{}] weights must be positive and finite",
                SpectralTerms::NAME
            ),
        ));
    }
    let matrix = |key: &str, rows: &[Vec<f64>]| {
        if r == 0 {
            Ok(DMatrix::zeros(0, d))
        } else {
            crate::model_file::rows_to_matrix(&at.clone().then(key), rows, d)
        }
    };
    let harmonics: Vec<Vec<f64>> = t
        .harmonics
        .iter()
        .map(|row| row.iter().map(|k| *k as f64).collect())
        .collect();
    Ok(Points {
        term: t.term,
        z: matrix("points", &t.points)?,
        h: matrix("radial", &t.radial)?,
        k: matrix("harmonics", &harmonics)?,
        mu: t.weights,
    })
}

/// How m spectral points are split among the terms: equally, the remainder to the
/// first terms, at least one each (docs/methods.md §4.5).
pub fn split(m: usize, terms: usize) -> Result<Vec<usize>> {
    if terms == 0 {
        return Ok(Vec::new());
    }
    if m < terms {
        return Err(Error::input(format!(
            "--m {m} is fewer than the kernel's {terms} spectral terms: each needs at least \
             one spectral point; give --m {terms} or more"
        )));
    }
    Ok((0..terms)
        .map(|t| m / terms + usize::from(t < m % terms))
        .collect())
}

/// Largest harmonic the proposal of a periodic part with weight parameter z reaches.
fn harmonic_reach(z: f64) -> usize {
    (z + 10.0 * z.sqrt()) as usize + 20
}

/// The first m points of the form's terms (split by [`split`]): quasi-random (a
/// Hammersley set per term, as psds) or, with `rng`, random (ssgp --init random).
pub fn init_points(form: &Form, m: usize, mut rng: Option<&mut ChaCha8Rng>) -> Result<Points> {
    let counts = split(m, form.terms.len())?;
    let d = form.dim;
    let total: usize = counts.iter().sum();
    let mut p = Points {
        term: Vec::with_capacity(total),
        z: DMatrix::zeros(total, d),
        h: DMatrix::zeros(total, d),
        k: DMatrix::zeros(total, d),
        mu: Vec::with_capacity(total),
    };
    let mut row = 0;
    for (t, (term, r)) in form.terms.iter().zip(counts).enumerate() {
        if term.enumerates_harmonics() {
            // harmonics 0, 1, …, r − 1 of the one periodic input, each once: weight 1
            // for k = 0 and 2 for ±k folded (the series truncated after r terms)
            let hd = term.harmonics[0].dim;
            for k in 0..r {
                p.term.push(t);
                p.k[(row, hd)] = k as f64;
                p.mu.push(if k == 0 { 1.0 } else { 2.0 });
                row += 1;
            }
            continue;
        }
        let coords = coordinates(term);
        let u = match rng.as_deref_mut() {
            Some(rng) => DMatrix::from_fn(r, coords, |_, _| rng.random_range(f64::EPSILON..1.0)),
            None => hammersley(r, coords),
        };
        // each harmonic's proposal: uniform over −K..K (K from the start's weights)
        let spans: Vec<i64> = term
            .harmonics
            .iter()
            .map(|h| harmonic_span(form::harmonic_z(h.ls.v)))
            .collect();
        for i in 0..r {
            let mut c = 0;
            let mut next = || {
                c += 1;
                u[(i, c - 1)]
            };
            let mut mu = 1.0 / r as f64;
            for cont in &term.continuous {
                for dd in &cont.dims {
                    p.z[(row, *dd)] = normal_quantile(next());
                }
                if cont.radial != Radial::Gaussian {
                    let h = next();
                    for dd in &cont.dims {
                        p.h[(row, *dd)] = h;
                    }
                }
            }
            for (h, span) in term.harmonics.iter().zip(&spans) {
                let width = 2 * span + 1;
                let k = ((next() * width as f64) as i64).min(width - 1) - span;
                p.k[(row, h.dim)] = k as f64;
                mu *= width as f64;
            }
            if let Some(comp) = &term.component {
                for dd in &comp.dims {
                    p.z[(row, *dd)] = normal_quantile(next());
                }
                for dd in &comp.dims {
                    p.k[(row, *dd)] = if next() < 0.5 { -1.0 } else { 1.0 };
                }
            }
            p.term.push(t);
            p.mu.push(mu);
            row += 1;
        }
    }
    Ok(p)
}

/// The number of uniform coordinates a point of `term` reads.
fn coordinates(term: &Term) -> usize {
    let cont: usize = term
        .continuous
        .iter()
        .map(|c| c.dims.len() + usize::from(c.radial != Radial::Gaussian))
        .sum();
    cont + term.harmonics.len() + term.component.as_ref().map_or(0, |c| 2 * c.dims.len())
}

/// The harmonics −K..K a periodic part's points are drawn from, uniformly: K the
/// largest k whose weight at the start is at least 1e-6 of c_0's, and at least 2, so
/// that a smooth start (large ℓ: c_1 ≪ c_0) still gives the fundamental and its first
/// overtone points of their own.
fn harmonic_span(z: f64) -> i64 {
    let c = form::bessel_weights(z, harmonic_reach(z));
    let k = c.iter().rposition(|ck| *ck >= 1e-6 * c[0]).unwrap_or(0);
    k.max(2) as i64
}

// ---------------------------------------------------------------- radial factors

/// A continuous part's radial factor ρ at uniform h, and d log ρ / d log(shape) (rq's α;
/// 0 for the others).
fn radial(r: Radial, h: f64) -> Result<(f64, f64)> {
    match r {
        Radial::Gaussian => Ok((1.0, 0.0)),
        Radial::StudentT { nu } => SpectralDensity::StudentT { nu }
            .radial_factor(h)
            .map(|f| (f, 0.0))
            .ok_or_else(|| Error::numerical(format!("matern radial factor at {h}"))),
        Radial::Gamma { alpha } => {
            let a = alpha.v;
            let (q, dq) = gamma_quantile(a, h);
            // λ = Q/α; ρ = √λ
            let lambda = q / a;
            let dlog_lambda = a * dq / q - 1.0;
            Ok((lambda.sqrt(), 0.5 * dlog_lambda))
        }
    }
}

/// The quantile Q of Gamma(a, 1) at h, and ∂Q/∂a at fixed h (implicitly: −∂P/∂a over
/// the density, ∂P(a, x)/∂a from the series of P).
pub fn gamma_quantile(a: f64, h: f64) -> (f64, f64) {
    use statrs::function::gamma::{gamma_lr, ln_gamma};
    let log_pdf = |x: f64| (a - 1.0) * x.ln() - x - ln_gamma(a);
    // bracket, then Newton safeguarded by bisection
    let (mut lo, mut hi) = (0.0_f64, a.max(1.0));
    while gamma_lr(a, hi) < h {
        lo = hi;
        hi *= 2.0;
    }
    let mut x = 0.5 * (lo + hi);
    for _ in 0..200 {
        let f = gamma_lr(a, x) - h;
        if f > 0.0 {
            hi = x;
        } else {
            lo = x;
        }
        let step = f / log_pdf(x).exp();
        let mut next = x - step;
        if !(next > lo && next < hi && next.is_finite()) {
            next = 0.5 * (lo + hi);
        }
        if (next - x).abs() <= 1e-15 * x.max(1e-300) {
            x = next;
            break;
        }
        x = next;
    }
    (x, -d_lower_gamma_da(a, x) / log_pdf(x).exp())
}

/// ∂P(a, x)/∂a, P(a, x) = Σ_n e^{−x} x^{a+n}/Γ(a+n+1).
fn d_lower_gamma_da(a: f64, x: f64) -> f64 {
    use statrs::function::gamma::{digamma, ln_gamma};
    let lx = x.ln();
    let (mut sum, mut p) = (0.0, 0.0);
    for n in 0..100_000 {
        let an = a + n as f64;
        let t = (an * lx - x - ln_gamma(an + 1.0)).exp();
        p += t;
        sum += t * (lx - digamma(an + 1.0));
        if an > x && t < 1e-18 * p {
            break;
        }
    }
    sum
}

// ---------------------------------------------------------------- evaluation

/// What one evaluation computes of the points at the current parameters.
#[derive(Clone, Debug)]
pub struct Eval {
    /// Frequencies (R×D).
    pub w: DMatrix<f64>,
    /// The points' amplitudes a_i.
    pub amp: Vec<f64>,
    /// Whether a_i was held at its floor (its gradient is then 0).
    floored: Vec<bool>,
    /// ρ / ℓ_d on each input of a continuous part (R×D), 2πσ_d for a mixture's.
    scale: DMatrix<f64>,
    /// d log ρ / d log α of the rq part on each input (R×D), 0 elsewhere.
    dlog_rho: DMatrix<f64>,
    /// For each term, each harmonic: d log c_k/dz at k = 0..=reach.
    slopes: Vec<Vec<Vec<f64>>>,
    /// The explicit features' amplitudes b_j.
    pub fin_amp: Vec<f64>,
}

/// The smallest amplitude a point keeps (a harmonic far beyond the spectrum's reach has
/// e^{−z} I_k(z) below any f64): its Kuu entry 1/a stays finite.
const AMP_FLOOR: f64 = 1e-280;

pub fn evaluate(form: &Form, p: &Points) -> Result<Eval> {
    let (r, d) = (p.len(), form.dim);
    let mut w = DMatrix::zeros(r, d);
    let mut scale = DMatrix::zeros(r, d);
    let mut dlog_rho = DMatrix::zeros(r, d);
    let mut amp = vec![0.0; r];
    let mut floored = vec![false; r];
    // the Bessel weights of each term's harmonics up to the largest |k| its points hold
    let mut weights: Vec<Vec<Vec<f64>>> = Vec::with_capacity(form.terms.len());
    let mut slopes = Vec::with_capacity(form.terms.len());
    for (t, term) in form.terms.iter().enumerate() {
        let (mut wt, mut st) = (Vec::new(), Vec::new());
        for h in &term.harmonics {
            let reach = (0..r)
                .filter(|i| p.term[*i] == t)
                .map(|i| p.k[(i, h.dim)].abs() as usize)
                .max()
                .unwrap_or(0);
            let c = form::bessel_weights(form::harmonic_z(h.ls.v), reach + 1);
            st.push(form::bessel_log_slopes(&c));
            wt.push(c);
        }
        weights.push(wt);
        slopes.push(st);
    }
    let variances: Vec<f64> = form.terms.iter().map(|t| t.variance()).collect();
    for i in 0..r {
        let t = p.term[i];
        let term = &form.terms[t];
        for c in &term.continuous {
            for (j, dd) in c.dims.iter().enumerate() {
                let (rho, dl) = radial(c.radial, p.h[(i, *dd)])?;
                scale[(i, *dd)] = rho / c.ls[j].v;
                dlog_rho[(i, *dd)] = dl;
                w[(i, *dd)] += p.z[(i, *dd)] * scale[(i, *dd)];
            }
        }
        let mut a = p.mu[i] * variances[t];
        for (h, c) in term.harmonics.iter().zip(&weights[t]) {
            let k = p.k[(i, h.dim)];
            w[(i, h.dim)] += 2.0 * PI * k / h.period.v;
            a *= c[k.abs() as usize];
        }
        if let Some(comp) = &term.component {
            for (j, dd) in comp.dims.iter().enumerate() {
                scale[(i, *dd)] = 2.0 * PI * comp.scales[j].v;
                w[(i, *dd)] =
                    2.0 * PI * p.k[(i, *dd)] * comp.means[j].v + p.z[(i, *dd)] * scale[(i, *dd)];
            }
        }
        if a.is_nan() || a <= AMP_FLOOR {
            a = AMP_FLOOR;
            floored[i] = true;
        }
        amp[i] = a;
    }
    Ok(Eval {
        w,
        amp,
        floored,
        scale,
        dlog_rho,
        slopes,
        fin_amp: form.finite.iter().map(|f| f.amplitude()).collect(),
    })
}

/// Φᵀ ((2R + F)×n): each column the cosines, the sines and the explicit features of one
/// input.
pub fn features(form: &Form, e: &Eval, x: &DMatrix<f64>, par: Par) -> DMatrix<f64> {
    let (r, f) = (e.amp.len(), form.finite.len());
    let rows = 2 * r + f;
    let mut phi = DMatrix::zeros(rows, x.nrows());
    let proj = if r > 0 {
        linalg::mul(&e.w, false, x, true, par)
    } else {
        DMatrix::zeros(0, x.nrows())
    };
    for (i, col) in phi.as_mut_slice().chunks_mut(rows.max(1)).enumerate() {
        for k in 0..r {
            (col[r + k], col[k]) = proj[(k, i)].sin_cos();
        }
        for (j, fin) in form.finite.iter().enumerate() {
            col[2 * r + j] = fin
                .exponents
                .iter()
                .enumerate()
                .map(|(dd, ex)| x[(i, dd)].powi(*ex as i32))
                .product();
        }
    }
    phi
}

/// Kuu's diagonal: 1/a for the cosines and the sines, 1/b for the explicit features.
pub fn kuu_diagonal(e: &Eval) -> Vec<f64> {
    let inv = |a: &f64| 1.0 / a;
    e.amp
        .iter()
        .map(inv)
        .chain(e.amp.iter().map(inv))
        .chain(e.fin_amp.iter().map(inv))
        .collect()
}

/// Summand `j`'s Cov(u, f_j(x)) and prior variances at `x` (model units): the
/// features' rows of its terms' points and its explicit features, the other rows zero
/// (Kuu is diagonal, so the summands' weights are independent and f_j(x) = Σ_{i∈j}
/// a_i φ_i(x) u_i), and q_j(x, x) = Σ_{i∈j} a_i + Σ_{f∈j} b_f φ_f(x)².
pub fn summand_cross(
    model: &ModelFile,
    j: usize,
    x: &DMatrix<f64>,
    par: Par,
) -> Result<(DMatrix<f64>, Vec<f64>)> {
    let form = form_of(model)?;
    let p = points(model, &form)?;
    let e = evaluate(&form, &p)?;
    let mut phi = features(&form, &e, x, par);
    let r = e.amp.len();
    let own: Vec<bool> = (0..r)
        .map(|i| form.terms[p.term[i]].summand == j)
        .chain((0..r).map(|i| form.terms[p.term[i]].summand == j))
        .chain(form.finite.iter().map(|f| f.summand == j))
        .collect();
    let spectral: f64 = (0..r).filter(|i| own[*i]).map(|i| e.amp[i]).sum();
    let mut prior = Vec::with_capacity(x.nrows());
    for mut col in phi.column_iter_mut() {
        for (k, keep) in own.iter().enumerate() {
            if !keep {
                col[k] = 0.0;
            }
        }
        let fin: f64 = e
            .fin_amp
            .iter()
            .enumerate()
            .map(|(f, b)| b * col[2 * r + f] * col[2 * r + f])
            .sum();
        prior.push(spectral + fin);
    }
    Ok((phi, prior))
}

/// The approximate kernel's diagonal q(x, x) = Σ a_i + Σ b_j φ_j(x)².
pub fn kdiag(e: &Eval, phi: &DMatrix<f64>) -> Vec<f64> {
    let r = e.amp.len();
    let spectral: f64 = e.amp.iter().sum();
    phi.column_iter()
        .map(|col| {
            spectral
                + e.fin_amp
                    .iter()
                    .enumerate()
                    .map(|(j, b)| b * col[2 * r + j] * col[2 * r + j])
                    .sum::<f64>()
        })
        .collect()
}

/// The gradient in the kernel's θ (its `params_len` values) and, with `points`, in the
/// points z (R×D column-major), from the core's adjoints of Kuf and Kuu.
#[allow(clippy::too_many_arguments)] // the evaluation's pieces, as the family holds them
pub fn pull_back(
    form: &Form,
    p: &Points,
    e: &Eval,
    x: &DMatrix<f64>,
    kuf: &DMatrix<f64>,
    adj: &Adjoints,
    params_len: usize,
    points: bool,
    par: Par,
) -> (Vec<f64>, Vec<f64>) {
    let (r, d) = (p.len(), form.dim);
    let rows = kuf.nrows();
    // ∂/∂(w_kᵀx_i) = −sin·D_cos + cos·D_sin; then ∂/∂W = G X
    let mut g = DMatrix::zeros(r, x.nrows());
    for i in 0..x.nrows() {
        let (phi, dk) = (kuf.column(i), adj.d_kuf.column(i));
        for k in 0..r {
            g[(k, i)] = -phi[r + k] * dk[k] + phi[k] * dk[r + k];
        }
    }
    let d_w = if r > 0 {
        linalg::mul(&g, false, x, false, par)
    } else {
        DMatrix::zeros(0, d)
    };
    debug_assert_eq!(rows, 2 * r + form.finite.len());
    // d/d log a_i through Kuu = 1/a: −(adj_cos/a + adj_sin/a)
    let kuu = kuu_diagonal(e);
    let dk = |j: usize| adj.d_kuu[(j, j)] * kuu[j];
    let mut out = vec![0.0; params_len];
    let mut add = |v: &form::Val, g: f64| {
        if let Some(at) = v.at {
            out[at] += g;
        }
    };
    for i in 0..r {
        let term = &form.terms[p.term[i]];
        let dloga = if e.floored[i] {
            0.0
        } else {
            -(dk(i) + dk(r + i))
        };
        for v in &term.variances {
            add(v, dloga);
        }
        for (hx, h) in term.harmonics.iter().enumerate() {
            let k = p.k[(i, h.dim)];
            let z = form::harmonic_z(h.ls.v);
            let slope = e.slopes[p.term[i]][hx][k.abs() as usize];
            add(&h.ls, dloga * slope * (-2.0 * z));
            add(&h.period, d_w[(i, h.dim)] * (-2.0 * PI * k / h.period.v));
        }
        for c in &term.continuous {
            for (j, dd) in c.dims.iter().enumerate() {
                let wc = p.z[(i, *dd)] * e.scale[(i, *dd)];
                add(&c.ls[j], -d_w[(i, *dd)] * wc);
                if let Radial::Gamma { alpha } = &c.radial {
                    add(alpha, d_w[(i, *dd)] * wc * e.dlog_rho[(i, *dd)]);
                }
            }
        }
        if let Some(comp) = &term.component {
            for (j, dd) in comp.dims.iter().enumerate() {
                let dw = d_w[(i, *dd)];
                add(
                    &comp.means[j],
                    dw * 2.0 * PI * p.k[(i, *dd)] * comp.means[j].v,
                );
                add(&comp.scales[j], dw * p.z[(i, *dd)] * e.scale[(i, *dd)]);
            }
        }
    }
    for (j, fin) in form.finite.iter().enumerate() {
        let dlogb = -dk(2 * r + j);
        for (v, power) in &fin.powers {
            add(v, dlogb * power);
        }
    }
    let mut dz = Vec::new();
    if points {
        dz = vec![0.0; r * d];
        for dd in 0..d {
            for i in 0..r {
                dz[dd * r + i] = d_w[(i, dd)] * e.scale[(i, dd)];
            }
        }
    }
    (out, dz)
}
