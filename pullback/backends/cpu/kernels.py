"""The kernel namespace handed to every primitive's ``cpu`` rule: the C extension's entry
points (element-wise, reductions, sorting, movement, gather/scatter, random, conversion, matmul: see csrc/)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

try:
    from ._cpu import *  # noqa: F401,F403
    from ._cpu import EWISE_OPS, _set_bf16_typenum  # noqa: F401
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "pullback's C extension is not built. Install the package (pip install .) or, for "
        "development, the editable install described in the README; do not import pullback "
        "from an unbuilt source tree.") from e

_set_bf16_typenum(np.dtype(ml_dtypes.bfloat16).num)
