mod input;
mod replay;
mod runs;

use crate::unit::tui::testing::*;
use ratatui::crossterm::event::KeyCode;
use sgpw::tui::state::App;
use sgpw::tui::state::DataState;
use sgpw::tui::state::Dialog;
use sgpw::tui::state::Effect;
use sgpw::tui::state::Event;
use sgpw::tui::state::Opened;
use sgpw::tui::state::PredState;
use sgpw::tui::state::RunStatus;
use std::path::Path;
use std::path::PathBuf;

#[test]
fn opening_loads_every_data_set_and_lists_runs() {
    let (a, effects) = app();
    assert_eq!(a.runs.len(), 2);
    assert!(
        matches!(&effects[..], [Effect::LoadData { name, base, .. }] if name == "d" && base == &PathBuf::from("s"))
    );
    assert_eq!(a.status_of(&a.runs[0]), RunStatus::NotRun);
    assert!(!a.dirty);
}

#[test]
fn opening_says_what_an_older_file_keeps_and_counts_in_words() {
    let (a, _) = app();
    assert!(
        a.message
            .starts_with("opened: 1 data set, 2 runs, 0 results"),
        "{}",
        a.message
    );
    let old = sgpw::session::Session::parse(
        "schema_version = 3\nname = \"t\"\n[[datasets]]\nname = \"d\"\ntrain = \"d.csv\"\n\
             [[runs]]\ndataset = \"d\"\nmethod = \"fitc\"\nm = [5]\n",
    )
    .expect("parses");
    let theme = sgpw::tui::theme::Theme {
        color: true,
        ascii: false,
    };
    let (a, _) = App::new("s/t.toml".into(), old, theme);
    assert!(
        a.message
            .contains("schema 3 file: its runs keep single_start = true"),
        "{}",
        a.message
    );
}

#[test]
fn opening_replaces_the_session_and_cancels_runs() {
    let mut a = loaded();
    a.update(ch('o'));
    let e = a.update(key(KeyCode::Enter));
    assert!(matches!(&e[..], [Effect::Open(p)] if p == &PathBuf::from("s/t.toml")));
    let e = a.update(Event::Opened {
        path: "other.toml".into(),
        result: Ok(Box::new(Opened {
            session: session(),
            exists: true,
            recovery: None,
            recovery_error: None,
        })),
    });
    assert!(matches!(e[0], Effect::CancelAll));
    assert_eq!(a.path, PathBuf::from("other.toml"));
    a.update(Event::Opened {
        path: "bad.toml".into(),
        result: Err("line 3: bad".into()),
    });
    assert!(a.message_is_error && a.path == Path::new("other.toml"));
    // A load answered for the closed session is dropped.
    a.update(Event::DataLoaded {
        name: "d".into(),
        epoch: 1,
        result: Err("stale".into()),
    });
    assert!(matches!(a.data.get("d"), Some(DataState::Loading(_))));
}

#[test]
fn o_on_a_new_path_starts_a_new_session_that_is_not_saved_yet() {
    let dir = std::env::temp_dir().join(format!("sgpw-o-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("fresh.toml");
    let opened = sgpw::tui::open(&path).expect("a new session, not an error");
    assert!(!opened.exists && opened.session.name == "fresh");
    let mut a = loaded();
    a.update(Event::Opened {
        path: path.clone(),
        result: Ok(Box::new(opened)),
    });
    assert!(!a.on_disk && !a.dirty && a.message.starts_with("new session"));
    // the status line says so, not "saved"
    let line = crate::unit::tui::testing::render(&a, 80, 24);
    assert!(line.contains("new, not saved"), "{line}");
    a.update(Event::Saved(Ok(path.clone())));
    assert!(a.on_disk);
    // a path that cannot be a session is an error
    assert!(sgpw::tui::open(&dir.join("no/such/dir/x.toml")).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn recovering_an_autosave_folds_it_in_unsaved() {
    let mut a = loaded();
    let k = a.runs[0].key.clone();
    let mut journal = a.session.clone();
    journal.set_result(done(&k, 0.5));
    let r = sgpw::session::autosave::fold(&a.session, &journal, "j".into())
        .expect("one result to recover");
    a.offer_recovery(r.clone());
    // other keys leave the question up; Ctrl-C does not skip it
    a.update(ch('g'));
    a.update(Event::Key(ratatui::crossterm::event::KeyEvent::new(
        KeyCode::Char('c'),
        ratatui::crossterm::event::KeyModifiers::CONTROL,
    )));
    assert!(matches!(a.dialog, Some(Dialog::Recover(_))) && !a.quit);
    a.update(ch('y'));
    assert!(a.dirty && a.result_of(&a.runs[0]).is_some());
    assert!(a.message.starts_with("recovered 1 result"), "{}", a.message);
    // n discards the journal
    let mut b = loaded();
    b.offer_recovery(r);
    let e = b.update(ch('n'));
    assert!(matches!(&e[..], [Effect::DropAutosave(_)]), "{e:?}");
    assert!(b.session.results.is_empty() && !b.dirty);
}

#[test]
fn a_failed_save_keeps_the_app_open() {
    let mut a = loaded();
    a.dirty = true;
    a.update(ch('q'));
    a.update(ch('s'));
    assert!(a.update(Event::Saved(Err("disk full".into()))).is_empty());
    assert!(!a.quit && a.dirty && a.message_is_error);
}

#[test]
fn prediction_is_requested_once_per_run_and_result() {
    let mut a = loaded();
    let k = a.runs[0].key.clone();
    let mut r = done(&k, 0.5);
    r.model = Some(sgpw::model_file::ModelFile::new(
        "fitc",
        sgpw::model_file::Hyper::se(1.0, vec![1.0], 0.1),
    ));
    a.session.set_result(r);
    let e = a.update(Event::Resize(80, 24));
    let [Effect::Predict { want, .. }] = &e[..] else {
        panic!("{e:?}")
    };
    let want = want.clone();
    assert!(a.update(Event::Resize(80, 24)).is_empty());
    a.update(Event::Predicted {
        want: want.clone(),
        result: Err("boom".into()),
    });
    assert!(matches!(&a.prediction, PredState::Failed(_, m) if m == "boom"));
    assert!(a.update(Event::Resize(80, 24)).is_empty());
}
