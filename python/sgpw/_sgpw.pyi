"""Type stubs of the extension module sgpw._sgpw (the Python layer is sgpw/__init__.py)."""

from os import PathLike
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Path = Union[str, PathLike[str]]
_F64 = npt.NDArray[np.float64]

class NumericalError(ValueError):
    """A factorisation failed even with the largest jitter, or a value became NaN."""

class Model:
    @property
    def method(self) -> str: ...
    @property
    def dim(self) -> int: ...
    @property
    def inputs(self) -> Optional[list[str]]: ...
    @property
    def stores_posterior(self) -> bool: ...
    @property
    def objective_name(self) -> str: ...
    @property
    def fit_info(self) -> Optional[dict[str, Any]]: ...
    def tables(self) -> dict[str, Any]: ...
    def predict(self, x: _F64, threads: Optional[int] = None) -> Tuple[_F64, _F64, _F64]: ...
    def to_toml(self) -> str: ...
    def save(self, path: _Path) -> None: ...

def fit(
    x: _F64,
    y: _F64,
    x_test: Optional[_F64],
    y_test: Optional[_F64],
    feature_names: Optional[Sequence[str]],
    options: Sequence[Tuple[str, Any]],
    threads: Optional[int] = None,
    callback: Optional[Callable[[int, float], Any]] = None,
) -> Tuple[Model, dict[str, Any]]: ...
def load(path: _Path, x: Optional[_F64] = None, y: Optional[_F64] = None) -> Model: ...
def from_toml(text: str, x: Optional[_F64] = None, y: Optional[_F64] = None) -> Model: ...
def methods() -> list[dict[str, Any]]: ...
def keywords() -> list[dict[str, Any]]: ...
def session_run(
    path: _Path,
    jobs: int = 0,
    force: bool = False,
    callback: Optional[Callable[[dict[str, Any]], Any]] = None,
) -> dict[str, int]: ...
def session_report(
    path: _Path, format: str = "markdown", merge_generations: bool = False, mse: bool = False
) -> str: ...
