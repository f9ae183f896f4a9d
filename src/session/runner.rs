//! Running a session's runs on the job pool (headless `sgpw run`; the app uses the
//! same pool and events).

use super::shard::{Shard, ShardFile};
use super::{RunKey, RunResult, Session, Status, base_dir};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::jobs::{JobEvent, Jobs, outcome};
use crate::run_spec::RunSpec;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Load every data set the given runs use; a data set that fails to load is kept as
/// its error message so that only its own runs fail.
pub fn load_datasets(
    session: &Session,
    base: &Path,
    runs: &[(RunKey, RunSpec)],
) -> HashMap<String, std::result::Result<Arc<Dataset>, String>> {
    let mut out = HashMap::new();
    for (key, _) in runs {
        if out.contains_key(&key.dataset) {
            continue;
        }
        let loaded = match session.dataset(&key.dataset) {
            Some(entry) => entry.load(base).map(Arc::new).map_err(|e| e.to_string()),
            None => Err(format!("no data set named '{}'", key.dataset)),
        };
        out.insert(key.dataset.clone(), loaded);
    }
    out
}

/// Where a headless run writes its results: the session itself, or a shard file.
enum Sink {
    Session,
    Shard(Shard, ShardFile),
}

/// Run the session's runs (all of them with `force`, else those without a finished
/// result; with a shard, only those the shard owns) on `jobs` workers, saving after
/// every finished run — into the session, or with a shard into its shard file beside
/// the session (a shard never writes the session; `merge` folds it in). `report` sees
/// each result as it arrives. Returns the session with the new results.
pub fn run_session(
    path: &Path,
    jobs: usize,
    force: bool,
    shard: Option<Shard>,
    report: &mut dyn FnMut(&RunResult),
) -> Result<Session> {
    let mut session = Session::read(path)?;
    let base = base_dir(path);
    let mut sink = match shard {
        None => Sink::Session,
        Some(s) => {
            let file = s.path(path);
            let f = if file.exists() {
                ShardFile::read(&file)?
            } else {
                ShardFile::new(&session, s)
            };
            // a shard resumes: results it already wrote count as the session's
            for r in &f.results {
                session.set_result(r.clone());
            }
            Sink::Shard(s, f)
        }
    };
    let runs: Vec<(RunKey, RunSpec)> = session
        .all_runs()
        .into_iter()
        .filter(|(k, _)| shard.is_none_or(|s| s.owns(k)))
        .filter(|(k, _)| force || session.result(k).is_none_or(|r| r.status != Status::Done))
        .collect();
    let mut save = |session: &mut Session, result: RunResult| -> Result<()> {
        match &mut sink {
            Sink::Session => {
                session.set_result(result);
                session.save(path)
            }
            Sink::Shard(s, f) => {
                session.set_result(result.clone());
                f.set_result(result);
                f.save(&s.path(path))
            }
        }
    };
    let data = load_datasets(&session, &base, &runs);
    let (pool, events) = Jobs::new(jobs)?;
    let mut pending = 0;
    for (id, (key, spec)) in runs.into_iter().enumerate() {
        // m ≤ n and the subset sizes can only be checked now that the data are loaded
        let checked = match &data[&key.dataset] {
            Ok(d) => spec.check(d.n_train()).map(|v| (d.clone(), v)),
            Err(msg) => Err(Error::Data(msg.clone())),
        };
        match checked {
            Ok((d, valid)) => {
                pool.submit(id, key, d, valid);
                pending += 1;
            }
            Err(e) => {
                let r = outcome(key, &spec.method, Err(e));
                report(&r);
                save(&mut session, r)?;
            }
        }
    }
    while pending > 0 {
        let Ok(event) = events.recv() else { break };
        if let JobEvent::Finished { result, .. } = event {
            pending -= 1;
            report(&result);
            save(&mut session, *result)?;
        }
    }
    match &sink {
        Sink::Session => session.save(path)?,
        // written even when the shard owned no unfinished run: its file says it ran
        Sink::Shard(s, f) => f.save(&s.path(path))?,
    }
    Ok(session)
}
