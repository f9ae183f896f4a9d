//! The model file's schema: the tables every method shares (`method`, `[hyper]`,
//! `[standardize]`, `[kernel]`, `[likelihood]`, `[posterior]`, `[fit]`, …) as typed
//! Rust values, with the one step around serde's derived code (a non-Gaussian model has
//! no `[hyper] noise_variance`), and the model's kernel, likelihood and jitter policy
//! read from them. The method's own tables are kept as TOML (`tables.rs`).

use super::files::{atomic_write, toml_error};
use super::fit_record::FitInfo;
use crate::collapsed::Posterior;
use crate::error::{Error, Location, Result};
use crate::kernel::{ComposedKernel, KernelKind, ModelKernel};
use crate::likelihoods::{Gaussian, Likelihood, LikelihoodKind, LikelihoodTable};
use crate::run_spec::ApproxKind;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A model: the part every method shares, and the method's own tables kept as they are
/// (each family declares, reads, writes and checks its own: [`ModelTable`](super::ModelTable)).
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
    /// the order the file or the family gave them. Read and written as [`ModelTable`](super::ModelTable)s
    /// by the family that owns them; this file knows none of them.
    #[serde(flatten)]
    pub tables: toml::Table,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posterior: Option<Posterior>,
    /// What the fit reported (informational; ignored when reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitInfo>,
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

/// `--standardize`: the model sees (x − input_mean_raw)/input_scale and y/target_scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Standardize {
    pub input_center: Vec<f64>,
    pub input_scale: Vec<f64>,
    pub target_scale: f64,
}

impl Standardize {
    /// The scales of a kernel on `inputs` inputs that are not the data's columns
    /// (spgp-dr's projections, pca-spgp's principal components: `Method::kernel_inputs`):
    /// the target's alone, the inputs' units being the model's.
    pub fn target_only(&self, inputs: usize) -> Standardize {
        Standardize {
            input_center: vec![0.0; inputs],
            input_scale: vec![1.0; inputs],
            target_scale: self.target_scale,
        }
    }

    /// Its scales, as the kernel's unit conversion reads them.
    pub fn scales(&self) -> crate::kernel::Scales<'_> {
        crate::kernel::Scales {
            centres: &self.input_center,
            inputs: &self.input_scale,
            target: self.target_scale,
        }
    }
}

impl ModelFile {
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

    /// A model whose likelihood is not Gaussian has no noise variance σ²: its file has
    /// no `[hyper] noise_variance`, its θ no entry for it (`crate::params`), and in
    /// memory σ² is set here to the noise floor + 1 whatever the start or an earlier
    /// file gave, so that a model started and a model read are the same. The Gaussian
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

    /// Write a fitted Gaussian likelihood into a Gaussian model (its σ² is
    /// `[hyper] noise_variance`): the inverse of [`ModelFile::likelihood`]'s Gaussian. A
    /// model with another likelihood is left as it is.
    pub fn set_gaussian(&mut self, lik: &Gaussian) {
        if self.likelihood.is_none() {
            self.hyper.noise_variance = lik.variance;
        }
    }

    /// The Gaussian noise variance σ² of the model's likelihood, for a computation that
    /// needs it ([`Likelihood::collapsed_noise`]): an error naming the likelihood when it
    /// is not Gaussian.
    pub fn collapsed_noise(&self) -> Result<f64> {
        match &self.likelihood {
            // Gaussian noise asked on the stack, not boxed: every evaluation asks, and
            // an evaluation allocates nothing after its first (tests/allocations.rs)
            None => Gaussian::new(self.hyper.noise_variance).collapsed_noise(),
            Some(_) => self.likelihood()?.collapsed_noise(),
        }
    }

    /// σ² where the model's likelihood is Gaussian noise, None otherwise
    /// ([`Likelihood::gaussian_noise`]).
    pub fn gaussian_noise(&self) -> Result<Option<f64>> {
        match &self.likelihood {
            None => Ok(Gaussian::new(self.hyper.noise_variance).gaussian_noise()),
            Some(_) => Ok(self.likelihood()?.gaussian_noise()),
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

/// n·log(target scale): what turns a standardised model's NLML (model units) into the
/// NLML of the raw targets (y = scale·y_std + mean has density p(y_std)/scale per point).
pub fn raw_scale_offset(standardize: Option<&Standardize>, n: usize) -> f64 {
    standardize.map_or(0.0, |s| n as f64 * s.target_scale.ln())
}
