//! The registry: every method by name, and the lookups that need it. Nothing else in
//! the program lists methods: the CLI, sessions, jobs and the terminal app all ask
//! [`registry`] or [`get`].
//!
//! The layers, from the bottom: [`method`] (the `Method` trait, which knows no method),
//! the shared machinery ([`hyper`], [`lowrank`]: feature family × approximation = one
//! low-rank method), the families and methods themselves, and this file above them.
//! Adding a low-rank method is a family file (or a new pairing of an existing family)
//! plus one line in [`registry`].

pub mod cost;
pub mod eigen;
pub mod exact;
pub mod greedy;
pub mod hyper;
pub mod inducing;
pub mod interdomain;
pub mod kmeans;
pub mod lowrank;
pub mod method;
pub mod nystrom;
pub mod online;
pub mod pca;
pub mod projected;
pub mod pseudo;
pub mod rvm;
pub mod shared_rows;
pub mod sparse_bayes;
pub mod spectrum;
pub mod start;
pub mod svgp;

pub use method::{MarkerSize, Markers, Method, Objective, RowSource, TraceMarks, ValidRunSpec};

use crate::error::{Error, Location, Result};
use crate::model_file::ModelFile;
use crate::run_spec::{DataShape, Naming, RunSpec};

/// Every method, in the order they are listed to users.
pub fn registry() -> &'static [&'static dyn Method] {
    &[
        &exact::Exact,
        &pseudo::FITC,
        &pseudo::VFE,
        &pseudo::DTC,
        &pseudo::PEP,
        &pseudo::SPGP_HS,
        &projected::SPGP_DR,
        &pca::PCA_SPGP,
        &interdomain::FIFGP,
        &interdomain::TFIFGP,
        &interdomain::SMGP,
        &spectrum::PSDS,
        &spectrum::SSGP,
        &eigen::EIGENGP,
        &eigen::EIGENGP_JOINT,
        &eigen::EIGENGP_PLUS,
        &nystrom::NYSTROM,
        &nystrom::NYSTROM_OPT,
        &greedy::GREEDY,
        &svgp::SVGP,
        &rvm::RVM,
    ]
}

/// Look a method up by name or alias.
pub fn get(name: &str) -> Result<&'static dyn Method> {
    let key = name.trim().to_ascii_lowercase();
    registry()
        .iter()
        .copied()
        .find(|m| m.name() == key || m.aliases().contains(&key.as_str()))
        .ok_or_else(|| {
            let names: Vec<&str> = registry().iter().map(|m| m.name()).collect();
            Error::input(format!(
                "unknown method '{name}'; choose one of: {}",
                names.join(", ")
            ))
        })
}

/// Check the spec against its method (looked up by name); see [`RunSpec::check_with`].
impl RunSpec {
    /// As the command line checks it: `n_train` points (`usize::MAX`: not known yet),
    /// messages naming the flags.
    pub fn check(&self, n_train: usize) -> Result<ValidRunSpec> {
        self.check_for(DataShape::points(n_train), Naming::Flags)
    }

    /// Against the data's shape, messages naming the settings as `naming` says (a
    /// session's and the app's by their keys).
    pub fn check_for(&self, data: DataShape, naming: Naming) -> Result<ValidRunSpec> {
        self.check_with(get(&self.method)?, data, naming)
    }
}

/// What draws from a run's seed, for the app and `report`: the method's own
/// initialisation and the general options that sample (a subset, the subset fit of the
/// starting hyperparameters, the validation split, the restarts' starts). Empty: the
/// result cannot depend on the seed, so runs differing only in their seed are repeats
/// of one computation, not independent draws. (A session's data-set split has its own
/// `split_seed`; `sgpw fit --split` shuffles with the run's seed as well.)
impl RunSpec {
    pub fn seed_uses(&self) -> Vec<&'static str> {
        let o = &self.options;
        let mut uses = Vec::new();
        // an unknown method is assumed to use it
        if get(&self.method).ok().is_none_or(|m| m.init_uses_seed(o)) {
            uses.push("initialisation");
        }
        if o.subset.is_some() {
            uses.push("subset");
        }
        if o.init_lengthscales_from_subset.is_some() {
            uses.push("init_lengthscales_from_subset");
        }
        if o.validation.is_some() {
            uses.push("validation");
        }
        if o.restarts.is_some_and(|k| k > 1) {
            uses.push("restarts");
        }
        if self.runs_second_start() {
            uses.push("second start");
        }
        uses
    }

    /// Whether the fit runs a second time from σ0², ℓ, σ² of a full GP fitted on a
    /// subset and keeps the lower objective (docs/methods.md §0.4): by default, for the
    /// methods that fit those by L-BFGS ([`Method::second_start`]); not with
    /// `single_start`, nor where the run chose its start itself
    /// (`init_lengthscales_from_subset`, `hyper_from_subset`), nor with `validation`,
    /// whose scores follow one fit. A kernel expression's subset fit is the exact GP with
    /// the composed kernel, its starts scalings of the parts' own values.
    pub fn runs_second_start(&self) -> bool {
        let o = &self.options;
        !o.single_start
            && o.validation.is_none()
            && o.init_lengthscales_from_subset.is_none()
            && o.hyper_from_subset.is_none()
            && get(&self.method).is_ok_and(|m| m.second_start(o))
    }

    /// Whether the result of this run can depend on its seed ([`RunSpec::seed_uses`]).
    pub fn seed_dependent(&self) -> bool {
        !self.seed_uses().is_empty()
    }
}

impl ModelFile {
    /// Check a model (read from a file or written by a run) against its method: the
    /// method exists, every table of its own is one the method reads (else the error
    /// names the methods that do), the shared part is consistent and the method's own
    /// tables have the right shapes ([`method::check_model`]). `predict`, `nlml`,
    /// `stream` and the predictor all call this before using a model. Errors carry
    /// where in the file they are ([`Error::location`]).
    pub fn check(&self) -> Result<&'static dyn Method> {
        let method = get(&self.method).map_err(|e| Error::at(Location::key("method"), e))?;
        if let Some(key) = self
            .tables
            .keys()
            .find(|k| !method.model_tables().contains(&k.as_str()))
        {
            let readers: Vec<&str> = registry()
                .iter()
                .filter(|m| m.model_tables().contains(&key.as_str()))
                .map(|m| m.name())
                .collect();
            let what = if self.tables[key].is_table() {
                format!("[{key}]")
            } else {
                key.clone()
            };
            return Err(Error::at(
                Location::key(key),
                if readers.is_empty() {
                    format!(
                        "{what} is not part of any method's model (misspelt?); a '{}' model \
                         has {}",
                        self.method,
                        if method.model_tables().is_empty() {
                            "only the shared tables".to_string()
                        } else {
                            format!("these of its own: {}", method.model_tables().join(", "))
                        }
                    )
                } else {
                    format!(
                        "{what} does not apply to method '{}' (it is read by {})",
                        self.method,
                        readers.join(", ")
                    )
                },
            ));
        }
        method::check_model(method, self)?;
        Ok(method)
    }
}

/// Read a model file and check it against its method. A parse error names its line;
/// a check error names the line of the key, table or row it is about.
pub fn read_model(path: &std::path::Path) -> Result<(ModelFile, &'static dyn Method)> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::file(path, format!("cannot read the model file: {e}")))?;
    let model = ModelFile::parse(&text).map_err(|e| Error::file(path, e))?;
    match model.check() {
        Ok(method) => Ok((model, method)),
        Err(e) => {
            let line = e
                .location()
                .and_then(|at| crate::model_file::line_of(&text, at));
            Err(Error::file(
                path,
                match line {
                    Some(line) => format!("line {line}: {e}"),
                    None => e.to_string(),
                },
            ))
        }
    }
}
