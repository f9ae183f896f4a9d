//! One fit over many processes with MPI (`mpirun -np K sgpw fit --distributed …`,
//! docs/distributed.md): each process reads its own stripe of the training rows
//! ([`crate::data::load::load_stripe`]); the statistics the start needs come from
//! collectives (standardisation, constant inputs) and from a sample of rows gathered
//! on the root (rank 0), which computes the start as a single process would from
//! them; the root runs L-BFGS and, before each evaluation, broadcasts the parameters
//! (the packed vector, or the whole model when its tables changed) to the others;
//! every evaluation adds the core's sums with one all-reduce per pass
//! ([`crate::methods::shared_rows`]); only the root writes anything. svgp instead runs
//! its minibatch loop on every process from the root's broadcast start, each process
//! evaluating the members of the single-process batches it holds
//! (`train_minibatches`).

use crate::data::load::{Stripe, load_stripe};
use crate::data::{LoadSpec, TrainData};
use crate::error::{Error, Result};
use crate::exec::{Evaluation, Exec, RowShare};
use crate::methods::method::Method as _;
use crate::methods::svgp;
use crate::methods::{self, ValidRunSpec};
use crate::model_file::{FitInfo, ModelFile, Standardize, raw_scale_offset};
use crate::optim::Stop;
use crate::run_context::{Phase, Progress, RunContext};
use crate::train::{self, FitResult};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// At most this many training rows are gathered on the root for the start (the
/// inducing inputs, k-means, lengthscale starts): all of them when there are no more.
pub const START_ROWS: usize = 100_000;

/// MPI, initialised for this program; finalised when dropped.
pub struct Processes {
    _universe: mpi::environment::Universe,
    pub share: Arc<MpiShare>,
}

/// Initialise MPI (once per program).
pub fn start() -> Result<Processes> {
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or_else(|| Error::input("--distributed: MPI was already initialised"))?;
    let world = universe.world();
    let share = MpiShare {
        rank: world.rank() as usize,
        size: world.size() as usize,
        base: Mutex::new(None),
        traffic: Mutex::new(Traffic::default()),
    };
    Ok(Processes {
        _universe: universe,
        share: Arc::new(share),
    })
}

/// Bytes this process has sent into collectives, by kind.
#[derive(Clone, Copy, Debug, Default)]
pub struct Traffic {
    /// Evaluations announced (root) or served (the others).
    pub evaluations: usize,
    /// Bytes of every all-reduce of the core's sums, and of the last of each pass.
    pub summed: usize,
    pub first_pass: usize,
    pub second_pass: usize,
    /// Bytes of the announcements (parameters or models) broadcast.
    pub announced: usize,
}

/// The processes of `MPI_COMM_WORLD` as the core's [`RowShare`]. MPI is called from
/// the thread that initialised it only (the fit runs on the main thread; the core
/// adds its sums outside its parallel loops).
#[derive(Debug)]
pub struct MpiShare {
    pub rank: usize,
    pub size: usize,
    /// The model the others hold, which an announced parameter vector is unpacked
    /// into (on the root: the last model it broadcast whole).
    base: Mutex<Option<ModelFile>>,
    traffic: Mutex<Traffic>,
}

/// What an announcement's header says.
const STOP: f64 = 0.0;
const PACKED: f64 = 0.0;
const WHOLE: f64 = 1.0;

fn code(what: Evaluation) -> f64 {
    match what {
        Evaluation::Gradient => 1.0,
        Evaluation::Value => 2.0,
        Evaluation::Posterior => 3.0,
    }
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

impl MpiShare {
    pub fn traffic(&self) -> Traffic {
        self.traffic.lock().map(|t| *t).unwrap_or_default()
    }

    fn count(&self, f: impl FnOnce(&mut Traffic)) {
        if let Ok(mut t) = self.traffic.lock() {
            f(&mut t);
        }
    }

    /// Entrywise sum over every process, in place.
    pub fn sum(&self, buf: &mut [f64]) {
        let send = buf.to_vec();
        world().all_reduce_into(&send[..], buf, SystemOperation::sum());
    }

    /// Entrywise minimum and maximum over every process, in place.
    pub fn min_max(&self, low: &mut [f64], high: &mut [f64]) {
        let send = low.to_vec();
        world().all_reduce_into(&send[..], low, SystemOperation::min());
        let send = high.to_vec();
        world().all_reduce_into(&send[..], high, SystemOperation::max());
    }

    /// Every process's count in process order, from each its own (None: it failed);
    /// None if any failed.
    pub fn counts(&self, mine: Option<usize>) -> Option<Vec<usize>> {
        let send = [u64::from(mine.is_some()), mine.unwrap_or(0) as u64];
        let mut all = vec![0u64; 2 * self.size];
        world().all_gather_into(&send[..], &mut all[..]);
        let all: Vec<[u64; 2]> = all.chunks(2).map(|c| [c[0], c[1]]).collect();
        all.iter()
            .all(|[ok, _]| *ok == 1)
            .then(|| all.iter().map(|[_, n]| *n as usize).collect())
    }

    /// Tell the others that no more evaluations follow (root).
    pub fn stop(&self) {
        let mut header = [STOP, PACKED, 0.0];
        world().process_at_rank(0).broadcast_into(&mut header[..]);
    }

    /// On every process but the root: evaluate what the root announces, on this
    /// process's rows, until it says stop. An evaluation that fails here has told the
    /// others through its sums (the root reports it).
    pub fn serve(&self, data: &TrainData, exec: &Exec) -> Result<()> {
        let root = world();
        let root = root.process_at_rank(0);
        let mut grad = Vec::new();
        loop {
            let mut header = [0.0; 3];
            root.broadcast_into(&mut header[..]);
            if header[0] == STOP {
                return Ok(());
            }
            let len = header[2] as usize;
            let model = if header[1] == WHOLE {
                let mut bytes = vec![0u8; len];
                root.broadcast_into(&mut bytes[..]);
                let model = model_of_bytes(bytes)?;
                self.set_base(model.clone());
                model
            } else {
                let mut theta = vec![0.0; len];
                root.broadcast_into(&mut theta[..]);
                let mut model = self
                    .base
                    .lock()
                    .ok()
                    .and_then(|b| b.clone())
                    .ok_or_else(|| Error::input("--distributed: parameters before a model"))?;
                methods::get(&model.method)?.unpack(&theta, &mut model);
                model
            };
            self.count(|t| t.evaluations += 1);
            let method = methods::get(&model.method)?;
            let what = header[0];
            let _ = if what == code(Evaluation::Gradient) {
                method
                    .objective_into(&model, data, exec, &mut grad)
                    .map(|_| ())
            } else if what == code(Evaluation::Value) {
                method.nlml(&model, data, exec).map(|_| ())
            } else {
                method.posterior(&model, data, exec).map(|_| ())
            };
        }
    }

    /// The root's `start` on every process (the root passes Some, the others None):
    /// the model as TOML, which reads back to the same bits. When the root could not
    /// compute it, every process gets an error.
    pub fn broadcast_model(&self, start: Option<Result<ModelFile>>) -> Result<ModelFile> {
        let root = world();
        let root = root.process_at_rank(0);
        let Some(start) = start else {
            let mut len = [0u64];
            root.broadcast_into(&mut len[..]);
            if len[0] == 0 {
                return Err(Error::input(
                    "--distributed: the root (rank 0) could not compute the start (its error \
                     is reported)",
                ));
            }
            let mut bytes = vec![0u8; len[0] as usize];
            root.broadcast_into(&mut bytes[..]);
            let model = model_of_bytes(bytes)?;
            self.set_base(model.clone());
            return Ok(model);
        };
        let bytes = start.and_then(|model| model_bytes(&model).map(|b| (model, b)));
        let mut len = [bytes.as_ref().map_or(0, |(_, b)| b.len() as u64)];
        root.broadcast_into(&mut len[..]);
        let (model, mut bytes) = bytes?;
        root.broadcast_into(&mut bytes[..]);
        self.set_base(model.clone());
        self.count(|t| t.announced += 8 + bytes.len());
        Ok(model)
    }

    fn set_base(&self, model: ModelFile) {
        if let Ok(mut b) = self.base.lock() {
            *b = Some(model);
        }
    }
}

impl RowShare for MpiShare {
    fn all_sum(&self, buf: &mut [f64]) -> Result<()> {
        self.sum(buf);
        let bytes = std::mem::size_of_val(buf);
        self.count(|t| {
            t.summed += bytes;
            // a gradient pass's sums follow its first pass's in each evaluation
            if t.first_pass == 0 || t.first_pass == bytes {
                t.first_pass = bytes;
            } else {
                t.second_pass = bytes;
            }
        });
        Ok(())
    }

    fn is_root(&self) -> bool {
        self.rank == 0
    }

    fn announce(&self, what: Evaluation, model: &dyn Any) -> Result<()> {
        let model = model
            .downcast_ref::<ModelFile>()
            .ok_or_else(|| Error::input("internal: an announcement without a model"))?;
        let method = methods::get(&model.method)?;
        let mut theta = method.pack(model);
        // the packed vector where the others' model unpacks it to this one bit for
        // bit; the whole model where its tables changed (a stage, a first evaluation)
        let same = self
            .base
            .lock()
            .ok()
            .and_then(|b| b.clone())
            .is_some_and(|mut b| {
                method.unpack(&theta, &mut b);
                b == *model
            });
        let root = world();
        let root = root.process_at_rank(0);
        let bytes = if same {
            let mut header = [code(what), PACKED, theta.len() as f64];
            root.broadcast_into(&mut header[..]);
            root.broadcast_into(&mut theta[..]);
            24 + 8 * theta.len()
        } else {
            let mut bytes = model_bytes(model)?;
            let mut header = [code(what), WHOLE, bytes.len() as f64];
            root.broadcast_into(&mut header[..]);
            root.broadcast_into(&mut bytes[..]);
            self.set_base(model.clone());
            24 + bytes.len()
        };
        self.count(|t| {
            t.evaluations += 1;
            t.announced += bytes;
        });
        Ok(())
    }
}

/// A model as the TOML the other processes are given, checked to read back to the
/// same bits.
fn model_bytes(model: &ModelFile) -> Result<Vec<u8>> {
    let text = model.to_toml()?;
    if ModelFile::parse(&text).ok().as_ref() != Some(model) {
        return Err(Error::numerical(
            "--distributed: the model does not read back from its TOML bit for bit, \
             so the other processes cannot be given it",
        ));
    }
    Ok(text.into_bytes())
}

/// The model [`model_bytes`] sent.
fn model_of_bytes(bytes: Vec<u8>) -> Result<ModelFile> {
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::input("--distributed: a model arrived damaged"))?;
    ModelFile::parse(&text).map_err(Error::input)
}

/// What the root hands back from a distributed fit.
pub struct Fitted {
    pub result: FitResult,
    pub n_train: usize,
    pub n_test: usize,
    pub dim: usize,
    pub notes: Vec<String>,
    pub processes: usize,
    pub traffic: Traffic,
    /// svgp: the bytes this process summed per minibatch step.
    pub bytes_per_step: Option<usize>,
}

/// One process's rows in model units, and what every process agreed on.
struct Shared {
    data: TrainData,
    feature_names: Vec<String>,
    target_name: String,
    notes: Vec<String>,
    n_total: usize,
    target_mean: f64,
    standardize: Option<Standardize>,
    /// Σ y² in model units over every row (the noise floor's scale).
    sum_y2: f64,
}

/// Read this process's stripe and agree on the data with the others: a failure to
/// read on one process stops every process (no one waits in a collective for it).
fn read_and_agree(
    share: &MpiShare,
    load: &LoadSpec,
    standardize: bool,
    seed: u64,
) -> Result<(Shared, Option<TrainData>)> {
    let stripe = load_stripe(load, share.rank, share.size, &mut |mine| share.counts(mine));
    let mut failed = [if stripe.is_err() { 1.0 } else { 0.0 }];
    share.sum(&mut failed);
    let stripe = match stripe {
        Err(e) => return Err(e),
        Ok(_) if failed[0] > 0.0 => {
            return Err(Error::data(
                &load.train,
                format!(
                    "{} of the {} processes could not read their rows (their errors are \
                     printed above)",
                    failed[0], share.size
                ),
            ));
        }
        Ok(s) => s,
    };
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
    let raw = TrainData { x, y };
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
    let mut packed = stats.map(|s| s.pack()).unwrap_or_default();
    let mut len = [packed.len() as f64];
    world().process_at_rank(0).broadcast_into(&mut len[..]);
    packed.resize(len[0] as usize, 0.0);
    world().process_at_rank(0).broadcast_into(&mut packed[..]);
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
            },
            None => TrainData {
                x: raw.x.clone(),
                y: raw.y.iter().map(|v| v - self.mean).collect(),
            },
        }
    }
}

/// The statistics of every row, on the root that holds them all: `train::prepare`'s.
fn root_stats(rows: &TrainData, standardize: bool) -> Stats {
    let data = crate::data::Dataset {
        feature_names: Vec::new(),
        target_name: String::new(),
        x_train: rows.x.clone(),
        y_train: nalgebra::DVector::from_column_slice(&rows.y),
        x_test: None,
        y_test: None,
        notes: Vec::new(),
    };
    let (td, mean, st) = train::prepare(&data, standardize);
    let sd = crate::data::moments::moments(rows.y.iter().copied()).sd;
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
/// largest magnitude over every process (as [`crate::data::moments`] does on one
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
            true => crate::data::moments::power_of_two_near(l),
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
    let mut all = vec![0.0; mine.len() * share.size];
    world().all_gather_into(&mine[..], &mut all[..]);
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
    let w = world();
    if share.rank != 0 {
        w.process_at_rank(0).send(&flat[..]);
        return None;
    }
    for r in 1..share.size {
        let (part, _) = w.process_at_rank(r as i32).receive_vec::<f64>();
        flat.extend(part);
    }
    let count = flat.len() / (d + 1);
    Some(TrainData {
        x: DMatrix::from_fn(count, d, |i, j| flat[i * (d + 1) + j]),
        y: (0..count).map(|i| flat[i * (d + 1) + d]).collect(),
    })
}

/// Options a distributed fit refuses, and why.
fn refuse(spec: &ValidRunSpec, load: &LoadSpec) -> Result<()> {
    let method = spec.method();
    if !method.shares_rows() {
        return Err(Error::input(format!(
            "--distributed: method '{}' runs in one process (the exact GP, greedy \
             selection, Nyström and sequential EigenGP need every row in one place); \
             run it without --distributed, or choose a low-rank method such as fitc or vfe",
            method.name()
        )));
    }
    let o = &spec.options;
    for (set, flag) in [
        (
            load.split.is_some(),
            "--split (give the test rows as a --test file)",
        ),
        (o.validation.is_some(), "--validation"),
        (o.early_stop, "--early-stop"),
        (o.restarts.unwrap_or(1) > 1, "--restarts"),
        (o.subset.is_some(), "--subset"),
    ] {
        if set {
            return Err(Error::input(format!(
                "--distributed does not take {flag}: it is a single-process option"
            )));
        }
    }
    Ok(())
}

/// `sgpw fit --distributed` on every process: the root returns what it fitted, the
/// others None once the root has finished.
pub fn fit(
    procs: &Processes,
    load: &LoadSpec,
    spec: &ValidRunSpec,
    exec: Exec,
    sink: &dyn Fn(&Progress),
) -> Result<Option<Fitted>> {
    refuse(spec, load)?;
    let share = &procs.share;
    let started = Instant::now();
    let (shared, sample) = read_and_agree(share, load, spec.standardize, spec.seed)?;
    // against every process's rows, as one process checks against its data (svgp's
    // --batch larger than n): every process reaches the same verdict
    spec.spec().check(shared.n_total)?;
    let exec = exec.with_share(share.clone());
    let mut bytes_per_step = None;
    let result = if spec.method == svgp::SVGP.name() {
        let Some((result, per_step)) =
            train_minibatches(share, &shared, sample, spec, exec, sink, started)?
        else {
            return Ok(None);
        };
        bytes_per_step = Some(per_step);
        result
    } else {
        let Some(sample) = sample else {
            share.serve(&shared.data, &exec)?;
            return Ok(None);
        };
        let result = lead(&shared, &sample, spec, exec, sink, started);
        share.stop();
        result?
    };
    let test = match &load.test {
        Some(path) => Some(crate::data::load::load_for_model(&LoadSpec {
            train: path.clone(),
            test: None,
            split: None,
            seed: load.seed,
            target: Some(shared.target_name.clone()),
            features: Some(shared.feature_names.clone()),
            drop_missing: load.drop_missing,
        })?),
        None => None,
    };
    let mut result = result;
    let n_test = test.as_ref().map_or(0, |t| t.n_train());
    if let Some(t) = test {
        let y = t.y_train.as_slice();
        let m = result.predictor.score(&t.x_train, y)?;
        result.test = Some(m);
    }
    Ok(Some(Fitted {
        result,
        n_train: shared.n_total,
        n_test,
        dim: shared.feature_names.len(),
        notes: shared
            .notes
            .iter()
            .cloned()
            .chain(spec.runs_second_start().then(|| {
                // the second start's subset fit would need its rows in one process
                "--distributed fits from the default start only; `sgpw fit --single-start` \
                 is the same fit in one process"
                    .to_string()
            }))
            .collect(),
        processes: share.size,
        traffic: share.traffic(),
        bytes_per_step,
    }))
}

/// The root's part of a fit: the start from the gathered rows, L-BFGS over every
/// process's rows, the posterior.
fn lead(
    shared: &Shared,
    sample: &TrainData,
    spec: &ValidRunSpec,
    exec: Exec,
    sink: &dyn Fn(&Progress),
    started: Instant,
) -> Result<FitResult> {
    let model = start_model(shared, sample, spec, sink)?;
    let ctx = fit_context(shared, spec, exec, sink);
    let (fitted, outcome) = spec.method().fit(model, &shared.data, spec, &ctx)?;
    finish(shared, spec, fitted, outcome, &ctx, started)
}

/// The start, on the root alone, from the gathered rows: the hyperparameters and the
/// method's tables as one process computes them from these rows.
fn start_model(
    shared: &Shared,
    sample: &TrainData,
    spec: &ValidRunSpec,
    sink: &dyn Fn(&Progress),
) -> Result<ModelFile> {
    let local = RunContext::new(Exec::default(), sink);
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let hyper =
        methods::start::initial_hyper(sample, spec, shared.standardize.as_ref(), &local, &mut rng)?;
    let mut model = spec.method().init(sample, spec, hyper, &local, &mut rng)?;
    methods::start::set_given_inducing_inputs(
        &mut model,
        spec,
        &shared.feature_names,
        shared.standardize.as_ref(),
    )?;
    model.target_mean = shared.target_mean;
    model.standardize = shared.standardize.clone();
    model.inputs = Some(shared.feature_names.clone());
    model.target = Some(shared.target_name.clone());
    let floor = spec.options.noise_floor();
    if floor > 0.0 {
        let f = floor * shared.sum_y2 / shared.n_total as f64;
        model.noise_floor = Some(f);
        model.hyper.noise_variance = model.hyper.noise_variance.max(2.0 * f);
    }
    methods::start::pins(sample, &spec.options, shared.standardize.as_ref())?
        .apply_checked(&mut model)?;
    Ok(model)
}

/// The context a fit runs in: the objective's offset to the raw scale, how the
/// optimiser sees positive parameters.
fn fit_context<'a>(
    shared: &Shared,
    spec: &ValidRunSpec,
    exec: Exec,
    sink: &'a dyn Fn(&Progress),
) -> RunContext<'a> {
    let ctx = RunContext::new(exec, sink);
    ctx.set_offset(raw_scale_offset(
        shared.standardize.as_ref(),
        shared.n_total,
    ));
    ctx.set_positive(spec.options.positive());
    ctx.enter(Phase::Fit { stage: 0 });
    ctx
}

/// The root's end of a fit: the objective over every process's rows at the fitted
/// parameters, the posterior, the result.
fn finish(
    shared: &Shared,
    spec: &ValidRunSpec,
    fitted: ModelFile,
    outcome: crate::optim::Outcome,
    ctx: &RunContext,
    started: Instant,
) -> Result<FitResult> {
    if outcome.stop == Stop::Cancelled {
        return Err(Error::Cancelled);
    }
    let (method, mut fitted) = (spec.method(), fitted);
    let offset = raw_scale_offset(shared.standardize.as_ref(), shared.n_total);
    ctx.enter(Phase::Posterior);
    let final_eval = method.objective(&fitted, &shared.data, &ctx.exec)?;
    let nlml = final_eval.nlml + offset;
    let (posterior, basis) = method.posterior(&fitted, &shared.data, &ctx.exec)?;
    let train_seconds = started.elapsed().as_secs_f64();
    fitted.posterior = method.stores_posterior().then(|| posterior.clone());
    fitted.fit = Some(FitInfo {
        nlml,
        jitter_used: final_eval.jitter,
        iterations: outcome.iterations,
        train_seconds,
        n_train: shared.n_total,
        collapse_restart: None,
        second_start: None,
    });
    let trace: Vec<f64> = outcome.trace.iter().map(|v| v + offset).collect();
    train::check_finite(nlml, &trace, None)?;
    Ok(FitResult {
        predictor: train::Predictor::from_posterior(method, fitted.clone(), posterior, basis),
        model: fitted,
        trace,
        iterations: outcome.iterations,
        evaluations: outcome.evaluations,
        train_seconds,
        nlml,
        jitter: final_eval.jitter,
        stop: outcome.stop,
        test: None,
        validation: Vec::new(),
        best_iteration: None,
        constant_mnlp: None,
    })
}

/// svgp over every process: the root's start is given to every process, and every
/// process runs the same training loop on its stripe ([`svgp::train`] with
/// [`svgp::InMemory::stripe`]): the same seeded order of every process's rows, each
/// process evaluating the members of each minibatch it holds, the sums added with one
/// all-reduce per evaluation, and the same natural-gradient and Adam steps on every
/// process from the same totals. The root then finishes as [`lead`] does (the others
/// serve its evaluations) and returns the result with the bytes this process summed
/// per step; the others None.
fn train_minibatches(
    share: &MpiShare,
    shared: &Shared,
    sample: Option<TrainData>,
    spec: &ValidRunSpec,
    exec: Exec,
    sink: &dyn Fn(&Progress),
    started: Instant,
) -> Result<Option<(FitResult, usize)>> {
    let start = sample.map(|s| start_model(shared, &s, spec, sink));
    let model = share.broadcast_model(start)?;
    let counts = share
        .counts(Some(shared.data.y.len()))
        .ok_or_else(|| Error::input("--distributed: the processes' row counts disagree"))?;
    let first: usize = counts[..share.rank].iter().sum();
    let mut rows = svgp::InMemory::stripe(&shared.data, first, shared.n_total);
    let ctx = fit_context(shared, spec, exec.clone(), sink);
    let before = share.traffic().summed;
    let (fitted, outcome) = svgp::train(model, &mut rows, spec, &ctx)?;
    // each full-data ELBO on the way sums its value and failure slot
    let full = fitted
        .require::<svgp::SvgpRecord>()
        .map_or(0, |r| r.full_at.len() + r.probe_at.len());
    let summed = share.traffic().summed - before - 16 * full;
    let per_step = summed / outcome.iterations.max(1);
    if !share.is_root() {
        share.serve(&shared.data, &exec)?;
        return Ok(None);
    }
    let result = finish(shared, spec, fitted, outcome, &ctx, started);
    share.stop();
    Ok(Some((result?, per_step)))
}

/// `sgpw nlml --distributed --json`: the objective and gradient of `model` over the
/// rows of every process, the rows, and the seconds the evaluation took (reading
/// excluded). The root returns them; the others None.
pub fn objective(
    procs: &Processes,
    model: &ModelFile,
    load: &LoadSpec,
    exec: Exec,
) -> Result<Option<(crate::methods::Objective, usize, f64)>> {
    let share = &procs.share;
    let method = methods::get(&model.method)?;
    if !method.shares_rows() {
        return Err(Error::input(format!(
            "--distributed: method '{}' runs in one process",
            method.name()
        )));
    }
    let stripe = load_stripe(load, share.rank, share.size, &mut |mine| share.counts(mine));
    let mut failed = [if stripe.is_err() { 1.0 } else { 0.0 }];
    share.sum(&mut failed);
    let stripe = stripe?;
    if failed[0] > 0.0 {
        return Err(Error::data(
            &load.train,
            "another process could not read its rows",
        ));
    }
    let data = train::model_data(model, &stripe.x, &stripe.y)?;
    let mut n = [data.y.len() as f64];
    share.sum(&mut n);
    let exec = exec.with_share(share.clone());
    if share.rank != 0 {
        share.serve(&data, &exec)?;
        return Ok(None);
    }
    let started = Instant::now();
    let o = method.objective(model, &data, &exec);
    let seconds = started.elapsed().as_secs_f64();
    share.stop();
    Ok(Some((o?, n[0] as usize, seconds)))
}
