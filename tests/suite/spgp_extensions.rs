//! The SPGP extensions of Snelson & Ghahramani (UAI 2006), docs/methods.md §2: SPGP+HS
//! (spgp-hs), SPGP+DR (spgp-dr, with --hetero) and PCA+SPGP (pca-spgp).
//! Finite-difference checks of every gradient group (σ0², σ², ℓ, P, pseudo-inputs in
//! G dimensions, h), the ties to SPGP (h = 0; G = D with P = diag(1/ℓ); the G = D
//! start), and the O(n·m²) objective against a dense O(n³) evaluation.

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sgpw::methods::pca::Pca;
use sgpw::methods::projected::Projection;
use sgpw::methods::pseudo::{Inducing, PseudoNoise};
use sgpw::methods::{self, Method};
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::run_spec::{MethodOptions, RunSpec};
use sgpw::train::Predictor;
use std::f64::consts::PI;

fn spec(method: &str, m: usize, options: MethodOptions) -> RunSpec {
    RunSpec {
        method: method.into(),
        m,
        seed: 4,
        iters: 10,
        standardize: false,
        options,
    }
}

fn dims(g: usize, hetero: bool) -> MethodOptions {
    MethodOptions {
        dims: Some(g),
        hetero,
        ..Default::default()
    }
}

/// A model from init, moved off its start so that no gradient entry is tiny: noise
/// 0.05, lengthscales × 0.7, h_j spread over two decades, P and X̄ perturbed.
fn model_for(method: &str, m: usize, options: MethodOptions, data: &TrainData) -> ModelFile {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let meth = methods::get(method).expect("method");
    let mut model = init(meth, data, &spec(method, m, options), &mut rng).expect("init");
    model.hyper.noise_variance = 0.05;
    for l in &mut model.hyper.lengthscales {
        *l *= 0.7;
    }
    if let Some(mut p) = model.table::<PseudoNoise>().expect("reads") {
        for (j, h) in p.h.iter_mut().enumerate() {
            *h = 0.01 * 10f64.powf(2.0 * j as f64 / m as f64);
        }
        model.set(&p);
    }
    if let Some(mut p) = model.table::<Projection>().expect("reads") {
        for row in &mut p.matrix {
            for v in row.iter_mut() {
                *v = 1.3 * *v + 0.1 * rng.random_range(-1.0..1.0);
            }
        }
        model.set(&p);
    }
    if let Some(mut z) = model.table::<Inducing>().expect("reads") {
        for row in &mut z.points {
            for v in row.iter_mut() {
                *v += 0.05 * rng.random_range(-1.0..1.0);
            }
        }
        model.set(&z);
    }
    model
}

fn meth(name: &str) -> &'static dyn Method {
    methods::get(name).expect("method")
}

fn nlml(model: &ModelFile, data: &TrainData) -> f64 {
    meth(&model.method).nlml(model, data, &ex()).expect("nlml")
}

/// Central differences of the objective over the whole packed vector.
fn fd(model: &ModelFile, data: &TrainData, what: &str) {
    let method = meth(&model.method);
    method.check(model).expect("valid");
    let theta = method.pack(model);
    let o = method.objective(model, data, &ex()).expect("objective");
    assert_eq!(theta.len(), o.grad.len(), "{what}: gradient length");
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

/// Packed layouts, so that the finite-difference checks cover every group by name:
/// spgp-hs [σ0², ℓ (D), σ², X̄ (m×D), h (m)]; spgp-dr [σ0², σ², P (G×D), X̄ (m×G),
/// h (m) with --hetero]; pca-spgp [σ0², ℓ (G), σ², X̄ (m×G)].
#[test]
fn parameter_vectors_hold_every_group() {
    let data = toy_data(40, 3, 1);
    let len = |method: &str, options: MethodOptions| {
        let model = model_for(method, 5, options, &data);
        meth(method).pack(&model).len()
    };
    assert_eq!(
        len("spgp-hs", MethodOptions::default()),
        1 + 3 + 1 + 5 * 3 + 5
    );
    assert_eq!(len("spgp-dr", dims(2, false)), 2 + 2 * 3 + 5 * 2);
    assert_eq!(len("spgp-dr", dims(2, true)), 2 + 2 * 3 + 5 * 2 + 5);
    assert_eq!(len("pca-spgp", dims(2, false)), 1 + 2 + 1 + 5 * 2);
}

/// σ0², ℓ, σ², the pseudo-inputs and h (spgp-hs); σ0², σ², P, the pseudo-inputs in
/// G dimensions and h (spgp-dr, also G = D); under both jitter policies, with and
/// without a noise floor.
#[test]
fn gradients_match_finite_differences() {
    let data = toy_data(60, 3, 11);
    for jitter in [None, Some(1e-6)] {
        // (in one projected dimension 6 points start too close together for clean
        // differences: Kuu's condition number costs the central differences 5 digits)
        for (method, options, m) in [
            ("spgp-hs", MethodOptions::default(), 6),
            ("spgp-dr", dims(2, false), 6),
            ("spgp-dr", dims(2, true), 6),
            ("spgp-dr", dims(3, true), 6),
            ("spgp-dr", dims(1, false), 3),
            ("pca-spgp", dims(2, false), 6),
        ] {
            let mut model = model_for(method, m, options.clone(), &data);
            model.jitter = jitter;
            // the fixed-jitter pass also packs σ² above a noise floor (σ² = floor + e^θ)
            model.noise_floor = jitter.map(|_| 0.01);
            fd(
                &model,
                &data,
                &format!(
                    "{method} dims {:?} hetero {} jitter {jitter:?}",
                    options.dims, options.hetero
                ),
            );
        }
    }
}

/// SPGP+HS with h = 0 is SPGP bit for bit: objective, gradient (h's entries are 0)
/// and predictions.
#[test]
fn spgp_hs_with_zero_pseudo_noise_is_spgp() {
    let data = toy_data(70, 2, 13);
    let fitc = model_for("fitc", 8, MethodOptions::default(), &data);
    let mut hs = fitc.clone();
    hs.method = "spgp-hs".into();
    hs.set(&PseudoNoise { h: vec![0.0; 8] });
    let a = meth("fitc").objective(&fitc, &data, &ex()).expect("fitc");
    let b = meth("spgp-hs")
        .objective(&hs, &data, &ex())
        .expect("spgp-hs");
    assert_eq!(a.nlml, b.nlml);
    assert_eq!(a.grad[..], b.grad[..a.grad.len()]);
    assert!(b.grad[a.grad.len()..].iter().all(|g| *g == 0.0));
    let x = toy_data(30, 2, 14).x;
    let pa = Predictor::new(fitc, Some((&data.x, &data.y)))
        .expect("fitc")
        .predict(&x)
        .expect("predicts");
    let pb = Predictor::new(hs.clone(), Some((&data.x, &data.y)))
        .expect("spgp-hs")
        .predict(&x)
        .expect("predicts");
    assert_eq!(pa.mean, pb.mean);
    assert_eq!(pa.var_noisy, pb.var_noisy);
    // and h > 0 changes it
    hs.set(&PseudoNoise { h: vec![0.1; 8] });
    assert!(nlml(&hs, &data) != a.nlml);
}

/// SPGP+DR with G = D and P = diag(1/ℓ), pseudo-inputs X̄ = Z/ℓ, is the ARD SPGP:
/// same objective and predictions; and the chain rule ties the gradients:
/// ∂/∂X̄_jd = ℓ_d ∂/∂Z_jd, ∂/∂log ℓ_d = −P_dd ∂/∂P_dd − Σ_j X̄_jd ∂/∂X̄_jd.
#[test]
fn spgp_dr_with_diagonal_projection_is_ard_spgp() {
    let (d, m) = (3, 7);
    let data = toy_data(90, d, 17);
    let fitc = model_for("fitc", m, MethodOptions::default(), &data);
    let ell = fitc.hyper.lengthscales.clone();
    let z = &fitc.table::<Inducing>().expect("reads").expect("z").points;
    let mut dr = ModelFile::new(
        "spgp-dr",
        Hyper {
            lengthscales: Vec::new(),
            ..fitc.hyper.clone()
        },
    );
    dr.set(&Projection {
        matrix: (0..d)
            .map(|r| {
                (0..d)
                    .map(|c| if r == c { 1.0 / ell[c] } else { 0.0 })
                    .collect()
            })
            .collect(),
    });
    dr.set(&Inducing {
        points: z
            .iter()
            .map(|row| row.iter().zip(&ell).map(|(v, l)| v / l).collect())
            .collect(),
    });
    dr.check().expect("a valid spgp-dr model");
    let a = meth("fitc").objective(&fitc, &data, &ex()).expect("fitc");
    let b = meth("spgp-dr")
        .objective(&dr, &data, &ex())
        .expect("spgp-dr");
    assert!(
        ((a.nlml - b.nlml) / a.nlml).abs() < 1e-12,
        "{} vs {}",
        a.nlml,
        b.nlml
    );
    // fitc: [σ0², ℓ (d), σ², Z (m×d)]; spgp-dr: [σ0², σ², P (d×d), X̄ (m×d)]
    assert_close("σ0²", &[b.grad[0]], &[a.grad[0]], 1e-9);
    assert_close("σ²", &[b.grad[1]], &[a.grad[d + 1]], 1e-9);
    let gp = |r: usize, c: usize| b.grad[2 + r + c * d];
    let gxbar = |j: usize, k: usize| b.grad[2 + d * d + j + k * m];
    let gz = |j: usize, k: usize| a.grad[d + 2 + j + k * m];
    let xbar = &dr.table::<Inducing>().expect("reads").expect("x̄").points;
    for k in 0..d {
        for j in 0..m {
            assert_close("X̄ vs Z", &[gxbar(j, k)], &[ell[k] * gz(j, k)], 1e-9);
        }
        let via_dr = -gp(k, k) / ell[k] - (0..m).map(|j| xbar[j][k] * gxbar(j, k)).sum::<f64>();
        assert_close("log ℓ", &[via_dr], &[a.grad[1 + k]], 1e-8);
    }
    let x = toy_data(25, d, 18).x;
    let pa = Predictor::new(fitc, Some((&data.x, &data.y)))
        .expect("fitc")
        .predict(&x)
        .expect("predicts");
    let pb = Predictor::new(dr, Some((&data.x, &data.y)))
        .expect("spgp-dr")
        .predict(&x)
        .expect("predicts");
    assert_close("mean", &pb.mean, &pa.mean, 1e-9);
    assert_close("variance", &pb.var_noisy, &pa.var_noisy, 1e-9);
}

/// At G = D spgp-dr starts as the ARD model fitc starts from (same seed: the same
/// hyperparameters and subset; P = V diag(1/ℓ) only rotates the scaled inputs).
#[test]
fn full_rank_starts_are_the_ard_start() {
    let data = toy_data(80, 3, 19);
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let fitc = init(
        meth("fitc"),
        &data,
        &spec("fitc", 9, MethodOptions::default()),
        &mut rng,
    )
    .expect("fitc");
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let dr = init(
        meth("spgp-dr"),
        &data,
        &spec("spgp-dr", 9, dims(3, false)),
        &mut rng,
    )
    .expect("spgp-dr");
    assert!(dr.hyper.lengthscales.is_empty());
    assert_eq!(dr.hyper.signal_variance, fitc.hyper.signal_variance);
    let p = DMatrix::from_fn(3, 3, |r, c| {
        dr.table::<Projection>().expect("reads").expect("P").matrix[r][c]
    });
    let w = p.transpose() * &p; // PᵀP = diag(1/ℓ²)
    for r in 0..3 {
        for c in 0..3 {
            let want = if r == c {
                fitc.hyper.lengthscales[r].powi(-2)
            } else {
                0.0
            };
            assert!(
                (w[(r, c)] - want).abs() < 1e-12,
                "PᵀP[{r},{c}] = {}",
                w[(r, c)]
            );
        }
    }
    let (a, b) = (nlml(&fitc, &data), nlml(&dr, &data));
    assert!(((a - b) / a).abs() < 1e-10, "{a} vs {b}");
}

/// Dense O(n³) FITC NLML from Kuf (m×n), Kuu (with everything on its diagonal
/// already) and kdiag: C = Q + diag(kdiag − Q) + σ²I.
fn dense_fitc(kuf: &DMatrix<f64>, kuu: &DMatrix<f64>, kdiag: f64, s2: f64, y: &[f64]) -> f64 {
    let q = kuf.transpose() * kuu.clone().cholesky().expect("spd").solve(kuf);
    let n = y.len();
    let mut c = q.clone();
    for i in 0..n {
        c[(i, i)] += kdiag - q[(i, i)] + s2;
    }
    let l = c.cholesky().expect("spd");
    let y = DVector::from_column_slice(y);
    let alpha = l.l().solve_lower_triangular(&y).expect("solves");
    0.5 * alpha.norm_squared()
        + l.l().diagonal().iter().map(|v| v.ln()).sum::<f64>()
        + 0.5 * n as f64 * (2.0 * PI).ln()
}

fn rows(t: &[Vec<f64>]) -> DMatrix<f64> {
    DMatrix::from_fn(t.len(), t[0].len(), |i, j| t[i][j])
}

/// Each new method's O(n·m²) NLML equals the dense O(n³) one built from the
/// definitions (paper eqs. 4, 9, 10) with explicit loops, on n = 150.
#[test]
fn fast_objective_equals_a_dense_evaluation() {
    let (n, d, m) = (150, 3, 10);
    let data = toy_data(n, d, 23);
    let se = |a: &[f64], b: &[f64], sf2: f64| {
        sf2 * (-0.5 * a.iter().zip(b).map(|(u, v)| (u - v).powi(2)).sum::<f64>()).exp()
    };
    for (method, options) in [
        ("spgp-hs", MethodOptions::default()),
        ("spgp-dr", dims(2, false)),
        ("spgp-dr", dims(2, true)),
        ("pca-spgp", dims(2, false)),
    ] {
        let mut model = model_for(method, m, options, &data);
        let jitter = 1e-6;
        model.jitter = Some(jitter);
        let sf2 = model.hyper.signal_variance;
        let z = rows(
            &model
                .table::<Inducing>()
                .expect("reads")
                .expect("points")
                .points,
        );
        // the inputs as the kernel sees them (x/ℓ, P x, B(x − mean)/ℓ) and the points likewise
        let (feat, zf): (Vec<Vec<f64>>, DMatrix<f64>) = match method {
            "spgp-hs" => {
                let ell = &model.hyper.lengthscales;
                (
                    (0..n)
                        .map(|i| (0..d).map(|k| data.x[(i, k)] / ell[k]).collect())
                        .collect(),
                    DMatrix::from_fn(m, d, |j, k| z[(j, k)] / ell[k]),
                )
            }
            "spgp-dr" => {
                let p = rows(
                    &model
                        .table::<Projection>()
                        .expect("reads")
                        .expect("P")
                        .matrix,
                );
                (
                    (0..n)
                        .map(|i| {
                            (0..p.nrows())
                                .map(|g| (0..d).map(|k| p[(g, k)] * data.x[(i, k)]).sum())
                                .collect()
                        })
                        .collect(),
                    z.clone(),
                )
            }
            _ => {
                let pca = model.table::<Pca>().expect("reads").expect("pca");
                let b = rows(&pca.basis);
                let ell = &model.hyper.lengthscales;
                (
                    (0..n)
                        .map(|i| {
                            (0..b.nrows())
                                .map(|g| {
                                    (0..d)
                                        .map(|k| b[(g, k)] * (data.x[(i, k)] - pca.mean[k]))
                                        .sum::<f64>()
                                        / ell[g]
                                })
                                .collect()
                        })
                        .collect(),
                    DMatrix::from_fn(m, b.nrows(), |j, g| z[(j, g)] / ell[g]),
                )
            }
        };
        let zr: Vec<Vec<f64>> = (0..m)
            .map(|j| zf.row(j).iter().copied().collect())
            .collect();
        let kuf = DMatrix::from_fn(m, n, |j, i| se(&zr[j], &feat[i], sf2));
        let mut kuu = DMatrix::from_fn(m, m, |a, b| se(&zr[a], &zr[b], sf2));
        let h = model
            .table::<PseudoNoise>()
            .expect("reads")
            .map(|p| p.h.clone());
        for j in 0..m {
            kuu[(j, j)] += jitter + h.as_ref().map_or(0.0, |h| h[j]);
        }
        let want = dense_fitc(&kuf, &kuu, sf2, model.hyper.noise_variance, &data.y);
        let got = nlml(&model, &data);
        assert!(
            ((got - want) / want).abs() < 1e-10,
            "{method} (h: {}): {got} vs dense {want}",
            h.is_some()
        );
    }
}

/// The issue's spgp-dr model file reads, predicts on the original D inputs, and its
/// checks name what is wrong.
#[test]
fn hand_written_models_are_checked() {
    let text = r#"
method = "spgp-dr"
target_mean = 0.0
jitter = 1e-6
[hyper]
signal_variance = 1.0
noise_variance = 0.01
[projection]
matrix = [[0.5, 0.1, 0.0], [0.0, 0.3, 0.2]]
[inducing]
points = [[0.1, 0.2], [0.3, 0.4]]
"#;
    let model = ModelFile::parse(text).expect("parses");
    assert_eq!(model.check().expect("valid").input_dim(&model), 3);
    model.check().expect("valid");
    let data = toy_data(20, 3, 29);
    let p = Predictor::new(model.clone(), Some((&data.x, &data.y))).expect("conditions");
    assert_eq!(
        p.predict(&data.x).expect("predicts on D = 3").mean.len(),
        20
    );
    assert!(
        p.predict(&DMatrix::zeros(2, 2)).is_err(),
        "2 inputs for a 3-input model"
    );
    let err = |m: &ModelFile| match m.check() {
        Ok(_) => panic!("{} passed its check", m.method),
        Err(e) => e.to_string(),
    };
    let mut bad = model.clone();
    bad.hyper.lengthscales = vec![1.0, 1.0, 1.0];
    assert!(
        err(&bad).contains("lengthscales does not apply"),
        "{}",
        err(&bad)
    );
    let mut bad = model.clone();
    bad.set(&Inducing {
        points: vec![vec![0.1, 0.2, 0.3]],
    });
    assert!(err(&bad).contains("[inducing] points"), "{}", err(&bad));
    let mut bad = model.clone();
    bad.set(&PseudoNoise { h: vec![0.1] });
    assert!(err(&bad).contains("[pseudo_noise] h has 1 values, expected 2"));
    bad.set(&PseudoNoise { h: vec![0.1, -1.0] });
    assert!(err(&bad).contains("≥ 0"));
    let mut bad = model.clone();
    bad.set(&Projection {
        matrix: vec![vec![1.0], vec![1.0], vec![1.0]],
    });
    assert!(err(&bad).contains("G must not exceed D"), "{}", err(&bad));
    // the other methods' tables
    let mut fitc = ModelFile::new("fitc", Hyper::se(1.0, vec![1.0], 0.1));
    fitc.set(&Inducing {
        points: vec![vec![0.0]],
    });
    fitc.check().expect("valid fitc");
    let mut bad = fitc.clone();
    bad.set(&PseudoNoise { h: vec![0.0] });
    assert!(err(&bad).contains("[pseudo_noise] does not apply to method 'fitc'"));
    let mut hs = fitc.clone();
    hs.method = "spgp-hs".into();
    assert!(err(&hs).contains("no [pseudo_noise]"), "{}", err(&hs));
    let mut bad = fitc.clone();
    bad.hyper.lengthscales.clear();
    assert!(
        err(&bad).contains("lengthscales is missing"),
        "{}",
        err(&bad)
    );
    let mut pca = fitc.clone();
    pca.method = "pca-spgp".into();
    pca.set(&Pca {
        mean: vec![0.0, 0.0],
        basis: vec![vec![0.6, 0.8], vec![0.8, -0.6]],
    });
    assert!(
        err(&pca).contains("[pca] basis has 2 rows"),
        "{}",
        err(&pca)
    );
    pca.set(&Pca {
        mean: vec![0.0, 0.0],
        basis: vec![vec![0.6, 0.8]],
    });
    pca.check().expect("valid pca-spgp");
    assert_eq!(pca.check().expect("valid").input_dim(&pca), 2);
}

/// --dims is required by spgp-dr and pca-spgp, must be ≤ D, is read by them only;
/// --hetero by spgp-dr only.
#[test]
fn options_are_checked() {
    let data = toy_data(30, 2, 31);
    let e = spec("spgp-dr", 5, MethodOptions::default())
        .check(30)
        .expect_err("no dims");
    assert!(e.to_string().contains("--dims"), "{e}");
    assert!(
        spec("pca-spgp", 5, MethodOptions::default())
            .check(30)
            .is_err()
    );
    assert!(spec("fitc", 5, dims(2, false)).check(30).is_err());
    let hetero = MethodOptions {
        hetero: true,
        ..Default::default()
    };
    assert!(
        spec(
            "pca-spgp",
            5,
            MethodOptions {
                dims: Some(1),
                ..hetero.clone()
            }
        )
        .check(30)
        .is_err()
    );
    assert!(spec("spgp-dr", 5, dims(0, false)).check(30).is_err());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for method in ["spgp-dr", "pca-spgp"] {
        let e = init(
            meth(method),
            &data,
            &spec(method, 5, dims(3, false)),
            &mut rng,
        )
        .expect_err("G > D");
        assert!(e.to_string().contains("1 ≤ G ≤ D = 2"), "{e}");
    }
}

/// Fits run end to end on the committed heteroscedastic data and the model files
/// they write read back and predict the same.
#[test]
fn fits_run_end_to_end_and_round_trip() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let ds = sgpw::data::load(&sgpw::data::LoadSpec {
        train: root.join("datasets/hetero_train.csv"),
        test: Some(root.join("datasets/hetero_test.csv")),
        ..Default::default()
    })
    .expect("datasets/hetero_*.csv (sgpw gen hetero)");
    for (method, options) in [
        ("spgp-hs", MethodOptions::default()),
        ("spgp-dr", dims(1, true)),
        ("pca-spgp", dims(1, false)),
    ] {
        let mut s = spec(method, 8, options);
        s.iters = 30;
        s.standardize = true;
        let (r, _) = fit(&ds, &s);
        let r = r.unwrap_or_else(|e| panic!("{method}: {e}"));
        let test = r.test.expect("scored");
        assert!(
            test.mnlp.is_finite() && test.nmse.is_some_and(|v| v < 1.0),
            "{method}: {test:?}"
        );
        let text = r.model.to_toml().expect("writes");
        let back = ModelFile::parse(&text).expect("reads");
        let x = ds.x_test.as_ref().expect("test inputs");
        let a = r.predictor.predict(x).expect("predicts");
        let b = Predictor::new(back, None)
            .expect("stored posterior")
            .predict(x)
            .expect("predicts");
        assert_close(method, &b.mean, &a.mean, 1e-12);
    }
}
