use nalgebra::DMatrix;
use sgpw::exec::Par;
use sgpw::kernel::expression::KernelExpr;
use sgpw::kernel::units::*;
use sgpw::kernel::{KernelChoice, Start};

fn start(columns: &[&str]) -> Start {
    let d = columns.len();
    Start {
        columns: columns.iter().map(|c| c.to_string()).collect(),
        variance: 1.0,
        lengthscales: vec![1.0; d],
        periods: vec![1.0; d],
        mean_squares: vec![1.0; d],
    }
}

/// Every value written in the data's units, converted into a standardized model's,
/// gives k̃(u, u') = k(x, x')/s_y² at u = (x − c)/s: the kernel the expression means
/// on the raw data, to rounding. Linear and polynomial parts are exact when the
/// inputs are scaled but not shifted (the module's note); the stationary ones for
/// any shift. Back into the data's units, every value is the one written.
#[test]
fn values_in_the_datas_units_mean_the_same_kernel_in_model_units() {
    let s = start(&["t", "u", "w"]);
    let cases: [(&str, [f64; 3]); 2] = [
        (
            "se(var=2500, ls=[50, 3, 0.2]) + se(var=4, ls=100, dims=[t]) \
                 * periodic(ls=0.5, period=[1, 7], dims=[t, u], var=2, fix=period) \
                 + rq(var=0.25, ls=1, alpha=2, dims=[w]) + matern32(var=3, ls=[4, 5], dims=[1, 2]) \
                 + constant(var=7) + spectral_mixture(q=2, weights=[1, 2], means=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], \
                 scales=0.05) + periodic(base=matern52, var=5, ls=2, period=3) \
                 + changepoints(se(ls=30, var=2), matern32(var=5, ls=0.2, dims=[u]) * se(dims=[w], ls=4), \
                 locations=1975, steepness=0.2, dims=[t]) \
                 + changepoints(se(var=1, ls=0.5), rq(var=2, ls=0.3, alpha=1), se(ls=2, var=0.5), \
                 locations=[-3.5, -2], steepness=[3, 1], dims=[u], fix=steepness)",
            [1960.0, -3.0, 40.0],
        ),
        (
            "linear(var=[2, 3, 0.5]) + polynomial(degree=3, var=[0.1, 0.2, 0.3], offset=2) \
                 + se(var=9, ls=2) * linear(var=0.7, dims=[u])",
            [0.0, 0.0, 0.0],
        ),
    ];
    let sx = [12.5, 0.3, 4.0];
    let sy = 30.0;
    let x = DMatrix::from_fn(7, 3, |i, j| {
        cases[0].1[j] + sx[j] * ((i * 3 + j) as f64 * 0.77).sin()
    });
    for (text, centre) in cases {
        let raw = KernelChoice::build(text, &s).expect("builds raw");
        let scales = Scales {
            centres: &centre,
            inputs: &sx,
            target: sy,
        };
        let model = KernelChoice::build_for_fit(text, &s, &[], Some(scales)).expect("builds");
        let xc = DMatrix::from_fn(7, 3, |i, j| x[(i, j)] - cases[0].1[j] + centre[j]);
        let u = DMatrix::from_fn(7, 3, |i, j| (xc[(i, j)] - centre[j]) / sx[j]);
        let (k, ku) = (
            raw.gram(&xc, Par::Seq),
            model.gram(&u, Par::Seq) * (sy * sy),
        );
        for (a, b) in k.iter().zip(ku.iter()) {
            assert!((a - b).abs() <= 1e-11 * k.amax(), "{text}: {a} vs {b}");
        }
        let written = model.to_expr().expect("writable");
        let cols: Vec<String> = (0..3).map(|i| i.to_string()).collect();
        let back = convert(&written, &cols, scales, Towards::Data);
        let again = KernelChoice::build(&back.to_string(), &s).expect("builds");
        let k2 = again.gram(&xc, Par::Seq);
        for (a, b) in k.iter().zip(k2.iter()) {
            assert!((a - b).abs() <= 1e-11 * k.amax(), "{back}: {a} vs {b}");
        }
        assert_eq!(
            rounded(&back, 9).to_string(),
            rounded(&raw.to_expr().expect("writable"), 9).to_string()
        );
    }
}

#[test]
fn the_centring_note_names_the_linear_parts_on_centred_inputs() {
    let cols: Vec<String> = vec!["t".into(), "u".into()];
    let e = KernelExpr::parse("se + linear(dims=[u]) + polynomial(dims=[t])").expect("parses");
    assert_eq!(centring_note(&e, &cols, &[0.0, 0.0]), None);
    let note = centring_note(&e, &cols, &[0.0, 2.0]).expect("a note");
    assert!(note.starts_with("linear in a standardized fit"), "{note}");
    let note = centring_note(&e, &cols, &[1.0, 2.0]).expect("a note");
    assert!(note.starts_with("linear, polynomial in"), "{note}");
    assert_eq!(
        rounded(
            &KernelExpr::parse("se(ls=1.0000000000000002, var=2500.123456)").expect("p"),
            6
        )
        .to_string(),
        "se(ls=1, var=2500.12)"
    );
}
