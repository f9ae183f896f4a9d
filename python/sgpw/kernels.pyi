"""Type stubs of sgpw.kernels: the parts of the kernel expression syntax as objects."""

from typing import Any, Optional, Sequence, Union

_Num = Union[float, Sequence[float]]
_Dims = Sequence[Union[int, str]]
_Fix = Union[str, Sequence[str]]

PARTS: dict[str, dict[str, Any]]
BY_PART: dict[str, type[Part]]

def check(kernel: Union[Kernel, str], columns: Union[None, int, Sequence[str]] = None) -> str: ...

class Kernel:
    def __add__(self, other: Kernel) -> Sum: ...
    def __radd__(self, other: int) -> Kernel: ...
    def __mul__(self, other: Kernel) -> Product: ...
    def check(self, columns: Union[None, int, Sequence[str]] = None) -> str: ...

class Part(Kernel):
    part: str
    args: dict[str, Any]

class Sum(Kernel):
    terms: list[Kernel]
    def __init__(self, *terms: Kernel) -> None: ...

class Product(Kernel):
    factors: list[Kernel]
    def __init__(self, *factors: Kernel) -> None: ...

class SE(Part):
    def __init__(
        self, *, var: Optional[float] = None, ls: Optional[_Num] = None,
        dims: Optional[_Dims] = None, fix: Optional[_Fix] = None,
    ) -> None: ...

class Matern12(Part):
    def __init__(
        self, *, var: Optional[float] = None, ls: Optional[_Num] = None,
        dims: Optional[_Dims] = None, fix: Optional[_Fix] = None,
    ) -> None: ...

class Matern32(Part):
    def __init__(
        self, *, var: Optional[float] = None, ls: Optional[_Num] = None,
        dims: Optional[_Dims] = None, fix: Optional[_Fix] = None,
    ) -> None: ...

class Matern52(Part):
    def __init__(
        self, *, var: Optional[float] = None, ls: Optional[_Num] = None,
        dims: Optional[_Dims] = None, fix: Optional[_Fix] = None,
    ) -> None: ...


class RQ(Part):
    def __init__(
        self, *, var: Optional[float] = None, ls: Optional[_Num] = None,
        alpha: Optional[float] = None, dims: Optional[_Dims] = None, fix: Optional[_Fix] = None,
    ) -> None: ...

class Periodic(Part):
    def __init__(
        self, *, base: Union[None, str, type[Part], Part] = None, var: Optional[float] = None,
        ls: Optional[_Num] = None, period: Optional[_Num] = None, alpha: Optional[float] = None,
        dims: Optional[_Dims] = None, fix: Optional[_Fix] = None,
    ) -> None: ...

class Linear(Part):
    def __init__(
        self, *, var: Optional[_Num] = None, dims: Optional[_Dims] = None,
        fix: Optional[_Fix] = None,
    ) -> None: ...

class ChangePoints(Part):
    kernels: list[Kernel]
    def __init__(
        self, kernels: Sequence[Kernel], locations: Optional[_Num] = None,
        steepness: Optional[_Num] = None, dims: Optional[_Dims] = None,
        fix: Optional[_Fix] = None,
    ) -> None: ...

class Polynomial(Part):
    def __init__(
        self, *, degree: Optional[int] = None, var: Optional[_Num] = None,
        offset: Optional[float] = None, dims: Optional[_Dims] = None, fix: Optional[_Fix] = None,
    ) -> None: ...

class Constant(Part):
    def __init__(
        self, *, var: Optional[float] = None, dims: Optional[_Dims] = None,
        fix: Optional[_Fix] = None,
    ) -> None: ...

class White(Part):
    def __init__(
        self, *, var: Optional[float] = None, dims: Optional[_Dims] = None,
        fix: Optional[_Fix] = None,
    ) -> None: ...

class SpectralMixture(Part):
    def __init__(
        self, *, q: Optional[int] = None, weights: Optional[_Num] = None,
        means: Optional[_Num] = None, scales: Optional[_Num] = None,
        dims: Optional[_Dims] = None, fix: Optional[_Fix] = None,
    ) -> None: ...
