//! The values an option takes where it is a choice among named ways (how a family's
//! points start, which approximation, which selection rule, …): each one `ValueEnum` for
//! the command line and the app's form, and serde for sessions.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// How ssgp's spectral points start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SpectralInit {
    /// PSDS's Hammersley points (deterministic: the seed does not change them).
    Psds,
    /// Draws from N(0, I).
    Random,
}

/// One stage of a staged schedule (ssgp).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// σ0², ℓ, σ² with the features fixed.
    Hyper,
    /// The features with σ0², ℓ, σ² fixed.
    Points,
    /// Everything jointly.
    All,
}

/// Where tfifgp's feature centres start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Centres {
    /// All at the training mean (FIFGP's window).
    Zero,
    /// At a random subset of the training inputs.
    Subset,
}

/// Where inducing inputs (pseudo-inputs) start (docs/methods.md §0.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum InducingInit {
    /// A seeded random subset of the training inputs.
    Subset,
    /// Seeded k-means centres of the training inputs.
    Kmeans,
    /// Greedy: each next point the training point with the largest variance given those
    /// chosen, under the starting kernel (Burt, Rasmussen & van der Wilk 2020).
    Variance,
}

impl InducingInit {
    pub fn name(self) -> &'static str {
        match self {
            InducingInit::Subset => "subset",
            InducingInit::Kmeans => "kmeans",
            InducingInit::Variance => "variance",
        }
    }
}

/// How the starting lengthscales follow from the training inputs (docs/methods.md §0.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum LengthscaleStart {
    /// Half the range of each input.
    Range,
    /// Half the range of each input times √D, so the prior correlation of two typical
    /// inputs does not vanish as the number of inputs D grows.
    Scaled,
}

/// How the optimiser sees the positive hyperparameters σ0², ℓ, rq's α and σ² − floor
/// (docs/methods.md §0.4): as their logarithms, or through the softplus p = log(1 + eᵘ)
/// (GPflow's choice), which is the logarithm below p ≈ 1 and p itself above it, so a
/// lengthscale grows by steps, not by factors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Positive {
    Log,
    Softplus,
}

impl Positive {
    pub fn name(self) -> &'static str {
        match self {
            Positive::Log => "log",
            Positive::Softplus => "softplus",
        }
    }
}

/// The likelihood approximation a low-rank method uses (docs/methods.md §1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ApproxKind {
    /// FITC: the exact prior diagonal (Snelson & Ghahramani 2006).
    Fitc,
    /// DTC / projected process: no diagonal correction.
    Dtc,
    /// VFE: Titsias's collapsed variational bound (2009).
    Vfe,
    /// Power EP between VFE and FITC (Bui, Yan & Turner 2017); needs --alpha.
    Pep,
}

impl ApproxKind {
    pub fn name(self) -> &'static str {
        match self {
            ApproxKind::Fitc => "fitc",
            ApproxKind::Dtc => "dtc",
            ApproxKind::Vfe => "vfe",
            ApproxKind::Pep => "pep",
        }
    }
}

/// How greedy chooses its next basis point (Keerthi & Chu 2006, docs/methods.md §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Select {
    /// At random (the baseline).
    Rand,
    /// Seeger, Williams & Lawrence's information gain, every candidate in O(1).
    Info,
    /// Post-backfitting score on a cache of κ = 59 kernel rows.
    Kappa,
    /// Post-backfitting score on a cache of d_max kernel rows (the paper's pick).
    Dmax,
    /// Smola & Bartlett: the exact decrease of the objective, κ = 59 random candidates.
    Sb,
}

impl Select {
    pub fn name(self) -> &'static str {
        match self {
            Select::Rand => "rand",
            Select::Info => "info",
            Select::Kappa => "kappa",
            Select::Dmax => "dmax",
            Select::Sb => "sb",
        }
    }
}

/// How svgp trains q(u) (docs/methods.md §8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SvgpOptimizer {
    /// Natural-gradient steps on q(u), alternated with Adam on σ0², ℓ, σ² and Z.
    Natgrad,
    /// Adam on everything, q(u)'s mean and Cholesky factor included.
    Adam,
}

impl SvgpOptimizer {
    pub fn name(self) -> &'static str {
        match self {
            SvgpOptimizer::Natgrad => "natgrad",
            SvgpOptimizer::Adam => "adam",
        }
    }
}

/// The feature family svgp's q(u) is over (docs/methods.md §8.6): the inducing
/// variables' Kuf, Kuu and prior diagonal come from it, and its parameters are learned
/// with σ0², ℓ, σ². Named as the methods that pair the family with a collapsed bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SvgpFeatures {
    /// Pseudo-inputs Z, the function's values at m learned points (the default; any kernel).
    Pseudo,
    /// fifgp's frequency inducing features under one Gaussian window (SE kernel).
    Fifgp,
    /// tfifgp's time-frequency features, each window with its own centre (SE kernel).
    Tfifgp,
    /// smgp's multiscale Gaussian features (SE kernel).
    Smgp,
    /// psds's fixed Hammersley spectral points: 2r trigonometric weights (degenerate).
    Psds,
    /// ssgp's learned spectral points: 2r trigonometric weights (degenerate).
    Ssgp,
}

impl SvgpFeatures {
    pub fn name(self) -> &'static str {
        match self {
            SvgpFeatures::Pseudo => "pseudo",
            SvgpFeatures::Fifgp => "fifgp",
            SvgpFeatures::Tfifgp => "tfifgp",
            SvgpFeatures::Smgp => "smgp",
            SvgpFeatures::Psds => "psds",
            SvgpFeatures::Ssgp => "ssgp",
        }
    }
}
