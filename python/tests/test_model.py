"""Models from Python: save → load → predict, pickling, parameters, the fit's record,
inputs of any layout and dtype, DataFrames, callbacks and threads."""

import pickle
import threading
import time
import warnings

import numpy as np
import pandas as pd
import pytest

import sgpw


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (300, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=300)
    return X, y


def test_save_load_predict_round_trips(data, tmp_path):
    X, y = data
    model = sgpw.fit(X, y, method="vfe", m=15, iterations=50)
    path = tmp_path / "model.toml"
    model.save(path)
    loaded = sgpw.load(path)
    for noisy in (False, True):
        a = model.predict(X[:20], noisy=noisy)
        b = loaded.predict(X[:20], noisy=noisy)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    assert loaded.nlml == model.nlml and loaded.trace is None
    assert loaded.to_toml() == path.read_text()
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(X[:5])[0], model.predict(X[:5])[0])
    assert copy.iterations == model.iterations


def test_a_model_without_a_posterior_needs_its_training_data(data, tmp_path):
    X, y = data
    model = sgpw.fit(X[:80], y[:80], method="full", iterations=20)
    path = tmp_path / "full.toml"
    model.save(path)
    with pytest.raises(ValueError, match="no stored \\[posterior\\]"):
        sgpw.load(path)
    loaded = sgpw.load(path, X[:80], y[:80])
    np.testing.assert_array_equal(loaded.predict(X[:5])[0], model.predict(X[:5])[0])
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(X[:5])[0], model.predict(X[:5])[0])


def test_params_and_record(data):
    X, y = data
    model = sgpw.fit(X, y, method="fitc", m=12, iterations=30, X_test=X[:50], y_test=y[:50])
    p = model.params
    assert p["lengthscales"].shape == (3,)
    assert p["inducing.points"].shape == (12, 3)
    assert p["signal_variance"] > 0 and p["noise_variance"] > 0
    assert model.trace.shape == (model.iterations + 1,)
    assert model.trace[-1] <= model.trace[0]
    assert 0 <= model.nmse < 1 and np.isfinite(model.mnlp)
    assert model.inputs == ["x0", "x1", "x2"] and model.method == "fitc"
    assert model.stop in ("budget", "converged", "line-search-failed")
    names = {m["name"] for m in sgpw.methods()}
    assert {"fitc", "vfe", "ssgp", "full", "greedy"} <= names
    keys = {k["name"] for k in sgpw.keywords()}
    assert {"method", "m", "seed", "iterations", "standardize", "restarts", "alpha"} <= keys


def test_non_contiguous_and_float32_inputs_give_the_float64_fit(data):
    X, y = data
    ref = sgpw.fit(X, y, method="vfe", m=10, iterations=25)
    wide = np.zeros((X.shape[0], 6))
    wide[:, ::2] = X
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    a = sgpw.fit(strided, y, method="vfe", m=10, iterations=25)
    assert a.nlml == ref.nlml
    fortran = np.asfortranarray(X)
    b = sgpw.fit(fortran, y, method="vfe", m=10, iterations=25)
    assert b.nlml == ref.nlml
    X32, y32 = X.astype(np.float32), y.astype(np.float32)
    c = sgpw.fit(X32, y32, method="vfe", m=10, iterations=25)
    d = sgpw.fit(X32.astype(np.float64), y32.astype(np.float64), method="vfe", m=10, iterations=25)
    assert c.nlml == d.nlml
    np.testing.assert_array_equal(c.predict(X32[:7])[0], d.predict(X32[:7].astype(np.float64))[0])
    # a list of lists and integers are converted too
    e = sgpw.fit(X.tolist(), list(y), method="vfe", m=10, iterations=25)
    assert e.nlml == ref.nlml


def test_a_two_valued_target_of_a_regression_fit_is_noted_in_pythons_words(data):
    X, _ = data
    y = (X[:, 0] > X[:, 1]).astype(float)
    with pytest.warns(UserWarning, match=r"'y' has only the values 0 and 1") as said:
        sgpw.fit(X, y, method="vfe", m=10, iterations=5)
    text = " ".join(str(w.message) for w in said)
    # the keyword, not the command line's flag
    assert "use likelihood bernoulli" in text and "--" not in text, text


def test_dataframes_name_the_inputs_and_constant_columns_are_dropped(data):
    X, y = data
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["k"] = 1.0
    with pytest.warns(UserWarning, match="dropped constant column"):
        model = sgpw.fit(df, pd.Series(y), method="vfe", m=10, iterations=20)
    assert model.inputs == ["a", "b", "c"]
    ref = sgpw.fit(X, y, method="vfe", m=10, iterations=20)
    assert model.nlml == ref.nlml
    # a frame in any column order, or the array the fit was given, predicts the same
    expected = ref.predict(X[:4])[0]
    np.testing.assert_array_equal(model.predict(df[["k", "c", "b", "a"]].head(4))[0], expected)
    np.testing.assert_array_equal(model.predict(df.to_numpy()[:4])[0], expected)
    with pytest.raises(ValueError, match="columns but the model takes 3 inputs"):
        model.predict(np.zeros((2, 5)))


def test_callback_sees_every_iteration_and_can_stop_the_fit(data):
    X, y = data
    seen = []
    model = sgpw.fit(
        X, y, method="vfe", m=10, iterations=30, single_start=True,
        callback=lambda i, f: seen.append((i, f)),
    )
    assert [i for i, _ in seen] == list(range(len(seen)))
    assert [f for _, f in seen] == list(model.trace)
    assert model.second_start is None

    # two starts (the default): the fits advance in turns, each numbered from 0; a
    # callback of three arguments is told which; the kept one is the trace
    seen = []
    model = sgpw.fit(
        X, y, method="vfe", m=10, iterations=30, threads=1,
        callback=lambda i, f, s: seen.append((i, f, s)),
    )
    fits = {s: [(i, f) for i, f, t in seen if t == s] for s in (1, 2)}
    for part in fits.values():
        assert part and [i for i, _ in part] == list(range(len(part)))
    kept = fits[2] if model.second_start["kept_second"] else fits[1]
    assert [f for _, f in kept] == list(model.trace)
    # a callback of two arguments hears the same calls without the start
    heard = []
    sgpw.fit(
        X, y, method="vfe", m=10, iterations=30, threads=1,
        callback=lambda i, f: heard.append((i, f)),
    )
    assert heard == [(i, f) for i, f, _ in seen]
    best = min(model.second_start["first_nlml"], model.second_start["second_nlml"])
    assert abs(best - model.nlml) <= 1e-9 * abs(model.nlml)

    class Stop(Exception):
        pass

    def stop(i, f):
        if i == 3:
            raise Stop

    with pytest.raises(Stop):
        sgpw.fit(X, y, method="vfe", m=10, iterations=1000, callback=stop)


def test_threads_do_not_change_the_result_and_the_gil_is_released(data):
    X, y = data
    one = sgpw.fit(X, y, method="fitc", m=20, iterations=40, threads=1)
    two = sgpw.fit(X, y, method="fitc", m=20, iterations=40, threads=2)
    assert abs(one.nlml - two.nlml) <= 1e-6 * abs(one.nlml)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        rng = np.random.default_rng(1)
        Xb = rng.uniform(-3, 3, (4000, 4))
        yb = np.sin(Xb).sum(1) + 0.1 * rng.normal(size=4000)
        before = len(ticks)
        sgpw.fit(Xb, yb, method="fitc", m=60, iterations=60, threads=1)
        during = len(ticks) - before
    finally:
        done.set()
        t.join()
    # the other Python thread kept running while the fit ran (with the GIL held it
    # could not have ticked at all)
    assert during >= 5, during


def test_fix_holds_a_block_and_fits_the_others(data):
    X, y = data
    free = sgpw.fit(X, y, method="vfe", m=12, iterations=30)
    held = sgpw.fit(X, y, method="vfe", m=12, iterations=30, fix={"noise_variance": 0.05})
    assert held.fixed == ["noise_variance"]
    # in the data's units, as given
    assert held.params["noise_variance"] == pytest.approx(0.05, rel=1e-12)
    assert free.params["noise_variance"] != pytest.approx(0.05, rel=1e-3)
    assert not np.allclose(held.params["lengthscales"], free.params["lengthscales"])
    # a list of names and NAME=VALUE strings; the estimator passes it on
    from sgpw.sklearn import SparseGPRegressor

    est = SparseGPRegressor(
        method="vfe", m=12, iterations=30, fix=["noise_variance=0.05", "lengthscales"]
    ).fit(X, y)
    assert sorted(est.model_.fixed) == ["lengthscales", "noise_variance"]
    assert est.model_.params["noise_variance"] == pytest.approx(0.05, rel=1e-12)
    with pytest.raises(ValueError, match="no parameter block 'bogus'"):
        sgpw.fit(X, y, method="vfe", m=12, fix=["bogus"])
