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
                "elbo_every",
                "family",
                "likelihood",
                "quadrature_points",
                "link",
                "ep_damping",
                "exposure"
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

    /// The logit link and a damping other than 1 change a run's numbers, so its label
    /// says so; the defaults written out are the defaults.
    #[test]
    fn the_link_and_the_damping_tag_the_label() {
        let spec = |link, ep_damping| RunSpec {
            method: "svgp".into(),
            m: 5,
            seed: 1,
            iters: 10,
            standardize: false,
            options: MethodOptions {
                likelihood: Some(LikelihoodKind::Bernoulli),
                link,
                ep_damping,
                ..Default::default()
            },
        };
        use crate::likelihoods::Link;
        assert_eq!(spec(None, None).default_label(), "svgp-bernoulli");
        assert_eq!(
            spec(Some(Link::Probit), Some(1.0)).default_label(),
            "svgp-bernoulli"
        );
        assert_eq!(
            spec(Some(Link::Logit), None).default_label(),
            "svgp-bernoulli-logit"
        );
        assert_eq!(
            spec(None, Some(0.5)).default_label(),
            "svgp-bernoulli-damp0.5"
        );
        assert!(spec(None, None).same_setup(&spec(Some(Link::Probit), Some(1.0))));
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
