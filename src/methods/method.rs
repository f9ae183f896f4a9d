//! The `Method` trait: what every method is to the optimiser, the jobs and the app —
//! its parameters, initialisation, objective and predictions — and the run spec checked
//! against one ([`ValidRunSpec`]). It knows no method by name: the families and methods
//! below implement it, and the registry (`methods/mod.rs`) lists them.

use super::cost;
use crate::collapsed::{LatentPrior, Posterior};
use crate::data::TrainData;
use crate::data::file_rows::FileRows;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::kernel::KernelKind;
use crate::likelihoods::LikelihoodKind;
use crate::model_file::{Hyper, ModelFile, Witness};
use crate::optim::Outcome;
use crate::params::{ParamLayout, TailBlock};
use crate::run_context::RunContext;
use crate::run_spec::{DataShape, GENERAL_OPTIONS, MethodOptions, Naming, RunSpec};
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use std::ops::Deref;

/// The objective and its gradient with respect to the method's packed parameter vector.
#[derive(Clone, Debug)]
pub struct Objective {
    /// NLML, or the bound VFE and power EP minimise.
    pub nlml: f64,
    pub grad: Vec<f64>,
    /// Absolute jitter this evaluation needed.
    pub jitter: f64,
}

/// A method: its parameters, initialisation, objective and predictions.
///
/// The optimiser, jobs and app never know which method runs.
/// A model held as typed values through an L-BFGS fit ([`Method::typed_fit`]): θ goes
/// in, the objective and its gradient in θ's order come out. What the fit returns is
/// written into a model file once, at its end.
pub trait TypedModel {
    /// Set the parameters from θ (the method's `pack` order), the blocks `layout`
    /// fixes exactly at the values the model was read with.
    fn unpack(&mut self, theta: &[f64], layout: &ParamLayout);
    /// The objective and its gradient (into `grad`) at the parameters; returns the
    /// objective and the jitter, as [`Method::objective_into`].
    fn objective_into(
        &self,
        data: &TrainData,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)>;
}

pub trait Method: Send + Sync {
    /// Registry name (`--method`).
    fn name(&self) -> &'static str;
    /// Other accepted names.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// One line for `--help` and the app.
    fn summary(&self) -> &'static str;
    /// What `m` counts for this method (shown next to every result).
    fn m_meaning(&self) -> &'static str {
        "inducing points"
    }
    /// What one step of the fit's progress (and of its evidence trace) counts:
    /// optimiser iterations, or for greedy the basis points added.
    fn progress_unit(&self) -> &'static str {
        "iteration"
    }
    /// Keys of [`MethodOptions`] this method reads besides the general ones; others
    /// are rejected when a spec is checked.
    fn options(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether the model has ARD lengthscales `[hyper] lengthscales` (every method
    /// but spgp-dr, whose projection carries the scales).
    fn uses_lengthscales(&self) -> bool {
        true
    }
    /// The names of the method's own tables (and top-level keys) its models may have
    /// beside the shared ones (`inducing`, `spectral`, …: each a [`ModelTable`](crate::model_file::ModelTable)] of its
    /// family); any other is an error naming the methods that read it.
    fn model_tables(&self) -> &'static [&'static str] {
        &[]
    }
    /// What in a model holds one value per input (its lengthscales, the row length of
    /// its tables): the model's number of inputs is what these and the shared keys
    /// agree on (`ModelFile::check_shared`). The first is the method's own count.
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        vec![Witness::lengthscales(model)]
    }
    /// The number of input columns a (checked) model takes.
    fn input_dim(&self, model: &ModelFile) -> usize {
        self.input_dims(model).first().map_or(0, |w| w.count)
    }
    /// What the prediction chart marks under its x axis along `input` (inducing
    /// inputs, basis points, feature centres), from a checked model; none by default.
    fn markers(&self, _model: &ModelFile, _input: usize) -> Result<Markers> {
        Ok(Markers::default())
    }
    /// Whether the method has a size m at all (the exact GP has not).
    fn uses_m(&self) -> bool {
        true
    }
    /// The largest m on `n_train` training points (`usize::MAX` while n is unknown).
    fn max_m(&self, n_train: usize) -> usize {
        n_train
    }
    /// Checks of the method's own options beyond their types (run before any work).
    /// Checks of the method's own options beyond their types, against the data where
    /// they are known (`dims` ≤ D): run before any work. Messages name the setting as
    /// `naming` says.
    fn check_options(
        &self,
        _options: &MethodOptions,
        _data: DataShape,
        _naming: Naming,
    ) -> Result<()> {
        Ok(())
    }
    /// Whether the method's own initialisation draws from the run's seed with these
    /// options (pseudo-inputs at random training inputs, random frequencies, k-means
    /// centres). False where it is deterministic (the exact GP; PSDS's Hammersley
    /// points): then two seeds give the same result unless a general option draws
    /// from the seed ([`RunSpec::seed_uses`]). A new method is seed-dependent unless
    /// it says otherwise.
    fn init_uses_seed(&self, _options: &MethodOptions) -> bool {
        true
    }
    /// Whether a fit of this method also runs from a start fitted on a subset unless
    /// `--single-start` (docs/methods.md §0.4): true for the methods that fit σ0², ℓ, σ²
    /// by L-BFGS from the start they are given; false where the kernel comes from a
    /// subset fit of the method's own (rvm, nystrom, greedy without --adapt) or the
    /// training is stochastic (svgp).
    fn second_start(&self, _options: &MethodOptions) -> bool {
        true
    }
    /// Whether the fit minimises the objective over the packed parameters with L-BFGS
    /// (`hyper::fit_free`) with these options: what `--fix` needs (a block is fixed by
    /// leaving it out of the optimiser's vector). False by default, so a method whose
    /// training is its own refuses `--fix` rather than ignoring it.
    fn fits_by_lbfgs(&self, _options: &MethodOptions) -> bool {
        false
    }
    /// The blocks the method packs after the shared ones ([`crate::params`]), in
    /// order; entries no block declares form one block `features`.
    fn tail_blocks(&self) -> &'static [TailBlock] {
        &[]
    }
    /// The names of the parameter blocks of this method's models with `kernel` and
    /// `likelihood` (σ² only with the Gaussian): what `--fix` and a model's `fixed` list
    /// may name.
    fn block_names(&self, kernel: KernelKind, likelihood: LikelihoodKind) -> Vec<&'static str> {
        crate::params::block_names(
            self.uses_lengthscales(),
            kernel == KernelKind::Rq,
            likelihood == LikelihoodKind::Gaussian,
            self.tail_blocks(),
        )
    }
    /// What the seed does in this method's initialisation, for `--help` and the app.
    fn seed_help(&self) -> &'static str {
        "the initialisation draws from the seed"
    }
    /// Why the method cannot use kernel `kind`, if its mathematics does not allow it
    /// (checked for run specs before any work and for models when they are read).
    fn refuses_kernel(&self, _kind: KernelKind) -> Option<String> {
        None
    }
    /// Why the method cannot fit targets with the likelihood `kind`, if it cannot
    /// (checked for run specs before any work and for models when they are read). By
    /// default only the Gaussian: [`gaussian_only`].
    fn refuses_likelihood(&self, kind: LikelihoodKind) -> Option<String> {
        gaussian_only(kind)
    }
    /// Whether the method fits the bernoulli likelihood by expectation propagation
    /// (probit only; `--ep-damping` applies) rather than a variational bound.
    fn fits_bernoulli_by_ep(&self) -> bool {
        false
    }
    /// Whether the method evaluates k(x, z) through the `Kernel` trait alone, so that it
    /// takes a kernel built from parts (an expression: sums, products, periodic, …).
    /// Asked through [`composed_kernel_refusal`].
    fn takes_composed_kernel(&self) -> bool {
        false
    }
    /// Why the method's mathematics does not take a kernel built from parts, where there
    /// is a reason beyond "not wired" (its closed forms need an SE kernel, its features
    /// a spectral density): what [`composed_kernel_refusal`] adds to its message.
    fn why_no_composed_kernel(&self) -> Option<&'static str> {
        None
    }
    /// Why the method cannot fit an expression with these parts (their names, e.g.
    /// `["se", "linear"]`), if it takes expressions but not these (checked before any
    /// work, after [`composed_kernel_refusal`]).
    fn refuses_kernel_parts(&self, _parts: &[&str]) -> Option<String> {
        None
    }
    /// Why the method cannot fit this kernel expression, where its structure is the
    /// reason (the spectral families: a part without a spectral form), checked before
    /// any work beside [`Method::refuses_kernel_parts`].
    fn refuses_kernel_expr(&self, _expr: &crate::kernel::expression::KernelExpr) -> Option<String> {
        None
    }
    /// What the model's kernel reads where it is not the data's columns (spgp-dr's
    /// projections P x, pca-spgp's principal components), for messages; None: the
    /// columns. A kernel expression is then built on those inputs (no `dims`), its
    /// values in the model's units but for the target's scale
    /// (`model_file::Standardize::target_only`).
    fn kernel_input_name(&self) -> Option<&'static str> {
        None
    }
    /// The training inputs `x` (model units) as the kernel reads them and the
    /// lengthscales a kernel expression's parts start from there, for a method with a
    /// [`Method::kernel_input_name`] (`model` is the method's start, after
    /// [`Method::init`]); None for the others.
    fn kernel_inputs(
        &self,
        _model: &ModelFile,
        _x: &DMatrix<f64>,
    ) -> Option<Result<(DMatrix<f64>, Vec<f64>)>> {
        None
    }
    /// The method's tables for the model's composed kernel, once the kernel is set
    /// (after [`Method::init`]): for a method whose tables follow the kernel's form
    /// (psds and ssgp's spectral points). Nothing by default.
    fn init_for_kernel(
        &self,
        _model: &mut ModelFile,
        _spec: &ValidRunSpec,
        _rng: &mut ChaCha8Rng,
    ) -> Result<()> {
        Ok(())
    }
    /// Whether the posterior is over values of the latent function plus independent
    /// noise (the exact GP's training targets, inducing values u = f(Z), SPGP+HS's with
    /// its pseudo-noise), so that a summand's covariance with them is its own kernel's:
    /// [`Method::cross`] with the model's kernel replaced by one summand is then that
    /// summand's K_j(u, X*), and [`Posterior::predict`] on it the summand's posterior
    /// (`train::components`, docs/methods.md "Seeing the parts").
    fn predicts_summands(&self) -> bool {
        false
    }
    /// Cov(u, f_j(x*)) (m×t) and summand j's prior variances at `x` (model units), for
    /// `train::components`: `one` is `model` with summand j alone as its kernel. By
    /// default [`Method::cross`] on `one` (features that are kernel values at points);
    /// a family whose features follow the kernel's form overrides it (psds, ssgp: the
    /// model's features of summand j's terms, the others' rows zero).
    fn summand_cross(
        &self,
        _model: &ModelFile,
        one: &ModelFile,
        _summand: usize,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        self.cross(one, basis, x, exec)
    }
    /// What the objective of a model is called ("NLML", "negative ELBO", …).
    fn objective_name(&self, _model: &ModelFile) -> &'static str {
        "NLML"
    }
    /// Whether a model's approximation keeps FITC's diagonal correction (FITC, and power
    /// EP in part), which is known to take the noise's place; none by default.
    fn corrects_diagonal(&self, _model: &ModelFile) -> bool {
        false
    }
    /// What a fitted model adds to its evidence curve (model units); none by default.
    fn trace_marks(&self, _model: &ModelFile) -> TraceMarks {
        TraceMarks::default()
    }

    /// Initial parameters around the starting hyperparameters `hyper` (which
    /// `start::initial_hyper` chose: docs/methods.md §0 defaults or a subset fit).
    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile>;
    /// Check a model's tables (shapes, signs) for this method.
    fn check(&self, model: &ModelFile) -> Result<()>;
    /// The free parameters as one vector (positive ones as logarithms).
    fn pack(&self, model: &ModelFile) -> Vec<f64>;
    /// Write a packed vector back into a model.
    fn unpack(&self, theta: &[f64], model: &mut ModelFile);
    /// Objective and gradient in `pack` order.
    fn objective(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<Objective>;
    /// [`Method::objective`] with the gradient written into `grad` (resized), so that
    /// a caller evaluating again and again reuses one vector; returns the objective
    /// and the jitter. The low-rank methods allocate nothing here after their first
    /// evaluation with an `exec` (tests/allocations.rs).
    fn objective_into(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        let o = self.objective(model, data, exec)?;
        grad.clear();
        grad.extend_from_slice(&o.grad);
        Ok((o.nlml, o.jitter))
    }
    /// `model` as typed values for an L-BFGS fit ([`TypedModel`]): read once, then θ is
    /// unpacked into them on every evaluation, never into the model file. None where the
    /// method evaluates through its model file (the fit then unpacks θ into a copy of
    /// it on every evaluation).
    fn typed_fit<'a>(&'a self, _model: &ModelFile) -> Option<Box<dyn TypedModel + 'a>> {
        None
    }
    /// The arithmetic of one [`Method::objective`] on n training points with these
    /// threads and memory budget, by kind (`sgpw bench --roofline`); None where it has
    /// not been counted.
    fn work(
        &self,
        _model: &ModelFile,
        _n: usize,
        _exec: &Exec,
    ) -> Result<Option<crate::collapsed::Work>> {
        Ok(None)
    }
    /// What one evaluation on n training points of d inputs with m features holds and
    /// computes, for the estimate shown before a run starts ([`super::cost`]). Default: a
    /// low-rank method's O(n·m²).
    fn cost(&self, n: usize, d: usize, m: usize) -> cost::Cost {
        cost::Cost::low_rank(n, d, m)
    }
    /// The objective alone (defaults to the objective with its gradient).
    fn nlml(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<f64> {
        Ok(self.objective(model, data, exec)?.nlml)
    }
    /// The posterior needed for prediction, and (exact GP only) the inputs it is
    /// expressed in.
    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)>;
    /// K(features, X*) (m×t) and the prior variances k(x*,x*) at the model's inputs.
    /// `basis` is the exact GP's training inputs; low-rank methods ignore it.
    fn cross(
        &self,
        model: &ModelFile,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)>;
    /// Whether the method evaluates a chunk of rows at a time when the data are too
    /// large for one evaluation (`Exec::chunk_entries`): objective, gradient, posterior
    /// and predictions, each equal to the one-chunk evaluation. `Err` says why not.
    /// `tests/suite/chunks.rs` holds every method that says it does to it.
    fn chunked(&self) -> std::result::Result<(), &'static str> {
        Ok(())
    }
    /// Whether its objective, gradient and posterior add over rows held by several
    /// processes (`sgpw fit --distributed`: the low-rank methods of the core).
    fn shares_rows(&self) -> bool {
        false
    }
    /// Whether the posterior can be stored in a model file (not the exact GP's n×n one).
    fn stores_posterior(&self) -> bool {
        true
    }
    /// Mean and latent variance at inputs `x` (model units). The default is
    /// [`Method::cross`] with [`Posterior::predict`], whose variances are ≥ 0; the
    /// Nyström predictor overrides it and returns its variances as computed, negative
    /// ones included.
    fn predict(
        &self,
        model: &ModelFile,
        posterior: &Posterior,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let (kus, prior) = self.cross(model, basis, x, exec)?;
        Ok(posterior.predict(&kus, &prior, exec.par))
    }

    /// Replace the inducing inputs `init` chose by `z` (m×D, model units): the run's
    /// own (`--inducing-inputs`). Only methods that list that option are given it.
    fn set_inducing_inputs(&self, _model: &mut ModelFile, _z: &DMatrix<f64>) -> Result<()> {
        Err(Error::input(format!(
            "method '{}' has no inducing inputs to start at --inducing-inputs",
            self.name()
        )))
    }

    /// The prior covariance k(X*, X*) (t×t) of the latent function at inputs `x` (model
    /// units), which [`Method::latent_cov`] needs unless the model is degenerate. `Err`
    /// says that the method cannot give it (the default).
    fn prior_cov(
        &self,
        _model: &ModelFile,
        _x: &DMatrix<f64>,
        _exec: &Exec,
    ) -> Result<DMatrix<f64>> {
        Err(full_cov_refused(self.name()))
    }

    /// The posterior covariance (t×t) of the latent function at inputs `x` (model units),
    /// whose diagonal is [`Method::predict`]'s variance before its clamp at 0. The
    /// default is [`Method::cross`] with [`Posterior::covariance`]; a method that
    /// predicts otherwise (Nyström) refuses.
    fn latent_cov(
        &self,
        model: &ModelFile,
        posterior: &Posterior,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<DMatrix<f64>> {
        let (kus, _) = self.cross(model, basis, x, exec)?;
        let prior = match posterior.latent_prior {
            LatentPrior::Kernel => Some(self.prior_cov(model, x, exec)?),
            LatentPrior::None => None,
        };
        posterior.covariance(&kus, prior, exec.par)
    }

    /// Whether the method trains on minibatches drawn from a [`RowSource`]
    /// ([`Method::fit_rows`]): what a streamed fit (`sgpw fit --stream`) needs, and how
    /// a distributed fit trains it. False by default.
    fn fits_rows(&self) -> bool {
        false
    }

    /// Fit from `model` on minibatches drawn from `rows`: in memory (in a distributed
    /// fit this process's stripe, the sums of each minibatch added over every process
    /// through `ctx.exec`), or a file read a block at a time. A method that does not
    /// train on minibatches refuses (the default).
    fn fit_rows(
        &self,
        _model: ModelFile,
        _rows: RowSource<'_>,
        _spec: &ValidRunSpec,
        _ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        Err(rows_refused(self.name()))
    }

    /// The posterior and the objective's jitter of a model [`Method::fit_rows`] fitted,
    /// from the model alone: the end of a streamed fit, which holds no rows to evaluate
    /// on. A method that does not train on minibatches refuses (the default).
    fn end_without_rows(&self, _model: &ModelFile, _exec: &Exec) -> Result<(Posterior, f64)> {
        Err(rows_refused(self.name()))
    }

    /// Fit: minimise the objective from `model` (most methods: `hyper::fit_all`, one
    /// L-BFGS run over every packed parameter; staged schedules their own).
    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)>;
}

/// Where a minibatch method's training rows come from ([`Method::fit_rows`]).
pub enum RowSource<'a> {
    /// Rows in memory, in model units: `data` holds rows `first`.. of the `n` rows of
    /// every process (one process: 0 and all of them).
    Memory {
        data: &'a TrainData,
        first: usize,
        n: usize,
    },
    /// A training file read a block at a time, its rows in model units.
    File(&'a mut FileRows),
}

/// The error of a method asked to train on minibatches that does not.
fn rows_refused(method: &str) -> Error {
    Error::input(format!(
        "method '{method}' does not train on minibatches, so it cannot be fitted from a \
         streamed file (--stream) or minibatch by minibatch over processes"
    ))
}

/// The error of a method that cannot give the full covariance of its predictions.
pub fn full_cov_refused(method: &str) -> Error {
    Error::input(format!(
        "method '{method}' cannot give the full covariance of its predictions (it does not \
         compute the covariance between test points); predict the variances alone"
    ))
}

/// What a method marks under the x axis of the prediction chart, along one input.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Markers {
    /// Locations along the input in the inputs' model units (after `[standardize]`;
    /// a method that centres its inputs has added its centre back).
    pub at: Vec<f64>,
    /// Per location, how large it is drawn; empty: all full size.
    pub sizes: Vec<MarkerSize>,
    /// What they are, for the legend ("inducing points"); empty when none are drawn.
    pub caption: String,
}

/// What a fit recorded beside its per-iteration objective, for the evidence chart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceMarks {
    /// The objective on the whole training set at some iterations (iteration, value in
    /// model units), where the trace itself is a noisy estimate (svgp's minibatches).
    pub full: Vec<(usize, f64)>,
    /// The model's size after each iteration (iteration 0 first) where the fit grows or
    /// prunes it (rvm's relevance vectors), and what the size counts.
    pub sizes: Vec<usize>,
    pub size_name: &'static str,
}

/// The size a marker is drawn at (a glyph each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerSize {
    Full,
    Half,
    Dot,
}

/// Why `method` cannot fit a kernel built from parts, if it cannot: the one check of
/// that capability, made before any work. The exact GP and every family that evaluates
/// k(x, z) through the `Kernel` trait (the pseudo-input families, svgp, the selection
/// families) take one; the others build their features from a stationary ARD kernel's
/// closed forms (spectral points, inter-domain windows, projections), and say why
/// ([`Method::why_no_composed_kernel`]).
pub fn composed_kernel_refusal(method: &dyn Method) -> Option<String> {
    (!method.takes_composed_kernel()).then(|| {
        let why = method
            .why_no_composed_kernel()
            .map_or(String::new(), |w| format!(": {w}"));
        format!(
            "method '{}' takes only the plain kernels (se, matern12, matern32, matern52, \
             rq){why}; a kernel built from parts runs with full, fitc, vfe, dtc, pep, \
             spgp-hs, spgp-dr and pca-spgp (parts without dims), fifgp, tfifgp, smgp \
             (sums of SE), psds, ssgp, svgp, greedy, nystrom, nystrom-opt, eigengp and rvm",
            method.name()
        )
    })
}

/// The names `--fix` may give for `method` with `kernel`: its blocks, or with a kernel
/// expression (which parses: the option was checked when read) the expression's paths
/// (`se1.ls`, `periodic.period`) in place of σ0², ℓ and α.
fn fix_names(
    method: &dyn Method,
    kernel: KernelKind,
    likelihood: LikelihoodKind,
    expression: Option<&str>,
) -> Vec<String> {
    let blocks = method.block_names(kernel, likelihood);
    let Some(expr) = expression.and_then(|e| crate::kernel::expression::KernelExpr::parse(e).ok())
    else {
        return blocks.iter().map(|b| b.to_string()).collect();
    };
    let mut names = crate::kernel::paths(&expr);
    names.extend(
        blocks
            .iter()
            .filter(|b| !crate::params::KERNEL_BLOCKS.contains(b))
            .map(|b| b.to_string()),
    );
    names
}

/// Check a model against `method` (the one its `method` key names): the shared part
/// with the number of inputs the method's witnesses and the shared keys agree on, then
/// the method's own tables ([`Method::check`]). The registry's `ModelFile::check` first
/// rejects tables the method does not read.
pub fn check_model(method: &dyn Method, model: &ModelFile) -> Result<()> {
    model.check_shared(&method.input_dims(model), method.uses_lengthscales())?;
    if let Some(why) = method.refuses_kernel(model.hyper.kernel) {
        return Err(Error::at(
            crate::error::Location::key("hyper").then("kernel"),
            format!(
                "[hyper] kernel = \"{}\": method '{}' cannot use it: {why}",
                model.hyper.kernel,
                method.name()
            ),
        ));
    }
    let kind = model.likelihood_kind();
    if let Some(why) = method.refuses_likelihood(kind) {
        return Err(Error::at(
            crate::error::Location::key("likelihood"),
            format!(
                "[likelihood] name = \"{kind}\": method '{}' cannot fit it: {why}",
                method.name()
            ),
        ));
    }
    model.likelihood()?;
    // a model of another likelihood has no σ² block, but one written before σ² left its
    // θ may list it as fixed (it held nothing): still read
    let mut names: Vec<String> = method
        .block_names(model.hyper.kernel, LikelihoodKind::Gaussian)
        .iter()
        .map(|b| b.to_string())
        .collect();
    if let Some(c) = &model.composed {
        names.extend(c.paths());
    }
    for (i, name) in model.fixed.iter().enumerate() {
        if !names.contains(name) || model.fixed[..i].contains(name) {
            return Err(Error::at(
                crate::error::Location::key("fixed"),
                format!(
                    "fixed: '{name}' is not a parameter block of method '{}' or is named \
                     twice; its blocks are: {}",
                    method.name(),
                    names.join(", ")
                ),
            ));
        }
    }
    method.check(model)
}

/// The refusal of every method whose objective is collapsed on Gaussian noise (the
/// exact GP and the low-rank core: docs/methods.md §1), for any other likelihood: the
/// one place that says which likelihoods such a method takes and why not the others.
pub fn gaussian_only(kind: LikelihoodKind) -> Option<String> {
    match kind {
        LikelihoodKind::Gaussian => None,
        LikelihoodKind::Bernoulli => Some(
            "its objective is the Gaussian evidence in closed form; binary classification \
             by expectation propagation is fitted by the low-rank methods with FITC, DTC or \
             power EP (e.g. --method fitc, dtc, pep) and by full, and svgp takes the \
             bernoulli likelihood (--method svgp)"
                .to_string(),
        ),
        other => Some(format!(
            "its objective is the Gaussian evidence in closed form, which no other \
             likelihood has — svgp takes the {other} likelihood (--method svgp)"
        )),
    }
}

/// A run spec that was checked against its method (and, where known, the data):
/// the only kind fitting accepts, so a worker never sees an invalid spec.
#[derive(Clone)]
pub struct ValidRunSpec {
    checked: RunSpec,
    resolved: &'static dyn Method,
}

impl ValidRunSpec {
    /// The estimate for this run on n training points of d inputs, on `threads` threads:
    /// the method's [`Method::cost`] on the points it fits (all n, or `--subset`), and the
    /// exact GP of a subset start (`--hyper-from-subset`, `--init-lengthscales-from-subset`)
    /// where that holds more.
    pub fn estimate(&self, n: usize, d: usize, threads: usize) -> cost::Estimate {
        let s = self.spec();
        let fitted = s.options.subset.map_or(n, |k| k.min(n));
        let cost = self.method().cost(fitted, d, s.m);
        let start = [
            s.options.hyper_from_subset,
            s.options.init_lengthscales_from_subset,
        ]
        .into_iter()
        .flatten()
        .map(|k| cost::Cost::exact(k.min(n), d).bytes)
        .fold(0.0, f64::max);
        cost::Estimate {
            bytes: cost.bytes.max(start) + 8.0 * (n * (d + 1)) as f64,
            seconds: cost.multiply_adds / cost::rate(threads),
        }
    }

    pub fn method(&self) -> &'static dyn Method {
        self.resolved
    }

    pub fn spec(&self) -> &RunSpec {
        &self.checked
    }

    /// The same checked spec with another iteration budget (restarts' short fits).
    pub fn with_iters(&self, iters: usize) -> ValidRunSpec {
        let mut v = self.clone();
        v.checked.iters = iters;
        v
    }

    /// The same spec with this many epochs (svgp's budget when `--epochs` is given).
    pub fn with_epochs(&self, epochs: usize) -> ValidRunSpec {
        let mut v = self.clone();
        v.checked.options.epochs = Some(epochs);
        v
    }
}

impl Deref for ValidRunSpec {
    type Target = RunSpec;
    fn deref(&self) -> &RunSpec {
        &self.checked
    }
}

impl std::fmt::Debug for ValidRunSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.checked.fmt(f)
    }
}

impl RunSpec {
    /// Check the spec against `method` (the one its name resolves to) and the data it
    /// will see (`DataShape::UNKNOWN` before they are loaded, as when a session is
    /// read): m is in the method's range, every option set is one the method reads,
    /// and the option values make sense for the method and the data. Errors name the
    /// setting as `naming` says.
    pub fn check_with(
        &self,
        method: &'static dyn Method,
        data: DataShape,
        naming: Naming,
    ) -> Result<ValidRunSpec> {
        self.options
            .check(data.n_train, naming)
            .map_err(Error::input)?;
        let n_fit = self.options.subset.unwrap_or(data.n_train);
        if method.uses_m() {
            if self.m == 0 {
                return Err(Error::input(format!(
                    "m must be at least 1{}",
                    naming.flag("m")
                )));
            }
            let max = method.max_m(n_fit);
            if self.m > max {
                let why = if max == n_fit {
                    format!("the training set ({n_fit} points)")
                } else {
                    format!("{}'s limit of {max} {}", method.name(), method.m_meaning())
                };
                return Err(Error::input(format!(
                    "m = {}{} is larger than {why}; choose m ≤ {max}",
                    self.m,
                    naming.flag("m")
                )));
            }
        }
        for key in self.options.set_keys() {
            if !GENERAL_OPTIONS.contains(&key.as_str()) && !method.options().contains(&key.as_str())
            {
                return Err(Error::input(format!(
                    "option {key}{} does not apply to method '{}'{}",
                    naming.flag(&key),
                    method.name(),
                    if method.options().is_empty() {
                        String::new()
                    } else {
                        format!(" (it reads: {})", method.options().join(", "))
                    }
                )));
            }
        }
        if self.options.kernel_expression().is_some() {
            if let Some(why) = composed_kernel_refusal(method) {
                return Err(Error::input(format!(
                    "kernel{}: {why}",
                    naming.flag("kernel")
                )));
            }
            let parsed = self
                .options
                .kernel_expression()
                .and_then(|e| crate::kernel::expression::KernelExpr::parse(e).ok());
            if let Some(expr) = parsed {
                let parts: Vec<&str> = expr.parts().iter().map(|p| p.name.as_str()).collect();
                if let Some(why) = method
                    .refuses_kernel_parts(&parts)
                    .or_else(|| method.refuses_kernel_expr(&expr))
                {
                    return Err(Error::input(format!(
                        "kernel{}: {why}",
                        naming.flag("kernel")
                    )));
                }
            }
        }
        let kernel = self.options.kernel_kind();
        if let Some(why) = method.refuses_kernel(kernel) {
            return Err(Error::input(format!(
                "kernel = {kernel}{}: method '{}' cannot use it: {why}",
                naming.flag("kernel"),
                method.name()
            )));
        }
        let likelihood = self.options.likelihood();
        if let Some(why) = method.refuses_likelihood(likelihood) {
            return Err(Error::input(format!(
                "likelihood = {likelihood}{}: method '{}' cannot fit it: {why}",
                naming.flag("likelihood"),
                method.name()
            )));
        }
        if likelihood == LikelihoodKind::Bernoulli && method.fits_bernoulli_by_ep() {
            if self.options.link == Some(crate::likelihoods::Link::Logit) {
                return Err(Error::input(format!(
                    "link = logit{}: method '{}' fits the bernoulli likelihood by \
                     expectation propagation, whose moments are closed-form for the probit \
                     link only; leave out the link or use --method svgp for logit",
                    naming.flag("link"),
                    method.name()
                )));
            }
        } else if self.options.ep_damping.is_some() {
            return Err(Error::input(format!(
                "ep_damping{}: method '{}' does not fit this likelihood by expectation \
                 propagation (EP fits bernoulli with fitc, dtc, pep and full)",
                naming.flag("ep_damping"),
                method.name()
            )));
        }
        if let Some(fixes) = self.options.fix.as_deref().filter(|f| !f.is_empty()) {
            if likelihood != LikelihoodKind::Gaussian
                && let Some(f) = fixes
                    .iter()
                    .find(|f| f.name == crate::params::NOISE_VARIANCE)
            {
                return Err(Error::input(format!(
                    "fix{}: '{f}': noise_variance is the Gaussian likelihood's noise variance \
                     σ², and likelihood = {likelihood} has none, so there is nothing to fix: \
                     remove it",
                    naming.flag("fix"),
                )));
            }
            if !method.fits_by_lbfgs(&self.options) {
                return Err(Error::input(format!(
                    "fix{}: method '{}' is not fitted by L-BFGS with these options, so it \
                     cannot hold a parameter fixed",
                    naming.flag("fix"),
                    method.name()
                )));
            }
            crate::params::check_fixes(
                fixes,
                &fix_names(method, kernel, likelihood, self.options.kernel_expression()),
                method.name(),
                &naming.flag("fix"),
            )?;
        }
        method.check_options(&self.options, data, naming)?;
        Ok(ValidRunSpec {
            checked: self.clone(),
            resolved: method,
        })
    }
}
