"""sgpw — the sparse Gaussian-process workbench, from Python.

numpy in, numpy out: ``sgpw.fit`` trains one model exactly as ``sgpw fit`` does (the
same Rust code, the same checks and messages), ``Model.predict`` predicts as ``sgpw
predict`` does, models are the command line's model files, and ``sgpw.Session`` runs
and reports session files as ``sgpw run`` and ``sgpw report`` do.

    import numpy as np, sgpw
    X = _np.random.default_rng(0).uniform(-3, 3, (500, 1))
    y = _np.sin(2 * X[:, 0]) + 0.1 * _np.random.default_rng(1).normal(size=500)
    model = sgpw.fit(X, y, method="vfe", m=20)
    mean, var = model.predict(_np.linspace(-3, 3, 7)[:, None])

Every option of ``sgpw fit --help`` is a keyword of the same name (underscores for
dashes): ``restarts=5``, ``alpha=0.5``, ``select="dmax"``; the starting values
``--init-lengthscales``, ``--init-signal-variance``, ``--init-noise-variance`` are
``lengthscales=``, ``signal_variance=``, ``noise_variance=``; see ``sgpw.keywords()``.
"""

import difflib as _difflib
import io as _io
import inspect as _inspect
import os as _os
import re as _re
import tempfile as _tempfile
import warnings as _warnings

import numpy as _np

from . import _sgpw, kernels
from ._sgpw import NumericalError, __version__

__all__ = [
    "Model",
    "NumericalError",
    "Session",
    "fit",
    "keywords",
    "kernels",
    "load",
    "methods",
    "__version__",
]


# The Python name of a setting whose session key reads differently: the starting
# values, named as the model's parameters are (``Model.params``), and the inducing
# inputs (an array ``Z`` in Python, written to the file the option reads).
_PYTHON_NAMES = {
    "inducing_inputs": "Z",
    "init_lengthscales": "lengthscales",
    "init_signal_variance": "signal_variance",
    "init_noise_variance": "noise_variance",
}


def _declared():
    """The keywords of ``fit`` as the extension declares them (session key, flag, …),
    with their Python names."""
    out = []
    for k in _sgpw.keywords():
        k = dict(k)
        k["name"] = _PYTHON_NAMES.get(k["key"], k["name"])
        out.append(k)
    return out


_KEYWORDS = _declared()
_BY_NAME = {k["name"]: k for k in _KEYWORDS}


def _python_words(message):
    """A message of the command line's code in Python's words: ``key = v (--flag)`` and
    ``key (--flag)`` name the keyword alone, any other ``--flag`` (clap's
    ``'--flag <VALUE>'`` too) is the keyword's name, ``--raw`` is ``standardize=False``."""
    for k in _KEYWORDS:
        flag, key, name = k["flag"], k["key"], k["name"]
        # the flag's own name as a key (`seed` for `--seed`): messages use either
        said = {key, flag[2:].replace("-", "_")}
        for word in sorted(said, key=len, reverse=True):
            message = _re.sub(
                rf"\b{_re.escape(word)}\b(?!-)( = [^()]*?)? \({_re.escape(flag)}\)",
                lambda mt: name + (mt.group(1) or ""),
                message,
            )
        python = f"{key}=False" if k["switch"] and flag[2:].replace("-", "_") != key else name
        message = _re.sub(rf"{_re.escape(flag)}(?![\w-])( <[A-Z_]+>)?", python, message)
        if key != name:
            message = _re.sub(rf"\b{_re.escape(key)}\b", name, message)
    return message


def _check_keywords(given, function):
    """An unknown keyword is a TypeError naming the closest ones, as Python's own."""
    known = set(_BY_NAME) | {k["key"] for k in _KEYWORDS}
    known |= {k["flag"][2:].replace("-", "_") for k in _KEYWORDS}
    for name in given:
        if name not in known:
            close = _difflib.get_close_matches(name, sorted(_BY_NAME), n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise TypeError(
                f"{function}() got an unexpected keyword argument '{name}'{hint} "
                f"(sgpw.keywords() lists them all)"
            )


def _matrix(X, name):
    """A 2-d float64 array: read in place when it already is one (any strides),
    converted otherwise (float32, integers, lists, a DataFrame's values)."""
    a = _np.asarray(X, dtype=_np.float64)
    if a.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-d array of shape (n_samples, n_features), not one of "
            f"shape {a.shape}; a single input column is {name}.reshape(-1, 1)"
        )
    return a


def _vector(y, name):
    a = _np.asarray(y, dtype=_np.float64)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of targets, not one of shape {a.shape}")
    return a


def _is_missing(v):
    """A missing label: None, a float NaN, pandas' NA or NaT."""
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")


def _labels(a):
    """The cells of a 1-d array as labels for the Rust loader's rule: booleans as
    "true"/"false" (the words a file's boolean column is read as), bytes decoded, other
    values as their text; missing cells None."""
    def word(v):
        if _is_missing(v):
            return None
        if isinstance(v, (bool, _np.bool_)):
            return "true" if v else "false"
        if isinstance(v, bytes):
            return v.decode()
        return str(v)

    return [word(v) for v in a.tolist()]


def _target(y, name):
    """y as a float64 vector of numbers, or, where it holds strings or booleans (a
    pandas Series of words, a numpy array of str or bool), as labels: (numbers, None,
    False) or (None, labels, booleans). The labels are read as two classes by the Rust
    loader's rule (``Model.classes``), not here."""
    a = _np.asarray(y)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.dtype.kind == "b":
        return None, _labels(a), True
    if a.dtype.kind in "OUS":
        try:
            return _vector(a, name), None, False
        except (TypeError, ValueError):
            if a.ndim != 1:
                raise ValueError(
                    f"{name} must be a 1-d array of targets, not one of shape {a.shape}"
                ) from None
            return None, _labels(a), False
    return _vector(y, name), None, False


def _write_points(Z, X, names, folder):
    """Z as the CSV file ``--inducing-inputs`` reads (header: X's column names; each
    number as Python's repr, which reads back as the same double)."""
    Z = _matrix(Z, "Z")
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"Z has {Z.shape[1]} columns but X has {X.shape[1]}: one per input")
    header = names if names is not None else [f"x{j}" for j in range(X.shape[1])]
    path = _os.path.join(folder, "Z.csv")
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for row in Z:
            f.write(",".join(repr(float(v)) for v in row) + "\n")
    return path


def _columns(X):
    """The column names of a DataFrame, else None."""
    cols = getattr(X, "columns", None)
    return None if cols is None else [str(c) for c in cols]



def _told_the_start(callback):
    """The extension calls back with (iteration, objective, start); a callback of two
    arguments is called without the start."""
    if callback is None:
        return None
    try:
        params = _inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return lambda i, f, s: callback(i, f)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 3 or any(p.kind == p.VAR_POSITIONAL for p in params):
        return callback
    return lambda i, f, s: callback(i, f)

def fit(
    X,
    y,
    method=None,
    m=None,
    seed=None,
    iterations=None,
    standardize=None,
    X_test=None,
    y_test=None,
    *,
    threads=None,
    callback=None,
    Z=None,
    **options,
):
    """Train one model on (X, y), as ``sgpw fit`` does.

    method, m, seed, iterations, standardize and every keyword in ``options`` are the
    settings of ``sgpw fit`` by their names (``sgpw.keywords()`` lists them with their
    help); None (the default) leaves a setting at the command line's default. They are
    parsed and checked by the command line's code: a bad one raises ValueError with its
    message. X is (n, D), y is (n,); X_test and y_test, if given, are scored (NMSE,
    MNLP). Constant input columns are dropped with a warning, as the command line drops
    them. ``Z``, an (m, D) array in X's units, is where the inducing inputs start
    (``--inducing-inputs``: fitc, vfe, dtc, pep, spgp-hs, svgp); m defaults to its rows.
    ``lengthscales=``, ``signal_variance=``, ``noise_variance=`` start the
    hyperparameters, in the data's units (the units of ``Model.params``). ``fix=`` holds
    parameter blocks fixed (``--fix``): ``"lengthscales"`` at their start,
    ``"noise_variance=0.01"`` at a value in the data's units, a list of such, or a dict
    ``{"noise_variance": 0.01, "inducing_inputs": None}``; ``Model.fixed`` lists them.
    ``kernel=`` is a plain kernel's name, an expression (``"se + periodic"``) or an
    ``sgpw.kernels`` object (``SE(dims=[0]) + Linear()``). The fit runs with the GIL released on ``threads`` threads (None: every core;
    1: one); Ctrl-C raises KeyboardInterrupt. ``callback(iteration, objective)`` is
    called for each iteration as it happens (objective on the raw target scale); with
    the default two starts the two fits advance in turns, each numbered from 0, so a
    callback that takes a third argument, ``callback(iteration, objective, start)``,
    is told which (1: the default start's fit, 2: the second start's;
    ``model.second_start`` says which was kept); an exception from it stops the fit
    and is raised.
    ``exposure=`` (``likelihood="poisson"``): each row's exposure E > 0, so that
    y ~ Poisson(E·exp f) — the name of a column of the DataFrame X (and X_test), or an
    array of n values (then X_test is not scored); it is taken out of the inputs
    (``model.inputs``) and its log added to f in the likelihood.
    """
    exposure = options.get("exposure")
    if exposure is not None and not isinstance(exposure, str):
        # an array: a column of X that the fit takes out of the inputs again
        if X_test is not None:
            raise ValueError(
                "exposure= as an array gives the training rows' exposures only: name a "
                "column of X and X_test instead to score X_test"
            )
        e = _vector(exposure, "exposure")
        names = _columns(X)
        X = _matrix(X, "X")
        if len(e) != X.shape[0]:
            raise ValueError(f"exposure has {len(e)} values for the {X.shape[0]} rows of X")
        names = names if names is not None else [f"x{j}" for j in range(X.shape[1])]
        column = "exposure"
        while column in names:
            column = "_" + column
        import pandas as pd

        X = pd.DataFrame(_np.column_stack([X, e]), columns=names + [column])
        options["exposure"] = column
    names = _columns(X)
    X = _matrix(X, "X")
    y, y_labels, booleans = _target(y, "y")
    y_test_labels = None
    if (X_test is None) != (y_test is None):
        raise ValueError("give both X_test and y_test, or neither")
    if X_test is not None:
        X_test = _matrix(X_test, "X_test")
        if y_labels is None:
            y_test = _vector(y_test, "y_test")
        else:
            # labels like the training ones, mapped by the training's classes
            y_test_labels, y_test = _labels(_np.asarray(y_test).reshape(-1)), None
    _check_keywords(options, "fit")
    if isinstance(options.get("kernel"), kernels.Kernel):
        options["kernel"] = str(options["kernel"])
    if isinstance(options.get("fix"), dict):
        options["fix"] = [k if v is None else f"{k}={v!r}" for k, v in options["fix"].items()]
    settings = dict(method=method, m=m, seed=seed, iterations=iterations, standardize=standardize)
    settings.update(options)
    # the Python names of the starting values are their session keys for the parser
    keys = {name: key for key, name in _PYTHON_NAMES.items()}
    pairs = [(keys.get(k, k), v) for k, v in settings.items()]
    with _tempfile.TemporaryDirectory(prefix="sgpw-") as tmp:
        z_file = None
        if Z is not None:
            z_file = _write_points(Z, X, names, tmp)
            pairs.append(("inducing_inputs", z_file))
            if m is None:
                pairs = [("m", len(Z)) if k == "m" else (k, v) for k, v in pairs]
        try:
            core, info = _sgpw.fit(
                X, y, X_test, y_test, names, pairs, threads=threads,
                callback=_told_the_start(callback), y_labels=y_labels,
                y_test_labels=y_test_labels, booleans=booleans,
            )
        except ValueError as e:
            text = str(e) if z_file is None else str(e).replace(z_file, "Z")
            raise type(e)(_python_words(text)) from None
    for note in info["notes"]:
        _warnings.warn(f"sgpw: {_python_words(note)}", UserWarning, stacklevel=2)
    columns = names if names is not None else [f"x{j}" for j in range(X.shape[1])]
    model = Model(core, info=info, columns=columns)
    if not core.stores_posterior:
        # prediction conditions on the training data again after pickling
        # labels as the class codes the fit read them as
        model._train = (model._select(X), y if y_labels is None else info["y_classes"])
    return model


def load(path, X=None, y=None):
    """Read a model file written by ``sgpw fit --save-model`` or ``Model.save``.

    A model without a stored posterior (``full``, ``nystrom``) needs the training data it
    was fitted on, as ``sgpw predict --train`` does."""
    path = _os.fspath(path)
    if not _os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such model file")
    train = None
    if X is not None or y is not None:
        train = (_matrix(X, "X"), _vector(y, "y"))
        core = _sgpw.load(path, *train)
    else:
        core = _sgpw.load(path)
    model = Model(core)
    if not core.stores_posterior:
        model._train = train
    return model


def methods():
    """Every method: name, aliases, summary, what m counts (``m``), what the seed does
    (``seed``), and the options it reads."""
    return _sgpw.methods()


def keywords():
    """Every keyword ``fit`` takes, from the command line's declaration: name, the
    session key and flag it is, help, choices, whether a switch or a list, default."""
    return [dict(k) for k in _KEYWORDS]


def _from_state(text, train, info, columns):
    core = _sgpw.from_toml(text, *train) if train is not None else _sgpw.from_toml(text)
    model = Model(core, info=info, columns=columns)
    model._train = train
    return model


class Model:
    """A fitted (or loaded) model: ``predict``, ``save``, ``params`` and the fit's record
    (``nlml``, ``trace``, ``iterations``, test ``nmse``/``mnlp`` when a test set was
    given, …)."""

    def __init__(self, core, info=None, columns=None):
        self._core = core
        self._info = dict(info) if info else {}
        self._columns = columns
        self._train = None

    # the fit's record ---------------------------------------------------------------
    @property
    def method(self):
        return self._core.method

    @property
    def inputs(self):
        """The input columns the model takes, in order."""
        return self._core.inputs

    @property
    def fixed(self):
        """The parameter blocks the fit held fixed (``fix=``), e.g. ``["noise_variance"]``;
        their values are in ``params``."""
        return self._core.fixed

    @property
    def dim(self):
        return self._core.dim

    @property
    def nlml(self):
        """The objective at the fitted parameters on the raw target scale (the NLML; the
        negative ELBO for vfe, the power-EP energy for pep), as ``sgpw fit`` reports it."""
        if "nlml" in self._info:
            return self._info["nlml"]
        fit = self._core.fit_info
        return None if fit is None else fit["nlml"]

    @property
    def objective(self):
        return self._core.objective_name

    @property
    def trace(self):
        """The objective after each iteration, from the initial value (raw target scale);
        None for a loaded model."""
        return self._info.get("trace")

    @property
    def info(self):
        """Everything the fit reported: iterations, evaluations, stop, train_seconds,
        jitter, collapsed, second_start, nmse, mnlp, mse, constant_mnlp, validation,
        notes, …"""
        return dict(self._info)

    def __getattr__(self, name):
        info = self.__dict__.get("_info", {})
        if name in info:
            return info[name]
        raise AttributeError(f"'Model' object has no attribute '{name}'")

    @property
    def params(self):
        """The parameters as numpy arrays. ``signal_variance`` and ``noise_variance`` are
        in the target's units squared and ``lengthscales`` in the inputs' units (absent
        where they are not one per input: pca-spgp, spgp-dr) — the values to compare
        with GPflow or scikit-learn, and to pass back to ``fit`` as a start. The model
        file's values, in model units (after standardizing: inputs and target divided by
        their standard deviations), are ``model_units.KEY`` (its ``[hyper]`` table:
        ``model_units.signal_variance``, …, and ``model_units.noise_floor``; ``kernel``
        and rq's ``rq_alpha`` have no units); the method's other tables are
        ``table.key`` as the file holds them, in model units too (``inducing.points`` is
        m×D); the standardisation is ``standardize.key``."""
        out = {}
        data_units = self._core.hyper_in_data_units()
        for k, v in data_units.items():
            if v is not None:
                out[k] = _param(v)
        for key, value in self._core.tables().items():
            # names, not values: the fixed blocks are `Model.fixed`
            if key in ("method", "inputs", "fixed"):
                continue
            if key == "hyper":
                for k, v in value.items():
                    # the kernel's name and rq's α have no units
                    unitless = k in ("kernel", "rq_alpha")
                    out[k if unitless else f"model_units.{k}"] = _param(v)
            elif key == "noise_floor":
                out["model_units.noise_floor"] = value
            elif isinstance(value, dict):
                for k, v in value.items():
                    out[f"{key}.{k}"] = _param(v)
            else:
                out[key] = _param(value)
        return out

    # prediction ---------------------------------------------------------------------
    def _select(self, X):
        """The model's input columns of X: by name from a DataFrame; from an array with
        the columns the fit was given (constant ones dropped), by position."""
        inputs = self.inputs
        names = _columns(X)
        if names is not None and inputs and all(c in names for c in inputs):
            X = X[inputs]
        X = _matrix(X, "X")
        cols = self._columns
        if (
            X.shape[1] != self.dim
            and cols is not None
            and inputs
            and X.shape[1] == len(cols)
            and all(c in cols for c in inputs)
        ):
            X = X[:, [cols.index(c) for c in inputs]]
        return X

    def predict(self, X, noisy=False, full_cov=False, threads=None):
        """Predictive mean and variance at the rows of X, in the target's units: the
        latent function's variance, or with ``noisy=True`` that of a new observation
        (latent + noise), as ``sgpw predict``'s var_latent and var_noisy (GPflow's
        ``predict_f`` and ``predict_y``). With ``full_cov=True`` the second value is the
        full (t, t) covariance of the latent function at the t rows (plus σ² on its
        diagonal with ``noisy=True``); its diagonal is the variance. t² numbers: for a
        few thousand rows at most. Methods that do not compute the covariance between
        test points (nystrom, pca-spgp, spgp-dr, eigengp-plus) raise ValueError."""
        X = self._select(X)
        if full_cov:
            mean, cov = self._core.latent_cov(X, threads=threads)
            if noisy:
                cov[_np.diag_indices_from(cov)] += self.params["noise_variance"]
            return mean, cov
        mean, latent, noisy_var = self._core.predict(X, threads=threads)
        return mean, (noisy_var if noisy else latent)

    def predict_components(self, X, threads=None):
        """The posterior of each summand of a kernel that is a sum (``kernel="se + se *
        periodic + rq"``) at the rows of X, as ``sgpw predict --components`` writes it:
        per summand, by its short label (``se1``, ``se2*periodic``, ``rq``), the latent
        mean and variance in the target's units. A summand's mean has no target mean
        added (the means add up to the total mean minus the target's); the variances do
        not add up (the summands' posteriors are correlated). A dict ``{label: (mean,
        var_latent)}`` in the kernel's order; for a DataFrame X, a DataFrame with the
        command line's columns ``mean_LABEL``, ``var_latent_LABEL`` and X's index. The
        exact GP, the inducing-point methods (fitc, vfe, dtc, pep, spgp-hs, spgp-dr,
        pca-spgp), greedy, the inter-domain methods (fifgp, tfifgp, smgp), psds, ssgp and
        svgp only; other methods, and kernels that are not sums, raise ValueError saying
        why."""
        parts = self._core.components(self._select(X), threads=threads)
        if _columns(X) is None:
            return {label: (mean, var) for label, mean, var in parts}
        import pandas as pd

        columns = {}
        for label, mean, var in parts:
            columns[f"mean_{label}"] = mean
            columns[f"var_latent_{label}"] = var
        return pd.DataFrame(columns, index=X.index)

    @property
    def likelihood(self):
        """The likelihood's name (``"gaussian"``, ``"bernoulli"``, …)."""
        return self._core.likelihood

    @property
    def labels(self):
        """A bernoulli model's two training labels, read as classes 0 and 1 (the
        smaller first); None for other likelihoods."""
        return self._core.labels

    @property
    def classes(self):
        """A bernoulli model of a target of words (strings, booleans): its two labels,
        sorted, as classes 0 and 1 — the second the positive class, whose probability
        ``predict_y`` gives (as scikit-learn's ``classes_``; booleans: ``("false",
        "true")``); None for a numeric target (see ``labels``)."""
        c = self._core.classes
        return None if c is None else tuple(c)

    def predict_y(self, X, exposure=None, threads=None):
        """The mean and variance of a new observation y at the rows of X, by the
        model's likelihood, as ``sgpw predict`` writes them: for bernoulli p(y = 1) —
        the probability of the larger training label (``labels[1]``) — and p(1 − p);
        for poisson and studentt the predictive mean and variance of y in the target's
        units; for a Gaussian model the mean and the noisy variance. ``exposure``
        (poisson): each row's exposure E > 0, a column name of the DataFrame X or an
        array; None predicts the counts of an exposure of 1 (the rate per unit of
        exposure), as ``sgpw predict`` without ``--exposure``."""
        if isinstance(exposure, str):
            exposure = X[exposure]
        if exposure is not None:
            exposure = _vector(exposure, "exposure")
        return self._core.predict_y(self._select(X), exposure, threads=threads)

    def predict_interval(self, X, level=0.95, threads=None):
        """(lower, upper): the central interval holding ``level`` of a new observation's
        predictive probability at the rows of X, in the target's units, as ``sgpw
        predict`` writes it at 95% (``lower95``, ``upper95``): poisson models — the
        smallest counts whose predictive distribution function reaches (1 − level)/2 and
        (1 + level)/2 under the Poisson–lognormal predictive — and studentt models (the
        latent normal convolved with the Student-t noise). Other likelihoods raise
        ValueError."""
        return self._core.predict_interval(self._select(X), float(level), threads=threads)

    def sample(self, X, n=1, seed=None, threads=None):
        """``n`` draws of the latent function at the rows of X from the posterior, an
        (n, t) array in the target's units (GPflow's ``predict_f_samples``): the mean
        plus the Cholesky factor of ``predict(X, full_cov=True)``'s covariance (with the
        smallest jitter that factorises it) times standard normal draws from ``seed``
        (None: a fresh one)."""
        if seed is None:
            seed = int(_np.random.SeedSequence().generate_state(1, _np.uint64)[0])
        return self._core.sample(self._select(X), int(n), int(seed), threads=threads)

    def log_density(self, X, y, threads=None):
        """The log predictive density of each target y at the rows of X under the
        noisy predictive distribution N(mean, latent variance + σ²) (GPflow's
        ``predict_log_density``); the test MNLP is minus its mean."""
        return self._core.log_density(self._select(X), _vector(y, "y"), threads=threads)

    # files --------------------------------------------------------------------------
    def save(self, path):
        """Write the model file, as ``sgpw fit --save-model`` does."""
        self._core.save(_os.fspath(path))

    def to_toml(self):
        return self._core.to_toml()

    def __reduce__(self):
        return (_from_state, (self.to_toml(), self._train, self._info, self._columns))

    def __repr__(self):
        nlml = self.nlml
        return (
            f"<sgpw.Model {self.method} on {self.dim} input(s)"
            + ("" if nlml is None else f", {self.objective} {nlml:.6g}")
            + ">"
        )


def _param(v):
    if isinstance(v, list):
        return _np.asarray(v, dtype=_np.float64)
    return v


class Session:
    """A session file: ``run`` its runs as ``sgpw run`` does, read its ``results`` as
    ``sgpw report --format csv`` writes them, or its ``report``."""

    def __init__(self, path):
        self.path = _os.fspath(path)
        if not _os.path.exists(self.path):
            raise FileNotFoundError(f"{self.path}: no such session file")

    def run(self, jobs=0, force=False, callback=None):
        """Run the unfinished runs (all with ``force``) on ``jobs`` workers (0: one per
        core), saving each result into the file as it finishes; ``callback(result)``
        sees each (a dict). Ctrl-C cancels the running runs (recorded as cancelled),
        keeps the finished ones and raises KeyboardInterrupt. Returns counts: ran,
        done, failed, cancelled, not_started."""
        return _sgpw.session_run(self.path, jobs=jobs, force=force, callback=callback)

    def report(self, format="markdown", merge_generations=False, mse=False):
        """The results as ``sgpw report --format FORMAT`` prints them (markdown, csv or
        json)."""
        return _sgpw.session_report(
            self.path, format=format, merge_generations=merge_generations, mse=mse
        )

    def results(self):
        """One row per run, the columns of ``sgpw report --format csv``, as a pandas
        DataFrame."""
        import pandas as pd

        # exact doubles: pandas 3 parses them so by default, older pandas when asked
        exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
        return pd.read_csv(_io.StringIO(self.report("csv")), **exact)

    def __repr__(self):
        return f"<sgpw.Session {self.path}>"
