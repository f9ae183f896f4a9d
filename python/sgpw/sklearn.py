"""scikit-learn estimators over ``sgpw.fit`` — ``SparseGPRegressor`` and the binary
``SparseGPClassifier`` — that drop into ``Pipeline``, ``GridSearchCV`` and
``cross_val_score``.

    from sgpw.sklearn import SparseGPRegressor
    from sklearn.model_selection import GridSearchCV
    search = GridSearchCV(SparseGPRegressor(), {"method": ["fitc", "vfe"], "m": [10, 20]})
    search.fit(X, y)

Its parameters are the keywords of ``sgpw.fit`` — every setting and option of ``sgpw
fit --help``, read from the command line's declaration when this module is imported (so
an option added to sgpw is a parameter here without a change) — plus ``threads``. Each
defaults to None: the command line's default, except that ``m=None`` is capped at the
number of training points (the command line refuses m > n). ``kernel`` is a plain
kernel's name, an expression or an ``sgpw.kernels`` object.
"""

import inspect as _inspect
import warnings as _warnings

import numpy as _np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from . import fit as _fit
from . import keywords as _keywords

__all__ = ["CLASSIFIER_PARAMS", "PARAMS", "SparseGPClassifier", "SparseGPRegressor"]

_KEYWORDS = _keywords()
#: The estimator's parameters: the keywords of ``sgpw.fit``, then ``threads``.
PARAMS = tuple(k["name"] for k in _KEYWORDS) + ("threads",)
_DEFAULT_M = int(next(k["default"] for k in _KEYWORDS if k["name"] == "m"))
#: The classifier's parameters: the regressor's but ``likelihood`` (bernoulli).
CLASSIFIER_PARAMS = tuple(n for n in PARAMS if n != "likelihood")
#: The classifier's method unless one is given (see ``SparseGPClassifier``).
CLASSIFIER_METHOD = "svgp"


def _signature(params, defaults):
    """The keyword-only ``__init__`` signature scikit-learn reads the parameters from."""
    return _inspect.Signature(
        [_inspect.Parameter("self", _inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            _inspect.Parameter(n, _inspect.Parameter.KEYWORD_ONLY, default=defaults.get(n))
            for n in params
        ]
    )


def _settings(est, params, n_rows):
    """The estimator's parameters as keywords of ``sgpw.fit`` (m capped at n)."""
    settings = {n: getattr(est, n) for n in params if n != "threads"}
    if settings["m"] is None:
        settings["m"] = min(_DEFAULT_M, n_rows)
    return settings


class SparseGPRegressor(RegressorMixin, BaseEstimator):
    """Sparse Gaussian-process regression with any sgpw method.

    Parameters: ``method``, ``m``, ``seed``, ``iterations``, ``standardize`` and every
    option of ``sgpw fit`` (``restarts``, ``alpha``, ``select``, …; ``sgpw.keywords()``
    lists them with their help), each None for the command line's default, and
    ``threads`` (None: every core). After ``fit``: ``model_`` (an ``sgpw.Model``),
    ``n_features_in_``.
    """

    def __init__(self, **params):
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise TypeError(
                f"SparseGPRegressor got unexpected parameter(s) {', '.join(unknown)}; "
                f"it takes {', '.join(PARAMS)}"
            )
        for name in PARAMS:
            setattr(self, name, params.get(name))

    # scikit-learn reads an estimator's parameters from its __init__ signature
    __init__.__signature__ = _signature(PARAMS, {})

    def fit(self, X, y):
        """Fit ``sgpw.fit(X, y, **params)``; returns self."""
        X, y = validate_data(self, X, y, y_numeric=True, ensure_min_samples=2)
        with _warnings.catch_warnings():
            # a regressor was chosen: a target of two values is regressed without the
            # note that `sgpw.fit` gives (SparseGPClassifier classifies)
            _warnings.filterwarnings("ignore", r"sgpw: the target '[^']*' has only the values")
            self.model_ = _fit(X, y, threads=self.threads, **_settings(self, PARAMS, X.shape[0]))
        return self

    def predict(self, X, return_std=False, latent=False):
        """Predictive mean at the rows of X; with ``return_std`` also the predictive
        standard deviation of y, a new observation (latent + noise) — what
        ``GaussianProcessRegressor`` with a ``WhiteKernel`` returns — or with
        ``latent=True`` that of the latent function alone (without the noise). A
        negative variance (Nyström's latent one can be) gives a standard deviation of
        0."""
        check_is_fitted(self, "model_")
        X = validate_data(self, X, reset=False)
        mean, var = self.model_.predict(X, noisy=not latent, threads=self.threads)
        if return_std:
            return mean, _np.sqrt(_np.maximum(var, 0.0))
        return mean


class SparseGPClassifier(ClassifierMixin, BaseEstimator):
    """Binary Gaussian-process classification (the bernoulli likelihood, probit link)
    with sgpw's methods that fit it: ``svgp`` (the default) and expectation propagation
    through ``fitc``, ``dtc``, ``pep`` and ``full``.

    The default is svgp (Hensman, Matthews & Ghahramani 2015, what GPflow's users
    reach for): its bound keeps the latent scale in check through the KL term, where
    EP's evidence keeps growing with the signal variance on separable data (the fit
    then warns, and its probabilities away from the data are overconfident) — common
    with few points in many inputs. ``method="fitc"`` is generalised FITC with EP
    (Naish-Guzman & Holden 2007, GPML's ``infFITC_EP``).

    Parameters: the keywords of ``sgpw.fit`` (``method``, ``m``, ``seed``,
    ``iterations``, ``kernel``, ``fix``, …) but ``likelihood``, each None for the command
    line's default (``m`` capped at the number of training points), and ``threads``.
    Any two labels (numbers, strings, booleans): ``classes_`` holds them sorted, and
    ``classes_[1]`` is the positive class — the second column of ``predict_proba`` and
    the sign of ``decision_function``. A target with more than two classes is refused;
    ``sklearn.multiclass.OneVsRestClassifier(SparseGPClassifier())`` fits one per class.
    After ``fit``: ``model_`` (an ``sgpw.Model``), ``classes_``, ``n_features_in_``.
    """

    def __init__(self, **params):
        unknown = sorted(set(params) - set(CLASSIFIER_PARAMS))
        if unknown:
            hint = " (it is always bernoulli)" if "likelihood" in unknown else ""
            raise TypeError(
                f"SparseGPClassifier got unexpected parameter(s) {', '.join(unknown)}{hint}; "
                f"it takes {', '.join(CLASSIFIER_PARAMS)}"
            )
        for name in CLASSIFIER_PARAMS:
            setattr(self, name, params.get(name, CLASSIFIER_METHOD if name == "method" else None))

    __init__.__signature__ = _signature(CLASSIFIER_PARAMS, {"method": CLASSIFIER_METHOD})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Fit ``sgpw.fit(X, y == classes_[1], likelihood="bernoulli", **params)``;
        returns self."""
        X, y = validate_data(self, X, y, ensure_min_samples=2)
        check_classification_targets(y)
        self.classes_ = _np.unique(y)
        k = len(self.classes_)
        if k == 1:
            raise ValueError(
                f"y has one class ({self.classes_[0]!r}): a classifier needs both classes "
                "in the training data"
            )
        if k > 2:
            # scikit-learn's words for a binary-only classifier, then what to do
            shown = ", ".join(repr(c) for c in self.classes_[:5]) + (", …" if k > 5 else "")
            raise ValueError(
                f"Only binary classification is supported. The type of the target is "
                f"{type_of_target(y)}: y has {k} classes ({shown}); for more classes wrap "
                "it: sklearn.multiclass.OneVsRestClassifier(SparseGPClassifier())"
            )
        positive = (y == self.classes_[1]).astype(_np.float64)
        settings = _settings(self, CLASSIFIER_PARAMS, X.shape[0])
        self.model_ = _fit(X, positive, threads=self.threads, likelihood="bernoulli", **settings)
        return self

    def decision_function(self, X):
        """μ/√(1 + v) at the rows of X, μ and v the latent function's posterior mean
        and variance: the probit's argument, p(classes_[1]) = Φ(μ/√(1 + v)). It has the
        latent mean's sign — positive where ``classes_[1]`` is the likelier class — and
        ranks the rows as ``predict_proba`` does, so scikit-learn's scores that read it
        (``roc_auc``, ``average_precision``) agree with sgpw's AUC, which ranks by p. The
        latent mean alone is ``model_.predict(X)[0]``."""
        check_is_fitted(self, "model_")
        X = validate_data(self, X, reset=False)
        mean, var = self.model_.predict(X, threads=self.threads)
        return mean / _np.sqrt(1.0 + _np.maximum(var, 0.0))

    def predict_proba(self, X):
        """(n, 2): the probabilities of ``classes_[0]`` and ``classes_[1]``, p(y = 1) =
        E[Φ(f)] under the latent posterior (Φ(μ/√(1 + v)))."""
        check_is_fitted(self, "model_")
        X = validate_data(self, X, reset=False)
        p = self.model_.predict_y(X, threads=self.threads)[0]
        return _np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        return _np.log(self.predict_proba(X))

    def predict(self, X):
        """The likelier class at each row of X (``classes_[1]`` where the decision
        function, and so the latent mean, is positive)."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]
