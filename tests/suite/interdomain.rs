//! Inter-domain GPs (FIFGP, TFIFGP, SMGP; docs/methods.md §3): the closed-form instances
//! against quadrature of the defining integrals (paper eqs. 4–5), positive definite
//! Kuu, finite-difference gradients, and the special cases TFIFGP(μ = 0) = FIFGP and
//! SMGP(c → ℓ) → SPGP; sums of SE kernels built from parts (issue 42): their instances
//! against quadrature of each summand, gradients, a fit and the refusals.

use crate::common;
use common::*;
use nalgebra::{Complex, DMatrix, DVector, SymmetricEigen};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sgpw::data::Dataset;
use sgpw::methods::interdomain::{Features, InputMean};
use sgpw::methods::pseudo::Inducing;
use sgpw::methods::{self, interdomain};
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::run_spec::{Centres, MethodOptions, RunSpec};
use sgpw::train;
use std::f64::consts::PI;

type C64 = Complex<f64>;

/// Gauss–Hermite nodes and weights for ∫ e^{−t²} f(t) dt (Golub–Welsch).
fn gauss_hermite(n: usize) -> (Vec<f64>, Vec<f64>) {
    let j = DMatrix::from_fn(n, n, |a, b| {
        if a + 1 == b || b + 1 == a {
            (a.max(b) as f64 / 2.0).sqrt()
        } else {
            0.0
        }
    });
    let e = SymmetricEigen::new(j);
    let mut pairs: Vec<(f64, f64)> = (0..n)
        .map(|k| (e.eigenvalues[k], PI.sqrt() * e.eigenvectors[(0, k)].powi(2)))
        .collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    pairs.into_iter().unzip()
}

/// Nodes and weights for E[f(X)], X ~ N(mean, var).
struct Normal1 {
    t: Vec<f64>,
    w: Vec<f64>,
}

impl Normal1 {
    fn new(n: usize) -> Normal1 {
        let (t, w) = gauss_hermite(n);
        Normal1 {
            t,
            w: w.iter().map(|w| w / PI.sqrt()).collect(),
        }
    }
    fn points(&self, mean: f64, var: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
        let s = (2.0 * var).sqrt();
        self.t
            .iter()
            .zip(&self.w)
            .map(move |(t, w)| (mean + s * t, *w))
    }
}

/// The SE kernel's factor in one dimension.
fn se1(x: f64, y: f64, ell: f64) -> f64 {
    (-(x - y).powi(2) / (2.0 * ell * ell)).exp()
}

struct Fif {
    sf2: f64,
    ell: Vec<f64>,
    win: Vec<f64>,
    freq: Vec<Vec<f64>>,
    phase: Vec<f64>,
    cent: Vec<Vec<f64>>,
}

struct Sm {
    sf2: f64,
    ell: Vec<f64>,
    cent: Vec<Vec<f64>>,
    wid: Vec<Vec<f64>>,
}

fn random_fif(d: usize, m: usize, centred: bool, rng: &mut ChaCha8Rng) -> Fif {
    let ell: Vec<f64> = (0..d).map(|_| rng.random_range(0.6..1.5)).collect();
    Fif {
        sf2: 1.3,
        win: (0..d).map(|_| rng.random_range(0.6..1.3)).collect(),
        freq: (0..m)
            .map(|_| {
                ell.iter()
                    .map(|l| rng.random_range(-1.5..1.5) / l)
                    .collect()
            })
            .collect(),
        phase: (0..m).map(|_| rng.random_range(0.0..2.0 * PI)).collect(),
        cent: (0..m)
            .map(|_| {
                (0..d)
                    .map(|_| {
                        if centred {
                            rng.random_range(-1.0..1.0)
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect(),
        ell,
    }
}

fn random_sm(d: usize, m: usize, rng: &mut ChaCha8Rng) -> Sm {
    let ell: Vec<f64> = (0..d).map(|_| rng.random_range(0.6..1.5)).collect();
    Sm {
        sf2: 1.3,
        cent: (0..m)
            .map(|_| (0..d).map(|_| rng.random_range(-1.5..1.5)).collect())
            .collect(),
        wid: (0..m)
            .map(|_| {
                ell.iter()
                    .map(|l| l * rng.random_range(1.05..1.8))
                    .collect()
            })
            .collect(),
        ell,
    }
}

fn hyper(sf2: f64, ell: &[f64]) -> Hyper {
    Hyper::se(sf2, ell.to_vec(), 0.1)
}

impl Fif {
    fn model(&self, tfif: bool) -> ModelFile {
        let mut model = ModelFile::new(
            if tfif { "tfifgp" } else { "fifgp" },
            hyper(self.sf2, &self.ell),
        );
        model.set(&Features {
            window_widths: Some(self.win.clone()),
            frequencies: Some(self.freq.clone()),
            phases: Some(self.phase.clone()),
            centres: tfif.then(|| self.cent.clone()),
            ..Default::default()
        });
        model
    }

    /// k(x, z_j) = ∫ k(x,x') g(x', z_j) dx' with g = Π N(x'−μ; 0, c²) cos(ω0 + ω·(x'−μ)):
    /// σ0² Re[e^{iω0} Π_d ∫ k_d N_d e^{iω_d(x'_d−μ_d)}].
    fn kxz_separable(&self, x: &[f64], j: usize, q: &Normal1) -> f64 {
        let mut prod = C64::new(0.0, self.phase[j]).exp();
        for (d, &xd) in x.iter().enumerate() {
            let mu = self.cent[j][d];
            let mut s = C64::new(0.0, 0.0);
            for (xp, w) in q.points(mu, self.win[d].powi(2)) {
                s += C64::new(0.0, self.freq[j][d] * (xp - mu)).exp()
                    * (w * se1(xd, xp, self.ell[d]));
            }
            prod *= s;
        }
        self.sf2 * prod.re
    }

    /// The same integral on a full tensor grid (no factorisation of the cosine).
    fn kxz_tensor(&self, x: &[f64], j: usize, q: &Normal1) -> f64 {
        assert_eq!(x.len(), 2);
        let mut s = 0.0;
        for (a, wa) in q.points(self.cent[j][0], self.win[0].powi(2)) {
            for (b, wb) in q.points(self.cent[j][1], self.win[1].powi(2)) {
                let arg = self.phase[j]
                    + self.freq[j][0] * (a - self.cent[j][0])
                    + self.freq[j][1] * (b - self.cent[j][1]);
                s += wa * wb * se1(x[0], a, self.ell[0]) * se1(x[1], b, self.ell[1]) * arg.cos();
            }
        }
        self.sf2 * s
    }

    /// k(z_j, z_k) = ∫∫ g(x,z_j) k(x,x') g(x',z_k): with cos A cos A' = ½Re[e^{i(A−A')} +
    /// e^{i(A+A')}], each term a product over dimensions of 2-D integrals.
    fn kzz_separable(&self, j: usize, k: usize, q: &Normal1) -> f64 {
        let mut total = 0.0;
        for s in [-1.0, 1.0] {
            let mut prod = C64::new(0.0, self.phase[j] + s * self.phase[k]).exp();
            for d in 0..self.ell.len() {
                let (mu, mu2) = (self.cent[j][d], self.cent[k][d]);
                let c2 = self.win[d].powi(2);
                let mut acc = C64::new(0.0, 0.0);
                for (x, wx) in q.points(mu, c2) {
                    for (y, wy) in q.points(mu2, c2) {
                        let arg = self.freq[j][d] * (x - mu) + s * self.freq[k][d] * (y - mu2);
                        acc += C64::new(0.0, arg).exp() * (wx * wy * se1(x, y, self.ell[d]));
                    }
                }
                prod *= acc;
            }
            total += 0.5 * prod.re;
        }
        self.sf2 * total
    }

    /// The 4-D integral (D = 2) on a full tensor grid.
    fn kzz_tensor(&self, j: usize, k: usize, q: &Normal1) -> f64 {
        let (cj, ck) = (&self.cent[j], &self.cent[k]);
        let (v0, v1) = (self.win[0].powi(2), self.win[1].powi(2));
        let mut s = 0.0;
        for (x0, w0) in q.points(cj[0], v0) {
            for (x1, w1) in q.points(cj[1], v1) {
                let a =
                    self.phase[j] + self.freq[j][0] * (x0 - cj[0]) + self.freq[j][1] * (x1 - cj[1]);
                let ca = a.cos();
                for (y0, u0) in q.points(ck[0], v0) {
                    let k0 = se1(x0, y0, self.ell[0]);
                    for (y1, u1) in q.points(ck[1], v1) {
                        let b = self.phase[k]
                            + self.freq[k][0] * (y0 - ck[0])
                            + self.freq[k][1] * (y1 - ck[1]);
                        s += w0 * w1 * u0 * u1 * ca * b.cos() * k0 * se1(x1, y1, self.ell[1]);
                    }
                }
            }
        }
        self.sf2 * s
    }
}

impl Sm {
    fn model(&self) -> ModelFile {
        let mut model = ModelFile::new("smgp", hyper(self.sf2, &self.ell));
        model.set(&Features {
            centres: Some(self.cent.clone()),
            widths: Some(self.wid.clone()),
            ..Default::default()
        });
        model
    }

    /// g = Π N(x; μ, c² − ℓ²): k(x,z) = σ0² Π ∫ k_d N_d.
    fn kxz(&self, x: &[f64], j: usize, q: &Normal1) -> f64 {
        let mut p = self.sf2;
        for (d, &xd) in x.iter().enumerate() {
            let v = self.wid[j][d].powi(2) - self.ell[d].powi(2);
            p *= q
                .points(self.cent[j][d], v)
                .map(|(xp, w)| w * se1(xd, xp, self.ell[d]))
                .sum::<f64>();
        }
        p
    }

    fn kzz(&self, j: usize, k: usize, q: &Normal1) -> f64 {
        let mut p = self.sf2;
        for d in 0..self.ell.len() {
            let l2 = self.ell[d].powi(2);
            let (vj, vk) = (self.wid[j][d].powi(2) - l2, self.wid[k][d].powi(2) - l2);
            let mut s = 0.0;
            for (x, wx) in q.points(self.cent[j][d], vj) {
                for (y, wy) in q.points(self.cent[k][d], vk) {
                    s += wx * wy * se1(x, y, self.ell[d]);
                }
            }
            p *= s;
        }
        p
    }
}

const QUAD_TOL: f64 = 1e-8;

fn assert_abs(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() < QUAD_TOL,
        "{what}: closed form {got:.15e}, quadrature {want:.15e} (diff {:e})",
        (got - want).abs()
    );
}

fn test_points(d: usize, rng: &mut ChaCha8Rng) -> DMatrix<f64> {
    DMatrix::from_fn(4, d, |_, _| rng.random_range(-2.0..2.0))
}

fn check_fif_quadrature(d: usize, tfif: bool, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let m = 4;
    let f = random_fif(d, m, tfif, &mut rng);
    let x = test_points(d, &mut rng);
    let (kuf, kuu) = interdomain::instances(&f.model(tfif), &x).expect("instances");
    let name = if tfif { "tfifgp" } else { "fifgp" };
    let q = Normal1::new(60);
    for j in 0..m {
        for i in 0..x.nrows() {
            let xi: Vec<f64> = x.row(i).iter().copied().collect();
            assert_abs(
                &format!("{name} D={d} k(x{i}, z{j})"),
                kuf[(j, i)],
                f.kxz_separable(&xi, j, &q),
            );
        }
        for k in 0..m {
            assert_abs(
                &format!("{name} D={d} k(z{j}, z{k})"),
                kuu[(j, k)],
                f.kzz_separable(j, k, &q),
            );
        }
    }
    if d == 2 {
        // the same integrals without factorising the cosine
        let q4 = Normal1::new(56);
        for j in 0..m {
            let xi: Vec<f64> = x.row(j).iter().copied().collect();
            assert_abs(
                &format!("{name} tensor k(x{j}, z{j})"),
                kuf[(j, j)],
                f.kxz_tensor(&xi, j, &q),
            );
        }
        for (j, k) in [(0, 1), (2, 3), (1, 1)] {
            assert_abs(
                &format!("{name} tensor k(z{j}, z{k})"),
                kuu[(j, k)],
                f.kzz_tensor(j, k, &q4),
            );
        }
    }
}

#[test]
fn fifgp_instances_match_quadrature_1d_2d() {
    check_fif_quadrature(1, false, 11);
    check_fif_quadrature(2, false, 12);
}

#[test]
fn tfifgp_instances_match_quadrature_1d_2d() {
    check_fif_quadrature(1, true, 21);
    check_fif_quadrature(2, true, 22);
}

#[test]
fn smgp_instances_match_quadrature_1d_2d() {
    for (d, seed) in [(1, 31), (2, 32)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let m = 4;
        let s = random_sm(d, m, &mut rng);
        let x = test_points(d, &mut rng);
        let (kuf, kuu) = interdomain::instances(&s.model(), &x).expect("instances");
        let q = Normal1::new(60);
        for j in 0..m {
            for i in 0..x.nrows() {
                let xi: Vec<f64> = x.row(i).iter().copied().collect();
                assert_abs(
                    &format!("smgp D={d} k(x{i}, z{j})"),
                    kuf[(j, i)],
                    s.kxz(&xi, j, &q),
                );
            }
            for k in 0..m {
                assert_abs(
                    &format!("smgp D={d} k(z{j}, z{k})"),
                    kuu[(j, k)],
                    s.kzz(j, k, &q),
                );
            }
        }
    }
}

/// Closed form and quadrature disagree when the TFIFGP phase terms are dropped, as the
/// paper prints them: the quadrature test above can tell.
#[test]
fn tfifgp_without_phase_terms_would_fail_quadrature() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let f = random_fif(1, 2, true, &mut rng);
    let q = Normal1::new(60);
    let want = f.kzz_separable(0, 1, &q);
    // the paper's form: k_FIF(z,z') · exp(−Σ δ²/(2b))
    let (l2, c2) = (f.ell[0].powi(2), f.win[0].powi(2));
    let b = 2.0 * c2 + l2;
    let (w, w2) = (f.freq[0][0], f.freq[1][0]);
    let del = f.cent[0][0] - f.cent[1][0];
    let paper = 0.5
        * f.sf2
        * (l2 / b).sqrt()
        * (-c2 * l2 * (w * w + w2 * w2) / (2.0 * b)).exp()
        * (-del * del / (2.0 * b)).exp()
        * ((-c2 * c2 * (w - w2).powi(2) / (2.0 * b)).exp() * (f.phase[0] - f.phase[1]).cos()
            + (-c2 * c2 * (w + w2).powi(2) / (2.0 * b)).exp() * (f.phase[0] + f.phase[1]).cos());
    assert!(
        (paper - want).abs() > 1e-4,
        "paper {paper} vs quadrature {want}"
    );
}

fn min_eigenvalue(k: &DMatrix<f64>) -> f64 {
    SymmetricEigen::new(k.clone())
        .eigenvalues
        .iter()
        .fold(f64::INFINITY, |a, b| a.min(*b))
}

#[test]
fn kuu_is_positive_definite_on_random_features() {
    // m kept small enough per D that Kuu is well conditioned: with many features in few
    // dimensions it becomes numerically singular (that is what the jitter is for).
    for (d, m, seed) in [(1, 5, 51), (2, 8, 52), (5, 12, 53)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = DMatrix::zeros(1, d);
        for (name, model) in [
            ("fifgp", random_fif(d, m, false, &mut rng).model(false)),
            ("tfifgp", random_fif(d, m, true, &mut rng).model(true)),
            ("smgp", random_sm(d, m, &mut rng).model()),
        ] {
            let (_, kuu) = interdomain::instances(&model, &x).expect("instances");
            assert!(
                (&kuu - kuu.transpose()).amax() < 1e-14,
                "{name} D={d}: Kuu not symmetric"
            );
            assert!(
                kuu.clone().cholesky().is_some(),
                "{name} D={d}: Cholesky of Kuu without jitter failed"
            );
            let lmin = min_eigenvalue(&kuu);
            eprintln!("{name} D={d} m={m}: smallest eigenvalue of Kuu {lmin:e}");
            assert!(
                lmin > 1e-10 * kuu.amax(),
                "{name} D={d}: smallest eigenvalue {lmin:e}"
            );
        }
    }
}

fn nlml(model: &ModelFile, data: &TrainData) -> f64 {
    methods::get(&model.method)
        .expect("method")
        .nlml(model, data, &ex())
        .expect("nlml")
}

/// Central differences of the NLML over every packed parameter.
fn check_all_gradients(what: &str, model: &ModelFile, data: &TrainData) {
    let method = methods::get(&model.method).expect("method");
    method.check(model).expect("valid model");
    let theta = method.pack(model);
    let obj = method.objective(model, data, &ex()).expect("objective");
    assert_eq!(theta.len(), obj.grad.len(), "{what}: gradient length");
    let mut scratch = model.clone();
    let mut f = |t: &[f64]| {
        method.unpack(t, &mut scratch);
        method.nlml(&scratch, data, &ex()).expect("nlml")
    };
    assert!((f(&theta) - obj.nlml).abs() < 1e-10 * obj.nlml.abs().max(1.0));
    check_gradient(what, &mut f, &theta, &obj.grad, 1e-5, 1e-6);
}

#[test]
fn gradients_match_finite_differences() {
    let data = toy_data(40, 2, 61);
    let mut rng = ChaCha8Rng::seed_from_u64(62);
    for jitter in [Some(1e-9), None] {
        let mut fif = random_fif(2, 5, false, &mut rng).model(false);
        fif.set(&InputMean(vec![0.3, -0.2]));
        fif.jitter = jitter;
        check_all_gradients(&format!("fifgp jitter {jitter:?}"), &fif, &data);
        let mut tfif = random_fif(2, 5, true, &mut rng).model(true);
        tfif.set(&InputMean(vec![-0.1, 0.25]));
        tfif.jitter = jitter;
        check_all_gradients(&format!("tfifgp jitter {jitter:?}"), &tfif, &data);
        let mut sm = random_sm(2, 5, &mut rng).model();
        sm.jitter = jitter;
        check_all_gradients(&format!("smgp jitter {jitter:?}"), &sm, &data);
    }
}

#[test]
fn gradients_match_finite_differences_3d_from_init() {
    let data = toy_data(60, 3, 71);
    let mut rng = ChaCha8Rng::seed_from_u64(72);
    for (name, centres) in [
        ("fifgp", None),
        ("tfifgp", Some(Centres::Subset)),
        ("smgp", None),
    ] {
        let spec = RunSpec {
            method: name.into(),
            m: 6,
            seed: 1,
            iters: 10,
            standardize: false,
            options: MethodOptions {
                centres,
                ..Default::default()
            },
        };
        let method = methods::get(name).expect("method");
        let model = init(method, &data, &spec, &mut rng).expect("init");
        check_all_gradients(&format!("{name} from init"), &model, &data);
    }
}

#[test]
fn tfifgp_with_zero_centres_equals_fifgp() {
    let data = toy_data(50, 3, 81);
    let mut rng = ChaCha8Rng::seed_from_u64(82);
    let f = random_fif(3, 7, false, &mut rng);
    let (mut fif, mut tfif) = (f.model(false), f.model(true));
    for model in [&mut fif, &mut tfif] {
        model.set(&InputMean(vec![0.1, -0.3, 0.2]));
    }
    let (a, b) = (nlml(&fif, &data), nlml(&tfif, &data));
    assert!((a - b).abs() <= 1e-12 * a.abs(), "fifgp {a} vs tfifgp {b}");
    let xs = DMatrix::from_fn(5, 3, |i, d| (i as f64 - 2.0) * 0.4 + d as f64 * 0.1);
    let p = |m: &ModelFile| {
        train::Predictor::new(m.clone(), Some((&data.x, &data.y)))
            .expect("predictor")
            .predict(&xs)
            .expect("predicts")
    };
    let (pa, pb) = (p(&fif), p(&tfif));
    assert_close("mean", &pb.mean, &pa.mean, 1e-12);
    assert_close("var", &pb.var_noisy, &pa.var_noisy, 1e-12);
}

#[test]
fn smgp_approaches_spgp_as_widths_shrink_to_lengthscales() {
    let data = toy_data(50, 2, 91);
    let mut rng = ChaCha8Rng::seed_from_u64(92);
    let s = random_sm(2, 8, &mut rng);
    let mut fitc = ModelFile::new("fitc", hyper(s.sf2, &s.ell));
    fitc.set(&Inducing {
        points: s.cent.clone(),
    });
    fitc.jitter = Some(1e-8);
    let target = nlml(&fitc, &data);
    let mut diffs = Vec::new();
    for eps in [1e-2f64, 1e-4, 1e-6, 1e-8] {
        let mut sm = s.model();
        sm.jitter = Some(1e-8);
        // c² = ℓ² + e^ρ with e^ρ = eps·ℓ²
        let mut f = sm.require::<Features>().expect("features");
        f.widths = Some(vec![
            s.ell.iter().map(|l| l * (1.0 + eps).sqrt()).collect();
            s.cent.len()
        ]);
        sm.set(&f);
        diffs.push((eps, (nlml(&sm, &data) - target).abs()));
    }
    eprintln!("smgp → spgp: |ΔNLML| by e^ρ/ℓ²: {diffs:?}");
    for w in diffs.windows(2) {
        // first order in e^ρ: each 100× step shrinks the gap ≳ 30×
        assert!(w[1].1 < w[0].1 / 30.0 || w[1].1 < 1e-9, "{diffs:?}");
    }
    assert!(diffs[0].1 > 1e-4, "the widths must matter: {diffs:?}");
    assert!(diffs[3].1 < 1e-6 * target.abs(), "{diffs:?}");
}

#[test]
fn hand_written_models_are_checked() {
    let mut rng = ChaCha8Rng::seed_from_u64(101);
    let method = methods::get("smgp").expect("smgp");
    let mut sm = random_sm(2, 3, &mut rng).model();
    method.check(&sm).expect("valid");
    let mut f = sm.require::<Features>().expect("f");
    f.widths.as_mut().expect("w")[1][0] = 0.9 * sm.hyper.lengthscales[0];
    sm.set(&f);
    let e = method.check(&sm).expect_err("width below ℓ");
    assert!(e.to_string().contains("feature 2"), "{e}");
    let fif = methods::get("fifgp").expect("fifgp");
    let mut model = random_fif(2, 3, true, &mut rng).model(true);
    model.method = "fifgp".into();
    assert!(fif.check(&model).is_err(), "fifgp takes no centres");
    let mut model = random_fif(2, 3, false, &mut rng).model(false);
    let mut f = model.require::<Features>().expect("f");
    f.phases = Some(vec![0.0; 2]);
    model.set(&f);
    assert!(
        fif.check(&model).is_err(),
        "phases/frequencies count mismatch"
    );
    // a hand-written TOML model as in the issue
    let text = r#"
method = "tfifgp"
target_mean = 0.5
input_mean = [0.0, 1.0]
[hyper]
signal_variance = 1.0
lengthscales = [1.0, 2.0]
noise_variance = 0.1
[features]
window_widths = [1.0, 1.5]
frequencies = [[0.3, -1.1], [0.2, 0.4]]
phases = [0.1, 2.0]
centres = [[0.0, 0.0], [0.5, -0.5]]
"#;
    let model = ModelFile::parse(text).expect("parses");
    let x = DMatrix::from_row_slice(3, 2, &[0.0, 1.0, 1.0, 0.0, -1.0, 2.0]);
    let y = vec![1.0, 0.2, 0.7];
    let p = train::Predictor::new(model, Some((&x, &y)))
        .expect("predictor")
        .predict(&x)
        .expect("predicts");
    assert!(p.mean.iter().chain(&p.var_noisy).all(|v| v.is_finite()));
}

#[test]
fn initialisation_follows_the_paper() {
    let data = toy_data(300, 2, 111);
    let spec = |method: &str, centres: Option<Centres>| RunSpec {
        method: method.into(),
        m: 200,
        seed: 1,
        iters: 5,
        standardize: false,
        options: MethodOptions {
            centres,
            ..Default::default()
        },
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let fif = methods::get("fifgp").expect("fifgp");
    let model = init(fif, &data, &spec("fifgp", None), &mut rng).expect("init");
    let mean: Vec<f64> = (0..2).map(|d| data.x.column(d).mean()).collect();
    assert_close(
        "input_mean",
        &model.require::<InputMean>().expect("mean").0,
        &mean,
        1e-12,
    );
    let f = model.table::<Features>().expect("reads").expect("features");
    let sd: Vec<f64> = (0..2)
        .map(|d| {
            let c = data.x.column(d);
            (c.iter().map(|v| (v - mean[d]).powi(2)).sum::<f64>() / 299.0).sqrt()
        })
        .collect();
    assert_close(
        "window widths",
        f.window_widths.as_ref().expect("c"),
        &sd,
        1e-12,
    );
    let ph = f.phases.as_ref().expect("phases");
    assert!(ph.iter().all(|p| (0.0..2.0 * PI).contains(p)));
    // ω_d ~ N(0, ℓ_d⁻²): sample sd within 20% of 1/ℓ_d for 200 draws
    let fr = f.frequencies.as_ref().expect("freq");
    for d in 0..2 {
        let s = (fr.iter().map(|r| r[d] * r[d]).sum::<f64>() / 200.0).sqrt();
        let want = 1.0 / model.hyper.lengthscales[d];
        assert!((s / want - 1.0).abs() < 0.2, "ω sd {s} vs {want}");
    }
    let tf = methods::get("tfifgp").expect("tfifgp");
    let zero = init(tf, &data, &spec("tfifgp", None), &mut rng).expect("init");
    let c = zero
        .require::<Features>()
        .ok()
        .and_then(|f| f.centres)
        .expect("centres");
    assert!(c.iter().flatten().all(|v| *v == 0.0));
    let sub = init(tf, &data, &spec("tfifgp", Some(Centres::Subset)), &mut rng).expect("init");
    let c = sub
        .require::<Features>()
        .ok()
        .and_then(|f| f.centres)
        .expect("centres");
    // centred training inputs
    assert!(c.iter().all(|r| {
        (0..data.y.len()).any(|i| (0..2).all(|d| (data.x[(i, d)] - mean[d] - r[d]).abs() < 1e-12))
    }));
    // a value outside the declaration is an error where the options are read
    assert!(toml::from_str::<MethodOptions>("centres = \"middle\"").is_err());
    let sm = methods::get("smgp").expect("smgp");
    let model = init(sm, &data, &spec("smgp", None), &mut rng).expect("init");
    sm.check(&model).expect("valid smgp init");
}

/// End to end through `train::fit`, including the subset initialisation that replaces ℓ
/// after init (SMGP widths must stay above the new lengthscales).
#[test]
fn fits_run_end_to_end() {
    let td = toy_data(200, 2, 121);
    let test = toy_data(50, 2, 122);
    let data = Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into()],
        target_name: "y".into(),
        x_train: td.x.clone(),
        y_train: DVector::from_vec(td.y.clone()),
        x_test: Some(test.x.clone()),
        y_test: Some(DVector::from_vec(test.y.clone())),
        notes: Vec::new(),
    };
    for name in ["fifgp", "tfifgp", "smgp"] {
        let spec = RunSpec {
            method: name.into(),
            m: 10,
            seed: 1,
            iters: 60,
            standardize: false,
            options: MethodOptions {
                init_lengthscales_from_subset: Some(100),
                ..Default::default()
            },
        };
        let r = fit(&data, &spec)
            .0
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let t = r.test.expect("test metrics");
        let nmse = t.nmse.expect("defined");
        assert!(nmse < 0.1, "{name}: NMSE {nmse}");
        // the written model reads back and predicts the same
        let text = r.model.to_toml().expect("toml");
        let back = ModelFile::parse(&text).expect("parses");
        let p = train::Predictor::new(back, None).expect("stored posterior");
        let again = p.score(&test.x, &test.y).expect("score");
        assert!(
            (again.nmse.expect("defined") - nmse).abs() < 1e-12,
            "{name}"
        );
    }
}

// ------------------------------------------------------------ sums of SE kernels (issue 42)

/// A sum of two SE summands on two inputs: one on both, one on input 1 alone (ℓ = ∞ on
/// input 0: se1 is then 1 there, so the quadrature of each summand is the plain one).
const SE_SUM: &str = "se(var=1.3, ls=[0.8, 1.2]) + se(dims=[1], var=0.6, ls=0.5)";
const SE_SUM_PARTS: [(f64, [f64; 2]); 2] = [(1.3, [0.8, 1.2]), (0.6, [f64::INFINITY, 0.5])];

fn composed(mut model: ModelFile, text: &str) -> ModelFile {
    let d = model.hyper.lengthscales.len();
    model.composed = Some(sgpw::kernel::ComposedKernel::read(d, text).expect("reads"));
    model.hyper.lengthscales.clear();
    model
}

/// An SMGP model of kernel `text` whose windows have standard deviations `sds`.
fn sm_composed(s: &Sm, sds: &[Vec<f64>], text: &str) -> ModelFile {
    let mut model = composed(s.model(), text);
    model.set(&Features {
        centres: Some(s.cent.clone()),
        window_sds: Some(sds.to_vec()),
        ..Default::default()
    });
    model
}

/// The windows' standard deviations of a test: as wide as the plain kernel's would be.
fn random_sds(d: usize, m: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
    (0..m)
        .map(|_| (0..d).map(|_| rng.random_range(0.4..1.2)).collect())
        .collect()
}

/// SMGP's k(x, z_j) and k(z_j, z_k) of one SE summand by quadrature, the windows
/// N(μ_j, s_j²) given directly.
#[allow(clippy::too_many_arguments)]
fn sm_quadrature(
    sf2: f64,
    ell: &[f64],
    s: &Sm,
    sds: &[Vec<f64>],
    x: &[f64],
    j: usize,
    k: usize,
    q: &Normal1,
) -> (f64, f64) {
    let (mut kx, mut kz) = (sf2, sf2);
    for d in 0..ell.len() {
        let (vj, vk) = (sds[j][d].powi(2), sds[k][d].powi(2));
        kx *= q
            .points(s.cent[j][d], vj)
            .map(|(xp, w)| w * se1(x[d], xp, ell[d]))
            .sum::<f64>();
        let mut acc = 0.0;
        for (a, wa) in q.points(s.cent[j][d], vj) {
            for (b, wb) in q.points(s.cent[k][d], vk) {
                acc += wa * wb * se1(a, b, ell[d]);
            }
        }
        kz *= acc;
    }
    (kx, kz)
}

/// The closed forms of a sum of SE summands (one of them on one input alone) equal the
/// sums of each summand's defining integrals by quadrature, in all three families.
#[test]
fn sums_of_se_instances_match_quadrature_of_each_summand() {
    let mut rng = ChaCha8Rng::seed_from_u64(131);
    let m = 4;
    let q = Normal1::new(60);
    for tfif in [false, true] {
        let f = random_fif(2, m, tfif, &mut rng);
        let x = test_points(2, &mut rng);
        let model = composed(f.model(tfif), SE_SUM);
        let (kuf, kuu) = interdomain::instances(&model, &x).expect("instances");
        let summand = |(sf2, ell): (f64, [f64; 2])| Fif {
            sf2,
            ell: ell.to_vec(),
            win: f.win.clone(),
            freq: f.freq.clone(),
            phase: f.phase.clone(),
            cent: f.cent.clone(),
        };
        let parts: Vec<Fif> = SE_SUM_PARTS.into_iter().map(summand).collect();
        for j in 0..m {
            for i in 0..x.nrows() {
                let xi: Vec<f64> = x.row(i).iter().copied().collect();
                let want: f64 = parts.iter().map(|p| p.kxz_separable(&xi, j, &q)).sum();
                assert_abs(&format!("sum tfif={tfif} k(x{i}, z{j})"), kuf[(j, i)], want);
            }
            for k in 0..m {
                let want: f64 = parts.iter().map(|p| p.kzz_separable(j, k, &q)).sum();
                assert_abs(&format!("sum tfif={tfif} k(z{j}, z{k})"), kuu[(j, k)], want);
            }
        }
    }
    let s = random_sm(2, m, &mut rng);
    let sds = random_sds(2, m, &mut rng);
    let x = test_points(2, &mut rng);
    let (kuf, kuu) = interdomain::instances(&sm_composed(&s, &sds, SE_SUM), &x).expect("instances");
    for j in 0..m {
        for i in 0..x.nrows() {
            let xi: Vec<f64> = x.row(i).iter().copied().collect();
            for k in 0..m {
                let (kx, kz) = SE_SUM_PARTS.iter().fold((0.0, 0.0), |acc, (sf2, ell)| {
                    let (a, b) = sm_quadrature(*sf2, ell, &s, &sds, &xi, j, k, &q);
                    (acc.0 + a, acc.1 + b)
                });
                if k == 0 {
                    assert_abs(&format!("smgp sum k(x{i}, z{j})"), kuf[(j, i)], kx);
                }
                if i == 0 {
                    assert_abs(&format!("smgp sum k(z{j}, z{k})"), kuu[(j, k)], kz);
                }
            }
        }
    }
}

/// A kernel `se` built from parts is the plain SE kernel: the same NLML in all three
/// families (smgp's windows s² = c² − ℓ²).
#[test]
fn one_se_part_is_the_plain_kernel() {
    let data = toy_data(40, 2, 141);
    let mut rng = ChaCha8Rng::seed_from_u64(142);
    for tfif in [false, true] {
        let f = random_fif(2, 5, tfif, &mut rng);
        let plain = f.model(tfif);
        let text = format!("se(var={}, ls=[{}, {}])", f.sf2, f.ell[0], f.ell[1]);
        let (a, b) = (nlml(&plain, &data), nlml(&composed(plain, &text), &data));
        assert!((a - b).abs() < 1e-10 * a.abs(), "tfif={tfif}: {a} vs {b}");
    }
    let s = random_sm(2, 5, &mut rng);
    let sds: Vec<Vec<f64>> = s
        .wid
        .iter()
        .map(|r| {
            r.iter()
                .zip(&s.ell)
                .map(|(c, l)| (c * c - l * l).sqrt())
                .collect()
        })
        .collect();
    let text = format!("se(var={}, ls=[{}, {}])", s.sf2, s.ell[0], s.ell[1]);
    let (a, b) = (
        nlml(&s.model(), &data),
        nlml(&sm_composed(&s, &sds, &text), &data),
    );
    assert!((a - b).abs() < 1e-10 * a.abs(), "smgp: {a} vs {b}");
}

/// The NLML's gradient through every packed parameter (the kernel's blocks: each
/// summand's variance and lengthscales, a constant's, then σ² and the features) against
/// central differences, for sums of two SE parts on all inputs, one on its own dims,
/// and a product of SE parts on disjoint inputs times a constant, in all three families.
#[test]
fn sums_of_se_gradients_match_finite_differences() {
    let data = toy_data(40, 3, 151);
    let mut rng = ChaCha8Rng::seed_from_u64(152);
    let kernels = [
        "se(var=1.3, ls=[0.8, 1.2, 1.0]) + se(var=0.4, ls=[2.5, 0.6, 1.7])",
        "se(var=1.1, ls=[0.8, 1.2, 1.0]) + se(dims=[1], var=0.5, ls=0.4)",
        "constant(var=0.7) * se(dims=[0], ls=0.9) * se(dims=[2], var=1.2, ls=1.4) + se(dims=[1, 2], ls=[0.5, 2.0], var=0.3)",
    ];
    for text in kernels {
        for tfif in [false, true] {
            let mut model = composed(random_fif(3, 5, tfif, &mut rng).model(tfif), text);
            model.set(&InputMean(vec![0.2, -0.1, 0.3]));
            check_all_gradients(&format!("tfif={tfif} {text}"), &model, &data);
        }
        let s = random_sm(3, 5, &mut rng);
        let sds = random_sds(3, 5, &mut rng);
        check_all_gradients(&format!("smgp {text}"), &sm_composed(&s, &sds, text), &data);
    }
}

/// From the methods' own start with `--kernel` (smgp's windows then their own standard
/// deviations), fitted: the three families fit a sum of SE parts end to end, and the
/// written model reads back to the same scores.
#[test]
fn sums_of_se_fit_end_to_end_from_the_kernel_option() {
    let td = toy_data(150, 2, 161);
    let test = toy_data(40, 2, 162);
    let data = Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into()],
        target_name: "y".into(),
        x_train: td.x.clone(),
        y_train: DVector::from_vec(td.y.clone()),
        x_test: Some(test.x.clone()),
        y_test: Some(DVector::from_vec(test.y.clone())),
        notes: Vec::new(),
    };
    for name in ["fifgp", "tfifgp", "smgp"] {
        let spec = RunSpec {
            method: name.into(),
            m: 10,
            seed: 1,
            iters: 40,
            standardize: false,
            options: options("kernel = \"se + se(dims=[b])\"\nsingle_start = true"),
        };
        let r = fit(&data, &spec)
            .0
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = r.model.to_toml().expect("toml");
        assert!(text.contains("[kernel]"), "{name}: {text}");
        assert_eq!(
            text.contains("window_sds"),
            name == "smgp",
            "{name}: {text}"
        );
        let nmse = r.test.expect("test").nmse.expect("defined");
        assert!(nmse < 0.2, "{name}: NMSE {nmse}");
        let back = ModelFile::parse(&text).expect("parses");
        let again = train::Predictor::new(back, None)
            .expect("stored posterior")
            .score(&test.x, &test.y)
            .expect("score");
        assert!(
            (again.nmse.expect("defined") - nmse).abs() < 1e-12,
            "{name}"
        );
    }
}

/// Every kernel but a sum of SE summands is refused before any work, naming the part
/// and the reason.
#[test]
fn other_kernels_are_refused_naming_the_part() {
    for name in ["fifgp", "tfifgp", "smgp"] {
        for (text, part, why) in [
            ("se + matern32", "matern32", "closed form for SE parts only"),
            ("se * periodic", "periodic", "closed form for SE parts only"),
            ("se + linear", "linear", "closed form for SE parts only"),
            (
                "changepoints(se, se, locations=1)",
                "changepoints",
                "SE parts only",
            ),
            ("se + constant", "constants alone", "sums of se parts"),
            ("se * (se + se)", "a sum inside a product", "closed-form"),
        ] {
            let spec = RunSpec {
                method: name.into(),
                m: 5,
                seed: 1,
                iters: 5,
                standardize: false,
                options: options(&format!("kernel = \"{text}\"")),
            };
            let e = spec.check(100).expect_err("refused").to_string();
            assert!(
                e.contains(part) && e.contains(why) && e.contains(name),
                "{name} {text}: {e}"
            );
        }
    }
    // a model file with such a kernel is refused when read, at [kernel]
    let mut rng = ChaCha8Rng::seed_from_u64(171);
    let model = composed(
        random_fif(2, 3, false, &mut rng).model(false),
        "se + matern52",
    );
    let Err(e) = model.check() else {
        panic!("a refused kernel was read")
    };
    let e = e.to_string();
    assert!(e.contains("[kernel]") && e.contains("matern52"), "{e}");
}

/// An L-BFGS fit holds the inter-domain features as a typed state (issue 44), which θ is
/// unpacked into without a model file: the same objective and gradient as the model
/// file's, bit for bit — fifgp, tfifgp and smgp, with the plain SE kernel and with a
/// sum of SE parts (smgp's `window_sds`), FITC and VFE, a noise floor, and fixed blocks.
#[test]
fn the_typed_state_evaluates_to_the_model_files_bits() {
    let data = toy_data(60, 2, 171);
    let mut rng = ChaCha8Rng::seed_from_u64(172);
    let fixes: [&[&str]; 3] = [
        &[],
        &["lengthscales", "noise_variance"],
        &["signal_variance", "features"],
    ];
    for (k, fixed) in fixes.into_iter().enumerate() {
        let sm = random_sm(2, 6, &mut rng);
        let sds = random_sds(2, 6, &mut rng);
        let mut models = vec![
            ("smgp", sm.model()),
            ("smgp + se", sm_composed(&sm, &sds, SE_SUM)),
        ];
        for tfif in [false, true] {
            let mut model = random_fif(2, 6, tfif, &mut rng).model(tfif);
            model.set(&InputMean(vec![0.2, -0.1]));
            models.push((if tfif { "tfifgp" } else { "fifgp" }, model.clone()));
            models.push((
                if tfif { "tfifgp + se" } else { "fifgp + se" },
                composed(model, SE_SUM),
            ));
        }
        for (what, mut model) in models {
            model.noise_floor = Some(0.01);
            model.fixed = fixed.iter().map(|f| f.to_string()).collect();
            if k == 1 {
                model.approx = Some(sgpw::run_spec::ApproxKind::Vfe);
            }
            let method = methods::get(&model.method).expect("a method");
            assert_typed_state_is_the_files(method, &model, &data, &format!("{what} {fixed:?}"));
        }
    }
}
