"""jvp, transpose and batching rules of unfold and fold (primitives/windows.py): each is the
other's transpose; derivatives against finite differences (orders 1 and 2, both modes), vmap
against a loop with the batch dimension among the leading or the spatial dimensions, jit
against eager."""
import numpy as np
import pytest

import pullback as pb
from pullback import lax
from pullback.primitives import windows as wn
from pullback.test_util import check_grads, check_vmap
from pullback.tracer.core import NoRule


def _rand(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


# (id, geometry, spatial size, leading dims)
GEOMETRIES = [
    ("1d", dict(kernel_size=(2,), stride=(1,), dilation=(1,), padding=((1, 0),)), (3,), ()),
    ("1d_lead", dict(kernel_size=(3,), stride=(2,), dilation=(1,), padding=((1, 1),)), (5,),
     (2,)),
    ("2d_dilated", dict(kernel_size=(2, 2), stride=(1, 2), dilation=(2, 1), padding=((0, 1),
                                                                                    (1, 0))),
     (4, 3), (2,)),
    ("2d_two_lead", dict(kernel_size=(1, 2), stride=(1, 1), dilation=(1, 1),
                         padding=((0, 0), (0, 0))), (2, 3), (1, 2)),
    ("3d", dict(kernel_size=(2, 1, 2), stride=(1, 1, 1), dilation=(1, 1, 1),
                padding=((0, 0), (0, 0), (1, 1))), (2, 1, 2), ()),
    ("zero_lead", dict(kernel_size=(2,), stride=(1,), dilation=(1,), padding=((0, 0),)), (3,),
     (0,)),
]
IDS = [g[0] for g in GEOMETRIES]


def _unfold(geo):
    return lambda x: lax.unfold(x, **geo)


def _fold(geo, size):
    return lambda c: lax.fold(c, size, **geo)


def _column_shape(geo, size, lead):
    return np.shape(lax.unfold(np.zeros(lead + size), **geo))


@pytest.mark.parametrize("name,geo,size,lead", GEOMETRIES, ids=IDS)
def test_unfold_derivatives_and_vmap(name, geo, size, lead):
    x = _rand(*(lead + size))
    check_grads(_unfold(geo), (x,), order=2, modes=("fwd", "rev"))
    check_vmap(_unfold(geo), (x,))


@pytest.mark.parametrize("name,geo,size,lead", GEOMETRIES, ids=IDS)
def test_fold_derivatives_and_vmap(name, geo, size, lead):
    c = _rand(*_column_shape(geo, size, lead), seed=1)
    check_grads(_fold(geo, size), (c,), order=2, modes=("fwd", "rev"))
    check_vmap(_fold(geo, size), (c,))


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_vmap_other_dtypes(dtype):
    _, geo, size, lead = GEOMETRIES[2]
    check_vmap(_unfold(geo), (_rand(*(lead + size)).astype(dtype),))
    check_vmap(_fold(geo, size), (_rand(*_column_shape(geo, size, lead)).astype(dtype),))


def test_float32_derivatives():
    _, geo, size, lead = GEOMETRIES[2]
    check_grads(lambda x: _fold(geo, size)(_unfold(geo)(x)),
                (_rand(*(lead + size), dtype=np.float32),), order=2)


@pytest.mark.parametrize("name,geo,size,lead", GEOMETRIES, ids=IDS)
def test_transposes_are_each_other(name, geo, size, lead):
    # the cotangent of unfold is fold of the cotangent, and vice versa: checked against the
    # kernels themselves, not through the rules
    x = _rand(*(lead + size))
    ct = _rand(*_column_shape(geo, size, lead), seed=2)
    (gx,) = pb.vjp(_unfold(geo), x)[1](ct)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(lax.fold(ct, size, **geo)),
                               rtol=1e-12)
    (gc,) = pb.vjp(_fold(geo, size), ct)[1](x)
    np.testing.assert_allclose(np.asarray(gc), np.asarray(lax.unfold(x, **geo)), rtol=1e-12)
    # and the pairing <unfold(x), ct> == <x, fold(ct)> holds (an independent identity)
    lhs = np.sum(np.asarray(lax.unfold(x, **geo)) * ct)
    np.testing.assert_allclose(lhs, np.sum(x * np.asarray(gx)), rtol=1e-10, atol=1e-12)


def test_jvp_is_the_op_on_the_tangent():
    _, geo, size, lead = GEOMETRIES[1]
    x, t = _rand(*(lead + size)), _rand(*(lead + size), seed=3)
    out, tan = pb.jvp(_unfold(geo), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tan), np.asarray(lax.unfold(t, **geo)))


@pytest.mark.parametrize("in_axis", [0, 1, 2, 3])
def test_vmap_batch_dim_anywhere(in_axis):
    _, geo, size, lead = GEOMETRIES[2]  # one leading and two spatial dimensions
    x = _rand(*(lead + size))
    xb = np.stack([x, 2 * x, -x], axis=in_axis)
    got = np.asarray(pb.vmap(_unfold(geo), in_axes=in_axis)(xb))
    want = np.stack([np.asarray(_unfold(geo)(np.take(xb, i, axis=in_axis))) for i in range(3)])
    np.testing.assert_array_equal(got, want)


def test_jit_of_vjp_matches_eager():
    _, geo, size, lead = GEOMETRIES[2]
    x = _rand(*(lead + size))
    ct = _rand(*_column_shape(geo, size, lead), seed=4)
    f = lambda ct, x: pb.vjp(_unfold(geo), x)[1](ct)
    np.testing.assert_allclose(np.asarray(pb.jit(f)(ct, x)[0]), np.asarray(f(ct, x)[0]),
                               rtol=1e-12)


def test_rules_on_the_reference_backend_match_cpu():
    _, geo, size, lead = GEOMETRIES[2]
    x = _rand(*(lead + size))
    ct = _rand(*_column_shape(geo, size, lead), seed=5)
    run = lambda: np.asarray(pb.vjp(_unfold(geo), x)[1](ct)[0])
    cpu = run()
    pb.config.update("backend", "reference")
    try:
        ref = run()
    finally:
        pb.config.update("backend", "cpu")
    np.testing.assert_allclose(ref, cpu, rtol=1e-12)


@pytest.mark.parametrize("prim", [wn.unfold_p, wn.fold_p], ids=lambda p: p.name)
def test_every_rule_is_filled(prim):
    for slot in ("jvp", "transpose", "batch"):
        assert callable(getattr(prim, slot)) and not isinstance(getattr(prim, slot), NoRule)
