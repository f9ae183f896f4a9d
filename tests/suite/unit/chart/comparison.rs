use sgpw::chart::Metric;
use sgpw::chart::comparison::*;
use sgpw::results::RunKey;
use sgpw::results::RunResult;
use sgpw::results::Status;

fn done(label: &str, m: usize, seed: u64, nmse: f64, mnlp: f64) -> RunResult {
    RunResult {
        nmse: Some(nmse),
        mnlp: Some(mnlp),
        constant_mnlp: Some(1.5),
        ..RunResult::new(
            RunKey {
                dataset: "d".into(),
                label: label.into(),
                m,
                seed,
            },
            "fitc",
            Status::Done,
        )
    }
}

/// Seeds average into one point with the standard error of the mean; one seed has
/// none; the constant predictor is NMSE 1 and the recorded MNLP.
#[test]
fn mean_and_standard_error_over_seeds() {
    let results = vec![
        done("a", 10, 1, 0.1, 1.0),
        done("a", 10, 2, 0.3, 2.0),
        done("a", 20, 1, 0.05, 0.5),
        RunResult::new(
            RunKey {
                dataset: "d".into(),
                label: "a".into(),
                m: 40,
                seed: 1,
            },
            "fitc",
            Status::Failed,
        ),
    ];
    let p = points(&results, "d");
    assert_eq!(p.len(), 2);
    assert_eq!((p[0].m, p[0].seeds), (10, 2));
    assert!((p[0].nmse - 0.2).abs() < 1e-12);
    // sd of {0.1, 0.3} is 0.1414; over √2: 0.1
    assert!((p[0].nmse_se - 0.1).abs() < 1e-12, "{}", p[0].nmse_se);
    assert!((p[0].value(Metric::Mnlp).1 - 0.5).abs() < 1e-12);
    assert_eq!(p[1].nmse_se, 0.0);
    assert_eq!(constant(&results, "d", Metric::Nmse), Some(1.0));
    assert_eq!(constant(&results, "d", Metric::Mnlp), Some(1.5));
    assert_eq!(constant(&results, "other", Metric::Mnlp), None);
    let l = labels(&p, vec!["z".into(), "a".into()]);
    assert_eq!(l, vec![(1, "a".to_string())]);
}
