//! Prediction: mean, latent and noisy ±2σ bands, training and test points and the
//! model's inducing / basis points for the selected run, along one input (the others
//! held at their training medians when D > 1, as the title says).

use super::pane;
use crate::tui::state::{App, ChartTab, PredState};
use crate::tui::widgets::BandChart;
use crate::tui::widgets::band_chart::{LATENT, MEAN, NOISY, TEST, TRAIN};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let focused = app.chart == ChartTab::Prediction;
    let run = app.selected_run();
    let run_label = run.map(|r| {
        format!(
            "{}/{} m={} seed {} ",
            r.key.dataset, r.key.label, r.key.m, r.key.seed
        )
    });
    let mut title = match &run_label {
        Some(l) => format!(" Prediction: {l}"),
        None => " Prediction ".to_string(),
    };
    let block_for = |title: String, legend: Option<Line<'static>>| {
        let b = pane(app, title, focused);
        match legend {
            Some(l) => b.title_bottom(l),
            None => b,
        }
    };
    let message = |frame: &mut Frame, title: String, text: String, style: Style| {
        let block = block_for(title, None);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        frame.render_widget(
            Paragraph::new(Line::styled(text, style)).wrap(Wrap { trim: true }),
            inner,
        );
    };
    match &app.prediction {
        PredState::None => {
            let text = match run {
                None => "no run selected".to_string(),
                Some(r) if app.result_of(r).and_then(|x| x.model.as_ref()).is_none() => {
                    "the selected run has no fitted model yet".to_string()
                }
                Some(_) => "waiting for the data set to load".to_string(),
            };
            message(frame, title, text, t.dim());
        }
        PredState::Pending(_) => {
            message(frame, title, "computing the predictions…".into(), t.dim())
        }
        PredState::Failed(_, e) => message(frame, title, format!("cannot predict: {e}"), t.error()),
        PredState::Ready(_, curves) if curves.map.is_some() || curves.observed.is_some() => {
            super::prediction_observed::draw(frame, app, area, title, curves, focused)
        }
        PredState::Ready(_, total) => {
            // the total, or the summand the p key chose (chart::components); which one
            // comes first in the title, where a narrow pane does not cut it off
            let part = app.summand_on_screen(total);
            let curves = part.as_ref().unwrap_or(total);
            let which = if part.is_some() {
                Some(format!(
                    "summand {}/{}",
                    app.pred_component,
                    total.component_count()
                ))
            } else {
                (total.component_count() > 0).then(|| "total (p: summands)".to_string())
            };
            if let Some(which) = which {
                title = format!(
                    " Prediction, {which}: {}",
                    run_label.as_deref().unwrap_or("")
                );
            }
            // the y axis's name: the target column, and what its tick labels leave out
            let chart = BandChart { curves, theme: *t };
            let ticks = chart.y_ticks(area.height.saturating_sub(2));
            if curves.dim > 1 {
                title = format!(
                    "{title}along {} ([ ]); others at training medians ",
                    curves.input_name
                );
            }
            title = format!("{title}· y: {} ", ticks.describe(&curves.target_name));
            let sw = |c| {
                if t.color {
                    Style::new().fg(c)
                } else {
                    Style::new()
                }
            };
            let (lat, noisy) = if t.color {
                ("█", "█")
            } else if t.ascii {
                ("#", "=")
            } else {
                ("█", "═")
            };
            let mut legend = vec![
                Span::styled(format!(" {lat}"), sw(LATENT)),
                Span::raw(" f ±2σ "),
            ];
            // a summand has no noise band and no data of its own (its curves hold none)
            if part.is_none() {
                legend.extend([Span::styled(noisy, sw(NOISY)), Span::raw(" y ±2σ ")]);
            }
            legend.extend([Span::styled("─", sw(MEAN)), Span::raw(" mean ")]);
            if part.is_none() {
                legend.extend([
                    Span::styled(
                        if t.color {
                            "•"
                        } else if t.ascii {
                            "+"
                        } else {
                            "•"
                        },
                        sw(TRAIN),
                    ),
                    Span::raw(" train "),
                    Span::styled(if t.color || t.ascii { "•" } else { "⠁" }, sw(TEST)),
                    Span::raw(" test "),
                ]);
            }
            if !curves.marker_caption.is_empty() {
                legend.push(Span::styled(if t.ascii { "^" } else { "▲" }, t.warn()));
                if !curves.marker_sizes.is_empty() {
                    legend.push(Span::styled(if t.ascii { "'." } else { "▴·" }, t.warn()));
                }
                legend.push(Span::raw(format!(" {} ", curves.marker_caption)));
            }
            if curves.negative > 0 {
                title = format!(
                    "{title}· {} of {} variances < 0 (drawn as 0; MNLP uses σ²) ",
                    curves.negative,
                    curves.grid.len()
                );
            }
            let block = block_for(title, Some(Line::from(legend)));
            let inner = block.inner(area);
            frame.render_widget(block, area);
            frame.render_widget(chart, inner);
        }
    }
}
