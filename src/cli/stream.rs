//! `sgpw stream`: online PSDS. Folds the rows of a file into a psds/ssgp model one at a
//! time (hyperparameters and frequencies fixed) and reports every K samples.

use super::predict::training_data;
use crate::error::{Error, Result};
use crate::methods::online::OnlinePsds;
use crate::metrics;
use crate::model_file::{ModelFile, raw_scale_offset};
use crate::train::model_inputs;
use clap::Args;
use nalgebra::DMatrix;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct StreamArgs {
    /// A psds or ssgp model file (its [hyper] and [spectral] frequencies are kept fixed).
    #[arg(long)]
    pub model: PathBuf,
    /// Rows to fold in, in file order (CSV or Parquet).
    #[arg(long)]
    pub train: PathBuf,
    /// Test set: report NMSE and MNLP on it; without it, the NLML of the samples so far
    /// (on the raw target scale, as `fit` reports it).
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// Report every K samples (and after the last).
    #[arg(long, default_value_t = 100)]
    pub every: usize,
    /// Target column (default: the last column).
    #[arg(long)]
    pub target: Option<String>,
}

pub fn run(args: StreamArgs) -> Result<()> {
    if args.every == 0 {
        return Err(Error::input("--every must be at least 1"));
    }
    let (model, _) = crate::methods::read_model(&args.model)?;
    if model.method != "psds" && model.method != "ssgp" {
        return Err(Error::file(
            &args.model,
            format!("stream needs a psds or ssgp model, not '{}'", model.method),
        ));
    }
    let mut online = OnlinePsds::from_model(&model).map_err(|e| Error::file(&args.model, e))?;
    let (x, y) = training_data(&model, &args.train, args.target.clone())?;
    let x = model_inputs(&model, &x)?;
    let scale = model.standardize.as_ref().map_or(1.0, |s| s.target_scale);
    let test = match &args.test {
        Some(path) => {
            let (xt, yt) = training_data(&model, path, args.target.clone())?;
            Some((model_inputs(&model, &xt)?, yt))
        }
        None => None,
    };
    crate::outln!(
        "# online psds: r = {} spectral points (2r = {} basis functions), {} samples",
        online.r(),
        2 * online.r(),
        y.len()
    )?;
    match test {
        Some(_) => crate::outln!("samples,nmse,mnlp,seconds")?,
        None => crate::outln!("samples,nlml,seconds")?,
    }
    let started = Instant::now();
    let mut row = vec![0.0; x.ncols()];
    for (i, yi) in y.iter().enumerate() {
        for (d, v) in row.iter_mut().enumerate() {
            *v = x[(i, d)];
        }
        online
            .add(&row, (yi - model.target_mean) / scale)
            .map_err(|e| Error::data(&args.train, format!("row {}: {e}", i + 1)))?;
        if online.n() % args.every == 0 || i + 1 == y.len() {
            let secs = started.elapsed().as_secs_f64();
            match &test {
                Some((xt, yt)) => {
                    let (nmse, mnlp) = score(&online, &model, xt, yt, scale)?;
                    let mnlp = super::finite("test MNLP", mnlp)?;
                    // an undefined NMSE (every test target at the training mean) is an
                    // empty cell
                    let nmse = match nmse {
                        Some(v) => super::finite("test NMSE", v)?.to_string(),
                        None => String::new(),
                    };
                    crate::outln!("{},{nmse},{mnlp},{secs:.6}", online.n())?;
                }
                None => {
                    // on the raw target scale, as `fit` and `nlml` report it
                    let offset = raw_scale_offset(model.standardize.as_ref(), online.n());
                    let nlml = super::finite("NLML", online.nlml() + offset)?;
                    crate::outln!("{},{nlml},{secs:.6}", online.n())?
                }
            }
        }
    }
    Ok(())
}

/// NMSE and MNLP in the original units (ȳ = the model's training mean).
fn score(
    online: &OnlinePsds,
    model: &ModelFile,
    x: &DMatrix<f64>,
    y: &[f64],
    scale: f64,
) -> Result<(Option<f64>, f64)> {
    let (mean, var) = online.predict(x)?;
    let mean: Vec<f64> = mean.iter().map(|m| m * scale + model.target_mean).collect();
    // the Gaussian likelihood's σ² (the online model holds the model's)
    let s2 = model.collapsed_noise()?;
    let var: Vec<f64> = var.iter().map(|v| (v + s2) * scale * scale).collect();
    Ok((
        metrics::nmse(y, &mean, model.target_mean),
        metrics::mnlp(y, &mean, &var),
    ))
}
