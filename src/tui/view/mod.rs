//! Drawing: `draw(frame, app)` lays the panes out and each file draws one pane. Views
//! read the state and never change it.

pub mod comparison;
pub mod datasets;
pub mod dialog;
pub mod evidence;
pub mod prediction;
pub mod prediction_observed;
pub mod runs;
pub mod status;

use super::state::{App, ChartTab};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType};

/// Where each pane goes.
#[derive(Clone, Debug, PartialEq)]
pub struct Areas {
    pub title: Rect,
    pub datasets: Rect,
    pub runs: Rect,
    /// The charts shown: all three on a large terminal, else the selected one.
    pub charts: Vec<(ChartTab, Rect)>,
    pub status: Rect,
}

/// A terminal at least this large shows every chart at once.
pub const LARGE: (u16, u16) = (140, 40);

/// The panes of a screen of `area` showing chart `tab`, with a status line of
/// `status_rows` (a long message wraps).
pub fn layout(area: Rect, tab: ChartTab, status_rows: u16) -> Areas {
    let [title, middle, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(status_rows),
    ])
    .areas(area);
    if area.width >= LARGE.0 && area.height >= LARGE.1 {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(middle);
        let [datasets, runs] =
            Layout::vertical([Constraint::Length(10), Constraint::Min(0)]).areas(left);
        let [a, b, c] = Layout::vertical([Constraint::Ratio(1, 3); 3]).areas(right);
        return Areas {
            title,
            datasets,
            runs,
            charts: vec![
                (ChartTab::Evidence, a),
                (ChartTab::Comparison, b),
                (ChartTab::Prediction, c),
            ],
            status,
        };
    }
    let [upper, runs] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Min(6)]).areas(middle);
    let [datasets, chart] =
        Layout::horizontal([Constraint::Percentage(30), Constraint::Min(0)]).areas(upper);
    Areas {
        title,
        datasets,
        runs,
        charts: vec![(tab, chart)],
        status,
    }
}

pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let areas = layout(area, app.chart, status::height(app, area.width));
    title_bar(frame, app, areas.title);
    datasets::draw(frame, app, areas.datasets);
    runs::draw(frame, app, areas.runs);
    for (tab, area) in &areas.charts {
        match tab {
            ChartTab::Evidence => evidence::draw(frame, app, *area),
            ChartTab::Comparison => comparison::draw(frame, app, *area),
            ChartTab::Prediction => prediction::draw(frame, app, *area),
        }
    }
    status::draw(frame, app, areas.status);
    dialog::draw(frame, app);
}

fn title_bar(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let mut spans = vec![
        Span::styled(" sgpw ", t.title()),
        Span::styled(format!("{} ", app.session.name), t.dim()),
        Span::raw("│ "),
    ];
    for (i, (tab, name)) in [
        (ChartTab::Evidence, "Evidence"),
        (ChartTab::Comparison, "Comparison"),
        (ChartTab::Prediction, "Prediction"),
    ]
    .iter()
    .enumerate()
    {
        let style = if *tab == app.chart {
            t.selected()
        } else {
            Style::new()
        };
        spans.push(Span::styled(format!("{}", i + 1), t.key()));
        spans.push(Span::styled(format!(" {name} "), style));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::raw("│ "));
    spans.push(Span::styled("?", t.key()));
    spans.push(Span::raw(" help  "));
    spans.push(Span::styled("q", t.key()));
    spans.push(Span::raw(" quit"));
    frame.render_widget(Line::from(spans), area);
}

/// A pane's frame: highlighted when it has the keyboard.
pub fn pane<'a>(app: &App, title: impl Into<Line<'a>>, focused: bool) -> Block<'a> {
    Block::bordered()
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(app.theme.border(focused))
        .title(title.into().style(app.theme.title()))
}
