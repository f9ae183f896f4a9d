//! Loading in the app: a large file loads on a background thread and reports its rows
//! as it goes (the data sets pane shows them), a file that cannot be read becomes an
//! error in the pane (never a panic), and `g` starts no run on a data set that is still
//! loading or did not load.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use sgpw::session::Session;
use sgpw::tui::state::{App, DataState, Effect, Event};
use sgpw::tui::theme::Theme;
use sgpw::tui::{Runtime, view};
use std::path::Path;
use std::time::{Duration, Instant};

fn screen(app: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("test terminal");
    t.draw(|f| view::draw(f, app)).expect("draws");
    let b = t.backend().buffer().clone();
    b.content
        .chunks(80)
        .map(|r| r.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn session(dir: &Path, train: &str) -> (std::path::PathBuf, Session) {
    let text = format!(
        r#"
schema_version = 1
name = "loading"

[[datasets]]
name = "big"
train = "{train}"
split = 0.9

[[runs]]
dataset = "big"
method = "fitc"
m = [5]
iterations = 2
"#
    );
    let path = dir.join("s.toml");
    std::fs::write(&path, &text).expect("writes the session");
    (path, Session::parse(&text).expect("parses"))
}

fn g() -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::NONE))
}

#[test]
fn a_large_file_reports_its_rows_while_it_loads() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("big.csv");
    sgpw::data::big::write_big(&file, 300_000, 3, 1, false).expect("writes");
    let (path, session) = session(dir.path(), "big.csv");
    let theme = Theme {
        color: false,
        ascii: false,
    };
    let mut rt = Runtime::new(1).expect("pool");
    let (mut app, effects) = App::new(path, session, theme);
    rt.run_effects(&mut app, effects);
    let mut progress = Vec::new();
    let mut screens = Vec::new();
    let end = Instant::now() + Duration::from_secs(120);
    while matches!(app.data.get("big"), Some(DataState::Loading(_))) {
        assert!(Instant::now() < end, "the load did not finish");
        let Some(e) = rt.recv(Duration::from_millis(200)) else {
            continue;
        };
        let was_progress = matches!(e, Event::DataProgress { .. });
        if let Event::DataProgress { progress: p, .. } = &e {
            progress.push(p.rows);
        }
        rt.dispatch(&mut app, e);
        if was_progress && progress.len() == 1 {
            screens.push(screen(&app));
            // g while it loads starts nothing and says why
            let effects = app.update(g());
            assert!(
                !effects.iter().any(|e| matches!(e, Effect::Submit { .. })),
                "{effects:?}"
            );
            assert!(
                app.message.contains("big is still loading (big.csv: "),
                "{}",
                app.message
            );
        }
    }
    // blocks of rows, counted up to all of them
    assert!(progress.len() >= 3, "{progress:?}");
    assert!(progress.windows(2).all(|w| w[0] <= w[1]), "{progress:?}");
    assert_eq!(progress.last(), Some(&300_000));
    let first = &screens[0];
    assert!(
        first.contains("… big 100.0k rows") || first.contains("loading big.csv: 100.0k rows"),
        "{first}"
    );
    let Some(DataState::Loaded(d)) = app.data.get("big") else {
        panic!("not loaded: {:?}", app.data.get("big").map(|_| ()))
    };
    assert_eq!(d.n_train() + d.n_test(), 300_000);
    // once loaded, g starts the run
    let effects = app.update(g());
    assert!(effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    rt.run_effects(&mut app, effects);
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('X'),
        KeyModifiers::NONE,
    )));
}

#[test]
fn a_damaged_file_is_an_error_in_the_pane_and_g_refuses() {
    let dir = tempfile::tempdir().expect("tmp");
    // a Parquet file that is not one, larger than the size read in blocks
    std::fs::write(dir.path().join("bad.parquet"), vec![7u8; 9 << 20]).expect("writes");
    let (path, session) = session(dir.path(), "bad.parquet");
    let mut rt = Runtime::new(1).expect("pool");
    let (mut app, effects) = App::new(
        path,
        session,
        Theme {
            color: false,
            ascii: false,
        },
    );
    rt.run_effects(&mut app, effects);
    assert!(
        rt.settle(&mut app, Duration::from_secs(60)),
        "did not settle"
    );
    let Some(DataState::Failed(msg)) = app.data.get("big") else {
        panic!("expected a failure")
    };
    assert!(msg.contains("bad.parquet"), "{msg}");
    assert!(screen(&app).contains("✗ big error"), "{}", screen(&app));
    let effects = app.update(g());
    assert!(!effects.iter().any(|e| matches!(e, Effect::Submit { .. })));
    assert!(app.message.contains("did not load"), "{}", app.message);
}
