//! What a chart shows, apart from how it is drawn: the series (which runs, means and
//! standard errors over seeds, the constant predictor, the predictive bands), their
//! order, palette and labels, shared by the app's terminal charts and the figures of
//! `sgpw plot`: one function computes a chart's series, and both draw them.

pub mod axis;
pub mod comparison;
pub mod components;
pub mod evidence;
pub mod markers;
pub mod observed;
pub mod palette;
pub mod prediction;
pub mod prob_map;

use crate::results::ValidationPoint;

/// The test (or validation) score a chart shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    Nmse,
    Mnlp,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Nmse => "NMSE",
            Metric::Mnlp => "MNLP",
        }
    }

    /// A validation point's score in this metric.
    pub fn of_validation(self, p: &ValidationPoint) -> f64 {
        match self {
            Metric::Nmse => p.nmse,
            Metric::Mnlp => p.mnlp,
        }
    }
}

/// A label or caption in lines of at most `w` columns (display width), broken before a
/// space, `-`, `_`, `.` or `/` where it can be and cut where it cannot, so that the
/// whole label shows: `fitc-std-val0.1` in 8 columns is `fitc-std` and `-val0.1`, and
/// never reads as `fitc-std`. A space a line breaks at is dropped.
pub fn wrap_label(label: &str, w: usize) -> Vec<String> {
    let width = |s: &str| ratatui::text::Span::raw(s).width();
    let w = w.max(1);
    let mut pieces: Vec<String> = Vec::new();
    for c in label.chars() {
        match pieces.last_mut() {
            Some(p) if !matches!(c, ' ' | '-' | '_' | '.' | '/') => p.push(c),
            _ => pieces.push(c.to_string()),
        }
    }
    let mut lines: Vec<String> = vec![String::new()];
    for mut piece in pieces {
        while !piece.is_empty() {
            let n = lines.len();
            let line = lines.last_mut().expect("at least one line");
            if line.is_empty() && n > 1 && piece.starts_with(' ') {
                piece.remove(0);
                continue;
            }
            if width(line) + width(&piece) <= w {
                line.push_str(&piece);
                break;
            }
            if !line.is_empty() {
                lines.push(String::new());
                continue;
            }
            let mut cut = String::new();
            for c in piece.chars() {
                let mut next = cut.clone();
                next.push(c);
                if width(&next) > w && !cut.is_empty() {
                    break;
                }
                cut = next;
            }
            piece = piece[cut.len()..].to_string();
            *line = cut;
            lines.push(String::new());
        }
    }
    if lines.len() > 1 && lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

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
