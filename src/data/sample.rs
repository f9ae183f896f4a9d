//! A spread-out sample of a large file's rows, read without reading the whole file: for
//! drawing (the thinned scatter of a prediction figure), where reading two million rows
//! to draw four thousand would take most of the time. Parquet: windows of rows spread
//! over the file (polars reads only the row groups a window touches). Plain CSV: lines
//! read after evenly spaced byte offsets. A gzipped CSV cannot be entered in the middle,
//! and a small file is as quick to read whole: both are read whole (None here).

use super::data_file::DataFile;
use super::parquet_check::CheckedParquet;
use super::progress::{BLOCK_READ_BYTES, stack};
use super::stream::{Compression, csv_compression, csv_failure, open, read_csv_from};
use crate::error::{Error, Result};
use polars_core::prelude::*;
use std::io::{BufRead, BufReader, Cursor, Seek, SeekFrom};
use std::path::Path;

/// Places in the file a sample is read from.
const WINDOWS: usize = 40;

/// Whether `path` is worth sampling for about `rows` rows: Some(its row count where
/// known without reading it, Parquet), or None when it is better read whole.
pub(crate) fn plan(path: &Path, rows: usize) -> Result<Option<Option<usize>>> {
    plan_of(&DataFile::open(path)?, rows)
}

/// [`plan`] of a file already opened.
fn plan_of(file: &DataFile, rows: usize) -> Result<Option<Option<usize>>> {
    let path = file.path();
    if let Some(checked) = file.parquet() {
        let total = checked.rows;
        return Ok((total > 2 * rows).then_some(Some(total)));
    }
    let mut file = open(path)?;
    let len = file.metadata().map_or(0, |m| m.len());
    let plain = csv_compression(path, &mut file)? == Compression::Plain;
    Ok((len >= BLOCK_READ_BYTES && plain).then_some(None))
}

/// About `rows` rows from `WINDOWS` places spread over the file, with a Parquet file's
/// checked footer ([`parquet_check`]: checked before polars decodes any of it); None
/// when the file is better read whole ([`plan`]).
pub(crate) fn sample_frame(
    path: &Path,
    rows: usize,
) -> Result<Option<(DataFrame, Option<CheckedParquet>)>> {
    let per = rows.div_ceil(WINDOWS).max(1);
    let file = DataFile::open(path)?;
    if plan_of(&file, rows)?.is_none() {
        return Ok(None);
    }
    if let Some(checked) = file.parquet() {
        let total = checked.rows;
        let mut frames = Vec::with_capacity(WINDOWS);
        for k in 0..WINDOWS {
            let first = (total - per) * k / (WINDOWS - 1);
            frames.push(file.rows_at(first, per, None)?.frame);
        }
        return Ok(Some((stack(path, frames)?, file.into_parquet())));
    }
    let file = open(path)?;
    let len = file.metadata().map_or(0, |m| m.len());
    let read_err = |e: std::io::Error| Error::data(path, format!("cannot read: {e}"));
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    reader.read_until(b'\n', &mut buf).map_err(read_err)?;
    for k in 0..WINDOWS {
        let at = len * k as u64 / WINDOWS as u64;
        if k > 0 {
            reader.seek(SeekFrom::Start(at)).map_err(read_err)?;
            // the rest of the line the offset fell in
            reader
                .read_until(b'\n', &mut Vec::new())
                .map_err(read_err)?;
        }
        for _ in 0..per {
            let before = buf.len();
            if reader.read_until(b'\n', &mut buf).map_err(read_err)? == 0 {
                break;
            }
            if buf[before..].iter().all(|b| b.is_ascii_whitespace()) {
                buf.truncate(before);
            } else if !buf.ends_with(b"\n") {
                buf.push(b'\n');
            }
        }
    }
    let frame =
        read_csv_from(Cursor::new(buf)).map_err(|e| Error::data(path, csv_failure(path, &e)))?;
    Ok(Some((frame, None)))
}
