"""Shared helpers: the repository's data sets and the command line built beside the
package (target/release/sgpw, or $SGPW_BIN)."""

import csv
import gzip
import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "datasets"


def cli_path():
    path = os.environ.get("SGPW_BIN") or str(ROOT / "target" / "release" / "sgpw")
    if not os.path.exists(path):
        pytest.fail(f"the command line is not built at {path}: run `cargo build --release`")
    return path


def run_cli(*args, check=True):
    """Run `sgpw ARGS`; (stdout, stderr, exit code)."""
    p = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"sgpw {' '.join(map(str, args))} failed:\n{p.stderr}")
    return p.stdout, p.stderr, p.returncode


def cli_error(*args):
    """The message of a failing `sgpw ARGS` as sgpw.fit words it: stderr without
    `error: `, clap's usage block and blank lines, lines joined by "; "."""
    _, err, code = run_cli(*args, check=False)
    assert code != 0, f"sgpw {' '.join(map(str, args))} succeeded"
    lines = [l.strip() for l in err.splitlines()]
    lines = [
        l.removeprefix("error: ")
        for l in lines
        if l and not l.startswith("Usage:") and not l.startswith("For more information")
        and not l.startswith("note:")
    ]
    return "; ".join(lines)


def read_csv(path, target=None):
    """(X, y, feature names) of a data file, each number parsed by Python's float (as
    sgpw's reader, correctly rounded: the same doubles)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    t = header.index(target) if target else len(header) - 1
    values = np.array([[float(v) for v in r] for r in body], dtype=np.float64)
    features = [h for j, h in enumerate(header) if j != t]
    return np.delete(values, t, axis=1), values[:, t], features


@pytest.fixture(scope="session")
def snelson():
    X, y, _ = read_csv(DATA / "snelson1d" / "train.csv.gz")
    return X, y


@pytest.fixture(scope="session")
def kin40k_small(tmp_path_factory):
    """The first 1000 training and 500 test rows of kin40k, as arrays and as files."""
    d = tmp_path_factory.mktemp("kin40k")
    for part, rows in (("train", 1000), ("test", 500)):
        with gzip.open(DATA / "kin40k" / f"{part}.csv.gz", "rt") as f:
            lines = [next(f) for _ in range(rows + 1)]
        (d / f"{part}.csv").write_text("".join(lines))
    return {"train": d / "train.csv", "test": d / "test.csv"}
