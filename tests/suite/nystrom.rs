//! The Nyström baselines: the Williams–Seeger predictor against a dense O(n³)
//! evaluation, its negative variances counted and clamped only inside MNLP, the
//! nystrom-opt gradient against finite differences, and the two fits.

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use sgpw::data::Dataset;
use sgpw::exec::Par;
use sgpw::methods::eigen::Basis;
use sgpw::methods::{self, nystrom};
use sgpw::metrics;
use sgpw::optim::Stop;
use sgpw::run_spec::RunSpec;
use sgpw::train::Predictor;

fn model(data: &TrainData, m: usize, optimise: bool) -> sgpw::model_file::ModelFile {
    let b = DMatrix::from_fn(m, data.x.ncols(), |j, k| {
        ((j * (k + 2)) as f64 * 0.77 + 0.3).sin() * 1.7
    });
    let mut model = nystrom::default_model(data, &b, optimise);
    model.jitter = Some(1e-8);
    model
}

/// mean = k*ᵀ(K̃ + σ²I)⁻¹y, var = σ0² − k*ᵀ(K̃ + σ²I)⁻¹k* with K̃ = K_XB K_BB⁻¹ K_BX,
/// densely; more test points than one prediction block.
#[test]
fn predictor_matches_the_dense_formula() {
    let data = toy_data(60, 2, 1);
    let test = toy_data(300, 2, 2);
    let model = model(&data, 6, false);
    let p = Predictor::new(model.clone(), Some((&data.x, &data.y)))
        .expect("predictor")
        .predict(&test.x)
        .expect("predicts");
    let k = model.kernel();
    let b = sgpw::methods::eigen::basis_points(&model).expect("B");
    let mut kbb = k.gram(&b, Par::Seq);
    for i in 0..kbb.nrows() {
        kbb[(i, i)] += 1e-8;
    }
    let kxb = k.matrix(&data.x, &b, Par::Seq);
    let mut c = &kxb * kbb.clone().cholesky().expect("spd").solve(&kxb.transpose());
    for i in 0..c.nrows() {
        c[(i, i)] += model.hyper.noise_variance;
    }
    let c = c.cholesky().expect("spd");
    let ks = k.matrix(&data.x, &test.x, Par::Seq);
    let mean = ks.transpose() * c.solve(&DVector::from_column_slice(&data.y));
    let quad = (ks.transpose() * c.solve(&ks)).diagonal();
    let var: Vec<f64> = quad
        .iter()
        .map(|q| model.hyper.signal_variance - q)
        .collect();
    assert_close("mean", &p.mean, mean.as_slice(), 1e-7);
    assert_close("var", &p.var_latent, &var, 1e-6);
    for (a, b) in p.var_noisy.iter().zip(&p.var_latent) {
        assert!((a - b - model.hyper.noise_variance).abs() < 1e-12);
    }
}

/// With two basis points far from most test points the predictor's variances go
/// negative; score() counts them and only its MNLP clamps them (to σ²).
#[test]
fn negative_variances_are_counted_and_clamped_only_in_mnlp() {
    let data = toy_data(80, 1, 3);
    let test = toy_data(100, 1, 4);
    let mut model = model(&data, 2, false);
    model.hyper.lengthscales = vec![0.4];
    model.hyper.noise_variance = 0.01;
    let pred = Predictor::new(model.clone(), Some((&data.x, &data.y))).expect("predictor");
    let p = pred.predict(&test.x).expect("predicts");
    let negative = p.var_latent.iter().filter(|v| **v < 0.0).count();
    assert!(negative > 0, "expected negative variances");
    let s = pred.score(&test.x, &test.y).expect("scores");
    assert_eq!(s.negative_var_latent, negative);
    assert_eq!(
        s.negative_var_noisy,
        p.var_noisy.iter().filter(|v| **v < 0.0).count()
    );
    let want = metrics::mnlp_clamped(&test.y, &p.mean, &p.var_noisy, model.hyper.noise_variance);
    assert_eq!(s.mnlp, want);
    assert!(s.mnlp.is_finite());
    assert!(
        s.negative_note(100)
            .expect("a note")
            .contains("MNLP uses σ²")
    );
}

#[test]
fn nystrom_opt_gradient_matches_finite_differences() {
    let data = toy_data(50, 2, 5);
    let model = model(&data, 5, true);
    let method = methods::get("nystrom-opt").expect("method");
    let theta = method.pack(&model);
    let o = method.objective(&model, &data, &ex()).expect("evaluates");
    let mut f = |t: &[f64]| {
        let mut m = model.clone();
        method.unpack(t, &mut m);
        method.nlml(&m, &data, &ex()).expect("nlml")
    };
    check_gradient("nystrom-opt", &mut f, &theta, &o.grad, 1e-6, 1e-6);
    // its objective is the DTC evidence on B, to the bit, gradient included (θ in the
    // same order: the shared blocks, then B as dtc's inducing inputs)
    let dtc = as_pseudo_file(&model, "dtc");
    let d = methods::get("dtc")
        .expect("dtc")
        .objective(&dtc, &data, &ex())
        .expect("dtc");
    assert_eq!(d.nlml.to_bits(), o.nlml.to_bits());
    assert_eq!(d.grad.len(), o.grad.len());
    for (a, b) in d.grad.iter().zip(&o.grad) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
}

/// nystrom fits nothing (full-GP hyperparameters, k-means B); nystrom-opt learns; both
/// need the training inputs to predict.
#[test]
fn fits_and_prediction_needs() {
    let train = toy_data(120, 1, 6);
    let test = toy_data(40, 1, 7);
    let ds = Dataset {
        classes: None,
        x_train: train.x.clone(),
        y_train: train.y.clone().into(),
        x_test: Some(test.x.clone()),
        y_test: Some(test.y.clone().into()),
        feature_names: vec!["x1".into()],
        target_name: "y".into(),
        notes: Vec::new(),
    };
    let spec = |method: &str| RunSpec {
        method: method.into(),
        m: 5,
        seed: 3,
        iters: 80,
        standardize: false,
        options: Default::default(),
    };
    let (r, _) = fit(&ds, &spec("nystrom"));
    let r = r.expect("nystrom");
    assert_eq!((r.stop, r.iterations), (Stop::NothingToFit, 0));
    assert!(r.model.has::<Basis>() && r.model.posterior.is_none());
    assert!(Predictor::new(r.model.clone(), None).is_err());
    let (o, _) = fit(&ds, &spec("nystrom-opt"));
    let o = o.expect("nystrom-opt");
    assert!(o.iterations > 0 && o.nlml < o.trace[0]);
    assert!(o.test.expect("test").nmse.is_some_and(f64::is_finite));
    // options that are not theirs are refused
    let mut bad = spec("nystrom");
    bad.options = options("rounds = 2");
    assert!(bad.check(120).is_err());
}
