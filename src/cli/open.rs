//! `sgpw open SESSION.toml` (and `sgpw` alone, on sessions/demo.toml): the terminal app.

use super::exit;
use crate::error::Result;
use crate::noteln;
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

pub fn run(args: OpenArgs) -> Result<u8> {
    // before the session is read: without a terminal there is nothing to open it in
    crate::tui::require_terminal()?;
    let opened = crate::tui::open(&args.session)?;
    let ending = crate::tui::run(&args.session, opened, args.jobs, args.ascii)?;
    // The terminal is restored by now: say what was kept (standard error may be the
    // terminal that went away; then nobody reads it and nothing fails).
    let Some(sig) = ending.signal else {
        return Ok(exit::OK);
    };
    let name = match sig {
        signal_hook::consts::SIGHUP => "SIGHUP (the terminal went away)".to_string(),
        signal_hook::consts::SIGINT => "SIGINT".to_string(),
        signal_hook::consts::SIGTERM => "SIGTERM".to_string(),
        n => format!("signal {n}"),
    };
    let mut msg = format!("sgpw: stopped by {name}");
    if let Some(j) = &ending.journal {
        msg.push_str(&format!(
            "; unsaved work is kept in {} (`sgpw open {}` offers to recover it)",
            j.display(),
            args.session.display()
        ));
    } else if !ending.unsaved {
        msg.push_str("; nothing was unsaved");
    }
    if ending.unsaved {
        msg.push_str("; the autosave failed, so unsaved results are lost");
    }
    let runs = |n: usize| crate::words::count(n, "run", "runs");
    if ending.cancelled_runs > 0 {
        msg.push_str(&format!(
            "; {} training cancelled (kept as cancelled at the iteration reached)",
            runs(ending.cancelled_runs)
        ));
    }
    if ending.unstarted_runs > 0 {
        msg.push_str(&format!(
            "; {} queued never started (still not run)",
            runs(ending.unstarted_runs)
        ));
    }
    noteln!("{msg}");
    Ok(exit::signal(sig))
}
