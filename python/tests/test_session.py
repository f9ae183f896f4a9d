"""Sessions from Python: Session.run is `sgpw run`, results() and report() are `sgpw
report`."""

import io
import shutil

import pandas as pd

import sgpw
from conftest import DATA, run_cli

SESSION = """schema_version = 3
name = "py"
results = []

[[datasets]]
name = "xsinx3"
train = "xsinx3_train.csv"
test = "xsinx3_test.csv"

[[runs]]
dataset = "xsinx3"
method = "fitc"
m = [5, 10]
seeds = [1]
iterations = 40

[[runs]]
dataset = "xsinx3"
method = "vfe"
m = [5]
seeds = [1, 2]
iterations = 40
"""


def test_a_session_runs_and_reports_as_the_command_line(tmp_path):
    for f in ("xsinx3_train.csv", "xsinx3_test.csv"):
        shutil.copy(DATA / f, tmp_path / f)
    path = tmp_path / "s.toml"
    path.write_text(SESSION)
    seen = []
    summary = sgpw.Session(path).run(jobs=2, callback=seen.append)
    assert summary["ran"] == summary["done"] == 4 and summary["failed"] == 0
    assert sorted((r["label"], r["m"], r["seed"]) for r in seen) == [
        ("fitc-std", 5, 1), ("fitc-std", 10, 1), ("vfe-std", 5, 1), ("vfe-std", 5, 2)
    ]
    session = sgpw.Session(path)
    df = session.results()
    csv, _, _ = run_cli("report", path, "--format", "csv")
    expected = pd.read_csv(io.StringIO(csv))
    pd.testing.assert_frame_equal(df, expected)
    assert list(df.columns) == csv.splitlines()[0].split(",")
    assert (df["status"] == "done").all() and len(df) == 4
    for fmt in ("markdown", "csv", "json"):
        out, _, _ = run_cli("report", path, "--format", fmt)
        assert session.report(fmt) == out
    # nothing left to run
    assert sgpw.Session(path).run()["ran"] == 0
