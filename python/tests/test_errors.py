"""Bad arguments raise ValueError with the command line's message, checked by the same
code (the clap declaration and the spec's checks), before any data are touched."""

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
    assert str(e.value) == expected


def test_an_unknown_keyword_is_refused_as_an_unknown_flag(snelson):
    X, y = snelson
    expected = cli_error("fit", "--train", TRAIN, "--kernal", "se")
    with pytest.raises(ValueError) as e:
        sgpw.fit(X, y, kernal="se")
    # the first line is clap's; its tip may name another flag of `fit` (--train…)
    assert str(e.value).split(";")[0] == expected.split(";")[0]
    assert "--kernal" in str(e.value)


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
