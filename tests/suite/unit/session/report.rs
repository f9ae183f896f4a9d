use sgpw::session::Session;
use sgpw::session::report::*;

#[test]
fn a_footnote_names_a_run_once_with_the_data_sets_it_covers() {
    let names = [
        "a m=10 seed 1",
        "a m=10 seed 1",
        "b m=20 seed 1",
        "a m=10 seed 1",
    ];
    assert_eq!(
        counted(names.iter().map(|s| s.to_string()).collect()),
        "a m=10 seed 1 (in 3 data sets); b m=20 seed 1"
    );
}

#[test]
fn generations_merge_and_cells_average() {
    let text = r#"
schema_version = 1
name = "t"
[[datasets]]
name = "spiral-01"
train = "a.csv"
[[datasets]]
name = "spiral-02"
train = "b.csv"
[[results]]
dataset = "spiral-01"
label = "psds"
m = 10
seed = 1
method = "psds"
status = "done"
nmse = 0.2
mnlp = 1.0
mse = 20.0
train_seconds = 1.0
[[results]]
dataset = "spiral-02"
label = "psds"
m = 10
seed = 1
method = "psds"
status = "done"
nmse = 0.4
mnlp = 2.0
mse = 40.0
train_seconds = 3.0
"#;
    let s = Session::parse(text).expect("parses");
    let merged = tables(&s, true, false);
    assert!(
        merged.contains("**spiral**") && merged.contains("| 10 | 0.3000 ± 0.1000 / 1.5000 (2.0) |"),
        "{merged}"
    );
    let apart = tables(&s, false, false);
    assert!(
        apart.contains("**spiral-01**") && apart.contains("| 10 | 0.2000 / 1.0000 (1.0) |"),
        "{apart}"
    );
    let mse = tables(&s, true, true);
    assert!(
        mse.contains("test MSE / MNLP")
            && mse.contains("| 10 | 30.0000 ± 10.0000 / 1.5000 (2.0) |"),
        "{mse}"
    );
}
