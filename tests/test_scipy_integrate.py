"""pullback.scipy.integrate.trapezoid against NumPy's trapezoid (JAX's is the same rule)."""
from __future__ import annotations

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback.scipy import integrate
from pullback.test_util import check_grads

_RNG = np.random.default_rng(3)


@pytest.mark.parametrize("shape,axis", [((5,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 1, 6), -1),
                                        ((0,), -1), ((4, 0), 0), ((1,), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_numpy(shape, axis, dtype):
    y = _RNG.standard_normal(shape).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    got = integrate.trapezoid(jnp.asarray(y), axis=axis)
    np.testing.assert_allclose(np.asarray(got), np.trapezoid(y, axis=axis), rtol=tol, atol=tol)
    assert got.dtype == dtype
    got = integrate.trapezoid(jnp.asarray(y), dx=0.25, axis=axis)
    np.testing.assert_allclose(np.asarray(got), np.trapezoid(y, dx=0.25, axis=axis), rtol=tol,
                               atol=tol)
    x = np.sort(_RNG.standard_normal(shape[axis])).astype(dtype)
    got = integrate.trapezoid(jnp.asarray(y), jnp.asarray(x), axis=axis)
    np.testing.assert_allclose(np.asarray(got), np.trapezoid(y, x, axis=axis), rtol=tol,
                               atol=tol)


def test_integer_input_and_x_shaped_like_y():
    y = np.arange(12).reshape(3, 4)
    got = integrate.trapezoid(jnp.asarray(y))
    np.testing.assert_allclose(np.asarray(got), np.trapezoid(y))
    assert np.issubdtype(got.dtype, np.floating)
    x = np.cumsum(np.abs(_RNG.standard_normal((3, 4))), axis=1)
    np.testing.assert_allclose(np.asarray(integrate.trapezoid(jnp.asarray(y), jnp.asarray(x))),
                               np.trapezoid(y, x), rtol=1e-12)


def test_jit_vmap_grad():
    y = jnp.asarray(_RNG.standard_normal((3, 5)))
    x = jnp.asarray(np.sort(_RNG.standard_normal(5)))
    f = lambda y, x: integrate.trapezoid(y, x)
    np.testing.assert_allclose(np.asarray(pb.jit(f)(y, x)), np.asarray(f(y, x)), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(pb.vmap(f, in_axes=(0, None))(y, x)),
                               np.asarray(f(y, x)), rtol=1e-14)
    check_grads(f, (y, x), order=2, modes=("fwd", "rev"))


def test_bad_axis_names_it():
    with pytest.raises(Exception, match="trapezoid.*axis"):
        integrate.trapezoid(jnp.ones((2, 3)), axis=2)
