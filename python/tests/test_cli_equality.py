"""A fit from Python and the same fit from the command line are the same computation:
the same NLML, trace length and predictions, bit for bit."""

import json

import numpy as np
import pandas as pd
import pytest

import sgpw
from conftest import read_csv, run_cli


def cli_predictions(model_path, inputs):
    out, _, _ = run_cli("predict", "--model", model_path, "--input", inputs)
    rows = [l.split(",") for l in out.strip().splitlines()[1:]]
    return np.array([[float(v) for v in r] for r in rows])


@pytest.mark.parametrize(
    "method,extra",
    [("vfe", []), ("fitc", ["--restarts", "2"]), ("ssgp", []), ("pep", ["--alpha", "0.3"])],
)
def test_python_fit_equals_cli_fit(kin40k_small, tmp_path, method, extra):
    files = kin40k_small
    saved = tmp_path / "cli.toml"
    out, _, _ = run_cli(
        "fit", "--train", files["train"], "--test", files["test"], "--method", method,
        "--m", 20, "--iters", 60, "--seed", 3, "--json", "--save-model", saved, *extra,
    )
    cli = json.loads(out)
    X, y, names = read_csv(files["train"])
    Xt, yt, _ = read_csv(files["test"])
    options = {extra[i].lstrip("-").replace("-", "_"): extra[i + 1] for i in range(0, len(extra), 2)}
    # a DataFrame, so the model file names the inputs as the CSV header does
    frame = pd.DataFrame(X, columns=names)
    model = sgpw.fit(frame, y, method=method, m=20, iterations=60, seed=3, X_test=Xt, y_test=yt, **options)
    assert model.nlml == cli["nlml"]  # exactly
    assert model.iterations == cli["iterations"]
    assert model.evaluations == cli["evaluations"]
    assert model.nmse == cli["nmse"] and model.mnlp == cli["mnlp"]
    assert len(model.trace) == model.iterations + 1
    # predictions: the CLI's from its saved model, Python's from its own fit
    mine = tmp_path / "py.toml"
    model.save(mine)
    expected = cli_predictions(saved, files["test"])
    mean, latent = model.predict(Xt)
    _, noisy = model.predict(Xt, noisy=True)
    np.testing.assert_array_equal(mean, expected[:, 0])
    np.testing.assert_array_equal(latent, expected[:, 1])
    np.testing.assert_array_equal(noisy, expected[:, 2])
    # and the model files agree but for the time the fit took
    strip = lambda text: "\n".join(l for l in text.splitlines() if not l.startswith("train_seconds"))
    assert strip(mine.read_text()) == strip(saved.read_text())
    np.testing.assert_array_equal(cli_predictions(mine, files["test"]), expected)


def test_a_cli_model_loads_in_python(kin40k_small, tmp_path):
    files = kin40k_small
    saved = tmp_path / "cli.toml"
    run_cli("fit", "--train", files["train"], "--method", "fitc", "--m", 10, "--iters", 20,
            "--save-model", saved)
    model = sgpw.load(saved)
    Xt, _, names = read_csv(files["test"])
    mean, var = model.predict(Xt, noisy=True)
    expected = cli_predictions(saved, files["test"])
    np.testing.assert_array_equal(mean, expected[:, 0])
    np.testing.assert_array_equal(var, expected[:, 2])
    assert model.inputs == names
    assert model.nlml == model._core.fit_info["nlml"]
