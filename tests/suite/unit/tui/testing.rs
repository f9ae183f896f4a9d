//! Fixtures for the app's unit tests: a session with one data set and two runs.

use nalgebra::{DMatrix, DVector};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use sgpw::data::Dataset;
use sgpw::session::{RunKey, RunResult, SCHEMA_VERSION, Session, Status};
use sgpw::tui::state::{App, Effect, Event};
use sgpw::tui::theme::Theme;
use std::path::PathBuf;
use std::sync::Arc;

pub fn key(c: KeyCode) -> Event {
    Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

pub fn ch(c: char) -> Event {
    key(KeyCode::Char(c))
}

pub fn session() -> Session {
    Session::parse(&format!(
        r#"
schema_version = {SCHEMA_VERSION}
name = "t"
[[datasets]]
name = "d"
train = "d.csv"
[[runs]]
dataset = "d"
method = "fitc"
m = [5, 10]
iterations = 20
"#
    ))
    .expect("parses")
}

pub fn dataset() -> Arc<Dataset> {
    let n = 30;
    Arc::new(Dataset {
        classes: None,
        feature_names: vec!["x".into()],
        target_name: "y".into(),
        x_train: DMatrix::from_fn(n, 1, |i, _| i as f64 / 3.0),
        y_train: DVector::from_fn(n, |i, _| (i as f64 / 3.0).sin()),
        x_test: None,
        y_test: None,
        notes: vec![],
    })
}

pub fn done(key: &RunKey, nmse: f64) -> RunResult {
    RunResult {
        nlml: Some(1.0),
        nmse: Some(nmse),
        mnlp: Some(0.5),
        iterations: 3,
        train_seconds: 0.1,
        trace: vec![3.0, 2.0, 1.0],
        ..RunResult::new(key.clone(), "fitc", Status::Done)
    }
}

pub fn app() -> (App, Vec<Effect>) {
    App::new(
        PathBuf::from("s/t.toml"),
        session(),
        Theme {
            color: true,
            ascii: false,
        },
    )
}

pub fn loaded() -> App {
    let (mut a, _) = app();
    a.update(Event::DataLoaded {
        name: "d".into(),
        epoch: 1,
        result: Ok(dataset()),
    });
    a
}

pub fn type_text(a: &mut App, s: &str) {
    for c in s.chars() {
        a.update(ch(c));
    }
}

pub fn clear_field(a: &mut App) {
    a.update(Event::Key(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
}

/// The screen as text at `w`×`h`.
pub fn render(a: &App, w: u16, h: u16) -> String {
    let mut t =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).expect("a test terminal");
    t.draw(|f| sgpw::tui::view::draw(f, a)).expect("draws");
    let buf = t.backend().buffer().clone();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}
