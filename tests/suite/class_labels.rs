//! A binary target of two labels of any kind — text ("yes"/"no"), booleans — read as
//! classes by one rule (`likelihoods::ClassNames`: the labels sorted, the second the
//! positive class): fitted end to end, its test file mapped by the training labels, a
//! third or unseen label refused at its row, the labels kept in the model file and
//! written by `sgpw predict`, and recognised as binary by the app.

use sgpw::data::{LoadSpec, load_for_fit, load_with_progress};
use sgpw::likelihoods::LikelihoodKind;
use sgpw::model_file::ModelFile;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

fn sgpw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .expect("runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Rows (x1, x2) whose class is "yes" where x1 + x2² > 1 (a fixed pattern, no noise),
/// written with `label(class)` as the target cell; `extra` lines appended.
fn labelled_csv(dir: &Path, name: &str, n: usize, offset: usize, extra: &str) -> PathBuf {
    let mut text = String::from("x1,x2,answer\n");
    for i in 0..n {
        let k = i + offset;
        let x1 = ((k * 37) % 101) as f64 / 50.0 - 1.0;
        let x2 = ((k * 53) % 97) as f64 / 48.0 - 1.0;
        let yes = x1 + 1.5 * x2 * x2 > 0.6;
        text.push_str(&format!("{x1},{x2},{}\n", if yes { "yes" } else { "no" }));
    }
    text.push_str(extra);
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

fn spec(train: &Path, test: Option<&Path>) -> LoadSpec {
    LoadSpec {
        train: train.to_path_buf(),
        test: test.map(Path::to_path_buf),
        ..Default::default()
    }
}

/// `sgpw fit --likelihood bernoulli` on a CSV whose target is yes/no: the mapping is
/// reported, the test file scored through it, the model keeps the two labels and
/// `sgpw predict` writes the predicted label beside p1. (Before: "column 'answer' is
/// not numeric".)
#[test]
fn a_yes_no_target_fits_end_to_end_and_predict_writes_labels() {
    let dir = TempDir::new().expect("dir");
    let train = labelled_csv(dir.path(), "train.csv", 160, 0, "");
    let test = labelled_csv(dir.path(), "test.csv", 60, 500, "");
    let model = dir.path().join("m.toml");
    let (train_s, test_s, model_s) = (
        train.display().to_string(),
        test.display().to_string(),
        model.display().to_string(),
    );
    let out = sgpw(&[
        "fit",
        "--train",
        &train_s,
        "--test",
        &test_s,
        "--method",
        "svgp",
        "--m",
        "12",
        "--likelihood",
        "bernoulli",
        "--save-model",
        &model_s,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("classes: no → 0, yes → 1 (positive: p(y = 1) is the probability of yes)"),
        "{err}"
    );
    let report = stdout(&out);
    let line = report
        .lines()
        .find(|l| l.contains("error rate"))
        .unwrap_or_else(|| panic!("no test scores: {report}"));
    let rate: f64 = line
        .split("error rate")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .expect("error rate");
    assert!(rate < 0.2, "{line}");
    let text = std::fs::read_to_string(&model).expect("model");
    assert!(
        text.contains("labels = [0.0, 1.0]\nclasses = [\"no\", \"yes\"]\n"),
        "{text}"
    );
    let out = sgpw(&["predict", "--model", &model_s, "--input", &test_s]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = stdout(&out);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("latent_mean,latent_var,p1,class"));
    let (mut rows, mut agree) = (0, 0);
    let truth = std::fs::read_to_string(&test).expect("test");
    for (row, want) in lines.zip(truth.lines().skip(1)) {
        let cells: Vec<&str> = row.split(',').collect();
        let p1: f64 = cells[2].parse().expect("p1");
        assert_eq!(cells[3], if p1 > 0.5 { "yes" } else { "no" }, "{row}");
        rows += 1;
        agree += usize::from(want.ends_with(cells[3]));
    }
    assert_eq!(rows, 60);
    assert!(agree >= 48, "{agree} of 60 predicted labels right");
}

/// A Parquet column of booleans is two classes, false → 0 and true → 1, named in the
/// model file and in `predict`'s label column. (Before: read as the numbers 0/1, with
/// no labels in the model and no label column.)
#[test]
fn a_boolean_parquet_target_is_two_named_classes() {
    use polars_core::prelude::*;
    use polars_io::prelude::*;
    let dir = TempDir::new().expect("dir");
    let path = dir.path().join("d.parquet");
    let n = 80;
    let x1: Vec<f64> = (0..n).map(|i| (i as f64 / n as f64) * 6.0 - 3.0).collect();
    let x2: Vec<f64> = (0..n).map(|i| ((i * 7) % n) as f64 / n as f64).collect();
    let y: Vec<bool> = x1.iter().map(|v| v.sin() > 0.0).collect();
    let mut df = df!("x1" => &x1, "x2" => &x2, "spam" => &y).expect("frame");
    ParquetWriter::new(std::fs::File::create(&path).expect("create"))
        .finish(&mut df)
        .expect("write");
    let ds =
        load_for_fit(&spec(&path, None), LikelihoodKind::Bernoulli, &mut |_| {}).expect("loads");
    let classes = ds.classes.as_ref().expect("classes");
    assert_eq!(classes.names, ["false", "true"]);
    let codes: Vec<f64> = y.iter().map(|b| f64::from(u8::from(*b))).collect();
    assert_eq!(ds.y_train.as_slice(), &codes[..]);
    // still the numbers 0 and 1 to a Gaussian fit, as before, and said so
    let gauss = load_for_fit(&spec(&path, None), LikelihoodKind::Gaussian, &mut |_| {})
        .expect("a Gaussian fit takes booleans as 0/1");
    assert!(gauss.classes.is_none());
    assert_eq!(gauss.y_train.as_slice(), &codes[..]);
    assert!(
        gauss
            .notes
            .iter()
            .any(|n| n.contains("'spam' has only the values 0 and 1")),
        "{:?}",
        gauss.notes
    );

    let model = dir.path().join("m.toml");
    let (p, m) = (path.display().to_string(), model.display().to_string());
    let out = sgpw(&[
        "fit",
        "--train",
        &p,
        "--method",
        "svgp",
        "--m",
        "8",
        "--likelihood",
        "bernoulli",
        "--save-model",
        &m,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&model).expect("model");
    assert!(text.contains("classes = [\"false\", \"true\"]"), "{text}");
    let out = sgpw(&["predict", "--model", &m, "--input", &p]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = stdout(&out);
    assert!(
        csv.starts_with("latent_mean,latent_var,p1,class\n"),
        "{csv}"
    );
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.ends_with(",true") || l.ends_with(",false"))
    );
}

/// A third label is refused before any work, naming the file, row, line and the three
/// labels; a missing label names its row as any missing cell does.
#[test]
fn a_third_label_or_a_missing_one_is_refused_at_its_row() {
    let dir = TempDir::new().expect("dir");
    let third = labelled_csv(dir.path(), "third.csv", 30, 0, "0.5,0.5,maybe\n");
    let t = third.display().to_string();
    let out = sgpw(&[
        "fit",
        "--train",
        &t,
        "--method",
        "svgp",
        "--m",
        "4",
        "--likelihood",
        "bernoulli",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    for want in [
        t.as_str(),
        "target column 'answer' at row 31 (line 32 of the file)",
        "a third label \"maybe\" (the column has \"maybe\", \"no\" and \"yes\")",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    let missing = labelled_csv(dir.path(), "missing.csv", 30, 0, "0.5,0.5,NA\n");
    let e = load_for_fit(
        &spec(&missing, None),
        LikelihoodKind::Bernoulli,
        &mut |_| {},
    )
    .expect_err("missing label")
    .to_string();
    assert!(e.contains("column 'answer' at row 31"), "{e}");
}

/// The test file's labels are the training file's classes: one it does not have is
/// refused naming the test file and its row.
#[test]
fn a_test_label_unseen_in_training_is_refused() {
    let dir = TempDir::new().expect("dir");
    let train = labelled_csv(dir.path(), "train.csv", 40, 0, "");
    let test = labelled_csv(dir.path(), "test.csv", 10, 100, "0.1,0.2,Yes\n");
    let e = load_for_fit(
        &spec(&train, Some(&test)),
        LikelihoodKind::Bernoulli,
        &mut |_| {},
    )
    .expect_err("unseen label")
    .to_string();
    assert!(e.starts_with(&test.display().to_string()), "{e}");
    assert!(
        e.contains(
            "at row 11 (line 12 of the file): the label \"Yes\" is neither of the training \
             labels \"no\" and \"yes\""
        ),
        "{e}"
    );
    // the classes come from the training file even where the test file has one label
    let test = labelled_csv(dir.path(), "only.csv", 0, 0, "0.1,0.2,yes\n0.3,0.1,yes\n");
    let ds = load_for_fit(
        &spec(&train, Some(&test)),
        LikelihoodKind::Bernoulli,
        &mut |_| {},
    )
    .expect("loads");
    assert_eq!(ds.y_test.expect("test").as_slice(), &[1.0, 1.0]);
}

/// Another likelihood refuses a target of words, naming --likelihood; a session's or
/// the app's data set (its likelihood not yet known) loads with its classes, and a
/// Gaussian run on it is refused the same way.
#[test]
fn other_likelihoods_refuse_a_text_target_naming_the_option() {
    let dir = TempDir::new().expect("dir");
    let train = labelled_csv(dir.path(), "train.csv", 40, 0, "");
    let t = train.display().to_string();
    for lik in ["gaussian", "poisson"] {
        let out = sgpw(&[
            "fit",
            "--train",
            &t,
            "--method",
            "svgp",
            "--m",
            "4",
            "--likelihood",
            lik,
        ]);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "the target column 'answer' holds the labels \"no\" and \"yes\", not numbers: \
                 the {lik} likelihood needs numbers (to classify them, use --likelihood bernoulli)"
            )),
            "{err}"
        );
    }
    let ds = load_with_progress(&spec(&train, None), &mut |_| {}).expect("loads");
    assert_eq!(ds.classes.as_ref().expect("classes").names, ["no", "yes"]);
    let Err(e) = sgpw::train::prepare_for(&ds, true, LikelihoodKind::Gaussian) else {
        panic!("a Gaussian run on labels is refused")
    };
    let e = e.to_string();
    assert!(e.contains("--likelihood bernoulli"), "{e}");
}

/// A model of a text target reads back and writes again byte for byte, its classes
/// included; a numeric 0/1 bernoulli model has no `classes` key and round-trips as
/// before. A hand-edited `classes` that breaks the sorted rule is refused.
#[test]
fn model_files_with_and_without_classes_round_trip() {
    let dir = TempDir::new().expect("dir");
    let words = labelled_csv(dir.path(), "words.csv", 60, 0, "");
    let text = std::fs::read_to_string(&words).expect("read");
    let numbers = dir.path().join("numbers.csv");
    std::fs::write(
        &numbers,
        text.replace(",yes\n", ",1\n").replace(",no\n", ",0\n"),
    )
    .expect("write");
    for (data, classes) in [(&words, true), (&numbers, false)] {
        let model = dir.path().join("m.toml");
        let (d, m) = (data.display().to_string(), model.display().to_string());
        let out = sgpw(&[
            "fit",
            "--train",
            &d,
            "--method",
            "svgp",
            "--m",
            "6",
            "--likelihood",
            "bernoulli",
            "--save-model",
            &m,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = std::fs::read_to_string(&model).expect("model");
        assert_eq!(text.contains("classes = "), classes, "{text}");
        let parsed = ModelFile::parse(&text).expect("reads back");
        assert_eq!(parsed.to_toml().expect("writes"), text);
        let table = parsed.likelihood.as_ref().expect("[likelihood]");
        assert_eq!(table.labels, Some([0.0, 1.0]));
        if classes {
            let swapped = text.replace("[\"no\", \"yes\"]", "[\"yes\", \"no\"]");
            let Err(e) = ModelFile::parse(&swapped).expect("parses").check() else {
                panic!("unsorted classes are refused")
            };
            let e = e.to_string();
            assert!(e.contains("classes = [\"yes\", \"no\"]"), "{e}");
        }
    }
}

/// A session whose data set's target is yes/no: a bernoulli run on it works, and the
/// report scores it.
#[test]
fn a_session_runs_bernoulli_on_a_yes_no_target() {
    let dir = TempDir::new().expect("dir");
    let train = labelled_csv(dir.path(), "train.csv", 120, 0, "");
    let session = dir.path().join("s.toml");
    let text = format!(
        "schema_version = {}\nname = \"words\"\n\n[[datasets]]\nname = \"w\"\ntrain = \"{}\"\n\
         split = 0.75\n\n[[runs]]\ndataset = \"w\"\nmethod = \"svgp\"\nm = [8]\n\n\
         [runs.options]\nlikelihood = \"bernoulli\"\n",
        sgpw::session::SCHEMA_VERSION,
        train.display()
    );
    std::fs::write(&session, text).expect("write");
    let s = session.display().to_string();
    let out = sgpw(&["run", &s, "--jobs", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sgpw(&["report", &s, "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v[0]["likelihood"], "bernoulli", "{v}");
    assert!(v[0]["error_rate"].as_f64().is_some_and(|e| e < 0.25), "{v}");
}

/// The app: a data set whose target is yes/no is recognised as binary when it loads
/// (named by its labels) and the new-runs form on it chooses likelihood bernoulli.
#[test]
fn the_app_offers_bernoulli_for_a_yes_no_target() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use sgpw::session::Session;
    use sgpw::tui::state::{App, Dialog, Event};
    let dir = TempDir::new().expect("dir");
    let train = labelled_csv(dir.path(), "train.csv", 40, 0, "");
    let session = Session::parse(&format!(
        "schema_version = 1\nname = \"w\"\n\n[[datasets]]\nname = \"w\"\ntrain = \"{}\"\n",
        train.display()
    ))
    .expect("session");
    let (mut app, _) = App::new(
        dir.path().join("s.toml"),
        session,
        sgpw::tui::theme::Theme {
            color: false,
            ascii: false,
        },
    );
    app.message.clear();
    let data = load_with_progress(&spec(&train, None), &mut |_| {}).expect("loads");
    app.update(Event::DataLoaded {
        name: "w".into(),
        epoch: 1,
        result: Ok(std::sync::Arc::new(data)),
    });
    assert!(
        app.message.contains("its target has two values (no, yes)"),
        "{}",
        app.message
    );
    app.update(Event::Key(KeyEvent::new(
        KeyCode::Char('n'),
        KeyModifiers::NONE,
    )));
    let Some(Dialog::NewRuns(f)) = &app.dialog else {
        panic!("no form")
    };
    assert_eq!(
        f.get("opt:likelihood").expect("field").display(),
        "bernoulli"
    );
}

/// A numeric target of two values fitted by a regression likelihood is noted — the fit
/// runs, but class labels taken as numbers give no error to catch them (a first user's
/// 0/1 column) — and the note names the target and the option; a classification fit,
/// or a target of three values, is not noted.
#[test]
fn a_two_valued_target_of_a_regression_fit_is_noted() {
    let dir = TempDir::new().expect("dir");
    let write = |name: &str, values: &[f64]| {
        let mut text = String::from("x1,x2,label\n");
        for i in 0..60 {
            let v = values[i % values.len()];
            text.push_str(&format!(
                "{},{},{v}\n",
                i as f64 / 60.0,
                ((i * 7) % 60) as f64
            ));
        }
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path
    };
    let two = write("two.csv", &[0.0, 1.0, 1.0]);
    let three = write("three.csv", &[0.0, 1.0, 2.0]);
    let said = |path: &Path, kind: LikelihoodKind| {
        load_for_fit(&spec(path, None), kind, &mut |_| {})
            .expect("loads")
            .notes
            .into_iter()
            .filter(|n| n.contains("has only the values"))
            .collect::<Vec<_>>()
    };
    let notes = said(&two, LikelihoodKind::Gaussian);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("'label' has only the values 0 and 1")
            && notes[0].contains("gaussian likelihood")
            && notes[0].contains("--likelihood bernoulli"),
        "{notes:?}"
    );
    assert_eq!(said(&two, LikelihoodKind::StudentT).len(), 1);
    assert!(said(&two, LikelihoodKind::Bernoulli).is_empty());
    assert!(said(&two, LikelihoodKind::Poisson).is_empty());
    assert!(said(&three, LikelihoodKind::Gaussian).is_empty());
    // and `sgpw fit` prints it
    let p = two.display().to_string();
    let out = sgpw(&[
        "fit", "--train", &p, "--method", "vfe", "--m", "5", "--iters", "5",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("note: the target 'label' has only the values 0 and 1"),
        "{}",
        stderr(&out)
    );
}
