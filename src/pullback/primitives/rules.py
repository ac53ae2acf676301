"""The vocabulary every primitive's rules are written in.

Rule slots (see ``tracer.core.Primitive``) are filled in each primitive's own module; a slot
left for later work names the issue that fills it, so the registry test can tell "pending"
from "forgotten". The values rules exchange live here too:

- ``Zero(aval)``: a tangent or cotangent known to be zero (never materialized);
- ``UndefPrimal(aval)``: in a transpose rule, an operand the rule solves for;
- ``not_mapped``: in a batching rule, an operand without a batch dimension.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import get_aval, not_applicable
from .building_blocks import add_p, broadcast_in_dim_p, mul_p, transpose_p

NONLINEAR = not_applicable("not linear in its operands, so it has no transpose")
INTEGER_OUTPUT = not_applicable("integer-valued output: not differentiable")

not_mapped = None


class Zero:
    """A tangent (or cotangent) known to be zero, carrying only its abstract value."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"

    @staticmethod
    def from_primal(x: Any) -> "Zero":
        return Zero(tangent_aval(get_aval(x)))


class UndefPrimal:
    """An operand of a linear equation that its transpose rule solves for."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefPrimal({self.aval.str_short()})"


def is_undefined(x: Any) -> bool:
    return type(x) is UndefPrimal


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of inexact values share their dtype; integers and bools get float0."""
    if dtypes.is_inexact(aval.dtype):
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type)
    return ShapedArray(aval.shape, dtypes.float0, False)


def zeros_like_aval(aval: ShapedArray) -> Any:
    """A materialized zero of ``aval`` (a broadcast of one scalar)."""
    if aval.dtype == dtypes.float0:
        return Array(np.zeros(aval.shape, dtypes.float0))
    scalar = Array(np.zeros((), aval.dtype), aval.weak_type)
    if not aval.shape:
        return scalar
    return broadcast_in_dim_p.bind(scalar, shape=aval.shape, broadcast_dimensions=())


def instantiate(t: Any) -> Any:
    """``t``, or a materialized zero if it is a symbolic ``Zero``."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(a: Any, b: Any) -> Any:
    """Sum of two tangents, keeping symbolic zeros symbolic."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return add_p.bind(a, b)


# ---- shared rule builders (one way to write a rule each family reuses) ----

def batch_size(vals: Any, dims: Any) -> int:
    """The mapped size: the extent of any operand's batch dimension."""
    for v, d in zip(vals, dims):
        if d is not None:
            return get_aval(v).shape[d]
    raise ValueError("batching rule called with no batched operand")


def move_bdim(x: Any, src: int | None, dst: int, size: int) -> Any:
    """``x`` with its batch dimension ``src`` moved to ``dst`` (a view); an unbatched ``x``
    (``src`` None) is broadcast (zero-copy) to have one of ``size`` at ``dst``."""
    aval = get_aval(x)
    if src is None:
        shape = aval.shape[:dst] + (size,) + aval.shape[dst:]
        dims = tuple(i for i in range(len(shape)) if i != dst)
        return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)
    if src == dst:
        return x
    perm = [i for i in range(aval.ndim) if i != src]
    perm.insert(dst, src)
    return transpose_p.bind(x, permutation=tuple(perm))


def broadcast_batcher(prim: Any) -> Any:
    """The batching rule of an element-wise primitive (operands of one shape, 0-d operands
    broadcast): batched operands get their batch dim in front; unbatched ones of rank > 0 are
    broadcast (zero-copy) to the batched shape; unbatched scalars stay scalars."""
    def rule(vals: Any, dims: Any, **params: Any) -> Any:
        size = batch_size(vals, dims)
        logical_nd = max(get_aval(v).ndim - (d is not None) for v, d in zip(vals, dims))
        out = []
        for v, d in zip(vals, dims):
            nd = get_aval(v).ndim - (d is not None)
            if d is None and nd == 0:
                out.append(v)
                continue
            v = move_bdim(v, d, 0, size)
            if nd < logical_nd:  # a batched scalar among batched arrays: broadcast its lanes
                full = (size,) + _logical_shape(vals, dims)
                v = broadcast_in_dim_p.bind(v, shape=full, broadcast_dimensions=(0,))
            out.append(v)
        res = prim.bind(*out, **params)
        if prim.multiple_results:
            return res, [0] * len(res)
        return res, 0
    return rule


def _logical_shape(vals: Any, dims: Any) -> tuple[int, ...]:
    best: tuple[int, ...] = ()
    for v, d in zip(vals, dims):
        s = get_aval(v).shape
        if d is not None:
            s = s[:d] + s[d + 1:]
        if len(s) > len(best):
            best = s
    return best


def elementwise_jvp(prim: Any, *partials: Any) -> Any:
    """The jvp rule of an element-wise primitive from its partial derivatives:
    ``partials[i](*primals, out) -> d out / d operand i`` (None: not differentiable in that
    operand). The tangent is the sum of ``partial_i * tangent_i`` over non-zero tangents."""
    def rule(primals: Any, tangents: Any, **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        acc: Any = Zero.from_primal(out)
        for i, (t, d) in enumerate(zip(tangents, partials)):
            if type(t) is Zero or d is None:
                continue
            acc = add_tangents(acc, mul_p.bind(t, d(*primals, out)))
        return out, acc
    return rule


def linear_jvp(prim: Any, linear: tuple[int, ...] | None = None) -> Any:
    """The jvp rule of a primitive linear in all its operands, or in the operands at positions
    ``linear`` (the others, e.g. integer indices, are passed through as primals and their
    tangents ignored): apply it to the tangents (zeros instantiated only when some tangent of
    a linear operand is non-zero)."""
    def rule(primals: Any, tangents: Any, **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        lin = range(len(primals)) if linear is None else linear
        if all(type(tangents[i]) is Zero for i in lin):
            zero = ([Zero.from_primal(o) for o in out] if prim.multiple_results
                    else Zero.from_primal(out))
            return out, zero
        args = [instantiate(t) if linear is None or i in linear else p
                for i, (p, t) in enumerate(zip(primals, tangents))]
        return out, prim.bind(*args, **params)
    return rule


def linear_transpose(fn: Any) -> Any:
    """A transpose rule from ``fn(cotangent, *operands, **params)`` that may assume a
    materialized cotangent: a symbolic ``Zero`` cotangent gives ``Zero`` for every undefined
    operand (None for known ones) without calling ``fn``."""
    def rule(ct: Any, *operands: Any, **params: Any) -> Any:
        if type(ct) is Zero:
            return [Zero(tangent_aval(x.aval)) if is_undefined(x) else None for x in operands]
        return fn(ct, *operands, **params)
    return rule


def unbatched_aval(x: Any, d: int | None) -> ShapedArray:
    """The aval of one example of ``x`` (batch dimension ``d`` removed; None: not mapped)."""
    aval = get_aval(x)
    if d is None:
        return aval
    return ShapedArray(aval.shape[:d] + aval.shape[d + 1:], aval.dtype, aval.weak_type)


def check_examples(prim: Any, vals: Any, dims: Any, **params: Any) -> Any:
    """``prim``'s abstract eval on one example of each operand: a batching rule that reads
    the batched shapes runs it first, so that bad operands raise the error the user's own
    shapes give instead of being read as something else (e.g. a batch of 2 as a key)."""
    return prim.rule("abstract_eval")(*[unbatched_aval(v, d) for v, d in zip(vals, dims)],
                                      **params)


def zero_jvp(prim: Any) -> Any:
    """The jvp rule of a primitive whose derivative is zero wherever it exists (floor, sign,
    round, ...): a symbolic zero tangent, as JAX's ``defjvp_zero``."""
    def rule(primals: Any, tangents: Any, **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [Zero.from_primal(o) for o in out]
        return out, Zero.from_primal(out)
    return rule


class Kernel:
    """The CPU rule of a primitive that runs one registered C kernel (docs/kernel-abi.md).

    ``prim.cpu = Kernel(prim, "sort", pack)``: eager execution and the compiler both run the
    kernel registered as ``name`` on the primitive's operands, into fresh outputs of the avals
    its abstract evaluation gives, with the parameter struct ``pack(*in_avals, **params)``
    (bytes, packed with ``struct`` in the primitive's module to the layout its C file reads).

    Args:
      prim: the primitive.
      name: the kernel's registered name, or a function of the primitive's params giving it
        (one kernel per variant: scatter-add, argmax, ...).
      pack: the parameter struct of one application.
    """

    __slots__ = ("prim", "name", "pack")

    def __init__(self, prim: Any, name: Any, pack: Any):
        self.prim = prim
        self.name = name
        self.pack = pack

    def kernel_name(self, params: dict) -> str:
        return self.name if isinstance(self.name, str) else self.name(**params)

    def __call__(self, k: Any, *vals: Any, **params: Any) -> Any:
        """Runs on the kernel namespace ``k`` (or the compiler's recorder) from anywhere that
        has no avals at hand: composite rules, callbacks."""
        avals = tuple(ShapedArray(v.shape, v.dtype) for v in vals)
        out = self.prim.rule("abstract_eval")(*avals, **params)
        outs = out if self.prim.multiple_results else [out]
        res = k.call(k.kernel(self.kernel_name(params)), vals,
                     tuple((a.dtype, a.shape) for a in outs), self.pack(*avals, **params))
        return list(res) if self.prim.multiple_results else res[0]

    def __repr__(self) -> str:
        return f"Kernel({self.prim.name}: {self.name if isinstance(self.name, str) else '...'})"
