//! What a run will cost before it starts: the memory one evaluation holds and the
//! time it takes, from the method's count of both ([`super::Method::cost`]: the exact GP's n²
//! and n³, a low-rank method's n·m²) and a product rate measured once on this machine.
//! Below the `Method` trait, which returns a [`Cost`]; a run's [`Estimate`] is
//! `ValidRunSpec::estimate`. One estimate for every front end: `sgpw fit` and `sgpw run` print it and refuse a run
//! over `--max-memory`; the app's new-runs form shows it and asks before such a run.

use crate::exec::{CHUNK_ENTRIES, Par};
use crate::linalg;
use nalgebra::DMatrix;
use std::sync::OnceLock;
use std::time::Instant;

/// What one evaluation of the objective and its gradient costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Bytes held at once (the data, the evaluation's matrices).
    pub bytes: f64,
    /// Multiply-adds.
    pub multiply_adds: f64,
}

impl Cost {
    /// The exact GP on n points of d inputs: K, its Cholesky factor and K⁻¹ (three n×n
    /// matrices); ⅓n³ for the factorisation, ⅓n³ for the inverse, O(n²·d) for the kernel
    /// and its gradient.
    pub fn exact(n: usize, d: usize) -> Cost {
        let (n, d) = (n as f64, d as f64);
        Cost {
            bytes: 8.0 * (3.0 * n * n + n * (d + 1.0)),
            multiply_adds: 2.0 / 3.0 * n * n * n + 4.0 * n * n * d,
        }
    }

    /// A low-rank method with m features: a chunk of rows' m×rows matrices (at most
    /// [`CHUNK_ENTRIES`] entries each, four of them) and a few m×m; O(n·m²) for the
    /// core's products and solves, O(n·m·d) for the features.
    pub fn low_rank(n: usize, d: usize, m: usize) -> Cost {
        let rows = n.min(CHUNK_ENTRIES / m.max(1)).max(1) as f64;
        let (n, d, m) = (n as f64, d as f64, m.max(1) as f64);
        Cost {
            bytes: 8.0 * (n * (d + 1.0) + 4.0 * rows * m + 6.0 * m * m),
            multiply_adds: 3.0 * n * m * m + 2.0 * n * m * d,
        }
    }
}

/// A run's estimate, as shown before it starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Bytes the run holds at its peak.
    pub bytes: f64,
    /// Seconds one evaluation takes (an optimiser iteration takes one or more).
    pub seconds: f64,
}

impl Estimate {
    /// "about 6.1 GiB of memory, 2.5 min per evaluation"
    pub fn describe(&self) -> String {
        format!(
            "about {} of memory, {} per evaluation",
            bytes(self.bytes),
            seconds(self.seconds)
        )
    }

    /// Whether it fits in `limit` bytes.
    pub fn fits(&self, limit: usize) -> bool {
        self.bytes <= limit as f64
    }

    /// Why a run of `method` on n points is not started: its memory is over `limit`
    /// (`what_sets_it`: the flag or setting that chose the limit).
    pub fn refusal(&self, method: &str, n: usize, limit: usize, what_sets_it: &str) -> String {
        format!(
            "{method} on {n} training points would need {} of memory, more than {what_sets_it} \
             allows ({}); fit a subset (--subset / `subset`), a sparse method, or raise \
             {what_sets_it} if the machine has the memory",
            bytes(self.bytes),
            bytes(limit as f64)
        )
    }

    /// Whether it is worth a line before it starts: a second per evaluation or a GiB.
    pub fn is_costly(&self) -> bool {
        self.seconds >= 1.0 || self.bytes >= (1u64 << 30) as f64
    }
}

/// The threads each run uses in a pool of `workers` (0: one per core): one when
/// several run side by side, every core for one alone (src/jobs.rs).
pub fn threads_per_run(workers: usize) -> usize {
    let cores = rayon::current_num_threads();
    let workers = if workers == 0 { cores } else { workers };
    if workers > 1 { 1 } else { cores }
}

/// A size for people: "512 MiB", "6.1 GiB".
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b.max(0.0);
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || v >= 100.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A duration for people: "under 1 ms", "40 ms", "2.5 s", "2.5 min", "3.1 h" (small
/// ones without digits that depend on the machine: the app's snapshots show them).
pub fn seconds(s: f64) -> String {
    if s < 1e-3 {
        "under 1 ms".into()
    } else if s < 0.1 {
        format!("{:.0} ms", s * 1e3)
    } else if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Multiply-adds per second on `threads` threads: one thread's rate on a product of
/// the size the large evaluations are made of (measured once per process, ~30 ms),
/// times the threads at the 85% two threads reached in `sgpw bench --roofline`.
pub fn rate(threads: usize) -> f64 {
    static ONE_THREAD: OnceLock<f64> = OnceLock::new();
    let one = *ONE_THREAD.get_or_init(|| {
        let (m, n) = (256, 1024);
        let a = DMatrix::from_fn(m, m, |i, j| ((i * 5 + j * 11) % 13) as f64 / 13.0 - 0.5);
        let b = DMatrix::from_fn(m, n, |i, j| ((i * 3 + j * 17) % 19) as f64 / 19.0 - 0.5);
        let mut c = DMatrix::zeros(m, n);
        let mut best = f64::INFINITY;
        for _ in 0..4 {
            let t = Instant::now();
            linalg::gemm(&mut c, false, &a, false, &b, false, 1.0, Par::Seq);
            best = best.min(t.elapsed().as_secs_f64());
        }
        (m * m * n) as f64 / best.max(1e-9)
    });
    let threads = threads.max(1) as f64;
    one * if threads > 1.0 { 0.85 * threads } else { 1.0 }
}
