//! Dialogs over the panes: help, the quit question, and the forms.

use crate::tui::form::{Form, Value};
use crate::tui::keys::help_rows;
use crate::tui::state::{App, Dialog};
use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

pub fn draw(frame: &mut Frame, app: &App) {
    let Some(d) = &app.dialog else { return };
    let t = &app.theme;
    let area = frame.area();
    match d {
        Dialog::Help => {
            let mut lines: Vec<Line> = help_rows()
                .map(|(k, what)| {
                    Line::from(vec![
                        Span::styled(format!("{k:>10}  "), t.key()),
                        Span::raw(what),
                    ])
                })
                .collect();
            lines.push(Line::styled(
                "Saved sessions reopen with every chart drawn. NO_COLOR and --ascii work.",
                t.dim(),
            ));
            let r = centred(area, 74, lines.len() as u16 + 2);
            frame.render_widget(Clear, r);
            frame.render_widget(
                Paragraph::new(lines).block(
                    Block::bordered()
                        .title(" Keys (any key closes) ")
                        .border_style(t.border(true)),
                ),
                r,
            );
        }
        Dialog::Quit(reason) => {
            let lines = vec![
                Line::raw(reason.clone()),
                Line::raw(""),
                Line::from(vec![
                    Span::styled("s", t.key()),
                    Span::raw(" save and quit   "),
                    Span::styled("y", t.key()),
                    Span::raw(" quit without saving   "),
                    Span::styled("n/Esc", t.key()),
                    Span::raw(" stay"),
                ]),
            ];
            let r = centred(area, 64, 6);
            frame.render_widget(Clear, r);
            frame.render_widget(
                Paragraph::new(lines).wrap(Wrap { trim: true }).block(
                    Block::bordered()
                        .title(" Quit? ")
                        .border_style(t.border(true)),
                ),
                r,
            );
        }
        Dialog::Recover(r) => {
            let file = app.path.file_name().map_or_else(
                || app.path.display().to_string(),
                |f| f.to_string_lossy().into_owned(),
            );
            let when = r
                .written
                .and_then(|w| w.elapsed().ok())
                .map(|d| format!(" written {} ago", ago(d.as_secs())))
                .unwrap_or_default();
            let lines = vec![
                Line::raw(format!(
                    "An autosave{when} holds {} that {file} lacks: the app \
                     stopped before it was saved.",
                    r.summary()
                )),
                Line::raw(""),
                Line::from(vec![
                    Span::styled("y", t.key()),
                    Span::raw(" recover them (then s saves)   "),
                    Span::styled("n", t.key()),
                    Span::raw(" discard the autosave"),
                ]),
            ];
            let r = centred(area, 64, 7);
            frame.render_widget(Clear, r);
            frame.render_widget(
                Paragraph::new(lines).wrap(Wrap { trim: true }).block(
                    Block::bordered()
                        .title(" Recover unsaved work? ")
                        .border_style(t.border(true)),
                ),
                r,
            );
        }
        Dialog::Open(f) => form(frame, app, f, "Enter open · Esc cancel"),
        Dialog::LoadData(f) => form(
            frame,
            app,
            f,
            "Enter load · Esc cancel · ↑↓ field · ←→ choose",
        ),
        Dialog::NewRuns(f) => form(
            frame,
            app,
            f,
            "Enter launch · Esc cancel · ↑↓ field · ←→ choose",
        ),
    }
}

/// "5 s", "3 min", "2 h", "4 days".
fn ago(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..172_800 => format!("{} h", secs / 3600),
        _ => format!("{} days", secs / 86_400),
    }
}

fn form(frame: &mut Frame, app: &App, f: &Form, hint: &str) {
    let t = &app.theme;
    let area = frame.area();
    let visible: Vec<(usize, &crate::tui::form::Field)> = f
        .fields
        .iter()
        .enumerate()
        .filter(|(_, x)| !x.label.is_empty())
        .collect();
    let lw = visible
        .iter()
        .map(|(_, x)| x.label.chars().count())
        .max()
        .unwrap_or(0);
    let width = area.width.saturating_sub(2).min(78);
    let mut lines: Vec<Line> = Vec::new();
    for (i, field) in &visible {
        let selected = *i == f.cursor;
        let value = match &field.value {
            Value::Text(s) => format!("{s}{}", if selected { "▏" } else { "" }),
            Value::Choice { .. } => format!("‹ {} ›", field.display()),
            Value::Toggle(b) => (if *b { "[x]" } else { "[ ]" }).to_string(),
        };
        let label = Span::styled(
            format!(" {:>lw$} : ", field.label),
            if selected { t.key() } else { t.dim() },
        );
        let value = Span::styled(
            value,
            if selected {
                t.selected()
            } else {
                ratatui::style::Style::new()
            },
        );
        lines.push(Line::from(vec![label, value]));
    }
    lines.push(Line::raw(""));
    if let Some(field) = f.fields.get(f.cursor) {
        lines.push(Line::styled(format!(" {}", field.help), t.dim()));
    }
    let mut height = lines.len() as u16 + 3;
    if let Some(e) = &f.error {
        let rows = (e.chars().count() as u16 + 2).div_ceil(width.saturating_sub(2).max(1));
        height += rows;
        lines.push(Line::styled(format!(" {e}"), t.error()));
    }
    lines.push(Line::styled(format!(" {hint}"), t.dim()));
    let r = centred(area, width, height.min(area.height));
    frame.render_widget(Clear, r);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::bordered()
                .title(format!(" {} ", f.title))
                .border_style(t.border(true)),
        ),
        r,
    );
}

fn centred(area: Rect, w: u16, h: u16) -> Rect {
    let [r] = Layout::horizontal([Constraint::Length(w.min(area.width))])
        .flex(Flex::Center)
        .areas(area);
    let [r] = Layout::vertical([Constraint::Length(h.min(area.height))])
        .flex(Flex::Center)
        .areas(r);
    r
}
