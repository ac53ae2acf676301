"""Primitives, the trace stack and Tracer: the interpreter every transformation plugs into.

A user function runs on values of some level of the trace stack. Level 0 evaluates (runs
kernels); each transformation in progress (jvp, vmap, staging into a Jaxpr, ...) is one level
above. ``bind`` sends a primitive application to the highest level among its arguments (or the
current dynamic level, when staging, so that even constants are recorded), which interprets it
with its own rule and binds again at the levels below.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import dtypes
from .avals import ShapedArray
from .errors import (ConcretizationTypeError, TracerArrayConversionError,
                     TracerBoolConversionError, TracerIntegerConversionError,
                     UnexpectedTracerError, concretization_message)


# ---- primitives and their rules ----

class NoRule:
    """A rule slot that is intentionally empty, with the reason stated.

    ``pending`` rules belong to a later piece of work; ``not_applicable`` ones cannot exist
    (e.g. the jvp of an integer-valued op). Calling either raises, naming the op and reason.
    """

    __slots__ = ("kind", "reason")

    def __init__(self, kind: str, reason: str):
        self.kind, self.reason = kind, reason

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"{self.kind}({self.reason!r})"


def pending(reason: str) -> NoRule:
    return NoRule("pending", reason)


def not_applicable(reason: str) -> NoRule:
    return NoRule("not_applicable", reason)


RULE_SLOTS = ("abstract_eval", "jvp", "transpose", "batch", "cpu", "reference")


class Primitive:
    """An operation the tracer records and the backends run.

    Each primitive declares, in one place, every rule of the primitive contract: abstract
    evaluation (shape/dtype checking), jvp, transpose (linear primitives), batching, the CPU
    kernel lowering and the NumPy reference. A slot that cannot be filled holds a ``NoRule``.
    """

    __slots__ = ("name", "multiple_results", "collective", "partial_eval") + RULE_SLOTS + (
        "__weakref__",)

    registry: dict[str, "Primitive"] = {}

    def __init__(self, name: str, multiple_results: bool = False):
        if name in Primitive.registry:
            raise ValueError(f"primitive {name!r} is declared twice")
        Primitive.registry[name] = self
        self.name = name
        self.multiple_results = multiple_results
        self.collective = False  # reduces across a named vmap axis (see primitives/collectives)
        # Higher-order primitives (scan, cond, checkpoint, ...) split themselves into a known
        # and an unknown part under partial evaluation; the others are staged whole.
        self.partial_eval: Callable | None = None
        for slot in RULE_SLOTS:
            setattr(self, slot, None)

    def bind(self, *args: Any, **params: Any) -> Any:
        if state.eager:  # (``bind``'s first branch, inlined: the eager call's one frame less)
            for a in args:
                if isinstance(a, Tracer):
                    raise escaped_tracer_error(a)
            return _eval_impl(self, args, params)
        return bind(self, args, params)

    def rule(self, slot: str) -> Callable:
        r = getattr(self, slot)
        if callable(r) and not isinstance(r, NoRule):
            return r
        why = f": {r.reason}" if isinstance(r, NoRule) else ""
        raise NotImplementedError(f"primitive '{self.name}' has no {slot} rule{why}")

    def __repr__(self) -> str:
        return self.name


# ---- the trace stack ----

class MainTrace:
    """One level of the trace stack: a transformation in progress."""

    __slots__ = ("level", "trace_type", "payload", "alive", "debug_name")

    def __init__(self, level: int, trace_type: type, payload: Any, debug_name: str):
        self.level = level
        self.trace_type = trace_type
        self.payload = payload
        self.alive = True
        self.debug_name = debug_name

    def with_cur_sublevel(self) -> "Trace":
        return self.trace_type(self)

    def __repr__(self) -> str:
        return f"MainTrace({self.level}, {self.trace_type.__name__}, {self.debug_name})"


class _TraceState:
    __slots__ = ("stack", "dynamic", "eager")

    def __init__(self) -> None:
        base = MainTrace(0, EvalTrace, None, "eval")
        self.stack: list[MainTrace] = [base]
        self.dynamic: MainTrace = base
        # True while no transformation is active: every bind then evaluates directly
        self.eager = True


@contextlib.contextmanager
def new_main(trace_type: type, payload: Any = None, *, dynamic: bool = False,
             debug_name: str = "") -> Iterator[MainTrace]:
    """Push a transformation level; ``dynamic`` levels also capture operations on constants."""
    stack = state.stack
    main = MainTrace(len(stack), trace_type, payload, debug_name)
    stack.append(main)
    prev_dynamic = state.dynamic
    if dynamic:
        state.dynamic = main
    state.eager = False
    try:
        yield main
    finally:
        state.dynamic = prev_dynamic
        stack.pop()
        state.eager = len(stack) == 1
        main.alive = False


@contextlib.contextmanager
def new_base_main(trace_type: type, payload: Any = None, debug_name: str = "") -> Iterator[MainTrace]:
    """A fresh dynamic level that hides the levels below it (used to trace a nested Jaxpr
    independently of the transformations around it)."""
    with new_main(trace_type, payload, dynamic=True, debug_name=debug_name) as main:
        yield main


def find_top_trace(args: Sequence[Any]) -> "Trace":
    top = state.dynamic
    for x in args:
        if isinstance(x, Tracer):
            main = x._trace.main
            if not main.alive:
                raise escaped_tracer_error(x)
            if main.level > top.level:
                top = main
    return top.trace_type(top)


def bind(prim: Primitive, args: Sequence[Any], params: dict) -> Any:
    if state.eager:  # no transformation active: any tracer here has escaped its trace
        for a in args:
            if isinstance(a, Tracer):
                raise escaped_tracer_error(a)
        return _eval_impl(prim, args, params)
    trace = find_top_trace(args)
    tracers = [trace.full_raise(a) for a in args]
    out = trace.process_primitive(prim, tracers, params)
    if prim.multiple_results:
        return [full_lower(o) for o in out]
    return full_lower(out)


def full_lower(x: Any) -> Any:
    return x.full_lower() if isinstance(x, Tracer) else x


def escaped_tracer_error(t: "Tracer") -> UnexpectedTracerError:
    main = t._trace.main
    return UnexpectedTracerError(
        f"Encountered an unexpected tracer: a value of type {t.aval.str_short()} traced by "
        f"{main.debug_name or main.trace_type.__name__}{t._source_description()} was used "
        "after that transformation had returned. A traced value is valid only inside the "
        "function being transformed: return it as an output instead of storing it in a "
        "global, a closure or an object attribute.")


# ---- traces and tracers ----

class Trace:
    """How one level interprets primitives applied to its tracers."""

    __slots__ = ("main",)

    def __init__(self, main: MainTrace):
        self.main = main

    def full_raise(self, val: Any) -> "Tracer":
        if not isinstance(val, Tracer):
            return self.pure(val)
        level = self.main.level
        if val._trace.main is self.main:
            return val
        if val._trace.main.level < level:
            return self.lift(val)
        raise escaped_tracer_error(val)

    def pure(self, val: Any) -> Any:
        raise NotImplementedError

    def lift(self, tracer: "Tracer") -> Any:
        raise NotImplementedError

    def process_primitive(self, prim: Primitive, tracers: list, params: dict) -> Any:
        raise NotImplementedError


# Set by the backends package: runs one primitive on concrete values.
_eval_impl: Callable[[Primitive, Sequence[Any], dict], Any] | None = None


def set_eval_impl(fn: Callable[[Primitive, Sequence[Any], dict], Any]) -> None:
    global _eval_impl
    _eval_impl = fn


class EvalTrace(Trace):
    """Level 0: applies primitives to concrete values by running kernels."""

    __slots__ = ()

    def pure(self, val: Any) -> Any:
        return val

    lift = pure

    def process_primitive(self, prim: Primitive, values: list, params: dict) -> Any:
        return _eval_impl(prim, values, params)


class Tracer:
    """A value seen by a transformation: it has an abstract value but, in general, no data.

    Tracers support the operators and methods of ``Array``, forwarded to ``pullback.numpy``.
    """

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def full_lower(self) -> Any:
        return self

    def to_concrete_value(self) -> Any:
        """The concrete value, when this level knows it (else None)."""
        return None

    def _source_description(self) -> str:
        return ""

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a scalar traced value)")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d traced value")
        return (self[i] for i in range(self.shape[0]))

    def _concrete(self, what: str, err: type) -> Any:
        v = self.to_concrete_value()
        if v is None:
            raise err(concretization_message(what, self))
        return v

    def __bool__(self) -> bool:
        return bool(self._concrete("bool()", TracerBoolConversionError))

    def __int__(self) -> int:
        return int(self._concrete("int()", TracerIntegerConversionError))

    def __index__(self) -> int:
        return operator_index(self._concrete("operator.index()", TracerIntegerConversionError))

    def __float__(self) -> float:
        return float(self._concrete("float()", ConcretizationTypeError))

    def __complex__(self) -> complex:
        return complex(self._concrete("complex()", ConcretizationTypeError))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TracerArrayConversionError(
            f"A traced value of type {self.aval.str_short()}{self._source_description()} was "
            "passed to NumPy (np.asarray or a NumPy function). NumPy needs concrete data; use "
            "pullback.numpy inside transformed functions.")

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: traced value of {self.aval.str_short()} (a traced "
                        "value cannot be a dict key or a static argument)")

    def __setitem__(self, idx: Any, val: Any) -> None:
        raise TypeError("traced values are immutable; use x.at[idx].set(val) for a functional "
                        "update")

    def __repr__(self) -> str:
        return f"Traced<{self.aval!r}>with<{type(self._trace).__name__}>"


def operator_index(v: Any) -> int:
    import operator
    return operator.index(v.item() if isinstance(v, np.ndarray) else v)


# ---- abstract values of concrete data ----

def get_aval(x: Any) -> ShapedArray:
    """The abstract value of a tracer, an Array, a NumPy array or a Python scalar."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return ShapedArray(x.shape, dtypes.canonical(dtypes.canonicalize(x.dtype)), False)
    if dtypes.is_python_scalar(x):
        dt, weak = dtypes.dtype_of_python(x)
        return ShapedArray((), dt, weak)
    raise TypeError(f"value of type {type(x).__name__} is not a valid pullback array: pass "
                    "arrays, NumPy arrays or Python scalars (or mark it static)")


def is_valid_value(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex)) or \
        hasattr(x, "aval")


state = _TraceState()
