//! Sweeps sharded over a batch scheduler: `sgpw run SESSION --shard I/N` runs the
//! session's unfinished runs that hash to shard I and writes their results to a
//! shard file beside the session (never to the session itself, so shards running at
//! once cannot clobber each other); `sgpw merge SESSION SHARD...` folds shard files in.
//!
//! A run belongs to shard `fnv1a(dataset, label, m, seed) mod N`: a function of the
//! run's key alone, so the assignment does not change when runs are added to the
//! session, and every machine computes the same one.

use super::{RunKey, RunResult, SCHEMA_VERSION, Session, Status};
use crate::error::{Error, Result};
use crate::model_file::{atomic_write, toml_error};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Shard I of N (I counts from 0, as Slurm's array task ids do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// "I/N" with 0 ≤ I < N.
    fn from_str(s: &str) -> std::result::Result<Shard, String> {
        let bad = || format!("--shard {s}: give I/N with 0 ≤ I < N, e.g. 0/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// 64-bit FNV-1a: a fixed, documented hash (std's hasher may change between
/// releases, and every machine of a sweep must agree).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Shard {
    /// Whether this shard runs `key`.
    pub fn owns(&self, key: &RunKey) -> bool {
        let text = format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}{}",
            key.dataset, key.label, key.m, key.seed
        );
        (fnv1a(text.as_bytes()) % self.count as u64) as usize == self.index
    }

    /// The shard's results file beside the session: `NAME.shard-I-of-N.toml`.
    pub fn path(&self, session: &Path) -> PathBuf {
        let stem = session
            .file_stem()
            .map_or("session".into(), |s| s.to_string_lossy().into_owned());
        session.with_file_name(format!(
            "{stem}.shard-{}-of-{}.toml",
            self.index, self.count
        ))
    }
}

/// A shard file: which session and shard its results belong to, and the results.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardFile {
    pub schema_version: u32,
    /// The session's name.
    pub session: String,
    /// "I/N".
    pub shard: String,
    #[serde(default)]
    pub results: Vec<RunResult>,
}

impl ShardFile {
    pub fn new(session: &Session, shard: Shard) -> ShardFile {
        ShardFile {
            schema_version: SCHEMA_VERSION,
            session: session.name.clone(),
            shard: shard.to_string(),
            results: Vec::new(),
        }
    }

    pub fn read(path: &Path) -> Result<ShardFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::file(path, format!("cannot read the shard file: {e}")))?;
        let f: ShardFile =
            toml::from_str(&text).map_err(|e| Error::file(path, toml_error(&text, &e)))?;
        // shard files hold results only; version 1's read the same
        if !(1..=SCHEMA_VERSION).contains(&f.schema_version) {
            return Err(Error::file(
                path,
                format!(
                    "schema_version {} is not supported (this sgpw reads 1 to {SCHEMA_VERSION})",
                    f.schema_version
                ),
            ));
        }
        Ok(f)
    }

    /// Insert or replace a result.
    pub fn set_result(&mut self, result: RunResult) {
        match self.results.iter_mut().find(|r| r.key == result.key) {
            Some(slot) => *slot = result,
            None => self.results.push(result),
        }
    }

    /// Atomic save (temporary file, then rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = toml::to_string(self)
            .map_err(|e| Error::File(format!("cannot write the shard file: {e}")))?;
        atomic_write(path, &text)
    }
}

/// A result's numbers without its timing (runs repeated on other machines, or at
/// other loads, take other times but must give the same numbers).
fn same_outcome(a: &RunResult, b: &RunResult) -> bool {
    let untimed = |r: &RunResult| {
        let mut r = r.clone();
        r.train_seconds = 0.0;
        if let Some(m) = r.model.as_mut()
            && let Some(f) = m.fit.as_mut()
        {
            f.train_seconds = 0.0;
        }
        r
    };
    untimed(a) == untimed(b)
}

/// Fold shard files into the session at `path` (written atomically). A run with two
/// different finished results — in two shards, or in a shard and the session — is an
/// error naming it, and nothing is written. Returns the number of results taken in.
pub fn merge(path: &Path, shards: &[PathBuf]) -> Result<usize> {
    let mut session = Session::read(path)?;
    let mut incoming: BTreeMap<RunKey, (RunResult, PathBuf)> = BTreeMap::new();
    for shard in shards {
        let file = ShardFile::read(shard)?;
        if file.session != session.name {
            return Err(Error::file(
                shard,
                format!(
                    "holds results of session '{}', not of '{}'",
                    file.session, session.name
                ),
            ));
        }
        for r in file.results {
            let key = r.key.clone();
            let describe =
                |k: &RunKey| format!("{}/{} m={} seed={}", k.dataset, k.label, k.m, k.seed);
            if let Some((other, from)) = incoming.get(&key) {
                if other.status == Status::Done
                    && r.status == Status::Done
                    && !same_outcome(other, &r)
                {
                    return Err(Error::input(format!(
                        "run {} has two different results, in {} and {}; merge one of them",
                        describe(&key),
                        from.display(),
                        shard.display()
                    )));
                }
                if other.status == Status::Done {
                    continue;
                }
            }
            if let Some(old) = session.result(&key)
                && old.status == Status::Done
                && r.status == Status::Done
                && !same_outcome(old, &r)
            {
                return Err(Error::input(format!(
                    "run {} already has a different result in {}; the shard {} ran it again",
                    describe(&key),
                    path.display(),
                    shard.display()
                )));
            }
            incoming.insert(key, (r, shard.clone()));
        }
    }
    let count = incoming.len();
    for (_, (r, _)) in incoming {
        let keep_old = session
            .result(&r.key)
            .is_some_and(|old| old.status == Status::Done && r.status != Status::Done);
        if !keep_old {
            session.set_result(r);
        }
    }
    session.save(path)?;
    Ok(count)
}
