"""pullback.optim's elementary transformations and tree_utils against optax's own results on
the same inputs, step by step (updates and every state leaf: structure, NamedTuple names,
dtypes, values). optax and JAX are an optional oracle: the module skips without them."""
import sys
from pathlib import Path

import numpy as np
import pytest

import pullback.numpy as pnp
import pullback.optim as po
from pullback.optim import tree_utils as ptu

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from optim_oracle import assert_tree_close, compare, grads, params  # noqa: E402

pytestmark = pytest.mark.x32   # JAX's default mode, the one optax runs in here


def sched(count):
    """A schedule written once for both libraries (count is an int32 scalar array)."""
    return 0.1 / (1 + count)


FOUNDATION = {
    "scale": lambda o: o.scale(0.3),
    "lr_float": lambda o: o.scale_by_learning_rate(0.1),
    "lr_noflip": lambda o: o.scale_by_learning_rate(0.1, flip_sign=False),
    "lr_sched": lambda o: o.scale_by_learning_rate(sched),
    "lr_none": lambda o: o.scale_by_learning_rate(None),
    "schedule": lambda o: o.scale_by_schedule(sched),
    "trace": lambda o: o.trace(0.9),
    "trace_nesterov": lambda o: o.trace(0.8, nesterov=True),
    "trace_bf16": lambda o: o.trace(0.9, accumulator_dtype=jjnp.bfloat16
                                    if o is optax else pnp.bfloat16),
    "ema": lambda o: o.ema(0.7),
    "ema_nodebias": lambda o: o.ema(0.7, debias=False),
    "decay": lambda o: o.add_decayed_weights(0.01),
    "decay_zero": lambda o: o.add_decayed_weights(),
    "decay_sched": lambda o: o.add_decayed_weights(sched),
    "decay_mask": lambda o: o.add_decayed_weights(
        0.1, mask={"w": True, "layers": [False, True], "b": False}),
    "decay_mask_prefix": lambda o: o.add_decayed_weights(
        0.1, mask={"w": True, "layers": False, "b": True}),
    "decay_mask_fn": lambda o: o.add_decayed_weights(
        0.1, mask=lambda p: {"w": True, "layers": [True, False], "b": False}),
    "masked_trace": lambda o: o.masked(o.trace(0.9), {"w": False, "layers": True, "b": True}),
    "masked_fn_ema": lambda o: o.masked(
        o.ema(0.5), lambda p: {"w": True, "layers": [False, True], "b": False}),
    "masked_nested": lambda o: o.masked(
        o.chain(o.trace(0.9),
                o.masked(o.scale(2.0), {"w": True, "layers": [False, True], "b": True})),
        {"w": True, "layers": [True, True], "b": False}),
    "masked_all_false": lambda o: o.masked(o.trace(0.9), {"w": False, "layers": False,
                                                          "b": False}),
    "chain": lambda o: o.chain(o.trace(0.9), o.add_decayed_weights(1e-2),
                               o.scale_by_learning_rate(sched)),
}


def _bf16(o):
    return jjnp.bfloat16 if o is optax else pnp.bfloat16


SCALE_BY = {
    "adam": lambda o: o.scale_by_adam(),
    "adam_args": lambda o: o.scale_by_adam(b1=0.5, b2=0.9, eps=1e-3, eps_root=1e-4),
    "adam_nesterov": lambda o: o.scale_by_adam(nesterov=True),
    "adam_mu_bf16": lambda o: o.scale_by_adam(mu_dtype=_bf16(o)),
    "adamax": lambda o: o.scale_by_adamax(),
    "adamax_args": lambda o: o.scale_by_adamax(b1=0.5, b2=0.8, eps=1e-2),
    "amsgrad": lambda o: o.scale_by_amsgrad(),
    "amsgrad_nobias": lambda o: o.scale_by_amsgrad(b2=0.5, bias_correction_mu=False,
                                                   bias_correction_nu=False),
    "rss": lambda o: o.scale_by_rss(),
    "rss_zero": lambda o: o.scale_by_rss(initial_accumulator_value=0.0, eps=1e-3),
    "rms": lambda o: o.scale_by_rms(),
    "rms_all": lambda o: o.scale_by_rms(decay=0.8, eps=1e-3, initial_scale=0.5,
                                        eps_in_sqrt=False, bias_correction=True),
    "rms_bias": lambda o: o.scale_by_rms(bias_correction=True),
    "stddev": lambda o: o.scale_by_stddev(),
    "stddev_all": lambda o: o.scale_by_stddev(decay=0.8, eps=1e-3, initial_scale=1.0,
                                              eps_in_sqrt=False, bias_correction=True),
    "lion": lambda o: o.scale_by_lion(),
    "lion_smooth": lambda o: o.scale_by_lion(b1=0.5, mode="smooth", smooth_beta=2.0),
    "lion_refined": lambda o: o.scale_by_lion(mode="refined"),
    "lion_mu_bf16": lambda o: o.scale_by_lion(mu_dtype=_bf16(o)),
}
CASES = {**FOUNDATION, **SCALE_BY}


@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_matches_optax(name):
    compare(CASES[name], po, optax, rtol=1e-2 if "bf16" in name else 2e-6)


EDGE = {
    "adam": lambda o: o.scale_by_adam(),
    "rss_eps0": lambda o: o.scale_by_rss(initial_accumulator_value=0.0, eps=0.0),
    "amsgrad": lambda o: o.scale_by_amsgrad(),
    "rms": lambda o: o.scale_by_rms(eps=0.0),
}


@pytest.mark.parametrize("name", sorted(EDGE))
def test_bf16_params_f32_grads_with_zeros(name):
    """Low-precision params with float32 gradients (state dtypes kept as optax keeps them)
    and gradient entries that are exactly zero (no 0 * inf)."""
    p32 = np.array([0.5, -1.0, 2.0, 0.0], np.float32)
    gs = [np.array([0.0, 0.5, -1.0, 0.0], np.float32) * (i + 1) for i in range(3)]

    def run(o, m):
        tx = EDGE[name](o)
        state = tx.init({"a": m.asarray(p32).astype(m.bfloat16)})
        out = []
        for g in gs:
            u, state = tx.update({"a": m.asarray(g)}, state, None)
            out.append((u, state))
        return out
    for (um, sm), (ut, st) in zip(run(po, pnp), run(optax, jjnp)):
        assert_tree_close(um, ut, 1e-2, 1e-3, f"{name} updates")
        assert_tree_close(sm, st, 1e-2, 1e-3, f"{name} state")
        if name != "rms":  # rsqrt(0) with eps=0 is inf there in optax too (0 * inf = nan)
            assert np.all(np.isfinite(np.asarray(um["a"], np.float32)))


def test_lion_rejects_unknown_mode():
    with pytest.raises(ValueError, match="scale_by_lion.*mode"):
        po.scale_by_lion(mode="soft")


def test_masked_state_is_masked_node_where_false():
    tx = po.masked(po.trace(0.9), {"w": False, "layers": True, "b": True})
    state = tx.init(params(pnp))
    assert isinstance(state, po.MaskedState)
    assert isinstance(state.inner_state.trace["w"], po.MaskedNode)
    assert state.inner_state.trace["layers"][1].shape == (5,)


def test_masked_extra_args_masked_when_compatible():
    seen = {}

    def inner():
        def update(u, s, p=None, **extra):
            seen.update(extra)
            return u, s
        return po.GradientTransformationExtraArgs(lambda p: po.EmptyState(), update)

    mask = {"w": True, "layers": [False, True], "b": False}
    g = grads(pnp, 0)
    for compat in (False, True):
        seen.clear()
        tx = po.masked(inner(), mask, mask_compatible_extra_args=compat)
        tx.update(g, tx.init(params(pnp)), None, other=g, flag=3)
        assert seen["flag"] == 3
        assert isinstance(seen["other"]["b"], po.MaskedNode) == compat


def test_masked_names_a_mismatched_mask():
    tx = po.masked(po.trace(0.9), {"w": True, "other": False})
    with pytest.raises(ValueError, match="masked: argument mask"):
        tx.init(params(pnp))


def test_add_decayed_weights_needs_params():
    tx = po.add_decayed_weights(0.1)
    with pytest.raises(ValueError, match="params"):
        tx.update(grads(pnp, 0), tx.init(params(pnp)), None)


def test_scale_by_schedule_rejects_non_callable():
    with pytest.raises(TypeError, match="scale_by_schedule.*step_size_fn"):
        po.scale_by_schedule(0.1)


def test_safe_increment_saturates():
    for dt, top in ((pnp.int32, 2**31 - 1), (pnp.int8, 127)):
        x = pnp.asarray(top, dt)
        y = po.safe_increment(x)
        assert y.dtype == dt and int(y) == top
        assert int(po.safe_int32_increment(pnp.asarray(5, dt))) == 6
    f = po.safe_increment(pnp.asarray(1.5, pnp.float32))
    assert float(f) == 2.5 and f.dtype == pnp.float32
    with pytest.raises(ValueError, match="safe_increment"):
        po.safe_increment(pnp.asarray(True))


def test_safe_norm_and_rms_match_optax():
    x = np.arange(-3, 9, dtype=np.float32).reshape(3, 4)
    for mn in (0.0, 100.0):
        for axis in (None, 1, (0, 1)):
            np.testing.assert_allclose(po.safe_norm(pnp.asarray(x), mn, axis=axis),
                                       optax.safe_norm(jjnp.asarray(x), mn, axis=axis),
                                       rtol=1e-6)
        np.testing.assert_allclose(po.safe_root_mean_squares(pnp.asarray(x), mn),
                                   optax.safe_root_mean_squares(jjnp.asarray(x), mn),
                                   rtol=1e-6)
    import pullback as pb
    gz = pb.grad(lambda v: po.safe_norm(v, 0.0))(pnp.zeros(3))
    assert np.all(np.isfinite(np.asarray(gz)))


# ---------------------------------------------------------------------------
# tree_utils against optax.tree_utils.
# ---------------------------------------------------------------------------

def _both(fn_name, *args, **kwargs):
    """fn_name applied in both libraries; trees built by `args` callables of the module."""
    mine = getattr(ptu, fn_name)(*[a(pnp) if callable(a) else a for a in args], **kwargs)
    theirs = getattr(optax.tree_utils, fn_name)(
        *[a(jjnp) if callable(a) else a for a in args], **kwargs)
    return mine, theirs


def _t(np_mod, i=0):
    g = grads(np_mod, i)
    return {"w": g["w"], "l": [g["layers"][0], g["layers"][1]], "b": g["b"]}


def _t1(m):
    return _t(m, 1)


def _t2(m):
    return _t(m, 2)


def _ct(m):
    return {"z": m.asarray(np.array([1 + 2j, -3 + 0.5j], np.complex64)),
            "r": m.asarray(np.array([2.0, -1.0], np.float32))}


TREE_CASES = [
    ("tree_add", (_t, _t1), {}), ("tree_add", (_t, _t1, _t2), {}),
    ("tree_sub", (_t, _t1), {}), ("tree_mul", (_t, _t1), {}), ("tree_div", (_t, _t1), {}),
    ("tree_scale", (0.3, _t), {}), ("tree_add_scale", (_t, 0.3, _t1), {}),
    ("tree_vdot", (_t, _t1), {}), ("tree_vdot", (_ct, _ct), {}), ("tree_sum", (_t,), {}),
    ("tree_max", (_t,), {}), ("tree_min", (_t,), {}),
    ("tree_conj", (_ct,), {}), ("tree_real", (_ct,), {}),
    ("tree_norm", (_t,), {}), ("tree_norm", (_t,), {"squared": True}),
    ("tree_norm", (_t,), {"ord": 1}), ("tree_norm", (_t,), {"ord": "inf"}),
    ("tree_norm", (_t,), {"ord": np.inf, "squared": True}), ("tree_norm", (_ct,), {}),
    ("tree_norm", (_t,), {"ord": 2}), ("tree_norm", (_ct,), {"ord": 1}),
    ("tree_batch_shape", (_t, (2,)), {}),
    ("tree_zeros_like", (_t,), {}), ("tree_ones_like", (_t,), {}),
    ("tree_full_like", (_t, 0.25), {}), ("tree_clip", (_t, -0.5, 0.5), {}),
    ("tree_clip", (_t, None, 0.1), {}),
    ("tree_update_moment", (_t, _t1, 0.9, 1), {}),
    ("tree_update_moment", (_t, _t1, 0.9, 2), {}),
    ("tree_update_infinity_moment", (_t, _t1, 0.9, 1e-3), {}),
    ("tree_update_moment_per_elem_norm", (_t, _t1, 0.9, 2), {}),
    ("tree_update_moment_per_elem_norm", (_ct, _ct, 0.9, 2), {}),
    ("tree_update_moment_per_elem_norm", (_ct, _ct, 0.9, 3), {}),
    ("tree_where", (True, _t, _t1), {}), ("tree_where", (False, _t, _t1), {}),
]


@pytest.mark.parametrize("case", range(len(TREE_CASES)))
def test_tree_math_matches_optax(case):
    name, args, kwargs = TREE_CASES[case]
    mine, theirs = _both(name, *args, **kwargs)
    assert_tree_close(mine, theirs, rtol=1e-6, atol=1e-7, what=name)


def test_tree_misc_matches_optax():
    mine, theirs = _both("tree_bias_correction", _t, 0.9, np.int32(3))
    assert_tree_close(mine, theirs, 1e-6, 1e-7, "tree_bias_correction")
    assert ptu.tree_size(_t(pnp)) == optax.tree_utils.tree_size(_t(jjnp)) == 19
    assert ptu.tree_sum({}) == 0
    assert float(ptu.tree_max({"e": pnp.zeros((0,))})) == -np.inf
    assert bool(ptu.tree_allclose(_t(pnp), _t(pnp)))
    assert not bool(ptu.tree_allclose(_t(pnp), _t1(pnp)))
    c = ptu.tree_cast(_t(pnp), pnp.bfloat16)
    assert all(x.dtype == pnp.bfloat16 for x in [c["w"], c["b"], *c["l"]])
    t = _t(pnp)
    assert ptu.tree_cast(t, None) is t
    cl = ptu.tree_cast_like({"a": pnp.ones(2), "b": pnp.ones(2)},
                            {"a": pnp.zeros(2, pnp.float16), "b": 3})
    assert cl["a"].dtype == pnp.float16 and cl["b"].dtype == pnp.float32
    mixed = {"a": pnp.ones(2, pnp.float16), "b": pnp.ones(2, pnp.float32)}
    assert ptu.tree_dtype(mixed, "lowest") == np.float16
    assert ptu.tree_dtype(mixed, "highest") == np.float32
    assert ptu.tree_dtype(mixed, "promote") == np.float32
    assert ptu.tree_dtype({"a": pnp.ones(1, pnp.int32)}) == np.int32
    with pytest.raises(ValueError, match="float16"):
        ptu.tree_dtype(mixed)
    with pytest.raises(ValueError, match="tree_dtype"):
        ptu.tree_dtype(mixed, "bogus")
    with pytest.raises(ValueError, match="tree_norm"):
        ptu.tree_norm(_t(pnp), ord=3)


def test_tree_namespace_matches_optax_tree():
    """pullback.optim.tree holds optax.tree's short names, each the tree_utils function."""
    import optax.tree as otree
    names = [n for n in dir(otree) if not n.startswith("_") and callable(getattr(otree, n))
             and n not in ("random_like", "split_key_like", "unwrap_random_key_data")]
    assert names
    for n in names:
        assert getattr(po.tree, n) is getattr(ptu, "tree_" + n), n


def _opt_state(o, np_mod):
    tx = o.chain(o.add_decayed_weights(0.1, mask={"w": True, "layers": False, "b": True}),
                 o.scale_by_learning_rate(sched), o.trace(0.9), o.ema(0.5))
    return tx, tx.init(params(np_mod))


def _norm_path(path):
    return tuple(str(k) for k in path)


def test_state_utils_match_optax():
    txm, sm = _opt_state(po, pnp)
    txt, st = _opt_state(optax, jjnp)
    for key in ("count", "trace", "inner_state", "EmaState", "ema", "MaskedState"):
        fm = ptu.tree_get_all_with_path(sm, key)
        ft = optax.tree_utils.tree_get_all_with_path(st, key)
        assert [_norm_path(p) for p, _ in fm] == [_norm_path(p) for p, _ in ft], key
        assert_tree_close([v for _, v in fm], [v for _, v in ft], what=key)
    # filtering by the NamedTupleKey's tuple name
    only_ema = lambda path, v: getattr(path[-1], "tuple_name", "") == "EmaState"  # noqa: E731
    assert int(ptu.tree_get(sm, "count", filtering=only_ema)) == 0
    assert ptu.tree_get(sm, "missing", default="d") == "d"
    with pytest.raises(KeyError, match="multiple"):
        ptu.tree_get(sm, "count")
    new_m = ptu.tree_set(sm, only_ema, count=pnp.asarray(7, pnp.int32))
    new_t = optax.tree_utils.tree_set(st, only_ema, count=jjnp.asarray(7, jjnp.int32))
    assert_tree_close(new_m, new_t, what="tree_set")
    assert int(new_m[3].count) == 7 and int(new_m[1].count) == 0
    with pytest.raises(KeyError, match="nope"):
        ptu.tree_set(sm, nope=1)
    assert str(ptu.NamedTupleKey("EmaState", "count")) == "EmaState.count"


def test_tree_set_by_class_name_with_filtering():
    def make(o, m):
        tx = o.chain(o.trace(0.9), o.trace(0.5))
        return tx.init(params(m))
    second = lambda path, v: str(path[0]) == "[1]"  # noqa: E731
    new_m = ptu.tree_set(make(po, pnp), second, TraceState=po.TraceState(trace=1.0))
    new_t = optax.tree_utils.tree_set(make(optax, jjnp), second,
                                      TraceState=optax.TraceState(trace=1.0))
    assert new_m[1].trace == 1.0 and isinstance(new_m[0].trace, dict)
    assert_tree_close(new_m, new_t, what="tree_set by class name")


def test_tree_map_params_matches_optax():
    txm, sm = _opt_state(po, pnp)
    txt, st = _opt_state(optax, jjnp)
    mm = ptu.tree_map_params(txm, lambda x: x + 1, sm, transform_non_params=lambda x: x + 5)
    mt = optax.tree_utils.tree_map_params(txt, lambda x: x + 1, st,
                                          transform_non_params=lambda x: x + 5)
    assert_tree_close(mm, mt, what="tree_map_params")
    assert float(mm[2].trace["w"][0, 0]) == 1.0 and int(mm[1].count) == 5
    mi = ptu.tree_map_params(txm.init, lambda x: x * 2, sm)
    assert_tree_close(mi, optax.tree_utils.tree_map_params(txt.init, lambda x: x * 2, st))
