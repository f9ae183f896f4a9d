mod axis;
mod comparison;
mod evidence;
mod palette;
mod prediction;

use sgpw::chart::*;

/// Labels break before their separators, so a longer label never reads as a shorter
/// one cut; a piece longer than a line is cut; nothing of the label is lost.
#[test]
fn labels_wrap_whole() {
    assert_eq!(wrap_label("fitc-std", 8), ["fitc-std"]);
    assert_eq!(wrap_label("fitc-std-val0.1", 8), ["fitc-std", "-val0.1"]);
    assert_eq!(wrap_label("abcdefghijk", 4), ["abcd", "efgh", "ijk"]);
    assert_eq!(wrap_label("a-bcdefghij", 4), ["a", "-bcd", "efgh", "ij"]);
    assert_eq!(wrap_label("", 4), [""]);
    assert_eq!(
        wrap_label("inducing points (small: large h)", 16),
        ["inducing points", "(small: large h)"]
    );
    for (label, w) in [("spgp-hs-m20-val0.25-es", 6), ("x_y.z/w", 2)] {
        let lines = wrap_label(label, w);
        assert_eq!(lines.concat(), label);
        assert!(lines.iter().all(|l| l.chars().count() <= w), "{lines:?}");
    }
}

/// Labels come in registry order of their methods, each once; with the palette, the
/// methods the old hue-by-registry-position palette coloured alike (vfe and ssgp,
/// fitc and psds) now differ.
#[test]
fn labels_in_method_order_with_distinct_hues() {
    let runs = [
        ("ssgp", "ssgp"),
        ("fitc", "fitc-std-val0.1"),
        ("vfe", "vfe"),
        ("fitc", "fitc-std"),
        ("psds", "psds"),
        ("fitc", "fitc-std"),
    ];
    let order = label_order(runs);
    assert_eq!(order.len(), 5, "{order:?}");
    let pos = |l: &str| order.iter().position(|o| o == l).expect("label");
    assert!(pos("fitc-std") < pos("fitc-std-val0.1"));
    assert!(method_index("fitc") < method_index("ssgp"));
    assert!(pos("fitc-std-val0.1") < pos("ssgp"));
    let hues: Vec<_> = order
        .iter()
        .map(|l| sgpw::chart::palette::hue(pos(l)).xterm)
        .collect();
    let mut u = hues.clone();
    u.sort();
    u.dedup();
    assert_eq!(u.len(), hues.len(), "{order:?} {hues:?}");
}
