use sgpw::chart::Metric;
use sgpw::chart::evidence::*;
use sgpw::methods::TraceMarks;
use sgpw::results::RunKey;
use sgpw::results::ValidationPoint;

fn key(label: &str, m: usize, seed: u64) -> RunKey {
    RunKey {
        dataset: "d".into(),
        label: label.into(),
        m,
        seed,
    }
}

/// Runs come in legend order with consecutive palette indices; a long trace is
/// thinned but keeps its last value; non-finite values and empty runs are dropped.
#[test]
fn curves_in_legend_order_thinned() {
    let (a, b, c) = (key("vfe", 10, 1), key("fitc", 20, 1), key("fitc", 10, 1));
    let long: Vec<f64> = (0..1000).map(|i| 1000.0 - i as f64).collect();
    let short = [3.0, f64::NAN, 1.0];
    let val = [ValidationPoint {
        iteration: 2,
        nmse: 0.5,
        mnlp: f64::NAN,
    }];
    let runs = vec![
        RunTrace {
            key: &a,
            method: "vfe",
            trace: &short,
            validation: &val,
            best_iteration: None,
            marks: TraceMarks::default(),
        },
        RunTrace {
            key: &b,
            method: "fitc",
            trace: &long,
            validation: &[],
            best_iteration: Some(3),
            marks: TraceMarks::default(),
        },
        RunTrace {
            key: &c,
            method: "fitc",
            trace: &[],
            validation: &[],
            best_iteration: None,
            marks: TraceMarks::default(),
        },
    ];
    let got = curves(runs.clone(), 100, Metric::Nmse);
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].key.label.as_str(), got[0].series), ("fitc", 0));
    assert_eq!((got[1].key.label.as_str(), got[1].series), ("vfe", 1));
    assert!(got[0].objective.len() <= 101, "{}", got[0].objective.len());
    assert_eq!(got[0].objective.last(), Some(&(999.0, 1.0)));
    assert_eq!(got[1].objective, vec![(0.0, 3.0), (2.0, 1.0)]);
    assert_eq!(got[1].validation, vec![(2.0, 0.5)]);
    assert!(curves(runs, 100, Metric::Mnlp)[1].validation.is_empty());
}

/// A model's size keeps every change (drawn as a step) however thin the stride, and
/// marks past the trace's end (a replay's position) are not drawn.
#[test]
fn sizes_keep_every_change_and_marks_stop_where_the_trace_does() {
    let k = key("rvm", 50, 1);
    let trace: Vec<f64> = (0..100).map(|i| 100.0 - i as f64).collect();
    let mut sizes = vec![1; 100];
    for (i, s) in sizes.iter_mut().enumerate().skip(37) {
        *s = if i < 60 { 2 } else { 3 };
    }
    let marks = TraceMarks {
        full: vec![(0, 101.0), (50, 49.0), (99, 2.0), (150, 0.0)],
        sizes,
        size_name: "relevance vectors",
    };
    let run = |trace: &'static [f64]| RunTrace {
        key: &k,
        method: "rvm",
        trace,
        validation: &[],
        best_iteration: None,
        marks: marks.clone(),
    };
    let trace: &'static [f64] = trace.leak();
    let got = &curves(vec![run(trace)], 4, Metric::Nmse)[0];
    for w in got.sizes.windows(2) {
        assert!(w[0].0 < w[1].0, "iterations increase: {:?}", got.sizes);
    }
    for (i, s) in [
        (36.0, 1.0),
        (37.0, 2.0),
        (59.0, 2.0),
        (60.0, 3.0),
        (99.0, 3.0),
    ] {
        assert!(got.sizes.contains(&(i, s)), "({i}, {s}) in {:?}", got.sizes);
    }
    assert!(got.sizes.len() < 20, "{}", got.sizes.len());
    assert_eq!(got.last_size(), Some(3));
    assert_eq!(got.full, vec![(0.0, 101.0), (50.0, 49.0), (99.0, 2.0)]);
    // a replay at iteration 40
    let partial = &curves(vec![run(&trace[..41])], 4, Metric::Nmse)[0];
    assert_eq!(partial.full, vec![(0.0, 101.0)]);
    assert_eq!(partial.last_size(), Some(2));
    assert_eq!(partial.sizes.last(), Some(&(40.0, 2.0)));
}

/// A noisy trace (svgp's minibatch estimates, beside its full-data objective) is
/// drawn as window means, so its noise neither covers the other curves nor sets the
/// y range; an exact trace is drawn as it is.
#[test]
fn noisy_traces_are_drawn_as_window_means() {
    let k = key("svgp", 50, 1);
    let noisy: Vec<f64> = (0..1500)
        .map(|i| 1000.0 + if i % 2 == 0 { 300.0 } else { -300.0 })
        .collect();
    let marks = TraceMarks {
        full: vec![(0, 1000.0), (1499, 1000.0)],
        sizes: Vec::new(),
        size_name: "",
    };
    let run = RunTrace {
        key: &k,
        method: "svgp",
        trace: &noisy,
        validation: &[],
        best_iteration: None,
        marks,
    };
    let got = &curves(vec![run.clone()], 400, Metric::Nmse)[0];
    assert!(got.smoothed > 1, "{}", got.smoothed);
    assert!(got.objective.len() <= 61, "{}", got.objective.len());
    for (_, v) in &got.objective {
        assert!((v - 1000.0).abs() < 30.0, "{v}");
    }
    let exact = RunTrace {
        marks: TraceMarks::default(),
        ..run
    };
    let got = &curves(vec![exact], 400, Metric::Nmse)[0];
    assert_eq!(got.smoothed, 1);
    assert!(got.objective.iter().any(|p| p.1 == 1300.0));
}
