//! What one run is — method × m × seed with its options — declared once.
//!
//! [`MethodOptions`] is the single declaration of every option a run can carry: serde
//! reads it from sessions (an unknown key or value is an error naming its line), clap
//! from the command line (flattened into `fit` and `bench`; its doc comments are the
//! `--help` text), and the app's run form lists its fields from clap's description of
//! the same struct ([`option_fields`]) and parses them with clap ([`parse_options`]).
//! Each method names the options it reads; a spec is checked against its method
//! before any worker sees it (`RunSpec::check` in `methods`, which knows the registry).

use crate::likelihoods::LikelihoodKind;
use clap::Args;
use serde::{Deserialize, Serialize};

pub use crate::kernel::KernelKind;

mod choices;
mod form;
mod options;

pub use choices::{
    ApproxKind, Centres, InducingInit, LengthscaleStart, Positive, Select, SpectralInit, Stage,
    SvgpFeatures, SvgpOptimizer,
};
pub use form::{OptionField, option_fields, options_help, parse_options, parse_run, run_fields};
pub use options::{
    DEFAULT_EP_DAMPING, DEFAULT_INDUCING_INIT, DEFAULT_LENGTHSCALE_START, DEFAULT_NOISE_FLOOR,
    DEFAULT_POSITIVE, DataShape, GENERAL_OPTIONS, MethodOptions, Naming, flag,
};

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
    /// the kernel when it is not se (`-matern52`), the likelihood when it is not gaussian
    /// (`-bernoulli`), its quadrature points when given (`-gh30`), the logit link
    /// (`-logit`) and EP's damping when not 1 (`-damp0.5`). m and the seed are not in it: they have their own columns.
    pub fn default_label(&self) -> String {
        let o = &self.options;
        let mut label = self.method.clone();
        let mut tag = |t: String| {
            label.push('-');
            label.push_str(&t);
        };
        if let Some(f) = o.family.filter(|f| *f != SvgpFeatures::Pseudo) {
            tag(f.name().into());
        }
        if self.standardize {
            tag("std".into());
        }
        if let Some(k) = o
            .kernel
            .as_ref()
            .filter(|k| k.expression().is_some() || !k.kind().is_se())
        {
            // an expression without its spaces, so the label stays one word
            tag(k.to_string().split_whitespace().collect());
        }
        if let Some(l) = o.likelihood.filter(|l| *l != LikelihoodKind::Gaussian) {
            tag(l.name().into());
        }
        if let Some(q) = o.quadrature_points {
            tag(format!("gh{q}"));
        }
        if o.link == Some(crate::likelihoods::Link::Logit) {
            tag("logit".into());
        }
        if let Some(d) = o.ep_damping.filter(|d| *d != DEFAULT_EP_DAMPING) {
            tag(format!("damp{d}"));
        }
        if let Some(e) = &o.exposure {
            tag(format!("exp_{}", e.split_whitespace().collect::<String>()));
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
