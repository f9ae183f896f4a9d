//! `--fix`: every method fitted by L-BFGS (the registry is iterated, so a new one is
//! covered) holds any one of its parameter blocks exactly where it started and fits the
//! others; the objective the optimiser sees with blocks fixed has the gradient finite
//! differences give; a run holds a fixed value through both default starts and writes
//! it to the model file, which reads back and rewrites to the same bytes.

use crate::common;
use common::*;
use nalgebra::DVector;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::data::Dataset;
use sgpw::methods::hyper::FreeProblem;
use sgpw::methods::{self, Method};
use sgpw::model_file::ModelFile;
use sgpw::params::{ParamLayout, Transform};
use sgpw::run_context::RunContext;
use sgpw::run_spec::{MethodOptions, Positive, RunSpec};

/// The size and options a method is tested with (spgp-dr and pca-spgp need `dims`;
/// greedy fits by L-BFGS only with `adapt`).
fn setup(method: &str) -> (usize, MethodOptions) {
    let o = common::options;
    match method {
        "pep" => (6, o("alpha = 0.3")),
        "spgp-dr" => (6, o("dims = 2\nhetero = true")),
        "pca-spgp" => (6, o("dims = 2")),
        "greedy" => (6, o("adapt = 1")),
        _ => (6, MethodOptions::default()),
    }
}

fn spec(method: &str, m: usize, options: MethodOptions, iters: usize) -> RunSpec {
    RunSpec {
        method: method.into(),
        m,
        seed: 3,
        iters,
        standardize: true,
        options,
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The methods of the registry fitted by L-BFGS with their test options.
fn lbfgs_methods() -> Vec<&'static dyn Method> {
    methods::registry()
        .iter()
        .copied()
        .filter(|m| m.fits_by_lbfgs(&setup(m.name()).1))
        .collect()
}

#[test]
fn the_lbfgs_methods_are_the_ones_that_take_fix() {
    let names: Vec<&str> = lbfgs_methods().iter().map(|m| m.name()).collect();
    assert_eq!(
        names,
        [
            "full",
            "fitc",
            "vfe",
            "dtc",
            "pep",
            "spgp-hs",
            "spgp-dr",
            "pca-spgp",
            "fifgp",
            "tfifgp",
            "smgp",
            "psds",
            "ssgp",
            "eigengp",
            "eigengp-joint",
            "eigengp-plus",
            "nystrom-opt",
            "greedy",
        ]
    );
    // the others refuse it rather than ignore it
    for name in ["svgp", "rvm", "nystrom"] {
        let mut options = setup(name).1;
        options.fix = Some(vec!["noise_variance".parse().expect("a fix")]);
        let e = spec(name, 6, options, 10)
            .check(100)
            .expect_err("refused")
            .to_string();
        assert!(e.contains("not fitted by L-BFGS"), "{name}: {e}");
    }
}

/// For every method fitted by L-BFGS and every block of its parameters: fitted with that
/// block fixed, the block's packed entries end bit for bit where they started (the
/// shared ones' values too; a block the family packs its own way, to a rounding), the
/// model still lists it as fixed, and some other entry moved.
#[test]
fn every_lbfgs_method_holds_any_fixed_block_and_fits_the_others() {
    let data = toy_data(60, 2, 11);
    for method in lbfgs_methods() {
        let (m, options) = setup(method.name());
        let spec = spec(method.name(), m, options, 25);
        let valid = spec.check(60).expect("a valid spec");
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let start = init(method, &data, &spec, &mut rng).expect("starts");
        let theta0 = method.pack(&start);
        let layout = ParamLayout::new(&start, method.tail_blocks(), theta0.len());
        assert!(layout.blocks().len() >= 3, "{}", method.name());
        for block in layout.blocks() {
            let what = format!("{} with {} fixed", method.name(), block.name);
            let mut model = start.clone();
            model.fixed = vec![block.name.to_string()];
            let ctx = RunContext::quiet(ex());
            let (fitted, _) = method
                .fit(model, &data, &valid, &ctx)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let theta = method.pack(&fitted);
            // (EigenGP's sequential schedule adds the weights after its start: blocks
            // are compared by name)
            let after = ParamLayout::new(&fitted, method.tail_blocks(), theta.len());
            let (r0, r) = (block.range.clone(), after.range(block.name));
            if block.transform == Transform::Own {
                // the family's own packing holds its θ entries to a rounding
                for (a, b) in theta[r.clone()].iter().zip(&theta0[r0.clone()]) {
                    assert!((a - b).abs() <= 1e-14 * b.abs().max(1.0), "{what}: {a} {b}");
                }
            } else {
                assert_eq!(bits(&theta[r.clone()]), bits(&theta0[r0.clone()]), "{what}");
            }
            assert_eq!(fitted.fixed, [block.name], "{what}");
            let moved = layout
                .blocks()
                .iter()
                .filter(|b| b.name != block.name)
                .any(|b| {
                    let rb = after.range(b.name);
                    bits(&theta[rb]) != bits(&theta0[b.range.clone()])
                });
            assert!(moved, "{what}: nothing else was fitted");
        }
        // the shared values themselves, all four at once
        let mut model = start.clone();
        model.fixed = layout
            .blocks()
            .iter()
            .filter(|b| sgpw::params::SHARED.contains(&b.name))
            .map(|b| b.name.to_string())
            .collect();
        let ctx = RunContext::quiet(ex());
        let (fitted, _) = method.fit(model, &data, &valid, &ctx).expect("fits");
        assert_eq!(fitted.hyper, start.hyper, "{}", method.name());
    }
}

/// The objective L-BFGS minimises with blocks fixed (the free entries only, in either
/// parameterisation of the positive ones) has the gradient central differences give.
#[test]
fn the_gradient_with_blocks_fixed_matches_finite_differences() {
    let data = toy_data(40, 2, 4);
    let cases: &[(&str, &[&str])] = &[
        ("full", &["lengthscales"]),
        ("fitc", &["noise_variance", "inducing_inputs"]),
        ("vfe", &["signal_variance"]),
        ("spgp-hs", &["lengthscales", "pseudo_noise"]),
        ("ssgp", &["noise_variance"]),
        ("fifgp", &["lengthscales", "signal_variance"]),
        ("eigengp-joint", &["basis_points"]),
    ];
    for &(name, fixed) in cases {
        let method = methods::get(name).expect("a method");
        let (m, options) = setup(name);
        let spec = spec(name, m, options, 10);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut model = init(method, &data, &spec, &mut rng).expect("starts");
        model.fixed = fixed.iter().map(|s| s.to_string()).collect();
        let n = method.pack(&model).len();
        for positive in [Positive::Log, Positive::Softplus] {
            let problem = FreeProblem::new(method, &model, 0..n, positive);
            let layout = problem.layout();
            for f in fixed {
                let r = layout.range(f);
                assert!(!r.is_empty(), "{name}: no block {f}");
                assert!(problem.free().iter().all(|i| !r.contains(i)), "{name}: {f}");
            }
            let u = problem.x0();
            assert!(u.len() < n, "{name}");
            let mut scratch = model.clone();
            let (_, grad) = problem
                .eval(&u, &data, &mut scratch, &ex())
                .expect("evaluates");
            let mut f = |v: &[f64]| {
                let mut s = model.clone();
                problem.eval(v, &data, &mut s, &ex()).expect("evaluates").0
            };
            check_gradient(
                &format!("{name} {positive:?} with {fixed:?} fixed"),
                &mut f,
                &u,
                &grad,
                1e-5,
                1e-5,
            );
        }
    }
}

fn dataset(train: TrainData) -> Dataset {
    Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into()],
        target_name: "y".into(),
        x_train: train.x.clone(),
        y_train: DVector::from_vec(train.y.clone()),
        x_test: None,
        y_test: None,
        notes: vec![],
    }
}

/// A run with `--fix noise_variance=0.02 --fix lengthscales`: both default starts run
/// (the second from the exact GP's subset fits, which hold the fixed values too); the
/// fitted σ² is 0.02 in the data's units and ℓ is where a fit of no iterations leaves
/// it, while σ0² is fitted. The model file lists both and reads back to the same bytes;
/// an unknown name in a file is an error at its line listing the blocks.
#[test]
fn a_run_holds_fixed_values_through_both_starts_and_files_them() {
    let ds = dataset(toy_data(80, 2, 9));
    let options = common::options("fix = [\"noise_variance=0.02\", \"lengthscales\"]");
    let run = |iters: usize| {
        let (r, _) = fit(&ds, &spec("fitc", 8, options.clone(), iters));
        r.expect("fits")
    };
    let fitted = run(40);
    let unfitted = run(0);
    let model = &fitted.model;
    assert!(model.fit.as_ref().is_some_and(|f| f.second_start.is_some()));
    assert_eq!(model.fixed, ["noise_variance", "lengthscales"]);
    let noise = fitted.predictor.hyper_in_data_units().noise_variance;
    assert!(
        noise.is_some_and(|v| (v - 0.02).abs() <= 1e-15),
        "{noise:?}"
    );
    assert_eq!(
        bits(&model.hyper.lengthscales),
        bits(&unfitted.model.hyper.lengthscales)
    );
    assert_eq!(
        model.hyper.noise_variance.to_bits(),
        unfitted.model.hyper.noise_variance.to_bits()
    );
    assert_ne!(
        model.hyper.signal_variance,
        unfitted.model.hyper.signal_variance
    );

    let text = model.to_toml().expect("writes");
    assert!(
        text.contains("fixed = [\"noise_variance\", \"lengthscales\"]"),
        "{text}"
    );
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("model.toml");
    std::fs::write(&path, &text).expect("writes");
    let (back, _) = methods::read_model(&path).expect("reads");
    assert_eq!(back.to_toml().expect("writes"), text);

    let bad = text.replace("\"lengthscales\"]", "\"lengthscale\"]");
    std::fs::write(&path, &bad).expect("writes");
    let e = match methods::read_model(&path) {
        Ok(_) => panic!("an unknown fixed block passed"),
        Err(e) => e.to_string(),
    };
    let line = 1 + bad
        .lines()
        .position(|l| l.starts_with("fixed"))
        .expect("a line");
    assert!(
        e.contains(&format!("line {line}"))
            && e.contains("'lengthscale' is not a parameter block")
            && e.contains("signal_variance, lengthscales, noise_variance, inducing_inputs"),
        "{e}"
    );
    // a model without the key writes none
    let plain: ModelFile =
        ModelFile::parse(&text.replace("fixed = [\"noise_variance\", \"lengthscales\"]\n", ""))
            .expect("reads");
    assert!(!plain.to_toml().expect("writes").contains("fixed"));
}

/// The option is one declaration: the session key and the form's text read the same,
/// the label says what was fixed, and a value for a block that takes none, an unknown
/// block, or a value beside the same block's starting value is refused naming them.
#[test]
fn fix_is_one_declared_option_checked_against_the_method() {
    let from_form = sgpw::run_spec::parse_options(&[(
        "fix".into(),
        "noise_variance=0.01, inducing_inputs".into(),
    )])
    .expect("the form's text parses");
    let session = common::options("fix = [\"noise_variance=0.01\", \"inducing_inputs\"]");
    assert_eq!(from_form, session);
    let s = spec("fitc", 6, session, 10);
    assert_eq!(
        s.default_label(),
        "fitc-std-fix-noise_variance=0.01+inducing_inputs"
    );
    s.check(100).expect("valid");
    let refused = |name: &str, text: &str| {
        spec(name, 6, common::options(text), 10)
            .check(100)
            .expect_err("refused")
            .to_string()
    };
    let e = refused("fifgp", "fix = [\"inducing_inputs\"]");
    assert!(
        e.contains("no parameter block 'inducing_inputs'")
            && e.contains("signal_variance, lengthscales, noise_variance, features"),
        "{e}"
    );
    let e = refused("fitc", "fix = [\"inducing_inputs=1\"]");
    assert!(e.contains("only signal_variance"), "{e}");
    let e = refused("fitc", "fix = [\"rq_alpha\"]");
    assert!(e.contains("no parameter block 'rq_alpha'"), "{e}");
    spec(
        "fitc",
        6,
        common::options("kernel = \"rq\"\nfix = [\"rq_alpha=2\"]"),
        10,
    )
    .check(100)
    .expect("rq has rq_alpha");
    let e = refused(
        "vfe",
        "fix = [\"noise_variance=0.1\"]\ninit_noise_variance = 0.2",
    );
    assert!(e.contains("leave out init_noise_variance"), "{e}");
}

/// A model whose likelihood is not Gaussian has no σ²: the optimiser's vector holds no
/// `noise_variance` entry (one entry shorter than the Gaussian model's, for a method
/// fitted by L-BFGS, the exact GP and svgp), and fixing it is refused, naming the flag
/// and the likelihood, from the session key and the form's text alike.
#[test]
fn a_non_gaussian_model_has_no_noise_variance_to_pack_or_fix() {
    let data = toy_data(40, 2, 7);
    for (name, likelihood) in [
        ("fitc", "bernoulli"),
        ("full", "bernoulli"),
        ("svgp", "bernoulli"),
        ("svgp", "poisson"),
    ] {
        let method = methods::get(name).expect("a method");
        let plain = spec(name, 5, MethodOptions::default(), 10);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let gaussian = init(method, &data, &plain, &mut rng).expect("starts");
        let mut model = gaussian.clone();
        model.likelihood = sgpw::likelihoods::LikelihoodTable::start(
            likelihood.parse().expect("a likelihood"),
            None,
        );
        model.hold_unused_noise();
        let what = format!("{name} with {likelihood}");
        let (theta, theta_gaussian) = (method.pack(&model), method.pack(&gaussian));
        assert_eq!(theta.len() + 1, theta_gaussian.len(), "{what}");
        let layout = ParamLayout::new(&model, method.tail_blocks(), theta.len());
        assert!(layout.block("noise_variance").is_none(), "{what}");
        assert!(layout.block("signal_variance").is_some(), "{what}");
        let mut back = model.clone();
        method.unpack(&theta, &mut back);
        assert_eq!(method.pack(&back), theta, "{what}");
        let text = format!("likelihood = \"{likelihood}\"\nfix = [\"noise_variance=0.01\"]");
        let e = spec_with(name, &text)
            .check(40)
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("fix") && e.contains("noise_variance") && e.contains(likelihood),
            "{what}: {e}"
        );
        let form = sgpw::run_spec::parse_options(&[
            ("likelihood".into(), likelihood.into()),
            ("fix".into(), "noise_variance".into()),
        ])
        .expect("the form's text parses");
        let e = spec(name, 5, form, 10)
            .check(40)
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains(&format!("likelihood = {likelihood} has none")),
            "{what}: {e}"
        );
    }
    // the Gaussian model still fixes it
    spec_with("fitc", "fix = [\"noise_variance=0.01\"]")
        .check(40)
        .expect("valid");
}

fn spec_with(method: &str, text: &str) -> RunSpec {
    spec(method, 5, common::options(text), 10)
}

/// The values of `path` (`periodic.period`) in a kernel expression.
fn path_values(expression: &str, path: &str) -> Vec<f64> {
    use sgpw::kernel::expression::{KernelExpr, Value};
    let expr = KernelExpr::parse(expression).expect("parses");
    let (label, key) = path.split_once('.').expect("a path");
    let labels = sgpw::kernel::labels(&expr);
    let (part, _) = expr
        .parts()
        .into_iter()
        .zip(&labels)
        .find(|(_, l)| *l == label)
        .unwrap_or_else(|| panic!("no {label} in {expression}"));
    let value = &part
        .args
        .iter()
        .find(|a| a.key == key)
        .expect("a key")
        .value;
    let number = |v: &Value| match v {
        Value::Number(x) => *x,
        other => panic!("{other}"),
    };
    match value {
        Value::List(v) => v.iter().map(number).collect(),
        v => vec![number(v)],
    }
}

/// `fix` names a part of a kernel expression by its path (`periodic.period=2`,
/// `se1.ls`), from a session's key as from `--fix` and Python's `fix=`: a fixed value
/// is where it started at the end (2 in the data's units where given), the others are
/// fitted, the model lists the paths and reads back to the same bytes; a misspelt
/// path, or a block the kernel's parts replace, is refused naming the valid paths.
#[test]
fn a_kernel_expressions_parts_are_fixed_by_their_paths() {
    let ds = dataset(toy_data(80, 2, 9));
    let options = common::options(
        "kernel = \"se + se(dims=[b]) * periodic(dims=[a])\"\n\
         fix = [\"periodic.period=2\", \"se1.ls\", \"noise_variance=0.02\"]",
    );
    let run = |method: &str, m: usize, iters: usize| {
        let (r, _) = fit(&ds, &spec(method, m, options.clone(), iters));
        r.expect("fits")
    };
    for (method, m) in [("full", 0), ("fitc", 8)] {
        let fitted = run(method, m, 40);
        let unfitted = run(method, m, 0);
        let model = &fitted.model;
        assert_eq!(
            model.fixed,
            ["periodic.period", "se1.ls", "noise_variance"],
            "{method}"
        );
        let (c, c0) = (
            model.composed.as_ref().expect("a kernel"),
            unfitted.model.composed.as_ref().expect("a kernel"),
        );
        let (e, e0) = (c.expression(), c0.expression());
        for fixed in ["periodic.period", "se1.ls"] {
            assert_eq!(
                bits(&path_values(&e, fixed)),
                bits(&path_values(&e0, fixed)),
                "{method} {fixed}: {e} from {e0}"
            );
        }
        for free in ["se1.var", "se2.ls", "periodic.ls"] {
            assert_ne!(
                path_values(&e, free),
                path_values(&e0, free),
                "{method} {free}"
            );
        }
        // 2 in the data's units: the period's input a divided by its scale
        let s = model.standardize.as_ref().expect("standardized");
        let scales = s.scales();
        let shown = c.data_expression(Some(scales)).to_string();
        let period = path_values(&shown, "periodic.period")[0];
        assert!((period - 2.0).abs() < 1e-14, "{method}: {shown}");
        let noise = fitted.predictor.hyper_in_data_units().noise_variance;
        assert!(
            noise.is_some_and(|v| (v - 0.02).abs() <= 1e-15),
            "{noise:?}"
        );
        let text = model.to_toml().expect("writes");
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("model.toml");
        std::fs::write(&path, &text).expect("writes");
        let (back, _) = methods::read_model(&path).expect("reads");
        assert_eq!(back.to_toml().expect("writes"), text);
    }
    for (fix, words) in [
        ("periodic.perod", "no parameter block 'periodic.perod'"),
        ("lengthscales", "no parameter block 'lengthscales'"),
    ] {
        let options = common::options(&format!(
            "kernel = \"se + se(dims=[b]) * periodic(dims=[a])\"\nfix = [\"{fix}\"]"
        ));
        let e = match spec("full", 0, options, 10).check(usize::MAX) {
            Ok(_) => panic!("{fix} passed"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains(words)
                && e.contains(
                    "se1.var, se1.ls, se2.var, se2.ls, periodic.var, periodic.ls, \
                     periodic.period, noise_variance"
                ),
            "{e}"
        );
    }
}

/// The objective L-BFGS minimises with parts of a kernel expression fixed by path (and
/// σ² by name) has the gradient central differences give, for the exact GP and fitc:
/// the fixed parts are not in θ.
#[test]
fn the_gradient_with_kernel_parts_fixed_matches_finite_differences() {
    use sgpw::kernel::{ComposedKernel, KernelChoice, Start};
    let data = toy_data(40, 2, 4);
    let start = Start {
        columns: vec!["a".into(), "b".into()],
        variance: 1.0,
        lengthscales: vec![1.0, 1.5],
        periods: vec![1.2, 1.2],
        mean_squares: vec![1.0, 1.0],
    };
    let expression = "matern32 + se(dims=[b]) * periodic(dims=[a]) + linear";
    let fixes: Vec<sgpw::fix::Fix> = ["periodic.period=1.3", "matern32.ls", "linear.var"]
        .iter()
        .map(|f| f.parse().expect("a fix"))
        .collect();
    let all = KernelChoice::build_for_fit(expression, &start, &[], None).expect("builds");
    let kernel = KernelChoice::build_for_fit(expression, &start, &fixes, None).expect("builds");
    // 2 + 1 + 2 entries fixed: matern32's ℓ, the period and linear's variances
    assert_eq!(kernel.params_len(), all.params_len() - 5);
    for name in ["full", "fitc"] {
        let method = methods::get(name).expect("a method");
        let spec = spec(name, 6, MethodOptions::default(), 10);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut model = init(method, &data, &spec, &mut rng).expect("starts");
        model.composed = ComposedKernel::new(kernel.clone());
        model.hyper.lengthscales.clear();
        model.fixed = vec!["noise_variance".into()];
        methods::method::check_model(method, &model).expect("a valid model");
        let n = method.pack(&model).len();
        for positive in [Positive::Log, Positive::Softplus] {
            let problem = FreeProblem::new(method, &model, 0..n, positive);
            let u = problem.x0();
            assert_eq!(u.len(), n - 1, "{name}");
            let mut scratch = model.clone();
            let (_, grad) = problem
                .eval(&u, &data, &mut scratch, &ex())
                .expect("evaluates");
            let mut f = |v: &[f64]| {
                let mut s = model.clone();
                problem.eval(v, &data, &mut s, &ex()).expect("evaluates").0
            };
            check_gradient(
                &format!("{name} {positive:?} with kernel parts fixed"),
                &mut f,
                &u,
                &grad,
                1e-5,
                1e-5,
            );
        }
    }
}
