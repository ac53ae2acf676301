"""``pullback.scipy.cluster``: ``jax.scipy.cluster`` (its ``vq`` submodule)."""
from . import vq

__all__ = ["vq"]
