"""``pullback.lax``: the primitive-level operations, with ``jax.lax``'s names and signatures.

lax is strict: operands of one op share a dtype (Python scalars are converted weakly to the
array operand's dtype) and shapes are not broadcast implicitly, except that 0-d operands of
element-wise ops broadcast.
"""
from ._collectives import *  # noqa: F401,F403
from ._conversion import *  # noqa: F401,F403
from ._dot import *  # noqa: F401,F403
from ._elementwise import *  # noqa: F401,F403
from ._full import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._movement import *  # noqa: F401,F403
from ._random_bits import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._reduce_window import *  # noqa: F401,F403
from ._sort import *  # noqa: F401,F403
from ._windows import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
from ._conditionals import *  # noqa: F401,F403
from ._loops import *  # noqa: F401,F403
from ._associative_scan import *  # noqa: F401,F403
from ._fft import *  # noqa: F401,F403
from . import linalg  # noqa: F401
from ._special import *  # noqa: F401,F403
from ._composites import *  # noqa: F401,F403,E402
from ._lane_collectives import *  # noqa: F401,F403,E402
from ._primitive_aliases import *  # noqa: F401,F403,E402
from ._custom_solvers import *  # noqa: F401,F403,E402
from ._rng_bit_generator import *  # noqa: F401,F403,E402
from ._grouped_products import *  # noqa: F401,F403,E402
from ._ragged_scaled import *  # noqa: F401,F403,E402
