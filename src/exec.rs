//! How one evaluation executes: the threads it may use and the token that cancels it.
//!
//! Every parallel loop of the numerical code (faer's kernels, the likelihood core's
//! stripes, the kernel fills and contractions, the feature maps) takes its setting from
//! an [`Exec`] passed in explicitly, as faer passes its `Par`; nothing reads a global or
//! thread-local setting. Long loops check the token between stripes and blocks, so a
//! cancelled fit stops within one block of work, not at the end of an evaluation.

use crate::error::{Error, Result};
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

/// Threads, cancellation and the memory bound for one evaluation.
#[derive(Clone, Debug)]
pub struct Exec {
    pub par: Par,
    pub cancel: CancelToken,
    /// Largest m×rows matrix an evaluation may hold at once ([`CHUNK_ENTRIES`]).
    pub chunk_entries: usize,
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
