"""The scikit-learn classifier (issue 43): check_estimator's checks, any two labels,
the command line's numbers on breast_cancer, a multiclass target refused (and fitted one
class against the rest through scikit-learn's wrapper)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.multiclass import OneVsRestClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

import sgpw
from conftest import DATA, read_csv, run_cli
from sgpw.sklearn import CLASSIFIER_PARAMS, PARAMS, SparseGPClassifier

# Every check passes, for svgp (the default) and for EP through fitc: none is expected
# to fail (docs/python.md).
@parametrize_with_checks(
    [SparseGPClassifier(iterations=100), SparseGPClassifier(method="fitc", iterations=50)]
)
def test_sklearn_compatible_classifier(estimator, check):
    check(estimator)


def test_parameters_are_the_regressors_but_the_likelihood():
    assert list(CLASSIFIER_PARAMS) == [p for p in PARAMS if p != "likelihood"]
    est = SparseGPClassifier(m=7)
    assert est.get_params()["method"] == "svgp" and est.get_params()["m"] == 7
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(TypeError, match="always bernoulli"):
        SparseGPClassifier(likelihood="bernoulli")


def breast_cancer_split(tmp_path):
    """breast_cancer's rows in a seeded order: 400 to train, 169 to test, as CSV files
    with the repository's header and as arrays (the same doubles)."""
    X, y, names = read_csv(DATA / "breast_cancer" / "data.csv.gz")
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:400], order[400:]
    files = {}
    for part, rows in (("train", train), ("test", test)):
        path = tmp_path / f"{part}.csv"
        with open(path, "w") as f:
            f.write(",".join(names + ["benign"]) + "\n")
            for i in rows:
                f.write(",".join(repr(float(v)) for v in X[i]) + f",{int(y[i])}\n")
        files[part] = path
    return X[train], y[train], X[test], y[test], files


@pytest.mark.parametrize("method", ["svgp", "fitc"])
def test_breast_cancer_gives_the_command_lines_numbers(tmp_path, method):
    """The classifier on breast_cancer's split is `sgpw fit --likelihood bernoulli` on
    the same split: the same p(y = 1) and latent mean, bit for bit, as `sgpw predict`
    writes them; and it classifies (the labels given as strings)."""
    X, y, Xt, yt, files = breast_cancer_split(tmp_path)
    saved = tmp_path / "cli.toml"
    args = ["--method", method, "--m", 16, "--iters", 100, "--seed", 2]
    run_cli("fit", "--train", files["train"], "--likelihood", "bernoulli",
            "--save-model", saved, *args)
    out, _, _ = run_cli("predict", "--model", saved, "--input", files["test"])
    header, *rows = out.strip().splitlines()
    assert header == "latent_mean,latent_var,p1"
    cli = np.array([[float(v) for v in r.split(",")] for r in rows])
    # strings as labels: "benign" > "malignant" is False, so classes_[1] is "malignant";
    # ask for benign as the positive class with labels that sort the other way
    names = np.where(y == 1, "yes", "no")
    clf = SparseGPClassifier(method=method, m=16, iterations=100, seed=2).fit(X, names)
    assert list(clf.classes_) == ["no", "yes"]
    proba = clf.predict_proba(Xt)
    np.testing.assert_array_equal(proba[:, 1], cli[:, 2])
    np.testing.assert_array_equal(proba[:, 0], 1.0 - cli[:, 2])
    np.testing.assert_array_equal(clf.decision_function(Xt), cli[:, 0] / np.sqrt(1 + cli[:, 1]))
    predicted = clf.predict(Xt)
    np.testing.assert_array_equal(predicted == "yes", cli[:, 0] > 0)
    error = np.mean(predicted != np.where(yt == 1, "yes", "no"))
    assert error < 0.06, error
    assert clf.model_.labels == [0.0, 1.0] and clf.model_.likelihood == "bernoulli"


def test_classes_are_sorted_and_the_second_is_positive():
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, (120, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, 7, -3)
    clf = SparseGPClassifier(m=8, iterations=100, threads=1).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, [-3, 7])
    d = clf.decision_function(X)
    assert np.mean((d > 0) == (y == 7)) > 0.9
    p = clf.predict_proba(X)
    assert p.shape == (120, 2)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(p[:, 1] > 0.5, d > 0)
    assert set(clf.predict(X)) == {-3, 7}


def test_a_multiclass_target_is_refused_and_one_vs_rest_fits_it():
    rng = np.random.default_rng(2)
    centres = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    y = np.repeat([0, 1, 2], 40)
    X = centres[y] + 0.6 * rng.normal(size=(120, 2))
    with pytest.raises(ValueError, match="Only binary.*y has 3 classes.*OneVsRestClassifier"):
        SparseGPClassifier().fit(X, y)
    ovr = OneVsRestClassifier(SparseGPClassifier(m=8, iterations=100, threads=1)).fit(X, y)
    assert np.mean(ovr.predict(X) == y) > 0.9
    p = ovr.predict_proba(X)
    assert p.shape == (120, 3) and np.allclose(p.sum(axis=1), 1.0)


def test_predict_y_of_a_bernoulli_model_is_the_probit_of_the_latent():
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, (80, 1))
    y = (np.sin(2 * X[:, 0]) > 0).astype(float)
    model = sgpw.fit(X, y, method="svgp", m=8, likelihood="bernoulli", threads=1)
    mean, var = model.predict(X)
    p, pv = model.predict_y(X)
    from math import erf, sqrt

    expected = np.array([0.5 * (1 + erf(m / sqrt(1 + v) / sqrt(2))) for m, v in zip(mean, var)])
    np.testing.assert_allclose(p, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(pv, p * (1 - p), rtol=1e-12, atol=1e-15)
