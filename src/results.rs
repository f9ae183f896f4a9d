//! The outcome of one run, as sessions store it and the run pool reports it.

use crate::metrics::TestMetrics;
use crate::model_file::ModelFile;
use crate::optim::Stop;
use serde::{Deserialize, Serialize};

/// Identifies one run's result.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunKey {
    pub dataset: String,
    pub label: String,
    pub m: usize,
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Done,
    Failed,
    Cancelled,
}

/// Which scale a stored NLML (and its trace) is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NlmlScale {
    /// The raw targets: a standardized run's model-unit NLML plus n·log(target sd).
    Raw,
    /// A standardized run's own model units (results written before the raw scale).
    Standardized,
}

impl NlmlScale {
    pub fn word(self) -> &'static str {
        match self {
            NlmlScale::Raw => "raw",
            NlmlScale::Standardized => "standardized",
        }
    }
}

/// The outcome of one run, with what is needed to replay it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunResult {
    #[serde(flatten)]
    pub key: RunKey,
    pub method: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nlml: Option<f64>,
    /// The scale of `nlml` and `trace`: "raw" (the targets' own units, so every run
    /// on a data set compares) for every result written since schema 2; a result
    /// migrated from schema 1 says "standardized" where its run was standardized and
    /// its NLML is in model units, and has no scale where that is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nlml_scale: Option<NlmlScale>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nmse: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mnlp: Option<f64>,
    /// Test MSE in the target's units (`sgpw report --mse`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mse: Option<f64>,
    /// Test points with a negative predictive latent variance (Nyström; MNLP used σ²).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub negative_var_latent: usize,
    /// Of those, the ones still negative after adding σ².
    #[serde(default, skip_serializing_if = "is_zero")]
    pub negative_var_noisy: usize,
    /// bernoulli: test error rate and AUC; poisson: RMSE (`metrics::likelihood_scores`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auc: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmse: Option<f64>,
    #[serde(default)]
    pub iterations: usize,
    #[serde(default)]
    pub train_seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<f64>,
    /// Why the optimiser stopped (budget, converged, line-search-failed, cancelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
    /// NLML after each iteration, starting with the initial value.
    #[serde(default)]
    pub trace: Vec<f64>,
    /// Validation scores during training (`--validation`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validation: Vec<ValidationPoint>,
    /// With `--early-stop`: the iteration whose parameters were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_iteration: Option<usize>,
    /// Test MNLP of the constant predictor (training mean and variance): a run above it
    /// predicts worse than knowing nothing about the inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant_mnlp: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelFile>,
}

/// A validation score at one iteration of the fit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidationPoint {
    pub iteration: usize,
    pub nmse: f64,
    pub mnlp: f64,
}

fn is_zero(v: &usize) -> bool {
    *v == 0
}

/// The test score a run is judged by first, which depends on its likelihood: the error
/// rate for a classifier (bernoulli), RMSE for counts (poisson), NMSE otherwise — the
/// runs table's and the comparison chart's first score. Which one a result has says
/// which it is (`metrics::likelihood_scores` fills the error rate or RMSE, never NMSE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Headline {
    Nmse,
    ErrorRate,
    Rmse,
}

impl Headline {
    pub fn name(self) -> &'static str {
        match self {
            Headline::Nmse => "NMSE",
            Headline::ErrorRate => "error",
            Headline::Rmse => "RMSE",
        }
    }

    /// Its name in a sentence or a title ("error rate").
    pub fn long_name(self) -> &'static str {
        match self {
            Headline::ErrorRate => "error rate",
            h => h.name(),
        }
    }

    /// NMSE spans decades (drawn on a log axis); an error rate can be 0 and an RMSE is
    /// in the target's units, so they are drawn on a linear one.
    pub fn log_scale(self) -> bool {
        self == Headline::Nmse
    }
}

impl RunResult {
    /// Its first test score ([`Headline`]) and its value; None before it was scored.
    pub fn headline(&self) -> Option<(Headline, f64)> {
        if let Some(e) = self.error_rate {
            Some((Headline::ErrorRate, e))
        } else if let Some(r) = self.rmse {
            Some((Headline::Rmse, r))
        } else {
            self.nmse.map(|v| (Headline::Nmse, v))
        }
    }

    /// A result with nothing measured yet.
    pub fn new(key: RunKey, method: &str, status: Status) -> RunResult {
        RunResult {
            key,
            method: method.to_string(),
            status,
            message: None,
            nlml: None,
            nlml_scale: None,
            nmse: None,
            mnlp: None,
            mse: None,
            negative_var_latent: 0,
            negative_var_noisy: 0,
            error_rate: None,
            auc: None,
            rmse: None,
            iterations: 0,
            train_seconds: 0.0,
            jitter: None,
            stop: None,
            trace: Vec::new(),
            validation: Vec::new(),
            best_iteration: None,
            constant_mnlp: None,
            model: None,
        }
    }

    /// σ0²/σ² of a finished fit that collapsed to the constant predictor
    /// ([`crate::model_file::ModelFile::collapsed`]), None otherwise.
    pub fn collapsed(&self) -> Option<f64> {
        if self.status != Status::Done {
            return None;
        }
        self.model.as_ref().and_then(|m| m.collapsed())
    }

    /// The record of a finished fit that collapsed and was restarted
    /// ([`crate::model_file::FitInfo::collapse_restart`]), None otherwise.
    pub fn collapse_restart(&self) -> Option<&crate::model_file::CollapseRestart> {
        self.done_fit()?.collapse_restart.as_ref()
    }

    /// The record of a finished fit's two starts
    /// ([`crate::model_file::FitInfo::second_start`]), None otherwise.
    pub fn second_start(&self) -> Option<&crate::model_file::SecondStart> {
        self.done_fit()?.second_start.as_ref()
    }

    /// A finished run's fit record, None for any other status.
    fn done_fit(&self) -> Option<&crate::model_file::FitInfo> {
        if self.status != Status::Done {
            return None;
        }
        self.model.as_ref()?.fit.as_ref()
    }

    /// Whether the test predictions are worse than the constant predictor's: NMSE
    /// above 1 (worse than the training mean) or MNLP above the constant's.
    pub fn worse_than_constant(&self) -> bool {
        self.nmse.is_some_and(|v| v > 1.0)
            || matches!((self.mnlp, self.constant_mnlp), (Some(a), Some(b)) if a > b)
    }

    /// Whether the validation predictions (the last score, or with early stopping the
    /// kept one) are worse than predicting the training mean: NMSE above 1.
    /// (The validation rows have no constant-predictor MNLP of their own.)
    pub fn validation_worse_than_constant(&self) -> bool {
        self.kept_validation().is_some_and(|v| v.nmse > 1.0)
    }

    /// The validation score of the parameters the run returned: at `best_iteration`
    /// with early stopping, else the last one.
    pub fn kept_validation(&self) -> Option<ValidationPoint> {
        match self.best_iteration {
            Some(it) => self.validation.iter().find(|v| v.iteration == it).copied(),
            None => self.validation.last().copied(),
        }
    }

    /// The NLML on the raw target scale, converting a standardized run's model-unit
    /// value with its stored model (n·log target sd); None where the scale is unknown.
    pub fn raw_nlml(&self) -> Option<f64> {
        let v = self.nlml?;
        match self.nlml_scale? {
            NlmlScale::Raw => Some(v),
            NlmlScale::Standardized => self.raw_offset().map(|o| v + o),
        }
    }

    /// n·log(target sd) of the stored model (0 for a raw model); None without a model.
    pub fn raw_offset(&self) -> Option<f64> {
        let model = self.model.as_ref()?;
        let n = model.fit.as_ref()?.n_train;
        Some(crate::model_file::raw_scale_offset(
            model.standardize.as_ref(),
            n,
        ))
    }

    pub fn metrics(&self) -> Option<TestMetrics> {
        Some(TestMetrics {
            nmse: self.nmse,
            mnlp: self.mnlp?,
            mse: self.mse.unwrap_or(f64::NAN),
            negative_var_latent: self.negative_var_latent,
            negative_var_noisy: self.negative_var_noisy,
            error_rate: self.error_rate,
            auc: self.auc,
            rmse: self.rmse,
        })
    }
}
