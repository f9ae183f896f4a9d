//! The app's state: the [`App`] and the plain data it holds, the events that change it,
//! the effects a change asks for, and the read-only queries the views make. Changing it
//! is `update`'s business; nothing here touches the terminal, files or the run pool.

use super::form::Form;
use super::format::fmt_nmse;
use super::predict::Curves;
use super::theme::Theme;
use crate::data::{Dataset, LoadProgress};
use crate::jobs::{JobEvent, RunId};
use crate::methods::ValidRunSpec;
use crate::results::ValidationPoint;
use crate::run_context::Phase;
use crate::run_spec::RunSpec;
use crate::session::autosave::Recovery;
use crate::session::{DatasetEntry, RunKey, RunResult, Session, Status};
use ratatui::crossterm::event::KeyEvent;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Replay speeds in iterations per second.
pub const SPEEDS: &[f64] = &[1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0];

#[derive(Clone, Debug)]
pub enum DataState {
    /// Being read on a background thread: how far it has come (none: not heard yet).
    Loading(Option<LoadProgress>),
    Loaded(Arc<Dataset>),
    Failed(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Activity {
    Idle,
    Queued,
    Running {
        phase: Phase,
        iteration: usize,
        /// The leading fit's last objective ([`LiveFits::leader`]); none before a fit
        /// reports (a subset pre-fit's is not the run's evidence).
        nlml: Option<f64>,
        elapsed: f64,
    },
}

/// What a running run has reported of its fits: the objective per iteration of the
/// first start's fit (from its first evaluation on) and of the second start's, which
/// the run races (docs/methods.md §0.4), and which of them was dropped behind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveFits {
    pub first: Vec<f64>,
    pub second: Vec<f64>,
    /// (whether it was the second start's fit, the iteration it was stopped at).
    pub dropped: Option<(bool, usize)>,
}

impl LiveFits {
    /// Take one progress report: a fit's objective, or a start dropped.
    pub fn report(&mut self, phase: Phase, iteration: usize, nlml: Option<f64>) {
        match (phase, nlml) {
            (Phase::Fit { .. }, Some(v)) => self.first.push(v),
            (Phase::SecondStart, Some(v)) => self.second.push(v),
            (Phase::Dropped { second }, _) => self.dropped = Some((second, iteration)),
            _ => {}
        }
    }

    /// The curve to draw: the fit still running with the lower objective (the one the
    /// run would keep now); the first start's until the second has reported.
    pub fn leader(&self) -> &[f64] {
        let (first, second) = (&self.first[..], &self.second[..]);
        match self.dropped {
            Some((true, _)) => first,
            Some((false, _)) => second,
            None => match (first.last(), second.last()) {
                (Some(a), Some(b)) if b < a => second,
                (None, Some(_)) => second,
                _ => first,
            },
        }
    }

    pub fn clear(&mut self) {
        *self = LiveFits::default();
    }
}

/// What the runs list shows for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    NotRun,
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl RunStatus {
    pub fn word(self) -> &'static str {
        match self {
            RunStatus::NotRun => "not run",
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancel",
        }
    }
}

/// Whether a re-run with the same seed reproduced the earlier result.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Identical,
    Differs(String),
}

#[derive(Clone, Debug)]
pub struct RunRow {
    pub key: RunKey,
    pub spec: RunSpec,
    pub activity: Activity,
    /// The job currently working on this run.
    pub job: Option<RunId>,
    /// NLML per iteration of each start's fit while it runs.
    pub live: LiveFits,
    /// Validation scores while it runs (`--validation`).
    pub live_validation: Vec<ValidationPoint>,
    /// Bumped on every finished result (the prediction pane recomputes on change).
    pub generation: u64,
    /// The result an `R` re-run is compared with.
    pub rerun_of: Option<Box<RunResult>>,
    pub verdict: Option<Verdict>,
    pub marked: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Datasets,
    Runs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartTab {
    Evidence,
    Comparison,
    Prediction,
}

pub use crate::chart::Metric;

#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    pub key: RunKey,
    /// Trace points shown so far (fractional: advanced by ticks).
    pub shown: f64,
    pub speed: usize,
}

/// What the prediction pane is for: run, input, and the result's generation.
#[derive(Clone, Debug, PartialEq)]
pub struct PredWant {
    pub key: RunKey,
    pub input: usize,
    pub generation: u64,
}

#[derive(Clone, Debug)]
pub enum PredState {
    None,
    Pending(PredWant),
    Ready(PredWant, Arc<Curves>),
    Failed(PredWant, String),
}

#[derive(Clone, Debug)]
pub enum Dialog {
    Help,
    /// Quit with unsaved results or active runs: the reason.
    Quit(String),
    Open(Form),
    LoadData(Form),
    NewRuns(Form),
    /// A text in full (m, or F2 in a form); any key closes it, back to `back`.
    Text {
        title: String,
        body: String,
        back: Option<Box<Dialog>>,
    },
    /// An autosave holds what the session file lacks: recover it (y) or discard it (n).
    Recover(Box<Recovery>),
}

/// A session read (or started) for the app, with what its autosave would add.
#[derive(Clone, Debug)]
pub struct Opened {
    pub session: Session,
    /// The file exists (false: a new session, written on the first save).
    pub exists: bool,
    pub recovery: Option<Recovery>,
    /// The autosave beside the file could not be read.
    pub recovery_error: Option<String>,
}

#[derive(Clone, Debug)]
pub enum Event {
    Key(KeyEvent),
    Resize(u16, u16),
    /// Time passed (drives the replay animation).
    Tick(Duration),
    Job(JobEvent),
    /// A data set being loaded read more rows (`epoch` as for `DataLoaded`).
    DataProgress {
        name: String,
        epoch: u64,
        progress: LoadProgress,
    },
    /// `epoch` is the one of the load request (a session opened since makes it stale).
    DataLoaded {
        name: String,
        epoch: u64,
        result: Result<Arc<Dataset>, String>,
    },
    Predicted {
        want: PredWant,
        result: Result<Arc<Curves>, String>,
    },
    Saved(Result<PathBuf, String>),
    /// The figure of `P` was written (its path) or could not be.
    FigureWritten(Result<PathBuf, String>),
    /// The autosave journal was written (its path) or could not be.
    Autosaved(Result<PathBuf, String>),
    Opened {
        path: PathBuf,
        result: Result<Box<Opened>, String>,
    },
    /// SIGTERM, SIGHUP or SIGINT (or the terminal went away: SIGHUP): autosave what
    /// finished and quit.
    Signal(i32),
}

#[derive(Clone, Debug)]
pub enum Effect {
    LoadData {
        name: String,
        epoch: u64,
        entry: DatasetEntry,
        base: PathBuf,
    },
    Submit {
        id: RunId,
        key: RunKey,
        data: Arc<Dataset>,
        /// Boxed: a spec carries every option, and the other effects are small.
        spec: Box<ValidRunSpec>,
    },
    Cancel(RunId),
    CancelAll,
    Save {
        path: PathBuf,
        session: Box<Session>,
    },
    /// Write the autosave journal of the session at `path`.
    Autosave {
        path: PathBuf,
        session: Box<Session>,
    },
    /// Remove the autosave journal of the session at `path` (saved or discarded).
    DropAutosave(PathBuf),
    Open(PathBuf),
    /// Write a figure (`P`): the SVG text to `path`.
    WriteFigure {
        path: PathBuf,
        svg: String,
    },
    Predict {
        want: PredWant,
        model: Box<crate::model_file::ModelFile>,
        data: Arc<Dataset>,
    },
    Quit,
}

/// Everything the screen shows and the keys act on. `App::new` (with the transition,
/// since opening a session asks for its data sets to load) builds it.
#[derive(Clone, Debug)]
pub struct App {
    pub path: PathBuf,
    pub session: Session,
    /// Something (results, data sets, runs) changed since the last save or open.
    pub dirty: bool,
    pub data: HashMap<String, DataState>,
    pub runs: Vec<RunRow>,
    pub next_id: RunId,
    pub focus: Focus,
    pub chart: ChartTab,
    pub metric: Metric,
    /// The new-runs form as last used in this app session (its values come back).
    pub runs_form_memory: Option<Form>,
    /// What the validation panel under the evidence curves shows.
    pub validation_metric: Metric,
    pub data_cursor: usize,
    pub run_cursor: usize,
    pub pred_input: usize,
    /// What the prediction chart shows: 0 the total, k the kernel's k-th summand.
    pub pred_component: usize,
    pub prediction: PredState,
    pub replay: Option<Replay>,
    pub dialog: Option<Dialog>,
    pub message: String,
    pub message_is_error: bool,
    pub theme: Theme,
    pub quit_after_save: bool,
    pub quit: bool,
    /// Counts opened sessions, so late answers for a closed one are dropped.
    pub epoch: u64,
    /// The session file exists (false until a new session is first saved).
    pub on_disk: bool,
    /// Something changed that the autosave journal does not hold yet.
    pub journal_due: bool,
    /// The journal this app wrote and has not removed (it holds unsaved work).
    pub journal: Option<PathBuf>,
    /// The last autosave failed (the message said so; the next success says it works).
    pub autosave_failed: bool,
    /// The signal that ended the app, and how many runs were training (they are
    /// cancelled, and recorded so) and queued (they never start) then.
    pub exit_signal: Option<i32>,
    pub cancelled_runs: usize,
    pub unstarted_runs: usize,
}

/// What the views ask.
impl App {
    pub fn status_of(&self, row: &RunRow) -> RunStatus {
        match row.activity {
            Activity::Queued => RunStatus::Queued,
            Activity::Running { .. } => RunStatus::Running,
            Activity::Idle => match self.session.result(&row.key).map(|r| r.status) {
                None => RunStatus::NotRun,
                Some(Status::Done) => RunStatus::Done,
                Some(Status::Failed) => RunStatus::Failed,
                Some(Status::Cancelled) => RunStatus::Cancelled,
            },
        }
    }

    pub fn result_of(&self, row: &RunRow) -> Option<&RunResult> {
        self.session.result(&row.key)
    }

    /// NLML per iteration as drawn: live while running, else the recorded trace.
    pub fn trace_of<'a>(&'a self, row: &'a RunRow) -> &'a [f64] {
        if row.activity != Activity::Idle {
            return row.live.leader();
        }
        self.result_of(row).map_or(&[][..], |r| &r.trace)
    }

    /// Validation scores as drawn: live while it runs, else the recorded ones.
    pub fn validation_of<'a>(&'a self, row: &'a RunRow) -> &'a [ValidationPoint] {
        if row.activity != Activity::Idle {
            return &row.live_validation;
        }
        self.result_of(row).map_or(&[][..], |r| &r.validation)
    }

    /// A finished run that collapsed to the constant predictor, in a sentence with
    /// what to try.
    pub fn collapsed(&self, row: &RunRow) -> Option<String> {
        self.result_of(row)
            .filter(|r| row.activity == Activity::Idle && r.collapsed().is_some())
            .and_then(|r| r.model.as_ref())
            .and_then(|m| m.collapse_note())
    }

    /// Why a run predicts worse than a constant predictor (the training mean and
    /// variance), in a few words, if it does: a finished run's test NMSE above 1 or test MNLP above the
    /// constant's; or the validation NMSE above 1 (worse than the mean) at its latest
    /// scoring — live while it trains — or, with early stopping, at the kept iterate.
    pub fn worse_than_constant(&self, row: &RunRow) -> Option<String> {
        let result = self
            .result_of(row)
            .filter(|r| row.activity == Activity::Idle && r.status == Status::Done);
        if let Some(r) = result.filter(|r| r.worse_than_constant()) {
            return Some(match (r.mnlp, r.constant_mnlp) {
                (Some(a), Some(b)) if a > b => {
                    format!("test MNLP {a:.3} > the constant's {b:.3}")
                }
                _ => format!("test NMSE {} > 1 (the mean's)", fmt_nmse(r.nmse)),
            });
        }
        let points = self.validation_of(row);
        let kept = result.and_then(|r| r.best_iteration);
        let point = match kept {
            Some(it) => points.iter().find(|p| p.iteration == it),
            None => points.last(),
        };
        point.filter(|p| p.nmse > 1.0).map(|p| {
            format!(
                "validation NMSE {} > 1 (the mean's) at iteration {}",
                fmt_nmse(Some(p.nmse)),
                p.iteration
            )
        })
    }

    pub fn selected_run(&self) -> Option<&RunRow> {
        self.runs.get(self.run_cursor)
    }

    pub fn selected_dataset(&self) -> Option<&DatasetEntry> {
        self.session
            .datasets
            .get(self.data_cursor)
            .map(|d| d.get_ref())
    }

    /// The data set the comparison is for: the one selected in the Data sets list.
    pub fn comparison_dataset(&self) -> Option<String> {
        self.selected_dataset().map(|d| d.name.clone())
    }

    /// The session's labels in series order: a label's position is its colour in the
    /// runs table and the comparison chart.
    pub fn label_order(&self) -> Vec<String> {
        crate::chart::label_order(
            self.runs
                .iter()
                .map(|r| (r.spec.method.as_str(), r.key.label.as_str())),
        )
    }

    /// The evidence chart's curves, at most about `max_points` points each: the runs
    /// it shows, live while they run, a replayed run up to the animation's position.
    pub fn evidence_curves(&self, max_points: usize) -> Vec<crate::chart::evidence::RunCurve> {
        let traces = self
            .evidence_runs()
            .into_iter()
            .map(|row| {
                let mut trace = self.trace_of(row);
                let mut points = self.validation_of(row);
                if let Some(r) = self.replay.as_ref().filter(|r| r.key == row.key) {
                    let upto = (r.shown.floor() as usize)
                        .clamp(1, trace.len().max(1))
                        .min(trace.len());
                    trace = &trace[..upto];
                    let last = points.partition_point(|p| p.iteration < upto);
                    points = &points[..last];
                }
                crate::chart::evidence::RunTrace {
                    key: &row.key,
                    method: &row.spec.method,
                    trace,
                    validation: points,
                    best_iteration: self.result_of(row).and_then(|r| r.best_iteration),
                    // a recorded run's model; a live run has none yet
                    marks: self
                        .result_of(row)
                        .filter(|_| row.activity == Activity::Idle)
                        .map(crate::chart::evidence::marks_of)
                        .unwrap_or_default(),
                }
            })
            .collect();
        crate::chart::evidence::curves(traces, max_points, self.validation_metric)
    }

    /// Runs the evidence chart shows: the marked ones, else every run with a curve on
    /// the selected data set (NLMLs of different data sets do not share a scale).
    pub fn evidence_runs(&self) -> Vec<&RunRow> {
        if let Some(r) = &self.replay {
            return self.runs.iter().filter(|row| row.key == r.key).collect();
        }
        let marked: Vec<&RunRow> = self.runs.iter().filter(|r| r.marked).collect();
        if !marked.is_empty() {
            return marked;
        }
        let ds = self.comparison_dataset();
        self.runs
            .iter()
            .filter(|r| Some(&r.key.dataset) == ds.as_ref() && !self.trace_of(r).is_empty())
            .collect()
    }

    pub fn running(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| matches!(r.activity, Activity::Running { .. }))
            .count()
    }

    pub fn queued(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.activity == Activity::Queued)
            .count()
    }

    /// A replay or a live run needs ticks.
    pub fn animating(&self) -> bool {
        self.replay.as_ref().is_some_and(|r| {
            let len = self
                .runs
                .iter()
                .find(|row| row.key == r.key)
                .map_or(0, |row| self.trace_of(row).len());
            r.shown < len as f64
        })
    }
}
