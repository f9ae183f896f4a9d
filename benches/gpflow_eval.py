#!/usr/bin/env python3
"""Time one NLML + full gradient in GPflow (GPRFITC for fitc, SGPR for vfe) at the size
`sgpw bench` uses: n points, d unit-variance inputs, m inducing inputs, the gradient
with respect to every parameter including the m×d inducing inputs. Prints one JSON line
with the median and minimum over --reps evaluations (after two warm-ups, compiled
with tf.function). benches/side_by_side.sh alternates it with `sgpw bench`.

Set up once: python3 -m venv /tmp/gpflow && /tmp/gpflow/bin/pip install \
    gpflow==2.9.2 tensorflow-cpu==2.15.1 tensorflow-probability==0.23.0
"""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

import gpflow  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", choices=["fitc", "vfe"], default="fitc")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--d", type=int, default=8)
    ap.add_argument("--m", type=int, default=200)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(a.threads)
    gpflow.config.set_default_float(np.float64)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((a.n, a.d))
    y = np.sin(x.sum(axis=1, keepdims=True)) + 0.1 * rng.standard_normal((a.n, 1))
    z = x[rng.choice(a.n, a.m, replace=False)].copy()
    kern = gpflow.kernels.SquaredExponential(lengthscales=np.ones(a.d))
    model_cls = gpflow.models.GPRFITC if a.method == "fitc" else gpflow.models.SGPR
    model = model_cls((x, y), kernel=kern, inducing_variable=z, noise_variance=0.1)
    variables = model.trainable_variables

    @tf.function
    def loss_and_grad():
        with tf.GradientTape() as tape:
            loss = model.training_loss()
        return loss, tape.gradient(loss, variables)

    for _ in range(2):
        loss_and_grad()
    times = []
    for _ in range(a.reps):
        t0 = time.perf_counter()
        loss, grads = loss_and_grad()
        _ = [g.numpy() for g in grads]
        times.append(time.perf_counter() - t0)
    print(json.dumps({"method": a.method, "n": a.n, "d": a.d, "m": a.m, "reps": a.reps,
                      "median_eval_seconds": statistics.median(times),
                      "min_eval_seconds": min(times)}))


if __name__ == "__main__":
    main()
