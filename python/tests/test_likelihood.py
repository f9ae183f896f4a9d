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


def test_the_logit_link_is_chosen_with_link():
    """``link="logit"`` is ``--link logit``: p(y = 1) is E[σ(f)] under the latent
    N(mean, var), not the probit's Φ(mean/√(1 + var)); EP refuses the link."""
    X, y = two_classes(150, 4)
    model = sgpw.fit(X, y, method="svgp", m=8, likelihood="bernoulli", link="logit",
                     epochs=100)
    Xt, _ = two_classes(5, 5)
    mean, var = (np.asarray(a) for a in model.predict(Xt))
    p = np.asarray(model.predict_y(Xt)[0])
    z, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    f = mean[:, None] + np.sqrt(var)[:, None] * z[None, :]
    want = (w[None, :] / (1.0 + np.exp(-f))).sum(axis=1)
    assert np.allclose(p, want, atol=1e-5), (p, want)  # 20-point rule against 60
    from math import erf
    probit = np.array([0.5 * (1 + erf(m / np.sqrt(2 * (1 + v)))) for m, v in zip(mean, var)])
    assert np.max(np.abs(p - probit)) > 1e-3
    with pytest.raises(ValueError, match="probit"):
        sgpw.fit(X, y, method="fitc", m=5, likelihood="bernoulli", link="logit")
