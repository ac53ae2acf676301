"""Custom C kernels, as ``jax.ffi`` offers them: a kernel written against pullback's kernel ABI
(``include_dir()/pb_kernel.h``, docs/kernel-abi.md) is registered by name and called like any
primitive, eagerly and under ``jit`` (where it runs as a native step, GIL released).

Example::

    lib = ctypes.CDLL("./libscale.so")               # built with -I pullback.ffi.include_dir()
    pullback.ffi.register_ffi_target("scale", lib.scale, nin=1, nout=1, params_size=4)
    y, = pullback.ffi.ffi_call("scale", [jax.ShapeDtypeStruct(x.shape, x.dtype)])(
        x, params=struct.pack("=f", 2.0))
"""
from __future__ import annotations

import ctypes
import os
from typing import Any, Callable, Sequence

import numpy as np

from .backends.cpu import kernels as _kernels
from .primitives.ffi import ffi_call_p
from .tracer.avals import ShapedArray

__all__ = ["include_dir", "register_ffi_target", "ffi_call"]


def include_dir() -> str:
    """The directory holding ``pb_kernel.h`` (compile custom kernels with ``-I`` it)."""
    return os.path.join(os.path.dirname(os.path.abspath(_kernels.__file__)), "csrc")


def register_ffi_target(name: str, target: Any, *, nin: int = -1, nout: int = -1,
                        params_size: int = 0) -> None:
    """Registers a C kernel under ``name``.

    Args:
      name: the name ``ffi_call`` refers to it by (unique among all kernels).
      target: the kernel, a ``pb_kernel_fn``: a ctypes function (``ctypes.CDLL(...).fn``), a
        PyCapsule holding its pointer, or its address as an int. A ctypes target keeps its
        library loaded.
      nin, nout: its numbers of inputs and outputs (-1: any).
      params_size: the exact size in bytes of its parameter struct.

    Raises:
      ValueError: a kernel of that name exists, or the arguments are out of range.
    """
    owner = target
    if isinstance(target, ctypes._CFuncPtr):
        target = ctypes.cast(target, ctypes.c_void_p).value
    _kernels.register_kernel(name, target, nin, nout, params_size, owner)


def ffi_call(target_name: str, result_shape_dtypes: Any) -> Callable[..., Any]:
    """A function calling the kernel registered as ``target_name``.

    Args:
      target_name: a name given to ``register_ffi_target``.
      result_shape_dtypes: an object with ``shape`` and ``dtype`` (``ShapeDtypeStruct``), or a
        sequence of them: the kernel's outputs (fresh, C-contiguous).

    Returns:
      ``f(*args, params=b"")`` giving the outputs: one array, or a list when
      ``result_shape_dtypes`` is a sequence. ``params`` is the kernel's packed parameter struct.
    """
    single = hasattr(result_shape_dtypes, "shape")
    specs: Sequence[Any] = [result_shape_dtypes] if single else list(result_shape_dtypes)
    results = tuple(ShapedArray(tuple(s.shape), np.dtype(s.dtype)) for s in specs)

    def call(*args: Any, params: bytes = b"") -> Any:
        outs = ffi_call_p.bind(*args, target_name=target_name, results=results,
                               params=bytes(params))
        return outs[0] if single else outs
    return call
