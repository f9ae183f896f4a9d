//! Checking a Parquet file before polars decodes it. polars-parquet trusts what a file
//! says: a damaged footer or page header can make it reserve what a flipped bit claims
//! (2⁶¹ bytes, an abort that no `catch_unwind` stops; polars#15342) or index past a
//! buffer. So sgpw first reads the footer and every page header itself — with the
//! Thrift parsers polars uses, but bounded — and refuses what cannot be true: counts
//! that disagree, offsets and sizes outside the file, sizes beyond the memory there is,
//! types and encodings sgpw cannot use. polars then gets a footer re-written from
//! what passed (no statistics, indexes or key-value metadata, which polars would
//! otherwise parse; sgpw reads the one key it needs, pandas' index columns, itself) and decodes only the columns sgpw can use.
//! Pages are walked in `parquet_pages`, their bytes checked in `parquet_values`;
//! docs/faults.md lists every check.

use super::parquet_pages::{PageColumn, PageWalk, THRIFT_UNITS_PER_BYTE, gigabytes, read_exact_at};
use crate::error::{Error, Result};
use polars_core::prelude::*;
use polars_io::prelude::*;
use polars_parquet::parquet::compression::Compression;
use polars_parquet::parquet::metadata::FileMetadata;
use polars_parquet_format as pq;
use polars_parquet_format::thrift::protocol::{TCompactInputProtocol, TCompactOutputProtocol};
use std::fs::File;
use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

const MAGIC: &[u8; 4] = b"PAR1";

/// A column sgpw does not decode, and why: its Parquet type is not a number or text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Unusable {
    pub name: String,
    /// The Parquet type, for the message: "INT96 (a timestamp)".
    pub kind: String,
}

/// A Parquet file whose footer and page headers passed the checks.
pub(crate) struct CheckedParquet {
    /// polars' metadata, parsed from the re-written footer.
    metadata: Arc<FileMetadata>,
    pub rows: usize,
    /// Every column, in file order.
    pub names: Vec<String>,
    /// The columns pandas wrote from a DataFrame's index ([`pandas_index_columns`]).
    pub index_columns: Vec<String>,
    /// The columns sgpw reads (numbers, booleans, text), in file order.
    usable: Vec<String>,
    pub unusable: Vec<Unusable>,
    /// Bytes of memory the usable columns need once decoded (polars' arrays).
    decoded_bytes: u64,
}

impl CheckedParquet {
    /// The usable columns of rows `first..first + rows` (all rows if `None`).
    pub fn read(&self, file: File, slice: Option<(usize, usize)>) -> PolarsResult<DataFrame> {
        let mut reader = ParquetReader::new(file)
            .with_columns(Some(self.usable.clone()))
            .with_slice(slice);
        reader.set_metadata(self.metadata.clone());
        reader.finish()
    }

    /// The rows of each row group, in file order (the blocks a streamed fit reads).
    pub fn row_group_rows(&self) -> Vec<usize> {
        self.metadata
            .row_groups
            .iter()
            .map(|rg| rg.num_rows())
            .collect()
    }

    /// Refuse a file whose usable columns would not fit in the memory available now
    /// (loading converts them to numbers as well: twice what polars needs).
    pub fn check_memory(&self, path: &Path) -> Result<()> {
        let need = self.decoded_bytes.saturating_mul(2);
        match available_memory() {
            Some(have) if need > have => Err(Error::data(
                path,
                format!(
                    "the file says it holds {} rows of {} column(s), about {} once read, more \
                     than the {} of memory available: the file is damaged, or too large to \
                     load whole",
                    self.rows,
                    self.usable.len(),
                    gigabytes(need),
                    gigabytes(have)
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// Check the Parquet file at `path` (open as `file`): magic bytes, footer, the row
/// groups and column chunks it lists, and the header of every page of every column
/// sgpw will read.
pub(crate) fn check(path: &Path, file: &File) -> Result<CheckedParquet> {
    let damaged = |what: String| {
        Error::data(
            path,
            format!("cannot read as Parquet: the file is damaged: {what}"),
        )
    };
    let io = |e: std::io::Error| Error::data(path, format!("cannot read: {e}"));
    let len = file.metadata().map_err(io)?.len();
    if len < 12 {
        return Err(damaged(format!(
            "it has {len} bytes, and a Parquet file has at least 12 (PAR1, a footer, its \
             length, PAR1)"
        )));
    }
    let mut start = [0u8; 4];
    read_exact_at(file, 0, &mut start).map_err(io)?;
    if &start != MAGIC {
        return Err(Error::data(
            path,
            "cannot read as Parquet: the file does not start with PAR1, so it is not a \
             Parquet file (or its first bytes are damaged)",
        ));
    }
    let mut tail = [0u8; 8];
    read_exact_at(file, len - 8, &mut tail).map_err(io)?;
    if &tail[4..] != MAGIC {
        return Err(damaged(
            "it does not end with PAR1: the file is cut short, or its last bytes are damaged"
                .into(),
        ));
    }
    let footer_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if footer_len == 0 || footer_len > len - 12 {
        return Err(damaged(format!(
            "the footer length at its end says {footer_len} bytes, but the file has {} \
             between its first PAR1 and that length: it is cut short, or the length is damaged",
            len - 12
        )));
    }
    let footer_at = len - 8 - footer_len;
    let mut footer = vec![0u8; footer_len as usize];
    read_exact_at(file, footer_at, &mut footer).map_err(io)?;
    let meta = parse_footer(&footer).map_err(damaged)?;
    let layout = Layout::of(&meta, footer_at).map_err(damaged)?;
    let mut pages = PageWalk {
        file,
        budget: available_memory(),
    };
    for (g, rg) in meta.row_groups.iter().enumerate() {
        for (c, chunk) in rg.columns.iter().enumerate() {
            let column = &layout.columns[c];
            if column.usable {
                let page = PageColumn {
                    physical: column.physical,
                    optional: column.optional,
                };
                pages.walk(&page, chunk, rg.num_rows).map_err(|e| {
                    damaged(format!(
                        "column '{}' (row group {}): {e}",
                        column.name,
                        g + 1
                    ))
                })?;
            }
        }
    }
    if !layout.columns.iter().any(|c| c.usable) {
        let kinds: Vec<String> = layout
            .columns
            .iter()
            .map(|c| format!("'{}' is {}", c.name, c.unusable.as_deref().unwrap_or("?")))
            .collect();
        return Err(Error::data(
            path,
            format!(
                "no column holds numbers or text, which sgpw needs: {}",
                kinds.join(", ")
            ),
        ));
    }
    let metadata = polars_metadata(&meta).map_err(damaged)?;
    let names = layout.columns.iter().map(|c| c.name.clone()).collect();
    let usable = layout
        .columns
        .iter()
        .filter(|c| c.usable)
        .map(|c| c.name.clone())
        .collect();
    let unusable = layout
        .columns
        .iter()
        .filter_map(|c| {
            c.unusable.clone().map(|kind| Unusable {
                name: c.name.clone(),
                kind,
            })
        })
        .collect();
    let index_columns = pandas_index_columns(&meta);
    Ok(CheckedParquet {
        metadata: Arc::new(metadata),
        rows: layout.rows,
        names,
        index_columns,
        usable,
        unusable,
        decoded_bytes: layout.decoded_bytes,
    })
}

/// The columns a file written by pandas (through pyarrow) holds a DataFrame's index
/// in: the `index_columns` of the JSON under the footer's key-value key `pandas`. A
/// named index keeps its name (`longitude` after `set_index`), an unnamed one is
/// `__index_level_0__`; a RangeIndex is stored as a description (a JSON object), not a
/// column, and is skipped. No such key, or JSON that does not read: no index columns.
fn pandas_index_columns(meta: &pq::FileMetaData) -> Vec<String> {
    let Some(json) = meta
        .key_value_metadata
        .iter()
        .flatten()
        .find(|kv| kv.key == "pandas")
        .and_then(|kv| kv.value.as_deref())
    else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else {
        return Vec::new();
    };
    value
        .get("index_columns")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect()
}

/// The footer as Thrift, read with a bound on what the reader may reserve, and
/// required to end exactly where the footer ends.
fn parse_footer(footer: &[u8]) -> std::result::Result<pq::FileMetaData, String> {
    let mut cursor = Cursor::new(footer);
    let limit = footer.len().saturating_mul(THRIFT_UNITS_PER_BYTE) + 1024;
    let meta = {
        let mut prot = TCompactInputProtocol::new(&mut cursor, limit);
        pq::FileMetaData::read_from_in_protocol(&mut prot)
            .map_err(|e| format!("its footer (the file's metadata) cannot be read ({e})"))?
    };
    if cursor.position() != footer.len() as u64 {
        return Err(format!(
            "its footer ends after {} of its {} bytes",
            cursor.position(),
            footer.len()
        ));
    }
    Ok(meta)
}

/// One column of the schema, as sgpw sees it.
struct ColumnInfo {
    name: String,
    physical: pq::Type,
    optional: bool,
    /// Why sgpw does not read it (its type), or `None` if it does.
    unusable: Option<String>,
    usable: bool,
    /// Bytes a decoded value takes in polars (views for text).
    width: u64,
}

/// What the footer says, checked for consistency.
struct Layout {
    rows: usize,
    columns: Vec<ColumnInfo>,
    decoded_bytes: u64,
}

impl Layout {
    fn of(meta: &pq::FileMetaData, footer_at: u64) -> std::result::Result<Layout, String> {
        if meta.encryption_algorithm.is_some() {
            return Err("it is encrypted, which sgpw does not read".into());
        }
        let columns = schema_columns(&meta.schema)?;
        let rows = usize::try_from(meta.num_rows)
            .map_err(|_| format!("it says it has {} rows", meta.num_rows))?;
        let mut total: u64 = 0;
        let mut decoded: u64 = 0;
        for (g, rg) in meta.row_groups.iter().enumerate() {
            let at = |what: String| format!("row group {} {what}", g + 1);
            let rg_rows = u64::try_from(rg.num_rows)
                .map_err(|_| at(format!("says it has {} rows", rg.num_rows)))?;
            total = total.saturating_add(rg_rows);
            if rg.columns.len() != columns.len() {
                return Err(at(format!(
                    "has {} column chunk(s) for the schema's {} column(s)",
                    rg.columns.len(),
                    columns.len()
                )));
            }
            for (chunk, column) in rg.columns.iter().zip(&columns) {
                check_chunk(chunk, column, rg_rows, footer_at)
                    .map_err(|e| format!("column '{}' (row group {}): {e}", column.name, g + 1))?;
                if column.usable {
                    let meta = chunk
                        .meta_data
                        .as_ref()
                        .map_or(0, |m| m.total_uncompressed_size);
                    let text = if column.physical == pq::Type::BYTE_ARRAY {
                        meta.max(0) as u64
                    } else {
                        0
                    };
                    let validity = if column.optional { rg_rows / 8 + 1 } else { 0 };
                    decoded = decoded
                        .saturating_add(rg_rows.saturating_mul(column.width))
                        .saturating_add(text)
                        .saturating_add(validity);
                }
            }
        }
        if total != rows as u64 {
            return Err(format!(
                "it says it has {rows} rows, but its {} row group(s) hold {total}",
                meta.row_groups.len()
            ));
        }
        Ok(Layout {
            rows,
            columns,
            decoded_bytes: decoded,
        })
    }
}

/// The columns of a flat schema (a root group of leaf columns), each classified.
fn schema_columns(schema: &[pq::SchemaElement]) -> std::result::Result<Vec<ColumnInfo>, String> {
    let Some((root, leaves)) = schema.split_first() else {
        return Err("its schema is empty".into());
    };
    let children = root.num_children.unwrap_or(0);
    if children < 1 || children as usize != leaves.len() {
        return Err(format!(
            "its schema's root says it has {children} column(s), but {} follow it{}",
            leaves.len(),
            if leaves.iter().any(|l| l.num_children.is_some_and(|n| n > 0)) {
                " (nested columns: sgpw reads flat tables of numbers)"
            } else {
                ""
            }
        ));
    }
    let mut out: Vec<ColumnInfo> = Vec::with_capacity(leaves.len());
    for leaf in leaves {
        let name = leaf.name.clone();
        if out.iter().any(|c| c.name == name) {
            return Err(format!("column name '{name}' appears twice in its schema"));
        }
        if leaf.num_children.is_some_and(|n| n > 0) || leaf.type_.is_none() {
            return Err(format!(
                "column '{name}' is a nested group (a struct or list), which sgpw cannot \
                 read: write the file with flat columns"
            ));
        }
        let physical = leaf.type_.unwrap_or(pq::Type::BOOLEAN);
        let optional = match leaf.repetition_type {
            Some(pq::FieldRepetitionType::REQUIRED) => false,
            Some(pq::FieldRepetitionType::OPTIONAL) | None => true,
            _ => {
                return Err(format!(
                    "column '{name}' is a repeated (list) column, which sgpw cannot read: \
                     write the file with flat columns"
                ));
            }
        };
        let (unusable, width) = classify(leaf);
        out.push(ColumnInfo {
            name,
            physical,
            optional,
            usable: unusable.is_none(),
            unusable,
            width,
        });
    }
    Ok(out)
}

/// Whether sgpw reads a leaf column (numbers, booleans and text; `None`) or why not
/// (its type, for the message), and the bytes a decoded value takes.
fn classify(leaf: &pq::SchemaElement) -> (Option<String>, u64) {
    use pq::ConvertedType as C;
    use pq::LogicalType as L;
    let physical = leaf.type_.unwrap_or(pq::Type::BOOLEAN);
    let logical = leaf.logical_type.as_ref();
    let converted = leaf.converted_type;
    let no = |what: &str| (Some(what.to_string()), 0);
    match physical {
        pq::Type::BOOLEAN if logical.is_none() && converted.is_none() => (None, 1),
        pq::Type::FLOAT if logical.is_none() && converted.is_none() => (None, 4),
        pq::Type::DOUBLE if logical.is_none() && converted.is_none() => (None, 8),
        pq::Type::INT32 => match (logical, converted) {
            (None, None) => (None, 4),
            (Some(L::INTEGER(t)), _) if matches!(t.bit_width, 8 | 16 | 32) => (None, 4),
            (None, Some(c))
                if [
                    C::INT_8,
                    C::INT_16,
                    C::INT_32,
                    C::UINT_8,
                    C::UINT_16,
                    C::UINT_32,
                ]
                .contains(&c) =>
            {
                (None, 4)
            }
            (Some(L::DATE(_)), _) | (None, Some(C::DATE)) => no("INT32 (a date)"),
            (Some(L::TIME(_)), _) | (None, Some(C::TIME_MILLIS)) => no("INT32 (a time of day)"),
            (Some(L::DECIMAL(_)), _) | (None, Some(C::DECIMAL)) => no("INT32 (a decimal)"),
            _ => no("INT32 with an annotation sgpw does not read"),
        },
        pq::Type::INT64 => match (logical, converted) {
            (None, None) => (None, 8),
            (Some(L::INTEGER(t)), _) if t.bit_width == 64 => (None, 8),
            (None, Some(C::INT_64 | C::UINT_64)) => (None, 8),
            (Some(L::TIMESTAMP(_)), _)
            | (None, Some(C::TIMESTAMP_MILLIS | C::TIMESTAMP_MICROS)) => no("INT64 (a timestamp)"),
            (Some(L::TIME(_)), _) | (None, Some(C::TIME_MICROS)) => no("INT64 (a time of day)"),
            (Some(L::DECIMAL(_)), _) | (None, Some(C::DECIMAL)) => no("INT64 (a decimal)"),
            _ => no("INT64 with an annotation sgpw does not read"),
        },
        pq::Type::BYTE_ARRAY => match (logical, converted) {
            (Some(L::STRING(_)), _) | (None, Some(C::UTF8)) => (None, 16),
            (Some(L::JSON(_)), _) | (None, Some(C::JSON)) => no("BYTE_ARRAY (JSON)"),
            (Some(L::DECIMAL(_)), _) | (None, Some(C::DECIMAL)) => no("BYTE_ARRAY (a decimal)"),
            (Some(L::ENUM(_)), _) | (None, Some(C::ENUM)) => no("BYTE_ARRAY (an enum)"),
            _ => no("BYTE_ARRAY (binary, not text)"),
        },
        pq::Type::INT96 => no("INT96 (a timestamp)"),
        pq::Type::FIXED_LEN_BYTE_ARRAY => match (logical, converted) {
            (Some(L::DECIMAL(_)), _) | (None, Some(C::DECIMAL)) => {
                no("FIXED_LEN_BYTE_ARRAY (a decimal)")
            }
            (Some(L::FLOAT16(_)), _) => no("FIXED_LEN_BYTE_ARRAY (a 16-bit float)"),
            (Some(L::UUID(_)), _) => no("FIXED_LEN_BYTE_ARRAY (a UUID)"),
            _ => no("FIXED_LEN_BYTE_ARRAY (fixed-length bytes)"),
        },
        pq::Type::BOOLEAN | pq::Type::FLOAT | pq::Type::DOUBLE => {
            no("a number with an annotation sgpw does not read")
        }
        other => (Some(format!("unknown physical type {}", other.0)), 0),
    }
}

/// A column chunk's metadata agrees with its column, its row group and the file.
fn check_chunk(
    chunk: &pq::ColumnChunk,
    column: &ColumnInfo,
    rows: u64,
    footer_at: u64,
) -> std::result::Result<(), String> {
    if chunk.file_path.is_some() {
        return Err("its data is in another file, which sgpw does not read".into());
    }
    if chunk.crypto_metadata.is_some() || chunk.encrypted_column_metadata.is_some() {
        return Err("it is encrypted, which sgpw does not read".into());
    }
    let Some(m) = &chunk.meta_data else {
        return Err("its metadata is missing".into());
    };
    if m.type_ != column.physical {
        return Err(format!(
            "its chunk has physical type {}, but the schema says {}",
            m.type_.0, column.physical.0
        ));
    }
    if m.path_in_schema.len() != 1 || m.path_in_schema[0] != column.name {
        return Err(format!(
            "its chunk is for column {:?}",
            m.path_in_schema.join(".")
        ));
    }
    if Compression::try_from(m.codec).is_err() || m.codec == pq::CompressionCodec::LZO {
        return Err(format!(
            "it is compressed with codec {}, which sgpw cannot decompress",
            m.codec.0
        ));
    }
    if let Some(e) = m
        .encodings
        .iter()
        .find(|e| !(0..=9).contains(&e.0) || e.0 == 1)
    {
        return Err(format!("its chunk lists an unknown encoding {}", e.0));
    }
    if column.usable && u64::try_from(m.num_values).ok() != Some(rows) {
        return Err(format!(
            "it has {} values, but the row group has {rows} rows",
            m.num_values
        ));
    }
    let compressed = u64::try_from(m.total_compressed_size)
        .map_err(|_| format!("its compressed size is {}", m.total_compressed_size))?;
    if m.total_uncompressed_size < 0 {
        return Err(format!(
            "its uncompressed size is {}",
            m.total_uncompressed_size
        ));
    }
    let data = u64::try_from(m.data_page_offset).unwrap_or(0);
    let start = match m.dictionary_page_offset {
        Some(d) => {
            let d = u64::try_from(d).unwrap_or(0);
            if d >= data {
                return Err(format!(
                    "its dictionary page (at byte {d}) does not come before its first data \
                     page (at byte {data})"
                ));
            }
            d
        }
        None => data,
    };
    let end = start.saturating_add(compressed);
    if start < 4 || end > footer_at || compressed == 0 {
        return Err(format!(
            "its data is said to lie at bytes {start}..{end}, outside the {footer_at} bytes \
             between the file's first PAR1 and its footer"
        ));
    }
    Ok(())
}

/// polars' metadata for the checked footer, re-written with only what sgpw reads.
fn polars_metadata(meta: &pq::FileMetaData) -> std::result::Result<FileMetadata, String> {
    let row_groups = meta
        .row_groups
        .iter()
        .map(|rg| pq::RowGroup {
            columns: rg
                .columns
                .iter()
                .map(|c| pq::ColumnChunk {
                    file_path: None,
                    file_offset: c.file_offset,
                    meta_data: c.meta_data.as_ref().map(|m| pq::ColumnMetaData {
                        type_: m.type_,
                        encodings: m.encodings.clone(),
                        path_in_schema: m.path_in_schema.clone(),
                        codec: m.codec,
                        num_values: m.num_values,
                        total_uncompressed_size: m.total_uncompressed_size,
                        total_compressed_size: m.total_compressed_size,
                        key_value_metadata: None,
                        data_page_offset: m.data_page_offset,
                        index_page_offset: None,
                        dictionary_page_offset: m.dictionary_page_offset,
                        statistics: None,
                        encoding_stats: None,
                        bloom_filter_offset: None,
                        bloom_filter_length: None,
                        size_statistics: None,
                    }),
                    offset_index_offset: None,
                    offset_index_length: None,
                    column_index_offset: None,
                    column_index_length: None,
                    crypto_metadata: None,
                    encrypted_column_metadata: None,
                })
                .collect(),
            total_byte_size: rg.total_byte_size,
            num_rows: rg.num_rows,
            sorting_columns: None,
            file_offset: None,
            total_compressed_size: None,
            ordinal: None,
        })
        .collect();
    let clean = pq::FileMetaData {
        version: meta.version,
        schema: meta.schema.clone(),
        num_rows: meta.num_rows,
        row_groups,
        key_value_metadata: None,
        created_by: None,
        column_orders: None,
        encryption_algorithm: None,
        footer_signing_key_metadata: None,
    };
    let mut footer = Vec::new();
    clean
        .write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut footer))
        .map_err(|e| format!("its footer cannot be re-written: {e}"))?;
    let len = u32::try_from(footer.len()).map_err(|_| "its footer is too long".to_string())?;
    let mut file = MAGIC.to_vec();
    file.extend_from_slice(&footer);
    file.extend_from_slice(&len.to_le_bytes());
    file.extend_from_slice(MAGIC);
    polars_parquet::parquet::read::read_metadata(&mut Cursor::new(file))
        .map_err(|e| format!("its metadata is inconsistent: {e}"))
}

/// Bytes of memory available to this process now: what the kernel reports as
/// available, and no more than a cgroup's limit leaves or the address-space limit
/// (`ulimit -v`) allows. `None` where none is known.
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(|kb| kb * 1024)
        });
    let cgroup = || {
        let read = |f: &str| {
            std::fs::read_to_string(format!("/sys/fs/cgroup/{f}"))
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
        };
        Some(read("memory.max")?.saturating_sub(read("memory.current").unwrap_or(0)))
    };
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    let address_space = (unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY)
        .then_some(limit.rlim_cur);
    [meminfo, cgroup(), address_space]
        .into_iter()
        .flatten()
        .min()
}
