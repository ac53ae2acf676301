"""``pullback.scipy.spatial``: ``jax.scipy.spatial`` (its ``transform`` submodule)."""
from . import transform

__all__ = ["transform"]
