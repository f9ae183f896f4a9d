//! Loading a large file with progress: read a block of rows at a time
//! (`DataFile::for_each_chunk`), report the rows read after each block, and stack the
//! blocks into the one frame a whole-file read would give. A CSV block infers its
//! column types from its own rows, so blocks can disagree (integers here, decimals
//! there, text in one): such a column is made Float64 when every block read it as
//! numbers, else text, which the loader then parses cell by cell as it would a
//! whole file's text column (and names the bad cell's row).

use super::data_file::DataFile;
use super::stream::Chunk;
use crate::error::{Error, Result};
use polars_core::prelude::*;
use std::path::{Path, PathBuf};

/// Files at least this large are read in blocks, reporting progress.
pub const BLOCK_READ_BYTES: u64 = 8 << 20;
/// Rows per block.
pub const BLOCK_ROWS: usize = 100_000;

/// How far loading a data set has come.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadProgress {
    /// The file being read.
    pub file: PathBuf,
    /// Data rows of it read so far.
    pub rows: usize,
    /// How far through the file, 0 to 1 (rows of a Parquet file, bytes of a CSV).
    pub fraction: f64,
    /// Every file is read; the columns are being checked and converted.
    pub checking: bool,
}

/// The whole file as one frame, read a block of rows at a time; `report` hears after
/// every block.
pub fn read_frame(file: &DataFile, report: &mut dyn FnMut(LoadProgress)) -> Result<DataFrame> {
    let path = file.path();
    let mut frames: Vec<DataFrame> = Vec::new();
    let mut rows = 0;
    file.for_each_chunk(BLOCK_ROWS, &mut |chunk: Chunk| {
        rows = chunk.first + chunk.frame.height();
        frames.push(chunk.frame);
        report(LoadProgress {
            file: path.to_path_buf(),
            rows,
            fraction: chunk.fraction,
            checking: false,
        });
        Ok(())
    })?;
    stack(path, frames)
}

/// One frame from blocks with the same columns, their types made to agree.
pub(crate) fn stack(path: &Path, mut frames: Vec<DataFrame>) -> Result<DataFrame> {
    let fail = |e: PolarsError| Error::data(path, format!("cannot read: {e}"));
    let Some(first) = frames.first() else {
        return Err(Error::data(path, "the file has no data rows"));
    };
    let names: Vec<PlSmallStr> = first.get_column_names_owned();
    for (k, frame) in frames.iter().enumerate().skip(1) {
        if frame.get_column_names_owned() != names {
            return Err(Error::data(
                path,
                format!(
                    "rows from {} on have other columns than the header",
                    k * BLOCK_ROWS + 1
                ),
            ));
        }
    }
    for name in &names {
        let types: Vec<DataType> = frames
            .iter()
            .map(|f| f.column(name).map(|c| c.dtype().clone()))
            .collect::<PolarsResult<_>>()
            .map_err(fail)?;
        if types.windows(2).all(|w| w[0] == w[1]) {
            continue;
        }
        let numeric = types
            .iter()
            .all(|t| t.is_primitive_numeric() || t.is_bool() || t.is_null());
        let to = if numeric {
            DataType::Float64
        } else {
            DataType::String
        };
        for frame in &mut frames {
            let cast = frame.column(name).map_err(fail)?.cast(&to).map_err(fail)?;
            frame.with_column(cast).map_err(fail)?;
        }
    }
    let mut blocks = frames.into_iter();
    let mut out = blocks.next().unwrap_or_default();
    for frame in blocks {
        out.vstack_mut_owned(frame).map_err(fail)?;
    }
    Ok(out)
}
