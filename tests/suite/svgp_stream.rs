//! SVGP on a training file read a block at a time (docs/methods.md §8.4): a file of
//! one block trains bit for bit as the loaded data do for an epoch; a file of several
//! blocks (Parquet row groups, CSV blocks) serves every row exactly once per epoch, in
//! an order fixed by the seed; the full ELBO read from the file is the in-memory one;
//! a file damaged during training is an error naming it; `--restarts` with `--epochs`
//! gives each start a tenth of the epochs.

use crate::common;
use common::*;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::data::big::{big_function, write_big};
use sgpw::data::file_rows::{FileRows, SAMPLE_ROWS};
use sgpw::data::{LoadSpec, TrainData};
use sgpw::methods::Method;
use sgpw::methods::svgp::{Params, SVGP, TrainingRows};
use sgpw::run_context::RunContext;
use sgpw::run_spec::{MethodOptions, RunSpec};
use std::path::Path;

fn spec(m: usize, batch: usize, epochs: usize) -> RunSpec {
    RunSpec {
        method: "svgp".into(),
        m,
        seed: 3,
        iters: 50,
        standardize: true,
        options: MethodOptions {
            batch: Some(batch),
            epochs: Some(epochs),
            ..Default::default()
        },
    }
}

fn load_spec(path: &Path) -> LoadSpec {
    LoadSpec {
        train: path.to_path_buf(),
        ..Default::default()
    }
}

/// A file of one block: the streamed run of one epoch is the in-memory run, bit for
/// bit (same sample = the whole file, same standardisation, start, minibatches and
/// full ELBO chunks).
#[test]
fn a_one_block_file_trains_as_the_loaded_data_do() {
    let dir = tempfile::tempdir().expect("tmp");
    for parquet in [true, false] {
        let path = dir
            .path()
            .join(if parquet { "one.parquet" } else { "one.csv" });
        write_big(&path, 300, 2, 5, parquet).expect("writes");
        let data = load_spec(&path);
        let s = spec(8, 32, 1);
        let valid = s.check(300).expect("valid");
        let ctx = RunContext::quiet(ex());
        let loaded = sgpw::data::load(&data).expect("loads");
        let a = sgpw::train::fit(&loaded, &valid, &ctx).expect("in memory");
        let b = sgpw::stream_fit::fit(&data, &valid, &ctx).expect("streamed");
        assert_eq!(b.n_train, 300);
        let b = b.result;
        assert_eq!(a.model.tables, b.model.tables, "parquet {parquet}");
        assert_eq!(a.model.hyper, b.model.hyper);
        assert_eq!(a.model.standardize, b.model.standardize);
        assert_eq!(a.model.target_mean.to_bits(), b.model.target_mean.to_bits());
        assert_eq!(a.model.posterior, b.model.posterior);
        assert_eq!(a.trace, b.trace);
        assert_eq!(a.nlml.to_bits(), b.nlml.to_bits());
    }
}

/// With its defaults the fit ends in the exact stage (300 rows: the second stage is the
/// whole data), whose bound a file takes from svgp's own code at the closed-form q(u),
/// two passes over the file per evaluation (the loaded data take it from vfe's): it
/// converges, and ends where the loaded fit does (their minibatch stages drew other
/// orders, so to a tolerance).
#[test]
fn the_exact_stage_from_a_file_ends_as_the_loaded_one() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("one.parquet");
    write_big(&path, 300, 2, 5, true).expect("writes");
    let data = load_spec(&path);
    let s = RunSpec {
        iters: sgpw::run_spec::DEFAULT_ITERATIONS,
        options: MethodOptions::default(),
        ..spec(8, 32, 1)
    };
    let valid = s.check(300).expect("valid");
    let ctx = RunContext::quiet(ex());
    let loaded = sgpw::data::load(&data).expect("loads");
    let a = sgpw::train::fit(&loaded, &valid, &ctx).expect("in memory");
    let b = sgpw::stream_fit::fit(&data, &valid, &ctx)
        .expect("streamed")
        .result;
    assert_eq!(a.stop, sgpw::optim::Stop::Converged);
    assert_eq!(b.stop, a.stop);
    let rb: sgpw::methods::svgp::SvgpRecord = b.model.require().expect("[svgp]");
    let exact_steps = rb.steps - rb.stage_at[0];
    assert!(exact_steps >= 10, "{exact_steps} L-BFGS steps");
    let rel = (a.nlml - b.nlml).abs() / a.nlml.abs();
    eprintln!("loaded {} streamed {} ({rel:e})", a.nlml, b.nlml);
    assert!(rel < 1e-3, "{} vs {} ({rel:e})", a.nlml, b.nlml);
}

/// Rows in the file's units (no standardisation), for looking at the order itself.
fn raw_units() -> sgpw::data::file_rows::Units {
    Box::new(|x: &DMatrix<f64>, y: &[f64]| {
        Ok(TrainData {
            x: x.clone(),
            y: y.to_vec(),
            log_exposure: None,
        })
    })
}

/// The targets of two epochs of minibatches of 1000 rows, each minibatch checked
/// against its inputs (y is the generator's function of x plus noise of sd 0.1).
fn two_epochs(path: &Path, seed: u64) -> Vec<Vec<f64>> {
    let mut rows = FileRows::index(&load_spec(path), 1, SAMPLE_ROWS)
        .expect("indexes")
        .rows;
    assert!(
        rows.blocks() >= 3,
        "{}: {} blocks",
        path.display(),
        rows.blocks()
    );
    rows.set_units(raw_units());
    let n = rows.n();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..2)
        .map(|_| {
            let mut epoch = Vec::with_capacity(n);
            while epoch.len() < n {
                let b = rows.next_batch(1000, &mut rng).expect("a batch");
                let (x, y) = (b.x, b.y);
                assert!(!y.is_empty() && y.len() <= 1000 && epoch.len() + y.len() <= n);
                for (i, v) in y.iter().enumerate() {
                    let xi: Vec<f64> = x.row(i).iter().copied().collect();
                    assert!((v - big_function(&xi)).abs() < 0.6, "row and target apart");
                }
                epoch.extend(y);
            }
            epoch
        })
        .collect()
}

/// Parquet row groups and CSV blocks: every row once per epoch, the epochs in
/// different orders (not the file's), the same orders again from the same seed,
/// others from another seed.
#[test]
fn every_row_is_served_once_per_epoch_in_an_order_fixed_by_the_seed() {
    let dir = tempfile::tempdir().expect("tmp");
    let n = 150_000;
    for parquet in [true, false] {
        let path = dir
            .path()
            .join(if parquet { "many.parquet" } else { "many.csv" });
        write_big(&path, n, 2, 7, parquet).expect("writes");
        let file_y = sgpw::data::load(&load_spec(&path)).expect("loads").y_train;
        let mut want: Vec<u64> = file_y.iter().map(|v| v.to_bits()).collect();
        want.sort_unstable();
        let epochs = two_epochs(&path, 11);
        for e in &epochs {
            let mut got: Vec<u64> = e.iter().map(|v| v.to_bits()).collect();
            got.sort_unstable();
            assert!(
                got == want,
                "parquet {parquet}: an epoch is not every row once"
            );
        }
        assert_ne!(epochs[0], epochs[1], "a new order every epoch");
        assert_ne!(&epochs[0][..1000], &file_y.as_slice()[..1000], "shuffled");
        assert_eq!(
            two_epochs(&path, 11),
            epochs,
            "the same seed, the same order"
        );
        assert_ne!(
            two_epochs(&path, 12)[0],
            epochs[0],
            "another seed, another order"
        );
    }
}

/// The full negative ELBO read from a file of several blocks, a chunk at a time, is
/// the in-memory evaluation of the loaded data at the same parameters.
#[test]
fn the_full_elbo_from_the_file_is_the_in_memory_one() {
    let dir = tempfile::tempdir().expect("tmp");
    for parquet in [true, false] {
        let path = dir.path().join(if parquet { "f.parquet" } else { "f.csv" });
        write_big(&path, 140_000, 3, 9, parquet).expect("writes");
        let data = load_spec(&path);
        let s = spec(6, 4096, 1);
        let valid = s.check(140_000).expect("valid");
        let ctx = RunContext::quiet(ex());
        let fitted = sgpw::stream_fit::fit(&data, &valid, &ctx).expect("streamed");
        let model = fitted.result.model;
        let mut rows = FileRows::index(&data, 1, SAMPLE_ROWS)
            .expect("indexes")
            .rows;
        let units = model.clone();
        rows.set_units(Box::new(move |x: &DMatrix<f64>, y: &[f64]| {
            sgpw::train::model_data(&units, x, y)
        }));
        let from_file = rows
            .full(&model, &Params::of(&model).expect("params"), &ex())
            .expect("reads");
        let loaded = sgpw::data::load(&data).expect("loads");
        let td = sgpw::train::model_data(&model, &loaded.x_train, loaded.y_train.as_slice())
            .expect("units");
        let in_memory = SVGP.nlml(&model, &td, &ex()).expect("evaluates");
        let rel = (from_file - in_memory).abs() / in_memory.abs();
        assert!(
            rel <= 1e-12,
            "parquet {parquet}: {from_file} vs {in_memory} ({rel:e})"
        );
    }
}

/// Serve epochs until an error: the file was damaged after its pass.
fn error_while_training(path: &Path, damage: impl FnOnce(&Path)) -> String {
    let mut rows = FileRows::index(&load_spec(path), 1, SAMPLE_ROWS)
        .expect("indexes")
        .rows;
    rows.set_units(raw_units());
    damage(path);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..1000 {
        if let Err(e) = rows.next_batch(1000, &mut rng) {
            return e.to_string();
        }
    }
    panic!("{}: the damage went unnoticed", path.display());
}

/// A file damaged while training reads it: an error that names the file (and, for a
/// CSV, the row), never a panic.
#[test]
fn a_file_damaged_during_training_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let csv = dir.path().join("hurt.csv");
    write_big(&csv, 150_000, 2, 3, false).expect("writes");
    let msg = error_while_training(&csv, |p| {
        let mut text = std::fs::read(p).expect("read");
        // a number in the middle of the file becomes text of the same length
        let mid = text.len() / 2;
        let start = mid + text[mid..].iter().position(|&b| b == b'\n').expect("line") + 1;
        text[start] = b'z';
        std::fs::write(p, text).expect("write");
    });
    assert!(msg.contains("hurt.csv") && msg.contains("row"), "{msg}");
    let pq = dir.path().join("hurt.parquet");
    write_big(&pq, 150_000, 2, 3, true).expect("writes");
    let msg = error_while_training(&pq, |p| {
        let len = std::fs::metadata(p).expect("meta").len();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(p)
            .expect("open");
        f.set_len(len / 2).expect("truncate");
    });
    assert!(msg.contains("hurt.parquet"), "{msg}");
}

/// `--restarts K` with `--epochs E`: each start trains max(1, E/10) epochs and the
/// best continues for the rest, so the run's steps are E epochs' (7 steps an epoch
/// here), not (K + 1)·E epochs'.
#[test]
fn restarts_share_the_epochs() {
    let d = toy_data(200, 2, 4);
    let ds = sgpw::data::Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into()],
        target_name: "y".into(),
        x_train: d.x,
        y_train: nalgebra::DVector::from_vec(d.y),
        x_test: None,
        y_test: None,
        notes: Vec::new(),
    };
    let mut s = spec(5, 32, 5);
    s.options.restarts = Some(3);
    let (r, _) = fit(&ds, &s);
    let r = r.expect("fits");
    assert_eq!(r.iterations, 35, "1 epoch per start, then 4");
    let record: sgpw::methods::svgp::SvgpRecord = r.model.require().expect("[svgp]");
    assert_eq!(record.steps, 28);
}

/// Fit `run` with a context whose sink cancels the run once the fit (not the start)
/// reports step `at`: the partial result it kept.
fn cancelled_at(
    at: usize,
    run: impl FnOnce(&RunContext) -> sgpw::error::Result<()>,
) -> sgpw::error::Partial {
    use sgpw::exec::{CancelToken, Exec, Par};
    use sgpw::run_context::{Phase, Progress};
    let token = CancelToken::new();
    let cancel = token.clone();
    // the phase entered last: the start's own fits report iterations too
    let fitting = std::cell::Cell::new(false);
    let sink = move |p: &Progress| {
        if p.nlml.is_none() {
            fitting.set(matches!(p.phase, Phase::Fit { .. }));
        } else if fitting.get() && p.iteration >= at {
            cancel.cancel();
        }
    };
    let ctx = RunContext::new(Exec::new(Par::Threads(0), token), &sink);
    match run(&ctx) {
        Err(sgpw::error::Error::CancelledAfter(p)) => *p,
        Err(e) => panic!("not cancelled after it started: {e}"),
        Ok(()) => panic!("not cancelled"),
    }
}

/// One cancel behaviour on every path through a fit (`train::finish`): a streamed fit
/// cancelled at a step keeps how far it got exactly as the in-memory fit of the same
/// rows cancelled at that step does (a file of one block trains bit for bit as the
/// loaded rows do), and the end a distributed fit's root hands its cancelled outcome
/// to keeps it too, on the raw target scale.
#[test]
fn a_cancelled_fit_keeps_how_far_it_got_on_every_path() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("one.csv");
    write_big(&path, 300, 2, 5, false).expect("writes");
    let data = load_spec(&path);
    let valid = spec(8, 32, 50).check(300).expect("valid");
    let loaded = sgpw::data::load(&data).expect("loads");
    let in_memory = cancelled_at(5, |ctx| sgpw::train::fit(&loaded, &valid, ctx).map(|_| ()));
    let streamed = cancelled_at(5, |ctx| {
        sgpw::stream_fit::fit(&data, &valid, ctx).map(|_| ())
    });
    assert_eq!(in_memory.iterations, 5);
    assert_eq!(in_memory.trace.len(), 6, "the start and each step");
    assert_eq!(
        (streamed.iterations, &streamed.trace),
        (in_memory.iterations, &in_memory.trace)
    );
    // the shared end, given a cancelled outcome as a distributed fit's root gives it
    let model = sgpw::train::fit(&loaded, &valid.with_epochs(1), &RunContext::quiet(ex()))
        .expect("fits")
        .model;
    let outcome = sgpw::optim::Outcome {
        x: Vec::new(),
        f: 2.0,
        grad: Vec::new(),
        iterations: 2,
        evaluations: 3,
        trace: vec![4.0, 3.0, 2.0],
        stop: sgpw::optim::Stop::Cancelled,
    };
    let stopped =
        sgpw::train::Stopped::plain(&SVGP, model, outcome, 10.0, std::time::Instant::now(), 300);
    let td = TrainData {
        x: loaded.x_train.clone(),
        y: loaded.y_train.as_slice().to_vec(),
        log_exposure: None,
    };
    let ended = sgpw::train::finish(
        stopped,
        sgpw::train::Final::On(&td),
        sgpw::train::Test::None,
        &RunContext::quiet(ex()),
    );
    match ended {
        Err(sgpw::error::Error::CancelledAfter(p)) => {
            assert_eq!((p.iterations, p.trace), (2, vec![14.0, 13.0, 12.0]));
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a cancelled fit ended as a finished one"),
    }
}
