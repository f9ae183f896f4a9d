"""What a model says beyond the mean and variances, and the starts a fit is given:
``predict(full_cov=True)``, ``sample``, ``log_density``, ``Model.params`` in the data's
units, ``lengthscales=`` / ``signal_variance=`` / ``noise_variance=``, and a module
namespace without numpy, os or warnings."""

import numpy as np
import pytest

import sgpw


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.uniform(-3, 3, (200, 2)) * [10.0, 0.1] + [100.0, -5.0]
    y = 40 * np.sin(X[:, 0] / 10) + 300 * (X[:, 1] + 5) + 3.0 * rng.normal(size=200) + 1000
    return X, y


def test_full_cov_diagonal_is_the_variance(data):
    X, y = data
    model = sgpw.fit(X, y, method="vfe", m=15, iterations=40)
    mean, var = model.predict(X[:12])
    m2, cov = model.predict(X[:12], full_cov=True)
    np.testing.assert_array_equal(mean, m2)
    assert cov.shape == (12, 12)
    np.testing.assert_allclose(np.diag(cov), var, rtol=1e-8, atol=1e-10 * var.max())
    np.testing.assert_array_equal(cov, cov.T)
    _, noisy = model.predict(X[:12], noisy=True, full_cov=True)
    np.testing.assert_allclose(
        np.diag(noisy), model.predict(X[:12], noisy=True)[1], rtol=1e-8
    )
    with pytest.raises(ValueError, match="method 'nystrom' cannot give the full covariance"):
        sgpw.fit(X, y, method="nystrom", m=10, iterations=5).predict(X[:3], full_cov=True)


def test_samples_are_seeded_and_follow_the_posterior(data):
    X, y = data
    model = sgpw.fit(X, y, method="fitc", m=15, iterations=40)
    Xs = X[:4]
    a = model.sample(Xs, 5, seed=1)
    assert a.shape == (5, 4)
    np.testing.assert_array_equal(a, model.sample(Xs, 5, seed=1))
    assert not np.array_equal(a, model.sample(Xs, 5, seed=2))
    draws = model.sample(Xs, 20000, seed=4)
    mean, cov = model.predict(Xs, full_cov=True)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(draws.mean(0) - mean) <= 5 * sd / np.sqrt(20000) + 1e-9)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.05 * np.diag(cov).max())


def test_log_density_averages_to_minus_the_mnlp(data):
    X, y = data
    model = sgpw.fit(X[:150], y[:150], method="vfe", m=15, iterations=40,
                     X_test=X[150:], y_test=y[150:])
    ld = model.log_density(X[150:], y[150:])
    assert ld.shape == (50,)
    assert ld.mean() == pytest.approx(-model.mnlp, rel=1e-12)
    mean, var = model.predict(X[150:], noisy=True)
    np.testing.assert_allclose(
        ld, -0.5 * ((y[150:] - mean) ** 2 / var + np.log(2 * np.pi * var)), rtol=1e-12
    )


def test_params_are_in_the_data_units(data):
    X, y = data
    model = sgpw.fit(X, y, method="fitc", m=10, iterations=30)
    p = model.params
    s = p["standardize.input_scale"]
    t = p["standardize.target_scale"]
    np.testing.assert_allclose(p["lengthscales"], p["model_units.lengthscales"] * s)
    assert p["signal_variance"] == pytest.approx(p["model_units.signal_variance"] * t**2)
    assert p["noise_variance"] == pytest.approx(p["model_units.noise_variance"] * t**2)
    # the noise is about the data's (3² = 9), not the standardized target's
    assert 3 < p["noise_variance"] < 30, p["noise_variance"]
    raw = sgpw.fit(X, y, method="fitc", m=10, iterations=30, standardize=False).params
    assert "standardize.target_scale" not in raw
    np.testing.assert_array_equal(raw["lengthscales"], raw["model_units.lengthscales"])


def test_a_given_start_is_read_in_the_data_units(data):
    """The objective at the start (raw scale) of one start in data units is the same
    whether the fit standardizes or not; params can be given back as a start."""
    X, y = data
    start = dict(lengthscales=[8.0, 0.2], signal_variance=2.0e5, noise_variance=10.0)
    a = sgpw.fit(X, y, method="fitc", m=10, iterations=1, single_start=True, **start)
    b = sgpw.fit(X, y, method="fitc", m=10, iterations=1, single_start=True,
                 standardize=False, **start)
    assert a.trace[0] == pytest.approx(b.trace[0], rel=1e-9)
    default = sgpw.fit(X, y, method="fitc", m=10, iterations=1, single_start=True)
    assert default.trace[0] != pytest.approx(a.trace[0], rel=1e-3)
    assert a.label == "fitc-std-single-ls8+0.2-sv200000-nv10"
    # two starts by default: the given one first, the subset fit's second
    two = sgpw.fit(X, y, method="fitc", m=10, iterations=20, **start)
    assert two.second_start is not None


def test_the_namespace_is_the_api():
    public = {n for n in dir(sgpw) if not n.startswith("_")}
    assert not {"np", "os", "io", "warnings", "annotations", "re", "difflib"} & public
    assert {"fit", "load", "Model", "Session", "methods", "keywords", "NumericalError"} <= public
    assert set(sgpw.__all__) <= set(dir(sgpw))
    import sgpw.sklearn as sk

    assert not {"np", "inspect"} & {n for n in dir(sk) if not n.startswith("_")}


def test_given_inducing_inputs_Z(data):
    """``Z=`` (an (m, D) array in X's units) is where the inducing inputs start: one
    start whether the fit standardizes or not; m defaults to its rows."""
    X, y = data
    Z = X[[3, 50, 90, 120, 160]] + 0.01
    a = sgpw.fit(X, y, method="vfe", Z=Z, iterations=1, single_start=True)
    b = sgpw.fit(X, y, method="vfe", Z=Z, iterations=1, single_start=True, standardize=False)
    assert a.info["m"] == 5 and a.label == "vfe-std-single-zfile-Z"
    assert a.trace[0] == pytest.approx(b.trace[0], rel=1e-9)
    chosen = sgpw.fit(X, y, method="vfe", m=5, iterations=1, single_start=True)
    assert chosen.trace[0] != pytest.approx(a.trace[0], rel=1e-6)
    with pytest.raises(ValueError, match="Z has 1 columns but X has 2"):
        sgpw.fit(X, y, Z=Z[:, :1])
    with pytest.raises(ValueError, match=r"^Z: 5 inducing inputs but m = 7: give m = 5$"):
        sgpw.fit(X, y, Z=Z, m=7)
    with pytest.raises(ValueError, match="option Z does not apply to method 'ssgp'"):
        sgpw.fit(X, y, method="ssgp", Z=Z)
