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

/// Writes `text` to `name` in `dir`, returning its path as a string.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("writes");
    p.display().to_string()
}

/// A constant target, or one whose variance overflows f64, is an error before any work
/// (exit 1, naming the file and the column) — standardized or raw, never NaN or inf.
#[test]
fn constant_and_overflowing_targets_are_errors_before_any_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rows = |f: &dyn Fn(usize) -> String| -> String {
        std::iter::once("a,b,y\n".to_string())
            .chain((0..60).map(|i| format!("{},{},{}\n", i % 7, i % 5, f(i))))
            .collect()
    };
    let constant = write(dir.path(), "const.csv", &rows(&|_| "3.5".into()));
    let huge = write(
        dir.path(),
        "huge.csv",
        &rows(&|i| format!("{}e300", 1.0 + (i % 9) as f64 / 10.0)),
    );
    for (file, words) in [
        (&constant, ["is constant (every value is 3.5)", "--target"]),
        (&huge, ["overflows", "divide the column by a power of ten"]),
    ] {
        for raw in [false, true] {
            let mut args = vec!["fit", "--train", file, "--split", "0.8", "--m", "5"];
            if raw {
                args.push("--raw");
            }
            let out = sgpw(&args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains(file.as_str())
                    && err.contains("the target column 'y'")
                    && words.iter().all(|w| err.contains(w)),
                "{err}"
            );
            assert!(stdout(&out).is_empty() && !err.contains("NaN"), "{err}");
        }
    }
}

/// A test set whose targets all equal the training mean has no NMSE: the line says
/// n/a and why, never NaN.
#[test]
fn an_undefined_nmse_is_shown_as_such() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut train = String::from("x,y\n");
    for i in 0..40 {
        train.push_str(&format!("{i},{}\n", if i % 2 == 0 { 1 } else { 3 }));
    }
    let train = write(dir.path(), "train.csv", &train);
    let test = write(dir.path(), "test.csv", "x,y\n3.5,2\n10.5,2\n");
    let out = sgpw(&[
        "fit", "--train", &train, "--test", &test, "--m", "5", "--iters", "20",
    ]);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{err}");
    assert!(text.contains("NMSE n/a") && !text.contains("NaN"), "{text}");
    assert!(
        err.contains("every test target equals the training mean"),
        "{err}"
    );
    let out = sgpw(&[
        "fit", "--train", &train, "--test", &test, "--m", "5", "--iters", "20", "--json",
    ]);
    let v = json(&out);
    assert!(v["nmse"].is_null() && v["mnlp"].as_f64().is_some(), "{v}");
}

/// A negative number is the value of its flag, for every value-taking flag of every
/// subcommand: it reaches the flag's own check, never "unexpected argument".
#[test]
fn negative_numbers_reach_their_own_check_on_every_flag() {
    let cmd = sgpw::cli::command();
    let mut checked = 0;
    for sub in cmd.get_subcommands() {
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if !arg.get_action().takes_values() {
                continue;
            }
            let args = ["sgpw", sub.get_name(), &format!("--{long}"), "-1"];
            if let Err(e) = sgpw::cli::command().try_get_matches_from(args) {
                assert_ne!(
                    e.kind(),
                    clap::error::ErrorKind::UnknownArgument,
                    "{args:?}: {e}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked} flags");
    let out = sgpw(&["fit", "--train", "x.csv", "--m", "-5"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("'-5'") && err.contains("--m") && err.contains("negative"),
        "{err}"
    );
    let train = repo("datasets/xsinx3_train.csv");
    for (flag, words) in [
        (
            "--noise-floor",
            "noise_floor = -1 (--noise-floor): a fraction of the target variance in [0, 0.5)",
        ),
        (
            "--split",
            "split -1 is not a fraction strictly between 0 and 1",
        ),
        (
            "--alpha",
            "alpha = -1 (--alpha): power EP needs 0 < alpha ≤ 1",
        ),
    ] {
        let out = sgpw(&["fit", "--train", &train, "--method", "pep", flag, "-1"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(err.contains(words), "{flag}: {err}");
    }
}

/// `predict` writes nothing to standard output before its whole input is known good
/// (a bad cell in the last row), and with --out leaves no file, not even a temporary.
#[test]
fn predict_writes_nothing_before_its_input_is_known_good() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("m.toml").display().to_string();
    let train = repo("datasets/xsinx3_train.csv");
    let out = sgpw(&[
        "fit",
        "--train",
        &train,
        "--m",
        "5",
        "--iters",
        "20",
        "--save-model",
        &model,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut input = String::from("x1\n");
    for i in 0..200_000 {
        input.push_str(&format!("{}\n", (i % 1000) as f64 / 100.0));
    }
    input.push_str("oops\n");
    let input = write(dir.path(), "in.csv", &input);
    let out = sgpw(&["predict", "--model", &model, "--input", &input]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{} bytes on stdout",
        out.stdout.len()
    );
    assert!(err.contains("row 200001") && err.contains("oops"), "{err}");
    let dest = dir.path().join("p.csv");
    let out = sgpw(&[
        "predict",
        "--model",
        &model,
        "--input",
        &input,
        "--out",
        &dest.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("lists")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('p') || n.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `--memory-budget` takes a size with a unit on the command line (the reading of
/// every usize flag as a whole number had turned them all away) and says what to give
/// otherwise.
#[test]
fn memory_budget_takes_a_size_with_a_unit() {
    let bench = |size: &str| {
        sgpw(&[
            "bench",
            "--n",
            "300",
            "--d",
            "3",
            "--m",
            "20",
            "--reps",
            "1",
            "--memory-budget",
            size,
        ])
    };
    for size in ["512M", "1.5GiB", "25%", "0"] {
        let out = bench(size);
        assert!(out.status.success(), "{size}: {}", stderr(&out));
    }
    for (size, says) in [
        ("512", "'512' has no unit"),
        ("-1G", "'-1G': the size must be a number ≥ 0"),
    ] {
        let out = bench(size);
        assert!(!out.status.success());
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
}

/// A run whose estimated memory is over --max-memory is refused before any work, by
/// `fit` and by `run` (which then runs nothing), with the estimate and the flag named;
/// under the limit it runs.
#[test]
fn max_memory_refuses_a_too_large_exact_gp() {
    let train = repo("datasets/xsinx3_train.csv");
    let fit = |limit: &str| {
        sgpw(&[
            "fit",
            "--train",
            &train,
            "--method",
            "full",
            "--iters",
            "3",
            "--max-memory",
            limit,
        ])
    };
    let out = fit("100K");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("full on") && err.contains("would need") && err.contains("--max-memory"),
        "{err}"
    );
    let out = fit("1G");
    assert!(out.status.success(), "{}", stderr(&out));
    let bad = fit("12Q");
    assert!(
        stderr(&bad).contains("'12Q' is not a size"),
        "{}",
        stderr(&bad)
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let s = session_copy(dir.path());
    let before = std::fs::read_to_string(&s).expect("read");
    let out = sgpw(&["run", &s.display().to_string(), "--max-memory", "1K"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("would need")
            && err.contains("--max-memory")
            && err.contains("nothing was run"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&s).expect("read"), before);
}

#[test]
fn bench_needs_a_repetition() {
    let out = sgpw(&["bench", "--n", "50", "--d", "2", "--m", "5", "--reps", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--reps 0"), "{}", stderr(&out));
}

/// sgpw (built without MPI: sgpw-mpi has it) says how to get `--distributed` and
/// touches no data.
#[test]
fn distributed_without_mpi_says_how_to_get_it() {
    let train = repo("datasets/snelson1d/train.csv.gz");
    for args in [
        vec!["fit", "--distributed", "--train", &train, "--m", "5"],
        vec![
            "nlml",
            "--distributed",
            "--model",
            "none.toml",
            "--train",
            &train,
        ],
    ] {
        let o = sgpw(&args);
        assert!(!o.status.success());
        let err = stderr(&o);
        if args[0] == "fit" {
            assert!(err.contains("-p sgpw-mpi"), "{err}");
            assert!(err.contains("mpirun -np"), "{err}");
        } else {
            // nlml reads its model first: the missing file is named
            assert!(err.contains("none.toml"), "{err}");
        }
    }
}

#[test]
fn fit_names_the_target_and_leaves_a_pandas_index_out() {
    // pandas' set_index("longitude") stores longitude last, where the default target is
    let train = repo("tests/fixtures/parquet/pandas/set_index.parquet");
    let args = ["fit", "--train", &train, "--method", "fitc", "--m", "5"];
    let out = sgpw(&[&args[..], &["--iters", "5"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("target      value\n"), "{text}");
    assert!(
        text.contains("30 train / 0 test points, 2 inputs"),
        "{text}"
    );
    assert!(
        stderr(&out).contains("ignored the pandas index column(s) 'longitude'"),
        "{}",
        stderr(&out)
    );
    let v = json(&sgpw(&[&args[..], &["--iters", "5", "--json"]].concat()));
    assert_eq!(v["target"], "value");
    assert_eq!(v["dim"], 2);
}

#[test]
fn the_repository_sessions_are_current_and_the_example_has_todays_defaults() {
    let mut old = Vec::new();
    let folders = ["sessions", "sessions/greedy-adapt"];
    let files = folders
        .iter()
        .flat_map(|f| std::fs::read_dir(repo(f)).expect("sessions/"))
        .flatten();
    for entry in files {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).expect("reads");
            let first = text.lines().next().unwrap_or_default().to_string();
            if first != format!("schema_version = {}", sgpw::session::SCHEMA_VERSION) {
                old.push(format!("{}: {first}", path.display()));
            }
        }
    }
    assert!(old.is_empty(), "sessions at an older schema: {old:?}");
    // what a newcomer copies fits as `sgpw fit` does: nothing pinned to an old default
    let example =
        sgpw::session::Session::read(Path::new(&repo("sessions/example.toml"))).expect("reads");
    assert!(example.pinned.is_empty());
    for r in &example.runs {
        let r = r.get_ref();
        assert_eq!(r.options, Default::default(), "{r:?}");
        assert!(r.standardize, "{r:?}");
    }
}

#[test]
fn running_an_older_session_says_which_old_defaults_it_keeps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = session_copy(dir.path());
    let text = "schema_version = 3\nname = \"old\"\n\n[[datasets]]\nname = \"d\"\n\
                train = \"../datasets/xsinx3_train.csv\"\n\n[[runs]]\ndataset = \"d\"\n\
                method = \"fitc\"\nm = [5]\niterations = 5\n";
    std::fs::write(&s, text).expect("write");
    let out = sgpw(&["run", &s.display().to_string(), "--jobs", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("is a schema 3 session")
            && err.contains("single_start = true")
            && err.contains("Delete a key from a run entry"),
        "{err}"
    );
    // written back as schema 4 with the key in it: read again, it says nothing
    let written = std::fs::read_to_string(&s).expect("read");
    assert!(written.contains("single_start = true"), "{written}");
    let out = sgpw(&["run", &s.display().to_string(), "--jobs", "1"]);
    assert!(!stderr(&out).contains("is a schema"), "{}", stderr(&out));
}

#[test]
fn fit_notes_a_noise_variance_that_collapsed() {
    // sinc is noiseless: FITC drives σ² to its floor, far below 1e-4 of var(y)
    let sinc = repo("datasets/sinc_train.csv");
    for raw in [false, true] {
        let mut args = vec!["fit", "--train", &sinc, "--method", "fitc", "--m", "10"];
        if raw {
            args.push("--raw");
        }
        let out = sgpw(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("note: the noise variance σ² ended at")
                && stderr(&out).contains("--method vfe"),
            "raw {raw}: {}",
            stderr(&out)
        );
    }
    // svgp has no diagonal correction: the note says so without blaming FITC
    let out = sgpw(&["fit", "--train", &sinc, "--method", "svgp", "--m", "10"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("note: the noise variance σ² ended at")
            && err.contains("--noise-floor")
            && !err.contains("FITC"),
        "svgp: {err}"
    );
    // xsinx3 has noise of sd 0.5: no note
    let xsinx3 = repo("datasets/xsinx3_train.csv");
    let out = sgpw(&["fit", "--train", &xsinx3, "--method", "fitc", "--m", "10"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("noise variance σ²"),
        "{}",
        stderr(&out)
    );
}
