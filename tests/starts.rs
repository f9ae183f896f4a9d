//! Starts and their failure mode (docs/methods.md §0.4): a fit that collapses to the
//! constant predictor is flagged by `fit`, by `report` (a mark, a footnote and a CSV
//! column), and stays unflagged where the targets have a signal.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

fn sgpw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .expect("runs")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// 400 rows of 3 inputs; targets pure noise (`signal = false`) or a smooth function of
/// the inputs plus a little noise. Deterministic: a fixed linear congruential stream.
fn write_csv(path: &Path, signal: bool) {
    let mut state: u64 = 12345;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut f = std::fs::File::create(path).expect("create");
    writeln!(f, "a,b,c,y").expect("write");
    for _ in 0..400 {
        let x: Vec<f64> = (0..3).map(|_| 2.0 * next()).collect();
        let noise = next();
        let y = if signal {
            (2.0 * x[0]).sin() + x[1] * x[2] + 0.05 * noise
        } else {
            noise
        };
        writeln!(f, "{},{},{},{}", x[0], x[1], x[2], y).expect("write");
    }
}

/// Pure-noise targets drive vfe's signal variance to nothing (the all-noise basin is
/// the optimum here): `fit` says so and what to try, in its text and its JSON.
#[test]
fn a_collapsed_fit_is_flagged_by_fit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let noise = dir.path().join("noise.csv");
    write_csv(&noise, false);
    let n = noise.display().to_string();
    let args = [
        "fit", "--train", &n, "--method", "vfe", "--m", "10", "--iters", "300",
    ];
    let text = stdout(&sgpw(&args));
    assert!(
        text.contains("warning     collapsed to a constant predictor")
            && text.contains("--init-lengthscales-from-subset"),
        "{text}"
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let v: serde_json::Value = serde_json::from_str(&stdout(&sgpw(&json_args))).expect("JSON");
    assert_eq!(v["collapsed"], true);

    let signal = dir.path().join("signal.csv");
    write_csv(&signal, true);
    let s = signal.display().to_string();
    let args = [
        "fit", "--train", &s, "--method", "vfe", "--m", "10", "--iters", "300",
    ];
    let text = stdout(&sgpw(&args));
    assert!(!text.contains("collapsed"), "{text}");
}

/// The same collapse in a session: `report` marks its cell, names it in a footnote
/// with what to try, and its CSV has a `collapsed` column.
#[test]
fn a_collapsed_fit_is_flagged_by_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_csv(&dir.path().join("noise.csv"), false);
    write_csv(&dir.path().join("signal.csv"), true);
    let session = dir.path().join("s.toml");
    std::fs::write(
        &session,
        "schema_version = 3\nname = \"s\"\n\n\
         [[datasets]]\nname = \"noise\"\ntrain = \"noise.csv\"\nsplit = 0.8\n\n\
         [[datasets]]\nname = \"signal\"\ntrain = \"signal.csv\"\nsplit = 0.8\n\n\
         [[runs]]\ndataset = \"noise\"\nmethod = \"vfe\"\nm = [10]\niterations = 300\n\n\
         [[runs]]\ndataset = \"signal\"\nmethod = \"vfe\"\nm = [10]\niterations = 300\n",
    )
    .expect("write");
    let path = session.display().to_string();
    stdout(&sgpw(&["run", &path, "--jobs", "1"]));
    let report = stdout(&sgpw(&["report", &path]));
    assert!(
        report.contains("§ collapsed to the constant predictor")
            && report.contains("vfe-std m=10 seed 1")
            && report.contains("--method fitc"),
        "{report}"
    );
    let csv = stdout(&sgpw(&["report", &path, "--format", "csv"]));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = header
        .iter()
        .position(|c| *c == "collapsed")
        .expect("a collapsed column");
    let flags: Vec<(String, String)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[col].to_string())
        })
        .collect();
    assert_eq!(
        flags,
        [
            ("noise".to_string(), "true".to_string()),
            ("signal".to_string(), "false".to_string())
        ]
    );
}

/// The start options work under every kernel: a variance-chosen start (the kernel's
/// own conditional variances), a scaled lengthscale start and a subset fit first, with
/// the chosen kernel carried into the saved model.
#[test]
fn starts_take_the_run_kernel() {
    let dir = tempfile::tempdir().expect("tempdir");
    let signal = dir.path().join("signal.csv");
    write_csv(&signal, true);
    let s = signal.display().to_string();
    for kernel in ["matern12", "rq"] {
        let saved = dir.path().join(format!("{kernel}.toml"));
        let model = saved.display().to_string();
        let args = [
            "fit",
            "--train",
            &s,
            "--method",
            "fitc",
            "--m",
            "10",
            "--iters",
            "30",
            "--kernel",
            kernel,
            "--inducing-init",
            "variance",
            "--lengthscale-start",
            "scaled",
            "--init-lengthscales-from-subset",
            "100",
            "--json",
            "--save-model",
            &model,
        ];
        let v: serde_json::Value = serde_json::from_str(&stdout(&sgpw(&args))).expect("JSON");
        assert!(
            v["nlml"].as_f64().is_some_and(f64::is_finite),
            "{kernel}: {v}"
        );
        let text = std::fs::read_to_string(&saved).expect("model");
        assert!(text.contains(&format!("kernel = \"{kernel}\"")), "{text}");
    }
}

/// `--positive softplus` changes only the optimiser's coordinates of σ0², ℓ, σ², not
/// the objective: the exact GP on a smooth signal converges to the same optimum from
/// the same start as with the logarithms (docs/results/starts.md, "The
/// parameterisation"), and the label says which was used.
#[test]
fn softplus_coordinates_reach_the_same_optimum() {
    let dir = tempfile::tempdir().expect("tempdir");
    let signal = dir.path().join("signal.csv");
    write_csv(&signal, true);
    let s = signal.display().to_string();
    let fit = |positive: &str| -> serde_json::Value {
        let args = [
            "fit",
            "--train",
            &s,
            "--method",
            "full",
            "--iters",
            "500",
            "--positive",
            positive,
            "--json",
        ];
        serde_json::from_str(&stdout(&sgpw(&args))).expect("JSON")
    };
    let (log, soft) = (fit("log"), fit("softplus"));
    let nlml = |v: &serde_json::Value| v["nlml"].as_f64().expect("nlml");
    assert!(
        (nlml(&log) - nlml(&soft)).abs() < 1e-4 * nlml(&log).abs().max(1.0),
        "log {log}\nsoftplus {soft}"
    );
    assert_eq!(log["stop"], "converged", "{log}");
    assert_eq!(soft["stop"], "converged", "{soft}");
    assert_eq!(log["label"], "full-std", "{log}");
    assert_eq!(soft["label"], "full-std-softplus", "{soft}");
}
