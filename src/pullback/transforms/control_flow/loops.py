"""``while``: a loop whose trip count depends on the values, as ``lax.while_loop``.

Operands are ``(*cond consts, *body consts, *init)``. Rules: jvp (a loop over primals and
tangents; the predicate sees only primals); partial evaluation (a known loop computes the known
carries; the unknown ones are recomputed by a staged copy of the whole loop, so ``linearize``
works); no transpose (reverse mode raises, pointing at ``scan``/``fori_loop`` with static
bounds, as in JAX); batching (a batched predicate runs until every lane is done, each lane's
carry frozen once its predicate is false).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...primitives.elementwise import select_n_p
from ...primitives.movement import broadcast_in_dim_p
from ...primitives.reductions import reduce_or_p
from ...primitives.rules import Zero, instantiate, move_bdim, tangent_aval
from ...tracer.array import Array
from ...tracer.core import Primitive
from ...tracer.staging import eval_jaxpr, trace_to_jaxpr
from ..jit import run_compiled_eqn
from . import jaxprs as J

while_p = Primitive("while", multiple_results=True)


def _split(args: Any, cond_nconsts: int, body_nconsts: int) -> tuple[list, list, list]:
    args = list(args)
    return (args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts],
            args[cond_nconsts + body_nconsts:])


def _abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, init = _split(avals, cond_nconsts, body_nconsts)
    for what, got, want in (("cond", cc + init, cond_jaxpr.in_avals),
                            ("body", bc + init, body_jaxpr.in_avals)):
        if not J.same_types(got, want):
            raise TypeError(f"while: the {what} program takes "
                            f"{[w.str_short() for w in want]}, got "
                            f"{[a.str_short() for a in got]}")
    return list(body_jaxpr.out_avals)


def _impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    outs = run_compiled_eqn(while_p, args, dict(
        cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
        body_nconsts=body_nconsts))
    if outs is not None:  # (one compiled program: see jit.run_compiled_eqn)
        return outs
    cc, bc, carry = _split(args, cond_nconsts, body_nconsts)
    while True:
        pred = eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cc, *carry)[0]
        if not bool(np.asarray(pred._value if type(pred) is Array else pred)):
            return list(carry)
        carry = eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *bc, *carry)


_impl.interpreted = True


def _jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nz = [type(t) is not Zero for t in tangents]
    _, bc_nz, init_nz = _split(nz, cond_nconsts, body_nconsts)
    n = len(init_nz)

    def step(carry_nz):
        return J.jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, [False] * n)[1]

    carry_nz = J.carry_fixpoint(init_nz, step)
    body, _ = J.jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz)
    body = J.reorder(body, J.interleave([body_nconsts, n], [bc_nz, carry_nz]),
                     range(len(body.jaxpr.outvars)))
    cc, bc, init = _split(primals, cond_nconsts, body_nconsts)
    _, bc_t, init_t = _split(tangents, cond_nconsts, body_nconsts)
    bc_t = [t for t, f in zip(bc_t, bc_nz) if f]
    init_t = [instantiate(t) for t, f in zip(init_t, carry_nz) if f]
    cond = J.with_unused_inputs(cond_jaxpr, [tangent_aval(a) for a, f in
                                             zip(body_jaxpr.out_avals, carry_nz) if f])
    outs = while_p.bind(*cc, *bc, *bc_t, *init, *init_t, cond_jaxpr=cond, body_jaxpr=body,
                        cond_nconsts=cond_nconsts, body_nconsts=body_nconsts + len(bc_t))
    it = iter(outs[n:])
    return outs[:n], [next(it) if f else Zero(tangent_aval(a))
                      for f, a in zip(carry_nz, body_jaxpr.out_avals)]


def _partial_eval(trace, tracers, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    uk = [not t.pval.is_known for t in tracers]
    cc_uk, bc_uk, init_uk = _split(uk, cond_nconsts, body_nconsts)
    n = len(init_uk)
    if any(cc_uk):
        return trace.stage(while_p, tracers, params)

    def step(carry_uk):
        return J.partial_eval_jaxpr(body_jaxpr, bc_uk + carry_uk, carry_uk).out_unknown

    carry_uk = J.carry_fixpoint(init_uk, step)
    cond_split = J.partial_eval_jaxpr(cond_jaxpr, [False] * cond_nconsts + carry_uk, False)
    if all(carry_uk) or cond_split.out_unknown[0]:
        return trace.stage(while_p, tracers, params)
    split = J.partial_eval_jaxpr(body_jaxpr, bc_uk + carry_uk, carry_uk)
    n_known = n - sum(carry_uk)
    body_known = J.take_outputs(split.known, range(n_known))
    cond_known = J.take_outputs(cond_split.known, [0])
    cc, bc, init = _split(tracers, cond_nconsts, body_nconsts)
    k_bc = [t.pval.const for t, u in zip(bc, bc_uk) if not u]
    k_init = [t.pval.const for t, u in zip(init, carry_uk) if not u]
    known = while_p.bind(*[t.pval.const for t in cc], *k_bc, *k_init, cond_jaxpr=cond_known,
                         body_jaxpr=body_known, cond_nconsts=cond_nconsts,
                         body_nconsts=len(k_bc))
    # the unknown carries: the whole loop again, staged (it recomputes the known carries)
    staged = trace.stage(while_p, tracers, params)
    it = iter(known)
    return [s if u else trace.pure(next(it)) for s, u in zip(staged, carry_uk)]


def _transpose(cts, *args, **params):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values: the number of iterations is not known when the program is "
        "traced. Try using lax.scan, or lax.fori_loop with static (Python int) start/stop "
        "values, which lowers to a scan.")


def _batch(vals, dims, *, axis_info, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size = axis_info.size
    b = [d is not None for d in dims]
    cc_b, bc_b, init_b = _split(b, cond_nconsts, body_nconsts)
    n = len(init_b)

    def step(carry_b):
        return J.batch_jaxpr(body_jaxpr, axis_info, bc_b + carry_b, False)[1]

    carry_b = J.carry_fixpoint(init_b, step)
    pred_b = J.batch_jaxpr(cond_jaxpr, axis_info, cc_b + carry_b, False)[1][0]
    if pred_b:
        carry_b = [True] * n
    cond_b, _ = J.batch_jaxpr(cond_jaxpr, axis_info, cc_b + carry_b, False)
    body_b, _ = J.batch_jaxpr(body_jaxpr, axis_info, bc_b + carry_b, carry_b)
    cc, bc, init = _split(vals, cond_nconsts, body_nconsts)
    cd, bd, idm = _split(dims, cond_nconsts, body_nconsts)
    cc = [move_bdim(v, d, 0, size) if d is not None else v for v, d in zip(cc, cd)]
    bc = [move_bdim(v, d, 0, size) if d is not None else v for v, d in zip(bc, bd)]
    init = [move_bdim(v, d, 0, size) if f else v for v, d, f in zip(init, idm, carry_b)]
    if not pred_b:
        outs = while_p.bind(*cc, *bc, *init, cond_jaxpr=cond_b, body_jaxpr=body_b,
                            cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
        return outs, [0 if f else None for f in carry_b]
    cond_any, body_masked = J.cached(cond_b, ("masked", body_b, cond_nconsts),
                                     lambda: _masked_loop(cond_b, body_b, cond_nconsts))
    outs = while_p.bind(*cc, *cc, *bc, *init, cond_jaxpr=cond_any, body_jaxpr=body_masked,
                        cond_nconsts=cond_nconsts, body_nconsts=cond_nconsts + body_nconsts)
    return outs, [0] * n


_batch.needs_axis = True


def _masked_loop(cond_b, body_b, ncc):
    """A loop running while any lane's predicate holds, whose body leaves finished lanes
    unchanged."""

    def cond_any(*args):
        pred = eval_jaxpr(cond_b.jaxpr, cond_b.consts, *args)[0]
        return reduce_or_p.bind(pred, axes=(0,))

    def body(*args):
        cc, rest = args[:ncc], args[ncc:]
        carry = rest[len(rest) - len(body_b.out_avals):]
        pred = eval_jaxpr(cond_b.jaxpr, cond_b.consts, *cc, *carry)[0]
        new = eval_jaxpr(body_b.jaxpr, body_b.consts, *rest)
        out = []
        for old, nw in zip(carry, new):
            p = broadcast_in_dim_p.bind(pred, shape=tuple(nw.shape), broadcast_dimensions=(0,))
            out.append(select_n_p.bind(p, old, nw))
        return out

    cond_avals = cond_b.in_avals
    c, _ = trace_to_jaxpr(cond_any, cond_avals, debug_name="while cond (batched)")
    bo, _ = trace_to_jaxpr(body, list(cond_avals[:ncc]) + list(body_b.in_avals),
                           debug_name="while body (batched)")
    return c, bo


while_p.abstract_eval = _abstract_eval
while_p.cpu = _impl
while_p.reference = _impl
while_p.jvp = _jvp
while_p.partial_eval = _partial_eval
while_p.transpose = _transpose
while_p.batch = _batch
