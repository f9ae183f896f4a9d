use sgpw::results::RunKey;
use sgpw::session::RunResult;
use sgpw::session::Session;
use sgpw::session::Status;
use sgpw::session::autosave::*;
use std::path::Path;
use std::path::PathBuf;

fn result(m: usize, status: Status) -> RunResult {
    let key = RunKey {
        dataset: "d".into(),
        label: "fitc".into(),
        m,
        seed: 1,
    };
    RunResult {
        nmse: Some(0.5),
        iterations: 3,
        train_seconds: 0.1,
        trace: vec![3.0, 2.0],
        ..RunResult::new(key, "fitc", status)
    }
}

#[test]
fn fold_takes_what_the_file_lacks_and_nothing_else() {
    let mut file = Session::new("s");
    file.set_result(result(5, Status::Done));
    file.set_result(result(6, Status::Cancelled));
    let mut journal = file.clone();
    let mut changed = result(5, Status::Done);
    changed.nmse = Some(0.9);
    journal.set_result(changed);
    journal.set_result(result(6, Status::Done));
    journal.set_result(result(7, Status::Done));
    let r = fold(&file, &journal, "j".into()).expect("something to recover");
    assert_eq!((r.results, r.runs, r.datasets), (2, 0, 0));
    // the file's finished result wins over the journal's
    assert_eq!(r.session.results[0].nmse, Some(0.5));
    assert_eq!(r.summary(), "2 results");
    assert!(fold(&r.session, &journal, "j".into()).is_none());
}

#[test]
fn journal_sits_beside_the_session() {
    assert_eq!(
        path_for(Path::new("a/b/demo.toml")),
        PathBuf::from("a/b/demo.toml.autosave")
    );
    assert_eq!(
        path_for(Path::new("demo.toml")),
        PathBuf::from("demo.toml.autosave")
    );
}
