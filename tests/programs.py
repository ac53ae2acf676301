"""Random whole programs over pullback's catalogue, for the differential tests of
test_programs.py: the hypothesis strategy ``programs`` and its catalogue of ops (one generator
per op family, each emitting one valid op over the values drawn so far). The IR, the printing
and the magnitude bounds are in program_ir.py.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from program_ir import (CONTROL, FLOATS, Gen, Input, Program, Skip, Val, bcast, fits, lit,
                        power, promote, sl_len, sl_text)

# ---------------------------------------------------------------------------------------------
# Inputs


def draw_shape(g: Gen, max_rank=3) -> tuple:
    return tuple(g.choice(g.dims) for _ in range(g.int_(0, max_rank)))


def draw_input(g: Gen, k: int, batch: int) -> Input:
    dtype = g.choice(g.float_dtypes() + (("int32", "bool") if k else ()))
    shape = draw_shape(g)
    batched = bool(batch) and (k == 0 or g.flag())
    full = ((batch,) if batched else ()) + shape
    layouts = ["contiguous"] + (["transposed", "strided", "reversed", "broadcast"]
                                if full else [])
    # alias programs: half their later inputs share memory with an earlier one
    if g.mode == "alias" and any(i.val.dtype == dtype for i in g.inputs) and g.flag():
        layouts = ["alias"]
    layout = g.choice(layouts)

    def data(sh):
        if dtype == "bool":
            return f"rng.random({sh}) < 0.5"
        if dtype == "int32":
            return f"rng.integers(-3, 4, {sh}).astype(np.int32)"
        return f"rng.uniform(-2, 2, {sh}).astype(np.{dtype})"
    name = f"x{k}"
    if layout == "transposed":
        make = f"jnp.asarray({data(full[::-1])}).T"
    elif layout == "strided":
        make = f"jnp.asarray({data((2 * full[0],) + full[1:])})[::2]"
    elif layout == "reversed":
        make = f"jnp.asarray({data(full)})[..., ::-1]"
    elif layout == "broadcast":
        make = f"jnp.broadcast_to(jnp.asarray({data(full[1:])}), {full})"
    elif layout == "alias":          # an earlier input, or a (contiguous or reversed) view of it
        other = next(i for i in reversed(g.inputs) if i.val.dtype == dtype)
        make = other.val.name + g.choice(["", "[::-1][::-1]", "[::-1]"] if other.val.ndim else [""])
        shape, batched = other.val.shape, other.batched
    else:
        make = f"jnp.asarray({data(full)})"
    bound = {"bool": 1, "int32": 3}.get(dtype, 2)
    return Input(Val(name, tuple(shape), dtype, bound), make, batched)


# ---------------------------------------------------------------------------------------------
# The catalogue: each generator emits one op and returns True, or returns False (not applicable)

UNARY_FLOAT = [  # (template, bound of the result given the operand's bound)
    ("jnp.sin({})", lambda b: min(b, 1.0)),
    ("jnp.tanh({})", lambda b: min(b, 1.0)),
    ("jnp.exp({})", lambda b: math.exp(b) if b <= 4 else math.inf),
    ("jnp.log(jnp.abs({}) + 1)", lambda b: math.log1p(b)),
    ("jnp.sqrt(jnp.abs({}) + 0.25)", lambda b: math.sqrt(b + 0.25)),
    ("jnp.cos({})", lambda b: 1.0),
    ("-{}", lambda b: b),
    ("jnp.abs({})", lambda b: b),
    ("jax.nn.sigmoid({})", lambda b: 1.0),
    ("jax.nn.relu({})", lambda b: b),
    ("jnp.square({})", lambda b: b * b),
    ("lax.integer_pow({}, 3)", lambda b: power(b, 3)),
    ("{} ** 4", lambda b: power(b, 4)),              # integer_pow's vectorised small powers
    ("1.0 / ({} ** 2 + 1.0)", lambda b: 1.0),
    ("{} * 0.5", lambda b: b / 2),
    ("softclip({})", lambda b: 2.0),
    ("jax.nn.mish({})", lambda b: b),                # issue 26's jax.nn additions
    ("jax.nn.hard_silu({})", lambda b: b),
    ("jax.nn.sparse_sigmoid({})", lambda b: 1.0),
    ("jax.nn.tanh({})", lambda b: min(b, 1.0)),
    ("jax.nn.identity({})", lambda b: b),
    ("jax.nn.log1mexp(jnp.abs({}) + 1.0)", lambda b: 1.0),
]
UNARY_INT = [("-{}", lambda b: b), ("jnp.abs({})", lambda b: b), ("{} % 3", lambda b: 2),
             ("lax.integer_pow({}, 2)", lambda b: b * b), ("{} // 2", lambda b: b),
             ("{} ** 0", lambda b: 1), ("{} ** 1", lambda b: b)]
UNARY_BOOL = [("~{}", lambda b: 1), ("jnp.logical_not({})", lambda b: 1)]


def g_unary(g: Gen) -> bool:
    x = g.pick()
    table = UNARY_FLOAT if x.is_float else UNARY_INT if x.dtype == "int32" else UNARY_BOOL
    tmpl, fb = g.choice(table)
    b = fb(x.bound)
    # an unbounded value may hold infinities (a window of holes' init): sin or cos of one is
    # NaN, which no bound describes; tanh maps it back into [-1, 1]
    if not fits(x.dtype, b) or not math.isfinite(x.bound):
        tmpl, b = ("jnp.tanh({})", 1.0) if x.is_float else ("{} % 3", 2)
    if tmpl.startswith("softclip"):
        g.use("softclip")
    return g.emit("unary", tmpl.format(x.name), [x], g.new(x.shape, x.dtype, b))


def g_convert(g: Gen) -> bool:
    x = g.pick()
    targets = [d for d in ("bool", "int32") + g.float_dtypes() if d != x.dtype]
    to = g.choice(targets)
    if to == "bool":
        return g.emit("compare", f"{x.name} > 0", [x], g.new(x.shape, "bool", 1))
    return g.emit("convert", f"{x.name}.astype(jnp.{to})", [x], g.new(x.shape, to, x.bound))


def g_binary(g: Gen) -> bool:
    a = g.pick()
    if a.dtype == "bool":
        b = g.pick(lambda v: v.dtype == "bool" and bcast(a.shape, v.shape) is not None)
        op = g.choice(["&", "|", "^"])
        return g.emit("binary", f"{a.name} {op} {b.name}", [a, b],
                      g.new(bcast(a.shape, b.shape), "bool", 1))
    b = g.pick(lambda v: v.dtype != "bool" and bcast(a.shape, v.shape) is not None)
    if b is None or g.draw(st.integers(0, 4)) == 0:      # a Python scalar operand
        c = lit(a.dtype, g.choice([1.5, -2.0, 0.5, 3.0]))
        op = g.choice(["+", "*", "-"])
        return g.emit("binary", f"{a.name} {op} {c}", [a],
                      g.new(a.shape, a.dtype, a.bound + abs(float(c)) * (1 + a.bound)))
    dt, shape = promote(a.dtype, b.dtype), bcast(a.shape, b.shape)
    ops = {"+": a.bound + b.bound, "-": a.bound + b.bound, "*": a.bound * b.bound,
           "max": max(a.bound, b.bound), "min": max(a.bound, b.bound),
           "where": max(a.bound, b.bound), "div": a.bound}
    op = g.choice([o for o, bd in ops.items() if fits(dt, bd)])
    code = {"max": "jnp.maximum({0}, {1})", "min": "jnp.minimum({0}, {1})",
            "where": "jnp.where({0} > {1}, {0}, {1})",
            "div": "{0} / (jnp.abs({1}) + 1)" if dt in FLOATS else "{0} // (jnp.abs({1}) + 1)",
            }.get(op, "{0} %s {1}" % op).format(a.name, b.name)
    return g.emit("binary", code, [a, b], g.new(shape, dt, ops[op]))


def g_where(g: Gen) -> bool:
    a = g.pick(lambda v: v.dtype != "bool")
    b = g.pick(lambda v: bcast(a.shape, v.shape) is not None and v.dtype != "bool")
    c = g.pick(lambda v: v.dtype == "bool" and bcast(a.shape, b.shape, v.shape) is not None)
    if c is None:
        return False
    if a.shape == b.shape == c.shape and a.dtype == b.dtype and g.flag():
        return g.emit("where", f"lax.select({c.name}, {a.name}, {b.name})", [c, a, b],
                      g.new(a.shape, a.dtype, max(a.bound, b.bound)))
    return g.emit("where", f"jnp.where({c.name}, {a.name}, {b.name})", [c, a, b],
                  g.new(bcast(a.shape, b.shape, c.shape), promote(a.dtype, b.dtype),
                        max(a.bound, b.bound)))


def g_index(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1)
    if x is None:
        return False
    parts, shape = [], []
    if g.flag():                                   # an ellipsis and a spec for the last axis
        if g.flag() and x.shape[-1] >= 1:
            i = g.int_(-x.shape[-1], x.shape[-1] - 1)
            parts, shape = ["...", str(i)], list(x.shape[:-1])
        else:
            s = g.slice_(x.shape[-1])
            parts, shape = ["...", sl_text(s)], list(x.shape[:-1]) + [sl_len(x.shape[-1], s)]
    else:
        for n in x.shape[:g.int_(1, x.ndim)]:
            if n >= 1 and g.draw(st.integers(0, 3)) == 0:
                parts.append(str(g.int_(-n, n - 1)))
            else:
                s = g.slice_(n)
                parts.append(sl_text(s))
                shape.append(sl_len(n, s))
        shape += list(x.shape[len(parts):])
    if g.draw(st.integers(0, 4)) == 0:             # a new axis in front
        parts.insert(0, "None")
        shape.insert(0, 1)
    return g.emit("index", f"{x.name}[{', '.join(parts)}]", [x], g.new(shape, x.dtype, x.bound))


def g_lax_slice(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1)
    if x is None:
        return False
    start = [g.int_(0, n) for n in x.shape]
    limit = [g.int_(s, n) for s, n in zip(start, x.shape)]
    strides = [g.int_(1, 3) for _ in x.shape]
    shape = [-(-(lim - s) // st_) for s, lim, st_ in zip(start, limit, strides)]
    return g.emit("slice", f"lax.slice({x.name}, {tuple(start)}, {tuple(limit)}, {tuple(strides)})",
                  [x], g.new(shape, x.dtype, x.bound))


def _start(g: Gen, n: int):
    """A start index: a literal (maybe out of range: clamped) or a traced int32 scalar."""
    s = g.pick(lambda v: v.dtype == "int32" and v.shape == ())
    if s is not None and g.flag():
        return s.name, [s]
    return str(g.int_(-1, n + 1)), []


def g_dynamic_slice(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1)
    if x is None:
        return False
    sizes = [g.int_(0, n) for n in x.shape]
    starts, reads = zip(*[_start(g, n) for n in x.shape])
    return g.emit("dynamic_slice", f"lax.dynamic_slice({x.name}, ({', '.join(starts)},), "
                  f"{tuple(sizes)})", [x] + sum(reads, []), g.new(sizes, x.dtype, x.bound))


def g_dynamic_update_slice(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1)
    if x is None:
        return False
    u = g.pick(lambda v: v.ndim == x.ndim and all(a <= b for a, b in zip(v.shape, x.shape)))
    if u is None:
        return False
    uc = u.name if u.dtype == x.dtype else f"{u.name}.astype(jnp.{x.dtype})"
    starts, reads = zip(*[_start(g, n) for n in x.shape])
    return g.emit("dynamic_update_slice", f"lax.dynamic_update_slice({x.name}, {uc}, "
                  f"({', '.join(starts)},))", [x, u] + sum(reads, []),
                  g.new(x.shape, x.dtype, max(x.bound, u.bound)))


def g_pad(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1)
    if x is None:
        return False
    c = g.choice([0, 1, -2])
    if g.flag():
        edge = x.size > 0 and g.flag()
        widths = [(g.int_(0, 2), g.int_(0, 2)) for _ in x.shape]
        shape = [n + lo + hi for n, (lo, hi) in zip(x.shape, widths)]
        mode = "mode='edge'" if edge else f"constant_values={lit(x.dtype, c)}"
        return g.emit("pad", f"jnp.pad({x.name}, {tuple(widths)}, {mode})", [x],
                      g.new(shape, x.dtype, max(x.bound, 2)))
    cfg, shape = [], []
    for n in x.shape:
        interior = g.int_(0, 2)
        full = n + max(n - 1, 0) * interior
        lo = g.int_(max(-2, -full), 2)
        hi = g.int_(max(-2, -(full + lo)), 2)
        cfg.append((lo, hi, interior))
        shape.append(full + lo + hi)
    return g.emit("lax_pad", f"lax.pad({x.name}, {lit(x.dtype, c)}, {cfg})", [x],
                  g.new(shape, x.dtype, max(x.bound, 2)))


def g_concatenate(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1)
    if x is None:
        return False
    axis = g.int_(0, x.ndim - 1)
    same = lambda v: (v.ndim == x.ndim and v.shape[:axis] == x.shape[:axis]  # noqa: E731
                      and v.shape[axis + 1:] == x.shape[axis + 1:])
    parts = [x] + [g.pick(same) for _ in range(g.int_(1, 2))]
    shape = list(x.shape)
    shape[axis] = sum(v.shape[axis] for v in parts)
    return g.emit("concatenate", f"jnp.concatenate([{', '.join(v.name for v in parts)}], "
                  f"axis={axis})", parts, g.new(shape, promote(*(v.dtype for v in parts)),
                                                max(v.bound for v in parts)))


def g_split(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1)
    if x is None:
        return False
    axis = g.int_(0, x.ndim - 1)
    n = x.shape[axis]
    ks = [k for k in (2, 3, 1) if n % k == 0]
    if g.flag():
        k = g.choice(ks)
        sizes, arg = [n // k] * k, str(k)
    else:
        cuts = sorted(g.int_(0, n) for _ in range(g.int_(1, 2)))
        sizes, arg = np.diff([0] + cuts + [n]).tolist(), str(cuts)
    outs = []
    for s in sizes:
        shape = list(x.shape)
        shape[axis] = s
        outs.append(g.new(shape, x.dtype, x.bound))
    return g.emit("split", f"jnp.split({x.name}, {arg}, axis={axis})", [x], *outs, unpack=True)


def g_stack(g: Gen) -> bool:
    x = g.pick()
    y = g.pick(lambda v: v.shape == x.shape)
    axis = g.int_(0, x.ndim)
    shape = list(x.shape)
    shape.insert(axis, 2)
    return g.emit("stack", f"jnp.stack([{x.name}, {y.name}], axis={axis})", [x, y],
                  g.new(shape, promote(x.dtype, y.dtype), max(x.bound, y.bound)))


def g_reshape(g: Gen) -> bool:
    x = g.pick()
    shape = list(x.shape)
    form = g.choice(["flatten", "merge", "split", "unit"])
    if form == "flatten":
        code = f"{x.name}.reshape(-1)" if x.size else f"{x.name}.reshape(0)"
        shape = [x.size]
    elif form == "merge" and x.ndim >= 2:
        i = g.int_(0, x.ndim - 2)
        shape[i:i + 2] = [shape[i] * shape[i + 1]]
        code = f"jnp.reshape({x.name}, {tuple(shape)})"
    elif form == "split" and any(n in (4, 6) for n in shape):
        i = next(i for i, n in enumerate(shape) if n in (4, 6))
        shape[i:i + 1] = [2, shape[i] // 2]
        code = f"lax.reshape({x.name}, {tuple(shape)})"
    else:
        shape.insert(g.int_(0, x.ndim), 1)
        code = f"{x.name}.reshape({tuple(shape)})"
    return g.emit("reshape", code, [x], g.new(shape, x.dtype, x.bound))


def g_transpose(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 2)
    if x is None:
        return False
    perm = g.draw(st.permutations(range(x.ndim)))
    code = f"{x.name}.T" if perm == list(range(x.ndim))[::-1] and g.flag() else \
        f"jnp.transpose({x.name}, {tuple(perm)})"
    return g.emit("transpose", code, [x], g.new([x.shape[p] for p in perm], x.dtype, x.bound))


def g_broadcast(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim <= 3)
    shape = [g.choice(g.dims) if n == 1 else n for n in x.shape]
    if g.flag() or not x.shape:
        shape.insert(0, g.choice(g.dims))
    return g.emit("broadcast", f"jnp.broadcast_to({x.name}, {tuple(shape)})", [x],
                  g.new(shape, x.dtype, x.bound))


def g_squeeze_expand(g: Gen) -> bool:
    x = g.pick()
    ones = [i for i, n in enumerate(x.shape) if n == 1]
    if ones and g.flag():
        i = g.choice(ones)
        return g.emit("squeeze", f"jnp.squeeze({x.name}, axis={i})", [x],
                      g.new(x.shape[:i] + x.shape[i + 1:], x.dtype, x.bound))
    i = g.int_(-x.ndim - 1, x.ndim)
    shape = list(x.shape)
    shape.insert(i % (x.ndim + 1), 1)
    return g.emit("expand_dims", f"jnp.expand_dims({x.name}, {i})", [x],
                  g.new(shape, x.dtype, x.bound))


def g_flip(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1)
    if x is None:
        return False
    if g.flag():
        return g.emit("flip", f"jnp.flip({x.name}, {g.int_(-x.ndim, x.ndim - 1)})", [x],
                      g.new(x.shape, x.dtype, x.bound))
    dims = sorted(set(g.int_(0, x.ndim - 1) for _ in range(g.int_(1, x.ndim))))
    return g.emit("rev", f"lax.rev({x.name}, {tuple(dims)})", [x], g.new(x.shape, x.dtype, x.bound))


def _axes(g: Gen, x: Val):
    """axis=None, an int or a tuple; returns (text, reduced axes)."""
    form = g.choice(["int", "none", "tuple"] if x.ndim else ["none"])
    if form == "none":
        return "None", list(range(x.ndim))
    if form == "int":
        i = g.int_(-x.ndim, x.ndim - 1)
        return str(i), [i % x.ndim]
    axes = sorted(set(g.int_(0, x.ndim - 1) for _ in range(2)))
    return str(tuple(axes)), axes


def g_reduce(g: Gen) -> bool:
    x = g.pick()
    axis, axes = _axes(g, x)
    n = math.prod(x.shape[i] for i in axes)
    keep = g.flag()
    shape = [1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes]
    if x.dtype == "bool":
        fn, dt, b = g.choice(["any", "all"]), "bool", 1
    else:
        cands = {"sum": x.bound * max(n, 1)}
        if x.is_float or g.mode != "grad":          # grad programs hold no float32
            cands["mean"] = x.bound
        if n > 0:
            cands.update(max=x.bound, min=x.bound)
        if fits(x.dtype, power(x.bound, n)):
            cands["prod"] = power(x.bound, n)
        fn = g.choice([k for k, v in cands.items() if fits(x.dtype, v)])
        dt = "float32" if fn == "mean" and x.dtype == "int32" else x.dtype  # (JAX: width kept)
        b = cands[fn]
    # (x64: sums and products of int32 take int64, JAX's default int; the programs' integers
    # stay int32)
    to32 = ".astype(jnp.int32)" if x.dtype == "int32" and fn in ("sum", "prod") else ""
    return g.emit("reduce", f"jnp.{fn}({x.name}, axis={axis}, keepdims={keep}){to32}", [x],
                  g.new(shape, dt, b))


def g_arg(g: Gen) -> bool:
    # not of floats in grad programs: an argmax over ties (a broadcast input has them) jumps
    # under the finite differences' perturbation, and its result may scale a float value
    x = g.pick(lambda v: v.ndim >= 1 and v.size > 0 and v.dtype != "bool"
               and not (g.mode == "grad" and v.is_float))
    if x is None:
        return False
    fn = g.choice(["argmax", "argmin"])
    if g.flag():
        return g.emit("arg", f"jnp.{fn}({x.name}).astype(jnp.int32)", [x],
                      g.new((), "int32", x.size))
    i = g.int_(0, x.ndim - 1)
    return g.emit("arg", f"jnp.{fn}({x.name}, axis={i}).astype(jnp.int32)", [x],
                  g.new(x.shape[:i] + x.shape[i + 1:], "int32", x.shape[i]))


def g_cumulative(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1 and v.dtype != "bool")
    if x is None:
        return False
    i = g.int_(0, x.ndim - 1)
    n = x.shape[i]
    fn = "cumsum"
    if fits(x.dtype, power(x.bound, n)) and g.flag():
        fn = "cumprod"
    b = power(x.bound, n) if fn == "cumprod" else x.bound * max(n, 1)
    return g.emit("cumulative", f"jnp.{fn}({x.name}, axis={i})", [x], g.new(x.shape, x.dtype, b))


def g_sort(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1 and v.dtype != "bool")
    if x is None:
        return False
    i = g.int_(-1, x.ndim - 1)
    form = g.choice(["sort", "argsort", "top_k"])
    if form == "sort":
        return g.emit("sort", f"jnp.sort({x.name}, axis={i})", [x],
                      g.new(x.shape, x.dtype, x.bound))
    if form == "argsort":
        return g.emit("sort", f"jnp.argsort({x.name}, axis={i}).astype(jnp.int32)", [x],
                      g.new(x.shape, "int32", x.shape[i]))
    k = g.int_(0, x.shape[-1])
    shape = x.shape[:-1] + (k,)
    return g.emit("top_k", f"lax.top_k({x.name}, {k})", [x], g.new(shape, x.dtype, x.bound),
                  g.new(shape, "int32", x.shape[-1]))


def matmul_shape(a: tuple, b: tuple):
    if not a or not b:
        return None
    a2, b2 = (a if len(a) >= 2 else (1,) + a), (b if len(b) >= 2 else b + (1,))
    if a2[-1] != b2[-2]:
        return None
    batch = bcast(a2[:-2], b2[:-2])
    if batch is None:
        return None
    return batch + ((a2[-2],) if len(a) >= 2 else ()) + ((b2[-1],) if len(b) >= 2 else ())


def _dot_ok(g, a, v):
    return (v.dtype != "bool" and fits(promote(a.dtype, v.dtype), a.bound * v.bound * 6))


def g_matmul(g: Gen) -> bool:
    a = g.pick(lambda v: v.ndim >= 1 and v.dtype != "bool")
    if a is None:
        return False
    cands = [(v, t) for v in reversed(g.vals) for t in (False, True)
             if _dot_ok(g, a, v) and (not t or v.ndim >= 2)
             and matmul_shape(a.shape, v.shape[:-2] + v.shape[:-3:-1] if t else v.shape)]
    if not cands:
        return False
    b, t = g.choice(cands)
    bs = b.shape[:-2] + b.shape[:-3:-1] if t else b.shape
    bt = f"jnp.swapaxes({b.name}, -1, -2)" if t else b.name
    k = a.shape[-1]
    code = g.choice([f"{a.name} @ {bt}", f"jnp.matmul({a.name}, {bt})"])
    out = g.new(matmul_shape(a.shape, bs), promote(a.dtype, b.dtype),
                a.bound * b.bound * max(k, 1))
    return g.emit("matmul", code, [a, b], out)


def _dims_spec(g: Gen, a: Val, b: Val):
    """Disjoint (batch, contracting) dimension pairs of equal size between a and b."""
    pairs = [(i, j) for i in range(a.ndim) for j in range(b.ndim) if a.shape[i] == b.shape[j]]
    chosen, used_a, used_b = [], set(), set()
    for _ in range(g.int_(0, min(3, len(pairs)))):
        free = [p for p in pairs if p[0] not in used_a and p[1] not in used_b]
        if not free:
            break
        p = g.choice(free)
        chosen.append((p, g.flag()))
        used_a.add(p[0])
        used_b.add(p[1])
    batch = [p for p, is_batch in chosen if is_batch]
    contract = [p for p, is_batch in chosen if not is_batch]
    return batch, contract


def g_dot_general(g: Gen) -> bool:
    a = g.pick(lambda v: v.dtype != "bool")
    b = g.pick(lambda v: _dot_ok(g, a, v))
    if b is None:
        return False
    batch, contract = _dims_spec(g, a, b)
    k = math.prod(a.shape[i] for i, _ in contract)
    bound = a.bound * b.bound * max(k, 1)
    if not fits(promote(a.dtype, b.dtype), bound):
        return False
    used_a = {i for i, _ in batch + contract}
    used_b = {j for _, j in batch + contract}
    shape = ([a.shape[i] for i, _ in batch] + [n for i, n in enumerate(a.shape) if i not in used_a]
             + [n for j, n in enumerate(b.shape) if j not in used_b])
    if g.flag():                   # the same contraction written as an einsum
        letters = iter("abcdefghijkl")
        la = [next(letters) for _ in a.shape]
        lb = [next(letters) for _ in b.shape]
        for i, j in batch + contract:
            lb[j] = la[i]
        out = ([la[i] for i, _ in batch] + [la[i] for i in range(a.ndim) if i not in used_a]
               + [lb[j] for j in range(b.ndim) if j not in used_b])
        perm = g.draw(st.permutations(range(len(out))))
        spec = f"{''.join(la)},{''.join(lb)}->{''.join(out[p] for p in perm)}"
        return g.emit("einsum", f"jnp.einsum('{spec}', {a.name}, {b.name})", [a, b],
                      g.new([shape[p] for p in perm], promote(a.dtype, b.dtype), bound))
    bc = b.name if b.dtype == a.dtype else f"{b.name}.astype(jnp.{a.dtype})"
    dims = ((tuple(i for i, _ in contract), tuple(j for _, j in contract)),
            (tuple(i for i, _ in batch), tuple(j for _, j in batch)))
    return g.emit("dot_general", f"lax.dot_general({a.name}, {bc}, {dims})", [a, b],
                  g.new(shape, a.dtype, bound))


def _index_array(g: Gen, n: int, unique: bool):
    """An int32 index array into an axis of size n: a literal (negative and out-of-range
    entries included) or a program value taken modulo n."""
    v = g.pick(lambda v: v.dtype == "int32" and v.ndim <= 2)
    # grad programs index with literals only: an index computed from floats (an argmax over
    # ties) jumps under the finite differences' perturbation, which no derivative matches
    if v is not None and not unique and n and g.mode != "grad" and g.flag():
        return f"{v.name} % {n}", v.shape, [v]
    if n == 0:                                     # scatters into an empty axis drop all
        idx = g.draw(st.lists(st.integers(-2, 2), max_size=3))
    elif unique:
        idx = g.draw(st.lists(st.integers(-n, n - 1), max_size=4, unique_by=lambda i: i % n))
        if g.draw(st.integers(0, 5)) == 0:
            idx.append(n + 1)                      # out of range: dropped by scatters
    elif g.mode == "grad":  # an out-of-range read clamps forward but its gradient is dropped
        idx = g.draw(st.lists(st.integers(-n, n - 1), max_size=4))  # (as JAX): not an FD match
    else:
        idx = g.draw(st.lists(st.integers(-n - 1, n + 1), max_size=4))
    return f"jnp.array({idx}, jnp.int32)", (len(idx),), []


def g_gather(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1 and v.shape[0] >= 1)
    if x is None:
        return False
    if x.ndim >= 2 and x.shape[1] >= 1 and g.flag():
        idx, ishape, reads = _index_array(g, x.shape[1], False)
        return g.emit("gather", f"{x.name}[:, {idx}]", [x] + reads,
                      g.new(x.shape[:1] + ishape + x.shape[2:], x.dtype, x.bound))
    idx, ishape, reads = _index_array(g, x.shape[0], False)
    code = g.choice([f"{x.name}[{idx}]", f"{x.name}.at[{idx}].get()",
                     f"jnp.take({x.name}, {idx}, axis=0, mode='{g.choice(['clip', 'fill'])}')"])
    return g.emit("gather", code, [x] + reads, g.new(ishape + x.shape[1:], x.dtype, x.bound))


def g_scatter(g: Gen) -> bool:
    x = g.pick(lambda v: v.ndim >= 1 and v.dtype != "bool")
    if x is None:
        return False
    method = g.choice(["set", "add", "mul", "min", "max"])
    form = g.choice(["int", "slice", "array"] if x.shape[0] else ["slice", "array"])
    n = x.shape[0]
    if form == "int":
        idx, ishape, reads = str(g.int_(-n, n - 1)), x.shape[1:], []
    elif form == "slice":
        s = g.slice_(n)
        idx, ishape, reads = sl_text(s), (sl_len(n, s),) + x.shape[1:], []
    else:
        idx, ishape, reads = _index_array(g, n, method == "set")
        ishape = ishape + x.shape[1:]
    u = g.pick(lambda v: v.dtype != "bool" and bcast(v.shape, ishape) == tuple(ishape)
               and (method != "mul" or fits(x.dtype, x.bound * v.bound * 4)))
    if u is None or g.draw(st.integers(0, 3)) == 0:
        uc, ub, ureads = lit(x.dtype, 2), 2, []
    else:
        uc = u.name if u.dtype == x.dtype else f"{u.name}.astype(jnp.{x.dtype})"
        ub, ureads = u.bound, [u]
    bound = x.bound * power(ub, 4) if method == "mul" else x.bound + 4 * ub
    if not fits(x.dtype, bound):
        method, bound = "set", max(x.bound, ub)
        if form == "array":
            return False
    return g.emit("scatter", f"{x.name}.at[{idx}].{method}({uc})", [x] + reads + ureads,
                  g.new(x.shape, x.dtype, bound))


def _flat(x: Val) -> str:
    return f"{x.name}.reshape(-1)" if x.size else f"{x.name}.reshape(0)"


def g_added(g: Gen) -> bool:
    """The small ops of issue 24 (docs/adding-an-op.md): lax.square, lax.reduce_precision,
    lax.cumlogsumexp, jnp.diff, jnp.bincount, jnp.gcd and jnp.lcm."""
    form = g.choice(["square", "reduce_precision", "cumlogsumexp", "diff", "bincount", "gcd"])
    if form == "square":
        x = g.pick(lambda v: v.dtype != "bool" and fits(v.dtype, v.bound * v.bound))
        return x is not None and g.emit("square", f"lax.square({x.name})", [x],
                                        g.new(x.shape, x.dtype, x.bound * x.bound))
    if form == "reduce_precision":
        x = g.pick(lambda v: v.is_float)
        if x is None:
            return False
        # grad programs: float64's own format (the identity: finite differences see no steps);
        # else steps below the comparisons' tolerances, since the reference backend's last
        # bits may differ on the way in
        bits = (11, 52) if g.mode == "grad" else (11, 45) if x.dtype == "float64" else (8, 20)
        return g.emit("reduce_precision", f"lax.reduce_precision({x.name}, {bits[0]}, "
                      f"{bits[1]})", [x], g.new(x.shape, x.dtype, x.bound * 1.001))
    if form == "cumlogsumexp":
        x = g.pick(lambda v: v.is_float and v.ndim >= 1)
        if x is None:
            return False
        i = g.int_(0, x.ndim - 1)
        rev = ", reverse=True" if g.flag() else ""
        return g.emit("cumlogsumexp", f"lax.cumlogsumexp({x.name}, {i}{rev})", [x],
                      g.new(x.shape, x.dtype, x.bound + math.log(max(x.shape[i], 1))))
    if form == "diff":
        x = g.pick(lambda v: v.ndim >= 1)
        if x is None:
            return False
        i, n = g.int_(-x.ndim, x.ndim - 1), g.int_(1, 2)
        shape = list(x.shape)
        pre = f", prepend={lit(x.dtype, 1)}" if g.flag() else ""
        shape[i] = max(shape[i] + bool(pre) - n, 0)
        b = 1 if x.dtype == "bool" else (x.bound + bool(pre)) * 2 ** n
        if not fits(x.dtype, b):
            return False
        return g.emit("diff", f"jnp.diff({x.name}, {n}, axis={i}{pre})", [x],
                      g.new(shape, x.dtype, b))
    if form == "bincount":
        x = g.pick(lambda v: v.dtype == "int32")
        if x is None:
            return False
        n = g.int_(0, 5)
        w = g.pick(lambda v: v.is_float and v.size == x.size)
        if w is not None and g.flag():      # weighted: differentiable in the weights
            return g.emit("bincount", f"jnp.bincount({_flat(x)}, {_flat(w)}, length={n})",
                          [x, w], g.new((n,), w.dtype, w.bound * max(x.size, 1)))
        return g.emit("bincount", f"jnp.bincount({_flat(x)}, length={n}).astype(jnp.int32)",
                      [x], g.new((n,), "int32", x.size))
    a = g.pick(lambda v: v.dtype == "int32")
    b = g.pick(lambda v: v.dtype == "int32" and a is not None
               and bcast(a.shape, v.shape) is not None)
    if b is None:
        return False
    lcm = fits("int32", a.bound * b.bound) and g.flag()
    return g.emit("gcd", f"jnp.{'lcm' if lcm else 'gcd'}({a.name}, {b.name})", [a, b],
                  g.new(bcast(a.shape, b.shape), "int32",
                        a.bound * b.bound if lcm else max(a.bound, b.bound)))


def g_norms(g: Gen) -> bool:
    """The fused norms of issue 26: jax.nn.layer_norm (last axis, a tuple of axes, or axis 1
    as LayerNorm2d), rms_norm, group_norm and batch_norm's training form, each with a scale
    (and bias) drawn from values of the right shape when there are some. |xhat| <= sqrt(n)
    over the n reduced elements."""
    x = g.pick(lambda v: v.is_float and v.ndim >= 1 and v.bound <= 100)
    if x is None:
        return False
    form = g.choice(["layer_norm", "rms_norm", "group_norm", "batch_norm", "batch_stats"])
    nd = x.ndim
    if form == "batch_stats":  # (mean, biased variance) over every axis but the last
        if nd < 2:
            return False
        c = (x.shape[-1],)
        return g.emit("batch_stats", f"jax.nn.batch_stats({x.name})", [x],
                      g.new(c, x.dtype, x.bound), g.new(c, x.dtype, x.bound ** 2), unpack=True)
    if form in ("layer_norm", "rms_norm"):
        axes = g.choice([(nd - 1,), tuple(range(nd)), (min(1, nd - 1),)])
        pshape = tuple(x.shape[a] for a in axes)
        axis = axes[0] if len(axes) == 1 else axes
    elif form == "group_norm":
        if nd < 2 or x.shape[-1] < 1:
            return False
        groups = g.choice([d for d in (1, 2, 3) if x.shape[-1] % d == 0])
        axes, pshape = tuple(range(1, nd)), (x.shape[-1],)
    else:
        if nd < 2:
            return False
        axes, pshape = tuple(range(nd - 1)), (x.shape[-1],)
    n = math.prod(x.shape[a] for a in axes)
    s = g.pick(lambda v: v.dtype == x.dtype and v.shape == pshape and v.bound <= 100)
    b = g.pick(lambda v: v.dtype == x.dtype and v.shape == pshape and v.bound <= 100)
    s = s if s is not None and g.flag() else None
    b = b if b is not None and form != "rms_norm" and g.flag() else None
    params = [v for v in (s, b) if v is not None]
    bound = math.sqrt(max(n, 1)) * (s.bound if s else 1) + (b.bound if b else 0)
    sb = f"{s.name if s else None}, {b.name if b else None}"
    eps = "epsilon=1e-2"  # keeps near-constant rows' amplification inside the tolerances
    if form == "layer_norm":
        code = f"jax.nn.layer_norm({x.name}, {sb}, axis={axis}, {eps})"
    elif form == "rms_norm":
        code = f"jax.nn.rms_norm({x.name}, {s.name if s else None}, axis={axis}, {eps})"
    elif form == "group_norm":
        code = f"jax.nn.group_norm({x.name}, {groups}, {sb}, {eps})"
    else:
        code = f"jax.nn.batch_norm({x.name}, {sb}, {eps})"
    return g.emit("norms", code, [x] + params, g.new(x.shape, x.dtype, bound))


def g_residual_norm(g: Gen) -> bool:
    """A residual add feeding a layer or RMS norm over the last axis (compiled programs fuse
    them: transforms/passes/norm_fusion.py); the sum is a value of its own, so later ops may
    read it too (a pre-LN block's next residual)."""
    x = g.pick(lambda v: v.is_float and v.ndim >= 1 and v.bound <= 50)
    if x is None:
        return False
    y = g.pick(lambda v: v.dtype == x.dtype and v.shape == x.shape and v.bound <= 50)
    if y is None:
        return False
    h = g.new(x.shape, x.dtype, x.bound + y.bound)
    if not g.emit("residual_add", f"{x.name} + {y.name}", [x, y], h):
        return False
    s = g.pick(lambda v: v.dtype == x.dtype and v.shape == x.shape[-1:] and v.bound <= 100)
    s = s if s is not None and g.flag() else None
    n = x.shape[-1]
    bound = math.sqrt(max(n, 1)) * (s.bound if s else 1)
    fn = g.choice(["layer_norm", "rms_norm"])
    return g.emit("residual_norm", f"jax.nn.{fn}({h.name}, {s.name if s else None}, "
                  f"epsilon=1e-2)", [h] + ([s] if s else []), g.new(x.shape, x.dtype, bound))


def g_attention(g: Gen) -> bool:
    """jax.nn.dot_product_attention (issue 26's fused kernel) over a 3-D or 4-D float value as
    query (key and value: it or another value of its shape), with a causal mask, a window or a
    soft cap. The output is a convex combination of value rows: bounded by value's bound."""
    q = g.pick(lambda v: v.is_float and v.ndim in (3, 4))
    if q is None:
        return False
    kv = g.pick(lambda v: v.dtype == q.dtype and v.shape == q.shape) or q
    opts = []
    if g.flag():
        opts.append("is_causal=True")
    if g.flag():
        opts.append(f"local_window_size=({g.int_(0, 3)}, {g.int_(0, 3)})")
    if g.flag():
        opts.append("logit_softcap=2.0")
    extra = "".join(", " + o for o in opts)
    return g.emit("attention", f"jax.nn.dot_product_attention({q.name}, {kv.name}, {kv.name}"
                  f"{extra})", [q, kv], g.new(q.shape, q.dtype, kv.bound))


def g_numpy(g: Gen) -> bool:
    """Other jax.numpy functions composed from the primitives above."""
    x = g.pick(lambda v: v.ndim >= 1 and v.dtype != "bool")
    if x is None:
        return False
    i = g.int_(0, x.ndim - 1)
    form = g.choice(["roll", "tile", "repeat", "clip", "moveaxis", "take_along_axis", "var",
                     "triu"])
    shape = list(x.shape)
    if form == "roll":
        code = f"jnp.roll({x.name}, {g.int_(-3, 3)}, axis={g.choice([i, None])})"
    elif form == "tile":
        reps = tuple(g.int_(1, 2) for _ in x.shape)
        code, shape = f"jnp.tile({x.name}, {reps})", [n * r for n, r in zip(x.shape, reps)]
    elif form == "repeat":
        r = g.int_(0, 2)
        code = f"jnp.repeat({x.name}, {r}, axis={i})"
        shape[i] *= r
    elif form == "clip":
        code = f"jnp.clip({x.name}, {lit(x.dtype, -1)}, {lit(x.dtype, 1.5)})"
    elif form == "moveaxis":
        j = g.int_(0, x.ndim - 1)
        code = f"jnp.moveaxis({x.name}, {i}, {j})"
        shape.insert(j, shape.pop(i))
    elif form == "take_along_axis":
        code = f"jnp.take_along_axis({x.name}, jnp.argsort({x.name}, axis={i}), axis={i})"
    elif form == "var" and x.is_float:
        code, shape = f"jnp.var({x.name}, axis={i})", shape[:i] + shape[i + 1:]
        return g.emit("numpy", code, [x], g.new(shape, x.dtype, x.bound ** 2))
    elif form == "triu" and x.ndim >= 2:
        code = f"jnp.triu({x.name}, {g.int_(-1, 1)})"
    else:
        return False
    return g.emit("numpy", code, [x], g.new(shape, x.dtype, x.bound))


def g_nn(g: Gen) -> bool:
    x = g.pick(lambda v: v.is_float and v.ndim >= 1)
    if x is None:
        return False
    i = g.int_(-1, x.ndim - 1)
    if g.flag():
        return g.emit("softmax", f"jax.nn.softmax({x.name}, axis={i})", [x],
                      g.new(x.shape, x.dtype, 1))
    n = x.shape[i]
    shape = x.shape[:i % x.ndim] + x.shape[i % x.ndim + 1:]
    if g.flag() and n:  # the mean's log: between min and max of x
        return g.emit("logmeanexp", f"jax.nn.logmeanexp({x.name}, axis={i})", [x],
                      g.new(shape, x.dtype, x.bound))
    b = x.bound + math.log(n) if n else math.inf    # an empty axis gives -inf
    return g.emit("logsumexp", f"jax.nn.logsumexp({x.name}, axis={i})", [x],
                  g.new(shape, x.dtype, b))


def g_custom(g: Gen) -> bool:
    x = g.pick(lambda v: v.is_float)
    y = g.pick(lambda v: v.is_float and v.shape == x.shape and v.dtype == x.dtype)
    if g.flag() or y is None:
        g.use("softclip")
        return g.emit("custom_jvp", f"softclip({x.name})", [x], g.new(x.shape, x.dtype, 2))
    if not fits(x.dtype, y.bound):
        return False
    g.use("sinmul")
    return g.emit("custom_vjp", f"sinmul({x.name}, {y.name})", [x, y],
                  g.new(x.shape, x.dtype, y.bound))


def g_checkpoint(g: Gen) -> bool:
    x = g.pick(lambda v: v.is_float)
    y = g.pick(lambda v: v.is_float and v.dtype == x.dtype and bcast(x.shape, v.shape) == x.shape)
    name = f"ckpt{g.n + 1}"
    defs = (f"@jax.checkpoint\ndef {name}(a, b):\n    return jnp.sin(a) * b + jnp.tanh(b)\n")
    return g.emit("checkpoint", f"{name}({x.name}, {y.name})", [x, y],
                  g.new(x.shape, x.dtype, y.bound + 1), defs=defs)


def g_control(g: Gen) -> bool:
    kinds = [k for k in CONTROL if g.mode != "grad" or k != "while_loop"]
    kind = g.choice(kinds)
    x = g.pick(lambda v: v.is_float and v.bound <= 100)
    if x is None:
        return False
    name = f"body{g.n + 1}"
    un = g.choice(["jnp.sin", "jnp.tanh"])
    if kind == "scan":
        if x.ndim == 0:
            return False
        c = g.pick(lambda v: v.shape == x.shape[1:] and v.dtype == x.dtype and v.bound <= 100)
        init = c.name if c is not None else f"jnp.zeros({x.shape[1:]}, jnp.{x.dtype})"
        defs = (f"def {name}(c, x):\n    c = {un}(c) * 0.5 + x\n    return c, c * x\n")
        rev = ", reverse=True" if g.flag() else ""
        cb = x.bound + 0.5
        return g.emit("scan", f"lax.scan({name}, {init}, {x.name}{rev})",
                      [x] + ([c] if c is not None else []),
                      g.new(x.shape[1:], x.dtype, cb), g.new(x.shape, x.dtype, cb * x.bound),
                      defs=defs)
    y = g.pick(lambda v: v.dtype == x.dtype and bcast(x.shape, v.shape) == x.shape
               and v.bound <= 100)
    if kind == "fori_loop":
        n = g.int_(0, 3)
        defs = f"def {name}(i, c):\n    return {un}(c) * 0.5 + {y.name}\n"
        return g.emit("fori_loop", f"lax.fori_loop(0, {n}, {name}, {x.name})", [x, y],
                      g.new(x.shape, x.dtype, max(x.bound, 0.5 + y.bound)), defs=defs)
    if kind == "while_loop":
        n = g.int_(0, 3)
        defs = (f"def {name}(s):\n    return s[0] + 1, {un}(s[1]) * 0.5 + {y.name}\n")
        cond = (f"lambda s: (s[0] < {n}) & (jnp.sum(s[1]) < {g.choice([1.0, 100.0])})")
        return g.emit("while_loop", f"lax.while_loop({cond}, {name}, (0, {x.name}))[1]", [x, y],
                      g.new(x.shape, x.dtype, max(x.bound, 0.5 + y.bound)), defs=defs)
    p = g.pick(lambda v: v.dtype != "bool")
    defs = (f"def {name}(a, b):\n    return jnp.sin(a) * b\n")
    # not "> 0": a norm's or an odd function's outputs can sum to 0 exactly in exact
    # arithmetic, and then each backend's rounding picks the branch
    return g.emit("cond", f"lax.cond(jnp.sum({p.name}) > 0.375, {name}, lambda a, b: a - b, "
                  f"{x.name}, {y.name})", [x, y, p],
                  g.new(x.shape, x.dtype, x.bound + y.bound), defs=defs)


def g_scaled_matmul(g: Gen) -> bool:
    """jax.nn.scaled_matmul (block-scaled, float32 result) on a 3-D float value and its
    transpose-like partner, the scales being a value's slice of the right shape or ones."""
    a = g.pick(lambda v: v.is_float and v.ndim == 3 and v.shape[-1] > 0)
    if a is None or g.mode == "grad":  # (float32 products: too coarse for finite differences)
        return False
    B, M, K = a.shape
    b = g.pick(lambda v: v.dtype == a.dtype and v.ndim == 3 and v.shape[0] == B and
               v.shape[2] == K) or a
    N = b.shape[1]
    ks = g.choice([d for d in (1, 2, K) if K % d == 0])
    sa = g.pick(lambda v: v.dtype == a.dtype and v.shape == (B, M, ks) and v.bound <= 10)
    sb = g.pick(lambda v: v.dtype == a.dtype and v.shape == (B, N, ks) and v.bound <= 10)
    ins = [v for v in dict.fromkeys((a, b, sa, sb)) if v is not None]
    sa_code = sa.name if sa is not None else f"jnp.ones(({B}, {M}, {ks}), {a.name}.dtype)"
    sb_code = sb.name if sb is not None else f"jnp.ones(({B}, {N}, {ks}), {a.name}.dtype)"
    bound = K * a.bound * b.bound * (sa.bound if sa else 1) * (sb.bound if sb else 1)
    if not fits("float32", bound):
        return False
    return g.emit("scaled_matmul", f"jax.nn.scaled_matmul({a.name}, {b.name}, {sa_code}, "
                  f"{sb_code})", ins, g.new((B, M, N), "float32", bound))


def g_transformer_ops(g: Gen) -> bool:
    """Issue 26's RoPE and cross-entropy ops: nn.rope (rotate-half or interleaved, integer or
    float positions, rotary_dim), nn.rope_axial, and the two softmax cross-entropies."""
    form = g.choice(["rope", "rope_axial", "xent_int", "xent_prob"])
    if form in ("rope", "rope_axial"):
        mult = 4 if form == "rope_axial" else 2
        x = g.pick(lambda v: v.is_float and v.ndim >= 3 and v.shape[-1] % mult == 0
                   and v.shape[-1] > 0)
        if x is None:
            return False
        T, D = x.shape[-3], x.shape[-1]
        out = g.new(x.shape, x.dtype, x.bound * math.sqrt(2))  # a rotation of each pair
        if form == "rope_axial":
            end_x = g.choice([d for d in range(1, T + 1) if T % d == 0] or [1])
            end_y = T // end_x if T else 0
            return g.emit("rope_axial", f"jax.nn.rope_axial({x.name}, {end_x}, {end_y}, "
                          f"theta=100.0)", [x], out)
        rot = g.choice(range(0, D + 1, 2))
        inter = g.flag()
        p = g.pick(lambda v: v.is_float and v.shape == (T,))
        if p is not None and g.flag():  # float positions: differentiable
            return g.emit("rope", f"jax.nn.rope({x.name}, {p.name}, theta=50.0, rotary_dim={rot}, "
                          f"interleaved={inter})", [x, p], out)
        return g.emit("rope", f"jax.nn.rope({x.name}, jnp.arange({T}), rotary_dim={rot}, "
                      f"interleaved={inter})", [x], out)
    x = g.pick(lambda v: v.is_float and v.ndim >= 1 and 0 not in v.shape)
    if x is None:
        return False
    i = g.int_(0, x.ndim - 1)
    C, rest = x.shape[i], x.shape[:i] + x.shape[i + 1:]
    lse = 2 * x.bound + math.log(C)
    if form == "xent_int":
        lab = g.pick(lambda v: v.dtype == "int32" and v.shape == rest)
        labels = f"{lab.name} % {C}" if lab is not None else f"jnp.zeros({rest}, jnp.int32)"
        if not fits(x.dtype, lse):
            return False
        return g.emit("xent_int", f"jax.nn.softmax_cross_entropy_with_integer_labels({x.name}, "
                      f"{labels}, axis={i})", [x] + ([lab] if lab is not None else []),
                      g.new(rest, x.dtype, lse))
    y = g.pick(lambda v: v.is_float and v.dtype == x.dtype and v.shape == x.shape)
    if y is None or not fits(x.dtype, C * y.bound * lse):
        return False
    return g.emit("xent_prob", f"jax.nn.softmax_cross_entropy({x.name}, {y.name}, axis={i})",
                  [x, y], g.new(rest, x.dtype, C * y.bound * lse))


def g_conv(g: Gen) -> bool:
    """lax.conv_general_dilated (issue 27) over a 3-D float value as a 1-D convolution's input,
    in NCH or NHC layout, with a kernel sliced from the same value (so the program is bilinear
    in it) and drawn strides, padding (negative too), dilations and feature groups."""
    x = g.pick(lambda v: v.is_float and v.ndim == 3 and min(v.shape) >= 1 and v.bound <= 100)
    if x is None:
        return False
    nhc = g.flag()
    n, c, w = (x.shape[0], x.shape[2], x.shape[1]) if nhc else x.shape
    groups = g.choice([d for d in (1, 2, 3) if c % d == 0 and n % d == 0 and n >= d])
    o = groups * max(1, min(n // groups, 2))
    k = g.int_(1, min(w, 3))
    kernel = (f"{x.name}[:{o}, :{k}, :{c // groups}]" if nhc
              else f"{x.name}[:{o}, :{c // groups}, :{k}]")
    s, ld, rd = g.int_(1, 2), g.int_(1, 2), g.int_(1, 2)
    lo, hi = g.int_(-1, 2), g.int_(-1, 2)
    size = (w - 1) * ld + 1 + lo + hi
    if size < 0:
        lo = hi = 0
        size = (w - 1) * ld + 1
    win = (k - 1) * rd + 1
    ow = (size - win) // s + 1 if size >= win else 0
    dn = ("NHC", "OHI", "NHC") if nhc else ("NCH", "OIH", "NCH")
    shape = (n, ow, o) if nhc else (n, o, ow)
    code = (f"lax.conv_general_dilated({x.name}, {kernel}, ({s},), (({lo}, {hi}),), ({ld},), "
            f"({rd},), {dn}, feature_group_count={groups})")
    return g.emit("conv", code, [x], g.new(shape, x.dtype, x.bound * x.bound * c * k))


def g_image(g: Gen) -> bool:
    """Issue 27's pullback.image: resize (every method, antialias on or off, sizes up, down or
    kept, an integer upsample's repeat) and scale_and_translate with a constant scale and
    translation. Linear in the image; a tap's weight is at most 1.5 in magnitude per resized
    dimension (cubic and Lanczos lobes, normalized)."""
    x = g.pick(lambda v: (v.is_float or v.dtype == "int32") and 1 <= v.ndim <= 4
               and 0 not in v.shape)
    if x is None:
        return False
    methods = ["nearest"] if not x.is_float else ["nearest", "linear", "cubic", "lanczos3",
                                                  "lanczos5", "cubic-pytorch", "area"]
    method = g.choice(methods)
    shape = [g.choice([n, n, 1, 2 * n, n + 1, max(n // 2, 1)]) for n in x.shape]
    k = sum(a != b for a, b in zip(shape, x.shape))
    aa = g.flag()
    out_dtype = x.dtype if method == "nearest" else ("float32" if x.dtype == "int32" else x.dtype)
    bound = x.bound * (1 if method in ("nearest", "linear", "area") else 1.5 ** k)
    if method != "nearest" and g.flag():
        d = g.int_(0, x.ndim - 1)
        s, t = g.choice([0.6, 1.3, 2.0]), g.choice([0.0, 0.4, -0.7])
        shape = list(x.shape)
        shape[d] = max(1, int(x.shape[d] * s))
        return g.emit("image", f"jax.image.scale_and_translate({x.name}, {tuple(shape)}, ({d},), "
                      f"jnp.array([{s}]), jnp.array([{t}]), {method!r}, antialias={aa})", [x],
                      g.new(shape, out_dtype, x.bound * 1.5))
    return g.emit("image", f"jax.image.resize({x.name}, {tuple(shape)}, {method!r}, "
                  f"antialias={aa})", [x], g.new(shape, out_dtype, bound))


def g_reduce_window(g: Gen) -> bool:
    """Issue 27's window reductions: lax.reduce_window with lax.add/max/min (their primitives,
    C kernels) or a generic computation (a vmapped fold), with strides, explicit or string
    padding and dilations; jax.nn.max_pool/avg_pool over a channels-last value."""
    x = g.pick(lambda v: v.ndim >= 1)
    if x is None:
        return False
    op = g.choice(["add", "max", "min", "generic", "pool"])
    if x.dtype == "bool" and op != "max" and op != "min":
        return False
    nd = x.ndim
    window = [g.int_(1, 3) for _ in range(nd)]
    strides = [g.int_(1, 2) for _ in range(nd)]
    if op == "pool":
        if nd < 2 or not x.is_float:
            return False
        k = min(nd - 1, 2)
        win, st_ = tuple(window[:k]), tuple(strides[:k])
        pad = g.choice(["VALID", "SAME"])
        fn = g.choice(["max_pool", "avg_pool"])
        full = (1,) * (nd - 1 - k) + win + (1,)
        fstr = (1,) * (nd - 1 - k) + st_ + (1,)
        if nd - 1 - k == 0:  # unbatched (spatial..., features)
            full, fstr = win + (1,), st_ + (1,)
        shape = _window_shape(x.shape, full, fstr, pad)
        return g.emit("pool", f"jax.nn.{fn}({x.name}, {win}, {st_}, {pad!r})", [x],
                      g.new(shape, x.dtype, x.bound))
    if g.flag():
        pad = g.choice(["VALID", "SAME", "SAME_LOWER"])
        bdil = wdil = (1,) * nd
    else:
        pad = tuple((g.int_(0, 1), g.int_(0, 1)) for _ in range(nd))
        bdil = tuple(g.int_(1, 2) for _ in range(nd))
        wdil = tuple(g.int_(1, 2) for _ in range(nd))
    shape = _window_shape(x.shape, tuple(window), tuple(strides), pad, bdil, wdil)
    n = math.prod(window)
    if op in ("max", "min"):
        init = {"bool": "False" if op == "max" else "True",
                "int32": "-2147483648" if op == "max" else "2147483647"}.get(
            x.dtype, "-np.inf" if op == "max" else "np.inf")
        comp, b = f"lax.{op}", x.bound
        # a window over padding or base-dilation holes only gives the init value: a finite
        # one just past the operand's bound there (with +-inf, the infinities would reach
        # ops whose inf/NaN patterns are the implementation's, a linear solve's say)
        holes = (pad != "VALID" if isinstance(pad, str) else any(map(any, pad))) or \
            any(d > 1 for d in bdil)
        if holes and x.dtype != "bool" and fits(x.dtype, x.bound + 1):
            b = math.floor(x.bound) + 1
            init = lit(x.dtype, -b if op == "max" else b)
    else:
        init, b = lit(x.dtype, 0), x.bound * n
        comp = "lax.add" if op == "add" else "lambda a, b: a + b"
        if not fits(x.dtype, b):
            return False
    return g.emit("reduce_window", f"lax.reduce_window({x.name}, {init}, {comp}, "
                  f"{tuple(window)}, {tuple(strides)}, {pad!r}, {bdil}, {wdil})", [x],
                  g.new(shape, x.dtype, b))


def _window_shape(shape, window, strides, pad, bdil=None, wdil=None):
    nd = len(shape)
    bdil, wdil = bdil or (1,) * nd, wdil or (1,) * nd
    ext = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
    if isinstance(pad, str):
        pairs = []
        for n, e, s in zip(shape, ext, strides):
            total = max((-(-n // s) - 1) * s + e - n, 0) if pad != "VALID" else 0
            lo = total // 2 if pad != "SAME_LOWER" else total - total // 2
            pairs.append((lo, total - lo))
        pad = pairs
    out = []
    for n, e, s, b, (lo, hi) in zip(shape, ext, strides, bdil, pad):
        padded = (max(n - 1, 0) * b + (1 if n else 0)) + lo + hi
        out.append((padded - e) // s + 1 if padded >= e else 0)
    return out


def g_special(g: Gen) -> bool:
    """lax's special functions of issue 30 (C kernels): smooth compositions that stay in their
    domains (x * x + 0.5 > 0, logistic(x) in (0, 1)) and bounded by 5."""
    x = g.pick(lambda v: v.is_float)
    if x is None:
        return False
    form = g.choice(["i0e", "i1e", "igamma", "igammac", "polygamma", "betainc"])
    pos = f"({x.name} * {x.name} + 0.5)"
    code = {"i0e": f"lax.bessel_i0e({x.name})", "i1e": f"lax.bessel_i1e({x.name})",
            "igamma": f"lax.igamma(2.5, {pos})", "igammac": f"lax.igammac(1.5, {pos})",
            "polygamma": f"lax.polygamma(1.0, {pos})",
            "betainc": f"lax.betainc(2.0, 3.0, lax.logistic({x.name}))"}[form]
    if form != "i1e" and not fits(x.dtype, x.bound * x.bound + 1):
        return False
    return g.emit("special", code, [x], g.new(x.shape, x.dtype, 5.0))


def g_special_more(g: Gen) -> bool:
    """Issue 30's jax.scipy.special compositions (erfcx, dawsn, fresnel, sici, owens_t) at
    arguments where they are smooth and bounded by 2."""
    x = g.pick(lambda v: v.is_float)
    if x is None:
        return False
    form = g.choice(["erfcx", "dawsn", "fresnel", "sici", "owens_t"])
    code = {"erfcx": f"jax.scipy.special.erfcx(jnp.abs({x.name}))",
            "dawsn": f"jax.scipy.special.dawsn({x.name})",
            "fresnel": f"jax.scipy.special.fresnel({x.name})[1]",
            "sici": f"jax.scipy.special.sici({x.name})[0]",
            "owens_t": f"jax.scipy.special.owens_t({x.name}, 0.75)"}[form]
    return g.emit("special_more", code, [x], g.new(x.shape, x.dtype, 2.0))


def g_linalg(g: Gen) -> bool:
    """Issue 28's decompositions (jnp.linalg, lax.linalg) on a well-conditioned matrix built from
    a value v (..., n): A = t tᵀ + n I with t = tanh(v) (eigenvalues in [n, 2n])."""
    # v is also the right-hand side: a finite one (an infinite one gives infinities and NaNs
    # whose pattern depends on the order of the substitution, LAPACK's or the reference's)
    v = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim >= 1
               and 1 <= v.shape[-1] <= 6 and math.isfinite(v.bound))
    if v is None:
        return False
    n = v.shape[-1]
    form = g.choice(["cholesky", "solve", "triangular_solve", "slogdet", "inv", "lu"]
                    + (["det"] if n <= 3 else []))   # det's bound (2n)^n stays below BIG
    shapes = {"cholesky": v.shape + (n,), "inv": v.shape + (n,), "lu": v.shape + (n,),
              "solve": v.shape, "triangular_solve": v.shape, "slogdet": v.shape[:-1],
              "det": v.shape[:-1]}
    bounds = {"cholesky": math.sqrt(2 * n), "inv": 1.0, "lu": 2 * n + 1,
              "solve": v.bound, "triangular_solve": v.bound, "slogdet": n * math.log(2 * n) + 1,
              "det": (2.0 * n) ** n}
    out = g.new(shapes[form], v.dtype, bounds[form])
    a = f"{out.name}_a"
    defs = (f"{out.name}_t = jnp.tanh({v.name})\n"
            f"{a} = {out.name}_t[..., :, None] * {out.name}_t[..., None, :] + "
            f"{n} * jnp.eye({n}, dtype={out.name}_t.dtype)")
    code = {
        "cholesky": f"jnp.linalg.cholesky({a})",
        "inv": f"jnp.linalg.inv({a})",
        "lu": f"lax.linalg.lu({a})[0]",
        "solve": f"jnp.linalg.solve({a}, {v.name}[..., None])[..., 0]",
        "triangular_solve": f"lax.linalg.triangular_solve(jnp.linalg.cholesky({a}), "
                            f"{v.name}[..., None], left_side=True, lower=True)[..., 0]",
        "slogdet": f"jnp.linalg.slogdet({a}).logabsdet",
        "det": f"jnp.linalg.det({a})"}[form]
    return g.emit("linalg", code, [v], out, defs=defs)


def g_callbacks(g: Gen) -> bool:
    """``pure_callback`` (issue 30): a host function of one operand, called per batch element
    under vmap; not in grad programs (it has no derivative, as in JAX)."""
    if g.mode == "grad":
        return False
    x = g.pick(lambda v: v.dtype != "bool" and fits(v.dtype, 2 * v.bound))
    if x is None:
        return False
    cb = f"_host{len(g.ops)}"
    defs = f"def {cb}(a):\n    return (np.asarray(a) * 2).astype(np.asarray(a).dtype)"
    return g.emit("pure_callback", f"jax.pure_callback({cb}, jax.ShapeDtypeStruct("
                  f"{x.name}.shape, {x.name}.dtype), {x.name}, vmap_method='sequential')",
                  [x], g.new(x.shape, x.dtype, 2 * x.bound), defs=defs)


def g_linalg_eig(g: Gen) -> bool:
    """Issue 28's tridiagonal_solve and expm (h28-eig) on a value v (..., n): a diagonally
    dominant system (|x| <= |b| with d >= 2, |dl| + |du| <= 1) and expm of A = t tᵀ / 4
    (t = tanh(v): ||A|| <= n / 4, entries of expm(A) below exp(n / 4))."""
    v = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim >= 1
               and 1 <= v.shape[-1] <= 6)
    if v is None:
        return False
    n = v.shape[-1]
    if g.flag():
        out = g.new(v.shape, v.dtype, v.bound)
        t = f"{out.name}_t"
        defs = f"{t} = jnp.tanh({v.name})"
        code = (f"lax.linalg.tridiagonal_solve(0.5 * {t}, 3.0 + {t}, 0.5 * jnp.cos({v.name}) * "
                f"{t}, {v.name}[..., None])[..., 0]")
        return g.emit("linalg_eig", code, [v], out, defs=defs)
    out = g.new(v.shape + (n,), v.dtype, math.exp(0.25 * n) + 1)
    t = f"{out.name}_t"
    defs = f"{t} = jnp.tanh({v.name})"
    code = f"jax.scipy.linalg.expm(0.25 * {t}[..., :, None] * {t}[..., None, :])"
    return g.emit("linalg_eig", code, [v], out, defs=defs)


def g_fft(g: Gen) -> bool:
    """Issue 29's FFTs (jnp.fft, lax.fft, pullback.scipy.fft) on a float32/float64 value, as
    real results: real/imaginary parts of a complex transform, a real round trip, a DCT."""
    v = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim >= 1 and v.size > 0)
    if v is None:
        return False
    i = g.int_(-v.ndim, -1)
    n = v.shape[i]
    form = g.choice(["fft_real", "rfft_imag", "roundtrip", "fft2", "ifft", "dct", "hfft"])
    shape, bound = list(v.shape), v.bound * n
    if form == "fft_real":
        norm = g.choice(["backward", "ortho", "forward"])
        code = f"jnp.real(jnp.fft.fft({v.name}, axis={i}, norm={norm!r}))"
    elif form == "rfft_imag":
        shape[i] = n // 2 + 1
        code = f"jnp.imag(jnp.fft.rfft({v.name}, axis={i}))"
    elif form == "roundtrip":
        m = g.int_(1, n + 2)      # crop or zero-pad, then back to n
        code = f"jnp.fft.irfft(jnp.fft.rfft({v.name}, n={m}, axis={i}), n={n}, axis={i})"
        bound = v.bound * (m // 2 + 1) * 2
    elif form == "fft2":
        if v.ndim < 2:
            return False
        bound = v.bound * v.shape[-1] * v.shape[-2]
        code = f"jnp.imag(jnp.fft.fft2({v.name}, norm='ortho')) + jnp.real(jnp.fft.ifft2({v.name}))"
    elif form == "ifft":
        code = (f"jnp.real(lax.fft(jnp.fft.fft({v.name}), 'IFFT', ({n},)))" if i == -1 else
                f"jnp.imag(jnp.fft.ifft({v.name}, axis={i}))")
        bound = v.bound * 2
    elif form == "dct":
        code = f"jax.scipy.fft.dct({v.name}, axis={i}, norm={g.choice([None, 'ortho'])!r})"
        bound = 2 * v.bound * n
    else:
        shape[i] = 2 * (n - 1) if n > 1 else 1
        code = f"jnp.fft.hfft({v.name}, n={shape[i]}, axis={i})"
        bound = v.bound * 2 * shape[i]
    return g.emit("fft", code, [v], g.new(tuple(shape), v.dtype, bound))


def g_parity(g: Gen) -> bool:
    """Issue 30's composites: jnp.select, jnp.cross, jnp.trapezoid, jnp.polyval, jnp.append,
    lax.tile and lax.collapse (each differentiable)."""
    x = g.pick(lambda v: v.is_float and v.bound <= 100)
    if x is None:
        return False
    form = g.choice(["select", "cross", "trapezoid", "polyval", "append", "tile", "collapse"])
    b = x.bound
    if form == "select":
        return g.emit("select", f"jnp.select([{x.name} < 0, {x.name} > 1], [{x.name} * 2, "
                      f"jnp.sin({x.name})], {x.name})", [x], g.new(x.shape, x.dtype, 2 * b + 1))
    if form == "cross":
        if x.ndim < 1 or x.shape[-1] != 3:
            return False
        return g.emit("cross", f"jnp.cross({x.name}, {x.name}[..., ::-1] + 1)", [x],
                      g.new(x.shape, x.dtype, 2 * b * (b + 1)))
    if form == "trapezoid":
        if x.ndim < 1:
            return False
        i = g.int_(0, x.ndim - 1)
        shape = x.shape[:i] + x.shape[i + 1:]
        return g.emit("trapezoid", f"jnp.trapezoid({x.name}, axis={i})", [x],
                      g.new(shape, x.dtype, b * max(x.shape[i] - 1, 1)))
    if form == "polyval":
        return g.emit("polyval", f"jnp.polyval(jnp.array([0.5, -1.0, 2.0], {x.name}.dtype), "
                      f"{x.name})", [x], g.new(x.shape, x.dtype, 0.5 * b * b + b + 2))
    if form == "append":
        if x.ndim < 1:
            return False
        i = g.int_(0, x.ndim - 1)
        shape = list(x.shape)
        shape[i] *= 2
        return g.emit("append", f"jnp.append({x.name}, -{x.name}, axis={i})", [x],
                      g.new(shape, x.dtype, b))
    if form == "tile":
        reps = tuple(g.int_(1, 2) for _ in range(x.ndim))
        return g.emit("tile", f"lax.tile({x.name}, {reps})", [x],
                      g.new(tuple(d * r for d, r in zip(x.shape, reps)), x.dtype, b))
    if x.ndim < 2:
        return False
    shape = (x.shape[0] * x.shape[1],) + x.shape[2:]
    return g.emit("collapse", f"lax.collapse({x.name}, 0, 2)", [x], g.new(shape, x.dtype, b))


def g_spectral(g: Gen) -> bool:
    """Issue 28's orthogonal and spectral decompositions on a matrix built from a value v (..., n):
    A = (D + t tᵀ / n) / (3n) with t = tanh(v), D = 3 diag(1..n): A's eigenvalues (= its
    singular values) lie in [1/(3n), 1 + 1/(3n)] at least 1/(3n) apart, so every derivative
    here is defined and the values stay small."""
    v = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim >= 1
               and 1 <= v.shape[-1] <= 5)
    if v is None:
        return False
    n = v.shape[-1]
    form = g.choice(["eigvalsh", "svdvals", "norm2", "nuc", "qr_r", "vector_norm", "pinv"])
    top = 1.0 + 1.0 / (3 * n)
    shapes = {"eigvalsh": v.shape, "svdvals": v.shape, "norm2": v.shape[:-1],
              "nuc": v.shape[:-1], "qr_r": v.shape + (n,), "vector_norm": v.shape[:-1],
              "pinv": v.shape + (n,)}
    bounds = {"eigvalsh": top, "svdvals": top, "norm2": top, "nuc": n * top, "qr_r": top,
              "vector_norm": 2.5 * math.sqrt(n), "pinv": 3.0 * n}
    out = g.new(shapes[form], v.dtype, bounds[form])
    a = f"{out.name}_a"
    defs = (f"{out.name}_t = jnp.tanh({v.name})\n"
            f"{a} = ({out.name}_t[..., :, None] * {out.name}_t[..., None, :] / {n} + "
            f"jnp.diag(jnp.arange(1, {n + 1}, dtype={out.name}_t.dtype) * 3)) / {3 * n}")
    code = {
        "eigvalsh": f"jnp.linalg.eigvalsh({a})",
        "svdvals": f"jnp.linalg.svdvals({a})",
        "norm2": f"jnp.linalg.norm({a}, 2, axis=(-2, -1))",
        "nuc": f"jnp.linalg.matrix_norm({a}, ord='nuc')",
        "qr_r": f"jnp.linalg.qr({a}).R",
        "vector_norm": f"jnp.linalg.vector_norm({out.name}_t + 1.5, axis=-1)",
        "pinv": f"jnp.linalg.pinv({a})"}[form]
    return g.emit("spectral", code, [v], out, defs=defs)


def g_random(g: Gen) -> bool:
    """Issue 30's jax.random distributions, sampled with a fixed key and scaled or parameterised
    by a float32/float64 value, so programs differentiate through them: normal, uniform,
    laplace, logistic, gumbel, exponential (the value scales the sample), truncated_normal
    (bounds from the value) and, outside grad mode, gamma and beta with parameters from the
    value (rejection samplers: only their implicit gradient is defined, central differences
    of the sample are not)."""
    x = g.pick(lambda v: v.dtype in ("float32", "float64") and v.bound <= 100)
    if x is None:
        return False
    forms = ["normal", "uniform", "laplace", "logistic", "gumbel", "exponential",
             "truncated_normal"]
    if g.mode != "grad":
        forms += ["gamma", "beta"]
    form = g.choice(forms)
    key = f"jax.random.key({g.int_(0, 99)})"
    n, b, dt = x.name, x.bound, f"jnp.{x.dtype}"
    pos = f"({n} * {n} + 0.5)"
    if form == "truncated_normal":
        code = f"jax.random.truncated_normal({key}, -{pos}, {pos}, {x.shape}, {dt})"
        bound = b * b + 0.5
    elif form == "gamma":
        code = f"jax.random.gamma({key}, {pos}, {x.shape}, {dt})"
        bound = 3 * (b * b + 0.5) + 40
    elif form == "beta":
        code = f"jax.random.beta({key}, {pos}, 1.0 + jnp.abs({n}), {x.shape}, {dt})"
        bound = 1.0
    else:
        code = f"jax.random.{form}({key}, {x.shape}, {dt}) * {n}"
        # no sample of at most 2048 draws exceeds these (the largest of 2048: ~3.5 for the
        # normal, ~7.6 for the exponential-tailed ones)
        bound = b * (1.0 if form == "uniform" else 12.0)
    if not fits(x.dtype, bound):
        return False
    return g.emit("random", code, [x], g.new(x.shape, x.dtype, bound))
def g_signal(g: Gen) -> bool:
    """Issue 30's jax.scipy.signal spectral functions on a float32/float64 value: fftconvolve,
    welch, the real part of stft, detrend (each differentiable)."""
    v = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim >= 1 and v.size > 0
               and v.bound <= 100)
    if v is None:
        return False
    i = g.int_(-v.ndim, -1)
    n, b = v.shape[i], v.bound
    k = g.int_(1, n)                        # nperseg, at most the signal length
    shape = list(v.shape)
    form = g.choice(["fftconvolve", "welch", "stft", "detrend"])
    if form == "fftconvolve":
        mode = g.choice(["full", "same", "valid"])
        shape[i] = {"full": 2 * n - 1, "same": n, "valid": 1}[mode]
        code = (f"jax.scipy.signal.fftconvolve({v.name}, jnp.flip({v.name}, {i}), {mode!r}, "
                f"axes={i})")
        return g.emit("signal", code, [v], g.new(tuple(shape), v.dtype, b * b * n + 1))
    if form == "welch":
        shape[i] = k // 2 + 1
        code = f"jax.scipy.signal.welch({v.name}, nperseg={k}, axis={i})[1]"
        return g.emit("signal", code, [v], g.new(tuple(shape), v.dtype, 8 * b * b * k + 1))
    if form == "stft":
        step = k - k // 2
        length = n + 2 * (k // 2)
        length += (-(length - k) % step) % k
        shape[i] = k // 2 + 1
        code = f"jnp.real(jax.scipy.signal.stft({v.name}, nperseg={k}, axis={i})[2])"
        return g.emit("signal", code, [v], g.new(tuple(shape) + ((length - k) // step + 1,),
                                                   v.dtype, b + 1))
    code = f"jax.scipy.signal.detrend({v.name}, axis={i}, type={g.choice(['linear', 'constant'])!r})"
    return g.emit("signal", code, [v], g.new(v.shape, v.dtype, 4 * b + 1))
def g_solvers(g: Gen) -> bool:
    """Issue 30's solvers and integrals (h30-solvers): jax.scipy.sparse.linalg's cg, gmres
    and bicgstab on A = 3 diag(1..n) + t uᵀ / n (t = tanh(v), u = tanh(v) for cg, cos(v)
    otherwise: eigenvalues >= 2, so |x| <= |v| sqrt(n) / 2), jax.scipy.integrate.trapezoid,
    and lax.ragged_dot_general (two row groups of a matrix against tanh/cos of its
    transpose)."""
    form = g.choice(["trapezoid", "ragged", "cg", "gmres", "bicgstab"])
    if form == "trapezoid":
        x = g.pick(lambda v: v.is_float and v.ndim >= 1)
        if x is None:
            return False
        i = g.int_(-x.ndim, x.ndim - 1)
        shape = x.shape[:i % x.ndim] + x.shape[i % x.ndim + 1:]
        return g.emit("trapezoid", f"jax.scipy.integrate.trapezoid({x.name}, axis={i})", [x],
                      g.new(shape, x.dtype, x.bound * max(x.shape[i], 1)))
    if form == "ragged":
        x = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim == 2
                   and v.shape[0] >= 1)
        if x is None:
            return False
        m, k = x.shape
        a = g.int_(0, m)
        out = g.new((m, m), x.dtype, x.bound * max(k, 1))
        r = f"{out.name}_r"
        defs = f"{r} = jnp.stack([jnp.tanh({x.name}).T, 0.5 * jnp.cos({x.name}).T])"
        code = (f"lax.ragged_dot_general({x.name}, {r}, jnp.array([{a}, {m - a}], jnp.int32), "
                f"lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0]))")
        return g.emit("ragged", code, [x], out, defs=defs)
    v = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim == 1
               and 1 <= v.shape[0] <= 6)
    if v is None:
        return False
    n = v.shape[0]
    out = g.new(v.shape, v.dtype, v.bound * math.sqrt(n))
    a = f"{out.name}_a"
    u = "jnp.tanh" if form == "cg" else "jnp.cos"
    defs = (f"{a} = jnp.diag(jnp.arange(1, {n + 1}, dtype={v.name}.dtype) * 3) + "
            f"jnp.tanh({v.name})[:, None] * {u}({v.name})[None, :] / {n}")
    tol = "1e-12" if v.dtype == "float64" else "1e-6"
    code = f"jax.scipy.sparse.linalg.{form}({a}, {v.name}, tol={tol})[0]"
    return g.emit("solvers", code, [v], out, defs=defs)
def g_qr_multiply(g: Gen) -> bool:
    """scipy.linalg.qr_multiply (issue 28) of g_spectral's well-conditioned A (distinct singular
    values in [1/(3n), 1 + 1/(3n)]) with c = tanh(v) as one column (left) or one row (right):
    Q has orthonormal columns, so the product's entries stay below sqrt(n)."""
    v = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim >= 1
               and 1 <= v.shape[-1] <= 5)
    if v is None:
        return False
    n = v.shape[-1]
    mode = g.choice(["left", "right"])
    out = g.new(v.shape + (1,) if mode == "left" else v.shape[:-1] + (1, n), v.dtype,
                math.sqrt(n))
    t, a = f"{out.name}_t", f"{out.name}_a"
    # (+ 1/(4n) everywhere: a zero below the diagonal, as t = 0 gives, is where LAPACK's
    # Householder QR flips a sign of Q, so Q would jump under the finite differences)
    defs = (f"{t} = jnp.tanh({v.name})\n"
            f"{a} = ({t}[..., :, None] * {t}[..., None, :] / {n} + {0.25 / n} + "
            f"jnp.diag(jnp.arange(1, {n + 1}, dtype={t}.dtype) * 3)) / {3 * n}")
    c = f"{t}[..., :, None]" if mode == "left" else f"{t}[..., None, :]"
    code = f"jax.scipy.linalg.qr_multiply({a}, {c}, mode={mode!r})[0]"
    return g.emit("qr_multiply", code, [v], out, defs=defs)


def g_scipy_geometry(g: Gen) -> bool:
    """Issue 30's scipy geometry on a float value: a rotation by tanh of a 3-vector value
    applied to that value (Rotation.from_rotvec(...).apply, smooth; norms kept), and on a 2-D
    value: ndimage.map_coordinates at fixed coordinates (order 0 or 1, every mode),
    interpolate.RegularGridInterpolator at fixed points (both linear in the value) and
    cluster.vq.vq's codes."""
    if g.flag():
        v = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim >= 1
                   and v.shape[-1] == 3 and v.bound <= 100)
        if v is None:
            return False
        code = (f"jax.scipy.spatial.transform.Rotation.from_rotvec(jnp.tanh({v.name}))"
                f".apply({v.name})")
        return g.emit("scipy_geometry", code, [v], g.new(v.shape, v.dtype, 2 * v.bound))
    v = g.pick(lambda v: v.dtype in ("float32", "float64") and v.ndim == 2 and v.size > 0)
    if v is None:
        return False
    form = g.choice(["map_coordinates", "grid", "vq"])
    pts = "[[0.25, 0.5], [0.0, 0.0], [0.9, 0.1]]"
    if form == "grid":   # linear interpolation on a [0, 1] x [0, 1] grid: linear in the value
        # (grids in the value's dtype: float64 grids would make a float32 value's result
        # float64, as in JAX)
        code = (f"jax.scipy.interpolate.RegularGridInterpolator((jnp.linspace(0, 1, "
                f"{v.shape[0]}, dtype={v.name}.dtype), jnp.linspace(0, 1, {v.shape[1]}, "
                f"dtype={v.name}.dtype)), {v.name}, "
                f"bounds_error=False, fill_value=0.0)(jnp.array({pts}, {v.name}.dtype))")
        if min(v.shape) < 2:
            return False
        return g.emit("scipy_geometry", code, [v], g.new((3,), v.dtype, v.bound))
    if form == "vq":     # nearest code (rows of the value): the default int, made int32
        code = (f"jax.scipy.cluster.vq.vq({v.name}, jnp.concatenate([{v.name}[:1] * 0.5, "
                f"-{v.name}[:1]]))[0].astype(jnp.int32)")
        return g.emit("scipy_geometry", code, [v], g.new((v.shape[0],), "int32", 0))
    order, mode = g.int_(0, 1), g.choice(["constant", "nearest", "wrap", "mirror", "reflect"])
    rows = [round(-1.3 + 0.7 * i, 2) for i in range(5)]
    cols = [round(v.shape[1] - 0.6 * i, 2) for i in range(5)]
    code = (f"jax.scipy.ndimage.map_coordinates({v.name}, [jnp.array({rows}), "
            f"jnp.array({cols})], order={order}, mode={mode!r})")
    return g.emit("scipy_geometry", code, [v], g.new((5,), v.dtype, v.bound))


CATALOGUE = {
    "unary": g_unary, "binary": g_binary, "index": g_index, "reduce": g_reduce,
    "reshape": g_reshape, "transpose": g_transpose, "matmul": g_matmul, "pad": g_pad,
    "concatenate": g_concatenate, "where": g_where, "convert": g_convert,
    "lax_slice": g_lax_slice, "dynamic_slice": g_dynamic_slice,
    "dynamic_update_slice": g_dynamic_update_slice, "split": g_split, "stack": g_stack,
    "broadcast": g_broadcast, "squeeze_expand": g_squeeze_expand, "flip": g_flip,
    "arg": g_arg, "cumulative": g_cumulative, "sort": g_sort, "dot_general": g_dot_general,
    "gather": g_gather, "scatter": g_scatter, "nn": g_nn, "numpy": g_numpy, "custom": g_custom,
    "checkpoint": g_checkpoint, "control": g_control, "added": g_added,
    "transformer_ops": g_transformer_ops,
    "norms": g_norms,
    "residual_norm": g_residual_norm,
    "attention": g_attention,
    "scaled_matmul": g_scaled_matmul,
    "conv": g_conv,
    "image": g_image,
    "reduce_window": g_reduce_window,
    "linalg": g_linalg,
    "callbacks": g_callbacks,
    "linalg_eig": g_linalg_eig,
    "fft": g_fft,
    "special": g_special,
    "special_more": g_special_more,
    "parity": g_parity,
    "spectral": g_spectral,
    "random": g_random,
    "scipy_geometry": g_scipy_geometry,
    "signal": g_signal,
    "solvers": g_solvers,
    "qr_multiply": g_qr_multiply,
}


@st.composite
def programs(draw, mode: str = "any", min_ops: int = 3, max_ops: int = 30):
    """A random program. mode: "any"; "grad" (float64 floats, no while_loop, so central
    differences are meaningful); "vmap" (inputs carry a batch axis); "alias" (outputs include
    inputs, views of them and repeated values; inputs may share memory; some are donated)."""
    g = Gen(draw, mode)
    batch = draw(st.integers(1, 3)) if mode == "vmap" else 0
    for k in range(draw(st.integers(1, 3))):
        inp = draw_input(g, k, batch)
        g.inputs.append(inp)
        g.vals.append(inp.val)
    names = list(CATALOGUE)
    for _ in range(draw(st.integers(min_ops, max_ops))):
        try:
            done = CATALOGUE[draw(st.sampled_from(names))](g)
        except Skip:
            done = False
        if not done:
            g_unary(g)
    read = {r for op in g.ops for r in op.reads}
    outputs = [v.name for op in g.ops for v in op.outs if v.name not in read]
    donate = ()
    if mode == "alias":
        for _ in range(draw(st.integers(1, 3))):
            v = g.pick()
            form = draw(st.sampled_from(["same", "view", "twice"]))
            if form == "view" and v.ndim >= 1:
                code, shape = draw(st.sampled_from([
                    (f"{v.name}[::-1]", v.shape), (f"{v.name}.T", v.shape[::-1]),
                    (f"{v.name}.reshape(-1)" if v.size else f"{v.name}[:0]", (v.size,))]))
                out = g.new(shape, v.dtype, v.bound)
                g.emit("view", code, [v], out)
                outputs.append(out.name)
            else:
                outputs += [v.name] * (2 if form == "twice" else 1)
        donate = tuple(sorted(set(draw(st.lists(st.integers(0, len(g.inputs) - 1),
                                                max_size=len(g.inputs))))))
        for d in donate:   # an element-wise result the donated buffer can hold, maybe twice
            x = g.inputs[d].val
            out = g.new(x.shape, x.dtype, x.bound)
            tmpl = {"bool": "~{}", "int32": "-{}"}.get(x.dtype, "jnp.sin({})")
            g.emit("unary", tmpl.format(x.name), [x], out)
            outputs += [out.name] * draw(st.integers(1, 2))
    return Program(g.inputs, g.ops, outputs, draw(st.integers(0, 2 ** 16)), g.helpers, batch,
                   donate)
