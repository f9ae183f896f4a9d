//! `sgpw fit`: train one model, report its metrics, optionally save it.

use super::{DataArgs, LimitArgs, MemoryArgs, RunArgs, exit, print_json};
use crate::distributed::Distributed;
use crate::error::{Error, Result};
use crate::exec::{CancelToken, Exec};
use crate::run_context::{Phase, Progress, RunContext};
use crate::train;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Args)]
pub struct FitArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub memory: MemoryArgs,
    #[command(flatten)]
    pub limit: LimitArgs,
    /// Print one JSON object instead of a readable summary.
    #[arg(long)]
    pub json: bool,
    /// Write the fitted model (TOML) here.
    #[arg(long)]
    pub save_model: Option<PathBuf>,
    /// One fit over the processes of an MPI job (`mpirun -np K sgpw-mpi fit --distributed
    /// …`): each reads its own share of the training rows; low-rank methods only
    /// (docs/distributed.md). Needs sgpw-mpi, the build of sgpw with MPI.
    #[arg(long)]
    pub distributed: bool,
    /// svgp: read the training file a block at a time instead of loading it, so that a
    /// file larger than memory trains in bounded memory (Parquet or plain CSV; the
    /// default for svgp on a training file of 256 MiB or more). Minibatches are shuffled
    /// by blocks; standardisation and the start come from a seeded sample of 50000 rows
    /// (docs/methods.md §8.4).
    #[arg(long, conflicts_with = "distributed")]
    pub stream: bool,
}

/// The shape of the data a fit trained on, as the report prints it.
struct Shape {
    n_train: usize,
    n_test: usize,
    dim: usize,
    notes: Vec<String>,
}

/// `sgpw fit`; its exit code: 0, or 128 + the signal that cancelled the fit.
/// `distributed`: how `--distributed` reaches MPI (None: sgpw was built without it).
pub fn run(args: FitArgs, distributed: Option<&dyn Distributed>) -> Result<u8> {
    let spec = args.run.spec()?;
    // method, m's upper bound and options before reading any data; m ≤ n after
    spec.check(usize::MAX)?;
    let exposure = spec.options.exposure.as_deref();
    if args.distributed {
        crate::data::exposure::refuse_rows_by_parts(exposure, "--distributed")?;
        return fit_distributed(&args, &spec, distributed);
    }
    let mut load = args.data.spec(spec.seed);
    if crate::stream_fit::streams(&spec.check(usize::MAX)?, &load.train, args.stream)? {
        crate::data::exposure::refuse_rows_by_parts(exposure, "a streamed fit (--stream)")?;
        return streamed(&args, &spec, &load);
    }
    if let Some(column) = exposure {
        crate::data::exposure::read_with_inputs(&mut load, column)?;
    }
    let data = crate::data::load_for_fit(&load, spec.options.likelihood(), &mut |_| {})?;
    // poisson's exposure column leaves the inputs, its values checked, rows named
    let (data, exposure) = match exposure {
        Some(column) => {
            let (rest, e) = crate::data::exposure::split_off(&data, column, Some(&load))?;
            (std::borrow::Cow::Owned(rest), Some(e))
        }
        None => (std::borrow::Cow::Borrowed(&data), None),
    };
    let valid = spec.check(data.n_train())?;
    let (exec, signal) =
        cancelled_by_signals(Exec::default().with_memory_budget(args.memory.bytes()))?;
    for note in &data.notes {
        crate::noteln!("note: {note}");
    }
    let threads = crate::exec::Par::Threads(0).threads();
    super::foresee(&valid, data.n_train(), data.dim(), threads, &args.limit)?;
    let bar = progress_bar(&spec);
    let shown = Default::default();
    let sink = |p: &Progress| show(&bar, &shown, p);
    let ctx = RunContext::new(exec, &sink);
    let result = train::fit_exposed(&data, exposure.as_ref(), &valid, &ctx);
    bar.finish_and_clear();
    let r = match ended(
        result,
        &signal,
        objective_scale(spec.options.likelihood(), spec.standardize),
    )? {
        Ended::Fitted(r) => r,
        Ended::Cancelled(code) => return Ok(code),
    };
    let shape = Shape {
        n_train: data.n_train(),
        n_test: data.n_test(),
        dim: data.dim(),
        notes: data.notes.clone(),
    };
    report(&args, &spec, &r, &shape)?;
    Ok(exit::OK)
}

/// What the objective line's number is on: a Gaussian or Student-t target is centred
/// and scaled by `--standardize` and the objective put back on its raw scale; labels and
/// counts are never centred or scaled (`likelihoods::keeps_targets`), only the inputs.
fn objective_scale(kind: crate::likelihoods::LikelihoodKind, standardize: bool) -> &'static str {
    use crate::likelihoods::LikelihoodKind as K;
    match (kind, standardize) {
        (K::Gaussian | K::StudentT, true) => "raw target scale; fitted standardized",
        (K::Gaussian | K::StudentT, false) => "raw target scale; fitted raw",
        (K::Bernoulli, true) => "labels as classes 0 and 1; inputs standardized",
        (K::Bernoulli, false) => "labels as classes 0 and 1; inputs raw",
        (K::Poisson, true) => "counts as given; inputs standardized",
        (K::Poisson, false) => "counts as given; inputs raw",
    }
}

/// How a fit ended: fitted, or cancelled by a signal (the exit code to return).
enum Ended<T> {
    Fitted(T),
    Cancelled(u8),
}

/// A fit's result, or, when a signal cancelled it, a note of how far it got (nothing
/// is saved) and the signal's exit code.
/// `scale` is what the objective is on ([`objective_scale`]).
fn ended<T>(result: Result<T>, signal: &AtomicUsize, scale: &str) -> Result<Ended<T>> {
    let sig = signal.load(Ordering::SeqCst) as i32;
    match result {
        Err(Error::CancelledAfter(p)) if sig != 0 => {
            let last = p.trace.last().map_or(String::new(), |v| {
                format!("; objective {v:.6} there ({scale})")
            });
            crate::noteln!(
                "cancelled by signal {sig} at iteration {} after {:.2} s{last}; no model was \
                 saved",
                p.iterations,
                p.seconds
            );
            Ok(Ended::Cancelled(exit::signal(sig)))
        }
        Err(Error::Cancelled) if sig != 0 => {
            crate::noteln!("cancelled by signal {sig}; no model was saved");
            Ok(Ended::Cancelled(exit::signal(sig)))
        }
        Err(e) => Err(e),
        Ok(r) => Ok(Ended::Fitted(r)),
    }
}

/// `exec` with a cancel token that SIGINT or SIGTERM sets, and the signal that set it
/// (0: none): the fit then ends with how far it got ([`ended`]). A second signal ends
/// the process at once.
fn cancelled_by_signals(exec: Exec) -> Result<(Exec, Arc<AtomicUsize>)> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let caught = Arc::new(AtomicUsize::new(0));
    let err = |e: std::io::Error| Error::input(format!("cannot watch for signals: {e}"));
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).map_err(err)?;
    let token = CancelToken::new();
    let (seen, cancel) = (caught.clone(), token.clone());
    std::thread::Builder::new()
        .name("sgpw-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if seen.swap(sig as usize, Ordering::SeqCst) != 0 {
                    std::process::exit(i32::from(exit::signal(sig)));
                }
                cancel.cancel();
            }
        })
        .map_err(err)?;
    Ok((
        Exec {
            cancel: token,
            ..exec
        },
        caught,
    ))
}

/// `fit` with the training file streamed ([`crate::stream_fit`]).
fn streamed(
    args: &FitArgs,
    spec: &crate::run_spec::RunSpec,
    load: &crate::data::LoadSpec,
) -> Result<u8> {
    let valid = spec.check(usize::MAX)?;
    crate::noteln!(
        "note: streaming {} a block at a time (svgp; docs/methods.md §8.4)",
        load.train.display()
    );
    let bar = progress_bar(spec);
    let (exec, signal) =
        cancelled_by_signals(Exec::default().with_memory_budget(args.memory.bytes()))?;
    let shown = Default::default();
    let sink = |p: &Progress| show(&bar, &shown, p);
    let ctx = RunContext::new(exec, &sink);
    let result = crate::stream_fit::fit(load, &valid, &ctx);
    bar.finish_and_clear();
    let r = match ended(
        result,
        &signal,
        objective_scale(spec.options.likelihood(), spec.standardize),
    )? {
        Ended::Fitted(r) => r,
        Ended::Cancelled(code) => return Ok(code),
    };
    for note in &r.notes {
        crate::noteln!("note: {note}");
    }
    let shape = Shape {
        n_train: r.n_train,
        n_test: r.n_test,
        dim: r.dim,
        notes: r.notes.clone(),
    };
    report(args, spec, &r.result, &shape)?;
    Ok(exit::OK)
}

/// The progress bar of a fit.
fn progress_bar(spec: &crate::run_spec::RunSpec) -> ProgressBar {
    let bar = ProgressBar::new(spec.iters as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(format!("{} m={}", spec.method, spec.m));
    bar
}

fn show(bar: &ProgressBar, shown: &std::cell::RefCell<Shown>, p: &Progress) {
    let (position, message) = shown.borrow_mut().take(p);
    if let Some(i) = position {
        bar.set_position(i as u64);
    }
    bar.set_message(message);
}

/// What the progress line has heard: the last iteration and objective of each start's
/// fit, which the default run races (docs/methods.md §0.4), and which was dropped.
#[derive(Default)]
pub struct Shown {
    first: Option<(usize, f64)>,
    second: Option<(usize, f64)>,
    dropped: Option<bool>,
}

impl Shown {
    /// Take a report: the bar's new position (None: unchanged) and its message — the
    /// phase, and once the second start's fit has reported, both fits side by side
    /// ("start 1 it 40: 7712.1 · start 2 it 25: 7750.3", "dropped" for the one behind).
    pub fn take(&mut self, p: &Progress) -> (Option<usize>, String) {
        let at = Some((p.iteration, p.nlml.unwrap_or(f64::NAN)));
        match (p.phase, p.nlml) {
            (Phase::Fit { .. }, Some(_)) => self.first = at,
            (Phase::SecondStart, Some(_)) => self.second = at,
            (Phase::Dropped { second }, _) => self.dropped = Some(second),
            (phase, Some(v)) => {
                return (
                    Some(p.iteration),
                    format!("{}: objective {v:.4}", phase.word()),
                );
            }
            (phase, None) => return (None, phase.word().to_string()),
        }
        if self.second.is_none() && self.dropped.is_none() {
            let v = p.nlml.unwrap_or(f64::NAN);
            return (
                Some(p.iteration),
                format!("{}: objective {v:.4}", p.phase.word()),
            );
        }
        let one = |k: usize, fit: Option<(usize, f64)>, dropped: bool| match (fit, dropped) {
            (Some((i, _)), true) => format!("start {k} dropped at it {i}"),
            (Some((i, v)), false) => format!("start {k} it {i}: {v:.4}"),
            (None, _) => format!("start {k} waits"),
        };
        let position = [self.first, self.second]
            .iter()
            .flatten()
            .map(|(i, _)| *i)
            .max();
        let message = format!(
            "{} · {}",
            one(1, self.first, self.dropped == Some(false)),
            one(2, self.second, self.dropped == Some(true))
        );
        (position, message)
    }
}

/// `fit --distributed`: every process fits; the root (rank 0) reports and saves. A
/// signal to the root cancels the fit (the others follow it); the others ignore one.
/// Without MPI: how to get it.
fn fit_distributed(
    args: &FitArgs,
    spec: &crate::run_spec::RunSpec,
    distributed: Option<&dyn Distributed>,
) -> Result<u8> {
    let Some(distributed) = distributed else {
        return Err(Error::input(super::NO_MPI));
    };
    let procs = distributed.start()?;
    let root = procs.rank() == 0;
    let valid = spec.check(usize::MAX)?;
    let bar = if root {
        progress_bar(spec)
    } else {
        ProgressBar::hidden()
    };
    let shown = Default::default();
    let sink = |p: &Progress| show(&bar, &shown, p);
    let exec = Exec::default().with_memory_budget(args.memory.bytes());
    // the others' tokens are never read: a signal forwarded to them is swallowed
    let (exec, signal) = match root {
        true => cancelled_by_signals(exec)?,
        false => (exec.clone(), cancelled_by_signals(exec)?.1),
    };
    let fitted = procs.fit(&args.data.spec(spec.seed), &valid, exec, &sink);
    bar.finish_and_clear();
    let f = match ended(
        fitted,
        &signal,
        objective_scale(spec.options.likelihood(), spec.standardize),
    )? {
        Ended::Fitted(Some(f)) => f,
        Ended::Fitted(None) => return Ok(exit::OK),
        Ended::Cancelled(code) => return Ok(code),
    };
    for note in &f.notes {
        crate::noteln!("note: {note}");
    }
    let t = f.traffic;
    match f.bytes_per_step {
        Some(bytes) => crate::noteln!(
            "note: {} processes; per minibatch step and process: {bytes} bytes summed",
            f.processes
        ),
        None => crate::noteln!(
            "note: {} processes; {} evaluations; per evaluation and process: {} bytes summed \
             after the first pass, {} after the second (gradient), {} bytes of parameters \
             broadcast on average",
            f.processes,
            t.evaluations,
            t.first_pass,
            t.second_pass,
            t.announced / t.evaluations.max(1)
        ),
    }
    let shape = Shape {
        n_train: f.n_train,
        n_test: f.n_test,
        dim: f.dim,
        notes: f.notes,
    };
    report(args, spec, &f.result, &shape)?;
    Ok(exit::OK)
}

/// Print what a fit produced (and save the model).
fn report(
    args: &FitArgs,
    spec: &crate::run_spec::RunSpec,
    r: &train::FitResult,
    data: &Shape,
) -> Result<()> {
    if let Some(path) = &args.save_model {
        r.model.write(path)?;
    }
    let (nmse, mnlp, mse) = r
        .test
        .map_or((None, None, None), |t| (t.nmse, Some(t.mnlp), Some(t.mse)));
    let negative = r.test.and_then(|t| t.negative_note(data.n_test));
    let method = crate::methods::get(&r.model.method)?;
    let objective = method.objective_name(&r.model);
    if let Some(note) = r.noise_note() {
        crate::noteln!("note: {note}");
    }
    if let Some(note) = centring_note(&r.model) {
        crate::noteln!("note: {note}");
    }
    if args.json {
        print_json(&serde_json::json!({
            "method": r.model.method,
            "label": args.run.run.label(),
            "m": spec.m,
            "seed": spec.seed,
            "n_train": data.n_train,
            "n_test": data.n_test,
            "dim": data.dim,
            "target": r.model.target,
            "kernel": data_kernel(&r.model, 12),
            "kernel_units": r.model.composed.as_ref().map(|_| "data"),
            "nlml": r.nlml,
            "nlml_scale": "raw",
            "objective": objective,
            "standardize": spec.standardize,
            "nmse": nmse,
            "mnlp": mnlp,
            "mse": mse,
            "likelihood": r.model.likelihood_kind(),
            "error_rate": r.test.and_then(|t| t.error_rate),
            "auc": r.test.and_then(|t| t.auc),
            "rmse": r.test.and_then(|t| t.rmse),
            "negative_var_latent": r.test.map(|t| t.negative_var_latent),
            "negative_var_noisy": r.test.map(|t| t.negative_var_noisy),
            "iterations": r.iterations,
            "evaluations": r.evaluations,
            "stop": r.stop.word(),
            "train_seconds": r.train_seconds,
            "jitter": r.jitter,
            "collapsed": r.model.collapsed().is_some(),
            "latent_scale_unbounded": r.model.latent_scale_note().is_some(),
            "collapse_restart": r.model.fit.as_ref().and_then(|f| f.collapse_restart.as_ref()),
            "second_start": r.model.fit.as_ref().and_then(|f| f.second_start.as_ref()),
            "fixed": r.model.fixed,
            "notes": data.notes,
        }))?;
    } else {
        let counts = crate::methods::get(&r.model.method).map_or("", |m| m.m_meaning());
        crate::outln!("method      {} (m = {} {counts})", r.model.method, spec.m)?;
        crate::outln!(
            "data        {} train / {} test points, {} inputs",
            data.n_train,
            data.n_test,
            data.dim
        )?;
        if let Some(target) = &r.model.target {
            crate::outln!("target      {target}")?;
        }
        if let Some(k) = data_kernel(&r.model, 6) {
            match crate::methods::get(&r.model.method).map(|m| m.kernel_input_name()) {
                Ok(Some(on)) => {
                    crate::outln!("kernel      {k} (on {on}; variances in the target's units)")?
                }
                _ => crate::outln!("kernel      {k} (data units)")?,
            }
        }
        // on the raw target scale whether or not the fit was standardized, so the
        // NLMLs of two setups on one data set compare
        crate::outln!(
            "{:<11} {:.6} ({})",
            objective,
            r.nlml,
            objective_scale(r.model.likelihood_kind(), spec.standardize)
        )?;
        let by_likelihood = r.test.filter(|_| r.model.likelihood.is_some());
        match (nmse, mnlp) {
            _ if by_likelihood.is_some() => {}
            (Some(a), Some(b)) => crate::outln!("test        NMSE {a:.6}   MNLP {b:.6}")?,
            (None, Some(b)) => {
                crate::outln!("test        NMSE n/a   MNLP {b:.6}")?;
                crate::noteln!("note: NMSE {}", crate::metrics::NMSE_UNDEFINED);
            }
            _ => crate::outln!("test        (no test set: use --test or --split)")?,
        }
        if let Some(t) = by_likelihood {
            crate::outln!(
                "test        {}",
                likelihood_scores(r.model.likelihood_kind(), &t)
            )?;
        }
        if let Some(note) = &negative {
            crate::outln!("variances   {note}")?;
        }
        crate::outln!(
            "iterations  {} ({}; {} evaluations)",
            r.iterations,
            r.stop.word(),
            r.evaluations
        )?;
        crate::outln!("time        {:.3} s", r.train_seconds)?;
        crate::outln!("jitter      {:e}", r.jitter)?;
        if let Some(c) = r
            .model
            .fit
            .as_ref()
            .and_then(|f| f.collapse_restart.as_ref())
        {
            crate::outln!("restart     {}", c.note())?;
        }
        if let Some(c) = r.model.fit.as_ref().and_then(|f| f.second_start.as_ref()) {
            crate::outln!("starts      {}", c.note())?;
        }
        if !r.model.fixed.is_empty() {
            crate::outln!("fixed       {}", fixed_note(r))?;
        }
        for note in [r.model.collapse_note(), r.model.latent_scale_note()]
            .into_iter()
            .flatten()
        {
            crate::outln!("warning     {note}")?;
        }
        if let Some(p) = &args.save_model {
            crate::outln!("model       {}", p.display())?;
        }
    }
    Ok(())
}

/// The blocks the fit held fixed, the shared ones with their values in the data's units
/// ("noise_variance 0.01, inducing_inputs").
/// A composed kernel with its fitted values in the data's units (years, ppm: the units
/// `--kernel` is written in), to `digits` significant digits; the model file keeps
/// them in model units (docs/formats.md `[kernel]`).
/// A kernel on other inputs than the columns (spgp-dr's projections, pca-spgp's
/// principal components) has its inputs' values in the model's units, its variances in
/// the target's.
fn data_kernel(model: &crate::model_file::ModelFile, digits: usize) -> Option<String> {
    let c = model.composed.as_ref()?;
    let units = model
        .standardize
        .as_ref()
        .map(|s| match reads_columns(model) {
            true => s.clone(),
            false => s.target_only(c.kernel().dim()),
        });
    let scales = units.as_ref().map(crate::model_file::Standardize::scales);
    Some(crate::kernel::rounded(&c.data_expression(scales), digits).to_string())
}

/// Whether the model's kernel reads the data's columns (`Method::kernel_input_name`).
fn reads_columns(model: &crate::model_file::ModelFile) -> bool {
    crate::methods::get(&model.method).map_or(true, |m| m.kernel_input_name().is_none())
}

/// A note when a standardized fit's kernel expression has linear or polynomial parts on
/// centred inputs (`kernel::centring_note`).
fn centring_note(model: &crate::model_file::ModelFile) -> Option<String> {
    let (c, s) = (model.composed.as_ref()?, model.standardize.as_ref()?);
    if !reads_columns(model) {
        return None;
    }
    let expr = c.data_expression(None);
    let columns: Vec<String> = (0..s.input_center.len()).map(|i| i.to_string()).collect();
    crate::kernel::centring_note(&expr, &columns, &s.input_center)
}

/// The value of kernel path `path` (`periodic.period`) in the data's units.
fn path_value(model: &crate::model_file::ModelFile, path: &str) -> Option<String> {
    let (label, key) = path.split_once('.')?;
    let text = data_kernel(model, 6)?;
    let expr = crate::kernel::expression::KernelExpr::parse(&text).ok()?;
    let labels = crate::kernel::labels(&expr);
    let part = expr
        .parts()
        .into_iter()
        .zip(&labels)
        .find(|(_, l)| *l == label)?
        .0;
    part.args
        .iter()
        .find(|a| a.key == key)
        .map(|a| a.value.to_string())
}

fn fixed_note(r: &train::FitResult) -> String {
    let h = r.predictor.hyper_in_data_units();
    let value = |name: &str| match name {
        crate::params::SIGNAL_VARIANCE => Some(format!("{:.6}", h.signal_variance)),
        crate::params::NOISE_VARIANCE => h.noise_variance.map(|v| format!("{v:.6}")),
        crate::params::RQ_ALPHA => r.model.hyper.rq_alpha.map(|a| format!("{a:.6}")),
        crate::params::LENGTHSCALES => h.lengthscales.as_ref().map(|l| {
            let v: Vec<String> = l.iter().map(|x| format!("{x:.6}")).collect();
            v.join(",")
        }),
        path => path_value(&r.model, path),
    };
    let parts: Vec<String> = r
        .model
        .fixed
        .iter()
        .map(|n| match value(n) {
            Some(v) => format!("{n} {v}"),
            None => n.clone(),
        })
        .collect();
    format!("{} (held, not fitted)", parts.join(", "))
}

/// A non-Gaussian model's own test scores in words (`metrics::likelihood_scores`).
fn likelihood_scores(
    kind: crate::likelihoods::LikelihoodKind,
    t: &crate::metrics::TestMetrics,
) -> String {
    let mut parts = vec![format!("({kind})")];
    if let Some(n) = t.nmse {
        parts.push(format!("NMSE {n:.6}"));
    }
    if let Some(e) = t.error_rate {
        parts.push(format!("error rate {e:.6}"));
    }
    if let Some(a) = t.auc {
        parts.push(format!("AUC {a:.6}"));
    }
    if let Some(r) = t.rmse {
        parts.push(format!("RMSE {r:.6}"));
    }
    parts.push(format!("MNLP {:.6}", t.mnlp));
    parts.join("   ")
}
