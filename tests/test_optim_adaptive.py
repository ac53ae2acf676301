"""pullback.optim's adaptive transforms (belief, radam, novograd, trust ratio, factored RMS) and
their aliases (adabelief, radam, novograd, lamb, lars, adafactor) against optax 0.2.8 on the
same inputs: updates and every state leaf (NamedTuple class and field names, dtypes, values)
for several steps, plus a jitted training step against the eager one."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import pullback
import pullback.numpy as pnp
from pullback import optim

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jjnp = jax.numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from optim_oracle import assert_tree_close  # noqa: E402

# optax computes in JAX's default (x32) mode: compare in the same mode
pytestmark = pytest.mark.x32

STEPS = 5
RTOL, ATOL = 2e-5, 1e-6
# bf16 accumulators: XLA keeps excess (f32) precision inside fused code (optax's lax.cond
# branches; --xla_allow_excess_precision=false makes them agree exactly) where pullback rounds
# after each op, so these cases restart optax from pullback's state at each step (the
# difference cannot compound) and allow a bf16 ulp or two
BF16_CASES = {"scale_by_novograd_bf16", "adafactor_schedule"}


def _params_np():
    rng = np.random.default_rng(0)
    f = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
    # min_dim_size_to_factor=3 in the adafactor cases: 'w' (3,4), 'nested/m' (5,6), 'tall'
    # (6,3), the rank-3 't' (4,2,3) and the tied 'q' (4,4) are factored ('tall' and 't' with
    # the largest axis before the second largest); 'thin' (2,5) and the vectors are not
    return {"s": np.float32(0.7), "v": f(4), "w": f(3, 4), "z": np.zeros(3, np.float32),
            "nested": {"m": f(5, 6), "t": f(4, 2, 3), "thin": f(2, 5), "q": f(4, 4),
                       "tall": f(6, 3)}}


def _grads_np(step, like):
    rng = np.random.default_rng(100 + step)
    return {k: (_grads_np(step, v) if isinstance(v, dict)
                else rng.normal(size=np.shape(v)).astype(np.float32))
            for k, v in like.items()}


def _to(mod, tree):
    if isinstance(tree, dict):
        return {k: _to(mod, v) for k, v in tree.items()}
    return mod.asarray(tree)


def _schedule(count):
    return 0.05 / (1.0 + 0.5 * count)


def _wd_mask(params):
    # callable mask: decay the matrices only
    return {k: (_wd_mask(v) if isinstance(v, dict) else np.ndim(v) >= 2)
            for k, v in params.items()}


_TREE_MASK = {"s": False, "v": True, "w": True, "z": False,
              "nested": {"m": True, "t": False, "thin": True, "q": False, "tall": True}}

# name -> function of the optimizer module (pullback.optim or optax) building the transform
CASES = {
    "scale_by_belief": lambda o: o.scale_by_belief(),
    "scale_by_belief_nesterov": lambda o: o.scale_by_belief(b1=0.8, b2=0.95, nesterov=True),
    "adabelief": lambda o: o.adabelief(1e-2),
    "adabelief_schedule": lambda o: o.adabelief(_schedule, eps_root=1e-12),
    "scale_by_radam": lambda o: o.scale_by_radam(),
    # b2=0.9 makes rho_t cross threshold=3 at step 4: both branches are exercised
    "scale_by_radam_cross": lambda o: o.scale_by_radam(b2=0.9, threshold=3.0),
    "scale_by_radam_nesterov": lambda o: o.scale_by_radam(b2=0.9, threshold=3.0,
                                                          nesterov=True, eps_root=1e-8),
    "radam": lambda o: o.radam(1e-2, b2=0.9, threshold=3.0),
    "radam_schedule": lambda o: o.radam(_schedule),
    "scale_by_novograd": lambda o: o.scale_by_novograd(weight_decay=0.1),
    "scale_by_novograd_bf16": lambda o: o.scale_by_novograd(mu_dtype=jjnp.bfloat16
                                                            if o is optax else pnp.bfloat16),
    "novograd": lambda o: o.novograd(1e-2, weight_decay=0.01),
    "novograd_schedule": lambda o: o.novograd(_schedule, b2=0.5),
    "scale_by_trust_ratio": lambda o: o.scale_by_trust_ratio(),
    "scale_by_trust_ratio_args": lambda o: o.scale_by_trust_ratio(
        min_norm=1.5, trust_coefficient=0.1, eps=1e-3),
    "scale_by_param_block_norm": lambda o: o.scale_by_param_block_norm(),
    "scale_by_param_block_rms": lambda o: o.scale_by_param_block_rms(min_scale=0.5),
    "lamb": lambda o: o.lamb(1e-2),
    "lamb_mask_tree": lambda o: o.lamb(1e-2, weight_decay=0.1, mask=_TREE_MASK),
    "lamb_mask_fn_schedule": lambda o: o.lamb(_schedule, weight_decay=_schedule, mask=_wd_mask),
    "lars": lambda o: o.lars(0.1),
    "lars_masks": lambda o: o.lars(0.1, weight_decay=0.1, weight_decay_mask=_TREE_MASK,
                                   trust_ratio_mask=_wd_mask, nesterov=True, eps=1e-4),
    "lars_schedule": lambda o: o.lars(_schedule, weight_decay=0.01, momentum=0.5),
    "scale_by_factored_rms": lambda o: o.scale_by_factored_rms(min_dim_size_to_factor=3),
    "scale_by_factored_rms_args": lambda o: o.scale_by_factored_rms(
        decay_rate=0.6, step_offset=2, min_dim_size_to_factor=4, epsilon=1e-20),
    "scale_by_factored_rms_unfactored": lambda o: o.scale_by_factored_rms(factored=False),
    "adafactor": lambda o: o.adafactor(min_dim_size_to_factor=3),
    "adafactor_full": lambda o: o.adafactor(
        1e-2, min_dim_size_to_factor=3, decay_rate=0.7, decay_offset=1,
        clipping_threshold=0.5, momentum=0.9, weight_decay_rate=1e-2,
        weight_decay_mask=_TREE_MASK),
    "adafactor_schedule": lambda o: o.adafactor(
        _schedule, min_dim_size_to_factor=3, multiply_by_parameter_scale=False,
        clipping_threshold=None, momentum=0.8,
        dtype_momentum=jjnp.bfloat16 if o is optax else pnp.bfloat16,
        weight_decay_rate=_schedule, factored=False),
}


def _against_optax(name, params, steps, tol, resync):
    """Runs case ``name`` in pullback and optax on the same params and gradients, comparing
    the updates and every state leaf after each step; with ``resync`` optax restarts each
    step from pullback's state (for low-precision states, so rounding cannot compound)."""
    tx_p, tx_o = CASES[name](optim), CASES[name](optax)
    state_p, state_o = tx_p.init(_to(pnp, params)), tx_o.init(_to(jjnp, params))
    assert_tree_close(state_p, state_o, what=f"{name}: init state", **tol)
    for step in range(steps):
        grads = _cast_like(_grads_np(step, params), params)
        if resync:
            state_o = jax.tree.unflatten(jax.tree.structure(state_o), [
                jjnp.asarray(np.asarray(x)) for x in pullback.tree_util.tree_leaves(state_p)])
        up, state_p = tx_p.update(_to(pnp, grads), state_p, _to(pnp, params))
        uo, state_o = tx_o.update(_to(jjnp, grads), state_o, _to(jjnp, params))
        assert_tree_close(up, uo, what=f"{name}: updates at step {step}", **tol)
        assert_tree_close(state_p, state_o, what=f"{name}: state at step {step}", **tol)
        # both sides continue from the same (optax's) parameters, so errors cannot compound
        params = _to(np, optax.apply_updates(_to(jjnp, params), uo))


def _cast_like(tree, like):
    if isinstance(tree, dict):
        return {k: _cast_like(v, like[k]) for k, v in tree.items()}
    return np.asarray(tree).astype(np.asarray(like).dtype)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_optax(name):
    tol = dict(rtol=2e-2, atol=1e-3) if name in BF16_CASES else dict(rtol=RTOL, atol=ATOL)
    _against_optax(name, _params_np(), STEPS, tol, resync=name in BF16_CASES)


BF16_PARAM_CASES = [
    "scale_by_belief_nesterov", "scale_by_radam_cross", "novograd", "scale_by_trust_ratio_args",
    "scale_by_param_block_rms", "scale_by_factored_rms", "adafactor_full", "lamb_mask_tree",
    "lars_masks",
    # a schedule's value (float * int32 count: weakly typed) times a bf16 param stays bf16
    "lamb_mask_fn_schedule",
]


@pytest.mark.parametrize("name", BF16_PARAM_CASES)
def test_bf16_params_match_optax(name):
    """bf16 params and gradients: the updates and states keep optax's dtypes."""
    _against_optax(name, _to_bf16(_params_np()), 3, dict(rtol=5e-2, atol=5e-3), resync=True)


def _to_bf16(tree):
    if isinstance(tree, dict):
        return {k: _to_bf16(v) for k, v in tree.items()}
    return np.asarray(tree).astype(pnp.bfloat16)


@pytest.mark.parametrize("name", ["scale_by_trust_ratio", "scale_by_novograd",
                                  "scale_by_factored_rms", "scale_by_param_block_rms", "lamb"])
def test_needs_params(name):
    tx = CASES[name](optim)
    params = _to(pnp, _params_np())
    state = tx.init(params)
    with pytest.raises(ValueError, match="params"):
        tx.update(params, state)


def test_factored_state_shapes():
    """Which leaves are factored, and over which axes, by the two largest dims."""
    tx = optim.scale_by_factored_rms(min_dim_size_to_factor=3)
    params = {"t": pnp.zeros((5, 2, 3)), "thin": pnp.zeros((2, 7)), "s": pnp.zeros(())}
    st = tx.init(params)
    # (5,2,3): axes 2 (size 3) and 0 (size 5); v_row drops axis 0, v_col drops axis 2
    assert st.v_row["t"].shape == (2, 3) and st.v_col["t"].shape == (5, 2)
    assert st.v["t"].shape == (1,)
    assert st.v_row["thin"].shape == (1,) and st.v["thin"].shape == (2, 7)
    assert st.v["s"].shape == () and st.count.dtype == np.int32


def _loss(params, x, y):
    pred = (x @ params["w"] + params["v"]) * params["s"]
    # every other leaf gets a gradient too (a small penalty), so the masks see all leaves
    penalty = sum(pnp.sum(leaf ** 2) for leaf in pullback.tree_util.tree_leaves(params))
    return pnp.mean((pred - y) ** 2) + 0.01 * penalty


ALIASES = ["adabelief", "adabelief_schedule", "radam", "radam_schedule", "novograd",
           "lamb_mask_tree", "lars_masks", "adafactor", "adafactor_full"]


@pytest.mark.parametrize("name", ALIASES)
def test_jit_step_equals_eager(name):
    tx = CASES[name](optim)

    def step(params, state, x, y):
        loss, grads = pullback.value_and_grad(_loss)(params, x, y)
        updates, state = tx.update(grads, state, params)
        return optim.apply_updates(params, updates), state, loss

    rng = np.random.default_rng(1)
    x = pnp.asarray(rng.normal(size=(6, 3)).astype(np.float32))
    y = pnp.asarray(rng.normal(size=(6, 4)).astype(np.float32))
    p0 = _params_np()
    pe = pj = _to(pnp, p0)
    se = sj = tx.init(pe)
    jstep = pullback.jit(step)
    for _ in range(3):
        pe, se, le = step(pe, se, x, y)
        pj, sj, lj = jstep(pj, sj, x, y)
        assert_tree_close((pj, sj, lj), (pe, se, le), rtol=RTOL, atol=ATOL,
                          what=f"{name}: jit vs eager")
    # the parameters moved: the step did something
    assert not np.allclose(np.asarray(pe["w"]), p0["w"])
