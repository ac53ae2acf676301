"""``scan``: a loop over the leading axis of its inputs that carries a state, as ``lax.scan``.

The primitive's operands are ``(*consts, *init carry, *xs)``; its body maps
``(*consts, *carry, *x slices) -> (*new carry, *y slices)`` and its results are the final carry
and the stacked ys. Rules:

- jvp: a scan of the jvp of the body (carries' tangents found by a fixpoint);
- partial evaluation (reverse mode): a known scan computing the primal results and the
  residuals the tangent part needs (stacked per step; residuals that are simply a const or an
  xs operand are passed through, not stacked), and an unknown scan of the linear rest;
- transpose: a scan in the opposite direction over the transposed body, accumulating the
  consts' cotangents in its carry;
- batching: a scan of the batched body (carries' batchedness found by a fixpoint).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...primitives.rules import (Zero, add_tangents, instantiate, is_undefined, move_bdim,
                                 tangent_aval, zeros_like_aval)
from ...tracer import core
from ...tracer.array import Array
from ...tracer.avals import ShapedArray
from ...tracer.core import Primitive
from ...tracer.ir import ClosedJaxpr, Jaxpr, Literal
from ...tracer.staging import eval_jaxpr, trace_to_jaxpr
from ..jit import run_compiled_eqn
from . import jaxprs as J

scan_p = Primitive("scan", multiple_results=True)


def _split(seq: Any, num_consts: int, num_carry: int) -> tuple[list, list, list]:
    seq = list(seq)
    return seq[:num_consts], seq[num_consts:num_consts + num_carry], seq[num_consts + num_carry:]


def _stacked(a: ShapedArray, length: int) -> ShapedArray:
    return ShapedArray((length,) + a.shape, a.dtype, a.weak_type)


def _unstacked(a: ShapedArray) -> ShapedArray:
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type)


def _abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse, unroll):
    want = jaxpr.in_avals
    if len(avals) != len(want):
        raise TypeError(f"scan: the body takes {len(want)} operands, got {len(avals)}")
    for i, (a, w) in enumerate(zip(avals, want)):
        if i >= num_consts + num_carry:
            if a.ndim == 0 or a.shape[0] != length:
                raise TypeError(f"scan: xs operand {i - num_consts - num_carry} must have a "
                                f"leading axis of length {length}, got {a.str_short()}")
            a = _unstacked(a)
        if a.shape != w.shape or a.dtype != w.dtype:
            raise TypeError(f"scan: operand {i} has type {a.str_short()} but the body expects "
                            f"{w.str_short()}")
    outs = jaxpr.out_avals
    return list(outs[:num_carry]) + [_stacked(a, length) for a in outs[num_carry:]]


def _impl(*args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    outs = run_compiled_eqn(scan_p, args, dict(
        jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry, length=length,
        reverse=reverse, unroll=unroll))
    if outs is not None:  # (one compiled program: see jit.run_compiled_eqn)
        return outs
    consts, carry, xs = _split(args, num_consts, num_carry)
    x_avals = jaxpr.in_avals[num_consts + num_carry:]
    y_avals = jaxpr.out_avals[num_carry:]
    xs = [x._value if type(x) is Array else np.asarray(x, a.dtype) for x, a in zip(xs, x_avals)]
    ys = [np.empty((length,) + a.shape, a.dtype) for a in y_avals]
    body, body_consts = jaxpr.jaxpr, jaxpr.consts
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        x_i = [Array._new(x[i, ...], a) for x, a in zip(xs, x_avals)]
        outs = eval_jaxpr(body, body_consts, *consts, *carry, *x_i)
        carry = outs[:num_carry]
        for buf, y in zip(ys, outs[num_carry:]):
            buf[i, ...] = y._value if type(y) is Array else y  # the container's copy
    return list(carry) + [Array._new(b, _stacked(a, length)) for b, a in zip(ys, y_avals)]


_impl.interpreted = True


# ---- jvp ----

def _jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse, unroll):
    nz = [type(t) is not Zero for t in tangents]
    const_nz, init_nz, xs_nz = _split(nz, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry

    def step(carry_nz):
        _, out_nz = J.jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, [False] * len(jaxpr.out_avals))
        return out_nz[:num_carry]

    carry_nz = J.carry_fixpoint(init_nz, step)
    body, out_nz = J.jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * n_ys)
    ys_nz = out_nz[num_carry:]
    n_xs = len(xs_nz)
    body = J.reorder(body, J.interleave([num_consts, num_carry, n_xs], [const_nz, carry_nz, xs_nz]),
                     J.interleave([num_carry, n_ys], [carry_nz, ys_nz]))
    c, init, xs = _split(primals, num_consts, num_carry)
    ct, init_t, xs_t = _split(tangents, num_consts, num_carry)
    init_t = [instantiate(t) for t, f in zip(init_t, carry_nz) if f]
    ct = [t for t, f in zip(ct, const_nz) if f]
    xs_t = [t for t, f in zip(xs_t, xs_nz) if f]
    outs = scan_p.bind(*c, *ct, *init, *init_t, *xs, *xs_t, jaxpr=body,
                       num_consts=num_consts + len(ct), num_carry=num_carry + len(init_t),
                       length=length, reverse=reverse, unroll=unroll)
    carry_out, carry_t = outs[:num_carry], outs[num_carry:num_carry + len(init_t)]
    rest = outs[num_carry + len(init_t):]
    ys, ys_t = rest[:n_ys], rest[n_ys:]
    it_c, it_y = iter(carry_t), iter(ys_t)
    avals = _abstract_eval(*[core.get_aval(p) for p in primals], jaxpr=jaxpr,
                           num_consts=num_consts, num_carry=num_carry, length=length,
                           reverse=reverse, unroll=unroll)
    t_out = [next(it_c) if f else Zero(tangent_aval(a))
             for f, a in zip(carry_nz, avals[:num_carry])]
    t_out += [next(it_y) if f else Zero(tangent_aval(a)) for f, a in zip(ys_nz, avals[num_carry:])]
    return list(carry_out) + list(ys), t_out


# ---- partial evaluation ----

def _partial_eval(trace, tracers, *, jaxpr, num_consts, num_carry, length, reverse, unroll):
    params = dict(length=length, reverse=reverse, unroll=unroll)
    uk = [not t.pval.is_known for t in tracers]
    const_uk, init_uk, xs_uk = _split(uk, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry

    def step(carry_uk):
        s = J.partial_eval_jaxpr(jaxpr, const_uk + carry_uk + xs_uk, carry_uk + [False] * n_ys)
        return s.out_unknown[:num_carry]

    carry_uk = J.carry_fixpoint(init_uk, step)
    split = J.partial_eval_jaxpr(jaxpr, const_uk + carry_uk + xs_uk, carry_uk + [False] * n_ys)
    ys_uk = split.out_unknown[num_carry:]
    consts, init, xs = _split(tracers, num_consts, num_carry)
    k_consts = [t for t, u in zip(consts, const_uk) if not u]
    k_init = [t for t, u in zip(init, carry_uk) if not u]
    k_xs = [t for t, u in zip(xs, xs_uk) if not u]
    n_kc, n_kcar = len(k_consts), len(k_init)
    # residuals that are a known const or xs operand are passed through; others are stacked
    src = split.res_from_input
    res_const = [i for i, s in enumerate(src) if s is not None and s < n_kc]
    res_xs_in = [i for i, s in enumerate(src) if s is not None and s >= n_kc + n_kcar]
    res_stack = [i for i in range(len(src)) if i not in res_const and i not in res_xs_in]
    kj = split.known.jaxpr
    n_known_out = len(kj.outvars) - len(src)
    # residuals computed from the consts alone are the same every step: compute them once
    invariant_eqns, variant = _split_by_variance(kj, n_kc)
    invariant = [isinstance(a, Literal) or a.id not in variant
                 for a in (kj.outvars[n_known_out + i] for i in res_stack)]
    res_hoist = [i for i, inv in zip(res_stack, invariant) if inv]
    res_stack = [i for i, inv in zip(res_stack, invariant) if not inv]
    hoisted = []
    if res_hoist:
        hj = Jaxpr(kj.constvars, kj.invars[:n_kc], invariant_eqns,
                     [kj.outvars[n_known_out + i] for i in res_hoist])
        hoisted = eval_jaxpr(hj, split.known.consts, *[t.pval.const for t in k_consts])
    known_body = ClosedJaxpr(
        Jaxpr(kj.constvars, kj.invars, kj.eqns,
                kj.outvars[:n_known_out] + [kj.outvars[n_known_out + i] for i in res_stack]),
        split.known.consts)
    known_vals = [t.pval.const for t in k_consts + k_init + k_xs]
    k_out = scan_p.bind(*known_vals, jaxpr=known_body, num_consts=n_kc, num_carry=n_kcar,
                        **params)
    n_k_carry_out = sum(1 for u in carry_uk if not u)
    stacked = k_out[n_known_out:]
    k_carry_out, k_ys = k_out[:n_k_carry_out], k_out[n_k_carry_out:n_known_out]

    # the unknown scan: consts = pass-through residual consts + unknown consts; carry = the
    # unknown carries; xs = stacked residuals + pass-through residual xs + unknown xs
    n_res = len(src)
    uj = split.unknown
    u_consts = [t for t, u in zip(consts, const_uk) if u]
    u_init = [t for t, u in zip(init, carry_uk) if u]
    u_xs = [t for t, u in zip(xs, xs_uk) if u]
    n_uc, n_ucar = len(u_consts), len(u_init)
    in_order = (res_const + res_hoist + list(range(n_res, n_res + n_uc)) +
                list(range(n_res + n_uc, n_res + n_uc + n_ucar)) + res_stack + res_xs_in +
                list(range(n_res + n_uc + n_ucar, len(uj.jaxpr.invars))))
    unknown_body = J.reorder(uj, in_order, range(len(uj.jaxpr.outvars)))
    known_inputs = k_consts + k_init + k_xs
    ins = ([known_inputs[src[i]] for i in res_const] + [trace.pure(h) for h in hoisted] +
           u_consts + u_init +
           [trace.pure(v) for v in stacked] + [known_inputs[src[i]] for i in res_xs_in] + u_xs)
    u_out = trace.stage(scan_p, ins, dict(jaxpr=unknown_body,
                                          num_consts=len(res_const) + len(res_hoist) + n_uc,
                                          num_carry=n_ucar, **params))
    it_kc, it_ky = iter(k_carry_out), iter(k_ys)
    it_u = iter(u_out)
    out = [next(it_u) if u else trace.pure(next(it_kc)) for u in carry_uk]
    out += [next(it_u) if u else trace.pure(next(it_ky)) for u in ys_uk]
    return out


def _split_by_variance(jaxpr: Jaxpr, n_consts: int) -> tuple[list, set[int]]:
    """The equations computable from the first ``n_consts`` inputs alone (loop-invariant, in
    order), and the ids of every variable that depends on the other inputs."""
    variant = {v.id for v in jaxpr.invars[n_consts:]}
    invariant = []
    for e in jaxpr.eqns:
        if any(not isinstance(a, Literal) and a.id in variant for a in e.invars):
            variant.update(o.id for o in e.outvars)
        else:
            invariant.append(e)
    return invariant, variant


# ---- transpose ----

def _transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    consts, init, xs = _split(args, num_consts, num_carry)
    c_lin = [is_undefined(c) for c in consts]
    x_lin = [is_undefined(x) for x in xs]
    # A known init carry in a linear program is a materialized zero (an instantiated tangent):
    # the carry is still transposed as linear, and that init gets no cotangent (as in JAX).
    init_lin = [is_undefined(c) for c in init]
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    ct_carry = [instantiate(c) for c in ct_carry]
    ct_ys = [instantiate(c) for c in ct_ys]
    res_c = [c for c, lin in zip(consts, c_lin) if not lin]
    res_x = [x for x, lin in zip(xs, x_lin) if not lin]
    lin_c_avals = [tangent_aval(c.aval) for c, lin in zip(consts, c_lin) if lin]
    acc0 = [zeros_like_aval(a) for a in lin_c_avals]
    body_t = J.transpose_jaxpr(jaxpr, c_lin + [True] * num_carry + x_lin)
    # body_t: (res consts, res xs, ct carry, ct ys) -> (ct lin consts, ct carry in, ct lin xs);
    # the scan needs (res consts, acc, ct carry, res xs, ct ys) -> (acc', ct carry', ct xs)
    n_rc, n_rx, n_acc, n_lx = len(res_c), len(res_x), len(acc0), sum(x_lin)
    body = _accumulating_body(body_t, n_rc, n_acc, num_carry, n_rx, len(ct_ys))
    outs = scan_p.bind(*res_c, *acc0, *ct_carry, *res_x, *ct_ys, jaxpr=body,
                       num_consts=n_rc, num_carry=n_acc + num_carry, length=length,
                       reverse=not reverse, unroll=unroll)
    ct_consts, ct_init, ct_xs = outs[:n_acc], outs[n_acc:n_acc + num_carry], outs[n_acc + num_carry:]
    it_c, it_x = iter(ct_consts), iter(ct_xs)
    assert len(ct_xs) == n_lx
    return ([next(it_c) if lin else None for lin in c_lin] +
            [c if lin else None for c, lin in zip(ct_init, init_lin)] +
            [next(it_x) if lin else None for lin in x_lin])


def _accumulating_body(body_t, n_rc, n_acc, n_carry, n_rx, n_cty):
    def build():
        avals = body_t.in_avals
        rc_av, rx_av = avals[:n_rc], avals[n_rc:n_rc + n_rx]
        ctc_av = avals[n_rc + n_rx:n_rc + n_rx + n_carry]
        cty_av = avals[n_rc + n_rx + n_carry:]
        acc_av = body_t.out_avals[:n_acc]

        def f(*a):
            rc, acc = a[:n_rc], a[n_rc:n_rc + n_acc]
            ctc = a[n_rc + n_acc:n_rc + n_acc + n_carry]
            rx = a[n_rc + n_acc + n_carry:n_rc + n_acc + n_carry + n_rx]
            cty = a[n_rc + n_acc + n_carry + n_rx:]
            outs = eval_jaxpr(body_t.jaxpr, body_t.consts, *rc, *rx, *ctc, *cty)
            ct_c, ct_carry, ct_x = outs[:n_acc], outs[n_acc:n_acc + n_carry], outs[n_acc + n_carry:]
            return [add_tangents(x, y) for x, y in zip(acc, ct_c)] + list(ct_carry) + list(ct_x)

        jaxpr, _ = trace_to_jaxpr(f, list(rc_av) + list(acc_av) + list(ctc_av) + list(rx_av) +
                                  list(cty_av), debug_name="transpose(scan)")
        return jaxpr
    return J.cached(body_t, ("accumulate", n_rc, n_acc, n_carry, n_rx, n_cty), build)


# ---- batching ----

def _batch(vals, dims, *, axis_info, jaxpr, num_consts, num_carry, length, reverse, unroll):
    size = axis_info.size
    b = [d is not None for d in dims]
    const_b, init_b, xs_b = _split(b, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry

    def step(carry_b):
        _, out_b = J.batch_jaxpr(jaxpr, axis_info, const_b + carry_b + xs_b,
                                 [False] * len(jaxpr.out_avals))
        return out_b[:num_carry]

    carry_b = J.carry_fixpoint(init_b, step)
    body, out_b = J.batch_jaxpr(jaxpr, axis_info, const_b + carry_b + xs_b,
                                carry_b + [False] * n_ys)
    consts, init, xs = _split(vals, num_consts, num_carry)
    cd, idm, xd = _split(dims, num_consts, num_carry)
    consts = [move_bdim(v, d, 0, size) if f else v for v, d, f in zip(consts, cd, const_b)]
    init = [move_bdim(v, d, 0, size) if f else v for v, d, f in zip(init, idm, carry_b)]
    # the scanned axis stays in front: xs carry their batch axis at 1 (the body sees it at 0)
    xs = [move_bdim(v, d, 1, size) if f else v for v, d, f in zip(xs, xd, xs_b)]
    outs = scan_p.bind(*consts, *init, *xs, jaxpr=body, num_consts=num_consts,
                       num_carry=num_carry, length=length, reverse=reverse, unroll=unroll)
    out_dims = [0 if f else None for f in out_b[:num_carry]]
    out_dims += [1 if f else None for f in out_b[num_carry:]]
    return outs, out_dims


_batch.needs_axis = True

scan_p.abstract_eval = _abstract_eval
scan_p.cpu = _impl
scan_p.reference = _impl
scan_p.jvp = _jvp
scan_p.partial_eval = _partial_eval
scan_p.transpose = _transpose
scan_p.batch = _batch
