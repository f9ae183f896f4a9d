//! The walk of a new likelihood (docs/architecture.md, "How to add a likelihood"): a
//! likelihood defined here, outside the crate, touching none of its files — logistic
//! noise, y = f + ε with ε ~ Logistic(0, s), its scale s learned — implements the
//! `Likelihood` trait (its density with two f-derivatives and the derivative in log s,
//! its conditional moments); the expected log-density, the predictive moments and the
//! log predictive density then come by Gauss–Hermite quadrature. Its derivatives are
//! checked against finite differences, svgp's bound with it too, and svgp fits it
//! through the ordinary `Method::fit`: the bound improves, the latent mean follows the
//! function and the learned scale finds the noise's.
//!
//! In the crate, registering it would be the file `src/likelihoods/logistic.rs` with
//! this code, its variant in `LikelihoodKind` (name, `ALL`, `default_likelihood`), its
//! arm in `LikelihoodTable::likelihood` and a case in `likelihoods/tests.rs`; here a
//! model holds it through `LikelihoodTable::of_code`.

use crate::common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sgpw::likelihoods::{
    BadTarget, GaussHermite, Likelihood, LikelihoodKind, LikelihoodTable, Pointwise, finite_targets,
};
use sgpw::methods::Method;
use sgpw::methods::svgp::SVGP;
use sgpw::run_context::RunContext;
use sgpw::run_spec::RunSpec;

/// y = f + ε, ε logistic with scale s: log p = −z − 2 log(1 + e^{−z}) − log s,
/// z = (y − f)/s; Var ε = π²s²/3.
#[derive(Clone, Copy, Debug)]
struct LogisticNoise {
    scale: f64,
}

impl Likelihood for LogisticNoise {
    fn name(&self) -> &'static str {
        "logistic"
    }
    fn param_names(&self) -> &'static [&'static str] {
        &["scale"]
    }
    fn params(&self) -> Vec<f64> {
        vec![self.scale]
    }
    fn set_params(&mut self, values: &[f64]) {
        self.scale = values[0];
    }
    fn check_targets(&self, y: &[f64]) -> Result<(), BadTarget> {
        finite_targets(y)
    }
    /// With t = tanh(z/2): ∂/∂f = t/s, ∂²/∂f² = −(1 − t²)/(2s²), ∂/∂log s = z·t − 1.
    fn log_density(&self, y: f64, f: f64, d_params: Option<&mut [f64]>) -> Pointwise {
        let s = self.scale;
        let z = (y - f) / s;
        let t = (0.5 * z).tanh();
        // −z − 2 log(1 + e^{−z}) = −|z| − 2 log(1 + e^{−|z|}) (the density is even)
        let a = z.abs();
        if let Some(d) = d_params {
            d[0] += z * t - 1.0;
        }
        Pointwise {
            value: -a - 2.0 * (-a).exp().ln_1p() - s.ln(),
            d_f: t / s,
            d2_f: -(1.0 - t * t) / (2.0 * s * s),
        }
    }
    fn conditional_moments(&self, f: f64) -> (f64, f64) {
        let pi = std::f64::consts::PI;
        (f, pi * pi * self.scale * self.scale / 3.0)
    }
    fn clone_box(&self) -> Box<dyn Likelihood> {
        Box::new(*self)
    }
}

fn central(g: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-5;
    (g(x + h) - g(x - h)) / (2.0 * h)
}

/// Its derivatives in f and log s against central differences, pointwise and under
/// quadrature (the trait's default expectation).
#[test]
fn its_derivatives_match_finite_differences() {
    let lik = LogisticNoise { scale: 0.7 };
    let quad = GaussHermite::new(20).unwrap();
    let with_scale = |s: f64| LogisticNoise { scale: s };
    for (y, f) in [(0.3, -1.2), (-0.5, 0.4), (2.0, 1.9), (1.0, 6.0)] {
        let mut d = [0.0];
        let p = lik.log_density(y, f, Some(&mut d));
        let by_f = |t: f64| lik.log_density(y, t, None).value;
        assert!((p.d_f - central(by_f, f)).abs() < 1e-8, "∂f at {y} {f}");
        let slope = |t: f64| lik.log_density(y, t, None).d_f;
        assert!((p.d2_f - central(slope, f)).abs() < 1e-8, "∂²f at {y} {f}");
        let by_log_s = |l: f64| with_scale(l.exp()).log_density(y, f, None).value;
        assert!(
            (d[0] - central(by_log_s, 0.7f64.ln())).abs() < 1e-8,
            "∂log s"
        );
        // the density integrates to one over y
        let mass: f64 = (-40_000..=40_000)
            .map(|k| lik.log_density(f + k as f64 * 1e-3, f, None).value.exp() * 1e-3)
            .sum();
        assert!((mass - 1.0).abs() < 1e-6, "{mass}");

        let (mean, var) = (f, 0.6);
        let mut d = [0.0];
        let e = lik.expected_log_density(y, mean, var, &quad, Some(&mut d));
        let at = |m: f64, v: f64, s: f64| {
            with_scale(s)
                .expected_log_density(y, m, v, &quad, None)
                .value
        };
        assert!((e.d_mean - central(|m| at(m, var, 0.7), mean)).abs() < 1e-7);
        assert!((e.d_var - central(|v| at(mean, v, 0.7), var)).abs() < 1e-7);
        assert!((d[0] - central(|l| at(mean, var, l.exp()), 0.7f64.ln())).abs() < 1e-7);
    }
}

/// Data from sin(2x) + logistic noise of scale 0.15.
fn data(n: usize, seed: u64) -> TrainData {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = nalgebra::DMatrix::<f64>::from_fn(n, 1, |_, _| rng.random_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| {
            let u: f64 = rng.random_range(1e-12..1.0);
            (2.0 * x[(i, 0)]).sin() + 0.15 * (u / (1.0 - u)).ln()
        })
        .collect();
    TrainData {
        x,
        y,
        log_exposure: None,
    }
}

/// svgp with the likelihood defined above: the bound's gradient (with ∂/∂log s) against
/// finite differences, then a fit through `Method::fit` that improves the bound, learns
/// the noise's scale and follows the function.
#[test]
fn svgp_fits_a_likelihood_defined_here() {
    let train = data(300, 3);
    let spec = RunSpec {
        method: "svgp".into(),
        m: 12,
        seed: 1,
        iters: 500,
        standardize: false,
        options: options("likelihood = \"studentt\"\nepochs = 300"),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut model = init(&SVGP, &train, &spec, &mut rng).expect("start");
    model.likelihood = Some(LikelihoodTable::of_code(
        LikelihoodKind::StudentT,
        Box::new(LogisticNoise { scale: 0.5 }),
    ));
    SVGP.check(&model).expect("valid");

    let theta = SVGP.pack(&model);
    let start = SVGP.objective(&model, &train, &ex()).expect("objective");
    let mut scratch = model.clone();
    check_gradient(
        "svgp logistic noise",
        &mut |t: &[f64]| {
            SVGP.unpack(t, &mut scratch);
            SVGP.nlml(&scratch, &train, &ex()).expect("nlml")
        },
        &theta,
        &start.grad,
        1e-5,
        1e-5,
    );

    let valid = spec.check(train.y.len()).expect("valid spec");
    let (fitted, _) = SVGP
        .fit(model, &train, &valid, &RunContext::quiet(ex()))
        .expect("fits");
    let end = SVGP.nlml(&fitted, &train, &ex()).expect("nlml");
    assert!(end < start.nlml - 50.0, "{} → {end}", start.nlml);
    let scale = fitted.likelihood.as_ref().unwrap().params["scale"];
    assert!((scale - 0.15).abs() < 0.05, "learned scale {scale}");
    let lik = fitted.likelihood().expect("the code likelihood");
    assert_eq!(lik.name(), "logistic");

    let test = data(200, 4);
    let pred = sgpw::train::Predictor::new(fitted, Some((&train.x, &train.y)))
        .expect("predictor")
        .predict(&test.x)
        .expect("predicts");
    let rmse = (pred
        .mean
        .iter()
        .enumerate()
        .map(|(i, m)| (m - (2.0 * test.x[(i, 0)]).sin()).powi(2))
        .sum::<f64>()
        / 200.0)
        .sqrt();
    assert!(rmse < 0.1, "latent mean against the function: {rmse}");
}
