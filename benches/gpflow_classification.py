#!/usr/bin/env python3
"""GPflow 2.9.2's SVGP(whiten=True, q_diag=False) with Bernoulli (probit, GPflow's
default 1e-3 floor) on a train/test split of breast cancer, for docs/results/
classification.md: the split is written as two CSV files (a seeded permutation, 80%
train) so that sgpw fits the very same rows with --train/--test. Inputs standardised on
the training rows; Z starts at m training rows drawn with the same seed; every
parameter (kernel, Z, q) is fitted by scipy L-BFGS on the full ELBO (n = 455 is small),
up to 2000 iterations. Prints one JSON line: test error rate, NLP, AUC, seconds.

    /tmp/gpflow/bin/python benches/gpflow_classification.py OUTDIR M SEED
"""
import gzip, json, os, sys, time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import gpflow
from scipy.stats import norm

gpflow.config.set_default_float(np.float64)


def main():
    out, m, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with gzip.open("datasets/breast_cancer/data.csv.gz", "rt") as f:
        header = f.readline()
        a = np.loadtxt(f, delimiter=",")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(a))
    k = int(round(0.8 * len(a)))
    tr, te = a[order[:k]], a[order[k:]]
    for name, part in (("train", tr), ("test", te)):
        np.savetxt(f"{out}/{name}.csv", part, delimiter=",", header=header.strip(), comments="", fmt="%.17g")
    x, y = tr[:, :-1], tr[:, -1:]
    xt, yt = te[:, :-1], te[:, -1]
    mu, sd = x.mean(0), x.std(0)
    x, xt = (x - mu) / sd, (xt - mu) / sd
    z = x[rng.choice(len(x), m, replace=False)].copy()
    kernel = gpflow.kernels.SquaredExponential(lengthscales=np.ones(x.shape[1]) * np.sqrt(x.shape[1]))
    model = gpflow.models.SVGP(kernel, gpflow.likelihoods.Bernoulli(), z, whiten=True, q_diag=False, num_data=len(x))
    t0 = time.time()
    res = gpflow.optimizers.Scipy().minimize(model.training_loss_closure((x, y)), model.trainable_variables, options={"maxiter": 2000})
    secs = time.time() - t0
    fmu, fvar = model.predict_f(xt)
    p = norm.cdf(fmu.numpy()[:, 0] / np.sqrt(1.0 + fvar.numpy()[:, 0])) * (1 - 2e-3) + 1e-3
    lp = np.where(yt == 1.0, np.log(p), np.log(1.0 - p))
    pos, neg = p[yt == 1.0], p[yt == 0.0]
    auc = np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))
    print(json.dumps({"m": m, "seed": seed, "error_rate": float(np.mean((p > 0.5) != (yt == 1.0))),
                      "nlp": float(-lp.mean()), "auc": float(auc), "neg_elbo": float(-model.elbo((x, y))),
                      "iterations": int(res.nit), "success": bool(res.success), "seconds": secs}))


if __name__ == "__main__":
    main()
