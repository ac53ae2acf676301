"""Control flow: cond, switch, while_loop, fori_loop, scan, map, associative_scan.

Each construct is checked against a Python reference, under jit, grad (finite differences,
both modes, second order), vmap (against a loop) and their compositions; errors name the
offending leaf by its pytree path.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.test_util import check_grads, check_vmap

F64 = np.float64


def arr(*shape, seed=0, scale=1.0):
    return jnp.asarray(np.random.default_rng(seed).normal(size=shape).astype(F64) * scale)


def close(a, b, tol=1e-10):
    for x, y in zip(pb.tree_util.tree_leaves(a), pb.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


# ---- scan ----

def rnn_step(params, carry, x):
    w, u = params
    h = jnp.tanh(carry["h"] @ w + x @ u)
    return {"h": h, "n": carry["n"] + 1}, (h.sum(), h * 2)


def np_rnn(params, carry, xs, reverse=False):
    w, u = (np.asarray(p) for p in params)
    h, n = np.asarray(carry["h"]), np.asarray(carry["n"])
    ys1, ys2 = [None] * len(xs), [None] * len(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for i in order:
        h = np.tanh(h @ w + np.asarray(xs[i]) @ u)
        n = n + 1
        ys1[i], ys2[i] = h.sum(), h * 2
    return {"h": h, "n": n}, (np.stack(ys1), np.stack(ys2))


def rnn_args(t=5, b=2, h=3, d=4):
    params = (arr(h, h, seed=1, scale=0.5), arr(d, h, seed=2, scale=0.5))
    carry = {"h": arr(b, h, seed=3), "n": jnp.asarray(np.int32(0))}
    return params, carry, arr(t, b, d, seed=4)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_pytree_values_eager_and_jit(reverse):
    params, carry, xs = rnn_args()
    f = lambda p, c, xs: lax.scan(lambda c, x: rnn_step(p, c, x), c, xs, reverse=reverse)
    want = np_rnn(params, carry, xs, reverse)
    close(f(params, carry, xs), want)
    close(pb.jit(f)(params, carry, xs), want)
    assert pb.jit(f)(params, carry, xs)[0]["n"].dtype == np.int32


@pytest.mark.parametrize("unroll", [1, 2, True])
def test_scan_length_only_and_ys_none(unroll):
    c, ys = lax.scan(lambda c, _: (c * 2.0, None), jnp.asarray(1.0), None, length=5, unroll=unroll)
    assert float(c) == 32.0 and ys is None
    c, ys = lax.scan(lambda c, _: (c + 1, c), 0, None, length=0)
    assert int(c) == 0 and ys.shape == (0,)


def test_scan_grad_fd_both_modes_second_order():
    params, carry, xs = rnn_args(t=4)
    def loss(p, h0, xs):
        c, (s, y) = lax.scan(lambda c, x: rnn_step(p, c, x), {"h": h0, "n": 0}, xs)
        return jnp.sum(c["h"] ** 2) + jnp.sum(s) + jnp.sum(jnp.sin(y))
    check_grads(loss, (params, carry["h"], xs), order=2)
    check_grads(lambda p, h0, xs: pb.jit(loss)(p, h0, xs), (params, carry["h"], xs), order=1)


def test_scan_reverse_grad_and_closure_over_traced_values():
    xs = arr(6, 3)
    def f(w, xs):  # the body closes over w (a traced const of the scan)
        return lax.scan(lambda c, x: (c * w + x, jnp.cos(c)), jnp.zeros(3, F64), xs,
                        reverse=True)[1].sum()
    check_grads(f, (arr(3, seed=5), xs), order=2)


def test_grad_through_nested_scans():
    xs = arr(3, 4, 2)
    def f(w, xs):
        def outer(c, row):
            c2, ys = lax.scan(lambda ci, x: (jnp.sin(ci * w + x), ci * x), c, row)
            return c2, ys.sum()
        c, ys = lax.scan(outer, jnp.ones(2, F64), xs)
        return c.sum() + ys.sum()
    check_grads(f, (arr(2, seed=7), xs), order=2)


def test_scan_vmap_against_loop_and_vmap_of_scan_with_grad_in_body():
    params, carry, xs = rnn_args(t=3)
    f = lambda h0, xs: lax.scan(lambda c, x: rnn_step(params, c, x), {"h": h0, "n": 0}, xs)[1]
    check_vmap(f, (carry["h"], xs), batch_size=3, atol=1e-10, rtol=1e-10)

    def body(c, x):  # the body differentiates: a gradient step per element
        g = pb.grad(lambda c: jnp.sum(jnp.sin(c * x)))(c)
        return c - 0.1 * g, g.sum()
    g = lambda c0, xs: lax.scan(body, c0, xs)
    c0s, xss = arr(4, 3, seed=8), arr(4, 5, 3, seed=9)
    got = pb.vmap(g)(c0s, xss)
    want = [g(c0s[i], xss[i]) for i in range(4)]
    close(got[0], jnp.stack([w[0] for w in want]))
    close(got[1], jnp.stack([w[1] for w in want]))
    close(pb.jit(pb.vmap(g))(c0s, xss), got)


def test_grad_of_vmap_of_scan_and_jacfwd():
    xs = arr(5, 3)
    f = lambda w: lax.scan(lambda c, x: (jnp.tanh(c * w + x), c), jnp.zeros(3, F64), xs)[0]
    check_grads(lambda w: pb.vmap(f)(w).sum(), (arr(2, 3, seed=3),), order=1)
    close(pb.jacfwd(f)(arr(3, seed=4)), pb.jacrev(f)(arr(3, seed=4)))


def test_scan_weak_carry_promoted_to_body_type():
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(4, dtype=jnp.float32))
    assert c.dtype == np.float32 and float(c) == 6.0
    c, _ = lax.scan(lambda c, x: (c + x, None), 0, jnp.arange(4, dtype=jnp.float32))
    assert c.dtype == np.float32


@pytest.mark.x32
def test_scan_errors_name_the_leaf():
    with pytest.raises(TypeError, match=r"carry\['h'\] has type float32\[3\].*float32\[4\]"):
        lax.scan(lambda c, x: ({"h": jnp.zeros(4)}, x), {"h": jnp.zeros(3)}, jnp.zeros((2, 1)))
    with pytest.raises(TypeError, match=r"carry\[1\] has type int32\[\].*float32"):
        lax.scan(lambda c, x: ((c[0], c[1] * 1.5), x), (1.0, jnp.asarray(np.int32(1))),
                 jnp.zeros(2))
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.scan(lambda c, x: ((c, c), x), jnp.zeros(3), jnp.zeros((2, 1)))
    with pytest.raises(TypeError, match="pair"):
        lax.scan(lambda c, x: c, jnp.zeros(3), jnp.zeros((2, 1)))
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.scan(lambda c, x: (c, None), 0.0, (jnp.zeros(2), jnp.zeros(3)))
    with pytest.raises(ValueError, match="length"):
        lax.scan(lambda c, x: (c, None), 0.0, jnp.zeros(2), length=3)
    with pytest.raises(ValueError, match="no values to scan over"):
        lax.scan(lambda c, x: (c, None), 0.0, None)


@settings(max_examples=15, deadline=None)
@given(t=st.integers(0, 6), n=st.integers(1, 3), reverse=st.booleans(), seed=st.integers(0, 99))
def test_scan_cumulative_matches_numpy(t, n, reverse, seed):
    xs = np.random.default_rng(seed).normal(size=(t, n))
    c, ys = lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(n, F64), jnp.asarray(xs),
                     reverse=reverse)
    order = range(t - 1, -1, -1) if reverse else range(t)
    acc, want = np.zeros(n), np.zeros((t, n))
    for i in order:
        want[i] = acc * xs[i]
        acc = acc + xs[i]
    np.testing.assert_allclose(np.asarray(c), acc, atol=1e-12)
    np.testing.assert_allclose(np.asarray(ys), want, atol=1e-12)


def test_scan_jaxpr_text():
    text = str(pb.make_jaxpr(lambda c, xs: lax.scan(lambda c, x: (c + x, c * 2.0), c, xs))(
        jnp.zeros(2), jnp.zeros((3, 2))))
    assert "scan[jaxpr={ lambda ; " in text and "num_consts=0 num_carry=1 length=3" in text


# ---- map ----

@pytest.mark.parametrize("batch_size", [None, 2, 3, 7])
def test_map(batch_size):
    xs = arr(7, 3)
    f = lambda x: {"s": jnp.sin(x).sum(), "v": x * 2}
    got = lax.map(f, xs, batch_size=batch_size)
    close(got["s"], np.sin(np.asarray(xs)).sum(1))
    close(got["v"], np.asarray(xs) * 2)
    check_grads(lambda xs: lax.map(jnp.sin, xs, batch_size=batch_size).sum(), (xs,), order=1)


# ---- cond / switch ----

def test_cond_values_jit_and_branch_selection():
    f = lambda p, x: lax.cond(p, lambda x: jnp.sin(x), lambda x: jnp.cos(x) * 2, x)
    x = arr(3)
    close(f(True, x), np.sin(np.asarray(x)))
    close(f(False, x), np.cos(np.asarray(x)) * 2)
    close(pb.jit(f)(jnp.asarray(False), x), np.cos(np.asarray(x)) * 2)
    close(f(2, x), np.sin(np.asarray(x)))  # numeric predicates: nonzero is true


@pytest.mark.parametrize("pred", [True, False])
def test_cond_grads_eager_and_jit(pred):
    def f(x, y):
        return lax.cond(pred, lambda a, b: jnp.sin(a) * b, lambda a, b: a * 3.0 + b ** 2, x, y)
    check_grads(f, (arr(3), arr(3, seed=1)), order=2)
    check_grads(lambda x, y: pb.jit(lambda p, x, y: lax.cond(
        p, lambda a, b: jnp.sin(a) * b, lambda a, b: a * 3.0 + b ** 2, x, y))(pred, x, y),
                (arr(3), arr(3, seed=1)), order=2)


def test_cond_closure_consts_and_different_residuals_per_branch():
    w = arr(3, seed=3)
    def f(p, x):
        return lax.cond(p, lambda x: jnp.exp(x * w).sum(), lambda x: (jnp.sin(x) ** 2).sum(), x)
    for p in (True, False):
        jit_grad = pb.jit(pb.grad(f, argnums=1))(p, arr(3))
        close(jit_grad, pb.grad(f, argnums=1)(p, arr(3)))


def test_cond_vmap_batched_predicate_selects_per_lane():
    f = lambda p, x: lax.cond(p, lambda x: x + 1.0, lambda x: x * 10.0, x)
    ps, xs = jnp.asarray([True, False, True]), arr(3, 2)
    got = pb.vmap(f)(ps, xs)
    want = np.where(np.asarray(ps)[:, None], np.asarray(xs) + 1, np.asarray(xs) * 10)
    close(got, want)
    close(pb.vmap(f, in_axes=(None, 0))(jnp.asarray(False), xs), np.asarray(xs) * 10)
    check_grads(lambda xs: pb.vmap(f)(ps, xs).sum(), (xs,), order=1)


def test_switch_clamps_index_and_batches():
    branches = [lambda x: x * 0.0, lambda x: x + 1.0, lambda x: x * 3.0]
    x = arr(2)
    for i, want in [(-5, 0), (0, 0), (1, 1), (2, 2), (9, 2)]:
        close(lax.switch(i, branches, x), branches[want](np.asarray(x)))
        close(pb.jit(lambda i, x: lax.switch(i, branches, x))(i, x), branches[want](np.asarray(x)))
    idx = jnp.asarray(np.array([0, 2, 1, 7], np.int32))
    got = pb.vmap(lambda i, x: lax.switch(i, branches, x))(idx, arr(4, 2))
    xs = np.asarray(arr(4, 2))
    want = np.stack([branches[min(i, 2)](xs[k]) for k, i in enumerate([0, 2, 1, 7])])
    close(got, want)
    check_grads(lambda x: lax.switch(2, branches, x), (x,), order=2)


@pytest.mark.x32
def test_cond_errors():
    x = jnp.zeros(3)
    with pytest.raises(TypeError, match=r"output\['a'\] has type float32\[3\] in false_fun but "
                                        r"int32\[3\] in true_fun"):
        lax.cond(True, lambda x: {"a": x.astype(jnp.int32)}, lambda x: {"a": x}, x)
    with pytest.raises(TypeError, match="pytree structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, x)
    with pytest.raises(TypeError, match="scalar"):
        lax.cond(jnp.asarray([True, False]), lambda x: x, lambda x: x, x)
    with pytest.raises(TypeError, match=r"cond: the predicate must be .* got"):
        lax.cond(jnp.zeros(()).astype(jnp.complex64), lambda x: x, lambda x: x, x)
    with pytest.raises(TypeError, match="integer scalar"):
        lax.switch(1.5, [lambda x: x], x)


@pytest.mark.x32
def test_cond_weak_type_mismatch_is_allowed():
    out = lax.cond(True, lambda x: x * 2, lambda x: 1.0 + x * 0, jnp.zeros(3))
    assert out.dtype == np.float32


# ---- while_loop / fori_loop ----

def test_while_loop_values_jit_and_jvp():
    f = lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, jnp.sin(c[1]) * 1.5),
                                 (0, x))[1]
    x = arr(3)
    want = np.asarray(x)
    for _ in range(5):
        want = np.sin(want) * 1.5
    close(f(x), want)
    close(pb.jit(f)(x), want)
    check_grads(f, (x,), order=2, modes=("fwd",))
    y, f_jvp = pb.linearize(f, x)
    close(f_jvp(jnp.ones(3, F64)), pb.jvp(f, (x,), (jnp.ones(3, F64),))[1])


def test_while_loop_reverse_mode_error_suggests_scan():
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1]
    with pytest.raises(ValueError, match="lax.scan, or lax.fori_loop with static"):
        pb.grad(lambda x: f(x).sum())(arr(2))
    with pytest.raises(ValueError, match="Reverse-mode"):  # traced bounds: a while_loop
        pb.jit(pb.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x).sum()))(
            arr(2), 3)


def test_while_loop_vmap_batched_predicate_runs_each_lane_to_completion():
    f = lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0 + 1),
                                    (0, x))
    ns, xs = jnp.asarray(np.array([0, 1, 4], np.int32)), arr(3, 2)
    got = pb.vmap(f)(ns, xs)
    for k, n in enumerate([0, 1, 4]):
        want = np.asarray(xs[k])
        for _ in range(n):
            want = want * 2 + 1
        close(got[1][k], want)
        assert int(got[0][k]) == n
    close(pb.jit(pb.vmap(f))(ns, xs), got)
    close(pb.vmap(f, in_axes=(None, 0))(jnp.asarray(2), xs)[1], np.asarray(xs) * 4 + 3)


@pytest.mark.x32
def test_while_loop_errors():
    with pytest.raises(TypeError, match="boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c, jnp.zeros(()))
    with pytest.raises(TypeError, match=r"carry\[1\] has type float32\[2\].*float32\[3\]"):
        lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, jnp.zeros(3)), (0, jnp.zeros(2)))


def test_fori_loop_static_bounds_is_a_scan_and_reverse_differentiable():
    f = lambda x: lax.fori_loop(1, 4, lambda i, c: c * i + jnp.sin(c), x)
    assert "scan[" in str(pb.make_jaxpr(f)(arr(2)))
    check_grads(f, (arr(2),), order=2)
    assert int(lax.fori_loop(0, 5, lambda i, c: c + i, 0)) == 10
    assert "while[" in str(pb.make_jaxpr(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0))(3))
    assert int(pb.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0))(5)) == 10


# ---- associative_scan ----

@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 17), reverse=st.booleans(), axis=st.sampled_from([0, 1, -1]),
       seed=st.integers(0, 99))
def test_associative_scan_matches_cumulative(n, reverse, axis, seed):
    x = np.random.default_rng(seed).normal(size=(n, 3)) if axis == 0 else \
        np.random.default_rng(seed).normal(size=(3, n))
    got = lax.associative_scan(jnp.add, jnp.asarray(x), reverse=reverse, axis=axis)
    want = np.flip(np.cumsum(np.flip(x, axis), axis), axis) if reverse else np.cumsum(x, axis)
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-12)


def test_associative_scan_pytree_linear_recurrence_grad_vmap():
    # h_t = a_t * h_{t-1} + b_t as an associative scan over (a, b) pairs
    def combine(l, r):
        return (l[0] * r[0], r[0] * l[1] + r[1])
    a, b = arr(9, seed=1), arr(9, seed=2)
    _, h = lax.associative_scan(combine, (a, b))
    want, acc = [], 0.0
    for ai, bi in zip(np.asarray(a), np.asarray(b)):
        acc = ai * acc + bi
        want.append(acc)
    close(h, np.array(want))
    check_grads(lambda a, b: lax.associative_scan(combine, (a, b))[1], (a, b), order=1)
    close(pb.vmap(lambda a, b: lax.associative_scan(combine, (a, b))[1])(
        jnp.stack([a, b]), jnp.stack([b, a]))[0], h)


# ---- every construct under jit, grad, vmap and their compositions ----

def _while_f(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * 1.2),
                          (0, x))[1].sum()


CONSTRUCTS = {
    "cond": lambda x: lax.cond(x.sum() > 0, lambda v: jnp.sin(v) * 2, jnp.cos, x).sum(),
    "switch": lambda x: lax.switch(1, [jnp.sin, lambda v: v ** 3, jnp.cos], x).sum(),
    "while_loop": _while_f,
    "fori_loop": lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) * (i + 1.0), x).sum(),
    "scan": lambda x: lax.scan(lambda c, v: (jnp.tanh(c * v), c * v), 1.0, x)[1].sum(),
    "map": lambda x: lax.map(lambda v: jnp.exp(v) * v, x, batch_size=2).sum(),
    "associative_scan": lambda x: lax.associative_scan(jnp.multiply, x).sum(),
    "checkpoint": pb.checkpoint(lambda x: jnp.sin(jnp.sin(x)).sum()),
    "checkpointed scan": lambda x: lax.scan(lambda c, v: (jnp.tanh(c + v), c), 0.5, x,
                                            checkpoints=("binomial", 2))[1].sum(),
}


@pytest.mark.parametrize("name", list(CONSTRUCTS))
def test_every_construct_under_jit_grad_vmap_and_compositions(name):
    f = CONSTRUCTS[name]
    x = arr(5, scale=0.5)
    close(pb.jit(f)(x), f(x))
    # while_loop is forward-mode only: its derivative is taken by jacfwd
    d = pb.jacfwd if name == "while_loop" else pb.grad
    modes = ("fwd",) if name == "while_loop" else ("fwd", "rev")
    check_grads(f, (x,), order=1, modes=modes)
    xs = arr(3, 5, seed=1, scale=0.5)
    want = jnp.stack([d(f)(r) for r in xs])
    close(pb.vmap(d(f))(xs), want)
    close(pb.jit(pb.vmap(d(f)))(xs), want)
    close(pb.vmap(pb.jit(d(f)))(xs), want)
    close(pb.jit(d(f))(x), d(f)(x))
