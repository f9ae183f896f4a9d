//! Model files (TOML): the parameters of a fitted or hand-written model, the
//! transformation of its inputs and targets, and optionally its cached posterior.
//! The same tables are stored per result in session files.
//!
//! Every method reads and writes its parameters here, in physical units (variances,
//! lengthscales, absolute frequencies); the optimiser's log-space vector is private
//! to each method.

use crate::collapsed::Posterior;
use crate::error::{Error, Location, Result, Step};
use crate::kernel::{ComposedKernel, KernelKind, ModelKernel};
use crate::likelihoods::{Gaussian, Likelihood, LikelihoodKind, LikelihoodTable};
use crate::run_spec::ApproxKind;
use nalgebra::DMatrix;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A model: the part every method shares, and the method's own tables kept as they are
/// (each family declares, reads, writes and checks its own: [`ModelTable`]).
///
/// Not `deny_unknown_fields`: a key the shared part does not know goes to `tables`, and
/// the check against the method (`ModelFile::check` in the registry) rejects any that
/// the method does not read, naming the methods that do.
///
/// Written and read through serde's derived code (`remote = "Self"`) with one step
/// around it: a model whose likelihood is not Gaussian has no noise variance, so its
/// file has no `[hyper] noise_variance` ([`ModelFile::hold_unused_noise`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ModelFile {
    pub method: String,
    /// Subtracted from y before fitting, added back to predictions (original units).
    #[serde(default)]
    pub target_mean: f64,
    /// Absolute jitter added to Kuu's diagonal; absent = the policy of docs/methods.md §1.3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<f64>,
    /// The likelihood approximation, where the method offers a choice (inter-domain
    /// methods: fitc when absent); fitc, vfe, dtc and pep imply theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approx: Option<ApproxKind>,
    /// Power EP's α in (0, 1] (method pep, or approx = "pep").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// σ² is fitted as floor + e^θ, so it never goes below this (model units); absent
    /// = no floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<f64>,
    /// The parameter blocks the fit held fixed (`--fix`; `crate::params`), at the values
    /// the file gives; absent = none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed: Vec<String>,
    /// Input columns the model was fitted on, in order (used to read prediction inputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<String>>,
    /// The target column the model was fitted to (shown by `fit`, `report`, Python).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standardize: Option<Standardize>,
    /// A kernel built from parts (`[kernel]`: inputs, expression with every value) in
    /// place of `[hyper]`'s, whose σ0² is then the start's variance, and no lengthscales.
    #[serde(default, rename = "kernel", skip_serializing_if = "Option::is_none")]
    pub composed: Option<ComposedKernel>,
    pub hyper: Hyper,
    /// The likelihood when it is not Gaussian (`[likelihood]`); absent: y = f + N(0, σ²)
    /// with σ² = `[hyper] noise_variance`, as in every model written before there was a
    /// choice. With another likelihood the file has no `noise_variance` (one an earlier
    /// file gives is read and dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likelihood: Option<LikelihoodTable>,
    /// The method's own tables and keys (`[inducing]`, `[spectral]`, `input_mean`, …) in
    /// the order the file or the family gave them. Read and written as [`ModelTable`]s
    /// by the family that owns them; this file knows none of them.
    #[serde(flatten)]
    pub tables: toml::Table,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posterior: Option<Posterior>,
    /// What the fit reported (informational; ignored when reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitInfo>,
}

/// A table (or top-level key) a method keeps in its models beside the shared ones,
/// declared by the family that owns it: its name in the file and its typed contents,
/// read and written with serde.
pub trait ModelTable: Serialize + DeserializeOwned {
    /// Its key in the model file (`inducing` for `[inducing]`).
    const NAME: &'static str;
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hyper {
    /// The kernel (`se` when absent, as in every model written before there was a
    /// choice).
    #[serde(default, skip_serializing_if = "KernelKind::is_se")]
    pub kernel: KernelKind,
    /// σ0²
    pub signal_variance: f64,
    /// ℓ_d, one per input column (per principal component for pca-spgp). Absent for
    /// spgp-dr, whose projection carries the scales.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lengthscales: Vec<f64>,
    /// σ² of the Gaussian likelihood. Absent from the file of a model with another
    /// likelihood (`NaN` while reading, then [`ModelFile::hold_unused_noise`]'s value);
    /// a Gaussian model without it is refused when read.
    #[serde(default = "absent_noise", skip_serializing_if = "is_absent")]
    pub noise_variance: f64,
    /// rq's shape α (present exactly when the kernel is rq).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rq_alpha: Option<f64>,
}

/// What `[hyper] noise_variance` reads as while a file is read when the key is absent.
fn absent_noise() -> f64 {
    f64::NAN
}

fn is_absent(v: &f64) -> bool {
    v.is_nan()
}

impl Serialize for ModelFile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        if self.likelihood.is_none() {
            return ModelFile::serialize(self, s);
        }
        // the same model with σ² written as absent
        let mut without = self.clone();
        without.hyper.noise_variance = absent_noise();
        ModelFile::serialize(&without, s)
    }
}

impl<'de> Deserialize<'de> for ModelFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut model = ModelFile::deserialize(d)?;
        if model.likelihood.is_none() && model.hyper.noise_variance.is_nan() {
            return Err(serde::de::Error::custom(
                "[hyper] noise_variance is missing: a model with the Gaussian likelihood (no \
                 [likelihood] table) needs its noise variance σ², e.g. noise_variance = 0.1",
            ));
        }
        model.hold_unused_noise();
        Ok(model)
    }
}

impl Hyper {
    /// SE hyperparameters (what every model had before there was a kernel choice).
    pub fn se(signal_variance: f64, lengthscales: Vec<f64>, noise_variance: f64) -> Hyper {
        Hyper {
            kernel: KernelKind::Se,
            signal_variance,
            lengthscales,
            noise_variance,
            rq_alpha: None,
        }
    }

    /// The kernel these hyperparameters describe with the lengthscales `lengthscales`
    /// (rq at its default α when the model has none): the one constructor of a model's
    /// kernel, which [`Hyper::kernel`], [`Hyper::kernel_in`] and spgp-dr (unit
    /// lengthscales on its projected space) call.
    pub fn kernel_with(&self, lengthscales: Vec<f64>) -> ModelKernel {
        ModelKernel::new(
            self.kernel,
            self.signal_variance,
            lengthscales,
            self.rq_alpha.unwrap_or(crate::kernel::DEFAULT_RQ_ALPHA),
        )
    }

    /// The kernel these hyperparameters describe.
    pub fn kernel(&self) -> ModelKernel {
        self.kernel_with(self.lengthscales.clone())
    }

    /// [`Hyper::kernel`] with its lengthscales in memory from `scratch` (give them back
    /// with [`ModelKernel::recycle`]): for a kernel built on every evaluation.
    pub fn kernel_in(&self, scratch: &crate::scratch::Scratch) -> ModelKernel {
        let mut lengthscales = scratch.take(self.lengthscales.len());
        lengthscales.copy_from_slice(&self.lengthscales);
        self.kernel_with(lengthscales)
    }

    /// The same hyperparameters with the kernel `kind` (rq starts at its default α).
    pub fn with_kernel(mut self, kind: KernelKind) -> Hyper {
        self.kernel = kind;
        self.rq_alpha = (kind == KernelKind::Rq)
            .then(|| self.rq_alpha.unwrap_or(crate::kernel::DEFAULT_RQ_ALPHA));
        self
    }
}

/// A fit whose signal variance ended below this fraction of its noise variance has
/// collapsed to the constant predictor: its predictive mean varies by less than a
/// thirtieth of the noise's standard deviation, whatever the inputs (docs/methods.md §0.4).
pub const COLLAPSE_RATIO: f64 = 1e-3;

/// A fit whose noise variance σ² ended below this fraction of the training targets'
/// variance treats the targets as nearly noiseless: right for noiseless data, and a
/// known failure of FITC otherwise (docs/methods.md §0.4), which `fit` notes.
pub const NOISE_COLLAPSE_RATIO: f64 = 1e-4;

/// A Bernoulli model's σ0² at or above this has left the range where the latent scale
/// means anything: the probit link is saturated beyond |f| ≈ 8, under a hundredth of the
/// latent standard deviation here.
pub const UNBOUNDED_LATENT_VARIANCE: f64 = 1e6;

/// What to try after a fit that is still collapsed, in the words of the command line: by
/// then (unless `--no-collapse-restart`) it has been restarted from a full GP fitted on
/// 1000 points, so the advice is a larger subset or FITC, whose diagonal correction keeps
/// it out of the basin (docs/results/starts.md).
pub const COLLAPSE_ADVICE: &str = "the targets may hold no signal this kernel can find; try \
     --method fitc, or a start fitted on more training points (--init-lengthscales-from-subset \
     N with N above 1000)";

impl Hyper {
    /// σ0²/σ² when it is below [`COLLAPSE_RATIO`]: the fit explains the targets as
    /// noise around their mean (the all-noise basin of VFE and power EP).
    pub fn collapsed(&self) -> Option<f64> {
        let ratio = self.signal_variance / self.noise_variance;
        (ratio < COLLAPSE_RATIO).then_some(ratio)
    }

    /// The flag of a collapsed fit in a sentence, with what to try; None if it is not.
    pub fn collapse_note(&self) -> Option<String> {
        self.collapsed().map(|r| {
            format!(
                "collapsed to a constant predictor: the signal variance is {r:.1e} of the \
                 noise variance; {COLLAPSE_ADVICE}"
            )
        })
    }
}

/// `--standardize`: the model sees (x − input_mean_raw)/input_scale and y/target_scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Standardize {
    pub input_center: Vec<f64>,
    pub input_scale: Vec<f64>,
    pub target_scale: f64,
}

impl Standardize {
    /// Its scales, as the kernel's unit conversion reads them.
    pub fn scales(&self) -> crate::kernel::Scales<'_> {
        crate::kernel::Scales {
            centres: &self.input_center,
            inputs: &self.input_scale,
            target: self.target_scale,
        }
    }
}

/// Something in a model that holds one value per input (a key's values, a table's row
/// length): the inputs' number D is what they agree on.
#[derive(Clone, Debug, PartialEq)]
pub struct Witness {
    pub at: Location,
    /// How it reads in a message ("[hyper] lengthscales", "[inducing] points rows").
    pub what: String,
    pub count: usize,
}

impl Witness {
    pub fn new(at: Location, what: impl Into<String>, count: usize) -> Witness {
        Witness {
            at,
            what: what.into(),
            count,
        }
    }

    /// The row length of a matrix table `[table] key` (its first row), if it has rows.
    pub fn rows(model: &ModelFile, table: &str, key: &str) -> Option<Witness> {
        let first = model.tables.get(table)?.get(key)?.as_array()?.first()?;
        Some(Witness::new(
            Location::key(table).then(key).index(0),
            format!("[{table}] {key} rows"),
            first.as_array()?.len(),
        ))
    }

    /// The length of a list `[table] key` (or a top-level `key` when `table` is empty).
    pub fn list(model: &ModelFile, table: &str, key: &str) -> Option<Witness> {
        let (value, at, what) = if table.is_empty() {
            (model.tables.get(key)?, Location::key(key), key.to_string())
        } else {
            (
                model.tables.get(table)?.get(key)?,
                Location::key(table).then(key),
                format!("[{table}] {key}"),
            )
        };
        Some(Witness::new(at, what, value.as_array()?.len()))
    }

    /// `[hyper] lengthscales`, for methods whose lengthscales are one per input.
    pub fn lengthscales(model: &ModelFile) -> Witness {
        Witness::new(
            Location::key("hyper").then("lengthscales"),
            "[hyper] lengthscales",
            model.kernel_dim(),
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitInfo {
    pub nlml: f64,
    /// Absolute jitter the final evaluation needed.
    pub jitter_used: f64,
    pub iterations: usize,
    pub train_seconds: f64,
    pub n_train: usize,
    /// Set when the first fit collapsed to the constant predictor and was run again from
    /// a start fitted on a subset (`--no-collapse-restart` turns that off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapse_restart: Option<CollapseRestart>,
    /// Set when the fit ran a second time from a start fitted on a subset (the default;
    /// `--single-start` turns it off): both ends' objectives and which was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_start: Option<SecondStart>,
}

/// The two fits of a default run (docs/methods.md §0.4): one from the §0.4 start, one
/// from σ0², ℓ, σ² of a full GP fitted on a subset; the end with the lower objective is
/// the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecondStart {
    /// The final objective of the fit from the §0.4 start (raw target scale, as `nlml`).
    pub first_nlml: f64,
    /// The final objective of the fit from the subset fit.
    pub second_nlml: f64,
    /// Which start of the full GP on the subset reached the lowest NLML there, e.g.
    /// "ℓ half-range × 10, σ² = σ0²/100".
    pub subset_start: String,
    /// Whether the second fit is the model (its objective was the lower).
    pub kept_second: bool,
    /// The iteration at which the other fit, clearly behind, was stopped (the two are
    /// raced, docs/methods.md §0.4); its objective above is where it stopped. None: both
    /// ran to their end (with `--restarts`, or neither fell behind before one ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_at: Option<usize>,
}

impl SecondStart {
    /// The record in a sentence, for `fit` and the app.
    pub fn note(&self) -> String {
        let (kept, other, other_start) = if self.kept_second {
            (
                "the subset-fitted start's",
                self.first_nlml,
                "default start",
            )
        } else {
            (
                "the default start's",
                self.second_nlml,
                "subset-fitted start",
            )
        };
        let stopped = match self.dropped_at {
            Some(at) => format!(" when stopped behind at iteration {at}"),
            None => String::new(),
        };
        format!(
            "two; kept {kept} end, objective {:.6} ({other_start}: {other:.6}{stopped}; \
             subset start {})",
            self.first_nlml.min(self.second_nlml),
            self.subset_start
        )
    }
}

/// A fit that collapsed and was restarted (docs/methods.md §0.4): what the collapsed end
/// was, and which end was kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollapseRestart {
    /// The collapsed fit's final objective (raw target scale, as `nlml`).
    pub collapsed_nlml: f64,
    /// Its iterations.
    pub collapsed_iterations: usize,
    /// Which start of the full GP on the subset reached the lowest NLML there (the
    /// restart's σ0², ℓ, σ²), e.g. "ℓ half-range × 10, σ² = σ0²/100".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subset_start: Option<String>,
    /// Whether the restarted fit was kept (its objective was the better); false: the
    /// collapsed end had the better objective and is the model.
    pub kept_restart: bool,
}

impl CollapseRestart {
    /// The record in a sentence, for `fit` and the app.
    pub fn note(&self) -> String {
        if self.kept_restart {
            format!(
                "the first fit collapsed to a constant predictor (objective {:.6} after {} \
                 iterations); it was restarted from a full GP fitted on a subset (best from \
                 {}), and the restart is kept",
                self.collapsed_nlml,
                self.collapsed_iterations,
                self.subset_start.as_deref().unwrap_or("several starts")
            )
        } else {
            format!(
                "the fit collapsed to a constant predictor and was restarted from a full GP \
                 fitted on a subset; the restart ended at a worse objective, so the collapsed \
                 fit (objective {:.6}) is kept",
                self.collapsed_nlml
            )
        }
    }
}

impl ModelFile {
    /// σ² as a fraction of the training targets' variance, when it is below
    /// [`NOISE_COLLAPSE_RATIO`]. A standardized model's targets have unit variance in
    /// its units; a raw model's variance is `target_variance`, where known.
    pub fn noise_collapsed(&self, target_variance: Option<f64>) -> Option<f64> {
        // σ² is the Gaussian likelihood's: another likelihood's model does not use it
        if self.likelihood.is_some() {
            return None;
        }
        let share = match (&self.standardize, target_variance) {
            (Some(_), _) => self.hyper.noise_variance,
            (None, Some(v)) if v > 0.0 => self.hyper.noise_variance / v,
            _ => return None,
        };
        (share < NOISE_COLLAPSE_RATIO).then_some(share)
    }

    /// [`ModelFile::noise_collapsed`] in a sentence, with what to try; `fitc_like`: the
    /// model's approximation has FITC's diagonal correction, the known cause.
    pub fn noise_collapse_note(
        &self,
        target_variance: Option<f64>,
        fitc_like: bool,
    ) -> Option<String> {
        self.noise_collapsed(target_variance).map(|r| {
            let cause = if fitc_like {
                "this is FITC's known underestimate of the noise (its diagonal correction \
                 takes the noise's place; docs/methods.md §0.4), and the error bars are too \
                 narrow: compare --method vfe, or keep σ² up with --noise-floor 1e-3"
            } else {
                "the error bars are too narrow: keep σ² up with --noise-floor 1e-3"
            };
            format!(
                "the noise variance σ² ended at {r:.1e} of the targets' variance: the fit \
                 treats the targets as nearly noiseless. Unless they are, {cause}"
            )
        })
    }

    /// A model of `method` with these hyperparameters and no other tables.
    pub fn new(method: &str, hyper: Hyper) -> ModelFile {
        ModelFile {
            method: method.to_string(),
            target_mean: 0.0,
            jitter: None,
            approx: None,
            alpha: None,
            noise_floor: None,
            fixed: Vec::new(),
            inputs: None,
            target: None,
            standardize: None,
            composed: None,
            hyper,
            likelihood: None,
            tables: toml::Table::new(),
            posterior: None,
            fit: None,
        }
    }

    /// σ0²/σ² when the fit collapsed to the constant predictor ([`Hyper::collapsed`]);
    /// never for a non-Gaussian likelihood, whose model does not use σ².
    pub fn collapsed(&self) -> Option<f64> {
        match self.likelihood {
            Some(_) => None,
            None => self.hyper.collapsed(),
        }
    }

    /// [`Hyper::collapse_note`] where [`ModelFile::collapsed`] says so.
    pub fn collapse_note(&self) -> Option<String> {
        self.collapsed().and_then(|_| self.hyper.collapse_note())
    }

    /// A classifier's latent scale that grew without bound, in a sentence with what to
    /// try: on training classes a kernel separates, the evidence keeps rising with σ0²
    /// (it tends to the probability of the right signs), so the optimiser walks σ0²
    /// away — probabilities go to 0 and 1, and at overflow to ½ everywhere
    /// (docs/methods.md §10). None for every other model.
    pub fn latent_scale_note(&self) -> Option<String> {
        let s = self.hyper.signal_variance;
        (self.likelihood_kind() == LikelihoodKind::Bernoulli
            && (s >= UNBOUNDED_LATENT_VARIANCE || s.is_nan()))
        .then(|| {
            format!(
                "the signal variance grew to {s:.1e}: the training classes are separable \
                     by this kernel and the evidence keeps rising with the latent scale, which \
                     has no optimum; probabilities away from the data may be overconfident{}; \
                     hold it with --fix signal_variance=100, or compare --method svgp",
                if s.is_finite() && s < 1e100 {
                    ""
                } else {
                    " (at this size the arithmetic overflows and the predictions are not \
                         to be trusted at all)"
                }
            )
        })
    }

    /// A model whose likelihood is not Gaussian has no noise variance σ²: its file has
    /// no `[hyper] noise_variance`, and in memory σ² is set here to the noise floor + 1
    /// whatever the start or an earlier file gave, so that θ's σ² entry
    /// (log(σ² − floor), which such a model's objective leaves with gradient 0, so no
    /// fit moves it) is the same for a model started and a model read. The Gaussian
    /// model is left as it is.
    pub fn hold_unused_noise(&mut self) {
        if self.likelihood.is_some() {
            self.hyper.noise_variance = self.noise_floor.unwrap_or(0.0) + 1.0;
        }
    }

    /// Which likelihood the model has (gaussian when it has no `[likelihood]`).
    pub fn likelihood_kind(&self) -> LikelihoodKind {
        self.likelihood
            .as_ref()
            .map_or(LikelihoodKind::Gaussian, |t| t.name)
    }

    /// The model's likelihood with its parameters: the table's, or the Gaussian with
    /// `[hyper] noise_variance`. A bad table is an error located at it.
    pub fn likelihood(&self) -> Result<Box<dyn Likelihood>> {
        match &self.likelihood {
            None => Ok(Box::new(Gaussian::new(self.hyper.noise_variance))),
            Some(t) => t.likelihood().map_err(|why| {
                Error::at(Location::key("likelihood"), format!("[likelihood] {why}"))
            }),
        }
    }

    pub fn read(path: &Path) -> Result<ModelFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::file(path, format!("cannot read the model file: {e}")))?;
        Self::parse(&text).map_err(|e| Error::file(path, e))
    }

    /// Parse TOML; the error names the line and the key.
    pub fn parse(text: &str) -> std::result::Result<ModelFile, String> {
        toml::from_str(text).map_err(|e| toml_error(text, &e))
    }

    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| Error::File(format!("cannot write a model: {e}")))
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        atomic_write(path, &self.to_toml()?)
    }

    /// The table `T` if the model has it. A malformed table is an error located at it
    /// (and at the key serde names, where it names one).
    pub fn table<T: ModelTable>(&self) -> Result<Option<T>> {
        let Some(value) = self.tables.get(T::NAME) else {
            return Ok(None);
        };
        T::deserialize(value.clone()).map(Some).map_err(|e| {
            let message = e.message().trim().to_string();
            let mut at = Location::key(T::NAME);
            if let Some(key) = named_field(&message).filter(|_| value.is_table()) {
                at = at.then(&key);
            }
            let what = if value.is_table() {
                format!("[{}]", T::NAME)
            } else {
                T::NAME.to_string()
            };
            Error::at(at, format!("{what}: {message}"))
        })
    }

    /// The rows of key `key` of table `T` as stored, when the table holds that key alone
    /// and it is a non-empty matrix of `cols` columns of finite numbers: exactly when
    /// [`ModelFile::require`] and [`required_matrix`] would accept it, but without
    /// building `T` (which allocates), for tables read on every evaluation. None for
    /// anything else: the checked read then says what is wrong.
    pub fn stored_rows<T: ModelTable>(&self, key: &str, cols: usize) -> Option<&[toml::Value]> {
        let table = self.tables.get(T::NAME)?.as_table()?;
        if table.len() != 1 {
            return None;
        }
        let rows = table.get(key)?.as_array()?;
        let fits = |r: &toml::Value| {
            r.as_array()
                .is_some_and(|r| r.len() == cols && r.iter().all(|v| stored_number(v).is_some()))
        };
        (!rows.is_empty() && rows.iter().all(fits)).then_some(rows.as_slice())
    }

    /// [`ModelFile::stored_rows`] as a matrix in memory from `scratch`.
    pub fn stored_matrix_in<T: ModelTable>(
        &self,
        key: &str,
        cols: usize,
        scratch: &crate::scratch::Scratch,
    ) -> Option<DMatrix<f64>> {
        let rows = self.stored_rows::<T>(key, cols)?;
        let mut m = scratch.matrix(rows.len(), cols);
        for (i, r) in rows.iter().enumerate() {
            for (j, v) in r.as_array().into_iter().flatten().enumerate() {
                m[(i, j)] = stored_number(v).unwrap_or(f64::NAN);
            }
        }
        Some(m)
    }

    /// The table `T`, which the model must have.
    pub fn require<T: ModelTable>(&self) -> Result<T> {
        self.table::<T>()?.ok_or_else(|| {
            Error::input(format!(
                "the model has no [{}] (method '{}' needs it)",
                T::NAME,
                self.method
            ))
        })
    }

    /// Whether the model has the table `T`.
    pub fn has<T: ModelTable>(&self) -> bool {
        self.tables.contains_key(T::NAME)
    }

    /// Write the table `T` (replacing it where the model has it, else after the others).
    pub fn set<T: ModelTable>(&mut self, table: &T) {
        let value = toml::Value::try_from(table)
            .unwrap_or_else(|e| panic!("internal: [{}] does not serialise: {e}", T::NAME));
        self.tables.insert(T::NAME.to_string(), value);
    }

    /// Remove the table `T`.
    pub fn remove<T: ModelTable>(&mut self) {
        self.tables.remove(T::NAME);
    }

    /// Check what every method shares and settle the number of inputs D: `witnesses`
    /// are what the method says holds one value per input (its lengthscales, the row
    /// length of its tables); `inputs` and `[standardize]` join them. Where they
    /// disagree the one that differs from the most is wrong (an edit that removed one
    /// lengthscale is reported at `lengthscales`, not at `[standardize]`); on a tie the
    /// method's first witness sets D. `lengthscales` says whether the method has them
    /// (every method but spgp-dr, whose projection carries the scales).
    pub fn check_shared(&self, witnesses: &[Witness], lengthscales: bool) -> Result<usize> {
        let h = &self.hyper;
        let at_hyper = |key: &str| Location::key("hyper").then(key);
        match (lengthscales, h.lengthscales.is_empty()) {
            // a composed kernel carries its own scales ([kernel])
            (true, true) if self.composed.is_some() => {}
            (true, true) => {
                return Err(Error::at(
                    at_hyper("lengthscales"),
                    format!(
                        "[hyper] lengthscales is missing or empty; method '{}' needs one per input",
                        self.method
                    ),
                ));
            }
            (false, false) => {
                return Err(Error::at(
                    at_hyper("lengthscales"),
                    format!(
                        "[hyper] lengthscales does not apply to method '{}': its [projection] \
                         matrix carries the scales; remove the key",
                        self.method
                    ),
                ));
            }
            _ => {}
        }
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::at(
                    at_hyper(name),
                    format!("[hyper] {name} must be positive and finite, not {v}"),
                ))
            }
        };
        positive("signal_variance", h.signal_variance)?;
        match (h.kernel, h.rq_alpha) {
            (KernelKind::Rq, Some(a)) => positive("rq_alpha", a)?,
            (KernelKind::Rq, None) => {
                return Err(Error::at(
                    at_hyper("kernel"),
                    "[hyper] kernel = \"rq\" needs its shape: add rq_alpha (e.g. rq_alpha = 1.0)",
                ));
            }
            (k, Some(_)) => {
                return Err(Error::at(
                    at_hyper("rq_alpha"),
                    format!(
                        "[hyper] rq_alpha is the rational quadratic kernel's shape; this model's \
                         kernel is {k} — remove rq_alpha or set kernel = \"rq\""
                    ),
                ));
            }
            (_, None) => {}
        }
        positive("noise_variance", h.noise_variance)?;
        for l in &h.lengthscales {
            positive("lengthscales", *l)?;
        }
        if let Some(j) = self.jitter.filter(|j| !(j.is_finite() && *j >= 0.0)) {
            return Err(Error::at(
                Location::key("jitter"),
                format!("jitter must be ≥ 0, not {j}"),
            ));
        }
        if let Some(f) = self.noise_floor {
            if !(f.is_finite() && f >= 0.0) {
                return Err(Error::at(
                    Location::key("noise_floor"),
                    format!("noise_floor must be ≥ 0, not {f}"),
                ));
            }
            // at the floor is a fitted model's σ² = floor + e^θ once e^θ is below the
            // floor's last digit: `fit --save-model` writes it, so it must read back
            if h.noise_variance < f {
                return Err(Error::at(
                    at_hyper("noise_variance"),
                    format!(
                        "[hyper] noise_variance = {} must not be below noise_floor = {f}",
                        h.noise_variance
                    ),
                ));
            }
        }
        if !self.target_mean.is_finite() {
            return Err(Error::at(
                Location::key("target_mean"),
                "target_mean must be finite",
            ));
        }
        let mut all: Vec<Witness> = witnesses.to_vec();
        if let Some(names) = &self.inputs {
            all.push(Witness::new(Location::key("inputs"), "inputs", names.len()));
        }
        if let Some(s) = &self.standardize {
            let at = |key: &str| Location::key("standardize").then(key);
            all.push(Witness::new(
                at("input_center"),
                "[standardize] input_center",
                s.input_center.len(),
            ));
            all.push(Witness::new(
                at("input_scale"),
                "[standardize] input_scale",
                s.input_scale.len(),
            ));
        }
        let d = settle_dim(&all)?;
        if d == 0 {
            return Err(Error::input("the model has no input columns"));
        }
        if let Some(s) = &self.standardize {
            let at = Location::key("standardize");
            if let Some((k, v)) = (s.input_center.iter().enumerate())
                .find(|(_, v)| !v.is_finite())
                .map(|(k, v)| (("input_center", k), v))
                .or_else(|| {
                    (s.input_scale.iter().enumerate())
                        .find(|(_, v)| !(v.is_finite() && **v > 0.0))
                        .map(|(k, v)| (("input_scale", k), v))
                })
            {
                return Err(Error::at(
                    at.then(k.0),
                    format!(
                        "[standardize] {} holds {v} (value {}): centres must be finite and \
                         scales positive and finite",
                        k.0,
                        k.1 + 1
                    ),
                ));
            }
            if !(s.target_scale.is_finite() && s.target_scale > 0.0) {
                return Err(Error::at(
                    at.then("target_scale"),
                    format!(
                        "[standardize] target_scale must be positive and finite, not {}",
                        s.target_scale
                    ),
                ));
            }
        }
        Ok(d)
    }

    /// The model's kernel (`[kernel]`'s, else `[hyper]`'s): k(X, Z) is
    /// `kernel().matrix(x, z, par)`, diag k(X) is `kernel().diag(x)`.
    pub fn kernel(&self) -> ModelKernel {
        self.kernel_in(&crate::scratch::Scratch::default())
    }

    /// [`ModelFile::kernel`], a plain kernel's lengthscales in memory from `scratch`.
    pub fn kernel_in(&self, scratch: &crate::scratch::Scratch) -> ModelKernel {
        match &self.composed {
            Some(c) => ModelKernel::Code(c.kernel().clone_box()),
            None => self.hyper.kernel_in(scratch),
        }
    }

    /// The number of inputs the kernel reads.
    pub fn kernel_dim(&self) -> usize {
        self.composed
            .as_ref()
            .map_or(self.hyper.lengthscales.len(), |c| c.kernel().dim())
    }

    /// The jitter policy for this model: the automatic jitter scales with the kernel's
    /// prior variance (σ0², or a composed kernel's where it is constant, so that its
    /// gradient goes through `Kernel::log_prior_variance_grad`; a composed kernel whose
    /// prior variance varies with x keeps the start's σ0², a constant).
    pub fn jitter_policy(&self) -> crate::linalg::Jitter {
        let scale = self
            .composed
            .as_ref()
            .and_then(|c| c.kernel().prior_variance())
            .unwrap_or(self.hyper.signal_variance);
        jitter_policy(self.jitter, scale)
    }
}

/// The jitter policy of a model whose `jitter` key is `jitter` and whose prior
/// variance is `prior_variance`: that absolute jitter, else the automatic one scaled
/// by the prior variance (docs/methods.md §1.3).
pub fn jitter_policy(jitter: Option<f64>, prior_variance: f64) -> crate::linalg::Jitter {
    match jitter {
        Some(j) => crate::linalg::Jitter::Fixed(j),
        None => crate::linalg::Jitter::Auto {
            scale: prior_variance,
        },
    }
}

/// Rows of a table (`at`, e.g. `[inducing] points`) as a matrix, checking that every
/// row has `cols` entries and every value is finite; an error is located at its row.
pub fn rows_to_matrix(at: &Location, rows: &[Vec<f64>], cols: usize) -> Result<DMatrix<f64>> {
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != cols) {
        return Err(Error::at(
            at.clone().index(i),
            format!(
                "{at}: row {} has {} values, expected {cols}",
                i + 1,
                r.len()
            ),
        ));
    }
    if let Some(i) = rows.iter().position(|r| r.iter().any(|v| !v.is_finite())) {
        return Err(Error::at(
            at.clone().index(i),
            format!("{at}: row {} holds a value that is not finite", i + 1),
        ));
    }
    Ok(DMatrix::from_fn(rows.len(), cols, |i, j| rows[i][j]))
}

/// A finite number as a table stores it (serde reads an integer as an f64 too).
fn stored_number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Float(f) => Some(*f).filter(|f| f.is_finite()),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

/// A required, non-empty matrix of a model's table (see [`rows_to_matrix`]).
pub fn required_matrix(at: &Location, rows: &[Vec<f64>], cols: usize) -> Result<DMatrix<f64>> {
    if rows.is_empty() {
        return Err(Error::at(at.clone(), format!("{at} is empty")));
    }
    rows_to_matrix(at, rows, cols)
}

/// The number of inputs the witnesses agree on: the count most of them hold (on a tie,
/// the first's); an error at the first that holds another, naming those it disagrees
/// with.
pub fn settle_dim(witnesses: &[Witness]) -> Result<usize> {
    let Some(first) = witnesses.first() else {
        return Ok(0);
    };
    let votes = |c: usize| witnesses.iter().filter(|w| w.count == c).count();
    let d = witnesses
        .iter()
        .map(|w| w.count)
        .fold(
            first.count,
            |best, c| if votes(c) > votes(best) { c } else { best },
        );
    if let Some(odd) = witnesses.iter().find(|w| w.count != d) {
        let agree: Vec<&str> = witnesses
            .iter()
            .filter(|w| w.count == d)
            .map(|w| w.what.as_str())
            .collect();
        return Err(Error::at(
            odd.at.clone(),
            format!(
                "{} has {} values but the model has {d} inputs ({} {} {d}): one value per input",
                odd.what,
                odd.count,
                agree.join(", "),
                if agree.len() == 1 { "has" } else { "have" },
            ),
        ));
    }
    Ok(d)
}

/// The field a serde message names (`unknown field `x``, `missing field `x``).
fn named_field(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("missing field `"))?;
    Some(rest[..rest.find('`')?].to_string())
}

/// The line (1-based) of what `at` names in a TOML text: the key (or the element of an
/// array), else the nearest enclosing table or key the text has. None when the text
/// cannot be parsed or holds none of it.
pub fn line_of(text: &str, at: &Location) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let line = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let mut best: Option<usize> = None;
    let mut value: Option<&DeValue> = None;
    let mut table: Option<&DeTable> = Some(root.get_ref());
    for step in &at.0 {
        match step {
            Step::Key(k) => {
                let (key, v) = table?.get_key_value(k.as_str())?;
                // a key's own span (a `[table]` header's for a table)
                best = Some(line(key.span().start));
                value = Some(v.get_ref());
                table = match v.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                };
            }
            Step::Index(i) => {
                let DeValue::Array(items) = value? else {
                    return best;
                };
                let Some(item) = items.get(*i) else {
                    return best;
                };
                best = Some(line(item.span().start));
                value = Some(item.get_ref());
                table = match item.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                };
            }
        }
    }
    best
}

pub use crate::matrix_rows::matrix_to_rows;

/// Describe a TOML error with its line number.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}

/// A temporary file name beside `path` (same folder, so a rename replaces it atomically).
pub fn temp_beside(path: &Path) -> std::path::PathBuf {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    dir.join(format!(".{name}.tmp{}", std::process::id()))
}

/// Write a file atomically: a temporary file beside it, then a rename, so a crash
/// never leaves half a file.
pub fn atomic_write(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let tmp = temp_beside(path);
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or_else(|| Path::new("."));
    // Written in full and flushed to the disk before it replaces the old file, so a
    // crash, a kill -9 or a power cut leaves either the old file or the new one.
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    };
    if let Err(e) = write() {
        // a full disk leaves a partial temporary file: do not leave it behind
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::file(
            path,
            format!("cannot write: {}", io_reason(&e)),
        ));
    }
    test_pause_before_rename();
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::file(path, format!("cannot replace: {}", io_reason(&e)))
    })?;
    // The rename itself reaches the disk with the folder's metadata.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The system's words for an I/O error without the "(os error 28)" after them.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    }
}

/// Fault-injection seam for the tests: `SGPW_TEST_SAVE_PAUSE_MS=N` waits N ms between
/// writing the temporary file and renaming it, so a test can kill -9 the process in
/// the middle of a save.
fn test_pause_before_rename() {
    if let Some(ms) = std::env::var("SGPW_TEST_SAVE_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// n·log(target scale): what turns a standardised model's NLML (model units) into the
/// NLML of the raw targets (y = scale·y_std + mean has density p(y_std)/scale per point).
pub fn raw_scale_offset(standardize: Option<&Standardize>, n: usize) -> f64 {
    standardize.map_or(0.0, |s| n as f64 * s.target_scale.ln())
}

#[cfg(test)]
mod tests;
