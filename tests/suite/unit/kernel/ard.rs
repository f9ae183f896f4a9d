use nalgebra::DMatrix;
use sgpw::exec::Par;
use sgpw::kernel::Kernel;
use sgpw::kernel::ard::*;
use sgpw::kernel::stationary::exp_nonpositive;

/// Enough columns for several stripes: the per-stripe sums must add up.
#[test]
fn striped_gradients_match_finite_differences() {
    let nb = 700;
    assert!(sgpw::linalg::stripe_len(nb) < nb);
    let a = DMatrix::from_fn(3, 2, |i, d| (i as f64 * 0.9 + d as f64).sin() + 5.0);
    let b = DMatrix::from_fn(nb, 2, |j, d| ((j * (d + 1)) as f64 * 0.013).cos() + 5.0);
    let adj = DMatrix::from_fn(3, nb, |i, j| ((i + 2 * j) as f64 * 0.1).sin());
    let kern = Ard::se(0.8, vec![0.6, 1.7]);
    let g = kern.grad(
        &a,
        &b,
        &kern.matrix(&a, &b, Par::Seq),
        &adj,
        true,
        true,
        Par::Seq,
    );
    let f = |kk: &Ard, a: &DMatrix<f64>, b: &DMatrix<f64>| {
        kk.matrix(a, b, Par::Seq).component_mul(&adj).sum()
    };
    let h: f64 = 1e-6;
    let close = |an: f64, fd: f64| (an - fd).abs() < 1e-7 * (1.0 + fd.abs());
    for d in 0..2 {
        let (mut kp, mut km) = (kern.clone(), kern.clone());
        kp.lengthscales[d] *= h.exp();
        km.lengthscales[d] *= (-h).exp();
        let fd = (f(&kp, &a, &b) - f(&km, &a, &b)) / (2.0 * h);
        assert!(close(g.params[1 + d], fd), "ell {d}");
        let (mut ap, mut am) = (a.clone(), a.clone());
        ap[(2, d)] += h;
        am[(2, d)] -= h;
        let fd = (f(&kern, &ap, &b) - f(&kern, &am, &b)) / (2.0 * h);
        assert!(close(g.a.as_ref().expect("asked")[(2, d)], fd), "a {d}");
        for j in [0, 350, nb - 1] {
            let (mut bp, mut bm) = (b.clone(), b.clone());
            bp[(j, d)] += h;
            bm[(j, d)] -= h;
            let fd = (f(&kern, &a, &bp) - f(&kern, &a, &bm)) / (2.0 * h);
            assert!(close(g.b.as_ref().expect("asked")[(j, d)], fd), "b {j} {d}");
        }
    }
}

fn ulps(a: f64, b: f64) -> u64 {
    (a.to_bits() as i64).abs_diff(b.to_bits() as i64)
}

/// The kernel's exp against libm's across its whole range, densely near 0 (where
/// kernel values are large) and at the edges of the range reduction.
#[test]
fn exp_nonpositive_is_within_one_ulp() {
    let mut worst = (0, 0.0);
    let mut check = |x: f64| {
        let u = ulps(exp_nonpositive(x), x.exp());
        if u > worst.0 {
            worst = (u, x);
        }
    };
    for i in 0..2_000_000 {
        check(-(i as f64) * 3.54e-4); // [−708, 0]
        check(-(i as f64) * 1.0e-6); // [−2, 0]
    }
    for n in 0..1021 {
        let mid = -((n as f64) + 0.5) * std::f64::consts::LN_2;
        for x in [mid, mid.next_up(), mid.next_down()] {
            check(x);
        }
    }
    for x in [0.0, -0.0, -1e-300, -f64::EPSILON, -708.0] {
        check(x);
    }
    assert!(worst.0 <= 1, "{} ulps at x = {:e}", worst.0, worst.1);
    assert_eq!(exp_nonpositive(0.0), 1.0);
    assert_eq!(exp_nonpositive(-708.1), 0.0);
    assert_eq!(exp_nonpositive(f64::NEG_INFINITY), 0.0);
    assert!(exp_nonpositive(f64::NAN).is_nan());
}

#[test]
fn values_and_gradients_match_finite_differences() {
    let a = DMatrix::from_fn(5, 3, |i, d| ((i * 3 + d) as f64 * 0.7).sin());
    let b = DMatrix::from_fn(4, 3, |i, d| ((i * 5 + d * 2) as f64 * 0.3).cos());
    let adj = DMatrix::from_fn(5, 4, |i, j| (i as f64 - 1.5 * j as f64).sin());
    let kern = Ard::se(1.3, vec![0.7, 1.1, 2.0]);
    let k = kern.matrix(&a, &b, Par::Seq);
    let r2: f64 = (0..3)
        .map(|d| ((a[(1, d)] - b[(2, d)]) / kern.lengthscales[d]).powi(2))
        .sum();
    assert!((k[(1, 2)] - 1.3 * (-0.5 * r2).exp()).abs() < 1e-15);
    let g = kern.grad(&a, &b, &k, &adj, true, true, Par::Seq);
    let f = |kk: &Ard, a: &DMatrix<f64>, b: &DMatrix<f64>| {
        kk.matrix(a, b, Par::Seq).component_mul(&adj).sum()
    };
    let h = 1e-6;
    let fd = |plus: f64, minus: f64| (plus - minus) / (2.0 * h);
    let mut kp = kern.clone();
    let mut km = kern.clone();
    kp.signal_variance *= h.exp();
    km.signal_variance *= (-h).exp();
    assert!((fd(f(&kp, &a, &b), f(&km, &a, &b)) - g.params[0]).abs() < 1e-8);
    for d in 0..3 {
        let (mut kp, mut km) = (kern.clone(), kern.clone());
        kp.lengthscales[d] *= h.exp();
        km.lengthscales[d] *= (-h).exp();
        let num = fd(f(&kp, &a, &b), f(&km, &a, &b));
        assert!((num - g.params[1 + d]).abs() < 1e-8, "ell {d}");
    }
    let ga = g.a.expect("asked");
    let gb = g.b.expect("asked");
    for i in 0..5 {
        for d in 0..3 {
            let (mut ap, mut am) = (a.clone(), a.clone());
            ap[(i, d)] += h;
            am[(i, d)] -= h;
            assert!((fd(f(&kern, &ap, &b), f(&kern, &am, &b)) - ga[(i, d)]).abs() < 1e-8);
        }
    }
    for j in 0..4 {
        for d in 0..3 {
            let (mut bp, mut bm) = (b.clone(), b.clone());
            bp[(j, d)] += h;
            bm[(j, d)] -= h;
            assert!((fd(f(&kern, &a, &bp), f(&kern, &a, &bm)) - gb[(j, d)]).abs() < 1e-8);
        }
    }
}
