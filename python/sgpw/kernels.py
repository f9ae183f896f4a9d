"""Kernels built from parts, as Python objects: the kernel expression syntax of
``--kernel`` (docs/kernels.md) written with operators.

    from sgpw.kernels import SE, ChangePoints, Linear, Periodic
    k = SE(dims=[0, 1]) + Linear()
    k = SE(ls=50, var=2500) + SE(ls=100) * Periodic(period=1, fix="period")
    str(k)   # 'se(ls=50, var=2500) + se(ls=100) * periodic(period=1, fix=period)'
    k = ChangePoints([SE(ls=1), SE(ls=5)], locations=[1990])   # GPflow's ChangePoints
    sgpw.fit(X, y, kernel=k)

``+`` is a sum and ``*`` a product; each part takes the keywords the expression syntax
gives it (``ls``, ``var``, ``period``, …, ``dims`` by index or column name, ``fix`` one
name or a list), read from the command line's declaration (``src/kernel/build.rs``).
``str(k)`` is the expression in its canonical form, checked by the command line's own
parser: a bad one raises ValueError with the caret the command line draws. A kernel is
accepted wherever ``kernel=`` is (``sgpw.fit``, the scikit-learn estimators), as is the
expression string itself. Values the data decide (a ``dims`` name, the length of a list
of lengthscales) are checked against the inputs by ``k.check(columns)`` or by the fit.
"""

import numbers as _numbers
import re as _re

from . import _sgpw

__all__ = [
    "ChangePoints",
    "Constant",
    "Kernel",
    "Linear",
    "Matern12",
    "Matern32",
    "Matern52",
    "Periodic",
    "Polynomial",
    "Product",
    "RQ",
    "SE",
    "SpectralMixture",
    "Sum",
    "White",
    "check",
]

#: The parts of the syntax by name, each with the arguments it takes besides ``dims``
#: and ``fix`` and the parameters ``fix=`` may name (from the extension).
PARTS = {p["name"]: p for p in _sgpw.kernel_parts()}

_NAME = _re.compile(r"[^\W\d]\w*\Z")


def check(kernel, columns=None):
    """The canonical expression of ``kernel`` (an object or an expression string), as
    ``--kernel`` reads it; with ``columns`` (the inputs' names, or their number) also
    built on those inputs, so an argument, value or ``dims`` the data make wrong is
    refused before a fit. A bad expression raises ValueError with the caret message."""
    if isinstance(columns, _numbers.Integral):
        columns = [str(i) for i in range(columns)]
    elif columns is not None:
        columns = [str(c) for c in columns]
    return _sgpw.check_kernel(_text(kernel), columns)


def _text(kernel):
    if isinstance(kernel, Kernel):
        return kernel._expression()
    if isinstance(kernel, str):
        return kernel
    raise TypeError(f"a kernel is an sgpw.kernels object or an expression string, not {kernel!r}")


def _kernel(k):
    if not isinstance(k, Kernel):
        raise TypeError(f"a sum or product takes sgpw.kernels objects, not {k!r}")


def _value(key, v):
    """One argument's value in the syntax: a number, a name (bare or quoted) or a list."""
    if isinstance(v, bool):
        raise TypeError(f"{key}={v!r}: give a number, a name or a list")
    if isinstance(v, _numbers.Integral):
        return str(int(v))
    if isinstance(v, _numbers.Real):
        return repr(float(v))  # the shortest text that reads back as the same double
    if isinstance(v, type) and issubclass(v, Part):
        return v.part  # base=RQ
    if isinstance(v, Part) and not v.args:
        return v.part  # base=RQ()
    if isinstance(v, str):
        if _NAME.match(v):
            return v
        if '"' in v and "'" in v:
            raise ValueError(f"{key}={v!r}: a name cannot hold both quote characters")
        return f"'{v}'" if '"' in v else f'"{v}"'
    if hasattr(v, "tolist"):  # a numpy array or scalar
        return _value(key, v.tolist())
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(key, x) for x in v) + "]"
    raise TypeError(f"{key}={v!r}: give a number, a name or a list")


class Kernel:
    """A kernel expression: a part, or parts combined with ``+`` and ``*``. ``str(k)``
    is its expression in the canonical form the command line writes."""

    def __add__(self, other):
        if not isinstance(other, Kernel):
            return NotImplemented
        return Sum(self, other)

    def __radd__(self, other):
        # sum(kernels) starts from 0
        if isinstance(other, _numbers.Number) and other == 0:
            return self
        return NotImplemented

    def __mul__(self, other):
        if not isinstance(other, Kernel):
            return NotImplemented
        return Product(self, other)

    def _expression(self):
        raise NotImplementedError

    def __str__(self):
        return check(self)

    def __eq__(self, other):
        return isinstance(other, Kernel) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def check(self, columns=None):
        """:func:`check` of this kernel: its canonical expression, built on ``columns``
        when given."""
        return check(self, columns)


class Part(Kernel):
    """One part of the syntax with its keyword arguments (None leaves one out)."""

    #: the part's name in the expression
    part = ""

    def __init__(self, **args):
        allowed = list(PARTS[self.part]["args"]) + ["dims", "fix"]
        for key in args:
            if key not in allowed:
                raise TypeError(
                    f"{type(self).__name__}() got an unexpected keyword argument '{key}'; "
                    f"{self.part} takes {', '.join(allowed)}"
                )
        self.args = {k: v for k, v in args.items() if v is not None}
        # the syntax and the part checked now, by the command line's parser
        str(self)

    def _expression(self):
        if not self.args:
            return self.part
        inner = ", ".join(f"{k}={_value(k, v)}" for k, v in self.args.items())
        return f"{self.part}({inner})"

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{type(self).__name__}({inner})"


class Sum(Kernel):
    """k1 + k2 + …: nested sums are flattened."""

    def __init__(self, *terms):
        self.terms = []
        for t in terms:
            _kernel(t)
            self.terms.extend(t.terms if isinstance(t, Sum) else [t])

    def _expression(self):
        return " + ".join(t._expression() for t in self.terms)

    def __repr__(self):
        return " + ".join(repr(t) for t in self.terms)


class Product(Kernel):
    """k1 * k2 * …: nested products are flattened; a sum inside keeps its parentheses."""

    def __init__(self, *factors):
        self.factors = []
        for f in factors:
            _kernel(f)
            self.factors.extend(f.factors if isinstance(f, Product) else [f])

    def _expression(self):
        return " * ".join(
            f"({f._expression()})" if isinstance(f, Sum) else f._expression() for f in self.factors
        )

    def __repr__(self):
        return " * ".join(f"({f!r})" if isinstance(f, Sum) else repr(f) for f in self.factors)


def _part(class_name, part, what):
    cls = type(class_name, (Part,), {"part": part, "__module__": __name__})
    args = ", ".join(PARTS[part]["args"])
    fixable = ", ".join(PARTS[part]["fixable"]) or "nothing"
    cls.__doc__ = (
        f"``{part}``: {what}. Keywords: {args}, dims (input indices or column names) and "
        f"fix (any of: {fixable})."
    )
    return cls


SE = _part("SE", "se", "squared exponential, one lengthscale per input (ls) and a variance (var)")
Matern12 = _part("Matern12", "matern12", "Matérn ν = 1/2")
Matern32 = _part("Matern32", "matern32", "Matérn ν = 3/2")
Matern52 = _part("Matern52", "matern52", "Matérn ν = 5/2")
RQ = _part("RQ", "rq", "rational quadratic with shape alpha")
Periodic = _part(
    "Periodic", "periodic", "a periodic version of a stationary base (base=se by default)"
)
Linear = _part("Linear", "linear", "linear, one variance per input")
Polynomial = _part("Polynomial", "polynomial", "(Σ_d var_d x_d x'_d + offset)^degree")
Constant = _part("Constant", "constant", "a constant variance")
White = _part("White", "white", "white noise on the diagonal")
SpectralMixture = _part(
    "SpectralMixture", "spectral_mixture", "Wilson & Adams's spectral mixture with q components"
)



class ChangePoints(Part):
    """``changepoints``: GPflow's ``ChangePoints(kernels, locations, steepness)`` —
    ``kernels[0]`` before ``locations[0]``, ``kernels[i]`` between ``locations[i-1]`` and
    ``locations[i]``, the last after the last location, each switched by a sigmoid of
    the given steepness (one value, or one per location). Locations are in the input's
    units (years, not standardized ones); ``steepness`` starts at 1/ℓ of the input when
    not given; ``dims`` names the one input the switches read (needed when there are
    several; the kernels name their own); ``fix`` any of: locations, steepness.

        ChangePoints([SE(ls=1), SE(ls=5)], locations=[1990], steepness=1)
        # 'changepoints(se(ls=1), se(ls=5), locations=[1990], steepness=1)'
    """

    part = "changepoints"

    def __init__(self, kernels, locations=None, steepness=None, dims=None, fix=None):
        if isinstance(kernels, Kernel) or not hasattr(kernels, "__iter__"):
            raise TypeError(
                f"ChangePoints takes a list of kernels (one more than the locations), "
                f"not {kernels!r}"
            )
        self.kernels = list(kernels)
        for k in self.kernels:
            _kernel(k)
        if len(self.kernels) < 2:
            raise ValueError(
                f"ChangePoints takes two or more kernels, not {len(self.kernels)}"
            )
        super().__init__(locations=locations, steepness=steepness, dims=dims, fix=fix)

    def _expression(self):
        inner = [k._expression() for k in self.kernels]
        inner += [f"{k}={_value(k, v)}" for k, v in self.args.items()]
        return f"{self.part}({', '.join(inner)})"

    def __repr__(self):
        inner = [f"[{', '.join(repr(k) for k in self.kernels)}]"]
        inner += [f"{k}={v!r}" for k, v in self.args.items()]
        return f"ChangePoints({', '.join(inner)})"


#: the classes by part name
BY_PART = {
    c.part: c
    for c in (
        SE, Matern12, Matern32, Matern52, RQ, Periodic, Linear, Polynomial, Constant, White,
        SpectralMixture, ChangePoints,
    )
}
