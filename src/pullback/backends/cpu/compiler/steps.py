"""Step kinds defined as one typed class each: their fields and their own ``emit`` (the tuple
the C executor's step table parses: csrc/program.h ``pb_step_kind``).

The older kinds ("ewise", "region", "dot", "reduce", loops, ...) are still plain ``Step``s with
an ``info`` dict, emitted by ``program._emit``.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .values import Step, View


class KernelStep(Step):
    """A registered C kernel (csrc/pb_kernel.h) run natively on fixed operands, GIL released:
    the "kernel" step (csrc/kernel_step.c).

    Attributes:
      kernel: the kernel's handle (``kernels.kernel(name)``).
      params: its packed parameter struct.
    """

    __slots__ = ("kernel", "params")

    def __init__(self, kernel: Any, ins: Sequence[View], outs: Sequence[View], params: bytes,
                 label: str):
        super().__init__("kernel", ins, outs, {}, label)
        self.kernel = kernel
        self.params = bytes(params)

    def emit(self, ref: Callable[[View], tuple]) -> tuple:
        """``("kernel", handle, ins, outs, params)``, operands as (ref, dtype, shape, strides)."""
        def ops(vs: Sequence[View]) -> tuple:
            return tuple((ref(v), v.dtype, v.shape, v.strides) for v in vs)
        return ("kernel", self.kernel, ops(self.ins), ops(self.outs), self.params)

    def work(self) -> int:
        """Elements touched: what decides whether a program releases the GIL."""
        return sum(v.size for v in self.ins) + sum(v.size for v in self.outs)
