//! Property tests (proptest) of everything a user hands in: CSV and Parquet files,
//! session TOML, model TOML and command-line values. They generate malformed inputs —
//! truncated files, wrong types, huge and negative numbers, NaN/inf, empty and
//! duplicate columns, non-UTF-8 bytes, shapes that disagree, Parquet files with bytes
//! flipped in every region — and assert a clean error (or a clean result) and no panic.
//!
//! CI runs every target with two fixed seeds and a bounded number of cases per seed
//! (`SGPW_FUZZ_CASES`, default below); a release check runs 20,000 cases per target
//! with a fresh seed (docs/faults.md has the last one):
//!
//!     SGPW_FUZZ_CASES=20000 SGPW_FUZZ_SEED=$RANDOM cargo test --release --test fuzz -- --nocapture
//!
//! A failure prints the shrunk input (a Parquet case also keeps its file, see
//! `fuzz/parquet.rs`); every failure found becomes a test in `regressions` below.

use crate::common;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use sgpw::data::LoadSpec;
use sgpw::model_file::ModelFile;
use sgpw::session::Session;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Cases per target in CI (each target takes a few seconds at this count).
const CI_CASES: u32 = 256;

fn cases(ci: u32) -> u32 {
    std::env::var("SGPW_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ci)
}

/// The seeds to run: `SGPW_FUZZ_SEED`, else the two CI seeds (the second is the one
/// with which 3000 cases of the old Parquet target found polars' abort, issue 31).
fn seeds() -> Vec<u64> {
    match std::env::var("SGPW_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(seed) => vec![seed],
        None => vec![0x5397_2026, 20_261_124],
    }
}

fn runner(ci: u32, seed: u64) -> TestRunner {
    TestRunner::new(Config {
        cases: cases(ci),
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    })
}

/// How far the cases of a target got (printed with its count): a fuzzer whose inputs
/// all fail at the first check tests little.
static STAGES: std::sync::Mutex<Vec<(&'static str, usize)>> = std::sync::Mutex::new(Vec::new());

fn reached(stage: &'static str) {
    if let Ok(mut s) = STAGES.lock() {
        match s.iter_mut().find(|(n, _)| *n == stage) {
            Some((_, c)) => *c += 1,
            None => s.push((stage, 1)),
        }
    }
}

/// Run one target, print how many cases it tried and how long it took.
fn fuzz<S: Strategy>(name: &str, ci: u32, strategy: S, test: impl Fn(S::Value))
where
    S::Value: std::fmt::Debug,
{
    let started = Instant::now();
    let seeds = seeds();
    let n = cases(ci);
    let mut result = Ok(());
    for &seed in &seeds {
        result = runner(ci, seed)
            .run(&strategy, |v| {
                test(v);
                Ok(())
            })
            .map_err(|e| format!("seed {seed}: {e}"));
        if result.is_err() {
            break;
        }
    }
    let stages: Vec<String> = STAGES
        .lock()
        .map(|mut s| {
            let mine: Vec<String> = s
                .iter()
                .filter(|(k, _)| k.starts_with(name))
                .map(|(k, c)| format!("{c} {}", &k[name.len() + 1..]))
                .collect();
            s.retain(|(k, _)| !k.starts_with(name));
            mine
        })
        .unwrap_or_default();
    eprintln!(
        "fuzz {name}: {n} cases × {} seed(s) {seeds:?} in {:.1} s ({})",
        seeds.len(),
        started.elapsed().as_secs_f64(),
        stages.join(", ")
    );
    if let Err(e) = result {
        panic!("fuzz {name}: {e}");
    }
}

// ---------------------------------------------------------------- CSV

/// Cell texts a user's file may hold: numbers of every kind, and what is not a number.
fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => any::<f64>().prop_map(|v| v.to_string()),
        4 => (-1000i64..1000).prop_map(|v| v.to_string()),
        1 => Just(String::new()),
        1 => prop::sample::select(vec![
            "NaN", "nan", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e-400",
            "18446744073709551616", "-9223372036854775809", "0x10", "true", "abc",
            "\"3\"", "\"a,b\"", "1,5", " 7 ", "٣", "é", "NA", "null", "-0",
        ])
        .prop_map(str::to_string),
    ]
}

fn column_name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "x1", "x2", "x3", "y", "", "x1", "y ", "é", "a b", "\"q\"", "t",
    ])
    .prop_map(str::to_string)
}

#[derive(Debug, Clone)]
struct CsvCase {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    crlf: bool,
    bom: bool,
    /// Cut the file after this fraction of its bytes.
    truncate: Option<f64>,
    /// Overwrite a byte (at this fraction) with a non-UTF-8 byte.
    bad_byte: Option<(f64, u8)>,
}

/// A well-formed numeric table (names x1.., y) and a few mutations of it: weird cells,
/// weird or duplicate column names, ragged rows, a cut, a bad byte.
fn csv_case() -> impl Strategy<Value = CsvCase> {
    (1usize..5, 0usize..14)
        .prop_flat_map(|(cols, rows)| {
            (
                Just(cols),
                prop::collection::vec(prop::collection::vec(-50.0..50.0f64, cols), rows),
                prop::collection::vec((any::<usize>(), any::<usize>(), cell()), 0..3),
                prop::option::weighted(0.3, (any::<usize>(), column_name())),
                prop::option::weighted(0.15, (any::<usize>(), any::<bool>())),
                any::<bool>(),
                prop::bool::weighted(0.1),
                prop::option::weighted(0.1, 0.0..1.0f64),
                prop::option::weighted(0.1, (0.0..1.0f64, 0x80u8..=0xff)),
            )
        })
        .prop_map(
            |(cols, table, cells, rename, ragged, crlf, bom, truncate, bad_byte)| {
                let mut header: Vec<String> = (1..cols).map(|i| format!("x{i}")).collect();
                header.push("y".into());
                if let Some((i, name)) = rename {
                    header[i % cols] = name;
                }
                let mut rows: Vec<Vec<String>> = table
                    .iter()
                    .map(|r| r.iter().map(|v| v.to_string()).collect())
                    .collect();
                for (r, c, text) in cells {
                    if !rows.is_empty() {
                        let n = rows.len();
                        let row = &mut rows[r % n];
                        let k = row.len();
                        row[c % k] = text;
                    }
                }
                if let Some((r, longer)) = ragged
                    && !rows.is_empty()
                {
                    let n = rows.len();
                    if longer {
                        rows[r % n].push("1".into());
                    } else {
                        rows[r % n].pop();
                    }
                }
                CsvCase {
                    header,
                    rows,
                    crlf,
                    bom,
                    truncate,
                    bad_byte,
                }
            },
        )
}

fn csv_bytes(c: &CsvCase) -> Vec<u8> {
    let nl = if c.crlf { "\r\n" } else { "\n" };
    let mut text = String::new();
    if c.bom {
        text.push('\u{feff}');
    }
    text.push_str(&c.header.join(","));
    text.push_str(nl);
    for r in &c.rows {
        text.push_str(&r.join(","));
        text.push_str(nl);
    }
    let mut bytes = text.into_bytes();
    if let Some(f) = c.truncate {
        bytes.truncate((bytes.len() as f64 * f) as usize);
    }
    if let Some((f, b)) = c.bad_byte
        && !bytes.is_empty()
    {
        let i = ((bytes.len() - 1) as f64 * f) as usize;
        bytes[i] = b;
    }
    bytes
}

#[derive(Debug, Clone)]
struct LoadCase {
    train: CsvCase,
    test: Option<CsvCase>,
    split: Option<f64>,
    target: Option<String>,
    features: Option<Vec<String>>,
    drop_missing: bool,
}

fn split_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        0.0..1.0f64,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-0.5),
        Just(0.0),
        Just(1.0),
        Just(1e-300),
        any::<f64>(),
    ]
}

fn load_case() -> impl Strategy<Value = LoadCase> {
    (
        csv_case(),
        prop::option::weighted(0.3, csv_case()),
        prop::option::weighted(0.3, split_value()),
        prop::option::weighted(0.2, column_name()),
        prop::option::weighted(0.2, prop::collection::vec(column_name(), 0..4)),
        any::<bool>(),
    )
        .prop_map(
            |(train, test, split, target, features, drop_missing)| LoadCase {
                train,
                test,
                split,
                target,
                features,
                drop_missing,
            },
        )
}

/// A loaded data set must be usable: finite numbers, shapes that agree.
fn check_dataset(d: &sgpw::data::Dataset) {
    assert_eq!(d.x_train.nrows(), d.y_train.len());
    assert_eq!(d.x_train.ncols(), d.feature_names.len());
    assert!(
        d.x_train
            .iter()
            .chain(d.y_train.iter())
            .all(|v| v.is_finite())
    );
    if let (Some(x), Some(y)) = (&d.x_test, &d.y_test) {
        assert_eq!(x.nrows(), y.len());
        assert_eq!(x.ncols(), d.x_train.ncols());
        assert!(x.iter().chain(y.iter()).all(|v| v.is_finite()));
    }
}

#[test]
fn csv_files_load_or_fail_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let train = dir.path().join("train.csv");
    let test = dir.path().join("test.csv");
    fuzz("csv", CI_CASES, load_case(), |c| {
        std::fs::write(&train, csv_bytes(&c.train)).expect("writes");
        if let Some(t) = &c.test {
            std::fs::write(&test, csv_bytes(t)).expect("writes");
        }
        let spec = LoadSpec {
            train: train.clone(),
            test: c.test.as_ref().map(|_| test.clone()),
            split: if c.test.is_some() { None } else { c.split },
            seed: 1,
            target: c.target.clone(),
            features: c.features.clone(),
            drop_missing: c.drop_missing,
        };
        if let Ok(d) = sgpw::data::load(&spec) {
            reached("csv loaded");
            check_dataset(&d);
        }
        let features = c.features.clone().unwrap_or_default();
        if let Ok(x) = sgpw::data::load_inputs(&train, &features) {
            assert!(x.iter().all(|v| v.is_finite()));
        }
    });
}

// ---------------------------------------------------------------- Parquet

#[path = "fuzz/parquet.rs"]
mod parquet;

// ---------------------------------------------------------------- TOML values

/// A TOML value of any kind, often the wrong one.
fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (-5i64..300).prop_map(|v| v.to_string()),
        2 => prop::sample::select(vec![
            "nan", "inf", "-inf", "1e308", "-1e308", "0.0", "-0.0", "1e-320",
            "18446744073709551615", "9223372036854775807", "-9223372036854775808", "99999999999999999999",
            "\"fitc\"", "\"\"", "\"x1\"", "true", "[]", "[1, 2]", "[[1.0], [2.0, 3.0]]", "[\"a\"]",
            "{}", "[nan, inf]", "[0]", "[1e308, -1e308]", "\"\\u00e9\"", "1979-05-27",
        ])
        .prop_map(str::to_string),
        2 => any::<f64>().prop_map(|v| {
            if v.is_finite() { format!("{v:?}") } else if v.is_nan() { "nan".into() } else if v > 0.0 { "inf".into() } else { "-inf".into() }
        }),
        1 => prop::collection::vec(-3.0..3.0f64, 0..4)
            .prop_map(|v| format!("[{}]", v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", "))),
    ]
}

/// Text edits: replace a value, drop or duplicate a line, cut the text, bad bytes.
#[derive(Debug, Clone)]
enum Edit {
    Value(usize, String),
    DropLine(usize),
    DupLine(usize),
    Insert(usize, String, String),
    Truncate(f64),
    Byte(f64, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => (any::<usize>(), toml_value()).prop_map(|(i, v)| Edit::Value(i, v)),
        1 => any::<usize>().prop_map(Edit::DropLine),
        1 => any::<usize>().prop_map(Edit::DupLine),
        2 => (any::<usize>(), prop::sample::select(vec![
                "m", "seeds", "iterations", "split", "split_seed", "standardize", "label",
                "method", "dataset", "name", "nmse", "status", "trace", "iterations", "m",
                "lengthscales", "points", "frequencies", "jitter", "alpha", "approx",
                "input_center", "input_scale", "target_scale", "posterior", "mean", "subset",
                "init_lengthscales_from_subset", "stages", "centres", "init", "bogus",
             ]).prop_map(str::to_string), toml_value())
            .prop_map(|(i, k, v)| Edit::Insert(i, k, v)),
        1 => (0.0..1.0f64).prop_map(Edit::Truncate),
        1 => ((0.0..1.0f64), 0x80u8..=0xff).prop_map(|(f, b)| Edit::Byte(f, b)),
    ]
}

/// Apply edits to a TOML text; returns bytes (which may not be UTF-8).
fn apply(text: &str, edits: &[Edit]) -> Vec<u8> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut cut = None;
    let mut bytes = Vec::new();
    for e in edits {
        let n = lines.len().max(1);
        match e {
            Edit::Value(i, v) => {
                let i = i % n;
                if let Some(l) = lines.get_mut(i)
                    && let Some((k, _)) = l.split_once(" = ")
                {
                    *l = format!("{k} = {v}");
                }
            }
            Edit::DropLine(i) => {
                if !lines.is_empty() {
                    lines.remove(i % n);
                }
            }
            Edit::DupLine(i) => {
                if let Some(l) = lines.get(i % n).cloned() {
                    lines.insert(i % n, l);
                }
            }
            Edit::Insert(i, k, v) => {
                lines.insert(i % (n + 1).min(lines.len() + 1), format!("{k} = {v}"))
            }
            Edit::Truncate(f) => cut = Some(*f),
            Edit::Byte(f, b) => bytes.push((*f, *b)),
        }
    }
    let mut out = lines.join("\n").into_bytes();
    if let Some(f) = cut {
        out.truncate((out.len() as f64 * f) as usize);
    }
    for (f, b) in bytes {
        if !out.is_empty() {
            let i = ((out.len() - 1) as f64 * f) as usize;
            out[i] = b;
        }
    }
    out
}

// ---------------------------------------------------------------- sessions

const SESSION: &str = r#"schema_version = 1
name = "fuzz"
description = "a session"

[[datasets]]
name = "d"
train = "d.csv"
split = 0.8
split_seed = 2

[[datasets]]
name = "e"
train = "e.csv"
test = "e_test.csv"
target = "y"
features = ["x1"]

[[runs]]
dataset = "d"
method = "fitc"
m = [2, 3]
seeds = [1, 2]
iterations = 20
standardize = true

[[runs]]
dataset = "e"
method = "tfifgp"
label = "tfifgp-zero"
m = [2]
iterations = 5

[runs.options]
centres = "zero"
subset = 10

[[results]]
dataset = "d"
label = "fitc"
m = 2
seed = 1
method = "fitc"
status = "done"
nlml = 12.5
nmse = 0.25
mnlp = 0.5
iterations = 3
train_seconds = 0.01
jitter = 1e-8
stop = "converged"
trace = [20.0, 15.0, 12.5]

[results.model]
method = "fitc"
target_mean = 0.5

[results.model.hyper]
signal_variance = 1.0
lengthscales = [1.0]
noise_variance = 0.1

[results.model.inducing]
points = [[0.0], [1.0]]

[[results]]
dataset = "e"
label = "tfifgp-zero"
m = 2
seed = 1
method = "tfifgp"
status = "failed"
message = "m = 2 is larger than the 1 training points"
"#;

/// Everything the app and `report` do with a session that parsed: expand its runs,
/// write and re-read it, fold it as an autosave, print its report, open it in the app
/// and draw every chart at 80×24.
fn use_session(s: &Session) {
    let _ = s.all_runs();
    let text = s.to_toml().expect("a parsed session writes");
    Session::parse(&text).expect("a written session reads");
    let _ = sgpw::session::autosave::fold(&Session::new("x"), s, "j".into());
    let _ = sgpw::session::report::tables(s, true, true);
    let _ = sgpw::session::report::tables(s, false, false);
    common::draw_app(s);
}

#[test]
fn session_files_parse_or_fail_cleanly() {
    Session::parse(SESSION).expect("the template parses");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.toml");
    fuzz(
        "session",
        CI_CASES,
        prop::collection::vec(edit(), 1..4),
        |edits| {
            let bytes = apply(SESSION, &edits);
            std::fs::write(&path, &bytes).expect("writes");
            match Session::read(&path) {
                Ok(s) => {
                    reached("session parsed");
                    use_session(&s)
                }
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        },
    );
}

// ---------------------------------------------------------------- model files

/// Model files as `sgpw fit --save-model` writes them, one per kind of method
/// (inducing points, pseudo-input variants, inter-domain features, spectral points,
/// the exact GP), fitted on a small 2-D data set; some standardised.
fn model_templates() -> Vec<String> {
    let x = nalgebra::DMatrix::from_fn(14, 2, |i, j| ((i * (j + 2)) as f64 * 0.37).sin());
    let y: Vec<f64> = (0..14).map(|i| (i as f64 * 0.5).cos()).collect();
    let ds = sgpw::data::Dataset {
        classes: None,
        feature_names: vec!["x1".into(), "x2".into()],
        target_name: "y".into(),
        x_train: x,
        y_train: nalgebra::DVector::from_vec(y),
        x_test: None,
        y_test: None,
        notes: Vec::new(),
    };
    [
        ("fitc", true, ""),
        ("pep", false, ""),
        ("vfe", false, ""),
        ("tfifgp", true, "centres = \"subset\"\n"),
        ("smgp", false, ""),
        ("psds", true, ""),
        ("ssgp", false, ""),
        ("full", true, ""),
        ("greedy", true, "select = \"sb\"\n"),
    ]
    .iter()
    .map(|(method, standardize, options)| {
        let spec = sgpw::run_spec::RunSpec {
            method: method.to_string(),
            m: 2,
            seed: 1,
            iters: 3,
            standardize: *standardize,
            options: common::options(options),
        };
        let (r, _) = common::fit(&ds, &spec);
        let r = r.unwrap_or_else(|e| panic!("{method}: {e}"));
        r.model.to_toml().expect("writes")
    })
    .collect()
}

#[test]
fn model_files_check_or_fail_cleanly() {
    let templates = model_templates();
    for m in &templates {
        let model = ModelFile::parse(m).unwrap_or_else(|e| panic!("template: {e}\n{m}"));
        model
            .check()
            .unwrap_or_else(|e| panic!("template: {e}\n{m}"));
    }
    let x = nalgebra::DMatrix::from_fn(6, 2, |i, j| (i as f64) * 0.3 - (j as f64));
    let y: Vec<f64> = (0..6).map(|i| (i as f64).sin()).collect();
    fuzz(
        "model",
        CI_CASES,
        (
            prop::sample::select(templates),
            prop::collection::vec(edit(), 1..5),
        ),
        |(template, edits)| {
            let bytes = apply(&template, &edits);
            let Ok(text) = String::from_utf8(bytes) else {
                return;
            };
            let Ok(model) = ModelFile::parse(&text) else {
                return;
            };
            reached("model parsed");
            let Ok(method) = model.check() else { return };
            reached("model checked");
            let _ = model.to_toml();
            if let Ok(p) = sgpw::train::Predictor::new(model.clone(), Some((&x, &y)))
                && p.predict(&x).is_ok()
            {
                reached("model predicted");
            }
            let d = method.input_dim(&model);
            if let Ok(data) = sgpw::train::model_data(&model, &x, &y)
                && d == 2
            {
                let _ = method.objective(&model, &data, &sgpw::exec::Exec::default());
            }
        },
    );
}

// ---------------------------------------------------------------- command-line values

/// Values a user may type for a number or a name: mostly numbers, some of them
/// huge, negative, NaN or inf, and some words.
fn arg_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0u64..40).prop_map(|v| v.to_string()),
        3 => prop::sample::select(vec![
            "0", "1", "0.5", "0.9", "1.5", "-1", "-0", "-0.5", "1e308", "1e-308", "NaN", "inf",
            "-inf", "18446744073709551615", "18446744073709551616", "99999999999",
            "9223372036854775807", "4294967296", "65536",
        ])
        .prop_map(str::to_string),
        2 => prop::sample::select(vec![
            "", " ", "abc", "fitc", "full", "psds", "ssgp", "tfifgp", "x1", "y", "x2", "٣",
            "1,2", "a,,b", "--m", "-", "zero", "subset", "sinc", "spiral", "xsinx3",
            "tiny.csv", "tiny_test.csv", "model.toml", "s.toml", "nope.csv",
        ])
        .prop_map(str::to_string),
    ]
}

#[derive(Debug, Clone)]
struct CliCase {
    command: usize,
    values: Vec<String>,
}

/// Commands with their flags; `{}` marks where a generated value goes.
fn command_templates(dir: &Path) -> Vec<Vec<String>> {
    let d = |f: &str| dir.join(f).display().to_string();
    let t = |s: &str| {
        s.replace("TRAIN", &d("tiny.csv"))
            .replace("TEST", &d("tiny_test.csv"))
            .replace("MODEL", &d("model.toml"))
            .replace("PSDS", &d("psds.toml"))
            .replace("SESSION", &d("s.toml"))
            .replace("OUT", &d("out"))
            .split(' ')
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    [
        "fit --train TRAIN --test TEST --method {} --m {} --iters {} --seed 1",
        "fit --train TRAIN --split {} --m 3 --iters 20 --seed {} --subset {}",
        "fit --train TRAIN --target {} --features {} --m 2 --iters {}",
        "fit --train TRAIN --method {} --m 3 --iters 20 --init-lengthscales-from-subset {} --standardize",
        "fit --train TRAIN --method {} --m {} --iters 10 --centres {} --json",
        "fit --train TRAIN --method greedy --m {} --select {} --adapt {} --iters 5 --discard-cache {}",
        "predict --model MODEL --input {} --train {}",
        "predict --model {} --input TRAIN",
        "nlml --model MODEL --train TRAIN --target {} --json",
        "stream --model PSDS --train TRAIN --test TEST --every {}",
        "bench --method {} --n {} --d {} --m {} --reps 1",
        "gen {} --seed {} --out OUT",
        "run SESSION --jobs {}",
        "report {} --merge-generations",
    ]
    .iter()
    .map(|s| t(s))
    .collect()
}

fn cli_case(templates: usize) -> impl Strategy<Value = CliCase> {
    (0..templates, prop::collection::vec(arg_value(), 4))
        .prop_map(|(command, values)| CliCase { command, values })
}

/// Run the real binary; at most `limit`, then it is killed and the case fails.
fn run_bounded(args: &[String], cwd: &Path, limit: Duration) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut stderr = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let end = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().expect("waits") {
            break s;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sgpw {args:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    (status.code(), reader.join().unwrap_or_default())
}

fn cli_fixture(dir: &Path) {
    let mut train = String::from("x1,x2,y\n");
    let mut test = train.clone();
    for i in 0..24 {
        let (a, b) = ((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos());
        train.push_str(&format!("{a},{b},{}\n", a * b + 0.1));
        test.push_str(&format!("{b},{a},{}\n", a - b));
    }
    std::fs::write(dir.join("tiny.csv"), train).expect("writes");
    std::fs::write(dir.join("tiny_test.csv"), test).expect("writes");
    for (method, file) in [("fitc", "model.toml"), ("psds", "psds.toml")] {
        let out = Command::new(env!("CARGO_BIN_EXE_sgpw"))
            .args(["fit", "--train", "tiny.csv", "--method", method, "--m", "3"])
            .args(["--iters", "10", "--save-model", file])
            .current_dir(dir)
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::write(
        dir.join("s.toml"),
        "schema_version = 1\nname = \"c\"\n[[datasets]]\nname = \"t\"\ntrain = \"tiny.csv\"\n\
         [[runs]]\ndataset = \"t\"\nmethod = \"fitc\"\nm = [2, 3]\niterations = 10\n",
    )
    .expect("writes");
}

#[test]
fn command_line_values_give_clean_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    cli_fixture(dir.path());
    let templates = command_templates(dir.path());
    fuzz("cli", CI_CASES / 2, cli_case(templates.len()), |c| {
        let mut values = c.values.iter();
        let args: Vec<String> = templates[c.command]
            .iter()
            .map(|a| {
                if a == "{}" {
                    values.next().cloned().unwrap_or_default()
                } else {
                    a.clone()
                }
            })
            .collect();
        let (code, err) = run_bounded(&args, dir.path(), Duration::from_secs(60));
        reached(match code {
            Some(0) => "cli exit 0",
            Some(1) => "cli exit 1",
            Some(2) => "cli exit 2",
            Some(3) => "cli exit 3",
            _ => "cli exit other",
        });
        assert!(
            matches!(code, Some(0..=3)),
            "sgpw {args:?}: exit {code:?}\n{err}"
        );
        assert!(!err.contains("panicked"), "sgpw {args:?}:\n{err}");
        if code != Some(0) {
            assert!(
                !err.trim().is_empty(),
                "sgpw {args:?}: failed without a message"
            );
        }
    });
}

// ---------------------------------------------------------------- regressions

/// Inputs the fuzzers found to panic, kept as tests.
mod regressions {
    use super::*;

    /// `sgpw run --jobs 99999999999` started threads until the machine refused one
    /// (a panic in thread creation): now an error.
    #[test]
    fn huge_jobs_is_an_error() {
        let out = Command::new(env!("CARGO_BIN_EXE_sgpw"))
            .args(["run", "sessions/example.toml", "--jobs", "99999999999"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("at most 256"), "{err}");
    }

    /// `sgpw bench --n 99999999999` asks for 10¹¹ × (8 + 4·50) doubles; it is now
    /// an error before anything is allocated.
    #[test]
    fn huge_bench_is_an_error() {
        let out = Command::new(env!("CARGO_BIN_EXE_sgpw"))
            .args(["bench", "--n", "99999999999", "--reps", "1"])
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("16 GB"), "{err}");
    }
}

// ---------------------------------------------------------------- keys in the app

/// Keys a user may press: every key of the table, form editing keys, and text.
fn key_event() -> impl Strategy<Value = ratatui::crossterm::event::KeyEvent> {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let plain = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    prop_oneof![
        6 => prop::sample::select(
            "?\tjkgnaexXRr+- c[]soq123yY0-9.,/NnSz".chars().collect::<Vec<_>>()
        )
        .prop_map(move |c| plain(KeyCode::Char(c))),
        4 => prop::sample::select(vec![
            KeyCode::Up, KeyCode::Down, KeyCode::Left, KeyCode::Right, KeyCode::Enter,
            KeyCode::Esc, KeyCode::Tab, KeyCode::BackTab, KeyCode::Backspace, KeyCode::Delete,
            KeyCode::Home, KeyCode::End, KeyCode::PageUp, KeyCode::PageDown,
        ])
        .prop_map(plain),
        1 => prop::sample::select(vec!['u', 'c', 'a', 'e', 'w'])
            .prop_map(|c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)),
        1 => any::<char>().prop_map(move |c| plain(KeyCode::Char(c))),
    ]
}

/// Random key presses in the app (on a session with runs, results and a loaded data
/// set; started runs finish at once): the transition and the screen never panic.
#[test]
fn key_presses_never_panic_the_app() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use sgpw::jobs::JobEvent;
    use sgpw::tui::state::{App, Effect, Event};
    let session = Session::parse(SESSION).expect("the template parses");
    let x = nalgebra::DMatrix::from_fn(20, 1, |i, _| i as f64 * 0.1);
    let data = std::sync::Arc::new(sgpw::data::Dataset {
        classes: None,
        feature_names: vec!["x1".into()],
        target_name: "y".into(),
        y_train: nalgebra::DVector::from_fn(20, |i, _| (i as f64 * 0.3).sin()),
        x_train: x,
        x_test: None,
        y_test: None,
        notes: Vec::new(),
    });
    fuzz(
        "keys",
        CI_CASES / 2,
        (
            prop::collection::vec(key_event(), 1..60),
            prop::sample::select(vec![(80u16, 24u16), (160, 48), (40, 10)]),
        ),
        |(keys, (w, h))| {
            let theme = sgpw::tui::theme::Theme {
                color: false,
                ascii: true,
            };
            let (mut app, _) = App::new("/nowhere/k.toml".into(), session.clone(), theme);
            app.update(Event::DataLoaded {
                name: "d".into(),
                epoch: 1,
                result: Ok(data.clone()),
            });
            app.update(Event::DataLoaded {
                name: "e".into(),
                epoch: 1,
                result: Err("e.csv: no such file".into()),
            });
            let mut t = Terminal::new(TestBackend::new(w, h)).expect("a test terminal");
            for k in keys {
                let effects = app.update(Event::Key(k));
                for e in effects {
                    if let Effect::Submit { id, key, spec, .. } = e {
                        let r = sgpw::jobs::outcome(
                            key,
                            &spec.method,
                            Err(sgpw::error::Error::numerical("not run in this test")),
                        );
                        app.update(Event::Job(JobEvent::Finished {
                            id,
                            result: Box::new(r),
                        }));
                    }
                }
                app.update(Event::Tick(Duration::from_millis(200)));
                t.draw(|f| sgpw::tui::view::draw(f, &app)).expect("draws");
                reached("keys pressed");
                if app.quit {
                    break;
                }
            }
        },
    );
}
