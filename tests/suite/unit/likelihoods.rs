//! Every likelihood's derivatives against finite differences, its closed forms against
//! the quadrature they replace, and the targets each refuses.

mod model_table;
mod normal;
mod quadrature;
mod quantile;

use sgpw::likelihoods::*;

fn quad() -> GaussHermite {
    GaussHermite::new(sgpw::likelihoods::quadrature::DEFAULT_POINTS).unwrap()
}

/// One of each, at parameters away from their defaults, with a target of its kind.
fn cases() -> Vec<(Box<dyn Likelihood>, f64)> {
    vec![
        (Box::new(Gaussian::new(0.3)), 0.7),
        (
            Box::new(StudentT {
                scale: 0.4,
                df: 4.5,
            }),
            -1.3,
        ),
        (Box::new(Bernoulli::default()), 1.0),
        (Box::new(Bernoulli::default()), 0.0),
        (Box::new(Bernoulli::gpflow()), 0.0),
        (Box::new(Bernoulli::new(Link::Logit, 0.0)), 1.0),
        (Box::new(Bernoulli::new(Link::Logit, 0.02)), 0.0),
        (Box::new(Poisson), 3.0),
    ]
}

/// Central difference of `g` at x with step h.
fn central(g: impl Fn(f64) -> f64, x: f64, h: f64) -> f64 {
    (g(x + h) - g(x - h)) / (2.0 * h)
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1.0),
        "{what}: {got} against {want}"
    );
}

/// `d` (∂/∂log θ_k, from the likelihood) against central differences of `value` in
/// each log θ_k.
fn check_log_params(
    lik: &dyn Likelihood,
    d: &[f64],
    name: &str,
    value: impl Fn(&dyn Likelihood) -> f64,
) {
    for (i, di) in d.iter().enumerate() {
        let at = |log_theta: f64| {
            let mut l = lik.clone_box();
            let mut v = l.params();
            v[i] = log_theta.exp();
            l.set_params(&v);
            value(l.as_ref())
        };
        let want = central(at, lik.params()[i].ln(), 1e-6);
        close(
            *di,
            want,
            1e-7,
            &format!("{name}: ∂/∂log {}", lik.param_names()[i]),
        );
    }
}

#[test]
fn pointwise_derivatives_match_finite_differences() {
    for (lik, y) in cases() {
        for f in [-2.5, -0.3, 0.0, 0.8, 2.2] {
            let p = lik.log_density(y, f, None);
            let name = format!("{} y={y} f={f}", lik.name());
            close(
                p.d_f,
                central(|t| lik.log_density(y, t, None).value, f, 1e-5),
                1e-8,
                &name,
            );
            close(
                p.d2_f,
                central(|t| lik.log_density(y, t, None).d_f, f, 1e-5),
                1e-7,
                &name,
            );
            let k = lik.param_names().len();
            let mut d = vec![0.0; k];
            lik.log_density(y, f, Some(&mut d));
            check_log_params(lik.as_ref(), &d, &name, |l| l.log_density(y, f, None).value);
        }
    }
}

#[test]
fn expectation_derivatives_match_finite_differences() {
    let q = quad();
    for (lik, y) in cases() {
        for (mean, var) in [(-1.1, 0.4), (0.2, 1e-3), (0.9, 2.5)] {
            let k = lik.param_names().len();
            let mut d = vec![0.0; k];
            let e = lik.expected_log_density(y, mean, var, &q, Some(&mut d));
            let value = |m: f64, v: f64| lik.expected_log_density(y, m, v, &q, None).value;
            let name = format!("{} y={y} μ={mean} v={var}", lik.name());
            close(
                e.d_mean,
                central(|m| value(m, var), mean, 1e-6),
                1e-8,
                &name,
            );
            close(
                e.d_var,
                central(|v| value(mean, v), var, (1e-2 * var).min(1e-4)),
                1e-6,
                &name,
            );
            check_log_params(lik.as_ref(), &d, &name, |l| {
                l.expected_log_density(y, mean, var, &q, None).value
            });
        }
    }
}

#[test]
fn closed_forms_equal_the_quadrature_they_replace() {
    let q = quad();
    for (lik, y) in [
        (Box::new(Gaussian::new(0.3)) as Box<dyn Likelihood>, 0.7),
        (Box::new(Poisson), 3.0),
    ] {
        for (mean, var) in [(-0.4, 0.3), (1.2, 0.05)] {
            let closed = lik.expected_log_density(y, mean, var, &q, None);
            let by_rule = by_quadrature(lik.as_ref(), y, mean, var, &q, None);
            close(closed.value, by_rule.value, 1e-12, lik.name());
            close(closed.d_mean, by_rule.d_mean, 1e-11, lik.name());
            close(closed.d_var, by_rule.d_var, 1e-10, lik.name());
        }
    }
    // predictive moments: the closed forms against the default quadrature
    for lik in [
        Box::new(Gaussian::new(0.3)) as Box<dyn Likelihood>,
        Box::new(Poisson),
        Box::new(Bernoulli::default()),
        Box::new(Bernoulli::gpflow()),
        Box::new(StudentT {
            scale: 0.4,
            df: 4.5,
        }),
    ] {
        for (mean, var) in [(-0.4, 0.3), (1.2, 0.05)] {
            let (m, v) = lik.predictive_moments(mean, var, &q);
            let mq = q.expect(mean, var, |f| lik.conditional_moments(f).0);
            let sq = q.expect(mean, var, |f| {
                let (c, w) = lik.conditional_moments(f);
                w + c * c
            });
            close(m, mq, 1e-10, lik.name());
            close(v, sq - mq * mq, 1e-9, lik.name());
        }
    }
    // the Gaussian's log predictive density against the log-space rule (of many
    // points: the integrand is a Gaussian bump, not a polynomial)
    let g = Gaussian::new(0.3);
    let closed = g.log_predictive_density(0.7, -0.2, 0.5, &q);
    let rule = GaussHermite::new(100)
        .unwrap()
        .log_expect_exp(-0.2, 0.5, |f| g.log_density(0.7, f, None).value);
    close(closed, rule, 1e-12, "gaussian log predictive density");
    // probit's log predictive density in its tail-safe form equals the plain one
    let b = Bernoulli::default();
    for y in [0.0, 1.0] {
        let p = b.predictive_moments(0.4, 0.8, &q).0;
        let plain = if y == 1.0 { p.ln() } else { (1.0 - p).ln() };
        close(
            b.log_predictive_density(y, 0.4, 0.8, &q),
            plain,
            1e-14,
            "probit lpd",
        );
    }
}

/// Student-t's expectation computes its log-gamma and digamma terms once per target
/// instead of once per node: the same bits as the rule over its pointwise density, value
/// and every derivative (so every fit is unchanged, only faster).
#[test]
fn student_ts_expectation_is_the_rule_over_its_density_bit_for_bit() {
    let q = quad();
    for (scale, df) in [(0.4, 4.5), (1.0, 3.0), (2.5, 30.0), (0.05, 2.1)] {
        let lik = StudentT { scale, df };
        for (y, mean, var) in [
            (-1.3, 0.2, 0.3),
            (4.0, -0.5, 1e-6),
            (0.0, 0.0, 0.0),
            (7.5, 1.0, 2.0),
        ] {
            let (mut d_own, mut d_rule) = ([0.0; 2], [0.0; 2]);
            let own = lik.expected_log_density(y, mean, var, &q, Some(&mut d_own));
            let rule = by_quadrature(&lik, y, mean, var, &q, Some(&mut d_rule));
            let what = format!("σ {scale} ν {df} y {y} mean {mean} var {var}");
            assert_eq!(own.value.to_bits(), rule.value.to_bits(), "{what}");
            assert_eq!(own.d_mean.to_bits(), rule.d_mean.to_bits(), "{what}");
            assert_eq!(own.d_var.to_bits(), rule.d_var.to_bits(), "{what}");
            assert_eq!(d_own.map(f64::to_bits), d_rule.map(f64::to_bits), "{what}");
        }
    }
}

#[test]
fn the_probit_tails_stay_finite() {
    let b = Bernoulli::default();
    for f in [-1e4, -60.0, -38.5, 38.5, 60.0, 1e4] {
        for y in [0.0, 1.0] {
            let p = b.log_density(y, f, None);
            assert!(
                p.value.is_finite() && p.d_f.is_finite() && p.d2_f.is_finite(),
                "{f} {y}: {p:?}"
            );
            assert!(p.value <= 0.0);
        }
    }
    // a confident wrong label costs about f²/2
    let wrong = b.log_density(0.0, 40.0, None).value;
    assert!((wrong + 804.608_442_013_753_9).abs() < 1e-9, "{wrong}");
    let e = b.expected_log_density(0.0, 40.0, 0.5, &quad(), None);
    assert!(
        e.value.is_finite() && e.d_mean < 0.0 && e.d_var < 0.0,
        "{e:?}"
    );
}

#[test]
fn each_refuses_targets_it_cannot_take_by_row() {
    let bad = Poisson.check_targets(&[0.0, 2.0, 1.5, -1.0]).unwrap_err();
    assert_eq!(bad.row, 2);
    assert!(bad.reason.contains("count"), "{}", bad.reason);
    assert_eq!(Poisson.check_targets(&[0.0, 2.0, -1.0]).unwrap_err().row, 2);
    assert_eq!(
        Bernoulli::default()
            .check_targets(&[0.0, 1.0, -1.0])
            .unwrap_err()
            .row,
        2
    );
    assert_eq!(
        Gaussian::new(1.0)
            .check_targets(&[0.0, f64::NAN])
            .unwrap_err()
            .row,
        1
    );
    assert_eq!(
        StudentT::default()
            .check_targets(&[f64::INFINITY])
            .unwrap_err()
            .row,
        0
    );
    assert!(Gaussian::new(1.0).check_targets(&[0.5, -3.0]).is_ok());
}

#[test]
fn binary_labels_map_two_classes_and_refuse_the_rest() {
    let l = BinaryLabels::of(&[1.0, -1.0, -1.0, 1.0]).unwrap();
    assert_eq!(l.labels, [-1.0, 1.0]);
    assert_eq!(l.to_classes(&[1.0, -1.0, 1.0]), vec![1.0, 0.0, 1.0]);
    assert_eq!(
        BinaryLabels::of(&[0.0, 1.0])
            .unwrap()
            .to_classes(&[0.0, 1.0]),
        vec![0.0, 1.0]
    );
    let third = BinaryLabels::of(&[3.0, 7.0, 3.0, 5.0]).unwrap_err();
    assert_eq!(third.row, 3);
    assert!(third.reason.contains("third label 5"), "{}", third.reason);
    let one = BinaryLabels::of(&[2.0, 2.0]).unwrap_err();
    assert!(one.reason.contains("both classes"), "{}", one.reason);
}

#[test]
fn kinds_parse_and_give_their_likelihood() {
    for k in LikelihoodKind::ALL {
        assert_eq!(k.name().parse::<LikelihoodKind>().unwrap(), k);
        assert_eq!(k.default_likelihood().name(), k.name());
    }
    let err = "gamma".parse::<LikelihoodKind>().unwrap_err();
    assert!(
        err.contains("gaussian, studentt, bernoulli, poisson"),
        "{err}"
    );
    assert_eq!(Gaussian::new(0.2).gaussian_noise(), Some(0.2));
    assert_eq!(Poisson.gaussian_noise(), None);
}

/// GPflow 2.9.2's values at the same points (benches/gpflow_likelihoods.py wrote the
/// fixture): expectations, their derivatives in μ, v and log θ, the log predictive
/// density and the predictive moments, to 1e-12 relative.
#[test]
fn agrees_with_gpflow() {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../../fixtures/gpflow_likelihoods.json")).unwrap();
    assert_eq!(fixture["quadrature_points"], 20);
    let q = GaussHermite::new(20).unwrap();
    let num = |v: &serde_json::Value| v.as_f64().unwrap();
    let mut compared = 0;
    for case in fixture["cases"].as_array().unwrap() {
        let params = &case["params"];
        let lik: Box<dyn Likelihood> = match case["likelihood"].as_str().unwrap() {
            "gaussian" => Box::new(Gaussian::new(num(&params["noise_variance"]))),
            "studentt" => Box::new(StudentT {
                scale: num(&params["scale"]),
                df: num(&params["df"]),
            }),
            "bernoulli_gpflow" => Box::new(Bernoulli::gpflow()),
            "bernoulli_logit" => Box::new(Bernoulli::new(Link::Logit, 0.0)),
            "poisson" => Box::new(Poisson),
            other => panic!("unknown case {other}"),
        };
        for row in case["rows"].as_array().unwrap() {
            let (y, mean, var) = (num(&row["y"]), num(&row["mean"]), num(&row["var"]));
            let name = format!("{} y={y} μ={mean} v={var}", case["likelihood"]);
            let mut d = vec![0.0; lik.param_names().len()];
            let e = lik.expected_log_density(y, mean, var, &q, Some(&mut d));
            close(
                e.value,
                num(&row["expected"]),
                1e-12,
                &format!("{name} value"),
            );
            close(
                e.d_mean,
                num(&row["d_mean"]),
                1e-12,
                &format!("{name} ∂/∂μ"),
            );
            close(e.d_var, num(&row["d_var"]), 1e-11, &format!("{name} ∂/∂v"));
            let want: Vec<f64> = row["d_log_params"]
                .as_array()
                .unwrap()
                .iter()
                .map(num)
                .collect();
            assert_eq!(d.len(), want.len(), "{name}");
            for (k, (got, want)) in d.iter().zip(&want).enumerate() {
                close(
                    *got,
                    *want,
                    1e-12,
                    &format!("{name} ∂/∂log {}", lik.param_names()[k]),
                );
            }
            let lpd = lik.log_predictive_density(y, mean, var, &q);
            close(
                lpd,
                num(&row["log_predictive_density"]),
                1e-12,
                &format!("{name} lpd"),
            );
            let (m, v) = lik.predictive_moments(mean, var, &q);
            close(
                m,
                num(&row["predictive_mean"]),
                1e-12,
                &format!("{name} mean"),
            );
            // GPflow forms Poisson's by its 20-point rule, sgpw in closed form: they differ
            // by the rule's error (2.5e-11 relative at v = 2.5)
            close(
                v,
                num(&row["predictive_var"]),
                1e-10,
                &format!("{name} var"),
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 40);
}
