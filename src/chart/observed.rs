//! What the prediction chart draws for a likelihood whose target is not the latent f
//! plus noise, on the target's own scale: a classifier's p(y = 1 | x) on [0, 1] and a
//! count model's rate, each with a band from the latent variance — the link at f's
//! mean ± 2 sd (the link is monotone, so the band holds the probability or rate of
//! 95 % of the latent posterior) — and the data on the same scale (a label as its
//! class, 0 or 1). The Gaussian and Student-t keep f's bands ([`super::prediction`]).

use crate::likelihoods::LikelihoodKind;
use crate::model_file::ModelFile;

/// What the y axis holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// bernoulli: the probability of class 1 (the larger training label).
    Probability,
    /// poisson: the rate exp(f), the expected count.
    Rate,
}

/// The observed-scale curves along the prediction chart's grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub scale: Scale,
    /// The predictive p(y = 1 | x) (the latent uncertainty integrated out) or the
    /// posterior mean of the rate, E[exp f].
    pub mean: Vec<f64>,
    /// The link at f's mean − 2 sd and + 2 sd.
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    /// The data drawn, on this scale: (x, class 0 or 1) or (x, count). A test label the
    /// model does not know is left out.
    pub train: Vec<(f64, f64)>,
    pub test: Vec<(f64, f64)>,
    /// bernoulli: the target's labels of class 0 and class 1.
    pub labels: Option<[f64; 2]>,
}

impl Observed {
    /// The plotted y range: [0, 1] for a probability (padded by 4 %), from 0 to the
    /// band's and the data's largest value (padded by 4 %) for a rate.
    pub fn y_range(&self) -> (f64, f64) {
        match self.scale {
            Scale::Probability => (-0.04, 1.04),
            Scale::Rate => {
                let top = self
                    .hi
                    .iter()
                    .chain(&self.mean)
                    .copied()
                    .chain(self.train.iter().chain(&self.test).map(|p| p.1))
                    .filter(|v| v.is_finite())
                    .fold(0.0_f64, f64::max);
                let top = if top > 0.0 { top } else { 1.0 };
                (-0.04 * top, 1.04 * top)
            }
        }
    }

    /// The y axis's name: "p(benign = 1)" for a target `benign` whose class 1 is the
    /// label 1; "rate of disasters".
    pub fn axis_name(&self, target: &str) -> String {
        let target = if target.is_empty() { "y" } else { target };
        match (self.scale, self.labels) {
            (Scale::Probability, Some([_, one])) => format!("p({target} = {one})"),
            (Scale::Probability, None) => format!("p({target} = 1)"),
            (Scale::Rate, _) => format!("rate of {target}"),
        }
    }

    /// The legend's words for the band and the mean.
    pub fn band_caption(&self) -> &'static str {
        match self.scale {
            Scale::Probability => "p at f ±2σ",
            Scale::Rate => "rate at f ±2σ",
        }
    }

    pub fn mean_caption(&self) -> &'static str {
        match self.scale {
            Scale::Probability => "p(y=1|x)",
            Scale::Rate => "E[rate]",
        }
    }
}

/// The observed-scale curves of `model` from f's mean and variance on the grid (in the
/// data's units, as [`super::prediction::Curves`] holds them) and the data drawn there;
/// None for the Gaussian and Student-t.
pub fn of(
    model: &ModelFile,
    mean: &[f64],
    var: &[f64],
    train: &[(f64, f64)],
    test: &[(f64, f64)],
) -> Result<Option<Observed>, String> {
    let Some(table) = &model.likelihood else {
        return Ok(None);
    };
    let scale = match table.name {
        LikelihoodKind::Bernoulli => Scale::Probability,
        LikelihoodKind::Poisson => Scale::Rate,
        LikelihoodKind::Gaussian | LikelihoodKind::StudentT => return Ok(None),
    };
    let lik = model.likelihood().map_err(|e| e.to_string())?;
    let quad = table.quadrature()?;
    // labels and counts are never centred or scaled, but a model says so itself
    let tm = model.target_mean;
    let s = model.standardize.as_ref().map_or(1.0, |s| s.target_scale);
    let n = mean.len().min(var.len());
    let (mut out_mean, mut lo, mut hi) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for i in 0..n {
        let m = (mean[i] - tm) / s;
        let v = (var[i] / (s * s)).max(0.0);
        let sd = v.sqrt();
        out_mean.push(lik.predictive_moments(m, v, &quad).0);
        lo.push(lik.conditional_moments(m - 2.0 * sd).0);
        hi.push(lik.conditional_moments(m + 2.0 * sd).0);
    }
    let labels = table.binary_labels();
    let on_scale = |points: &[(f64, f64)]| -> Vec<(f64, f64)> {
        match &labels {
            Some(l) => points
                .iter()
                .filter(|(_, y)| l.labels.contains(y))
                .map(|&(x, y)| (x, if y == l.labels[1] { 1.0 } else { 0.0 }))
                .collect(),
            None => points.to_vec(),
        }
    };
    Ok(Some(Observed {
        scale,
        mean: out_mean,
        lo,
        hi,
        train: on_scale(train),
        test: on_scale(test),
        labels: labels.map(|l| l.labels),
    }))
}
