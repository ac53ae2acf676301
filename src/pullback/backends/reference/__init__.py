"""The reference backend: every primitive's NumPy ``reference`` rule, the oracle of the tests.

Select it with ``pullback.config.update("backend", "reference")``; ``run`` applies one
primitive's reference to NumPy arrays directly.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...tracer.core import Primitive


def run(prim: Primitive, *arrays: np.ndarray, **params: Any) -> Any:
    return prim.rule("reference")(*arrays, **params)
