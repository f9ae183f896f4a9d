//! `cargo bench --bench online`: (1) the online PSDS update time per sample at
//! r = 100, 200, 400 (it must grow as r²); (2) the batch NLML + adjoints of the
//! spectral model at n = 10000, r = 100 through the likelihood core's diagonal-Kuu
//! path (what psds and ssgp use), its dense-Kuu path, and the §4 closed form, to show
//! what the fast path saves and that it costs nothing against the closed form.

use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sgpw::collapsed::{self, Approx, Kuu, LowRank};
use sgpw::exec::{Exec, Par};
use sgpw::linalg::{self, Jitter};
use sgpw::methods::online::OnlinePsds;
use sgpw::methods::spectrum::{features, psds_points};
use std::hint::black_box;
use std::time::Instant;

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn online(r: usize, d: usize, samples: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let x: DMatrix<f64> = DMatrix::from_fn(samples, d, |_, _| rng.random_range(-1.7..1.7));
    let y: Vec<f64> = (0..samples).map(|i| x[(i, 0)].sin()).collect();
    let w = psds_points(r, d) / 0.8;
    let mut times = Vec::new();
    for _ in 0..5 {
        let mut model = OnlinePsds::new(w.clone(), 1.0, 0.01).expect("model");
        let mut row = vec![0.0; d];
        let t = Instant::now();
        for i in 0..samples {
            for (k, v) in row.iter_mut().enumerate() {
                *v = x[(i, k)];
            }
            model.add(&row, y[i]).expect("adds");
        }
        times.push(t.elapsed().as_secs_f64() / samples as f64);
        black_box(model.nlml());
    }
    let per = median(times);
    println!(
        "online r = {r:4} (2r = {:4}), D = {d}: {:8.2} µs per sample, {:.3} ns per (2r)²",
        2 * r,
        per * 1e6,
        per * 1e9 / (4 * r * r) as f64
    );
}

/// ∂NLML/∂Φᵀ and the NLML by the closed form: A = ΦᵀΦ + cI, α = A⁻¹Φᵀy,
/// ∂/∂Φᵀ = A⁻¹Φᵀ − α(y − Φα)ᵀ/σ².
fn closed_form(phi: &DMatrix<f64>, y: &[f64], c: f64, s2: f64) -> (f64, DMatrix<f64>) {
    let m = phi.nrows();
    let par = Par::Threads(0);
    let mut a = DMatrix::from_diagonal_element(m, m, c);
    linalg::gemm(&mut a, true, phi, false, phi, true, 1.0, par);
    let l = linalg::cholesky_with(&a, 0.0, par).expect("spd");
    let yv = DVector::from_column_slice(y);
    let mut alpha = DMatrix::from_column_slice(m, 1, (phi * &yv).as_slice());
    linalg::solve_lower(&l, &mut alpha, par);
    let quad = alpha.norm_squared();
    linalg::solve_lower_transpose(&l, &mut alpha, par);
    let resid = &yv - phi.tr_mul(&alpha);
    let nlml = (yv.norm_squared() - quad) / (2.0 * s2) + linalg::half_logdet(&l);
    let mut d = phi.clone();
    linalg::solve_lower(&l, &mut d, par);
    linalg::solve_lower_transpose(&l, &mut d, par);
    linalg::gemm(
        &mut d,
        true,
        &alpha,
        false,
        &DMatrix::from_column_slice(1, y.len(), resid.as_slice()),
        false,
        -1.0 / s2,
        par,
    );
    (nlml, d)
}

fn batch(n: usize, d: usize, r: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let x: DMatrix<f64> = DMatrix::from_fn(n, d, |_, _| rng.random_range(-1.7..1.7));
    let y: Vec<f64> = (0..n)
        .map(|i| x[(i, 0)].sin() + 0.1 * rng.random_range(-1.0..1.0))
        .collect();
    let w = psds_points(r, d) / 1.5;
    let (sf2, s2) = (1.0, 0.05);
    let time = |f: &mut dyn FnMut()| {
        f();
        median(
            (0..7)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                })
                .collect(),
        )
    };
    let exec = Exec::default();
    let t_feat = time(&mut || {
        black_box(features(&w, &x, exec.par));
    });
    let phi = features(&w, &x, exec.par);
    let diag = vec![r as f64 / sf2; 2 * r];
    let dense = DMatrix::from_diagonal_element(2 * r, 2 * r, r as f64 / sf2);
    let lr = |kuu| LowRank {
        kuf: &phi,
        kuu,
        approx: Approx::Dtc,
        kdiag: &[],
        noise: s2,
        jitter: Jitter::Fixed(0.0),
    };
    let (fast, slow) = (lr(Kuu::Diagonal(&diag)), lr(Kuu::Dense(&dense)));
    let t_fast = time(&mut || {
        black_box(collapsed::nlml_and_adjoints(&fast, &y, &exec).expect("core"));
    });
    let t_dense = time(&mut || {
        black_box(collapsed::nlml_and_adjoints(&slow, &y, &exec).expect("core"));
    });
    let c = r as f64 * s2 / sf2;
    let t_closed = time(&mut || {
        black_box(closed_form(&phi, &y, c, s2));
    });
    // the three agree on ∂/∂Φᵀ (the NLMLs differ only by constants here)
    let core = collapsed::nlml_and_adjoints(&fast, &y, &exec).expect("core");
    let (_, d_closed) = closed_form(&phi, &y, c, s2);
    let err = (&core.d_kuf - &d_closed).abs().max() / d_closed.abs().max();
    println!(
        "batch n = {n}, D = {d}, r = {r}: features {:.1} ms; NLML+adjoints: core diagonal Kuu \
         {:.1} ms, core dense Kuu {:.1} ms, closed form {:.1} ms (∂/∂Φ agree to {err:.1e})",
        t_feat * 1e3,
        t_fast * 1e3,
        t_dense * 1e3,
        t_closed * 1e3
    );
}

fn main() {
    println!("threads: {}", rayon::current_num_threads());
    for r in [100, 200, 400] {
        online(r, 8, if r >= 400 { 2000 } else { 5000 });
    }
    batch(10000, 8, 100);
}
