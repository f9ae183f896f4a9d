#!/usr/bin/env python3
"""GPflow's GPRFITC (sgpw's fitc) or SGPR (sgpw's vfe) from exactly the start sgpw
uses: the comparisons in docs/results/sparse-family.md ("kin40k: FITC against GPflow's
GPRFITC" and the VFE/SGPR one beside it). Not part of the test suite.

Set up once (Python 3.11):
    python3 -m venv /tmp/gpflow && /tmp/gpflow/bin/pip install \
        gpflow==2.9.2 tensorflow-cpu==2.15.1 tensorflow-probability==0.23.0

One comparison (m = 50, seed 1; --method vfe for SGPR):
    D=datasets/kin40k
    sgpw fit --train $D/train.csv.gz --test $D/test.csv.gz --method fitc --m 50 --seed 1 \
        --iters 0 --json --save-model /tmp/init.toml > /tmp/init.json
    /tmp/gpflow/bin/python benches/gpflow_sparse.py /tmp/init.toml /tmp/init.json \
        --train $D/train.csv.gz --test $D/test.csv.gz
    sgpw fit --train $D/train.csv.gz --test $D/test.csv.gz --method fitc --m 50 --seed 1 --json

The model file's `method` (fitc or vfe) picks GPRFITC or SGPR.

The first command writes sgpw's initial model (inducing inputs at a random subset,
σ0² = mean(y²), ℓ = half the input range, σ² = σ0²/4) and its NLML there. This script
checks that GPflow's NLML at that point is the same (it prints both), then runs
scipy's L-BFGS-B for --maxiter iterations (GPflow's softplus parameterisation) and
prints one JSON line with the final NLML and the test NMSE / MNLP of docs/methods.md §0.

A standardized model (sgpw's default) is fitted in its own units: the script applies the
model file's [standardize] to the data and reports NLMLs on the raw scale, as sgpw does.

To compare the optimisers rather than the parameterisations (docs/results/starts.md,
"The optimiser against scipy's L-BFGS-B"): `--transform exp` makes σ0², ℓ and σ² − floor
GPflow parameters through exp (sgpw's logarithms) instead of softplus, `--maxcor 100`
gives L-BFGS-B sgpw's memory, and `--trace FILE` writes the objective per iteration.

GPflow's default jitter is an absolute 1e-6; sgpw's is 1e-8·σ0². The script uses
sgpw's starting value (fixed), so that the two objectives agree to rounding.
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

gpflow.config.set_default_float(np.float64)


def load(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    return a[:, :-1].copy(), a[:, -1:].copy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", help="sgpw model file written with --iters 0")
    ap.add_argument("fit_json", help="sgpw fit --json output of that run")
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--maxiter", type=int, default=500)
    ap.add_argument(
        "--transform",
        choices=["softplus", "exp"],
        default="softplus",
        help="positive parameters as GPflow's softplus (default) or as sgpw's logarithms",
    )
    ap.add_argument("--maxcor", type=int, default=10, help="L-BFGS-B memory (scipy's 10)")
    ap.add_argument("--trace", help="write the objective after every iteration here")
    ap.add_argument(
        "--gpr-start",
        type=int,
        metavar="N",
        help="replace the model's σ0², ℓ, σ² by those of a GPR fitted on N random "
        "training points from GPflow's defaults (ℓ = 1, σ0² = σ² = 1), seed 1",
    )
    args = ap.parse_args()

    with open(args.model, "rb") as f:
        init = tomllib.load(f)
    with open(args.fit_json) as f:
        start = json.load(f)

    x_train, y_train = load(args.train)
    x_test, y_test = load(args.test)
    target_mean = float(init["target_mean"])
    # sgpw's model units: standardized inputs and targets when the model says so
    # (the default); NLMLs are reported on the raw scale, as sgpw does.
    std = init.get("standardize")
    target_scale = 1.0
    if std:
        center, scale = np.asarray(std["input_center"]), np.asarray(std["input_scale"])
        x_train, x_test = (x_train - center) / scale, (x_test - center) / scale
        target_scale = float(std["target_scale"])
    raw_shift = len(y_train) * math.log(target_scale)
    hyper = init["hyper"]
    z = np.asarray(init["inducing"]["points"], dtype=np.float64)

    if args.gpr_start:
        pick = np.random.default_rng(1).choice(len(x_train), args.gpr_start, replace=False)
        ysub = (y_train[pick] - target_mean) / target_scale
        gpr = gpflow.models.GPR(
            (x_train[pick], ysub),
            gpflow.kernels.SquaredExponential(lengthscales=np.ones(x_train.shape[1])),
        )
        gpflow.optimizers.Scipy().minimize(gpr.training_loss, gpr.trainable_variables)
        hyper = dict(
            signal_variance=float(gpr.kernel.variance.numpy()),
            lengthscales=gpr.kernel.lengthscales.numpy(),
            noise_variance=float(gpr.likelihood.variance.numpy()),
        )
        gpr_mu, _ = gpr.predict_f(x_test)
        gpr_mu = gpr_mu.numpy() * target_scale + target_mean
        print(
            "GPR start: test NMSE",
            float(np.sum((y_test - gpr_mu) ** 2) / np.sum((y_test - y_train.mean()) ** 2)),
            hyper,
        )
    kernel = gpflow.kernels.SquaredExponential(
        variance=float(hyper["signal_variance"]),
        lengthscales=np.asarray(hyper["lengthscales"], dtype=np.float64),
    )
    kind = {"fitc": gpflow.models.GPRFITC, "vfe": gpflow.models.SGPR}[init["method"]]
    model = kind(
        (x_train, (y_train - target_mean) / target_scale),
        kernel,
        inducing_variable=z,
        noise_variance=float(hyper["noise_variance"]),
    )
    gpflow.config.set_default_jitter(float(start["jitter"]))
    if args.transform == "exp":
        # sgpw's parameterisation: log σ0², log ℓ, log(σ² − floor).
        import tensorflow_probability as tfp

        def relog(param, lower=None):
            bij = tfp.bijectors.Exp()
            if lower is not None:
                bij = tfp.bijectors.Chain([tfp.bijectors.Shift(tf.constant(lower, tf.float64)), bij])
            return gpflow.Parameter(param.numpy(), transform=bij)

        kernel.variance = relog(kernel.variance)
        kernel.lengthscales = relog(kernel.lengthscales)
        floor = float(init.get("noise_floor", 0.0))
        model.likelihood.variance = relog(model.likelihood.variance, floor or None)
    trace = []
    nlml_start = float(model.training_loss()) + raw_shift

    t0 = time.perf_counter()
    res = gpflow.optimizers.Scipy().minimize(
        model.training_loss,
        model.trainable_variables,
        method="L-BFGS-B",
        options=dict(maxiter=args.maxiter, maxcor=args.maxcor),
        step_callback=lambda step, variables, values: trace.append(
            float(model.training_loss()) + raw_shift
        ),
        compile=True,
    )
    seconds = time.perf_counter() - t0

    if args.trace:
        with open(args.trace, "w") as f:
            f.writelines(f"{i + 1} {v:.6f}\n" for i, v in enumerate(trace))
    mu, s2 = model.predict_y(x_test)
    mu = mu.numpy() * target_scale + target_mean
    s2 = s2.numpy() * target_scale**2
    nmse = float(np.sum((y_test - mu) ** 2) / np.sum((y_test - y_train.mean()) ** 2))
    mnlp = float(0.5 * np.mean((y_test - mu) ** 2 / s2 + np.log(s2) + math.log(2 * math.pi)))
    print(
        json.dumps(
            dict(
                m=len(z),
                nlml_start_gpflow=nlml_start,
                nlml_start_sgpw=float(start["nlml"]),
                method=init["method"],
                nlml=float(model.training_loss()) + raw_shift,
                nmse=nmse,
                mnlp=mnlp,
                seconds=seconds,
                iterations=int(res.nit),
                evaluations=int(res.nfev),
                message=str(res.message),
                transform=args.transform,
                signal_variance=float(kernel.variance.numpy()),
                noise_variance=float(model.likelihood.variance.numpy()),
                lengthscales=[round(float(v), 4) for v in kernel.lengthscales.numpy()],
            )
        )
    )


if __name__ == "__main__":
    main()
