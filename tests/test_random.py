"""pullback.random and the Threefry-2x32 primitives.

Expected values are pinned literals generated once from real JAX 0.10.2 (jax_threefry_
partitionable=True, its default since 0.5): PINS_X32 in JAX's default 32-bit mode, PINS_X64
with jax_enable_x64 for 64-bit dtypes and seeds (pullback has no x64 switch: 64-bit inputs
and dtypes behave as JAX's x64 mode, Python scalars as its 32-bit mode). Tests never import
JAX. Integer, bits, boolean, index and uniform outputs must match exactly (uniform's scaling
is rounded as XLA's CPU backend rounds it: see random_uniform_range). Float samplers that go
through transcendental functions are compared within a stated number of ulps, because XLA's
functions are approximations that pullback's kernels need not reproduce bit for bit:
- log / log1p (exponential, gumbel): XLA is within 1-2 ulps of correctly rounded: 4 ulps.
- erf_inv (normal, truncated_normal): XLA's is a polynomial (Giles) measured up to 91 ulps
  (float32) and 4011 ulps (float64) away from a correctly rounded erf_inv over 2M / 300k
  samples: 128 and 8192 ulps; half types are evaluated in float32 and rounded: 2 ulps. A
  pullback erf_inv that follows XLA's polynomial would match to the last bit or two; the
  construction itself (sqrt(2) * erf_inv(uniform)) is checked exactly.

The Threefry known answers are Random123's published threefry2x32 (20 rounds) vectors
(tests/kat_vectors of Random123): counter, key -> output.
"""
import hashlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pullback
from pullback import lax, random
from pullback.lax._random_bits import (random_bits, random_fold_in, random_seed, random_split,
                                       random_uniform_range, threefry2x32)
from pullback.primitives.random_bits import threefry2x32_reference
from pullback.tracer.array import Array

# The pins come from JAX's default (32-bit) mode, PINS_X64 from its x64 mode: the tests run in
# the default mode and compute each x64 pin's value with x64 enabled.
pytestmark = pytest.mark.x32


def x64(compute):
    with pullback.enable_x64():
        return compute()

U32 = np.uint32
KEYS = {"k0": np.array([0, 0], U32), "k42": np.array([0, 42], U32),
        "kr": np.array([0x12345678, 0x9ABCDEF0], U32)}


# ---- helpers ----

def on_reference(f, *args, **kwargs):
    pullback.config.update("backend", "reference")
    try:
        return f(*args, **kwargs)
    finally:
        pullback.config.update("backend", "cpu")


def _ordered(bits: np.ndarray, nbits: int) -> np.ndarray:
    """Float bit patterns mapped to integers whose order is the floats' order."""
    b = bits.astype(np.int64) if nbits < 64 else bits.view(np.int64).astype(object)
    sign = 1 << (nbits - 1)
    if nbits < 64:
        return np.where(b & sign, sign - b, b + sign)  # negative floats count downwards
    return np.array([(sign - (x & ((1 << 64) - 1))) if x < 0 else x + sign for x in b.tolist()],
                    dtype=object)


def check_pin(pins: dict, name: str, got, ulps: int = 0) -> None:
    """``got`` equals pin ``name`` exactly (floats: within ``ulps`` units in the last place)."""
    kind, dtype, shape, *data = pins[name]
    got = np.asarray(got)
    want_dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    assert got.dtype == want_dt, (name, got.dtype, dtype)
    assert list(got.shape) == shape, (name, got.shape, shape)
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}.get(got.dtype.itemsize)
    is_float = got.dtype.kind == "f" or got.dtype == ml_dtypes.bfloat16
    raw = got.view(uint) if is_float else got
    if kind == "sha256":
        digest, head = data
        assert hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest() == digest, name
        assert raw.reshape(-1)[:8].tolist() == head, name
        return
    want = np.array(data[0], dtype=raw.dtype).reshape(shape)
    if ulps == 0 or not is_float:
        np.testing.assert_array_equal(raw, want, err_msg=name)
        return
    nbits = 8 * got.dtype.itemsize
    dist = np.abs(_ordered(raw.ravel(), nbits) - _ordered(want.ravel(), nbits))
    assert max(dist.tolist(), default=0) <= ulps, (name, dist.tolist())


def threefry_python(key: tuple[int, int], ctr: tuple[int, int]) -> tuple[int, int]:
    """An independent scalar Threefry-2x32-20 on Python ints (Random123's description)."""
    m = 0xFFFFFFFF
    ks = [key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDA]
    x = [(ctr[0] + ks[0]) & m, (ctr[1] + ks[1]) & m]
    rot = [13, 15, 26, 6, 17, 29, 16, 24]
    for r in range(20):
        x[0] = (x[0] + x[1]) & m
        x[1] = ((x[1] << rot[r % 8]) | (x[1] >> (32 - rot[r % 8]))) & m
        x[1] ^= x[0]
        if r % 4 == 3:
            s = r // 4 + 1
            x[0] = (x[0] + ks[s % 3]) & m
            x[1] = (x[1] + ks[(s + 1) % 3] + s) & m
    return x[0], x[1]


def layouts(a: np.ndarray) -> dict:
    """``a``'s values in several memory layouts (wrapped without copying)."""
    out = {"contiguous": a}
    if a.ndim:
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        wide[..., ::2] = a
        out["strided"] = wide[..., ::2]
        out["flipped"] = np.ascontiguousarray(a[::-1])[::-1]
        out["transposed"] = np.ascontiguousarray(a.T).T
    if a.size and a.ndim and (a == a.reshape(-1)[0]).all():
        out["broadcast"] = np.broadcast_to(a.reshape(-1)[:1].reshape((1,) * a.ndim), a.shape)
    return out


# ---- the Threefry primitive ----

KNOWN_ANSWERS = [  # (counter, key, output), Random123 kat_vectors, threefry2x32 20 rounds
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("ctr,key,out", KNOWN_ANSWERS)
def test_threefry_known_answers(ctr, key, out):
    args = [np.array(v, U32) for v in (*key, *ctr)]
    for f in (threefry2x32, pullback.jit(threefry2x32),
              lambda *a: on_reference(threefry2x32, *a)):
        y0, y1 = f(*args)
        assert (int(y0), int(y1)) == out
    assert threefry_python(key, ctr) == out
    assert tuple(int(v) for v in threefry2x32_reference(*args)) == out


def test_threefry_vectors_of_known_answers_in_every_layout():
    ctr = np.array([c for c, _, _ in KNOWN_ANSWERS], U32)
    key = np.array([k for _, k, _ in KNOWN_ANSWERS], U32)
    want = np.array([o for _, _, o in KNOWN_ANSWERS], U32)
    for name, c in layouts(np.ascontiguousarray(ctr.T)).items():
        y0, y1 = threefry2x32(Array(key[:, 0]), Array(key[:, 1]), Array(c[0]), Array(c[1]))
        np.testing.assert_array_equal(np.stack([y0, y1], -1), want, err_msg=name)


@st.composite
def _threefry_case(draw):
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    words = st.integers(0, 2 ** 32 - 1)
    arrays = []
    for arg in range(4):
        # key words: scalars or size-1-broadcast along some dims; counters: full shape
        sub = shape if arg >= 2 or not rank or draw(st.booleans()) else \
            tuple(d if draw(st.booleans()) else 1 for d in shape)
        if arg < 2 and draw(st.booleans()):
            sub = ()
        seed = draw(words)
        arrays.append(np.random.default_rng(seed).integers(0, 2 ** 32, sub, dtype=U32))
    layout = draw(st.sampled_from(["contiguous", "strided", "flipped", "transposed"]))
    return arrays, layout


@given(_threefry_case())
def test_threefry_against_reference_and_scalar_python(case):
    arrays, layout = case
    wrapped = [Array(layouts(a).get(layout, a)) for a in arrays]
    y0, y1 = threefry2x32(*wrapped)
    r0, r1 = on_reference(threefry2x32, *wrapped)
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    assert y0.shape == y1.shape == shape and y0.dtype == np.uint32
    np.testing.assert_array_equal(y0, r0)
    np.testing.assert_array_equal(y1, r1)
    b = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    for i in range(min(b[2].size, 6)):
        want = threefry_python((int(b[0][i]), int(b[1][i])), (int(b[2][i]), int(b[3][i])))
        assert (int(np.asarray(y0).reshape(-1)[i]), int(np.asarray(y1).reshape(-1)[i])) == want


def test_threefry_zero_stride_key_and_large_input_use_the_fast_paths():
    x = np.arange(100_003, dtype=U32)
    k0, k1 = np.broadcast_to(U32(7), x.shape), np.broadcast_to(U32(9), x.shape)
    y0, y1 = threefry2x32(Array(k0), Array(k1), Array(x[::-1]), Array(x))
    r0, r1 = threefry2x32_reference(U32(7), U32(9), x[::-1], x)
    np.testing.assert_array_equal(y0, r0)
    np.testing.assert_array_equal(y1, r1)


def test_threefry_under_jit_matches_eager():
    x = np.arange(12, dtype=U32).reshape(3, 4)
    f = pullback.jit(lambda a, b: threefry2x32(U32(3), U32(4), a, b))
    for got, want in zip(f(x, x.T.copy().T), threefry2x32(U32(3), U32(4), x, x)):
        np.testing.assert_array_equal(got, want)


def _kcall(name, ins, outs):
    """A kernel of csrc/random.c through the generic entry (outs: (dtype, shape) pairs)."""
    from pullback.backends.cpu import kernels as k
    return k.call(k.kernel(name), tuple(ins), tuple((np.dtype(d), s) for d, s in outs), b"")


def test_threefry_shape_rule_and_errors():
    u = lambda *s: np.zeros(s, U32)
    assert threefry2x32(u(), u(), u(3), u(3))[0].shape == (3,)
    assert threefry2x32(u(2, 1), u(), u(1, 3), u(2, 3))[1].shape == (2, 3)
    with pytest.raises(TypeError, match="threefry2x32: argument 'x2' has shape .* share one rank"):
        threefry2x32(u(), u(), u(2, 3), u(3))
    with pytest.raises(TypeError, match="threefry2x32: shapes .* cannot be broadcast"):
        threefry2x32(u(), u(), u(2, 3), u(3, 2))
    with pytest.raises(TypeError, match="threefry2x32: argument 'key1' must have dtype uint32, "
                                        "got int32"):
        threefry2x32(np.zeros((), np.int32), u(), u(3), u(3))
    # the kernel itself checks what memory safety needs
    with pytest.raises(TypeError, match="threefry2x32: expected uint32 operands that broadcast"):
        _kcall("threefry2x32", (u(3), u(3), u(3), u(4)), [(U32, (3,))] * 2)
    with pytest.raises(TypeError, match="threefry2x32: expected uint32 operands that broadcast"):
        _kcall("threefry2x32", (u(3), np.zeros(3, np.int64), u(3), u(3)), [(U32, (3,))] * 2)
    with pytest.raises(TypeError, match="threefry2x32: argument 'operand' must be a numpy.ndarray"):
        _kcall("threefry2x32", (u(3), u(3), [1, 2, 3], u(3)), [(U32, (3,))] * 2)


def test_threefry_is_not_differentiable_and_states_why():
    from pullback.tracer.core import NoRule
    for name in ("threefry2x32", "random_bits", "random_split", "random_fold_in", "random_seed"):
        prim = pullback.tracer.core.Primitive.registry[name]
        assert isinstance(prim.jvp, NoRule) and "integer-valued" in prim.jvp.reason


# ---- keys ----

PY_SEEDS = [0, 1, 42, -1, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 2 ** 32 + 5, 2 ** 40 + 3, -2 ** 63]


@pytest.mark.parametrize("seed", PY_SEEDS)
def test_PRNGKey_of_python_ints_truncates_to_int32_as_jax_default(seed):
    k = random.PRNGKey(seed)
    check_pin(PINS_X32, f"PRNGKey({seed})", k)
    np.testing.assert_array_equal(random.key_data(random.key(seed)), k)


@pytest.mark.parametrize("name,seed", [
    ("PRNGKey(np.uint8(200))", np.uint8(200)), ("PRNGKey(np.int8(-2))", np.int8(-2)),
    ("PRNGKey(np.uint32(4294967295))", np.uint32(2 ** 32 - 1))])
def test_PRNGKey_of_narrow_numpy_seeds(name, seed):
    check_pin(PINS_X32, name, random.PRNGKey(seed))
    check_pin(PINS_X32, name, random.PRNGKey(np.asarray(seed)))


@pytest.mark.parametrize("name,seed", [
    ("PRNGKey(np.int64(1099511627779))", np.int64(2 ** 40 + 3)),
    ("PRNGKey(np.int64(-1))", np.int64(-1)),
    ("PRNGKey(np.int64(9223372036854775807))", np.int64(2 ** 63 - 1)),
    ("PRNGKey(np.uint64(18446744073709551615))", np.uint64(2 ** 64 - 1))])
def test_PRNGKey_of_64_bit_seeds_keeps_the_high_word_as_jax_x64(name, seed):
    check_pin(PINS_X64, name, x64(lambda: random.PRNGKey(seed)))


def test_key_derivation_under_jit_with_traced_seed():
    f = pullback.jit(lambda s: random.split(random.PRNGKey(s), 3))
    check_pin(PINS_X32, "split(k42,3)", f(np.int32(42)))
    g = pullback.jit(lambda s: random.key_data(random.key(s)))
    check_pin(PINS_X32, "PRNGKey(-1)", g(np.int32(-1)))
    check_pin(PINS_X64, "PRNGKey(np.int64(-1))", x64(lambda: g(np.int64(-1))))


def test_seed_errors():
    with pytest.raises(TypeError, match="PRNGKey: argument 'seed' must be an integer, got dtype "
                                        "float32"):
        random.PRNGKey(np.float32(1.5))
    with pytest.raises(TypeError, match="key: argument 'seed' must be an integer, got float"):
        random.key(1.5)
    with pytest.raises(TypeError, match="PRNGKey accepts a scalar seed, but was given an array "
                                        r"of shape \(2,\)"):
        random.PRNGKey(np.arange(2))
    with pytest.raises(TypeError, match="key accepts a scalar seed, but was given a PRNG key"):
        random.key(random.key(0))
    with pytest.raises(OverflowError, match="PRNGKey: seed .* 64-bit"):
        random.PRNGKey(2 ** 64)
    with pytest.raises(ValueError, match="key: argument 'impl': the PRNG implementation \"rbg\" "
                                         "is not supported on this backend"):
        random.key(0, impl="rbg")
    with pytest.raises(TypeError, match="random_seed: argument 'seeds' must be an integer"):
        random_seed(np.zeros(2, np.float32))


@pytest.mark.parametrize("kn", sorted(KEYS))
@pytest.mark.parametrize("num", [1, 2, 3, (2, 3)])
def test_split_matches_jax(kn, num):
    check_pin(PINS_X32, f"split({kn},{num})", random.split(KEYS[kn], num))
    typed = random.split(random.wrap_key_data(KEYS[kn]), num)
    assert isinstance(typed, random.PRNGKeyArray)
    assert typed.shape == ((num,) if isinstance(num, int) else num)
    check_pin(PINS_X32, f"split({kn},{num})", random.key_data(typed))


def test_split_chains_and_typed_split_shapes():
    k = random.split(KEYS["k42"])
    check_pin(PINS_X32, "split(split(k42)[1],4)", random.split(Array(np.asarray(k)[1]), 4))
    typed = random.split(random.split(random.key(42))[1], 4)
    check_pin(PINS_X32, "split(split(k42)[1],4)", random.key_data(typed))
    check_pin(PINS_X32, "key_data(split(key(7),(2,2)))",
              random.key_data(random.split(random.key(7), (2, 2))))
    assert random.split(KEYS["k0"], 0).shape == (0, 2)


@pytest.mark.parametrize("kn", sorted(KEYS))
@pytest.mark.parametrize("data", [0, 1, 7, 2 ** 32 - 1])
def test_fold_in_matches_jax(kn, data):
    name = f"fold_in({kn},{data})"
    check_pin(PINS_X32, name, random.fold_in(KEYS[kn], data))
    check_pin(PINS_X32, name, random.fold_in(KEYS[kn], np.uint32(data)))
    check_pin(PINS_X32, name, random.key_data(random.fold_in(random.wrap_key_data(KEYS[kn]),
                                                             data)))
    # fold_in(k, i) is split(k, n)[i]
    if data < 3:
        np.testing.assert_array_equal(random.fold_in(KEYS[kn], data),
                                      np.asarray(random.split(KEYS[kn], 3))[data])


def test_fold_in_wraps_integer_arrays_and_rejects_bad_data():
    for kn in KEYS:
        check_pin(PINS_X32, f"fold_in({kn},int32(-1))", random.fold_in(KEYS[kn], np.int32(-1)))
        check_pin(PINS_X32, f"fold_in({kn},int32(-1))",
                  pullback.jit(random.fold_in)(KEYS[kn], np.uint32(2 ** 32 - 1)))
    with pytest.raises(OverflowError, match="fold_in: Python integer -1 out of bounds for uint32"):
        random.fold_in(KEYS["k0"], -1)
    with pytest.raises(TypeError, match="fold_in accepts a scalar, but was given an array of "
                                        r"shape \(2,\)"):
        random.fold_in(KEYS["k0"], np.arange(2))


@pytest.mark.parametrize("kn", sorted(KEYS))
@pytest.mark.parametrize("shape", [(), (5,), (2, 3)])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32"])
def test_bits_match_jax(kn, shape, dtype):
    name = f"bits({kn},{shape},{dtype})"
    check_pin(PINS_X32, name, random.bits(KEYS[kn], shape, dtype))
    check_pin(PINS_X32, name, random.bits(random.wrap_key_data(KEYS[kn]), shape, np.dtype(dtype)))
    check_pin(PINS_X32, name, on_reference(random.bits, KEYS[kn], shape, dtype))


@pytest.mark.parametrize("kn", sorted(KEYS))
def test_bits_uint64_match_jax_x64(kn):
    name = f"bits({kn},(2,3),uint64)"
    check_pin(PINS_X64, name, x64(lambda: random.bits(KEYS[kn], (2, 3), np.uint64)))
    check_pin(PINS_X64, name, x64(lambda: on_reference(random.bits, KEYS[kn], (2, 3), np.uint64)))


def test_bits_default_dtype_large_and_empty():
    check_pin(PINS_X32, "bits(k0,(1000,),uint32)", random.bits(KEYS["k0"], (1000,)))
    b = random.bits(KEYS["k0"], (1000,))
    assert random.bits(KEYS["k0"], (0, 3)).shape == (0, 3)
    # partitionable counters: a reshape of the same draw is the same bits
    np.testing.assert_array_equal(random.bits(KEYS["k0"], (10, 100)), np.reshape(b, (10, 100)))


def test_bits_split_and_fold_in_under_jit_and_make_jaxpr():
    def f(key):
        k = random.fold_in(key, 7)
        return random.bits(k, (5,), np.uint16), random.split(random.fold_in(k, 3), (2, 2))
    for key in (KEYS["kr"], random.wrap_key_data(KEYS["kr"])):
        eager, jitted = f(key), pullback.jit(f)(key)
        np.testing.assert_array_equal(jitted[0], eager[0])
        np.testing.assert_array_equal(random.key_data(jitted[1]), random.key_data(eager[1]))
        assert type(jitted[1]) is type(eager[1])
    text = str(pullback.make_jaxpr(lambda k: random.bits(k, (3,)))(KEYS["k0"]))
    assert "random_bits[bit_width=32 shape=(3,)]" in text
    text = str(pullback.make_jaxpr(lambda k: random.split(k))(random.key(0)))
    assert "random_split[shape=(2,)]" in text


def test_typed_keys_unpack_eagerly():
    k1, k2 = random.split(random.key(42))
    check_pin(PINS_X32, "split(split(k42)[1],4)", random.key_data(random.split(k2, 4)))


@pytest.mark.skipif(not hasattr(pullback.tracer.core.Tracer, "__getitem__"),
                    reason="needs indexing of traced values (merged later)")
def test_typed_keys_unpack_under_jit():
    f = pullback.jit(lambda key: random.split(random.split(key)[1], 4))
    check_pin(PINS_X32, "split(split(k42)[1],4)", random.key_data(f(random.key(42))))
    check_pin(PINS_X32, "split(split(k42)[1],4)", f(KEYS["k42"]))


def test_bits_errors():
    with pytest.raises(ValueError, match="dtype argument to `bits` must be an unsigned int "
                                         "dtype, got int32"):
        random.bits(KEYS["k0"], (2,), np.int32)
    # JAX takes an integer shape as (n,), and rejects a float one
    assert random.bits(KEYS["k0"], 3).shape == (3,)
    with pytest.raises(TypeError, match="bits: argument 'shape' must be a sequence"):
        random.bits(KEYS["k0"], 3.0)
    with pytest.raises(TypeError, match="bits: argument 'shape' must have non-negative"):
        random.bits(KEYS["k0"], (-1,))
    with pytest.raises(TypeError, match="random_bits: argument 'bit_width' must be 8, 16, 32 or "
                                        "64, got 12"):
        random_bits(KEYS["k0"], 12, (2,))


# ---- the key-level primitives over batches of keys, layouts and backends ----

@given(st.lists(st.integers(0, 3), min_size=0, max_size=3), st.integers(0, 2 ** 32 - 1),
       st.sampled_from(["contiguous", "strided", "flipped", "transposed"]))
def test_key_primitives_over_batched_keys_in_every_layout(batch, seed, layout):
    data = np.random.default_rng(seed).integers(0, 2 ** 32, tuple(batch) + (2,), dtype=U32)
    keys = Array(layouts(data)[layout])
    msgs = np.random.default_rng(seed + 1).integers(0, 2 ** 32, tuple(batch), dtype=U32)
    cases = [(random_bits, (keys, 32, (2, 3))), (random_bits, (keys, 8, (3,))),
             (random_bits, (keys, 64, (2,))), (random_split, (keys, (3,))),
             (random_fold_in, (keys, Array(layouts(msgs)[layout] if msgs.ndim else msgs)))]
    for f, args in cases:
        got = np.asarray(f(*args))
        np.testing.assert_array_equal(got, on_reference(f, *args))
        for b in np.ndindex(*batch):  # each key alone gives its block of the batched result
            single = [Array(np.ascontiguousarray(data[b]))] + list(args[1:])
            if f is random_fold_in:
                single[1] = msgs[b]
            np.testing.assert_array_equal(got[b], f(*single))


@pytest.mark.x64
def test_fold_in_primitive_broadcasts_messages_and_seed_primitive_batches():
    keys = np.stack([KEYS["k0"], KEYS["k42"]])
    np.testing.assert_array_equal(random_fold_in(keys, U32(7)),
                                  np.stack([random.fold_in(k, 7) for k in KEYS.values()][:2]))
    with pytest.raises(TypeError, match="random_fold_in: argument 'msgs' has shape \\(3,\\)"):
        random_fold_in(keys, np.zeros(3, U32))
    seeds = np.array([[0, -1], [2 ** 40, 5]], np.int64)
    got = random_seed(seeds)
    assert got.shape == (2, 2, 2)
    np.testing.assert_array_equal(got, on_reference(random_seed, seeds))
    np.testing.assert_array_equal(np.asarray(got)[1, 0], [256, 0])
    np.testing.assert_array_equal(random_seed(np.broadcast_to(np.int16(-3), (3,))),
                                  [[0, 2 ** 32 - 3]] * 3)


def test_key_primitive_shape_errors():
    with pytest.raises(TypeError, match=r"random_split: argument 'keys' must be threefry key data "
                                        r"of shape \(\.\.\., 2\), got shape \(3,\)"):
        random_split(np.zeros(3, U32), (2,))
    with pytest.raises(TypeError, match="random_bits: argument 'keys' must be threefry key data "
                                        "of dtype uint32, got int32"):
        random_bits(np.zeros(2, np.int32), 32, (2,))
    # the kernels themselves check what memory safety needs
    with pytest.raises(TypeError, match=r"random_split: expected uint32\[\.\.\., 2\] keys"):
        _kcall("random_split", (np.zeros(3, U32),), [(U32, (2, 2))])
    with pytest.raises(ValueError, match="random_bits: an output shape has a negative dimension"):
        _kcall("random_bits", (np.zeros(2, U32),), [(U32, (-2,))])
    with pytest.raises(TypeError, match="random_bits: expected uint32"):  # no such bit width
        _kcall("random_bits", (np.zeros(2, U32),), [(np.int32, (2,))])
    with pytest.raises(TypeError, match="random_fold_in: expected uint32"):
        _kcall("random_fold_in", (np.zeros((2, 2), U32), np.zeros(3, U32)), [(U32, (2, 2))])
    with pytest.raises(TypeError, match="random_seed: expected integer seeds"):
        _kcall("random_seed", (np.zeros(2, np.float64),), [(U32, (2, 2))])
    with pytest.raises(TypeError, match="random_bits: expected uint32"):  # outputs of other keys
        _kcall("random_bits", (np.zeros((3, 2), U32),), [(U32, (2, 5))])


def test_large_draws_split_across_threads_match_the_reference():
    keys = np.array([[1, 2], [3, 4]], U32)
    for f, args in [(random_bits, (keys, 32, (150_001,))), (random_bits, (keys, 16, (70_000,))),
                    (random_split, (keys[0], (100_003,)))]:
        np.testing.assert_array_equal(f(*args), on_reference(f, *args))


def test_key_primitives_accept_zero_stride_key_batches():
    keys = np.broadcast_to(KEYS["kr"], (3, 2))
    got = np.asarray(random_bits(Array(keys), 32, (4,)))
    np.testing.assert_array_equal(got, np.broadcast_to(random.bits(KEYS["kr"], (4,)), (3, 4)))
    got = np.asarray(random_fold_in(Array(keys), np.broadcast_to(U32(5), (3,))))
    np.testing.assert_array_equal(got, np.broadcast_to(random.fold_in(KEYS["kr"], 5), (3, 2)))


# ---- random_uniform_range: uniform's scaling, rounded as XLA rounds it ----

RANGE_DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16]


def _range_independent(u, lo, hi, dt):
    """The same rounding from first principles: exact rationals for the fused multiply-add of
    float32/float64 (float16: of the float32 values, then rounded), per-op rounding for
    bfloat16."""
    from fractions import Fraction
    f32 = np.float32
    out = []
    for a, l, h in zip(*(np.broadcast_to(v, u.shape).ravel().tolist() for v in (u, lo, hi))):
        if dt == ml_dtypes.bfloat16:
            span = float(np.asarray(f32(h) - f32(l)).astype(dt))
            prod = float(np.asarray(f32(a) * f32(span)).astype(dt))
            y = float(np.asarray(f32(prod) + f32(l)).astype(dt))
        else:
            span = float(np.asarray(h - l, dtype=np.float64).astype(
                dt if dt != np.float16 else np.float32).astype(dt))
            exact = Fraction(a) * Fraction(span) + Fraction(l)
            work = np.float64 if dt == np.float64 else np.float32
            # nearest representable value of `work` to the exact result, ties to even
            near = work(float(exact))
            cands = [np.nextafter(near, work(-np.inf)), near, np.nextafter(near, work(np.inf))]
            odd = lambda v: int(np.asarray(v).view(f"u{np.dtype(work).itemsize}")) & 1
            y = float(min(cands, key=lambda v: (abs(Fraction(float(v)) - exact), odd(v))))
            y = float(np.asarray(y, work).astype(dt))
        out.append(max(l, y))
    return np.array(out, dtype=dt).reshape(u.shape)


@st.composite
def _range_case(draw):
    dt = draw(st.sampled_from(RANGE_DTYPES))
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    u = rng.random(shape).astype(dt)
    bounds = []
    for _ in range(2):
        if draw(st.booleans()):
            bounds.append(np.asarray(rng.uniform(-5, 5), dtype=dt))
        else:
            bounds.append(rng.uniform(-5, 5, shape).astype(dt))
    layout = draw(st.sampled_from(["contiguous", "strided", "flipped", "transposed"]))
    return dt, u, bounds[0], bounds[1], layout


@given(_range_case())
def test_uniform_range_against_reference_and_exact_rounding(case):
    dt, u, lo, hi, layout = case
    args = [Array(layouts(v).get(layout, v)) for v in (u, lo, hi)]
    got = np.asarray(random_uniform_range(*args))
    assert got.dtype == dt and got.shape == u.shape
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"),
                                  on_reference(random_uniform_range, *args).__array__()
                                  .view(f"u{got.itemsize}"))
    want = _range_independent(u, lo, hi, dt)
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{got.itemsize}"))


def test_uniform_range_rounds_with_one_fused_multiply_add():
    # XLA's result for uniform(PRNGKey(42), (2, 3), minval=-2.5, maxval=3.0): a separately
    # rounded product and sum would give 1044408720 (not ...716) at [0, 0]
    u = np.array([0.4545454, 0.5], np.float32)
    fused = np.asarray(random_uniform_range(u, np.float32(-2.5), np.float32(3.0)))
    exact = (u.astype(np.float64) * 5.5 - 2.5).astype(np.float32)
    np.testing.assert_array_equal(fused, exact)
    big = np.linspace(0, 1, 100_001, dtype=np.float32)
    np.testing.assert_array_equal(random_uniform_range(big, np.float32(-2), np.float32(3)),
                                  np.maximum(np.float32(-2),
                                             (big.astype(np.float64) * 5 - 2).astype(np.float32)))
    f = pullback.jit(random_uniform_range)
    np.testing.assert_array_equal(f(u, np.float32(-2.5), np.float32(3.0)), fused)


@pytest.mark.x64
def test_uniform_range_errors():
    f32 = np.zeros(3, np.float32)
    with pytest.raises(TypeError, match="random_uniform_range: argument 'u' must be float16, "
                                        "bfloat16, float32 or float64, got int32"):
        random_uniform_range(np.zeros(3, np.int32), f32, f32)
    with pytest.raises(TypeError, match="random_uniform_range: argument 'maxval' must have the "
                                        "dtype of 'u'"):
        random_uniform_range(f32, f32, np.zeros(3))
    with pytest.raises(TypeError, match=r"random_uniform_range: argument 'minval' must have the "
                                        r"shape of 'u' \(3,\) or be 0-d, got \(2,\)"):
        random_uniform_range(f32, np.zeros(2, np.float32), f32)
    with pytest.raises(TypeError, match="random_uniform_range: expected float operands"):
        _kcall("random_uniform_range", [np.zeros(2, np.int64)] * 3, [(np.int64, (2,))])
    with pytest.raises(TypeError, match="random_uniform_range: expected float operands"):
        _kcall("random_uniform_range", (f32, f32, np.zeros(2, np.float32)), [(np.float32, (3,))])


# ---- typed key arrays ----

def test_typed_keys_behave_as_arrays_of_keys():
    keys = random.split(random.key(0), (2, 3))
    assert keys.shape == (2, 3) and keys.ndim == 2 and keys.size == 6 and len(keys) == 2
    assert str(keys.dtype) == "key<fry>" and random.key_impl(keys) == "threefry2x32"
    data = np.asarray(random.key_data(keys))
    np.testing.assert_array_equal(random.key_data(keys[1]), data[1])
    np.testing.assert_array_equal(random.key_data(keys[1, 2]), data[1, 2])
    np.testing.assert_array_equal(random.key_data(keys[..., 0]), data[:, 0])
    assert [k.shape for k in keys] == [(3,), (3,)]
    np.testing.assert_array_equal(random.key_data(keys.reshape(6)), data.reshape(6, 2))
    assert keys.reshape((3, 2)).shape == (3, 2)
    leaves, tree = pullback.tree_util.tree_flatten({"k": keys})
    assert len(leaves) == 1 and leaves[0].shape == (2, 3, 2)
    assert isinstance(pullback.tree_util.tree_unflatten(tree, leaves)["k"], random.PRNGKeyArray)
    assert "key<fry>" in repr(random.key(0))
    with pytest.raises(TypeError, match="cannot be converted to a NumPy array"):
        np.asarray(random.key(0))
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(random.key(0))


def test_wrap_key_data_round_trip_and_errors():
    data = np.array([[1, 2], [3, 4]], U32)
    keys = random.wrap_key_data(data)
    assert keys.shape == (2,)
    np.testing.assert_array_equal(random.key_data(keys), data)
    np.testing.assert_array_equal(random.key_data(data), data)  # raw data passes through
    with pytest.raises(TypeError, match="wrap_key_data: invalid PRNG key data: expected "
                                        "key_data.dtype = uint32; got dtype=int32"):
        random.wrap_key_data(data.astype(np.int32))
    with pytest.raises(TypeError, match=r"wrap_key_data: invalid PRNG key data: expected "
                                        r"key_data.shape to end with \(2,\); got shape=\(3,\)"):
        random.wrap_key_data(np.zeros(3, U32))
    with pytest.raises(TypeError, match="wrap_key_data: argument 'key_bits_array' must be"):
        random.wrap_key_data([1, 2])


def test_functions_validate_keys():
    with pytest.raises(TypeError, match="split: invalid PRNG key data: expected key_data.dtype = "
                                        "uint32; got dtype=float32"):
        random.split(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match=r"bits: invalid PRNG key data: .* got shape=\(3,\)"):
        random.bits(np.zeros(3, U32))
    with pytest.raises(ValueError, match=r"split accepts a single key, but was given a key array "
                                         r"of shape \(3,\) != \(\)"):
        random.split(np.zeros((3, 2), U32))
    with pytest.raises(ValueError, match=r"fold_in accepts a single key, .* shape \(2,\)"):
        random.fold_in(random.split(random.key(0)), 1)
    with pytest.raises(TypeError, match="bits: unexpected PRNG key type list"):
        random.bits([0, 0])


# ---- samplers (written in jax.lax operations merged from other branches) ----

def needs(*names):
    """Skips a test until every named jax.lax function exists in pullback.lax."""
    missing = [n for n in names if not hasattr(lax, n)]
    return pytest.mark.skipif(bool(missing), reason="needs lax." + ", lax.".join(missing) +
                              " (merged later)")


UNIFORM = ("convert_element_type", "shift_right_logical", "bitwise_or", "bitcast_convert_type",
           "sub", "mul", "add", "max")
needs_uniform = needs(*UNIFORM)
needs_normal = needs(*UNIFORM, "erf_inv")
needs_truncated = needs(*UNIFORM, "erf_inv", "erf", "div", "nextafter", "min")
needs_logs = needs(*UNIFORM, "neg", "log", "log1p", "slice", "select_n", "ge")
needs_randint = needs(*UNIFORM, "min", "gt", "le", "select_n", "rem")
needs_bernoulli = needs(*UNIFORM, "lt", "slice")
needs_categorical = needs(*UNIFORM, "neg", "log", "log1p", "slice", "select_n", "ge", "argmax",
                          "top_k", "transpose")
needs_permutation = needs("sort", "iota", "gather", "GatherDimensionNumbers")
needs_choice = needs(*UNIFORM, "sort", "iota", "gather", "GatherDimensionNumbers", "min", "gt",
                     "le", "select_n", "rem", "cumsum", "slice", "lt", "neg", "log", "top_k")
HALF_AND_SINGLE = ["float32", "float16", "bfloat16"]
LOG_ULPS = 4
ERF_INV_ULPS = {"float16": 2, "bfloat16": 2, "float32": 128, "float64": 8192}


@needs_uniform
@pytest.mark.parametrize("dtype", HALF_AND_SINGLE)
def test_uniform_matches_jax_bit_for_bit(dtype):
    name = f"uniform(k0,(7,),{dtype})"
    check_pin(PINS_X32, name, random.uniform(KEYS["k0"], (7,), dtype))
    check_pin(PINS_X32, name, pullback.jit(lambda k: random.uniform(k, (7,), dtype))(KEYS["k0"]))
    check_pin(PINS_X32, name, random.uniform(random.wrap_key_data(KEYS["k0"]), (7,), dtype))


@needs_uniform
def test_uniform_ranges_shapes_and_float64():
    check_pin(PINS_X32, "uniform(k42,(2,3),float32,-2.5,3.0)",
              random.uniform(KEYS["k42"], (2, 3), minval=-2.5, maxval=3.0))
    check_pin(PINS_X32, "uniform(kr,(2,3),float32,[0,1,2],[1,3,7])",
              random.uniform(KEYS["kr"], (2, 3), minval=np.array([0., 1., 2.], np.float32),
                             maxval=np.array([1., 3., 7.], np.float32)))
    check_pin(PINS_X32, "uniform(k0,(),float32)", random.uniform(KEYS["k0"]))
    u = random.uniform(KEYS["k0"], (1000,))
    check_pin(PINS_X32, "uniform(k0,(1000,),float32)", u)
    assert 0.0 <= np.min(u) and np.max(u) < 1.0
    for kn in KEYS:
        check_pin(PINS_X32, f"typed:uniform(key_data,{kn})",
                  random.uniform(random.wrap_key_data(KEYS[kn]), (3,)))
        check_pin(PINS_X64, f"uniform({kn},(5,),float64)",
                  x64(lambda: random.uniform(KEYS[kn], (5,), np.float64)))
    check_pin(PINS_X64, "uniform(k42,(4,),float64,-2.5,3.0)",
              x64(lambda: random.uniform(KEYS["k42"], (4,), np.float64, -2.5, 3.0)))


@needs_normal
@pytest.mark.parametrize("dtype", HALF_AND_SINGLE)
def test_normal_matches_jax_within_erf_inv_differences(dtype):
    name, ulps = f"normal(k42,(7,),{dtype})", ERF_INV_ULPS[dtype]
    check_pin(PINS_X32, name, random.normal(KEYS["k42"], (7,), dtype), ulps=ulps)
    check_pin(PINS_X32, name, pullback.jit(lambda k: random.normal(k, (7,), dtype))(KEYS["k42"]),
              ulps=ulps)


@needs_normal
def test_normal_many_values_and_float64():
    check_pin(PINS_X32, "normal(k0,(200,),float32)", random.normal(KEYS["k0"], (200,)),
              ulps=ERF_INV_ULPS["float32"])
    for kn in KEYS:
        check_pin(PINS_X64, f"normal({kn},(5,),float64)",
                  x64(lambda: random.normal(random.wrap_key_data(KEYS[kn]), (5,), np.float64)),
                  ulps=ERF_INV_ULPS["float64"])
    # the construction, exactly: sqrt(2) * erf_inv(uniform in (-1, 1))
    lo = np.nextafter(np.float32(-1), np.float32(0))
    u = random.uniform(KEYS["k0"], (200,), np.float32, lo, np.float32(1))
    want = lax.mul(np.float32(np.sqrt(2)), lax.erf_inv(u))
    np.testing.assert_array_equal(random.normal(KEYS["k0"], (200,)), want)


@needs(*UNIFORM, "erf_inv", "div", "complex")
def test_complex_normal_matches_jax():
    # JAX divides by sqrt(2) as a complex division: one more ulp on each part
    z = random.normal(KEYS["k42"], (5,), np.complex64)
    check_pin(PINS_X32, "normal(k42,(5,),complex64)", np.asarray(z).view(np.float32).reshape(5, 2),
              ulps=ERF_INV_ULPS["float32"] + 1)
    z = x64(lambda: random.normal(KEYS["k42"], (3,), np.complex128))
    check_pin(PINS_X64, "normal(k42,(3,),complex128)", np.asarray(z).view(np.float64).reshape(3, 2),
              ulps=ERF_INV_ULPS["float64"] + 1)


@needs_truncated
def test_truncated_normal_matches_jax_and_stays_inside():
    got = random.truncated_normal(KEYS["k0"], -1.0, 2.0, (6,))
    check_pin(PINS_X32, "truncated_normal(k0,-1.0,2.0,(6,),float32)", got,
              ulps=ERF_INV_ULPS["float32"])
    assert np.all((np.asarray(got) > -1) & (np.asarray(got) < 2))
    lo, hi = np.array([-3., 0., 1.], np.float32), np.array([0., 0.5, 4.], np.float32)
    check_pin(PINS_X32, "truncated_normal(k42,[-3,0,1],[0,0.5,4],None,float32)",
              random.truncated_normal(KEYS["k42"], lo, hi), ulps=ERF_INV_ULPS["float32"])
    check_pin(PINS_X64, "truncated_normal(k42,-1.0,2.0,(6,),float64)",
              x64(lambda: random.truncated_normal(KEYS["k42"], -1.0, 2.0, (6,), np.float64)),
              ulps=ERF_INV_ULPS["float64"])


@needs_logs
@pytest.mark.parametrize("dtype", HALF_AND_SINGLE)
def test_exponential_and_gumbel_match_jax(dtype):
    check_pin(PINS_X32, f"exponential(kr,(5,),{dtype})",
              random.exponential(KEYS["kr"], (5,), dtype), ulps=LOG_ULPS)
    check_pin(PINS_X32, f"gumbel(k0,(5,),{dtype})", random.gumbel(KEYS["k0"], (5,), dtype),
              ulps=LOG_ULPS)


@needs_logs
def test_gumbel_high_mode_and_float64():
    check_pin(PINS_X32, "gumbel(k42,(6,),float32,high)",
              random.gumbel(KEYS["k42"], (6,), mode="high"), ulps=LOG_ULPS)
    check_pin(PINS_X64, "exponential(k0,(5,),float64)",
              x64(lambda: random.exponential(KEYS["k0"], (5,), np.float64)), ulps=LOG_ULPS)
    check_pin(PINS_X64, "gumbel(k0,(5,),float64)", x64(lambda: random.gumbel(KEYS["k0"], (5,), np.float64)),
              ulps=LOG_ULPS)
    check_pin(PINS_X64, "gumbel(k0,(5,),float64,high)",
              x64(lambda: random.gumbel(KEYS["k0"], (5,), np.float64, mode="high")), ulps=LOG_ULPS)


RANDINT_CASES = [
    ("randint(k0,(6,),0,10,int32)", "k0", (6,), 0, 10, None),
    ("randint(k42,(2,3),-5,5,int32)", "k42", (2, 3), -5, 5, None),
    ("randint(kr,(6,),0,256,uint8)", "kr", (6,), 0, 256, np.uint8),
    ("randint(kr,(6,),-100,100,int8)", "kr", (6,), -100, 100, np.int8),
    ("randint(k0,(6,),0,65536,uint16)", "k0", (6,), 0, 65536, np.uint16),
    ("randint(k0,(5,),3,3,int32)", "k0", (5,), 3, 3, None),
    ("randint(k42,(5,),-2147483648,2147483647,int32)", "k42", (5,), -2 ** 31, 2 ** 31 - 1, None),
    ("randint(k0,(5,),0,1000,uint32)", "k0", (5,), 0, 1000, np.uint32),
    ("randint(k0,(2,3),[0,10,100],[5,20,1000],int32)", "k0", (2, 3),
     np.array([0, 10, 100], np.int32), np.array([5, 20, 1000], np.int32), None),
]


@needs_randint
@pytest.mark.parametrize("case", RANDINT_CASES, ids=lambda c: c[0])
def test_randint_matches_jax(case):
    name, kn, shape, lo, hi, dtype = case
    check_pin(PINS_X32, name, random.randint(KEYS[kn], shape, lo, hi, dtype))


@needs_randint
def test_randint_64_bit_and_under_jit():
    check_pin(PINS_X64, "randint(k0,(5,),-10**12,10**12,int64)",
              x64(lambda: random.randint(KEYS["k0"], (5,), np.int64(-10 ** 12), np.int64(10 ** 12), np.int64)))
    check_pin(PINS_X64, "randint(k42,(5,),0,1000,uint64)",
              x64(lambda: random.randint(KEYS["k42"], (5,), np.int64(0), np.int64(1000), np.uint64)))
    f = pullback.jit(lambda k, lo, hi: random.randint(k, (2, 3), lo, hi))
    check_pin(PINS_X32, "randint(k0,(2,3),[0,10,100],[5,20,1000],int32)",
              f(KEYS["k0"], np.array([0, 10, 100], np.int32), np.array([5, 20, 1000], np.int32)))


@needs_bernoulli
def test_bernoulli_matches_jax():
    check_pin(PINS_X32, "bernoulli(k0,0.3,(8,))", random.bernoulli(KEYS["k0"], 0.3, (8,)))
    check_pin(PINS_X32, "bernoulli(k42,[0.1,0.5,0.9,1.0],None)",
              random.bernoulli(KEYS["k42"], np.array([0.1, 0.5, 0.9, 1.0], np.float32)))
    check_pin(PINS_X32, "bernoulli(kr,0.5,(8,),high)",
              random.bernoulli(KEYS["kr"], 0.5, (8,), mode="high"))
    check_pin(PINS_X64, "bernoulli(kr,float64 0.3,(6,))",
              x64(lambda: random.bernoulli(KEYS["kr"], np.float64(0.3), (6,))))


@needs_categorical
def test_categorical_matches_jax():
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4], np.float32))
    l2 = (np.arange(12.0, dtype=np.float32) / 4).reshape(3, 4)
    k0, k42, kr = KEYS["k0"], KEYS["k42"], KEYS["kr"]
    check_pin(PINS_X32, "categorical(k0,logits4,-1,(8,))",
              random.categorical(k0, logits, shape=(8,)))
    check_pin(PINS_X32, "categorical(k42,l2,-1,None)", random.categorical(k42, l2))
    check_pin(PINS_X32, "categorical(k42,l2,0,None)", random.categorical(k42, l2, axis=0))
    check_pin(PINS_X32, "categorical(kr,l2,1,(5,3))",
              random.categorical(kr, l2, axis=1, shape=(5, 3)))
    check_pin(PINS_X32, "categorical(k0,l2,-1,(2,3),replace=False)",
              random.categorical(k0, l2, shape=(2, 3), replace=False))
    check_pin(PINS_X32, "categorical(k0,logits4,-1,(8,),high)",
              random.categorical(k0, logits, shape=(8,), mode="high"))


@needs_permutation
def test_permutation_matches_jax():
    a = np.arange(30, dtype=np.int32).reshape(15, 2)
    check_pin(PINS_X32, "permutation(k0,10)", random.permutation(KEYS["k0"], 10))
    check_pin(PINS_X32, "permutation(k42,arange15x2,0)", random.permutation(KEYS["k42"], a))
    check_pin(PINS_X32, "permutation(kr,arange15x2,1,independent)",
              random.permutation(KEYS["kr"], a, 1, True))
    check_pin(PINS_X32, "permutation(k0,arange4x5f,1)",
              random.permutation(KEYS["k0"], np.arange(20, dtype=np.float32).reshape(4, 5), 1))
    # two sorting rounds above 1625 elements
    p = random.permutation(KEYS["k0"], 2000)
    check_pin(PINS_X32, "permutation(k0,2000)", p)
    assert sorted(np.asarray(p).tolist()) == list(range(2000))


@needs_choice
def test_choice_matches_jax():
    p5 = np.array([0.1, 0.0, 0.5, 0.15, 0.25], np.float32)
    a62 = np.arange(12, dtype=np.int32).reshape(6, 2)
    k0, k42, kr = KEYS["k0"], KEYS["k42"], KEYS["kr"]
    check_pin(PINS_X32, "choice(k0,5,(4,))", random.choice(k0, 5, (4,)))
    check_pin(PINS_X32, "choice(k42,10,(2,3),replace=False)",
              random.choice(k42, 10, (2, 3), replace=False))
    check_pin(PINS_X32, "choice(kr,5,(6,),p=p5)", random.choice(kr, 5, (6,), p=p5))
    check_pin(PINS_X32, "choice(k0,5,(3,),replace=False,p=p5)",
              random.choice(k0, 5, (3,), replace=False, p=p5))
    check_pin(PINS_X32, "choice(k42,a62,(3,),axis=0)", random.choice(k42, a62, (3,)))
    check_pin(PINS_X32, "choice(k0,a62,(2,),replace=False,axis=1)",
              random.choice(k0, a62, (2,), replace=False, axis=1))
    check_pin(PINS_X32, "choice(kr,a62,(4,),replace=False,axis=0)",
              random.choice(kr, a62, (4,), replace=False))


def test_sampler_argument_errors():
    k = KEYS["k0"]
    with pytest.raises(ValueError, match="dtype argument to `uniform` must be a float dtype, got "
                                         "int32"):
        random.uniform(k, (2,), np.int32)
    with pytest.raises(ValueError, match="dtype argument to `normal` must be a float dtype"):
        random.normal(k, (2,), np.uint8)
    with pytest.raises(ValueError, match=r"uniform parameter shapes must be broadcast-compatible "
                                         r"with shape argument.* \(3,\)"):
        random.uniform(k, (3,), minval=np.zeros(2, np.float32))
    with pytest.raises(OverflowError, match="randint: argument 'maxval' is the Python int "
                                            "4294967296, which overflows int32"):
        random.randint(k, (2,), 0, 2 ** 32, np.uint32)
    with pytest.raises(NotImplementedError, match="mode='highest' for float32"):
        random.gumbel(k, (2,), mode="highest")
    with pytest.raises(TypeError, match="randint only accepts integer dtypes, got float32"):
        random.randint(k, (2,), 0, 5, np.float32)
    with pytest.raises(TypeError, match="bernoulli probability `p` must have a floating dtype"):
        random.bernoulli(k, 1)
    with pytest.raises(ValueError, match="got mode='mid', expected 'high' or 'low'"):
        random.bernoulli(k, 0.5, mode="mid")
    with pytest.raises(ValueError, match="Must provide valid mode for gumbel got: mid"):
        random.gumbel(k, (2,), mode="mid")
    with pytest.raises(ValueError, match=r"uniform accepts a single key, .* shape \(2,\)"):
        random.uniform(random.split(k))
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        random.choice(k, 3, (4,), replace=False)
    with pytest.raises(TypeError, match="x must be an integer or at least 1-dimensional"):
        random.permutation(k, 2.5)
    with pytest.raises(ValueError, match="Number of samples without replacement"):
        random.categorical(k, np.zeros(3, np.float32), shape=(4,), replace=False)


# ---- pinned values from JAX 0.10.2 (see the module docstring) ----

PINS_X32 = {'normal(k42,(5,),complex64)': ('bits', 'float32', [5, 2], [1029433186, 1054560092, 3199210281, 1058055286, 1063883439, 3206842507, 1052515998, 3202743520, 1046053912, 3210564392]),
 'PRNGKey(-1)': ('int', 'uint32', [2], [0, 4294967295]),
 'PRNGKey(-2147483648)': ('int', 'uint32', [2], [0, 2147483648]),
 'PRNGKey(-9223372036854775808)': ('int', 'uint32', [2], [0, 0]),
 'PRNGKey(0)': ('int', 'uint32', [2], [0, 0]),
 'PRNGKey(1)': ('int', 'uint32', [2], [0, 1]),
 'PRNGKey(1099511627779)': ('int', 'uint32', [2], [0, 3]),
 'PRNGKey(2147483647)': ('int', 'uint32', [2], [0, 2147483647]),
 'PRNGKey(2147483648)': ('int', 'uint32', [2], [0, 2147483648]),
 'PRNGKey(42)': ('int', 'uint32', [2], [0, 42]),
 'PRNGKey(4294967301)': ('int', 'uint32', [2], [0, 5]),
 'PRNGKey(np.int8(-2))': ('int', 'uint32', [2], [0, 4294967294]),
 'PRNGKey(np.uint32(4294967295))': ('int', 'uint32', [2], [0, 4294967295]),
 'PRNGKey(np.uint8(200))': ('int', 'uint32', [2], [0, 200]),
 'bernoulli(k0,0.3,(8,))': ('int', 'bool', [8],
                            [False, False, False, False, False, True, False, False]),
 'bernoulli(k42,[0.1,0.5,0.9,1.0],None)': ('int', 'bool', [4], [False, False, True, True]),
 'bernoulli(kr,0.5,(8,),high)': ('int', 'bool', [8],
                                 [True, True, False, False, True, False, True, True]),
 'bits(k0,(),uint16)': ('int', 'uint16', [], [20391]),
 'bits(k0,(),uint32)': ('int', 'uint32', [], [4070199207]),
 'bits(k0,(),uint8)': ('int', 'uint8', [], [167]),
 'bits(k0,(1000,),uint32)': ('sha256', 'uint32', [1000],
                             '93070a12a19702329476a3c27d4168bc259d91ecd4abb64f220fd8d5ae59b0aa',
                             [4070199207, 4202968722, 1427181096, 2012915765, 2447653815,
                              710830403, 1332275837, 2961296638]),
 'bits(k0,(2, 3),uint16)': ('int', 'uint16', [2, 3], [20391, 13970, 3624, 43061, 15287, 26947]),
 'bits(k0,(2, 3),uint32)': ('int', 'uint32', [2, 3],
                            [4070199207, 4202968722, 1427181096, 2012915765, 2447653815,
                             710830403]),
 'bits(k0,(2, 3),uint8)': ('int', 'uint8', [2, 3], [167, 146, 40, 53, 183, 67]),
 'bits(k0,(5,),uint16)': ('int', 'uint16', [5], [20391, 13970, 3624, 43061, 15287]),
 'bits(k0,(5,),uint32)': ('int', 'uint32', [5],
                          [4070199207, 4202968722, 1427181096, 2012915765, 2447653815]),
 'bits(k0,(5,),uint8)': ('int', 'uint8', [5], [167, 146, 40, 53, 183]),
 'bits(k42,(),uint16)': ('int', 'uint16', [], [5026]),
 'bits(k42,(),uint32)': ('int', 'uint32', [], [2098992034]),
 'bits(k42,(),uint8)': ('int', 'uint8', [], [162]),
 'bits(k42,(2, 3),uint16)': ('int', 'uint16', [2, 3], [5026, 12505, 63993, 49623, 29461, 20184]),
 'bits(k42,(2, 3),uint32)': ('int', 'uint32', [2, 3],
                             [2098992034, 2919706841, 2646866425, 2409546199, 1935504149,
                              2516274904]),
 'bits(k42,(2, 3),uint8)': ('int', 'uint8', [2, 3], [162, 217, 249, 215, 21, 216]),
 'bits(k42,(5,),uint16)': ('int', 'uint16', [5], [5026, 12505, 63993, 49623, 29461]),
 'bits(k42,(5,),uint32)': ('int', 'uint32', [5],
                           [2098992034, 2919706841, 2646866425, 2409546199, 1935504149]),
 'bits(k42,(5,),uint8)': ('int', 'uint8', [5], [162, 217, 249, 215, 21]),
 'bits(kr,(),uint16)': ('int', 'uint16', [], [28858]),
 'bits(kr,(),uint32)': ('int', 'uint32', [], [1301508282]),
 'bits(kr,(),uint8)': ('int', 'uint8', [], [186]),
 'bits(kr,(2, 3),uint16)': ('int', 'uint16', [2, 3], [28858, 51614, 60600, 14801, 33460, 32338]),
 'bits(kr,(2, 3),uint32)': ('int', 'uint32', [2, 3],
                            [1301508282, 621857182, 3376475320, 2348759505, 459113140,
                             3294199378]),
 'bits(kr,(2, 3),uint8)': ('int', 'uint8', [2, 3], [186, 158, 184, 209, 180, 82]),
 'bits(kr,(5,),uint16)': ('int', 'uint16', [5], [28858, 51614, 60600, 14801, 33460]),
 'bits(kr,(5,),uint32)': ('int', 'uint32', [5],
                          [1301508282, 621857182, 3376475320, 2348759505, 459113140]),
 'bits(kr,(5,),uint8)': ('int', 'uint8', [5], [186, 158, 184, 209, 180]),
 'categorical(k0,l2,-1,(2,3),replace=False)': ('int', 'int32', [2, 3], [1, 3, 2, 0, 0, 0]),
 'categorical(k0,logits4,-1,(8,))': ('int', 'int32', [8], [1, 3, 2, 3, 1, 1, 2, 3]),
 'categorical(k0,logits4,-1,(8,),high)': ('int', 'int32', [8], [2, 1, 3, 1, 3, 0, 3, 2]),
 'categorical(k42,l2,-1,None)': ('int', 'int32', [3], [3, 3, 3]),
 'categorical(k42,l2,0,None)': ('int', 'int32', [4], [2, 2, 2, 2]),
 'categorical(kr,l2,1,(5,3))': ('int', 'int32', [5, 3],
                                [2, 1, 3, 2, 3, 0, 2, 2, 0, 2, 2, 0, 0, 0, 3]),
 'choice(k0,5,(3,),replace=False,p=p5)': ('int', 'int32', [3], [0, 2, 4]),
 'choice(k0,5,(4,))': ('int', 'int32', [4], [4, 0, 2, 3]),
 'choice(k0,a62,(2,),replace=False,axis=1)': ('int', 'int32', [6, 2],
                                              [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
 'choice(k42,10,(2,3),replace=False)': ('int', 'int32', [2, 3], [7, 4, 2, 5, 3, 6]),
 'choice(k42,a62,(3,),axis=0)': ('int', 'int32', [3, 2], [0, 1, 0, 1, 6, 7]),
 'choice(kr,5,(6,),p=p5)': ('int', 'int32', [6], [3, 4, 2, 2, 4, 2]),
 'choice(kr,a62,(4,),replace=False,axis=0)': ('int', 'int32', [4, 2], [4, 5, 2, 3, 8, 9, 10, 11]),
 'exponential(kr,(5,),bfloat16)': ('bits', 'bfloat16', [5], [16294, 16246, 16290, 16342, 16283]),
 'exponential(kr,(5,),float16)': ('bits', 'float16', [5], [14497, 15920, 16678, 13335, 14772]),
 'exponential(kr,(5,),float32)': ('bits', 'float32', [5],
                                  [1052301022, 1042294951, 1069903749, 1061856189, 1038583726]),
 'fold_in(k0,0)': ('int', 'uint32', [2], [1797259609, 2579123966]),
 'fold_in(k0,1)': ('int', 'uint32', [2], [928981903, 3453687069]),
 'fold_in(k0,4294967295)': ('int', 'uint32', [2], [743310391, 3789761811]),
 'fold_in(k0,7)': ('int', 'uint32', [2], [2716826189, 292468403]),
 'fold_in(k0,int32(-1))': ('int', 'uint32', [2], [743310391, 3789761811]),
 'fold_in(k42,0)': ('int', 'uint32', [2], [1832780943, 270669613]),
 'fold_in(k42,1)': ('int', 'uint32', [2], [64467757, 2916123636]),
 'fold_in(k42,4294967295)': ('int', 'uint32', [2], [2398536845, 3890976714]),
 'fold_in(k42,7)': ('int', 'uint32', [2], [2547012911, 1371500959]),
 'fold_in(k42,int32(-1))': ('int', 'uint32', [2], [2398536845, 3890976714]),
 'fold_in(kr,0)': ('int', 'uint32', [2], [3978822521, 2696639427]),
 'fold_in(kr,1)': ('int', 'uint32', [2], [2085429205, 1499321931]),
 'fold_in(kr,4294967295)': ('int', 'uint32', [2], [2428130646, 2836474425]),
 'fold_in(kr,7)': ('int', 'uint32', [2], [984784270, 334005006]),
 'fold_in(kr,int32(-1))': ('int', 'uint32', [2], [2428130646, 2836474425]),
 'gumbel(k0,(5,),bfloat16)': ('bits', 'bfloat16', [5], [16214, 16147, 48927, 48879, 16265]),
 'gumbel(k0,(5,),float16)': ('bits', 'float16', [5], [45311, 46843, 48196, 15083, 46603]),
 'gumbel(k0,(5,),float32)': ('bits', 'float32', [5],
                             [1077614729, 1081428380, 3183898615, 1049490596, 1058234552]),
 'gumbel(k42,(6,),float32,high)': ('bits', 'float32', [6],
                                   [1053584273, 3188004948, 1026589905, 1044847682, 1057173946,
                                    1040258270]),
 'key_data(split(key(7),(2,2)))': ('int', 'uint32', [2, 2, 2],
                                   [3625411723, 1954958720, 195045567, 4062205631, 966301609,
                                    1948237315, 276534068, 1641862660]),
 'normal(k0,(200,),float32)': ('bits', 'float32', [200],
                               [1070576317, 1073847792, 3202220055, 3181445666, 1043616044,
                                3212368599, 3204290508, 1056775985, 1059721932, 3212000746,
                                1074494829, 3220849248, 1052219029, 1042388236, 1067677571,
                                1069635305, 1064860905, 1058635754, 1019894050, 3220524832,
                                3220045607, 1071461331, 1027689131, 1062234801, 1040612035,
                                1049678164, 1067396633, 1060156978, 3209493793, 3208491397,
                                3217356887, 1050344045, 3165238450, 1038615328, 3194090318,
                                1032875554, 1062891928, 3209846725, 3161419890, 3189379777,
                                3211161411, 3208794775, 1051364210, 1062152946, 1026481763,
                                3205751363, 3201575961, 3220732669, 1068005009, 1061230598,
                                1042650912, 3171855647, 3215610481, 1053395097, 1056380621,
                                1062062022, 3206691652, 1065678325, 3208501486, 3202098063,
                                3194388666, 3204778216, 3218450659, 1059906566, 1047058482,
                                3214347171, 3212446518, 1067005440, 3210173911, 1059645738,
                                1065923775, 1050771174, 1054872960, 1066794852, 1063804845,
                                1067220723, 3205226639, 1062942403, 3154281186, 1056073373,
                                3213751515, 1076436041, 1063500613, 1065272711, 1048750389,
                                1040182208, 1066730399, 1044748356, 3192099919, 3202320728,
                                3214063269, 1045059664, 1066768085, 3210712843, 1063370293,
                                3199217311, 3189090374, 3211385998, 1068457815, 3209147177,
                                1052428554, 1064952915, 3152742654, 1045926680, 1044573521,
                                1053035809, 3215065157, 3216899924, 3186267609, 1066223229,
                                1045117680, 1046152655, 3207141583, 3208260376, 1053758137,
                                1044526475, 3206179319, 1064431456, 1066056834, 3221460662,
                                3208035586, 1058522679, 1065779158, 3216734411, 1059649153,
                                3197795143, 1040733106, 3198838399, 1070134805, 1058214714,
                                1060712898, 1060264426, 3207203651, 3220948284, 3222971369,
                                1049357870, 1066698055, 1049096520, 1060167535, 3196263132,
                                3221320851, 3206514016, 1049566919, 3215775538, 1037004882,
                                1057177366, 1049046416, 3219792090, 1068992005, 1068027970,
                                3216991931, 1064233772, 1068786378, 3190548920, 3186815115,
                                3195578135, 3212195291, 3208749263, 1076144429, 3213341684,
                                1050667416, 1051176864, 1034527730, 3213530506, 3209015593,
                                3206706547, 1067252483, 3216922242, 3209361783, 1057855789,
                                3214393284, 1064965820, 3202382992, 3198735815, 1051345823,
                                3207010466, 3214558309, 3210929433, 3221681969, 3189686679,
                                3207097916, 3207187204, 3171460773, 3211090844, 1033760618,
                                3211323945, 1067668908, 3201149071, 3212835610, 1015943364,
                                1053761565, 3213435176, 1065660764, 3207274890, 3181353663,
                                1067098232, 1073755017, 3180369635, 1051462994, 1075226796]),
 'normal(k42,(7,),bfloat16)': ('bits', 'bfloat16', [7],
                               [16048, 16258, 16370, 16252, 49076, 16258, 15991]),
 'normal(k42,(7,),float16)': ('bits', 'float16', [7],
                              [48568, 47873, 16358, 14739, 45073, 47108, 14488]),
 'normal(k42,(7,),float32)': ('bits', 'float32', [7],
                              [3169312533, 1055861736, 1050109537, 1042103076, 3187541227,
                               1046356250, 3216535225]),
 'permutation(k0,10)': ('int', 'int32', [10], [0, 1, 8, 5, 6, 4, 3, 2, 7, 9]),
 'permutation(k0,2000)': ('sha256', 'int32', [2000],
                          '672718ae43a8bbded630bf0394ad2cf3f4191cc7143f3c825c440052098664a3',
                          [988, 23, 1144, 1675, 1700, 884, 311, 1604]),
 'permutation(k0,arange4x5f,1)': ('bits', 'float32', [4, 5],
                                  [0, 1065353216, 1082130432, 1077936128, 1073741824, 1084227584,
                                   1086324736, 1091567616, 1090519040, 1088421888, 1092616192,
                                   1093664768, 1096810496, 1095761920, 1094713344, 1097859072,
                                   1098907648, 1100480512, 1099956224, 1099431936]),
 'permutation(k42,arange15x2,0)': ('int', 'int32', [15, 2],
                                   [14, 15, 8, 9, 4, 5, 10, 11, 6, 7, 12, 13, 20, 21, 22, 23, 16,
                                    17, 18, 19, 26, 27, 28, 29, 0, 1, 2, 3, 24, 25]),
 'permutation(kr,arange15x2,1,independent)': ('int', 'int32', [15, 2],
                                              [1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                                               15, 17, 16, 18, 19, 21, 20, 23, 22, 24, 25, 26, 27,
                                               29, 28]),
 'randint(k0,(2,3),[0,10,100],[5,20,1000],int32)': ('int', 'int32', [2, 3],
                                                    [4, 10, 912, 3, 11, 247]),
 'randint(k0,(5,),0,1000,uint32)': ('int', 'uint32', [5], [789, 0, 712, 373, 771]),
 'randint(k0,(5,),3,3,int32)': ('int', 'int32', [5], [3, 3, 3, 3, 3]),
 'randint(k0,(6,),0,10,int32)': ('int', 'int32', [6], [9, 0, 2, 3, 1, 7]),
 'randint(k0,(6,),0,65536,uint16)': ('int', 'uint16', [6], [869, 8528, 24520, 27197, 3, 45011]),
 'randint(k42,(2,3),-5,5,int32)': ('int', 'int32', [2, 3], [-1, -1, -4, 4, 4, 4]),
 'randint(k42,(5,),-2147483648,2147483647,int32)': ('int', 'int32', [5],
                                                    [977810628, 1236381714, -1367112521,
                                                     -1019495231, -1671904627]),
 'randint(kr,(6,),-100,100,int8)': ('int', 'int8', [6], [71, -26, 91, 80, -76, 35]),
 'randint(kr,(6,),0,256,uint8)': ('int', 'uint8', [6], [171, 122, 23, 100, 56, 247]),
 'split(k0,(2, 3))': ('int', 'uint32', [2, 3, 2],
                      [1797259609, 2579123966, 928981903, 3453687069, 4146024105, 2718843009,
                       2467461003, 3840466878, 2285895361, 433833334, 1524306142, 1887795613]),
 'split(k0,1)': ('int', 'uint32', [1, 2], [1797259609, 2579123966]),
 'split(k0,2)': ('int', 'uint32', [2, 2], [1797259609, 2579123966, 928981903, 3453687069]),
 'split(k0,3)': ('int', 'uint32', [3, 2],
                 [1797259609, 2579123966, 928981903, 3453687069, 4146024105, 2718843009]),
 'split(k42,(2, 3))': ('int', 'uint32', [2, 3, 2],
                       [1832780943, 270669613, 64467757, 2916123636, 2465931498, 255383827,
                        3134548294, 894150801, 2954079971, 3276725750, 2765691542, 824333390]),
 'split(k42,1)': ('int', 'uint32', [1, 2], [1832780943, 270669613]),
 'split(k42,2)': ('int', 'uint32', [2, 2], [1832780943, 270669613, 64467757, 2916123636]),
 'split(k42,3)': ('int', 'uint32', [3, 2],
                  [1832780943, 270669613, 64467757, 2916123636, 2465931498, 255383827]),
 'split(kr,(2, 3))': ('int', 'uint32', [2, 3, 2],
                      [3978822521, 2696639427, 2085429205, 1499321931, 1630462717, 2825784901,
                       763154297, 2793666216, 3821564514, 4170576086, 545324050, 3839459904]),
 'split(kr,1)': ('int', 'uint32', [1, 2], [3978822521, 2696639427]),
 'split(kr,2)': ('int', 'uint32', [2, 2], [3978822521, 2696639427, 2085429205, 1499321931]),
 'split(kr,3)': ('int', 'uint32', [3, 2],
                 [3978822521, 2696639427, 2085429205, 1499321931, 1630462717, 2825784901]),
 'split(split(k42)[1],4)': ('int', 'uint32', [4, 2],
                            [3187376881, 129218101, 2350016172, 1168365246, 257214496, 567757975,
                             1383271662, 289976367]),
 'truncated_normal(k0,-1.0,2.0,(6,),float32)': ('bits', 'float32', [6],
                                                [1069626941, 1071622803, 3191004714, 1037669698,
                                                 1050893586, 3205141900]),
 'truncated_normal(k42,[-3,0,1],[0,0.5,4],None,float32)': ('bits', 'float32', [3],
                                                           [3207638709, 1051336376, 1069943981]),
 'typed:uniform(key_data,k0)': ('bits', 'float32', [3], [1064475214, 1064993846, 1051337244]),
 'typed:uniform(key_data,k42)': ('bits', 'float32', [3], [1056585764, 1059981104, 1058915320]),
 'typed:uniform(key_data,kr)': ('bits', 'float32', [3], [1050355424, 1041515296, 1061765356]),
 'uniform(k0,(),float32)': ('bits', 'float32', [], [1064475214]),
 'uniform(k0,(1000,),float32)': ('sha256', 'float32', [1000],
                                 'e8d77b0cfbf8528c2570188460bb82d03d4948a4f457015b514dcd9645e683ea',
                                 [1064475214, 1064993846, 1051337244, 1055913296, 1058137146,
                                  1042905504, 1050595796, 1060143564]),
 'uniform(k0,(7,),bfloat16)': ('bits', 'bfloat16', [7],
                               [16166, 16146, 15904, 15952, 16182, 16004, 16120]),
 'uniform(k0,(7,),float16)': ('bits', 'float16', [7],
                              [13560, 13008, 11008, 14656, 13168, 13972, 15186]),
 'uniform(k0,(7,),float32)': ('bits', 'float32', [7],
                              [1064475214, 1064993846, 1051337244, 1055913296, 1058137146,
                               1042905504, 1050595796]),
 'uniform(k42,(2,3),float32,-2.5,3.0)': ('bits', 'float32', [2, 3],
                                         [1044408716, 1067357124, 1063499220, 1058400544,
                                          3165634976, 1060693549]),
 'uniform(kr,(2,3),float32,[0,1,2],[1,3,7])': ('bits', 'float32', [2, 3],
                                               [1050355424, 1067782344, 1086179476, 1057750840,
                                                1067146626, 1085978607])}

PINS_X64 = {'normal(k42,(3,),complex128)': ('bits', 'float64', [3, 2], [13826134888956458425, 4601950011527785402, 13819179725390586835, 4590701191675950707, 4608033817524124471, 13831005084623384111]),
 'PRNGKey(np.int64(-1))': ('int', 'uint32', [2], [4294967295, 4294967295]),
 'PRNGKey(np.int64(1099511627779))': ('int', 'uint32', [2], [256, 3]),
 'PRNGKey(np.int64(9223372036854775807))': ('int', 'uint32', [2], [2147483647, 4294967295]),
 'PRNGKey(np.uint64(18446744073709551615))': ('int', 'uint32', [2], [4294967295, 4294967295]),
 'bernoulli(kr,float64 0.3,(6,))': ('int', 'bool', [6], [False, False, False, True, False, True]),
 'bits(k0,(2,3),uint64)': ('int', 'uint64', [2, 3],
                           [7719171245655871230, 3989946895414531357, 17807037942121513089,
                            10597664315880824766, 9817845818006947190, 6546845030869727645]),
 'bits(k42,(2,3),uint64)': ('int', 'uint64', [2, 3],
                            [7871734211187709741, 276886910877598708, 10591095138341673235,
                             13462782411356743825, 12687676868490354166, 11878554724538143822]),
 'bits(kr,(2,3),uint64)': ('int', 'uint64', [2, 3],
                           [17088912606979912643, 8956850235097601611, 7002784049688088133,
                            3277722750210537128, 16413494611354710230, 2342148964311728704]),
 'exponential(k0,(5,),float64)': ('bits', 'float64', [5],
                                  [4603057757045831127, 4597949073452570790, 4614752146199049055,
                                   4605871795515782058, 4605018628775737499]),
 'gumbel(k0,(5,),float64)': ('bits', 'float64', [5],
                             [4594136595314349720, 13824717663298318111, 4614712525434929946,
                              4603490653873327473, 4601975301508970627]),
 'gumbel(k0,(5,),float64,high)': ('bits', 'float64', [5],
                                  [4603690860068303774, 4609036650680381296, 13831511142904772567,
                                   4594833499044737143, 4598620862290021991]),
 'normal(k0,(5,),float64)': ('bits', 'float64', [5],
                             [13819956301806572573, 13828615798116809546, 4610857746434946967,
                              4595935814102313387, 4590491565605667708]),
 'normal(k42,(5,),float64)': ('bits', 'float64', [5],
                              [13819194999123091801, 13835440466195626554, 4595903083341743200,
                               4603690015613010774, 4602491918895960593]),
 'normal(kr,(5,),float64)': ('bits', 'float64', [5],
                             [4609206490188579977, 13808753304711053270, 13822564611125424438,
                              13829871896532562509, 4608197281402727514]),
 'randint(k0,(5,),-10**12,10**12,int64)': ('int', 'int64', [5],
                                           [57961561871, 706803357823, 73035129551, -640562232363,
                                            708807963317]),
 'randint(k42,(5,),0,1000,uint64)': ('int', 'uint64', [5], [85, 718, 503, 271, 505]),
 'truncated_normal(k42,-1.0,2.0,(6,),float64)': ('bits', 'float64', [6],
                                                 [4581417368833038278, 13830108127940749743,
                                                  4599585232472426070, 4604423980516909685,
                                                  4603470139163682750, 4602389175271794370]),
 'uniform(k0,(5,),float64)': ('bits', 'float64', [5],
                              [4601209873087491728, 4596960885320641928, 4606870062290452936,
                               4603349860324515098, 4602969089573600120]),
 'uniform(k42,(4,),float64,-2.5,3.0)': ('bits', 'float64', [4],
                                        [13818052404845978196, 13835998056994447402,
                                         4604100103860025103, 4609497286721032703]),
 'uniform(k42,(5,),float64)': ('bits', 'float64', [5],
                               [4601358860358518916, 4579806337745978368, 4603346652718294810,
                                4604748843769571700, 4604370374266218970]),
 'uniform(kr,(5,),float64)': ('bits', 'float64', [5],
                              [4606519415154153326, 4602418543975618420, 4600510276216429440,
                               4595569822537040376, 4606189621210976958])}

