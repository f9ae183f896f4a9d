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
struct Race {
    /// Whose turn it is (0: the first start's fit, 1: the second's).
    turn: usize,
    /// Each fit's objective at each iteration so far (model units).
    traces: [Vec<f64>; 2],
    finished: [bool; 2],
    dropped: Option<(usize, usize)>,
}

/// The iteration budget's turn length and the budget itself.
struct Rules {
    turn: usize,
    /// A twentieth of the budget: no fit is dropped before two ([`Rules::first_drop`]).
    leg: usize,
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
    fn first_drop(&self) -> usize {
        2 * self.leg
    }

    /// For a budget of `iters` iterations on `n` training points.
    fn new(iters: usize, n: usize) -> Rules {
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
fn behind(race: &Race, rules: &Rules) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn state(a: &[f64], b: &[f64], finished: [bool; 2]) -> Race {
        Race {
            turn: 0,
            traces: [a.to_vec(), b.to_vec()],
            finished,
            dropped: None,
        }
    }

    /// A measured trace, every 25 iterations from 0 to 500, linear between.
    fn trace(every_25: &[f64]) -> Vec<f64> {
        (0..=500)
            .map(|i| {
                let j = (i / 25).min(every_25.len() - 2);
                let w = (i - 25 * j) as f64 / 25.0;
                every_25[j] + w * (every_25[j + 1] - every_25[j])
            })
            .collect()
    }

    /// The first iteration at which the race drops a fit, and which.
    fn first_drop(a: &[f64], b: &[f64], rules: &Rules) -> Option<(usize, usize)> {
        (0..a.len().min(b.len()))
            .find_map(|at| behind(&state(&a[..=at], &b[..=at], [false; 2]), rules).map(|k| (at, k)))
    }

    /// kin40k vfe m = 50 seed 1, both starts' fits whole (500 iterations; the second
    /// start from a 1000-point subset fit): the §0.4 start's fit is behind from
    /// iteration 25 on and losing ever less; it is dropped once what it still loses per
    /// doubling of its iterations cannot make up the gap (iteration 122, not in its first
    /// legs), and the fit kept is the one that ends lower.
    #[test]
    fn a_fit_clearly_behind_is_dropped() {
        let first = trace(&[
            27356.4, 8527.9, 7711.7, 7451.4, 7330.2, 7239.9, 7162.0, 7102.2, 7058.1, 7029.5,
            7007.9, 6991.2, 6978.2, 6966.8, 6955.8, 6948.5, 6943.5, 6939.7, 6936.9, 6934.4, 6932.1,
        ]);
        let second = trace(&[
            422591.9, 8333.3, 7417.9, 6999.9, 6696.7, 6516.3, 6411.4, 6352.5, 6308.4, 6285.7,
            6268.7, 6257.0, 6247.9, 6241.9, 6237.2, 6232.7, 6229.6, 6227.5, 6225.8, 6224.5, 6223.3,
        ]);
        let rules = Rules::new(500, 10_000);
        assert_eq!((rules.turn, rules.first_drop()), (5, 50));
        let (at, dropped) = first_drop(&first, &second, &rules).expect("one dropped");
        assert_eq!(dropped, 0);
        assert!((100..=150).contains(&at), "{at}");
        assert!(first[500] > second[500]);
    }

    /// kin40k fitc m = 50 seed 1 with the second start from a 494-point subset fit: the
    /// second start's fit leads from iteration 75 to 350, but the first's still loses
    /// fast, and ends lower (3268 against 3454). It is never dropped while behind (a
    /// deadline at a fifth of the budget dropped it, keeping the worse end); the second is
    /// dropped once it has fallen behind for good (iteration 406).
    #[test]
    fn a_fit_behind_but_still_gaining_is_kept() {
        let first = trace(&[
            12444.3, 6442.9, 5552.6, 5160.8, 4879.4, 4702.7, 4529.7, 4383.7, 4241.8, 4100.2,
            3998.7, 3877.7, 3735.0, 3621.4, 3514.7, 3445.3, 3388.2, 3354.4, 3326.7, 3285.0, 3268.5,
        ]);
        let second = trace(&[
            12662.4, 6718.3, 5671.2, 5143.0, 4699.7, 4424.5, 4187.0, 4013.1, 3874.6, 3770.7,
            3691.0, 3648.4, 3599.1, 3568.0, 3536.1, 3518.8, 3494.9, 3489.2, 3470.2, 3462.9, 3453.9,
        ]);
        let rules = Rules::new(500, 10_000);
        assert!(second[100] < first[100] && second[300] < first[300]);
        let (at, dropped) = first_drop(&first, &second, &rules).expect("one dropped");
        assert_eq!(dropped, 1, "dropped the fit that ends lower at {at}");
        assert!(at > 350, "{at}");
    }

    /// A trace through measured points (iteration, objective), linear between.
    fn through(points: &[(usize, f64)]) -> Vec<f64> {
        let last = points[points.len() - 1].0;
        (0..=last)
            .map(|i| {
                let j = points.iter().rposition(|p| p.0 <= i).expect("from 0");
                let (i0, f0) = points[j];
                match points.get(j + 1) {
                    Some(&(i1, f1)) => f0 + (i - i0) as f64 / (i1 - i0) as f64 * (f1 - f0),
                    None => f0,
                }
            })
            .collect()
    }

    /// pumadyn-32nm fitc m = 100 seed 3, both fits whole (every 4 iterations to 76, then
    /// every 20): the §0.4 start's fit is 2000 behind at iteration 30, 15 iterations
    /// into a slow stretch after its first leap, then falls by 1300 in 6 iterations,
    /// leads from iteration 100 and ends 51 nats lower. Judged from the first leg on it
    /// was dropped at iteration 32, its pace measured over a window reaching into its
    /// first leg; from the second leg on it is kept, and the second start's fit is
    /// dropped once behind for good.
    #[test]
    fn a_fit_still_leaving_its_start_is_not_judged_by_its_first_turn() {
        let at = |i: usize| if i < 20 { 4 * i } else { 80 + 20 * (i - 20) };
        let first = [
            10251.8, 9990.9, 9635.0, 3932.1, 1304.1, 1194.0, 1091.8, 990.1, 888.2, -400.1, -693.0,
            -790.4, -809.8, -833.2, -846.2, -875.4, -925.6, -978.0, -1023.2, -1054.7, -1076.6,
            -1157.8, -1223.5, -1281.4, -1324.1, -1358.3, -1386.9, -1406.0, -1423.7, -1436.5,
            -1447.6, -1458.5, -1466.5, -1473.4, -1479.5, -1484.2, -1489.5, -1493.9, -1498.3,
            -1501.6, -1504.8, -1507.6,
        ];
        let second = [
            -725.2, -773.1, -896.8, -942.6, -967.6, -993.7, -1012.1, -1022.8, -1030.9, -1037.5,
            -1043.3, -1050.9, -1058.4, -1064.4, -1068.4, -1074.8, -1081.2, -1086.8, -1094.7,
            -1100.7, -1111.0, -1151.0, -1208.2, -1262.7, -1306.4, -1331.0, -1349.6, -1364.9,
            -1377.4, -1387.6, -1396.9, -1405.4, -1413.3, -1420.7, -1427.1, -1433.1, -1437.9,
            -1442.3, -1446.8, -1450.6, -1453.8, -1456.5,
        ];
        let points = |f: &[f64]| -> Vec<(usize, f64)> {
            f.iter().enumerate().map(|(i, &v)| (at(i), v)).collect()
        };
        let (first, second) = (through(&points(&first)), through(&points(&second)));
        assert_eq!((first.len(), second.len()), (501, 501));
        let rules = Rules::new(500, 7168);
        let (at, dropped) = first_drop(&first, &second, &rules).expect("one dropped");
        assert_eq!(dropped, 1, "dropped the fit that ends lower at {at}");
        assert!(at > 300, "{at}");
        assert!(first[500] < second[500]);
    }

    /// Before the end of the second leg nothing is dropped, however far behind; a fit
    /// that has stopped gaining is dropped as soon as it is behind after that; and a fit
    /// that has ended keeps its last objective, which the running one is compared with.
    #[test]
    fn the_rule_at_the_edges() {
        let rules = Rules::new(100, 0);
        assert_eq!((rules.turn, rules.leg), (1, 5));
        let flat = vec![100.0; 30];
        let lower = vec![50.0; 30];
        assert_eq!(
            behind(&state(&flat[..10], &lower[..10], [false; 2]), &rules),
            None
        );
        assert_eq!(
            behind(&state(&flat[..11], &lower[..11], [false; 2]), &rules),
            Some(0)
        );
        assert_eq!(
            behind(&state(&lower[..11], &flat[..11], [false; 2]), &rules),
            Some(1)
        );
        // the first ended at 1.0; the second, behind but losing fast, is kept, then
        // dropped once its pace no longer covers the gap
        let ended = [100.0, 50.0, 1.0];
        let falling: Vec<f64> = (0..=60).map(|i| 1000.0 / (1.0 + i as f64)).collect();
        assert_eq!(
            behind(&state(&ended, &falling[..11], [true, false]), &rules),
            None
        );
        assert_eq!(
            behind(&state(&ended, &falling[..61], [true, false]), &rules),
            Some(1)
        );
    }

    /// Two fits heading for ends closer than the slack (a thousandth of a nat per
    /// training point, 90 on 90,000 points) are not raced to the end: the one behind —
    /// 10 nats, losing as fast as the leader — is stopped as soon as the rule looks,
    /// where even its pace over the doublings left could not take it further below the
    /// leader than the slack (checked from the end of the second leg); without the slack
    /// it would run for most of the budget.
    #[test]
    fn fits_heading_for_the_same_end_are_not_raced_to_it() {
        let first: Vec<f64> = (0..=100)
            .map(|i| -79_450.0 - 20.0 * (1.0 + i as f64).ln())
            .collect();
        let second: Vec<f64> = first.iter().map(|f| f + 10.0).collect();
        let with_slack = first_drop(&first, &second, &Rules::new(100, 90_000));
        assert_eq!(with_slack, Some((10, 1)));
        let without = first_drop(&first, &second, &Rules::new(100, 0));
        assert!(
            without.is_some_and(|(at, k)| at > 50 && k == 1),
            "{without:?}"
        );
    }

    /// A stand-in fit: `iters` iterations along `trace`, reporting each through the
    /// context's optimiser callback as a real fit does; its evaluations are the
    /// iterations it ran (plus the start).
    fn fake_fit(
        ctx: &RunContext,
        iters: usize,
        trace: impl Fn(usize) -> f64,
    ) -> Result<(ModelFile, Outcome)> {
        let mut on_iter = ctx.on_iter(Phase::Fit { stage: 0 }, None);
        let mut ran = 0;
        let mut stop = crate::optim::Stop::Budget;
        for i in 0..=iters {
            ran = i;
            let info = crate::optim::IterInfo {
                iteration: i,
                nlml: trace(i),
                grad_norm: 1.0,
                elapsed: 0.0,
                x: Vec::new(),
            };
            if on_iter(&info) != Control::Continue {
                stop = crate::optim::Stop::EarlyStop;
                break;
            }
        }
        let model = ModelFile::new("full", crate::model_file::Hyper::se(1.0, vec![1.0], 0.1));
        let outcome = Outcome {
            x: Vec::new(),
            f: trace(ran),
            grad: Vec::new(),
            iterations: ran,
            evaluations: ran + 1,
            trace: (0..=ran).map(&trace).collect(),
            stop,
        };
        Ok((model, outcome))
    }

    /// The race itself: the fits take turns of a hundredth of the budget, the one
    /// clearly behind is stopped early (its evaluations counted: far fewer than the
    /// budget), the other runs to its end, and the reports say which phase is which and
    /// when a fit is dropped.
    #[test]
    fn the_race_stops_the_fit_clearly_behind_early() {
        let reports = std::sync::Mutex::new(Vec::new());
        let sink = |p: &Progress| reports.lock().expect("lock").push((p.phase, p.iteration));
        let ctx = RunContext::new(crate::exec::Exec::default(), &sink);
        // the second start stalls at 50 while the first keeps going down
        let iters = 200;
        let ended = race(
            &ctx,
            (iters, 0),
            |c| fake_fit(c, iters, |i| 100.0 / (1.0 + i as f64)),
            |c| fake_fit(c, iters, |i| 50.0 + 100.0 / (1.0 + i as f64)),
        );
        let (first, second) = (ended.first.expect("first"), ended.second.expect("second"));
        assert_eq!(first.1.iterations, iters);
        assert_eq!(first.1.stop, crate::optim::Stop::Budget);
        assert_eq!(second.1.stop, crate::optim::Stop::EarlyStop);
        let (was_second, at) = ended.dropped.expect("one dropped");
        assert!(
            was_second && at == second.1.iterations,
            "{:?}",
            ended.dropped
        );
        // dropped at the end of its second leg: even 3.3 times its pace since iteration
        // 10 would leave it well above the first
        assert!(second.1.evaluations <= 21, "{}", second.1.evaluations);
        let reports = reports.into_inner().expect("lock");
        let phases: Vec<Phase> = reports.iter().map(|r| r.0).collect();
        assert!(
            phases.contains(&Phase::Dropped { second: true }),
            "{phases:?}"
        );
        // turns: the first fit's iterations 0–2, then the second's 0–2, then the first's
        let firsts: Vec<usize> = reports
            .iter()
            .take_while(|r| r.0 != Phase::SecondStart)
            .filter(|r| r.0 == Phase::Fit { stage: 0 })
            .map(|r| r.1)
            .collect();
        assert_eq!(firsts.last(), Some(&2), "{reports:?}");
    }

    /// The fit that runs ahead in its turn and is found behind at an iteration inside
    /// the turn stops less than a turn past it, not at the end of a long turn: here the
    /// rule finds the first fit (8 nats behind, losing as fast as the other) behind at
    /// iteration 116, and the race stops it by 120 (with turns of a twentieth of the
    /// budget it ran on to 125).
    #[test]
    fn a_fit_found_behind_stops_within_a_turn() {
        let iters = 500;
        let lead = |i: usize| 100.0 / (1.0 + i as f64).sqrt();
        let back = move |i: usize| 8.0 + lead(i);
        let rules = Rules::new(iters, 0);
        let (a, b): (Vec<f64>, Vec<f64>) = (0..=iters).map(|i| (back(i), lead(i))).unzip();
        let (found, k) = first_drop(&a, &b, &rules).expect("one dropped");
        assert_eq!((found, k), (116, 0));
        let ctx = RunContext::quiet(crate::exec::Exec::default());
        let ended = race(
            &ctx,
            (iters, 0),
            |c| fake_fit(c, iters, back),
            |c| fake_fit(c, iters, lead),
        );
        let first = ended.first.expect("first").1;
        assert_eq!(first.stop, crate::optim::Stop::EarlyStop);
        assert!(
            (116..=120).contains(&first.iterations),
            "stopped at {}",
            first.iterations
        );
        assert_eq!(ended.second.expect("second").1.iterations, iters);
    }
}
