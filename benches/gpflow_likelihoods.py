#!/usr/bin/env python3
"""GPflow 2.9.2's likelihoods at fixed points, for src/likelihoods/'s fixture test
(tests/fixtures/gpflow_likelihoods.json): for q(f) = N(mu, var) and a target y, the
expected log-density (`variational_expectations`) with its derivatives in mu, var and
the logarithm of each likelihood parameter, `predict_log_density` and
`predict_mean_and_var`. GPflow's defaults: 20 Gauss-Hermite points, Bernoulli's probit
with its 1e-3 floor (sgpw's `Bernoulli::gpflow()`).

Set up once (Python 3.11):
    python3 -m venv /tmp/gpflow && /tmp/gpflow/bin/pip install \
        gpflow==2.9.2 tensorflow-cpu==2.15.1 tensorflow-probability==0.23.0
Run:
    /tmp/gpflow/bin/python benches/gpflow_likelihoods.py > tests/fixtures/gpflow_likelihoods.json

Derivatives in a parameter's logarithm: the parameter attribute is replaced by
exp(log_theta) of a watched tensor, so GPflow's own code differentiates through it.
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import gpflow

gpflow.config.set_default_float(np.float64)

POINTS = [(-1.1, 0.4), (0.2, 1e-3), (0.9, 2.5), (2.7, 0.05)]


def cases():
    yield "gaussian", {"noise_variance": 0.3}, [0.7, -2.0], lambda: gpflow.likelihoods.Gaussian(variance=0.3)
    yield "studentt", {"scale": 0.4, "df": 4.5}, [-1.3, 0.5], lambda: gpflow.likelihoods.StudentT(scale=0.4, df=4.5)
    yield "bernoulli_gpflow", {}, [0.0, 1.0], lambda: gpflow.likelihoods.Bernoulli()
    yield "bernoulli_logit", {}, [0.0, 1.0], lambda: gpflow.likelihoods.Bernoulli(invlink=tf.sigmoid)
    yield "poisson", {}, [0.0, 3.0], lambda: gpflow.likelihoods.Poisson()


ATTR = {"noise_variance": "variance", "scale": "scale", "df": "df"}


def one(make, params, y, mu, var):
    lik = make()
    logs = {k: tf.constant(np.log(v), dtype=tf.float64) for k, v in params.items()}
    fmu = tf.constant([[mu]], dtype=tf.float64)
    fvar = tf.constant([[var]], dtype=tf.float64)
    yy = tf.constant([[y]], dtype=tf.float64)
    x = tf.zeros((1, 1), dtype=tf.float64)  # GPflow 2.9's likelihoods take X first
    with tf.GradientTape() as tape:
        tape.watch([fmu, fvar] + list(logs.values()))
        for k, t in logs.items():
            setattr(lik, ATTR[k], tf.exp(t))
        ve = tf.reduce_sum(lik.variational_expectations(x, fmu, fvar, yy))
    grads = tape.gradient(ve, [fmu, fvar] + list(logs.values()))
    lpd = tf.reduce_sum(lik.predict_log_density(x, fmu, fvar, yy))
    pm, pv = lik.predict_mean_and_var(x, fmu, fvar)
    return {
        "y": y, "mean": mu, "var": var,
        "expected": float(ve),
        "d_mean": float(tf.reduce_sum(grads[0])),
        "d_var": float(tf.reduce_sum(grads[1])),
        "d_log_params": [float(g) for g in grads[2:]],
        "log_predictive_density": float(lpd),
        "predictive_mean": float(tf.reduce_sum(pm)),
        "predictive_var": float(tf.reduce_sum(pv)),
    }


out = {"gpflow": gpflow.__version__, "quadrature_points": 20, "cases": []}
for name, params, ys, make in cases():
    rows = [one(make, params, y, mu, var) for y in ys for (mu, var) in POINTS]
    out["cases"].append({"likelihood": name, "params": params, "rows": rows})
print(json.dumps(out, indent=1))
