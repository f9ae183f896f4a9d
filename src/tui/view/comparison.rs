//! Comparison: test NMSE (log scale) or MNLP against m (log scale), one line per run
//! label (label k of the session in the palette's hue k, as in the runs table, or
//! glyph k without colour), for the selected data set, with the numbers in a table
//! beside it that shows each label whole (wrapped when long).

use super::pane;
use crate::chart::comparison::{Point, headline, labels, of_headline, points};
use crate::chart::{axis, wrap_label};
use crate::results::Headline;
use crate::tui::format::{fmt_nmse, fmt_opt};
use crate::tui::state::{App, ChartTab, Metric};
use crate::tui::widgets::{Curve, LineChart};
use crate::tui::wrap::width;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let focused = app.chart == ChartTab::Comparison;
    let dataset = app.comparison_dataset().unwrap_or_default();
    // a classifier's first score is its error rate, a count model's RMSE
    let (pts, left_out) = of_headline(points(&app.session.results, &dataset));
    let first = headline(&pts);
    let what = match app.metric {
        Metric::Nmse if first.log_scale() => format!("{} (log)", first.long_name()),
        Metric::Nmse => first.long_name().to_string(),
        Metric::Mnlp if first == Headline::ErrorRate => "NLP".to_string(),
        Metric::Mnlp => "MNLP".to_string(),
    };
    let what = if left_out > 0 {
        format!("{what} ({left_out} of another likelihood left out)")
    } else {
        what
    };
    let block = pane(
        app,
        format!(" Comparison on {dataset}: {what} vs m (log) "),
        focused,
    )
    .title_bottom(Line::from(vec![
        Span::styled(" c", t.key()),
        Span::raw(format!(" {}/MNLP ", first.name())),
    ]));
    let inner = block.inner(area);
    frame.render_widget(block, area);
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
    // One line per label, in the session's label order (its palette index).
    let labels = labels(&pts, app.label_order());
    // The chart keeps at least half of the pane. The table beside it gives both scores
    // and each label whole where that fits in the rest; else only the chosen score,
    // the labels wrapped in their rows.
    let longest = labels.iter().map(|(_, l)| width(l)).max().unwrap_or(0);
    let room = (inner.width as usize / 2).saturating_sub(1);
    let both = room >= OTHER_COLUMNS + longest.clamp(8, 12);
    let others = if both {
        OTHER_COLUMNS
    } else {
        ONE_SCORE_COLUMNS
    };
    let label_width = longest.min(room.saturating_sub(others)).max(6);
    let [chart_area, table_area] = Layout::horizontal([
        Constraint::Min(16),
        Constraint::Length((others + label_width) as u16),
    ])
    .spacing(1)
    .areas(inner);
    let value = |p: &Point| match app.metric {
        Metric::Nmse if first.log_scale() => p.nmse.max(1e-300).log10(),
        Metric::Nmse => p.nmse,
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
    // y padded a little; its ticks inside the data however narrow (axis::log10)
    let (y0, y1) = pad(y0, y1, 0.08);
    let rows = chart_area.height.saturating_sub(2);
    let max_ticks = (rows / 3).clamp(2, 6) as usize;
    let y_ticks = match app.metric {
        Metric::Nmse if first.log_scale() => axis::log10(y0, y1, max_ticks),
        Metric::Nmse => axis::linear(y0, y1, max_ticks),
        Metric::Mnlp => axis::linear(y0, y1, max_ticks),
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
        y_labels: LineChart::ticks(&y_ticks),
        label_width: 0,
        marker: t.marker(),
        axis_style: t.dim(),
    };
    frame.render_widget(chart, chart_area);
    let header = if both {
        Row::new(["", "method", "m", first.name(), "MNLP"])
    } else {
        Row::new([
            "",
            "method",
            "m",
            match app.metric {
                Metric::Nmse => first.name(),
                Metric::Mnlp => "MNLP",
            },
        ])
    }
    .style(t.title());
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
                let mut cells = vec![
                    Cell::from(*mark).style(style),
                    Cell::from(label.join("\n")).style(style),
                    Cell::from(p.m.to_string()),
                ];
                if both || app.metric == Metric::Nmse {
                    let v = if first.log_scale() {
                        fmt_nmse(Some(p.nmse))
                    } else {
                        fmt_opt(Some(p.nmse), 4)
                    };
                    cells.push(Cell::from(v).style(bold(Metric::Nmse)));
                }
                if both || app.metric == Metric::Mnlp {
                    cells.push(Cell::from(fmt_opt(Some(p.mnlp), 3)).style(bold(Metric::Mnlp)));
                }
                Row::new(cells).height(height)
            })
        });
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(label_width as u16),
        Constraint::Length(4),
    ];
    if both {
        widths.extend([Constraint::Length(9), Constraint::Min(6)]);
    } else {
        widths.push(Constraint::Min(6));
    }
    let table = Table::new(rows, widths).header(header).column_spacing(1);
    frame.render_widget(table, table_area);
}

/// Columns of the table besides the label: mark, m, NMSE, MNLP and the spacing.
const OTHER_COLUMNS: usize = 1 + 4 + 9 + 6 + 4;
/// The same with one score (NMSE's 9 columns hold either).
const ONE_SCORE_COLUMNS: usize = 1 + 4 + 9 + 3;

fn pad(a: f64, b: f64, f: f64) -> (f64, f64) {
    let w = (b - a).abs().max(0.1);
    (a - f * w, b + f * w)
}
