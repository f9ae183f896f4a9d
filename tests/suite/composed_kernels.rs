//! Kernels built from parts (issue 42) in the families that take any kernel: written as
//! expressions, built by `sgpw::kernel::build`, fitted by fitc and vfe through their
//! typed state with gradients into the kernel's parameters, the noise and the inducing
//! inputs checked against finite differences; and scikit-learn's Mauna Loa kernel fitted
//! from its starting values (exact GP and fitc) on datasets/co2.

use crate::common::*;
use nalgebra::{DMatrix, DVector};
use sgpw::collapsed::Approx;
use sgpw::exec::Par;
use sgpw::kernel::expression::KernelExpr;
use sgpw::kernel::{Kernel, ModelKernel, Start, build};
use sgpw::methods::pseudo::{self, PseudoState};
use sgpw::optim;
use sgpw::params::ParamLayout;
use std::io::Read;

fn start_for(x: &DMatrix<f64>, variance: f64) -> Start {
    let d = x.ncols();
    Start {
        columns: (0..d).map(|i| format!("x{i}")).collect(),
        variance,
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

/// −log p(y) of the exact GP and its gradient in [kernel parameters, log σ²].
fn exact_nlml(k: &dyn Kernel, x: &DMatrix<f64>, y: &[f64], noise: f64) -> (f64, Vec<f64>) {
    let n = y.len();
    let mut kk = k.gram(x, Par::Seq);
    for i in 0..n {
        kk[(i, i)] += noise;
    }
    let chol = kk.clone().cholesky().expect("positive definite");
    let alpha = chol.solve(&DVector::from_column_slice(y));
    let half_logdet: f64 = chol.l().diagonal().iter().map(|v| v.ln()).sum();
    let nlml = 0.5 * alpha.dot(&DVector::from_column_slice(y))
        + half_logdet
        + 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
    // ∂NLML/∂K = ½ (K⁻¹ − ααᵀ)
    let w = (chol.inverse() - &alpha * alpha.transpose()) * 0.5;
    let kernel_only = k.gram(x, Par::Seq);
    let mut grad = k
        .grad(x, x, &kernel_only, &w, false, false, Par::Seq)
        .params;
    grad.push(w.trace() * noise);
    (nlml, grad)
}

#[test]
fn composed_kernels_fit_with_fitc_and_vfe_with_gradients_into_the_inducing_inputs() {
    let data = toy_data(40, 2, 5);
    let start = start_for(&data.x, 1.0);
    for text in [
        "se + se * periodic + linear",
        "matern32(dims=[0]) * se(dims=[1]) + constant",
        "periodic(base=matern52, period=[2, 3]) + polynomial(degree=2) + rq",
        "spectral_mixture(q=2)",
    ] {
        let k = kernel(text, &start);
        let m = 4;
        // inducing inputs off the training inputs
        let z = data.x.rows(0, m).map(|v| v + 0.013);
        for (method, approx) in [(&pseudo::FITC, Approx::Fitc), (&pseudo::VFE, Approx::Vfe)] {
            let state = PseudoState::new(
                ModelKernel::from(k.clone()),
                z.clone(),
                None,
                0.3,
                0.0,
                None,
            );
            let mut typed = method.typed_from(state, approx);
            // θ = [kernel, log σ², Z]
            let mut theta0 = k.log_params();
            theta0.push(0.3f64.ln());
            theta0.extend(z.iter());
            let layout = ParamLayout::unfixed(theta0.len());
            let mut eval = |t: &[f64]| -> sgpw::error::Result<(f64, Vec<f64>)> {
                typed.unpack(t, &layout);
                let mut grad = Vec::new();
                let (nlml, _) = typed.objective_into(&data, &ex(), &mut grad)?;
                Ok((nlml, grad))
            };
            let (f0, g0) = eval(&theta0).expect("evaluates");
            assert_eq!(g0.len(), theta0.len(), "{text}");
            let mut value = |t: &[f64]| eval(t).expect("evaluates").0;
            check_gradient(
                &format!("{} {text}", method.name),
                &mut value,
                &theta0,
                &g0,
                1e-5,
                1e-4,
            );
            let options = optim::Options {
                max_iters: 30,
                ..Default::default()
            };
            let out = optim::minimize(eval, &theta0, &options, &mut |_: &optim::IterInfo| {
                optim::Control::Continue
            })
            .expect("fits");
            assert!(
                out.f < f0 - 1e-3,
                "{} {text}: {} from {f0}",
                method.name,
                out.f
            );
        }
    }
}

/// The co2 series, y centred (scikit-learn's example).
fn co2() -> (DMatrix<f64>, Vec<f64>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/co2/data.csv.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("co2"))
        .read_to_string(&mut text)
        .expect("gzip");
    let rows: Vec<(f64, f64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let (a, b) = l.split_once(',').expect("two columns");
            (a.parse().expect("a year"), b.parse().expect("a level"))
        })
        .collect();
    let mean = rows.iter().map(|r| r.1).sum::<f64>() / rows.len() as f64;
    let x = DMatrix::from_fn(rows.len(), 1, |i, _| rows[i].0);
    (x, rows.iter().map(|r| r.1 - mean).collect())
}

/// scikit-learn's starting kernel for the Mauna Loa example (its WhiteKernel is the
/// Gaussian noise σ² = 0.01 here).
const SKLEARN_START: &str = "se(var=2500, ls=50) + se(var=4, ls=100) * periodic(ls=0.5, period=1, fix=period) \
                             + rq(var=0.25, ls=1, alpha=1) + se(var=0.01, ls=0.1)";
/// scikit-learn's log marginal likelihood at the kernel it fits (tests/fixtures/sklearn_co2.json).
const SKLEARN_LML: f64 = -115.05029784134285;

/// From scikit-learn's start, sgpw's kernel gradients take the exact GP to a log
/// marginal likelihood at least scikit-learn's, and fitc (m = 50) above its start.
#[test]
fn the_mauna_loa_kernel_fits_from_sklearns_start() {
    let (x, y) = co2();
    let k0 = kernel(SKLEARN_START, &start_for(&x, 1.0));
    let mut theta0 = k0.log_params();
    theta0.push(0.01f64.ln());
    let at = |t: &[f64]| {
        let mut k = k0.clone();
        let p = k.params_len();
        k.set_log_params(&t[..p]);
        // scikit-learn's alpha = 1e-10 on the diagonal, beside σ²
        let (f, g) = exact_nlml(&*k, &x, &y, t[p].exp() + 1e-10);
        Ok((f, g))
    };
    let (f0, _) = at(&theta0).expect("evaluates");
    let options = optim::Options {
        max_iters: 300,
        ..Default::default()
    };
    let exact = optim::minimize(at, &theta0, &options, &mut |_: &optim::IterInfo| {
        optim::Control::Continue
    })
    .expect("fits");
    eprintln!(
        "co2 exact GP: log marginal likelihood {} from {} (scikit-learn: {SKLEARN_LML})",
        -exact.f, -f0
    );
    assert!(
        -exact.f >= SKLEARN_LML - 1e-3,
        "{} against scikit-learn's {SKLEARN_LML}",
        -exact.f
    );

    // fitc, 50 inducing inputs spread over the years, from the same start
    let m = 50;
    let z = DMatrix::from_fn(m, 1, |i, _| x[(i * (x.nrows() - 1) / (m - 1), 0)] + 0.01);
    let state = PseudoState::new(
        ModelKernel::from(k0.clone()),
        z.clone(),
        None,
        0.01,
        0.0,
        None,
    );
    let mut typed = pseudo::FITC.typed_from(state, Approx::Fitc);
    let mut theta = theta0.clone();
    theta.extend(z.iter());
    let layout = ParamLayout::unfixed(theta.len());
    let data = sgpw::data::TrainData {
        x: x.clone(),
        y: y.clone(),
        log_exposure: None,
    };
    let eval = |t: &[f64]| -> sgpw::error::Result<(f64, Vec<f64>)> {
        typed.unpack(t, &layout);
        let mut grad = Vec::new();
        let (nlml, _) = typed.objective_into(&data, &ex(), &mut grad)?;
        Ok((nlml, grad))
    };
    let fitc = optim::minimize(eval, &theta, &options, &mut |_: &optim::IterInfo| {
        optim::Control::Continue
    })
    .expect("fits");
    eprintln!("co2 fitc m = 50: log marginal likelihood {}", -fitc.f);
    assert!(
        -fitc.f > -f0,
        "fitc: {} from the exact start {}",
        -fitc.f,
        -f0
    );
}

/// Every method takes a kernel built from parts (the inter-domain and spectral families,
/// greedy, spgp-dr and pca-spgp refuse some expressions, each with its reason: their
/// own tests), so no method refuses one outright.
#[test]
fn every_family_that_evaluates_the_kernel_takes_composed_kernels() {
    use sgpw::methods::method::composed_kernel_refusal;
    let takers: Vec<&str> = sgpw::methods::registry()
        .iter()
        .filter(|m| composed_kernel_refusal(**m).is_none())
        .map(|m| m.name())
        .collect();
    assert_eq!(
        takers,
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
            "nystrom",
            "nystrom-opt",
            "greedy",
            "svgp",
            "rvm"
        ]
    );
}

/// A model of full or fitc carrying a kernel built from parts (`[kernel]`): checked
/// against its method, its objective's gradient through the model's packing (the
/// kernel's blocks, then σ², then fitc's inducing inputs) against finite differences,
/// fitted by the methods' own L-BFGS path, written, and read back to the same model and
/// objective.
#[test]
fn a_model_carries_a_composed_kernel_through_fit_write_and_read() {
    use rand::SeedableRng;
    use sgpw::kernel::ComposedKernel;
    use sgpw::model_file::ModelFile;
    use sgpw::run_context::RunContext;
    use sgpw::run_spec::RunSpec;
    let data = toy_data(50, 2, 11);
    let start = start_for(&data.x, 1.0);
    let k = kernel(
        "se(ls=[1, 2]) + se(dims=[0]) * periodic(dims=[1], fix=period) + constant",
        &start,
    );
    let dir = tempfile::tempdir().expect("a directory");
    for (name, m) in [("full", 0), ("fitc", 6)] {
        let method = sgpw::methods::get(name).expect("a method");
        let spec = RunSpec {
            method: name.into(),
            m,
            seed: 3,
            iters: 40,
            standardize: false,
            options: Default::default(),
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut model = init(method, &data, &spec, &mut rng).expect("inits");
        model.composed = ComposedKernel::new(k.clone());
        model.hyper.lengthscales.clear();
        sgpw::methods::method::check_model(method, &model).expect("a valid model");
        let theta0 = method.pack(&model);
        assert_eq!(theta0[..k.params_len()], k.log_params()[..], "{name}");
        let obj = method.objective(&model, &data, &ex()).expect("evaluates");
        let mut value = |t: &[f64]| {
            let mut mm = model.clone();
            method.unpack(t, &mut mm);
            method.nlml(&mm, &data, &ex()).expect("evaluates")
        };
        check_gradient(name, &mut value, &theta0, &obj.grad, 1e-5, 1e-4);
        let ctx = RunContext::quiet(ex());
        let (fitted, out) =
            sgpw::methods::hyper::fit_all(method, model, &data, 40, &ctx).expect("fits");
        assert!(
            out.f < obj.nlml - 1e-2,
            "{name}: {} from {}",
            out.f,
            obj.nlml
        );
        let path = dir.path().join(format!("{name}.toml"));
        fitted.write(&path).expect("writes");
        let text = std::fs::read_to_string(&path).expect("reads");
        assert!(
            text.contains("[kernel]\ninputs = 2\nexpression = \"se(var="),
            "{text}"
        );
        let back = ModelFile::read(&path).expect("reads back");
        assert!(back.composed == fitted.composed, "{name}");
        let again = method.nlml(&back, &data, &ex()).expect("evaluates");
        assert!(
            (again - out.f).abs() < 1e-9 * out.f.abs().max(1.0),
            "{name}: {again} vs {}",
            out.f
        );
    }
}

/// `sgpw fit --kernel EXPR` end to end (the binary): fitc fits a kernel built from parts
/// on a small periodic set, prints it as its expression, saves a model whose `[kernel]`
/// table holds it, and `sgpw predict` reads that model; ssgp refuses an expression with
/// a part without a spectral form (white), naming --kernel, before any data are read; a broken expression gets the caret. A
/// session's `kernel` key goes through the same declaration: a plain name stays plain.
#[test]
fn fit_takes_a_kernel_expression_from_the_command_line() {
    use sgpw::kernel::{KernelChoice, KernelKind};
    use std::process::Command;
    let sgpw = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_sgpw"))
            .args(args)
            .output()
            .expect("runs");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let dir = tempfile::tempdir().expect("a directory");
    let mut csv = String::from("t,y\n");
    for i in 0..80 {
        let t = i as f64 * 0.125;
        let wobble = ((i * 7919) % 13) as f64 / 13.0 - 0.5;
        let y = (2.0 * std::f64::consts::PI * t / 1.5).sin() + 0.2 * t + 0.05 * wobble;
        csv.push_str(&format!("{t},{y}\n"));
    }
    let train = dir.path().join("train.csv");
    std::fs::write(&train, csv).expect("writes");
    let train = train.display().to_string();
    let model = dir.path().join("model.toml").display().to_string();
    let (code, out, err) = sgpw(&[
        "fit",
        "--train",
        &train,
        "--method",
        "fitc",
        "--m",
        "10",
        "--iters",
        "200",
        "--kernel",
        "se + periodic",
        "--save-model",
        &model,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("kernel      se(var="), "{out}");
    assert!(out.contains(") + periodic(var="), "{out}");
    assert!(out.contains("starts      two; kept "), "{out}");
    let text = std::fs::read_to_string(&model).expect("a model");
    assert!(
        text.contains("[kernel]\ninputs = 1\nexpression = \"se(var="),
        "{text}"
    );
    assert!(text.contains("periodic(var="), "{text}");
    let input = dir.path().join("in.csv");
    std::fs::write(&input, "t\n1.0\n5.5\n").expect("writes");
    let (code, out, err) = sgpw(&[
        "predict",
        "--model",
        &model,
        "--input",
        &input.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<Vec<f64>> = out
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().expect("a number")).collect())
        .collect();
    for (row, t) in rows.iter().zip([1.0f64, 5.5]) {
        let truth = (2.0 * std::f64::consts::PI * t / 1.5).sin() + 0.2 * t;
        assert!(
            (row[0] - truth).abs() < 0.2,
            "at {t}: {} vs {truth}",
            row[0]
        );
    }
    assert_eq!(rows.len(), 2, "{out}");

    // refused before any data are read: the training file does not exist
    let (code, _, err) = sgpw(&[
        "fit",
        "--train",
        "/nonexistent.csv",
        "--method",
        "ssgp",
        "--m",
        "10",
        "--kernel",
        "se + white",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--kernel") && err.contains("'ssgp' cannot use it: white"),
        "{err}"
    );
    let (code, _, err) = sgpw(&[
        "fit",
        "--train",
        &train,
        "--method",
        "fitc",
        "--kernel",
        "se + * periodic",
    ]);
    assert_ne!(code, Some(0));
    assert!(
        err.contains("--kernel") && err.contains("\n  se + * periodic\n       ^"),
        "{err}"
    );

    let o = options("kernel = \"se + periodic\"");
    assert_eq!(o.kernel, Some(KernelChoice::Expr("se + periodic".into())));
    let o = options("kernel = \"matern52\"");
    assert_eq!(o.kernel, Some(KernelChoice::Plain(KernelKind::Matern52)));
    assert_eq!(
        toml::to_string(&o).expect("writes"),
        "kernel = \"matern52\"\n"
    );
}

/// The value of `label.key` in a kernel expression (`periodic.period`), as numbers.
fn arg_values(expression: &str, path: &str) -> Vec<f64> {
    use sgpw::kernel::expression::Value;
    let expr = KernelExpr::parse(expression).expect("parses");
    let (label, key) = path.split_once('.').expect("a path");
    let labels = sgpw::kernel::labels(&expr);
    let part = expr
        .parts()
        .into_iter()
        .zip(&labels)
        .find(|(_, l)| *l == label)
        .unwrap_or_else(|| panic!("no part {label} in {expression}"))
        .0;
    match &part
        .args
        .iter()
        .find(|a| a.key == key)
        .expect("the key")
        .value
    {
        Value::Number(x) => vec![*x],
        Value::List(v) => v
            .iter()
            .map(|x| match x {
                Value::Number(x) => *x,
                other => panic!("{other}"),
            })
            .collect(),
        other => panic!("{other}"),
    }
}

fn run_sgpw(args: &[&str]) -> (Option<i32>, String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .expect("runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// With the default standardization, `periodic(period=1, fix=period)` on inputs in
/// years is a period of one year: the model file holds 1/s (the years' standard
/// deviation, model units), `fit` prints the fitted kernel in the data's units with
/// period=1 (text and JSON, labelled), and the model predicts.
#[test]
fn kernel_values_are_read_and_shown_in_the_datas_units() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut csv = String::from("year,level\n");
    for i in 0..240 {
        let t = 1960.0 + i as f64 / 12.0;
        let wobble = ((i * 7919) % 13) as f64 / 13.0 - 0.5;
        let y = 320.0
            + 1.5 * (t - 1960.0)
            + 3.0 * (2.0 * std::f64::consts::PI * t).sin()
            + 0.3 * wobble;
        csv.push_str(&format!("{t},{y}\n"));
    }
    let train = dir.path().join("train.csv");
    std::fs::write(&train, csv).expect("writes");
    let train = train.display().to_string();
    let model = dir.path().join("model.toml").display().to_string();
    let args = |json: bool| {
        let mut a = vec![
            "fit",
            "--train",
            &train,
            "--method",
            "full",
            "--iters",
            "5",
            "--kernel",
            "se(var=2500, ls=50) + periodic(var=9, period=1, fix=period) + white(var=0.01)",
            "--save-model",
            &model,
        ];
        if json {
            a.push("--json");
        }
        a
    };
    let (code, out, err) = run_sgpw(&args(false));
    assert_eq!(code, Some(0), "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("kernel      "))
        .expect("a kernel line");
    assert!(line.ends_with(" (data units)"), "{line}");
    assert!(line.contains("period=1, fix=period)"), "{line}");
    let m = sgpw::model_file::ModelFile::read(std::path::Path::new(&model)).expect("reads");
    let s = m.standardize.as_ref().expect("standardized");
    let (sx, sy) = (s.input_scale[0], s.target_scale);
    assert!(sx > 5.0 && sy > 5.0, "{sx} {sy}");
    let stored = m.composed.as_ref().expect("a kernel").expression();
    let period = arg_values(&stored, "periodic.period")[0];
    assert!(
        (period * sx - 1.0).abs() < 1e-14,
        "{period} × {sx} in {stored}"
    );
    // back in the data's units, every value the model holds
    let scales = sgpw::kernel::Scales {
        centres: &s.input_center,
        inputs: &s.input_scale,
        target: sy,
    };
    let shown = m
        .composed
        .as_ref()
        .expect("a kernel")
        .data_expression(Some(scales))
        .to_string();
    let model_ls = arg_values(&stored, "se.ls")[0];
    let data_ls = arg_values(&shown, "se.ls")[0];
    assert!((data_ls - model_ls * sx).abs() < 1e-12 * data_ls, "{shown}");
    let model_var = arg_values(&stored, "white.var")[0];
    let data_var = arg_values(&shown, "white.var")[0];
    assert!(
        (data_var - model_var * sy * sy).abs() < 1e-12 * data_var,
        "{shown}"
    );

    let (code, out, err) = run_sgpw(&args(true));
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["kernel_units"], "data", "{out}");
    let k = v["kernel"].as_str().expect("a kernel");
    assert_eq!(arg_values(k, "periodic.period"), [1.0], "{k}");
}

/// scikit-learn's Mauna Loa example from its starting kernel, written in years and ppm
/// as scikit-learn writes it, fitted by `sgpw fit` with the default standardization:
/// the same optimum as the raw fit (docs/results/composed-kernels.md), LML −115.0503.
#[test]
fn the_mauna_loa_start_in_data_units_reaches_sklearns_optimum_standardized() {
    let train = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/co2/data.csv.gz");
    let (code, out, err) = run_sgpw(&[
        "fit",
        "--train",
        train,
        "--method",
        "full",
        "--init-noise-variance",
        "0.01",
        "--iters",
        "300",
        "--kernel",
        SKLEARN_START,
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let nlml = v["nlml"].as_f64().expect("nlml");
    assert!(
        (-nlml - SKLEARN_LML).abs() < 1e-4,
        "LML {} against scikit-learn's {SKLEARN_LML}",
        -nlml
    );
    let k = v["kernel"].as_str().expect("a kernel");
    assert_eq!(arg_values(k, "periodic.period"), [1.0], "{k}");
    let ls = arg_values(k, "se1.ls")[0];
    assert!((ls - 51.6).abs() < 0.5, "{k}");
}

/// `sgpw bench --kernel SUM --parts` times the sum and each of its terms alone in the
/// same run (issue 42's "same run" ratio): one row per term, its ratio of the sum's
/// time to the terms' together; a kernel that is no sum is refused, naming the flag.
#[test]
fn bench_parts_times_a_sum_against_its_terms() {
    let common = [
        "bench",
        "--method",
        "fitc",
        "--n",
        "300",
        "--d",
        "2",
        "--m",
        "10",
        "--reps",
        "3",
        "--threads",
        "1",
    ];
    let with = |extra: &[&str]| {
        let args: Vec<&str> = common.iter().chain(extra).copied().collect();
        run_sgpw(&args)
    };
    let (code, out, err) = with(&[
        "--kernel",
        "se() + periodic(period=1.5) + matern32()",
        "--parts",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let parts = v["parts"].as_array().expect("parts");
    let kernels: Vec<&str> = parts
        .iter()
        .map(|p| p["kernel"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kernels, ["se", "periodic(period=1.5)", "matern32"], "{v}");
    let seconds = |p: &serde_json::Value| p["median_eval_seconds"].as_f64().unwrap_or(0.0);
    let terms: f64 = parts.iter().map(seconds).sum();
    let ratio = v["ratio"].as_f64().expect("ratio");
    assert!((ratio - seconds(&v) / terms).abs() <= 1e-12 * ratio, "{v}");
    assert!(v["cpu_ratio"].as_f64().is_some_and(|r| r > 0.0), "{v}");
    let (code, _, err) = with(&["--kernel", "se * periodic", "--parts"]);
    assert!(code.is_some_and(|c| c != 0), "{err}");
    assert!(
        err.contains("--parts") && err.contains("not a sum"),
        "{err}"
    );
}
