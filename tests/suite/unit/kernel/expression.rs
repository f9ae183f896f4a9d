use sgpw::kernel::expression::*;

fn part(e: &KernelExpr) -> &Part {
    match e {
        KernelExpr::Part(p) => p,
        other => panic!("not a part: {other:?}"),
    }
}

/// The tree with every span zeroed: the same expression written differently.
fn without_spans(e: KernelExpr) -> KernelExpr {
    let zero = Span { start: 0, end: 0 };
    match e {
        KernelExpr::Sum(v) => KernelExpr::Sum(v.into_iter().map(without_spans).collect()),
        KernelExpr::Product(v) => KernelExpr::Product(v.into_iter().map(without_spans).collect()),
        KernelExpr::Part(p) => KernelExpr::Part(Part {
            span: zero,
            kernels: p.kernels.into_iter().map(without_spans).collect(),
            args: p
                .args
                .into_iter()
                .map(|a| Arg { span: zero, ..a })
                .collect(),
            ..p
        }),
    }
}

#[test]
fn reads_the_issues_example_with_precedence_and_positions() {
    let text =
        "se(ls=50, var=2500) + se(ls=100) * periodic(period=1, fix=period) + rq + se(ls=0.1)";
    let e = KernelExpr::parse(text).unwrap();
    let KernelExpr::Sum(terms) = &e else {
        panic!("{e:?}")
    };
    assert_eq!(terms.len(), 4);
    let KernelExpr::Product(f) = &terms[1] else {
        panic!("{:?}", terms[1])
    };
    let periodic = part(&f[1]);
    assert_eq!(periodic.name, "periodic");
    assert_eq!(periodic.args[1].key, "fix");
    assert_eq!(periodic.args[1].value, Value::Name("period".into()));
    // spans are character positions into the text
    let s = periodic.span;
    assert_eq!(
        text.chars()
            .skip(s.start)
            .take(s.end - s.start)
            .collect::<String>(),
        "periodic(period=1, fix=period)"
    );
    assert_eq!(part(&terms[2]).args, vec![]);
    assert_eq!(part(&terms[0]).args[1].value, Value::Number(2500.0));
    assert_eq!(e.parts().len(), 5);
    assert_eq!(e.summands().len(), 4);
    // the canonical form reads back to the same tree
    assert_eq!(e.to_string(), text);
    assert_eq!(KernelExpr::parse(&e.to_string()).unwrap(), e);
}

#[test]
fn lists_strings_signs_exponents_and_parentheses() {
    let e = KernelExpr::parse(
        "matern32(dims=[0, 1, 2]) * (se(dims=['x 3', y4]) + linear(var=1e-3, offset=-2.5E+1))",
    )
    .unwrap();
    let KernelExpr::Product(f) = &e else {
        panic!("{e:?}")
    };
    assert!(matches!(f[1], KernelExpr::Sum(_)));
    assert_eq!(
        part(&f[0]).args[0].value,
        Value::List(vec![
            Value::Number(0.0),
            Value::Number(1.0),
            Value::Number(2.0)
        ])
    );
    let KernelExpr::Sum(s) = &f[1] else {
        unreachable!()
    };
    assert_eq!(
        part(&s[0]).args[0].value,
        Value::List(vec![Value::Name("x 3".into()), Value::Name("y4".into())])
    );
    assert_eq!(part(&s[1]).args[0].value, Value::Number(1e-3));
    assert_eq!(part(&s[1]).args[1].value, Value::Number(-25.0));
    // the parentheses come back where the tree needs them, and only there
    let text = e.to_string();
    assert_eq!(
        text,
        "matern32(dims=[0, 1, 2]) * (se(dims=[\"x 3\", y4]) + linear(var=0.001, offset=-25))"
    );
    assert_eq!(
        without_spans(KernelExpr::parse(&text).unwrap()),
        without_spans(e)
    );
    assert_eq!(KernelExpr::parse("(se)").unwrap().to_string(), "se");
    let tiny = KernelExpr::parse("white(var=1e-300)").unwrap();
    assert_eq!(tiny.to_string(), "white(var=1e-300)");
}

#[test]
fn a_part_takes_kernels_before_its_keywords_and_writes_them_back() {
    let text = "changepoints(se(ls=1), se(ls=5) * periodic, (rq + white), locations=[1990, 2000], \
                    steepness=1) + linear";
    let e = KernelExpr::parse(text).unwrap();
    let KernelExpr::Sum(terms) = &e else {
        panic!("{e:?}")
    };
    let cp = part(&terms[0]);
    assert_eq!(cp.name, "changepoints");
    assert_eq!(cp.kernels.len(), 3);
    assert!(matches!(cp.kernels[1], KernelExpr::Product(_)));
    assert!(matches!(cp.kernels[2], KernelExpr::Sum(_)));
    assert_eq!(cp.args[0].key, "locations");
    // reading order: the combining part, then its kernels' parts, then the rest
    let names: Vec<&str> = e.parts().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "changepoints",
            "se",
            "se",
            "periodic",
            "rq",
            "white",
            "linear"
        ]
    );
    // the kernels' own spans point into the text
    let se2 = e.parts()[2].span;
    assert_eq!(
        text.chars()
            .skip(se2.start)
            .take(se2.end - se2.start)
            .collect::<String>(),
        "se(ls=5)"
    );
    let written = e.to_string();
    assert_eq!(
        written,
        "changepoints(se(ls=1), se(ls=5) * periodic, rq + white, locations=[1990, 2000], \
             steepness=1) + linear"
    );
    assert_eq!(
        without_spans(KernelExpr::parse(&written).unwrap()),
        without_spans(e)
    );
    // a bare kernel name and a kernel in parentheses are kernels, not keys
    let bare = KernelExpr::parse("changepoints(se, (rq))").unwrap();
    assert_eq!(bare.to_string(), "changepoints(se, rq)");
}

#[test]
fn errors_point_into_the_expression() {
    let cases = [
        ("", 0, "empty"),
        ("se +", 4, "ends where a kernel"),
        ("se + * rq", 5, "'*' where a kernel"),
        ("se(ls=)", 6, "')' where a value"),
        ("se(ls 2)", 6, "'=' after ls"),
        ("se(ls=1 var=2)", 8, "'v' where ',' or ')'"),
        ("se(ls=1, ls=2)", 9, "ls is given twice"),
        ("se(ls=1e)", 6, "'1e' is not a finite number"),
        ("(se + rq", 0, "'(' is not closed"),
        ("se) + rq", 2, "')' without its '('"),
        ("se rq", 3, "'r' where '+', '*' or the end"),
        ("se(dims=[0, 1)", 8, "'[' is not closed"),
        ("se(dims=\"x)", 8, "quote is not closed"),
        ("se(ls=1", 0, "not closed with ')'"),
        (
            "changepoints(se, locations=1, rq)",
            30,
            "comes before its key=value",
        ),
        (
            "changepoints(se, 2)",
            17,
            "must be key=value (e.g. ls=0.5) or a kernel",
        ),
        ("changepoints(se + , se)", 18, "',' where a kernel"),
    ];
    for (text, at, words) in cases {
        let err = KernelExpr::parse(text).unwrap_err();
        assert_eq!(err.span.start, at, "{text}: {err:?}");
        assert!(err.message.contains(words), "{text}: {}", err.message);
    }
    let shown = KernelExpr::parse("se + * rq")
        .unwrap_err()
        .render("se + * rq");
    assert_eq!(
        shown,
        "'*' where a kernel was expected (at character 6)\n  se + * rq\n       ^"
    );
}
