//! A fit whose training file is read a block at a time instead of loaded (`sgpw fit
//! --method svgp` on a file of at least [`STREAM_FILE_BYTES`], or with `--stream`;
//! docs/methods.md §8.4): one pass finds the file's blocks and a seeded sample, the
//! standardisation and the start come from the sample, and the method trains on
//! minibatches streamed from the file ([`FileRows`], through [`Method::fit_rows`]: any
//! method that trains on minibatches, svgp today). The fit ends as every fit does
//! ([`train::finish`]); the test file, if any, is read a block at a time and scored.

use crate::data::LoadSpec;
use crate::data::data_file::DataFile;
use crate::data::file_rows::{FileRows, SAMPLE_ROWS};
use crate::data::stream::{Chunk, open};
use crate::error::{Error, Result};
use crate::methods::{self, RowSource, ValidRunSpec};
use crate::model_file::raw_scale_offset;
use crate::run_context::{Phase, RunContext};
use crate::train::{self, Final, FitResult, Stopped, Test};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::Cell;
use std::path::Path;
use std::time::Instant;

/// A method that trains on minibatches streams a training file at least this large
/// without `--stream`.
pub const STREAM_FILE_BYTES: u64 = 256 << 20;

/// Whether `fit` streams the training file of `spec`: asked (`--stream`), or the fit
/// of a method that trains on minibatches whose file is at least [`STREAM_FILE_BYTES`]
/// on disk.
pub fn streams(spec: &ValidRunSpec, path: &Path, asked: bool) -> Result<bool> {
    if asked {
        return Ok(true);
    }
    if !spec.method().fits_rows() {
        return Ok(false);
    }
    let len = open(path)?.metadata().map_or(0, |m| m.len());
    Ok(len >= STREAM_FILE_BYTES)
}

/// What a streamed fit cannot do, refused before any work.
fn check(data: &LoadSpec, spec: &ValidRunSpec) -> Result<()> {
    let refuse = |what: &str| {
        Err(Error::input(format!(
            "a streamed fit (--stream, or svgp on a training file of {} MiB or more) {what}",
            STREAM_FILE_BYTES >> 20
        )))
    };
    let o = &spec.options;
    if !spec.method().fits_rows() {
        let minibatch: Vec<&str> = methods::registry()
            .iter()
            .filter(|m| m.fits_rows())
            .map(|m| m.name())
            .collect();
        return refuse(&format!(
            "trains only a method that learns from minibatches ({}), not {}: minibatches \
             are what can be read a block at a time",
            minibatch.join(", "),
            spec.method
        ));
    }
    if o.likelihood() != crate::likelihoods::LikelihoodKind::Gaussian {
        return refuse(&format!(
            "fits the gaussian likelihood only, not --likelihood {}: its targets are \
             read a block at a time in model units; load the file (leave out --stream)",
            o.likelihood()
        ));
    }
    if data.split.is_some() {
        return refuse("cannot --split the rows: give a separate --test file");
    }
    if data.drop_missing {
        return refuse(
            "does not drop rows (--drop-missing): remove rows with missing values first",
        );
    }
    if o.validation.is_some() {
        return refuse("cannot hold rows out (--validation): give a separate --test file");
    }
    if o.subset.is_some() {
        return refuse("trains on every row (--subset does not apply)");
    }
    if o.restarts.is_some_and(|k| k > 1) {
        return refuse(
            "runs one start (--restarts would read the file once per start): leave it out",
        );
    }
    Ok(())
}

/// A streamed fit's result and the shape of its data.
pub struct Streamed {
    pub result: FitResult,
    pub n_train: usize,
    pub n_test: usize,
    pub dim: usize,
    /// Remarks made while reading (dropped constant columns).
    pub notes: Vec<String>,
}

/// Train on `data.train` streamed, then score `data.test`.
pub fn fit(data: &LoadSpec, spec: &ValidRunSpec, ctx: &RunContext) -> Result<Streamed> {
    check(data, spec)?;
    let method = spec.method();
    let started = Instant::now();
    let indexed = FileRows::index(data, spec.seed, SAMPLE_ROWS)?;
    let mut rows = indexed.rows;
    let sample = indexed.sample;
    let n = rows.n();
    spec.spec().check(n)?;
    let (td, target_mean, standardize) = train::prepare(&sample, spec.standardize);
    let offset = raw_scale_offset(standardize.as_ref(), n);
    ctx.set_offset(offset);
    ctx.set_positive(spec.options.positive());
    let floor = train::noise_floor(&spec.options, &td);
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let model = train::start_model(
        &td,
        spec,
        target_mean,
        standardize,
        &sample.feature_names,
        &sample.target_name,
        floor,
        None,
        None,
        &mut rng,
        ctx,
    )?;
    let units_model = model.clone();
    rows.set_units(Box::new(move |x: &DMatrix<f64>, y: &[f64]| {
        train::model_data(&units_model, x, y)
    }));
    ctx.enter(Phase::Fit { stage: 0 });
    let (fitted, outcome) = method.fit_rows(model, RowSource::File(&mut rows), spec, ctx)?;
    // the constant predictor's variance from the sample's targets
    let target_variance = train::target_variance(sample.y_train.as_slice(), target_mean);
    let stopped = Stopped {
        target_variance: Some(target_variance),
        ..Stopped::plain(method, fitted, outcome, offset, started, n)
    };
    let n_test = Cell::new(0);
    let load = data.test.as_ref().map(|path| {
        let n_test = &n_test;
        let sample = &sample;
        move || {
            let rows = test_rows(data, path, &sample.feature_names, &sample.target_name)?;
            n_test.set(rows.1.len());
            Ok(rows)
        }
    });
    let test = match &load {
        Some(load) => Test::Load(load),
        None => Test::None,
    };
    let result = train::finish(stopped, Final::WithoutRows, test, ctx)?;
    Ok(Streamed {
        result,
        n_train: n,
        n_test: n_test.get(),
        dim: sample.feature_names.len(),
        notes: sample.notes.clone(),
    })
}

/// The test file's inputs (the training file's kept features, in its order) and
/// targets, read a block at a time, checked as the training rows are.
fn test_rows(
    data: &LoadSpec,
    path: &Path,
    features: &[String],
    target: &str,
) -> Result<(DMatrix<f64>, Vec<f64>)> {
    let spec = LoadSpec {
        train: path.to_path_buf(),
        target: Some(target.to_string()),
        ..data.clone()
    };
    let file = DataFile::open(path)?;
    let (mut x, mut y): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    file.for_each_chunk(1 << 16, &mut |c: Chunk| {
        let (names, _, cols) = crate::data::load::training_columns(&spec, &file, c)?;
        let at: Vec<usize> = features
            .iter()
            .map(|f| {
                names.iter().position(|n| n == f).ok_or_else(|| {
                    Error::data(
                        path,
                        format!(
                            "the test file has no column '{f}' (the training file's columns \
                             are {}, {target})",
                            features.join(", ")
                        ),
                    )
                })
            })
            .collect::<Result<_>>()?;
        let targets = cols.last().map_or(&[][..], Vec::as_slice);
        let cols = &cols;
        x.extend((0..targets.len()).flat_map(|i| at.iter().map(move |&j| cols[j][i])));
        y.extend_from_slice(targets);
        Ok(())
    })?;
    let d = features.len();
    Ok((DMatrix::from_row_slice(y.len(), d, &x), y))
}
