"""Behaviours where pullback once differed from JAX 0.10; the expected values are JAX's."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.tracer import core

# JAX's expected values were recorded in its default (32-bit) mode
pytestmark = pytest.mark.x32


# ---- has_aux: aux leaves come back as values, not as the finished level's tracers ----

def _f_aux(x):
    return jnp.sum(x ** 2), {"a": x * 2, "b": 3.0}


def _check_aux(aux, want_a=(0., 2., 4.)):
    assert not isinstance(aux["a"], core.Tracer)
    np.testing.assert_array_equal(np.asarray(aux["a"]), want_a)
    np.testing.assert_array_equal(np.asarray(aux["a"] + 1), np.asarray(want_a) + 1)  # usable
    assert float(aux["b"]) == 3.0


@pytest.mark.parametrize("which", ["grad", "value_and_grad", "vjp", "jvp", "linearize",
                                   "jacfwd", "jacrev", "hessian"])
def test_has_aux_returns_values(which):
    x = jnp.arange(3.)
    if which == "grad":
        g, aux = pb.grad(_f_aux, has_aux=True)(x)
        np.testing.assert_array_equal(np.asarray(g), [0., 2., 4.])
    elif which == "value_and_grad":
        (v, aux), g = pb.value_and_grad(_f_aux, has_aux=True)(x)
        assert float(v) == 5.0
    elif which == "vjp":
        _, _, aux = pb.vjp(_f_aux, x, has_aux=True)
    elif which == "jvp":
        _, t, aux = pb.jvp(_f_aux, (x,), (x,), has_aux=True)
        assert float(t) == 10.0
    elif which == "linearize":
        _, f_jvp, aux = pb.linearize(_f_aux, x, has_aux=True)
        assert float(f_jvp(x)) == 10.0
    else:
        _, aux = getattr(pb, which)(_f_aux, has_aux=True)(x)
    _check_aux(aux)
    assert type(aux["b"]) is float  # untouched non-array leaves, as in JAX


def test_has_aux_under_jit():
    x = jnp.arange(3.)
    for fn in (pb.jit(pb.grad(_f_aux, has_aux=True)),
               pb.jit(lambda x: pb.grad(_f_aux, has_aux=True)(x))):
        g, aux = fn(x)
        np.testing.assert_array_equal(np.asarray(g), [0., 2., 4.])
        _check_aux(aux)
        assert aux["b"].dtype == np.float32 and aux["b"].weak_type  # a jit output, as in JAX
    _check_aux(pb.jit(lambda x: pb.vjp(_f_aux, x, has_aux=True)[2])(x))
    _check_aux(pb.jit(lambda x: pb.linearize(_f_aux, x, has_aux=True)[2])(x))


def test_has_aux_under_vmap():
    xs = jnp.ones((2, 3))
    g, aux = pb.vmap(pb.grad(_f_aux, has_aux=True))(xs)
    np.testing.assert_array_equal(np.asarray(aux["a"]), np.full((2, 3), 2.))
    np.testing.assert_array_equal(np.asarray(aux["b"]), [3., 3.])
    aux = pb.vmap(lambda x: pb.jvp(_f_aux, (x,), (x,), has_aux=True)[2])(xs)
    np.testing.assert_array_equal(np.asarray(aux["a"]), np.full((2, 3), 2.))


def test_has_aux_keeps_outer_derivatives():
    # aux carries the derivative of the transformations around the one that returned it
    x = jnp.arange(3.)
    g = pb.grad(lambda x: pb.grad(_f_aux, has_aux=True)(x)[1]["a"].sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [2., 2., 2.])
    _, t = pb.jvp(lambda x: pb.value_and_grad(_f_aux, has_aux=True)(x)[0][1]["a"], (x,), (x,))
    np.testing.assert_array_equal(np.asarray(t), [0., 2., 4.])


def test_jacobian_aux_under_jit_and_vmap():
    xs = jnp.ones((2, 3))
    for jac in (pb.jacfwd, pb.jacrev, pb.hessian):
        _check_aux(pb.jit(jac(_f_aux, has_aux=True))(xs[0])[1], want_a=(2., 2., 2.))
        aux = pb.vmap(jac(_f_aux, has_aux=True))(xs)[1]
        np.testing.assert_array_equal(np.asarray(aux["a"]), np.full((2, 3), 2.))


def test_has_aux_through_checkpoint_scan_cond_and_custom_jvp():
    w = pb.custom_jvp(lambda x: x * 3)
    w.defjvp(lambda p, t: (p[0] * 3, t[0] * 3))

    def f(x):
        y = pb.checkpoint(lambda x: jnp.sin(x) * 2)(x)
        z = lax.scan(lambda c, a: (c + a, c * a), 0., x)[1]
        c = lax.cond(True, lambda x: x + 1, lambda x: x, x)
        return jnp.sum(y), {"y": y, "z": z, "c": c, "w": w(x)}

    x = jnp.arange(3.)
    for fn in (pb.grad(f, has_aux=True), pb.jit(pb.grad(f, has_aux=True))):
        _, aux = fn(x)
        for leaf in aux.values():
            assert not isinstance(leaf, core.Tracer)
        np.testing.assert_allclose(np.asarray(aux["y"]), 2 * np.sin([0., 1., 2.]), rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(aux["z"]), [0., 0., 2.])
        np.testing.assert_array_equal(np.asarray(aux["c"]), [1., 2., 3.])
        np.testing.assert_array_equal(np.asarray(aux["w"]), [0., 3., 6.])


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match="has_aux"):
        pb.grad(lambda x: x * 2.0, has_aux=True)(1.0)
    with pytest.raises(TypeError, match="has_aux"):
        pb.jvp(lambda x: x * 2.0, (1.0,), (1.0,), has_aux=True)


# ---- out-of-bounds indices: JAX's modes, forward and backward ----

def _both(f, *args):
    """f's value eagerly and under jit (they must agree)."""
    eager = np.asarray(f(*args))
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(*args)), eager)
    return eager


def test_static_int_index_out_of_bounds_clamps():
    # counted from the end once, then clamped (JAX's slicing); slices are unaffected
    x, x2 = jnp.arange(5.), jnp.arange(12.).reshape(3, 4)
    for f, want in [(lambda x: x[10], 4.), (lambda x: x[-10], 0.), (lambda x: x[5], 4.),
                    (lambda x: x[-6], 0.), (lambda x: x.at[10].get(), 4.),
                    (lambda x: x.at[-10].get(), 0.), (lambda x: x.at[10].get(mode="clip"), 4.),
                    (lambda x: x[jnp.array([10])], [4.])]:
        np.testing.assert_array_equal(_both(f, x), want)
    assert np.isnan(_both(lambda x: x.at[10].get(mode="fill"), x))
    assert _both(lambda x: x[10:12], x).shape == (0,)
    for f, want in [(lambda x: x[10, 0], 8.), (lambda x: x[0, 10], 3.),
                    (lambda x: x[10], [8., 9., 10., 11.]), (lambda x: x[-10], [0., 1., 2., 3.]),
                    (lambda x: x[10, :2], [8., 9.]), (lambda x: x[1:, 10], [7., 11.]),
                    (lambda x: x[10, jnp.array([0, 1])], [8., 9.]),
                    (lambda x: x[..., 10], [3., 7., 11.]),
                    (lambda x: x[None, 10], [[8., 9., 10., 11.]])]:
        np.testing.assert_array_equal(_both(f, x2), want)
    # the derivative goes to the clamped element (a slice's), and vmap clamps per lane
    np.testing.assert_array_equal(np.asarray(pb.grad(lambda x: x[10] * 2)(x)), [0, 0, 0, 0, 2])
    np.testing.assert_array_equal(np.asarray(pb.grad(lambda x: x[-10] * 2)(x)), [2, 0, 0, 0, 0])
    np.testing.assert_array_equal(np.asarray(pb.vmap(lambda x: x[10])(x2)), [3., 7., 11.])


def test_static_int_update_out_of_bounds():
    x = jnp.arange(5.)
    for f, want in [(lambda x: x.at[10].set(9.), [0, 1, 2, 3, 4]),
                    (lambda x: x.at[-10].set(9.), [0, 1, 2, 3, 4]),
                    (lambda x: x.at[10].set(9., mode="clip"), [0, 1, 2, 3, 9]),
                    (lambda x: x.at[-10].add(9., mode="clip"), [9, 1, 2, 3, 4])]:
        np.testing.assert_array_equal(_both(f, x), want)


X3 = jnp.array([1., 2., 3.])
I5 = jnp.array([5, 1, -1, -4, -3])  # two out of bounds (5 and -4), three counted from the end


def _fwd_grad_jvp(f):
    fwd = _both(f, X3)
    loss = lambda x: (f(x) ** 2).sum()
    grad = np.asarray(pb.grad(loss)(X3))
    np.testing.assert_array_equal(np.asarray(pb.jit(pb.grad(loss))(X3)), grad)
    jvp = np.asarray(pb.jvp(f, (X3,), (X3 * 10,))[1])
    return fwd, grad, jvp


@pytest.mark.parametrize("how, fwd, grad, jvp", [
    # x[I] / .get(): gather in promise_in_bounds, which clamps; its transpose drops
    ("getitem", [3, 2, 3, 1, 1], [2, 4, 6], [30, 20, 30, 10, 10]),
    ("get", [3, 2, 3, 1, 1], [2, 4, 6], [30, 20, 30, 10, 10]),
    ("get-promise_in_bounds", [3, 2, 3, 1, 1], [2, 4, 6], [30, 20, 30, 10, 10]),
    ("get-clip", [3, 2, 3, 1, 1], [4, 4, 12], [30, 20, 30, 10, 10]),
    ("get-fill", [np.nan, 2, 3, np.nan, 1], [2, 4, 6], [0, 20, 30, 0, 10]),
    ("take", [np.nan, 2, 3, np.nan, 1], [2, 4, 6], [0, 20, 30, 0, 10]),
    ("take-clip", [3, 2, 1, 1, 1], [6, 4, 6], [30, 20, 10, 10, 10]),  # no counting from the end
    ("take-fill", [np.nan, 2, 3, np.nan, 1], [2, 4, 6], [0, 20, 30, 0, 10]),
    ("lax.gather", [3, 2, 1, 1, 1], [0, 4, 0], [30, 20, 10, 10, 10]),
    ("lax.gather-clip", [3, 2, 1, 1, 1], [6, 4, 6], [30, 20, 10, 10, 10]),
    ("lax.gather-fill", [np.nan, 2, np.nan, np.nan, np.nan], [0, 4, 0], [0, 20, 0, 0, 0]),
])
def test_out_of_bounds_gather_values_and_derivatives(how, fwd, grad, jvp):
    name, _, mode = how.partition("-")
    mode = mode or None
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                    start_index_map=(0,))
    f = {"getitem": lambda x: x[I5], "get": lambda x: x.at[I5].get(mode=mode),
         "take": lambda x: jnp.take(x, I5, mode=mode),
         "lax.gather": lambda x: lax.gather(x, I5[:, None], dn, (1,), mode=mode)}[name]
    got = _fwd_grad_jvp(f)
    for g, w in zip(got, (fwd, grad, jvp)):
        np.testing.assert_array_equal(g, np.asarray(w, np.float32))


def test_out_of_bounds_gather_gradient_under_vmap():
    xs = jnp.array([[1., 2., 3.], [4., 5., 6.]])
    g = pb.vmap(pb.grad(lambda x: (x[I5] ** 2).sum()))(xs)
    np.testing.assert_array_equal(np.asarray(g), [[2., 4., 6.], [8., 10., 12.]])
    # the brief's example: x[[5, 1]] reads x[2] and x[1], the gradient of x[2] is dropped
    np.testing.assert_array_equal(
        np.asarray(pb.grad(lambda x: (x[jnp.array([5, 1])] ** 2).sum())(X3)), [0., 4., 0.])


@pytest.mark.parametrize("mode, fwd, grad, jvp", [
    (None, [[np.nan, 4, np.nan], [4, 18, np.nan]], [32, 16, 216],
     [[0, 40, 0], [40, 180, 0]]),
    ("clip", [[9, 4, 1], [4, 18, 18]], [34, 16, 486], [[90, 40, 10], [40, 180, 180]]),
    ("fill", [[np.nan, 4, np.nan], [4, 18, np.nan]], [32, 16, 216],
     [[0, 40, 0], [40, 180, 0]]),
    # promise_in_bounds does not count negative indices from the end (JAX's legacy rule)
    ("promise_in_bounds", [[9, 4, 1], [4, 4, 18]], [32, 16, 0], [[90, 40, 10], [40, 40, 180]]),
])
def test_take_along_axis_out_of_bounds(mode, fwd, grad, jvp):
    x2 = jnp.arange(1., 7.).reshape(2, 3)
    i2 = jnp.array([[5, 1, -4], [0, -1, 3]])
    got = _fwd_grad_jvp(lambda x: jnp.take_along_axis(x2 * x, i2, axis=1, mode=mode))
    for g, w in zip(got, (fwd, grad, jvp)):
        np.testing.assert_array_equal(g, np.asarray(w, np.float32))
    wrapped = jnp.take_along_axis(x2, i2, axis=1, mode="promise_in_bounds",
                                  wrap_negative_indices=True)
    np.testing.assert_array_equal(np.asarray(wrapped), [[3, 2, 1], [4, 6, 6]])


@pytest.mark.parametrize("mode, fwd, grad_x, grad_u", [
    (None, [51, 22, 33], [102, 44, 66], [0, 44, 66, 0, 102]),
    ("drop", [51, 22, 33], [102, 44, 66], [0, 44, 66, 0, 102]),
    ("promise_in_bounds", [51, 22, 33], [102, 44, 66], None),
    ("clip", [91, 22, 43], [182, 44, 86], [86, 44, 86, 182, 182]),
])
def test_out_of_bounds_at_add(mode, fwd, grad_x, grad_u):
    u = jnp.array([10., 20., 30., 40., 50.])
    f = lambda x, u: x.at[I5].add(u, mode=mode)
    np.testing.assert_array_equal(_both(f, X3, u), fwd)
    gx, gu = pb.grad(lambda x, u: (f(x, u) ** 2).sum(), (0, 1))(X3, u)
    np.testing.assert_array_equal(np.asarray(gx), grad_x)
    if grad_u is not None:
        np.testing.assert_array_equal(np.asarray(gu), grad_u)


@pytest.mark.parametrize("mode, fwd, grad_u, jvp", [
    (None, [1, 22, 3], [0, 44, 0, 0, 0], [10, 40, 30]),
    ("clip", [121, 22, 13], [26, 44, 242, 242, 242], [130, 40, 40]),
    ("fill", [1, 22, 3], [0, 44, 0, 0, 0], [10, 40, 30]),
    # the transpose of a promise_in_bounds scatter-add is a promise_in_bounds gather: clamped
    ("promise_in_bounds", [1, 22, 3], [6, 44, 2, 2, 2], [10, 40, 30]),
])
def test_out_of_bounds_lax_scatter_add(mode, fwd, grad_u, jvp):
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    u = jnp.array([10., 20., 30., 40., 50.])
    f = lambda x, u: lax.scatter_add(x, I5[:, None], u, sdn, mode=mode)
    np.testing.assert_array_equal(_both(f, X3, u), fwd)
    _, gu = pb.grad(lambda x, u: (f(x, u) ** 2).sum(), (0, 1))(X3, u)
    np.testing.assert_array_equal(np.asarray(gu), grad_u)
    np.testing.assert_array_equal(np.asarray(pb.jvp(f, (X3, u), (X3 * 10, u))[1]), jvp)
    vm = pb.vmap(f, (0, None))(jnp.array([[1., 2., 3.], [4., 5., 6.]]), u)
    np.testing.assert_array_equal(np.asarray(vm), np.stack([fwd, np.add(fwd, 3)]))


def test_take_modes_as_jax():
    x = jnp.arange(4.)
    np.testing.assert_array_equal(np.asarray(jnp.take(x, jnp.array([5, -1, -6]), mode="wrap")),
                                  [1., 3., 2.])
    with pytest.raises(ValueError, match="Invalid mode 'drop'"):
        jnp.take(x, jnp.array([1]), mode="drop")
    with pytest.raises(ValueError, match="Invalid mode 'promise_in_bounds'"):
        jnp.take(x, jnp.array([1]), mode="promise_in_bounds")
    with pytest.raises(NotImplementedError, match="'raise' mode"):
        jnp.take(x, jnp.array([1]), mode="raise")


# ---- 0-d and traced indices keep the index mode ----

def test_traced_and_0d_index_modes():
    x = jnp.arange(4.)
    for i in (4, jnp.array(4), jnp.array(-5)):
        for f, want in [(lambda x, i: x.at[i].set(-1.), [0, 1, 2, 3]),
                        (lambda x, i: x.at[i].set(-1., mode="drop"), [0, 1, 2, 3]),
                        (lambda x, i: x.at[i].add(5., mode="fill"), [0, 1, 2, 3])]:
            np.testing.assert_array_equal(np.asarray(f(x, i)), want)
            np.testing.assert_array_equal(np.asarray(pb.jit(f)(x, i)), want)
        fill = lambda x, i: x.at[i].get(mode="fill")
        assert np.isnan(np.asarray(fill(x, i))) and np.isnan(np.asarray(pb.jit(fill)(x, i)))
        assert float(pb.jit(lambda x, i: x.at[i].get(mode="fill", fill_value=7.))(x, i)) == 7.
    set_clip = pb.jit(lambda x, i: x.at[i].set(-1., mode="clip"))
    np.testing.assert_array_equal(np.asarray(set_clip(x, 4)), [0, 1, 2, -1])
    np.testing.assert_array_equal(np.asarray(set_clip(x, -5)), [-1, 1, 2, 3])
    # in bounds, negative counts from the end
    np.testing.assert_array_equal(np.asarray(pb.jit(lambda x, i: x.at[i].set(-1.))(x, -1)),
                                  [0, 1, 2, -1])
    # under vmap: per-lane indices
    i = jnp.array([4, 1, -5])
    np.testing.assert_array_equal(
        np.asarray(pb.vmap(lambda i: x.at[i].set(-1.))(i)),
        [[0, 1, 2, 3], [0, -1, 2, 3], [0, 1, 2, 3]])
    got = np.asarray(pb.vmap(lambda i: x.at[i].get(mode="fill"))(i))
    np.testing.assert_array_equal(np.isnan(got), [True, False, True])
    assert got[1] == 1.


@pytest.mark.parametrize("dtype, big", [(np.uint32, 2**31 + 1), (np.uint32, 2**32 - 1),
                                        pytest.param(np.uint64, 2**63 + 1, marks=pytest.mark.x64),
                                        pytest.param(np.uint64, 2**64 - 1, marks=pytest.mark.x64),
                                        (np.uint8, 255)])
def test_huge_unsigned_indices_are_out_of_bounds(dtype, big):
    # never wrapped to a negative index counted from the end
    x = jnp.arange(4.)
    i, ia = np.array(big, dtype), np.array([big, 1], dtype)
    for f, want in [(lambda x, i: x[i], 3.), (lambda x, i: x.at[i].set(-1.), [0, 1, 2, 3]),
                    (lambda x, i: x.at[i].set(-1., mode="clip"), [0, 1, 2, -1]),
                    (lambda x, i: lax.dynamic_index_in_dim(x, i, keepdims=False), 3.)]:
        np.testing.assert_array_equal(_both(f, x, i), want)
    assert np.isnan(_both(lambda x, i: x.at[i].get(mode="fill"), x, i))
    for f, want in [(lambda x, i: x[i], [3., 1.]),
                    (lambda x, i: x.at[i].set(-1.), [0, -1, 2, 3]),
                    (lambda x, i: jnp.take(x, i), [np.nan, 1.]),
                    (lambda x, i: jnp.take(x, i, mode="clip"), [3., 1.]),
                    (lambda x, i: jnp.take_along_axis(x, i, axis=0), [np.nan, 1.])]:
        np.testing.assert_array_equal(_both(f, x, ia), want)


@pytest.mark.x64
def test_large_negative_int64_index_stays_out_of_bounds():
    x, i = jnp.arange(4.), np.array(-2**62, np.int64)
    np.testing.assert_array_equal(_both(lambda x, i: x[i], x, i), 0.)
    np.testing.assert_array_equal(_both(lambda x, i: x.at[i].set(-1.), x, i), [0, 1, 2, 3])
    assert np.isnan(_both(lambda x, i: x.at[i].get(mode="fill"), x, i))


# ---- indexing empty arrays ----

def test_indexing_empty_arrays():
    e, e2, e3 = jnp.zeros((0,)), jnp.zeros((0, 3)), jnp.zeros((3, 0))
    ei = jnp.array([], jnp.int32)
    for f, shape in [(lambda: jnp.unique(e), (0,)), (lambda: jnp.unique(e2, axis=0), (0, 3)),
                     (lambda: jnp.unique(ei), (0,)), (lambda: jnp.take(e, ei), (0,)),
                     (lambda: jnp.take(e2, ei, axis=0), (0, 3)),
                     (lambda: jnp.take(jnp.arange(3.), ei), (0,)),
                     (lambda: jnp.take_along_axis(e, ei, axis=0), (0,)),
                     (lambda: e[ei], (0,)), (lambda: jnp.arange(3.)[ei], (0,)),
                     (lambda: e3[0], (0,)), (lambda: e3[jnp.array([0, 1])], (2, 0)),
                     (lambda: e.at[ei].set(1.), (0,)), (lambda: e2.at[ei].set(1.), (0, 3)),
                     (lambda: e2.at[ei].get(), (0, 3)), (lambda: e.at[jnp.array([0])].add(1.), (0,)),
                     (lambda: e3.at[0].set(1.), (3, 0)), (lambda: e3.at[5].set(2.), (3, 0)),
                     (lambda: e.at[:].set(1.), (0,)), (lambda: jnp.diagonal(e2), (0,)),
                     (lambda: pb.grad(lambda x: x[ei].sum())(e), (0,))]:
        assert f().shape == shape
    out = jnp.unique(e, return_index=True, return_inverse=True, return_counts=True)
    assert [o.shape for o in out] == [(0,)] * 4
    np.testing.assert_array_equal(np.asarray(jnp.arange(3.).at[jnp.array([], int)].set(1.)),
                                  [0., 1., 2.])
    np.testing.assert_array_equal(
        np.asarray(jnp.take_along_axis(e3, jnp.zeros((3, 2), jnp.int32), axis=1)),
        np.zeros((3, 2)))
    # what JAX rejects: an integer on an empty axis, a non-empty take from one
    for f in (lambda: e[0], lambda: e2[0], lambda: e3[:, 0], lambda: e.at[0].set(1.),
              lambda: e.at[0].get(mode="fill"), lambda: pb.jit(lambda e, i: e[i])(e, 0)):
        with pytest.raises(IndexError, match="out of bounds for axis . with size 0"):
            f()
    with pytest.raises(IndexError, match="non-empty jnp.take"):
        jnp.take(e, jnp.array([0]))
    with pytest.raises(TypeError, match="axis 0 of size 0"):
        e[jnp.array([0])]


# ---- integer division and remainder by zero (JAX's jnp rules over XLA's total lax ops) ----

@pytest.mark.parametrize("dtype", ["int8", "int16", "int32",
                                   pytest.param("int64", marks=pytest.mark.x64)])
def test_signed_integer_division_by_zero(dtype):
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    a = jnp.array(np.array([7, -7, 0, lo, hi, lo, -1, 5], dtype))
    b = jnp.array(np.array([0, 0, 0, 0, 0, -1, -1, -3], dtype))
    want = {
        "floor_divide": [-2, -2, -1, -2, -2, lo, 1, -2],
        "remainder": [0, 0, 0, 0, 0, 0, 0, -1],
        "fmod": [0, 0, 0, 0, 0, 0, 0, 2],
        "lax.div": [-1, -1, -1, -1, -1, lo, 1, -1],
        "lax.rem": [7, -7, 0, lo, hi, 0, 0, 2],
    }
    _check_int_division(a, b, want, dtype)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32",
                                   pytest.param("uint64", marks=pytest.mark.x64)])
def test_unsigned_integer_division_by_zero(dtype):
    hi = np.iinfo(dtype).max
    a = jnp.array(np.array([7, 0, hi, 5, 1], dtype))
    b = jnp.array(np.array([0, 0, 0, 2, 3], dtype))
    want = {"floor_divide": [hi, hi, hi, 2, 0], "remainder": [0, 0, 0, 1, 1],
            "fmod": [0, 0, 0, 1, 1], "lax.div": [hi, hi, hi, 2, 0], "lax.rem": [7, 0, hi, 1, 1]}
    _check_int_division(a, b, want, dtype)


def _check_int_division(a, b, want, dtype):
    fns = {"floor_divide": lambda a, b: a // b, "remainder": lambda a, b: a % b,
           "fmod": jnp.fmod, "lax.div": lax.div, "lax.rem": lax.rem}
    for name, f in fns.items():
        got = _both(f, a, b)
        assert got.dtype == np.dtype(dtype), name
        np.testing.assert_array_equal(got, np.array(want[name], dtype), err_msg=name)
    for f, name in [(jnp.floor_divide, "floor_divide"), (jnp.remainder, "remainder"),
                    (jnp.mod, "remainder")]:
        np.testing.assert_array_equal(np.asarray(f(a, b)), np.array(want[name], dtype))
    q, r = jnp.divmod(a, b)
    np.testing.assert_array_equal(np.asarray(q), np.array(want["floor_divide"], dtype))
    np.testing.assert_array_equal(np.asarray(r), np.array(want["remainder"], dtype))
    q, r = pb.jit(jnp.divmod)(a, b)
    np.testing.assert_array_equal(np.asarray(r), np.array(want["remainder"], dtype))
    # a Python zero divisor, weakly typed
    np.testing.assert_array_equal(np.asarray(a % 0), np.zeros(a.shape, dtype))


# ---- cumulative reductions keep small integer dtypes (JAX's rule) ----

SMALL = ["int8", "uint8", "int16", "uint16"]


@pytest.mark.parametrize("dtype", SMALL + ["int32", "uint32", "float16", "bfloat16", "float32"])
def test_cumulative_dtypes(dtype):
    x = jnp.array([1, 0, 1, 1], dtype=dtype)
    for f in (jnp.cumsum, jnp.cumprod, jnp.nancumsum, jnp.nancumprod, jnp.cumulative_prod,
              lax.cumsum, lax.cumprod, lax.cummax, lax.cummin):
        assert _both(f, x).dtype == np.dtype(dtype), f.__name__
    # the array-API cumulative_sum promotes small integers (to int32 / uint32)
    small_int = dtype in SMALL
    want = {"u": "uint32", "i": "int32"}.get(np.dtype(dtype).kind, dtype) if small_int else dtype
    got = jnp.cumulative_sum(x, include_initial=True)
    assert got.dtype == np.dtype(want)
    np.testing.assert_array_equal(np.asarray(got, np.float32), [0, 1, 1, 2, 3])
    got = jnp.cumulative_prod(x, include_initial=True)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got, np.float32), [1, 1, 0, 0, 0])
    # explicit dtypes: bool accumulates x != 0 and returns bool
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(x, dtype=bool)), [True] * 4)
    np.testing.assert_array_equal(np.asarray(jnp.cumprod(x, dtype=bool)), [True] + [False] * 3)
    assert jnp.cumsum(x, dtype="int8").dtype == np.int8
    assert jnp.cumsum(x, dtype="float32").dtype == np.float32


def test_cumulative_overflow_wraps_in_the_input_dtype():
    np.testing.assert_array_equal(_both(jnp.cumsum, jnp.array([100, 100], "int8")),
                                  np.array([100, -56], np.int8))
    np.testing.assert_array_equal(_both(jnp.cumsum, jnp.array([[1, 2], [3, 4]], "int8")),
                                  np.array([1, 3, 6, 10], np.int8))


def test_cumulative_bool():
    b = jnp.array([True, False, True, True])
    for f in (jnp.cumsum, jnp.cumulative_sum):
        got = _both(f, b)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, [1, 1, 2, 3])
    np.testing.assert_array_equal(_both(jnp.cumprod, b), [1, 0, 0, 0])
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(b, dtype=bool)), [True] * 4)
    np.testing.assert_array_equal(np.asarray(jnp.cumprod(b, dtype=bool)),
                                  [True, False, False, False])
    # [-1, 1] must not cancel under dtype=bool
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(jnp.array([-1, 1]), dtype=bool)),
                                  [True, True])
    with pytest.raises(TypeError):
        lax.cumsum(b)


def test_cumulative_array_api_arguments():
    with pytest.raises(ValueError, match="non-scalar"):
        jnp.cumulative_sum(jnp.array(1.0))
    with pytest.raises(ValueError, match="axis"):
        jnp.cumulative_prod(jnp.ones((2, 2)))
    got = jnp.cumulative_sum(jnp.ones((2, 3)), axis=1, include_initial=True)
    np.testing.assert_array_equal(np.asarray(got), [[0, 1, 2, 3]] * 2)


# ---- container types of multi-output lax functions (JAX's) ----

def test_multi_output_containers():
    x, y = jnp.array([3., 1., 2.]), jnp.array([1, 2, 3])
    for j in (lambda f: f, pb.jit):
        assert type(j(lambda x: lax.top_k(x, 2))(x)) is list
        assert type(j(lambda x: lax.sort((x,)))(x)) is tuple
        assert type(j(lambda x: lax.sort([x]))(x)) is tuple
        assert type(j(lambda x, y: lax.sort([x, y], num_keys=1))(x, y)) is tuple
        assert type(j(lambda x, y: lax.sort_key_val(x, y))(x, y)) is tuple
    values, indices = lax.top_k(x, 2)
    np.testing.assert_array_equal(np.asarray(values), [3., 2.])
    np.testing.assert_array_equal(np.asarray(indices), [0, 2])


def test_bool_division_by_false():
    # bools divide as int32; JAX's fmod keeps XLA's remainder (the dividend) for them
    b, c = jnp.array([True, False, True]), jnp.array([False, False, True])
    for f, want in [(jnp.floor_divide, [-2, -1, 1]), (jnp.remainder, [0, 0, 0]),
                    (jnp.fmod, [1, 0, 0])]:
        got = _both(f, b, c)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)


def test_static_int_beside_an_array_index_is_gathered_unclamped():
    # an int next to an array index is part of the gather: its out-of-bounds gradient drops
    x = jnp.arange(1., 13.).reshape(3, 4)
    for f, fwd, grad in [
            (lambda x: x[jnp.array([0, 5]), 9], [4., 12.], np.zeros((3, 4))),
            (lambda x: x[7, jnp.array([1, -9])], [10., 9.], np.zeros((3, 4))),
            (lambda x: x.at[jnp.array([0, 5]), 9].get(mode="clip"), [4., 12.],
             [[0, 0, 0, 8], [0, 0, 0, 0], [0, 0, 0, 24]])]:
        np.testing.assert_array_equal(_both(f, x), fwd)
        np.testing.assert_array_equal(np.asarray(pb.grad(lambda x: (f(x) ** 2).sum())(x)), grad)
    got = _both(lambda x: x.at[7, jnp.array([1, -9])].get(mode="fill"), x)
    assert np.isnan(got).all()
    np.testing.assert_array_equal(_both(lambda x: x.at[7, jnp.array([1, -9])].add(-3., mode="clip"),
                                        x)[2], [6., 7., 11., 12.])
