//! Responsiveness of the terminal app (`cargo bench --bench tui`):
//! 1. render time of one frame with 20 runs and 1000-point traces (TestBackend);
//! 2. key-to-screen latency of the real binary in a pseudo-terminal while 2 runs train:
//!    from writing a key to the pty until the redrawn pane's text comes back.

use nalgebra::{DMatrix, DVector};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use sgpw::data::Dataset;
use sgpw::methods::pseudo::Inducing;
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::session::{RunResult, Session, Status};
use sgpw::tui::state::{App, Event, PredState};
use sgpw::tui::theme::Theme;
use sgpw::tui::{predict, view};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn stats(name: &str, mut v: Vec<f64>) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    let pct = |p: f64| v[((n as f64 - 1.0) * p).round() as usize];
    println!(
        "{name:<48} n={n:<4} mean {mean:7.2} ms  p50 {:7.2}  p95 {:7.2}  max {:7.2}",
        pct(0.5),
        pct(0.95),
        pct(1.0)
    );
}

fn big_app() -> App {
    let methods = ["full", "fitc", "fifgp", "psds"];
    let mut text = String::from(
        "schema_version = 1\nname = \"bench\"\n[[datasets]]\nname = \"d\"\ntrain = \"d.csv\"\n",
    );
    for m in methods {
        text.push_str(&format!("[[runs]]\ndataset = \"d\"\nmethod = \"{m}\"\nm = [5, 10, 20, 40, 80]\niterations = 1000\n"));
    }
    let session = Session::parse(&text).expect("bench session");
    let (mut app, _) = App::new(
        PathBuf::from("bench.toml"),
        session,
        Theme {
            color: true,
            ascii: false,
        },
    );
    let n = 500;
    let x: Vec<f64> = (0..n).map(|i| -5.0 + 10.0 * i as f64 / n as f64).collect();
    let data = Arc::new(Dataset {
        classes: None,
        feature_names: vec!["x".into()],
        target_name: "y".into(),
        x_train: DMatrix::from_column_slice(n, 1, &x),
        y_train: DVector::from_iterator(n, x.iter().map(|v| v.sin())),
        x_test: Some(DMatrix::from_column_slice(n, 1, &x)),
        y_test: Some(DVector::from_iterator(n, x.iter().map(|v| v.sin() + 0.01))),
        notes: vec![],
    });
    app.update(Event::DataLoaded {
        name: "d".into(),
        epoch: 1,
        result: Ok(data.clone()),
    });
    let rows: Vec<_> = app
        .runs
        .iter()
        .map(|r| (r.key.clone(), r.spec.clone()))
        .collect();
    assert_eq!(rows.len(), 20);
    for (key, spec) in rows {
        let trace: Vec<f64> = (0..1000)
            .map(|i| 100.0 + 500.0 * (-(i as f64) / (50.0 + key.m as f64)).exp())
            .collect();
        let mut model = ModelFile::new("fitc", Hyper::se(1.0, vec![1.0], 0.01));
        model.set(&Inducing {
            points: (0..key.m)
                .map(|i| vec![-5.0 + 10.0 * i as f64 / key.m as f64])
                .collect(),
        });
        app.session.set_result(RunResult {
            nlml: Some(trace[999]),
            nmse: Some(0.1 / key.m as f64),
            mnlp: Some(-1.0),
            iterations: 1000,
            train_seconds: 1.0,
            trace,
            model: Some(model),
            ..RunResult::new(key.clone(), &spec.method, Status::Done)
        });
    }
    app.run_cursor = 1;
    app.update(Event::Resize(160, 48));
    if let PredState::Pending(want) = app.prediction.clone() {
        let model = app
            .session
            .result(&want.key)
            .and_then(|r| r.model.clone())
            .expect("model");
        let result = predict::compute(&model, &data, 0, predict::GRID).map(Arc::new);
        app.update(Event::Predicted { want, result });
    }
    app
}

fn render_bench(frames: usize) {
    let mut app = big_app();
    for (w, h) in [(80u16, 24u16), (160, 48)] {
        let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        for tab in ['1', '2', '3'] {
            app.update(Event::Key(KeyEvent::new(
                KeyCode::Char(tab),
                KeyModifiers::NONE,
            )));
            let mut times = Vec::new();
            for i in 0..frames {
                let t = Instant::now();
                term.draw(|f| view::draw(f, &app)).expect("draws");
                if i >= frames / 10 {
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            let what = match tab {
                _ if w >= 140 => "all three",
                '1' => "evidence",
                '2' => "comparison",
                _ => "prediction",
            };
            stats(
                &format!("render {w}x{h}, 20 runs x 1000 it, chart {what}"),
                times,
            );
            if w == 160 {
                break; // all three charts are on one screen
            }
        }
    }
}

/// The binary in a pty, 2 long fitc runs training, '1'/'2' switching the chart.
fn latency_bench(keys: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let n = 10000;
    let mut csv = String::from("x,y\n");
    for i in 0..n {
        let x = -10.0 + 20.0 * i as f64 / n as f64;
        csv.push_str(&format!("{x},{}\n", x.sin() + 0.1 * (7.0 * x).cos()));
    }
    std::fs::write(dir.path().join("d.csv"), csv).expect("data");
    let session = "schema_version = 1\nname = \"latency\"\n[[datasets]]\nname = \"d\"\ntrain = \"d.csv\"\nsplit = 0.8\n\
                   [[runs]]\ndataset = \"d\"\nmethod = \"fitc\"\nm = [150, 200]\niterations = 100000\n";
    let path = dir.path().join("latency.toml");
    std::fs::write(&path, session).expect("session");

    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("pty");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_sgpw"));
    cmd.args(["open", path.to_str().expect("utf-8"), "--jobs", "2"]);
    cmd.env("TERM", "xterm-256color");
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("writer")));
    // The screen as the reader thread last parsed it, and how many updates so far.
    let screen: Arc<Mutex<(String, u64)>> = Arc::default();
    let (sc, w) = (screen.clone(), writer.clone());
    std::thread::spawn(move || {
        let size = |n: u16| std::num::NonZeroU16::new(n).expect("size");
        let mut parser = vt100::Parser::new(size(24), size(80), 0);
        let mut buf = [0u8; 65536];
        while let Ok(k) = reader.read(&mut buf) {
            if k == 0 {
                break;
            }
            if buf[..k].windows(4).any(|x| x == b"\x1b[6n") {
                let _ = w.lock().map(|mut w| w.write_all(b"\x1b[1;1R"));
            }
            parser.process(&buf[..k]);
            let text = parser.screen().contents();
            if let Ok(mut s) = sc.lock() {
                s.0 = text;
                s.1 += 1;
            }
        }
    });
    let send = |b: &[u8]| {
        let mut w = writer.lock().expect("writer");
        w.write_all(b).expect("write");
        w.flush().expect("flush");
    };
    let has = |pat: &str| screen.lock().expect("screen").0.contains(pat);
    let wait = |pat: &str, limit: Duration| {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if has(pat) {
                return true;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        false
    };
    assert!(wait("✓ d", Duration::from_secs(60)), "data did not load");
    send(b"g");
    assert!(
        wait("2 running", Duration::from_secs(60)),
        "runs did not start"
    );
    std::thread::sleep(Duration::from_millis(500));
    let mut times = Vec::new();
    let mut training = 0;
    for i in 0..keys {
        training += usize::from(has("2 running"));
        let (key, title): (&[u8], &str) = if i % 2 == 0 {
            (b"2", "Comparison on d")
        } else {
            (b"1", "Evidence on d")
        };
        let t = Instant::now();
        send(key);
        if !wait(title, Duration::from_secs(5)) {
            println!("key {i}: no redraw within 5 s");
            continue;
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
        std::thread::sleep(Duration::from_millis(40));
    }
    stats("key-to-screen, pty 80x24, 2 fitc runs training", times);
    println!("(2 runs were training at {training} of the {keys} key presses)");
    if training < keys {
        println!("{}", screen.lock().expect("screen").0);
    }
    send(b"q");
    std::thread::sleep(Duration::from_millis(200));
    send(b"y");
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end && child.try_wait().ok().flatten().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
}

fn main() {
    // `cargo bench` passes --bench; under `cargo test --benches` run a short smoke pass.
    let quick = !std::env::args().any(|a| a == "--bench");
    render_bench(if quick { 25 } else { 220 });
    latency_bench(if quick { 6 } else { 60 });
}
