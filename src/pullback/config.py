"""Runtime switches with JAX's names: ``pullback.config.update(name, value)``, ``config.name``,
the ``JAX_*`` environment variables read at import, and the context managers of the top level
(``pullback.enable_x64()``, ``pullback.debug_nans(True)``, ...).

Options (JAX's first, then pullback's own):

- ``jax_enable_x64`` (False): 64-bit dtypes. Off, 64-bit inputs and requested dtypes become
  their 32-bit counterparts (with JAX's warning where a dtype is asked for explicitly) and
  Python values default to 32 bits; on, they are kept and Python values default to 64 bits.
- ``jax_debug_nans`` / ``jax_debug_infs`` (False): raise ``FloatingPointError`` at the first
  primitive whose floating-point result holds a NaN (an infinity).
- ``jax_disable_jit`` (False): ``jit`` runs its function op by op, eagerly.
- ``jax_default_matmul_precision`` (None): accepted with JAX's values; on the CPU every float32
  product is computed in float32 whatever the precision (as XLA's CPU backend does).
- ``jax_numpy_rank_promotion`` ("allow"): "warn" or "raise" when ``pullback.numpy`` broadcasts
  operands of different ranks.
- ``jax_numpy_dtype_promotion`` ("standard"): "strict" refuses implicit promotion between
  different dtypes (weakly typed Python scalars still adapt).
- ``jax_default_prng_impl`` ("threefry2x32", the only implementation) and
  ``jax_threefry_partitionable`` (True): how random bits are drawn, as in JAX.
- ``backend`` ("cpu", or "reference" to run every primitive's NumPy reference instead of its
  kernel: the test oracle).
- ``jit_flush_denormals`` (True: compiled programs treat subnormal floats as zero, as XLA does
  on CPU -- arithmetic on them is 10-100x slower, which a vanishing gradient hits in every step
  of a long scan; False keeps IEEE subnormals, as eager execution always does). Read when a
  program is compiled.

The context managers set an option for the ``with`` block and restore it after; like
``update``, they act on the whole process.
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator

_MATMUL_PRECISIONS = (None, "default", "high", "highest", "bfloat16", "tensorfloat32",
                      "float32", "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM",
                      "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16",
                      "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3",
                      "BF16_BF16_F32_X6", "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3",
                      "F32_F32_F32", "F64_F64_F64")
_BOOL = (False, True)

# name -> (default, allowed values)
_OPTIONS: dict[str, tuple[Any, tuple]] = {
    "jax_enable_x64": (False, _BOOL),
    "jax_debug_nans": (False, _BOOL),
    "jax_debug_infs": (False, _BOOL),
    "jax_disable_jit": (False, _BOOL),
    "jax_default_matmul_precision": (None, _MATMUL_PRECISIONS),
    "jax_numpy_rank_promotion": ("allow", ("allow", "warn", "raise")),
    "jax_numpy_dtype_promotion": ("standard", ("standard", "strict")),
    "jax_default_prng_impl": ("threefry2x32", ("threefry2x32",)),
    "jax_threefry_partitionable": (True, _BOOL),
    "backend": ("cpu", ("cpu", "reference")),
    "jit_flush_denormals": (True, _BOOL),
}


def _from_env(name: str, default: Any, allowed: tuple) -> Any:
    raw = os.environ.get(name.upper())
    if raw is None:
        return default
    if allowed is _BOOL:
        low = raw.strip().lower()
        if low in ("1", "true", "t", "yes", "y", "on"):
            return True
        if low in ("0", "false", "f", "no", "n", "off", ""):
            return False
        raise ValueError(f"config: environment variable {name.upper()} must be a boolean "
                         f"(1/0, true/false), got {raw!r}")
    if raw not in allowed:
        raise ValueError(f"config: environment variable {name.upper()} must be one of "
                         f"{[a for a in allowed if a is not None]}, got {raw!r}")
    return raw


class Config:
    """The switches (see the module docstring): read them as attributes, set them with
    ``update`` (or the top-level context managers)."""

    def __init__(self) -> None:
        self._watchers: list[Callable[[str, Any], None]] = []
        for name, (default, allowed) in _OPTIONS.items():
            value = _from_env(name, default, allowed) if name.startswith("jax_") else default
            object.__setattr__(self, name, value)

    def update(self, name: str, value: Any) -> None:
        """Set option ``name`` to ``value`` (as ``jax.config.update``)."""
        if name not in _OPTIONS:
            raise AttributeError(f"config: unrecognized option {name!r}; options: "
                                 f"{', '.join(_OPTIONS)}")
        allowed = _OPTIONS[name][1]
        if allowed is _BOOL and isinstance(value, int) and value in (0, 1):
            value = bool(value)
        if value not in allowed or (allowed is not _BOOL and isinstance(value, bool)):
            raise ValueError(f"config: option {name!r} takes one of {list(allowed)}, got "
                             f"{value!r}")
        object.__setattr__(self, name, value)
        for watch in self._watchers:
            watch(name, value)

    def watch(self, fn: Callable[[str, Any], None]) -> None:
        """Call ``fn(name, value)`` after every update (modules that cache what an option
        decides, e.g. the default dtypes under ``jax_enable_x64``)."""
        self._watchers.append(fn)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            self.update(name, value)

    @contextlib.contextmanager
    def scoped(self, name: str, value: Any) -> Iterator[None]:
        """Option ``name`` set to ``value`` inside the block, restored after."""
        old = getattr(self, name)
        self.update(name, value)
        try:
            yield
        finally:
            self.update(name, old)


config = Config()


def _manager(name: str, doc: str) -> Callable[..., Any]:
    def manager(new_val: Any = True) -> Any:
        return config.scoped(name, new_val)
    manager.__name__ = name[4:]
    manager.__doc__ = f"A context manager: ``{name}`` set to ``new_val`` inside the block. {doc}"
    return manager


enable_x64 = _manager("jax_enable_x64", "``with pullback.enable_x64():`` computes in 64 bits.")
debug_nans = _manager("jax_debug_nans", "Raise at the first NaN.")
debug_infs = _manager("jax_debug_infs", "Raise at the first infinity.")
disable_jit = _manager("jax_disable_jit", "``jit`` runs its function eagerly.")
default_matmul_precision = _manager("jax_default_matmul_precision",
                                    "No effect on CPU float32 products.")
numpy_rank_promotion = _manager("jax_numpy_rank_promotion",
                                "'allow', 'warn' or 'raise' on rank promotion.")
numpy_dtype_promotion = _manager("jax_numpy_dtype_promotion", "'standard' or 'strict'.")
default_prng_impl = _manager("jax_default_prng_impl", "Only 'threefry2x32'.")
threefry_partitionable = _manager("jax_threefry_partitionable", "How random bits are split.")
