//! Dialogs over the panes: help, the quit question, and the forms.

use crate::tui::form::{Form, Value};
use crate::tui::keys::help_rows;
use crate::tui::state::{App, Dialog};
use crate::tui::wrap::{at_most, wrap};
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
        Dialog::Text { title, body, .. } => {
            let w = area.width.saturating_sub(2).min(78);
            let mut lines: Vec<Line> = Vec::new();
            for para in body.split('\n') {
                lines.extend(
                    wrap(para, w.saturating_sub(3) as usize)
                        .into_iter()
                        .map(|l| Line::raw(format!(" {l}"))),
                );
            }
            lines.push(Line::raw(""));
            lines.push(Line::styled(" any key closes this", t.dim()));
            let r = centred(area, w, lines.len() as u16 + 2);
            frame.render_widget(Clear, r);
            frame.render_widget(
                Paragraph::new(lines).block(
                    Block::bordered()
                        .title(format!(" {title} "))
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
            "Enter launch · Esc cancel · ↑↓ field · ←→ choose · Space pick · F2 help",
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

/// Help lines a form shows at most when the screen is short (F2 shows the rest).
const HELP_ROWS: usize = 3;

/// A form: its fields (scrolled to keep the selected one in view when they do not all
/// fit), the selected field's help wrapped (F2 shows it in full if it is cut), the
/// error, the keys.
fn form(frame: &mut Frame, app: &App, f: &Form, hint: &str) {
    let t = &app.theme;
    // between the title bar and the status line, which stay in view (runs finishing,
    // a failed save) while the form is open; the fields scroll when they do not fit
    let full = frame.area();
    let area = if full.height > 6 {
        Rect {
            y: full.y + 1,
            height: full.height - 2,
            ..full
        }
    } else {
        full
    };
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
    let text_w = width.saturating_sub(3) as usize;
    let mut fields: Vec<Line> = Vec::new();
    for (i, field) in &visible {
        let selected = *i == f.cursor;
        let value = match &field.value {
            Value::Text(s) => format!("{s}{}", if selected { "▏" } else { "" }),
            Value::Choice { .. } => format!("‹ {} ›", field.display()),
            Value::Multi {
                options,
                picked,
                index,
            } => {
                let here = if picked.get(*index).copied().unwrap_or(false) {
                    "[x]"
                } else {
                    "[ ]"
                };
                let chosen: Vec<&str> = options
                    .iter()
                    .zip(picked)
                    .filter(|(_, p)| **p)
                    .map(|(o, _)| o.as_str())
                    .collect();
                let name = options.get(*index).map_or("", String::as_str);
                if chosen.is_empty() {
                    format!("‹ {name} ›")
                } else {
                    format!("‹ {name} › {here}  picked: {}", chosen.join(", "))
                }
            }
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
        fields.push(Line::from(vec![label, value]));
    }
    let help = f
        .fields
        .get(f.cursor)
        .map(|x| wrap(&x.help, text_w))
        .unwrap_or_default();
    let error = f
        .error
        .as_deref()
        .map(|e| wrap(e, text_w))
        .unwrap_or_default();
    let note = f
        .note
        .as_deref()
        .map(|e| wrap(e, text_w))
        .unwrap_or_default();
    let keys = wrap(hint, text_w);
    // borders, the blank line, note, error and keys are always shown; then the help
    // (cut to HELP_ROWS if the screen is short), then as many fields as fit
    let fixed = 3 + note.len() + error.len() + keys.len();
    let room = (area.height as usize).saturating_sub(fixed);
    let help = if fields.len() + help.len() > room {
        at_most(help, HELP_ROWS, text_w, " … F2: all")
    } else {
        help
    };
    let field_rows = room.saturating_sub(help.len()).max(1).min(fields.len());
    let selected = visible
        .iter()
        .position(|(i, _)| *i == f.cursor)
        .unwrap_or(0);
    let start = selected
        .saturating_sub(field_rows.saturating_sub(1))
        .min(fields.len() - field_rows);
    let mut lines: Vec<Line> = fields.into_iter().skip(start).take(field_rows).collect();
    lines.push(Line::raw(""));
    lines.extend(
        help.into_iter()
            .map(|l| Line::styled(format!(" {l}"), t.dim())),
    );
    lines.extend(note.into_iter().map(|l| Line::raw(format!(" {l}"))));
    lines.extend(
        error
            .into_iter()
            .map(|l| Line::styled(format!(" {l}"), t.error())),
    );
    lines.extend(
        keys.into_iter()
            .map(|l| Line::styled(format!(" {l}"), t.dim())),
    );
    let height = lines.len() as u16 + 2;
    let r = centred(area, width, height.min(area.height));
    let more = if start > 0 || start + field_rows < visible.len() {
        format!(
            " {} · fields {}–{} of {} ",
            f.title,
            start + 1,
            start + field_rows,
            visible.len()
        )
    } else {
        format!(" {} ", f.title)
    };
    frame.render_widget(Clear, r);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(more).border_style(t.border(true))),
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
