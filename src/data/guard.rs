//! Running a third-party reader (polars) on a user's file so that a panic inside it
//! becomes an error naming the file, and the panic hooks stay quiet about it.

use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    static IN_READER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Guarded readers running now, on any thread.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Run a third-party reader; a panic inside it becomes `Err(its message)`.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    let outer = IN_READER.with(|c| c.replace(true));
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    ACTIVE.fetch_sub(1, Ordering::SeqCst);
    IN_READER.with(|c| c.set(outer));
    r.map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the reader failed".into())
    })
}

/// Whether a panic on this thread is inside a guarded reader, so that panic hooks stay
/// quiet (the panic becomes an error message naming the file): this thread runs one,
/// or it is one of polars' worker threads while one runs (polars decodes columns in
/// parallel, and a panic there comes back to the guarded caller).
pub fn in_guarded_reader() -> bool {
    IN_READER.with(|c| c.get())
        || ACTIVE.load(Ordering::SeqCst) > 0
            && std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with("polars-"))
}
