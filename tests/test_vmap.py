"""vmap: in_axes/out_axes forms, axis_size, nesting, collectives, and its errors."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax

RNG = np.random.default_rng(1)


def arr(*shape):
    return jnp.asarray(RNG.normal(size=shape).astype(np.float32))


def test_in_axes_and_out_axes():
    x, y = arr(3, 4), arr(5, 3)
    f = lambda a, b: a * jnp.sum(b)
    out = pb.vmap(f, in_axes=(0, 1), out_axes=1)(x, y)
    want = np.stack([np.asarray(f(x[i], y[:, i])) for i in range(3)], axis=1)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    # negative axes, None, pytrees of axes
    out2 = pb.vmap(lambda d, c: d["a"] * c, in_axes=({"a": -1}, None))({"a": x}, 2.0)
    np.testing.assert_allclose(np.asarray(out2), 2 * np.asarray(x).T, rtol=1e-6)


def test_axis_size_without_mapped_inputs_and_broadcast_outputs():
    out = pb.vmap(lambda: jnp.ones(2), axis_size=3)()
    assert out.shape == (3, 2)
    out = pb.vmap(lambda x, c: (x * 2.0, c), in_axes=(0, None), out_axes=(0, 0))(arr(4), 7.0)
    assert out[1].shape == (4,) and np.asarray(out[1]).tolist() == [7.0] * 4


def test_nested_vmap_is_an_outer_product_of_loops():
    x, y = arr(3), arr(4)
    out = pb.vmap(lambda a: pb.vmap(lambda b: a * b)(y))(x)
    np.testing.assert_allclose(np.asarray(out), np.outer(np.asarray(x), np.asarray(y)), rtol=1e-6)


def test_collectives():
    x = arr(4, 3)
    np.testing.assert_allclose(np.asarray(pb.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(x)),
                               np.broadcast_to(np.asarray(x).sum(0), (4, 3)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(pb.vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i")(x)),
                               np.asarray(x) - np.asarray(x).mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(pb.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(x)),
                               np.broadcast_to(np.asarray(x).max(0), (4, 3)))
    idx = pb.vmap(lambda v: lax.axis_index("i"), axis_name="i")(x)
    assert np.asarray(idx).tolist() == [0, 1, 2, 3]
    g = pb.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(x)
    assert g.shape == (4, 4, 3)
    np.testing.assert_allclose(np.asarray(g[2]), np.asarray(x))
    # a value constant along the axis, and two nested named axes
    assert np.asarray(pb.vmap(lambda v: lax.psum(1.0, "i"), axis_name="i")(x)).tolist() == [4.0] * 4
    out = pb.vmap(pb.vmap(lambda v: lax.psum(v, "i"), axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(out), np.broadcast_to(np.asarray(x).sum(0), (4, 3)),
                               rtol=1e-6)
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        pb.vmap(lambda v: lax.psum(v, "k"), axis_name="i")(x)


@pytest.mark.parametrize("tiled", [False, True])
def test_all_gather_gradient_sums_the_cotangents_of_every_lane(tiled):
    # lane l's loss is w_l * sum(all_gather(v) * c): v_l feeds every lane's loss, so its
    # gradient is sum_m(w_m) * c[l] = 6 * c[l] (JAX's transpose: reduce_scatter), not w_l * c[l]
    x = jnp.asarray(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    w = jnp.asarray([1.0, 2.0, 3.0])
    c = np.array([[1.0, -2.0], [0.5, 4.0], [3.0, -1.0]], np.float32)
    cw = jnp.asarray(c.reshape(6) if tiled else c)

    def loss(v, wl):
        return wl * jnp.sum(lax.all_gather(v, "i", tiled=tiled) * cw)
    g = pb.vmap(pb.grad(loss), axis_name="i")(x, w)
    np.testing.assert_allclose(np.asarray(g), 6 * c)
    # and the transpose of that transpose: the gradient's own jvp gathers again
    t = pb.vmap(lambda v, wl: pb.jvp(pb.grad(loss), (v, wl), (v, wl))[1],
                axis_name="i")(x, w)
    np.testing.assert_allclose(np.asarray(t), 6 * c)


def test_inconsistent_axis_sizes_raise():
    with pytest.raises(ValueError, match="inconsistent sizes.*argument 0 has size 3.*argument 1 has size 4"):
        pb.vmap(lambda a, b: a + b)(arr(3), arr(4))


def test_out_axes_that_do_not_fit_raise():
    with pytest.raises(ValueError, match="out_axes=2 is out of bounds for an output of rank 2"):
        pb.vmap(lambda a: a, out_axes=2)(arr(3, 2))
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        pb.vmap(lambda a: a, out_axes=None)(arr(3))


def test_in_axes_errors():
    with pytest.raises(ValueError, match="map its argument along axis 2"):
        pb.vmap(lambda a: a, in_axes=2)(arr(3, 2))
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        pb.vmap(lambda a: a, in_axes=None)(arr(3))
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1, len\\(args\\)=2"):
        pb.vmap(lambda a, b: a, in_axes=(0,))(arr(3), arr(3))


def test_vmap_under_jit_and_jit_under_vmap():
    x = arr(5, 3)
    f = lambda v: jnp.exp(v) * jnp.sum(v)
    want = np.stack([np.asarray(f(x[i])) for i in range(5)])
    np.testing.assert_allclose(np.asarray(pb.jit(pb.vmap(f))(x)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(pb.vmap(pb.jit(f))(x)), want, rtol=1e-5)
