//! `sgpw run`: run a session headless and write the results back into it.

use crate::error::Result;
use crate::session::{Status, report, runner};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct RunArgs {
    /// Session file (TOML).
    pub session: PathBuf,
    /// Runs at once (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Re-run runs that already have a finished result.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: RunArgs) -> Result<()> {
    let session = runner::run_session(&args.session, args.jobs, args.force, &mut |r| {
        let k = &r.key;
        match r.status {
            Status::Done => eprintln!(
                "done      {}/{} m={} seed={}: NMSE {} MNLP {} NLML {:.4} ({} it, {:.2} s)",
                k.dataset,
                k.label,
                k.m,
                k.seed,
                r.nmse.map_or("-".into(), |v| format!("{v:.4}")),
                r.mnlp.map_or("-".into(), |v| format!("{v:.4}")),
                r.nlml.unwrap_or(f64::NAN),
                r.iterations,
                r.train_seconds
            ),
            Status::Failed => eprintln!(
                "failed    {}/{} m={} seed={}: {}",
                k.dataset,
                k.label,
                k.m,
                k.seed,
                r.message.as_deref().unwrap_or("")
            ),
            Status::Cancelled => eprintln!(
                "cancelled {}/{} m={} seed={}",
                k.dataset, k.label, k.m, k.seed
            ),
        }
    })?;
    println!("{}", report::tables(&session, false, false));
    Ok(())
}

#[derive(Args)]
pub struct ReportArgs {
    /// Session file (TOML) with results.
    pub session: PathBuf,
    /// Average data sets named NAME-01, NAME-02, … together (generations of one problem).
    #[arg(long)]
    pub merge_generations: bool,
    /// Show the test MSE (in the target's units, as the SPGP+DR/HS paper reports it)
    /// instead of the NMSE.
    #[arg(long)]
    pub mse: bool,
}

/// `sgpw report`: the result tables of a session, without running anything.
pub fn report(args: ReportArgs) -> Result<()> {
    let session = crate::session::Session::read(&args.session)?;
    print!(
        "{}",
        report::tables(&session, args.merge_generations, args.mse)
    );
    Ok(())
}
