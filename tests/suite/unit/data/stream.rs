use sgpw::data::stream::*;
use std::fs::File;
use std::path::Path;

/// A gzip-compressed CSV reads in blocks as its plain twin does, whatever its
/// name; a zstd-compressed one is refused with what to do.
#[test]
fn gzip_reads_as_plain_and_other_compressions_say_what_to_do() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("temp dir");
    let text: String = std::iter::once("a,b,y\n".to_string())
        .chain((0..25).map(|i| format!("{i},{}.5,{}\n", i % 4, i * i)))
        .collect();
    let plain = dir.path().join("d.csv");
    std::fs::write(&plain, &text).expect("write");
    let gz = dir.path().join("d.data"); // the magic bytes decide, not the name
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(text.as_bytes()).expect("compress");
    std::fs::write(&gz, enc.finish().expect("compress")).expect("write");
    let blocks = |path: &Path| {
        let mut seen = Vec::new();
        let rows = csv_chunks(path, 7, &mut |c: Chunk| {
            seen.push((c.first, c.frame));
            Ok(())
        })
        .expect("reads");
        (rows, seen)
    };
    let (rows_plain, plain_blocks) = blocks(&plain);
    let (rows_gz, gz_blocks) = blocks(&gz);
    assert_eq!((rows_plain, rows_gz), (25, 25));
    assert_eq!(plain_blocks.len(), 4);
    for ((fa, a), (fb, b)) in plain_blocks.iter().zip(&gz_blocks) {
        assert_eq!(fa, fb);
        assert!(a.equals(b), "block at row {fa}");
    }
    let whole = read_csv_file(&gz, File::open(&gz).expect("open"))
        .expect("gzip")
        .expect("parses");
    assert_eq!(whole.height(), 25);
    let zst = dir.path().join("d.csv.zst");
    std::fs::write(&zst, [0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0]).expect("write");
    let e = read_csv_file(&zst, File::open(&zst).expect("open")).expect_err("refused");
    let msg = e.to_string();
    assert!(
        msg.contains("d.csv.zst") && msg.contains("zstd -d"),
        "{msg}"
    );
}

/// Blocks of one row each from a CSV whose quoted fields hold line breaks and
/// escaped quotes: every record stays whole, and the row count is the records'.
#[test]
fn quoted_line_breaks_stay_inside_their_block() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("quoted.csv");
    let text = "x,\"multi\nline name\",y\n1,\"a\nb\",2\n3,\"say \"\"hi\"\"\n\",4\n\n5,c,6\n";
    std::fs::write(&path, text).expect("write");
    let mut seen = Vec::new();
    let rows = csv_chunks(&path, 1, &mut |c: Chunk| {
        assert_eq!(c.frame.height(), 1, "block at row {}", c.first);
        assert_eq!(c.frame.width(), 3, "block at row {}", c.first);
        let x = c.frame.column("x").expect("x").i64().expect("ints").get(0);
        seen.push((c.first, x));
        Ok(())
    })
    .expect("read");
    assert_eq!(rows, 3);
    assert_eq!(seen, vec![(0, Some(1)), (1, Some(3)), (2, Some(5))]);
}
