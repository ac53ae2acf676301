"""``pullback.scipy``: SciPy's API on pullback arrays, as ``jax.scipy`` (``linalg``, ``signal``)."""
from . import linalg  # noqa: F401
from . import signal  # noqa: F401
from . import fft  # noqa: F401
