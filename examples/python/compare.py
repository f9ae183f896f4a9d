"""Compare fitc, vfe and ssgp on kin40k from Python: a table of test NMSE, MNLP, the
objective and the training time per method and m, and with matplotlib a figure.

    pip install ./python            # from the repository root
    python examples/python/compare.py [--n-train 2000] [--out compare.png]
"""

import argparse
import pathlib
import time

import numpy as np
import pandas as pd

import sgpw

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load(part, rows=None):
    df = pd.read_csv(ROOT / "datasets" / "kin40k" / f"{part}.csv.gz")
    df = df.head(rows) if rows else df
    return df.iloc[:, :-1].to_numpy(), df.iloc[:, -1].to_numpy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=2000, help="training rows used (of 10000)")
    ap.add_argument("--m", type=int, nargs="+", default=[10, 25, 50])
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--out", default="compare.png", help="the figure (needs matplotlib)")
    args = ap.parse_args()
    X, y = load("train", args.n_train)
    Xt, yt = load("test")
    rows = []
    for method in ("fitc", "vfe", "ssgp"):
        for m in args.m:
            start = time.perf_counter()
            model = sgpw.fit(X, y, method=method, m=m, iterations=args.iterations,
                             X_test=Xt, y_test=yt)
            rows.append(dict(method=method, m=m, nmse=model.nmse, mnlp=model.mnlp,
                             objective=model.objective, value=model.nlml,
                             iterations=model.iterations,
                             seconds=time.perf_counter() - start))
    table = pd.DataFrame(rows)
    print(f"kin40k: {len(y)} training points, {len(yt)} test points\n")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(matplotlib is not installed: no figure)")
        return
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for method, group in table.groupby("method"):
        axes[0].plot(group["m"], group["nmse"], "o-", label=method)
        axes[1].plot(group["m"], group["mnlp"], "o-", label=method)
    for ax, name in zip(axes, ("test NMSE", "test MNLP")):
        ax.set_xlabel("m")
        ax.set_ylabel(name)
        ax.set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].legend()
    fig.suptitle(f"kin40k, {len(y)} training points")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"\nfigure: {args.out}")


if __name__ == "__main__":
    main()
