"""Predictive intervals of counts and Student-t targets (issue 43): ``Model.predict_y``
and ``Model.predict_interval`` are what ``sgpw predict`` writes, and the interval holds
its share of draws from the model's own predictive distribution."""

import numpy as np
import pytest

import sgpw
from conftest import DATA, read_csv, run_cli


def cli_columns(model_path, inputs):
    out, _, _ = run_cli("predict", "--model", model_path, "--input", inputs)
    header, *rows = out.strip().splitlines()
    return header.split(","), np.array([[float(v) for v in r.split(",")] for r in rows])


def test_coal_counts_interval_is_the_command_lines(tmp_path):
    X, y, names = read_csv(DATA / "coal" / "data.csv.gz")
    model = sgpw.fit(X, y, method="svgp", m=10, likelihood="poisson", seed=1)
    saved = tmp_path / "coal.toml"
    model.save(saved)
    inputs = tmp_path / "years.csv"
    inputs.write_text("x0\n" + "\n".join(str(v) for v in X[:, 0]) + "\n")
    header, cli = cli_columns(saved, inputs)
    assert header == ["latent_mean", "latent_var", "mean", "var", "lower95", "upper95"]
    mean, var = model.predict_y(X)
    lower, upper = model.predict_interval(X)
    for got, col in ((mean, 2), (var, 3), (lower, 4), (upper, 5)):
        np.testing.assert_array_equal(got, cli[:, col])
    # on one thread the same (the rows are computed in blocks on every core by default)
    one = model.predict_interval(X, threads=1)
    np.testing.assert_array_equal(one[0], lower)
    np.testing.assert_array_equal(one[1], upper)
    # whole counts around the mean; the early years' rate is higher than the late ones'
    assert np.all(lower == np.floor(lower)) and np.all(lower <= mean) and np.all(mean <= upper)
    assert mean[:10].mean() > 2 * mean[-10:].mean()
    # the interval of each year holds ≥ 95% of draws of y ~ Poisson(e^f), f from q(f)
    rng = np.random.default_rng(0)
    f_mean, f_var = model.predict(X)
    f = f_mean + np.sqrt(f_var) * rng.normal(size=(40000, len(f_mean)))
    draws = rng.poisson(np.exp(f))
    inside = np.mean((draws >= lower) & (draws <= upper), axis=0)
    assert np.all(inside >= 0.95 - 0.01), inside.min()
    below = np.mean(draws < lower, axis=0)
    assert np.all(below <= 0.025 + 0.01), below.max()
    # a narrower level gives a narrower interval
    lo80, hi80 = model.predict_interval(X, level=0.8)
    assert np.all(lo80 >= lower) and np.all(hi80 <= upper)
    with pytest.raises(ValueError, match="level = 1.5"):
        model.predict_interval(X, level=1.5)


def test_student_t_interval_holds_its_share_of_draws():
    rng = np.random.default_rng(4)
    X = np.sort(rng.uniform(0, 10, (150, 1)), axis=0)
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_t(3, size=150)
    y[::25] += 5.0  # gross outliers
    model = sgpw.fit(X, y, method="svgp", m=10, likelihood="studentt", seed=1)
    Xs = np.linspace(0, 10, 7)[:, None]
    lower, upper = model.predict_interval(Xs)
    f_mean, f_var = model.predict(Xs)
    # the model's own noise, in the target's units: y = f + σ·t_ν
    params = model.params
    sigma = params["likelihood.scale"] * params["standardize.target_scale"]
    df = params["likelihood.df"]
    n = 200000
    draws = f_mean + np.sqrt(f_var) * rng.normal(size=(n, 7)) + sigma * rng.standard_t(df, (n, 7))
    below = np.mean(draws <= lower, axis=0)
    above = np.mean(draws > upper, axis=0)
    slack = 5 * np.sqrt(0.025 * 0.975 / n)
    np.testing.assert_allclose(below, 0.025, atol=slack)
    np.testing.assert_allclose(above, 0.025, atol=slack)
    mean, _ = model.predict_y(Xs)
    np.testing.assert_array_equal(mean, f_mean)


def test_a_model_without_an_interval_says_so():
    X = np.linspace(0, 1, 30)[:, None]
    model = sgpw.fit(X, np.sin(6 * X[:, 0]), method="vfe", m=5, iterations=20)
    with pytest.raises(ValueError, match="gaussian model has no predictive interval"):
        model.predict_interval(X)
