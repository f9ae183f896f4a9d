//! Result tables of a session (Markdown): one table per data set, one row per m, one
//! column per run label, each cell "NMSE / MNLP" (or "MSE / MNLP") averaged over seeds
//! — over distinct results only, since a run that cannot depend on its seed repeats one
//! computation — with a mark on cells worse than the constant predictor. [`rows`] gives
//! one record per run for `--format csv|json`.

use super::{NlmlScale, RunKey, RunResult, Session, Status};
use crate::run_spec::RunSpec;
use std::collections::{BTreeMap, BTreeSet};

/// Marks a cell with a run whose test predictions are worse than the constant
/// predictor's (the training mean and variance).
pub const WORSE_TEST: &str = "†";
/// Marks a cell with a run whose validation predictions are worse than the mean's.
pub const WORSE_VALIDATION: &str = "‡";
/// Marks a cell with a run that collapsed to the constant predictor (signal variance
/// below [`crate::model_file::COLLAPSE_RATIO`] of the noise).
pub const COLLAPSED: &str = "§";

/// The results of one cell that are distinct: a result equal in every score to an
/// earlier one (a seed-independent run repeated under another seed) counts once.
fn distinct<'a>(done: &[&'a RunResult]) -> Vec<&'a RunResult> {
    let score = |r: &RunResult| [r.nmse, r.mnlp, r.mse, r.nlml].map(|v| v.map(f64::to_bits));
    let mut out: Vec<&RunResult> = Vec::new();
    for r in done {
        if !out.iter().any(|o| score(o) == score(r)) {
            out.push(r);
        }
    }
    out
}

/// The data-set name a result is grouped under: with `merge`, a trailing `-NN`
/// (generations of one synthetic problem, e.g. spiral-01 … spiral-10) is dropped.
fn group_name(dataset: &str, merge: bool) -> String {
    match dataset.rsplit_once('-') {
        Some((base, n)) if merge && !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
            base.to_string()
        }
        _ => dataset.to_string(),
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Standard error of the mean (sample sd / √k); None below two values.
fn std_error(v: &[f64]) -> Option<f64> {
    let mu = mean(v)?;
    let k = v.len() as f64;
    (v.len() >= 2).then(|| (v.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (k - 1.0) / k).sqrt())
}

/// A number with four significant digits that stays readable for 1e-12 and 8000 alike
/// (the tables, and `sgpw run`'s line per run).
pub fn fmt(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e5) {
        format!("{v:.2e}")
    } else {
        format!("{v:.4}")
    }
}

type Cells<'a> = BTreeMap<(usize, String), Vec<&'a RunResult>>;

/// The spec of every run the session defines, by key.
fn specs(session: &Session) -> BTreeMap<RunKey, RunSpec> {
    session.all_runs().into_iter().collect()
}

/// How `report` prints a session's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Markdown,
    Csv,
    Json,
}

/// The report as `sgpw report --format` prints it (and Python's `Session.report`):
/// markdown [`tables`], one [`csv`] line per run, or the [`rows`] as JSON.
pub fn render(
    session: &Session,
    format: ReportFormat,
    merge_generations: bool,
    mse: bool,
) -> crate::error::Result<String> {
    Ok(match format {
        ReportFormat::Markdown => tables(session, merge_generations, mse),
        ReportFormat::Csv => csv(session),
        ReportFormat::Json => {
            // straight to text, so the keys keep the order of the CSV columns
            let mut rows = serde_json::to_string_pretty(&rows(session))
                .map_err(|e| crate::error::Error::File(format!("JSON: {e}")))?;
            rows.push('\n');
            rows
        }
    })
}

/// Markdown tables of every finished result; `mse`: the test MSE instead of the NMSE.
pub fn tables(session: &Session, merge_generations: bool, mse: bool) -> String {
    // group → label order (first appearance) and (m, label) → results
    let mut groups: BTreeMap<String, (Vec<String>, Cells)> = BTreeMap::new();
    for r in &session.results {
        let (labels, cells) = groups
            .entry(group_name(&r.key.dataset, merge_generations))
            .or_default();
        if !labels.contains(&r.key.label) {
            labels.push(r.key.label.clone());
        }
        cells
            .entry((r.key.m, r.key.label.clone()))
            .or_default()
            .push(r);
    }
    let specs = specs(session);
    let mut out = String::new();
    for (name, (labels, cells)) in &groups {
        let (columns, singles): (Vec<&String>, Vec<&String>) =
            labels.iter().partition(|l| single_m(cells, l).is_none());
        out.push_str(&format!(
            "**{name}**{} — test {e} / MNLP (mean over runs, ± standard error of the {e} where \
             there are several; training time in s)\n",
            target_of(cells),
            e = if mse { "MSE" } else { "NMSE" }
        ));
        // A data set with only the exact GP has no m columns: no empty table.
        if !columns.is_empty() {
            out.push_str("\n| m |");
            for l in &columns {
                out.push_str(&format!(" {l} |"));
            }
            out.push_str("\n|---|");
            out.push_str(&"---|".repeat(columns.len()));
            out.push('\n');
        }
        let ms: BTreeSet<usize> = cells
            .keys()
            .filter(|(_, l)| columns.contains(&l))
            .map(|(m, _)| *m)
            .collect();
        for m in ms {
            out.push_str(&format!("| {m} |"));
            for l in &columns {
                out.push_str(&format!(" {} |", cell(cells.get(&(m, (*l).clone())), mse)));
            }
            out.push('\n');
        }
        for l in singles {
            let m = single_m(cells, l).unwrap_or_default();
            out.push_str(&format!(
                "\n{l}: {}\n",
                cell(cells.get(&(m, l.clone())), mse)
            ));
        }
        // What m counts differs by method (spectral points r are 2r basis functions).
        let mut meanings: Vec<String> = Vec::new();
        for l in &columns {
            let method = cells
                .iter()
                .find(|((_, x), _)| x == *l)
                .and_then(|(_, rs)| rs.first());
            if let Some(m) = method.and_then(|r| crate::methods::get(&r.method).ok()) {
                let text = format!("{l}: {}", m.m_meaning());
                if !meanings.contains(&text) {
                    meanings.push(text);
                }
            }
        }
        if !meanings.is_empty() {
            out.push_str(&format!("\nm counts — {}\n", meanings.join("; ")));
        }
        out.push_str(&notes(cells, &specs));
        out.push_str(&unfinished(cells));
        out.push('\n');
    }
    let not_run = session
        .all_runs()
        .iter()
        .filter(|(k, _)| session.result(k).is_none())
        .count();
    if not_run > 0 {
        out.push_str(&format!(
            "{} not run yet (never started: no result; `sgpw run` runs them).\n\n",
            crate::words::count(not_run, "run", "runs")
        ));
    }
    out
}

/// " (target y)": the target column the table's models were fitted to, as their model
/// tables record it ("" for results stored before models did).
fn target_of(cells: &Cells) -> String {
    let mut targets: Vec<&str> = Vec::new();
    for r in cells.values().flatten() {
        if let Some(t) = r.model.as_ref().and_then(|m| m.target.as_deref())
            && !targets.contains(&t)
        {
            targets.push(t);
        }
    }
    match targets.is_empty() {
        true => String::new(),
        false => format!(" (target {})", targets.join(", ")),
    }
}

/// Names joined by "; ", each once: a run named again (the same label, m and seed in
/// several generations of a merged data set) says how many times, "(in 5 data sets)".
pub fn counted(names: Vec<String>) -> String {
    let mut once: Vec<(String, usize)> = Vec::new();
    for n in names {
        match once.iter_mut().find(|(o, _)| *o == n) {
            Some((_, k)) => *k += 1,
            None => once.push((n, 1)),
        }
    }
    once.iter()
        .map(|(n, k)| match k {
            1 => n.clone(),
            _ => format!("{n} (in {k} data sets)"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The footnotes of one table: the marks of runs worse than the constant predictor
/// or collapsed to it, and the labels whose result cannot depend on the seed or whose seeds repeated a
/// result.
fn notes(cells: &Cells, specs: &BTreeMap<RunKey, RunSpec>) -> String {
    let all = || {
        cells
            .values()
            .flatten()
            .filter(|r| r.status == Status::Done)
    };
    let name = |r: &RunResult| format!("{} m={} seed {}", r.key.label, r.key.m, r.key.seed);
    let mut out = String::new();
    let test: Vec<String> = all()
        .filter(|r| r.worse_than_constant())
        .map(|r| name(r))
        .collect();
    if !test.is_empty() {
        out.push_str(&format!(
            "\n{WORSE_TEST} worse on the test set than the constant predictor (the training \
             mean and variance: NMSE above 1 or MNLP above its MNLP): {}\n",
            counted(test)
        ));
    }
    let collapsed: Vec<String> = all()
        .filter(|r| r.collapsed().is_some())
        .map(|r| name(r))
        .collect();
    if !collapsed.is_empty() {
        out.push_str(&format!(
            "\n{COLLAPSED} collapsed to the constant predictor (signal variance below {:e} of \
             the noise variance; {}): {}\n",
            crate::model_file::COLLAPSE_RATIO,
            crate::model_file::COLLAPSE_ADVICE,
            counted(collapsed)
        ));
    }
    let done = all().count();
    let budget = all()
        .filter(|r| r.stop == Some(crate::optim::Stop::Budget))
        .count();
    if budget > 0 {
        out.push_str(&format!(
            "\nended by their iteration budget, not converged: {budget} of {done} runs (the \
             stop column of --format csv names them; a larger --iters, or svgp's --epochs, \
             lets them run on)\n"
        ));
    }
    let restarted: Vec<String> = all()
        .filter_map(|r| {
            r.collapse_restart().map(|c| {
                let kept = if c.kept_restart {
                    "restart kept"
                } else {
                    "collapsed end kept"
                };
                format!("{} ({kept})", name(r))
            })
        })
        .collect();
    if !restarted.is_empty() {
        out.push_str(&format!(
            "\nrestarted after collapsing to the constant predictor, from a full GP fitted on \
             a subset (docs/methods.md §0.4; --no-collapse-restart keeps the collapsed fit): \
             {}\n",
            counted(restarted)
        ));
    }
    let valid: Vec<String> = all()
        .filter(|r| r.validation_worse_than_constant())
        .map(|r| name(r))
        .collect();
    if !valid.is_empty() {
        out.push_str(&format!(
            "\n{WORSE_VALIDATION} worse on the validation set than predicting the training \
             mean (NMSE above 1): {}\n",
            counted(valid)
        ));
    }
    let mut fixed: Vec<String> = Vec::new();
    let mut repeated: Vec<String> = Vec::new();
    for ((m, label), rs) in cells {
        let done: Vec<&RunResult> = rs
            .iter()
            .copied()
            .filter(|r| r.status == Status::Done)
            .collect();
        let independent = done
            .iter()
            .any(|r| specs.get(&r.key).is_some_and(|s| !s.seed_dependent()));
        if independent && !fixed.contains(label) {
            fixed.push(label.clone());
        }
        let k = distinct(&done).len();
        if done.len() > 1 && k < done.len() {
            repeated.push(format!("{label} m={m}: {} seeds, {k} distinct", done.len()));
        }
    }
    if !fixed.is_empty() {
        out.push_str(&format!(
            "\nseed-independent (deterministic initialisation and no seeded option, so \
             every seed repeats one computation): {}\n",
            fixed.join(", ")
        ));
    }
    if !repeated.is_empty() {
        out.push_str(&format!(
            "\nidentical repeats count once (mean ± s.e. over distinct results only): {}\n",
            repeated.join("; ")
        ));
    }
    out
}

/// The runs of one table that did not finish, cancelled apart from failed: cancelled
/// runs are not finished (`sgpw run` and the app's `g` run them again), failed ones
/// say why.
fn unfinished(cells: &Cells) -> String {
    let name = |r: &RunResult| format!("{} m={} seed {}", r.key.label, r.key.m, r.key.seed);
    let all = || cells.values().flatten();
    let cancelled: Vec<String> = all()
        .filter(|r| r.status == Status::Cancelled)
        .map(|r| {
            format!(
                "{} (at iteration {}, {:.1} s)",
                name(r),
                r.iterations,
                r.train_seconds
            )
        })
        .collect();
    let failed: Vec<String> = all()
        .filter(|r| r.status == Status::Failed)
        .map(|r| {
            let msg = r.message.as_deref().unwrap_or("no message");
            format!("{}: {}", name(r), msg.lines().next().unwrap_or(""))
        })
        .collect();
    let mut out = String::new();
    if !cancelled.is_empty() {
        out.push_str(&format!(
            "\ncancelled after they started, not finished (re-run by `sgpw run`): {}\n",
            cancelled.join("; ")
        ));
    }
    if !failed.is_empty() {
        out.push_str("\nfailed:\n");
        for f in failed {
            out.push_str(&format!("- {f}\n"));
        }
    }
    out
}

/// The one m of a label whose method has no size (the exact GP), shown under the
/// table rather than as a column; None for every other label.
fn single_m(cells: &Cells, label: &str) -> Option<usize> {
    let ms: BTreeSet<usize> = cells
        .keys()
        .filter(|(_, l)| l == label)
        .map(|(m, _)| *m)
        .collect();
    let method = cells
        .iter()
        .find(|((_, l), _)| l == label)
        .and_then(|(_, rs)| rs.first())
        .and_then(|r| crate::methods::get(&r.method).ok());
    match (method, ms.len()) {
        (Some(m), 1) if !m.uses_m() => ms.into_iter().next(),
        _ => None,
    }
}

/// "NMSE / MNLP (seconds)" (or MSE) averaged over the finished runs of one cell; a
/// cell with none says how many failed and how many were cancelled.
fn cell(rs: Option<&Vec<&RunResult>>, mse: bool) -> String {
    let Some(rs) = rs else { return String::new() };
    let count = |s: Status| rs.iter().filter(|r| r.status == s).count();
    let finished: Vec<&RunResult> = rs
        .iter()
        .copied()
        .filter(|r| r.status == Status::Done)
        .collect();
    let done = distinct(&finished);
    let mut nmse: Vec<f64> = done
        .iter()
        .filter_map(|r| if mse { r.mse } else { r.nmse })
        .collect();
    // a classifier's or a count model's cell leads with its own score ("error 0.035",
    // "RMSE 1.2"), named since the table's header says NMSE
    let mut named = String::new();
    if nmse.is_empty()
        && !mse
        && let Some(kind) = done.iter().find_map(|r| r.headline()).map(|(k, _)| k)
    {
        nmse = done
            .iter()
            .filter_map(|r| r.headline().filter(|(k, _)| *k == kind).map(|(_, v)| v))
            .collect();
        named = format!("{} ", kind.name());
    }
    let mnlp: Vec<f64> = done.iter().filter_map(|r| r.mnlp).collect();
    let secs: Vec<f64> = done.iter().map(|r| r.train_seconds).collect();
    match (mean(&nmse), mean(&mnlp), mean(&secs)) {
        (Some(a), Some(b), Some(t)) => {
            let partial = if finished.len() < rs.len() {
                format!(" ({}/{} done)", finished.len(), rs.len())
            } else {
                String::new()
            };
            let repeats = if done.len() < finished.len() {
                format!(" [{} seeds, {} distinct]", finished.len(), done.len())
            } else {
                String::new()
            };
            let mut marks = String::new();
            if finished.iter().any(|r| r.worse_than_constant()) {
                marks.push_str(WORSE_TEST);
            }
            if finished.iter().any(|r| r.validation_worse_than_constant()) {
                marks.push_str(WORSE_VALIDATION);
            }
            if finished.iter().any(|r| r.collapsed().is_some()) {
                marks.push_str(COLLAPSED);
            }
            let se = std_error(&nmse).map_or(String::new(), |e| format!(" ± {}", fmt(e)));
            let negative: usize = done.iter().map(|r| r.negative_var_latent).sum();
            let negative = if negative > 0 {
                format!(
                    " [{:.0} negative variances per run]",
                    negative as f64 / done.len() as f64
                )
            } else {
                String::new()
            };
            format!(
                "{named}{}{se} / {}{marks} ({t:.1}){partial}{repeats}{negative}",
                fmt(a),
                fmt(b)
            )
        }
        _ if !finished.is_empty() => format!("{} done (no test set)", finished.len()),
        _ => {
            let (failed, cancelled) = (count(Status::Failed), count(Status::Cancelled));
            let mut parts = Vec::new();
            if failed > 0 {
                parts.push(format!("{failed} failed"));
            }
            if cancelled > 0 {
                parts.push(format!("{cancelled} cancelled"));
            }
            parts.join(", ")
        }
    }
}

/// One run of a session as `report --format csv|json` gives it. `nlml` is on the raw
/// target scale (`nlml_scale` "raw"); a stored NLML in a standardized run's model units
/// that cannot be converted (no model), or of unknown scale, is left out and its
/// `nlml_scale` says why.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub dataset: String,
    pub label: String,
    pub method: String,
    pub m: usize,
    pub seed: u64,
    pub status: &'static str,
    pub standardize: Option<bool>,
    /// Whether the result can depend on the seed (None: no run entry has its key).
    pub seed_dependent: Option<bool>,
    pub nlml: Option<f64>,
    /// "raw", or "standardized" / "unknown" for a stored NLML that is not shown.
    pub nlml_scale: Option<&'static str>,
    pub nmse: Option<f64>,
    pub mnlp: Option<f64>,
    pub constant_mnlp: Option<f64>,
    pub worse_than_constant: bool,
    /// Whether the fit collapsed to the constant predictor (signal variance below
    /// [`crate::model_file::COLLAPSE_RATIO`] of the noise).
    pub collapsed: bool,
    /// Whether the fit collapsed and was restarted from a start fitted on a subset
    /// ([`crate::model_file::FitInfo::collapse_restart`]).
    pub collapse_restarted: bool,
    pub validation_nmse: Option<f64>,
    pub validation_mnlp: Option<f64>,
    pub best_iteration: Option<usize>,
    pub iterations: usize,
    /// Why the fit ended: "converged", "budget", "cancelled", … (None: not recorded).
    pub stop: Option<&'static str>,
    pub seconds: f64,
    /// The target column, as the stored model records it.
    pub target: Option<String>,
    /// The stored model's likelihood (`gaussian` unless `--likelihood` said otherwise).
    pub likelihood: Option<&'static str>,
    /// bernoulli: test error rate and AUC; poisson: test RMSE.
    pub error_rate: Option<f64>,
    pub auc: Option<f64>,
    pub rmse: Option<f64>,
}

/// The column names of [`Row`], in order.
pub const COLUMNS: &[&str] = &[
    "dataset",
    "label",
    "method",
    "m",
    "seed",
    "status",
    "standardize",
    "seed_dependent",
    "nlml",
    "nlml_scale",
    "nmse",
    "mnlp",
    "constant_mnlp",
    "worse_than_constant",
    "collapsed",
    "collapse_restarted",
    "validation_nmse",
    "validation_mnlp",
    "best_iteration",
    "iterations",
    "stop",
    "seconds",
    "target",
    "likelihood",
    "error_rate",
    "auc",
    "rmse",
];

/// Every result of the session, sorted by data set, label, m and seed.
pub fn rows(session: &Session) -> Vec<Row> {
    let specs = specs(session);
    let mut results: Vec<&RunResult> = session.results.iter().collect();
    results.sort_by(|a, b| a.key.cmp(&b.key));
    results
        .into_iter()
        .map(|r| {
            let spec = specs.get(&r.key);
            let raw = r.raw_nlml();
            let scale = match (r.nlml.is_some(), raw.is_some(), r.nlml_scale) {
                (false, _, _) => None,
                (true, true, _) => Some("raw"),
                (true, false, Some(NlmlScale::Standardized)) => Some("standardized"),
                (true, false, _) => Some("unknown"),
            };
            let kept = r.kept_validation();
            Row {
                dataset: r.key.dataset.clone(),
                label: r.key.label.clone(),
                method: r.method.clone(),
                m: r.key.m,
                seed: r.key.seed,
                status: match r.status {
                    Status::Done => "done",
                    Status::Failed => "failed",
                    Status::Cancelled => "cancelled",
                },
                standardize: r
                    .model
                    .as_ref()
                    .map(|m| m.standardize.is_some())
                    .or(spec.map(|s| s.standardize)),
                seed_dependent: spec.map(RunSpec::seed_dependent),
                nlml: raw,
                nlml_scale: scale,
                nmse: r.nmse,
                mnlp: r.mnlp,
                constant_mnlp: r.constant_mnlp,
                worse_than_constant: r.worse_than_constant(),
                collapsed: r.collapsed().is_some(),
                collapse_restarted: r.collapse_restart().is_some(),
                validation_nmse: kept.map(|v| v.nmse),
                validation_mnlp: kept.map(|v| v.mnlp),
                best_iteration: r.best_iteration,
                iterations: r.iterations,
                stop: r.stop.map(|s| s.word()),
                seconds: r.train_seconds,
                target: r.model.as_ref().and_then(|m| m.target.clone()),
                likelihood: r.model.as_ref().map(|m| m.likelihood_kind().name()),
                error_rate: r.error_rate,
                auc: r.auc,
                rmse: r.rmse,
            }
        })
        .collect()
}

/// The rows as CSV with a header (numbers in full precision; empty where unknown).
pub fn csv(session: &Session) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for row in rows(session) {
        let Ok(value) = serde_json::to_value(&row) else {
            continue;
        };
        let fields: Vec<String> = COLUMNS
            .iter()
            .map(|c| match &value[*c] {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => csv_field(s),
                v => v.to_string(),
            })
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
