//! VFE, DTC and power EP (docs/methods.md §1) on the SE pseudo-input family: gradients of
//! every group against finite differences, the O(n·m²) value against a dense
//! O(n³) evaluation, the ties between them (power EP at α = 1 is FITC, at α → 0 VFE),
//! and GPflow 2.9.2's SGPR and GPRFITC values on kin40k at its own starting point
//! (tests/fixtures/README.md).

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::exec::Par;
use sgpw::methods::pseudo::Inducing;
use sgpw::methods::{self, Method};
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::run_spec::{ApproxKind, MethodOptions, RunSpec};
use std::f64::consts::PI;

fn spec(method: &str, m: usize, options: MethodOptions) -> RunSpec {
    RunSpec {
        method: method.into(),
        m,
        seed: 2,
        iters: 10,
        standardize: false,
        options,
    }
}

/// A model of `method` from init, moved off the defaults so no gradient entry is tiny.
fn model_for(method: &str, m: usize, options: MethodOptions, data: &TrainData) -> ModelFile {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let meth = methods::get(method).expect("method");
    let mut model = init(meth, data, &spec(method, m, options), &mut rng).expect("init");
    model.hyper.lengthscales = model.hyper.lengthscales.iter().map(|l| l * 0.6).collect();
    model.hyper.noise_variance = 0.05;
    model
}

fn fd(method: &dyn Method, model: &ModelFile, data: &TrainData, what: &str) {
    method.check(model).expect("valid");
    let theta = method.pack(model);
    let o = method.objective(model, data, &ex()).expect("objective");
    assert_eq!(theta.len(), o.grad.len());
    let mut scratch = model.clone();
    check_gradient(
        what,
        &mut |t: &[f64]| {
            method.unpack(t, &mut scratch);
            method.nlml(&scratch, data, &ex()).expect("nlml")
        },
        &theta,
        &o.grad,
        1e-5,
        1e-6,
    );
}

/// σ0², ℓ, σ², the inducing inputs, and the automatic jitter's dependence on σ0²
/// (a fixed jitter too), for vfe, dtc and pep.
#[test]
fn gradients_match_finite_differences() {
    let data = toy_data(60, 2, 11);
    for jitter in [None, Some(1e-6)] {
        for (method, options) in [
            ("vfe", MethodOptions::default()),
            ("dtc", MethodOptions::default()),
            ("pep", MethodOptions::default()),
            (
                "pep",
                MethodOptions {
                    alpha: Some(0.2),
                    ..Default::default()
                },
            ),
        ] {
            let mut model = model_for(method, 7, options, &data);
            model.jitter = jitter;
            let m = methods::get(method).expect("method");
            fd(m, &model, &data, &format!("{method} jitter {jitter:?}"));
        }
    }
}

/// The inter-domain families under the other approximations (`--approx`).
#[test]
fn inter_domain_features_under_every_approximation() {
    let data = toy_data(50, 2, 13);
    for method in ["fifgp", "tfifgp", "smgp"] {
        for (approx, alpha) in [
            (ApproxKind::Vfe, None),
            (ApproxKind::Dtc, None),
            (ApproxKind::Pep, Some(0.4)),
        ] {
            let options = MethodOptions {
                approx: Some(approx),
                alpha,
                ..Default::default()
            };
            let model = model_for(method, 5, options, &data);
            assert_eq!(model.approx, Some(approx));
            let m = methods::get(method).expect("method");
            fd(m, &model, &data, &format!("{method} {approx:?}"));
        }
    }
}

/// Dense O(n³) objective of an SE pseudo-input model: Gaussian NLML with
/// C = Q + a·diag(K − Q) + σ²I plus the approximation's extra term.
fn dense(model: &ModelFile, data: &TrainData, a: f64, extra: &dyn Fn(f64, f64) -> f64) -> f64 {
    let k = model.kernel();
    let z = DMatrix::from_fn(
        model
            .table::<Inducing>()
            .expect("reads")
            .expect("z")
            .points
            .len(),
        2,
        |i, d| model.table::<Inducing>().expect("reads").expect("z").points[i][d],
    );
    let mut kuu = k.gram(&z, Par::Seq);
    let jitter = model.jitter.expect("a fixed jitter");
    for i in 0..kuu.nrows() {
        kuu[(i, i)] += jitter;
    }
    let kuf = k.matrix(&z, &data.x, Par::Seq);
    let q = kuf.transpose() * kuu.cholesky().expect("spd").solve(&kuf);
    let n = data.y.len();
    let s2 = model.hyper.noise_variance;
    let mut c = q.clone();
    let mut e = 0.0;
    for i in 0..n {
        let d = model.hyper.signal_variance - q[(i, i)];
        c[(i, i)] += a * d + s2;
        e += extra(d, s2);
    }
    let l = c.cholesky().expect("spd");
    let y = DVector::from_column_slice(&data.y);
    let alpha = l.l().solve_lower_triangular(&y).expect("solves");
    0.5 * alpha.norm_squared()
        + l.l().diagonal().iter().map(|v| v.ln()).sum::<f64>()
        + 0.5 * n as f64 * (2.0 * PI).ln()
        + e
}

#[test]
fn the_fast_objective_equals_a_dense_evaluation() {
    let data = toy_data(180, 2, 17);
    let alpha = 0.3;
    for (method, a, options) in [
        ("fitc", 1.0, MethodOptions::default()),
        ("vfe", 0.0, MethodOptions::default()),
        ("dtc", 0.0, MethodOptions::default()),
        (
            "pep",
            alpha,
            MethodOptions {
                alpha: Some(alpha),
                ..Default::default()
            },
        ),
    ] {
        let mut model = model_for(method, 12, options, &data);
        model.jitter = Some(1e-6);
        let extra = |d: f64, s2: f64| match method {
            "vfe" => d / (2.0 * s2),
            "pep" => (1.0 - alpha) / (2.0 * alpha) * (1.0 + alpha * d / s2).ln(),
            _ => 0.0,
        };
        let want = dense(&model, &data, a, &extra);
        let got = methods::get(method)
            .expect("method")
            .nlml(&model, &data, &ex())
            .expect("nlml");
        assert!(
            ((got - want) / want).abs() < 1e-10,
            "{method}: {got} vs {want}"
        );
    }
}

/// pep at α = 1 is fitc bit for bit; at α = 1e-6 it is vfe to 1e-5 relative; vfe's
/// bound is above the evidence of the same DTC model (−ELBO ≥ NLML_DTC).
#[test]
fn power_ep_spans_fitc_and_vfe() {
    let data = toy_data(80, 2, 19);
    let base = model_for("fitc", 9, MethodOptions::default(), &data);
    let eval = |method: &str, alpha: Option<f64>| {
        let mut m = base.clone();
        m.method = method.into();
        m.alpha = alpha;
        methods::get(method)
            .expect("method")
            .objective(&m, &data, &ex())
            .expect("objective")
    };
    let (fitc, pep1) = (eval("fitc", None), eval("pep", Some(1.0)));
    assert_eq!(fitc.nlml, pep1.nlml);
    assert_eq!(fitc.grad, pep1.grad);
    let (vfe, pep0) = (eval("vfe", None), eval("pep", Some(1e-6)));
    assert!(((vfe.nlml - pep0.nlml) / vfe.nlml).abs() < 1e-5);
    assert!(eval("vfe", None).nlml >= eval("dtc", None).nlml);
    // a model file's approx must fit its method
    let mut wrong = base.clone();
    wrong.method = "vfe".into();
    wrong.approx = Some(ApproxKind::Fitc);
    assert!(wrong.check().is_err());
    let mut no_alpha = base.clone();
    no_alpha.method = "pep".into();
    assert!(no_alpha.check().is_err(), "pep needs alpha");
}

/// kin40k at GPflow's own starting point (σ0² = var(y), ℓ = half the range,
/// σ² = var(y)/4, jitter 1e-6, y as given, inducing inputs at the listed rows):
/// GPflow 2.9.2's SGPR −ELBO and GPRFITC NLML to 1e-9 relative.
#[test]
fn gpflow_values_on_kin40k() {
    let ds = sgpw::data::load(&sgpw::data::LoadSpec {
        train: repo("datasets/kin40k/train.csv.gz"),
        ..Default::default()
    })
    .expect("kin40k");
    let (x, y) = (ds.x_train.clone(), ds.y_train.as_slice().to_vec());
    let n = y.len() as f64;
    let mean = y.iter().sum::<f64>() / n;
    let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let hyper = Hyper::se(
        var,
        (0..x.ncols())
            .map(|d| 0.5 * (x.column(d).max() - x.column(d).min()))
            .collect(),
        var / 4.0,
    );
    let data = TrainData {
        x: x.clone(),
        y,
        log_exposure: None,
    };
    for (m, vfe_want, fitc_want) in [
        (50, 27679.857463201013, 12526.723079513164),
        (200, 14819.072927037196, 9349.398966061723),
    ] {
        let rows_file = repo(&format!("tests/fixtures/kin40k_inducing_rows_m{m}.txt"));
        let rows: Vec<usize> = std::fs::read_to_string(rows_file)
            .expect("rows")
            .lines()
            .map(|l| l.trim().parse().expect("row index"))
            .collect();
        let points: Vec<Vec<f64>> = rows
            .iter()
            .map(|&i| x.row(i).iter().copied().collect())
            .collect();
        for (method, want) in [("vfe", vfe_want), ("fitc", fitc_want)] {
            let mut model = ModelFile::new(method, hyper.clone());
            model.jitter = Some(1e-6);
            model.set(&Inducing {
                points: points.clone(),
            });
            let got = methods::get(method)
                .expect("method")
                .nlml(&model, &data, &ex())
                .expect("nlml");
            assert!(
                ((got - want) / want).abs() < 1e-9,
                "{method} m = {m}: {got} vs GPflow {want}"
            );
        }
    }
}
