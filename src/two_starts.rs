//! The two fits of a default run raced (docs/methods.md §0.4): the fit from the §0.4
//! start and the fit from the subset-fitted start advance in turns, a few iterations at
//! a time, and the one clearly behind is stopped, so a run pays for the second start
//! only until it is clear which start leads, not for a whole second fit.
//!
//! Each fit runs in a thread of its own (the optimiser and each method's schedule stay
//! as they are: a fit waits for its turn inside its progress callback), but only one
//! computes at a time, so the two never compete for the cores; the calling thread only
//! passes their progress reports on. A fit that is not stopped follows exactly the
//! path it follows alone.

use crate::error::Result;
use crate::model_file::ModelFile;
use crate::optim::{Control, Outcome};
use crate::run_context::{Parts, Phase, Progress, RunContext};
use std::sync::{Condvar, Mutex, mpsc};

/// A fit's turn: this many iterations (at least one), a hundredth of the budget, before
/// the other fit's turn. The rule ([`behind`]) looks at every iteration both fits have
/// reached, so the turn decides nothing but how far the fit running ahead goes past the
/// iteration at which it is found behind (less than a turn): with turns of a twentieth
/// of the budget the §0.4 start's fit of kin40k vfe m = 50 seed 1, found behind at
/// iteration 112, ran on to 125 (docs/results/starts.md). Each turn hands over through a
/// condition variable, microseconds against an iteration's milliseconds.
const TURNS: usize = 100;

/// A fit is judged only once it has left its start ([`Rules::first_drop`]): after two
/// legs of a twentieth of the budget each (at least [`MIN_LEG`] iterations).
const LEGS: usize = 20;
const MIN_LEG: usize = 5;

/// A fit behind (from the end of its second leg on) is stopped once even what it could
/// still gain at its recent pace would not take it below the leader's objective now by
/// more than `slack` (a difference too small to matter, [`SLACK_PER_POINT`]): its
/// decrease over the last half of its iterations, once for every doubling of the
/// iteration count left in the budget (log₂(budget / t) at iteration t). An L-BFGS trace
/// loses about as much per doubling of the iterations or less (f ≈ a − b·log t), so a fit
/// stopped by this rule would rarely have caught up; no fixed deadline, as a start that
/// leads early need not end ahead (kin40k fitc m = 50 seed 1 from a 494-point subset
/// fit: the second start led from iteration 75 to 350 and ended behind). Crediting a
/// pace that shrinks as it shrank over the doubling before (a power-law trace, f ≈ f* +
/// c·t^(−p)) would stop kin40k's §0.4 fits earlier, but drops kin40k fitc m = 25 seed
/// 3's at iteration 120, which then gained 1040 nats — the log rule's 1117 — and ended
/// lowest (docs/results/starts.md).
fn clearly_behind(back: &[f64], lead_now: f64, at: usize, rules: &Rules) -> bool {
    let value = |i: usize| back[i.min(back.len() - 1)];
    let pace = value(at / 2) - value(at);
    let doublings_left = (rules.iters as f64 / at.max(1) as f64).log2().max(0.0);
    value(at) - doublings_left * pace > lead_now - rules.slack
}

/// Two fits whose objectives could end less than this many nats per training point
/// apart are as good as each other: the one behind is stopped rather than raced to the
/// end for a difference the test scores do not see (10⁵ synthetic rows, fitc m = 100:
/// the two starts' fits ended 17 nats apart, NMSE 0.012159 against 0.012160, after
/// racing for 70 of 100 iterations; docs/results/starts.md). kin40k fitc m = 50's two
/// ends, 0.03 per point apart, are NMSE 0.111 against 0.122.
pub const SLACK_PER_POINT: f64 = 1e-3;

/// What a race ended with: each fit's result (a stopped one's outcome ends where it was
/// stopped, `Stop::EarlyStop`) and which was stopped at which iteration.
pub struct Ended {
    pub first: Result<(ModelFile, Outcome)>,
    pub second: Result<(ModelFile, Outcome)>,
    /// (whether it was the second start's fit, the iteration it was stopped at).
    pub dropped: Option<(bool, usize)>,
}

/// Where the two fits are.
pub struct Race {
    /// Whose turn it is (0: the first start's fit, 1: the second's).
    pub turn: usize,
    /// Each fit's objective at each iteration so far (model units).
    pub traces: [Vec<f64>; 2],
    pub finished: [bool; 2],
    pub dropped: Option<(usize, usize)>,
}

/// The iteration budget's turn length and the budget itself.
pub struct Rules {
    pub turn: usize,
    /// A twentieth of the budget: no fit is dropped before two ([`Rules::first_drop`]).
    pub leg: usize,
    iters: usize,
    /// How far apart two ends may be and still count as equal (model units).
    slack: f64,
}

impl Rules {
    /// The first iteration at which a fit may be dropped: the end of the second leg.
    /// The pace of [`clearly_behind`] is measured over the last half of the iterations,
    /// [t/2, t]; before 2·leg that window reaches into the first leg, where a fit is
    /// still leaving its start (L-BFGS's first steps, before its curvature pairs say
    /// much), and its pace there says nothing of its pace later (pumadyn-32nm fitc
    /// m = 100 seed 3: the §0.4 start's fit, dropped at iteration 30 after 15
    /// iterations at −30 per iteration, fell by 1300 in the next 6 and ended lowest;
    /// docs/results/starts.md).
    pub fn first_drop(&self) -> usize {
        2 * self.leg
    }

    /// For a budget of `iters` iterations on `n` training points.
    pub fn new(iters: usize, n: usize) -> Rules {
        Rules {
            turn: (iters / TURNS).max(1),
            leg: (iters / LEGS).max(MIN_LEG),
            iters,
            slack: SLACK_PER_POINT * n as f64,
        }
    }
}

/// Which fit to stop, if one is clearly behind ([`clearly_behind`]): compared at the last
/// iteration both have reached (a fit that has ended keeps its last objective), from the
/// end of the second leg on ([`Rules::first_drop`]).
pub fn behind(race: &Race, rules: &Rules) -> Option<usize> {
    let [a, b] = &race.traces;
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let at = match race.finished {
        [true, true] => return None,
        [true, false] => b.len() - 1,
        [false, true] => a.len() - 1,
        [false, false] => a.len().min(b.len()) - 1,
    };
    if at < rules.first_drop() {
        return None;
    }
    let value = |t: &Vec<f64>, i: usize| t[i.min(t.len() - 1)];
    let (lead, back) = if value(b, at) < value(a, at) {
        (1, 0)
    } else {
        (0, 1)
    };
    let lead_now = value(&race.traces[lead], at);
    clearly_behind(&race.traces[back], lead_now, at, rules).then_some(back)
}

/// Race `first` and `second` (each given its context; the second's iterations are
/// reported as [`Phase::SecondStart`]) over a budget of `iters` iterations.
pub fn race<F, S>(ctx: &RunContext, (iters, n): (usize, usize), first: F, second: S) -> Ended
where
    F: FnOnce(&RunContext) -> Result<(ModelFile, Outcome)> + Send,
    S: FnOnce(&RunContext) -> Result<(ModelFile, Outcome)> + Send,
{
    let rules = Rules::new(iters, n);
    let state = Mutex::new(Race {
        turn: 0,
        traces: [Vec::new(), Vec::new()],
        finished: [false, false],
        dropped: None,
    });
    let woken = Condvar::new();
    let parts = ctx.parts();
    let (tx, rx) = mpsc::channel::<Progress>();
    let (first, second) = std::thread::scope(|s| {
        let (state, woken, rules) = (&state, &woken, &rules);
        let (parts0, tx0) = (parts.clone(), tx.clone());
        let h0 = s.spawn(move || run_one(0, first, parts0, tx0, state, woken, rules));
        let h1 = s.spawn(move || run_one(1, second, parts, tx, state, woken, rules));
        // the calling thread's sink hears both fits' reports, in order
        for p in rx {
            ctx.forward(&p);
        }
        let join = |h: std::thread::ScopedJoinHandle<'_, _>| match h.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (join(h0), join(h1))
    });
    let dropped = state
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .dropped
        .map(|(k, at)| (k == 1, at));
    Ended {
        first,
        second,
        dropped,
    }
}

/// Fit `k` of the race in this thread: wait for its first turn, fit, and hand the turn
/// over for good when it ends.
fn run_one<F>(
    k: usize,
    fit: F,
    parts: Parts,
    tx: mpsc::Sender<Progress>,
    state: &Mutex<Race>,
    woken: &Condvar,
    rules: &Rules,
) -> Result<(ModelFile, Outcome)>
where
    F: FnOnce(&RunContext) -> Result<(ModelFile, Outcome)>,
{
    let started = parts.started();
    let sink = move |p: &Progress| {
        // the receiver outlives both fits; a failed send only loses a report
        let _ = tx.send(p.clone());
    };
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    let other = 1 - k;
    // wait (between iterations) until it is this fit's turn; false once it is dropped
    let wait_turn = |mut race: std::sync::MutexGuard<'_, Race>| -> bool {
        while race.turn != k && !race.finished[other] && race.dropped.is_none() {
            race = woken.wait(race).unwrap_or_else(|e| e.into_inner());
        }
        race.dropped.is_none_or(|(d, _)| d != k)
    };
    let gate = |iteration: usize, f: f64| -> Control {
        let mut race = lock();
        let trace = &mut race.traces[k];
        trace.truncate(iteration);
        trace.push(f);

        match race.dropped {
            Some((d, _)) if d == k => return Control::Finish,
            Some(_) => return Control::Continue,
            None => {}
        }
        if let Some(d) = behind(&race, rules) {
            // the dropped fit's iteration, whichever fit's report found it behind
            let at = race.traces[d].len() - 1;
            race.dropped = Some((d, at));
            sink(&Progress {
                phase: Phase::Dropped { second: d == 1 },
                iteration: at,
                nlml: None,
                elapsed: started.elapsed().as_secs_f64(),
                validation: None,
            });
            woken.notify_all();
            return if d == k {
                Control::Finish
            } else {
                Control::Continue
            };
        }
        if iteration > 0 && iteration.is_multiple_of(rules.turn) && !race.finished[other] {
            race.turn = other;
            woken.notify_all();
            if !wait_turn(race) {
                return Control::Finish;
            }
        }
        Control::Continue
    };
    let reported_as = (k == 1).then_some(Phase::SecondStart);
    let out = if wait_turn(lock()) {
        let rctx = RunContext::raced(parts, &sink, reported_as, &gate);
        fit(&rctx)
    } else {
        Err(crate::error::Error::Cancelled)
    };
    let mut race = lock();
    race.finished[k] = true;
    race.turn = other;
    woken.notify_all();
    out
}
