use polars_core::prelude::DataType;
use sgpw::data::data_file::DataFile;
use sgpw::data::progress::*;

/// Blocks whose types disagree stack to what one read of the whole file gives,
/// and progress is reported per block up to every row.
#[test]
fn blocks_stack_to_the_whole_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("mixed.csv");
    let mut text = String::from("a,b,y\n");
    for i in 0..(BLOCK_ROWS + 10) {
        // a: integers in the first block, decimals in the second
        let a = if i < BLOCK_ROWS {
            format!("{i}")
        } else {
            format!("{i}.5")
        };
        text.push_str(&format!("{a},{},{}\n", i % 7, 0.25 * i as f64));
    }
    std::fs::write(&path, &text).expect("writes");
    let mut seen = Vec::new();
    let file = DataFile::open(&path).expect("opens");
    let frame = read_frame(&file, &mut |p| seen.push((p.rows, p.fraction))).expect("reads");
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1], (BLOCK_ROWS + 10, 1.0));
    assert!(seen[0].1 > 0.9 && seen[0].1 < 1.0, "{seen:?}");
    assert_eq!(frame.height(), BLOCK_ROWS + 10);
    let a = frame.column("a").expect("a");
    assert_eq!(a.dtype(), &DataType::Float64);
    let a = a.f64().expect("f64");
    assert_eq!(a.get(3), Some(3.0));
    assert_eq!(a.get(BLOCK_ROWS + 1), Some(BLOCK_ROWS as f64 + 1.5));
}
