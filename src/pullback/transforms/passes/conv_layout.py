"""Choosing a convolution's layout: channels-last activations inside a compiled program.

The float32 convolution kernels compute pixel-major (channels innermost) whatever the operands'
layouts, so a channels-first (NCHW) output costs a transposed store, and the bias + activation
epilogue can follow the kernel's finished rows only when those rows are pixels. A program
written channels-first (JAX's default dimension numbers, PyTorch's layout) therefore runs
faster when its activations are stored channels-last, and nothing outside the program can
tell: the layout of an intermediate value is the compiler's choice.

This pass makes that choice. A *candidate* convolution (float32, 1 or 2 spatial dims, no
feature or batch groups, an output with more pixels than the kernel has taps -- an activation,
not a kernel gradient -- and its features not already innermost) gets output dimension
numbers that store it channels-last. Its output is then *physical*: the logical value is
``transpose(physical, perm)``. The permutation travels forward through the equations that do
not care about layout, rewritten to work on the physical arrays:

- element-wise ops (their other operands converted: a broadcast re-broadcast to the physical
  shape, anything else transposed once),
- window reductions and their derivatives (pooling): the geometry is permuted,
- convolutions reading it (the dimension numbers say where each dim is),
- reductions over axes (a bias gradient), whose output keeps what is left of the permutation,
- transposes (composed),
- custom-derivative calls (``nn.relu`` is one): their body is inlined, as the compiler would
  inline it anyway, and its equations follow these rules.

Any other reader (a reshape before a dense layer, a matmul, the program's outputs, a loop)
gets the logical value, materialized by one ``transpose`` right before its first such reader.
A convolution whose layout reaches no other convolution or pooling op keeps its own layout:
the transpose back would cost what the layout saves.
Element-wise results are bit-identical; a reduction over permuted axes (the bias gradient)
may add in another order, so the tests compare with the pass off to float tolerance.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...primitives.conv import ConvDimensionNumbers, conv_general_dilated_p
from ...primitives.elementwise import KERNEL_ROWS
from ...primitives.movement import broadcast_in_dim_p, reshape_p, transpose_p
from ...primitives.reduce_window import GEOMETRY
from ...tracer.avals import ShapedArray
from ...tracer.ir import Atom, ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from .dce import dce_jaxpr

# False: programs compiled from now on keep the layouts they were written in (tests compare).
enabled = True

_EWISE_EXTRA = {"select_n", "convert_element_type", "stop_gradient", "copy"}
_WINDOW_OPS = {"reduce_window_sum", "reduce_window_max", "reduce_window_min",
               "reduce_window_mul", "reduce_window_sum_transpose", "select_and_scatter_add",
               "select_and_gather_add"}
_REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"}
# call-like equations whose body runs in place of the call once compiled (the program is
# final: no transformation needs their custom rules any more)
_CALLS = {"custom_jvp_call", "custom_vjp_call"}

Perm = tuple[int, ...]


def _inverse(perm: Perm) -> Perm:
    return tuple(int(i) for i in np.argsort(perm))


def _permuted(aval: ShapedArray, order: Perm) -> ShapedArray:
    """The aval of ``transpose(x, order)``."""
    return aval.update(shape=tuple(aval.shape[d] for d in order))


def _is_candidate(eqn: Eqn) -> bool:
    p = eqn.params
    ls, rs, os_ = p["dimension_numbers"]
    out = eqn.outvars[0].aval
    rhs = eqn.invars[1].aval
    nsp = len(os_) - 2
    if out.dtype != np.float32 or nsp not in (1, 2) or p["feature_group_count"] != 1 or \
            p["batch_group_count"] != 1 or os_[1] == len(os_) - 1:
        return False
    pixels = int(np.prod([out.shape[d] for d in os_[2:]]))
    taps = int(np.prod([rhs.shape[d] for d in rs[2:]]))
    return pixels > taps


def _is_elementwise(eqn: Eqn) -> bool:
    name = eqn.primitive.name
    if name not in KERNEL_ROWS and name not in _EWISE_EXTRA:
        return False
    shape = eqn.outvars[0].aval.shape
    return all(v.aval.shape == shape for v in eqn.outvars) and all(
        a.aval.ndim == 0 or a.aval.shape == shape for a in eqn.invars)


class _Rewriter:
    def __init__(self, jaxpr: Jaxpr, closed_consts: list, excluded: set):
        self.eqns: list[Eqn] = []
        self.phys: dict[Var, tuple[Var, Perm]] = {}   # logical var -> (physical var, perm)
        self.logical: set[Var] = set()                  # logical vars materialized so far
        self.converted: dict[tuple[Any, Perm], Atom] = {}
        self.producer: dict[Var, Eqn] = {}
        self.env: dict[Var, Atom] = {}                  # an inlined call's outputs
        self.constvars, self.consts = list(jaxpr.constvars), list(closed_consts)
        # which candidate convolutions (by their params' identity) a physical value carries the
        # layout of, which were made channels-last, and which had a reader that gains from it
        self.origin: dict[Var, frozenset] = {}
        self.made: set[int] = set()
        self.useful: set[int] = set()
        self.excluded = excluded

    def emit(self, eqn: Eqn) -> None:
        self.eqns.append(eqn)
        for v in eqn.outvars:
            self.producer[v] = eqn

    def logical_of(self, a: Atom) -> Atom:
        """``a`` as the program wrote it, transposing its physical array the first time."""
        if type(a) is Literal or a not in self.phys or a in self.logical:
            return a
        pv, perm = self.phys[a]
        self.emit(Eqn(transpose_p, [pv], {"permutation": perm}, [a]))
        self.logical.add(a)
        return a

    def physical_of(self, a: Atom, perm: Perm) -> Atom:
        """The array whose ``transpose(., perm)`` is ``a``."""
        if type(a) is Literal or a.aval.ndim == 0:
            return a
        if a in self.phys:
            pv, p = self.phys[a]
            if p == perm:
                return pv
            a = self.logical_of(a)
        key = (a, perm)
        hit = self.converted.get(key)
        if hit is not None:
            return hit
        order = _inverse(perm)
        out = Var(_permuted(a.aval, order))
        src = self.producer.get(a)
        if src is not None and src.primitive is broadcast_in_dim_p:
            self._rebroadcast(src, perm, out)
        else:
            self.emit(Eqn(transpose_p, [a], {"permutation": order}, [out]))
        self.converted[key] = out
        return out

    def _rebroadcast(self, src: Eqn, perm: Perm, out: Var) -> None:
        """``out`` = the broadcast ``src`` made, straight to the physical shape: its operand's
        size-1 dims dropped first, so a (C, 1, 1) bias needs no transpose."""
        (x,) = src.invars
        dims = src.params["broadcast_dimensions"]
        keep = [i for i, n in enumerate(x.aval.shape) if n != 1]
        if type(x) is Var and len(keep) < x.aval.ndim:
            y = Var(x.aval.update(shape=tuple(x.aval.shape[i] for i in keep)))
            self.emit(Eqn(reshape_p, [x], {"new_sizes": y.aval.shape, "dimensions": None}, [y],
                          src.source_info))
            x, dims = y, [dims[i] for i in keep]
        new = [perm[d] for d in dims]
        if new != sorted(new):  # a real transpose of the operand: transpose the broadcast
            self.emit(Eqn(transpose_p, [src.outvars[0]], {"permutation": _inverse(perm)},
                          [out]))
            return
        self.emit(Eqn(broadcast_in_dim_p, [x], dict(src.params, shape=out.aval.shape,
                                                      broadcast_dimensions=tuple(new)),
                      [out], src.source_info))

    # ---- one rule per kind of reader ----

    def conv(self, eqn: Eqn) -> bool:
        ls, rs, os_ = eqn.params["dimension_numbers"]
        lhs, rhs = eqn.invars
        ins, specs = [], []
        for a, spec in ((lhs, ls), (rhs, rs)):
            if type(a) is Var and a in self.phys:
                pv, perm = self.phys[a]
                self.useful |= self.origin.get(a, frozenset())
                ins.append(pv)
                specs.append(tuple(perm[d] for d in spec))
            else:
                ins.append(a)
                specs.append(tuple(spec))
        candidate = _is_candidate(eqn) and id(eqn.params) not in self.excluded
        if not candidate and ins == list(eqn.invars):
            return False
        (out,) = eqn.outvars
        if candidate:
            order = (os_[0],) + tuple(os_[2:]) + (os_[1],)
            perm = _inverse(order)
            pv = Var(_permuted(out.aval, order))
            new_os = tuple(perm[d] for d in os_)
            self.emit(eqn.replace(invars=ins, outvars=[pv], params=dict(
                eqn.params, dimension_numbers=ConvDimensionNumbers(specs[0], specs[1], new_os))))
            self.phys[out] = (pv, perm)
            self.origin[out] = frozenset((id(eqn.params),))
            self.made.add(id(eqn.params))
        else:
            self.emit(eqn.replace(invars=ins, params=dict(
                eqn.params, dimension_numbers=ConvDimensionNumbers(specs[0], specs[1], tuple(os_)))))
        return True

    def same_perm(self, eqn: Eqn, geometry: bool) -> bool:
        """Element-wise and window ops: every operand and output in one permutation."""
        perm = next(self.phys[a][1] for a in eqn.invars if type(a) is Var and a in self.phys)
        order = _inverse(perm)
        origin = frozenset().union(*(self.origin.get(a, frozenset()) for a in eqn.invars
                                     if type(a) is Var))
        if geometry:  # pooling gains from the layout (contiguous windows over channels)
            self.useful |= origin
        ins = [self.physical_of(a, perm) for a in eqn.invars]
        outs = [Var(_permuted(v.aval, order)) for v in eqn.outvars]
        params = eqn.params
        if geometry:
            params = dict(params)
            for k in GEOMETRY:
                params[k] = tuple(params[k][d] for d in order)
            if "operand_shape" in params:
                params["operand_shape"] = tuple(params["operand_shape"][d] for d in order)
        self.emit(eqn.replace(invars=ins, outvars=outs, params=params))
        for v, pv in zip(eqn.outvars, outs):
            self.phys[v] = (pv, perm)
            self.origin[v] = origin
        return True

    def reduction(self, eqn: Eqn) -> bool:
        (x,) = eqn.invars
        pv, perm = self.phys[x]
        axes = eqn.params["axes"]
        kept = [d for d in range(len(perm)) if d not in axes]
        (out,) = eqn.outvars
        new_axes = tuple(sorted(perm[a] for a in axes))
        rest = sorted(perm[d] for d in kept)            # physical dims left, in order
        out_perm = tuple(rest.index(perm[d]) for d in kept)
        if out_perm == tuple(range(len(out_perm))):
            self.emit(eqn.replace(invars=[pv], params=dict(eqn.params, axes=new_axes)))
            return True
        po = Var(_permuted(out.aval, _inverse(out_perm)))
        self.emit(eqn.replace(invars=[pv], outvars=[po], params=dict(eqn.params, axes=new_axes)))
        self.phys[out] = (po, out_perm)
        self.origin[out] = self.origin.get(x, frozenset())
        return True

    def transpose(self, eqn: Eqn) -> bool:
        (x,) = eqn.invars
        pv, perm = self.phys[x]
        q = eqn.params["permutation"]
        self.emit(eqn.replace(invars=[pv], params={"permutation": tuple(perm[i] for i in q)}))
        return True

    def inline(self, eqn: Eqn) -> None:
        callee: ClosedJaxpr = eqn.params["call_jaxpr"]
        inner: dict[Var, Atom] = dict(zip(callee.jaxpr.invars, eqn.invars))
        for v, c in zip(callee.jaxpr.constvars, callee.consts):
            inner[v] = nv = Var(v.aval)
            self.constvars.append(nv)
            self.consts.append(c)
        for e in callee.jaxpr.eqns:
            outs = [Var(v.aval) for v in e.outvars]
            inner.update(zip(e.outvars, outs))
            self.one(e.replace(invars=[inner.get(a, a) if type(a) is Var else a
                                       for a in e.invars], outvars=outs))
        for v, a in zip(eqn.outvars, callee.jaxpr.outvars):
            self.env[v] = inner.get(a, a) if type(a) is Var else a

    def one(self, eqn: Eqn) -> None:
        if self.env:
            eqn = eqn.replace(invars=[self.env.get(a, a) if type(a) is Var else a
                                      for a in eqn.invars])
        name = eqn.primitive.name
        reads_phys = any(type(a) is Var and a in self.phys for a in eqn.invars)
        if reads_phys and name in _CALLS:
            self.inline(eqn)
            return
        if eqn.primitive is conv_general_dilated_p and self.conv(eqn):
            return
        if reads_phys:
            if _is_elementwise(eqn) and self.same_perm(eqn, geometry=False):
                return
            if name in _WINDOW_OPS and self.same_perm(eqn, geometry=True):
                return
            if name in _REDUCTIONS and set(eqn.params) == {"axes"} and self.reduction(eqn):
                return
            if eqn.primitive is transpose_p and self.transpose(eqn):
                return
        self.emit(eqn.replace(invars=[self.logical_of(a) for a in eqn.invars]))


def choose_conv_layouts(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with channels-first float32 convolution outputs stored channels-last (and
    the layout-agnostic equations reading them rewritten to match); ``closed`` itself when it
    has no such convolution."""
    jaxpr = closed.jaxpr
    if not enabled or not any(e.primitive is conv_general_dilated_p and _is_candidate(e)
                              for e in jaxpr.eqns):
        return closed
    # A convolution stays channels-last only when a reader gains from it (another
    # convolution or a pooling op reads the layout it set); one whose layout only reaches
    # element-wise ops and then a transpose back (a lone convolution, or one whose output is
    # the program's) would pay that transpose for nothing. Dropping one never takes a gain
    # from another, so the loop ends after a round or two.
    excluded: set[int] = set()
    while True:
        r = _Rewriter(jaxpr, closed.consts, excluded)
        for eqn in jaxpr.eqns:
            r.one(eqn)
        idle = r.made - r.useful
        if not idle:
            break
        excluded |= idle
    if not r.made:
        return closed
    outvars = [r.logical_of(r.env.get(a, a) if type(a) is Var else a) for a in jaxpr.outvars]
    return dce_jaxpr(ClosedJaxpr(Jaxpr(r.constvars, jaxpr.invars, r.eqns, outvars), r.consts))
