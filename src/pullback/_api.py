"""The top level's own functions, as JAX's: shapes without computing (``eval_shape``), the one
CPU device (``devices``, ``device_put``, ...), naming and evaluation scopes,
``custom_gradient``, ``linear_transpose``, cache control."""
from __future__ import annotations

import contextlib
import functools
import platform
import sys
from typing import Any, Callable, Iterator

import numpy as np

from . import numpy as jnp
from .primitives.callback import pure_callback_p
from .tracer import core, pytree
from .tracer.array import Array
from .tracer.avals import ShapeDtypeStruct, ShapedArray
from .tracer.errors import check_callable
from .tracer.staging import fun_name, trace_to_jaxpr
from .transforms import jit as _jit
from .transforms.custom_derivatives import closure_convert, custom_vjp
from .transforms.reverse import vjp
from .tree_util import Partial

# ---- shapes ----


def _leaf_aval(x: Any) -> ShapedArray:
    if isinstance(x, ShapeDtypeStruct) or hasattr(x, "aval") or core.is_valid_value(x):
        return core.get_aval(x)
    if hasattr(x, "shape") and hasattr(x, "dtype"):  # duck-typed, as JAX allows
        return core.get_aval(ShapeDtypeStruct(tuple(x.shape), x.dtype))
    return core.get_aval(x)  # (its TypeError)


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes ``fun(*args, **kwargs)`` would return, computing nothing.

    Args:
      fun: the function.
      *args, **kwargs: pytrees of arrays, ``ShapeDtypeStruct`` or anything with ``shape`` and
        ``dtype`` attributes.

    Returns:
      A pytree of ``ShapeDtypeStruct`` with the structure of ``fun``'s output.
    """
    check_callable(fun)
    leaves, tree = pytree.tree_flatten((args, kwargs))
    avals = [_leaf_aval(x) for x in leaves]

    def flat(*xs: Any) -> Any:
        a, k = pytree.tree_unflatten(tree, list(xs))
        return fun(*a, **k)

    closed, out_tree = trace_to_jaxpr(flat, avals, debug_name=fun_name(fun))
    return pytree.tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                            for a in closed.out_avals])


def typeof(x: Any) -> ShapedArray:
    """The abstract value (shape, dtype, weak type) of an array, tracer or scalar.

    Raises:
      TypeError: ``x`` is not an array-like value.
    """
    return core.get_aval(x)


# ---- the one CPU device ----


class Device:
    """A device arrays live on; pullback has one: the CPU (``devices()[0]``)."""

    platform = "cpu"
    device_kind = "cpu"
    id = 0
    process_index = 0
    host_id = 0
    client = None

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"

    def __str__(self) -> str:
        return "TFRT_CPU_0"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Device)

    def __hash__(self) -> int:
        return hash(("pullback-cpu", 0))


_CPU = Device()


def _check_backend(backend: Any) -> None:
    if backend is not None and getattr(backend, "platform", backend) != "cpu":
        raise RuntimeError(f"Unknown backend: '{backend}' requested, but no platforms that are "
                           "instances of it are present. Platforms present are: cpu")


def devices(backend: Any = None) -> list[Device]:
    """The devices of ``backend`` (None or "cpu"): one CPU device."""
    _check_backend(backend)
    return [_CPU]


def local_devices(process_index: int | None = None, backend: Any = None,
                  host_id: int | None = None) -> list[Device]:
    """The devices of this process: the CPU device."""
    _check_backend(backend)
    return [_CPU]


def device_count(backend: Any = None) -> int:
    """The number of devices: 1."""
    _check_backend(backend)
    return 1


def local_device_count(backend: Any = None) -> int:
    """The number of devices of this process: 1."""
    _check_backend(backend)
    return 1


def process_count(backend: Any = None) -> int:
    """The number of processes: 1."""
    return 1


def process_index(backend: Any = None) -> int:
    """This process's index: 0."""
    return 0


def default_backend() -> str:
    """The platform of the default device: ``"cpu"``."""
    return "cpu"


def _check_device(device: Any, what: str) -> None:
    if device is None or device is _CPU or isinstance(device, Device) or device == "cpu":
        return
    raise ValueError(f"{what}: pullback has one device, the CPU ({_CPU!r}); got {device!r}")


@contextlib.contextmanager
def default_device(device: Any = None) -> Iterator[None]:
    """``with default_device(devices("cpu")[0]):`` -- accepted (every array is on the CPU).

    Raises:
      ValueError: ``device`` is not the CPU device.
    """
    _check_device(device, "default_device")
    yield


def _put(x: Any) -> Any:
    if isinstance(x, (Array, core.Tracer)):
        return x
    if isinstance(x, (ShapeDtypeStruct,)):
        raise TypeError("device_put: a ShapeDtypeStruct has no data")
    return jnp.array(x)  # a copy: the caller's buffer may change later


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """Every leaf of ``x`` as an Array (on the CPU device); Arrays are returned as they are.

    Raises:
      ValueError: ``device`` is not the CPU device.
    """
    _check_device(device, "device_put")
    _check_device(src, "device_put")
    return pytree.tree_map(_put, x)


def device_get(x: Any) -> Any:
    """Every Array leaf of ``x`` as a NumPy array; other leaves as they are."""
    def get(v: Any) -> Any:
        if isinstance(v, Array):
            return np.asarray(v)
        return v
    return pytree.tree_map(get, x)


def block_until_ready(x: Any) -> Any:
    """``x``, after every Array leaf has been computed (at once: execution is synchronous)."""
    for leaf in pytree.tree_leaves(x):
        ready = getattr(leaf, "block_until_ready", None)
        if ready is not None:
            ready()
    return x


def effects_barrier() -> None:
    """Waits until callbacks have run: they run synchronously, so at once."""


def print_environment_info(return_string: bool = False) -> str | None:
    """The versions of pullback, NumPy and Python, and the platform."""
    version = getattr(sys.modules.get("pullback"), "__version__", "?")
    info = (f"pullback:    {version}\nnumpy:       {np.__version__}\n"
            f"python:      {sys.version}\ndevice info: cpu-1, 1 local devices\n"
            f"process_count: 1\nplatform: {platform.uname()}\n")
    if return_string:
        return info
    print(info)
    return None


# ---- naming and evaluation scopes ----


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """``fun`` under another name (a name for profiles; the computation is unchanged)."""
    check_callable(fun)

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)
    if name is not None:
        named.__name__ = named.__qualname__ = name
    return named


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """``with named_scope("layer1"):`` -- a name for the operations inside (for profiles)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside the block, operations on concrete values are computed at once, even while a
    function is traced by ``jit``: ``jnp.arange(3).sum()`` is a concrete Array there, usable
    in Python control flow. Operations on traced values are still traced."""
    state = core.state
    prev = state.dynamic
    state.dynamic = state.stack[0]  # the evaluating level: concrete operands are not captured
    try:
        yield
    finally:
        state.dynamic = prev


def clear_caches() -> None:
    """Drops every traced and compiled program (each jit function's cache, the eager control
    flow's compiled programs): the next calls trace and compile again."""
    for f in list(_jit._live):
        f._cache.clear()
        del f._fast[:]
    _jit._compiled_eqns.clear()
    _jit._eqn_programs.clear()


# ---- derivatives ----


def custom_gradient(fun: Callable) -> Callable:
    """A function whose reverse-mode derivative is given with its value, as
    ``jax.custom_gradient``: ``fun(*args)`` returns ``(value, vjp_fn)``, where ``vjp_fn(ct)``
    maps the output cotangent to the cotangents of the arguments (a tuple, or one value for
    one argument).

    Example::

        @custom_gradient
        def clip_gradient(x):
            return x, lambda g: (jnp.clip(g, -1.0, 1.0),)
    """
    check_callable(fun)

    @custom_vjp
    def wrapped(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> Any:
        ans, rule = fun(*args)
        conv, consts = closure_convert(rule, ans)
        return ans, (Partial(conv), consts)

    def bwd(res: Any, ct: Any) -> tuple:
        conv, consts = res
        cts = conv(ct, *consts)
        if pytree.treedef_is_leaf(pytree.tree_structure(cts)):
            cts = (cts,)
        return tuple(cts)

    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun)
    return wrapped


def linear_transpose(fun: Callable, *primals: Any, reduce_axes: tuple = ()) -> Callable:
    """The transpose of the linear function ``fun`` at the shapes and dtypes of ``primals``
    (arrays or ``ShapeDtypeStruct``): a function mapping an output cotangent to the tuple of
    input cotangents.

    Raises:
      TypeError: a primal is not of a floating-point or complex dtype.
    """
    check_callable(fun)
    leaves, tree = pytree.tree_flatten(primals)
    avals = [_leaf_aval(x) for x in leaves]
    for a in avals:
        if not (np.issubdtype(a.dtype, np.inexact) or a.dtype == jnp.bfloat16):
            raise TypeError(f"linear_transpose only supports [float or complex] -> "
                            f"[float or complex], and integer -> integer functions, but got "
                            f"{a.dtype} primal")

    def transposed(out_cotangent: Any) -> tuple:
        zeros = [jnp.zeros(a.shape, a.dtype) for a in avals]
        _, pullback_fn = vjp(fun, *pytree.tree_unflatten(tree, zeros))
        return pullback_fn(out_cotangent)
    return transposed


# ---- host callbacks ----

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None)


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Calls the Python function ``callback`` on the values of ``args``, as
    ``jax.pure_callback``: eagerly, and inside ``jit`` each time the program runs.

    ``callback`` must be pure (a transformation may call it fewer or more times, or drop it
    when its results are unused). It receives Arrays and returns arrays with the shapes and
    dtypes of ``result_shape_dtypes`` (a pytree of ``ShapeDtypeStruct``).

    Args:
      callback: the function.
      result_shape_dtypes: its results' shapes and dtypes (objects with ``shape``/``dtype``).
      *args, **kwargs: its arguments (pytrees of arrays).
      sharding: accepted (one device).
      vmap_method: how ``vmap`` calls it: "sequential" (once per batch element),
        "sequential_unrolled" (the same), "expand_dims" (once; unbatched arguments get a
        leading axis of size 1), "broadcast_all" (once; every argument broadcast to the batch),
        "legacy_vectorized" (once; unbatched arguments as they are); None: vmap raises.

    Returns:
      The results, with the structure of ``result_shape_dtypes``.

    Raises:
      ValueError: an unknown ``vmap_method``; a derivative is taken (JAX's error: use
        custom_jvp/custom_vjp).
      TypeError: the callback's results do not match ``result_shape_dtypes``.
    """
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(_VMAP_METHODS)}, "
                         f"but got: {vmap_method}")
    check_callable(callback)
    flat_args, in_tree = pytree.tree_flatten((args, kwargs))
    avals_out, out_tree = pytree.tree_flatten(result_shape_dtypes)
    result_avals = tuple(ShapedArray(tuple(r.shape), np.dtype(r.dtype)) for r in avals_out)

    def flat_callback(*xs: Any) -> list:
        a, k = pytree.tree_unflatten(in_tree, list(xs))
        outs, tree = pytree.tree_flatten(callback(*a, **k))
        if tree != out_tree:
            raise TypeError(f"pure_callback: the callback returned a value of structure "
                            f"{tree}, but result_shape_dtypes has structure {out_tree}")
        return outs

    outs = pure_callback_p.bind(*flat_args, callback=flat_callback, result_avals=result_avals,
                                vmap_method=vmap_method)
    return pytree.tree_unflatten(out_tree, outs)
