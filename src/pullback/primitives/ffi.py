"""``ffi_call``: a user's C kernel, registered by name (pullback.ffi), as a primitive.

The kernel is written against the kernel ABI (backends/cpu/csrc/pb_kernel.h, see
docs/kernel-abi.md); its parameter struct is packed by the caller (``params``). Eager execution
runs it through the generic kernel entry, ``jit`` as a native "kernel" step, like every kernel
of pullback's own.
"""
from __future__ import annotations

from typing import Any

from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, not_applicable
from .rules import NONLINEAR, Kernel


def _ffi_aval(*avals: ShapedArray, target_name: str, results: tuple, params: bytes
              ) -> list[ShapedArray]:
    if not isinstance(target_name, str) or not target_name:
        raise TypeError(f"ffi_call: argument 'target_name' must be a non-empty str, got "
                        f"{target_name!r}")
    if not isinstance(params, bytes):
        raise TypeError(f"ffi_call({target_name}): argument 'params' must be bytes, got "
                        f"{type(params).__name__}")
    if not results or not all(isinstance(r, ShapedArray) for r in results):
        raise TypeError(f"ffi_call({target_name}): argument 'result_shape_dtypes' must give at "
                        f"least one result shape and dtype")
    return list(results)


def _ffi_reference(*xs: Any, target_name: str, results: tuple, params: bytes) -> Any:
    raise NotImplementedError(f"ffi_call: the reference (NumPy) backend cannot run the C kernel "
                              f"'{target_name}'")


ffi_call_p = Primitive("ffi_call", multiple_results=True)
ffi_call_p.abstract_eval = _ffi_aval
ffi_call_p.cpu = Kernel(ffi_call_p, lambda target_name, **params: target_name,
                        lambda *avals, target_name, results, params: params)
ffi_call_p.reference = _ffi_reference
ffi_call_p.jvp = not_applicable("a user's C kernel has no derivative: wrap the call in "
                                "custom_jvp or custom_vjp")
ffi_call_p.transpose = NONLINEAR
ffi_call_p.batch = not_applicable("a user's C kernel has no batching rule: vmap over a Python "
                                  "loop of calls, or give the kernel a batch dimension")
