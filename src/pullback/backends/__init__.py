"""Backends: run one primitive on concrete values.

Eager execution is one kernel call per primitive: the primitive's abstract evaluation checks
the operands (raising the user-facing errors), then its ``cpu`` rule runs the C kernel on the
operands' NumPy views. With ``config.backend == "reference"`` (or for a primitive without a
kernel, counted in ``fallbacks``) its NumPy reference runs instead. Compiled programs count
the steps they run through Python objects in ``compiled_fallbacks``. Under ``jax_debug_nans`` /
``jax_debug_infs`` every result is checked (tracer/debug.py).
"""
from __future__ import annotations

import collections
from typing import Any, Sequence

import numpy as np

from ..config import config
from ..primitives.rules import Kernel
from ..tracer import core, debug, executor
from ..tracer.array import Array
from ..tracer.avals import ShapedArray, check_result_size, interned
from . import eager
from .cpu import kernels
from .cpu.compiler import compile_jaxpr
from .cpu.compiler import fallbacks as compiled_fallbacks  # noqa: F401

fallbacks: collections.Counter = collections.Counter()


def to_ndarray(x: Any, aval: ShapedArray) -> np.ndarray:
    if type(x) is Array:
        return x._value
    if isinstance(x, np.ndarray) and x.dtype == aval.dtype:
        # kernels read aligned data: a misaligned NumPy buffer is copied (JAX accepts it)
        return x if x.flags.aligned else x.copy()
    return np.asarray(x, dtype=aval.dtype)


def _run(prim: core.Primitive, vals: list[np.ndarray], params: dict) -> Any:
    cpu = prim.cpu
    if config.backend == "cpu" and cpu:
        return cpu(kernels, *vals, **params)
    if config.backend == "cpu":
        fallbacks[prim.name] += 1
    return prim.rule("reference")(*vals, **params)


# Output avals of eager calls, by (primitive, input avals, params): abstract evaluation (and its
# checks) runs once per signature, as it does under jit.
_out_avals: dict = {}
# The same by the input avals' identities (``id``), for operands that are all Arrays: no
# Python-level ``ShapedArray.__hash__`` per call. An entry holds its avals, so their ids stay
# theirs while it lives; cached output avals are interned, so chained calls hit.
_out_avals_by_id: dict = {}
_MAX_CACHED = 65536


def _clear_caches(name: str = "", value: Any = None) -> None:
    _out_avals.clear()
    _out_avals_by_id.clear()


config.watch(_clear_caches)  # (jax_enable_x64 changes defaults)


def _out_aval(prim: core.Primitive, avals: tuple, params: dict) -> Any:
    try:
        key = (prim, *avals, *params.items())
        return _out_avals[key]
    except KeyError:
        out = prim.rule("abstract_eval")(*avals, **params)
        check_result_size(prim.name, out)
        if len(_out_avals) >= _MAX_CACHED:
            _clear_caches()
        if type(out) is ShapedArray:
            out = interned(out)
        elif prim.multiple_results:
            out = [interned(a) if type(a) is ShapedArray else a for a in out]
        _out_avals[key] = out
        return out
    except TypeError:  # an unhashable parameter: check every time
        out = prim.rule("abstract_eval")(*avals, **params)
        check_result_size(prim.name, out)
        return out


# Per (primitive, input avals, params) of a primitive that runs a registered kernel: its output
# aval(s), the kernel's handle, its outputs' (dtype, shape) and its packed params, built once per
# signature (one lookup per call).
_plans: dict = {}
config.watch(lambda name, value: _plans.clear())


def _kernel_plan(prim: core.Primitive, rule: Kernel, avals: tuple, params: dict) -> tuple:
    try:
        key = (prim, *avals, *params.items())
        return _plans[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable parameter: planned every time
        key = None
    out_aval = _out_aval(prim, avals, params)
    outs = out_aval if prim.multiple_results else [out_aval]
    plan = (out_aval, kernels.kernel(rule.kernel_name(params)),
            tuple((a.dtype, a.shape) for a in outs), rule.pack(*avals, **params))
    if key is not None:
        if len(_plans) >= _MAX_CACHED:
            _plans.clear()
        _plans[key] = plan
    return plan


def _signature(prim: core.Primitive, cpu: Any, avals: tuple, params: dict) -> tuple:
    """(output aval(s), the kernel plan of a ``Kernel`` rule or None) of one signature."""
    if type(cpu) is Kernel:
        plan = _kernel_plan(prim, cpu, avals, params)
        return plan[0], plan
    return _out_aval(prim, avals, params), None


# What each ``cpu`` rule is, learnt on first use (reading the ``interpreted`` attribute of a
# function that lacks it costs more than the rest of a small kernel call)
_KERNEL, _INTERPRETED = 0, 1
_cpu_kinds: dict = {}


def eval_impl(prim: core.Primitive, args: Sequence[Any], params: dict) -> Any:
    cpu = prim.cpu
    kind = _cpu_kinds.get(cpu)
    if kind is not _KERNEL:
        if kind is None:
            kind = _cpu_kinds[cpu] = _INTERPRETED if getattr(cpu, "interpreted", False) \
                else _KERNEL
        if kind is _INTERPRETED:
            # higher-order primitives (jit, control flow) run their sub-Jaxprs on Arrays
            return cpu(*args, **params)
    for a in args:
        if type(a) is not Array:
            return _eval_general(prim, args, params)
    # every operand an Array (the common case)
    avals = [a._aval for a in args]
    try:
        key = (prim, *map(id, avals), *params.items())
        _, out_aval, plan = _out_avals_by_id[key]
    except KeyError:
        out_aval, plan = _signature(prim, cpu, tuple(avals), params)
        if len(_out_avals_by_id) >= _MAX_CACHED:  # (avals made outside the interning)
            _out_avals_by_id.clear()
        _out_avals_by_id[key] = (avals, out_aval, plan)
    except TypeError:  # an unhashable parameter
        out_aval, plan = _signature(prim, cpu, tuple(avals), params)
    if cpu and config.backend == "cpu":
        if plan is not None:  # one generic entry for any registered kernel
            res = kernels.call(plan[1], [a._value for a in args], plan[2], plan[3])
            out = res if prim.multiple_results else res[0]
        else:
            out = cpu(kernels, *[a._value for a in args], **params)
    else:
        out = _run(prim, [a._value for a in args], params)
    if prim.multiple_results:
        outs = [_wrap(o, a) for o, a in zip(out, out_aval)]
        if debug.checking:  # jax_debug_nans / jax_debug_infs
            debug.check(prim.name, [o._value for o in outs])
        return outs
    if type(out) is not np.ndarray or (out.dtype is not out_aval.dtype and
                                       out.dtype != out_aval.dtype):
        out = np.asarray(out, dtype=out_aval.dtype)
    if debug.checking:
        debug.check(prim.name, (out,))
    return Array._new(out, out_aval)


def _eval_general(prim: core.Primitive, args: Sequence[Any], params: dict) -> Any:
    """eval_impl for operands that are not all Arrays (NumPy arrays, Python scalars)."""
    avals = tuple([a._aval if type(a) is Array else core.get_aval(a) for a in args])
    cpu = prim.cpu
    if type(cpu) is Kernel and config.backend == "cpu":  # one generic entry for any kernel
        out_aval, handle, specs, blob = _kernel_plan(prim, cpu, avals, params)
        vals = [a._value if type(a) is Array else to_ndarray(a, av) for a, av in zip(args, avals)]
        res = kernels.call(handle, vals, specs, blob)
        out = res if prim.multiple_results else res[0]
    else:
        out_aval = _out_aval(prim, avals, params)
        vals = [a._value if type(a) is Array else to_ndarray(a, av) for a, av in zip(args, avals)]
        out = _run(prim, vals, params)
    if prim.multiple_results:
        outs = [_wrap(o, a) for o, a in zip(out, out_aval)]
    else:
        outs = [_wrap(out, out_aval)]
    if debug.checking:  # jax_debug_nans / jax_debug_infs
        debug.check(prim.name, [o._value for o in outs])
    for a in args:
        if type(a) is not Array and isinstance(a, np.ndarray):  # the caller's memory
            outs = [_unshared(o, args) for o in outs]
            break
    return outs if prim.multiple_results else outs[0]


def _unshared(x: Array, args: Sequence[Any]) -> Array:
    """``x``, or a copy of it when it is a view of a caller's NumPy argument (a reshape of it):
    an Array never shares memory its caller can write or free (JAX copies such arguments)."""
    v = x._value
    owner = v if v.base is None else v.base
    for a in args:
        if type(a) is not Array and isinstance(a, np.ndarray) and \
                (owner is a or owner is a.base):
            return Array._new(np.array(v), x._aval)
    return x


def _wrap(x: Any, aval: ShapedArray) -> Array:
    if type(x) is not np.ndarray or x.dtype != aval.dtype:
        x = np.asarray(x, dtype=aval.dtype)
    return Array._new(x, aval)


core.set_eval_impl(eval_impl)
executor.install(executor.Executor(
    compile=compile_jaxpr, to_ndarray=to_ndarray, eval_impl=eval_impl,
    eager_binary=eager.binary, eager=eager, jit_base=kernels.JitBase, fast_call=kernels.FastCall,
    layout_error=kernels.LayoutError, fast_max_leaves=kernels.FAST_MAX_LEAVES,
    jit_setup=kernels.jit_setup))
