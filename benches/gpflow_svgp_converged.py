#!/usr/bin/env python3
"""GPflow 2.9.2's SVGP(whiten=True, q_diag=False) with Bernoulli() fitted to its optimum
(scipy L-BFGS on every parameter of the full bound, q(u) included, GPflow's Scipy
optimiser) from the start benches/gpflow_classification.py wrote in OUTDIR, on the same
train/test files: what GPflow's bound prefers when no budget ends it, beside the
budgeted fits of that script (docs/results/classification.md).

    /tmp/gpflow/bin/python benches/gpflow_svgp_converged.py OUTDIR [MAXITER]

Prints one JSON line: the test error rate and NLP, the negative ELBO, L-BFGS's
iterations and whether it converged, and the fitted σ0² and ℓ.
"""
import json, os, sys, tomllib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import gpflow
from scipy.stats import norm

gpflow.config.set_default_float(np.float64)


def main():
    out = sys.argv[1]
    maxiter = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    with open(f"{out}/start.toml", "rb") as f:
        start = tomllib.load(f)
    tr = np.loadtxt(f"{out}/train.csv", delimiter=",", skiprows=1)
    te = np.loadtxt(f"{out}/test.csv", delimiter=",", skiprows=1)
    c = np.array(start["standardize"]["input_center"])
    s = np.array(start["standardize"]["input_scale"])
    low = min(start["likelihood"]["labels"])
    x, xt = (tr[:, :-1] - c) / s, (te[:, :-1] - c) / s
    y = (tr[:, -1:] != low).astype(np.float64)
    yt = (te[:, -1] != low).astype(np.float64)
    kernel = gpflow.kernels.SquaredExponential(variance=start["hyper"]["signal_variance"],
                                               lengthscales=np.array(start["hyper"]["lengthscales"]))
    model = gpflow.models.SVGP(kernel, gpflow.likelihoods.Bernoulli(), np.array(start["inducing"]["points"]),
                               whiten=True, q_diag=False, num_data=len(x))
    res = gpflow.optimizers.Scipy().minimize(model.training_loss_closure((x, y)), model.trainable_variables,
                                             options={"maxiter": maxiter})
    fmu, fvar = model.predict_f(xt)
    p = norm.cdf(fmu.numpy()[:, 0] / np.sqrt(1.0 + fvar.numpy()[:, 0])) * (1 - 2e-3) + 1e-3
    lp = np.where(yt == 1.0, np.log(p), np.log(1.0 - p))
    print(json.dumps({"error_rate": float(np.mean((p > 0.5) != (yt == 1.0))), "nlp": float(-lp.mean()),
                      "neg_elbo": float(-model.elbo((x, y))), "iterations": int(res.nit), "converged": bool(res.success),
                      "signal_variance": float(model.kernel.variance.numpy()),
                      "lengthscales": np.atleast_1d(model.kernel.lengthscales.numpy()).tolist()}))


if __name__ == "__main__":
    main()
