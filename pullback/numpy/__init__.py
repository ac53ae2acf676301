"""``pullback.numpy``: NumPy's API on pullback arrays, as ``jax.numpy``."""
from ._creation import array, asarray, full, ones, zeros  # noqa: F401
from ._ufuncs import add, exp, multiply, negative, sin  # noqa: F401
from ._reductions import sum  # noqa: F401,A004
from ._shape import broadcast_to, reshape  # noqa: F401
from ._linalg import dot, matmul  # noqa: F401
from ..tracer.array import Array as ndarray  # noqa: F401
from ..tracer.dtypes import (bfloat16, bool_, complex64, complex128, float16, float32,  # noqa: F401
                             float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64)
from . import _operators  # noqa: F401  (installs Array/Tracer operators)
