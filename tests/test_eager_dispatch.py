"""Eager dispatch: the short paths (backends/eager.py and pullback.numpy's callers) give exactly
what the general path gives -- values, dtypes, weak types, errors -- and eager loops (scan,
fori_loop, while_loop) run as one compiled program of their equation, cached by structure,
computing what the interpreted body computes."""
import warnings

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.backends import eager
from pullback.config import config
from pullback.primitives.elementwise import sin_p
from pullback.tracer.core import Primitive
from pullback.transforms import jit as jit_module

pytestmark = pytest.mark.eager_only  # (checks eager execution itself)

F32 = np.float32


def arr(*shape, dtype=F32, seed=0):
    return jnp.asarray(np.random.default_rng(seed).normal(size=shape).astype(dtype))


def general(f, *args):
    """``f(*args)`` with the short paths off: what the general path computes or raises."""
    eager.set_enabled(False)
    try:
        return f(*args)
    finally:
        eager.set_enabled(True)


def outcome(f, *args):
    try:
        r = f(*args)
    except Exception as e:  # noqa: BLE001 - compared below
        return ("raises", type(e), str(e))
    return ("value", np.asarray(r).dtype, np.asarray(r).shape, r.weak_type,
            np.asarray(r).tobytes())


X, Y = arr(4, 3), arr(4, 3, seed=1)
ROW, COL, S0 = arr(3, seed=2), arr(4, 1, seed=3), arr(seed=4)
I32 = jnp.asarray(np.arange(12, dtype=np.int32).reshape(4, 3))
U8 = jnp.asarray(np.arange(12, dtype=np.uint8).reshape(4, 3))
B = X > 0
WEAK = jnp.asarray(2.0) * 1.0  # a weakly typed 0-d float32 Array

CASES = [
    ("add", lambda a, b: a + b, X, Y), ("radd", lambda a, b: 2 + a, X, None),
    ("mul scalar", lambda a, b: a * 0.5, X, None), ("rsub", lambda a, b: 1.0 - a, X, None),
    ("div", lambda a, b: a / b, X, Y), ("rdiv", lambda a, b: 2 / a, X, None),
    ("int div", lambda a, b: a / 2, I32, None), ("int + float", lambda a, b: a + 0.5, I32, None),
    ("uint8 + 300", lambda a, b: a + 300, U8, None), ("int + big", lambda a, b: a + 2**40, I32, None),
    ("bool + bool", lambda a, b: a + b, B, B), ("bool * bool", lambda a, b: a * b, B, B),
    ("bool - bool", lambda a, b: a - b, B, B), ("bool + True", lambda a, b: a + True, B, None),
    ("eq bools", lambda a, b: a == b, B, B), ("gt scalar", lambda a, b: a > 0.5, X, None),
    ("int gt float", lambda a, b: a > 2.5, I32, None), ("f32 + i32", lambda a, b: a + b, X, I32),
    ("broadcast row", lambda a, b: a + b, X, ROW), ("broadcast col", lambda a, b: a - b, X, COL),
    ("broadcast 0-d", lambda a, b: a * b, X, S0), ("no broadcast", lambda a, b: a + b, X, arr(5)),
    ("weak", lambda a, b: a + 1.0, WEAK, None), ("weak + strong", lambda a, b: a * b, WEAK, X),
    ("-0.0", lambda a, b: a * -0.0, X, None), ("nan", lambda a, b: a + float("nan"), X, None),
    ("sin", lambda a, b: jnp.sin(a), X, None), ("sin int", lambda a, b: jnp.sin(a), I32, None),
    ("exp weak", lambda a, b: jnp.exp(a), WEAK, None),
    ("maximum", lambda a, b: jnp.maximum(a, b), X, Y),
    ("maximum bool", lambda a, b: jnp.maximum(a, b), B, B),
    ("maximum scalar", lambda a, b: jnp.maximum(a, 0), X, None),
    ("where", lambda a, b: jnp.where(a > 0, a, b), X, Y),
    ("where int cond", lambda a, b: jnp.where(I32, a, b), X, Y),
    ("where mixed", lambda a, b: jnp.where(a > 0, a, b), X, I32),
    ("sum 0", lambda a, b: jnp.sum(a, 0), X, None), ("sum all", lambda a, b: jnp.sum(a), X, None),
    ("sum tuple", lambda a, b: jnp.sum(a, (0, 1)), X, None),
    ("sum -1", lambda a, b: jnp.sum(a, -1), X, None),
    ("sum bad axis", lambda a, b: jnp.sum(a, 2), X, None),
    ("sum float axis", lambda a, b: jnp.sum(a, 1.0), X, None),
    ("sum bool", lambda a, b: jnp.sum(a, 0), B, None),
    ("sum weak", lambda a, b: jnp.sum(a), WEAK, None),
    ("mean 1", lambda a, b: jnp.mean(a, 1), X, None), ("mean int", lambda a, b: jnp.mean(a, 1), I32, None),
    ("mean weak", lambda a, b: jnp.mean(a), WEAK, None),
    ("reshape", lambda a, b: a.reshape(2, 6), X, None),
    ("reshape -1", lambda a, b: a.reshape(-1, 4), X, None),
    ("reshape same", lambda a, b: a.reshape(4, 3), X, None),
    ("reshape bad", lambda a, b: a.reshape(5, 3), X, None),
    ("reshape float", lambda a, b: a.reshape(6.0, 2), X, None),
    ("reshape two -1", lambda a, b: a.reshape(-1, -1), X, None),
    ("transpose", lambda a, b: a.T, X, None), ("transpose 0-d", lambda a, b: a.T, S0, None),
    ("matmul", lambda a, b: a @ b.T, X, Y), ("matmul bad", lambda a, b: a @ b, X, Y),
    ("matmul int", lambda a, b: a @ b.T, I32, I32), ("matmul bool", lambda a, b: a @ b.T, B, B),
    ("matmul mixed", lambda a, b: a @ b.T, X, I32),
]


@pytest.mark.parametrize("mode", ["x32", "x64"])
@pytest.mark.parametrize("name,f,a,b", CASES, ids=[c[0] for c in CASES])
def test_short_paths_equal_the_general_path(name, f, a, b, mode):
    with pb.enable_x64(mode == "x64"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = outcome(lambda: general(f, a, b))
            got = outcome(lambda: f(a, b))
            again = outcome(lambda: f(a, b))  # (a cached signature)
    assert got == want
    assert again == want


def test_short_paths_follow_the_promotion_and_rank_options():
    for opt, value in (("jax_numpy_dtype_promotion", "strict"),
                       ("jax_numpy_rank_promotion", "raise")):
        with config.scoped(opt, value):
            for f in (lambda: X + 0.5, lambda: X + ROW, lambda: X + I32, lambda: I32 + 0.5):
                assert outcome(f) == outcome(lambda: general(f))
    with config.scoped("jax_numpy_rank_promotion", "raise"):
        with pytest.raises(ValueError, match="rank_promotion"):
            X + ROW


def test_short_paths_off_under_debug_nans_and_the_reference_backend():
    nan = jnp.asarray(np.array([np.nan], F32))
    one = jnp.asarray(np.array([1.0], F32))
    one + one  # (learnt by the operator's fast path)
    with config.scoped("jax_debug_nans", True):
        with pytest.raises(FloatingPointError, match="invalid value \\(nan\\) encountered in add"):
            nan + one
        with pytest.raises(FloatingPointError, match="sin"):
            jnp.sin(nan)
    from pullback.test_util import reference_backend
    with reference_backend():
        calls = []
        orig = sin_p.reference
        sin_p.reference = lambda *a, **p: calls.append(1) or orig(*a, **p)
        try:
            jnp.sin(X)
        finally:
            sin_p.reference = orig
        assert calls == [1]


def test_short_paths_skip_tracers_and_escaped_tracers_raise():
    got = pb.jit(lambda a, b: a + b * 2.0 + (jnp.sin(a) @ b.T) @ b)(X, Y)
    np.testing.assert_allclose(np.asarray(got), np.asarray(X + Y * 2.0 + (jnp.sin(X) @ Y.T) @ Y),
                               rtol=1e-6)
    leaked = []
    pb.jit(lambda a: leaked.append(a) or a)(X)
    with pytest.raises(pb.UnexpectedTracerError):
        leaked[0] + X
    with pytest.raises(pb.UnexpectedTracerError):
        X + leaked[0]


def test_deleted_array_raises_on_the_short_paths():
    a = arr(4, 3)
    from pullback.tracer.array import delete
    delete(a)
    for f in (lambda: a + X, lambda: X * a, lambda: jnp.sin(a), lambda: a.reshape(12)):
        with pytest.raises(RuntimeError, match="deleted"):
            f()


# ---- eager loops: one compiled program ----

def _loops(carry, xs):
    return {
        "scan": lambda: lax.scan(lambda c, x: (c * 0.9 + x, c.sum()), carry, xs),
        "fori_loop": lambda: lax.fori_loop(0, 50, lambda i, c: c * 0.9 + jnp.sin(c) + i, carry),
        "while_loop": lambda: lax.while_loop(lambda s: s[0] < 37,
                                             lambda s: (s[0] + 1, jnp.tanh(s[1]) + 0.5),
                                             (0, carry)),
    }


@pytest.mark.parametrize("mode", ["x32", "x64"])
@pytest.mark.parametrize("loop", ["scan", "fori_loop", "while_loop"])
def test_eager_loop_is_one_compiled_program(loop, mode, monkeypatch):
    dtype = np.float64 if mode == "x64" else F32
    with pb.enable_x64(mode == "x64"):
        carry, xs = arr(5, dtype=dtype), arr(50, 5, dtype=dtype, seed=1)
        jit_module._eqn_programs.clear()
        calls = []
        for p in (sin_p,) + tuple(Primitive.registry[n] for n in ("mul", "tanh")):
            orig = p.cpu
            monkeypatch.setattr(p, "cpu", lambda k, *a, _o=orig, **kw: calls.append(1) or
                                _o(k, *a, **kw))
        got = pb.tree_util.tree_leaves(_loops(carry, xs)[loop]())  # (compiles: lowering
        assert len(jit_module._eqn_programs) == 1                 # runs the cpu rules)
        del calls[:]
        again = pb.tree_util.tree_leaves(_loops(carry, xs)[loop]())  # new lambdas, same loop
        assert len(jit_module._eqn_programs) == 1
        assert calls == []  # (no body primitive ran eagerly: the body ran in the program)
        monkeypatch.setattr(jit_module, "compile_eager_control_flow", False)
        want = pb.tree_util.tree_leaves(_loops(carry, xs)[loop]())
        assert calls  # (the interpreted body runs kernels eagerly)
    for g, a, w in zip(got, again, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype and g.weak_type == w.weak_type
        np.testing.assert_array_equal(np.asarray(a), np.asarray(g))
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6 if mode == "x32"
                                   else 1e-14)


def test_eager_loop_cache_tells_bodies_and_constants_apart():
    carry = arr(3)
    jit_module._eqn_programs.clear()
    outs = [lax.fori_loop(0, 4, lambda i, c: c * k, carry) for k in (2.0, 3.0, -0.0, 0.0)]
    assert len(jit_module._eqn_programs) == 4  # (literals differ: 2.0, 3.0, and the zero's sign)
    c = np.asarray(carry)
    for o, k in zip(outs, (2.0, 3.0, -0.0, 0.0)):
        k = np.float32(k)
        np.testing.assert_array_equal(np.asarray(o), c * k * k * k * k)
    w = arr(3, seed=5)  # a captured Array is an operand: the program is reused for new values
    for v in (w, w * 2):
        got = lax.fori_loop(0, 3, lambda i, c: c + v, carry)
        np.testing.assert_allclose(np.asarray(got), c + 3 * np.asarray(v), rtol=1e-6)
    assert len(jit_module._eqn_programs) == 5


def test_eager_loop_interpreted_under_debug_nans_and_disable_jit():
    jit_module._eqn_programs.clear()
    carry = jnp.asarray(np.array([1.0, -1.0], F32))
    with config.scoped("jax_debug_nans", True):
        with pytest.raises(FloatingPointError, match="log"):
            lax.fori_loop(0, 3, lambda i, c: jnp.log(c), carry)
    with pb.disable_jit():
        out = lax.fori_loop(0, 3, lambda i, c: c * 2, carry)
    np.testing.assert_array_equal(np.asarray(out), [8.0, -8.0])
    assert not jit_module._eqn_programs


def test_eager_scan_errors_unchanged():
    with pytest.raises(TypeError, match="carry"):
        lax.scan(lambda c, x: (c.astype(np.int32), x), arr(3), arr(4, 3))
    with pytest.raises(ValueError, match="leading axis"):
        lax.scan(lambda c, x: (c, x), arr(3), (arr(4, 3), arr(5, 3)))
