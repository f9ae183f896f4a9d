//! Where a run's hyperparameters start: the defaults of docs/methods.md §0.4, or those of a
//! full GP fitted on a random subset first. (A module of its own because the subset
//! fit is the exact GP's, which itself uses the shared parameter helpers.)

use super::hyper::default_hyper;
use super::method::ValidRunSpec;
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::model_file::{Hyper, ModelFile, Standardize};
use crate::params::{self, Pins};
use crate::run_context::{Phase, RunContext};
use crate::run_spec::{MethodOptions, Naming};
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use std::path::Path;

/// Iteration budget of the full GP of `--hyper-from-subset` (whatever the run's budget,
/// so that runs of one seed with different budgets start from the same
/// hyperparameters).
pub const SUBSET_ITERS: usize = 200;

/// A collapsed fit restarts from a full GP fitted on min(n, this) random training points
/// (several starts, the best NLML kept: [`super::exact::subset_start`]).
pub const COLLAPSE_SUBSET: usize = 1000;

/// The default second start's subset fit ([`super::exact::subset_start_warm`]: six
/// starts on [`WARM_SUBSET`] points, the best refined on all n_s for at most
/// [`REFINE_ITERS`] iterations) is sized to cost a fraction of the main fit: n_s points
/// with n_s³ ≤ this × iterations × n·m·(m + D), between [`MIN_SECOND_SUBSET`] and
/// [`COLLAPSE_SUBSET`] (never above n). An exact-GP evaluation costs about n_s³ (its
/// Cholesky factor and inverse), a sparse one about n·m·(m + D); the refinement's
/// evaluations on n_s points dominate the subset fit. Measured (docs/results/starts.md,
/// "Two starts at a bounded price"): at 1/14, kin40k vfe m = 25 got 665 points and its
/// second start lost every seed (NMSE 0.165 over seeds 1–5, one start's); with all 1000,
/// 0.154, as two whole fits.
pub const SECOND_SUBSET_COST: f64 = 1.0 / 4.0;

/// The fewest points of the second start's subset fit (fewer than n only when n is):
/// below this an exact GP on a subset says little about the lengthscales, and it costs
/// a few hundredths of a second.
pub const MIN_SECOND_SUBSET: usize = 200;

/// The points the second start's six subset starts are fitted on before the best is
/// refined on all of the subset: at least this many, and [`WARM_PER_INPUT`] per input.
pub const WARM_SUBSET: usize = 250;

/// Points per input of the six starts' fits: with many inputs of which few matter, a
/// small subset makes a short-lengthscale start look best and the refinement keeps its
/// basin (pumadyn-32nm, 32 inputs: from 250 points vfe m = 25 seed 1 ended at NMSE
/// 0.081, from 384 at 0.050; docs/results/starts.md).
pub const WARM_PER_INPUT: usize = 12;

/// The points of the six starts' fits for data with `dim` inputs ([`WARM_SUBSET`],
/// [`WARM_PER_INPUT`]).
pub fn warm_subset(dim: usize) -> usize {
    WARM_SUBSET.max(WARM_PER_INPUT * dim)
}

/// At most this many iterations refine the best small subset fit on all of the subset.
pub const REFINE_ITERS: usize = 15;

/// The points of the second start's subset fit for a run of `iters` iterations on `n`
/// training rows of `dim` inputs with `m` (inducing points, features) ([`SECOND_SUBSET_COST`]).
pub fn second_start_subset(n: usize, m: usize, dim: usize, iters: usize) -> usize {
    let main = iters as f64 * n as f64 * m as f64 * (m + dim) as f64;
    let points = (SECOND_SUBSET_COST * main).cbrt().floor();
    let points = if points.is_finite() {
        points as usize
    } else {
        0
    };
    points.clamp(MIN_SECOND_SUBSET, COLLAPSE_SUBSET).min(n)
}

/// `--hyper-from-subset` when a method that does not fit σ0², ℓ by gradient (greedy
/// without `--adapt`, rvm) is given no source for them: min(n, this).
pub const DEFAULT_SUBSET: usize = 2000;

/// The hyperparameters a run starts from: those of a full GP fitted on a random
/// subset when `init_lengthscales_from_subset` is set (the inter-domain and PSDS
/// papers' choice on pumadyn-32nm), else the defaults of docs/methods.md §0.4 with the
/// values the run gives (`init_lengthscales`, …: [`given_hyper`]). Methods draw
/// their features (frequencies, widths) from these, so the subset fit comes first.
/// Either way with the run's kernel (`--kernel`). `units` is how the data were
/// standardized (None: raw), to bring given values into model units.
pub fn initial_hyper(
    data: &TrainData,
    spec: &ValidRunSpec,
    units: Option<&Standardize>,
    ctx: &RunContext,
    rng: &mut ChaCha8Rng,
) -> Result<Hyper> {
    let kernel = spec.options.kernel_kind();
    let pins = pins(data, &spec.options, units)?;
    let mut hyper = match spec.options.init_lengthscales_from_subset {
        Some(n) => {
            ctx.enter(Phase::SubsetInit);
            super::exact::hyper_from_subset(
                data,
                n,
                kernel,
                spec.iters.min(200),
                spec.options.lengthscale_start(),
                &pins,
                ctx,
                rng,
            )?
        }
        None => given_hyper(
            default_hyper(data, spec.options.lengthscale_start()).with_kernel(kernel),
            &spec.options,
            units,
        )?,
    };
    pins.apply_hyper(&mut hyper);
    Ok(hyper)
}

/// The run's `--fix` as [`Pins`]: the blocks it names, with the values of the shared
/// ones in model units — the value given (in the data's units, converted as
/// [`given_hyper`] converts starting values), else the start of docs/methods.md §0.4
/// with the run's own starting values. Every start of the run holds them, so the
/// value a block is fixed at does not depend on which start wins.
pub fn pins(
    data: &TrainData,
    options: &MethodOptions,
    units: Option<&Standardize>,
) -> Result<Pins> {
    let Some(fixes) = options.fix.as_deref().filter(|f| !f.is_empty()) else {
        return Ok(Pins::none());
    };
    let kernel = options.kernel_kind();
    let mut at = given_hyper(
        default_hyper(data, options.lengthscale_start()).with_kernel(kernel),
        options,
        units,
    )?;
    let target_scale = units.map_or(1.0, |u| u.target_scale);
    for f in fixes {
        let Some(v) = f.value else { continue };
        match f.name.as_str() {
            params::SIGNAL_VARIANCE => at.signal_variance = v / (target_scale * target_scale),
            params::NOISE_VARIANCE => at.noise_variance = v / (target_scale * target_scale),
            params::RQ_ALPHA => at.rq_alpha = at.rq_alpha.map(|_| v),
            params::LENGTHSCALES => {
                for (d, l) in at.lengthscales.iter_mut().enumerate() {
                    *l = v / units.map_or(1.0, |u| u.input_scale[d]);
                }
            }
            _ => {}
        }
    }
    Ok(Pins::new(fixes, &at))
}

/// `start` with the starting values the run gives in the data's units (lengthscales in
/// the inputs' units, σ0² and σ² in the target's squared) replaced, converted into
/// model units: a standardized input d is x / s_d, so ℓ_d / s_d; a standardized target
/// is y / s_y, so σ² / s_y².
pub fn given_hyper(
    mut start: Hyper,
    options: &MethodOptions,
    units: Option<&Standardize>,
) -> Result<Hyper> {
    let target_scale = units.map_or(1.0, |u| u.target_scale);
    if let Some(v) = options.init_signal_variance {
        start.signal_variance = v / (target_scale * target_scale);
    }
    if let Some(v) = options.init_noise_variance {
        start.noise_variance = v / (target_scale * target_scale);
    }
    if let Some(given) = &options.init_lengthscales {
        let dim = start.lengthscales.len();
        if given.len() != 1 && given.len() != dim {
            return Err(Error::input(format!(
                "init_lengthscales (--init-lengthscales) has {} values but the data have \
                 {dim} input(s): give one value for all, or one per input in their order \
                 (constant input columns are dropped before the fit)",
                given.len()
            )));
        }
        for (d, l) in start.lengthscales.iter_mut().enumerate() {
            let input_scale = units.map_or(1.0, |u| u.input_scale[d]);
            *l = given[if given.len() == 1 { 0 } else { d }] / input_scale;
        }
    }
    Ok(start)
}

/// The run's own inducing inputs (`--inducing-inputs FILE`) in place of those the
/// method's `init` chose in `model`: read by [`read_points`] with the model's input
/// columns `inputs`, m rows, brought into model units with `units` (x − c) / s.
pub fn set_given_inducing_inputs(
    model: &mut ModelFile,
    spec: &ValidRunSpec,
    inputs: &[String],
    units: Option<&Standardize>,
) -> Result<()> {
    let Some(path) = &spec.options.inducing_inputs else {
        return Ok(());
    };
    let z = read_points(path, inputs)?;
    if z.nrows() != spec.m {
        return Err(Error::input(format!(
            "{}: {} inducing inputs but m = {} (--m): give m = {}",
            path.display(),
            z.nrows(),
            spec.m,
            z.nrows()
        )));
    }
    let z = match units {
        Some(u) => DMatrix::from_fn(z.nrows(), z.ncols(), |i, d| {
            (z[(i, d)] - u.input_center[d]) / u.input_scale[d]
        }),
        None => z,
    };
    spec.method().set_inducing_inputs(model, &z)
}

/// Points from a CSV file: a header naming each of `inputs` once (any order), then one
/// row of numbers per point; returned with the columns in the order of `inputs`. Errors
/// name the file, line and column.
pub fn read_points(path: &Path, inputs: &[String]) -> Result<DMatrix<f64>> {
    let at =
        |line: usize, what: String| Error::input(format!("{} line {line}: {what}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::input(format!(
            "{}: cannot read the inducing inputs file: {e}",
            path.display()
        ))
    })?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((h, header)) = lines.next() else {
        return Err(Error::input(format!(
            "{}: the inducing inputs file is empty; give a header naming the inputs ({})              and one row per inducing input",
            path.display(),
            inputs.join(",")
        )));
    };
    let names: Vec<&str> = header
        .split(',')
        .map(|c| c.trim().trim_matches('"'))
        .collect();
    for name in &names {
        if !inputs.iter().any(|i| i == name) {
            return Err(at(
                h + 1,
                format!(
                    "column '{name}' is not an input of the fit (its inputs: {}; a constant \
                     input column is dropped before the fit, leave it out)",
                    inputs.join(", ")
                ),
            ));
        }
    }
    let mut order = Vec::with_capacity(inputs.len());
    for input in inputs {
        let found: Vec<usize> = (0..names.len()).filter(|&j| names[j] == input).collect();
        match found[..] {
            [j] => order.push(j),
            [] => {
                return Err(at(
                    h + 1,
                    format!("no column '{input}' (the header names each input)"),
                ));
            }
            _ => return Err(at(h + 1, format!("column '{input}' is named twice"))),
        }
    }
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for (i, line) in lines {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != names.len() {
            return Err(at(
                i + 1,
                format!(
                    "{} values but the header has {} columns",
                    fields.len(),
                    names.len()
                ),
            ));
        }
        let row = order
            .iter()
            .map(|&j| match fields[j].parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(at(
                    i + 1,
                    format!(
                        "column '{}': '{}' is not a finite number",
                        names[j], fields[j]
                    ),
                )),
            })
            .collect::<Result<Vec<f64>>>()?;
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(Error::input(format!(
            "{}: the inducing inputs file has a header but no rows",
            path.display()
        )));
    }
    Ok(DMatrix::from_fn(rows.len(), inputs.len(), |i, d| {
        rows[i][d]
    }))
}

/// σ0², ℓ, σ² of a method whose own training does not fit σ0² and ℓ (greedy without
/// `--adapt`, rvm): a full GP on `--hyper-from-subset N` random training points
/// ([`SUBSET_ITERS`] iterations); when neither that nor
/// `--init-lengthscales-from-subset` nor a start of the run's own (`--init-lengthscales`,
/// …) is given and `default_subset`, the same on min(n, [`DEFAULT_SUBSET`]) points — never the §0.4 defaults, which nothing would
/// move; otherwise `hyper` (what [`initial_hyper`] chose) as it is.
pub fn hyper_for_fixed_kernel(
    data: &TrainData,
    spec: &ValidRunSpec,
    hyper: Hyper,
    default_subset: bool,
    ctx: &RunContext,
    rng: &mut ChaCha8Rng,
) -> Result<Hyper> {
    let o = &spec.options;
    let fallback =
        (default_subset && o.init_lengthscales_from_subset.is_none() && !o.given_start())
            .then(|| data.y.len().min(DEFAULT_SUBSET));
    match o.hyper_from_subset.or(fallback) {
        Some(n_sub) => {
            ctx.enter(Phase::SubsetInit);
            // `hyper` holds the run's fixed values (initial_hyper's)
            let pins = Pins::new(o.fix.as_deref().unwrap_or_default(), &hyper);
            super::exact::hyper_from_subset(
                data,
                n_sub,
                hyper.kernel,
                SUBSET_ITERS,
                o.lengthscale_start(),
                &pins,
                ctx,
                rng,
            )
        }
        None => Ok(hyper),
    }
}

/// `--hyper-from-subset` and `--init-lengthscales-from-subset` together: each fits a
/// full GP on a random subset for the starting σ0², ℓ, σ², so `method` takes one.
pub fn check_one_subset_fit(method: &str, options: &MethodOptions, naming: Naming) -> Result<()> {
    if options.init_lengthscales_from_subset.is_some() && options.hyper_from_subset.is_some() {
        return Err(Error::input(format!(
            "give {method} either {} or {}, not both: each fits a full GP on a random \
             subset for the starting σ0², ℓ, σ²",
            naming.setting("hyper_from_subset", "N"),
            naming.setting("init_lengthscales_from_subset", "N")
        )));
    }
    Ok(())
}
