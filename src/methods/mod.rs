//! The `Method` trait and the registry (name → method). Nothing else in the program
//! lists methods: the CLI, sessions, jobs and the terminal app all ask [`registry`].
//!
//! Every low-rank method is a feature family × an approximation ([`lowrank`]): the
//! family maps its parameters to (Kuf, Kuu, kdiag) and pulls the core's adjoints
//! back; the likelihood core knows only the approximation. Adding a method is a
//! family file (or a new pairing of an existing family) plus one line in [`registry`].

pub mod eigen;
pub mod exact;
pub mod greedy;
pub mod hyper;
pub mod interdomain;
pub mod kmeans;
pub mod lowrank;
pub mod nystrom;
pub mod online;
pub mod pca;
pub mod projected;
pub mod pseudo;
pub mod spectrum;
pub mod start;

use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::likelihood::Posterior;
use crate::model_file::{Hyper, ModelFile};
use crate::optim::Outcome;
use crate::run_context::RunContext;
use crate::run_spec::{GENERAL_OPTIONS, MethodOptions, RunSpec, flag};
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use std::ops::Deref;

/// The objective and its gradient with respect to the method's packed parameter vector.
#[derive(Clone, Debug)]
pub struct Objective {
    /// NLML, or the bound VFE and power EP minimise.
    pub nlml: f64,
    pub grad: Vec<f64>,
    /// Absolute jitter this evaluation needed.
    pub jitter: f64,
}

/// A method: its parameters, initialisation, objective and predictions.
///
/// The optimiser, jobs and app never know which method runs.
pub trait Method: Send + Sync {
    /// Registry name (`--method`).
    fn name(&self) -> &'static str;
    /// Other accepted names.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// One line for `--help` and the app.
    fn summary(&self) -> &'static str;
    /// What `m` counts for this method (shown next to every result).
    fn m_meaning(&self) -> &'static str {
        "inducing points"
    }
    /// What one step of the fit's progress (and of its evidence trace) counts:
    /// optimiser iterations, or for greedy the basis points added.
    fn progress_unit(&self) -> &'static str {
        "iteration"
    }
    /// Keys of [`MethodOptions`] this method reads besides the general ones; others
    /// are rejected when a spec is checked.
    fn options(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether the model has ARD lengthscales `[hyper] lengthscales` (every method
    /// but spgp-dr, whose projection carries the scales).
    fn uses_lengthscales(&self) -> bool {
        true
    }
    /// Which of the optional model tables of the SPGP extensions (`pseudo_noise`,
    /// `projection`, `pca`) the method's models may have; the others are an error.
    fn model_tables(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether the method has a size m at all (the exact GP has not).
    fn uses_m(&self) -> bool {
        true
    }
    /// The largest m on `n_train` training points (`usize::MAX` while n is unknown).
    fn max_m(&self, n_train: usize) -> usize {
        n_train
    }
    /// Checks of the method's own options beyond their types (run before any work).
    fn check_options(&self, _options: &MethodOptions) -> Result<()> {
        Ok(())
    }
    /// Whether the method's own initialisation draws from the run's seed with these
    /// options (pseudo-inputs at random training inputs, random frequencies, k-means
    /// centres). False where it is deterministic (the exact GP; PSDS's Hammersley
    /// points): then two seeds give the same result unless a general option draws
    /// from the seed ([`RunSpec::seed_uses`]). A new method is seed-dependent unless
    /// it says otherwise.
    fn init_uses_seed(&self, _options: &MethodOptions) -> bool {
        true
    }
    /// What the seed does in this method's initialisation, for `--help` and the app.
    fn seed_help(&self) -> &'static str {
        "the initialisation draws from the seed"
    }
    /// What the objective of a model is called ("NLML", "negative ELBO", …).
    fn objective_name(&self, _model: &ModelFile) -> &'static str {
        "NLML"
    }

    /// Initial parameters around the starting hyperparameters `hyper` (which
    /// `start::initial_hyper` chose: docs/methods.md §0 defaults or a subset fit).
    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile>;
    /// Check a model's tables (shapes, signs) for this method.
    fn check(&self, model: &ModelFile) -> Result<()>;
    /// The free parameters as one vector (positive ones as logarithms).
    fn pack(&self, model: &ModelFile) -> Vec<f64>;
    /// Write a packed vector back into a model.
    fn unpack(&self, theta: &[f64], model: &mut ModelFile);
    /// Objective and gradient in `pack` order.
    fn objective(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<Objective>;
    /// [`Method::objective`] with the gradient written into `grad` (resized), so that
    /// a caller evaluating again and again reuses one vector; returns the objective
    /// and the jitter. The low-rank methods allocate nothing here after their first
    /// evaluation with an `exec` (tests/allocations.rs).
    fn objective_into(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        let o = self.objective(model, data, exec)?;
        grad.clear();
        grad.extend_from_slice(&o.grad);
        Ok((o.nlml, o.jitter))
    }
    /// The arithmetic of one [`Method::objective`] on n training points with these
    /// threads and memory budget, by kind (`sgpw bench --roofline`); None where it has
    /// not been counted.
    fn work(
        &self,
        _model: &ModelFile,
        _n: usize,
        _exec: &Exec,
    ) -> Result<Option<crate::likelihood::Work>> {
        Ok(None)
    }
    /// The objective alone (defaults to the objective with its gradient).
    fn nlml(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<f64> {
        Ok(self.objective(model, data, exec)?.nlml)
    }
    /// The posterior needed for prediction, and (exact GP only) the inputs it is
    /// expressed in.
    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)>;
    /// K(features, X*) (m×t) and the prior variances k(x*,x*) at the model's inputs.
    /// `basis` is the exact GP's training inputs; low-rank methods ignore it.
    fn cross(
        &self,
        model: &ModelFile,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)>;
    /// Whether the posterior can be stored in a model file (not the exact GP's n×n one).
    fn stores_posterior(&self) -> bool {
        true
    }
    /// Mean and latent variance at inputs `x` (model units). The default is
    /// [`Method::cross`] with [`Posterior::predict`], whose variances are ≥ 0; the
    /// Nyström predictor overrides it and returns its variances as computed, negative
    /// ones included.
    fn predict(
        &self,
        model: &ModelFile,
        posterior: &Posterior,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let (kus, prior) = self.cross(model, basis, x, exec)?;
        Ok(posterior.predict(&kus, &prior, exec.par))
    }

    /// Fit: minimise the objective from `model`. Methods with staged schedules override it.
    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        hyper::fit_all(self, model, data, spec.iters, ctx)
    }
}

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

/// A run spec that was checked against its method (and, where known, the data):
/// the only kind fitting accepts, so a worker never sees an invalid spec.
#[derive(Clone)]
pub struct ValidRunSpec {
    checked: RunSpec,
    resolved: &'static dyn Method,
}

impl ValidRunSpec {
    pub fn method(&self) -> &'static dyn Method {
        self.resolved
    }

    pub fn spec(&self) -> &RunSpec {
        &self.checked
    }

    /// The same checked spec with another iteration budget (restarts' short fits).
    pub fn with_iters(&self, iters: usize) -> ValidRunSpec {
        let mut v = self.clone();
        v.checked.iters = iters;
        v
    }
}

impl Deref for ValidRunSpec {
    type Target = RunSpec;
    fn deref(&self) -> &RunSpec {
        &self.checked
    }
}

impl std::fmt::Debug for ValidRunSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.checked.fmt(f)
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

impl RunSpec {
    /// Check the spec against its method and `n_train` training points
    /// (`usize::MAX` when the data are not loaded yet, as when a session is read):
    /// the method exists, m is in its range, every option set is one the method
    /// reads, and the option values make sense. Errors name the flag or key.
    pub fn check(&self, n_train: usize) -> Result<ValidRunSpec> {
        let method = get(&self.method)?;
        self.options.check(n_train).map_err(Error::input)?;
        let n_fit = self.options.subset.unwrap_or(n_train);
        if method.uses_m() {
            if self.m == 0 {
                return Err(Error::input("m must be at least 1 (--m)"));
            }
            let max = method.max_m(n_fit);
            if self.m > max {
                let why = if max == n_fit {
                    format!("the training set ({n_fit} points)")
                } else {
                    format!("{}'s limit of {max} {}", method.name(), method.m_meaning())
                };
                return Err(Error::input(format!(
                    "m = {} (--m) is larger than {why}; choose m ≤ {max}",
                    self.m
                )));
            }
        }
        for key in self.options.set_keys() {
            if !GENERAL_OPTIONS.contains(&key.as_str()) && !method.options().contains(&key.as_str())
            {
                return Err(Error::input(format!(
                    "option {key} ({}) does not apply to method '{}'{}",
                    flag(&key),
                    method.name(),
                    if method.options().is_empty() {
                        String::new()
                    } else {
                        format!(" (it reads: {})", method.options().join(", "))
                    }
                )));
            }
        }
        method.check_options(&self.options)?;
        Ok(ValidRunSpec {
            checked: self.clone(),
            resolved: method,
        })
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
    use crate::run_spec::option_fields;

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
