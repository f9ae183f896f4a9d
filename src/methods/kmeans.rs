//! Seeded k-means on the training inputs: the EigenGP paper's basis-point
//! initialisation (after Zhang, Tsang & Kwok 2008), used by the eigengp and Nyström
//! methods. The clustering itself is `linfa-clustering`'s k-means (k-means++ start,
//! Lloyd iterations; pure Rust, no BLAS), seeded from the run's own generator so a
//! seed gives the same centres on every platform.

use crate::error::{Error, Result};
use linfa::DatasetBase;
use linfa::traits::Fit;
use linfa_clustering::KMeans;
use nalgebra::DMatrix;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_xoshiro::Xoshiro256Plus;
use rand_xoshiro::rand_core::SeedableRng;

/// Independent k-means++ starts; the one with the lowest inertia is kept.
const RESTARTS: usize = 3;
/// Lloyd iterations per start.
const MAX_ITERS: u64 = 300;

/// `k` cluster centres of the rows of `x` (k×D). Draws one u64 from `rng` for the
/// clustering's own generator.
pub fn centres(x: &DMatrix<f64>, k: usize, rng: &mut ChaCha8Rng) -> Result<DMatrix<f64>> {
    let (n, d) = x.shape();
    if k == 0 || k > n {
        return Err(Error::input(format!(
            "k-means needs 1 ≤ k ≤ n, not k = {k} with n = {n}"
        )));
    }
    let seed: u64 = rng.random();
    let records = ndarray::Array2::from_shape_fn((n, d), |(i, j)| x[(i, j)]);
    let data = DatasetBase::from(records);
    let model = KMeans::params_with_rng(k, Xoshiro256Plus::seed_from_u64(seed))
        .n_runs(RESTARTS)
        .max_n_iterations(MAX_ITERS)
        .tolerance(1e-10)
        .fit(&data)
        .map_err(|e| Error::numerical(format!("k-means of the training inputs failed: {e}")))?;
    let c = model.centroids();
    let out = DMatrix::from_fn(k, d, |i, j| c[(i, j)]);
    if out.iter().any(|v| !v.is_finite()) {
        return Err(Error::numerical(
            "k-means of the training inputs gave a centre that is not finite",
        ));
    }
    Ok(out)
}
