//! Checking the contents of a Parquet data page (decompressed) before polars decodes
//! it: the definition levels cover the page's values, and the values section holds
//! what its encoding needs for the values that are present. polars-parquet indexes
//! and slices on trust here (a level stream cut short, a dictionary bit width of 136,
//! string lengths past the page's end), which panics; these checks make such a page
//! an error that says what is wrong. docs/faults.md lists them.

use polars_parquet_format as pq;

/// What the page's header and its column say about a data page.
pub(super) struct PageShape {
    pub physical: pq::Type,
    pub optional: bool,
    pub encoding: pq::Encoding,
    pub num_values: u64,
    /// A v2 page: the bytes of definition levels in front, and its count of nulls.
    pub v2: Option<(usize, u64)>,
}

/// Check a data page's decompressed bytes (levels, then values).
pub(super) fn check(page: &[u8], shape: &PageShape) -> Result<(), String> {
    let (levels, values) = match shape.v2 {
        Some((len, _)) => (
            page.get(..len),
            page.get(len..).ok_or("has levels longer than the page")?,
        ),
        None if shape.optional => {
            let len = page
                .get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .ok_or("is too short for its definition levels")?;
            let levels = page
                .get(4..)
                .and_then(|rest| rest.get(..len))
                .ok_or("says its definition levels take more bytes than the page has")?;
            (Some(levels), &page[4 + len..])
        }
        None => (None, page),
    };
    let present = match (shape.optional, levels) {
        (true, Some(levels)) => {
            let present = count_present(levels, shape.num_values)?;
            if let Some((_, nulls)) = shape.v2
                && nulls != shape.num_values - present
            {
                return Err(format!(
                    "says {nulls} of its values are missing, but its levels say {}",
                    shape.num_values - present
                ));
            }
            present
        }
        _ => shape.num_values,
    };
    check_values(values, shape, present)
}

/// How many of `n` definition levels (bit width 1) are 1: the values present.
pub fn count_present(levels: &[u8], n: u64) -> Result<u64, String> {
    let mut present = 0;
    let covered = hybrid_runs(levels, 1, n, |run| match run {
        Run::Repeated(count, value) => {
            if value > 1 {
                return Err(format!("has a definition level of {value}"));
            }
            present += count * value;
            Ok(())
        }
        Run::Packed(bytes, count) => {
            let full = (count / 8) as usize;
            present += bytes[..full]
                .iter()
                .map(|b| u64::from(b.count_ones()))
                .sum::<u64>();
            if count % 8 > 0 {
                let last = bytes[full] & ((1u8 << (count % 8)) - 1);
                present += u64::from(last.count_ones());
            }
            Ok(())
        }
    })?;
    if covered < n {
        return Err(format!(
            "has definition levels for {covered} of its {n} values"
        ));
    }
    Ok(present)
}

/// A run of an RLE/bit-packed hybrid stream, limited to the values still wanted.
enum Run<'a> {
    /// `count` copies of a value.
    Repeated(u64, u64),
    /// Bit-packed values (the bytes holding them, and how many are wanted).
    Packed(&'a [u8], u64),
}

/// Walk an RLE/bit-packed hybrid stream of `bits`-bit values until `n` values are
/// read or the bytes end; `each` sees every run. Returns the values covered.
fn hybrid_runs<'a>(
    mut bytes: &'a [u8],
    bits: u32,
    n: u64,
    mut each: impl FnMut(Run<'a>) -> Result<(), String>,
) -> Result<u64, String> {
    let value_bytes = bits.div_ceil(8) as usize;
    let mut covered = 0u64;
    while covered < n && !bytes.is_empty() {
        let header = uleb(&mut bytes).ok_or("has a damaged run header")?;
        if header & 1 == 1 {
            let groups = header >> 1;
            let wanted_bytes = groups.saturating_mul(u64::from(bits));
            let have = (bytes.len() as u64).min(wanted_bytes) as usize;
            let count = if bits == 0 {
                groups.saturating_mul(8)
            } else {
                (have as u64 * 8) / u64::from(bits)
            }
            .min(n - covered);
            each(Run::Packed(&bytes[..have], count))?;
            covered += count;
            bytes = &bytes[have..];
        } else {
            let count = (header >> 1).min(n - covered);
            let raw = bytes.get(..value_bytes).ok_or("has a run cut short")?;
            let value = raw.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b));
            each(Run::Repeated(count, value))?;
            covered += count;
            bytes = &bytes[value_bytes..];
        }
    }
    Ok(covered)
}

/// The values section holds `present` values in the page's encoding.
fn check_values(values: &[u8], shape: &PageShape, present: u64) -> Result<(), String> {
    use pq::Encoding as E;
    let width = match shape.physical {
        pq::Type::INT32 | pq::Type::FLOAT => 4,
        pq::Type::INT64 | pq::Type::DOUBLE => 8,
        _ => 0,
    };
    let short = |need: String| {
        Err(format!(
            "holds {} bytes of values, too few for its {present} values ({need})",
            values.len()
        ))
    };
    match shape.encoding {
        E::PLAIN if shape.physical == pq::Type::BOOLEAN => {
            if (values.len() as u64) < present.div_ceil(8) {
                return short("a bit each".into());
            }
        }
        E::PLAIN if shape.physical == pq::Type::BYTE_ARRAY => {
            let mut rest = values;
            for i in 0..present {
                let len = rest
                    .get(..4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
                rest = len
                    .and_then(|n| rest.get(4..)?.get(n..))
                    .ok_or_else(|| format!("has text value {} running past its end", i + 1))?;
            }
        }
        E::PLAIN => {
            if (values.len() as u64) < present.saturating_mul(width) {
                return short(format!("{width} bytes each"));
            }
        }
        E::BYTE_STREAM_SPLIT => {
            if values.len() as u64 != present.saturating_mul(width) {
                return Err(format!(
                    "holds {} bytes of split values for its {present} values of {width} bytes",
                    values.len()
                ));
            }
        }
        E::RLE => {
            // booleans: a 4-byte length, then 1-bit runs
            let len = values
                .get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .ok_or("is too short for its run length")?;
            let runs = values[4..]
                .get(..len)
                .ok_or("says its runs take more bytes than it has")?;
            let covered = hybrid_runs(runs, 1, present, |_| Ok(()))?;
            if covered < present {
                return short(format!("runs cover {covered}"));
            }
        }
        E::PLAIN_DICTIONARY | E::RLE_DICTIONARY => {
            if present > 0 {
                let (&bits, runs) = values.split_first().ok_or("has no dictionary indices")?;
                if bits > 32 {
                    return Err(format!("has dictionary indices of {bits} bits"));
                }
                let covered = hybrid_runs(runs, u32::from(bits), present, |_| Ok(()))?;
                if covered < present {
                    return short(format!("indices cover {covered}"));
                }
            }
        }
        E::DELTA_BINARY_PACKED => {
            let (count, _, _) = delta_values(values, present, false)?;
            if count != present {
                return Err(format!(
                    "has {count} delta-encoded values for its {present}"
                ));
            }
        }
        E::DELTA_LENGTH_BYTE_ARRAY => {
            let (_, lengths, rest) = delta_values(values, present, true)?;
            byte_array_lengths(&lengths, rest.len(), present)?;
        }
        E::DELTA_BYTE_ARRAY => {
            let (_, prefixes, rest) = delta_values(values, present, true)?;
            let (_, suffixes, rest) = delta_values(rest, present, true)?;
            byte_array_lengths(&suffixes, rest.len(), present)?;
            if prefixes.len() != suffixes.len() {
                return Err(format!(
                    "has {} prefixes but {} suffixes",
                    prefixes.len(),
                    suffixes.len()
                ));
            }
            // each value shares at most the whole of the value before it
            let mut previous = 0i64;
            for (p, s) in prefixes.iter().zip(&suffixes) {
                if *p < 0 || *p > previous {
                    return Err(format!(
                        "has a prefix of {p} bytes after a value of {previous}"
                    ));
                }
                previous = p + s;
            }
        }
        other => return Err(format!("uses encoding {}", other.0)),
    }
    Ok(())
}

/// Lengths of `present` byte strings that fit in `room` bytes.
fn byte_array_lengths(lengths: &Lengths, room: usize, present: u64) -> Result<(), String> {
    if lengths.len() as u64 != present {
        return Err(format!(
            "has {} string lengths for its {present} values",
            lengths.len()
        ));
    }
    let mut total: i64 = 0;
    for &l in lengths.iter() {
        if l < 0 {
            return Err(format!("has a string length of {l}"));
        }
        total = total.saturating_add(l);
    }
    if total > room as i64 {
        return Err(format!(
            "has strings of {total} bytes in all, but only {room} bytes for them"
        ));
    }
    Ok(())
}

pub type Lengths = Vec<i64>;

/// Largest block of a DELTA_BINARY_PACKED stream accepted (writers use 128 to 1024).
const MAX_DELTA_BLOCK: u64 = 1 << 16;

/// Decode one DELTA_BINARY_PACKED stream as polars' decoder reads it (its header,
/// then every block's minimum delta, bit widths and packed deltas); the values (if
/// `keep`; else none) with their count, and the bytes after the stream. Refuses a stream of more than `max` values or a block layout polars
/// asserts against.
pub fn delta_values(bytes: &[u8], max: u64, keep: bool) -> Result<(u64, Lengths, &[u8]), String> {
    let bad = |what: &str| format!("has a damaged delta encoding: {what}");
    let mut rest = bytes;
    let block = uleb(&mut rest).ok_or_else(|| bad("no block size"))?;
    let miniblocks = uleb(&mut rest).ok_or_else(|| bad("no miniblock count"))?;
    let count = uleb(&mut rest).ok_or_else(|| bad("no value count"))?;
    let first = zigzag(uleb(&mut rest).ok_or_else(|| bad("no first value"))?);
    if block == 0 || block % 128 != 0 || block > MAX_DELTA_BLOCK {
        return Err(bad(&format!("block size {block}")));
    }
    if miniblocks == 0 || block % miniblocks != 0 || (block / miniblocks) % 32 != 0 {
        return Err(bad(&format!(
            "{miniblocks} miniblocks in a block of {block}"
        )));
    }
    if count > max {
        return Err(format!(
            "has a delta encoding of {count} values, more than the page's {max}"
        ));
    }
    let per_miniblock = block / miniblocks;
    let mut values = Vec::new();
    if keep && count > 0 {
        values.reserve(count as usize);
        values.push(first);
    }
    let mut last = first;
    let mut left = count.saturating_sub(1);
    while left > 0 {
        let min_delta =
            zigzag(uleb(&mut rest).ok_or_else(|| bad("a block without its minimum delta"))?);
        let widths = rest
            .get(..miniblocks as usize)
            .ok_or_else(|| bad("a block without its bit widths"))?;
        rest = &rest[miniblocks as usize..];
        let used = miniblocks.min(left.div_ceil(per_miniblock)) as usize;
        for &w in &widths[..used] {
            if w > 64 {
                return Err(bad(&format!("a bit width of {w}")));
            }
            let len = (u64::from(w) * per_miniblock).div_ceil(8) as usize;
            let packed = rest.get(..len).ok_or_else(|| bad("a block cut short"))?;
            rest = &rest[len..];
            let take = per_miniblock.min(left);
            if keep {
                for i in 0..take {
                    let delta = unpack(packed, u32::from(w), i);
                    last = last.wrapping_add(min_delta).wrapping_add(delta as i64);
                    values.push(last);
                }
            }
            left -= take;
        }
    }
    Ok((count, values, rest))
}

/// The `i`-th `bits`-bit value packed least-significant bit first.
fn unpack(packed: &[u8], bits: u32, i: u64) -> u64 {
    let mut v = 0u64;
    let start = i * u64::from(bits);
    for b in 0..u64::from(bits) {
        let at = start + b;
        let byte = packed[(at / 8) as usize];
        v |= u64::from((byte >> (at % 8)) & 1) << b;
    }
    v
}

fn zigzag(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

/// One ULEB128 number; `None` if cut short or longer than 64 bits.
fn uleb(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        if i == 9 && b > 1 {
            return None;
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            *bytes = &bytes[i + 1..];
            return Some(value);
        }
    }
    None
}
