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
use crate::run_spec::{MethodOptions, RunSpec};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Version 2 (this one) records every run's `standardize` and `label` explicitly and
/// the scale of every stored NLML; a missing `standardize` means true (standardized
/// inputs and targets are the default for new runs) and a missing label the run's
/// [`RunSpec::default_label`]. Version 1 files are read with version 1's defaults
/// (`standardize = false`, label = the method) and written back as version 2 with those
/// made explicit, so they replay unchanged.
pub const SCHEMA_VERSION: u32 = 2;

/// A session: data sets, run entries and results. Read with [`Session::read`] /
/// [`Session::parse`] (which know schema versions 1 and 2) and written as version 2.
#[derive(Clone, Debug)]
pub struct Session {
    pub schema_version: u32,
    pub name: String,
    /// What the session is for; kept when the file is rewritten (comments are not).
    pub description: Option<String>,
    pub datasets: Vec<Spanned<DatasetEntry>>,
    pub runs: Vec<Spanned<RunEntry>>,
    pub results: Vec<RunResult>,
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
    runs: Vec<Spanned<RunEntryFile>>,
    #[serde(default)]
    results: Vec<RunResult>,
}

/// Only the version, read first (any other key is left for [`SessionFile`]).
#[derive(Deserialize)]
struct VersionOnly {
    schema_version: u32,
}

/// A run entry as written (see [`RunEntry`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunEntryFile {
    dataset: String,
    method: String,
    #[serde(default)]
    label: Option<String>,
    m: Vec<usize>,
    #[serde(default = "default_seeds")]
    seeds: Vec<u64>,
    #[serde(default = "default_iters")]
    iterations: usize,
    #[serde(default)]
    standardize: Option<bool>,
    #[serde(default)]
    options: MethodOptions,
}

/// How a session is written: version 2, every run's label and standardize explicit.
#[derive(Serialize)]
struct SessionOut<'a> {
    schema_version: u32,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: &'a Option<String>,
    datasets: &'a [Spanned<DatasetEntry>],
    runs: Vec<RunEntryOut<'a>>,
    results: &'a [RunResult],
}

#[derive(Serialize)]
struct RunEntryOut<'a> {
    dataset: &'a str,
    method: &'a str,
    label: String,
    m: &'a [usize],
    seeds: &'a [u64],
    iterations: usize,
    standardize: bool,
    #[serde(skip_serializing_if = "is_default_options")]
    options: &'a MethodOptions,
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
fn default_iters() -> usize {
    500
}

/// A group of runs: one per (m, seed).
#[derive(Clone, Debug, PartialEq)]
pub struct RunEntry {
    pub dataset: String,
    pub method: String,
    /// Name shown for these runs; None: [`RunSpec::default_label`] (the method and a
    /// tag for each setting that changes the meaning of its numbers, e.g. `fitc-std`).
    /// Files always carry it explicitly.
    pub label: Option<String>,
    pub m: Vec<usize>,
    pub seeds: Vec<u64>,
    pub iterations: usize,
    /// Standardized inputs and targets (the default for new runs; `--raw` and
    /// `standardize = false` opt out).
    pub standardize: bool,
    pub options: MethodOptions,
}

fn default_seeds() -> Vec<u64> {
    vec![1]
}
fn is_default_options(o: &MethodOptions) -> bool {
    *o == MethodOptions::default()
}

impl RunEntry {
    /// The label, or the default one of its setup.
    pub fn label(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => self.spec(0, 0).default_label(),
        }
    }

    /// The spec of one of its runs.
    pub fn spec(&self, m: usize, seed: u64) -> RunSpec {
        RunSpec {
            method: self.method.clone(),
            m,
            seed,
            iters: self.iterations,
            standardize: self.standardize,
            options: self.options.clone(),
        }
    }

    /// The individual runs of this entry.
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

/// Line (1-based) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Session {
    pub fn new(name: &str) -> Session {
        Session {
            schema_version: SCHEMA_VERSION,
            name: name.into(),
            description: None,
            datasets: Vec::new(),
            runs: Vec::new(),
            results: Vec::new(),
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

    /// Parse and validate (schema version 1 or 2; a version 1 file comes back as
    /// version 2 with its defaults made explicit); errors name the line.
    pub fn parse(text: &str) -> std::result::Result<Session, String> {
        let version = toml::from_str::<VersionOnly>(text)
            .map_err(|e| toml_error(text, &e))?
            .schema_version;
        if !(1..=SCHEMA_VERSION).contains(&version) {
            return Err(format!(
                "schema_version {version} is not supported (this sgpw reads 1 and {SCHEMA_VERSION})"
            ));
        }
        let file: SessionFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        let v1 = version == 1;
        let runs: Vec<Spanned<RunEntry>> = file
            .runs
            .into_iter()
            .map(|r| {
                let span = r.span();
                let f = r.into_inner();
                let mut entry = RunEntry {
                    dataset: f.dataset,
                    method: f.method,
                    label: f.label,
                    m: f.m,
                    seeds: f.seeds,
                    iterations: f.iterations,
                    // version 1: raw unless asked; version 2: standardized unless not
                    standardize: f.standardize.unwrap_or(!v1),
                    options: f.options,
                };
                if entry.label.is_none() {
                    entry.label = Some(if v1 {
                        entry.method.clone()
                    } else {
                        entry.label()
                    });
                }
                Spanned::new(span, entry)
            })
            .collect();
        let mut s = Session {
            schema_version: SCHEMA_VERSION,
            name: file.name,
            description: file.description,
            datasets: file.datasets,
            runs,
            results: file.results,
        };
        if v1 {
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
        for r in &s.runs {
            let line = line_of(text, r.span().start);
            s.check_run(r.get_ref())
                .map_err(|e| format!("line {line}: {e}"))?;
        }
        Ok(s)
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
            // n is not known before loading: check everything but m ≤ n here.
            spec.check(usize::MAX)?;
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
    /// `sgpw migrate --standardized-nlml` says which (see the README).
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
                RunEntryOut {
                    dataset: &r.dataset,
                    method: &r.method,
                    label: r.label(),
                    m: &r.m,
                    seeds: &r.seeds,
                    iterations: r.iterations,
                    standardize: r.standardize,
                    options: &r.options,
                }
            })
            .collect();
        let out = SessionOut {
            schema_version: SCHEMA_VERSION,
            name: &self.name,
            description: &self.description,
            datasets: &self.datasets,
            runs,
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

    /// What to load, relative paths resolved against `base` (the session's folder).
    pub fn load_spec(&self, base: &Path) -> LoadSpec {
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
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

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
schema_version = 1
name = "t"

[[datasets]]
name = "sinc"
train = "../datasets/sinc_train.csv"
test = "../datasets/sinc_test.csv"

[[runs]]
dataset = "sinc"
method = "fitc"
m = [5, 10]
seeds = [1, 2]
iterations = 50
"#;

    #[test]
    fn parses_expands_and_round_trips() {
        let s = Session::parse(EXAMPLE).expect("parses");
        let runs = s.all_runs();
        assert_eq!(runs.len(), 4);
        assert_eq!(
            runs[3].0,
            RunKey {
                dataset: "sinc".into(),
                label: "fitc".into(),
                m: 10,
                seed: 2
            }
        );
        let again = Session::parse(&s.to_toml().expect("writes")).expect("reparses");
        assert_eq!(again.all_runs(), runs);
    }

    #[test]
    fn bad_values_name_their_line() {
        let bad = EXAMPLE.replace("method = \"fitc\"", "method = \"fitcc\"");
        let e = Session::parse(&bad).expect_err("unknown method");
        assert!(
            e.starts_with("line 10:") && e.contains("unknown method 'fitcc'"),
            "{e}"
        );
        let bad = EXAMPLE.replace("iterations = 50", "iterations = 50\nlearning_rate = 3");
        let e = Session::parse(&bad).expect_err("unknown key");
        assert!(e.contains("line 16") && e.contains("learning_rate"), "{e}");
        let bad = EXAMPLE.replace("dataset = \"sinc\"", "dataset = \"nope\"");
        assert!(
            Session::parse(&bad)
                .expect_err("no such data set")
                .contains("'nope'")
        );
        let bad = EXAMPLE.replace("m = [5, 10]", "m = [0]");
        assert!(
            Session::parse(&bad)
                .expect_err("m = 0")
                .contains("m must be at least 1")
        );
        let bad = EXAMPLE.replace("schema_version = 1", "schema_version = 7");
        assert!(
            Session::parse(&bad)
                .expect_err("version")
                .contains("schema_version 7")
        );
    }
}
