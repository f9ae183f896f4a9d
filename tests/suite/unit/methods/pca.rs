use nalgebra::DMatrix;
use sgpw::methods::pca::*;

/// Inputs stretched along (1, 1)/√2 and, less, along (1, −1)/√2: the first
/// direction comes first, unit length, largest entry positive.
#[test]
fn principal_directions_of_a_stretched_cloud() {
    let x = DMatrix::from_fn(200, 2, |i, j| {
        let t = (i as f64 * 0.37).sin() * 3.0;
        let s = (i as f64 * 1.91).cos() * 0.5;
        if j == 0 { t + s + 1.0 } else { t - s - 2.0 }
    });
    let (mean, b) = principal_directions(&x, 2);
    assert!((mean[0] - x.column(0).mean()).abs() < 1e-12);
    let r = std::f64::consts::FRAC_1_SQRT_2;
    assert!(
        (b[(0, 0)] - r).abs() < 1e-2 && (b[(0, 1)] - r).abs() < 1e-2,
        "{b}"
    );
    assert!((b.row(1).norm() - 1.0).abs() < 1e-12);
    assert!(b.row(0).dot(&b.row(1)).abs() < 1e-12);
    // an axis-aligned direction keeps its lengthscale; a diagonal one mixes them
    let axes = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, r, r]);
    let ell = component_lengthscales(&axes, &[2.0, 1.0]);
    assert!((ell[0] - 2.0).abs() < 1e-15);
    assert!((ell[1] - (0.5f64 * (0.25 + 1.0)).sqrt().recip()).abs() < 1e-15);
}
