use sgpw::likelihoods::GaussHermite;
use sgpw::metrics::*;

/// bernoulli: p = Φ(μ/√(1 + v)) scored by error rate, AUC, −log p and the Brier
/// score; poisson: RMSE of e^{μ + v/2} and the closed-form log predictive density.
#[test]
fn likelihood_scores_are_the_likelihoods_predictions_scored() {
    use sgpw::likelihoods::{Bernoulli, Poisson, normal};
    let quad = GaussHermite::new(20).unwrap();
    let (y, mean, var) = ([1.0, 0.0, 1.0], [0.8, 0.3, -0.5], [0.5, 1.0, 0.2]);
    let t = likelihood_scores(&Bernoulli::default(), &quad, &y, &mean, &var, (0.0, 1.0));
    let p: Vec<f64> = (0..3)
        .map(|i| normal::cdf(mean[i] / (1.0 + var[i]).sqrt()))
        .collect();
    assert_eq!(t.error_rate, Some(2.0 / 3.0));
    assert_eq!(t.auc, Some(0.5));
    let nlp = -((p[0]).ln() + (1.0 - p[1]).ln() + p[2].ln()) / 3.0;
    assert!((t.mnlp - nlp).abs() < 1e-12, "{} {nlp}", t.mnlp);
    let brier = ((1.0 - p[0]).powi(2) + p[1].powi(2) + (1.0 - p[2]).powi(2)) / 3.0;
    assert!((t.mse - brier).abs() < 1e-12);
    assert_eq!((t.nmse, t.rmse), (None, None));
    let counts = [2.0, 0.0, 5.0];
    let t = likelihood_scores(&Poisson, &quad, &counts, &mean, &var, (0.0, 1.0));
    let rate: Vec<f64> = (0..3).map(|i| (mean[i] + var[i] / 2.0).exp()).collect();
    let rmse = ((0..3).map(|i| (counts[i] - rate[i]).powi(2)).sum::<f64>() / 3.0).sqrt();
    assert!((t.rmse.unwrap() - rmse).abs() < 1e-12);
    assert_eq!((t.error_rate, t.auc, t.nmse), (None, None, None));
}

#[test]
fn hand_computed_values() {
    // y = [1, 3], μ = [2, 2], training mean 0: NMSE = (1 + 1)/(1 + 9) = 0.2
    let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-15);
    assert!(close(nmse(&[1.0, 3.0], &[2.0, 2.0], 0.0), 0.2));
    // the training mean, not the test mean, normalises
    assert!(close(nmse(&[1.0, 3.0], &[2.0, 2.0], 2.0), 1.0));
    // a constant test target has an NMSE (its distance from the training mean)…
    assert!(close(nmse(&[4.0, 4.0], &[3.0, 5.0], 2.0), 2.0 / 8.0));
    // …unless it is the training mean itself: undefined, not NaN or infinity
    assert_eq!(nmse(&[2.0, 2.0], &[3.0, 2.0], 2.0), None);
    assert_eq!(nmse(&[2.0], &[2.0], 2.0), None);
    assert!((mse(&[1.0, 3.0], &[2.0, 5.0]) - 2.5).abs() < 1e-15);
    // standard normal at its mean: ½ log 2π
    let v = mnlp(&[0.0], &[0.0], &[1.0]);
    assert!((v - 0.5 * (2.0 * std::f64::consts::PI).ln()).abs() < 1e-15);
    // one sd away with variance 4: ½(1 + ln 4 + ln 2π)
    let v = mnlp(&[2.0], &[0.0], &[4.0]);
    assert!((v - 0.5 * (1.0 + 4f64.ln() + (2.0 * std::f64::consts::PI).ln())).abs() < 1e-15);
    // a negative variance is raised to the floor, a larger one is left alone
    let (y, m) = ([2.0, 0.0], [0.0, 0.0]);
    let clamped = mnlp_clamped(&y, &m, &[-1.0, 4.0], 4.0);
    assert_eq!(clamped, mnlp(&y, &m, &[4.0, 4.0]));
    assert_eq!(
        mnlp_clamped(&y, &m, &[5.0, 4.0], 1.0),
        mnlp(&y, &m, &[5.0, 4.0])
    );
}

#[test]
fn classification_scores() {
    let y = [0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0];
    let s = [0.1, 0.8, 0.35, 0.35, 0.9, 0.2, 0.6, 0.6, 0.7, 0.05];
    // scikit-learn 1.9.1: roc_auc_score(y, s) = 0.92 (two tied pairs)
    assert!((auc(&y, &s).unwrap() - 0.92).abs() < 1e-15);
    assert_eq!(auc(&[1.0, 1.0], &[0.2, 0.3]), None);
    // wrong: y=1 at 0.35, y=0 at 0.6
    assert!((error_rate(&y, &s) - 0.2).abs() < 1e-15);
    assert_eq!(error_rate(&[1.0, 0.0], &[0.5, 0.5]), 0.5);
}
