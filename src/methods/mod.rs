//! The registry: every method by name, and the lookups that need it. Nothing else in
//! the program lists methods: the CLI, sessions, jobs and the terminal app all ask
//! [`registry`] or [`get`].
//!
//! The layers, from the bottom: [`method`] (the `Method` trait, which knows no method),
//! the shared machinery ([`hyper`], [`lowrank`]: feature family × approximation = one
//! low-rank method), the families and methods themselves, and this file above them.
//! Adding a low-rank method is a family file (or a new pairing of an existing family)
//! plus one line in [`registry`].

pub mod eigen;
pub mod exact;
pub mod greedy;
pub mod hyper;
pub mod interdomain;
pub mod kmeans;
pub mod lowrank;
pub mod method;
pub mod nystrom;
pub mod online;
pub mod pca;
pub mod projected;
pub mod pseudo;
pub mod spectrum;
pub mod start;

pub use method::{Method, Objective, ValidRunSpec};

use crate::error::{Error, Result};
use crate::model_file::ModelFile;
use crate::run_spec::RunSpec;

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
    pub fn check(&self, n_train: usize) -> Result<ValidRunSpec> {
        self.check_with(get(&self.method)?, n_train)
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
        uses
    }

    /// Whether the result of this run can depend on its seed ([`RunSpec::seed_uses`]).
    pub fn seed_dependent(&self) -> bool {
        !self.seed_uses().is_empty()
    }
}

impl ModelFile {
    /// Check a model (read from a file or written by a run) against its method: the
    /// method exists, the shared tables are consistent ([`ModelFile::check_hyper`])
    /// and the method's own tables have the right shapes. `predict`, `nlml`, `stream`
    /// and the predictor all call this before using a model. (Defined here, beside the
    /// registry, because the model format itself does not know the methods.)
    pub fn check(&self) -> Result<&'static dyn Method> {
        let method = get(&self.method)?;
        for (table, present) in [
            ("pseudo_noise", self.pseudo_noise.is_some()),
            ("projection", self.projection.is_some()),
            ("pca", self.pca.is_some()),
        ] {
            if present && !method.model_tables().contains(&table) {
                return Err(Error::input(format!(
                    "[{table}] does not apply to method '{}'{}",
                    self.method,
                    match table {
                        "pseudo_noise" => " (it is read by spgp-hs and spgp-dr --hetero)",
                        "projection" => " (it is read by spgp-dr)",
                        _ => " (it is read by pca-spgp)",
                    }
                )));
            }
        }
        self.check_hyper(method.uses_lengthscales())?;
        method.check(self)?;
        Ok(method)
    }
}

/// Read a model file and check it against its method. A parse error names its line;
/// an inconsistent table names the line of the table or key it concerns, where the
/// file has it.
pub fn read_model(path: &std::path::Path) -> Result<(ModelFile, &'static dyn Method)> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::file(path, format!("cannot read the model file: {e}")))?;
    let model = ModelFile::parse(&text).map_err(|e| Error::file(path, e))?;
    match model.check() {
        Ok(method) => Ok((model, method)),
        Err(e) => {
            let msg = e.to_string();
            Err(Error::file(
                path,
                match crate::model_file::line_of_message(&text, &msg) {
                    Some(line) => format!("line {line}: {msg}"),
                    None => msg,
                },
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_spec::{GENERAL_OPTIONS, MethodOptions, option_fields};

    /// Each method's option list names declared options only, and every declared
    /// option is read by some method (the declaration and the methods cannot drift).
    #[test]
    fn option_lists_match_the_declaration() {
        let declared: Vec<String> = option_fields().into_iter().map(|f| f.key).collect();
        for m in registry() {
            for key in m.options() {
                assert!(declared.iter().any(|d| d == key), "{}: {key}", m.name());
            }
        }
        for key in &declared {
            assert!(
                GENERAL_OPTIONS.contains(&key.as_str())
                    || registry()
                        .iter()
                        .any(|m| m.options().contains(&key.as_str())),
                "{key} is read by no method"
            );
        }
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for m in registry() {
            for n in std::iter::once(m.name()).chain(m.aliases().iter().copied()) {
                assert!(seen.insert(n), "{n} twice");
            }
        }
    }

    #[test]
    fn specs_are_checked_before_any_work() {
        let spec = |method: &str, m: usize, options: MethodOptions| RunSpec {
            method: method.into(),
            m,
            seed: 1,
            iters: 10,
            standardize: false,
            options,
        };
        assert!(spec("fitc", 10, Default::default()).check(100).is_ok());
        let e = spec("fitc", 101, Default::default())
            .check(100)
            .expect_err("m > n");
        assert!(e.to_string().contains("m = 101"), "{e}");
        let e = spec("ssgp", 5000, Default::default())
            .check(usize::MAX)
            .expect_err("spectral bound");
        assert!(e.to_string().contains("limit"), "{e}");
        let centres = MethodOptions {
            centres: Some(crate::run_spec::Centres::Subset),
            ..Default::default()
        };
        let e = spec("fitc", 10, centres)
            .check(100)
            .expect_err("not fitc's");
        assert!(e.to_string().contains("--centres"), "{e}");
        let alpha = MethodOptions {
            alpha: Some(0.0),
            ..Default::default()
        };
        assert!(spec("pep", 10, alpha).check(100).is_err());
    }
}
