"""Function wrappers: vectorize (with gufunc signatures, by vmap), apply_along_axis,
apply_over_axes, and ``ufunc``/``frompyfunc`` (NumPy's ufunc methods for a scalar function:
``outer``, ``reduce``, ``accumulate``, ``at``, ``reduceat``, all by vmap or scan)."""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Sequence

import numpy as np

from .. import lax
from ..config import config
from ..tracer.shapes import broadcast_shapes, canonicalize_axis
from ..transforms.vmap import vmap
from ._creation import asarray
from ._promotion import aval_of
from ._shape import expand_dims, moveaxis, ravel, squeeze

ArrayLike = Any

_DIM = r"\w+"
_CORE_DIMS = "(?:{0:}(?:,{0:})*)?".format(_DIM)
_ARG = rf"\({_CORE_DIMS}\)"
_ARG_LIST = "{0:}(?:,{0:})*".format(_ARG)
_SIGNATURE = "^{0:}->{0:}$".format(_ARG_LIST)


def _parse_signature(signature: str) -> tuple[list[tuple], list[tuple]]:
    if not re.match(_SIGNATURE, signature.replace(" ", "")):
        raise ValueError(f"vectorize: argument 'signature' is not a valid gufunc signature: "
                         f"{signature!r}")
    sig = signature.replace(" ", "")
    ins, outs = ([tuple(re.findall(_DIM, a)) for a in re.findall(_ARG, part)]
                 for part in sig.split("->"))
    return ins, outs


def _update_sizes(sizes: dict, shape: tuple, core: tuple, ctx: str, is_input: bool) -> None:
    if is_input and len(shape) < len(core):
        raise ValueError(f"vectorize: input with shape {shape} does not have enough "
                         f"dimensions for all core dimensions {core} {ctx}")
    if not is_input and len(shape) != len(core):
        raise ValueError(f"vectorize: output shape {shape} does not match core dimensions "
                         f"{core} {ctx}")
    for d, s in zip(core, shape[len(shape) - len(core):] if core else ()):
        if sizes.setdefault(d, s) != s:
            raise ValueError(f"vectorize: inconsistent size for core dimension {d!r}: {s} vs "
                             f"{sizes[d]} {ctx}")


def _check_outputs(func: Callable, sizes: dict, out_core: list, ctx: str) -> Callable:
    def wrapped(*args: Any) -> Any:
        out = func(*args)
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(out_core):
            raise TypeError(f"vectorize: wrong number of output arguments: expected "
                            f"{len(out_core)}, got {len(outs)} {ctx}")
        for o, core in zip(outs, out_core):
            _update_sizes(dict(sizes), tuple(np.shape(o)), core, ctx, False)
        return out
    return wrapped


def _apply_excluded(func: Callable, excluded: Any, args: tuple, kwargs: dict
                    ) -> tuple[Callable, list, dict]:
    if not excluded:
        return func, list(args), kwargs
    dyn_args = [a for i, a in enumerate(args) if i not in excluded]
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}
    static_args = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
                   if i < len(args)]
    static_kwargs = {k: v for k, v in kwargs.items() if k in excluded}

    def new_func(*a: Any, **kw: Any) -> Any:
        a = list(a)
        for i, v in static_args:
            a.insert(i, v)
        return func(*a, **kw, **static_kwargs)
    return new_func, dyn_args, dyn_kwargs


def vectorize(pyfunc: Callable, *, excluded: Any = frozenset(),
              signature: str | None = None) -> Callable:
    """``pyfunc`` applied over the leading (broadcast) dimensions of its arguments by vmap.

    Args:
      pyfunc: the function of the core (per-element or per-block) arguments.
      excluded: positions or names of arguments passed through unvectorized.
      signature: a gufunc signature such as ``"(n),(n)->()"`` naming the core dimensions of
        each input and output (default: every argument is scalar).

    Returns:
      The vectorized function.
    """
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(f"vectorize: argument 'excluded' may only hold integer or string "
                        f"entries, got {excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"vectorize: argument 'excluded' = {excluded!r} contains negative "
                         "numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        ctx = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, args, kwargs = _apply_excluded(pyfunc, excluded, tuple(args), kwargs)
        if signature is not None:
            in_core, out_core = _parse_signature(signature)
        else:
            in_core, out_core = [()] * len(args), None
        none_args = {i for i, a in enumerate(args) if a is None}
        if none_args:
            if any(in_core[i] != () for i in none_args):
                raise ValueError(f"vectorize: cannot pass None at positions {none_args} with "
                                 f"signature={signature!r}")
            func, args, _ = _apply_excluded(func, none_args, tuple(args), {})
            in_core = [d for i, d in enumerate(in_core) if i not in none_args]
        args = [asarray(a) for a in args]
        if len(args) != len(in_core):
            raise TypeError(f"vectorize: wrong number of positional arguments: expected "
                            f"{len(in_core)}, got {len(args)} {ctx}")
        sizes: dict = {}
        shapes = []
        for a, core in zip(args, in_core):
            shp = aval_of(a).shape
            _update_sizes(sizes, shp, core, ctx, True)
            shapes.append(shp[:len(shp) - len(core)])
        bshape = broadcast_shapes(*shapes, op="vectorize")
        if config.jax_numpy_rank_promotion != "allow":
            ranks = {aval_of(a).ndim - len(c) for a, c in zip(args, in_core) if aval_of(a).ndim}
            if len(ranks) > 1:
                msg = (f"operands with shapes {[aval_of(a).shape for a in args]} require rank "
                       f"promotion for jnp.vectorize function with signature {signature}")
                if config.jax_numpy_rank_promotion == "raise":
                    raise ValueError(msg)
        checked = func if out_core is None else _check_outputs(
            lambda *a: func(*a, **kwargs), sizes, out_core, ctx)
        if out_core is None and kwargs:
            checked = functools.partial(func, **kwargs)
        squeezed, rev_filled = [], []
        for a, core in zip(args, in_core):
            shp = aval_of(a).shape
            noncore = shp[:len(shp) - len(core)]
            rev_filled.append(((1,) * (len(bshape) - len(noncore)) + noncore)[::-1])
            sq = tuple(i for i, s in enumerate(noncore) if s == 1)
            squeezed.append(squeeze(a, axis=sq) if sq else a)
        vfunc = checked
        expand = []
        for neg, axis_sizes in enumerate(zip(*rev_filled)):
            in_axes = tuple(None if s == 1 else 0 for s in axis_sizes)
            if all(ax is None for ax in in_axes):
                expand.append(len(bshape) - 1 - neg)
            else:
                vfunc = vmap(vfunc, in_axes)
        result = vfunc(*squeezed)
        if not expand:
            return result
        if isinstance(result, tuple):
            return tuple(expand_dims(r, tuple(expand)) for r in result)
        return expand_dims(result, tuple(expand))
    return wrapped


def apply_along_axis(func1d: Callable, axis: int, arr: ArrayLike, *args: Any,
                     **kwargs: Any) -> Any:
    """``func1d`` applied to the 1-D slices of ``arr`` along ``axis`` (by vmap over the other
    axes); the slice's result dimensions replace ``axis``."""
    arr = asarray(arr)
    nd = aval_of(arr).ndim
    axis = canonicalize_axis(axis, nd, "apply_along_axis")
    func = lambda a: func1d(a, *args, **kwargs)  # noqa: E731
    for i in range(1, nd - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func: Callable, a: ArrayLike, axes: Sequence[int]) -> Any:
    """``func(a, axis)`` applied for each axis in turn, keeping the reduced dimensions."""
    a = asarray(a)
    nd = aval_of(a).ndim
    for axis in axes:
        b = func(a, axis=axis)
        if aval_of(b).ndim == nd:
            a = b
        elif aval_of(b).ndim == nd - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("apply_over_axes: function is not returning an array of the "
                             "correct shape")
    return a


class ufunc:
    """A NumPy-style universal function wrapping a scalar function of ``nin`` arguments
    (``jnp.frompyfunc``): calls broadcast by vectorize; ``outer``, ``reduce``,
    ``accumulate``, ``at`` and ``reduceat`` as NumPy's (``reduce``/``accumulate`` need
    ``nin == 2, nout == 1``)."""

    def __init__(self, func: Callable, /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity: Any = None):
        self._func = func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = self.nin if nargs is None else nargs
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._vec = vectorize(func)

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: ArrayLike, out: None = None, where: None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"{self.__name__}: the 'out' argument is not supported")
        if where is not None:
            raise NotImplementedError(f"{self.__name__}: the 'where' argument is not "
                                      "supported")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}: expected {self.nin} arguments, got {len(args)}")
        return self._vec(*args)

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs with one output; "
                             f"{self.__name__} has nin={self.nin}, nout={self.nout}")

    def outer(self, A: ArrayLike, B: ArrayLike, /) -> Any:
        """``func(a, b)`` for every pair: shape ``A.shape + B.shape``."""
        self._binary("outer")
        A, B = asarray(A), asarray(B)
        fa = ravel(A)
        fb = ravel(B)
        res = vmap(vmap(self._func, (None, 0)), (0, None))(fa, fb)
        return res.reshape(aval_of(A).shape + aval_of(B).shape)

    def reduce(self, a: ArrayLike, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: None = None) -> Any:
        """``func`` folded over ``axis`` (left to right, by scan)."""
        self._binary("reduce")
        if out is not None or where is not None:
            raise NotImplementedError(f"{self.__name__}.reduce: 'out' and 'where' are not "
                                      "supported")
        a = asarray(a, dtype=dtype)
        if axis is None:
            a, axis = ravel(a), 0
            if keepdims:
                raise ValueError("reduce: keepdims with axis=None is not supported")
        nd = aval_of(a).ndim
        axis = canonicalize_axis(axis, nd, "reduce")
        x = moveaxis(a, axis, 0)
        n = aval_of(x).shape[0]
        if initial is None:
            initial = self.identity
        if initial is None:
            if n == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            carry, xs = x[0], x[1:]
        else:
            carry = lax.full(aval_of(x).shape[1:], initial, aval_of(x).dtype)
            xs = x
        f = self._vec
        carry, _ = lax.scan(lambda c, v: (f(c, v).astype(aval_of(c).dtype), None), carry, xs)
        return expand_dims(carry, axis) if keepdims else carry

    def accumulate(self, a: ArrayLike, axis: int = 0, dtype: Any = None,
                   out: None = None) -> Any:
        """The running ``func`` fold along ``axis`` (by scan)."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"{self.__name__}.accumulate: 'out' is not supported")
        a = asarray(a, dtype=dtype)
        axis = canonicalize_axis(axis, aval_of(a).ndim, "accumulate")
        x = moveaxis(a, axis, 0)
        if aval_of(x).shape[0] == 0:
            return a
        f = self._vec

        def step(c: Any, v: Any) -> tuple[Any, Any]:
            c = f(c, v).astype(aval_of(c).dtype)
            return c, c
        _, ys = lax.scan(step, x[0], x[1:])
        return moveaxis(lax.concatenate([x[:1], ys], 0), 0, axis)

    def at(self, a: ArrayLike, indices: Any, b: ArrayLike | None = None, /, *,
           inplace: bool = True) -> Any:
        """``a`` with ``a[indices] = func(a[indices], b)`` applied unbuffered (repeated
        indices apply repeatedly), by a loop over the indices."""
        if inplace:
            raise NotImplementedError(f"{self.__name__}.at: JAX arrays are immutable; pass "
                                      "inplace=False")
        a = asarray(a)
        if b is None:
            if self.nin != 1:
                raise ValueError(f"{self.__name__}.at: second argument required for a binary "
                                 "ufunc")
        elif self.nin != 2:
            raise ValueError(f"{self.__name__}.at: only one argument allowed for a unary "
                             "ufunc")
        idx = asarray(indices) if not isinstance(indices, tuple) else indices
        flat_idx = ravel(idx) if not isinstance(idx, tuple) else None
        if flat_idx is None:
            raise NotImplementedError(f"{self.__name__}.at: tuple indices are not supported")
        k = aval_of(flat_idx).shape[0]
        bb = None if b is None else ravel(lax.broadcast_in_dim(
            asarray(b, dtype=aval_of(a).dtype), aval_of(idx).shape + aval_of(a).shape[1:],
            tuple(range(aval_of(idx).ndim + aval_of(a).ndim - 1 - aval_of(asarray(b)).ndim,
                        aval_of(idx).ndim + aval_of(a).ndim - 1)))
            .reshape((k,) + aval_of(a).shape[1:]))

        def body(i: Any, acc: Any) -> Any:
            j = flat_idx[i]
            cur = acc[j]
            new = self._vec(cur) if bb is None else self._vec(cur, bb[i])
            return acc.at[j].set(new.astype(aval_of(acc).dtype))
        return lax.fori_loop(0, k, body, a)

    def reduceat(self, a: ArrayLike, indices: Any, axis: int = 0, dtype: Any = None,
                 out: None = None) -> Any:
        """``reduce`` over the slices ``indices[i]:indices[i + 1]`` along ``axis`` (a slice
        whose end is not after its start gives ``a[indices[i]]``); ``indices`` static."""
        self._binary("reduceat")
        a = asarray(a, dtype=dtype)
        idx = np.asarray(indices)
        if idx.ndim != 1:
            raise ValueError("reduceat: argument 'indices' must be 1-D")
        axis = canonicalize_axis(axis, aval_of(a).ndim, "reduceat")
        n = aval_of(a).shape[axis]
        parts = []
        for i, s in enumerate(idx):
            e = idx[i + 1] if i + 1 < len(idx) else n
            s = int(s)
            if e <= s:
                parts.append(lax.index_in_dim(a, s, axis, keepdims=True))
            else:
                parts.append(self.reduce(lax.slice_in_dim(a, s, int(e), axis=axis), axis=axis,
                                         keepdims=True))
        return lax.concatenate(parts, axis)


def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A :class:`ufunc` from a scalar function of ``nin`` arguments and ``nout`` results."""
    return ufunc(func, nin, nout, identity=identity)
