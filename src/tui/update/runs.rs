//! Runs: starting and cancelling them, the run pool's progress and results, and the
//! data sets they wait for.

use crate::data::{Dataset, LoadProgress};
use crate::error::Error;
use crate::jobs::{JobEvent, outcome};
use crate::run_context::Phase;
use crate::run_spec::Naming;
use crate::session::{RunResult, Status};
use crate::tui::format::{describe_load, fmt_nmse, fmt_opt};
use crate::tui::state::{Activity, App, DataState, Effect, RunStatus, Verdict};
use std::sync::Arc;

impl App {
    /// Whether a run is training (the runtime then sends ticks, so that its time keeps
    /// counting between progress reports).
    pub fn has_running(&self) -> bool {
        self.runs
            .iter()
            .any(|r| matches!(r.activity, Activity::Running { .. }))
    }

    /// A tick: the running runs' times advance by `dt`. A long evaluation (the exact
    /// GP's factorisation) sends no progress for minutes, and the time column had stood
    /// still at the last report; the next report sets the time the run measured.
    pub(super) fn advance_run_clocks(&mut self, dt: std::time::Duration) {
        for row in &mut self.runs {
            if let Activity::Running { elapsed, .. } = &mut row.activity {
                *elapsed += dt.as_secs_f64();
            }
        }
    }

    pub(super) fn on_job(&mut self, event: JobEvent) -> Vec<Effect> {
        match event {
            JobEvent::Started { id } => {
                if let Some(row) = self.runs.iter_mut().find(|r| r.job == Some(id)) {
                    row.activity = Activity::Running {
                        phase: Phase::Fit { stage: 0 },
                        iteration: 0,
                        nlml: None,
                        elapsed: 0.0,
                    };
                }
            }
            JobEvent::Progress {
                id,
                phase,
                iteration,
                nlml,
                elapsed,
                validation,
            } => {
                if let Some(row) = self.runs.iter_mut().find(|r| r.job == Some(id)) {
                    if let Some((nmse, mnlp)) = validation {
                        row.live_validation.push(crate::results::ValidationPoint {
                            iteration,
                            nmse,
                            mnlp,
                        });
                        return Vec::new();
                    }
                    // the evidence curve is the fits' from their first evaluation (a
                    // subset pre-fit's objective is not the run's evidence)
                    row.live.report(phase, iteration, nlml);
                    row.activity = Activity::Running {
                        phase,
                        iteration,
                        nlml: row.live.leader().last().copied(),
                        elapsed,
                    };
                }
            }
            JobEvent::Finished { id, result } => {
                let Some(i) = self.runs.iter().position(|r| r.job == Some(id)) else {
                    return Vec::new();
                };
                self.finish(i, *result);
            }
            // Cancelled while queued: no result, so the run shows what it showed before
            // it was queued ("not run", or its earlier result), as `sgpw run` leaves it.
            JobEvent::NotStarted { id, .. } => {
                if let Some(row) = self.runs.iter_mut().find(|r| r.job == Some(id)) {
                    row.job = None;
                    row.activity = Activity::Idle;
                    row.live.clear();
                    row.live_validation.clear();
                    row.rerun_of = None;
                }
            }
        }
        Vec::new()
    }

    fn finish(&mut self, i: usize, result: RunResult) {
        let row = &mut self.runs[i];
        row.job = None;
        row.activity = Activity::Idle;
        row.live.clear();
        row.live_validation.clear();
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
                let worse = if result.collapsed().is_some() {
                    " · ! collapsed to a constant predictor"
                } else if result.worse_than_constant() {
                    " · ! worse than a constant predictor"
                } else {
                    ""
                };
                let restarted = if result.collapse_restart().is_some() {
                    " · restarted after collapsing (from a full GP fitted on a subset)"
                } else if result.second_start().is_some_and(|s| s.kept_second) {
                    " · kept the start fitted on a subset"
                } else {
                    ""
                };
                self.message = format!(
                    "done {name}: NMSE {} MNLP {} ({} it, {:.2} s){verdict}{restarted}{worse}",
                    fmt_nmse(result.nmse),
                    fmt_opt(result.mnlp, 3),
                    result.iterations,
                    result.train_seconds
                );
                self.message_is_error = !worse.is_empty();
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
        self.mark_dirty();
    }

    pub(super) fn on_data(&mut self, name: String, result: Result<Arc<Dataset>, String>) {
        if !self.data.contains_key(&name) {
            return; // a data set of a session that was closed meanwhile
        }
        match result {
            Ok(d) => {
                // The data sets of a session just opened load quietly (the pane shows them).
                let quiet = (self.message.starts_with("opened:")
                    || self.message.starts_with("recovered ")
                    || self.message.starts_with("new session"))
                    && !self.message_is_error;
                let line = format!(
                    "loaded {name}: {} training, {} test points, D = {}",
                    d.n_train(),
                    d.n_test(),
                    d.dim()
                );
                self.data.insert(name.clone(), DataState::Loaded(d));
                if !quiet {
                    let binary = self.binary_note(&name).unwrap_or_default();
                    self.say(format!("{line}{binary}"));
                }
            }
            Err(e) => {
                self.fail(format!("cannot load {name}: {e} (e edits it)"));
                self.data.insert(name, DataState::Failed(e));
            }
        }
    }

    /// A data set being loaded read more rows: the pane shows it, and so does the
    /// message while it is about this load.
    pub(super) fn on_data_progress(&mut self, name: String, progress: LoadProgress) {
        let Some(DataState::Loading(p)) = self.data.get_mut(&name) else {
            return; // loaded or failed meanwhile, or a closed session's
        };
        *p = Some(progress.clone());
        if self.message.starts_with(&format!("loading {name}")) && !self.message_is_error {
            self.say(format!("loading {name}: {}", describe_load(&progress)));
        }
    }

    /// "big is still loading (big.parquet: 1.2M rows, 60%…)".
    fn still_loading(&self, name: &str) -> String {
        match self.data.get(name) {
            Some(DataState::Loading(Some(p))) => {
                format!("{name} is still loading ({})", describe_load(p))
            }
            _ => format!("{name} is still loading"),
        }
    }

    /// Start run `i` (unless it is already active). With `rerun`, remember its result to
    /// compare the new one with.
    pub(super) fn start(&mut self, i: usize, rerun: bool) -> Vec<Effect> {
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
        row.live_validation.clear();
        match state {
            // m ≤ n, the subset sizes and dims ≤ D are checked now that the data are here
            Some(DataState::Loaded(data)) => match row
                .spec
                .check_for(crate::session::runner::shape(&data), Naming::Keys)
            {
                Ok(spec) => {
                    let id = self.next_id;
                    self.next_id += 1;
                    row.job = Some(id);
                    row.activity = Activity::Queued;
                    vec![Effect::Submit {
                        id,
                        key: row.key.clone(),
                        data,
                        spec: Box::new(spec),
                    }]
                }
                Err(e) => {
                    // refused, as `sgpw run` refuses: a setting to change, not a result
                    row.rerun_of = None;
                    let k = row.key.clone();
                    self.fail(format!(
                        "{}/{} m={} seed {} not started: {e}",
                        k.dataset, k.label, k.m, k.seed
                    ));
                    Vec::new()
                }
            },
            Some(DataState::Loading(_)) => {
                // Runs start on complete data only: g starts them once it has loaded.
                row.rerun_of = None;
                let name = row.key.dataset.clone();
                let msg = self.still_loading(&name);
                self.fail(format!("{msg}: its runs can start once it has loaded (g)"));
                Vec::new()
            }
            Some(DataState::Failed(msg)) => {
                // Not a result of the run: the data set must be fixed first.
                row.rerun_of = None;
                let name = row.key.dataset.clone();
                self.fail(format!(
                    "{name} did not load, so its runs cannot start: {msg} (e edits it)"
                ));
                Vec::new()
            }
            None => {
                let r = outcome(
                    row.key.clone(),
                    &row.spec.method,
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

    /// Start the selected run unless it is done (a cancelled run is not finished: it
    /// starts again, as `sgpw run` would run it).
    pub(super) fn start_selected(&mut self) -> Vec<Effect> {
        if let Some(row) = self.selected_run() {
            if self.status_of(row) != RunStatus::Done {
                return self.start(self.run_cursor, false);
            }
            self.say("this run is done: R re-runs it, r replays it");
        }
        Vec::new()
    }

    /// Start every run that is not done — never run, cancelled or failed, the runs
    /// `sgpw run` would run — except those whose data set did not load.
    pub(super) fn start_all(&mut self) -> Vec<Effect> {
        let idle_unfinished = |a: &App, i: usize| {
            let row = &a.runs[i];
            row.activity == Activity::Idle
                && matches!(
                    a.status_of(row),
                    RunStatus::NotRun | RunStatus::Cancelled | RunStatus::Failed
                )
        };
        let todo: Vec<usize> = (0..self.runs.len())
            .filter(|&i| idle_unfinished(self, i))
            .collect();
        // Runs start on loaded data only: not on a data set still loading or failed.
        let state = |a: &App, i: usize| a.data.get(&a.runs[i].key.dataset).cloned();
        let (failed, todo): (Vec<usize>, Vec<usize>) = todo
            .into_iter()
            .partition(|&i| matches!(state(self, i), Some(DataState::Failed(_))));
        let (loading, todo): (Vec<usize>, Vec<usize>) = todo
            .into_iter()
            .partition(|&i| matches!(state(self, i), Some(DataState::Loading(_))));
        if todo.is_empty() && failed.is_empty() && loading.is_empty() {
            self.say("every run is done (R re-runs the selected one)");
            return Vec::new();
        }
        // every run against its data before the first one starts, as `sgpw run` does
        let refused: Vec<String> = todo
            .iter()
            .filter_map(|&i| {
                let row = &self.runs[i];
                let Some(DataState::Loaded(d)) = self.data.get(&row.key.dataset) else {
                    return None;
                };
                let e = row
                    .spec
                    .check_for(crate::session::runner::shape(d), Naming::Keys)
                    .err()?;
                let k = &row.key;
                Some(format!("{}/{} m={}: {e}", k.dataset, k.label, k.m))
            })
            .collect();
        if let Some(first) = refused.first() {
            let more = refused.len() - 1;
            self.fail(format!(
                "nothing started: {first}{}",
                if more > 0 {
                    format!(" (and {more} more)")
                } else {
                    String::new()
                }
            ));
            return Vec::new();
        }
        let effects: Vec<Effect> = todo.iter().flat_map(|&i| self.start(i, false)).collect();
        let names = |a: &App, rows: &[usize]| {
            let mut names: Vec<String> = rows
                .iter()
                .map(|&i| a.runs[i].key.dataset.clone())
                .collect();
            names.sort();
            names.dedup();
            names
        };
        let mut why = Vec::new();
        if !loading.is_empty() {
            let still: Vec<String> = names(self, &loading)
                .iter()
                .map(|n| self.still_loading(n))
                .collect();
            why.push(format!(
                "{} did not start because {}: g again once it has loaded",
                loading.len(),
                still.join(", ")
            ));
        }
        if !failed.is_empty() {
            why.push(format!(
                "{} did not start because {} did not load (e edits it)",
                failed.len(),
                names(self, &failed).join(", ")
            ));
        }
        if !why.is_empty() {
            let started = crate::words::count(todo.len(), "run", "runs");
            self.fail(format!("started {started}; {}", why.join("; ")));
        }
        effects
    }

    /// Run the selected run again with its seed, to compare with its result.
    pub(super) fn rerun_selected(&mut self) -> Vec<Effect> {
        let i = self.run_cursor;
        match self.selected_run().map(|r| self.status_of(r)) {
            Some(
                RunStatus::Done | RunStatus::Failed | RunStatus::Cancelled | RunStatus::NotRun,
            ) => {
                self.say("re-running with the same seed…");
                self.start(i, true)
            }
            Some(s) => {
                self.say(format!("the run is {}; x cancels it", s.word()));
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    /// Cancel the selected run.
    pub(super) fn cancel_selected(&mut self) -> Vec<Effect> {
        let Some(row) = self.runs.get(self.run_cursor) else {
            return Vec::new();
        };
        match row.job {
            Some(id) => {
                self.say("cancelling…");
                vec![Effect::Cancel(id)]
            }
            None => {
                self.say("the selected run is not running");
                Vec::new()
            }
        }
    }

    /// Cancel every run of the pool.
    pub(super) fn cancel_all(&mut self) -> Vec<Effect> {
        let mut effects = vec![Effect::CancelAll];
        let n = self.runs.iter().filter(|r| r.job.is_some()).count();
        self.say(format!(
            "cancelling {}",
            crate::words::count(n, "run", "runs")
        ));
        if n == 0 {
            effects.clear();
        }
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
