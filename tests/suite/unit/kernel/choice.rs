use clap::ValueEnum;
use sgpw::kernel::KernelKind;
use sgpw::kernel::choice::*;

#[test]
fn plain_names_are_plain_and_expressions_are_checked() {
    for kind in KernelKind::value_variants() {
        let c: KernelChoice = kind.name().parse().expect("a name");
        assert_eq!(c, KernelChoice::Plain(*kind));
        assert_eq!(c.to_string(), kind.name());
    }
    let c: KernelChoice = " se + periodic ".parse().expect("an expression");
    assert_eq!(c, KernelChoice::Expr("se + periodic".into()));
    let e = "se + ".parse::<KernelChoice>().unwrap_err();
    assert!(e.contains('^'), "{e}");
    // a misspelt name is refused when read, naming the plain kernels and the parts
    let e = "matern".parse::<KernelChoice>().unwrap_err();
    assert!(e.contains("matern52") && e.contains("periodic"), "{e}");
}

#[test]
fn checked_gives_the_canonical_form_and_with_inputs_the_builds_caret() {
    assert_eq!(KernelChoice::checked(" rq ", None).unwrap(), "rq");
    assert_eq!(
        KernelChoice::checked("se(ls=1.50)+linear*  white", None).unwrap(),
        "se(ls=1.5) + linear * white"
    );
    // without the inputs only the syntax and the part names are checked
    assert!(KernelChoice::checked("se(lengthscale=2)", None).is_ok());
    let cols = ["t".to_string(), "u".to_string()];
    let e = KernelChoice::checked("se + se(lengthscale=2)", Some(&cols)).unwrap_err();
    assert!(e.contains("se takes no argument lengthscale"), "{e}");
    // the caret under `lengthscale=2`, as the fit's message draws it
    let caret = format!("\n{}{}", " ".repeat(2 + 8), "^".repeat(13));
    assert!(e.ends_with(&caret), "{e}");
    let e = KernelChoice::checked("se(dims=[v])", Some(&cols)).unwrap_err();
    assert!(e.contains("dims names v"), "{e}");
    assert_eq!(
        KernelChoice::checked("se(dims=[u], ls=2)", Some(&cols)).unwrap(),
        "se(dims=[u], ls=2)"
    );
    let e = KernelChoice::checked("se +", Some(&cols)).unwrap_err();
    assert!(e.contains('^'), "{e}");
}

#[test]
fn parts_lists_every_part_build_reads() {
    let parts = KernelChoice::parts();
    assert!(parts.iter().any(|p| p.name == "periodic"
        && p.args.contains(&"period")
        && p.fixable.contains(&"period")));
    for p in &parts {
        // each part builds alone on one input (change points with the kernels and
        // the locations they need)
        let cols = ["x".to_string()];
        let text = match p.name {
            "changepoints" => "changepoints(se, se, locations=0)",
            name => name,
        };
        KernelChoice::checked(text, Some(&cols)).expect(p.name);
        for f in p.fixable {
            assert!(p.args.contains(f), "{}: fix={f}", p.name);
        }
    }
}
