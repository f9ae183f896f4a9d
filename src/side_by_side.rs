//! Independent small fits of one run side by side (the six starts of the default second
//! start's subset fit, docs/methods.md §0.4): each on one thread, as many at once as
//! the run has threads, instead of one after another each over all the threads. An
//! exact GP on a few hundred points is too small for an evaluation to keep two threads
//! busy; a whole fit per thread keeps them busy.
//!
//! Each fit computes with [`Par::Seq`] — never the pool (fits that share the pool's
//! parallel kernels wait at each other's barriers, `exec::Par::Seq`) — and its results
//! come back in the order of the items, its progress reports are forwarded to the
//! caller's sink in the order a run of the items one after another gives them (the
//! reports of a later item wait until the earlier ones have ended).

use crate::exec::Par;
use crate::run_context::{Progress, RunContext};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// A worker's message: item k's report, or that item k has ended.
enum Said {
    Report(usize, Progress),
    Ended(usize),
}

/// The gate of a context no race watches.
fn go_on(_: usize, _: f64) -> crate::optim::Control {
    crate::optim::Control::Continue
}

/// `f(k, ctx)` for every k in 0..n, in the order of k, each with a context of this run
/// computing on one thread: side by side on the run's threads (at most n at once) when
/// it has more than one, otherwise one after another on this thread. Either way every
/// item computes the same bits, whatever the machine's cores (over the pool's threads an
/// exact GP on 600 points does not end in the same last bits as on one). The items'
/// contexts have no observer and no race's gate (what a subset fit's context needs: its
/// phase is neither watched nor raced).
pub fn map<T: Send>(
    ctx: &RunContext,
    n: usize,
    f: impl Fn(usize, &RunContext) -> T + Sync,
) -> Vec<T> {
    let parts = ctx.parts().on(Par::Seq);
    let workers = ctx.exec.par.threads().min(n);
    if workers <= 1 {
        let sink = |p: &Progress| ctx.forward(p);
        let c = RunContext::raced(parts, &sink, None, &go_on);
        return (0..n).map(|k| f(k, &c)).collect();
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<Said>();
    let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (tx, next, f) = (tx.clone(), &next, &f);
                let parts = parts.clone();
                s.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= n {
                            return done;
                        }
                        let sink = |p: &Progress| {
                            // the receiver outlives the workers; a failed send loses a report
                            let _ = tx.send(Said::Report(k, p.clone()));
                        };
                        let c = RunContext::raced(parts.clone(), &sink, None, &go_on);
                        done.push((k, f(k, &c)));
                        let _ = tx.send(Said::Ended(k));
                    }
                })
            })
            .collect();
        drop(tx);
        // forward in the order of the items: item `shown`'s reports as they come, a
        // later item's once every earlier item has ended
        let mut held: Vec<Vec<Progress>> = (0..n).map(|_| Vec::new()).collect();
        let mut ended = vec![false; n];
        let mut shown = 0;
        for said in rx {
            match said {
                Said::Report(k, p) if k == shown => ctx.forward(&p),
                Said::Report(k, p) => held[k].push(p),
                Said::Ended(k) => ended[k] = true,
            }
            while shown < n && ended[shown] {
                shown += 1;
                if shown < n {
                    for p in held[shown].drain(..) {
                        ctx.forward(&p);
                    }
                }
            }
        }
        for h in handles {
            let done = match h.join() {
                Ok(done) => done,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            for (k, t) in done {
                slots[k] = Some(t);
            }
        }
    });
    slots
        .into_iter()
        .map(|t| t.expect("every item ran"))
        .collect()
}
