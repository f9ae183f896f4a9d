//! What a chart shows, apart from how it is drawn: the palette and the order of the
//! series, shared by the app's terminal charts and the figures of `sgpw plot`.

pub mod palette;

/// Registry position of a method (the order series are listed in); unknown methods
/// after the rest.
pub fn method_index(method: &str) -> usize {
    let reg = crate::methods::registry();
    reg.iter()
        .position(|m| m.name() == method)
        .unwrap_or(reg.len())
}

/// The labels of `runs` (method, label) in series order: by method in registry order,
/// then by label, each once. A label's position is its palette index, so a label has
/// the same colour in the runs table and the comparison chart.
pub fn label_order<'a>(runs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut labels: Vec<(usize, &str)> = runs
        .into_iter()
        .map(|(method, label)| (method_index(method), label))
        .collect();
    labels.sort();
    labels.dedup_by(|a, b| a.1 == b.1);
    let mut out: Vec<String> = Vec::new();
    for (_, l) in labels {
        if !out.iter().any(|o| o == l) {
            out.push(l.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let hues: Vec<_> = order.iter().map(|l| palette::hue(pos(l)).xterm).collect();
        let mut u = hues.clone();
        u.sort();
        u.dedup();
        assert_eq!(u.len(), hues.len(), "{order:?} {hues:?}");
    }
}
