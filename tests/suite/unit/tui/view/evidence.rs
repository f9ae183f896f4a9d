use ratatui::text::Line;
use ratatui::text::Span;
use sgpw::tui::view::evidence::*;

fn text(line: &Line) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

fn group(label: &str, ms: &[usize]) -> Vec<Item> {
    let mut g = vec![(Span::raw(format!(" {label} m:")), 0)];
    g.extend(ms.iter().map(|m| (Span::raw(format!(" ━{m}")), 1)));
    g
}

/// A legend that fits is shown whole; one that does not ends in "+N more", and the
/// runs it names plus N are all the runs.
#[test]
fn a_cut_legend_counts_the_runs_it_leaves_out() {
    let groups = || {
        vec![
            group("fitc-std", &[5, 10, 20]),
            group("fitc-std-val0.1", &[5, 10, 20]),
            group("vfe", &[5, 10, 20]),
            group("ssgp", &[5, 10, 20]),
        ]
    };
    let whole = fit_legend(wrap_legend(groups(), 200), 3, 200);
    assert_eq!(whole.len(), 1);
    assert!(!text(&whole[0]).contains("more"), "{}", text(&whole[0]));
    let lines = wrap_legend(groups(), 30);
    assert!(lines.len() > 2, "{lines:?}");
    let shown = fit_legend(lines, 2, 30);
    assert_eq!(shown.len(), 2);
    let last = text(&shown[1]);
    let named = shown
        .iter()
        .map(|l| text(l).matches('━').count())
        .sum::<usize>();
    let more: usize = last
        .split(" +")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no \"+N more\" in {last:?}"));
    assert_eq!(named + more, 12, "{last:?}");
    assert!(shown.iter().all(|l| l.width() <= 30), "{shown:?}");
    // no room at all: nothing, rather than a cut line
    assert!(fit_legend(wrap_legend(groups(), 30), 0, 30).is_empty());
}
