"""Common-subexpression elimination: equal equations are computed once.

Two equations are equal when they apply the same primitive to the same operands (variables by
identity, literals by shape, dtype and bit pattern, so ``-0.0`` and ``0.0`` differ) with
equal params and equal output types. Every primitive is pure, random ones included (they are functions of their key
operands), so equal equations give equal results and the later one's outputs are replaced by
the earlier one's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...tracer.ir import Atom, ClosedJaxpr, Eqn, Literal, Var, has_effects
from ._rewrite import Walk, forward, literal_value


def _freeze(v: Any) -> Any:
    """A hashable key for a param value whose equality is exact: bools and ints differ, floats
    compare by bits (``-0.0 != 0.0``; equal NaNs merge, which is right: same bits, same op),
    Jaxprs and functions by identity (their default)."""
    t = type(v)
    if t is int or t is str or v is None:
        return v
    if t is tuple or t is list:
        if t is tuple and all(type(x) is int for x in v):
            return v  # shapes, permutations: the common case, kept cheap
        return (t, tuple([_freeze(x) for x in v]))
    if t is bool:
        return (bool, v)
    if isinstance(v, (float, complex, np.floating, np.complexfloating)):
        c = complex(v)
        return (t, c.real.hex(), c.imag.hex())
    if t is dict:
        return (dict, tuple([(k, _freeze(x)) for k, x in v.items()]))
    return (t, v)


def _atom_key(a: Atom) -> Any:
    if type(a) is Literal:
        # weak type left out: it only steers the output's type, compared below (``1.0 + t``
        # written by a user and the ``1.0 + t`` of tanh's derivative are one equation)
        return (a.aval.shape, a.aval.dtype, literal_value(a).tobytes())
    return a


def eqn_key(eqn: Eqn) -> Any:
    """What makes two equations equal (hashable unless a param value is not)."""
    params = eqn.params
    return (eqn.primitive, tuple([a if type(a) is Var else _atom_key(a) for a in eqn.invars]),
            tuple([(k, _freeze(v)) for k, v in params.items()]) if params else (),
            tuple([v.aval for v in eqn.outvars]))


def cse_rule(eqn: Eqn, walk: Walk) -> list[Atom] | None:
    """The outputs of an earlier equal equation, or None (and remember this one)."""
    if has_effects(eqn):  # two equal debug prints print twice
        return None
    key = eqn_key(eqn)
    table = walk.cse_table
    try:
        earlier = table.get(key)
    except TypeError:  # an unhashable param: never merged
        return None
    if earlier is not None:
        return earlier
    table[key] = eqn.outvars
    return None


def cse_jaxpr(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Merge the equal equations of ``closed`` (the earliest one stays).

    Args:
      closed: the program; it is not modified.

    Returns:
      An equivalent ClosedJaxpr (``closed`` itself when no two equations are equal). The
      merged-away equations are gone; equations they made dead remain for ``dce_jaxpr``.
    """
    return forward(closed, (cse_rule,))
