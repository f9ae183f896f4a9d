//! What a fitted model says beyond its mean and variances, and where a run starts when
//! it is given values of its own (docs/python.md): the full covariance of the latent
//! function at test points (its diagonal is the variance, for every method that gives
//! it; the others refuse by name), posterior samples whose mean and covariance converge
//! to it, per-point log predictive densities whose mean is minus the MNLP, and
//! `--init-lengthscales` / `--init-signal-variance` / `--init-noise-variance` read in
//! the data's units whether the run standardizes or not.

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use sgpw::data::Dataset;
use sgpw::methods;
use sgpw::run_spec::{MethodOptions, RunSpec};
use sgpw::train::FitResult;

/// Toy data far from unit scale (inputs × 3 + 1 and × 0.5, targets × 5 + 2), so that
/// standardizing changes every number; `n_test` more rows as a test set.
fn dataset(n: usize, n_test: usize, d: usize) -> Dataset {
    let all = toy_data(n + n_test, d, 11);
    let x = DMatrix::from_fn(n + n_test, d, |i, k| {
        all.x[(i, k)] * if k == 0 { 3.0 } else { 0.5 } + 1.0
    });
    let y: Vec<f64> = all.y.iter().map(|v| 5.0 * v + 2.0).collect();
    Dataset {
        classes: None,
        feature_names: (0..d).map(|k| format!("x{k}")).collect(),
        target_name: "y".into(),
        x_train: x.rows(0, n).into_owned(),
        y_train: DVector::from_column_slice(&y[..n]),
        x_test: (n_test > 0).then(|| x.rows(n, n_test).into_owned()),
        y_test: (n_test > 0).then(|| DVector::from_column_slice(&y[n..])),
        notes: Vec::new(),
    }
}

fn spec(method: &str, m: usize, iters: usize, options: MethodOptions) -> RunSpec {
    RunSpec {
        method: method.into(),
        m,
        seed: 1,
        iters,
        standardize: true,
        options,
    }
}

fn fitted(ds: &Dataset, spec: &RunSpec) -> FitResult {
    let (result, _) = fit(ds, spec);
    result.unwrap_or_else(|e| panic!("{}: {e}", spec.method))
}

/// The size and options each method is fitted with here (spgp-dr and pca-spgp need
/// `dims`, pep `alpha`).
fn setup(method: &str) -> (usize, MethodOptions) {
    match method {
        "pep" => (8, options("alpha = 0.5\nsingle_start = true")),
        "spgp-dr" | "pca-spgp" => (8, options("dims = 2\nsingle_start = true")),
        _ => (8, options("single_start = true")),
    }
}

/// For every method of the registry: the full covariance's diagonal is the variance
/// `predict` gives (before its clamp at 0), the mean is `predict`'s, the matrix is
/// symmetric — or the method refuses by name. The refusals are exactly the methods
/// whose prior covariance between test points is not computed (a kernel on projected
/// inputs, eigengp-plus's FITC correction, Nyström's own predictor).
#[test]
fn the_full_covariance_has_the_variance_on_its_diagonal() {
    let ds = dataset(120, 0, 2);
    let xs = dataset(120, 9, 2).x_test.expect("test rows");
    let mut refused = Vec::new();
    for method in methods::registry() {
        let name = method.name();
        let (m, options) = setup(name);
        let result = fitted(&ds, &spec(name, m, 15, options));
        let p = result.predictor.predict(&xs).expect("predicts");
        match result.predictor.latent_cov_with(&xs, &ex()) {
            Ok((mean, cov)) => {
                assert_eq!(mean, p.mean, "{name}: the mean is predict's");
                assert_eq!(cov.shape(), (9, 9), "{name}");
                let scale = p.var_latent.iter().fold(1e-300_f64, |a, v| a.max(*v));
                for i in 0..9 {
                    let d = cov[(i, i)].max(0.0);
                    assert!(
                        (d - p.var_latent[i]).abs() <= 1e-8 * scale,
                        "{name}: cov[{i},{i}] = {d} but the variance is {}",
                        p.var_latent[i]
                    );
                    for j in 0..i {
                        assert_eq!(cov[(i, j)], cov[(j, i)], "{name}: symmetric");
                        // a covariance: |c_ij| ≤ √(c_ii c_jj), up to rounding
                        assert!(
                            cov[(i, j)].abs()
                                <= (cov[(i, i)].max(0.0) * cov[(j, j)].max(0.0)).sqrt()
                                    + 1e-8 * scale,
                            "{name}: cov[{i},{j}] = {} is no covariance",
                            cov[(i, j)]
                        );
                    }
                }
            }
            Err(e) => {
                let text = e.to_string();
                assert!(
                    text.contains(&format!("method '{name}' cannot give the full covariance")),
                    "{name}: {text}"
                );
                refused.push(name);
            }
        }
    }
    assert_eq!(
        refused,
        [
            "spgp-dr",
            "pca-spgp",
            "eigengp-plus",
            "nystrom",
            "nystrom-opt"
        ]
    );
}

/// Posterior draws: seeded (the same seed, the same draws), and their mean and
/// covariance converge to the predictive mean and the full covariance (40 000 draws:
/// a covariance is then within a few 1/√n of its value).
#[test]
fn samples_converge_to_the_posterior() {
    let ds = dataset(150, 5, 1);
    let xs = ds.x_test.clone().expect("test rows");
    let result = fitted(&ds, &spec("fitc", 10, 40, MethodOptions::default()));
    let predictor = &result.predictor;
    let (mean, cov) = predictor.latent_cov_with(&xs, &ex()).expect("cov");
    let n = 40_000;
    let draws = predictor.sample_with(&xs, n, 7, &ex()).expect("draws");
    assert_eq!(draws.shape(), (n, 5));
    let again = predictor.sample_with(&xs, 3, 7, &ex()).expect("draws");
    assert_eq!(again.rows(0, 3), draws.rows(0, 3), "seeded");
    let other = predictor.sample_with(&xs, 3, 8, &ex()).expect("draws");
    assert_ne!(other, again, "another seed, other draws");
    let largest = cov.diagonal().max();
    assert!(largest > 0.0);
    let emp_mean: Vec<f64> = (0..5).map(|j| draws.column(j).mean()).collect();
    for j in 0..5 {
        let sd = (cov[(j, j)] / n as f64).sqrt();
        assert!(
            (emp_mean[j] - mean[j]).abs() <= 5.0 * sd + 1e-12,
            "mean {j}: {} vs {}",
            emp_mean[j],
            mean[j]
        );
    }
    for i in 0..5 {
        for j in 0..=i {
            let c: f64 = (0..n)
                .map(|s| (draws[(s, i)] - emp_mean[i]) * (draws[(s, j)] - emp_mean[j]))
                .sum::<f64>()
                / (n - 1) as f64;
            // sd of a sample covariance: √((c_ii c_jj + c_ij²)/n)
            let sd = ((cov[(i, i)] * cov[(j, j)] + cov[(i, j)].powi(2)) / n as f64).sqrt();
            assert!(
                (c - cov[(i, j)]).abs() <= 6.0 * sd + 1e-6 * largest,
                "cov[{i},{j}]: sampled {c} vs {}",
                cov[(i, j)]
            );
        }
    }
}

/// The per-point log predictive densities of a test set average to minus the test
/// MNLP `fit` reports; a target that is not a number is refused by its row.
#[test]
fn log_densities_average_to_minus_the_mnlp() {
    let ds = dataset(150, 40, 2);
    let result = fitted(&ds, &spec("vfe", 10, 30, MethodOptions::default()));
    let (x, y) = (ds.x_test.as_ref().unwrap(), ds.y_test.as_ref().unwrap());
    let ld = result
        .predictor
        .log_density_with(x, y.as_slice(), &ex())
        .expect("densities");
    let mean = ld.iter().sum::<f64>() / ld.len() as f64;
    let mnlp = result.test.expect("scored").mnlp;
    assert!(
        (mean + mnlp).abs() <= 1e-12 * mnlp.abs().max(1.0),
        "{mean} vs {mnlp}"
    );
    let mut bad = y.as_slice().to_vec();
    bad[3] = f64::NAN;
    let e = result
        .predictor
        .log_density_with(x, &bad, &ex())
        .expect_err("NaN target");
    assert!(e.to_string().contains("target 3 is NaN"), "{e}");
}

/// Starting values in the data's units are one start whether the run standardizes or
/// not: the objective at the start (raw target scale) is the same both ways, and differs
/// from the default start's. Read as model units they would not agree.
#[test]
fn given_starting_values_are_in_the_data_units() {
    let ds = dataset(100, 0, 2);
    let given = options(
        "init_lengthscales = [2.0, 0.4]\ninit_signal_variance = 30.0\n\
         init_noise_variance = 0.5\nsingle_start = true",
    );
    let start = |standardize: bool, options: MethodOptions| {
        let s = RunSpec {
            standardize,
            ..spec("fitc", 8, 1, options)
        };
        fitted(&ds, &s).trace[0]
    };
    let (std, raw) = (start(true, given.clone()), start(false, given));
    assert!((std - raw).abs() <= 1e-9 * raw.abs(), "{std} vs {raw}");
    let default = start(true, options("single_start = true"));
    assert!(
        (default - std).abs() > 1e-3 * std.abs(),
        "{default} vs {std}"
    );
    // one lengthscale for every input is the same as one per input
    let one = options("init_lengthscales = [0.7]\nsingle_start = true");
    let both = options("init_lengthscales = [0.7, 0.7]\nsingle_start = true");
    assert_eq!(start(true, one), start(true, both));
}

/// Bad starting values are refused naming the option: a count that is neither one nor
/// one per input, a value that is not positive, a subset fit that would override them.
#[test]
fn bad_starting_values_are_refused() {
    let ds = dataset(60, 0, 2);
    let run = |text: &str| fit(&ds, &spec("fitc", 5, 5, options(text))).0.err();
    let e = run("init_lengthscales = [1.0, 2.0, 3.0]").expect("three for two inputs");
    assert!(
        e.to_string().contains(
            "init_lengthscales (--init-lengthscales) has 3 values but the data have 2 input(s)"
        ),
        "{e}"
    );
    let e = run("init_noise_variance = 0.0").expect("zero");
    assert!(
        e.to_string()
            .contains("init_noise_variance = 0 (--init-noise-variance): must be positive"),
        "{e}"
    );
    let e = run("init_lengthscales = [1.0, -2.0]").expect("negative");
    assert!(
        e.to_string().contains("-2 is not a positive lengthscale"),
        "{e}"
    );
    let e = run("init_signal_variance = 2.0\ninit_lengthscales_from_subset = 30").expect("both");
    assert!(
        e.to_string().contains(
            "init_lengthscales_from_subset (--init-lengthscales-from-subset) fits the starting"
        ),
        "{e}"
    );
}

/// `--inducing-inputs FILE`: the points are read by column name in the inputs' units,
/// so one file is one start whether the run standardizes or not (the objective at the
/// start agrees), and it is not the start `--inducing-init` would choose. A file that
/// does not fit the run is refused naming the file, line and column.
#[test]
fn given_inducing_inputs_are_read_by_name_in_the_data_units() {
    let ds = dataset(100, 0, 2);
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    // the columns in the other order: read by name
    let z = write("z.csv", "x1,x0\n0.8,-2\n1.0,1.5\n1.2,4\n0.9,0.5\n");
    let given = |text: &str| options(&format!("inducing_inputs = \"{z}\"\n{text}"));
    let start = |standardize: bool, options: MethodOptions| {
        let s = RunSpec {
            standardize,
            ..spec("fitc", 4, 1, options)
        };
        fitted(&ds, &s)
    };
    let (std, raw) = (
        start(true, given("single_start = true")),
        start(false, given("single_start = true")),
    );
    assert!(
        (std.trace[0] - raw.trace[0]).abs() <= 1e-9 * raw.trace[0].abs(),
        "{} vs {}",
        std.trace[0],
        raw.trace[0]
    );
    let chosen = start(true, options("single_start = true"));
    assert!((chosen.trace[0] - std.trace[0]).abs() > 1e-6 * std.trace[0].abs());
    assert_eq!(
        RunSpec {
            options: given(""),
            ..spec("vfe", 4, 1, MethodOptions::default())
        }
        .default_label(),
        "vfe-std-zfile-z"
    );
    // svgp starts there too
    let svgp = RunSpec {
        options: given("epochs = 1"),
        ..spec("svgp", 4, 5, MethodOptions::default())
    };
    assert!(fit(&ds, &svgp).0.is_ok());

    let refused = |method: &str, m: usize, text: &str| {
        fit(&ds, &spec(method, m, 5, options(text)))
            .0
            .err()
            .unwrap_or_else(|| panic!("{text}: accepted"))
            .to_string()
    };
    let e = refused("fitc", 5, &format!("inducing_inputs = \"{z}\""));
    assert!(
        e.contains("z.csv: 4 inducing inputs but m = 5 (--m): give m = 4"),
        "{e}"
    );
    let e = refused("ssgp", 4, &format!("inducing_inputs = \"{z}\""));
    assert!(
        e.contains("option inducing_inputs (--inducing-inputs) does not apply to method 'ssgp'"),
        "{e}"
    );
    let e = refused(
        "fitc",
        4,
        &format!("inducing_inputs = \"{z}\"\ninducing_init = \"kmeans\""),
    );
    assert!(e.contains("leave out inducing_init"), "{e}");
    let bad = write("bad.csv", "x0,x1\n1,2\n3,abc\n");
    let e = refused("fitc", 2, &format!("inducing_inputs = \"{bad}\""));
    assert!(
        e.contains("bad.csv line 3: column 'x1': 'abc' is not a finite number"),
        "{e}"
    );
    let extra = write("extra.csv", "x0,x1,y\n1,2,3\n");
    let e = refused("fitc", 1, &format!("inducing_inputs = \"{extra}\""));
    assert!(
        e.contains("extra.csv line 1: column 'y' is not an input of the fit"),
        "{e}"
    );
    let e = refused("fitc", 1, "inducing_inputs = \"/nonexistent/z.csv\"");
    assert!(
        e.contains("/nonexistent/z.csv: cannot read the inducing inputs file"),
        "{e}"
    );
}
