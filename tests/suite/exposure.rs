//! poisson's exposure column (`--exposure`; docs/methods.md, "Likelihoods"): y_i ~
//! Poisson(E_i · exp f(x_i)), log E_i added to f_i inside the likelihood — svgp's bound
//! and its gradient with it, a fit that recovers a known rate from counts with varying
//! exposures (and one that ignores them clearly worse), the checks of the column with
//! the row named, and `sgpw fit` / `sgpw predict` end to end.

use crate::common::{self, *};
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Poisson as PoissonDraw};
use sgpw::data::Dataset;
use sgpw::likelihoods::{LikelihoodKind, LikelihoodTable};
use sgpw::methods::svgp::elbo::{Variational, Want};
use sgpw::methods::svgp::{SVGP, evaluate, set_variational};
use sgpw::methods::{Method, pseudo};
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::run_spec::{MethodOptions, RunSpec};
use std::process::Command;

/// Toy counts with exposures E ∈ [e^−1, e^2] and a random q(v), m = 5.
fn toy() -> (TrainData, ModelFile) {
    let mut data = toy_data(40, 2, 11);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let log_e: Vec<f64> = (0..40).map(|_| rng.random_range(-1.0..2.0)).collect();
    data.y = data
        .y
        .iter()
        .zip(&log_e)
        .map(|(f, o)| (f + o).exp().round())
        .collect();
    data.log_exposure = Some(log_e);
    let mut model = ModelFile::new("svgp", Hyper::se(1.3, vec![0.9, 1.4], 0.05));
    let z = DMatrix::from_fn(5, 2, |i, d| data.x[(3 * i + 1, d)]);
    pseudo::set_inducing_points(&mut model, &z);
    let mut q = Variational::prior(5);
    for j in 0..5 {
        q.mean[j] = 0.3 * (j as f64) - 0.5;
        q.chol[(j, j)] = 0.6 + 0.05 * j as f64;
        if j > 0 {
            q.chol[(j, j - 1)] = 0.1;
        }
    }
    set_variational(&mut model, &q);
    model.likelihood = LikelihoodTable::start(LikelihoodKind::Poisson, None);
    SVGP.check(&model).expect("valid");
    (data, model)
}

#[test]
fn the_bound_gradient_with_an_exposure_matches_finite_differences() {
    let (data, model) = toy();
    let theta = SVGP.pack(&model);
    let o = SVGP.objective(&model, &data, &ex()).expect("objective");
    let mut scratch = model.clone();
    check_gradient(
        "svgp poisson with exposure",
        &mut |t: &[f64]| {
            SVGP.unpack(t, &mut scratch);
            SVGP.nlml(&scratch, &data, &ex()).expect("nlml")
        },
        &theta,
        &o.grad,
        1e-5,
        1e-6,
    );
    // the exposure is in the bound: without it the value moves
    let plain = TrainData {
        log_exposure: None,
        ..data.clone()
    };
    let without = SVGP.nlml(&model, &plain, &ex()).expect("nlml");
    assert!((without - o.nlml).abs() > 1.0, "{without} vs {}", o.nlml);
    // chunks of 7 rows carry their rows' exposures
    let chunked = Exec {
        chunk_entries: 7 * 5,
        ..Default::default()
    };
    let c = SVGP.objective(&model, &data, &chunked).expect("objective");
    assert_close("chunked", &c.grad, &o.grad, 1e-10);
    // a minibatch with its rows' exposures, scaled by n/B: its gradient against finite
    // differences of its own value
    let idx = [3, 17, 5, 22, 39, 0, 11, 28, 30];
    let x = DMatrix::from_fn(idx.len(), 2, |i, d| data.x[(idx[i], d)]);
    let y: Vec<f64> = idx.iter().map(|&i| data.y[i]).collect();
    let e: Vec<f64> = idx
        .iter()
        .map(|&i| data.log_exposure.as_ref().unwrap()[i])
        .collect();
    let scale = 40.0 / idx.len() as f64;
    let batch = |m: &ModelFile, want| {
        evaluate(
            m,
            std::iter::once((x.clone(), y.as_slice(), Some(e.as_slice()))),
            scale,
            want,
            None,
            &ex(),
        )
        .expect("batch")
    };
    let b = batch(&model, Want::All);
    let mut scratch = model.clone();
    check_gradient(
        "svgp poisson minibatch with exposure",
        &mut |t: &[f64]| {
            SVGP.unpack(t, &mut scratch);
            batch(&scratch, Want::Value).elbo
        },
        &theta,
        &b.grad,
        1e-5,
        1e-6,
    );
}

/// Counts whose rate per unit of exposure is exp(sin x − 0.5) on x ∈ [0, 10], the
/// exposures spread over a factor of 100 (log-uniform on [0.5, 50]), as a data set whose
/// inputs are x and the exposure column E.
fn rate_set(n: usize, seed: u64) -> (DMatrix<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut xe = DMatrix::zeros(n, 2);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let x: f64 = rng.random_range(0.0..10.0);
        let e = rng.random_range(0.5f64.ln()..50f64.ln()).exp();
        let rate = e * (x.sin() - 0.5).exp();
        xe[(i, 0)] = x;
        xe[(i, 1)] = e;
        y.push(PoissonDraw::new(rate).expect("rate").sample(&mut rng));
    }
    (xe, y)
}

fn poisson_spec(exposure: Option<&str>) -> RunSpec {
    RunSpec {
        method: "svgp".into(),
        m: 15,
        seed: 1,
        iters: sgpw::run_spec::DEFAULT_ITERATIONS,
        standardize: true,
        options: MethodOptions {
            likelihood: Some(LikelihoodKind::Poisson),
            exposure: exposure.map(str::to_string),
            ..Default::default()
        },
    }
}

#[test]
fn a_fit_with_the_exposure_recovers_the_rate_and_one_without_it_does_not() {
    let (x, y) = rate_set(400, 1);
    let (xt, yt) = rate_set(400, 2);
    let ds = Dataset {
        classes: None,
        feature_names: vec!["x".into(), "E".into()],
        target_name: "count".into(),
        x_train: x.clone(),
        y_train: DVector::from_vec(y),
        x_test: Some(xt.clone()),
        y_test: Some(DVector::from_vec(yt)),
        notes: Vec::new(),
    };
    let (r, _) = common::fit(&ds, &poisson_spec(Some("E")));
    let r = r.expect("fits");
    assert_eq!(r.model.inputs.as_deref(), Some(&["x".to_string()][..]));
    assert_eq!(
        r.model.likelihood.as_ref().unwrap().exposure.as_deref(),
        Some("E")
    );
    // the latent f is the log rate per unit of exposure, sin x − 0.5, on a grid
    let grid = DMatrix::from_fn(41, 1, |i, _| 0.5 + 0.225 * i as f64);
    let p = r.predictor.predict(&grid).expect("predicts");
    let err = (0..41)
        .map(|i| (p.mean[i] - (grid[(i, 0)].sin() - 0.5)).powi(2))
        .sum::<f64>()
        / 41.0;
    assert!(err.sqrt() < 0.1, "RMSE of the log rate {}", err.sqrt());
    let with = r.test.expect("scored");
    // the exposure left out of the model (x alone): the counts' spread over exposures
    // is unexplained
    let plain = Dataset {
        feature_names: vec!["x".into()],
        x_train: x.columns(0, 1).into_owned(),
        x_test: Some(xt.columns(0, 1).into_owned()),
        ..ds.clone()
    };
    let (r0, _) = common::fit(&plain, &poisson_spec(None));
    let without = r0.expect("fits").test.expect("scored");
    assert!(
        with.mnlp + 2.0 < without.mnlp,
        "MNLP {} with the exposure, {} without",
        with.mnlp,
        without.mnlp
    );
    let (rw, rn) = (with.rmse.unwrap(), without.rmse.unwrap());
    assert!(2.0 * rw < rn, "RMSE {rw} with the exposure, {rn} without");
}

#[test]
fn bad_exposures_are_refused_naming_the_row() {
    let (x, y) = rate_set(30, 3);
    let mut ds = Dataset {
        classes: None,
        feature_names: vec!["x".into(), "E".into()],
        target_name: "count".into(),
        x_train: x,
        y_train: DVector::from_vec(y),
        x_test: None,
        y_test: None,
        notes: Vec::new(),
    };
    for (bad, word) in [
        (0.0, "0 is not"),
        (-2.0, "-2 is not"),
        (f64::NAN, "NaN is not"),
    ] {
        ds.x_train[(6, 1)] = bad;
        let (r, _) = common::fit(&ds, &poisson_spec(Some("E")));
        let msg = r.err().expect("refused").to_string();
        assert!(
            msg.contains("exposure column 'E'")
                && msg.contains("training row 7")
                && msg.contains(word),
            "{msg}"
        );
    }
    ds.x_train[(6, 1)] = 1.0;
    let (r, _) = common::fit(&ds, &poisson_spec(Some("count")));
    assert!(r.err().unwrap().to_string().contains("is also the target"));
    let (r, _) = common::fit(&ds, &poisson_spec(Some("T")));
    assert!(
        r.err()
            .unwrap()
            .to_string()
            .contains("no exposure column 'T'")
    );
    // another likelihood has no rate to scale
    let mut spec = poisson_spec(Some("E"));
    spec.options.likelihood = Some(LikelihoodKind::Gaussian);
    let msg = spec.check(30).unwrap_err().to_string();
    assert!(
        msg.contains("exposure") && msg.contains("--likelihood poisson"),
        "{msg}"
    );
}

fn sgpw(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .expect("runs")
}

fn write_csv(path: &std::path::Path, x: &DMatrix<f64>, y: &[f64]) {
    let mut text = String::from("x,E,count\n");
    for i in 0..y.len() {
        text.push_str(&format!("{},{},{}\n", x[(i, 0)], x[(i, 1)], y[i]));
    }
    std::fs::write(path, text).expect("writes");
}

#[test]
fn fit_and_predict_take_the_exposure_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (x, y) = rate_set(200, 5);
    let (xt, yt) = rate_set(50, 6);
    let (train, test, model) = (
        dir.path().join("train.csv"),
        dir.path().join("test.csv"),
        dir.path().join("m.toml"),
    );
    write_csv(&train, &x, &y);
    write_csv(&test, &xt, &yt);
    let s = |p: &std::path::Path| p.display().to_string();
    let fit = |extra: &[&str]| {
        let mut args = vec![
            "fit",
            "--method",
            "svgp",
            "--m",
            "10",
            "--likelihood",
            "poisson",
        ];
        args.extend_from_slice(extra);
        sgpw(&args)
    };
    let out = fit(&[
        "--train",
        &s(&train),
        "--test",
        &s(&test),
        "--exposure",
        "E",
        "--save-model",
        &s(&model),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&model).expect("model");
    assert!(text.contains("exposure = \"E\""), "{text}");
    assert!(text.contains("inputs = [\"x\"]"), "{text}");
    // predict: the counts' mean scales with the row's exposure; without --exposure the
    // rate per unit of exposure, with a note
    let with = sgpw(&[
        "predict",
        "--model",
        &s(&model),
        "--input",
        &s(&test),
        "--exposure",
        "E",
    ]);
    let without = sgpw(&["predict", "--model", &s(&model), "--input", &s(&test)]);
    assert!(with.status.success() && without.status.success());
    assert!(String::from_utf8_lossy(&without.stderr).contains("for an exposure of 1"));
    let rows = |o: &std::process::Output| -> Vec<Vec<f64>> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect()
    };
    let (a, b) = (rows(&with), rows(&without));
    assert_eq!(a.len(), 50);
    for i in 0..50 {
        assert_eq!(a[i][0], b[i][0], "the latent f is the same");
        let ratio = a[i][2] / b[i][2];
        assert!((ratio / xt[(i, 1)] - 1.0).abs() < 1e-9, "row {i}: {ratio}");
        assert!(a[i][4] <= a[i][2] && a[i][2] <= a[i][5]);
    }
    // a bad exposure in the training file: the file, row and line named
    let mut bad = x.clone();
    bad[(4, 1)] = -1.0;
    write_csv(&train, &bad, &y);
    let out = fit(&["--train", &s(&train), "--exposure", "E"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success());
    assert!(
        err.contains(&s(&train)) && err.contains("'E'") && err.contains("row 5 (line 6"),
        "{err}"
    );
    let out = fit(&["--train", &s(&test), "--exposure", "E", "--features", "x,E"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("also an input (--features)"));
    // predict: a bad exposure in the input is named with its row
    let mut bad = xt.clone();
    bad[(2, 1)] = 0.0;
    write_csv(&test, &bad, &yt);
    let out = sgpw(&[
        "predict",
        "--model",
        &s(&model),
        "--input",
        &s(&test),
        "--exposure",
        "E",
    ]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success() && err.contains("at row 3"), "{err}");
}
