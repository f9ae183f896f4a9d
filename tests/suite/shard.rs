//! Sharded sweeps, with the real binary: three shards running at once, each writing
//! its own shard file, merged, give the unsharded run's results bit for bit (at the
//! same per-fit thread setting); merge refuses a run with two different results.

use crate::common;
use sgpw::session::{Session, Status};
use std::path::Path;
use std::process::{Command, Output};

const SESSION: &str = r#"schema_version = 1
name = "sweep"

[[datasets]]
name = "xsinx3"
train = "../datasets/xsinx3_train.csv"
test = "../datasets/xsinx3_test.csv"

[[runs]]
dataset = "xsinx3"
method = "fitc"
m = [4, 8, 12]
seeds = [1, 2]
iterations = 40

[[runs]]
dataset = "xsinx3"
method = "vfe"
m = [6, 10]
seeds = [1, 2]
iterations = 40

[[runs]]
dataset = "xsinx3"
method = "ssgp"
m = [5, 9]
seeds = [1]
iterations = 40
"#;

fn sgpw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .expect("runs")
}

/// A session folder with the repository's data sets beside it.
fn setup(dir: &Path) -> String {
    common::copy_datasets(dir);
    let path = dir.join("sessions/sweep.toml");
    std::fs::write(&path, SESSION).expect("writes");
    path.display().to_string()
}

/// Results without their timing, by key.
fn numbers(path: &str) -> Vec<sgpw::session::RunResult> {
    let mut results = Session::read(Path::new(path)).expect("reads").results;
    for r in &mut results {
        r.train_seconds = 0.0;
        if let Some(f) = r.model.as_mut().and_then(|m| m.fit.as_mut()) {
            f.train_seconds = 0.0;
        }
    }
    results.sort_by(|a, b| a.key.cmp(&b.key));
    results
}

#[test]
fn sharded_then_merged_equals_unsharded() {
    let whole = tempfile::tempdir().expect("tmp");
    let whole_session = setup(whole.path());
    let out = sgpw(&["run", &whole_session, "--jobs", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = numbers(&whole_session);
    assert_eq!(want.len(), 12);
    assert!(want.iter().all(|r| r.status == Status::Done));

    let dir = tempfile::tempdir().expect("tmp");
    let session = setup(dir.path());
    // three shards at once, as a job array would start them
    let children: Vec<_> = (0..3)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_sgpw"))
                .args(["run", &session, "--jobs", "2", "--shard", &format!("{i}/3")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("starts")
        })
        .collect();
    let mut files = Vec::new();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().expect("shard runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        files.push(
            dir.path()
                .join(format!("sessions/sweep.shard-{i}-of-3.toml")),
        );
    }
    assert!(
        numbers(&session).is_empty(),
        "a shard never writes the session itself"
    );
    let mut args = vec!["merge".to_string(), session.clone()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sgpw(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(numbers(&session), want, "merged shards differ from one run");

    // a shard that ran again resumes: nothing left to do
    let out = sgpw(&["run", &session, "--jobs", "2", "--shard", "1/3"]);
    assert!(out.status.success());

    // two different results for one run: merge refuses, naming it, and writes nothing
    let fresh = tempfile::tempdir().expect("tmp");
    let fresh_session = setup(fresh.path());
    let text = std::fs::read_to_string(&files[0]).expect("shard");
    let altered = files[0].with_file_name("altered.toml");
    let first_nlml = text
        .lines()
        .find(|l| l.starts_with("nlml = "))
        .expect("a result");
    std::fs::write(&altered, text.replacen(first_nlml, "nlml = 1.5", 1)).expect("writes");
    let out = sgpw(&[
        "merge",
        &fresh_session,
        &files[0].display().to_string(),
        &altered.display().to_string(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("two different results") && err.contains("xsinx3/"),
        "{err}"
    );
    assert!(numbers(&fresh_session).is_empty(), "nothing merged");
}
