"""checkpoint/remat with policies, and checkpointed scans (K segments and binomial).

Values and gradients must equal the un-checkpointed program's (bit for bit for the scans
interpreted step by step: they run the same operations; compiled -- as eager loops are by
default -- each program fuses its own way, so to rounding); residuals must be what the policy
or schedule promises; the binomial schedule's forward-step count must match Revolve's formula
(counted on the interpreted steps).
"""
import math

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.ad_checkpoint import checkpoint_name, saved_residuals
from pullback.primitives.elementwise import tanh_p
from pullback.test_util import assert_bitwise_equal, check_grads
from pullback.lax._loops import revolve_extra_steps, revolve_split
from pullback.transforms import jit as jit_module

P = pb.checkpoint_policies
F64 = np.float64


def arr(*shape, seed=0, scale=1.0):
    return jnp.asarray(np.random.default_rng(seed).normal(size=shape).astype(F64) * scale)


def mlp(w1, w2, x):
    h = jnp.tanh(x @ w1)
    h = checkpoint_name(h, "hidden")
    return jnp.sum(jnp.sin(h @ w2))


ARGS = (arr(4, 5, seed=1), arr(5, 3, seed=2), arr(6, 4, seed=3))


def computed(res):
    return [a.shape for a, d in res if d == "computed in the forward pass"]


@pytest.mark.parametrize("policy", [None, P.everything_saveable, P.nothing_saveable,
                                    P.dots_saveable, P.dots_with_no_batch_dims_saveable,
                                    P.save_only_these_names("hidden"),
                                    P.save_any_names_but_these("other"),
                                    P.save_from_both_policies(P.dots_saveable,
                                                              P.save_only_these_names("hidden"))])
def test_checkpoint_values_and_grads_equal_plain(policy):
    f = pb.checkpoint(mlp, policy=policy)
    assert_bitwise_equal(f(*ARGS), mlp(*ARGS))
    g_plain = pb.grad(mlp, argnums=(0, 1))(*ARGS)
    for g in (pb.grad(f, argnums=(0, 1))(*ARGS), pb.jit(pb.grad(f, argnums=(0, 1)))(*ARGS)):
        for a, b in zip(g, g_plain):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
    check_grads(f, ARGS, order=2)


def test_policies_decide_the_residuals():
    # nothing saved: only the inputs; dots saved: both products; names: the tagged value
    assert computed(saved_residuals(pb.checkpoint(mlp), *ARGS)) == []
    assert sorted(computed(saved_residuals(pb.checkpoint(mlp, policy=P.dots_saveable), *ARGS))
                  ) == [(6, 3), (6, 5)]
    assert computed(saved_residuals(pb.checkpoint(
        mlp, policy=P.save_only_these_names("hidden")), *ARGS)) == [(6, 5)]
    plain = computed(saved_residuals(mlp, *ARGS))
    assert len(plain) >= 3  # without checkpoint every nonlinearity keeps its residual


def test_checkpoint_keeps_recomputation_out_of_the_forward_pass_when_staged():
    f = pb.checkpoint(lambda x: jnp.sin(jnp.sin(x)).sum())
    text = str(pb.make_jaxpr(pb.grad(f))(arr(3)))
    # the backward pass is one nested checkpoint call recomputing sin, opaque to CSE
    assert text.count("checkpoint[") >= 1 and "prevent_cse=True" in text
    inner = text[text.index("checkpoint["):]
    assert "sin" in inner and "cos" in inner


def test_checkpoint_static_argnums_and_vmap():
    f = pb.checkpoint(lambda x, n: jnp.sin(x) ** n, static_argnums=(1,))
    x = arr(3)
    np.testing.assert_allclose(np.asarray(pb.grad(lambda x: f(x, 3).sum())(x)),
                               3 * np.sin(np.asarray(x)) ** 2 * np.cos(np.asarray(x)))
    got = pb.vmap(pb.grad(lambda x: f(x, 2).sum()))(arr(4, 3))
    want = np.stack([np.asarray(pb.grad(lambda x: f(x, 2).sum())(r)) for r in arr(4, 3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_nested_checkpoints():
    inner = pb.checkpoint(lambda x: jnp.sin(x) * 2)
    outer = pb.checkpoint(lambda x: jnp.cos(inner(x)).sum())
    check_grads(outer, (arr(4),), order=2)


# ---- checkpointed scan ----

def step(carry, x):
    w, h = carry
    h = jnp.tanh(h @ w + x)
    return (w, h), jnp.sin(h).sum()


def scan_loss(w, h0, xs, checkpoints, reverse=False):
    (_, h), ys = lax.scan(step, (w, h0), xs, checkpoints=checkpoints, reverse=reverse)
    return jnp.sum(h ** 2) + jnp.sum(ys)


@pytest.mark.parametrize("checkpoints", [1, 2, 3, 7, 13, 50, ("binomial", 1),
                                         ("binomial", 2), ("binomial", 4)])
@pytest.mark.parametrize("reverse", [False, True])
def test_checkpointed_scan_identical_to_plain(checkpoints, reverse, monkeypatch):
    w, h0, xs = arr(3, 3, seed=1, scale=0.5), arr(2, 3, seed=2), arr(13, 2, 3, seed=3)
    vg = pb.value_and_grad(scan_loss, argnums=(0, 1, 2))
    compiled = vg(w, h0, xs, checkpoints, reverse)
    monkeypatch.setattr(jit_module, "compile_eager_control_flow", False)
    want = vg(w, h0, xs, None, reverse)
    got = vg(w, h0, xs, checkpoints, reverse)
    assert_bitwise_equal(got[0], want[0])
    for a, b, c in zip(got[1], want[1], compiled[1]):
        assert_bitwise_equal(a, b)
        np.testing.assert_allclose(np.asarray(c), np.asarray(b), rtol=1e-13, atol=1e-13)


def test_checkpointed_scan_under_jit_vmap_and_fd():
    w, h0, xs = arr(3, 3, seed=1, scale=0.5), arr(2, 3, seed=2), arr(9, 2, 3, seed=3)
    for ck in (3, ("binomial", 2)):
        g = pb.jit(pb.grad(scan_loss), static_argnums=(3,))
        np.testing.assert_allclose(np.asarray(g(w, h0, xs, ck)),
                                   np.asarray(pb.grad(scan_loss)(w, h0, xs, None)), rtol=1e-12)
        vg = pb.vmap(pb.grad(lambda w, h, xs: scan_loss(w, h, xs, ck), argnums=1),
                     in_axes=(None, 0, None))
        hs = arr(3, 2, 3, seed=5)
        np.testing.assert_allclose(
            np.asarray(vg(w, hs, xs)),
            np.stack([np.asarray(pb.grad(scan_loss, argnums=1)(w, h, xs, None)) for h in hs]),
            rtol=1e-12)
        check_grads(lambda w, h0: scan_loss(w, h0, xs, ck), (w, h0), order=1)


def test_revolve_formula_is_the_optimum_of_the_recursion():
    # brute-force dynamic program over every split point
    best = {}
    for s in range(1, 5):
        for t in range(1, 40):
            if t == 1:
                best[t, s] = 0
                continue
            cands = [m + (best.get((t - m, s - 1), math.inf) if t - m > 1 else 0) +
                     best[m, s] for m in range(1, t)]
            best[t, s] = min(cands)
            assert best[t, s] == revolve_extra_steps(t, s), (t, s)
            m = revolve_split(t, s)
            assert cands[m - 1] == best[t, s]
    assert revolve_extra_steps(1000, 10) == 3636


@pytest.fixture
def tanh_counter(monkeypatch):
    # counts the tanh kernel calls of interpreted loop bodies (a compiled one runs in C)
    monkeypatch.setattr(jit_module, "compile_eager_control_flow", False)
    count = [0]
    orig = tanh_p.cpu

    def counting(k, *a, **p):
        count[0] += 1
        return orig(k, *a, **p)
    tanh_p.cpu = counting
    try:
        yield count
    finally:
        tanh_p.cpu = orig


@pytest.mark.parametrize("t,s", [(10, 1), (10, 2), (20, 3), (50, 4), (64, 6), (100, 5)])
@pytest.mark.eager_only
def test_binomial_forward_steps_match_revolve(tanh_counter, t, s):
    xs = arr(t, 3, scale=0.01)
    f = lambda h: lax.scan(lambda c, x: (jnp.tanh(c * 0.9 + x), None), h, xs,
                           checkpoints=("binomial", s))[0].sum()
    pb.grad(f)(arr(3))
    assert tanh_counter[0] - t == revolve_extra_steps(t, s)


@pytest.mark.parametrize("k", [1, 4, 10])
@pytest.mark.eager_only
def test_k_checkpoints_recompute_one_sweep(tanh_counter, k):
    xs = arr(40, 3, scale=0.01)
    pb.grad(lambda h: lax.scan(lambda c, x: (jnp.tanh(c + x), None), h, xs,
                               checkpoints=k)[0].sum())(arr(3))
    assert tanh_counter[0] == 2 * 40


def residual_bytes(t, checkpoints):
    xs = arr(t, 8, 16, seed=1)
    f = lambda h, xs: lax.scan(lambda c, x: (jnp.tanh(c * 0.5 + x), None), h, xs,
                               checkpoints=checkpoints)[0].sum()
    res = saved_residuals(f, arr(8, 16), xs)
    return sum(int(np.prod(a.shape)) * a.dtype.itemsize for a, d in res
               if d == "computed in the forward pass")


def test_k_checkpoint_residuals_are_k_carries():
    carry = 8 * 16 * 8
    for t in (100, 400):
        assert residual_bytes(t, 10) == 10 * carry  # K carries, whatever T
    assert residual_bytes(400, None) >= 400 * carry  # the plain scan keeps a carry per step


def test_checkpoints_argument_errors():
    for bad in (0, -1, ("binomial", 0), "sqrt", ("revolve", 3)):
        with pytest.raises(ValueError, match="checkpoints"):
            lax.scan(lambda c, x: (c, None), 0.0, jnp.zeros(4), checkpoints=bad)
