use sgpw::cli::bench::*;
use sgpw::exec::Exec;
use sgpw::run_context::RunContext;
use sgpw::run_spec::RunSpec;

/// `--kernel EXPR` times the kernel the expression builds, not the plain se.
#[test]
fn a_kernel_expression_is_the_kernel_timed() {
    let data = synthetic(60, 2, 1);
    let ctx = RunContext::quiet(Exec::default());
    let spec = |kernel: &str| RunSpec {
        method: "fitc".into(),
        m: 5,
        seed: 1,
        iters: 1,
        standardize: false,
        options: toml::from_str(&format!("kernel = \"{kernel}\"")).expect("options"),
    };
    let timed = prepare(&spec("se + periodic(fix=period)"), &data, &ctx).expect("prepares");
    let c = timed
        .model
        .composed
        .as_ref()
        .expect("the expression's kernel");
    assert!(c.expression().starts_with("se(var="), "{}", c.expression());
    assert!(c.expression().contains("periodic("), "{}", c.expression());
    let plain = prepare(&spec("se"), &data, &ctx).expect("prepares");
    assert!(plain.model.composed.is_none());
}
