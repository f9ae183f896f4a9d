use sgpw::data::csv_range::*;
use std::path::Path;

/// Every record of a file belongs to exactly one part, in order, whatever the
/// number of parts (more parts than records included: some parts are empty), and
/// each part's first row is the count of the parts before.
#[test]
fn parts_cover_every_record_once() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("a.csv");
    let mut text = String::from("x,y\n");
    for i in 0..37 {
        // lines of different lengths, a blank line and no final line break
        text.push_str(&format!("{},{}\n", i * 1000 + i % 7, i));
        if i == 20 {
            text.push('\n');
        }
    }
    text.pop();
    std::fs::write(&path, text).expect("write");
    for parts in [1, 2, 3, 5, 8, 40, 200] {
        let mut seen = Vec::new();
        for part in 0..parts {
            let range = CsvRange::of(&path, part, parts)
                .expect("ok")
                .expect("plain");
            let count = range.count_records().expect("count");
            let mut rows = 0;
            range
                .for_each_frame(seen.len(), 4, &mut |chunk| {
                    assert_eq!(chunk.first, seen.len());
                    let y = chunk.frame.column("y").expect("y").i64().expect("int");
                    seen.extend(y.into_no_null_iter());
                    rows += chunk.frame.height();
                    Ok(())
                })
                .expect("read");
            assert_eq!(rows, count, "{parts} parts, part {part}");
        }
        assert_eq!(seen, (0..37).collect::<Vec<i64>>(), "{parts} parts");
    }
}

/// A gzip-compressed file cannot be entered in the middle; its records are counted
/// as a whole read finds them.
#[test]
fn gzip_has_no_byte_ranges() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/mcycle/data.csv.gz");
    assert!(CsvRange::of(&path, 0, 2).expect("reads").is_none());
    let rows = sgpw::data::load::load(&sgpw::data::LoadSpec {
        train: path.clone(),
        ..Default::default()
    })
    .expect("loads")
    .n_train();
    assert_eq!(count_gzip_records(&path).expect("counts"), rows);
}
