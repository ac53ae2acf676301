"""``pullback.tree_util``: pytrees with ``jax.tree_util``'s API and rules."""
from .tracer.pytree import *  # noqa: F401,F403
from .tracer.pytree import __all__  # noqa: F401
