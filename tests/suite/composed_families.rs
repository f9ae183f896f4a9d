//! Kernels built from parts (issue 42) in the families beyond the pseudo-input ones that
//! evaluate k(x, z) through the `Kernel` trait: svgp (Gaussian and bernoulli), the
//! selection families greedy, nystrom, nystrom-opt, eigengp and rvm. Each model's
//! gradient through its own packing (the kernel's blocks first) against finite
//! differences with kernels whose k(x, x) varies with x (linear, polynomial), and a fit
//! of each from `--kernel` on a periodic series with a trend; greedy refuses the parts
//! whose k(x, x) varies, before any work.

use crate::common::*;
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use sgpw::data::Dataset;
use sgpw::kernel::expression::KernelExpr;
use sgpw::kernel::{ComposedKernel, Kernel, KernelChoice, Start, build};
use sgpw::likelihoods::{BinaryLabels, LikelihoodKind, LikelihoodTable};
use sgpw::methods::Method;
use sgpw::model_file::ModelFile;
use sgpw::run_spec::{MethodOptions, RunSpec};

fn start_for(x: &DMatrix<f64>) -> Start {
    let d = x.ncols();
    Start {
        columns: (0..d).map(|i| format!("x{i}")).collect(),
        variance: 1.0,
        lengthscales: vec![1.0; d],
        periods: vec![1.5; d],
        mean_squares: (0..d)
            .map(|c| x.column(c).norm_squared() / x.nrows() as f64)
            .collect(),
    }
}

fn kernel(text: &str, start: &Start) -> Box<dyn Kernel> {
    build(&KernelExpr::parse(text).expect("parses"), start).expect("builds")
}

/// Method `name`'s starting model (m features, `options`) with the kernel `text` in
/// place of the plain one, checked against its method.
fn composed_model(
    name: &str,
    m: usize,
    options: MethodOptions,
    data: &TrainData,
    text: &str,
) -> (&'static dyn Method, ModelFile) {
    let method = sgpw::methods::get(name).expect("a method");
    let spec = RunSpec {
        method: name.into(),
        m,
        seed: 3,
        iters: 40,
        standardize: false,
        options,
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut model = init(method, data, &spec, &mut rng).expect("inits");
    model.composed = ComposedKernel::new(kernel(text, &start_for(&data.x)));
    model.hyper.lengthscales.clear();
    (method, model)
}

/// The objective's gradient through the method's packing against central differences;
/// the kernel's blocks come first and are not all zero.
fn gradient_matches(label: &str, method: &dyn Method, model: &ModelFile, data: &TrainData) {
    sgpw::methods::method::check_model(method, model).expect("a valid model");
    let k = model.composed.as_ref().expect("composed").kernel();
    let theta0 = method.pack(model);
    assert_eq!(theta0[..k.params_len()], k.log_params()[..], "{label}");
    let obj = method.objective(model, data, &ex()).expect("evaluates");
    assert_eq!(obj.grad.len(), theta0.len(), "{label}");
    assert!(
        obj.grad[..k.params_len()].iter().any(|g| g.abs() > 1e-6),
        "{label}: {:?}",
        obj.grad
    );
    let mut value = |t: &[f64]| {
        let mut mm = model.clone();
        method.unpack(t, &mut mm);
        method.nlml(&mm, data, &ex()).expect("evaluates")
    };
    check_gradient(label, &mut value, &theta0, &obj.grad, 1e-5, 1e-4);
}

const KERNELS: [&str; 3] = [
    "se(dims=[0]) * periodic(dims=[1]) + linear",
    "matern32(dims=[0]) * se(dims=[1]) + polynomial(degree=2)",
    "rq + se * periodic + constant",
];

#[test]
fn svgp_takes_any_kernel_with_gradients_into_its_parameters_and_inducing_inputs() {
    let data = toy_data(40, 2, 5);
    let mut labels = data.clone();
    labels.y = data.y.iter().map(|v| f64::from(*v > 0.0)).collect();
    for text in KERNELS {
        let (method, model) = composed_model("svgp", 5, MethodOptions::default(), &data, text);
        // q(v) away from the prior, so that every block moves the bound
        let mut q = sgpw::methods::svgp::variational(&model, 5).expect("q");
        q.mean = DVector::from_fn(5, |i, _| 0.3 * i as f64 - 0.5);
        q.chol *= 0.7;
        let mut model = model;
        sgpw::methods::svgp::set_variational(&mut model, &q);
        gradient_matches(&format!("svgp {text}"), method, &model, &data);
        let mut bern = model.clone();
        bern.likelihood = LikelihoodTable::start(
            LikelihoodKind::Bernoulli,
            Some(BinaryLabels { labels: [0.0, 1.0] }),
        );
        gradient_matches(&format!("svgp bernoulli {text}"), method, &bern, &labels);
    }
}

#[test]
fn the_selection_families_take_any_kernel_with_their_gradients() {
    let data = toy_data(40, 2, 7);
    for text in KERNELS {
        for name in ["nystrom-opt", "eigengp-joint", "eigengp-plus"] {
            let (method, model) = composed_model(name, 5, MethodOptions::default(), &data, text);
            gradient_matches(&format!("{name} {text}"), method, &model, &data);
        }
    }
    // greedy's gradient (σ², the kernel) at its basis, with a stationary kernel
    let (method, model) = composed_model(
        "greedy",
        6,
        options("adapt = 1"),
        &data,
        "se(dims=[0]) * periodic(dims=[1]) + rq + constant",
    );
    gradient_matches("greedy", method, &model, &data);
}

/// A periodic series with a trend and noise, x in [0, 12), and a test set between its
/// points (noiseless).
fn periodic_series() -> Dataset {
    let f = |t: f64| (2.0 * std::f64::consts::PI * t / 1.5).sin() + 0.3 * t;
    let wobble = |i: usize| ((i * 7919) % 13) as f64 / 13.0 - 0.5;
    let x = DMatrix::from_fn(120, 1, |i, _| i as f64 * 0.1);
    let y = DVector::from_fn(120, |i, _| f(x[(i, 0)]) + 0.4 * wobble(i));
    let xt = DMatrix::from_fn(60, 1, |i, _| 0.05 + i as f64 * 0.2);
    let yt = DVector::from_fn(60, |i, _| f(xt[(i, 0)]));
    Dataset {
        classes: None,
        feature_names: vec!["t".into()],
        target_name: "y".into(),
        x_train: x,
        y_train: y,
        x_test: Some(xt),
        y_test: Some(yt),
        notes: vec![],
    }
}

#[test]
fn every_family_that_evaluates_the_kernel_fits_an_expression() {
    let ds = periodic_series();
    for (name, m, extra) in [
        ("svgp", 15, ""),
        ("nystrom", 15, ""),
        // the Williams–Seeger predictor needs a basis that spans K well: at m = 15 its
        // mean is off by orders of magnitude whatever the kernel's form
        ("nystrom-opt", 40, ""),
        ("eigengp", 15, ""),
        ("greedy", 15, "adapt = 1"),
        ("rvm", 30, ""),
    ] {
        let mut o = options(extra);
        o.kernel = Some(KernelChoice::Expr(
            "se + periodic(period=1.5) + linear".into(),
        ));
        if name == "greedy" {
            // greedy's k(x, x) is one number: no linear part
            o.kernel = Some(KernelChoice::Expr("se + periodic(period=1.5)".into()));
        }
        let spec = RunSpec {
            method: name.into(),
            m,
            seed: 1,
            iters: 300,
            // the expression's period is in the inputs' units
            standardize: false,
            options: o,
        };
        let (r, _) = fit(&ds, &spec);
        let r = r.unwrap_or_else(|e| panic!("{name}: {e}"));
        let c = r.model.composed.as_ref().expect("the composed kernel");
        assert!(c.expression().contains("periodic(var="), "{name}");
        let nmse = r.test.as_ref().and_then(|t| t.nmse).expect("test scores");
        assert!(nmse < 0.01, "{name}: test NMSE {nmse}");
    }
}

#[test]
fn greedy_refuses_parts_whose_prior_variance_varies_before_any_work() {
    for expr in ["se + linear", "polynomial(degree=2) * se"] {
        let o = MethodOptions {
            kernel: Some(KernelChoice::Expr(expr.into())),
            ..Default::default()
        };
        let spec = RunSpec {
            method: "greedy".into(),
            m: 5,
            seed: 1,
            iters: 10,
            standardize: true,
            options: o,
        };
        let e = spec.check(100).expect_err("refused").to_string();
        assert!(
            e.contains("--kernel") && e.contains("k(x, x) vary with x"),
            "{e}"
        );
    }
}
