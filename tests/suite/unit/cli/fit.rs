use sgpw::cli::fit::*;
use sgpw::run_context::Phase;
use sgpw::run_context::Progress;

fn report(phase: Phase, iteration: usize, nlml: Option<f64>) -> Progress {
    Progress {
        phase,
        iteration,
        nlml,
        elapsed: 0.0,
        validation: None,
    }
}

/// The progress line names the phase: the first start's fit alone at first, the
/// subset fit, then both starts' fits side by side, and the one dropped.
#[test]
fn the_progress_line_names_each_start_and_the_one_dropped() {
    let mut shown = Shown::default();
    let fit = Phase::Fit { stage: 0 };
    assert_eq!(
        shown.take(&report(fit, 3, Some(10.0))),
        (Some(3), "fit: objective 10.0000".to_string())
    );
    assert_eq!(
        shown.take(&report(Phase::SubsetInit, 0, None)).1,
        "subset fit"
    );
    assert_eq!(
        shown.take(&report(Phase::SubsetInit, 7, Some(99.0))).1,
        "subset fit: objective 99.0000"
    );
    assert_eq!(
        shown.take(&report(Phase::SecondStart, 1, Some(12.5))),
        (
            Some(3),
            "start 1 it 3: 10.0000 · start 2 it 1: 12.5000".to_string()
        )
    );
    shown.take(&report(Phase::Dropped { second: false }, 3, None));
    assert_eq!(
        shown.take(&report(Phase::SecondStart, 9, Some(8.0))),
        (
            Some(9),
            "start 1 dropped at it 3 · start 2 it 9: 8.0000".to_string()
        )
    );
}
