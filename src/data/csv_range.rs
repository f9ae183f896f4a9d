//! One process's part of a plain CSV file for a fit spread over processes (`sgpw fit
//! --distributed`): the body (after the header) is cut into equal byte ranges, and a
//! process takes the records that start in its range — it seeks to the range's first
//! byte, skips to the next line start and reads through the record that crosses the
//! range's end, so it reads only its own bytes and every record has exactly one owner.
//! A line start is a record start: a quoted field that holds a line break would be cut
//! (such files are read whole by a single process, or converted to Parquet).
//! A gzip-compressed file cannot be entered in the middle: [`CsvRange::of`] says None,
//! and [`count_gzip_records`] counts its records so that a part can be taken by rows.

use super::stream::{Chunk, Compression, csv_block, csv_compression, open, read_record};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The bytes `start..end` of a plain CSV file that hold the records of one part.
pub struct CsvRange {
    path: PathBuf,
    header: Vec<u8>,
    start: u64,
    end: u64,
    size: u64,
}

impl CsvRange {
    /// Part `part` of `parts` of the plain CSV file `path`; None if it is compressed.
    pub fn of(path: &Path, part: usize, parts: usize) -> Result<Option<CsvRange>> {
        let mut file = open(path)?;
        if csv_compression(path, &mut file)? != Compression::Plain {
            return Ok(None);
        }
        let size = file
            .metadata()
            .map_err(|e| Error::data(path, format!("cannot read: {e}")))?
            .len();
        let mut header = Vec::new();
        let body = read_record(&mut BufReader::new(&mut file), &mut header)
            .map_err(|e| Error::data(path, format!("cannot read: {e}")))? as u64;
        let cut = |k: usize| body + ((size - body) as u128 * k as u128 / parts as u128) as u64;
        let start = record_start(path, &mut file, body, size, cut(part))?;
        let end = record_start(path, &mut file, body, size, cut(part + 1))?;
        Ok(Some(CsvRange {
            path: path.to_path_buf(),
            header,
            start,
            end,
            size,
        }))
    }

    /// This part's bytes, records whole.
    fn reader(&self) -> Result<impl BufRead> {
        let mut file = open(&self.path)?;
        file.seek(SeekFrom::Start(self.start))
            .map_err(|e| Error::data(&self.path, format!("cannot read: {e}")))?;
        Ok(BufReader::new(file.take(self.end - self.start)))
    }

    /// The records (not blank lines) of this part, counted without parsing them.
    pub fn count_records(&self) -> Result<usize> {
        count_records(&self.path, &mut self.reader()?)
    }

    /// Call `each` for consecutive blocks of at most `rows` records of this part, the
    /// first of which is data row `first` of the file (0-based; the rows of the parts
    /// before, from [`CsvRange::count_records`] on each), as polars reads them.
    pub fn for_each_frame(
        &self,
        first: usize,
        rows: usize,
        each: &mut dyn FnMut(Chunk) -> Result<()>,
    ) -> Result<()> {
        let mut lines = self.reader()?;
        let (mut first, mut at) = (first, self.start);
        loop {
            let at_byte = Some(at);
            let Some((frame, count, got)) =
                csv_block(&self.path, &mut lines, &self.header, rows.max(1))?
            else {
                break;
            };
            at += got;
            each(Chunk {
                first,
                frame,
                fraction: at as f64 / self.size.max(1) as f64,
                at_byte,
            })?;
            first += count;
        }
        Ok(())
    }
}

/// The records (not blank lines) of `lines`, counted without parsing them.
pub fn count_records(path: &Path, lines: &mut dyn BufRead) -> Result<usize> {
    let mut buf = Vec::new();
    let mut count = 0;
    loop {
        buf.clear();
        let got = read_record(lines, &mut buf)
            .map_err(|e| Error::data(path, format!("cannot read: {e}")))?;
        if got == 0 {
            return Ok(count);
        }
        count += usize::from(!buf.iter().all(|b| b.is_ascii_whitespace()));
    }
}

/// The data records of a gzip-compressed CSV file (the header not counted),
/// decompressing all of it: such a file cannot be entered in the middle, so a part of
/// it is found by counting first.
pub fn count_gzip_records(path: &Path) -> Result<usize> {
    let file = open(path)?;
    let mut lines = BufReader::new(flate2::read::MultiGzDecoder::new(file));
    let mut header = Vec::new();
    read_record(&mut lines, &mut header)
        .map_err(|e| Error::data(path, format!("cannot decompress (gzip): {e}")))?;
    count_records(path, &mut lines)
}

/// The first record start at or after byte `at` of the body `body..size`: `at` itself
/// if a line starts there, else the byte after the next line break (`size` if none).
fn record_start(path: &Path, file: &mut File, body: u64, size: u64, at: u64) -> Result<u64> {
    if at <= body {
        return Ok(body);
    }
    if at >= size {
        return Ok(size);
    }
    let fail = |e: std::io::Error| Error::data(path, format!("cannot read: {e}"));
    file.seek(SeekFrom::Start(at - 1)).map_err(fail)?;
    let mut skipped = Vec::new();
    let got = BufReader::new(&mut *file)
        .read_until(b'\n', &mut skipped)
        .map_err(fail)?;
    Ok((at - 1 + got as u64).min(size))
}
