"""Nothing a caller holds can change an Array, and nothing an Array holds can change the
caller's memory: exported NumPy views stay read-only, results never share a caller's NumPy
buffer, program constants are never handed out writeable, and donation takes a buffer only
when nothing else can see it (as JAX: the donated Array is deleted; anything else is left
intact)."""
import gc
import threading

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp

pytestmark = pytest.mark.eager_only  # checks the memory the eager and compiled calls hand out


def _fresh(n=4):
    return jnp.asarray(np.arange(n, dtype=np.float32)) + 0  # a kernel result: owns its memory


def _ptr(x):
    return x._value.ctypes.data


def test_exported_view_cannot_be_made_writeable():
    for x in (_fresh(), _fresh(6).reshape(2, 3).T, jnp.ones(3, jnp.bfloat16),
              jnp.asarray(np.float32(2))):
        v = np.asarray(x)
        assert not v.flags.writeable
        with pytest.raises(ValueError):
            v.flags.writeable = True
        np.testing.assert_array_equal(v, np.asarray(x))


def test_results_never_share_a_callers_numpy_buffer():
    a = np.arange(4, dtype=np.float32)
    eager = jnp.reshape(a, (2, 2))
    trans = jnp.transpose(a.reshape(2, 2))
    jitted = pb.jit(lambda v: v.reshape(2, 2))(a)
    ident = pb.jit(lambda v: v)(a)
    a[:] = 99
    for r in (eager, ident.reshape(2, 2), jitted):
        np.testing.assert_array_equal(r, [[0, 1], [2, 3]])
    np.testing.assert_array_equal(trans, [[0, 2], [1, 3]])
    del a
    gc.collect()
    np.testing.assert_array_equal(jitted, [[0, 1], [2, 3]])


def test_donating_a_view_of_another_array_leaves_it_intact():
    g = pb.jit(lambda y: y * 10.0, donate_argnums=0)
    x = _fresh()
    np.testing.assert_array_equal(g(pb.jit(lambda v: v)(x)), [0, 10, 20, 30])
    np.testing.assert_array_equal(g(x[1:]), [10, 20, 30])
    np.testing.assert_array_equal(g(x.reshape(2, 2)), [[0, 10], [20, 30]])
    np.testing.assert_array_equal(x, [0, 1, 2, 3])
    assert not x.is_deleted()


def test_donating_a_program_constant_leaves_it_intact():
    g = pb.jit(lambda y: y * 10.0, donate_argnums=0)
    c = jnp.ones(4)
    h = pb.jit(lambda x: (x + 1.0, c))
    out = h(_fresh())[1]
    assert not out._value.flags.writeable
    g(out)
    np.testing.assert_array_equal(h(_fresh())[1], [1, 1, 1, 1])
    np.testing.assert_array_equal(c, [1, 1, 1, 1])


def test_donated_argument_passed_twice_or_exported_is_not_taken():
    f = pb.jit(lambda a, b: a * 2 + b[::-1], donate_argnums=0)
    x = _fresh()
    np.testing.assert_array_equal(f(x, x), [3, 4, 5, 6])
    np.testing.assert_array_equal(x, [0, 1, 2, 3])
    y = _fresh()
    held = np.asarray(y)  # the caller still reads it through this view
    np.testing.assert_array_equal(f(y, y + 0), [3, 4, 5, 6])
    np.testing.assert_array_equal(held, [0, 1, 2, 3])
    assert not y.is_deleted()


def test_sole_owner_is_donated_and_deleted():
    g = pb.jit(lambda y: y * 10.0, donate_argnums=0)
    x = _fresh(1 << 12)
    before = _ptr(x)
    out = g(x)
    assert _ptr(out) == before  # the buffer was reused
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match="deleted"):
        x + 1
    np.testing.assert_array_equal(out, np.arange(1 << 12, dtype=np.float32) * 10)


def test_numpy_argument_is_never_donated():
    g = pb.jit(lambda y: y * 10.0, donate_argnums=0)
    a = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(g(a), [0, 10, 20, 30])
    np.testing.assert_array_equal(a, [0, 1, 2, 3])


def test_donation_with_a_value_returned_twice_compiles():
    f = pb.jit(lambda x, y: (jnp.sin(x) + y, jnp.sin(x) + y), donate_argnums=(0, 1))
    a, b = _fresh(), jnp.ones(4) + 0
    want = np.sin(np.arange(4, dtype=np.float32)) + 1
    r1, r2 = f(a, b)
    np.testing.assert_allclose(r1, want, rtol=1e-6)
    np.testing.assert_allclose(r2, want, rtol=1e-6)


def test_lowered_compile_call_donates_safely():
    f = pb.jit(lambda y: y + 1.0, donate_argnums=0)
    x = _fresh()
    c = f.lower(x).compile()
    v = x.reshape(2, 2)  # a view keeps the buffer visible: not taken
    np.testing.assert_array_equal(c(x), [1, 2, 3, 4])
    np.testing.assert_array_equal(v, [[0, 1], [2, 3]])


def test_threads_calling_one_donating_function(concurrently):
    g = pb.jit(lambda y: y * 2.0 + 1.0, donate_argnums=0)
    outs = concurrently(lambda: np.asarray(g(_fresh(1 << 14))), threads=4, times=5)
    want = np.arange(1 << 14, dtype=np.float32) * 2 + 1
    for o in outs:
        np.testing.assert_array_equal(o, want)
