"""lax composites (dot, batch_matmul, broadcast*, collapse, tile, stack, index_take,
scatter_sub/apply, approx_max/min_k, mulhi, optimization_barrier), lane collectives
(ppermute, pshuffle, all_to_all, psum_scatter, axis_size), custom_root, custom_linear_solve,
the *_p aliases and helper types."""
import contextlib

import numpy as np
import pytest

import pullback as pb
import pullback.lax as lax
import pullback.numpy as jnp
from pullback.test_util import check_grads
from pullback.tracer.core import Primitive

RNG = np.random.default_rng(37)


@pytest.mark.parametrize("ls, rs", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                    ((2, 3), (3, 4))])
def test_dot(ls, rs):
    a, b = RNG.normal(size=ls), RNG.normal(size=rs)
    np.testing.assert_allclose(np.asarray(lax.dot(a, b)), np.dot(a, b), rtol=1e-12)
    check_grads(lax.dot, (a, b), order=2)
    with pytest.raises(TypeError, match="dot: incompatible shapes"):
        lax.dot(a, np.ones((5,)))


def test_dot_dimension_numbers_and_batch_matmul():
    a, b = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 4, 5))
    dn = (((2,), (1,)), ((0,), (0,)))
    np.testing.assert_allclose(np.asarray(lax.dot(a, b, dimension_numbers=dn)), a @ b,
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(lax.batch_matmul(a, b)), a @ b, rtol=1e-12)
    check_grads(lax.batch_matmul, (a, b), order=2)
    with pytest.raises(ValueError, match="batch_matmul: arguments must have the same ndim"):
        lax.batch_matmul(a, b[0])
    with pytest.raises(ValueError, match="at least 2-D"):
        lax.batch_matmul(np.ones(3), np.ones(3))


def test_broadcast_family_collapse_tile_stack():
    x = RNG.normal(size=(2, 3))
    assert lax.broadcast(x, (4, 5)).shape == (4, 5, 2, 3)
    np.testing.assert_array_equal(np.asarray(lax.broadcast(x, (2,))[1]), x)
    assert lax.broadcast_to_rank(x, 4).shape == (1, 1, 2, 3)
    assert lax.broadcast_like(np.ones(3), np.zeros((2, 3))).shape == (2, 3)
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert lax.collapse(np.ones((2, 3, 4)), 1).shape == (2, 12)
    assert lax.collapse(np.ones((2, 3, 4)), 0, 2).shape == (6, 4)
    np.testing.assert_array_equal(np.asarray(lax.tile(x, (2, 3))), np.tile(x, (2, 3)))
    assert lax.tile(x, (0, 1)).shape == (0, 3)
    with pytest.raises(TypeError, match="tile: argument 'reps' must have one entry"):
        lax.tile(x, (2,))
    check_grads(lambda x: lax.tile(x, (2, 2)), (x,), order=2)
    np.testing.assert_array_equal(np.asarray(lax.stack([x, 2 * x], 1)), np.stack([x, 2 * x], 1))
    parts = lax.unstack(x, 1)
    assert len(parts) == 3 and parts[1].tolist() == x[:, 1].tolist()
    assert lax.empty((2, 3), np.float32).shape == (2, 3)
    assert lax.dtype(1.0) == np.dtype(np.float64) or lax.dtype(1.0) == np.dtype(np.float32)


def test_index_take_matches_jax():
    src = RNG.normal(size=(3, 4, 5))
    idxs = (np.array([1, -1, 3]), np.array([0, 2, 9]))
    got = lax.index_take(src, idxs, (1, 2))
    ref = np.stack([src[:, i % 4, j % 5] for i, j in zip(*idxs)], 0)
    np.testing.assert_allclose(np.asarray(got), ref)


def test_optimization_barrier_is_identity_with_grads_and_vmap():
    x = RNG.normal(size=(3,))
    out = lax.optimization_barrier((x, {"a": 2.0}))
    np.testing.assert_array_equal(np.asarray(out[0]), x)
    check_grads(lambda x: lax.optimization_barrier(jnp.sin(x)) * x, (x,), order=2)
    assert pb.vmap(lax.optimization_barrier)(np.ones((4, 2))).shape == (4, 2)


def test_scatter_sub_and_apply():
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    idx = np.array([[1], [1], [3]])
    got = lax.scatter_sub(np.zeros(5), idx, np.array([1.0, 2.0, 4.0]), dn)
    assert got.tolist() == [0.0, -3.0, 0.0, -4.0, 0.0]
    check_grads(lambda o, u: lax.scatter_sub(o, idx, u, dn), (np.ones(5), np.ones(3)), order=2)
    # applied once per occurrence of an index (XLA's combiner per update)
    got = lax.scatter_apply(np.ones(5), idx, lambda v: v * 3, dn, update_shape=(3,))
    assert got.tolist() == [1.0, 9.0, 1.0, 3.0, 1.0]
    got = pb.jit(lambda o: lax.scatter_apply(o, idx, jnp.exp, dn, update_shape=(3,),
                                             unique_indices=False))(np.zeros(5))
    np.testing.assert_allclose(np.asarray(got), [0, np.exp(1.0), 0, 1.0, 0])
    uidx = np.array([[0], [2]])
    check_grads(lambda o: lax.scatter_apply(o, uidx, jnp.sin, dn, update_shape=(2,),
                                            unique_indices=True), (RNG.normal(size=4),),
                order=2)
    jax = pytest.importorskip("jax")
    ref = jax.lax.scatter_apply(np.ones(5, np.float32), idx, lambda v: v * 3,
                                jax.lax.ScatterDimensionNumbers((), (0,), (0,)),
                                update_shape=(3,))
    assert np.asarray(ref).tolist() == [1.0, 9.0, 1.0, 3.0, 1.0]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_approx_max_min_k_exact(dim):
    x = RNG.integers(0, 6, (5, 7)).astype(np.float32)
    k = 3
    v, i = lax.approx_max_k(x, k, reduction_dimension=dim)
    order = np.argsort(-x, axis=dim, kind="stable")
    np.testing.assert_array_equal(np.asarray(i), np.take(order, range(k), axis=dim))
    np.testing.assert_array_equal(np.asarray(v), np.take_along_axis(x, np.asarray(i), dim))
    v, i = lax.approx_min_k(x, k, reduction_dimension=dim)
    order = np.argsort(x, axis=dim, kind="stable")
    np.testing.assert_array_equal(np.asarray(i), np.take(order, range(k), axis=dim))
    with pytest.raises(ValueError, match="approx_max_k: argument 'k'"):
        lax.approx_max_k(x, 99, reduction_dimension=dim)


def test_approx_max_k_grad_and_jit():
    x = RNG.normal(size=(3, 6))
    check_grads(lambda x: lax.approx_max_k(x, 2)[0], (x,), order=2)
    v, _ = pb.jit(lambda x: lax.approx_min_k(x, 2))(x)
    np.testing.assert_allclose(np.asarray(v), np.sort(x, 1)[:, :2])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16,
                                   np.uint32, np.int64, np.uint64])
def test_mulhi(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, 64, dtype=np.int64 if dtype != np.uint64 else
                     np.uint64, endpoint=True).astype(dtype)
    b = RNG.integers(info.min, info.max, 64, dtype=np.int64 if dtype != np.uint64 else
                     np.uint64, endpoint=True).astype(dtype)
    a[:3] = [info.min, info.max, info.max]
    b[:3] = [info.min, info.min, info.max]
    bits = np.dtype(dtype).itemsize * 8
    ref = np.array([(int(x) * int(y)) >> bits for x, y in zip(a, b)], dtype=object)
    ref = np.array([int(r) % (1 << bits) for r in ref], dtype=np.uint64).astype(dtype)
    np.testing.assert_array_equal(np.asarray(lax.mulhi(a, b)), ref)


X = np.arange(4 * 4 * 3, dtype=np.float64).reshape(4, 4, 3)
W = np.arange(4.0)[:, None, None]


def test_axis_size_ppermute_pshuffle():
    assert pb.vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(np.ones(3)).tolist() == \
        [3.0] * 3
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
    got = pb.vmap(lambda v: lax.ppermute(v, "i", perm), axis_name="i")(X)
    np.testing.assert_array_equal(np.asarray(got), X[[3, 0, 1, 2]])
    got = pb.vmap(lambda v: lax.ppermute(v, "i", [(0, 2)]), axis_name="i")(X)
    np.testing.assert_array_equal(np.asarray(got)[2], X[0])
    assert (np.asarray(got)[[0, 1, 3]] == 0).all()
    got = pb.jit(pb.vmap(lambda v: lax.pshuffle(v, "i", [3, 2, 1, 0]), axis_name="i"))(X)
    np.testing.assert_array_equal(np.asarray(got), X[::-1])
    g = pb.grad(lambda x: (pb.vmap(lambda v: lax.ppermute(v, "i", perm),
                                   axis_name="i")(x) ** 2 * W).sum())(X)
    np.testing.assert_allclose(np.asarray(g), 2 * X * np.roll(W, -1, 0))
    with pytest.raises(ValueError, match="ppermute: argument 'perm'"):
        pb.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name"):
        lax.axis_size("nope")


@pytest.mark.parametrize("split, concat, tiled", [(0, 0, False), (0, 1, False), (1, 0, False),
                                                  (0, 1, True), (0, 0, True), (1, 0, True)])
def test_all_to_all(split, concat, tiled):
    x = X if split == 0 or not tiled else np.arange(4 * 3 * 8.0).reshape(4, 3, 8)
    if split == 1 and not tiled:
        x = np.arange(4 * 3 * 4.0).reshape(4, 3, 4)
    got = np.asarray(pb.vmap(lambda v: lax.all_to_all(v, "i", split, concat, tiled=tiled),
                             axis_name="i")(x))
    # reference: lane i gets chunk i of split from every lane j, joined along concat
    n = 4
    ref = []
    for i in range(n):
        chunks = [np.split(x[j], n, axis=split)[i] for j in range(n)]
        ref.append(np.concatenate(chunks, concat) if tiled else
                   np.stack([np.squeeze(c, split) for c in chunks], concat))
    np.testing.assert_array_equal(got, np.stack(ref))
    jax = pytest.importorskip("jax")
    want = jax.vmap(lambda v: jax.lax.all_to_all(v, "i", split, concat, tiled=tiled),
                    axis_name="i")(x)
    np.testing.assert_array_equal(got, np.asarray(want))


def test_all_to_all_grad_and_errors():
    check_grads(lambda x: pb.vmap(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True),
                                  axis_name="i")(x) * W, (X,), order=2)
    with pytest.raises(ValueError, match="all_to_all: the split axis 1 of size 3 must equal"):
        pb.vmap(lambda v: lax.all_to_all(v, "i", 1, 0), axis_name="i")(X)


@pytest.mark.parametrize("tiled", [False, True])
def test_psum_scatter(tiled):
    x = X if not tiled else np.arange(4 * 8.0).reshape(4, 8)
    got = np.asarray(pb.vmap(lambda v: lax.psum_scatter(v, "i", tiled=tiled),
                             axis_name="i")(x))
    total = x.sum(0)
    ref = np.stack(np.split(total, 4, 0)) if tiled else total
    np.testing.assert_array_equal(got, ref)
    check_grads(lambda x: pb.vmap(lambda v: lax.psum_scatter(v, "i", tiled=tiled),
                                  axis_name="i")(x), (x,), order=2)
    with pytest.raises(ValueError, match="psum_scatter: dimension 0 of size 3 must"):
        pb.vmap(lambda v: lax.psum_scatter(v, "i", tiled=tiled), axis_name="i")(
            np.ones((4, 3)))


def _newton(f, x0):
    def body(i, x):
        return x - f(x) / pb.grad(f)(x)
    return lax.fori_loop(0, 30, body, x0)


def _sqrt(a):
    return lax.custom_root(lambda x: x ** 2 - a, 1.0, _newton, lambda g, y: y / g(1.0))


def test_custom_root_implicit_derivatives():
    assert abs(float(_sqrt(2.0)) - np.sqrt(2.0)) < 1e-12
    # d sqrt(a)/da = 1 / (2 sqrt(a)) by the implicit function theorem (never through Newton)
    assert abs(float(pb.grad(_sqrt)(2.0)) - 0.5 / np.sqrt(2.0)) < 1e-12
    check_grads(_sqrt, (np.array(3.0),), order=2)
    np.testing.assert_allclose(np.asarray(pb.vmap(_sqrt)(np.array([1.0, 4.0, 9.0]))),
                               [1.0, 2.0, 3.0])
    assert abs(float(pb.jit(pb.grad(_sqrt))(4.0)) - 0.25) < 1e-12


def test_custom_root_has_aux_and_pytrees():
    def solve(f, x0):
        return _newton(f, x0), {"iters": 30}

    def root(a):
        return lax.custom_root(lambda x: x ** 3 - a, 1.0, solve, lambda g, y: y / g(1.0),
                               has_aux=True)
    x, aux = root(8.0)
    assert abs(float(x) - 2.0) < 1e-12 and aux["iters"] == 30
    assert abs(float(pb.grad(lambda a: root(a)[0])(8.0)) - 1 / 12) < 1e-12


def _lin_solve(a, b):
    return lax.custom_linear_solve(lambda x: a @ x, b,
                                   lambda f, bb: jnp.linalg.solve(a, bb),
                                   lambda f, bb: jnp.linalg.solve(a.T, bb))


def test_custom_linear_solve_matches_solve_and_derivatives():
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    b = RNG.normal(size=3)
    np.testing.assert_allclose(np.asarray(_lin_solve(a, b)), np.linalg.solve(a, b), rtol=1e-12)
    check_grads(_lin_solve, (a, b), order=2, modes=("rev",))
    check_grads(_lin_solve, (a, b), order=1, modes=("fwd",))
    out = pb.vmap(_lin_solve, in_axes=(None, 0))(a, RNG.normal(size=(4, 3)))
    assert out.shape == (4, 3)


def _cg(matvec, b, x0):
    """Conjugate gradients from ``x0`` in a while_loop (40 steps)."""
    def body(c):
        x, r, p, k = c
        ap = matvec(p)
        alpha = (r @ r) / (p @ ap + 1e-300)
        x2, r2 = x + alpha * p, r - alpha * ap
        beta = (r2 @ r2) / (r @ r + 1e-300)
        return x2, r2, r2 + beta * p, k + 1
    r0 = b - matvec(x0)
    return lax.while_loop(lambda c: c[3] < 40, body, (x0, r0, r0, 0))[0]


def test_custom_linear_solve_symmetric_iterative_solver():
    m = RNG.normal(size=(4, 4))
    a = m @ m.T + 4 * np.eye(4)
    b = RNG.normal(size=4)

    def cg(matvec, b):  # a while_loop solver: reverse mode must not differentiate it
        return _cg(matvec, b, jnp.zeros_like(b))

    def solve(a, b):
        return lax.custom_linear_solve(lambda x: a @ x, b, cg, symmetric=True)
    np.testing.assert_allclose(np.asarray(solve(a, b)), np.linalg.solve(a, b), rtol=1e-8)
    g = pb.grad(lambda b: solve(a, b).sum())(b)
    np.testing.assert_allclose(np.asarray(g), np.linalg.solve(a, np.ones(4)), rtol=1e-8)
    with pytest.raises(TypeError, match="transpose_solve"):
        pb.grad(lambda b: lax.custom_linear_solve(lambda x: a @ x, b, cg).sum())(b)




def test_custom_linear_solve_is_one_equation_under_jit_grad_jvp_and_vmap():
    # the solver closes over a traced value (its start, as scipy.sparse.linalg's solvers do):
    # under jit(grad) the solve must stay one equation, never a differentiated while_loop
    m = RNG.normal(size=(4, 4))
    a0 = m @ m.T + 4 * np.eye(4)
    b0 = RNG.normal(size=4)

    def f(a, b):
        x = lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, bb: _cg(mv, bb, 0.1 * b),
                                    symmetric=True)
        return jnp.sum(jnp.sin(x))

    x = np.linalg.solve(a0, b0)
    lam = np.linalg.solve(a0.T, np.cos(x))
    want_a, want_b = -np.outer(lam, x), lam  # implicit differentiation
    for g in (pb.grad(f, (0, 1)), pb.jit(pb.grad(f, (0, 1)))):
        ga, gb = g(a0, b0)
        np.testing.assert_allclose(np.asarray(ga), want_a, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.asarray(gb), want_b, rtol=1e-9, atol=1e-12)
    jaxpr = str(pb.make_jaxpr(pb.grad(f, (0, 1)))(a0, b0))
    assert "linear_solve" in jaxpr and "while" in jaxpr
    # forward mode solves again instead of differentiating the loop
    da, db = RNG.normal(size=(4, 4)), RNG.normal(size=4)
    _, t = pb.jvp(f, (a0, b0), (da, db))
    dx = np.linalg.solve(a0, db - da @ x)
    np.testing.assert_allclose(float(t), np.cos(x) @ dx, rtol=1e-9)
    check_grads(f, (a0, b0), order=2, modes=("rev", "fwd"))
    # vmap of the gradient against a loop
    bs = RNG.normal(size=(3, 4))
    got = pb.vmap(pb.grad(f, 1), in_axes=(None, 0))(a0, bs)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(got[i]), np.asarray(pb.grad(f, 1)(a0, bs[i])),
                                   rtol=1e-9)


def test_custom_linear_solve_has_aux():
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)

    def solve(a, b):
        def with_aux(f, bb):
            return jnp.linalg.solve(a, bb), {"n": jnp.sum(bb)}

        def t_with_aux(f, bb):
            return jnp.linalg.solve(a.T, bb), {"n": jnp.sum(bb)}
        return lax.custom_linear_solve(lambda x: a @ x, b, with_aux, t_with_aux, has_aux=True)
    b = RNG.normal(size=3)
    x, aux = solve(a, b)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-12)
    np.testing.assert_allclose(float(aux["n"]), b.sum(), rtol=1e-12)
    g = pb.jit(pb.grad(lambda b: solve(a, b)[0].sum()))(b)
    np.testing.assert_allclose(np.asarray(g), np.linalg.solve(a.T, np.ones(3)), rtol=1e-12)


def test_primitive_aliases_and_types():
    for name in ["add_p", "mul_p", "dot_general_p", "scatter_add_p", "while_p", "sort_p"]:
        p = getattr(lax, name)
        assert isinstance(p, Primitive)
    assert lax.add_p is Primitive.registry["add"]
    assert lax.scatter_add_p is Primitive.registry["scatter-add"]
    assert out_is(lax.add_p.bind(np.float64(1.0), np.float64(2.0)), 3.0)
    assert lax.RandomAlgorithm.RNG_THREE_FRY.name == "RNG_THREE_FRY"
    assert lax.AccuracyMode.HIGHEST != lax.AccuracyMode.DEFAULT
    assert "atol=0.1" in repr(lax.Tolerance(atol=0.1))
    with pytest.raises(ValueError, match="Tolerance"):
        lax.Tolerance(atol=-1.0)
    dn: lax.DotDimensionNumbers = (((1,), (0,)), ((), ()))
    assert lax.dot(np.ones((2, 3)), np.ones((3,)), dimension_numbers=dn).shape == (2,)
    assert lax.platform_dependent(2.0, cpu=lambda x: x * 3, default=lambda x: x) == 6.0
    f = lax.composite(lambda x: x + 1, name="my.inc")
    assert float(f(1.0)) == 2.0 and f.composite_name == "my.inc"


def out_is(x, v):
    return float(x) == v


@contextlib.contextmanager
def _jax_x64(jax):
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", old)


# JAX 0.10.2's outputs on the CPU for key [1, 2, 3, 4] (RNG_DEFAULT is Philox there)
_RBG = {
    "RNG_PHILOX": ([1, 2, 5, 4], [512747620, 1298009047, 1267190206, 761827841, 1383286907,
                                  1639995030, 2756207988, 2154813423]),
    "RNG_THREE_FRY": ([1, 2, 7, 4], [1576285164, 2249660814, 740599976, 2425682526,
                                     2436392515, 1497962777, 1335360347, 2260235687]),
}


@pytest.mark.parametrize("alg", ["RNG_DEFAULT", "RNG_PHILOX", "RNG_THREE_FRY"])
def test_rng_bit_generator_bit_exact(alg):
    key = np.array([1, 2, 3, 4], np.uint32)
    want_key, want = _RBG["RNG_PHILOX" if alg == "RNG_DEFAULT" else alg]
    new_key, bits = lax.rng_bit_generator(key, (8,), algorithm=getattr(lax.RandomAlgorithm, alg))
    assert new_key.tolist() == want_key and bits.tolist() == want and bits.dtype == np.uint32
    # narrow dtypes keep the low bits; the counter advances by the blocks used
    k8, b8 = lax.rng_bit_generator(key, (3,), dtype=np.uint8)
    assert k8.tolist() == [1, 2, 4, 4] and b8.tolist() == [100, 215, 190]
    jax = pytest.importorskip("jax")
    ja = getattr(jax.lax.RandomAlgorithm, alg)
    for shape in [(), (1,), (3,), (5, 3), (3, 5), (2, 3, 4), (0,), (7, 1, 3)]:
        for dt in [np.uint8, np.uint16, np.uint32, np.uint64]:
            for k in (key, np.array([0xFFFFFFFF, 7, 0xFFFFFFFE, 0xFFFFFFFF], np.uint32)):
                with _jax_x64(jax):  # uint64 bits need JAX's x64 mode (pullback's is on)
                    jk, jb = jax.lax.rng_bit_generator(k, shape, dtype=dt, algorithm=ja)
                pk, pbits = lax.rng_bit_generator(k, shape, dtype=dt,
                                                  algorithm=getattr(lax.RandomAlgorithm, alg))
                np.testing.assert_array_equal(np.asarray(pk), np.asarray(jk))
                np.testing.assert_array_equal(np.asarray(pbits), np.asarray(jb))


def test_rng_bit_generator_jit_vmap_errors():
    keys = np.array([[1, 2, 3, 4], [9, 8, 7, 6]], np.uint32)
    f = pb.jit(lambda k: lax.rng_bit_generator(k, (2, 3)))
    loop = [lax.rng_bit_generator(k, (2, 3)) for k in keys]
    got_k, got_b = pb.vmap(f)(keys)
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(got_k[i]), np.asarray(loop[i][0]))
        np.testing.assert_array_equal(np.asarray(got_b[i]), np.asarray(loop[i][1]))
    with pytest.raises(TypeError, match="rng_bit_generator: argument 'key' must be uint32"):
        lax.rng_bit_generator(np.zeros(2, np.uint32), (3,))
    with pytest.raises(TypeError, match="argument 'dtype' must be an unsigned"):
        lax.rng_bit_generator(keys[0], (3,), dtype=np.int32)


def test_conv_general_dilated_local_and_ragged_dot():
    lhs = RNG.normal(size=(2, 3, 6, 5))
    rhs = RNG.normal(size=(4, 27, 6, 5))
    out = lax.conv_general_dilated_local(lhs, rhs, (1, 1), "SAME", (3, 3))
    # reference: at each output position, its own filter over the 3x3 patch
    padded = np.pad(lhs, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((2, 4, 6, 5))
    for i in range(6):
        for j in range(5):
            patch = padded[:, :, i:i + 3, j:j + 3].reshape(2, 27)   # channel-major
            ref[:, :, i, j] = patch @ rhs[:, :, i, j].T
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-10)
    check_grads(lambda l, r: lax.conv_general_dilated_local(l, r, (2, 2), "VALID", (3, 3)),
                (lhs, RNG.normal(size=(4, 27, 2, 2))), order=1)
    lhs2, rhs2 = RNG.normal(size=(7, 4)), RNG.normal(size=(3, 4, 5))
    gs = np.array([2, 0, 4], np.int32)
    ref = np.concatenate([lhs2[:2] @ rhs2[0], lhs2[2:6] @ rhs2[2], np.zeros((1, 5))])
    np.testing.assert_allclose(np.asarray(lax.ragged_dot(lhs2, rhs2, gs)), ref, rtol=1e-12)
    check_grads(lambda a, b: lax.ragged_dot(a, b, gs), (lhs2, rhs2), order=2)
    with pytest.raises(TypeError, match="ragged_dot: arguments must be"):
        lax.ragged_dot(lhs2[0], rhs2, gs)
    jax = pytest.importorskip("jax")
    np.testing.assert_allclose(
        np.asarray(lax.ragged_dot(lhs2.astype(np.float32), rhs2.astype(np.float32), gs)),
        np.asarray(jax.lax.ragged_dot(lhs2.astype(np.float32), rhs2.astype(np.float32), gs)),
        rtol=1e-5, atol=1e-5)
    l32, r32 = lhs.transpose(0, 2, 3, 1).astype(np.float32), RNG.normal(size=(2, 2, 27, 4))
    dn = ("NHWC", "HWIO", "NHWC")
    np.testing.assert_allclose(
        np.asarray(lax.conv_general_dilated_local(l32, r32.astype(np.float32), (2, 2), "VALID",
                                                  (3, 3), dimension_numbers=dn)),
        np.asarray(jax.lax.conv_general_dilated_local(l32, r32.astype(np.float32), (2, 2),
                                                      "VALID", (3, 3), dimension_numbers=dn)),
        rtol=1e-4, atol=1e-4)


def test_pswapaxes_tokens_shape_as_value():
    x = np.arange(4 * 4 * 2.0).reshape(4, 4, 2)
    got = pb.vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(got), x.transpose(1, 0, 2))
    t = lax.after_all(lax.create_token(), lax.create_token())
    assert type(t) is type(lax.create_token()) and repr(t) == "Token()"
    with pytest.raises(TypeError, match="after_all: arguments must be tokens"):
        lax.after_all(1.0)
    assert lax.shape_as_value((2, 3)).tolist() == [2, 3]
