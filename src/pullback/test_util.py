"""``check_grads``: derivatives checked against finite differences, as ``jax.test_util``."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Sequence

import numpy as np

from .backends import eager, eval_impl, to_ndarray
from .backends.cpu.compiler import compile_jaxpr
from .backends.cpu.kernels import LayoutError
from .config import config
from .tracer import core, debug, dtypes, pytree
from .tracer.array import Array
from .tracer.ir import Eqn, Jaxpr, Var
from .transforms.jit import jit
from .transforms.jvp import jvp
from .transforms.reverse import vjp
from .transforms.vmap import vmap

_DEFAULT_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-2, np.dtype(np.float64): 1e-5}
_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 2e-2, np.dtype(np.float64): 1e-5}


def _rand_like(rng: np.random.Generator, x: Any) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind == "c":
        return (rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(a.dtype)
    if dtypes.is_inexact(a.dtype):
        return rng.standard_normal(a.shape).astype(a.dtype)
    return np.zeros(a.shape, dtypes.float0)


def _add(x: Any, y: Any, scale: float) -> Any:
    x = np.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        return x
    return (x.astype(np.result_type(x.dtype, np.float64)) +
            scale * np.asarray(y, np.result_type(x.dtype, np.float64))).astype(x.dtype)


def _inner(xs: Sequence, ys: Sequence) -> complex:
    total = 0.0
    for x, y in zip(xs, ys):
        x, y = np.asarray(x), np.asarray(y)
        if not dtypes.is_inexact(x.dtype):
            continue
        total = total + np.sum(np.asarray(x, np.complex128) * np.asarray(y, np.complex128))
    return total


def _fd(plus: Any, minus: Any, eps: float) -> np.ndarray:
    """Central difference of one output leaf (float0 zeros for integer and bool outputs, which
    have no derivative)."""
    p, m = np.asarray(plus), np.asarray(minus)
    if not dtypes.is_inexact(p.dtype):
        return np.zeros(p.shape, dtypes.float0)
    return (np.asarray(p, np.complex128) - np.asarray(m, np.complex128)) / eps


def _close(name: str, a: Any, b: Any, atol: float, rtol: float) -> None:
    for x, y in zip(pytree.tree_leaves(a), pytree.tree_leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
            continue
        np.testing.assert_allclose(np.asarray(x, np.complex128), np.asarray(y, np.complex128),
                                   atol=atol, rtol=rtol, err_msg=name)


def _tols(args: Sequence, atol: float | None, rtol: float | None, eps: float | None):
    dts = [np.asarray(x).dtype for x in pytree.tree_leaves(args)
           if dtypes.is_inexact(np.asarray(x).dtype)]
    worst = max(dts, key=lambda d: _DEFAULT_TOL.get(np.dtype(d.char if d.kind == "c" else d),
                                                    1e-5), default=np.dtype(np.float64))
    base = np.dtype(np.float32) if worst == np.complex64 else np.dtype(np.float64) \
        if worst == np.complex128 else worst
    return (_DEFAULT_TOL.get(base, 1e-5) if atol is None else atol,
            _DEFAULT_TOL.get(base, 1e-5) if rtol is None else rtol,
            _DEFAULT_EPS.get(base, 1e-5) if eps is None else eps)


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence, atol: float | None = None,
              rtol: float | None = None, eps: float | None = None, rng: Any = None) -> None:
    """``f_jvp(args, tangents)`` against central differences of ``f`` along random tangents."""
    atol, rtol, eps = _tols(args, atol, rtol, eps)
    rng = rng or np.random.default_rng(0)
    tangents = pytree.tree_map(lambda x: _rand_like(rng, x), args)
    v_out, t_out = f_jvp(args, tangents)
    plus = f(*pytree.tree_map(lambda x, t: _add(x, t, eps / 2), args, tangents))
    minus = f(*pytree.tree_map(lambda x, t: _add(x, t, -eps / 2), args, tangents))
    fd = pytree.tree_map(lambda p, m: _fd(p, m, eps), plus, minus)
    _close("jvp primal output", v_out, f(*args), atol, rtol)
    _close("jvp tangent vs finite differences", t_out, fd, atol, rtol)


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence, atol: float | None = None,
              rtol: float | None = None, eps: float | None = None, rng: Any = None) -> None:
    """``f_vjp`` against finite differences through ``<ct, J t> == <J^T ct, t>``."""
    atol, rtol, eps = _tols(args, atol, rtol, eps)
    rng = rng or np.random.default_rng(1)
    v_out, pullback = f_vjp(*args)
    _close("vjp primal output", v_out, f(*args), atol, rtol)
    tangents = pytree.tree_map(lambda x: _rand_like(rng, x), args)
    plus = f(*pytree.tree_map(lambda x, t: _add(x, t, eps / 2), args, tangents))
    minus = f(*pytree.tree_map(lambda x, t: _add(x, t, -eps / 2), args, tangents))
    fd = [_fd(p, m, eps) for p, m in zip(pytree.tree_leaves(plus), pytree.tree_leaves(minus))]
    cts = pytree.tree_map(lambda y: _rand_like(rng, y), v_out)
    ct_in = pullback(cts)
    lhs = _inner(pytree.tree_leaves(cts), fd)
    rhs = _inner(pytree.tree_leaves(ct_in), pytree.tree_leaves(tangents))
    # real parts: for complex functions the pairing is the real inner product
    np.testing.assert_allclose(np.real(lhs), np.real(rhs), atol=atol * max(1, abs(lhs)),
                               rtol=rtol, err_msg="vjp vs finite differences")


def check_grads(f: Callable, args: Sequence, order: int, modes: Sequence[str] = ("fwd", "rev"),
                atol: float | None = None, rtol: float | None = None, eps: float | None = None
                ) -> None:
    """Check ``f``'s derivatives up to ``order`` against finite differences.

    Args:
      f: the function (of the positional ``args``).
      args: a tuple of arguments (float64 recommended).
      order: the highest derivative order to check (1: jvp/vjp; 2: also the derivatives of
        those; ...).
      modes: "fwd" (jvp) and/or "rev" (vjp).
      atol, rtol: tolerances (default by dtype).
      eps: the finite-difference step (default by dtype).

    Raises:
      AssertionError if a derivative disagrees with finite differences.
    """
    args = tuple(args)

    def _check(fun: Callable, fargs: tuple, level: int) -> None:
        if "fwd" in modes:
            check_jvp(fun, lambda a, t: jvp(fun, a, t), fargs, atol, rtol, eps)
            if level > 1:
                _check(lambda *a: jvp(fun, a[:len(fargs)], a[len(fargs):])[1],
                       fargs + tuple(pytree.tree_map(lambda x: _rand_like(np.random.default_rng(2), x),
                                                     fargs)), level - 1)
        if "rev" in modes:
            check_vjp(fun, lambda *a: vjp(fun, *a), fargs, atol, rtol, eps)
            if level > 1:
                out = fun(*fargs)
                ct = pytree.tree_map(lambda y: _rand_like(np.random.default_rng(3), y), out)
                _check(lambda *a: vjp(fun, *a)[1](ct), fargs, level - 1)

    _check(f, args, order)


def check_vmap(f: Callable, args: Sequence, batch_size: int = 3, seed: int = 0,
               atol: float = 1e-6, rtol: float = 1e-6, static_argnums: Sequence[int] = ()
               ) -> None:
    """Check that ``vmap(f)`` equals a Python loop of ``f`` over the batch.

    For each placement of the batch axis (first, last, in the middle) and with every other
    operand left unbatched in turn, builds batched arguments from ``batch_size`` perturbed
    copies of ``args`` and compares ``vmap(f, in_axes)`` with stacking ``f`` applied to each
    example.

    Args:
      f: a function of the positional ``args`` (arrays) returning an array or pytree.
      args: example arguments (one batch element each).
      batch_size: the batch size to map over.
      static_argnums: arguments passed through unbatched and unperturbed (Python values).
    """
    rng = np.random.default_rng(seed)
    args = tuple(args)
    dyn = [i for i in range(len(args)) if i not in static_argnums]

    def variants(x: Any) -> list:
        a = np.asarray(x)
        out = []
        for _ in range(batch_size):
            if dtypes.is_inexact(a.dtype):
                noise = rng.standard_normal(a.shape).astype(np.float64) * 0.1
                if a.dtype.kind == "c":  # perturb both parts (keeping the imaginary one)
                    noise = noise + 1j * rng.standard_normal(a.shape) * 0.1
                wide = np.result_type(a.dtype, np.float64)
                out.append((a.astype(wide) + noise).astype(a.dtype))
            else:
                out.append(a.copy())
        return out

    examples = {i: variants(args[i]) for i in dyn}
    placements = ["first", "last", "middle"]
    for place in placements:
        for unbatched in [None] + dyn:
            in_axes, batched_args = [], []
            for i, a in enumerate(args):
                if i not in dyn or i == unbatched:
                    in_axes.append(None)
                    batched_args.append(a)
                    continue
                stacked = np.stack(examples[i])
                nd = stacked.ndim
                ax = {"first": 0, "last": nd - 1, "middle": nd // 2}[place]
                batched_args.append(np.moveaxis(stacked, 0, ax))
                in_axes.append(ax)
            if all(ax is None for ax in in_axes):
                continue
            got = vmap(f, in_axes=tuple(in_axes))(*batched_args)
            want_each = []
            for b in range(batch_size):
                ex = [args[i] if in_axes[i] is None else examples[i][b] for i in range(len(args))]
                want_each.append(f(*ex))
            want = pytree.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *want_each)
            for g, w in zip(pytree.tree_leaves(got), pytree.tree_leaves(want)):
                g, w = np.asarray(g), np.asarray(w)
                assert g.shape == w.shape, (place, in_axes, g.shape, w.shape)
                if g.dtype.kind in "biu" or g.dtype == np.bool_:
                    np.testing.assert_array_equal(g, w, err_msg=f"vmap {place} {in_axes}")
                else:
                    np.testing.assert_allclose(np.asarray(g, np.complex128 if g.dtype.kind == "c"
                                                          else np.float64),
                                               np.asarray(w, np.complex128 if w.dtype.kind == "c"
                                                          else np.float64),
                                               atol=atol, rtol=rtol,
                                               err_msg=f"vmap {place} {in_axes}")




def check_vmap_exact(f: Callable, batched_args: Sequence, in_axes: Sequence[int | None]) -> None:
    """Check that ``vmap(f, in_axes)`` equals a Python loop of ``f`` over the examples, bit for
    bit (shapes, dtypes and every byte), for outputs that must not differ at all: random bits,
    integer results, conversions.

    Unlike ``check_vmap``, which perturbs float operands of one example (and so repeats integer
    ones), the caller gives the batched operands, so every lane can differ (e.g. a batch of
    different keys).

    Args:
      f: a function of array arguments returning an array or a pytree of arrays.
      batched_args: the arguments, batched along ``in_axes``.
      in_axes: one entry per argument: its mapped axis, or None (passed whole to every call).
    """
    sizes = {np.shape(a)[ax] for a, ax in zip(batched_args, in_axes) if ax is not None}
    assert len(sizes) == 1, f"mapped axes of different sizes: {sizes}"
    size = sizes.pop()
    got = vmap(f, in_axes=tuple(in_axes))(*batched_args)
    each = [f(*[a if ax is None else np.asarray(np.take(np.asarray(a), b, axis=ax))
                for a, ax in zip(batched_args, in_axes)]) for b in range(size)]
    want = pytree.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *each)
    for g, w in zip(pytree.tree_leaves(got), pytree.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), (in_axes, g.shape, g.dtype, w.shape,
                                                          w.dtype)
        np.testing.assert_array_equal(np.ascontiguousarray(g).view(np.uint8),
                                      np.ascontiguousarray(w).view(np.uint8),
                                      err_msg=f"vmap with in_axes={tuple(in_axes)}")


LAYOUTS = ("contiguous", "strided", "broadcast", "flipped", "transposed")


def layout(x: np.ndarray, kind: str) -> np.ndarray:
    """``x``'s values in another memory layout: "strided" (every other element of a padded
    buffer), "broadcast" (zero strides: repeats the first row), "flipped" (negative strides),
    "transposed" (Fortran order); anything else, or a 0-d ``x``, returns ``x``."""
    if not x.ndim:
        return x
    if kind == "strided":
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1] + 1,), x.dtype)
        big[..., 1::2] = x
        return big[..., 1::2]
    if kind == "broadcast" and x.shape[0]:
        return np.broadcast_to(x[:1], x.shape)
    if kind == "flipped":
        return np.flip(np.flip(x).copy())
    if kind == "transposed":
        return np.ascontiguousarray(x.T).T
    return x


def assert_bitwise_equal(got: Any, want: Any) -> None:
    """Equal shape, dtype and bytes (for ops that move data rather than compute)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype,
                                                                  want.shape)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes(), (got, want)


@contextlib.contextmanager
def reference_backend() -> Any:
    """Run eager primitives on their NumPy references inside the block."""
    previous = config.backend
    config.update("backend", "reference")
    try:
        yield
    finally:
        config.update("backend", previous)


def check_backends(op: Callable, want: Any, *arrays: np.ndarray) -> None:
    """``op`` on Arrays wrapping exactly these NumPy layouts gives ``want`` bit for bit on the
    CPU backend, on the reference backend and under jit."""
    args = [Array(a) for a in arrays]
    assert_bitwise_equal(op(*args), want)
    with reference_backend():
        assert_bitwise_equal(op(*args), want)
    assert_bitwise_equal(jit(op)(*args), want)


@contextlib.contextmanager
def jit_every_primitive() -> Any:
    """Inside the block, every eager primitive call runs as a one-equation program compiled by
    jit's compiler and executed by its C schedule (the ``PULLBACK_TEST_JIT=1`` switch of the
    test suite: "results equal eager" for every primitive test)."""

    cache: dict = {}

    def impl(prim: Any, args: Any, params: dict) -> Any:
        if getattr(prim.cpu, "interpreted", False) or not prim.cpu or config.backend != "cpu":
            return eval_impl(prim, args, params)
        avals = tuple(core.get_aval(a) for a in args)
        vals = [np.asarray(to_ndarray(a, v)) for a, v in zip(args, avals)]
        # specialized on the operands' layouts, as jit is: kernels read them in place
        strides = tuple(None if v.flags.c_contiguous else v.strides for v in vals)
        try:
            key = (prim, avals, strides, tuple(params.items()))
            compiled = cache.get(key)
        except TypeError:  # an unhashable parameter
            return eval_impl(prim, args, params)
        if compiled is None:
            out = prim.rule("abstract_eval")(*avals, **params)
            invars = [Var(a) for a in avals]
            outvars = [Var(a) for a in (out if prim.multiple_results else [out])]
            jaxpr = Jaxpr([], invars, [Eqn(prim, invars, params, outvars)], outvars)
            # IEEE subnormals, as eager: this mode checks the kernels the schedule runs
            compiled = cache[key] = compile_jaxpr(jaxpr, {}, prim.name, in_strides=strides,
                                                  flush_denormals=False)
            if len(cache) > 4096:
                cache.clear()
        try:
            outs = compiled.run(*vals)
        except LayoutError:  # compiled for strides but misaligned here: run contiguous copies
            return impl(prim, [np.array(v) for v in vals], params)
        if debug.checking:  # jax_debug_nans / jax_debug_infs, as eval_impl
            debug.check(prim.name, outs)
        res = [Array._new(o, a) for o, a in zip(outs, compiled.out_avals)]
        return res if prim.multiple_results else res[0]

    core.set_eval_impl(impl)
    eager.set_enabled(False)  # (the eager short paths would skip ``impl``)
    try:
        yield
    finally:
        eager.set_enabled(True)
        core.set_eval_impl(eval_impl)
