"""pullback.optim schedules against optax 0.2.8: values and dtypes at every step around each
boundary (step 0, the warmup/transition boundaries +-1, the end, past the end), eagerly with
Python ints and inside jit with a traced int32 count, and invalid arguments."""
from __future__ import annotations

import numpy as np
import pytest

import pullback
import pullback.numpy as pnp
from pullback import optim

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")

# optax runs in JAX's default 32-bit mode: so do we
pytestmark = pytest.mark.x32

# (name, args, kwargs, the steps to probe: every boundary and its neighbours)
CASES = [
    ("constant_schedule", (0.5,), {}, [0, 7]),
    ("polynomial_schedule", (1.0, 0.01, 2, 10), {"transition_begin": 3},
     [0, 2, 3, 4, 12, 13, 14, 30]),
    ("polynomial_schedule", (1.0, 0.01, 0.5, 4), {}, [0, 1, 3, 4, 5]),
    ("linear_schedule", (1.0, 0.01, 10), {"transition_begin": 2}, [0, 1, 2, 3, 11, 12, 13, 50]),
    ("linear_schedule", (0.1, 0.9, 5), {}, [0, 1, 4, 5, 6]),
    ("exponential_decay", (1.0, 5, 0.5), {}, [0, 1, 4, 5, 6, 40]),
    ("exponential_decay", (1.0, 5, 0.5), {"transition_begin": 3, "staircase": True,
                                          "end_value": 0.2}, [0, 2, 3, 4, 7, 8, 9, 13, 30]),
    ("exponential_decay", (0.1, 3, 2.0), {"end_value": 0.5}, [0, 1, 3, 6, 7, 20]),
    ("cosine_decay_schedule", (1.0, 10), {}, [0, 1, 5, 9, 10, 11, 40]),
    ("cosine_decay_schedule", (2.0, 10), {"alpha": 0.1, "exponent": 2.0}, [0, 1, 9, 10, 11]),
    ("warmup_cosine_decay_schedule", (0.0, 1.0, 3, 10), {"end_value": 0.1},
     [0, 1, 2, 3, 4, 9, 10, 11, 30]),
    ("warmup_cosine_decay_schedule", (0.1, 1.0, 2, 8), {"exponent": 3.0}, [0, 1, 2, 3, 7, 8, 9]),
    ("piecewise_constant_schedule", (1.0, {3: 0.5, 6: 0.1}), {}, [0, 2, 3, 4, 5, 6, 7, 20]),
    ("piecewise_constant_schedule", (1.0,), {}, [0, 5]),
    ("join_schedules", None, None, [0, 2, 3, 4, 6, 7, 8]),
    ("linear_onecycle_schedule", (10, 1.0), {}, [0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 30]),
    ("linear_onecycle_schedule", (20, 0.5), {"pct_start": 0.25, "pct_final": 0.5,
                                            "div_factor": 10.0, "final_div_factor": 100.0},
     [0, 4, 5, 6, 9, 10, 11, 19, 20, 21]),
    ("cosine_onecycle_schedule", (10, 1.0), {}, [0, 1, 2, 3, 4, 9, 10, 11]),
    ("piecewise_interpolate_schedule", ("cosine", 1.0, {3: 0.5, 6: 0.1}), {},
     [0, 1, 2, 3, 4, 5, 6, 7]),
    ("piecewise_interpolate_schedule", ("linear", 2.0, {4: 0.1}), {}, [0, 2, 3, 4, 5]),
    ("warmup_constant_schedule", (0.0, 1.0, 4), {}, [0, 3, 4, 5]),
    ("warmup_exponential_decay_schedule", (0.0, 1.0, 3, 4, 0.5), {"transition_begin": 1},
     [0, 2, 3, 4, 5, 8, 9, 30]),
    ("sgdr_schedule", ([dict(init_value=0., peak_value=1., warmup_steps=2, decay_steps=5),
                        dict(init_value=0., peak_value=.5, warmup_steps=1, decay_steps=4)],),
     {}, [0, 1, 2, 4, 5, 6, 8, 9, 10, 20]),
]


def _build(mod, name, args, kwargs):
    if name == "join_schedules":
        return mod.join_schedules(
            [mod.linear_schedule(0.0, 1.0, 3), mod.constant_schedule(5.0),
             mod.cosine_decay_schedule(2.0, 4)], [3, 7])
    return getattr(mod, name)(*args, **kwargs)


def _same(ours, theirs, rtol=1e-5):
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.dtype == t.dtype, (o.dtype, t.dtype)
    np.testing.assert_allclose(o, t, rtol=rtol, atol=1e-7)


@pytest.mark.parametrize("name,args,kwargs,steps", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_schedule_matches_optax(name, args, kwargs, steps):
    ours = _build(optim, name, args, kwargs)
    theirs = _build(optax, name, args, kwargs)
    ours_jit = pullback.jit(ours)
    for step in steps:
        # eager with a Python int: same value and same (Python or array) dtype
        _same(ours(step), theirs(step))
        assert isinstance(ours(step), float) == isinstance(theirs(step), float), step
        # a traced int32 count, as inside an optimizer's update
        _same(ours_jit(pnp.asarray(step, pnp.int32)),
              jax.jit(theirs)(jax.numpy.asarray(step, jax.numpy.int32)))
        # an eager int32 array count
        _same(ours(pnp.asarray(step, pnp.int32)), theirs(jax.numpy.asarray(step, "int32")))


def test_schedules_exported_as_submodule():
    assert optim.schedules.warmup_cosine_decay_schedule is optim.warmup_cosine_decay_schedule
    assert optim.schedules.inject_hyperparams is optim.inject_hyperparams


def test_degenerate_arguments_as_optax():
    # non-positive transition_steps: the constant init_value
    for mod in (optim, optax):
        assert mod.polynomial_schedule(1.0, 0.0, 2, 0)(5) == 1.0
        assert mod.linear_schedule(2.0, 0.0, -3)(9) == 2.0
        assert mod.exponential_decay(3.0, 0, 0.5)(9) == 3.0
        assert mod.exponential_decay(3.0, 5, 0.0)(9) == 3.0
    # a negative transition_begin counts as 0
    for step in (0, 1, 5, 6):
        _same(optim.linear_schedule(1.0, 0.0, 5, transition_begin=-2)(step),
              optax.linear_schedule(1.0, 0.0, 5, transition_begin=-2)(step))
        _same(optim.exponential_decay(1.0, 2, 0.5, transition_begin=-2)(step),
              optax.exponential_decay(1.0, 2, 0.5, transition_begin=-2)(step))


@pytest.mark.parametrize("make", [
    lambda m: m.cosine_decay_schedule(1.0, 0),
    lambda m: m.warmup_cosine_decay_schedule(0.0, 1.0, 5, 5),
    lambda m: m.piecewise_constant_schedule(1.0, {3: -0.5}),
    lambda m: m.piecewise_interpolate_schedule("quadratic", 1.0, {3: 0.5}),
    lambda m: m.piecewise_interpolate_schedule("linear", 1.0, {3: -0.5}),
    lambda m: m.linear_onecycle_schedule(0, 1.0),
    lambda m: m.cosine_onecycle_schedule(-1, 1.0),
])
def test_invalid_arguments_raise_like_optax(make):
    with pytest.raises(ValueError) as theirs:
        make(optax)
    with pytest.raises(ValueError) as ours:
        make(optim)
    assert type(ours.value) is type(theirs.value)
