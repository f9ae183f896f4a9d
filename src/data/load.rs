//! Reading CSV / Parquet files into a [`Dataset`]. Every problem with the data is an
//! [`Error::Data`] that starts with the file path and names the column and row, because
//! the user has to find it in their file; bad settings (a split outside (0, 1)) are
//! [`Error::Input`]. Nothing here panics on user data.

use super::guard::guarded;
use super::parquet_check::{self, CheckedParquet, Unusable};
use super::progress::{BLOCK_READ_BYTES, LoadProgress, read_frame};
use super::stream::{
    NULL_TOKENS, csv_failure, for_each_frame, is_parquet, open, polars_failure, read_csv_file,
};
use super::{Dataset, LoadSpec};
use crate::error::{Error, Result};
use nalgebra::{DMatrix, DVector};
use polars::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How many row numbers a message lists before it says "and N more".
const SHOW_ROWS: usize = 5;

/// Values of the used columns, one `Vec` per column (features first, target last).
type Columns = Vec<Vec<f64>>;

/// Loads the training file (and the test file or a seeded split) named by `spec`.
pub fn load(spec: &LoadSpec) -> Result<Dataset> {
    load_with_progress(spec, &mut |_| {})
}

/// [`load`], telling `report` how far it has come: rows read while a large file is
/// read (a block at a time), then once when the columns are being checked.
pub fn load_with_progress(
    spec: &LoadSpec,
    report: &mut dyn FnMut(LoadProgress),
) -> Result<Dataset> {
    read_dataset(spec, report, true, None)
}

/// [`load`] for data that an existing model conditions on or is scored on (`predict
/// --train`, `nlml`, `stream`): nothing is fitted, so a constant target is accepted.
pub fn load_for_model(spec: &LoadSpec) -> Result<Dataset> {
    read_dataset(spec, &mut |_| {}, false, None)
}

/// For drawing with a model that needs no training data: about `rows` rows of each file
/// of `spec` read from places spread over it, without reading the whole file
/// ([`super::sample`]), and the training file's row count where known. None when the
/// training file is better read whole (small, or a gzipped CSV): load it then. Errors
/// in a sample name rows counted within the sample.
pub fn load_sample(spec: &LoadSpec, rows: usize) -> Result<Option<(Dataset, Option<usize>)>> {
    let Some(total) = super::sample::plan(&spec.train, rows)? else {
        return Ok(None);
    };
    let data = read_dataset(spec, &mut |_| {}, false, Some(rows))?;
    Ok(Some((data, total)))
}

fn read_dataset(
    spec: &LoadSpec,
    report: &mut dyn FnMut(LoadProgress),
    fitted: bool,
    sample: Option<usize>,
) -> Result<Dataset> {
    check_split_setting(spec)?;
    let train = Table::read_some(&spec.train, report, sample)?;
    let (target, features) = choose_columns(&train, spec)?;
    let mut used = features.clone();
    used.push(target.clone());
    report(LoadProgress {
        file: spec.train.clone(),
        rows: train.frame.height(),
        fraction: 1.0,
        checking: true,
    });
    let mut notes = Vec::new();
    train.note_trimmed(&mut notes);
    train.note_index(&used, &mut notes);
    let train_cols = train.complete_columns(&used, spec.drop_missing, &mut notes)?;
    // a target the fit cannot use is refused before any work, whoever loads the data
    // (`fit`, a session, the app): the whole column, then the rows a split trains on
    if fitted {
        check_target(
            &train,
            &target,
            train_cols.last().map_or(&[][..], Vec::as_slice),
            "",
        )?;
    }
    let (train_cols, test_cols) = match (&spec.test, spec.split) {
        (Some(path), _) => {
            let test = Table::read_some(path, report, sample)?;
            check_same_columns(&train, &test)?;
            test.note_trimmed(&mut notes);
            let test_cols = test.complete_columns(&used, spec.drop_missing, &mut notes)?;
            (train_cols, Some(test_cols))
        }
        (None, Some(fraction)) => {
            let (a, b) = split_rows(&train.path, &train_cols, fraction, spec.seed)?;
            let part = format!(
                " in the {} training rows of the split {fraction} (seed {}; another seed or \
                 split chooses other rows)",
                a.last().map_or(0, Vec::len),
                spec.seed
            );
            if fitted {
                check_target(
                    &train,
                    &target,
                    a.last().map_or(&[][..], Vec::as_slice),
                    &part,
                )?;
            }
            (a, Some(b))
        }
        (None, None) => (train_cols, None),
    };
    let kept = drop_constant_features(
        &features,
        |j| is_constant(&train_cols[j]),
        &mut notes,
        |msg| Error::data(&train.path, msg),
    )?;
    let (x_train, y_train) = to_matrices(&train_cols, &kept);
    let (x_test, y_test) = match test_cols {
        Some(cols) => {
            let (x, y) = to_matrices(&cols, &kept);
            (Some(x), Some(y))
        }
        None => (None, None),
    };
    Ok(Dataset {
        feature_names: kept.iter().map(|&j| features[j].clone()).collect(),
        target_name: target,
        x_train,
        y_train,
        x_test,
        y_test,
        notes,
    })
}

/// Rows of a CSV file parsed at a time by [`load_stripe`].
pub const STRIPE_BLOCK: usize = 1 << 10;

/// One process's share of the training rows of a fit spread over `parts` processes
/// (`sgpw fit --distributed`), every feature column the file offers (constant ones are
/// dropped by all processes together: one stripe cannot tell).
pub struct Stripe {
    pub x: DMatrix<f64>,
    pub y: Vec<f64>,
    pub feature_names: Vec<String>,
    pub target_name: String,
    pub notes: Vec<String>,
}

/// How the processes of [`load_stripe`] tell each other their row counts: each gives
/// its own (None: it failed) and gets every process's back in process order (None if
/// any failed). Every process calls it exactly once per [`load_stripe`].
pub type CountRows<'a> = &'a mut dyn FnMut(Option<usize>) -> Option<Vec<usize>>;

/// The training rows of process `part` of `parts`, so that no process holds the whole
/// file: of a Parquet file the contiguous rows ⌊part·n/parts⌋.. (polars reads only the
/// row groups they touch); of a plain CSV file the records that start in the part-th of
/// equal byte ranges of its body ([`super::csv_range`]: the process reads only those
/// bytes); of a gzip-compressed CSV file, which cannot be entered in the middle, the
/// contiguous rows ⌊part·n/parts⌋.. as of a Parquet file, every process decompressing
/// the whole file to count its rows and again to keep its own. Every process must
/// get a row. Rows are checked as [`load`] checks them, errors naming the rows of the
/// file. A test file or split is not read here.
pub fn load_stripe(
    spec: &LoadSpec,
    part: usize,
    parts: usize,
    count_rows: CountRows,
) -> Result<Stripe> {
    let path = &spec.train;
    let mut cols: Columns = Vec::new();
    let mut names: Option<(String, Vec<String>)> = None;
    let mut notes = Vec::new();
    let mut take = |table: Table, notes: &mut Vec<String>| -> Result<()> {
        let (target, features) = choose_columns(&table, spec)?;
        let mut used = features.clone();
        used.push(target.clone());
        if names.is_none() {
            table.note_index(&used, notes);
        }
        let part_cols = table.complete_columns(&used, spec.drop_missing, notes)?;
        if cols.is_empty() {
            cols = vec![Vec::new(); part_cols.len()];
        }
        for (c, p) in cols.iter_mut().zip(part_cols) {
            c.extend(p);
        }
        names.get_or_insert((target, features));
        Ok(())
    };
    // every process's rows before any reads them: the row numbers of a CSV part, and
    // an error on every process if one has none
    // (None: this process failed, and reports its own error; `bytes`: cut by bytes)
    let mut agree = |mine: Option<usize>, bytes: bool| -> Result<Vec<usize>> {
        let counts = count_rows(mine).ok_or_else(|| {
            Error::data(path, "another process could not read its part of the file")
        })?;
        if let Some(empty) = counts.iter().position(|&c| c == 0) {
            let n: usize = counts.iter().sum();
            return Err(Error::data(
                path,
                format!(
                    "process {empty} of {parts} has no rows of the {n}: run fewer processes{}",
                    if bytes {
                        " (a plain CSV file is cut into equal byte ranges, each process \
                         taking the records that start in its own)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        Ok(counts)
    };
    // the rows ⌊part·n/parts⌋..⌊(part+1)·n/parts⌋ of n, where n is known
    let window = |n: usize| (n * part / parts, n * (part + 1) / parts);
    if is_parquet(path) {
        let checked = open(path).and_then(|f| parquet_check::check(path, &f));
        let counts = agree(
            checked
                .as_ref()
                .ok()
                .map(|c| window(c.rows).1 - window(c.rows).0),
            false,
        );
        let checked = checked?;
        counts?;
        let (first, last) = window(checked.rows);
        let frame = super::stream::parquet_rows(path, &checked, first, last - first)?;
        take(Table::new(path, Some(&checked), frame, first)?, &mut notes)?;
    } else {
        let range = super::csv_range::CsvRange::of(path, part, parts);
        match range {
            Ok(Some(range)) => {
                let count = range.count_records();
                let counts = agree(count.as_ref().ok().copied(), true);
                count?;
                let counts = counts?;
                let first = counts[..part].iter().sum();
                range.for_each_frame(first, STRIPE_BLOCK, &mut |chunk| {
                    take(
                        Table::new(path, None, chunk.frame, chunk.first)?,
                        &mut notes,
                    )
                })?;
            }
            Ok(None) => {
                // every process decompresses the whole file twice: to count its rows,
                // then to keep its window of them
                let n = super::csv_range::count_gzip_records(path);
                let window = n.as_ref().ok().map(|&n| window(n));
                let counts = agree(window.map(|(a, b)| b - a), false);
                n?;
                counts?;
                let (low, high) = window.unwrap_or_default();
                super::stream::for_each_frame(path, None, STRIPE_BLOCK, &mut |chunk| {
                    let (first, last) = (chunk.first, chunk.first + chunk.frame.height());
                    let (from, to) = (first.max(low), last.min(high));
                    if from < to {
                        let frame = chunk.frame.slice((from - first) as i64, to - from);
                        take(Table::new(path, None, frame, from)?, &mut notes)?;
                    }
                    Ok(())
                })?;
                notes.push(
                    "a gzip-compressed CSV file cannot be read from the middle: every process \
                     decompressed all of it to keep its own rows (decompress it or convert it \
                     to Parquet so that each process reads only its part)"
                        .into(),
                );
            }
            Err(e) => {
                let _ = agree(None, false);
                return Err(e);
            }
        }
    }
    let (target_name, feature_names) = names.ok_or_else(|| {
        Error::data(
            path,
            format!("process {part} of {parts} has no rows: run fewer processes"),
        )
    })?;
    let kept: Vec<usize> = (0..feature_names.len()).collect();
    let (x, y) = to_matrices(&cols, &kept);
    Ok(Stripe {
        x,
        y: y.as_slice().to_vec(),
        feature_names,
        target_name,
        notes,
    })
}

/// The training columns (features, then the target) of rows `offset..` of a file,
/// already read by polars (a block of a training file streamed through a fit,
/// `methods::svgp::file_rows`): chosen and checked as [`load`] chooses and checks a
/// whole file's, errors naming the rows of the file. Missing values are an error
/// (a streamed fit does not drop rows). Returns (feature names, target name, columns).
pub(crate) fn training_columns_of_frame(
    spec: &LoadSpec,
    parquet: Option<&CheckedParquet>,
    frame: DataFrame,
    offset: usize,
) -> Result<(Vec<String>, String, Vec<Vec<f64>>)> {
    let path = &spec.train;
    let table = Table::new(path, parquet, frame, offset)?;
    let (target, features) = choose_columns(&table, spec)?;
    let mut used = features.clone();
    used.push(target.clone());
    let cols = table.complete_columns(&used, false, &mut Vec::new())?;
    Ok((features, target, cols))
}

/// The training targets must vary, and their variance must fit in f64
/// ([`super::moments::target_problem`]); `part` says which rows were checked.
fn check_target(table: &Table, target: &str, y: &[f64], part: &str) -> Result<()> {
    match super::moments::target_problem(y) {
        None => Ok(()),
        Some(why) => Err(table.error(format!("the target column '{target}'{part} {why}"))),
    }
}

/// Reads prediction inputs: the named feature columns (all columns if `features` is
/// empty), in that order; other columns, such as a target, are ignored.
pub fn load_inputs(path: &Path, features: &[String]) -> Result<DMatrix<f64>> {
    inputs_of(&Table::read(path, &mut |_| {})?, features)
}

/// Call `each(first_row, inputs)` for consecutive chunks of at most `rows` rows of the
/// named feature columns of a CSV or Parquet file (all columns if `features` is
/// empty). Returns the number of rows read.
pub fn for_each_input_chunk(
    path: &Path,
    features: &[String],
    rows: usize,
    each: &mut dyn FnMut(usize, DMatrix<f64>) -> Result<()>,
) -> Result<usize> {
    let checked = match is_parquet(path) {
        true => Some(parquet_check::check(path, &open(path)?)?),
        false => None,
    };
    for_each_frame(path, checked.as_ref(), rows, &mut |chunk| {
        let x = inputs_of_frame(path, checked.as_ref(), chunk.frame, chunk.first, features)?;
        each(chunk.first, x)
    })
}

/// The input matrix of rows `offset..` of a file, already read by polars (a chunk of a
/// large file, see `data::stream`; `parquet` for a Parquet file): checked as
/// `load_inputs` checks a whole file, with errors naming the rows of the file.
pub(crate) fn inputs_of_frame(
    path: &Path,
    parquet: Option<&CheckedParquet>,
    frame: DataFrame,
    offset: usize,
    features: &[String],
) -> Result<DMatrix<f64>> {
    let table = Table::new(path, parquet, frame, offset)?;
    inputs_of(&table, features)
}

fn inputs_of(table: &Table, features: &[String]) -> Result<DMatrix<f64>> {
    // names are compared without the spaces around them, as the header is read
    let names: Vec<String> = if features.is_empty() {
        table.measured().into_iter().cloned().collect()
    } else {
        features.iter().map(|f| f.trim().to_string()).collect()
    };
    let missing: Vec<&String> = names.iter().filter(|n| !table.has(n)).collect();
    if !missing.is_empty() {
        return Err(table.error(format!(
            "missing feature column(s) {} (needed: {}){}; the columns are: {}",
            quoted(&missing),
            names.join(", "),
            table.suggestions(&missing),
            table.listing()
        )));
    }
    table.check_named(&names)?;
    let cols = table.numeric_columns(&names)?;
    if cols.iter().any(|c| c.iter().any(|v| v.is_nan())) {
        return Err(table.missing_error(&names, &cols, "; every input row needs all its values"));
    }
    let n = cols.first().map_or(0, Vec::len);
    Ok(DMatrix::from_fn(n, cols.len(), |i, j| cols[j][i]))
}

/// A split must be a fraction strictly inside (0, 1), and cannot be combined with a test file.
fn check_split_setting(spec: &LoadSpec) -> Result<()> {
    match spec.split {
        Some(_) if spec.test.is_some() => Err(Error::input(
            "give either a test file or a split fraction, not both",
        )),
        Some(f) if !(f > 0.0 && f < 1.0) => Err(Error::input(format!(
            "split {f} is not a fraction strictly between 0 and 1 (e.g. 0.8 for 80% training rows)"
        ))),
        _ => Ok(()),
    }
}

/// Target (default: the last column) and features (default: every other column, in
/// file order); a pandas index column is neither unless it is named.
fn choose_columns(table: &Table, spec: &LoadSpec) -> Result<(String, Vec<String>)> {
    // names are compared without the spaces around them, as the header is read
    let target = match spec.target.as_deref().map(str::trim) {
        Some(t) if !table.has(t) => {
            let t = t.to_string();
            return Err(table.error(format!(
                "target column {} does not exist{}; the columns are: {}",
                quoted(&[&t]),
                table.suggestions(&[&t]),
                table.listing()
            )));
        }
        Some(t) => t.to_string(),
        None => match table.measured().last() {
            Some(last) => (*last).clone(),
            None => {
                return Err(table.error(format!(
                    "every column ({}) is a pandas index column (the file's pandas metadata \
                     says so): name the target with --target and the inputs with --features",
                    table.listing()
                )));
            }
        },
    };
    let features: Vec<String> = match &spec.features {
        Some(f) => f.iter().map(|n| n.trim().to_string()).collect(),
        None => table
            .measured()
            .into_iter()
            .filter(|n| **n != target)
            .cloned()
            .collect(),
    };
    let unknown: Vec<&String> = features.iter().filter(|f| !table.has(f)).collect();
    if !unknown.is_empty() {
        return Err(table.error(format!(
            "feature column(s) {} do not exist{}; the columns are: {}",
            quoted(&unknown),
            table.suggestions(&unknown),
            table.listing()
        )));
    }
    let mut used = features.clone();
    used.push(target.clone());
    table.check_named(&used)?;
    if features.contains(&target) {
        return Err(table.error(format!(
            "the target column '{target}' is also listed among the features"
        )));
    }
    if let Some(d) = features
        .iter()
        .find(|f| features.iter().filter(|g| g == f).count() > 1)
    {
        return Err(table.error(format!("feature column '{d}' is listed twice")));
    }
    if features.is_empty() {
        let index = match table.index.is_empty() {
            true => String::new(),
            false => format!(
                " and the pandas index column(s) {} (name them with --features to use them \
                 as inputs)",
                quoted(&table.index.iter().collect::<Vec<_>>())
            ),
        };
        return Err(table.error(format!(
            "no feature columns: the file has only the target column '{target}'{index}"
        )));
    }
    Ok((target, features))
}

/// A test file must have exactly the training file's columns, so that the same names mean
/// the same inputs.
fn check_same_columns(train: &Table, test: &Table) -> Result<()> {
    let a: BTreeSet<&String> = train.names.iter().collect();
    let b: BTreeSet<&String> = test.names.iter().collect();
    if a == b {
        return Ok(());
    }
    let missing: Vec<&String> = a.difference(&b).copied().collect();
    let extra: Vec<&String> = b.difference(&a).copied().collect();
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("missing {}", quoted(&missing)));
    }
    if !extra.is_empty() {
        parts.push(format!("extra {}", quoted(&extra)));
    }
    Err(test.error(format!(
        "the test file's columns differ from those of the training file {}: {}",
        train.path.display(),
        parts.join("; ")
    )))
}

/// Seeded Fisher–Yates shuffle of the rows, then the first round(f·n) rows train.
fn split_rows(
    path: &Path,
    cols: &[Vec<f64>],
    fraction: f64,
    seed: u64,
) -> Result<(Columns, Columns)> {
    let n = cols.first().map_or(0, Vec::len);
    let n_train = (fraction * n as f64).round() as usize;
    if n_train == 0 || n_train >= n {
        return Err(Error::data(
            path,
            format!(
                "split {fraction} of its {n} row(s) leaves {n_train} training and {} test \
                 row(s); both parts need at least one (a larger file, another split, or a \
                 test file with --test)",
                n.saturating_sub(n_train)
            ),
        ));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let pick = |rows: &[usize]| {
        cols.iter()
            .map(|c| rows.iter().map(|&i| c[i]).collect())
            .collect()
    };
    Ok((pick(&order[..n_train]), pick(&order[n_train..])))
}

/// Indices of the features that vary in the training data; a constant column carries no
/// information and makes a lengthscale unidentifiable, so it is dropped with a note.
/// `constant(j)` says whether column j is constant ([`is_constant`]); `fail` makes the
/// error when every column is (naming the file, or the array).
pub(crate) fn drop_constant_features(
    features: &[String],
    constant: impl Fn(usize) -> bool,
    notes: &mut Vec<String>,
    fail: impl FnOnce(String) -> Error,
) -> Result<Vec<usize>> {
    let (constant, kept): (Vec<usize>, Vec<usize>) =
        (0..features.len()).partition(|&j| constant(j));
    let names: Vec<&String> = constant.iter().map(|&j| &features[j]).collect();
    if kept.is_empty() {
        return Err(fail(format!(
            "every feature column is constant in the training data ({})",
            quoted(&names)
        )));
    }
    if !constant.is_empty() {
        let list: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        notes.push(format!(
            "dropped constant column(s) {} (constant in the training data)",
            list.join(", ")
        ));
    }
    Ok(kept)
}

/// Whether a column's values are all one value.
pub(crate) fn is_constant<'a>(values: impl IntoIterator<Item = &'a f64>) -> bool {
    let (lo, hi) = values
        .into_iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    hi <= lo
}

/// Inputs from the kept feature columns and the target (the last column of `cols`).
fn to_matrices(cols: &[Vec<f64>], kept: &[usize]) -> (DMatrix<f64>, DVector<f64>) {
    let y = cols.last().cloned().unwrap_or_default();
    let x = DMatrix::from_fn(y.len(), kept.len(), |i, j| cols[kept[j]][i]);
    (x, DVector::from_vec(y))
}

/// One data file as polars read it.
struct Table {
    path: PathBuf,
    /// CSV files have a header line, so data row r is line r + 1 of the file.
    csv: bool,
    names: Vec<String>,
    frame: DataFrame,
    /// Data rows of the file before the frame's first (a chunk of a large file).
    offset: usize,
    /// Columns of a Parquet file that polars did not decode: not numbers or text.
    unusable: Vec<Unusable>,
    /// Columns pandas wrote from a DataFrame's index (a Parquet file's `pandas`
    /// metadata): used only when named, as they are row labels, not measurements.
    index: Vec<String>,
    /// Header names as the file has them, where they had spaces around them.
    trimmed: Vec<String>,
    /// Names given to columns that have values but no name: "(column 3)".
    unnamed: Vec<String>,
    /// Columns with neither a name nor a value, dropped.
    dropped_unnamed: usize,
}

/// Whether every cell of a column is missing or blank.
fn is_empty_column(col: &Column) -> bool {
    if col.null_count() == col.len() {
        return true;
    }
    col.str()
        .is_ok_and(|ca| ca.iter().all(|c| c.is_none_or(|t| t.trim().is_empty())))
}

impl Table {
    /// [`Table::read`], or with `sample` about that many rows read from places spread
    /// over a large file ([`super::sample`]).
    fn read_some(
        path: &Path,
        report: &mut dyn FnMut(LoadProgress),
        sample: Option<usize>,
    ) -> Result<Table> {
        if let Some(rows) = sample
            && let Some((frame, parquet)) = super::sample::sample_frame(path, rows)?
        {
            return Table::new(path, parquet.as_ref(), frame, 0);
        }
        Table::read(path, report)
    }

    /// Reads a CSV or Parquet file (chosen by extension), refusing empty files; a large
    /// one a block of rows at a time, telling `report` the rows read.
    fn read(path: &Path, report: &mut dyn FnMut(LoadProgress)) -> Result<Table> {
        let file = open(path)?;
        let len = file
            .metadata()
            .map_err(|e| Error::data(path, format!("cannot read: {e}")))?
            .len();
        let csv = !is_parquet(path);
        // The reader panics on some damaged files (a Parquet footer with a bad thrift
        // field: "thrift bool field", found by tests/suite/fuzz.rs): that is a damaged file,
        // not a crash.
        let damaged = |p: String| {
            Error::data(
                path,
                format!(
                    "cannot read as {}: the file is damaged ({p})",
                    if csv { "CSV" } else { "Parquet" }
                ),
            )
        };
        let polars = |e: PolarsError| Error::data(path, polars_failure(csv, &e));
        // A Parquet file is checked before polars decodes any of it.
        let parquet = match csv {
            true => None,
            false => {
                let checked = parquet_check::check(path, &file)?;
                checked.check_memory(path)?;
                Some(checked)
            }
        };
        let frame = if len >= BLOCK_READ_BYTES {
            drop(file);
            guarded(|| read_frame(path, parquet.as_ref(), report)).map_err(damaged)??
        } else if let Some(checked) = &parquet {
            guarded(|| checked.read(file, None))
                .map_err(damaged)?
                .map_err(polars)?
        } else {
            guarded(|| read_csv_file(path, file))
                .map_err(damaged)??
                .map_err(|e| Error::data(path, csv_failure(path, &e)))?
        };
        if let Some(p) = &parquet
            && frame.height() != p.rows
        {
            return Err(damaged(format!(
                "its footer says {} rows, but {} were read",
                p.rows,
                frame.height()
            )));
        }
        Table::new(path, parquet.as_ref(), frame, 0)
    }

    /// A table of `frame` (rows `offset..` of the file) with the spaces around its
    /// column names removed (`a,  b` has columns 'a' and 'b'), checked for columns, a
    /// header and data rows. A CSV file's columns are the frame's; a Parquet file's
    /// are those its footer lists (`parquet`): the frame holds those sgpw reads, and
    /// the others are kept to be named with their type if a data set uses them.
    fn new(
        path: &Path,
        parquet: Option<&CheckedParquet>,
        mut frame: DataFrame,
        offset: usize,
    ) -> Result<Table> {
        let raw: Vec<String> = match parquet {
            Some(p) => p.names.clone(),
            None => frame
                .get_column_names()
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        // A column without a name: polars calls it "" (and a second one
        // "_duplicated_0"). Without values too it is a comma at the end of every line,
        // and is dropped; with values it gets a name that says where it is, and is
        // refused if it is used.
        let has_empty = raw.iter().any(|n| n.trim().is_empty());
        let is_unnamed = |n: &str| {
            n.trim().is_empty()
                || (has_empty
                    && n.strip_prefix("_duplicated_")
                        .is_some_and(|k| k.parse::<usize>().is_ok()))
        };
        let mut names = Vec::new();
        let mut renamed = std::collections::HashMap::new();
        let mut trimmed = Vec::new();
        let mut unnamed = Vec::new();
        let mut unusable = Vec::new();
        let mut dropped_unnamed = 0;
        for (i, n) in raw.iter().enumerate() {
            let name = if !is_unnamed(n) {
                if n.trim() != n {
                    trimmed.push(n.clone());
                }
                n.trim().to_string()
            } else if frame.column(n).is_ok_and(is_empty_column) {
                frame.drop_in_place(n).map_err(|e| Error::data(path, e))?;
                dropped_unnamed += 1;
                continue;
            } else {
                let name = format!("(column {})", i + 1);
                unnamed.push(name.clone());
                name
            };
            if let Some(u) = parquet.and_then(|p| p.unusable.iter().find(|u| &u.name == n)) {
                unusable.push(Unusable {
                    name: name.clone(),
                    kind: u.kind.clone(),
                });
            }
            renamed.insert(n.clone(), name.clone());
            names.push(name);
        }
        let index = parquet
            .map(|p| {
                p.index_columns
                    .iter()
                    .filter_map(|c| renamed.get(c).cloned())
                    .collect()
            })
            .unwrap_or_default();
        let mut table = Table {
            path: path.to_path_buf(),
            csv: parquet.is_none(),
            names,
            frame: DataFrame::empty(),
            offset,
            unusable,
            index,
            trimmed,
            unnamed,
            dropped_unnamed,
        };
        table.check_shape(&frame)?;
        let frame_names: Vec<String> = frame
            .get_column_names()
            .iter()
            .map(|c| renamed.get(c.as_str()).cloned().unwrap_or(c.to_string()))
            .collect();
        frame
            .set_column_names(&frame_names)
            .map_err(|e| table.error(e))?;
        table.frame = frame;
        Ok(table)
    }

    /// Columns without a name in the header cannot be used: say where they are.
    fn check_named(&self, used: &[String]) -> Result<()> {
        match used.iter().find(|n| self.unnamed.contains(n)) {
            None => Ok(()),
            Some(n) => Err(self.error(format!(
                "{} has no name in the header but has values: name it in the header (or \
                 remove it, or choose the columns with --features)",
                n.trim_matches(['(', ')'])
            ))),
        }
    }

    /// "removed the spaces around column names '  lread' → 'lread', ... in FILE", and
    /// the unnamed empty columns dropped.
    fn note_trimmed(&self, notes: &mut Vec<String>) {
        if self.dropped_unnamed > 0 {
            notes.push(format!(
                "ignored {} column(s) of {} with neither a name nor a value (a comma at the \
                 end of every line?)",
                self.dropped_unnamed,
                self.path.display()
            ));
        }
        if self.trimmed.is_empty() {
            return;
        }
        let pairs: Vec<String> = self
            .trimmed
            .iter()
            .map(|n| format!("{} → {}", show(n), show(n.trim())))
            .collect();
        notes.push(format!(
            "removed the spaces around column name(s) {} in {}",
            pairs.join(", "),
            self.path.display()
        ));
    }

    /// The columns that are not a pandas index, in file order: the default target and
    /// inputs.
    fn measured(&self) -> Vec<&String> {
        self.names
            .iter()
            .filter(|n| !self.index.contains(n))
            .collect()
    }

    /// "ignored the pandas index column(s) 'longitude' of FILE …" when the chosen
    /// columns (`used`) leave an index column out.
    fn note_index(&self, used: &[String], notes: &mut Vec<String>) {
        let left: Vec<&String> = self.index.iter().filter(|n| !used.contains(n)).collect();
        if !left.is_empty() {
            notes.push(format!(
                "ignored the pandas index column(s) {} of {} (row labels pandas stored with \
                 the data; name one with --features or --target to use it)",
                quoted(&left),
                self.path.display()
            ));
        }
    }

    /// Every column name, quoted so that what is in a name shows: 'a', 'b c'.
    fn listing(&self) -> String {
        let names: Vec<&String> = self.names.iter().collect();
        quoted(&names)
    }

    /// " (did you mean 'lread'?)" for names that are close to a column's, else "".
    fn suggestions(&self, wanted: &[&String]) -> String {
        let close: Vec<String> = wanted
            .iter()
            .filter_map(|w| {
                closest(w, &self.names).map(|c| match wanted {
                    [_] => show(c),
                    _ => format!("{} for {}", show(c), show(w)),
                })
            })
            .collect();
        if close.is_empty() {
            String::new()
        } else {
            format!(" (did you mean {}?)", close.join(", "))
        }
    }

    /// A file needs columns, a header (CSV) with distinct names, and data rows.
    fn check_shape(&self, frame: &DataFrame) -> Result<()> {
        if self.names.is_empty() {
            return Err(self.error("no columns found"));
        }
        if self.csv && self.names.iter().all(|n| n.trim().parse::<f64>().is_ok()) {
            return Err(self.error(format!(
                "the first line ({}) looks like data: a header row with column names is required",
                self.names.join(",")
            )));
        }
        if let [only] = &self.names[..]
            && let Some(sep) = [';', '\t'].into_iter().find(|c| only.contains(*c))
        {
            return Err(self.error(format!(
                "only one column, '{only}': the file looks separated by {sep:?}, but sgpw reads comma-separated files"
            )));
        }
        if let Some(dup) = self.names.iter().find(|n| self.is_renamed_duplicate(n)) {
            let base = dup
                .rsplit_once("_duplicated_")
                .map_or(dup.as_str(), |(b, _)| b);
            return Err(self.error(format!(
                "column name '{base}' appears more than once in the header"
            )));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = self.names.iter().find(|n| !seen.insert(n.as_str())) {
            return Err(self.error(format!(
                "column name {} appears more than once in the header (once the spaces around \
                 names are removed)",
                show(dup)
            )));
        }
        if frame.height() == 0 {
            let why = if self.csv { " (only a header)" } else { "" };
            return Err(self.error(format!("no data rows{why}")));
        }
        Ok(())
    }

    /// Polars renames a repeated header name `a` to `a_duplicated_0`; we refuse it instead,
    /// since two columns with one name cannot be told apart.
    fn is_renamed_duplicate(&self, name: &str) -> bool {
        name.rsplit_once("_duplicated_")
            .is_some_and(|(base, k)| self.has(base) && k.parse::<usize>().is_ok())
    }

    fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    fn error(&self, msg: impl std::fmt::Display) -> Error {
        Error::data(&self.path, msg)
    }

    /// Where 0-based data row `i` is, for the user: "row 3 (line 4 of the file)".
    fn row_at(&self, i: usize) -> String {
        let i = i + self.offset;
        if self.csv {
            format!("row {} (line {} of the file)", i + 1, i + 2)
        } else {
            format!("row {}", i + 1)
        }
    }

    /// The named columns as f64 with missing values as NaN, rejecting text and infinities.
    fn numeric_columns(&self, names: &[String]) -> Result<Columns> {
        names.iter().map(|n| self.column_f64(n)).collect()
    }

    /// The named columns without missing values: rows that have one are an error, or,
    /// if `drop`, removed with a note.
    fn complete_columns(
        &self,
        names: &[String],
        drop: bool,
        notes: &mut Vec<String>,
    ) -> Result<Columns> {
        let cols = self.numeric_columns(names)?;
        let bad: BTreeSet<usize> = (0..self.frame.height())
            .filter(|&i| cols.iter().any(|c| c[i].is_nan()))
            .collect();
        if bad.is_empty() {
            return Ok(cols);
        }
        if !drop {
            return Err(self.missing_error(
                names,
                &cols,
                "; use --drop-missing to drop those rows",
            ));
        }
        if bad.len() == self.frame.height() {
            return Err(self.error(format!("all {} row(s) have missing values", bad.len())));
        }
        notes.push(format!(
            "dropped {} row(s) with missing values from {}",
            bad.len(),
            self.path.display()
        ));
        let keep = |c: &Vec<f64>| {
            c.iter()
                .enumerate()
                .filter(|(i, _)| !bad.contains(i))
                .map(|(_, &v)| v)
                .collect()
        };
        Ok(cols.iter().map(keep).collect())
    }

    /// "3 missing value(s) (...) in 2 row(s): column 'x2' at rows 3, 7; column 'y' at row 5".
    fn missing_error(&self, names: &[String], cols: &[Vec<f64>], hint: &str) -> Error {
        let mut total = 0;
        let mut rows = BTreeSet::new();
        let mut parts = Vec::new();
        for (name, col) in names.iter().zip(cols) {
            let at: Vec<usize> = (0..col.len())
                .filter(|&i| col[i].is_nan())
                .map(|i| i + self.offset)
                .collect();
            if !at.is_empty() {
                total += at.len();
                rows.extend(at.iter().copied());
                parts.push(format!("column '{name}' at {}", row_list(&at)));
            }
        }
        let lines = if self.csv {
            " (row 1 is the line after the header)"
        } else {
            ""
        };
        self.error(format!(
            "{total} missing value(s) (empty cell, NA, n/a, ?, NaN, …) in {} row(s): \
             {}{lines}{hint}",
            rows.len(),
            parts.join("; ")
        ))
    }

    /// One column as f64 with missing values as NaN. Integers and booleans (0/1) are
    /// numbers; text that does not parse as a number is an error naming the first bad cell.
    fn column_f64(&self, name: &str) -> Result<Vec<f64>> {
        if let Some(u) = self.unusable.iter().find(|u| u.name == name) {
            return Err(self.error(format!(
                "column '{name}' has Parquet type {}, which sgpw cannot use as numbers",
                u.kind
            )));
        }
        let col = self.frame.column(name).map_err(|e| self.error(e))?;
        let dtype = col.dtype();
        let values: Vec<f64> = if dtype.is_string() {
            self.parse_strings(name, col)?
        } else if dtype.is_primitive_numeric() || dtype.is_bool() || dtype.is_null() {
            let cast = col.cast(&DataType::Float64).map_err(|e| self.error(e))?;
            let ca = cast.f64().map_err(|e| self.error(e))?;
            ca.iter().map(|v| v.unwrap_or(f64::NAN)).collect()
        } else {
            return Err(self.error(format!(
                "column '{name}' has type {dtype}, which is not numeric"
            )));
        };
        // Every later step indexes the columns by row: a reader that returned a
        // column of another length than the frame (a damaged file) is an error here.
        if values.len() != self.frame.height() {
            return Err(self.error(format!(
                "cannot read as {}: the file is damaged (column '{name}' has {} values, \
                 but the table has {} rows)",
                if self.csv { "CSV" } else { "Parquet" },
                values.len(),
                self.frame.height()
            )));
        }
        if let Some(i) = values.iter().position(|v| v.is_infinite()) {
            return Err(self.error(format!(
                "column '{name}' has an infinite value at {}: {}",
                self.row_at(i),
                values[i]
            )));
        }
        Ok(values)
    }

    /// A text column is accepted only if every non-empty cell parses as a number
    /// (e.g. numbers with spaces around them); otherwise the first bad cell is reported.
    fn parse_strings(&self, name: &str, col: &Column) -> Result<Vec<f64>> {
        let ca = col.str().map_err(|e| self.error(e))?;
        let mut out = Vec::with_capacity(ca.len());
        for (i, cell) in ca.iter().enumerate() {
            let text = cell.map(str::trim).unwrap_or("");
            if text.is_empty() || NULL_TOKENS.contains(&text) {
                out.push(f64::NAN);
                continue;
            }
            match text.parse::<f64>() {
                Ok(v) => out.push(v),
                Err(_) => {
                    return Err(self.error(format!(
                        "column '{name}' is not numeric: {} has \"{text}\"",
                        self.row_at(i)
                    )));
                }
            }
        }
        Ok(out)
    }
}

/// 'a', 'b'
fn quoted(names: &[&String]) -> String {
    names.iter().map(|n| show(n)).collect::<Vec<_>>().join(", ")
}

/// A column name in quotes, with what cannot be seen escaped: 'a b', 'x\t'.
fn show(name: &str) -> String {
    format!("'{}'", name.escape_debug())
}

/// The column name most like `wanted` (ignoring case and spaces, else by
/// Jaro–Winkler similarity above 0.8, as clap suggests subcommands), if any.
fn closest<'a>(wanted: &str, names: &'a [String]) -> Option<&'a String> {
    let key = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let w = key(wanted);
    if let Some(same) = names.iter().find(|n| key(n) == w) {
        return Some(same);
    }
    names
        .iter()
        .map(|n| (strsim::jaro_winkler(&w, &key(n)), n))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

/// "row 3" or "rows 3, 7, 9 and 12 more" (1-based).
fn row_list(rows: &[usize]) -> String {
    let shown: Vec<String> = rows
        .iter()
        .take(SHOW_ROWS)
        .map(|i| (i + 1).to_string())
        .collect();
    let more = rows.len().saturating_sub(SHOW_ROWS);
    let s = if rows.len() == 1 { "" } else { "s" };
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("row{s} {}{tail}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_of_a_csv_equal_the_whole_file_and_errors_name_the_file_row() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("in.csv");
        let mut text = String::from("a,b,y\n");
        for i in 0..23 {
            text.push_str(&format!("{},{},{}\n", i, 2 * i, 0.5 * i as f64));
        }
        std::fs::write(&path, &text).expect("writes");
        let whole = load_inputs(&path, &["b".into(), "a".into()]).expect("whole");
        let mut got = Vec::new();
        let n = for_each_input_chunk(&path, &["b".into(), "a".into()], 5, &mut |first, x| {
            got.push((first, x));
            Ok(())
        })
        .expect("chunks");
        assert_eq!(n, 23);
        assert_eq!(
            got.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
            [0, 5, 10, 15, 20]
        );
        for (first, x) in &got {
            assert_eq!(x, &whole.rows(*first, x.nrows()).into_owned());
        }
        text = text.replace("17,34,8.5", "17,oops,8.5");
        std::fs::write(&path, &text).expect("writes");
        let e = for_each_input_chunk(&path, &["b".into()], 5, &mut |_, _| Ok(()))
            .expect_err("bad cell");
        assert!(
            e.to_string().contains("row 18 (line 19 of the file)"),
            "{e}"
        );
    }
}
