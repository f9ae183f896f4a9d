//! Gauss–Hermite quadrature for expectations under a Gaussian, `E[g(f)]` with
//! `f ~ N(μ, v)`: `Σ_i w_i g(μ + √v z_i)` with the nodes `z_i = √2 x_i` and weights
//! `w_i = ω_i/√π` of the physicists' rule `∫ e^{−x²} h(x) dx ≈ Σ ω_i h(x_i)` — the rule
//! numpy's `hermgauss` gives and GPflow's `NDiagGHQuadrature` uses, so the same number of
//! points gives the same sums.
//!
//! The nodes are found as numpy finds them: a first guess from the eigenvalues of the
//! Jacobi matrix (Golub–Welsch), then Newton steps on the normalised Hermite
//! polynomial, whose derivative also gives the weight. Newton on the polynomial is
//! accurate to the last bits where the eigenvectors alone would give the small weights
//! only to an absolute 1e-16.

use nalgebra::{DMatrix, SymmetricEigen};
use std::sync::OnceLock;

/// GPflow's and GPyTorch's default number of points.
pub const DEFAULT_POINTS: usize = 20;

/// The most points a rule may have: beyond about 150 the outermost weights underflow.
pub const MAX_POINTS: usize = 150;

/// A Gauss–Hermite rule for the standard normal: `E[g(z)] ≈ Σ weights_i g(nodes_i)`,
/// z ~ N(0, 1); the nodes ascend and are symmetric about 0.
#[derive(Clone, Debug, PartialEq)]
pub struct GaussHermite {
    pub nodes: Vec<f64>,
    pub weights: Vec<f64>,
}

impl GaussHermite {
    /// The rule with `points` nodes (1 ..= [`MAX_POINTS`]); exact for polynomials of
    /// degree up to 2·points − 1.
    pub fn new(points: usize) -> Result<GaussHermite, String> {
        if !(1..=MAX_POINTS).contains(&points) {
            return Err(format!(
                "the number of quadrature points must be between 1 and {MAX_POINTS}, not {points}"
            ));
        }
        // found once per process for each size (an eigenproblem and Newton steps: 5 % of
        // a Student-t svgp evaluation when found for every evaluation)
        static RULES: [OnceLock<GaussHermite>; MAX_POINTS + 1] =
            [const { OnceLock::new() }; MAX_POINTS + 1];
        Ok(RULES[points]
            .get_or_init(|| {
                let (x, omega) = physicists_rule(points);
                let sqrt_pi = std::f64::consts::PI.sqrt();
                GaussHermite {
                    nodes: x.iter().map(|v| std::f64::consts::SQRT_2 * v).collect(),
                    weights: omega.iter().map(|w| w / sqrt_pi).collect(),
                }
            })
            .clone())
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// `E[g(f)]` for f ~ N(mean, var).
    pub fn expect(&self, mean: f64, var: f64, g: impl Fn(f64) -> f64) -> f64 {
        let s = var.max(0.0).sqrt();
        self.nodes
            .iter()
            .zip(&self.weights)
            .map(|(z, w)| w * g(mean + s * z))
            .sum()
    }

    /// `log E[exp(h(f))]` for f ~ N(mean, var), summed in log space (no underflow when
    /// every h is very negative): the log predictive density of one observation.
    pub fn log_expect_exp(&self, mean: f64, var: f64, h: impl Fn(f64) -> f64) -> f64 {
        let s = var.max(0.0).sqrt();
        let terms: Vec<f64> = self
            .nodes
            .iter()
            .zip(&self.weights)
            .map(|(z, w)| w.ln() + h(mean + s * z))
            .collect();
        let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !top.is_finite() {
            return top;
        }
        top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln()
    }
}

/// Nodes and weights of the physicists' rule (weight e^{−x²}).
pub fn physicists_rule(n: usize) -> (Vec<f64>, Vec<f64>) {
    // Jacobi matrix of the physicists' Hermite polynomials: 0 on the diagonal,
    // √(k/2) off it; its eigenvalues are the nodes
    let mut jacobi = DMatrix::<f64>::zeros(n, n);
    for k in 1..n {
        let b = (k as f64 / 2.0).sqrt();
        jacobi[(k, k - 1)] = b;
        jacobi[(k - 1, k)] = b;
    }
    let mut x: Vec<f64> = SymmetricEigen::new(jacobi)
        .eigenvalues
        .iter()
        .copied()
        .collect();
    x.sort_by(f64::total_cmp);
    let mut w = vec![0.0; n];
    for (xi, wi) in x.iter_mut().zip(w.iter_mut()) {
        for _ in 0..8 {
            let (p, dp) = normalised_hermite(n, *xi);
            let step = p / dp;
            *xi -= step;
            if step.abs() <= 1e-15 * xi.abs().max(1.0) {
                break;
            }
        }
        let (_, dp) = normalised_hermite(n, *xi);
        *wi = 2.0 / (dp * dp);
    }
    // symmetric about 0 exactly: average each pair, the middle node (odd n) is 0
    for i in 0..n / 2 {
        let j = n - 1 - i;
        let a = 0.5 * (x[j] - x[i]);
        let b = 0.5 * (w[i] + w[j]);
        x[i] = -a;
        x[j] = a;
        w[i] = b;
        w[j] = b;
    }
    if n % 2 == 1 {
        x[n / 2] = 0.0;
    }
    (x, w)
}

/// The orthonormal Hermite polynomial h̃_n(x) (∫ e^{−x²} h̃_n² dx = 1) and its
/// derivative, by the three-term recurrence (no overflow at large n, unlike H_n).
fn normalised_hermite(n: usize, x: f64) -> (f64, f64) {
    let mut prev = 0.0;
    let mut p = std::f64::consts::PI.powf(-0.25);
    for j in 1..=n {
        let jf = j as f64;
        let next = x * (2.0 / jf).sqrt() * p - ((jf - 1.0) / jf).sqrt() * prev;
        prev = p;
        p = next;
    }
    // h̃_n' = √(2n) h̃_{n−1}
    (p, (2.0 * n as f64).sqrt() * prev)
}
