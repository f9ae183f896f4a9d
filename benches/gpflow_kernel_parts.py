#!/usr/bin/env python3
"""GPflow 2.9.2's composed kernels at fixed parameters, for src/kernel/'s fixture test
(tests/fixtures/gpflow_kernel_parts.json): K(X, X2) and the diagonal of K(X) for
Periodic of SE / Matern52 / RationalQuadratic bases, Linear, Polynomial, Constant,
ChangePoints, sums, products and active_dims. sgpw builds the same kernels in
src/kernel/tests.rs and compares entry by entry.

Set up once (Python 3.11):
    python3 -m venv /tmp/gpflow && /tmp/gpflow/bin/pip install \
        gpflow==2.9.2 tensorflow-cpu==2.15.1 tensorflow-probability==0.23.0
Run:
    /tmp/gpflow/bin/python benches/gpflow_kernel_parts.py > tests/fixtures/gpflow_kernel_parts.json
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import gpflow
from gpflow.kernels import (
    SquaredExponential as SE,
    Matern32,
    Matern52,
    RationalQuadratic,
    Periodic,
    Linear,
    Polynomial,
    Constant,
    ChangePoints,
)

gpflow.config.set_default_float(np.float64)


def points(n, d, phase):
    i = np.arange(n)[:, None]
    c = np.arange(d)[None, :]
    return np.sin((i * 3 + c * 5) * 0.61 + phase) * 1.3 + 0.2 * c


def cases():
    # names are read by the Rust side, which builds the same kernel
    yield "periodic_se", 3, lambda: Periodic(SE(variance=1.4, lengthscales=[0.7, 0.9, 1.1]), period=[1.9, 2.3, 2.7])
    yield "periodic_matern52", 1, lambda: Periodic(Matern52(variance=0.8, lengthscales=0.6), period=1.3)
    yield "periodic_rq", 1, lambda: Periodic(RationalQuadratic(variance=1.1, lengthscales=0.9, alpha=2.5), period=0.7)
    yield "linear", 3, lambda: Linear(variance=[0.5, 0.75, 1.0])
    yield "polynomial", 3, lambda: Polynomial(degree=3, variance=[0.5, 0.75, 1.0], offset=0.6)
    yield "constant", 3, lambda: Constant(variance=0.9)
    yield "se_plus_periodic_times_se", 1, lambda: SE(variance=2.0, lengthscales=1.5) + Periodic(
        SE(variance=1.0, lengthscales=0.8), period=1.1
    ) * SE(variance=0.7, lengthscales=2.5)
    yield "linear_plus_matern52", 3, lambda: Linear(variance=[0.5, 0.75, 1.0]) + Matern52(
        variance=1.3, lengthscales=[0.8, 1.1, 1.4]
    )
    yield "matern32_dims01_times_se_dim2", 3, lambda: Matern32(
        variance=1.2, lengthscales=[0.9, 1.3], active_dims=[0, 1]
    ) * SE(variance=0.8, lengthscales=0.7, active_dims=[2])
    yield "rq_plus_constant", 3, lambda: RationalQuadratic(
        variance=0.9, lengthscales=[0.8, 1.0, 1.2], alpha=1.7
    ) + Constant(variance=0.4)
    yield "changepoints_se_se", 1, lambda: ChangePoints(
        [SE(variance=1.0, lengthscales=0.5), SE(variance=2.0, lengthscales=1.5)], locations=[0.1], steepness=4.0
    )
    yield "changepoints_three", 1, lambda: ChangePoints(
        [SE(variance=1.0, lengthscales=0.5), Matern32(variance=2.0, lengthscales=1.5), Linear(variance=0.8)],
        locations=[-0.4, 0.5],
        steepness=[2.0, 3.5],
    )


out = []
for name, d, make in cases():
    k = make()
    x, x2 = points(7, d, 0.1), points(5, d, 1.7)
    out.append(
        {
            "name": name,
            "d": d,
            "x": x.tolist(),
            "x2": x2.tolist(),
            "k": k(x, x2).numpy().tolist(),
            "diag": k(x, full_cov=False).numpy().tolist(),
        }
    )
print(json.dumps({"gpflow": gpflow.__version__, "cases": out}, indent=1))
