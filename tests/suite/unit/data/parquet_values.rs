use sgpw::data::parquet_values::*;

/// A delta stream as pyarrow writes it decodes to its values; cut short, it is
/// refused.
#[test]
fn delta_streams_decode_and_cut_ones_are_refused() {
    // block 128, 4 miniblocks, 5 values, first 7; deltas +1 (min delta 1, width 0)
    let mut s = vec![0x80, 0x01, 0x04, 0x05, 0x0e, 0x02, 0, 0, 0, 0];
    let (_, v, rest) = delta_values(&s, 5, true).expect("decodes");
    assert_eq!(v, vec![7, 8, 9, 10, 11]);
    assert!(rest.is_empty());
    // width 1 in the first miniblock: 32 values in 4 bytes, deltas 1 + bit
    s[6] = 1;
    s.extend_from_slice(&[0b0000_0101, 0, 0, 0]);
    let (_, v, _) = delta_values(&s, 5, true).expect("decodes");
    assert_eq!(v, vec![7, 9, 10, 12, 13]);
    assert!(delta_values(&s[..s.len() - 1], 5, true).is_err());
    assert!(
        delta_values(&s, 4, true).is_err(),
        "more values than the page"
    );
}

/// Definition levels: runs and packed bits count the values present, and levels
/// that stop before the page's values are refused.
#[test]
fn definition_levels_count_present_values() {
    // RLE run of 3 ones, then a packed group of 8 with bits 0b0000_0101
    let levels = [0x06, 0x01, 0x03, 0b0000_0101];
    assert_eq!(count_present(&levels, 11), Ok(5));
    assert_eq!(count_present(&levels, 4), Ok(4));
    assert!(count_present(&levels, 12).is_err());
    assert!(count_present(&[0x06, 0x02], 3).is_err(), "a level of 2");
}
