//! Evidence: NLML against iteration, live, one curve per run — run k in the palette's
//! hue k, or without colour with glyph k — and a legend of label and m that says how
//! many runs it leaves out when it does not fit.
//! When shown runs score a validation set, their validation MNLP (or NMSE: v) is drawn
//! under it against the same iterations, so overfitting shows as it happens. During a
//! replay, the replayed run's curves up to the animation's position.
//! A run whose trace is a noisy estimate (svgp's minibatch ELBO) also has its periodic
//! full-data objective drawn as marked points in its hue; a run that grows or prunes
//! its model (rvm) has its size in the legend and, when no run scores a validation
//! set, drawn against the same steps under the evidence.

use super::pane;
use crate::chart::axis;
use crate::tui::format::short;
use crate::tui::state::{App, ChartTab, Metric, SPEEDS};
use crate::tui::theme::Theme;
use crate::tui::widgets::{Curve, LineChart};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// One shown run: how it is told apart, and its curves.
struct Shown {
    label: String,
    m: usize,
    seed: u64,
    color: Color,
    glyph: Option<&'static str>,
    mark: &'static str,
    nlml: Vec<(f64, f64)>,
    validation: Vec<(f64, f64)>,
    /// The full-data objective at some iterations (svgp); empty otherwise.
    full: Vec<(f64, f64)>,
    /// The model's size against iteration (rvm), and what it counts.
    sizes: Vec<(f64, f64)>,
    size_name: &'static str,
}

/// The shown runs in legend order (method, label, m, seed) as [`App::evidence_curves`]
/// gives them (about two points per column), run k with hue k (or glyph k); an NMSE
/// validation score on a log scale.
fn shown(app: &App, width: u16) -> Vec<Shown> {
    let t = &app.theme;
    app.evidence_curves(width as usize * 2)
        .into_iter()
        .map(|c| Shown {
            full: c.full,
            sizes: c.sizes,
            size_name: c.size_name,
            label: c.key.label,
            m: c.key.m,
            seed: c.key.seed,
            color: t.series_color(c.series),
            glyph: t.curve_glyph(c.series),
            mark: t.curve_mark(c.series),
            nlml: c.objective,
            validation: c
                .validation
                .into_iter()
                .map(|(x, v)| match app.validation_metric {
                    Metric::Mnlp => (x, v),
                    Metric::Nmse => (x, v.max(1e-300).log10()),
                })
                .collect(),
        })
        .collect()
}

/// A piece of the legend and how many runs it names (a mark names one, a label none).
pub type Item = (Span<'static>, usize);

/// The legend: per label, "label m: ━5 ━10", each mark in its curve's colour; a seed
/// is added where one (label, m) has several ("━5s2"). One item group per label.
fn legend(shown: &[Shown], t: &Theme) -> Vec<Vec<Item>> {
    let mut groups: Vec<Vec<Item>> = Vec::new();
    let mut last_label: Option<&str> = None;
    for s in shown {
        if last_label != Some(&s.label) {
            groups.push(vec![(Span::raw(format!(" {} m:", s.label)), 0)]);
            last_label = Some(&s.label);
        }
        let seeds = shown
            .iter()
            .filter(|o| o.label == s.label && o.m == s.m)
            .count();
        let seed = if seeds > 1 {
            format!("s{}", s.seed)
        } else {
            String::new()
        };
        // the model's size where the fit chose it (rvm: "(7 relevance vectors)")
        let size = match s.sizes.last() {
            Some(p) => format!(" ({} {})", p.1, s.size_name),
            None => String::new(),
        };
        if let Some(g) = groups.last_mut() {
            g.push((
                Span::styled(
                    format!(" {}{}{seed}{size}", s.mark, s.m),
                    ratatui::style::Style::new().fg(t.canvas(s.color)),
                ),
                1,
            ));
        }
    }
    if shown.iter().any(|s| !s.full.is_empty()) {
        groups.push(vec![(Span::raw(" ■ full-data objective"), 0)]);
    }
    groups
}

/// Legend groups laid into lines of at most `width` columns, each line with the number
/// of runs it names.
pub fn wrap_legend(groups: Vec<Vec<Item>>, width: usize) -> Vec<(Vec<Span<'static>>, usize)> {
    let mut lines: Vec<(Vec<Span<'static>>, usize)> = vec![(Vec::new(), 0)];
    let mut used = 0;
    for group in groups {
        for (i, (span, runs)) in group.into_iter().enumerate() {
            let w = span.width();
            if used + w + 1 > width && used > 0 {
                lines.push((Vec::new(), 0));
                used = 0;
            }
            let span = if i == 0 && used > 0 {
                Span::raw(format!(" ·{}", span.content))
            } else {
                span
            };
            used += span.width();
            if let Some(l) = lines.last_mut() {
                l.0.push(span);
                l.1 += runs;
            }
        }
    }
    lines
}

/// At most `rows` legend lines of at most `width` columns. When the legend is longer,
/// the last line shown ends in "+N more" (runs whose curves are drawn but not named),
/// dropping its own last marks as needed to make room.
pub fn fit_legend(
    mut lines: Vec<(Vec<Span<'static>>, usize)>,
    rows: usize,
    width: usize,
) -> Vec<Line<'static>> {
    let finish = |mut l: Vec<Span<'static>>| {
        l.push(Span::raw(" "));
        Line::from(l)
    };
    if lines.len() <= rows {
        return lines.into_iter().map(|(l, _)| finish(l)).collect();
    }
    if rows == 0 {
        return Vec::new();
    }
    let mut hidden: usize = lines[rows..].iter().map(|l| l.1).sum();
    lines.truncate(rows);
    let (last, _) = lines.last_mut().expect("rows > 0");
    loop {
        let more = format!(" +{hidden} more");
        let used: usize = last.iter().map(|s| s.width()).sum();
        if used + more.chars().count() < width || last.is_empty() {
            last.push(Span::raw(more));
            break;
        }
        // a mark names a run; a label head (" label m:" or " · label m:") names none
        if let Some(span) = last.pop()
            && !span.content.ends_with(" m:")
        {
            hidden += 1;
        }
    }
    lines.into_iter().map(|(l, _)| finish(l)).collect()
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let focused = app.chart == ChartTab::Evidence;
    let marked = app.runs.iter().any(|r| r.marked);
    // what a step of the x axis counts: iterations, or greedy's basis points
    let mut units: Vec<&str> = Vec::new();
    for row in &app.evidence_runs() {
        let unit = crate::methods::get(&row.spec.method).map_or("iteration", |m| m.progress_unit());
        if !units.contains(&unit) {
            units.push(unit);
        }
    }
    let unit = if units.is_empty() {
        "iteration".to_string()
    } else {
        units.join(" / ")
    };
    let mut title = match app.comparison_dataset() {
        Some(d) if !marked => format!(" Evidence on {d}: NLML vs {unit} "),
        _ => format!(" Evidence: NLML vs {unit} (marked runs) "),
    };
    if let Some(r) = &app.replay {
        title = format!(
            " Replay {}/{} m={} seed {} · it {:.0} · {} it/s (+/-) ",
            r.key.dataset,
            r.key.label,
            r.key.m,
            r.key.seed,
            r.shown.max(1.0) - 1.0,
            SPEEDS[r.speed.min(SPEEDS.len() - 1)]
        );
    }
    let inner = pane(app, "", focused).inner(area);
    let shown = shown(app, inner.width);
    let nlml: Vec<&[(f64, f64)]> = shown.iter().map(|s| &s.nlml[..]).collect();
    let replay_trace: Option<Vec<(f64, f64)>> = app.replay.as_ref().and_then(|r| {
        app.runs.iter().find(|row| row.key == r.key).map(|row| {
            let trace = app.trace_of(row);
            trace
                .iter()
                .enumerate()
                .map(|(i, v)| (i as f64, *v))
                .collect()
        })
    });
    // a replay's axis holds its whole trace, so the curve grows into it
    let ((lo, hi), cut) = match &replay_trace {
        Some(trace) => axis::objective_range(&[&trace[..]], 0.05),
        None => axis::objective_range(&nlml, 0.05),
    };
    let with_lower = shown
        .iter()
        .any(|s| !s.validation.is_empty() || !s.sizes.is_empty());
    let upper_rows = if with_lower && inner.height >= 10 {
        inner.height * 55 / 100
    } else {
        inner.height
    };
    let nlml_ticks = axis::linear(lo, hi, max_ticks(upper_rows));
    if let Some(note) = &nlml_ticks.note {
        title = title.replacen("NLML", &format!("NLML ({note})"), 1);
    }
    let block = pane(app, title, focused);
    // The legend goes in the bottom border when it fits there, else inside.
    let legend_width = area.width.saturating_sub(2) as usize;
    let mut groups = legend(&shown, t);
    if let Some(top) = cut {
        groups.push(vec![(
            Span::raw(format!(" ↑ starts off the top (to {})", short(top))),
            0,
        )]);
    }
    let lines = wrap_legend(groups, legend_width);
    let in_border = lines.len() == 1;
    let block = if in_border {
        block.title_bottom(fit_legend(lines.clone(), 1, legend_width).remove(0))
    } else {
        block
    };
    frame.render_widget(block, area);
    if shown.is_empty() {
        let msg = if app.runs.is_empty() {
            "no runs yet: n launches some"
        } else {
            "no curves yet: start a run (Enter, g) or mark runs (Space)"
        };
        frame.render_widget(
            Paragraph::new(Line::styled(msg, t.dim())).wrap(ratatui::widgets::Wrap { trim: true }),
            inner,
        );
        return;
    }
    let legend_rows = if in_border {
        0
    } else {
        (lines.len() as u16).min(inner.height / 3).max(1)
    };
    let legend = fit_legend(lines, legend_rows as usize, inner.width as usize);
    let [charts, legend_area] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(legend_rows)]).areas(inner);
    frame.render_widget(Paragraph::new(legend), legend_area);

    let x_max = match &app.replay {
        // A replay keeps its final axis so the curve grows into it.
        Some(r) => app
            .runs
            .iter()
            .find(|row| row.key == r.key)
            .map_or(1, |row| app.trace_of(row).len())
            .saturating_sub(1)
            .max(1) as f64,
        None => shown
            .iter()
            .flat_map(|s| s.nlml.last().into_iter().chain(s.validation.last()))
            .map(|p| p.0)
            .fold(1.0, f64::max),
    };
    // the middle label is the middle's value: 2.5 of 5 iterations, not "2"
    let middle = x_max / 2.0;
    let x_labels = vec![
        "0".to_string(),
        if middle.fract() == 0.0 {
            format!("{middle:.0}")
        } else {
            format!("{middle:.1}")
        },
        format!("{x_max:.0}"),
    ];
    let nlml_labels = LineChart::ticks(&nlml_ticks);
    // Under the evidence: the validation score, else the models' sizes (rvm).
    let lower_kind = if shown.iter().any(|s| !s.validation.is_empty()) {
        Some(Lower::Validation)
    } else if shown.iter().any(|s| !s.sizes.is_empty()) {
        Some(Lower::Sizes)
    } else {
        None
    };
    let Some(lower_kind) = lower_kind.filter(|_| charts.height >= 9) else {
        frame.render_widget(
            chart(
                &shown,
                |s| &s.nlml,
                |s| &s.full,
                [0.0, x_max],
                (lo, hi),
                x_labels,
                nlml_labels,
                0,
                t,
            ),
            charts,
        );
        return;
    };
    // the objective above, the lower panel below, on one x axis (labels under the lower)
    let pick = |s: &Shown| -> Vec<(f64, f64)> {
        match lower_kind {
            Lower::Validation => s.validation.clone(),
            Lower::Sizes => s.sizes.clone(),
        }
    };
    let lowers: Vec<Vec<(f64, f64)>> = shown.iter().map(pick).collect();
    let lower_refs: Vec<&[(f64, f64)]> = lowers.iter().map(|v| &v[..]).collect();
    let (vlo, vhi) = match lower_kind {
        Lower::Validation => axis::objective_range(&lower_refs, 0.05).0,
        Lower::Sizes => {
            let top = lower_refs
                .iter()
                .flat_map(|p| p.iter().map(|q| q.1))
                .fold(1.0, f64::max);
            (0.0, top * 1.05)
        }
    };
    let lower_rows = charts.height.saturating_sub(charts.height * 55 / 100);
    let mut lower_ticks = match (lower_kind, app.validation_metric) {
        (Lower::Validation, Metric::Nmse) => axis::log10(vlo, vhi, max_ticks(lower_rows)),
        _ => axis::linear(vlo, vhi, max_ticks(lower_rows)),
    };
    if lower_kind == Lower::Sizes {
        // a count: whole ticks only
        let (at, labels) = lower_ticks
            .pairs()
            .filter(|(v, _)| v.fract() == 0.0)
            .map(|(v, _)| (v, format!("{v:.0}")))
            .unzip();
        lower_ticks = axis::Ticks {
            at,
            labels,
            note: None,
        };
    }
    let valid_labels = LineChart::ticks(&lower_ticks);
    let lw = LineChart::labels_width(&nlml_labels).max(LineChart::labels_width(&valid_labels));
    let [upper, lower] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Min(4)]).areas(charts);
    frame.render_widget(
        chart(
            &shown,
            |s| &s.nlml,
            |s| &s.full,
            [0.0, x_max],
            (lo, hi),
            Vec::new(),
            nlml_labels,
            lw,
            t,
        ),
        upper,
    );
    let lower_shown: Vec<Shown> = shown
        .iter()
        .zip(lowers)
        .map(|(s, points)| Shown {
            validation: points,
            nlml: Vec::new(),
            full: Vec::new(),
            sizes: Vec::new(),
            label: s.label.clone(),
            ..*s
        })
        .collect();
    frame.render_widget(
        chart(
            &lower_shown,
            |s| &s.validation,
            |s| &s.full,
            [0.0, x_max],
            (vlo, vhi),
            x_labels,
            valid_labels,
            lw,
            t,
        ),
        lower,
    );
    let name = match (lower_kind, app.validation_metric) {
        (Lower::Sizes, _) => {
            let names: Vec<&str> = shown
                .iter()
                .filter(|s| !s.sizes.is_empty())
                .map(|s| s.size_name)
                .collect();
            format!(" {} ", names.first().copied().unwrap_or("size"))
        }
        (Lower::Validation, Metric::Mnlp) => {
            format!(" {} (v: NMSE) ", lower_ticks.describe("validation MNLP"))
        }
        (Lower::Validation, Metric::Nmse) => " validation NMSE, log (v: MNLP) ".to_string(),
    };
    let w = name.chars().count() as u16;
    if lower.width > w + lw + 2 {
        frame.render_widget(
            Line::styled(name, t.title()),
            Rect {
                x: lower.right() - w,
                y: lower.y,
                width: w,
                height: 1,
            },
        );
    }
}

/// What the lower panel shows.
#[derive(Clone, Copy, PartialEq)]
enum Lower {
    Validation,
    Sizes,
}

/// One panel of curves (`points` picks which of a run's).
#[allow(clippy::too_many_arguments)]
fn chart<'a>(
    shown: &'a [Shown],
    points: impl Fn(&'a Shown) -> &'a [(f64, f64)],
    marked: impl Fn(&'a Shown) -> &'a [(f64, f64)],
    x_bounds: [f64; 2],
    (lo, hi): (f64, f64),
    x_labels: Vec<String>,
    y_labels: Vec<(f64, String)>,
    label_width: u16,
    t: &Theme,
) -> LineChart<'a> {
    LineChart {
        curves: shown
            .iter()
            .map(|s| Curve {
                points: points(s),
                color: t.canvas(s.color),
                glyph: s.glyph,
                mark_points: false,
            })
            // the run's points marked on their own (svgp's full-data objective)
            .chain(
                shown
                    .iter()
                    .filter(|s| !marked(s).is_empty())
                    .map(|s| Curve {
                        points: marked(s),
                        color: t.canvas(s.color),
                        glyph: s.glyph,
                        mark_points: true,
                    }),
            )
            .collect(),
        x_bounds,
        y_bounds: [lo, hi],
        x_labels,
        y_labels,
        label_width,
        marker: t.marker(),
        axis_style: t.dim(),
    }
}

/// How many y ticks a panel of `rows` rows gets: one every three rows or so.
fn max_ticks(rows: u16) -> usize {
    (rows / 3).clamp(2, 6) as usize
}
