//! Change points written in the kernel expression (issue 42):
//! `changepoints(se, se, locations=[…], steepness=…)` read by `--kernel`, its values in
//! the data's units, `--fix` by its paths, and a fit that finds where a series changes.
//! (Parsing, building, labels and finite differences: src/kernel/expression.rs,
//! build.rs and tests.rs.)

use sgpw::kernel::expression::{KernelExpr, Value};
use std::process::Command;

fn sgpw(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .expect("runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// 200 yearly-spaced points from 1990 to 2009.9: a slow wave until 2000, then a fast
/// oscillation of period 0.7 (two SE kernels with very different lengthscales).
fn series() -> String {
    let mut csv = String::from("year,y\n");
    for i in 0..200 {
        let t = 1990.0 + i as f64 * 0.1;
        let wobble = ((i * 7919) % 13) as f64 / 13.0 - 0.5;
        let y = if i < 100 {
            ((t - 1990.0) / 2.0).sin()
        } else {
            0.8 * (2.0 * std::f64::consts::PI * (t - 2000.0) / 0.7).sin()
        };
        csv.push_str(&format!("{t:.1},{:.6}\n", y + 0.05 * wobble));
    }
    csv
}

/// The values of argument `key` of the change points in the `kernel` line of `fit`.
fn fitted(out: &str, key: &str) -> Vec<f64> {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("kernel      "))
        .unwrap_or_else(|| panic!("no kernel line in {out}"));
    let text = line.trim_end_matches(" (data units)");
    let expr = KernelExpr::parse(text).expect("the fitted kernel parses");
    let part = expr
        .parts()
        .into_iter()
        .find(|p| p.name == "changepoints")
        .unwrap_or_else(|| panic!("no change points in {text}"));
    match &part.args.iter().find(|a| a.key == key).expect(key).value {
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

fn nlml(out: &str) -> f64 {
    out.lines()
        .find_map(|l| l.strip_prefix("NLML        "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no NLML in {out}"))
}

/// The exact GP started with the change at 1995 (in years: the fit is standardized)
/// moves it to where the series changes, 2000, and explains the series far better than
/// one SE; `--fix changepoints.locations=2000` holds it there, in years.
#[test]
fn a_fit_finds_where_the_series_changes() {
    let dir = tempfile::tempdir().expect("a directory");
    let train = dir.path().join("train.csv");
    std::fs::write(&train, series()).expect("writes");
    let train = train.display().to_string();
    let kernel = "changepoints(se(ls=3), se(ls=0.3), locations=1995)";
    let (code, out, err) = sgpw(&[
        "fit", "--train", &train, "--method", "full", "--kernel", kernel,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let at = fitted(&out, "locations");
    assert_eq!(at.len(), 1, "{out}");
    // the last point before the change is 1999.9, the first after it 2000
    assert!((at[0] - 1999.95).abs() < 0.3, "{out}");
    let (code, plain, err) = sgpw(&["fit", "--train", &train, "--method", "full"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        nlml(&out) < nlml(&plain) - 100.0,
        "{out}\nagainst one se:\n{plain}"
    );

    let (code, out, err) = sgpw(&[
        "fit",
        "--train",
        &train,
        "--method",
        "full",
        "--kernel",
        kernel,
        "--fix",
        "changepoints.locations=2000",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(fitted(&out, "locations"), [2000.0], "{out}");
    assert!(out.contains("changepoints.locations"), "{out}");
}

/// A mistake in the change points is refused before any data are read, with its caret;
/// a misspelt `--fix` path lists the paths the change points have; greedy, which holds
/// k(x, x) as one number, refuses change points (k(x, x) = Σ w_i(x)² k_i(x, x)).
#[test]
fn change_point_mistakes_are_refused_with_their_place() {
    let dir = tempfile::tempdir().expect("a directory");
    let train = dir.path().join("train.csv");
    std::fs::write(&train, series()).expect("writes");
    let train = train.display().to_string();
    let (code, _, err) = sgpw(&[
        "fit",
        "--train",
        &train,
        "--method",
        "full",
        "--kernel",
        "changepoints(se, se)",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("changepoints needs locations=[…]: 1 for 2 kernels")
            && err.contains("\n  changepoints(se, se)\n  ^^^^^^^^^^^^^^^^^^^^"),
        "{err}"
    );
    let (code, _, err) = sgpw(&[
        "fit",
        "--train",
        &train,
        "--method",
        "full",
        "--kernel",
        "changepoints(se, se, locations=2000)",
        "--fix",
        "changepoints.location=2000",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("no parameter block 'changepoints.location'")
            && err.contains("changepoints.locations, changepoints.steepness, se1.var"),
        "{err}"
    );
    let (code, _, err) = sgpw(&[
        "fit",
        "--train",
        "/nonexistent.csv",
        "--method",
        "greedy",
        "--kernel",
        "changepoints(se, se, locations=2000)",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("'changepoints' makes k(x, x) vary"), "{err}");
}
