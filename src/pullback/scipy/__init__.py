"""``pullback.scipy``: SciPy's API on pullback arrays, as ``jax.scipy``.

The submodules (``linalg``, ``signal``, ``fft``, ``special``, ``stats``, ...) load on first
access, as ``import jax`` leaves ``jax.scipy`` unloaded: most programs never touch them, and
``import pullback`` should not pay for them (docs/debugging.md, "Import time").
"""
from __future__ import annotations

import importlib
from types import ModuleType

# every public submodule; add a new one here so ``pullback.scipy.<name>`` finds it
_SUBMODULES = ("cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
               "signal", "sparse", "spatial", "special", "stats")

__all__ = list(_SUBMODULES)


def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))
