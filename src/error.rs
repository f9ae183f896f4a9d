//! One error type for the library. Every message is written for the user: it names
//! the file, column or row involved and, where there is one, what to do about it.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad data in a file: the message names the file and the column and/or row.
    #[error("{0}")]
    Data(String),
    /// A bad setting (unknown method, m larger than the training set, ...).
    #[error("{0}")]
    Input(String),
    /// A factorisation failed even with the largest jitter, or a value became NaN.
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// A model or session file that cannot be read, parsed or written.
    #[error("{0}")]
    File(String),
    /// The run was cancelled by its caller.
    #[error("cancelled")]
    Cancelled,
    /// A fit was cancelled after it had started iterating: how far it got.
    #[error("cancelled")]
    CancelledAfter(Box<Partial>),
    /// Standard output was closed by its reader (`sgpw predict ... | head -1`): the
    /// command stops quietly, as Unix tools do.
    #[error("standard output was closed")]
    ClosedPipe,
}

/// How far a cancelled fit got, kept in its (cancelled) result.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial {
    pub iterations: usize,
    /// NLML after each iteration, starting with the initial value.
    pub trace: Vec<f64>,
    pub seconds: f64,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn data(path: &Path, msg: impl std::fmt::Display) -> Self {
        Error::Data(format!("{}: {msg}", path.display()))
    }
    pub fn input(msg: impl std::fmt::Display) -> Self {
        Error::Input(msg.to_string())
    }
    pub fn numerical(msg: impl std::fmt::Display) -> Self {
        Error::Numerical(msg.to_string())
    }
    pub fn file(path: &Path, msg: impl std::fmt::Display) -> Self {
        Error::File(format!("{}: {msg}", path.display()))
    }
    /// Whether the run was cancelled (before or after it started iterating).
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Error::Cancelled | Error::CancelledAfter(_))
    }
}
