//! Kernels built from parts on projected inputs (issue 42): spgp-dr's kernel reads the
//! learned projections P x, pca-spgp's the top principal components, and either takes
//! any expression whose parts read all of those inputs. The objective's gradient —
//! into the kernel's parameters, and for spgp-dr through the projected inputs into P
//! and the pseudo-inputs, including the prior diagonal's where it varies with them (a
//! `linear` part) — against finite differences; the typed state against the model
//! file; each summand's posterior; parts naming `dims` refused; a fit end to end by the
//! binary.

use crate::common::*;
use rand::SeedableRng;
use sgpw::kernel::ComposedKernel;
use sgpw::methods;
use sgpw::model_file::ModelFile;
use sgpw::run_spec::RunSpec;
use sgpw::train::Predictor;

/// A model of `method` (spgp-dr or pca-spgp, G = `g`, m = 6) on `data` with the kernel
/// `text` on the G projected inputs, every parameter moved off its start (so that no
/// pseudo-input sits exactly at a projected training input, where a `white` part's
/// k(x̄, P x) jumps).
fn model(method: &str, hetero: bool, data: &TrainData, g: usize, text: &str) -> ModelFile {
    let m = methods::get(method).expect("a method");
    let extra = if hetero { "\nhetero = true" } else { "" };
    let spec = RunSpec {
        method: method.into(),
        m: 6,
        seed: 4,
        iters: 0,
        standardize: false,
        options: options(&format!("dims = {g}{extra}")),
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let mut model = init(m, data, &spec, &mut rng).expect("inits");
    let mut c = ComposedKernel::read(g, text).expect("reads");
    let k = c.kernel_mut();
    let theta: Vec<f64> = k
        .log_params()
        .iter()
        .enumerate()
        .map(|(i, t)| t + 0.3 * (1.7 * i as f64 + 0.4).sin())
        .collect();
    k.set_log_params(&theta);
    model.composed = Some(c);
    model.hyper.lengthscales.clear();
    model.hyper.noise_variance = 0.05;
    let mut theta = m.pack(&model);
    for (i, t) in theta.iter_mut().enumerate() {
        *t += 0.03 * (0.9 * i as f64 + 0.2).cos();
    }
    m.unpack(&theta, &mut model);
    methods::method::check_model(m, &model).unwrap_or_else(|e| panic!("{method} {text}: {e}"));
    model
}

/// Central differences of the objective over every packed parameter.
fn check_all_gradients(what: &str, model: &ModelFile, data: &TrainData) {
    let method = methods::get(&model.method).expect("method");
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

const KERNELS: [&str; 5] = [
    "se + matern32",
    "se * rq",
    "linear + se",
    "periodic + matern52 * constant",
    "polynomial(degree=2) + white + se",
];

/// spgp-dr (plain and with pseudo-noise) and pca-spgp with sums and products of
/// stationary parts, a linear or polynomial part (whose prior variance k(Px, Px)
/// varies with P) and a periodic one: the full gradient against finite differences,
/// and the typed state a fit runs on gives the model file's bits.
#[test]
fn projected_families_gradients_with_composed_kernels_match_finite_differences() {
    let data = toy_data(40, 3, 71);
    for text in KERNELS {
        for (method, hetero) in [("spgp-dr", false), ("spgp-dr", true), ("pca-spgp", false)] {
            let what = format!("{method}{} {text}", if hetero { " --hetero" } else { "" });
            let model = model(method, hetero, &data, 2, text);
            check_all_gradients(&what, &model, &data);
            let m = methods::get(method).expect("a method");
            assert_typed_state_is_the_files(m, &model, &data, &what);
        }
    }
    // change points switch along one input: G = 1
    let text = "changepoints(se, matern32, locations=0.3)";
    for method in ["spgp-dr", "pca-spgp"] {
        let model = model(method, false, &data, 1, text);
        check_all_gradients(&format!("{method} {text}"), &model, &data);
    }
}

/// Each summand's posterior with spgp-dr and pca-spgp (u = f(X̄) in the projected
/// space): the means add up to the total's.
#[test]
fn projected_families_split_their_posterior_by_summand() {
    let data = toy_data(40, 3, 72);
    let xs = toy_data(15, 3, 73).x;
    for method in ["spgp-dr", "pca-spgp"] {
        let model = model(method, false, &data, 2, "se + linear + matern32");
        let p = Predictor::new(model, Some((&data.x, data.y.as_slice()))).expect("predicts");
        assert_eq!(p.components_refusal(), None, "{method}");
        let parts = p.components_with(&xs, &ex()).expect("splits");
        let labels: Vec<&str> = parts.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["se", "linear", "matern32"], "{method}");
        let total = p.predict(&xs).expect("predicts");
        let added: Vec<f64> = (0..xs.nrows())
            .map(|i| parts.iter().map(|c| c.mean[i]).sum::<f64>() + p.model().target_mean)
            .collect();
        assert_close(&format!("{method} Σ means"), &added, &total.mean, 1e-10);
        assert!(
            parts
                .iter()
                .all(|c| c.var_latent.iter().all(|v| v.is_finite() && *v > 0.0)),
            "{method}"
        );
    }
}

/// A part naming `dims=[…]` names the data's columns, which neither kernel reads: the
/// run is refused before any work, naming the part; the same expression without dims
/// is taken.
#[test]
fn parts_naming_dims_are_refused_with_the_reason() {
    for (method, reads) in [
        ("spgp-dr", "the learned projections P x"),
        ("pca-spgp", "the top principal components"),
    ] {
        let spec = |kernel: &str| RunSpec {
            method: method.into(),
            m: 5,
            seed: 1,
            iters: 5,
            standardize: false,
            options: options(&format!("dims = 2\nkernel = \"{kernel}\"")),
        };
        let e = spec("se + matern32(dims=[1])")
            .check(100)
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains(&format!("method '{method}' cannot use it"))
                && e.contains("matern32 names dims=[…]")
                && e.contains(reads)
                && !e.contains("  "),
            "{e}"
        );
        spec("se + matern32").check(100).expect("taken");
    }
}

/// `sgpw fit` with a kernel expression for spgp-dr and pca-spgp (standardized, one
/// start), its model written with the kernel on the G projected inputs and read back
/// by `sgpw predict --components`, and the kernel printed on the projected inputs.
#[test]
fn projected_families_fit_a_composed_kernel_end_to_end() {
    use std::process::Command;
    let sgpw = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_sgpw"))
            .args(args)
            .output()
            .expect("runs");
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let dir = tempfile::tempdir().expect("a directory");
    let write = |name: &str, n: usize, seed: u64| {
        let d = toy_data(n, 3, seed);
        let mut text = String::from("a,b,c,y\n");
        for i in 0..n {
            // the target reads a + b and b − a; c nearly repeats a, so the inputs (also
            // standardized) lie near a plane, the top two principal components, which
            // holds a and b
            let (a, b) = (d.x[(i, 0)], d.x[(i, 1)]);
            let c = a + 0.05 * d.x[(i, 2)];
            text += &format!(
                "{a},{b},{c},{}\n",
                10.0 + 3.0 * (a + b).sin() + 0.5 * (b - a) + 0.05 * d.y[i]
            );
        }
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("writes");
        p.to_str().expect("utf-8").to_string()
    };
    let (train, test) = (write("train.csv", 200, 81), write("test.csv", 60, 82));
    for method in ["spgp-dr", "pca-spgp"] {
        let m = dir.path().join(format!("{method}.toml"));
        let m = m.to_str().expect("utf-8");
        let (ok, out, err) = sgpw(&[
            "fit",
            "--train",
            &train,
            "--test",
            &test,
            "--method",
            method,
            "--dims",
            "2",
            "-m",
            "15",
            "--iters",
            "80",
            "--kernel",
            "se + linear",
            "--save-model",
            m,
        ]);
        assert!(ok, "{method}: {err}");
        let on = if method == "spgp-dr" {
            "(on the learned projections P x; variances in the target's units)"
        } else {
            "(on the principal components; variances in the target's units)"
        };
        assert!(out.contains(on), "{method}: {out}");
        let nmse: f64 = out
            .lines()
            .find_map(|l| l.strip_prefix("test        NMSE "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{method}: {out}"));
        // spgp-dr learns the directions the target reads; pca-spgp's two components
        // span them here
        assert!(nmse < 0.05, "{method}: NMSE {nmse}\n{out}");
        let model = std::fs::read_to_string(m).expect("written");
        assert!(
            model.contains("[kernel]\ninputs = 2\n"),
            "{method}: {model}"
        );
        let (ok, out, err) = sgpw(&[
            "predict",
            "--model",
            m,
            "--train",
            &train,
            "--input",
            &test,
            "--components",
        ]);
        assert!(ok, "{method}: {err}");
        let header = out.lines().next().expect("a header");
        assert!(
            header.contains("mean_se") && header.contains("mean_linear"),
            "{method}: {header}"
        );
        // change points switch along one of the G inputs, which dims cannot name here
        let (ok, _, err) = sgpw(&[
            "fit",
            "--train",
            &train,
            "--method",
            method,
            "--dims",
            "2",
            "-m",
            "5",
            "--iters",
            "2",
            "--kernel",
            "changepoints(se, se, locations=0)",
        ]);
        assert!(
            !ok && err.contains("changepoints switch along one input") && err.contains("--dims 1"),
            "{method}: {err}"
        );
    }
}

/// A model whose kernel reads another number of inputs than the projection's G is
/// refused when read, naming both.
#[test]
fn a_kernel_of_the_wrong_size_is_refused_when_read() {
    let data = toy_data(30, 3, 74);
    let mut model = model("spgp-dr", false, &data, 2, "se + matern32");
    model.composed = Some(ComposedKernel::read(3, "se + matern32").expect("reads"));
    let m = methods::get("spgp-dr").expect("a method");
    let e = methods::method::check_model(m, &model)
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("[kernel] inputs = 3 but [projection] matrix has 2 rows"),
        "{e}"
    );
}
