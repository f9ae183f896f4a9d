use nalgebra::DMatrix;
use sgpw::exec::Par;
use sgpw::kernel::ComposedKernel;
use sgpw::kernel::expression::KernelExpr;
use sgpw::kernel::summands::*;
use sgpw::kernel::{Start, build};

fn composed(text: &str) -> ComposedKernel {
    let start = Start {
        columns: vec!["t".into(), "u".into()],
        variance: 2.0,
        lengthscales: vec![0.7, 1.3],
        periods: vec![1.0, 2.0],
        mean_squares: vec![1.0, 1.0],
    };
    let k = build(&KernelExpr::parse(text).expect("parses"), &start).expect("builds");
    ComposedKernel::new(k).expect("writable")
}

/// Labels number a repeated part as its blocks are numbered; nested products and
/// sums keep their parts' names.
#[test]
fn summands_are_labelled_by_their_parts() {
    let e =
        KernelExpr::parse("se + se * periodic + rq + se * (linear + constant)").expect("parses");
    assert_eq!(
        short_labels(&e),
        ["se1", "se2*periodic", "rq", "se3*(linear+constant)"]
    );
    let e = KernelExpr::parse("matern32 * se").expect("parses");
    assert_eq!(short_labels(&e), ["matern32*se"]);
    // change points by their own name; the se inside them count in the numbering
    let e = KernelExpr::parse("changepoints(se, se, locations=1) + se").expect("parses");
    assert_eq!(short_labels(&e), ["changepoints", "se3"]);
    assert_eq!(
        sgpw::kernel::labels(&e),
        ["changepoints", "se1", "se2", "se3"]
    );
}

/// The summands' kernel matrices add up to the sum's, to rounding; a kernel whose
/// top level is not a sum has none.
#[test]
fn summands_add_up_to_the_kernel() {
    let c = composed("se(dims=[t]) + se(dims=[t]) * periodic(dims=[u], fix=period) + linear");
    let parts = summands(&c).expect("a sum");
    let labels: Vec<&str> = parts.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["se1", "se2*periodic", "linear"]);
    let x = DMatrix::from_fn(6, 2, |i, j| (1.3 * i as f64 + j as f64).sin());
    let z = DMatrix::from_fn(4, 2, |i, j| (0.7 * i as f64 - j as f64).cos());
    let total = c.kernel().matrix(&x, &z, Par::Seq);
    let mut added = DMatrix::zeros(6, 4);
    for s in &parts {
        added += s.kernel.kernel().matrix(&x, &z, Par::Seq);
    }
    assert!((total - added).amax() < 1e-12);
    assert!(summands(&composed("se * periodic")).is_none());
    assert!(summands(&composed("rq")).is_none());
}
