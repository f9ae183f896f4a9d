//! Writing to standard output and standard error without panicking.
//!
//! `println!` panics when its reader has gone (`sgpw predict ... | head -1`: "failed
//! printing to stdout: Broken pipe"). Commands write their output through [`out`],
//! which turns a closed pipe into [`Error::ClosedPipe`] (the command stops and exits
//! 0, quietly, as Unix tools do), and their notes through [`note`], which never fails:
//! a closed or full standard error must not stop a run that is saving results.

use crate::error::{Error, Result};
use std::io::{ErrorKind, Write};

/// Write `text` to standard output (flushed).
pub fn out(text: &str) -> Result<()> {
    let mut s = std::io::stdout().lock();
    s.write_all(text.as_bytes())
        .and_then(|()| s.flush())
        .map_err(|e| match e.kind() {
            ErrorKind::BrokenPipe => Error::ClosedPipe,
            _ => Error::File(format!("cannot write to standard output: {e}")),
        })
}

/// One line on standard error; a closed or broken standard error is ignored.
pub fn note(text: &str) {
    let mut s = std::io::stderr().lock();
    let _ = writeln!(s, "{text}");
}

/// `outln!("...", args)`: one line through [`out`]; `?` it.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::out::out(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `noteln!("...", args)`: one line through [`note`].
#[macro_export]
macro_rules! noteln {
    ($($arg:tt)*) => {
        $crate::cli::out::note(&format!($($arg)*))
    };
}
