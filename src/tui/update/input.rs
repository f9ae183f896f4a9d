//! Keys: the main screen's, the dialogs', and what a submitted form does.

use crate::session::base_dir;
use crate::tui::form::FormOutcome;
use crate::tui::forms::{
    DatasetChange, RunGroup, Slot, load_form, open_form, refresh_option_fields, runs_form,
};
use crate::tui::keys::{Action, CTRL_C, FULL_TEXT_IN_FORMS, action_for};
use crate::tui::state::{
    Activity, App, ChartTab, DataState, Dialog, Effect, Focus, Metric, PredState,
};
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::path::PathBuf;

impl App {
    /// A key: the open dialog's, else the main screen's through the key table.
    pub(super) fn on_key(&mut self, k: KeyEvent) -> Vec<Effect> {
        if let Some(dialog) = self.dialog.take() {
            // Ctrl-C leaves any form for the quit question (which it leaves alone).
            let leaves =
                CTRL_C.matches(&k) && !matches!(dialog, Dialog::Quit(_) | Dialog::Recover(_));
            if !leaves {
                return self.on_dialog_key(dialog, k);
            }
        }
        match action_for(&k) {
            Some(action) => self.perform(action),
            None => Vec::new(),
        }
    }

    /// What a key of the main screen does.
    fn perform(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Help => self.dialog = Some(Dialog::Help),
            Action::SwitchFocus => {
                self.focus = if self.focus == Focus::Runs {
                    Focus::Datasets
                } else {
                    Focus::Runs
                }
            }
            Action::Up => self.move_cursor(-1),
            Action::Down => self.move_cursor(1),
            Action::PageUp => self.move_cursor(-10),
            Action::PageDown => self.move_cursor(10),
            Action::Home => self.move_cursor(-1_000_000),
            Action::End => self.move_cursor(1_000_000),
            Action::ShowEvidence => self.chart = ChartTab::Evidence,
            Action::ShowComparison => self.chart = ChartTab::Comparison,
            Action::ShowPrediction => self.chart = ChartTab::Prediction,
            Action::AddDataset => self.dialog = Some(Dialog::LoadData(load_form(None))),
            Action::EditDataset => match self.selected_dataset() {
                Some(d) => self.dialog = Some(Dialog::LoadData(load_form(Some(d)))),
                None => self.fail("no data set selected (a adds one)"),
            },
            Action::NewRuns => {
                if self.session.datasets.is_empty() {
                    self.fail("add a data set first (a)");
                } else {
                    let ds = self
                        .selected_run()
                        .map(|r| r.key.dataset.clone())
                        .or_else(|| self.comparison_dataset());
                    let mut f =
                        runs_form(&self.session, ds.as_deref(), self.runs_form_memory.as_ref());
                    let offer = self.offer_likelihood(&mut f);
                    f.note = self.runs_form_estimate(&f).map(|(note, _)| note);
                    self.dialog = Some(Dialog::NewRuns(f));
                    if let Some(offer) = offer {
                        self.say(offer);
                    }
                }
            }
            Action::Start => {
                if self.focus == Focus::Datasets {
                    self.focus = Focus::Runs;
                } else {
                    return self.start_selected();
                }
            }
            Action::StartAll => return self.start_all(),
            Action::Cancel => return self.cancel_selected(),
            Action::CancelAll => return self.cancel_all(),
            Action::Rerun => return self.rerun_selected(),
            Action::Replay => self.toggle_replay(),
            Action::Faster => self.change_speed(1),
            Action::Slower => self.change_speed(-1),
            Action::Mark => {
                if let Some(r) = self.runs.get_mut(self.run_cursor) {
                    r.marked = !r.marked;
                }
                self.marks_changed();
            }
            Action::ToggleMetric => {
                self.metric = if self.metric == Metric::Nmse {
                    Metric::Mnlp
                } else {
                    Metric::Nmse
                };
                self.chart = ChartTab::Comparison;
            }
            Action::ToggleValidation => {
                self.validation_metric = if self.validation_metric == Metric::Mnlp {
                    Metric::Nmse
                } else {
                    Metric::Mnlp
                };
                self.chart = ChartTab::Evidence;
            }
            Action::PrevInput => {
                self.pred_input = self.pred_input.saturating_sub(1);
                self.chart = ChartTab::Prediction;
            }
            Action::NextInput => {
                let dim = self
                    .selected_run()
                    .and_then(|r| match self.data.get(&r.key.dataset) {
                        Some(DataState::Loaded(d)) => Some(d.dim()),
                        _ => None,
                    });
                self.pred_input = (self.pred_input + 1).min(dim.unwrap_or(1).saturating_sub(1));
                self.chart = ChartTab::Prediction;
            }
            Action::NextComponent => {
                let parts = match &self.prediction {
                    PredState::Ready(_, c) => c.components.clone().map(|v| v.len()),
                    _ => Err("no prediction on screen".to_string()),
                };
                match parts {
                    Ok(count) if count > 0 => {
                        self.pred_component = (self.pred_component + 1) % (count + 1)
                    }
                    Ok(_) => self.pred_component = 0,
                    Err(why) => {
                        self.pred_component = 0;
                        self.say(format!("prediction: no summands to show: {why}"));
                    }
                }
                self.chart = ChartTab::Prediction;
            }
            Action::Save => return self.save(),
            Action::Figure => return self.write_figure(),
            Action::Open => self.dialog = Some(Dialog::Open(open_form(&self.path, self.dirty))),
            Action::Dismiss => {
                if self.replay.take().is_some() {
                    self.say("replay stopped");
                } else {
                    self.runs.iter_mut().for_each(|r| r.marked = false);
                    self.marks_changed();
                }
            }
            Action::FullText => {
                self.dialog = Some(Dialog::Text {
                    title: "Message and selected run".into(),
                    body: self.full_text(),
                    back: None,
                })
            }
            Action::Quit => return self.ask_quit(),
        }
        Vec::new()
    }

    fn move_cursor(&mut self, delta: i64) {
        let (cursor, len) = match self.focus {
            Focus::Runs => (&mut self.run_cursor, self.runs.len()),
            Focus::Datasets => (&mut self.data_cursor, self.session.datasets.len()),
        };
        let max = len.saturating_sub(1) as i64;
        *cursor = (*cursor as i64 + delta).clamp(0, max) as usize;
        if self.focus == Focus::Runs {
            // A replay follows the cursor only when restarted.
            if let Some(ds) = self
                .runs
                .get(self.run_cursor)
                .map(|r| r.key.dataset.clone())
                && let Some(i) = self
                    .session
                    .datasets
                    .iter()
                    .position(|d| d.get_ref().name == ds)
            {
                self.data_cursor = i;
            }
        }
    }

    fn ask_quit(&mut self) -> Vec<Effect> {
        let active = self.running() + self.queued();
        let reason = match (self.dirty, active) {
            (false, 0) => {
                self.quit = true;
                return vec![Effect::CancelAll, Effect::Quit];
            }
            (true, 0) => "The session has unsaved changes.".to_string(),
            (false, 1) => "1 run is still running or queued; its result will be lost.".into(),
            (false, n) => {
                format!("{n} runs are still running or queued; their results will be lost.")
            }
            (true, n) => format!(
                "Unsaved changes, and {} still running or queued.",
                crate::words::count(n, "run is", "runs are")
            ),
        };
        self.dialog = Some(Dialog::Quit(reason));
        Vec::new()
    }

    fn on_dialog_key(&mut self, dialog: Dialog, k: KeyEvent) -> Vec<Effect> {
        // F2 in a form: the selected field's help in full, then back to the form.
        if let Dialog::Open(f) | Dialog::LoadData(f) | Dialog::NewRuns(f) = &dialog
            && FULL_TEXT_IN_FORMS.matches(&k)
            && let Some(field) = f.fields.get(f.cursor)
        {
            self.dialog = Some(Dialog::Text {
                title: field.label.clone(),
                body: field.help.clone(),
                back: Some(Box::new(dialog.clone())),
            });
            return Vec::new();
        }
        match dialog {
            Dialog::Help => Vec::new(),
            Dialog::Text { back, .. } => {
                self.dialog = back.map(|b| *b);
                Vec::new()
            }
            Dialog::Recover(r) => match k.code {
                KeyCode::Char(c) => self.on_recover_key(r, c),
                _ => {
                    self.dialog = Some(Dialog::Recover(r));
                    Vec::new()
                }
            },
            Dialog::Quit(reason) => match k.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => {
                    // Quitting without saving discards the autosave too.
                    self.quit = true;
                    vec![
                        Effect::CancelAll,
                        Effect::DropAutosave(self.path.clone()),
                        Effect::Quit,
                    ]
                }
                KeyCode::Char('s') | KeyCode::Char('S') => {
                    self.quit_after_save = true;
                    let mut e = vec![Effect::CancelAll];
                    e.extend(self.save());
                    e
                }
                KeyCode::Char('n') | KeyCode::Esc => Vec::new(),
                _ => {
                    self.dialog = Some(Dialog::Quit(reason));
                    Vec::new()
                }
            },
            Dialog::Open(mut f) => match f.key(k) {
                FormOutcome::Submit => {
                    let p = f.text("path");
                    if p.is_empty() {
                        f.error = Some("type a path".into());
                        self.dialog = Some(Dialog::Open(f));
                        return Vec::new();
                    }
                    vec![Effect::Open(PathBuf::from(p))]
                }
                FormOutcome::Cancel => Vec::new(),
                FormOutcome::Editing { .. } => {
                    self.dialog = Some(Dialog::Open(f));
                    Vec::new()
                }
            },
            Dialog::LoadData(mut f) => match f.key(k) {
                FormOutcome::Submit => match self.check_load_form(&f) {
                    Ok(change) => self.add_dataset(change),
                    Err(msg) => {
                        f.error = Some(msg);
                        self.dialog = Some(Dialog::LoadData(f));
                        Vec::new()
                    }
                },
                FormOutcome::Cancel => Vec::new(),
                FormOutcome::Editing { .. } => {
                    self.dialog = Some(Dialog::LoadData(f));
                    Vec::new()
                }
            },
            Dialog::NewRuns(mut f) => match f.key(k) {
                FormOutcome::Submit => match self.check_runs_form(&f) {
                    Ok(groups) => {
                        // a run the machine's memory would not hold starts only on a
                        // second Enter
                        if let Some((note, true)) = self.runs_form_estimate(&f)
                            && f.confirm.as_ref() != Some(&note)
                        {
                            f.error = Some(
                                "Enter again to start it anyway (it may exhaust the memory), \
                                 or change the runs"
                                    .into(),
                            );
                            f.note = Some(note.clone());
                            f.confirm = Some(note);
                            self.dialog = Some(Dialog::NewRuns(f));
                            return Vec::new();
                        }
                        self.runs_form_memory = Some(f);
                        self.launch_runs(groups)
                    }
                    Err(msg) => {
                        f.error = Some(msg);
                        self.dialog = Some(Dialog::NewRuns(f));
                        Vec::new()
                    }
                },
                FormOutcome::Cancel => {
                    // what was typed is kept for the next time the form opens
                    self.runs_form_memory = Some(f);
                    Vec::new()
                }
                FormOutcome::Editing { changed } => {
                    // a method browsed or picked: its options and description
                    if changed
                        .and_then(|i| f.fields.get(i))
                        .is_some_and(|fd| fd.key == "method")
                    {
                        refresh_option_fields(&mut f);
                    }
                    // another data set: a binary target takes bernoulli (binary.rs)
                    if changed
                        .and_then(|i| f.fields.get(i))
                        .is_some_and(|fd| fd.key == "dataset")
                        && let Some(offer) = self.offer_likelihood(&mut f)
                    {
                        self.say(offer);
                    }
                    f.note = self.runs_form_estimate(&f).map(|(note, _)| note);
                    if f.confirm.is_some() && f.confirm != f.note {
                        // the runs changed: the warning shown no longer applies
                        f.confirm = None;
                        f.error = None;
                    }
                    self.dialog = Some(Dialog::NewRuns(f));
                    Vec::new()
                }
            },
        }
    }

    /// Store a checked data set entry and load it.
    fn add_dataset(&mut self, change: DatasetChange) -> Vec<Effect> {
        let DatasetChange { entry, slot } = change;
        let name = entry.name.clone();
        match slot {
            Slot::Replace(i) => self.session.datasets[i] = toml::Spanned::new(0..0, entry.clone()),
            Slot::Add { replacing } => {
                if let Some(editing) = replacing {
                    self.session
                        .datasets
                        .retain(|d| d.get_ref().name != editing);
                    self.data.remove(&editing);
                }
                self.session
                    .datasets
                    .push(toml::Spanned::new(0..0, entry.clone()));
            }
        }
        self.mark_dirty();
        self.data_cursor = self
            .session
            .datasets
            .iter()
            .position(|d| d.get_ref().name == name)
            .unwrap_or(0);
        self.focus = Focus::Datasets;
        self.data.insert(name.clone(), DataState::Loading(None));
        self.say(format!("loading {name}…"));
        vec![Effect::LoadData {
            name,
            epoch: self.epoch,
            entry,
            base: base_dir(&self.path),
        }]
    }

    /// Store checked run entries (one per method), list their runs and start the idle
    /// ones.
    fn launch_runs(&mut self, groups: Vec<RunGroup>) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut first = None;
        let mut listed = 0;
        for RunGroup { entry, runs } in groups {
            if !self.session.runs.iter().any(|r| r.get_ref() == &entry) {
                self.session.runs.push(toml::Spanned::new(0..0, entry));
                self.mark_dirty();
            }
            for (key, spec) in runs {
                let i = self.add_row(key, spec);
                first.get_or_insert(i);
                listed += 1;
                if self.runs[i].activity == Activity::Idle {
                    effects.extend(self.start(i, false));
                }
            }
        }
        if let Some(i) = first {
            self.run_cursor = i;
            self.focus = Focus::Runs;
        }
        // Runs on a data set still loading or that did not load did not start:
        // start() said why.
        let blocked = self
            .runs
            .get(self.run_cursor)
            .and_then(|r| self.data.get(&r.key.dataset))
            .is_some_and(|d| matches!(d, DataState::Failed(_) | DataState::Loading(_)));
        if blocked {
            let why = std::mem::take(&mut self.message);
            let listed = crate::words::count(listed, "run", "runs");
            self.fail(format!("listed {listed}, none started: {why}"));
        } else {
            let launched = crate::words::count(effects.len(), "run", "runs");
            self.say(format!("launched {launched}"));
        }
        effects
    }

    /// The last message and the selected run's details in full (m): what the status
    /// line and the runs pane may have had to cut.
    fn full_text(&self) -> String {
        let mut parts = vec![format!("Message: {}", self.message)];
        if let Some(row) = self.selected_run() {
            let meaning = crate::methods::get(&row.spec.method)
                .map(|m| m.m_meaning())
                .unwrap_or("m");
            parts.push(format!(
                "Selected run: {}/{} ({}) m={} ({meaning}) seed {}, {} iterations, {}.",
                row.key.dataset,
                row.key.label,
                row.spec.method,
                row.key.m,
                row.key.seed,
                row.spec.iters,
                if row.spec.standardize {
                    "standardized"
                } else {
                    "raw inputs and target"
                }
            ));
            if let Some(why) = self.worse_than_constant(row) {
                parts.push(format!(
                    "! {why}: a constant predictor (the training mean and variance) \
                     predicts better than this run."
                ));
            }
            if let Some(why) = self.collapsed(row) {
                parts.push(format!("! {why}."));
            }
            if let Some(msg) = self.result_of(row).and_then(|r| r.message.as_ref()) {
                parts.push(format!("Run message: {msg}"));
            }
            if let Some(crate::tui::state::Verdict::Differs(d)) = &row.verdict {
                parts.push(format!("Re-run differs: {d}"));
            }
        }
        parts.join("\n\n")
    }
}
