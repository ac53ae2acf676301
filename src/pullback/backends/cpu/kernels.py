"""The kernel namespace handed to every primitive's ``cpu`` rule: the C extension's entry
points (element-wise, reductions, sorting, movement, gather/scatter, random, conversion, matmul: see csrc/)."""
from __future__ import annotations

import os

import ml_dtypes
import numpy as np

# Idle OpenMP workers sleep instead of spinning (unless the user chose otherwise): on a small
# machine, spinning workers steal the core that the Python thread, BLAS or another library's
# thread pool needs next (measured on 2 cores: 1M-element add 1.6 GB/s spinning, 6 GB/s not).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

try:
    from ._cpu import *  # noqa: F401,F403
    from ._cpu import EWISE_OPS, _set_bf16_typenum  # noqa: F401
except ImportError as e:  # pragma: no cover - only without a build
    raise ImportError(
        "pullback's C extension is not built. Install the package (pip install .) or, for "
        "development, the editable install described in the README; do not import pullback "
        "from an unbuilt source tree.") from e

_set_bf16_typenum(np.dtype(ml_dtypes.bfloat16).num)
