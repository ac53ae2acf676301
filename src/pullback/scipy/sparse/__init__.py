"""``pullback.scipy.sparse``: as ``jax.scipy.sparse``, only its ``linalg`` submodule (the
iterative solvers, for operators given as matrices or functions)."""
from . import linalg  # noqa: F401

__all__ = ["linalg"]
