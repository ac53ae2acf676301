"""The comparisons run on each random program (tests/programs.py): eager against jit, the
reference backend, grad against finite differences, vmap against a loop, and aliasing and
donation under jit. Shared by tests/test_programs.py and scripts/fuzz-programs.py.

Each check raises AssertionError with the program's source on a mismatch. Tolerances: integer
and bool results exact; floats relative to the program's tracked magnitude bound of the value
(float32 2e-5, float64 1e-9 of the bound; float32's for every float if the program computes
any float32), NaN equal to NaN.
"""
from __future__ import annotations

import os

import numpy as np

import pullback as jax
import pullback.numpy as jnp

RTOL = {"float32": 2e-5, "float64": 1e-9}
# PULLBACK_GEN_SKIP_KNOWN=1 (development only): failures matching a compiler bug being fixed
# elsewhere are rejected instead of reported; the committed tests run without it.
SKIP_KNOWN = os.environ.get("PULLBACK_GEN_SKIP_KNOWN") == "1"
DOTS = {"matmul", "dot_general", "einsum"}
MOVES = {"pad", "lax_pad", "dynamic_update_slice", "concatenate"}
SLICES = MOVES | {"index", "slice", "dynamic_slice", "split", "gather", "scatter"}
VIEWS = {"index", "slice", "reshape", "transpose", "broadcast", "squeeze", "expand_dims", "flip",
         "rev", "split", "view"}


class Mismatch(AssertionError):
    pass


def known_bug(p, check: str, message: str = "") -> str | None:
    """The known compiler bug a failure of ``check`` on ``p`` (with that message) may be."""
    if check == "donate" and p.donate and ("donat" in message or "reuse" in message):
        return "(b)/(c) donation"
    ops = {v.name: op for op in p.ops for v in op.outs}

    def dot_source(name: str) -> bool:   # a dot result, or a view of one
        op = ops.get(name)
        return op is not None and (op.kind in DOTS or op.kind in VIEWS
                                   and any(dot_source(r) for r in op.reads))
    for op in p.ops:
        if op.kind in MOVES and any(dot_source(r) for r in op.reads):
            return "(a) copy of a dot result into a larger array"
        srcs = {ops[r].kind for r in op.reads if r in ops}
        if check == "grad" and ((op.kind in SLICES and srcs & DOTS)
                                or (op.kind in DOTS and srcs & SLICES)):
            return "(a) transposed dot into a pad interior under grad"
    return None


def fail(p, what: str, detail: str) -> None:
    raise Mismatch(f"{what}: {detail}\n--- program (paste and run f(*args)) ---\n{p.source()}")


def snapshot(xs) -> list:
    return [np.array(x, copy=True) for x in xs]


def sensitivity(fn, args) -> list:
    """Per output of fn(*args), how far it moves when every float input moves by about one
    rounding error (relative 2**-23 or 2**-52, random signs): rounding inside the program
    moves an ill-conditioned output (sin of a large dot product, say) about as far, so the
    float tolerances add a multiple of it to the magnitude-bound term."""
    rng = np.random.default_rng(0)
    moved = []
    for a in args:
        x = np.asarray(a)
        if x.dtype.kind == "f":
            ulp = 2.0 ** (-23 if x.dtype == np.float32 else -52)
            x = x * (1 + ulp * rng.choice([-1.0, 1.0], x.shape)).astype(x.dtype)
        moved.append(jnp.asarray(x))
    out = []
    for o, m in zip(fn(*args), fn(*moved)):
        with np.errstate(invalid="ignore"):      # inf - inf: not a finite distance
            d = np.abs(np.asarray(o, np.float64) - np.asarray(m, np.float64))
        out.append(float(d[np.isfinite(d)].max(initial=0.0)))
    return out


def compare(p, what: str, got, want, vals, exact: bool = False, sens=None,
            shape_only=()) -> None:
    """got and want (sequences of arrays) equal: exactly, or within the dtype's tolerance
    scaled by each value's magnitude bound, plus 8x its sensitivity (``sensitivity``); the
    values named in shape_only in shape and dtype only."""
    if len(got) != len(want):
        fail(p, what, f"{len(got)} outputs against {len(want)}")
    for k, (g, w, v) in enumerate(zip(got, want, vals)):
        g, w = np.asarray(g), np.asarray(w)
        name = getattr(v, "name", str(k))
        if g.shape != w.shape or g.dtype != w.dtype:
            fail(p, what, f"output {name}: {g.dtype}{list(g.shape)} against "
                          f"{w.dtype}{list(w.shape)}")
        try:
            if name in shape_only:
                continue
            if exact or w.dtype.kind not in "fc":
                np.testing.assert_array_equal(g, w)
            else:
                # a float64 value computed from float32 ones has float32's precision
                rtol = RTOL["float32" if p.has_float32() else w.dtype.name]
                atol = rtol * max(1.0, min(v.bound, 1e6)) + (8 * sens[k] if sens else 0.0)
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as e:
            fail(p, what, f"output {name} differs{str(e)}")


def check_jit(p) -> None:
    """Eager against jit; a second jit call equals the first; inputs unchanged."""
    ns = p.build()
    f, args = ns["f"], ns["args"]
    before = snapshot(args)
    want = f(*args)
    jf = jax.jit(f)
    got = jf(*args)
    again = jf(*args)
    vals = p.out_vals()
    compare(p, "jit against eager", got, want, vals, sens=sensitivity(f, args))
    compare(p, "second jit call against the first", again, got, vals, exact=True)
    compare(p, "inputs after the calls", args, before, [i.val for i in p.inputs], exact=True)


def check_reference(p) -> None:
    """The CPU kernels against every primitive's NumPy reference (eager)."""
    ns = p.build()
    f, args = ns["f"], ns["args"]
    want = f(*args)
    jax.config.update("backend", "reference")
    try:
        got = f(*args)
    finally:
        jax.config.update("backend", "cpu")
    compare(p, "cpu backend against the reference backend", want, got, p.out_vals(),
            sens=sensitivity(f, args), shape_only=p.fragile())


def check_grad(p) -> None:
    """grad of a weighted sum of the float outputs: eager against jit(grad) and grad(jit),
    and its directional derivative against central differences (float64 programs)."""
    ns = p.build()
    f, args = ns["f"], ns["args"]
    argnums = tuple(i for i, inp in enumerate(p.inputs) if inp.val.is_float)
    floats = [k for k, v in enumerate(p.out_vals()) if v.is_float]
    if not floats:
        return
    rng = np.random.default_rng(p.seed + 1)
    weights = [rng.standard_normal(p.out_vals()[k].shape) for k in floats]

    def loss(*xs):
        outs = f(*xs)
        return sum((jnp.sum(outs[k] * w) for k, w in zip(floats, weights)), jnp.zeros(()))

    g_eager = jax.grad(loss, argnums)(*args)
    g_jit = jax.jit(jax.grad(loss, argnums))(*args)
    g_of_jit = jax.grad(jax.jit(loss), argnums)(*args)     # jit's own jvp and transpose
    scale = max([1.0] + [float(np.max(np.abs(g), initial=0)) for g in g_eager
                         if np.all(np.isfinite(g))])
    for i, ge, gj, gk in zip(argnums, g_eager, g_jit, g_of_jit):
        for what, g in (("jit(grad)", gj), ("grad(jit)", gk)):
            try:
                np.testing.assert_allclose(np.asarray(g), np.asarray(ge), rtol=1e-9,
                                           atol=1e-9 * scale, equal_nan=True)
            except AssertionError as e:
                fail(p, f"{what} against grad", f"gradient of x{i} differs{e}")
        if np.asarray(ge).shape != args[i].shape:
            fail(p, "grad", f"gradient of x{i} has shape {np.asarray(ge).shape}")
    dirs = {i: rng.standard_normal(args[i].shape) for i in argnums}

    def along(eps):
        xs = [jnp.asarray(np.asarray(a) + eps * dirs[i]) if i in dirs else a
              for i, a in enumerate(args)]
        return float(loss(*xs))

    l0 = float(loss(*args))
    e = 1e-5
    f1, m1, f2, m2 = along(e), along(-e), along(2 * e), along(-2 * e)
    dd = sum(float(np.sum(np.asarray(g) * dirs[i])) for i, g in zip(argnums, g_eager))
    mag = 1.0 + abs(l0) + sum(float(np.sum(np.abs(np.asarray(g) * dirs[i])))
                              for i, g in zip(argnums, g_eager))
    # second differences grow 4x from e to 2e where the loss is smooth, 2x at a kink (ties of
    # max/sort/top_k, abs at 0) and not at all at a jump (comparisons): skip those points
    kink = abs((f2 - 2 * l0 + m2) - 4 * (f1 - 2 * l0 + m1)) / e
    if not all(np.isfinite([l0, dd, f1, m1, f2, m2])) or kink > 1e-7 * mag:
        return
    # Richardson's combination of the e and 2e central differences: their e**2 error terms
    # cancel (large where the loss curves fast, as sin of a large argument)
    fd = (8 * (f1 - m1) - (f2 - m2)) / (12 * e)
    if abs(dd - fd) > 1e-6 * mag:
        fail(p, "grad against central differences",
             f"directional derivative {dd!r}, differences {fd!r}")


def check_vmap(p) -> None:
    """vmap and jit(vmap) against a Python loop over the batch axis."""
    ns = p.build()
    f, args = ns["f"], ns["args"]
    axes = p.in_axes()
    rows = [f(*[a[b] if ax == 0 else a for a, ax in zip(args, axes)]) for b in range(p.batch)]
    want = [np.stack([np.asarray(r[k]) for r in rows]) for k in range(len(p.outputs))]
    vals = p.out_vals()
    vf = jax.vmap(f, in_axes=axes)
    sens = sensitivity(vf, args)
    compare(p, "vmap against a loop", vf(*args), want, vals, sens=sens)
    compare(p, "jit(vmap) against a loop", jax.jit(vf)(*args), want, vals, sens=sens)


def check_donate(p) -> None:
    """Outputs that alias inputs or each other under jit, and donate_argnums: results equal
    eager, every argument not donated is unchanged, and results stay valid after a later
    call."""
    ns = p.build()
    f, args = ns["f"], ns["args"]
    before = snapshot(args)
    want = snapshot(f(*args))
    vals, ins = p.out_vals(), [i.val for i in p.inputs]
    sens = sensitivity(f, args)
    jf = jax.jit(f)
    got = jf(*args)
    compare(p, "jit against eager (outputs aliasing inputs)", got, want, vals, sens=sens)
    compare(p, "inputs after jit", args, before, ins, exact=True)
    if not p.donate:
        return
    fresh = p.build()["args"]
    jd = jax.jit(f, donate_argnums=p.donate)
    got = jd(*fresh)
    compare(p, "jit with donate_argnums against eager", got, want, vals, sens=sens)
    donated = [fresh[i] for i in p.donate]
    kept = [k for k, a in enumerate(fresh) if not any(a is d for d in donated)]
    compare(p, "arguments not donated, after the donating call", [fresh[k] for k in kept],
            [before[k] for k in kept], [ins[k] for k in kept], exact=True)
    held = snapshot(got)
    jd(*p.build()["args"])
    compare(p, "results of a donating call after the next call", got, held, vals, exact=True)


CHECKS = {"jit": check_jit, "reference": check_reference, "grad": check_grad,
          "vmap": check_vmap, "donate": check_donate}
MODES = {"jit": "any", "reference": "any", "grad": "grad", "vmap": "vmap", "donate": "alias"}
