//! The status line: session file, unsaved changes, runs running / queued, last message.
//! A long message wraps onto more lines (up to [`MAX_ROWS`]); what still does not fit
//! ends in "… m" (m shows it in full).

use crate::tui::state::App;
use crate::tui::wrap::{at_most, wrap_first};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The status line grows to at most this many rows for a long message.
pub const MAX_ROWS: u16 = 3;

/// What ends a message that does not fit.
const MORE: &str = " … m: all";

/// The status line's leading spans (file, saved state, runs).
fn prefix(app: &App) -> Vec<Span<'static>> {
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
    spans
}

/// The message in lines: the first beside the prefix, the rest under it (indented).
fn message_lines(app: &App, w: u16) -> Vec<String> {
    let used: usize = prefix(app).iter().map(|s| s.width()).sum();
    let w = w as usize;
    let lines = wrap_first(&app.message, w.saturating_sub(used), w.saturating_sub(1));
    at_most(lines, MAX_ROWS as usize, w.saturating_sub(1), MORE)
}

/// Rows the status line needs at width `w`.
pub fn height(app: &App, w: u16) -> u16 {
    (message_lines(app, w).len() as u16).clamp(1, MAX_ROWS)
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let style = if app.message_is_error {
        t.error()
    } else {
        Style::new()
    };
    let mut lines = message_lines(app, area.width).into_iter();
    let mut first = prefix(app);
    first.push(Span::styled(lines.next().unwrap_or_default(), style));
    let mut out = vec![Line::from(first)];
    out.extend(lines.map(|l| Line::styled(format!(" {l}"), style)));
    frame.render_widget(Paragraph::new(out), area);
}
