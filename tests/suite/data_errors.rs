//! Loading: every bad file gives an error message that names the file and the column
//! and/or row; splits are seeded; the synthetic generators are reproducible.

use sgpw::data::{LoadSpec, load, load_inputs, synthetic};
use sgpw::error::Error;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// Writes `text` to `name` in a fresh temp dir (kept alive by the returned guard).
fn file(name: &str, text: &str) -> (TempDir, PathBuf) {
    let dir = TempDir::new().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write fixture");
    (dir, path)
}

fn spec(path: &Path) -> LoadSpec {
    LoadSpec {
        train: path.to_path_buf(),
        ..Default::default()
    }
}

/// The message of a data error, which must start with the file path.
fn data_error(spec: &LoadSpec, path: &Path) -> String {
    match load(spec) {
        Err(Error::Data(msg)) => {
            assert!(
                msg.starts_with(&path.display().to_string()),
                "message does not name the file: {msg}"
            );
            msg
        }
        other => panic!("expected a data error, got {other:?}"),
    }
}

fn input_error(spec: &LoadSpec) -> String {
    match load(spec) {
        Err(Error::Input(msg)) => msg,
        other => panic!("expected an input error, got {other:?}"),
    }
}

fn assert_has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "{p:?} not in message: {msg}");
    }
}

const GOOD: &str = "a,b,y\n1,2,3\n4,5,6\n7,8,9\n10,11,13\n";

#[test]
fn missing_file() {
    let dir = TempDir::new().expect("temp dir");
    let path = dir.path().join("nope.csv");
    let msg = data_error(&spec(&path), &path);
    assert_has(&msg, &["cannot read", "No such file or directory"]);
}

#[test]
fn empty_file() {
    let (_d, path) = file("empty.csv", "");
    assert_has(&data_error(&spec(&path), &path), &["empty"]);
}

#[test]
fn header_only() {
    let (_d, path) = file("h.csv", "a,b,y\n");
    assert_has(&data_error(&spec(&path), &path), &["no data rows"]);
}

#[test]
fn header_required() {
    let (_d, path) = file("noheader.csv", "1,2,3\n4,5,6\n");
    assert_has(&data_error(&spec(&path), &path), &["header"]);
}

#[test]
fn non_numeric_column() {
    let (_d, path) = file("bad.csv", "x1,x2,y\n1,2,3\n4,5,6\n7,abc,9\n1,2,3\n");
    let msg = data_error(&spec(&path), &path);
    assert_has(
        &msg,
        &[
            "column 'x2' is not numeric",
            "row 3 (line 4 of the file)",
            "\"abc\"",
        ],
    );
}

#[test]
fn non_numeric_target() {
    let (_d, path) = file("bad.csv", "x1,y\n1,2\n4,high\n");
    assert_has(
        &data_error(&spec(&path), &path),
        &["column 'y' is not numeric", "row 2", "\"high\""],
    );
}

#[test]
fn missing_values_reported() {
    let (_d, path) = file("m.csv", "a,b,y\n1,2,3\n4,,6\n7,8,9\n1,2,NaN\n5,NA,1\n");
    let msg = data_error(&spec(&path), &path);
    assert_has(
        &msg,
        &[
            "3 missing value(s)",
            "in 3 row(s)",
            "column 'b' at rows 2, 5",
            "column 'y' at row 4",
            "--drop-missing",
        ],
    );
}

#[test]
fn drop_missing_drops_rows() {
    let (_d, path) = file("m.csv", "a,b,y\n1,2,3\n4,,6\n7,8,9\n1,2,NaN\n5,3,1\n");
    let ds = load(&LoadSpec {
        drop_missing: true,
        ..spec(&path)
    })
    .expect("loads");
    assert_eq!(ds.n_train(), 3);
    assert_eq!(ds.y_train.as_slice(), &[3.0, 9.0, 1.0]);
    assert_eq!(ds.x_train[(1, 0)], 7.0);
    assert!(
        ds.notes
            .iter()
            .any(|n| n.contains("dropped 2 row(s) with missing values")),
        "{:?}",
        ds.notes
    );
}

#[test]
fn missing_value_in_unused_column_is_ignored() {
    let (_d, path) = file("m.csv", "id,a,y\nx,1,3\n,2,6\ny,3,7\n");
    let ds = load(&LoadSpec {
        features: Some(vec!["a".into()]),
        ..spec(&path)
    })
    .expect("loads");
    assert_eq!(ds.n_train(), 3);
}

#[test]
fn infinite_value() {
    let (_d, path) = file("inf.csv", "a,y\n1,2\n3,inf\n");
    assert_has(
        &data_error(&spec(&path), &path),
        &["column 'y'", "infinite", "row 2 (line 3 of the file)"],
    );
}

#[test]
fn unknown_target_column() {
    let (_d, path) = file("g.csv", GOOD);
    let s = LoadSpec {
        target: Some("z".into()),
        ..spec(&path)
    };
    assert_has(
        &data_error(&s, &path),
        &["target column 'z' does not exist", "'a', 'b', 'y'"],
    );
}

#[test]
fn unknown_feature_column() {
    let (_d, path) = file("g.csv", GOOD);
    let s = LoadSpec {
        features: Some(vec!["a".into(), "q".into()]),
        ..spec(&path)
    };
    assert_has(
        &data_error(&s, &path),
        &["'q'", "do not exist", "'a', 'b', 'y'"],
    );
}

#[test]
fn target_among_features() {
    let (_d, path) = file("g.csv", GOOD);
    let s = LoadSpec {
        features: Some(vec!["a".into(), "y".into()]),
        ..spec(&path)
    };
    assert_has(
        &data_error(&s, &path),
        &["target column 'y'", "among the features"],
    );
}

#[test]
fn chosen_target_and_features() {
    let (_d, path) = file("g.csv", GOOD);
    let s = LoadSpec {
        target: Some("a".into()),
        ..spec(&path)
    };
    let ds = load(&s).expect("loads");
    assert_eq!(ds.target_name, "a");
    assert_eq!(ds.feature_names, ["b", "y"]);
    assert_eq!(ds.y_train.as_slice(), &[1.0, 4.0, 7.0, 10.0]);
}

#[test]
fn train_test_column_mismatch() {
    let (dir, train) = file("train.csv", GOOD);
    let test = dir.path().join("test.csv");
    std::fs::write(&test, "a,c,y\n1,2,3\n").expect("write");
    let s = LoadSpec {
        test: Some(test.clone()),
        ..spec(&train)
    };
    let msg = data_error(&s, &test);
    assert_has(&msg, &["missing 'b'", "extra 'c'", "train.csv"]);
}

#[test]
fn train_and_test_files() {
    let (dir, train) = file("train.csv", GOOD);
    let test = dir.path().join("test.csv");
    std::fs::write(&test, "y,b,a\n1,2,3\n4,5,6\n").expect("write");
    let ds = load(&LoadSpec {
        test: Some(test),
        ..spec(&train)
    })
    .expect("loads");
    assert_eq!((ds.n_train(), ds.n_test(), ds.dim()), (4, 2, 2));
    // Columns are matched by name, not position.
    assert_eq!(ds.x_test.as_ref().map(|x| x[(0, 0)]), Some(3.0));
}

#[test]
fn constant_column_dropped_with_note() {
    let (_d, path) = file("c.csv", "a,k,b,y\n1,5,2,3\n4,5,5,6\n7,5,8,9\n");
    let ds = load(&spec(&path)).expect("loads");
    assert_eq!(ds.feature_names, ["a", "b"]);
    assert_eq!(ds.dim(), 2);
    assert!(
        ds.notes
            .iter()
            .any(|n| n.contains("dropped constant column(s) k")),
        "{:?}",
        ds.notes
    );
}

#[test]
fn all_features_constant() {
    let (_d, path) = file("c.csv", "a,k,y\n1,5,3\n1,5,6\n");
    assert_has(&data_error(&spec(&path), &path), &["constant", "'a', 'k'"]);
}

#[test]
fn split_is_seeded_and_reproducible() {
    let text: String = std::iter::once("x,y\n".to_string())
        .chain((0..50).map(|i| format!("{i},{}\n", i * i)))
        .collect();
    let (_d, path) = file("s.csv", &text);
    let with = |seed| {
        load(&LoadSpec {
            split: Some(0.7),
            seed,
            ..spec(&path)
        })
        .expect("loads")
    };
    let (a, b, c) = (with(1), with(1), with(2));
    assert_eq!(a.x_train, b.x_train);
    assert_eq!(a.y_test, b.y_test);
    assert_ne!(a.x_train, c.x_train);
    // Rows stay whole: y = x².
    for i in 0..a.n_train() {
        assert_eq!(a.y_train[i], a.x_train[(i, 0)].powi(2));
    }
    // Together the parts are the whole file.
    let mut all: Vec<f64> = a
        .x_train
        .iter()
        .chain(a.x_test.iter().flat_map(|x| x.iter()))
        .copied()
        .collect();
    all.sort_by(f64::total_cmp);
    assert_eq!(all, (0..50).map(f64::from).collect::<Vec<_>>());
}

#[test]
fn split_sizes() {
    let text: String = std::iter::once("x,y\n".to_string())
        .chain((0..10).map(|i| format!("{i},{i}\n")))
        .collect();
    let (_d, path) = file("s.csv", &text);
    let ds = load(&LoadSpec {
        split: Some(0.75),
        ..spec(&path)
    })
    .expect("loads");
    assert_eq!((ds.n_train(), ds.n_test()), (8, 2)); // round(7.5) = 8
    let none = load(&spec(&path)).expect("loads");
    assert_eq!((none.n_train(), none.n_test()), (10, 0));
    assert!(none.x_test.is_none());
}

#[test]
fn split_out_of_range_or_empty_part() {
    let (_d, path) = file("g.csv", GOOD);
    for f in [0.0, 1.0, 1.5, -0.2, f64::NAN] {
        assert_has(
            &input_error(&LoadSpec {
                split: Some(f),
                ..spec(&path)
            }),
            &["split"],
        );
    }
    // 4 rows: 0.05 → 0 training rows, 0.95 → 0 test rows; the file is named.
    let s = LoadSpec {
        split: Some(0.05),
        ..spec(&path)
    };
    assert_has(&data_error(&s, &path), &["0 training"]);
    let s = LoadSpec {
        split: Some(0.95),
        ..spec(&path)
    };
    assert_has(&data_error(&s, &path), &["0 test"]);
}

#[test]
fn integer_columns_accepted() {
    let (_d, path) = file("i.csv", "a,b,y\n1,2,3\n4,5,6\n7,8,-9\n");
    let ds = load(&spec(&path)).expect("loads");
    assert_eq!(ds.y_train.as_slice(), &[3.0, 6.0, -9.0]);
    assert_eq!(ds.x_train[(2, 1)], 8.0);
}

#[test]
fn parquet_round_trip() {
    use polars_core::prelude::*;
    use polars_io::prelude::*;
    let dir = TempDir::new().expect("temp dir");
    let path = dir.path().join("d.parquet");
    let mut df = df!(
        "a" => [1.5f64, 2.5, 3.5],
        "n" => [1i64, 2, 3],
        "y" => [0.1f64, 0.2, 0.3]
    )
    .expect("frame");
    let f = std::fs::File::create(&path).expect("create");
    ParquetWriter::new(f)
        .finish(&mut df)
        .expect("write parquet");
    let ds = load(&spec(&path)).expect("loads");
    assert_eq!(ds.feature_names, ["a", "n"]);
    assert_eq!(
        ds.x_train.row(1).iter().copied().collect::<Vec<_>>(),
        [2.5, 2.0]
    );
    assert_eq!(ds.y_train.as_slice(), &[0.1, 0.2, 0.3]);
}

#[test]
fn parquet_missing_values_and_text() {
    use polars_core::prelude::*;
    use polars_io::prelude::*;
    let dir = TempDir::new().expect("temp dir");
    let path = dir.path().join("d.pq");
    let mut df = df!(
        "a" => [Some(1.0f64), None, Some(3.0)],
        "s" => ["1", "two", "3"],
        "y" => [0.1f64, 0.2, 0.3]
    )
    .expect("frame");
    ParquetWriter::new(std::fs::File::create(&path).expect("create"))
        .finish(&mut df)
        .expect("write");
    let only_a = LoadSpec {
        features: Some(vec!["a".into()]),
        ..spec(&path)
    };
    assert_has(
        &data_error(&only_a, &path),
        &["column 'a' at row 2", "--drop-missing"],
    );
    assert_has(
        &data_error(&spec(&path), &path),
        &["column 's' is not numeric: row 2 has \"two\""],
    );
}

/// A Parquet file's column names lose the spaces around them as a CSV header's do, and
/// a column sgpw does not decode (binary here) keeps its name: a data set that uses it
/// is told the column's type, one that does not loads.
#[test]
fn parquet_names_trimmed_and_unusable_columns_named() {
    use polars_core::prelude::*;
    use polars_io::prelude::*;
    let dir = TempDir::new().expect("temp dir");
    let path = dir.path().join("d.parquet");
    let mut df = df!(
        " a " => [1.5f64, 2.5, 3.5],
        " blob" => [b"x".as_ref(), b"yy", b""],
        "y" => [0.1f64, 0.2, 0.4]
    )
    .expect("frame");
    ParquetWriter::new(std::fs::File::create(&path).expect("create"))
        .finish(&mut df)
        .expect("write");
    assert_has(
        &data_error(&spec(&path), &path),
        &["column 'blob' has Parquet type BYTE_ARRAY (binary, not text)"],
    );
    let only_a = LoadSpec {
        features: Some(vec!["a".into()]),
        ..spec(&path)
    };
    let ds = load(&only_a).expect("loads without the binary column");
    assert_eq!(ds.feature_names, ["a"]);
    assert_eq!(ds.y_train.as_slice(), &[0.1, 0.2, 0.4]);
    assert!(
        ds.notes.iter().any(|n| n.contains("' a ' → 'a'")),
        "{:?}",
        ds.notes
    );
}

#[test]
fn not_a_parquet_file() {
    let (_d, path) = file("x.parquet", "a,y\n1,2\n");
    assert_has(&data_error(&spec(&path), &path), &["Parquet"]);
}

#[test]
fn load_inputs_ignores_extra_columns() {
    let (_d, path) = file("in.csv", "b,junk,a,y\n1,x,2,3\n4,y,5,6\n");
    let x = load_inputs(&path, &["a".into(), "b".into()]).expect("loads");
    assert_eq!((x.nrows(), x.ncols()), (2, 2));
    assert_eq!((x[(1, 0)], x[(1, 1)]), (5.0, 4.0));
    let (_d2, all) = file("in.csv", "p,q\n1,2\n");
    assert_eq!(load_inputs(&all, &[]).expect("loads").ncols(), 2);
}

#[test]
fn load_inputs_reports_missing_features_and_values() {
    let (_d, path) = file("in.csv", "a,y\n1,3\n,6\n");
    match load_inputs(&path, &["a".into(), "b".into()]) {
        Err(Error::Data(msg)) => assert_has(
            &msg,
            &[&path.display().to_string(), "missing feature column(s) 'b'"],
        ),
        other => panic!("expected a data error, got {other:?}"),
    }
    match load_inputs(&path, &["a".into()]) {
        Err(Error::Data(msg)) => assert_has(&msg, &["column 'a' at row 2"]),
        other => panic!("expected a data error, got {other:?}"),
    }
}

#[test]
fn kin40k() {
    let root = Path::new("datasets/kin40k");
    let s = LoadSpec {
        test: Some(root.join("test.csv.gz")),
        ..spec(&root.join("train.csv.gz"))
    };
    let ds = load(&s).expect("kin40k loads");
    assert_eq!((ds.n_train(), ds.n_test(), ds.dim()), (10000, 30000, 8));
    assert_eq!(ds.target_name, "y");
    assert_eq!(ds.x_train[(0, 0)], 1.5519641e+00);
    assert!(ds.notes.is_empty(), "{:?}", ds.notes);
}

#[test]
fn elevators_constant_column() {
    let root = Path::new("datasets/elevators");
    let s = LoadSpec {
        test: Some(root.join("test.csv.gz")),
        ..spec(&root.join("train.csv.gz"))
    };
    let ds = load(&s).expect("elevators loads");
    assert_eq!((ds.n_train(), ds.n_test(), ds.dim()), (8752, 7847, 17));
    assert!(!ds.feature_names.iter().any(|f| f == "diffSaTime4"));
    assert_eq!(ds.x_test.as_ref().map(|x| x.ncols()), Some(17));
    assert!(
        ds.notes.iter().any(|n| n.contains("diffSaTime4")),
        "{:?}",
        ds.notes
    );
}

#[test]
fn generators_deterministic_per_seed() {
    for name in synthetic::NAMES {
        let a = synthetic::generate(name, 7).expect("generates");
        assert_eq!(
            a,
            synthetic::generate(name, 7).expect("generates"),
            "{name}"
        );
        assert_ne!(
            a[0].2,
            synthetic::generate(name, 8).expect("generates")[0].2,
            "{name}"
        );
    }
    assert_eq!(synthetic::spiral(3, 50), synthetic::spiral(3, 50));
    assert_ne!(synthetic::spiral(1, 50), synthetic::spiral(2, 50));
}

#[test]
fn generator_sizes_and_headers() {
    let sizes = |name: &str| {
        let t = synthetic::generate(name, 1).expect("generates");
        (
            t[0].0.clone(),
            t[0].2.len(),
            t[1].0.clone(),
            t[1].2.len(),
            t[0].1.clone(),
        )
    };
    let (tr, ntr, te, nte, h) = sizes("xsinx3");
    assert_eq!(
        (tr.as_str(), ntr, te.as_str(), nte),
        ("xsinx3_train.csv", 200, "xsinx3_test.csv", 500)
    );
    assert_eq!(h, ["x1", "y"]);
    let (_, ntr, _, nte, h) = sizes("spiral");
    assert_eq!(
        (ntr + nte, h),
        (1000, vec!["x1".to_string(), "x2".into(), "y".into()])
    );
    let (_, _, _, nte, _) = sizes("sinc");
    assert_eq!(nte, 500);
    assert!(matches!(
        synthetic::generate("nope", 1),
        Err(Error::Input(_))
    ));
}

#[test]
fn generator_values() {
    let t = synthetic::generate("sinc", 1).expect("generates");
    for row in t[0].2.iter().chain(&t[1].2) {
        assert!((-10.0..=10.0).contains(&row[0]));
        assert_eq!(row[1], row[0].sin() / row[0]);
    }
    let grid = &t[1].2;
    assert_eq!((grid[0][0], grid[499][0]), (-10.0, 10.0));
    assert_eq!(synthetic::sinc(0.0), 1.0);
    let x = synthetic::generate("xsinx3", 1).expect("generates");
    assert!(
        x.iter()
            .flat_map(|t| &t.2)
            .all(|r| r[0] > 0.0 && r[0] < 3.0)
    );
    // Test targets are the noiseless function (EigenGP §6.2 scores against it).
    assert!(x[1].2.iter().all(|r| r[1] == r[0] * (r[0].powi(3)).sin()));
    // Training noise has sd 0.5.
    let res: Vec<f64> = x[0]
        .2
        .iter()
        .map(|r| r[1] - synthetic::xsinx3(r[0]))
        .collect();
    let sd = (res.iter().map(|e| e * e).sum::<f64>() / res.len() as f64).sqrt();
    assert!((0.4..0.6).contains(&sd), "noise sd {sd}");
    // Spiral points lie near the curve: radius ≈ ½√φ ≤ ½√(6π) ≈ 2.17.
    assert!(
        synthetic::spiral(1, 1000)
            .iter()
            .all(|r| r[0].hypot(r[1]) < 2.17 + 0.6)
    );
}

#[test]
fn written_csv_loads_back_exactly() {
    let dir = TempDir::new().expect("temp dir");
    let tables = synthetic::generate("spiral", 4).expect("generates");
    for (name, header, rows) in &tables {
        synthetic::write_csv(&dir.path().join(name), header, rows).expect("writes");
    }
    let s = LoadSpec {
        test: Some(dir.path().join("spiral_test.csv")),
        ..spec(&dir.path().join("spiral_train.csv"))
    };
    let ds = load(&s).expect("loads");
    let rows = &tables[0].2;
    assert_eq!(ds.n_train(), rows.len());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            [ds.x_train[(i, 0)], ds.x_train[(i, 1)], ds.y_train[i]],
            r[..]
        );
    }
}

#[test]
fn duplicate_column_name() {
    let (_d, path) = file("dup.csv", "a,b,a,y\n1,2,3,4\n5,6,7,8\n");
    assert_has(
        &data_error(&spec(&path), &path),
        &["column name 'a' appears more than once"],
    );
}

#[test]
fn not_comma_separated() {
    let (_d, path) = file("semi.csv", "a;b;y\n1;2;3\n4;5;6\n");
    assert_has(
        &data_error(&spec(&path), &path),
        &["separated by ';'", "comma-separated"],
    );
}

#[test]
fn ragged_line() {
    // the line is named, in a file read whole and in one read in blocks
    // (a quoted comma is inside its field, not between fields)
    let (_d, path) = file("r.csv", "a,\"b,c\",y\n1,2,3\n1,2,3\n4,5,6,7\n");
    let msg = data_error(&spec(&path), &path);
    assert_has(&msg, &["line 4 has 4 fields but the header has 3"]);
    assert!(!msg.contains("truncate_ragged_lines"), "{msg}");
    let e = sgpw::data::load::for_each_input_chunk(&path, &[], 1, &mut |_, _| Ok(()))
        .expect_err("refused");
    assert!(e.to_string().contains("line 4 has 4 fields"), "{e}");
}

/// A constant target is refused before any work, naming the file and the column —
/// the whole column, and the training rows of a split.
#[test]
fn constant_target_is_refused_naming_file_and_column() {
    let (_d, path) = file("c.csv", "a,b,y\n1,2,3.5\n4,5,3.5\n7,8,3.5\n2,2,3.5\n");
    for s in [
        spec(&path),
        LoadSpec {
            split: Some(0.5),
            ..spec(&path)
        },
    ] {
        assert_has(
            &data_error(&s, &path),
            &["the target column 'y'", "is constant", "3.5", "--target"],
        );
    }
    // another column as target is fine
    let ds = load(&LoadSpec {
        target: Some("a".into()),
        ..spec(&path)
    })
    .expect("loads");
    assert_eq!(ds.target_name, "a");
    // a target that varies in the file but not in the rows a split trains on
    let mut text = String::from("a,y\n");
    for i in 0..10 {
        text.push_str(&format!("{i},{}\n", if i == 0 { 2 } else { 1 }));
    }
    let (_d2, path) = file("s.csv", &text);
    let errors: Vec<String> = (0..40)
        .filter_map(|seed| {
            load(&LoadSpec {
                split: Some(0.5),
                seed,
                ..spec(&path)
            })
            .err()
            .map(|e| e.to_string())
        })
        .collect();
    assert!(!errors.is_empty() && errors.len() < 40, "{errors:?}");
    for e in &errors {
        assert_has(
            e,
            &["in the 5 training rows of the split 0.5", "is constant"],
        );
    }
}

/// Targets whose variance does not fit in f64 are refused with what to do; one row is
/// not a data set to fit.
#[test]
fn targets_too_wide_or_too_narrow_for_f64_and_a_single_row() {
    for (scale, words) in [
        ("e300", ["overflows", "divide the column by a power of ten"]),
        (
            "e-300",
            ["underflows", "multiply the column by a power of ten"],
        ),
    ] {
        let text = format!("a,y\n1,1{scale}\n2,3{scale}\n3,2{scale}\n");
        let (_d, path) = file("h.csv", &text);
        let msg = data_error(&spec(&path), &path);
        assert_has(&msg, &["the target column 'y'", words[0], words[1]]);
    }
    let (_d, path) = file("one.csv", "a,y\n1,2\n");
    assert_has(
        &data_error(&spec(&path), &path),
        &["single row", "at least two rows"],
    );
}

/// Spaces around header names are removed (with a note), also from the names asked
/// for; a name not found is shown quoted with the closest column suggested.
#[test]
fn header_names_are_trimmed_and_unknown_names_suggest_the_closest() {
    let (_d, path) = file(
        "sp.csv",
        "usr,  lread,  lwrite, y\n1,2,3,4\n2,3,1,5\n3,1,2,7\n",
    );
    let ds = load(&LoadSpec {
        features: Some(vec!["usr".into(), " lread".into()]),
        target: Some("y ".into()),
        ..spec(&path)
    })
    .expect("loads");
    assert_eq!(ds.feature_names, ["usr", "lread"]);
    assert_eq!(ds.target_name, "y");
    assert!(
        ds.notes
            .iter()
            .any(|n| n.contains("'  lread' → 'lread'") && n.contains("' y' → 'y'")),
        "{:?}",
        ds.notes
    );
    let msg = data_error(
        &LoadSpec {
            features: Some(vec!["usr".into(), "lreed".into()]),
            ..spec(&path)
        },
        &path,
    );
    assert_has(
        &msg,
        &[
            "'lreed' do not exist",
            "did you mean 'lread'?",
            "the columns are: 'usr', 'lread', 'lwrite', 'y'",
        ],
    );
    let msg = data_error(
        &LoadSpec {
            target: Some("Y".into()),
            ..spec(&path)
        },
        &path,
    );
    assert_has(
        &msg,
        &["target column 'Y' does not exist", "did you mean 'y'?"],
    );
    // the model's input names match the trimmed header when predicting
    let x = load_inputs(&path, &["lwrite".into(), "usr".into()]).expect("reads");
    assert_eq!((x[(0, 0)], x[(0, 1)]), (3.0, 1.0));
    // names equal once trimmed are one name twice
    let (_d, path) = file("d.csv", "a, a,y\n1,2,3\n2,3,5\n");
    assert_has(
        &data_error(&spec(&path), &path),
        &["column name 'a' appears more than once", "spaces"],
    );
}

/// A trailing comma on every line makes an empty column without a name: dropped with
/// a note. A column with values but no name is refused where it would be used.
#[test]
fn unnamed_columns() {
    let (_d, path) = file("t.csv", "a,b,y,\r\n1,2,3,\r\n4,5,7,\r\n7,8,8,\r\n");
    let ds = load(&spec(&path)).expect("loads");
    assert_eq!(
        (ds.feature_names.clone(), ds.target_name.clone()),
        (vec!["a".to_string(), "b".into()], "y".into())
    );
    assert!(
        ds.notes
            .iter()
            .any(|n| n.contains("neither a name nor a value")),
        "{:?}",
        ds.notes
    );
    let (_d, path) = file("u.csv", "a,,y\n1,2,3\n4,5,7\n7,8,8\n");
    assert_has(
        &data_error(&spec(&path), &path),
        &["column 2 has no name in the header but has values"],
    );
    let ds = load(&LoadSpec {
        features: Some(vec!["a".into()]),
        ..spec(&path)
    })
    .expect("an unused unnamed column is no problem");
    assert_eq!(ds.dim(), 1);
}

/// A target whose spread is near 1e153 (its squared deviations sum past f64's range,
/// so the plain standard deviation is infinite) standardizes and fits with finite
/// results.
#[test]
fn a_target_near_1e153_fits_with_finite_results() {
    let mut text = String::from("x,y\n");
    for i in 0..360 {
        let x = i as f64 / 36.0;
        text.push_str(&format!("{x},{:e}\n", 1.2e153 * x.sin()));
    }
    let (_d, path) = file("big.csv", &text);
    let ds = load(&LoadSpec {
        split: Some(0.8),
        ..spec(&path)
    })
    .expect("loads");
    let plain: f64 = ds.y_train.iter().map(|v| v * v).sum();
    assert!(
        plain.is_infinite(),
        "the plain sum must overflow for this test"
    );
    let spec = sgpw::run_spec::RunSpec {
        method: "fitc".into(),
        m: 8,
        seed: 1,
        iters: 40,
        standardize: true,
        options: Default::default(),
    }
    .check(ds.n_train())
    .expect("valid");
    let ctx = sgpw::run_context::RunContext::quiet(sgpw::exec::Exec::default());
    let r = sgpw::train::fit(&ds, &spec, &ctx).expect("fits");
    let t = r.test.expect("scored");
    let sd = r
        .model
        .standardize
        .as_ref()
        .expect("standardized")
        .target_scale;
    assert!(
        sd.is_finite() && sd > 5e152 && sd < 1.2e153,
        "target sd {sd}"
    );
    assert!(r.nlml.is_finite() && r.trace.iter().all(|v| v.is_finite()));
    assert!(
        t.nmse.is_some_and(|v| v < 0.1) && t.mnlp.is_finite() && t.mse.is_finite(),
        "{t:?}"
    );
    assert!(r.constant_mnlp.is_some_and(f64::is_finite));
}

/// A Parquet file pandas wrote (tests/fixtures/parquet/pandas/, `make_pandas.py`).
fn pandas_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/parquet/pandas")
        .join(name)
}

#[test]
fn a_pandas_index_column_is_neither_target_nor_input_unless_named() {
    // set_index("longitude") stores 'longitude' last; index=True stores
    // '__index_level_0__' last: the target is 'value' in both, the inputs the others
    for (file, index, inputs) in [
        ("set_index.parquet", "longitude", &["latitude", "rooms"][..]),
        (
            "index_true.parquet",
            "__index_level_0__",
            &["longitude", "latitude", "rooms"][..],
        ),
    ] {
        let path = pandas_file(file);
        let ds = load(&spec(&path)).expect("loads");
        assert_eq!(ds.target_name, "value", "{file}");
        assert_eq!(ds.feature_names, inputs, "{file}");
        assert!(
            ds.notes
                .iter()
                .any(|n| n.contains(&format!("ignored the pandas index column(s) '{index}'"))),
            "{file}: {:?}",
            ds.notes
        );
        // named, an index column is used
        let mut features: Vec<String> = inputs.iter().map(|s| s.to_string()).collect();
        features.push(index.into());
        let named = load(&LoadSpec {
            features: Some(features.clone()),
            ..spec(&path)
        })
        .expect("loads");
        assert_eq!(named.feature_names, features, "{file}");
        assert!(named.notes.iter().all(|n| !n.contains("pandas index")));
        let as_target = load(&LoadSpec {
            target: Some(index.into()),
            ..spec(&path)
        })
        .expect("loads");
        assert_eq!(as_target.target_name, index, "{file}");
        assert!(!as_target.feature_names.contains(&index.to_string()));
    }
    // a RangeIndex is a description in the metadata, not a column
    let ds = load(&spec(&pandas_file("range_index.parquet"))).expect("loads");
    assert_eq!(ds.target_name, "value");
    assert_eq!(ds.feature_names, ["latitude", "rooms"]);
    assert!(ds.notes.is_empty(), "{:?}", ds.notes);
}

#[test]
fn prediction_inputs_of_a_pandas_file_leave_its_index_out() {
    let x = load_inputs(&pandas_file("set_index.parquet"), &[]).expect("loads");
    assert_eq!(x.ncols(), 3, "latitude, rooms, value; not longitude");
}

#[test]
fn na_tokens_are_missing_values_in_csv_and_gzipped_csv() {
    use std::io::Write;
    let text = "a,b,y\n1,2,3\n4,n/a,6\n7,?,9\n1,2,NA\n5,3,1\n6,#N/A,2\n";
    let dir = TempDir::new().expect("temp dir");
    let plain = dir.path().join("m.csv");
    std::fs::write(&plain, text).expect("write");
    let gz = dir.path().join("m.csv.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).expect("gzip");
    std::fs::write(&gz, enc.finish().expect("gzip")).expect("write");
    for path in [&plain, &gz] {
        let msg = data_error(&spec(path), path);
        assert_has(
            &msg,
            &[
                "4 missing value(s)",
                "column 'b' at rows 2, 3, 6",
                "column 'y' at row 4",
                "--drop-missing",
            ],
        );
        let ds = load(&LoadSpec {
            drop_missing: true,
            ..spec(path)
        })
        .expect("loads");
        assert_eq!(ds.y_train.as_slice(), &[3.0, 1.0], "{}", path.display());
    }
}
