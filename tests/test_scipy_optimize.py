"""pullback.scipy.optimize.minimize against SciPy's minimiser and JAX's recorded results
(iteration and evaluation counts, status codes), eager, jit and vmap."""
from __future__ import annotations

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback.scipy import optimize as opt

scipy_optimize = pytest.importorskip("scipy.optimize")

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
_RNG = np.random.default_rng(1)
_X = _RNG.standard_normal((40, 3))
_Y = (_X @ np.array([1.0, -2.0, 0.5]) + 0.3 * _RNG.standard_normal(40) > 0).astype(float)
_AQ = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
_BQ = np.array([1.0, -1.0, 2.0])
_X0_ROSEN = np.array([-1.2, 1.0, 0.5, 2.0])


def rosen(x, np_=jnp):
    return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quad(x, np_=jnp):
    return 0.5 * x @ (np_.asarray(_AQ) @ x) - np_.asarray(_BQ) @ x


def logreg(w, X, y, np_=jnp):
    z = X @ w
    return np_.mean(np_.logaddexp(0.0, z) - y * z) + 0.01 * np_.sum(w * w)


# JAX 0.10.2's results in float64 (x, nit, nfev, njev, status): the counts pin the line
# search's branch structure, the status codes JAX's numbering
JAX_F64 = {
    ("BFGS", "rosen"): ([-0.77565909, 0.61309315, 0.38206256, 0.14597178], 31, 37, 37, 0),
    (LBFGS, "rosen"): ([-0.84330386, 0.71675374, 0.51708452, 0.264885], 22, 37, 37, 5),
    ("BFGS", "quad"): ([0.88235284, -1.64705879, 2.82352948], 8, 9, 9, 0),
    (LBFGS, "quad"): ([0.88235294, -1.64705882, 2.82352941], 5, 7, 7, 0),
    ("BFGS", "logreg"): ([1.23235117, -2.59431483, 0.53309482], 16, 17, 17, 0),
    (LBFGS, "logreg"): ([1.23239031, -2.59431364, 0.53307843], 8, 9, 9, 0),
}


def _problem(name):
    if name == "rosen":
        return rosen, _X0_ROSEN, ()
    if name == "quad":
        return quad, np.zeros(3), ()
    return logreg, np.zeros(3), (_X, _Y)


@pytest.mark.parametrize("method,name", sorted(JAX_F64))
def test_matches_jax_recorded_results(method, name):
    fun, x0, args = _problem(name)
    want_x, nit, nfev, njev, status = JAX_F64[(method, name)]
    with pb.enable_x64():
        r = opt.minimize(fun, jnp.asarray(x0), tuple(jnp.asarray(a) for a in args),
                         method=method)
        assert r.x.dtype == np.float64
        np.testing.assert_allclose(np.asarray(r.x), want_x, rtol=1e-6, atol=1e-7)
        assert (int(r.nit), int(r.nfev), int(r.njev), int(r.status)) == (nit, nfev, njev,
                                                                          status)
        assert bool(r.success) == (status == 0)
        np.testing.assert_allclose(float(r.fun), float(fun(r.x, *args)), rtol=1e-12)
        if method == "BFGS":
            assert r.hess_inv.shape == (len(x0), len(x0))
        else:
            assert r.hess_inv is None


@pytest.mark.parametrize("name", ["quad", "logreg"])
def test_bfgs_matches_scipy_minimum(name):
    fun, x0, args = _problem(name)
    want = scipy_optimize.minimize(lambda x: float(fun(x, *args, np_=np)), x0,
                                   method="BFGS", options={"gtol": 1e-8})
    with pb.enable_x64():
        r = opt.minimize(fun, jnp.asarray(x0), tuple(jnp.asarray(a) for a in args),
                         method="BFGS", options={"gtol": 1e-8})
    np.testing.assert_allclose(np.asarray(r.x), want.x, rtol=1e-5, atol=1e-6)
    if name == "quad":
        np.testing.assert_allclose(np.asarray(r.x), np.linalg.solve(_AQ, _BQ), rtol=1e-6)
        # BFGS's inverse-Hessian estimate converges to A^-1 on a quadratic
        np.testing.assert_allclose(np.asarray(r.hess_inv), np.linalg.inv(_AQ), atol=1e-2)


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_jit_equals_eager_and_vmap_equals_loop(method):
    x0s = np.stack([_X0_ROSEN, _X0_ROSEN * 0.5, np.ones(4) * 0.3])
    with pb.enable_x64():
        run = lambda x: opt.minimize(rosen, x, method=method, options={"maxiter": 50})
        eager = [run(jnp.asarray(x)) for x in x0s]
        jitted = pb.jit(run)(jnp.asarray(x0s[0]))
        batched = pb.vmap(run)(jnp.asarray(x0s))
    for field in ("x", "fun", "nit", "nfev", "status"):
        np.testing.assert_allclose(np.asarray(getattr(jitted, field)),
                                   np.asarray(getattr(eager[0], field)), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(getattr(batched, field)),
                                   np.stack([np.asarray(getattr(e, field)) for e in eager]),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.x32
def test_maxiter_status_and_float32():
    r = opt.minimize(rosen, jnp.asarray(_X0_ROSEN, jnp.float32), method="BFGS",
                     options={"maxiter": 3})
    assert (int(r.nit), int(r.status), bool(r.success)) == (3, 1, False)
    assert r.x.dtype == np.float32 and r.jac.dtype == np.float32
    r = opt.minimize(quad, jnp.zeros(3, jnp.float32), method="BFGS")
    np.testing.assert_allclose(np.asarray(r.x), np.linalg.solve(_AQ, _BQ), rtol=1e-4)


def test_options_reach_the_solver():
    with pb.enable_x64():
        loose = opt.minimize(quad, jnp.zeros(3), method="BFGS", options={"gtol": 1e-1})
        tight = opt.minimize(quad, jnp.zeros(3), method="BFGS", options={"gtol": 1e-8})
        assert (int(loose.nit), int(tight.nit)) == (4, 9)
        assert 1e-8 > float(jnp.max(jnp.abs(tight.jac)))
        # past what float64 line searches can reach: JAX's status 3 (zoom failed)
        stuck = opt.minimize(quad, jnp.zeros(3), method="BFGS", options={"gtol": 1e-10})
        assert (int(stuck.status), bool(stuck.success)) == (3, False)
        r = opt.minimize(quad, jnp.zeros(3), method=LBFGS, options={"maxcor": 1})
        np.testing.assert_allclose(np.asarray(r.x), np.linalg.solve(_AQ, _BQ), rtol=1e-4)
    with pytest.raises(TypeError):
        opt.minimize(quad, jnp.zeros(3), method="BFGS", options={"no_such_option": 1})


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="minimize.*'method'.*'nelder-mead'"):
        opt.minimize(quad, jnp.zeros(3), method="nelder-mead")
    with pytest.raises(TypeError, match="minimize.*'args'.*tuple"):
        opt.minimize(logreg, jnp.zeros(3), [_X, _Y], method="BFGS")
    with pytest.raises(ValueError, match="minimize.*'x0'.*1-D"):
        opt.minimize(quad, jnp.zeros((3, 1)), method="BFGS")


def test_optimize_results_is_jax_namedtuple():
    assert opt.OptimizeResults._fields == ("x", "success", "status", "fun", "jac", "hess_inv",
                                           "nfev", "njev", "nit")
    assert opt.__all__ == ["OptimizeResults", "minimize"]


@pytest.mark.x32
def test_against_jax_oracle_float32():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    from jax.scipy import optimize as jopt
    # JAX in its default (x32) mode: other tests switch JAX's x64 on and may leave it on
    saved = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        _jax_oracle_float32(jjnp, jopt)
    finally:
        jax.config.update("jax_enable_x64", saved)


def _jax_oracle_float32(jjnp, jopt):
    for method in ("BFGS", LBFGS):
        # gtol well above float32's noise floor: at 1e-5 the last step's rounding decides
        want = jopt.minimize(lambda x: quad(x, jjnp), jjnp.zeros(3, jjnp.float32),
                             method=method, options={"gtol": 1e-3})
        got = opt.minimize(quad, jnp.zeros(3, jnp.float32), method=method,
                           options={"gtol": 1e-3})
        np.testing.assert_allclose(np.asarray(got.x), np.asarray(want.x), rtol=1e-4)
        assert (int(got.status), int(got.nit)) == (int(want.status), int(want.nit))
