"""``pullback.scipy``: the ``jax.scipy`` functions pullback has (``signal``)."""
from . import signal  # noqa: F401
