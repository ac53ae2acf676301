"""The IR: Jaxprs of equations over variables, and their printer (JAX's text form)."""
from __future__ import annotations

import itertools
import os
import sys
from typing import Any, NamedTuple

import numpy as np

from .avals import ShapedArray

_var_ids = itertools.count()


class Var:
    """A variable of a Jaxpr: bound once, by an input binder or an equation's output."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self) -> str:
        return f"Var({self.id}:{self.aval.str_short()})"


class Literal:
    """A constant written into an equation: a scalar with its aval."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val})"


Atom = Var | Literal


class SourceInfo(NamedTuple):
    """Where in the user's code an equation was created."""

    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line} ({self.function})"


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# The line of the equation being evaluated by eval_jaxpr (None outside): equations that its
# evaluation creates under a transformation (vmap of a scan body, jvp of a jit program) keep
# the user's line of the equation they come from, as JAX's source-info context does.
current: list[SourceInfo | None] = [None]


def user_source_info() -> SourceInfo | None:
    """The user's line: that of the equation being evaluated, else the innermost stack frame
    outside the pullback package."""
    if current[0] is not None:
        return current[0]
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG_DIR) or os.sep + "tests" + os.sep in fn:
            return SourceInfo(fn, f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return None


class Eqn:
    """One primitive application: ``outvars = primitive[params] invars``."""

    __slots__ = ("primitive", "invars", "params", "outvars", "source_info")

    def __init__(self, primitive: Any, invars: list[Atom], params: dict, outvars: list[Var],
                 source_info: SourceInfo | None = None):
        self.primitive = primitive
        self.invars = invars
        self.params = params
        self.outvars = outvars
        self.source_info = source_info

    def replace(self, **kw: Any) -> "Eqn":
        fields = {s: getattr(self, s) for s in self.__slots__}
        fields.update(kw)
        return Eqn(**fields)

    def __repr__(self) -> str:
        return f"Eqn({self.primitive.name}, {self.invars} -> {self.outvars})"


def locate_error(e: BaseException, eqn: "Eqn", doing: str = "in") -> None:
    """Add a note to ``e`` naming ``eqn``'s primitive and the user's line that created it
    (once: the innermost equation wins)."""
    src = eqn.source_info
    if src is not None and not getattr(e, "_pb_located", False):
        base = getattr(e, "_pb_fp_base", None)
        if base is not None:  # debug_nans: the message names the equation's own line
            what = "created" if doing == "in" else f"{doing} '{eqn.primitive.name}' created"
            e.args = (f"{base} ({what} at {src.file}:{src.line} ({src.function}))",)
        else:
            e.add_note(f"  {doing} '{eqn.primitive.name}' created at {src.file}:{src.line} "
                       f"({src.function})")
        e._pb_located = True


# Primitives with an effect besides their results (debug callbacks): the passes never drop,
# merge, fold or hoist their equations, nor those of a higher-order primitive whose
# sub-program holds one. ``effects_seen`` turns True when the first is traced, so that
# programs of a process that never uses one pay no look for effects.
effectful: set = set()
effects_seen = [False]


def has_effects(eqn: "Eqn") -> bool:
    """Whether ``eqn`` (or a program in its params) applies an effectful primitive."""
    if not effects_seen[0]:
        return False
    if eqn.primitive in effectful:
        return True
    return any(_holds_effects(v) for v in eqn.params.values())


def _holds_effects(v: Any) -> bool:
    if isinstance(v, ClosedJaxpr):
        v = v.jaxpr
    if isinstance(v, Jaxpr):
        return any(has_effects(e) for e in v.eqns)
    if isinstance(v, (tuple, list)):
        return any(_holds_effects(x) for x in v)
    return False


class Jaxpr:
    """A closed-over-nothing program: constvars and invars in, equations, outvars out."""

    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars: list[Var], invars: list[Var], eqns: list[Eqn],
                 outvars: list[Atom]):
        self.constvars = constvars
        self.invars = invars
        self.eqns = eqns
        self.outvars = outvars

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self) -> str:
        return pp_jaxpr(self)


class ClosedJaxpr:
    """A Jaxpr together with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "__weakref__")  # weakly keyed caches of derived programs

    def __init__(self, jaxpr: Jaxpr, consts: list[Any]):
        assert len(consts) == len(jaxpr.constvars)
        self.jaxpr = jaxpr
        self.consts = consts

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def __str__(self) -> str:
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self) -> str:
        return pp_jaxpr(self.jaxpr)


# ---- printer ----

_WIDTH = 80


class _Names:
    """Assigns a, b, ..., z, ba, bb, ... in order of first appearance, as JAX prints."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def __call__(self, v: Var) -> str:
        name = self.names.get(v.id)
        if name is None:
            n, s = len(self.names), ""
            while True:
                s = chr(ord("a") + n % 26) + s
                n //= 26
                if n == 0:
                    break
            self.names[v.id] = name = s
        return name


def _pp_literal(lit: Literal) -> str:
    val = np.asarray(lit.val)
    if isinstance(val, np.ndarray):
        val = val.item() if val.ndim == 0 else val
    if isinstance(val, (bool, np.bool_)):
        s = str(bool(val))
    elif isinstance(val, (float, np.floating)):
        s = repr(float(val))
    else:
        s = str(val)
    return f"{s}:{lit.aval.str_short()}"


def _pp_param(v: Any, names: _Names, indent: int) -> str:
    if isinstance(v, ClosedJaxpr):
        v = v.jaxpr
    if isinstance(v, Jaxpr):
        return "\n".join(_pp_lines(v, names, indent)).lstrip()
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, (tuple, list)):
        items = ", ".join(_pp_param(x, names, indent) for x in v)
        return f"({items},)" if isinstance(v, tuple) and len(v) == 1 else f"({items})"
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return str(v)


def _pp_atom(a: Atom, names: _Names) -> str:
    return names(a) if isinstance(a, Var) else _pp_literal(a)


def _pp_eqn(e: Eqn, names: _Names, indent: int) -> str:
    lhs = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in e.outvars) or "_"
    params = " ".join(f"{k}={_pp_param(v, names, indent + 4)}" for k, v in e.params.items())
    prim = f"{e.primitive.name}[{params}]" if params else e.primitive.name
    args = " ".join(_pp_atom(a, names) for a in e.invars)
    return f"{lhs} = {prim} {args}".rstrip()


def _pp_lines(jaxpr: Jaxpr, names: _Names, indent: int) -> list[str]:
    consts = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in jaxpr.constvars)
    ins = " ".join(f"{names(v)}:{v.aval.str_short()}" for v in jaxpr.invars)
    eqns = [_pp_eqn(e, names, indent + 4) for e in jaxpr.eqns]
    outs = ", ".join(_pp_atom(a, names) for a in jaxpr.outvars)
    outs = f"({outs},)" if len(jaxpr.outvars) == 1 else f"({outs})"
    head = f"{{ lambda {consts}; {ins}. let"
    one_line = f"{head} {' '.join(eqns)} in {outs} }}" if eqns else f"{head} in {outs} }}"
    if len(eqns) <= 1 and "\n" not in one_line and indent + len(one_line) <= _WIDTH:
        return [" " * indent + one_line]
    pad = " " * indent
    lines = [pad + head]
    for e in eqns:
        lines.extend(pad + "    " + ln if i == 0 else ln for i, ln in enumerate(e.split("\n")))
    lines.append(f"{pad}  in {outs} }}")
    return lines


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    """JAX's text form: ``{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }``."""
    return "\n".join(_pp_lines(jaxpr, _Names(), 0))
