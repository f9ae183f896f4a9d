//! A small keyboard form: text fields, choices and toggles. Pure state; the app decides
//! what a submitted form means.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Text(String),
    Choice { options: Vec<String>, index: usize },
    Toggle(bool),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Stable key the app reads the value by.
    pub key: String,
    pub label: String,
    /// One line shown under the form while the field is selected.
    pub help: String,
    pub value: Value,
}

impl Field {
    pub fn text(key: &str, label: &str, value: &str, help: &str) -> Field {
        Field {
            key: key.into(),
            label: label.into(),
            help: help.into(),
            value: Value::Text(value.into()),
        }
    }
    pub fn choice(key: &str, label: &str, options: Vec<String>, index: usize, help: &str) -> Field {
        let index = index.min(options.len().saturating_sub(1));
        Field {
            key: key.into(),
            label: label.into(),
            help: help.into(),
            value: Value::Choice { options, index },
        }
    }
    pub fn toggle(key: &str, label: &str, on: bool, help: &str) -> Field {
        Field {
            key: key.into(),
            label: label.into(),
            help: help.into(),
            value: Value::Toggle(on),
        }
    }

    /// The value as text (a choice's option, "yes"/"no").
    pub fn display(&self) -> String {
        match &self.value {
            Value::Text(s) => s.clone(),
            Value::Choice { options, index } => options.get(*index).cloned().unwrap_or_default(),
            Value::Toggle(b) => {
                if *b {
                    "yes".into()
                } else {
                    "no".into()
                }
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub title: String,
    pub fields: Vec<Field>,
    pub cursor: usize,
    /// Shown in red at the bottom; set when a submit was refused.
    pub error: Option<String>,
}

/// What a key did to a form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormOutcome {
    /// Still editing; `changed` names the field whose value changed (for dependent fields).
    Editing {
        changed: Option<usize>,
    },
    Submit,
    Cancel,
}

impl Form {
    pub fn new(title: &str, fields: Vec<Field>) -> Form {
        Form {
            title: title.into(),
            fields,
            cursor: 0,
            error: None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.key == key)
    }

    pub fn text(&self, key: &str) -> String {
        self.get(key)
            .map(|f| f.display().trim().to_string())
            .unwrap_or_default()
    }

    pub fn toggle(&self, key: &str) -> bool {
        matches!(self.get(key).map(|f| &f.value), Some(Value::Toggle(true)))
    }

    pub fn key(&mut self, k: KeyEvent) -> FormOutcome {
        let n = self.fields.len().max(1);
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let mut changed = None;
        match k.code {
            KeyCode::Esc => return FormOutcome::Cancel,
            KeyCode::Enter => return FormOutcome::Submit,
            KeyCode::Down | KeyCode::Tab => self.cursor = (self.cursor + 1) % n,
            KeyCode::Up | KeyCode::BackTab => self.cursor = (self.cursor + n - 1) % n,
            KeyCode::Left | KeyCode::Right => {
                let right = k.code == KeyCode::Right;
                if let Some(f) = self.fields.get_mut(self.cursor) {
                    match &mut f.value {
                        Value::Choice { options, index } if !options.is_empty() => {
                            let len = options.len();
                            *index = if right {
                                (*index + 1) % len
                            } else {
                                (*index + len - 1) % len
                            };
                            changed = Some(self.cursor);
                        }
                        Value::Toggle(b) => {
                            *b = !*b;
                            changed = Some(self.cursor);
                        }
                        _ => {}
                    }
                }
            }
            KeyCode::Backspace => {
                if let Some(Value::Text(s)) = self.fields.get_mut(self.cursor).map(|f| &mut f.value)
                {
                    s.pop();
                    changed = Some(self.cursor);
                }
            }
            KeyCode::Char('u') if ctrl => {
                if let Some(Value::Text(s)) = self.fields.get_mut(self.cursor).map(|f| &mut f.value)
                {
                    s.clear();
                    changed = Some(self.cursor);
                }
            }
            KeyCode::Char(c) if !ctrl => {
                if let Some(f) = self.fields.get_mut(self.cursor) {
                    match &mut f.value {
                        Value::Text(s) => s.push(c),
                        Value::Toggle(b) if c == ' ' => *b = !*b,
                        _ => return FormOutcome::Editing { changed: None },
                    }
                    changed = Some(self.cursor);
                }
            }
            _ => {}
        }
        if changed.is_some() {
            self.error = None;
        }
        FormOutcome::Editing { changed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyEvent;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn edits_moves_and_cycles() {
        let mut f = Form::new(
            "t",
            vec![
                Field::text("a", "A", "x", ""),
                Field::choice("b", "B", vec!["p".into(), "q".into()], 0, ""),
                Field::toggle("c", "C", false, ""),
            ],
        );
        f.key(key(KeyCode::Char('y')));
        f.key(key(KeyCode::Backspace));
        f.key(key(KeyCode::Char('z')));
        assert_eq!(f.text("a"), "xz");
        f.key(key(KeyCode::Down));
        assert_eq!(
            f.key(key(KeyCode::Left)),
            FormOutcome::Editing { changed: Some(1) }
        );
        assert_eq!(f.text("b"), "q");
        f.key(key(KeyCode::Up));
        f.key(key(KeyCode::Up));
        f.key(key(KeyCode::Char(' ')));
        assert!(f.toggle("c"));
        assert_eq!(f.key(key(KeyCode::Enter)), FormOutcome::Submit);
        assert_eq!(f.key(key(KeyCode::Esc)), FormOutcome::Cancel);
    }
}
