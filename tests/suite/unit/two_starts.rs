use sgpw::error::Result;
use sgpw::model_file::ModelFile;
use sgpw::optim::Control;
use sgpw::optim::Outcome;
use sgpw::run_context::Phase;
use sgpw::run_context::Progress;
use sgpw::run_context::RunContext;
use sgpw::two_starts::*;

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
        27356.4, 8527.9, 7711.7, 7451.4, 7330.2, 7239.9, 7162.0, 7102.2, 7058.1, 7029.5, 7007.9,
        6991.2, 6978.2, 6966.8, 6955.8, 6948.5, 6943.5, 6939.7, 6936.9, 6934.4, 6932.1,
    ]);
    let second = trace(&[
        422591.9, 8333.3, 7417.9, 6999.9, 6696.7, 6516.3, 6411.4, 6352.5, 6308.4, 6285.7, 6268.7,
        6257.0, 6247.9, 6241.9, 6237.2, 6232.7, 6229.6, 6227.5, 6225.8, 6224.5, 6223.3,
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
        12444.3, 6442.9, 5552.6, 5160.8, 4879.4, 4702.7, 4529.7, 4383.7, 4241.8, 4100.2, 3998.7,
        3877.7, 3735.0, 3621.4, 3514.7, 3445.3, 3388.2, 3354.4, 3326.7, 3285.0, 3268.5,
    ]);
    let second = trace(&[
        12662.4, 6718.3, 5671.2, 5143.0, 4699.7, 4424.5, 4187.0, 4013.1, 3874.6, 3770.7, 3691.0,
        3648.4, 3599.1, 3568.0, 3536.1, 3518.8, 3494.9, 3489.2, 3470.2, 3462.9, 3453.9,
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
        -790.4, -809.8, -833.2, -846.2, -875.4, -925.6, -978.0, -1023.2, -1054.7, -1076.6, -1157.8,
        -1223.5, -1281.4, -1324.1, -1358.3, -1386.9, -1406.0, -1423.7, -1436.5, -1447.6, -1458.5,
        -1466.5, -1473.4, -1479.5, -1484.2, -1489.5, -1493.9, -1498.3, -1501.6, -1504.8, -1507.6,
    ];
    let second = [
        -725.2, -773.1, -896.8, -942.6, -967.6, -993.7, -1012.1, -1022.8, -1030.9, -1037.5,
        -1043.3, -1050.9, -1058.4, -1064.4, -1068.4, -1074.8, -1081.2, -1086.8, -1094.7, -1100.7,
        -1111.0, -1151.0, -1208.2, -1262.7, -1306.4, -1331.0, -1349.6, -1364.9, -1377.4, -1387.6,
        -1396.9, -1405.4, -1413.3, -1420.7, -1427.1, -1433.1, -1437.9, -1442.3, -1446.8, -1450.6,
        -1453.8, -1456.5,
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
    let mut stop = sgpw::optim::Stop::Budget;
    for i in 0..=iters {
        ran = i;
        let info = sgpw::optim::IterInfo {
            iteration: i,
            nlml: trace(i),
            grad_norm: 1.0,
            elapsed: 0.0,
            x: Vec::new(),
        };
        if on_iter(&info) != Control::Continue {
            stop = sgpw::optim::Stop::EarlyStop;
            break;
        }
    }
    let model = ModelFile::new("full", sgpw::model_file::Hyper::se(1.0, vec![1.0], 0.1));
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
    let ctx = RunContext::new(sgpw::exec::Exec::default(), &sink);
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
    assert_eq!(first.1.stop, sgpw::optim::Stop::Budget);
    assert_eq!(second.1.stop, sgpw::optim::Stop::EarlyStop);
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
    let ctx = RunContext::quiet(sgpw::exec::Exec::default());
    let ended = race(
        &ctx,
        (iters, 0),
        |c| fake_fit(c, iters, back),
        |c| fake_fit(c, iters, lead),
    );
    let first = ended.first.expect("first").1;
    assert_eq!(first.stop, sgpw::optim::Stop::EarlyStop);
    assert!(
        (116..=120).contains(&first.iterations),
        "stopped at {}",
        first.iterations
    );
    assert_eq!(ended.second.expect("second").1.iterations, iters);
}
