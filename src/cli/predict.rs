//! `sgpw predict`: predictions of a model file at new inputs.

use crate::data::{self, LoadSpec};
use crate::error::{Error, Result};
use crate::model_file::ModelFile;
use crate::train::Predictor;
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Args)]
pub struct PredictArgs {
    /// Model file (TOML) written by `sgpw fit --save-model` or by hand.
    #[arg(long)]
    pub model: PathBuf,
    /// Inputs to predict at (CSV or Parquet); needs the model's input columns, others are ignored.
    #[arg(long)]
    pub input: PathBuf,
    /// Training data, for models without a stored [posterior] (hand-written ones, `full`).
    #[arg(long)]
    pub train: Option<PathBuf>,
    /// Target column of --train (default: the last column).
    #[arg(long)]
    pub target: Option<String>,
    /// Write the CSV here instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Training inputs and targets for a model, read with the model's own input columns.
pub fn training_data(
    model: &ModelFile,
    train: &std::path::Path,
    target: Option<String>,
) -> Result<(nalgebra::DMatrix<f64>, Vec<f64>)> {
    let ds = data::load(&LoadSpec {
        train: train.to_path_buf(),
        target,
        features: model.inputs.clone(),
        ..Default::default()
    })?;
    if ds.dim() != model.dim() {
        return Err(Error::data(
            train,
            format!(
                "has {} usable input columns but the model takes {} inputs",
                ds.dim(),
                model.dim()
            ),
        ));
    }
    Ok((ds.x_train, ds.y_train.as_slice().to_vec()))
}

pub fn run(args: PredictArgs) -> Result<()> {
    let (model, _) = crate::methods::read_model(&args.model)?;
    let features = model.inputs.clone().unwrap_or_default();
    let mut x = data::load_inputs(&args.input, &features)?;
    if features.is_empty() && x.ncols() > model.dim() {
        // A hand-written model names no inputs: the usual layout is features first.
        eprintln!(
            "note: the model has no `inputs` list; using the first {} column(s) of {}",
            model.dim(),
            args.input.display()
        );
        x = x.columns(0, model.dim()).into_owned();
    }
    let train = match &args.train {
        Some(t) => Some(training_data(&model, t, args.target.clone())?),
        None => None,
    };
    let predictor = Predictor::new(model, train.as_ref().map(|(x, y)| (x, y.as_slice())))
        .map_err(|e| Error::file(&args.model, e))?;
    let p = predictor.predict(&x)?;
    let mut out = String::from("mean,var_latent,var_noisy\n");
    for i in 0..p.mean.len() {
        let _ = writeln!(out, "{},{},{}", p.mean[i], p.var_latent[i], p.var_noisy[i]);
    }
    match &args.out {
        Some(path) => crate::model_file::atomic_write(path, &out),
        None => {
            print!("{out}");
            Ok(())
        }
    }
}
