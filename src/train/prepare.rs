//! Where a fit begins: the data in model units ([`prepare`]), the noise floor, and the
//! start model ([`start_model`]), shared by every path through a fit.

use crate::data::moments::moments;
use crate::data::{Dataset, TrainData};
use crate::error::{Error, Result};
use crate::likelihoods::{BinaryLabels, LikelihoodKind, LikelihoodTable};
use crate::methods::{self, Method as _, ValidRunSpec};
use crate::model_file::{Hyper, ModelFile, Standardize};
use crate::run_context::RunContext;
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;

/// Transform a data set into model units and record the transformation. The means and
/// standard deviations are computed on scaled values ([`crate::data::moments`]), so a
/// target near 1e150 standardizes as one near 1 does.
pub fn prepare(data: &Dataset, standardize: bool) -> (TrainData, f64, Option<Standardize>) {
    let y = data.y_train.as_slice();
    let target = moments(y.iter().copied());
    let mean = target.mean;
    if !standardize {
        let td = TrainData {
            x: data.x_train.clone(),
            y: y.iter().map(|v| v - mean).collect(),
            log_exposure: None,
        };
        return (td, mean, None);
    }
    // a constant column keeps scale 1 (the loader drops constant inputs and refuses a
    // constant target; a hand-built data set may still have one)
    let unit = |sd: f64| if sd > 0.0 { sd } else { 1.0 };
    let x = &data.x_train;
    let inputs: Vec<_> = (0..x.ncols())
        .map(|d| moments(x.column(d).iter().copied()))
        .collect();
    let center: Vec<f64> = inputs.iter().map(|m| m.mean).collect();
    let scale: Vec<f64> = inputs.iter().map(|m| unit(m.sd)).collect();
    let ys = unit(target.sd);
    let td = TrainData {
        x: DMatrix::from_fn(x.nrows(), x.ncols(), |i, d| {
            (x[(i, d)] - center[d]) / scale[d]
        }),
        y: y.iter().map(|v| (v - mean) / ys).collect(),
        log_exposure: None,
    };
    (
        td,
        mean,
        Some(Standardize {
            input_center: center,
            input_scale: scale,
            target_scale: ys,
        }),
    )
}

/// [`prepare`] for a fit with the likelihood `kind`: counts and class labels
/// ([`crate::likelihoods::keeps_targets`]) are not centred or scaled — a binary target's
/// labels become 0 and 1 (returned, for the model file) — while the inputs are
/// standardised as asked. The targets were checked for `kind` ([`super::fit_rows`]).
pub fn prepare_for(
    data: &Dataset,
    standardize: bool,
    kind: LikelihoodKind,
) -> Result<(TrainData, f64, Option<Standardize>, Option<BinaryLabels>)> {
    if let Some(c) = data.classes.as_ref().filter(|c| !c.booleans)
        && kind != LikelihoodKind::Bernoulli
    {
        return Err(Error::input(format!(
            "the target '{}' holds the labels \"{}\" and \"{}\", not numbers: the {kind} \
             likelihood needs numbers (to classify them, use --likelihood bernoulli; in a \
             session, likelihood = \"bernoulli\")",
            data.target_name, c.names[0], c.names[1]
        )));
    }
    let (mut td, mean, mut st) = prepare(data, standardize);
    if !crate::likelihoods::keeps_targets(kind) {
        return Ok((td, mean, st, None));
    }
    let y = data.y_train.as_slice();
    let labels = crate::likelihoods::target_problem(kind, y).map_err(|bad| {
        Error::input(format!(
            "the target '{}' at training row {}: {} ({kind} likelihood)",
            data.target_name,
            bad.row + 1,
            bad.reason
        ))
    })?;
    td.y = match labels {
        Some(l) => l.to_classes(y),
        None => y.to_vec(),
    };
    if let Some(s) = st.as_mut() {
        s.target_scale = 1.0;
    }
    Ok((td, 0.0, st, labels))
}

/// The starting signal variance σ0² of the latent function of a likelihood whose targets
/// are not centred or scaled
/// (GPflow's default kernel variance): its targets' spread says nothing about f's
/// (class labels, counts), while under N(0, 1) a probit's p(y = 1) spreads evenly over
/// (0, 1) and a Poisson rate e^f over a factor of e either way of 1.
pub const LATENT_SIGNAL_VARIANCE: f64 = 1.0;

/// The noise floor in model units: a fraction of the training targets' variance.
pub(crate) fn noise_floor(opts: &crate::run_spec::MethodOptions, td: &TrainData) -> Option<f64> {
    Some(opts.noise_floor()).filter(|f| *f > 0.0).map(|f| {
        let n = td.y.len().max(1) as f64;
        f * td.y.iter().map(|v| v * v).sum::<f64>() / n
    })
}

/// The hyperparameters a run's default start begins from
/// ([`methods::start::initial_hyper`]'s; σ0² at [`LATENT_SIGNAL_VARIANCE`] for a
/// likelihood whose targets are not centred and scaled, unless given).
fn default_start_hyper(
    td: &TrainData,
    spec: &ValidRunSpec,
    standardize: Option<&Standardize>,
    ctx: &RunContext,
    rng: &mut ChaCha8Rng,
) -> Result<Hyper> {
    let mut h = methods::start::initial_hyper(td, spec, standardize, ctx, rng)?;
    if crate::likelihoods::keeps_targets(spec.options.likelihood())
        && spec.options.init_signal_variance.is_none()
    {
        h.signal_variance = LATENT_SIGNAL_VARIANCE;
    }
    Ok(h)
}

/// A run's composed kernel (`--kernel` an expression) as its default start has it, on a
/// model of the exact GP: where the subset fit's starts for it come from
/// (`methods::exact::SubsetKernel::Composed`). None for a plain kernel. The same kernel
/// [`start_model`] builds for the default start (the §0.4 start's σ0² and ℓ, the data's
/// periods, the run's `--fix` paths); `rng` is not drawn from (the default start draws
/// only for `--init-lengthscales-from-subset`, which has no subset start).
pub(crate) fn composed_start(
    td: &TrainData,
    spec: &ValidRunSpec,
    standardize: Option<&Standardize>,
    feature_names: &[String],
    ctx: &RunContext,
    rng: &mut ChaCha8Rng,
) -> Result<Option<ModelFile>> {
    let Some(expression) = spec.options.kernel_expression() else {
        return Ok(None);
    };
    let hyper = default_start_hyper(td, spec, standardize, ctx, rng)?;
    let mut model = ModelFile::new(methods::exact::Exact.name(), hyper);
    let fixes = spec.options.fix.as_deref().unwrap_or_default();
    set_composed_kernel(
        &mut model,
        expression,
        td,
        feature_names,
        standardize,
        fixes,
    )?;
    Ok(Some(model))
}

/// A start: hyperparameters (from `subset_fit`, a subset fit's end, else
/// [`methods::start::initial_hyper`]'s), then the method's own initialisation, from `td`
/// (the training data in model units, or a sample of it), with the transformation into
/// model units and the noise floor recorded. A subset fit's end with a composed kernel
/// gives the kernel its values and σ² (the rest of the start is the default start's).
#[allow(clippy::too_many_arguments)]
pub fn start_model(
    td: &TrainData,
    spec: &ValidRunSpec,
    target_mean: f64,
    standardize: Option<Standardize>,
    feature_names: &[String],
    target_name: &str,
    floor: Option<f64>,
    labels: Option<BinaryLabels>,
    subset_fit: Option<ModelFile>,
    rng: &mut ChaCha8Rng,
    ctx: &RunContext,
) -> Result<ModelFile> {
    let method = spec.method();
    let (hyper, fitted_kernel) = match subset_fit {
        // a kernel on other inputs than the columns (spgp-dr, pca-spgp) cannot take the
        // subset fit's, which reads the columns: the expression's start, the fit's σ²
        Some(f) if f.composed.is_some() && method.kernel_input_name().is_some() => {
            let mut h = default_start_hyper(td, spec, standardize.as_ref(), ctx, rng)?;
            h.noise_variance = f.collapsed_noise()?;
            (h, None)
        }
        Some(f) if f.composed.is_some() => {
            let mut h = default_start_hyper(td, spec, standardize.as_ref(), ctx, rng)?;
            h.noise_variance = f.collapsed_noise()?;
            (h, f.composed)
        }
        Some(f) => (f.hyper, None),
        None => (
            default_start_hyper(td, spec, standardize.as_ref(), ctx, rng)?,
            None,
        ),
    };
    let mut model = method.init(td, spec, hyper, ctx, rng)?;
    if let Some(expression) = spec.options.kernel_expression() {
        match fitted_kernel {
            // the subset fit's kernel: the expression's, built as below, with its fitted values
            Some(kernel) => {
                model.composed = Some(kernel);
                model.hyper.lengthscales.clear();
            }
            None => {
                let fixes = spec.options.fix.as_deref().unwrap_or_default();
                match method.kernel_inputs(&model, &td.x).transpose()? {
                    // the inputs the kernel reads, named by index, in the model's units
                    // but for the target's scale
                    Some((x, lengthscales)) => {
                        model.hyper.lengthscales = lengthscales;
                        let names = (0..x.ncols()).map(|i| i.to_string()).collect::<Vec<_>>();
                        let units = standardize.as_ref().map(|s| s.target_only(x.ncols()));
                        let on = TrainData {
                            x,
                            y: td.y.clone(),
                            log_exposure: None,
                        };
                        // change points switch along one input, which no dims=[…] may
                        // name here
                        let switches = crate::kernel::expression::KernelExpr::parse(expression)
                            .is_ok_and(|e| e.parts().iter().any(|p| p.name == "changepoints"));
                        if switches && on.x.ncols() > 1 {
                            return Err(Error::input(format!(
                                "kernel (--kernel): changepoints switch along one input, but \
                                 the kernel of '{}' reads {}, {} of them, and dims=[…] cannot \
                                 name one there: use --dims 1",
                                method.name(),
                                method.kernel_input_name().unwrap_or("other inputs"),
                                on.x.ncols()
                            )));
                        }
                        set_composed_kernel(
                            &mut model,
                            expression,
                            &on,
                            &names,
                            units.as_ref(),
                            fixes,
                        )?;
                    }
                    None => set_composed_kernel(
                        &mut model,
                        expression,
                        td,
                        feature_names,
                        standardize.as_ref(),
                        fixes,
                    )?,
                }
            }
        }
        method.init_for_kernel(&mut model, spec, rng)?;
    }
    methods::start::set_given_inducing_inputs(
        &mut model,
        spec,
        feature_names,
        standardize.as_ref(),
    )?;
    model.target_mean = target_mean;
    model.standardize = standardize;
    model.inputs = Some(feature_names.to_vec());
    model.target = Some(target_name.to_string());
    // the start's Gaussian noise, before the model takes its likelihood
    let start_noise = model.collapsed_noise()?;
    model.likelihood = LikelihoodTable::start(spec.options.likelihood(), labels).map(|mut t| {
        t.quadrature_points = spec.options.quadrature_points;
        // probit, the default, is written as no link
        t.link = spec
            .options
            .link
            .filter(|l| *l != crate::likelihoods::Link::Probit);
        t.ep_damping = spec.options.ep_damping;
        t.exposure = spec.options.exposure.as_ref().map(|c| c.trim().to_string());
        if t.name == LikelihoodKind::StudentT {
            // the scale starts where the Gaussian's noise would: its standard deviation
            t.params.insert("scale".into(), start_noise.sqrt());
        }
        t
    });
    if let Some(f) = floor {
        model.noise_floor = Some(f);
        model.hyper.noise_variance = model.hyper.noise_variance.max(2.0 * f);
    }
    // after the Student-t scale took its start from σ²: another likelihood has no σ²
    model.hold_unused_noise();
    methods::start::pins(td, &spec.options, model.standardize.as_ref())?
        .apply_checked(&mut model)?;
    Ok(model)
}

/// Give `model` the kernel `expression` builds (`--kernel`, with the run's `--fix`
/// paths such as `periodic.period`), its values read in the data's units and converted
/// into the model's (`units`), its parts starting where the expression gives no value
/// from the model's σ0² and ℓ (§0.4's start) and the data's periods and mean squares
/// ([`crate::kernel::Start::from_data`], model units); the plain lengthscales go, as
/// the kernel carries its own.
pub fn set_composed_kernel(
    model: &mut ModelFile,
    expression: &str,
    td: &TrainData,
    feature_names: &[String],
    units: Option<&Standardize>,
    fixes: &[crate::fix::Fix],
) -> Result<()> {
    let start = crate::kernel::Start::from_data(
        feature_names.to_vec(),
        &td.x,
        &td.y,
        (
            model.hyper.signal_variance,
            model.hyper.lengthscales.clone(),
        ),
        crate::kernel::searches_periods(expression),
    );
    let scales = units.map(crate::model_file::Standardize::scales);
    let kernel = crate::kernel::KernelChoice::build_for_fit(expression, &start, fixes, scales)
        .map_err(|e| Error::input(format!("kernel (--kernel): {e}")))?;
    model.composed = crate::kernel::ComposedKernel::new(kernel);
    if model.composed.is_none() {
        return Err(Error::input(format!(
            "kernel (--kernel): '{expression}' builds a kernel a model file cannot store"
        )));
    }
    model.hyper.lengthscales.clear();
    Ok(())
}
