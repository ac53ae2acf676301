"""The IR of the random programs of tests/programs.py, and the generator's state.

A program is a small IR: its inputs (how each is built from a seeded NumPy generator, including
views: transposed, strided, broadcast, reversed) and a list of ``Op`` records, each one line of
Python over earlier values. ``Program.source()`` prints it as a pasteable script and
``Program.build()`` executes that same text, so a shrunk failure is exactly the program shown.
Shapes, dtypes and a magnitude bound are tracked while generating, so every program is valid by
construction and its floats stay finite (exp, products and powers only see bounded operands).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

FLOATS = ("float32", "float64")
RANK = {"bool": 0, "int32": 1, "float32": 2, "float64": 3}
DIMS = (2, 3, 1, 4, 5)             # sampled_from shrinks toward 2; 1 is an edge case
EMPTY_DIMS = DIMS + (0,)           # and 0, in a quarter of the programs
BIG = 1e4                          # growing ops (mul, pow, prod, dot...) keep bounds below this
INT_BIG = 2 ** 20                  # and integers far from overflow (signed overflow is UB in C)
CONTROL = ("scan", "fori_loop", "while_loop", "cond")

# Custom-derivative helpers a program may call; only the ones used are printed.
HELPERS = {
    "softclip": '''\
@jax.custom_jvp
def softclip(x):
    return 2.0 * jnp.tanh(x)


@softclip.defjvp
def _softclip_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softclip(x), 2.0 * (1.0 - jnp.tanh(x) ** 2) * t
''',
    "sinmul": '''\
@jax.custom_vjp
def sinmul(x, y):
    return jnp.sin(x) * y


def _sinmul_fwd(x, y):
    return sinmul(x, y), (x, y)


def _sinmul_bwd(res, g):
    x, y = res
    return jnp.cos(x) * y * g, jnp.sin(x) * g


sinmul.defvjp(_sinmul_fwd, _sinmul_bwd)
''',
}


@dataclass(frozen=True)
class Val:
    name: str
    shape: tuple
    dtype: str
    bound: float                   # |value| <= bound (a generous over-estimate)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOATS


@dataclass(frozen=True)
class Input:
    val: Val
    make: str                      # expression over ``rng`` (and earlier inputs) building it
    batched: bool = False          # vmap programs: the input carries a leading batch axis


@dataclass(frozen=True)
class Op:
    kind: str                      # catalogue name: counted, and matched by known-bug signatures
    outs: tuple                    # Vals
    code: str                      # right-hand side (a tuple of len(outs) if several)
    reads: tuple                   # names of the values it reads
    defs: str = ""                 # nested function definitions it uses (loop bodies ...)
    unpack: bool = False           # code returns a sequence of len(outs)


@dataclass(repr=False)
class Program:
    inputs: list
    ops: list
    outputs: list                  # names returned (may repeat, may be inputs)
    seed: int
    helpers: list = field(default_factory=list)
    batch: int = 0                 # vmap programs: size of the leading batch axis
    donate: tuple = ()             # positions given to donate_argnums

    def vals(self) -> dict:
        out = {i.val.name: i.val for i in self.inputs}
        for op in self.ops:
            out.update({v.name: v for v in op.outs})
        return out

    def out_vals(self) -> list:
        vals = self.vals()
        return [vals[n] for n in self.outputs]

    def fragile(self) -> set:
        """Names of the values rounding may change discontinuously: integers and bools computed
        from floats (comparisons, argmax, argsort, top_k's indices, casts), and everything
        computed from them. Kernels that round differently (NumPy's, in the reference backend)
        may break a tie the other way, e.g. argsort of a*a*b against b*a*a."""
        vals, out = self.vals(), set()
        for op in self.ops:
            if any(r in out for r in op.reads):
                out.update(v.name for v in op.outs)
            elif any(vals[r].is_float for r in op.reads):
                out.update(v.name for v in op.outs if not v.is_float)
        return out

    def has_float32(self) -> bool:
        return any(v.dtype == "float32" for v in self.vals().values())

    def in_axes(self) -> tuple:
        return tuple(0 if i.batched else None for i in self.inputs)

    def source(self) -> str:
        lines = ["import numpy as np", "import pullback as jax", "import pullback.numpy as jnp",
                 "import pullback.lax as lax", "",
                 'jax.config.update("jax_enable_x64", True)  # the programs are typed for it']
        for h in self.helpers:
            lines += ["", HELPERS[h]]
        lines += ["", f"def f({', '.join(i.val.name for i in self.inputs)}):"]
        for op in self.ops:
            lines += ["    " + d for d in op.defs.splitlines()]
            # an op returning a sequence (split) unpacks it, even into one name
            lhs = ", ".join(v.name for v in op.outs)
            lhs += "," if op.unpack and len(op.outs) == 1 else ""
            lines.append(f"    {lhs} = {op.code}")
        comma = "," if len(self.outputs) == 1 else ""
        lines.append(f"    return ({', '.join(self.outputs)}{comma})")
        lines += ["", "", f"rng = np.random.default_rng({self.seed})"]
        lines += [f"{i.val.name} = {i.make}" for i in self.inputs]
        lines.append(f"args = ({', '.join(i.val.name for i in self.inputs)},)")
        if self.batch:
            lines.append(f"in_axes = {self.in_axes()}")
        if self.donate:
            lines.append(f"donate_argnums = {self.donate}")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:   # hypothesis prints a falsifying program as its source
        return self.source()

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text("\n" + self.source())

    def build(self) -> dict:
        """Execute the source: a namespace with ``f`` and fresh ``args``."""
        ns: dict = {}
        exec(compile(self.source(), "<program>", "exec"), ns)
        return ns


# ---------------------------------------------------------------------------------------------
# Small helpers


def promote(*dtypes: str) -> str:
    return max(dtypes, key=RANK.__getitem__)


def bcast(*shapes: tuple):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def lit(dtype: str, x: float) -> str:
    if dtype == "bool":
        return repr(bool(x))
    if dtype == "int32":
        return repr(int(x))
    return repr(float(x))


def fits(dtype: str, bound: float) -> bool:
    return bound <= (INT_BIG if dtype in ("int32", "bool") else BIG)


def power(b: float, n: int) -> float:
    """max(b, 1) ** n, inf rather than OverflowError."""
    b = max(b, 1.0)
    return math.inf if n * math.log(b) > 700 else b ** n


def sl_len(n: int, s: slice) -> int:
    return len(range(n)[s])


def sl_text(s: slice) -> str:
    a = "" if s.start is None else str(s.start)
    b = "" if s.stop is None else str(s.stop)
    return f"{a}:{b}" + ("" if s.step is None else f":{s.step}")


class Skip(Exception):
    """The op drawn has no valid form here; the generator emits a unary op instead."""


class Gen:
    """The state of one program being drawn: its values so far and its ops."""

    def __init__(self, draw, mode: str):
        self.draw, self.mode = draw, mode
        self.vals: list = []
        self.ops: list = []
        self.helpers: list = []
        self.n = 0
        self.inputs: list = []
        self.dims = EMPTY_DIMS if draw(st.integers(0, 3)) == 0 else DIMS

    def new(self, shape, dtype, bound) -> Val:
        self.n += 1
        return Val(f"v{self.n}", tuple(int(d) for d in shape), dtype, float(bound))

    def emit(self, kind, code, reads, *outs, defs="", unpack=False):
        if any(v.ndim > 5 or v.size > 2048 for v in outs):   # keep every program fast
            return False
        self.ops.append(Op(kind, tuple(outs), code, tuple(v.name for v in reads), defs, unpack))
        self.vals.extend(outs)
        return True

    def use(self, helper: str) -> None:
        if helper not in self.helpers:
            self.helpers.append(helper)

    def pick(self, pred=lambda v: True):
        """A value satisfying pred, the most recent ones first (so shrinking makes chains)."""
        cands = [v for v in reversed(self.vals) if pred(v)]
        return self.draw(st.sampled_from(cands)) if cands else None

    def int_(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def choice(self, seq):
        seq = list(seq)
        if not seq:
            raise Skip
        return self.draw(st.sampled_from(seq))

    def flag(self):
        return self.draw(st.booleans())

    def float_dtypes(self):
        return ("float64",) if self.mode == "grad" else FLOATS

    def slice_(self, n: int) -> slice:
        kind = self.choice(["full", "range", "step", "rev", "revrange"])
        if kind == "full":
            return slice(None)
        if kind == "range":
            return slice(self.int_(-n - 1, n + 1), self.int_(-n - 1, n + 1))
        if kind == "step":
            return slice(self.choice([None, self.int_(0, n)]), None, self.int_(2, 3))
        if kind == "rev":
            return slice(None, None, -1)
        return slice(self.int_(-1, n), self.choice([None, self.int_(-n - 1, n)]), -self.int_(1, 2))
