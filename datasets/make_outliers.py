#!/usr/bin/env python3
"""Writes datasets/outliers/{train,test}.csv: a 1-D regression set with gross outliers,
for the Student-t likelihood (issue 43). The function is Neal's robust-regression example
(R. M. Neal, *Monte Carlo implementation of Gaussian process models for Bayesian
regression and classification*, Technical Report 9702, University of Toronto, 1997):

    f(x) = 0.3 + 0.4x + 0.5 sin(2.7x) + 1.1 / (1 + x²)

Training rows: 200 inputs uniform on [-3, 3], y = f(x) + e, where e ~ N(0, 0.1²) for
85% of the rows and e ~ N(0, 1.0²) for the other 15% (the outliers; Neal's noise level
and outlier spread, with more outliers than his 5%). Test rows: 500 inputs uniform on
[-3, 3] with the inliers' noise only, so a test NMSE measures how well f was recovered.
Python's own seeded generator (random.Random(43)), standard library only, so the files
are the same bytes on every Python 3. Run from the repository's top:

    python3 datasets/make_outliers.py
"""
import math
import random


def f(x):
    return 0.3 + 0.4 * x + 0.5 * math.sin(2.7 * x) + 1.1 / (1.0 + x * x)


def main():
    rng = random.Random(43)
    rows = {"train": [], "test": []}
    for _ in range(200):
        x = rng.uniform(-3.0, 3.0)
        outlier = rng.random() < 0.15
        rows["train"].append((x, f(x) + rng.gauss(0.0, 1.0 if outlier else 0.1)))
    for _ in range(500):
        x = rng.uniform(-3.0, 3.0)
        rows["test"].append((x, f(x) + rng.gauss(0.0, 0.1)))
    for name, part in rows.items():
        with open(f"datasets/outliers/{name}.csv", "w") as out:
            out.write("x,y\n")
            for x, y in part:
                out.write(f"{x!r},{y!r}\n")


if __name__ == "__main__":
    main()
