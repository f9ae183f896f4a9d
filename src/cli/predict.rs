//! `sgpw predict`: predictions of a model file at new inputs.

use crate::data::{self, LoadSpec};
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::model_file::ModelFile;
use crate::train::{Observed, Predictor};
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
    /// Write the CSV here instead of standard output (renamed into place at the end).
    /// Nothing is written before the whole input has been read and predicted: to
    /// standard output the predictions go at the end, from a temporary file that needs
    /// about 60 bytes per row.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// For a kernel whose top level is a sum (`--kernel "se + se * periodic + rq"`):
    /// after the usual columns, each summand's posterior mean and latent variance,
    /// `mean_LABEL,var_latent_LABEL`, LABEL its short form (`se1`, `se2*periodic`, `rq`).
    /// In the target's units: a summand's mean is scaled by the target's standard
    /// deviation but, unlike the total's, has no target mean added (the summands' means
    /// add up to the total mean minus the target mean); its variance is scaled by the
    /// square. The variances do not add up (the summands' posteriors are correlated).
    /// full, the inducing-point methods (fitc, vfe, dtc, pep, spgp-hs, spgp-dr, pca-spgp),
    /// greedy, the inter-domain methods (fifgp, tfifgp, smgp), psds, ssgp and svgp only.
    #[arg(long)]
    pub components: bool,
    /// A poisson model fitted with an exposure (`fit --exposure`): the column of
    /// --input holding each row's exposure E > 0, so that mean, var, lower95 and
    /// upper95 are those of the count y ~ Poisson(E·exp f). Without it they are for an
    /// exposure of 1 (the rate per unit of exposure), and a note says so.
    #[arg(long, value_name = "COLUMN")]
    pub exposure: Option<String>,
}

/// Training inputs and targets for a model, read with the model's own input columns
/// (the model is not fitted again, so any target is accepted).
pub fn training_data(
    model: &ModelFile,
    train: &std::path::Path,
    target: Option<String>,
) -> Result<(nalgebra::DMatrix<f64>, Vec<f64>)> {
    let ds = data::load::load_for_model(&LoadSpec {
        train: train.to_path_buf(),
        target,
        features: model.inputs.clone(),
        ..Default::default()
    })?;
    let dim = model.check()?.input_dim(model);
    if ds.dim() != dim {
        return Err(Error::data(
            train,
            format!(
                "has {} usable input columns but the model takes {dim} inputs",
                ds.dim(),
            ),
        ));
    }
    Ok((ds.x_train, ds.y_train.as_slice().to_vec()))
}

pub fn run(args: PredictArgs) -> Result<()> {
    let (model, method) = crate::methods::read_model(&args.model)?;
    let features = model.inputs.clone().unwrap_or_default();
    let dim = method.input_dim(&model);
    let train = match &args.train {
        Some(t) => Some(training_data(&model, t, args.target.clone())?),
        None => None,
    };
    let predictor = Predictor::new(model, train.as_ref().map(|(x, y)| (x, y.as_slice())))
        .map_err(|e| Error::file(&args.model, e))?;
    if args.components
        && let Some(why) = predictor.components_refusal()
    {
        return Err(Error::input(format!(
            "--components: {why} ({})",
            args.model.display()
        )));
    }
    let exec = Exec::default();
    // the input a chunk at a time: predicting millions of rows needs one chunk's memory
    let rows = exec.chunk_rows(predictor.posterior().m()).min(1 << 16);
    let noted = std::cell::Cell::new(false);
    // The model's columns of one chunk (a hand-written model that names no inputs
    // takes the first `dim` columns: the usual layout is features first).
    let columns = |x: nalgebra::DMatrix<f64>| -> Result<nalgebra::DMatrix<f64>> {
        if !features.is_empty() || x.ncols() == dim {
            return Ok(x);
        }
        if x.ncols() < dim {
            return Err(Error::data(
                &args.input,
                format!(
                    "has {} column(s) but the model takes {dim} inputs",
                    x.ncols()
                ),
            ));
        }
        if !noted.replace(true) {
            crate::noteln!(
                "note: the model has no `inputs` list; using the first {dim} column(s) of {}",
                args.input.display()
            );
        }
        Ok(x.columns(0, dim).into_owned())
    };
    let observed = Observed::of(predictor.model())?;
    let fitted_with = predictor
        .model()
        .likelihood
        .as_ref()
        .and_then(|t| t.exposure.clone());
    // the exposure column is read after the model's inputs and split off each chunk
    let mut read = features.clone();
    match (&args.exposure, &fitted_with) {
        (Some(column), _) => {
            let table = predictor.model().likelihood.as_ref();
            if table.is_none_or(|t| t.name != crate::likelihoods::LikelihoodKind::Poisson) {
                return Err(Error::input(format!(
                    "--exposure {column}: an exposure scales the rate of a poisson model; \
                     {} is not one",
                    args.model.display()
                )));
            }
            if features.is_empty() {
                return Err(Error::input(format!(
                    "--exposure {column}: {} names no input columns (`inputs`), so the \
                     exposure cannot be told from them",
                    args.model.display()
                )));
            }
            if features.iter().any(|f| f == column.trim()) {
                return Err(Error::input(format!(
                    "--exposure {column} is one of the model's inputs ({})",
                    features.join(", ")
                )));
            }
            read.push(column.trim().to_string());
        }
        (None, Some(column)) => crate::noteln!(
            "note: the model was fitted with the exposure column '{column}'; without \
             --exposure the counts predicted are for an exposure of 1 (the rate per unit of \
             exposure)"
        ),
        (None, None) => {}
    }
    let mut sink = Output::open(args.out.as_deref())?;
    let mut header = observed
        .as_ref()
        .map_or("mean,var_latent,var_noisy\n", Observed::header)
        .to_string();
    if args.components {
        header.pop();
        let none = nalgebra::DMatrix::zeros(0, dim);
        for c in predictor.components_with(&none, &exec)? {
            let _ = write!(header, ",mean_{0},var_latent_{0}", c.label);
        }
        header.push('\n');
    }
    sink.write(header.as_bytes())?;
    let written = data::load::for_each_input_chunk(&args.input, &read, rows, &mut |first, x| {
        let (x, offsets) = match &args.exposure {
            Some(column) => {
                let e: Vec<f64> = x.column(x.ncols() - 1).iter().copied().collect();
                let offsets = crate::likelihoods::log_exposures(&e).map_err(|i| {
                    Error::data(
                        &args.input,
                        format!(
                            "the exposure column '{}' (--exposure) at row {}: {} is \
                                 not a positive number (an exposure must be a finite number \
                                 > 0)",
                            column.trim(),
                            first + i + 1,
                            e[i]
                        ),
                    )
                })?;
                let last = x.ncols() - 1;
                (x.remove_column(last), offsets)
            }
            None => {
                let n = x.nrows();
                (x, vec![0.0; n])
            }
        };
        let x = columns(x)?;
        let p = predictor.predict_with(&x, &exec)?;
        p.check_finite(|i| format!("row {} of {}", first + i + 1, args.input.display()))?;
        let parts = match args.components {
            true => predictor.components_with(&x, &exec)?,
            false => Vec::new(),
        };
        let mut out = String::with_capacity(64 * p.mean.len() * (1 + parts.len()));
        for (i, &offset) in offsets.iter().enumerate() {
            match &observed {
                None => {
                    let _ = writeln!(out, "{},{},{}", p.mean[i], p.var_latent[i], p.var_noisy[i]);
                }
                Some(o) => o.row_exposed(&mut out, p.mean[i], p.var_latent[i], offset),
            }
            if !parts.is_empty() {
                out.pop();
                for c in &parts {
                    let _ = write!(out, ",{},{}", c.mean[i], c.var_latent[i]);
                }
                out.push('\n');
            }
        }
        sink.write(out.as_bytes())
    });
    match written {
        Ok(_) => sink.finish(),
        Err(e) => {
            sink.abandon();
            Err(e)
        }
    }
}

/// Where predictions go. Nothing is written to the destination before the whole input
/// has been read, checked and predicted, so a bad cell in the last row never leaves a
/// file holding the first rows: for standard output the predictions are spooled to an
/// anonymous temporary file (gone when the process ends, however it ends) and copied
/// out at the end; with --out they go to a file beside the destination, renamed into
/// place at the end. (Spooling costs a write and a read of the output; checking the
/// input in a first pass would read and parse it twice — +75% CPU on a 10⁷-row CSV,
/// measured in docs/results/predict-output.md.)
enum Output {
    Stdout(std::io::BufWriter<std::fs::File>),
    File {
        tmp: PathBuf,
        dest: PathBuf,
        file: std::io::BufWriter<std::fs::File>,
    },
}

impl Output {
    fn open(path: Option<&std::path::Path>) -> Result<Output> {
        let Some(dest) = path else {
            let spool = tempfile::tempfile().map_err(|e| {
                Error::File(format!(
                    "cannot make a temporary file for the predictions ({e}); write them \
                     with --out FILE instead"
                ))
            })?;
            return Ok(Output::Stdout(std::io::BufWriter::new(spool)));
        };
        let tmp = crate::model_file::temp_beside(dest);
        let file = std::fs::File::create(&tmp)
            .map_err(|e| Error::file(dest, format!("cannot write: {e}")))?;
        Ok(Output::File {
            tmp,
            dest: dest.to_path_buf(),
            file: std::io::BufWriter::new(file),
        })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        match self {
            Output::Stdout(w) => w.write_all(bytes).map_err(spool_error),
            Output::File { dest, file, .. } => file
                .write_all(bytes)
                .map_err(|e| Error::file(dest, format!("cannot write: {e}"))),
        }
    }

    /// After a failure: a half-written temporary file is removed (the destination is
    /// left as it was).
    fn abandon(self) {
        if let Output::File { tmp, file, .. } = self {
            drop(file);
            let _ = std::fs::remove_file(&tmp);
        }
    }

    fn finish(self) -> Result<()> {
        use std::io::Write;
        match self {
            Output::Stdout(w) => {
                use std::io::Seek;
                let mut spool = w.into_inner().map_err(|e| spool_error(e.into_error()))?;
                spool.rewind().map_err(spool_error)?;
                let mut out = std::io::stdout().lock();
                std::io::copy(&mut spool, &mut out).map_err(|e| {
                    // a read error is the spool's; a write error is standard output's
                    match e.kind() {
                        std::io::ErrorKind::BrokenPipe => Error::ClosedPipe,
                        _ => Error::File(format!("cannot write the predictions: {e}")),
                    }
                })?;
                out.flush().map_err(stdout_error)
            }
            Output::File { tmp, dest, file } => {
                let done = file
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .and_then(|f| f.sync_all())
                    .and_then(|_| std::fs::rename(&tmp, &dest));
                done.map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    Error::file(&dest, format!("cannot write: {e}"))
                })
            }
        }
    }
}

/// The temporary file that holds predictions for standard output could not be written
/// (a full disk): say where they would have gone instead.
fn spool_error(e: std::io::Error) -> Error {
    Error::File(format!(
        "cannot write the predictions to a temporary file ({e}); write them with --out FILE \
         instead"
    ))
}

/// A closed pipe ends the command quietly (see `cli::out`).
fn stdout_error(e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe => Error::ClosedPipe,
        _ => Error::File(format!("cannot write to standard output: {e}")),
    }
}
