//! `sgpw run`: run a session headless and write the results back into it.

use crate::error::Result;
use crate::session::shard::{self, Shard};
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
    /// Run only shard I of N (0 ≤ I < N) of the unfinished runs — a run belongs to the
    /// shard its (data set, label, m, seed) hashes to — and write the results to
    /// SESSION.shard-I-of-N.toml beside the session, not to the session; fold them in
    /// with `sgpw merge`. For job arrays: --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT.
    #[arg(long)]
    pub shard: Option<Shard>,
}

pub fn run(args: RunArgs) -> Result<()> {
    let session =
        runner::run_session(&args.session, args.jobs, args.force, args.shard, &mut |r| {
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
    match args.shard {
        None => println!("{}", report::tables(&session, false, false)),
        Some(s) => println!(
            "shard {s}: results in {} (fold them in with: sgpw merge {} SHARD...)",
            s.path(&args.session).display(),
            args.session.display()
        ),
    }
    Ok(())
}

#[derive(Args)]
pub struct MergeArgs {
    /// Session file (TOML) the shards ran.
    pub session: PathBuf,
    /// Shard files written by `sgpw run --shard` (e.g. SESSION.shard-*-of-N.toml).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
}

/// `sgpw merge`: fold shard files into their session (atomically); a run with two
/// different results is an error naming it.
pub fn merge(args: MergeArgs) -> Result<()> {
    let n = shard::merge(&args.session, &args.shards)?;
    println!(
        "merged {n} result(s) from {} shard file(s) into {}",
        args.shards.len(),
        args.session.display()
    );
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
