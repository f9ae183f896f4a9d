//! How one evaluation executes: the threads it may use and the token that cancels it.
//!
//! Every parallel loop of the numerical code (faer's kernels, the likelihood core's
//! stripes, the kernel fills and contractions, the feature maps) takes its setting from
//! an [`Exec`] passed in explicitly, as faer passes its `Par`; nothing reads a global or
//! thread-local setting. Long loops check the token between stripes and blocks, so a
//! cancelled fit stops within one block of work, not at the end of an evaluation.

use crate::error::{Error, Result};
use crate::scratch::Scratch;
use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The threads one evaluation may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Par {
    /// This thread only: fits that run side by side (faer's parallel kernels would wait
    /// at barriers for workers busy with another fit; measured: a 15 s fit took 400 s).
    Seq,
    /// Up to this many threads of rayon's global pool (0 = all of them).
    Threads(usize),
}

impl Par {
    /// One thread for 1, the pool for anything else (0 = every core).
    pub fn from_threads(n: usize) -> Par {
        if n == 1 { Par::Seq } else { Par::Threads(n) }
    }

    /// faer's setting for the same threads.
    pub fn faer(self) -> faer::Par {
        match self {
            Par::Seq => faer::Par::Seq,
            Par::Threads(0) => faer::Par::rayon(0),
            Par::Threads(n) => faer::Par::rayon(n),
        }
    }

    pub fn is_parallel(self) -> bool {
        self != Par::Seq
    }

    /// The number of threads this setting means.
    pub fn threads(self) -> usize {
        match self {
            Par::Seq => 1,
            Par::Threads(0) => rayon::current_num_threads(),
            Par::Threads(n) => n,
        }
    }
}

/// A shared flag that asks a run to stop. Cloning shares the flag.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Entries of one chunk's m×rows matrices: data whose Kuf would hold more are
/// evaluated a chunk of rows at a time, so memory stays O(n·D + m² + chunk·m) however
/// large n is (24 MiB per matrix: under the 32 MiB above which `main` lets glibc
/// map fresh pages per allocation, so each chunk reuses the previous one's memory
/// instead of page-faulting and zeroing it again; a whole n = 10⁴, m = 300 problem
/// is one chunk).
pub const CHUNK_ENTRIES: usize = 3 << 20;

/// The part of the memory available when the program starts that an evaluation may
/// spend by default on keeping chunks between its two passes ([`Exec::memory_budget`]).
pub const DEFAULT_BUDGET_SHARE: usize = 64;

/// Where the memory available is not known (no /proc/meminfo): assume this much.
const UNKNOWN_AVAILABLE: usize = 4 << 30;

/// Bytes of memory available to new allocations (MemAvailable), read once.
pub fn memory_available() -> usize {
    static AVAILABLE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| {
                let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
                let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
                kib.checked_mul(1024)
            })
            .unwrap_or(UNKNOWN_AVAILABLE)
    })
}

/// The default memory budget: 1/[`DEFAULT_BUDGET_SHARE`] of the memory available.
pub fn default_memory_budget() -> usize {
    memory_available() / DEFAULT_BUDGET_SHARE
}

/// A size in bytes as `--memory-budget` reads it. A type of its own, not a bare usize:
/// the command line reads every usize flag as a whole number (`arg_values`), which
/// had turned away every size with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemorySize(pub usize);

/// A memory size as `--memory-budget` takes it: a number with a unit (K, M, G, T:
/// powers of 1024, with an optional trailing B or iB; B alone for bytes), a share of
/// the memory available (`25%`), or 0. Errors say what to give instead.
pub fn parse_memory_size(text: &str) -> std::result::Result<MemorySize, String> {
    let t = text.trim();
    let hint = "give a size with a unit (512M, 4G, 1.5GiB), a share of the memory available \
                (25%), or 0";
    if let Some(p) = t.strip_suffix('%') {
        return match p.trim().parse::<f64>() {
            Ok(v) if (0.0..=100.0).contains(&v) => {
                Ok(MemorySize((memory_available() as f64 * v / 100.0) as usize))
            }
            _ => Err(format!("'{text}': a share must be between 0% and 100%")),
        };
    }
    let upper = t.to_ascii_uppercase();
    let body = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (number, scale) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 1u64 << 10),
        Some('M') => (&body[..body.len() - 1], 1 << 20),
        Some('G') => (&body[..body.len() - 1], 1 << 30),
        Some('T') => (&body[..body.len() - 1], 1 << 40),
        _ if body.len() < upper.len() => (body, 1),
        _ => {
            return match t.parse::<f64>() {
                Ok(0.0) => Ok(MemorySize(0)),
                Ok(_) => Err(format!("'{text}' has no unit: {hint}")),
                Err(_) => Err(format!("'{text}' is not a size: {hint}")),
            };
        }
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale as f64 <= usize::MAX as f64 => {
            Ok(MemorySize((v * scale as f64) as usize))
        }
        Ok(_) => Err(format!("'{text}': the size must be a number ≥ 0 ({hint})")),
        Err(_) => Err(format!("'{text}' is not a size: {hint}")),
    }
}

/// Threads, cancellation and the memory bound for one evaluation.
#[derive(Clone, Debug)]
pub struct Exec {
    pub par: Par,
    pub cancel: CancelToken,
    /// Largest m×rows matrix an evaluation may hold at once ([`CHUNK_ENTRIES`]).
    pub chunk_entries: usize,
    /// Bytes an evaluation over several chunks may spend keeping chunks' matrices from
    /// its first pass to its second, instead of computing them again (`--memory-budget`).
    /// The chunk in hand when the first pass ends is always kept: it costs nothing.
    pub memory_budget: usize,
    /// The buffers its evaluations reuse (shared by clones: the evaluations of one run
    /// take what the previous one gave back).
    pub scratch: Scratch,
    /// The processes whose rows an evaluation sums over besides this one's (`sgpw fit
    /// --distributed`); None: this process holds every row.
    pub share: Option<Arc<dyn RowShare>>,
}

/// What the root asks the other processes of a shared evaluation to evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    /// The objective and its gradient.
    Gradient,
    /// The objective alone.
    Value,
    /// The posterior.
    Posterior,
}

/// Training rows spread over several processes (one fit over MPI, src/distributed.rs):
/// what the likelihood core needs to add its sums over rows across them. Every process
/// evaluates the same model on its own rows, and the sums are added with
/// [`RowShare::all_sum`] in the same order on every process. The transport is not
/// named here.
pub trait RowShare: Send + Sync + std::fmt::Debug {
    /// Replace `buf` with the entrywise sum of every process's `buf` (the same length on
    /// each), the same bits on every process.
    fn all_sum(&self, buf: &mut [f64]) -> Result<()>;
    /// Whether this is the root: the process that adds the terms that are not sums over
    /// rows (exactly one does), runs the optimiser and announces each evaluation.
    fn is_root(&self) -> bool;
    /// On the root, before an evaluation over every process's rows: have the others
    /// evaluate `what` at `model` (a `ModelFile`, which this layer cannot name).
    fn announce(&self, what: Evaluation, model: &dyn Any) -> Result<()>;
}

impl Default for Exec {
    /// Every core, never cancelled (the CLI's single evaluations, tests).
    fn default() -> Exec {
        Exec::new(Par::Threads(0), CancelToken::new())
    }
}

impl Exec {
    pub fn new(par: Par, cancel: CancelToken) -> Exec {
        Exec {
            par,
            cancel,
            chunk_entries: CHUNK_ENTRIES,
            memory_budget: default_memory_budget(),
            scratch: Scratch::default(),
            share: None,
        }
    }

    /// The same, evaluating over the rows of every process of `share`.
    pub fn with_share(self, share: Arc<dyn RowShare>) -> Exec {
        Exec {
            share: Some(share),
            ..self
        }
    }

    /// The same, with this memory budget (None: the default).
    pub fn with_memory_budget(self, bytes: Option<usize>) -> Exec {
        Exec {
            memory_budget: bytes.unwrap_or(self.memory_budget),
            ..self
        }
    }

    /// One thread, never cancelled.
    pub fn sequential() -> Exec {
        Exec::new(Par::Seq, CancelToken::new())
    }

    /// Rows per chunk for m features.
    pub fn chunk_rows(&self, m: usize) -> usize {
        (self.chunk_entries / m.max(1)).max(1)
    }

    /// `Err(Error::Cancelled)` once the run was asked to stop.
    pub fn check(&self) -> Result<()> {
        if self.cancel.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}
