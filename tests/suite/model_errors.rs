//! An edited model file is reported at the line that is wrong: fitted models written
//! by sgpw, each edited one way, read back with `read_model` (the reader of `predict`,
//! `nlml` and `stream`). The checks say where they are (table, key, row) and the reader
//! finds that line in the file; a count that disagrees with the others is blamed, not
//! the table that happens to be checked first.

use crate::common;
use common::*;
use nalgebra::DVector;
use sgpw::data::Dataset;
use sgpw::methods;
use sgpw::run_spec::{MethodOptions, RunSpec};

fn fitted(method: &str, options: MethodOptions) -> String {
    let train = toy_data(60, 3, 7);
    let ds = Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into(), "c".into()],
        target_name: "y".into(),
        x_train: train.x.clone(),
        y_train: DVector::from_vec(train.y.clone()),
        x_test: None,
        y_test: None,
        notes: vec![],
    };
    let spec = RunSpec {
        method: method.into(),
        m: 4,
        seed: 1,
        iters: 5,
        standardize: true,
        options,
    };
    let (r, _) = fit(&ds, &spec);
    r.expect("fits").model.to_toml().expect("writes")
}

/// The line (1-based) of the first line of `text` that starts with `start`.
fn line(text: &str, start: &str) -> usize {
    1 + text
        .lines()
        .position(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no line starts with {start}:\n{text}"))
}

/// `text` with the first line starting with `start` replaced by `with`.
fn edit(text: &str, start: &str, with: &str) -> String {
    let n = line(text, start) - 1;
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i == n {
                format!("{with}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// The first value of a `key = [a, b, …]` line dropped.
fn drop_first(text: &str, key: &str) -> String {
    let l = text
        .lines()
        .find(|l| l.starts_with(&format!("{key} = [")))
        .unwrap_or_else(|| panic!("no {key} line"));
    let comma = l.find(',').expect("two values or more");
    let open = l.find('[').expect("a list");
    edit(
        text,
        &format!("{key} = ["),
        &format!("{}{}", &l[..=open], l[comma + 1..].trim_start()),
    )
}

/// Read `text` as a model file; the error message.
fn error(text: &str) -> String {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("model.toml");
    std::fs::write(&path, text).expect("writes");
    match methods::read_model(&path) {
        Ok(_) => panic!("the edited model passed:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn assert_at(e: &str, line: usize, says: &str) {
    assert!(
        e.contains(&format!(": line {line}: ")) && e.contains(says),
        "expected line {line} and «{says}»: {e}"
    );
}

#[test]
fn edits_of_a_fitc_model_name_their_line() {
    let text = fitted("fitc", MethodOptions::default());
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("ok.toml"), &text).expect("writes");
    methods::read_model(&dir.path().join("ok.toml")).expect("the model as written reads");

    // one lengthscale removed: the lengthscales are wrong, not [standardize]
    let e = error(&drop_first(&text, "lengthscales"));
    assert_at(
        &e,
        line(&text, "lengthscales"),
        "[hyper] lengthscales has 2 values",
    );
    assert!(
        e.contains("3 inputs") && e.contains("[inducing] points rows"),
        "{e}"
    );
    // one centre removed: input_center, not the lengthscales
    let e = error(&drop_first(&text, "input_center"));
    assert_at(
        &e,
        line(&text, "input_center"),
        "[standardize] input_center has 2",
    );
    // one name removed from inputs
    let e = error(&drop_first(&text, "inputs"));
    assert_at(&e, line(&text, "inputs"), "inputs has 2 values");
    // a negative noise variance
    let e = error(&edit(&text, "noise_variance", "noise_variance = -1.0"));
    assert_at(
        &e,
        line(&text, "noise_variance"),
        "noise_variance must be positive",
    );
    // one pseudo-input with a value short
    let points = line(&text, "points");
    let short = edit(
        &text,
        "points = [[",
        "points = [[0.5, 0.5], [0.1, 0.2, 0.3]]",
    );
    let e = error(&short);
    assert_at(&e, points, "[inducing] points rows has 2 values");
    // a misspelt table
    let e = error(&text.replace("[inducing]", "[inducng]"));
    assert_at(
        &e,
        line(&text, "[inducing]"),
        "[inducng] is not part of any method",
    );
    // a misspelt key inside the method's table
    let e = error(&text.replace("points = [[", "point = [["));
    assert_at(&e, points, "unknown field `point`");
    // another method's table
    let e = error(&format!(
        "{text}\n[pseudo_noise]\nh = [0.1, 0.1, 0.1, 0.1]\n"
    ));
    assert_at(
        &e,
        text.lines().count() + 2,
        "[pseudo_noise] does not apply to method 'fitc' (it is read by spgp-hs, spgp-dr)",
    );
    // an unknown method
    let e = error(&text.replace("method = \"fitc\"", "method = \"fitcc\""));
    assert_at(&e, 1, "unknown method 'fitcc'");
}

#[test]
fn edits_of_other_families_name_their_line() {
    let hs = fitted("spgp-hs", MethodOptions::default());
    let e = error(&drop_first(&hs, "h"));
    assert_at(
        &e,
        line(&hs, "h = ["),
        "[pseudo_noise] h has 3 values, expected 4",
    );
    let e = error(&edit(&hs, "h = [", "h = [0.1, 0.1, -0.1, 0.1]"));
    assert_at(&e, line(&hs, "h = ["), "≥ 0");

    let tfif = fitted("tfifgp", MethodOptions::default());
    let e = error(&drop_first(&tfif, "input_mean"));
    assert_at(&e, line(&tfif, "input_mean"), "input_mean has 2 values");
    let e = error(&drop_first(&tfif, "window_widths"));
    assert_at(&e, line(&tfif, "window_widths"), "window_widths");

    let eig = fitted("eigengp-joint", MethodOptions::default());
    let e = error(&drop_first(&eig, "weights"));
    assert_at(&e, line(&eig, "weights"), "[eigen] weights holds 3 values");
}
