//! One data file's rows as polars read them, turned into checked columns of numbers:
//! its header (names trimmed, unnamed and duplicated columns, pandas' index columns),
//! its cells (numbers, text that parses, the missing-value tokens) and the errors that
//! name the file, the column and the row.

use super::data_file::DataFile;
use super::guard::guarded;
use super::parquet_check::{CheckedParquet, Unusable};
use super::progress::{BLOCK_READ_BYTES, LoadProgress, read_frame};
use super::stream::{NULL_TOKENS, csv_failure, open, polars_failure, read_csv_file};
use crate::error::{Error, Result};
use crate::likelihoods::{ClassNames, LikelihoodKind};
use polars_core::prelude::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How many row numbers a message lists before it says "and N more".
const SHOW_ROWS: usize = 5;

/// Values of the used columns, one `Vec` per column (features first, target last).
pub(super) type Columns = Vec<Vec<f64>>;

/// One data file as polars read it.
pub(super) struct Table {
    pub(super) path: PathBuf,
    /// CSV files have a header line, so data row r is line r + 1 of the file.
    pub(super) csv: bool,
    pub(super) names: Vec<String>,
    pub(super) frame: DataFrame,
    /// Data rows of the file before the frame's first (a chunk of a large file).
    pub(super) offset: usize,
    /// Columns of a Parquet file that polars did not decode: not numbers or text.
    pub(super) unusable: Vec<Unusable>,
    /// Columns pandas wrote from a DataFrame's index (a Parquet file's `pandas`
    /// metadata): used only when named, as they are row labels, not measurements.
    pub(super) index: Vec<String>,
    /// Header names as the file has them, where they had spaces around them.
    pub(super) trimmed: Vec<String>,
    /// Names given to columns that have values but no name: "(column 3)".
    pub(super) unnamed: Vec<String>,
    /// Columns with neither a name nor a value, dropped.
    pub(super) dropped_unnamed: usize,
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
    pub(super) fn read_some(
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
    pub(super) fn read(path: &Path, report: &mut dyn FnMut(LoadProgress)) -> Result<Table> {
        let file = open(path)?;
        let len = file
            .metadata()
            .map_err(|e| Error::data(path, format!("cannot read: {e}")))?
            .len();
        // A Parquet file is checked before polars decodes any of it.
        let source = DataFile::with_file(path, &file)?;
        let csv = source.is_csv();
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
        let parquet = source.parquet();
        if let Some(checked) = parquet {
            checked.check_memory(path)?;
        }
        let frame = if len >= BLOCK_READ_BYTES {
            drop(file);
            guarded(|| read_frame(&source, report)).map_err(damaged)??
        } else if let Some(checked) = parquet {
            guarded(|| checked.read(file, None))
                .map_err(damaged)?
                .map_err(polars)?
        } else {
            guarded(|| read_csv_file(path, file))
                .map_err(damaged)??
                .map_err(|e| Error::data(path, csv_failure(path, &e)))?
        };
        if let Some(p) = parquet
            && frame.height() != p.rows
        {
            return Err(damaged(format!(
                "its footer says {} rows, but {} were read",
                p.rows,
                frame.height()
            )));
        }
        Table::new(path, parquet, frame, 0)
    }

    /// A table of `frame` (rows `offset..` of the file) with the spaces around its
    /// column names removed (`a,  b` has columns 'a' and 'b'), checked for columns, a
    /// header and data rows. A CSV file's columns are the frame's; a Parquet file's
    /// are those its footer lists (`parquet`): the frame holds those sgpw reads, and
    /// the others are kept to be named with their type if a data set uses them.
    pub(super) fn new(
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
    pub(super) fn check_named(&self, used: &[String]) -> Result<()> {
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
    pub(super) fn note_trimmed(&self, notes: &mut Vec<String>) {
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
    pub(super) fn measured(&self) -> Vec<&String> {
        self.names
            .iter()
            .filter(|n| !self.index.contains(n))
            .collect()
    }

    /// "ignored the pandas index column(s) 'longitude' of FILE …" when the chosen
    /// columns (`used`) leave an index column out.
    pub(super) fn note_index(&self, used: &[String], notes: &mut Vec<String>) {
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
    pub(super) fn listing(&self) -> String {
        let names: Vec<&String> = self.names.iter().collect();
        quoted(&names)
    }

    /// " (did you mean 'lread'?)" for names that are close to a column's, else "".
    pub(super) fn suggestions(&self, wanted: &[&String]) -> String {
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
    pub(super) fn check_shape(&self, frame: &DataFrame) -> Result<()> {
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
    pub(super) fn is_renamed_duplicate(&self, name: &str) -> bool {
        name.rsplit_once("_duplicated_")
            .is_some_and(|(base, k)| self.has(base) && k.parse::<usize>().is_ok())
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    pub(super) fn error(&self, msg: impl std::fmt::Display) -> Error {
        Error::data(&self.path, msg)
    }

    /// Where 0-based data row `i` is, for the user: "row 3 (line 4 of the file)".
    pub(super) fn row_at(&self, i: usize) -> String {
        let i = i + self.offset;
        if self.csv {
            format!("row {} (line {} of the file)", i + 1, i + 2)
        } else {
            format!("row {}", i + 1)
        }
    }

    /// The named columns as f64 with missing values as NaN, rejecting text and infinities.
    pub(super) fn numeric_columns(&self, names: &[String]) -> Result<Columns> {
        names.iter().map(|n| self.column_f64(n)).collect()
    }

    /// The named columns without missing values: rows that have one are an error, or,
    /// if `drop`, removed with a note.
    pub(super) fn complete_columns(
        &self,
        names: &[String],
        drop: bool,
        notes: &mut Vec<String>,
    ) -> Result<Columns> {
        self.complete(names, self.numeric_columns(names)?, drop, notes)
    }

    /// [`Table::complete_columns`] whose last column, the target, may hold two class
    /// labels (text or booleans), read as `read` says: returned as their class codes
    /// 0 and 1 with the labels ([`ClassNames`]).
    pub(super) fn complete_with_target(
        &self,
        names: &[String],
        read: TargetRead,
        drop: bool,
        notes: &mut Vec<String>,
    ) -> Result<(Columns, Option<ClassNames>)> {
        let Some((target, features)) = names.split_last() else {
            return Ok((Vec::new(), None));
        };
        let mut cols = self.numeric_columns(features)?;
        let (y, classes) = self.target_column(target, read)?;
        cols.push(y);
        Ok((self.complete(names, cols, drop, notes)?, classes))
    }

    fn complete(
        &self,
        names: &[String],
        cols: Columns,
        drop: bool,
        notes: &mut Vec<String>,
    ) -> Result<Columns> {
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
    pub(super) fn missing_error(&self, names: &[String], cols: &[Vec<f64>], hint: &str) -> Error {
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
    pub(super) fn column_f64(&self, name: &str) -> Result<Vec<f64>> {
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

    /// The target column `name` as numbers, or as the codes of two classes where it holds
    /// labels ([`Table::label_cells`]), read as `read` says. Errors name the column, the
    /// row and the labels.
    fn target_column(
        &self,
        name: &str,
        read: TargetRead,
    ) -> Result<(Vec<f64>, Option<ClassNames>)> {
        let at = |row: usize, why: String| {
            self.error(format!(
                "the target column '{name}' at {}: {why}",
                self.row_at(row)
            ))
        };
        match read {
            TargetRead::Numbers => Ok((self.column_f64(name)?, None)),
            TargetRead::Known(classes) => {
                let Some((cells, _)) = self.label_cells(name, true)? else {
                    return Err(self.error(format!(
                        "the target column '{name}' holds numbers, but the classes are the \
                         labels \"{}\" and \"{}\"",
                        classes.names[0], classes.names[1]
                    )));
                };
                let cells: Vec<Option<&str>> = cells.iter().map(|c| c.as_deref()).collect();
                let codes = classes.codes(&cells).map_err(|b| at(b.row, b.reason))?;
                Ok((codes, Some(classes.clone())))
            }
            TargetRead::Learn(kind) => {
                let Some((cells, booleans)) = self.label_cells(name, false)? else {
                    return Ok((self.column_f64(name)?, None));
                };
                let bernoulli = kind == Some(LikelihoodKind::Bernoulli);
                let cells: Vec<Option<&str>> = cells.iter().map(|c| c.as_deref()).collect();
                let found = ClassNames::of(&cells, booleans);
                if booleans && !bernoulli {
                    // booleans are also the numbers 0 and 1 (as before there were
                    // labels): kept as labels only for a run whose likelihood comes later
                    return match (found, kind) {
                        (Ok((classes, codes)), None) => Ok((codes, Some(classes))),
                        _ => Ok((self.column_f64(name)?, None)),
                    };
                }
                match found {
                    Ok((classes, _)) if kind.is_some() && !bernoulli => Err(self.error(format!(
                        "the target column '{name}' holds the labels \"{}\" and \"{}\", \
                             not numbers: the {} likelihood needs numbers (to classify them, \
                             use --likelihood bernoulli)",
                        classes.names[0],
                        classes.names[1],
                        kind.unwrap_or_default()
                    ))),
                    Ok((classes, codes)) => Ok((codes, Some(classes))),
                    Err(bad) if bernoulli => Err(at(
                        bad.row,
                        format!("{} (bernoulli likelihood, --likelihood)", bad.reason),
                    )),
                    Err(bad) => Err(at(
                        bad.row,
                        format!(
                            "the column holds text, neither numbers nor two class labels: {}",
                            bad.reason
                        ),
                    )),
                }
            }
        }
    }

    /// The cells of column `name` as labels, with whether they are booleans, when the
    /// column holds labels rather than numbers: booleans ("false"/"true"), or text none
    /// of whose cells is a number (a numeric column with a stray word is left to the
    /// numeric check, which names the cell).
    /// Missing cells (empty, NA, …) are None. `any_text`: every text column is labels
    /// (the classes are known, as for a test file's target).
    fn label_cells(&self, name: &str, any_text: bool) -> Result<Option<LabelCells>> {
        if self.unusable.iter().any(|u| u.name == name) {
            return Ok(None);
        }
        let col = self.frame.column(name).map_err(|e| self.error(e))?;
        if col.dtype().is_bool() {
            let ca = col.bool().map_err(|e| self.error(e))?;
            let cells = ca
                .iter()
                .map(|b| b.map(|b| if b { "true" } else { "false" }.to_string()))
                .collect();
            return Ok(Some((cells, true)));
        }
        if !col.dtype().is_string() {
            return Ok(None);
        }
        let ca = col.str().map_err(|e| self.error(e))?;
        let cells: Vec<Option<String>> = ca
            .iter()
            .map(|c| {
                let t = c.map(str::trim).unwrap_or("");
                (!t.is_empty() && !NULL_TOKENS.contains(&t)).then(|| t.to_string())
            })
            .collect();
        if any_text {
            return Ok(Some((cells, false)));
        }
        // one number among words is a numeric column with stray text (the numeric
        // check names the cell), not a label
        let mut present = cells.iter().flatten().peekable();
        let labels = present.peek().is_some() && present.all(|t| t.parse::<f64>().is_err());
        Ok(labels.then_some((cells, false)))
    }

    /// A text column is accepted only if every non-empty cell parses as a number
    /// (e.g. numbers with spaces around them); otherwise the first bad cell is reported.
    pub(super) fn parse_strings(&self, name: &str, col: &Column) -> Result<Vec<f64>> {
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

/// A column's cells as labels (None: missing) and whether they were booleans.
type LabelCells = (Vec<Option<String>>, bool);

/// How a target column is read ([`Table::complete_with_target`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum TargetRead<'a> {
    /// Numbers only.
    Numbers,
    /// Labels (text or booleans) read as two classes, decided here by [`ClassNames::of`];
    /// with the run's likelihood where it is known (others than bernoulli refuse text).
    Learn(Option<LikelihoodKind>),
    /// Labels read as the training file's classes (a test file's target).
    Known(&'a ClassNames),
}

/// 'a', 'b'
pub(super) fn quoted(names: &[&String]) -> String {
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
