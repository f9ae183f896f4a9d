//! The headless command line: one file per subcommand; this file holds the argument
//! groups they share and the dispatch.

pub mod bench;
pub use bench::synthetic as bench_data;
pub mod fit;
mod gen_data;
mod nlml;
mod open;
pub mod out;
mod plot;
mod predict;
mod roofline;
mod run_session;
mod stream;

use crate::data::LoadSpec;
use crate::distributed::Distributed;
use crate::error::{Error, Result};
use crate::run_spec::{RunEntry, RunSpec};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sgpw",
    version,
    about = "sgpw — the sparse Gaussian-process workbench",
    long_about = "Fit, compare and inspect sparse Gaussian-process methods (exact GP, \
                  SPGP/FITC, ...) for regression, classification and counts, headless or in \
                  the terminal app."
)]
pub struct Cli {
    /// Without a subcommand: open the app on sessions/demo.toml.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Train one model on a data set and report its objective and test scores (NMSE and
    /// MNLP; error rate and AUC for classification, RMSE for counts).
    Fit(fit::FitArgs),
    /// Predict with a model file, one CSV row per input row: mean, var_latent, var_noisy
    /// (Gaussian); latent_mean, latent_var, p1 (bernoulli); latent_mean, latent_var, mean,
    /// var, lower95, upper95 (poisson, studentt: y's mean, variance and central 95%
    /// interval).
    Predict(predict::PredictArgs),
    /// The objective (and with --json its gradient) at a model's parameters, without
    /// training: the NLML, or the negative ELBO for vfe (and --approx vfe) and the
    /// power-EP energy for pep, which bound or approximate it — on the raw target scale
    /// (a standardized model's own value + n·log target sd), as `fit` reports it.
    Nlml(nlml::NlmlArgs),
    /// Time one NLML + gradient evaluation on synthetic data.
    Bench(bench::BenchArgs),
    /// Write one of the papers' synthetic data sets (sinc, spiral, xsinx3, hetero).
    Gen(gen_data::GenArgs),
    /// Online PSDS: fold the rows of a file into a psds/ssgp model one by one and
    /// report test NMSE/MNLP (or the NLML so far) every K samples.
    Stream(stream::StreamArgs),
    /// Run every run of a session file headless and write the results back into it.
    Run(run_session::RunArgs),
    /// Fold the shard files of `sgpw run --shard` into their session.
    Merge(run_session::MergeArgs),
    /// Rewrite session files as schema version 4 (older defaults made explicit, NLML scales recorded).
    Migrate(run_session::MigrateArgs),
    /// Print a session's results as Markdown tables (NMSE / MNLP per method and m), or
    /// one record per run as CSV or JSON.
    Report(run_session::ReportArgs),
    /// Draw one of the app's charts of a session's results as SVG or PNG (evidence,
    /// comparison with ±1 s.e. over seeds, prediction, validation).
    Plot(plot::PlotArgs),
    /// Open a session in the terminal app (`sgpw` alone opens sessions/demo.toml).
    Open(open::OpenArgs),
}

/// Where the data come from (shared by fit and the data-reading commands).
/// What `--distributed` says in a build without MPI.
pub const NO_MPI: &str = "--distributed needs sgpw-mpi, sgpw built with MPI: install an MPI \
     library (Debian: apt-get install libopenmpi-dev openmpi-bin libclang-dev), build it \
     with `cargo build --release -p sgpw-mpi` (target/release/sgpw-mpi), and start it with \
     `mpirun -np K sgpw-mpi fit --distributed …` (docs/distributed.md)";

#[derive(Args, Clone, Debug)]
pub struct DataArgs {
    /// Training data: CSV (with a header row) or Parquet.
    #[arg(long)]
    pub train: PathBuf,
    /// Test data with the same columns (otherwise --split, or no test set).
    #[arg(long, conflicts_with = "split")]
    pub test: Option<PathBuf>,
    /// Use this fraction of the rows for training and the rest as the test set (seeded shuffle).
    #[arg(long)]
    pub split: Option<f64>,
    /// Target column (default: the last column).
    #[arg(long)]
    pub target: Option<String>,
    /// Feature columns, comma-separated (default: every other column).
    #[arg(long, value_delimiter = ',')]
    pub features: Option<Vec<String>>,
    /// Drop rows with missing values instead of stopping with an error.
    #[arg(long)]
    pub drop_missing: bool,
}

impl DataArgs {
    pub fn spec(&self, seed: u64) -> LoadSpec {
        LoadSpec {
            train: self.train.clone(),
            test: self.test.clone(),
            split: self.split,
            seed,
            target: self.target.clone(),
            features: self.features.clone(),
            drop_missing: self.drop_missing,
        }
    }
}

/// What to train (shared by fit and bench): the general run fields and options as
/// declared once in [`RunEntry`] (a session's `[[runs]]` entry and the app's form read
/// the same declaration and defaults).
#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub run: RunEntry,
    /// Standardize inputs and targets: the default (kept so older scripts still run).
    #[arg(long = "standardize", hide = true, conflicts_with = "standardize")]
    pub standardize_flag: bool,
}

impl RunArgs {
    /// The one run these flags ask for (one --m, one --seed).
    pub fn spec(&self) -> Result<RunSpec> {
        self.run.single().map_err(Error::input)
    }
}

/// How much memory an evaluation may spend to save time (fit, bench, nlml).
#[derive(Args, Clone, Debug, Default)]
pub struct MemoryArgs {
    /// Memory an evaluation over data too large for one chunk may spend keeping chunks
    /// between its two passes instead of computing them again: a size (512M, 4G,
    /// 1.5GiB), a share of the memory available (25%), or 0. Default: 1/64 of the
    /// memory available when sgpw starts. It changes the time, never the result.
    #[arg(long, value_parser = crate::exec::parse_memory_size, allow_hyphen_values = true)]
    pub memory_budget: Option<crate::exec::MemorySize>,
}

impl MemoryArgs {
    /// The budget in bytes, if one was given.
    pub fn bytes(&self) -> Option<usize> {
        self.memory_budget.map(|s| s.0)
    }
}

/// The memory above which `fit` and `run` refuse to start a run.
#[derive(Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// Refuse a run whose estimated memory is over this size: a size (512M, 16G), or a
    /// share of the memory available (80%). The estimate is printed before a costly run
    /// starts (the exact GP holds three n×n matrices: 6.1 GiB at n = 16,512). Default:
    /// the memory available when sgpw starts.
    #[arg(long, value_parser = crate::exec::parse_memory_size, allow_hyphen_values = true)]
    pub max_memory: Option<crate::exec::MemorySize>,
}

impl LimitArgs {
    /// The limit in bytes.
    pub fn bytes(&self) -> usize {
        self.max_memory
            .map_or_else(crate::exec::memory_available, |s| s.0)
    }
}

/// Before a fit on n points of d inputs: a note with the estimate when it is costly,
/// and a refusal naming --max-memory when its memory is over the limit.
pub fn foresee(
    valid: &crate::methods::ValidRunSpec,
    n: usize,
    d: usize,
    threads: usize,
    limit: &LimitArgs,
) -> Result<()> {
    let e = valid.estimate(n, d, threads);
    let name = valid.method().name();
    if !e.fits(limit.bytes()) {
        return Err(Error::input(e.refusal(
            name,
            n,
            limit.bytes(),
            "--max-memory",
        )));
    }
    if e.is_costly() {
        crate::noteln!("note: {name} on {n} training points: {}", e.describe());
    }
    Ok(())
}

/// The methods, one per line, for `--help`.
pub fn method_list() -> String {
    crate::methods::registry()
        .iter()
        .map(|m| {
            format!(
                "  {:<8} {} [m = {}]\n           seed: {}",
                m.name(),
                m.summary(),
                m.m_meaning(),
                m.seed_help()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Exit codes a script can use (docs/faults.md lists them).
pub mod exit {
    /// The command did what was asked.
    pub const OK: u8 = 0;
    /// An error stopped the command (message on standard error).
    pub const ERROR: u8 = 1;
    /// A bad command line (clap's own code).
    pub const USAGE: u8 = 2;
    /// The command ran but the results are incomplete: `sgpw run` had failed or
    /// cancelled runs, `sgpw report` found no results.
    pub const INCOMPLETE: u8 = 3;
    /// The app or `sgpw run` was stopped by a signal: 128 + its number (SIGHUP 129,
    /// SIGINT 130, SIGTERM 143), after saving what had finished.
    pub fn signal(sig: i32) -> u8 {
        u8::try_from(128 + sig).unwrap_or(ERROR)
    }
}

/// The whole command line as clap parses it: negative numbers are values of their
/// flags (see [`crate::arg_values`]), and `fit --help` and `bench --help` list the
/// methods.
pub fn command() -> clap::Command {
    let methods = format!("Methods:\n{}", method_list());
    crate::arg_values::numbers_as_values(Cli::command())
        .mut_subcommand("fit", |c| c.after_help(methods.clone()))
        .mut_subcommand("bench", |c| c.after_help(methods.clone()))
}

/// The program: parse the arguments, run, and turn an error into a message and exit
/// code 1; a closed standard output ends the command quietly with 0. `distributed`: how
/// `--distributed` reaches MPI, given by the binary built with it (sgpw-mpi), None in
/// sgpw.
pub fn main(distributed: Option<&dyn Distributed>) -> ExitCode {
    keep_freed_memory();
    // A panic inside a data reader on a damaged file is caught and reported as an
    // error naming the file; its default message would only confuse.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !crate::data::guard::in_guarded_reader() {
            default(info);
        }
    }));
    // Usage lines name the program as it was called (sgpw, or sgpw-mpi: one command line)
    let called = std::env::args_os().next().and_then(|a| {
        Some(
            std::path::Path::new(&a)
                .file_name()?
                .to_string_lossy()
                .into_owned(),
        )
    });
    let command = match called {
        Some(name) => command().bin_name(name),
        None => command(),
    };
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match execute(cli, distributed) {
        Ok(code) => ExitCode::from(code),
        Err(Error::ClosedPipe) => ExitCode::from(exit::OK),
        Err(e) => {
            crate::noteln!("error: {e}");
            ExitCode::from(exit::ERROR)
        }
    }
}

/// Every evaluation allocates and frees a few n×m matrices (16 MB each at n = 10000,
/// m = 200). By default glibc returns blocks that large to the kernel on free and
/// maps fresh pages for the next one; those page faults were a third of a FITC
/// evaluation. Blocks under 32 MB now stay in the heap for reuse.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes two malloc tuning parameters, before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

/// Run a parsed command; its exit code (see [`exit`]). `distributed` as for [`main`].
pub fn execute(cli: Cli, distributed: Option<&dyn Distributed>) -> Result<u8> {
    let done = |r: Result<()>| r.map(|()| exit::OK);
    match cli
        .command
        .unwrap_or_else(|| Command::Open(open::OpenArgs::demo()))
    {
        Command::Fit(a) => fit::run(a, distributed),
        Command::Predict(a) => done(predict::run(a)),
        Command::Nlml(a) => done(nlml::run(a, distributed)),
        Command::Bench(a) => done(bench::run(a)),
        Command::Gen(a) => done(gen_data::run(a)),
        Command::Stream(a) => done(stream::run(a)),
        Command::Run(a) => run_session::run(a),
        Command::Merge(a) => done(run_session::merge(a)),
        Command::Migrate(a) => done(run_session::migrate(a)),
        Command::Report(a) => run_session::report(a),
        Command::Plot(a) => done(plot::run(a)),
        Command::Open(a) => open::run(a),
    }
}

/// A number about to be printed as a result: an infinity or NaN is an error saying
/// which number it is, never printed as if it were a result.
pub fn finite(what: &str, v: f64) -> Result<f64> {
    if v.is_finite() {
        return Ok(v);
    }
    Err(Error::numerical(format!(
        "the {what} is {v}: the data may be too extreme for double precision for this \
         model (rescale the target or the inputs)"
    )))
}

/// Print JSON to stdout.
pub fn print_json(v: &serde_json::Value) -> Result<()> {
    let s = serde_json::to_string_pretty(v).map_err(|e| Error::File(format!("JSON: {e}")))?;
    crate::outln!("{s}")?;
    Ok(())
}
