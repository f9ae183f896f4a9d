"""Kernel objects (issue 42, "one syntax everywhere"): they render to the expression
string, are checked by the command line's parser and builder (its caret messages), and
are accepted wherever ``kernel=`` is."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import sgpw
from sgpw import kernels as K
from sgpw.sklearn import SparseGPClassifier, SparseGPRegressor

from conftest import run_cli


def test_objects_render_to_the_expression():
    assert str(K.SE(dims=[0, 1]) + K.Linear()) == "se(dims=[0, 1]) + linear"
    k = K.SE(ls=50, var=2500) + K.SE(ls=100) * K.Periodic(period=1, fix="period") + K.RQ()
    assert str(k) == "se(ls=50, var=2500) + se(ls=100) * periodic(period=1, fix=period) + rq"
    # a sum inside a product keeps its parentheses; nested sums and products flatten
    assert str(K.SE() * (K.Linear() + K.White())) == "se * (linear + white)"
    assert str((K.SE() + K.RQ()) + (K.Linear() + K.White())) == "se + rq + linear + white"
    assert str(sum([K.SE(), K.Linear(), K.White(var=0.01)])) == "se + linear + white(var=0.01)"
    # values: floats exactly (the shortest repr), lists, names quoted when they must be
    k = K.Matern32(ls=[0.1, 1e-7], dims=["x 1", "y"], fix=["var", "ls"])
    assert str(k) == 'matern32(ls=[0.1, 1e-7], dims=["x 1", y], fix=[var, ls])'
    assert str(K.Periodic(base=K.RQ, alpha=np.float64(2.5))) == "periodic(base=rq, alpha=2.5)"
    assert str(K.Polynomial(degree=3, offset=0.5)) == "polynomial(degree=3, offset=0.5)"
    assert str(K.SpectralMixture(q=2, dims=np.array([0, 2]))) == "spectral_mixture(q=2, dims=[0, 2])"
    assert str(K.Constant()) == "constant" and str(K.Matern12()) == "matern12"
    assert K.SE() + K.Linear() == K.SE() + K.Linear()
    assert repr(K.SE(ls=2) * K.Linear()) == "SE(ls=2) * Linear()"


def test_every_part_of_the_syntax_has_a_class():
    assert set(K.BY_PART) == set(K.PARTS)
    for name, cls in K.BY_PART.items():
        # change points need their kernels (test_change_points_are_gpflows_class)
        if name != "changepoints":
            assert cls.part == name and str(cls()) == name


def series():
    """A slow wave until 2000, then a fast one (tests/suite/changepoints.rs's series)."""
    t = 1990 + 0.1 * np.arange(200)
    wobble = (np.arange(200) * 7919 % 13) / 13 - 0.5
    y = np.where(
        np.arange(200) < 100,
        np.sin((t - 1990) / 2),
        0.8 * np.sin(2 * np.pi * (t - 2000) / 0.7),
    )
    return np.round(t, 1), np.round(y + 0.05 * wobble, 6)


def test_change_points_are_gpflows_class(tmp_path):
    k = K.ChangePoints([K.SE(ls=1), K.SE(ls=5)], locations=[1990], steepness=1)
    assert str(k) == "changepoints(se(ls=1), se(ls=5), locations=[1990], steepness=1)"
    assert repr(k) == "ChangePoints([SE(ls=1), SE(ls=5)], locations=[1990], steepness=1)"
    both = K.ChangePoints([K.SE(), K.SE() * (K.Periodic() + K.RQ())], locations=0) + K.White()
    assert str(both) == "changepoints(se, se * (periodic + rq), locations=0) + white"
    assert K.BY_PART["changepoints"] is K.ChangePoints
    with pytest.raises(TypeError, match="a list of kernels"):
        K.ChangePoints(K.SE(), locations=0)
    with pytest.raises(ValueError, match="two or more kernels"):
        K.ChangePoints([K.SE()], locations=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'location'"):
        K.ChangePoints([K.SE(), K.SE()], location=0)
    # what the inputs decide, by the builder with its caret
    with pytest.raises(ValueError, match=r"needs locations=\[…\]: 1 for 2 kernels"):
        K.ChangePoints([K.SE(), K.SE()]).check(1)
    with pytest.raises(ValueError, match=r"name it with dims=\[…\] \(one of a, b\)"):
        K.ChangePoints([K.SE(), K.SE()], locations=0).check(["a", "b"])
    assert K.ChangePoints([K.SE(), K.SE()], locations=0, dims=["b"]).check(["a", "b"]) == (
        "changepoints(se, se, locations=0, dims=[b])"
    )
    # the fit: Python's and the command line's the same computation, the change found
    t, y = series()
    path = tmp_path / "cp.csv"
    path.write_text("year,y\n" + "".join(f"{a:.1f},{b:.6f}\n" for a, b in zip(t, y)))
    k = K.ChangePoints([K.SE(ls=3), K.SE(ls=0.3)], locations=1995)
    out, _, _ = run_cli("fit", "--train", path, "--method", "full", "--kernel", str(k), "--json")
    cli = json.loads(out)
    model = sgpw.fit(pd.DataFrame({"year": t}), y, method="full", kernel=k)
    assert model.nlml == cli["nlml"]
    fitted = K.check(cli["kernel"])
    location = float(fitted.split("locations=")[1].split(",")[0])
    assert abs(location - 1999.95) < 0.3, fitted


def test_errors_are_the_command_lines_with_its_caret():
    with pytest.raises(TypeError, match="unexpected keyword argument 'lengthscale'; se takes var, ls"):
        K.SE(lengthscale=2)
    with pytest.raises(TypeError, match="unsupported operand"):
        K.SE() + "linear"  # noqa: B018
    with pytest.raises(TypeError, match="sgpw.kernels objects"):
        K.Sum(K.SE(), "linear")
    # what the inputs decide is checked against them, by the builder, with the caret
    k = K.SE() + K.SE(ls=[1, 2, 3])
    with pytest.raises(ValueError, match=r"ls has 3 values here and needs 1 or 2") as e:
        k.check(["a", "b"])
    assert str(e.value).endswith("\n  se + se(ls=[1, 2, 3])\n" + " " * 10 + "^" * 12)
    assert k.check(3) == "se + se(ls=[1, 2, 3])"
    with pytest.raises(ValueError, match="periodic has no parameter offset"):
        K.Periodic(fix="offset").check(1)
    with pytest.raises(ValueError, match="dims names w"):
        K.SE(dims=["w"]).check(["t", "u"])
    # an expression string is checked the same way
    with pytest.raises(ValueError, match=r"'\*' where a kernel was expected"):
        K.check("se + * rq")
    assert K.check("se(ls=1.50)+linear") == "se(ls=1.5) + linear"


def data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 2))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


def test_fit_takes_an_object_as_its_expression():
    X, y = data()
    k = K.SE(dims=[0]) + K.Linear(dims=[1])
    a = sgpw.fit(X, y, method="fitc", m=10, iterations=40, kernel=k, threads=1)
    b = sgpw.fit(X, y, method="fitc", m=10, iterations=40, kernel=str(k), threads=1)
    assert a.nlml == b.nlml
    np.testing.assert_array_equal(a.predict(X[:5])[0], b.predict(X[:5])[0])
    assert "linear" in a.to_toml() and a.nlml < sgpw.fit(
        X, y, method="fitc", m=10, iterations=40, kernel=K.Linear(), threads=1
    ).nlml
    with pytest.raises(ValueError, match=r"ls has 2 values here and needs 1"):
        sgpw.fit(X, y, method="fitc", m=10, kernel=K.SE(dims=[0], ls=[1, 2]))


def test_the_estimators_take_kernel_objects():
    X, y = data()
    k = K.SE(dims=[0]) + K.Linear(dims=[1])
    reg = SparseGPRegressor(method="vfe", m=10, iterations=40, kernel=k, threads=1)
    copy = clone(reg)
    assert copy.kernel == k and copy.kernel is not k
    assert reg.fit(X, y).score(X, y) > 0.9
    clf = SparseGPClassifier(method="fitc", m=8, iterations=60, kernel=K.Matern52() + K.Linear(), threads=1)
    clf.fit(X, (y > 0).astype(int))
    assert clf.score(X, (y > 0).astype(int)) > 0.85
