"""pullback.image (image/, primitives/resize.py, csrc/resize.c): resize and scale_and_translate
against JAX's values (hard-coded, and JAX itself as an optional oracle over hypothesis-drawn
shapes, methods, antialias, scales and translations); the banded contraction and the repeat
kernels against their NumPy references over shapes, dtypes and layouts; dtypes (f32, f64,
bf16, f16, integers, bool, complex) with JAX's rules; derivatives to second order in both modes
(image, scale, translation); vmap against a loop; jit against eager; errors naming the
argument."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
from pullback import numpy as jnp
from pullback.image import ResizeMethod
from pullback.primitives.resize import (contract_reference, repeat_reference,
                                        resize_contract_p, resize_repeat_p)
from pullback.test_util import check_grads, check_vmap
from pullback.tracer import dtypes

BF16 = dtypes.bfloat16
METHODS = ["linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]
ALL_METHODS = ["nearest"] + METHODS

X = (np.arange(12, dtype=np.float32).reshape(3, 4) ** 1.5) / 7

# jax 0.10.2: jax.image.resize(X, shape, method, antialias=...)
JAX_RESIZE = [
    ('linear', (5, 7), True, [[0.0, 0.05102042108774185, 0.13265307247638702, 0.2734590768814087, 0.42822155356407166, 0.6215052604675293, 0.7423075437545776], [0.4571428596973419, 0.5526600480079651, 0.7054874897003174, 0.9034262895584106, 1.1123634576797485, 1.3531767129898071, 1.5036851167678833], [1.1428570747375488, 1.3051193952560425, 1.5647389888763428, 1.848376989364624, 2.1385762691497803, 2.450683832168579, 2.6457512378692627], [2.3966360092163086, 2.595395565032959, 2.9134109020233154, 3.251755952835083, 3.595710277557373, 3.9585988521575928, 4.185404300689697], [3.232487916946411, 3.4555792808532715, 3.8125247955322266, 4.187341213226318, 4.567132472991943, 4.963874816894531, 5.211838722229004]]),  # noqa: E501
    ('linear', (2, 3), True, [[0.5064697861671448, 0.8640533685684204, 1.331231713294983], [2.617112159729004, 3.310230016708374, 4.057929515838623]]),  # noqa: E501
    ('linear', (2, 3), False, [[0.3225020468235016, 0.6671885848045349, 1.1531298160552979], [2.8070926666259766, 3.60260009765625, 4.460771560668945]]),  # noqa: E501
    ('cubic', (4, 6), True, [[-0.06802948564291, -0.014755487442016602, 0.10034555196762085, 0.2680845856666565, 0.5034348368644714, 0.6644124388694763], [0.5482281446456909, 0.6995514035224915, 0.9576819539070129, 1.226038932800293, 1.563252568244934, 1.7854081392288208], [1.9674750566482544, 2.222973346710205, 2.6364567279815674, 3.022006034851074, 3.481182813644409, 3.7776074409484863], [3.2999672889709473, 3.6004579067230225, 4.084224700927734, 4.53007173538208, 5.0548505783081055, 5.392075061798096]]),  # noqa: E501
    ('lanczos3', (2, 5), True, [[0.23712000250816345, 0.38515982031822205, 0.6267156600952148, 0.9696323871612549, 1.2328301668167114], [2.569214105606079, 2.949385404586792, 3.4814302921295166, 4.057413101196289, 4.487502574920654]]),  # noqa: E501
    ('lanczos5', (5, 2), True, [[0.09492030739784241, 0.5618138313293457], [0.14816826581954956, 0.7469869256019592], [1.3721654415130615, 2.3597233295440674], [3.0708417892456055, 4.347438812255859], [3.6652326583862305, 4.960094451904297]]),  # noqa: E501
    ('nearest', (5, 3), True, [[0.0, 0.4040610194206238, 0.7423075437545776], [0.0, 0.4040610194206238, 0.7423075437545776], [1.1428571939468384, 2.099562644958496, 2.6457512378692627], [3.2324881553649902, 4.5175395011901855, 5.211838722229004], [3.2324881553649902, 4.5175395011901855, 5.211838722229004]]),  # noqa: E501
    ('area', (2, 6), True, [[0.3809524178504944, 0.5042938590049744, 0.6276353001594543, 0.9692282676696777, 1.173008680343628, 1.376788854598999], [2.535944700241089, 2.81988525390625, 3.103825807571411, 3.711547374725342, 4.0340118408203125, 4.356476306915283]]),  # noqa: E501
    ('cubic-pytorch', (4, 5), False, [[-0.08935163915157318, -0.02203981950879097, 0.14140120148658752, 0.3994580805301666, 0.6253252029418945], [0.4818077087402344, 0.6907199025154114, 1.0115487575531006, 1.3937705755233765, 1.7055637836456299], [1.9880088567733765, 2.353330612182617, 2.8574576377868652, 3.3953943252563477, 3.8173744678497314], [3.3437860012054443, 3.7676076889038086, 4.348846435546875, 4.961829662322998, 5.438849925994873]]),  # noqa: E501
]
# jax.image.scale_and_translate(X, (4, 3), (0, 1), [1.5, 0.8], [0.25, -0.5], "linear")
JAX_SAT = [[0.0952381044626236, 0.41506707668304443, 0.7423075437545776], [0.5454076528549194, 0.9786520600318909, 1.3767887353897095], [1.4457471370697021, 2.1058223247528076, 2.645751714706421], [2.91453218460083, 3.716862440109253, 4.356476306915283]]  # noqa: E501


def normal(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.x32  # JAX's default mode, as the oracle runs
@pytest.mark.parametrize("method,shape,antialias,want", JAX_RESIZE)
def test_resize_matches_jax_values(method, shape, antialias, want):
    got = pb.image.resize(X, shape, method, antialias=antialias)
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_allclose(np.asarray(got), np.array(want, np.float32), rtol=2e-6,
                               atol=2e-6)


@pytest.mark.x32  # JAX's default mode, as the oracle runs
def test_scale_and_translate_matches_jax_values():
    got = pb.image.scale_and_translate(X, (4, 3), (0, 1), jnp.array([1.5, 0.8]),
                                       jnp.array([0.25, -0.5]), "linear")
    np.testing.assert_allclose(np.asarray(got), np.array(JAX_SAT, np.float32), rtol=2e-6,
                               atol=2e-6)


@pytest.mark.x32  # JAX's default mode, as the oracle runs
def test_methods_and_aliases():
    assert ResizeMethod.from_string("bilinear") is ResizeMethod.LINEAR
    assert ResizeMethod.from_string("trilinear") is ResizeMethod.LINEAR
    assert ResizeMethod.from_string("triangle") is ResizeMethod.LINEAR
    assert ResizeMethod.from_string("bicubic") is ResizeMethod.CUBIC
    assert ResizeMethod.from_string("tricubic") is ResizeMethod.CUBIC
    assert ResizeMethod.from_string("bicubic-pytorch") is ResizeMethod.CUBIC_PYTORCH
    a = pb.image.resize(X, (5, 7), ResizeMethod.LINEAR)
    b = pb.image.resize(X, (5, 7), "bilinear")
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # cubic-pytorch with antialias is cubic (JAX)
    np.testing.assert_array_equal(np.asarray(pb.image.resize(X, (4, 6), "cubic-pytorch")),
                                  np.asarray(pb.image.resize(X, (4, 6), "cubic")))


# ---- an independent formula: linear interpolation with half-pixel centers ----

def linear_1d(x, n, axis):
    """Upsampling linear interpolation written directly (no weight matrix): the sample of
    output j is (j + 0.5) m / n - 0.5, between the two nearest pixels, clamped at the edges."""
    m = x.shape[axis]
    pos = (np.arange(n) + 0.5) * m / n - 0.5
    lo = np.floor(pos).astype(int)
    frac = pos - lo
    a = np.take(x, np.clip(lo, 0, m - 1), axis)
    b = np.take(x, np.clip(lo + 1, 0, m - 1), axis)
    shape = [1] * x.ndim
    shape[axis] = n
    frac = frac.reshape(shape)
    return a * (1 - frac) + b * frac


@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 3), st.integers(0, 3))
def test_linear_upsample_matches_the_interpolation_formula(m1, m2, k1, k2):
    x = normal((2, m1, m2), 1)
    n1, n2 = m1 + k1, m2 + k2
    want = linear_1d(linear_1d(x, n1, 1), n2, 2)
    with pb.enable_x64():
        got = pb.image.resize(x, (2, n1, n2), "linear")
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


# ---- JAX as the oracle ----

@st.composite
def resize_cases(draw):
    nd = draw(st.integers(1, 4))
    ins = tuple(draw(st.integers(1, 7)) for _ in range(nd))
    outs = tuple(draw(st.sampled_from([m, m, 0, 1, 2 * m, m + 3, max(m // 2, 1), 11]))
                 for m in ins)
    return ins, outs, draw(st.sampled_from(ALL_METHODS)), draw(st.booleans())


@pytest.mark.x32  # JAX's default mode, as the oracle runs
@given(resize_cases())
def test_resize_against_jax(case):
    jax = pytest.importorskip("jax")
    ins, outs, method, antialias = case
    x = normal(ins, 2, np.float32)
    want = np.asarray(jax.image.resize(x, outs, method, antialias=antialias))
    got = pb.image.resize(x, outs, method, antialias=antialias)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@given(st.integers(1, 7), st.integers(0, 9), st.floats(0.3, 3.0), st.floats(-2.0, 2.0),
       st.sampled_from(METHODS), st.booleans())
@pytest.mark.x32  # JAX's default mode, as the oracle runs
def test_scale_and_translate_against_jax(m, n, scale, translation, method, antialias):
    jax = pytest.importorskip("jax")
    x = normal((2, m, 3), 3, np.float32)
    s = np.array([scale, 1.0], np.float32)
    t = np.array([translation, 0.5], np.float32)
    want = np.asarray(jax.image.scale_and_translate(x, (2, n, 3), (1, -1), s, t, method,
                                                    antialias=antialias))
    got = pb.image.scale_and_translate(x, (2, n, 3), (1, -1), s, t, method,
                                       antialias=antialias)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16, np.uint8, np.int32,
                                   np.bool_, np.complex64])
@pytest.mark.x32  # JAX's default mode, as the oracle runs
@pytest.mark.parametrize("method", ["nearest", "linear", "lanczos3"])
def test_dtypes_against_jax(dtype, method):
    jax = pytest.importorskip("jax")
    x = (normal((2, 5, 6), 4) * 50).astype(dtype) if dtype != np.complex64 else \
        (normal((2, 5, 6), 4) + 1j * normal((2, 5, 6), 5)).astype(dtype)
    for outs in [(2, 10, 12), (2, 3, 4), (2, 7, 6)]:
        want = np.asarray(jax.image.resize(x, outs, method))
        got = pb.image.resize(x, outs, method)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        tol = {np.float16: 2e-3, BF16: 1.6e-2}.get(dtype, 2e-6)
        scale = np.abs(want.astype(np.complex128)).max(initial=1)
        np.testing.assert_allclose(np.asarray(got).astype(np.complex128),
                                   want.astype(np.complex128), rtol=tol, atol=tol * scale)


@pytest.mark.x32  # JAX's default mode, as the oracle runs
def test_dtype_rules_without_jax():
    x = np.arange(24, dtype=np.uint8).reshape(4, 6)
    assert pb.image.resize(x, (8, 12), "nearest").dtype == np.uint8
    assert pb.image.resize(x, (8, 12), "linear").dtype == np.float32
    assert pb.image.resize(x.astype(bool), (8, 12), "cubic").dtype == np.float32
    assert pb.image.resize(x.astype(BF16), (8, 12), "linear").dtype == BF16
    with pb.enable_x64():
        assert pb.image.resize(x.astype(np.int32), (8, 12), "linear").dtype == np.float32
        assert pb.image.resize(x.astype(np.float64), (8, 12), "linear").dtype == np.float64
    # 16-bit images compute in float32 (weights rounded to the image's dtype, one rounding per
    # pass): close to the float32 resize of the same values
    for dt, tol in ((BF16, 3e-2), (np.float16, 4e-3)):
        h = (normal((3, 6, 5), 33) * 4).astype(dt)
        for method in ("linear", "lanczos3", "area"):
            got = np.asarray(pb.image.resize(h, (3, 11, 3), method)).astype(np.float32)
            want = np.asarray(pb.image.resize(h.astype(np.float32), (3, 11, 3), method))
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 8)
    # an integer image resizes as its float32 conversion
    np.testing.assert_allclose(np.asarray(pb.image.resize(x, (3, 5), "linear")),
                               np.asarray(pb.image.resize(x.astype(np.float32), (3, 5),
                                                          "linear")), rtol=0, atol=0)


# ---- nearest: JAX's float32 rounding of the sample positions; the repeat fast path ----

def nearest_np(x, shape):
    for d, n in enumerate(shape):
        m = x.shape[d]
        if m != n:
            f = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m) / np.float32(n)
            x = np.take(x, np.floor(f).astype(np.int32), axis=d)
    return x


@given(st.lists(st.tuples(st.integers(1, 9), st.integers(0, 20)), min_size=1, max_size=4),
       st.sampled_from([np.float32, np.int8, np.bool_, np.float16, np.int64]))
def test_nearest_matches_numpy(sizes, dtype):
    ins = tuple(m for m, _ in sizes)
    outs = tuple(n for _, n in sizes)
    x = (normal(ins, 6) * 10).astype(dtype)
    got = pb.image.resize(x, outs, "nearest")
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(got), nearest_np(x, outs))


def test_nearest_integer_upsample_is_one_repeat():
    jaxpr = str(pb.make_jaxpr(lambda x: pb.image.resize(x, (2, 3, 8, 12), "nearest"))(
        np.zeros((2, 3, 4, 6), np.float32)))
    assert "resize_repeat" in jaxpr and "gather" not in jaxpr
    jaxpr = str(pb.make_jaxpr(lambda x: pb.image.resize(x, (2, 3, 6, 12), "nearest"))(
        np.zeros((2, 3, 4, 6), np.float32)))
    assert "resize_repeat" in jaxpr and "gather" in jaxpr  # 4 -> 6 is a gather
    x = normal((2, 3, 4, 6), 7, np.float32)
    np.testing.assert_array_equal(np.asarray(pb.image.resize(x, (2, 3, 8, 12), "nearest")),
                                  x.repeat(2, 2).repeat(2, 3))


# ---- the primitives against their NumPy references ----

def _layout(x, kind):
    if x.ndim == 0:
        return x
    if kind == "transposed":
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, 0, -1)), 0, -1)
    if kind == "strided":
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    if kind == "flipped":
        return np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    if kind == "broadcast":
        return np.broadcast_to(x[:1], x.shape)
    return x


def _pb_layout(x, kind):
    """x as a pullback Array laid out as ``kind``: NumPy views are copied on the way in, so
    the kernels see negative and permuted strides only from pullback's own views."""
    if x.ndim == 0 or not kind.startswith("pb_"):
        return jnp.asarray(_layout(x, kind))
    d = {"pb_flip_last": x.ndim - 1, "pb_flip_first": 0}.get(kind)
    if d is not None:
        return jnp.flip(jnp.asarray(np.flip(x, d).copy()), d)
    perm = tuple(range(x.ndim))[::-1]  # pb_transposed: a transposed view of the reversed copy
    return jnp.transpose(jnp.asarray(np.ascontiguousarray(np.transpose(x, perm))), perm)


LAYOUTS = ["contiguous", "transposed", "strided", "flipped", "broadcast", "pb_flip_last",
           "pb_flip_first", "pb_transposed"]


@st.composite
def contract_cases(draw):
    nd = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(0, 6)) for _ in range(nd))
    axis = draw(st.integers(0, nd - 1))
    n = draw(st.integers(0, 7))
    density = draw(st.sampled_from(["band", "dense", "zero"]))
    return (shape, axis, n, density, draw(st.sampled_from([np.float32, np.float64, np.float16,
                                                           BF16])),
            draw(st.sampled_from(LAYOUTS)), draw(st.booleans()),
            draw(st.sampled_from([(), (np.nan,), (np.inf,), (np.nan, -np.inf)])))


@given(contract_cases())
def test_resize_contract_matches_reference(case):
    shape, axis, n, density, dtype, layout, w_transposed, planted = case
    m = shape[axis]
    xn = normal(shape, 8).astype(dtype)
    for k, v in enumerate(planted):  # 0 * NaN and 0 * Inf outside a band are NaN, as dense
        if xn.size:
            xn.flat[(7 * k + 3) % xn.size] = v
    x = _pb_layout(xn, layout)
    w = normal((m, n), 9)
    if density == "band":  # a band of 1-3 taps per column, a zero inside some bands
        i, j = np.indices((m, n))
        w = np.where(np.abs(i - j * m / max(n, 1)) < 2, w, 0)
        if w.size:
            w.flat[::5] = 0
    elif density == "zero":
        w = np.zeros((m, n))
    w = w.astype(dtype)
    if w_transposed:  # the transpose rule hands the kernel a transposed view
        w = np.ascontiguousarray(w.T).T
    got = resize_contract_p.bind(x, jnp.asarray(w), axis=axis)
    want = contract_reference(np.asarray(x), w, axis=axis)
    assert got.dtype == xn.dtype and got.shape == want.shape
    tol = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 4e-3}.get(dtype, 3e-2)
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), want.astype(np.float64),
                               rtol=tol, atol=tol * 4)


def test_resize_contract_nan_weight_and_zero_skip():
    x = np.ones((2, 4), np.float32)
    w = np.zeros((4, 3), np.float32)
    w[1, 0], w[3, 0] = 0.5, 0.25  # a band with a zero inside
    w[2, 1] = np.nan               # a NaN weight is a tap
    got = np.asarray(resize_contract_p.bind(jnp.asarray(x), jnp.asarray(w), axis=1))
    np.testing.assert_array_equal(got[:, 0], [0.75, 0.75])
    assert np.isnan(got[:, 1]).all() and (got[:, 2] == 0).all()


@given(st.lists(st.integers(0, 4), min_size=0, max_size=5),
       st.lists(st.integers(1, 3), min_size=5, max_size=5),
       st.sampled_from([np.float32, np.float64, np.int16, np.bool_, np.complex64, BF16]),
       st.sampled_from(LAYOUTS))
def test_resize_repeat_matches_reference(shape, factors, dtype, layout):
    xn = (normal(tuple(shape), 10) * 5).astype(dtype)
    f = tuple(factors[:len(shape)])
    x = _pb_layout(xn, layout)
    got = resize_repeat_p.bind(x, factors=f)
    np.testing.assert_array_equal(np.asarray(got), repeat_reference(np.asarray(x), factors=f))


# ---- derivatives ----

@pytest.mark.parametrize("method", ALL_METHODS)
def test_resize_grads(method):
    x = normal((2, 5, 6), 11)
    with pb.enable_x64():
        for outs in [(2, 9, 4), (2, 10, 12), (3, 5, 6)]:
            check_grads(lambda x: pb.image.resize(x, outs, method), (x,), order=2,
                        modes=("fwd", "rev"))


# scales and translations away from the kernels' kinks (the area and linear kernels are
# piecewise linear in them; cubic's second derivative jumps): central differences see no step
@pytest.mark.parametrize("method", METHODS)
def test_scale_and_translate_grads(method):
    x = normal((2, 5, 6), 12)
    s, t = np.array([1.37, 0.73]), np.array([0.21, -0.43])
    with pb.enable_x64():
        f = lambda x, s, t: pb.image.scale_and_translate(x, (2, 7, 5), (1, 2), s, t, method)
        check_grads(f, (x, s, t), order=2, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)


@pytest.mark.x32  # JAX's default mode, as the oracle runs
def test_scale_and_translate_grads_match_jax():
    jax = pytest.importorskip("jax")
    x = normal((2, 5, 6), 13, np.float32)
    s, t = np.array([1.37, 0.73], np.float32), np.array([0.21, -0.43], np.float32)

    def loss(mod):
        return lambda x, s, t: (mod.image.scale_and_translate(
            x, (2, 7, 5), (1, 2), s, t, "lanczos3") ** 2).sum()
    want = jax.grad(loss(jax), (0, 1, 2))(x, s, t)
    got = pb.grad(loss(pb), (0, 1, 2))(x, s, t)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-4)


def test_resize_contract_rules():
    x, w = normal((2, 4, 3), 14), normal((4, 5), 15)
    w[0, 3:] = 0
    with pb.enable_x64():
        f = lambda x, w: resize_contract_p.bind(x, w, axis=1)
        check_grads(f, (x, w), order=2, modes=("fwd", "rev"))
        # the transposes: <ct, f(x, w)> = <f^T(ct), x> = <dw(ct), w>
        ct = normal((2, 5, 3), 16)
        _, vjp = pb.vjp(f, x, w)
        gx, gw = vjp(ct)
        np.testing.assert_allclose(np.asarray(gx), np.einsum("bjc,ij->bic", ct, w), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(gw), np.einsum("bjc,bic->ij", ct, x), rtol=1e-12)


def test_resize_repeat_rules():
    x = normal((2, 3, 4), 17)
    with pb.enable_x64():
        f = lambda x: resize_repeat_p.bind(x, factors=(1, 2, 3))
        check_grads(f, (x,), order=2, modes=("fwd", "rev"))
        ct = normal((2, 6, 12), 18)
        (g,) = pb.vjp(f, x)[1](ct)
        np.testing.assert_allclose(np.asarray(g), ct.reshape(2, 3, 2, 4, 3).sum((2, 4)),
                                   rtol=1e-12)


# ---- vmap ----

def test_vmap_against_a_loop():
    x = normal((2, 5, 6), 19)
    s, t = np.array([1.37, 0.73]), np.array([0.21, -0.43])
    with pb.enable_x64():
        for method in ["linear", "nearest", "lanczos3"]:
            check_vmap(lambda x: pb.image.resize(x, (2, 9, 4), method), (x,), atol=1e-12,
                       rtol=1e-12)
            check_vmap(lambda x: pb.image.resize(x, (2, 10, 12), method), (x,), atol=1e-12,
                       rtol=1e-12)
        # every argument batched or not, in each position (scale batched: one weight matrix
        # per example)
        check_vmap(lambda x, s, t: pb.image.scale_and_translate(x, (2, 7, 5), (1, 2), s, t,
                                                                "cubic"),
                   (x, s, t), atol=1e-10, rtol=1e-10)
        check_vmap(lambda x, w: resize_contract_p.bind(x, w, axis=1), (x, normal((5, 3), 20)),
                   atol=1e-12, rtol=1e-12)
        check_vmap(lambda x: resize_repeat_p.bind(x, factors=(2, 1, 3)), (x,), atol=0, rtol=0)


def test_vmap_in_axes_and_many_dims():
    x = normal((3, 4, 2, 5), 21, np.float32)
    got = pb.vmap(lambda x: pb.image.resize(x, (8, 4, 10), "linear"), in_axes=1)(x)
    want = np.stack([np.asarray(pb.image.resize(x[:, i], (8, 4, 10), "linear"))
                     for i in range(4)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
    # the repeat kernel's dims limit: a rank-8 image vmapped merges the batch into a dim
    y = normal((2,) + (1,) * 6 + (3,), 22, np.float32)
    f = lambda y: resize_repeat_p.bind(y, factors=(2,) + (1,) * 6 + (2,))
    got = pb.vmap(f, in_axes=0)(np.stack([y, y + 1]))
    np.testing.assert_array_equal(np.asarray(got), np.stack([np.asarray(f(y)),
                                                             np.asarray(f(y + 1))]))


# ---- jit ----

def test_jit_equals_eager():
    x = normal((2, 3, 6, 7), 23, np.float32)
    s, t = np.array([1.37, 0.73], np.float32), np.array([0.21, -0.43], np.float32)
    for method in ALL_METHODS:
        f = lambda x: pb.image.resize(x, (2, 3, 12, 5), method)
        np.testing.assert_allclose(np.asarray(pb.jit(f)(x)), np.asarray(f(x)), rtol=1e-6,
                                   atol=1e-6)
    for method in METHODS:
        g = lambda x, s, t: pb.image.scale_and_translate(x, (2, 3, 9, 4), (2, 3), s, t, method)
        np.testing.assert_allclose(np.asarray(pb.jit(g)(x, s, t)), np.asarray(g(x, s, t)),
                                   rtol=1e-5, atol=1e-5)
    grad = pb.jit(pb.grad(lambda x, s: pb.image.scale_and_translate(
        x, (2, 3, 9, 4), (2, 3), s, t, "cubic").sum(), (0, 1)))
    eager = pb.grad(lambda x, s: pb.image.scale_and_translate(
        x, (2, 3, 9, 4), (2, 3), s, t, "cubic").sum(), (0, 1))
    for a, b in zip(grad(x, s), eager(x, s)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)


# ---- errors ----

def test_errors_name_the_argument():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="argument 'shape' must have length"):
        pb.image.resize(x, (3, 4, 5), "linear")
    with pytest.raises(ValueError,
                       match='resize: argument \'method\': Unknown resize method "foo"'):
        pb.image.resize(x, (6, 8), "foo")
    with pytest.raises(ValueError, match="scale_and_translate: argument 'method'"):
        pb.image.scale_and_translate(x, (6, 8), (0, 1), [2.0, 2.0], [0.0, 0.0], "bilinearr")
    with pytest.raises(TypeError, match="resize: argument 'method'"):
        pb.image.resize(x, (6, 8), 3)
    with pytest.raises(TypeError, match="resize: argument 'shape'"):
        pb.image.resize(x, (6, -8), "linear")
    with pytest.raises(TypeError, match="resize: argument 'shape'"):
        pb.image.resize(x, (6, 8.0), "linear")
    with pytest.raises(ValueError, match="argument 'image' .* from size 0"):
        pb.image.resize(np.ones((0, 4)), (2, 4), "linear")
    with pytest.raises(ValueError, match="argument 'image' .* from size 0"):
        pb.image.resize(np.ones((0, 4)), (2, 4), "nearest")
    s, t = jnp.array([2.0, 2.0]), jnp.array([0.0, 0.0])
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently"):
        pb.image.scale_and_translate(x, (6, 8), (0, 1), s, t, "nearest")
    with pytest.raises(ValueError, match="argument 'scale' must have shape \\(1,\\)"):
        pb.image.scale_and_translate(x, (6, 8), (0,), s, t[:1], "linear")
    with pytest.raises(ValueError, match="argument 'translation' must have shape \\(2,\\)"):
        pb.image.scale_and_translate(x, (6, 8), (0, 1), s, t[:1], "linear")
    with pytest.raises(ValueError, match="argument 'spatial_dims'"):
        pb.image.scale_and_translate(x, (6, 8), (0, 2), s, t, "linear")
    with pytest.raises(ValueError, match="argument 'spatial_dims' repeats"):
        pb.image.scale_and_translate(x, (6, 8), (0, -2), s, t, "linear")
    with pytest.raises(ValueError, match="argument 'shape' changes dimension 1"):
        pb.image.scale_and_translate(x, (6, 8), (0,), s[:1], t[:1], "linear")
    with pytest.raises(ValueError, match="resize_contract: argument 'w' must be a matrix"):
        resize_contract_p.bind(jnp.ones((2, 3)), jnp.ones((4, 5)), axis=1)
    with pytest.raises(TypeError, match="resize_contract: argument 'x' must be"):
        resize_contract_p.bind(jnp.ones((2, 3), jnp.int32), jnp.ones((3, 5), jnp.int32),
                               axis=1)
    with pytest.raises(ValueError, match="resize_repeat: argument 'factors'"):
        resize_repeat_p.bind(jnp.ones((2, 3)), factors=(1, 0))


def test_zero_size_and_size_one_dims():
    # normalized weights: an all-ones image stays all ones, whatever the sizes
    for ins, outs in [((0, 3, 4), (0, 6, 8)), ((2, 0, 4), (2, 0, 8)), ((2, 3, 4), (2, 3, 0)),
                      ((1, 1), (5, 1)), ((3, 1), (1, 1)), ((1, 7), (1, 2))]:
        for method in ALL_METHODS:
            for antialias in (True, False):
                got = pb.image.resize(np.ones(ins, np.float32), outs, method,
                                      antialias=antialias)
                assert got.shape == outs
                np.testing.assert_allclose(np.asarray(got), np.ones(outs), rtol=1e-6)


@pytest.mark.x32  # JAX's default mode, as the oracle runs
@pytest.mark.parametrize("method", ALL_METHODS)
def test_nchw_and_nhwc_against_jax(method):
    # NCHW and NHWC images, the layouts of the benchmarks and the CNN
    jax = pytest.importorskip("jax")
    x = normal((4, 3, 9, 7), 32, np.float32)
    for outs in [(4, 3, 18, 14), (4, 3, 4, 5), (4, 3, 9, 12)]:
        for arr, shape in [(x, outs), (x.transpose(0, 2, 3, 1),
                                       (outs[0], outs[2], outs[3], outs[1]))]:
            want = np.asarray(jax.image.resize(arr, shape, method))
            got = pb.image.resize(arr, shape, method)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
