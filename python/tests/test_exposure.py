"""poisson's exposure (``exposure=``): y ~ Poisson(E·exp f), log E added to f in the
likelihood, never an input of the kernel."""

import numpy as np
import pytest

import sgpw

pd = pytest.importorskip("pandas")


def _counts(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 10.0, n)
    e = np.exp(rng.uniform(np.log(0.5), np.log(50.0), n))
    y = rng.poisson(e * np.exp(np.sin(x) - 0.5)).astype(float)
    return pd.DataFrame({"x": x, "E": e}), pd.Series(y, name="count")


def test_a_dataframe_column_is_the_exposure_and_leaves_the_inputs():
    X, y = _counts(300, 1)
    Xt, yt = _counts(200, 2)
    model = sgpw.fit(X, y, method="svgp", m=12, seed=1, X_test=Xt, y_test=yt,
                     likelihood="poisson", exposure="E")
    assert model.inputs == ["x"]
    # f is the log rate per unit of exposure
    grid = pd.DataFrame({"x": np.linspace(0.5, 9.5, 31)})
    mean, _ = model.predict(grid)
    assert np.sqrt(np.mean((mean - (np.sin(grid["x"]) - 0.5)) ** 2)) < 0.15
    # the counts' predictive mean scales with each row's exposure
    per_unit, _ = model.predict_y(Xt)
    counts, _ = model.predict_y(Xt, exposure="E")
    np.testing.assert_allclose(counts / per_unit, Xt["E"], rtol=1e-9)
    # and the same as an array
    arr = sgpw.fit(X[["x"]].to_numpy(), y, method="svgp", m=12, seed=1,
                   likelihood="poisson", exposure=X["E"].to_numpy())
    a, _ = arr.predict(grid[["x"]].to_numpy())
    np.testing.assert_allclose(a, mean, rtol=1e-6, atol=1e-9)


def test_a_bad_exposure_is_refused_naming_the_row():
    X, y = _counts(40, 3)
    X.loc[5, "E"] = 0.0
    with pytest.raises(ValueError, match=r"exposure column 'E'.*training row 6"):
        sgpw.fit(X, y, method="svgp", m=5, likelihood="poisson", exposure="E")
    with pytest.raises(ValueError, match="poisson"):
        sgpw.fit(X, y, method="svgp", m=5, exposure="E")
