//! The same session gives the same numbers from `sgpw run` (the headless runner) and
//! from the app (its keys, its runtime, its run pool), bit for bit.

use crate::common;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use sgpw::session::{Session, Status, runner};
use sgpw::tui::Runtime;
use sgpw::tui::state::{App, Event};
use sgpw::tui::theme::Theme;
use std::path::Path;
use std::time::Duration;

/// The demo session without its results, and its data, in a temporary folder.
fn fresh_demo() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("temp dir");
    common::copy_datasets(dir.path());
    let mut s = Session::read(&root.join("sessions/demo.toml")).expect("demo reads");
    s.results.clear();
    let path = dir.path().join("sessions/demo.toml");
    s.save(&path).expect("saves");
    (dir, path)
}

fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

#[test]
fn run_and_app_agree_bit_for_bit() {
    let (_a, headless) = fresh_demo();
    let from_run = runner::run_session(&headless, 2, false, None, &mut |_| {}).expect("sgpw run");
    assert!(!from_run.results.is_empty());

    let (_b, path) = fresh_demo();
    let session = Session::read(&path).expect("reads");
    let mut rt = Runtime::new(2).expect("pool");
    let (mut app, effects) = App::new(
        path.clone(),
        session,
        Theme {
            color: true,
            ascii: false,
        },
    );
    rt.run_effects(&mut app, effects);
    assert!(
        rt.settle(&mut app, Duration::from_secs(60)),
        "data did not load"
    );
    rt.dispatch(&mut app, key('g'));
    assert!(
        rt.settle(&mut app, Duration::from_secs(120)),
        "runs did not finish"
    );
    rt.dispatch(&mut app, key('s'));
    assert!(!app.dirty, "{}", app.message);
    let from_app = Session::read(&path).expect("the app's saved session");

    assert_eq!(from_app.results.len(), from_run.results.len());
    for r in &from_run.results {
        let a = from_app
            .result(&r.key)
            .unwrap_or_else(|| panic!("the app has no result for {:?}", r.key));
        let bits = |v: Option<f64>| v.map(f64::to_bits);
        assert_eq!(r.status, Status::Done, "{:?}: {:?}", r.key, r.message);
        assert_eq!(a.status, r.status, "{:?}", r.key);
        assert_eq!(
            (bits(a.nlml), bits(a.nmse), bits(a.mnlp)),
            (bits(r.nlml), bits(r.nmse), bits(r.mnlp)),
            "{:?}",
            r.key
        );
        assert_eq!(a.iterations, r.iterations, "{:?}", r.key);
        assert!(
            a.trace
                .iter()
                .map(|v| v.to_bits())
                .eq(r.trace.iter().map(|v| v.to_bits())),
            "trace of {:?}",
            r.key
        );
        assert_eq!(
            a.model.as_ref().map(|m| &m.hyper),
            r.model.as_ref().map(|m| &m.hyper),
            "{:?}",
            r.key
        );
    }
}
