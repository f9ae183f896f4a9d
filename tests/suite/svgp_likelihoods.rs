//! svgp with every likelihood (docs/methods.md §8.5): the bound's gradient against
//! finite differences, the general likelihood term at the Gaussian equal to the closed
//! form, the bound and its gradient equal to GPflow 2.9.2's SVGP at identical
//! parameters, and a fit of a small synthetic classification set.

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sgpw::data::Dataset;
use sgpw::likelihoods::{GaussHermite, Gaussian, LikelihoodKind, LikelihoodTable};
use sgpw::linalg::Jitter;
use sgpw::methods::svgp::any_likelihood::{self, Observation};
use sgpw::methods::svgp::elbo::{self, Factor, Prior, Rows, Variational, Want};
use sgpw::methods::svgp::{SVGP, evaluate, set_variational};
use sgpw::methods::{Method, pseudo};
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::run_spec::{MethodOptions, RunSpec};

/// A random q(v): mean of order one, R lower-triangular with a positive diagonal.
fn random_q(m: usize, seed: u64) -> Variational {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mean = DVector::from_fn(m, |_, _| rng.random_range(-1.0..1.0));
    let chol = DMatrix::from_fn(m, m, |i, j| {
        if i == j {
            rng.random_range(0.3..1.0)
        } else if i > j {
            rng.random_range(-0.3..0.3)
        } else {
            0.0
        }
    });
    Variational { mean, chol }
}

/// Toy inputs with targets for `kind`: the toy regression targets, their sign as 0/1
/// labels, or counts around exp of them.
fn toy_for(kind: LikelihoodKind) -> TrainData {
    let mut data = toy_data(40, 2, 11);
    data.y = match kind {
        LikelihoodKind::Bernoulli => data.y.iter().map(|v| f64::from(*v > 0.0)).collect(),
        LikelihoodKind::Poisson => data.y.iter().map(|v| (v.exp()).round()).collect(),
        _ => data.y,
    };
    data
}

/// An svgp model with m = 5 inducing inputs from the data, the likelihood `kind`
/// (studentt at scale 0.4, df 4.5), a random q(v).
fn model_for(data: &TrainData, kind: LikelihoodKind) -> ModelFile {
    let mut model = ModelFile::new("svgp", Hyper::se(1.3, vec![0.9, 1.4], 0.05));
    let z = DMatrix::from_fn(5, 2, |i, d| data.x[(3 * i + 1, d)]);
    pseudo::set_inducing_points(&mut model, &z);
    set_variational(&mut model, &random_q(5, 5));
    let labels = (kind == LikelihoodKind::Bernoulli)
        .then_some(sgpw::likelihoods::BinaryLabels { labels: [0.0, 1.0] });
    model.likelihood = LikelihoodTable::start(kind, labels).map(|mut t| {
        if kind == LikelihoodKind::StudentT {
            t.params.insert("scale".into(), 0.4);
            t.params.insert("df".into(), 4.5);
        }
        t
    });
    SVGP.check(&model).expect("valid");
    model
}

#[test]
fn the_bound_gradient_matches_finite_differences_with_every_likelihood() {
    for kind in [
        LikelihoodKind::StudentT,
        LikelihoodKind::Bernoulli,
        LikelihoodKind::Poisson,
    ] {
        let data = toy_for(kind);
        let model = model_for(&data, kind);
        let theta = SVGP.pack(&model);
        let o = SVGP.objective(&model, &data, &ex()).expect("objective");
        assert_eq!(theta.len(), o.grad.len(), "{kind}");
        // chunks of 7 rows sum to the whole
        let chunked = Exec {
            chunk_entries: 7 * 5,
            ..Default::default()
        };
        let c = SVGP.objective(&model, &data, &chunked).expect("objective");
        assert_close("chunked", &c.grad, &o.grad, 1e-10);
        let mut scratch = model.clone();
        check_gradient(
            &format!("svgp {kind}"),
            &mut |t: &[f64]| {
                SVGP.unpack(t, &mut scratch);
                SVGP.nlml(&scratch, &data, &ex()).expect("nlml")
            },
            &theta,
            &o.grad,
            1e-5,
            1e-6,
        );
        // the likelihood's parameters are in the gradient (studentt: scale, df) and
        // move the bound
        let lik = if kind == LikelihoodKind::StudentT {
            2
        } else {
            0
        };
        // [log σ0², log ℓ (2)] with no σ² (not Gaussian), Z, the likelihood's, μ, R
        assert_eq!(theta.len(), 3 + 10 + lik + 5 + 15, "{kind}");
        // a minibatch of 9 rows scaled by n/B
        let idx = [3, 17, 5, 22, 39, 0, 11, 28, 30];
        let (x, y) = rows_block(&data, &idx);
        let c = data.y.len() as f64 / idx.len() as f64;
        let batch = |m: &ModelFile, want| {
            evaluate(
                m,
                std::iter::once((x.clone(), y.as_slice())),
                c,
                want,
                None,
                &ex(),
            )
            .expect("batch")
        };
        let e = batch(&model, Want::All);
        check_gradient(
            &format!("svgp minibatch {kind}"),
            &mut |t: &[f64]| {
                SVGP.unpack(t, &mut scratch);
                batch(&scratch, Want::Value).elbo
            },
            &theta,
            &e.grad,
            1e-5,
            1e-6,
        );
        // the natural-gradient evaluation gives the same ∂/∂μ and ∂/∂Σ as the full one
        let n = batch(&model, Want::Natural);
        assert_close(
            "d_mean",
            n.d_mean_lik.as_slice(),
            e.d_mean_lik.as_slice(),
            1e-12,
        );
        assert_close(
            "d_sigma",
            n.d_sigma_lik.as_slice(),
            e.d_sigma_lik.as_slice(),
            1e-12,
        );
    }
}

#[test]
fn the_general_term_at_the_gaussian_equals_the_closed_form() {
    let data = toy_data(30, 2, 4);
    let z = DMatrix::from_fn(6, 2, |i, d| data.x[(4 * i, d)]);
    let q = random_q(6, 9);
    let kernel = Hyper::se(1.3, vec![0.7, 1.2], 0.2).kernel();
    let prior = Prior {
        kernel: &*kernel,
        z: &z,
        jitter: Jitter::Auto { scale: 1.3 },
    };
    let par = ex().par;
    let factor = Factor::new(&prior, par).expect("factor");
    let proj = elbo::project(&prior, &factor, &data.x, par);
    let lik = Gaussian::new(0.2);
    let quad = GaussHermite::new(20).expect("rule");
    let obs = Observation {
        lik: &lik,
        quad: &quad,
    };
    for want in [Want::Value, Want::Natural, Want::Model, Want::All] {
        let rows = || Rows {
            y: &data.y,
            c: 2.5,
            log_exposure: None,
        };
        let old = elbo::gaussian_terms(0.2, &factor, &q, &proj, rows(), want, par);
        let new = any_likelihood::expected_loglik(&obs, &factor, &q, &proj, rows(), want, par);
        if want != Want::Natural {
            assert_close(
                "value",
                &[new.expected_loglik],
                &[old.expected_loglik],
                1e-12,
            );
            assert_close("kdiag", &new.d_kdiag, &old.d_kdiag, 1e-12);
        }
        if want == Want::Value {
            continue;
        }
        assert_close(
            "d_mean",
            new.d_mean_lik.as_slice(),
            old.d_mean_lik.as_slice(),
            1e-12,
        );
        if want != Want::Model {
            let (a, b) = (new.d_sigma_lik.as_slice(), old.d_sigma_lik.as_slice());
            assert_close("d_sigma", a, b, 1e-12);
        }
        if matches!(want, Want::Model | Want::All) {
            let pick =
                |t: &elbo::Terms| (t.d_kub.clone().expect("kub"), t.d_kuu.clone().expect("kuu"));
            let ((nk, nu), (ok, ou)) = (pick(&new), pick(&old));
            assert_close("d_kub", nk.as_slice(), ok.as_slice(), 1e-12);
            assert_close("d_kuu", nu.as_slice(), ou.as_slice(), 1e-12);
            // the Gaussian's one parameter is σ²: ∂/∂log σ² = σ² ∂/∂σ²
            assert_close("d_noise", &new.d_lik_params, &[0.2 * old.d_noise], 1e-12);
        }
    }
}

#[test]
fn the_bound_and_its_gradient_equal_gpflows_with_every_likelihood() {
    let f = fixture("gpflow_svgp_likelihoods.json");
    let x = matrix(&f, "x");
    let z = matrix(&f, "z");
    let mean = DVector::from_vec(vector(&f, "mu"));
    let chol = matrix(&f, "chol");
    let lengthscales = vector(&f, "lengthscales");
    let signal = f["signal_variance"].as_f64().expect("σ0²");
    for (name, case) in f["likelihoods"].as_object().expect("cases") {
        let kind: LikelihoodKind = name.parse().expect("a likelihood");
        let mut model = ModelFile::new("svgp", Hyper::se(signal, lengthscales.clone(), 1.0));
        model.jitter = f["jitter"].as_f64();
        pseudo::set_inducing_points(&mut model, &z);
        set_variational(
            &mut model,
            &Variational {
                mean: mean.clone(),
                chol: chol.clone(),
            },
        );
        let labels = (kind == LikelihoodKind::Bernoulli)
            .then_some(sgpw::likelihoods::BinaryLabels { labels: [0.0, 1.0] });
        let mut table = LikelihoodTable::start(kind, labels).expect("not gaussian");
        for (k, v) in case["params"].as_object().expect("params") {
            table.params.insert(k.clone(), v.as_f64().expect("a value"));
        }
        model.likelihood = Some(table);
        SVGP.check(&model).expect("valid");
        let data = TrainData {
            x: x.clone(),
            y: vector(case, "y"),
            log_exposure: None,
        };
        let o = SVGP.objective(&model, &data, &ex()).expect("objective");
        let want = case["neg_elbo"].as_f64().expect("value");
        assert_close(&format!("{name} −ELBO"), &[o.nlml], &[want], 1e-9);
        // GPflow's gradient holds log σ² after the lengthscales (0: not Gaussian), an
        // entry the model's θ does not have
        let mut grad = vector(case, "gradient");
        assert_eq!(grad.remove(3), 0.0, "{name}");
        let scale = grad.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        let worst = o
            .grad
            .iter()
            .zip(&grad)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f64, f64::max);
        assert!(
            worst <= 1e-9 * scale,
            "{name}: gradient differs by {worst:e} against a largest entry {scale:e}"
        );
    }
}

/// Two classes either side of a curve in 2-D, 10% of labels flipped; a test set.
fn classification_set(n: usize, seed: u64) -> (DMatrix<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: DMatrix<f64> = DMatrix::from_fn(n, 2, |_, _| rng.random_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| {
            let inside = x[(i, 1)] > (1.5 * x[(i, 0)]).sin();
            let flip = rng.random_range(0.0..1.0) < 0.1;
            f64::from(inside != flip)
        })
        .collect();
    (x, y)
}

#[test]
fn svgp_classifies_a_small_synthetic_set() {
    let (x, y) = classification_set(300, 1);
    let (xt, yt) = classification_set(500, 2);
    let ds = Dataset {
        classes: None,
        feature_names: vec!["x1".into(), "x2".into()],
        target_name: "class".into(),
        x_train: x,
        y_train: DVector::from_vec(y),
        x_test: Some(xt.clone()),
        y_test: Some(DVector::from_vec(yt.clone())),
        notes: Vec::new(),
    };
    let spec = RunSpec {
        method: "svgp".into(),
        m: 16,
        seed: 1,
        iters: sgpw::run_spec::DEFAULT_ITERATIONS,
        standardize: true,
        options: MethodOptions {
            likelihood: Some(LikelihoodKind::Bernoulli),
            ..Default::default()
        },
    };
    let (r, _) = common::fit(&ds, &spec);
    let r = r.expect("fits");
    assert_eq!(r.stop, sgpw::optim::Stop::Converged);
    assert_eq!(r.model.likelihood_kind(), LikelihoodKind::Bernoulli);
    // the latent mean's sign classifies: near the 10% of flipped labels, far below the
    // majority class's error
    let p = r.predictor.predict(&xt).expect("predicts");
    let wrong = p
        .mean
        .iter()
        .zip(&yt)
        .filter(|(f, y)| (**f > 0.0) != (**y == 1.0))
        .count() as f64
        / yt.len() as f64;
    assert!(wrong < 0.16, "test error rate {wrong}");
}

/// A non-Gaussian fit ends at the bound's optimum, not where steps at Adam's halved rate
/// began to creep (issue 43: on breast cancer the old rule stopped 1–3.7 nats above
/// GPflow's L-BFGS): from the fitted model, L-BFGS on every parameter — σ0², ℓ, Z and
/// q(v)'s μ and R — for up to 1000 more iterations lowers the negative bound by less
/// than 0.05 nats. The steps' stages alone (no whole-data L-BFGS stage) leave more.
#[test]
fn svgp_with_a_non_gaussian_likelihood_ends_at_the_bound_s_optimum() {
    let (x, y) = classification_set(300, 3);
    let ds = Dataset {
        classes: None,
        feature_names: vec!["x1".into(), "x2".into()],
        target_name: "class".into(),
        x_train: x.clone(),
        y_train: DVector::from_vec(y.clone()),
        x_test: None,
        y_test: None,
        notes: Vec::new(),
    };
    // inputs as they are, so the model's units are the data's
    let spec = RunSpec {
        method: "svgp".into(),
        m: 16,
        seed: 2,
        iters: sgpw::run_spec::DEFAULT_ITERATIONS,
        standardize: false,
        options: MethodOptions {
            likelihood: Some(LikelihoodKind::Bernoulli),
            ..Default::default()
        },
    };
    let (r, _) = common::fit(&ds, &spec);
    let r = r.expect("fits");
    assert_eq!(r.stop, sgpw::optim::Stop::Converged);
    let data = TrainData {
        x,
        y,
        log_exposure: None,
    };
    let exec = ex();
    let fitted = SVGP.objective(&r.model, &data, &exec).expect("bound").nlml;
    let mut model = r.model.clone();
    let polished = sgpw::optim::minimize(
        |t| {
            SVGP.unpack(t, &mut model);
            let o = SVGP.objective(&model, &data, &exec)?;
            Ok((o.nlml, o.grad))
        },
        &SVGP.pack(&r.model),
        &sgpw::optim::Options {
            max_iters: 1000,
            ..Default::default()
        },
        &mut |_| sgpw::optim::Control::Continue,
    )
    .expect("polishes");
    assert!(
        fitted - polished.f < 0.05,
        "the fit ended at −ELBO {fitted}, L-BFGS from there reaches {}",
        polished.f
    );
}
