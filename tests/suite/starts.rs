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

/// 300 rows of 16 inputs of which 3 matter (y = sin 2x₀ + x₁x₂ + a little noise): from
/// the §0.4 start vfe slides into the all-noise basin within about 30 iterations, as on
/// pumadyn-32nm (docs/methods.md §0.4).
fn write_many_inputs_csv(path: &Path) {
    let mut state: u64 = 12345;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut f = std::fs::File::create(path).expect("create");
    let names: Vec<String> = (0..16).map(|d| format!("x{d}")).collect();
    writeln!(f, "{},y", names.join(",")).expect("write");
    for _ in 0..300 {
        let x: Vec<f64> = (0..16).map(|_| 2.0 * next()).collect();
        let y = (2.0 * x[0]).sin() + x[1] * x[2] + 0.1 * next();
        let row: Vec<String> = x.iter().chain([&y]).map(|v| v.to_string()).collect();
        writeln!(f, "{}", row.join(",")).expect("write");
    }
}

/// A fit from one start (`--single-start`) that collapses is restarted from a full GP
/// fitted on a subset and ends with the signal found: not flagged, a better objective
/// than the collapsed end, the restart said in the text, the JSON and the saved model;
/// `--no-collapse-restart` hands back the collapsed fit, flagged. By default the second
/// start does the same: the collapsed first end is beaten and recorded.
#[test]
fn a_collapsed_fit_is_restarted_and_ends_with_the_signal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("many.csv");
    write_many_inputs_csv(&data);
    let d = data.display().to_string();
    let saved = dir.path().join("m.toml");
    let model = saved.display().to_string();
    let base = [
        "fit", "--train", &d, "--split", "0.8", "--method", "vfe", "--m", "10", "--iters", "300",
    ];
    let fit = |extra: &[&str]| -> serde_json::Value {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        args.push("--json");
        serde_json::from_str(&stdout(&sgpw(&args))).expect("JSON")
    };
    let off = fit(&["--single-start", "--no-collapse-restart"]);
    assert_eq!(off["collapsed"], true, "{off}");
    assert!(off["collapse_restart"].is_null(), "{off}");
    assert!(off["nmse"].as_f64().expect("nmse") > 0.99, "{off}");

    let on = fit(&["--single-start", "--save-model", &model]);
    assert_eq!(on["collapsed"], false, "{on}");
    assert!(on["second_start"].is_null(), "{on}");
    let record = &on["collapse_restart"];
    assert_eq!(record["kept_restart"], true, "{on}");
    assert_eq!(record["collapsed_nlml"], off["nlml"], "{on}\n{off}");
    assert!(
        on["nlml"].as_f64().expect("nlml") < off["nlml"].as_f64().expect("nlml") - 100.0,
        "{on}\n{off}"
    );
    assert!(on["nmse"].as_f64().expect("nmse") < 0.1, "{on}");
    let text = std::fs::read_to_string(&saved).expect("model");
    assert!(
        text.contains("[fit.collapse_restart]") && text.contains("kept_restart = true"),
        "{text}"
    );

    let mut single = base.to_vec();
    single.push("--single-start");
    let out = stdout(&sgpw(&single));
    assert!(
        out.contains("restart     the first fit collapsed") && !out.contains("warning"),
        "{out}"
    );

    // the default: the first start's end is the collapsed one, the second start's wins
    let two = fit(&[]);
    assert_eq!(two["collapsed"], false, "{two}");
    assert!(two["collapse_restart"].is_null(), "{two}");
    let record = &two["second_start"];
    assert_eq!(record["kept_second"], true, "{two}");
    // the first fit, raced, is stopped once clearly behind: its objective is then where
    // it stopped, not below its end alone
    match record["dropped_at"].as_u64() {
        Some(_) => assert!(
            record["first_nlml"].as_f64() >= off["nlml"].as_f64(),
            "{two}\n{off}"
        ),
        None => assert_eq!(record["first_nlml"], off["nlml"], "{two}\n{off}"),
    }
    assert_eq!(record["second_nlml"], two["nlml"], "{two}");
    assert!(two["nmse"].as_f64().expect("nmse") < 0.1, "{two}");
    let out = stdout(&sgpw(&base));
    assert!(
        out.contains("starts      two; kept the subset-fitted start's end")
            && !out.contains("warning"),
        "{out}"
    );
}

/// A fit that does not collapse is not touched by the restart: with and without
/// `--no-collapse-restart` the model files agree bit for bit (but for the training
/// time) and the scores are the same numbers.
#[test]
fn a_fit_that_does_not_collapse_is_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let signal = dir.path().join("signal.csv");
    write_csv(&signal, true);
    let s = signal.display().to_string();
    let run = |extra: &[&str], name: &str| -> (serde_json::Value, String) {
        let saved = dir.path().join(name);
        let model = saved.display().to_string();
        let mut args = vec![
            "fit",
            "--train",
            &s,
            "--split",
            "0.8",
            "--method",
            "vfe",
            "--m",
            "10",
            "--iters",
            "200",
            "--json",
            "--save-model",
            &model,
        ];
        args.extend_from_slice(extra);
        let v: serde_json::Value = serde_json::from_str(&stdout(&sgpw(&args))).expect("JSON");
        let text = std::fs::read_to_string(&saved).expect("model");
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("train_seconds"))
            .collect();
        (v, kept.join("\n"))
    };
    let (on, on_model) = run(&[], "on.toml");
    let (off, off_model) = run(&["--no-collapse-restart"], "off.toml");
    assert_eq!(on["collapsed"], false, "{on}");
    assert!(on["collapse_restart"].is_null(), "{on}");
    for key in ["nlml", "nmse", "mnlp", "iterations", "evaluations"] {
        assert_eq!(on[key], off[key], "{key}: {on}\n{off}");
    }
    assert_eq!(on_model, off_model);
}

/// A restarted run in a session: `report` names it in a footnote and its CSV has a
/// `collapse_restarted` column.
#[test]
fn a_restarted_fit_is_named_by_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_many_inputs_csv(&dir.path().join("many.csv"));
    let session = dir.path().join("s.toml");
    std::fs::write(
        &session,
        "schema_version = 3\nname = \"s\"\n\n\
         [[datasets]]\nname = \"many\"\ntrain = \"many.csv\"\nsplit = 0.8\n\n\
         [[runs]]\ndataset = \"many\"\nmethod = \"vfe\"\nm = [10]\niterations = 300\n",
    )
    .expect("write");
    let path = session.display().to_string();
    stdout(&sgpw(&["run", &path, "--jobs", "1"]));
    let report = stdout(&sgpw(&["report", &path]));
    assert!(
        report.contains("restarted after collapsing")
            && report.contains("vfe-std m=10 seed 1 (restart kept)")
            && !report.contains("§ collapsed"),
        "{report}"
    );
    let csv = stdout(&sgpw(&["report", &path, "--format", "csv"]));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = header
        .iter()
        .position(|c| *c == "collapse_restarted")
        .expect("a collapse_restarted column");
    let row: Vec<&str> = lines.next().expect("a row").split(',').collect();
    assert_eq!(row[col], "true", "{csv}");
}

/// The default's two fits are raced: the fit behind is stopped once clearly behind —
/// the record says at which iteration; a kept first fit is the one-start fit bit for bit
/// and the stopped second cost about its iterations; a stopped first ended no lower than
/// it does alone. (Before the race both ran to the end, and the record had no
/// `dropped_at`.)
#[test]
fn two_starts_are_raced_and_the_fit_behind_is_stopped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let signal = dir.path().join("signal.csv");
    write_csv(&signal, true);
    let s = signal.display().to_string();
    let fit = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "fit", "--train", &s, "--split", "0.8", "--method", "vfe", "--m", "10", "--iters",
            "200", "--json",
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&stdout(&sgpw(&args))).expect("JSON")
    };
    let (two, one) = (fit(&[]), fit(&["--single-start"]));
    let record = &two["second_start"];
    let at = record["dropped_at"].as_u64().expect("a fit was stopped");
    assert!(at < 200, "{two}");
    let evals = |v: &serde_json::Value| v["evaluations"].as_u64().expect("evaluations");
    if record["kept_second"] == false {
        for key in ["nlml", "nmse", "mnlp", "iterations"] {
            assert_eq!(two[key], one[key], "{key}: {two}\n{one}");
        }
        assert!(evals(&two) - evals(&one) <= 3 * (at + 1), "{two}\n{one}");
    } else {
        assert!(
            record["first_nlml"].as_f64() >= one["nlml"].as_f64(),
            "{two}\n{one}"
        );
    }
}

/// Progress tells the phase: a default fit reports its first start's objective from
/// the first evaluation, before the subset fit of the second start; then the subset fit,
/// the second start's fit, and the start dropped (at the iteration the result records).
#[test]
fn a_raced_fit_reports_each_phase() {
    use sgpw::run_context::{Phase, Progress, RunContext};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("signal.csv");
    write_csv(&path, true);
    let data = sgpw::data::load(&sgpw::data::LoadSpec {
        train: path,
        split: Some(0.8),
        seed: 1,
        ..Default::default()
    })
    .expect("loads");
    let spec = sgpw::run_spec::RunSpec {
        method: "vfe".into(),
        m: 10,
        seed: 1,
        iters: 200,
        standardize: true,
        options: Default::default(),
    }
    .check(data.n_train())
    .expect("valid");
    let reports = std::sync::Mutex::new(Vec::new());
    let sink = |p: &Progress| {
        reports
            .lock()
            .expect("lock")
            .push((p.phase, p.iteration, p.nlml))
    };
    let ctx = RunContext::new(sgpw::exec::Exec::default(), &sink);
    let r = sgpw::train::fit(&data, &spec, &ctx).expect("fits");
    let reports = reports.into_inner().expect("lock");
    let first_value = reports
        .iter()
        .find(|(_, _, v)| v.is_some())
        .expect("a value");
    assert_eq!(first_value.0, Phase::Fit { stage: 0 }, "{reports:?}");
    assert_eq!(first_value.1, 0, "{reports:?}");
    let at = |phase: Phase| reports.iter().position(|(p, _, _)| *p == phase);
    let subset = at(Phase::SubsetInit).expect("the subset fit is reported");
    let second = at(Phase::SecondStart).expect("the second start is reported");
    assert!(subset < second, "{reports:?}");
    let record = r
        .model
        .fit
        .as_ref()
        .and_then(|f| f.second_start.as_ref())
        .expect("two starts");
    let dropped: Vec<_> = reports
        .iter()
        .filter(|(p, _, _)| matches!(p, Phase::Dropped { .. }))
        .collect();
    match record.dropped_at {
        Some(i) => {
            assert_eq!(dropped.len(), 1, "{reports:?}");
            assert_eq!(dropped[0].1, i);
            assert_eq!(
                dropped[0].0,
                Phase::Dropped {
                    second: !record.kept_second
                }
            );
        }
        None => assert!(dropped.is_empty(), "{reports:?}"),
    }
}

/// Where the second start's fit falls clearly behind, it is stopped and the run's
/// result is the one-start fit bit for bit (objective, scores, iterations), having paid
/// for far fewer than the second fit's whole budget of evaluations. fitc, m = 10, on
/// the signal data: seeds 3–5 of 1–6 end with the first start's fit (measured). Before
/// the race both fits ran to their end: no `dropped_at`, and twice the evaluations.
#[test]
fn a_dropped_second_start_leaves_the_one_start_fit_bit_for_bit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let signal = dir.path().join("signal.csv");
    write_csv(&signal, true);
    let s = signal.display().to_string();
    let fit = |seed: &str, extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "fit", "--train", &s, "--split", "0.8", "--method", "fitc", "--m", "10", "--iters",
            "200", "--seed", seed, "--json",
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&stdout(&sgpw(&args))).expect("JSON")
    };
    let mut dropped_seconds = 0;
    for seed in ["1", "2", "3", "4", "5", "6"] {
        let two = fit(seed, &[]);
        let record = &two["second_start"];
        if record["kept_second"] != false {
            continue;
        }
        dropped_seconds += 1;
        let one = fit(seed, &["--single-start"]);
        let at = record["dropped_at"]
            .as_u64()
            .expect("the second fit was stopped");
        for key in ["nlml", "nmse", "mnlp", "iterations"] {
            assert_eq!(two[key], one[key], "seed {seed} {key}: {two}\n{one}");
        }
        assert_eq!(record["first_nlml"], one["nlml"], "{two}\n{one}");
        let evals = |v: &serde_json::Value| v["evaluations"].as_u64().expect("evaluations");
        let extra = evals(&two) - evals(&one);
        assert!(
            extra < evals(&one) && extra <= 3 * (at + 1),
            "seed {seed}: {extra} more evaluations, stopped at {at}: {two}\n{one}"
        );
    }
    assert!(dropped_seconds > 0, "no seed kept the first start's end");
}

/// 240 monthly points of a yearly cycle on a trend with noise, one input `t` (years).
fn write_series(path: &Path) {
    let mut f = std::fs::File::create(path).expect("create");
    writeln!(f, "t,y").expect("write");
    for i in 0..240 {
        let t = 1990.0 + i as f64 / 12.0;
        let wobble = ((i * 7919) % 101) as f64 / 101.0 - 0.5;
        let y = 0.3 * (t - 1990.0)
            + (2.0 * std::f64::consts::PI * t).sin()
            + 0.3 * (t / 3.0).cos()
            + 0.2 * wobble;
        writeln!(f, "{t},{y}").expect("write");
    }
}

/// A kernel expression gets the two-start default (docs/methods.md §0.4): the second
/// start's subset fit is the exact GP with the composed kernel, its starts the parts'
/// own values scaled; `fit` reports two starts, the end kept is no worse than the
/// single start's (within the race's slack, a thousandth of a nat per point), and a
/// parameter fixed in the expression or by `--fix` is where it was fixed, whichever
/// start's end is kept. (Before, a kernel expression fitted from one start only.)
#[test]
fn a_composed_kernel_fit_runs_two_starts_and_holds_its_fixed_parameters() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("series.csv");
    write_series(&path);
    let s = path.display().to_string();
    let fit = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "fit",
            "--train",
            &s,
            "--split",
            "0.8",
            "--method",
            "fitc",
            "--m",
            "15",
            "--iters",
            "150",
            "--kernel",
            "se + se(ls=5) * periodic(period=1, fix=period)",
            "--fix",
            "se1.var=2",
            "--json",
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&stdout(&sgpw(&args))).expect("JSON")
    };
    let (two, one) = (fit(&[]), fit(&["--single-start"]));
    let record = &two["second_start"];
    assert!(record.is_object(), "two starts: {two}");
    assert!(
        record["subset_start"]
            .as_str()
            .is_some_and(|n| n.starts_with("each part's ℓ")),
        "{record}"
    );
    assert!(one["second_start"].is_null(), "{one}");
    let nlml = |v: &serde_json::Value| v["nlml"].as_f64().expect("nlml");
    let slack = 1e-3 * 192.0;
    assert!(nlml(&two) <= nlml(&one) + slack, "{two}\n{one}");
    for v in [&two, &one] {
        let k = v["kernel"].as_str().expect("a kernel");
        assert!(k.contains("period=1, fix=[var, period])"), "{k}");
        assert!(k.starts_with("se(var=2, "), "{k}");
    }
}

/// A composed kernel's fit that collapses is judged by its own variances (the sum of
/// its summands', not [hyper]'s σ0², which stays at its start) and restarted like a
/// plain kernel's (docs/methods.md §0.4): from one start, `se + matern52` on 16 inputs
/// of which 3 matter slides into the all-noise basin — flagged (`collapsed`) with
/// `--no-collapse-restart`, and without it restarted from a subset fit of the
/// composed kernel that finds the signal. (Before, a composed kernel's fit was never
/// judged collapsed and never restarted: it handed back the constant predictor.)
#[test]
fn a_collapsed_composed_kernel_fit_is_restarted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("many.csv");
    write_many_inputs_csv(&data);
    let d = data.display().to_string();
    let fit = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "fit",
            "--train",
            &d,
            "--split",
            "0.8",
            "--method",
            "vfe",
            "--m",
            "10",
            "--iters",
            "300",
            "--kernel",
            "se + matern52",
            "--single-start",
            "--json",
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&stdout(&sgpw(&args))).expect("JSON")
    };
    let off = fit(&["--no-collapse-restart"]);
    assert_eq!(off["collapsed"], true, "{off}");
    assert!(off["collapse_restart"].is_null(), "{off}");
    assert!(off["nmse"].as_f64().expect("nmse") > 0.99, "{off}");
    let on = fit(&[]);
    assert_eq!(on["collapsed"], false, "{on}");
    let record = &on["collapse_restart"];
    assert_eq!(record["kept_restart"], true, "{on}");
    assert_eq!(record["collapsed_nlml"], off["nlml"], "{on}\n{off}");
    assert!(
        record["subset_start"]
            .as_str()
            .is_some_and(|n| n.starts_with("each part's ℓ")),
        "{record}"
    );
    assert!(on["nmse"].as_f64().expect("nmse") < 0.1, "{on}");
}
