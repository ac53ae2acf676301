"""Reverse mode: linearize (jvp + partial evaluation), vjp (linearize + transpose), grad and
value_and_grad, with JAX's signatures and errors."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from ..tracer import core, dtypes, pytree
from ..tracer.errors import check_callable
from ..tracer.shapes import index_tuple
from ..tracer.staging import eval_jaxpr
from .array_ops import asarray, full_like
from .jvp import Zero, instantiate, jvp_flat, tangent_aval
from .partial_eval import PartialVal, partial_eval_flat
from .transpose import backward_pass


def _as_array(x: Any) -> Any:
    if isinstance(x, core.Tracer):
        return x
    return asarray(x)


def _differentiable(aval: Any) -> bool:
    return dtypes.is_inexact(aval.dtype)


def linearize_flat(fun: Callable, primals: Sequence[Any], name: str = "linearize",
                   has_aux: bool = False):
    """Primal outputs, and the linear Jaxpr mapping the inexact inputs' tangents to the output
    tangents (with its residuals as constants). Returns
    (primals_out, out_tree, closed_jaxpr, which inputs are differentiated, which output tangents
    are unknown, the known output tangents), and the aux pytree seventh with ``has_aux``
    (``fun`` then returns ``(output, aux)``)."""
    avals = [core.get_aval(p) for p in primals]
    diff = [_differentiable(a) for a in avals]
    n = len(primals)
    tree_box: list = []
    aux_box: list = []

    def f_jvp(*args):
        ps = args[:n]
        it = iter(args[n:])
        ts = [next(it) if d else Zero(tangent_aval(a)) for d, a in zip(diff, avals)]
        outs, tans, tree, *aux = jvp_flat(fun, ps, ts, name=name, has_aux=has_aux)
        tree_box.append(tree)
        aux_box.extend(aux)
        return list(outs) + [instantiate(t) for t in tans]

    pvals = [PartialVal.known(p) for p in primals] + \
        [PartialVal.unknown(tangent_aval(a)) for d, a in zip(diff, avals) if d]
    closed, pvals_out, _ = partial_eval_flat(f_jvp, pvals, name=name)
    m = len(pvals_out) // 2
    primal_pvals, tangent_pvals = pvals_out[:m], pvals_out[m:]
    primals_out = [pv.const for pv in primal_pvals]
    if any(p is None for p in primals_out):
        raise AssertionError("linearize: a primal output depends on the tangents")
    unknown_t = [not pv.is_known for pv in tangent_pvals]
    known_t = [pv.const for pv in tangent_pvals]
    res = primals_out, tree_box[0], closed, diff, unknown_t, known_t
    if has_aux:
        # aux is primal-only, so known here: its leaves leave as values (or as tracers of
        # the transformations around this one), never as this level's tracers
        res += (pytree.tree_map(core.full_lower, aux_box[0]),)
    return res


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> Any:
    """Reverse-mode derivative: ``fun(*primals)`` and a function mapping output cotangents to
    input cotangents.

    Args:
      fun: the function; arguments and outputs are pytrees of arrays.
      *primals: the arguments at which to differentiate.
      has_aux: ``fun`` returns ``(output, aux)``; aux is returned as computed (not
        differentiated).

    Returns:
      ``(primals_out, vjp_fun)`` (and ``aux``), where ``vjp_fun(cotangents)`` takes a pytree
      shaped like ``primals_out`` and returns a tuple with one cotangent per primal (float0
      zeros for integer primals).
    """
    leaves, in_tree = pytree.tree_flatten(primals)
    leaves = [_as_array(x) for x in leaves]
    primals_out, out_tree, closed, diff, unknown_t, _, *aux = linearize_flat(
        lambda *args: fun(*pytree.tree_unflatten(in_tree, args)), leaves, "vjp", has_aux)
    out_avals = [core.get_aval(p) for p in primals_out]
    in_avals = [core.get_aval(x) for x in leaves]

    def vjp_fun(cotangents: Any) -> tuple:
        ct_leaves, ct_tree = pytree.tree_flatten(cotangents)
        if ct_tree != out_tree:
            raise ValueError(f"vjp: the cotangent must have the structure of the output "
                            f"{out_tree}, got {ct_tree}")
        cts = []
        for i, (ct, av) in enumerate(zip(ct_leaves, out_avals)):
            ct = _as_array(ct)
            want = tangent_aval(av)
            cav = core.get_aval(ct)
            if cav.shape != want.shape or (cav.dtype != want.dtype and want.dtype != dtypes.float0):
                raise ValueError(f"vjp: cotangent {i} must have shape {want.shape} and dtype "
                                f"{want.dtype} (the output is {av.str_short()}), got "
                                f"{cav.str_short()}")
            cts.append(ct)
        lin_cts = [c for c, u in zip(cts, unknown_t) if u]
        jaxpr = closed.jaxpr
        in_cts = backward_pass(jaxpr, closed.consts, [True] * len(jaxpr.invars),
                               [None] * len(jaxpr.invars), lin_cts)
        it = iter(in_cts)
        out = []
        for d, av in zip(diff, in_avals):
            ct = next(it) if d else Zero(tangent_aval(av))
            out.append(instantiate(ct))
        return pytree.tree_unflatten(in_tree, out)

    out = pytree.tree_unflatten(out_tree, primals_out)
    return (out, vjp_fun, *aux)


def linearize(fun: Callable, *primals: Any, has_aux: bool = False) -> Any:
    """``fun(*primals)`` and its linearization ``f_jvp(*tangents)`` (jvp without re-running
    the primal computation)."""
    leaves, in_tree = pytree.tree_flatten(primals)
    leaves = [_as_array(x) for x in leaves]
    primals_out, out_tree, closed, diff, unknown_t, known_t, *aux = linearize_flat(
        lambda *args: fun(*pytree.tree_unflatten(in_tree, args)), leaves, "linearize", has_aux)

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = pytree.tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(f"linearize: tangents must have the structure of the primals "
                            f"{in_tree}, got {t_tree}")
        ts = [_as_array(t) for t, d in zip(t_leaves, diff) if d]
        lin = iter(eval_jaxpr(closed.jaxpr, closed.consts, *ts))
        outs = [next(lin) if u else k for u, k in zip(unknown_t, known_t)]
        return pytree.tree_unflatten(out_tree, outs)

    out = pytree.tree_unflatten(out_tree, primals_out)
    return (out, f_jvp, *aux)


def _check_argnums(name: str, argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = index_tuple(argnums, name, "argnums")
    for a in nums:
        if not -nargs <= a < nargs:
            raise TypeError(f"{name}: argnums {argnums} out of range for a function called "
                            f"with {nargs} positional arguments")
    return tuple(a % nargs for a in nums)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False,
                   reduce_axes: Sequence = ()) -> Callable:
    """A function returning ``fun``'s value and its gradient with respect to ``argnums``.

    Args:
      fun: returns a real scalar (or ``(scalar, aux)`` with ``has_aux``).
      argnums: an int or tuple of ints: which positional arguments to differentiate.
      has_aux: ``fun`` returns ``(value, aux)``.
      holomorphic: allow complex inputs/outputs (the function must be holomorphic).
      allow_int: allow integer inputs (their gradients are float0 zeros).

    Returns:
      A function returning ``(value, grad)`` (``((value, aux), grad)`` with has_aux); grad has
      the structure of the selected argument(s).
    """
    check_callable(fun)

    @functools.wraps(fun)
    def vg(*args: Any, **kwargs: Any) -> Any:
        nums = _check_argnums("grad", argnums, len(args))
        dyn = [args[i] for i in nums]
        for i, a in zip(nums, dyn):
            for leaf in pytree.tree_leaves(a):
                dt = core.get_aval(_as_array(leaf)).dtype
                if not allow_int and not dtypes.is_inexact(dt):
                    raise TypeError(
                        f"grad requires real- or complex-valued inputs (input dtype that is a "
                        f"sub-dtype of np.inexact), but got {dt.name} for argument {i}. If you "
                        "want to use Boolean- or integer-valued inputs, use vjp or set "
                        "allow_int to True.")
                if holomorphic and not dtypes.is_complex(dt):
                    raise TypeError(f"grad with holomorphic=True requires inputs with complex "
                                    f"dtype, but got {dt.name} for argument {i}")

        def f_dyn(*d: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, d):
                full[i] = v
            return fun(*full, **kwargs)

        res = vjp(f_dyn, *dyn, has_aux=has_aux)
        out, pullback = res[0], res[1]
        out_arr = _as_array(out) if not isinstance(out, (tuple, list, dict, type(None))) else None
        if out is None:
            raise TypeError("Gradient only defined for scalar-output functions. Output was None.")
        if out_arr is None:
            raise TypeError(f"Gradient only defined for scalar-output functions. Output was "
                            f"a {type(out).__name__}" + (" (with has_aux=True the function "
                            "must return (scalar, aux))" if not has_aux else ""))
        oav = core.get_aval(out_arr)
        if oav.shape != ():
            raise TypeError(f"Gradient only defined for scalar-output functions. Output had "
                            f"shape: {oav.shape}")
        if not holomorphic and not dtypes.is_float(oav.dtype):
            raise TypeError(f"grad requires real-valued outputs (output dtype that is a "
                            f"sub-dtype of np.floating), but got {oav.dtype.name}")
        g = pullback(full_like(out_arr, 1))
        g = g[0] if isinstance(argnums, int) else tuple(g)
        value = (out, res[2]) if has_aux else out
        return value, g

    return vg


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False,
         reduce_axes: Sequence = ()) -> Callable:
    """The gradient of scalar-valued ``fun`` with respect to argument(s) ``argnums``.

    Args: as :func:`value_and_grad`.

    Returns:
      A function with ``fun``'s signature returning the gradient (``(grad, aux)`` with has_aux).
    """
    check_callable(fun)
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def g(*args: Any, **kwargs: Any) -> Any:
        value, grads = vg(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return g
