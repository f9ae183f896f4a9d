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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn points(n: usize, dim: usize, seed: u64) -> DMatrix<f64> {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        DMatrix::from_fn(n, dim, |_, _| r.random_range(-2.0..2.0))
    }

    fn hyper(dim: usize) -> Hyper {
        Hyper::se(1.7, (0..dim).map(|d| 0.6 + 0.3 * d as f64).collect(), 0.1)
    }

    /// diag(K − K_S K_SS⁻¹ K_S) by dense algebra.
    fn dense_residual(x: &DMatrix<f64>, s: &[usize], h: &Hyper) -> DVector<f64> {
        let k = h.kernel().gram(x, Par::Seq);
        let n = x.nrows();
        if s.is_empty() {
            return k.diagonal();
        }
        let kss = DMatrix::from_fn(s.len(), s.len(), |a, b| k[(s[a], s[b])]);
        let ksf = DMatrix::from_fn(s.len(), n, |a, i| k[(s[a], i)]);
        let sol = kss.cholesky().expect("K_SS").solve(&ksf);
        DVector::from_fn(n, |i, _| k[(i, i)] - ksf.column(i).dot(&sol.column(i)))
    }

    /// Under every kernel, the pivots are the dense argmax of the conditional variance
    /// at every step, and the residual trace is the dense one.
    #[test]
    fn matches_dense_greedy_reference() {
        use clap::ValueEnum;
        let x = points(60, 3, 4);
        for &kind in crate::kernel::KernelKind::value_variants() {
            let h = hyper(3).with_kernel(kind);
            let sel = greedy_variance(&x, 12, &h, &mut ChaCha8Rng::seed_from_u64(9));
            assert_eq!(sel.indices.len(), 12, "{kind}");
            for t in 1..sel.indices.len() {
                let r = dense_residual(&x, &sel.indices[..t], &h);
                let (want, _) = r
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !sel.indices[..t].contains(i))
                    .fold(
                        (0, f64::NEG_INFINITY),
                        |a, (i, &v)| if v > a.1 { (i, v) } else { a },
                    );
                assert_eq!(sel.indices[t], want, "{kind}: pivot {t}");
            }
            let r = dense_residual(&x, &sel.indices, &h);
            let trace: f64 = r.iter().sum();
            assert!(
                (sel.residual_trace - trace).abs() <= 1e-9 * h.signal_variance * 60.0,
                "{kind}: {} vs {trace}",
                sel.residual_trace
            );
            // the greedy choice explains more than a random subset of the same size
            let random: Vec<usize> = (0..12).map(|i| i * 5).collect();
            assert!(
                trace < dense_residual(&x, &random, &h).iter().sum::<f64>(),
                "{kind}"
            );
        }
    }

    /// One seed, one selection; duplicates and m = n still give m distinct rows.
    #[test]
    fn seeded_and_distinct() {
        let x = points(40, 2, 1);
        let h = hyper(2);
        let run = |seed| greedy_variance(&x, 10, &h, &mut ChaCha8Rng::seed_from_u64(seed));
        assert_eq!(run(3), run(3));
        assert_ne!(run(3).indices[0], run(4).indices[0]);
        let dup = DMatrix::from_fn(20, 2, |i, d| x[(i % 4, d)]);
        let all = greedy_variance(&dup, 20, &h, &mut ChaCha8Rng::seed_from_u64(2));
        let mut idx = all.indices.clone();
        idx.sort_unstable();
        idx.dedup();
        assert_eq!(idx.len(), 20);
        assert!(all.residual_trace.abs() < 1e-9);
    }

    /// subset is today's draw (`random_rows`, bit for bit), kmeans the seeded
    /// centres; each is reproducible from its seed.
    #[test]
    fn subset_and_kmeans_are_seeded() {
        let x = points(50, 2, 7);
        let h = hyper(2);
        let get = |how, seed| {
            initial_points(&x, 8, how, &h, &mut ChaCha8Rng::seed_from_u64(seed)).expect("init")
        };
        assert_eq!(
            get(InducingInit::Subset, 5),
            random_rows(&x, 8, &mut ChaCha8Rng::seed_from_u64(5))
        );
        for how in [
            InducingInit::Subset,
            InducingInit::Kmeans,
            InducingInit::Variance,
        ] {
            assert_eq!(get(how, 5), get(how, 5));
            assert_ne!(get(how, 5), get(how, 6));
            assert_eq!(get(how, 5).shape(), (8, 2));
        }
    }
}
