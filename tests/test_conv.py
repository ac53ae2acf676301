"""conv_general_dilated and its wrappers: the C kernel against an independent NumPy loop and the
primitive's reference over hypothesis-drawn geometries, JAX's values, every rule (check_grads
order 2 both modes, vmap against a loop), jit against eager, and the errors."""
import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pullback as pb
from pullback import lax
from pullback.primitives.conv import conv_general_dilated_p
from pullback.test_util import check_grads, check_vmap

BF16 = np.dtype(ml_dtypes.bfloat16)


# ---- an independent oracle: the definition, one output element at a time ----

def naive_conv(x, w, strides, pads, lhs_dil, rhs_dil, dn, fgc, bgc, acc=np.float64):
    """XLA's convolution straight from its definition (no dilation or padding materialized)."""
    ls, rs, os_ = dn
    xt = np.transpose(x, ls).astype(acc)
    wt = np.transpose(w, rs).astype(acc)
    n_all, c = xt.shape[:2]
    o, ci = wt.shape[:2]
    nsp = x.ndim - 2
    nb = n_all // bgc
    out_sp = []
    for d in range(nsp):
        size = (xt.shape[2 + d] - 1) * lhs_dil[d] + 1 if xt.shape[2 + d] else 0
        size += pads[d][0] + pads[d][1]
        win = (wt.shape[2 + d] - 1) * rhs_dil[d] + 1 if wt.shape[2 + d] else 0
        out_sp.append(max(0, (size - win) // strides[d] + 1) if size >= win else 0)
    out = np.zeros((nb, o) + tuple(out_sp), acc)
    for n, oo in itertools.product(range(nb), range(o)):
        g, bg = oo // (o // fgc), oo // (o // bgc)
        for pos in itertools.product(*map(range, out_sp)):
            s = acc(0)
            for cc in range(ci):
                for tap in itertools.product(*map(range, wt.shape[2:])):
                    idx = []
                    for d in range(nsp):
                        q = pos[d] * strides[d] + tap[d] * rhs_dil[d] - pads[d][0]
                        if q < 0 or q % lhs_dil[d] or q // lhs_dil[d] >= xt.shape[2 + d]:
                            break
                        idx.append(q // lhs_dil[d])
                    else:
                        s += xt[(bg * nb + n, g * ci + cc) + tuple(idx)] * wt[(oo, cc) + tap]
            out[(n, oo) + pos] = s
    return np.transpose(out, np.argsort(os_))


def _to(x, dt):
    return np.asarray(x).astype(dt)


# ---- hypothesis geometries ----

@st.composite
def geometries(draw, max_nsp=3, dtypes=(np.float32, np.float64)):
    nsp = draw(st.integers(1, max_nsp))
    fgc = draw(st.sampled_from([1, 1, 2, 3]))
    bgc = 1 if fgc > 1 else draw(st.sampled_from([1, 1, 2]))
    nb = draw(st.integers(0, 2))
    ci = draw(st.integers(0 if fgc == 1 and bgc == 1 else 1, 3))
    og = draw(st.integers(1, 2))
    k = [draw(st.integers(1, 3)) for _ in range(nsp)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(nsp)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(nsp)]
    strides = [draw(st.integers(1, 3)) for _ in range(nsp)]
    size = [draw(st.integers(1, 6 if nsp < 3 else 4)) for _ in range(nsp)]
    pads = []
    for d in range(nsp):
        lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
        dil = (size[d] - 1) * lhs_dil[d] + 1
        if dil + lo + hi < 0:
            lo = hi = 0
        pads.append((lo, hi))
    perms = [tuple(draw(st.permutations(range(nsp + 2)))) for _ in range(3)]
    dn = lax.ConvDimensionNumbers(*perms)
    lt = (nb * bgc, ci * fgc) + tuple(size)
    rt = (og * fgc * bgc, ci) + tuple(k)
    lshape = [0] * (nsp + 2)
    rshape = [0] * (nsp + 2)
    for i, a in enumerate(dn.lhs_spec):
        lshape[a] = lt[i]
    for i, a in enumerate(dn.rhs_spec):
        rshape[a] = rt[i]
    dtype = draw(st.sampled_from(dtypes))
    return dict(lshape=tuple(lshape), rshape=tuple(rshape), strides=tuple(strides),
                pads=tuple(pads), lhs_dil=tuple(lhs_dil), rhs_dil=tuple(rhs_dil), dn=dn,
                fgc=fgc, bgc=bgc, dtype=np.dtype(dtype))


def _operands(g, seed=0, ints=False):
    rng = np.random.default_rng(seed)
    if ints or g["dtype"].kind in "iu":
        x = rng.integers(-4, 5, g["lshape"])
        w = rng.integers(-4, 5, g["rshape"])
    else:
        x = rng.standard_normal(g["lshape"])
        w = rng.standard_normal(g["rshape"])
    return _to(x, g["dtype"]), _to(w, g["dtype"])


def _conv(g, **kw):
    return lambda x, w: lax.conv_general_dilated(
        x, w, g["strides"], g["pads"], g["lhs_dil"], g["rhs_dil"], g["dn"],
        feature_group_count=g["fgc"], batch_group_count=g["bgc"], **kw)


def _tol(dt):
    return {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5, np.dtype(np.float16): 1e-2,
            BF16: 2e-2}.get(np.dtype(dt), 0)


@settings(max_examples=60)
@given(geometries(dtypes=(np.float32, np.float64, np.float16, BF16, np.int8, np.int32)))
def test_kernel_against_the_definition(g):
    x, w = _operands(g)
    got = np.asarray(_conv(g)(x, w))
    want = naive_conv(x, w, g["strides"], g["pads"], g["lhs_dil"], g["rhs_dil"], g["dn"],
                      g["fgc"], g["bgc"], acc=np.int64 if g["dtype"].kind in "iu" else np.float64)
    assert got.dtype == g["dtype"]
    assert got.shape == want.shape
    if g["dtype"].kind in "iu":
        np.testing.assert_array_equal(got, want.astype(g["dtype"]))  # wraps as the result
    else:
        tol = _tol(g["dtype"])
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * 10)


@settings(max_examples=40)
@given(geometries())
def test_reference_rule_against_the_definition(g):
    x, w = _operands(g)
    params = dict(window_strides=g["strides"], padding=g["pads"], lhs_dilation=g["lhs_dil"],
                  rhs_dilation=g["rhs_dil"], dimension_numbers=g["dn"],
                  feature_group_count=g["fgc"], batch_group_count=g["bgc"])
    got = conv_general_dilated_p.reference(x, w, **params)
    want = naive_conv(x, w, g["strides"], g["pads"], g["lhs_dil"], g["rhs_dil"], g["dn"],
                      g["fgc"], g["bgc"])
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=_tol(g["dtype"]),
                               atol=_tol(g["dtype"]) * 10)


def test_layouts_non_contiguous_and_broadcast_operands():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 9, 8))[:, :, ::2, ::-1]          # strided and flipped
    w = np.broadcast_to(rng.standard_normal((1, 3, 3, 2)), (4, 3, 3, 2))  # zero stride
    dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NCHW", "OIHW", "NHWC"))
    got = lax.conv_general_dilated(x, w, (1, 2), ((1, 0), (0, 1)), dimension_numbers=dn)
    want = naive_conv(x, w, (1, 2), ((1, 0), (0, 1)), (1, 1), (1, 1), dn, 1, 1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


# ---- dtypes ----

def test_accumulation_and_preferred_element_type():
    x = np.full((1, 64, 1), 100, np.int8)
    w = np.full((1, 64, 1), 100, np.int8)
    y = lax.conv(x, w, (1,), "VALID", preferred_element_type=np.int32)
    assert y.dtype == np.int32 and np.asarray(y).item() == 640000
    # int8 wraps modulo 256 as the result (as XLA)
    assert np.asarray(lax.conv(x, w, (1,), "VALID")).item() == np.array(640000).astype(np.int8)
    x3 = np.full((1, 3, 1), 100, np.int8)
    assert np.asarray(lax.conv(x3, x3, (1,), "VALID")).item() == np.array(30000).astype(np.int8)
    # bfloat16 accumulates in float32: 256 ones then 1/256 would vanish in bfloat16 sums
    xb = np.ones((1, 257, 1), BF16)
    wb = np.concatenate([np.ones(256), [2.0 ** -8]]).reshape(1, 257, 1).astype(BF16)
    got = lax.conv(xb, wb, (1,), "VALID", preferred_element_type=np.float32)
    assert got.dtype == np.float32 and np.asarray(got).item() == 256 + 2.0 ** -8
    assert lax.conv(xb, wb, (1,), "VALID").dtype == BF16
    xf = np.ones((1, 2, 3), np.float32)
    assert lax.conv(xf, xf[:, :, :2], (1,), "VALID",
                    preferred_element_type=np.float64).dtype == np.float64


# ---- the API: padding strings, dimension numbers, wrappers (JAX's values) ----

def test_padtype_to_pads():
    assert lax.padtype_to_pads((5, 6), (3, 4), (2, 1), "SAME") == [(1, 1), (1, 2)]
    assert lax.padtype_to_pads((5, 6), (3, 4), (2, 1), "SAME_LOWER") == [(1, 1), (2, 1)]
    assert lax.padtype_to_pads((5, 6), (3, 4), (2, 1), "VALID") == [(0, 0), (0, 0)]
    assert lax.padtype_to_pads((4,), (1,), (3,), "SAME") == [(0, 0)]
    with pytest.raises(RuntimeError, match="padding"):
        lax.padtype_to_pads((4,), (1,), (1,), "FULL")


def test_conv_dimension_numbers():
    dn = lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    dn = lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), ("NCWH", "IOHW", "WHNC"))
    assert dn == lax.ConvDimensionNumbers((0, 1, 3, 2), (1, 0, 2, 3), (2, 3, 1, 0))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == ((0, 1, 2),) * 3
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), ("NCH", "OOH", "NCH"))
    with pytest.raises(TypeError, match="same set of spatial"):
        lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), ("NCH", "OIW", "NCH"))
    with pytest.raises(TypeError, match="len equal"):
        lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), ("NCHW", "OIH", "NCH"))


def _rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_same_padding_layouts_and_wrappers():
    x, w = _rand(2, 7, 6, 3), _rand(3, 2, 3, 4, seed=1)  # NHWC, HWIO
    dn = ("NHWC", "HWIO", "NHWC")
    got = np.asarray(lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn))
    dnn = lax.conv_dimension_numbers(x.shape, w.shape, dn)
    want = naive_conv(x, w, (2, 2), [(1, 1), (0, 0)], (1, 1), (1, 1), dnn, 1, 1)
    assert got.shape == (2, 4, 3, 4)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = np.asarray(lax.conv_general_dilated(x, w, (1, 2), "SAME_LOWER", dimension_numbers=dn,
                                              rhs_dilation=(2, 1)))
    # H: window 5, pad 4 -> (2, 2); W: window 2, stride 2 -> pad 0
    want = naive_conv(x, w, (1, 2), [(2, 2), (0, 0)], (1, 1), (2, 1), dnn, 1, 1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = np.asarray(lax.conv_general_dilated(x, w, (1, 1), "SAME_LOWER", dimension_numbers=dn))
    want = naive_conv(x, w, (1, 1), [(1, 1), (1, 0)], (1, 1), (1, 1), dnn, 1, 1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    xn, wn = _rand(2, 3, 5, 4), _rand(4, 3, 2, 2, seed=2)
    iota = lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    np.testing.assert_allclose(np.asarray(lax.conv(xn, wn, (1, 1), "VALID")),
                               naive_conv(xn, wn, (1, 1), [(0, 0)] * 2, (1, 1), (1, 1), iota,
                                          1, 1), rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(lax.conv_with_general_padding(xn, wn, (1, 2), [(2, -1), (1, 1)], (2, 1),
                                                 (1, 2))),
        naive_conv(xn, wn, (1, 2), [(2, -1), (1, 1)], (2, 1), (1, 2), iota, 1, 1), rtol=1e-12)


def test_conv_transpose_is_the_input_gradient_with_transpose_kernel():
    x, w = _rand(2, 8, 8, 3), _rand(3, 3, 3, 5, seed=1)   # NHWC, HWIO (the defaults)
    fwd = lambda a: lax.conv_general_dilated(a, w, (2, 2), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = fwd(x)
    ct = _rand(*y.shape, seed=2)
    (gx,) = pb.vjp(fwd, x)[1](ct)
    # conv_transpose with transpose_kernel of the same kernel swaps its features: HWOI read as HWIO
    got = lax.conv_transpose(ct, w, (2, 2), "SAME", transpose_kernel=True)
    np.testing.assert_allclose(np.asarray(got), np.asarray(gx), rtol=1e-12, atol=1e-12)
    assert lax.conv_transpose(_rand(1, 28, 28, 4), _rand(3, 3, 4, 2), (2, 2),
                              "SAME").shape == (1, 56, 56, 2)
    assert lax.conv_transpose(_rand(1, 28, 28, 4), _rand(3, 3, 4, 2), (2, 2),
                              "VALID").shape == (1, 57, 57, 2)


def test_conv_general_dilated_patches():
    x = _rand(2, 3, 5, 4)
    p = np.asarray(lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID",
                                                    precision="highest"))
    assert p.shape == (2, 3 * 6, 4, 2)
    # feature c * 6 + (i * 3 + j) of patch (h, w) is x[c, h + i, w + j]
    for c, i, j in itertools.product(range(3), range(2), range(3)):
        np.testing.assert_array_equal(p[:, c * 6 + i * 3 + j], x[:, c, i:i + 4, j:j + 2])


# ---- JAX as an optional oracle ----

@settings(max_examples=25)
@given(geometries(max_nsp=2))
def test_against_jax(g):
    jax = pytest.importorskip("jax")
    x, w = _operands(g)
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:  # (restored: later tests use JAX as the oracle of its default 32-bit mode)
        want = jax.lax.conv_general_dilated(
            x, w, g["strides"], g["pads"], g["lhs_dil"], g["rhs_dil"],
            jax.lax.ConvDimensionNumbers(*g["dn"]),
            feature_group_count=g["fgc"], batch_group_count=g["bgc"])
    finally:
        jax.config.update("jax_enable_x64", old)
    np.testing.assert_allclose(np.asarray(_conv(g)(x, w), np.float64),
                               np.asarray(want, np.float64), rtol=1e-4, atol=1e-4)


def test_conv_transpose_against_jax():
    jax = pytest.importorskip("jax")
    x, w = _rand(2, 5, 6, 3), _rand(3, 2, 3, 4, seed=1)
    for pad in ("SAME", "VALID", ((1, 2), (0, 1))):
        for tk in (False, True):
            w2 = w if not tk else _rand(3, 2, 4, 3, seed=1)
            got = lax.conv_transpose(x, w2, (2, 3), pad, rhs_dilation=(1, 2), transpose_kernel=tk)
            want = jax.lax.conv_transpose(x, w2, (2, 3), pad, rhs_dilation=(1, 2),
                                          transpose_kernel=tk)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


# ---- derivatives ----

GRAD_CASES = [
    dict(lshape=(2, 3, 5), rshape=(2, 3, 2), strides=(2,), pads=((1, 0),), lhs_dil=(1,),
         rhs_dil=(2,), dn=("NCH", "OIH", "NCH"), fgc=1, bgc=1),
    dict(lshape=(2, 5, 4, 4), rshape=(3, 3, 2, 4), strides=(1, 2), pads=((1, 1), (-1, 2)),
         lhs_dil=(2, 1), rhs_dil=(1, 1), dn=("NHWC", "HWIO", "NHWC"), fgc=2, bgc=1),
    dict(lshape=(4, 2, 4, 3), rshape=(4, 2, 2, 2), strides=(1, 1), pads=((0, 1), (1, 0)),
         lhs_dil=(1, 1), rhs_dil=(1, 1), dn=("NCHW", "OIHW", "NCHW"), fgc=1, bgc=2),
    dict(lshape=(1, 2, 3, 3, 2), rshape=(2, 2, 2, 1, 2), strides=(1, 2, 1),
         pads=((1, 0), (0, 0), (0, 1)), lhs_dil=(1, 1, 1), rhs_dil=(1, 1, 1),
         dn=("NCDHW", "OIDHW", "NCDHW"), fgc=1, bgc=1),
]


def _case(c):
    dn = lax.conv_dimension_numbers(c["lshape"], c["rshape"], c["dn"])
    return dict(c, dn=dn, dtype=np.dtype(np.float64))


@pytest.mark.parametrize("case", GRAD_CASES)
def test_check_grads_order_2(case):
    g = _case(case)
    x, w = _operands(g, seed=3)
    f = _conv(g)
    check_grads(f, (x, w), order=2, modes=("fwd", "rev"))
    check_grads(lambda a: f(a, w), (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda b: f(x, b), (w,), order=2, modes=("fwd", "rev"))


def test_check_grads_conv_transpose():
    x, w = _rand(1, 4, 3, 2), _rand(3, 2, 2, 3, seed=1)
    for tk in (False, True):
        w2 = w if not tk else _rand(3, 2, 3, 2, seed=1)
        check_grads(lambda a, b: lax.conv_transpose(a, b, (2, 2), "SAME", transpose_kernel=tk),
                    (x, w2), order=2, modes=("fwd", "rev"))


def test_gradients_against_the_definition():
    """The transposes are convolutions: check them against vjp of the naive loop's matrix."""
    g = _case(GRAD_CASES[1])
    x, w = _operands(g, seed=4)
    f = _conv(g)
    y, vjp = pb.vjp(f, x, w)
    ct = _rand(*np.shape(y), seed=5)
    gx, gw = vjp(ct)
    # the conv is linear in x: gx = J^T ct with J from unit inputs
    eye = np.eye(x.size).reshape((x.size,) + x.shape)
    jx = np.stack([naive_conv(e, w, g["strides"], g["pads"], g["lhs_dil"], g["rhs_dil"], g["dn"],
                              g["fgc"], g["bgc"]).ravel() for e in eye])
    np.testing.assert_allclose(np.asarray(gx).ravel(), jx @ ct.ravel(), rtol=1e-10)
    eye = np.eye(w.size).reshape((w.size,) + w.shape)
    jw = np.stack([naive_conv(x, e, g["strides"], g["pads"], g["lhs_dil"], g["rhs_dil"], g["dn"],
                              g["fgc"], g["bgc"]).ravel() for e in eye])
    np.testing.assert_allclose(np.asarray(gw).ravel(), jw @ ct.ravel(), rtol=1e-10)


def test_gradients_with_preferred_element_type_keep_the_operand_dtypes():
    x, w = _rand(1, 2, 5, dtype=BF16), _rand(3, 2, 2, seed=1, dtype=BF16)
    f = lambda a, b: lax.conv(a, b, (1,), "SAME", preferred_element_type=np.float32).sum()
    gx, gw = pb.grad(f, argnums=(0, 1))(x, w)
    assert gx.dtype == BF16 and gw.dtype == BF16
    want = pb.grad(lambda a, b: lax.conv(a, b, (1,), "SAME").sum(), argnums=(0, 1))(
        x.astype(np.float32), w.astype(np.float32))
    np.testing.assert_allclose(np.asarray(gx, np.float32), np.asarray(want[0]), rtol=2e-2)
    np.testing.assert_allclose(np.asarray(gw, np.float32), np.asarray(want[1]), rtol=2e-2)


# ---- vmap ----

@pytest.mark.parametrize("case", GRAD_CASES[:3] + [dict(GRAD_CASES[1], fgc=1, lshape=(2, 5, 4, 2))])
def test_check_vmap(case):
    g = _case(case)
    x, w = _operands(g, seed=6)
    check_vmap(_conv(g), (x, w), atol=1e-10, rtol=1e-10)


def test_vmap_of_zero_size_batch():
    x, w = _rand(0, 2, 3, 5), _rand(4, 3, 2)
    out = pb.vmap(lambda a: lax.conv(a, w, (1,), "VALID"))(x)
    assert out.shape == (0, 2, 4, 4)


# ---- jit equals eager; edge sizes ----

def test_jit_equals_eager():
    g = _case(GRAD_CASES[1])
    x, w = _operands(g, seed=7)
    f = _conv(g)
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(x, w)), np.asarray(f(x, w)))
    gf = pb.grad(lambda a, b: (f(a, b) ** 2).sum(), argnums=(0, 1))
    for a, b in zip(pb.jit(gf)(x, w), gf(x, w)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def test_zero_size_and_one_by_one():
    w = _rand(4, 3, 3, 3, dtype=np.float32)
    assert lax.conv(np.zeros((0, 3, 5, 5), np.float32), w, (1, 1), "SAME").shape == (0, 4, 5, 5)
    x1 = _rand(2, 3, 1, 1, dtype=np.float32)
    got = np.asarray(lax.conv(x1, w, (1, 1), "SAME"))
    np.testing.assert_allclose(got[..., 0, 0], x1[..., 0, 0] @ w[:, :, 1, 1].T, rtol=1e-5)
    assert lax.conv(x1, w, (1, 1), "VALID").shape == (2, 4, 0, 0)
    gx = pb.grad(lambda a: lax.conv(a, w, (1, 1), "VALID").sum())(x1)
    np.testing.assert_array_equal(np.asarray(gx), 0)


# ---- errors ----

@pytest.mark.parametrize("call, exc, match", [
    (lambda: lax.conv(np.ones((1, 4, 5)), np.ones((2, 3, 2)), (1,), "VALID"), ValueError,
     r"lhs feature dimension size divided by feature_group_count.*4 // 1 != 3"),
    (lambda: lax.conv_general_dilated(np.ones((1, 4, 5)), np.ones((3, 2, 2)), (1,), "VALID",
                                      feature_group_count=2), ValueError,
     r"output feature dimension size 3 must be a multiple of feature_group_count"),
    (lambda: lax.conv_general_dilated(np.ones((1, 4, 5)), np.ones((4, 4, 2)), (1,), "VALID",
                                      batch_group_count=2), ValueError,
     r"'batch_group_count' \(2\) must divide the lhs batch dimension size 1"),
    (lambda: lax.conv(np.ones((1, 4, 5)), np.ones((2, 4, 2, 2)), (1,), "VALID"), TypeError,
     r"ndim to be equal"),
    (lambda: lax.conv(np.ones((1, 4, 5)), np.ones((2, 4, 2)), (1, 1), "VALID"), ValueError,
     r"'window_strides' must have one entry per spatial dimension"),
    (lambda: lax.conv(np.ones((1, 4, 5)), np.ones((2, 4, 2)), (0,), "VALID"), ValueError,
     r"'window_strides' must be positive"),
    (lambda: lax.conv_with_general_padding(np.ones((1, 4, 5)), np.ones((2, 4, 2)), (1,),
                                           [(-4, -3)], None, None), ValueError,
     r"negative padding"),
    (lambda: lax.conv(np.ones((1, 4, 5), np.float32), np.ones((2, 4, 2)), (1,), "VALID"),
     TypeError, r"same dtype.*float32 and float64"),
    (lambda: lax.conv(np.ones((1, 4, 5), bool), np.ones((2, 4, 2), bool), (1,), "VALID"),
     TypeError, r"argument 'lhs' must be an integer, floating or complex"),
    (lambda: lax.conv(np.ones((1, 4, 5)), np.ones((2, 4, 2)), (1,), "VALID",
                      preferred_element_type=np.int32), TypeError,
     r"'preferred_element_type' must be a floating dtype"),
    (lambda: lax.conv_general_dilated(np.ones((1, 4, 5)), np.ones((2, 4, 2)), (1,), "SAME",
                                      lhs_dilation=(2,)), ValueError, r"String padding"),
    (lambda: lax.conv_general_dilated(np.ones((1, 4, 5)), np.ones((2, 4, 2)), (1,), "VALID",
                                      feature_group_count=0), ValueError,
     r"'feature_group_count' must be a positive integer"),
    (lambda: lax.conv_general_dilated(np.ones((1, 4, 5)), np.ones((2, 4, 2)), (1,), "VALID",
                                      dimension_numbers=lax.ConvDimensionNumbers(
                                          (0, 0, 2), (0, 1, 2), (0, 1, 2))), TypeError,
     r"dimension_numbers.lhs_spec must be a permutation"),
    (lambda: lax.conv(np.ones((1, 4)), np.ones((2, 4, 1)), (), "VALID"), TypeError,
     r"ndim to be equal"),
    (lambda: lax.conv_general_dilated(np.ones((1, 4, 5)), np.ones((2, 4, 2)), (1,), [(1, 1)] * 2),
     TypeError, r"'padding' must have one \(low, high\) pair per spatial dimension"),
])
def test_bad_inputs(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_errors_under_vmap_name_the_users_shapes():
    with pytest.raises(ValueError, match=r"4 // 1 != 3"):
        pb.vmap(lambda a: lax.conv(a, np.ones((2, 3, 2)), (1,), "VALID"))(np.ones((2, 1, 4, 5)))


# ---- the float32 fast paths (conv_fast.h): geometries big enough to take them ----

FAST_CASES = [
    ((4, 16, 17, 16), (32, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 1),
    ((4, 17, 16, 16), (3, 3, 16, 32), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1),
     ("NHWC", "HWIO", "NHWC"), 1),
    ((4, 16, 17, 16), (32, 16, 3, 3), (2, 2), ((1, 0), (-1, 2)), (1, 1), (1, 2),
     ("NCHW", "OIHW", "NCHW"), 1),
    ((4, 16, 17, 16), (32, 16, 3, 2), (1, 1), ((2, 1), (1, 2)), (2, 3), (1, 1),
     ("NCHW", "OIHW", "NHWC"), 1),
    ((4, 16, 17, 16), (32, 8, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 2),
    ((8, 16, 40), (32, 16, 5), (2,), ((2, 2),), (1,), (2,), ("NCH", "OIH", "NCH"), 1),
    ((8, 40, 16), (4, 16, 32), (1,), ((3, 3),), (2,), (1,), ("NHC", "HIO", "NCH"), 1),
    ((4, 16, 17, 16), (16, 1, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 16),                                   # depthwise
    ((4, 16, 17, 16), (32, 1, 3, 3), (2, 1), ((0, 2), (1, -1)), (1, 1), (2, 1),
     ("NCHW", "OIHW", "NCHW"), 16),                                   # depthwise x2, strided
    ((4, 17, 16, 16), (3, 3, 1, 16), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1),
     ("NHWC", "HWIO", "NHWC"), 16),                                   # depthwise NHWC
    # Winograd F(2x2, 3x3): odd sizes, uneven and negative pads, one image (threads share it)
    ((3, 19, 15, 24), (3, 3, 24, 16), (1, 1), ((0, 2), (-1, 1)), (1, 1), (1, 1),
     ("NHWC", "HWIO", "NCHW"), 1),
    ((1, 32, 33, 31), (48, 32, 3, 3), (1, 1), ((1, 1), (2, 0)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NHWC"), 1),
    # channel-major input and output moved by 16 x 16 transposes: channels (20, 24) and rows
    # (19, 21 pixels) not multiples of 16, through Winograd and the strided tap GEMM
    ((8, 20, 19, 21), (24, 20, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 1),
    ((8, 20, 19, 21), (24, 20, 3, 3), (2, 2), ((1, 1), (0, 2)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 1),
    ((8, 33, 14, 13), (1, 3, 33, 40), (1, 1), ((0, 0), (2, 1)), (1, 1), (1, 1),
     ("NCHW", "HWIO", "NCHW"), 1),
    # Winograd on small images: several images' tiles share a block (a partial last group)
    ((17, 32, 6, 7), (48, 32, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 1),
    ((17, 7, 6, 32), (3, 3, 32, 48), (1, 1), ((1, 1), (0, 2)), (1, 1), (1, 1),
     ("NHWC", "HWIO", "NHWC"), 1),
    # 3-D: the 2-D paths over depth slices (strided and dilated in depth, Winograd, depthwise)
    ((4, 16, 5, 17, 16), (32, 16, 3, 3, 3), (2, 1, 1), ((1, 1), (1, 1), (0, 1)), (1, 1, 1),
     (1, 1, 1), ("NCDHW", "OIDHW", "NCDHW"), 1),
    ((6, 5, 17, 16, 32), (3, 3, 3, 32, 32), (1, 1, 1), ((2, 0), (1, 1), (1, 1)), (1, 1, 1),
     (2, 1, 1), ("NDHWC", "DHWIO", "NDHWC"), 1),
    ((4, 16, 5, 17, 16), (16, 1, 2, 3, 3), (1, 1, 1), ((1, 1), (1, 1), (1, 1)), (2, 1, 1),
     (1, 1, 1), ("NCDHW", "OIDHW", "NCDHW"), 16),
    # depth slices no tap reads: leading (padding) and every other one (lhs dilation)
    ((4, 16, 5, 17, 16), (32, 16, 1, 3, 3), (1, 1, 1), ((3, 1), (1, 1), (1, 1)), (2, 1, 1),
     (1, 1, 1), ("NCDHW", "OIDHW", "NCDHW"), 1),
    # a CNN's first layer: one or two input channels (tap GEMMs with K = k_w C; the weight
    # gradient's products with one or two columns)
    ((16, 28, 28, 1), (3, 3, 1, 32), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1),
     ("NHWC", "HWIO", "NHWC"), 1),
    ((16, 2, 20, 21), (32, 2, 3, 3), (1, 1), ((1, 1), (0, 1)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 1),
    # three channels, 40 outputs (a partial second vector), 5x3 taps (45 products per pixel)
    ((8, 3, 30, 26), (40, 3, 5, 3), (1, 1), ((2, 2), (1, 1)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NHWC"), 1),
    # the weight gradient's register-blocked pass (taps x input channels <= 12): three
    # channels, strided; one channel, dilated, output channels not a multiple of 16
    ((32, 40, 40, 3), (2, 2, 3, 24), (2, 2), ((1, 0), (0, 1)), (1, 1), (1, 1),
     ("NHWC", "HWIO", "NHWC"), 1),
    ((8, 1, 30, 26), (40, 1, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (2, 1),
     ("NCHW", "OIHW", "NCHW"), 1),
    # big enough for the weight-gradient paths: strided, and depthwise with 2 per channel
    ((8, 16, 20, 20), (32, 16, 3, 3), (2, 2), ((1, 1), (0, 1)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 1),
    ((8, 16, 21, 20), (32, 1, 5, 3), (2, 3), ((2, 2), (1, 1)), (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 16),
]


@pytest.mark.parametrize("case", FAST_CASES)
def test_float32_fast_paths_and_their_gradients(case):
    lshape, rshape, strides, pads, ld, rd, dn, fgc = case
    rng = np.random.default_rng(8)
    x = rng.standard_normal(lshape).astype(np.float32)
    w = rng.standard_normal(rshape).astype(np.float32)
    dnn = lax.conv_dimension_numbers(lshape, rshape, dn)
    params = dict(window_strides=strides, padding=pads, lhs_dilation=ld, rhs_dilation=rd,
                  dimension_numbers=dnn, feature_group_count=fgc, batch_group_count=1)
    f = lambda a, b: lax.conv_general_dilated(a, b, strides, pads, ld, rd, dnn,
                                              feature_group_count=fgc)
    y = np.asarray(f(x, w))
    want = conv_general_dilated_p.reference(x.astype(np.float64), w.astype(np.float64), **params)
    scale = np.abs(want).max()
    np.testing.assert_allclose(y, want, atol=1e-5 * scale, rtol=0)
    # the input and kernel gradients (transposed convolutions) against float64's
    ct = rng.standard_normal(y.shape).astype(np.float32)
    gx, gw = pb.vjp(f, x, w)[1](ct)
    gx64, gw64 = pb.vjp(f, x.astype(np.float64), w.astype(np.float64))[1](ct.astype(np.float64))
    for got, ref in ((gx, gx64), (gw, gw64)):
        ref = np.asarray(ref)
        np.testing.assert_allclose(np.asarray(got), ref, atol=1e-5 * np.abs(ref).max(), rtol=0)
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(x, w)), y)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex(dtype):
    g = _case(GRAD_CASES[1])
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(g["lshape"]) + 1j * rng.standard_normal(g["lshape"])).astype(dtype)
    w = (rng.standard_normal(g["rshape"]) + 1j * rng.standard_normal(g["rshape"])).astype(dtype)
    got = np.asarray(_conv(g)(x, w))
    want = naive_conv(x, w, g["strides"], g["pads"], g["lhs_dil"], g["rhs_dil"], g["dn"],
                      g["fgc"], g["bgc"], acc=np.complex128)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.complex64 else 1e-12,
                               atol=1e-5 if dtype == np.complex64 else 1e-12)
    if dtype == np.complex128:
        check_grads(_conv(g), (x, w), order=2, modes=("fwd", "rev"))


# ---- jnp.convolve / jnp.correlate, pullback.scipy.signal ----

@pytest.mark.parametrize("na, nv", [(7, 3), (3, 8), (4, 4), (1, 5), (6, 1)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_numpy_convolve_and_correlate(na, nv, mode):
    rng = np.random.default_rng(na * 10 + nv)
    a = rng.standard_normal(na) + 1j * rng.standard_normal(na)
    v = rng.standard_normal(nv) + 1j * rng.standard_normal(nv)
    np.testing.assert_allclose(np.asarray(pb.numpy.convolve(a, v, mode)), np.convolve(a, v, mode),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(pb.numpy.correlate(a, v, mode)),
                               np.correlate(a, v, mode), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(pb.numpy.convolve(a.real, v.real, mode)),
                               np.convolve(a.real, v.real, mode), rtol=1e-12, atol=1e-12)


def test_numpy_convolve_dtypes_and_errors():
    x = np.arange(5, dtype=np.int32)
    assert pb.numpy.convolve(x, x[:2]).dtype == np.float32  # inexact, as JAX (x64 too)
    y = pb.numpy.convolve(x, x[:2], preferred_element_type=np.int32)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(y), np.convolve(x, x[:2]))
    with pytest.raises(ValueError, match="1-dimensional"):
        pb.numpy.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="cannot be empty"):
        pb.numpy.correlate(np.ones(0), np.ones(2))
    with pytest.raises(ValueError, match="mode must be one of"):
        pb.numpy.convolve(np.ones(3), np.ones(2), "circular")
    g = pb.grad(lambda a: (pb.numpy.convolve(a, np.arange(3.0), "same") ** 2).sum())(np.ones(4))
    check_grads(lambda a, b: pb.numpy.correlate(a, b, "full"), (np.arange(4.0), np.ones(3)),
                order=2)
    assert g.shape == (4,)


@pytest.mark.parametrize("s1, s2", [((5, 6), (2, 3)), ((2, 3), (5, 6)), ((4, 4), (4, 4)),
                                    ((7,), (3,)), ((3, 4, 5), (2, 2, 2))])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_scipy_signal(s1, s2, mode):
    signal = pytest.importorskip("scipy.signal")
    rng = np.random.default_rng(len(s1))
    a = rng.standard_normal(s1) + 1j * rng.standard_normal(s1)
    b = rng.standard_normal(s2) + 1j * rng.standard_normal(s2)
    pairs = [("convolve", signal.convolve), ("correlate", signal.correlate)]
    if len(s1) == 2:
        pairs += [("convolve2d", signal.convolve2d), ("correlate2d", signal.correlate2d)]
    for name, want in pairs:
        got = np.asarray(getattr(pb.scipy.signal, name)(a, b, mode))
        np.testing.assert_allclose(got, want(a, b, mode), rtol=1e-10, atol=1e-10,
                                   err_msg=f"{name} {mode}")


def test_scipy_signal_errors():
    with pytest.raises(ValueError, match="smaller than the other in every dimension"):
        pb.scipy.signal.convolve(np.ones((2, 5)), np.ones((3, 3)))
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        pb.scipy.signal.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match="2-dimensional"):
        pb.scipy.signal.correlate2d(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        pb.scipy.signal.convolve(np.ones(3), np.ones(2), method="overlap")


@st.composite
def fast_geometries(draw):
    """float32 1-D/2-D geometries large enough for the fast paths (tap GEMM, Winograd,
    depthwise, weight gradients), with drawn layouts, strides, dilations and pads."""
    nsp = draw(st.integers(1, 2))
    kind = draw(st.sampled_from(["dense", "dense", "grouped", "depthwise"]))
    fgc = {"dense": 1, "grouped": 2, "depthwise": 16}[kind]
    ci = 1 if kind == "depthwise" else draw(st.sampled_from([4, 16, 24]))
    og = draw(st.sampled_from([1, 2])) if kind == "depthwise" else draw(st.sampled_from([16, 32]))
    n = draw(st.integers(1, 8))
    k = [draw(st.sampled_from([1, 2, 3, 3, 5])) for _ in range(nsp)]
    size = [draw(st.integers(6, 18)) for _ in range(nsp)]
    strides = [draw(st.sampled_from([1, 1, 2])) for _ in range(nsp)]
    rhs_dil = [draw(st.sampled_from([1, 1, 2])) for _ in range(nsp)]
    lhs_dil = ([1] * nsp if any(s > 1 for s in strides) or kind == "depthwise"
               else [draw(st.sampled_from([1, 1, 2])) for _ in range(nsp)])
    pads = [(draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(nsp)]
    sp = "HW"[:nsp] if nsp == 2 else "H"
    dn = (draw(st.sampled_from(["NC" + sp, "N" + sp + "C"])),
          draw(st.sampled_from(["OI" + sp, sp + "IO"])),
          draw(st.sampled_from(["NC" + sp, "N" + sp + "C"])))
    lt = {"N": n, "C": ci * fgc, "H": size[0], "W": size[-1]}
    rt = {"O": og * fgc, "I": ci, "H": k[0], "W": k[-1]}
    return dict(lshape=tuple(lt[c] for c in dn[0]), rshape=tuple(rt[c] for c in dn[1]),
                strides=tuple(strides), pads=tuple(pads), lhs_dil=tuple(lhs_dil),
                rhs_dil=tuple(rhs_dil), dn=dn, fgc=fgc)


@settings(max_examples=30)
@given(fast_geometries())
def test_float32_fast_paths_drawn(g):
    rng = np.random.default_rng(10)
    x = rng.standard_normal(g["lshape"]).astype(np.float32)
    w = rng.standard_normal(g["rshape"]).astype(np.float32)
    dnn = lax.conv_dimension_numbers(g["lshape"], g["rshape"], g["dn"])
    f = lambda a, b: lax.conv_general_dilated(a, b, g["strides"], g["pads"], g["lhs_dil"],
                                              g["rhs_dil"], dnn, feature_group_count=g["fgc"])
    y = np.asarray(f(x, w))
    with pb.enable_x64():  # float64 takes the generic path: the oracle of the fast ones
        x64, w64 = x.astype(np.float64), w.astype(np.float64)
        want = np.asarray(f(x64, w64))
        ct = rng.standard_normal(y.shape)
        gx64, gw64 = (np.asarray(t) for t in pb.vjp(f, x64, w64)[1](ct))
    scale = lambda a: np.abs(a).max() if a.size else 1.0  # noqa: E731
    np.testing.assert_allclose(y, want, atol=2e-5 * scale(want), rtol=0)
    gx, gw = pb.vjp(f, x, w)[1](ct.astype(np.float32))
    for got, ref in ((gx, gx64), (gw, gw64)):
        np.testing.assert_allclose(np.asarray(got), ref, atol=2e-5 * scale(ref), rtol=0)


# ---- compiled programs: a bias add and activation fuse into the convolution's step ----

EPILOGUE_CASES = [
    # tap-GEMM path, channels last (pixels are the output's rows): blocks reported as stored
    ((8, 20, 21, 3), (3, 3, 3, 32), (1, 1), "SAME", ("NHWC", "HWIO", "NHWC")),
    ((6, 17, 16, 16), (3, 2, 16, 24), (2, 1), ((1, 0), (2, 1)), ("NHWC", "HWIO", "NHWC")),
    # Winograd, one image per thread: each image reported when its blocks are done
    ((8, 12, 13, 16), (3, 3, 16, 32), (1, 1), "SAME", ("NHWC", "HWIO", "NHWC")),
    # channels first: the output's rows are not pixels, the epilogue runs after the kernel
    ((4, 16, 17, 16), (32, 16, 3, 3), (1, 1), "SAME", ("NCHW", "OIHW", "NCHW")),
    # lhs-dilated (transposed) and 1-D: the kernel declines to follow
    ((4, 9, 10, 16), (3, 3, 16, 16), (1, 1), ((2, 2), (2, 2)), ("NHWC", "HWIO", "NHWC")),
    ((8, 40, 16), (5, 16, 32), (1,), "SAME", ("NHC", "HIO", "NHC")),
]


@pytest.mark.parametrize("case", EPILOGUE_CASES)
def test_bias_and_activation_fuse_into_the_conv_step(case):
    lshape, rshape, strides, pads, dn = case
    rng = np.random.default_rng(11)
    x = rng.standard_normal(lshape).astype(np.float32)
    w = rng.standard_normal(rshape).astype(np.float32)
    dnn = lax.conv_dimension_numbers(lshape, rshape, dn)
    channel = dn[2].index("C")
    lhs_dil = (2, 2) if pads == ((2, 2), (2, 2)) else None

    def f(x, w, b, keep):
        y = lax.conv_general_dilated(x, w, strides, pads, lhs_dilation=lhs_dil,
                                     dimension_numbers=dnn)
        shape = [1] * y.ndim
        shape[channel] = -1
        out = pb.nn.relu(y + b.reshape(shape)) * 0.5
        return (out, y.sum()) if keep else (out,)  # a later reader of the product, or none

    b = rng.standard_normal(w.shape[dn[1].index("O")]).astype(np.float32)
    for keep in (False, True):
        eager = f(x, w, b, keep)
        compiled = pb.jit(f, static_argnums=3).lower(x, w, b, keep).compile()
        assert "epilogue:" in compiled.as_text()
        for _ in range(2):  # the second run reuses the arena the first left dirty
            got = compiled(x, w, b)
            for g, e in zip(got, eager):
                np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-4)


def test_reference_skips_padding_and_holes_against_infinities():
    # XLA's convolution adds nothing for padding or dilation holes, so an infinite weight
    # against padding is not NaN (0 * inf); the reference backend must agree with the kernel
    x = np.array([[[1.0]]], np.float32)
    w = np.array([[[1.0, np.inf]]], np.float32)
    dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NCH", "OIH", "NCH"))
    ref = conv_general_dilated_p.reference(
        x, w, window_strides=(1,), padding=((0, 1),), lhs_dilation=(1,), rhs_dilation=(1,),
        dimension_numbers=dn, feature_group_count=1, batch_group_count=1)
    np.testing.assert_array_equal(ref, [[[1.0]]])
    rng = np.random.default_rng(12)
    for g, b in ((1, 1), (2, 1), (1, 2)):
        x = rng.standard_normal((2 * b, 2 * g, 7, 6)).astype(np.float32)
        w = rng.standard_normal((2 * g * b, 2, 3, 2)).astype(np.float32)
        x[0, 0, 0, 0], w[0, 0, 1, 1] = np.inf, -np.inf
        dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NCHW", "OIHW", "NCHW"))
        args = ((2, 1), ((1, 2), (0, 1)), (1, 2), (2, 1), dn)
        got = np.asarray(lax.conv_general_dilated(x, w, *args, feature_group_count=g,
                                                  batch_group_count=b))
        ref = conv_general_dilated_p.reference(
            x, w, window_strides=args[0], padding=args[1], lhs_dilation=args[2],
            rhs_dilation=args[3], dimension_numbers=dn, feature_group_count=g,
            batch_group_count=b)
        assert np.isfinite(ref).sum() > 0 and not np.isfinite(ref).all()
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
