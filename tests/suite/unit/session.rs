mod autosave;
mod report;
mod runner;
mod shard;

use sgpw::session::*;
use std::path::Path;

#[test]
fn data_paths_resolve_without_dot_components() {
    let entry: DatasetEntry =
        toml::from_str("name = \"d\"\ntrain = \"../data/x.csv\"\ntest = \"./y.csv\"")
            .expect("entry");
    let spec = entry.load_spec(&base_dir(Path::new("s.toml")));
    assert_eq!(spec.train, Path::new("../data/x.csv"));
    assert_eq!(spec.test.as_deref(), Some(Path::new("y.csv")));
    let spec = entry.load_spec(&base_dir(Path::new("./sessions/./s.toml")));
    assert_eq!(spec.train, Path::new("sessions/../data/x.csv"));
}

const EXAMPLE: &str = r#"
schema_version = 1
name = "t"

[[datasets]]
name = "sinc"
train = "../datasets/sinc_train.csv"
test = "../datasets/sinc_test.csv"

[[runs]]
dataset = "sinc"
method = "fitc"
m = [5, 10]
seeds = [1, 2]
iterations = 50
"#;

#[test]
fn parses_expands_and_round_trips() {
    let s = Session::parse(EXAMPLE).expect("parses");
    let runs = s.all_runs();
    assert_eq!(runs.len(), 4);
    assert_eq!(
        runs[3].0,
        RunKey {
            dataset: "sinc".into(),
            label: "fitc".into(),
            m: 10,
            seed: 2
        }
    );
    let again = Session::parse(&s.to_toml().expect("writes")).expect("reparses");
    assert_eq!(again.all_runs(), runs);
}

#[test]
fn bad_values_name_their_line() {
    let bad = EXAMPLE.replace("method = \"fitc\"", "method = \"fitcc\"");
    let e = Session::parse(&bad).expect_err("unknown method");
    assert!(
        e.starts_with("line 10:") && e.contains("unknown method 'fitcc'"),
        "{e}"
    );
    let bad = EXAMPLE.replace("iterations = 50", "iterations = 50\nlearning_rate = 3");
    let e = Session::parse(&bad).expect_err("unknown key");
    assert!(e.contains("line 16") && e.contains("learning_rate"), "{e}");
    let bad = EXAMPLE.replace("dataset = \"sinc\"", "dataset = \"nope\"");
    assert!(
        Session::parse(&bad)
            .expect_err("no such data set")
            .contains("'nope'")
    );
    let bad = EXAMPLE.replace("m = [5, 10]", "m = [0]");
    assert!(
        Session::parse(&bad)
            .expect_err("m = 0")
            .contains("m must be at least 1")
    );
    let bad = EXAMPLE.replace("schema_version = 1", "schema_version = 7");
    assert!(
        Session::parse(&bad)
            .expect_err("version")
            .contains("schema_version 7")
    );
}

const V3: &str = r#"schema_version = 3
name = "t"

[[datasets]]
name = "sinc"
train = "../datasets/sinc_train.csv"

[[runs]]
dataset = "sinc"
method = "fitc"
m = [5]
"#;

/// Version 3: an entry without settings has the declaration's defaults, the
/// default noise floor among them; versions 1 and 2 meant no floor, and read with
/// that made explicit, under the label they had.
#[test]
fn schema_3_defaults_and_older_meanings() {
    let s = Session::parse(V3).expect("parses");
    let r = s.runs[0].get_ref();
    assert_eq!(
        (
            r.iterations,
            r.standardize,
            &r.seeds[..],
            r.options.noise_floor
        ),
        (sgpw::run_spec::DEFAULT_ITERATIONS, true, &[1u64][..], None)
    );
    assert_eq!(r.label(), "fitc-std");
    // version 3 fitted from one start: read with that made explicit, same label
    assert!(r.options.single_start);
    let v4 =
        Session::parse(&V3.replace("schema_version = 3", "schema_version = 4")).expect("parses");
    let r4 = v4.runs[0].get_ref();
    assert!(!r4.options.single_start && r4.spec(5, 1).runs_second_start());
    assert_eq!(r4.label(), "fitc-std");
    let v2 =
        Session::parse(&V3.replace("schema_version = 3", "schema_version = 2")).expect("parses");
    let r = v2.runs[0].get_ref();
    assert_eq!(
        (r.options.noise_floor, r.label()),
        (Some(0.0), "fitc-std".into())
    );
    let text = v2.to_toml().expect("writes");
    assert!(text.contains("schema_version = 4") && text.contains("noise_floor = 0.0"));
    let again = Session::parse(&text).expect("reparses");
    assert_eq!(again.all_runs(), v2.all_runs());
    // version 1: raw, label = the method, no floor
    let v1 =
        Session::parse(&V3.replace("schema_version = 3", "schema_version = 1")).expect("parses");
    let r = v1.runs[0].get_ref();
    assert_eq!(
        (r.standardize, r.label(), r.options.noise_floor),
        (false, "fitc".into(), Some(0.0))
    );
    // a run without a floor now gets a label of its own
    let nf0 = V3.replace("m = [5]", "m = [5]\n[runs.options]\nnoise_floor = 0.0");
    assert_eq!(
        Session::parse(&nf0).expect("parses").all_runs()[0].0.label,
        "fitc-std-nf0"
    );
}

/// Two entries with one key and different settings: an error at load that names
/// both lines and what differs, never a merge of their results. One setup written
/// twice (the default floor by its value) is not an error.
#[test]
fn one_key_with_two_setups_is_an_error_naming_both() {
    let two = format!(
        "{V3}\n[[runs]]\ndataset = \"sinc\"\nmethod = \"fitc\"\nlabel = \"fitc-std\"\n\
             m = [5, 10]\n[runs.options]\nnoise_floor = 0.0\n"
    );
    let e = Session::parse(&two).expect_err("two setups");
    assert!(
        e.contains("line 8 and line 13")
            && e.contains("sinc/fitc-std m=5 seed 1")
            && e.contains("noise_floor = 1e-6 (the default) vs 0.0"),
        "{e}"
    );
    let same = two.replace("noise_floor = 0.0", "noise_floor = 1e-6");
    assert!(Session::parse(&same).is_ok());
    let v2 = two.replace("schema_version = 3", "schema_version = 2");
    assert!(
        Session::parse(&v2).is_ok(),
        "in version 2 both had no floor"
    );
}
