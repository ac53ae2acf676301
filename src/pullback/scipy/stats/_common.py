"""Shared pieces of the ``pullback.scipy.stats`` distributions: promotion (JAX's
``promote_args_inexact``) and typed constants."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as pnp
from ...numpy._promotion import promote_args_inexact

__all__ = ["promote", "const", "np", "pnp"]


def promote(name: str, *args: Any) -> list[Any]:
    """The arguments in one inexact dtype, broadcast together (the first is an array)."""
    return list(promote_args_inexact(name, *args))


def const(like: Any, value: Any) -> Any:
    """``value`` as a 0-d array of ``like``'s dtype."""
    return pnp.asarray(value, dtype=like.dtype)
