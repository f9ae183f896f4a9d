//! Every pane on ratatui's TestBackend at 80×24 and 160×48.
//!
//! A synthetic session (fixed numbers, no training) is compared cell for cell with the
//! screens checked in under tests/snapshots/ (UPDATE_SNAPSHOTS=1 rewrites them after a
//! deliberate change); the prediction pane, which depends on the numerics, is checked
//! by its content lines. The demo session must draw every chart the moment it opens.

use nalgebra::{DMatrix, DVector};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use sgpw::data::Dataset;
use sgpw::methods::MarkerSize;
use sgpw::methods::pseudo::{Inducing, PseudoNoise};
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::session::{RunResult, Session, Status};
use sgpw::tui::state::{App, ChartTab, Effect, Event, PredState};
use sgpw::tui::theme::Theme;
use sgpw::tui::{Runtime, predict, view};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

const SESSION: &str = r#"
schema_version = 1
name = "snapshots"

[[datasets]]
name = "toy"
train = "toy_train.csv"
test = "toy_test.csv"

[[datasets]]
name = "broken"
train = "missing.csv"

[[runs]]
dataset = "toy"
method = "fitc"
m = [5, 10, 20]
iterations = 50

[[runs]]
dataset = "toy"
method = "full"
m = [40]
seeds = [1, 2]
iterations = 50

[[runs]]
dataset = "toy"
method = "fitc"
label = "fitc-s"
m = [5]
seeds = [1, 2]
standardize = true
iterations = 50
"#;

fn toy() -> Arc<Dataset> {
    let f = |x: f64| x.sin() + 0.1 * (3.0 * x).cos();
    let xtr: Vec<f64> = (0..40).map(|i| -5.0 + 10.0 * i as f64 / 39.0).collect();
    let xte: Vec<f64> = (0..20).map(|i| -4.8 + 9.6 * i as f64 / 19.0).collect();
    Arc::new(Dataset {
        classes: None,
        feature_names: vec!["x1".into()],
        target_name: "y".into(),
        x_train: DMatrix::from_column_slice(40, 1, &xtr),
        y_train: DVector::from_iterator(40, xtr.iter().map(|&x| f(x))),
        x_test: Some(DMatrix::from_column_slice(20, 1, &xte)),
        y_test: Some(DVector::from_iterator(20, xte.iter().map(|&x| f(x) + 0.05))),
        notes: vec![],
    })
}

fn fitc_model(m: usize) -> ModelFile {
    let mut model = ModelFile::new("fitc", Hyper::se(1.0, vec![1.2], 0.04));
    model.set(&Inducing {
        points: (0..m)
            .map(|i| vec![-4.5 + 9.0 * i as f64 / (m.max(2) - 1) as f64])
            .collect(),
    });
    model
}

fn result(app: &App, label: &str, m: usize, seed: u64, status: Status) -> RunResult {
    let row = app
        .runs
        .iter()
        .find(|r| r.key.label == label && r.key.m == m && r.key.seed == seed)
        .expect("row");
    let k = (m as f64).ln();
    let trace: Vec<f64> = (0..50)
        .map(|i| 40.0 - 8.0 * k + 120.0 * (-(i as f64) / (4.0 + k)).exp())
        .collect();
    let done = status == Status::Done;
    RunResult {
        message: (status == Status::Failed)
            .then(|| "numerical failure: Kuu is not positive definite".to_string()),
        nlml: done.then(|| trace[49]),
        nmse: done.then(|| 0.2 / (m as f64) + 0.001 * seed as f64),
        mnlp: done.then_some(1.0 - 0.5 * k),
        iterations: if done { 50 } else { 7 },
        train_seconds: 0.01 * m as f64,
        trace: if done { trace } else { Vec::new() },
        // fitc m = 20 predicts worse than a constant; full m = 40 scored a validation set
        constant_mnlp: (done && label == "fitc" && m == 20).then_some(-1.0),
        validation: if done && label == "full" {
            (0..10)
                .map(|k| sgpw::results::ValidationPoint {
                    iteration: 5 * k,
                    nmse: 0.05 + 0.002 * ((k as f64) - 5.0).powi(2),
                    mnlp: -0.5 + 0.05 * ((k as f64) - 5.0).powi(2),
                })
                .collect()
        } else {
            Vec::new()
        },
        model: done.then(|| {
            if row.spec.method == "fitc" {
                fitc_model(m)
            } else {
                ModelFile::new("full", Hyper::se(1.0, vec![1.2], 0.01))
            }
        }),
        ..RunResult::new(row.key.clone(), &row.spec.method, status)
    }
}

/// The synthetic app: data loaded, results of every kind, a prediction.
fn fixture(theme: Theme) -> App {
    let session = Session::parse(SESSION).expect("fixture session parses");
    let (mut app, _) = App::new(PathBuf::from("/nowhere/snapshots.toml"), session, theme);
    app.update(Event::DataLoaded {
        name: "toy".into(),
        epoch: 1,
        result: Ok(toy()),
    });
    app.update(Event::DataLoaded {
        name: "broken".into(),
        epoch: 1,
        result: Err("/nowhere/missing.csv: cannot open the file: No such file or directory".into()),
    });
    let rs = vec![
        result(&app, "fitc", 5, 1, Status::Done),
        result(&app, "fitc", 10, 1, Status::Done),
        result(&app, "fitc", 20, 1, Status::Done),
        result(&app, "full", 40, 1, Status::Done),
        result(&app, "fitc-s", 5, 1, Status::Failed),
    ];
    for r in rs {
        app.session.set_result(r);
    }
    app.data_cursor = 0;
    app.run_cursor = 1;
    // A running and a queued run, through the real transition.
    app.run_cursor = 6;
    let id = start_selected(&mut app);
    for (i, v) in [90.0, 70.0, 61.0, 58.5].iter().enumerate() {
        app.update(Event::Job(sgpw::jobs::JobEvent::Progress {
            id,
            phase: sgpw::run_context::Phase::Fit { stage: 0 },
            iteration: i + 1,
            nlml: Some(*v),
            validation: None,
            elapsed: 0.1 * (i + 1) as f64,
        }));
    }
    app.run_cursor = 1;
    app.update(Event::Resize(80, 24));
    predict_now(&mut app);
    app.message = "snapshot fixture".into();
    app
}

/// Start the selected run (Enter) and let the pool report it started; its job id.
fn start_selected(app: &mut App) -> sgpw::jobs::RunId {
    let e = app.update(key(KeyCode::Enter));
    let id = match &e[..] {
        [Effect::Submit { id, .. }, ..] => *id,
        other => panic!("expected a submit, got {other:?}"),
    };
    app.update(Event::Job(sgpw::jobs::JobEvent::Started { id }));
    id
}

/// Compute the prediction the app asked for and hand it back, as the runtime would.
fn predict_now(app: &mut App) {
    if let PredState::Pending(want) = app.prediction.clone() {
        let row = app.runs.iter().find(|r| r.key == want.key).expect("row");
        let model = app
            .result_of(row)
            .and_then(|r| r.model.clone())
            .expect("model");
        let result = predict::compute(&model, &toy(), want.input, predict::GRID).map(Arc::new);
        app.update(Event::Predicted { want, result });
    }
}

fn key(c: KeyCode) -> Event {
    Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

fn render(app: &App, (w, h): (u16, u16)) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view::draw(f, app)).expect("draws");
    t.backend().buffer().clone()
}

fn lines(b: &Buffer) -> Vec<String> {
    let w = b.area.width as usize;
    b.content
        .chunks(w)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect()
}

fn screen(b: &Buffer) -> String {
    lines(b)
        .iter()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Compare with tests/snapshots/NAME_WxH.txt (UPDATE_SNAPSHOTS=1 writes it).
fn snapshot(name: &str, b: &Buffer) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let path = dir.join(format!("{name}_{}x{}.txt", b.area.width, b.area.height));
    let got = screen(b);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(&dir).expect("snapshot folder");
        std::fs::write(&path, &got).expect("writes the snapshot");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_SNAPSHOTS=1 to create it)\n{got}",
            path.display()
        )
    });
    if want != got {
        let diff: Vec<String> = want
            .lines()
            .zip(got.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| format!("line {}:\n  want |{a}|\n  got  |{b}|", i + 1))
            .collect();
        panic!(
            "{name} differs from {}:\n{}\n--- got:\n{got}",
            path.display(),
            diff.join("\n")
        );
    }
}

fn colour() -> Theme {
    Theme {
        color: true,
        ascii: false,
    }
}

fn has(b: &Buffer, text: &str) -> bool {
    lines(b).iter().any(|l| l.contains(text))
}

fn assert_has(b: &Buffer, text: &str) {
    assert!(has(b, text), "screen lacks {text:?}:\n{}", screen(b));
}

#[test]
fn evidence_pane() {
    let app = fixture(colour());
    for size in SIZES {
        let b = render(&app, size);
        snapshot("evidence", &b);
        assert_has(&b, "Evidence on toy: NLML vs iteration");
        // Legend: label and m of every curve.
        assert_has(&b, "fitc m: ━5 ━10 ━20");
        assert_has(&b, "full m: ━40");
    }
}

#[test]
fn runs_and_datasets_panes() {
    let app = fixture(colour());
    for size in SIZES {
        let b = render(&app, size);
        snapshot("runs", &b);
        assert_has(&b, "Runs (7)");
        assert_has(&b, "Data sets");
        assert_has(&b, "target y: mean");
        assert_has(&b, "✗ broken");
        let l = lines(&b);
        // The selected fitc m=10 row shows its status and metrics.
        assert!(
            l.iter().any(|x| x.contains("done")
                && x.contains("fitc")
                && x.contains(" 10 ")
                && x.contains("0.0210")),
            "{}",
            screen(&b)
        );
        assert!(
            l.iter()
                .any(|x| x.contains("failed") && x.contains("fitc-s") && x.contains("numeric")),
            "{}",
            screen(&b)
        );
        assert!(
            l.iter()
                .any(|x| x.contains("running") && x.contains("58.50")),
            "{}",
            screen(&b)
        );
        assert!(l.iter().any(|x| x.contains("not run")), "{}", screen(&b));
        assert_has(&b, "m=10 (inducing points)");
    }
}

#[test]
fn a_run_in_its_subset_pre_fit_shows_no_nlml_yet() {
    let session = Session::parse(SESSION).expect("fixture session parses");
    let (mut app, _) = App::new(PathBuf::from("/nowhere/pre-fit.toml"), session, colour());
    app.update(Event::DataLoaded {
        name: "toy".into(),
        epoch: 1,
        result: Ok(toy()),
    });
    app.run_cursor = 6;
    let id = start_selected(&mut app);
    // the subset fit's objective is not the run's evidence, so the row has none to show
    app.update(Event::Job(sgpw::jobs::JobEvent::Progress {
        id,
        phase: sgpw::run_context::Phase::SubsetInit,
        iteration: 3,
        nlml: Some(812.5),
        validation: None,
        elapsed: 0.4,
    }));
    app.update(Event::Resize(80, 24));
    let b = render(&app, (80, 24));
    let l = lines(&b);
    let row = l
        .iter()
        .find(|x| x.contains("subset") && x.contains("0.40s"))
        .unwrap_or_else(|| panic!("{}", screen(&b)));
    assert!(
        !row.contains("NaN") && !row.contains("812"),
        "{}",
        screen(&b)
    );
}

/// A raced run (docs/methods.md §0.4) says which start's fit it is in, shows the leading
/// fit's objective, and once a start is dropped says which runs on alone and, below,
/// which was dropped at which iteration.
#[test]
fn a_raced_run_shows_its_start_and_the_one_dropped() {
    use sgpw::run_context::Phase;
    let session = Session::parse(SESSION).expect("fixture session parses");
    let (mut app, _) = App::new(PathBuf::from("/nowhere/race.toml"), session, colour());
    app.update(Event::DataLoaded {
        name: "toy".into(),
        epoch: 1,
        result: Ok(toy()),
    });
    app.run_cursor = 6;
    let id = start_selected(&mut app);
    let mut report = |phase: Phase, iteration: usize, nlml: Option<f64>, elapsed: f64| {
        app.update(Event::Job(sgpw::jobs::JobEvent::Progress {
            id,
            phase,
            iteration,
            nlml,
            validation: None,
            elapsed,
        }));
    };
    report(Phase::Fit { stage: 0 }, 0, Some(900.25), 0.1);
    report(Phase::SubsetInit, 0, None, 0.2);
    report(Phase::SecondStart, 0, Some(850.75), 0.3);
    app.update(Event::Resize(80, 24));
    let b = render(&app, (80, 24));
    let l = lines(&b);
    let row = l
        .iter()
        .find(|x| x.contains("start 2") && x.contains("0.30s"))
        .unwrap_or_else(|| panic!("{}", screen(&b)));
    // the leading fit's objective: the second start's, lower
    assert!(row.contains("850.75"), "{}", screen(&b));
    let mut report = |phase: Phase, iteration: usize, nlml: Option<f64>, elapsed: f64| {
        app.update(Event::Job(sgpw::jobs::JobEvent::Progress {
            id,
            phase,
            iteration,
            nlml,
            validation: None,
            elapsed,
        }));
    };
    report(Phase::Dropped { second: false }, 0, None, 0.4);
    report(Phase::SecondStart, 1, Some(840.5), 0.5);
    let b = render(&app, (80, 24));
    let l = lines(&b);
    assert!(
        l.iter()
            .any(|x| x.contains("only 2") && x.contains("840.50")),
        "{}",
        screen(&b)
    );
    assert_has(&b, "first start dropped behind at iteration 0");
}

#[test]
fn failed_data_set_shows_its_error_in_the_pane() {
    let mut app = fixture(colour());
    app.update(key(KeyCode::Tab));
    app.update(key(KeyCode::Down));
    for size in SIZES {
        let b = render(&app, size);
        snapshot("dataset_error", &b);
        assert_has(&b, "No such file");
    }
}

#[test]
fn comparison_pane_both_metrics() {
    let mut app = fixture(colour());
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('2'),
        KeyModifiers::NONE,
    )));
    for size in SIZES {
        let b = render(&app, size);
        snapshot("comparison_nmse", &b);
        assert_has(&b, "Comparison on toy: NMSE (log) vs m (log)");
        let l = lines(&b);
        assert!(
            l.iter()
                .any(|x| x.contains("fitc") && x.contains("20") && x.contains("0.0110")),
            "{}",
            screen(&b)
        );
        assert!(
            l.iter()
                .any(|x| x.contains("full") && x.contains("40") && x.contains("0.0060")),
            "{}",
            screen(&b)
        );
    }
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::NONE,
    )));
    for size in SIZES {
        let b = render(&app, size);
        snapshot("comparison_mnlp", &b);
        assert_has(&b, "Comparison on toy: MNLP vs m (log)");
    }
}

#[test]
fn prediction_pane() {
    let mut app = fixture(colour());
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('3'),
        KeyModifiers::NONE,
    )));
    assert_eq!(app.chart, ChartTab::Prediction);
    for size in SIZES {
        let b = render(&app, size);
        assert_has(&b, "Prediction: toy/fitc m=10 seed 1");
        assert_has(&b, "f ±2σ");
        assert_has(&b, "y ±2σ");
        assert_has(&b, "inducing points");
        let l = lines(&b);
        // Ten inducing points make ten markers on one row.
        assert!(
            l.iter().any(|x| x.matches('▲').count() == 10),
            "{}",
            screen(&b)
        );
        // The band and the curves are drawn in braille.
        let braille = l
            .iter()
            .flat_map(|x| x.chars())
            .filter(|c| ('\u{2801}'..='\u{28ff}').contains(c))
            .count();
        assert!(
            braille > 100,
            "only {braille} braille cells:\n{}",
            screen(&b)
        );
        // Latent and noisy bands are different colours.
        let colours: std::collections::HashSet<Color> = b
            .content
            .iter()
            .filter(|c| {
                c.symbol()
                    .chars()
                    .all(|ch| ('\u{2801}'..='\u{28ff}').contains(&ch))
            })
            .map(|c| c.fg)
            .collect();
        assert!(
            colours.contains(&Color::Blue) && colours.contains(&Color::DarkGray),
            "{colours:?}"
        );
        assert_has(&b, "x1 →");
    }
}

#[test]
fn prediction_of_a_2d_model_says_what_is_held_fixed() {
    let d = Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into()],
        target_name: "y".into(),
        x_train: DMatrix::from_fn(30, 2, |i, j| (i * (j + 1)) as f64 / 10.0),
        y_train: DVector::from_fn(30, |i, _| (i as f64 / 5.0).sin()),
        x_test: None,
        y_test: None,
        notes: vec![],
    };
    let mut model = ModelFile::new("fitc", Hyper::se(1.0, vec![1.0, 2.0], 0.1));
    model.set(&Inducing {
        points: vec![vec![0.5, 1.0], vec![2.0, 3.0]],
    });
    let c = predict::compute(&model, &d, 1, 100).expect("predicts");
    assert_eq!((c.dim, c.input_name.as_str(), c.markers.len()), (2, "b", 2));
    let mut app = fixture(colour());
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('3'),
        KeyModifiers::NONE,
    )));
    let PredState::Ready(want, _) = app.prediction.clone() else {
        panic!("no prediction")
    };
    app.prediction = PredState::Ready(want, Arc::new(c));
    let b = render(&app, (160, 48));
    assert_has(&b, "along b ([ ]); others at training medians");
}

/// A 1-D SPGP+HS model shows its learned pseudo-noise as the markers' sizes, and the
/// legend says so.
#[test]
fn prediction_of_spgp_hs_shows_the_pseudo_noise() {
    let d = Dataset {
        classes: None,
        feature_names: vec!["x".into()],
        target_name: "y".into(),
        x_train: DMatrix::from_fn(40, 1, |i, _| i as f64 / 4.0),
        y_train: DVector::from_fn(40, |i, _| (i as f64 / 6.0).sin()),
        x_test: None,
        y_test: None,
        notes: vec![],
    };
    let mut model = ModelFile::new("spgp-hs", Hyper::se(1.0, vec![1.5], 0.05));
    model.set(&Inducing {
        points: vec![vec![1.0], vec![4.0], vec![7.0]],
    });
    // strengths σ0²/(σ0² + h): 1, 0.5, 0.1: full, half, dot
    model.set(&PseudoNoise {
        h: vec![0.0, 1.0, 9.0],
    });
    let c = predict::compute(&model, &d, 0, 100).expect("predicts");
    assert_eq!(
        c.marker_sizes,
        [MarkerSize::Full, MarkerSize::Half, MarkerSize::Dot]
    );
    let mut app = fixture(colour());
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('3'),
        KeyModifiers::NONE,
    )));
    let PredState::Ready(want, _) = app.prediction.clone() else {
        panic!("no prediction")
    };
    app.prediction = PredState::Ready(want, Arc::new(c));
    let b = render(&app, (160, 48));
    let l = lines(&b);
    let row = l
        .iter()
        .find(|x| x.contains('▲') && !x.contains("inducing"))
        .unwrap_or_else(|| panic!("no marker row:\n{}", screen(&b)));
    let glyphs: String = row.chars().filter(|c| "▲▴·".contains(*c)).collect();
    assert_eq!(glyphs, "▲▴·", "{row}");
    assert_has(&b, "▲▴· inducing points (small: large h)");
}

#[test]
fn no_color_and_ascii() {
    let mut app = fixture(Theme {
        color: false,
        ascii: true,
    });
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('3'),
        KeyModifiers::NONE,
    )));
    for size in SIZES {
        let b = render(&app, size);
        assert!(
            b.content
                .iter()
                .all(|c| c.fg == Color::Reset && c.bg == Color::Reset),
            "NO_COLOR: a coloured cell\n{}",
            screen(&b)
        );
        let l = lines(&b);
        let braille = l
            .iter()
            .flat_map(|x| x.chars())
            .filter(|c| ('\u{2800}'..='\u{28ff}').contains(c))
            .count();
        assert_eq!(braille, 0, "--ascii drew braille:\n{}", screen(&b));
        assert!(
            l.iter().any(|x| x.matches('^').count() == 10),
            "ascii markers:\n{}",
            screen(&b)
        );
        assert_has(&b, "# f ±2σ = y ±2σ");
    }
    // Without colour, methods differ by marker in the evidence legend.
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('1'),
        KeyModifiers::NONE,
    )));
    let b = render(&app, (160, 48));
    assert_has(&b, "full m: +40 · fitc m: x5 o10 *20 · fitc-s m: #5");
}

/// Without colour at 80×24: the runs table (standardize column, "!" on the run worse
/// than a constant, why in the details) and the evidence legend (label, m and each
/// curve's own glyph), compared with the text they must show.
#[test]
fn no_color_runs_table_and_evidence_legend_at_80x24() {
    let mut app = fixture(Theme {
        color: false,
        ascii: false,
    });
    let b = render(&app, (80, 24));
    let l = lines(&b);
    let runs: Vec<&str> = l[13..24].iter().map(|x| x.trim_end()).collect();
    assert_eq!(runs, RUNS_80X24, "\n{}", runs.join("\n"));
    assert_eq!(l[12].trim_end(), LEGEND_80X24, "\n{}", screen(&b));
    // the curves are drawn with the legend's glyphs (at 80×24 some cells overlap:
    // fitc m = 5 lies under m = 10 and 20 there)
    for g in ["•", "x", "o", "*"] {
        assert!(
            l[2..11].iter().any(|x| x.contains(g)),
            "no {g} curve:\n{}",
            screen(&b)
        );
    }
    // the run worse than a constant says why
    app.run_cursor = 2;
    let b = render(&app, (80, 24));
    assert_has(&b, "! test MNLP -0.498 > the constant's -1.000 · fitc m=20");
    assert!(
        b.content.iter().all(|c| c.fg == Color::Reset),
        "NO_COLOR: a coloured cell"
    );
}

const RUNS_80X24: [&str; 11] = [
    "┏ Runs (7) ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
    "┃   status  data   method std m    seed iter  NLML     NMSE     MNLP    time   ┃",
    "┃   done    toy    fitc   raw 5    1    50    27.14    0.0410   0.195   0.05s  ┃",
    "┃   done    toy    fitc   raw 10   1    50    21.63    0.0210   -0.151  0.10s  ┃",
    "┃ ! done    toy    fitc   raw 20   1    50    16.14    0.0110   -0.498  0.20s  ┃",
    "┃   done    toy    full   raw 40   1    50    10.69    0.0060   -0.844  0.40s  ┃",
    "┃   not run toy    full   raw 40   2                                           ┃",
    "┃   failed  toy    fitc-s std 5    1    7     -        numerica         0.05s  ┃",
    "┃   running toy    fitc-s std 5    2    4     58.50                     0.40s  ┃",
    "┗ fitc m=10 (inducing points) seed 1 · 50 it ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛",
    " snapshots.toml saved · 1 running · 0 queued │ snapshot fixture",
];
const LEGEND_80X24: &str =
    "└ a add e edit ────────┘┗ full m: •40 · fitc m: +5 x10 o20 · fitc-s m: *5 ━━━━━┛";

#[test]
fn help_lists_every_key() {
    let mut app = fixture(colour());
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('?'),
        KeyModifiers::NONE,
    )));
    for size in SIZES {
        let b = render(&app, size);
        snapshot("help", &b);
        for (k, what) in sgpw::tui::keys::help_rows() {
            assert!(has(&b, what), "help lacks {k}: {what}\n{}", screen(&b));
        }
    }
}

#[test]
fn forms_and_quit_dialog() {
    let mut app = fixture(colour());
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('n'),
        KeyModifiers::NONE,
    )));
    for size in SIZES {
        let b = render(&app, size);
        snapshot("runs_form", &b);
        assert_has(&b, "New runs: one per (method, m, seed)");
        assert_has(&b, "‹ fitc ›");
        // the defaults of the command line and sessions (run_spec::RunEntry)
        assert_has(&b, "m values : 50");
        assert_has(&b, "iterations : 500");
    }
    app.update(key(KeyCode::Esc));
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('a'),
        KeyModifiers::NONE,
    )));
    app.update(key(KeyCode::Enter));
    for size in SIZES {
        let b = render(&app, size);
        snapshot("load_form", &b);
        assert_has(&b, "give the data set a name");
    }
    app.update(key(KeyCode::Esc));
    app.dirty = true;
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('q'),
        KeyModifiers::NONE,
    )));
    for size in SIZES {
        let b = render(&app, size);
        snapshot("quit", &b);
        assert_has(&b, "save and quit");
        assert_has(&b, "● unsaved");
    }
}

#[test]
fn replay_title_and_partial_curve() {
    let mut app = fixture(colour());
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('r'),
        KeyModifiers::NONE,
    )));
    app.update(Event::Tick(Duration::from_millis(500)));
    for size in SIZES {
        let b = render(&app, size);
        snapshot("replay", &b);
        assert_has(&b, "Replay toy/fitc m=10 seed 1 · it 10 · 20 it/s");
    }
}

#[test]
fn tiny_terminals_do_not_panic() {
    let mut app = fixture(colour());
    for tab in ['1', '2', '3', '?', 'n'] {
        app.update(Event::Key(KeyEvent::new(
            KeyCode::Char(tab),
            KeyModifiers::NONE,
        )));
        for size in [(1, 1), (20, 5), (40, 10), (79, 23), (300, 100)] {
            render(&app, size);
        }
    }
}

/// The shipped demo opens with every chart drawn: data load, prediction computed.
#[test]
fn demo_session_draws_every_chart() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/demo.toml");
    let session = Session::read(&path).expect("the demo session reads");
    let mut rt = Runtime::new(1).expect("pool");
    let (mut app, effects) = App::new(path, session, colour());
    rt.run_effects(&mut app, effects);
    assert!(
        rt.settle(&mut app, Duration::from_secs(30)),
        "demo did not settle"
    );
    assert!(
        app.session.results.iter().all(|r| r.status == Status::Done),
        "demo has unfinished results"
    );
    assert!(
        app.runs.iter().all(|r| app.result_of(r).is_some()),
        "a demo run has no result"
    );
    let b = render(&app, (160, 48));
    assert!(
        matches!(app.prediction, PredState::Ready(..)),
        "{:?}",
        app.prediction
    );
    assert_has(&b, "Evidence on xsinx3: NLML vs iteration");
    assert_has(&b, "Comparison on xsinx3");
    assert_has(&b, "f ±2σ");
    assert!(
        !has(&b, "no finished runs") && !has(&b, "no curves yet") && !has(&b, "cannot"),
        "{}",
        screen(&b)
    );
    std::fs::create_dir_all(Path::new(env!("CARGO_MANIFEST_DIR")).join("target")).ok();
    // Text captures for the README (target/demo_*.txt).
    for tab in ['1', '2', '3'] {
        app.update(Event::Key(KeyEvent::new(
            KeyCode::Char(tab),
            KeyModifiers::NONE,
        )));
        for size in SIZES {
            let b = render(&app, size);
            let out = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("target/demo_{}x{}_{tab}.txt", size.0, size.1));
            std::fs::write(out, screen(&b)).ok();
        }
    }
}

/// Issue 22's legends and colours at 80×24, on a session of six methods, two fitc
/// labels that differ only at the end, five m each (30 runs): methods the old
/// hue-by-registry-position palette coloured alike (vfe and ssgp, fitc and psds) differ;
/// the comparison table shows `fitc-std-val0.1` whole, not cut to `fitc-std`; the
/// evidence legend that cannot name every run says how many it leaves out.
#[test]
fn legends_name_every_label_and_count_what_they_leave_out_at_80x24() {
    let mut text = String::from(
        "schema_version = 1\nname = \"many\"\n[[datasets]]\nname = \"toy\"\ntrain = \"a.csv\"\n",
    );
    let labels = [
        ("fitc", "fitc-std"),
        ("fitc", "fitc-std-val0.1"),
        ("vfe", "vfe"),
        ("dtc", "dtc"),
        ("psds", "psds"),
        ("ssgp", "ssgp"),
    ];
    for (method, label) in labels {
        text += &format!(
            "[[runs]]\ndataset = \"toy\"\nmethod = \"{method}\"\nlabel = \"{label}\"\nm = [5, 10, 20, 40, 80]\n"
        );
    }
    let session = Session::parse(&text).expect("parses");
    let (mut app, _) = App::new(PathBuf::from("/nowhere/many.toml"), session, colour());
    app.update(Event::DataLoaded {
        name: "toy".into(),
        epoch: 1,
        result: Ok(toy()),
    });
    let keys: Vec<_> = app
        .runs
        .iter()
        .map(|r| (r.key.clone(), r.spec.method.clone()))
        .collect();
    for (i, (key, method)) in keys.iter().enumerate() {
        let trace: Vec<f64> = (0..30).map(|t| 50.0 + i as f64 - t as f64).collect();
        app.session.set_result(RunResult {
            nlml: trace.last().copied(),
            nmse: Some(0.01 * (i + 1) as f64),
            mnlp: Some(0.1 * i as f64),
            iterations: 30,
            trace,
            ..RunResult::new(key.clone(), method, Status::Done)
        });
    }
    assert_eq!(app.runs.len(), 30);
    app.update(Event::Resize(80, 24));
    let b = render(&app, (80, 24));
    // evidence: the runs named in the legend ("━" and m) and "+N more" make 18
    let l = lines(&b);
    let named: usize = l
        .iter()
        .map(|x| {
            x.match_indices('━')
                .filter(|(i, _)| x[i + '━'.len_utf8()..].starts_with(|c: char| c.is_ascii_digit()))
                .count()
        })
        .sum();
    let more: usize = l
        .iter()
        .find_map(|x| {
            let at = x.find(" more")?;
            x[..at].rsplit('+').next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no \"+N more\" in the evidence legend:\n{}", screen(&b)));
    assert_eq!(
        named + more,
        30,
        "{named} named + {more} more:\n{}",
        screen(&b)
    );
    // the runs table colours each label by its palette index: no two methods alike
    // (at 160×48, where every row shows)
    let b = render(&app, (160, 48));
    let l = lines(&b);
    // (the runs table is the left half of the screen)
    let fg_of = |label: &str| {
        let w = b.area.width as usize;
        l.iter()
            .enumerate()
            .find_map(|(y, x)| {
                let x: String = x.chars().take(w / 2).collect();
                let at = x.find("done")?;
                let col = at + x[at..].find(&format!(" {label} "))? + 1;
                let cx = x[..col].chars().count();
                Some(b.content[y * w + cx].fg)
            })
            .unwrap_or_else(|| panic!("no {label} row:\n{}", screen(&b)))
    };
    // (labels the table has room for whole at 160 columns: fitc-std-val0.1 is cut there)
    let labels: Vec<_> = labels.iter().filter(|(_, l)| l.len() <= 8).collect();
    let colours: Vec<Color> = labels.iter().map(|(_, label)| fg_of(label)).collect();
    for (i, a) in colours.iter().enumerate() {
        for (j, c) in colours.iter().enumerate().skip(i + 1) {
            assert_ne!(a, c, "{} and {} share a colour", labels[i].1, labels[j].1);
        }
    }
    // comparison: the longer label is shown whole, if wrapped
    app.update(key(KeyCode::Char('2')));
    let b = render(&app, (80, 24));
    let rows: Vec<Vec<char>> = lines(&b).iter().map(|x| x.chars().collect()).collect();
    let token = |y: usize, col: usize| -> String {
        rows.get(y).map_or(String::new(), |r| {
            r.iter().skip(col).take_while(|c| **c != ' ').collect()
        })
    };
    let (y, col) = rows
        .iter()
        .enumerate()
        .find_map(|(y, r)| {
            let s: String = r.iter().collect();
            let next: String = rows
                .get(y + 1)
                .map_or(String::new(), |n| n.iter().collect());
            let at = s.find("fitc-std-").or_else(|| {
                // wrapped: "fitc-std" here, "-val0.1" under it
                let at = s.find("fitc-std ")?;
                let col = s[..at].chars().count();
                next.chars()
                    .skip(col)
                    .collect::<String>()
                    .starts_with("-val0.1")
                    .then_some(at)
            })?;
            Some((y, s[..at].chars().count()))
        })
        .unwrap_or_else(|| panic!("no fitc-std-val0.1 row:\n{}", screen(&b)));
    let first = token(y, col);
    let whole = if first == "fitc-std-val0.1" {
        first
    } else {
        first + &token(y + 1, col)
    };
    assert_eq!(whole, "fitc-std-val0.1", "\n{}", screen(&b));
}

/// Issues 24 and 29 in the evidence pane at 80×24: an rvm run's legend gives its number
/// of relevance vectors and the lower panel draws that number against step; an svgp
/// run's periodic full-data ELBO is drawn as marked points beside its noisy trace, and
/// the legend says what the marks are.
#[test]
fn evidence_shows_relevance_vectors_and_the_full_data_elbo_at_80x24() {
    let text = "schema_version = 3\nname = \"marks\"\n[[datasets]]\nname = \"toy\"\ntrain = \"a.csv\"\n\
        [[runs]]\ndataset = \"toy\"\nmethod = \"rvm\"\nm = [30]\n\
        [[runs]]\ndataset = \"toy\"\nmethod = \"svgp\"\nm = [5]\n";
    let session = Session::parse(text).expect("parses");
    let (mut app, _) = App::new(PathBuf::from("/nowhere/marks.toml"), session, colour());
    app.update(Event::DataLoaded {
        name: "toy".into(),
        epoch: 1,
        result: Ok(toy()),
    });
    let table = |t: &str| -> toml::Table { toml::from_str(t).expect("a table") };
    for row in app.runs.clone() {
        let method = row.spec.method.clone();
        let (trace, extra): (Vec<f64>, toml::Table) = if method == "rvm" {
            // 1 basis function, then one more every 4 steps up to 7
            let sizes: Vec<usize> = (0..40).map(|s| (1 + s / 4).min(7)).collect();
            let trace = (0..40).map(|s| 100.0 - 2.0 * s as f64).collect();
            let t = format!(
                "[rvm]\nsteps = 39\nconverged = true\nseconds = 0.01\nrelevance_vectors = {sizes:?}\n"
            );
            (trace, table(&t))
        } else {
            let trace = (0..40)
                .map(|s| 90.0 - s as f64 + if s % 2 == 0 { 6.0 } else { -6.0 })
                .collect();
            let t = "[svgp]\noptimizer = \"natgrad\"\nbatch = 10\nsteps = 39\nepochs = 10.0\n\
                     full_at = [0, 10, 20, 30, 39]\nfull_neg_elbo = [90.0, 80.0, 70.0, 60.0, 51.0]\n";
            (trace, table(t))
        };
        let mut model = ModelFile::new(&method, Hyper::se(1.0, vec![1.2], 0.04));
        model.tables.extend(extra);
        app.session.set_result(RunResult {
            nlml: trace.last().copied(),
            nlml_scale: Some(sgpw::results::NlmlScale::Raw),
            iterations: 39,
            trace,
            model: Some(model),
            ..RunResult::new(row.key.clone(), &method, Status::Done)
        });
    }
    app.update(Event::Resize(80, 24));
    let b = render(&app, (80, 24));
    assert_has(&b, "(7 relevance vectors)");
    assert_has(&b, "full-data objective");
    // 80×24 has no room for a panel under the curves; 160×48 has
    assert!(!has(&b, " relevance vectors "), "{}", screen(&b));
    let big = render(&app, (160, 48));
    assert_has(&big, " relevance vectors ");
    // marking only the rvm run: no full-data legend item, the count still there
    let rvm_row = app
        .runs
        .iter()
        .position(|r| r.spec.method == "rvm")
        .expect("rvm row");
    app.runs[rvm_row].marked = true;
    let b = render(&app, (80, 24));
    assert_has(&b, "(7 relevance vectors)");
    assert!(!has(&b, "full-data objective"), "{}", screen(&b));
    // without the models' tables, neither appears
    for r in app.session.results.iter_mut() {
        if let Some(m) = r.model.as_mut() {
            m.tables.clear();
        }
    }
    app.runs[rvm_row].marked = false;
    for size in SIZES {
        let b = render(&app, size);
        assert!(!has(&b, "(7 relevance vectors)"), "{}", screen(&b));
        assert!(!has(&b, " relevance vectors "), "{}", screen(&b));
        assert!(!has(&b, "full-data objective"), "{}", screen(&b));
    }
}

/// The y labels of the evidence pane (the text between its left border and its axis).
fn evidence_y_labels(b: &Buffer) -> Vec<String> {
    lines(b)
        .iter()
        .filter_map(|l| {
            let (_, rest) = l.split_once('┃')?;
            let (label, _) = rest.split_once('│')?;
            let label = label.trim();
            (!label.is_empty()).then(|| label.to_string())
        })
        .collect()
}

/// The app's axis labels follow the figures' rules: an NLML from 202,400 to 201,128
/// (the issue's trial, where the app read "2.0e5 / 2.0e5 / 2.0e5") gets labels that
/// all differ, inside the data.
#[test]
fn narrow_nlml_range_gets_labels_that_differ_in_the_app() {
    let mut app = fixture(colour());
    let results: Vec<RunResult> = app.session.results.clone();
    for mut r in results {
        for v in &mut r.trace {
            // the fixture's traces run from about 160 down to about 16
            *v = 201_128.0 + 1_272.0 * (*v - 10.0) / 150.0;
        }
        app.session.set_result(r);
    }
    // the finished runs only (the running one's live NLML stays small)
    for i in 0..app.runs.len() {
        if !app
            .session
            .results
            .iter()
            .any(|r| r.key == app.runs[i].key && !r.trace.is_empty())
        {
            continue;
        }
        app.run_cursor = i;
        app.update(key(KeyCode::Char(' ')));
    }
    for size in SIZES {
        let b = render(&app, size);
        let labels: Vec<String> = evidence_y_labels(&b)
            .into_iter()
            .filter(|l| l.parse::<f64>().is_ok_and(|v| v > 1e5))
            .collect();
        let values: Vec<f64> = labels.iter().filter_map(|l| l.parse().ok()).collect();
        assert!(values.len() >= 2, "{labels:?}\n{}", screen(&b));
        let mut distinct = labels.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), labels.len(), "{labels:?}\n{}", screen(&b));
        assert!(
            values.iter().all(|v| (201_000.0..=202_500.0).contains(v)),
            "{labels:?}"
        );
    }
}

/// The iteration axis's middle label is the middle's value: runs of six evaluations
/// (iterations 0 to 5, as a run's first turn shows while its second start's subset fit
/// runs) read "0 2.5 5", not "0 2 5" (the label once rounded 2.5 half to even).
#[test]
fn the_iteration_axis_middle_label_is_its_value() {
    let mut app = fixture(colour());
    let results: Vec<RunResult> = app.session.results.clone();
    for mut r in results {
        r.trace.truncate(6);
        r.validation.retain(|p| p.iteration <= 5);
        app.session.set_result(r);
    }
    for i in 0..app.runs.len() {
        if !app
            .session
            .results
            .iter()
            .any(|r| r.key == app.runs[i].key && r.trace.len() == 6)
        {
            continue;
        }
        app.run_cursor = i;
        app.update(key(KeyCode::Char(' ')));
    }
    for size in SIZES {
        let b = render(&app, size);
        let axis = lines(&b)
            .into_iter()
            .flat_map(|l| {
                l.split('┃')
                    .map(|seg| seg.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .find(|seg| seg.starts_with("0 ") && seg.ends_with(" 5"))
            .unwrap_or_else(|| panic!("no iteration axis 0 … 5:\n{}", screen(&b)));
        assert!(axis.contains(" 2.5 "), "{axis:?}\n{}", screen(&b));
    }
}

/// At 80 columns a run label keeps what tells it apart (the kernel at its end, once
/// cut to `vfe-std-`), its time has a unit (`48.0s`, `1m12s`, once `47.99`), and the
/// comparison chart gets a real width (once 11 columns).
#[test]
fn narrow_terminals_keep_labels_units_and_a_comparison_chart() {
    let session = Session::parse(
        r#"
schema_version = 4
name = "narrow"
[[datasets]]
name = "toy"
train = "toy_train.csv"
[[runs]]
dataset = "toy"
method = "vfe"
m = [5, 10]
iterations = 50
[runs.options]
kernel = "matern52"
[[runs]]
dataset = "toy"
method = "vfe"
m = [5, 10]
iterations = 50
"#,
    )
    .expect("parses");
    let (mut app, _) = App::new(PathBuf::from("/nowhere/narrow.toml"), session, colour());
    let keys: Vec<_> = app.runs.iter().map(|r| r.key.clone()).collect();
    for (k, key) in keys.iter().enumerate() {
        let mut r = RunResult::new(key.clone(), "vfe", Status::Done);
        r.train_seconds = if k % 2 == 0 { 47.99 } else { 72.0 };
        r.nlml = Some(201_128.5);
        r.nmse = Some(0.23 + 0.01 * k as f64);
        r.mnlp = Some(12.3);
        r.iterations = 50;
        app.session.set_result(r);
    }
    app.update(Event::Resize(80, 24));
    let b = render(&app, (80, 24));
    assert_has(&b, "vfe-matern52");
    assert_has(&b, "48.0s");
    assert_has(&b, "1m12s");
    assert!(!has(&b, "47.99"), "{}", screen(&b));
    app.chart = ChartTab::Comparison;
    let b = render(&app, (80, 24));
    let axis = lines(&b)
        .iter()
        .map(|l| l.matches('─').count())
        .max()
        .unwrap_or(0);
    assert!(
        axis >= 20,
        "comparison chart {axis} columns wide:\n{}",
        screen(&b)
    );
}

/// Marks (Space) are kept in the session: saved as `[[marked]]`, marked again when the
/// file is opened; a file without the key has none.
#[test]
fn marks_survive_saving_and_reopening() {
    let mut app = fixture(colour());
    app.run_cursor = 1;
    app.update(key(KeyCode::Char(' ')));
    let marked = app.runs[1].key.clone();
    assert!(app.runs[1].marked);
    assert_eq!(app.session.marked, vec![marked.clone()]);
    let text = app.session.to_toml().expect("writes");
    assert!(text.contains("[[marked]]"), "{text}");
    let reread = Session::parse(&text).expect("reads back");
    assert_eq!(reread.marked, vec![marked.clone()]);
    let (again, _) = App::new(PathBuf::from("/nowhere/snapshots.toml"), reread, colour());
    let now: Vec<_> = again
        .runs
        .iter()
        .filter(|r| r.marked)
        .map(|r| r.key.clone())
        .collect();
    assert_eq!(now, vec![marked]);
    assert!(Session::parse(SESSION).expect("parses").marked.is_empty());
}

/// Labels 0/1 along one input (class 1 where sin x > 0) or two (class 1 in the first
/// and third quadrants): a classifier's data.
fn labelled(dim: usize) -> Arc<Dataset> {
    let n = 40;
    let x = DMatrix::from_fn(n, dim, |i, d| {
        if d == 0 {
            -5.0 + 10.0 * i as f64 / (n - 1) as f64
        } else {
            -5.0 + 10.0 * ((i * 7) % n) as f64 / (n - 1) as f64
        }
    });
    let y = DVector::from_fn(n, |i, _| {
        let one = if dim == 1 {
            x[(i, 0)].sin() > 0.0
        } else {
            x[(i, 0)] * x[(i, 1)] > 0.0
        };
        if one { 1.0 } else { 0.0 }
    });
    Arc::new(Dataset {
        classes: None,
        feature_names: (1..=dim).map(|d| format!("x{d}")).collect(),
        target_name: "y".into(),
        x_train: x,
        y_train: y,
        x_test: None,
        y_test: None,
        notes: vec![],
    })
}

/// FITC through EP with the bernoulli likelihood at `points`.
fn classifier(points: Vec<Vec<f64>>) -> ModelFile {
    use sgpw::likelihoods::{BinaryLabels, LikelihoodKind, LikelihoodTable};
    let dim = points[0].len();
    let mut model = ModelFile::new("fitc", Hyper::se(4.0, vec![1.5; dim], 1e-6));
    model.set(&Inducing { points });
    model.likelihood = LikelihoodTable::start(
        LikelihoodKind::Bernoulli,
        Some(BinaryLabels { labels: [0.0, 1.0] }),
    );
    model
}

/// The fixture's prediction pane showing `c`.
fn showing(c: predict::Curves) -> App {
    let mut app = fixture(colour());
    app.update(key(KeyCode::Char('3')));
    let PredState::Ready(want, _) = app.prediction.clone() else {
        panic!("no prediction")
    };
    app.prediction = PredState::Ready(want, Arc::new(c));
    app
}

/// A classifier's prediction is p(y = 1 | x) on [0, 1] with the band at f ±2σ and the
/// data at 0 and 1, not f's bands (whose ±2σ spans many units when σ0² is large).
#[test]
fn a_classifier_predicts_a_probability_on_0_1_at_80x24() {
    let d = labelled(1);
    let model = classifier((0..8).map(|i| vec![-4.5 + 9.0 * i as f64 / 7.0]).collect());
    let c = predict::compute(&model, &d, 0, 100).expect("predicts");
    let o = c.observed.clone().expect("a probability");
    assert!(
        (0..o.mean.len()).all(|i| (0.0..=1.0).contains(&o.mean[i])
            && o.lo[i] <= o.mean[i] + 1e-12
            && o.mean[i] <= o.hi[i] + 1e-12),
        "{o:?}"
    );
    // the data as their classes, and the probability follows them
    assert!(o.train.iter().all(|p| p.1 == 0.0 || p.1 == 1.0));
    let at = |x: f64| {
        let i = c.grid.iter().position(|g| *g >= x).expect("on the grid");
        o.mean[i]
    };
    assert!(at(1.5) > 0.7 && at(-1.5) < 0.3, "{} {}", at(1.5), at(-1.5));
    let app = showing(c);
    let b = render(&app, (80, 24));
    assert_has(&b, "y: p(y = 1)");
    assert_has(&b, "p at f ±2σ");
    assert!(!has(&b, "y ±2σ"), "{}", screen(&b));
    let l = lines(&b);
    // the y axis is the probability's: 0.0 and 1.0 at its ends
    assert!(l.iter().any(|x| x.contains("┃1.0")), "{}", screen(&b));
    assert!(l.iter().any(|x| x.contains("┃0.0")), "{}", screen(&b));
    assert!(
        l.iter().any(|x| x.matches('▲').count() == 8),
        "{}",
        screen(&b)
    );
}

/// A classifier with two inputs draws its probability map: both classes' shades, some
/// of the data by class and its inducing points, the inputs named.
#[test]
fn a_two_input_classifier_draws_its_probability_map_at_80x24() {
    let d = labelled(2);
    let model = classifier(vec![
        vec![-3.0, -3.0],
        vec![3.0, 3.0],
        vec![-3.0, 3.0],
        vec![3.0, -3.0],
    ]);
    let c = predict::compute(&model, &d, 0, 100).expect("predicts");
    let map = c.map.clone().expect("a map");
    assert_eq!(map.markers.len(), 4);
    // class 1 in the first and third quadrants, class 0 in the others
    assert!(
        map.at(3.0, 3.0) > 0.6 && map.at(-3.0, -3.0) > 0.6,
        "{map:?}"
    );
    assert!(
        map.at(-3.0, 3.0) < 0.4 && map.at(3.0, -3.0) < 0.4,
        "{map:?}"
    );
    let app = showing(c);
    let b = render(&app, (80, 24));
    assert_has(&b, "p(y = 1) over x1");
    let text = screen(&b);
    let count = |g: char| text.chars().filter(|c| *c == g).count();
    assert!(count('▓') > 10 && count('⁞') > 10, "{text}");
    assert_eq!(
        count('▲'),
        4 + 1,
        "four inducing points and the legend's:\n{text}"
    );
    assert!(count('+') > 0 && text.contains('o'), "{text}");
    assert!(!has(&b, "f ±2σ"), "{text}");
}

/// A data set whose target has two values: the status line says so when it loads, and
/// the new-runs form on it chooses likelihood bernoulli (the user can change it).
#[test]
fn a_binary_target_is_offered_bernoulli_in_the_new_runs_form() {
    let session = Session::parse(SESSION).expect("fixture session parses");
    let (mut app, _) = App::new(PathBuf::from("/nowhere/s.toml"), session, colour());
    // as when the user adds a data set (a session's own load quietly as it opens)
    app.message.clear();
    app.update(Event::DataLoaded {
        name: "toy".into(),
        epoch: 1,
        result: Ok(labelled(1)),
    });
    assert!(
        app.message.contains("its target has two values (0, 1)"),
        "{}",
        app.message
    );
    app.update(key(KeyCode::Char('n')));
    let Some(sgpw::tui::state::Dialog::NewRuns(f)) = &app.dialog else {
        panic!("no form")
    };
    assert_eq!(
        f.get("opt:likelihood").expect("field").display(),
        "bernoulli"
    );
    assert!(
        app.message.contains("likelihood bernoulli chosen"),
        "{}",
        app.message
    );
}

/// A classifier's runs show their test error rate where NMSE would be ("-" for them),
/// the details its error rate, AUC and NLP, and the comparison plots the error rate.
#[test]
fn classifier_runs_show_the_error_rate_at_80x24() {
    let mut app = fixture(colour());
    let mut rs: Vec<RunResult> = app.session.results.clone();
    for (k, r) in rs.iter_mut().enumerate() {
        if r.status == Status::Done {
            r.nmse = None;
            r.error_rate = Some(0.03 + 0.001 * k as f64);
            r.auc = Some(0.99);
        }
    }
    for r in rs {
        app.session.set_result(r);
    }
    let b = render(&app, (80, 24));
    let text = screen(&b);
    let header = text
        .lines()
        .find(|l| l.contains("NLML") && l.contains("MNLP"))
        .expect("the runs table's header");
    assert!(
        header.contains(" error ") && !header.contains("NMSE"),
        "{text}"
    );
    assert!(text.contains("0.0300") || text.contains("0.0310"), "{text}");
    assert_has(&b, "error rate 0.03");
    app.update(key(KeyCode::Char('2')));
    let b = render(&app, (80, 24));
    assert_has(&b, "error rate vs m");
}
