"""The jax.nn functions added in issue 26 (tanh, identity, mish, hard_silu, log1mexp,
logmeanexp, sparse_sigmoid; sparse_plus and squareplus were there): values against NumPy
references, JAX 0.10's values and derivative conventions at the kinks hard-coded (JAX itself
as an optional oracle), dtypes, derivatives against finite differences, vmap and jit."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import nn
from pullback.test_util import check_grads, check_vmap
from pullback.tracer import dtypes

BF16 = dtypes.bfloat16
XS = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0])


def _softplus(x):
    return np.logaddexp(x, 0)


# name, function, NumPy reference, JAX 0.10's values at XS, JAX's derivatives at XS
ELEMENTWISE = [
    ("sparse_sigmoid", nn.sparse_sigmoid, lambda x: 0.5 * np.clip(x + 1, 0, 2),
     [0, 0, 0.5, 1, 1, 1], [0, 0.25, 0.5, 0.25, 0, 0]),
    ("sparse_plus", nn.sparse_plus,
     lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
     [0, 0, 0.25, 1, 3, 6], [0, 0, 0.5, 1, 1, 1]),
    ("hard_silu", nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6,
     [0, -0.33333333, 0, 0.66666667, 3, 6], [0, 0.16666667, 0.5, 0.83333333, 1, 1]),
    ("mish", nn.mish, lambda x: x * np.tanh(_softplus(x)),
     [-0.14564746, -0.30340146, 0, 0.86509839, 2.986535, 5.99992663],
     [-0.09339311, 0.05921676, 0.6, 1.04903622, 1.02110691, 1.00013414]),
    ("squareplus", nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2,
     [0.30277564, 0.61803399, 1, 1.61803399, 3.30277564, 6.16227766],
     [0.08397485, 0.2763932, 0.5, 0.7236068, 0.91602515, 0.97434165]),
    ("tanh", nn.tanh, np.tanh, np.tanh(XS), 1 - np.tanh(XS) ** 2),
    ("identity", nn.identity, lambda x: x, XS, np.ones(6)),
]
IDS = [c[0] for c in ELEMENTWISE]


@pytest.mark.parametrize("name,f,ref,values,grads", ELEMENTWISE, ids=IDS)
def test_values_and_kink_derivatives_are_jax_s(name, f, ref, values, grads):
    np.testing.assert_allclose(np.asarray(f(XS)), values, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(np.asarray(pb.vmap(pb.grad(f))(XS)), grads, rtol=1e-7,
                               atol=1e-8)
    np.testing.assert_allclose(np.asarray(pb.jit(pb.vmap(pb.grad(f)))(XS)), grads, rtol=1e-7,
                               atol=1e-8)


@pytest.mark.parametrize("name,f,ref,values,grads", ELEMENTWISE, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16])
def test_values_against_numpy_over_dtypes_and_layouts(name, f, ref, values, grads, dtype):
    x = np.random.default_rng(0).uniform(-5, 5, (4, 7)).astype(dtype)
    for arr in (x, x.T, x[:, ::-2], np.broadcast_to(x[:1], (3, 7)), x[:0]):
        got = f(arr)
        assert got.dtype == arr.dtype and got.shape == arr.shape
        tol = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-6}.get(np.dtype(dtype),
                                                                             2e-2)
        np.testing.assert_allclose(np.asarray(got).astype(np.float64),
                                   ref(arr.astype(np.float64)), rtol=tol, atol=tol)
        np.testing.assert_array_equal(np.asarray(pb.jit(f)(arr)), np.asarray(got))


@pytest.mark.parametrize("name,f,ref,values,grads", ELEMENTWISE, ids=IDS)
def test_derivatives_away_from_kinks(name, f, ref, values, grads):
    x = np.array([-2.3, -0.4, 0.3, 0.8, 2.1, 4.0])
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    check_vmap(f, (x,), atol=1e-12, rtol=1e-12)


def test_integer_inputs_promote_as_jax():
    assert nn.identity(np.int8(3)).dtype == np.int8
    assert nn.identity(3).weak_type
    # JAX 0.10 under x64 (the tests' mode): int32 goes to float32 through tanh and softplus,
    # to float64 through sparse_sigmoid's x + 1.0
    for f, want in ((nn.mish, np.float32), (nn.sparse_sigmoid, np.float64),
                    (nn.tanh, np.float32), (lambda v: nn.logmeanexp(v), np.float32)):
        assert f(np.array([1, 2], np.int32)).dtype == want
        assert f(np.array([1, 2], np.int64)).dtype == np.float64


@pytest.mark.x32
def test_integer_inputs_promote_as_jax_x32():
    for f in (nn.mish, nn.sparse_sigmoid, nn.tanh):
        assert f(np.array([1, 2], np.int32)).dtype == np.float32


def test_log1mexp():
    x = np.array([0.0, 1e-8, 0.5, 0.7, 1.0, 50.0])
    # JAX 0.10's values: log(-expm1(-x)) below log 2, log1p(-exp(-x)) above
    np.testing.assert_allclose(np.asarray(nn.log1mexp(x)),
                               [-np.inf, -1.84206807e+01, -9.32752130e-01, -6.86341003e-01,
                                -4.58675145e-01, -1.92874985e-22], rtol=1e-8)
    assert np.isnan(np.asarray(nn.log1mexp(np.array([-1.0]))))[0]
    # JAX's custom derivative 1 / expm1(x) (inf at 0)
    np.testing.assert_allclose(np.asarray(pb.vmap(pb.grad(nn.log1mexp))(np.array([0.0, 0.5, 1.0]))),
                               [np.inf, 1.54149408, 0.58197671], rtol=1e-8)
    check_grads(nn.log1mexp, (np.array([0.1, 0.69, 0.7, 3.0]),), order=2, modes=("fwd", "rev"))
    check_vmap(nn.log1mexp, (np.array([0.3, 2.0]),), atol=1e-12, rtol=1e-12)
    x = np.random.default_rng(1).uniform(1e-3, 30, 50)
    # Mächler's accurate pieces (log(-expm1(-x)) alone loses every digit for large x)
    want = np.where(x < np.log(2), np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))
    np.testing.assert_allclose(np.asarray(nn.log1mexp(x)), want, rtol=1e-12)


def test_logmeanexp():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(x, axis=1)), [1.62011451, 3.62011451],
                               rtol=1e-8)
    w = np.array([[True, False], [True, True]])
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(x, where=w)), 3.2503999281000766,
                               rtol=1e-12)
    got = nn.logmeanexp(x, axis=0, keepdims=True)
    assert got.shape == (1, 2)
    np.testing.assert_allclose(np.asarray(got),
                               np.log(np.mean(np.exp(x), axis=0, keepdims=True)), rtol=1e-12)
    assert np.all(np.isnan(np.asarray(nn.logmeanexp(np.zeros((2, 0)), axis=1))))
    y = np.random.default_rng(2).standard_normal((3, 4)) * 50
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(y, axis=(0, 1))),
                               np.logaddexp.reduce(y.ravel()) - np.log(12), rtol=1e-12)
    check_grads(lambda v: nn.logmeanexp(v, axis=1), (y / 50,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: nn.logmeanexp(v, axis=1, where=w), (x,), order=2)
    check_vmap(lambda v: nn.logmeanexp(v, axis=0), (y,), atol=1e-10, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(pb.jit(lambda v: nn.logmeanexp(v, axis=1))(y)),
                               np.asarray(nn.logmeanexp(y, axis=1)), rtol=1e-15)


def test_jax_as_oracle():
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(3).uniform(-4, 4, 40).astype(np.float32)
    x[:4] = [-3, -1, 1, 3]
    for name in ("tanh", "identity", "mish", "hard_silu", "sparse_sigmoid", "sparse_plus",
                 "squareplus"):
        jf, pf = getattr(jax.nn, name), getattr(nn, name)
        np.testing.assert_allclose(np.asarray(pf(x)), np.asarray(jf(x)), rtol=2e-6, atol=1e-6,
                                   err_msg=name)
        np.testing.assert_allclose(np.asarray(pb.vmap(pb.grad(pf))(x)),
                                   np.asarray(jax.vmap(jax.grad(jf))(x)), rtol=2e-6, atol=1e-6,
                                   err_msg=name)
    p = np.abs(x) + 1e-3
    np.testing.assert_allclose(np.asarray(nn.log1mexp(p)), np.asarray(jax.nn.log1mexp(p)),
                               rtol=2e-6)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(x.reshape(5, 8), axis=1)),
                               np.asarray(jax.nn.logmeanexp(x.reshape(5, 8), axis=1)), rtol=2e-6)


# ---- block-scaled matmul (JAX runs it only through cuDNN; the mathematics on CPU) ----

import ml_dtypes  # noqa: E402

DN = (((2,), (2,)), ((0,), (0,)))


def test_scaled_matmul_values():
    a = np.array([1, 2, 3]).reshape((1, 1, 3))
    b = np.array([4, 5, 6]).reshape((1, 1, 3))
    s = np.array([0.5]).reshape((1, 1, 1))
    got = nn.scaled_matmul(a, b, s, s)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), [[[8.0]]])  # JAX's docstring value
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((2, 5, 64)).astype(ml_dtypes.float8_e4m3fn)
    sa = (2.0 ** rng.integers(-3, 3, (2, 3, 2))).astype(ml_dtypes.float8_e8m0fnu)
    sb = (2.0 ** rng.integers(-3, 3, (2, 5, 2))).astype(ml_dtypes.float8_e8m0fnu)
    want = np.einsum("bmk,bnk->bmn", a.astype(np.float32) * np.repeat(sa.astype(np.float32), 32,
                                                                      -1),
                     b.astype(np.float32) * np.repeat(sb.astype(np.float32), 32, -1))
    np.testing.assert_allclose(np.asarray(nn.scaled_matmul(a, b, sa, sb)), want, rtol=1e-6)
    got = nn.scaled_matmul(a, b, sa, sb, preferred_element_type=dtypes.bfloat16)
    assert got.dtype == dtypes.bfloat16
    np.testing.assert_allclose(np.asarray(got).astype(np.float32), want, rtol=1e-2)
    # (jit's arguments must be pullback dtypes: E8M0 scales go in as their float32 values)
    sa32, sb32 = sa.astype(np.float32), sb.astype(np.float32)
    np.testing.assert_array_equal(np.asarray(pb.jit(nn.scaled_matmul)(a, b, sa32, sb32)),
                                  np.asarray(nn.scaled_matmul(a, b, sa, sb)))


def test_scaled_matmul_errors_are_jax_s():
    x = np.ones((1, 2, 4))
    s = np.ones((1, 2, 2))
    with pytest.raises(ValueError, match="scaled_matmul requires all inputs to be "
                                         "3-dimensional arrays"):
        nn.scaled_matmul(x[0], x, s, s)
    with pytest.raises(ValueError, match=r"matching batch \(B\) and contract \(K\) dimensions, "
                                         r"but got shapes \(1, 2, 4\) and \(2, 2, 4\)"):
        nn.scaled_matmul(x, np.ones((2, 2, 4)), s, s)
    with pytest.raises(ValueError, match="requires scales to have matching batch"):
        nn.scaled_matmul(x, x, s, np.ones((1, 2, 1)))
    with pytest.raises(ValueError, match="requires scales to match non-contract dimensions"):
        nn.scaled_matmul(x, x, np.ones((1, 3, 2)), s)
    with pytest.raises(ValueError, match="to be a multiple of the scales' K_s = 3"):
        nn.scaled_matmul(x, x, np.ones((1, 2, 3)), np.ones((1, 2, 3)))


def test_scaled_dot_general_configs():
    c = nn.get_scaled_dot_general_config("mxfp8")
    assert (c.mode, c.block_size, c.data_type, c.scale_type, c.global_scale, c.infer_only) == (
        "mxfp8", 32, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e8m0fnu, None, False)
    c = nn.get_scaled_dot_general_config("nvfp4")
    assert (c.mode, c.block_size, c.data_type, c.scale_type) == (
        "nvfp4", 16, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(np.asarray(c.global_scale), [1.0])
    assert c.global_scale.dtype == np.float32
    with pytest.raises(ValueError, match="Unsupported mode: fp8"):
        nn.get_scaled_dot_general_config("fp8")


def test_scaled_dot_general_quantizes():
    # 1.0625 lies halfway between float8_e4m3fn's 1.0 and 1.125 once scaled by its block's
    # power of two (2^-8, the E8M0 scale rounded up from 1.0625 / 448): it rounds to even, 1.0
    lhs = np.full((1, 1, 32), 1.0625, np.float32)
    rhs = np.ones((1, 1, 32), np.float32)
    mx = [nn.get_scaled_dot_general_config("mxfp8")] * 3
    np.testing.assert_array_equal(np.asarray(nn.scaled_dot_general(lhs, rhs, DN, configs=mx)),
                                  [[[32.0]]])
    np.testing.assert_array_equal(np.asarray(nn.scaled_dot_general(lhs, rhs, DN)), [[[34.0]]])
    # NVFP4: block maxima / 6 (E2M1's largest) give float8_e4m3fn scales 0.171875 for both
    # (1.0625 / 6 and 1 / 6 round there); 1.0625 / 0.171875 = 6.18 clips to 6, and
    # 1 / 0.171875 = 5.82 rounds to 6 on E2M1's grid (4, 6): 16 * (6 * 0.171875)^2
    fp4 = [nn.get_scaled_dot_general_config("nvfp4")] * 3
    np.testing.assert_allclose(np.asarray(nn.scaled_dot_general(lhs[..., :16], rhs[..., :16],
                                                                DN, configs=fp4)),
                               [[[16 * (6 * 0.171875) ** 2]]], rtol=1e-7)
    with pytest.raises(TypeError, match=r"Only support preferred_element_type in \(f32, bf16, "
                                        r"f16\), but got float64"):
        nn.scaled_dot_general(lhs, rhs, DN, preferred_element_type=np.float64, configs=mx)
    with pytest.raises(ValueError, match="must be a positive multiple of the block size 32"):
        nn.scaled_dot_general(lhs[..., :16], rhs[..., :16], DN, configs=mx)
    with pytest.warns(DeprecationWarning):
        nn.scaled_dot_general(lhs, rhs, DN, implementation="cudnn")


def _jax_scaled_dot_general_on_cpu(jax, monkeypatch):
    """JAX's own scaled_dot_general with its cuDNN matmul replaced by the same dequantising
    einsum: JAX's quantisation, shapes and custom VJP, runnable on CPU."""
    from jax._src.cudnn import scaled_matmul_stablehlo as S
    import jax.numpy as jjnp

    def matmul(a, b, sa, sb, preferred_element_type=np.float32):
        ka, kb = a.shape[-1] // sa.shape[-1], b.shape[-1] // sb.shape[-1]
        da = a.astype(np.float32) * jjnp.repeat(sa.astype(np.float32), ka, axis=-1)
        db = b.astype(np.float32) * jjnp.repeat(sb.astype(np.float32), kb, axis=-1)
        return jjnp.einsum("bmk,bnk->bmn", da, db).astype(preferred_element_type)
    monkeypatch.setattr(S, "scaled_matmul_wrapper", matmul)
    return jax.nn.scaled_dot_general


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
@pytest.mark.parametrize("dn,shapes", [
    (DN, ((2, 32, 64), (2, 64, 64))),
    ((((1,), (0,)), ((), ())), ((32, 64), (64, 32))),
    ((((0, 2), (0, 2)), ((1,), (1,))), ((4, 2, 16, 32), (4, 2, 16, 32))),
])
def test_scaled_dot_general_against_jax(mode, dn, shapes, monkeypatch):
    jax = pytest.importorskip("jax")
    jsdg = _jax_scaled_dot_general_on_cpu(jax, monkeypatch)
    import jax.numpy as jjnp
    rng = np.random.default_rng(5)
    lhs = (rng.standard_normal(shapes[0]) * 3).astype(np.float32)
    rhs = rng.standard_normal(shapes[1]).astype(np.float32)
    gs = np.array([0.5], np.float32)
    jc = [jax.nn.get_scaled_dot_general_config(mode, jjnp.asarray(gs) if mode == "nvfp4"
                                               else None)] * 3
    pc = [nn.get_scaled_dot_general_config(mode, gs if mode == "nvfp4" else None)] * 3
    want = jsdg(jjnp.asarray(lhs), jjnp.asarray(rhs), dn, configs=jc)
    got = nn.scaled_dot_general(lhs, rhs, dn, configs=pc)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-4)
    ct = rng.standard_normal(want.shape).astype(np.float32)
    jg = jax.grad(lambda a, b: jjnp.sum(jsdg(a, b, dn, configs=jc) * ct), argnums=(0, 1))(
        jjnp.asarray(lhs), jjnp.asarray(rhs))
    pg = pb.grad(lambda a, b: jnp.sum(nn.scaled_dot_general(a, b, dn, configs=pc) * ct),
                 argnums=(0, 1))(lhs, rhs)
    for g, w in zip(pg, jg):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-4)
    jit_out = pb.jit(lambda a, b: nn.scaled_dot_general(a, b, dn, configs=pc))(lhs, rhs)
    np.testing.assert_allclose(np.asarray(jit_out), np.asarray(got), rtol=1e-6, atol=1e-5)


def test_scaled_dot_general_pairs_dimensions_in_the_given_order():
    rng = np.random.default_rng(7)
    lhs = rng.standard_normal((4, 2, 16, 32)).astype(np.float32)
    rhs = rng.standard_normal((16, 32, 4, 2)).astype(np.float32)
    dn = (((0, 2), (2, 0)), ((1,), (3,)))
    exact = np.asarray(pb.lax.dot_general(lhs, rhs, dn))
    mx = [nn.get_scaled_dot_general_config("mxfp8")] * 3
    got = np.asarray(nn.scaled_dot_general(lhs, rhs, dn, configs=mx))
    assert got.shape == exact.shape == (2, 32, 32)
    # float8_e4m3fn keeps 3 mantissa bits: a few percent of the products' scale
    assert np.abs(got - exact).max() < 0.1 * np.abs(exact).max()
    g = pb.grad(lambda a: jnp.sum(nn.scaled_dot_general(a, rhs, dn, configs=mx)))(lhs)
    ge = pb.grad(lambda a: jnp.sum(pb.lax.dot_general(a, rhs, dn)))(lhs)
    assert np.abs(np.asarray(g) - np.asarray(ge)).max() < 0.1 * np.abs(np.asarray(ge)).max()


def test_scaled_dot_general_without_configs_is_dot_general():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    dn = (((2,), (1,)), ((0,), (0,)))
    got = nn.scaled_dot_general(a.astype(np.float32), b.astype(np.float32), dn)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.einsum("bij,bjk->bik", a, b), rtol=1e-5)
