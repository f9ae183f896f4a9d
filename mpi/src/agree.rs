//! What every process agrees on before a distributed fit: its stripe of the rows read
//! (a failure on one stops all), the inputs constant over every row dropped, the
//! standardisation (computed on the root from every row where they are few, else
//! merged from each process's moments), and the rows the root starts from.

use super::transport::MpiShare;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::data::load::{Stripe, load_stripe};
use sgpw::data::{LoadSpec, TrainData};
use sgpw::error::{Error, Result};
use sgpw::model_file::Standardize;
use sgpw::train;

/// At most this many training rows are gathered on the root for the start (the
/// inducing inputs, k-means, lengthscale starts): all of them when there are no more.
pub const START_ROWS: usize = 100_000;

/// One process's rows in model units, and what every process agreed on.
pub(super) struct Shared {
    pub(super) data: TrainData,
    pub(super) feature_names: Vec<String>,
    pub(super) target_name: String,
    pub(super) notes: Vec<String>,
    pub(super) n_total: usize,
    pub(super) target_mean: f64,
    pub(super) standardize: Option<Standardize>,
    /// Σ y² in model units over every row (the noise floor's scale).
    pub(super) sum_y2: f64,
}

/// Read this process's stripe of the training rows; a failure to read on one process
/// is an error on every process (no one waits in a collective for it).
pub(super) fn read_stripe(share: &MpiShare, load: &LoadSpec) -> Result<Stripe> {
    let stripe = load_stripe(load, share.rank, share.size, &mut |mine| share.counts(mine));
    let mut failed = [if stripe.is_err() { 1.0 } else { 0.0 }];
    share.sum(&mut failed);
    match stripe {
        Err(e) => Err(e),
        Ok(_) if failed[0] > 0.0 => Err(Error::data(
            &load.train,
            format!(
                "{} of the {} processes could not read their rows (their errors are \
                 printed above)",
                failed[0], share.size
            ),
        )),
        Ok(s) => Ok(s),
    }
}

/// Read this process's stripe and agree on the data with the others; the root also
/// gets the rows it starts from ([`gather_start_rows`]), the others None.
pub(super) fn read_and_agree(
    share: &MpiShare,
    load: &LoadSpec,
    standardize: bool,
    seed: u64,
) -> Result<(Shared, Option<TrainData>)> {
    let stripe = read_stripe(share, load)?;
    let Stripe {
        x,
        y,
        mut feature_names,
        target_name,
        mut notes,
    } = stripe;
    let d = x.ncols();
    // inputs constant over every row are dropped, as a single process drops them
    let mut low: Vec<f64> = (0..d).map(|j| x.column(j).min()).collect();
    let mut high: Vec<f64> = (0..d).map(|j| x.column(j).max()).collect();
    share.min_max(&mut low, &mut high);
    let kept: Vec<usize> = (0..d).filter(|&j| low[j] < high[j]).collect();
    if kept.is_empty() {
        return Err(Error::data(
            &load.train,
            "every feature column is constant: there is nothing to learn from",
        ));
    }
    for j in (0..d).filter(|j| !kept.contains(j)) {
        notes.push(format!(
            "feature '{}' is constant (every row {}): dropped",
            feature_names[j], low[j]
        ));
    }
    let x = DMatrix::from_fn(x.nrows(), kept.len(), |i, k| x[(i, kept[k])]);
    feature_names = kept.iter().map(|&j| feature_names[j].clone()).collect();
    let mut n = [y.len() as f64];
    share.sum(&mut n);
    let n_total = n[0] as usize;
    // a distributed fit takes no exposure (refused before any work)
    let raw = TrainData {
        x,
        y,
        log_exposure: None,
    };
    let gathered = gather_start_rows(share, &raw, n_total, seed);
    // the standardisation: with every row on the root, as one process computes it
    // (the same bits); else merged from every process's moments. The root's is broadcast.
    let stats = match &gathered {
        Some(rows) if n_total <= START_ROWS => Some(root_stats(rows, standardize)),
        _ => None,
    };
    let stats = if n_total <= START_ROWS {
        stats
    } else {
        Some(merged_stats(share, &raw, n_total, standardize))
    };
    let packed = share.broadcast_values(stats.map(|s| s.pack()).unwrap_or_default());
    let stats = Stats::unpack(&packed, raw.x.ncols());
    if !(stats.target_sd > 0.0 && stats.target_sd.is_finite()) {
        return Err(Error::data(
            &load.train,
            format!("the target column '{target_name}' is constant: there is nothing to fit"),
        ));
    }
    let data = stats.apply(&raw);
    let sample = gathered.map(|rows| stats.apply(&rows));
    Ok((
        Shared {
            data,
            feature_names,
            target_name,
            notes,
            n_total,
            target_mean: stats.mean,
            standardize: stats.standardize,
            sum_y2: stats.sum_y2,
        },
        sample,
    ))
}

/// The transformation into model units every process applies.
struct Stats {
    mean: f64,
    /// Σ y² in model units over every row.
    sum_y2: f64,
    target_sd: f64,
    standardize: Option<Standardize>,
}

impl Stats {
    fn pack(&self) -> Vec<f64> {
        let mut v = vec![self.mean, self.sum_y2, self.target_sd];
        if let Some(s) = &self.standardize {
            v.extend(&s.input_center);
            v.extend(&s.input_scale);
            v.push(s.target_scale);
        }
        v
    }

    fn unpack(v: &[f64], d: usize) -> Stats {
        let standardize = (v.len() == 3 + 2 * d + 1).then(|| Standardize {
            input_center: v[3..3 + d].to_vec(),
            input_scale: v[3 + d..3 + 2 * d].to_vec(),
            target_scale: v[3 + 2 * d],
        });
        Stats {
            mean: v[0],
            sum_y2: v[1],
            target_sd: v[2],
            standardize,
        }
    }

    /// Rows in model units, as `train::prepare` computes them.
    fn apply(&self, raw: &TrainData) -> TrainData {
        match &self.standardize {
            Some(s) => TrainData {
                x: DMatrix::from_fn(raw.x.nrows(), raw.x.ncols(), |i, j| {
                    (raw.x[(i, j)] - s.input_center[j]) / s.input_scale[j]
                }),
                y: raw
                    .y
                    .iter()
                    .map(|v| (v - self.mean) / s.target_scale)
                    .collect(),
                log_exposure: None,
            },
            None => TrainData {
                x: raw.x.clone(),
                y: raw.y.iter().map(|v| v - self.mean).collect(),
                log_exposure: None,
            },
        }
    }
}

/// The statistics of every row, on the root that holds them all: `train::prepare`'s.
fn root_stats(rows: &TrainData, standardize: bool) -> Stats {
    let data = sgpw::data::Dataset {
        feature_names: Vec::new(),
        target_name: String::new(),
        x_train: rows.x.clone(),
        y_train: nalgebra::DVector::from_column_slice(&rows.y),
        x_test: None,
        y_test: None,
        classes: None,
        notes: Vec::new(),
    };
    let (td, mean, st) = train::prepare(&data, standardize);
    let sd = sgpw::data::moments::moments(rows.y.iter().copied()).sd;
    Stats {
        mean,
        sum_y2: td.y.iter().map(|v| v * v).sum(),
        target_sd: sd,
        standardize: st,
    }
}

/// The statistics of every row from each process's count, mean and centred sum of
/// squares, merged in process order (Chan, Golub & LeVeque 1979), so that every
/// process gets the same bits. Each column is first divided by a power of two near its
/// largest magnitude over every process (as [`sgpw::data::moments`] does on one
/// process), so neither the sums nor the squares overflow or underflow.
fn merged_stats(share: &MpiShare, raw: &TrainData, n_total: usize, standardize: bool) -> Stats {
    let (x, y) = (&raw.x, &raw.y);
    let d = x.ncols();
    let column = |j: usize| -> Vec<f64> {
        if j < d {
            x.column(j).iter().copied().collect()
        } else {
            y.clone()
        }
    };
    let mut largest: Vec<f64> = (0..=d)
        .map(|j| column(j).iter().fold(0.0f64, |m, v| m.max(v.abs())))
        .collect();
    let mut unused = largest.clone();
    share.min_max(&mut unused, &mut largest);
    let scale: Vec<f64> = largest
        .iter()
        .map(|&l| match l > 0.0 && l.is_finite() {
            true => sgpw::data::moments::power_of_two_near(l),
            false => 1.0,
        })
        .collect();
    // this process's count, then per column its mean and centred sum of squares
    let count = y.len() as f64;
    let mut mine = vec![count];
    for (j, s) in scale.iter().enumerate() {
        let v = column(j);
        let mean = v.iter().map(|x| x / s).sum::<f64>() / count.max(1.0);
        let m2 = v.iter().map(|x| (x / s - mean).powi(2)).sum::<f64>();
        mine.extend([mean, m2]);
    }
    let all = share.all_gather(&mine);
    let mut merged: Option<Vec<f64>> = None;
    for part in all.chunks(mine.len()) {
        merged = Some(match merged {
            None => part.to_vec(),
            Some(acc) => merge_moments(&acc, part),
        });
    }
    let merged = merged.unwrap_or(mine);
    let n = n_total as f64;
    let mean: Vec<f64> = (0..=d).map(|j| merged[1 + 2 * j] * scale[j]).collect();
    let sd: Vec<f64> = (0..=d)
        .map(|j| (merged[2 + 2 * j] / (n - 1.0).max(1.0)).sqrt() * scale[j])
        .collect();
    let unit = |s: f64| if s > 0.0 { s } else { 1.0 };
    let standardize = standardize.then(|| Standardize {
        input_center: mean[..d].to_vec(),
        input_scale: sd[..d].iter().map(|s| unit(*s)).collect(),
        target_scale: unit(sd[d]),
    });
    let ys = standardize.as_ref().map_or(1.0, |s| s.target_scale);
    Stats {
        mean: mean[d],
        sum_y2: merged[2 + 2 * d] * (scale[d] / ys).powi(2),
        target_sd: sd[d],
        standardize,
    }
}

/// Two sets of rows' [count, (mean, centred sum of squares) per column] merged into
/// those of their union (Chan, Golub & LeVeque's pairwise update).
fn merge_moments(a: &[f64], b: &[f64]) -> Vec<f64> {
    let (na, nb) = (a[0], b[0]);
    let n = na + nb;
    if nb == 0.0 {
        return a.to_vec();
    }
    if na == 0.0 {
        return b.to_vec();
    }
    let mut out = vec![n];
    for (ca, cb) in a[1..].chunks(2).zip(b[1..].chunks(2)) {
        let delta = cb[0] - ca[0];
        out.push(ca[0] + delta * (nb / n));
        out.push(ca[1] + cb[1] + delta * delta * (na * (nb / n)));
    }
    out
}

/// The rows the start is computed from, on the root (as read): every row when there
/// are at most [`START_ROWS`] (in the file's order: the stripes are contiguous), else a seeded sample of about that many, each process giving its share
/// in proportion to its rows. None on the other processes.
fn gather_start_rows(
    share: &MpiShare,
    data: &TrainData,
    n_total: usize,
    seed: u64,
) -> Option<TrainData> {
    let n = data.y.len();
    let rows: Vec<usize> = if n_total <= START_ROWS {
        (0..n).collect()
    } else {
        let k = (START_ROWS * n).div_ceil(n_total).min(n);
        let mut rng = ChaCha8Rng::seed_from_u64(
            seed ^ (share.rank as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        let mut idx = rand::seq::index::sample(&mut rng, n, k).into_vec();
        idx.sort_unstable();
        idx
    };
    let d = data.x.ncols();
    // row-major rows with the target last
    let mut flat = Vec::with_capacity(rows.len() * (d + 1));
    for &i in &rows {
        flat.extend(data.x.row(i).iter());
        flat.push(data.y[i]);
    }
    let flat = share.gather_on_root(flat)?;
    let count = flat.len() / (d + 1);
    Some(TrainData {
        x: DMatrix::from_fn(count, d, |i, j| flat[i * (d + 1) + j]),
        y: (0..count).map(|i| flat[i * (d + 1) + d]).collect(),
        log_exposure: None,
    })
}
