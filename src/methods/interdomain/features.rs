//! The inter-domain features of FIFGP, TFIFGP and SMGP (docs/methods.md §3): their
//! `[features]` table, their covariances `Kuf = k(z, x)` and `Kuu = k(z, z')`, and the
//! contractions of the core's adjoints with their derivatives.

use super::se_sum::{self, Se, SeGrad};
use crate::error::Location;
use crate::error::{Error, Result};
use crate::exec::Par;
use crate::model_file::{ModelFile, ModelTable, rows_to_matrix};
use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// `[features]`: the inter-domain features (FIFGP, TFIFGP: window widths, frequencies,
/// phases, TFIFGP's centres; SMGP: centres and widths — or, with a kernel built from
/// parts, the windows' own standard deviations), one row per feature.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Features {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_widths: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequencies: Option<Vec<Vec<f64>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centres: Option<Vec<Vec<f64>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widths: Option<Vec<Vec<f64>>>,
    /// SMGP with a kernel built from parts: s_jd, feature j's Gaussian window
    /// N(μ_j, diag s_j²) itself (with the plain SE kernel the file keeps the widths
    /// c² = ℓ² + s², Walder's form; a sum of SE kernels has no single ℓ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_sds: Option<Vec<Vec<f64>>>,
}

impl ModelTable for Features {
    const NAME: &'static str = "features";
}

/// Where `[features] key` is.
fn at(key: &str) -> Location {
    Location::key(Features::NAME).then(key)
}

/// Which inducing features.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Frequency features under one Gaussian window at the origin.
    Fif,
    /// Frequency features, each under its own window centre.
    Tfif,
    /// Gaussian features with their own centre and widths (multiscale).
    Sm,
}

/// sin and cos together, ~3× faster than `f64::sin_cos` (two libm calls), which
/// dominated the feature cost: Cody–Waite reduction by π/2 with a three-part constant
/// (exact for |x| < 2^20·π/2) and fdlibm's kernels on [−π/4, π/4]; error ≲ 2 ulp.
#[inline]
#[allow(clippy::excessive_precision)] // fdlibm's constants, as published
pub fn sin_cos(x: f64) -> (f64, f64) {
    const PIO2_1: f64 = 1.570_796_326_734_125_614_17e0;
    const PIO2_2: f64 = 6.077_100_506_303_965_976_6e-11;
    const PIO2_3: f64 = 2.022_266_248_711_166_455_8e-21;
    const S: [f64; 6] = [
        -1.666_666_666_666_663_243_48e-1,
        8.333_333_333_322_489_461_24e-3,
        -1.984_126_982_985_794_931_34e-4,
        2.755_731_370_707_006_767_89e-6,
        -2.505_076_025_340_686_341_95e-8,
        1.589_690_995_211_550_102_21e-10,
    ];
    const C: [f64; 6] = [
        4.166_666_666_666_660_190_37e-2,
        -1.388_888_888_887_410_957_49e-3,
        2.480_158_728_947_672_941_78e-5,
        -2.755_731_435_139_066_330_35e-7,
        2.087_572_321_298_174_827_9e-9,
        -1.135_964_755_778_819_482_65e-11,
    ];
    if x.is_nan() || x.abs() >= 1.6e6 {
        return x.sin_cos();
    }
    let n = (x * std::f64::consts::FRAC_2_PI).round_ties_even();
    let r = ((x - n * PIO2_1) - n * PIO2_2) - n * PIO2_3;
    let z = r * r;
    let ps = S[1] + z * (S[2] + z * (S[3] + z * (S[4] + z * S[5])));
    let s = r + z * r * (S[0] + z * ps);
    let pc = z * (C[0] + z * (C[1] + z * (C[2] + z * (C[3] + z * (C[4] + z * C[5])))));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let c = w + (((1.0 - w) - hz) + z * pc);
    match (n as i64) & 3 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// Data columns per rayon task when filling or contracting m×n matrices.
const COLS_PER_TASK: usize = 256;

/// A model's features. Per-feature tables are m×D (column-major, so one dimension's
/// values over all features are contiguous and the inner loops over features vectorise).
/// The values the `[features]` table keeps (`win`, `freq`, `phase`, `cent`, `sm`) and
/// what [`Feat::derive`] computes from them and the kernel's summands (`win2`,
/// `excess`, `log_kuu_scale`), so that a typed state unpacks θ into the first and
/// derives the rest as a model file's read would.
#[derive(Clone, Debug)]
pub(super) struct Feat {
    pub(super) kind: Kind,
    pub(super) m: usize,
    pub(super) d: usize,
    /// The SE summands of the kernel (one for the plain SE kernel): every covariance
    /// is the sum of theirs.
    pub(super) se: Vec<Se>,
    /// c_d of the shared window (FIF/TFIF), as `[features] window_widths` keeps them.
    pub(super) win: Vec<f64>,
    /// c_d² of the shared window (FIF/TFIF).
    pub(super) win2: Vec<f64>,
    /// ω, m×D (FIF/TFIF).
    pub(super) freq: DMatrix<f64>,
    /// ω0, m (FIF/TFIF).
    pub(super) phase: Vec<f64>,
    /// μ, m×D; zeros for FIF.
    pub(super) cent: DMatrix<f64>,
    /// SM, m×D, as the file keeps them: the widths c_jd (`widths`, the plain kernel) or
    /// the windows' standard deviations s_jd (`window_sds`, a kernel built from parts).
    pub(super) sm: DMatrix<f64>,
    /// Whether the kernel is built from parts (SM: `sm` holds s, not c).
    pub(super) composed: bool,
    /// e^ρ = s_jd², the variance of feature j's window on input d, m×D (SM; with the
    /// plain kernel c_jd² − ℓ_d²).
    pub(super) excess: DMatrix<f64>,
    /// Per summand, log(σ² Π √(L/b)) over its inputs, shared by its Kuu entries (FIF/TFIF).
    log_kuu_scale: Vec<f64>,
}

fn table<'a, T>(name: &str, v: &'a Option<T>) -> Result<&'a T> {
    v.as_ref().ok_or_else(|| {
        Error::at(
            Location::key(Features::NAME),
            format!("[features] {name} is missing"),
        )
    })
}

/// m rows of D values as an m×D matrix.
fn feature_rows(name: &str, rows: &[Vec<f64>], m: usize, d: usize) -> Result<DMatrix<f64>> {
    if rows.len() != m {
        return Err(Error::at(
            at(name),
            format!(
                "[features] {name} has {} rows, expected {m} (one per feature)",
                rows.len()
            ),
        ));
    }
    rows_to_matrix(&at(name), rows, d)
}

impl Feat {
    pub(super) fn new(kind: Kind, model: &ModelFile) -> Result<Feat> {
        let f = &model.require::<Features>()?;
        let d = model.kernel_dim();
        let se = se_sum::summands(model)?;
        let unused = |name: &str, present: bool| {
            if present {
                Err(Error::at(
                    at(name),
                    format!(
                        "[features] {name} does not apply to method '{}'",
                        model.method
                    ),
                ))
            } else {
                Ok(())
            }
        };
        let mut feat = Feat {
            kind,
            m: 0,
            d,
            se,
            win: Vec::new(),
            win2: Vec::new(),
            freq: DMatrix::zeros(0, d),
            phase: Vec::new(),
            cent: DMatrix::zeros(0, d),
            sm: DMatrix::zeros(0, d),
            composed: model.composed.is_some(),
            excess: DMatrix::zeros(0, d),
            log_kuu_scale: Vec::new(),
        };
        match kind {
            Kind::Fif | Kind::Tfif => {
                unused("widths", f.widths.is_some())?;
                unused("window_sds", f.window_sds.is_some())?;
                let phases = table("phases", &f.phases)?;
                let m = phases.len();
                if m == 0 {
                    return Err(Error::at(at("phases"), "[features] phases is empty"));
                }
                if phases.iter().any(|p| !p.is_finite()) {
                    return Err(Error::at(
                        at("phases"),
                        "[features] phases holds a non-finite value",
                    ));
                }
                let win = table("window_widths", &f.window_widths)?;
                if win.len() != d || win.iter().any(|c| !(c.is_finite() && *c > 0.0)) {
                    return Err(Error::at(
                        at("window_widths"),
                        format!("[features] window_widths must hold {d} positive values"),
                    ));
                }
                feat.m = m;
                feat.phase = phases.clone();
                feat.win = win.clone();
                feat.freq =
                    feature_rows("frequencies", table("frequencies", &f.frequencies)?, m, d)?;
                feat.cent = if kind == Kind::Tfif {
                    feature_rows("centres", table("centres", &f.centres)?, m, d)?
                } else {
                    unused("centres", f.centres.is_some())?;
                    DMatrix::zeros(m, d)
                };
            }
            Kind::Sm => {
                unused("window_widths", f.window_widths.is_some())?;
                unused("frequencies", f.frequencies.is_some())?;
                unused("phases", f.phases.is_some())?;
                let cent = table("centres", &f.centres)?;
                let m = cent.len();
                if m == 0 {
                    return Err(Error::at(at("centres"), "[features] centres is empty"));
                }
                feat.m = m;
                feat.cent = feature_rows("centres", cent, m, d)?;
                feat.sm = if feat.composed {
                    unused("widths", f.widths.is_some())?;
                    feature_rows("window_sds", table("window_sds", &f.window_sds)?, m, d)?
                } else {
                    unused("window_sds", f.window_sds.is_some())?;
                    feature_rows("widths", table("widths", &f.widths)?, m, d)?
                };
            }
        }
        feat.derive(&model.hyper.lengthscales)?;
        Ok(feat)
    }

    /// What the features' values and the kernel's summands (`se`) give: the window's
    /// c², the Kuu scale of each summand (FIF/TFIF), the windows' variances (SM, with
    /// the plain kernel's `lengthscales` ℓ: e^ρ = c² − ℓ², which must be positive).
    pub(super) fn derive(&mut self, lengthscales: &[f64]) -> Result<()> {
        let (m, d) = (self.m, self.d);
        match self.kind {
            Kind::Fif | Kind::Tfif => {
                self.win2 = self.win.iter().map(|c| c * c).collect();
                self.log_kuu_scale = self
                    .se
                    .iter()
                    .map(|s| {
                        s.sf2.ln()
                            + s.ell2
                                .iter()
                                .zip(&self.win2)
                                .filter_map(|(l, c)| l.map(|l| 0.5 * (l / (2.0 * c + l)).ln()))
                                .sum::<f64>()
                    })
                    .collect();
            }
            Kind::Sm if self.composed => {
                let sds = &self.sm;
                if let Some((j, _)) = (0..m)
                    .flat_map(|j| (0..d).map(move |k| (j, k)))
                    .find(|&(j, k)| !(sds[(j, k)].is_finite() && sds[(j, k)] > 0.0))
                {
                    return Err(Error::at(
                        at("window_sds").index(j),
                        format!(
                            "[features] window_sds: feature {} needs positive finite \
                             standard deviations",
                            j + 1
                        ),
                    ));
                }
                self.excess = sds.map(|s| s * s);
            }
            Kind::Sm => {
                let (wid, ell2) = (&self.sm, lengthscales);
                self.excess =
                    DMatrix::from_fn(m, d, |j, k| wid[(j, k)].powi(2) - ell2[k] * ell2[k]);
                if let Some((k, j)) = (0..m)
                    .flat_map(|j| (0..d).map(move |k| (k, j)))
                    .find(|&(k, j)| self.excess[(j, k)] <= 0.0)
                {
                    return Err(Error::at(
                        at("widths").index(j),
                        format!(
                            "[features] widths: feature {} has c = {} in dimension {}, which \
                             must exceed the lengthscale {} (the SMGP integrals diverge \
                             otherwise)",
                            j + 1,
                            wid[(j, k)],
                            k + 1,
                            lengthscales[k]
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    pub(super) fn has_centres(&self) -> bool {
        self.kind != Kind::Fif
    }

    /// Kuf = Σ_s Kuf_s (m×n) at inputs given as columns (D×n), and what the gradient
    /// needs ([`Pieces`]) when `want_sin`.
    pub(super) fn kuf(
        &self,
        xt: &DMatrix<f64>,
        want_sin: bool,
        par: Par,
    ) -> (DMatrix<f64>, Pieces) {
        let mut pieces = Vec::with_capacity(self.se.len());
        let mut total: Option<DMatrix<f64>> = None;
        for s in 0..self.se.len() {
            let (k, sin) = self.kuf_of(s, xt, want_sin, par);
            match total.as_mut() {
                None => {
                    let keep = (want_sin && self.se.len() > 1).then(|| k.clone());
                    total = Some(k);
                    pieces.push((keep, sin));
                }
                Some(t) => {
                    *t += &k;
                    pieces.push((want_sin.then_some(k), sin));
                }
            }
        }
        let total = total.unwrap_or_else(|| DMatrix::zeros(self.m, xt.ncols()));
        (total, Pieces(pieces))
    }

    /// Summand s's Kuf (m×n) at inputs given as columns (D×n), and for FIF/TFIF the
    /// matching sine matrix `e^M sin φ` the gradients need.
    fn kuf_of(
        &self,
        s: usize,
        xt: &DMatrix<f64>,
        want_sin: bool,
        par: Par,
    ) -> (DMatrix<f64>, Option<DMatrix<f64>>) {
        let (m, d, n) = (self.m, self.d, xt.ncols());
        let se = &self.se[s];
        // Per feature: log prefactor; per (feature, dimension): 1/(2·var) and the
        // phase slope (FIF/TFIF) — everything but the data-dependent part. On an input
        // the summand does not read (ℓ → ∞) only FIF's window transform e^{−Cω²/2} stays.
        let mut base = vec![se.sf2.ln(); m];
        let mut inv2 = DMatrix::zeros(m, d);
        let mut slope = DMatrix::zeros(m, d);
        let mut phase0 = vec![0.0; m];
        for j in 0..m {
            for k in 0..d {
                match (self.kind, se.ell2[k]) {
                    (Kind::Fif | Kind::Tfif, Some(l)) => {
                        let (c, w) = (self.win2[k], self.freq[(j, k)]);
                        let a = c + l;
                        base[j] += 0.5 * (l / a).ln() - c * l * w * w / (2.0 * a);
                        inv2[(j, k)] = 0.5 / a;
                        slope[(j, k)] = c * w / a;
                    }
                    (Kind::Fif | Kind::Tfif, None) => {
                        let (c, w) = (self.win2[k], self.freq[(j, k)]);
                        base[j] -= 0.5 * c * w * w;
                    }
                    (Kind::Sm, Some(l)) => {
                        let q = l + self.excess[(j, k)];
                        base[j] += 0.5 * (l / q).ln();
                        inv2[(j, k)] = 0.5 / q;
                    }
                    (Kind::Sm, None) => {}
                }
            }
            if self.kind != Kind::Sm {
                phase0[j] = self.phase[j];
            }
        }
        let trig = self.kind != Kind::Sm;
        let want_sin = want_sin && trig;
        let mut kuf = DMatrix::zeros(m, n);
        let mut sin = DMatrix::zeros(if want_sin { m } else { 0 }, n);
        // Column i of Kuf: accumulate the exponent in the output and the phase in
        // `phi`, one dimension at a time over all features (contiguous, vectorised).
        let fill = |i: usize, kc: &mut [f64], sc: &mut [f64], phi: &mut [f64]| {
            let x = &xt.as_slice()[i * d..(i + 1) * d];
            kc.copy_from_slice(&base);
            phi.copy_from_slice(&phase0);
            for (k, &xk) in x.iter().enumerate() {
                let span = k * m..(k + 1) * m;
                let mu = &self.cent.as_slice()[span.clone()];
                let iv = &inv2.as_slice()[span.clone()];
                let sl = &slope.as_slice()[span];
                for j in 0..m {
                    let r = xk - mu[j];
                    kc[j] -= r * r * iv[j];
                    phi[j] += sl[j] * r;
                }
            }
            for j in 0..m {
                let mag = kc[j].exp();
                if trig {
                    let (s, c) = sin_cos(phi[j]);
                    kc[j] = mag * c;
                    if want_sin {
                        sc[j] = mag * s;
                    }
                } else {
                    kc[j] = mag;
                }
            }
        };
        let block = (m * COLS_PER_TASK).max(1);
        let task = |(t, (kb, sb)): (usize, (&mut [f64], &mut [f64]))| {
            let mut phi = vec![0.0; m];
            let mut sins = sb.chunks_mut(m.max(1));
            for (c, kc) in kb.chunks_mut(m.max(1)).enumerate() {
                let sc = sins.next().unwrap_or_default();
                fill(t * COLS_PER_TASK + c, kc, sc, &mut phi);
            }
        };
        // the sine matrix is empty unless asked for: pair each block with an empty slice
        let mut sin_blocks: Vec<&mut [f64]> = sin.as_mut_slice().chunks_mut(block).collect();
        sin_blocks.resize_with(n.div_ceil(COLS_PER_TASK), || &mut []);
        let blocks: Vec<(&mut [f64], &mut [f64])> = kuf
            .as_mut_slice()
            .chunks_mut(block)
            .zip(sin_blocks)
            .collect();
        if par.is_parallel() {
            blocks.into_par_iter().enumerate().for_each(task);
        } else {
            blocks.into_iter().enumerate().for_each(task);
        }
        (kuf, want_sin.then_some(sin))
    }

    /// Kuu (m×m); with an adjoint, also accumulate Σ Ā_jk ∂Kuu_jk/∂θ into `g`.
    /// Every ordered pair (j,k) is visited, so the symmetric adjoint pairs entry by entry.
    pub(super) fn kuu(&self, mut adj: Option<(&DMatrix<f64>, &mut Grads)>) -> DMatrix<f64> {
        let m = self.m;
        let mut kuu = DMatrix::zeros(m, m);
        for k in 0..m {
            for j in 0..m {
                let (w, mut g) = match adj.as_mut() {
                    Some((a, g)) => (a[(j, k)], Some(&mut **g)),
                    None => (0.0, None),
                };
                // the sum over summands
                kuu[(j, k)] = (0..self.se.len())
                    .map(|s| match self.kind {
                        Kind::Sm => self.sm_pair(s, j, k, w, g.as_deref_mut()),
                        // ½[h(z, z') + h(z, z̃')] with z̃' = (−ω0', −ω', μ')
                        _ => {
                            0.5 * (self.fif_pair(s, j, k, 1.0, w, g.as_deref_mut())
                                + self.fif_pair(s, j, k, -1.0, w, g.as_deref_mut()))
                        }
                    })
                    .sum();
            }
        }
        kuu
    }

    /// Summand `q`'s h(z_j, z_k) with ω_k, ω0_k multiplied by `s` (±1):
    /// `σ² Π √(L/b) e^{−G} cos ψ`, `G = Σ [δ² + CL(ω²+w'²) + C²(ω−w')²]/(2b)`,
    /// `ψ = ω0 − w0' − Σ C(ω+w')δ/b`, δ = μ_j − μ_k; on an input the summand does not
    /// read (L → ∞) G's term is C(ω²+w'²)/2 and ψ's none. With an adjoint weight, adds
    /// ½·weight·∂h/∂θ to the gradients (the ½ of Kuu).
    pub(super) fn fif_pair(
        &self,
        q: usize,
        j: usize,
        k: usize,
        s: f64,
        wgt: f64,
        g: Option<&mut Grads>,
    ) -> f64 {
        let ell2 = &self.se[q].ell2;
        let mut logm = self.log_kuu_scale[q];
        let mut psi = self.phase[j] - s * self.phase[k];
        for (t, l) in ell2.iter().enumerate() {
            let c = self.win2[t];
            let (w, w2) = (self.freq[(j, t)], s * self.freq[(k, t)]);
            let Some(l) = *l else {
                logm -= 0.5 * c * (w * w + w2 * w2);
                continue;
            };
            let b = 2.0 * c + l;
            let del = self.cent[(j, t)] - self.cent[(k, t)];
            let nn = del * del + c * l * (w * w + w2 * w2) + c * c * (w - w2) * (w - w2);
            logm -= nn / (2.0 * b);
            psi -= c * (w + w2) * del / b;
        }
        let mag = logm.exp();
        let (sn, cs) = psi.sin_cos();
        if let Some(g) = g {
            let pk = 0.5 * wgt * mag * cs;
            let ps = 0.5 * wgt * mag * sn;
            g.se[q].sf2 += pk;
            g.phase[j] -= ps;
            g.phase[k] += s * ps;
            for (t, l) in ell2.iter().enumerate() {
                let c = self.win2[t];
                let Some(l) = *l else {
                    let (w, w2) = (self.freq[(j, t)], s * self.freq[(k, t)]);
                    g.freq[(j, t)] -= pk * c * w;
                    g.freq[(k, t)] -= s * pk * c * w2;
                    g.win2[t] -= pk * 0.5 * (w * w + w2 * w2);
                    continue;
                };
                let b = 2.0 * c + l;
                let (w, w2) = (self.freq[(j, t)], s * self.freq[(k, t)]);
                let del = self.cent[(j, t)] - self.cent[(k, t)];
                let sq = w * w + w2 * w2;
                let nn = del * del + c * l * sq + c * c * (w - w2) * (w - w2);
                let sw = w + w2;
                g.freq[(j, t)] += -pk * (c * l * w + c * c * (w - w2)) / b + ps * c * del / b;
                g.freq[(k, t)] +=
                    s * (-pk * (c * l * w2 - c * c * (w - w2)) / b + ps * c * del / b);
                if self.has_centres() {
                    let gmu = -pk * del / b + ps * c * sw / b;
                    g.cent[(j, t)] += gmu;
                    g.cent[(k, t)] -= gmu;
                }
                g.se[q].ell2[t] += pk
                    * (0.5 / l - 0.5 / b - c * sq / (2.0 * b) + nn / (2.0 * b * b))
                    - ps * c * sw * del / (b * b);
                g.win2[t] += pk
                    * (-1.0 / b - (l * sq + 2.0 * c * (w - w2) * (w - w2)) / (2.0 * b)
                        + nn / (b * b))
                    + ps * sw * del * l / (b * b);
            }
        }
        mag * cs
    }

    /// Summand `q`'s SMGP `k(z_j, z_k) = σ² Π √(L/v) exp(−Σ δ²/(2v))`,
    /// `v = L + e^ρj + e^ρk`, the product over the inputs it reads (1 on the others).
    pub(super) fn sm_pair(
        &self,
        q: usize,
        j: usize,
        k: usize,
        wgt: f64,
        g: Option<&mut Grads>,
    ) -> f64 {
        let d = self.d;
        let se = &self.se[q];
        let mut logm = se.sf2.ln();
        for t in 0..d {
            let Some(l) = se.ell2[t] else { continue };
            let v = l + self.excess[(j, t)] + self.excess[(k, t)];
            let del = self.cent[(j, t)] - self.cent[(k, t)];
            logm += 0.5 * (l / v).ln() - del * del / (2.0 * v);
        }
        let kv = logm.exp();
        if let Some(g) = g {
            let pk = wgt * kv;
            g.se[q].sf2 += pk;
            for t in 0..d {
                let Some(l) = se.ell2[t] else { continue };
                let v = l + self.excess[(j, t)] + self.excess[(k, t)];
                let del = self.cent[(j, t)] - self.cent[(k, t)];
                let dv = pk * (-0.5 / v + del * del / (2.0 * v * v));
                g.cent[(j, t)] -= pk * del / v;
                g.cent[(k, t)] += pk * del / v;
                g.rho[(j, t)] += dv * self.excess[(j, t)];
                g.rho[(k, t)] += dv * self.excess[(k, t)];
                g.se[q].ell2[t] += pk * 0.5 / l + dv;
            }
        }
        kv
    }

    /// Add Σ_ij Ā_ji ∂Kuf_ji/∂θ to `g`, given Kuf (the total, for the summands whose
    /// own [`Pieces`] holds none: a kernel of one summand) and the pieces.
    pub(super) fn kuf_grad(
        &self,
        adj: &DMatrix<f64>,
        kuf: &DMatrix<f64>,
        pieces: &Pieces,
        xt: &DMatrix<f64>,
        g: &mut Grads,
        par: Par,
    ) {
        for (q, (own, sin)) in pieces.0.iter().enumerate() {
            let k = own.as_ref().unwrap_or(kuf);
            self.kuf_grad_of(q, adj, k, sin.as_ref(), xt, g, par);
        }
    }

    /// [`Feat::kuf_grad`] through summand `q`, given its Kuf and sine companion.
    #[allow(clippy::too_many_arguments)]
    fn kuf_grad_of(
        &self,
        q: usize,
        adj: &DMatrix<f64>,
        kuf: &DMatrix<f64>,
        sin: Option<&DMatrix<f64>>,
        xt: &DMatrix<f64>,
        g: &mut Grads,
        par: Par,
    ) {
        let mo = Moments::of(adj, kuf, sin, xt, &self.cent, par);
        let ell2 = &self.se[q].ell2;
        let gs = &mut g.se[q];
        for j in 0..self.m {
            gs.sf2 += mo.k0[j];
            g.phase[j] -= mo.s0[j];
            for (t, l) in ell2.iter().enumerate() {
                let (k0, k1, k2) = (mo.k0[j], mo.k1[(j, t)], mo.k2[(j, t)]);
                let Some(l) = *l else {
                    // only FIF's e^{−Cω²/2} depends on this input
                    if self.kind != Kind::Sm {
                        let (c, w) = (self.win2[t], self.freq[(j, t)]);
                        g.freq[(j, t)] -= c * w * k0;
                        g.win2[t] -= 0.5 * w * w * k0;
                    }
                    continue;
                };
                match self.kind {
                    Kind::Fif | Kind::Tfif => {
                        let (s0, s1) = (mo.s0[j], mo.s1[(j, t)]);
                        let c = self.win2[t];
                        let a = c + l;
                        let w = self.freq[(j, t)];
                        g.freq[(j, t)] += -(c * l * w / a) * k0 - (c / a) * s1;
                        if self.has_centres() {
                            g.cent[(j, t)] += k1 / a + (c * w / a) * s0;
                        }
                        let a2 = a * a;
                        gs.ell2[t] += (0.5 / l - 0.5 / a - c * c * w * w / (2.0 * a2)) * k0
                            + k2 / (2.0 * a2)
                            + (c * w / a2) * s1;
                        g.win2[t] += (-0.5 / a - l * l * w * w / (2.0 * a2)) * k0 + k2 / (2.0 * a2)
                            - (l * w / a2) * s1;
                    }
                    Kind::Sm => {
                        let v = l + self.excess[(j, t)];
                        g.cent[(j, t)] += k1 / v;
                        g.rho[(j, t)] += self.excess[(j, t)] * (-0.5 * k0 / v + k2 / (2.0 * v * v));
                        gs.ell2[t] += (0.5 / l - 0.5 / v) * k0 + k2 / (2.0 * v * v);
                    }
                }
            }
        }
    }
}

/// Each summand's Kuf when the kernel has more than one (None: the total is the one
/// summand's) and its sine companion (FIF/TFIF), kept for the gradient.
pub(super) struct Pieces(Vec<Piece>);

/// One summand's own Kuf (None: the total's) and sine companion.
type Piece = (Option<DMatrix<f64>>, Option<DMatrix<f64>>);

/// ∂NLML with respect to the physical parameters, accumulated over Kuf, Kuu, kdiag.
pub(super) struct Grads {
    /// Per summand: ∂/∂log σ², ∂/∂ℓ_d²
    pub(super) se: Vec<SeGrad>,
    /// ∂/∂c_d² (window)
    pub(super) win2: Vec<f64>,
    pub(super) freq: DMatrix<f64>,
    pub(super) phase: Vec<f64>,
    pub(super) cent: DMatrix<f64>,
    /// ∂/∂ρ (SMGP)
    pub(super) rho: DMatrix<f64>,
}

impl Grads {
    pub(super) fn zeros(d: usize, m: usize, summands: usize) -> Grads {
        Grads {
            se: vec![SeGrad::zeros(d); summands],
            win2: vec![0.0; d],
            freq: DMatrix::zeros(m, d),
            phase: vec![0.0; m],
            cent: DMatrix::zeros(m, d),
            rho: DMatrix::zeros(m, d),
        }
    }
}

/// Per-feature moments of the adjoint-weighted Kuf over the data, with `r = x − μ_j`:
/// k0 = Σ_i ĀK, k1 = Σ_i ĀK r, k2 = Σ_i ĀK r², s0 = Σ_i ĀS, s1 = Σ_i ĀS r
/// (vectors of D are columns). Summed directly, not by expanding (x − μ)², which
/// would cancel for narrow features far from the origin.
pub(super) struct Moments {
    k0: Vec<f64>,
    k1: DMatrix<f64>,
    k2: DMatrix<f64>,
    s0: Vec<f64>,
    s1: DMatrix<f64>,
}

impl Moments {
    pub(super) fn zeros(d: usize, m: usize) -> Moments {
        Moments {
            k0: vec![0.0; m],
            k1: DMatrix::zeros(m, d),
            k2: DMatrix::zeros(m, d),
            s0: vec![0.0; m],
            s1: DMatrix::zeros(m, d),
        }
    }

    pub(super) fn add(&mut self, o: &Moments) {
        self.k0.iter_mut().zip(&o.k0).for_each(|(a, b)| *a += b);
        self.s0.iter_mut().zip(&o.s0).for_each(|(a, b)| *a += b);
        self.k1 += &o.k1;
        self.k2 += &o.k2;
        self.s1 += &o.s1;
    }

    pub(super) fn of(
        adj: &DMatrix<f64>,
        kuf: &DMatrix<f64>,
        sin: Option<&DMatrix<f64>>,
        xt: &DMatrix<f64>,
        cent: &DMatrix<f64>,
        par: Par,
    ) -> Moments {
        let (m, n) = kuf.shape();
        let d = xt.nrows();
        let tasks = n.div_ceil(COLS_PER_TASK);
        // Collected in order and summed serially: the result does not depend on scheduling.
        let parts: Vec<Moments> = crate::linalg::map_ordered(par, (0..tasks).collect(), |t| {
            let mut mo = Moments::zeros(d, m);
            let (mut pk, mut ps) = (vec![0.0; m], vec![0.0; m]);
            for i in t * COLS_PER_TASK..((t + 1) * COLS_PER_TASK).min(n) {
                let x = &xt.as_slice()[i * d..(i + 1) * d];
                let col = i * m..(i + 1) * m;
                let (ac, kc) = (&adj.as_slice()[col.clone()], &kuf.as_slice()[col.clone()]);
                for j in 0..m {
                    pk[j] = ac[j] * kc[j];
                    mo.k0[j] += pk[j];
                }
                if let Some(s) = sin {
                    let sc = &s.as_slice()[col];
                    for j in 0..m {
                        ps[j] = ac[j] * sc[j];
                        mo.s0[j] += ps[j];
                    }
                }
                for (k, &xk) in x.iter().enumerate() {
                    let span = k * m..(k + 1) * m;
                    let mu = &cent.as_slice()[span.clone()];
                    let k1 = &mut mo.k1.as_mut_slice()[span.clone()];
                    let k2 = &mut mo.k2.as_mut_slice()[span.clone()];
                    let s1 = &mut mo.s1.as_mut_slice()[span];
                    for j in 0..m {
                        let r = xk - mu[j];
                        k1[j] += pk[j] * r;
                        k2[j] += pk[j] * r * r;
                        s1[j] += ps[j] * r;
                    }
                }
            }
            mo
        });
        let mut total = Moments::zeros(d, m);
        for p in &parts {
            total.add(p);
        }
        total
    }
}
