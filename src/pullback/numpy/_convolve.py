"""jnp.convolve and jnp.correlate: one-dimensional convolutions as lax.conv_general_dilated
(JAX's formulation: the shorter operand is the kernel, flipped for a convolution)."""
from __future__ import annotations

from typing import Any

from .. import lax
from ._promotion import aval_of, promote_dtypes, promote_dtypes_inexact
from ._shape import flip
from ._ufuncs import conjugate

ArrayLike = Any

__all__ = ["convolve", "correlate"]

_MODES = "mode must be one of ['full', 'same', 'valid']"


def _conv1d(x: Any, y: Any, mode: str, op: str, precision: Any,
            preferred_element_type: Any) -> Any:
    if aval_of(x).ndim != 1 or aval_of(y).ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:  # NumPy's convolutions give inexact results
        x, y = promote_dtypes_inexact(op, x, y)
    else:
        x, y = promote_dtypes(op, x, y)
    nx, ny = aval_of(x).shape[0], aval_of(y).shape[0]
    if nx == 0 or ny == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {aval_of(x).shape} and "
                         f"{aval_of(y).shape}.")
    reverse = False
    if op == "correlate":
        y = conjugate(y)
        if nx < ny:
            x, y, reverse = y, x, True
    else:
        if nx < ny:
            x, y = y, x
        y = flip(y)
    k = aval_of(y).shape[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(k // 2, k - k // 2 - 1)]
    elif mode == "full":
        padding = [(k - 1, k - 1)]
    else:
        raise ValueError(_MODES)
    out = lax.conv_general_dilated(lax.expand_dims(x, (0, 1)), lax.expand_dims(y, (0, 1)), (1,),
                                   padding, precision=precision,
                                   preferred_element_type=preferred_element_type)
    out = lax.squeeze(out, (0, 1))
    return lax.rev(out, (0,)) if reverse else out


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """Convolution of two one-dimensional arrays (``jnp.convolve``).

    Args:
      a, v: one-dimensional, non-empty arrays (promoted to a common inexact dtype unless
        ``preferred_element_type`` is given).
      mode: "full" (every overlap, length ``len(a) + len(v) - 1``), "same" (the length of the
        longer input, centred) or "valid" (full overlaps only).
      precision, preferred_element_type: as ``lax.conv_general_dilated``.

    Returns:
      The convolution.
    """
    return _conv1d(a, v, mode, "convolve", precision, preferred_element_type)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Cross-correlation of two one-dimensional arrays (``jnp.correlate``): ``v`` conjugated,
    not flipped; modes as ``convolve`` (default "valid")."""
    return _conv1d(a, v, mode, "correlate", precision, preferred_element_type)
