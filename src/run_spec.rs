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

/// The likelihood approximation a low-rank method uses (docs/methods.md §1).
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

/// How greedy chooses its next basis point (Keerthi & Chu 2006, docs/methods.md §6).
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

/// Options that apply to every method; the others are read by some methods only.
pub const GENERAL_OPTIONS: &[&str] = &[
    "subset",
    "init_lengthscales_from_subset",
    "noise_floor",
    "restarts",
    "validation",
    "early_stop",
];

/// Every option a run can carry. Keys a method does not read are rejected when the
/// spec is checked, so a typo never passes silently.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, Args)]
#[serde(deny_unknown_fields)]
pub struct MethodOptions {
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
    /// greedy: σ0², ℓ, σ² from a full GP fitted on this many random training points (up
    /// to 200 iterations), then fixed unless --adapt: the paper's FIXED baselines
    /// (default min(n, 2000) unless --adapt or --init-lengthscales-from-subset).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyper_from_subset: Option<usize>,
    /// greedy with kappa, dmax or sb: keep up to this many discarded kernel rows and
    /// reuse them when their point is drawn again (default 0: none).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard_cache: Option<usize>,
    /// Any method: keep σ² above this fraction of the training targets' variance (σ² is
    /// fitted as floor + e^θ), so noiseless data cannot drive it to zero; 0 turns it off.
    /// The command line and the app start from 1e-6; a session run without the key has
    /// no floor, as before the option existed.
    #[arg(long, default_value = "1e-6")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<f64>,
    /// Any method: K seeded starts (start 0 is the run's own seed), each optimised for a
    /// tenth of the iteration budget (at least 10 iterations); the one with the best
    /// objective continues with the rest of the budget.
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
}

impl MethodOptions {
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
    /// is known), α's range, a non-empty schedule. Messages name the session key and
    /// the flag.
    pub fn check(&self, n_train: usize) -> std::result::Result<(), String> {
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
                    "{key} = {s} ({}): must be between 2 and the training size {}",
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
                "alpha = {a} (--alpha): power EP needs 0 < alpha ≤ 1 (1 is FITC, → 0 is VFE)"
            ));
        }
        if let Some(f) = self.noise_floor
            && !(f.is_finite() && (0.0..0.5).contains(&f))
        {
            return Err(format!(
                "noise_floor = {f} (--noise-floor): a fraction of the target variance in [0, 0.5)"
            ));
        }
        if let Some(k) = self.restarts
            && !(1..=100).contains(&k)
        {
            return Err(format!("restarts = {k} (--restarts): between 1 and 100"));
        }
        if let Some(v) = self.validation
            && !(v > 0.0 && v <= 0.5)
        {
            return Err(format!(
                "validation = {v} (--validation): a fraction of the training rows in (0, 0.5]"
            ));
        }
        if self.early_stop && self.validation.is_none() {
            return Err(
                "early_stop (--early-stop) needs a validation set (--validation 0.1)".into(),
            );
        }
        if self.rounds == Some(0) {
            return Err(
                "rounds = 0 (--rounds): the sequential schedule needs at least 1 round".into(),
            );
        }
        if self.adapt == Some(0) {
            return Err(
                "adapt = 0 (--adapt): give at least 1 round, or leave it out to keep the \
                 hyperparameters fixed"
                    .into(),
            );
        }
        if let Some(k) = self.adapt
            && k > 100
        {
            return Err(format!(
                "adapt = {k} (--adapt): between 1 and 100 rounds (each selects a whole basis)"
            ));
        }
        if self.stages.as_ref().is_some_and(Vec::is_empty) {
            return Err("stages (--stages) is empty; give e.g. hyper,points".into());
        }
        if self.dims == Some(0) {
            return Err("dims = 0 (--dims): the reduced dimension G must be at least 1".into());
        }
        Ok(())
    }
}

/// The command-line flag of an option key.
pub fn flag(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}

/// One option as the app's form shows it, read from the clap declaration.
#[derive(Clone, Debug, PartialEq)]
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
    let cmd = MethodOptions::augment_args(clap::Command::new("options"));
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
    let cmd = MethodOptions::augment_args(clap::Command::new("options"));
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

/// The noise floor the command line and the app start from (`--noise-floor`'s default).
pub const DEFAULT_NOISE_FLOOR: f64 = 1e-6;

impl RunSpec {
    /// The name a run gets without a label: the method, then a short tag for every
    /// setting that changes what its numbers mean, so two setups never share a line in
    /// a chart or a column in a report: `-std` (standardized), the approximation
    /// (`-vfe`), α (`-0.5`), `-g4` (dims), `-hs` (hetero), `-rand` (random spectral
    /// points), the stages (`-hyper+points`), `-subset` (centres), `-rounds3`,
    /// `-sub2000` (subset), `-init1024` (start from a subset fit), `-nf1e-4` (a noise
    /// floor other than the default), `-r5` (restarts), `-val0.1` (validation split),
    /// `-es` (early stop). m and the seed are not in it: they have their own columns.
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
        if let Some(f) = o
            .noise_floor
            .filter(|f| *f > 0.0 && *f != DEFAULT_NOISE_FLOOR)
        {
            tag(format!("nf{f:e}"));
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
                "noise_floor",
                "restarts",
                "validation",
                "early_stop"
            ]
        );
        let hetero = &fields[8];
        assert!(hetero.switch && hetero.choices.is_empty() && !fields[7].switch);
        let early = fields.last().expect("early_stop");
        assert!(early.switch && early.default.is_none());
        assert_eq!(fields[14].key, "noise_floor");
        assert_eq!(fields[14].default.as_deref(), Some("1e-6"));
        let init = &fields[2];
        assert_eq!(init.choices, ["psds", "random"]);
        assert!(fields[3].list && !init.list);
        assert!(init.help.contains("ssgp"));
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
        // the noise floor's command-line default comes along
        assert_eq!(o.set_keys(), ["stages", "alpha", "noise_floor"]);
        let o = parse_options(&[("early_stop".into(), "yes".into())]).expect("switch");
        assert!(o.early_stop);
        let e = parse_options(&[("centres".into(), "subsett".into())]).expect_err("bad value");
        assert!(e.contains("subsett") && e.contains("--centres"), "{e}");
        let o = parse_options(&[("dims".into(), "4".into()), ("hetero".into(), "yes".into())])
            .expect("parses");
        assert_eq!((o.dims, o.hetero), (Some(4), true));
        assert_eq!(o.set_keys(), ["dims", "hetero", "noise_floor"]);
        let o = parse_options(&[("hetero".into(), "no".into())]).expect("parses");
        assert!(!o.hetero && o.set_keys() == ["noise_floor"]);
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

    #[test]
    fn checks_name_the_key_and_the_flag() {
        let o = MethodOptions {
            subset: Some(1),
            ..Default::default()
        };
        let e = o.check(100).expect_err("too small");
        assert!(e.contains("subset = 1") && e.contains("--subset"), "{e}");
        let o = MethodOptions {
            alpha: Some(1.5),
            ..Default::default()
        };
        assert!(o.check(100).expect_err("alpha").contains("--alpha"));
        assert!(options_help().contains("--init-lengthscales-from-subset"));
    }
}
