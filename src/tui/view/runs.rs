//! Runs: one row per (method, m, seed) with status, standardized or raw, iteration,
//! NLML, NMSE, MNLP and time, and "!" where it predicts worse than a constant; the
//! selected run's details (why "!", failure message, re-run verdict) at the bottom.

use super::pane;
use crate::results::Headline;
use crate::run_context::Phase;
use crate::tui::format::{duration, fmt_nmse, fmt_opt, objective, run_label};
use crate::tui::state::{Activity, App, Focus, RunRow, RunStatus, Verdict};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table, TableState};

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let focused = app.focus == Focus::Runs;
    let title = format!(" Runs ({}) ", app.runs.len());
    let keys = Line::from(vec![
        Span::styled(" n", t.key()),
        Span::raw(" new "),
        Span::styled("g", t.key()),
        Span::raw(" start all "),
        Span::styled("x/X", t.key()),
        Span::raw(" cancel "),
        Span::styled("R", t.key()),
        Span::raw(" re-run "),
        Span::styled("r", t.key()),
        Span::raw(" replay "),
    ]);
    let details = details(app);
    // The key hint only where it fits beside the details (? lists every key anyway).
    let room = details.width() + keys.width() + 4 <= area.width as usize;
    let mut block = pane(app, title, focused).title_bottom(details);
    if room {
        block = block.title_bottom(keys.right_aligned());
    }
    // The label column takes what the others leave, up to the longest label, so runs
    // whose labels differ only at the end (…-val0.1, …-val0.1-es) stay apart when the
    // terminal is wide enough; narrower, the data column goes when every run is on one
    // data set (the charts' titles name it), and labels shorten keeping their ends
    // (run_label); the details line below always has the whole label.
    const OTHERS: u16 = 2 + 7 + 3 + 4 + 4 + 5 + 8 + 8 + 7 + 6 + 10;
    const DATA: u16 = 6 + 1;
    let longest = app
        .runs
        .iter()
        .map(|r| r.key.label.chars().count())
        .max()
        .unwrap_or(0) as u16;
    let one_dataset = app
        .runs
        .windows(2)
        .all(|w| w[0].key.dataset == w[1].key.dataset);
    let inner = area.width.saturating_sub(2);
    let show_data = !one_dataset || inner >= OTHERS + DATA + longest.max(6);
    let spare = inner.saturating_sub(OTHERS + if show_data { DATA } else { 0 });
    let label_width = longest.min(spare).max(6);
    let mut widths = vec![Constraint::Length(2), Constraint::Length(7)];
    if show_data {
        widths.push(Constraint::Length(6));
    }
    widths.extend([
        Constraint::Length(label_width),
        Constraint::Length(3),
        Constraint::Length(4),
        Constraint::Length(4),
        Constraint::Length(5),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(7),
        Constraint::Min(6),
    ]);
    let mut header = vec!["", "status"];
    if show_data {
        header.push("data");
    }
    let score = score_header(app);
    header.extend([
        "method", "std", "m", "seed", "iter", "NLML", score, "MNLP", "time",
    ]);
    let header = Row::new(header).style(t.title());
    let labels = app.label_order();
    let rows = app.runs.iter().map(|row| {
        let status = app.status_of(row);
        let result = app.result_of(row);
        let (iter, nlml, time) = match (&row.activity, result) {
            (
                Activity::Running {
                    iteration,
                    nlml,
                    elapsed,
                    ..
                },
                _,
            ) => (
                iteration.to_string(),
                nlml.map(|v| objective(Some(v))).unwrap_or_default(),
                duration(*elapsed),
            ),
            (Activity::Idle, Some(r)) if status != RunStatus::NotRun => (
                r.iterations.to_string(),
                objective(r.nlml),
                duration(r.train_seconds),
            ),
            _ => (String::new(), String::new(), String::new()),
        };
        let (nmse, mnlp) = match (status, result) {
            (RunStatus::Done, Some(r)) => (headline(r, score), fmt_opt(r.mnlp, 3)),
            (RunStatus::Failed, Some(r)) => (r.message.clone().unwrap_or_default(), String::new()),
            _ => (String::new(), String::new()),
        };
        let status_style = match status {
            RunStatus::Done => t.ok(),
            RunStatus::Failed => t.error(),
            RunStatus::Running | RunStatus::Queued => t.warn(),
            RunStatus::NotRun | RunStatus::Cancelled => t.dim(),
        };
        // "*": marked for the evidence chart; "!": worse than a constant predictor, or
        // collapsed to one
        let flag = if app.worse_than_constant(row).is_some() || app.collapsed(row).is_some() {
            "!"
        } else {
            " "
        };
        let mut cells = vec![
            Cell::from(Line::from(vec![
                Span::raw(if row.marked { "*" } else { " " }),
                Span::styled(flag, t.error()),
            ])),
            Cell::from(match &row.activity {
                // what a running run is doing, where it is not a fit alone
                Activity::Running { phase, .. } => activity_word(*phase, row),
                _ => status.word(),
            })
            .style(status_style),
        ];
        if show_data {
            cells.push(Cell::from(row.key.dataset.clone()));
        }
        cells.extend([
            Cell::from(run_label(&row.key.label, label_width as usize)).style(
                labels
                    .iter()
                    .position(|l| *l == row.key.label)
                    .map_or(Style::new(), |k| t.series_style(k)),
            ),
            Cell::from(if row.spec.standardize { "std" } else { "raw" }),
            Cell::from(row.key.m.to_string()),
            Cell::from(row.key.seed.to_string()),
            Cell::from(iter),
            Cell::from(nlml),
            Cell::from(nmse).style(if status == RunStatus::Failed {
                t.error()
            } else {
                Style::new()
            }),
            Cell::from(mnlp),
            Cell::from(time),
        ]);
        Row::new(cells)
    });
    let table = Table::new(rows, widths)
        .header(header)
        .block(block)
        .row_highlight_style(if focused { t.selected() } else { t.title() });
    let mut state = TableState::default().with_selected(if app.runs.is_empty() {
        None
    } else {
        Some(app.run_cursor)
    });
    frame.render_stateful_widget(table, area, &mut state);
    if app.runs.is_empty() {
        let inner = Rect {
            x: area.x + 2,
            y: area.y + 2,
            width: area.width.saturating_sub(4),
            height: 1,
        };
        frame.render_widget(
            Line::styled("no runs yet: n configures and launches some", t.dim()),
            inner,
        );
    }
}

/// The first score's column: NMSE, a classifier's error rate or a count model's RMSE
/// ([`Headline`]) when every scored run has the same; "score" when they differ, each
/// cell then naming its own.
fn score_header(app: &App) -> &'static str {
    let mut kinds = app
        .runs
        .iter()
        .filter_map(|row| app.result_of(row).and_then(|r| r.headline()))
        .map(|(h, _)| h);
    match kinds.next() {
        None => Headline::Nmse.name(),
        Some(first) if kinds.all(|h| h == first) => first.name(),
        Some(_) => "score",
    }
}

/// A run's first score as its column shows it (its name before it where the column
/// holds more than one kind).
fn headline(r: &crate::results::RunResult, header: &str) -> String {
    match r.headline() {
        None => fmt_nmse(None),
        Some((h, v)) => {
            let value = match h {
                Headline::Nmse => fmt_nmse(Some(v)),
                Headline::ErrorRate | Headline::Rmse => fmt_opt(Some(v), 4),
            };
            if header == h.name() {
                value
            } else {
                format!("{} {value}", &h.name()[..1])
            }
        }
    }
}

/// A running run's status word (7 columns): its subset fit, which start's fit it is in
/// while the two are raced ("only" once the other was dropped), or scoring.
fn activity_word(phase: Phase, row: &RunRow) -> &'static str {
    let raced = row
        .spec
        .check(usize::MAX)
        .is_ok_and(|s| s.runs_second_start());
    let only = |second: bool| row.live.dropped.is_some_and(|(d, _)| d != second);
    match phase {
        Phase::SubsetInit => "subset",
        Phase::Posterior | Phase::Scoring => "scoring",
        Phase::Dropped { .. } => "dropped",
        Phase::SecondStart if only(true) => "only 2",
        Phase::SecondStart => "start 2",
        Phase::Fit { .. } if only(false) => "only 1",
        Phase::Fit { .. } if raced => "start 1",
        _ => RunStatus::Running.word(),
    }
}

/// The selected run in one line: what m means, its message or re-run verdict.
fn details(app: &App) -> Line<'static> {
    let t = &app.theme;
    let Some(row) = app.selected_run() else {
        return Line::raw("");
    };
    let meaning = crate::methods::get(&row.spec.method)
        .map(|m| m.m_meaning())
        .unwrap_or("m");
    let mut spans = Vec::new();
    // first, so that it shows however narrow the pane (m shows everything)
    if let Some(why) = app.worse_than_constant(row) {
        spans.push(Span::styled(format!(" ! {why} ·"), t.error()));
    }
    if let Some(why) = app.collapsed(row) {
        spans.push(Span::styled(format!(" ! {why} ·"), t.error()));
    }
    // a raced run's dropped start, while it runs (docs/methods.md §0.4)
    if let (Activity::Running { .. }, Some((second, at))) = (&row.activity, row.live.dropped) {
        let which = if second { "second" } else { "first" };
        spans.push(Span::raw(format!(
            " {which} start dropped behind at iteration {at} ·"
        )));
    }
    spans.push(Span::raw(format!(
        " {} m={} ({meaning}) seed {} · {} it ",
        row.key.label, row.key.m, row.key.seed, row.spec.iters
    )));
    // how the fit ended: a rule (converged) or the budget
    if let Some(stop) = app.result_of(row).and_then(|r| r.stop) {
        let style = match stop {
            crate::optim::Stop::Converged => t.ok(),
            crate::optim::Stop::Budget => t.warn(),
            _ => t.dim(),
        };
        spans.push(Span::styled(format!("· {} ", stop.word()), style));
    }
    // a classifier's or a count model's scores, which the table's columns hold only in part
    if let Some(r) = app.result_of(row)
        && let Some((h, v)) = r.headline().filter(|(h, _)| *h != Headline::Nmse)
    {
        let auc = r.auc.map_or(String::new(), |a| format!(" AUC {a:.4}"));
        let nlp = match h {
            Headline::ErrorRate => "NLP",
            _ => "MNLP",
        };
        spans.push(Span::raw(format!(
            "· {} {v:.4}{auc} {nlp} {} ",
            h.long_name(),
            fmt_opt(r.mnlp, 3)
        )));
    }
    if let Some(fixes) = row.spec.options.fix.as_deref().filter(|f| !f.is_empty()) {
        let names: Vec<String> = fixes.iter().map(|f| f.to_string()).collect();
        spans.push(Span::raw(format!("· fixed {} ", names.join(", "))));
    }
    // a deterministic start: another seed repeats this computation, not an independent run
    if !row.spec.seed_dependent() {
        spans.push(Span::styled("· seed-independent ", t.warn()));
    }
    if let Some(r) = app.result_of(row).filter(|r| r.negative_var_latent > 0) {
        spans.push(Span::styled(
            format!(
                "· {} negative test variances ({} even with σ²; MNLP uses σ²) ",
                r.negative_var_latent, r.negative_var_noisy
            ),
            t.warn(),
        ));
    }
    if let Some(msg) = app.result_of(row).and_then(|r| r.message.as_ref()) {
        spans.push(Span::styled(format!("· {msg} "), t.error()));
    }
    match &row.verdict {
        Some(Verdict::Identical) => spans.push(Span::styled("· re-run identical ✓ ", t.ok())),
        Some(Verdict::Differs(d)) => {
            spans.push(Span::styled(format!("· re-run differs: {d} "), t.warn()))
        }
        None => {}
    }
    Line::from(spans)
}
