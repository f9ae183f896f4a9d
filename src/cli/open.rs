//! `sgpw open SESSION.toml` (and `sgpw` alone, on sessions/demo.toml): the terminal app.

use crate::error::{Error, Result};
use crate::session::Session;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct OpenArgs {
    /// Session file (TOML); a new one is created on the first save if it does not exist.
    pub session: PathBuf,
    /// Runs at once (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Dot markers instead of Braille, for fonts without braille.
    #[arg(long)]
    pub ascii: bool,
}

impl OpenArgs {
    /// The demo session: sessions/demo.toml here, else the one in the source tree.
    pub fn demo() -> OpenArgs {
        let here = PathBuf::from("sessions/demo.toml");
        let built = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/sessions/demo.toml"));
        let session = if here.exists() || !built.exists() {
            here
        } else {
            built
        };
        OpenArgs {
            session,
            jobs: 0,
            ascii: false,
        }
    }
}

pub fn run(args: OpenArgs) -> Result<()> {
    let (session, note) = if args.session.exists() {
        (Session::read(&args.session)?, None)
    } else if args.session.extension().is_some_and(|e| e == "toml")
        && args
            .session
            .parent()
            .is_none_or(|p| p.as_os_str().is_empty() || p.is_dir())
    {
        let name = args
            .session
            .file_stem()
            .map_or("untitled".into(), |s| s.to_string_lossy().into_owned());
        (
            Session::new(&name),
            Some(format!(
                "new session: a adds a data set, s saves it to {}",
                args.session.display()
            )),
        )
    } else {
        return Err(Error::file(
            &args.session,
            "no such session file (a new one must be a .toml file in an existing folder)",
        ));
    };
    crate::tui::run(&args.session, session, args.jobs, args.ascii, note)
}
