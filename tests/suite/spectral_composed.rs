//! psds and ssgp with kernels built from parts (issue 42; docs/methods.md §4.4): the
//! features' inner products converge to the kernel as the spectral points grow (a sum,
//! a product over disjoint inputs, periodic kernels), the objectives' gradients match
//! finite differences for every new form, and the forms without a spectral density are
//! refused naming the part.

use crate::common::*;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::data::TrainData;
use sgpw::exec::Par;
use sgpw::kernel::expression::KernelExpr;
use sgpw::kernel::{ComposedKernel, Kernel, Start, build};
use sgpw::methods::spectrum::{composed, form};
use sgpw::model_file::ModelFile;
use sgpw::run_spec::{MethodOptions, RunSpec};

fn start(d: usize) -> Start {
    Start {
        columns: (0..d).map(|i| format!("x{i}")).collect(),
        variance: 1.0,
        lengthscales: vec![0.8; d],
        periods: vec![1.3; d],
        mean_squares: vec![1.0; d],
    }
}

fn kernel(text: &str, d: usize) -> Box<dyn Kernel> {
    build(&KernelExpr::parse(text).expect("parses"), &start(d)).expect("builds")
}

/// q(x, z) = φ(x)ᵀ Kuu⁻¹ φ(z) of the spectral form of `k` with m points (drawn at
/// random from `seed` when given, else the psds Hammersley points).
fn approx(k: &dyn Kernel, m: usize, seed: Option<u64>, x: &DMatrix<f64>) -> DMatrix<f64> {
    let f = form::of_kernel(k).expect("a spectral form");
    let mut rng = seed.map(ChaCha8Rng::seed_from_u64);
    let p = composed::init_points(&f, m, rng.as_mut()).expect("points");
    let e = composed::evaluate(&f, &p).expect("evaluates");
    let phi = composed::features(&f, &e, x, Par::Seq);
    let kuu = composed::kuu_diagonal(&e);
    let mut scaled = phi.clone();
    for (j, mut row) in scaled.row_iter_mut().enumerate() {
        row /= kuu[j];
    }
    phi.transpose() * scaled
}

/// The root mean square of q − k over pairs of `x`.
fn rms_error(k: &dyn Kernel, m: usize, seed: Option<u64>, x: &DMatrix<f64>) -> f64 {
    let exact = k.gram(x, Par::Seq);
    let q = approx(k, m, seed, x);
    ((q - &exact).norm_squared() / exact.len() as f64).sqrt()
}

fn points(n: usize, d: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, d, |i, j| 2.0 * ((i * 7 + j * 3) as f64 * 0.61).sin())
}

/// Random spectral points: the error of φ(x)ᵀφ(z) against k(x, z) falls like 1/√m —
/// averaged over 8 seeds, within a factor 2 of C/√m from m = 64 to 4096 (C fitted at
/// m = 64: the ratio from 64 to 4096 is 8, so the error at 4096 must be below 1/4 of
/// that at 64), and below an absolute 0.05 at m = 4096 (a wrong split or wrong weights
/// leave a bias that does not fall: a sum's term given the whole variance, a periodic
/// term's Bessel weights off by a factor). Seeds 1..=8.
#[test]
fn feature_inner_products_converge_to_composed_kernels() {
    let cases = [
        ("sum", "se(dims=[0], var=2) + matern32(dims=[1], ls=0.5)", 2),
        (
            "disjoint product",
            "se(dims=[0]) * matern52(dims=[1], ls=1.5)",
            2,
        ),
        ("2-d periodic", "periodic(ls=[0.6, 1.2], period=[1, 2])", 2),
        (
            "se × periodic",
            "se(ls=3) * periodic(ls=0.7, period=1.1)",
            1,
        ),
        (
            "rq + periodic",
            "rq(dims=[0], alpha=2) + periodic(dims=[1], ls=0.5)",
            2,
        ),
        ("spectral mixture", "spectral_mixture(q=2)", 2),
    ];
    for (what, text, d) in cases {
        let k = kernel(text, d);
        let x = points(25, d);
        let mean = |m: usize| (1..=8).map(|s| rms_error(&*k, m, Some(s), &x)).sum::<f64>() / 8.0;
        let (e64, e4096) = (mean(64), mean(4096));
        assert!(
            e4096 < e64 / 4.0 && e4096 > e64 / 16.0 && e4096 < 0.05,
            "{what}: rms error {e64} at m = 64, {e4096} at m = 4096"
        );
    }
}

/// A periodic kernel on one input is its cosine series truncated: with r harmonics the
/// error is the series' tail, below 1e-12 at r = 30 (ℓ = 0.5: z = 1), and the prior
/// variance is exact; the deterministic points of a sum keep their split.
#[test]
fn a_periodic_kernel_on_one_input_is_its_truncated_series() {
    let k = kernel("periodic(ls=0.5, period=1.3, var=2)", 1);
    let x = points(30, 1);
    let tail = |r: usize| rms_error(&*k, r, None, &x);
    assert!(tail(2) > 1e-3, "{}", tail(2));
    assert!(tail(30) < 1e-12, "{}", tail(30));
    // the weights e^{−z} I_k(z) against the series of I_k at z = 1
    let c = form::bessel_weights(1.0, 4);
    let series = |k: i32| {
        (0..30)
            .map(|j| {
                let f = |n: i32| (1..=n).map(f64::from).product::<f64>();
                0.5f64.powi(2 * j + k) / (f(j) * f(j + k))
            })
            .sum::<f64>()
            * (-1.0f64).exp()
    };
    for (k, ck) in c.iter().enumerate() {
        assert!((ck - series(k as i32)).abs() < 1e-15, "c_{k} = {ck}");
    }
    // psds's split: 10 points among 3 terms, 4 + 3 + 3
    let sum = kernel("se + periodic + matern12", 1);
    let f = form::of_kernel(&*sum).expect("a form");
    let p = composed::init_points(&f, 10, None).expect("points");
    let per_term: Vec<usize> = (0..3)
        .map(|t| p.term.iter().filter(|x| **x == t).count())
        .collect();
    assert_eq!(per_term, [4, 3, 3]);
    assert!(composed::init_points(&f, 2, None).is_err());
}

/// rq's radial factor: the Gamma quantile and its derivative in the shape against
/// finite differences.
#[test]
fn the_gamma_quantile_and_its_shape_derivative() {
    use statrs::distribution::{ContinuousCDF, Gamma};
    for (a, h) in [(0.7, 0.3), (2.89, 0.9), (1.0, 0.01), (5.0, 0.999)] {
        let (q, dq) = composed::gamma_quantile(a, h);
        let g = Gamma::new(a, 1.0).expect("a gamma");
        assert!((g.cdf(q) - h).abs() < 1e-12, "{a} {h}");
        let eps = 1e-6;
        let fd = (composed::gamma_quantile(a + eps, h).0 - composed::gamma_quantile(a - eps, h).0)
            / (2.0 * eps);
        assert!(
            (dq - fd).abs() < 1e-6 * fd.abs().max(1.0),
            "{a} {h}: {dq} vs {fd}"
        );
    }
}

/// A psds or ssgp model of `kernel` on `data` (its points made by the method, as a fit
/// makes them), the kernel's parameters moved off their start.
fn model(method: &str, text: &str, data: &TrainData, m: usize) -> ModelFile {
    let meth = sgpw::methods::get(method).expect("a method");
    let spec = RunSpec {
        method: method.into(),
        m,
        seed: 2,
        iters: 20,
        standardize: false,
        options: MethodOptions::default(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut model = init(meth, data, &spec, &mut rng).expect("inits");
    let mut k = kernel(text, data.x.ncols());
    let theta: Vec<f64> = k
        .log_params()
        .iter()
        .enumerate()
        .map(|(i, t)| t + 0.15 * ((i as f64) * 1.7).sin())
        .collect();
    k.set_log_params(&theta);
    model.composed = ComposedKernel::new(k);
    model.hyper.lengthscales.clear();
    let valid = spec.check(data.y.len()).expect("valid");
    meth.init_for_kernel(&mut model, &valid, &mut rng)
        .expect("points");
    sgpw::methods::method::check_model(meth, &model).expect("a valid model");
    model
}

/// The objective's gradient (the kernel's parameters, σ², and ssgp's points) against
/// central finite differences, for every new form in psds and ssgp.
#[test]
fn composed_spectral_gradients_match_finite_differences() {
    let data = toy_data(40, 2, 5);
    let kernels = [
        "se(dims=[0]) + matern32(dims=[1])",
        "se(dims=[0]) * matern52(dims=[1])",
        "periodic(dims=[0], ls=0.6) + se(dims=[1])",
        "se * periodic(dims=[0], ls=0.7)",
        "periodic(ls=[0.6, 0.9])",
        "linear + se",
        "polynomial(degree=2) + constant * se(dims=[1])",
        "rq(dims=[0], alpha=1.5) + se(dims=[1])",
        "spectral_mixture(q=2)",
    ];
    for method in ["psds", "ssgp"] {
        let meth = sgpw::methods::get(method).expect("a method");
        for text in kernels {
            let model = model(method, text, &data, 12);
            let theta = meth.pack(&model);
            let obj = meth.objective(&model, &data, &ex()).expect("evaluates");
            assert_eq!(obj.grad.len(), theta.len(), "{method} {text}");
            let mut f = |t: &[f64]| {
                let mut mm = model.clone();
                meth.unpack(t, &mut mm);
                meth.nlml(&mm, &data, &ex()).expect("evaluates")
            };
            check_gradient(
                &format!("{method} {text}"),
                &mut f,
                &theta,
                &obj.grad,
                1e-5,
                1e-5,
            );
        }
    }
}

/// A plain-kernel psds / ssgp model is untouched by the composed path: a model of the
/// same se kernel written as a part has the same objective (the points of a single se
/// term are psds's Hammersley points).
#[test]
fn a_single_se_part_is_the_plain_model() {
    let data = toy_data(30, 2, 9);
    let meth = sgpw::methods::get("psds").expect("psds");
    let spec = RunSpec {
        method: "psds".into(),
        m: 16,
        seed: 1,
        iters: 10,
        standardize: false,
        options: MethodOptions::default(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let plain = init(meth, &data, &spec, &mut rng).expect("inits");
    let h = &plain.hyper;
    let text = format!(
        "se(var={}, ls=[{}, {}])",
        h.signal_variance, h.lengthscales[0], h.lengthscales[1]
    );
    let mut composed = plain.clone();
    composed.composed = ComposedKernel::new(kernel(&text, 2));
    composed.hyper.lengthscales.clear();
    let valid = spec.check(data.y.len()).expect("valid");
    meth.init_for_kernel(&mut composed, &valid, &mut rng)
        .expect("points");
    let a = meth.nlml(&plain, &data, &ex()).expect("plain");
    let b = meth.nlml(&composed, &data, &ex()).expect("composed");
    assert!((a - b).abs() < 1e-9 * a.abs(), "{a} vs {b}");
}

/// The forms without a spectral density are refused with the reason, naming the part:
/// in the expression before any work (`sgpw fit` on a file that does not exist), and in
/// a kernel built in code (change points).
#[test]
fn kernels_without_a_spectral_form_are_refused_naming_the_part() {
    for (text, part) in [
        ("se * rq", "rq"),
        ("se + rq(dims=[x0]) * matern32(dims=[x0])", "rq"),
        ("white + se", "white"),
        ("periodic(base=matern32)", "periodic"),
        ("linear * se", "linear"),
        ("se * matern12", "se and matern12"),
    ] {
        let why = form::refusal(&KernelExpr::parse(text).expect("parses")).expect(text);
        assert!(why.contains(part), "{text}: {why}");
    }
    for text in [
        "se + se * periodic",
        "rq + se(dims=[a]) * rq(dims=[b])",
        "linear + constant",
    ] {
        assert_eq!(
            form::refusal(&KernelExpr::parse(text).expect("parses")),
            None,
            "{text}"
        );
    }
    let cp = sgpw::kernel::ChangePoints::new(
        vec![kernel("se", 1), kernel("se", 1)],
        vec![0.0],
        vec![1.0],
        0,
    );
    let why = form::of_kernel(&cp).expect_err("refused");
    assert!(why.contains("changepoints"), "{why}");
    for method in ["psds", "ssgp"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sgpw"))
            .args([
                "fit",
                "--train",
                "/nonexistent.csv",
                "--method",
                method,
                "--m",
                "10",
                "--kernel",
                "se + se * rq",
            ])
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("--kernel")
                && err.contains(&format!("'{method}'"))
                && err.contains("rq inside a product"),
            "{err}"
        );
    }
}

/// `sgpw stream` (online PSDS) takes plain-kernel models only: a psds model of a kernel
/// built from parts is refused saying so, not as a model missing its `[spectral]` table.
#[test]
fn online_psds_refuses_a_composed_model_saying_why() {
    let data = toy_data(30, 1, 4);
    let mut model = model("psds", "se + periodic(ls=0.7)", &data, 8);
    model.method = "psds".into();
    let Err(err) = sgpw::methods::online::OnlinePsds::from_model(&model) else {
        panic!("a composed model is refused");
    };
    let err = err.to_string();
    assert!(
        err.contains("built from parts") && err.contains("plain kernel"),
        "{err}"
    );
}

/// psds and ssgp split their posterior by summand ("Seeing the parts"): with a kernel
/// built from parts the model is Bayesian linear regression on its features,
/// f = Σ_k φ_k(x) v_k with v ~ N(0, diag a), so summand j's posterior is that of the
/// weights of its own terms' features — mean φ_j(x*)ᵀ m_j, variance
/// φ_j(x*)ᵀ Σ_jj φ_j(x*) with Σ = (diag(1/a) + ΦΦᵀ/σ²)⁻¹, m = ΣΦy/σ² — computed here
/// densely; the means add up to the total's.
#[test]
fn psds_and_ssgp_split_their_posterior_by_summand() {
    use sgpw::train::Predictor;
    let data = toy_data(40, 2, 9);
    let text = "se(dims=[0], ls=0.7) + periodic(dims=[1], ls=0.8) + linear(dims=[0])";
    let xs = points(7, 2);
    for method in ["psds", "ssgp"] {
        let mut model = model(method, text, &data, 12);
        model.jitter = Some(0.0);
        let noise = model.hyper.noise_variance;
        let p =
            Predictor::new(model.clone(), Some((&data.x, data.y.as_slice()))).expect("predicts");
        let got = p.components_with(&xs, &ex()).expect("splits");
        let labels: Vec<&str> = got.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["se", "periodic", "linear"], "{method}");
        // dense
        let f = composed::form_of(&model).expect("form");
        let pts = composed::points(&model, &f).expect("points");
        let e = composed::evaluate(&f, &pts).expect("evaluates");
        let phi = composed::features(&f, &e, &data.x, Par::Seq);
        let phis = composed::features(&f, &e, &xs, Par::Seq);
        let a: Vec<f64> = composed::kuu_diagonal(&e).iter().map(|k| 1.0 / k).collect();
        let r = e.amp.len();
        let summand_of: Vec<usize> = (0..2 * r)
            .map(|k| f.terms[pts.term[k % r]].summand)
            .chain(f.finite.iter().map(|x| x.summand))
            .collect();
        let prec = DMatrix::from_diagonal(&nalgebra::DVector::from_iterator(
            a.len(),
            a.iter().map(|v| 1.0 / v),
        )) + &phi * phi.transpose() / noise;
        let sigma = prec.cholesky().expect("positive definite").inverse();
        let y = nalgebra::DVector::from_column_slice(&data.y);
        let mean_w = &sigma * (&phi * y) / noise;
        let total = p.predict(&xs).expect("predicts");
        for i in 0..xs.nrows() {
            let mut added = 0.0;
            for (j, c) in got.iter().enumerate() {
                let own: Vec<usize> = (0..a.len()).filter(|k| summand_of[*k] == j).collect();
                let mean: f64 = own.iter().map(|k| phis[(*k, i)] * mean_w[*k]).sum();
                let var: f64 = own
                    .iter()
                    .flat_map(|k| own.iter().map(move |l| (*k, *l)))
                    .map(|(k, l)| phis[(k, i)] * sigma[(k, l)] * phis[(l, i)])
                    .sum();
                let tol = 1e-8 * (1.0 + mean.abs().max(var.abs()));
                assert!(
                    (c.mean[i] - mean).abs() < tol && (c.var_latent[i] - var).abs() < tol,
                    "{method} {} at row {i}: ({}, {}) vs dense ({mean}, {var})",
                    c.label,
                    c.mean[i],
                    c.var_latent[i]
                );
                added += c.mean[i];
            }
            assert!(
                (added - total.mean[i]).abs() < 1e-9 * (1.0 + added.abs()),
                "{method}"
            );
        }
    }
}

/// psds and ssgp with a kernel built from parts hold the kernel, its points, form and
/// evaluation as a typed state through a fit (issue 44): θ unpacked into it gives the
/// model file's objective and gradient bit for bit, for every spectral form (continuous,
/// periodic, explicit features, rq's shape, a mixture) and with σ² fixed.
#[test]
fn the_typed_state_evaluates_to_the_model_files_bits() {
    let data = toy_data(60, 2, 191);
    let kernels = [
        "se(dims=[0]) + matern32(dims=[1])",
        "se * periodic(dims=[0], ls=0.7)",
        "linear + se",
        "rq(dims=[0], alpha=1.5) + se(dims=[1])",
        "spectral_mixture(q=2)",
    ];
    for method in ["psds", "ssgp"] {
        let meth = sgpw::methods::get(method).expect("a method");
        for text in kernels {
            for fixed in [&[][..], &["noise_variance"][..]] {
                let mut model = model(method, text, &data, 12);
                model.noise_floor = Some(0.01);
                model.fixed = fixed.iter().map(|f| f.to_string()).collect();
                let what = format!("{method} {text} {fixed:?}");
                assert_typed_state_is_the_files(meth, &model, &data, &what);
            }
        }
    }
}
