use crate::unit::tui::testing::*;
use sgpw::tui::state::Event;
use std::time::Duration;

#[test]
fn replay_advances_with_ticks_and_speed() {
    let mut a = loaded();
    let k = a.runs[0].key.clone();
    let mut r = done(&k, 0.5);
    r.trace = (0..100).map(|i| 100.0 - i as f64).collect();
    a.session.set_result(r);
    a.update(ch('r'));
    assert!(a.animating());
    a.update(Event::Tick(Duration::from_secs(1)));
    assert_eq!(a.replay.as_ref().map(|r| r.shown), Some(21.0));
    a.update(ch('+'));
    a.update(Event::Tick(Duration::from_secs(10)));
    assert_eq!(a.replay.as_ref().map(|r| r.shown), Some(100.0));
    assert!(!a.animating());
    a.update(ch('r'));
    assert!(a.replay.is_none());
}

#[test]
fn replay_needs_a_trace() {
    let mut a = loaded();
    a.update(ch('r'));
    assert!(a.replay.is_none() && a.message_is_error);
}
