//! Comparison: test NMSE (log scale) or MNLP against m (log scale), one line per run
//! label (label k of the session in the palette's hue k, as in the runs table, or
//! glyph k without colour), for the selected data set, with the numbers in a table
//! beside it that shows each label whole (wrapped when long).

use super::pane;
use crate::session::Status;
use crate::tui::format::{fmt_nmse, fmt_opt, short};
use crate::tui::state::{App, ChartTab, Metric};
use crate::tui::widgets::{Curve, LineChart};
use crate::tui::wrap::{width, wrap_label};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use std::collections::BTreeMap;

/// One point of the comparison: a label at one m, averaged over its finished seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub label: String,
    pub method: String,
    pub m: usize,
    pub seeds: usize,
    pub nmse: f64,
    pub mnlp: f64,
}

/// Mean NMSE and MNLP per (label, m) over the finished runs on `dataset`.
pub fn points(app: &App, dataset: &str) -> Vec<Point> {
    // (label, m) → (method, [(NMSE, MNLP)] over seeds)
    type Groups = BTreeMap<(String, usize), (String, Vec<(f64, f64)>)>;
    let mut groups = Groups::new();
    for r in &app.session.results {
        if r.key.dataset != dataset || r.status != Status::Done {
            continue;
        }
        if let (Some(a), Some(b)) = (r.nmse, r.mnlp) {
            groups
                .entry((r.key.label.clone(), r.key.m))
                .or_insert_with(|| (r.method.clone(), Vec::new()))
                .1
                .push((a, b));
        }
    }
    groups
        .into_iter()
        .map(|((label, m), (method, v))| {
            let n = v.len() as f64;
            Point {
                label,
                method,
                m,
                seeds: v.len(),
                nmse: v.iter().map(|p| p.0).sum::<f64>() / n,
                mnlp: v.iter().map(|p| p.1).sum::<f64>() / n,
            }
        })
        .collect()
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let focused = app.chart == ChartTab::Comparison;
    let dataset = app.comparison_dataset().unwrap_or_default();
    let what = match app.metric {
        Metric::Nmse => "NMSE (log)",
        Metric::Mnlp => "MNLP",
    };
    let block = pane(
        app,
        format!(" Comparison on {dataset}: {what} vs m (log) "),
        focused,
    )
    .title_bottom(Line::from(vec![
        Span::styled(" c", t.key()),
        Span::raw(" NMSE/MNLP "),
    ]));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let pts = points(app, &dataset);
    if pts.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "no finished runs on this data set yet",
                t.dim(),
            )),
            inner,
        );
        return;
    }
    // One line per label, in the session's label order (its palette index); labels
    // only in results (merged from elsewhere) after the rest.
    let mut order = app.label_order();
    for p in &pts {
        if !order.contains(&p.label) {
            order.push(p.label.clone());
        }
    }
    let labels: Vec<(usize, String)> = order
        .into_iter()
        .enumerate()
        .filter(|(_, l)| pts.iter().any(|p| &p.label == l))
        .collect();
    // The label column is as wide as the longest label where the chart keeps 16
    // columns, and at least 8; a longer label wraps in its row.
    let longest = labels.iter().map(|(_, l)| width(l)).max().unwrap_or(0);
    let room = (inner.width as usize).saturating_sub(16 + 1 + OTHER_COLUMNS);
    let label_width = longest.min(room).max(8);
    let [chart_area, table_area] = Layout::horizontal([
        Constraint::Min(16),
        Constraint::Length((OTHER_COLUMNS + label_width) as u16),
    ])
    .spacing(1)
    .areas(inner);
    let value = |p: &Point| match app.metric {
        Metric::Nmse => p.nmse.max(1e-300).log10(),
        Metric::Mnlp => p.mnlp,
    };
    let looks: Vec<(Color, Option<&'static str>, &'static str)> = labels
        .iter()
        .map(|(k, _)| (t.series_color(*k), t.curve_glyph(*k), t.curve_mark(*k)))
        .collect();
    let series: Vec<Vec<(f64, f64)>> = labels
        .iter()
        .map(|(_, l)| {
            pts.iter()
                .filter(|p| &p.label == l)
                .map(|p| ((p.m.max(1) as f64).log10(), value(p)))
                .filter(|p| p.1.is_finite())
                .collect()
        })
        .collect();
    let xs = series.iter().flat_map(|s| s.iter().map(|p| p.0));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let ys = series.iter().flat_map(|s| s.iter().map(|p| p.1));
    let (y0, y1) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    if !(x0.is_finite() && y0.is_finite()) {
        return;
    }
    // Unpadded, so the end labels are the smallest and largest m exactly.
    let (x0, x1) = if x1 - x0 < 1e-9 {
        pad(x0, x1, 0.5)
    } else {
        (x0, x1)
    };
    let (y0, y1) = match app.metric {
        Metric::Nmse => (y0.floor().min(y1 - 0.5), y1.ceil().max(y0 + 0.5)),
        Metric::Mnlp => pad(y0, y1, 0.08),
    };
    let ylab = |v: f64| match app.metric {
        Metric::Nmse => short(10f64.powf(v)),
        Metric::Mnlp => short(v),
    };
    let chart = LineChart {
        curves: series
            .iter()
            .zip(&looks)
            .map(|(data, (color, glyph, _))| Curve {
                points: data,
                color: *color,
                glyph: *glyph,
                // the points themselves, visible even for a single m
                mark_points: true,
            })
            .collect(),
        x_bounds: [x0, x1],
        y_bounds: [y0, y1],
        x_labels: vec![
            format!("m {:.0}", 10f64.powf(x0)),
            format!("{:.0}", 10f64.powf(x1)),
        ],
        y_labels: vec![ylab(y0), ylab((y0 + y1) / 2.0), ylab(y1)],
        label_width: 0,
        marker: t.marker(),
        axis_style: t.dim(),
    };
    frame.render_widget(chart, chart_area);
    let header = Row::new(["", "method", "m", "NMSE", "MNLP"]).style(t.title());
    let rows = labels
        .iter()
        .zip(&looks)
        .flat_map(|((_, l), (color, _, mark))| {
            pts.iter().filter(move |p| &p.label == l).map(move |p| {
                let bold = |m: Metric| {
                    if app.metric == m {
                        t.title()
                    } else {
                        Style::new()
                    }
                };
                let style = if t.color {
                    Style::new().fg(*color)
                } else {
                    Style::new()
                };
                let label = wrap_label(&p.label, label_width);
                let height = label.len() as u16;
                Row::new([
                    Cell::from(*mark).style(style),
                    Cell::from(label.join("\n")).style(style),
                    Cell::from(p.m.to_string()),
                    Cell::from(fmt_nmse(Some(p.nmse))).style(bold(Metric::Nmse)),
                    Cell::from(fmt_opt(Some(p.mnlp), 3)).style(bold(Metric::Mnlp)),
                ])
                .height(height)
            })
        });
    let table = Table::new(
        rows,
        [
            Constraint::Length(1),
            Constraint::Length(label_width as u16),
            Constraint::Length(4),
            Constraint::Length(9),
            Constraint::Min(6),
        ],
    )
    .header(header)
    .column_spacing(1);
    frame.render_widget(table, table_area);
}

/// Columns of the table besides the label: mark, m, NMSE, MNLP and the spacing.
const OTHER_COLUMNS: usize = 1 + 4 + 9 + 6 + 4;

fn pad(a: f64, b: f64, f: f64) -> (f64, f64) {
    let w = (b - a).abs().max(0.1);
    (a - f * w, b + f * w)
}
