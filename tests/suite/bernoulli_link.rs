//! The bernoulli likelihood's logit link chosen by `--link` (issue 43): svgp fits it (its
//! bound's gradient against finite differences), its expectations by Gauss–Hermite
//! against a fine integral, `sgpw fit`/`predict` carry it through the model file and
//! predict p(y = 1) = E[σ(f)] by quadrature; EP refuses it before any work.

use crate::common::*;
use nalgebra::DMatrix;
use sgpw::likelihoods::{
    Bernoulli, BinaryLabels, GaussHermite, Likelihood, LikelihoodKind, LikelihoodTable, Link,
};
use sgpw::methods::Method;
use sgpw::methods::pseudo;
use sgpw::methods::svgp::{SVGP, set_variational};
use sgpw::model_file::{Hyper, ModelFile};

/// ∫ g(f) N(f; μ, v) df by the trapezoid rule over ±12 standard deviations.
fn integral(mu: f64, v: f64, g: impl Fn(f64) -> f64) -> f64 {
    let s = v.sqrt();
    let (a, steps) = (mu - 12.0 * s, 100_000);
    let h = 24.0 * s / steps as f64;
    (0..=steps)
        .map(|k| {
            let f = a + h * k as f64;
            let w = if k == 0 || k == steps { 0.5 } else { 1.0 };
            let z = (f - mu) / s;
            w * g(f) * (-0.5 * z * z).exp() / (s * (2.0 * std::f64::consts::PI).sqrt())
        })
        .sum::<f64>()
        * h
}

fn logistic(f: f64) -> f64 {
    1.0 / (1.0 + (-f).exp())
}

/// The expected log-density and p(y = 1) of the logit link by 20-point Gauss–Hermite
/// against a fine integral (to 1e-5: the rule's own error, 1.4e-6 at v = 4); the probit approximation σ(μ/√(1 + πv/8)) (MacKay's) is
/// near but not what sgpw predicts.
#[test]
fn logit_expectations_by_quadrature_match_a_fine_integral() {
    let lik = Bernoulli::new(Link::Logit, 0.0);
    let q = GaussHermite::new(20).unwrap();
    for (mu, v) in [(0.3, 0.5), (-1.7, 2.0), (2.5, 0.05), (0.0, 4.0)] {
        for y in [0.0, 1.0] {
            let e = lik.expected_log_density(y, mu, v, &q, None);
            let want = integral(mu, v, |f| lik.log_density(y, f, None).value);
            assert!(
                (e.value - want).abs() < 1e-5,
                "E log p {mu} {v}: {} {want}",
                e.value
            );
        }
        let p = lik.predictive_moments(mu, v, &q).0;
        let want = integral(mu, v, logistic);
        assert!((p - want).abs() < 1e-5, "p {mu} {v}: {p} {want}");
        let mackay = logistic(mu / (1.0 + std::f64::consts::PI * v / 8.0).sqrt());
        assert!((p - mackay).abs() < 0.02, "{p} {mackay}");
    }
}

/// svgp's bound with the logit link: its gradient against finite differences, and a
/// value other than the probit's at the same parameters (the table's link is read).
#[test]
fn the_logit_bound_gradient_matches_finite_differences() {
    let mut data = toy_data(40, 2, 11);
    data.y = data.y.iter().map(|v| f64::from(*v > 0.0)).collect();
    let mut model = ModelFile::new("svgp", Hyper::se(1.3, vec![0.9, 1.4], 0.05));
    let z = DMatrix::from_fn(5, 2, |i, d| data.x[(3 * i + 1, d)]);
    pseudo::set_inducing_points(&mut model, &z);
    let q = sgpw::methods::svgp::elbo::Variational {
        mean: nalgebra::DVector::from_fn(5, |i, _| (i as f64 * 1.3).sin()),
        chol: DMatrix::from_fn(5, 5, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Equal => 0.6 + 0.05 * i as f64,
            std::cmp::Ordering::Greater => 0.1 * ((i + 2 * j) as f64).cos(),
            std::cmp::Ordering::Less => 0.0,
        }),
    };
    set_variational(&mut model, &q);
    let labels = Some(BinaryLabels { labels: [0.0, 1.0] });
    model.likelihood = LikelihoodTable::start(LikelihoodKind::Bernoulli, labels);
    let probit = SVGP.nlml(&model, &data, &ex()).expect("nlml");
    model.likelihood.as_mut().unwrap().link = Some(Link::Logit);
    SVGP.check(&model).expect("valid");
    let theta = SVGP.pack(&model);
    let o = SVGP.objective(&model, &data, &ex()).expect("objective");
    assert!((o.nlml - probit).abs() > 1e-3, "{} {probit}", o.nlml);
    let mut scratch = model.clone();
    check_gradient(
        "svgp logit",
        &mut |t: &[f64]| {
            SVGP.unpack(t, &mut scratch);
            SVGP.nlml(&scratch, &data, &ex()).expect("nlml")
        },
        &theta,
        &o.grad,
        1e-5,
        1e-6,
    );
}

fn sgpw(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// `sgpw fit --method svgp --likelihood bernoulli --link logit` writes `link = "logit"`
/// and `sgpw predict`'s p1 is E[σ(f)] under the latent N(latent_mean, latent_var); fitc
/// (EP) refuses the link before any work, and --link without bernoulli is refused.
#[test]
fn the_logit_link_is_chosen_on_the_command_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let train = dir.path().join("classes.csv");
    let mut csv = String::from("a,b,class\n");
    for i in 0..80 {
        let (a, b) = ((i as f64 * 0.37).sin() * 2.0, (i as f64 * 0.91).cos());
        let label = if (2.0 * a).sin() + b + 0.4 * (i as f64 * 2.3).sin() > 0.0 {
            "yes"
        } else {
            "no"
        };
        let label = if label == "yes" { 1 } else { -1 };
        csv.push_str(&format!("{a},{b},{label}\n"));
    }
    std::fs::write(&train, csv).unwrap();
    let saved = dir.path().join("m.toml");
    let (t, s) = (train.to_str().unwrap(), saved.to_str().unwrap());
    let base = ["fit", "--train", t, "--method", "svgp", "--m", "8"];
    let (ok, _, err) = sgpw(
        &[
            &base[..],
            &[
                "--likelihood",
                "bernoulli",
                "--link",
                "logit",
                "--epochs",
                "100",
            ],
            &["--save-model", s],
        ]
        .concat(),
    );
    assert!(ok, "{err}");
    let model = ModelFile::read(&saved).expect("reads");
    assert_eq!(model.likelihood.as_ref().unwrap().link, Some(Link::Logit));
    let input = dir.path().join("at.csv");
    std::fs::write(&input, "a,b\n0.5,1.0\n-1.5,-0.5\n1.9,0.2\n").unwrap();
    let (ok, out, err) = sgpw(&["predict", "--model", s, "--input", input.to_str().unwrap()]);
    assert!(ok, "{err}");
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("latent_mean,latent_var,p1"));
    for line in lines {
        let v: Vec<f64> = line.split(',').map(|c| c.parse().unwrap()).collect();
        let want = integral(v[0], v[1], logistic);
        assert!((v[2] - want).abs() < 1e-6, "{line}: p1 against {want}");
        let probit = sgpw::likelihoods::normal::cdf(v[0] / (1.0 + v[1]).sqrt());
        assert!((v[2] - probit).abs() > 1e-3, "{line}: the probit's p");
    }

    let (ok, _, err) = sgpw(&[
        "fit",
        "--train",
        t,
        "--method",
        "fitc",
        "--m",
        "5",
        "--likelihood",
        "bernoulli",
        "--link",
        "logit",
    ]);
    assert!(
        !ok && err.contains("--link") && err.contains("probit"),
        "{err}"
    );
    let (ok, _, err) = sgpw(&[&base[..], &["--link", "logit"]].concat());
    assert!(!ok && err.contains("--likelihood bernoulli"), "{err}");
}
