"""The scikit-learn estimator: check_estimator's checks, clone, GridSearchCV over m and
method on a bundled data set."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import sgpw
from conftest import DATA, read_csv
from sgpw.sklearn import PARAMS, SparseGPRegressor

# Checks that cannot pass, with the reason (docs/python.md lists them). scikit-learn's
# check_regressors_train sets `alpha = 0.01` on any estimator that has an `alpha` (a
# ridge penalty elsewhere); sgpw's alpha is power EP's α, an option of pep only, so fitc
# refuses it as the command line refuses `fitc --alpha` — the same checks pass with pep.
ALPHA_IS_POWER_EP = "sklearn sets alpha=0.01; sgpw's alpha is power EP's, refused by fitc"
EXPECTED_FAILED_CHECKS = {
    "check_regressors_train": ALPHA_IS_POWER_EP,
    "check_regressors_train(readonly_memmap=True)": ALPHA_IS_POWER_EP,
    "check_regressors_train(readonly_memmap=True,X_dtype=float32)": ALPHA_IS_POWER_EP,
}


def expected_failures(estimator):
    return {} if estimator.method == "pep" else EXPECTED_FAILED_CHECKS


@parametrize_with_checks(
    [SparseGPRegressor(iterations=50), SparseGPRegressor(method="pep", iterations=50)],
    expected_failed_checks=expected_failures,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_parameters_are_the_keywords_of_fit():
    assert [k["name"] for k in sgpw.keywords()] + ["threads"] == list(PARAMS)
    est = SparseGPRegressor(method="pep", alpha=0.5, m=7)
    params = est.get_params()
    assert params["alpha"] == 0.5 and params["method"] == "pep" and params["restarts"] is None
    copy = clone(est)
    assert copy.get_params() == params and copy is not est
    with pytest.raises(TypeError, match="unexpected parameter"):
        SparseGPRegressor(alpah=0.5)
    X = np.random.default_rng(0).normal(size=(40, 2))
    with pytest.raises(ValueError, match=r"alpha = 1.5: power EP"):
        SparseGPRegressor(method="pep", alpha=1.5).fit(X, X[:, 0])
    assert {"lengthscales", "signal_variance", "noise_variance"} <= set(PARAMS)


def test_return_std_is_the_predictive_std_of_y_as_scikit_learns(snelson):
    """``return_std`` is the standard deviation of a new observation (latent + noise),
    what ``GaussianProcessRegressor`` with a ``WhiteKernel`` returns; ``latent=True``
    the latent function's alone."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    X, y = snelson
    est = SparseGPRegressor(method="full", iterations=200, threads=1).fit(X, y)
    Xs = np.linspace(X.min(), X.max(), 25)[:, None]
    _, std = est.predict(Xs, return_std=True)
    _, latent = est.predict(Xs, return_std=True, latent=True)
    noise = est.model_.params["noise_variance"]
    np.testing.assert_allclose(std**2, latent**2 + noise, rtol=1e-10)
    assert np.all(std > latent)
    kernel = ConstantKernel() * RBF() + WhiteKernel()
    gpr = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0).fit(X, y)
    _, sk_std = gpr.predict(Xs, return_std=True)
    # the same model at (nearly) the same optimum: the same predictive spread
    np.testing.assert_allclose(std, sk_std, rtol=0.05)


def test_grid_search_over_m_and_method_on_mcycle():
    X, y, _ = read_csv(DATA / "mcycle" / "data.csv.gz")
    search = GridSearchCV(
        SparseGPRegressor(iterations=200, threads=1),
        {"method": ["fitc", "vfe", "ssgp"], "m": [5, 15]},
        cv=KFold(3, shuffle=True, random_state=0),  # the rows are sorted by time
        error_score="raise",
    )
    search.fit(X, y)
    assert search.best_params_["method"] in ("fitc", "vfe", "ssgp")
    assert search.best_score_ > 0.5, search.cv_results_["mean_test_score"]
    pipe = make_pipeline(StandardScaler(), SparseGPRegressor(method="vfe", m=10, iterations=100))
    scores = cross_val_score(pipe, X, y, cv=KFold(3, shuffle=True, random_state=0))
    assert np.all(np.isfinite(scores))
    mean, std = search.best_estimator_.predict(X[:5], return_std=True)
    assert mean.shape == std.shape == (5,) and np.all(std > 0)


def test_the_regressor_takes_a_two_valued_target_without_the_note():
    # sgpw.fit notes a 0/1 target fitted by regression; a chosen regressor does not
    import warnings

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(float)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        SparseGPRegressor(m=5, iterations=10).fit(X, y)
    assert not [w for w in said if "has only the values" in str(w.message)]
    with pytest.warns(UserWarning, match="has only the values 0 and 1"):
        sgpw.fit(X, y, m=5, iterations=10)
