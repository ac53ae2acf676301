"""Window functions: bartlett, blackman, hamming, hanning, kaiser (JAX's formulas, in the
default float dtype; ``M`` is static)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import lax
from ..tracer import dtypes
from ._bessel import i0
from ._ufuncs import abs as abs_, cos, sqrt

ArrayLike = Any


def _setup(name: str, M: Any) -> tuple[int, Any, np.dtype]:
    try:
        m = operator.index(M)
    except TypeError:
        raise TypeError(f"{name}: argument 'M' must be a static integer, got {M!r}") from None
    dt = dtypes.canonical(np.dtype(np.float64))  # float32 unless x64 is on
    return m, (lax.iota(dt, m) if m > 1 else None), dt


def _ones(m: int, dt: np.dtype) -> Any:
    return lax.full((max(m, 0),), 1, dt)


def bartlett(M: int) -> Any:
    """The triangular Bartlett window of ``M`` points (empty for M < 1)."""
    m, n, dt = _setup("bartlett", M)
    if m <= 1:
        return _ones(m, dt)
    return 1 - abs_(2 * n + 1 - m) / (m - 1)


def blackman(M: int) -> Any:
    """The Blackman window of ``M`` points."""
    m, n, dt = _setup("blackman", M)
    if m <= 1:
        return _ones(m, dt)
    return 0.42 - 0.5 * cos(2 * np.pi * n / (m - 1)) + 0.08 * cos(4 * np.pi * n / (m - 1))


def hamming(M: int) -> Any:
    """The Hamming window of ``M`` points."""
    m, n, dt = _setup("hamming", M)
    if m <= 1:
        return _ones(m, dt)
    return 0.54 - 0.46 * cos(2 * np.pi * n / (m - 1))


def hanning(M: int) -> Any:
    """The Hann window of ``M`` points."""
    m, n, dt = _setup("hanning", M)
    if m <= 1:
        return _ones(m, dt)
    return 0.5 * (1 - cos(2 * np.pi * n / (m - 1)))


def kaiser(M: int, beta: ArrayLike) -> Any:
    """The Kaiser window of ``M`` points with shape parameter ``beta`` (differentiable in
    ``beta``)."""
    m, n, dt = _setup("kaiser", M)
    if m <= 1:
        return _ones(m, dt)
    alpha = 0.5 * (m - 1)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)

