//! The terminal workbench (`sgpw`, `sgpw open`): ratatui + crossterm.
//!
//! One event enum feeds one pure transition ([`update::update`]); the [`Runtime`] carries
//! out the effects it returns (run pool, file I/O, data loading, predictions) and feeds
//! their outcomes back as events. Producers: an input thread, the run pool, background
//! loaders and a prediction worker (the newest request replaces queued ones).

mod abort;
pub mod form;
pub mod format;
pub mod forms;
pub mod keys;
/// The prediction pane's curves, computed in [`crate::chart`] (shared with `sgpw plot`).
pub use crate::chart::prediction as predict;
pub mod state;
pub mod theme;
pub mod update;
pub mod view;
pub mod widgets;
pub mod wrap;

use crate::error::{Error, Result};
use crate::jobs::{JobEvent, Jobs};
use crate::session::{Session, autosave};
use crossbeam_channel::{Receiver, Sender, select, unbounded};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::{self as cevent, KeyEventKind};
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};
use state::{App, DataState, Effect, Event, Opened, PredState, PredWant};
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Background frames (live runs, replays) at most this often; keys draw at once.
pub const FRAME: Duration = Duration::from_millis(33);

type PredRequest = (
    PredWant,
    Box<crate::model_file::ModelFile>,
    Arc<crate::data::Dataset>,
);

/// Carries out effects and collects every producer's events.
pub struct Runtime {
    jobs: Jobs,
    job_rx: Receiver<JobEvent>,
    tx: Sender<Event>,
    rx: Receiver<Event>,
    predict_tx: Sender<PredRequest>,
}

fn spawn_named(name: &str, f: impl FnOnce() + Send + 'static) {
    // A thread that cannot start leaves its request unanswered; the pane says "…".
    let _ = std::thread::Builder::new().name(name.into()).spawn(f);
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

impl Runtime {
    /// A run pool of `threads` workers (0 = one per core).
    pub fn new(threads: usize) -> Result<Runtime> {
        let (jobs, job_rx) = Jobs::new(threads)?;
        let (tx, rx) = unbounded();
        let (predict_tx, predict_rx) = unbounded::<PredRequest>();
        let out = tx.clone();
        spawn_named("sgpw-bg-predict", move || {
            while let Ok(mut req) = predict_rx.recv() {
                // Only the newest request matters (the cursor may have moved on).
                while let Ok(newer) = predict_rx.try_recv() {
                    req = newer;
                }
                let (want, model, data) = req;
                let result = catch_unwind(AssertUnwindSafe(|| {
                    predict::compute(&model, &data, want.input, predict::GRID)
                }))
                .unwrap_or_else(|p| Err(format!("prediction panicked: {}", panic_text(p.as_ref()))))
                .map(Arc::new);
                if out.send(Event::Predicted { want, result }).is_err() {
                    break;
                }
            }
        });
        Ok(Runtime {
            jobs,
            job_rx,
            tx,
            rx,
            predict_tx,
        })
    }

    /// Where other producers (the input thread) send their events.
    pub fn sender(&self) -> Sender<Event> {
        self.tx.clone()
    }

    /// Update the app with one event and carry out what it asks.
    pub fn dispatch(&mut self, app: &mut App, event: Event) {
        let effects = app.update(event);
        self.run_effects(app, effects);
    }

    /// Carry out effects; quick ones (save, open) feed their outcome straight back.
    pub fn run_effects(&mut self, app: &mut App, effects: Vec<Effect>) {
        let mut queue: VecDeque<Effect> = effects.into();
        while let Some(effect) = queue.pop_front() {
            match effect {
                Effect::LoadData {
                    name,
                    epoch,
                    entry,
                    base,
                } => {
                    let tx = self.tx.clone();
                    spawn_named("sgpw-bg-load", move || {
                        // Rows read so far, as the loader reads a large file in blocks.
                        let mut report = |progress| {
                            let _ = tx.send(Event::DataProgress {
                                name: name.clone(),
                                epoch,
                                progress,
                            });
                        };
                        let spec = entry.load_spec(&base);
                        let result = catch_unwind(AssertUnwindSafe(|| {
                            crate::data::load_with_progress(&spec, &mut report)
                                .map(Arc::new)
                                .map_err(|e| e.to_string())
                        }))
                        .unwrap_or_else(|p| {
                            Err(format!("loading panicked: {}", panic_text(p.as_ref())))
                        });
                        let _ = tx.send(Event::DataLoaded {
                            name,
                            epoch,
                            result,
                        });
                    });
                }
                Effect::Submit {
                    id,
                    key,
                    data,
                    spec,
                } => self.jobs.submit(id, key, data, *spec),
                Effect::Cancel(id) => self.jobs.cancel(id),
                Effect::CancelAll => self.jobs.cancel_all(),
                Effect::Save { path, session } => {
                    let r = session
                        .save(&path)
                        .map_err(|e| without_path(&e.to_string(), &path))
                        .map(|_| path);
                    queue.extend(app.update(Event::Saved(r)));
                }
                Effect::Autosave { path, session } => {
                    let journal = autosave::path_for(&path);
                    let r = autosave::write(&path, &session)
                        .map_err(|e| without_path(&e.to_string(), &journal));
                    queue.extend(app.update(Event::Autosaved(r)));
                }
                Effect::DropAutosave(path) => autosave::remove(&path),
                Effect::Open(path) => {
                    let result = open(&path).map(Box::new).map_err(|e| e.to_string());
                    queue.extend(app.update(Event::Opened { path, result }));
                }
                Effect::WriteFigure { path, svg } => {
                    let r = crate::plot::write(&path, &svg)
                        .map(|_| path)
                        .map_err(|e| e.to_string());
                    queue.extend(app.update(Event::FigureWritten(r)));
                }
                Effect::Predict { want, model, data } => {
                    let _ = self.predict_tx.send((want, model, data));
                }
                Effect::Quit => {}
            }
        }
    }

    /// The next event, waiting at most `timeout`.
    pub fn recv(&self, timeout: Duration) -> Option<Event> {
        select! {
            recv(self.rx) -> e => e.ok(),
            recv(self.job_rx) -> e => e.ok().map(Event::Job),
            default(timeout) => None,
        }
    }

    /// An event that is already waiting; input and results before job progress.
    pub fn try_recv(&self) -> Option<Event> {
        self.rx
            .try_recv()
            .ok()
            .or_else(|| self.job_rx.try_recv().ok().map(Event::Job))
    }

    /// Process events until nothing is running, loading or being predicted (tests,
    /// benchmarks). False if `timeout` passed first.
    pub fn settle(&mut self, app: &mut App, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            let busy = app.running() + app.queued() > 0
                || app
                    .data
                    .values()
                    .any(|d| matches!(d, DataState::Loading(_)))
                || matches!(app.prediction, PredState::Pending(_));
            if !busy {
                return true;
            }
            let now = Instant::now();
            if now >= end {
                return false;
            }
            if let Some(e) = self.recv((end - now).min(Duration::from_millis(100))) {
                self.dispatch(app, e);
            }
        }
    }
}

/// An error message without the file name it starts with (the status line is short
/// and names the session already): "No space left on device".
fn without_path(msg: &str, path: &Path) -> String {
    let msg = msg
        .strip_prefix(&format!("{}: ", path.display()))
        .unwrap_or(msg);
    msg.strip_prefix("cannot write: ")
        .unwrap_or(msg)
        .to_string()
}

/// Read the session at `path` (or start a new one there) and what its autosave adds.
pub fn open(path: &Path) -> Result<Opened> {
    let (session, exists) = Session::open_or_new(path)?;
    let (recovery, recovery_error) = match autosave::check(path, &session) {
        Ok(r) => (r, None),
        Err(e) => (None, Some(e)),
    };
    Ok(Opened {
        session,
        exists,
        recovery,
        recovery_error,
    })
}

fn is_input(e: &Event) -> bool {
    matches!(e, Event::Key(_) | Event::Resize(..))
}

/// The event loop on any backend: wait for an event, drain what is queued (bounded, so a
/// flood of progress events cannot starve the screen), draw. Input draws at once;
/// background changes at most every [`FRAME`].
pub fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    rt: &mut Runtime,
) -> Result<()> {
    let draw_err = |e: B::Error| Error::File(format!("cannot draw on the terminal: {e}"));
    terminal.draw(|f| view::draw(f, app)).map_err(draw_err)?;
    let mut last_draw = Instant::now();
    let mut last_tick = Instant::now();
    let mut needs_draw = false;
    while !app.quit {
        let timeout = if needs_draw || app.animating() {
            FRAME.saturating_sub(last_draw.elapsed())
        } else {
            Duration::from_secs(1)
        };
        let mut urgent = false;
        if let Some(e) = rt.recv(timeout) {
            urgent |= is_input(&e);
            rt.dispatch(app, e);
            needs_draw = true;
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(8) {
                let Some(e) = rt.try_recv() else { break };
                urgent |= is_input(&e);
                rt.dispatch(app, e);
            }
        }
        if app.replay.is_some() || app.has_running() {
            rt.dispatch(app, Event::Tick(last_tick.elapsed()));
            needs_draw = true;
        }
        last_tick = Instant::now();
        if app.quit {
            break;
        }
        if needs_draw && (urgent || last_draw.elapsed() >= FRAME) {
            terminal.draw(|f| view::draw(f, app)).map_err(draw_err)?;
            last_draw = Instant::now();
            needs_draw = false;
        }
    }
    Ok(())
}

/// Whether this process put the terminal in raw mode (and the alternate screen): only
/// then does [`restore_terminal`] write anything.
static TERMINAL_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Leave raw mode and the alternate screen, show the cursor — if the app took the
/// terminal; otherwise nothing, so an error without a terminal is plain text. Safe to
/// call twice.
pub fn restore_terminal() {
    if TERMINAL_TAKEN.swap(false, std::sync::atomic::Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let _ = execute!(std::io::stdout(), LeaveAlternateScreen, cursor::Show);
    }
}

/// The app draws on standard output: refuse plainly, before anything is drawn or
/// written, when it is not a terminal (a pipe, a file, a job without one).
pub fn require_terminal() -> Result<()> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        return Ok(());
    }
    Err(Error::Input(
        "the app needs a terminal, and standard output is not one (a pipe, a file or a \
         job without a terminal); headless, `sgpw run SESSION` runs a session's runs and \
         `sgpw report SESSION` prints its results"
            .into(),
    ))
}

struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        abort::disarm();
        restore_terminal();
    }
}

/// Restore the terminal, then the default hook prints the panic. Panics inside run
/// workers and background threads are caught there and become messages in the app,
/// so they must not tear the screen down.
fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let name = std::thread::current()
            .name()
            .map(str::to_owned)
            .unwrap_or_default();
        if name.starts_with("sgpw-run-")
            || name.starts_with("sgpw-bg-")
            || crate::data::guard::in_guarded_reader()
        {
            return;
        }
        restore_terminal();
        default(info);
    }));
}

fn spawn_input(tx: Sender<Event>) {
    spawn_named("sgpw-input", move || {
        // A terminal that can no longer be read is gone (a dropped SSH connection that
        // sent no SIGHUP): treat it as one, so that finished work is autosaved.
        let gone = |tx: &Sender<Event>| {
            let _ = tx.send(Event::Signal(signal_hook::consts::SIGHUP));
        };
        loop {
            // Poll briefly rather than block in read(): read() holds crossterm's reader
            // lock, which the cursor query that ratatui makes on a resize also needs.
            match cevent::poll(Duration::from_millis(100)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => return gone(&tx),
            }
            let event = match cevent::read() {
                Ok(cevent::Event::Key(k)) if k.kind != KeyEventKind::Release => Event::Key(k),
                Ok(cevent::Event::Resize(w, h)) => Event::Resize(w, h),
                Ok(_) => continue,
                Err(_) => return gone(&tx),
            };
            if tx.send(event).is_err() {
                break;
            }
        }
    });
}

/// SIGTERM, SIGHUP and SIGINT become [`Event::Signal`] (the app autosaves and quits); a
/// second one restores the terminal and ends the process at once.
fn watch_signals(tx: Sender<Event>) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT])
        .map_err(|e| Error::input(format!("cannot watch for signals: {e}")))?;
    std::thread::Builder::new()
        .name("sgpw-signals".into())
        .spawn(move || {
            let mut seen = 0;
            for sig in signals.forever() {
                seen += 1;
                if seen > 1 || tx.send(Event::Signal(sig)).is_err() {
                    restore_terminal();
                    // 128 + N, the shell's code for "ended by signal N"
                    std::process::exit(128 + sig);
                }
            }
        })
        .map_err(|e| Error::input(format!("cannot watch for signals: {e}")))?;
    Ok(())
}

/// How long the app waits, after a signal, for its cancelled runs to report.
const SETTLE_AFTER_SIGNAL: Duration = Duration::from_secs(2);

/// Take in the pool's reports of cancelled and never-started runs until none is
/// active or `limit` has passed, autosaving as they come (the app is quitting: of
/// their effects only the autosave is carried out).
fn settle_cancelled(app: &mut App, rt: &mut Runtime, limit: Duration) {
    let end = Instant::now() + limit;
    while app.running() + app.queued() > 0 {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        if let Ok(e) = rt.job_rx.recv_timeout(left.min(Duration::from_millis(50))) {
            let autosave: Vec<Effect> = app
                .update(Event::Job(e))
                .into_iter()
                .filter(|e| matches!(e, Effect::Autosave { .. }))
                .collect();
            rt.run_effects(app, autosave);
        }
    }
}

/// How the app ended, for the message and exit code after the terminal is restored.
#[derive(Clone, Debug, Default)]
pub struct Ending {
    /// The signal that ended it (SIGHUP also when the terminal went away).
    pub signal: Option<i32>,
    /// The autosave journal that holds unsaved work, if one was left.
    pub journal: Option<std::path::PathBuf>,
    /// Results in memory that are in neither the session file nor a journal.
    pub unsaved: bool,
    /// Runs that were training when a signal came: cancelled, and recorded as
    /// cancelled at the iteration they reached (if they reported in time).
    pub cancelled_runs: usize,
    /// Runs that were queued when a signal came: never started, no result.
    pub unstarted_runs: usize,
}

/// Open the app on a session read by [`open`] at `path` until the user quits or a
/// signal ends it.
pub fn run(path: &Path, opened: Opened, jobs: usize, ascii: bool) -> Result<Ending> {
    let theme = theme::Theme::from_env(ascii);
    let mut rt = Runtime::new(jobs)?;
    let (mut app, effects) = App::new(path.to_path_buf(), Session::new("untitled"), theme);
    let mut effects = effects;
    effects.extend(app.update(Event::Opened {
        path: path.to_path_buf(),
        result: Ok(Box::new(opened)),
    }));
    let term_err = |e: std::io::Error| Error::Input(format!("cannot use the terminal: {e}"));
    require_terminal()?;
    install_panic_hook();
    watch_signals(rt.sender())?;
    abort::install();
    let _restore = Restore;
    enable_raw_mode().map_err(term_err)?;
    TERMINAL_TAKEN.store(true, std::sync::atomic::Ordering::SeqCst);
    execute!(std::io::stdout(), EnterAlternateScreen, cursor::Hide).map_err(term_err)?;
    let mut terminal = Terminal::new(ratatui::backend::CrosstermBackend::new(std::io::stdout()))
        .map_err(term_err)?;
    spawn_input(rt.sender());
    rt.run_effects(&mut app, effects);
    terminal.draw(|f| view::draw(f, &app)).map_err(term_err)?;
    // Hidden triggers for the tests that the terminal is restored after a panic and
    // after an abort.
    if std::env::var_os("SGPW_TEST_PANIC").is_some_and(|v| v == "1") {
        panic!("SGPW_TEST_PANIC=1: forced panic after the first draw");
    }
    if std::env::var_os("SGPW_TEST_ABORT").is_some_and(|v| v == "1") {
        std::process::abort();
    }
    // A panic in the loop (a bug) or a terminal that fails still autosaves what
    // finished before the error ends the app.
    let result = catch_unwind(AssertUnwindSafe(|| {
        event_loop(&mut terminal, &mut app, &mut rt)
    }));
    rt.jobs.cancel_all();
    // After a signal the cancelled runs report how far they got, as `sgpw run` records
    // them (queued ones report that they never started): wait a little for them, so
    // the journal holds them as cancelled rather than leaving them "not run".
    if app.exit_signal.is_some() && result.is_ok() {
        settle_cancelled(&mut app, &mut rt, SETTLE_AFTER_SIGNAL);
    }
    if !app.quit || result.is_err() || (app.exit_signal.is_some() && app.journal_due) {
        let save = app.dirty.then(|| autosave::write(&app.path, &app.session));
        if let Some(Ok(p)) = save {
            app.journal = Some(p);
            app.journal_due = false;
        }
    }
    let ending = Ending {
        signal: app.exit_signal,
        journal: app.journal.clone().filter(|_| app.dirty),
        unsaved: app.dirty && (app.journal_due || app.autosave_failed || app.journal.is_none()),
        cancelled_runs: app.cancelled_runs,
        unstarted_runs: app.unstarted_runs,
    };
    match result {
        Ok(r) => r.map(|()| ending),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
