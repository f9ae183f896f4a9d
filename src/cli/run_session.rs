//! `sgpw run`: run a session headless and write the results back into it; `sgpw
//! report`: print its results.

use super::exit;
use crate::error::{Error, Result};
use crate::session::report::ReportFormat;
use crate::session::shard::{self, Shard};
use crate::session::{Session, Status, report, runner};
use crate::{noteln, outln};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

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
    #[command(flatten)]
    pub limit: super::LimitArgs,
}

/// SIGINT, SIGTERM and SIGHUP set `interrupt` to their number; a second one ends the
/// process at once (the session file is then the one of the last finished run).
fn catch_signals() -> Result<Arc<AtomicUsize>> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let interrupt = Arc::new(AtomicUsize::new(0));
    let twice = Arc::new(AtomicBool::new(false));
    let err = |e: std::io::Error| Error::input(format!("cannot watch for signals: {e}"));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // Registered first, so it sees `twice` as it was before this signal.
        signal_hook::flag::register_conditional_shutdown(
            sig,
            i32::from(exit::signal(sig)),
            twice.clone(),
        )
        .map_err(err)?;
        signal_hook::flag::register_usize(sig, interrupt.clone(), sig as usize).map_err(err)?;
        signal_hook::flag::register(sig, twice.clone()).map_err(err)?;
    }
    Ok(interrupt)
}

pub fn run(args: RunArgs) -> Result<u8> {
    let interrupt = catch_signals()?;
    let summary = runner::run_session_limited(
        &args.session,
        args.jobs,
        args.force,
        args.shard,
        args.limit.bytes(),
        &mut |r| {
            let k = &r.key;
            match r.status {
                Status::Done => noteln!(
                    "done      {}/{} m={} seed={}: NMSE {} MNLP {} NLML {:.4} ({} it, {:.2} s)",
                    k.dataset,
                    k.label,
                    k.m,
                    k.seed,
                    // as the report shows them: an NMSE of 4e-6 is not "0.0000"
                    r.nmse.map_or("-".into(), report::fmt),
                    r.mnlp.map_or("-".into(), report::fmt),
                    r.nlml.unwrap_or(f64::NAN),
                    r.iterations,
                    r.train_seconds
                ),
                Status::Failed => noteln!(
                    "failed    {}/{} m={} seed={}: {}",
                    k.dataset,
                    k.label,
                    k.m,
                    k.seed,
                    r.message.as_deref().unwrap_or("")
                ),
                Status::Cancelled => noteln!(
                    "cancelled {}/{} m={} seed={} at iteration {} after {:.2} s (started, not finished: the next run re-runs it)",
                    k.dataset,
                    k.label,
                    k.m,
                    k.seed,
                    r.iterations,
                    r.train_seconds
                ),
            }
        },
        &interrupt,
    )?;
    let path = args.session.display();
    if let Some(note) = summary.session.pinned_note() {
        noteln!("note: {path} is {note}");
    }
    if summary.ran == 0 {
        noteln!("nothing to run: every run of {path} has a finished result (--force re-runs them)");
    }
    if let Some(sig) = summary.interrupted {
        let runs = |n: usize| crate::words::count(n, "run", "runs");
        noteln!(
            "interrupted by signal {sig}: {} finished and saved in {path}; {} cancelled while \
             training (recorded as cancelled at the iteration reached) and {} queued not \
             started (no result: still not run); `sgpw run {path}` runs both",
            runs(summary.done + summary.failed),
            runs(summary.cancelled),
            runs(summary.not_started.len())
        );
        for k in &summary.not_started {
            noteln!(
                "not run   {}/{} m={} seed={}: queued, not started",
                k.dataset,
                k.label,
                k.m,
                k.seed
            );
        }
        return Ok(exit::signal(sig));
    }
    match args.shard {
        None => outln!("{}", report::tables(&summary.session, false, false))?,
        Some(s) => outln!(
            "shard {s}: results in {} (fold them in with: sgpw merge {path} SHARD...)",
            s.path(&args.session).display()
        )?,
    }
    let bad = summary.failed + summary.cancelled;
    if bad > 0 {
        noteln!(
            "error: {} of {} did not finish ({} failed, {} cancelled); their messages are in {path}",
            bad,
            crate::words::count(summary.ran, "run", "runs"),
            summary.failed,
            summary.cancelled
        );
        return Ok(exit::INCOMPLETE);
    }
    Ok(exit::OK)
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
    outln!(
        "merged {n} result(s) from {} shard file(s) into {}",
        args.shards.len(),
        args.session.display()
    )
}

#[derive(Args)]
pub struct MigrateArgs {
    /// Session files to rewrite as schema version 4 (in place, atomically): what an older
    /// file left to its version's defaults is written out (noise_floor = 0 where a run
    /// had no floor, standardize and label of version 1), so every run keeps its meaning.
    #[arg(required = true)]
    pub sessions: Vec<PathBuf>,
    /// What the stored NLMLs of standardized runs in a version 1 file are, where the
    /// file cannot say (results with a test set written by the code that moved NLMLs to
    /// the raw scale also stored constant_mnlp and are known to be raw): "model" for
    /// results written before that change (model units: converted to the raw scale with
    /// the stored model's n and target sd, as a replay would give them), "raw" for
    /// results written after. Without it their scale stays unknown and `report` leaves
    /// their NLML out.
    #[arg(long, value_enum)]
    pub standardized_nlml: Option<StoredScale>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StoredScale {
    Model,
    Raw,
}

/// `sgpw migrate`: rewrite sessions as schema version 4 — older versions' defaults
/// (no noise floor; version 1: standardize = false, label = the method) made explicit,
/// the NLML scale of every result recorded.
pub fn migrate(args: MigrateArgs) -> Result<()> {
    for path in &args.sessions {
        let mut session = Session::read(path)?;
        let converted = match args.standardized_nlml {
            Some(StoredScale::Model) => session
                .settle_scales(crate::session::NlmlScale::Standardized)
                .map_err(|e| Error::file(path, e))?,
            Some(StoredScale::Raw) => session
                .settle_scales(crate::session::NlmlScale::Raw)
                .map_err(|e| Error::file(path, e))?,
            None => 0,
        };
        session.save(path)?;
        let unknown = session.unknown_scales();
        outln!(
            "{}: schema version {}; {} result(s), {converted} NLML(s) converted to the raw scale{}",
            path.display(),
            crate::session::SCHEMA_VERSION,
            session.results.len(),
            if unknown > 0 {
                format!(
                    "; {unknown} of unknown scale (standardized runs: say which with \
                     --standardized-nlml model|raw)"
                )
            } else {
                String::new()
            }
        )?;
    }
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
    /// markdown: tables per data set (mean over distinct seeds; † worse than the
    /// constant predictor on the test set, ‡ on the validation set, § collapsed to it);
    /// csv or json: one record per run (dataset, label, method, m, seed, status,
    /// standardize, seed_dependent, nlml on the raw target scale with nlml_scale, nmse,
    /// mnlp, constant_mnlp, worse_than_constant, collapsed, collapse_restarted,
    /// validation_nmse/mnlp, best_iteration, iterations, seconds), for pandas or a paper.
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: ReportFormat,
}

/// `sgpw report`: the result tables of a session, without running anything. A session
/// with no results says so on standard error and exits with [`exit::INCOMPLETE`].
pub fn report(args: ReportArgs) -> Result<u8> {
    let session = Session::read(&args.session)?;
    if session.results.is_empty() {
        noteln!(
            "{}: no results yet ({} defined): `sgpw run {}` runs them",
            args.session.display(),
            crate::words::count(session.all_runs().len(), "run", "runs"),
            args.session.display()
        );
        return Ok(exit::INCOMPLETE);
    }
    super::out::out(&report::render(
        &session,
        args.format,
        args.merge_generations,
        args.mse,
    )?)?;
    Ok(exit::OK)
}
