"""jvp, transpose and batching rules of the movement primitives (primitives/movement.py):
derivatives against finite differences (orders 1 and 2, forward and reverse), vmap against a
Python loop, jit against eager, and the transposes' edge cases (expanded size-1 dimensions,
strided slices, negative and interior padding, the padding value's cotangent)."""

import numpy as np
import pytest

import pullback as pb
from pullback import lax
from pullback.primitives import movement as mv
from pullback.primitives.rules import UndefPrimal, Zero
from pullback.test_util import check_grads, check_vmap
from pullback.tracer.avals import ShapedArray
from pullback.tracer.core import NoRule



def _rand(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


# (id, function, example arguments): every case is checked for derivatives and for vmap
CASES = [
    ("broadcast_scalar", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), (np.float64(1.5),)),
    ("broadcast_new_dim", lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)), (_rand(3),)),
    ("broadcast_expand_unit", lambda x: lax.broadcast_in_dim(x, (2, 4), (0, 1)), (_rand(2, 1),)),
    ("broadcast_rank4", lambda x: lax.broadcast_in_dim(x, (1, 2, 4, 3), (0, 2, 3)),
     (_rand(1, 1, 3),)),
    ("broadcast_zero_size", lambda x: lax.broadcast_in_dim(x, (2, 0, 3), (1, 2)), (_rand(0, 3),)),
    ("reshape_scalar", lambda x: lax.reshape(x, (1, 1)), (np.float64(2.0),)),
    ("reshape", lambda x: lax.reshape(x, (3, 2)), (_rand(2, 3),)),
    ("reshape_dimensions", lambda x: lax.reshape(x, (4, 6), (2, 0, 1)), (_rand(2, 3, 4),)),
    ("reshape_to_flat", lambda x: lax.reshape(x, (6,)), (_rand(2, 1, 3, 1),)),
    ("reshape_zero_size", lambda x: lax.reshape(x, (3, 0)), (_rand(0, 3),)),
    ("transpose_scalar", lambda x: lax.transpose(x, ()), (np.float64(3.0),)),
    ("transpose3", lambda x: lax.transpose(x, (2, 0, 1)), (_rand(2, 3, 4),)),
    ("transpose4", lambda x: lax.transpose(x, (3, 1, 0, 2)), (_rand(1, 2, 3, 2),)),
    ("squeeze", lambda x: lax.squeeze(x, (0, 2)), (_rand(1, 3, 1),)),
    ("squeeze_to_scalar", lambda x: lax.squeeze(x, (0,)), (_rand(1),)),
    ("squeeze_zero_size", lambda x: lax.squeeze(x, (1,)), (_rand(2, 1, 0),)),
    ("slice_step", lambda x: lax.slice(x, (1,), (5,), (2,)), (_rand(5),)),
    ("slice_2d", lambda x: lax.slice(x, (1, 0), (3, 5), (1, 3)), (_rand(4, 5),)),
    ("slice_rank4", lambda x: lax.slice(x, (0, 1, 0, 2), (2, 3, 4, 5), (1, 1, 3, 2)),
     (_rand(2, 3, 4, 5),)),
    ("slice_empty", lambda x: lax.slice(x, (1, 2), (1, 3)), (_rand(3, 3),)),
    ("slice_zero_size", lambda x: lax.slice(x, (1, 0), (3, 0)), (_rand(3, 0),)),
    ("rev", lambda x: lax.rev(x, (0, 1)), (_rand(3, 4),)),
    ("rev_middle", lambda x: lax.rev(x, (1,)), (_rand(2, 3, 4),)),
    ("rev_scalar", lambda x: lax.rev(x, ()), (np.float64(1.0),)),
    ("pad_negative_interior", lambda x, v: lax.pad(x, v, ((1, -1, 1), (-1, 2, 0))),
     (_rand(2, 3), np.float64(0.5))),
    ("pad_scalar", lambda x, v: lax.pad(x, v, ()), (np.float64(1.0), np.float64(0.5))),
    ("pad_crop_interior", lambda x, v: lax.pad(x, v, ((-2, -1, 1),)), (_rand(3), np.float64(2.))),
    ("pad_zero_size", lambda x, v: lax.pad(x, v, ((1, 1, 2), (0, 0, 1))),
     (_rand(0, 2), np.float64(-1.0))),
    ("pad_rank4", lambda x, v: lax.pad(x, v, ((0, 1, 0), (1, 0, 1), (0, 0, 0), (-1, 1, 2))),
     (_rand(1, 2, 2, 2), np.float64(0.25))),
    ("concatenate", lambda x, y, z: lax.concatenate([x, y, z], 1),
     (_rand(2, 3), _rand(2, 1), _rand(2, 0))),
    ("concatenate_repeated", lambda x, y: lax.concatenate([x, y, x], 0), (_rand(1), _rand(3))),
    ("concatenate_rank3", lambda x, y: lax.concatenate([x, y], 2),
     (_rand(2, 1, 2), _rand(2, 1, 3))),
    ("split", lambda x: lax.split(x, (1, 0, 2), 1), (_rand(2, 3),)),
    ("split_rank3", lambda x: lax.split(x, (2, 1, 1), 0), (_rand(4, 2, 3),)),
    ("split_weighted", lambda x: [p * (i + 1.5) for i, p in enumerate(lax.split(x, (1, 3), 0))],
     (_rand(4),)),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,f,args", CASES, ids=IDS)
def test_derivatives_match_finite_differences(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,f,args", CASES, ids=IDS)
def test_vmap_matches_a_loop(name, f, args):
    check_vmap(f, args)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float32])
@pytest.mark.parametrize("name", ["broadcast_expand_unit", "reshape_dimensions", "transpose3",
                                  "squeeze", "slice_2d", "rev_middle", "pad_negative_interior",
                                  "concatenate", "split"])
def test_vmap_other_dtypes(name, dtype):
    _, f, args = CASES[IDS.index(name)]
    check_vmap(f, [np.asarray(a).astype(dtype) for a in args])


def test_float32_derivatives():
    f = lambda x, v: lax.slice(lax.pad(x, v, ((1, 2, 1), (0, -1, 0))), (0, 0), (6, 2), (2, 1))
    check_grads(f, (_rand(3, 3, dtype=np.float32), np.float32(0.5)), order=2)


def _vjp_fn(f):
    return lambda ct, *args: pb.vjp(f, *args)[1](ct)


@pytest.mark.parametrize("name", ["broadcast_expand_unit", "reshape_dimensions", "slice_rank4",
                                  "pad_negative_interior", "concatenate_repeated"])
def test_jit_of_vjp_matches_eager(name):
    _, f, args = CASES[IDS.index(name)]
    ct = _rand(*np.shape(f(*args)), seed=7)
    eager = _vjp_fn(f)(ct, *args)
    jitted = pb.jit(_vjp_fn(f))(ct, *args)
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-12, atol=1e-12)


def test_jit_of_grad_matches_eager():
    def f(x, v):
        y = lax.pad(lax.broadcast_in_dim(x, (2, 3), (1,)), v, ((1, 0, 1), (0, 1, 0)))
        return lax.reduce_sum(lax.mul(y, y), (0, 1))
    args = (_rand(3), np.float64(0.3))
    eager = pb.grad(f, argnums=(0, 1))(*args)
    jitted = pb.jit(pb.grad(f, argnums=(0, 1)))(*args)
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-12)


# ---- transposes: exact values, computed independently with NumPy ----

def _vjp(f, ct, *args):
    return [np.asarray(c) for c in pb.vjp(f, *args)[1](ct)]


def test_broadcast_transpose_sums_new_and_expanded_dims():
    x = _rand(2, 1)
    ct = _rand(3, 2, 4, seed=1)
    (g,) = _vjp(lambda x: lax.broadcast_in_dim(x, (3, 2, 4), (1, 2)), ct, x)
    np.testing.assert_allclose(g, ct.sum(axis=(0, 2))[:, None])


def test_strided_slice_transpose_scatters_into_zeros():
    x = _rand(7, 4)
    ct = _rand(3, 2, seed=2)
    (g,) = _vjp(lambda x: lax.slice(x, (1, 1), (7, 4), (2, 2)), ct, x)
    want = np.zeros((7, 4))
    want[1:7:2, 1:4:2] = ct
    np.testing.assert_array_equal(g, want)


def test_pad_transpose_crops_back_and_sums_the_padding():
    x, v = _rand(3, 2), np.float64(0.5)
    config = ((2, -1, 1), (-1, 1, 0))
    out_shape = np.shape(lax.pad(x, v, config))
    ct = _rand(*out_shape, seed=3)
    gx, gv = _vjp(lambda x, v: lax.pad(x, v, config), ct, x, v)
    # operand element (i, j) lands at (lo + i * (interior + 1), ...) unless cropped
    want_x, landed = np.zeros(x.shape), np.zeros(out_shape, bool)
    for i, j in np.ndindex(*x.shape):
        r, c = (lo + k * (inner + 1) for k, (lo, _, inner) in zip((i, j), config))
        if 0 <= r < out_shape[0] and 0 <= c < out_shape[1]:
            want_x[i, j] = ct[r, c]
            landed[r, c] = True
    assert 0 < landed.sum() < x.size  # some elements are cropped away
    np.testing.assert_allclose(gx, want_x)
    np.testing.assert_allclose(gv, ct[~landed].sum())


def test_concatenate_transpose_slices_each_operand():
    x, y = _rand(2, 1), _rand(2, 3)
    ct = _rand(2, 5, seed=4)
    gx, gy = _vjp(lambda x, y: lax.concatenate([x, y, x], 1), ct, x, y)
    np.testing.assert_allclose(gx, ct[:, :1] + ct[:, 4:])
    np.testing.assert_allclose(gy, ct[:, 1:4])


def test_split_transpose_is_one_concatenate_keeping_negative_zeros():
    # JAX's rule: the cotangents side by side (a sum of zero-padded pieces would turn -0.0
    # into +0.0), symbolic zeros instantiated
    x = _rand(2, 5)
    f = lambda x: lax.split(x, (2, 3), 1)  # noqa: E731
    ct = [np.full((2, 2), -0.0), _rand(2, 3, seed=3)]
    (g,) = _vjp(f, ct, x)
    np.testing.assert_array_equal(g, np.concatenate(ct, 1))
    assert np.signbit(g[:, :2]).all()
    jaxpr = pb.make_jaxpr(lambda x: pb.grad(lambda x: lax.split(x, (2, 3), 1)[1].sum())(x))(x)
    assert "concatenate" in str(jaxpr) and "pad" not in str(jaxpr)
    out = mv.split_p.transpose([Zero(ShapedArray((2, 2), x.dtype)),
                                Zero(ShapedArray((2, 3), x.dtype))],
                               UndefPrimal(ShapedArray((2, 5), x.dtype)), sizes=(2, 3), axis=1)
    assert type(out[0]) is Zero and out[0].aval.shape == (2, 5)


def test_reshape_with_dimensions_transpose():
    x = _rand(2, 3, 4)
    ct = _rand(4, 6, seed=5)
    (g,) = _vjp(lambda x: lax.reshape(x, (4, 6), (2, 0, 1)), ct, x)
    np.testing.assert_array_equal(g, ct.reshape(4, 2, 3).transpose(1, 2, 0))


def test_a_zero_cotangent_stays_symbolic():
    aval = ShapedArray((2, 3), np.dtype(np.float64))
    out = mv.slice_p.transpose(Zero(ShapedArray((1, 3), aval.dtype)), UndefPrimal(aval),
                               start_indices=(0, 0), limit_indices=(1, 3), strides=None)
    assert type(out[0]) is Zero and out[0].aval.shape == (2, 3)


def test_rules_on_the_reference_backend_match_cpu():
    _, f, args = CASES[IDS.index("pad_negative_interior")]
    ct = _rand(*np.shape(f(*args)), seed=6)
    cpu = _vjp(f, ct, *args)
    pb.config.update("backend", "reference")
    try:
        ref = _vjp(f, ct, *args)
    finally:
        pb.config.update("backend", "cpu")
    for c, r in zip(cpu, ref):
        np.testing.assert_allclose(r, c, rtol=1e-12)


# ---- batching: dimension numbers follow the batch dimension ----

@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_vmap_remaps_axis_params(in_axis):
    x = _rand(2, 3, 4)
    xb = np.stack([x, 2 * x, -x], axis=in_axis)
    fns = [lambda x: lax.transpose(x, (2, 0, 1)), lambda x: lax.rev(x, (0, 2)),
           lambda x: lax.slice(x, (0, 1, 1), (2, 3, 4), (1, 2, 2)),
           lambda x: lax.reshape(x, (4, 6), (2, 0, 1)),
           lambda x: lax.split(x, (1, 3), 2)[1],
           lambda x: lax.broadcast_in_dim(x, (2, 5, 3, 4), (0, 2, 3)),
           lambda x: lax.squeeze(lax.slice(x, (0, 0, 0), (2, 1, 4)), (1,))]
    for f in fns:
        got = np.asarray(pb.vmap(f, in_axes=in_axis)(xb))
        want = np.stack([np.asarray(f(np.take(xb, i, axis=in_axis))) for i in range(3)])
        np.testing.assert_array_equal(got, want)


def test_vmap_of_grad_and_grad_of_vmap():
    def f(x, v):
        return lax.pad(lax.rev(x, (0,)), v, ((1, -1, 1),))
    xs, vs = _rand(4, 3), _rand(4, seed=8)
    cts = _rand(4, 5, seed=9)
    per_lane = [_vjp(f, cts[i], xs[i], vs[i]) for i in range(4)]
    got = pb.vmap(lambda ct, x, v: pb.vjp(f, x, v)[1](ct))(cts, xs, vs)
    for k in range(2):
        np.testing.assert_allclose(np.asarray(got[k]), np.stack([p[k] for p in per_lane]))
    batched = _vjp(lambda x, v: pb.vmap(f)(x, v), cts, xs, vs)
    for k in range(2):
        np.testing.assert_allclose(batched[k], np.stack([p[k] for p in per_lane]))


# ---- every rule slot is filled, or says why it cannot be ----

FAMILY = [mv.broadcast_in_dim_p, mv.reshape_p, mv.transpose_p, mv.squeeze_p, mv.slice_p,
          mv.rev_p, mv.pad_p, mv.concatenate_p, mv.split_p]


@pytest.mark.parametrize("prim", FAMILY, ids=lambda p: p.name)
def test_linear_primitives_have_every_rule(prim):
    for slot in ("jvp", "transpose", "batch"):
        assert callable(getattr(prim, slot)) and not isinstance(getattr(prim, slot), NoRule)


def test_iota_states_why_it_has_no_rules():
    for slot in ("jvp", "transpose", "batch"):
        rule = getattr(mv.iota_p, slot)
        assert isinstance(rule, NoRule) and rule.kind == "not_applicable"
        assert "no operands" in rule.reason
