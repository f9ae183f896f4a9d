//! The app's one state transition, [`App::update`]: a plain function of (state, event)
//! that returns the effects (I/O, jobs) for the runtime to carry out. Nothing here
//! touches the terminal, the file system or the run pool.

use super::form::FormOutcome;
use super::format::{fmt_nmse, fmt_opt};
use super::forms::{DatasetChange, Slot, load_form, open_form, refresh_option_fields, runs_form};
use super::state::{
    Activity, App, ChartTab, DataState, Dialog, Effect, Event, Focus, Metric, PredState, PredWant,
    Replay, RunRow, RunStatus, SPEEDS, Verdict,
};
use super::theme::Theme;
use crate::data::Dataset;
use crate::error::Error;
use crate::jobs::{JobEvent, outcome};
use crate::session::{RunEntry, RunKey, RunResult, Session, Status, base_dir};
use crate::train::{MethodOptions, RunSpec};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The replay speed a replay starts at (an index into [`SPEEDS`]).
const DEFAULT_SPEED: usize = 4;

/// Every key, for `?` (the single list the help screen draws).
pub const KEYS: &[(&str, &str)] = &[
    ("?  F1", "this help (any key closes it)"),
    ("Tab", "switch between the Data sets and Runs lists"),
    ("↑ ↓  j k", "move in the list (PgUp PgDn Home End too)"),
    ("1 2 3", "chart: Evidence, Comparison, Prediction"),
    ("a", "add a data set (CSV or Parquet, through polars)"),
    ("e", "edit and reload the selected data set"),
    ("n", "new runs: method, m list, seeds, iterations, options"),
    ("Enter", "start the selected run (if it has not run)"),
    ("g", "start every run that has no result yet"),
    ("x  X", "cancel the selected run / all runs"),
    (
        "R",
        "re-run the selected run with its seed; tells if identical",
    ),
    (
        "r",
        "replay the selected run's evidence curve (r again stops)",
    ),
    ("+ -", "replay speed"),
    (
        "Space",
        "mark a run for the evidence chart (none: all runs)",
    ),
    ("c", "comparison: toggle NMSE / MNLP"),
    ("[ ]", "prediction: previous / next input (data with D > 1)"),
    ("s", "save the session (atomic write)"),
    ("o", "open another session file"),
    ("Esc", "close a dialog, stop a replay, clear marks"),
    ("q  Ctrl-C", "quit (asks first if something is unsaved)"),
];

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
            data_cursor: 0,
            run_cursor: 0,
            pred_input: 0,
            prediction: PredState::None,
            replay: None,
            dialog: None,
            message: String::new(),
            message_is_error: false,
            theme,
            quit_after_save: false,
            quit: false,
            epoch: 0,
        };
        let effects = app.replace_session(session);
        (app, effects)
    }

    /// Show a session: rows from its run entries and results, data sets to load.
    fn replace_session(&mut self, session: Session) -> Vec<Effect> {
        self.session = session;
        self.epoch += 1;
        self.dirty = false;
        self.data.clear();
        self.runs.clear();
        self.data_cursor = 0;
        self.run_cursor = 0;
        self.pred_input = 0;
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
        let base = base_dir(&self.path);
        let mut effects = Vec::new();
        for d in self.session.datasets.iter().map(|d| d.get_ref().clone()) {
            self.data.insert(d.name.clone(), DataState::Loading);
            effects.push(Effect::LoadData {
                name: d.name.clone(),
                epoch: self.epoch,
                entry: d,
                base: base.clone(),
            });
        }
        self.message = format!(
            "opened: {} data sets, {} runs, {} results · ? lists every key",
            self.session.datasets.len(),
            self.runs.len(),
            self.session.results.len()
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
            live: Vec::new(),
            generation: 0,
            rerun_of: None,
            verdict: None,
            marked: false,
        });
        self.runs.len() - 1
    }

    fn say(&mut self, msg: impl Into<String>) {
        self.message = msg.into();
        self.message_is_error = false;
    }

    fn fail(&mut self, msg: impl Into<String>) {
        self.message = msg.into();
        self.message_is_error = true;
    }

    // ---- the transition -----------------------------------------------------------

    pub fn update(&mut self, event: Event) -> Vec<Effect> {
        let mut effects = match event {
            Event::Key(k) => self.on_key(k),
            Event::Resize(..) => Vec::new(),
            Event::Tick(dt) => {
                self.tick(dt);
                Vec::new()
            }
            Event::Job(j) => self.on_job(j),
            Event::DataLoaded {
                name,
                epoch,
                result,
            } => {
                if epoch == self.epoch {
                    self.on_data(name, result)
                } else {
                    Vec::new()
                }
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
            Event::Opened { path, result } => match result {
                Ok(session) => {
                    let mut e = vec![Effect::CancelAll];
                    self.path = path;
                    e.extend(self.replace_session(*session));
                    e
                }
                Err(msg) => {
                    self.fail(format!("cannot open: {msg}"));
                    Vec::new()
                }
            },
        };
        self.clamp_cursors();
        effects.extend(self.want_prediction());
        effects
    }

    fn clamp_cursors(&mut self) {
        self.run_cursor = self.run_cursor.min(self.runs.len().saturating_sub(1));
        self.data_cursor = self
            .data_cursor
            .min(self.session.datasets.len().saturating_sub(1));
    }

    fn tick(&mut self, dt: Duration) {
        let Some(r) = &self.replay else { return };
        let len = self
            .runs
            .iter()
            .find(|row| row.key == r.key)
            .map_or(0, |row| self.trace_of(row).len()) as f64;
        let speed = SPEEDS[r.speed.min(SPEEDS.len() - 1)];
        if let Some(r) = &mut self.replay {
            let before = r.shown;
            r.shown = (r.shown + speed * dt.as_secs_f64()).min(len);
            if before < len && r.shown >= len {
                self.message = "replay finished (r or Esc leaves it)".into();
                self.message_is_error = false;
            }
        }
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

    fn on_job(&mut self, event: JobEvent) -> Vec<Effect> {
        match event {
            JobEvent::Started { id } => {
                if let Some(row) = self.runs.iter_mut().find(|r| r.job == Some(id)) {
                    row.activity = Activity::Running {
                        iteration: 0,
                        nlml: f64::NAN,
                        elapsed: 0.0,
                    };
                }
            }
            JobEvent::Progress {
                id,
                iteration,
                nlml,
                elapsed,
            } => {
                if let Some(row) = self.runs.iter_mut().find(|r| r.job == Some(id)) {
                    row.activity = Activity::Running {
                        iteration,
                        nlml,
                        elapsed,
                    };
                    row.live.push(nlml);
                }
            }
            JobEvent::Finished { id, result } => {
                let Some(i) = self.runs.iter().position(|r| r.job == Some(id)) else {
                    return Vec::new();
                };
                self.finish(i, *result);
            }
        }
        Vec::new()
    }

    fn finish(&mut self, i: usize, result: RunResult) {
        let row = &mut self.runs[i];
        row.job = None;
        row.activity = Activity::Idle;
        row.live.clear();
        row.generation += 1;
        let k = &result.key;
        let name = format!("{}/{} m={} seed {}", k.dataset, k.label, k.m, k.seed);
        let previous = row.rerun_of.take();
        match result.status {
            Status::Done => {
                row.verdict = previous.as_deref().map(|p| compare(p, &result));
                let verdict = match &row.verdict {
                    Some(Verdict::Identical) => " · re-run IDENTICAL to the earlier result",
                    Some(Verdict::Differs(_)) => " · re-run DIFFERS from the earlier result",
                    None => "",
                };
                self.message = format!(
                    "done {name}: NMSE {} MNLP {} ({} it, {:.2} s){verdict}",
                    fmt_nmse(result.nmse),
                    fmt_opt(result.mnlp, 3),
                    result.iterations,
                    result.train_seconds
                );
                self.message_is_error = false;
            }
            Status::Failed => {
                self.message = format!(
                    "failed {name}: {}",
                    result.message.as_deref().unwrap_or("no message")
                );
                self.message_is_error = true;
            }
            Status::Cancelled => {
                if self
                    .session
                    .result(&result.key)
                    .is_some_and(|r| r.status == Status::Done)
                {
                    self.say(format!("cancelled {name}; kept its earlier result"));
                    return;
                }
                self.say(format!("cancelled {name}"));
            }
        }
        self.session.set_result(result);
        self.dirty = true;
    }

    fn on_data(&mut self, name: String, result: Result<Arc<Dataset>, String>) -> Vec<Effect> {
        if !self.data.contains_key(&name) {
            return Vec::new(); // a data set of a session that was closed meanwhile
        }
        match result {
            Ok(d) => {
                // The data sets of a session just opened load quietly (the pane shows them).
                let quiet = self.message.starts_with("opened:") && !self.message_is_error;
                if !quiet {
                    self.say(format!(
                        "loaded {name}: {} training, {} test points, D = {}",
                        d.n_train(),
                        d.n_test(),
                        d.dim()
                    ));
                }
                self.data.insert(name.clone(), DataState::Loaded(d));
            }
            Err(e) => {
                self.fail(format!("cannot load {name}: {e}"));
                self.data.insert(name.clone(), DataState::Failed(e));
            }
        }
        // Runs that waited for this data set start (or fail) now.
        let waiting: Vec<usize> = (0..self.runs.len())
            .filter(|&i| {
                self.runs[i].activity == Activity::Waiting && self.runs[i].key.dataset == name
            })
            .collect();
        let mut effects = Vec::new();
        for i in waiting {
            self.runs[i].activity = Activity::Idle;
            let keep = self.runs[i].rerun_of.take();
            effects.extend(self.start(i, false));
            if self.runs[i].job.is_some() {
                self.runs[i].rerun_of = keep;
            }
        }
        effects
    }

    fn on_saved(&mut self, r: Result<PathBuf, String>) -> Vec<Effect> {
        match r {
            Ok(p) => {
                self.dirty = false;
                self.say(format!("saved {}", p.display()));
                if std::mem::take(&mut self.quit_after_save) {
                    self.quit = true;
                    return vec![Effect::Quit];
                }
            }
            Err(e) => {
                self.quit_after_save = false;
                self.fail(format!("not saved: {e}"));
            }
        }
        Vec::new()
    }

    /// Start run `i` (unless it is already active). With `rerun`, remember its result to
    /// compare the new one with.
    fn start(&mut self, i: usize, rerun: bool) -> Vec<Effect> {
        let Some(row) = self.runs.get(i) else {
            return Vec::new();
        };
        if row.activity != Activity::Idle {
            let s = self.status_of(row).word();
            self.say(format!(
                "{}/{} m={} seed {} is {s}",
                row.key.dataset, row.key.label, row.key.m, row.key.seed
            ));
            return Vec::new();
        }
        let previous = if rerun {
            self.session
                .result(&row.key)
                .filter(|r| r.status == Status::Done)
                .cloned()
                .map(Box::new)
        } else {
            None
        };
        let state = self.data.get(&row.key.dataset).cloned();
        let row = &mut self.runs[i];
        row.verdict = None;
        row.rerun_of = previous;
        row.live.clear();
        match state {
            Some(DataState::Loaded(data)) => {
                let id = self.next_id;
                self.next_id += 1;
                row.job = Some(id);
                row.activity = Activity::Queued;
                vec![Effect::Submit {
                    id,
                    key: row.key.clone(),
                    data,
                    spec: row.spec.clone(),
                }]
            }
            Some(DataState::Loading) => {
                row.activity = Activity::Waiting;
                Vec::new()
            }
            Some(DataState::Failed(msg)) => {
                let r = outcome(row.key.clone(), &row.spec, Err(Error::Data(msg)));
                row.rerun_of = None;
                self.finish_now(i, r);
                Vec::new()
            }
            None => {
                let r = outcome(
                    row.key.clone(),
                    &row.spec,
                    Err(Error::Data(format!(
                        "no data set named '{}'",
                        row.key.dataset
                    ))),
                );
                row.rerun_of = None;
                self.finish_now(i, r);
                Vec::new()
            }
        }
    }

    fn finish_now(&mut self, i: usize, r: RunResult) {
        self.runs[i].activity = Activity::Idle;
        self.finish(i, r);
    }

    // ---- keys ---------------------------------------------------------------------

    fn on_key(&mut self, k: KeyEvent) -> Vec<Effect> {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        // Ctrl-C leaves any form for the quit question (which it leaves alone).
        if ctrl && k.code == KeyCode::Char('c') && !matches!(self.dialog, Some(Dialog::Quit(_))) {
            self.dialog = None;
            return self.ask_quit();
        }
        if let Some(dialog) = self.dialog.take() {
            return self.on_dialog_key(dialog, k);
        }
        match k.code {
            KeyCode::Char('c') if ctrl => return self.ask_quit(),
            KeyCode::Char('q') => return self.ask_quit(),
            KeyCode::Char('?') | KeyCode::F(1) => self.dialog = Some(Dialog::Help),
            KeyCode::Tab | KeyCode::BackTab => {
                self.focus = if self.focus == Focus::Runs {
                    Focus::Datasets
                } else {
                    Focus::Runs
                }
            }
            KeyCode::Char('1') => self.chart = ChartTab::Evidence,
            KeyCode::Char('2') => self.chart = ChartTab::Comparison,
            KeyCode::Char('3') => self.chart = ChartTab::Prediction,
            KeyCode::Up | KeyCode::Char('k') => self.move_cursor(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_cursor(1),
            KeyCode::PageUp => self.move_cursor(-10),
            KeyCode::PageDown => self.move_cursor(10),
            KeyCode::Home => self.move_cursor(-1_000_000),
            KeyCode::End => self.move_cursor(1_000_000),
            KeyCode::Char(' ') => {
                if let Some(r) = self.runs.get_mut(self.run_cursor) {
                    r.marked = !r.marked;
                }
            }
            KeyCode::Char('a') => self.dialog = Some(Dialog::LoadData(load_form(None))),
            KeyCode::Char('e') => match self.selected_dataset() {
                Some(d) => self.dialog = Some(Dialog::LoadData(load_form(Some(d)))),
                None => self.fail("no data set selected (a adds one)"),
            },
            KeyCode::Char('n') => {
                if self.session.datasets.is_empty() {
                    self.fail("add a data set first (a)");
                } else {
                    let ds = self
                        .selected_run()
                        .map(|r| r.key.dataset.clone())
                        .or_else(|| self.comparison_dataset());
                    self.dialog = Some(Dialog::NewRuns(runs_form(&self.session, ds.as_deref())));
                }
            }
            KeyCode::Enter => {
                if self.focus == Focus::Datasets {
                    self.focus = Focus::Runs;
                } else if let Some(row) = self.selected_run() {
                    if self.status_of(row) == RunStatus::NotRun {
                        return self.start(self.run_cursor, false);
                    }
                    self.say("this run has a result: R re-runs it, r replays it");
                }
            }
            KeyCode::Char('g') => {
                let todo: Vec<usize> = (0..self.runs.len())
                    .filter(|&i| self.status_of(&self.runs[i]) == RunStatus::NotRun)
                    .collect();
                if todo.is_empty() {
                    self.say("every run has a result (R re-runs the selected one)");
                }
                return todo
                    .into_iter()
                    .flat_map(|i| self.start(i, false))
                    .collect();
            }
            KeyCode::Char('x') => return self.cancel_selected(),
            KeyCode::Char('X') => {
                let mut effects = vec![Effect::CancelAll];
                for row in &mut self.runs {
                    if row.activity == Activity::Waiting {
                        row.activity = Activity::Idle;
                    }
                }
                let n = self.runs.iter().filter(|r| r.job.is_some()).count();
                self.say(format!("cancelling {n} runs"));
                if n == 0 {
                    effects.clear();
                }
                return effects;
            }
            KeyCode::Char('R') => {
                let i = self.run_cursor;
                return match self.selected_run().map(|r| self.status_of(r)) {
                    Some(
                        RunStatus::Done
                        | RunStatus::Failed
                        | RunStatus::Cancelled
                        | RunStatus::NotRun,
                    ) => {
                        self.say("re-running with the same seed…");
                        self.start(i, true)
                    }
                    Some(s) => {
                        self.say(format!("the run is {}; x cancels it", s.word()));
                        Vec::new()
                    }
                    None => Vec::new(),
                };
            }
            KeyCode::Char('r') => self.toggle_replay(),
            KeyCode::Char('+') | KeyCode::Char('=') => self.change_speed(1),
            KeyCode::Char('-') => self.change_speed(-1),
            KeyCode::Char('c') => {
                self.metric = if self.metric == Metric::Nmse {
                    Metric::Mnlp
                } else {
                    Metric::Nmse
                };
                self.chart = ChartTab::Comparison;
            }
            KeyCode::Char('[') => {
                self.pred_input = self.pred_input.saturating_sub(1);
                self.chart = ChartTab::Prediction;
            }
            KeyCode::Char(']') => {
                let dim = self
                    .selected_run()
                    .and_then(|r| match self.data.get(&r.key.dataset) {
                        Some(DataState::Loaded(d)) => Some(d.dim()),
                        _ => None,
                    });
                self.pred_input = (self.pred_input + 1).min(dim.unwrap_or(1).saturating_sub(1));
                self.chart = ChartTab::Prediction;
            }
            KeyCode::Char('s') => return self.save(),
            KeyCode::Char('o') => {
                self.dialog = Some(Dialog::Open(open_form(&self.path, self.dirty)))
            }
            KeyCode::Esc => {
                if self.replay.take().is_some() {
                    self.say("replay stopped");
                } else {
                    self.runs.iter_mut().for_each(|r| r.marked = false);
                }
            }
            _ => {}
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
            (false, n) => {
                format!("{n} runs are still running or queued; their results will be lost.")
            }
            (true, n) => format!("Unsaved changes, and {n} runs are still running or queued."),
        };
        self.dialog = Some(Dialog::Quit(reason));
        Vec::new()
    }

    fn save(&mut self) -> Vec<Effect> {
        vec![Effect::Save {
            path: self.path.clone(),
            session: Box::new(self.session.clone()),
        }]
    }

    fn cancel_selected(&mut self) -> Vec<Effect> {
        let Some(row) = self.runs.get_mut(self.run_cursor) else {
            return Vec::new();
        };
        match (&row.activity, row.job) {
            (Activity::Waiting, _) => {
                row.activity = Activity::Idle;
                self.say("cancelled before it started");
                Vec::new()
            }
            (_, Some(id)) => {
                self.say("cancelling…");
                vec![Effect::Cancel(id)]
            }
            _ => {
                self.say("the selected run is not running");
                Vec::new()
            }
        }
    }

    fn toggle_replay(&mut self) {
        if self.replay.take().is_some() {
            self.say("replay stopped");
            return;
        }
        let Some(row) = self.selected_run() else {
            return;
        };
        let len = self.result_of(row).map_or(0, |r| r.trace.len());
        if row.activity != Activity::Idle || len == 0 {
            self.fail("replay needs a finished run with a recorded evidence curve");
            return;
        }
        self.replay = Some(Replay {
            key: row.key.clone(),
            shown: 1.0,
            speed: DEFAULT_SPEED,
        });
        self.chart = ChartTab::Evidence;
        self.say(format!(
            "replaying {len} iterations at {} it/s (+/- speed, r stops)",
            SPEEDS[DEFAULT_SPEED]
        ));
    }

    fn change_speed(&mut self, d: i64) {
        if let Some(r) = &mut self.replay {
            r.speed = (r.speed as i64 + d).clamp(0, SPEEDS.len() as i64 - 1) as usize;
            let s = SPEEDS[r.speed];
            self.say(format!("replay speed {s} it/s"));
        } else {
            self.say("+/- set the replay speed; r starts a replay");
        }
    }

    fn on_dialog_key(&mut self, dialog: Dialog, k: KeyEvent) -> Vec<Effect> {
        match dialog {
            Dialog::Help => Vec::new(),
            Dialog::Quit(reason) => match k.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => {
                    self.quit = true;
                    vec![Effect::CancelAll, Effect::Quit]
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
                    Ok((entry, runs)) => self.launch_runs(entry, runs),
                    Err(msg) => {
                        f.error = Some(msg);
                        self.dialog = Some(Dialog::NewRuns(f));
                        Vec::new()
                    }
                },
                FormOutcome::Cancel => Vec::new(),
                FormOutcome::Editing { changed } => {
                    if changed
                        .and_then(|i| f.fields.get(i))
                        .is_some_and(|fd| fd.key == "method")
                    {
                        refresh_option_fields(&mut f);
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
        self.dirty = true;
        self.data_cursor = self
            .session
            .datasets
            .iter()
            .position(|d| d.get_ref().name == name)
            .unwrap_or(0);
        self.focus = Focus::Datasets;
        self.data.insert(name.clone(), DataState::Loading);
        self.say(format!("loading {name}…"));
        vec![Effect::LoadData {
            name,
            epoch: self.epoch,
            entry,
            base: base_dir(&self.path),
        }]
    }

    /// Store a checked run entry, list its runs and start the idle ones.
    fn launch_runs(&mut self, entry: RunEntry, runs: Vec<(RunKey, RunSpec)>) -> Vec<Effect> {
        if !self.session.runs.iter().any(|r| r.get_ref() == &entry) {
            self.session.runs.push(toml::Spanned::new(0..0, entry));
            self.dirty = true;
        }
        let mut effects = Vec::new();
        let mut first = None;
        for (key, spec) in runs {
            let i = self.add_row(key, spec);
            first.get_or_insert(i);
            if self.runs[i].activity == Activity::Idle {
                effects.extend(self.start(i, false));
            }
        }
        if let Some(i) = first {
            self.run_cursor = i;
            self.focus = Focus::Runs;
        }
        self.say(format!("launched {} runs", effects.len()));
        effects
    }
}

/// Whether a re-run reproduced a result: bit-for-bit on the metrics and the trace.
pub fn compare(before: &RunResult, after: &RunResult) -> Verdict {
    let same = |a: Option<f64>, b: Option<f64>| a.map(f64::to_bits) == b.map(f64::to_bits);
    let mut diffs = Vec::new();
    for (name, a, b) in [
        ("NLML", before.nlml, after.nlml),
        ("NMSE", before.nmse, after.nmse),
        ("MNLP", before.mnlp, after.mnlp),
    ] {
        if !same(a, b) {
            diffs.push(format!("{name} {} → {}", fmt_opt(a, 6), fmt_opt(b, 6)));
        }
    }
    let trace_same = before.trace.len() == after.trace.len()
        && before
            .trace
            .iter()
            .zip(&after.trace)
            .all(|(a, b)| a.to_bits() == b.to_bits());
    if !trace_same {
        diffs.push(format!(
            "trace {} → {} points",
            before.trace.len(),
            after.trace.len()
        ));
    }
    if diffs.is_empty() {
        Verdict::Identical
    } else {
        Verdict::Differs(diffs.join(", "))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SCHEMA_VERSION;
    use nalgebra::{DMatrix, DVector};
    use std::path::Path;

    fn key(c: KeyCode) -> Event {
        Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
    }
    fn ch(c: char) -> Event {
        key(KeyCode::Char(c))
    }

    fn session() -> Session {
        Session::parse(&format!(
            r#"
schema_version = {SCHEMA_VERSION}
name = "t"
[[datasets]]
name = "d"
train = "d.csv"
[[runs]]
dataset = "d"
method = "fitc"
m = [5, 10]
iterations = 20
"#
        ))
        .expect("parses")
    }

    fn dataset() -> Arc<Dataset> {
        let n = 30;
        Arc::new(Dataset {
            feature_names: vec!["x".into()],
            target_name: "y".into(),
            x_train: DMatrix::from_fn(n, 1, |i, _| i as f64 / 3.0),
            y_train: DVector::from_fn(n, |i, _| (i as f64 / 3.0).sin()),
            x_test: None,
            y_test: None,
            notes: vec![],
        })
    }

    fn done(key: &RunKey, nmse: f64) -> RunResult {
        RunResult {
            key: key.clone(),
            method: "fitc".into(),
            status: Status::Done,
            message: None,
            nlml: Some(1.0),
            nmse: Some(nmse),
            mnlp: Some(0.5),
            iterations: 3,
            train_seconds: 0.1,
            jitter: None,
            trace: vec![3.0, 2.0, 1.0],
            model: None,
        }
    }

    fn app() -> (App, Vec<Effect>) {
        App::new(
            PathBuf::from("s/t.toml"),
            session(),
            Theme {
                color: true,
                ascii: false,
            },
        )
    }

    fn loaded() -> App {
        let (mut a, _) = app();
        a.update(Event::DataLoaded {
            name: "d".into(),
            epoch: 1,
            result: Ok(dataset()),
        });
        a
    }

    #[test]
    fn opening_loads_every_data_set_and_lists_runs() {
        let (a, effects) = app();
        assert_eq!(a.runs.len(), 2);
        assert!(
            matches!(&effects[..], [Effect::LoadData { name, base, .. }] if name == "d" && base == &PathBuf::from("s"))
        );
        assert_eq!(a.status_of(&a.runs[0]), RunStatus::NotRun);
        assert!(!a.dirty);
    }

    #[test]
    fn a_run_goes_queued_running_done_and_marks_unsaved() {
        let mut a = loaded();
        let e = a.update(key(KeyCode::Enter));
        let [
            Effect::Submit {
                id, key: k, spec, ..
            },
        ] = &e[..]
        else {
            panic!("{e:?}")
        };
        assert_eq!((k.m, spec.iters), (5, 20));
        assert_eq!(a.status_of(&a.runs[0]), RunStatus::Queued);
        a.update(Event::Job(JobEvent::Started { id: *id }));
        a.update(Event::Job(JobEvent::Progress {
            id: *id,
            iteration: 1,
            nlml: 4.0,
            elapsed: 0.1,
        }));
        assert_eq!(a.status_of(&a.runs[0]), RunStatus::Running);
        assert_eq!(a.trace_of(&a.runs[0]), &[4.0]);
        a.update(Event::Job(JobEvent::Finished {
            id: *id,
            result: Box::new(done(k, 0.01)),
        }));
        assert_eq!(a.status_of(&a.runs[0]), RunStatus::Done);
        assert!(
            a.dirty && a.message.contains("NMSE 0.0100"),
            "{}",
            a.message
        );
        assert_eq!(a.trace_of(&a.runs[0]), &[3.0, 2.0, 1.0]);
    }

    #[test]
    fn runs_wait_for_their_data_and_fail_with_its_error() {
        let (mut a, _) = app();
        assert!(a.update(ch('g')).is_empty());
        assert_eq!(a.status_of(&a.runs[1]), RunStatus::Waiting);
        a.update(Event::DataLoaded {
            name: "d".into(),
            epoch: 1,
            result: Err("d.csv: no such file".into()),
        });
        assert_eq!(a.status_of(&a.runs[0]), RunStatus::Failed);
        let r = a.result_of(&a.runs[0]).expect("a failed result");
        assert!(
            r.message
                .as_deref()
                .is_some_and(|m| m.contains("no such file"))
        );
        assert!(a.message_is_error);
    }

    #[test]
    fn waiting_runs_start_when_the_data_arrive() {
        let (mut a, _) = app();
        a.update(ch('g'));
        let e = a.update(Event::DataLoaded {
            name: "d".into(),
            epoch: 1,
            result: Ok(dataset()),
        });
        assert_eq!(
            e.iter()
                .filter(|e| matches!(e, Effect::Submit { .. }))
                .count(),
            2
        );
    }

    #[test]
    fn cancel_one_and_all() {
        let mut a = loaded();
        a.update(ch('g'));
        let e = a.update(ch('x'));
        assert!(matches!(e[..], [Effect::Cancel(0)]));
        let e = a.update(ch('X'));
        assert!(matches!(e[..], [Effect::CancelAll]));
        let k = a.runs[0].key.clone();
        let mut r = done(&k, 1.0);
        r.status = Status::Cancelled;
        a.update(Event::Job(JobEvent::Finished {
            id: 0,
            result: Box::new(r),
        }));
        assert_eq!(a.status_of(&a.runs[0]), RunStatus::Cancelled);
    }

    #[test]
    fn a_cancelled_rerun_keeps_the_earlier_result() {
        let mut a = loaded();
        let k = a.runs[0].key.clone();
        a.session.set_result(done(&k, 0.5));
        a.update(ch('R'));
        let mut r = done(&k, 1.0);
        r.status = Status::Cancelled;
        a.update(Event::Job(JobEvent::Finished {
            id: 0,
            result: Box::new(r),
        }));
        assert_eq!(a.result_of(&a.runs[0]).and_then(|r| r.nmse), Some(0.5));
    }

    #[test]
    fn rerun_reports_identical_or_different() {
        let mut a = loaded();
        let k = a.runs[0].key.clone();
        a.session.set_result(done(&k, 0.5));
        let e = a.update(ch('R'));
        assert!(matches!(e[..], [Effect::Submit { id: 0, .. }]));
        a.update(Event::Job(JobEvent::Finished {
            id: 0,
            result: Box::new(done(&k, 0.5)),
        }));
        assert_eq!(a.runs[0].verdict, Some(Verdict::Identical));
        assert!(a.message.contains("IDENTICAL"));
        a.update(ch('R'));
        a.update(Event::Job(JobEvent::Finished {
            id: 1,
            result: Box::new(done(&k, 0.25)),
        }));
        assert!(matches!(&a.runs[0].verdict, Some(Verdict::Differs(d)) if d.contains("NMSE")));
    }

    #[test]
    fn stale_job_events_are_ignored() {
        let mut a = loaded();
        let k = a.runs[0].key.clone();
        assert!(
            a.update(Event::Job(JobEvent::Finished {
                id: 42,
                result: Box::new(done(&k, 0.5))
            }))
            .is_empty()
        );
        assert!(a.session.results.is_empty());
    }

    #[test]
    fn quit_asks_when_unsaved_and_save_then_quits() {
        let mut a = loaded();
        assert!(matches!(
            a.update(ch('q'))[..],
            [Effect::CancelAll, Effect::Quit]
        ));
        let mut a = loaded();
        a.dirty = true;
        assert!(a.update(ch('q')).is_empty());
        assert!(matches!(a.dialog, Some(Dialog::Quit(_))));
        assert!(a.update(ch('n')).is_empty() && a.dialog.is_none() && !a.quit);
        a.update(ch('q'));
        let e = a.update(ch('s'));
        assert!(matches!(e.last(), Some(Effect::Save { .. })));
        let e = a.update(Event::Saved(Ok("s/t.toml".into())));
        assert!(matches!(e[..], [Effect::Quit]) && a.quit && !a.dirty);
    }

    #[test]
    fn a_failed_save_keeps_the_app_open() {
        let mut a = loaded();
        a.dirty = true;
        a.update(ch('q'));
        a.update(ch('s'));
        assert!(a.update(Event::Saved(Err("disk full".into()))).is_empty());
        assert!(!a.quit && a.dirty && a.message_is_error);
    }

    #[test]
    fn replay_advances_with_ticks_and_speed() {
        let mut a = loaded();
        let k = a.runs[0].key.clone();
        let mut r = done(&k, 0.5);
        r.trace = (0..100).map(|i| 100.0 - i as f64).collect();
        a.session.set_result(r);
        a.update(ch('r'));
        assert!(a.animating());
        a.update(Event::Tick(Duration::from_secs(1)));
        assert_eq!(a.replay.as_ref().map(|r| r.shown), Some(21.0));
        a.update(ch('+'));
        a.update(Event::Tick(Duration::from_secs(10)));
        assert_eq!(a.replay.as_ref().map(|r| r.shown), Some(100.0));
        assert!(!a.animating());
        a.update(ch('r'));
        assert!(a.replay.is_none());
    }

    #[test]
    fn replay_needs_a_trace() {
        let mut a = loaded();
        a.update(ch('r'));
        assert!(a.replay.is_none() && a.message_is_error);
    }

    fn type_text(a: &mut App, s: &str) {
        for c in s.chars() {
            a.update(ch(c));
        }
    }

    fn clear_field(a: &mut App) {
        a.update(Event::Key(KeyEvent::new(
            KeyCode::Char('u'),
            KeyModifiers::CONTROL,
        )));
    }

    #[test]
    fn the_runs_form_validates_and_launches() {
        let mut a = loaded();
        a.update(ch('n'));
        // dataset, method(fitc), m
        a.update(key(KeyCode::Down));
        a.update(key(KeyCode::Down));
        clear_field(&mut a);
        type_text(&mut a, "0");
        assert!(a.update(key(KeyCode::Enter)).is_empty());
        let Some(Dialog::NewRuns(f)) = &a.dialog else {
            panic!("form closed")
        };
        assert!(
            f.error
                .as_deref()
                .is_some_and(|e| e.contains("m must be at least 1")),
            "{:?}",
            f.error
        );
        clear_field(&mut a);
        type_text(&mut a, "500");
        a.update(key(KeyCode::Enter));
        let Some(Dialog::NewRuns(f)) = &a.dialog else {
            panic!("form closed")
        };
        assert!(
            f.error
                .as_deref()
                .is_some_and(|e| e.contains("larger than the training set")),
            "{:?}",
            f.error
        );
        clear_field(&mut a);
        type_text(&mut a, "3, 4");
        a.update(key(KeyCode::Down));
        clear_field(&mut a);
        type_text(&mut a, "1-2");
        let e = a.update(key(KeyCode::Enter));
        assert!(a.dialog.is_none());
        assert_eq!(
            e.iter()
                .filter(|e| matches!(e, Effect::Submit { .. }))
                .count(),
            4
        );
        assert_eq!(a.runs.len(), 6);
        assert_eq!(a.session.runs.len(), 2);
        assert!(a.dirty);
    }

    #[test]
    fn the_runs_form_lists_the_methods_options_and_rejects_bad_values() {
        let mut a = loaded();
        a.update(ch('n'));
        let Some(Dialog::NewRuns(f)) = &a.dialog else {
            panic!("no form")
        };
        assert!(f.get("opt:subset").is_some());
        let subset = f
            .fields
            .iter()
            .position(|x| x.key == "opt:subset")
            .expect("subset field");
        for _ in 0..subset {
            a.update(key(KeyCode::Down));
        }
        type_text(&mut a, "many");
        a.update(key(KeyCode::Enter));
        let Some(Dialog::NewRuns(f)) = &a.dialog else {
            panic!("form closed")
        };
        assert!(
            f.error.as_deref().is_some_and(|e| e.contains("options")),
            "{:?}",
            f.error
        );
    }

    #[test]
    fn the_same_key_with_other_settings_needs_a_label() {
        let mut a = loaded();
        a.update(ch('n'));
        for _ in 0..2 {
            a.update(key(KeyCode::Down));
        }
        clear_field(&mut a);
        type_text(&mut a, "5");
        a.update(key(KeyCode::Down));
        a.update(key(KeyCode::Down));
        clear_field(&mut a);
        type_text(&mut a, "7");
        a.update(key(KeyCode::Enter));
        let Some(Dialog::NewRuns(f)) = &a.dialog else {
            panic!("form closed")
        };
        assert!(
            f.error.as_deref().is_some_and(|e| e.contains("label")),
            "{:?}",
            f.error
        );
    }

    #[test]
    fn the_load_form_adds_a_data_set_and_errors_show() {
        let mut a = loaded();
        a.update(ch('a'));
        type_text(&mut a, "new");
        a.update(key(KeyCode::Down));
        type_text(&mut a, "x.csv");
        a.update(key(KeyCode::Down));
        a.update(key(KeyCode::Down));
        type_text(&mut a, "1.5");
        a.update(key(KeyCode::Enter));
        let Some(Dialog::LoadData(f)) = &a.dialog else {
            panic!("form closed")
        };
        assert!(
            f.error
                .as_deref()
                .is_some_and(|e| e.contains("between 0 and 1"))
        );
        a.update(key(KeyCode::Backspace));
        a.update(key(KeyCode::Backspace));
        a.update(key(KeyCode::Backspace));
        type_text(&mut a, ".8");
        let e = a.update(key(KeyCode::Enter));
        assert!(
            matches!(&e[..], [Effect::LoadData { name, entry, .. }] if name == "new" && entry.split == Some(0.8)),
            "{e:?}"
        );
        assert_eq!(a.session.datasets.len(), 2);
        a.update(Event::DataLoaded {
            name: "new".into(),
            epoch: 1,
            result: Err("x.csv: column 'y' is text".into()),
        });
        assert!(matches!(a.data.get("new"), Some(DataState::Failed(m)) if m.contains("text")));
        assert!(a.message.contains("cannot load new"));
    }

    #[test]
    fn opening_replaces_the_session_and_cancels_runs() {
        let mut a = loaded();
        a.update(ch('o'));
        let e = a.update(key(KeyCode::Enter));
        assert!(matches!(&e[..], [Effect::Open(p)] if p == &PathBuf::from("s/t.toml")));
        let e = a.update(Event::Opened {
            path: "other.toml".into(),
            result: Ok(Box::new(session())),
        });
        assert!(matches!(e[0], Effect::CancelAll));
        assert_eq!(a.path, PathBuf::from("other.toml"));
        a.update(Event::Opened {
            path: "bad.toml".into(),
            result: Err("line 3: bad".into()),
        });
        assert!(a.message_is_error && a.path == Path::new("other.toml"));
        // A load answered for the closed session is dropped.
        a.update(Event::DataLoaded {
            name: "d".into(),
            epoch: 1,
            result: Err("stale".into()),
        });
        assert!(matches!(a.data.get("d"), Some(DataState::Loading)));
    }

    #[test]
    fn keys_move_focus_charts_and_metric() {
        let mut a = loaded();
        a.update(key(KeyCode::Down));
        assert_eq!(a.run_cursor, 1);
        a.update(key(KeyCode::Down));
        assert_eq!(a.run_cursor, 1);
        a.update(key(KeyCode::Tab));
        assert_eq!(a.focus, Focus::Datasets);
        a.update(ch('3'));
        assert_eq!(a.chart, ChartTab::Prediction);
        a.update(ch('c'));
        assert_eq!((a.chart, a.metric), (ChartTab::Comparison, Metric::Mnlp));
        a.update(ch('?'));
        assert!(matches!(a.dialog, Some(Dialog::Help)));
        a.update(ch('z'));
        assert!(a.dialog.is_none());
        a.update(ch('n'));
        let e = a.update(Event::Key(KeyEvent::new(
            KeyCode::Char('c'),
            KeyModifiers::CONTROL,
        )));
        assert!(matches!(e[..], [Effect::CancelAll, Effect::Quit]) && a.quit);
    }

    #[test]
    fn prediction_is_requested_once_per_run_and_result() {
        let mut a = loaded();
        let k = a.runs[0].key.clone();
        let mut r = done(&k, 0.5);
        r.model = Some(crate::model_file::ModelFile::new(
            "fitc",
            crate::model_file::Hyper {
                signal_variance: 1.0,
                lengthscales: vec![1.0],
                noise_variance: 0.1,
            },
        ));
        a.session.set_result(r);
        let e = a.update(Event::Resize(80, 24));
        let [Effect::Predict { want, .. }] = &e[..] else {
            panic!("{e:?}")
        };
        let want = want.clone();
        assert!(a.update(Event::Resize(80, 24)).is_empty());
        a.update(Event::Predicted {
            want: want.clone(),
            result: Err("boom".into()),
        });
        assert!(matches!(&a.prediction, PredState::Failed(_, m) if m == "boom"));
        assert!(a.update(Event::Resize(80, 24)).is_empty());
    }
}
