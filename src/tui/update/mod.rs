//! The transition: [`update`]`(app, event) -> effects`, a plain function of the state
//! and one event that returns the effects (I/O, jobs) for the runtime to carry out.
//! Nothing here touches the terminal, the file system or the run pool. Here: opening a
//! session, saving, predictions; by source of the event: `runs` (the run pool, data
//! loading), `input` (keys, dialogs, forms) and `replay` (ticks).

mod binary;
mod figure;
pub mod input;
pub mod replay;
pub mod runs;

use super::state::{
    Activity, App, ChartTab, DataState, Dialog, Effect, Event, Focus, Metric, Opened, PredState,
    PredWant, RunRow,
};
use super::theme::Theme;
use crate::run_spec::{MethodOptions, RunSpec};
use crate::session::autosave::Recovery;
use crate::session::{RunKey, RunResult, Session, base_dir};
use std::collections::HashMap;
use std::path::PathBuf;

/// The plain transition: `update(state, event) -> effects`.
pub fn update(app: &mut App, event: Event) -> Vec<Effect> {
    app.update(event)
}

impl App {
    /// An app on `session` (read from `path`); the effects load its data sets.
    pub fn new(path: PathBuf, session: Session, theme: Theme) -> (App, Vec<Effect>) {
        let mut app = App {
            path,
            session: Session::new("untitled"),
            dirty: false,
            data: HashMap::new(),
            runs: Vec::new(),
            next_id: 0,
            focus: Focus::Runs,
            chart: ChartTab::Evidence,
            metric: Metric::Nmse,
            validation_metric: Metric::Mnlp,
            runs_form_memory: None,
            data_cursor: 0,
            run_cursor: 0,
            pred_input: 0,
            pred_component: 0,
            prediction: PredState::None,
            replay: None,
            dialog: None,
            message: String::new(),
            message_is_error: false,
            theme,
            quit_after_save: false,
            quit: false,
            epoch: 0,
            on_disk: true,
            journal_due: false,
            journal: None,
            autosave_failed: false,
            exit_signal: None,
            cancelled_runs: 0,
            unstarted_runs: 0,
        };
        let effects = app.replace_session(session);
        (app, effects)
    }

    /// Show a session: rows from its run entries and results, data sets to load.
    fn replace_session(&mut self, session: Session) -> Vec<Effect> {
        self.session = session;
        self.epoch += 1;
        self.dirty = false;
        self.journal_due = false;
        self.data.clear();
        self.runs.clear();
        self.data_cursor = 0;
        self.run_cursor = 0;
        self.pred_input = 0;
        self.pred_component = 0;
        self.prediction = PredState::None;
        self.replay = None;
        for (key, spec) in self.session.all_runs() {
            self.add_row(key, spec);
        }
        let orphans: Vec<(RunKey, RunSpec)> = self
            .session
            .results
            .iter()
            .filter(|r| !self.runs.iter().any(|row| row.key == r.key))
            .map(|r| (r.key.clone(), spec_from_result(r)))
            .collect();
        for (key, spec) in orphans {
            self.add_row(key, spec);
        }
        for row in &mut self.runs {
            row.marked = self.session.marked.contains(&row.key);
        }
        let base = base_dir(&self.path);
        let mut effects = Vec::new();
        for d in self.session.datasets.iter().map(|d| d.get_ref().clone()) {
            self.data.insert(d.name.clone(), DataState::Loading(None));
            effects.push(Effect::LoadData {
                name: d.name.clone(),
                epoch: self.epoch,
                entry: d,
                base: base.clone(),
            });
        }
        let count = crate::words::count;
        // an older file's pinned defaults first: they change what its runs do
        let pinned = match self.session.pinned.is_empty() {
            true => String::new(),
            false => format!(
                " · schema {} file: its runs keep {} (that version's default; delete the key \
                 from a run entry for today's)",
                self.session.schema_version,
                self.session.pinned.join(", ")
            ),
        };
        self.message = format!(
            "opened: {}, {}, {}{pinned} · ? lists every key",
            count(self.session.datasets.len(), "data set", "data sets"),
            count(self.runs.len(), "run", "runs"),
            count(self.session.results.len(), "result", "results")
        );
        self.message_is_error = false;
        effects.extend(self.want_prediction());
        effects
    }

    fn add_row(&mut self, key: RunKey, spec: RunSpec) -> usize {
        if let Some(i) = self.runs.iter().position(|r| r.key == key) {
            return i;
        }
        self.runs.push(RunRow {
            key,
            spec,
            activity: Activity::Idle,
            job: None,
            live: Default::default(),
            live_validation: Vec::new(),
            generation: 0,
            rerun_of: None,
            verdict: None,
            marked: false,
        });
        self.runs.len() - 1
    }

    /// The marks changed: the session keeps them (saved with it, so a reopened
    /// session shows the same runs in the evidence chart).
    pub(super) fn marks_changed(&mut self) {
        let marked: Vec<RunKey> = self
            .runs
            .iter()
            .filter(|r| r.marked)
            .map(|r| r.key.clone())
            .collect();
        if marked != self.session.marked {
            self.session.marked = marked;
            self.mark_dirty();
        }
    }

    /// Something worth keeping changed: unsaved, and due for the autosave journal.
    pub(super) fn mark_dirty(&mut self) {
        self.dirty = true;
        self.journal_due = true;
    }

    /// Ask whether to fold an autosave into the session (shown at once).
    pub fn offer_recovery(&mut self, r: Recovery) {
        self.dialog = Some(Dialog::Recover(Box::new(r)));
    }

    /// Take in a session read by the runtime: show it and offer its autosave.
    fn on_opened(&mut self, path: PathBuf, opened: Opened) -> Vec<Effect> {
        let mut e = vec![Effect::CancelAll];
        self.path = path;
        self.on_disk = opened.exists;
        self.journal = None;
        e.extend(self.replace_session(opened.session));
        if !opened.exists {
            self.say(format!(
                "new session: a adds a data set, s saves it to {}",
                self.path.display()
            ));
        }
        if let Some(msg) = opened.recovery_error {
            self.fail(format!("autosave not read: {msg}"));
        }
        if let Some(r) = opened.recovery {
            self.offer_recovery(r);
        }
        e
    }

    /// y/n on the recovery question.
    pub(super) fn on_recover_key(&mut self, r: Box<Recovery>, c: char) -> Vec<Effect> {
        match c {
            'y' | 'Y' => {
                let what = r.summary();
                let journal = r.journal.clone();
                let mut e = self.replace_session(r.session);
                // Unsaved, but the journal already holds it: no rewrite needed.
                self.dirty = true;
                self.journal = Some(journal.clone());
                self.say(format!(
                    "recovered {what} from {} · s saves them into {}",
                    journal.display(),
                    self.path.display()
                ));
                e.extend(self.want_prediction());
                e
            }
            'n' | 'N' => {
                self.say(format!("discarded the autosave {}", r.journal.display()));
                vec![Effect::DropAutosave(self.path.clone())]
            }
            _ => {
                self.dialog = Some(Dialog::Recover(r));
                Vec::new()
            }
        }
    }

    /// SIGTERM, SIGHUP, SIGINT or a lost terminal: stop the runs, autosave what finished,
    /// quit. (A second signal ends the process at once; the runtime sees to that.)
    fn on_signal(&mut self, sig: i32) -> Vec<Effect> {
        self.exit_signal = Some(sig);
        self.cancelled_runs = self.running();
        self.unstarted_runs = self.queued();
        self.quit = true;
        let mut e = vec![Effect::CancelAll];
        if self.dirty {
            e.push(self.autosave_effect());
        }
        e.push(Effect::Quit);
        e
    }

    fn autosave_effect(&mut self) -> Effect {
        self.journal_due = false;
        Effect::Autosave {
            path: self.path.clone(),
            session: Box::new(self.session.clone()),
        }
    }

    fn on_autosaved(&mut self, r: Result<PathBuf, String>) {
        match r {
            Ok(p) => {
                self.journal = Some(p);
                if std::mem::take(&mut self.autosave_failed) {
                    self.say("autosave works again");
                }
            }
            Err(e) => {
                self.autosave_failed = true;
                self.fail(format!("autosave failed: {e} · s saves"));
            }
        }
    }

    fn say(&mut self, msg: impl Into<String>) {
        self.message = msg.into();
        self.message_is_error = false;
    }

    fn fail(&mut self, msg: impl Into<String>) {
        self.message = msg.into();
        self.message_is_error = true;
    }

    /// One event: change the state, return what the runtime must do.
    pub fn update(&mut self, event: Event) -> Vec<Effect> {
        let mut effects = match event {
            Event::Key(k) => self.on_key(k),
            Event::Resize(..) => Vec::new(),
            Event::Tick(dt) => {
                self.tick(dt);
                self.advance_run_clocks(dt);
                Vec::new()
            }
            Event::Job(j) => self.on_job(j),
            Event::DataLoaded {
                name,
                epoch,
                result,
            } => {
                if epoch == self.epoch {
                    self.on_data(name, result);
                }
                Vec::new()
            }
            Event::DataProgress {
                name,
                epoch,
                progress,
            } => {
                if epoch == self.epoch {
                    self.on_data_progress(name, progress);
                }
                Vec::new()
            }
            Event::Predicted { want, result } => {
                // Only the newest request counts; older answers are dropped.
                let current = match &self.prediction {
                    PredState::Pending(w) => Some(w),
                    _ => None,
                };
                if current == Some(&want) {
                    self.prediction = match result {
                        Ok(c) => PredState::Ready(want, c),
                        Err(e) => PredState::Failed(want, e),
                    };
                }
                Vec::new()
            }
            Event::Saved(r) => self.on_saved(r),
            Event::FigureWritten(r) => {
                self.on_figure_written(r);
                Vec::new()
            }
            Event::Autosaved(r) => {
                self.on_autosaved(r);
                Vec::new()
            }
            Event::Opened { path, result } => match result {
                Ok(opened) => self.on_opened(path, *opened),
                Err(msg) => {
                    self.fail(format!("cannot open: {msg}"));
                    Vec::new()
                }
            },
            Event::Signal(sig) => return self.on_signal(sig),
        };
        self.clamp_cursors();
        effects.extend(self.want_prediction());
        if self.journal_due && self.dirty {
            effects.push(self.autosave_effect());
        }
        effects
    }

    fn clamp_cursors(&mut self) {
        self.run_cursor = self.run_cursor.min(self.runs.len().saturating_sub(1));
        self.data_cursor = self
            .data_cursor
            .min(self.session.datasets.len().saturating_sub(1));
    }

    /// Ask for a prediction when the selected run, its result or the input changed.
    fn want_prediction(&mut self) -> Vec<Effect> {
        let Some(row) = self.runs.get(self.run_cursor) else {
            self.prediction = PredState::None;
            return Vec::new();
        };
        let Some(model) = self.result_of(row).and_then(|r| r.model.as_ref()) else {
            self.prediction = PredState::None;
            return Vec::new();
        };
        let Some(DataState::Loaded(data)) = self.data.get(&row.key.dataset) else {
            self.prediction = PredState::None;
            return Vec::new();
        };
        let input = self.pred_input.min(data.dim().saturating_sub(1));
        let want = PredWant {
            key: row.key.clone(),
            input,
            generation: row.generation,
        };
        let have = match &self.prediction {
            PredState::Pending(w) | PredState::Ready(w, _) | PredState::Failed(w, _) => Some(w),
            PredState::None => None,
        };
        if have == Some(&want) {
            return Vec::new();
        }
        let effect = Effect::Predict {
            want: want.clone(),
            model: Box::new(model.clone()),
            data: data.clone(),
        };
        self.prediction = PredState::Pending(want);
        vec![effect]
    }

    fn save(&mut self) -> Vec<Effect> {
        vec![Effect::Save {
            path: self.path.clone(),
            session: Box::new(self.session.clone()),
        }]
    }

    fn on_saved(&mut self, r: Result<PathBuf, String>) -> Vec<Effect> {
        match r {
            Ok(p) => {
                self.dirty = false;
                self.journal_due = false;
                self.on_disk = true;
                self.say(format!("saved {}", p.display()));
                // The file holds everything now: the journal is no longer needed.
                let mut e = vec![Effect::DropAutosave(self.path.clone())];
                self.journal = None;
                if std::mem::take(&mut self.quit_after_save) {
                    self.quit = true;
                    e.push(Effect::Quit);
                }
                return e;
            }
            Err(e) => {
                self.quit_after_save = false;
                self.fail(format!("not saved: {e} · s retries"));
            }
        }
        Vec::new()
    }
}

/// A run spec for a result that has no run entry (only its re-run needs it).
fn spec_from_result(r: &RunResult) -> RunSpec {
    RunSpec {
        method: r.method.clone(),
        m: r.key.m,
        seed: r.key.seed,
        iters: r.iterations.max(1),
        standardize: r.model.as_ref().is_some_and(|m| m.standardize.is_some()),
        options: MethodOptions::default(),
    }
}
