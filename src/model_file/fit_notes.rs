//! What a fitted model's values warn of, in sentences for `fit`, the app and Python:
//! a fit collapsed to the constant predictor, a noise variance that fell to nearly
//! nothing, a classifier's latent scale that grew without bound (docs/methods.md §0.4,
//! §10).

use super::schema::ModelFile;
use crate::likelihoods::LikelihoodKind;

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

/// signal/noise when it is below [`COLLAPSE_RATIO`].
fn collapse_ratio(signal: f64, noise: f64) -> Option<f64> {
    let ratio = signal / noise;
    (ratio < COLLAPSE_RATIO).then_some(ratio)
}

/// A collapsed fit whose signal variance is `ratio` of its noise variance, in a sentence
/// with what to try.
fn collapse_sentence(ratio: f64) -> String {
    format!(
        "collapsed to a constant predictor: the signal variance is {ratio:.1e} of the \
         noise variance; {COLLAPSE_ADVICE}"
    )
}

impl ModelFile {
    /// The likelihood's Gaussian noise σ² (None for another likelihood, which has none,
    /// or a model whose `[likelihood]` table does not read: the fit's checks say why).
    fn noise_of_likelihood(&self) -> Option<f64> {
        self.gaussian_noise().ok().flatten()
    }

    /// σ² as a fraction of the training targets' variance, when it is below
    /// [`NOISE_COLLAPSE_RATIO`]. A standardized model's targets have unit variance in
    /// its units; a raw model's variance is `target_variance`, where known. Never for a
    /// likelihood other than Gaussian noise.
    pub fn noise_collapsed(&self, target_variance: Option<f64>) -> Option<f64> {
        let s2 = self.noise_of_likelihood()?;
        let share = match (&self.standardize, target_variance) {
            (Some(_), _) => s2,
            (None, Some(v)) if v > 0.0 => s2 / v,
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

    /// σ0²/σ² when it is below [`COLLAPSE_RATIO`]: the fit explains the targets as
    /// noise around their mean (the all-noise basin of VFE and power EP). Never for a
    /// likelihood other than Gaussian noise, which has no σ² to explain them with. A
    /// kernel built from parts carries its own variances ([hyper]'s σ0² stays at its
    /// start): its prior variance k(x, x) takes σ0²'s place — the sum of its summands'
    /// variances (a product's, the product of its factors') — where it is the same at
    /// every x; where it is not (a `linear` part's grows with |x|) the model alone cannot
    /// tell (None), and [`ModelFile::collapsed_on`] averages it over the training inputs.
    pub fn collapsed(&self) -> Option<f64> {
        let noise = self.noise_of_likelihood()?;
        let signal = match &self.composed {
            None => self.hyper.signal_variance,
            Some(c) => c.kernel().prior_variance()?,
        };
        collapse_ratio(signal, noise)
    }

    /// [`ModelFile::collapsed`] with the training inputs `x` (model units) at hand: a
    /// kernel built from parts is judged by its prior variance averaged over them,
    /// (1/n) Σ_i k(x_i, x_i) (σ0² for a stationary kernel; for a `linear` part its
    /// variances weighted by the inputs' mean squares). A plain kernel's test is
    /// [`ModelFile::collapsed`]'s.
    pub fn collapsed_on(&self, x: &nalgebra::DMatrix<f64>) -> Option<f64> {
        match &self.composed {
            Some(c) if x.nrows() > 0 => {
                let noise = self.noise_of_likelihood()?;
                let diag = c.kernel().diag(x);
                let signal = diag.iter().sum::<f64>() / diag.len() as f64;
                collapse_ratio(signal, noise)
            }
            _ => self.collapsed(),
        }
    }

    /// The flag of a collapsed fit in a sentence, with what to try; None if it is not.
    pub fn collapse_note(&self) -> Option<String> {
        self.collapsed().map(collapse_sentence)
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
}
