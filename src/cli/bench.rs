//! `sgpw bench`: the time of one NLML + gradient evaluation on synthetic data
//! (median of R after a warm-up).

use super::{MemoryArgs, RunArgs, print_json};
use crate::data::TrainData;
use crate::error::{Error, Result};
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
    #[command(flatten)]
    pub memory: MemoryArgs,
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
    /// Also time this method (same n, d, m, seed; its default options), alternating
    /// evaluation by evaluation with --method, and report the ratio of the medians.
    #[arg(long)]
    pub against: Option<String>,
    /// Also measure this machine's rates for the core's kernels (matrix product,
    /// triangular solve, symmetric update: faer on blocks of columns, with --threads)
    /// and set the evaluation's time against its arithmetic at those rates.
    #[arg(long, conflicts_with = "against")]
    pub roofline: bool,
    /// With --kernel A + B + …: also time each term of the sum alone (same data, m and
    /// seed), all evaluation by evaluation in turn, and report the sum's time against
    /// its terms' together (wall and CPU time).
    #[arg(long, conflicts_with_all = ["against", "roofline"])]
    pub parts: bool,
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
    TrainData {
        x,
        y,
        log_exposure: None,
    }
}

/// One method's model, ready to evaluate.
pub struct Timed {
    method: &'static dyn crate::methods::Method,
    pub model: crate::model_file::ModelFile,
    times: Vec<f64>,
    cpu: Vec<f64>,
}

/// One spec's evaluations: the median and minimum wall seconds, and the median CPU
/// seconds of the process (every thread's), which a loaded machine disturbs less.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub median: f64,
    pub min: f64,
    pub cpu: f64,
}

/// The CPU seconds this process has used, all its threads together.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } == 0;
    if ok {
        t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}

/// A spec's starting model on the data (as a fit would start), evaluated once.
pub fn prepare(spec: &RunSpec, data: &TrainData, ctx: &RunContext) -> Result<Timed> {
    let valid = spec.check(data.y.len())?;
    let method = valid.method();
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let hyper = crate::methods::start::initial_hyper(data, &valid, None, ctx, &mut rng)?;
    let mut model = method.init(data, &valid, hyper, ctx, &mut rng)?;
    if let Some(expression) = spec.options.kernel_expression() {
        // the kernel the expression builds, on the data as given (no standardization)
        let columns: Vec<String> = (0..data.x.ncols()).map(|i| format!("x{i}")).collect();
        let fixes = spec.options.fix.as_deref().unwrap_or_default();
        crate::train::set_composed_kernel(&mut model, expression, data, &columns, None, fixes)?;
        method.init_for_kernel(&mut model, &valid, &mut rng)?;
    }
    method.objective(&model, data, &ctx.exec)?; // warm-up
    Ok(Timed {
        method,
        model,
        times: Vec::new(),
        cpu: Vec::new(),
    })
}

/// The time of one objective evaluation of each spec, timed alternately (A, B, A, B,
/// …) so that a change in the machine's load hits all alike.
pub fn time_alternating(
    specs: &[RunSpec],
    data: &TrainData,
    reps: usize,
    exec: Exec,
) -> Result<Vec<Timing>> {
    let ctx = RunContext::quiet(exec);
    let mut timed = specs
        .iter()
        .map(|s| prepare(s, data, &ctx))
        .collect::<Result<Vec<_>>>()?;
    time(&mut timed, data, reps, &ctx.exec)
}

/// Each model's evaluation timed, alternating.
fn time(timed: &mut [Timed], data: &TrainData, reps: usize, exec: &Exec) -> Result<Vec<Timing>> {
    for _ in 0..reps.max(1) {
        for t in timed.iter_mut() {
            let (start, cpu) = (Instant::now(), cpu_seconds());
            std::hint::black_box(t.method.objective(&t.model, data, exec)?);
            t.times.push(start.elapsed().as_secs_f64());
            t.cpu.push(cpu_seconds() - cpu);
        }
    }
    Ok(timed
        .iter_mut()
        .map(|t| {
            t.times.sort_by(f64::total_cmp);
            t.cpu.sort_by(f64::total_cmp);
            Timing {
                median: t.times[t.times.len() / 2],
                min: t.times[0],
                cpu: t.cpu[t.cpu.len() / 2],
            }
        })
        .collect())
}

/// `--roofline`: the evaluation's median time against its arithmetic at this
/// machine's measured rates.
fn roofline(spec: &RunSpec, data: &TrainData, reps: usize, exec: Exec, json: bool) -> Result<()> {
    let par = exec.par;
    let ctx = RunContext::quiet(exec);
    let mut timed = [prepare(spec, data, &ctx)?];
    let (n, d) = (data.y.len(), data.x.ncols());
    let (method, m) = (timed[0].method, spec.m);
    let work = method.work(&timed[0].model, n, &ctx.exec)?.ok_or_else(|| {
        Error::input(format!(
            "--roofline: the arithmetic of method '{}' has not been counted (the low-rank \
             methods whose family counts its kernel have: fitc, vfe, dtc, pep, spgp-hs)",
            method.name()
        ))
    })?;
    let seconds = time(&mut timed, data, reps, &ctx.exec)?[0].median;
    let r = super::roofline::report(seconds, work, n, m, par);
    let (w, rates) = (&r.work, &r.rates);
    let unit = n as f64 * (m * m) as f64;
    let share = |x: f64| x / w.total();
    if json {
        return print_json(&serde_json::json!({
            "method": method.name(), "n": n, "d": d, "m": m, "reps": reps,
            "threads": par.threads(),
            "median_eval_seconds": seconds,
            "arithmetic_seconds": r.arithmetic,
            "ratio": r.ratio(),
            "units": w.units(n, m),
            "multiply_adds": {
                "gemm": w.gemm, "trsm": w.trsm, "syrk": w.syrk, "small": w.small,
                "vector": w.vector, "features": w.features, "total": w.total(),
            },
            "rates_gflops": {
                "gemm": 2e-9 * rates.gemm, "trsm": 2e-9 * rates.trsm, "syrk": 2e-9 * rates.syrk,
            },
        }));
    }
    crate::outln!(
        "{} n={n} d={d} m={m}, {} threads: median {:.2} ms per NLML+gradient ({reps} reps)",
        method.name(),
        par.threads(),
        seconds * 1e3
    )?;
    crate::outln!(
        "  rates (faer, blocks of {} columns, {} threads): product {:.1}, triangular solve {:.1}, \
         symmetric update {:.1} GFLOP/s",
        crate::collapsed::BLOCK,
        par.threads(),
        2e-9 * rates.gemm,
        2e-9 * rates.trsm,
        2e-9 * rates.syrk
    )?;
    crate::outln!(
        "  arithmetic: {:.2} units of n·m² (product {:.2}, solve {:.2}, update {:.2}); \
         besides them m³ {:.1}%, per-point vectors {:.1}%, kernel {:.1}% of {:.3e} multiply-adds",
        w.units(n, m),
        w.gemm / unit,
        w.trsm / unit,
        w.syrk / unit,
        100.0 * share(w.small),
        100.0 * share(w.vector),
        100.0 * share(w.features),
        w.total()
    )?;
    crate::outln!(
        "  arithmetic at these rates {:.2} ms; time / arithmetic = {:.2}",
        r.arithmetic * 1e3,
        r.ratio()
    )?;
    Ok(())
}

/// The memory a benchmark needs, roughly: the inputs and a few n×m (n×n for the
/// exact GP) matrices. A mistyped --n must be an error, not an abort when the
/// allocation fails.
fn check_size(spec: &RunSpec, n: usize, d: usize) -> Result<()> {
    if n == 0 || d == 0 {
        return Err(Error::input("--n and --d must be at least 1"));
    }
    let cols = if crate::methods::get(&spec.method).is_ok_and(|m| !m.uses_m()) {
        n
    } else {
        spec.m
    };
    let bytes = n
        .checked_mul(d.saturating_add(cols.saturating_mul(4)))
        .and_then(|v| v.checked_mul(8));
    const LIMIT: usize = 16 << 30;
    match bytes {
        Some(b) if b <= LIMIT => Ok(()),
        _ => Err(Error::input(format!(
            "--n {n} --d {d} --m {}: the benchmark would need more than 16 GB of memory",
            spec.m
        ))),
    }
}

pub fn run(args: BenchArgs) -> Result<()> {
    let spec = args.run.spec()?;
    spec.check(usize::MAX)?;
    check_size(&spec, args.n, args.d)?;
    if args.reps == 0 {
        return Err(Error::input(
            "--reps 0: a timing needs at least 1 repetition (the default is 7)",
        ));
    }
    let par = Par::from_threads(args.threads);
    let exec = Exec::new(par, Default::default()).with_memory_budget(args.memory.bytes());
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
    let name = spec.check(n)?.method().name();
    if args.roofline {
        return roofline(&spec, &data, args.reps, exec, args.json);
    }
    if let Some(other) = &args.against {
        let against = RunSpec {
            method: other.clone(),
            options: Default::default(),
            ..spec.clone()
        };
        let nb = against.check(n)?.method().name();
        let t = time_alternating(&[spec.clone(), against], &data, args.reps, exec)?;
        let (ta, tb) = (t[0].median, t[1].median);
        return if args.json {
            print_json(&serde_json::json!({
                "method": name, "against": nb, "n": n, "d": d, "m": spec.m,
                "reps": args.reps, "threads": par.threads(),
                "median_eval_seconds": ta, "against_median_eval_seconds": tb, "ratio": ta / tb,
            }))
        } else {
            crate::outln!(
                "n={n} d={d} m={}, alternating, {} reps, {} threads: {name} median {:.2} ms, \
                 {nb} median {:.2} ms, ratio {name}/{nb} = {:.2}",
                spec.m,
                args.reps,
                par.threads(),
                ta * 1e3,
                tb * 1e3,
                ta / tb
            )?;
            Ok(())
        };
    }
    if args.parts {
        return parts(&spec, &data, args.reps, exec, args.json);
    }
    let t = time_alternating(std::slice::from_ref(&spec), &data, args.reps, exec)?[0];
    let threads = par.threads();
    if args.json {
        print_json(&serde_json::json!({
            "method": name, "n": n, "d": d, "m": spec.m, "reps": args.reps,
            "threads": threads,
            "median_eval_seconds": t.median, "min_eval_seconds": t.min,
            "median_eval_cpu_seconds": t.cpu,
        }))
    } else {
        crate::outln!(
            "{name} n={n} d={d} m={}: median {:.2} ms, min {:.2} ms, CPU median {:.2} ms per NLML+gradient ({} reps, {} threads)",
            spec.m,
            t.median * 1e3,
            t.min * 1e3,
            t.cpu * 1e3,
            args.reps,
            threads
        )?;
        Ok(())
    }
}

/// `--parts`: a sum kernel and each of its terms alone, in turn, and the sum's time
/// against its terms' together (issue 42: at most 1.15 times).
fn parts(spec: &RunSpec, data: &TrainData, reps: usize, exec: Exec, json: bool) -> Result<()> {
    use crate::kernel::KernelChoice;
    use crate::kernel::expression::KernelExpr;
    let refuse = |why: &str| Error::input(format!("--parts: {why}"));
    let text = spec.options.kernel_expression().ok_or_else(|| {
        refuse("give --kernel a sum of parts, e.g. --kernel \"se() + periodic()\"")
    })?;
    let expr = KernelExpr::parse(text).map_err(|e| refuse(&e.render(text)))?;
    let KernelExpr::Sum(terms) = expr else {
        return Err(refuse(&format!("--kernel {text} is not a sum of terms")));
    };
    let terms: Vec<String> = terms.iter().map(|t| t.to_string()).collect();
    let mut specs = vec![spec.clone()];
    for term in &terms {
        let mut s = spec.clone();
        s.options.kernel = Some(KernelChoice::Expr(term.clone()));
        // a path the sum's --fix names need not be the term's
        s.options.fix = None;
        specs.push(s);
    }
    let threads = exec.par.threads();
    let t = time_alternating(&specs, data, reps, exec)?;
    let (sum, each) = (t[0], &t[1..]);
    let wall: f64 = each.iter().map(|t| t.median).sum();
    let cpu: f64 = each.iter().map(|t| t.cpu).sum();
    let (n, d) = (data.y.len(), data.x.ncols());
    if json {
        let rows: Vec<_> = terms
            .iter()
            .zip(each)
            .map(|(k, t)| {
                serde_json::json!({
                    "kernel": k, "median_eval_seconds": t.median, "median_eval_cpu_seconds": t.cpu,
                })
            })
            .collect();
        return print_json(&serde_json::json!({
            "method": spec.method, "kernel": text, "n": n, "d": d, "m": spec.m, "reps": reps,
            "threads": threads,
            "median_eval_seconds": sum.median, "median_eval_cpu_seconds": sum.cpu,
            "parts": rows, "ratio": sum.median / wall, "cpu_ratio": sum.cpu / cpu,
        }));
    }
    crate::outln!(
        "{} n={n} d={d} m={}, in turn, {reps} reps, {} threads (medians per NLML+gradient, wall / CPU):",
        spec.method,
        spec.m,
        threads
    )?;
    crate::outln!(
        "  {:.2} / {:.2} ms  {text}",
        sum.median * 1e3,
        sum.cpu * 1e3
    )?;
    for (k, t) in terms.iter().zip(each) {
        crate::outln!("  {:.2} / {:.2} ms  {k}", t.median * 1e3, t.cpu * 1e3)?;
    }
    crate::outln!(
        "  the sum against its terms together ({:.2} / {:.2} ms): {:.3} wall, {:.3} CPU",
        wall * 1e3,
        cpu * 1e3,
        sum.median / wall,
        sum.cpu / cpu
    )?;
    Ok(())
}
