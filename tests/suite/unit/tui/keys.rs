use ratatui::crossterm::event::KeyCode;
use ratatui::crossterm::event::KeyEvent;
use ratatui::crossterm::event::KeyModifiers;
use sgpw::tui::keys::Action::*;
use sgpw::tui::keys::*;

fn event(key: &Key) -> KeyEvent {
    KeyEvent::new(key.code, key.modifiers)
}

#[test]
fn every_action_has_a_key() {
    for a in Action::ALL {
        assert!(
            KEYS.iter().any(|b| b.action == *a && !b.keys.is_empty()),
            "{a:?} has no key"
        );
    }
}

#[test]
fn every_key_dispatches_to_its_action() {
    for b in KEYS {
        for key in b.keys {
            assert_eq!(action_for(&event(key)), Some(b.action), "{key:?}");
        }
    }
}

#[test]
fn each_action_is_bound_once_and_help_starts_with_a_row() {
    for a in Action::ALL {
        assert_eq!(KEYS.iter().filter(|b| b.action == *a).count(), 1, "{a:?}");
    }
    assert!(KEYS[0].help.is_some());
}

#[test]
fn extra_modifiers_are_ignored_but_ctrl_c_is_not_c() {
    let with = |code, m| action_for(&KeyEvent::new(code, m));
    assert_eq!(with(KeyCode::Char('c'), KeyModifiers::CONTROL), Some(Quit));
    assert_eq!(
        with(
            KeyCode::Char('c'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT
        ),
        Some(Quit)
    );
    assert_eq!(
        with(KeyCode::Char('c'), KeyModifiers::NONE),
        Some(ToggleMetric)
    );
    assert_eq!(with(KeyCode::Char('R'), KeyModifiers::SHIFT), Some(Rerun));
    assert_eq!(with(KeyCode::Char('q'), KeyModifiers::CONTROL), Some(Quit));
    assert_eq!(with(KeyCode::Char('z'), KeyModifiers::NONE), None);
}
