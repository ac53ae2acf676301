"""lax's special functions (igamma, igammac, igamma_grad_a, random_gamma_grad, betainc, zeta,
polygamma, bessel_i0e, bessel_i1e) and pullback.scipy.special.

Values against SciPy (and JAX's recorded values where they differ: the special values below
were looked up with JAX 0.10.2), derivatives with check_grads and against JAX's formulas,
vmap against a loop, jit against eager, errors naming the op and argument.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc
from hypothesis import given, settings
from hypothesis import strategies as st

import pullback as pb
import pullback.lax as lax
import pullback.scipy.special as psp
from pullback.test_util import check_grads, check_vmap

pytestmark = pytest.mark.x64
F64 = np.float64
RNG = np.random.default_rng(0)


def _pos(shape, lo=0.1, hi=20.0):
    return RNG.uniform(lo, hi, shape)


def _unit(shape):
    return RNG.uniform(0.01, 0.99, shape)


def _real(shape):
    return RNG.uniform(-40, 40, shape)


def _int(shape):
    return RNG.integers(0, 5, shape).astype(F64)


def _zeta_ref(s, q):
    return sc.zeta(s, q)


# name -> (lax function, argument samplers, SciPy reference, rtol in float64)
LAX = {
    "igamma": (lax.igamma, (_pos, lambda s: _pos(s, 0.01, 40)), sc.gammainc, 1e-12),
    "igammac": (lax.igammac, (_pos, lambda s: _pos(s, 0.01, 40)), sc.gammaincc, 1e-12),
    "betainc": (lax.betainc, (_pos, _pos, _unit), sc.betainc, 1e-11),
    "zeta": (lax.zeta, (lambda s: _pos(s, 1.1, 8), lambda s: _pos(s, 0.2, 10)), _zeta_ref, 1e-13),
    "polygamma": (lax.polygamma, (_int, lambda s: _pos(s, 0.2, 10)),
                  lambda m, x: sc.polygamma(m.astype(int), x), 1e-12),
    "bessel_i0e": (lax.bessel_i0e, (_real,), sc.i0e, 1e-14),
    "bessel_i1e": (lax.bessel_i1e, (_real,), sc.i1e, 1e-14),
}


@pytest.mark.parametrize("name", sorted(LAX))
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (3, 5)])
def test_lax_values_match_scipy_float64(name, shape):
    fn, samplers, ref, rtol = LAX[name]
    args = [s(shape) for s in samplers]
    out = fn(*args)
    assert out.dtype == np.float64 and out.shape == shape
    np.testing.assert_allclose(np.asarray(out), ref(*args), rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("name", sorted(LAX))
@pytest.mark.parametrize("dtype", [np.float32, "bfloat16", np.float16])
def test_lax_values_narrow_dtypes(name, dtype):
    fn, samplers, ref, _ = LAX[name]
    args = [np.asarray(s((6,))).astype(dtype) for s in samplers]
    out = np.asarray(fn(*args))
    assert out.dtype == np.dtype(dtype)
    # computed in double and rounded once: within a rounding of the reference at those inputs
    expected = ref(*[a.astype(F64) for a in args]).astype(dtype).astype(F64)
    eps = float(pb.numpy.finfo(dtype).eps)
    np.testing.assert_allclose(out.astype(F64), expected, rtol=2 * eps, atol=1e-30)


@pytest.mark.parametrize("name", sorted(LAX))
def test_lax_noncontiguous_and_broadcast_operands(name):
    fn, samplers, ref, rtol = LAX[name]
    full = [s((4, 6)) for s in samplers]
    strided = [a[:, ::2] for a in full]                       # non-contiguous
    np.testing.assert_allclose(np.asarray(fn(*strided)), ref(*strided), rtol=rtol)
    scalar_first = [F64(full[0][0, 0])] + [a.T for a in full[1:]]  # a 0-d operand broadcasts
    if len(full) > 1:
        np.testing.assert_allclose(np.asarray(fn(*scalar_first)), ref(*scalar_first), rtol=rtol)


@pytest.mark.parametrize("name", sorted(LAX))
def test_lax_jit_equals_eager(name):
    fn, samplers, _, _ = LAX[name]
    args = [s((5,)) for s in samplers]
    np.testing.assert_array_equal(np.asarray(pb.jit(fn)(*args)), np.asarray(fn(*args)))


@pytest.mark.parametrize("name", sorted(LAX))
def test_lax_vmap_matches_loop(name):
    fn, samplers, _, _ = LAX[name]
    if name == "polygamma":  # m stays an integer: perturbing it would make NaNs
        check_vmap(lambda x: fn(F64(2.0), x), [samplers[1]((3,))])
        return
    check_vmap(fn, [s((3,)) for s in samplers], atol=1e-9, rtol=1e-9)


@given(st.lists(st.floats(0.05, 50), min_size=1, max_size=6),
       st.lists(st.floats(0.0, 60), min_size=1, max_size=6))
@settings(max_examples=25, deadline=None)
def test_igamma_hypothesis(a_list, x_list):
    n = min(len(a_list), len(x_list))
    a, x = np.array(a_list[:n]), np.array(x_list[:n])
    p, q = np.asarray(lax.igamma(a, x)), np.asarray(lax.igammac(a, x))
    np.testing.assert_allclose(p, sc.gammainc(a, x), rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(p + q, 1.0, rtol=1e-12)


# ---- JAX's special values (recorded with JAX 0.10.2, x64) ----

SV_A = np.array([0., 0., 1., -1., np.nan, 2., 0., 3.])
SV_X = np.array([0., 0.5, 0., 1., 1., np.inf, 2., -1.])
JAX_SPECIAL = {
    "igamma": [np.nan, np.nan, 0., np.nan, np.nan, 1., 1., np.nan],
    "igammac": [np.nan, 0., 1., np.nan, np.nan, 0., 0., np.nan],
    "igamma_grad_a": [np.nan, np.nan, 0., np.nan, np.nan, np.nan, np.nan, np.nan],
    "random_gamma_grad": [np.nan, np.nan, 0., np.nan, np.nan, np.nan, np.nan, np.nan],
}


@pytest.mark.parametrize("name", sorted(JAX_SPECIAL))
def test_incomplete_gamma_special_values_are_jaxs(name):
    out = np.asarray(getattr(lax, name)(SV_A, SV_X))
    np.testing.assert_array_equal(out, np.array(JAX_SPECIAL[name]))


def test_zeta_polygamma_betainc_special_values_are_jaxs():
    z = lax.zeta(np.array([1., 0.5, 2., 2., 3., 2.5, 2., 4.]),
                 np.array([1., 1., 0., -1.5, -1.5, -1.5, -3., 0.]))
    np.testing.assert_allclose(np.asarray(z), [np.inf, np.nan, np.inf, 9.37924664, 0.11810203,
                                               np.nan, np.inf, np.inf], rtol=1e-7)
    assert np.isnan(float(lax.zeta(F64(3.0), F64(0.0))))  # an odd pole has no sign: NaN
    pg = lax.polygamma(np.array([1.5, -1., 1., 2., 2.]), np.array([1., 1., 0., -2., -1.5]))
    np.testing.assert_allclose(np.asarray(pg), [np.nan, np.nan, np.inf, np.nan, -0.23620405],
                               rtol=1e-7)
    bi = lax.betainc(np.array([0., 1., 1., -1., 0.]), np.array([1., 0., 1., 1., 0.]),
                     np.array([0.5, 0.5, 1.5, 0.5, 0.5]))
    np.testing.assert_array_equal(np.asarray(bi), [1., 0., np.nan, np.nan, np.nan])


def test_igamma_grad_a_and_random_gamma_grad_values():
    a = np.array([0.3, 1.0, 2.5, 7.0, 30.0])
    x = np.array([0.2, 1.7, 2.0, 11.0, 25.0])
    h = 1e-6
    fd = (sc.gammainc(a + h, x) - sc.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(np.asarray(lax.igamma_grad_a(a, x)), fd, rtol=1e-7)
    density = np.exp((a - 1) * np.log(x) - x - sc.gammaln(a))
    np.testing.assert_allclose(np.asarray(lax.random_gamma_grad(a, x)), -fd / density, rtol=1e-7)


def test_lax_special_oracle_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    try:
        a, x = _pos((50,)), _pos((50,), 0.01, 40)
        for name in ("igamma", "igammac", "igamma_grad_a", "random_gamma_grad"):
            np.testing.assert_allclose(np.asarray(getattr(lax, name)(a, x)),
                                       np.asarray(getattr(jax.lax, name)(a, x)), rtol=1e-11)
        s, q = _pos((50,), 1.1, 8), _pos((50,), -6, 10)
        np.testing.assert_allclose(np.asarray(lax.zeta(s, q)), np.asarray(jax.lax.zeta(s, q)),
                                   rtol=1e-11)
    finally:
        jax.config.update("jax_enable_x64", False)


# ---- derivatives ----

GRAD_CASES = {
    "igamma_x": (lambda x: lax.igamma(F64(2.5), x), [np.array([0.5, 2.0, 7.0])], 2),
    "igamma_a": (lambda a: lax.igamma(a, F64(1.7)), [np.array([0.5, 2.0, 7.0])], 1),
    "igammac_both": (lax.igammac, [np.array([0.7, 3.0]), np.array([1.1, 2.5])], 1),
    "igammac_x": (lambda x: lax.igammac(F64(3.0), x), [np.array([0.5, 2.0, 7.0])], 2),
    "betainc_x": (lambda x: lax.betainc(F64(2.0), F64(3.5), x), [np.array([0.2, 0.5, 0.8])], 2),
    "polygamma_x": (lambda x: lax.polygamma(F64(1.0), x), [np.array([0.4, 2.0, 7.5])], 2),
    "zeta_q": (lambda q: lax.zeta(F64(3.0), q), [np.array([0.4, 2.0, 7.5])], 2),
    "bessel_i0e": (lax.bessel_i0e, [np.array([-3.0, -0.2, 0.7, 12.0, 40.0])], 2),
    "bessel_i1e": (lax.bessel_i1e, [np.array([-3.0, -0.2, 0.7, 12.0, 40.0])], 2),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_special_grads(name):
    fn, args, order = GRAD_CASES[name]
    check_grads(fn, args, order=order, modes=("fwd", "rev"))


def test_derivative_formulas():
    x = np.array([-3.0, -0.2, 0.7, 12.0, 40.0])
    g0 = pb.vmap(pb.grad(lax.bessel_i0e))(x)
    np.testing.assert_allclose(np.asarray(g0), sc.i1e(x) - np.sign(x) * sc.i0e(x), rtol=1e-12)
    g1 = pb.vmap(pb.grad(lax.bessel_i1e))(x)
    np.testing.assert_allclose(np.asarray(g1), sc.i0e(x) - sc.i1e(x) * (np.sign(x) + 1 / x),
                               rtol=1e-11)
    assert float(pb.grad(lax.bessel_i1e)(F64(0.0))) == 0.5  # JAX's value at |x| <= eps
    a, xs = F64(2.5), np.array([0.5, 2.0, 7.0])
    gx = pb.vmap(pb.grad(lambda v: lax.igamma(a, v)))(xs)
    np.testing.assert_allclose(np.asarray(gx), np.exp(-xs + (a - 1) * np.log(xs) - sc.gammaln(a)),
                               rtol=1e-12)
    gp = pb.vmap(pb.grad(lambda v: lax.polygamma(F64(2.0), v)))(xs)
    np.testing.assert_allclose(np.asarray(gp), sc.polygamma(3, xs), rtol=1e-11)
    gz = pb.vmap(pb.grad(lambda v: lax.zeta(F64(3.0), v)))(xs)
    np.testing.assert_allclose(np.asarray(gz), -3 * sc.zeta(4, xs), rtol=1e-12)


def test_non_differentiable_operands_raise_jaxs_errors():
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        pb.grad(lambda a: lax.betainc(a, F64(2.0), F64(0.5)))(F64(1.5))
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        pb.grad(lambda m: lax.polygamma(m, F64(2.0)))(F64(1.0))
    with pytest.raises(ValueError, match="zeta: the gradient with respect to argument 'x'"):
        pb.grad(lambda s: lax.zeta(s, F64(2.0)))(F64(3.0))
    with pytest.raises(Exception, match="igamma_grad_a"):
        pb.grad(lambda a: lax.igamma_grad_a(a, F64(2.0)))(F64(1.5))


def test_bad_operands_name_the_op_and_argument():
    with pytest.raises(TypeError, match="igamma: argument 'a' must be a floating array"):
        lax.igamma(np.array([1, 2], np.int32), np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match="betainc|regularized_incomplete_beta.*'x'"):
        lax.betainc(np.ones(3), np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match="zeta: argument 'q'"):
        lax.zeta(np.ones(3), np.ones(3, np.float32))


# ---- pullback.scipy.special ----

SCIPY = {
    "gammaln": (psp.gammaln, (_pos,), sc.gammaln),
    "gamma": (psp.gamma, (lambda s: RNG.uniform(-4.5, 9, s),), sc.gamma),
    "gammasgn": (psp.gammasgn, (lambda s: RNG.uniform(-4.5, 9, s),), sc.gammasgn),
    "loggamma": (psp.loggamma, (_pos,), lambda x: sc.loggamma(x).real),
    "betaln": (psp.betaln, (_pos, _pos), sc.betaln),
    "beta": (psp.beta, (_pos, _pos), sc.beta),
    "betainc": (psp.betainc, (_pos, _pos, _unit), sc.betainc),
    "digamma": (psp.digamma, (_pos,), sc.digamma),
    "gammainc": (psp.gammainc, (_pos, _pos), sc.gammainc),
    "gammaincc": (psp.gammaincc, (_pos, _pos), sc.gammaincc),
    "erf": (psp.erf, (_real,), sc.erf),
    "erfc": (psp.erfc, (lambda s: RNG.uniform(-3, 8, s),), sc.erfc),
    "erfinv": (psp.erfinv, (lambda s: RNG.uniform(-0.99, 0.99, s),), sc.erfinv),
    "expit": (psp.expit, (_real,), sc.expit),
    "logit": (psp.logit, (_unit,), sc.logit),
    "xlogy": (psp.xlogy, (_real, _pos), sc.xlogy),
    "xlog1py": (psp.xlog1py, (_real, _pos), sc.xlog1py),
    "entr": (psp.entr, (lambda s: RNG.uniform(-1, 5, s),), sc.entr),
    "rel_entr": (psp.rel_entr, (_pos, _pos), sc.rel_entr),
    "kl_div": (psp.kl_div, (_pos, _pos), sc.kl_div),
    "zeta": (psp.zeta, (lambda s: _pos(s, 1.1, 8), _pos), sc.zeta),
    "ndtr": (psp.ndtr, (lambda s: RNG.uniform(-12, 12, s),), sc.ndtr),
    "ndtri": (psp.ndtri, (lambda s: RNG.uniform(1e-6, 1 - 1e-6, s),), sc.ndtri),
    "log_ndtr": (psp.log_ndtr, (lambda s: RNG.uniform(-40, 12, s),), sc.log_ndtr),
    "i0": (psp.i0, (lambda s: RNG.uniform(-30, 30, s),), sc.i0),
    "i0e": (psp.i0e, (_real,), sc.i0e),
    "i1": (psp.i1, (lambda s: RNG.uniform(-30, 30, s),), sc.i1),
    "i1e": (psp.i1e, (_real,), sc.i1e),
    "factorial": (psp.factorial, (lambda s: RNG.integers(0, 15, s).astype(F64),),
                  sc.factorial),
    "comb": (psp.comb, (lambda s: RNG.integers(5, 20, s).astype(F64),
                        lambda s: RNG.integers(0, 5, s).astype(F64)), sc.comb),
    "poch": (psp.poch, (_pos, lambda s: RNG.uniform(0, 4, s)), sc.poch),
    "boxcox": (psp.boxcox, (_pos, lambda s: RNG.uniform(-2, 2, s)), sc.boxcox),
    "boxcox1p": (psp.boxcox1p, (_pos, lambda s: RNG.uniform(-2, 2, s)), sc.boxcox1p),
    "exp1": (psp.exp1, (lambda s: RNG.uniform(0.01, 30, s),), sc.exp1),
    "expi": (psp.expi, (lambda s: RNG.uniform(-30, 30, s),), sc.expi),
    "spence": (psp.spence, (lambda s: np.concatenate([RNG.uniform(0, 2, s),
                                                      RNG.uniform(2, 1e4, s)]),), sc.spence),
}


@pytest.mark.parametrize("name", sorted(SCIPY))
def test_scipy_special_matches_scipy(name):
    fn, samplers, ref = SCIPY[name]
    args = [s((9,)) for s in samplers]
    rtol = {"ndtri": 1e-9, "log_ndtr": 1e-9, "expi": 1e-9, "exp1": 1e-9, "betaln": 1e-10,
            "beta": 1e-10, "comb": 1e-10, "poch": 1e-10}.get(name, 1e-11)
    # (log_ndtr near its upper segment is log(1 - e), as JAX computes it: absolute accuracy)
    atol = 1e-15 if name == "log_ndtr" else 1e-300
    np.testing.assert_allclose(np.asarray(fn(*args)), ref(*args), rtol=rtol, atol=atol)


def test_scipy_special_misc():
    np.testing.assert_allclose(np.asarray(psp.polygamma(np.array([1, 2]), np.array([0.5, 3.0]))),
                               sc.polygamma([1, 2], [0.5, 3.0]), rtol=1e-12)
    with pytest.raises(ValueError, match="Argument `n` to polygamma must be of integer type"):
        psp.polygamma(1.0, 2.0)
    np.testing.assert_allclose(np.asarray(psp.multigammaln(np.array([3.0, 7.5]), 3)),
                               sc.multigammaln(np.array([3.0, 7.5]), 3), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(psp.expn(3, np.array([0.5, 2.0, 9.0]))),
                               sc.expn(3, [0.5, 2.0, 9.0]), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(psp.bernoulli(10)), sc.bernoulli(10), rtol=1e-6,
                               atol=1e-7)
    x = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(np.asarray(psp.logsumexp(x, axis=1)), sc.logsumexp(x, axis=1),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(psp.softmax(x)), sc.softmax(x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(psp.log_softmax(x, axis=0)),
                               sc.log_softmax(x, axis=0), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="Riemann zeta"):
        psp.zeta(2.0)


def test_scipy_special_grads():
    check_grads(psp.xlogy, [np.array([0.5, 2.0]), np.array([1.5, 3.0])], order=2)
    check_grads(psp.logit, [np.array([0.2, 0.7])], order=2)
    check_grads(lambda q: psp.zeta(3.0, q), [np.array([0.7, 2.0])], order=1)
    check_grads(psp.log_ndtr, [np.array([-30.0, -3.0, 0.5, 9.0])], order=1)
    check_grads(lambda x: psp.gammainc(2.0, x), [np.array([0.5, 3.0])], order=2)
    check_grads(psp.i0, [np.array([-2.0, 0.5, 6.0])], order=2)
    g = pb.grad(lambda x: psp.entr(x).sum())(np.array([0.5, 2.0]))
    np.testing.assert_allclose(np.asarray(g), -np.log([0.5, 2.0]) - 1, rtol=1e-12)


def test_scipy_special_jit_and_vmap():
    x = np.array([0.3, 1.2, 4.0])
    f = lambda v: psp.gammainc(2.0, v) + psp.i1e(v) + psp.ndtr(v) + psp.xlogy(v, v)
    np.testing.assert_allclose(np.asarray(pb.jit(f)(x)), np.asarray(f(x)), rtol=1e-15)
    check_vmap(f, [x])


def test_scipy_special_float32_promotion():
    out = psp.gammaln(np.array([1, 2, 5], np.int32))  # integers promote to a float
    assert out.dtype.kind == "f"
    np.testing.assert_allclose(np.asarray(out), sc.gammaln([1, 2, 5]), rtol=1e-6)
    assert psp.erf(np.float32(0.5)).dtype == np.float32
