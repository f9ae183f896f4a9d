//! `sgpw fit --distributed`: one fit over every process. After the processes agree on
//! the data ([`super::agree`]), a method whose sums add over processes is fitted by
//! L-BFGS on the root, the others serving each evaluation on their rows ([`lead`]); a
//! method that trains on minibatches runs its loop on every process from the root's
//! start ([`train_minibatches`]). The root ends the fit as every fit ends
//! ([`train::finish`]): a cancelled fit keeps how far it got.

use super::agree::{Shared, read_and_agree};
use super::transport::{MpiShare, Processes};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::data::{LoadSpec, TrainData};
use sgpw::distributed::Fitted;
use sgpw::error::{Error, Result};
use sgpw::exec::Exec;
use sgpw::methods::{RowSource, ValidRunSpec};
use sgpw::model_file::{ModelFile, raw_scale_offset};
use sgpw::optim::Outcome;
use sgpw::run_context::{Phase, Progress, RunContext};
use sgpw::train::{self, Final, FitResult, Stopped, Test};
use std::cell::Cell;
use std::time::Instant;

/// Options a distributed fit refuses, and why.
fn refuse(spec: &ValidRunSpec, load: &LoadSpec) -> Result<()> {
    let method = spec.method();
    if !method.shares_rows() && !method.fits_rows() {
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
        (
            o.likelihood() != sgpw::likelihoods::LikelihoodKind::Gaussian,
            "a --likelihood other than gaussian (the processes share the targets in model units)",
        ),
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
    let end = End {
        shared: &shared,
        spec,
        load,
        started,
        n_test: Cell::new(0),
    };
    let (result, bytes_per_step) = if spec.method().fits_rows() {
        let Some((result, per_step)) = train_minibatches(share, &end, sample, exec, sink)? else {
            return Ok(None);
        };
        (result, Some(per_step))
    } else {
        let Some(sample) = sample else {
            share.serve(&shared.data, &exec)?;
            return Ok(None);
        };
        let result = lead(&end, &sample, exec, sink);
        share.stop();
        (result?, None)
    };
    Ok(Some(Fitted {
        result,
        n_train: shared.n_total,
        n_test: end.n_test.get(),
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

/// What the root's end of the fit needs: the data agreed on, the run, the test file.
struct End<'a> {
    shared: &'a Shared,
    spec: &'a ValidRunSpec,
    load: &'a LoadSpec,
    started: Instant,
    /// The test rows scored.
    n_test: Cell<usize>,
}

impl End<'_> {
    /// The root's end of a fit ([`train::finish`]): the objective and the posterior
    /// over every process's rows at the fitted parameters (the others serve them), the
    /// test file scored.
    fn finish(&self, fitted: ModelFile, outcome: Outcome, ctx: &RunContext) -> Result<FitResult> {
        let shared = self.shared;
        let offset = raw_scale_offset(shared.standardize.as_ref(), shared.n_total);
        // Σ (y − ȳ)² / n in the data's units, from the model units' Σ y²
        let scale = shared.standardize.as_ref().map_or(1.0, |s| s.target_scale);
        let target_variance = shared.sum_y2 / shared.n_total.max(1) as f64 * scale * scale;
        let stopped = Stopped {
            target_variance: Some(target_variance),
            ..Stopped::plain(
                self.spec.method(),
                fitted,
                outcome,
                offset,
                self.started,
                shared.n_total,
            )
        };
        let load_test = || self.test_rows();
        let test = match &self.load.test {
            Some(_) => Test::Load(&load_test),
            None => Test::None,
        };
        train::finish(stopped, Final::On(&shared.data), test, ctx)
    }

    /// The test file's rows (its columns the training rows' kept features and target).
    fn test_rows(&self) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let Some(path) = &self.load.test else {
            return Err(Error::input("internal: no test file to read"));
        };
        let t = sgpw::data::load::load_for_model(&LoadSpec {
            train: path.clone(),
            test: None,
            split: None,
            seed: self.load.seed,
            target: Some(self.shared.target_name.clone()),
            features: Some(self.shared.feature_names.clone()),
            drop_missing: self.load.drop_missing,
        })?;
        self.n_test.set(t.n_train());
        Ok((t.x_train, t.y_train.as_slice().to_vec()))
    }
}

/// The root's part of a fit: the start from the gathered rows, L-BFGS over every
/// process's rows, the end.
fn lead(end: &End, sample: &TrainData, exec: Exec, sink: &dyn Fn(&Progress)) -> Result<FitResult> {
    let model = start_model(end.shared, sample, end.spec, sink)?;
    let ctx = fit_context(end.shared, end.spec, exec, sink);
    let (fitted, outcome) = end
        .spec
        .method()
        .fit(model, &end.shared.data, end.spec, &ctx)?;
    end.finish(fitted, outcome, &ctx)
}

/// The start, on the root alone, from the gathered rows: the hyperparameters and the
/// method's tables as one process computes them from these rows, with the noise floor
/// of every row's targets.
fn start_model(
    shared: &Shared,
    sample: &TrainData,
    spec: &ValidRunSpec,
    sink: &dyn Fn(&Progress),
) -> Result<ModelFile> {
    let local = RunContext::new(Exec::default(), sink);
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let floor = Some(spec.options.noise_floor())
        .filter(|f| *f > 0.0)
        .map(|f| f * shared.sum_y2 / shared.n_total as f64);
    train::start_model(
        sample,
        spec,
        shared.target_mean,
        shared.standardize.clone(),
        &shared.feature_names,
        &shared.target_name,
        floor,
        None,
        None,
        &mut rng,
        &local,
    )
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

/// A method that trains on minibatches, over every process: the root's start is given
/// to every process, and every process runs the same training loop on its stripe
/// ([`sgpw::methods::Method::fit_rows`] with [`RowSource::Memory`]): the same seeded
/// order of every process's rows, each process evaluating the members of each
/// minibatch it holds, the sums added with one all-reduce per evaluation, and the same
/// steps on every process from the same totals. The root then ends the fit as [`lead`]
/// does (the others serve its evaluations) and returns the result with the bytes this
/// process summed per step; the others None.
fn train_minibatches(
    share: &MpiShare,
    end: &End,
    sample: Option<TrainData>,
    exec: Exec,
    sink: &dyn Fn(&Progress),
) -> Result<Option<(FitResult, usize)>> {
    let (shared, spec) = (end.shared, end.spec);
    let start = sample.map(|s| start_model(shared, &s, spec, sink));
    let model = share.broadcast_model(start)?;
    let counts = share
        .counts(Some(shared.data.y.len()))
        .ok_or_else(|| Error::input("--distributed: the processes' row counts disagree"))?;
    let first: usize = counts[..share.rank].iter().sum();
    let rows = RowSource::Memory {
        data: &shared.data,
        first,
        n: shared.n_total,
    };
    let ctx = fit_context(shared, spec, exec.clone(), sink);
    let before = share.traffic();
    let (fitted, outcome) = spec.method().fit_rows(model, rows, spec, &ctx)?;
    // the sums of the minibatches' steps, not those of the bound's checks on the way
    let after = share.traffic();
    let summed = (after.summed - before.summed) - (after.values - before.values);
    let per_step = summed / outcome.iterations.max(1);
    if share.rank != 0 {
        share.serve(&shared.data, &exec)?;
        return Ok(None);
    }
    let result = end.finish(fitted, outcome, &ctx);
    share.stop();
    Ok(Some((result?, per_step)))
}
