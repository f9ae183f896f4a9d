//! The `[fit]` record: what a fit reported (its objective, jitter, iterations, time,
//! and the second start or collapse restart it ran), informational and ignored when a
//! model is read.

use serde::{Deserialize, Serialize};

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
