//! Bounded memory: every method that says it is chunked (`Method::chunked`; the
//! registry is iterated, so a new method is covered or says why not), evaluated a
//! chunk of rows at a time (Kuf built, used and dropped per chunk, two passes), gives
//! the objective, the gradient,
//! the posterior and the predictions of the one-chunk evaluation to 1e-12 relative,
//! with chunk sizes that do not divide n, whatever the memory budget keeps between the
//! two passes (kept or computed again, a chunk gives the same bits). The inter-domain
//! gradients sum terms that
//! cancel: reversing the order of the rows alone moves them by ~1e-12 of the largest
//! entry, so there the bound is four times that reordering floor.

use crate::common;
use common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::methods;
use sgpw::run_spec::{MethodOptions, RunSpec};

fn chunked(rows: usize, m: usize) -> Exec {
    budgeted(rows, m, 0)
}

/// Chunks of `rows` rows with this memory budget for keeping chunks between passes.
fn budgeted(rows: usize, m: usize, memory_budget: usize) -> Exec {
    Exec {
        chunk_entries: rows * m,
        memory_budget,
        ..Default::default()
    }
}

fn largest(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |s, x| s.max(x.abs())).max(1e-300)
}

/// Largest difference relative to the largest entry of `b`.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "lengths");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / largest(b)
}

fn close(what: &str, a: &[f64], b: &[f64]) {
    close_to(what, a, b, 1e-12);
}

fn close_to(what: &str, a: &[f64], b: &[f64], tol: f64) {
    let d = rel_diff(a, b);
    assert!(
        d <= tol,
        "{what}: differs by {d:e} of the largest entry (bound {tol:e})"
    );
}

/// The size and options a method is tested with where it needs other than m = 6 and
/// its defaults (spgp-dr and pca-spgp need `dims`; the others widen the coverage).
fn setup(method: &str) -> (usize, MethodOptions) {
    let o = |text: &str| common::options(text);
    match method {
        "fitc" | "vfe" | "dtc" | "greedy" | "spgp-hs" => (9, MethodOptions::default()),
        "pep" => (9, o("alpha = 0.3")),
        "fifgp" | "smgp" => (7, MethodOptions::default()),
        "tfifgp" => (7, o("approx = \"vfe\"")),
        "spgp-dr" => (9, o("dims = 2\nhetero = true")),
        // (G = D: projected on one component these toy data make a model so ill-
        // conditioned that fitc on the same projected inputs differs by 6e-11 between
        // chunkings too)
        "pca-spgp" => (9, o("dims = 2")),
        _ => (6, MethodOptions::default()),
    }
}

/// Every method of the registry is chunked or says why not: none is left out by
/// omission.
#[test]
fn every_method_is_chunked_or_says_why_not() {
    let (mut chunked, mut not) = (Vec::new(), Vec::new());
    for m in methods::registry() {
        match m.chunked() {
            Ok(()) => chunked.push(m.name()),
            Err(why) => {
                assert!(why.len() > 20, "{}: say why", m.name());
                not.push(m.name());
            }
        }
    }
    assert_eq!(not, ["full", "nystrom", "nystrom-opt"]);
    assert_eq!(chunked.len() + not.len(), methods::registry().len());
}

#[test]
fn chunked_evaluations_equal_the_whole() {
    let data = toy_data(157, 2, 3);
    let test = toy_data(41, 2, 4).x;
    for meth in methods::registry().iter().filter(|m| m.chunked().is_ok()) {
        let method = meth.name();
        let (m, options) = setup(method);
        let spec = RunSpec {
            method: method.into(),
            m,
            seed: 5,
            iters: 10,
            standardize: false,
            options,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let model = init(*meth, &data, &spec, &mut rng).expect("init");
        let whole = meth.objective(&model, &data, &ex()).expect("whole");
        // the rounding floor: the same data with the rows in reverse order
        let mut reversed = data.clone();
        let n = data.y.len();
        reversed.x = nalgebra::DMatrix::from_fn(n, 2, |i, d| data.x[(n - 1 - i, d)]);
        reversed.y = data.y.iter().rev().copied().collect();
        let floor = rel_diff(
            &meth
                .objective(&model, &reversed, &ex())
                .expect("reversed")
                .grad,
            &whole.grad,
        );
        let grad_tol = 1e-12f64.max(4.0 * floor);
        let (post, _) = meth.posterior(&model, &data, &ex()).expect("posterior");
        // spectral features count 2r basis functions
        let width = post.m();
        for rows in [40, 13, 156] {
            let exec = chunked(rows, width);
            let what = format!("{method} chunks of {rows}");
            let part = meth.objective(&model, &data, &exec).expect("chunked");
            close(&format!("{what}: nlml"), &[part.nlml], &[whole.nlml]);
            close_to(
                &format!("{what}: gradient"),
                &part.grad,
                &whole.grad,
                grad_tol,
            );
            assert_eq!(part.jitter, whole.jitter, "{what}: jitter");
            // keeping one more chunk, or all of them, changes no bit
            for budget in [8 * rows * (2 * width + 8), usize::MAX] {
                let kept = meth
                    .objective(&model, &data, &budgeted(rows, width, budget))
                    .expect("kept");
                assert_eq!(kept.nlml, part.nlml, "{what}: nlml, budget {budget}");
                assert_eq!(kept.grad, part.grad, "{what}: gradient, budget {budget}");
            }
            let alone = meth.nlml(&model, &data, &exec).expect("nlml");
            close(&format!("{what}: nlml alone"), &[alone], &[whole.nlml]);
            let (p2, _) = meth.posterior(&model, &data, &exec).expect("posterior");
            close(
                &format!("{what}: weights"),
                &p2.mean_weights,
                &post.mean_weights,
            );
            close(
                &format!("{what}: var matrix"),
                p2.var_matrix.as_slice(),
                post.var_matrix.as_slice(),
            );
            // predictions a chunk at a time
            let mut with_post = model.clone();
            with_post.posterior = Some(post.clone());
            let p = sgpw::train::Predictor::new(with_post, None).expect("predictor");
            let a = p.predict_with(&test, &exec).expect("chunked prediction");
            let b = p.predict_with(&test, &ex()).expect("prediction");
            close(&format!("{what}: mean"), &a.mean, &b.mean);
            close(&format!("{what}: variance"), &a.var_noisy, &b.var_noisy);
        }
    }
}
