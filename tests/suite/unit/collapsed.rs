//! The core against dense O(n³) evaluations and finite differences.

use nalgebra::DMatrix;
use nalgebra::DVector;
use sgpw::collapsed::*;
use sgpw::error::Error;
use sgpw::exec::{Exec, Par};
use sgpw::kernel::Kernel;
use sgpw::linalg::{self, Jitter};
use std::f64::consts::PI;

const SEQ: fn() -> Exec = Exec::sequential;

/// NLML of N(0, C) by a dense O(n³) Cholesky.
fn dense_nlml(c: &DMatrix<f64>, y: &[f64]) -> f64 {
    let n = y.len();
    let chol = c.clone().cholesky().expect("spd");
    let yv = DVector::from_column_slice(y);
    let a = chol.solve(&yv);
    0.5 * yv.dot(&a)
        + chol.l().diagonal().iter().map(|d| d.ln()).sum::<f64>()
        + 0.5 * n as f64 * (2.0 * PI).ln()
}

fn problem(n: usize, m: usize) -> (DMatrix<f64>, DMatrix<f64>, Vec<f64>, Vec<f64>) {
    let x = DMatrix::from_fn(n, 2, |i, d| ((i * (d + 2)) as f64 * 0.37).sin() * 2.0);
    let z = DMatrix::from_fn(m, 2, |j, d| ((j * (d + 3)) as f64 * 0.53 + 0.1).cos() * 1.5);
    let k = sgpw::kernel::Ard::se(1.4, vec![0.9, 1.3]);
    let kuf = k.matrix(&z, &x, Par::Seq);
    let kuu = k.gram(&z, Par::Seq);
    let y: Vec<f64> = (0..n)
        .map(|i| (i as f64 * 0.3).sin() + 0.1 * (i % 3) as f64)
        .collect();
    (kuf, kuu, vec![1.4; n], y)
}

/// Q = Kfu Kuu⁻¹ Kuf and d = diag(K − Q), densely.
fn dense_q(kuf: &DMatrix<f64>, kuu: &DMatrix<f64>, kd: &[f64]) -> (DMatrix<f64>, Vec<f64>) {
    let q = kuf.transpose() * kuu.clone().cholesky().expect("spd").solve(kuf);
    let d = (0..kd.len()).map(|i| kd[i] - q[(i, i)]).collect();
    (q, d)
}

/// The objective of every approximation by a dense O(n³) evaluation.
fn dense_objective(
    kuf: &DMatrix<f64>,
    kuu: &DMatrix<f64>,
    kd: &[f64],
    s2: f64,
    approx: Approx,
    y: &[f64],
) -> f64 {
    let (q, d) = dense_q(kuf, kuu, kd);
    let (a, extra) = match approx {
        Approx::Fitc => (1.0, 0.0),
        Approx::Dtc => (0.0, 0.0),
        Approx::Vfe => (0.0, d.iter().sum::<f64>() / (2.0 * s2)),
        Approx::Pep { alpha } => (
            alpha,
            (1.0 - alpha) / (2.0 * alpha)
                * d.iter().map(|di| (1.0 + alpha * di / s2).ln()).sum::<f64>(),
        ),
    };
    let mut c = q;
    for i in 0..kd.len() {
        c[(i, i)] += s2 + a * d[i];
    }
    dense_nlml(&c, y) + extra
}

fn dense_cov(
    kuf: &DMatrix<f64>,
    kuu: &DMatrix<f64>,
    kd: &[f64],
    s2: f64,
    fitc: bool,
) -> DMatrix<f64> {
    let (mut c, d) = dense_q(kuf, kuu, kd);
    for i in 0..kd.len() {
        c[(i, i)] += s2 + if fitc { d[i] } else { 0.0 };
    }
    c
}

const ALL: [Approx; 5] = [
    Approx::Fitc,
    Approx::Dtc,
    Approx::Vfe,
    Approx::Pep { alpha: 0.5 },
    Approx::Pep { alpha: 0.1 },
];

fn lr<'a>(
    kuf: &'a DMatrix<f64>,
    kuu: &'a DMatrix<f64>,
    kd: &'a [f64],
    s2: f64,
    approx: Approx,
) -> LowRank<'a> {
    LowRank {
        kuf,
        kuu: Kuu::Dense(kuu),
        approx,
        kdiag: kd,
        noise: s2,
        jitter: Jitter::Fixed(0.0),
    }
}

#[test]
fn core_matches_dense_evaluation() {
    let (kuf, kuu, kd, y) = problem(150, 12);
    for approx in ALL {
        let fast = nlml(&lr(&kuf, &kuu, &kd, 0.07, approx), &y, &SEQ()).expect("ok");
        let dense = dense_objective(&kuf, &kuu, &kd, 0.07, approx, &y);
        assert!(
            ((fast - dense) / dense).abs() < 1e-11,
            "{approx:?}: {fast} vs {dense}"
        );
    }
}

/// Power EP is FITC at α = 1 (bit for bit: the same operations) and VFE as α → 0;
/// VFE's bound lies above the DTC/FITC evidence it bounds (−ELBO ≥ NLML_DTC).
#[test]
fn power_ep_ties_fitc_and_vfe() {
    let (kuf, kuu, kd, y) = problem(120, 9);
    let f = |a| nlml_and_adjoints(&lr(&kuf, &kuu, &kd, 0.05, a), &y, &SEQ()).expect("ok");
    let (fitc, pep1) = (f(Approx::Fitc), f(Approx::Pep { alpha: 1.0 }));
    assert_eq!(fitc.nlml, pep1.nlml);
    assert_eq!(fitc.d_kuf, pep1.d_kuf);
    assert_eq!(fitc.d_kdiag, pep1.d_kdiag);
    assert_eq!(fitc.d_noise, pep1.d_noise);
    let (vfe, pep0) = (f(Approx::Vfe), f(Approx::Pep { alpha: 1e-6 }));
    assert!(((vfe.nlml - pep0.nlml) / vfe.nlml).abs() < 1e-5);
    let dtc = f(Approx::Dtc);
    assert!(vfe.nlml >= dtc.nlml);
}

/// A diagonal Kuu (scalings in place of triangular solves) gives what the dense
/// path gives for the same matrix, for every approximation, adjoints included.
#[test]
fn diagonal_kuu_equals_the_dense_path() {
    let (kuf, _, kd, y) = problem(90, 7);
    let diag: Vec<f64> = (0..7).map(|j| 2.0 + 0.3 * j as f64).collect();
    let dense = DMatrix::from_diagonal(&DVector::from_column_slice(&diag));
    // a prior diagonal large enough that d = kdiag − q stays positive
    let kd: Vec<f64> = kd.iter().map(|v| v * 4.0).collect();
    for approx in ALL {
        let a = nlml_and_adjoints(&lr(&kuf, &dense, &kd, 0.05, approx), &y, &SEQ()).expect("dense");
        let b = nlml_and_adjoints(
            &LowRank {
                kuu: Kuu::Diagonal(&diag),
                ..lr(&kuf, &dense, &kd, 0.05, approx)
            },
            &y,
            &SEQ(),
        )
        .expect("diagonal");
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-11 * (1.0 + y.abs());
        assert!(close(a.nlml, b.nlml), "{approx:?}");
        assert!(close(a.d_noise, b.d_noise), "{approx:?}");
        for (x, y) in a.d_kuf.iter().zip(b.d_kuf.iter()) {
            assert!(close(*x, *y), "{approx:?} kuf");
        }
        for j in 0..7 {
            assert!(close(a.d_kuu[(j, j)], b.d_kuu[(j, j)]), "{approx:?} kuu");
        }
        for (x, y) in a.d_kdiag.iter().zip(&b.d_kdiag) {
            assert!(close(*x, *y), "{approx:?} kdiag");
        }
    }
}

/// n large enough for several stripes of several blocks each: the partial sums and
/// the block bookkeeping must give the same NLML as one dense evaluation, and the
/// adjoints of columns in a stripe's second block and in the last stripe must match
/// finite differences.
#[test]
fn striped_evaluation_matches_dense_and_finite_differences() {
    let n = 2600;
    assert!(
        linalg::stripe_len(n) > BLOCK,
        "test needs two blocks per stripe"
    );
    let (kuf, kuu, kd, y) = problem(n, 6);
    for approx in [Approx::Fitc, Approx::Vfe] {
        let eval = |kuf: &'_ DMatrix<f64>, kd: &'_ [f64]| -> f64 {
            nlml(&lr(kuf, &kuu, kd, 0.07, approx), &y, &Exec::default()).expect("ok")
        };
        // dense reference through faer's Cholesky (nalgebra's is too slow at n = 2600)
        let c = dense_cov(&kuf, &kuu, &kd, 0.07, approx == Approx::Fitc);
        let l = linalg::cholesky_with(&c, 0.0, Par::Threads(0)).expect("spd");
        let mut a = DMatrix::from_column_slice(n, 1, &y);
        linalg::solve_lower(&l, &mut a, Par::Threads(0));
        let trace = match approx {
            Approx::Vfe => dense_q(&kuf, &kuu, &kd).1.iter().sum::<f64>() / (2.0 * 0.07),
            _ => 0.0,
        };
        let dense = 0.5 * a.norm_squared()
            + linalg::half_logdet(&l)
            + 0.5 * n as f64 * (2.0 * PI).ln()
            + trace;
        let fast = eval(&kuf, &kd);
        assert!(((fast - dense) / dense).abs() < 1e-11, "{fast} vs {dense}");
        let adj = nlml_and_adjoints(&lr(&kuf, &kuu, &kd, 0.07, approx), &y, &Exec::default())
            .expect("ok");
        let h = 1e-6;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * (1.0 + b.abs());
        for (i, j) in [(0, 300), (5, 1000), (3, 2560), (2, n - 1)] {
            let (mut p, mut q) = (kuf.clone(), kuf.clone());
            p[(i, j)] += h;
            q[(i, j)] -= h;
            let fd = (eval(&p, &kd) - eval(&q, &kd)) / (2.0 * h);
            assert!(
                close(adj.d_kuf[(i, j)], fd),
                "{approx:?} kuf {i},{j}: {} vs {fd}",
                adj.d_kuf[(i, j)]
            );
            let (mut p, mut q) = (kd.clone(), kd.clone());
            p[j] += h;
            q[j] -= h;
            let fd = (eval(&kuf, &p) - eval(&kuf, &q)) / (2.0 * h);
            assert!(
                close(adj.d_kdiag[j], fd),
                "{approx:?} kdiag {j}: {} vs {fd}",
                adj.d_kdiag[j]
            );
        }
    }
}

#[test]
fn adjoints_match_finite_differences() {
    let (kuf, kuu, kd, y) = problem(40, 6);
    for approx in ALL {
        let eval = |kuf: &DMatrix<f64>, kuu: &DMatrix<f64>, kd: &[f64], s2: f64| {
            nlml(&lr(kuf, kuu, kd, s2, approx), &y, &SEQ()).expect("ok")
        };
        let adj = nlml_and_adjoints(&lr(&kuf, &kuu, &kd, 0.05, approx), &y, &SEQ()).expect("ok");
        assert!((adj.nlml - eval(&kuf, &kuu, &kd, 0.05)).abs() < 1e-12);
        let h = 1e-6;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * (1.0 + b.abs());
        for (i, j) in [(0, 0), (3, 7), (5, 39), (2, 20)] {
            let (mut p, mut q) = (kuf.clone(), kuf.clone());
            p[(i, j)] += h;
            q[(i, j)] -= h;
            let fd = (eval(&p, &kuu, &kd, 0.05) - eval(&q, &kuu, &kd, 0.05)) / (2.0 * h);
            assert!(
                close(adj.d_kuf[(i, j)], fd),
                "{approx:?} kuf {i},{j}: {} vs {fd}",
                adj.d_kuf[(i, j)]
            );
        }
        for (i, j) in [(0, 0), (1, 4), (5, 2)] {
            // a symmetric perturbation touches both (i,j) and (j,i)
            let (mut p, mut q) = (kuu.clone(), kuu.clone());
            p[(i, j)] += h;
            q[(i, j)] -= h;
            if i != j {
                p[(j, i)] += h;
                q[(j, i)] -= h;
            }
            let fd = (eval(&kuf, &p, &kd, 0.05) - eval(&kuf, &q, &kd, 0.05)) / (2.0 * h);
            let an = if i == j {
                adj.d_kuu[(i, i)]
            } else {
                2.0 * adj.d_kuu[(i, j)]
            };
            assert!(close(an, fd), "{approx:?} kuu {i},{j}: {an} vs {fd}");
        }
        let fd = (eval(&kuf, &kuu, &kd, 0.05 + h) - eval(&kuf, &kuu, &kd, 0.05 - h)) / (2.0 * h);
        assert!(
            close(adj.d_noise, fd),
            "{approx:?} noise {} vs {fd}",
            adj.d_noise
        );
        if approx.uses_diagonal() {
            let (mut p, mut q) = (kd.clone(), kd.clone());
            p[11] += h;
            q[11] -= h;
            let fd = (eval(&kuf, &kuu, &p, 0.05) - eval(&kuf, &kuu, &q, 0.05)) / (2.0 * h);
            assert!(close(adj.d_kdiag[11], fd), "{approx:?} kdiag");
        } else {
            assert!(adj.d_kdiag.is_empty());
        }
    }
}

#[test]
fn posterior_matches_dense_conditioning() {
    let (kuf, kuu, kd, y) = problem(60, 8);
    let k = sgpw::kernel::Ard::se(1.4, vec![0.9, 1.3]);
    let z = DMatrix::from_fn(8, 2, |j, d| ((j * (d + 3)) as f64 * 0.53 + 0.1).cos() * 1.5);
    let xs = DMatrix::from_fn(5, 2, |i, d| (i as f64 - 2.0) * 0.7 + d as f64 * 0.2);
    let kus = k.matrix(&z, &xs, Par::Seq);
    for (approx, fitc) in [(Approx::Fitc, true), (Approx::Vfe, false)] {
        let post = posterior(&lr(&kuf, &kuu, &kd, 0.05, approx), &y, false, &SEQ()).expect("ok");
        let (mean, var) = post.predict(&kus, &[1.4; 5], Par::Seq);
        // dense prediction: Q*f C⁻¹ y and k** − Q*f C⁻¹ Qf* (VFE predicts as DTC)
        let c = dense_cov(&kuf, &kuu, &kd, 0.05, fitc);
        let kuu_chol = kuu.clone().cholesky().expect("spd");
        let qsf = kus.transpose() * kuu_chol.solve(&kuf);
        let cc = c.cholesky().expect("spd");
        let dm = &qsf * cc.solve(&DVector::from_column_slice(&y));
        let dv = (&qsf * cc.solve(&qsf.transpose())).diagonal();
        for t in 0..5 {
            assert!((mean[t] - dm[t]).abs() < 1e-10, "{approx:?}");
            assert!((var[t] - (1.4 - dv[t])).abs() < 1e-10, "{approx:?}");
        }
    }
}

/// A cancelled token stops an evaluation inside its stripes.
#[test]
fn a_cancelled_evaluation_stops_with_cancelled() {
    let (kuf, kuu, kd, y) = problem(50, 5);
    let exec = Exec::sequential();
    exec.cancel.cancel();
    let e = nlml_and_adjoints(&lr(&kuf, &kuu, &kd, 0.05, Approx::Fitc), &y, &exec)
        .expect_err("cancelled");
    assert!(matches!(e, Error::Cancelled));
}

/// Folding points into a DTC summary one at a time gives the batch summary.
#[test]
fn the_streamed_summary_equals_the_batch_one() {
    let (kuf, _, _, y) = problem(30, 6);
    let diag = vec![1.7; 6];
    let batch = summary(
        &LowRank {
            kuf: &kuf,
            kuu: Kuu::Diagonal(&diag),
            approx: Approx::Dtc,
            kdiag: &[],
            noise: 0.03,
            jitter: Jitter::Fixed(0.0),
        },
        &y,
        &SEQ(),
    )
    .expect("batch");
    let mut s = Summary::empty_dtc(Kuu::Diagonal(&diag), Jitter::Fixed(0.0), 0.03).expect("empty");
    for (i, yi) in y.iter().enumerate() {
        let mut col = kuf.column(i).iter().copied().collect::<Vec<_>>();
        s.add_dtc(&mut col, *yi).expect("adds");
    }
    assert!((s.nlml() - batch.nlml()).abs() < 1e-10 * batch.nlml().abs());
    let (a, b) = (s.posterior(true, Par::Seq), batch.posterior(true, Par::Seq));
    assert!((a.var_matrix - b.var_matrix).abs().max() < 1e-10);
}
