#!/usr/bin/env python3
"""GPflow 2.9.2's SVGP trained with the natural-gradient recipe (NaturalGradient(γ) on
q(u), Adam(lr) on the kernel, the noise and Z; whiten=True, q_diag=False), from an sgpw
svgp model file's starting point, for the time per epoch beside sgpw's
(benches/svgp_side_by_side.sh; docs/results/svgp.md). Not part of the test suite.

    /tmp/gpflow/bin/python benches/gpflow_svgp_train.py START.toml \
        --train $D/train.csv.gz --test $D/test.csv.gz --batch 1024 --epochs 5

START.toml is `sgpw fit --method svgp --raw --noise-floor 0 --iters 0 --save-model`
(Z at sgpw's seeded subset, q(u) = N(0, I), the hyperparameters of docs/methods.md §0.4).
A start with `[likelihood] name = "bernoulli"` (`--likelihood bernoulli`, inputs
standardised or not) is fitted with GPflow's Bernoulli() (probit, 20 Gauss–Hermite
points for the expected log-likelihood, as sgpw's default) on the inputs standardised
as the model file says and the labels mapped as sgpw maps them (the smaller is class 0);
it reports the test error rate and NLP instead of NMSE and MNLP.
One compiled step (tf.function) is taken first and not timed. Prints one JSON line:
seconds per epoch (wall, and CPU over all the process's threads), the full negative ELBO at the end and the test NMSE / MNLP.
"""
import argparse
import json
import math
import os
import time
import tomllib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

tf.config.threading.set_intra_op_parallelism_threads(2)
tf.config.threading.set_inter_op_parallelism_threads(2)

import gpflow  # noqa: E402
from gpflow.optimizers import NaturalGradient  # noqa: E402

gpflow.config.set_default_float(np.float64)


def load(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    return a[:, :-1].copy(), a[:, -1:].copy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("start", help="sgpw svgp model file written with --iters 0")
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--nat-step", type=float, default=0.1)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    with open(args.start, "rb") as f:
        mf = tomllib.load(f)
    bernoulli = mf.get("likelihood", {}).get("name") == "bernoulli"
    assert mf["method"] == "svgp" and (bernoulli or "standardize" not in mf), "an svgp model fitted --raw"
    x, y = load(args.train)
    xt, yt = load(args.test)
    if bernoulli:
        if "standardize" in mf:
            c = np.asarray(mf["standardize"]["input_center"])
            sc = np.asarray(mf["standardize"]["input_scale"])
            x, xt = (x - c) / sc, (xt - c) / sc
        low = min(mf["likelihood"]["labels"])
        y, yt = (y != low).astype(np.float64), (yt != low).astype(np.float64)
    ybar = float(mf["target_mean"])
    y = y - ybar
    hyper = mf["hyper"]
    z = np.asarray(mf["inducing"]["points"], dtype=np.float64)
    n = x.shape[0]
    kernel = gpflow.kernels.SquaredExponential(
        variance=float(hyper["signal_variance"]),
        lengthscales=np.asarray(hyper["lengthscales"], dtype=np.float64),
    )
    if bernoulli:
        lik = gpflow.likelihoods.Bernoulli()
    else:
        lik = gpflow.likelihoods.Gaussian(variance=float(hyper["noise_variance"]))
    model = gpflow.models.SVGP(
        kernel, lik, inducing_variable=z.copy(), whiten=True, q_diag=False, num_data=n
    )
    gpflow.set_trainable(model.q_mu, False)
    gpflow.set_trainable(model.q_sqrt, False)
    natgrad = NaturalGradient(gamma=args.nat_step)
    adam = tf.optimizers.Adam(args.lr)
    tf.random.set_seed(args.seed)
    batches = iter(
        tf.data.Dataset.from_tensor_slices((x, y))
        .repeat()
        .shuffle(n, seed=args.seed)
        .batch(args.batch)
    )

    @tf.function
    def step(batch):
        loss = model.training_loss_closure(batch)
        natgrad.minimize(loss, [(model.q_mu, model.q_sqrt)])
        adam.minimize(loss, model.trainable_variables)

    per_epoch = math.ceil(n / args.batch)
    step(next(batches))  # compile (not timed)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(args.epochs * per_epoch - 1):
        step(next(batches))
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0  # every thread of the process
    neg_elbo = -float(model.elbo((x, y)).numpy())
    mean, var = model.predict_y(xt)
    mean = mean.numpy() + ybar
    var = var.numpy()
    out = {
        "gpflow": gpflow.__version__,
        "m": int(z.shape[0]),
        "batch": args.batch,
        "epochs": args.epochs,
        "timed_steps": args.epochs * per_epoch - 1,
        "seconds_per_epoch": seconds / (args.epochs * per_epoch - 1) * per_epoch,
        "cpu_seconds_per_epoch": cpu / (args.epochs * per_epoch - 1) * per_epoch,
        "neg_elbo": neg_elbo,
    }
    if bernoulli:
        p = mean[:, 0]  # p(y = 1), with GPflow's 1e-3 floor on the probit
        out["error_rate"] = float(np.mean((p > 0.5) != (yt[:, 0] == 1.0)))
        out["nlp"] = float(-np.mean(np.where(yt[:, 0] == 1.0, np.log(p), np.log(1.0 - p))))
    else:
        out["nmse"] = float(np.sum((yt - mean) ** 2) / np.sum((yt - ybar) ** 2))
        out["mnlp"] = float(0.5 * np.mean((yt - mean) ** 2 / var + np.log(var) + math.log(2 * math.pi)))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
