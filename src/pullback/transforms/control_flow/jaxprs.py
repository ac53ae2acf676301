"""Transformations of whole sub-programs, the building blocks of the control-flow rules.

A control-flow primitive holds its body as a ClosedJaxpr; its jvp, batching, partial-evaluation
and transpose rules each build a new body by tracing a small Python function that interprets
the old one under the corresponding transformation (``jvp_jaxpr``, ``batch_jaxpr``,
``partial_eval_jaxpr``, ``transpose_jaxpr``). Bodies' constants are always concrete values:
anything traced that a body closes over is passed to the primitive as an operand.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, NamedTuple, Sequence

from ...primitives.rules import Zero, instantiate, tangent_aval
from ...tracer import core
from ...tracer.avals import ShapedArray
from ...tracer.ir import ClosedJaxpr, Jaxpr, Var
from ...tracer.staging import eval_jaxpr, trace_to_jaxpr
from ..jvp import jvp_flat
from ..partial_eval import PartialVal, PETrace, _tracers_to_jaxpr
from ..transpose import backward_pass
from ..vmap import BatchTrace, BatchTracer, _axis_env, moveaxis_to

def same_types(got: Sequence[ShapedArray], want: Sequence[ShapedArray]) -> bool:
    """Whether operands of avals ``got`` fit inputs ``want`` (count, shapes and dtypes): the
    control-flow primitives' abstract-eval check of their operands against their bodies."""
    return len(got) == len(want) and all(a.shape == w.shape and a.dtype == w.dtype
                                         for a, w in zip(got, want))


# ---- derived-program caches (one entry per body and rule arguments) ----

_caches: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def cached(closed: ClosedJaxpr, key: Any, build: Callable[[], Any]) -> Any:
    d = _caches.get(closed)
    if d is None:
        d = _caches[closed] = {}
    try:
        return d[key]
    except KeyError:
        d[key] = out = build()
        return out


# ---- jvp ----

def jvp_jaxpr(closed: ClosedJaxpr, nonzeros: Sequence[bool], instantiate_out: Sequence[bool]
              ) -> tuple[ClosedJaxpr, list[bool]]:
    """The body ``(*primals, *tangents of the nonzero inputs) -> (*primal outs, *tangents of
    the nonzero outputs)``, and which outputs have nonzero tangents (``instantiate_out``
    forces a tangent, materializing zeros)."""
    key = ("jvp", tuple(nonzeros), tuple(instantiate_out))
    return cached(closed, key, lambda: _jvp_jaxpr(closed, list(nonzeros), list(instantiate_out)))


def _jvp_jaxpr(closed, nonzeros, inst):
    avals = closed.in_avals
    n = len(avals)
    t_avals = [tangent_aval(a) for a, nz in zip(avals, nonzeros) if nz]
    box: list = []

    def f(*args: Any) -> list:
        it = iter(args[n:])
        ts = [next(it) if nz else Zero(tangent_aval(a)) for a, nz in zip(avals, nonzeros)]
        outs, tans, _ = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                 args[:n], ts, name="jvp of a sub-program")
        out_nz = [type(t) is not Zero or i for t, i in zip(tans, inst)]
        box.append(out_nz)
        return list(outs) + [instantiate(t) for t, nz in zip(tans, out_nz) if nz]

    jaxpr, _ = trace_to_jaxpr(f, list(avals) + t_avals, debug_name="jvp")
    return jaxpr, box[0]


def carry_fixpoint(flags_in: list[bool], step: Callable[[list[bool]], list[bool]]) -> list[bool]:
    """The least fixpoint of ``flags -> flags_in | step(flags)`` (monotone), for loop carries:
    a carry is nonzero / batched / unknown when its initial value is or the body makes it so."""
    flags = list(flags_in)
    for _ in range(len(flags) + 1):
        new = [a or b for a, b in zip(flags_in, step(flags))]
        if new == flags:
            return flags
        flags = [a or b for a, b in zip(flags, new)]
    return flags


# ---- batching ----

def batch_jaxpr(closed: ClosedJaxpr, axis: Any, batched: Sequence[bool],
                instantiate_out: Sequence[bool] | bool) -> tuple[ClosedJaxpr, list[bool]]:
    """The body over inputs whose batched entries carry a leading batch axis of ``axis.size``;
    batched outputs carry it leading too. Returns it and which outputs are batched."""
    inst = (tuple([instantiate_out] * len(closed.out_avals)) if isinstance(instantiate_out, bool)
            else tuple(instantiate_out))
    key = ("batch", axis, tuple(batched), inst)
    return cached(closed, key, lambda: _batch_jaxpr(closed, axis, list(batched), list(inst)))


def _batch_jaxpr(closed, axis, batched, inst):
    avals = [ShapedArray((axis.size,) + a.shape, a.dtype, a.weak_type) if b else a
             for a, b in zip(closed.in_avals, batched)]
    box: list = []

    def f(*args: Any) -> list:
        with core.new_main(BatchTrace, axis, debug_name="vmap of a sub-program") as main:
            _axis_env.append((axis.name, main))
            try:
                trace = BatchTrace(main)
                tracers = [BatchTracer(trace, x, 0 if b else None) for x, b in zip(args, batched)]
                outs = eval_jaxpr(closed.jaxpr, closed.consts, *tracers)
                outs = [trace.full_raise(o) for o in outs]
            finally:
                _axis_env.pop()
        out_b = [o.bdim is not None or i for o, i in zip(outs, inst)]
        box.append(out_b)
        return [moveaxis_to(o.val, o.bdim, 0, axis.size) if b else o.val
                for o, b in zip(outs, out_b)]

    jaxpr, _ = trace_to_jaxpr(f, avals, debug_name="vmap")
    return jaxpr, box[0]


# ---- partial evaluation ----

class Split(NamedTuple):
    """A body split by partial evaluation.

    ``known``: known inputs -> (known outputs, residuals). ``unknown``: (residuals, unknown
    inputs) -> unknown outputs. ``res_from_input[i]`` is the index (among the known inputs) of
    the input that residual i simply is, or None when the known part computes it.
    """
    known: ClosedJaxpr
    unknown: ClosedJaxpr
    out_unknown: list[bool]
    res_avals: list[ShapedArray]
    res_from_input: list[int | None]


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns: Sequence[bool],
                       instantiate_out: Sequence[bool] | bool) -> Split:
    inst = (tuple([instantiate_out] * len(closed.out_avals)) if isinstance(instantiate_out, bool)
            else tuple(instantiate_out))
    key = ("pe", tuple(unknowns), inst)
    return cached(closed, key, lambda: _partial_eval_jaxpr(closed, list(unknowns), list(inst)))


def _partial_eval_jaxpr(closed, unknowns, inst) -> Split:
    avals = closed.in_avals
    known_avals = [a for a, u in zip(avals, unknowns) if not u]
    box: dict = {}

    def fun_known(*known_vals: Any) -> list:
        with core.new_main(PETrace, debug_name="partial_eval of a sub-program") as main:
            trace = PETrace(main)
            it = iter(known_vals)
            tracers = [trace.new_arg(PartialVal.unknown(a) if u else PartialVal.known(next(it)))
                       for a, u in zip(avals, unknowns)]
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *tracers)
            outs = [trace.full_raise(o) for o in outs]
            out_uk = [not o.pval.is_known or i for o, i in zip(outs, inst)]
            unk_in = [t for t, u in zip(tracers, unknowns) if u]
            unk_out = [trace.instantiate_const(o) for o, u in zip(outs, out_uk) if u]
            unk = _tracers_to_jaxpr(unk_in, unk_out)
        known_outs = [o.pval.const for o, u in zip(outs, out_uk) if not u]
        # residuals: the traced values the unknown part needs; concrete values stay its consts
        j = unk.jaxpr
        res_vars, res_vals, static_vars, static_vals = [], [], [], []
        for v, c in zip(j.constvars, unk.consts):
            if isinstance(c, core.Tracer):
                res_vars.append(v)
                res_vals.append(c)
            else:
                static_vars.append(v)
                static_vals.append(c)
        ids = {id(x): i for i, x in enumerate(known_vals)}
        box["unknown"] = ClosedJaxpr(Jaxpr(static_vars, res_vars + j.invars, j.eqns, j.outvars),
                                     static_vals)
        box["out_uk"] = out_uk
        box["res_avals"] = [v.aval for v in res_vars]
        box["res_from_input"] = [ids.get(id(c)) for c in res_vals]
        return known_outs + res_vals

    known, _ = trace_to_jaxpr(fun_known, known_avals, debug_name="known part")
    return Split(known, box["unknown"], box["out_uk"], box["res_avals"], box["res_from_input"])


# ---- transposition ----

def transpose_jaxpr(closed: ClosedJaxpr, linear: Sequence[bool]) -> ClosedJaxpr:
    """The body ``(*non-linear inputs, *output cotangents) -> cotangents of the linear inputs``
    (zeros materialized)."""
    return cached(closed, ("transpose", tuple(linear)),
                  lambda: _transpose_jaxpr(closed, list(linear)))


def _transpose_jaxpr(closed, linear):
    avals = closed.in_avals
    nonlin_avals = [a for a, lin in zip(avals, linear) if not lin]
    ct_avals = [tangent_aval(a) for a in closed.out_avals]
    n = len(nonlin_avals)

    def f(*args: Any) -> list:
        it = iter(args[:n])
        vals = [None if lin else next(it) for lin in linear]
        cts = backward_pass(closed.jaxpr, closed.consts, linear, vals, list(args[n:]))
        return [instantiate(c) for c, lin in zip(cts, linear) if lin]

    jaxpr, _ = trace_to_jaxpr(f, nonlin_avals + ct_avals, debug_name="transpose")
    return jaxpr


def reorder(closed: ClosedJaxpr, in_order: Sequence[int], out_order: Sequence[int]
            ) -> ClosedJaxpr:
    """The same program with its inputs and outputs permuted (new position i takes old
    position order[i])."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [j.invars[i] for i in in_order], j.eqns,
                             [j.outvars[i] for i in out_order]), closed.consts)


def interleave(groups: Sequence[int], nflags: Sequence[Sequence[bool]]) -> list[int]:
    """Positions that turn ``(*group_0..., *group_k..., *extra_0..., *extra_k...)`` into
    ``(*group_0, *extra_0, ..., *group_k, *extra_k)``, where group i has ``groups[i]`` entries
    and extra_i holds one entry per True in ``nflags[i]`` (the layout of jvp bodies: primals
    first, then the tangents, regrouped as scan's consts/carry/xs)."""
    n = sum(groups)
    starts_p, starts_t, p, t = [], [], 0, n
    for g, flags in zip(groups, nflags):
        starts_p.append(p)
        starts_t.append(t)
        p += g
        t += sum(flags)
    order = []
    for g, flags, sp, st in zip(groups, nflags, starts_p, starts_t):
        order += list(range(sp, sp + g)) + list(range(st, st + sum(flags)))
    return order


def with_unused_inputs(closed: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """The same program taking extra, ignored inputs of ``avals`` after its own."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars + [Var(a) for a in avals], j.eqns,
                             j.outvars), closed.consts)


def take_outputs(closed: ClosedJaxpr, keep: Sequence[int]) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, j.eqns, [j.outvars[i] for i in keep]),
                       closed.consts)
