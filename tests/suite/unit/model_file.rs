//! Model files: reading, checking and writing.
use sgpw::error::Location;
use sgpw::model_file::*;

const FITC: &str = r#"
method = "fitc"
target_mean = 0.0
jitter = 1e-6
[hyper]
signal_variance = 1.0
lengthscales = [1.0, 2.0]
noise_variance = 0.01
[inducing]
points = [[0.1, 0.2], [0.3, 0.4]]
"#;

/// The method's own tables are kept as they are, in order, and written back the
/// same.
#[test]
fn issue_example_parses_and_round_trips() {
    let m = ModelFile::parse(FITC).expect("parses");
    assert_eq!(m.jitter, Some(1e-6));
    assert_eq!(m.tables.keys().collect::<Vec<_>>(), ["inducing"]);
    let text = m.to_toml().expect("writes");
    let again = ModelFile::parse(&text).expect("parses");
    assert_eq!(m, again);
    assert!(
        text.ends_with("[inducing]\npoints = [[0.1, 0.2], [0.3, 0.4]]\n"),
        "{text}"
    );
}

/// σ² at the noise floor (e^θ below the floor's last digit) is a model a fit
/// writes, and reads back; below it is refused.
#[test]
fn noise_at_the_floor_reads_back() {
    let mut m = ModelFile::parse(FITC).expect("parses");
    m.noise_floor = Some(0.01);
    let w = |m: &ModelFile| m.check_shared(&[Witness::lengthscales(m)], true);
    assert!(w(&m).is_ok());
    m.hyper.noise_variance = 0.009;
    let e = w(&m).expect_err("below the floor");
    assert!(
        e.to_string().contains("must not be below noise_floor"),
        "{e}"
    );
}

/// A location finds the line of its key, of an array's element, or of the nearest
/// enclosing table the text has.
#[test]
fn locations_find_their_line() {
    let text = "method = \"fitc\"\ninput_mean = [1.0]\n[hyper]\nsignal_variance = 1.0\n\
                    lengthscales = [1.0]\nnoise_variance = 0.1\n[inducing]\npoints = [\n  [1.0],\n  [2.0, 3.0],\n]\n";
    let at = |keys: &[&str]| {
        let mut l = Location::key(keys[0]);
        for k in &keys[1..] {
            l = l.then(k);
        }
        l
    };
    assert_eq!(line_of(text, &at(&["inducing", "points"])), Some(8));
    assert_eq!(
        line_of(text, &at(&["inducing", "points"]).index(1)),
        Some(10)
    );
    assert_eq!(line_of(text, &at(&["hyper", "noise_variance"])), Some(6));
    assert_eq!(line_of(text, &at(&["input_mean"])), Some(2));
    assert_eq!(line_of(text, &at(&["hyper", "nope"])), None);
    assert_eq!(line_of(text, &at(&["standardize"])), None);
}

/// The number of inputs is what most witnesses hold; the odd one out is named.
#[test]
fn the_odd_count_out_is_blamed() {
    let w = |what: &str, count| Witness::new(Location::key(what), what, count);
    assert_eq!(settle_dim(&[w("a", 3), w("b", 3)]).expect("agree"), 3);
    let e = settle_dim(&[w("lengthscales", 2), w("inputs", 3), w("centre", 3)])
        .expect_err("one differs");
    assert_eq!(e.location(), Some(&Location::key("lengthscales")));
    assert!(
        e.to_string()
            .contains("lengthscales has 2 values but the model has 3 inputs"),
        "{e}"
    );
    // a tie: the first sets the number
    let e = settle_dim(&[w("lengthscales", 2), w("points", 3)]).expect_err("tie");
    assert_eq!(e.location(), Some(&Location::key("points")));
}

#[test]
fn unknown_keys_are_errors_with_a_line() {
    let text = "method = \"fitc\"\n[hyper]\nsignal_variance = 1.0\nlengthscale = [1.0]\nnoise_variance = 0.1\n";
    let e = ModelFile::parse(text).expect_err("unknown key");
    assert!(e.contains("line 4") && e.contains("lengthscale"), "{e}");
}

/// A Gaussian model needs σ²: without `[hyper] noise_variance` it is refused, saying
/// what to add (a model with another likelihood is written without it).
#[test]
fn a_gaussian_model_without_its_noise_variance_is_refused() {
    let text = FITC.replace("noise_variance = 0.01\n", "");
    let e = ModelFile::parse(&text).expect_err("no σ²");
    assert!(
        e.contains("noise_variance is missing") && e.contains("noise_variance = 0.1"),
        "{e}"
    );
}
