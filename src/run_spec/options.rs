//! [`MethodOptions`], the single declaration of every option a run can carry, and how
//! its checks name a setting ([`Naming`]) against the data's shape ([`DataShape`]).

use super::choices::*;
use crate::kernel::{KernelChoice, KernelKind};
use crate::likelihoods::{LikelihoodKind, Link};
use clap::Args;
use serde::{Deserialize, Serialize};

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
    "likelihood",
    "link",
    "ep_damping",
    "exposure",
];

/// Every option a run can carry. Keys a method does not read are rejected when the
/// spec is checked, so a typo never passes silently.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, Args)]
#[serde(deny_unknown_fields)]
pub struct MethodOptions {
    /// The kernel (default se): se, matern12, matern32, matern52 (ARD, learned
    /// lengthscales), rq (also a learned shape α). psds and ssgp take se or matern*;
    /// fifgp, tfifgp and smgp se only. Or an expression of parts, e.g.
    /// "se + se * periodic", values in the data's units (docs/methods.md, Kernels built
    /// from parts), with full, fitc, vfe, dtc, pep, spgp-hs, svgp, greedy, nystrom,
    /// nystrom-opt, eigengp, rvm, and psds and ssgp where the parts have a spectral
    /// form (docs/methods.md §4.5).
    #[arg(long, value_parser = crate::kernel::KernelChoiceParser)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelChoice>,
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
    /// rq_alpha too). With a kernel expression (--kernel), a part's block by its path:
    /// periodic.period, se1.ls, se2.var=4 (data units). Repeat it or separate with
    /// commas; an unknown name lists the method's blocks. The value stays in the model
    /// file's `fixed` list.
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
    /// svgp: evaluate the full-data ELBO every K steps for the record (default: at the
    /// start and the end only).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elbo_every: Option<usize>,
    /// svgp: the feature family q(u) is over (default pseudo: inducing inputs): fifgp,
    /// tfifgp or smgp (inter-domain features, SE kernel), psds or ssgp (spectral
    /// points, fixed or learned: m points give 2m trigonometric weights). The family's
    /// parameters are learned with σ0², ℓ, σ².
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<SvgpFeatures>,
    /// Any method: the observation model p(y | f) (default gaussian): gaussian, studentt
    /// (heavy-tailed noise, learned scale and degrees of freedom), bernoulli (binary
    /// classification, probit; the target's two labels are mapped to classes 0 and 1,
    /// the smaller one 0), poisson (counts, rate exp f). The collapsed methods take
    /// gaussian only; svgp takes any.
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likelihood: Option<LikelihoodKind>,
    /// svgp: Gauss–Hermite points for the expected log-likelihood of a likelihood with
    /// no closed form (default 20, as GPflow).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quadrature_points: Option<usize>,
    /// bernoulli: the link p(y = 1 | f) = Φ(f) (probit, the default, as GPflow and GPML)
    /// or 1/(1 + e^−f) (logit). svgp takes either; EP (fitc, dtc, pep, full) takes probit
    /// only, its moments being closed-form for it.
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    /// bernoulli with EP (fitc, dtc, pep, full): the damping δ in (0, 1] of the site
    /// updates, each site moving to δ·(its matched value) + (1 − δ)·(its old one)
    /// (default 1: undamped, as GPML); a smaller δ calms an EP that oscillates.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ep_damping: Option<f64>,
    /// poisson: the column of each row's exposure E > 0 (a time, an area, a population),
    /// so that y ~ Poisson(E·exp f): log E is added to f in the likelihood, not an input
    /// of the kernel, and f is the log rate per unit of exposure. Absent: E = 1.
    #[arg(long, value_name = "COLUMN")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposure: Option<String>,
}

impl MethodOptions {
    /// The plain kind the run's starting values are for ([`KernelChoice::kind`]; se by
    /// default and for an expression).
    pub fn kernel_kind(&self) -> KernelKind {
        self.kernel
            .as_ref()
            .map_or(KernelKind::Se, KernelChoice::kind)
    }

    /// The kernel expression `--kernel` gives, if it gives one.
    pub fn kernel_expression(&self) -> Option<&str> {
        self.kernel.as_ref().and_then(KernelChoice::expression)
    }

    /// The noise floor a run uses: its own, else [`DEFAULT_NOISE_FLOOR`] (0: none).
    pub fn noise_floor(&self) -> f64 {
        self.noise_floor.unwrap_or(DEFAULT_NOISE_FLOOR)
    }

    /// The run's likelihood: its own choice, else gaussian.
    pub fn likelihood(&self) -> LikelihoodKind {
        self.likelihood.unwrap_or_default()
    }

    /// Gauss–Hermite points of the run's expected log-likelihood: its own, else
    /// [`DEFAULT_QUADRATURE_POINTS`].
    pub fn quadrature_points(&self) -> usize {
        self.quadrature_points.unwrap_or(DEFAULT_QUADRATURE_POINTS)
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
        if o.kernel
            .as_ref()
            .is_some_and(|k| *k == KernelChoice::Plain(KernelKind::Se))
        {
            o.kernel = None;
        }
        if o.likelihood == Some(LikelihoodKind::Gaussian) {
            o.likelihood = None;
        }
        if o.quadrature_points == Some(DEFAULT_QUADRATURE_POINTS) {
            o.quadrature_points = None;
        }
        if o.link == Some(Link::Probit) {
            o.link = None;
        }
        if o.ep_damping == Some(DEFAULT_EP_DAMPING) {
            o.ep_damping = None;
        }
        o
    }

    /// Names of the options that are set, in declaration order (from serde, so this
    /// list cannot drift from the declaration).
    pub fn set_keys(&self) -> Vec<String> {
        let declared = MethodOptions::augment_args(clap::Command::new("options"));
        let set: Vec<String> = match toml::Value::try_from(self) {
            Ok(toml::Value::Table(t)) => t.keys().cloned().collect(),
            _ => Vec::new(),
        };
        declared
            .get_arguments()
            .map(|a| a.get_id().to_string())
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
        if let Some(q) = self.quadrature_points
            && !(1..=MAX_QUADRATURE_POINTS).contains(&q)
        {
            return Err(format!(
                "quadrature_points = {q}{}: between 1 and {MAX_QUADRATURE_POINTS}",
                flag("quadrature_points")
            ));
        }
        if self.quadrature_points.is_some() && self.likelihood() == LikelihoodKind::Gaussian {
            return Err(format!(
                "quadrature_points{} is for a likelihood without a closed form; the \
                 gaussian's is exact (give {} or leave it out)",
                flag("quadrature_points"),
                naming.setting("likelihood", "studentt")
            ));
        }
        if self.link.is_some() && self.likelihood() != LikelihoodKind::Bernoulli {
            return Err(format!(
                "link{} chooses the bernoulli likelihood's link; give {} or leave it out",
                flag("link"),
                naming.setting("likelihood", "bernoulli")
            ));
        }
        if let Some(d) = self.ep_damping {
            if !(d > 0.0 && d <= 1.0) {
                return Err(format!(
                    "ep_damping = {d}{}: the damping must be in (0, 1] (1: undamped)",
                    flag("ep_damping")
                ));
            }
            if self.likelihood() != LikelihoodKind::Bernoulli {
                return Err(format!(
                    "ep_damping{} damps expectation propagation, which fits the bernoulli \
                     likelihood; give {} or leave it out",
                    flag("ep_damping"),
                    naming.setting("likelihood", "bernoulli")
                ));
            }
        }
        if let Some(column) = &self.exposure {
            if column.trim().is_empty() {
                return Err(format!(
                    "exposure{} is empty: name the column of each row's exposure",
                    flag("exposure")
                ));
            }
            if self.likelihood() != LikelihoodKind::Poisson {
                return Err(format!(
                    "exposure{} scales the rate of the poisson likelihood (y ~ Poisson(E·exp \
                     f)); the {} likelihood has none: give {} or leave it out",
                    flag("exposure"),
                    self.likelihood(),
                    naming.setting("likelihood", "poisson")
                ));
            }
            if self.validation.is_some() {
                return Err(format!(
                    "exposure{} with validation{}: the held-out rows are scored without \
                     their exposures; leave out validation",
                    flag("exposure"),
                    flag("validation")
                ));
            }
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

/// Gauss–Hermite points unless a run says otherwise (GPflow's 20).
pub const DEFAULT_QUADRATURE_POINTS: usize = crate::likelihoods::DEFAULT_QUADRATURE_POINTS;

/// EP's damping unless a run says otherwise: 1, undamped, as GPML's `infEP` and
/// `infFITC_EP` (damping only slows an EP that converges; docs/results/classification-ep.md).
pub const DEFAULT_EP_DAMPING: f64 = 1.0;

/// The most Gauss–Hermite points a run may ask for: the rule's own limit.
pub const MAX_QUADRATURE_POINTS: usize = crate::likelihoods::quadrature::MAX_POINTS;
