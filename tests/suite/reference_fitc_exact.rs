//! Agreement with the original authors' code (tests/fixtures): Snelson's SPGP,
//! GPML's infFITC and infExact — NLML, gradient and predictions to 1e-8 relative,
//! after mapping their parameterisations onto ours.

use crate::common;
use common::*;
use nalgebra::DMatrix;
use sgpw::collapsed::{self, Approx, Kuu, LowRank};
use sgpw::exec::Par;
use sgpw::methods::pseudo::Inducing;
use sgpw::methods::{self, Method};
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::train::Predictor;

const TOL: f64 = 1e-8;

struct Case {
    model: ModelFile,
    x: DMatrix<f64>,
    y: Vec<f64>,
}

fn case(
    f: &serde_json::Value,
    method: &str,
    hyper: Hyper,
    jitter: Option<f64>,
    z: Option<DMatrix<f64>>,
) -> Case {
    let mut model = ModelFile::new(method, hyper);
    model.jitter = jitter;
    if let Some(z) = z {
        model.set(&Inducing { points: rows(&z) });
    }
    Case {
        model,
        x: matrix(f, "X"),
        y: vector(f, "y"),
    }
}

fn check_predictions(f: &serde_json::Value, c: &Case, name: &str) {
    let pred = Predictor::new(c.model.clone(), Some((&c.x, &c.y)))
        .expect("predictor")
        .predict(&matrix(f, "X_test"))
        .expect("predicts");
    assert_close(
        &format!("{name} mean"),
        &pred.mean,
        &vector(f, "pred_mean"),
        TOL,
    );
    assert_close(
        &format!("{name} var_latent"),
        &pred.var_latent,
        &vector(f, "pred_var_latent"),
        TOL,
    );
    assert_close(
        &format!("{name} var_noisy"),
        &pred.var_noisy,
        &vector(f, "pred_var_noisy"),
        TOL,
    );
}

fn objective(c: &Case) -> methods::Objective {
    let data = TrainData {
        x: c.x.clone(),
        y: c.y.clone(),
        log_exposure: None,
    };
    methods::get(&c.model.method)
        .expect("method")
        .objective(&c.model, &data, &ex())
        .expect("evaluates")
}

/// Snelson's w = [Z(:); log b; log c; log sig], b = 1/ℓ², c = σ0², sig = σ².
fn snelson(name: &str) {
    let f = fixture(name);
    let d = f["D"].as_u64().expect("D") as usize;
    let m = f["M"].as_u64().expect("M") as usize;
    let w = vector(&f, "param_vector");
    let z = DMatrix::from_column_slice(m, d, &w[..m * d]);
    let hyper = Hyper {
        kernel: Default::default(),
        rq_alpha: None,
        lengthscales: w[m * d..m * d + d]
            .iter()
            .map(|lb| (-0.5 * lb).exp())
            .collect(),
        signal_variance: w[m * d + d].exp(),
        noise_variance: w[m * d + d + 1].exp(),
    };
    let c = case(
        &f,
        "fitc",
        hyper,
        Some(f["jitter"].as_f64().expect("jitter")),
        Some(z),
    );
    let o = objective(&c);
    assert_close(
        &format!("{name} nlml"),
        &[o.nlml],
        &[f["nlml"].as_f64().expect("nlml")],
        TOL,
    );
    // ours: [log σ0², log ℓ (D), log σ², Z (col-major)]
    let mut mapped = o.grad[d + 2..].to_vec();
    mapped.extend(o.grad[1..=d].iter().map(|g| -0.5 * g));
    mapped.push(o.grad[0]);
    mapped.push(o.grad[d + 1]);
    assert_close(&format!("{name} grad"), &mapped, &vector(&f, "grad"), TOL);
    check_predictions(&f, &c, name);
}

#[test]
fn snelson_spgp_1d() {
    snelson("spgp_1d.json");
}

#[test]
fn snelson_spgp_3d() {
    snelson("spgp_3d.json");
}

/// GPML's [log ℓ; log sf; log sn; xu(:)] with inducing jitter 1e-6·sn².
fn gpml_fitc(name: &str) {
    let f = fixture(name);
    let d = f["D"].as_u64().expect("D") as usize;
    let m = f["M"].as_u64().expect("M") as usize;
    let p = vector(&f, "param_vector");
    let hyper = Hyper {
        kernel: Default::default(),
        rq_alpha: None,
        lengthscales: p[..d].iter().map(|l| l.exp()).collect(),
        signal_variance: (2.0 * p[d]).exp(),
        noise_variance: (2.0 * p[d + 1]).exp(),
    };
    let z = DMatrix::from_column_slice(m, d, &p[d + 2..]);
    let jitter = 1e-6 * hyper.noise_variance;
    let c = case(&f, "fitc", hyper, Some(jitter), Some(z.clone()));
    let o = objective(&c);
    assert_close(
        &format!("{name} nlml"),
        &[o.nlml],
        &[f["nlml"].as_f64().expect("nlml")],
        TOL,
    );
    // GPML differentiates its noise-proportional jitter too: + 2·jitter·tr(∂NLML/∂Kuu).
    let k = c.model.kernel();
    let (kuf, kuu) = (k.matrix(&z, &c.x, Par::Seq), k.gram(&z, Par::Seq));
    let kdiag = vec![c.model.hyper.signal_variance; c.y.len()];
    let lr = LowRank {
        kuf: &kuf,
        kuu: Kuu::Dense(&kuu),
        approx: Approx::Fitc,
        kdiag: &kdiag,
        noise: c.model.hyper.noise_variance,
        jitter: c.model.jitter_policy(),
    };
    let adj = collapsed::nlml_and_adjoints(&lr, &c.y, &ex()).expect("core");
    let mut mapped: Vec<f64> = o.grad[1..=d].to_vec();
    mapped.push(2.0 * o.grad[0]);
    mapped.push(2.0 * o.grad[d + 1] + 2.0 * jitter * adj.d_kuu.trace());
    mapped.extend_from_slice(&o.grad[d + 2..]);
    assert_close(&format!("{name} grad"), &mapped, &vector(&f, "grad"), TOL);
    check_predictions(&f, &c, name);
}

#[test]
fn gpml_fitc_1d() {
    gpml_fitc("gpml_fitc_1d.json");
}

#[test]
fn gpml_fitc_3d() {
    gpml_fitc("gpml_fitc_3d.json");
}

fn gpml_exact(name: &str) {
    let f = fixture(name);
    let d = f["D"].as_u64().expect("D") as usize;
    let p = vector(&f, "param_vector");
    let hyper = Hyper {
        kernel: Default::default(),
        rq_alpha: None,
        lengthscales: p[..d].iter().map(|l| l.exp()).collect(),
        signal_variance: (2.0 * p[d]).exp(),
        noise_variance: (2.0 * p[d + 1]).exp(),
    };
    let c = case(&f, "full", hyper, None, None);
    let o = objective(&c);
    assert_close(
        &format!("{name} nlml"),
        &[o.nlml],
        &[f["nlml"].as_f64().expect("nlml")],
        TOL,
    );
    let mut mapped: Vec<f64> = o.grad[1..=d].to_vec();
    mapped.push(2.0 * o.grad[0]);
    mapped.push(2.0 * o.grad[d + 1]);
    assert_close(&format!("{name} grad"), &mapped, &vector(&f, "grad"), TOL);
    check_predictions(&f, &c, name);
}

#[test]
fn gpml_exact_1d() {
    gpml_exact("gpml_exact_1d.json");
}

#[test]
fn gpml_exact_3d() {
    gpml_exact("gpml_exact_3d.json");
}

/// The same models under the automatic jitter policy: gradients of every
/// parameter group against central differences.
#[test]
fn fitc_and_exact_gradients_match_finite_differences() {
    for (name, method) in [
        ("spgp_3d.json", "fitc"),
        ("gpml_exact_3d.json", "full"),
        ("spgp_1d.json", "fitc"),
    ] {
        let f = fixture(name);
        let d = f["D"].as_u64().expect("D") as usize;
        let hyper = Hyper {
            kernel: Default::default(),
            rq_alpha: None,
            lengthscales: vec![0.9, 1.3, 1.7][..d].to_vec(),
            signal_variance: 0.8,
            noise_variance: 0.05,
        };
        let z = (method == "fitc").then(|| matrix(&f, "inducing_points"));
        let c = case(&f, method, hyper, None, z);
        let m: &dyn Method = methods::get(method).expect("method");
        let data = TrainData {
            x: c.x.clone(),
            y: c.y.clone(),
            log_exposure: None,
        };
        let theta = m.pack(&c.model);
        let o = m.objective(&c.model, &data, &ex()).expect("evaluates");
        let mut scratch = c.model.clone();
        check_gradient(
            name,
            &mut |t: &[f64]| {
                m.unpack(t, &mut scratch);
                m.nlml(&scratch, &data, &ex()).expect("evaluates")
            },
            &theta,
            &o.grad,
            1e-5,
            1e-6,
        );
    }
}
