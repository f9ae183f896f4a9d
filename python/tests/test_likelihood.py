"""``likelihood=`` on sgpw.fit: the command line's --likelihood, read and checked by the
same Rust code (issue 43)."""

import numpy as np
import pytest

import sgpw


def two_classes(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, size=(n, 2))
    y = np.where(X[:, 1] > np.sin(1.5 * X[:, 0]), 1.0, -1.0)
    return X, y


def test_bernoulli_classifies_with_labels_of_minus_one_and_one():
    X, y = two_classes(200, 1)
    Xt, yt = two_classes(300, 2)
    model = sgpw.fit(X, y, method="svgp", m=10, likelihood="bernoulli")
    # the latent mean: positive where the model says class 1 (label 1) is likelier
    latent = np.asarray(model.predict(Xt)[0])
    wrong = np.mean((latent > 0) != (yt == 1.0))
    assert wrong < 0.1, wrong


def test_a_collapsed_method_refuses_another_likelihood():
    X, y = two_classes(50, 3)
    with pytest.raises(ValueError, match="cannot fit it"):
        sgpw.fit(X, y, method="vfe", m=5, likelihood="bernoulli")
    with pytest.raises(ValueError, match="binomial"):
        sgpw.fit(X, y, method="svgp", m=5, likelihood="binomial")
