//! After the first evaluation of a fit, an evaluation of a low-rank method's objective
//! and gradient asks the allocator for nothing: its buffers come from the run's scratch
//! (`Exec::scratch`), and its gradient goes into the caller's vector
//! (`Method::objective_into`). So do the selection methods' (greedy, nystrom-opt), whose
//! basis goes to the core as a typed state, not as a model file rewritten as dtc's. A counting global allocator proves it for one chunk and
//! for several on one thread; on the pool's threads the scheduler and the scratch pool
//! still allocate now and then (see the test), fewer than once per evaluation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static COUNT: AtomicUsize = AtomicUsize::new(0);
/// The sizes of the last 16 allocations, for the message when there are some.
static SIZES: [AtomicUsize; 16] = [const { AtomicUsize::new(0) }; 16];

fn note(size: usize) {
    let i = COUNT.fetch_add(1, Ordering::SeqCst);
    SIZES[i % 16].store(size, Ordering::SeqCst);
}

// SAFETY: every call is passed on to the system allocator unchanged; the counter only
// counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[path = "suite/common.rs"]
mod common;
use common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::exec::Par;
use sgpw::methods;
use sgpw::run_spec::RunSpec;

/// Held by each test: the count is the whole process's, so the tests take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Allocations made by `evals` evaluations after `warm` first ones.
fn allocations(method: &str, data: &TrainData, exec: &Exec, warm: usize, evals: usize) -> usize {
    let meth = methods::get(method).expect("method");
    let spec = RunSpec {
        method: method.into(),
        m: 20,
        seed: 3,
        iters: 10,
        standardize: false,
        options: Default::default(),
    };
    let model = init(meth, data, &spec, &mut ChaCha8Rng::seed_from_u64(4)).expect("init");
    let mut grad = Vec::new();
    for _ in 0..warm {
        meth.objective_into(&model, data, exec, &mut grad)
            .expect("first");
    }
    // the kernels' own first use on each of the pool's threads (faer's packing buffer,
    // a thread-local allocated once per thread) is not the evaluation's
    rayon::broadcast(|_| {
        meth.objective(&model, data, &Exec::sequential())
            .map(|_| ())
    })
    .into_iter()
    .collect::<sgpw::error::Result<()>>()
    .expect("warm-up on every thread");
    let before = COUNT.load(Ordering::SeqCst);
    for _ in 0..evals {
        meth.objective_into(&model, data, exec, &mut grad)
            .expect("evaluation");
    }
    let n = COUNT.load(Ordering::SeqCst) - before;
    if n > 0 {
        let end = COUNT.load(Ordering::SeqCst);
        let sizes: Vec<usize> = (end.saturating_sub(n.min(16))..end)
            .map(|i| SIZES[i % 16].load(Ordering::SeqCst))
            .collect();
        eprintln!("{method}: {n} allocations, of sizes {sizes:?}");
    }
    n
}

#[test]
fn evaluations_after_the_first_allocate_nothing() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let data = toy_data(700, 3, 5);
    let one = Exec::sequential();
    let chunked = |budget| Exec {
        chunk_entries: 20 * 150,
        memory_budget: budget,
        ..Exec::sequential()
    };
    for method in ["fitc", "vfe"] {
        assert_eq!(
            allocations(method, &data, &one, 1, 5),
            0,
            "{method}, one chunk"
        );
        for budget in [0, usize::MAX] {
            assert_eq!(
                allocations(method, &data, &chunked(budget), 1, 5),
                0,
                "{method}, chunks, budget {budget}"
            );
        }
        // On the pool's threads (run from one of them: a call from outside the pool
        // hands rayon a job, and its queue allocates a block every 63 jobs), the
        // evaluation asks for nothing per call, but not always for nothing at all: now
        // and then the scheduler grows a work queue (24 and 1536 bytes) and the scratch
        // pool meets more stripes at once than before and keeps one more buffer (about
        // 14 kB); which evaluation does depends on the threads' timing (1 run in 10 saw
        // 1–3 such allocations in 5 evaluations). So: fewer than one per evaluation,
        // where an evaluation that allocates its buffers takes dozens.
        let pool = Exec::new(Par::Threads(0), Default::default());
        let evals = 20;
        let n = rayon::join(|| allocations(method, &data, &pool, 5, evals), || ()).0;
        assert!(
            n < evals,
            "{method}, threads: {n} allocations in {evals} evaluations"
        );
    }
}

/// greedy (its VFE bound and, with `approx = "dtc"`, the DTC evidence at the selected
/// basis) and nystrom-opt (the DTC evidence at B) evaluate through the core at their
/// basis as the pseudo-input family's state: no model file is built per evaluation.
#[test]
fn the_selection_methods_evaluations_allocate_nothing_after_the_first() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let data = toy_data(300, 3, 6);
    let chunked = Exec {
        chunk_entries: 20 * 70,
        ..Exec::sequential()
    };
    for (method, approx) in [
        ("greedy", None),
        ("greedy", Some("dtc")),
        ("nystrom-opt", None),
    ] {
        for exec in [Exec::sequential(), chunked.clone()] {
            let n = selection_allocations(method, approx, &data, &exec);
            assert_eq!(
                n, 0,
                "{method} {approx:?}, {} rows a chunk",
                exec.chunk_entries
            );
        }
    }
}

/// [`allocations`] for a method whose model is read from an options table.
fn selection_allocations(
    method: &str,
    approx: Option<&str>,
    data: &TrainData,
    exec: &Exec,
) -> usize {
    let meth = methods::get(method).expect("method");
    let spec = RunSpec {
        method: method.into(),
        m: 20,
        seed: 3,
        iters: 10,
        standardize: false,
        options: options(&approx.map_or(String::new(), |a| format!("approx = \"{a}\""))),
    };
    let model = init(meth, data, &spec, &mut ChaCha8Rng::seed_from_u64(4)).expect("init");
    let mut grad = Vec::new();
    meth.objective_into(&model, data, exec, &mut grad)
        .expect("first");
    let before = COUNT.load(Ordering::SeqCst);
    for _ in 0..5 {
        meth.objective_into(&model, data, exec, &mut grad)
            .expect("evaluation");
    }
    COUNT.load(Ordering::SeqCst) - before
}
