//! Running a session's runs on the job pool (headless `sgpw run`; the app uses the
//! same pool and events).

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

/// Run the session's runs (all of them with `force`, else those without a finished
/// result) on `jobs` workers, saving the session after every finished run.
/// `report` sees each result as it arrives.
pub fn run_session(
    path: &Path,
    jobs: usize,
    force: bool,
    report: &mut dyn FnMut(&RunResult),
) -> Result<Session> {
    let mut session = Session::read(path)?;
    let base = base_dir(path);
    let runs: Vec<(RunKey, RunSpec)> = session
        .all_runs()
        .into_iter()
        .filter(|(k, _)| force || session.result(k).is_none_or(|r| r.status != Status::Done))
        .collect();
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
                session.set_result(r);
            }
        }
    }
    while pending > 0 {
        let Ok(event) = events.recv() else { break };
        if let JobEvent::Finished { result, .. } = event {
            pending -= 1;
            report(&result);
            session.set_result(*result);
            session.save(path)?;
        }
    }
    session.save(path)?;
    Ok(session)
}
