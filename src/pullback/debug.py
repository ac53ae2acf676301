"""``pullback.debug``, as ``jax.debug``: printing and callbacks that run where the program
runs -- eagerly, inside ``jit`` (each call of the compiled program), under ``vmap`` (once per
batch element) and ``grad`` (in the forward pass) -- in program order.

Example::

    @pullback.jit
    def f(x):
        y = jnp.sin(x)
        pullback.debug.print("x={x} y={y}", x=x, y=y)
        return y * 2
"""
from __future__ import annotations

import logging as _logging
import string as _string
import sys as _sys
from typing import Any as _Any, Callable as _Callable

import numpy as _np

from .primitives.callback import debug_callback_p as _debug_callback_p
from .tracer import core as _core
from .tracer import pytree as _pytree
from .tracer.array import Array as _Array

__all__ = ["breakpoint", "callback", "log", "print"]

_logger = _logging.getLogger("pullback.debug")


def _split_args(args: tuple, kwargs: dict) -> tuple[_Any, list, dict]:
    """Flat dynamic (array) leaves and the static ones, by position, as JAX splits them."""
    flat, tree = _pytree.tree_flatten((args, kwargs))
    static, dyn = {}, []
    for i, a in enumerate(flat):
        try:
            _core.get_aval(a)
            dyn.append(a)
        except TypeError:
            static[i] = a
    return tree, dyn, static


def _flat_callback(fn: _Callable[..., _Any], tree: _Any, static: dict) -> _Callable[..., None]:
    n = tree.num_leaves

    def flat(*dyn: _Any) -> None:
        it = iter(dyn)
        leaves = [static[i] if i in static else next(it) for i in range(n)]
        a, k = _pytree.tree_unflatten(tree, leaves)
        fn(*a, **k)
    return flat


def callback(callback: _Callable[..., None] | None = None, *args: _Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: _Any) -> _Callable[..., None] | None:
    """Calls ``callback(*args, **kwargs)`` with the arrays' values, as ``jax.debug.callback``.

    Array arguments (pytrees of them) reach the callback as Arrays holding their values at
    that point of the program; other arguments as they are. Also usable as
    ``callback(ordered=True)(fn, *args)``. Calls run in program order (``ordered`` is
    accepted: pullback runs every program's steps in order).

    Raises:
      TypeError: ``callback`` is not callable.
    """
    def call(cb: _Callable[..., None], *c_args: _Any, **c_kwargs: _Any) -> None:
        if not callable(cb):
            raise TypeError("first argument to jax.debug.callback must be callable, but got "
                            f"an object of type {type(cb)}")
        tree, dyn, static = _split_args(c_args, c_kwargs)
        _debug_callback_p.bind(*dyn, callback=_flat_callback(cb, tree, static),
                               ordered=bool(ordered))

    if callback is not None:
        call(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_callback received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")
    return call


class _FormatChecker(_string.Formatter):
    """JAX's check of a format string against its arguments (nothing is formatted)."""

    def format_field(self, value: _Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: set, args: tuple, kwargs: dict) -> None:
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead "
                "should pass in a regular string.")


_checker = _FormatChecker()


def _numpy(x: _Any) -> _Any:
    return _np.asarray(x) if isinstance(x, _Array) else x


def _emit(fmt: str, printoptions: dict, placeholders: bool, use_logging: bool,
          *args: _Any, **kwargs: _Any) -> None:
    # values print as JAX's do: NumPy's text of the array ("[0. 1.]", "1.5")
    args, kwargs = _pytree.tree_map(_numpy, (args, kwargs))
    if placeholders:
        with _np.printoptions(**printoptions):
            msg = fmt.format(*args, **kwargs)
    else:
        msg = " ".join((fmt, *(str(a) for a in args)))
    if use_logging:
        _logger.info(msg)
    else:
        _sys.stdout.write(msg + "\n")


def print(fmt: str | None = None, *args: _Any, ordered: bool = False,  # noqa: A001
          partitioned: bool = False, skip_format_check: bool = False,
          _use_logging: bool = False, **kwargs: _Any) -> _Callable[..., None] | None:
    """Prints ``fmt.format(*args, **kwargs)`` with the arrays' values when the program runs,
    as ``jax.debug.print`` (a plain string, not an f-string: formatting happens later).

    A ``fmt`` without placeholders prints followed by the arguments. NumPy's print options
    in force at the call apply. Also usable as ``print(ordered=True)(fmt, *args)``.

    Raises:
      ValueError: an argument the format does not use (JAX's check; ``skip_format_check``
        skips it).
    """
    def emit(f: str, *c_args: _Any, **c_kwargs: _Any) -> None:
        if not skip_format_check:
            _checker.format(f, *c_args, **c_kwargs)
        placeholders = False
        if f:
            _, field, *_ = next(iter(_string.Formatter().parse(f)))
            placeholders = field is not None
        opts = _np.get_printoptions()

        def out(*a: _Any, **k: _Any) -> None:
            _emit(f, opts, placeholders, _use_logging, *a, **k)
        callback(out, *c_args, ordered=ordered, **c_kwargs)

    if fmt is not None:
        emit(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_print received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")
    return emit


def log(fmt: str | None = None, *args: _Any, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs: _Any) -> _Callable[..., None] | None:
    """As ``print``, through the ``logging`` module (logger "pullback.debug", level INFO)."""
    return print(fmt, *args, ordered=ordered, partitioned=partitioned,
                 skip_format_check=skip_format_check, _use_logging=True, **kwargs)


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False,
               token: _Any = None, **kwargs: _Any) -> _Any:
    """Enters the Python debugger (``pdb``) at this point of the program, with the caller's
    frame, as ``jax.debug.breakpoint``: eagerly at once; inside a transformation when the
    program reaches it. Variables of the traced function hold Arrays when eager.
    """
    frame = _sys._getframe(1)

    def stop() -> None:
        import pdb  # noqa: PLC0415  (the debugger, only when a breakpoint is reached)
        dbg = pdb.Pdb()
        dbg.reset()
        dbg.interaction(frame, None)

    callback(stop, ordered=ordered)
    return token


def __dir__() -> list[str]:
    return sorted(__all__)
