//! Damaged Parquet files (issue 31): every file of the committed corpus
//! (`tests/fixtures/parquet/damaged/`, see the README there) is a clear error from the
//! real binary — exit status 1, a message naming the file, no panic and no backtrace —
//! where sgpw used to abort or panic on several of them; a file consistent in itself
//! but too large for memory is refused before polars allocates; page checksums catch
//! flipped bytes in page data; columns sgpw cannot use are named with their type.

use sgpw::data::{LoadSpec, load};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parquet")
}

fn sgpw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("runs sgpw")
}

/// A clean failure: exit 1, one `error:` line naming the file, no panic or backtrace.
fn assert_clean_error(out: &Output, file: &Path) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{}: {err}", file.display());
    assert!(
        err.starts_with(&format!("error: {}: ", file.display())),
        "the message does not name the file: {err}"
    );
    for bad in [
        "panicked",
        "backtrace",
        "RUST_BACKTRACE",
        "memory allocation",
    ] {
        assert!(!err.contains(bad), "{}: {err}", file.display());
    }
    err
}

fn damaged_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures().join("damaged"))
        .expect("the corpus")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_damaged_file_is_a_clear_error_in_fit_and_predict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("model.toml");
    let base = fixtures().join("big_20_3.parquet");
    let fitted = sgpw(&[
        "fit",
        "--train",
        &base.display().to_string(),
        "--method",
        "fitc",
        "--m",
        "2",
        "--iters",
        "5",
        "--save-model",
        &model.display().to_string(),
    ]);
    assert!(fitted.status.success(), "{fitted:?}");
    let files = damaged_files();
    assert!(files.len() >= 19, "the corpus has {} files", files.len());
    for file in &files {
        let f = file.display().to_string();
        let fit = sgpw(&[
            "fit", "--train", &f, "--split", "0.5", "--method", "fitc", "--m", "2",
        ]);
        let msg = assert_clean_error(&fit, file);
        assert!(msg.contains("Parquet"), "{msg}");
        let predict = sgpw(&[
            "predict",
            "--model",
            &model.display().to_string(),
            "--input",
            &f,
        ]);
        assert_clean_error(&predict, file);
        let rows = String::from_utf8_lossy(&predict.stdout).lines().count();
        assert!(rows <= 1, "{f}: predictions from a damaged file");
    }
}

/// The three files of issue 31 (bytes 814, 280 and 1313 of `sgpw gen big --n 20 --d 3`
/// overwritten): two aborted sgpw inside polars, one panicked in its loader. Each
/// message says which column, where and what.
#[test]
fn the_files_of_issue_31_say_what_is_wrong() {
    for (name, want) in [
        (
            "byte814_4d",
            "column 'y' (row group 1): the page at byte 804 says it holds -39 values",
        ),
        (
            "byte280_43",
            "column 'x2' (row group 1): the page at byte 270 says it holds -34 values",
        ),
        (
            "byte1313_43",
            "column 'x1' (row group 1): it has -34 values, but the row group has 20 rows",
        ),
    ] {
        let file = fixtures().join(format!("damaged/{name}.parquet"));
        let out = sgpw(&["fit", "--train", &file.display().to_string(), "--m", "2"]);
        let msg = assert_clean_error(&out, &file);
        assert!(
            msg.contains("the file is damaged") && msg.contains(want),
            "{msg}"
        );
    }
    // and the file they were made from loads
    let base = load(&LoadSpec {
        train: fixtures().join("big_20_3.parquet"),
        ..LoadSpec::default()
    })
    .expect("the undamaged file loads");
    assert_eq!((base.n_train(), base.dim()), (20, 3));
}

/// A file that is consistent in itself (its pages hold the values its footer counts,
/// each page a single run of one dictionary value) but says it has 10¹² rows: refused
/// for the memory it would need, before polars reserves any of it.
#[test]
fn a_file_too_large_for_memory_is_refused_before_decoding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("huge.parquet");
    std::fs::write(&path, huge_parquet(500)).expect("writes");
    let out = sgpw(&["fit", "--train", &path.display().to_string(), "--m", "2"]);
    let msg = assert_clean_error(&out, &path);
    assert!(
        msg.contains("1073741823500 rows") && msg.contains("of memory available"),
        "{msg}"
    );
    // the same file with few enough rows reads: the checks accept its layout
    std::fs::write(&path, huge_parquet_rows(1, 40)).expect("writes");
    let e = load(&LoadSpec {
        train: path.clone(),
        ..LoadSpec::default()
    })
    .expect_err("one column only");
    assert!(e.to_string().contains("no feature columns"), "{e}");
}

/// A Parquet file of one required DOUBLE column `x` whose values are all 1.0: a
/// dictionary page, then `pages` data pages of 2³¹ − 1 values each.
fn huge_parquet(pages: usize) -> Vec<u8> {
    huge_parquet_rows(pages, i32::MAX)
}

fn huge_parquet_rows(pages: usize, per_page: i32) -> Vec<u8> {
    use polars_parquet_format::thrift::protocol::TCompactOutputProtocol;
    use polars_parquet_format::*;
    let header = |h: PageHeader| {
        let mut out = Vec::new();
        h.write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut out))
            .expect("a page header");
        out
    };
    let mut file = b"PAR1".to_vec();
    let dict_at = file.len() as i64;
    let dict_body = 1.0f64.to_le_bytes().to_vec();
    file.extend(header(PageHeader::new(
        PageType::DICTIONARY_PAGE,
        8,
        8,
        None,
        None,
        None,
        DictionaryPageHeader::new(1, Encoding::PLAIN, None),
        None,
    )));
    file.extend(&dict_body);
    let data_at = file.len() as i64;
    // bit width 0, then one RLE run of `per_page` zeros
    let mut body = vec![0u8];
    let mut run = (per_page as u64) << 1;
    loop {
        let b = (run & 0x7f) as u8;
        run >>= 7;
        if run == 0 {
            body.push(b);
            break;
        }
        body.push(b | 0x80);
    }
    for _ in 0..pages {
        file.extend(header(PageHeader::new(
            PageType::DATA_PAGE,
            body.len() as i32,
            body.len() as i32,
            None,
            DataPageHeader::new(
                per_page,
                Encoding::RLE_DICTIONARY,
                Encoding::RLE,
                Encoding::RLE,
                None,
            ),
            None,
            None,
            None,
        )));
        file.extend(&body);
    }
    let size = file.len() as i64 - dict_at;
    let rows = pages as i64 * i64::from(per_page);
    let meta = FileMetaData::new(
        1,
        vec![
            SchemaElement::new(
                None,
                None,
                None,
                "schema".to_string(),
                1,
                None,
                None,
                None,
                None,
                None,
            ),
            SchemaElement::new(
                Type::DOUBLE,
                None,
                FieldRepetitionType::REQUIRED,
                "x".to_string(),
                None,
                None,
                None,
                None,
                None,
                None,
            ),
        ],
        rows,
        vec![RowGroup::new(
            vec![ColumnChunk::new(
                None,
                dict_at,
                ColumnMetaData::new(
                    Type::DOUBLE,
                    vec![Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY],
                    vec!["x".to_string()],
                    CompressionCodec::UNCOMPRESSED,
                    rows,
                    size,
                    size,
                    None,
                    data_at,
                    None,
                    dict_at,
                    None,
                    None,
                    None,
                    None,
                    None,
                ),
                None,
                None,
                None,
                None,
                None,
                None,
            )],
            size,
            rows,
            None,
            None,
            None,
            None,
        )],
        None,
        None,
        None,
        None,
        None,
    );
    let mut footer = Vec::new();
    meta.write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut footer))
        .expect("a footer");
    file.extend(&footer);
    file.extend((footer.len() as u32).to_le_bytes());
    file.extend(b"PAR1");
    file
}

/// pyarrow wrote this file with a CRC-32 per page: no single flipped byte anywhere
/// in it loads other numbers than the file holds — each is an error, or (a byte the
/// reader does not use, such as a statistic) the same data.
#[test]
fn no_flipped_byte_of_a_checksummed_file_loads_other_numbers() {
    let original =
        std::fs::read(fixtures().join("seeds/pyarrow_v1_checksums.parquet")).expect("the seed");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("flipped.parquet");
    let spec = LoadSpec {
        train: path.clone(),
        target: Some("y".into()),
        features: Some(vec!["x1".into(), "x2".into()]),
        ..LoadSpec::default()
    };
    std::fs::write(&path, &original).expect("writes");
    let want = load(&spec).expect("the seed loads");
    let mut checksum_errors = 0;
    for i in 0..original.len() {
        let mut bytes = original.clone();
        bytes[i] ^= 0x10;
        std::fs::write(&path, &bytes).expect("writes");
        match load(&spec) {
            Ok(got) => assert!(
                got.x_train == want.x_train && got.y_train == want.y_train,
                "byte {i} flipped loads other numbers"
            ),
            Err(e) => checksum_errors += usize::from(e.to_string().contains("checksum")),
        }
    }
    assert!(checksum_errors > 100, "{checksum_errors} checksum errors");
}

/// Columns that are not numbers or text (timestamps, dates, decimals, binary) are
/// never decoded; used as features they are an error naming the column and its type.
#[test]
fn columns_sgpw_cannot_use_are_named_with_their_type() {
    for (seed, kind) in [
        ("pyarrow_unusable_columns", "INT64 (a timestamp)"),
        ("pyarrow_int96", "INT96 (a timestamp)"),
    ] {
        let train = fixtures().join(format!("seeds/{seed}.parquet"));
        let e = load(&LoadSpec {
            train: train.clone(),
            ..LoadSpec::default()
        })
        .expect_err("a timestamp feature");
        assert!(
            e.to_string()
                .contains(&format!("column 'when' has Parquet type {kind}")),
            "{e}"
        );
        let e = load(&LoadSpec {
            train: train.clone(),
            features: Some(vec!["x1".into(), "price".into()]),
            ..LoadSpec::default()
        })
        .expect_err("a decimal feature");
        assert!(
            e.to_string()
                .contains("'price' has Parquet type FIXED_LEN_BYTE_ARRAY (a decimal)"),
            "{e}"
        );
        let d = load(&LoadSpec {
            train,
            features: Some(vec!["x1".into(), "x2".into()]),
            ..LoadSpec::default()
        })
        .expect("the usable columns load");
        assert_eq!((d.n_train(), d.dim(), d.target_name.as_str()), (24, 2, "y"));
    }
}
