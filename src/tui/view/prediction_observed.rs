//! The prediction pane for a classifier or a count model: p(y = 1 | x) or the rate
//! along one input with its band ([`ObservedChart`]), or, for a classifier with two
//! inputs, its probability map ([`ProbMapChart`]).

use super::pane;
use crate::chart::prob_map::ProbMap;
use crate::tui::predict::Curves;
use crate::tui::state::App;
use crate::tui::widgets::band_chart::{LATENT, MEAN, TEST, TRAIN};
use crate::tui::widgets::observed_chart::ObservedChart;
use crate::tui::widgets::prob_map::{CLASS_ONE, CLASS_ZERO, ProbMapChart, shade};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

pub fn draw(frame: &mut Frame, app: &App, area: Rect, title: String, c: &Curves, focused: bool) {
    let t = &app.theme;
    let sw = |col: Color| {
        if t.color {
            Style::new().fg(col)
        } else {
            Style::new()
        }
    };
    let mut legend = Vec::new();
    let title = if let Some(map) = &c.map {
        let [zero, one] = map.labels;
        let target = if map.target_name.is_empty() {
            "y"
        } else {
            &map.target_name
        };
        let block = pane(app, String::new(), focused);
        let inner = block.inner(area);
        let chart = ProbMapChart { map, theme: *t };
        let drawn = chart.drawn(inner);
        legend.extend([
            Span::styled(format!(" {}", shades(t, true)), sw(CLASS_ONE)),
            Span::raw(format!(" {target}={one} ")),
            Span::styled(shades(t, false), sw(CLASS_ZERO)),
            Span::raw(format!(" {target}={zero} ")),
            Span::styled("+", sw(CLASS_ONE)),
            Span::styled("o", sw(CLASS_ZERO)),
            Span::raw(format!(" {} ", drawn_words(map, drawn))),
        ]);
        marker_legend(&mut legend, &map.marker_caption, t);
        let title = format!(
            "{title}· p({target} = {one}) over {}, {} ",
            map.names[0], map.names[1]
        );
        frame.render_widget(
            block.title(title.clone()).title_bottom(Line::from(legend)),
            area,
        );
        frame.render_widget(chart, inner);
        return;
    } else {
        title
    };
    let Some(o) = &c.observed else {
        return;
    };
    let chart = ObservedChart {
        curves: c,
        observed: o,
        theme: *t,
    };
    let mut title = title;
    if c.dim > 1 {
        title = format!(
            "{title}along {} ([ ]); others at training medians ",
            c.input_name
        );
    }
    title = format!("{title}· y: {} ", o.axis_name(&c.target_name));
    let band = if t.color {
        "█"
    } else if t.ascii {
        "="
    } else {
        "═"
    };
    legend.extend([
        Span::styled(format!(" {band}"), sw(LATENT)),
        Span::raw(format!(" {} ", o.band_caption())),
        Span::styled("─", sw(MEAN)),
        Span::raw(format!(" {} ", o.mean_caption())),
        Span::styled(if !t.color && t.ascii { "+" } else { "•" }, sw(TRAIN)),
        Span::raw(" train "),
        Span::styled(if t.color || t.ascii { "•" } else { "⠁" }, sw(TEST)),
        Span::raw(" test "),
    ]);
    marker_legend(&mut legend, &c.marker_caption, t);
    let block = pane(app, title, focused).title_bottom(Line::from(legend));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(chart, inner);
}

/// The shades of one class's side, from unsure to sure.
fn shades(t: &crate::tui::theme::Theme, one: bool) -> String {
    [0.65, 0.8, 0.95]
        .iter()
        .map(|p| shade(if one { *p } else { 1.0 - p }, t).0)
        .collect()
}

fn drawn_words(map: &ProbMap, drawn: usize) -> String {
    if drawn < map.train_rows {
        format!("{drawn} of {} train", map.train_rows)
    } else {
        "train".to_string()
    }
}

fn marker_legend(legend: &mut Vec<Span<'static>>, caption: &str, t: &crate::tui::theme::Theme) {
    if !caption.is_empty() {
        legend.push(Span::styled(if t.ascii { "^" } else { "▲" }, t.warn()));
        legend.push(Span::raw(format!(" {caption} ")));
    }
}
