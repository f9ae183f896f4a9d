//! After the first evaluation of a fit, an evaluation of a low-rank method's objective
//! and gradient asks the allocator for nothing: its buffers come from the run's scratch
//! (`Exec::scratch`), and its gradient goes into the caller's vector
//! (`Method::objective_into`). A counting global allocator proves it, for one chunk and
//! for several, on one thread and on the pool's threads.

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

mod common;
use common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::exec::Par;
use sgpw::methods;
use sgpw::run_spec::RunSpec;

/// Allocations made by `evals` evaluations after a first one.
fn allocations(method: &str, data: &TrainData, exec: &Exec, evals: usize) -> usize {
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
    meth.objective_into(&model, data, exec, &mut grad)
        .expect("first");
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
        let sizes: Vec<usize> = SIZES.iter().map(|s| s.load(Ordering::SeqCst)).collect();
        eprintln!("{method}: {n} allocations, the last of sizes {sizes:?}");
    }
    n
}

#[test]
fn evaluations_after_the_first_allocate_nothing() {
    let data = toy_data(700, 3, 5);
    let one = Exec::sequential();
    let chunked = |budget| Exec {
        chunk_entries: 20 * 150,
        memory_budget: budget,
        ..Exec::sequential()
    };
    for method in ["fitc", "vfe"] {
        assert_eq!(
            allocations(method, &data, &one, 5),
            0,
            "{method}, one chunk"
        );
        for budget in [0, usize::MAX] {
            assert_eq!(
                allocations(method, &data, &chunked(budget), 5),
                0,
                "{method}, chunks, budget {budget}"
            );
        }
        // on the pool's threads (run from one of them: a call from outside the pool
        // hands rayon a job, and its queue allocates a block every 63 jobs)
        let pool = Exec::new(Par::Threads(0), Default::default());
        let n = rayon::join(|| allocations(method, &data, &pool, 5), || ()).0;
        assert_eq!(n, 0, "{method}, threads");
    }
}
