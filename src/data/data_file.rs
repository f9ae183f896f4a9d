//! A data file whose format is decided once, when it is opened: Parquet by extension
//! (`.parquet`, `.pq`), its footer read and checked before anything decodes it, and
//! everything else CSV. Whoever reads a file's rows holds a [`DataFile`] and asks it
//! for them, so no caller chooses between the formats, and the rows reach code outside
//! `data/` only as checked columns of numbers (nothing outside `data/` sees polars).

use super::parquet_check::{self, CheckedParquet};
use super::stream::{Chunk, Compression, csv_block_at, csv_chunks, csv_compression, open};
use super::stream::{parquet_chunks, parquet_rows};
use crate::error::{Error, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

/// A CSV or Parquet data file.
pub struct DataFile {
    path: PathBuf,
    /// A Parquet file's checked footer; None for a CSV file.
    parquet: Option<CheckedParquet>,
}

/// Parquet by extension (`.parquet`, `.pq`); everything else is read as CSV.
fn is_parquet(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet") || e.eq_ignore_ascii_case("pq"))
}

impl DataFile {
    /// The file at `path`: a Parquet file is opened and its footer checked; a CSV file
    /// is not read until its rows are.
    pub fn open(path: &Path) -> Result<DataFile> {
        match is_parquet(path) {
            true => DataFile::with_file(path, &open(path)?),
            false => Ok(DataFile {
                path: path.to_path_buf(),
                parquet: None,
            }),
        }
    }

    /// [`DataFile::open`] with the file already open (a Parquet footer is read from it).
    pub(crate) fn with_file(path: &Path, file: &File) -> Result<DataFile> {
        let parquet = match is_parquet(path) {
            true => Some(parquet_check::check(path, file)?),
            false => None,
        };
        Ok(DataFile {
            path: path.to_path_buf(),
            parquet,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// A Parquet file's checked footer; None for a CSV file.
    pub(crate) fn parquet(&self) -> Option<&CheckedParquet> {
        self.parquet.as_ref()
    }

    /// The checked footer of a Parquet file, for a table that outlives the file.
    pub(crate) fn into_parquet(self) -> Option<CheckedParquet> {
        self.parquet
    }

    /// Whether the file is read as CSV.
    pub(crate) fn is_csv(&self) -> bool {
        self.parquet.is_none()
    }

    /// Of a CSV file, how its bytes are stored (read from its first bytes); None for
    /// Parquet.
    pub(crate) fn csv_compression(&self) -> Result<Option<Compression>> {
        match self.parquet {
            Some(_) => Ok(None),
            None => csv_compression(&self.path, &mut open(&self.path)?).map(Some),
        }
    }

    /// The rows of each of a Parquet file's row groups; None for a CSV file.
    pub(crate) fn row_groups(&self) -> Option<Vec<usize>> {
        self.parquet.as_ref().map(CheckedParquet::row_group_rows)
    }

    /// Call `each` for consecutive blocks of at most `rows` rows, every column as
    /// polars reads it (of a Parquet file, the columns sgpw can use). Returns the
    /// number of rows read.
    pub(crate) fn for_each_chunk(
        &self,
        rows: usize,
        each: &mut dyn FnMut(Chunk) -> Result<()>,
    ) -> Result<usize> {
        let rows = rows.max(1);
        match &self.parquet {
            None => csv_chunks(&self.path, rows, each),
            Some(checked) => parquet_chunks(&self.path, checked, rows, each),
        }
    }

    /// The `rows` rows from row `first` read again: of a Parquet file by their row
    /// numbers (polars reads only the row groups they touch), of a plain CSV file from
    /// the byte where an earlier chunk found them (its `at_byte`), which a Parquet
    /// file's chunk does not have.
    pub(crate) fn rows_at(&self, first: usize, rows: usize, at_byte: Option<u64>) -> Result<Chunk> {
        let path = &self.path;
        match (&self.parquet, at_byte) {
            (Some(checked), _) => Ok(Chunk {
                first,
                frame: parquet_rows(path, checked, first, rows)?,
                fraction: (first + rows) as f64 / checked.rows.max(1) as f64,
                at_byte: None,
            }),
            (None, Some(at)) => csv_block_at(path, first, at, rows),
            (None, None) => Err(Error::data(path, "internal: a row block of a CSV file")),
        }
    }
}
