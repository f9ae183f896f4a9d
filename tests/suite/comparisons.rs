//! Comparisons that do not mislead (issue 17): setups told apart by their labels, NLMLs
//! on one scale, validation that only watches, early stopping that keeps the best
//! iterate, restarts that reduce to a plain run, a noise floor that holds, seeds that
//! say whether they matter, and reports that flag runs worse than the constant
//! predictor and count identical repeats once.

use crate::common;

use common::{ex, fit, options};
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sgpw::data::Dataset;
use sgpw::methods::pseudo::Inducing;
use sgpw::model_file::ModelFile;
use sgpw::optim::Stop;
use sgpw::run_spec::{MethodOptions, RunSpec};
use sgpw::session::report;
use sgpw::session::{NlmlScale, Session};
use sgpw::train::{FitResult, Predictor};

fn spec(method: &str, m: usize, iters: usize, standardize: bool, o: MethodOptions) -> RunSpec {
    RunSpec {
        method: method.into(),
        m,
        seed: 1,
        iters,
        standardize,
        options: o,
    }
}

/// Two noisy inputs in units far from 1 (so standardizing matters), a target of
/// mean 1000 and sd ~50, and a test set.
fn dataset(n: usize, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut draw = |k: usize| {
        let x = DMatrix::from_fn(k, 2, |_, d| {
            let u: f64 = rng.random_range(-2.0..2.0);
            if d == 0 { 3.0 + 10.0 * u } else { 0.01 * u }
        });
        let y = DVector::from_fn(k, |i, _| {
            let (a, b) = (x[(i, 0)] - 3.0, x[(i, 1)]);
            1000.0
                + 50.0 * ((a / 10.0).sin() + (200.0 * b).cos())
                + 5.0 * rng.random_range(-1.0..1.0)
        });
        (x, y)
    };
    let (x_train, y_train) = draw(n);
    let (x_test, y_test) = draw(n / 2);
    Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into()],
        target_name: "y".into(),
        x_train,
        y_train,
        x_test: Some(x_test),
        y_test: Some(y_test),
        notes: vec![],
    }
}

fn run(ds: &Dataset, s: &RunSpec) -> FitResult {
    fit(ds, s).0.unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

#[test]
fn default_labels_tell_setups_apart() {
    let raw = spec("fitc", 10, 10, false, MethodOptions::default());
    let std = spec("fitc", 10, 10, true, MethodOptions::default());
    assert_eq!(raw.default_label(), "fitc");
    assert_eq!(std.default_label(), "fitc-std");
    assert_ne!(raw.default_label(), std.default_label());
    // options that change what the numbers mean are in it; the CLI's default noise
    // floor is not
    let o = options("restarts = 5\nvalidation = 0.1\nearly_stop = true\nnoise_floor = 1e-6");
    assert_eq!(
        spec("fitc", 10, 10, true, o).default_label(),
        "fitc-std-r5-val0.1-es"
    );
    assert_eq!(
        spec("pep", 10, 10, false, options("alpha = 0.5")).default_label(),
        "pep-0.5"
    );
    assert_eq!(
        spec("ssgp", 10, 10, true, options("init = \"random\"")).default_label(),
        "ssgp-std-rand"
    );
    // a session run without a label gets the default label of its setup: in schema 2
    // standardized unless it says otherwise, in schema 1 raw and named after the method
    let text = |version: u32, extra: &str| {
        format!(
            "schema_version = {version}\nname = \"t\"\n[[datasets]]\nname = \"d\"\ntrain = \"d.csv\"\n\
             [[runs]]\ndataset = \"d\"\nmethod = \"fitc\"\nm = [5]\n{extra}"
        )
    };
    let key = |t: &str| {
        let s = Session::parse(t).expect("parses");
        let (k, sp) = s.all_runs().remove(0);
        (k.label, sp.standardize)
    };
    assert_eq!(key(&text(2, "")), ("fitc-std".to_string(), true));
    assert_eq!(
        key(&text(2, "standardize = false\n")),
        ("fitc".to_string(), false)
    );
    assert_eq!(key(&text(1, "")), ("fitc".to_string(), false));
    assert_eq!(
        key(&text(1, "standardize = true\n")),
        ("fitc".to_string(), true)
    );
}

#[test]
fn a_v1_session_is_written_back_as_v3_with_its_defaults_explicit() {
    let v1 = r#"
schema_version = 1
name = "old"
[[datasets]]
name = "d"
train = "d.csv"
[[runs]]
dataset = "d"
method = "fitc"
m = [5]
[[runs]]
dataset = "d"
method = "vfe"
m = [5]
seeds = [1, 2]
standardize = true
[[results]]
dataset = "d"
label = "fitc"
m = 5
seed = 1
method = "fitc"
status = "done"
nlml = 10.0
[[results]]
dataset = "d"
label = "vfe"
m = 5
seed = 1
method = "vfe"
status = "done"
nlml = 3.0
nmse = 0.5
mnlp = 1.0
[[results]]
dataset = "d"
label = "vfe"
m = 5
seed = 2
method = "vfe"
status = "done"
nlml = -3.0
nmse = 0.5
mnlp = 1.0
constant_mnlp = 2.0
"#;
    let s = Session::parse(v1).expect("parses");
    let scales: Vec<Option<NlmlScale>> = s.results.iter().map(|r| r.nlml_scale).collect();
    // raw run: raw; standardized without constant_mnlp: unknown; with it: raw
    assert_eq!(scales, [Some(NlmlScale::Raw), None, Some(NlmlScale::Raw)]);
    let text = s.to_toml().expect("writes");
    assert!(text.starts_with("schema_version = 4"), "{text}");
    // version 1 had no noise floor: written out, so the runs keep their meaning
    assert!(text.contains("noise_floor = 0.0"), "{text}");
    assert!(
        text.contains("label = \"fitc\"") && text.contains("standardize = false"),
        "{text}"
    );
    assert!(text.contains("nlml_scale = \"raw\""), "{text}");
    let again = Session::parse(&text).expect("reparses");
    assert_eq!(again.all_runs(), s.all_runs());
    assert_eq!(again.results, s.results);
}

/// The same FITC model in raw units: ℓ and the pseudo-inputs scaled back to the
/// inputs' units, σ0², σ², the floor and the jitter multiplied by the target variance.
fn raw_model(m: &ModelFile) -> ModelFile {
    let s = m.standardize.as_ref().expect("standardized");
    let v = s.target_scale * s.target_scale;
    let mut r = m.clone();
    r.standardize = None;
    r.posterior = None;
    r.fit = None;
    r.hyper.signal_variance *= v;
    r.hyper.noise_variance *= v;
    r.noise_floor = m.noise_floor.map(|f| f * v);
    r.jitter = m.jitter.map(|j| j * v);
    for (l, sc) in r.hyper.lengthscales.iter_mut().zip(&s.input_scale) {
        *l *= sc;
    }
    let mut ind = r.require::<Inducing>().expect("inducing points");
    for z in &mut ind.points {
        for (d, v) in z.iter_mut().enumerate() {
            *v = s.input_center[d] + s.input_scale[d] * *v;
        }
    }
    r.set(&ind);
    r
}

#[test]
fn raw_scale_nlml_of_a_standardized_run_is_the_raw_models_nlml() {
    let ds = dataset(120, 3);
    let r = run(&ds, &spec("fitc", 8, 40, true, MethodOptions::default()));
    let raw = raw_model(&r.model);
    let method = sgpw::methods::get("fitc").expect("fitc");
    let data = sgpw::train::model_data(&raw, &ds.x_train, ds.y_train.as_slice()).expect("data");
    let direct = method.nlml(&raw, &data, &ex()).expect("nlml");
    let rel = (r.nlml - direct).abs() / direct.abs();
    assert!(
        rel < 1e-10,
        "raw-scale {} vs raw model {direct} (rel {rel:e})",
        r.nlml
    );
    // and it is not the model-unit value: the offset n·log sd is far from zero here
    let units = method
        .nlml(&r.model, &sgpw::train::prepare(&ds, true).0, &ex())
        .expect("nlml");
    assert!((units - direct).abs() > 100.0, "{units} vs {direct}");
    // the trace's last value is the same raw-scale number
    let last = *r.trace.last().expect("trace");
    assert!(
        (last - r.nlml).abs() <= 1e-8 * r.nlml.abs(),
        "{last} vs {}",
        r.nlml
    );
}

fn bits(m: &ModelFile) -> String {
    // every parameter, exactly (TOML writes the shortest round-tripping decimals)
    let mut m = m.clone();
    m.fit = None;
    m.posterior = None;
    toml::to_string(&m).expect("writes")
}

#[test]
fn validation_scoring_does_not_change_the_fitted_parameters() {
    let ds = dataset(150, 5);
    let watched = run(&ds, &spec("fitc", 8, 60, true, options("validation = 0.2")));
    assert!(
        watched.validation.len() >= 5,
        "scored {} times",
        watched.validation.len()
    );
    // the same fit rows without a validation set: nothing watches the optimiser
    let (fit_rows, _, _) = sgpw::train::split_validation(&ds, 0.2, 1).expect("splits");
    let plain = run(
        &fit_rows,
        &spec("fitc", 8, 60, true, MethodOptions::default()),
    );
    assert_eq!(bits(&watched.model), bits(&plain.model));
    assert_eq!(watched.trace, plain.trace);
    assert_eq!(watched.nlml.to_bits(), plain.nlml.to_bits());
    assert!(watched.best_iteration.is_none());
}

#[test]
fn early_stop_returns_the_best_validation_iterate() {
    let ds = dataset(150, 7);
    let s = spec(
        "fitc",
        30,
        300,
        true,
        options("validation = 0.2\nearly_stop = true"),
    );
    let r = run(&ds, &s);
    let best = r.best_iteration.expect("a best iteration");
    let min = r
        .validation
        .iter()
        .map(|v| v.mnlp)
        .fold(f64::INFINITY, f64::min);
    let at = r
        .validation
        .iter()
        .find(|v| v.iteration == best)
        .expect("the best iteration was scored");
    assert_eq!(at.mnlp, min, "best_iteration is not the minimum");
    // the returned parameters give that validation MNLP again
    let (fit_rows, xv, yv) = sgpw::train::split_validation(&ds, 0.2, 1).expect("splits");
    let p = Predictor::new(
        r.model.clone(),
        Some((&fit_rows.x_train, fit_rows.y_train.as_slice())),
    )
    .expect("predictor");
    let pred = p.predict(&xv).expect("predicts");
    let mnlp = sgpw::metrics::mnlp(&yv, &pred.mean, &pred.var_noisy);
    assert!(
        (mnlp - min).abs() <= 1e-10 * min.abs().max(1.0),
        "kept parameters give {mnlp}, best recorded {min}"
    );
    // the fit ran on after the best iterate (patience), and that was not kept
    let last = r.validation.last().expect("scores").iteration;
    assert!(last >= best, "{last} < {best}");
}

#[test]
fn one_restart_is_a_plain_run() {
    let ds = dataset(100, 9);
    let plain = run(&ds, &spec("fitc", 6, 40, true, MethodOptions::default()));
    let one = run(&ds, &spec("fitc", 6, 40, true, options("restarts = 1")));
    assert_eq!(bits(&one.model), bits(&plain.model));
    assert_eq!(one.trace, plain.trace);
    assert_eq!(one.iterations, plain.iterations);
    assert_eq!(one.nlml.to_bits(), plain.nlml.to_bits());
    // and K > 1 is not: the label says so too
    let five = spec("fitc", 6, 40, true, options("restarts = 5"));
    assert_ne!(five.default_label(), "fitc-std");
}

#[test]
fn the_noise_floor_holds_on_noiseless_sinc() {
    let n = 200;
    let x = DMatrix::from_fn(n, 1, |i, _| -10.0 + 20.0 * i as f64 / (n - 1) as f64);
    let y = DVector::from_fn(n, |i, _| {
        let t = std::f64::consts::PI * x[(i, 0)];
        if t == 0.0 { 1.0 } else { t.sin() / t }
    });
    let ds = Dataset {
        classes: None,
        feature_names: vec!["x".into()],
        target_name: "y".into(),
        x_train: x,
        y_train: y.clone(),
        x_test: None,
        y_test: None,
        notes: vec![],
    };
    let ybar = y.mean();
    let var = y.iter().map(|v| (v - ybar).powi(2)).sum::<f64>() / n as f64;
    for standardize in [false, true] {
        let r = run(
            &ds,
            &spec("fitc", 20, 300, standardize, options("noise_floor = 1e-6")),
        );
        // σ² in the target's units
        let scale = r.model.standardize.as_ref().map_or(1.0, |s| s.target_scale);
        let s2 = r.model.hyper.noise_variance * scale * scale;
        let floor = r.model.noise_floor.expect("floor recorded") * scale * scale;
        assert!(
            (floor - 1e-6 * var).abs() <= 1e-9 * floor,
            "floor {floor:e} vs 1e-6·var(y) {:e}",
            1e-6 * var
        );
        assert!(
            s2 >= 1e-6 * var * (1.0 - 1e-12),
            "σ² = {s2:e} below the floor"
        );
        assert_ne!(r.stop, Stop::LineSearchFailed, "standardize {standardize}");
        assert!(r.nlml.is_finite());
    }
}

/// Methods whose initialisation declares it does not use the seed give bitwise
/// identical fits for two seeds; those that declare they do (random subsets and
/// frequencies) give different ones.
#[test]
fn seed_dependence_is_declared_honestly() {
    let data = common::toy_data(60, 2, 4);
    let ds = Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into()],
        target_name: "y".into(),
        x_train: data.x.clone(),
        y_train: DVector::from_vec(data.y.clone()),
        x_test: None,
        y_test: None,
        notes: vec![],
    };
    for method in sgpw::methods::registry() {
        let name = method.name();
        // each method's own declaration, without the default second start (whose
        // subset draw is declared below; its end may lose to the first start's with
        // either seed)
        let mut o = MethodOptions {
            single_start: true,
            ..MethodOptions::default()
        };
        if matches!(name, "spgp-dr" | "pca-spgp") {
            o.dims = Some(1);
        }
        let s1 = RunSpec {
            seed: 1,
            ..spec(name, 4, 5, true, o)
        };
        let s2 = RunSpec {
            seed: 2,
            ..s1.clone()
        };
        let (a, b) = (run(&ds, &s1), run(&ds, &s2));
        let same = bits(&a.model) == bits(&b.model) && a.trace == b.trace;
        let declared = s1.seed_dependent();
        if !declared {
            assert!(
                same,
                "{name}: declared seed-independent, but seeds 1 and 2 differ"
            );
        } else if !name.starts_with("eigengp") && !name.starts_with("nystrom") {
            // (k-means from two seeded starts may well find the same centres)
            assert!(
                !same,
                "{name}: declared seed-dependent, but seeds 1 and 2 agree"
            );
        }
    }
    let ssgp = spec("ssgp", 4, 5, true, options("single_start = true"));
    assert!(!ssgp.seed_dependent() && ssgp.seed_uses().is_empty());
    let two = spec("ssgp", 4, 5, true, MethodOptions::default());
    assert_eq!(two.seed_uses(), ["second start"]);
    let random = spec(
        "ssgp",
        4,
        5,
        true,
        options("init = \"random\"\nsingle_start = true"),
    );
    assert_eq!(random.seed_uses(), ["initialisation"]);
    // --validation fits from one start
    let val = spec("ssgp", 4, 5, true, options("validation = 0.1"));
    assert_eq!(val.seed_uses(), ["validation"]);
    let svgp = spec("svgp", 4, 5, true, MethodOptions::default());
    assert!(!svgp.seed_uses().contains(&"second start"));
    assert!(spec("fitc", 4, 5, true, MethodOptions::default()).seed_dependent());
}

const REPORT: &str = r#"
schema_version = 2
name = "r"
[[datasets]]
name = "d"
train = "d.csv"
[[runs]]
dataset = "d"
method = "ssgp"
m = [10]
seeds = [1, 2, 3]
[[runs]]
dataset = "d"
method = "fitc"
label = "fitc, raw"
m = [10]
seeds = [1, 2]
standardize = false
[[results]]
dataset = "d"
label = "ssgp-std"
m = 10
seed = 1
method = "ssgp"
status = "done"
nlml = 5.0
nlml_scale = "raw"
nmse = 0.2
mnlp = 0.5
constant_mnlp = 1.0
train_seconds = 1.0
[[results]]
dataset = "d"
label = "ssgp-std"
m = 10
seed = 2
method = "ssgp"
status = "done"
nlml = 5.0
nlml_scale = "raw"
nmse = 0.2
mnlp = 0.5
constant_mnlp = 1.0
train_seconds = 1.0
[[results]]
dataset = "d"
label = "ssgp-std"
m = 10
seed = 3
method = "ssgp"
status = "done"
nlml = 5.0
nlml_scale = "raw"
nmse = 0.2
mnlp = 0.5
constant_mnlp = 1.0
train_seconds = 1.0
[[results]]
dataset = "d"
label = "fitc, raw"
m = 10
seed = 1
method = "fitc"
status = "done"
nlml = 9.0
nlml_scale = "raw"
nmse = 0.9
mnlp = 1.5
constant_mnlp = 1.0
train_seconds = 2.0
validation = [{ iteration = 5, nmse = 1.2, mnlp = 1.6 }]
[[results]]
dataset = "d"
label = "fitc, raw"
m = 10
seed = 2
method = "fitc"
status = "done"
nlml = 7.0
nlml_scale = "raw"
nmse = 0.5
mnlp = 0.7
constant_mnlp = 1.0
train_seconds = 2.0
"#;

#[test]
fn report_flags_worse_than_constant_and_counts_repeats_once() {
    let s = Session::parse(REPORT).expect("parses");
    let md = report::tables(&s, false, false);
    // three identical ssgp seeds: one distinct result, no standard error, a note
    assert!(
        md.contains("| 0.2000 / 0.5000 (1.0) [3 seeds, 1 distinct]"),
        "{md}"
    );
    assert!(
        md.contains("seed-independent") && md.contains("ssgp-std"),
        "{md}"
    );
    // fitc seed 1 is worse than the constant predictor (MNLP 1.5 > 1.0) on test and
    // worse than the mean on validation (NMSE 1.2): both marks and footnotes
    assert!(
        md.contains(&format!(
            "0.7000 ± 0.2000 / 1.1000{}{}",
            report::WORSE_TEST,
            report::WORSE_VALIDATION
        )),
        "{md}"
    );
    assert!(md.contains("fitc, raw m=10 seed 1"), "{md}");
    let csv = report::csv(&s);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().map(|h| h.split(',').collect::<Vec<_>>()),
        Some(report::COLUMNS.to_vec())
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 5);
    // a label with a comma is quoted; the worse run says so
    assert!(
        rows[0].starts_with(
            "d,\"fitc, raw\",fitc,10,1,done,false,true,9.0,raw,0.9,1.5,1.0,true,false,false,1.2,1.6,"
        ),
        "{}",
        rows[0]
    );
    assert!(rows[2].contains(",true,false,5.0,raw,"), "{}", rows[2]);
    let json = serde_json::to_value(report::rows(&s)).expect("json");
    assert_eq!(json.as_array().map(Vec::len), Some(5));
    assert_eq!(json[4]["nlml_scale"], "raw");
    assert_eq!(json[4]["seed_dependent"], false);
}
