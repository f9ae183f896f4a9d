use nalgebra::DMatrix;
use sgpw::ep::posterior::*;
use sgpw::ep::sites::EpSettings;
use sgpw::ep::sites::probit_site;

/// A point whose whitened features are all 0 (far from every inducing input, its
/// Kuf column underflowed) has the prior N(0, g_i) as its cavity; EP runs through
/// it (the cavity's mean was 0/0 before: "the cavity of site 1 is not a proper
/// Gaussian", an imbalanced 1400-row set from scikit-learn under FITC and pep).
#[test]
fn a_point_with_no_features_has_the_prior_as_its_cavity() {
    let v = DMatrix::from_column_slice(2, 3, &[0.8, 0.3, 0.0, 0.0, -0.5, 0.9]);
    let prior = EpPrior {
        v,
        g: vec![0.2, 0.7, 0.1],
    };
    let post = run(&prior, &[1.0, 0.0, 1.0], None, &EpSettings::default()).expect("EP");
    assert_eq!(post.cavities.mean[1], 0.0);
    assert!(
        (post.cavities.var[1] - 0.7).abs() < 1e-15,
        "{:?}",
        post.cavities
    );
    // its site is the probit's on the prior N(0, 0.7), and it moves nothing else
    let (tau, nu) = probit_site(-1.0, 0.0, 0.7);
    assert!((post.sites.tau[1] - tau).abs() < 1e-12 && (post.sites.nu[1] - nu).abs() < 1e-12);
    let alone = EpPrior {
        v: prior.v.select_columns(&[0, 2]),
        g: vec![0.2, 0.1],
    };
    let without = run(&alone, &[1.0, 1.0], None, &EpSettings::default()).expect("EP");
    assert!((post.mean - without.mean).norm() < 1e-9);
}
