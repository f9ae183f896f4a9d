use sgpw::likelihoods::LikelihoodKind;
use sgpw::run_spec::*;

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
    use sgpw::likelihoods::Link;
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
    let session: MethodOptions = toml::from_str(
        "init_lengthscales = [1.0, 2.5]\ninit_signal_variance = 4.0\ninit_noise_variance = 0.01",
    )
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
