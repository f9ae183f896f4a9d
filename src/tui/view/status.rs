//! The status line: session file, unsaved changes, runs running / queued, last message.

use crate::tui::state::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let file = app.path.file_name().map_or_else(
        || app.path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    let mut spans = vec![Span::styled(format!(" {file} "), t.title())];
    if app.dirty {
        spans.push(Span::styled("● unsaved ", t.warn()));
    } else if !app.on_disk {
        // a new session: nothing is written until the first save
        spans.push(Span::styled("new, not saved ", t.dim()));
    } else {
        spans.push(Span::styled("saved ", t.dim()));
    }
    spans.push(Span::raw(format!(
        "· {} running · {} queued │ ",
        app.running(),
        app.queued()
    )));
    spans.push(Span::styled(
        app.message.clone(),
        if app.message_is_error {
            t.error()
        } else {
            ratatui::style::Style::new()
        },
    ));
    frame.render_widget(Line::from(spans), area);
}
