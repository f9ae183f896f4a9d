use nalgebra::DMatrix;
use sgpw::error::Error;
use sgpw::exec::Exec;
use sgpw::linalg::*;

fn spd(n: usize) -> DMatrix<f64> {
    let b = DMatrix::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4);
    &b * b.transpose() + DMatrix::identity(n, n) * 0.5
}

/// Above the size where the threads write them, zeros and copies are exact.
#[test]
fn parallel_zeros_and_copies_are_exact() {
    let (r, c) = (301, PAR_WRITE_MIN / 300 + 7);
    let m = DMatrix::from_fn(r, c, |i, j| (i * 7 + j * 13) as f64 * 0.37 - 5.0);
    for par in [Par::Seq, Par::Threads(0)] {
        assert_eq!(copy(&m, par), m);
        assert_eq!(zeros(r, c, par), DMatrix::zeros(r, c));
    }
}

#[test]
fn cholesky_and_solves_agree_with_nalgebra() {
    let a = spd(30);
    let (l, j) = cholesky_jittered(&a, Jitter::Fixed(0.0), Par::Seq).expect("spd");
    assert_eq!(j, 0.0);
    assert!((&l * l.transpose() - &a).abs().max() < 1e-12);
    let inv = chol_inverse(&l, Par::Seq);
    assert!((&inv * &a - DMatrix::identity(30, 30)).abs().max() < 1e-10);
    let b = DMatrix::from_fn(30, 5, |i, j| (i as f64 - j as f64).sin());
    let mut x = b.clone();
    solve_lower(&l, &mut x, Par::Seq);
    assert!((&l * &x - &b).abs().max() < 1e-12);
    let mut y = b.clone();
    solve_lower_transpose(&l, &mut y, Par::Seq);
    assert!((l.transpose() * &y - &b).abs().max() < 1e-12);
    let c = mul(&b, true, &a, false, Par::Seq);
    assert!((c - b.transpose() * &a).abs().max() < 1e-12);
    let bt = b.transpose();
    let scaled = bt.map(|v| 0.5 * v);
    let mut s = DMatrix::identity(5, 5);
    block_add_nt_lower(&mut s, view(&scaled), view(&bt), -2.0);
    mirror_lower(&mut s);
    assert!(
        (s - (DMatrix::identity(5, 5) - &bt * bt.transpose()))
            .abs()
            .max()
            < 1e-12
    );
}

/// The blocked factorisation and inverse, cut into panels and updates that do not
/// divide n, agree with faer's unblocked ones to rounding.
#[test]
fn blocked_cholesky_and_inverse_match_the_unblocked_ones() {
    let n = 203;
    let a = spd(n);
    let exec = Exec::sequential();
    let whole = cholesky_with(&a, 0.0, Par::Seq).expect("spd");
    let inverse = chol_inverse(&whole, Par::Seq);
    for blocking in [
        Blocking {
            panel: 16,
            update: 40,
        },
        Blocking {
            panel: 64,
            update: 7,
        },
        Blocking {
            panel: 300,
            update: 300,
        },
    ] {
        let mut l = a.clone();
        assert!(cholesky_blocked(&mut l, &exec, blocking).expect("not cancelled"));
        let l = lower_factor(l, true, &exec.scratch).expect("positive diagonal");
        assert!((&l - &whole).abs().max() < 1e-12, "{blocking:?}");
        let inv = chol_inverse_blocked(&whole, &exec, blocking).expect("not cancelled");
        let scale = inverse.abs().max();
        assert!(
            (&inv - &inverse).abs().max() < 1e-12 * scale,
            "{blocking:?}"
        );
    }
    // not positive definite: refused, as the unblocked one refuses it
    let mut neg = a.clone();
    neg[(150, 150)] = -1e3;
    assert!(
        !cholesky_blocked(
            &mut neg,
            &exec,
            Blocking {
                panel: 16,
                update: 40
            }
        )
        .unwrap()
    );
    assert!(cholesky_with(&neg, 0.0, Par::Seq).is_none());
}

/// A cancelled token stops the blocked factorisation between panels: before any work
/// when it was set before, and well before the end when set while it runs (the last
/// diagonal block is never reached).
#[test]
fn a_cancelled_token_stops_the_blocked_cholesky_early() {
    let a = spd(300);
    let exec = Exec::sequential();
    exec.cancel.cancel();
    let mut l = a.clone();
    let blocking = Blocking {
        panel: 32,
        update: 64,
    };
    assert!(matches!(
        cholesky_blocked(&mut l, &exec, blocking),
        Err(Error::Cancelled)
    ));
    assert_eq!(l, a, "no panel was factorised");
    assert!(matches!(
        cholesky_shifted(&a, 0.0, &exec),
        Err(Error::Cancelled)
    ));
    assert!(matches!(
        chol_inverse_blocked(&DMatrix::identity(300, 300), &exec, blocking),
        Err(Error::Cancelled)
    ));

    // set from another thread while a 3000×3000 factorisation (seconds on one
    // thread) runs: it stops with the trailing diagonal untouched
    let n = 3000;
    let big = DMatrix::from_fn(n, n, |i, j| {
        if i == j {
            n as f64
        } else {
            ((i * 7 + j * 3) % 11) as f64 / 11.0
        }
    });
    let exec = Exec::sequential();
    let token = exec.cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(30));
        token.cancel();
    });
    let mut l = big.clone();
    let r = cholesky_blocked(
        &mut l,
        &exec,
        Blocking {
            panel: 64,
            update: 256,
        },
    );
    canceller.join().expect("canceller");
    assert!(matches!(r, Err(Error::Cancelled)), "ran to the end");
    assert_eq!(l[(n - 1, n - 1)], big[(n - 1, n - 1)]);
}

#[test]
fn auto_jitter_escalates_on_a_singular_matrix() {
    // rank one: needs jitter; reports the amount used
    let v = DMatrix::from_fn(5, 1, |i, _| i as f64 + 1.0);
    let a = &v * v.transpose();
    assert!(cholesky_with(&a, 0.0, Par::Seq).is_none());
    let (_, j) =
        cholesky_jittered(&a, Jitter::Auto { scale: 2.0 }, Par::Seq).expect("jitter helps");
    assert!((2e-8..=2e-2).contains(&j));
    let bad = DMatrix::from_element(3, 3, f64::NAN);
    assert!(cholesky_jittered(&bad, Jitter::Auto { scale: 1.0 }, Par::Seq).is_err());
    let neg = -DMatrix::<f64>::identity(3, 3);
    assert!(cholesky_jittered(&neg, Jitter::Fixed(1e-6), Par::Seq).is_err());
}
