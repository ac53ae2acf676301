"""pullback.scipy.special's wofz, erfcx, dawsn, fresnel, sici, owens_t, hyp1f1, hyp2f1,
bessel_jn, sph_harm_y and scipy.stats.poisson.entropy.

Values against SciPy in float64 (relative tolerances stated per function: the algorithms'
accuracy) and float32/float16/bfloat16 (a few ulp of the float64 reference); JAX's quirks (the
values below were looked up with JAX 0.10.2) hard-coded so the tests run without JAX;
derivatives with check_grads (order 2 where JAX's are differentiable twice) and against the
closed forms JAX uses; vmap against a loop; jit against eager; bad input.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st

import pullback as pb
import pullback.scipy.special as psp
import pullback.scipy.stats as pst
from pullback.test_util import check_grads, check_vmap

pytestmark = pytest.mark.x64
F64 = np.float64
RNG = np.random.default_rng(7)
SQRT_PI = np.sqrt(np.pi)


def _np(x):
    return np.asarray(x)


def _close(out, ref, rtol, atol=0.0):
    np.testing.assert_allclose(_np(out), ref, rtol=rtol, atol=atol, equal_nan=True)


# ---- values, float64 ----

def test_wofz_values_float64():
    z = np.concatenate([(RNG.standard_normal(400) + 1j * RNG.standard_normal(400)) * s
                        for s in (0.05, 0.5, 2.0, 6.0)])
    z = np.concatenate([z, [0, 1e-8j, 3 + 1e-12j, 40 + 40j, 1e4j, 1e6 + 0j, -5 - 0.5j]])
    out = psp.wofz(z)
    assert out.dtype == np.complex128
    _close(out, sc.wofz(z), rtol=5e-13)  # Weideman N = 32: ~1e-13 relative (as JAX)
    real = psp.wofz(np.linspace(-5, 5, 11))  # real input promotes to complex
    assert real.dtype == np.complex128
    # on the real axis the real part is exp(-x^2) to the ulp
    np.testing.assert_allclose(_np(real).real, np.exp(-np.linspace(-5, 5, 11) ** 2), rtol=1e-15)
    _close(real, sc.wofz(np.linspace(-5, 5, 11) + 0j), rtol=5e-13)


def test_erfcx_values_float64():
    x = np.concatenate([np.linspace(-26, 60, 2001), np.geomspace(1e-300, 1e300, 300),
                        -np.geomspace(1e-300, 1, 50),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, -27.0, -1e10]])
    out = psp.erfcx(x)
    assert out.dtype == np.float64
    _close(out, sc.erfcx(x), rtol=1e-13)
    assert np.isposinf(_np(psp.erfcx(-30.0)))  # overflows as SciPy's
    zc = np.array([1 + 1j, -2 + 0.5j, 0.3 - 4j])  # complex: w(iz), as JAX
    _close(psp.erfcx(zc), sc.erfcx(zc), rtol=3e-13)


def test_dawsn_values_float64():
    x = np.concatenate([np.linspace(-60, 60, 4001), np.geomspace(1e-300, 1e300, 300),
                        -np.geomspace(1e-200, 1e200, 50),
                        [0.0, 0.4999, 0.5, 1e3, 1000.01, np.inf, -np.inf, np.nan]])
    out = psp.dawsn(x)
    assert out.dtype == np.float64
    _close(out, sc.dawsn(x), rtol=5e-13)
    far = np.array([1000.5, -1500.0, 2e3, 1e5])  # the asymptotic series: to the ulp
    _close(psp.dawsn(far), sc.dawsn(far), rtol=1e-15)


def test_fresnel_values_float64():
    x = np.concatenate([np.linspace(-12, 12, 4001), np.geomspace(1e-300, 1e3, 300),
                        [0.0, 1.5999, 1.6, np.inf, -np.inf, np.nan, 1e18, -1e30]])
    s, c = psp.fresnel(x)
    rs, rc = sc.fresnel(x)
    assert s.dtype == c.dtype == np.float64
    # SciPy's cos(pi/2 x^2) has an error of ~eps x^2 in the phase: compare to that
    tol = 1e-13 + 4e-16 * np.minimum(x * x, 1e12)
    for out, ref in ((s, rs), (c, rc)):
        err = np.abs(_np(out) - ref)
        finite = np.isfinite(ref)
        assert np.all(err[finite] <= tol[finite] * np.maximum(np.abs(ref[finite]), 1e-300)
                      + 1e-300), np.max(err[finite] / np.abs(ref[finite]))
        assert np.array_equal(np.isnan(_np(out)), np.isnan(ref))


def test_fresnel_large_argument_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = np.array([37.5, 1234.567, 98765.4321, 3.3e7])
    s, c = psp.fresnel(x)
    rs = np.array([float(mpmath.fresnels(mpmath.mpf(float(v)))) for v in x])
    rc = np.array([float(mpmath.fresnelc(mpmath.mpf(float(v)))) for v in x])
    _close(s, rs, rtol=1e-14)  # the exact phase reduction keeps full accuracy
    _close(c, rc, rtol=1e-14)


def test_sici_values_float64():
    x = np.concatenate([np.linspace(-60, 60, 4001), np.geomspace(1e-300, 1e15, 300),
                        [0.0, 3.9999, 4.0, 4.0001, np.inf, -np.inf, np.nan, -1e5]])
    si, ci = psp.sici(x)
    rsi, rci = sc.sici(x)
    _close(si, rsi, rtol=1e-14, atol=1e-300)
    # Ci has zeros: an absolute floor where it crosses
    _close(ci, rci, rtol=1e-13, atol=2e-15)
    assert _np(ci)[np.argmax(x == 0.0)] == -np.inf
    assert np.isnan(_np(psp.sici(-np.inf)[1]))


def test_owens_t_values_float64():
    h = np.concatenate([RNG.uniform(-8, 8, 3000), RNG.uniform(-0.5, 0.5, 500),
                        [0, 0, 1, 1, np.inf, 3, 2, np.nan, 1, 30]])
    a = np.concatenate([RNG.uniform(-6, 6, 3000), RNG.uniform(-30, 30, 500),
                        [1, 0, np.inf, -np.inf, 1, 1, -1, 1, np.nan, 0.5]])
    out = psp.owens_t(h, a)
    ref = sc.owens_t(h, a)
    _close(out, ref, rtol=5e-12, atol=1e-300)


def test_bessel_jn_values_float64():
    z = np.concatenate([np.linspace(0.25, 25, 200), -np.linspace(0.25, 10, 20)])
    out = psp.bessel_jn(z, v=6)
    assert out.shape == (7,) + z.shape and out.dtype == np.float64
    _close(out, sc.jv(np.arange(7)[:, None], z[None]), rtol=1e-9, atol=1e-14)
    # JAX's quirks: NaN at 0 (the recurrence divides by z); order 0 alone is (1, ...)
    assert np.all(np.isnan(_np(psp.bessel_jn(np.array([0.0]), v=2))))
    assert psp.bessel_jn(1.5, v=0).shape == (1,)
    # n_iter: too few steps for |z| loses accuracy (JAX's value for z = 20, n_iter = 20)
    few = _np(psp.bessel_jn(np.array([20.0]), v=0, n_iter=20))[0, 0]
    assert abs(few - sc.j0(20.0)) > 1e-3


def test_hyp1f1_values_float64():
    a = RNG.uniform(-6, 6, 800)
    b = RNG.uniform(0.2, 8, 800)
    x = RNG.uniform(-40, 40, 800)
    _close(psp.hyp1f1(a, b, x), sc.hyp1f1(a, b, x), rtol=1e-9, atol=1e-300)
    # JAX's special values: a == 0 -> 1 (SciPy: 1 except a = b = 0 NaN), a == b -> e^x,
    # b == 0 -> inf; Kummer keeps large negative x accurate (JAX: 0.0333284 for the last)
    out = psp.hyp1f1(np.array([0.0, 0.0, 1.5, 1.0, 1.0]), np.array([0.0, 3.0, 1.5, 0.0, 2.0]),
                     np.array([1.0, 5.0, 2.0, 1.0, -30.0]))
    _close(out, [1.0, 1.0, np.exp(2.0), np.inf, sc.hyp1f1(1.0, 2.0, -30.0)], rtol=1e-13)


def test_hyp2f1_values_float64():
    a = RNG.uniform(-3, 3, 600)
    b = RNG.uniform(-3, 3, 600)
    c = RNG.uniform(0.3, 5, 600)
    x = np.concatenate([RNG.uniform(-6, 0.97, 580), RNG.uniform(0.97, 0.999, 20)])
    _close(psp.hyp2f1(a, b, c, x), sc.hyp2f1(a, b, c, x), rtol=1e-8, atol=1e-12)
    # c - a - b an integer: the series to 0.99, then the connection formula's limit
    # (Richardson-extrapolated from c -+ delta: ~1e-7 at worst in float64)
    for a_, b_, c_ in ((1.0, 1.0, 2.0), (1.5, 2.5, 3.0), (0.5, 0.5, 1.0), (0.2, 4.8, 3.0)):
        near = np.array([0.91, 0.95, 0.99])
        _close(psp.hyp2f1(a_, b_, c_, near), sc.hyp2f1(a_, b_, c_, near), rtol=1e-12)
        nearer = np.array([0.995, 0.999, 0.9999, 1 - 1e-8])
        _close(psp.hyp2f1(a_, b_, c_, nearer), sc.hyp2f1(a_, b_, c_, nearer), rtol=2e-7)
    # terminating series (a a negative integer) and the special cases
    _close(psp.hyp2f1(-3.0, 2.5, 1.5, np.array([-4.0, 0.5, 0.99])),
           sc.hyp2f1(-3.0, 2.5, 1.5, np.array([-4.0, 0.5, 0.99])), rtol=1e-10)  # cancels
    out = psp.hyp2f1(np.array([1.0, 0.0, 1.0, 2.0, 1.0, 0.5, 1.0]),
                     np.array([1.0, 2.0, 2.0, 1.5, 1.0, 0.5, 2.0]),
                     np.array([2.0, 3.0, 2.0, 2.0, -1.0, 2.0, 3.0]),
                     np.array([1.5, 0.7, 0.3, 0.3, 0.5, 1.0, 1.0]))
    ref = [np.inf, 1.0, 0.7 ** -1.0, 0.7 ** -1.5, np.inf,
           sc.gamma(2) * sc.gamma(1) / sc.gamma(1.5) ** 2, np.inf]
    _close(out, ref, rtol=1e-13)  # x > 1, c a pole, x = 1 with c - a - b <= 0: inf (JAX)


def test_sph_harm_y_values_float64():
    n = RNG.integers(0, 8, 300)
    m = np.array([RNG.integers(-k, k + 1) for k in n])
    theta = RNG.uniform(0, np.pi, 300)
    phi = RNG.uniform(0, 2 * np.pi, 300)
    out = psp.sph_harm_y(n, m, theta, phi)
    assert out.dtype == np.complex128 and out.shape == (300,)
    _close(out, sc.sph_harm_y(n, m, theta, phi), rtol=1e-12, atol=1e-14)
    # JAX quirks: n and |m| past n_max read the table at n_max (values from JAX 0.10.2);
    # a scalar theta becomes a length-1 array
    clipped = psp.sph_harm_y(np.array([2, 3]), np.array([3, -2]), 0.5, np.array([0.3, 2.0]),
                             n_max=2)
    _close(clipped, [0.05518944 + 0.06954743j, -0.05803354 + 0.06719247j], rtol=1e-6)


def _poisson_entropy_ref(mu):
    """-sum p log p over mu -+ 60 sqrt(mu) + 60 (SciPy's own sum stops converging: 2.77 at
    mu = 1e6)."""
    out = []
    for m in np.atleast_1d(mu):
        w = 60 * np.sqrt(m) + 60
        k = np.arange(max(0.0, np.floor(m - w)), np.ceil(m + w))
        log_p = sc.xlogy(k, m) - sc.gammaln(k + 1) - m
        out.append(-np.sum(np.exp(log_p) * log_p))
    return np.array(out)


def test_poisson_entropy_values_float64():
    mu = np.concatenate([np.geomspace(1e-4, 5e3, 200), [99.999, 100.0]])
    out = pst.poisson.entropy(mu)
    _close(out, st.poisson(mu).entropy(), rtol=1e-8)  # JAX: ~1e-5 (one-term large-mu series)
    big = np.array([1e4, 3.3e5])  # (the float64 reference loses ~eps mu in log p above)
    _close(pst.poisson.entropy(big), _poisson_entropy_ref(big), rtol=1e-10)
    _close(pst.poisson.entropy(np.array([0.0, -1.0, 5.0]), loc=3.0), [0.0, np.nan, ref_5()],
           rtol=1e-12)
    assert pst.poisson.entropy(np.ones((2, 1)), np.zeros(3)).shape == (2, 3)


def ref_5():
    return st.poisson(5.0).entropy()


SHAPED = {
    "wofz": (lambda x, y: psp.wofz(x + 1j * y), lambda x, y: sc.wofz(x + 1j * y)),
    "erfcx": (lambda x, y: psp.erfcx(x * 3), lambda x, y: sc.erfcx(x * 3)),
    "dawsn": (lambda x, y: psp.dawsn(x * 5), lambda x, y: sc.dawsn(x * 5)),
    "fresnel": (lambda x, y: psp.fresnel(x * 4), lambda x, y: sc.fresnel(x * 4)),
    "sici": (lambda x, y: psp.sici(x * 9), lambda x, y: sc.sici(x * 9)),
    "owens_t": (lambda x, y: psp.owens_t(x * 3, y * 2), lambda x, y: sc.owens_t(x * 3, y * 2)),
    "hyp1f1": (lambda x, y: psp.hyp1f1(y, 2.5, x * 9), lambda x, y: sc.hyp1f1(y, 2.5, x * 9)),
    "hyp2f1": (lambda x, y: psp.hyp2f1(y, 1.5, 2.5, x * 0.9),
               lambda x, y: sc.hyp2f1(y, 1.5, 2.5, x * 0.9)),
    "bessel_jn": (lambda x, y: psp.bessel_jn(np.abs(x) * 9 + 0.5, v=2),
                  lambda x, y: sc.jv(np.arange(3).reshape((3,) + (1,) * x.ndim),
                                     np.abs(x) * 9 + 0.5)),
    "sph_harm_y": (lambda x, y: psp.sph_harm_y(np.ones(x.shape, int) * 2, np.ones(x.shape, int),
                                               np.abs(x) * 3, y * 6, n_max=2),
                   lambda x, y: sc.sph_harm_y(2, 1, np.abs(x) * 3, y * 6)),
    "poisson.entropy": (lambda x, y: pst.poisson.entropy(np.abs(x) * 50),
                        lambda x, y: (st.poisson(np.abs(x) * 50).entropy() if x.size
                                      else np.zeros(x.shape))),
}


@pytest.mark.parametrize("name", sorted(SHAPED))
@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 1), (2, 0, 3), (4, 3)])
def test_shapes_and_strided_inputs(name, shape):
    """Every function keeps the shape (0-size and size-1 dims included) and reads
    non-contiguous and broadcast operands."""
    fn, ref = SHAPED[name]
    base = RNG.uniform(-1, 1, tuple(2 * d for d in shape) + (2,))
    x = base[(slice(None, None, 2),) * len(shape) + (0,)]  # strided view
    y = np.broadcast_to(RNG.uniform(0.1, 1, shape[-1:] if shape else ()), shape)
    out, expected = fn(x, y), ref(x, y)
    outs = out if isinstance(out, tuple) else (out,)
    refs = expected if isinstance(expected, tuple) else (expected,)
    for o, r in zip(outs, refs):
        # JAX's quirk: sph_harm_y makes a scalar theta a length-1 array
        assert o.shape == ((1,) if name == "sph_harm_y" and not shape else np.shape(r))
        _close(o, r, rtol=1e-8, atol=1e-12)


# ---- narrow dtypes ----

UNARY = {
    "erfcx": (psp.erfcx, lambda: np.linspace(-3, 8, 23), sc.erfcx),
    "dawsn": (psp.dawsn, lambda: np.linspace(-8, 8, 23), sc.dawsn),
    "fresnel": (psp.fresnel, lambda: np.linspace(-5, 5, 23), sc.fresnel),
    "sici": (psp.sici, lambda: np.linspace(0.1, 12, 23), sc.sici),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 3e-6), (np.float16, 2e-3),
                                        ("bfloat16", 1.6e-2)])
def test_narrow_dtypes_keep_dtype(name, dtype, rtol):
    fn, sample, ref = UNARY[name]
    x = sample().astype(dtype)
    out = fn(x)
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref(x.astype(F64))
    refs = refs if isinstance(refs, tuple) else (refs,)
    for o, r in zip(outs, refs):
        assert o.dtype == np.dtype(dtype)
        _close(_np(o).astype(F64), r, rtol=rtol, atol=rtol * 0.1)  # O(1) values with zeros


def test_float32_others_keep_dtype():
    f = np.float32
    assert psp.wofz(np.array([1.0, 2.0], f)).dtype == np.complex64
    _close(psp.wofz(np.array([1 + 2j, -3 + 0.5j], np.complex64)),
           sc.wofz(np.array([1 + 2j, -3 + 0.5j])), rtol=3e-6)
    h, a = RNG.uniform(-3, 3, 20).astype(f), RNG.uniform(-3, 3, 20).astype(f)
    out = psp.owens_t(h, a)
    assert out.dtype == f
    _close(out, sc.owens_t(h.astype(F64), a.astype(F64)), rtol=3e-5, atol=1e-7)
    z = np.linspace(0.5, 10, 9).astype(f)
    out = psp.bessel_jn(z, v=3)
    assert out.dtype == f
    # JAX's quirk (0.10.2): in float32 the recurrence from n_iter = 50 overflows for
    # z = 0.5, 1.69, 2.88 (NaN everywhere in those columns), fine from z = 4.06 on
    assert np.all(np.isnan(_np(out)[:, :3])) and not np.any(np.isnan(_np(out)[:, 3:]))
    _close(out[:, 3:], sc.jv(np.arange(4)[:, None], z[3:].astype(F64)), rtol=1e-4, atol=1e-6)
    a, b, x = f(0.5), f(2.5), np.linspace(-5, 5, 7).astype(f)
    out = psp.hyp1f1(a, b, x)
    assert out.dtype == f
    _close(out, sc.hyp1f1(0.5, 2.5, x.astype(F64)), rtol=1e-5)
    out = psp.hyp2f1(f(0.5), f(1.5), f(2.5), np.linspace(-3, 0.95, 7).astype(f))
    assert out.dtype == f
    _close(out, sc.hyp2f1(0.5, 1.5, 2.5, np.linspace(-3, 0.95, 7).astype(f).astype(F64)),
           rtol=1e-5)
    out = psp.sph_harm_y(np.array([2], np.int32), np.array([1], np.int32), f(0.5), f(0.3))
    assert out.dtype == np.complex128  # as JAX in x64: |m| (int64) * phi promotes
    assert pst.poisson.entropy(np.array([3.0], f)).dtype == f


def test_integer_input_promotes():
    assert psp.erfcx(np.array([1, 2])).dtype == np.float64


# ---- derivatives ----

def test_closed_form_derivatives():
    x = np.linspace(-3, 6, 13)
    g = pb.vmap(pb.grad(psp.erfcx))(x)
    _close(g, 2 * x * sc.erfcx(x) - 2 / SQRT_PI, rtol=1e-12, atol=1e-14)
    g = pb.vmap(pb.grad(psp.dawsn))(x)
    _close(g, 1 - 2 * x * sc.dawsn(x), rtol=1e-10, atol=1e-13)  # 1 - 2xD cancels
    x = np.linspace(-4, 40, 13)
    gs = pb.vmap(pb.grad(lambda v: psp.fresnel(v)[0]))(x)
    gc = pb.vmap(pb.grad(lambda v: psp.fresnel(v)[1]))(x)
    _close(gs, np.sin(np.pi * x * x / 2), rtol=1e-12, atol=1e-12)
    _close(gc, np.cos(np.pi * x * x / 2), rtol=1e-12, atol=1e-12)
    x = np.array([-7.0, -0.5, 0.25, 3.0, 30.0])
    gsi = pb.vmap(pb.grad(lambda v: psp.sici(v)[0]))(x)
    gci = pb.vmap(pb.grad(lambda v: psp.sici(v)[1]))(x)
    _close(gsi, np.sin(x) / x, rtol=1e-13)
    _close(gci, np.cos(x) / x, rtol=1e-13)
    z = np.array([0.5 + 1j, -2 + 0.3j, 1 - 2j])
    dw = pb.jvp(psp.wofz, (z,), (np.ones_like(z),))[1]
    _close(dw, -2 * z * sc.wofz(z) + 2j / SQRT_PI, rtol=1e-12)
    h, a = np.array([0.3, -1.2, 2.0]), np.array([0.7, 2.5, -0.4])
    gh = pb.vmap(pb.grad(psp.owens_t, argnums=0))(h, a)
    ga = pb.vmap(pb.grad(psp.owens_t, argnums=1))(h, a)
    _close(gh, -np.exp(-h * h / 2) * sc.erf(a * h / np.sqrt(2)) / (2 * np.sqrt(2 * np.pi)),
           rtol=1e-12)
    _close(ga, np.exp(-(1 + a * a) * h * h / 2) / (2 * np.pi * (1 + a * a)), rtol=1e-12)


@pytest.mark.parametrize("fn,args", [
    (psp.erfcx, (np.array([-1.3, 0.2, 2.5, 9.0]),)),
    (psp.dawsn, (np.array([-1.3, 0.2, 0.7, 9.0, 2000.0]),)),
    (lambda x: psp.fresnel(x)[0], (np.array([-1.3, 0.2, 2.5, 9.0]),)),
    (lambda x: psp.fresnel(x)[1], (np.array([-1.3, 0.2, 2.5, 9.0]),)),
    (lambda x: psp.sici(x)[0], (np.array([-1.3, 0.2, 5.5, 9.0]),)),
    (lambda x: psp.sici(x)[1], (np.array([1.3, 0.2, 5.5, 9.0]),)),
    (psp.owens_t, (np.array([0.3, -1.2, 2.0]), np.array([0.7, 2.5, -0.4]))),
    (lambda x: psp.bessel_jn(x, v=3), (np.array([0.7, 2.5, 9.0]),)),
    (lambda x: psp.hyp1f1(0.7, 1.9, x), (np.array([-3.0, 0.5, 4.0]),)),
    (lambda x: psp.hyp2f1(0.7, 1.3, 2.9, x), (np.array([-3.0, 0.2, 0.6]),)),
    (lambda x, y: psp.wofz(x + 1j * y).real, (np.array([0.5, -2.0]), np.array([0.7, -0.3]))),
    (lambda x, y: psp.wofz(x + 1j * y).imag, (np.array([0.5, -2.0]), np.array([0.7, -0.3]))),
    (lambda t, p: psp.sph_harm_y(np.array([3, 2]), np.array([-2, 1]), t, p, n_max=3).real,
     (np.array([0.4, 2.0]), np.array([1.0, 5.0]))),
    (lambda t, p: psp.sph_harm_y(np.array([3, 2]), np.array([-2, 1]), t, p, n_max=3).imag,
     (np.array([0.4, 2.0]), np.array([1.0, 5.0]))),
    (pst.poisson.entropy, (np.array([0.5, 7.0, 150.0]),)),
], ids=["erfcx", "dawsn", "fresnel_s", "fresnel_c", "si", "ci", "owens_t", "bessel_jn",
        "hyp1f1_x", "hyp2f1_x", "wofz_re", "wofz_im", "sph_re", "sph_im", "poisson_entropy"])
def test_grads_order2(fn, args):
    check_grads(fn, args, order=2, modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)


def test_hypergeometric_parameter_grads_order1():
    # JAX differentiates a, b (and c) through series of digamma differences, once
    check_grads(lambda a, b: psp.hyp1f1(a, b, np.array([-2.5, 1.5, 6.0])),
                (np.array([0.7, -1.3, 2.2]), np.array([1.9, 2.5, 0.8])), order=1,
                modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)
    check_grads(lambda a, b, c: psp.hyp2f1(a, b, c, np.array([-0.5, 0.3, 0.6])),
                (np.array([0.7, -1.3, 2.2]), np.array([1.9, 0.5, 0.8]),
                 np.array([2.9, 1.5, 3.3])), order=1, modes=("fwd", "rev"), rtol=1e-5,
                atol=1e-6)


@pytest.mark.parametrize("fn,params,x", [
    (psp.hyp1f1, (0.7, 1.9), -2.5), (psp.hyp1f1, (-1.3, 2.5), 3.0),
    (psp.hyp2f1, (0.7, 1.9, 2.9), 0.4), (psp.hyp2f1, (-1.3, 0.5, 1.5), -0.6),
])
def test_hypergeometric_mixed_second_derivatives(fn, params, x):
    """d/dx of each parameter derivative (the closed form in the derivative's own JVP)
    against central differences of that derivative, in both modes."""
    for i in range(len(params)):
        def d_param(xv, i=i):
            args = [F64(p) for p in params] + [xv]
            return pb.grad(fn, argnums=i)(*args)
        h = 1e-5
        fd = (_np(d_param(F64(x + h))) - _np(d_param(F64(x - h)))) / (2 * h)
        _close(pb.grad(d_param)(F64(x)), fd, rtol=1e-6, atol=1e-8)
        _close(pb.jvp(d_param, (F64(x),), (F64(1.0),))[1], fd, rtol=1e-6, atol=1e-8)


# ---- vmap, jit ----

VM = {
    "wofz": (psp.wofz, [np.array([0.5 + 1j, -1 - 0.2j])]),
    "erfcx": (psp.erfcx, [np.array([-1.0, 0.5, 4.0])]),
    "dawsn": (psp.dawsn, [np.array([-1.0, 0.3, 4.0])]),
    "fresnel": (psp.fresnel, [np.array([-1.0, 0.3, 4.0])]),
    "sici": (psp.sici, [np.array([-1.0, 0.3, 6.0])]),
    "owens_t": (psp.owens_t, [np.array([0.3, 1.5]), np.array([0.5, -2.0])]),
    "bessel_jn": (lambda z: psp.bessel_jn(z, v=2), [np.array([1.0, 2.5])]),
    "hyp1f1": (psp.hyp1f1, [np.array([0.5, 1.5]), np.array([1.5, 2.0]),
                            np.array([-3.0, 2.0])]),
    "hyp2f1": (psp.hyp2f1, [np.array([0.5, 1.5]), np.array([1.5, 0.3]), np.array([2.5, 3.0]),
                            np.array([-2.0, 0.5])]),
    "sph_harm_y": (lambda t, p: psp.sph_harm_y(np.array([1, 2]), np.array([1, -2]), t, p,
                                               n_max=2),
                   [np.array([0.5, 1.0]), np.array([0.3, 2.0])]),
    "poisson.entropy": (pst.poisson.entropy, [np.array([0.5, 20.0, 300.0])]),
}


@pytest.mark.parametrize("name", sorted(VM))
def test_vmap_matches_loop(name):
    fn, args = VM[name]
    check_vmap(fn, args, atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("name", sorted(VM))
def test_jit_equals_eager(name):
    fn, args = VM[name]
    eager = pb.tree_util.tree_leaves(fn(*args))
    jitted = pb.tree_util.tree_leaves(pb.jit(fn)(*args))
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(_np(j), _np(e), rtol=1e-14, atol=0)


# ---- bad input, JAX's errors ----

def test_bad_input_raises():
    with pytest.raises(ValueError, match="dawsn does not support complex"):
        psp.dawsn(1j)
    with pytest.raises(ValueError, match="sici must be real-valued"):
        psp.sici(np.array([1j]))
    with pytest.raises(NotImplementedError, match="fresnel: complex"):
        psp.fresnel(1j)
    with pytest.raises(ValueError, match="hyp1f1 does not support complex"):
        psp.hyp1f1(1.0, 2.0, 1j)
    with pytest.raises(ValueError, match="hyp2f1 does not support complex"):
        psp.hyp2f1(1.0, 2.0, 3.0, 0.5j)
    with pytest.raises(ValueError, match="owens_t does not support complex"):
        psp.owens_t(1j, 1.0)
    with pytest.raises(ValueError, match="complex input not supported"):
        psp.bessel_jn(1j, v=1)
    with pytest.raises(TypeError):
        psp.bessel_jn(1.0, v=1.5)
    with pytest.raises(TypeError):
        psp.bessel_jn(1.0)  # v is keyword-only and required, as JAX
    with pytest.raises(NotImplementedError, match="diff_n"):
        psp.sph_harm_y(np.array([1]), np.array([0]), 0.1, 0.2, diff_n=1)
    with pytest.raises(TypeError, match="`n` must be of integer type"):
        psp.sph_harm_y(np.array([1.0]), np.array([0]), 0.1, 0.2)
    with pytest.raises(TypeError, match="n_max"):
        pb.jit(lambda n: psp.sph_harm_y(n, np.array([0]), np.array([0.1]),
                                        np.array([0.2])))(np.array([1]))


def test_sph_harm_y_jit_with_static_n_max():
    f = pb.jit(lambda n, m, t, p: psp.sph_harm_y(n, m, t, p, n_max=4))
    n, m = np.array([4, 3, 0]), np.array([-4, 2, 0])
    t, p = np.array([0.1, 1.2, 3.0]), np.array([6.0, 0.1, 1.0])
    _close(f(n, m, t, p), sc.sph_harm_y(n, m, t, p), rtol=1e-12, atol=1e-15)


def test_weideman_coefficients_are_weidemans():
    """The table in _special_faddeeva is Weideman's N = 32 recipe (FFT of the mapped
    integrand), recomputed here."""
    from pullback.scipy import _special_faddeeva as fad
    n = 32
    m = 2 * n
    k = np.arange(-m + 1, m)
    big_l = np.sqrt(n / np.sqrt(2))
    t = big_l * np.tan(k * np.pi / m / 2)
    f = np.concatenate([[0.0], np.exp(-t ** 2) * (big_l ** 2 + t ** 2)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    np.testing.assert_allclose(np.array(fad._WEIDEMAN_C), a[1:n + 1][::-1], rtol=1e-9,
                               atol=1e-20)
    assert fad._WEIDEMAN_L == pytest.approx(big_l, rel=1e-15)


def test_owens_t_quadrature_is_gauss_legendre():
    from pullback.scipy import _special_faddeeva as fad
    nodes, weights = np.polynomial.legendre.leggauss(20)
    np.testing.assert_allclose(fad._GL_T, (nodes + 1) / 2, rtol=0, atol=1e-16)
    np.testing.assert_allclose(fad._GL_WH, weights / 2, rtol=0, atol=1e-16)
