"""Lowering a Jaxpr to schedule steps.

Each equation's own ``cpu`` rule runs *symbolically*: it receives ``View`` operands (which have
an ndarray's shape/strides/itemsize/dtype) and a ``SymbolicKernels`` object in place of the C
extension, whose methods record steps instead of computing. So a view primitive (reshape,
transpose, broadcast_in_dim, slice, rev, squeeze, expand_dims) becomes new strides over the same
bytes with no step, a reshape that needs a copy records a copy, dot_general records its
conversions and one matmul, and no stride or layout logic is duplicated here. A primitive whose
cpu rule is a registered kernel (``primitives.rules.Kernel``, docs/kernel-abi.md) becomes one
"kernel" step on the equation's avals. A rule that needs anything the recorder does not model
(data-dependent values, an entry point that is not a registered kernel) raises ``Unsupported``
and the equation becomes a Python-callback step instead.

Equations whose operands are all constants are evaluated at compile time (their results become
constants of the program); nested ``jit`` calls are inlined.
"""
from __future__ import annotations

import collections
import math
from typing import Any, Callable, Sequence

import numpy as np

from ....primitives.rules import Kernel
from ....tracer import core, executor
from ....tracer.array import Array
from ....tracer.avals import ShapedArray
from ....tracer.ir import Jaxpr, Literal, has_effects, locate_error
from .. import kernels
from ..op_facts import EWISE_BY_CODE
from . import control, dynamic
from .copies import CHEAP_GRAIN, const_array, copy_step
from .steps import KernelStep
from .values import Buffer, Step, Unsupported, View

SCHEDULE = kernels.SCHEDULE
EWISE_NAMES = {code: name for name, code in kernels.EWISE_OPS.items()}
REDUCE_NAMES = {code: name for name, code in kernels.REDUCE_OPS.items()}
_GRAINS = kernels.schedule_ewise_grains()
_CHEAP_GRAIN = CHEAP_GRAIN
# Compile-time evaluation of constant equations stops at this many output bytes.
_FOLD_LIMIT = 1 << 24

# Steps compiled programs run through Python objects (a "py" callback step, GIL held), by
# primitive name, since import.
fallbacks: collections.Counter = collections.Counter()


_slot_cache: dict = {}


def slots(dtype: np.dtype) -> tuple[int, int]:
    """(dtype slot, cast slot) of the kernel tables."""
    s = _slot_cache.get(dtype)
    if s is None:
        s = _slot_cache[dtype] = kernels.schedule_slots(dtype)
    return s


def _broadcast(v: View, shape: tuple) -> View:
    """An element-wise operand seen at the iteration shape (0-d operands: zero strides)."""
    if v.shape == shape:
        return v
    if v.ndim == 0:
        return View(v.buf, v.offset, shape, (0,) * len(shape), v.dtype)
    raise Unsupported(f"operand shape {v.shape} vs {shape}")


class SymbolicKernels:
    """Stands in for ``pullback.backends.cpu.kernels`` while a cpu rule runs on Views."""

    def __init__(self, lowering: "Lowering"):
        self._low = lowering
        self.EWISE_OPS = kernels.EWISE_OPS
        self.REDUCE_OPS = kernels.REDUCE_OPS
        self.ARG_OPS = kernels.ARG_OPS
        self.CUMULATIVE_OPS = kernels.CUMULATIVE_OPS

    # -- element-wise family --
    def ewise(self, code: int, *args: Any) -> View:
        # arity, parameters and output dtype as the primitive declares them (op_facts)
        row = EWISE_BY_CODE[code]
        xs, params = args[:row.nin], tuple(int(a) for a in args[row.nin:])
        _check_views(xs)
        shape = max(xs, key=lambda v: v.ndim).shape
        dt = xs[0].dtype
        out = View.fresh(shape, row.out(dt))
        ins = [_broadcast(x, shape) for x in xs]
        self._low.emit(Step("ewise", ins, [out], {
            "loop": (SCHEDULE["ewise"], code, slots(dt)[0]), "params": params, "shape": shape,
            "grain": _GRAINS[code]}, row.name))
        return out

    def select_n(self, which: View, *cases: View) -> View:
        _check_views((which,) + cases)
        if len(cases) > 6:
            raise Unsupported("select_n with more than 6 cases")
        shape = cases[0].shape
        out = View.fresh(shape, cases[0].dtype)
        ins = [_broadcast(which, shape)] + [_broadcast(c, shape) for c in cases]
        n = len(cases)
        self._low.emit(Step("ewise", ins, [out], {
            "loop": (SCHEDULE["select"], slots(which.dtype)[0], cases[0].itemsize),
            "params": (0, n, n - 1), "shape": shape, "grain": _CHEAP_GRAIN}, "select_n"))
        return out

    def convert(self, x: View, dtype: Any) -> View:
        _check_views((x,))
        dtype = np.dtype(dtype)
        out = View.fresh(x.shape, dtype)
        self._low.emit(Step("ewise", [x], [out], {
            "loop": (SCHEDULE["cast"], slots(x.dtype)[1], slots(dtype)[1]), "params": (),
            "shape": x.shape, "grain": _CHEAP_GRAIN}, f"convert->{dtype.name}"))
        return out

    def copy(self, x: View) -> View:
        _check_views((x,))
        out = View.fresh(x.shape, x.dtype)
        self._low.emit(copy_step(x, out))
        return out

    # -- views --
    def view(self, x: View, shape, strides, offset) -> View:
        _check_views((x,))
        return View(x.buf, x.offset + int(offset), tuple(shape), tuple(strides), x.dtype)

    def reinterpret(self, x: View, dtype: Any) -> View | None:
        """x's bytes as ``dtype`` without copying (reinterpret's rule; None when x's layout
        cannot be viewed so)."""
        _check_views((x,))
        dtype = np.dtype(dtype)
        old, new = x.itemsize, dtype.itemsize
        if old == new:
            return View(x.buf, x.offset, x.shape, x.strides, dtype)
        if old > new:  # each element's bytes become a trailing dimension
            return View(x.buf, x.offset, x.shape + (old // new,), x.strides + (new,), dtype)
        if not x.ndim or x.shape[-1] != new // old or (x.shape[-1] > 1 and x.strides[-1] != old):
            return None
        shape, strides = x.shape[:-1], x.strides[:-1]
        if x.offset % new or any(s % new for s, d in zip(strides, shape) if d > 1):
            return None  # misaligned for the wider dtype
        if x.buf.kind == "const" and x.buf.value.ctypes.data % new or x.buf.kind == "slice":
            return None  # (a loop's slice moves: its alignment is not known here)
        # an input's address is known at run time only: the program requires it aligned
        x.buf.align = max(x.buf.align, new)
        return View(x.buf, x.offset, shape, strides, dtype)

    # -- matmul and reductions --
    def matmul(self, a: View, b: View, dtype: Any = None) -> View:
        _check_views((a, b))
        dtype = a.dtype if dtype is None else np.dtype(dtype)
        if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
            raise Unsupported("matmul operands")
        bt, m, k = a.shape
        n = b.shape[2]
        out = View.fresh((bt, m, n), dtype)
        self._low.emit(Step("dot", [a, b], [out], {
            "slots": (slots(a.dtype)[1], slots(b.dtype)[1], slots(dtype)[1]),
            "dims": (bt, m, n, k)}, "dot_general"))
        return out

    def reduce(self, code: int, x: View, axes: tuple) -> View:
        _check_views((x,))
        axes = tuple(int(a) for a in axes)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        out = View.fresh(shape, x.dtype)
        half = x.dtype.kind == "f" and x.itemsize == 2 or x.dtype.name == "bfloat16"
        acc = View.fresh(shape, np.float32) if half else out
        self._low.emit(Step("reduce", [x], [out] + ([acc] if half else []), {
            "op": code, "slot": slots(x.dtype)[0], "axes": axes, "acc": acc},
            REDUCE_NAMES[code]))
        return out

    def concatenate(self, xs: Sequence[View], dimension: int) -> View:
        _check_views(tuple(xs))
        shape = list(xs[0].shape)
        shape[dimension] = sum(x.shape[dimension] for x in xs)
        out = View.fresh(tuple(shape), xs[0].dtype)
        start = 0
        for x in xs:  # each operand is copied into its slice of the result
            part = View(out.buf, start * out.strides[dimension], x.shape, out.strides, out.dtype)
            self._low.emit(copy_step(x, part))
            start += x.shape[dimension]
        return out

    def pad(self, x: View, v: View, lo: tuple, hi: tuple, interior: tuple) -> View:
        """The padding value broadcast over the result, then x's kept elements copied to their
        strided positions (negative edges crop x)."""
        _check_views((x, v))
        shape = tuple(l_ + h + n + max(n - 1, 0) * i
                      for l_, h, i, n in zip(lo, hi, interior, x.shape))
        out = View.fresh(shape, x.dtype)
        self._low.emit(copy_step(_broadcast(v, shape), out))
        xoff, ooff, xshape, ostrides = x.offset, 0, [], []
        for d, (l_, i, n, m) in enumerate(zip(lo, interior, x.shape, shape)):
            step = i + 1
            first = max(0, -(-(-l_) // step)) if l_ < 0 else 0  # first kept element
            last = min(n, (m - 1 - l_) // step + 1) if m > 0 else 0
            count = max(0, last - first)
            xoff += first * x.strides[d]
            ooff += (l_ + first * step) * out.strides[d] if count else 0
            xshape.append(count)
            ostrides.append(out.strides[d] * step)
        if all(xshape):
            part = View(out.buf, ooff, tuple(xshape), tuple(ostrides), out.dtype)
            self._low.emit(copy_step(View(x.buf, xoff, tuple(xshape), x.strides, x.dtype), part))
        return out

    def call(self, kernel: Any, ins: Sequence[View], outs: Sequence[tuple], params: bytes
             ) -> tuple:
        """A registered kernel (kernels.call's arguments): one "kernel" step."""
        _check_views(tuple(ins))
        views = tuple(View.fresh(tuple(shape), dtype) for dtype, shape in outs)
        self._low.emit(KernelStep(kernel, ins, views, params, kernel.name))
        return views

    def __getattr__(self, name: str) -> Callable:
        real = getattr(kernels, name)
        if not callable(real):
            return real  # a table of codes (SCATTER_COMBINERS, ...)

        def call(*args: Any) -> Any:
            if _has_view(args):  # an entry point that is not a registered kernel
                raise Unsupported(f"kernel entry '{name}' is not a registered kernel "
                                  "(docs/kernel-abi.md)")
            return _const_views(real(*args))  # no runtime operand: computed now, a constant
        return call




def all_views(xs: Sequence[Any]) -> bool:
    return all(type(x) is View for x in xs)


def _check_views(xs: Sequence[Any]) -> None:
    for x in xs:
        if type(x) is not View:
            raise Unsupported(f"operand of type {type(x).__name__}")


def _has_view(x: Any) -> bool:
    if type(x) is View:
        return True
    if isinstance(x, (tuple, list)):
        return any(_has_view(y) for y in x)
    return False


def _const_views(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return View.of_const(x)
    if isinstance(x, (tuple, list)):
        return type(x)(_const_views(y) for y in x)
    return x


class Lowering:
    """Steps of one program, in order."""

    def __init__(self):
        self.steps: list[Step] = []
        self.kernels = SymbolicKernels(self)
        self.fallbacks: list[str] = []
        self.inputs: list[View] = []
        self._literals: dict = {}
        self.depth = 0  # loops enclosing the steps being lowered

    def emit(self, step: Step) -> None:
        self.steps.append(step)
        for o in step.outs:
            if o.buf.producer is None:
                o.buf.producer = step

    def literal(self, lit: Literal) -> View:
        """A scalar literal as a constant; equal literals share one (fewer region operands)."""
        val = np.asarray(lit.val._value if isinstance(lit.val, Array) else lit.val,
                         dtype=lit.aval.dtype)
        key = (val.dtype, val.shape, val.tobytes())
        buf = self._literals.get(key)
        if buf is None:
            v = View.of_const(val)
            self._literals[key] = v.buf
            return v
        return View(buf, 0, val.shape, val.strides, val.dtype)

    def jaxpr(self, jaxpr: Jaxpr, ins: Sequence[View], with_consts: bool = False) -> list[View]:
        """Lower ``jaxpr``'s equations on ``ins`` (its invars' values; with_consts: its
        constvars' values first)."""
        binders = list(jaxpr.constvars) + list(jaxpr.invars) if with_consts else jaxpr.invars
        env: dict[int, View] = {v.id: x for v, x in zip(binders, ins)}

        def read(a: Any) -> View:
            return self.literal(a) if isinstance(a, Literal) else env[a.id]

        for eqn in jaxpr.eqns:
            try:
                outs = self.eqn(eqn, [read(a) for a in eqn.invars])
            except Exception as e:
                locate_error(e, eqn, "compiling")
                raise
            for v, o in zip(eqn.outvars, outs):
                env[v.id] = o
        return [read(a) for a in jaxpr.outvars]

    def eqn(self, eqn: Any, ins: list[View]) -> list[View]:
        prim, params = eqn.primitive, eqn.params
        if prim.name in control.CALLS:  # inline the called program
            return control.closed_call(self, params[control.CALLS[prim.name]], ins)
        out_avals = [v.aval for v in eqn.outvars]
        if prim.name in control.LOWER:  # a nested schedule (never folded: it may be long)
            mark = len(self.steps)
            try:
                return control.LOWER[prim.name](self, ins, **params)
            except control.Unlowerable:
                del self.steps[mark:]
                return self.callback(prim, ins, params, out_avals)
        if all(x.buf.kind == "const" for x in ins) and not has_effects(eqn) and \
                sum(a.size * a.dtype.itemsize for a in out_avals) <= _FOLD_LIMIT:
            return self.fold(prim, ins, params, out_avals)
        if prim.name in dynamic.LOWER and all_views(ins):
            return dynamic.LOWER[prim.name](self, ins, **params)
        cpu = prim.cpu
        if type(cpu) is Kernel:  # a registered kernel on the equation's avals
            avals = [ShapedArray(x.shape, x.dtype) for x in ins]
            return list(self.kernels.call(kernels.kernel(cpu.kernel_name(params)), ins,
                                          tuple((a.dtype, a.shape) for a in out_avals),
                                          cpu.pack(*avals, **params)))
        if cpu and not getattr(cpu, "interpreted", False):
            mark = len(self.steps)
            try:
                outs = cpu(self.kernels, *ins, **params)
                outs = list(outs) if prim.multiple_results else [outs]
                if all(type(o) is View and o.shape == a.shape and o.dtype == a.dtype
                       for o, a in zip(outs, out_avals)) and len(outs) == len(out_avals):
                    return outs
            except Unsupported:  # what the recorder does not model: a callback step
                del self.steps[mark:]
                return self.callback(prim, ins, params, out_avals)
            del self.steps[mark:]
            raise AssertionError(
                f"{prim.name}: its cpu rule returned {outs!r} for outputs {out_avals}")
        return self.callback(prim, ins, params, out_avals)

    def fold(self, prim: Any, ins: list[View], params: dict, out_avals: list) -> list[View]:
        args = [Array._new(const_array(x), core.get_aval(const_array(x))) for x in ins]
        # the eager evaluator itself, never a hook installed over it
        out = executor.installed().eval_impl(prim, args, params)
        outs = out if prim.multiple_results else [out]
        return [View.of_const(np.asarray(o._value if isinstance(o, Array) else o, a.dtype))
                for o, a in zip(outs, out_avals)]

    def callback(self, prim: Any, ins: list[View], params: dict, out_avals: list) -> list[View]:
        outs = [View.fresh(a.shape, a.dtype) for a in out_avals]
        self.fallbacks.append(prim.name)
        fallbacks[prim.name] += 1
        self.emit(Step("py", ins, outs, {"callable": _callback(prim, params, out_avals)},
                       prim.name))
        return outs


def _callback(prim: Any, params: dict, out_avals: list) -> Callable:
    """The function a callback step calls on ndarray views of its operands: the primitive's
    kernel (or, for primitives that interpret sub-programs, the primitive bound on Arrays)."""
    dts = [a.dtype for a in out_avals]
    cpu = prim.cpu
    if cpu and not getattr(cpu, "interpreted", False):
        def run(*xs: np.ndarray) -> tuple:
            out = cpu(kernels, *xs, **params)
            outs = out if prim.multiple_results else (out,)
            return tuple(np.asarray(o, dtype=d) for o, d in zip(outs, dts))
    else:
        def run(*xs: np.ndarray) -> tuple:
            args = [Array(x) for x in xs]
            out = prim.bind(*args, **params)
            outs = out if prim.multiple_results else (out,)
            return tuple(np.asarray(o, dtype=d) for o, d in zip(outs, dts))
    run.__name__ = prim.name
    return run


def lower_program(jaxpr: Jaxpr, consts: dict[int, np.ndarray],
                  in_strides: Sequence[Any] | None = None
                  ) -> tuple[Lowering, list[View], list[int]]:
    """Steps for ``jaxpr``: invar i is constant ``consts[i]`` if given, else a program input
    (numbered among the non-constant invars), C-contiguous unless ``in_strides[n]`` gives the
    n-th input's byte strides. Returns the lowering, the output views and the invar index of
    each program input."""
    low = Lowering()
    ins, input_of = [], []
    for i, v in enumerate(jaxpr.invars):
        if i in consts:
            ins.append(View.of_const(consts[i]))
            continue
        n = len(input_of)
        x = View.fresh(v.aval.shape, v.aval.dtype, "input", n)
        if in_strides is not None and in_strides[n] is not None:
            x = View(x.buf, 0, x.shape, in_strides[n], x.dtype)
        ins.append(x)
        input_of.append(i)
    outs = low.jaxpr(jaxpr, ins)
    low.inputs = [ins[i] for i in input_of]
    return low, outs, input_of


def is_elementwise(step: Step) -> bool:
    return step.kind == "ewise"


def nelems(shape: Sequence[int]) -> int:
    return math.prod(shape)


__all__ = ["Buffer", "Lowering", "SymbolicKernels", "Unsupported", "lower_program", "copy_step",
           "const_array", "slots"]
