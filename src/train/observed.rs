//! What a model predicts for a new observation y when its likelihood is not Gaussian:
//! from the latent f's mean and variance, bernoulli's p(y = 1) (the probability of the
//! larger training label), or the predictive mean and variance of y and its central 95%
//! interval (poisson, studentt), in the data's units. `sgpw predict` writes it as columns, Python returns it
//! (`Model.predict_y`, the classifier's `predict_proba`).

use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::likelihoods::{ClassNames, GaussHermite, Likelihood};
use crate::linalg::map_ordered;
use crate::model_file::ModelFile;
use std::fmt::Write as _;

/// The share of y's predictive probability in the interval `sgpw predict` writes.
pub const INTERVAL_LEVEL: f64 = 0.95;

/// A model's likelihood with what its predictions need.
pub struct Observed {
    lik: Box<dyn Likelihood>,
    quad: GaussHermite,
    bernoulli: bool,
    /// A bernoulli model of a target of words: its classes' labels, the predicted one
    /// written beside p1.
    classes: Option<ClassNames>,
    /// The model's target mean and scale (0 and 1 for labels and counts).
    target: (f64, f64),
}

impl Observed {
    /// None for a Gaussian model (its predictive of y is the noisy variance).
    pub fn of(model: &ModelFile) -> Result<Option<Observed>> {
        let Some(table) = &model.likelihood else {
            return Ok(None);
        };
        let scale = model.standardize.as_ref().map_or(1.0, |s| s.target_scale);
        Ok(Some(Observed {
            lik: model.likelihood()?,
            quad: table.quadrature().map_err(Error::input)?,
            bernoulli: table.labels.is_some(),
            classes: table.class_names(),
            target: (model.target_mean, scale),
        }))
    }

    /// Whether y is a class (bernoulli): the mean is p(y = 1).
    pub fn is_binary(&self) -> bool {
        self.bernoulli
    }

    /// `sgpw predict`'s header line.
    pub fn header(&self) -> &'static str {
        if self.classes.is_some() {
            "latent_mean,latent_var,p1,class\n"
        } else if self.bernoulli {
            "latent_mean,latent_var,p1\n"
        } else {
            "latent_mean,latent_var,mean,var,lower95,upper95\n"
        }
    }

    /// The mean and variance of a new y (bernoulli: p(y = 1) and p(1 − p)) from the
    /// latent mean and variance, all in the data's units.
    pub fn moments(&self, mean: f64, var: f64) -> (f64, f64) {
        self.moments_exposed(mean, var, 0.0)
    }

    /// [`Observed::moments`] of a count whose row has the log exposure `log_exposure`
    /// (`--exposure`): y ~ Poisson(E·exp f), so f is shifted by log E.
    pub fn moments_exposed(&self, mean: f64, var: f64, log_exposure: f64) -> (f64, f64) {
        let (tm, scale) = self.target;
        let (m, v) = self.lik.predictive_moments(
            (mean - tm) / scale + log_exposure,
            (var / (scale * scale)).max(0.0),
            &self.quad,
        );
        if self.bernoulli {
            // a probability: the target's units do not apply
            return (m, v);
        }
        (m * scale + tm, v * scale * scale)
    }

    /// The central interval holding `level` of a new y's predictive probability
    /// (`Likelihood::predictive_interval`) from the latent mean and variance, in the
    /// data's units; None for bernoulli.
    pub fn interval(&self, mean: f64, var: f64, level: f64) -> Option<(f64, f64)> {
        self.interval_exposed(mean, var, level, 0.0)
    }

    /// [`Observed::interval`] of a count whose row has the log exposure `log_exposure`.
    pub fn interval_exposed(
        &self,
        mean: f64,
        var: f64,
        level: f64,
        log_exposure: f64,
    ) -> Option<(f64, f64)> {
        let (tm, scale) = self.target;
        let (lo, hi) = self.lik.predictive_interval(
            (mean - tm) / scale + log_exposure,
            (var / (scale * scale)).max(0.0),
            level,
            &self.quad,
        )?;
        Some((lo * scale + tm, hi * scale + tm))
    }

    /// [`Observed::interval`] at every row, blocks of rows on `exec`'s threads, each
    /// block after a look at the cancel token (what Python's `predict_interval` runs with
    /// the GIL released); None for a likelihood without an interval.
    pub fn intervals(
        &self,
        mean: &[f64],
        var: &[f64],
        level: f64,
        exec: &Exec,
    ) -> Result<Option<Vec<(f64, f64)>>> {
        // a quantile is tens of distribution-function evaluations: 256 rows a task
        const BLOCK: usize = 256;
        let starts: Vec<usize> = (0..mean.len()).step_by(BLOCK).collect();
        let blocks = map_ordered(exec.par, starts, |start| -> Result<Option<Vec<_>>> {
            exec.check()?;
            Ok((start..(start + BLOCK).min(mean.len()))
                .map(|i| self.interval(mean[i], var[i], level))
                .collect())
        });
        let mut out = Vec::with_capacity(mean.len());
        for block in blocks {
            match block? {
                Some(b) => out.extend(b),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// One row of `sgpw predict` from the latent mean and variance in the data's units.
    pub fn row(&self, out: &mut String, mean: f64, var: f64) {
        self.row_exposed(out, mean, var, 0.0)
    }

    /// [`Observed::row`] of a count whose row has the log exposure `log_exposure`: the
    /// latent columns are f's (the log rate per unit of exposure), the others the
    /// count's.
    pub fn row_exposed(&self, out: &mut String, mean: f64, var: f64, log_exposure: f64) {
        let (m, v) = self.moments_exposed(mean, var, log_exposure);
        let _ = if let Some(c) = &self.classes {
            writeln!(out, "{mean},{var},{m},{}", csv_cell(c.predicted(m)))
        } else if self.bernoulli {
            writeln!(out, "{mean},{var},{m}")
        } else {
            // poisson and studentt have an interval; a likelihood without one leaves
            // its two cells empty
            match self.interval_exposed(mean, var, INTERVAL_LEVEL, log_exposure) {
                Some((lo, hi)) => writeln!(out, "{mean},{var},{m},{v},{lo},{hi}"),
                None => writeln!(out, "{mean},{var},{m},{v},,"),
            }
        };
    }
}

/// A label as one CSV cell: quoted (its quotes doubled) where it holds a comma, a quote
/// or a line break.
fn csv_cell(label: &str) -> std::borrow::Cow<'_, str> {
    if label.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", label.replace('"', "\"\"")).into()
    } else {
        label.into()
    }
}
