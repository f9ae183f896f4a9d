//! Sparse spectrum GPs (issue 3): psds and ssgp against Lázaro-Gredilla's `ssgpr.m`
//! (tests/fixtures/ssgp_*.json), their gradients against finite differences, the
//! online model against the batch one, the Hammersley points, the kernel
//! approximation, and model files written by hand.

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sgpw::data::Dataset;
use sgpw::exec::Par;
use sgpw::methods;
use sgpw::methods::online::OnlinePsds;
use sgpw::methods::spectrum::Spectral;
use sgpw::methods::spectrum::{self, hammersley, primes, psds_points, radical_inverse};
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::run_spec::{MethodOptions, RunSpec};
use sgpw::train::{self, Predictor};

const TOL: f64 = 1e-8;

fn spectral_model(method: &str, hyper: Hyper, w: &DMatrix<f64>) -> ModelFile {
    let mut model = ModelFile::new(method, hyper);
    model.set(&Spectral {
        frequencies: rows(w),
    });
    model
}

/// Their p = [log ℓ (D); log σf; log σn; a(:)], a unscaled (m×D, column-major), w = a/ℓ.
fn reference(name: &str) {
    let f = fixture(name);
    let d = f["D"].as_u64().expect("D") as usize;
    let r = f["m"].as_u64().expect("m") as usize;
    let p = vector(&f, "param_vector");
    let a = DMatrix::from_column_slice(r, d, &p[d + 2..]);
    assert_eq!(a, matrix(&f, "spectral_points_unscaled"));
    let ell: Vec<f64> = p[..d].iter().map(|v| v.exp()).collect();
    let hyper = Hyper::se((2.0 * p[d]).exp(), ell.clone(), (2.0 * p[d + 1]).exp());
    let w = DMatrix::from_fn(r, d, |k, j| a[(k, j)] / ell[j]);
    let (x, y) = (matrix(&f, "X"), vector(&f, "y"));
    let data = TrainData {
        x: x.clone(),
        y: y.clone(),
        log_exposure: None,
    };
    // their gradient in our order: [log σ0², log ℓ, log σ², s (col-major)]
    let g = vector(&f, "grad");
    let mut want = vec![0.5 * g[d]];
    want.extend_from_slice(&g[..d]);
    want.push(0.5 * g[d + 1]);
    want.extend_from_slice(&g[d + 2..]);
    let nlml = f["nlml"].as_f64().expect("nlml");
    for method in ["ssgp", "psds"] {
        let model = spectral_model(method, hyper.clone(), &w);
        let m = methods::get(method).expect("registered");
        let o = m.objective(&model, &data, &ex()).expect("evaluates");
        assert_close(&format!("{name} {method} nlml"), &[o.nlml], &[nlml], TOL);
        assert_close(
            &format!("{name} {method} nlml alone"),
            &[m.nlml(&model, &data, &ex()).expect("nlml")],
            &[nlml],
            TOL,
        );
        let n_grad = if method == "ssgp" { want.len() } else { d + 2 };
        assert_close(
            &format!("{name} {method} grad"),
            &o.grad,
            &want[..n_grad],
            TOL,
        );
        // packing s, not w: their a comes back out of our parameter vector
        if method == "ssgp" {
            assert_close("packed s", &m.pack(&model)[d + 2..], &p[d + 2..], 1e-14);
        }
        let pred = Predictor::new(model, Some((&x, &y)))
            .expect("predictor")
            .predict(&matrix(&f, "X_test"))
            .expect("predicts");
        assert_close(
            &format!("{name} {method} mean"),
            &pred.mean,
            &vector(&f, "pred_mean"),
            TOL,
        );
        assert_close(
            &format!("{name} {method} var_latent"),
            &pred.var_latent,
            &vector(&f, "pred_var_latent"),
            TOL,
        );
        assert_close(
            &format!("{name} {method} var_noisy"),
            &pred.var_noisy,
            &vector(&f, "pred_var_noisy"),
            TOL,
        );
    }
}

#[test]
fn reference_ssgp_1d() {
    reference("ssgp_1d.json");
}

#[test]
fn reference_ssgp_3d() {
    reference("ssgp_3d.json");
}

fn spec(method: &str, m: usize, iters: usize, options: MethodOptions) -> RunSpec {
    RunSpec {
        method: method.into(),
        m,
        seed: 3,
        iters,
        standardize: false,
        options,
    }
}

fn fd_check(method: &str, options: MethodOptions, jitter: Option<f64>) {
    let data = toy_data(40, 2, 7);
    let m = methods::get(method).expect("method");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut model = init(m, &data, &spec(method, 5, 10, options), &mut rng).expect("init");
    model.jitter = jitter;
    // move off the defaults so that no gradient entry is accidentally tiny
    model.hyper.lengthscales = vec![0.8, 1.4];
    model.hyper.noise_variance = 0.03;
    let theta = m.pack(&model);
    m.unpack(&theta, &mut model);
    let o = m.objective(&model, &data, &ex()).expect("evaluates");
    assert_eq!(o.grad.len(), theta.len());
    let mut scratch = model.clone();
    let mut f = |t: &[f64]| {
        m.unpack(t, &mut scratch);
        m.nlml(&scratch, &data, &ex()).expect("nlml")
    };
    check_gradient(method, &mut f, &theta, &o.grad, 1e-5, 1e-6);
}

#[test]
fn psds_gradient_matches_finite_differences() {
    fd_check("psds", MethodOptions::default(), None);
    fd_check("psds", MethodOptions::default(), Some(1e-3));
}

#[test]
fn ssgp_gradient_matches_finite_differences() {
    let random = options("init = \"random\"");
    fd_check("ssgp", MethodOptions::default(), None);
    fd_check("ssgp", random, Some(1e-3));
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

#[test]
fn online_equals_batch_after_k_samples() {
    let data = toy_data(300, 3, 11);
    let r = 12;
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let psds = methods::get("psds").expect("psds");
    let mut model = init(
        psds,
        &data,
        &spec("psds", r, 0, Default::default()),
        &mut rng,
    )
    .expect("init");
    model.hyper.noise_variance = 0.01;
    model.hyper.signal_variance = 1.3;
    let test = toy_data(25, 3, 12).x;
    let mut online = OnlinePsds::from_model(&model).expect("online");
    assert!(online.nlml().abs() < 1e-12, "no samples: NLML 0");
    let mut row = vec![0.0; 3];
    let mut checked = 0;
    for i in 0..data.y.len() {
        for (d, v) in row.iter_mut().enumerate() {
            *v = data.x[(i, d)];
        }
        online.add(&row, data.y[i]).expect("adds");
        let k = i + 1;
        // fewer samples than 2r basis functions, about 2r, and many more
        if ![1, 7, 24, 25, 100, 300].contains(&k) {
            continue;
        }
        checked += 1;
        let batch = TrainData {
            x: data.x.rows(0, k).into_owned(),
            y: data.y[..k].to_vec(),
            log_exposure: None,
        };
        let want_nlml = psds.nlml(&model, &batch, &ex()).expect("batch nlml");
        assert!(
            rel(online.nlml(), want_nlml) < 1e-10,
            "k = {k}: NLML {} vs {want_nlml}",
            online.nlml()
        );
        let pred = Predictor::new(model.clone(), Some((&batch.x, &batch.y)))
            .expect("predictor")
            .predict(&test)
            .expect("predicts");
        let (mean, var) = online.predict(&test).expect("predicts");
        for t in 0..test.nrows() {
            assert!(
                rel(mean[t], pred.mean[t]) < 1e-10,
                "k = {k} mean[{t}]: {} vs {}",
                mean[t],
                pred.mean[t]
            );
            assert!(
                rel(var[t], pred.var_latent[t]) < 1e-10,
                "k = {k} var[{t}]: {} vs {}",
                var[t],
                pred.var_latent[t]
            );
        }
        // the factor held is chol(I + ΦᵀΦ/(κσ²)), κ = r/σ0², of the k samples
        let phi = spectrum::features(
            &spectrum::frequencies(&model).expect("w"),
            &batch.x,
            Par::Seq,
        );
        let c = r as f64 * model.hyper.noise_variance / model.hyper.signal_variance;
        let a = (&phi * phi.transpose()) / c + DMatrix::identity(2 * r, 2 * r);
        let l = online.cholesky();
        assert!((l * l.transpose() - &a).abs().max() < 1e-10 * a.abs().max());
    }
    assert_eq!(checked, 6);
    assert!(online.add(&[0.0, 1.0], 1.0).is_err(), "wrong width");
    assert!(online.add(&[0.0, 1.0, f64::NAN], 1.0).is_err(), "NaN input");
}

#[test]
fn hammersley_points_match_hand_computed_values() {
    assert_eq!(primes(6), vec![2, 3, 5, 7, 11, 13]);
    // base 2: 1 = 1₂ → .1₂, 2 = 10₂ → .01₂, 3 → .11₂, 4 → .001₂, 5 → .101₂, 6 → .011₂
    let b2: Vec<f64> = (1..=6).map(|i| radical_inverse(i, 2)).collect();
    assert_eq!(b2, vec![0.5, 0.25, 0.75, 0.125, 0.625, 0.375]);
    // base 3: 1 → 1/3, 2 → 2/3, 3 = 10₃ → 1/9, 4 = 11₃ → 4/9, 5 = 12₃ → 7/9
    let b3: Vec<f64> = (1..=5).map(|i| radical_inverse(i, 3)).collect();
    for (got, want) in b3
        .iter()
        .zip([1.0 / 3.0, 2.0 / 3.0, 1.0 / 9.0, 4.0 / 9.0, 7.0 / 9.0])
    {
        assert!((got - want).abs() < 1e-15, "{got} vs {want}");
    }
    // base 5: 7 = 12₅ → 2/5 + 1/25
    assert!((radical_inverse(7, 5) - 0.44).abs() < 1e-15);
    let h = hammersley(4, 3);
    assert_eq!(h.column(0).as_slice(), &[0.125, 0.375, 0.625, 0.875]);
    assert_eq!(h.column(1).as_slice(), &[0.5, 0.25, 0.75, 0.125]);
    for (got, want) in h.column(2).iter().zip(&b3[..4]) {
        assert_eq!(got, want);
    }
    // no coordinate is 0 or 1, and every normal quantile is finite
    for (r, d) in [(1, 1), (7, 5), (1000, 8), (200, 32)] {
        let h = hammersley(r, d);
        assert!(h.iter().all(|v| *v > 0.0 && *v < 1.0), "r = {r}, d = {d}");
        assert!(psds_points(r, d).iter().all(|v| v.is_finite()));
    }
    // s = Φ⁻¹(h) against Python's statistics.NormalDist().inv_cdf (Wichura's AS241)
    for (h, want) in [
        (0.01, -2.3263478740408408),
        (0.03, -1.8807936081512509),
        (0.1, -1.2815515655446008),
        (0.3, -0.5244005127080407),
        (0.7, 0.5244005127080407),
        (0.999, 3.090232306167813),
    ] {
        let got = spectrum::normal_quantile(h);
        assert!(rel(got, want) < 1e-14, "Φ⁻¹({h}) = {got}, want {want}");
    }
    // and the points are the quantiles of the Hammersley coordinates
    let (s, h) = (psds_points(50, 4), hammersley(50, 4));
    assert!(
        s.iter()
            .zip(h.iter())
            .all(|(s, h)| *s == spectrum::normal_quantile(*h))
    );
    assert!(spectrum::normal_quantile(0.5).abs() < 1e-15);
    assert!((spectrum::normal_quantile(0.975) - 1.959963984540054).abs() < 1e-12);
}

#[test]
fn kernel_approximation_converges_to_the_se_kernel() {
    let (sf2, ell) = (1.7, [0.7, 1.3, 2.0]);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let pairs: Vec<([f64; 3], [f64; 3])> = (0..200)
        .map(|_| {
            let mut p = || [0; 3].map(|_| rng.random_range(-2.0..2.0));
            (p(), p())
        })
        .collect();
    let max_err = |r: usize| {
        let s = psds_points(r, 3);
        let w = DMatrix::from_fn(r, 3, |k, d| s[(k, d)] / ell[d]);
        pairs
            .iter()
            .map(|(a, b)| {
                let x = DMatrix::from_row_slice(2, 3, &[a[0], a[1], a[2], b[0], b[1], b[2]]);
                let phi = spectrum::features(&w, &x, Par::Seq);
                let approx = sf2 / r as f64 * phi.column(0).dot(&phi.column(1));
                let r2: f64 = (0..3).map(|d| ((a[d] - b[d]) / ell[d]).powi(2)).sum();
                (approx - sf2 * (-0.5 * r2).exp()).abs()
            })
            .fold(0.0, f64::max)
    };
    let (coarse, fine) = (max_err(10), max_err(1000));
    assert!(fine < 0.05 * sf2, "r = 1000: max error {fine}");
    assert!(fine < coarse, "error does not shrink: {coarse} → {fine}");
}

const HAND_WRITTEN: &str = r#"
method = "ssgp"
target_mean = 0.5
[hyper]
signal_variance = 1.1
lengthscales = [0.9, 1.6]
noise_variance = 0.04
[spectral]
frequencies = [[0.5, 1.2], [-0.8, 0.3], [1.9, -0.4]]
"#;

#[test]
fn hand_written_models_round_trip_and_predict() {
    let data = toy_data(30, 2, 21);
    let y: Vec<f64> = data.y.iter().map(|v| v + 0.5).collect();
    let xs = toy_data(5, 2, 22).x;
    for method in ["ssgp", "psds"] {
        let text = HAND_WRITTEN.replace("\"ssgp\"", &format!("\"{method}\""));
        let model = ModelFile::parse(&text).expect("parses");
        let again = ModelFile::parse(&model.to_toml().expect("writes")).expect("parses");
        assert_eq!(model, again);
        let pred = Predictor::new(model.clone(), Some((&data.x, &y)))
            .expect("predictor")
            .predict(&xs)
            .expect("predicts");
        // dense check: mean = φ*ᵀA⁻¹Φᵀ(y − ȳ) + ȳ, var_y = σ²(1 + φ*ᵀA⁻¹φ*)
        let w = spectrum::frequencies(&model).expect("w");
        let (phi, phis) = (
            spectrum::features(&w, &data.x, Par::Seq),
            spectrum::features(&w, &xs, Par::Seq),
        );
        let a = &phi * phi.transpose() + DMatrix::identity(6, 6) * (3.0 * 0.04 / 1.1);
        let a = a.cholesky().expect("spd");
        let alpha = a.solve(&(&phi * DVector::from_column_slice(&data.y)));
        for t in 0..5 {
            let ps = phis.column(t).into_owned();
            let mean = ps.dot(&alpha) + 0.5;
            let var = 0.04 * (1.0 + ps.dot(&a.solve(&ps)));
            assert!(rel(pred.mean[t], mean) < 1e-12, "{method} mean");
            assert!(rel(pred.var_noisy[t], var) < 1e-12, "{method} var");
        }
        // with its posterior stored, the model predicts without training data
        let (post, _) = methods::get(method)
            .expect("method")
            .posterior(
                &model,
                &sgpw::train::model_data(&model, &data.x, &y).expect("data"),
                &ex(),
            )
            .expect("posterior");
        let mut stored = model.clone();
        stored.posterior = Some(post);
        let stored = ModelFile::parse(&stored.to_toml().expect("writes")).expect("parses");
        let p2 = Predictor::new(stored, None)
            .expect("stored posterior")
            .predict(&xs)
            .expect("predicts");
        assert_close("stored mean", &p2.mean, &pred.mean, 1e-12);
        assert_close("stored var", &p2.var_noisy, &pred.var_noisy, 1e-12);
    }
    let bad = HAND_WRITTEN.replace("[1.9, -0.4]", "[1.9]");
    let model = ModelFile::parse(&bad).expect("parses");
    assert!(
        Predictor::new(model, Some((&data.x, &y))).is_err(),
        "short row"
    );
    let none = HAND_WRITTEN.replace(
        "[spectral]\nfrequencies = [[0.5, 1.2], [-0.8, 0.3], [1.9, -0.4]]\n",
        "",
    );
    let model = ModelFile::parse(&none).expect("parses");
    assert!(
        Predictor::new(model, Some((&data.x, &y))).is_err(),
        "no [spectral]"
    );
}

fn dataset(data: &TrainData, test: &TrainData) -> Dataset {
    Dataset {
        classes: None,
        feature_names: (1..=data.x.ncols()).map(|d| format!("x{d}")).collect(),
        target_name: "y".into(),
        x_train: data.x.clone(),
        y_train: DVector::from_column_slice(&data.y),
        x_test: Some(test.x.clone()),
        y_test: Some(DVector::from_column_slice(&test.y)),
        notes: Vec::new(),
    }
}

#[test]
fn fits_run_and_options_are_checked() {
    let ds = dataset(&toy_data(120, 2, 31), &toy_data(60, 2, 32));
    let run = |method: &str, options: MethodOptions| fit(&ds, &spec(method, 8, 40, options));
    let (psds, _) = run("psds", Default::default());
    let psds = psds.expect("psds fits");
    let t = psds.test.expect("scored");
    assert!(t.nmse.is_some_and(|v| v < 0.2), "psds NMSE {:?}", t.nmse);
    // psds keeps its points: w ⊙ ℓ is still the Hammersley set
    let s = spectrum::unscaled_points(&psds.model).expect("points");
    assert!((s - psds_points(8, 2)).abs().max() < 1e-12);

    // one start, so that the reports are one fit's
    let staged = options("stages = [\"hyper\", \"points\"]\nsingle_start = true");
    let (ssgp, seen) = run("ssgp", staged);
    let ssgp = ssgp.expect("staged ssgp fits");
    assert!(ssgp.iterations <= 40);
    assert_eq!(ssgp.trace.len(), ssgp.iterations + 1);
    assert_eq!(
        seen,
        (0..=ssgp.iterations).collect::<Vec<_>>(),
        "one report per iteration"
    );
    assert!(
        ssgp.trace.windows(2).all(|w| w[1] <= w[0]),
        "trace decreases"
    );

    // stage "points" alone keeps the hyperparameters; "hyper" alone keeps the points
    // (from the §0.4 start alone: --single-start)
    let only = |stage: &str| options(&format!("stages = [\"{stage}\"]\nsingle_start = true"));
    let hyp = run("ssgp", only("hyper")).0.expect("fits").model;
    let s = spectrum::unscaled_points(&hyp).expect("points");
    assert!((s - psds_points(8, 2)).abs().max() < 1e-12);
    let pts = run("ssgp", only("points")).0.expect("fits").model;
    let td = train::prepare(&ds, false).0;
    let start = methods::hyper::default_hyper(&td, sgpw::run_spec::DEFAULT_LENGTHSCALE_START);
    assert!(rel(pts.hyper.signal_variance, start.signal_variance) < 1e-14);
    assert!(rel(pts.hyper.noise_variance, start.noise_variance) < 1e-14);
    assert_close("ℓ", &pts.hyper.lengthscales, &start.lengthscales, 1e-14);

    assert!(run("ssgp", options("init = \"random\"")).0.is_ok());
    // values outside the declaration are errors when a session or command line is read
    for bad in ["init = \"hammersley\"", "stages = [\"everything\"]"] {
        assert!(toml::from_str::<MethodOptions>(bad).is_err(), "{bad}");
    }
    assert!(
        run("psds", options("init = \"random\"")).0.is_err(),
        "psds takes no init option"
    );
    // r may exceed n: A = I + ΦᵀΦ/(κσ²) stays positive definite
    let small = dataset(&toy_data(5, 2, 33), &toy_data(5, 2, 34));
    assert!(
        fit(&small, &spec("psds", 8, 5, Default::default()))
            .0
            .is_ok()
    );
    let m = methods::get("ssgp").expect("ssgp");
    assert_eq!(m.m_meaning(), "spectral points r (2r basis functions)");
    assert!(m.options().contains(&"init") && m.options().contains(&"stages"));
}

/// psds and ssgp go through the likelihood core's diagonal-Kuu path; it must equal a
/// dense O(n³) evaluation of the same DTC model (the closed form of docs/methods.md §4) in
/// value, every gradient entry (by finite differences of the dense value) and the
/// posterior, with and without a fixed jitter, with r < n and r > n.
#[test]
fn the_core_equals_the_dense_spectral_model() {
    for (n, r, jitter) in [(80, 6, None), (80, 6, Some(0.3)), (9, 12, None)] {
        let data = toy_data(n, 3, 41);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let ssgp = methods::get("ssgp").expect("ssgp");
        let mut model = init(
            ssgp,
            &data,
            &spec("ssgp", r, 0, options("init = \"random\"")),
            &mut rng,
        )
        .expect("init");
        model.jitter = jitter;
        model.hyper.noise_variance = 0.02;
        // dense: y ~ N(0, Φ Kuu⁻¹ Φᵀ + σ²I), Kuu = (r/σ0² + jitter) I
        let dense = |model: &ModelFile| {
            let w = spectrum::frequencies(model).expect("w");
            let phi = spectrum::features(&w, &data.x, Par::Seq);
            let kappa = r as f64 / model.hyper.signal_variance + model.jitter.unwrap_or(0.0);
            let mut c = phi.transpose() * &phi / kappa;
            for i in 0..n {
                c[(i, i)] += model.hyper.noise_variance;
            }
            let l = c.cholesky().expect("spd");
            let yv = DVector::from_column_slice(&data.y);
            let a = l.l().solve_lower_triangular(&yv).expect("solves");
            0.5 * a.norm_squared()
                + l.l().diagonal().iter().map(|v| v.ln()).sum::<f64>()
                + 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln()
        };
        let what = format!("n={n} r={r} jitter={jitter:?}");
        let o = ssgp.objective(&model, &data, &ex()).expect("core");
        assert_close(&format!("{what} nlml"), &[o.nlml], &[dense(&model)], 1e-11);
        let theta = ssgp.pack(&model);
        let mut scratch = model.clone();
        check_gradient(
            &what,
            &mut |t: &[f64]| {
                ssgp.unpack(t, &mut scratch);
                dense(&scratch)
            },
            &theta,
            &o.grad,
            1e-5,
            1e-6,
        );
        let alone = ssgp.nlml(&model, &data, &ex()).expect("nlml");
        assert_close("nlml alone", &[alone], &[o.nlml], 1e-11);
    }
}

/// An L-BFGS fit holds psds's and ssgp's spectral points as a typed state (issue 44),
/// which θ is unpacked into without a model file: the same objective and gradient as
/// the model file's, bit for bit — the SE and a Matérn kernel, a noise floor, and fixed
/// blocks (psds's frequencies w = s/ℓ follow ℓ from the start's s; with ℓ fixed they
/// are written before ℓ is held).
#[test]
fn the_typed_state_evaluates_to_the_model_files_bits() {
    let data = toy_data(60, 2, 181);
    let mut rng = ChaCha8Rng::seed_from_u64(182);
    let fixes: [&[&str]; 3] = [
        &[],
        &["lengthscales", "noise_variance"],
        &["signal_variance", "spectral_points"],
    ];
    for fixed in fixes {
        for method in ["psds", "ssgp"] {
            for kind in [
                sgpw::kernel::KernelKind::Se,
                sgpw::kernel::KernelKind::Matern32,
            ] {
                let w = DMatrix::from_fn(7, 2, |_, _| rng.random_range(-1.5..1.5));
                let hyper = Hyper::se(1.3, vec![0.8, 1.4], 0.1).with_kernel(kind);
                let mut model = spectral_model(method, hyper, &w);
                model.noise_floor = Some(0.01);
                model.fixed = fixed.iter().map(|f| f.to_string()).collect();
                let meth = methods::get(method).expect("a method");
                let what = format!("{method} {kind} {fixed:?}");
                assert_typed_state_is_the_files(meth, &model, &data, &what);
            }
        }
    }
}
