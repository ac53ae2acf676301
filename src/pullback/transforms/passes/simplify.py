"""Algebraic simplification: rewrites that give bit-identical results, never approximations.

A value is replaced only when the replacement has exactly the same aval (shape, dtype, weak
type), so e.g. ``x * 1.0`` with a 0-d ``x`` and a broadcast one stays. A "constant" below is a
scalar literal or a ``broadcast_in_dim`` of one.

- ``x * 1``, ``1 * x``, ``x / 1`` -> ``x``, except for complex dtypes: the kernels multiply
  and divide complex numbers with the textbook formulas, where ``(inf + 0j) * (1 + 0j)`` has
  the imaginary part ``inf * 0 = nan`` and signed zeros can flip.
- ``x + 0`` and ``0 + x`` -> ``x`` for integers, but for floating types only when the zero is
  ``-0.0``: IEEE gives ``-0.0 + 0.0 = +0.0``, so ``x + 0.0`` is not the identity on ``-0.0``
  (XLA's simplifier rewrites it anyway, trading that sign for speed; we keep exactness, and
  the addition costs nothing once fused). Complex zeros need both parts ``-0.0``.
- ``x - 0`` -> ``x`` when the zero is ``+0.0`` (``x - 0.0 = x + -0.0``, exact), or integer.
- ``neg(neg(x))`` -> ``x`` (exact: a sign flip, wrapping for integers).
- ``integer_pow(x, 1)`` -> ``x`` (exact; optax's moments write ``g ** order`` with order 1).
- ``convert_element_type`` to the operand's own dtype and weak type -> the operand.
- ``transpose(transpose(x))`` -> one transpose with the composed permutation, or ``x`` when
  that is the identity; an identity transpose alone -> ``x``.
- Chains of order-preserving reshapes (``reshape`` with ``dimensions=None``, ``squeeze``, and
  a ``broadcast_in_dim`` that only inserts unit dimensions, as ``expand_dims`` stages) -> one
  ``reshape`` of the chain's source, or the source when the shapes agree.
- ``broadcast_in_dim(broadcast_in_dim(x))`` -> one ``broadcast_in_dim`` (the dimension maps
  compose); a broadcast of a size-1 reshape of a scalar -> a broadcast of the scalar. The
  broadcast of a scalar literal itself stays: it is a free view that the fusion pass reads as
  a scalar operand.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ...tracer import dtypes
from ...tracer.core import Primitive
from ...tracer.ir import Atom, ClosedJaxpr, Eqn, Literal, Var
from ._rewrite import Walk, forward, literal_value

Result = Eqn | list[Atom] | None


def _same(eqn: Eqn, atom: Atom) -> list[Atom] | None:
    """``[atom]`` if it can stand for the equation's single output (identical aval)."""
    return [atom] if atom.aval == eqn.outvars[0].aval else None


def _constant(atom: Atom, walk: Walk) -> np.ndarray | None:
    """The scalar value of a literal or of a broadcast of one, else None."""
    if type(atom) is Literal:
        return literal_value(atom)
    p = walk.producer.get(atom)
    if p is not None and p.primitive.name == "broadcast_in_dim" and type(p.invars[0]) is Literal:
        return literal_value(p.invars[0])
    return None


def _kind(dtype: np.dtype) -> str:
    if dtype.kind == "c":
        return "complex"
    if dtypes.is_float(dtype):
        return "float"
    return "exact"  # integers and bool


def _py(c: np.ndarray) -> complex | float | int:
    """A 0-d value as a Python number (comparisons on those are cheap)."""
    return c.item() if c.dtype.kind in "biufc" else float(c)  # bfloat16: kind "V"


def _is_one(c: np.ndarray | None, dtype: np.dtype) -> bool:
    return c is not None and _py(c) == 1 and dtype.kind != "c"


def _is_zero(c: np.ndarray | None, dtype: np.dtype, negative: bool) -> bool:
    """Whether ``c`` is a zero, and for inexact dtypes one of the given sign (in every part)."""
    if c is None:
        return False
    v = _py(c)
    if v != 0:
        return False
    kind = _kind(dtype)
    if kind == "exact":
        return True
    parts = (v.real, v.imag) if kind == "complex" else (v,)
    return all((math.copysign(1.0, p) < 0) == negative for p in parts)


def _mul(eqn: Eqn, walk: Walk) -> Result:
    x, y = eqn.invars
    dt = eqn.outvars[0].aval.dtype
    if _is_one(_constant(y, walk), dt):
        return _same(eqn, x)
    if _is_one(_constant(x, walk), dt):
        return _same(eqn, y)
    return None


def _div(eqn: Eqn, walk: Walk) -> Result:
    x, y = eqn.invars
    return _same(eqn, x) if _is_one(_constant(y, walk), eqn.outvars[0].aval.dtype) else None


def _add(eqn: Eqn, walk: Walk) -> Result:
    x, y = eqn.invars
    dt = eqn.outvars[0].aval.dtype
    if _is_zero(_constant(y, walk), dt, negative=True):
        return _same(eqn, x)
    if _is_zero(_constant(x, walk), dt, negative=True):
        return _same(eqn, y)
    return None


def _sub(eqn: Eqn, walk: Walk) -> Result:
    x, y = eqn.invars
    dt = eqn.outvars[0].aval.dtype
    return _same(eqn, x) if _is_zero(_constant(y, walk), dt, negative=False) else None


def _producer(atom: Atom, walk: Walk, name: str) -> Eqn | None:
    p = walk.producer.get(atom) if type(atom) is Var else None
    return p if p is not None and p.primitive.name == name else None


def _neg(eqn: Eqn, walk: Walk) -> Result:
    p = _producer(eqn.invars[0], walk, "neg")
    return _same(eqn, p.invars[0]) if p is not None else None


def _integer_pow(eqn: Eqn, walk: Walk) -> Result:
    return _same(eqn, eqn.invars[0]) if eqn.params["y"] == 1 else None


def _convert(eqn: Eqn, walk: Walk) -> Result:
    return _same(eqn, eqn.invars[0])


def _transpose(eqn: Eqn, walk: Walk) -> Result:
    (x,) = eqn.invars
    perm = tuple(eqn.params["permutation"])
    p = _producer(x, walk, "transpose")
    if p is not None:
        inner = p.params["permutation"]
        x, perm = p.invars[0], tuple(inner[i] for i in perm)
    if perm == tuple(range(len(perm))):
        return _same(eqn, x)
    if p is None:
        return None
    return Eqn(eqn.primitive, [x], {**eqn.params, "permutation": perm}, eqn.outvars,
               eqn.source_info)


def _reshape_source(eqn: Eqn | None) -> Atom | None:
    """The operand of an order-preserving reshape (the data in the same row-major order,
    only the shape changes), else None."""
    if eqn is None:
        return None
    name = eqn.primitive.name
    if name == "reshape":
        return eqn.invars[0] if eqn.params.get("dimensions") is None else None
    if name == "squeeze":
        return eqn.invars[0]
    if name == "broadcast_in_dim" and eqn.outvars[0].aval.size == eqn.invars[0].aval.size:
        # sizes agree only when it inserts unit dimensions (increasing dims keep the order)
        return eqn.invars[0]
    return None


def _reshape_to(eqn: Eqn, src: Atom) -> Result:
    """The equation's output as one reshape of ``src`` (or ``src`` itself)."""
    same = _same(eqn, src)
    if same is not None:
        return same
    reshape_p = Primitive.registry["reshape"]
    shape = eqn.outvars[0].aval.shape
    return Eqn(reshape_p, [src], {"new_sizes": shape, "dimensions": None}, eqn.outvars,
               eqn.source_info)


def _reshape_chain(eqn: Eqn, walk: Walk) -> Result:
    """An order-preserving reshape of the output of another: one reshape of the first input."""
    x = eqn.invars[0]
    if _reshape_source(eqn) is None:
        return None
    p = walk.producer.get(x) if type(x) is Var else None
    src = _reshape_source(p)
    if src is None:
        return _same(eqn, x)
    return _reshape_to(eqn, src)


def _broadcast(eqn: Eqn, walk: Walk) -> Result:
    (x,) = eqn.invars
    same = _same(eqn, x)
    if same is not None:
        return same
    shape, dims = eqn.params["shape"], tuple(eqn.params["broadcast_dimensions"])
    p = _producer(x, walk, "broadcast_in_dim")
    if p is not None:
        inner_dims = p.params["broadcast_dimensions"]
        composed = tuple(dims[d] for d in inner_dims)
        src = p.invars[0]
    else:
        src = _reshape_source(walk.producer.get(x)) if type(x) is Var else None
        if src is None:
            return None
        if _reshape_source(eqn) is not None:
            return _reshape_to(eqn, src)
        if x.aval.size != 1 or src.aval.ndim != 0:
            return None
        composed = ()
    return _same(eqn, src) or Eqn(
        eqn.primitive, [src], {**eqn.params, "shape": shape, "broadcast_dimensions": composed},
        eqn.outvars, eqn.source_info)


_RULES: dict[str, Callable[[Eqn, Walk], Result]] = {
    "mul": _mul, "div": _div, "add": _add, "sub": _sub, "neg": _neg, "integer_pow": _integer_pow,
    "convert_element_type": _convert, "transpose": _transpose,
    "reshape": _reshape_chain, "squeeze": _reshape_chain, "broadcast_in_dim": _broadcast,
}


def simplify_rule(eqn: Eqn, walk: Walk) -> Result:
    """The simplified form of ``eqn`` (a new equation or replacement atoms), or None."""
    rule = _RULES.get(eqn.primitive.name)
    return rule(eqn, walk) if rule is not None else None


def simplify_jaxpr(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Apply the exact algebraic simplifications of this module to ``closed``.

    Args:
      closed: the program; it is not modified.

    Returns:
      An equivalent ClosedJaxpr (``closed`` itself when nothing simplifies); equations made
      dead remain for ``dce_jaxpr``.
    """
    return forward(closed, (simplify_rule,))
