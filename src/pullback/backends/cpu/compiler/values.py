"""What the compiler works on: buffers, strided views of them, and schedule steps.

A ``Buffer`` is storage the program addresses: the arena (planned later), a program input, a
program output or a constant held by the program. A ``View`` is an operand: a strided window on
a buffer (the same shape/strides/itemsize attributes as an ndarray, so the primitives' ``cpu``
rules can run on it symbolically: see ``lower.SymbolicKernels``). A ``Step`` is one thunk of the
schedule before fusion and memory planning.
"""
from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ....tracer.strides import c_strides

_ids = itertools.count()


class Buffer:
    """Storage of ``nbytes``: kind is "arena", "input", "output", "const" or "slice".

    A "slice" is the part of ``parent`` a loop iteration sees: it starts ``base`` bytes into
    the parent plus, per enclosing loop ``(level, stride)`` in ``loops``, the loop's iteration
    number times ``stride`` (a scan's ``xs[i]`` and ``ys[i]``). It owns no memory."""

    __slots__ = ("id", "nbytes", "kind", "index", "offset", "producer", "value", "align",
                 "parent", "base", "loops")

    def __init__(self, nbytes: int, kind: str = "arena", index: int = 0, value: Any = None):
        self.id = next(_ids)
        self.nbytes = nbytes
        self.kind = kind
        self.index = index
        self.offset: int | None = None  # arena offset, set by the memory plan
        self.producer: "Step | None" = None
        self.value = value              # a constant's ndarray
        self.align = 1                  # an input's data pointer must be a multiple of this
        self.parent: "Buffer | None" = None
        self.base = 0
        self.loops: tuple = ()

    @classmethod
    def slice_of(cls, parent: "Buffer", base: int, nbytes: int, level: int,
                 stride: int) -> "Buffer":
        """The bytes of ``parent`` from ``base`` that iteration i of loop ``level`` sees at
        ``base + i * stride``."""
        b = cls(nbytes, "slice")
        b.parent, b.base, b.loops = parent, int(base), ((int(level), int(stride)),)
        return b

    def root(self) -> tuple["Buffer", int, tuple]:
        """The buffer owning the memory, the byte offset into it and every loop term."""
        b, off, loops = self, 0, ()
        while b.kind == "slice":
            off, loops, b = off + b.base, loops + b.loops, b.parent
        return b, off, loops

    def __repr__(self) -> str:
        return f"Buffer({self.kind}{self.index if self.kind != 'arena' else ''}#{self.id})"


class View:
    """A strided view of a buffer: byte offset, shape, byte strides, dtype."""

    __slots__ = ("buf", "offset", "shape", "strides", "dtype")

    def __init__(self, buf: Buffer, offset: int, shape: tuple, strides: tuple, dtype: np.dtype):
        self.buf = buf
        self.offset = int(offset)
        self.shape = tuple(int(d) for d in shape)
        self.strides = tuple(int(s) for s in strides)
        self.dtype = np.dtype(dtype)

    @classmethod
    def fresh(cls, shape: tuple, dtype: np.dtype, kind: str = "arena", index: int = 0) -> "View":
        """A new C-contiguous buffer of ``shape`` and its whole view."""
        dtype = np.dtype(dtype)
        buf = Buffer(max(1, math.prod(shape)) * dtype.itemsize, kind, index)
        return cls(buf, 0, shape, c_strides(shape, dtype.itemsize), dtype)

    @classmethod
    def of_const(cls, value: np.ndarray) -> "View":
        buf = Buffer(value.nbytes, "const", value=value)
        return cls(buf, 0, value.shape, value.strides, value.dtype)

    itemsize = property(lambda self: self.dtype.itemsize)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def is_whole(self) -> bool:
        """Covers its buffer exactly, C-contiguously, from offset 0."""
        return (self.offset == 0 and self.nbytes == self.buf.nbytes and
                (self.size <= 1 or self.strides == c_strides(self.shape, self.itemsize)))

    def same_layout(self, other: "View") -> bool:
        return (self.buf is other.buf and self.offset == other.offset and
                self.shape == other.shape and (self.size <= 1 or self.strides == other.strides))

    def __array__(self, *a, **k):
        # a cpu rule computing on its operands' data in Python: it cannot be recorded
        raise Unsupported("the rule reads a compile-time view's data")

    def __repr__(self) -> str:
        return f"View({self.buf}+{self.offset} {self.dtype.name}{list(self.shape)} {self.strides})"


class Unsupported(Exception):
    """The recorder cannot express this kernel call: the equation becomes a callback step
    (marked in the schedule text and counted in ``backends.compiled_fallbacks``)."""


class Step:
    """One thunk before planning.

    kind: one of the step kinds docs/compiler.md lists (12): "ewise" (one element-wise loop:
    ``loop`` = (loop kind, a, b, params)), "region" (fused ewise steps), "dot", "reduce",
    "dcopy", "scan", "while", "cond", "par", "pipe", "py" (a user Python callback) and "kernel"
    (a registered C kernel: ``steps.KernelStep``, a typed step with its own fields). Each kind
    is emitted for the C executor by its typed ``steps.Spec`` (fields read by name in C);
    ``ins``/``outs`` are Views; ``info`` holds the kind's parameters until planning (not yet
    typed per kind); ``label`` names it in the schedule text.
    """

    __slots__ = ("kind", "ins", "outs", "info", "label", "index")

    def __init__(self, kind: str, ins: list, outs: list, info: dict, label: str):
        self.kind = kind
        self.ins = list(ins)
        self.outs = list(outs)
        self.info = info
        self.label = label
        self.index = -1

    def __repr__(self) -> str:
        return f"Step({self.kind} {self.label})"
