//! Reading CSV / Parquet files into a [`Dataset`]. Every problem with the data is an
//! [`Error::Data`] that starts with the file path and names the column and row, because
//! the user has to find it in their file; bad settings (a split outside (0, 1)) are
//! [`Error::Input`]. Nothing here panics on user data.

use super::data_file::DataFile;
use super::progress::LoadProgress;
use super::stream::Chunk;
use super::table::{Columns, Table, TargetRead, quoted};
use super::{Dataset, LoadSpec};
use crate::error::{Error, Result};
use crate::likelihoods::LikelihoodKind;
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::path::Path;

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
    read_dataset(spec, report, Purpose::Fit(None), None)
}

/// [`load_with_progress`] for a fit with the likelihood `likelihood`: its targets are
/// checked for what the likelihood needs (errors name the file and row), and a binary
/// target's labels, when they are not 0 and 1, are noted with the classes they become
/// (and a regression likelihood's target of two values, as likely class labels).
pub fn load_for_fit(
    spec: &LoadSpec,
    likelihood: LikelihoodKind,
    report: &mut dyn FnMut(LoadProgress),
) -> Result<Dataset> {
    read_dataset(spec, report, Purpose::Fit(Some(likelihood)), None)
}

/// [`load`] for data that an existing model conditions on or is scored on (`predict
/// --train`, `nlml`, `stream`): nothing is fitted, so a constant target is accepted.
pub fn load_for_model(spec: &LoadSpec) -> Result<Dataset> {
    read_dataset(spec, &mut |_| {}, Purpose::Model, None)
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
    let data = read_dataset(spec, &mut |_| {}, Purpose::Model, Some(rows))?;
    Ok(Some((data, total)))
}

/// What a data set is loaded for: a fit (with its likelihood, where it is known: a
/// session's or the app's data set is loaded before its runs name theirs), or an
/// existing model (nothing is fitted, so any target is accepted).
#[derive(Clone, Copy, Debug)]
enum Purpose {
    Model,
    Fit(Option<LikelihoodKind>),
}

fn read_dataset(
    spec: &LoadSpec,
    report: &mut dyn FnMut(LoadProgress),
    purpose: Purpose,
    sample: Option<usize>,
) -> Result<Dataset> {
    let (fitted, kind) = match purpose {
        Purpose::Model => (false, None),
        Purpose::Fit(kind) => (true, kind),
    };
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
    // a target of two labels (text, booleans) is read as the classes 0 and 1
    // (`ClassNames`), which the test file's labels then follow
    let (train_cols, classes) = train.complete_with_target(
        &used,
        TargetRead::Learn(kind),
        spec.drop_missing,
        &mut notes,
    )?;
    // a target the fit cannot use is refused before any work, whoever loads the data
    // (`fit`, a session, the app): the whole column, then the rows a split trains on
    if fitted {
        let y = train_cols.last().map_or(&[][..], Vec::as_slice);
        check_target(&train, &target, y, "")?;
        if let Some(kind) = kind {
            check_likelihood_target(&train, &target, y, kind, &mut notes)?;
        }
    }
    if let Some(c) = &classes
        && (kind == Some(LikelihoodKind::Bernoulli) || !c.booleans)
    {
        notes.push(format!(
            "{} (the labels of the target '{target}')",
            c.describe()
        ));
    }
    let (train_cols, test_cols) = match (&spec.test, spec.split) {
        (Some(path), _) => {
            let test = Table::read_some(path, report, sample)?;
            check_same_columns(&train, &test)?;
            test.note_trimmed(&mut notes);
            let read = match &classes {
                Some(c) => TargetRead::Known(c),
                None => TargetRead::Numbers,
            };
            let (test_cols, _) =
                test.complete_with_target(&used, read, spec.drop_missing, &mut notes)?;
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
        classes,
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
    let file = match DataFile::open(path) {
        Ok(file) => file,
        Err(e) => {
            let _ = agree(None, false);
            return Err(e);
        }
    };
    if let Some(checked) = file.parquet() {
        agree(Some(window(checked.rows).1 - window(checked.rows).0), false)?;
        let (first, last) = window(checked.rows);
        let chunk = file.rows_at(first, last - first, None)?;
        take(
            Table::new(path, Some(checked), chunk.frame, first)?,
            &mut notes,
        )?;
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
                file.for_each_chunk(STRIPE_BLOCK, &mut |chunk| {
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

/// The training columns (features, then the target) of a chunk of `file`, the
/// training file of `spec` (a block of a training file streamed through a fit,
/// `methods::svgp::file_rows`): chosen and checked as [`load`] chooses and checks a
/// whole file's, errors naming the rows of the file. Missing values are an error
/// (a streamed fit does not drop rows). Returns (feature names, target name, columns).
pub(crate) fn training_columns(
    spec: &LoadSpec,
    file: &DataFile,
    chunk: Chunk,
) -> Result<(Vec<String>, String, Vec<Vec<f64>>)> {
    let path = &spec.train;
    let table = Table::new(path, file.parquet(), chunk.frame, chunk.first)?;
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

/// The target column `y` (every row of the file, or those left after dropping rows with
/// missing values) against what `kind` needs ([`crate::likelihoods::target_problem`]):
/// the first row it cannot take is named; a binary target's labels are noted when they
/// are not 0 and 1, and a two-valued target of a regression likelihood is noted.
fn check_likelihood_target(
    table: &Table,
    target: &str,
    y: &[f64],
    kind: LikelihoodKind,
    notes: &mut Vec<String>,
) -> Result<()> {
    match crate::likelihoods::target_problem(kind, y) {
        Ok(Some(labels)) if labels.labels != [0.0, 1.0] => {
            let [a, b] = labels.labels;
            notes.push(format!(
                "the target '{target}' has the labels {a} and {b}: the {kind} likelihood \
                 reads {a} as class 0 and {b} as class 1 (p(y = 1) is the probability of {b})"
            ));
            Ok(())
        }
        Ok(_) => {
            notes.extend(crate::likelihoods::two_valued_regression_note(
                target, kind, y,
            ));
            Ok(())
        }
        Err(bad) => {
            let row = if y.len() == table.frame.height() {
                table.row_at(bad.row)
            } else {
                format!(
                    "row {} of those left after dropping the rows with missing values",
                    bad.row + 1
                )
            };
            Err(table.error(format!(
                "the target column '{target}' at {row}: {} ({} likelihood, --likelihood)",
                bad.reason, kind
            )))
        }
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
    let file = DataFile::open(path)?;
    file.for_each_chunk(rows, &mut |chunk| {
        let first = chunk.first;
        let table = Table::new(path, file.parquet(), chunk.frame, first)?;
        each(first, inputs_of(&table, features)?)
    })
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
