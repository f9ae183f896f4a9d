//! Walking the pages of a Parquet column chunk before polars decodes it: every page
//! header is read with the Thrift parser polars uses, but bounded by the chunk, and
//! must fit the chunk, the codec and the memory there is; the pages must hold exactly
//! the chunk's values (one per row: sgpw reads flat columns), in an encoding polars
//! decodes for the column's type; and each page's bytes are checked
//! (`parquet_values`). docs/faults.md lists every check.

use super::parquet_values::{self, PageShape};
use polars_parquet::parquet::compression::{Compression, DecompressionContext, decompress};
use polars_parquet_format as pq;
use polars_parquet_format::thrift::protocol::TCompactInputProtocol;
use std::fs::File;
use std::io::{Cursor, Read, Seek, SeekFrom};

/// A Thrift reader may reserve this many units per byte of its input (a list element
/// costs 8, a struct 2; every element takes at least one byte on the wire).
pub(super) const THRIFT_UNITS_PER_BYTE: usize = 16;

/// What the walk needs of a column: its type, and whether values may be missing.
pub(super) struct PageColumn {
    pub physical: pq::Type,
    pub optional: bool,
}

/// Reads the page headers of column chunks.
pub(super) struct PageWalk<'a> {
    pub file: &'a File,
    /// Bytes of memory available, if known.
    pub budget: Option<u64>,
}

impl PageWalk<'_> {
    /// Every page of a usable column chunk: it lies inside the chunk, its sizes are
    /// plausible, its encoding is one polars decodes for the column's type, and the
    /// pages hold exactly the chunk's values (one per row: the columns are flat).
    pub fn walk(
        &mut self,
        column: &PageColumn,
        chunk: &pq::ColumnChunk,
        rows: i64,
    ) -> std::result::Result<(), String> {
        let Some(m) = &chunk.meta_data else {
            return Err("its metadata is missing".into());
        };
        let data_at = m.data_page_offset as u64;
        let start = m.dictionary_page_offset.map_or(data_at, |d| d as u64);
        let end = start + m.total_compressed_size as u64;
        let total_uncompressed = m.total_uncompressed_size as u64;
        if let Some(budget) = self.budget
            && total_uncompressed > budget
        {
            return Err(format!(
                "it says it takes {} uncompressed, more than the {} of memory available",
                gigabytes(total_uncompressed),
                gigabytes(budget)
            ));
        }
        let rows = rows as u64;
        let codec = Compression::try_from(m.codec).map_err(|e| e.to_string())?;
        let (mut pos, mut values, mut dictionary) = (start, 0u64, false);
        while values < rows {
            if pos >= end {
                return Err(format!(
                    "its pages end at byte {pos} holding {values} of its {rows} values"
                ));
            }
            let (header, header_len) = read_page_header(self.file, pos, end)?;
            let at = |what: String| format!("the page at byte {pos} {what}");
            let compressed = u64::try_from(header.compressed_page_size)
                .map_err(|_| at(format!("says it has {} bytes", header.compressed_page_size)))?;
            let uncompressed = u64::try_from(header.uncompressed_page_size).map_err(|_| {
                at(format!(
                    "says it has {} bytes uncompressed",
                    header.uncompressed_page_size
                ))
            })?;
            let body = pos + header_len;
            if body + compressed > end {
                return Err(at(format!(
                    "says it has {compressed} bytes, which run past the column's end at byte {end}"
                )));
            }
            check_sizes(codec, compressed, uncompressed, total_uncompressed).map_err(at)?;
            let first = pos == start;
            match header.type_ {
                pq::PageType::DICTIONARY_PAGE => {
                    if !first || dictionary {
                        return Err(at(
                            "is a dictionary page after the column's first page".into()
                        ));
                    }
                    let h = header
                        .dictionary_page_header
                        .as_ref()
                        .ok_or_else(|| at("is a dictionary page without its header".into()))?;
                    check_dictionary(column, h, uncompressed).map_err(at)?;
                    let bytes = self.page_bytes(&header, body, compressed, uncompressed, codec)?;
                    let shape = PageShape {
                        physical: column.physical,
                        optional: false,
                        encoding: pq::Encoding::PLAIN,
                        num_values: h.num_values as u64,
                        v2: None,
                    };
                    parquet_values::check(&bytes, &shape).map_err(at)?;
                    dictionary = true;
                }
                pq::PageType::DATA_PAGE | pq::PageType::DATA_PAGE_V2 => {
                    if values == 0 && m.dictionary_page_offset.is_some() && pos != data_at {
                        return Err(at(format!(
                            "is the first data page, but the footer says that starts at byte {data_at}"
                        )));
                    }
                    let page = DataPage::of(&header).map_err(at)?;
                    values += page.num_values;
                    if values > rows {
                        return Err(at(format!(
                            "brings the values to {values}, more than the row group's {rows} rows"
                        )));
                    }
                    check_encoding(column, page.encoding, dictionary).map_err(at)?;
                    let bytes = self.page_bytes(&header, body, compressed, uncompressed, codec)?;
                    let shape = PageShape {
                        physical: column.physical,
                        optional: column.optional,
                        encoding: page.encoding,
                        num_values: page.num_values,
                        v2: page.v2,
                    };
                    parquet_values::check(&bytes, &shape).map_err(at)?;
                }
                other => {
                    return Err(at(format!(
                        "has page type {}, which is not a data or dictionary page",
                        other.0
                    )));
                }
            }
            pos = body + compressed;
        }
        if pos != end {
            return Err(format!(
                "its pages end at byte {pos}, but the footer says the column ends at byte {end}"
            ));
        }
        Ok(())
    }

    /// The uncompressed bytes of a page (of a data page: levels, then values), after
    /// checking the page's checksum if the writer stored one.
    fn page_bytes(
        &self,
        header: &pq::PageHeader,
        body: u64,
        compressed: u64,
        uncompressed: u64,
        codec: Compression,
    ) -> std::result::Result<Vec<u8>, String> {
        let mut raw = vec![0u8; compressed as usize];
        read_exact_at(self.file, body, &mut raw).map_err(|e| format!("cannot read: {e}"))?;
        if let Some(crc) = header.crc {
            let mut sum = flate2::Crc::new();
            sum.update(&raw);
            if sum.sum() != crc as u32 {
                return Err(format!(
                    "the page at byte {body} does not match its checksum: its bytes are damaged"
                ));
            }
        }
        // v2 pages keep their levels uncompressed in front of the (compressed) values
        let v2 = header.data_page_header_v2.as_ref();
        if codec == Compression::Uncompressed || v2.is_some_and(|h| h.is_compressed == Some(false))
        {
            return Ok(raw);
        }
        let levels = v2.map_or(0, |h| h.definition_levels_byte_length.max(0) as usize);
        let mut out = vec![0u8; uncompressed as usize];
        if levels > out.len() || levels > raw.len() {
            return Err(format!(
                "the page at byte {body} has levels longer than the page"
            ));
        }
        out[..levels].copy_from_slice(&raw[..levels]);
        if raw.len() > levels {
            decompress(
                codec,
                &raw[levels..],
                &mut out[levels..],
                &mut DecompressionContext::Unset,
            )
            .map_err(|e| format!("the page at byte {body} cannot be decompressed: {e}"))?;
        }
        Ok(out)
    }
}

/// Page sizes: uncompressed as stored when the codec stores as is; no page larger than
/// its column chunk; for codecs with a known largest ratio, no more than that.
fn check_sizes(
    codec: Compression,
    compressed: u64,
    uncompressed: u64,
    chunk_uncompressed: u64,
) -> std::result::Result<(), String> {
    if uncompressed > chunk_uncompressed {
        return Err(format!(
            "says it has {uncompressed} bytes uncompressed, more than its whole column chunk's {chunk_uncompressed}"
        ));
    }
    // The most a byte of each format can expand to (snappy: a 3-byte copy of 64
    // bytes; LZ4: 255 per length byte; deflate: 1032); zstd and brotli encode long
    // runs in a few bytes, so only the memory budget bounds them.
    let ratio = match codec {
        Compression::Uncompressed => {
            return if uncompressed == compressed {
                Ok(())
            } else {
                Err(format!(
                    "is stored uncompressed in {compressed} bytes, but says it has {uncompressed}"
                ))
            };
        }
        Compression::Snappy => 32,
        Compression::Lz4 | Compression::Lz4Raw => 256,
        Compression::Gzip => 1100,
        _ => return Ok(()),
    };
    if uncompressed > compressed.saturating_mul(ratio) + 4096 {
        return Err(format!(
            "says its {compressed} compressed bytes hold {uncompressed}, more than the codec can expand to"
        ));
    }
    Ok(())
}

/// A dictionary page's entries fit in its bytes (polars reserves one slot per entry).
fn check_dictionary(
    column: &PageColumn,
    h: &pq::DictionaryPageHeader,
    uncompressed: u64,
) -> std::result::Result<(), String> {
    if !matches!(
        h.encoding,
        pq::Encoding::PLAIN | pq::Encoding::PLAIN_DICTIONARY
    ) {
        return Err(format!(
            "is a dictionary page with encoding {}",
            h.encoding.0
        ));
    }
    let entries = u64::try_from(h.num_values)
        .map_err(|_| format!("is a dictionary page of {} entries", h.num_values))?;
    let entry_bytes = match column.physical {
        pq::Type::INT32 | pq::Type::FLOAT => 4,
        pq::Type::INT64 | pq::Type::DOUBLE => 8,
        pq::Type::BYTE_ARRAY => 4, // a length, then the bytes
        _ => return Err("is a dictionary page for a column type that has none".into()),
    };
    if entries.saturating_mul(entry_bytes) > uncompressed {
        return Err(format!(
            "is a dictionary page of {entries} entries in only {uncompressed} bytes"
        ));
    }
    Ok(())
}

/// What sgpw needs of a data page header (v1 or v2).
struct DataPage {
    num_values: u64,
    encoding: pq::Encoding,
    /// v2: the bytes of definition levels in front of the values, and the nulls.
    v2: Option<(usize, u64)>,
}

impl DataPage {
    fn of(header: &pq::PageHeader) -> std::result::Result<DataPage, String> {
        let count = |n: i32| u64::try_from(n).map_err(|_| format!("says it holds {n} values"));
        match (&header.data_page_header, &header.data_page_header_v2) {
            (Some(v1), None) if header.type_ == pq::PageType::DATA_PAGE => {
                // polars reads definition levels as RLE whatever the header says
                for e in [v1.definition_level_encoding, v1.repetition_level_encoding] {
                    if !matches!(e, pq::Encoding::RLE | pq::Encoding::BIT_PACKED) {
                        return Err(format!("encodes its levels with encoding {}", e.0));
                    }
                }
                Ok(DataPage {
                    num_values: count(v1.num_values)?,
                    encoding: v1.encoding,
                    v2: None,
                })
            }
            (None, Some(v2)) if header.type_ == pq::PageType::DATA_PAGE_V2 => {
                let n = count(v2.num_values)?;
                if i64::from(v2.num_rows) != i64::from(v2.num_values) {
                    return Err(format!(
                        "says it holds {} values in {} rows (the columns are flat: one each)",
                        v2.num_values, v2.num_rows
                    ));
                }
                if v2.num_nulls < 0 || i64::from(v2.num_nulls) > i64::from(v2.num_values) {
                    return Err(format!(
                        "says {} of its {} values are missing",
                        v2.num_nulls, v2.num_values
                    ));
                }
                if v2.repetition_levels_byte_length != 0 || v2.definition_levels_byte_length < 0 {
                    return Err("has levels of a negative or repeated length".into());
                }
                let levels = v2.definition_levels_byte_length as u64;
                if levels > header.compressed_page_size as u64
                    || levels > header.uncompressed_page_size as u64
                {
                    return Err(format!(
                        "says its levels take {levels} bytes, more than the page"
                    ));
                }
                Ok(DataPage {
                    num_values: n,
                    encoding: v2.encoding,
                    v2: Some((levels as usize, v2.num_nulls as u64)),
                })
            }
            _ => Err("is a data page without its header".into()),
        }
    }
}

/// The encodings polars decodes for each physical type.
fn check_encoding(
    column: &PageColumn,
    e: pq::Encoding,
    dictionary: bool,
) -> std::result::Result<(), String> {
    use pq::Encoding as E;
    let dict = matches!(e, E::PLAIN_DICTIONARY | E::RLE_DICTIONARY);
    let ok = match column.physical {
        pq::Type::BOOLEAN => matches!(e, E::PLAIN | E::RLE),
        pq::Type::INT32 | pq::Type::INT64 => {
            dict || matches!(e, E::PLAIN | E::DELTA_BINARY_PACKED | E::BYTE_STREAM_SPLIT)
        }
        pq::Type::FLOAT | pq::Type::DOUBLE => dict || matches!(e, E::PLAIN | E::BYTE_STREAM_SPLIT),
        pq::Type::BYTE_ARRAY => {
            dict || matches!(
                e,
                E::PLAIN | E::DELTA_LENGTH_BYTE_ARRAY | E::DELTA_BYTE_ARRAY
            )
        }
        _ => false,
    };
    if !ok {
        return Err(format!(
            "uses encoding {}, which does not fit the column's type",
            e.0
        ));
    }
    if dict && !dictionary {
        return Err("uses a dictionary, but the column has no dictionary page".into());
    }
    Ok(())
}

/// One page header at `pos`, read with polars' own page-header parser but bounded by
/// the chunk's end; the header and its length in bytes.
fn read_page_header(
    file: &File,
    pos: u64,
    end: u64,
) -> std::result::Result<(pq::PageHeader, u64), String> {
    // Headers are small: read 64 KiB, or (a header with large statistics) the rest of
    // the chunk, which lies inside the file.
    let room = end - pos;
    let mut window = room.min(64 << 10);
    loop {
        let mut bytes = vec![0u8; window as usize];
        read_exact_at(file, pos, &mut bytes).map_err(|e| format!("cannot read: {e}"))?;
        let mut cursor = Cursor::new(&bytes[..]);
        let limit = bytes.len().saturating_mul(THRIFT_UNITS_PER_BYTE) + 1024;
        let parsed = pq::PageHeader::read_from_in_protocol(&mut TCompactInputProtocol::new(
            &mut cursor,
            limit,
        ));
        match parsed {
            Ok(header) => return Ok((header, cursor.position())),
            Err(_) if window < room => window = room,
            Err(e) => {
                return Err(format!(
                    "the page header at byte {pos} cannot be read ({e})"
                ));
            }
        }
    }
}

pub(super) fn read_exact_at(file: &File, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
    let mut f = file;
    f.seek(SeekFrom::Start(at))?;
    f.read_exact(buf)
}

pub(super) fn gigabytes(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{:.0} MB", (bytes as f64 / f64::from(1u32 << 20)).ceil())
    }
}
