"""Bad arguments raise ValueError with the command line's message in Python's words
(keywords, not flags), checked by the same code (the clap declaration and the spec's
checks), before any data are touched; an unknown keyword is a TypeError naming the
closest ones."""

import numpy as np
import pytest

import sgpw
from conftest import DATA, cli_error, read_csv

TRAIN = DATA / "snelson1d" / "train.csv.gz"

CASES = [
    # (sgpw.fit keywords, the same on the command line)
    ({"method": "nope"}, ["--method", "nope"]),
    ({"method": "pep", "alpha": 1.5}, ["--method", "pep", "--alpha", "1.5"]),
    ({"alpha": "abc"}, ["--alpha", "abc"]),
    ({"approx": "fitcc"}, ["--approx", "fitcc"]),
    ({"method": "fitc", "centres": "subset"}, ["--method", "fitc", "--centres", "subset"]),
    ({"restarts": 0}, ["--restarts", "0"]),
    ({"m": [10, 20]}, ["--m", "10,20"]),
    ({"seed": -1}, ["--seed", "-1"]),
    ({"m": 2.5}, ["--m", "2.5"]),
    ({"noise_floor": -1}, ["--noise-floor", "-1"]),
    ({"early_stop": True}, ["--early-stop"]),
    ({"subset": 1}, ["--subset", "1"]),
    ({"m": 500}, ["--m", "500"]),  # more than the 200 training points: checked after the data
    ({"method": "spgp-dr", "dims": 2}, ["--method", "spgp-dr", "--dims", "2"]),
    ({"stages": "hyper,nope"}, ["--stages", "hyper,nope"]),
    ({"iterations": "many"}, ["--iters", "many"]),
]


@pytest.mark.parametrize("keywords,flags", CASES, ids=[str(c[0]) for c in CASES])
def test_bad_arguments_raise_the_command_lines_message(snelson, keywords, flags):
    X, y = snelson
    expected = cli_error("fit", "--train", TRAIN, *flags)
    with pytest.raises(ValueError) as e:
        sgpw.fit(X, y, **keywords)
    assert str(e.value) == sgpw._python_words(expected)
    assert "--" not in str(e.value), "a flag in a Python error"


# What a Python user reads: keywords, never flags.
PYTHON_WORDS = [
    ({"method": "pep", "alpha": 1.5}, "alpha = 1.5: power EP needs 0 < alpha ≤ 1"),
    ({"alpha": "abc"}, "invalid value 'abc' for 'alpha'"),
    ({"m": [10, 20]}, "give one m (not 2)"),
    ({"early_stop": True}, "early_stop needs a validation set (validation 0.1)"),
    ({"iterations": "many"}, "invalid value 'many' for 'iterations'"),
    ({"lengthscales": [1.0, 2.0, 3.0]}, "lengthscales has 3 values but the data have 1 input(s)"),
    ({"noise_variance": -1}, "noise_variance = -1: must be positive"),
]


@pytest.mark.parametrize("keywords,words", PYTHON_WORDS, ids=[str(c[0]) for c in PYTHON_WORDS])
def test_errors_name_python_keywords(snelson, keywords, words):
    X, y = snelson
    with pytest.raises(ValueError) as e:
        sgpw.fit(X, y, **{"m": 5, "iterations": 5, **keywords})
    assert words in str(e.value)
    assert "--" not in str(e.value)


def test_an_unknown_keyword_is_a_type_error_naming_the_closest(snelson):
    X, y = snelson
    with pytest.raises(TypeError) as e:
        sgpw.fit(X, y, lengthscale=1.0)
    assert str(e.value).startswith(
        "fit() got an unexpected keyword argument 'lengthscale'; did you mean 'lengthscales'"
    )
    assert "--" not in str(e.value)
    with pytest.raises(TypeError, match="'kernal'; did you mean 'kernel'"):
        sgpw.fit(X, y, kernal="se")
    with pytest.raises(TypeError, match="unexpected keyword argument 'zzz' \\(sgpw.keywords"):
        sgpw.fit(X, y, zzz=1)


def test_bad_arrays_name_the_array_row_and_column(snelson):
    X, y = snelson
    bad = X.copy()
    bad[7, 0] = np.nan
    with pytest.raises(ValueError, match=r"X\[7, 0\] is NaN"):
        sgpw.fit(bad, y, m=5)
    with pytest.raises(ValueError, match="y has 199 values but X has 200 rows"):
        sgpw.fit(X, y[:-1], m=5)
    with pytest.raises(ValueError, match="2-d array"):
        sgpw.fit(X[:, 0], y, m=5)
    with pytest.raises(ValueError, match="the target y is constant"):
        sgpw.fit(X, np.ones_like(y), m=5)
    with pytest.raises(ValueError, match="X_test has 2 columns but X has 1"):
        sgpw.fit(X, y, m=5, X_test=np.zeros((3, 2)), y_test=np.zeros(3))
    with pytest.raises(ValueError, match="give one of X_test and y_test|give both X_test and y_test"):
        sgpw.fit(X, y, m=5, X_test=X)
