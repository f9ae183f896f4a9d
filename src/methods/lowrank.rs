//! Feature family × approximation = one low-rank method.
//!
//! A [`Family`] knows only its parameters: how to start them, how to pack them, how to
//! build (Kuf, Kuu, kdiag) from them at some inputs, and how to pull the likelihood
//! core's adjoints back to them. [`LowRankMethod`] pairs a family with an
//! approximation and implements [`Method`] once for all of them: objective, gradient,
//! posterior, prediction, staged fits and model checks go through this file and
//! `collapsed/`, never through a copy.

use super::hyper;
pub mod ep;
use super::method::{Markers, Method, Objective, TraceMarks, TypedModel, ValidRunSpec};
use super::shared_rows::SharedEval;
use crate::collapsed::{
    self, Accumulator, Adjoints, Approx, Backward, ChunkValues, Kuu, LowRank, Posterior, Summary,
    Work,
};
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::{Evaluation, Exec};
use crate::kernel::KernelKind;
use crate::likelihoods::LikelihoodKind;
use crate::linalg::Jitter;
use crate::model_file::{Hyper, ModelFile, Witness};
use crate::optim::Outcome;
use crate::params::{self, ParamLayout, TailBlock};
use crate::run_context::RunContext;
use crate::run_spec::{ApproxKind, DataShape, MethodOptions, Naming, RunSpec};
use crate::scratch::Scratch;
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use std::borrow::Cow;
use std::ops::Range;

/// Kuu as a family builds it.
#[derive(Clone, Debug)]
pub enum KuuMatrix {
    Dense(DMatrix<f64>),
    /// The diagonal of a diagonal Kuu (the core's fast path: no triangular solves).
    Diagonal(Vec<f64>),
}

/// What a family builds for one evaluation at some inputs.
#[derive(Clone, Debug)]
pub struct Parts {
    /// m×n: column i holds the covariances of input i with the m features.
    pub kuf: DMatrix<f64>,
    pub kuu: KuuMatrix,
    /// Prior variances k(x_i, x_i).
    pub kdiag: Vec<f64>,
    pub jitter: Jitter,
}

impl Parts {
    /// Give the parts' memory back.
    pub fn recycle(self, scratch: &Scratch) {
        scratch.give_matrix(self.kuf);
        match self.kuu {
            KuuMatrix::Dense(k) => scratch.give_matrix(k),
            KuuMatrix::Diagonal(k) => scratch.give(k),
        }
        scratch.give(self.kdiag);
    }

    /// Kuu of a family that builds it dense.
    pub fn dense_kuu(&self) -> Result<&DMatrix<f64>> {
        match &self.kuu {
            KuuMatrix::Dense(k) => Ok(k),
            KuuMatrix::Diagonal(_) => Err(Error::numerical(
                "internal: a dense Kuu was expected but the family built a diagonal one",
            )),
        }
    }

    pub fn low_rank(&self, noise: f64, approx: Approx) -> LowRank<'_> {
        LowRank {
            kuf: &self.kuf,
            kuu: match &self.kuu {
                KuuMatrix::Dense(k) => Kuu::Dense(k),
                KuuMatrix::Diagonal(k) => Kuu::Diagonal(k),
            },
            approx,
            kdiag: &self.kdiag,
            noise,
            jitter: self.jitter,
        }
    }
}

/// What an evaluation reads of a model: the family's parameters and the noise as typed
/// values ([`Family::State`]), read from the model file once, or the model file itself
/// for a family that reads its tables on every evaluation.
pub trait FamilyState: Clone + Send + Sync + 'static {
    /// The Gaussian noise variance σ² the core adds.
    fn noise_variance(&self) -> f64;
    /// The state of a model whose state is the model file itself (None for typed states).
    fn of_model(model: &ModelFile) -> Option<&Self>;
    /// The model file, where the state is one.
    fn as_model(&self) -> Option<&ModelFile>;
    /// The model file, where the state is one.
    fn as_model_mut(&mut self) -> Option<&mut ModelFile>;
}

/// The state of the families not yet converted to typed values: the model file, read
/// through its tables (and their caches) on every evaluation.
impl FamilyState for ModelFile {
    fn noise_variance(&self) -> f64 {
        self.hyper.noise_variance
    }
    fn of_model(model: &ModelFile) -> Option<&ModelFile> {
        Some(model)
    }
    fn as_model(&self) -> Option<&ModelFile> {
        Some(self)
    }
    fn as_model_mut(&mut self) -> Option<&mut ModelFile> {
        Some(self)
    }
}

/// The error of a typed state asked for its model file (a family whose `State` is
/// typed overrides the defaults that need one).
fn no_model() -> Error {
    Error::input("internal: the family's typed state has no model file to read")
}

/// A family of inducing features: parameters ↔ (Kuf, Kuu, kdiag).
pub trait Family: Send + Sync + 'static {
    /// What [`Family::parts`] computes on the way that [`Family::pull_back`] reuses
    /// (e.g. the sines beside the cosines of frequency features).
    type Extra: Send;
    /// The parameters an evaluation reads ([`FamilyState`]): `ModelFile` for a family
    /// that reads its tables on every evaluation, else its own typed values, which an
    /// L-BFGS fit reads once and unpacks θ into (no model file inside the loop).
    type State: FamilyState;

    /// The state of `model`: the model itself where the state is the model file; read
    /// into typed values (memory from `scratch`, given back by
    /// [`Family::recycle_state`]) otherwise.
    fn state<'a>(&self, model: &'a ModelFile, _scratch: &Scratch) -> Result<Cow<'a, Self::State>> {
        Self::State::of_model(model)
            .map(Cow::Borrowed)
            .ok_or_else(no_model)
    }
    /// Give a state read by [`Family::state`] back to `scratch`.
    fn recycle_state(&self, _state: Cow<'_, Self::State>, _scratch: &Scratch) {}
    /// The number of features m of a state (what [`Family::check`] returns for its model).
    fn size(&self, state: &Self::State) -> Result<usize> {
        self.check(state.as_model().ok_or_else(no_model)?)
    }
    /// θ (in [`Family::pack`]'s order) into a state, as [`Family::unpack`] into a model.
    fn unpack_state(&self, theta: &[f64], state: &mut Self::State) {
        if let Some(model) = state.as_model_mut() {
            self.unpack(theta, model);
        }
    }
    /// Put the values of `layout`'s fixed blocks in `start` into `state` exactly (θ
    /// passed through a logarithm and back may move them by a rounding).
    fn hold_fixed_state(&self, layout: &ParamLayout, start: &Self::State, state: &mut Self::State) {
        if let (Some(from), Some(to)) = (start.as_model(), state.as_model_mut()) {
            layout.hold_fixed(from, to);
        }
    }

    /// A new model with the starting hyperparameters and the family's tables for
    /// m = `spec.m` features.
    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile>;
    /// Whether `init` draws from the seed with these options ([`Method::init_uses_seed`]).
    fn init_uses_seed(&self, _options: &MethodOptions) -> bool {
        true
    }
    /// Whether a fit also runs from a start fitted on a subset ([`Method::second_start`]).
    fn second_start(&self, _options: &MethodOptions) -> bool {
        true
    }
    /// What the seed does in `init` ([`Method::seed_help`]).
    fn seed_help(&self) -> &'static str {
        "the initialisation draws from the seed"
    }
    /// Why the family cannot use kernel `kind`, if it cannot ([`Method::refuses_kernel`]).
    fn refuses_kernel(&self, _kind: KernelKind) -> Option<String> {
        None
    }
    /// Whether the family takes a kernel built from parts ([`Method::takes_composed_kernel`]).
    fn takes_composed_kernel(&self) -> bool {
        false
    }
    /// Whether its features are the kernel's values at points ([`Method::predicts_summands`]).
    fn predicts_summands(&self) -> bool {
        false
    }
    /// The blocks the family packs after the shared ones ([`Method::tail_blocks`]); by
    /// default all of them as one block `features`.
    fn tail_blocks(&self) -> &'static [TailBlock] {
        std::slice::from_ref(&params::REST)
    }
    /// Whether the fit is L-BFGS over the packed parameters ([`Method::fits_by_lbfgs`]):
    /// true unless the family trains its own way.
    fn fits_by_lbfgs(&self, _options: &MethodOptions) -> bool {
        true
    }
    /// Check the family's tables; returns the number of features m.
    fn check(&self, model: &ModelFile) -> Result<usize>;
    /// The free parameters as one vector: [log σ0², log ℓ, log σ²] then the family's.
    fn pack(&self, model: &ModelFile) -> Vec<f64>;
    fn unpack(&self, theta: &[f64], model: &mut ModelFile);
    /// (Kuf, Kuu, kdiag) at inputs `x` (n×D, model units); `for_gradient` asks for
    /// the extras `pull_back` needs.
    fn parts(
        &self,
        state: &Self::State,
        x: &DMatrix<f64>,
        for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, Self::Extra)>;
    /// The gradient in `pack` order from the core's adjoints at the same inputs.
    fn pull_back(
        &self,
        state: &Self::State,
        x: &DMatrix<f64>,
        parts: &Parts,
        extra: Self::Extra,
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>>;
    /// The arithmetic of the family's part of one evaluation on n points whose Kuf
    /// is built `builds` times per point on average (twice where a chunk is computed
    /// again): building Kuf and Kuu and pulling their adjoints back, in multiply-adds
    /// (see `collapsed::Work`). None where it has not been counted.
    fn feature_work(&self, _model: &ModelFile, _n: usize, _builds: f64) -> Option<f64> {
        None
    }
    /// [`Family::pull_back`] added into `grad` (an empty `grad` first becomes zeros of
    /// the packed length): the chunk loop's form, which families whose pull-back
    /// needs no vector of its own implement to allocate nothing.
    #[allow(clippy::too_many_arguments)] // pull_back's arguments and the sums
    fn pull_back_into(
        &self,
        state: &Self::State,
        x: &DMatrix<f64>,
        parts: &Parts,
        extra: Self::Extra,
        adj: &Adjoints,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<()> {
        let g = self.pull_back(state, x, parts, extra, adj, exec)?;
        if grad.is_empty() {
            grad.resize(g.len(), 0.0);
        }
        grad.iter_mut().zip(g).for_each(|(a, b)| *a += b);
        Ok(())
    }
    /// Give what [`Family::parts`] built on the way back to `scratch` when it is not
    /// pulled back (families that build theirs from it).
    fn recycle(&self, _extra: Self::Extra, _scratch: &Scratch) {}
    /// What one step of the fit counts ([`Method::progress_unit`]).
    fn progress_unit(&self) -> &'static str {
        "iteration"
    }
    /// A degenerate model (SSGP, EigenGP): the prior variance is k*ᵀKuu⁻¹k*.
    fn degenerate(&self) -> bool {
        false
    }
    /// Stages of a schedule as ranges of packed entries (empty: one joint fit).
    fn stages(&self, _spec: &RunSpec, _model: &ModelFile) -> Vec<Range<usize>> {
        Vec::new()
    }
    /// Checks of the family's own options (e.g. a required `dims`, at most D), see
    /// [`Method::check_options`].
    fn check_options(
        &self,
        _options: &MethodOptions,
        _data: DataShape,
        _naming: Naming,
    ) -> Result<()> {
        Ok(())
    }
    /// Whether the model has `[hyper] lengthscales` (see [`Method::uses_lengthscales`]).
    fn uses_lengthscales(&self) -> bool {
        true
    }
    /// Whether its fit only evaluates the method's objective (see
    /// [`Method::shares_rows`]): not where a schedule fits another method on the way.
    fn shares_rows(&self) -> bool {
        true
    }
    /// The names of the family's own tables: each a [`ModelTable`](crate::model_file::ModelTable) it declares, reads
    /// and writes (see [`Method::model_tables`]).
    fn tables(&self) -> &'static [&'static str];
    /// What holds one value per input (see [`Method::input_dims`]): by default the
    /// lengthscales.
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        vec![Witness::lengthscales(model)]
    }
    /// Replace the inducing inputs `init` chose ([`Method::set_inducing_inputs`]); None
    /// where the family has none.
    fn set_inducing_inputs(&self, _model: &mut ModelFile, _z: &DMatrix<f64>) -> Option<()> {
        None
    }
    /// The prior covariance k(X*, X*) of the latent function ([`Method::prior_cov`]);
    /// None where the family does not compute it (a degenerate family needs none).
    fn prior_cov(
        &self,
        _model: &ModelFile,
        _x: &DMatrix<f64>,
        _exec: &Exec,
    ) -> Option<DMatrix<f64>> {
        None
    }
    /// What the prediction chart marks along `input` (see [`Method::markers`]).
    fn markers(&self, _model: &ModelFile, _input: usize) -> Result<Markers> {
        Ok(Markers::default())
    }
    /// What a fitted model adds to its evidence curve ([`Method::trace_marks`]).
    fn trace_marks(&self, _model: &ModelFile) -> TraceMarks {
        TraceMarks::default()
    }
    /// Fit `method` (this family with its approximation) from `model`: one joint fit,
    /// or the stages of [`Family::stages`]. Families whose schedule changes the model's
    /// tables between stages (EigenGP's sequential rounds) override it.
    fn fit(
        &self,
        method: &LowRankMethod<Self>,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)>
    where
        Self: Sized,
    {
        let stages = self.stages(spec, &model);
        if stages.is_empty() {
            hyper::fit_all(method, model, data, spec.iters, ctx)
        } else {
            hyper::fit_stages(method, model, data, &stages, spec.iters, ctx)
        }
    }
}

/// Which approximation a method uses.
#[derive(Clone, Copy, Debug)]
pub enum ApproxChoice {
    /// Always this one (fitc, vfe, dtc, pep; the spectral methods, where every
    /// approximation is DTC because their diagonal d is zero).
    Fixed(ApproxKind),
    /// `--approx` chooses, this is the default (the inter-domain methods).
    Option(ApproxKind),
}

/// Default α of power EP (Bui et al.'s recommended middle ground).
pub const DEFAULT_ALPHA: f64 = 0.5;

/// The largest m a method accepts.
#[derive(Clone, Copy, Debug)]
pub enum MaxM {
    /// At most the number of training points.
    TrainingSize,
    /// At most this many, whatever n (a 2r×2r system for r spectral points).
    Fixed(usize),
}

/// A feature family with an approximation: one registered method.
pub struct LowRankMethod<F: Family> {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub m_meaning: &'static str,
    /// The options the method reads besides the general ones.
    pub options: &'static [&'static str],
    pub approx: ApproxChoice,
    pub max_m: MaxM,
    pub family: F,
}

impl<F: Family> LowRankMethod<F> {
    /// The approximation kind of a run's options.
    fn kind_of(&self, options: &MethodOptions) -> ApproxKind {
        match self.approx {
            ApproxChoice::Fixed(k) => k,
            ApproxChoice::Option(default) => options.approx.unwrap_or(default),
        }
    }

    /// The approximation of a model, from its `approx` and `alpha` keys.
    pub fn approx_of(&self, model: &ModelFile) -> Result<Approx> {
        let kind = match (self.approx, model.approx) {
            (ApproxChoice::Fixed(k), None) => k,
            (ApproxChoice::Fixed(k), Some(m)) if m == k => k,
            (ApproxChoice::Fixed(k), Some(m)) => {
                return Err(Error::input(format!(
                    "approx = \"{}\" does not apply to method '{}' (it is always {}); \
                     remove the key or change the method",
                    m.name(),
                    self.name,
                    k.name()
                )));
            }
            (ApproxChoice::Option(default), m) => m.unwrap_or(default),
        };
        let approx = match kind {
            ApproxKind::Fitc => Approx::Fitc,
            ApproxKind::Dtc => Approx::Dtc,
            ApproxKind::Vfe => Approx::Vfe,
            ApproxKind::Pep => Approx::Pep {
                alpha: model.alpha.ok_or_else(|| {
                    Error::input("a power-EP model needs its alpha (e.g. alpha = 0.5)")
                })?,
            },
        };
        if kind != ApproxKind::Pep && model.alpha.is_some() {
            return Err(Error::input(format!(
                "alpha applies to power EP only, not to {}",
                kind.name()
            )));
        }
        approx.check()
    }

    /// The chunks of rows when the data are too large for one evaluation
    /// (`Exec::chunk_entries`); None when they fit.
    fn chunks(&self, state: &F::State, n: usize, exec: &Exec) -> Result<Option<Chunks>> {
        let rows = exec.chunk_rows(self.family.size(state)?);
        Ok((n > rows).then_some(Chunks { n, rows }))
    }

    /// The first pass over the data chunk by chunk: the summary the objective and the
    /// posterior come from, with Kuf built and dropped one chunk at a time.
    fn summary_in_chunks(
        &self,
        state: &F::State,
        data: &TrainData,
        chunks: Chunks,
        approx: Approx,
        exec: &Exec,
        shared: Option<&SharedEval>,
    ) -> Result<Summary> {
        let mut acc: Option<Accumulator> = None;
        for k in 0..chunks.len() {
            self.first_pass(state, data, chunks.get(k), approx, exec, &mut acc)?;
        }
        let mut acc = acc.ok_or_else(|| Error::input("no data"))?;
        if let Some(shared) = shared {
            shared.first(&mut acc)?;
        }
        acc.finish(exec)
    }

    /// The first pass over the rows of every process of `exec.share`, announced by the
    /// root as `what`: the summary of all the rows.
    fn shared_summary(
        &self,
        model: &ModelFile,
        data: &TrainData,
        approx: Approx,
        exec: &Exec,
        what: Evaluation,
    ) -> Result<Summary> {
        let share = exec
            .share
            .as_deref()
            .ok_or_else(|| Error::input("internal: no processes to share the rows with"))?;
        let (m, params) = (self.family.check(model)?, self.family.pack(model).len());
        if share.is_root() {
            share.announce(what, model)?;
        }
        let shared = SharedEval::new(share, m, params, approx);
        let chunks = Chunks::of(data.y.len(), exec, m);
        let state = self.family.state(model, &exec.scratch)?;
        let summary = self
            .summary_in_chunks(&state, data, chunks, approx, exec, Some(&shared))
            .map_err(|e| shared.failed(e, 1));
        self.family.recycle_state(state, &exec.scratch);
        summary
    }

    /// One chunk's first pass, building and dropping its parts.
    fn first_pass(
        &self,
        state: &F::State,
        data: &TrainData,
        rows: Range<usize>,
        approx: Approx,
        exec: &Exec,
        acc: &mut Option<Accumulator>,
    ) -> Result<()> {
        let s = &exec.scratch;
        let x = rows_in(&data.x, &rows, s);
        let (parts, extra) = self.family.parts(state, &x, false, exec)?;
        let lr = parts.low_rank(state.noise_variance(), approx);
        let acc = match acc {
            Some(a) => a,
            None => acc.insert(new_accumulator(&lr, approx, exec)?),
        };
        acc.add(&lr, &data.y[rows], exec, false)?;
        self.family.recycle(extra, s);
        parts.recycle(s);
        s.give_matrix(x);
        Ok(())
    }

    /// The objective and gradient chunk by chunk: two passes over the data, each
    /// chunk's Kuf built, used and dropped in each. The family's pull-back is linear in
    /// the adjoints, so it is applied per chunk (∂/∂Kuf, ∂/∂kdiag) and once more at no
    /// data for what sums over them (∂/∂Kuu, ∂/∂σ²).
    ///
    /// The last chunks of the first pass are kept for the second (their inputs, parts
    /// and, for FITC and power EP, V), as many as `exec.memory_budget` allows besides
    /// the chunk in hand when the first pass ends, which costs nothing to keep; the
    /// second pass runs backwards, so it uses them first and frees them before it
    /// computes any other chunk again. Kept or computed again, a chunk's values are the
    /// same bits, so the budget changes the time, never the result. (The kept chunks
    /// live in the frames of [`LowRankMethod::kept_passes`], not in a list: an
    /// evaluation allocates nothing of its own.) Returns the objective and the jitter;
    /// the gradient goes into `grad`. With `shared`, the sums of each pass are added
    /// across processes before the pass finishes.
    #[allow(clippy::too_many_arguments)] // the evaluation's inputs and where its sums go
    fn objective_in_chunks(
        &self,
        state: &F::State,
        data: &TrainData,
        chunks: Chunks,
        approx: Approx,
        exec: &Exec,
        grad: &mut Vec<f64>,
        shared: Option<&SharedEval>,
    ) -> Result<(f64, f64)> {
        let s = &exec.scratch;
        let m = self.family.size(state)?;
        let kept_from = chunks.len() - kept_chunks(chunks, m, data.x.ncols(), approx, exec);
        let mut acc: Option<Accumulator> = None;
        for k in 0..kept_from {
            self.first_pass(state, data, chunks.get(k), approx, exec, &mut acc)?;
        }
        let mut back = None;
        self.kept_passes(
            kept_from, chunks, state, data, approx, exec, &mut acc, &mut back, grad, shared,
        )?;
        let (mut back, nlml) = back.ok_or_else(|| Error::input("no data"))?;
        let jitter = back.summary().jitter();
        for k in (0..kept_from).rev() {
            let rows = chunks.get(k);
            let x = rows_in(&data.x, &rows, s);
            let (parts, extra) = self.family.parts(state, &x, true, exec)?;
            self.second_pass(
                state, data, rows, &x, parts, extra, None, nlml, &mut back, exec, grad,
            )?;
            s.give_matrix(x);
        }
        if let Some(shared) = shared {
            shared.second(&mut back, grad)?;
        }
        let (d_kuu, d_noise) = back.finish(exec);
        let none = s.matrix(0, data.x.ncols());
        let (parts, extra) = self.family.parts(state, &none, true, exec)?;
        let adj = Adjoints {
            nlml,
            jitter,
            d_kuf: s.matrix(m, 0),
            d_kuu,
            d_kdiag: s.take(0),
            d_noise,
        };
        self.family
            .pull_back_into(state, &none, &parts, extra, &adj, exec, grad)?;
        adj.recycle(s);
        parts.recycle(s);
        s.give_matrix(none);
        Ok((nlml, jitter))
    }

    /// The kept chunks k.. of [`LowRankMethod::objective_in_chunks`]: chunk k's first
    /// pass, the later chunks' both passes (by recursion), then chunk k's second pass,
    /// with its inputs, parts and values still in this frame. At the end of the chunks
    /// the first pass is complete: `back` gets the second pass's start and the objective.
    #[allow(clippy::too_many_arguments)] // the evaluation's state, threaded through
    fn kept_passes(
        &self,
        k: usize,
        chunks: Chunks,
        state: &F::State,
        data: &TrainData,
        approx: Approx,
        exec: &Exec,
        acc: &mut Option<Accumulator>,
        back: &mut Option<(Backward, f64)>,
        grad: &mut Vec<f64>,
        shared: Option<&SharedEval>,
    ) -> Result<()> {
        let s = &exec.scratch;
        if k == chunks.len() {
            let mut acc = acc.take().ok_or_else(|| Error::input("no data"))?;
            if let Some(shared) = shared {
                shared.first(&mut acc)?;
            }
            let summary = acc.finish(exec)?;
            let nlml = summary.nlml_in(s);
            if !nlml.is_finite() {
                summary.recycle(s);
                return Err(Error::numerical("the NLML is not finite"));
            }
            *back = Some((Backward::new(summary, exec), nlml));
            return Ok(());
        }
        let rows = chunks.get(k);
        let x = rows_in(&data.x, &rows, s);
        let (parts, extra) = self.family.parts(state, &x, true, exec)?;
        let values = {
            let lr = parts.low_rank(state.noise_variance(), approx);
            let acc = match acc {
                Some(a) => a,
                None => acc.insert(new_accumulator(&lr, approx, exec)?),
            };
            acc.add(&lr, &data.y[rows.clone()], exec, true)?
        };
        self.kept_passes(
            k + 1,
            chunks,
            state,
            data,
            approx,
            exec,
            acc,
            back,
            grad,
            shared,
        )?;
        let (b, nlml) = back.as_mut().ok_or_else(|| Error::input("no data"))?;
        let nlml = *nlml;
        self.second_pass(
            state, data, rows, &x, parts, extra, values, nlml, b, exec, grad,
        )?;
        s.give_matrix(x);
        Ok(())
    }

    /// One chunk's second pass and the family's pull-back of its adjoints into `grad`.
    #[allow(clippy::too_many_arguments)] // the chunk and the evaluation's state
    fn second_pass(
        &self,
        state: &F::State,
        data: &TrainData,
        rows: Range<usize>,
        x: &DMatrix<f64>,
        parts: Parts,
        extra: F::Extra,
        values: Option<ChunkValues>,
        nlml: f64,
        back: &mut Backward,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<()> {
        let s = &exec.scratch;
        let approx = back.summary().approx();
        let lr = parts.low_rank(state.noise_variance(), approx);
        let (d_kuf, d_kdiag) = back.chunk(&lr, &data.y[rows], values, exec)?;
        let m = d_kuf.nrows();
        let adj = Adjoints {
            nlml,
            jitter: back.summary().jitter(),
            d_kuf,
            d_kuu: s.zero_matrix(m, m),
            d_kdiag,
            d_noise: 0.0,
        };
        self.family
            .pull_back_into(state, x, &parts, extra, &adj, exec, grad)?;
        adj.recycle(s);
        parts.recycle(s);
        Ok(())
    }
}

impl<F: Family> LowRankMethod<F> {
    /// A typed model from a state built in code (e.g. with a kernel no model file
    /// names), evaluated with `approx`: what [`Method::typed_fit`] reads from a model.
    pub fn typed_from(&self, state: F::State, approx: Approx) -> Box<dyn TypedModel + '_> {
        Box::new(TypedLowRank {
            method: self,
            approx,
            ep: false,
            start: state.clone(),
            state,
        })
    }

    /// The objective and its gradient (into `grad`) at a state, on this process's rows:
    /// in one piece or chunk by chunk. Returns the objective and the jitter.
    fn objective_of(
        &self,
        state: &F::State,
        data: &TrainData,
        approx: Approx,
        ep: bool,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        let s = &exec.scratch;
        grad.clear();
        if ep {
            let fit = ep::fit(
                &self.family,
                state,
                &data.x,
                &data.y,
                approx,
                &Default::default(),
                None,
                exec,
            )?;
            *grad = fit.grad;
            return Ok((fit.nlz, fit.jitter));
        }
        let (nlml, jitter) = match self.chunks(state, data.y.len(), exec)? {
            Some(chunks) => {
                self.objective_in_chunks(state, data, chunks, approx, exec, grad, None)?
            }
            None => {
                let (parts, extra) = self.family.parts(state, &data.x, true, exec)?;
                let lr = parts.low_rank(state.noise_variance(), approx);
                let adj = collapsed::nlml_and_adjoints(&lr, &data.y, exec)?;
                self.family
                    .pull_back_into(state, &data.x, &parts, extra, &adj, exec, grad)?;
                let out = (adj.nlml, adj.jitter);
                adj.recycle(s);
                parts.recycle(s);
                out
            }
        };
        if grad.iter().any(|v| !v.is_finite()) {
            return Err(Error::numerical(format!(
                "{}: the gradient is not finite",
                self.name
            )));
        }
        Ok((nlml, jitter))
    }
}

/// A low-rank model held as its family's typed state through an L-BFGS fit: θ is
/// unpacked into the state, never into a model file.
struct TypedLowRank<'a, F: Family> {
    method: &'a LowRankMethod<F>,
    approx: Approx,
    /// Fitted by expectation propagation (the bernoulli likelihood).
    ep: bool,
    /// The state the fit started from: where fixed blocks are held.
    start: F::State,
    state: F::State,
}

impl<F: Family> TypedModel for TypedLowRank<'_, F> {
    fn unpack(&mut self, theta: &[f64], layout: &ParamLayout) {
        let family = &self.method.family;
        family.unpack_state(theta, &mut self.state);
        if layout.any_fixed() {
            family.hold_fixed_state(layout, &self.start, &mut self.state);
        }
    }

    fn objective_into(
        &self,
        data: &TrainData,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        self.method
            .objective_of(&self.state, data, self.approx, self.ep, exec, grad)
    }
}

/// n rows cut into chunks of `rows` (the last one shorter).
#[derive(Clone, Copy, Debug)]
struct Chunks {
    n: usize,
    rows: usize,
}

impl Chunks {
    /// n rows in chunks of `exec.chunk_rows(m)`.
    fn of(n: usize, exec: &Exec, m: usize) -> Chunks {
        Chunks {
            n,
            rows: exec.chunk_rows(m),
        }
    }

    fn len(&self) -> usize {
        self.n.div_ceil(self.rows)
    }

    fn get(&self, k: usize) -> Range<usize> {
        let first = k * self.rows;
        first..(first + self.rows).min(self.n)
    }
}

/// The most chunks the first pass keeps for the second, whatever the budget: each
/// is a frame of [`LowRankMethod::kept_passes`] on the stack.
const MAX_KEPT: usize = 256;

/// Bytes a chunk of `rows` rows holds while it is kept: Kuf (and V where the second
/// pass needs it), its inputs, and its n-vectors. (A family's extras, such as the
/// sines of the frequency features, are not counted: they are at most another Kuf.)
fn kept_bytes(rows: usize, m: usize, d: usize, approx: Approx) -> usize {
    let matrices = if approx.per_point_lambda() { 2 } else { 1 };
    8 * rows * (m * matrices + d + 4)
}

/// How many chunks (the last ones) the first pass keeps for the second: the one in
/// hand when it ends, and as many more as the memory budget holds.
fn kept_chunks(chunks: Chunks, m: usize, d: usize, approx: Approx, exec: &Exec) -> usize {
    let mut spent = 0;
    let mut count = 1;
    for k in (0..chunks.len().saturating_sub(1)).rev() {
        spent += kept_bytes(chunks.get(k).len(), m, d, approx);
        if spent > exec.memory_budget || count == MAX_KEPT {
            break;
        }
        count += 1;
    }
    count.min(chunks.len())
}

/// A new accumulator for `lr`'s Kuu and settings; without A's identity on a process
/// other than the root of a shared evaluation (the identity is counted once).
fn new_accumulator(lr: &LowRank, approx: Approx, exec: &Exec) -> Result<Accumulator> {
    let acc = Accumulator::new(lr.kuu, lr.jitter, approx, lr.noise, exec)?;
    Ok(match exec.share.as_deref() {
        Some(share) if !share.is_root() => acc.without_identity(),
        _ => acc,
    })
}

/// Rows `rows` of x as a matrix of their own, in memory from `scratch`.
fn rows_in(x: &DMatrix<f64>, rows: &Range<usize>, scratch: &Scratch) -> DMatrix<f64> {
    let mut out = scratch.matrix(rows.len(), x.ncols());
    out.copy_from(&x.rows(rows.start, rows.len()));
    out
}

impl<F: Family> Method for LowRankMethod<F> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn aliases(&self) -> &'static [&'static str] {
        self.aliases
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn m_meaning(&self) -> &'static str {
        self.m_meaning
    }
    fn options(&self) -> &'static [&'static str] {
        self.options
    }
    fn progress_unit(&self) -> &'static str {
        self.family.progress_unit()
    }
    fn uses_lengthscales(&self) -> bool {
        self.family.uses_lengthscales()
    }
    fn shares_rows(&self) -> bool {
        self.family.shares_rows()
    }
    fn model_tables(&self) -> &'static [&'static str] {
        self.family.tables()
    }
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        self.family.input_dims(model)
    }
    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        self.family.markers(model, input)
    }
    fn set_inducing_inputs(&self, model: &mut ModelFile, z: &DMatrix<f64>) -> Result<()> {
        self.family.set_inducing_inputs(model, z).ok_or_else(|| {
            Error::input(format!(
                "method '{}' has no inducing inputs to start at --inducing-inputs",
                self.name
            ))
        })
    }
    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Result<DMatrix<f64>> {
        self.family
            .prior_cov(model, x, exec)
            .ok_or_else(|| super::method::full_cov_refused(self.name))
    }
    fn trace_marks(&self, model: &ModelFile) -> TraceMarks {
        self.family.trace_marks(model)
    }
    fn max_m(&self, n_train: usize) -> usize {
        match self.max_m {
            MaxM::TrainingSize => n_train,
            MaxM::Fixed(k) => k,
        }
    }
    fn check_options(
        &self,
        options: &MethodOptions,
        data: DataShape,
        naming: Naming,
    ) -> Result<()> {
        if options.alpha.is_some() && self.kind_of(options) != ApproxKind::Pep {
            return Err(Error::input(format!(
                "alpha{} applies to power EP only; method '{}' uses {}",
                naming.flag("alpha"),
                self.name,
                self.kind_of(options).name()
            )));
        }
        self.family.check_options(options, data, naming)
    }
    fn refuses_kernel(&self, kind: KernelKind) -> Option<String> {
        self.family.refuses_kernel(kind)
    }
    fn takes_composed_kernel(&self) -> bool {
        self.family.takes_composed_kernel()
    }
    fn predicts_summands(&self) -> bool {
        self.family.predicts_summands()
    }
    fn objective_name(&self, model: &ModelFile) -> &'static str {
        if matches!(ep::uses_ep(model), Ok(true)) {
            return "negative EP log evidence";
        }
        self.approx_of(model).map_or("NLML", Approx::objective_name)
    }
    /// The Gaussian likelihood through the core; the bernoulli (probit) through
    /// expectation propagation with FITC, DTC or power EP ([`ep`]).
    fn refuses_likelihood(&self, kind: LikelihoodKind) -> Option<String> {
        match (kind, self.approx) {
            (LikelihoodKind::Bernoulli, ApproxChoice::Fixed(ApproxKind::Vfe)) => Some(
                "expectation propagation runs with FITC, DTC or power EP, not VFE's bound (use --method fitc, dtc or pep, or svgp for a variational classifier)"
                    .to_string(),
            ),
            (LikelihoodKind::Bernoulli, _) => None,
            (kind, _) => super::method::gaussian_only(kind),
        }
    }
    fn corrects_diagonal(&self, model: &ModelFile) -> bool {
        matches!(self.approx_of(model), Ok(Approx::Fitc | Approx::Pep { .. }))
    }
    fn init_uses_seed(&self, options: &MethodOptions) -> bool {
        self.family.init_uses_seed(options)
    }
    fn second_start(&self, options: &MethodOptions) -> bool {
        self.family.second_start(options)
    }
    fn seed_help(&self) -> &'static str {
        self.family.seed_help()
    }

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let mut model = self.family.init(data, spec, hyper, ctx, rng)?;
        model.method = self.name.to_string();
        let kind = self.kind_of(&spec.options);
        if let ApproxChoice::Option(default) = self.approx
            && kind != default
        {
            model.approx = Some(kind);
        }
        if kind == ApproxKind::Pep {
            model.alpha = Some(spec.options.alpha.unwrap_or(DEFAULT_ALPHA));
        }
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<()> {
        self.approx_of(model)?;
        let m = self.family.check(model)?;
        if let Some(p) = &model.posterior {
            p.check(m)?;
        }
        Ok(())
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        self.family.pack(model)
    }

    fn tail_blocks(&self) -> &'static [TailBlock] {
        self.family.tail_blocks()
    }

    fn fits_by_lbfgs(&self, options: &MethodOptions) -> bool {
        self.family.fits_by_lbfgs(options)
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        self.family.unpack(theta, model)
    }

    fn objective(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<Objective> {
        let mut grad = Vec::new();
        let (nlml, jitter) = self.objective_into(model, data, exec, &mut grad)?;
        Ok(Objective { nlml, grad, jitter })
    }

    fn objective_into(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        let approx = self.approx_of(model)?;
        let s = &exec.scratch;
        if ep::uses_ep(model)? {
            ep::refuse_shared(exec)?;
        }
        if let Some(share) = exec.share.as_deref() {
            grad.clear();
            let (m, params) = (self.family.check(model)?, self.family.pack(model).len());
            if share.is_root() {
                share.announce(Evaluation::Gradient, model)?;
            }
            let shared = SharedEval::new(share, m, params, approx);
            let chunks = Chunks::of(data.y.len(), exec, m);
            let state = self.family.state(model, s)?;
            let out = self
                .objective_in_chunks(&state, data, chunks, approx, exec, grad, Some(&shared))
                .map_err(|e| shared.failed(e, 2));
            self.family.recycle_state(state, s);
            return out;
        }
        let state = self.family.state(model, s)?;
        let out = self.objective_of(&state, data, approx, ep::uses_ep(model)?, exec, grad);
        self.family.recycle_state(state, s);
        out
    }

    fn typed_fit<'a>(&'a self, model: &ModelFile) -> Option<Box<dyn TypedModel + 'a>> {
        let approx = self.approx_of(model).ok()?;
        let ep = ep::uses_ep(model).ok()?;
        let state = self
            .family
            .state(model, &Scratch::default())
            .ok()?
            .into_owned();
        if state.as_model().is_some() {
            return None;
        }
        Some(Box::new(TypedLowRank {
            method: self,
            approx,
            ep,
            start: state.clone(),
            state,
        }))
    }

    fn work(&self, model: &ModelFile, n: usize, exec: &Exec) -> Result<Option<Work>> {
        let approx = self.approx_of(model)?;
        let m = self.family.check(model)?;
        let d = model.hyper.lengthscales.len();
        // the points of the chunks the second pass builds again
        let state = self.family.state(model, &exec.scratch)?;
        let rebuilt: usize = match self.chunks(&state, n, exec)? {
            None => 0,
            Some(chunks) => {
                let kept = kept_chunks(chunks, m, d, approx, exec);
                (0..chunks.len() - kept).map(|k| chunks.get(k).len()).sum()
            }
        };
        let none = DMatrix::zeros(0, d);
        let (parts, _) = self.family.parts(&state, &none, false, exec)?;
        self.family.recycle_state(state, &exec.scratch);
        let dense = matches!(parts.kuu, KuuMatrix::Dense(_));
        let builds = 1.0 + rebuilt as f64 / n.max(1) as f64;
        let Some(features) = self.family.feature_work(model, n, builds) else {
            return Ok(None);
        };
        let recomputed = if approx.per_point_lambda() {
            rebuilt
        } else {
            0
        };
        Ok(Some(Work {
            features,
            ..Work::of(approx, dense, n, m, recomputed)
        }))
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<f64> {
        let approx = self.approx_of(model)?;
        if ep::uses_ep(model)? {
            ep::refuse_shared(exec)?;
            let state = self.family.state(model, &exec.scratch)?;
            return ep::nlz(&self.family, &state, &data.x, &data.y, approx, exec);
        }
        if exec.share.is_some() {
            let nlml = self
                .shared_summary(model, data, approx, exec, Evaluation::Value)?
                .nlml();
            return if nlml.is_finite() {
                Ok(nlml)
            } else {
                Err(Error::numerical("the NLML is not finite"))
            };
        }
        let state = self.family.state(model, &exec.scratch)?;
        if let Some(chunks) = self.chunks(&state, data.y.len(), exec)? {
            let nlml = self
                .summary_in_chunks(&state, data, chunks, approx, exec, None)?
                .nlml();
            return if nlml.is_finite() {
                Ok(nlml)
            } else {
                Err(Error::numerical("the NLML is not finite"))
            };
        }
        let (parts, _) = self.family.parts(&state, &data.x, false, exec)?;
        collapsed::nlml(
            &parts.low_rank(state.noise_variance(), approx),
            &data.y,
            exec,
        )
    }

    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        let approx = self.approx_of(model)?;
        let degenerate = self.family.degenerate();
        if ep::uses_ep(model)? {
            ep::refuse_shared(exec)?;
            let state = self.family.state(model, &exec.scratch)?;
            let post = ep::posterior(&self.family, &state, &data.x, &data.y, approx, exec)?;
            return Ok((post, None));
        }
        if exec.share.is_some() {
            let summary = self.shared_summary(model, data, approx, exec, Evaluation::Posterior)?;
            return Ok((summary.posterior(degenerate, exec.par), None));
        }
        let state = self.family.state(model, &exec.scratch)?;
        if let Some(chunks) = self.chunks(&state, data.y.len(), exec)? {
            let summary = self.summary_in_chunks(&state, data, chunks, approx, exec, None)?;
            return Ok((summary.posterior(degenerate, exec.par), None));
        }
        let (parts, _) = self.family.parts(&state, &data.x, false, exec)?;
        let lr = parts.low_rank(state.noise_variance(), approx);
        let post = collapsed::posterior(&lr, &data.y, degenerate, exec)?;
        Ok((post, None))
    }

    fn cross(
        &self,
        model: &ModelFile,
        _basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let state = self.family.state(model, &exec.scratch)?;
        let (parts, _) = self.family.parts(&state, x, false, exec)?;
        Ok((parts.kuf, parts.kdiag))
    }

    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        self.family.fit(self, model, data, spec, ctx)
    }
}

/// ∂/∂log σ0² of an automatic jitter, which scales with σ0² (docs/methods.md §1.3).
pub fn jitter_grad(jitter_policy: Jitter, jitter: f64, d_kuu: &DMatrix<f64>) -> f64 {
    match jitter_policy {
        Jitter::Auto { .. } => jitter * d_kuu.trace(),
        Jitter::Fixed(_) => 0.0,
    }
}

/// ∂/∂log σ0² through a constant prior diagonal kdiag = σ0².
pub fn kdiag_grad(model: &ModelFile, adj: &Adjoints) -> f64 {
    model.hyper.signal_variance * adj.d_kdiag.iter().sum::<f64>()
}
