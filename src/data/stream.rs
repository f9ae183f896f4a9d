//! Reading a file a chunk of rows at a time: prediction inputs, so that predicting
//! millions of rows needs memory for one chunk only, and large data sets, so that
//! loading one can report its progress: Parquet by row windows (polars reads only the
//! row groups a window touches), CSV by lines (the header, then `rows` lines at a
//! time, each chunk parsed by polars as a small CSV of its own). Every chunk is checked
//! as a whole file would be, with errors naming the rows of the file.

use super::guard::guarded;
use super::parquet_check::CheckedParquet;
use crate::error::{Error, Result};
use polars_core::prelude::*;
use polars_io::prelude::*;
use std::cell::Cell;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read, Seek};
use std::path::Path;
use std::rc::Rc;

/// One block of rows of a file, as polars read it.
pub struct Chunk {
    /// The block's first data row (0-based).
    pub first: usize,
    pub frame: DataFrame,
    /// How far through the file the block ends, in 0..=1 (rows of a Parquet file,
    /// bytes of a CSV file).
    pub fraction: f64,
    /// Of a plain CSV file, the byte offset of the block's first record (where
    /// [`csv_block_at`] reads it again); None for Parquet and compressed CSV.
    pub at_byte: Option<u64>,
}

impl Chunk {
    /// The rows of the block.
    pub(crate) fn rows(&self) -> usize {
        self.frame.height()
    }
}

/// Open a data file, refusing a directory or an empty file with a message naming it.
pub fn open(path: &Path) -> Result<File> {
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

/// The blocks of a checked Parquet file (see [`super::data_file::DataFile::for_each_chunk`]).
pub(super) fn parquet_chunks(
    path: &Path,
    checked: &CheckedParquet,
    rows: usize,
    each: &mut dyn FnMut(Chunk) -> Result<()>,
) -> Result<usize> {
    let total = checked.rows;
    if total == 0 {
        return Err(Error::data(path, "the file has no data rows"));
    }
    for first in (0..total).step_by(rows) {
        let take = rows.min(total - first);
        let frame = parquet_rows(path, checked, first, take)?;
        each(Chunk {
            first,
            frame,
            fraction: (first + take) as f64 / total as f64,
            at_byte: None,
        })?;
    }
    Ok(total)
}

/// Rows `first..first + take` of a checked Parquet file (polars reads only the row
/// groups they touch); a damaged file is an error naming it, never a panic.
pub(crate) fn parquet_rows(
    path: &Path,
    checked: &CheckedParquet,
    first: usize,
    take: usize,
) -> Result<DataFrame> {
    let damaged = |what: String| {
        Error::data(
            path,
            format!("cannot read as Parquet: the file is damaged ({what})"),
        )
    };
    let file = open(path)?;
    let frame = guarded(|| checked.read(file, Some((first, take))))
        .map_err(damaged)?
        .map_err(|e| Error::data(path, polars_failure(false, &e)))?;
    if frame.height() != take {
        return Err(damaged(format!(
            "rows {}..{} were asked for, {} were read",
            first + 1,
            first + take,
            frame.height()
        )));
    }
    Ok(frame)
}

/// The blocks of a CSV file (see [`super::data_file::DataFile::for_each_chunk`]).
pub fn csv_chunks(
    path: &Path,
    rows: usize,
    each: &mut dyn FnMut(Chunk) -> Result<()>,
) -> Result<usize> {
    let read_err = |e: std::io::Error| Error::data(path, format!("cannot read: {e}"));
    let mut file = open(path)?;
    let size = file.metadata().map_or(0, |m| m.len()).max(1);
    let gzip = csv_compression(path, &mut file)? == Compression::Gzip;
    let taken = Rc::new(Cell::new(0u64));
    let counted = Counted {
        inner: file,
        taken: Rc::clone(&taken),
    };
    let mut lines: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(counted)))
    } else {
        Box::new(BufReader::new(counted))
    };
    let mut header = Vec::new();
    let mut consumed = read_record(&mut lines, &mut header).map_err(read_err)? as u64;
    let mut first = 0;
    loop {
        // where this block starts, for reading it again (plain files only)
        let at_byte = (!gzip).then_some(consumed);
        let Some((frame, count, got)) = csv_block(path, &mut lines, &header, rows)? else {
            break;
        };
        consumed += got;
        each(Chunk {
            first,
            frame,
            // a plain file: the bytes of the records read; a compressed one: the bytes
            // the decompressor has taken (it reads ahead, so this runs a little early)
            fraction: (if gzip { taken.get() } else { consumed } as f64 / size as f64).min(1.0),
            at_byte,
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

/// The next block of at most `rows` records of `lines` (blank lines are not rows), as
/// polars reads it under `header`: the frame, its rows and the bytes read; None at the
/// end.
pub(crate) fn csv_block(
    path: &Path,
    lines: &mut dyn BufRead,
    header: &[u8],
    rows: usize,
) -> Result<Option<(DataFrame, usize, u64)>> {
    let read_err = |e: std::io::Error| Error::data(path, format!("cannot read: {e}"));
    let mut buf = header.to_vec();
    if !buf.ends_with(b"\n") {
        buf.push(b'\n');
    }
    let (mut count, mut consumed) = (0, 0u64);
    while count < rows {
        let before = buf.len();
        let got = read_record(lines, &mut buf).map_err(read_err)?;
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
        return Ok(None);
    }
    let frame =
        read_csv_from(Cursor::new(buf)).map_err(|e| Error::data(path, csv_failure(path, &e)))?;
    Ok(Some((frame, count, consumed)))
}

/// The `rows` rows of a plain CSV file from byte `at` (a block's `at_byte`, the start
/// of a record), rows `first..` of the file, read as [`csv_chunks`] reads its blocks
/// ([`csv_block`]); fewer rows there than before is an error (the file changed).
pub(crate) fn csv_block_at(path: &Path, first: usize, at: u64, rows: usize) -> Result<Chunk> {
    let read_err = |e: std::io::Error| Error::data(path, format!("cannot read: {e}"));
    let file = open(path)?;
    let size = file.metadata().map_or(0, |m| m.len()).max(1);
    let mut lines = BufReader::new(file);
    let mut header = Vec::new();
    read_record(&mut lines, &mut header).map_err(read_err)?;
    lines.seek(std::io::SeekFrom::Start(at)).map_err(read_err)?;
    match csv_block(path, &mut lines, &header, rows)? {
        Some((frame, count, got)) if count == rows => Ok(Chunk {
            first,
            frame,
            fraction: ((at + got) as f64 / size as f64).min(1.0),
            at_byte: Some(at),
        }),
        got => Err(Error::data(
            path,
            format!(
                "the file changed while it was read: {rows} rows were expected from byte \
                 {at}, {} were found",
                got.map_or(0, |g| g.1)
            ),
        )),
    }
}

/// Append one CSV record to `buf`: a line, or several while a quoted field holds
/// line breaks (an odd number of `"` so far; an escaped quote `""` keeps the parity),
/// so that a block never ends inside a field. Returns the bytes read (0 at the end).
pub(crate) fn read_record(
    lines: &mut (impl BufRead + ?Sized),
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let (start, mut total, mut open) = (buf.len(), 0, false);
    loop {
        let before = buf.len();
        let got = lines.read_until(b'\n', buf)?;
        total += got;
        open ^= buf[before..].iter().filter(|&&b| b == b'"').count() % 2 == 1;
        if got == 0 || !open || !buf[start..].ends_with(b"\n") {
            return Ok(total);
        }
    }
}

/// A reader that counts the bytes taken from it (how far through a compressed file a
/// decompressing reader has come).
struct Counted<R> {
    inner: R,
    taken: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.taken.set(self.taken.get() + n as u64);
        Ok(n)
    }
}

/// How the bytes of a CSV file are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compression {
    Plain,
    /// gzip (`.csv.gz`), read through a decompressing reader.
    Gzip,
}

/// A CSV file's compression, from its first bytes whatever its name (the file is left
/// at its start). Formats sgpw does not decompress are refused with what to do.
pub(crate) fn csv_compression(path: &Path, file: &mut File) -> Result<Compression> {
    let mut magic = [0u8; 6];
    let mut got = 0;
    while got < magic.len() {
        match file.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::data(path, format!("cannot read: {e}"))),
        }
    }
    file.rewind()
        .map_err(|e| Error::data(path, format!("cannot read: {e}")))?;
    let magic = &magic[..got];
    let other = [
        (&b"\x28\xb5\x2f\xfd"[..], "zstd", "zstd -d"),
        (&b"BZh"[..], "bzip2", "bunzip2"),
        (&b"\xfd7zXZ\x00"[..], "xz", "unxz"),
        (&b"PK\x03\x04"[..], "zip", "unzip"),
    ];
    if magic.starts_with(&[0x1f, 0x8b]) {
        return Ok(Compression::Gzip);
    }
    if let Some((_, name, tool)) = other.iter().find(|(m, _, _)| magic.starts_with(m)) {
        return Err(Error::data(
            path,
            format!(
                "the file is compressed with {name}; sgpw reads plain or gzip-compressed \
                 CSV (.csv, .csv.gz) and Parquet: decompress it first (`{tool}`) or \
                 recompress it with gzip"
            ),
        ));
    }
    Ok(Compression::Plain)
}

/// A whole CSV file as polars reads it: a plain file directly, a gzip-compressed one
/// decompressed into memory first.
pub fn read_csv_file(path: &Path, mut file: File) -> Result<PolarsResult<DataFrame>> {
    match csv_compression(path, &mut file)? {
        Compression::Plain => Ok(read_csv_from(file)),
        Compression::Gzip => {
            let mut bytes = Vec::new();
            flate2::read::MultiGzDecoder::new(file)
                .read_to_end(&mut bytes)
                .map_err(|e| {
                    Error::data(
                        path,
                        format!("cannot decompress (gzip): {e}; is the file cut short?"),
                    )
                })?;
            Ok(read_csv_from(Cursor::new(bytes)))
        }
    }
}

/// Cells read as missing values besides the empty cell and NaN (which parses as a
/// number): what R, pandas (its default `na_values`), spreadsheets and the UCI
/// repository's files (`?`) write for a value that is not there.
pub(crate) const NULL_TOKENS: &[&str] = &[
    "NA", "N/A", "n/a", "#N/A", "<NA>", "null", "NULL", "None", "?", "-NaN", "-nan",
];

/// Polars' own reason, without its advice about polars options the user cannot set.
pub(crate) fn polars_failure(csv: bool, e: &PolarsError) -> String {
    match e {
        PolarsError::NoData(_) => {
            "the file is empty (a header row and at least one data row are needed)".into()
        }
        _ => {
            let text = e.to_string();
            let reason = text.lines().next().unwrap_or("").trim();
            format!(
                "cannot read as {}: {reason}",
                if csv { "CSV" } else { "Parquet" }
            )
        }
    }
}

/// Why polars could not read a CSV file: its own reason, and for a row with more
/// fields than the header (which polars reports without a line) the first such line.
pub(crate) fn csv_failure(path: &Path, e: &PolarsError) -> String {
    let reason = polars_failure(true, e);
    if !e.to_string().contains("more fields") {
        return reason;
    }
    match first_long_record(path) {
        Some((line, fields, header)) => format!(
            "line {line} has {fields} fields but the header has {header} (a stray comma, or \
             a value holding a comma that is not in double quotes)"
        ),
        None => reason,
    }
}

/// (line, its fields, the header's fields) of the first record with more fields than
/// the header, counting commas outside double quotes.
fn first_long_record(path: &Path) -> Option<(usize, usize, usize)> {
    let mut file = open(path).ok()?;
    let gzip = csv_compression(path, &mut file).ok()? == Compression::Gzip;
    let mut lines: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    let fields = |record: &[u8]| {
        let mut quoted = false;
        1 + record
            .iter()
            .filter(|&&b| {
                quoted ^= b == b'"';
                b == b',' && !quoted
            })
            .count()
    };
    let mut record = Vec::new();
    let mut line = 1;
    read_record(&mut lines, &mut record).ok()?;
    let header = fields(&record);
    loop {
        line += record.iter().filter(|&&b| b == b'\n').count();
        record.clear();
        if read_record(&mut lines, &mut record).ok()? == 0 {
            return None;
        }
        let n = fields(&record);
        if n > header {
            return Some((line, n, header));
        }
    }
}

/// A CSV with a header from any source polars can read (a file, or a chunk in memory),
/// the schema inferred over all rows so that one bad cell anywhere makes its column text.
pub(crate) fn read_csv_from<R: polars_io::mmap::MmapBytesReader>(
    source: R,
) -> PolarsResult<DataFrame> {
    let nulls = NullValues::AllColumns(NULL_TOKENS.iter().map(|s| (*s).into()).collect());
    CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(None)
        .map_parse_options(|o| o.with_null_values(Some(nulls.clone())))
        .into_reader_with_file_handle(source)
        .finish()
}
