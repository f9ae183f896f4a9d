//! The evidence and validation charts' series: per run, its objective against
//! iteration and its validation score against iteration, thinned to what a chart of a
//! given width can show, in legend order (method, label, m, seed), run k with palette
//! index k. The app's evidence pane and `sgpw plot --chart evidence|validation` draw
//! these.

use super::{Metric, method_index};
use crate::methods::TraceMarks;
use crate::results::{NlmlScale, RunKey, RunResult, ValidationPoint};

/// One run's recorded (or live) curves, as the chart's caller has them.
#[derive(Clone, Debug)]
pub struct RunTrace<'a> {
    pub key: &'a RunKey,
    pub method: &'a str,
    /// The objective per iteration (NLML; per basis point for greedy).
    pub trace: &'a [f64],
    pub validation: &'a [ValidationPoint],
    /// The iterate early stopping kept, if it stopped early.
    pub best_iteration: Option<usize>,
    /// What its model adds (a full-data objective, the model's size), in the trace's
    /// units ([`marks_of`]); only the iterations the trace reaches are drawn.
    pub marks: TraceMarks,
}

/// What a recorded run's model adds to its evidence curve, the full-data objective
/// moved to the scale of the run's trace (the raw targets' since schema 2).
pub fn marks_of(result: &RunResult) -> TraceMarks {
    let Some(model) = &result.model else {
        return TraceMarks::default();
    };
    let Ok(method) = crate::methods::get(&result.method) else {
        return TraceMarks::default();
    };
    let mut marks = method.trace_marks(model);
    let offset = match result.nlml_scale {
        Some(NlmlScale::Raw) => result.raw_offset().unwrap_or(0.0),
        _ => 0.0,
    };
    for p in &mut marks.full {
        p.1 += offset;
    }
    marks
}

/// One run's series.
#[derive(Clone, Debug, PartialEq)]
pub struct RunCurve {
    pub key: RunKey,
    pub method: String,
    /// Its palette index (hue and glyph).
    pub series: usize,
    /// (iteration, objective), finite values only, the last finite one always kept.
    pub objective: Vec<(f64, f64)>,
    /// (iteration, validation score in `metric`'s own units), finite values only.
    pub validation: Vec<(f64, f64)>,
    pub best_iteration: Option<usize>,
    /// (iteration, objective on the whole training set) where the trace is a noisy
    /// estimate (svgp's minibatch ELBO); empty otherwise.
    pub full: Vec<(f64, f64)>,
    /// Where the trace is noisy, `objective` holds the means of windows of this many
    /// iterations (each at its window's middle); 1 otherwise.
    pub smoothed: usize,
    /// (iteration, model size) where the fit grows or prunes its model (rvm), thinned
    /// like the objective but keeping every change; empty otherwise.
    pub sizes: Vec<(f64, f64)>,
    /// What `sizes` counts ("relevance vectors").
    pub size_name: &'static str,
}

impl RunCurve {
    /// The model's size at the last iteration drawn.
    pub fn last_size(&self) -> Option<usize> {
        self.sizes.last().map(|p| p.1 as usize)
    }
}

/// The curves of `runs` in legend order, each thinned to at most about `max_points`
/// points, validation scored by `metric`. Runs with nothing to draw are left out (and
/// take no palette index).
pub fn curves(mut runs: Vec<RunTrace>, max_points: usize, metric: Metric) -> Vec<RunCurve> {
    runs.sort_by_key(|r| {
        (
            method_index(r.method),
            r.key.label.clone(),
            r.key.m,
            r.key.seed,
        )
    });
    let mut out = Vec::new();
    for r in runs {
        let stride = r.trace.len().div_ceil(max_points.max(2)).max(1);
        // a noisy trace (svgp's minibatch estimates) is drawn as the means of windows
        // of it, so its noise neither hides the other curves nor sets the y range
        let noisy = !r.marks.full.is_empty();
        let smoothed = if noisy {
            stride.max(r.trace.len() / SMOOTHED_POINTS).max(1)
        } else {
            1
        };
        let mut objective: Vec<(f64, f64)> = if noisy {
            window_means(r.trace, smoothed)
        } else {
            r.trace
                .iter()
                .enumerate()
                .step_by(stride)
                .filter(|(_, v)| v.is_finite())
                .map(|(i, v)| (i as f64, *v))
                .collect()
        };
        if let Some(last) = r.trace.iter().rposition(|v| v.is_finite())
            && !noisy
            && objective.last().is_some_and(|p| p.0 as usize != last)
        {
            objective.push((last as f64, r.trace[last]));
        }
        let validation: Vec<(f64, f64)> = r
            .validation
            .iter()
            .map(|p| (p.iteration as f64, metric.of_validation(p)))
            .filter(|p| p.1.is_finite())
            .collect();
        let reached = r.trace.len();
        let full: Vec<(f64, f64)> = r
            .marks
            .full
            .iter()
            .filter(|(i, v)| *i < reached && v.is_finite())
            .map(|(i, v)| (*i as f64, *v))
            .collect();
        let sizes = sizes(&r.marks.sizes[..r.marks.sizes.len().min(reached)], stride);
        if objective.is_empty() && validation.is_empty() {
            continue;
        }
        out.push(RunCurve {
            key: r.key.clone(),
            method: r.method.to_string(),
            series: out.len(),
            objective,
            validation,
            best_iteration: r.best_iteration,
            full,
            smoothed,
            sizes,
            size_name: r.marks.size_name,
        });
    }
    out
}

/// A noisy trace is smoothed into about this many window means.
const SMOOTHED_POINTS: usize = 60;

/// The means of the finite values of consecutive windows of `w` iterations, each at
/// its window's middle iteration.
fn window_means(trace: &[f64], w: usize) -> Vec<(f64, f64)> {
    trace
        .chunks(w.max(1))
        .enumerate()
        .filter_map(|(k, chunk)| {
            let finite: Vec<f64> = chunk.iter().copied().filter(|v| v.is_finite()).collect();
            let mean = finite.iter().sum::<f64>() / finite.len() as f64;
            let middle = (k * w) as f64 + (chunk.len() - 1) as f64 / 2.0;
            (!finite.is_empty()).then_some((middle, mean))
        })
        .collect()
}

/// The sizes as (iteration, size), every `stride`-th one and every change kept (a step
/// drawn as a step), the last always.
fn sizes(sizes: &[usize], stride: usize) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, &s) in sizes.iter().enumerate() {
        let changed = i > 0 && sizes[i - 1] != s;
        if changed {
            // the level before the change, so a line draws a step
            out.push(((i - 1) as f64, sizes[i - 1] as f64));
        }
        if changed || i % stride == 0 || i + 1 == sizes.len() {
            out.push((i as f64, s as f64));
        }
    }
    out.dedup_by(|b, a| a.0 == b.0);
    out
}
