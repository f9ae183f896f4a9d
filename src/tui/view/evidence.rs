//! Evidence: NLML against iteration (greedy: against the number of basis points), live, one colour (or marker) per method, with a
//! legend; during a replay, the replayed run's curve up to the animation's position.

use super::{method_index, pane};
use crate::tui::format::short;
use crate::tui::state::{App, ChartTab, SPEEDS};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph};

/// At most this many points per curve and column pair (a 1000-point trace in a
/// 50-column pane needs only ~100).
fn stride(len: usize, width: u16) -> usize {
    let max = (width as usize * 2).max(2);
    len.div_ceil(max).max(1)
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let focused = app.chart == ChartTab::Evidence;
    let marked = app.runs.iter().any(|r| r.marked);
    let shown = app.evidence_runs();
    // what a step of the x axis counts: iterations, or greedy's basis points
    let mut units: Vec<&str> = Vec::new();
    for row in &shown {
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
    // Legend: one entry per method present.
    let mut methods: Vec<(usize, String)> = Vec::new();
    for row in &shown {
        let i = method_index(&row.spec.method);
        if !methods.iter().any(|(j, _)| *j == i) {
            methods.push((i, row.spec.method.clone()));
        }
    }
    methods.sort();
    let mut legend = vec![Span::raw(" ")];
    for (i, name) in &methods {
        legend.push(Span::styled(
            format!("{} {name} ", t.method_glyph(*i)),
            t.method_style(*i),
        ));
    }
    let block = pane(app, title, focused).title_bottom(Line::from(legend));
    let inner = block.inner(area);
    // Curves: (method index, points).
    let mut curves: Vec<(usize, Vec<(f64, f64)>)> = Vec::new();
    for row in &shown {
        let mut trace = app.trace_of(row);
        if let Some(r) = app.replay.as_ref().filter(|r| r.key == row.key) {
            trace = &trace[..(r.shown.floor() as usize)
                .clamp(1, trace.len().max(1))
                .min(trace.len())];
        }
        let s = stride(trace.len(), inner.width);
        let mut pts: Vec<(f64, f64)> = trace
            .iter()
            .enumerate()
            .step_by(s)
            .filter(|(_, v)| v.is_finite())
            .map(|(i, v)| (i as f64, *v))
            .collect();
        if let Some(last) = trace.iter().rposition(|v| v.is_finite())
            && pts.last().is_some_and(|p| p.0 as usize != last)
        {
            pts.push((last as f64, trace[last]));
        }
        if !pts.is_empty() {
            curves.push((method_index(&row.spec.method), pts));
        }
    }
    if curves.is_empty() {
        frame.render_widget(block, area);
        let msg = if app.runs.is_empty() {
            "no runs yet: n launches some"
        } else {
            "no curves yet: start a run (Enter, g) or mark runs (Space)"
        };
        frame.render_widget(Paragraph::new(Line::styled(msg, t.dim())), inner);
        return;
    }
    let x_max = match &app.replay {
        // A replay keeps its final axis so the curve grows into it.
        Some(r) => app
            .runs
            .iter()
            .find(|row| row.key == r.key)
            .map_or(1, |row| app.trace_of(row).len())
            .saturating_sub(1)
            .max(1) as f64,
        None => curves
            .iter()
            .flat_map(|(_, p)| p.last())
            .map(|p| p.0)
            .fold(1.0, f64::max),
    };
    let (lo, hi) = y_range(
        &curves,
        app.replay
            .is_some()
            .then(|| {
                app.runs
                    .iter()
                    .find(|row| Some(&row.key) == app.replay.as_ref().map(|r| &r.key))
                    .map(|row| app.trace_of(row))
            })
            .flatten(),
    );
    let datasets: Vec<Dataset> = curves
        .iter()
        .map(|(i, pts)| {
            Dataset::default()
                .marker(t.method_marker(*i))
                .graph_type(GraphType::Line)
                .style(t.method_style(*i))
                .data(pts)
        })
        .collect();
    let chart = Chart::new(datasets)
        .block(block)
        .x_axis(
            Axis::default()
                .bounds([0.0, x_max])
                .labels([
                    "0".to_string(),
                    format!("{:.0}", x_max / 2.0),
                    format!("{x_max:.0}"),
                ])
                .style(t.dim()),
        )
        .y_axis(
            Axis::default()
                .bounds([lo, hi])
                .labels([short(lo), short((lo + hi) / 2.0), short(hi)])
                .style(t.dim()),
        )
        .style(Style::new());
    frame.render_widget(chart, area);
}

/// The NLML range: from the lowest value to the highest after the first iterations,
/// so a huge starting value does not flatten every curve.
fn y_range(curves: &[(usize, Vec<(f64, f64)>)], full: Option<&[f64]>) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let mut cover = |v: f64, skip: bool| {
        lo = lo.min(v);
        if !skip {
            hi = hi.max(v);
        }
    };
    match full {
        Some(trace) => trace
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .for_each(|(i, v)| cover(*v, i < trace.len() / 10)),
        None => {
            for (_, pts) in curves {
                let n = pts.last().map_or(0.0, |p| p.0);
                pts.iter()
                    .for_each(|p| cover(p.1, p.0 < (n / 10.0).floor() && pts.len() > 1));
            }
        }
    }
    if !hi.is_finite() {
        hi = lo;
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-9 * lo.abs().max(1.0));
    (lo - pad, hi + pad)
}
