"""``pullback.scipy``: SciPy's API on pullback arrays, as ``jax.scipy``."""
from . import linalg  # noqa: F401
