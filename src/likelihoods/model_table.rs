//! A model's likelihood as its file carries it (`[likelihood]`, docs/formats.md), and the
//! check of a training target against the likelihood a run names. The Gaussian has no
//! table: its σ² is `[hyper] noise_variance`, so every model written before there was a
//! choice reads and writes unchanged.

use super::GaussHermite;
use super::{
    BadTarget, Bernoulli, BinaryLabels, Likelihood, LikelihoodKind, Link, Poisson, StudentT,
};
use serde::{Deserialize, Serialize};

/// Gauss–Hermite points unless a model says otherwise: GPflow's 20, exact for
/// polynomials in f of degree up to 39.
pub const DEFAULT_POINTS: usize = 20;
use std::collections::BTreeMap;

/// `[likelihood]`: which likelihood, its link (bernoulli), the data's two labels of
/// classes 0 and 1 (bernoulli), and its parameters by name (in model units, as
/// `[hyper]`'s).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LikelihoodTable {
    pub name: LikelihoodKind,
    /// bernoulli: probit (absent) or logit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    /// bernoulli: the target's labels read as class 0 and class 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<[f64; 2]>,
    /// bernoulli on a target of words (text or booleans): the labels of classes 0 and 1
    /// as the data wrote them, sorted ([`super::ClassNames`]); `labels` are then 0 and 1,
    /// the codes the loader gave them. Absent for a numeric target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<[String; 2]>,
    /// Gauss–Hermite points of the expected log-likelihood where the likelihood has no
    /// closed form (`--quadrature-points`; absent: 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quadrature_points: Option<usize>,
    /// bernoulli fitted by EP: the damping δ of the site updates (`--ep-damping`;
    /// absent: 1, undamped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ep_damping: Option<f64>,
    /// poisson: the column of each row's exposure E the model was fitted with
    /// (`--exposure`; y ~ Poisson(E·exp f), f the log rate per unit of exposure); absent:
    /// E = 1. What `sgpw predict --exposure` reads for the rows it predicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposure: Option<String>,
    /// The likelihood's own parameters (`Likelihood::param_names`), e.g. studentt's
    /// scale and df; absent ones take their defaults.
    #[serde(flatten)]
    pub params: BTreeMap<String, f64>,
    /// A likelihood built in code (one no model file names, e.g. defined in a test:
    /// docs/architecture.md "How to add a likelihood"), used in place of `name`'s;
    /// `name` then says which registered likelihood's target handling and scores it
    /// shares. Never written: a model file names registered likelihoods only.
    #[serde(skip)]
    pub code: Option<CodeLikelihood>,
}

/// A likelihood built in code, held by a [`LikelihoodTable`] (as
/// `kernel::ModelKernel::Code` holds a kernel built in code). Two are equal when they
/// have the same name and parameters.
#[derive(Clone, Debug)]
pub struct CodeLikelihood(pub Box<dyn Likelihood>);

impl PartialEq for CodeLikelihood {
    fn eq(&self, other: &CodeLikelihood) -> bool {
        self.0.name() == other.0.name() && self.0.params() == other.0.params()
    }
}

impl LikelihoodTable {
    /// The table of `kind` with its default parameters (None for the Gaussian).
    pub fn start(kind: LikelihoodKind, labels: Option<BinaryLabels>) -> Option<LikelihoodTable> {
        if kind == LikelihoodKind::Gaussian {
            return None;
        }
        let mut t = LikelihoodTable {
            name: kind,
            link: None,
            labels: labels.map(|l| l.labels),
            classes: None,
            quadrature_points: None,
            ep_damping: None,
            exposure: None,
            params: BTreeMap::new(),
            code: None,
        };
        t.set_params(kind.default_likelihood().as_ref());
        Some(t)
    }

    /// The table of a likelihood built in code, `lik` at its parameters; `shares` is the
    /// registered likelihood whose target handling and scores it shares (studentt for
    /// real targets with noise, poisson for counts, bernoulli for classes).
    pub fn of_code(shares: LikelihoodKind, lik: Box<dyn Likelihood>) -> LikelihoodTable {
        let mut t = LikelihoodTable {
            name: shares,
            link: None,
            labels: None,
            classes: None,
            quadrature_points: None,
            ep_damping: None,
            exposure: None,
            params: BTreeMap::new(),
            code: None,
        };
        t.set_params(lik.as_ref());
        t.code = Some(CodeLikelihood(lik));
        t
    }

    /// The likelihood the table describes; an error names the key that is wrong.
    pub fn likelihood(&self) -> Result<Box<dyn Likelihood>, String> {
        let mut lik: Box<dyn Likelihood> = match (&self.code, self.name) {
            (Some(code), _) => code.0.clone(),
            (None, LikelihoodKind::Gaussian) => {
                return Err(
                    "name = \"gaussian\": a Gaussian model has no [likelihood] table; \
                     its noise variance is [hyper] noise_variance"
                        .to_string(),
                );
            }
            (None, LikelihoodKind::StudentT) => Box::new(StudentT::default()),
            (None, LikelihoodKind::Bernoulli) => {
                Box::new(Bernoulli::new(self.link.unwrap_or_default(), 0.0))
            }
            (None, LikelihoodKind::Poisson) => Box::new(Poisson),
        };
        self.quadrature()?;
        if self.link.is_some() && self.name != LikelihoodKind::Bernoulli {
            return Err(format!(
                "link: the {} likelihood has no link to choose",
                self.name
            ));
        }
        if let Some(d) = self.ep_damping {
            if self.name != LikelihoodKind::Bernoulli {
                return Err(format!(
                    "ep_damping: the {} likelihood is not fitted by expectation propagation",
                    self.name
                ));
            }
            if !(d > 0.0 && d <= 1.0) {
                return Err(format!("ep_damping = {d}: must be in (0, 1] (1: undamped)"));
            }
        }
        if self.exposure.is_some() && self.name != LikelihoodKind::Poisson {
            return Err(format!(
                "exposure: the {} likelihood has no rate for an exposure to scale (poisson \
                 has)",
                self.name
            ));
        }
        if self
            .exposure
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return Err("exposure = \"\": name the exposure column".to_string());
        }
        if self.code.is_none() && self.labels.is_some() != (self.name == LikelihoodKind::Bernoulli)
        {
            return Err(match self.name {
                LikelihoodKind::Bernoulli => {
                    "labels: a bernoulli model needs the two labels of classes 0 and 1, \
                     e.g. labels = [0.0, 1.0]"
                        .to_string()
                }
                other => format!("labels: the {other} likelihood has no class labels"),
            });
        }
        if let Some([a, b]) = self.labels
            && !(a.is_finite() && b.is_finite() && a < b)
        {
            return Err(format!(
                "labels = [{a}, {b}]: two finite labels, the smaller first (class 0)"
            ));
        }
        if let Some([a, b]) = &self.classes {
            if self.labels != Some([0.0, 1.0]) {
                return Err(format!(
                    "classes = [\"{a}\", \"{b}\"]: the labels of a target of words are its \
                     codes, labels = [0.0, 1.0] (and only a bernoulli model has classes)"
                ));
            }
            if a >= b || a.is_empty() {
                return Err(format!(
                    "classes = [\"{a}\", \"{b}\"]: two different labels, sorted (class 0 \
                     first, as the data's labels are read)"
                ));
            }
        }
        let names = lik.param_names();
        let mut values = lik.params();
        for (key, v) in &self.params {
            let Some(k) = names.iter().position(|n| n == key) else {
                return Err(format!(
                    "{key}: not a parameter of the {} likelihood ({})",
                    self.name,
                    if names.is_empty() {
                        "it has none".to_string()
                    } else {
                        format!("its parameters: {}", names.join(", "))
                    }
                ));
            };
            if !(v.is_finite() && *v > 0.0) {
                return Err(format!("{key} = {v}: must be a positive number"));
            }
            values[k] = *v;
        }
        lik.set_params(&values);
        Ok(lik)
    }

    /// The Gauss–Hermite rule of the table's `quadrature_points` (default 20).
    pub fn quadrature(&self) -> Result<GaussHermite, String> {
        GaussHermite::new(self.quadrature_points.unwrap_or(DEFAULT_POINTS))
            .map_err(|why| format!("quadrature_points: {why}"))
    }

    /// Writes `lik`'s parameter values into the table.
    pub fn set_params(&mut self, lik: &dyn Likelihood) {
        self.params = lik
            .param_names()
            .iter()
            .map(|n| n.to_string())
            .zip(lik.params())
            .collect();
    }

    /// The offsets log E_i a count model adds to the latent f of `n` rows whose exposures
    /// are `exposure` (`--exposure`; none: every offset 0, the rate per unit of exposure).
    /// An error names the first row whose exposure is not a finite number > 0.
    pub fn log_offsets(&self, exposure: Option<&[f64]>, n: usize) -> Result<Vec<f64>, String> {
        let Some(e) = exposure else {
            return Ok(vec![0.0; n]);
        };
        if self.name != LikelihoodKind::Poisson {
            return Err(format!(
                "an exposure (--exposure) scales the rate of a poisson model; this model's \
                 likelihood is {}",
                self.name
            ));
        }
        if e.len() != n {
            return Err(format!("{} exposures for {n} rows: one a row", e.len()));
        }
        super::log_exposures(e).map_err(|i| {
            format!(
                "the exposure at row {}: {} is not a positive number (an exposure must be a \
                 finite number > 0)",
                i + 1,
                e[i]
            )
        })
    }

    /// The words of the classes 0 and 1, for a bernoulli model of a target of words.
    pub fn class_names(&self) -> Option<super::ClassNames> {
        self.classes.clone().map(|names| super::ClassNames {
            booleans: names == ["false", "true"],
            names,
        })
    }

    /// The class labels, for a bernoulli model.
    pub fn binary_labels(&self) -> Option<BinaryLabels> {
        self.labels.map(|labels| BinaryLabels { labels })
    }
}

/// Whether the targets of a fit with `kind` must stay as they are: counts and class
/// labels are not centred or scaled (the Gaussian and Student-t are location-scale
/// families, so their targets are).
pub fn keeps_targets(kind: LikelihoodKind) -> bool {
    matches!(kind, LikelihoodKind::Bernoulli | LikelihoodKind::Poisson)
}

/// The note for a regression likelihood (`kind` keeps no targets as they are) given a
/// target of exactly two values, `target` its name: class labels taken as numbers, most
/// likely not what was meant, and a fit that gives no error to catch it.
pub fn two_valued_regression_note(target: &str, kind: LikelihoodKind, y: &[f64]) -> Option<String> {
    if keeps_targets(kind) {
        return None;
    }
    let [a, b] = BinaryLabels::of(y).ok()?.labels;
    Some(format!(
        "the target '{target}' has only the values {a} and {b}: the {kind} likelihood fits them \
         as numbers (regression); to classify, use --likelihood bernoulli"
    ))
}

/// The first training target `kind` cannot take, as the likelihood's own check says
/// (for bernoulli: exactly two distinct labels, which are then mapped to 0 and 1 —
/// returned, smaller label class 0).
pub fn target_problem(kind: LikelihoodKind, y: &[f64]) -> Result<Option<BinaryLabels>, BadTarget> {
    match kind {
        LikelihoodKind::Bernoulli => BinaryLabels::of(y).map(Some),
        _ => kind.default_likelihood().check_targets(y).map(|()| None),
    }
}
