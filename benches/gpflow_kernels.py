#!/usr/bin/env python3
"""NLML and gradient of sgpw's kernels against GPflow 2.9.2 at identical parameters:
the exact GP against GPR (n = 1000) and fitc / vfe against GPRFITC / SGPR (kin40k,
n = 10000, m = 50), each with Matern12, Matern32, Matern52 and RationalQuadratic
(docs/results/kernels.md). Not part of the test suite.

Set up once (Python 3.11):
    python3 -m venv /tmp/gpflow && /tmp/gpflow/bin/pip install \
        gpflow==2.9.2 tensorflow-cpu==2.15.1 tensorflow-probability==0.23.0

Run from the repository root after `cargo build --release`:
    /tmp/gpflow/bin/python benches/gpflow_kernels.py [--sgpw target/release/sgpw]

For each (method, kernel) the script writes sgpw's starting model on the raw data
(`sgpw fit --raw --iters 0 --save-model`: inducing inputs at a seeded random subset,
σ0² = mean(y²), ℓ = half the input ranges, σ² = σ0²/4; rq's α set to 2.5), fixes the
jitter of the sparse models at 1e-6 (GPflow's default, a constant there) and removes the noise floor (so
sgpw's packed noise is plain log σ²), then asks `sgpw nlml --json` for the objective
and its gradient in sgpw's packing order [log σ0², log ℓ, (log α), log σ², Z]. GPflow
gets the same values as `Parameter`s with an Exp bijector, so its gradient with respect
to the unconstrained variables is the gradient in the same logarithms. It prints one
JSON line per pair with the largest relative differences and exits non-zero if any
exceeds --tol.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

tf.config.threading.set_intra_op_parallelism_threads(2)
tf.config.threading.set_inter_op_parallelism_threads(2)

import gpflow  # noqa: E402

gpflow.config.set_default_float(np.float64)
JITTER = 1e-6
KERNELS = {
    "matern12": gpflow.kernels.Matern12,
    "matern32": gpflow.kernels.Matern32,
    "matern52": gpflow.kernels.Matern52,
    "rq": gpflow.kernels.RationalQuadratic,
}
RQ_ALPHA = 2.5


def load(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    return a[:, :-1].copy(), a[:, -1:].copy()


def with_difference_distances(cls):
    """The GPflow kernel with r² summed from differences, (x − x')/ℓ, as sgpw forms it.
    GPflow's own square_distance expands ‖a‖² + ‖b‖² − 2aᵀb, which leaves r² ≈ 1e-16
    instead of 0 at coinciding points (inducing inputs start at training inputs); for
    Matern12, whose κ = exp(−√r²), that moves entries by ~1e-8 (--gpflow-distances
    keeps GPflow's own)."""

    class Differences(cls):
        def scaled_squared_euclid_dist(self, X, X2=None):
            a = self.scale(X)
            b = a if X2 is None else self.scale(X2)
            return tf.reduce_sum(tf.square(a[:, None, :] - b[None, :, :]), axis=-1)

    return Differences


def positive(v):
    return gpflow.Parameter(v, transform=tfp.bijectors.Exp())


def sgpw_model(sgpw, train, method, kernel, m, out):
    subprocess.run(
        [sgpw, "fit", "--train", train, "--method", method, "--m", str(m), "--seed", "1",
         "--kernel", kernel, "--raw", "--iters", "0", "--save-model", out],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    text = open(out).read()
    text = re.sub(r"(?m)^noise_floor = .*\n", "", text)
    text = re.sub(r"(?m)^jitter = .*\n", "", text)
    if method != "full":
        # GPflow adds its jitter to Kuu only (GPR has none; sgpw's exact GP adds none
        # unless K + σ²I fails to factorise)
        text = f"jitter = {JITTER!r}\n" + text
    text = re.sub(r"(?m)^rq_alpha = .*$", f"rq_alpha = {RQ_ALPHA!r}", text)
    open(out, "w").write(text)
    with open(out, "rb") as f:
        return tomllib.load(f)


def sgpw_nlml(sgpw, model_path, train):
    out = subprocess.run(
        [sgpw, "nlml", "--model", model_path, "--train", train, "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def gpflow_eval(model_toml, kernel_name, x, y, own_distances):
    h = model_toml["hyper"]
    cls = KERNELS[kernel_name]
    kern = (cls if own_distances else with_difference_distances(cls))()
    kern.variance = positive(float(h["signal_variance"]))
    kern.lengthscales = positive(np.asarray(h["lengthscales"], dtype=np.float64))
    params = [kern.variance, kern.lengthscales]
    if kernel_name == "rq":
        kern.alpha = positive(float(h["rq_alpha"]))
        params.append(kern.alpha)
    y = y - float(model_toml.get("target_mean", 0.0))
    method = model_toml["method"]
    if method == "full":
        model = gpflow.models.GPR((x, y), kern, noise_variance=float(h["noise_variance"]))
    else:
        z = np.asarray(model_toml["inducing"]["points"], dtype=np.float64)
        cls = {"fitc": gpflow.models.GPRFITC, "vfe": gpflow.models.SGPR}[method]
        model = cls((x, y), kern, inducing_variable=z,
                    noise_variance=float(h["noise_variance"]))
    model.likelihood.variance = positive(float(h["noise_variance"]))
    params.append(model.likelihood.variance)
    if method != "full":
        params.append(model.inducing_variable.Z)
    variables = [p.unconstrained_variable if isinstance(p, gpflow.Parameter) else p
                 for p in params]
    with tf.GradientTape() as tape:
        loss = model.training_loss()
    grads = tape.gradient(loss, variables)
    flat = []
    for g in grads:
        g = g.numpy()
        # Z: sgpw packs it column-major (one input dimension after another)
        flat.extend(g.flatten(order="F") if g.ndim == 2 else np.atleast_1d(g))
    return float(loss), np.asarray(flat)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sgpw", default="target/release/sgpw")
    ap.add_argument("--train", default="datasets/kin40k/train.csv.gz")
    ap.add_argument("--n-exact", type=int, default=1000)
    ap.add_argument("--n-sparse", type=int, default=10000)
    ap.add_argument("--m", type=int, default=50)
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--methods", default="full,fitc,vfe")
    ap.add_argument("--gpflow-distances", action="store_true",
                    help="GPflow's own expanded r² (see with_difference_distances)")
    a = ap.parse_args()
    gpflow.config.set_default_jitter(JITTER)
    x_all, y_all = load(a.train)
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        sets = {}
        for name, n in [("exact", a.n_exact), ("sparse", a.n_sparse)]:
            path = os.path.join(tmp, f"{name}.csv")
            header = ",".join([f"x{d}" for d in range(x_all.shape[1])] + ["y"])
            np.savetxt(path, np.hstack([x_all[:n], y_all[:n]]), delimiter=",",
                       header=header, comments="", fmt="%.17g")
            sets[name] = (path, x_all[:n], y_all[:n])
        for method in a.methods.split(","):
            path, x, y = sets["exact" if method == "full" else "sparse"]
            for kernel in KERNELS:
                model_path = os.path.join(tmp, f"{method}-{kernel}.toml")
                model = sgpw_model(a.sgpw, path, method, kernel, a.m, model_path)
                ours = sgpw_nlml(a.sgpw, model_path, path)
                nlml, grad = gpflow_eval(model, kernel, x, y, a.gpflow_distances)
                g_ours = np.asarray(ours["gradient"])
                rel_nlml = abs(ours["nlml"] - nlml) / abs(nlml)
                # relative to the gradient's size: entries near 0 have no relative scale
                rel_grad = float(np.max(np.abs(g_ours - grad)) / np.max(np.abs(grad)))
                head = len(model["hyper"]["lengthscales"]) + 2 + (kernel == "rq")
                rel_head = float(np.max(np.abs(g_ours[:head] - grad[:head])
                                        / np.abs(grad[:head])))
                worst = max(worst, rel_nlml, rel_grad, rel_head)
                print(json.dumps(dict(
                    method=method, kernel=kernel, n=len(y), m=0 if method == "full" else a.m,
                    nlml_sgpw=ours["nlml"], nlml_gpflow=nlml, rel_nlml=rel_nlml,
                    rel_grad_hyper=rel_head, rel_grad_all=rel_grad,
                    grad_len=len(grad))), flush=True)
    print(json.dumps(dict(worst=worst, tol=a.tol)))
    sys.exit(0 if worst <= a.tol else 1)


if __name__ == "__main__":
    main()
