use ratatui::crossterm::event::KeyCode;
use ratatui::crossterm::event::KeyEvent;
use ratatui::crossterm::event::KeyModifiers;
use sgpw::tui::form::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

#[test]
fn edits_moves_and_cycles() {
    let mut f = Form::new(
        "t",
        vec![
            Field::text("a", "A", "x", ""),
            Field::choice("b", "B", vec!["p".into(), "q".into()], 0, ""),
            Field::toggle("c", "C", false, ""),
        ],
    );
    f.key(key(KeyCode::Char('y')));
    f.key(key(KeyCode::Backspace));
    f.key(key(KeyCode::Char('z')));
    assert_eq!(f.text("a"), "xz");
    f.key(key(KeyCode::Down));
    assert_eq!(
        f.key(key(KeyCode::Left)),
        FormOutcome::Editing { changed: Some(1) }
    );
    assert_eq!(f.text("b"), "q");
    f.key(key(KeyCode::Up));
    f.key(key(KeyCode::Up));
    f.key(key(KeyCode::Char(' ')));
    assert!(f.toggle("c"));
    assert_eq!(f.key(key(KeyCode::Enter)), FormOutcome::Submit);
    assert_eq!(f.key(key(KeyCode::Esc)), FormOutcome::Cancel);
}

/// A multi-select stands for its highlighted option until some are picked with
/// Space; a form remembers values of the same kind from its last use.
#[test]
fn multi_select_picks_several_and_forms_remember() {
    let opts = || vec!["a".to_string(), "b".into(), "c".into()];
    let mut f = Form::new(
        "t",
        vec![
            Field::multi("m", "M", opts(), 0, ""),
            Field::text("x", "X", "", ""),
        ],
    );
    assert_eq!(f.picked("m"), ["a"]);
    f.key(key(KeyCode::Right));
    assert_eq!(f.picked("m"), ["b"]);
    f.key(key(KeyCode::Char(' ')));
    f.key(key(KeyCode::Right));
    f.key(key(KeyCode::Char(' ')));
    assert_eq!(f.picked("m"), ["b", "c"]);
    assert_eq!(f.text("m"), "b, c");
    f.key(key(KeyCode::Char(' ')));
    assert_eq!(f.picked("m"), ["b"]);
    f.key(key(KeyCode::Down));
    f.key(key(KeyCode::Char('7')));
    let mut g = Form::new(
        "t",
        vec![
            Field::multi("m", "M", opts(), 0, ""),
            Field::text("x", "X", "", ""),
            Field::toggle("y", "Y", false, ""),
        ],
    );
    g.remember(&f, &[]);
    assert_eq!(
        (g.picked("m"), g.text("x")),
        (vec!["b".to_string()], "7".into())
    );
    // another option list is not taken over
    let mut h = Form::new("t", vec![Field::multi("m", "M", vec!["z".into()], 0, "")]);
    h.remember(&f, &[]);
    assert_eq!(h.picked("m"), ["z"]);
    let mut k = Form::new("t", vec![Field::text("x", "X", "", "")]);
    k.remember(&f, &["x"]);
    assert_eq!(k.text("x"), "");
}
