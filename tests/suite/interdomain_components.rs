//! Seeing the parts with inter-domain features (issue 42): fifgp, tfifgp and smgp with a
//! sum of SE summands split their posterior by summand — a feature is a linear
//! functional of f = Σ_j f_j, so Cov(u, f_j(x*)) is summand j's share of the closed
//! form. The summands' means add up to the total's, their variances are positive, and
//! on a series with a slow and a fast part the two SE summands separate them as vfe's
//! do at the same hyperparameters.

use crate::common::*;
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use sgpw::data::Dataset;
use sgpw::run_spec::RunSpec;
use sgpw::train::{ComponentPrediction, Predictor};

/// The slow and the fast part of the toy series.
fn slow(x: f64) -> f64 {
    (0.6 * x).sin()
}
fn fast(x: f64) -> f64 {
    0.4 * (4.0 * x).sin()
}

/// n points of slow + fast + noise on [−5, 5].
fn series(n: usize, seed: u64) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let x = DMatrix::from_fn(n, 1, |_, _| rng.random_range(-5.0..5.0));
    let y = DVector::from_fn(n, |i, _| {
        slow(x[(i, 0)]) + fast(x[(i, 0)]) + 0.05 * rng.random_range(-1.0..1.0)
    });
    Dataset {
        classes: None,
        feature_names: vec!["t".into()],
        target_name: "y".into(),
        x_train: x,
        y_train: y,
        x_test: None,
        y_test: None,
        notes: Vec::new(),
    }
}

/// A long and a short SE, every value fixed (the features, inducing inputs, are fitted).
const KERNEL: &str = "se(var=1, ls=2, fix=[var, ls]) + se(var=0.16, ls=0.3, fix=[var, ls])";

/// `method` fitted to `data` with [`KERNEL`] and σ² fixed, m features.
fn fitted(method: &str, data: &Dataset, m: usize) -> Predictor {
    let spec = RunSpec {
        method: method.into(),
        m,
        seed: 2,
        iters: 150,
        standardize: false,
        options: options(&format!(
            "kernel = \"{KERNEL}\"\nfix = [\"noise_variance=0.0025\"]\nsingle_start = true"
        )),
    };
    fit(data, &spec)
        .0
        .unwrap_or_else(|e| panic!("{method}: {e}"))
        .predictor
}

fn rms(a: &[f64], b: &[f64]) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>() / a.len() as f64).sqrt()
}

fn components(p: &Predictor, xs: &DMatrix<f64>) -> Vec<ComponentPrediction> {
    assert_eq!(p.components_refusal(), None);
    p.components_with(xs, &ex()).expect("splits")
}

/// Each inter-domain family splits its posterior: the summands' means add up to the
/// total's (less the target's mean, which the total alone carries) to 1e-10, their
/// variances are finite and positive, the long SE follows the slow part and the short
/// one the fast part, and both are close to vfe's summands at the same hyperparameters.
#[test]
fn inter_domain_summands_separate_the_slow_and_fast_parts() {
    let data = series(300, 7);
    let xs = DMatrix::from_fn(120, 1, |i, _| -4.5 + 9.0 * i as f64 / 119.0);
    let t: Vec<f64> = xs.column(0).iter().copied().collect();
    let (want_slow, want_fast): (Vec<f64>, Vec<f64>) =
        t.iter().map(|&x| (slow(x), fast(x))).unzip();
    let vfe = components(&fitted("vfe", &data, 60), &xs);
    for method in ["fifgp", "tfifgp", "smgp"] {
        let p = fitted(method, &data, 60);
        let got = components(&p, &xs);
        let labels: Vec<&str> = got.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["se1", "se2"], "{method}");
        let total = p.predict(&xs).expect("predicts");
        let mean0 = p.model().target_mean;
        let added: Vec<f64> = (0..xs.nrows())
            .map(|i| got.iter().map(|c| c.mean[i]).sum::<f64>() + mean0)
            .collect();
        assert_close(&format!("{method} Σ means"), &added, &total.mean, 1e-10);
        for c in &got {
            assert!(
                c.var_latent.iter().all(|v| v.is_finite() && *v > 0.0),
                "{method} {}: {:?}",
                c.label,
                c.var_latent
            );
        }
        // the split follows the series' parts (the slow part's level is shared with the
        // target's mean, so it is compared after taking that back)
        let slow_got: Vec<f64> = got[0].mean.iter().map(|m| m + mean0).collect();
        let (e_slow, e_fast) = (rms(&slow_got, &want_slow), rms(&got[1].mean, &want_fast));
        eprintln!("{method}: slow part off by {e_slow:.4}, fast by {e_fast:.4} (RMS)");
        assert!(
            e_slow < 0.1 && e_fast < 0.1,
            "{method}: slow off by {e_slow}, fast by {e_fast}"
        );
        // and vfe's split at the same hyperparameters
        for (c, v) in got.iter().zip(&vfe) {
            let e = rms(&c.mean, &v.mean);
            eprintln!("{method} {}: {e:.4} (RMS) from vfe's", c.label);
            assert!(e < 0.05, "{method} {}: {e} from vfe's", c.label);
        }
    }
}

/// svgp splits its q(u) by summand as the collapsed methods split theirs, over inducing
/// points and over a family's features (here fifgp's): the means add up to the total's
/// to 1e-10 and the long and short SE follow the slow and fast parts.
#[test]
fn svgp_splits_its_posterior_by_summand() {
    let data = series(300, 7);
    let xs = DMatrix::from_fn(120, 1, |i, _| -4.5 + 9.0 * i as f64 / 119.0);
    let t: Vec<f64> = xs.column(0).iter().copied().collect();
    for (family, option) in [("pseudo", ""), ("fifgp", "family = \"fifgp\"")] {
        let spec = RunSpec {
            method: "svgp".into(),
            m: 40,
            seed: 2,
            iters: 2000,
            standardize: false,
            options: options(&format!("kernel = \"{KERNEL}\"\n{option}")),
        };
        let p = fit(&data, &spec)
            .0
            .unwrap_or_else(|e| panic!("svgp over {family}: {e}"))
            .predictor;
        let got = components(&p, &xs);
        let total = p.predict(&xs).expect("predicts");
        let mean0 = p.model().target_mean;
        let added: Vec<f64> = (0..xs.nrows())
            .map(|i| got.iter().map(|c| c.mean[i]).sum::<f64>() + mean0)
            .collect();
        assert_close(
            &format!("svgp over {family} Σ means"),
            &added,
            &total.mean,
            1e-10,
        );
        let slow_got: Vec<f64> = got[0].mean.iter().map(|m| m + mean0).collect();
        let want_slow: Vec<f64> = t.iter().map(|&x| slow(x)).collect();
        let want_fast: Vec<f64> = t.iter().map(|&x| fast(x)).collect();
        let (e_slow, e_fast) = (rms(&slow_got, &want_slow), rms(&got[1].mean, &want_fast));
        eprintln!("svgp over {family}: slow part off by {e_slow:.4}, fast by {e_fast:.4} (RMS)");
        assert!(
            e_slow < 0.1 && e_fast < 0.1,
            "svgp over {family}: slow off by {e_slow}, fast by {e_fast}"
        );
    }
}
