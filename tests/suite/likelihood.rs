//! `--likelihood` end to end: the option, the refusals of the methods that cannot take
//! a likelihood, the target checks, and the model file's `[likelihood]`.

use crate::common::repo;
use nalgebra::{DMatrix, DVector};
use sgpw::data::{Dataset, LoadSpec};
use sgpw::likelihoods::{LikelihoodKind, LikelihoodTable};
use sgpw::model_file::ModelFile;
use std::path::Path;
use std::process::{Command, Output};

fn sgpw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .expect("runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn load_spec(train: &Path) -> LoadSpec {
    LoadSpec {
        train: train.to_path_buf(),
        test: None,
        split: None,
        seed: 0,
        target: None,
        features: None,
        drop_missing: false,
    }
}

#[test]
fn a_collapsed_method_refuses_another_likelihood_before_reading_any_data() {
    // bernoulli: every method but vfe's bound fits it by expectation propagation
    // (tests/suite/ep.rs); poisson: none of the collapsed methods
    for (method, likelihood) in [
        ("vfe", "bernoulli"),
        ("vfe", "poisson"),
        ("fitc", "poisson"),
        ("full", "poisson"),
        ("ssgp", "poisson"),
    ] {
        let out = sgpw(&[
            "fit",
            "--train",
            "/nonexistent/never-read.csv",
            "--method",
            method,
            "--m",
            "5",
            "--likelihood",
            likelihood,
        ]);
        let err = stderr(&out);
        assert!(!out.status.success(), "{method}: {err}");
        assert!(
            err.contains(&format!("likelihood = {likelihood} (--likelihood)"))
                && err.contains(&format!("method '{method}' cannot fit it"))
                && err.contains("svgp")
                && !err.contains("never-read"),
            "{method}: {err}"
        );
    }
    let out = sgpw(&[
        "fit",
        "--train",
        "x.csv",
        "--method",
        "vfe",
        "--likelihood",
        "binomial",
    ]);
    let err = stderr(&out);
    assert!(
        err.contains("binomial") && err.contains("bernoulli") && err.contains("poisson"),
        "{err}"
    );
}

#[test]
fn targets_are_checked_for_the_likelihood_naming_the_file_and_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let counts = dir.path().join("counts.csv");
    std::fs::write(&counts, "x,y\n0.0,1\n1.0,0\n2.0,2.5\n3.0,4\n").expect("write");
    let e = sgpw::data::load_for_fit(&load_spec(&counts), LikelihoodKind::Poisson, &mut |_| {})
        .expect_err("2.5 is not a count")
        .to_string();
    assert!(
        e.contains("counts.csv") && e.contains("row 3 (line 4 of the file)") && e.contains("2.5"),
        "{e}"
    );
    // the gaussian takes the same file
    sgpw::data::load_for_fit(&load_spec(&counts), LikelihoodKind::Gaussian, &mut |_| {})
        .expect("gaussian");

    let three = dir.path().join("three.csv");
    std::fs::write(&three, "x,y\n0.0,1\n1.0,0\n2.0,1\n3.0,2\n").expect("write");
    let e = sgpw::data::load_for_fit(&load_spec(&three), LikelihoodKind::Bernoulli, &mut |_| {})
        .expect_err("three labels")
        .to_string();
    assert!(
        e.contains("three.csv") && e.contains("row 4 (line 5") && e.contains("third label 2"),
        "{e}"
    );

    let signs = dir.path().join("signs.csv");
    std::fs::write(&signs, "x,y\n0.0,1\n1.0,-1\n2.0,1\n3.0,-1\n").expect("write");
    let data = sgpw::data::load_for_fit(&load_spec(&signs), LikelihoodKind::Bernoulli, &mut |_| {})
        .expect("two labels");
    assert!(
        data.notes
            .iter()
            .any(|n| n.contains("-1 as class 0 and 1 as class 1")),
        "{:?}",
        data.notes
    );
}

/// A data set of ±1 labels as the loader gives it.
fn signs_dataset() -> Dataset {
    Dataset {
        classes: None,
        feature_names: vec!["x".into()],
        target_name: "y".into(),
        x_train: DMatrix::from_column_slice(4, 1, &[0.0, 1.0, 2.0, 4.0]),
        y_train: DVector::from_vec(vec![1.0, -1.0, 1.0, -1.0]),
        x_test: None,
        y_test: None,
        notes: Vec::new(),
    }
}

#[test]
fn binary_labels_become_classes_and_are_not_centred_or_scaled() {
    let data = signs_dataset();
    let (td, mean, st, labels) =
        sgpw::train::prepare_for(&data, true, LikelihoodKind::Bernoulli).expect("prepared");
    assert_eq!(td.y, vec![1.0, 0.0, 1.0, 0.0]);
    assert_eq!(mean, 0.0);
    let st = st.expect("inputs standardised");
    assert_eq!(st.target_scale, 1.0);
    assert!(td.x[(0, 0)] < 0.0, "inputs are still standardised");
    assert_eq!(labels.expect("labels").labels, [-1.0, 1.0]);
    // the gaussian centres and scales as before
    let (td, mean, st, labels) =
        sgpw::train::prepare_for(&data, true, LikelihoodKind::Gaussian).expect("prepared");
    assert_eq!((mean, labels), (0.0, None));
    let scale = st.expect("standardised").target_scale;
    assert!(scale > 1.0 && td.y[0] == 1.0 / scale, "{scale}");
    // a count that is not one is refused at its training row
    let mut bad = data.clone();
    bad.y_train[2] = 0.5;
    let e = match sgpw::train::prepare_for(&bad, false, LikelihoodKind::Poisson) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("-1 is not a count"),
    };
    assert!(e.contains("training row 2") && e.contains("-1"), "{e}");
}

#[test]
fn stored_models_read_and_rewrite_to_the_same_tables() {
    // every model the repository's sessions hold, Gaussian (as written before there was
    // a choice) or not: read as a model and written again, each is the table it was, key
    // for key, and its text written again is the same bytes
    let (mut models, mut others) = (0, 0);
    for entry in std::fs::read_dir(repo("sessions"))
        .expect("sessions/")
        .flatten()
    {
        let path = entry.path();
        let small = std::fs::metadata(&path).is_ok_and(|m| m.len() < 4_000_000);
        if path.extension().is_none_or(|e| e != "toml") || !small {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let session: toml::Value = toml::from_str(&text).expect("parses");
        let results = session.get("results").and_then(|r| r.as_array());
        for r in results.into_iter().flatten() {
            let Some(original) = r.get("model") else {
                continue;
            };
            let model: ModelFile = original.clone().try_into().expect("a model");
            let written = model.to_toml().expect("writes");
            // a classifier's model (sessions/banana-svgp.toml) carries its table and no
            // noise variance; a Gaussian model no likelihood table
            let gaussian = original.get("likelihood").is_none();
            assert_eq!(model.likelihood.is_none(), gaussian);
            assert_eq!(!written.contains("[likelihood]"), gaussian, "{written}");
            assert_eq!(written.contains("noise_variance"), gaussian, "{written}");
            let again: toml::Value = toml::from_str(&written).expect("reads");
            assert_eq!(&again, original, "{}", path.display());
            assert_eq!(
                ModelFile::parse(&written)
                    .expect("parses")
                    .to_toml()
                    .expect("writes"),
                written
            );
            models += 1;
            others += usize::from(!gaussian);
        }
    }
    assert!(models > 10, "only {models} models read");
    assert!(others > 0, "no model with another likelihood read");
}

#[test]
fn a_likelihood_table_round_trips_and_a_method_that_cannot_take_it_is_named_at_its_line() {
    // a model with another likelihood has no Gaussian noise variance: an earlier file's
    // is read and not written again
    let text = "method = \"vfe\"\ntarget_mean = 0.0\n\n[hyper]\nsignal_variance = 1.0\nlengthscales = [1.0]\n\
                \n[likelihood]\nname = \"bernoulli\"\nlabels = [-1.0, 1.0]\n\n\
                [inducing]\npoints = [[0.0], [1.0]]\n";
    let earlier = text.replace(
        "[1.0]\n\n[likelihood]",
        "[1.0]\nnoise_variance = 0.1\n\n[likelihood]",
    );
    assert_ne!(earlier, text);
    let model = ModelFile::parse(&earlier).expect("parses");
    assert_eq!(model, ModelFile::parse(text).expect("parses"));
    assert_eq!(model.likelihood_kind(), LikelihoodKind::Bernoulli);
    assert_eq!(
        model
            .likelihood
            .as_ref()
            .and_then(|t| t.binary_labels())
            .map(|l| l.labels),
        Some([-1.0, 1.0])
    );
    assert_eq!(model.to_toml().expect("writes"), text);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("m.toml");
    std::fs::write(&file, text).expect("write");
    let e = match sgpw::methods::read_model(&file) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("vfe takes gaussian only"),
    };
    assert!(
        e.contains("m.toml")
            && e.contains("line 8")
            && e.contains("[likelihood] name = \"bernoulli\"")
            && e.contains("method 'vfe' cannot fit it"),
        "{e}"
    );
    // a studentt table with its parameters
    let mut t = LikelihoodTable::start(LikelihoodKind::StudentT, None).expect("table");
    t.params.insert("df".into(), 4.5);
    let mut m = model.clone();
    m.likelihood = Some(t);
    let text = m.to_toml().expect("writes");
    assert!(
        text.contains("[likelihood]\nname = \"studentt\"\ndf = 4.5\nscale = 1.0\n"),
        "{text}"
    );
    assert_eq!(ModelFile::parse(&text).expect("parses"), m);
    assert_eq!(m.likelihood().expect("builds").params(), vec![1.0, 4.5]);
}

#[test]
fn fit_scores_and_predict_writes_what_the_likelihood_predicts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("m.toml");
    let data = repo("datasets/breast_cancer/data.csv.gz");
    let (data, model_arg) = (data.display().to_string(), model.display().to_string());
    let out = sgpw(&[
        "fit",
        "--train",
        &data,
        "--split",
        "0.8",
        "--method",
        "svgp",
        "--m",
        "8",
        "--likelihood",
        "bernoulli",
        "--json",
        "--save-model",
        &model_arg,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["likelihood"], "bernoulli");
    assert_eq!(v["stop"], "converged");
    let (error, auc) = (
        v["error_rate"].as_f64().expect("error rate"),
        v["auc"].as_f64().expect("AUC"),
    );
    assert!(error < 0.1 && auc > 0.95, "{v}");
    assert!(v["mnlp"].as_f64().expect("NLP") < 0.3, "{v}");
    assert!(v["rmse"].is_null() && v["nmse"].is_null(), "{v}");
    let text = std::fs::read_to_string(&model).expect("model");
    assert!(
        text.contains("[likelihood]\nname = \"bernoulli\"\nlabels = [0.0, 1.0]"),
        "{text}"
    );
    let out = sgpw(&["predict", "--model", &model_arg, "--input", &data]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("latent_mean,latent_var,p1"));
    let row: Vec<f64> = lines
        .next()
        .expect("a row")
        .split(',')
        .map(|v| v.parse().expect("a number"))
        .collect();
    assert!(row.len() == 3 && (0.0..=1.0).contains(&row[2]), "{row:?}");
}

#[test]
fn a_session_runs_a_likelihood_and_reports_its_scores() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = dir.path().join("s.toml");
    let data = repo("datasets/breast_cancer/data.csv.gz");
    let text = format!(
        "schema_version = {}\nname = \"lik\"\n\n[[datasets]]\nname = \"bc\"\ntrain = \"{}\"\n\
         split = 0.8\n\n[[runs]]\ndataset = \"bc\"\nmethod = \"svgp\"\nm = [8]\n\n\
         [runs.options]\nlikelihood = \"bernoulli\"\n",
        sgpw::session::SCHEMA_VERSION,
        data.display()
    );
    std::fs::write(&session, text).expect("write");
    let s = session.display().to_string();
    let out = sgpw(&["run", &s, "--jobs", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sgpw(&["report", &s, "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let row = &v[0];
    assert_eq!(row["label"], "svgp-std-bernoulli", "{v}");
    assert_eq!(row["likelihood"], "bernoulli", "{v}");
    assert!(row["error_rate"].as_f64().is_some_and(|e| e < 0.1), "{v}");
    assert!(row["auc"].as_f64().is_some_and(|a| a > 0.95), "{v}");
    assert!(row["rmse"].is_null(), "{v}");
    // the text report's cell leads with the error rate, not "1 done (no test set)"
    let out = sgpw(&["report", &s]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("no test set"), "{text}");
    assert!(text.contains("| error "), "{text}");
}

/// `sgpw predict` of a count model writes y's mean, variance and central 95% interval:
/// whole counts around the mean, the mean inside.
#[test]
fn predict_writes_a_counts_interval() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("coal.toml");
    let data = repo("datasets/coal/data.csv.gz").display().to_string();
    let model_arg = model.display().to_string();
    let out = sgpw(&[
        "fit",
        "--train",
        &data,
        "--method",
        "svgp",
        "--m",
        "8",
        "--likelihood",
        "poisson",
        "--save-model",
        &model_arg,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sgpw(&["predict", "--model", &model_arg, "--input", &data]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("latent_mean,latent_var,mean,var,lower95,upper95")
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().expect("a number")).collect())
        .collect();
    assert_eq!(rows.len(), 112);
    for r in &rows {
        let (mean, lower, upper) = (r[2], r[4], r[5]);
        assert!(lower.fract() == 0.0 && upper.fract() == 0.0, "{r:?}");
        assert!(lower <= mean && mean <= upper && upper >= 1.0, "{r:?}");
    }
}

/// fit's objective line says what its number is on: counts (and labels) are neither
/// centred nor scaled, only the inputs standardized.
#[test]
fn the_objective_line_of_counts_does_not_say_raw_target_scale() {
    let data = repo("datasets/coal/data.csv.gz").display().to_string();
    let out = sgpw(&[
        "fit",
        "--train",
        &data,
        "--method",
        "svgp",
        "--m",
        "4",
        "--likelihood",
        "poisson",
        "--iters",
        "50",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("counts as given"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!line.contains("raw target scale"), "{line}");
}

/// A model with another likelihood has no Gaussian noise: its noisy variance is its
/// latent variance, whatever σ² an earlier file gave (what it predicts for y is
/// `sgpw predict`'s observed columns).
#[test]
fn another_likelihoods_noisy_variance_is_its_latent_variance() {
    let text = "method = \"fitc\"\ntarget_mean = 0.0\n\n[hyper]\nsignal_variance = 1.0\n\
                lengthscales = [1.0]\nnoise_variance = 0.5\n\n[likelihood]\nname = \"bernoulli\"\n\
                labels = [0.0, 1.0]\n\n[inducing]\npoints = [[0.0], [1.0]]\n\n[posterior]\n\
                mean_weights = [0.5, -0.25]\nvar_matrix = [[0.25, 0.0], [0.0, 0.25]]\n\
                latent_prior = \"kernel\"\n";
    let model = ModelFile::parse(text).expect("parses");
    let p = sgpw::train::Predictor::new(model, None).expect("a predictor");
    let at = DMatrix::from_column_slice(3, 1, &[-1.0, 0.25, 3.0]);
    let pred = p.predict(&at).expect("predicts");
    assert!(
        pred.var_latent.iter().all(|v| *v > 0.0),
        "{:?}",
        pred.var_latent
    );
    assert_eq!(pred.var_noisy, pred.var_latent);
}

/// A classifier's log predictive density of a held-out label is its likelihood's (the
/// probit's log Φ(±μ/√(1 + v)), GPflow's `predict_log_density`), the terms of the MNLP
/// its score reports — not a Gaussian density with a noise variance it does not have.
#[test]
fn another_likelihoods_log_density_is_its_own_predictive_density() {
    let text = "method = \"fitc\"\ntarget_mean = 0.0\n\n[hyper]\nsignal_variance = 1.0\n\
                lengthscales = [1.0]\n\n[likelihood]\nname = \"bernoulli\"\n\
                labels = [0.0, 1.0]\n\n[inducing]\npoints = [[0.0], [1.0]]\n\n[posterior]\n\
                mean_weights = [0.5, -0.25]\nvar_matrix = [[0.25, 0.0], [0.0, 0.25]]\n\
                latent_prior = \"kernel\"\n";
    let model = ModelFile::parse(text).expect("parses");
    let p = sgpw::train::Predictor::new(model, None).expect("a predictor");
    let at = DMatrix::from_column_slice(3, 1, &[-1.0, 0.25, 3.0]);
    let y = [0.0, 1.0, 1.0];
    let exec = sgpw::exec::Exec::default();
    let lpd = p.log_density_with(&at, &y, &exec).expect("log densities");
    let f = p.predict(&at).expect("predicts");
    for i in 0..3 {
        let z = f.mean[i] / (1.0 + f.var_latent[i]).sqrt();
        let want = sgpw::likelihoods::normal::log_cdf(if y[i] == 1.0 { z } else { -z });
        assert!(
            (lpd[i] - want).abs() < 1e-12,
            "row {i}: {} vs {want}",
            lpd[i]
        );
    }
    let mnlp = p.score(&at, &y).expect("scores").mnlp;
    let mean = lpd.iter().sum::<f64>() / 3.0;
    assert!((mnlp + mean).abs() < 1e-12, "{mnlp} vs {}", -mean);
}

/// The Gaussian evidence (the exact GP, the low-rank core) needs the likelihood's
/// Gaussian noise: a model with another likelihood that reaches it past the run's
/// check is refused, naming the likelihood — not evaluated with a noise variance it
/// does not have.
#[test]
fn the_gaussian_evidence_refuses_a_likelihood_without_gaussian_noise() {
    let data = crate::common::toy_data(20, 1, 3);
    let exec = sgpw::exec::Exec::default();
    for (method, tables) in [
        ("full", ""),
        ("fitc", "\n[inducing]\npoints = [[-1.0], [1.0]]\n"),
        ("vfe", "\n[inducing]\npoints = [[-1.0], [1.0]]\n"),
    ] {
        let text = format!(
            "method = \"{method}\"\n[hyper]\nsignal_variance = 1.0\nlengthscales = [1.0]\n\
             [likelihood]\nname = \"studentt\"\n{tables}"
        );
        let model = ModelFile::parse(&text).expect("parses");
        let m = sgpw::methods::get(method).expect("a method");
        let e = m.nlml(&model, &data, &exec).expect_err(method).to_string();
        assert!(
            e.contains("the studentt likelihood has no Gaussian noise variance"),
            "{method}: {e}"
        );
        let e = m
            .objective(&model, &data, &exec)
            .expect_err(method)
            .to_string();
        assert!(e.contains("studentt"), "{method}: {e}");
        let e = m
            .posterior(&model, &data, &exec)
            .expect_err(method)
            .to_string();
        assert!(e.contains("studentt"), "{method}: {e}");
    }
}
