"""Constant folding: an equation whose operands are all known (literals, constants, earlier
folded results) and whose outputs are small is evaluated once, at compile time.

It runs on the C kernels, as eager execution does (the evaluation bypasses any trace in
progress, so folding inside a traced caller is still evaluation). A 0-d result becomes a
literal, which the printer writes inline as JAX does; a larger one becomes a new constvar.
Not folded: outputs of more than ``MAX_FOLD_SIZE`` elements (they would bloat the program's
memory), higher-order primitives (params holding a Jaxpr: folding them would mean evaluating
a whole sub-program), collectives (they need a named axis), a scalar broadcast or reshaped
to a shape (a free view that later passes read as a scalar; a constant would be memory), and
any equation whose evaluation raises (it then raises at run time, at its source line).
"""
from __future__ import annotations

import numpy as np

from ...tracer import core
from ...tracer.array import Array
from ...tracer.ir import Atom, ClosedJaxpr, Eqn, Literal, has_effects
from ._rewrite import Walk, as_array, forward, has_sub_jaxprs, make_literal

MAX_FOLD_SIZE = 64
# a scalar given a shape stays a view of the scalar: the broadcast is free, the fusion pass
# reads it as a scalar operand, and simplify composes it into a broadcast of the literal
_SHAPE_ONLY = frozenset({"broadcast_in_dim", "reshape"})


def _foldable(eqn: Eqn) -> bool:
    prim = eqn.primitive
    if prim.collective or prim.name == "jit" or has_sub_jaxprs(eqn.params) or has_effects(eqn):
        return False
    if any(v.aval.size > MAX_FOLD_SIZE for v in eqn.outvars):
        return False
    if prim.name in _SHAPE_ONLY and eqn.invars[0].aval.ndim == 0 and eqn.outvars[0].aval.ndim:
        return False
    return True


def fold_rule(eqn: Eqn, walk: Walk) -> list[Atom] | None:
    """The equation's outputs as literals / new constvars when it can be folded, else None."""
    known = walk.known
    for a in eqn.invars:
        if type(a) is not Literal and a not in known:
            return None
    if not _foldable(eqn):
        return None
    if not walk.allow_new_consts and any(v.aval.ndim for v in eqn.outvars):
        return None
    args = [as_array(a.val if type(a) is Literal else known[a], a.aval) for a in eqn.invars]
    try:
        out = core._eval_impl(eqn.primitive, args, eqn.params)
    except Exception:  # noqa: BLE001  (left to fail at run time, where the error is located)
        return None
    outs = out if eqn.primitive.multiple_results else [out]
    # a compact copy of each result: it may be a view of a large constant operand
    values = [np.array(np.asarray(r._value if type(r) is Array else r), v.aval.dtype)
              for v, r in zip(eqn.outvars, outs)]
    if any(x.shape != v.aval.shape for x, v in zip(values, eqn.outvars)):
        return None
    return [make_literal(x, v.aval) if v.aval.ndim == 0 else
            walk.new_const(Array(x, v.aval.weak_type), v.aval)
            for x, v in zip(values, eqn.outvars)]


def fold_constants(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Evaluate the equations of ``closed`` whose operands are all known and whose outputs
    are small.

    Args:
      closed: the program; it is not modified.

    Returns:
      An equivalent ClosedJaxpr (``closed`` itself when nothing folds); folded equations are
      gone, constants they no longer need remain for ``dce_jaxpr``.
    """
    return forward(closed, (fold_rule,))
