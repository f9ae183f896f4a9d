//! What a feature family gives [`super::LowRankMethod`]: the [`Family`] trait (its
//! parameters ↔ (Kuf, Kuu, kdiag)), the [`Parts`] it builds and the [`FamilyState`] an
//! evaluation reads.

use super::LowRankMethod;
use crate::collapsed::{Adjoints, Approx, Kuu, LowRank};
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::kernel::KernelKind;
use crate::linalg::Jitter;
use crate::methods::hyper;
use crate::methods::method::{Markers, TraceMarks, ValidRunSpec};
use crate::model_file::{Hyper, ModelFile, Witness};
use crate::optim::Outcome;
use crate::params::{self, ParamLayout, TailBlock};
use crate::run_context::RunContext;
use crate::run_spec::{DataShape, MethodOptions, Naming, RunSpec};
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

/// What an evaluation reads of a model: the family's parameters and the model's
/// likelihood as typed values ([`Family::State`], the likelihood a
/// [`StateLikelihood`](super::StateLikelihood)), read from the model file once, or the
/// model file itself for a family that reads its tables on every evaluation.
pub trait FamilyState: Clone + Send + Sync + 'static {
    /// The Gaussian noise variance σ² the core adds, as the model's likelihood gives it
    /// ([`Likelihood::collapsed_noise`](crate::likelihoods::Likelihood::collapsed_noise)):
    /// an error naming a likelihood that has none.
    fn collapsed_noise(&self) -> Result<f64>;
    /// The state of a model whose state is the model file itself (None for typed states).
    fn of_model(_model: &ModelFile) -> Option<&Self> {
        None
    }
    /// The model file, where the state is one (None for typed states).
    fn as_model(&self) -> Option<&ModelFile> {
        None
    }
    /// The model file, where the state is one (None for typed states).
    fn as_model_mut(&mut self) -> Option<&mut ModelFile> {
        None
    }
}

/// The state of the families not yet converted to typed values: the model file, read
/// through its tables (and their caches) on every evaluation.
impl FamilyState for ModelFile {
    fn collapsed_noise(&self) -> Result<f64> {
        ModelFile::collapsed_noise(self)
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
    /// Why not, if its mathematics is the reason ([`Method::why_no_composed_kernel`]).
    fn why_no_composed_kernel(&self) -> Option<&'static str> {
        None
    }
    /// Why not this expression ([`Method::refuses_kernel_expr`]).
    fn refuses_kernel_expr(&self, _expr: &crate::kernel::expression::KernelExpr) -> Option<String> {
        None
    }
    /// What its kernel reads where not the data's columns ([`Method::kernel_input_name`]).
    fn kernel_input_name(&self) -> Option<&'static str> {
        None
    }
    /// The training inputs as its kernel reads them ([`Method::kernel_inputs`]).
    fn kernel_inputs(
        &self,
        _model: &ModelFile,
        _x: &DMatrix<f64>,
    ) -> Option<Result<(DMatrix<f64>, Vec<f64>)>> {
        None
    }
    /// Its tables for the model's composed kernel ([`Method::init_for_kernel`]).
    fn init_for_kernel(
        &self,
        _model: &mut ModelFile,
        _spec: &ValidRunSpec,
        _rng: &mut ChaCha8Rng,
    ) -> Result<()> {
        Ok(())
    }
    /// Whether its features are the kernel's values at points ([`Method::predicts_summands`]).
    fn predicts_summands(&self) -> bool {
        false
    }
    /// Summand j's Cov(u, f_j(x)) and prior variances where the family's features follow
    /// the kernel's form ([`Method::summand_cross`]); None: the features of the model
    /// with summand j alone as its kernel.
    fn summand_cross(
        &self,
        _model: &ModelFile,
        _summand: usize,
        _x: &DMatrix<f64>,
        _exec: &Exec,
    ) -> Option<Result<(DMatrix<f64>, Vec<f64>)>> {
        None
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
        add_grad(grad, self.pull_back(state, x, parts, extra, adj, exec)?);
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

/// `g` added into `grad` (an empty `grad` first becomes zeros of `g`'s length): what
/// [`Family::pull_back_into`] does with a pull-back's own vector.
pub fn add_grad(grad: &mut Vec<f64>, g: Vec<f64>) {
    if grad.is_empty() {
        grad.resize(g.len(), 0.0);
    }
    grad.iter_mut().zip(g).for_each(|(a, b)| *a += b);
}
