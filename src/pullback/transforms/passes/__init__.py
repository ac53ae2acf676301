"""Target-independent Jaxpr passes that jit's compiler runs before lowering.

``optimize`` inlines nested ``jit`` calls, then makes one forward walk (algebraic
simplification, constant folding and common-subexpression elimination, each equation offered
to the three rules in that order, after its operands' substitutions) and one dead-code
elimination; that reaches the fixed point of all five passes. Last, a residual add feeding a
norm is fused into it (norm_fusion.py), float32 convolution outputs are stored channels-last
(conv_layout.py), and element-wise residuals read after a matmul or
kernel are recomputed there instead of stored when that stores fewer bytes (remat.py). Sub-jaxprs in params (cond
branches, loop bodies, custom-derivative calls) go through the same pipeline, keeping their
signature. No pass mutates its input: traced programs are cached and reused.
"""
from __future__ import annotations

from ...tracer.ir import ClosedJaxpr, Eqn, Jaxpr
from ._rewrite import forward, has_sub_jaxprs, map_sub_jaxprs, same_outputs
from .conv_layout import choose_conv_layouts
from .cse import cse_jaxpr, cse_rule
from .dce import dce_jaxpr
from .fold import fold_constants, fold_rule
from .inline import inline_jit_calls
from .norm_fusion import fuse_residual_norms
from .remat import remat_residuals
from .scan_hoist import hoist_scans
from .simplify import simplify_jaxpr, simplify_rule

__all__ = ["optimize", "inline_jit_calls", "dce_jaxpr", "cse_jaxpr", "fold_constants",
           "simplify_jaxpr", "hoist_scans"]

_RULES = (simplify_rule, fold_rule, cse_rule)


class _Pipeline:
    """One ``optimize`` call: sub-jaxprs are optimized once each (by identity), so equations
    sharing a sub-jaxpr still share it afterwards (and CSE can still merge them)."""

    def __init__(self) -> None:
        self.memo: dict[int, tuple[object, object]] = {}

    def closed(self, closed: ClosedJaxpr, allow_new_consts: bool = True) -> ClosedJaxpr:
        closed = hoist_scans(self._sub_jaxprs(inline_jit_calls(closed)))
        # One round reaches the fixed point, so none is repeated (that would double the cost):
        # each rule reads only its equation and the producers of its operands, which are
        # final when the walk reaches it, and dropping dead equations enables no rule. The
        # tests check that optimize is idempotent.
        # the residual-add fusion last: the fused equation has no derivative rules, and no
        # rule above needs to see through it
        # element-wise residuals recomputed where read late (remat.py): after CSE, which would
        # merge the clones back
        # convolution layouts after DCE (dead readers would pin a layout), before the
        # residual-norm fusion and remat, which reason about the final equations
        return remat_residuals(fuse_residual_norms(choose_conv_layouts(
            dce_jaxpr(forward(closed, _RULES, allow_new_consts)))))

    def sub_closed(self, closed: ClosedJaxpr) -> ClosedJaxpr:
        hit = self.memo.get(id(closed))
        if hit is None:
            out = self.closed(closed)
            assert same_outputs(out.out_avals, closed.out_avals), "a pass changed a signature"
            self.memo[id(closed)] = hit = (closed, out)  # the key object kept alive
        return hit[1]

    def sub_jaxpr(self, jaxpr: Jaxpr) -> Jaxpr:
        # a bare Jaxpr has nowhere to put new constants: fold only to scalar literals
        hit = self.memo.get(id(jaxpr))
        if hit is None:
            out = self.closed(ClosedJaxpr(jaxpr, []), allow_new_consts=False).jaxpr
            self.memo[id(jaxpr)] = hit = (jaxpr, out)
        return hit[1]

    def _sub_jaxprs(self, closed: ClosedJaxpr) -> ClosedJaxpr:
        jaxpr = closed.jaxpr
        eqns, changed = [], False
        for eqn in jaxpr.eqns:
            if has_sub_jaxprs(eqn.params):
                params = map_sub_jaxprs(eqn.params, self.sub_closed, self.sub_jaxpr)
                if params is not eqn.params:
                    eqn = Eqn(eqn.primitive, eqn.invars, params, eqn.outvars, eqn.source_info)
                    changed = True
            eqns.append(eqn)
        if not changed:
            return closed
        return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars),
                           closed.consts)


def optimize(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Run the pass pipeline on ``closed`` and on every sub-jaxpr in its params.

    Args:
      closed: a traced program; it is not modified.

    Returns:
      An equivalent ClosedJaxpr with the same inputs and output avals: nested ``jit`` calls
      inlined, exact algebraic simplifications applied, small constant computations folded,
      equal equations merged and dead ones dropped.
    """
    return _Pipeline().closed(closed)
