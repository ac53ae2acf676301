"""lax.ragged_dot_general (JAX's three modes) and lax.scaled_dot against NumPy references
written here, JAX as an optional oracle; derivatives, vmap, jit, errors."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.test_util import check_grads

_RNG = np.random.default_rng(7)
GS = np.array([2, 0, 3], np.int32)           # 5 of 6 rows in groups: row 5 is outside
GSB = np.array([[2, 0, 3], [1, 4, 1]], np.int32)


def _groups(sizes, n):
    """group index of each of n positions (-1 past the total)."""
    out = np.full(n, -1)
    ends = np.cumsum(sizes)
    for j, (s, e) in enumerate(zip(ends - sizes, ends)):
        out[s:e] = j
    return out


def ref_mode1(lhs, rhs, gs):
    # [b, m, k], [g, b, k, n], gs [b, g] or [g] -> [b, m, n]
    out = np.zeros(lhs.shape[:2] + rhs.shape[-1:])
    for b in range(lhs.shape[0]):
        grp = _groups(gs[b] if gs.ndim == 2 else gs, lhs.shape[1])
        for i, j in enumerate(grp):
            if j >= 0:
                out[b, i] = lhs[b, i] @ rhs[j, b]
    return out


def ref_mode2(lhs, rhs, gs):
    # [b, m, k], [b, k, n], gs [b, g] or [g] -> [g, b, m, n]
    g = gs.shape[-1]
    out = np.zeros((g, lhs.shape[0], lhs.shape[1], rhs.shape[-1]))
    for b in range(lhs.shape[0]):
        grp = _groups(gs[b] if gs.ndim == 2 else gs, lhs.shape[2])
        for j in range(g):
            sel = grp == j
            out[j, b] = lhs[b][:, sel] @ rhs[b][sel]
    return out


DN1 = ((([2], [2]), ([0], [1])), [1], [0])
DN2 = ((([2], [1]), ([0], [0])), [2], [])
DN3 = ((([2], [1]), ([0], [0])), [0], [])


def _rdg(lhs, rhs, gs, dn):
    return lax.ragged_dot_general(lhs, rhs, gs, lax.RaggedDotDimensionNumbers(*dn))


@pytest.mark.parametrize("gs", [GS, GSB], ids=["gs1d", "gs-batched"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mode1_ragged_rows(gs, dtype):
    lhs = _RNG.standard_normal((2, 6, 4)).astype(dtype)
    rhs = _RNG.standard_normal((3, 2, 4, 5)).astype(dtype)
    got = _rdg(jnp.asarray(lhs), jnp.asarray(rhs), jnp.asarray(gs), DN1)
    assert got.dtype == dtype and got.shape == (2, 6, 5)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(got), ref_mode1(lhs, rhs, gs), rtol=tol, atol=tol)
    assert np.all(np.asarray(got)[0, 5] == 0)  # past the groups' total


@pytest.mark.parametrize("gs", [GS, GSB], ids=["gs1d", "gs-batched"])
def test_mode2_ragged_contraction(gs):
    lhs = _RNG.standard_normal((2, 4, 6))
    rhs = _RNG.standard_normal((2, 6, 5))
    got = _rdg(jnp.asarray(lhs), jnp.asarray(rhs), jnp.asarray(gs), DN2)
    assert got.shape == (3, 2, 4, 5)
    np.testing.assert_allclose(np.asarray(got), ref_mode2(lhs, rhs, gs), rtol=1e-12,
                               atol=1e-12)


def test_mode3_ragged_batch_is_the_plain_product():
    # JAX 0.10.2 returns the plain batched product whatever the group sizes
    lhs = _RNG.standard_normal((6, 4, 3))
    rhs = _RNG.standard_normal((6, 3, 5))
    for gs in (GS, np.array([6, 0, 0], np.int32)):
        got = _rdg(jnp.asarray(lhs), jnp.asarray(rhs), jnp.asarray(gs), DN3)
        np.testing.assert_allclose(np.asarray(got), np.einsum("bmk,bkn->bmn", lhs, rhs),
                                   rtol=1e-12)


def test_basic_dimension_numbers_equal_ragged_dot():
    lhs = jnp.asarray(_RNG.standard_normal((6, 4)))
    rhs = jnp.asarray(_RNG.standard_normal((3, 4, 5)))
    got = _rdg(lhs, rhs, jnp.asarray(GS), ((([1], [1]), ([], [])), [0], [0]))
    np.testing.assert_allclose(np.asarray(got),
                               np.asarray(lax.ragged_dot(lhs, rhs, jnp.asarray(GS))),
                               rtol=1e-12)


def test_grads_vmap_jit():
    lhs = jnp.asarray(_RNG.standard_normal((2, 6, 4)))
    rhs = jnp.asarray(_RNG.standard_normal((3, 2, 4, 5)))
    gs = jnp.asarray(GSB)
    f = lambda l, r: _rdg(l, r, gs, DN1)
    check_grads(f, (lhs, rhs), order=2, modes=("fwd", "rev"))
    f2 = lambda l, r: _rdg(l, r, gs, DN2)
    check_grads(f2, (jnp.asarray(_RNG.standard_normal((2, 4, 6))),
                     jnp.asarray(_RNG.standard_normal((2, 6, 5)))), order=2,
                modes=("fwd", "rev"))
    np.testing.assert_allclose(np.asarray(pb.jit(f)(lhs, rhs)), np.asarray(f(lhs, rhs)),
                               rtol=1e-14)
    # vmap over a leading axis of lhs (rhs shared), and over group_sizes
    lhs_b = jnp.asarray(_RNG.standard_normal((3, 2, 6, 4)))
    got = pb.vmap(f, in_axes=(0, None))(lhs_b, rhs)
    want = np.stack([np.asarray(f(lhs_b[i], rhs)) for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    gss = jnp.asarray(np.stack([GSB, GSB[::-1]]))
    got = pb.vmap(lambda g: _rdg(lhs, rhs, g, DN1), in_axes=0)(gss)
    want = np.stack([ref_mode1(np.asarray(lhs), np.asarray(rhs), np.asarray(g)) for g in gss])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_ragged_bad_input_names_the_argument():
    lhs, rhs = jnp.ones((2, 6, 4)), jnp.ones((3, 2, 4, 5))
    with pytest.raises(TypeError, match="ragged_dot_general.*'group_sizes'.*integer"):
        _rdg(lhs, rhs, jnp.ones(3), DN1)
    with pytest.raises(ValueError, match="ragged_dot_general.*'group_sizes'.*shape"):
        _rdg(lhs, rhs, jnp.ones((5, 3), jnp.int32), DN1)
    with pytest.raises(ValueError, match="ragged_dot_general.*group dimension"):
        _rdg(lhs, rhs, jnp.asarray(GS), ((([2], [2]), ([0], [1])), [1], []))
    with pytest.raises(TypeError, match="ragged_dot_general.*'ragged_dot_dimension_numbers'"):
        lax.ragged_dot_general(lhs, rhs, jnp.asarray(GS), DN1)
    with pytest.raises(ValueError, match="ragged_dot_general.*'group_offset'"):
        _rdg_off = lax.RaggedDotDimensionNumbers(*DN1)
        lax.ragged_dot_general(lhs, rhs, jnp.asarray(GS), _rdg_off,
                               group_offset=jnp.zeros(1, jnp.int32))


def _bf(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def ref_scaled(lhs, rhs, ls, rs):
    # XLA's decomposition: subchannel-repeated scales, operand * scale rounded to bfloat16
    k = lhs.shape[-1]
    L = _bf(_bf(lhs) * _bf(np.repeat(ls, k // ls.shape[-1], -1)))
    R = _bf(_bf(rhs) * _bf(np.repeat(rs, k // rs.shape[-2], -2)))
    return np.einsum("...mk,...kn->...mn", L, R)


@pytest.mark.parametrize("batch", [(), (2,)])
@pytest.mark.parametrize("pet", [None, np.float32])
def test_scaled_dot_matches_reference(batch, pet):
    lhs = _RNG.standard_normal(batch + (4, 8)).astype(np.float32)
    rhs = _RNG.standard_normal(batch + (8, 3)).astype(np.float32)
    ls = _RNG.uniform(0.5, 2, batch + (4, 2)).astype(np.float32)
    rs = _RNG.uniform(0.5, 2, batch + (2, 3)).astype(np.float32)
    got = lax.scaled_dot(jnp.asarray(lhs), jnp.asarray(rhs), lhs_scale=jnp.asarray(ls),
                         rhs_scale=jnp.asarray(rs), preferred_element_type=pet)
    assert got.dtype == (ml_dtypes.bfloat16 if pet is None else np.float32)
    want = ref_scaled(lhs, rhs, ls, rs)
    tol = 1e-2 if pet is None else 1e-5
    np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=tol, atol=tol)
    # no scales: the bfloat16-rounded operands' product
    got = lax.scaled_dot(jnp.asarray(lhs), jnp.asarray(rhs), preferred_element_type=np.float32)
    np.testing.assert_allclose(np.asarray(got), np.einsum("...mk,...kn->...mn", _bf(lhs),
                                                          _bf(rhs)), rtol=1e-5, atol=1e-5)
    f = lambda *a: lax.scaled_dot(a[0], a[1], lhs_scale=a[2], rhs_scale=a[3],
                                  preferred_element_type=pet)
    args = [jnp.asarray(a) for a in (lhs, rhs, ls, rs)]
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(*args), np.float32),
                                  np.asarray(f(*args), np.float32))


def test_scaled_dot_bad_input_names_the_argument():
    lhs, rhs = jnp.ones((4, 8)), jnp.ones((8, 3))
    with pytest.raises(ValueError, match="scaled_dot.*'lhs_scale'.*multiple"):
        lax.scaled_dot(lhs, rhs, lhs_scale=jnp.ones((4, 3)))
    with pytest.raises(ValueError, match="scaled_dot.*'rhs_scale'.*outside the contracting"):
        lax.scaled_dot(lhs, rhs, rhs_scale=jnp.ones((2, 4)))
    with pytest.raises(TypeError, match="scaled_dot.*'lhs'.*rank"):
        lax.scaled_dot(jnp.ones(8), rhs)


def test_against_jax_oracle():
    jax = pytest.importorskip("jax")
    from jax import lax as jlax
    lhs = _RNG.standard_normal((2, 4, 8)).astype(np.float32)
    rhs = _RNG.standard_normal((2, 8, 3)).astype(np.float32)
    ls = _RNG.uniform(0.5, 2, (2, 4, 2)).astype(np.float32)
    rs = _RNG.uniform(0.5, 2, (2, 2, 3)).astype(np.float32)
    want = jlax.scaled_dot(lhs, rhs, lhs_scale=ls, rhs_scale=rs)
    got = lax.scaled_dot(jnp.asarray(lhs), jnp.asarray(rhs), lhs_scale=jnp.asarray(ls),
                         rhs_scale=jnp.asarray(rs))
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))
    l1 = _RNG.standard_normal((2, 6, 4)).astype(np.float32)
    r1 = _RNG.standard_normal((3, 2, 4, 5)).astype(np.float32)
    want = jlax.ragged_dot_general(l1, r1, GSB, jlax.RaggedDotDimensionNumbers(*DN1))
    got = _rdg(jnp.asarray(l1), jnp.asarray(r1), jnp.asarray(GSB), DN1)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_group_sizes_per_batch_and_outer_index():
    # [b, x, m, k] with the ragged m inside the free x: group_sizes [b, x, g]
    lhs = _RNG.standard_normal((2, 3, 6, 4))
    rhs = _RNG.standard_normal((3, 2, 4, 5))
    gs = _RNG.integers(0, 3, (2, 3, 3)).astype(np.int32)
    dn = ((([3], [2]), ([0], [1])), [2], [0])
    got = _rdg(jnp.asarray(lhs), jnp.asarray(rhs), jnp.asarray(gs), dn)
    want = np.zeros((2, 3, 6, 5))
    for b in range(2):
        for x in range(3):
            for i, j in enumerate(_groups(gs[b, x], 6)):
                if j >= 0:
                    want[b, x, i] = lhs[b, x, i] @ rhs[j, b]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
