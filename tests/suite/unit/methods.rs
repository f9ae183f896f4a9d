mod cost;
mod exact;
mod hyper;
mod inducing;
mod interdomain;
mod kmeans;
mod method;
mod pca;
mod pseudo;
mod start;
mod svgp;

use sgpw::methods::*;
use sgpw::run_spec::RunSpec;
use sgpw::run_spec::{GENERAL_OPTIONS, MethodOptions, option_fields};

/// Each method's option list names declared options only, and every declared
/// option is read by some method (the declaration and the methods cannot drift).
#[test]
fn option_lists_match_the_declaration() {
    let declared: Vec<String> = option_fields().into_iter().map(|f| f.key).collect();
    for m in registry() {
        for key in m.options() {
            assert!(declared.iter().any(|d| d == key), "{}: {key}", m.name());
        }
    }
    for key in &declared {
        assert!(
            GENERAL_OPTIONS.contains(&key.as_str())
                || registry()
                    .iter()
                    .any(|m| m.options().contains(&key.as_str())),
            "{key} is read by no method"
        );
    }
}

#[test]
fn names_and_aliases_are_unique() {
    let mut seen = std::collections::HashSet::new();
    for m in registry() {
        for n in std::iter::once(m.name()).chain(m.aliases().iter().copied()) {
            assert!(seen.insert(n), "{n} twice");
        }
    }
}

#[test]
fn specs_are_checked_before_any_work() {
    let spec = |method: &str, m: usize, options: MethodOptions| RunSpec {
        method: method.into(),
        m,
        seed: 1,
        iters: 10,
        standardize: false,
        options,
    };
    assert!(spec("fitc", 10, Default::default()).check(100).is_ok());
    let e = spec("fitc", 101, Default::default())
        .check(100)
        .expect_err("m > n");
    assert!(e.to_string().contains("m = 101"), "{e}");
    let e = spec("ssgp", 5000, Default::default())
        .check(usize::MAX)
        .expect_err("spectral bound");
    assert!(e.to_string().contains("limit"), "{e}");
    let centres = MethodOptions {
        centres: Some(sgpw::run_spec::Centres::Subset),
        ..Default::default()
    };
    let e = spec("fitc", 10, centres)
        .check(100)
        .expect_err("not fitc's");
    assert!(e.to_string().contains("--centres"), "{e}");
    let alpha = MethodOptions {
        alpha: Some(0.0),
        ..Default::default()
    };
    assert!(spec("pep", 10, alpha).check(100).is_err());
}
