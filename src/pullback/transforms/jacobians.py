"""jacfwd, jacrev and hessian: Jacobians by vmapping jvp (columns) or vjp (rows) over a
standard basis, with JAX's output layout (output dims first, then input dims)."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from ..tracer import core, dtypes, pytree
from ..primitives.movement import slice_p
from ..tracer.array import Array
from ..tracer.errors import check_callable
from .array_ops import moveaxis, reshape
from .jvp import instantiate, jvp_flat
from .reverse import _as_array, _check_argnums, vjp
from .vmap import vmap


def _basis(avals: list, total: int, dtype: np.dtype) -> list[Any]:
    """For each leaf, a (total, *shape) array: rows of the identity belonging to that leaf
    (constants, made with NumPy as the container)."""
    out, off = [], 0
    for av in avals:
        n = av.size
        rows = np.eye(total, n, -off, dtype=dtype)  # row off+k has a 1 at column k
        out.append(Array(rows.reshape((total,) + av.shape)))
        off += n
    return out


def _split_rows(x: Any, offsets: list, sizes: list, avals: list, lead_shape: tuple,
                outer_first: bool) -> list:
    """x: (total, *rest) → per leaf (*rest, *leaf_shape) or (*leaf_shape, *rest)."""
    rest = core.get_aval(x).shape[1:]
    parts = []
    for off, n, av in zip(offsets, sizes, avals):
        off = int(off)
        piece = slice_p.bind(x, start_indices=(off,) + (0,) * len(rest),
                             limit_indices=(off + n,) + rest, strides=(1,) * (1 + len(rest)))
        piece = reshape(piece, av.shape + rest)
        if outer_first:
            nd = len(av.shape)
            piece = moveaxis(piece, tuple(range(nd)), tuple(range(len(rest), len(rest) + nd)))
        parts.append(piece)
    return parts


def _inexact_dtype(avals: list) -> np.dtype:
    dts = [a.dtype for a in avals if dtypes.is_inexact(a.dtype)]
    return dts[0] if dts else dtypes.DEFAULT_FLOAT


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of ``fun`` by forward mode (one jvp per input element, vectorized).

    Returns:
      A function returning a pytree shaped like the output whose leaves are pytrees shaped
      like the selected argument(s), each leaf of shape ``out.shape + in.shape``.
    """
    check_callable(fun)

    @functools.wraps(fun)
    def jac(*args: Any) -> Any:
        nums = _check_argnums("jacfwd", argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        leaves, in_tree = pytree.tree_flatten(dyn)
        leaves = [_as_array(x) for x in leaves]
        avals = [core.get_aval(x) for x in leaves]
        for av in avals:
            if not dtypes.is_inexact(av.dtype):
                raise TypeError(f"jacfwd requires real- or complex-valued inputs, got {av.dtype}")
        sizes = [a.size for a in avals]
        total = sum(sizes)
        offsets = list(np.cumsum([0] + sizes[:-1]))

        def f_flat(*xs):
            full = list(args)
            for i, v in zip(nums, pytree.tree_unflatten(in_tree, list(xs))):
                full[i] = v
            return fun(*full)

        y_box = []

        def push(*ts):
            outs, tans, tree, *aux = jvp_flat(f_flat, leaves, list(ts), "jacfwd", has_aux)
            y_box[:] = [(outs, tree, aux)]
            return [instantiate(t) for t in tans]

        basis = [b.astype(av.dtype) if hasattr(b, "astype") else b
                 for b, av in zip(_basis(avals, total, _inexact_dtype(avals)), avals)]
        cols = vmap(push, in_axes=tuple([0] * len(basis)))(*basis)
        outs, out_tree, aux = y_box[0]
        results = []
        for c in cols:
            parts = _split_rows(c, offsets, sizes, avals, (), outer_first=True)
            per_arg = pytree.tree_unflatten(in_tree, parts)
            results.append(per_arg[0] if isinstance(argnums, int) else per_arg)
        jac_tree = pytree.tree_unflatten(out_tree, results)
        if has_aux:
            # aux does not depend on the basis vmapped over: it leaves that vmap unbatched
            return jac_tree, pytree.tree_map(core.full_lower, aux[0])
        return jac_tree

    return jac


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The Jacobian of ``fun`` by reverse mode (one vjp per output element, vectorized); the
    same layout as :func:`jacfwd`."""
    check_callable(fun)

    @functools.wraps(fun)
    def jac(*args: Any) -> Any:
        nums = _check_argnums("jacrev", argnums, len(args))
        dyn = tuple(args[i] for i in nums)

        def f_dyn(*d):
            full = list(args)
            for i, v in zip(nums, d):
                full[i] = v
            return fun(*full)

        res = vjp(f_dyn, *dyn, has_aux=has_aux)
        y, pullback = res[0], res[1]
        y_leaves, y_tree = pytree.tree_flatten(y)
        y_avals = [core.get_aval(v) for v in y_leaves]
        sizes = [a.size for a in y_avals]
        total = sum(sizes)
        offsets = list(np.cumsum([0] + sizes[:-1]))

        basis = _basis(y_avals, total, _inexact_dtype(y_avals))
        basis = [b.astype(a.dtype) for b, a in zip(basis, y_avals)]
        rows = vmap(lambda *cts: pytree.tree_leaves(pullback(pytree.tree_unflatten(y_tree, cts))),
                    in_axes=tuple([0] * len(basis)))(*basis)
        in_leaves, in_tree = pytree.tree_flatten(dyn)
        # rows[k]: (total, *in_leaf_k shape) → for each output leaf j: (*y_j, *in_k)
        per_out = [[None] * len(rows) for _ in y_leaves]
        for k, r in enumerate(rows):
            parts = _split_rows(r, offsets, sizes, y_avals, (), outer_first=False)
            for j, p in enumerate(parts):
                per_out[j][k] = p
        results = []
        for j in range(len(y_leaves)):
            per_arg = pytree.tree_unflatten(in_tree, per_out[j])
            results.append(per_arg[0] if isinstance(argnums, int) else per_arg)
        jac_tree = pytree.tree_unflatten(y_tree, results)
        return (jac_tree, res[2]) if has_aux else jac_tree

    return jac


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """The Hessian: ``jacfwd(jacrev(fun))``."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
