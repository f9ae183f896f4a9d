//! Training rows read from their file a block at a time, so that a training set larger
//! than memory trains in bounded memory (docs/methods.md §8.4): the row source of a
//! streamed fit (`crate::stream_fit`), which a minibatch method (svgp) draws its
//! minibatches from.
//!
//! The file is cut into blocks: a Parquet file's row groups (a group of more than
//! [`MAX_BLOCK_ROWS`] rows in pieces), a plain CSV file's runs of [`CSV_BLOCK_ROWS`]
//! records (found again by their byte offsets). One pass over the file ([`FileRows::index`])
//! finds the blocks, counts and checks the rows, finds the constant columns and keeps a
//! seeded reservoir sample of [`SAMPLE_ROWS`] rows, from which the caller takes the
//! standardisation and the start. Each epoch then visits the blocks in a seeded
//! permutation, [`WINDOW_BLOCKS`] at a time, the rows of a window shuffled together;
//! minibatches are consecutive runs of that order. Everything is drawn from the
//! training's own generator, so a run is reproducible bit for bit with its seed. An
//! objective over every row reads the file a chunk at a time ([`FileRows::for_each_chunk`]).

use crate::data::data_file::DataFile;
use crate::data::load::{drop_constant_features, training_columns};
use crate::data::moments::target_problem;
use crate::data::stream::{Chunk, Compression};
use crate::data::{Dataset, LoadSpec, TrainData};
use crate::error::{Error, Result};
use nalgebra::{DMatrix, DVector};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Rows of a CSV block.
pub const CSV_BLOCK_ROWS: usize = 1 << 16;
/// A Parquet row group with more rows is read in pieces of at most this many.
pub const MAX_BLOCK_ROWS: usize = 1 << 18;
/// Blocks whose rows are shuffled together.
pub const WINDOW_BLOCKS: usize = 4;
/// Rows of the sample the standardisation and the start are taken from.
pub const SAMPLE_ROWS: usize = 50_000;
/// The reservoir sample's random stream (the run's seed on a stream of its own).
const SAMPLE_STREAM: u64 = 0x7361_6d70;

#[derive(Clone, Copy, Debug)]
struct Block {
    /// The block's first data row in the file (0-based).
    first: usize,
    rows: usize,
    /// Of a plain CSV file, the byte its first record starts at; None for Parquet,
    /// whose rows are found by their numbers.
    at_byte: Option<u64>,
}

/// Converts raw inputs and targets into model units (the model's standardisation).
pub type Units = Box<dyn Fn(&DMatrix<f64>, &[f64]) -> Result<TrainData>>;

/// A training file read a block at a time.
pub struct FileRows {
    spec: LoadSpec,
    file: DataFile,
    blocks: Vec<Block>,
    n: usize,
    /// Every feature column the file offers, and the target.
    features: Vec<String>,
    target: String,
    /// The features used (the constant ones dropped), indices into `features`.
    kept: Vec<usize>,
    units: Option<Units>,
    /// The current epoch's block order and the next block of it to read.
    epoch: Vec<usize>,
    next_block: usize,
    /// Rows read and shuffled but not yet served, from `pending_at` on.
    pending: TrainData,
    pending_at: usize,
}

/// What the pass over the file found besides its blocks.
pub struct Indexed {
    pub rows: FileRows,
    /// The sample: kept features and target in the file's units, rows in file order
    /// when the file has no more than [`SAMPLE_ROWS`] of them.
    pub sample: Dataset,
}

impl FileRows {
    /// Whether a training file can be streamed: Parquet or plain CSV. A gzip-compressed
    /// CSV cannot be entered at a block.
    fn check_streamable(file: &DataFile) -> Result<()> {
        if file.csv_compression()? == Some(Compression::Gzip) {
            return Err(Error::data(
                file.path(),
                "a gzip-compressed CSV cannot be streamed (its blocks cannot be read out of \
                 order): decompress it (`gunzip`), or convert it to Parquet",
            ));
        }
        Ok(())
    }

    /// One pass over `spec.train`: its blocks, rows, constant columns and a seeded
    /// sample of at most `sample_rows` rows.
    pub fn index(spec: &LoadSpec, seed: u64, sample_rows: usize) -> Result<Indexed> {
        let path = &spec.train;
        let file = DataFile::open(path)?;
        Self::check_streamable(&file)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(SAMPLE_STREAM);
        let mut pass = Pass {
            path,
            names: None,
            constant: Vec::new(),
            sample: Vec::new(),
            sample_rows: sample_rows.max(1),
            seen: 0,
            rng,
        };
        let mut blocks = Vec::new();
        match file.row_groups() {
            Some(groups) => {
                let mut first = 0;
                for group in groups {
                    let mut left = group;
                    while left > 0 {
                        let rows = left.min(MAX_BLOCK_ROWS);
                        let chunk = file.rows_at(first, rows, None)?;
                        let cols = training_columns(spec, &file, chunk)?;
                        pass.take(cols)?;
                        blocks.push(Block {
                            first,
                            rows,
                            at_byte: None,
                        });
                        first += rows;
                        left -= rows;
                    }
                }
            }
            None => {
                file.for_each_chunk(CSV_BLOCK_ROWS, &mut |c: Chunk| {
                    let (rows, first) = (c.rows(), c.first);
                    let at = c
                        .at_byte
                        .ok_or_else(|| Error::data(path, "a compressed CSV cannot be streamed"))?;
                    let cols = training_columns(spec, &file, c)?;
                    pass.take(cols)?;
                    blocks.push(Block {
                        first,
                        rows,
                        at_byte: Some(at),
                    });
                    Ok(())
                })?;
            }
        }
        let n = pass.seen;
        let (features, target) = pass
            .names
            .take()
            .ok_or_else(|| Error::data(path, "the file has no data rows"))?;
        let mut notes = vec![format!(
            "{}: {n} rows in {} blocks, standardised and started from a sample of {} rows",
            path.display(),
            blocks.len(),
            pass.sample.len()
        )];
        let kept = drop_constant_features(
            &features,
            |j| pass.constant[j].1,
            &mut notes,
            |msg| Error::data(path, msg),
        )?;
        let d = kept.len();
        let s = pass.sample.len();
        let x = DMatrix::from_fn(s, d, |i, j| pass.sample[i][kept[j]]);
        let y: Vec<f64> = pass.sample.iter().map(|r| r[features.len()]).collect();
        if let Some(why) = target_problem(&y) {
            let part = if s < n {
                format!(" (in a sample of {s} of its {n} rows)")
            } else {
                String::new()
            };
            return Err(Error::data(
                path,
                format!("the target column '{target}'{part} {why}"),
            ));
        }
        let sample = Dataset {
            classes: None,
            feature_names: kept.iter().map(|&j| features[j].clone()).collect(),
            target_name: target.clone(),
            x_train: x,
            y_train: DVector::from_vec(y),
            x_test: None,
            y_test: None,
            notes,
        };
        Ok(Indexed {
            rows: FileRows {
                spec: spec.clone(),
                file,
                blocks,
                n,
                features,
                target,
                kept,
                units: None,
                epoch: Vec::new(),
                next_block: 0,
                pending: TrainData {
                    x: DMatrix::zeros(0, d),
                    y: Vec::new(),
                    log_exposure: None,
                },
                pending_at: 0,
            },
            sample,
        })
    }

    /// The conversion into model units (the standardisation chosen from the sample).
    pub fn set_units(&mut self, units: Units) {
        self.units = Some(units);
    }

    /// The number of blocks.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// The kept inputs and the target of a chunk of the file, in the file's units,
    /// checked against what the pass found.
    fn columns(&self, chunk: Chunk) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let path = &self.spec.train;
        let (rows, first) = (chunk.rows(), chunk.first);
        let (features, target, cols) = training_columns(&self.spec, &self.file, chunk)?;
        if features != self.features || target != self.target {
            return Err(Error::data(
                path,
                format!(
                    "the file changed while it was read: rows {}.. have the columns {}, {} \
                     where it had {}, {}",
                    first + 1,
                    features.join(", "),
                    target,
                    self.features.join(", "),
                    self.target
                ),
            ));
        }
        let x = DMatrix::from_fn(rows, self.kept.len(), |i, j| cols[self.kept[j]][i]);
        let y = cols.last().cloned().unwrap_or_default();
        Ok((x, y))
    }

    /// Raw inputs and targets in model units.
    fn in_units(&self, x: &DMatrix<f64>, y: &[f64]) -> Result<TrainData> {
        match &self.units {
            Some(units) => units(x, y),
            None => Err(Error::input(
                "internal: the streamed rows' units were not set before training",
            )),
        }
    }

    /// Block `b`, in model units.
    fn read_block(&self, b: Block) -> Result<TrainData> {
        let path = &self.spec.train;
        let chunk = self.file.rows_at(b.first, b.rows, b.at_byte)?;
        if chunk.rows() != b.rows {
            return Err(Error::data(
                path,
                format!(
                    "the file changed while it was read: rows {}..{} were expected, {} found",
                    b.first + 1,
                    b.first + b.rows,
                    chunk.rows()
                ),
            ));
        }
        let (x, y) = self.columns(chunk)?;
        self.in_units(&x, &y)
    }

    /// The next window of the epoch's blocks, its rows shuffled together, after the
    /// rows still pending.
    fn read_window(&mut self, rng: &mut ChaCha8Rng) -> Result<()> {
        let end = (self.next_block + WINDOW_BLOCKS).min(self.epoch.len());
        let mut parts = Vec::with_capacity(end - self.next_block);
        for k in self.next_block..end {
            parts.push(self.read_block(self.blocks[self.epoch[k]])?);
        }
        self.next_block = end;
        let rows: Vec<(usize, usize)> = parts
            .iter()
            .enumerate()
            .flat_map(|(p, t)| (0..t.y.len()).map(move |i| (p, i)))
            .collect();
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.shuffle(rng);
        let left = self.pending.y.len() - self.pending_at;
        let d = self.kept.len();
        let (old, at) = (&self.pending, self.pending_at);
        let total = left + order.len();
        let x = DMatrix::from_fn(total, d, |i, j| {
            if i < left {
                old.x[(at + i, j)]
            } else {
                let (p, r) = rows[order[i - left]];
                parts[p].x[(r, j)]
            }
        });
        let mut y = old.y[at..].to_vec();
        y.extend(order.iter().map(|&o| {
            let (p, r) = rows[o];
            parts[p].y[r]
        }));
        self.pending = TrainData {
            x,
            y,
            log_exposure: None,
        };
        self.pending_at = 0;
        Ok(())
    }
}

impl FileRows {
    /// The number of training rows.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The next minibatch (model units): up to `batch` rows of the current epoch's
    /// order, taken in turn; a new seeded order (from `rng`) once the last is used up,
    /// so a batch never runs past the end of an epoch.
    pub fn next_rows(&mut self, batch: usize, rng: &mut ChaCha8Rng) -> Result<TrainData> {
        let left = |s: &FileRows| s.pending.y.len() - s.pending_at;
        if left(self) == 0 && self.next_block >= self.epoch.len() {
            self.epoch = (0..self.blocks.len()).collect();
            self.epoch.shuffle(rng);
            self.next_block = 0;
        }
        while left(self) < batch && self.next_block < self.epoch.len() {
            self.read_window(rng)?;
        }
        let take = batch.min(left(self));
        let at = self.pending_at;
        self.pending_at += take;
        Ok(TrainData {
            x: self.pending.x.rows(at, take).into_owned(),
            y: self.pending.y[at..at + take].to_vec(),
            log_exposure: None,
        })
    }

    /// Every row in the file's order, `rows` at a time, in model units: what an
    /// objective over every row adds up.
    pub fn for_each_chunk(
        &self,
        rows: usize,
        f: &mut dyn FnMut(&TrainData) -> Result<()>,
    ) -> Result<()> {
        self.file.for_each_chunk(rows, &mut |c: Chunk| {
            let (x, y) = self.columns(c)?;
            f(&self.in_units(&x, &y)?)
        })?;
        Ok(())
    }
}

/// The state of the pass over the file.
struct Pass<'a> {
    path: &'a std::path::Path,
    names: Option<(Vec<String>, String)>,
    /// Per feature column: its first value and whether every value so far equals it.
    constant: Vec<(f64, bool)>,
    /// Sampled rows: every feature column, then the target.
    sample: Vec<Vec<f64>>,
    sample_rows: usize,
    seen: usize,
    rng: ChaCha8Rng,
}

impl Pass<'_> {
    /// One block's columns (features, then the target): Algorithm R keeps each row
    /// seen so far in the sample with the same probability.
    fn take(
        &mut self,
        (features, target, cols): (Vec<String>, String, Vec<Vec<f64>>),
    ) -> Result<()> {
        match &self.names {
            None => {
                self.constant = (0..features.len())
                    .map(|j| (cols[j].first().copied().unwrap_or(0.0), true))
                    .collect();
                self.names = Some((features, target));
            }
            Some((f, t)) if *f != features || *t != target => {
                return Err(Error::data(
                    self.path,
                    format!(
                        "rows {}.. have the columns {}, {target} where the first rows have {}, {t}",
                        self.seen + 1,
                        features.join(", "),
                        f.join(", ")
                    ),
                ));
            }
            Some(_) => {}
        }
        for (j, (v0, same)) in self.constant.iter_mut().enumerate() {
            *same = *same && cols[j].iter().all(|v| v == v0);
        }
        let rows = cols.first().map_or(0, Vec::len);
        for i in 0..rows {
            let slot = if self.seen < self.sample_rows {
                Some(self.sample.len())
            } else {
                Some(self.rng.random_range(0..=self.seen)).filter(|&j| j < self.sample_rows)
            };
            if let Some(slot) = slot {
                let row: Vec<f64> = cols.iter().map(|c| c[i]).collect();
                if slot == self.sample.len() {
                    self.sample.push(row);
                } else {
                    self.sample[slot] = row;
                }
            }
            self.seen += 1;
        }
        Ok(())
    }
}
