"""A line search satisfying the strong Wolfe conditions (Nocedal & Wright, "Numerical
Optimization", algorithms 3.5 and 3.6), as JAX's ``minimize`` runs it.

Everything is branch-free inside ``lax.while_loop``s (both zoom phases are traced each outer
step and gated by a pass-through flag) so the whole search compiles. JAX's choices are kept
where they change results: the first trial step from the previous two function values, the
step doubling, the interpolation safeguards (cubic within 20% of the bracket ends, quadratic
within 10%, else bisection), a zoom cap of 30 steps, the bracket-width failure threshold
(1e-5 below 64 bits, else 1e-10), and the 1e-8 step floor below 64 bits.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...numpy._promotion import promote_dtypes_inexact
from ...transforms.reverse import value_and_grad

_HIGHEST = lax.Precision.HIGHEST


class LineSearchResults(NamedTuple):
    failed: Any       # no point satisfying both Wolfe conditions was found
    nit: Any          # outer iterations
    nfev: Any         # objective evaluations
    ngev: Any         # gradient evaluations
    k: Any
    a_k: Any          # the step
    f_k: Any          # objective at the step
    g_k: Any          # gradient at the step
    status: Any       # 0 ok, 1 zoom failed, 3 maxiter reached


def _pick(flag: Any, new: dict, old: Any) -> dict:
    """The fields of ``new`` where ``flag`` holds, else the same fields of ``old``."""
    return {k: jnp.where(flag, v, getattr(old, k)) for k, v in new.items()}


def _cubic_min(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    # minimiser of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb = fb - fa - fpa * db
    rc = fc - fa - fpa * dc
    p = (dc ** 2 * rb - db ** 2 * rc) / denom
    q = (-dc ** 3 * rb + db ** 3 * rc) / denom
    return a + (-q + jnp.sqrt(q * q - 3.0 * p * fpa)) / (3.0 * p)


def _quad_min(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    # minimiser of the quadratic through (a, fa) with slope fpa and (b, fb)
    db = b - a
    curv = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2.0 * curv)


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(phi_dphi: Callable, sufficient_fails: Callable, curvature_ok: Callable,
          a_lo: Any, phi_lo: Any, dphi_lo: Any, a_hi: Any, phi_hi: Any, dphi_hi: Any,
          g_0: Any, skip: Any) -> _Zoom:
    """Shrink the bracket [a_lo, a_hi] until a step satisfies both Wolfe conditions (or the
    bracket collapses); does nothing when ``skip``."""
    dt = a_lo.dtype
    width_floor = 1e-5 if np.finfo(dt).bits < 64 else 1e-10
    izero = jnp.asarray(0, jnp.int32)
    st = _Zoom(done=jnp.asarray(False), failed=jnp.asarray(False), j=izero,
               a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi,
               dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2, phi_rec=(phi_lo + phi_hi) / 2,
               a_star=jnp.asarray(1.0, dt), phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0,
               nfev=izero, ngev=izero)

    def body(st: _Zoom) -> _Zoom:
        width = st.a_hi - st.a_lo
        lo_end = jnp.minimum(st.a_hi, st.a_lo)
        hi_end = jnp.maximum(st.a_hi, st.a_lo)
        failed = st.failed | (width <= width_floor)
        cub = _cubic_min(st.a_lo, st.phi_lo, st.dphi_lo, st.a_hi, st.phi_hi, st.a_rec,
                         st.phi_rec)
        # cubic once a third point exists and it lands well inside; NaN fails the checks
        use_cub = (st.j > 0) & (cub > lo_end + 0.2 * width) & (cub < hi_end - 0.2 * width)
        quad = _quad_min(st.a_lo, st.phi_lo, st.dphi_lo, st.a_hi, st.phi_hi)
        use_quad = (~use_cub) & (quad > lo_end + 0.1 * width) & (quad < hi_end - 0.1 * width)
        a_j = jnp.where(use_cub, cub, jnp.where(use_quad, quad, (st.a_lo + st.a_hi) / 2))
        phi_j, dphi_j, g_j = phi_dphi(a_j)
        phi_j = phi_j.astype(st.phi_lo.dtype)
        dphi_j = dphi_j.astype(st.dphi_lo.dtype)
        g_j = g_j.astype(st.g_star.dtype)
        st = st._replace(failed=failed, nfev=st.nfev + 1, ngev=st.ngev + 1)

        to_hi = sufficient_fails(a_j, phi_j) | (phi_j >= st.phi_lo)
        found = curvature_ok(dphi_j) & ~to_hi
        flip = (dphi_j * (st.a_hi - st.a_lo) >= 0) & ~to_hi & ~found
        to_lo = ~to_hi & ~found
        st = st._replace(**_pick(to_hi, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j,
                                             a_rec=st.a_hi, phi_rec=st.phi_hi), st))
        st = st._replace(done=st.done | found,
                         **_pick(found, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j,
                                             g_star=g_j), st))
        st = st._replace(**_pick(flip, dict(a_hi=st.a_lo, phi_hi=st.phi_lo,
                                            dphi_hi=st.dphi_lo, a_rec=st.a_hi,
                                            phi_rec=st.phi_hi), st))
        st = st._replace(**_pick(to_lo & ~flip, dict(a_rec=st.a_lo, phi_rec=st.phi_lo), st))
        st = st._replace(**_pick(to_lo, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), st))
        j = st.j + 1
        return st._replace(j=j, failed=st.failed | (j >= 30))

    return lax.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, st)


class _Search(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_prev: Any
    phi_prev: Any
    dphi_prev: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


def line_search(f: Callable, xk: Any, pk: Any, old_fval: Any = None, old_old_fval: Any = None,
                gfk: Any = None, c1: float = 1e-4, c2: float = 0.9,
                maxiter: int = 20) -> LineSearchResults:
    """A step along the descent direction ``pk`` from ``xk`` satisfying the strong Wolfe
    conditions with constants ``c1``, ``c2``, in at most ``maxiter`` bracketing steps."""
    xk, pk = promote_dtypes_inexact("line_search", xk, pk)
    dt = xk.dtype
    vg = value_and_grad(f)

    def phi_dphi(t: Any) -> tuple:
        val, g = vg(xk + jnp.asarray(t, dt) * pk)
        return val, jnp.real(jnp.dot(g, pk, precision=_HIGHEST)), g

    given = old_fval is not None and gfk is not None
    if given:
        phi_0 = jnp.asarray(old_fval)
        dphi_0 = jnp.real(jnp.dot(gfk, pk, precision=_HIGHEST))
    else:
        phi_0, dphi_0, gfk = phi_dphi(0.0)
    if old_old_fval is not None:
        # the step that would reproduce the last decrease, capped at 1 (SciPy's start)
        guess = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = jnp.where(guess > 1, jnp.asarray(1.0, guess.dtype), guess)
    else:
        start = jnp.asarray(1.0, dt)

    def sufficient_fails(a: Any, phi: Any) -> Any:
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_ok(dphi: Any) -> Any:
        return jnp.abs(dphi) <= -c2 * dphi_0

    fdt = jnp.asarray(phi_0).dtype
    n0 = jnp.asarray(0 if given else 1, jnp.int32)
    st = _Search(done=jnp.asarray(False), failed=jnp.asarray(False),
                 i=jnp.asarray(1, jnp.int32), a_prev=jnp.asarray(0.0, fdt), phi_prev=phi_0,
                 dphi_prev=dphi_0, nfev=n0, ngev=n0, a_star=jnp.asarray(0.0, fdt),
                 phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def body(st: _Search) -> _Search:
        a_i = jnp.where(st.i == 1, start, st.a_prev * 2).astype(fdt)
        phi_i, dphi_i, g_i = phi_dphi(a_i)
        bracket_hi = sufficient_fails(a_i, phi_i) | ((phi_i >= st.phi_prev) & (st.i > 1))
        accept = curvature_ok(dphi_i) & ~bracket_hi
        bracket_lo = (dphi_i >= 0) & ~bracket_hi & ~accept
        z1 = _zoom(phi_dphi, sufficient_fails, curvature_ok, st.a_prev, st.phi_prev,
                   st.dphi_prev, a_i, phi_i, dphi_i, gfk, ~bracket_hi)
        z2 = _zoom(phi_dphi, sufficient_fails, curvature_ok, a_i, phi_i, dphi_i, st.a_prev,
                   st.phi_prev, st.dphi_prev, gfk, ~bracket_lo)
        st = st._replace(nfev=st.nfev + 1 + z1.nfev + z2.nfev,
                         ngev=st.ngev + 1 + z1.ngev + z2.ngev)
        keys = ("a_star", "phi_star", "dphi_star", "g_star")
        st = st._replace(done=st.done | bracket_hi, failed=st.failed | (bracket_hi & z1.failed),
                         **_pick(bracket_hi, {k: getattr(z1, k) for k in keys}, st))
        st = st._replace(done=st.done | accept,
                         **_pick(accept, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i,
                                              g_star=g_i), st))
        st = st._replace(done=st.done | bracket_lo, failed=st.failed | (bracket_lo & z2.failed),
                         **_pick(bracket_lo, {k: getattr(z2, k) for k in keys}, st))
        return st._replace(i=st.i + 1, a_prev=a_i, phi_prev=phi_i, dphi_prev=dphi_i)

    st = lax.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, st)
    status = jnp.where(st.failed, 1, jnp.where(st.i > maxiter, 3, 0)).astype(jnp.int32)
    a_k = st.a_star
    if np.finfo(a_k.dtype).bits != 64:
        # below 64 bits a vanishing step would freeze the iterate: floor it at 1e-8
        a_k = jnp.where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=st.failed | ~st.done, nit=st.i - 1, nfev=st.nfev,
                             ngev=st.ngev, k=st.i, a_k=a_k, f_k=st.phi_star, g_k=st.g_star,
                             status=status)
