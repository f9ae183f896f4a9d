//! `cargo bench --bench greedy`: greedy basis selection on synthetic data (n = 10000,
//! D = 8, unit-variance inputs like kin40k's), one thread.
//!
//! 1. Time per added basis vector at d = 100, 200, 400, 800: a kernel row, the new rows
//!    of chol(K_I) and chol(A) and the new columns of Q and P (three passes over n×d
//!    matrices) — O(n·d), so the time divided by n·d must stay flat.
//! 2. What each rule adds per step at d = 400, as multiples of that basic step: INFO's
//!    O(n) scan, κ = 59 fresh kernel rows, post-backfitting scores of a cache of c = 59
//!    and c = d rows, SB's 59 candidates (O(n·d) each, three blocked products).
//! 3. The cache of discarded kernel rows: whole selections (d_max = 200) of KAPPA,
//!    DMAX and SB without it and with 2000 rows, alternating, medians of 3.

use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::cli::bench::synthetic;
use sgpw::data::TrainData;
use sgpw::exec::{Exec, Par};
use sgpw::methods::greedy::{self, Config, Incremental};
use sgpw::model_file::{Hyper, ModelFile};
use sgpw::optim::Control;
use sgpw::run_spec::Select;
use std::hint::black_box;
use std::time::Instant;

const N: usize = 10000;
const D: usize = 8;
const SEQ: Par = Par::Seq;

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn model() -> ModelFile {
    ModelFile::new("greedy", Hyper::se(1.0, vec![1.5; D], 0.01))
}

fn kernel_column(data: &TrainData, m: &ModelFile, j: usize) -> Vec<f64> {
    let xj = data.x.rows(j, 1).into_owned();
    m.kernel().matrix(&data.x, &xj, SEQ).as_slice().to_vec()
}

/// Add point j: kernel row, new rows of the factors, new column of P.
fn add(inc: &mut Incremental, data: &TrainData, m: &ModelFile, j: usize) {
    let r = kernel_column(data, m, j);
    let col = inc.column(j, &r, SEQ).expect("independent");
    inc.add(col);
}

fn per_step(data: &TrainData) {
    let m = model();
    let checkpoints = [100, 200, 400, 800];
    let batch = 40;
    let cap = 800 + batch;
    let mut inc = Incremental::new(
        &data.y,
        m.hyper.signal_variance,
        m.collapsed_noise().expect("a Gaussian model"),
        1e-8,
        cap,
    );
    // points in a fixed pseudo-random order
    let mut next = (0..N).map(|k| (k * 7919 + 13) % N);
    println!(
        "1. time per added basis vector, n = {N}, D = {D}, one thread (median of {batch} steps):"
    );
    for &d in &checkpoints {
        while inc.d() < d {
            add(&mut inc, data, &m, next.next().expect("points"));
        }
        let mut kernel = Vec::new();
        let mut total = Vec::new();
        for _ in 0..batch {
            let j = next.next().expect("points");
            let t = Instant::now();
            let r = black_box(kernel_column(data, &m, j));
            kernel.push(t.elapsed().as_secs_f64());
            let col = inc.column(j, &r, SEQ).expect("independent");
            inc.add(col);
            total.push(t.elapsed().as_secs_f64());
        }
        let (t, k) = (median(total), median(kernel));
        println!(
            "   d = {d:4}: {:7.3} ms per step ({:5.3} ms of it the kernel row), {:.3} ns per n·d",
            t * 1e3,
            k * 1e3,
            t * 1e9 / (N * d) as f64
        );
    }
}

fn rule_costs(data: &TrainData) {
    let m = model();
    let d = 400;
    let reps = 7;
    let grow = || {
        let mut inc = Incremental::new(
            &data.y,
            m.hyper.signal_variance,
            m.collapsed_noise().expect("a Gaussian model"),
            1e-8,
            d + reps,
        );
        for k in 0..d {
            add(&mut inc, data, &m, (k * 7919 + 13) % N);
        }
        inc
    };
    let time = |f: &mut dyn FnMut()| {
        let mut t = Vec::new();
        for _ in 0..reps {
            let s = Instant::now();
            f();
            t.push(s.elapsed().as_secs_f64());
        }
        median(t)
    };
    // the basic step: kernel row, new rows of the factors, new column of P (and Q)
    let step = |inc: &mut Incremental, free: &[usize]| {
        let mut t = Vec::new();
        for k in 0..reps {
            let s = Instant::now();
            add(inc, data, &m, free[k * 13]);
            t.push(s.elapsed().as_secs_f64());
        }
        median(t)
    };
    let mut plain = grow();
    let free: Vec<usize> = (0..N).filter(|&i| !plain.contains(i)).collect();
    let rows = |c: usize| -> (Vec<usize>, DMatrix<f64>) {
        let cands: Vec<usize> = free
            .iter()
            .copied()
            .step_by(free.len() / c)
            .take(c)
            .collect();
        let xc = DMatrix::from_fn(c, D, |a, k| data.x[(cands[a], k)]);
        (cands, m.kernel().matrix(&data.x, &xc, SEQ))
    };
    let fresh = time(&mut || {
        black_box(rows(greedy::KAPPA));
    });
    let (c59, r59) = rows(greedy::KAPPA);
    let rr59: Vec<f64> = r59.column_iter().map(|c| c.norm_squared()).collect();
    let (cd, rd) = rows(d);
    let rrd: Vec<f64> = rd.column_iter().map(|c| c.norm_squared()).collect();
    let pb59 = time(&mut || {
        black_box(plain.backfit_scores(&c59, &r59, &rr59, SEQ));
    });
    let pbd = time(&mut || {
        black_box(plain.backfit_scores(&cd, &rd, &rrd, SEQ));
    });
    let sb = time(&mut || {
        black_box(plain.sb_gains(&c59, &r59, SEQ));
    });
    let info = time(&mut || {
        let best = free
            .iter()
            .map(|&i| plain.info_score(i))
            .fold(f64::NEG_INFINITY, f64::max);
        black_box(best);
    });
    let basic = step(&mut plain, &free);
    println!(
        "2. per step at d = {d} (n = {N}), as multiples of the basic step ({:.2} ms: kernel \
         row, new rows of chol(K_I) and chol(A), new columns of Q and P):",
        basic * 1e3
    );
    for (what, t) in [
        ("INFO: scan all n candidates", info),
        ("59 fresh kernel rows (KAPPA, DMAX, SB)", fresh),
        ("post-backfitting scores, c = 59", pb59),
        ("post-backfitting scores, c = d = 400", pbd),
        ("SB gains of 59 candidates (kernel rows aside)", sb),
    ] {
        println!(
            "   {what:46}: {:8.3} ms = {:6.2} × basic",
            t * 1e3,
            t / basic
        );
    }
}

fn discard_cache(data: &TrainData) {
    let m = model();
    let exec = Exec::sequential();
    let d_max = 200;
    println!(
        "3. whole selections, d_max = {d_max}, n = {N}: without / with a cache of 2000 discarded kernel rows \
         (alternating, median of 3)"
    );
    for select in [Select::Kappa, Select::Dmax, Select::Sb] {
        let mut times = [Vec::new(), Vec::new()];
        let mut counts = [(0, 0); 2];
        for _ in 0..3 {
            for (k, capacity) in [0usize, 2000].into_iter().enumerate() {
                let cfg = Config {
                    discard_cache: capacity,
                    ..Config::paper(select, d_max)
                };
                let mut rng = ChaCha8Rng::seed_from_u64(1);
                let s = greedy::select(
                    data,
                    &m,
                    &cfg,
                    &[],
                    &mut rng,
                    &mut |_, _| Ok(Control::Continue),
                    &exec,
                )
                .expect("selects");
                times[k].push(s.seconds);
                counts[k] = (s.kernel_rows, s.discard_hits);
            }
        }
        let (a, b) = (median(times[0].clone()), median(times[1].clone()));
        println!(
            "   {:5}: {:7.3} s ({} rows computed) / {:7.3} s ({} computed, {} reused): ratio {:.3}",
            select.name(),
            a,
            counts[0].0,
            b,
            counts[1].0,
            counts[1].1,
            b / a
        );
    }
}

fn main() {
    let data = synthetic(N, D, 1);
    per_step(&data);
    rule_costs(&data);
    discard_cache(&data);
}
