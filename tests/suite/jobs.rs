//! The run pool: cancelling a fit (in its subset pre-fit and in the main fit) stops it
//! within a second, a panicking fit becomes a failed result carrying its message, and
//! every run's events arrive in order (started, progress, finished).

use crate::common;
use common::*;
use nalgebra::DVector;
use sgpw::data::Dataset;
use sgpw::jobs::{JobEvent, Jobs};
use sgpw::methods::ValidRunSpec;
use sgpw::results::{RunKey, Status};
use sgpw::run_context::{Phase, RunContext};
use sgpw::run_spec::{MethodOptions, RunSpec};
use sgpw::train::FitResult;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn dataset(n: usize, d: usize) -> Arc<Dataset> {
    let td = toy_data(n, d, 5);
    let test = toy_data(50, d, 6);
    Arc::new(Dataset {
        classes: None,
        feature_names: (1..=d).map(|k| format!("x{k}")).collect(),
        target_name: "y".into(),
        x_train: td.x,
        y_train: DVector::from_vec(td.y),
        x_test: Some(test.x),
        y_test: Some(DVector::from_vec(test.y)),
        notes: Vec::new(),
    })
}

fn spec(method: &str, m: usize, iters: usize, options: MethodOptions, n: usize) -> ValidRunSpec {
    RunSpec {
        method: method.into(),
        m,
        seed: 1,
        iters,
        standardize: false,
        options,
    }
    .check(n)
    .expect("valid spec")
}

fn key(m: usize) -> RunKey {
    RunKey {
        dataset: "toy".into(),
        label: "run".into(),
        m,
        seed: 1,
    }
}

/// Submit one long run, cancel it once it reports `phase`, and return how long the
/// pool took from the cancel to the run's `Finished` event, with that result's status,
/// and the longest gap between two progress reports before the cancel (one step's time
/// on this machine as loaded now: a cancel is seen at the next step, so on a busy host
/// the bound of a second stretches to two steps rather than failing for the load).
fn cancel_during(
    phase_wanted: fn(Phase) -> bool,
    min_iteration: usize,
    spec: ValidRunSpec,
    n: usize,
) -> (Duration, Box<sgpw::session::RunResult>, Duration) {
    let (pool, events) = Jobs::new(1).expect("pool");
    let (mut last_report, mut step) = (None::<Instant>, Duration::ZERO);
    pool.submit(0, key(spec.m), dataset(n, 4), spec);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut cancelled_at = None;
    loop {
        let e = events
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the run reports");
        if cancelled_at.is_none() && matches!(e, JobEvent::Progress { .. }) {
            if let Some(at) = last_report {
                step = step.max(at.elapsed());
            }
            last_report = Some(Instant::now());
        }
        match e {
            JobEvent::Progress {
                phase,
                nlml,
                iteration,
                ..
            } if cancelled_at.is_none()
                && nlml.is_some()
                && phase_wanted(phase)
                && iteration >= min_iteration =>
            {
                pool.cancel(0);
                cancelled_at = Some(Instant::now());
            }
            JobEvent::Finished { result, .. } => {
                let at = cancelled_at.expect("finished before it reached the phase");
                return (at.elapsed(), result, step);
            }
            _ => {}
        }
    }
}

#[test]
fn cancelling_the_subset_prefit_stops_it_within_a_second() {
    // a full GP on 2500 points takes a few seconds per 100 iterations here
    let options = MethodOptions {
        init_lengthscales_from_subset: Some(2500),
        ..Default::default()
    };
    let (took, r, step) = cancel_during(
        |p| p == Phase::SubsetInit,
        0,
        spec("fitc", 20, 500, options, 3000),
        3000,
    );
    assert_eq!(r.status, Status::Cancelled);
    assert!(r.train_seconds > 0.0, "the time it ran is kept");
    assert!(
        took < Duration::from_secs(1).max(2 * step),
        "stopped after {took:?} (one step took up to {step:?})"
    );
}

/// How far a cancelled fit got is kept: its iterations, their trace and its time (a
/// small problem, so that it competes little with the timing tests beside it).
#[test]
fn a_cancelled_fit_keeps_the_iterations_trace_and_time_it_reached() {
    let (_, r, _) = cancel_during(
        |p| matches!(p, Phase::Fit { .. }),
        3,
        spec("fitc", 20, 100_000, MethodOptions::default(), 2000),
        2000,
    );
    assert_eq!(r.status, Status::Cancelled);
    assert!(r.iterations >= 3, "{} iterations", r.iterations);
    assert_eq!(r.trace.len(), r.iterations + 1);
    assert!(r.train_seconds > 0.0 && r.nmse.is_none() && r.model.is_none());
}

#[test]
fn cancelling_a_running_fit_stops_it_within_a_second() {
    let (took, r, step) = cancel_during(
        |p| matches!(p, Phase::Fit { .. }),
        0,
        spec("fitc", 300, 5000, MethodOptions::default(), 20000),
        20000,
    );
    assert_eq!(r.status, Status::Cancelled);
    assert_eq!(r.trace.len(), r.iterations + 1);
    assert!(
        took < Duration::from_secs(1).max(2 * step),
        "stopped after {took:?} (one step took up to {step:?})"
    );
}

fn panics(_: &Dataset, _: &ValidRunSpec, _: &RunContext) -> sgpw::error::Result<FitResult> {
    panic!("index 7 out of range in the test method")
}

#[test]
fn a_panicking_fit_becomes_a_failed_result_with_its_message() {
    let (pool, events) = Jobs::with_fit(1, panics).expect("pool");
    pool.submit(
        3,
        key(5),
        dataset(30, 2),
        spec("fitc", 5, 10, Default::default(), 30),
    );
    let result = loop {
        if let JobEvent::Finished { id, result } = events
            .recv_timeout(Duration::from_secs(30))
            .expect("reports")
        {
            assert_eq!(id, 3);
            break result;
        }
    };
    assert_eq!(result.status, Status::Failed);
    let msg = result.message.expect("message");
    assert!(msg.contains("index 7 out of range"), "{msg}");
    // the worker survives the panic and runs the next task
    pool.submit(
        4,
        key(6),
        dataset(30, 2),
        spec("fitc", 6, 10, Default::default(), 30),
    );
    assert!(
        std::iter::from_fn(|| events.recv_timeout(Duration::from_secs(30)).ok())
            .any(|e| matches!(e, JobEvent::Finished { id: 4, .. }))
    );
}

#[test]
fn events_arrive_in_order() {
    let (pool, events) = Jobs::new(2).expect("pool");
    let n = 200;
    let data = dataset(n, 2);
    let subset = MethodOptions {
        init_lengthscales_from_subset: Some(100),
        ..Default::default()
    };
    let runs = [
        spec("fitc", 10, 30, subset, n),
        spec("vfe", 8, 30, Default::default(), n),
        spec(
            "ssgp",
            6,
            30,
            MethodOptions {
                stages: Some(vec![
                    sgpw::run_spec::Stage::Hyper,
                    sgpw::run_spec::Stage::Points,
                ]),
                single_start: true,
                ..Default::default()
            },
            n,
        ),
        spec("full", 1, 20, Default::default(), n),
    ];
    for (id, s) in runs.into_iter().enumerate() {
        pool.submit(id, key(id), data.clone(), s);
    }
    // per run: started, then phases in order, fit iterations 0, 1, 2, … without gaps,
    // then exactly one finished
    let mut log: Vec<Vec<JobEvent>> = vec![Vec::new(); 4];
    let mut finished = 0;
    while finished < 4 {
        let e = events
            .recv_timeout(Duration::from_secs(60))
            .expect("reports");
        let id = match &e {
            JobEvent::Started { id }
            | JobEvent::Progress { id, .. }
            | JobEvent::Finished { id, .. }
            | JobEvent::NotStarted { id, .. } => *id,
        };
        if matches!(e, JobEvent::Finished { .. }) {
            finished += 1;
        }
        log[id].push(e);
    }
    // the two starts' fits are raced (issue 41): the first start's first turn, the
    // second start's subset fit and the fits' reports interleave
    let rank = |p: Phase| match p {
        Phase::SubsetInit
        | Phase::Restart { .. }
        | Phase::Fit { .. }
        | Phase::SecondStart
        | Phase::Dropped { .. } => 1,
        Phase::Posterior => 3,
        Phase::Scoring => 4,
    };
    for (id, events) in log.iter().enumerate() {
        assert!(
            matches!(events.first(), Some(JobEvent::Started { .. })),
            "run {id}"
        );
        let Some(JobEvent::Finished { result, .. }) = events.last() else {
            panic!("run {id} did not end with Finished")
        };
        assert_eq!(
            result.status,
            Status::Done,
            "run {id}: {:?}",
            result.message
        );
        let progress: Vec<(Phase, usize, Option<f64>)> = events[1..events.len() - 1]
            .iter()
            .map(|e| match e {
                JobEvent::Progress {
                    phase,
                    iteration,
                    nlml,
                    ..
                } => (*phase, *iteration, *nlml),
                other => panic!("run {id}: {other:?} between Started and Finished"),
            })
            .collect();
        assert!(
            progress.windows(2).all(|w| rank(w[0].0) <= rank(w[1].0)),
            "run {id}: phases out of order"
        );
        let fit_iters: Vec<usize> = progress
            .iter()
            .filter(|(p, _, v)| matches!(p, Phase::Fit { .. }) && v.is_some())
            .map(|(_, i, _)| *i)
            .collect();
        assert_eq!(
            fit_iters,
            (0..fit_iters.len()).collect::<Vec<_>>(),
            "run {id}"
        );
        // the second start's iterations, 0, 1, 2, … too; the kept fit's are the result's
        let second_iters: Vec<usize> = progress
            .iter()
            .filter(|(p, _, v)| *p == Phase::SecondStart && v.is_some())
            .map(|(_, i, _)| *i)
            .collect();
        assert_eq!(
            second_iters,
            (0..second_iters.len()).collect::<Vec<_>>(),
            "run {id}"
        );
        // runs 1 and 3 (vfe, the exact GP) have the default second start
        assert_eq!(second_iters.is_empty(), id == 0 || id == 2, "run {id}");
        let second = result
            .model
            .as_ref()
            .and_then(|m| m.fit.as_ref())
            .and_then(|f| f.second_start.as_ref());
        let kept = if second.is_some_and(|s| s.kept_second) {
            &second_iters
        } else {
            &fit_iters
        };
        assert_eq!(kept.len(), result.iterations + 1, "run {id}");
        assert_eq!(result.trace.len(), result.iterations + 1, "run {id}");
        if id == 0 {
            assert!(progress.iter().any(|(p, ..)| *p == Phase::SubsetInit));
        }
    }
}

/// A fit that waits for its cancellation, then reports it as a fit cancelled at
/// iteration 2 would.
fn waits_for_cancel(
    _: &Dataset,
    _: &ValidRunSpec,
    ctx: &RunContext,
) -> sgpw::error::Result<FitResult> {
    let end = Instant::now() + Duration::from_secs(60);
    while !ctx.exec.is_cancelled() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(5));
    }
    Err(sgpw::error::Error::CancelledAfter(Box::new(
        sgpw::error::Partial {
            iterations: 2,
            trace: vec![3.0, 2.0, 1.0],
            seconds: 0.5,
        },
    )))
}

/// Cancelling every run: the one training ends cancelled at the iteration it reached,
/// the one still queued never starts and says so (it has no result at all).
#[test]
fn a_cancelled_queued_run_reports_that_it_never_started() {
    let (pool, events) = Jobs::with_fit(1, waits_for_cancel).expect("pool");
    let data = dataset(30, 2);
    pool.submit(
        0,
        key(5),
        data.clone(),
        spec("fitc", 5, 10, Default::default(), 30),
    );
    pool.submit(1, key(6), data, spec("fitc", 6, 10, Default::default(), 30));
    let next = || {
        events
            .recv_timeout(Duration::from_secs(30))
            .expect("reports")
    };
    assert!(matches!(next(), JobEvent::Started { id: 0 }));
    pool.cancel_all();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match next() {
            JobEvent::Finished { id, result } => {
                assert_eq!((id, result.status), (0, Status::Cancelled));
                assert_eq!(result.iterations, 2);
                seen.push(id);
            }
            JobEvent::NotStarted { id, key: k } => {
                assert_eq!((id, k.m), (1, 6));
                seen.push(id);
            }
            JobEvent::Started { id } => panic!("run {id} started after cancel_all"),
            JobEvent::Progress { .. } => {}
        }
    }
    assert_eq!(seen, [0, 1]);
}
