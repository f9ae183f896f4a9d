use sgpw::chart::axis::*;

fn distinct(l: &[String]) -> bool {
    let mut u = l.to_vec();
    u.sort();
    u.dedup();
    u.len() == l.len()
}

/// The NLML from 201,128 to 202,400: nice steps, every label different,
/// no label that repeats one value ("2.0e5" thrice).
#[test]
fn a_narrow_range_far_from_zero_reads() {
    let t = linear(201_128.0, 202_400.0, 8);
    assert_eq!(
        t.labels,
        [
            "201200", "201400", "201600", "201800", "202000", "202200", "202400"
        ]
    );
    assert_eq!(t.note, None);
    // 0.5 % wide at every magnitude
    for base in [1.0, 37.0, 2.0e5, 1.0e7, 3.0e-5] {
        let t = linear(base, base * 1.005, 6);
        assert!(t.at.len() >= 2, "{base}: {t:?}");
        assert!(distinct(&t.labels), "{base}: {t:?}");
        assert!(t.labels.iter().all(|l| l.len() <= 7), "{base}: {t:?}");
    }
    // many digits beside the step: an offset, said once
    let t = linear(123_456.1, 123_456.9, 5);
    assert_eq!(t.note.as_deref(), Some("+123400"), "{t:?}");
    assert_eq!(t.labels, ["56.2", "56.4", "56.6", "56.8"]);
    // large values: a power of ten, said once
    let t = linear(1.2e6, 2.0e6, 5);
    assert_eq!(t.note.as_deref(), Some("×10^6"));
    assert_eq!(t.labels, ["1.2", "1.4", "1.6", "1.8", "2.0"]);
    // the usual: no note, no trailing noise
    let t = linear(-0.05, 1.05, 7);
    assert_eq!(t.labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
    let t = linear(0.0, 250.0, 6);
    assert_eq!(t.labels, ["0", "50", "100", "150", "200", "250"]);
}

/// A log axis always has ticks inside the data: 1-2-5 over decades, integer
/// mantissas over part of one, evenly spaced values over a narrow part.
#[test]
fn log_ticks_fall_inside_the_data() {
    let ticks = |lo: f64, hi: f64| log10(lo.log10(), hi.log10(), 8);
    assert_eq!(
        ticks(5.0, 200.0).labels,
        ["5", "10", "20", "50", "100", "200"]
    );
    assert_eq!(ticks(1e-3, 1e3).labels.len(), 7);
    assert_eq!(ticks(0.15, 0.45).labels, ["0.2", "0.3", "0.4"]);
    let t = ticks(0.23, 0.28);
    assert_eq!(t.labels, ["0.23", "0.24", "0.25", "0.26", "0.27", "0.28"]);
    for (lo, hi) in [(0.23, 0.28), (0.2301, 0.2305), (31.0, 38.0), (0.5, 3.0)] {
        let t = ticks(lo, hi);
        assert!(t.at.len() >= 2, "{lo}..{hi}: {t:?}");
        assert!(distinct(&t.labels), "{t:?}");
        for a in &t.at {
            let v = 10f64.powf(*a);
            assert!(
                v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9),
                "{v} {t:?}"
            );
        }
    }
}

/// Objective curves: every point held, unless the starts would squeeze the rest;
/// then the highest cut value is returned.
#[test]
fn objective_ranges_hold_or_say_what_they_cut() {
    // a plateau for the first quarter, then down a little: held
    let a: Vec<(f64, f64)> = (0..100)
        .map(|i| (i as f64, if i < 25 { 202_400.0 } else { 201_200.0 }))
        .collect();
    let ((lo, hi), cut) = objective_range(&[&a], 0.0);
    assert_eq!((lo, hi, cut), (201_200.0, 202_400.0, None));
    // a start far above the rest: cut, and said
    let b: Vec<(f64, f64)> = (0..100)
        .map(|i| (i as f64, if i < 3 { 1.0e6 } else { 100.0 - i as f64 * 0.1 }))
        .collect();
    let ((_, hi), cut) = objective_range(&[&b], 0.0);
    assert_eq!(hi, 99.7);
    assert_eq!(cut, Some(1.0e6));
}
