use sgpw::exec::Exec;
use sgpw::exec::Par;
use sgpw::run_context::Phase;
use sgpw::run_context::Progress;
use sgpw::run_context::RunContext;
use sgpw::side_by_side::*;

/// Side by side, each item gets its own k and runs on one thread; the results come
/// back in the order of the items and the reports in the order a run one after
/// another gives — whatever order the items end in.
#[test]
fn items_side_by_side_come_back_in_their_order() {
    let reports = std::sync::Mutex::new(Vec::new());
    let sink = |p: &Progress| reports.lock().expect("lock").push(p.iteration);
    let exec = Exec {
        par: Par::Threads(2),
        ..Exec::default()
    };
    let ctx = RunContext::new(exec, &sink);
    let got = map(&ctx, 5, |k, c| {
        // later items end first
        std::thread::sleep(std::time::Duration::from_millis(10 * (5 - k) as u64));
        for i in 0..3 {
            c.report(Phase::SubsetInit, 10 * k + i, 0.0);
        }
        (k, c.exec.par)
    });
    let want: Vec<(usize, Par)> = (0..5).map(|k| (k, Par::Seq)).collect();
    assert_eq!(got, want);
    let order: Vec<usize> = (0..5)
        .flat_map(|k| (0..3).map(move |i| 10 * k + i))
        .collect();
    assert_eq!(reports.into_inner().expect("lock"), order);
    // one thread: one after another on the caller's thread, still computing on one
    let one = RunContext::quiet(Exec {
        par: Par::Seq,
        ..Exec::default()
    });
    let thread = std::thread::current().id();
    let same: Vec<(bool, Par)> = map(&one, 3, |_, c| {
        (std::thread::current().id() == thread, c.exec.par)
    });
    assert_eq!(same, vec![(true, Par::Seq); 3]);
}
