//! L-BFGS with a strong-Wolfe line search (Nocedal & Wright, Algorithms 7.4, 3.5
//! and 3.6), an iteration budget, and a callback after every iteration that receives
//! the NLML and may stop the run.
//!
//! Hand-written rather than taken from a crate because two behaviours matter here and
//! are not offered together elsewhere: a failed evaluation (non-positive-definite
//! matrix, NaN) inside a line search shrinks the step instead of ending the run, and
//! the caller can cancel between any two iterations.

use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct Options {
    pub max_iters: usize,
    /// Pairs kept for the inverse-Hessian approximation. 100, not L-BFGS-B's usual
    /// 10: these fits stop at an iteration budget long before convergence, and the
    /// longer memory reaches a lower NLML within it (kin40k FITC, 500 iterations:
    /// m = 25: 6672 → 5458, m = 200: −901 → −1191; elevators likewise), for
    /// O(memory · parameters) extra work per iteration, noise beside an evaluation.
    pub memory: usize,
    /// Stop when max |gradient| falls below this.
    pub grad_tol: f64,
    /// Stop when the relative decrease of f in one iteration falls below this
    /// (scipy's L-BFGS-B default, factr = 1e7).
    pub f_tol: f64,
    /// With `Some(rows)`: also stop (converged) once f has stopped improving by
    /// [`PLATEAU_TOL_PER_ROW`] nats per row an iteration ([`stalled_within`] on the
    /// iterations' values) — for an objective with a direction along which it keeps
    /// falling ever more slowly toward a limit (EP's evidence as the latent scale
    /// grows, docs/methods.md §10), where the relative test above never ends the drift.
    pub plateau_rows: Option<usize>,
    /// Sufficient decrease and curvature constants of the strong Wolfe conditions.
    pub c1: f64,
    pub c2: f64,
    pub max_line_evals: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_iters: 500,
            memory: 100,
            grad_tol: 1e-5,
            f_tol: 2.2e-9,
            plateau_rows: None,
            c1: 1e-4,
            c2: 0.9,
            max_line_evals: 25,
        }
    }
}

/// Values compared per window by [`plateaued_within`]: the mean of the last `WINDOW`
/// against the mean of the `WINDOW` before.
pub const WINDOW: usize = 5;
/// How many noise standard errors an improvement must exceed to count.
const Z: f64 = 2.0;
/// The tolerance of L-BFGS on a deterministic objective with [`Options::plateau_rows`]
/// (and of svgp's joint stage, the same): an iteration that gains less than this many
/// nats per training row, on average over a window, gains nothing that a prediction
/// would show (a thousand more such iterations: a thousandth of a nat per row).
pub const PLATEAU_TOL_PER_ROW: f64 = 1e-6;

/// Whether the values (lower is better) of an objective's checks have stopped
/// improving beyond their noise: the mean of the last [`WINDOW`] against the mean of
/// the [`WINDOW`] before; the noise from the successive differences of those
/// 2·[`WINDOW`] values (a steady fall inflates it too, but by less than the fall it
/// measures, so a value still falling is never called flat), and an improvement of
/// less than `tol_per_row` nats per row and check (`rows` rows) counts as none. False
/// until there are 2·[`WINDOW`] values.
pub fn plateaued_within(values: &[f64], rows: usize, tol_per_row: f64) -> bool {
    match window_improvement(values) {
        None => false,
        Some((improvement, se)) => {
            let tol = tol_per_row * rows as f64 * WINDOW as f64;
            !(improvement > Z * se && improvement > tol)
        }
    }
}

/// [`plateaued_within`] for values without noise (L-BFGS's iterations): the tolerance
/// alone. The noise test would misread L-BFGS's uneven descent — a long step after
/// short ones inflates the successive differences — as noise, and call a falling
/// objective flat.
pub fn stalled_within(values: &[f64], rows: usize, tol_per_row: f64) -> bool {
    window_improvement(values)
        .is_some_and(|(improvement, _)| improvement <= tol_per_row * rows as f64 * WINDOW as f64)
}

/// The mean of the last [`WINDOW`] values below the mean of the [`WINDOW`] before,
/// and that difference's standard error from the successive differences; None with
/// fewer than 2·[`WINDOW`] values.
fn window_improvement(values: &[f64]) -> Option<(f64, f64)> {
    let k = values.len();
    if k < 2 * WINDOW {
        return None;
    }
    let recent = &values[k - 2 * WINDOW..];
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let improvement = mean(&recent[..WINDOW]) - mean(&recent[WINDOW..]);
    let var = recent
        .windows(2)
        .map(|w| (w[1] - w[0]).powi(2))
        .sum::<f64>()
        / (2.0 * (2 * WINDOW - 1) as f64);
    // the standard error of a difference of two means of WINDOW values
    Some((improvement, (var * 2.0 / WINDOW as f64).sqrt()))
}

/// What the callback sees after each iteration (iteration 0 is the starting point).
#[derive(Clone, Debug)]
pub struct IterInfo {
    pub iteration: usize,
    pub nlml: f64,
    pub grad_norm: f64,
    pub elapsed: f64,
    /// The point reached.
    pub x: Vec<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// Stop: the run was cancelled.
    Stop,
    /// Stop: the caller has what it wants (early stopping on a validation score).
    Finish,
}

/// Why a minimisation ended (kept in every result).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// The iteration budget was used up.
    Budget,
    /// Gradient or relative decrease below tolerance.
    Converged,
    /// No step along the search direction decreased f.
    LineSearchFailed,
    /// The callback asked to stop, or an evaluation saw the run's cancel token.
    Cancelled,
    /// The validation score stopped improving (`--early-stop`).
    EarlyStop,
    /// The method learns nothing by optimisation (nystrom: its hyperparameters come
    /// from a full GP on a subset, its basis points from k-means; greedy without
    /// --adapt: its basis points are selected at fixed hyperparameters).
    NothingToFit,
}

impl Stop {
    /// The word used in results, tables and JSON.
    pub fn word(self) -> &'static str {
        match self {
            Stop::Budget => "budget",
            Stop::Converged => "converged",
            Stop::LineSearchFailed => "line-search-failed",
            Stop::Cancelled => "cancelled",
            Stop::EarlyStop => "early-stop",
            Stop::NothingToFit => "nothing-to-fit",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub x: Vec<f64>,
    pub f: f64,
    pub grad: Vec<f64>,
    pub iterations: usize,
    pub evaluations: usize,
    /// f after each iteration, starting with the initial value.
    pub trace: Vec<f64>,
    pub stop: Stop,
}

impl Outcome {
    /// No optimisation: the parameters `x` as they are, evaluated once to `f`.
    pub fn unfitted(x: Vec<f64>, f: f64) -> Outcome {
        Outcome {
            x,
            f,
            grad: Vec::new(),
            iterations: 0,
            evaluations: 1,
            trace: vec![f],
            stop: Stop::NothingToFit,
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn inf_norm(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// A point on the search line.
#[derive(Clone)]
struct Probe {
    a: f64,
    f: f64,
    g: Vec<f64>,
    slope: f64,
}

struct LineSearch<'a, F> {
    f: &'a mut F,
    x: &'a [f64],
    d: &'a [f64],
    f0: f64,
    slope0: f64,
    evals: usize,
    opts: &'a Options,
    /// An evaluation reported `Error::Cancelled`: stop searching at once.
    cancelled: bool,
}

impl<F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>> LineSearch<'_, F> {
    /// Evaluate at step a; None for a failed or non-finite evaluation.
    fn probe(&mut self, a: f64) -> Option<Probe> {
        self.evals += 1;
        let xa: Vec<f64> = self.x.iter().zip(self.d).map(|(x, d)| x + a * d).collect();
        match (self.f)(&xa) {
            Ok((f, g)) if f.is_finite() && g.iter().all(|v| v.is_finite()) => {
                let slope = dot(&g, self.d);
                Some(Probe { a, f, g, slope })
            }
            Err(Error::Cancelled) => {
                self.cancelled = true;
                None
            }
            _ => None,
        }
    }

    fn armijo(&self, p: &Probe) -> bool {
        p.f <= self.f0 + self.opts.c1 * p.a * self.slope0
    }

    fn curvature(&self, p: &Probe) -> bool {
        p.slope.abs() <= -self.opts.c2 * self.slope0
    }

    /// Algorithm 3.5: bracket a step satisfying the strong Wolfe conditions.
    fn search(&mut self, a0: f64) -> Option<Probe> {
        let mut prev = Probe {
            a: 0.0,
            f: self.f0,
            g: Vec::new(),
            slope: self.slope0,
        };
        let mut a = a0;
        let mut best: Option<Probe> = None;
        while self.evals < self.opts.max_line_evals && !self.cancelled {
            let Some(p) = self.probe(a) else {
                // Failed evaluation: the step was too long; shrink towards the last good point.
                a = prev.a + 0.3 * (a - prev.a);
                continue;
            };
            if self.armijo(&p) && best.as_ref().is_none_or(|b| p.f < b.f) {
                best = Some(p.clone());
            }
            if !self.armijo(&p) || (prev.a > 0.0 && p.f >= prev.f) {
                return self.zoom(prev, p).or(best);
            }
            if self.curvature(&p) {
                return Some(p);
            }
            if p.slope >= 0.0 {
                return self.zoom(p, prev).or(best);
            }
            // Still descending: extrapolate by cubic interpolation, within [2a, 10a].
            let next = cubic_min(&prev, &p).unwrap_or(4.0 * p.a);
            a = next.clamp(2.0 * p.a, 10.0 * p.a);
            prev = p;
        }
        best
    }

    /// Algorithm 3.6 with safeguarded cubic interpolation.
    fn zoom(&mut self, mut lo: Probe, mut hi: Probe) -> Option<Probe> {
        let mut best = (lo.a > 0.0).then(|| lo.clone());
        while self.evals < self.opts.max_line_evals && !self.cancelled {
            let (left, right) = if lo.a < hi.a {
                (lo.a, hi.a)
            } else {
                (hi.a, lo.a)
            };
            let width = right - left;
            if width <= 1e-14 * right.abs().max(1e-300) {
                break;
            }
            let guess = cubic_min(&lo, &hi).unwrap_or(0.5 * (left + right));
            let a = guess.clamp(left + 0.1 * width, right - 0.1 * width);
            let Some(p) = self.probe(a) else {
                // Treat a failed evaluation as "too far": it becomes the high end.
                hi = Probe {
                    a,
                    f: f64::INFINITY,
                    g: Vec::new(),
                    slope: f64::NAN,
                };
                continue;
            };
            if !self.armijo(&p) || p.f >= lo.f {
                hi = p;
            } else {
                if self.curvature(&p) {
                    return Some(p);
                }
                if p.slope * (hi.a - lo.a) >= 0.0 {
                    hi = lo.clone();
                }
                best = Some(p.clone());
                lo = p;
            }
        }
        best
    }
}

/// Minimiser of the cubic through two probes (values and slopes), if it exists.
fn cubic_min(p: &Probe, q: &Probe) -> Option<f64> {
    if !(p.f.is_finite() && q.f.is_finite() && p.slope.is_finite() && q.slope.is_finite()) {
        return None;
    }
    let d1 = p.slope + q.slope - 3.0 * (p.f - q.f) / (p.a - q.a);
    let disc = d1 * d1 - p.slope * q.slope;
    if disc < 0.0 {
        return None;
    }
    let d2 = (q.a - p.a).signum() * disc.sqrt();
    let denom = q.slope - p.slope + 2.0 * d2;
    if denom == 0.0 {
        return None;
    }
    let a = q.a - (q.a - p.a) * (q.slope + d2 - d1) / denom;
    a.is_finite().then_some(a)
}

/// Minimise `f` from `x0`. `f` returns the value and the gradient, or an error for
/// parameters where the model cannot be evaluated (treated like NaN in a line search);
/// `Error::Cancelled` from `f` ends the run at the last accepted point with
/// `Stop::Cancelled`.
pub fn minimize<F>(
    mut f: F,
    x0: &[f64],
    opts: &Options,
    on_iter: &mut dyn FnMut(&IterInfo) -> Control,
) -> Result<Outcome>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    let start = Instant::now();
    let (mut fx, mut g) = f(x0)?;
    if !fx.is_finite() || g.iter().any(|v| !v.is_finite()) {
        return Err(Error::numerical(
            "the NLML or its gradient is not finite at the initial parameters",
        ));
    }
    let mut x = x0.to_vec();
    let mut trace = vec![fx];
    let mut evaluations = 1;
    let mut pairs: VecDeque<(Vec<f64>, Vec<f64>, f64)> = VecDeque::new();
    let info = |it, fx, g: &[f64], x: &[f64]| IterInfo {
        iteration: it,
        nlml: fx,
        grad_norm: dot(g, g).sqrt(),
        elapsed: start.elapsed().as_secs_f64(),
        x: x.to_vec(),
    };
    let mut stop = Stop::Budget;
    let mut iterations = 0;
    match on_iter(&info(0, fx, &g, &x)) {
        Control::Stop => stop = Stop::Cancelled,
        Control::Finish => stop = Stop::EarlyStop,
        Control::Continue => {}
    }
    while stop == Stop::Budget && iterations < opts.max_iters {
        if inf_norm(&g) < opts.grad_tol {
            stop = Stop::Converged;
            break;
        }
        let mut d = direction(&g, &pairs);
        let mut slope = dot(&g, &d);
        if slope.is_nan() || slope >= 0.0 {
            pairs.clear();
            d = g.iter().map(|v| -v).collect();
            slope = -dot(&g, &g);
        }
        let a0 = if pairs.is_empty() {
            // L-BFGS-B's first step: unit length along −g
            (1.0 / dot(&g, &g).sqrt()).min(1.0)
        } else {
            1.0
        };
        let found = {
            let mut ls = LineSearch {
                f: &mut f,
                x: &x,
                d: &d,
                f0: fx,
                slope0: slope,
                evals: 0,
                opts,
                cancelled: false,
            };
            let r = ls.search(a0);
            evaluations += ls.evals;
            if ls.cancelled {
                stop = Stop::Cancelled;
                break;
            }
            r
        };
        let Some(p) = found else {
            if pairs.is_empty() {
                stop = Stop::LineSearchFailed;
                break;
            }
            pairs.clear(); // retry once along the steepest descent
            continue;
        };
        let s: Vec<f64> = d.iter().map(|v| p.a * v).collect();
        let yv: Vec<f64> = p.g.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &yv);
        if sy > 1e-10 * dot(&s, &s).sqrt() * dot(&yv, &yv).sqrt() {
            if pairs.len() == opts.memory {
                pairs.pop_front();
            }
            pairs.push_back((s.clone(), yv, 1.0 / sy));
        }
        for (xi, si) in x.iter_mut().zip(&s) {
            *xi += si;
        }
        let decrease = (fx - p.f) / fx.abs().max(p.f.abs()).max(1.0);
        fx = p.f;
        g = p.g;
        iterations += 1;
        trace.push(fx);
        match on_iter(&info(iterations, fx, &g, &x)) {
            Control::Stop => {
                stop = Stop::Cancelled;
                continue;
            }
            Control::Finish => {
                stop = Stop::EarlyStop;
                continue;
            }
            Control::Continue => {}
        }
        if decrease <= opts.f_tol {
            stop = Stop::Converged;
        }
        if let Some(rows) = opts.plateau_rows
            && stalled_within(&trace, rows, PLATEAU_TOL_PER_ROW)
        {
            stop = Stop::Converged;
        }
    }
    Ok(Outcome {
        x,
        f: fx,
        grad: g,
        iterations,
        evaluations,
        trace,
        stop,
    })
}

/// The L-BFGS two-loop recursion: −H·g.
fn direction(g: &[f64], pairs: &VecDeque<(Vec<f64>, Vec<f64>, f64)>) -> Vec<f64> {
    let mut q: Vec<f64> = g.to_vec();
    let mut alphas = Vec::with_capacity(pairs.len());
    for (s, y, rho) in pairs.iter().rev() {
        let a = rho * dot(s, &q);
        q.iter_mut().zip(y).for_each(|(qi, yi)| *qi -= a * yi);
        alphas.push(a);
    }
    if let Some((s, y, _)) = pairs.back() {
        let gamma = dot(s, y) / dot(y, y);
        q.iter_mut().for_each(|v| *v *= gamma);
    }
    for ((s, y, rho), a) in pairs.iter().zip(alphas.iter().rev()) {
        let b = rho * dot(y, &q);
        q.iter_mut().zip(s).for_each(|(qi, si)| *qi += (a - b) * si);
    }
    q.iter_mut().for_each(|v| *v = -*v);
    q
}
