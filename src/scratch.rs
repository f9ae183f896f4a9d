//! Memory an evaluation borrows and gives back, so that the evaluations of one fit
//! reuse the same buffers: after the first, an evaluation of a low-rank method asks the
//! allocator for nothing (tests/allocations.rs counts). Buffers come back with stale
//! contents — every caller overwrites what it takes, or asks for zeros — so a kernel
//! matrix or a copy of one is written once, not zeroed first.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use nalgebra::{DMatrix, DVector};
use std::sync::{Arc, Mutex};

/// The most buffers, and bytes, a pool keeps: past that, code that allocates its own
/// buffers each time and gives them back would grow it without end, so what comes back
/// beyond these is freed (a whole evaluation of n = 10⁴, m = 400 needs about 100 MB).
const MAX_BUFFERS: usize = 256;
const MAX_BYTES: usize = 256 << 20;

/// A pool of f64 buffers shared by the clones of one [`crate::exec::Exec`] (a run's
/// evaluations, and the stripes of one evaluation on their threads), and the byte
/// stack faer's factorisations work in.
#[derive(Clone, Default)]
pub struct Scratch {
    buffers: Arc<Mutex<Vec<Vec<f64>>>>,
    stack: Arc<Mutex<Option<MemBuffer>>>,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.buffers.lock().map_or(0, |b| b.len());
        write!(f, "Scratch({held} buffers)")
    }
}

impl Scratch {
    /// Run `f` with a byte stack of at least `req` (faer's scratch space), grown when a
    /// request is larger than any before.
    pub fn with_stack<R>(&self, req: StackReq, f: impl FnOnce(&mut MemStack) -> R) -> R {
        let bytes = req.unaligned_bytes_required();
        let mut own;
        let mut guard = self.stack.lock().ok();
        let buf: &mut MemBuffer = match guard.as_deref_mut() {
            Some(slot) => {
                if slot.as_ref().is_none_or(|b| b.len() < bytes) {
                    *slot = Some(MemBuffer::new(StackReq::new_aligned::<u8>(bytes, 64)));
                }
                slot.as_mut().expect("just filled")
            }
            None => {
                own = MemBuffer::new(StackReq::new_aligned::<u8>(bytes, 64));
                &mut own
            }
        };
        f(MemStack::new(buf))
    }

    /// A buffer of `len` values with unspecified contents: the smallest pooled buffer
    /// that holds them, or a new one.
    pub fn take(&self, len: usize) -> Vec<f64> {
        if len == 0 {
            // nothing to hold: a pooled buffer lent here would be zero-filled back to
            // its whole length on `give` (megabytes, for an empty request)
            return Vec::new();
        }
        let found = self.buffers.lock().ok().and_then(|mut pool| {
            let best = pool
                .iter()
                .enumerate()
                .filter(|(_, v)| v.len() >= len)
                .min_by_key(|(_, v)| v.len())
                .map(|(i, _)| i)?;
            Some(pool.swap_remove(best))
        });
        match found {
            Some(mut v) => {
                v.truncate(len);
                v
            }
            None => vec![0.0; len],
        }
    }

    /// A buffer of `len` zeros.
    pub fn zeros(&self, len: usize) -> Vec<f64> {
        let mut v = self.take(len);
        v.fill(0.0);
        v
    }

    /// An r×c matrix with unspecified contents.
    pub fn matrix(&self, r: usize, c: usize) -> DMatrix<f64> {
        DMatrix::from_vec(r, c, self.take(r * c))
    }

    /// An r×c matrix of zeros.
    pub fn zero_matrix(&self, r: usize, c: usize) -> DMatrix<f64> {
        DMatrix::from_vec(r, c, self.zeros(r * c))
    }

    /// A copy of `m` in a pooled buffer.
    pub fn copy(&self, m: &DMatrix<f64>) -> DMatrix<f64> {
        let mut c = self.matrix(m.nrows(), m.ncols());
        c.copy_from(m);
        c
    }

    /// Give a buffer back. Its whole capacity holds values from then on (a buffer
    /// taken shorter than it was comes back at its full length), so that `take` never
    /// exposes memory that was not written.
    pub fn give(&self, mut v: Vec<f64>) {
        if v.capacity() == 0 {
            return;
        }
        let full = v.capacity();
        v.resize(full, 0.0);
        if let Ok(mut pool) = self.buffers.lock() {
            let held: usize = pool.iter().map(|b| b.len()).sum();
            if pool.len() < MAX_BUFFERS && 8 * (held + full) <= MAX_BYTES {
                pool.push(v);
            }
        }
    }

    /// Give a matrix's buffer back.
    pub fn give_matrix(&self, m: DMatrix<f64>) {
        self.give(m.data.into());
    }

    /// Give a vector's buffer back.
    pub fn give_vector(&self, v: DVector<f64>) {
        self.give(v.data.into());
    }
}
