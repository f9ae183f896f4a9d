"""Every method of the registry fits through sgpw.fit and predicts."""

import numpy as np
import pytest

import sgpw

# settings a method cannot run without (the command line requires them too)
REQUIRED = {"spgp-dr": {"dims": 2}, "pca-spgp": {"dims": 2}}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, (150, 3))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.3 * X[:, 2] + 0.05 * rng.normal(size=150)
    return X, y


@pytest.mark.parametrize("method", [m["name"] for m in sgpw.methods()])
def test_every_method_fits(data, method):
    X, y = data
    model = sgpw.fit(
        X[:120], y[:120], method=method, m=8, iterations=15,
        X_test=X[120:], y_test=y[120:], **REQUIRED.get(method, {}),
    )
    assert model.method == method
    assert np.isfinite(model.nlml) and np.isfinite(model.mnlp)
    mean, var = model.predict(X[120:], noisy=True)
    assert mean.shape == (30,) and np.all(np.isfinite(mean)) and np.all(np.isfinite(var))
    # (not how good: Nyström's plug-in predictor is poor at small m, as its papers say;
    # the command line's fit is the same one, test_cli_equality.py)
    assert np.isfinite(model.nmse)
