//! A small keyboard form: text fields, choices and toggles. Pure state; the app decides
//! what a submitted form means.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Text(String),
    Choice {
        options: Vec<String>,
        index: usize,
    },
    /// Several of `options` picked (← → move the highlight, Space picks).
    Multi {
        options: Vec<String>,
        picked: Vec<bool>,
        index: usize,
    },
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
    /// A multi-select list with the highlight on `index` and nothing picked.
    pub fn multi(key: &str, label: &str, options: Vec<String>, index: usize, help: &str) -> Field {
        let index = index.min(options.len().saturating_sub(1));
        Field {
            key: key.into(),
            label: label.into(),
            help: help.into(),
            value: Value::Multi {
                picked: vec![false; options.len()],
                options,
                index,
            },
        }
    }

    /// What a multi-select stands for: the picked options, or the highlighted one when
    /// none is picked; a choice's option; else the value as text.
    pub fn picked(&self) -> Vec<String> {
        match &self.value {
            Value::Multi {
                options,
                picked,
                index,
            } => {
                let chosen: Vec<String> = options
                    .iter()
                    .zip(picked)
                    .filter(|(_, p)| **p)
                    .map(|(o, _)| o.clone())
                    .collect();
                if chosen.is_empty() {
                    options.get(*index).cloned().into_iter().collect()
                } else {
                    chosen
                }
            }
            _ => vec![self.display()],
        }
    }

    /// The highlighted option of a choice or multi-select.
    pub fn highlighted(&self) -> Option<&str> {
        match &self.value {
            Value::Choice { options, index } | Value::Multi { options, index, .. } => {
                options.get(*index).map(String::as_str)
            }
            _ => None,
        }
    }

    /// Take `other`'s value if it is of the same kind (and, for a list, has the same
    /// options): what a form remembers from its last use.
    pub fn take_value(&mut self, other: &Field) {
        let same = match (&self.value, &other.value) {
            (Value::Text(_), Value::Text(_)) | (Value::Toggle(_), Value::Toggle(_)) => true,
            (Value::Choice { options: a, .. }, Value::Choice { options: b, .. })
            | (Value::Multi { options: a, .. }, Value::Multi { options: b, .. }) => a == b,
            _ => false,
        };
        if same {
            self.value = other.value.clone();
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
            Value::Multi { .. } => self.picked().join(", "),
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
    /// Shown above the error: what submitting it would cost (the new-runs form's
    /// estimate).
    pub note: Option<String>,
    /// A warning the user was shown on a submit; the same warning on the next submit
    /// means the user confirmed it.
    pub confirm: Option<String>,
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
            note: None,
            confirm: None,
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

    /// What a field stands for (see [`Field::picked`]); empty if there is no such field.
    pub fn picked(&self, key: &str) -> Vec<String> {
        self.get(key).map(Field::picked).unwrap_or_default()
    }

    /// Take the values of `last`'s fields that this form has too, except `except`.
    pub fn remember(&mut self, last: &Form, except: &[&str]) {
        for field in &mut self.fields {
            if except.contains(&field.key.as_str()) {
                continue;
            }
            if let Some(old) = last.get(&field.key) {
                field.take_value(old);
            }
        }
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
                        Value::Multi { options, index, .. } if !options.is_empty() => {
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
                        Value::Multi { picked, index, .. } if c == ' ' => {
                            if let Some(p) = picked.get_mut(*index) {
                                *p = !*p;
                            }
                        }
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
