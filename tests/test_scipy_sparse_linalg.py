"""pullback.scipy.sparse.linalg (cg, gmres, bicgstab) against NumPy solves, a NumPy CG written
here (iterate by iterate), JAX as an optional oracle; pytree operands, preconditioners, jit,
vmap, derivatives through the solution, and errors naming the argument."""
from __future__ import annotations

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback.scipy.sparse import linalg as sla
from pullback.test_util import check_grads

_RNG = np.random.default_rng(0)
N = 8
_Q = _RNG.standard_normal((N, N))
SPD = _Q @ _Q.T + N * np.eye(N)                       # for cg
GEN = _RNG.standard_normal((N, N)) + 4 * np.eye(N)    # for gmres / bicgstab
B = _RNG.standard_normal(N)

SOLVERS = [("cg", {}), ("bicgstab", {}), ("gmres", {}),
           ("gmres", {"solve_method": "incremental"}),
           ("gmres", {"restart": 3}), ("gmres", {"restart": 3, "solve_method": "incremental"})]


def _mat(name):
    return SPD if name == "cg" else GEN


def _ids(p):
    return p[0] + "".join(f"-{k}={v}" for k, v in p[1].items())


@pytest.mark.parametrize("case", SOLVERS, ids=_ids)
def test_solves_the_system(case):
    name, kw = case
    A = _mat(name)
    x, info = getattr(sla, name)(jnp.asarray(A), jnp.asarray(B), tol=1e-10, **kw)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, B), rtol=1e-7, atol=1e-8)
    if name == "gmres":
        assert int(info) == 0
    else:
        assert info is None
    # the same through a function operator
    x2, _ = getattr(sla, name)(lambda v: jnp.asarray(A) @ v, jnp.asarray(B), tol=1e-10, **kw)
    np.testing.assert_allclose(np.asarray(x2), np.asarray(x), rtol=1e-12, atol=1e-13)


def _numpy_cg(A, b, iters, M=None):
    x = np.zeros_like(b)
    r = b - A @ x
    z = r if M is None else M @ r
    p, gamma = z, r @ z
    for _ in range(iters):
        ap = A @ p
        alpha = gamma / (p @ ap)
        x, r = x + alpha * p, r - alpha * ap
        z = r if M is None else M @ r
        gamma, old = r @ z, gamma
        p = z + gamma / old * p
    return x


@pytest.mark.parametrize("iters", [0, 1, 3])
@pytest.mark.parametrize("precondition", [False, True])
def test_cg_iterates_match_numpy(iters, precondition):
    M = np.diag(1 / np.diag(SPD)) if precondition else None
    want = _numpy_cg(SPD, B, iters, M)
    got, _ = sla.cg(jnp.asarray(SPD), jnp.asarray(B), maxiter=iters,
                    M=None if M is None else jnp.asarray(M))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-13)


def test_tolerances_stop_early():
    x, _ = sla.cg(jnp.asarray(SPD), jnp.asarray(B), tol=1e-2)
    res = np.linalg.norm(SPD @ np.asarray(x) - B)
    assert res <= 1e-2 * np.linalg.norm(B) and res > 1e-8
    x, _ = sla.bicgstab(jnp.asarray(GEN), jnp.asarray(B), tol=0.0, atol=1e-3)
    res = np.linalg.norm(GEN @ np.asarray(x) - B)
    assert res <= 1e-3 and res > 1e-10


def test_gmres_restart_cycles_match_jax_recorded():
    # JAX 0.10.2 (float64): restart=2, maxiter=1 stops after one cycle of 2 Krylov vectors
    A = np.array([[4.0, 1.0, 0.0, 0.5], [1.0, 3.0, 1.0, 0.0], [0.0, -1.0, 2.0, 1.0],
                  [0.5, 0.0, 1.0, 5.0]])
    b = np.array([1.0, 2.0, -1.0, 0.5])
    for method in ("batched", "incremental"):
        x, _ = sla.gmres(jnp.asarray(A), jnp.asarray(b), restart=2, maxiter=1,
                         solve_method=method)
        np.testing.assert_allclose(np.asarray(x), GMRES_R2_M1, rtol=1e-6)
        assert np.linalg.norm(A @ np.asarray(x) - b) > 1e-3  # not the solution yet


GMRES_R2_M1 = np.array([0.0694813, 0.70480982, -0.3088782, 0.13267575])


def test_pytree_rhs_and_x0():
    A1, A2 = SPD[:3, :3], SPD[3:5, 3:5]

    def matvec(v):
        return {"a": jnp.asarray(A1) @ v["a"], "b": (jnp.asarray(A2) @ v["b"][0],)}

    b = {"a": jnp.asarray(B[:3]), "b": (jnp.asarray(B[3:5]),)}
    x0 = {"a": jnp.ones(3), "b": (jnp.ones(2),)}
    for name in ("cg", "bicgstab", "gmres"):
        x, _ = getattr(sla, name)(matvec, b, x0=x0, tol=1e-10)
        np.testing.assert_allclose(np.asarray(x["a"]), np.linalg.solve(A1, B[:3]), rtol=1e-7)
        np.testing.assert_allclose(np.asarray(x["b"][0]), np.linalg.solve(A2, B[3:5]),
                                   rtol=1e-7)


def test_x0_is_the_start():
    # zero iterations return x0 itself
    x0 = jnp.asarray(np.arange(N, dtype=float))
    for name in ("cg", "bicgstab", "gmres"):
        x, _ = getattr(sla, name)(jnp.asarray(_mat(name)), jnp.asarray(B), x0=x0, maxiter=0)
        np.testing.assert_array_equal(np.asarray(x), np.arange(N, dtype=float))


@pytest.mark.parametrize("case", SOLVERS, ids=_ids)
def test_jit_equals_eager(case):
    name, kw = case
    A = jnp.asarray(_mat(name))
    f = lambda a, b: getattr(sla, name)(a, b, maxiter=4, **kw)[0]
    np.testing.assert_allclose(np.asarray(pb.jit(f)(A, jnp.asarray(B))),
                               np.asarray(f(A, jnp.asarray(B))), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_vmap_equals_loop(name):
    bs = np.stack([B, 2 * B + 1, -B])
    mats = np.stack([_mat(name), _mat(name) + np.eye(N), 2 * _mat(name)])
    f = lambda a, b: getattr(sla, name)(a, b, tol=1e-10)[0]
    loop_b = np.stack([np.linalg.solve(_mat(name), b) for b in bs])
    got = pb.vmap(f, in_axes=(None, 0))(jnp.asarray(_mat(name)), jnp.asarray(bs))
    np.testing.assert_allclose(np.asarray(got), loop_b, rtol=1e-7, atol=1e-9)
    got = pb.vmap(f, in_axes=(0, 1))(jnp.asarray(mats), jnp.asarray(bs.T))
    loop = np.stack([np.linalg.solve(m, b) for m, b in zip(mats, bs)])
    np.testing.assert_allclose(np.asarray(got), loop, rtol=1e-7, atol=1e-9)


def _sym(a):
    # cg needs a symmetric positive-definite operator for every perturbation of a
    return a @ a.T + N * jnp.eye(a.shape[0], dtype=a.dtype)


@pytest.mark.parametrize("case", SOLVERS[:4], ids=_ids)
def test_derivatives_through_the_solution(case):
    name, kw = case
    n = 4
    a = jnp.asarray(_RNG.standard_normal((n, n)) + 3 * np.eye(n))
    b = jnp.asarray(_RNG.standard_normal(n))
    op = _sym if name == "cg" else (lambda m: m)

    def f(a, b):
        return getattr(sla, name)(lambda v: op(a) @ v, b, tol=1e-13, **kw)[0]

    np.testing.assert_allclose(np.asarray(f(a, b)), np.linalg.solve(np.asarray(op(a)), b),
                               rtol=1e-9)
    check_grads(f, (a, b), order=2, modes=("rev",), atol=1e-5, rtol=1e-5)
    check_grads(f, (a, b), order=1, modes=("fwd",), atol=1e-5, rtol=1e-5)
    # the matrix form: the matrix itself receives the derivative
    g = pb.grad(lambda m: jnp.sum(getattr(sla, name)(m, b, tol=1e-13, **kw)[0]))(op(a))
    inv = np.linalg.inv(np.asarray(op(a)))
    want = -np.outer(inv.T @ np.ones(n), inv @ np.asarray(b))
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-8)


def test_gmres_info_flags_nan():
    x0 = np.zeros(N)
    x0[2] = np.nan  # a NaN residual stops the iteration at once: x stays x0 (as JAX)
    x, info = sla.gmres(jnp.asarray(GEN), jnp.asarray(B), x0=jnp.asarray(x0))
    assert int(info) == -1 and np.isnan(np.asarray(x)[2])


def test_bad_input_names_the_argument():
    A, b = jnp.asarray(SPD), jnp.asarray(B)
    for name in ("cg", "bicgstab", "gmres"):
        fn = getattr(sla, name)
        with pytest.raises(ValueError, match=f"{name}.*'A'.*square matrix.*\\(8, 7\\)"):
            fn(A[:, :7], b)
        with pytest.raises(ValueError, match=f"{name}.*'x0' and 'b'.*shapes"):
            fn(A, b, x0=jnp.zeros(7))
        with pytest.raises(ValueError, match=f"{name}.*'x0' and 'b'.*tree structure"):
            fn(A, b, x0=(jnp.zeros(8),))
        with pytest.raises(TypeError, match=f"{name}.*'M'.*function or ndarray"):
            fn(A, b, M="jacobi")
    with pytest.raises(ValueError, match="gmres.*'solve_method'.*'qr'"):
        sla.gmres(A, b, solve_method="qr")


def test_sparse_exposes_linalg():
    import pullback.scipy as psp
    assert psp.sparse.linalg is sla
    assert sla.__all__ == ["bicgstab", "cg", "gmres"]


@pytest.mark.parametrize("case", SOLVERS, ids=_ids)
def test_against_jax_oracle(case):
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    from jax.scipy.sparse import linalg as jsla
    name, kw = case
    A = _mat(name)
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        for maxiter in (1, 2, None):
            want, _ = getattr(jsla, name)(jjnp.asarray(A), jjnp.asarray(B), maxiter=maxiter,
                                          **kw)
            got, _ = getattr(sla, name)(jnp.asarray(A), jnp.asarray(B), maxiter=maxiter, **kw)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6,
                                       atol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", old)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_x0_receives_no_derivative(name):
    # as JAX: the start is a constant of the solve (x is treated as the exact solution), even
    # after a single iteration where x still depends on x0
    A, b = jnp.asarray(_mat(name)), jnp.asarray(B)
    f = lambda x0: jnp.sum(getattr(sla, name)(A, b, x0=x0, maxiter=1)[0])
    x0 = jnp.asarray(np.linspace(-1, 1, N))
    np.testing.assert_array_equal(np.asarray(pb.grad(f)(x0)), np.zeros(N))
    _, t = pb.jvp(f, (x0,), (jnp.ones(N),))
    assert float(t) == 0.0


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_jit_of_grad_equals_grad(name):
    # the solve must not close over values of the enclosing jit trace: if it did, jit(grad)
    # would stage the while_loop into the linearized program and fail to transpose it
    u = jnp.tanh if name == "cg" else jnp.cos

    def f(v):
        a = jnp.diag(jnp.arange(1, 4, dtype=v.dtype) * 3) + jnp.tanh(v)[:, None] * u(v)[None, :]
        return jnp.sum(jnp.sin(getattr(sla, name)(a / 3, v, tol=1e-12)[0]))

    v0 = jnp.asarray(np.array([0.3, -0.5, 1.2]))
    np.testing.assert_allclose(np.asarray(pb.jit(pb.grad(f))(v0)), np.asarray(pb.grad(f)(v0)),
                               rtol=1e-12)
