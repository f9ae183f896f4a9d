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
pub use crate::results::{RunKey, RunResult, Status};
use crate::run_spec::{MethodOptions, RunSpec};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use toml::Spanned;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    pub schema_version: u32,
    pub name: String,
    /// What the session is for; kept when the file is rewritten (comments are not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub datasets: Vec<Spanned<DatasetEntry>>,
    #[serde(default)]
    pub runs: Vec<Spanned<RunEntry>>,
    #[serde(default)]
    pub results: Vec<RunResult>,
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunEntry {
    pub dataset: String,
    pub method: String,
    /// Name shown for these runs (default: the method); tells apart two entries of
    /// one method with different options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub m: Vec<usize>,
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    #[serde(default = "default_iters")]
    pub iterations: usize,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub standardize: bool,
    #[serde(default, skip_serializing_if = "is_default_options")]
    pub options: MethodOptions,
}

fn default_seeds() -> Vec<u64> {
    vec![1]
}
fn is_default_options(o: &MethodOptions) -> bool {
    *o == MethodOptions::default()
}

impl RunEntry {
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.method)
    }

    /// The individual runs of this entry.
    pub fn expand(&self) -> Vec<(RunKey, RunSpec)> {
        let mut out = Vec::new();
        for &m in &self.m {
            for &seed in &self.seeds {
                let key = RunKey {
                    dataset: self.dataset.clone(),
                    label: self.label().to_string(),
                    m,
                    seed,
                };
                let spec = RunSpec {
                    method: self.method.clone(),
                    m,
                    seed,
                    iters: self.iterations,
                    standardize: self.standardize,
                    options: self.options.clone(),
                };
                out.push((key, spec));
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

    /// Parse and validate; errors name the line.
    pub fn parse(text: &str) -> std::result::Result<Session, String> {
        let s: Session = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        if s.schema_version != SCHEMA_VERSION {
            return Err(format!(
                "schema_version {} is not supported (this sgpw reads {SCHEMA_VERSION})",
                s.schema_version
            ));
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

    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| Error::File(format!("cannot write the session: {e}")))
    }

    /// Atomic save (temporary file, then rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        atomic_write(path, &self.to_toml()?)
    }
}

impl DatasetEntry {
    /// Load the data, resolving relative paths against `base` (the session's folder).
    pub fn load(&self, base: &Path) -> Result<Dataset> {
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            }
        };
        crate::data::load(&LoadSpec {
            train: resolve(&self.train),
            test: self.test.as_deref().map(resolve),
            split: self.split,
            seed: self.split_seed,
            target: self.target.clone(),
            features: self.features.clone(),
            drop_missing: self.drop_missing,
        })
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
