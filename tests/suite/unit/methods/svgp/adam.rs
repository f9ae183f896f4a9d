use sgpw::methods::svgp::adam::*;

/// The first step moves every coordinate by the rate, against its gradient's sign
/// (m̂/√v̂ = ±1), and a quadratic is driven to its minimum.
#[test]
fn first_step_and_a_quadratic() {
    let mut a = Adam::new(2, 0.1);
    let mut x = [1.0, -2.0];
    a.step(&mut x, &[3.0, -0.5]);
    assert!(
        (x[0] - 0.9).abs() < 1e-6 && (x[1] + 1.9).abs() < 1e-6,
        "{x:?}"
    );
    let mut a = Adam::new(1, 0.05);
    let mut x = [4.0];
    for _ in 0..2000 {
        let g = [2.0 * (x[0] - 1.5)];
        a.step(&mut x, &g);
    }
    assert!((x[0] - 1.5).abs() < 1e-3, "{x:?}");
}
