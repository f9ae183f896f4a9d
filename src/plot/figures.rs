//! The charts as figures: the series of [`crate::chart`] turned into what
//! [`super::lines`] and [`super::prediction`] draw, with the app's titles and legends
//! (the whole label; m, and the seed where a label and m have several). `sgpw plot` and
//! the app's `P` key both come here.

use super::lines::{LineFigure, Series};
use crate::chart::Metric;
use crate::chart::comparison::Point;
use crate::chart::evidence::RunCurve;

/// A run's legend text: its label and m, and its seed where `curves` holds another run
/// of the same label and m.
fn run_label(c: &RunCurve, curves: &[RunCurve]) -> String {
    let same = curves
        .iter()
        .filter(|o| o.key.label == c.key.label && o.key.m == c.key.m)
        .count();
    if same > 1 {
        format!("{} m={} seed {}", c.key.label, c.key.m, c.key.seed)
    } else {
        format!("{} m={}", c.key.label, c.key.m)
    }
}

/// What a step of the x axis counts, over the methods of `curves` ("iteration", or
/// greedy's "basis point").
fn unit(curves: &[RunCurve]) -> String {
    let mut units: Vec<&str> = Vec::new();
    for c in curves {
        let u = crate::methods::get(&c.method).map_or("iteration", |m| m.progress_unit());
        if !units.contains(&u) {
            units.push(u);
        }
    }
    if units.is_empty() {
        "iteration".into()
    } else {
        units.join(" / ")
    }
}

/// Evidence: the objective against iteration, one curve per run; beside a noisy trace
/// (svgp) its full-data objective as a marked curve of the same hue, and along the
/// curve of a run that grows or prunes its model (rvm) the model's size where it
/// changes, at most about 8 times.
pub fn evidence(curves: &[RunCurve], dataset: &str, note: Option<String>) -> LineFigure {
    let unit = unit(curves);
    let mut series = Vec::new();
    let mut annotations = Vec::new();
    for c in curves.iter().filter(|c| !c.objective.is_empty()) {
        let label = match c.last_size() {
            Some(size) => format!("{} ({size} {})", run_label(c, curves), c.size_name),
            None => run_label(c, curves),
        };
        let noisy = !c.full.is_empty();
        series.push(Series {
            label: if noisy && c.smoothed > 1 {
                format!("{label}: minibatch estimate, mean of {} steps", c.smoothed)
            } else if noisy {
                format!("{label}: minibatch estimate")
            } else {
                label
            },
            index: c.series,
            points: c.objective.clone(),
            errors: Vec::new(),
            mark_all: false,
            faint: noisy,
        });
        if noisy {
            series.push(Series {
                label: format!("{}: on all the training data", run_label(c, curves)),
                index: c.series,
                points: c.full.clone(),
                errors: Vec::new(),
                mark_all: c.full.len() <= 30,
                faint: false,
            });
        }
        annotations.extend(size_annotations(c));
    }
    let note = match (note, annotations.is_empty()) {
        (note, true) => note,
        (None, false) => Some("numbers along a curve: the model's size there".into()),
        (Some(n), false) => Some(format!("{n}; numbers along a curve: the model's size")),
    };
    LineFigure {
        title: format!("Evidence on {dataset}: NLML vs {unit}"),
        x_desc: unit,
        y_desc: "NLML".into(),
        x_log: false,
        y_log: false,
        series,
        reference: None,
        marks: Vec::new(),
        marks_label: String::new(),
        annotations,
        y_skips_start: true,
        note,
    }
}

/// The model's size written on a run's objective curve at 8 evenly spaced iterations
/// (the size reached there), where it differs from the one written before.
fn size_annotations(c: &RunCurve) -> Vec<((f64, f64), String)> {
    let Some(last) = c.objective.last().map(|p| p.0) else {
        return Vec::new();
    };
    let mut out: Vec<((f64, f64), String)> = Vec::new();
    let mut written = None;
    for k in 0..8 {
        let it = last * k as f64 / 7.0;
        let size = c.sizes.iter().take_while(|p| p.0 <= it).last().map(|p| p.1);
        let at = c.objective.iter().find(|p| p.0 >= it);
        if let (Some(size), Some(at)) = (size, at)
            && written != Some(size)
        {
            out.push((*at, format!("{size:.0}")));
            written = Some(size);
        }
    }
    out
}

/// Validation: the validation score against iteration per run that scored one, the
/// iterate early stopping kept ringed.
pub fn validation(
    curves: &[RunCurve],
    dataset: &str,
    metric: Metric,
    note: Option<String>,
) -> LineFigure {
    let with: Vec<&RunCurve> = curves.iter().filter(|c| !c.validation.is_empty()).collect();
    let marks = with
        .iter()
        .filter_map(|c| {
            let best = c.best_iteration? as f64;
            c.validation.iter().find(|p| p.0 == best).copied()
        })
        .collect();
    LineFigure {
        title: format!("Validation on {dataset}: {} vs iteration", metric.name()),
        x_desc: unit(curves),
        y_desc: format!("validation {}", metric.name()),
        x_log: false,
        y_log: metric == Metric::Nmse,
        series: with
            .iter()
            .map(|c| Series {
                label: run_label(c, curves),
                index: c.series,
                points: c.validation.clone(),
                errors: Vec::new(),
                mark_all: c.validation.len() <= 30,
                faint: false,
            })
            .collect(),
        reference: None,
        marks,
        marks_label: "early stop: the iterate kept".into(),
        annotations: Vec::new(),
        y_skips_start: false,
        note,
    }
}

/// Comparison: `metric` against m (log) per label, mean over seeds with ±1 standard
/// error bars, the constant predictor as a dashed reference line.
pub fn comparison(
    points: &[Point],
    labels: &[(usize, String)],
    constant: Option<f64>,
    dataset: &str,
    metric: Metric,
    note: Option<String>,
) -> LineFigure {
    let seeds = points.iter().map(|p| p.seeds).max().unwrap_or(1);
    // a classifier's first score is its error rate (linear), a count model's RMSE
    let first = crate::chart::comparison::headline(points);
    let name = match metric {
        Metric::Nmse => first.long_name(),
        Metric::Mnlp if first == crate::results::Headline::ErrorRate => "NLP",
        Metric::Mnlp => "MNLP",
    };
    LineFigure {
        title: format!("Comparison on {dataset}: test {name} vs m"),
        x_desc: "m (log)".into(),
        y_desc: if metric == Metric::Nmse && first.log_scale() {
            format!("test {name} (log)")
        } else {
            format!("test {name}")
        },
        x_log: true,
        y_log: metric == Metric::Nmse && first.log_scale(),
        series: labels
            .iter()
            .map(|(k, label)| {
                let mine: Vec<&Point> = points.iter().filter(|p| &p.label == label).collect();
                Series {
                    label: label.clone(),
                    index: *k,
                    points: mine
                        .iter()
                        .map(|p| (p.m as f64, p.value(metric).0))
                        .collect(),
                    errors: mine.iter().map(|p| p.value(metric).1).collect(),
                    mark_all: true,
                    faint: false,
                }
            })
            .collect(),
        reference: constant.map(|v| ("constant predictor".to_string(), v)),
        marks: Vec::new(),
        marks_label: String::new(),
        annotations: Vec::new(),
        y_skips_start: false,
        note: note.or_else(|| {
            (seeds > 1).then(|| format!("mean over up to {seeds} seeds, bars ±1 standard error"))
        }),
    }
}
