"""pullback.scipy.stats: every distribution's functions against scipy.stats (JAX's formulas,
so the values agree to rounding), gradients, vmap, jit, errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

import pullback as pb
import pullback.scipy.stats as ps
from pullback.test_util import check_grads, check_vmap

pytestmark = pytest.mark.x64
R = np.random.default_rng(1)
X = R.uniform(-3, 3, 11)
POS = R.uniform(0.05, 6, 11)
U = R.uniform(0.02, 0.98, 11)
K = R.integers(0, 12, 11).astype(np.float64)
LOC, SCALE = 0.4, 1.7

# (pullback function, arguments, scipy function, arguments for scipy)
CASES = {}


def _add(name, fn, args, ref, ref_args=None):
    CASES[name] = (fn, args, ref, args if ref_args is None else ref_args)


for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
    _add(f"norm.{f}", getattr(ps.norm, f), (X, LOC, SCALE), getattr(ss.norm, f))
    _add(f"cauchy.{f}", getattr(ps.cauchy, f), (X, LOC, SCALE), getattr(ss.cauchy, f))
    _add(f"gamma.{f}", getattr(ps.gamma, f), (POS, 2.5, 0.0, SCALE), getattr(ss.gamma, f))
    _add(f"chi2.{f}", getattr(ps.chi2, f), (POS, 3.0), getattr(ss.chi2, f))
    _add(f"beta.{f}", getattr(ps.beta, f), (U, 2.0, 3.5), getattr(ss.beta, f))
    _add(f"expon.{f}", getattr(ps.expon, f), (POS, LOC, SCALE), getattr(ss.expon, f))
    _add(f"pareto.{f}", getattr(ps.pareto, f), (POS + 1, 2.0), getattr(ss.pareto, f))
    _add(f"gumbel_r.{f}", getattr(ps.gumbel_r, f), (X, LOC, SCALE), getattr(ss.gumbel_r, f))
    _add(f"gumbel_l.{f}", getattr(ps.gumbel_l, f), (X, LOC, SCALE), getattr(ss.gumbel_l, f))
    _add(f"truncnorm.{f}", getattr(ps.truncnorm, f), (X, -1.0, 2.0), getattr(ss.truncnorm, f))
for f in ("ppf", "isf"):
    _add(f"norm.{f}", getattr(ps.norm, f), (U, LOC, SCALE), getattr(ss.norm, f))
    _add(f"cauchy.{f}", getattr(ps.cauchy, f), (U, LOC, SCALE), getattr(ss.cauchy, f))
    _add(f"logistic.{f}", getattr(ps.logistic, f), (U, LOC, SCALE), getattr(ss.logistic, f))
for f in ("logpdf", "pdf", "cdf", "sf"):
    _add(f"logistic.{f}", getattr(ps.logistic, f), (X, LOC, SCALE), getattr(ss.logistic, f))
for f in ("logpdf", "pdf", "cdf"):
    _add(f"laplace.{f}", getattr(ps.laplace, f), (X, LOC, SCALE), getattr(ss.laplace, f))
    _add(f"uniform.{f}", getattr(ps.uniform, f), (X, -1.0, 2.5), getattr(ss.uniform, f))
    _add(f"gennorm.{f}", getattr(ps.gennorm, f), (X, 1.5), getattr(ss.gennorm, f))
_add("t.logpdf", ps.t.logpdf, (X, 3.5, LOC, SCALE), ss.t.logpdf)
_add("t.pdf", ps.t.pdf, (X, 3.5, LOC, SCALE), ss.t.pdf)
_add("expon.ppf", ps.expon.ppf, (U, LOC, SCALE), ss.expon.ppf)
_add("uniform.ppf", ps.uniform.ppf, (U, -1.0, 2.5), ss.uniform.ppf)
_add("pareto.ppf", ps.pareto.ppf, (U, 2.0), ss.pareto.ppf)
_add("gumbel_r.ppf", ps.gumbel_r.ppf, (U, LOC, SCALE), ss.gumbel_r.ppf)
_add("gumbel_l.ppf", ps.gumbel_l.ppf, (U, LOC, SCALE), ss.gumbel_l.ppf)
_add("vonmises.logpdf", ps.vonmises.logpdf, (X, 1.7), ss.vonmises.logpdf)
_add("vonmises.pdf", ps.vonmises.pdf, (X, 1.7), ss.vonmises.pdf)
_add("wrapcauchy.logpdf", ps.wrapcauchy.logpdf, (POS, 0.4), ss.wrapcauchy.logpdf)
for f in ("logpmf", "pmf"):
    _add(f"poisson.{f}", getattr(ps.poisson, f), (K, 3.5), getattr(ss.poisson, f))
    _add(f"binom.{f}", getattr(ps.binom, f), (K, 12.0, 0.35), getattr(ss.binom, f))
    _add(f"nbinom.{f}", getattr(ps.nbinom, f), (K, 4.0, 0.35), getattr(ss.nbinom, f))
    _add(f"geom.{f}", getattr(ps.geom, f), (K + 1, 0.3), getattr(ss.geom, f))
    _add(f"bernoulli.{f}", getattr(ps.bernoulli, f), (np.array([0., 1., 1., 0., 2.]), 0.3),
         getattr(ss.bernoulli, f))
    _add(f"betabinom.{f}", getattr(ps.betabinom, f), (K, 12.0, 2.0, 3.0),
         getattr(ss.betabinom, f))
_add("poisson.cdf", ps.poisson.cdf, (K, 3.5), ss.poisson.cdf)
_add("bernoulli.cdf", ps.bernoulli.cdf, (np.array([-1., 0., 0.5, 1., 2.]), 0.3),
     ss.bernoulli.cdf)
_add("bernoulli.ppf", ps.bernoulli.ppf, (U, 0.3), ss.bernoulli.ppf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_scipy_stats(name):
    fn, args, ref, ref_args = CASES[name]
    out = np.asarray(fn(*args))
    expected = ref(*ref_args)
    np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-13)


def test_multivariate_distributions():
    mean = np.array([0.5, -1.0, 2.0])
    a = R.normal(size=(3, 3))
    cov = a @ a.T + np.eye(3)
    x = R.normal(size=(4, 3))
    np.testing.assert_allclose(np.asarray(ps.multivariate_normal.logpdf(x, mean, cov)),
                               ss.multivariate_normal.logpdf(x, mean, cov), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(ps.multivariate_normal.pdf(x, mean, cov)),
                               ss.multivariate_normal.pdf(x, mean, cov), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(ps.multivariate_normal.logpdf(x, mean, 2.0)),
                               ss.multivariate_normal.logpdf(x, mean, 2.0 * np.eye(3)),
                               rtol=1e-10)
    alpha = np.array([0.7, 2.0, 3.5])
    pts = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]).T  # categories on axis 0 (as JAX)
    np.testing.assert_allclose(np.asarray(ps.dirichlet.logpdf(pts, alpha)),
                               [ss.dirichlet.logpdf(p, alpha) for p in pts.T], rtol=1e-10)
    counts = np.array([2, 3, 5])
    p = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(float(ps.multinomial.logpmf(counts, 10, p)),
                               ss.multinomial.logpmf(counts, 10, p), rtol=1e-10)
    with pytest.raises(ValueError, match="x and n must be of integer type"):
        ps.multinomial.logpmf(counts.astype(float), 10.0, p)
    with pytest.raises(ValueError, match="`alpha` must be one-dimensional"):
        ps.dirichlet.logpdf(pts, alpha[None])
    with pytest.raises(ValueError, match="incompatible shapes"):
        ps.multivariate_normal.logpdf(x, mean, np.eye(2))


def test_out_of_support_values_are_jaxs():
    assert float(ps.gamma.logpdf(-1.0, 2.0)) == -np.inf
    assert float(ps.beta.logpdf(1.5, 2.0, 2.0)) == -np.inf
    assert np.isnan(float(ps.beta.logpdf(0.5, -2.0, 2.0)))
    assert float(ps.poisson.logpmf(2.5, 3.0)) == -np.inf
    assert np.isnan(float(ps.expon.ppf(1.5)))
    assert np.isnan(float(ps.vonmises.logpdf(0.3, -1.0)))
    assert float(ps.uniform.cdf(5.0, 0.0, 1.0)) == 1.0


def test_grads():
    check_grads(lambda loc, scale: ps.norm.logpdf(X, loc, scale).sum(),
                [np.float64(0.3), np.float64(1.4)], order=2)
    check_grads(lambda a: ps.gamma.logpdf(POS, a).sum(), [np.float64(2.2)], order=2)
    check_grads(lambda x: ps.beta.cdf(x, 2.0, 3.0), [np.array([0.2, 0.7])], order=2)
    check_grads(lambda x: ps.norm.logcdf(x), [np.array([-25.0, -2.0, 1.0, 9.0])], order=1)
    check_grads(lambda mu: ps.poisson.logpmf(K, mu).sum(), [np.float64(3.0)], order=2)
    check_grads(lambda x: ps.t.logpdf(x, 3.0), [np.array([-1.0, 2.0])], order=2)
    with pytest.raises(ValueError, match="Betainc gradient"):
        pb.grad(lambda a: ps.beta.cdf(0.3, a, 2.0))(np.float64(1.5))


def test_jit_and_vmap():
    f = lambda x: ps.norm.logcdf(x) + ps.gamma.cdf(pb.numpy.abs(x), 2.0) + ps.t.pdf(x, 4.0)
    np.testing.assert_allclose(np.asarray(pb.jit(f)(X)), np.asarray(f(X)), rtol=1e-14)
    check_vmap(f, [X[:4]])
    check_vmap(lambda x, a: ps.beta.logpdf(x, a, 2.0), [U[:3], POS[:3]])


def test_float32():
    out = ps.norm.logpdf(np.float32(0.5), np.float32(0.0), np.float32(1.0))
    assert out.dtype == np.float32
    np.testing.assert_allclose(float(out), ss.norm.logpdf(0.5), rtol=1e-6)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata(method):
    a = np.array([[3., 1., 2., 2., 5.], [4., 4., 1., 1., 0.]])
    np.testing.assert_array_equal(np.asarray(ps.rankdata(a, method)), ss.rankdata(a, method))
    np.testing.assert_array_equal(np.asarray(ps.rankdata(a, method, axis=1)),
                                  ss.rankdata(a, method, axis=1))
    assert np.all(np.isnan(np.asarray(ps.rankdata(np.array([1., np.nan, 2.]), method))))
    with pytest.raises(ValueError, match="unknown method"):
        ps.rankdata(a, "middle")


def test_mode_and_sem():
    a = np.array([[3., 1., 2., 2., 5.], [4., 4., 1., 1., 0.]])
    m = ps.mode(a, axis=1)
    ref = ss.mode(a, axis=1)
    np.testing.assert_array_equal(np.asarray(m.mode), ref.mode)
    np.testing.assert_array_equal(np.asarray(m.count), ref.count)
    assert float(ps.mode(a, axis=None).mode) == 1.0 and int(ps.mode(a, axis=None).count) == 3
    np.testing.assert_allclose(np.asarray(ps.sem(a, axis=1)), ss.sem(a, axis=1), rtol=1e-12)
    np.testing.assert_allclose(float(ps.sem(a, axis=None)), ss.sem(a, axis=None), rtol=1e-12)
    with pytest.raises(ValueError, match="Illegal nan_policy"):
        ps.mode(a, nan_policy="skip")


@pytest.mark.parametrize("kw", [{}, {"bw_method": "silverman"}, {"bw_method": 0.4}, "weights"])
def test_gaussian_kde(kw):
    data = R.normal(size=(2, 40))
    if kw == "weights":
        kw = {"weights": R.uniform(0.5, 2, 40)}
    pts = R.normal(size=(2, 6))
    k, s = ps.gaussian_kde(data, **kw), ss.gaussian_kde(data, **kw)
    np.testing.assert_allclose(np.asarray(k.evaluate(pts)), s.evaluate(pts), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(k.logpdf(pts)), s.logpdf(pts), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(k.covariance), s.covariance, rtol=1e-12)
    k1, s1 = ps.gaussian_kde(data[0]), ss.gaussian_kde(data[0])
    np.testing.assert_allclose(float(k1.integrate_box_1d(-0.5, 1.0)),
                               s1.integrate_box_1d(-0.5, 1.0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(pb.jit(lambda kd, x: kd.pdf(x))(k1, X[:3])),
                               s1.pdf(X[:3]), rtol=1e-12)  # a pytree through jit
    assert k1.resample(pb.random.PRNGKey(0), (5,)).shape == (1, 5)
    with pytest.raises(ValueError, match="bw_method"):
        ps.gaussian_kde(data, bw_method="wide")
