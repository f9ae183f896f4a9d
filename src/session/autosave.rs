//! The app's autosave: a journal beside the session file (`NAME.toml.autosave`, the
//! whole in-memory session in the session format) written atomically after every
//! finished run, every change to data sets or runs, and on SIGTERM/SIGHUP/SIGINT. A
//! killed app or a dropped connection so loses at most the runs that were still
//! training. Opening the session folds the journal in and offers to recover what the
//! file lacks; saving (`s`) or discarding removes it.

use super::{RunResult, Session, Status};
use crate::error::Result;
use crate::model_file::atomic_write;
use std::path::{Path, PathBuf};

/// Where the journal of the session at `path` lives.
pub fn path_for(session: &Path) -> PathBuf {
    let mut name = session
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "session.toml".into());
    name.push(".autosave");
    session.with_file_name(name)
}

/// Write the journal (atomic: a kill in the middle leaves the previous journal).
pub fn write(session_path: &Path, session: &Session) -> Result<PathBuf> {
    let path = path_for(session_path);
    atomic_write(&path, &session.to_toml()?)?;
    Ok(path)
}

/// Remove the journal (after a save, or when the user discards it).
pub fn remove(session_path: &Path) {
    let _ = std::fs::remove_file(path_for(session_path));
}

/// What a journal holds beyond the session file.
#[derive(Clone, Debug)]
pub struct Recovery {
    /// The session file's session with the journal folded in.
    pub session: Session,
    pub journal: PathBuf,
    /// Results the file lacks (or has only unfinished) and the journal has.
    pub results: usize,
    pub datasets: usize,
    pub runs: usize,
    /// When the journal was written (for the question), if the file system says.
    pub written: Option<std::time::SystemTime>,
}

impl Recovery {
    /// "3 results, 1 run entry" — what recovering adds.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        let plural = crate::words::count;
        if self.results > 0 {
            parts.push(plural(self.results, "result", "results"));
        }
        if self.runs > 0 {
            parts.push(plural(self.runs, "run entry", "run entries"));
        }
        if self.datasets > 0 {
            parts.push(plural(self.datasets, "data set", "data sets"));
        }
        parts.join(", ")
    }
}

/// The journal of `session_path` folded into `file` (the session as read from the
/// file, or a new one), if it adds anything. A journal that adds nothing is removed; one
/// that cannot be read is reported as an error and left alone.
pub fn check(session_path: &Path, file: &Session) -> std::result::Result<Option<Recovery>, String> {
    let journal = path_for(session_path);
    if !journal.exists() {
        return Ok(None);
    }
    let saved = Session::read(&journal)
        .map_err(|e| format!("{e} (the autosave is left alone; move it away to silence this)"))?;
    let recovery = fold(file, &saved, journal.clone());
    match recovery {
        Some(mut r) => {
            r.written = std::fs::metadata(&journal).and_then(|m| m.modified()).ok();
            Ok(Some(r))
        }
        None => {
            let _ = std::fs::remove_file(&journal);
            Ok(None)
        }
    }
}

fn better(journal: &RunResult, file: Option<&RunResult>) -> bool {
    match file {
        None => true,
        Some(f) => f.status != Status::Done && journal.status == Status::Done,
    }
}

/// `file` with what `journal` adds: its data sets and run entries that the file lacks,
/// and its results for runs the file has no finished result for. None if nothing.
pub fn fold(file: &Session, journal: &Session, path: PathBuf) -> Option<Recovery> {
    let mut out = file.clone();
    let mut datasets = 0;
    for d in &journal.datasets {
        if out.dataset(&d.get_ref().name).is_none() {
            out.datasets.push(d.clone());
            datasets += 1;
        }
    }
    let mut runs = 0;
    for r in &journal.runs {
        let present = out.runs.iter().any(|o| o.get_ref() == r.get_ref());
        if !present && out.dataset(&r.get_ref().dataset).is_some() {
            out.runs.push(r.clone());
            runs += 1;
        }
    }
    let mut results = 0;
    for r in &journal.results {
        if better(r, out.result(&r.key)) {
            out.set_result(r.clone());
            results += 1;
        }
    }
    (datasets + runs + results > 0).then_some(Recovery {
        session: out,
        journal: path,
        results,
        datasets,
        runs,
        written: None,
    })
}
