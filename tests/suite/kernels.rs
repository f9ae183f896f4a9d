//! The kernel choice (docs/methods.md, "Kernels"): every method × kernel pair its
//! mathematics allows has a gradient that matches finite differences (hyperparameters,
//! rq's shape, inducing inputs and the other tables), the pairs it refuses are refused
//! with a reason before any work, the O(n·m²) objective with a Matérn kernel equals a
//! dense O(n³) evaluation, spectral features of a Matérn kernel converge to it as the
//! points grow, and model and session files carry the kernel (old ones read as se).

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::collapsed::Approx;
use sgpw::exec::Par;
use sgpw::kernel::{Ard, Kernel, KernelBlock, KernelGrad, KernelKind, ModelKernel};
use sgpw::methods::pseudo::Inducing;
use sgpw::methods::pseudo::{self, PseudoState};
use sgpw::methods::spectrum;
use sgpw::methods::{self, Method};
use sgpw::model_file::ModelFile;
use sgpw::optim;
use sgpw::params::ParamLayout;
use sgpw::run_spec::{MethodOptions, RunSpec};
use sgpw::scratch::Scratch;
use std::f64::consts::PI;

const KINDS: [KernelKind; 5] = [
    KernelKind::Se,
    KernelKind::Matern12,
    KernelKind::Matern32,
    KernelKind::Matern52,
    KernelKind::Rq,
];

fn spec(method: &str, m: usize, options: MethodOptions) -> RunSpec {
    RunSpec {
        method: method.into(),
        m,
        seed: 2,
        iters: 20,
        standardize: false,
        options,
    }
}

/// The options each method needs besides the kernel.
fn options_for(method: &str, kernel: KernelKind) -> MethodOptions {
    MethodOptions {
        kernel: Some(kernel.into()),
        dims: matches!(method, "spgp-dr" | "pca-spgp").then_some(1),
        hetero: method == "spgp-dr",
        ..Default::default()
    }
}

/// A model of `method` with `kernel`, its packed parameters moved off the start (so no
/// inducing input sits on a training input, where Matérn 1/2 has a kink).
fn model_for(method: &dyn Method, kernel: KernelKind, data: &TrainData) -> ModelFile {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let s = spec(method.name(), 5, options_for(method.name(), kernel));
    let mut model = init(method, data, &s, &mut rng).expect("init");
    let mut theta = method.pack(&model);
    for (i, t) in theta.iter_mut().enumerate() {
        *t += 0.07 * ((i as f64) * 1.7 + 0.3).sin();
    }
    method.unpack(&theta, &mut model);
    model.jitter = Some(1e-6);
    model
}

#[test]
fn every_allowed_pair_has_gradients_that_match_finite_differences() {
    let data = toy_data(40, 2, 11);
    let mut checked = 0;
    for method in methods::registry() {
        for kind in KINDS {
            let s = spec(method.name(), 5, options_for(method.name(), kind));
            if method.refuses_kernel(kind).is_some() {
                continue;
            }
            s.check(data.y.len())
                .unwrap_or_else(|e| panic!("{} {kind}: {e}", method.name()));
            let model = model_for(*method, kind, &data);
            assert_eq!(model.hyper.kernel, kind, "{}", method.name());
            method.check(&model).expect("valid");
            let theta = method.pack(&model);
            let o = method.objective(&model, &data, &ex()).expect("objective");
            assert_eq!(theta.len(), o.grad.len(), "{} {kind}", method.name());
            let mut scratch = model.clone();
            check_gradient(
                &format!("{} {kind}", method.name()),
                &mut |t: &[f64]| {
                    method.unpack(t, &mut scratch);
                    method.nlml(&scratch, &data, &ex()).expect("nlml")
                },
                &theta,
                &o.grad,
                1e-5,
                1e-5,
            );
            checked += 1;
        }
    }
    // 16 methods with every kernel, psds and ssgp without rq, the inter-domain three
    // with se only
    assert_eq!(checked, 16 * 5 + 2 * 4 + 3, "pairs checked");
}

#[test]
fn refused_pairs_say_why_before_any_work() {
    for method in ["fifgp", "tfifgp", "smgp"] {
        for kind in &KINDS[1..] {
            let e = spec(method, 5, options_for(method, *kind))
                .check(100)
                .expect_err("refused");
            let msg = e.to_string();
            assert!(
                msg.contains("--kernel") && msg.contains("closed form") && msg.contains(method),
                "{msg}"
            );
        }
    }
    for method in ["psds", "ssgp"] {
        let e = spec(method, 5, options_for(method, KernelKind::Rq))
            .check(100)
            .expect_err("refused");
        let msg = e.to_string();
        assert!(
            msg.contains("spectral density") && msg.contains("rq"),
            "{msg}"
        );
    }
    // a model file with a refused kernel is refused when read, at its key
    let data = toy_data(30, 2, 5);
    let fifgp = methods::get("fifgp").expect("fifgp");
    let mut model = model_for(fifgp, KernelKind::Se, &data);
    model.hyper.kernel = KernelKind::Matern32;
    let Err(e) = model.check() else {
        panic!("a refused kernel was read")
    };
    assert!(e.to_string().contains("closed form"), "{e}");
}

/// The dense O(n³) objective of a pseudo-input model with any kernel: Gaussian NLML
/// with C = Q + a·diag(K − Q) + σ²I plus the approximation's extra term.
fn dense(model: &ModelFile, data: &TrainData, a: f64, extra: &dyn Fn(f64, f64) -> f64) -> f64 {
    let k = model.kernel();
    let rows = model.table::<Inducing>().expect("reads").expect("z").points;
    let z = DMatrix::from_fn(rows.len(), 2, |i, d| rows[i][d]);
    let mut kuu = k.gram(&z, Par::Seq);
    for i in 0..kuu.nrows() {
        kuu[(i, i)] += model.jitter.expect("fixed");
    }
    let kuf = k.matrix(&z, &data.x, Par::Seq);
    let q = kuf.transpose() * kuu.cholesky().expect("spd").solve(&kuf);
    let n = data.y.len();
    let s2 = model.hyper.noise_variance;
    let kdiag = k.diag(&data.x);
    let mut c = q.clone();
    let mut e = 0.0;
    for i in 0..n {
        let d = kdiag[i] - q[(i, i)];
        c[(i, i)] += a * d + s2;
        e += extra(d, s2);
    }
    let l = c.cholesky().expect("spd");
    let y = DVector::from_column_slice(&data.y);
    let alpha = l.l().solve_lower_triangular(&y).expect("solves");
    0.5 * alpha.norm_squared()
        + l.l().diagonal().iter().map(|v| v.ln()).sum::<f64>()
        + 0.5 * n as f64 * (2.0 * PI).ln()
        + e
}

#[test]
fn the_fast_objective_equals_a_dense_evaluation_with_matern_and_rq() {
    let data = toy_data(150, 2, 17);
    for kind in [KernelKind::Matern52, KernelKind::Matern12, KernelKind::Rq] {
        for (method, a) in [("fitc", 1.0), ("vfe", 0.0), ("dtc", 0.0)] {
            let meth = methods::get(method).expect("method");
            let model = model_for(meth, kind, &data);
            let extra = |d: f64, s2: f64| if method == "vfe" { d / (2.0 * s2) } else { 0.0 };
            let want = dense(&model, &data, a, &extra);
            let got = meth.nlml(&model, &data, &ex()).expect("nlml");
            assert!(
                ((got - want) / want).abs() < 1e-10,
                "{method} {kind}: {got} vs {want}"
            );
        }
    }
}

/// The kernels' values against their textbook formulas (GPflow's parameterisation).
#[test]
fn kernel_values_are_the_formulas() {
    let a = DMatrix::from_row_slice(1, 2, &[0.3, -0.4]);
    let b = DMatrix::from_row_slice(1, 2, &[-0.5, 0.9]);
    let ell = [0.7, 1.6];
    let r = ((0.8f64 / ell[0]).powi(2) + (1.3f64 / ell[1]).powi(2)).sqrt();
    let sf2 = 1.7;
    let alpha = 2.5;
    for (kind, want) in [
        (KernelKind::Se, sf2 * (-0.5 * r * r).exp()),
        (KernelKind::Matern12, sf2 * (-r).exp()),
        (
            KernelKind::Matern32,
            sf2 * (1.0 + 3f64.sqrt() * r) * (-(3f64.sqrt()) * r).exp(),
        ),
        (
            KernelKind::Matern52,
            sf2 * (1.0 + 5f64.sqrt() * r + 5.0 * r * r / 3.0) * (-(5f64.sqrt()) * r).exp(),
        ),
        (
            KernelKind::Rq,
            sf2 * (1.0 + r * r / (2.0 * alpha)).powf(-alpha),
        ),
    ] {
        let k = Ard {
            kind,
            signal_variance: sf2,
            lengthscales: ell.to_vec(),
            rq_alpha: alpha,
        };
        let got = k.matrix(&a, &b, Par::Seq)[(0, 0)];
        assert!((got - want).abs() < 1e-14, "{kind}: {got} vs {want}");
        assert_eq!(k.gram(&a, Par::Seq)[(0, 0)], sf2, "{kind}: k(x, x)");
        assert_eq!(k.diag(&DMatrix::zeros(3, 2)), vec![sf2; 3]);
    }
}

/// Spectral points drawn from a Matérn kernel's spectral density (ssgp's random start)
/// and mapped from the Hammersley set (psds): the feature inner products
/// (σ0²/r) Σ_k cos(w_kᵀ(x − x')) approach k(x, x') as r grows. The Monte-Carlo error of r
/// draws is below 1/√(2r) in standard deviation; the tolerance is six of them.
#[test]
fn spectral_features_converge_to_the_matern_kernels() {
    let x = DMatrix::from_row_slice(4, 2, &[0.0, 0.0, 0.3, -0.2, 1.1, 0.4, -0.6, 1.5]);
    let ell = [0.8, 1.3];
    let sf2 = 1.4;
    for kind in [
        KernelKind::Matern12,
        KernelKind::Matern32,
        KernelKind::Matern52,
    ] {
        let kern = Ard {
            kind,
            signal_variance: sf2,
            lengthscales: ell.to_vec(),
            rq_alpha: 1.0,
        };
        let exact = kern.gram(&x, Par::Seq);
        let approx = |s: DMatrix<f64>| {
            let r = s.nrows();
            let w = DMatrix::from_fn(r, 2, |i, d| s[(i, d)] / ell[d]);
            let phi = spectrum::features(&w, &x, Par::Seq);
            (phi.transpose() * phi) * (sf2 / r as f64)
        };
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut errors = Vec::new();
        for r in [50, 500, 20_000] {
            let drawn = spectrum::draw_points(&kern, r, 2, &mut rng).expect("a sampler");
            let err = (approx(drawn) - &exact).amax();
            let tol = 6.0 * sf2 / (2.0 * r as f64).sqrt();
            assert!(err < tol, "{kind}, {r} draws: {err} ≥ {tol}");
            errors.push(err);
        }
        assert!(errors[2] < errors[0], "{kind}: {errors:?}");
        let fixed = spectrum::kernel_points(&kern, 20_000, 2).expect("a sampler");
        let err = (approx(fixed) - &exact).amax();
        assert!(err < 0.03, "{kind}, Hammersley points: {err}");
    }
    let rq = Ard::new(KernelKind::Rq, 1.0, vec![1.0; 2], 1.0);
    assert!(spectrum::kernel_points(&rq, 10, 2).is_none());
}

#[test]
fn model_files_carry_the_kernel_and_old_ones_read_as_se() {
    let data = toy_data(30, 2, 5);
    let fitc = methods::get("fitc").expect("fitc");
    let model = model_for(fitc, KernelKind::Rq, &data);
    let text = model.to_toml().expect("writes");
    assert!(
        text.contains("kernel = \"rq\"") && text.contains("rq_alpha"),
        "{text}"
    );
    let back = ModelFile::parse(&text).expect("reads");
    assert_eq!(back, model);
    back.check().expect("valid");
    // a model written before there was a kernel choice: no key, read as se
    let se = model_for(fitc, KernelKind::Se, &data);
    let text = se.to_toml().expect("writes");
    assert!(
        !text.contains("kernel") && !text.contains("rq_alpha"),
        "{text}"
    );
    assert_eq!(
        ModelFile::parse(&text).expect("reads").hyper.kernel,
        KernelKind::Se
    );
    // rq without its α, α without rq, an unknown kernel: errors that say what to do
    let no_alpha = model.to_toml().expect("writes");
    let no_alpha: String = no_alpha
        .lines()
        .filter(|l| !l.starts_with("rq_alpha"))
        .map(|l| format!("{l}\n"))
        .collect();
    let Err(e) = ModelFile::parse(&no_alpha).expect("parses").check() else {
        panic!("rq without α was read")
    };
    assert!(e.to_string().contains("rq_alpha"), "{e}");
    let mut stray = se.clone();
    stray.hyper.rq_alpha = Some(2.0);
    let Err(e) = stray.check() else {
        panic!("α without rq was read")
    };
    assert!(e.to_string().contains("remove rq_alpha"), "{e}");
    let bad = text.replace("[hyper]\n", "[hyper]\nkernel = \"matern\"\n");
    let e = ModelFile::parse(&bad).expect_err("unknown kernel");
    assert!(e.contains("matern52"), "{e}");
}

#[test]
fn sessions_and_labels_carry_the_kernel() {
    // an old session's options (no key) are se, and the label has no tag
    let old = options("subset = 100");
    assert_eq!(old.kernel, None);
    let s = spec("vfe", 10, old);
    assert_eq!(s.default_label(), "vfe-sub100");
    let new = options("kernel = \"matern52\"");
    assert_eq!(new.kernel, Some(KernelKind::Matern52.into()));
    assert_eq!(spec("vfe", 10, new.clone()).default_label(), "vfe-matern52");
    // se written out is the same setup as no key
    let se = options("kernel = \"se\"");
    assert_eq!(se.canonical(), MethodOptions::default());
    assert_eq!(spec("vfe", 10, se).default_label(), "vfe");
    let e = toml::from_str::<MethodOptions>("kernel = \"matern\"").expect_err("unknown");
    assert!(e.to_string().contains("matern52"), "{e}");
    // the app's form parses it as the command line does
    let parsed =
        sgpw::run_spec::parse_options(&[("kernel".into(), "matern52".into())]).expect("parses");
    assert_eq!(parsed, new);
}

/// k(x, x') = σ² cos(2π Σ_d (x_d − x'_d)/p_d): a kernel defined outside the crate
/// (docs/architecture.md, "How to add a kernel"), its parameters log σ² and log p.
#[derive(Clone, Debug)]
struct Cosine {
    variance: f64,
    periods: Vec<f64>,
}

impl Cosine {
    /// u = 2π Σ_d (a_id − b_jd)/p_d
    fn phase(&self, a: &DMatrix<f64>, i: usize, b: &DMatrix<f64>, j: usize) -> f64 {
        (0..self.periods.len())
            .map(|d| 2.0 * PI * (a[(i, d)] - b[(j, d)]) / self.periods[d])
            .sum()
    }
}

impl Kernel for Cosine {
    fn name(&self) -> &'static str {
        "cosine"
    }
    fn dim(&self) -> usize {
        self.periods.len()
    }
    fn blocks(&self) -> Vec<KernelBlock> {
        vec![
            KernelBlock::new("signal_variance", vec![self.variance]),
            KernelBlock::new("periods", self.periods.clone()),
        ]
    }
    fn params_len(&self) -> usize {
        1 + self.periods.len()
    }
    fn set_log_params(&mut self, theta: &[f64]) {
        self.variance = theta[0].exp();
        for (p, t) in self.periods.iter_mut().zip(&theta[1..]) {
            *p = t.exp();
        }
    }
    fn hold_block(&mut self, from: &dyn Kernel, name: &str) {
        for b in from.blocks().into_iter().filter(|b| b.name == name) {
            match name {
                "signal_variance" => self.variance = b.values[0],
                _ => self.periods.copy_from_slice(&b.values),
            }
        }
    }
    fn matrix_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        _par: Par,
        _scratch: &Scratch,
    ) -> DMatrix<f64> {
        DMatrix::from_fn(a.nrows(), b.nrows(), |i, j| {
            self.variance * self.phase(a, i, b, j).cos()
        })
    }
    fn diag_in(&self, x: &DMatrix<f64>, _scratch: &Scratch) -> Vec<f64> {
        vec![self.variance; x.nrows()]
    }
    fn diag_grad(&self, _x: &DMatrix<f64>, adj: &[f64], out: &mut [f64]) {
        out[0] += self.variance * adj.iter().sum::<f64>();
    }
    fn prior_variance(&self) -> Option<f64> {
        Some(self.variance)
    }
    fn log_prior_variance_grad(&self, d: f64, out: &mut [f64]) {
        out[0] += d;
    }
    fn grad_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        k: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        want_a: bool,
        want_b: bool,
        _par: Par,
        _scratch: &Scratch,
    ) -> KernelGrad {
        let dim = self.dim();
        let mut params = vec![0.0; 1 + dim];
        let mut ga = want_a.then(|| DMatrix::zeros(a.nrows(), dim));
        let mut gb = want_b.then(|| DMatrix::zeros(b.nrows(), dim));
        for i in 0..a.nrows() {
            for j in 0..b.nrows() {
                params[0] += adj[(i, j)] * k[(i, j)];
                // adj · ∂k/∂u, k = σ² cos u
                let s = -adj[(i, j)] * self.variance * self.phase(a, i, b, j).sin();
                for d in 0..dim {
                    let c = 2.0 * PI / self.periods[d];
                    // ∂u/∂log p_d = −c (a_d − b_d), ∂u/∂a_d = c = −∂u/∂b_d
                    params[1 + d] -= s * c * (a[(i, d)] - b[(j, d)]);
                    if let Some(g) = &mut ga {
                        g[(i, d)] += s * c;
                    }
                    if let Some(g) = &mut gb {
                        g[(j, d)] -= s * c;
                    }
                }
            }
        }
        KernelGrad {
            params,
            a: ga,
            b: gb,
        }
    }
    fn is_stationary(&self) -> bool {
        true
    }
    fn clone_box(&self) -> Box<dyn Kernel> {
        Box::new(self.clone())
    }
}

/// A kernel defined here, outside the crate, enters fitc and vfe through the pseudo
/// family's typed state (no model file names it): its contraction and the objective's
/// gradient in its parameters, σ² and the inducing inputs match finite differences,
/// and an L-BFGS fit through the typed model lowers the objective.
#[test]
fn a_kernel_defined_in_the_test_fits_with_fitc_and_vfe() {
    let cos = Cosine {
        variance: 0.8,
        periods: vec![2.5, 4.0],
    };
    // the kernel's own contraction, into its parameters and both sets of points
    let a = DMatrix::from_fn(4, 2, |i, d| ((i * 3 + d) as f64 * 0.7).sin());
    let b = DMatrix::from_fn(3, 2, |i, d| ((i * 5 + d * 2) as f64 * 0.3).cos());
    let adj = DMatrix::from_fn(4, 3, |i, j| (i as f64 - 1.5 * j as f64).sin());
    let g = cos.grad(
        &a,
        &b,
        &cos.matrix(&a, &b, Par::Seq),
        &adj,
        true,
        true,
        Par::Seq,
    );
    let contracted = |k: &Cosine, a: &DMatrix<f64>, b: &DMatrix<f64>| {
        k.matrix(a, b, Par::Seq).component_mul(&adj).sum()
    };
    let mut theta = vec![cos.variance.ln(), cos.periods[0].ln(), cos.periods[1].ln()];
    theta.extend(a.iter());
    theta.extend(b.iter());
    let mut want = g.params.clone();
    want.extend(g.a.expect("asked").iter());
    want.extend(g.b.expect("asked").iter());
    let mut at = |t: &[f64]| {
        let mut k = cos.clone();
        k.set_log_params(&t[..3]);
        let a = DMatrix::from_column_slice(4, 2, &t[3..11]);
        let b = DMatrix::from_column_slice(3, 2, &t[11..]);
        contracted(&k, &a, &b)
    };
    check_gradient("cosine contraction", &mut at, &theta, &want, 1e-6, 1e-6);

    let data = toy_data(40, 2, 5);
    let m = 2;
    for (method, approx) in [(&pseudo::FITC, Approx::Fitc), (&pseudo::VFE, Approx::Vfe)] {
        let z = data.x.rows(0, m).into_owned();
        let state = PseudoState::new(
            ModelKernel::from(cos.clone_box()),
            z.clone(),
            None,
            0.3,
            0.0,
            None,
        );
        let mut typed = method.typed_from(state, approx);
        // θ = [log σ², log p, log σ², Z]
        let mut theta0 = vec![0.8f64.ln(), 2.5f64.ln(), 4.0f64.ln(), 0.3f64.ln()];
        theta0.extend(z.iter());
        let layout = ParamLayout::unfixed(theta0.len());
        let mut eval = |t: &[f64]| -> sgpw::error::Result<(f64, Vec<f64>)> {
            typed.unpack(t, &layout);
            let mut grad = Vec::new();
            let (nlml, _) = typed
                .objective_into(&data, &ex(), &mut grad)
                .expect("evaluates");
            Ok((nlml, grad))
        };
        let (f0, g0) = eval(&theta0).expect("evaluates");
        let mut value = |t: &[f64]| eval(t).expect("evaluates").0;
        check_gradient(method.name, &mut value, &theta0, &g0, 1e-5, 1e-4);
        let options = optim::Options {
            max_iters: 30,
            ..Default::default()
        };
        let out = optim::minimize(eval, &theta0, &options, &mut |_: &optim::IterInfo| {
            optim::Control::Continue
        })
        .expect("fits");
        assert!(out.f < f0 - 1e-3, "{}: {} from {f0}", method.name, out.f);
    }
}
