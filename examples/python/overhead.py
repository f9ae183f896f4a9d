"""The cost of calling sgpw from Python, against the command line, on one fit of about a
second: the same fit (kin40k's 10 000 training rows, fitc, m = 30, 60 iterations) timed
as `sgpw fit` (a whole process: start, read the CSV, fit, print) and as `sgpw.fit` on
arrays already in memory, alternately, and the time each fit itself reports.

    python examples/python/overhead.py [--repeats 7] [--bin target/release/sgpw]
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import time

import numpy as np
import pandas as pd

import sgpw

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRAIN = ROOT / "datasets" / "kin40k" / "train.csv.gz"
SETTINGS = dict(method="fitc", m=30, iterations=60, seed=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "sgpw"))
    args = ap.parse_args()
    df = pd.read_csv(TRAIN)
    # C-contiguous float64: the array sgpw reads in place
    X = np.ascontiguousarray(df.iloc[:, :-1].to_numpy(), dtype=np.float64)
    y = df.iloc[:, -1].to_numpy()
    flags = ["--method", "fitc", "--m", "30", "--iters", "60", "--seed", "1"]
    cli_wall, cli_fit, py_wall, py_fit = [], [], [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        out = subprocess.run([args.bin, "fit", "--train", str(TRAIN), "--json", *flags],
                             capture_output=True, text=True, check=True).stdout
        cli_wall.append(time.perf_counter() - start)
        report = json.loads(out)
        cli_fit.append(report["train_seconds"])
        start = time.perf_counter()
        model = sgpw.fit(X, y, **SETTINGS)
        py_wall.append(time.perf_counter() - start)
        py_fit.append(model.train_seconds)
        assert model.nlml == report["nlml"], "not the same fit"
    med = statistics.median
    rows = [
        ("sgpw fit (process: start, read CSV, fit, print)", med(cli_wall), med(cli_fit)),
        ("sgpw.fit (arrays in memory)", med(py_wall), med(py_fit)),
    ]
    print(f"median of {args.repeats} alternating runs; the same fit (NLML {model.nlml!r})\n")
    print("| call | wall s | fit s (train_seconds) | wall − fit s |")
    print("|---|---|---|---|")
    for name, wall, fit in rows:
        print(f"| {name} | {wall:.3f} | {fit:.3f} | {wall - fit:.3f} |")
    over = med([w - f for w, f in zip(py_wall, py_fit)])
    print(f"\nPython call overhead: {over * 1000:.1f} ms = {100 * over / med(py_fit):.2f}% of the fit;"
          f" sgpw.fit wall / sgpw fit wall = {med(py_wall) / med(cli_wall):.3f}")


if __name__ == "__main__":
    main()
