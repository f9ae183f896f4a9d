use sgpw::tui::format::*;

#[test]
fn numbers_read_as_before() {
    assert_eq!(fmt_opt(Some(1.23456), 3), "1.235");
    assert_eq!(fmt_opt(Some(f64::NAN), 2), "NaN");
    assert_eq!(fmt_opt(None, 2), "-");
    assert_eq!(fmt_nmse(Some(0.01)), "0.0100");
    assert_eq!(fmt_nmse(Some(0.0001234)), "1.23e-4");
    assert_eq!(fmt_nmse(Some(0.0)), "0.0000");
    assert_eq!(short(123456.0), "1.2e5");
    assert_eq!(short(250.0), "250");
    assert_eq!(short(12.34), "12.3");
    assert_eq!(short(0.5), "0.50");
    assert_eq!(short(0.0), "0.00");
    assert_eq!(count(950), "950");
    assert_eq!(count(12_345), "12.3k");
    assert_eq!(count(1_234_567), "1.2M");
}

/// Times always carry a unit and fit the runs table's six columns (the 80-column
/// table showed `47.99`).
#[test]
fn durations_say_their_unit() {
    for (secs, want) in [
        (0.05, "0.05s"),
        (9.5, "9.50s"),
        (47.99, "48.0s"),
        (72.0, "1m12s"),
        (3599.4, "59m59s"),
        (7500.0, "2h05m"),
    ] {
        assert_eq!(duration(secs), want);
        assert!(want.chars().count() <= 6);
    }
    assert_eq!(objective(Some(205_582.189)), "205582.2");
    assert_eq!(objective(Some(27.14)), "27.14");
}

/// A narrow label keeps its distinguishing end: the std tag goes first, then the
/// middle, never the kernel at the end.
#[test]
fn run_labels_shorten_keeping_their_ends() {
    assert_eq!(run_label("vfe-std-matern52", 16), "vfe-std-matern52");
    assert_eq!(run_label("vfe-std-matern52", 12), "vfe-matern52");
    assert_eq!(run_label("vfe-std-matern52", 8), "vfe…rn52");
    assert_eq!(run_label("fitc-std-val0.1-es", 10), "fitc….1-es");
    for w in 4..20 {
        assert!(run_label("spgp-hs-std-m20-val0.25-es", w).chars().count() <= w);
    }
}
