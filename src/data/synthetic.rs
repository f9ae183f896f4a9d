//! Synthetic data sets from the papers, for `sgpw gen NAME`. Each generator is seeded
//! (ChaCha8, so the same seed gives the same files on every platform) and returns
//! tables that [`write_csv`] writes with the header `x1[,x2],y`.

use crate::error::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use std::f64::consts::PI;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The generators `generate` knows.
pub const NAMES: &[&str] = &["hetero", "sinc", "spiral", "xsinx3"];

/// A file to write: file name, header, rows.
pub type Table = (String, Vec<String>, Vec<Vec<f64>>);

/// Number of sinc training points and its input range. PSDS-GP §5.1 fits "a noiseless
/// sinc" without giving n or the range, so these are our choice.
const SINC_N: usize = 100;
const SINC_RANGE: (f64, f64) = (-10.0, 10.0);
/// Spiral (PSDS-GP §5.2): 1000 points per generation; the paper does not give the
/// train/test protocol, so the first 800 train and the last 200 test.
const SPIRAL_N: usize = 1000;
const SPIRAL_TRAIN: usize = 800;

/// The train and test tables of generator `name` for `seed`.
pub fn generate(name: &str, seed: u64) -> Result<Vec<Table>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (train, test) = match name {
        "sinc" => sinc_data(&mut rng),
        "spiral" => {
            let mut rows = spiral(seed, SPIRAL_N);
            let test = rows.split_off(SPIRAL_TRAIN);
            (rows, test)
        }
        "xsinx3" => xsinx3_data(&mut rng),
        "hetero" => hetero_data(&mut rng),
        _ => {
            return Err(Error::input(format!(
                "unknown generator '{name}'; the generators are: {}",
                NAMES.join(", ")
            )));
        }
    };
    let header = header(train.first().map_or(1, |r| r.len() - 1));
    Ok(vec![
        (format!("{name}_train.csv"), header.clone(), train),
        (format!("{name}_test.csv"), header, test),
    ])
}

/// sin(x)/x, with its limit 1 at x = 0.
pub fn sinc(x: f64) -> f64 {
    if x == 0.0 { 1.0 } else { x.sin() / x }
}

/// Noiseless sinc (PSDS-GP §5.1): training inputs uniform on the range, test inputs an
/// even grid of 500 points over the same range.
fn sinc_data(rng: &mut ChaCha8Rng) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let (lo, hi) = SINC_RANGE;
    let train = (0..SINC_N)
        .map(|_| rng.random_range(lo..hi))
        .map(|x| vec![x, sinc(x)])
        .collect();
    let test = (0..500)
        .map(|i| lo + (hi - lo) * i as f64 / 499.0)
        .map(|x| vec![x, sinc(x)])
        .collect();
    (train, test)
}

/// PSDS-GP §5.2 (after its ref. [12]): φ uniform on [0, 6π], x1 = ½√φ cos φ + ε,
/// x2 = ½√φ sin φ + ε, y = ln(1 + φ) sin(5φ/2) + ε, ε ~ N(0, 0.1²) independent.
/// Rows are `[x1, x2, y]`; seeds 1..=10 give the paper's "ten generations".
pub fn spiral(seed: u64, n: usize) -> Vec<Vec<f64>> {
    const SIGMA: f64 = 0.1;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let phi = rng.random_range(0.0..=6.0 * PI);
            let mut noise = || SIGMA * rng.sample::<f64, _>(StandardNormal);
            let x1 = 0.5 * phi.sqrt() * phi.cos() + noise();
            let x2 = 0.5 * phi.sqrt() * phi.sin() + noise();
            let y = (1.0 + phi).ln() * (2.5 * phi).sin() + noise();
            vec![x1, x2, y]
        })
        .collect()
}

/// x·sin(x³), the EigenGP paper's non-stationary function.
pub fn xsinx3(x: f64) -> f64 {
    x * (x * x * x).sin()
}

/// EigenGP §6.2: x uniform in (0, 3), 200 training points with noise sd 0.5; 500 test
/// points whose targets are the true function values ("using the true function value as
/// the label, we compute the average NMSE").
fn xsinx3_data(rng: &mut ChaCha8Rng) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let mut train = Vec::with_capacity(200);
    for _ in 0..200 {
        let x = rng.random_range(0.0..3.0);
        let e: f64 = rng.sample(StandardNormal);
        train.push(vec![x, xsinx3(x) + 0.5 * e]);
    }
    let test = (0..500)
        .map(|_| rng.random_range(0.0..3.0))
        .map(|x| vec![x, xsinx3(x)])
        .collect();
    (train, test)
}

/// The heteroscedastic problem's mean function: 4 sin(1.1 x).
pub fn hetero_mean(x: f64) -> f64 {
    4.0 * (1.1 * x).sin()
}

/// Its noise standard deviation: 0.2·e^{x/4}, from 0.2 at x = 0 to 2.4 at x = 10.
pub fn hetero_sd(x: f64) -> f64 {
    0.2 * (x / 4.0).exp()
}

/// Training and test points of the heteroscedastic problem.
pub const HETERO_N: (usize, usize) = (250, 500);

/// A 1-D data set with input-dependent noise in the spirit of Figure 1 of Snelson &
/// Ghahramani (UAI 2006): x uniform on [0, 10], y = 4 sin(1.1 x) + ε with
/// ε ~ N(0, (0.2 e^{x/4})²) — nearly noiseless on the left, the noise sd 12× larger
/// on the right, where the function still varies. 250 training and 500 test points,
/// both noisy (so the test MNLP rewards a model of the noise).
fn hetero_data(rng: &mut ChaCha8Rng) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let mut draw = |n: usize| -> Vec<Vec<f64>> {
        (0..n)
            .map(|_| {
                let x = rng.random_range(0.0..10.0);
                let e: f64 = rng.sample(StandardNormal);
                vec![x, hetero_mean(x) + hetero_sd(x) * e]
            })
            .collect()
    };
    let train = draw(HETERO_N.0);
    let test = draw(HETERO_N.1);
    (train, test)
}

/// `x1, ..., xD, y`.
fn header(dim: usize) -> Vec<String> {
    (1..=dim)
        .map(|d| format!("x{d}"))
        .chain(["y".to_string()])
        .collect()
}

/// Writes a table as CSV; `{}` formatting of f64 is the shortest text that reads back
/// as the same number, so files round-trip exactly. Creates the directory if needed.
pub fn write_csv(path: &Path, header: &[String], rows: &[Vec<f64>]) -> Result<()> {
    let fail = |e: std::io::Error| Error::file(path, format!("cannot write: {e}"));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let mut out = BufWriter::new(std::fs::File::create(path).map_err(fail)?);
    writeln!(out, "{}", header.join(",")).map_err(fail)?;
    for row in rows {
        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        writeln!(out, "{}", cells.join(",")).map_err(fail)?;
    }
    out.flush().map_err(fail)
}
