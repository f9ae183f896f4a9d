//! `sgpw run`: run a session headless and write the results back into it.

use crate::error::Result;
use crate::session::{Status, runner};
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
    println!("{}", summary_table(&session));
    Ok(())
}

/// Mean NMSE / MNLP over seeds per (data set, label, m), as a Markdown table.
pub fn summary_table(session: &crate::session::Session) -> String {
    use std::collections::BTreeMap;
    let mut groups: BTreeMap<(String, String, usize), Vec<&crate::session::RunResult>> =
        BTreeMap::new();
    for r in &session.results {
        groups
            .entry((r.key.dataset.clone(), r.key.label.clone(), r.key.m))
            .or_default()
            .push(r);
    }
    let mut out = String::from(
        "| data set | method | m | runs | NMSE | MNLP | time (s) |\n|---|---|---|---|---|---|---|\n",
    );
    for ((d, l, m), rs) in groups {
        let done: Vec<_> = rs.iter().filter(|r| r.status == Status::Done).collect();
        let mean = |f: &dyn Fn(&crate::session::RunResult) -> Option<f64>| {
            let v: Vec<f64> = done.iter().filter_map(|r| f(r)).collect();
            if v.is_empty() {
                "-".to_string()
            } else {
                format!("{:.4}", v.iter().sum::<f64>() / v.len() as f64)
            }
        };
        out.push_str(&format!(
            "| {d} | {l} | {m} | {}/{} | {} | {} | {} |\n",
            done.len(),
            rs.len(),
            mean(&|r| r.nmse),
            mean(&|r| r.mnlp),
            mean(&|r| Some(r.train_seconds))
        ));
    }
    out
}
