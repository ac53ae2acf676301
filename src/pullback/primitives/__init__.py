"""Every primitive, one module per op family; importing this package fills the registry."""
from . import (collectives, conversion, dot, elementwise, ffi, gradient_control,  # noqa: F401
               indexing, movement, random_bits, reductions, sort, windows)
from . import cross_entropy, rope  # noqa: F401
from . import norms  # noqa: F401
from . import resize  # noqa: F401
from . import reduce_window  # noqa: F401
from . import linalg  # noqa: F401
from . import linalg_eig  # noqa: F401
from . import fft  # noqa: F401
from . import linalg_spectral  # noqa: F401
from . import attention  # noqa: F401  (after the families its rules bind)
from . import conv  # noqa: F401
from . import special  # noqa: F401
from ..tracer.core import Primitive

registry = Primitive.registry
from . import callback  # noqa: F401  (host callbacks: debug.print, pure_callback)
