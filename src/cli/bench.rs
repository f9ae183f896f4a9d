//! `sgpw bench`: the time of one NLML + gradient evaluation on synthetic data
//! (median of R after a warm-up).

use super::{RunArgs, print_json};
use crate::data::TrainData;
use crate::error::Result;
use crate::exec::{Exec, Par};
use crate::run_context::RunContext;
use crate::run_spec::RunSpec;
use clap::Args;
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Time on this data set (CSV or Parquet; target = the last column, inputs used
    /// as given, y centred) instead of synthetic data; --n and --d are then its own.
    #[arg(long)]
    pub train: Option<std::path::PathBuf>,
    /// Training points.
    #[arg(long, default_value_t = 10000)]
    pub n: usize,
    /// Input dimensions.
    #[arg(long, default_value_t = 8)]
    pub d: usize,
    /// Timed repetitions (after one warm-up).
    #[arg(long, default_value_t = 7)]
    pub reps: usize,
    /// Threads one evaluation may use (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Synthetic regression data with unit-variance inputs, like kin40k's.
pub fn synthetic(n: usize, d: usize, seed: u64) -> TrainData {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let half = 3f64.sqrt();
    let x = DMatrix::from_fn(n, d, |_, _| rng.random_range(-half..half));
    let y = (0..n)
        .map(|i| {
            (0..d)
                .map(|k| (x[(i, k)] * (k + 1) as f64 * 0.7).sin())
                .sum::<f64>()
                + 0.1 * rng.random_range(-1.0..1.0)
        })
        .collect();
    TrainData { x, y }
}

/// Median and minimum seconds of one objective evaluation on `par` threads.
pub fn time_objective(
    spec: &RunSpec,
    data: &TrainData,
    reps: usize,
    par: Par,
) -> Result<(f64, f64)> {
    let valid = spec.check(data.y.len())?;
    let method = valid.method();
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let ctx = RunContext::quiet(Exec::new(par, Default::default()));
    let hyper = crate::methods::start::initial_hyper(data, &valid, &ctx, &mut rng)?;
    let model = method.init(data, &valid, hyper, &ctx, &mut rng)?;
    let exec = &ctx.exec;
    method.objective(&model, data, exec)?; // warm-up
    let mut times = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        std::hint::black_box(method.objective(&model, data, exec)?);
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], times[0]))
}

pub fn run(args: BenchArgs) -> Result<()> {
    let spec = args.run.spec();
    let par = Par::from_threads(args.threads);
    let data = match &args.train {
        Some(path) => {
            let ds = crate::data::load(&crate::data::LoadSpec {
                train: path.clone(),
                ..Default::default()
            })?;
            crate::train::prepare(&ds, false).0
        }
        None => synthetic(args.n, args.d, spec.seed),
    };
    let (n, d) = (data.y.len(), data.x.ncols());
    let (median, min) = time_objective(&spec, &data, args.reps, par)?;
    let name = spec.check(n)?.method().name();
    let threads = par.threads();
    if args.json {
        print_json(&serde_json::json!({
            "method": name, "n": n, "d": d, "m": spec.m, "reps": args.reps,
            "threads": threads,
            "median_eval_seconds": median, "min_eval_seconds": min,
        }))
    } else {
        println!(
            "{name} n={} d={} m={}: median {:.2} ms, min {:.2} ms per NLML+gradient ({} reps, {} threads)",
            n,
            d,
            spec.m,
            median * 1e3,
            min * 1e3,
            args.reps,
            threads
        );
        Ok(())
    }
}
