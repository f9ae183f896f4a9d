use nalgebra::DMatrix;
use serde::Deserialize;
use serde::Serialize;
use sgpw::exec::Par;
use sgpw::kernel::Start;
use sgpw::kernel::build;
use sgpw::kernel::composed::*;
use sgpw::kernel::expression::KernelExpr;

/// Built, moved off its start, written as a table and read back: the same kernel,
/// to the bit; a broken expression is refused with the caret message.
#[test]
fn a_composed_kernel_reads_back_from_its_table() {
    let start = Start {
        columns: vec!["t".into(), "u".into()],
        variance: 3.0,
        lengthscales: vec![0.7, 2.0],
        periods: vec![1.0, 1.0],
        mean_squares: vec![1.0, 1.0],
    };
    let text = "se(ls=[1, 5]) + se(dims=[t]) * periodic(dims=[u], fix=period) + linear + white";
    let mut k = build(&KernelExpr::parse(text).expect("parses"), &start).expect("builds");
    let theta: Vec<f64> = k
        .log_params()
        .iter()
        .enumerate()
        .map(|(i, t)| t + 0.1 * (i as f64 + 1.0).sin())
        .collect();
    k.set_log_params(&theta);
    let c = ComposedKernel::new(k).expect("writable");
    #[derive(Serialize, Deserialize)]
    struct File {
        kernel: ComposedKernel,
    }
    let written = toml::to_string(&File { kernel: c.clone() }).expect("writes");
    assert!(written.starts_with("[kernel]\ninputs = 2\n"), "{written}");
    let back: File = toml::from_str(&written).expect("reads");
    assert!(back.kernel == c);
    let x = DMatrix::from_fn(5, 2, |i, j| (i as f64 * 0.7 + j as f64).cos());
    assert_eq!(
        back.kernel.kernel().gram(&x, Par::Seq),
        c.kernel().gram(&x, Par::Seq)
    );
    let bad = "[kernel]\ninputs = 2\nexpression = \"se + sqexp\"\n";
    let e = toml::from_str::<File>(bad)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("no kernel part is called sqexp") && e.contains("^"),
        "{e}"
    );
}
