use nalgebra::DMatrix;
use sgpw::exec::Par;
use sgpw::kernel::Kernel;
use sgpw::kernel::build::*;
use sgpw::kernel::expression::KernelExpr;

fn start(columns: &[&str]) -> Start {
    let d = columns.len();
    Start {
        columns: columns.iter().map(|c| c.to_string()).collect(),
        variance: 4.0,
        lengthscales: (0..d).map(|i| 1.0 + i as f64).collect(),
        periods: vec![1.0; d],
        mean_squares: vec![2.0; d],
    }
}

fn built(text: &str, s: &Start) -> Box<dyn Kernel> {
    build(&KernelExpr::parse(text).expect("parses"), s).expect("builds")
}

fn names(k: &dyn Kernel) -> Vec<String> {
    k.blocks().into_iter().map(|b| b.name).collect()
}

#[test]
fn the_issues_example_builds_with_its_values_labels_and_fixed_period() {
    let s = start(&["t"]);
    let k = built(
        "se(ls=50, var=2500) + se(ls=100) * periodic(period=1, fix=period) + rq + se(ls=0.1)",
        &s,
    );
    assert_eq!(
        names(&*k),
        [
            "se1.var",
            "se1.ls",
            "se2.var",
            "se2.ls",
            "periodic.ls",
            "rq.var",
            "rq.ls",
            "rq.alpha",
            "se3.var",
            "se3.ls"
        ]
    );
    let vals: Vec<Vec<f64>> = k.blocks().into_iter().map(|b| b.values).collect();
    // values given; the rest: a quarter of the variance each, ℓ from the start
    assert_eq!(vals[0], [2500.0]);
    assert_eq!(vals[1], [50.0]);
    assert_eq!(vals[2], [1.0]);
    assert_eq!(vals[5], [1.0]);
    assert_eq!(vals[6], [1.0]);
    assert_eq!(k.params_len(), 10);
    // the written form has every value, and the product's fixed scale
    assert_eq!(
        k.to_expr().expect("writable").to_string(),
        "se(var=2500, ls=50) + se(var=1, ls=100) * periodic(var=1, ls=1, period=1, fix=[var, period]) \
             + rq(var=1, ls=1, alpha=1) + se(var=1, ls=0.1)"
    );
}

/// Built, written with its values, read and built again: the same kernel.
#[test]
fn every_part_writes_and_reads_back_to_the_same_kernel() {
    let s = start(&["a", "b", "c"]);
    let text = "matern32(dims=[0, 1], ls=[0.5, 2]) * se(dims=[c]) + linear + polynomial(degree=3) \
                    + constant + white(var=0.1) + spectral_mixture(q=2) \
                    + periodic(base=rq, dims=[b], fix=ls) + matern12 + matern52(fix=[var, ls]) \
                    + changepoints(rq(dims=[a]), se * constant, locations=0.2, dims=[b])";
    let k = built(text, &s);
    let mut k = k;
    let theta: Vec<f64> = k
        .log_params()
        .iter()
        .enumerate()
        .map(|(i, t)| t + 0.1 * (i as f64).sin())
        .collect();
    k.set_log_params(&theta);
    let written = k.to_expr().expect("writable").to_string();
    let again = built(&written, &s);
    assert_eq!(again.to_expr().expect("writable").to_string(), written);
    assert_eq!(names(&*again), names(&*k));
    assert_eq!(again.log_params(), k.log_params());
    let x = DMatrix::from_fn(6, 3, |i, j| ((i * 3 + j) as f64 * 0.37).sin());
    assert_eq!(again.gram(&x, Par::Seq), k.gram(&x, Par::Seq));
    assert!(!names(&*k).contains(&"periodic.ls".to_string()));
    assert!(!names(&*k).iter().any(|n| n.starts_with("matern52")));
}

#[test]
fn change_points_build_with_their_kernels_labels_and_fixes() {
    let s = start(&["year"]);
    let text = "changepoints(se(ls=1), se(ls=5), locations=[1990], steepness=2)";
    let k = built(text, &s);
    assert_eq!(
        names(&*k),
        [
            "se1.var",
            "se1.ls",
            "se2.var",
            "se2.ls",
            "changepoints.locations",
            "changepoints.steepness"
        ]
    );
    let vals: Vec<Vec<f64>> = k.blocks().into_iter().map(|b| b.values).collect();
    // each kernel the whole variance where it holds; the values given
    assert_eq!(vals[0], [4.0]);
    assert_eq!(vals[3], [5.0]);
    assert_eq!(vals[4], [1990.0]);
    assert_eq!(vals[5], [2.0]);
    assert_eq!(
        k.to_expr().expect("writable").to_string(),
        "changepoints(se(var=4, ls=1), se(var=4, ls=5), locations=1990, steepness=2)"
    );
    // the steepness defaults to 1/ℓ of the input it switches along
    let k = built("changepoints(se, se, locations=0)", &s);
    assert_eq!(k.blocks()[5].values, [1.0]);
    // --fix by path: the location held at the value given
    let expr = KernelExpr::parse(text).expect("parses");
    assert_eq!(
        paths(&expr),
        [
            "changepoints.locations",
            "changepoints.steepness",
            "se1.var",
            "se1.ls",
            "se2.var",
            "se2.ls"
        ]
    );
    let fixes = [
        sgpw::fix::Fix {
            name: "changepoints.locations".into(),
            value: Some(1991.5),
        },
        sgpw::fix::Fix {
            name: "se2.ls".into(),
            value: None,
        },
    ];
    let fixed = with_fixes(&expr, &fixes).expect("paths");
    assert_eq!(
        fixed.to_string(),
        "changepoints(se(ls=1), se(ls=5, fix=[ls]), locations=1991.5, steepness=2, \
             fix=[locations])"
    );
    let k = built(&fixed.to_string(), &s);
    assert_eq!(
        names(&*k),
        ["se1.var", "se1.ls", "se2.var", "changepoints.steepness"]
    );
    // on two inputs it names the one it switches along, and writes it back
    let s2 = start(&["t", "u"]);
    let k = built("changepoints(se(dims=[t]), se, locations=1, dims=[u])", &s2);
    let x = DMatrix::from_fn(5, 2, |i, j| ((i * 2 + j) as f64 * 0.9).sin() * 3.0);
    let written = k.to_expr().expect("writable").to_string();
    assert!(
        written.ends_with("locations=1, steepness=0.5, dims=[1])"),
        "{written}"
    );
    assert_eq!(
        built(&written, &s2).gram(&x, Par::Seq),
        k.gram(&x, Par::Seq)
    );
    let cases = [
        (
            "changepoints(se, se)",
            0,
            "needs locations=[…]: 1 for 2 kernels",
        ),
        ("changepoints(se, locations=1)", 0, "two or more kernels"),
        (
            "changepoints(se, se, locations=[1, 2])",
            21,
            "locations has 2 values here and needs 1",
        ),
        (
            "changepoints(se, se, locations=0, steepness=-1)",
            34,
            "steepness must be positive",
        ),
        (
            "changepoints(se, sqexp, locations=0)",
            17,
            "no kernel part is called sqexp",
        ),
        (
            "changepoints(se, se, locations=0, fix=ls)",
            34,
            "changepoints has no parameter ls to fix",
        ),
    ];
    for (text, at, words) in cases {
        let err = build(&KernelExpr::parse(text).expect("parses"), &s).expect_err(text);
        assert_eq!(err.span.start, at, "{text}: {err:?}");
        assert!(err.message.contains(words), "{text}: {}", err.message);
    }
}

#[test]
fn errors_point_at_the_part_or_argument() {
    let s = start(&["t", "u"]);
    let cases = [
        ("se + sqexp", 5, "no kernel part is called sqexp"),
        ("se(lengthscale=2)", 3, "se takes no argument lengthscale"),
        (
            "se(ls=[1, 2, 3])",
            3,
            "ls has 3 values here and needs 1 or 2",
        ),
        ("rq(alpha=-1)", 3, "alpha must be positive"),
        (
            "periodic(fix=offset)",
            9,
            "periodic has no parameter offset",
        ),
        (
            "se + linear(dims=[2])",
            12,
            "dims names 2, which is not an input",
        ),
        ("se(dims=[w])", 3, "dims names w"),
        ("polynomial(degree=1.5)", 11, "degree takes a whole number"),
        ("se(rq, ls=1)", 3, "se takes no kernel"),
        (
            "changepoints(se, se, locations=0)",
            0,
            "name it with dims=[…] (one of t, u)",
        ),
        (
            "changepoints(se, se, locations=0, dims=[t, u])",
            34,
            "give dims one input",
        ),
        ("periodic(alpha=2)", 9, "give base=rq"),
    ];
    for (text, at, words) in cases {
        let err = build(&KernelExpr::parse(text).expect("parses"), &s).expect_err(text);
        assert_eq!(err.span.start, at, "{text}: {err:?}");
        assert!(err.message.contains(words), "{text}: {}", err.message);
    }
}
