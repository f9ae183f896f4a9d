//! The same bits on any number of threads: an evaluation's objective and gradient, and a
//! whole default fit, do not depend on how many threads ran them (docs/results/speed.md,
//! "The same result on any number of threads"). A researcher's laptop and a 64-core
//! server must fit the same model from the same command; and the default run's two
//! starts, raced on one thread each, hand the survivor back to all the threads.

use crate::common;
use common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::exec::{CancelToken, Par};
use sgpw::methods;
use sgpw::run_spec::{MethodOptions, RunSpec};
use std::io::Write;
use std::path::Path;
use std::process::Command;

fn on(par: Par) -> Exec {
    Exec::new(par, CancelToken::new())
}

/// The settings compared: this thread alone, and rayon's pool cut 1, 2 and 3 ways (more
/// threads than cores is fine for a test of bits).
const PARS: [Par; 4] = [Par::Seq, Par::Threads(1), Par::Threads(2), Par::Threads(3)];

/// The objective and gradient of `method` with m = `m` at its initial model on `data`,
/// the same bits on every setting of [`PARS`].
fn same_bits(method: &str, m: usize, options: MethodOptions, data: &TrainData) {
    let meth = methods::get(method).expect("method");
    let spec = RunSpec {
        method: method.into(),
        m,
        seed: 5,
        iters: 10,
        standardize: false,
        options,
    };
    let model = init(meth, data, &spec, &mut ChaCha8Rng::seed_from_u64(6)).expect("init");
    let bits = |par: Par| {
        let o = meth.objective(&model, data, &on(par)).expect("objective");
        let mut v = vec![o.nlml.to_bits(), o.jitter.to_bits()];
        v.extend(o.grad.iter().map(|g| g.to_bits()));
        v
    };
    let first = bits(PARS[0]);
    for par in &PARS[1..] {
        assert!(
            bits(*par) == first,
            "{method} (n = {}, m = {m}): {par:?} gives other bits than {:?}",
            data.y.len(),
            PARS[0]
        );
    }
}

/// The exact GP on 1,500 points (faer's parallel Cholesky and inverse gave other last
/// bits on 1, 2 and 3 threads), and on 300 (one panel and a bit).
#[test]
fn the_exact_gp_is_the_same_on_any_number_of_threads() {
    for n in [1500, 300] {
        same_bits("full", 0, MethodOptions::default(), &toy_data(n, 3, 3));
    }
}

/// The low-rank core with an m×m Kuu larger than a panel (its factor and inverse in
/// tasks), and every method of the registry at a small size.
#[test]
fn every_method_is_the_same_on_any_number_of_threads() {
    let data = toy_data(900, 3, 4);
    for method in ["fitc", "vfe"] {
        same_bits(method, 300, MethodOptions::default(), &data);
    }
    let small = toy_data(400, 3, 5);
    for meth in methods::registry() {
        let options = match meth.name() {
            "spgp-dr" | "pca-spgp" => common::options("dims = 2"),
            _ => MethodOptions::default(),
        };
        same_bits(meth.name(), 20, options, &small);
    }
}

/// 3,000 rows of 4 inputs, a smooth function plus noise (a fixed linear congruential
/// stream, so the file is the same on every machine).
fn write_csv(path: &Path) {
    let mut state: u64 = 4242;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut f = std::fs::File::create(path).expect("create");
    writeln!(f, "a,b,c,d,y").expect("write");
    for _ in 0..3000 {
        let x: Vec<f64> = (0..4).map(|_| 2.0 * next()).collect();
        let y = (2.0 * x[0]).sin() + x[1] * x[2] - 0.3 * x[3] + 0.1 * next();
        writeln!(f, "{},{},{},{},{}", x[0], x[1], x[2], x[3], y).expect("write");
    }
}

/// `sgpw fit` with its defaults (two starts: the second from an exact GP fitted on a
/// 641-point subset) writes the same model file on one thread and on two
/// (`RAYON_NUM_THREADS`, as a user would set it); only the seconds it took differ.
#[test]
fn a_default_fit_writes_the_same_model_on_one_thread_and_on_two() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("train.csv");
    write_csv(&csv);
    let fit = |threads: &str| -> String {
        let out = dir.path().join(format!("model{threads}.toml"));
        let o = Command::new(env!("CARGO_BIN_EXE_sgpw"))
            .env("RAYON_NUM_THREADS", threads)
            .args(["fit", "--train", csv.to_str().expect("utf-8")])
            .args(["--method", "fitc", "--m", "40", "--iters", "200"])
            .args(["--save-model", out.to_str().expect("utf-8")])
            .output()
            .expect("runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(&out).expect("model file");
        text.lines()
            .filter(|l| !l.contains("seconds"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (one, two) = (fit("1"), fit("2"));
    assert!(one.contains("[fit]"), "a fit record: {one}");
    assert_eq!(one, two, "the model on one thread, then on two");
}
