//! Reading a file a chunk of rows at a time: prediction inputs, so that predicting
//! millions of rows needs memory for one chunk only, and large data sets, so that
//! loading one can report its progress: Parquet by row windows (polars reads only the
//! row groups a window touches), CSV by lines (the header, then `rows` lines at a
//! time, each chunk parsed by polars as a small CSV of its own). Every chunk is checked
//! as a whole file would be, with errors naming the rows of the file.

use super::load::{inputs_of_frame, is_parquet, polars_failure, read_csv_from};
use crate::error::{Error, Result};
use nalgebra::DMatrix;
use polars::prelude::*;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor};
use std::path::Path;

/// Call `each(first_row, inputs)` for consecutive chunks of at most `rows` rows of the
/// named feature columns of a CSV or Parquet file (all columns if `features` is
/// empty). Returns the number of rows read.
pub fn for_each_input_chunk(
    path: &Path,
    features: &[String],
    rows: usize,
    each: &mut dyn FnMut(usize, DMatrix<f64>) -> Result<()>,
) -> Result<usize> {
    let csv = !is_parquet(path);
    for_each_frame(path, rows, &mut |chunk| {
        let x = inputs_of_frame(path, csv, chunk.frame, chunk.first, features)?;
        each(chunk.first, x)
    })
}

/// One block of rows of a file, as polars read it.
pub(crate) struct Chunk {
    /// The block's first data row (0-based).
    pub first: usize,
    pub frame: DataFrame,
    /// How far through the file the block ends, in 0..=1 (rows of a Parquet file,
    /// bytes of a CSV file).
    pub fraction: f64,
}

/// Call `each` for consecutive blocks of at most `rows` rows of a CSV or Parquet file,
/// every column as polars reads it. Returns the number of rows read.
pub(crate) fn for_each_frame(
    path: &Path,
    rows: usize,
    each: &mut dyn FnMut(Chunk) -> Result<()>,
) -> Result<usize> {
    let rows = rows.max(1);
    if is_parquet(path) {
        parquet_chunks(path, rows, each)
    } else {
        csv_chunks(path, rows, each)
    }
}

fn open(path: &Path) -> Result<File> {
    let file = File::open(path).map_err(|e| Error::data(path, format!("cannot read: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| Error::data(path, format!("cannot read: {e}")))?;
    if meta.is_dir() {
        return Err(Error::data(
            path,
            "cannot read: it is a directory, not a data file",
        ));
    }
    if meta.len() == 0 {
        return Err(Error::data(
            path,
            "the file is empty (a header row and at least one data row are needed)",
        ));
    }
    Ok(file)
}

fn parquet_chunks(
    path: &Path,
    rows: usize,
    each: &mut dyn FnMut(Chunk) -> Result<()>,
) -> Result<usize> {
    let fail = |e: PolarsError| Error::data(path, polars_failure(false, &e));
    let total = ParquetReader::new(open(path)?).num_rows().map_err(fail)?;
    if total == 0 {
        return Err(Error::data(path, "the file has no data rows"));
    }
    for first in (0..total).step_by(rows) {
        let take = rows.min(total - first);
        let frame = ParquetReader::new(open(path)?)
            .with_slice(Some((first, take)))
            .finish()
            .map_err(fail)?;
        each(Chunk {
            first,
            frame,
            fraction: (first + take) as f64 / total as f64,
        })?;
    }
    Ok(total)
}

fn csv_chunks(
    path: &Path,
    rows: usize,
    each: &mut dyn FnMut(Chunk) -> Result<()>,
) -> Result<usize> {
    let read_err = |e: std::io::Error| Error::data(path, format!("cannot read: {e}"));
    let file = open(path)?;
    let size = file.metadata().map_or(0, |m| m.len()).max(1);
    let mut lines = BufReader::new(file);
    let mut header = Vec::new();
    let mut consumed = lines.read_until(b'\n', &mut header).map_err(read_err)? as u64;
    if !header.ends_with(b"\n") {
        header.push(b'\n');
    }
    let mut first = 0;
    loop {
        let mut buf = header.clone();
        let mut count = 0;
        while count < rows {
            let before = buf.len();
            let got = lines.read_until(b'\n', &mut buf).map_err(read_err)?;
            if got == 0 {
                break;
            }
            consumed += got as u64;
            if buf[before..].iter().all(|b| b.is_ascii_whitespace()) {
                buf.truncate(before); // blank lines are not rows
                continue;
            }
            if !buf.ends_with(b"\n") {
                buf.push(b'\n');
            }
            count += 1;
        }
        if count == 0 {
            break;
        }
        let frame = read_csv_from(Cursor::new(buf))
            .map_err(|e| Error::data(path, polars_failure(true, &e)))?;
        each(Chunk {
            first,
            frame,
            fraction: (consumed as f64 / size as f64).min(1.0),
        })?;
        first += count;
    }
    if first == 0 {
        return Err(Error::data(
            path,
            "the file has no data rows (a header row and at least one data row are needed)",
        ));
    }
    Ok(first)
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
        let whole = super::super::load_inputs(&path, &["b".into(), "a".into()]).expect("whole");
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
