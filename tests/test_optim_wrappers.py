"""pullback.optim clipping transforms and wrappers (partition/multi_transform,
inject_hyperparams, MultiSteps, apply_if_finite) against optax 0.2.8: updates AND state (the
NamedTuple types and field names, structure, values and dtypes) for several steps, and one
step under pullback.jit equal to the eager one."""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
import pytest

import pullback
import pullback.numpy as pnp
from pullback import optim, tree_util

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32

RNG = np.random.default_rng(0)


# --- one stateful transformation, written once for both libraries ------------------------------

class MomentumState(NamedTuple):
    trace: Any
    count: Any


def momentum(lib, np_mod, tree_map, decay=0.9, learning_rate=0.1):
    """``-learning_rate * trace`` with ``trace = decay * trace + g``, built from ``lib``'s
    GradientTransformation, ``np_mod``'s ops and ``tree_map``."""
    def init_fn(params):
        return MomentumState(trace=tree_map(np_mod.zeros_like, params),
                             count=np_mod.zeros([], np_mod.int32))

    def update_fn(updates, state, params=None):
        trace = tree_map(lambda g, t: decay * t + g, updates, state.trace)
        return (tree_map(lambda t: -learning_rate * t, trace),
                MomentumState(trace=trace, count=state.count + 1))
    return lib.GradientTransformation(init_fn, update_fn)


OURS_MOMENTUM = functools.partial(momentum, optim, pnp, tree_util.tree_map)
THEIRS_MOMENTUM = functools.partial(momentum, optax, jnp, jax.tree_util.tree_map)


# --- comparing pytrees across the two libraries ------------------------------------------------

def assert_same_tree(ours, theirs, path="", rtol=1e-5, atol=1e-6):
    """Same node types (NamedTuple class names and fields, dict keys, sequence lengths),
    leaves equal with the same dtype and shape."""
    if isinstance(theirs, tuple) and hasattr(theirs, "_fields"):
        assert type(ours).__name__ == type(theirs).__name__, (path, type(ours), type(theirs))
        assert ours._fields == theirs._fields, path
        for f in theirs._fields:
            assert_same_tree(getattr(ours, f), getattr(theirs, f), f"{path}.{f}", rtol, atol)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and set(ours) == set(theirs), (path, ours, theirs)
        for k in theirs:
            assert_same_tree(ours[k], theirs[k], f"{path}[{k!r}]", rtol, atol)
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (path, ours, theirs)
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert_same_tree(o, t, f"{path}[{i}]", rtol, atol)
    elif theirs is None:
        assert ours is None, path
    else:
        o, t = np.asarray(ours), np.asarray(theirs)
        assert o.dtype == t.dtype and o.shape == t.shape, (path, o.dtype, t.dtype, o.shape,
                                                           t.shape)
        np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, err_msg=path)


def to_ours(tree):
    return tree_util.tree_map(lambda x: pnp.asarray(np.asarray(x)), tree)


def to_theirs(tree):
    return jax.tree_util.tree_map(lambda x: jnp.asarray(np.asarray(x)), tree)


def make_params():
    return {"w": RNG.standard_normal((3, 2)).astype(np.float32),
            "b": RNG.standard_normal((2,)).astype(np.float32),
            "head": (RNG.standard_normal((4,)).astype(np.float32),)}


def grads_seq(n, scale=1.0, bad=()):
    """n gradient trees; steps listed in ``bad`` get a NaN (even steps) or an inf (odd)."""
    out = []
    for i in range(n):
        g = tree_util.tree_map(lambda p: (RNG.standard_normal(p.shape) * scale).astype(p.dtype),
                               make_params())
        if i in bad:
            g["b"] = g["b"].copy()
            g["b"][0] = np.nan if i % 2 == 0 else np.inf
        out.append(g)
    return out


def run_both(ours_tx, theirs_tx, grads, params=None, with_params=False, check_jit=True):
    """Steps both transformations over ``grads``, comparing updates and states each step;
    returns the final (ours, theirs) states. One step is also run under pullback.jit."""
    params = make_params() if params is None else params
    s_ours, s_theirs = ours_tx.init(to_ours(params)), theirs_tx.init(to_theirs(params))
    assert_same_tree(s_ours, s_theirs, "init")
    theirs_update = jax.jit(theirs_tx.update)  # one compilation instead of per-op eager ones
    for i, g in enumerate(grads):
        p_ours = to_ours(params) if with_params else None
        p_theirs = to_theirs(params) if with_params else None
        if check_jit and i == len(grads) - 1:
            u_jit, s_jit = pullback.jit(ours_tx.update)(to_ours(g), s_ours, p_ours)
        u_ours, s_ours_new = ours_tx.update(to_ours(g), s_ours, p_ours)
        u_theirs, s_theirs = theirs_update(to_theirs(g), s_theirs, p_theirs)
        assert_same_tree(u_ours, u_theirs, f"updates@{i}")
        assert_same_tree(s_ours_new, s_theirs, f"state@{i}")
        if check_jit and i == len(grads) - 1:
            assert_same_tree(u_jit, u_ours, f"jit updates@{i}", rtol=1e-6, atol=1e-7)
            assert_same_tree(s_jit, s_ours_new, f"jit state@{i}", rtol=1e-6, atol=1e-7)
        s_ours = s_ours_new
    return s_ours, s_theirs


# --- clipping ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda m: m.clip(0.5),
    lambda m: m.clip_by_block_rms(0.7),
    lambda m: m.clip_by_global_norm(1.5),      # the norm of the grads is about 3: clipped
    lambda m: m.clip_by_global_norm(100.0),    # not clipped
    lambda m: m.zero_nans(),
])
def test_clipping_transforms(make):
    run_both(make(optim), make(optax), grads_seq(2, bad=(1,)) if "zero_nans" in repr(make)
             else grads_seq(2))


def test_zero_nans_state_records_the_nan_leaves():
    ours, theirs = run_both(optim.zero_nans(), optax.zero_nans(), grads_seq(3, bad=(0, 2)))
    assert isinstance(ours, optim.ZeroNansState)
    assert bool(ours.found_nan["b"]) and not bool(ours.found_nan["w"])


def test_chain_of_clips_and_momentum():
    run_both(optim.chain(optim.clip_by_global_norm(1.0), OURS_MOMENTUM(), optim.clip(0.05)),
             optax.chain(optax.clip_by_global_norm(1.0), THEIRS_MOMENTUM(), optax.clip(0.05)),
             grads_seq(3))


def test_global_norm():
    g = grads_seq(1)[0]
    with pytest.warns(DeprecationWarning):
        theirs = optax.global_norm(to_theirs(g))
    assert_same_tree(optim.global_norm(to_ours(g)), theirs)
    assert_same_tree(optim.global_norm({}), jnp.asarray(0.0))


# --- partition / multi_transform -----------------------------------------------------------------

LABELS = {"w": "mom", "b": "frozen", "head": ("clip",)}


@pytest.mark.parametrize("labels", [LABELS, lambda p: LABELS,
                                    {"w": "mom", "b": "frozen", "head": "clip"}],  # a prefix
                         ids=["tree", "callable", "prefix"])
def test_partition(labels):
    def txs(m, mom):
        return {"mom": mom(), "frozen": m.set_to_zero(), "clip": m.clip(0.1)}
    ours, theirs = run_both(optim.partition(txs(optim, OURS_MOMENTUM), labels),
                            optax.partition(txs(optax, THEIRS_MOMENTUM), labels), grads_seq(3))
    # the momentum state holds only the 'mom' leaves
    assert len(tree_util.tree_leaves(ours.inner_states["mom"].inner_state.trace)) == 1


def test_multi_transform_is_partition():
    assert optim.multi_transform is optim.partition
    assert optim.MultiTransformState is optim.PartitionState
    labels = {"w": "a", "b": "b", "head": "a"}
    run_both(optim.multi_transform({"a": OURS_MOMENTUM(), "b": optim.clip(0.2)}, labels),
             optax.multi_transform({"a": THEIRS_MOMENTUM(), "b": optax.clip(0.2)}, labels),
             grads_seq(2))


def add_extra(lib, tree_map):
    """Adds the extra arg ``extra`` (a tree like the updates) to the updates."""
    def update_fn(updates, state, params=None, *, extra=None, **unused):
        return tree_map(lambda u, e: u + e, updates, extra), state
    return lib.GradientTransformationExtraArgs(lambda p: lib.EmptyState(), update_fn)


def test_partition_masks_compatible_extra_args():
    labels = {"w": "x", "b": "y", "head": "x"}
    params, (g,) = make_params(), grads_seq(1)
    extra = grads_seq(1)[0]
    ours = optim.partition({"x": add_extra(optim, tree_util.tree_map), "y": optim.clip(0.1)},
                           labels, mask_compatible_extra_args=True)
    theirs = optax.partition({"x": add_extra(optax, jax.tree_util.tree_map),
                              "y": optax.clip(0.1)}, labels, mask_compatible_extra_args=True)
    u_ours, s_ours = ours.update(to_ours(g), ours.init(to_ours(params)), extra=to_ours(extra))
    u_theirs, s_theirs = theirs.update(to_theirs(g), theirs.init(to_theirs(params)),
                                       extra=to_theirs(extra))
    assert_same_tree(u_ours, u_theirs)
    assert_same_tree(s_ours, s_theirs)


def test_partition_label_without_transform_raises():
    tx = optim.partition({"a": optim.identity()}, {"w": "a", "b": "zzz", "head": "a"})
    with pytest.raises(ValueError, match="no corresponding transformation"):
        tx.init(to_ours(make_params()))


# --- inject_hyperparams --------------------------------------------------------------------------

def test_inject_hyperparams_schedule_and_numeric():
    ours = optim.inject_hyperparams(OURS_MOMENTUM)(
        decay=0.8, learning_rate=optim.linear_schedule(0.1, 0.01, 3))
    theirs = optax.inject_hyperparams(THEIRS_MOMENTUM)(
        decay=0.8, learning_rate=optax.linear_schedule(0.1, 0.01, 3))
    s_ours, _ = run_both(ours, theirs, grads_seq(4))
    assert isinstance(s_ours, optim.InjectStatefulHyperparamsState)
    assert s_ours.count.dtype == np.int32 and int(s_ours.count) == 4


def test_inject_hyperparams_edit_state():
    ours_tx = optim.inject_hyperparams(OURS_MOMENTUM)(decay=0.9, learning_rate=0.1)
    theirs_tx = optax.inject_hyperparams(THEIRS_MOMENTUM)(decay=0.9, learning_rate=0.1)
    params, (g1, g2) = make_params(), grads_seq(2)
    s_ours, s_theirs = ours_tx.init(to_ours(params)), theirs_tx.init(to_theirs(params))
    assert_same_tree(s_ours, s_theirs)
    _, s_ours = ours_tx.update(to_ours(g1), s_ours)
    _, s_theirs = theirs_tx.update(to_theirs(g1), s_theirs)
    # as optax users do: change a hyperparameter by editing the state
    s_ours.hyperparams["learning_rate"] = 0.5
    s_theirs.hyperparams["learning_rate"] = 0.5
    u_jit, s_jit = pullback.jit(ours_tx.update)(to_ours(g2), s_ours)
    u_ours, s_ours = ours_tx.update(to_ours(g2), s_ours)
    u_theirs, s_theirs = theirs_tx.update(to_theirs(g2), s_theirs)
    assert_same_tree(u_ours, u_theirs)
    assert_same_tree(s_ours, s_theirs)
    assert_same_tree(u_jit, u_ours)
    assert_same_tree(s_jit, s_ours)
    np.testing.assert_allclose(np.asarray(u_ours["b"]),
                               -0.5 * (0.9 * np.asarray(g1["b"]) + np.asarray(g2["b"])),
                               rtol=1e-6)


def test_inject_hyperparams_static_args_and_dtype():
    def factory(lib, np_mod, tree_map, scale_fn, learning_rate, steps=3, nesterov=False):
        del nesterov, steps  # an int hyperparameter (kept int32) and a bool (static)
        return momentum(lib, np_mod, tree_map, decay=0.5,
                        learning_rate=learning_rate * scale_fn(2.0))
    double = lambda x: 2 * x  # noqa: E731  a callable that is not a schedule
    ours = optim.inject_hyperparams(functools.partial(factory, optim, pnp, tree_util.tree_map),
                                    static_args="scale_fn", hyperparam_dtype=pnp.float32)(
        double, 0.1, nesterov=True)
    theirs = optax.inject_hyperparams(
        functools.partial(factory, optax, jnp, jax.tree_util.tree_map),
        static_args="scale_fn", hyperparam_dtype=jnp.float32)(double, 0.1, nesterov=True)
    s_ours, _ = run_both(ours, theirs, grads_seq(2))
    assert set(s_ours.hyperparams) == {"learning_rate", "steps"}
    assert s_ours.hyperparams["steps"].dtype == np.int32
    with pytest.raises(ValueError, match="static_args"):
        optim.inject_hyperparams(OURS_MOMENTUM, static_args=("nope",))


def test_inject_hyperparams_exported_from_schedules():
    assert optim.schedules.inject_hyperparams is optim.inject_hyperparams
    with pytest.warns(DeprecationWarning, match="inject_hyperparams"):
        tx = optim.inject_stateful_hyperparams(OURS_MOMENTUM)(decay=0.5)
    assert isinstance(tx.init(to_ours(make_params())), optim.InjectStatefulHyperparamsState)


# --- MultiSteps ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"every_k_schedule": 3},
    {"every_k_schedule": 2, "use_grad_mean": False},
    {"every_k_schedule": lambda step: pnp.where(step < 1, 1, 3)},
], ids=["k3", "sum", "schedule"])
def test_multi_steps(kwargs):
    theirs_kwargs = dict(kwargs)
    if callable(kwargs["every_k_schedule"]):
        theirs_kwargs["every_k_schedule"] = lambda step: jnp.where(step < 1, 1, 3)
    ours = optim.MultiSteps(OURS_MOMENTUM(), **kwargs)
    theirs = optax.MultiSteps(THEIRS_MOMENTUM(), **theirs_kwargs)
    params = make_params()
    s_ours, s_theirs = ours.init(to_ours(params)), theirs.init(to_theirs(params))
    assert_same_tree(s_ours, s_theirs, "init")
    assert not bool(ours.has_updated(s_ours)) and not bool(theirs.has_updated(s_theirs))
    update_theirs = jax.jit(theirs.update)
    for i, g in enumerate(grads_seq(7)):
        if i == 5:
            u_jit, s_jit = pullback.jit(ours.update)(to_ours(g), s_ours)
        u_ours, s_ours_new = ours.update(to_ours(g), s_ours)
        u_theirs, s_theirs = update_theirs(to_theirs(g), s_theirs)
        assert_same_tree(u_ours, u_theirs, f"updates@{i}")
        assert_same_tree(s_ours_new, s_theirs, f"state@{i}")
        assert bool(ours.has_updated(s_ours_new)) == bool(theirs.has_updated(s_theirs))
        if i == 5:
            assert_same_tree(u_jit, u_ours, "jit updates")
            assert_same_tree(s_jit, s_ours_new, "jit state")
        s_ours = s_ours_new
    assert s_ours.mini_step.dtype == np.int32 and s_ours.gradient_step.dtype == np.int32


def test_multi_steps_skip_not_finite():
    ours = optim.MultiSteps(OURS_MOMENTUM(), 2, should_skip_update_fn=optim.skip_not_finite)
    theirs = optax.MultiSteps(THEIRS_MOMENTUM(), 2, should_skip_update_fn=optax.skip_not_finite)
    s_ours, _ = run_both(ours.gradient_transformation(), theirs.gradient_transformation(),
                         grads_seq(5, bad=(1, 4)))
    assert int(s_ours.skip_state["num_not_finite"]) == 1 and bool(s_ours.skip_state["should_skip"])
    assert isinstance(ours.gradient_transformation(), optim.GradientTransformation)
    assert isinstance(s_ours, optim.MultiStepsState)


def test_multi_steps_skip_large_updates():
    skip = functools.partial(optim.skip_large_updates, max_squared_norm=8.0)
    skip_theirs = functools.partial(optax.skip_large_updates, max_squared_norm=8.0)
    run_both(optim.MultiSteps(OURS_MOMENTUM(), 2, should_skip_update_fn=skip)
             .gradient_transformation(),
             optax.MultiSteps(THEIRS_MOMENTUM(), 2, should_skip_update_fn=skip_theirs)
             .gradient_transformation(), grads_seq(4, scale=1.2))


def test_multi_steps_bad_skip_fn():
    ms = optim.MultiSteps(optim.identity(), 2,
                          should_skip_update_fn=lambda u, s, p: (pnp.array(1.0), ()))
    with pytest.raises(ValueError, match="boolean scalar"):
        ms.update(to_ours(make_params()), ms.init(to_ours(make_params())))


# --- apply_if_finite -----------------------------------------------------------------------------

def test_apply_if_finite():
    # steps 1, 2, 3 non-finite in a row: the first two are skipped, the third applied
    ours, theirs = run_both(optim.apply_if_finite(OURS_MOMENTUM(), 2),
                            optax.apply_if_finite(THEIRS_MOMENTUM(), 2),
                            grads_seq(6, bad=(1, 2, 3, 5)))
    assert isinstance(ours, optim.ApplyIfFiniteState)
    assert int(ours.total_notfinite) == 4 and int(ours.notfinite_count) == 1
    assert not bool(ours.last_finite)


# --- a whole training step, jitted, as users write it ----------------------------------------

def test_jitted_training_step_equals_eager_and_optax():
    """loss -> grad -> MultiSteps(apply_if_finite(chain(clip_by_global_norm, injected
    momentum with a warmup-cosine learning rate))) -> apply_updates, in one jit program."""
    x = RNG.standard_normal((6, 3)).astype(np.float32)
    y = RNG.integers(0, 2, size=6).astype(np.int32)

    def build(lib, np_mod, tree_map):
        inner = lib.inject_hyperparams(functools.partial(momentum, lib, np_mod, tree_map))(
            decay=0.9, learning_rate=lib.warmup_cosine_decay_schedule(0.0, 0.5, 2, 6))
        return lib.MultiSteps(lib.apply_if_finite(
            lib.chain(lib.clip_by_global_norm(1.0), inner), 3), every_k_schedule=2)

    def make_step(lib, np_mod, tx):
        def loss_fn(params, x, y):
            logits = x @ params["w"] + params["b"]
            return np_mod.mean(lib.softmax_cross_entropy_with_integer_labels(logits, y))

        def step(params, state, x, y):
            loss, grads = grad_lib[lib](loss_fn)(params, x, y)
            updates, state = tx.update(grads, state, params)
            return lib.apply_updates(params, updates), state, loss
        return step
    grad_lib = {optim: pullback.value_and_grad, optax: jax.value_and_grad}

    params = {"w": RNG.standard_normal((3, 2)).astype(np.float32) * 0.1,
              "b": np.zeros(2, np.float32)}
    tx_ours, tx_theirs = build(optim, pnp, tree_util.tree_map), build(optax, jnp,
                                                                      jax.tree_util.tree_map)
    step_ours, step_theirs = make_step(optim, pnp, tx_ours), make_step(optax, jnp, tx_theirs)
    jit_ours, jit_theirs = pullback.jit(step_ours), jax.jit(step_theirs)
    p_o, p_t = to_ours(params), to_theirs(params)
    s_o, s_t = tx_ours.init(p_o), tx_theirs.init(p_t)
    for i in range(5):
        eager = step_ours(p_o, s_o, pnp.asarray(x), pnp.asarray(y))
        p_o, s_o, loss_o = jit_ours(p_o, s_o, pnp.asarray(x), pnp.asarray(y))
        p_t, s_t, loss_t = jit_theirs(p_t, s_t, jnp.asarray(x), jnp.asarray(y))
        assert_same_tree((p_o, s_o, loss_o), eager, f"jit vs eager@{i}", rtol=1e-6, atol=1e-7)
        assert_same_tree((p_o, s_o, loss_o), (p_t, s_t, loss_t), f"vs optax@{i}")
