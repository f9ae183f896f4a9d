//! Where inducing inputs start (`--inducing-init`, docs/methods.md §0.4): a seeded
//! random subset of the training inputs, seeded k-means centres of them, or greedy
//! selection by conditional variance — the training point the chosen ones explain
//! worst under the starting kernel, found by a pivoted partial Cholesky factorisation
//! of K_ff in O(n·m²) (Burt, Rasmussen & van der Wilk 2020; their RobustGP's
//! `ConditionalVariance`, BoTorch's `GreedyVarianceReduction`).

use super::hyper::random_rows;
use super::kmeans;
use crate::error::Result;
use crate::exec::Par;
use crate::kernel::Kernel;
use crate::model_file::Hyper;
use crate::run_spec::InducingInit;
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// m starting inducing inputs: rows of `x` (subset, variance) or centres (kmeans),
/// under the kernel of the starting hyperparameters `hyper`.
pub fn initial_points(
    x: &DMatrix<f64>,
    m: usize,
    how: InducingInit,
    hyper: &Hyper,
    rng: &mut ChaCha8Rng,
) -> Result<DMatrix<f64>> {
    match how {
        InducingInit::Subset => Ok(random_rows(x, m, rng)),
        InducingInit::Kmeans => kmeans::centres(x, m.min(x.nrows()), rng),
        InducingInit::Variance => {
            let chosen = greedy_variance(x, m, hyper, rng).indices;
            Ok(DMatrix::from_fn(chosen.len(), x.ncols(), |i, d| {
                x[(chosen[i], d)]
            }))
        }
    }
}

/// The column k(X, x_j) of the starting kernel (whichever `--kernel` the run has):
/// the one place this module evaluates k between points.
fn kernel_column(x: &DMatrix<f64>, j: usize, kernel: &dyn Kernel) -> DVector<f64> {
    let row = x.rows(j, 1).into_owned();
    let col = kernel.matrix(x, &row, Par::Seq);
    DVector::from_column_slice(col.as_slice())
}

/// What greedy selection by conditional variance chose.
#[derive(Clone, Debug, PartialEq)]
pub struct VarianceSelection {
    /// Indices of the chosen training points, in the order chosen.
    pub indices: Vec<usize>,
    /// tr(K_ff − Q_ff) after the pivots that reduced it (the Nyström residual).
    pub residual_trace: f64,
}

/// Pivots whose conditional variance is below this fraction of the prior variance
/// add nothing the chosen points do not already explain (duplicates, or m close to
/// the rank of K_ff at these lengthscales); the rest are then drawn at random.
const EXPLAINED: f64 = 1e-10;

/// Greedy selection of m training points by conditional variance: the first at
/// random (every point has the prior variance σ0²: a tie, broken by the seed, as
/// RobustGP's random permutation does), then repeatedly the point whose variance
/// given the chosen ones, d_i = k_ii − Q_ii, is largest (ties: the lowest index).
/// Each pivot j adds a row e = (k(X, x_j) − Cᵀc_j)/√d_j to the partial Cholesky
/// factor C (Q_ff = CᵀC) and d ← d − e², so m pivots cost O(n·m²) time and O(n·m)
/// memory.
pub fn greedy_variance(
    x: &DMatrix<f64>,
    m: usize,
    hyper: &Hyper,
    rng: &mut ChaCha8Rng,
) -> VarianceSelection {
    let n = x.nrows();
    let m = m.min(n);
    let mut indices = Vec::with_capacity(m);
    if m == 0 {
        return VarianceSelection {
            indices,
            residual_trace: 0.0,
        };
    }
    let kernel = hyper.kernel();
    let prior = hyper.signal_variance;
    let mut d = kernel.diag(x);
    let mut taken = vec![false; n];
    // rows of C, each n long
    let mut c: Vec<DVector<f64>> = Vec::with_capacity(m);
    let mut next = rng.random_range(0..n);
    while indices.len() < m {
        let j = next;
        indices.push(j);
        taken[j] = true;
        let dj = d[j];
        if dj > EXPLAINED * prior {
            let mut e = kernel_column(x, j, &*kernel);
            for row in &c {
                e.axpy(-row[j], row, 1.0);
            }
            e /= dj.sqrt();
            for (di, ei) in d.iter_mut().zip(e.iter()) {
                *di = (*di - ei * ei).max(0.0);
            }
            d[j] = 0.0;
            c.push(e);
        }
        if indices.len() == m {
            break;
        }
        let (best, bd) = d.iter().enumerate().filter(|(i, _)| !taken[*i]).fold(
            (usize::MAX, f64::NEG_INFINITY),
            |acc, (i, &v)| {
                if v > acc.1 { (i, v) } else { acc }
            },
        );
        next = if bd > EXPLAINED * prior {
            best
        } else {
            // everything left is explained: the rest at random among the unchosen
            let free: Vec<usize> = (0..n).filter(|i| !taken[*i]).collect();
            free[rng.random_range(0..free.len())]
        };
    }
    VarianceSelection {
        indices,
        residual_trace: d.iter().sum(),
    }
}
