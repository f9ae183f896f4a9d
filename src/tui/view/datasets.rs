//! Data sets: the list, and the selected one's size, split, target summary or the
//! loading error.

use super::pane;
use crate::tui::format::{count, describe_load, short};
use crate::tui::state::{App, DataState, Focus};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let focused = app.focus == Focus::Datasets;
    let block = pane(app, " Data sets ", focused).title_bottom(Line::from(vec![
        Span::styled(" a", t.key()),
        Span::raw(" add "),
        Span::styled("e", t.key()),
        Span::raw(" edit "),
    ]));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut lines: Vec<Line> = Vec::new();
    if app.session.datasets.is_empty() {
        lines.push(Line::styled("no data sets: a adds one", t.dim()));
    }
    // Keep the selected entry visible when the list is long.
    let room = (inner.height as usize / 2).max(1);
    let start = app.data_cursor.saturating_sub(room.saturating_sub(1));
    for (i, d) in app
        .session
        .datasets
        .iter()
        .enumerate()
        .skip(start)
        .take(room)
    {
        let d = d.get_ref();
        let (mark, style, extra) = match app.data.get(&d.name) {
            Some(DataState::Loaded(ds)) => (
                "✓",
                t.ok(),
                format!(" {}/{} D{}", ds.n_train(), ds.n_test(), ds.dim()),
            ),
            Some(DataState::Failed(_)) => ("✗", t.error(), " error".into()),
            Some(DataState::Loading(Some(p))) => {
                ("…", t.warn(), format!(" {} rows…", count(p.rows)))
            }
            _ => ("…", t.warn(), " loading".into()),
        };
        let mut line = Line::from(vec![
            Span::styled(format!("{mark} "), style),
            Span::raw(d.name.clone()),
            Span::styled(extra, t.dim()),
        ]);
        if i == app.data_cursor {
            line = line.style(if focused { t.selected() } else { t.title() });
        }
        lines.push(line);
    }
    lines.push(Line::raw(""));
    if let Some(d) = app.selected_dataset() {
        match app.data.get(&d.name) {
            Some(DataState::Loaded(ds)) => {
                let split = match (&d.test, d.split) {
                    (Some(_), _) => "test file".to_string(),
                    (None, Some(f)) => format!("split {f}"),
                    (None, None) => "no test set".to_string(),
                };
                lines.push(Line::raw(format!(
                    "n {} train / {} test ({split})",
                    ds.n_train(),
                    ds.n_test()
                )));
                lines.push(Line::raw(format!(
                    "D {}: {}",
                    ds.dim(),
                    ds.feature_names.join(", ")
                )));
                let y = ds.y_train.as_slice();
                let n = y.len().max(1) as f64;
                let mean = y.iter().sum::<f64>() / n;
                let sd =
                    (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
                lines.push(Line::raw(format!(
                    "target {}: mean {} sd {}",
                    ds.target_name,
                    short(mean),
                    short(sd)
                )));
                for note in &ds.notes {
                    lines.push(Line::styled(note.clone(), t.dim()));
                }
            }
            Some(DataState::Failed(e)) => lines.push(Line::styled(e.clone(), t.error())),
            Some(DataState::Loading(Some(p))) => lines.push(Line::styled(
                format!("loading {}", describe_load(p)),
                t.warn(),
            )),
            _ => lines.push(Line::styled(
                format!("loading {}…", d.train.display()),
                t.dim(),
            )),
        }
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}
