"""The shortest eager paths: a primitive on Arrays, with no transformation active, the CPU
backend selected and no debug_nans/debug_infs check, skipping the trace machinery
(``bind``), the operand conversions of the general path and its per-call tuples.

``pullback.numpy`` calls these where it knows the general path would bind exactly this
primitive on exactly these operands (e.g. ``x + y`` for Arrays of one non-boolean dtype and
shape); each returns None when it does not apply, and the caller takes the general path. The
output aval comes from the primitive's abstract evaluation, run once per (primitive, operand
avals, params) and cached by the avals' identities; an abstract evaluation that raises is
cached as "not applicable", so that the general path raises its error (or converts first).
Every frame counts here (a Python call costs about as much as a small kernel), so results are
built inline and element-wise kernels are called without their rule's frame.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..config import config
from ..primitives import elementwise as _elementwise
from ..tracer import core
from ..tracer.array import Array
from ..tracer.avals import ShapedArray, check_result_size, interned
from .cpu import kernels

_state = core.state
_alloc = object.__new__
_ndarray = np.ndarray
_ewise = kernels.ewise
# the code of the ``cpu`` rule every element-wise primitive shares (``k.ewise(code, *xs)``):
# such a primitive's kernel is called directly, with its op code
_EWISE_RULE_CODE = _elementwise.sin_p.cpu.__code__

# (primitive, id(aval), ..., params...) -> (avals, output aval or None, ewise op code or None):
# an entry holds the avals whose ids key it, so no other object takes those ids while it lives
_learnt: dict = {}
_MAX_LEARNT = 65536
_operator_caches: list[dict] = []


def _settings(name: str = "", value: Any = None) -> None:
    global _on
    _learnt.clear()  # (jax_enable_x64 changes the defaults abstract evaluation uses)
    for c in _operator_caches:
        c.clear()
    _on = (_enabled and config.backend == "cpu" and not config.jax_debug_nans
           and not config.jax_debug_infs)


_enabled = True
_on = True
config.watch(_settings)
_settings()


def set_enabled(enabled: bool) -> None:
    """Turn the short paths off (``test_util.jit_every_primitive`` routes every primitive call
    through the evaluator it installs) or back on."""
    global _enabled
    _enabled = enabled
    _settings()


def _learn(prim: core.Primitive, key: tuple, avals: tuple, params: dict) -> tuple:
    """The cache entry of ``prim`` on ``avals``: its output aval (None when abstract
    evaluation raises, or when the primitive has no kernel rule: the general path decides)."""
    out, code = None, None
    cpu = prim.cpu
    if cpu and not getattr(cpu, "interpreted", False) and not prim.multiple_results:
        try:
            out = prim.rule("abstract_eval")(*avals, **params)
            check_result_size(prim.name, out)
            out = interned(out) if type(out) is ShapedArray else None
        except Exception:  # noqa: BLE001 - the general path raises it again, as it would
            out = None
        if not params and getattr(cpu, "__code__", None) is _EWISE_RULE_CODE:
            code = kernels.EWISE_OPS.get(prim.name)
    if len(_learnt) >= _MAX_LEARNT:
        _learnt.clear()
    hit = _learnt[key] = (avals, out, code)
    return hit


def _array(r: Any, out: ShapedArray) -> Array:
    """The result Array of a kernel's ``r`` (as ``Array._new``, inline where it is hot)."""
    if type(r) is not _ndarray or (r.dtype is not out.dtype and r.dtype != out.dtype):
        r = np.asarray(r, dtype=out.dtype)
    a = _alloc(Array)
    a._value = r
    a._aval = out
    return a


def unary(prim: core.Primitive, x: Array) -> Any:
    """``prim(x)`` (no params) for an Array, or None when the short path does not apply."""
    if not (_on and _state.eager):
        return None
    xa = x._aval
    hit = _learnt.get((prim, id(xa)))
    if hit is None:
        hit = _learn(prim, (prim, id(xa)), (xa,), {})
    out = hit[1]
    if out is None:
        return None
    if hit[2] is not None:
        return _array(_ewise(hit[2], x._value), out)
    return _array(prim.cpu(kernels, x._value), out)


def binary(prim: core.Primitive, x: Array, y: Array) -> Any:
    """``prim(x, y)`` (no params) for two Arrays, or None when the short path does not
    apply."""
    if not (_on and _state.eager):
        return None
    xa, ya = x._aval, y._aval
    hit = _learnt.get((prim, id(xa), id(ya)))
    if hit is None:
        hit = _learn(prim, (prim, id(xa), id(ya)), (xa, ya), {})
    out = hit[1]
    if out is None:
        return None
    if hit[2] is not None:
        return _array(_ewise(hit[2], x._value, y._value), out)
    return _array(prim.cpu(kernels, x._value, y._value), out)


def call1(prim: core.Primitive, x: Array, params: dict) -> Any:
    """``prim(x, **params)`` for an Array and hashable params, or None when the short path
    does not apply."""
    if not (_on and _state.eager):
        return None
    xa = x._aval
    key = (prim, id(xa), *params.items())
    hit = _learnt.get(key)
    if hit is None:
        hit = _learn(prim, key, (xa,), params)
    out = hit[1]
    if out is None:
        return None
    return _array(prim.cpu(kernels, x._value, **params), out)


def call(prim: core.Primitive, args: tuple, params: dict) -> Any:
    """``prim(*args, **params)`` for Arrays and hashable params, or None when the short path
    does not apply."""
    if not (_on and _state.eager):
        return None
    avals = tuple([a._aval for a in args])
    key = (prim, *map(id, avals), *params.items())
    hit = _learnt.get(key)
    if hit is None:
        hit = _learn(prim, key, avals, params)
    out = hit[1]
    if out is None:
        return None
    return _array(prim.cpu(kernels, *[a._value for a in args], **params), out)


def binary_operator(prim: core.Primitive, slow: Callable[[Any, Any], Any], bool_ok: bool,
                    reflected: bool = False) -> Callable[[Any, Any], Any]:
    """An Array/Tracer operator method (``__add__``) whose commonest call -- two Arrays of
    one dtype and shape (or one 0-d), seen before -- runs the element-wise kernel of ``prim``
    in its own frame; every other call goes to ``slow(self, other)`` (the short paths of
    pullback.numpy, then its general path). Booleans only with ``bool_ok`` (``+`` of booleans
    is a logical or); ``reflected``: the operator computes ``other <op> self``."""
    # (x aval's hash, y aval's hash) -> (x aval, y aval, output aval, op code), for pairs that
    # passed the checks below once, the avals checked by identity (the cached hashes are read
    # from slots: cheaper than two id() calls); cleared with the other caches
    seen: dict = {}
    _operator_caches.append(seen)

    def learn(x: Any, y: Any) -> Any:
        out = slow(x, y)
        if type(x) is Array and type(y) is Array and type(out) is Array and _on:
            xa, ya = x._aval, y._aval
            if xa.dtype == ya.dtype and (bool_ok or xa.dtype != np.bool_) and (
                    xa.shape == ya.shape or not xa.shape or not ya.shape):
                hit = _learnt.get((prim, id(xa), id(ya)))
                if hit is not None and hit[1] is out._aval and hit[2] is not None and \
                        _ewise(hit[2], x._value, y._value).dtype is out._value.dtype:
                    # (the kernel gives the aval's dtype)
                    if len(seen) >= 4096:
                        seen.clear()
                    seen[(xa._hash, ya._hash)] = (xa, ya, hit[1], hit[2])
        return out

    if reflected:
        def op(self: Any, other: Any) -> Any:
            if type(other) is Array and type(self) is Array and _on and _state.eager:
                xa, ya = other._aval, self._aval
                hit = seen.get((xa._hash, ya._hash))
                if hit is not None and hit[0] is xa and hit[1] is ya:
                    a = _alloc(Array)
                    a._value = _ewise(hit[3], other._value, self._value)
                    a._aval = hit[2]
                    return a
            return learn(other, self)
    else:
        def op(self: Any, other: Any) -> Any:
            if type(other) is Array and type(self) is Array and _on and _state.eager:
                xa, ya = self._aval, other._aval
                hit = seen.get((xa._hash, ya._hash))
                if hit is not None and hit[0] is xa and hit[1] is ya:
                    a = _alloc(Array)
                    a._value = _ewise(hit[3], self._value, other._value)
                    a._aval = hit[2]
                    return a
            return learn(self, other)
    return op
