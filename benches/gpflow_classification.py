#!/usr/bin/env python3
"""sgpw's svgp and ep-fitc against GPflow 2.9.2's SVGP(whiten=True, q_diag=False) with
Bernoulli (probit, GPflow's default 1e-3 floor) on one seeded train/test split of a
binary data set, back to back in one run, for docs/results/classification.md.

    /tmp/gpflow/bin/python benches/gpflow_classification.py DATASET OUTDIR M SEED EPOCHS [BATCH]

DATASET is a folder of datasets/ holding data.csv.gz (banana, breast_cancer) whose last
column is the two-class label. The split (a seeded permutation, the first 80% train) is
written to OUTDIR/train.csv and OUTDIR/test.csv, and every fit reads those rows.

- **The same start.** `sgpw fit ... --iters 0 --save-model OUTDIR/start.toml` writes
  svgp's start (inputs standardised on the training rows, σ0², ℓ, the m inducing inputs
  it draws with SEED, q(v) = N(0, I)); GPflow starts from exactly that model, with the
  same standardisation and labels (the smaller label is class 0, as sgpw maps them).
- **The same budget and minibatches.** GPflow trains for EPOCHS passes over the training
  rows, each pass a fresh shuffle cut into minibatches of BATCH rows (default 256, svgp's
  default; a pass's last batch may be short, as svgp's): per minibatch a natural-gradient
  step on q(u) (γ = 0.1, svgp's first-stage default) and then an Adam step (rate 0.01,
  svgp's default) on σ0², ℓ and Z — GPflow's own recipe, both compiled by tf.function.
  sgpw runs `--epochs EPOCHS --batch BATCH`; its stopping rule may end it sooner (its
  later stages grow the batch and finish with L-BFGS on the whole data, docs/methods.md
  §8.2, §8.5).
- **Time per epoch.** GPflow's: the median over its epochs after the first (which traces
  the tf.function), and their mean (`seconds_per_epoch_mean`: on a loaded machine the
  median leaves out the epochs the scheduler stretched, which sgpw's mean counts); sgpw's: its training seconds over the epochs it ran (the model
  file's `[svgp] epochs`), which counts every whole-data evaluation as an epoch.
- ep-fitc is `sgpw fit --method fitc --likelihood bernoulli --m M` on the same files
  (L-BFGS on the EP evidence, its own default budget; no epochs), its model saved as
  OUTDIR/ep_fitc.toml and its fitted σ0² and ℓ printed; EP=0 in the environment leaves
  it out (it does not depend on svgp's code).

Prints one JSON line: for each of gpflow, svgp and ep_fitc the test error rate, NLP and
AUC, the negative bound (or EP's negative log evidence) and the seconds; the epochs and
time per epoch of the two SVGPs. The sgpw binary is $SGPW or target/release/sgpw.
"""
import gzip, json, os, subprocess, sys, time, tomllib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import gpflow
from scipy.stats import norm

gpflow.config.set_default_float(np.float64)
SGPW = os.environ.get("SGPW", "target/release/sgpw")


def scores(p, yt):
    """Test error rate, NLP and AUC of the probabilities p of class 1."""
    lp = np.where(yt == 1.0, np.log(p), np.log(1.0 - p))
    pos, neg = p[yt == 1.0], p[yt == 0.0]
    auc = np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))
    return {"error_rate": float(np.mean((p > 0.5) != (yt == 1.0))), "nlp": float(-lp.mean()), "auc": float(auc)}


def sgpw_fit(out, seed, args, save=None):
    cmd = [SGPW, "fit", "--train", f"{out}/train.csv", "--test", f"{out}/test.csv", "--seed", str(seed),
           "--likelihood", "bernoulli", "--json"] + args
    if save:
        cmd += ["--save-model", save]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.time() - t0
    return json.loads(r.stdout), wall


def main():
    name, out, m, seed, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    batch = int(sys.argv[6]) if len(sys.argv) > 6 else 256
    os.makedirs(out, exist_ok=True)
    with gzip.open(f"datasets/{name}/data.csv.gz", "rt") as f:
        header = f.readline()
        a = np.loadtxt(f, delimiter=",")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(a))
    k = int(round(0.8 * len(a)))
    tr, te = a[order[:k]], a[order[k:]]
    for part, rows in (("train", tr), ("test", te)):
        np.savetxt(f"{out}/{part}.csv", rows, delimiter=",", header=header.strip(), comments="", fmt="%.17g")

    # svgp's start, written by sgpw itself
    sgpw_fit(out, seed, ["--method", "svgp", "--m", str(m), "--iters", "0"], save=f"{out}/start.toml")
    with open(f"{out}/start.toml", "rb") as f:
        start = tomllib.load(f)
    centre = np.array(start["standardize"]["input_center"])
    scale = np.array(start["standardize"]["input_scale"])
    low = min(start["likelihood"]["labels"])
    x = (tr[:, :-1] - centre) / scale
    xt = (te[:, :-1] - centre) / scale
    y = (tr[:, -1:] != low).astype(np.float64)
    yt = (te[:, -1] != low).astype(np.float64)
    n = len(x)

    kernel = gpflow.kernels.SquaredExponential(variance=start["hyper"]["signal_variance"],
                                               lengthscales=np.array(start["hyper"]["lengthscales"]))
    z = np.array(start["inducing"]["points"])
    model = gpflow.models.SVGP(kernel, gpflow.likelihoods.Bernoulli(), z, whiten=True, q_diag=False, num_data=n)
    gpflow.set_trainable(model.q_mu, False)
    gpflow.set_trainable(model.q_sqrt, False)
    natgrad = gpflow.optimizers.NaturalGradient(gamma=0.1)
    adam = tf.optimizers.Adam(0.01)
    spec = (tf.TensorSpec([None, x.shape[1]], tf.float64), tf.TensorSpec([None, 1], tf.float64))

    @tf.function(input_signature=spec)
    def step(xb, yb):
        loss = model.training_loss_closure((xb, yb), compile=False)
        natgrad.minimize(loss, var_list=[(model.q_mu, model.q_sqrt)])
        adam.minimize(loss, var_list=model.trainable_variables)

    shuffle = np.random.default_rng(seed + 1000)
    per_epoch = []
    t0 = time.time()
    for _ in range(epochs):
        e0 = time.time()
        perm = shuffle.permutation(n)
        for b in range(0, n, batch):
            idx = perm[b:b + batch]
            step(tf.constant(x[idx]), tf.constant(y[idx]))
        per_epoch.append(time.time() - e0)
    gp_secs = time.time() - t0
    fmu, fvar = model.predict_f(xt)
    p = norm.cdf(fmu.numpy()[:, 0] / np.sqrt(1.0 + fvar.numpy()[:, 0])) * (1 - 2e-3) + 1e-3
    gp = scores(p, yt)
    gp.update({"neg_elbo": float(-model.elbo((x, y))), "seconds": gp_secs, "epochs": epochs,
               "seconds_per_epoch": float(np.median(per_epoch[1:] if epochs > 1 else per_epoch)),
               "seconds_per_epoch_mean": float(np.mean(per_epoch[1:] if epochs > 1 else per_epoch))})

    # svgp and ep-fitc on the same files, right after
    sv, _ = sgpw_fit(out, seed, ["--method", "svgp", "--m", str(m), "--epochs", str(epochs), "--batch", str(batch)],
                     save=f"{out}/svgp.toml")
    with open(f"{out}/svgp.toml", "rb") as f:
        ran = tomllib.load(f)["svgp"]["epochs"]
    svgp = {"error_rate": sv["error_rate"], "nlp": sv["mnlp"], "auc": sv["auc"], "neg_elbo": sv["nlml"],
            "seconds": sv["train_seconds"], "epochs": ran, "seconds_per_epoch": sv["train_seconds"] / ran,
            "stop": sv["stop"], "steps": sv["iterations"]}
    ep_fitc = None
    if os.environ.get("EP", "1") != "0":
        ep, _ = sgpw_fit(out, seed, ["--method", "fitc", "--m", str(m)], save=f"{out}/ep_fitc.toml")
        with open(f"{out}/ep_fitc.toml", "rb") as f:
            hyper = tomllib.load(f)["hyper"]
        ep_fitc = {"error_rate": ep["error_rate"], "nlp": ep["mnlp"], "auc": ep["auc"], "neg_log_evidence": ep["nlml"],
                   "seconds": ep["train_seconds"], "stop": ep["stop"], "iterations": ep["iterations"],
                   "signal_variance": hyper["signal_variance"], "lengthscales": hyper["lengthscales"]}
    print(json.dumps({"data": name, "m": m, "seed": seed, "batch": batch, "budget_epochs": epochs,
                      "gpflow": gp, "svgp": svgp, "ep_fitc": ep_fitc}))


if __name__ == "__main__":
    main()
