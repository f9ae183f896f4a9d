//! The comparison chart's series: test NMSE or MNLP against m per label, the mean over
//! a label's finished seeds with its standard error, and the constant predictor (the
//! training mean and variance) as a reference. The app's comparison pane and `sgpw plot
//! --chart comparison` draw these.

use super::Metric;
use crate::results::{Headline, RunResult, Status};
use std::collections::BTreeMap;

/// One point of the comparison: a label at one m, averaged over its finished seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub label: String,
    pub method: String,
    pub m: usize,
    pub seeds: usize,
    /// What `nmse` holds: NMSE, or a classifier's error rate or a count model's RMSE
    /// ([`RunResult::headline`]).
    pub headline: Headline,
    pub nmse: f64,
    pub mnlp: f64,
    /// Standard errors of the means (sd / √seeds; 0 for one seed).
    pub nmse_se: f64,
    pub mnlp_se: f64,
}

impl Point {
    /// The mean and its standard error in `metric`.
    pub fn value(&self, metric: Metric) -> (f64, f64) {
        match metric {
            Metric::Nmse => (self.nmse, self.nmse_se),
            Metric::Mnlp => (self.mnlp, self.mnlp_se),
        }
    }
}

fn mean_se(v: &[f64]) -> (f64, f64) {
    let m = crate::data::moments::moments(v.iter().copied());
    (m.mean, m.sd / (v.len() as f64).sqrt())
}

/// Mean NMSE and MNLP per (label, m) over the finished runs on `dataset`, sorted by
/// label then m.
pub fn points(results: &[RunResult], dataset: &str) -> Vec<Point> {
    // (label, m) → (method, NMSEs, MNLPs) over seeds
    // (label, m, headline) → (method, first scores, MNLPs) over seeds
    type Groups = BTreeMap<(String, usize, Headline), (String, Vec<f64>, Vec<f64>)>;
    let mut groups = Groups::new();
    for r in results {
        if r.key.dataset != dataset || r.status != Status::Done {
            continue;
        }
        if let (Some((h, a)), Some(b)) = (r.headline(), r.mnlp) {
            let g = groups
                .entry((r.key.label.clone(), r.key.m, h))
                .or_insert_with(|| (r.method.clone(), Vec::new(), Vec::new()));
            g.1.push(a);
            g.2.push(b);
        }
    }
    groups
        .into_iter()
        .map(|((label, m, headline), (method, nmse, mnlp))| {
            let (nmse_mean, nmse_se) = mean_se(&nmse);
            let (mnlp_mean, mnlp_se) = mean_se(&mnlp);
            Point {
                label,
                method,
                m,
                seeds: nmse.len(),
                headline,
                nmse: nmse_mean,
                mnlp: mnlp_mean,
                nmse_se,
                mnlp_se,
            }
        })
        .collect()
}

/// The constant predictor's score on `dataset` in `metric`: NMSE 1 (the training
/// mean), MNLP the mean of the constant MNLPs the finished runs recorded (they share
/// the test set, so they agree); None when no run recorded one.
pub fn constant(results: &[RunResult], dataset: &str, metric: Metric) -> Option<f64> {
    let done = || {
        results
            .iter()
            .filter(move |r| r.key.dataset == dataset && r.status == Status::Done)
    };
    match metric {
        // a classifier's or count model's constant predictor has no recorded first score
        Metric::Nmse => done()
            .any(|r| r.headline().is_some_and(|(h, _)| h == Headline::Nmse))
            .then_some(1.0),
        Metric::Mnlp => {
            let v: Vec<f64> = done().filter_map(|r| r.constant_mnlp).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        }
    }
}

/// The first score the comparison of a data set draws ([`Point::headline`]): the one
/// most of its points have (a classifier's error rate before NMSE on a tie); the points
/// of another kind (a regression fitted to labels) are left out by [`of_headline`], as
/// their scores do not compare.
pub fn headline(points: &[Point]) -> Headline {
    let count = |h: Headline| points.iter().filter(|p| p.headline == h).count();
    if points.is_empty() {
        return Headline::Nmse;
    }
    // the last of the largest counts wins: listed from the least preferred
    [Headline::Nmse, Headline::Rmse, Headline::ErrorRate]
        .into_iter()
        .max_by_key(|h| count(*h))
        .unwrap_or(Headline::Nmse)
}

/// The points whose first score is [`headline`]'s, and how many were left out.
pub fn of_headline(points: Vec<Point>) -> (Vec<Point>, usize) {
    let h = headline(&points);
    let n = points.len();
    let kept: Vec<Point> = points.into_iter().filter(|p| p.headline == h).collect();
    let left = n - kept.len();
    (kept, left)
}

/// The labels of `points` in series order (`order`, the session's label order; labels
/// only in results after it), each with its palette index.
pub fn labels(points: &[Point], mut order: Vec<String>) -> Vec<(usize, String)> {
    for p in points {
        if !order.contains(&p.label) {
            order.push(p.label.clone());
        }
    }
    order
        .into_iter()
        .enumerate()
        .filter(|(_, l)| points.iter().any(|p| &p.label == l))
        .collect()
}
