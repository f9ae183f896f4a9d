//! `sgpw plot`: one of the app's charts of a session's results, as SVG or PNG. The
//! series are computed by [`crate::chart`] as the app computes them and drawn by
//! [`crate::plot`].

use crate::chart::{self, Metric};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::plot;
use crate::plot::prediction::PredictionFigure;
use crate::session::{RunResult, Session, Status, base_dir};
use clap::Args;
use std::path::PathBuf;

/// Rows of a large data set read for a prediction figure's scatter.
const SAMPLE_ROWS: usize = 4000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// The objective (NLML) against iteration, one curve per run.
    Evidence,
    /// Test NMSE or MNLP against m per label: mean over seeds, ±1 standard error, the
    /// constant predictor as a reference line.
    Comparison,
    /// One run's predictive mean and ±2σ bands along one input, with the data and its
    /// inducing inputs or feature centres.
    Prediction,
    /// Validation MNLP or NMSE against iteration, the early-stop point ringed.
    Validation,
}

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// Session file (TOML) with results.
    pub session: PathBuf,
    /// Which chart.
    #[arg(long, value_enum)]
    pub chart: Kind,
    /// The data set (default: the first of the session with results).
    #[arg(long, value_name = "NAME")]
    pub data: Option<String>,
    /// comparison and validation: the score drawn (default: NMSE for the comparison,
    /// MNLP for validation, as in the app).
    #[arg(long, value_enum)]
    pub metric: Option<Metric>,
    /// Only the runs with these labels (default: all).
    #[arg(long, value_name = "LABEL", num_args = 1..)]
    pub runs: Vec<String>,
    /// prediction: the run's m (default: the largest finished one of the first label).
    #[arg(long)]
    pub m: Option<usize>,
    /// prediction: the run's seed (default: the smallest).
    #[arg(long)]
    pub seed: Option<u64>,
    /// prediction: below the total, one panel per summand of a kernel whose top level is
    /// a sum (`se + se * periodic + rq`): its posterior mean and ±2σ latent band, in the
    /// target's units without the target's mean (see `sgpw predict --components`); each
    /// panel half as high as --size's. full, the inducing-point and inter-domain
    /// methods, greedy, psds and ssgp only.
    #[arg(long)]
    pub components: bool,
    /// prediction: the input varied, 1-based (the others are held at their medians).
    #[arg(long, default_value_t = 1)]
    pub input: usize,
    /// evidence and validation: the iteration axis on a log scale, where most of the
    /// change is in the first iterations (iteration 0, the start, is not drawn on it).
    #[arg(long)]
    pub log_x: bool,
    /// Figure size in pixels, WIDTHxHEIGHT.
    #[arg(long, value_parser = plot::parse_size, default_value = "800x500")]
    pub size: (u32, u32),
    /// Output file: .svg, or .png (rendered in-process with the bundled font).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: PlotArgs) -> Result<()> {
    let session = Session::read(&args.session)?;
    let svg = svg(&args, &session)?;
    plot::write(&args.out, &svg)?;
    println!("wrote {}", args.out.display());
    Ok(())
}

/// The chosen data set: `--data`, else the first with results.
fn dataset(args: &PlotArgs, session: &Session) -> Result<String> {
    let names: Vec<&str> = session
        .datasets
        .iter()
        .map(|d| d.get_ref().name.as_str())
        .collect();
    match &args.data {
        Some(d) if names.contains(&d.as_str()) => Ok(d.clone()),
        Some(d) => Err(Error::input(format!(
            "--data {d}: {} has no data set of that name (it has: {})",
            args.session.display(),
            names.join(", ")
        ))),
        None => names
            .iter()
            .find(|n| session.results.iter().any(|r| r.key.dataset == **n))
            .map(|n| n.to_string())
            .ok_or_else(|| {
                Error::input(format!(
                    "{} has no results yet: run it first (sgpw run {})",
                    args.session.display(),
                    args.session.display()
                ))
            }),
    }
}

/// The results drawn: on `dataset`, with a `--runs` label when any are given (each of
/// which must exist).
fn results<'a>(args: &PlotArgs, session: &'a Session, dataset: &str) -> Result<Vec<&'a RunResult>> {
    let on: Vec<&RunResult> = session
        .results
        .iter()
        .filter(|r| r.key.dataset == dataset)
        .collect();
    for l in &args.runs {
        if !on.iter().any(|r| &r.key.label == l) {
            let mut labels: Vec<&str> = on.iter().map(|r| r.key.label.as_str()).collect();
            labels.sort();
            labels.dedup();
            return Err(Error::input(format!(
                "--runs {l}: no result on {dataset} has that label (there are: {})",
                labels.join(", ")
            )));
        }
    }
    Ok(on
        .into_iter()
        .filter(|r| args.runs.is_empty() || args.runs.contains(&r.key.label))
        .collect())
}

/// The figure `args` asks for, as SVG.
pub fn svg(args: &PlotArgs, session: &Session) -> Result<String> {
    let dataset = dataset(args, session)?;
    let chosen = results(args, session, &dataset)?;
    let none = |what: &str| {
        Error::input(format!(
            "{}: no {what} on {dataset} to draw{}",
            args.session.display(),
            if args.runs.is_empty() {
                ""
            } else {
                " among the --runs labels"
            }
        ))
    };
    match args.chart {
        Kind::Evidence | Kind::Validation => {
            let metric = args.metric.unwrap_or(Metric::Mnlp);
            let traces = chosen
                .iter()
                .map(|r| chart::evidence::RunTrace {
                    key: &r.key,
                    method: &r.method,
                    trace: &r.trace,
                    validation: &r.validation,
                    best_iteration: r.best_iteration,
                    marks: chart::evidence::marks_of(r),
                })
                .collect();
            // about two points per pixel column
            let curves = chart::evidence::curves(traces, 2 * args.size.0 as usize, metric);
            let fig = if args.chart == Kind::Evidence {
                if curves.iter().all(|c| c.objective.is_empty()) {
                    return Err(none("run with a recorded objective trace"));
                }
                plot::figures::evidence(&curves, &dataset, None)
            } else {
                if curves.iter().all(|c| c.validation.is_empty()) {
                    return Err(none("run scored on a validation set (validation = …)"));
                }
                plot::figures::validation(&curves, &dataset, metric, None)
            };
            let mut fig = fig;
            if args.log_x {
                fig.x_log = true;
                fig.x_desc = format!("{} (log)", fig.x_desc);
                fig.note = Some(format!(
                    "the start ({} 0) is not on the log axis",
                    fig.x_desc.trim_end_matches(" (log)")
                ));
            }
            fig.svg(args.size)
        }
        Kind::Comparison => {
            let metric = args.metric.unwrap_or(Metric::Nmse);
            let owned: Vec<RunResult> = chosen.iter().map(|r| (*r).clone()).collect();
            let (points, _) =
                chart::comparison::of_headline(chart::comparison::points(&owned, &dataset));
            if points.is_empty() {
                return Err(none("finished run"));
            }
            let order = chart::label_order(
                session
                    .all_runs()
                    .iter()
                    .map(|(k, s)| (s.method.as_str(), k.label.as_str()))
                    .collect::<Vec<_>>(),
            );
            let labels = chart::comparison::labels(&points, order);
            let constant = chart::comparison::constant(&owned, &dataset, metric);
            plot::figures::comparison(&points, &labels, constant, &dataset, metric, None)
                .svg(args.size)
        }
        Kind::Prediction => prediction(args, session, &dataset, &chosen),
    }
}

/// The prediction figure of one finished run.
fn prediction(
    args: &PlotArgs,
    session: &Session,
    dataset: &str,
    chosen: &[&RunResult],
) -> Result<String> {
    let mut done: Vec<&RunResult> = chosen
        .iter()
        .copied()
        .filter(|r| r.status == Status::Done && r.model.is_some())
        .filter(|r| args.m.is_none_or(|m| r.key.m == m))
        .filter(|r| args.seed.is_none_or(|s| r.key.seed == s))
        .collect();
    // the first label in series order, its largest m, its smallest seed
    done.sort_by_key(|r| {
        (
            chart::method_index(&r.method),
            r.key.label.clone(),
            std::cmp::Reverse(r.key.m),
            r.key.seed,
        )
    });
    let Some(run) = done.first() else {
        return Err(Error::input(format!(
            "{}: no finished run with a model on {dataset}{} to predict with",
            args.session.display(),
            if args.runs.is_empty() && args.m.is_none() && args.seed.is_none() {
                ""
            } else {
                " matching --runs/--m/--seed"
            }
        )));
    };
    let model = run.model.as_ref().expect("filtered on a model");
    let entry = session
        .dataset(dataset)
        .ok_or_else(|| Error::input(format!("no data set {dataset}")))?;
    let spec = entry.load_spec(&base_dir(&args.session));
    let input = args.input.checked_sub(1).ok_or_else(|| {
        Error::input("--input counts from 1 (the first input column)".to_string())
    })?;
    let stored = crate::methods::get(&model.method).is_ok_and(|m| m.stores_posterior())
        && model.posterior.is_some();
    // A model with its posterior stored needs no training data: a sample of a large
    // file is enough for the scatter. Otherwise (or if the sample lost a column) the
    // whole data set.
    let mut data: Option<(Dataset, Option<usize>)> = None;
    if stored && let Some((d, total)) = crate::data::load::load_sample(&spec, SAMPLE_ROWS)? {
        data = Some((d, total));
    }
    let curves = match data {
        Some((d, total)) => {
            match chart::prediction::compute(model, &d, input, chart::prediction::GRID) {
                Ok(c) => Ok((c, Some((d.n_train() + d.n_test(), total)))),
                Err(_) => chart::prediction::compute(
                    model,
                    &crate::data::load::load_for_model(&spec)?,
                    input,
                    chart::prediction::GRID,
                )
                .map(|c| (c, None)),
            }
        }
        None => chart::prediction::compute(
            model,
            &crate::data::load::load_for_model(&spec)?,
            input,
            chart::prediction::GRID,
        )
        .map(|c| (c, None)),
    };
    let (curves, sampled) = curves.map_err(|e| {
        Error::input(format!(
            "cannot predict with {}/{} m={} seed {}: {e}",
            dataset, run.key.label, run.key.m, run.key.seed
        ))
    })?;
    let mut note = Vec::new();
    if curves.dim > 1 && curves.map.is_none() {
        note.push(format!(
            "along {}; the other inputs at their medians{}",
            curves.input_name,
            if sampled.is_some() {
                " over the rows read"
            } else {
                " in the training data"
            }
        ));
    }
    let drawn = curves.train.len() + curves.test.len();
    match sampled {
        Some((_, Some(t))) => note.push(format!(
            "{drawn} of {t} rows drawn, read from 40 places in the file"
        )),
        Some((_, None)) => note.push(format!(
            "{drawn} rows drawn, read from 40 places in the file"
        )),
        None if drawn < curves.rows => note.push(format!(
            "{drawn} of {} rows drawn, evenly spaced",
            curves.rows
        )),
        None => {}
    }
    let figure = PredictionFigure {
        title: format!(
            "Prediction: {dataset}/{} m={} seed {}",
            run.key.label, run.key.m, run.key.seed
        ),
        curves: &curves,
        note: (!note.is_empty()).then(|| note.join(" · ")),
    };
    match args.components {
        true => plot::components::svg(&figure, args.size),
        false => figure.svg(args.size),
    }
}
