//! Session files (TOML): data sets, runs (method × m × seed) and their results,
//! shared by `sgpw run` and the terminal app. A saved session holds every trace and
//! fitted model, so it reopens with every chart drawn and nothing retrained.
//!
//! Paths are stored as written and resolved against the session file's folder.
//! Unknown keys and bad values are errors that name the line.

pub mod autosave;
pub mod report;
pub mod runner;
pub mod shard;

use crate::data::{Dataset, LoadSpec};
use crate::error::{Error, Result};
use crate::model_file::{atomic_write, toml_error};
pub use crate::results::{NlmlScale, RunKey, RunResult, Status};
pub use crate::run_spec::RunEntry;
use crate::run_spec::{DataShape, Naming, RunSpec};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Version 4 (this one): a run entry's settings have the defaults of [`RunEntry`] —
/// the ones of the command line and the app — a missing `noise_floor` included (the
/// default floor), and a missing `single_start` means the default second start from a
/// subset fit (docs/methods.md §0.4). Version 3 had the same defaults but fitted from one
/// start: its runs read as `single_start = true`. Version 2 records every run's `standardize` and `label` and the
/// scale of every stored NLML, and a run without `noise_floor` there has none. Version
/// 1 files have `standardize = false` and label = the method as defaults. Older files
/// are read with their own meaning made explicit (`noise_floor = 0` where they had
/// none, and so on), so they replay unchanged, and are written back as version 4
/// (`sgpw migrate` does it in place).
pub const SCHEMA_VERSION: u32 = 4;

/// A session: data sets, run entries and results. Read with [`Session::read`] /
/// [`Session::parse`] (which know schema versions 1 to 4) and written as version 4.
#[derive(Clone, Debug)]
pub struct Session {
    /// The version of the file it was read from ([`SCHEMA_VERSION`] for a new one);
    /// it is always written as [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The older version's defaults that reading made explicit on its run entries
    /// (`single_start = true`, …), each once; empty for a current file.
    pub pinned: Vec<&'static str>,
    pub name: String,
    /// What the session is for; kept when the file is rewritten (comments are not).
    pub description: Option<String>,
    pub datasets: Vec<Spanned<DatasetEntry>>,
    pub runs: Vec<Spanned<RunEntry>>,
    /// The line of each run entry in the file it was read from (None: added since).
    pub run_lines: Vec<Option<usize>>,
    pub results: Vec<RunResult>,
    /// The runs marked in the app (Space) for the evidence chart, kept across reopening;
    /// none in a file without the key.
    pub marked: Vec<RunKey>,
}

/// The file as written: version-dependent defaults are applied after reading.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionFile {
    #[allow(dead_code)] // read first, by VersionOnly
    schema_version: u32,
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    datasets: Vec<Spanned<DatasetEntry>>,
    #[serde(default)]
    runs: Vec<Spanned<RunEntry>>,
    #[serde(default)]
    results: Vec<RunResult>,
    #[serde(default)]
    marked: Vec<RunKey>,
}

/// Only the version, read first (any other key is left for [`SessionFile`]).
#[derive(Deserialize)]
struct VersionOnly {
    schema_version: u32,
}

/// What an older file left out of its run entries (read beside [`SessionFile`], any
/// other key ignored): the settings whose default was another before version 4.
#[derive(Deserialize)]
struct LegacyFile {
    #[serde(default)]
    runs: Vec<LegacyRun>,
}

#[derive(Deserialize)]
struct LegacyRun {
    #[serde(default)]
    standardize: Option<bool>,
    #[serde(default)]
    label: Option<String>,
}

/// How a session is written: version 4, every run's label explicit.
#[derive(Serialize)]
struct SessionOut<'a> {
    schema_version: u32,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: &'a Option<String>,
    datasets: &'a [Spanned<DatasetEntry>],
    runs: Vec<RunEntry>,
    #[serde(skip_serializing_if = "<[RunKey]>::is_empty")]
    marked: &'a [RunKey],
    results: &'a [RunResult],
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetEntry {
    pub name: String,
    pub train: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<PathBuf>,
    /// Fraction used for training when there is no test file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<f64>,
    /// Seed of the split's shuffle.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub split_seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop_missing: bool,
}

fn one() -> u64 {
    1
}
fn is_one(v: &u64) -> bool {
    *v == 1
}

impl RunEntry {
    /// The individual runs of this entry, by key.
    pub fn expand(&self) -> Vec<(RunKey, RunSpec)> {
        let mut out = Vec::new();
        let label = self.label();
        for &m in &self.m {
            for &seed in &self.seeds {
                let key = RunKey {
                    dataset: self.dataset.clone(),
                    label: label.clone(),
                    m,
                    seed,
                };
                out.push((key, self.spec(m, seed)));
            }
        }
        out
    }
}

/// A run entry of an older schema with that schema's meaning made explicit: version 1
/// had raw runs and label = the method without the keys, versions 1 and 2 no noise
/// floor without `noise_floor`, versions 1 to 3 one start. The label is settled first,
/// by the rule of its own version, so a result stored under it keeps its key.
/// Returns the settings it pinned that today's default would change (as keys, e.g.
/// "single_start = true").
fn legacy_defaults(entry: &mut RunEntry, old: &LegacyRun, version: u32) -> Vec<&'static str> {
    let mut pinned = Vec::new();
    if version == 1 && old.standardize.is_none() {
        entry.standardize = false;
        pinned.push("standardize = false");
    }
    if old.label.is_none() {
        entry.label = Some(if version == 1 {
            entry.method.clone()
        } else {
            // version 2 tagged only a floor above 0 other than the default
            let mut as_then = entry.clone();
            if version == 2 && as_then.options.noise_floor.is_some_and(|f| f <= 0.0) {
                as_then.options.noise_floor = None;
            }
            as_then.label()
        });
    }
    if version <= 2 && entry.options.noise_floor.is_none() {
        entry.options.noise_floor = Some(0.0);
        pinned.push("noise_floor = 0.0");
    }
    if crate::methods::get(&entry.method).is_ok_and(|m| m.second_start(&entry.options)) {
        entry.options.single_start = true;
        pinned.push("single_start = true");
    }
    pinned
}

/// Line (1-based) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Session {
    pub fn new(name: &str) -> Session {
        Session {
            schema_version: SCHEMA_VERSION,
            pinned: Vec::new(),
            name: name.into(),
            description: None,
            datasets: Vec::new(),
            runs: Vec::new(),
            run_lines: Vec::new(),
            results: Vec::new(),
            marked: Vec::new(),
        }
    }

    /// Read and validate a session file.
    pub fn read(path: &Path) -> Result<Session> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::file(path, format!("cannot read the session: {e}")))?;
        Self::parse(&text).map_err(|e| Error::file(path, e))
    }

    /// Read the session at `path`, or start an empty one named after the file if
    /// nothing is there yet (a `.toml` path in an existing folder); the flag says
    /// whether the file exists. `sgpw open` and the app's `o` both use this.
    pub fn open_or_new(path: &Path) -> Result<(Session, bool)> {
        if path.exists() {
            return Ok((Session::read(path)?, true));
        }
        let folder_ok = path
            .parent()
            .is_none_or(|p| p.as_os_str().is_empty() || p.is_dir());
        if path.extension().is_some_and(|e| e == "toml") && folder_ok {
            let name = path
                .file_stem()
                .map_or("untitled".into(), |s| s.to_string_lossy().into_owned());
            return Ok((Session::new(&name), false));
        }
        Err(Error::file(
            path,
            "no such session file (a new one must be a .toml file in an existing folder)",
        ))
    }

    /// Parse and validate (schema versions 1 to 4; an older file comes back as version 4
    /// with its defaults made explicit); errors name the line.
    pub fn parse(text: &str) -> std::result::Result<Session, String> {
        let version = toml::from_str::<VersionOnly>(text)
            .map_err(|e| toml_error(text, &e))?
            .schema_version;
        if !(1..=SCHEMA_VERSION).contains(&version) {
            return Err(format!(
                "schema_version {version} is not supported (this sgpw reads 1 to {SCHEMA_VERSION})"
            ));
        }
        let file: SessionFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        let mut runs = file.runs;
        let mut pinned = Vec::new();
        if version < SCHEMA_VERSION {
            let legacy: LegacyFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
            for (r, old) in runs.iter_mut().zip(legacy.runs) {
                for key in legacy_defaults(r.get_mut(), &old, version) {
                    if !pinned.contains(&key) {
                        pinned.push(key);
                    }
                }
            }
        }
        let run_lines = runs
            .iter()
            .map(|r| Some(line_of(text, r.span().start)))
            .collect();
        let mut s = Session {
            schema_version: version,
            pinned,
            name: file.name,
            description: file.description,
            datasets: file.datasets,
            runs,
            run_lines,
            results: file.results,
            marked: file.marked,
        };
        if version == 1 {
            s.mark_v1_scales();
        }
        for (i, d) in s.datasets.iter().enumerate() {
            let line = line_of(text, d.span().start);
            if s.datasets[..i]
                .iter()
                .any(|o| o.get_ref().name == d.get_ref().name)
            {
                return Err(format!(
                    "line {line}: a second data set named '{}'",
                    d.get_ref().name
                ));
            }
            if let Some(f) = d.get_ref().split.filter(|f| !(*f > 0.0 && *f < 1.0)) {
                return Err(format!("line {line}: split = {f} must be between 0 and 1"));
            }
        }
        for (r, line) in s.runs.iter().zip(&s.run_lines) {
            s.check_run(r.get_ref())
                .map_err(|e| format!("line {}: {e}", line.unwrap_or(0)))?;
        }
        s.check_keys().map_err(|e| e.to_string())?;
        Ok(s)
    }

    /// What reading an older file kept of its version's defaults, and how to drop them
    /// (`sgpw run` and the app say it); None for a current file, or an older one
    /// whose runs today's defaults would not change.
    pub fn pinned_note(&self) -> Option<String> {
        if self.pinned.is_empty() {
            return None;
        }
        Some(format!(
            "a schema {} session: its run entries keep that version's defaults ({}) where \
             they do not set them, so that their stored results stand; saving writes these \
             keys into the run entries (schema {SCHEMA_VERSION}, as `sgpw migrate` does). \
             Delete a key from a run entry to use today's default (docs/formats.md, Schema \
             versions)",
            self.schema_version,
            self.pinned.join(", ")
        ))
    }

    /// Where run entry `i` is, for messages: "line N" of the file, or its position.
    pub fn run_place(&self, i: usize) -> String {
        match self.run_lines.get(i).copied().flatten() {
            Some(line) => format!("line {line}"),
            None => format!("run entry {}", i + 1),
        }
    }

    /// The run entry a key belongs to.
    pub fn entry_of(&self, key: &RunKey) -> Option<usize> {
        self.runs.iter().position(|r| {
            let r = r.get_ref();
            r.dataset == key.dataset
                && r.m.contains(&key.m)
                && r.seeds.contains(&key.seed)
                && r.label() == key.label
        })
    }

    /// Two runs with one key (data set, label, m, seed) must be one setup: their
    /// results are stored by key. An error names both entries and what differs.
    pub fn check_keys(&self) -> Result<()> {
        let mut seen: std::collections::HashMap<RunKey, (usize, RunSpec)> = Default::default();
        for (i, r) in self.runs.iter().enumerate() {
            for (key, spec) in r.get_ref().expand() {
                match seen.get(&key) {
                    Some((j, other)) if !other.same_setup(&spec) => {
                        return Err(Error::input(format!(
                            "{} and {}: two runs {}/{} m={} seed {} with different settings \
                             ({}); give one of them another label",
                            self.run_place(*j),
                            self.run_place(i),
                            key.dataset,
                            key.label,
                            key.m,
                            key.seed,
                            other.differences(&spec).join(", ")
                        )));
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(key, (i, spec));
                    }
                }
            }
        }
        Ok(())
    }

    /// Check one run entry against the registry and the data sets (not the data).
    pub fn check_run(&self, r: &RunEntry) -> Result<()> {
        if self.dataset(&r.dataset).is_none() {
            return Err(Error::input(format!(
                "run refers to data set '{}', which is not in [[datasets]]",
                r.dataset
            )));
        }
        if r.m.is_empty() || r.seeds.is_empty() {
            return Err(Error::input("a run needs at least one m and one seed"));
        }
        for (_, spec) in r.expand() {
            // the data are not known before loading: everything but m ≤ n, dims ≤ D
            spec.check_for(DataShape::UNKNOWN, Naming::Keys)?;
        }
        Ok(())
    }

    pub fn dataset(&self, name: &str) -> Option<&DatasetEntry> {
        self.datasets
            .iter()
            .map(|d| d.get_ref())
            .find(|d| d.name == name)
    }

    /// Every run of the session.
    pub fn all_runs(&self) -> Vec<(RunKey, RunSpec)> {
        self.runs
            .iter()
            .flat_map(|r| r.get_ref().expand())
            .collect()
    }

    pub fn result(&self, key: &RunKey) -> Option<&RunResult> {
        self.results.iter().find(|r| &r.key == key)
    }

    /// Insert or replace a result.
    pub fn set_result(&mut self, result: RunResult) {
        match self.results.iter_mut().find(|r| r.key == result.key) {
            Some(slot) => *slot = result,
            None => self.results.push(result),
        }
    }

    /// Version 1 stored no NLML scale. A raw run's NLML is raw whenever it was
    /// written; a standardized run's is raw if the result has the constant predictor's
    /// MNLP (written only by the code that also moved NLMLs to the raw scale), and
    /// otherwise unknown: results written before that change are in model units, and
    /// `sgpw migrate --standardized-nlml` says which (see docs/formats.md).
    fn mark_v1_scales(&mut self) {
        let scales: Vec<Option<NlmlScale>> = self
            .results
            .iter()
            .map(|r| {
                if r.nlml.is_none() && r.trace.is_empty() {
                    return None;
                }
                let standardized = r
                    .model
                    .as_ref()
                    .map(|m| m.standardize.is_some())
                    .or_else(|| self.run_standardized(&r.key));
                match standardized {
                    Some(false) => Some(NlmlScale::Raw),
                    Some(true) if r.constant_mnlp.is_some() => Some(NlmlScale::Raw),
                    _ => None,
                }
            })
            .collect();
        for (r, scale) in self.results.iter_mut().zip(scales) {
            r.nlml_scale = scale;
        }
    }

    /// Results whose NLML has no known scale (standardized runs read from schema 1).
    pub fn unknown_scales(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.nlml_scale.is_none() && (r.nlml.is_some() || !r.trace.is_empty()))
            .count()
    }

    /// Declare the scale of the NLMLs whose scale is unknown (`sgpw migrate
    /// --standardized-nlml`), then put every model-unit NLML on the raw scale: NLML,
    /// trace and the model's `fit.nlml` + n·log(target sd) — the very sum a replay now
    /// computes, so the stored numbers equal a replay's. Returns how many results were
    /// converted; a model-unit result without its model (n, target sd) is an error.
    pub fn settle_scales(&mut self, unknown_are: NlmlScale) -> Result<usize> {
        let mut converted = 0;
        for r in &mut self.results {
            if r.nlml_scale.is_none() && (r.nlml.is_some() || !r.trace.is_empty()) {
                r.nlml_scale = Some(unknown_are);
            }
            if r.nlml_scale != Some(NlmlScale::Standardized) {
                continue;
            }
            let offset = r.raw_offset().ok_or_else(|| {
                Error::input(format!(
                    "result {}/{} m={} seed {}: its NLML is in model units and it has no \
                     stored model (fit.n_train and the target scale) to convert it",
                    r.key.dataset, r.key.label, r.key.m, r.key.seed
                ))
            })?;
            r.nlml = r.nlml.map(|v| v + offset);
            for v in &mut r.trace {
                *v += offset;
            }
            if let Some(fit) = r.model.as_mut().and_then(|m| m.fit.as_mut()) {
                fit.nlml += offset;
            }
            r.nlml_scale = Some(NlmlScale::Raw);
            converted += 1;
        }
        Ok(converted)
    }

    /// Whether the run entry of a key is standardized (None: no entry has the key).
    pub fn run_standardized(&self, key: &RunKey) -> Option<bool> {
        self.runs.iter().map(|r| r.get_ref()).find_map(|r| {
            (r.dataset == key.dataset
                && r.label() == key.label
                && r.m.contains(&key.m)
                && r.seeds.contains(&key.seed))
            .then_some(r.standardize)
        })
    }

    pub fn to_toml(&self) -> Result<String> {
        let runs = self
            .runs
            .iter()
            .map(|r| {
                let r = r.get_ref();
                RunEntry {
                    label: Some(r.label()),
                    ..r.clone()
                }
            })
            .collect();
        let out = SessionOut {
            schema_version: SCHEMA_VERSION,
            name: &self.name,
            description: &self.description,
            datasets: &self.datasets,
            runs,
            marked: &self.marked,
            results: &self.results,
        };
        toml::to_string(&out).map_err(|e| Error::File(format!("cannot write the session: {e}")))
    }

    /// Atomic save (temporary file, then rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        atomic_write(path, &self.to_toml()?)
    }
}

impl DatasetEntry {
    /// Load the data, resolving relative paths against `base` (the session's folder).
    pub fn load(&self, base: &Path) -> Result<Dataset> {
        crate::data::load(&self.load_spec(base))
    }

    /// What to load, relative paths resolved against `base` (the session's folder)
    /// without the `.` components a base of `.` adds (`./../data/x.csv` is shown, in
    /// errors and the app, as `../data/x.csv`). Lexical only: `a/..` is kept, since
    /// folding it would open another file where `a` is a symbolic link.
    pub fn load_spec(&self, base: &Path) -> LoadSpec {
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                let joined: PathBuf = base
                    .join(p)
                    .components()
                    .filter(|c| *c != std::path::Component::CurDir)
                    .collect();
                match joined.as_os_str().is_empty() {
                    true => PathBuf::from("."),
                    false => joined,
                }
            }
        };
        LoadSpec {
            train: resolve(&self.train),
            test: self.test.as_deref().map(resolve),
            split: self.split,
            seed: self.split_seed,
            target: self.target.clone(),
            features: self.features.clone(),
            drop_missing: self.drop_missing,
        }
    }
}

/// The folder relative paths in a session resolve against.
pub fn base_dir(session_path: &Path) -> PathBuf {
    session_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}
