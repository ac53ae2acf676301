"""``jax_debug_nans`` / ``jax_debug_infs``: the check of a primitive's results, and the error
that names the primitive and the user's line that created it.

``checking`` mirrors ``debug_nans or debug_infs`` (a config watcher keeps it), so that the
eager path pays one global read per primitive when both switches are off.

The error starts as JAX's (``invalid value (nan) encountered in <primitive>``) and ends with the
user's line: the innermost user frame where an eager primitive raises, replaced by the
equation's own line when the primitive ran as an equation of a Jaxpr (a scan body, a jit program
re-run op by op, a backward pass: ``ir.locate_error``).
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..config import config
from . import dtypes
from .ir import SourceInfo, user_source_info

checking = False


def _watch(name: str, value: Any) -> None:
    global checking
    if name in ("jax_debug_nans", "jax_debug_infs"):
        checking = bool(config.jax_debug_nans or config.jax_debug_infs)


config.watch(_watch)
_watch("jax_debug_nans", None)  # the JAX_DEBUG_NANS / JAX_DEBUG_INFS environment variables


def invalid_kind(values: Iterable[Any]) -> str | None:
    """"nan" (under debug_nans) or "inf" (under debug_infs) when one of ``values`` (ndarrays)
    of a floating-point or complex dtype holds such a value, else None."""
    nans, infs = config.jax_debug_nans, config.jax_debug_infs
    for v in values:
        dt = getattr(v, "dtype", None)
        if dt is None or not dtypes.is_inexact(dt) or not v.size:
            continue
        if nans and np.isnan(v).any():
            return "nan"
        if infs and np.isinf(v).any():
            return "inf"
    return None


def where(src: SourceInfo | None, doing: str = "created") -> str:
    return f" ({doing} at {src.file}:{src.line} ({src.function}))" if src is not None else ""


def error(kind: str, name: str, src: SourceInfo | None = None) -> FloatingPointError:
    """JAX's error for a ``kind`` ("nan"/"inf") result of primitive (or function) ``name``,
    located at ``src`` (default: the innermost user frame)."""
    base = f"invalid value ({kind}) encountered in {name}"
    e = FloatingPointError(base + where(src if src is not None else user_source_info()))
    e._pb_fp_base = base  # ir.locate_error rewrites the location with the equation's own line
    return e


def check(name: str, values: Iterable[Any]) -> None:
    """Raise JAX's FloatingPointError when ``values`` hold a NaN (an inf) under the switches."""
    kind = invalid_kind(values)
    if kind is not None:
        raise error(kind, name)
