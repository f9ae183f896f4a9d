//! The headless command line end to end: the real binary on small data.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sgpw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .expect("runs")
}

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .display()
        .to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "failed: {}", stderr(o));
    serde_json::from_str(&stdout(o)).expect("JSON on stdout")
}

#[test]
fn fit_json_save_predict_and_nlml_agree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("m.toml");
    let train = repo("datasets/xsinx3_train.csv");
    let test = repo("datasets/xsinx3_test.csv");
    let m = model.display().to_string();
    let out = sgpw(&[
        "fit",
        "--train",
        &train,
        "--test",
        &test,
        "--method",
        "spgp",
        "--m",
        "10",
        "--iters",
        "60",
        "--json",
        "--save-model",
        &m,
    ]);
    let v = json(&out);
    for key in [
        "method",
        "m",
        "n_train",
        "n_test",
        "nlml",
        "nmse",
        "mnlp",
        "iterations",
        "train_seconds",
        "jitter",
    ] {
        assert!(!v[key].is_null(), "missing {key}: {v}");
    }
    assert_eq!(
        (
            v["method"].as_str(),
            v["n_train"].as_u64(),
            v["n_test"].as_u64()
        ),
        (Some("fitc"), Some(200), Some(500))
    );
    let nmse = v["nmse"].as_f64().expect("nmse");
    assert!(
        nmse > 0.0 && nmse < 1.0,
        "a fitted model beats the mean: {nmse}"
    );

    // predict from the stored posterior: one row per input, three columns
    let csv = dir.path().join("p.csv");
    let out = sgpw(&[
        "predict",
        "--model",
        &m,
        "--input",
        &test,
        "--out",
        &csv.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&csv).expect("written");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("mean,var_latent,var_noisy"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().expect("number")).collect())
        .collect();
    assert_eq!(rows.len(), 500);
    assert!(
        rows.iter()
            .all(|r| r.len() == 3 && r[1] > 0.0 && r[2] > r[1])
    );

    // the NLML at the saved parameters equals the fit's final NLML
    let out = sgpw(&["nlml", "--model", &m, "--train", &train, "--json"]);
    let w = json(&out);
    let (a, b) = (
        w["nlml"].as_f64().expect("nlml"),
        v["nlml"].as_f64().expect("nlml"),
    );
    assert!((a - b).abs() < 1e-9 * b.abs(), "{a} vs {b}");
    assert_eq!(w["gradient"].as_array().map(|g| g.len()), Some(3 + 10));
}

#[test]
fn hand_written_model_is_conditioned_on_train() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("hand.toml");
    std::fs::write(
        &model,
        "method = \"fitc\"\ntarget_mean = 0.0\njitter = 1e-6\n[hyper]\nsignal_variance = 1.0\nlengthscales = [0.5]\nnoise_variance = 0.1\n[inducing]\npoints = [[0.5], [1.5], [2.5]]\n",
    )
    .expect("write");
    let m = model.display().to_string();
    let train = repo("datasets/xsinx3_train.csv");
    let input = repo("datasets/xsinx3_test.csv");
    let out = sgpw(&["predict", "--model", &m, "--input", &input]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--train"), "{}", stderr(&out));
    let out = sgpw(&[
        "predict", "--model", &m, "--input", &input, "--train", &train,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 501);
    let out = sgpw(&["nlml", "--model", &m, "--train", &train]);
    assert!(
        stdout(&out).trim().parse::<f64>().is_ok(),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_input_gets_a_clear_error_and_exit_code() {
    let train = repo("datasets/xsinx3_train.csv");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["fit", "--train", &train, "--m", "500"],
            "larger than the training set",
        ),
        (
            vec!["fit", "--train", &train, "--method", "nope"],
            "unknown method 'nope'",
        ),
        (vec!["fit", "--train", "no/such.csv"], "no/such.csv"),
        (vec!["fit", "--train", &train, "--target", "zz"], "zz"),
        (vec!["fit", "--train", &train, "--split", "1.5"], "split"),
        (
            vec![
                "fit", "--train", &train, "--method", "fitc", "--stages", "hyper",
            ],
            "does not apply",
        ),
        (
            vec!["nlml", "--model", "no/model.toml", "--train", &train],
            "no/model.toml",
        ),
    ];
    for (args, needle) in cases {
        let out = sgpw(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains(needle) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn bad_model_file_names_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("bad.toml");
    std::fs::write(&model, "method = \"fitc\"\n[hyper]\nsignal_variance = 1.0\nlengthscales = [1.0]\nnoise_var = 0.1\n").expect("write");
    let out = sgpw(&[
        "nlml",
        "--model",
        &model.display().to_string(),
        "--train",
        &repo("datasets/xsinx3_train.csv"),
    ]);
    let err = stderr(&out);
    assert!(
        !out.status.success() && err.contains("line 5") && err.contains("noise_var"),
        "{err}"
    );
}

#[test]
fn bench_reports_the_median() {
    let v = json(&sgpw(&[
        "bench", "--method", "fitc", "--n", "300", "--d", "3", "--m", "20", "--reps", "3", "--json",
    ]));
    assert!(
        v["median_eval_seconds"].as_f64().is_some_and(|t| t > 0.0),
        "{v}"
    );
}

/// Copy the example session and the data it uses into a temporary folder.
fn session_copy(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("sessions")).expect("mkdir");
    std::fs::create_dir_all(dir.join("datasets")).expect("mkdir");
    for f in ["xsinx3_train.csv", "xsinx3_test.csv"] {
        std::fs::copy(repo(&format!("datasets/{f}")), dir.join("datasets").join(f)).expect("copy");
    }
    let s = dir.join("sessions/example.toml");
    std::fs::copy(repo("sessions/example.toml"), &s).expect("copy");
    s
}

#[test]
fn run_writes_results_back_and_reruns_nothing_done() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = session_copy(dir.path());
    let out = sgpw(&["run", &s.display().to_string(), "--jobs", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let session = sgpw::session::Session::read(&s).expect("reads back");
    assert_eq!(session.results.len(), session.all_runs().len());
    assert!(
        session
            .results
            .iter()
            .all(|r| r.status == sgpw::session::Status::Done
                && r.model.is_some()
                && !r.trace.is_empty())
    );
    // a second run has nothing left to do and changes nothing
    let before = std::fs::read_to_string(&s).expect("read");
    let out = sgpw(&["run", &s.display().to_string()]);
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&s).expect("read"), before);
    // the same run again (--force) gives the same numbers: runs are seeded
    let out = sgpw(&["run", &s.display().to_string(), "--force", "--jobs", "2"]);
    assert!(out.status.success());
    let again = sgpw::session::Session::read(&s).expect("reads back");
    for r in &session.results {
        let a = again.result(&r.key).expect("same key");
        assert_eq!(
            (a.nmse, a.mnlp, a.nlml),
            (r.nmse, r.mnlp, r.nlml),
            "{:?}",
            r.key
        );
    }
}

#[test]
fn gen_is_seeded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().display().to_string();
    assert!(
        sgpw(&["gen", "xsinx3", "--seed", "1", "--out", &out_dir])
            .status
            .success()
    );
    let ours = std::fs::read_to_string(dir.path().join("xsinx3_train.csv")).expect("written");
    assert_eq!(
        ours,
        std::fs::read_to_string(repo("datasets/xsinx3_train.csv")).expect("committed")
    );
    let out = sgpw(&["gen", "nosuch"]);
    assert!(!out.status.success() && stderr(&out).contains("nosuch"));
}

/// `--standardize` is recorded in the model file, so predictions from the saved model
/// come back in the original units: their NMSE equals the one `fit` reported.
#[test]
fn standardized_model_predicts_in_original_units() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = dir.path().join("s.toml").display().to_string();
    let train = repo("datasets/xsinx3_train.csv");
    let test = repo("datasets/xsinx3_test.csv");
    let v = json(&sgpw(&[
        "fit",
        "--train",
        &train,
        "--test",
        &test,
        "--m",
        "8",
        "--iters",
        "40",
        "--standardize",
        "--json",
        "--save-model",
        &m,
    ]));
    let model = sgpw::model_file::ModelFile::read(Path::new(&m)).expect("reads");
    assert!(model.standardize.is_some());
    let out = sgpw(&["predict", "--model", &m, "--input", &test]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mean: Vec<f64> = stdout(&out)
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .next()
                .and_then(|v| v.parse().ok())
                .expect("mean")
        })
        .collect();
    let data = std::fs::read_to_string(&test).expect("test data");
    let y: Vec<f64> = data
        .lines()
        .skip(1)
        .map(|l| {
            l.rsplit(',')
                .next()
                .and_then(|v| v.parse().ok())
                .expect("y")
        })
        .collect();
    let nmse = sgpw::metrics::nmse(&y, &mean, model.target_mean).expect("defined");
    let reported = v["nmse"].as_f64().expect("nmse");
    assert!(
        (nmse - reported).abs() < 1e-9 * reported,
        "{nmse} vs {reported}"
    );
}

/// `stream` without a test set reports the NLML of the samples so far on the raw target
/// scale: after the last row of the training file it is what `nlml` gives for the
/// same standardized model and data.
#[test]
fn stream_nlml_is_on_the_raw_target_scale() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = dir.path().join("p.toml").display().to_string();
    let train = repo("datasets/xsinx3_train.csv");
    let fit = sgpw(&[
        "fit",
        "--train",
        &train,
        "--method",
        "psds",
        "--m",
        "6",
        "--iters",
        "20",
        "--save-model",
        &m,
    ]);
    assert!(fit.status.success(), "{}", stderr(&fit));
    let model = sgpw::model_file::ModelFile::read(Path::new(&m)).expect("reads");
    let scale = model
        .standardize
        .as_ref()
        .expect("standardized")
        .target_scale;
    assert!(
        (scale.ln()).abs() > 0.1,
        "target sd {scale} too close to 1 to tell"
    );
    let batch = json(&sgpw(&["nlml", "--model", &m, "--train", &train, "--json"]));
    let batch = batch["nlml"].as_f64().expect("nlml");
    let out = sgpw(&[
        "stream", "--model", &m, "--train", &train, "--every", "100000",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let last = text.lines().last().expect("a line");
    let online: f64 = last
        .split(',')
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("nlml");
    assert!(
        (online - batch).abs() < 1e-8 * batch.abs().max(1.0),
        "stream {online} vs nlml {batch}"
    );
}
