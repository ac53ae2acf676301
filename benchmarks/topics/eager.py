"""Eager dispatch: the fixed cost of one operation on a tiny array."""
from __future__ import annotations

import numpy as np

from case import Case, Target


def cases(fws) -> list[Case]:
    x = np.ones(1, np.float32)
    impls = {f.name: f.impl("x + y", x=f.array(x), y=f.array(x)) for f in fws}
    return [Case("eager", "x + y, 1-element float32", impls, "us",
                 targets=(Target("torch", 1.0),))]
