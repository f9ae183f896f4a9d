#!/usr/bin/env python3
"""sgpw's svgp against GPflow 2.9.2's SVGP(whiten=True, q_diag=False) at identical
parameters: the full-data ELBO and its gradient in every parameter (docs/results/svgp.md,
"Agreement with GPflow"). Not part of the test suite.

Set up once (Python 3.11):
    python3 -m venv /tmp/gpflow && /tmp/gpflow/bin/pip install \
        gpflow==2.9.2 tensorflow-cpu==2.15.1 tensorflow-probability==0.23.0

One comparison (kin40k, n = 10000, m = 50; two epochs of training first, so that q(u),
Z and the hyperparameters are all away from their starts):
    D=datasets/kin40k
    sgpw fit --train $D/train.csv.gz --method svgp --m 50 --raw --noise-floor 0 \
        --epochs 2 --batch 1024 --save-model /tmp/svgp50.toml
    (echo "jitter = 1e-6"; cat /tmp/svgp50.toml) > /tmp/svgp50j.toml
    sgpw nlml --model /tmp/svgp50j.toml --train $D/train.csv.gz --json > /tmp/svgp50j.json
    /tmp/gpflow/bin/python benches/gpflow_svgp.py /tmp/svgp50j.toml /tmp/svgp50j.json \
        --train $D/train.csv.gz

`--raw` keeps the inputs as they are (the targets are centred on `target_mean`) and
`--noise-floor 0` makes sgpw's noise parameter log σ², so that both programs see the same
data and parameters. The model's `jitter` key fixes sgpw's jitter at GPflow's default
(an absolute 1e-6; without it sgpw's jitter is 1e-8·σ0², which the script then gives
GPflow, and the ELBO still agrees, but sgpw's ∂/∂log σ0² carries the jitter's share and
GPflow's does not). GPflow's gradient is in its unconstrained variables; it is taken
back to sgpw's parameters (log σ0², log ℓ, log σ², Z, μ, R's lower triangle) by the
chain rule of its transforms (softplus: ∂/∂log p = p ∂/∂u / sigmoid(u); q_sqrt's
FillTriangular is a permutation). Prints one JSON line.
"""
import argparse
import json
import os
import tomllib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

tf.config.threading.set_intra_op_parallelism_threads(2)
tf.config.threading.set_inter_op_parallelism_threads(2)

import gpflow  # noqa: E402

gpflow.config.set_default_float(np.float64)


def load(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    return a[:, :-1].copy(), a[:, -1:].copy()


def rel(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", help="an sgpw svgp model file (fitted with --raw --noise-floor 0)")
    ap.add_argument("nlml_json", help="sgpw nlml --json output at that model")
    ap.add_argument("--train", required=True)
    args = ap.parse_args()

    with open(args.model, "rb") as f:
        mf = tomllib.load(f)
    with open(args.nlml_json) as f:
        ours = json.load(f)
    assert mf["method"] == "svgp", "an svgp model"
    assert "standardize" not in mf, "fit with --raw"
    assert float(mf.get("noise_floor", 0.0)) == 0.0, "fit with --noise-floor 0"
    x, y = load(args.train)
    y = y - float(mf["target_mean"])
    hyper = mf["hyper"]
    z = np.asarray(mf["inducing"]["points"], dtype=np.float64)
    mu = np.asarray(mf["variational"]["mean"], dtype=np.float64)[:, None]
    r = np.asarray(mf["variational"]["chol"], dtype=np.float64)
    m, d = z.shape
    jitter = float(ours["jitter"])
    gpflow.config.set_default_jitter(jitter)

    kernel = gpflow.kernels.SquaredExponential(
        variance=float(hyper["signal_variance"]),
        lengthscales=np.asarray(hyper["lengthscales"], dtype=np.float64),
    )
    lik = gpflow.likelihoods.Gaussian(variance=float(hyper["noise_variance"]))
    model = gpflow.models.SVGP(
        kernel,
        lik,
        inducing_variable=z.copy(),
        whiten=True,
        q_diag=False,
        q_mu=mu.copy(),
        q_sqrt=r[None, :, :].copy(),
        num_data=x.shape[0],
    )
    variables = [
        kernel.variance.unconstrained_variable,
        kernel.lengthscales.unconstrained_variable,
        lik.variance.unconstrained_variable,
        model.inducing_variable.Z.unconstrained_variable,
        model.q_mu.unconstrained_variable,
        model.q_sqrt.unconstrained_variable,
    ]
    data = (x, y)
    with tf.GradientTape() as tape:
        elbo = model.elbo(data)
    grads = tape.gradient(elbo, variables)
    elbo = float(elbo.numpy())

    def to_log(param, g):
        u = param.unconstrained_variable.numpy()
        sig = 1.0 / (1.0 + np.exp(-u))
        return np.atleast_1d(param.numpy() * g.numpy() / sig)

    # the objective is −ELBO: negate GPflow's gradient
    g_head = np.concatenate(
        [
            -to_log(kernel.variance, grads[0]),
            -to_log(kernel.lengthscales, grads[1]),
            -to_log(lik.variance, grads[2]),
        ]
    )
    g_z = -grads[3].numpy().reshape(m, d).T.reshape(-1)  # sgpw packs Z column-major
    g_mu = -grads[4].numpy().reshape(-1)
    # which unconstrained entry holds which (i, j): fill a matrix with its own indices
    bij = model.q_sqrt.transform
    marks = np.zeros((1, m, m))
    for i in range(m):
        for j in range(i + 1):
            marks[0, i, j] = 1 + i * m + j
    where = np.rint(bij.inverse(marks).numpy().reshape(-1)).astype(int)
    g_u = grads[5].numpy().reshape(-1)
    by_entry = {int(w) - 1: g for w, g in zip(where, g_u)}
    g_r = -np.array([by_entry[i * m + j] for j in range(m) for i in range(j, m)])
    gpflow_grad = np.concatenate([g_head, g_z, g_mu, g_r])

    sgpw_obj = float(ours["nlml"])
    sgpw_grad = np.asarray(ours["gradient"], dtype=np.float64)
    out = {
        "n": int(x.shape[0]),
        "m": m,
        "jitter": jitter,
        "sgpw_neg_elbo": sgpw_obj,
        "gpflow_neg_elbo": -elbo,
        "elbo_rel_diff": abs(sgpw_obj + elbo) / abs(elbo),
        "grad_len": int(sgpw_grad.size),
        "grad_rel_diff_head": rel(sgpw_grad[: d + 2], gpflow_grad[: d + 2]),
        "grad_rel_diff_z": rel(sgpw_grad[d + 2 : d + 2 + m * d], g_z),
        "grad_rel_diff_mu": rel(sgpw_grad[d + 2 + m * d : d + 2 + m * d + m], g_mu),
        "grad_rel_diff_chol": rel(sgpw_grad[d + 2 + m * d + m :], g_r),
        "grad_rel_diff": rel(sgpw_grad, gpflow_grad),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
