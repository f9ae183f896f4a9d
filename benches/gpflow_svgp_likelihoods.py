#!/usr/bin/env python3
"""GPflow 2.9.2's SVGP(whiten=True, q_diag=False) ELBO and its gradient with non-Gaussian
likelihoods at identical, fixed parameters, for tests/fixtures/gpflow_svgp_likelihoods.json
(the test `svgp_likelihoods::the_bound_equals_gpflows_with_every_likelihood`).

One synthetic data set (n = 120, D = 2, seeded), m = 50 inducing inputs, an SE kernel
(σ0² = 1.3, ℓ = [0.8, 1.5]), a random q(v) = N(μ, R Rᵀ) and GPflow's default jitter
1e-6; per likelihood its own targets and parameters:
  - bernoulli: probit, p = Φ(f) with no floor (GPflow's `Bernoulli()` puts a 1e-3 floor
    on Φ; sgpw's `[likelihood] name = "bernoulli"` has none, so GPflow is given Φ itself
    as its invlink), expectation by 20-point Gauss–Hermite in both;
  - poisson: exp link, closed form in both;
  - studentt: scale 0.6, df 4.5, 20-point Gauss–Hermite; both parameters differentiated
    (GPflow's df is a plain float: it is replaced by exp of a watched tensor).
The gradient is written in sgpw's packed order: log σ0², log ℓ (2), log σ² (0: not
used by these likelihoods), Z (column-major), the likelihood's log-parameters (studentt:
scale, df), μ, R's lower triangle column by column. GPflow's gradient in its
unconstrained variables is taken back by the chain rule of its transforms, as
benches/gpflow_svgp.py does.

Set up once (Python 3.11):
    python3 -m venv /tmp/gpflow && /tmp/gpflow/bin/pip install \
        gpflow==2.9.2 tensorflow-cpu==2.15.1 tensorflow-probability==0.23.0
Run:
    /tmp/gpflow/bin/python benches/gpflow_svgp_likelihoods.py > tests/fixtures/gpflow_svgp_likelihoods.json
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

import gpflow  # noqa: E402

gpflow.config.set_default_float(np.float64)
JITTER = 1e-6
gpflow.config.set_default_jitter(JITTER)

N, D, M = 120, 2, 50
SIGNAL, LENGTHSCALES = 1.3, [0.8, 1.5]


def probit(f):
    return tfp.distributions.Normal(tf.constant(0.0, tf.float64), tf.constant(1.0, tf.float64)).cdf(f)


def setup():
    rng = np.random.default_rng(43)
    x = rng.uniform(-3.0, 3.0, size=(N, D))
    latent = np.sin(1.3 * x[:, 0]) + 0.5 * np.cos(x[:, 1])
    z = rng.uniform(-3.0, 3.0, size=(M, D))
    mu = 0.5 * rng.standard_normal((M, 1))
    r = np.tril(0.1 * rng.standard_normal((M, M)), -1) + np.diag(rng.uniform(0.3, 0.9, M))
    targets = {
        "bernoulli": (rng.uniform(size=N) < 1.0 / (1.0 + np.exp(-2.0 * latent))).astype(float),
        "poisson": rng.poisson(np.exp(0.8 * latent + 0.5)).astype(float),
        "studentt": latent + 0.3 * rng.standard_t(3.0, size=N),
    }
    return x, latent, z, mu, r, targets


def likelihood(name, logs):
    if name == "bernoulli":
        return gpflow.likelihoods.Bernoulli(invlink=probit), {}
    if name == "poisson":
        return gpflow.likelihoods.Poisson(), {}
    lik = gpflow.likelihoods.StudentT(scale=0.6, df=4.5)
    return lik, {"scale": 0.6, "df": 4.5}


def one(name, x, y, z, mu, r):
    kernel = gpflow.kernels.SquaredExponential(variance=SIGNAL, lengthscales=np.array(LENGTHSCALES))
    lik, params = likelihood(name, None)
    model = gpflow.models.SVGP(
        kernel,
        lik,
        inducing_variable=z.copy(),
        whiten=True,
        q_diag=False,
        q_mu=mu.copy(),
        q_sqrt=r[None, :, :].copy(),
        num_data=N,
    )
    logs = {k: tf.Variable(np.log(v), dtype=tf.float64) for k, v in params.items()}
    variables = [
        kernel.variance.unconstrained_variable,
        kernel.lengthscales.unconstrained_variable,
        model.inducing_variable.Z.unconstrained_variable,
        model.q_mu.unconstrained_variable,
        model.q_sqrt.unconstrained_variable,
    ] + list(logs.values())
    with tf.GradientTape() as tape:
        for k, t in logs.items():
            setattr(lik, k, tf.exp(t))
        elbo = model.elbo((x, y[:, None]))
    grads = tape.gradient(elbo, variables)

    def to_log(param, g):
        u = param.unconstrained_variable.numpy()
        sig = 1.0 / (1.0 + np.exp(-u))
        return np.atleast_1d(param.numpy() * g.numpy() / sig)

    # sgpw's objective is −ELBO: every gradient negated
    g_head = np.concatenate(
        [-to_log(kernel.variance, grads[0]), -to_log(kernel.lengthscales, grads[1]), [0.0]]
    )
    g_z = -grads[2].numpy().T.reshape(-1)
    g_mu = -grads[3].numpy().reshape(-1)
    bij = model.q_sqrt.transform
    marks = np.zeros((1, M, M))
    for i in range(M):
        for j in range(i + 1):
            marks[0, i, j] = 1 + i * M + j
    where = np.rint(bij.inverse(marks).numpy().reshape(-1)).astype(int)
    by_entry = {int(w) - 1: g for w, g in zip(where, grads[4].numpy().reshape(-1))}
    g_r = -np.array([by_entry[i * M + j] for j in range(M) for i in range(j, M)])
    g_lik = np.array([-float(g.numpy()) for g in grads[5:]])
    return {
        "y": y.tolist(),
        "params": params,
        "neg_elbo": -float(elbo.numpy()),
        "gradient": np.concatenate([g_head, g_z, g_lik, g_mu, g_r]).tolist(),
    }


def main():
    x, _, z, mu, r, targets = setup()
    out = {
        "provenance": "benches/gpflow_svgp_likelihoods.py with GPflow "
        + gpflow.__version__
        + ", TensorFlow "
        + tf.__version__,
        "jitter": JITTER,
        "signal_variance": SIGNAL,
        "lengthscales": LENGTHSCALES,
        "x": x.tolist(),
        "z": z.tolist(),
        "mu": mu.reshape(-1).tolist(),
        "chol": r.tolist(),
        "likelihoods": {name: one(name, x, y, z, mu, r) for name, y in targets.items()},
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
