use crate::unit::tui::testing::*;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use sgpw::tui::state::{ChartTab, Dialog, Effect, Event, Focus, Metric};

#[test]
fn keys_move_focus_charts_and_metric() {
    let mut a = loaded();
    a.update(key(KeyCode::Down));
    assert_eq!(a.run_cursor, 1);
    a.update(key(KeyCode::Down));
    assert_eq!(a.run_cursor, 1);
    a.update(key(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Datasets);
    a.update(ch('3'));
    assert_eq!(a.chart, ChartTab::Prediction);
    a.update(ch('c'));
    assert_eq!((a.chart, a.metric), (ChartTab::Comparison, Metric::Mnlp));
    a.update(ch('?'));
    assert!(matches!(a.dialog, Some(Dialog::Help)));
    a.update(ch('z'));
    assert!(a.dialog.is_none());
    a.update(ch('n'));
    let e = a.update(Event::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    )));
    assert!(matches!(e[..], [Effect::CancelAll, Effect::Quit]) && a.quit);
}

#[test]
fn quit_asks_when_unsaved_and_save_then_quits() {
    let mut a = loaded();
    assert!(matches!(
        a.update(ch('q'))[..],
        [Effect::CancelAll, Effect::Quit]
    ));
    let mut a = loaded();
    a.dirty = true;
    assert!(a.update(ch('q')).is_empty());
    assert!(matches!(a.dialog, Some(Dialog::Quit(_))));
    assert!(a.update(ch('n')).is_empty() && a.dialog.is_none() && !a.quit);
    a.update(ch('q'));
    let e = a.update(ch('s'));
    assert!(matches!(e.last(), Some(Effect::Save { .. })));
    let e = a.update(Event::Saved(Ok("s/t.toml".into())));
    // the file holds everything: the autosave goes
    assert!(
        matches!(e[..], [Effect::DropAutosave(_), Effect::Quit]) && a.quit && !a.dirty,
        "{e:?}"
    );
}
