"""Type stubs of the sgpw package."""

from os import PathLike
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import kernels as kernels
from ._sgpw import NumericalError as NumericalError
from ._sgpw import __version__ as __version__

_Path = Union[str, PathLike[str]]
_F64 = npt.NDArray[np.float64]

def fit(
    X: npt.ArrayLike,
    y: npt.ArrayLike,
    method: Optional[str] = None,
    m: Optional[int] = None,
    seed: Optional[int] = None,
    iterations: Optional[int] = None,
    standardize: Optional[bool] = None,
    X_test: Optional[npt.ArrayLike] = None,
    y_test: Optional[npt.ArrayLike] = None,
    *,
    threads: Optional[int] = None,
    callback: Optional[Callable[..., Any]] = None,
    Z: Optional[npt.ArrayLike] = None,
    **options: Any,
) -> Model: ...
def load(path: _Path, X: Optional[npt.ArrayLike] = None, y: Optional[npt.ArrayLike] = None) -> Model: ...
def methods() -> list[dict[str, Any]]: ...
def keywords() -> list[dict[str, Any]]: ...

class Model:
    @property
    def method(self) -> str: ...
    @property
    def inputs(self) -> Optional[list[str]]: ...
    @property
    def fixed(self) -> list[str]: ...
    @property
    def dim(self) -> int: ...
    @property
    def nlml(self) -> Optional[float]: ...
    @property
    def objective(self) -> str: ...
    @property
    def trace(self) -> Optional[_F64]: ...
    @property
    def info(self) -> dict[str, Any]: ...
    @property
    def params(self) -> dict[str, Any]: ...
    @property
    def likelihood(self) -> str: ...
    @property
    def labels(self) -> Optional[Tuple[float, float]]: ...
    @property
    def classes(self) -> Optional[Tuple[str, str]]: ...
    def predict_y(
        self,
        X: npt.ArrayLike,
        exposure: Optional[Union[str, npt.ArrayLike]] = None,
        threads: Optional[int] = None,
    ) -> Tuple[_F64, _F64]: ...
    def predict_interval(
        self, X: npt.ArrayLike, level: float = 0.95, threads: Optional[int] = None
    ) -> Tuple[_F64, _F64]: ...
    def predict_components(
        self, X: npt.ArrayLike, threads: Optional[int] = None
    ) -> Union[Dict[str, Tuple[_F64, _F64]], Any]: ...
    def __getattr__(self, name: str) -> Any: ...
    def predict(
        self,
        X: npt.ArrayLike,
        noisy: bool = False,
        full_cov: bool = False,
        threads: Optional[int] = None,
    ) -> Tuple[_F64, _F64]: ...
    def sample(
        self,
        X: npt.ArrayLike,
        n: int = 1,
        seed: Optional[int] = None,
        threads: Optional[int] = None,
    ) -> _F64: ...
    def log_density(
        self, X: npt.ArrayLike, y: npt.ArrayLike, threads: Optional[int] = None
    ) -> _F64: ...
    def save(self, path: _Path) -> None: ...
    def to_toml(self) -> str: ...

class Session:
    path: str
    def __init__(self, path: _Path) -> None: ...
    def run(
        self,
        jobs: int = 0,
        force: bool = False,
        callback: Optional[Callable[[dict[str, Any]], Any]] = None,
    ) -> dict[str, int]: ...
    def report(
        self, format: str = "markdown", merge_generations: bool = False, mse: bool = False
    ) -> str: ...
    def results(self) -> Any: ...
