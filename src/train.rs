//! One training run from start to finish, shared by `sgpw fit`, sessions and the app:
//! transform the data into model units, initialise, optimise, compute the posterior
//! once, and score the test set — all under a [`RunContext`] (threads, cancellation,
//! progress with its phase). [`fit`] runs its steps in order: the rows to fit
//! ([`fit_rows`]), the data in model units ([`prepare`]), the first fit ([`Run::first`],
//! from one start or the best of `--restarts`), a second start or the restart of a
//! collapsed fit ([`Run::second`]) — by default the two starts' fits raced instead
//! ([`Run::race`]) —, the validation's best iterate, and the end every path through a
//! fit shares ([`finish`]).

mod components;
mod finish;
mod observed;
mod predictor;
mod prepare;
mod validation;

pub use components::ComponentPrediction;
pub use finish::{Final, Stopped, Test, finish, target_variance, unless_cancelled};
pub use observed::Observed;
pub use predictor::{DataUnitHyper, Prediction, Predictor, model_data, model_inputs};
pub(crate) use prepare::{composed_start, noise_floor};
pub use prepare::{prepare, prepare_for, set_composed_kernel, start_model};
pub use validation::split_validation;

use crate::data::exposure::Exposure;
use crate::data::{Dataset, TrainData};
use crate::error::{Error, Result};
use crate::likelihoods::{BinaryLabels, ClassNames, LikelihoodKind};
use crate::methods::{self, ValidRunSpec};
use crate::metrics::TestMetrics;
use crate::model_file::{CollapseRestart, ModelFile, SecondStart, Standardize, raw_scale_offset};
use crate::optim::{Outcome, Stop};
use crate::params::Pins;
use crate::results::ValidationPoint;
use crate::run_context::{Phase, RunContext};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::borrow::Cow;
use std::time::Instant;
use validation::Validator;

/// Everything a finished run produced. The objective and its trace are on the raw
/// target scale: a standardised run's (model units) plus n·log(target scale), so the
/// NLMLs of all runs on one data set compare.
pub struct FitResult {
    pub model: ModelFile,
    pub predictor: Predictor,
    pub trace: Vec<f64>,
    pub iterations: usize,
    /// NLML + gradient evaluations, line searches included.
    pub evaluations: usize,
    pub train_seconds: f64,
    pub nlml: f64,
    pub jitter: f64,
    pub stop: Stop,
    pub test: Option<TestMetrics>,
    /// Validation scores during the fit (`--validation`).
    pub validation: Vec<ValidationPoint>,
    /// With `--early-stop`: the iteration whose parameters were kept.
    pub best_iteration: Option<usize>,
    /// Test MNLP of the constant predictor (training mean and variance).
    pub constant_mnlp: Option<f64>,
    /// The training targets' variance about their mean, in the data's units (the
    /// constant predictor's); None where it is not known.
    pub target_variance: Option<f64>,
}

impl FitResult {
    /// The note on a noise variance that collapsed to nearly nothing, if it did (FITC's
    /// diagonal correction blamed only where the model has one).
    pub fn noise_note(&self) -> Option<String> {
        let fitc_like = self.predictor.method().corrects_diagonal(&self.model);
        self.model
            .noise_collapse_note(self.target_variance, fitc_like)
    }
}

/// The stream ([`restart_seed`]'s k) of a collapsed fit's restart: its subset and the
/// method's draws, apart from those of `--restarts`' starts.
const COLLAPSE_STREAM: usize = usize::MAX;
/// The stream of the second start of a default fit (docs/methods.md §0.4).
const SECOND_STREAM: usize = usize::MAX - 1;

/// Of a fit and another from a second start, keep the one whose objective ended lower
/// (the evaluations of both count); true when the other is kept.
fn keep_lower(
    fitted: &mut ModelFile,
    outcome: &mut crate::optim::Outcome,
    (model, other): (ModelFile, crate::optim::Outcome),
) -> bool {
    let evaluations = outcome.evaluations + other.evaluations;
    let kept_other = other.f < outcome.f;
    if kept_other {
        *fitted = model;
        *outcome = other;
    }
    outcome.evaluations = evaluations;
    kept_other
}

/// Seed of restart k ≥ 1 (start 0 uses the run's own generator).
fn restart_seed(seed: u64, k: usize) -> u64 {
    // splitmix64 of (seed, k): unrelated streams for neighbouring seeds and starts
    let mut z = seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Run one fit. The context's cancel token ends it (→ `Error::Cancelled` before the
/// fit iterates, `Error::CancelledAfter` with how far it got after); its sink
/// sees every iteration and phase.
pub fn fit(data: &Dataset, spec: &ValidRunSpec, ctx: &RunContext) -> Result<FitResult> {
    match spec.options.exposure.as_deref() {
        // poisson's exposure column leaves the inputs here (a session's and the app's
        // data sets are read before a run names it)
        Some(column) => {
            let (data, exposure) = crate::data::exposure::split_off(data, column, None)?;
            fit_exposed(&data, Some(&exposure), spec, ctx)
        }
        None => fit_exposed(data, None, spec, ctx),
    }
}

/// [`fit`] on a data set whose exposure column (`--exposure`), if the run names one,
/// was taken out of its inputs ([`crate::data::exposure::split_off`]) as `exposure`.
pub fn fit_exposed(
    data: &Dataset,
    exposure: Option<&Exposure>,
    spec: &ValidRunSpec,
    ctx: &RunContext,
) -> Result<FitResult> {
    // a session's specs were checked before the data were loaded: m ≤ n and the
    // subset sizes now
    spec.spec().check(data.n_train())?;
    let started = Instant::now();
    let (data, valid) = fit_rows(data, spec)?;
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let run = Run::new(&data, exposure, spec, &mut rng, started, ctx)?;
    let run = &run;
    let validator = valid
        .as_ref()
        .map(|(x, y)| Validator::new(&run.td, x, y, spec.options.early_stop));
    let observe = |iteration: usize, model: &ModelFile| match &validator {
        Some(v) => v.observe(iteration, model, ctx),
        None => crate::optim::Control::Continue,
    };
    let every = (spec.iters / 50).max(5);
    let watched = ctx.observed(&observe, every);
    let fit_ctx = if validator.is_some() { &watched } else { ctx };
    // the second start's draws come from a stream of their own, so the first fit is the
    // one-start fit bit for bit unless the race stops it
    let second_rng = ChaCha8Rng::seed_from_u64(restart_seed(spec.seed, SECOND_STREAM));
    let (mut fitted, outcome, second_start, collapse_restart) =
        if spec.runs_second_start() && spec.options.restarts.unwrap_or(1) <= 1 {
            let (fitted, outcome, second_start) = run.race(rng, second_rng, ctx)?;
            (fitted, outcome, Some(second_start), None)
        } else {
            // with --restarts the second start's subset fit comes first (progress reads
            // subset fit, restarts, second start) and its fit runs to the end after them
            let mut second_rng = second_rng;
            let second = if spec.runs_second_start() {
                Some(run.second_start_fit(&mut second_rng, ctx)?)
            } else {
                None
            };
            let (mut fitted, mut outcome) = run.first(&mut rng, ctx, fit_ctx)?;
            unless_cancelled(&outcome, run.offset, started)?;
            let (second_start, collapse_restart) = run.second(
                second.map(|s| (s, second_rng)),
                validator.is_none(),
                (&mut fitted, &mut outcome),
                ctx,
                fit_ctx,
            )?;
            (fitted, outcome, second_start, collapse_restart)
        };
    let (validation, best) = match validator {
        Some(v) => v.into_scores(),
        None => (Vec::new(), None),
    };
    let best_iteration = best.map(|(at, model)| {
        fitted = model;
        at
    });
    let target_variance = finish::target_variance(data.y_train.as_slice(), run.target_mean);
    let stopped = Stopped {
        target_variance: Some(target_variance),
        collapse_restart,
        second_start,
        validation,
        best_iteration,
        ..Stopped::plain(
            spec.method(),
            fitted,
            outcome,
            run.offset,
            started,
            run.td.y.len(),
        )
    };
    let test = match (
        &data.x_test,
        &data.y_test,
        exposure.and_then(|e| e.test.as_ref()),
    ) {
        (Some(x), Some(y), Some(e)) => Test::Exposed(x, y.as_slice(), e),
        (Some(x), Some(y), None) => Test::Held(x, y.as_slice()),
        _ => Test::None,
    };
    finish(stopped, Final::On(&run.td), test, ctx)
}

/// The rows to fit: with `--validation` the part not held out (and the rows held out),
/// else every training row; refused if their target cannot be fitted.
#[allow(clippy::type_complexity)]
fn fit_rows<'d>(
    data: &'d Dataset,
    spec: &ValidRunSpec,
) -> Result<(Cow<'d, Dataset>, Option<(DMatrix<f64>, Vec<f64>)>)> {
    let (data, valid) = match spec.options.validation {
        Some(f) => {
            let (fit_data, x, y) = split_validation(data, f, spec.seed)?;
            (Cow::Owned(fit_data), Some((x, y)))
        }
        None => (Cow::Borrowed(data), None),
    };
    // the loader refuses such a target in a file; the rows a validation split leaves
    // (or a data set built in code) are checked here, before any work
    if let Some(why) = crate::data::moments::target_problem(data.y_train.as_slice()) {
        let part = match spec.options.validation {
            Some(f) => format!(
                " in the {} rows left to fit after --validation {f} held out its rows",
                data.n_train()
            ),
            None => String::new(),
        };
        return Err(Error::input(format!(
            "the target '{}'{part} {why}",
            data.target_name
        )));
    }
    Ok((data, valid))
}

/// What every start and fit of one run shares: the training rows in model units and
/// how the model is started on them.
struct Run<'a> {
    spec: &'a ValidRunSpec,
    td: TrainData,
    target_mean: f64,
    standardize: Option<Standardize>,
    feature_names: &'a [String],
    target_name: &'a str,
    floor: Option<f64>,
    /// A binary target's labels as classes 0 and 1 (the bernoulli likelihood).
    labels: Option<BinaryLabels>,
    /// The words of those labels where the target held text or booleans.
    classes: Option<&'a ClassNames>,
    /// The blocks --fix holds, at one value for every start (the subset fits' included).
    pins: Pins,
    /// What turns the objective in model units into the raw target scale's.
    offset: f64,
    /// When the fit started: a cancelled fit's seconds count from here.
    started: Instant,
}

impl<'a> Run<'a> {
    /// The rows of `data` in model units (`--subset`'s draws from `rng`), and the
    /// context told the objective's offset and how positive parameters are moved.
    fn new(
        data: &'a Dataset,
        exposure: Option<&Exposure>,
        spec: &'a ValidRunSpec,
        rng: &mut ChaCha8Rng,
        started: Instant,
        ctx: &RunContext,
    ) -> Result<Run<'a>> {
        let opts = &spec.options;
        let (mut td, target_mean, standardize, labels) =
            prepare_for(data, spec.standardize, opts.likelihood())?;
        td.log_exposure = exposure.map(Exposure::log_train);
        let td = match opts.subset {
            Some(n) => methods::exact::subset(&td, n, rng),
            None => td,
        };
        let offset = raw_scale_offset(standardize.as_ref(), td.y.len());
        ctx.set_offset(offset);
        ctx.set_positive(opts.positive());
        let floor = noise_floor(opts, &td);
        let pins = methods::start::pins(&td, opts, standardize.as_ref())?;
        Ok(Run {
            spec,
            td,
            target_mean,
            standardize,
            feature_names: &data.feature_names,
            target_name: &data.target_name,
            floor,
            labels,
            classes: data.classes.as_ref(),
            pins,
            offset,
            started,
        })
    }

    /// A start model: from a subset fit's end (`subset_fit`, a model of the exact GP),
    /// else the default start (docs/methods.md §0.4).
    fn start(
        &self,
        subset_fit: Option<ModelFile>,
        rng: &mut ChaCha8Rng,
        ctx: &RunContext,
    ) -> Result<ModelFile> {
        let mut model = start_model(
            &self.td,
            self.spec,
            self.target_mean,
            self.standardize.clone(),
            self.feature_names,
            self.target_name,
            self.floor,
            self.labels,
            subset_fit,
            rng,
            ctx,
        )?;
        // a bernoulli model names the labels its classes 0 and 1 stand for
        if let Some(t) = model.likelihood.as_mut()
            && t.name == LikelihoodKind::Bernoulli
        {
            t.classes = self.classes.map(|c| c.names.clone());
        }
        Ok(model)
    }

    /// The run's composed kernel at its default start, on a model of the exact GP
    /// ([`composed_start`]; None for a plain kernel): the subset fit's kernel and the
    /// source of its starts. `rng` is cloned, not drawn from.
    fn composed_start(&self, rng: &ChaCha8Rng, ctx: &RunContext) -> Result<Option<ModelFile>> {
        composed_start(
            &self.td,
            self.spec,
            self.standardize.as_ref(),
            self.feature_names,
            ctx,
            &mut rng.clone(),
        )
    }

    /// A full GP fitted on a subset (the best of six starts; docs/methods.md §0.4), its
    /// draws from `rng`: where the second start and the collapse restart begin. Its
    /// σ0², ℓ, σ², or a composed kernel's values and σ², as a model of the exact GP.
    fn subset_fit(&self, rng: &mut ChaCha8Rng, ctx: &RunContext) -> Result<(ModelFile, String)> {
        let composed = self.composed_start(rng, ctx)?;
        ctx.enter(Phase::SubsetInit);
        methods::exact::subset_start(
            &self.td,
            self.td.y.len().min(methods::start::COLLAPSE_SUBSET),
            self.subset_kernel(composed.as_ref()),
            methods::start::SUBSET_ITERS,
            &self.pins,
            ctx,
            rng,
        )
    }

    /// The kernel of the run's subset fits: the composed kernel `composed` at its start,
    /// else the run's plain kernel.
    fn subset_kernel<'k>(
        &self,
        composed: Option<&'k ModelFile>,
    ) -> methods::exact::SubsetKernel<'k> {
        match composed {
            Some(start) => methods::exact::SubsetKernel::Composed(start),
            None => methods::exact::SubsetKernel::Plain(self.spec.options.kernel_kind()),
        }
    }

    /// The default second start: a full GP on a subset sized by the main fit's cost,
    /// its six starts fitted on a smaller part of it and the best refined on all of it
    /// (docs/methods.md §0.4; [`methods::exact::subset_start_warm`]), as [`Run::subset_fit`].
    fn second_start_fit(
        &self,
        rng: &mut ChaCha8Rng,
        ctx: &RunContext,
    ) -> Result<(ModelFile, String)> {
        use methods::start::{REFINE_ITERS, SUBSET_ITERS, second_start_subset, warm_subset};
        let composed = self.composed_start(rng, ctx)?;
        ctx.enter(Phase::SubsetInit);
        let spec = self.spec;
        let n_sub = second_start_subset(self.td.y.len(), spec.m, self.td.x.ncols(), spec.iters);
        methods::exact::subset_start_warm(
            &self.td,
            (n_sub, warm_subset(self.td.x.ncols())),
            self.subset_kernel(composed.as_ref()),
            // the subset's fits get no more iterations than the main fit
            (SUBSET_ITERS.min(spec.iters), REFINE_ITERS),
            &self.pins,
            ctx,
            rng,
        )
    }

    /// The default fit's two starts raced ([`crate::two_starts`]): the fit from the
    /// §0.4 start (the run's `rng`) and the fit from the subset-fitted start (its
    /// subset fit and draws from `second_rng`) advance in turns, the one clearly behind
    /// is stopped, and the lower objective is kept. The first fit's first turn comes
    /// before the subset fit, so progress shows an objective from the first evaluation.
    fn race(
        &self,
        mut rng: ChaCha8Rng,
        mut second_rng: ChaCha8Rng,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome, SecondStart)> {
        let (spec, method) = (self.spec, self.spec.method());
        let first = |c: &RunContext| {
            c.enter(Phase::Fit { stage: 0 });
            let model = self.start(None, &mut rng, c)?;
            method.fit(model, &self.td, spec, c)
        };
        let mut subset_start = String::new();
        let second = |c: &RunContext| {
            let (fitted, from) = self.second_start_fit(&mut second_rng, c)?;
            subset_start = from;
            c.enter(Phase::SecondStart);
            let model = self.start(Some(fitted), &mut second_rng, c)?;
            method.fit(model, &self.td, spec, c)
        };
        let ended = crate::two_starts::race(ctx, (spec.iters, self.td.y.len()), first, second);
        // a cancelled run keeps how far its fit got (the first's, else the second's);
        // otherwise an error of either fit is the run's
        for out in [&ended.first, &ended.second].into_iter().flatten() {
            unless_cancelled(&out.1, self.offset, self.started)?;
        }
        let (first, second) = (ended.first?, ended.second?);
        let (first_nlml, second_nlml) = (first.1.f + self.offset, second.1.f + self.offset);
        let (mut fitted, mut outcome) = first;
        let kept_second = keep_lower(&mut fitted, &mut outcome, second);
        Ok((
            fitted,
            outcome,
            SecondStart {
                first_nlml,
                second_nlml,
                subset_start,
                kept_second,
                dropped_at: ended.dropped.map(|(_, at)| at),
            },
        ))
    }

    /// The first fit: from one start, or the best of `--restarts`' short fits
    /// continued.
    fn first(
        &self,
        rng: &mut ChaCha8Rng,
        ctx: &RunContext,
        fit_ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        let (spec, method) = (self.spec, self.spec.method());
        match spec.options.restarts.unwrap_or(1) {
            k if k > 1 => self.best_of_restarts(k, rng, ctx, fit_ctx),
            _ => {
                let model = self.start(None, rng, ctx)?;
                fit_ctx.enter(Phase::Fit { stage: 0 });
                method.fit(model, &self.td, spec, fit_ctx)
            }
        }
    }

    /// K seeded starts, a short fit each; the best (by its objective at the end of its
    /// short fit) continues for the rest of the budget: a tenth of the iterations, or
    /// with --epochs a tenth of the epochs (at least one).
    fn best_of_restarts(
        &self,
        k: usize,
        rng: &mut ChaCha8Rng,
        ctx: &RunContext,
        fit_ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        let (spec, method) = (self.spec, self.spec.method());
        let short = (spec.iters / 10).max(10).min(spec.iters);
        let (short_spec, rest_spec) = match spec.options.epochs {
            Some(e) => {
                let short_e = (e / 10).max(1).min(e);
                (spec.with_epochs(short_e), spec.with_epochs(e - short_e))
            }
            None => (
                spec.with_iters(short),
                spec.with_iters(spec.iters.saturating_sub(short)),
            ),
        };
        let mut best: Option<(ModelFile, Outcome)> = None;
        for r in 0..k {
            let mut rng_r = if r == 0 {
                rng.clone()
            } else {
                ChaCha8Rng::seed_from_u64(restart_seed(spec.seed, r))
            };
            let rctx = ctx.restart(r);
            rctx.enter(Phase::Restart { start: r });
            let model = self.start(None, &mut rng_r, &rctx)?;
            let (m, out) = method.fit(model, &self.td, &short_spec, &rctx)?;
            if out.stop == Stop::Cancelled {
                return Ok((m, out));
            }
            if best.as_ref().is_none_or(|(_, b)| out.f < b.f) {
                best = Some((m, out));
            }
        }
        let (model, first) = best.ok_or_else(|| Error::input("no restart ran"))?;
        fit_ctx.enter(Phase::Fit { stage: 0 });
        let (m, more) = method.fit(model, &self.td, &rest_spec, fit_ctx)?;
        let joined = Outcome {
            iterations: first.iterations + more.iterations,
            evaluations: first.evaluations + more.evaluations,
            trace: first
                .trace
                .iter()
                .chain(more.trace.iter().skip(1))
                .copied()
                .collect(),
            ..more
        };
        Ok((m, joined))
    }

    /// By default a second fit starts from a subset fit (`second`: its end, a model of
    /// the exact GP, and the generator it continues) and the lower objective is kept: from the §0.4 start
    /// alone an optimiser can settle in a poor basin (a relevant input switched off, or
    /// the constant predictor) that the fitted start avoids, and the other way round
    /// (docs/results/starts.md). Without it, a fit from one start that ends as the
    /// constant predictor runs again from a subset fit (unless `--no-collapse-restart`,
    /// or validation watches the fit); the end with the better objective is kept.
    fn second(
        &self,
        second: Option<((ModelFile, String), ChaCha8Rng)>,
        may_restart: bool,
        (fitted, outcome): (&mut ModelFile, &mut Outcome),
        ctx: &RunContext,
        fit_ctx: &RunContext,
    ) -> Result<(Option<SecondStart>, Option<CollapseRestart>)> {
        let (spec, method) = (self.spec, self.spec.method());
        let (started, offset) = (self.started, self.offset);
        if let Some(((subset_fit, subset_start), mut rng_s)) = second {
            let model = self.start(Some(subset_fit), &mut rng_s, ctx)?;
            let sctx = ctx.second_start();
            sctx.enter(Phase::SecondStart);
            let (m, out) = method.fit(model, &self.td, spec, &sctx)?;
            unless_cancelled(&out, offset, started)?;
            let (first_nlml, second_nlml) = (outcome.f + offset, out.f + offset);
            let kept_second = keep_lower(fitted, outcome, (m, out));
            return Ok((
                Some(SecondStart {
                    first_nlml,
                    second_nlml,
                    subset_start,
                    kept_second,
                    dropped_at: None,
                }),
                None,
            ));
        }
        // a composed kernel is judged by its own prior variance over the training inputs
        if fitted.collapsed_on(&self.td.x).is_none()
            || spec.options.no_collapse_restart
            || !may_restart
        {
            return Ok((None, None));
        }
        let mut rng_c = ChaCha8Rng::seed_from_u64(restart_seed(spec.seed, COLLAPSE_STREAM));
        let (subset_fit, subset_start) = self.subset_fit(&mut rng_c, ctx)?;
        let model = self.start(Some(subset_fit), &mut rng_c, ctx)?;
        fit_ctx.enter(Phase::Fit { stage: 0 });
        let (m, out) = method.fit(model, &self.td, spec, fit_ctx)?;
        unless_cancelled(&out, offset, started)?;
        let (collapsed_nlml, collapsed_iterations) = (outcome.f + offset, outcome.iterations);
        let kept_restart = keep_lower(fitted, outcome, (m, out));
        Ok((
            None,
            Some(CollapseRestart {
                collapsed_nlml,
                collapsed_iterations,
                subset_start: Some(subset_start),
                kept_restart,
            }),
        ))
    }
}
