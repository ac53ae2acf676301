"""Compiled loops whose small bodies run through a plan (csrc/loops.c): every pointer resolved
once per loop, one-element steps of common ops inline. Results are JAX's (hard-coded), for
large trip counts, empty and negative ranges, wrapping integers, NaN comparisons, moving
slices and loops inside loops."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax


def fori(lo, hi, body, init):
    return pb.jit(lambda lo, hi: lax.fori_loop(lo, hi, body, init))(lo, hi)


def test_a_scalar_while_loop_counts_tens_of_millions_of_iterations():
    f = pb.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + 1, jnp.int32(0)))
    assert "while" in f.lower(np.int32(3)).compile().as_text()
    assert int(f(np.int32(30_000_000))) == 30_000_000
    assert int(f(np.int32(0))) == 0
    assert int(f(np.int32(-7))) == 0


def test_traced_bounds_negative_empty_and_at_the_int32_limit():
    add_i = lambda i, c: c + i  # noqa: E731
    assert int(fori(np.int32(-5), np.int32(5), add_i, jnp.int32(0))) == -5
    assert int(fori(np.int32(5), np.int32(-3), add_i, jnp.int32(7))) == 7  # no iteration
    assert int(fori(np.int32(4), np.int32(4), add_i, jnp.int32(7))) == 7
    # the counter reaches 2**31 - 1 without wrapping; the sum wraps: (2**31 - 3) + (2**31 - 2)
    assert int(fori(np.int32(2**31 - 3), np.int32(2**31 - 1), add_i, jnp.int32(0))) == -5


def test_static_bounds_run_as_a_scan():
    add_i = lambda i, c: c + i.astype(jnp.int32)  # noqa: E731  (i is int64 under x64)
    f = pb.jit(lambda c: (lax.fori_loop(-5, 5, add_i, c), lax.fori_loop(5, -3, add_i, c)))
    assert "scan[length=10]" in f.lower(np.int32(7)).compile().as_text()
    a, b = f(np.int32(7))
    assert (int(a), int(b)) == (2, 7)


def test_integers_wrap_as_in_jax():
    f = pb.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, jnp.int32(0)))
    assert int(f(np.int32(100_000))) == 704982704
    g = pb.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c - jnp.uint32(3), jnp.uint32(5)))
    assert int(g(np.int32(10))) == 4294967271
    h = pb.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c * 3 + 1, jnp.int64(1)))
    assert int(h(np.int32(50))) == -150509089901980243
    lcg = lambda i, c: c * jnp.uint64(6364136223846793005) + jnp.uint64(1442695040888963407)  # noqa: E731
    k = pb.jit(lambda n: lax.fori_loop(0, n, lcg, jnp.uint64(1)))
    assert int(k(np.int32(1000))) == 17660865281050590889


def test_float_loops_round_every_step_in_their_dtype():
    f = pb.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + 0.1, jnp.float32(0)))
    assert float(f(np.int32(10**6))) == 100958.34375
    g = pb.jit(lambda c: lax.while_loop(lambda c: c < 1e6, lambda c: c * 1.5 + 1, c))
    assert float(g(np.float32(1))) == 1294317.75
    h = pb.jit(lambda c: lax.while_loop(lambda c: c[0] <= 2.0**60,
                                        lambda c: (c[0] * 1.7, c[1] + 1), c))
    x, n = h((np.float64(1), np.int32(0)))
    assert (float(x), int(n)) == (1.604962127962662e+18, 79)


def test_comparisons_of_scan_slices_with_nan_and_infinities():
    xs = np.array([1, np.nan, -np.inf, 0.5, np.inf, 2.0], np.float32)

    def body(c, x):
        return c + 0.25, (x < c, x <= c, x > c, x >= c, x == c, x != c, x == x, x != x)
    ys = pb.jit(lambda xs: lax.scan(body, jnp.float32(0.5), xs))(xs)[1]
    want = [[0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 0, 0], [1, 0, 0, 0, 1, 1], [1, 0, 0, 0, 1, 1],
            [0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1], [1, 0, 1, 1, 1, 1], [0, 1, 0, 0, 0, 0]]
    assert [np.asarray(y).astype(int).tolist() for y in ys] == want


@pytest.mark.parametrize("reverse", [False, True])
def test_scalar_slices_move_with_the_iteration(reverse):
    xs = (np.arange(100_000, dtype=np.int64) * 40_000 % 2**31).astype(np.int32)
    f = pb.jit(lambda xs: lax.scan(lambda c, x: (c + x, c), jnp.int32(3), xs, reverse=reverse))
    c, ys = f(xs)
    order = xs[::-1] if reverse else xs
    sums = np.cumsum(np.concatenate([[3], order]).astype(np.int32), dtype=np.int32)  # wraps
    want = sums[:-1][::-1] if reverse else sums[:-1]
    assert int(c) == int(sums[-1])
    np.testing.assert_array_equal(np.asarray(ys), want)


def test_a_while_loop_inside_a_scan_reads_the_outer_slice():
    def collatz(c, x):
        def step(s):
            return jnp.where(s[0] % 2 == 0, s[0] // 2, 3 * s[0] + 1), s[1] + 1
        n = lax.while_loop(lambda s: s[0] != 1, step, (x, jnp.int32(0)))[1]
        return c + n, n
    total, ns = pb.jit(lambda xs: lax.scan(collatz, jnp.int32(0), xs))(
        np.arange(1, 21, dtype=np.int32))
    assert int(total) == 196
    assert np.asarray(ns).tolist() == [0, 1, 7, 2, 5, 8, 16, 3, 19, 6, 14, 9, 9, 17, 17, 4, 12,
                                       20, 20, 7]


def test_nested_scans_with_scalar_bodies():
    # the inner plan is made anew for each outer iteration, at that iteration's slices
    xss = np.arange(12, dtype=np.int32).reshape(3, 4)
    f = pb.jit(lambda xss: lax.scan(
        lambda c, xs: lax.scan(lambda d, x: (d * 2 + x, d), c, xs), jnp.int32(1), xss))
    c, ys = f(xss)
    want, d = [], 1
    for x in xss.ravel():
        want.append(d)
        d = d * 2 + int(x)
    assert int(c) == d
    assert np.asarray(ys).ravel().tolist() == want


@pytest.mark.parametrize("traced", [False, True])
def test_small_vector_carries_equal_eager(traced):
    c0 = np.linspace(-1, 1, 16).astype(np.float32)
    body = lambda i, c: c * 0.99 + jnp.sin(c) * 0.5 + i.astype(jnp.float32) * 1e-4  # noqa: E731
    if traced:
        f = lambda n, c: lax.fori_loop(0, n, body, c)  # noqa: E731
        args = (np.int32(1000), c0)
    else:
        f = lambda c: lax.fori_loop(0, 1000, body, c)  # noqa: E731
        args = (c0,)
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(*args)), np.asarray(f(*args)))


def test_empty_carries_and_bodies_of_empty_regions():
    f = pb.jit(lambda n: lax.fori_loop(0, n, lambda i, c: (c[0] + 1, c[1] * 2),
                                       (jnp.int32(0), jnp.zeros((0, 3), jnp.float32))))
    n, e = f(np.int32(1000))
    assert int(n) == 1000 and np.asarray(e).shape == (0, 3)
