//! The evidence and validation charts' series: per run, its objective against
//! iteration and its validation score against iteration, thinned to what a chart of a
//! given width can show, in legend order (method, label, m, seed), run k with palette
//! index k. The app's evidence pane and `sgpw plot --chart evidence|validation` draw
//! these.

use super::{Metric, method_index};
use crate::results::{RunKey, ValidationPoint};

/// One run's recorded (or live) curves, as the chart's caller has them.
#[derive(Clone, Copy, Debug)]
pub struct RunTrace<'a> {
    pub key: &'a RunKey,
    pub method: &'a str,
    /// The objective per iteration (NLML; per basis point for greedy).
    pub trace: &'a [f64],
    pub validation: &'a [ValidationPoint],
    /// The iterate early stopping kept, if it stopped early.
    pub best_iteration: Option<usize>,
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
        let mut objective: Vec<(f64, f64)> = r
            .trace
            .iter()
            .enumerate()
            .step_by(stride)
            .filter(|(_, v)| v.is_finite())
            .map(|(i, v)| (i as f64, *v))
            .collect();
        if let Some(last) = r.trace.iter().rposition(|v| v.is_finite())
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
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(label: &str, m: usize, seed: u64) -> RunKey {
        RunKey {
            dataset: "d".into(),
            label: label.into(),
            m,
            seed,
        }
    }

    /// Runs come in legend order with consecutive palette indices; a long trace is
    /// thinned but keeps its last value; non-finite values and empty runs are dropped.
    #[test]
    fn curves_in_legend_order_thinned() {
        let (a, b, c) = (key("vfe", 10, 1), key("fitc", 20, 1), key("fitc", 10, 1));
        let long: Vec<f64> = (0..1000).map(|i| 1000.0 - i as f64).collect();
        let short = [3.0, f64::NAN, 1.0];
        let val = [ValidationPoint {
            iteration: 2,
            nmse: 0.5,
            mnlp: f64::NAN,
        }];
        let runs = vec![
            RunTrace {
                key: &a,
                method: "vfe",
                trace: &short,
                validation: &val,
                best_iteration: None,
            },
            RunTrace {
                key: &b,
                method: "fitc",
                trace: &long,
                validation: &[],
                best_iteration: Some(3),
            },
            RunTrace {
                key: &c,
                method: "fitc",
                trace: &[],
                validation: &[],
                best_iteration: None,
            },
        ];
        let got = curves(runs.clone(), 100, Metric::Nmse);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].key.label.as_str(), got[0].series), ("fitc", 0));
        assert_eq!((got[1].key.label.as_str(), got[1].series), ("vfe", 1));
        assert!(got[0].objective.len() <= 101, "{}", got[0].objective.len());
        assert_eq!(got[0].objective.last(), Some(&(999.0, 1.0)));
        assert_eq!(got[1].objective, vec![(0.0, 3.0), (2.0, 1.0)]);
        assert_eq!(got[1].validation, vec![(2.0, 0.5)]);
        assert!(curves(runs, 100, Metric::Mnlp)[1].validation.is_empty());
    }
}
