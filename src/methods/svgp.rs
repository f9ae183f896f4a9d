//! SVGP: the stochastic variational GP of Hensman, Fusi & Lawrence (*Gaussian processes
//! for big data*, UAI 2013), docs/methods.md §8. An explicit Gaussian q(u) over the
//! outputs at m inducing inputs Z, whitened (u = L v, q(v) = N(μ, RRᵀ)), trained on
//! minibatches: each step costs O(B·m² + m³) whatever n is. The bound and its gradients
//! are in [`elbo`], the training loop (natural-gradient steps on q(u) alternated with
//! Adam on σ0², ℓ, σ², Z, as GPflow's `NaturalGradient` recipe, or Adam on everything;
//! then the exact stage) in `train.rs`; this file is the method — its model tables, the
//! full-data objective (a chunk of rows at a time), the row sources and the posterior.

pub mod adam;
pub mod any_likelihood;
pub mod elbo;
pub mod features;
pub mod file_rows;
mod params;
pub mod schedule;
mod sums;
pub mod train;

use self::adam::Adam;
use self::elbo::{Factor, Prior, Projected, Rows, Terms, Variational, Want};
use self::features::FeaturesTable;
pub use self::params::{Features, Params};
use self::params::{likelihood_params, lower_entries, pack_params, unpack_params};
use self::schedule::{JOINT_TOL_PER_ROW, Schedule, plateaued, plateaued_within};
pub(crate) use self::sums::Sums;
pub(crate) use self::train::train;
use super::hyper::{head_grad, head_len, pack_hyper, unpack_hyper};
use super::inducing::initial_points;
use super::lowrank::jitter_grad;
use super::method::{Markers, Method, Objective, RowSource, TraceMarks, ValidRunSpec};
use super::pseudo::{self, Inducing, inducing_points, set_inducing_points};
use crate::collapsed::{LatentPrior, Posterior};
use crate::data::TrainData;
use crate::error::{Error, Location, Result};
use crate::exec::{Evaluation as ShareEvaluation, Exec, RowShare};
use crate::likelihoods::{GaussHermite, Likelihood, LikelihoodKind};
use crate::linalg;
use crate::model_file::{Hyper, ModelFile, ModelTable, Witness, matrix_to_rows, rows_to_matrix};
use crate::optim::{self, Control, IterInfo, Outcome, Stop};
use crate::run_context::{Phase, RunContext};
use crate::run_spec::{DEFAULT_ITERATIONS, DataShape, MethodOptions, Naming, SvgpOptimizer};
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;

/// Minibatch size without `--batch` (capped at n).
pub const DEFAULT_BATCH: usize = 256;
/// Natural-gradient step γ without `--nat-step` (GPflow's SVGP notebook's).
pub const DEFAULT_NAT_STEP: f64 = 0.1;
/// Adam's learning rate without `--lr` (GPflow's SVGP notebook's).
pub const DEFAULT_LR: f64 = 0.01;

/// The shuffling's random stream: the run's seed on a stream of its own, so the
/// initialisation's draws do not move the batches.
const SHUFFLE_STREAM: u64 = 0x7376_6770;

/// `[variational]`: q(v) = N(mean, chol·cholᵀ) over the whitened inducing outputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariationalTable {
    pub mean: Vec<f64>,
    /// R, lower-triangular, m rows of m values.
    pub chol: Vec<Vec<f64>>,
}

impl ModelTable for VariationalTable {
    const NAME: &'static str = "variational";
}

/// `[svgp]`: how the model was trained, and the full-data negative ELBO every
/// `full_every` steps (the noisy minibatch estimates are the run's trace).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvgpRecord {
    pub optimizer: SvgpOptimizer,
    pub batch: usize,
    pub steps: usize,
    pub epochs: f64,
    /// Steps after which the full negative ELBO was evaluated (0: the start).
    pub full_at: Vec<usize>,
    pub full_neg_elbo: Vec<f64>,
    /// The steps at which each stage of the schedule after the first began
    /// (`schedule`: batch ×4, γ ×2, rate ÷2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stage_at: Vec<usize>,
    /// With more than [`PROBE_ROWS`] rows, the stopping rule's checks: the steps and
    /// the negative ELBO estimated on the probe rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probe_at: Vec<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probe_neg_elbo: Vec<f64>,
}

impl ModelTable for SvgpRecord {
    const NAME: &'static str = "svgp";
}

pub struct Svgp;

pub const SVGP: Svgp = Svgp;

/// q(v) of a model, checked: m means and an m×m lower-triangular factor with a
/// non-zero diagonal.
pub fn variational(model: &ModelFile, m: usize) -> Result<Variational> {
    let t = model.require::<VariationalTable>()?;
    let at = Location::key(VariationalTable::NAME);
    if t.mean.len() != m {
        return Err(Error::at(
            at.then("mean"),
            format!(
                "[variational] mean has {} values, expected {m} (one per inducing point)",
                t.mean.len()
            ),
        ));
    }
    if let Some(v) = t.mean.iter().find(|v| !v.is_finite()) {
        return Err(Error::at(
            at.then("mean"),
            format!("[variational] mean must be finite, not {v}"),
        ));
    }
    let cat = at.then("chol");
    if t.chol.len() != m {
        return Err(Error::at(
            cat,
            format!(
                "[variational] chol has {} rows, expected {m} (R, m×m lower-triangular)",
                t.chol.len()
            ),
        ));
    }
    let chol = rows_to_matrix(&cat, &t.chol, m)?;
    for i in 0..m {
        for j in 0..m {
            let v = chol[(i, j)];
            if !v.is_finite() || (j > i && v != 0.0) || (j == i && v == 0.0) {
                return Err(Error::at(
                    cat.clone().index(i),
                    format!(
                        "[variational] chol row {}: R must be lower-triangular with a \
                         non-zero diagonal and finite entries (entry {} is {v})",
                        i + 1,
                        j + 1
                    ),
                ));
            }
        }
    }
    Ok(Variational {
        mean: DVector::from_vec(t.mean),
        chol,
    })
}

pub fn set_variational(model: &mut ModelFile, q: &Variational) {
    model.set(&VariationalTable {
        mean: q.mean.iter().copied().collect(),
        chol: matrix_to_rows(&q.chol),
    });
}

/// The settings of one training run, defaults filled in.
#[derive(Clone, Copy, Debug)]
struct Settings {
    optimizer: SvgpOptimizer,
    batch: usize,
    budget: Budget,
    nat_step: f64,
    lr: f64,
    /// `--elbo-every`: steps between full-data bounds for the record (default: none
    /// between the start and the end).
    elbo_every: Option<usize>,
}

/// What ends a run that the stopping rule has not ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// `--iters` given: minibatch steps.
    Steps(usize),
    /// `--epochs` (or, without it and without `--iters`, [`DEFAULT_EPOCHS`]): rows
    /// visited, n per epoch, whatever the batch has grown to.
    Rows(usize),
}

/// The epochs budget without `--epochs` or `--iters`: far more than the stopping rule
/// takes on the bundled sets, so that the rule, not the budget, ends a fit.
pub const DEFAULT_EPOCHS: usize = 2000;

/// Rows of the bound's probe when n is larger: the rule's checks then evaluate the
/// bound on the first `PROBE_ROWS` rows trained on (scaled by n over their count), so a
/// check costs what these rows cost, not a pass over n. Every check sees the same rows,
/// so their differences follow the full bound's.
pub const PROBE_ROWS: usize = 10_000;

impl Settings {
    fn of(o: &MethodOptions, n: usize, iters: usize) -> Settings {
        let batch = o.batch.unwrap_or(DEFAULT_BATCH).min(n).max(1);
        let budget = match o.epochs {
            Some(e) => Budget::Rows(e.saturating_mul(n)),
            None if iters == DEFAULT_ITERATIONS => Budget::Rows(DEFAULT_EPOCHS.saturating_mul(n)),
            None => Budget::Steps(iters),
        };
        Settings {
            optimizer: o.optimizer.unwrap_or(SvgpOptimizer::Natgrad),
            batch,
            budget,
            nat_step: o.nat_step.unwrap_or(DEFAULT_NAT_STEP),
            lr: o.lr.unwrap_or(DEFAULT_LR),
            elbo_every: o.elbo_every.map(|k| k.max(1)),
        }
    }
}

/// One evaluation of the ELBO (to be maximised) over some rows.
pub struct Evaluation {
    pub elbo: f64,
    /// The gradient in [`Method::pack`]'s order (of the ELBO), when asked.
    pub grad: Vec<f64>,
    /// The likelihood term's gradients in μ and Σ (natural-gradient steps).
    pub d_mean_lik: DVector<f64>,
    pub d_sigma_lik: DMatrix<f64>,
    pub jitter: f64,
}

/// The ELBO on the rows `blocks` yields (each a block of inputs and targets), with the
/// likelihood term scaled by `c`: c = 1 on the whole data, n/B on a minibatch. Sums
/// run in the blocks' order, so the result does not depend on the threads. With
/// `Want::Model` the gradient holds the head and Z only; with `Want::Natural` there is
/// no value (NaN) and no gradient, only `d_mean_lik` and `d_sigma_lik`. `cache` keeps
/// each block's projection for an evaluation at the same Z and hyperparameters (the
/// second of a natural-gradient step): block k uses `cache[k]` if it is there and
/// stores it otherwise.
pub fn evaluate<'a, B: Into<Block<'a>>>(
    model: &ModelFile,
    blocks: impl Iterator<Item = B>,
    c: f64,
    want: Want,
    cache: Option<&mut Vec<Projected>>,
    exec: &Exec,
) -> Result<Evaluation> {
    evaluate_at(model, &Params::of(model)?, blocks, c, want, cache, exec)
}

/// [`evaluate`] at the inducing inputs and q(v) of `p` (the model gives the rest).
fn evaluate_at<'a, B: Into<Block<'a>>>(
    model: &ModelFile,
    p: &Params,
    blocks: impl Iterator<Item = B>,
    c: f64,
    want: Want,
    mut cache: Option<&mut Vec<Projected>>,
    exec: &Exec,
) -> Result<Evaluation> {
    let mut sums = Sums::new(model, p, want, exec)?;
    let mut added = exec.check();
    for block in blocks {
        if added.is_err() {
            break;
        }
        let Block { x, y, log_exposure } = block.into();
        added = sums.add(&x, y, log_exposure, c, cache.as_deref_mut());
    }
    if let Some(share) = exec.share.as_deref() {
        // every process joins the one sum, a failed one with its failure slot set
        sums.all_sum(share, added.is_err())?;
    }
    added?;
    sums.finish()
}

/// The whole data a chunk of rows at a time (`Exec::chunk_rows`).
fn chunks<'a>(data: &'a TrainData, m: usize, exec: &Exec) -> impl Iterator<Item = Block<'a>> {
    let n = data.y.len();
    let rows = exec.chunk_rows(m).min(n.max(1));
    (0..n.div_ceil(rows)).map(move |k| {
        let (start, end) = (k * rows, ((k + 1) * rows).min(n));
        Block {
            x: data.x.rows(start, end - start).into_owned(),
            y: &data.y[start..end],
            log_exposure: data.log_exposure.as_ref().map(|e| &e[start..end]),
        }
    })
}

/// A block of rows the bound sums over: inputs, targets and, for a count model with an
/// exposure, each row's log exposure. `(x, y)` is a block without exposures.
pub struct Block<'a> {
    pub x: DMatrix<f64>,
    pub y: &'a [f64],
    pub log_exposure: Option<&'a [f64]>,
}

impl<'a> From<(DMatrix<f64>, &'a [f64])> for Block<'a> {
    fn from((x, y): (DMatrix<f64>, &'a [f64])) -> Block<'a> {
        Block {
            x,
            y,
            log_exposure: None,
        }
    }
}

impl<'a> From<(DMatrix<f64>, &'a [f64], Option<&'a [f64]>)> for Block<'a> {
    fn from((x, y, log_exposure): (DMatrix<f64>, &'a [f64], Option<&'a [f64]>)) -> Block<'a> {
        Block { x, y, log_exposure }
    }
}

/// The rows `idx` of the training data as one block (inputs, targets, log exposures).
fn gather(data: &TrainData, idx: &[usize]) -> (DMatrix<f64>, Vec<f64>, Option<Vec<f64>>) {
    let x = DMatrix::from_fn(idx.len(), data.x.ncols(), |i, d| data.x[(idx[i], d)]);
    let log_exposure = data
        .log_exposure
        .as_ref()
        .map(|e| idx.iter().map(|&i| e[i]).collect());
    (x, idx.iter().map(|&i| data.y[i]).collect(), log_exposure)
}

/// The negative full-data ELBO and, when asked, its gradient (the objective).
/// Over the rows of every process of `exec.share` (`nlml --distributed`, the end of a
/// distributed fit), the root first has the others evaluate it too.
fn full(model: &ModelFile, data: &TrainData, want: Want, exec: &Exec) -> Result<Evaluation> {
    if let Some(share) = exec.share.as_deref()
        && share.is_root()
    {
        let what = match want {
            Want::Value => ShareEvaluation::Value,
            _ => ShareEvaluation::Gradient,
        };
        share.announce(what, model)?;
    }
    full_at(model, &Params::of(model)?, data, want, exec)
}

/// [`full`] at the inducing inputs and q(v) of `p`.
fn full_at(
    model: &ModelFile,
    p: &Params,
    data: &TrainData,
    want: Want,
    exec: &Exec,
) -> Result<Evaluation> {
    let m = p.m();
    let e = evaluate_at(model, p, chunks(data, m, exec), 1.0, want, None, exec)?;
    Ok(negated(e))
}

/// The negative ELBO and its gradient from the ELBO's.
pub(crate) fn negated(mut e: Evaluation) -> Evaluation {
    e.elbo = -e.elbo;
    e.grad.iter_mut().for_each(|g| *g = -*g);
    e
}

/// Where training's rows come from: memory ([`InMemory`], all of them or this
/// process's stripe), or a file read a block at a time ([`file_rows`]).
pub trait TrainingRows {
    /// The number of training rows (of every process).
    fn n(&self) -> usize;
    /// The next minibatch: up to `batch` rows of the current epoch's order, taken in
    /// turn; a new seeded order (from `rng`) once the last is used up, so a batch
    /// never runs past the end of an epoch.
    fn next_batch(&mut self, batch: usize, rng: &mut ChaCha8Rng) -> Result<Batch>;
    /// The ELBO over every row (c = 1) with what `want` asks for, a chunk of
    /// `Exec::chunk_rows` rows at a time. `cache` as in [`evaluate`]: rows in memory
    /// use it, rows read from a file ignore it (their memory stays bounded).
    fn sums(
        &self,
        model: &ModelFile,
        p: &Params,
        want: Want,
        cache: Option<&mut Vec<Projected>>,
        exec: &Exec,
    ) -> Result<Evaluation>;
    /// Every row, when this process holds them all in memory.
    fn whole(&self) -> Option<&TrainData> {
        None
    }
    /// The negative ELBO over every row.
    fn full(&self, model: &ModelFile, p: &Params, exec: &Exec) -> Result<f64> {
        Ok(-self.sums(model, p, Want::Value, None, exec)?.elbo)
    }
}

/// The optimal q(v) at the Z and hyperparameters of `model` and `p` — for the Gaussian
/// likelihood it is closed-form, one natural-gradient step of γ = 1 over every row from
/// any q (§8.3), where the ELBO is vfe's collapsed bound — and, at it, the negative
/// ELBO over every row with what `want` asks for (its gradient in the head and Z is
/// the collapsed bound's, since the ELBO's gradient in q vanishes there). Two passes
/// over the rows; rows in memory that are one chunk share its projection (more would
/// keep an m × n matrix, not a chunk's).
pub(crate) fn exact_q(
    data: &dyn TrainingRows,
    model: &ModelFile,
    p: &Params,
    want: Want,
    exec: &Exec,
) -> Result<(Variational, Evaluation)> {
    let mut cache = Vec::new();
    let one_chunk = data.n() <= exec.chunk_rows(p.m());
    let e = data.sums(
        model,
        p,
        Want::Natural,
        one_chunk.then_some(&mut cache),
        exec,
    )?;
    let q = elbo::natural_step(&p.q, &e.d_mean_lik, &e.d_sigma_lik, 1.0, exec.par)?;
    let at = Params {
        features: p.features.clone(),
        q,
    };
    let e = data.sums(model, &at, want, one_chunk.then_some(&mut cache), exec)?;
    Ok((at.q, negated(e)))
}

/// A minibatch: the rows of it this process holds, and its size over every process
/// (what the likelihood term's scale n/B counts).
pub struct Batch {
    pub x: DMatrix<f64>,
    pub y: Vec<f64>,
    /// The rows' log exposures (a count model's `--exposure`).
    pub log_exposure: Option<Vec<f64>>,
    pub rows: usize,
}

/// Training rows in memory: every epoch a seeded shuffle of the previous epoch's order.
/// The rows may be one process's stripe of a distributed fit (src/distributed.rs): the
/// order is then of every process's rows, the same on each (drawn from the same seed),
/// and each takes the members of a batch it holds, so the batches are those of one
/// process holding every row.
pub struct InMemory<'a> {
    data: &'a TrainData,
    /// The index of `data`'s first row among every process's rows.
    first: usize,
    /// The rows of every process.
    n: usize,
    order: Vec<usize>,
    at: usize,
}

impl<'a> InMemory<'a> {
    pub fn new(data: &'a TrainData) -> InMemory<'a> {
        InMemory::stripe(data, 0, data.y.len())
    }

    /// This process's rows `data`, rows `first`.. of the `n` of every process.
    pub(crate) fn stripe(data: &'a TrainData, first: usize, n: usize) -> InMemory<'a> {
        InMemory {
            data,
            first,
            n,
            order: (0..n).collect(),
            at: n, // start by shuffling
        }
    }
}

impl TrainingRows for InMemory<'_> {
    fn n(&self) -> usize {
        self.n
    }

    fn next_batch(&mut self, batch: usize, rng: &mut ChaCha8Rng) -> Result<Batch> {
        let n = self.n;
        if self.at >= n {
            self.order.shuffle(rng);
            self.at = 0;
        }
        let end = (self.at + batch).min(n);
        let mine = self.first..self.first + self.data.y.len();
        let held: Vec<usize> = self.order[self.at..end]
            .iter()
            .filter(|&&i| mine.contains(&i))
            .map(|i| i - self.first)
            .collect();
        let (x, y, log_exposure) = gather(self.data, &held);
        let rows = end - self.at;
        self.at = end;
        Ok(Batch {
            x,
            y,
            log_exposure,
            rows,
        })
    }

    fn whole(&self) -> Option<&TrainData> {
        (self.first == 0 && self.data.y.len() == self.n).then_some(self.data)
    }

    fn sums(
        &self,
        model: &ModelFile,
        p: &Params,
        want: Want,
        cache: Option<&mut Vec<Projected>>,
        exec: &Exec,
    ) -> Result<Evaluation> {
        let m = p.m();
        evaluate_at(model, p, chunks(self.data, m, exec), 1.0, want, cache, exec)
    }
}

/// The posterior of q: with u = L v, mean(x*) = k*ᵀ L⁻ᵀ μ and
/// var(x*) = k** − k*ᵀ L⁻ᵀ (I − Σ) L⁻¹ k*.
/// A degenerate family's (f = Kfu Kuu⁻¹ u) has no prior term: var(x*) =
/// k*ᵀ L⁻ᵀ Σ L⁻¹ k*, as the core's degenerate posterior.
pub fn posterior_of(model: &ModelFile, exec: &Exec) -> Result<Posterior> {
    let p = Params::of(model)?;
    let (m, q) = (p.m(), &p.q);
    let factor = factor_of(model, &p, exec)?;
    let degenerate = matches!(p.features, Features::Family(f) if f.degenerate());
    let mut w = DMatrix::from_column_slice(m, 1, q.mean.as_slice());
    linalg::solve_lower_transpose(&factor.l, &mut w, exec.par);
    let mut s = if degenerate {
        -q.covariance()
    } else {
        DMatrix::<f64>::identity(m, m) - q.covariance()
    };
    linalg::solve_lower_transpose(&factor.l, &mut s, exec.par);
    let mut st = s.transpose();
    linalg::solve_lower_transpose(&factor.l, &mut st, exec.par);
    let var_matrix = (&st + st.transpose()) * 0.5;
    Ok(Posterior {
        mean_weights: w.as_slice().to_vec(),
        var_matrix,
        latent_prior: if degenerate {
            LatentPrior::None
        } else {
            LatentPrior::Kernel
        },
    })
}

/// Kuu's jittered factor at the features of `p` (the model gives the rest).
fn factor_of(model: &ModelFile, p: &Params, exec: &Exec) -> Result<Factor> {
    match &p.features {
        Features::Inducing(z) => {
            let kernel = model.kernel();
            let prior = Prior {
                kernel: &*kernel,
                z,
                jitter: model.jitter_policy(),
            };
            Factor::new(&prior, exec.par)
        }
        Features::Family(f) => {
            let (kuu, jitter) = f.kuu(model, exec)?;
            Factor::of_kuu(kuu, jitter, exec.par)
        }
    }
}

impl Method for Svgp {
    fn name(&self) -> &'static str {
        "svgp"
    }
    fn summary(&self) -> &'static str {
        "SVGP: an explicit Gaussian q(u) at m learned inducing inputs, trained on minibatches \
         (--batch, --epochs) by natural-gradient steps and Adam (Hensman, Fusi & Lawrence 2013; \
         Salimbeni et al. 2018); the objective is the negative ELBO"
    }
    fn progress_unit(&self) -> &'static str {
        "minibatch step"
    }
    fn options(&self) -> &'static [&'static str] {
        &[
            "inducing_init",
            "inducing_inputs",
            "batch",
            "epochs",
            "optimizer",
            "nat_step",
            "lr",
            "elbo_every",
            "family",
            "quadrature_points",
        ]
    }
    fn refuses_likelihood(&self, _kind: LikelihoodKind) -> Option<String> {
        // the expected log-likelihood of any likelihood: `svgp/any_likelihood.rs`
        None
    }
    /// Kub, Kuu and the prior diagonal come from the model's `dyn Kernel`, any kernel.
    fn takes_composed_kernel(&self) -> bool {
        true
    }
    fn model_tables(&self) -> &'static [&'static str] {
        &[
            Inducing::NAME,
            VariationalTable::NAME,
            SvgpRecord::NAME,
            FeaturesTable::NAME,
            super::interdomain::InputMean::NAME,
            super::interdomain::Features::NAME,
            super::spectrum::Spectral::NAME,
            super::spectrum::composed::SpectralTerms::NAME,
        ]
    }
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        if let Ok(Some(f)) = features::of_model(model) {
            return f.input_dims(model);
        }
        let mut w = vec![Witness::lengthscales(model)];
        w.extend(Witness::rows(model, Inducing::NAME, "points"));
        w
    }
    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        if let Some(f) = features::of_model(model)? {
            return f.markers(model, input);
        }
        let z = inducing_points(model)?;
        if input >= z.ncols() {
            return Ok(Markers::default());
        }
        Ok(Markers {
            at: z.column(input).iter().copied().collect(),
            sizes: Vec::new(),
            caption: "inducing points".into(),
        })
    }
    fn second_start(&self, _options: &MethodOptions) -> bool {
        false
    }
    fn seed_help(&self) -> &'static str {
        "the inducing inputs start at m training inputs (or k-means centres) chosen with the \
         seed, and the seed shuffles the minibatches"
    }
    fn objective_name(&self, _model: &ModelFile) -> &'static str {
        "negative ELBO"
    }
    /// The full-data negative ELBO every `elbo_every` steps, beside the noisy
    /// minibatch estimates of the trace.
    fn trace_marks(&self, model: &ModelFile) -> TraceMarks {
        let full = model
            .require::<SvgpRecord>()
            .map(|r| r.full_at.into_iter().zip(r.full_neg_elbo).collect())
            .unwrap_or_default();
        TraceMarks {
            full,
            ..TraceMarks::default()
        }
    }
    fn chunked(&self) -> std::result::Result<(), &'static str> {
        Ok(())
    }
    /// Its sums over rows add across processes; a distributed fit trains it on
    /// minibatches drawn as one process draws them (src/distributed.rs).
    fn shares_rows(&self) -> bool {
        true
    }

    fn check_options(
        &self,
        options: &MethodOptions,
        data: DataShape,
        naming: Naming,
    ) -> Result<()> {
        if options.optimizer == Some(SvgpOptimizer::Adam) && options.nat_step.is_some() {
            return Err(Error::input(format!(
                "nat_step{} applies to optimizer natgrad; with adam, Adam trains q(u) as well \
                 ({} sets its rate)",
                naming.flag("nat_step"),
                naming.setting("lr", "0.01")
            )));
        }
        if let Some(f) = options.family.and_then(features::family) {
            let flag = naming.flag("family");
            if options.kernel_expression().is_some() && !f.takes_composed_kernel() {
                return Err(Error::input(format!(
                    "family = {}{flag}: these features take a plain kernel, not one built \
                     from parts (use family pseudo, psds or ssgp with it)",
                    f.name()
                )));
            }
            if let Some(why) = f.refuses_kernel(options.kernel_kind()) {
                return Err(Error::input(format!("family = {}{flag}: {why}", f.name())));
            }
            for key in ["inducing_init", "inducing_inputs"] {
                let given = match key {
                    "inducing_init" => options.inducing_init.is_some(),
                    _ => options.inducing_inputs.is_some(),
                };
                if given {
                    return Err(Error::input(format!(
                        "{key}{} places pseudo-inputs; family = {}{flag} has none",
                        naming.flag(key),
                        f.name()
                    )));
                }
            }
        }
        if let Some(b) = options.batch
            && data.n_train != usize::MAX
            && b > data.n_train
        {
            return Err(Error::input(format!(
                "batch = {b}{}: larger than the training set ({} points)",
                naming.flag("batch"),
                data.n_train
            )));
        }
        Ok(())
    }

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        if let Some(kind) = spec.options.family
            && let Some(f) = features::family(kind)
        {
            let mut model = f.init(data, spec, hyper, ctx, rng)?;
            model.method = self.name().into();
            model.set(&FeaturesTable { family: kind });
            let m = f.check(&model)?;
            set_variational(&mut model, &Variational::prior(m));
            return Ok(model);
        }
        let z = initial_points(&data.x, spec.m, spec.options.inducing_init(), &hyper, rng)?;
        let mut model = ModelFile::new(self.name(), hyper);
        set_inducing_points(&mut model, &z);
        set_variational(&mut model, &Variational::prior(z.nrows()));
        Ok(model)
    }

    /// The family's tables for a kernel built from parts (the spectral points of its
    /// form), and q(v) at the prior over the features they make.
    fn init_for_kernel(
        &self,
        model: &mut ModelFile,
        spec: &ValidRunSpec,
        rng: &mut ChaCha8Rng,
    ) -> Result<()> {
        if let Some(f) = features::of_model(model)? {
            f.init_for_kernel(model, spec, rng)?;
            let m = f.check(model)?;
            set_variational(model, &Variational::prior(m));
        }
        Ok(())
    }

    fn check(&self, model: &ModelFile) -> Result<()> {
        let m = match features::of_model(model)? {
            None => inducing_points(model)?.nrows(),
            Some(f) => {
                features::check_kernel(f, model)?;
                if model.table::<Inducing>()?.is_some() {
                    return Err(Error::at(
                        Location::key(Inducing::NAME),
                        format!(
                            "an svgp model over {} features has no [inducing] points: remove \
                             the table, or [svgp_features] for pseudo-inputs",
                            f.name()
                        ),
                    ));
                }
                f.check(model)?
            }
        };
        variational(model, m)?;
        if let Some(p) = &model.posterior {
            p.check(m)?;
        }
        if model.approx.is_some() || model.alpha.is_some() {
            return Err(Error::input(
                "an svgp model has no approx or alpha (its bound is SVGP's ELBO): remove the key",
            ));
        }
        Ok(())
    }

    /// [log σ0², log ℓ, (log α), σ², Z (m×D, column-major), μ (m), R's lower triangle
    /// (column by column)].
    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        match Params::of(model) {
            Ok(p) => pack_params(model, &p),
            Err(_) => {
                let mut theta = Vec::new();
                pack_hyper(model, &mut theta);
                theta
            }
        }
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        if let Ok(Some(f)) = features::of_model(model) {
            // the model's tables give the number of features
            let m = f.check(model).unwrap_or(0);
            let mut p = Params {
                features: Features::Family(f),
                q: Variational {
                    mean: DVector::zeros(m),
                    chol: DMatrix::zeros(m, m),
                },
            };
            unpack_params(theta, model, &mut p);
            p.write(model);
            return;
        }
        let head = head_len(model) + likelihood_params(model).len();
        let d = model.kernel_dim().max(1);
        // m·D + m + m(m+1)/2 entries follow the head and the likelihood's: solve for m
        let rest = theta.len().saturating_sub(head);
        let m = (0..=rest)
            .find(|&m| m * d + m + m * (m + 1) / 2 >= rest)
            .unwrap_or(0);
        let mut p = Params {
            features: Features::Inducing(DMatrix::zeros(m, d)),
            q: Variational {
                mean: DVector::zeros(m),
                chol: DMatrix::zeros(m, m),
            },
        };
        unpack_params(theta, model, &mut p);
        p.write(model);
    }

    fn objective(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<Objective> {
        let e = full(model, data, Want::All, exec)?;
        Ok(Objective {
            nlml: e.elbo,
            grad: e.grad,
            jitter: e.jitter,
        })
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<f64> {
        Ok(full(model, data, Want::Value, exec)?.elbo)
    }

    fn posterior(
        &self,
        model: &ModelFile,
        _data: &TrainData,
        exec: &Exec,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        Ok((posterior_of(model, exec)?, None))
    }

    /// q(u) starts at the prior whatever Z is, so the given Z replaces the chosen one.
    fn set_inducing_inputs(&self, model: &mut ModelFile, z: &DMatrix<f64>) -> Result<()> {
        if let Some(f) = features::of_model(model)? {
            return Err(Error::input(format!(
                "svgp over {} features has no inducing inputs to start at --inducing-inputs",
                f.name()
            )));
        }
        set_inducing_points(model, z);
        Ok(())
    }

    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Result<DMatrix<f64>> {
        match features::of_model(model)? {
            None => Ok(model.kernel().gram(x, exec.par)),
            Some(f) => f
                .prior_cov(model, x, exec)
                .ok_or_else(|| super::method::full_cov_refused("svgp")),
        }
    }

    fn cross(
        &self,
        model: &ModelFile,
        _basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        if let Some(f) = features::of_model(model)? {
            return f.kuf(model, x, exec);
        }
        let z = inducing_points(model)?;
        let k = model.kernel();
        Ok((k.matrix(&z, x, exec.par), k.diag(x)))
    }

    /// q(u) is over inducing values u = f(Z) (or a family's features of f), so a
    /// summand's posterior is its cross-covariance with u through q's mean and
    /// covariance, as for the collapsed methods (`train::components`).
    fn predicts_summands(&self) -> bool {
        true
    }

    fn summand_cross(
        &self,
        model: &ModelFile,
        one: &ModelFile,
        summand: usize,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        match features::of_model(model)? {
            Some(f) => f.summand_cross(model, one, summand, x, exec),
            None => self.cross(one, basis, x, exec),
        }
    }

    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        train(model, &mut InMemory::new(data), spec, ctx)
    }

    fn fits_rows(&self) -> bool {
        true
    }

    fn fit_rows(
        &self,
        model: ModelFile,
        rows: RowSource<'_>,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        match rows {
            RowSource::Memory { data, first, n } => {
                train(model, &mut InMemory::stripe(data, first, n), spec, ctx)
            }
            RowSource::File(file) => train(model, file, spec, ctx),
        }
    }

    fn end_without_rows(&self, model: &ModelFile, exec: &Exec) -> Result<(Posterior, f64)> {
        let p = Params::of(model)?;
        let jitter = Sums::new(model, &p, Want::Value, exec)?.finish()?.jitter;
        Ok((posterior_of(model, exec)?, jitter))
    }
}
