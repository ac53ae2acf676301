"""pullback.optim's optimizers (sgd, adam, adamw, nadam, nadamw, adamax, adamaxw, amsgrad,
adagrad, rmsprop, lion) against optax's own on the same inputs for several steps, with a float
learning rate and with a schedule (updates and every state leaf); and a jitted training step
with each optimizer equals the eager one."""
import sys
from pathlib import Path

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as pnp
import pullback.optim as po

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from optim_oracle import assert_tree_close, compare  # noqa: E402

pytestmark = pytest.mark.x32   # JAX's default mode, the one optax runs in here


def sched(count):
    """A schedule written once for both libraries (count is an int32 scalar array)."""
    return 0.05 / (1 + 0.5 * count)


MASK = {"w": True, "layers": [False, True], "b": False}

ALIASES = {
    "sgd": lambda o, lr: o.sgd(lr),
    "sgd_momentum": lambda o, lr: o.sgd(lr, momentum=0.9),
    "sgd_nesterov": lambda o, lr: o.sgd(lr, momentum=0.8, nesterov=True),
    "sgd_bf16_acc": lambda o, lr: o.sgd(lr, momentum=0.9, accumulator_dtype=(
        jjnp.bfloat16 if o is optax else pnp.bfloat16)),
    "adam": lambda o, lr: o.adam(lr),
    "adam_args": lambda o, lr: o.adam(lr, b1=0.8, b2=0.9, eps=1e-4, eps_root=1e-6),
    "adam_nesterov": lambda o, lr: o.adam(lr, nesterov=True),
    "adamw": lambda o, lr: o.adamw(lr),
    "adamw_mask": lambda o, lr: o.adamw(lr, weight_decay=0.1, mask=MASK),
    "adamw_mask_fn": lambda o, lr: o.adamw(lr, weight_decay=0.1, mask=lambda p: MASK),
    "adamw_wd_sched": lambda o, lr: o.adamw(lr, weight_decay=sched),
    "nadam": lambda o, lr: o.nadam(lr),
    "nadamw": lambda o, lr: o.nadamw(lr, weight_decay=0.05),
    "adamax": lambda o, lr: o.adamax(lr),
    "adamax_args": lambda o, lr: o.adamax(lr, b1=0.5, b2=0.8, eps=1e-2),
    "adamaxw": lambda o, lr: o.adamaxw(lr, weight_decay=0.05, mask=MASK),
    "amsgrad": lambda o, lr: o.amsgrad(lr),
    "adagrad": lambda o, lr: o.adagrad(lr),
    "rmsprop": lambda o, lr: o.rmsprop(lr),
    "rmsprop_centered": lambda o, lr: o.rmsprop(lr, centered=True),
    "rmsprop_momentum": lambda o, lr: o.rmsprop(lr, momentum=0.9, nesterov=True),
    "rmsprop_all": lambda o, lr: o.rmsprop(lr, decay=0.8, eps=1e-4, initial_scale=0.1,
                                           eps_in_sqrt=False, centered=True, momentum=0.5,
                                           bias_correction=True),
    "lion": lambda o, lr: o.lion(lr),
    "lion_mask": lambda o, lr: o.lion(lr, weight_decay=0.1, mask=MASK),
}


@pytest.mark.parametrize("lr", ["float", "schedule"])
@pytest.mark.parametrize("name", sorted(ALIASES))
def test_alias_matches_optax(name, lr):
    rate = 0.05 if lr == "float" else sched
    compare(lambda o: ALIASES[name](o, rate), po, optax,
            rtol=1e-2 if "bf16" in name else 2e-6, atol=1e-2 if "bf16" in name else 1e-7)


def test_alias_state_chain_nesting():
    """The chain nesting and class names of a few alias states, spelled out."""
    p = {"w": pnp.ones((2, 2))}
    s = po.adamw(sched, mask={"w": True}).init(p)
    assert [type(x).__name__ for x in s] == ["ScaleByAdamState", "MaskedState",
                                             "ScaleByScheduleState"]
    assert type(s[1].inner_state).__name__ == "EmptyState"
    assert s[0].count.dtype == np.int32 and s[2].count.dtype == np.int32
    s = po.rmsprop(0.1, centered=True, momentum=0.9, bias_correction=True).init(p)
    assert [type(x).__name__ for x in s] == ["ScaleByRStdDevWithCountState", "EmptyState",
                                             "TraceState"]
    s = po.sgd(0.1).init(p)
    assert [type(x).__name__ for x in s] == ["EmptyState", "EmptyState"]
    assert isinstance(po.adam(0.1), po.GradientTransformationExtraArgs)


# ---------------------------------------------------------------------------
# A jitted training step equals the eager one.
# ---------------------------------------------------------------------------

_RNG = np.random.default_rng(1)
_X = _RNG.standard_normal((8, 3)).astype(np.float32)
_Y = _RNG.standard_normal((8, 2)).astype(np.float32)
_P = {"w": _RNG.standard_normal((3, 2)).astype(np.float32) * 0.5,
      "b": np.zeros(2, np.float32), "s": np.float32(1.0)}


def _loss(params, x, y):
    pred = params["s"] * pnp.tanh(x @ params["w"] + params["b"])
    return pnp.mean((pred - y) ** 2)


def _make_step(tx):
    def step(params, state, x, y):
        loss, g = pb.value_and_grad(_loss)(params, x, y)
        updates, state = tx.update(g, state, params)
        return po.apply_updates(params, updates), state, loss
    return step


_MASK_P = {"w": True, "b": False, "s": False}
JIT_CASES = {
    "sgd_nesterov": lambda: po.sgd(sched, momentum=0.8, nesterov=True),
    "adam": lambda: po.adam(sched),
    "adamw_mask": lambda: po.adamw(sched, weight_decay=0.1, mask=_MASK_P),
    "adamw_wd_sched": lambda: po.adamw(0.05, weight_decay=sched),
    "nadamw": lambda: po.nadamw(0.05),
    "adamaxw": lambda: po.adamaxw(sched, mask=lambda p: _MASK_P),
    "amsgrad": lambda: po.amsgrad(sched),
    "adagrad": lambda: po.adagrad(0.05),
    "rmsprop_all": lambda: po.rmsprop(sched, decay=0.8, eps=1e-4, initial_scale=0.1,
                                      eps_in_sqrt=False, centered=True, momentum=0.5,
                                      bias_correction=True),
    "lion_mask": lambda: po.lion(sched, weight_decay=0.1, mask=_MASK_P),
    "sgd": lambda: po.sgd(0.05),
    "sgd_momentum_sched": lambda: po.sgd(sched, momentum=0.9),
    "nadam": lambda: po.nadam(sched),
    "adamax": lambda: po.adamax(0.05),
    "rmsprop": lambda: po.rmsprop(0.01),
    "rmsprop_centered": lambda: po.rmsprop(sched, centered=True),
    "lion": lambda: po.lion(0.01),
}


@pytest.mark.parametrize("name", sorted(JIT_CASES))
def test_jitted_step_equals_eager(name):
    tx = JIT_CASES[name]()
    params = {k: pnp.asarray(v) for k, v in _P.items()}
    step = _make_step(tx)
    jstep = pb.jit(step)
    pe, se = params, tx.init(params)
    pj, sj = params, tx.init(params)
    x, y = pnp.asarray(_X), pnp.asarray(_Y)
    for _ in range(3):
        pe, se, le = step(pe, se, x, y)
        pj, sj, lj = jstep(pj, sj, x, y)
        np.testing.assert_allclose(np.asarray(lj), np.asarray(le), rtol=1e-5)
    assert_tree_close(pj, pe, rtol=1e-5, atol=1e-6, what=f"{name} params")
    assert_tree_close(sj, se, rtol=1e-5, atol=1e-6, what=f"{name} state")
    assert not np.allclose(np.asarray(pj["w"]), _P["w"])  # the step did move the params


@pytest.mark.x64
@pytest.mark.parametrize("name", ["adam", "adamw_wd_sched", "rmsprop_all", "adagrad", "lion",
                                  "sgd_nesterov", "amsgrad", "adamax"])
def test_x64_mode_matches_optax_x64(name):
    """With x64 on in both libraries, dtypes follow JAX's x64 rules the same way: float32
    params keep float32 updates and states (Python-float hyperparameters stay weak), counts
    stay int32; a Python-float param leaf gives weakly typed states (zeros_like(1.5) is weak)."""
    jax.config.update("jax_enable_x64", True)
    try:
        compare(lambda o: ALIASES[name](o, sched), po, optax, steps=3)
    finally:
        jax.config.update("jax_enable_x64", False)
