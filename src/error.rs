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
    /// A bad value in a model (or session) file, with where it is, so that a reader of
    /// the file can name its line ([`Location`]).
    #[error("{message}")]
    At { at: Location, message: String },
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

/// Where in a TOML file something is: keys from the top, and array elements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location(pub Vec<Step>);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

impl Location {
    pub fn key(key: &str) -> Location {
        Location(vec![Step::Key(key.to_string())])
    }
    pub fn then(mut self, key: &str) -> Location {
        self.0.push(Step::Key(key.to_string()));
        self
    }
    pub fn index(mut self, i: usize) -> Location {
        self.0.push(Step::Index(i));
        self
    }
    /// `at` below this location (a model's location inside a session, say).
    pub fn join(mut self, at: &Location) -> Location {
        self.0.extend(at.0.iter().cloned());
        self
    }
}

/// As messages name it: `[table] key` (`[a.b] c` deeper, `key` at the top); indices
/// are left to the message ("row 3").
impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<&str> = self
            .0
            .iter()
            .filter_map(|s| match s {
                Step::Key(k) => Some(k.as_str()),
                Step::Index(_) => None,
            })
            .collect();
        match keys.split_last() {
            None => Ok(()),
            Some((last, [])) => write!(f, "{last}"),
            Some((last, tables)) => write!(f, "[{}] {last}", tables.join(".")),
        }
    }
}

impl Error {
    pub fn data(path: &Path, msg: impl std::fmt::Display) -> Self {
        Error::Data(format!("{}: {msg}", path.display()))
    }
    pub fn input(msg: impl std::fmt::Display) -> Self {
        Error::Input(msg.to_string())
    }
    /// A bad value at `at` in a model or session file.
    pub fn at(at: Location, msg: impl std::fmt::Display) -> Self {
        Error::At {
            at,
            message: msg.to_string(),
        }
    }
    /// Where the error is in its file, if it says.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Error::At { at, .. } => Some(at),
            _ => None,
        }
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
