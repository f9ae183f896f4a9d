#!/usr/bin/env python3
"""sgpw's classifiers with their defaults on binary data sets that are not in the repo,
against scikit-learn's GaussianProcessClassifier, for docs/results/classification.md
("Data sets not in the repo").

    /tmp/gpflow/bin/python benches/classification_unseen.py OUTDIR [SET ...]

Every set is made here by scikit-learn (generated with a fixed seed, or shipped with
it: digits, wine), split 70/30 by a seeded permutation and written to
OUTDIR/SET/{train,test}.csv with the label last. sgpw fits each with `--likelihood
bernoulli --m 32 --seed 1` and nothing else: svgp, fitc (EP-FITC), pep (power EP,
α = 0.5) and vfe (which EP does not run: the error is the result). scikit-learn's
`GaussianProcessClassifier` (Laplace, an exact GP, constant × ARD RBF, inputs
standardised on the training rows) is the reference. Prints one JSON line per set and
method: test error rate, NLP, AUC, the stop reason, seconds, the fitted σ0², and the
first line of whatever sgpw printed on stderr (its notes), or the last (its error).
The sgpw binary is $SGPW or target/release/sgpw.
"""
import json, os, subprocess, sys, time, tomllib

import numpy as np
from sklearn import datasets
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel

SGPW = os.environ.get("SGPW", "target/release/sgpw")
METHODS = [("svgp", []), ("fitc", []), ("pep", ["--alpha", "0.5"]), ("vfe", [])]


def make(name):
    """(X, y, label column values as written) of one set."""
    if name == "moons":
        x, y = datasets.make_moons(1000, noise=0.3, random_state=0)
    elif name == "circles":
        x, y = datasets.make_circles(1000, noise=0.15, factor=0.5, random_state=0)
    elif name == "digits-0":
        x, t = datasets.load_digits(return_X_y=True)
        y = (t == 0).astype(int)
    elif name == "wine-0":
        x, t = datasets.load_wine(return_X_y=True)
        y = (t == 0).astype(int)
    elif name == "plus-minus-one":
        x, y = datasets.make_classification(800, 5, n_informative=3, random_state=1)
        return x, y, np.where(y == 1, "1", "-1")
    elif name == "strings":
        x, y = datasets.make_classification(800, 5, n_informative=3, random_state=2)
        return x, y, np.where(y == 1, "spam", "ham")
    elif name == "imbalanced":
        x, y = datasets.make_classification(2000, 4, n_informative=2, n_redundant=0, weights=[0.97],
                                            flip_y=0.0, class_sep=1.0, random_state=3)
    elif name == "separable":
        x, y = datasets.make_blobs(600, 2, centers=[[-4, 0], [4, 0]], cluster_std=0.7, random_state=4)
    else:
        raise SystemExit(f"unknown set {name}")
    return x, y, y.astype(str)


def scores(p, yt):
    p = np.clip(p, 1e-300, 1 - 1e-16)
    lp = np.where(yt == 1, np.log(p), np.log1p(-p))
    pos, neg = p[yt == 1], p[yt == 0]
    auc = np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))
    return {"error_rate": float(np.mean((p > 0.5) != (yt == 1))), "nlp": float(-lp.mean()), "auc": float(auc)}


def write(path, x, labels):
    with open(path, "w") as f:
        f.write(",".join([f"x{j}" for j in range(x.shape[1])] + ["label"]) + "\n")
        for row, lab in zip(x, labels):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{lab}\n")


def run_set(out, name):
    x, y, labels = make(name)
    rng = np.random.default_rng(7)
    order = rng.permutation(len(y))
    k = int(round(0.7 * len(y)))
    tr, te = order[:k], order[k:]
    d = f"{out}/{name}"
    os.makedirs(d, exist_ok=True)
    write(f"{d}/train.csv", x[tr], labels[tr])
    write(f"{d}/test.csv", x[te], labels[te])
    base = {"set": name, "n_train": len(tr), "n_test": len(te), "d": x.shape[1],
            "positive_rate": float(np.mean(y))}
    for method, extra in METHODS:
        cmd = [SGPW, "fit", "--train", f"{d}/train.csv", "--test", f"{d}/test.csv", "--method", method,
               "--m", "32", "--seed", "1", "--likelihood", "bernoulli", "--json",
               "--save-model", f"{d}/{method}.toml"] + extra
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.time() - t0
        lines = r.stderr.strip().splitlines() or [""]
        # a failure's error is its last line; a fit's notes its first
        row = dict(base, method=method, wall=round(wall, 2), exit=r.returncode,
                   stderr=(lines[0] if r.returncode == 0 else lines[-1])[:300])
        if r.returncode == 0:
            j = json.loads(r.stdout)
            with open(f"{d}/{method}.toml", "rb") as f:
                model = tomllib.load(f)
            row.update(error_rate=j["error_rate"], nlp=j["mnlp"], auc=j["auc"], stop=j["stop"],
                       iterations=j["iterations"], seconds=j["train_seconds"],
                       signal_variance=model["hyper"]["signal_variance"],
                       unbounded=j.get("latent_scale_unbounded"))
        print(json.dumps(row), flush=True)
    # scikit-learn's exact GP classifier (Laplace), inputs standardised on the training rows
    mu, sd = x[tr].mean(0), x[tr].std(0)
    sd[sd == 0] = 1.0
    xs, xts = (x[tr] - mu) / sd, (x[te] - mu) / sd
    kern = ConstantKernel(1.0) * RBF(np.ones(x.shape[1]))
    t0 = time.time()
    gpc = GaussianProcessClassifier(kern, random_state=0).fit(xs, y[tr])
    secs = time.time() - t0
    p = gpc.predict_proba(xts)[:, 1]
    print(json.dumps(dict(base, method="sklearn-gpc", seconds=round(secs, 2), **scores(p, y[te]),
                          signal_variance=float(gpc.kernel_.k1.constant_value))), flush=True)


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or ["moons", "circles", "digits-0", "wine-0", "plus-minus-one", "strings",
                             "imbalanced", "separable"]
    for name in names:
        run_set(out, name)


if __name__ == "__main__":
    main()
