use nalgebra::DMatrix;
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use sgpw::methods::kmeans::*;

/// Three well separated clumps: the centres are their means, whatever the seed,
/// and the same seed gives the same centres.
#[test]
fn finds_separated_clusters_and_is_seeded() {
    let x = DMatrix::from_fn(90, 2, |i, j| {
        let c = [(-5.0, 0.0), (0.0, 5.0), (5.0, 0.0)][i % 3];
        let jitter = ((i * 7 + j * 3) % 11) as f64 * 0.01 - 0.05;
        if j == 0 { c.0 + jitter } else { c.1 + jitter }
    });
    let run = |seed| centres(&x, 3, &mut ChaCha8Rng::seed_from_u64(seed)).expect("k-means");
    let a = run(1);
    let mut xs: Vec<(f64, f64)> = a.row_iter().map(|r| (r[0], r[1])).collect();
    xs.sort_by(|p, q| p.0.total_cmp(&q.0));
    for (got, want) in xs.iter().zip([(-5.0, 0.0), (0.0, 5.0), (5.0, 0.0)]) {
        assert!((got.0 - want.0).abs() < 0.05 && (got.1 - want.1).abs() < 0.05);
    }
    assert_eq!(a, run(1));
    assert!(centres(&x, 0, &mut ChaCha8Rng::seed_from_u64(1)).is_err());
    assert!(centres(&x, 91, &mut ChaCha8Rng::seed_from_u64(1)).is_err());
}
