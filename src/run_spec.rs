//! What one run is — method × m × seed with its options — declared once.
//!
//! [`MethodOptions`] is the single declaration of every option a run can carry: serde
//! reads it from sessions (an unknown key or value is an error naming its line), clap
//! from the command line (flattened into `fit` and `bench`; its doc comments are the
//! `--help` text), and the app's run form lists its fields from clap's description of
//! the same struct ([`option_fields`]) and parses them with clap ([`parse_options`]).
//! Each method names the options it reads; a spec is checked against its method
//! before any worker sees it (`RunSpec::check` in `methods`, which knows the registry).

use clap::{Args, CommandFactory, FromArgMatches, ValueEnum};
use serde::{Deserialize, Serialize};

pub use crate::kernel::KernelKind;

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

/// Options that apply to every method; the others are read by some methods only.
pub const GENERAL_OPTIONS: &[&str] = &[
    "kernel",
    "subset",
    "init_lengthscales_from_subset",
    "noise_floor",
    "restarts",
    "validation",
    "early_stop",
    "lengthscale_start",
    "positive",
    "no_collapse_restart",
    "single_start",
    "init_lengthscales",
    "init_signal_variance",
    "init_noise_variance",
    "fix",
];

/// Every option a run can carry. Keys a method does not read are rejected when the
/// spec is checked, so a typo never passes silently.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, Args)]
#[serde(deny_unknown_fields)]
pub struct MethodOptions {
    /// The kernel (default se): se, matern12, matern32, matern52 (ARD, learned
    /// lengthscales), rq (also a learned shape α). psds and ssgp take se or matern*;
    /// fifgp, tfifgp and smgp se only.
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelKind>,
    /// Any method: fit on a random subset of this many training points
    /// (`full --subset 2000` is the PSDS paper's random active set).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subset: Option<usize>,
    /// Any method: first fit a full GP on this many random training points and start
    /// from its σ0², ℓ and σ² (the papers' choice on pumadyn-32nm).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_lengthscales_from_subset: Option<usize>,
    /// ssgp: where the spectral points start.
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<SpectralInit>,
    /// ssgp: a staged schedule sharing one iteration budget, e.g. hyper,points.
    #[arg(long, value_enum, value_delimiter = ',')]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<Stage>>,
    /// tfifgp: where the feature centres start.
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centres: Option<Centres>,
    /// fifgp, tfifgp, smgp: the likelihood approximation (default fitc). greedy: the
    /// objective it reports and --adapt fits, vfe (default) or dtc (the paper's).
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approx: Option<ApproxKind>,
    /// pep, and --approx pep: the power α in (0, 1] (default 0.5; 1 is FITC, → 0 is VFE).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// spgp-dr, pca-spgp (required): the reduced input dimension G, 1 ≤ G ≤ D.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<usize>,
    /// spgp-dr: also learn a pseudo-noise h_j per pseudo-input (SPGP+HS on the projection).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hetero: bool,
    /// eigengp, eigengp-plus: rounds of the sequential schedule (default 2), each
    /// (1) DTC (eigengp-plus: FITC) on the basis points, σ0², ℓ, σ² with the weights tied
    /// to w = λ/M, then (2) the eigen-weights w and σ² with the eigenfunctions fixed; the
    /// iteration budget is split evenly over the 2·rounds stages.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
    /// greedy: how the next basis point is chosen (default dmax): rand, info (information
    /// gain), kappa / dmax (post-backfitting score on a cache of 59 / d_max kernel rows),
    /// sb (exact decrease of the objective over 59 random candidates).
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<Select>,
    /// greedy: K rounds of model adaptation, each a basis selection at fixed σ0², ℓ, σ²
    /// and then a short L-BFGS fit of σ0², ℓ, σ² at that basis on the objective --approx
    /// names (the iteration budget split evenly over the rounds); absent: σ0², ℓ, σ²
    /// stay fixed.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapt: Option<usize>,
    /// greedy, rvm: σ0², ℓ, σ² from a full GP fitted on this many random training points
    /// (up to 200 iterations); greedy keeps them fixed unless --adapt (the paper's FIXED
    /// baselines), rvm keeps σ0², ℓ and starts σ² there (default min(n, 2000) unless
    /// greedy's --adapt or --init-lengthscales-from-subset).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyper_from_subset: Option<usize>,
    /// greedy with kappa, dmax or sb: keep up to this many discarded kernel rows and
    /// reuse them when their point is drawn again (default 0: none).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard_cache: Option<usize>,
    /// rvm: add a constant basis function (a bias) to the candidates, beside the kernel
    /// centred on each training input.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bias: bool,
    /// Any method: keep σ² above this fraction of the training targets' variance (σ² is
    /// fitted as floor + e^θ), so noiseless data cannot drive it to zero; 0 turns it off.
    /// Default 1e-6, from the command line, the app and a session alike (sessions of
    /// schema 1 and 2 had no floor without the key: they read as noise_floor = 0).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<f64>,
    /// Any method: K seeded starts (start 0 is the run's own seed), each optimised for a
    /// tenth of the iteration budget (at least 10 iterations; svgp with --epochs: a tenth
    /// of the epochs, at least one); the one with the best objective (svgp: the full
    /// negative ELBO) continues with the rest of the budget.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<usize>,
    /// Any method: hold out this fraction of the training rows (a seeded draw) as a
    /// validation set, scored (NMSE, MNLP) every few iterations while the model trains.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<f64>,
    /// With --validation: stop once the validation MNLP has not improved for 10 scorings
    /// and return the parameters with the best validation MNLP.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub early_stop: bool,
    /// fitc, vfe, dtc, pep, spgp-hs, spgp-dr, pca-spgp, svgp: where the inducing inputs start
    /// (default subset).
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inducing_init: Option<InducingInit>,
    /// Any method: the starting lengthscales, half the range of each input (range, the
    /// default) or that times √D (scaled); also the start of a subset fit.
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lengthscale_start: Option<LengthscaleStart>,
    /// Any method fitted by L-BFGS: how the optimiser parameterises σ0², ℓ, σ² —
    /// their logarithms (log, the default) or GPflow's softplus (softplus).
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positive: Option<Positive>,
    /// Any method: keep a fit that ends collapsed to the constant predictor (σ0² below
    /// 1e-3 of σ²) as it is. By default such a fit is run again from σ0², ℓ, σ² of a full
    /// GP fitted on min(n, 1000) random training points from several starts, and the end
    /// with the better objective is kept (docs/methods.md §0.4; not with --validation).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_collapse_restart: bool,
    /// Any method fitted by L-BFGS from σ0², ℓ, σ² (not svgp, rvm, nystrom, greedy
    /// without --adapt): fit once, from the start of docs/methods.md §0.4. By default a
    /// second fit starts from σ0², ℓ, σ² of a full GP fitted on min(n, 1000) random
    /// training points (the best of six starts) and the end with the lower objective is
    /// kept (not with --validation, --init-lengthscales-from-subset or
    /// --hyper-from-subset, which choose the start themselves). With --init-lengthscales,
    /// --init-signal-variance or --init-noise-variance those are the first start; this
    /// switch makes them the only one.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub single_start: bool,
    /// fitc, vfe, dtc, pep, spgp-hs, svgp: start the inducing inputs at the rows of this
    /// CSV file instead of --inducing-init's choice: a header naming the input columns
    /// (each input once, any order), then one row per inducing input (m rows), in the
    /// inputs' units (converted to model units when the run standardizes). A relative
    /// path is read from the working directory.
    #[arg(long, value_name = "FILE")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inducing_inputs: Option<std::path::PathBuf>,
    /// Any method: the starting lengthscales, in the inputs' units (one value for every
    /// input, or one per input, e.g. 1.0,2.0); converted to model units when the run
    /// standardizes. Unset ones start as --lengthscale-start says. Given starting values
    /// are the first start; the default second start still runs (--single-start: only
    /// yours) and the lower objective is kept.
    #[arg(long, value_delimiter = ',')]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_lengthscales: Option<Vec<f64>>,
    /// Any method: the starting signal variance σ0², in the target's units squared
    /// (default: the targets' mean square about their mean).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_signal_variance: Option<f64>,
    /// Any method: the starting noise variance σ², in the target's units squared
    /// (default: a quarter of the starting signal variance).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_noise_variance: Option<f64>,
    /// Methods fitted by L-BFGS (all but svgp, rvm, nystrom and greedy without --adapt):
    /// parameter blocks held fixed, left out of the optimisation: a name holds the block
    /// at its start (e.g. lengthscales, inducing_inputs), name=value holds a shared one at
    /// a value in the data's units (noise_variance=0.01; signal_variance, lengthscales,
    /// rq_alpha too). Repeat it or separate with commas; an unknown name lists the
    /// method's blocks. The value stays in the model file's `fixed` list.
    #[arg(long, value_delimiter = ',', value_name = "BLOCK[=VALUE]")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<Vec<crate::fix::Fix>>,
    /// svgp: points per minibatch B (default min(n, 256)); each step's ELBO estimate is
    /// n/B times the batch's sum.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
    /// svgp: the budget in passes over the shuffled training data (default: --iters
    /// minibatch steps if given, else 2000 epochs); the stopping rule ends a fit sooner
    /// once its bound stops improving.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epochs: Option<usize>,
    /// svgp: natgrad (default: natural-gradient steps on q(u), Adam on σ0², ℓ, σ², Z)
    /// or adam (Adam on everything).
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<SvgpOptimizer>,
    /// svgp: the natural-gradient step γ in (0, 1] (default 0.1).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nat_step: Option<f64>,
    /// svgp: Adam's learning rate (default 0.01).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lr: Option<f64>,
    /// svgp: evaluate the full-data ELBO every K steps for the record (default: once
    /// per epoch).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elbo_every: Option<usize>,
}

impl MethodOptions {
    /// The noise floor a run uses: its own, else [`DEFAULT_NOISE_FLOOR`] (0: none).
    pub fn noise_floor(&self) -> f64 {
        self.noise_floor.unwrap_or(DEFAULT_NOISE_FLOOR)
    }

    /// Where a run's inducing inputs start: its own choice, else
    /// [`DEFAULT_INDUCING_INIT`].
    pub fn inducing_init(&self) -> InducingInit {
        self.inducing_init.unwrap_or(DEFAULT_INDUCING_INIT)
    }

    /// How a run's starting lengthscales are set: its own choice, else
    /// [`DEFAULT_LENGTHSCALE_START`].
    pub fn lengthscale_start(&self) -> LengthscaleStart {
        self.lengthscale_start.unwrap_or(DEFAULT_LENGTHSCALE_START)
    }

    /// How the optimiser parameterises the positive hyperparameters: the run's own
    /// choice, else [`DEFAULT_POSITIVE`].
    pub fn positive(&self) -> Positive {
        self.positive.unwrap_or(DEFAULT_POSITIVE)
    }

    /// Whether the run gives any starting hyperparameter of its own
    /// (`init_lengthscales`, `init_signal_variance`, `init_noise_variance`).
    pub fn given_start(&self) -> bool {
        self.init_lengthscales.is_some()
            || self.init_signal_variance.is_some()
            || self.init_noise_variance.is_some()
    }

    /// The same options with every setting that equals its default written as not set,
    /// so two runs of one setup compare equal however each was written.
    pub fn canonical(&self) -> MethodOptions {
        let mut o = self.clone();
        if o.noise_floor == Some(DEFAULT_NOISE_FLOOR) {
            o.noise_floor = None;
        }
        if o.inducing_init == Some(DEFAULT_INDUCING_INIT) {
            o.inducing_init = None;
        }
        if o.lengthscale_start == Some(DEFAULT_LENGTHSCALE_START) {
            o.lengthscale_start = None;
        }
        if o.positive == Some(DEFAULT_POSITIVE) {
            o.positive = None;
        }
        if o.kernel.is_some_and(|k| k.is_se()) {
            o.kernel = None;
        }
        o
    }

    /// Names of the options that are set, in declaration order (from serde, so this
    /// list cannot drift from the declaration).
    pub fn set_keys(&self) -> Vec<String> {
        let order = option_fields();
        let set: Vec<String> = match toml::Value::try_from(self) {
            Ok(toml::Value::Table(t)) => t.keys().cloned().collect(),
            _ => Vec::new(),
        };
        order
            .into_iter()
            .map(|f| f.key)
            .filter(|k| set.contains(k))
            .collect()
    }

    /// Checks that need no method: subset sizes (against the training size where it
    /// is known), α's range, a non-empty schedule. Messages name the setting as
    /// `naming` says (the session key, and on the command line its flag).
    pub fn check(&self, n_train: usize, naming: Naming) -> std::result::Result<(), String> {
        let flag = |key: &str| naming.flag(key);
        for (key, v) in [
            ("subset", self.subset),
            (
                "init_lengthscales_from_subset",
                self.init_lengthscales_from_subset,
            ),
            ("hyper_from_subset", self.hyper_from_subset),
        ] {
            if let Some(s) = v
                && (s < 2 || s > n_train)
            {
                return Err(format!(
                    "{key} = {s}{}: must be between 2 and the training size {}",
                    flag(key),
                    if n_train == usize::MAX {
                        "n".to_string()
                    } else {
                        n_train.to_string()
                    }
                ));
            }
        }
        if let Some(a) = self.alpha
            && !(a > 0.0 && a <= 1.0)
        {
            return Err(format!(
                "alpha = {a}{}: power EP needs 0 < alpha ≤ 1 (1 is FITC, → 0 is VFE)",
                flag("alpha")
            ));
        }
        if let Some(f) = self.noise_floor
            && !(f.is_finite() && (0.0..0.5).contains(&f))
        {
            return Err(format!(
                "noise_floor = {f}{}: a fraction of the target variance in [0, 0.5)",
                flag("noise_floor")
            ));
        }
        if let Some(k) = self.restarts
            && !(1..=100).contains(&k)
        {
            return Err(format!(
                "restarts = {k}{}: between 1 and 100",
                flag("restarts")
            ));
        }
        if let Some(v) = self.validation
            && !(v > 0.0 && v <= 0.5)
        {
            return Err(format!(
                "validation = {v}{}: a fraction of the training rows in (0, 0.5]",
                flag("validation")
            ));
        }
        if self.early_stop && self.validation.is_none() {
            return Err(format!(
                "early_stop{} needs a validation set ({})",
                flag("early_stop"),
                naming.setting("validation", "0.1")
            ));
        }
        if self.rounds == Some(0) {
            return Err(format!(
                "rounds = 0{}: the sequential schedule needs at least 1 round",
                flag("rounds")
            ));
        }
        if self.adapt == Some(0) {
            return Err(format!(
                "adapt = 0{}: give at least 1 round, or leave it out to keep the \
                 hyperparameters fixed",
                flag("adapt")
            ));
        }
        if let Some(k) = self.adapt
            && k > 100
        {
            return Err(format!(
                "adapt = {k}{}: between 1 and 100 rounds (each selects a whole basis)",
                flag("adapt")
            ));
        }
        if self.stages.as_ref().is_some_and(Vec::is_empty) {
            return Err(format!(
                "stages{} is empty; give e.g. {}",
                flag("stages"),
                naming.setting("stages", "hyper,points")
            ));
        }
        for (key, v) in [
            ("batch", self.batch),
            ("epochs", self.epochs),
            ("elbo_every", self.elbo_every),
        ] {
            if v == Some(0) {
                return Err(format!("{key} = 0{}: must be at least 1", flag(key)));
            }
        }
        if let Some(g) = self.nat_step
            && !(g > 0.0 && g <= 1.0)
        {
            return Err(format!(
                "nat_step = {g}{}: the natural-gradient step must be in (0, 1] (1 on the \
                 whole data jumps to the optimal q(u))",
                flag("nat_step")
            ));
        }
        if let Some(r) = self.lr
            && !(r.is_finite() && r > 0.0)
        {
            return Err(format!(
                "lr = {r}{}: Adam's learning rate must be positive",
                flag("lr")
            ));
        }
        for (key, v) in [
            ("init_signal_variance", self.init_signal_variance),
            ("init_noise_variance", self.init_noise_variance),
        ] {
            if let Some(v) = v
                && !(v.is_finite() && v > 0.0)
            {
                return Err(format!("{key} = {v}{}: must be positive", flag(key)));
            }
        }
        if let Some(ls) = &self.init_lengthscales {
            if ls.is_empty() {
                return Err(format!(
                    "init_lengthscales{} is empty; give one value, or one per input",
                    flag("init_lengthscales")
                ));
            }
            if let Some(l) = ls.iter().find(|l| !(l.is_finite() && **l > 0.0)) {
                return Err(format!(
                    "init_lengthscales{}: {l} is not a positive lengthscale",
                    flag("init_lengthscales")
                ));
            }
        }
        if self.given_start()
            && let Some(key) = [
                (
                    "init_lengthscales_from_subset",
                    self.init_lengthscales_from_subset,
                ),
                ("hyper_from_subset", self.hyper_from_subset),
            ]
            .iter()
            .find_map(|(k, v)| v.map(|_| *k))
        {
            return Err(format!(
                "{key}{} fits the starting σ0², ℓ, σ² itself: give it or \
                 init_lengthscales / init_signal_variance / init_noise_variance, not both",
                flag(key)
            ));
        }
        for f in self.fix.iter().flatten().filter(|f| f.value.is_some()) {
            let init = match f.name.as_str() {
                "lengthscales" => self.init_lengthscales.is_some(),
                "signal_variance" => self.init_signal_variance.is_some(),
                "noise_variance" => self.init_noise_variance.is_some(),
                _ => false,
            };
            if init {
                return Err(format!(
                    "fix{}: '{f}' gives {} its value; leave out init_{}{}",
                    flag("fix"),
                    f.name,
                    f.name,
                    flag(&format!("init_{}", f.name))
                ));
            }
        }
        if self.inducing_inputs.is_some() && self.inducing_init.is_some() {
            return Err(format!(
                "inducing_inputs{} gives the inducing inputs: leave out inducing_init{}",
                flag("inducing_inputs"),
                flag("inducing_init")
            ));
        }
        if self.dims == Some(0) {
            return Err(format!(
                "dims = 0{}: the reduced dimension G must be at least 1",
                flag("dims")
            ));
        }
        Ok(())
    }
}

/// The command-line flag of an option key.
pub fn flag(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}

/// What a run's spec is checked against: the training set's size and its number of
/// inputs, `usize::MAX` where they are not known yet (a session before its data are
/// loaded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataShape {
    pub n_train: usize,
    pub dim: usize,
}

impl DataShape {
    pub const UNKNOWN: DataShape = DataShape {
        n_train: usize::MAX,
        dim: usize::MAX,
    };

    /// A training set of `n_train` points, its inputs not known.
    pub fn points(n_train: usize) -> DataShape {
        DataShape {
            n_train,
            dim: usize::MAX,
        }
    }
}

/// How a message names a setting: on the command line by its session key and flag
/// (`m = 500 (--m)`), for a session or the app's form by its key alone (`m = 500`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    Flags,
    Keys,
}

impl Naming {
    /// What follows `key = value` in a message: ` (--key)` on the command line.
    pub fn flag(self, key: &str) -> String {
        match self {
            Naming::Flags => format!(" ({})", flag(key)),
            Naming::Keys => String::new(),
        }
    }

    /// How to set it: `--key value`, or `key = value`.
    pub fn setting(self, key: &str, value: &str) -> String {
        match self {
            Naming::Flags => format!("{} {value}", flag(key)),
            Naming::Keys => format!("{key} = {value}"),
        }
    }
}

/// One option as the app's form shows it, read from the clap declaration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptionField {
    /// The session key (= clap's id).
    pub key: String,
    /// The flag, e.g. `--init-lengthscales-from-subset`.
    pub flag: String,
    pub help: String,
    /// The values an enum option takes (empty for numbers).
    pub choices: Vec<String>,
    /// Whether it takes a comma-separated list.
    pub list: bool,
    /// Whether it is a switch without a value (`--hetero`, `--early-stop`): given or not.
    pub switch: bool,
    /// The value the command line uses when the flag is not given, if any.
    pub default: Option<String>,
}

/// Every option of [`MethodOptions`], in declaration order.
pub fn option_fields() -> Vec<OptionField> {
    fields_of(&MethodOptions::augment_args(clap::Command::new("options")))
}

/// The arguments of a clap command as form fields.
fn fields_of(cmd: &clap::Command) -> Vec<OptionField> {
    cmd.get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            let switch = !a.get_action().takes_values();
            Some(OptionField {
                key: a.get_id().to_string(),
                flag: format!("--{long}"),
                help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
                choices: if switch {
                    Vec::new()
                } else {
                    a.get_possible_values()
                        .iter()
                        .map(|v| v.get_name().to_string())
                        .collect()
                },
                list: a.get_value_delimiter().is_some(),
                switch,
                default: (!switch)
                    .then(|| a.get_default_values().first())
                    .flatten()
                    .map(|v| v.to_string_lossy().into_owned()),
            })
        })
        .collect()
}

/// Parse options given as (key, text) pairs with the command line's own parser, so
/// the app's form accepts and rejects exactly what `--flag value` does. A flag
/// option's text is yes/true/on (given) or no/false/off (not given).
pub fn parse_options(pairs: &[(String, String)]) -> std::result::Result<MethodOptions, String> {
    let flags: Vec<String> = option_fields()
        .into_iter()
        .filter(|f| f.switch)
        .map(|f| f.key)
        .collect();
    let mut argv = vec!["options".to_string()];
    for (key, value) in pairs {
        if flags.contains(key) {
            match value.trim().to_ascii_lowercase().as_str() {
                "yes" | "true" | "on" => argv.push(flag(key)),
                "no" | "false" | "off" | "" => {}
                other => {
                    return Err(format!(
                        "{}: '{other}' is not yes or no (it is a switch)",
                        flag(key)
                    ));
                }
            }
            continue;
        }
        argv.push(flag(key));
        // a form's "hyper, points" is the command line's hyper,points
        let parts: Vec<&str> = value.split(',').map(str::trim).collect();
        argv.push(parts.join(","));
    }
    let cmd = crate::arg_values::numbers_as_values(MethodOptions::augment_args(
        clap::Command::new("options"),
    ));
    let matches = cmd.try_get_matches_from(argv).map_err(|e| {
        // clap's message without its usage block
        e.to_string()
            .lines()
            .next()
            .unwrap_or("invalid option")
            .trim_start_matches("error: ")
            .to_string()
    })?;
    MethodOptions::from_arg_matches(&matches).map_err(|e| e.to_string())
}

/// Parse a run given as (name, text) pairs — the keyword arguments of `sgpw.fit` in
/// Python — with `sgpw fit`'s own parser of the [`RunEntry`] declaration, so that they
/// are accepted and refused as its flags are, with its messages. A name is a
/// setting's key (`iterations`, `standardize`, `seeds`) or its flag with underscores
/// for dashes (`iters`, `raw`, `seed`, `init_lengthscales_from_subset`); a switch's
/// text is true or false (for a key whose flag turns it off, as `standardize`'s
/// `--raw` does, false gives the flag); a list is comma-separated. A setting declared
/// later is a keyword at once: nothing here lists them.
pub fn parse_run(pairs: &[(String, String)]) -> std::result::Result<RunEntry, String> {
    let cmd = crate::arg_values::numbers_as_values(RunEntry::augment_args(clap::Command::new(
        "sgpw fit",
    )));
    let mut argv = vec!["sgpw fit".to_string()];
    let mut given: Vec<(&str, &str)> = Vec::new();
    for (name, value) in pairs {
        let arg = cmd.get_arguments().find(|a| {
            a.get_id() == name.as_str()
                || a.get_long().is_some_and(|l| l.replace('-', "_") == *name)
        });
        let Some((arg, long)) = arg.and_then(|a| Some((a, a.get_long()?))) else {
            // clap says it is unknown, and names a similar one
            argv.push(format!("{}={value}", flag(name)));
            continue;
        };
        // a key and its flag name are one setting (`seed` and `seeds`)
        let id = arg.get_id().as_str();
        if let Some((_, first)) = given.iter().find(|(g, _)| *g == id) {
            return Err(format!(
                "{first} and {name} are the same setting (--{long}): give it once"
            ));
        }
        given.push((id, name.as_str()));
        if arg.get_action().takes_values() {
            // `--flag=value`: a value that starts with a dash is still the value
            argv.push(format!("--{long}={value}"));
            continue;
        }
        let on = match value.as_str() {
            "true" => true,
            "false" => false,
            other => {
                return Err(format!(
                    "{name} = {other}: give true or false (--{long} is a switch)"
                ));
            }
        };
        let sets_false = matches!(arg.get_action(), clap::ArgAction::SetFalse);
        if on != (sets_false && arg.get_id() == name.as_str()) {
            argv.push(format!("--{long}"));
        }
    }
    let matches = cmd.try_get_matches_from(argv).map_err(|e| {
        // clap's message and tip without its usage block
        e.to_string()
            .lines()
            .map(str::trim)
            .filter(|l| {
                !(l.is_empty() || l.starts_with("Usage:") || l.starts_with("For more information"))
            })
            .map(|l| l.trim_start_matches("error: "))
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    RunEntry::from_arg_matches(&matches).map_err(|e| e.to_string())
}

/// One run: method × m × seed on a data set.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    pub method: String,
    pub m: usize,
    pub seed: u64,
    pub iters: usize,
    pub standardize: bool,
    pub options: MethodOptions,
}

/// The noise floor every run has unless it says otherwise (`noise_floor`): 10⁻⁶ of the
/// training targets' variance. Far below the noise of any measured data (a standard
/// deviation of 0.1% of the targets'), so it does not change their fits, while noiseless
/// data (a function sampled exactly) cannot drive σ² to 0 and the factorisations with
/// it; one value for the command line, the app and sessions, so that one label means
/// one setup.
pub const DEFAULT_NOISE_FLOOR: f64 = 1e-6;

/// Where inducing inputs start unless a run says otherwise: a random subset of the
/// training inputs. The measurements of docs/results/starts.md found neither k-means nor
/// greedy conditional variance better on average over seeds on every bundled set, so the
/// default stays what every session so far ran.
pub const DEFAULT_INDUCING_INIT: InducingInit = InducingInit::Subset;

/// How starting lengthscales are set unless a run says otherwise: half the input
/// ranges. The √D scaling did not keep vfe out of the all-noise basin on pumadyn-32nm
/// and was not better on average (docs/results/starts.md), so the default stays what
/// every session so far ran.
pub const DEFAULT_LENGTHSCALE_START: LengthscaleStart = LengthscaleStart::Range;

/// How the optimiser parameterises σ0², ℓ, σ² unless a run says otherwise: their
/// logarithms, what every session so far ran (docs/results/starts.md measures softplus).
pub const DEFAULT_POSITIVE: Positive = Positive::Log;

/// The iteration budget every run has unless it says otherwise: L-BFGS stops earlier
/// once it converges, and 500 iterations let the methods with many parameters (m
/// pseudo-inputs of D values each) get there on the problems of the papers.
pub const DEFAULT_ITERATIONS: usize = 500;

/// The size m every run has unless it says otherwise: enough inducing points for a
/// clearly better fit than a handful on most problems, still seconds per fit on tens
/// of thousands of points. Not tuned to any data set; a run with fewer training
/// points than m is refused before it starts.
pub const DEFAULT_M: usize = 50;

/// The method a run has unless it says otherwise (SPGP/FITC, the baseline the papers
/// compare with).
pub const DEFAULT_METHOD: &str = "fitc";

/// A group of runs — one per (m, seed) — on one data set: the one declaration of the
/// general run fields and their defaults. serde reads it as a session's `[[runs]]`
/// entry (an unknown key is an error naming its line), clap as `fit`'s and `bench`'s
/// flags (its doc comments are their `--help`; there `--m` and `--seed` take one
/// value), and the app's run form builds its fields from clap's description of it
/// ([`run_fields`]), as it does for the options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Args)]
#[serde(deny_unknown_fields)]
pub struct RunEntry {
    /// The data set of the runs (a session's [[datasets]] name; the command line reads
    /// --train instead).
    #[arg(skip)]
    pub dataset: String,
    /// Method (see the list below); `spgp` is an alias of `fitc`.
    #[arg(long, default_value = DEFAULT_METHOD)]
    #[serde(default = "default_method")]
    pub method: String,
    /// Name shown for these runs; default: the method and a tag for each setting that
    /// changes what its numbers mean (e.g. fitc-std).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Size of the approximation: inducing points / features for most methods, spectral
    /// points r (2r basis functions) for psds and ssgp; unused by full. One value for
    /// fit and bench, a list (10, 20, 40) for a session or the app.
    #[arg(short = 'm', long, value_delimiter = ',', default_values_t = [DEFAULT_M])]
    #[serde(default = "default_m")]
    pub m: Vec<usize>,
    /// Seed of the initialisation, any subset and fit's --split. One value for fit and
    /// bench, a list (1-5) for a session or the app.
    #[arg(
        long = "seed",
        value_name = "SEED",
        value_delimiter = ',',
        default_value = "1"
    )]
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    /// Iteration budget of the optimiser.
    #[arg(long = "iters", value_name = "ITERS", default_value_t = DEFAULT_ITERATIONS)]
    #[serde(default = "default_iterations")]
    pub iterations: usize,
    /// Fit the raw inputs and targets as they are in the file (--raw; standardize =
    /// false in a session). The default standardizes both to zero mean and unit
    /// variance, recorded in the model file; NLMLs are reported on the raw target scale
    /// either way.
    #[arg(long = "raw", action = clap::ArgAction::SetFalse)]
    #[serde(default = "yes")]
    pub standardize: bool,
    /// Options of the method (the methods list says which each reads).
    #[command(flatten)]
    #[serde(default, skip_serializing_if = "is_default_options")]
    pub options: MethodOptions,
}

fn default_method() -> String {
    DEFAULT_METHOD.to_string()
}
fn default_m() -> Vec<usize> {
    vec![DEFAULT_M]
}
fn default_seeds() -> Vec<u64> {
    vec![1]
}
fn default_iterations() -> usize {
    DEFAULT_ITERATIONS
}
fn yes() -> bool {
    true
}
fn is_default_options(o: &MethodOptions) -> bool {
    *o == MethodOptions::default()
}

impl RunEntry {
    /// The label, or the default one of its setup.
    pub fn label(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => self.spec(0, 0).default_label(),
        }
    }

    /// The spec of one of its runs.
    pub fn spec(&self, m: usize, seed: u64) -> RunSpec {
        RunSpec {
            method: self.method.clone(),
            m,
            seed,
            iters: self.iterations,
            standardize: self.standardize,
            options: self.options.clone(),
        }
    }

    /// The one run a command line asks for: `fit` and `bench` take one m and one
    /// seed.
    pub fn single(&self) -> std::result::Result<RunSpec, String> {
        match (&self.m[..], &self.seeds[..]) {
            ([m], [seed]) => Ok(self.spec(*m, *seed)),
            ([_], _) => Err(format!(
                "give one --seed (not {}): this command trains one model; a session runs several",
                self.seeds.len()
            )),
            _ => Err(format!(
                "give one --m (not {}): this command trains one model; a session runs several",
                self.m.len()
            )),
        }
    }
}

/// The general run fields of [`RunEntry`] as the app's form shows them (the options
/// have [`option_fields`]), in declaration order, from the clap declaration.
pub fn run_fields() -> Vec<OptionField> {
    let cmd = RunEntry::augment_args(clap::Command::new("run"));
    let options: Vec<String> = option_fields().into_iter().map(|f| f.key).collect();
    fields_of(&cmd)
        .into_iter()
        .filter(|f| !options.contains(&f.key))
        .collect()
}

impl RunSpec {
    /// Whether two specs are one setup (settings equal to their defaults count as
    /// unset): runs of one key must be.
    pub fn same_setup(&self, other: &RunSpec) -> bool {
        let canonical = |s: &RunSpec| RunSpec {
            options: s.options.canonical(),
            ..s.clone()
        };
        canonical(self) == canonical(other)
    }

    /// The settings in which two setups differ, as `key = a vs b` (general fields and
    /// options), for messages.
    pub fn differences(&self, other: &RunSpec) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |key: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{key} = {a} vs {b}"));
            }
        };
        differ("method", self.method.clone(), other.method.clone());
        differ(
            "iterations",
            self.iters.to_string(),
            other.iters.to_string(),
        );
        differ(
            "standardize",
            self.standardize.to_string(),
            other.standardize.to_string(),
        );
        let table = |o: &MethodOptions| match toml::Value::try_from(o.canonical()) {
            Ok(toml::Value::Table(t)) => t,
            _ => toml::Table::new(),
        };
        let (a, b) = (table(&self.options), table(&other.options));
        for f in option_fields() {
            let show = |t: &toml::Table| {
                t.get(&f.key).map_or_else(
                    || match f.key.as_str() {
                        "noise_floor" => format!("{DEFAULT_NOISE_FLOOR:e} (the default)"),
                        "inducing_init" => {
                            format!("\"{}\" (the default)", DEFAULT_INDUCING_INIT.name())
                        }
                        "positive" => {
                            format!("\"{}\" (the default)", DEFAULT_POSITIVE.name())
                        }
                        "lengthscale_start" => format!(
                            "\"{}\" (the default)",
                            match DEFAULT_LENGTHSCALE_START {
                                LengthscaleStart::Range => "range",
                                LengthscaleStart::Scaled => "scaled",
                            }
                        ),
                        _ => "(not set)".to_string(),
                    },
                    |v| v.to_string(),
                )
            };
            differ(&f.key, show(&a), show(&b));
        }
        out
    }

    /// The name a run gets without a label: the method, then a short tag for every
    /// setting that changes what its numbers mean, so two setups never share a line in
    /// a chart or a column in a report: `-std` (standardized), the approximation
    /// (`-vfe`), α (`-0.5`), `-g4` (dims), `-hs` (hetero), `-rand` (random spectral
    /// points), the stages (`-hyper+points`), `-subset` (centres), `-rounds3`,
    /// `-sub2000` (subset), `-init1024` (start from a subset fit), `-nf1e-4` (a noise
    /// floor other than the default; `-nf0` none), `-r5` (restarts), `-val0.1` (validation split),
    /// `-es` (early stop), `-zkmeans` / `-zvariance` (an inducing init other than the
    /// default), `-lsscaled` (a lengthscale start other than the default), given starting
    /// values (`-zfile-NAME` for `--inducing-inputs NAME.csv`, `-ls1+2`, `-sv2`, `-nv0.1`),
    /// the kernel when it is not se (`-matern52`). m and the seed are not in it: they have their own columns.
    pub fn default_label(&self) -> String {
        let o = &self.options;
        let mut label = self.method.clone();
        let mut tag = |t: String| {
            label.push('-');
            label.push_str(&t);
        };
        if self.standardize {
            tag("std".into());
        }
        if let Some(k) = o.kernel.filter(|k| !k.is_se()) {
            tag(k.name().into());
        }
        if let Some(a) = o.approx {
            tag(a.name().into());
        }
        if let Some(a) = o.alpha {
            tag(a.to_string());
        }
        if let Some(g) = o.dims {
            tag(format!("g{g}"));
        }
        if o.hetero {
            tag("hs".into());
        }
        if o.init == Some(SpectralInit::Random) {
            tag("rand".into());
        }
        if let Some(stages) = &o.stages {
            let names: Vec<&str> = stages
                .iter()
                .map(|s| match s {
                    Stage::Hyper => "hyper",
                    Stage::Points => "points",
                    Stage::All => "all",
                })
                .collect();
            tag(names.join("+"));
        }
        if o.centres == Some(Centres::Subset) {
            tag("subset".into());
        }
        if let Some(r) = o.rounds {
            tag(format!("rounds{r}"));
        }
        if let Some(n) = o.subset {
            tag(format!("sub{n}"));
        }
        if let Some(n) = o.init_lengthscales_from_subset {
            tag(format!("init{n}"));
        }
        match o.noise_floor {
            Some(f) if f <= 0.0 => tag("nf0".into()),
            Some(f) if f != DEFAULT_NOISE_FLOOR => tag(format!("nf{f:e}")),
            _ => {}
        }
        if let Some(k) = o.restarts.filter(|k| *k > 1) {
            tag(format!("r{k}"));
        }
        if let Some(f) = o.validation {
            tag(format!("val{f}"));
        }
        if o.early_stop {
            tag("es".into());
        }
        if o.no_collapse_restart {
            tag("nocr".into());
        }
        if o.single_start {
            tag("single".into());
        }
        if let Some(z) = o.inducing_init.filter(|z| *z != DEFAULT_INDUCING_INIT) {
            tag(format!("z{}", z.name()));
        }
        match o.lengthscale_start {
            Some(LengthscaleStart::Range)
                if DEFAULT_LENGTHSCALE_START != LengthscaleStart::Range =>
            {
                tag("lsrange".into())
            }
            Some(LengthscaleStart::Scaled)
                if DEFAULT_LENGTHSCALE_START != LengthscaleStart::Scaled =>
            {
                tag("lsscaled".into())
            }
            _ => {}
        }
        if let Some(p) = o.positive.filter(|p| *p != DEFAULT_POSITIVE) {
            tag(p.name().to_string());
        }
        if let Some(path) = &o.inducing_inputs {
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            tag(format!("zfile-{}", stem.unwrap_or_default()));
        }
        if let Some(ls) = &o.init_lengthscales {
            let values: Vec<String> = ls.iter().map(f64::to_string).collect();
            tag(format!("ls{}", values.join("+")));
        }
        if let Some(v) = o.init_signal_variance {
            tag(format!("sv{v}"));
        }
        if let Some(v) = o.init_noise_variance {
            tag(format!("nv{v}"));
        }
        if let Some(fixes) = o.fix.as_deref().filter(|f| !f.is_empty()) {
            let names: Vec<String> = fixes.iter().map(|f| f.to_string()).collect();
            tag(format!("fix-{}", names.join("+")));
        }
        if let Some(b) = o.batch {
            tag(format!("b{b}"));
        }
        if let Some(e) = o.epochs {
            tag(format!("e{e}"));
        }
        if let Some(opt) = o.optimizer {
            tag(opt.name().into());
        }
        if let Some(g) = o.nat_step {
            tag(format!("ng{g}"));
        }
        if let Some(r) = o.lr {
            tag(format!("lr{r}"));
        }
        label
    }
}

/// `MethodOptions` must be usable as a stand-alone clap command (for the form's parser).
#[derive(clap::Parser)]
struct OptionsOnly {
    #[command(flatten)]
    options: MethodOptions,
}

/// The help text of every option, as `--help` prints it (for the README and tests).
pub fn options_help() -> String {
    OptionsOnly::command().render_help().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_come_from_the_declaration() {
        let fields = option_fields();
        let keys: Vec<&str> = fields.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "kernel",
                "subset",
                "init_lengthscales_from_subset",
                "init",
                "stages",
                "centres",
                "approx",
                "alpha",
                "dims",
                "hetero",
                "rounds",
                "select",
                "adapt",
                "hyper_from_subset",
                "discard_cache",
                "bias",
                "noise_floor",
                "restarts",
                "validation",
                "early_stop",
                "inducing_init",
                "lengthscale_start",
                "positive",
                "no_collapse_restart",
                "single_start",
                "inducing_inputs",
                "init_lengthscales",
                "init_signal_variance",
                "init_noise_variance",
                "fix",
                "batch",
                "epochs",
                "optimizer",
                "nat_step",
                "lr",
                "elbo_every"
            ]
        );
        let hetero = &fields[9];
        assert!(hetero.switch && hetero.choices.is_empty() && !fields[8].switch);
        let early = &fields[19];
        assert!(early.switch && early.default.is_none());
        assert_eq!(fields[16].key, "noise_floor");
        assert!(fields[16].help.contains("Default 1e-6"));
        let init = &fields[3];
        assert_eq!(init.choices, ["psds", "random"]);
        assert!(fields[4].list && !init.list);
        assert!(init.help.contains("ssgp"));
        assert_eq!(
            fields[0].choices,
            ["se", "matern12", "matern32", "matern52", "rq"]
        );
    }

    #[test]
    fn the_form_parser_is_the_command_line_parser() {
        let o = parse_options(&[
            ("stages".into(), "hyper,points".into()),
            ("alpha".into(), "0.25".into()),
        ])
        .expect("parses");
        assert_eq!(o.stages, Some(vec![Stage::Hyper, Stage::Points]));
        assert_eq!(o.alpha, Some(0.25));
        // nothing else is set: the noise floor's default is the run's, not the parser's
        assert_eq!(o.set_keys(), ["stages", "alpha"]);
        let o = parse_options(&[("early_stop".into(), "yes".into())]).expect("switch");
        assert!(o.early_stop);
        let e = parse_options(&[("centres".into(), "subsett".into())]).expect_err("bad value");
        assert!(e.contains("subsett") && e.contains("--centres"), "{e}");
        let o = parse_options(&[("dims".into(), "4".into()), ("hetero".into(), "yes".into())])
            .expect("parses");
        assert_eq!((o.dims, o.hetero), (Some(4), true));
        assert_eq!(o.set_keys(), ["dims", "hetero"]);
        let o = parse_options(&[("hetero".into(), "no".into())]).expect("parses");
        assert!(!o.hetero && o.set_keys().is_empty());
        assert!(parse_options(&[("hetero".into(), "maybe".into())]).is_err());
    }

    #[test]
    fn sessions_read_the_same_values() {
        let o: MethodOptions =
            toml::from_str("init = \"random\"\nstages = [\"hyper\", \"all\"]").expect("parses");
        assert_eq!(o.init, Some(SpectralInit::Random));
        let o: MethodOptions = toml::from_str("dims = 4\nhetero = true").expect("parses");
        assert_eq!((o.dims, o.hetero), (Some(4), true));
        assert!(toml::from_str::<MethodOptions>("hetero = \"yes\"").is_err());
        let e = toml::from_str::<MethodOptions>("centres = \"subsett\"").expect_err("bad");
        assert!(e.to_string().contains("subsett"), "{e}");
        assert!(toml::from_str::<MethodOptions>("learning_rate = 3").is_err());
    }

    /// One declaration, one default per setting: the command line with no flags, a
    /// session entry with only its data set and the app's form fields agree.
    #[test]
    fn the_general_fields_have_one_default_each() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            run: RunEntry,
        }
        let cli = <Cli as clap::Parser>::try_parse_from(["x"])
            .expect("parses")
            .run;
        let session: RunEntry = toml::from_str("dataset = \"d\"").expect("parses");
        assert_eq!(
            RunEntry {
                dataset: "d".into(),
                ..cli.clone()
            },
            session
        );
        assert_eq!(
            (
                cli.method.as_str(),
                &cli.m[..],
                &cli.seeds[..],
                cli.iterations,
                cli.standardize
            ),
            (
                DEFAULT_METHOD,
                &[DEFAULT_M][..],
                &[1][..],
                DEFAULT_ITERATIONS,
                true
            )
        );
        assert_eq!(cli.options.noise_floor(), DEFAULT_NOISE_FLOOR);
        let fields = run_fields();
        let keys: Vec<&str> = fields.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            ["method", "label", "m", "seeds", "iterations", "standardize"]
        );
        let default = |k: &str| {
            fields
                .iter()
                .find(|f| f.key == k)
                .and_then(|f| f.default.clone())
        };
        assert_eq!(default("m"), Some(DEFAULT_M.to_string()));
        assert_eq!(default("iterations"), Some(DEFAULT_ITERATIONS.to_string()));
        assert_eq!(default("seeds"), Some("1".into()));
        let raw = <Cli as clap::Parser>::try_parse_from(["x", "--raw", "--m", "7", "--seed", "3"])
            .expect("parses")
            .run;
        assert_eq!(
            raw.single(),
            Ok(RunSpec {
                m: 7,
                seed: 3,
                standardize: false,
                ..cli.single().expect("one")
            })
        );
        let two = <Cli as clap::Parser>::try_parse_from(["x", "--m", "7,8"])
            .expect("parses")
            .run;
        assert!(two.single().expect_err("two m").contains("one --m"));
    }

    /// A run without a floor and one with the default floor are different setups with
    /// different default labels; the default written out is the default.
    #[test]
    fn the_noise_floor_tells_its_setups_apart() {
        let spec = |f: Option<f64>| RunSpec {
            method: "fitc".into(),
            m: 5,
            seed: 1,
            iters: 10,
            standardize: true,
            options: MethodOptions {
                noise_floor: f,
                ..Default::default()
            },
        };
        assert_eq!(spec(None).default_label(), "fitc-std");
        assert_eq!(spec(Some(DEFAULT_NOISE_FLOOR)).default_label(), "fitc-std");
        assert_eq!(spec(Some(0.0)).default_label(), "fitc-std-nf0");
        assert_eq!(spec(Some(1e-4)).default_label(), "fitc-std-nf1e-4");
        assert!(spec(None).same_setup(&spec(Some(DEFAULT_NOISE_FLOOR))));
        assert!(!spec(None).same_setup(&spec(Some(0.0))));
        assert_eq!(
            spec(None).differences(&spec(Some(0.0))),
            ["noise_floor = 1e-6 (the default) vs 0.0"]
        );
    }

    /// Python's keywords are the command line's flags: the same values, defaults and
    /// messages, by key or by flag name.
    #[test]
    fn keywords_parse_as_the_flags_do() {
        let kw = |pairs: &[(&str, &str)]| {
            parse_run(
                &pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<Vec<_>>(),
            )
        };
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            run: RunEntry,
        }
        let cli = |args: &[&str]| {
            <Cli as clap::Parser>::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
                .expect("parses")
                .run
        };
        assert_eq!(kw(&[]).expect("defaults"), cli(&[]));
        assert_eq!(
            kw(&[
                ("method", "pep"),
                ("m", "20"),
                ("seed", "3"),
                ("iterations", "40"),
                ("standardize", "false"),
                ("alpha", "0.25"),
                ("stages", "hyper,points"),
                ("hetero", "true"),
            ])
            .expect("parses"),
            cli(&[
                "--method",
                "pep",
                "--m",
                "20",
                "--seed",
                "3",
                "--iters",
                "40",
                "--raw",
                "--alpha",
                "0.25",
                "--stages",
                "hyper,points",
                "--hetero"
            ])
        );
        // by flag name: raw = true is standardize = false
        assert_eq!(
            kw(&[("iters", "7"), ("raw", "true"), ("seeds", "2")]).expect("parses"),
            cli(&["--iters", "7", "--raw", "--seed", "2"])
        );
        assert!(kw(&[("standardize", "true")]).expect("on").standardize);
        assert!(!kw(&[("hetero", "false")]).expect("off").options.hetero);
        // a negative number is a value, and reaches the option's own check
        assert_eq!(
            kw(&[("noise_floor", "-1")])
                .expect("parses")
                .options
                .noise_floor,
            Some(-1.0)
        );
        let e = kw(&[("alpha", "abc")]).expect_err("not a number");
        assert!(e.starts_with("invalid value 'abc' for '--alpha"), "{e}");
        assert!(!e.contains("Usage"), "{e}");
        let e = kw(&[("approx", "fitcc")]).expect_err("bad choice");
        assert!(e.contains("fitcc") && e.contains("--approx"), "{e}");
        let e = kw(&[("sed", "3")]).expect_err("unknown");
        assert!(e.contains("'--sed'") && e.contains("--seed"), "{e}");
        let e = kw(&[("hetero", "3")]).expect_err("a switch");
        assert!(e.contains("true or false"), "{e}");
        let e = kw(&[("seed", "1"), ("seeds", "2")]).expect_err("twice");
        assert!(
            e.contains("seed and seeds are the same setting (--seed)"),
            "{e}"
        );
        let e = kw(&[("m", "10,20")]).expect("a list").single();
        assert!(e.expect_err("two m").contains("give one --m"));
    }

    /// Starting values: one flag, session key and keyword each, a label tag each (they
    /// change the result), checked for sign and count before any data.
    #[test]
    fn starting_values_are_options_with_tags() {
        let entry = parse_run(&[
            ("init_lengthscales".into(), "1,2.5".into()),
            ("init_signal_variance".into(), "4".into()),
            ("init_noise_variance".into(), "0.01".into()),
        ])
        .expect("parses");
        let o = &entry.options;
        assert_eq!(o.init_lengthscales, Some(vec![1.0, 2.5]));
        assert_eq!(
            (o.init_signal_variance, o.init_noise_variance),
            (Some(4.0), Some(0.01))
        );
        assert!(o.given_start());
        assert_eq!(entry.label(), "fitc-std-ls1+2.5-sv4-nv0.01");
        let session: MethodOptions =
            toml::from_str("init_lengthscales = [1.0, 2.5]\ninit_signal_variance = 4.0\ninit_noise_variance = 0.01")
                .expect("a session reads the same");
        assert_eq!(&session, o);
        let bad = |text: &str| {
            toml::from_str::<MethodOptions>(text)
                .expect("parses")
                .check(100, Naming::Keys)
                .expect_err("refused")
        };
        assert_eq!(
            bad("init_signal_variance = -1.0"),
            "init_signal_variance = -1: must be positive"
        );
        assert!(bad("init_lengthscales = []").contains("is empty"));
        assert!(bad("init_lengthscales = [1.0, 0.0]").contains("0 is not a positive lengthscale"));
        assert!(
            bad("init_noise_variance = 1.0\nhyper_from_subset = 50")
                .starts_with("hyper_from_subset fits the starting σ0², ℓ, σ² itself")
        );
    }

    #[test]
    fn checks_name_the_key_and_the_flag() {
        let o = MethodOptions {
            subset: Some(1),
            ..Default::default()
        };
        let e = o.check(100, Naming::Flags).expect_err("too small");
        assert!(e.contains("subset = 1 (--subset)"), "{e}");
        let e = o.check(100, Naming::Keys).expect_err("too small");
        assert!(e.contains("subset = 1:") && !e.contains("--"), "{e}");
        let o = MethodOptions {
            alpha: Some(1.5),
            ..Default::default()
        };
        assert!(
            o.check(100, Naming::Flags)
                .expect_err("alpha")
                .contains("--alpha")
        );
        assert!(options_help().contains("--init-lengthscales-from-subset"));
    }
}
