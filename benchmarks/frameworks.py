"""The frameworks a benchmark compares: pullback and NumPy always; PyTorch and JAX when they
are importable (pullback itself never imports them). Each gets its inputs converted from one
NumPy array so every framework computes on the same data."""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import pullback
import pullback.numpy as pnp

from timing import Impl


def _optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return None


@dataclass
class Framework:
    """How to run code on one framework.

    Args:
      name: the column name in reports.
      array: NumPy array -> this framework's array.
      ns: the module namespace cases call into (``np`` / ``jnp`` / ``torch`` ...).
      sync: waits for a result to be computed.
      to_numpy: result -> NumPy array.
    """
    name: str
    array: Callable[[np.ndarray], Any]
    ns: Any
    sync: Callable[[Any], Any]
    to_numpy: Callable[[Any], np.ndarray]
    version: str

    def impl(self, stmt: str, **env: Any) -> Impl:
        """An Impl of ``stmt`` with ``ns`` (the framework module) and ``env`` in scope."""
        return Impl(stmt, {"ns": self.ns, **env}, self.sync, self.to_numpy)


def available(only: set[str] | None = None) -> list[Framework]:
    """pullback and numpy, then torch and jax if importable (and selected)."""
    fws = [
        Framework("pullback", pnp.asarray, pnp, lambda r: None, np.asarray,
                  getattr(pullback, "__version__", "dev")),
        Framework("numpy", lambda x: x, np, lambda r: None, np.asarray, np.__version__),
    ]
    torch = _optional("torch") if not only or "torch" in only else None
    if torch is not None:
        fws.append(Framework("torch", lambda x: torch.from_numpy(np.array(x)), torch,
                             lambda r: None, lambda r: r.numpy(), torch.__version__))
    jax = _optional("jax") if not only or "jax" in only else None
    if jax is not None:
        import jax.numpy as jnp
        fws.append(Framework("jax", jnp.asarray, jnp, lambda r: r.block_until_ready(),
                             np.asarray, jax.__version__))
    return [f for f in fws if not only or f.name in only or f.name == "pullback"]


def environment(fws: list[Framework]) -> dict[str, Any]:
    """What a reader needs to interpret the figures."""
    from pullback.backends.cpu import kernels
    blas = kernels.blas_info()
    if "library" in blas:
        blas["library"] = os.path.realpath(blas["library"])
    env = {"cpus": os.cpu_count(), "frameworks": {f.name: f.version for f in fws},
           "scipy_blas": blas}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        if var in os.environ:
            env[var] = os.environ[var]
    torch = _optional("torch") if any(f.name == "torch" for f in fws) else None
    if torch is not None:
        env["torch_threads"] = torch.get_num_threads()
    return env
