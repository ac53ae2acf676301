"""Batching rules of the Threefry primitives and derivatives of random_uniform_range.

The key-level primitives have integer results, hence no derivatives; under vmap a batch of keys
is more key dimensions, and the counters depend only on the position within the drawn shape,
so vmapping pullback.random over keys must equal a loop bit for bit. random_uniform_range is
differentiable: u * (maxval - minval) + minval where above minval, else minval.
"""
import numpy as np
import pytest

import pullback as pb
from pullback import lax, random
from pullback.lax._random_bits import (random_bits, random_fold_in, random_seed, random_split,
                                       random_uniform_range, threefry2x32)
from pullback.test_util import check_grads, check_vmap, check_vmap_exact
from pullback.tracer import dtypes

U32 = np.uint32
RNG = np.random.default_rng(0)


def key_data(*shape):
    """Distinct raw keys of batch shape ``shape``."""
    return RNG.integers(0, 2 ** 32, shape + (2,), dtype=U32)


def assert_bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                  np.ascontiguousarray(want).view(np.uint8))


# ---- pullback.random vmapped over keys: bit for bit a loop ----

SAMPLERS = {
    "uniform f32": lambda k: random.uniform(k, (2, 3)),
    "uniform f64 ranged": lambda k: random.uniform(k, (4,), np.float64, -2.0, 3.0),
    "uniform f16": lambda k: random.uniform(k, (3,), np.float16, 1.0, 2.0),
    "uniform bf16": lambda k: random.uniform(k, (), dtypes.bfloat16),
    "normal f32": lambda k: random.normal(k, (3,)),
    "normal f64": lambda k: random.normal(k, (2, 2), np.float64),
    "normal c64": lambda k: random.normal(k, (2,), np.complex64),
    "split": lambda k: random.split(k),
    "split shape": lambda k: random.split(k, (2, 3)),
    "bits": lambda k: random.bits(k, (5,), np.uint16),
    "fold_in": lambda k: random.fold_in(k, 7),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_vmap_over_raw_keys_equals_a_loop(name):
    f = SAMPLERS[name]
    keys = key_data(4)
    want = np.stack([np.asarray(f(k)) for k in keys])
    assert_bits_equal(pb.vmap(f)(keys), want)
    # keys batched along their last axis (key words first): the rule moves the batch dim
    assert_bits_equal(pb.vmap(f, in_axes=1)(np.ascontiguousarray(keys.T)), want)
    assert_bits_equal(pb.vmap(f, in_axes=1)(keys.T), want)  # a transposed view
    # nested: a (2, 4) grid of keys
    grid = key_data(2, 4)
    want = np.stack([np.stack([np.asarray(f(k)) for k in row]) for row in grid])
    assert_bits_equal(pb.vmap(pb.vmap(f))(grid), want)


@pytest.mark.parametrize("name", ["uniform f32", "normal f64", "split", "fold_in"])
def test_vmap_over_typed_keys_equals_a_loop(name):
    f = SAMPLERS[name]
    keys = random.split(random.key(3), 5)
    got = pb.vmap(f)(keys)
    want = [f(keys[i]) for i in range(5)]
    if isinstance(got, random.PRNGKeyArray):
        got, want = random.key_data(got), [random.key_data(w) for w in want]
    assert_bits_equal(got, np.stack([np.asarray(w) for w in want]))


def test_vmap_over_keys_and_bounds_and_under_jit():
    keys = key_data(3)
    lo, hi = np.array([0.0, -1.0, 5.0], np.float32), np.array([1.0, 1.0, 5.5], np.float32)

    def f(k, a, b):
        return random.uniform(k, (4,), minval=a, maxval=b)

    want = np.stack([np.asarray(f(k, a, b)) for k, a, b in zip(keys, lo, hi)])
    assert_bits_equal(pb.vmap(f)(keys, lo, hi), want)
    assert_bits_equal(pb.jit(pb.vmap(f))(keys, lo, hi), want)
    assert_bits_equal(pb.vmap(pb.jit(f))(keys, lo, hi), want)
    # one key, bounds mapped
    want = np.stack([np.asarray(f(keys[0], a, b)) for a, b in zip(lo, hi)])
    assert_bits_equal(pb.vmap(f, in_axes=(None, 0, 0))(keys[0], lo, hi), want)


def test_vmap_of_fold_in_over_data():
    key = key_data()
    data = np.array([0, 1, 2 ** 31, 7], U32)
    want = np.stack([np.asarray(random.fold_in(key, d)) for d in data])
    assert_bits_equal(pb.vmap(random.fold_in, in_axes=(None, 0))(key, data), want)
    keys = key_data(4)
    want = np.stack([np.asarray(random.fold_in(k, d)) for k, d in zip(keys, data)])
    assert_bits_equal(pb.vmap(random.fold_in)(keys, data), want)


# ---- the primitives' batching rules, every batch position ----

def moved(x, ax):
    return np.moveaxis(x, 0, ax)


@pytest.mark.parametrize("bit_width", [8, 32, 64])
def test_vmap_random_bits_and_split_in_every_position(bit_width):
    keys = key_data(3, 2)  # lanes of 3, each a batch of 2 keys
    for ax in range(3):  # ax == 2: the lane axis sits after the key batch, before the words
        check_vmap_exact(lambda k: random_bits(k, bit_width, (2, 3)), (moved(keys, ax),), (ax,))
        check_vmap_exact(lambda k: random_split(k, (3,)), (moved(keys, ax),), (ax,))
    keys = key_data(3)  # single keys per lane, lane axis first or last
    for ax in range(2):
        check_vmap_exact(lambda k: random_bits(k, bit_width, ()), (moved(keys, ax),), (ax,))
        check_vmap_exact(lambda k: random_split(k, (0,)), (moved(keys, ax),), (ax,))


def test_vmap_random_fold_in_with_keys_and_messages_mapped_or_not():
    keys, msgs = key_data(3, 2), RNG.integers(0, 2 ** 32, (3, 2), dtype=U32)
    one_key, one_msg = key_data(2), U32(9)
    for ax in range(3):
        check_vmap_exact(random_fold_in, (moved(keys, ax), one_msg), (ax, None))
        check_vmap_exact(random_fold_in, (moved(keys, ax), msgs[0]), (ax, None))
        check_vmap_exact(random_fold_in, (moved(keys, ax), msgs[:, :1]), (ax, 0))
    for ax in range(2):
        check_vmap_exact(random_fold_in, (moved(keys, ax), moved(msgs, ax)), (ax, ax))
        check_vmap_exact(random_fold_in, (one_key, moved(msgs, ax)), (None, ax))
    # a 0-d message per lane, for keys with and without a batch of their own
    check_vmap_exact(random_fold_in, (keys, msgs[:, 0]), (0, 0))
    check_vmap_exact(random_fold_in, (keys[0], msgs[:, 0]), (None, 0))
    check_vmap_exact(random_fold_in, (key_data(3).T, msgs[:, 0]), (1, 0))


def test_vmap_random_seed_and_threefry():
    seeds = RNG.integers(-2 ** 63, 2 ** 63, (3, 2, 2), dtype=np.int64)
    for ax in range(3):
        check_vmap_exact(random_seed, (moved(seeds, ax),), (ax,))
    check_vmap_exact(random_seed, (seeds[:, 0, 0].astype(np.uint16),), (0,))
    words = RNG.integers(0, 2 ** 32, (4, 3, 2, 1), dtype=U32)
    row = RNG.integers(0, 2 ** 32, (3, 1, 4), dtype=U32)
    scalar = RNG.integers(0, 2 ** 32, (3,), dtype=U32)
    cases = [  # (args, in_axes): 0-d, ranked and size-1-broadcast operands, mapped or not
        ((words[0], words[1], words[2], words[3]), (0, 0, 0, 0)),
        ((words[0], scalar, row, U32(5)), (0, 0, 0, None)),
        ((words[0, 0], moved(words[1], 1), U32(3), scalar), (None, 1, None, 0)),
        ((scalar, scalar[::-1], U32(1), U32(2)), (0, 0, None, None)),
        ((words[0, 0], row[0], moved(words[2], 2), scalar), (None, None, 2, 0)),
    ]
    for args, axes in cases:
        check_vmap_exact(threefry2x32, args, axes)


def test_vmap_checks_each_examples_keys():
    # a batch of two uint32 scalars is not a batch of keys, although its shape ends in 2
    with pytest.raises(TypeError, match=r"random_bits: argument 'keys' must be threefry key "
                                        r"data of shape \(\.\.\., 2\), got shape \(\)"):
        pb.vmap(lambda k: random_bits(k, 32, (3,)))(np.zeros(2, U32))


# ---- random_uniform_range ----

def unit(shape, dtype=np.float64):
    return RNG.uniform(0.05, 0.95, shape).astype(dtype)


@pytest.mark.parametrize("shape,bound_shape", [((), ()), ((3,), ()), ((2, 2), (2, 2))], ids=str)
def test_check_grads_uniform_range_order_2(shape, bound_shape):
    u = unit(shape)
    lo, hi = RNG.normal(size=bound_shape) - 2, RNG.normal(size=bound_shape) + 2
    check_grads(random_uniform_range, (u, lo, hi), order=2)
    check_grads(lambda a, b: random_uniform_range(u, a, b), (lo, hi), order=2)


def test_check_grads_uniform_range_float32():
    u = unit((3,), np.float32)
    lo, hi = np.float32(-1.5), np.array([2.0, 3.0, 4.0], np.float32)
    check_grads(random_uniform_range, (u, lo, hi), order=2, atol=5e-2, rtol=5e-2)


def test_uniform_range_tangents_and_the_clamped_case():
    u = np.array([0.0, 0.25, 0.5])
    lo, hi = np.array([1.0, 1.0, 4.0]), np.array([3.0, 2.0, 2.0])  # lane 2: maxval < minval
    tu, tl, th = np.array([1.0, 1.0, 1.0]), np.array([0.5, 2.0, 3.0]), np.array([-1.0, 4.0, 5.0])
    out, t = pb.jvp(random_uniform_range, (u, lo, hi), (tu, tl, th))
    np.testing.assert_array_equal(np.asarray(out), [1.0, 1.25, 4.0])
    # maxval >= minval: (hi - lo) * tu + (1 - u) * tl + u * th (at u = 0 too, the derivative
    # from above); maxval < minval: every u > 0 is clamped to minval, so the tangent is tl
    np.testing.assert_allclose(np.asarray(t), [2.0 + 0.5 - 0.0, 1.0 + 1.5 + 1.0, 3.0])


def test_grad_of_random_uniform_wrt_its_bounds():
    key = random.PRNGKey(11)
    units = np.asarray(random.uniform(key, (5,), np.float64))

    def f(a, b):
        return random.uniform(key, (5,), np.float64, a, b).sum()

    a, b = np.float64(-1.0), np.float64(2.0)
    ga, gb = pb.grad(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose([float(ga), float(gb)], [np.sum(1 - units), np.sum(units)],
                               rtol=1e-14)
    jga, jgb = pb.jit(pb.grad(f, argnums=(0, 1)))(a, b)
    assert (float(jga), float(jgb)) == (float(ga), float(gb))
    # per-key gradients under vmap equal a loop
    keys = key_data(3)

    def g(k, b):
        return random.uniform(k, (4,), np.float64, 0.0, b).sum()

    got = pb.vmap(pb.grad(g, argnums=1), in_axes=(0, None))(keys, b)
    want = [float(pb.grad(g, argnums=1)(k, b)) for k in keys]
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, dtypes.bfloat16])
def test_check_vmap_uniform_range(dtype):
    u = unit((3,), dtype)
    lo, hi = np.asarray(-1.0, dtype), np.asarray([2.0, 3.0, 4.0], dtype)
    check_vmap(random_uniform_range, (u, lo, hi), atol=1e-2, rtol=1e-2)
    scalars = (unit((), dtype), np.asarray(0.5, dtype), np.asarray(2.0, dtype))
    check_vmap(random_uniform_range, scalars)
    # exactness: the batched kernel rounds each lane as the single one does
    us, los = unit((3, 4), dtype), (RNG.normal(size=(3,)) - 2).astype(dtype)
    check_vmap_exact(random_uniform_range, (us, los, hi[0]), (0, 0, None))
    check_vmap_exact(random_uniform_range, (us[0], los, np.asarray(hi[:1].repeat(4), dtype)),
                     (None, 0, None))
    check_vmap_exact(random_uniform_range, (us.T, lo, np.ones((4, 3), dtype)), (1, None, 1))


def test_uniform_range_vmap_checks_each_example():
    with pytest.raises(TypeError, match="random_uniform_range: argument 'minval' must have the "
                                        r"shape of 'u' \(\) or be 0-d, got \(2,\)"):
        pb.vmap(random_uniform_range, in_axes=(0, 0, None))(
            np.zeros(3), np.zeros((3, 2)), np.float64(1.0))


def test_random_bits_results_carry_no_derivative():
    out, t = pb.jvp(lambda lo: random.uniform(random.PRNGKey(0), (2,), np.float64, lo, 2.0),
                    (0.5,), (1.0,))
    assert np.shape(t) == (2,)
    bits, tb = pb.jvp(lambda x: random_bits(lax.convert_element_type(x, U32).reshape(2), 32, ()),
                      (np.array([1.0, 2.0]),), (np.ones(2),))
    assert np.asarray(tb).dtype == dtypes.float0
