"""``pullback.image``: image resampling with ``jax.image``'s names and semantics (``resize``,
``scale_and_translate``, ``ResizeMethod``), on separable banded C kernels
(primitives/resize.py, docs/image.md)."""
from ._scale import resize, scale_and_translate  # noqa: F401
from ._weights import ResizeMethod  # noqa: F401

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
