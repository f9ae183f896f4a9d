//! The headless commands under faults and misuse: a closed pipe, exit codes, cancelled
//! runs, kill -9 in the middle of a save, a full disk and a read-only folder at save
//! time. Every wait is bounded.

use crate::common;
use sgpw::session::{Session, Status};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sgpw")
}

fn sgpw(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("runs")
}

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .display()
        .to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A session with fitc runs m = 5, 6, 7 on xsinx3 (each well under a second).
fn session_in(dir: &Path, extra: &str) -> PathBuf {
    common::copy_datasets(dir);
    let s = dir.join("sessions/s.toml");
    std::fs::write(
        &s,
        format!(
            r#"schema_version = 1
name = "faults"

[[datasets]]
name = "xsinx3"
train = "../datasets/xsinx3_train.csv"
test = "../datasets/xsinx3_test.csv"

[[runs]]
dataset = "xsinx3"
method = "fitc"
m = [5, 6, 7]
iterations = 30
{extra}"#
        ),
    )
    .expect("writes the session");
    s
}

/// A fitted model of `method` on xsinx3 (for predict and stream).
fn model(dir: &Path, method: &str, standardize: bool) -> PathBuf {
    let m = dir.join(format!("{method}.toml"));
    let mut args = vec![
        "fit",
        "--train",
        "datasets/xsinx3_train.csv",
        "--method",
        method,
        "--m",
        "5",
        "--iters",
        "10",
        "--save-model",
    ];
    let path = m.display().to_string();
    args.push(&path);
    if standardize {
        args.push("--standardize");
    }
    let out = Command::new(bin())
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", stderr(&out));
    m
}

/// `cmd | head -1` as the shell runs it: the reader takes one line and goes away.
fn into_head(args: &[&str]) -> (Option<i32>, String, String) {
    let mut child = Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut out = child.stdout.take().expect("stdout");
    let mut first = Vec::new();
    let mut b = [0u8; 1];
    while out.read(&mut b).expect("reads") == 1 && b[0] != b'\n' {
        first.push(b[0]);
    }
    drop(out); // head exits
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("reads stderr");
    let status = child.wait().expect("waits");
    (status.code(), String::from_utf8_lossy(&first).into(), err)
}

#[test]
fn closed_pipes_end_quietly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = model(dir.path(), "fitc", false);
    let psds = model(dir.path(), "psds", false).display().to_string();
    // 3,692 rows: far more than a pipe buffer, so the writer meets the closed pipe.
    let input = dir.path().join("big.csv");
    let mut text = String::from("x1,y\n");
    for i in 0..3692 {
        text.push_str(&format!("{},{}\n", (i as f64) * 0.001 - 1.8, 0.0));
    }
    std::fs::write(&input, text).expect("writes");
    let (m, input) = (m.display().to_string(), input.display().to_string());
    let s = session_in(dir.path(), "");
    let s = s.display().to_string();
    assert_eq!(
        sgpw(&["run", &s, "--jobs", "2"]).status.code(),
        Some(0),
        "the session runs"
    );
    for args in [
        vec!["predict", "--model", &m, "--input", &input],
        vec![
            "stream", "--model", &psds, "--train", &input, "--every", "1",
        ],
        vec!["report", &s],
        vec!["fit", "--help"],
    ] {
        let (code, first, err) = into_head(&args);
        assert!(
            code == Some(0) || code.is_none(),
            "{args:?}: exit {code:?}, stderr {err}"
        );
        assert!(err.is_empty(), "{args:?}: stderr {err:?}");
        assert!(!first.is_empty(), "{args:?}: no first line");
    }
}

#[test]
fn run_exit_codes_say_when_runs_failed_and_report_lists_them_apart() {
    let dir = tempfile::tempdir().expect("tempdir");
    // m = 500 > n = 200 is refused before any run starts, naming the entry's line and
    // the session key; a missing data file fails its run; a text column fails.
    std::fs::create_dir_all(dir.path().join("datasets")).expect("mkdir");
    std::fs::write(dir.path().join("datasets/text.csv"), "x1,y\na,1\nb,2\n").expect("writes");
    let big = session_in(
        dir.path(),
        r#"
[[runs]]
dataset = "xsinx3"
method = "fitc"
label = "big"
m = [500]
iterations = 5
"#,
    );
    let out = sgpw(&["run", &big.display().to_string(), "--jobs", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("s.toml: line 15: m = 500 is larger than the training set (200 points)")
            && !err.contains("--m")
            && err.contains("nothing was run")
            && !err.contains("done "),
        "{err}"
    );
    assert!(Session::read(&big).expect("reads").results.is_empty());
    let s = session_in(
        dir.path(),
        r#"
[[datasets]]
name = "missing"
train = "../datasets/nope.csv"

[[runs]]
dataset = "missing"
method = "fitc"
m = [3]

[[datasets]]
name = "text"
train = "../datasets/text.csv"

[[runs]]
dataset = "text"
method = "fitc"
m = [1]
"#,
    );
    let path = s.display().to_string();
    let out = sgpw(&["run", &path, "--jobs", "2"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("2 of 5 runs did not finish (2 failed, 0 cancelled)"),
        "{err}"
    );
    let session = Session::read(&s).expect("reads");
    assert_eq!(
        session
            .results
            .iter()
            .filter(|r| r.status == Status::Done)
            .count(),
        3
    );
    // report: the failures are listed with their messages
    let out = sgpw(&["report", &path]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("failed:") && text.contains("nope.csv"),
        "{text}"
    );
    // a cancelled result is listed apart from failures and re-run by `sgpw run`
    let mut session = session;
    let k = session.all_runs()[0].0.clone();
    let r = session
        .results
        .iter_mut()
        .find(|r| r.key == k)
        .expect("m = 5");
    r.status = Status::Cancelled;
    r.iterations = 31;
    r.train_seconds = 2.5;
    r.nmse = None;
    session.save(&s).expect("saves");
    let out = sgpw(&["report", &path]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "cancelled after they started, not finished (re-run by `sgpw run`): fitc m=5 \
             seed 1 (at iteration 31, 2.5 s)"
        ),
        "{text}"
    );
    let out = sgpw(&["run", &path]);
    let err = stderr(&out);
    assert!(
        err.contains("done      xsinx3/fitc m=5") && !err.contains("m=6"),
        "{err}"
    );
    // an empty session: report says so and exits 3
    let empty = dir.path().join("sessions/empty.toml");
    std::fs::write(&empty, "schema_version = 1\nname = \"e\"\n").expect("writes");
    let out = sgpw(&["report", &empty.display().to_string()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("no results yet"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    // a usage error is 2, an unreadable session 1
    assert_eq!(sgpw(&["run"]).status.code(), Some(2));
    assert_eq!(sgpw(&["run", "/nonexistent/s.toml"]).status.code(), Some(1));
}

#[test]
fn stream_checks_the_model_as_predict_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = model(dir.path(), "psds", true);
    let text = std::fs::read_to_string(&m).expect("reads");
    let broken: String = text
        .lines()
        .map(|l| {
            if l.starts_with("input_center") {
                "input_center = []".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&m, broken).expect("writes");
    let m = m.display().to_string();
    let train = repo("datasets/xsinx3_train.csv");
    for args in [
        vec!["stream", "--model", &m, "--train", &train],
        vec!["predict", "--model", &m, "--input", &train],
    ] {
        let out = sgpw(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("line 8: [standardize] input_center has 0 values")
                && !err.contains("panicked"),
            "{err}"
        );
    }
}

/// The temporary file of an atomic save of `file` in progress, if any.
fn saving(file: &Path) -> bool {
    let name = file
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    std::fs::read_dir(file.parent().expect("folder"))
        .expect("lists")
        .filter_map(|e| e.ok())
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!(".{name}.tmp"))
        })
}

fn remove_temporaries(file: &Path) {
    let name = file
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    for e in std::fs::read_dir(file.parent().expect("folder"))
        .expect("lists")
        .filter_map(|e| e.ok())
    {
        if e.file_name()
            .to_string_lossy()
            .starts_with(&format!(".{name}.tmp"))
        {
            std::fs::remove_file(e.path()).expect("removes");
        }
    }
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let end = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn kill_9_during_a_save_keeps_the_previous_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = session_in(dir.path(), "");
    let original = std::fs::read(&s).expect("reads");
    let path = s.display().to_string();
    let mut results_before = 0;
    for round in 0..2 {
        // Each save pauses 2 s between writing the temporary file and the rename.
        let mut child = Command::new(bin())
            .args(["run", &path, "--jobs", "1"])
            .env("SGPW_TEST_SAVE_PAUSE_MS", "2000")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawns");
        wait_until("a save in progress", || saving(&s));
        child.kill().expect("kill -9");
        child.wait().expect("reaped");
        // The killed save's temporary file stays behind (hidden; safe to delete).
        assert!(saving(&s));
        remove_temporaries(&s);
        let session = Session::read(&s).expect("the session file still reads");
        if round == 0 {
            assert_eq!(std::fs::read(&s).expect("reads"), original, "untouched");
        }
        assert_eq!(session.results.len(), results_before, "round {round}");
        // Let one save complete, so the next kill hits the second save.
        let mut child = Command::new(bin())
            .args(["run", &path, "--jobs", "1"])
            .env("SGPW_TEST_SAVE_PAUSE_MS", "300")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawns");
        wait_until("the first result saved", || {
            Session::read(&s).is_ok_and(|x| x.results.len() > results_before)
        });
        child.kill().expect("kill -9");
        child.wait().expect("reaped");
        remove_temporaries(&s);
        results_before = Session::read(&s).expect("reads").results.len();
    }
    // What was saved is kept; the next run finishes the rest.
    let out = sgpw(&["run", &path, "--jobs", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(Session::read(&s).expect("reads").results.len(), 3);
}

/// Run `script` as root of a private mount namespace (so a tmpfs mounted there is seen
/// by nothing else and goes away with it); None where this machine cannot.
pub fn in_mount_namespace(script: &str, env: &[(&str, &str)]) -> Option<Output> {
    let probe = Command::new("unshare")
        .args(["-rm", "true"])
        .stderr(Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: `unshare -rm` (a private mount namespace) is not available");
        return None;
    }
    let mut cmd = Command::new("unshare");
    cmd.args(["-rm", "sh", "-c", script]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Some(cmd.output().expect("runs unshare"))
}

#[test]
fn full_disk_and_read_only_folder_at_save_time_are_errors_that_keep_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    session_in(&src, "");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir_all(&mnt).expect("mkdir");
    let script = r#"
set -u
mount -t tmpfs -o size=1m tmpfs "$MNT" || exit 90
cp -r "$SRC"/. "$MNT"/
cp "$MNT/sessions/s.toml" "$MNT/orig.toml"
dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null
echo "== full"
"$SGPW" run "$MNT/sessions/s.toml" --jobs 1 >/dev/null
echo "exit $?"
cmp -s "$MNT/sessions/s.toml" "$MNT/orig.toml" && echo "file intact"
ls -a "$MNT/sessions" | grep -q tmp && echo "temporary file left"
rm "$MNT/fill"
mount -o remount,ro "$MNT"
echo "== read-only"
"$SGPW" run "$MNT/sessions/s.toml" --jobs 1 >/dev/null
echo "exit $?"
cmp -s "$MNT/sessions/s.toml" "$MNT/orig.toml" && echo "file intact"
mount -o remount,rw "$MNT"
echo "== space again"
"$SGPW" run "$MNT/sessions/s.toml" --jobs 1 >/dev/null
echo "exit $?"
grep -c 'status = "done"' "$MNT/sessions/s.toml"
"#;
    let Some(out) = in_mount_namespace(
        script,
        &[
            ("MNT", &mnt.display().to_string()),
            ("SRC", &src.display().to_string()),
            ("SGPW", bin()),
        ],
    ) else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = stderr(&out);
    if out.status.code() == Some(90) {
        eprintln!("skipped: cannot mount a tmpfs here: {err}");
        return;
    }
    let expect = "== full\nexit 1\nfile intact\n== read-only\nexit 1\nfile intact\n== space again\nexit 0\n3\n";
    assert_eq!(text, expect, "stderr: {err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("Read-only file system"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// SIGTERM while two full GPs train and a third waits: the two are recorded as
/// cancelled at the iteration they reached, the third never started and has no result
/// (it stays "not run", as in the app), and the message and `report` tell them apart.
#[test]
fn sigterm_during_sgpw_run_saves_what_finished_and_records_the_cancelled_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut slow = String::from("x1,x2,y\n");
    for i in 0..2000 {
        let (a, b) = ((i as f64 * 0.7).sin() * 3.0, (i as f64 * 1.3).cos() * 3.0);
        slow.push_str(&format!("{a},{b},{}\n", a.sin() * b.cos()));
    }
    std::fs::create_dir_all(dir.path().join("datasets")).expect("mkdir");
    std::fs::write(dir.path().join("datasets/slow.csv"), slow).expect("writes");
    let s = session_in(
        dir.path(),
        r#"
[[datasets]]
name = "slow"
train = "../datasets/slow.csv"
split = 0.8

[[runs]]
dataset = "slow"
method = "full"
m = [1]
seeds = [1, 2, 3]
iterations = 500
"#,
    );
    let mut child = Command::new(bin())
        .args(["run", &s.display().to_string(), "--jobs", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    wait_until("the three fitc runs saved", || {
        Session::read(&s).is_ok_and(|x| x.results.len() == 3)
    });
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let end = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(st) = child.try_wait().expect("waits") {
            break st;
        }
        assert!(Instant::now() < end, "sgpw run did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("reads");
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted by signal 15"), "{err}");
    let session = Session::read(&s).expect("reads");
    let full: Vec<_> = session
        .results
        .iter()
        .filter(|r| r.key.dataset == "slow")
        .collect();
    // jobs = 2: two full GPs were training, the third was queued
    assert_eq!(full.len(), 2, "{err}");
    for r in &full {
        assert_eq!(r.status, Status::Cancelled);
        assert!(r.train_seconds > 0.0, "the time it ran is kept");
        assert!(
            err.contains(&format!(
                "cancelled slow/{} m=1 seed={} at iteration {}",
                r.key.label, r.key.seed, r.iterations
            )),
            "{err}"
        );
    }
    let unstarted: Vec<u64> = (1..=3)
        .filter(|seed| !full.iter().any(|r| r.key.seed == *seed))
        .collect();
    assert_eq!(unstarted.len(), 1);
    assert!(
        err.contains("2 runs cancelled while training")
            && err.contains("1 run queued not started")
            && err.contains(&format!("m=1 seed={}: queued, not started", unstarted[0])),
        "{err}"
    );
    assert_eq!(
        session
            .results
            .iter()
            .filter(|r| r.status == Status::Done)
            .count(),
        3
    );
    // report: the cancelled runs with how far they got, the unstarted one as not run
    let out = sgpw(&["report", &s.display().to_string()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("cancelled after they started, not finished")
            && text.contains("1 run not run yet (never started"),
        "{text}"
    );
}

/// Without a terminal the app is a plain error: no escape codes on either stream (the
/// terminal was never put in raw mode), exit 1, and what to use instead.
#[test]
fn the_app_without_a_terminal_is_a_plain_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = session_in(dir.path(), "");
    for args in [vec!["open", s.to_str().expect("utf-8")], vec![]] {
        let out = Command::new(bin())
            .args(&args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            !out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b),
            "{args:?}: escape codes in {:?} / {err:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            err.contains("needs a terminal") && err.contains("sgpw run"),
            "{args:?}: {err}"
        );
    }
}

/// SIGINT to `sgpw fit` while it iterates: the fit is cancelled, ends as every cancelled
/// fit ends (train::finish: how far it got), and says so — the iteration, the seconds,
/// the objective reached — saves no model, and exits 130. (Before, the signal killed
/// the process without a word.)
#[test]
fn sigint_during_sgpw_fit_reports_how_far_it_got() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().to_str().expect("utf-8");
    let made = Command::new(bin())
        .args([
            "gen", "big", "--n", "20000", "--d", "4", "--format", "csv", "--out", out,
        ])
        .output()
        .expect("runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let train = dir.path().join("big_20000_4.csv");
    let model = dir.path().join("m.toml");
    let child = Command::new(bin())
        .args([
            "fit",
            "--train",
            train.to_str().expect("utf-8"),
            "--method",
            "fitc",
        ])
        .args([
            "--m",
            "100",
            "--iters",
            "100000",
            "--single-start",
            "--save-model",
        ])
        .arg(&model)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    // reading and the start take well under a second; the fit iterates for minutes
    std::thread::sleep(std::time::Duration::from_secs(5));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let out = child.wait_with_output().expect("waits");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("cancelled by signal 2 at iteration ") && err.contains("no model was saved"),
        "{err}"
    );
    assert!(!model.exists(), "a cancelled fit saved a model");
}
