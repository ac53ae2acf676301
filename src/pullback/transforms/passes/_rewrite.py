"""The machinery the passes share: one forward walk that substitutes variables and applies
per-equation rules, and helpers over literals and sub-jaxprs in params.

Variables are dict keys by identity (``Var`` defines no ``__eq__``), so every lookup is O(1)
and every pass is a single linear walk. Passes never mutate their input: a rewritten equation
is a new ``Eqn``, a rewritten program a new ``Jaxpr``; an unchanged program is returned as is
(the same object), which is how the pipeline detects its fixed point.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ...tracer import core
from ...tracer.array import Array
from ...tracer.avals import ShapedArray
from ...tracer.ir import Atom, ClosedJaxpr, Eqn, Jaxpr, Literal, Var

# A rule looks at one equation (its inputs already substituted) and answers:
#   None           keep it (the next rule sees it),
#   an Eqn         replace it by this one (defining the same outvars),
#   a list[Atom]   drop it: its outvars become these atoms (one per outvar, equal avals).
Rule = Callable[[Eqn, "Walk"], "Eqn | list[Atom] | None"]


class Walk:
    """The state of one forward walk over a ClosedJaxpr."""

    __slots__ = ("env", "producer", "constvars", "consts", "known", "allow_new_consts",
                 "cse_table", "changed")

    def __init__(self, closed: ClosedJaxpr, allow_new_consts: bool):
        self.env: dict[Var, Atom] = {}           # replaced var -> its replacement
        self.producer: dict[Var, Eqn] = {}       # var -> the emitted equation defining it
        self.constvars: list[Var] = list(closed.jaxpr.constvars)
        self.consts: list[Any] = list(closed.consts)
        self.known: dict[Var, Any] = {     # constvar -> its concrete value
            v: c for v, c in zip(self.constvars, self.consts) if not isinstance(c, core.Tracer)}
        self.allow_new_consts = allow_new_consts
        self.cse_table: dict[Any, list[Var]] = {}
        self.changed = False

    def new_const(self, value: Any, aval: ShapedArray) -> Var:
        v = Var(aval)
        self.constvars.append(v)
        self.consts.append(value)
        self.known[v] = value
        return v


def forward(closed: ClosedJaxpr, rules: Sequence[Rule], allow_new_consts: bool = True
            ) -> ClosedJaxpr:
    """Walk the equations once, in order: substitute replaced inputs, then offer each equation
    to ``rules`` in turn. Returns ``closed`` itself when nothing changed."""
    jaxpr = closed.jaxpr
    w = Walk(closed, allow_new_consts)
    env, producer, eqns = w.env, w.producer, []
    for eqn in jaxpr.eqns:
        if env:
            ins = [env.get(a, a) for a in eqn.invars]
            if ins != eqn.invars:
                eqn = Eqn(eqn.primitive, ins, eqn.params, eqn.outvars, eqn.source_info)
                w.changed = True
        for rule in rules:
            r = rule(eqn, w)
            if r is None:
                continue
            w.changed = True
            if type(r) is Eqn:
                eqn = r
                continue
            for v, a in zip(eqn.outvars, r):
                env[v] = a
            eqn = None
            break
        if eqn is not None:
            eqns.append(eqn)
            for v in eqn.outvars:
                producer[v] = eqn
    if not w.changed:
        return closed
    outvars = [env.get(a, a) for a in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(w.constvars, jaxpr.invars, eqns, outvars), w.consts)


# ---- literals ----

def literal_value(lit: Literal) -> np.ndarray:
    """A Literal's value as a 0-d ndarray of its aval's dtype."""
    v = lit.val
    if type(v) is Array:
        return v._value
    return np.asarray(v, lit.aval.dtype)


def make_literal(value: np.ndarray, aval: ShapedArray) -> Literal:
    """A Literal holding ``value`` as an Array, as staging writes them (evaluation then keeps
    the weak type)."""
    return Literal(Array(np.asarray(value, aval.dtype), aval.weak_type), aval)


def as_array(x: Any, aval: ShapedArray) -> Array:
    """A concrete value (Array, ndarray, NumPy or Python scalar) as an Array of ``aval``."""
    if type(x) is Array and x._aval == aval:
        return x
    if type(x) is Array:
        x = x._value
    return Array(np.asarray(x, aval.dtype), aval.weak_type)


# ---- sub-jaxprs in params ----

def _is_sub(v: Any) -> bool:
    t = type(v)
    if t is ClosedJaxpr or t is Jaxpr:
        return True
    return (t is tuple or t is list) and any(type(x) is ClosedJaxpr or type(x) is Jaxpr
                                             for x in v)


def has_sub_jaxprs(params: dict) -> bool:
    """Whether any param holds a (Closed)Jaxpr, directly or in a tuple/list."""
    for v in params.values():
        if _is_sub(v):
            return True
    return False


def map_sub_jaxprs(params: dict, closed_fn: Callable[[ClosedJaxpr], ClosedJaxpr],
                   jaxpr_fn: Callable[[Jaxpr], Jaxpr]) -> dict:
    """``params`` with every (Closed)Jaxpr, direct or in a tuple/list, replaced by its image;
    the same dict when nothing changed."""

    def one(x: Any) -> Any:
        t = type(x)
        return closed_fn(x) if t is ClosedJaxpr else jaxpr_fn(x) if t is Jaxpr else x

    new = None
    for k, v in params.items():
        if not _is_sub(v):
            continue
        if type(v) in (tuple, list):
            items = [one(x) for x in v]
            nv = v if all(a is b for a, b in zip(items, v)) else type(v)(items)
        else:
            nv = one(v)
        if nv is not v:
            if new is None:
                new = dict(params)
            new[k] = nv
    return params if new is None else new


def same_outputs(a: Iterable[ShapedArray], b: Iterable[ShapedArray]) -> bool:
    a, b = list(a), list(b)
    return len(a) == len(b) and all(x == y for x, y in zip(a, b))
