//! The real binary in a pseudo-terminal (portable-pty), its screen parsed by vt100:
//! launch a fitc run on a copy of the demo session, read its NMSE, save, quit, reopen
//! and find the same NMSE; and the terminal is restored after a forced panic.
//! Every wait is bounded.

use crate::common;
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
        App::start_program(env!("CARGO_BIN_EXE_sgpw"), args, cwd, env)
    }

    /// Another program in the pty (a shell that sets up and runs sgpw).
    fn start_program(program: &str, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> App {
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pty");
        let mut cmd = CommandBuilder::new(program);
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
            [
                "done",
                "xsinx3",
                "fitc" | "fitc-std",
                "raw" | "std",
                "7",
                "1",
                _it,
                _nlml,
                nmse,
                ..,
            ] => Some(nmse.to_string()),
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
        .find(|r| r.key.label == "fitc-std" && r.key.m == 7 && r.key.dataset == "xsinx3")
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
        // the status line at the bottom (a long message wraps onto a second line)
        let status = lines.len() == 30 && lines[28..].iter().any(|l| l.contains("demo.toml"));
        (status && wide).then_some(())
    });
    app.keys("q");
    assert!(app.wait_exit().success());
}

/// A session with a quick fitc run (xsinx3, m = 7, 30 iterations) and a slow one (the
/// full GP on 1600 points, 500 iterations), with the data it reads.
fn two_runs_session() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    common::copy_datasets(dir.path());
    let mut slow = String::from("x1,x2,y\n");
    for i in 0..2000 {
        let (a, b) = ((i as f64 * 0.7).sin() * 3.0, (i as f64 * 1.3).cos() * 3.0);
        slow.push_str(&format!(
            "{a},{b},{}\n",
            a.sin() * b.cos() + 0.1 * (i as f64 * 12.9898).sin()
        ));
    }
    std::fs::write(dir.path().join("datasets/slow.csv"), slow).expect("writes");
    let session = dir.path().join("sessions/two.toml");
    std::fs::write(
        &session,
        r#"schema_version = 1
name = "two runs"

[[datasets]]
name = "xsinx3"
train = "../datasets/xsinx3_train.csv"
test = "../datasets/xsinx3_test.csv"

[[datasets]]
name = "slow"
train = "../datasets/slow.csv"
split = 0.8

[[runs]]
dataset = "xsinx3"
method = "fitc"
m = [7]
iterations = 30

[[runs]]
dataset = "slow"
method = "full"
m = [1]
iterations = 500
"#,
    )
    .expect("writes the session");
    (dir, session)
}

/// Whether the pty is in canonical (cooked) mode with echo: raw mode is off.
fn cooked(app: &App) -> bool {
    let fd = app._master.as_raw_fd().expect("the master's fd");
    // SAFETY: tcgetattr only fills the termios struct for a valid descriptor.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::tcgetattr(fd, &mut t) } == 0;
    ok && t.c_lflag & libc::ICANON != 0 && t.c_lflag & libc::ECHO != 0
}

/// SIGTERM or SIGHUP while one run has finished and one trains: the terminal is
/// restored, the exit status is 128 + the signal, the finished run is in the autosave
/// and so is the training one, as cancelled at the iteration it reached (as `sgpw run`
/// records it), and reopening offers them back; y recovers them, s saves them.
fn signal_during_two_runs(sig: i32, name: &str) {
    let (dir, session) = two_runs_session();
    let original = std::fs::read_to_string(&session).expect("reads");
    let path = session.to_str().expect("utf-8 path");
    let mut app = App::start(&["open", path, "--jobs", "2"], dir.path(), &[]);
    app.wait_for("both data sets", |s| {
        (s.contains("✓ xsinx3") && s.contains("✓ slow")).then_some(())
    });
    assert!(!cooked(&app), "the app runs in raw mode");
    app.keys("g");
    let nmse = app.wait_for("fitc done while the full GP trains", |s| {
        let training = s.lines().any(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.windows(3).any(|w| w == ["running", "slow", "full"])
        });
        nmse_of_m7(s).filter(|_| training)
    });
    let pid = app.child.process_id().expect("pid") as i32;
    // SAFETY: sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
    let status = app.wait_exit();
    assert_eq!(
        status.exit_code(),
        128 + sig as u32,
        "exit status {status:?}"
    );
    std::thread::sleep(Duration::from_millis(300));
    let screen = app.screen();
    assert!(
        !screen.alternate_screen() && !screen.hide_cursor(),
        "terminal not restored after {name}"
    );
    assert!(cooked(&app), "raw mode still on after {name}");
    let text = app.text();
    assert!(
        text.contains(&format!("stopped by {name}"))
            && text.contains("two.toml.autosave")
            && text.contains("1 run training cancelled"),
        "{text}"
    );
    // The session file is as it was; the journal holds the finished run and the
    // cancelled one.
    assert_eq!(std::fs::read_to_string(&session).expect("reads"), original);
    let journal = dir.path().join("sessions/two.toml.autosave");
    let saved = sgpw::session::Session::read(&journal).expect("the autosave reads");
    let status = |s| saved.results.iter().filter(move |r| r.status == s);
    let done: Vec<_> = status(sgpw::session::Status::Done).collect();
    assert_eq!(done.len(), 1, "one finished run: {:?}", saved.results);
    assert_eq!(sgpw::tui::format::fmt_nmse(done[0].nmse), nmse);
    let cancelled: Vec<_> = status(sgpw::session::Status::Cancelled).collect();
    assert!(
        cancelled.len() == 1 && cancelled[0].key.dataset == "slow",
        "{:?}",
        saved.results
    );
    drop(app);

    let app = App::start(&["open", path, "--jobs", "2"], dir.path(), &[]);
    app.wait_for("the recovery question", |s| {
        (s.contains("Recover unsaved work?") && s.contains("2 results")).then_some(())
    });
    app.keys("y");
    let again = app.wait_for("the recovered m = 7 row", nmse_of_m7);
    assert_eq!(again, nmse);
    app.keys("s");
    app.wait_for("the save", |s| {
        (s.contains("saved ") && !s.contains("unsaved")).then_some(())
    });
    let mut app = app;
    app.keys("q");
    assert!(app.wait_exit().success());
    assert!(!journal.exists(), "saving removes the autosave");
    let file = sgpw::session::Session::read(&session).expect("reads");
    assert_eq!(file.results.len(), 2);
}

#[test]
fn sigterm_during_two_runs_restores_the_terminal_and_keeps_the_finished_run() {
    signal_during_two_runs(libc::SIGTERM, "SIGTERM");
}

#[test]
fn sighup_during_two_runs_restores_the_terminal_and_keeps_the_finished_run() {
    signal_during_two_runs(libc::SIGHUP, "SIGHUP");
}

/// kill -9 of the app in the middle of `s`: the session file is the previous one and
/// reads; the autosave written when the run finished still holds the run.
#[test]
fn kill_9_during_an_app_save_keeps_the_previous_file_and_the_autosave() {
    let (dir, session) = demo_copy();
    let original = std::fs::read(&session).expect("reads");
    let path = session.to_str().expect("utf-8");
    let app = App::start(
        &["open", path, "--jobs", "1"],
        dir.path(),
        &[("SGPW_TEST_SAVE_PAUSE_MS", "1500")],
    );
    app.wait_for("the demo's data", |s| s.contains("✓ xsinx3").then_some(()));
    // the first run (full GP on xsinx3) again, with R
    app.keys("R");
    let journal = dir.path().join("sessions/demo.toml.autosave");
    let end = Instant::now() + WAIT;
    while !journal.exists() {
        assert!(Instant::now() < end, "no autosave; screen:\n{}", app.text());
        std::thread::sleep(Duration::from_millis(20));
    }
    app.keys("s");
    let tmp_prefix = ".demo.toml.tmp";
    let sessions = dir.path().join("sessions");
    let saving = || {
        std::fs::read_dir(&sessions)
            .expect("lists")
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().starts_with(tmp_prefix))
    };
    while !saving() {
        assert!(
            Instant::now() < end,
            "no save began; screen:\n{}",
            app.text()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut app = app;
    let pid = app.child.process_id().expect("pid") as i32;
    // SAFETY: kill -9 of the child this test started (portable-pty's kill sends SIGHUP).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let _ = app.wait_exit();
    assert_eq!(std::fs::read(&session).expect("reads"), original);
    sgpw::session::Session::read(&session).expect("the previous session reads");
    let j = sgpw::session::Session::read(&journal).expect("the autosave reads");
    assert_eq!(j.results.len(), 17);
}

/// A second signal ends the app at once, even in the middle of the first one's
/// autosave (made slow here), with the terminal restored.
#[test]
fn a_second_signal_exits_at_once() {
    let (dir, session) = two_runs_session();
    let path = session.to_str().expect("utf-8 path");
    let app = App::start(
        &["open", path, "--jobs", "2"],
        dir.path(),
        &[("SGPW_TEST_SAVE_PAUSE_MS", "3000")],
    );
    app.wait_for("both data sets", |s| {
        (s.contains("✓ xsinx3") && s.contains("✓ slow")).then_some(())
    });
    app.keys("g");
    app.wait_for("fitc done", nmse_of_m7);
    // Every save pauses 3 s: wait for the finished run's autosave; the first signal's
    // autosave then takes 3 s, and the second signal must not wait for it.
    let journal = dir.path().join("sessions/two.toml.autosave");
    let end = Instant::now() + WAIT;
    while !journal.exists() {
        assert!(Instant::now() < end, "no autosave");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = app.child.process_id().expect("pid") as i32;
    // SAFETY: signals to the child this test started.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let mut app = app;
    let status = app.wait_exit();
    assert!(
        sent.elapsed() < Duration::from_millis(2000),
        "took {:?} after the second signal",
        sent.elapsed()
    );
    assert_eq!(status.exit_code(), 143);
    std::thread::sleep(Duration::from_millis(200));
    let screen = app.screen();
    assert!(!screen.alternate_screen() && !screen.hide_cursor());
    assert!(cooked(&app));
    // The journal of the finished run (written before the signals) still reads.
    let j = sgpw::session::Session::read(&journal).expect("the autosave reads");
    // the finished run is there (a loaded machine may also have let the first signal's
    // autosave add the cancelled one before the exit)
    assert!(
        j.results
            .iter()
            .any(|r| r.key.m == 7 && r.status == sgpw::results::Status::Done),
        "{:?}",
        j.results
            .iter()
            .map(|r| (&r.key, r.status))
            .collect::<Vec<_>>()
    );
}

/// A full disk at save time, in the app: the autosave and `s` say so, the results stay
/// on the screen, and `s` saves once there is room again. The disk is a 1 MB tmpfs
/// in a private mount namespace (skipped where `unshare -rm` is not allowed).
#[test]
fn a_full_disk_is_a_message_and_s_retries() {
    let probe = std::process::Command::new("unshare")
        .args(["-rm", "true"])
        .stderr(std::process::Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: `unshare -rm` is not available here");
        return;
    }
    let (src, session) = demo_copy();
    // Only the fitc run of the demo, without its result, so that it has one to make.
    let mut s = sgpw::session::Session::read(&session).expect("reads");
    s.results.clear();
    s.save(&session).expect("saves");
    let mnt = src.path().join("mnt");
    let out = src.path().join("out");
    std::fs::create_dir_all(&mnt).expect("mkdir");
    std::fs::create_dir_all(&out).expect("mkdir");
    let script = format!(
        r#"mount -t tmpfs -o size=1m tmpfs "$MNT" || exit 90
cp -r "$SRC/sessions" "$SRC/datasets" "$MNT"/
dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null
(while [ ! -e "$OUT/free" ]; do sleep 0.05; done; rm -f "$MNT/fill"; touch "$OUT/freed") &
"{bin}" open "$MNT/sessions/demo.toml" --jobs 1
code=$?
cp "$MNT/sessions/demo.toml" "$OUT/demo.toml"
ls -a "$MNT/sessions" > "$OUT/files"
exit $code
"#,
        bin = env!("CARGO_BIN_EXE_sgpw")
    );
    let mnt_s = mnt.display().to_string();
    let src_s = src.path().display().to_string();
    let out_s = out.display().to_string();
    let app = App::start_program(
        "unshare",
        &["-rm", "sh", "-c", &script],
        src.path(),
        &[("MNT", &mnt_s), ("SRC", &src_s), ("OUT", &out_s)],
    );
    app.wait_for("the demo", |s| s.contains("✓ xsinx3").then_some(()));
    app.keys("R");
    app.wait_for("the autosave's failure", |s| {
        s.contains("autosave failed").then_some(())
    });
    app.keys("s");
    app.wait_for("the save's failure", |s| {
        (s.contains("not saved: No space left on device")).then_some(())
    });
    // the result is still there, unsaved
    app.wait_for("the unsaved result", |s| {
        s.contains("● unsaved").then_some(())
    });
    std::fs::write(out.join("free"), "").expect("writes");
    let end = Instant::now() + WAIT;
    while !out.join("freed").exists() {
        assert!(Instant::now() < end, "space not freed");
        std::thread::sleep(Duration::from_millis(20));
    }
    app.keys("s");
    app.wait_for("the save", |s| {
        (s.contains("saved ") && !s.contains("unsaved")).then_some(())
    });
    let mut app = app;
    app.keys("q");
    let status = app.wait_exit();
    assert!(status.success(), "{status:?}");
    let saved = sgpw::session::Session::read(&out.join("demo.toml")).expect("reads");
    assert_eq!(saved.results.len(), 1);
    let files = std::fs::read_to_string(out.join("files")).expect("reads");
    assert!(
        !files.contains("tmp") && !files.contains("autosave"),
        "{files}"
    );
}

/// A session whose first data set is a damaged Parquet file (issue 31: a page header
/// that made polars abort the process) and whose second is fine: the app keeps
/// running, the Data sets pane shows the error, and the other data set works.
#[test]
fn a_damaged_parquet_file_is_an_error_in_the_data_sets_pane() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::copy_datasets(dir.path());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("tests/fixtures/parquet/damaged/byte814_4d.parquet"),
        dir.path().join("datasets/broken.parquet"),
    )
    .expect("copies the damaged file");
    let session = dir.path().join("sessions/s.toml");
    std::fs::write(
        &session,
        r#"schema_version = 2
name = "damaged"

[[datasets]]
name = "broken"
train = "../datasets/broken.parquet"
split = 0.5

[[datasets]]
name = "xsinx3"
train = "../datasets/xsinx3_train.csv"
test = "../datasets/xsinx3_test.csv"
"#,
    )
    .expect("writes the session");
    let mut app = App::start(
        &["open", session.to_str().expect("utf-8"), "--jobs", "1"],
        dir.path(),
        &[],
    );
    // the first data set is selected: its error is in the pane (wrapped, and as much
    // as 80×24 shows: when the error is also the status line's last message, that line
    // takes three rows and the pane shows one row less, and the status line has the
    // byte offset instead — which data set reports last is a race)
    app.wait_for("the error in the Data sets pane", |s| {
        let pane: String = s
            .lines()
            .filter_map(|l| l.strip_prefix('│')?.split('│').next())
            .collect::<Vec<_>>()
            .join(" ");
        let flat = pane.split_whitespace().collect::<Vec<_>>().join(" ");
        (flat.contains("✗ broken error")
            && flat.contains("✓ xsinx3")
            && flat.contains("cannot read as Parquet: the file is damaged: column 'y'")
            && (flat.contains("(row group 1): the page at byte 804")
                || (flat.contains("(row group 1): the") && {
                    // the pane one row short: the status line holds the rest
                    let screen = s.split_whitespace().collect::<Vec<_>>().join(" ");
                    screen.contains("(row group 1): the page at byte 804")
                })))
        .then_some(())
    });
    assert!(
        matches!(app.child.try_wait(), Ok(None)),
        "the app must still run"
    );
    // and it still answers keys: select the other data set and see its summary
    app.send(b"\t");
    app.keys("j");
    app.wait_for("xsinx3's summary", |s| {
        s.contains("n 200 train").then_some(())
    });
    app.keys("q");
    let status = app.wait_exit();
    assert!(status.success(), "{status:?}");
}

/// An abort (as a failed allocation ends the process) leaves the terminal as it was:
/// the SIGABRT handler leaves the alternate screen, shows the cursor and puts the
/// terminal back in the mode it had before raw mode, then the process ends by SIGABRT.
#[test]
fn terminal_is_restored_after_an_abort() {
    let (dir, session) = demo_copy();
    let mut app = App::start(
        &["open", session.to_str().expect("utf-8"), "--jobs", "1"],
        dir.path(),
        &[("SGPW_TEST_ABORT", "1")],
    );
    let status = app.wait_exit();
    assert!(!status.success(), "an abort must fail the process");
    std::thread::sleep(Duration::from_millis(300));
    let out = app.output.lock().expect("output").clone();
    let text = String::from_utf8_lossy(&out);
    let entered = text
        .find("\x1b[?1049h")
        .expect("entered the alternate screen");
    let left = text[entered..]
        .find("\x1b[?1049l")
        .expect("left the alternate screen after the abort");
    assert!(
        text[entered + left..].contains("\x1b[?25h"),
        "showed the cursor"
    );
    assert!(text.contains("sgpw was aborted (SIGABRT)"), "{text}");
    let screen = app.screen();
    assert!(!screen.alternate_screen() && !screen.hide_cursor());
    // cooked mode again: canonical input and echo, as before raw mode
    let fd = app._master.as_raw_fd().expect("the pty's descriptor");
    // SAFETY: termios is plain data; tcgetattr fills it from an open descriptor.
    let mut mode: libc::termios = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::tcgetattr(fd, &mut mode) }, 0);
    assert!(
        mode.c_lflag & libc::ICANON != 0 && mode.c_lflag & libc::ECHO != 0,
        "the terminal is still raw"
    );
}

/// `P` writes the chart on screen beside the session file, for each of the three
/// charts (`1`, `2`, `3` choose them), as a whole SVG; the status line says so.
#[test]
fn p_writes_the_chart_on_screen_beside_the_session() {
    let (dir, session) = demo_copy();
    let path = session.to_str().expect("utf-8 path");
    let mut app = App::start(&["open", path, "--jobs", "1"], dir.path(), &[]);
    app.wait_for("the demo's data", |s| {
        (s.contains("✓ xsinx3") && s.contains("Runs (")).then_some(())
    });
    for (key, name) in [("1", "evidence"), ("2", "comparison"), ("3", "prediction")] {
        let figure = session.with_file_name(format!("demo-{name}.svg"));
        app.keys(key);
        // the prediction is computed in the background: P again until it is drawn
        let end = Instant::now() + WAIT;
        while !figure.exists() {
            assert!(
                Instant::now() < end,
                "no {name} figure; the screen:\n{}",
                app.text()
            );
            app.keys("P");
            std::thread::sleep(Duration::from_millis(500));
        }
        app.wait_for("the message", |s| {
            s.contains("wrote the chart to").then_some(())
        });
        let svg = std::fs::read_to_string(&figure).expect("reads the figure");
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{name}: not a whole SVG"
        );
        assert!(svg.contains("<polyline"), "{name}: nothing drawn");
    }
    app.keys("q");
    assert!(app.wait_exit().success());
}
