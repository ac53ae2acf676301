"""``jit``: trace once per signature, cache, compile, and run the compiled program.

At level 0 (no transformation active) a jitted call runs its compiled C schedule
(backends/cpu/compiler): the common call -- positional Arrays only, no static arguments --
takes a fast path keyed on the tuple of argument avals straight to one C call. Under an
enclosing trace (``make_jaxpr``, ``grad``, ``vmap``, another ``jit``) the call binds the ``jit``
call primitive with the traced Jaxpr as a parameter, recorded as one nested equation; that
primitive's own evaluation (e.g. inside an eagerly evaluated jvp) also runs the compiled program
of its Jaxpr. With ``config.backend == "reference"`` the Jaxpr is interpreted instead.
"""
from __future__ import annotations

import enum
import functools
import inspect
import sys
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from ..config import config
from ..primitives.rules import is_undefined
from ..tracer import core, debug, pytree
from ..tracer.array import Array, delete
from ..tracer.avals import ShapedArray
from ..tracer.errors import check_callable
from ..tracer.executor import installed as _installed_executor
from ..tracer.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ..tracer.shapes import index_tuple
from ..tracer.staging import eval_jaxpr, fun_name, trace_to_jaxpr

from .jit_primitive import jit_p
from .jvp import jvp_flat
from .passes import optimize as _optimize
from .transpose import backward_pass
from .vmap import vmap

# the backend's executor (installed when the package imported the backend)
_EXECUTOR = _installed_executor()
_FAST_MAX_LEAVES = _EXECUTOR.fast_max_leaves
_JitBase = _EXECUTOR.jit_base
_LayoutError = _EXECUTOR.layout_error
_to_ndarray = _EXECUTOR.to_ndarray


# ---- the call primitive ----

def _jit_aval(*avals, name: str, jaxpr: ClosedJaxpr):
    want = jaxpr.in_avals
    if len(avals) != len(want) or any(a.strip_weak_type() != w.strip_weak_type()
                                      for a, w in zip(avals, want)):
        raise TypeError(f"jit: the program traced for {name} takes "
                        f"{[w.str_short() for w in want]}, got {[a.str_short() for a in avals]}")
    return jaxpr.out_avals


def _jit_interpret(*args, name: str, jaxpr: ClosedJaxpr):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


_jit_interpret.interpreted = True  # runs on Arrays, binding each equation in turn

# Compiled programs of jit equations evaluated eagerly, by id of their ClosedJaxpr (kept alive
# by the entry, so the id stays unique); bounded.
_compiled_eqns: dict[int, tuple[ClosedJaxpr, Any]] = {}
_MAX_COMPILED_EQNS = 512


def _jit_run(*args, name: str, jaxpr: ClosedJaxpr):
    """The ``jit`` primitive at level 0: the compiled program of its Jaxpr."""
    if config.backend != "cpu":
        return _jit_interpret(*args, name=name, jaxpr=jaxpr)
    hit = _compiled_eqns.get(id(jaxpr))
    if hit is None or hit[0] is not jaxpr:
        if len(_compiled_eqns) >= _MAX_COMPILED_EQNS:
            _compiled_eqns.clear()
        opt = _optimize(jaxpr)
        program = closure_convert(opt)
        consts = {i: _to_ndarray(c, v.aval) for i, (c, v) in
                  enumerate(zip(opt.consts, program.jaxpr.invars))}
        hit = _compiled_eqns[id(jaxpr)] = (jaxpr, _compile(program, consts, name, ()))
    compiled = hit[1]
    outs = compiled.run(*[_to_ndarray(a, v.aval) for a, v in zip(args, jaxpr.jaxpr.invars)])
    if debug.checking and debug.invalid_kind(outs):
        # re-run op by op: the first equation making the value raises, naming its line
        _jit_interpret(*args, name=name, jaxpr=jaxpr)
        raise _not_reproduced(debug.invalid_kind(outs), name)
    return [Array._new(o, a) for o, a in zip(outs, compiled.out_avals)]


_jit_run.interpreted = True  # takes Arrays (it is a call primitive), not ndarrays


def _not_reproduced(kind: str, name: str) -> FloatingPointError:
    """JAX's error when the program's result holds a NaN (an inf) but its op-by-op re-run
    does not (e.g. different rounding of fused operations)."""
    return FloatingPointError(
        f"invalid value ({kind}) encountered in jit({name}). Because jax_config.debug_nans.value "
        "and/or config.jax_debug_infs is set, the de-optimized function (i.e., the function as "
        "if the `jit` decorator were removed) was called in an attempt to get a more precise "
        "error message. However, the de-optimized function did not produce invalid values "
        "during its execution. This behavior can result from `jit` optimizations causing the "
        "invalid value to be produced. It may also arise from having nan/inf constants as "
        "outputs, like `jax.jit(lambda ...: jax.numpy.nan)(...)`. ")


def _compile(closed: ClosedJaxpr, consts: dict, name: str, donated, layout=None,
             strict: bool = False, flush_denormals: bool | None = None) -> Any:
    return _EXECUTOR.compile(closed.jaxpr, consts, name, donated, layout, strict,
                             flush_denormals)


# ---- eager control flow: one compiled program per loop ----

# scan, while and cond applied to concrete operands (no transformation acting on them) run as
# one compiled program of their equation, as JAX compiles an eager loop's body, instead of
# interpreting the body step by step. The programs are cached by the equation's structure --
# the primitive, the operands' avals and the parameters, whose Jaxprs are compared by content
# (``lax.scan`` traces its body anew on every call) -- bounded. Under debug_nans/debug_infs,
# disable_jit or the reference backend the body is interpreted (each primitive checked, run
# op by op). Set False to interpret always (tests compare both).
compile_eager_control_flow = True
_eqn_programs: dict = {}
_MAX_EQN_PROGRAMS = 256


class _Unkeyable(Exception):
    """A parameter with no content key (a callable, an object): the equation is interpreted."""


def _literal_key(v: Any) -> Any:
    if isinstance(v, float):
        return (float, v.hex())  # (-0.0 and 0.0 differ, NaN equals itself)
    if isinstance(v, (bool, int, complex, str)) or v is None:
        return (type(v), v)
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return (a.dtype.str, a.shape, a.tobytes())
    if type(v) is Array:
        return ("array",) + _literal_key(v._value)
    raise _Unkeyable(type(v).__name__)


def _jaxpr_key(j: Jaxpr) -> tuple:
    ids: dict = {}
    for v in (*j.constvars, *j.invars):
        ids[v] = len(ids)
    def atom(a: Any) -> Any:
        got = ids.get(a) if not isinstance(a, Literal) else None
        if got is not None:
            return got
        if isinstance(a, Literal):
            return ("lit", a.aval, _literal_key(a.val))
        raise _Unkeyable("a free variable")
    eqns = []
    for e in j.eqns:
        eqns.append((e.primitive, tuple([atom(a) for a in e.invars]), _params_key(e.params),
                     tuple([v.aval for v in e.outvars])))
        for v in e.outvars:
            ids[v] = len(ids)
    return (len(j.constvars), tuple([v.aval for v in (*j.constvars, *j.invars)]), tuple(eqns),
            tuple([atom(a) for a in j.outvars]))


def _value_key(v: Any) -> Any:
    if isinstance(v, ClosedJaxpr):
        return ("closed", _jaxpr_key(v.jaxpr), tuple([_literal_key(c) for c in v.consts]))
    if isinstance(v, Jaxpr):
        return ("jaxpr", _jaxpr_key(v))
    if isinstance(v, (tuple, list)):
        return (type(v), tuple([_value_key(x) for x in v]))
    if isinstance(v, (np.dtype, enum.Enum)):
        return (type(v), v)
    return _literal_key(v)


def _params_key(params: dict) -> tuple:
    return tuple([(k, _value_key(v)) for k, v in params.items()])


def run_compiled_eqn(prim: Primitive, args: Sequence[Any], params: dict) -> list | None:
    """``prim(*args, **params)`` (a control-flow primitive on concrete operands) as one compiled
    program, cached by the equation's structure; None where it is interpreted instead."""
    if not compile_eager_control_flow or config.backend != "cpu" or debug.checking or \
            config.jax_disable_jit:
        return None
    avals = tuple([core.get_aval(a) for a in args])
    try:
        key = (prim, avals, _params_key(params))
    except _Unkeyable:
        return None
    hit = _eqn_programs.get(key)
    if hit is None:
        out = prim.rule("abstract_eval")(*avals, **params)
        invars = [Var(a) for a in avals]
        outvars = [Var(a) for a in (out if prim.multiple_results else [out])]
        opt = _optimize(ClosedJaxpr(Jaxpr([], invars, [Eqn(prim, invars, params, outvars)],
                                          outvars), []))
        program = closure_convert(opt)
        consts = {i: _to_ndarray(c, v.aval)
                  for i, (c, v) in enumerate(zip(opt.consts, program.jaxpr.invars))}
        # IEEE subnormals, as the interpreted body computes them
        compiled = _compile(program, consts, prim.name, (), flush_denormals=False)
        if len(_eqn_programs) >= _MAX_EQN_PROGRAMS:
            _eqn_programs.clear()
        hit = _eqn_programs[key] = compiled
    vals = [np.asarray(_to_ndarray(a, av)) for a, av in zip(args, avals)]
    outs = run_program(hit, args, vals)
    return outs if prim.multiple_results else outs[0]

# Under jvp, vmap and transposition the call is inlined (its equations are transformed one by
# one); the compiled executor keeps the boundary.

def _jit_jvp(primals, tangents, *, name: str, jaxpr: ClosedJaxpr):
    outs, tans, _ = jvp_flat(lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs),
                             primals, tangents, name=f"jvp({name})")
    return outs, tans


def _jit_batch(vals, dims, *, name: str, jaxpr: ClosedJaxpr):
    outs = vmap(lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs), in_axes=tuple(dims))(*vals)
    return outs, [0] * len(outs)


def _jit_transpose(cts, *args, name: str, jaxpr: ClosedJaxpr):
    lin = [is_undefined(a) for a in args]
    out = backward_pass(jaxpr.jaxpr, jaxpr.consts, lin, args, cts)
    return [o if l else None for o, l in zip(out, lin)]


# (jit_p is declared in jit_primitive.py: the passes create jit equations too)
jit_p.abstract_eval = _jit_aval
jit_p.cpu = _jit_run
jit_p.reference = _jit_interpret
jit_p.jvp = _jit_jvp
jit_p.transpose = _jit_transpose
jit_p.batch = _jit_batch


def closure_convert(closed: ClosedJaxpr) -> ClosedJaxpr:
    """The same program with its constants turned into leading inputs."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), [])


# ---- arguments: static / dynamic split and pytree flattening ----

def _argnums(value: Any, arg: str) -> tuple[int, ...]:
    """jit's ``static_argnums``/``donate_argnums``: an int or a sequence of ints (None: none)."""
    return () if value is None else index_tuple(value, "jit", arg)


def _argnames(value: Any) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else value
    if names is None:
        return ()
    if not hasattr(names, "__iter__") or not all(isinstance(n, str) for n in names):
        raise TypeError(f"jit: argument 'static_argnames' must be a str or a sequence of str, "
                        f"got {value!r}")
    return tuple(names)


def _normalize_static(fun: Callable, static_argnums, static_argnames):
    nums = _argnums(static_argnums, "static_argnums")
    names = _argnames(static_argnames)
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not any(p.kind == p.VAR_POSITIONAL for p in params):
        bad = [i for i in nums if not -len(positional) <= i < len(positional)]
        if bad:  # JAX's check, when the signature says how many positions there are
            raise ValueError(f"Jitted function has static_argnums={nums}, but only accepts "
                             f"{len(positional)} positional arguments.")
    # as JAX does, a static position implies its name and vice versa
    names = names + tuple(positional[i] for i in nums if -len(positional) <= i < len(positional)
                          and positional[i] not in names)
    nums = nums + tuple(positional.index(n) for n in names if n in positional
                        and positional.index(n) not in nums)
    return nums, names


def _hashable_static(fun_name_: str, where: str, value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"jit: the static argument {where} of {fun_name_} must be hashable "
                        f"(it is part of the cache key), got a value of type "
                        f"{type(value).__name__}: {value!r}. Pass a tuple instead of a list, or "
                        "make the argument non-static.") from None
    return value


def leaf_names(fun: Callable, args: tuple, kwargs: dict) -> list[str]:
    """Readable names of the leaves of (args, kwargs), for error messages: ``x``,
    ``params['w']``, ``args[2]``."""
    try:
        positional = [p.name for p in inspect.signature(fun).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        positional = []
    names = []
    for path, _ in pytree.tree_flatten_with_path((args, kwargs))[0]:
        head, key, rest = path[0], path[1], path[2:]
        if head.idx == 0:
            base = positional[key.idx] if key.idx < len(positional) else f"args[{key.idx}]"
        else:
            base = str(key.key)
        names.append(f"argument {base}{pytree.keystr(rest)}")
    return names


class _Entry:
    """One traced signature: the closure-converted program, its constants, the output tree, and
    (at level 0, compiled on first use) its C program."""

    __slots__ = ("program", "consts", "out_tree", "in_spec", "compiled", "_optimized")

    def __init__(self, program: ClosedJaxpr, consts: list, out_tree: Any, in_spec: Any):
        self.program = program  # as traced: what a staging trace records in a `jit` equation
        self.consts = consts
        self.out_tree = out_tree
        self.in_spec = in_spec  # the positional arguments' tree as a FastCall spec, or None
        self.compiled: dict = {}  # input layout (None: all C-contiguous) -> compiled program
        self._optimized: tuple[ClosedJaxpr, list] | None = None

    def optimized(self) -> tuple[ClosedJaxpr, list]:
        """The program after the passes, closure-converted, and its constants (folding may
        add constants: they lead the inputs, before the traced constants)."""
        if self._optimized is None:
            opt = _optimize(self.program)
            self._optimized = (closure_convert(opt), [*opt.consts, *self.consts])
        return self._optimized


class JitFunction(_JitBase):
    """A function compiled on first call for each new argument signature.

    Calls go through the C base's fast path (Arrays of a compiled signature in tuples and
    lists, no transformation active) and otherwise through ``_call``."""

    def __init__(self, fun: Callable, static_argnums, static_argnames, donate_argnums):
        check_callable(fun)
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = fun_name(fun)
        self._static_argnums, self._static_argnames = _normalize_static(
            fun, static_argnums, static_argnames)
        self._donate_argnums = ((donate_argnums,) if isinstance(donate_argnums, int)
                                else tuple(donate_argnums or ()))
        self._cache: dict[Any, _Entry] = {}
        _live.add(self)
        # self._fast (the C base's list): (FastCall, output tree or None) per compiled
        # signature of Arrays in tuples and lists; a FastCall returns NotImplemented otherwise

    def _split(self, args: tuple, kwargs: dict):
        n = len(args)
        static_pos = {i % n for i in self._static_argnums if -n <= i < n}
        statics = tuple((i, _hashable_static(self._name, f"at position {i}", args[i]))
                        for i in sorted(static_pos))
        statics += tuple((k, _hashable_static(self._name, f"'{k}'", kwargs[k]))
                         for k in sorted(kwargs) if k in self._static_argnames)
        # static positions hold None, an empty subtree, in the pytree of traced arguments
        dyn_args = tuple(None if i in static_pos else a for i, a in enumerate(args))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        return dyn_args, dyn_kwargs, statics

    def _trace(self, treedef, avals, statics):
        static_map = dict(statics)

        def flat_fun(*leaves):
            dyn_args, dyn_kwargs = pytree.tree_unflatten(treedef, leaves)
            args = tuple(static_map[i] if i in static_map else a for i, a in enumerate(dyn_args))
            kwargs = {**dyn_kwargs, **{k: v for k, v in statics if isinstance(k, str)}}
            return self._fun(*args, **kwargs)

        dyn_args, dyn_kwargs = pytree.tree_unflatten(treedef, [0] * treedef.num_leaves)
        names = leaf_names(self._fun, dyn_args, dyn_kwargs)
        return trace_to_jaxpr(flat_fun, avals, debug_name=self._name, arg_names=names)

    def _entry(self, args: tuple, kwargs: dict):
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, treedef = pytree.tree_flatten((dyn_args, dyn_kwargs))
        avals = tuple(core.get_aval(x) for x in leaves)
        key = (treedef, avals, statics, _trace_context())
        entry = self._cache.get(key)
        if entry is None:
            closed, out_tree = self._trace(treedef, avals, statics)
            in_spec = (None if statics or dyn_kwargs
                       else pytree.builtin_template(treedef.children()[0]))
            entry = _Entry(closure_convert(closed), closed.consts, out_tree, in_spec)
            if not any(isinstance(c, core.Tracer) for c in closed.consts):
                self._cache[key] = entry  # a closure over an outer tracer is traced anew
        return entry, leaves, avals, dyn_args, statics

    def _donated_leaves(self, dyn_args: tuple) -> list[int]:
        if not self._donate_argnums:
            return []
        n, out, start = len(dyn_args), [], 0
        donate = {i % n for i in self._donate_argnums if -n <= i < n}
        for i, a in enumerate(dyn_args):
            k = len(pytree.tree_leaves(a))
            if i in donate:
                out.extend(range(start, start + k))
            start += k
        return out

    def _compiled(self, entry: _Entry, dyn_args: tuple, layout: tuple | None = None) -> Any:
        compiled = entry.compiled.get(layout)
        if compiled is None:
            program, const_vals = entry.optimized()
            invars = program.jaxpr.invars
            consts = {i: _to_ndarray(c, invars[i].aval) for i, c in enumerate(const_vals)}
            donated = [len(const_vals) + i for i in self._donated_leaves(dyn_args)]
            compiled = entry.compiled[layout] = _compile(program, consts, self._name,
                                                         donated, layout, strict=True)
        return compiled

    def _call(self, args: tuple, kwargs: dict) -> Any:
        if config.jax_disable_jit:  # as JAX: the function itself, op by op
            return self._fun(*args, **kwargs)
        entry, leaves, avals, dyn_args, statics = self._entry(args, kwargs)
        if core.state.eager and config.backend == "cpu":
            donated = self._donated_leaves(dyn_args)
            vals = [np.asarray(_to_ndarray(x, a)) for x, a in zip(leaves, avals)]
            layout = _layout_key(vals)
            compiled = self._compiled(entry, dyn_args, layout)
            try:
                outs = run_program(compiled, leaves, vals, donated)
            except _LayoutError:  # misaligned for the program: run on aligned copies
                vals, layout = [np.array(v) for v in vals], None
                compiled = self._compiled(entry, dyn_args, layout)
                outs = run_program(compiled, leaves, vals, donated)
            if debug.checking:
                self._check(outs, args, kwargs)
            if layout is None and entry.in_spec is not None and not kwargs and \
                    not donated and len(self._fast) < _MAX_FAST and not _slow_only() and \
                    len(leaves) <= _FAST_MAX_LEAVES and all(type(x) is Array for x in leaves):
                self._fast.append(_fast_runner(compiled, entry.out_tree, avals, entry.in_spec))
            return pytree.tree_unflatten(entry.out_tree, outs)
        outs = jit_p.bind(*entry.consts, *leaves, name=self._name, jaxpr=entry.program)
        return pytree.tree_unflatten(entry.out_tree, outs)

    def _check(self, outs: Sequence[Array], args: tuple, kwargs: dict) -> None:
        """debug_nans/debug_infs: when a result holds a NaN (an inf), run the function again
        op by op, eagerly, so that the first primitive making one raises, naming its line (as
        JAX re-runs the de-optimized function)."""
        kind = debug.invalid_kind([o._value for o in outs])
        if kind is None:
            return
        print("Invalid nan value encountered in the output of a jax.jit function. Calling the "
              "de-optimized version.")  # (JAX's notice)
        with config.scoped("jax_disable_jit", True):
            self._fun(*args, **kwargs)
        raise _not_reproduced(kind, self._name)

    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        """Trace for these arguments (as JAX's ``jit(f).lower``): the Jaxpr after the passes,
        ready to compile."""
        entry, _, _, dyn_args, _ = self._entry(args, kwargs)
        return Lowered(self, entry, dyn_args)

    def _cache_size(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"<jitted function {self._name}>"


def run_program(compiled: Any, leaves: Sequence[Any], vals: list[np.ndarray],
                donated: Sequence[int] = ()) -> list[Array]:
    """Run ``compiled`` on ``vals`` (the ndarrays of ``leaves``) and wrap its results.

    Memory the caller can see never changes and no result shares it: a donated leaf's buffer
    is taken only when the leaf is an Array that alone holds it (it owns its memory, nothing
    -- a view, an exported NumPy array, another Array or argument -- refers to it); the leaf is
    then deleted, as in JAX. Any other donated leaf is passed read-only, so the program leaves
    it alone. A result that is a view of a caller's NumPy argument is copied (JAX copies
    arguments to its device)."""
    taken = []
    for j in donated:
        # (under debug_nans/debug_infs nothing is taken: a hit re-runs on the same arguments)
        if not debug.checking and _sole_owner(leaves[j], leaves, vals[j]):
            taken.append(j)
        elif vals[j].flags.writeable:
            vals[j] = vals[j].view()
            vals[j].flags.writeable = False
    outs = compiled.run(*vals)
    for j in taken:
        if any(o is vals[j] for o in outs):
            delete(leaves[j])
    results = []
    for o, a, al in zip(outs, compiled.out_avals, compiled.alias):
        if al is not None and al.buf.kind == "input" and type(leaves[al.buf.index]) is not Array:
            o = np.array(o)
        results.append(Array._new(o, a))
    return results


def _sole_owner(x: Any, leaves: Sequence[Any], v: np.ndarray) -> bool:
    """``x`` is an Array whose ndarray ``v`` owns its memory and is referred to only by ``x``
    (the references counted are x's, the argument list's and this call's), and ``x`` is passed
    once."""
    return (type(x) is Array and v.base is None and v.flags.writeable and
            sys.getrefcount(v) <= 4 and sum(y is x for y in leaves) == 1)


def _layout_key(vals: list) -> tuple | None:
    """None when every argument is C-contiguous (the default compiled layout), else the strides
    of each non-contiguous one: jit specializes on them so kernels read them in place."""
    if all(v.flags.c_contiguous for v in vals):
        return None
    return tuple(None if v.flags.c_contiguous else v.strides for v in vals)


_MAX_FAST = 8  # signatures tried on the fast path, in order of first use


def _fast_runner(compiled: Any, out_tree: Any, in_avals: tuple, in_spec: tuple) -> tuple:
    """(FastCall, tree): the C object that runs ``compiled`` on Arrays of ``in_avals`` laid out
    as ``in_spec`` (the positional arguments' tree) and returns its results in the output tree,
    and the tree to unflatten them into when the FastCall cannot build it (else None)."""
    fast_call = _EXECUTOR.fast_call
    out_spec = pytree.builtin_template(out_tree)
    if out_spec is None:  # (None also marks the FastCall's flat list)
        return fast_call(compiled.program, Array, ShapedArray, tuple(in_avals),
                         tuple(compiled.out_avals), in_spec, None), out_tree
    return fast_call(compiled.program, Array, ShapedArray, tuple(in_avals),
                     tuple(compiled.out_avals), in_spec, out_spec), None


class Lowered:
    """A traced jit call (``jit(f).lower(*args)``): ``as_text()`` is the Jaxpr after the
    target-independent passes; ``compile()`` builds the C schedule."""

    def __init__(self, fun: JitFunction, entry: _Entry, dyn_args: tuple):
        self._fun, self._entry, self._dyn_args = fun, entry, dyn_args

    def as_text(self) -> str:
        """The program's Jaxpr (constants as leading inputs) after the passes."""
        return str(self._entry.optimized()[0])

    def compile(self) -> "Compiled":
        """The compiled schedule."""
        return Compiled(self._fun._compiled(self._entry, self._dyn_args), self._entry,
                        self._fun._donated_leaves(self._dyn_args))


class Compiled:
    """A compiled jit program (``jit(f).lower(*args).compile()``)."""

    def __init__(self, compiled: Any, entry: _Entry, donated: Sequence[int] = ()):
        self._compiled, self._entry, self._donated = compiled, entry, list(donated)

    def as_text(self) -> str:
        """The schedule: one line per step (kernel, operands with arena offsets and shapes,
        fused regions with their ops) and the memory plan."""
        return self._compiled.as_text()

    def memory_analysis(self) -> Any:
        """Argument, output and temporary (arena) bytes, with JAX's attribute names
        (``argument_size_in_bytes``, ``output_size_in_bytes``, ``temp_size_in_bytes``, ...)."""
        return self._compiled.memory_analysis()

    def cost_analysis(self) -> dict:
        """``{"flops": ..., "bytes accessed": ...}`` summed over the schedule."""
        return self._compiled.cost_analysis()

    def __call__(self, *args: Any) -> Any:
        leaves = pytree.tree_leaves(args)
        avals = [core.get_aval(x) for x in leaves]
        vals = [np.asarray(_to_ndarray(x, a)) for x, a in zip(leaves, avals)]
        outs = run_program(self._compiled, leaves, vals, self._donated)
        kind = debug.invalid_kind([o._value for o in outs]) if debug.checking else None
        if kind is not None:  # re-run the program op by op: the first bad equation raises
            eval_jaxpr(self._entry.program.jaxpr, [], *self._entry.consts, *leaves)
            raise _not_reproduced(kind, self._fun._name)
        return pytree.tree_unflatten(self._entry.out_tree, outs)


_EXECUTOR.jit_setup(core.state, config, pytree.tree_unflatten)


# ---- switches read when a function is traced or called ----

# Options that change what tracing produces: part of the cache key (as JAX's jit key).
_TRACE_OPTIONS = ("jax_enable_x64", "jax_numpy_rank_promotion", "jax_numpy_dtype_promotion",
                  "jax_threefry_partitionable", "jax_default_matmul_precision")
# Options under which calls must reach ``_call`` (disable_jit, result checks): the C fast path
# skips both, so while one is on no fast runner is kept.
_SLOW_OPTIONS = ("jax_disable_jit", "jax_debug_nans", "jax_debug_infs")
_live: "weakref.WeakSet[JitFunction]" = weakref.WeakSet()


def _trace_context() -> tuple:
    return tuple([getattr(config, n) for n in _TRACE_OPTIONS])


def _slow_only() -> bool:
    return any(getattr(config, n) for n in _SLOW_OPTIONS)


def _on_update(name: str, value: Any) -> None:
    # the fast runners dispatch on argument avals alone: drop them when an option changes what
    # a call must do (they are rebuilt on the next calls)
    if name in _TRACE_OPTIONS or (name in _SLOW_OPTIONS and value):
        for f in list(_live):
            del f._fast[:]


config.watch(_on_update)


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = ()) -> Any:
    """Compile ``fun``: trace it once per argument signature and reuse the traced program.

    Args:
      fun: the function to compile. Its arguments are arrays or pytrees of arrays, except the
        static ones; it returns arrays or a pytree of them.
      static_argnums: positions of arguments that are Python values (hashable) rather than
        arrays; each new value retraces.
      static_argnames: names of keyword arguments treated the same way.
      donate_argnums: positions whose buffers the call may reuse: an output of the same shape
        and dtype computed element-wise after the last read of a donated argument is written
        into that argument's memory (when it is a writeable C-contiguous array), as JAX does;
        the donated Array must not be used afterwards.

    Returns:
      A function with the same signature whose calls trace ``fun`` at most once per
      (pytree structure, shapes and dtypes, static values) and run the cached program.

    Python side effects in ``fun`` happen while it is traced, i.e. once per new signature.
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums)
    _argnums(donate_argnums, "donate_argnums")  # a TypeError now, naming it, if not ints
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums)
