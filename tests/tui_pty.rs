//! The real binary in a pseudo-terminal (portable-pty), its screen parsed by vt100:
//! launch a fitc run on a copy of the demo session, read its NMSE, save, quit, reopen
//! and find the same NMSE; and the terminal is restored after a forced panic.
//! Every wait is bounded.

mod common;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ROWS: u16 = 24;
const COLS: u16 = 80;
const WAIT: Duration = Duration::from_secs(90);

struct App {
    child: Box<dyn Child + Send + Sync>,
    _master: Box<dyn MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    /// Everything the app wrote.
    output: Arc<Mutex<Vec<u8>>>,
    size: (u16, u16),
}

impl App {
    fn start(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> App {
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_sgpw"));
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        cmd.env_remove("NO_COLOR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawns sgpw");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("writer")));
        let output = Arc::new(Mutex::new(Vec::new()));
        let (out, w) = (output.clone(), writer.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = &buf[..n];
                // Answer cursor-position queries as a terminal would.
                if chunk.windows(4).any(|x| x == b"\x1b[6n")
                    && let Ok(mut w) = w.lock()
                {
                    let _ = w.write_all(b"\x1b[1;1R");
                    let _ = w.flush();
                }
                if let Ok(mut o) = out.lock() {
                    o.extend_from_slice(chunk);
                }
            }
        });
        App {
            child,
            _master: pair.master,
            writer,
            output,
            size: (ROWS, COLS),
        }
    }

    fn screen(&self) -> vt100::Screen {
        let size = |n: u16| std::num::NonZeroU16::new(n).expect("non-zero size");
        let mut p = vt100::Parser::new(size(self.size.0), size(self.size.1), 0);
        p.process(&self.output.lock().expect("output").clone());
        p.screen().clone()
    }

    fn text(&self) -> String {
        self.screen().contents()
    }

    fn send(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().expect("writer");
        w.write_all(bytes).expect("writes to the pty");
        w.flush().expect("flushes");
        drop(w);
        // Let the app read each key on its own.
        std::thread::sleep(Duration::from_millis(30));
    }

    fn keys(&self, s: &str) {
        for c in s.chars() {
            self.send(c.to_string().as_bytes());
        }
    }

    /// Wait until the screen satisfies `f`; the screen at timeout in the panic message.
    fn wait_for<T>(&self, what: &str, f: impl Fn(&str) -> Option<T>) -> T {
        let end = Instant::now() + WAIT;
        loop {
            let text = self.text();
            if let Some(v) = f(&text) {
                return v;
            }
            if Instant::now() > end {
                panic!("timed out waiting for {what}; the screen:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let end = Instant::now() + WAIT;
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return s;
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                panic!("sgpw did not exit; the screen:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}

/// A copy of the demo session and the data it reads, in a temporary folder.
fn demo_copy() -> (tempfile::TempDir, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("temp dir");
    common::copy_datasets(dir.path());
    let session = dir.path().join("sessions/demo.toml");
    std::fs::copy(root.join("sessions/demo.toml"), &session).expect("copies the demo");
    (dir, session)
}

/// The NMSE column of the runs-table row for xsinx3 / fitc / m = 7 that is done.
fn nmse_of_m7(screen: &str) -> Option<String> {
    screen.lines().find_map(|l| {
        let l = l.trim_start_matches(['┃', '│', ' ']);
        let cols: Vec<&str> = l.split_whitespace().collect();
        match cols.as_slice() {
            ["done", "xsinx3", "fitc", "7", "1", _it, _nlml, nmse, ..] => Some(nmse.to_string()),
            _ => None,
        }
    })
}

#[test]
fn launch_save_quit_reopen_same_nmse() {
    let (dir, session) = demo_copy();
    let path = session.to_str().expect("utf-8 path");
    let app = App::start(&["open", path, "--jobs", "1"], dir.path(), &[]);
    app.wait_for("the demo's data", |s| {
        (s.contains("✓ xsinx3") && s.contains("Runs (")).then_some(())
    });
    app.keys("n");
    app.wait_for("the runs form", |s| s.contains("‹ fitc ›").then_some(()));
    // m values: clear (Ctrl-U) and type 7; seeds stay 1; iterations 30.
    app.send(b"\x1b[B");
    app.send(b"\x1b[B");
    app.send(b"\x15");
    app.keys("7");
    app.send(b"\x1b[B");
    app.send(b"\x1b[B");
    app.send(b"\x15");
    app.keys("30");
    app.wait_for("the typed values", |s| {
        (s.contains("m values : 7") && s.contains("iterations : 30")).then_some(())
    });
    app.send(b"\r");
    let nmse = app.wait_for("the fitc run to finish", nmse_of_m7);
    assert!(
        nmse.parse::<f64>().is_ok_and(|v| v.is_finite() && v > 0.0),
        "NMSE {nmse:?}"
    );
    app.wait_for("the unsaved marker", |s| {
        s.contains("● unsaved").then_some(())
    });
    app.keys("s");
    app.wait_for("the save", |s| {
        (s.contains("saved ") && !s.contains("unsaved")).then_some(())
    });
    let mut app = app;
    app.keys("q");
    let status = app.wait_exit();
    assert!(status.success(), "exit status {status:?}");
    // The file holds the result, formatted as the screen showed it.
    let saved = sgpw::session::Session::read(&session).expect("the saved session reads");
    let r = saved
        .results
        .iter()
        .find(|r| r.key.label == "fitc" && r.key.m == 7 && r.key.dataset == "xsinx3")
        .expect("the m = 7 result");
    assert_eq!(sgpw::tui::format::fmt_nmse(r.nmse), nmse);
    assert!(r.model.is_some() && !r.trace.is_empty());
    drop(app);

    let app = App::start(&["open", path, "--jobs", "1"], dir.path(), &[]);
    app.wait_for("the reopened data", |s| {
        s.contains("✓ xsinx3").then_some(())
    });
    // The new run is the last row: End selects it (and scrolls it into view).
    app.send(b"\x1b[F");
    let again = app.wait_for("the m = 7 row after reopening", nmse_of_m7);
    assert_eq!(again, nmse, "NMSE after reopening");
    let mut app = app;
    app.keys("q");
    assert!(app.wait_exit().success());
    // The demo in the repository was not touched.
    let repo =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/demo.toml"))
            .expect("repo demo");
    assert!(!repo.contains("m = [7]"));
}

#[test]
fn terminal_is_restored_after_a_panic() {
    let (dir, session) = demo_copy();
    let mut app = App::start(
        &["open", session.to_str().expect("utf-8"), "--jobs", "1"],
        dir.path(),
        &[("SGPW_TEST_PANIC", "1")],
    );
    let status = app.wait_exit();
    assert!(!status.success(), "a panic must fail the process");
    // Let the reader thread collect the last bytes.
    std::thread::sleep(Duration::from_millis(300));
    let out = app.output.lock().expect("output").clone();
    let text = String::from_utf8_lossy(&out);
    let find = |pat: &str| text.find(pat);
    let entered = find("\x1b[?1049h").expect("entered the alternate screen");
    // The hook restores first; the guard's drop during unwinding repeats it harmlessly.
    let after = |pat: &str| text[entered..].find(pat).map(|i| i + entered);
    let left = after("\x1b[?1049l").expect("left the alternate screen");
    let shown = after("\x1b[?25h").expect("showed the cursor");
    let message = find("forced panic").expect("the panic message");
    assert!(
        entered < left && left < message && shown < message,
        "restore must come before the panic message"
    );
    // Raw mode is off again: the screen is the normal one and the message is readable.
    let screen = app.screen();
    assert!(
        !screen.alternate_screen() && !screen.hide_cursor(),
        "terminal state not restored"
    );
}

#[test]
fn no_arguments_open_the_demo_and_resizing_redraws() {
    let (dir, _) = demo_copy();
    // `sgpw` alone opens sessions/demo.toml of the working folder (here the copy).
    let mut app = App::start(&[], dir.path(), &[]);
    app.wait_for("the demo", |s| {
        (s.contains("sgpw demo") && s.contains("✓ xsinx3")).then_some(())
    });
    app._master
        .resize(PtySize {
            rows: 30,
            cols: 100,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("resizes the pty");
    app.size = (30, 100);
    app.wait_for("a redraw at 100×30", |s| {
        let lines: Vec<&str> = s.lines().collect();
        let wide = lines
            .iter()
            .any(|l| l.chars().count() == 100 && l.starts_with('┏'));
        (lines.len() == 30 && lines[29].contains("demo.toml") && wide).then_some(())
    });
    app.keys("q");
    assert!(app.wait_exit().success());
}
