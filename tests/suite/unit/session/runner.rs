use sgpw::session::Session;
use sgpw::session::runner::*;

/// A run whose m exceeds its data is refused before any run trains: the error
/// names the session file, the entry's line and the session key, not a flag.
#[test]
fn every_run_is_checked_before_the_first_starts() {
    let dir = tempfile::tempdir().expect("dir");
    let csv: String = std::iter::once("x,y\n".to_string())
        .chain((0..20).map(|i| format!("{},{}\n", i, (i as f64 * 0.3).sin())))
        .collect();
    std::fs::write(dir.path().join("d.csv"), csv).expect("writes");
    let path = dir.path().join("s.toml");
    let text = "schema_version = 3\nname = \"s\"\n\n[[datasets]]\nname = \"d\"\n\
                    train = \"d.csv\"\n\n[[runs]]\ndataset = \"d\"\nmethod = \"fitc\"\nm = [3]\n\
                    iterations = 3\n\n[[runs]]\ndataset = \"d\"\nmethod = \"vfe\"\nm = [4, 50]\n";
    std::fs::write(&path, text).expect("writes");
    let e = run_session(&path, 1, false, None, &mut |_| {})
        .expect_err("m = 50 > n = 20")
        .to_string();
    assert!(
        e.contains("s.toml")
            && e.contains("line 14: m = 50 is larger than the training set (20 points)")
            && !e.contains("--m")
            && e.contains("nothing was run"),
        "{e}"
    );
    let after = Session::read(&path).expect("reads");
    assert!(after.results.is_empty(), "a run trained before the check");
}
