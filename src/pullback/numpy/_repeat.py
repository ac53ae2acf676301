"""``repeat``: each element repeated a number of times (a broadcast view for one count; for
per-element counts, a gather at the positions a search of their running sum gives)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..tracer import dtypes
from ..tracer.errors import ConcretizationTypeError
from ..tracer.shapes import canonicalize_axis, index_arg
from ._indexing import take
from ._promotion import aval_of, promote_args
from ._reductions import cumsum
from ._shape import _arr, broadcast_to, expand_dims, ravel, reshape
from ._sorting import searchsorted

ArrayLike = Any


def repeat(a: ArrayLike, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Any:
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None).

    ``repeats`` may be an int or a concrete array of per-element counts; a traced array of
    counts needs ``total_repeat_length`` (the static output length), as in JAX.
    """
    a, av = _arr("repeat", a)
    if axis is None:
        a, av, axis = ravel(a), aval_of(ravel(a)), 0
    ax = canonicalize_axis(axis, av.ndim, "repeat")
    n = av.shape[ax]
    if not hasattr(repeats, "dtype") and not hasattr(repeats, "__iter__"):
        repeats = index_arg(repeats, "repeat", "repeats")  # floats are rejected, as in JAX
    if isinstance(repeats, (int, np.integer)):
        r = int(repeats)
        if r < 0:
            raise ValueError("repeat: 'repeats' may not be negative")
        x = expand_dims(a, ax + 1)
        shape = list(aval_of(x).shape)
        shape[ax + 1] = r
        x = broadcast_to(x, tuple(shape))
        out = list(av.shape)
        out[ax] = n * r
        return reshape(x, tuple(out))
    reps = promote_args("repeat", repeats)[0]
    if not dtypes.is_integer(aval_of(reps).dtype):
        raise TypeError(f"repeat: argument 'repeats' must be integers, got dtype "
                        f"{aval_of(reps).dtype}")
    if aval_of(reps).ndim == 0:
        reps = broadcast_to(reps, (n,))
    if total_repeat_length is None:
        conc = getattr(reps, "to_concrete_value", lambda: None)()
        if conc is None:
            raise core_concretization("repeat", reps)
        total_repeat_length = int(np.sum(conc))
    # output position j takes input index searchsorted(cumsum(reps), j, 'right')
    ends = cumsum(reps)
    pos = lax.iota(dtypes.int32, total_repeat_length)
    idx = searchsorted(ends, pos, side="right")
    return take(a, idx, axis=ax, mode="clip")


def core_concretization(name: str, x: Any) -> Exception:
    return ConcretizationTypeError(
        f"{name}: the output size depends on the traced value {x!r}; pass "
        "total_repeat_length (a static int) under jit")
