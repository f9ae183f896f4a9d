"""A scikit-learn estimator over ``sgpw.fit``: drops into ``Pipeline``,
``GridSearchCV`` and ``cross_val_score``.

    from sgpw.sklearn import SparseGPRegressor
    from sklearn.model_selection import GridSearchCV
    search = GridSearchCV(SparseGPRegressor(), {"method": ["fitc", "vfe"], "m": [10, 20]})
    search.fit(X, y)

Its parameters are the keywords of ``sgpw.fit`` — every setting and option of ``sgpw
fit --help``, read from the command line's declaration when this module is imported (so
an option added to sgpw is a parameter here without a change) — plus ``threads``. Each
defaults to None: the command line's default, except that ``m=None`` is capped at the
number of training points (the command line refuses m > n).
"""

import inspect as _inspect

import numpy as _np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from . import fit as _fit
from . import keywords as _keywords

__all__ = ["PARAMS", "SparseGPRegressor"]

_KEYWORDS = _keywords()
#: The estimator's parameters: the keywords of ``sgpw.fit``, then ``threads``.
PARAMS = tuple(k["name"] for k in _KEYWORDS) + ("threads",)
_DEFAULT_M = int(next(k["default"] for k in _KEYWORDS if k["name"] == "m"))


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
    __init__.__signature__ = _inspect.Signature(
        [_inspect.Parameter("self", _inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [_inspect.Parameter(n, _inspect.Parameter.KEYWORD_ONLY, default=None) for n in PARAMS]
    )

    def fit(self, X, y):
        """Fit ``sgpw.fit(X, y, **params)``; returns self."""
        X, y = validate_data(self, X, y, y_numeric=True, ensure_min_samples=2)
        settings = {n: getattr(self, n) for n in PARAMS if n != "threads"}
        if settings["m"] is None:
            settings["m"] = min(_DEFAULT_M, X.shape[0])
        self.model_ = _fit(X, y, threads=self.threads, **settings)
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
