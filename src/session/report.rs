//! Result tables of a session (Markdown): one table per data set, one row per m, one
//! column per run label, each cell "NMSE / MNLP" (or "MSE / MNLP") averaged over seeds.

use super::{RunResult, Session, Status};
use std::collections::{BTreeMap, BTreeSet};

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

/// A number with four significant digits that stays readable for 1e-12 and 8000 alike.
fn fmt(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e5) {
        format!("{v:.2e}")
    } else {
        format!("{v:.4}")
    }
}

type Cells<'a> = BTreeMap<(usize, String), Vec<&'a RunResult>>;

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
    let mut out = String::new();
    for (name, (labels, cells)) in &groups {
        let (columns, singles): (Vec<&String>, Vec<&String>) =
            labels.iter().partition(|l| single_m(cells, l).is_none());
        out.push_str(&format!(
            "**{name}** — test {e} / MNLP (mean over runs, ± standard error of the {e} where \
             there are several; training time in s)\n",
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
            "{not_run} runs have no result yet (`sgpw run` runs them).\n\n"
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
                "{} ({} it, {:.1} s)",
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
            "\ncancelled, not finished (re-run by `sgpw run`): {}\n",
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
    let done: Vec<&&RunResult> = rs.iter().filter(|r| r.status == Status::Done).collect();
    let nmse: Vec<f64> = done
        .iter()
        .filter_map(|r| if mse { r.mse } else { r.nmse })
        .collect();
    let mnlp: Vec<f64> = done.iter().filter_map(|r| r.mnlp).collect();
    let secs: Vec<f64> = done.iter().map(|r| r.train_seconds).collect();
    match (mean(&nmse), mean(&mnlp), mean(&secs)) {
        (Some(a), Some(b), Some(t)) => {
            let partial = if done.len() < rs.len() {
                format!(" ({}/{} done)", done.len(), rs.len())
            } else {
                String::new()
            };
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
            format!("{}{se} / {} ({t:.1}){partial}{negative}", fmt(a), fmt(b))
        }
        _ if !done.is_empty() => format!("{} done (no test set)", done.len()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_merge_and_cells_average() {
        let text = r#"
schema_version = 1
name = "t"
[[datasets]]
name = "spiral-01"
train = "a.csv"
[[datasets]]
name = "spiral-02"
train = "b.csv"
[[results]]
dataset = "spiral-01"
label = "psds"
m = 10
seed = 1
method = "psds"
status = "done"
nmse = 0.2
mnlp = 1.0
mse = 20.0
train_seconds = 1.0
[[results]]
dataset = "spiral-02"
label = "psds"
m = 10
seed = 1
method = "psds"
status = "done"
nmse = 0.4
mnlp = 2.0
mse = 40.0
train_seconds = 3.0
"#;
        let s = Session::parse(text).expect("parses");
        let merged = tables(&s, true, false);
        assert!(
            merged.contains("**spiral**")
                && merged.contains("| 10 | 0.3000 ± 0.1000 / 1.5000 (2.0) |"),
            "{merged}"
        );
        let apart = tables(&s, false, false);
        assert!(
            apart.contains("**spiral-01**") && apart.contains("| 10 | 0.2000 / 1.0000 (1.0) |"),
            "{apart}"
        );
        let mse = tables(&s, true, true);
        assert!(
            mse.contains("test MSE / MNLP")
                && mse.contains("| 10 | 30.0000 ± 10.0000 / 1.5000 (2.0) |"),
            "{mse}"
        );
    }
}
