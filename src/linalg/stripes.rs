//! Column stripes: the O(n·m²) work cut along n. The low-rank core and the kernel
//! contractions cut their n columns into a fixed number of stripes; each stripe runs
//! sequential faer kernels on cache-sized blocks and keeps its own partial sums, which
//! are then added in stripe order. The threads only decide which stripe runs where, so
//! the result is the same bit for bit on any number of threads.

use crate::exec::Par;

/// Stripes per evaluation (enough to keep two to eight cores busy).
pub const STRIPES: usize = 8;
/// Fewer columns than this per stripe cost more in overhead than they save.
const MIN_STRIPE: usize = 64;

/// Columns per stripe for n columns; depends on n alone.
pub fn stripe_len(n: usize) -> usize {
    n.div_ceil(STRIPES).max(MIN_STRIPE)
}

/// Map `f` over `items` on the rayon pool (or on this thread for `Par::Seq`),
/// returning the results in the order of `items`. Each item is a task of its own, so a
/// thread that finishes early takes any item not yet started (rayon's default handed
/// each of two threads half the items up front, and the faster half waited).
pub fn map_ordered<I: Send, T: Send>(
    par: Par,
    items: Vec<I>,
    f: impl Fn(I) -> T + Sync + Send,
) -> Vec<T> {
    use rayon::prelude::*;
    if !par.is_parallel() {
        items.into_iter().map(f).collect()
    } else {
        items.into_par_iter().with_max_len(1).map(f).collect()
    }
}

/// The items of at most [`STRIPES`] stripes, as [`map_stripes`] takes them (an array,
/// not a vector: nothing is allocated).
pub type Stripes<T> = [Option<T>; STRIPES];

/// Collect at most [`STRIPES`] items into an array.
pub fn stripe_array<I>(items: impl IntoIterator<Item = I>) -> Stripes<I> {
    let mut out: Stripes<I> = std::array::from_fn(|_| None);
    for (slot, item) in out.iter_mut().zip(items) {
        *slot = Some(item);
    }
    out
}

/// [`map_ordered`] on at most [`STRIPES`] items held in an array, without allocating:
/// the results come back in the same slots.
pub fn map_stripes<I: Send, T: Send>(
    par: Par,
    mut items: Stripes<I>,
    f: impl Fn(I) -> T + Sync + Send,
) -> Stripes<T> {
    use rayon::prelude::*;
    let mut out: Stripes<T> = std::array::from_fn(|_| None);
    let run = |(item, slot): (&mut Option<I>, &mut Option<T>)| {
        if let Some(x) = item.take() {
            *slot = Some(f(x));
        }
    };
    if par.is_parallel() {
        items
            .par_iter_mut()
            .zip(out.par_iter_mut())
            .with_max_len(1)
            .for_each(run);
    } else {
        items.iter_mut().zip(out.iter_mut()).for_each(run);
    }
    out
}
