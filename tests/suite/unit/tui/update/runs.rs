use crate::unit::tui::testing::*;
use ratatui::crossterm::event::KeyCode;
use sgpw::jobs::JobEvent;
use sgpw::run_context::Phase;
use sgpw::session::Status;
use sgpw::tui::state::Activity;
use sgpw::tui::state::App;
use sgpw::tui::state::Effect;
use sgpw::tui::state::Verdict;
use sgpw::tui::state::{Event, RunStatus};

#[test]
fn a_run_goes_queued_running_done_and_marks_unsaved() {
    let mut a = loaded();
    let e = a.update(key(KeyCode::Enter));
    let [
        Effect::Submit {
            id, key: k, spec, ..
        },
    ] = &e[..]
    else {
        panic!("{e:?}")
    };
    assert_eq!((k.m, spec.iters), (5, 20));
    assert_eq!(a.status_of(&a.runs[0]), RunStatus::Queued);
    a.update(Event::Job(JobEvent::Started { id: *id }));
    a.update(Event::Job(JobEvent::Progress {
        id: *id,
        phase: Phase::Fit { stage: 0 },
        iteration: 1,
        nlml: Some(4.0),
        validation: None,
        elapsed: 0.1,
    }));
    assert_eq!(a.status_of(&a.runs[0]), RunStatus::Running);
    assert_eq!(a.trace_of(&a.runs[0]), &[4.0]);
    a.update(Event::Job(JobEvent::Finished {
        id: *id,
        result: Box::new(done(k, 0.01)),
    }));
    assert_eq!(a.status_of(&a.runs[0]), RunStatus::Done);
    assert!(
        a.dirty && a.message.contains("NMSE 0.0100"),
        "{}",
        a.message
    );
    assert_eq!(a.trace_of(&a.runs[0]), &[3.0, 2.0, 1.0]);
}

/// Between progress reports (a long factorisation sends none) a running run's time
/// keeps counting with the ticks; the next report sets the run's own time.
#[test]
fn a_running_runs_time_counts_between_reports() {
    let mut a = loaded();
    let e = a.update(key(KeyCode::Enter));
    let [Effect::Submit { id, .. }, ..] = &e[..] else {
        panic!("{e:?}")
    };
    let id = *id;
    a.update(Event::Job(JobEvent::Started { id }));
    assert!(a.has_running());
    a.update(Event::Tick(std::time::Duration::from_millis(2500)));
    a.update(Event::Tick(std::time::Duration::from_millis(1000)));
    let elapsed = |a: &App| match a.runs[0].activity {
        Activity::Running { elapsed, .. } => elapsed,
        _ => f64::NAN,
    };
    assert!((elapsed(&a) - 3.5).abs() < 1e-9, "{}", elapsed(&a));
    assert!(render(&a, 120, 30).contains("3.50s"));
    a.update(Event::Job(JobEvent::Progress {
        id,
        phase: Phase::Fit { stage: 0 },
        iteration: 1,
        nlml: Some(4.0),
        validation: None,
        elapsed: 3.6,
    }));
    assert_eq!(elapsed(&a), 3.6);
}

#[test]
fn runs_on_data_that_did_not_load_do_not_start() {
    let (mut a, _) = app();
    a.update(Event::DataLoaded {
        name: "d".into(),
        epoch: 1,
        result: Err("d.csv: no such file".into()),
    });
    // Not a result of the runs: they stay not run, and the message says why.
    assert_eq!(a.status_of(&a.runs[0]), RunStatus::NotRun);
    assert!(a.session.results.is_empty() && !a.dirty);
    assert!(
        a.message_is_error && a.message.contains("no such file"),
        "{}",
        a.message
    );
    // g and Enter do not start them, and say why.
    assert!(a.update(ch('g')).is_empty());
    assert!(a.session.results.is_empty());
    assert!(a.message.contains("did not load"), "{}", a.message);
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(a.session.results.is_empty() && a.message.contains("did not load"));
}

/// g and Enter refuse runs on a data set that is still loading, saying how far it
/// has come; once it has loaded, g starts them.
#[test]
fn runs_on_data_still_loading_do_not_start() {
    let (mut a, _) = app();
    a.update(Event::DataProgress {
        name: "d".into(),
        epoch: 1,
        progress: sgpw::data::LoadProgress {
            file: "big.parquet".into(),
            rows: 1_200_000,
            fraction: 0.6,
            checking: false,
        },
    });
    assert!(a.update(ch('g')).is_empty());
    assert!(
        a.message
            .contains("d is still loading (big.parquet: 1.2M rows (60%)…)"),
        "{}",
        a.message
    );
    assert_eq!(a.queued() + a.running(), 0);
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(a.message.contains("still loading"), "{}", a.message);
    a.update(Event::DataLoaded {
        name: "d".into(),
        epoch: 1,
        result: Ok(dataset()),
    });
    let e = a.update(ch('g'));
    assert_eq!(
        e.iter()
            .filter(|e| matches!(e, Effect::Submit { .. }))
            .count(),
        2
    );
}

#[test]
fn cancelled_runs_are_not_finished() {
    let mut a = loaded();
    let k = a.runs[0].key.clone();
    let mut r = done(&k, 1.0);
    r.status = Status::Cancelled;
    r.nmse = None;
    r.iterations = 31;
    a.session.set_result(r);
    // g starts the cancelled run (and the one never run); Enter would too.
    let e = a.update(ch('g'));
    assert_eq!(
        e.iter()
            .filter(|e| matches!(e, Effect::Submit { .. }))
            .count(),
        2
    );
    let mut a = loaded();
    let mut r = done(&k, 1.0);
    r.status = Status::Cancelled;
    a.session.set_result(r);
    let e = a.update(key(KeyCode::Enter));
    assert!(matches!(e[..], [Effect::Submit { .. }]), "{e:?}");
    // a done run is not started again
    let mut a = loaded();
    a.session.set_result(done(&k, 1.0));
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(a.message.contains("R re-runs"));
}

#[test]
fn finished_runs_are_autosaved_as_they_come() {
    let mut a = loaded();
    let e = a.update(key(KeyCode::Enter));
    let [Effect::Submit { id, key: k, .. }] = &e[..] else {
        panic!("{e:?}")
    };
    let e = a.update(Event::Job(JobEvent::Finished {
        id: *id,
        result: Box::new(done(k, 0.01)),
    }));
    let [Effect::Autosave { session, .. }] = &e[..] else {
        panic!("{e:?}")
    };
    assert_eq!(session.results.len(), 1);
    // a signal autosaves what is unsaved and quits
    let e = a.update(Event::Signal(15));
    assert!(
        matches!(
            e[..],
            [Effect::CancelAll, Effect::Autosave { .. }, Effect::Quit]
        ) && a.quit
            && a.exit_signal == Some(15),
        "{e:?}"
    );
}

#[test]
fn cancel_one_and_all() {
    let mut a = loaded();
    a.update(ch('g'));
    let e = a.update(ch('x'));
    assert!(matches!(e[..], [Effect::Cancel(0)]));
    let e = a.update(ch('X'));
    assert!(matches!(e[..], [Effect::CancelAll]));
    let k = a.runs[0].key.clone();
    let mut r = done(&k, 1.0);
    r.status = Status::Cancelled;
    a.update(Event::Job(JobEvent::Finished {
        id: 0,
        result: Box::new(r),
    }));
    assert_eq!(a.status_of(&a.runs[0]), RunStatus::Cancelled);
}

/// Cancelling all: the run that was training is cancelled (at the iteration it
/// reached), the queued one never started and is "not run" again, with no result —
/// as `sgpw run` records them; a queued re-run keeps its earlier result.
#[test]
fn a_queued_run_that_never_started_is_not_run_not_cancelled() {
    let mut a = loaded();
    let e = a.update(ch('g'));
    let ids: Vec<usize> = e
        .iter()
        .filter_map(|e| match e {
            Effect::Submit { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    let [first, second] = ids[..] else {
        panic!("{e:?}")
    };
    a.update(Event::Job(JobEvent::Started { id: first }));
    a.update(ch('X'));
    let mut r = done(&a.runs[0].key.clone(), 1.0);
    r.status = Status::Cancelled;
    r.iterations = 7;
    a.update(Event::Job(JobEvent::Finished {
        id: first,
        result: Box::new(r),
    }));
    let k = a.runs[1].key.clone();
    a.update(Event::Job(JobEvent::NotStarted { id: second, key: k }));
    assert_eq!(a.status_of(&a.runs[0]), RunStatus::Cancelled);
    assert_eq!(a.result_of(&a.runs[0]).map(|r| r.iterations), Some(7));
    assert_eq!(a.status_of(&a.runs[1]), RunStatus::NotRun);
    assert!(a.result_of(&a.runs[1]).is_none() && a.running() + a.queued() == 0);
    // a re-run that never started leaves the earlier result as it was
    a.session.set_result(done(&a.runs[1].key.clone(), 0.5));
    a.run_cursor = 1;
    let e = a.update(ch('R'));
    let [Effect::Submit { id, key: k, .. }] = &e[..] else {
        panic!("{e:?}")
    };
    a.update(Event::Job(JobEvent::NotStarted {
        id: *id,
        key: k.clone(),
    }));
    assert_eq!(a.status_of(&a.runs[1]), RunStatus::Done);
    assert_eq!(a.result_of(&a.runs[1]).and_then(|r| r.nmse), Some(0.5));
}

#[test]
fn a_cancelled_rerun_keeps_the_earlier_result() {
    let mut a = loaded();
    let k = a.runs[0].key.clone();
    a.session.set_result(done(&k, 0.5));
    a.update(ch('R'));
    let mut r = done(&k, 1.0);
    r.status = Status::Cancelled;
    a.update(Event::Job(JobEvent::Finished {
        id: 0,
        result: Box::new(r),
    }));
    assert_eq!(a.result_of(&a.runs[0]).and_then(|r| r.nmse), Some(0.5));
}

#[test]
fn rerun_reports_identical_or_different() {
    let mut a = loaded();
    let k = a.runs[0].key.clone();
    a.session.set_result(done(&k, 0.5));
    let e = a.update(ch('R'));
    assert!(matches!(e[..], [Effect::Submit { id: 0, .. }]));
    a.update(Event::Job(JobEvent::Finished {
        id: 0,
        result: Box::new(done(&k, 0.5)),
    }));
    assert_eq!(a.runs[0].verdict, Some(Verdict::Identical));
    assert!(a.message.contains("IDENTICAL"));
    a.update(ch('R'));
    a.update(Event::Job(JobEvent::Finished {
        id: 1,
        result: Box::new(done(&k, 0.25)),
    }));
    assert!(matches!(&a.runs[0].verdict, Some(Verdict::Differs(d)) if d.contains("NMSE")));
}

#[test]
fn stale_job_events_are_ignored() {
    let mut a = loaded();
    let k = a.runs[0].key.clone();
    assert!(
        a.update(Event::Job(JobEvent::Finished {
            id: 42,
            result: Box::new(done(&k, 0.5))
        }))
        .is_empty()
    );
    assert!(a.session.results.is_empty());
}
