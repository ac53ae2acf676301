"""``pullback.scipy``: SciPy's API on pullback arrays, as ``jax.scipy`` (``linalg``, ``signal``, ``fft``,
``special``, ``stats``)."""
from . import linalg  # noqa: F401
from . import signal  # noqa: F401
from . import fft  # noqa: F401
from . import special  # noqa: F401
from . import stats  # noqa: F401
