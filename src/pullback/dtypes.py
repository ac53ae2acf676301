"""``pullback.dtypes``, as ``jax.dtypes``: the dtype errors and special dtypes."""
from .tracer.dtypes import TypePromotionError, bfloat16, float0  # noqa: F401

__all__ = ["TypePromotionError", "bfloat16", "float0"]
