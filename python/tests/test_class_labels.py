"""A target of two labels of any kind (strings, booleans) through ``sgpw.fit``: read as
two classes by the Rust loader's rule (the labels sorted, the second the positive
class), as the command line reads a file's, and named by ``Model.classes``."""

import numpy as np
import pandas as pd
import pytest

import sgpw
from conftest import run_cli
from sgpw.sklearn import SparseGPClassifier


def pattern(n, offset=0):
    i = np.arange(offset, offset + n)
    X = np.column_stack([(i * 37 % 101) / 50.0 - 1.0, (i * 53 % 97) / 48.0 - 1.0])
    positive = X[:, 0] + 1.5 * X[:, 1] ** 2 > 0.6
    return X, positive


def test_a_string_series_fits_as_two_classes_like_the_command_line(tmp_path):
    """y a pandas Series of "yes"/"no": the same model as ``sgpw fit`` on the same rows
    in a CSV file (the same p1, bit for bit), and ``Model.classes`` names them."""
    X, positive = pattern(120)
    y = pd.Series(np.where(positive, "yes", "no"), name="answer")
    model = sgpw.fit(X, y, method="svgp", m=8, iterations=60, likelihood="bernoulli")
    assert model.classes == ("no", "yes")
    assert list(model.labels) == [0.0, 1.0]
    path = tmp_path / "d.csv"
    with open(path, "w") as f:
        f.write("x0,x1,answer\n")
        for row, label in zip(X, y):
            f.write(f"{float(row[0])!r},{float(row[1])!r},{label}\n")
    saved = tmp_path / "m.toml"
    run_cli("fit", "--train", path, "--method", "svgp", "--m", 8, "--iters", 60,
            "--likelihood", "bernoulli", "--save-model", saved)
    out, _, _ = run_cli("predict", "--model", saved, "--input", path)
    header, *rows = out.strip().splitlines()
    assert header == "latent_mean,latent_var,p1,class"
    p1 = np.array([float(r.split(",")[2]) for r in rows])
    np.testing.assert_array_equal(model.predict_y(X)[0], p1)
    assert [r.split(",")[3] for r in rows] == list(np.where(p1 > 0.5, "yes", "no"))
    # scikit-learn's classifier orders the classes the same way
    clf = SparseGPClassifier(m=8, iterations=60).fit(X, y)
    assert tuple(clf.classes_) == model.classes


def test_booleans_and_a_test_set_of_labels():
    X, positive = pattern(100)
    Xt, yt = pattern(40, offset=300)
    model = sgpw.fit(X, positive, X_test=Xt, y_test=yt, method="svgp", m=8,
                     iterations=60, likelihood="bernoulli")
    assert model.classes == ("false", "true")
    assert model.info["n_test"] == 40
    assert model.info["mnlp"] < 0.5  # log 2 = 0.69 for a coin


def test_a_third_label_an_unseen_test_label_and_another_likelihood_are_refused():
    X, positive = pattern(30)
    y = np.where(positive, "yes", "no").astype(object)
    y[7] = "maybe"
    with pytest.raises(ValueError, match=r'y\[7\]: a third label "maybe"'):
        sgpw.fit(X, y, method="svgp", m=4, likelihood="bernoulli")
    y[7] = "no"
    yt = np.array(["no", "Yes"])
    with pytest.raises(ValueError, match=r'y_test\[1\]: the label "Yes" is neither'):
        sgpw.fit(X, y, X_test=X[:2], y_test=yt, method="svgp", m=4, likelihood="bernoulli")
    with pytest.raises(ValueError, match="holds the labels"):
        sgpw.fit(X, y, method="svgp", m=4)
