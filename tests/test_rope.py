"""pullback.nn.rope and pullback.nn.rope_axial (primitives/rope.py, csrc/rope.c): values
against NumPy formulas written here (Hugging Face's rotate_half, Meta's complex form, SAM 2's
compute_axial_cis + apply_rotary_enc) over hypothesis shapes, dtypes and layouts; derivatives
(x and float positions) against finite differences to second order in both modes; vmap against
a loop; jit against eager; the primitive's own rules; errors naming the argument."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
from pullback import numpy as jnp
from pullback.primitives.rope import rope_p, rope_reference
from pullback.test_util import check_grads, check_vmap
from pullback.tracer import dtypes

BF16 = dtypes.bfloat16
TOL = {np.float64: 1e-12, np.float32: 2e-6, np.float16: 2e-3, BF16: 1.6e-2}


# ---- NumPy formulas (independent of the primitive's reference) ----

def inv_freq(dim, theta, step=2, dtype=np.float32):
    # JAX/PyTorch-style code's frequencies: 1 / theta ** (arange(0, dim, step) / dim), in
    # float32 (float64 for float64 inputs)
    return (1.0 / theta ** (np.arange(0, dim, step, dtype=np.float64)[:dim // step] / dim)
            ).astype(dtype)


def rope_half_np(x, pos, theta=1e4, rotary_dim=None):
    """Hugging Face's rotate_half form: x * cos + rotate_half(x) * sin over the first R."""
    ct = np.float64 if x.dtype == np.float64 else np.float32
    R = x.shape[-1] if rotary_dim is None else rotary_dim
    f = inv_freq(R, theta, dtype=ct)
    ang = np.asarray(pos).astype(ct)[..., None] * f          # (..., T, R/2)
    ang = np.concatenate([ang, ang], -1)[..., None, :]       # (..., T, 1, R)
    xr = x[..., :R].astype(ct)
    rot = np.concatenate([-xr[..., R // 2:], xr[..., :R // 2]], -1)
    out = xr * np.cos(ang).astype(ct) + rot * np.sin(ang).astype(ct)
    return np.concatenate([out, x[..., R:].astype(ct)], -1)


def rope_interleaved_np(x, pos, theta=1e4, rotary_dim=None):
    """Meta's complex form: view pairs (2i, 2i+1) as complex numbers, multiply by e^{i phi}."""
    R = x.shape[-1] if rotary_dim is None else rotary_dim
    wide = x.astype(np.float64)
    f = inv_freq(R, theta, dtype=np.float64 if x.dtype == np.float64 else np.float32)
    ang = (np.asarray(pos).astype(f.dtype)[..., None] * f).astype(np.float64)[..., None, :]
    z = wide[..., 0:R:2] + 1j * wide[..., 1:R:2]
    z = z * np.exp(1j * ang)
    out = wide.copy()
    out[..., 0:R:2], out[..., 1:R:2] = z.real, z.imag
    return out


def sam2_axial_np(x, end_x, end_y, theta=1e4):
    """SAM 2's compute_axial_cis + apply_rotary_enc, on x laid out (..., T, H, D)."""
    D = x.shape[-1]
    ct = np.float64 if x.dtype == np.float64 else np.float32  # SAM 2 itself: float32 always
    fx = inv_freq(D, theta, 4, ct)
    fy = inv_freq(D, theta, 4, ct)
    t = np.arange(end_x * end_y, dtype=ct)
    tx, ty = (t % end_x).astype(ct), np.floor(t / end_x).astype(ct)
    cis = np.concatenate([np.exp(1j * np.outer(tx, fx).astype(ct)),
                          np.exp(1j * np.outer(ty, fy).astype(ct))], -1)  # (T, D/2)
    wide = x.astype(np.float64)
    z = (wide[..., 0::2] + 1j * wide[..., 1::2]) * cis[:, None, :]
    out = np.empty_like(wide)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def assert_close(got, want, dtype, scale=1.0):
    tol = TOL[np.dtype(dtype).type] if np.dtype(dtype) != BF16 else TOL[BF16]
    got = np.asarray(got).astype(np.float64)
    np.testing.assert_allclose(got, np.asarray(want, np.float64), atol=tol * 4 * scale,
                               rtol=tol * 4)


def normal(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


DTYPES = [np.float32, np.float64, np.float16, BF16]


# ---- values ----

@st.composite
def rope_cases(draw):
    lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    T = draw(st.integers(0, 5))
    H = draw(st.integers(1, 3))
    D = 2 * draw(st.integers(1, 6))
    rot = 2 * draw(st.integers(0, D // 2)) if draw(st.booleans()) else None
    interleaved = draw(st.booleans())
    dtype = draw(st.sampled_from(DTYPES))
    pos_kind = draw(st.sampled_from(["int32", "float32", "int64", "float64"]))
    full = draw(st.booleans())
    layout = draw(st.sampled_from(["contiguous", "transposed", "strided"]))
    return lead, T, H, D, rot, interleaved, dtype, pos_kind, full, layout


def _layout(x, kind):
    if kind == "transposed":  # heads and tokens swapped in memory
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -2, -3)), -2, -3)
    if kind == "strided":
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    return x


@given(rope_cases())
def test_rope_matches_numpy(case):
    lead, T, H, D, rot, interleaved, dtype, pos_kind, full, kind = case
    x = _layout(normal(lead + (T, H, D), 1).astype(dtype), kind)
    pshape = lead + (T,) if full else (T,)
    rng = np.random.default_rng(2)
    pos = (rng.integers(0, 300, pshape) if pos_kind.startswith("int")
           else rng.uniform(-50, 300, pshape)).astype(pos_kind)
    got = pb.nn.rope(x, pos, rotary_dim=rot, interleaved=interleaved)
    assert got.shape == x.shape and got.dtype == x.dtype
    f = rope_interleaved_np if interleaved else rope_half_np
    want = f(x, np.broadcast_to(pos, lead + (T,)), rotary_dim=rot)
    assert_close(got, want, dtype)
    # the primitive's NumPy reference agrees too (the reference backend's oracle)
    ref = rope_reference(x, np.broadcast_to(pos, lead + (T,)), theta=1e4,
                         rotary_dim=D if rot is None else rot, interleaved=interleaved,
                         end_x=0, end_y=0, order=0, sign=1)
    assert_close(got, ref.astype(np.float64), dtype)
    assert_close(pb.jit(lambda a, p: pb.nn.rope(a, p, rotary_dim=rot,
                                                interleaved=interleaved))(x, pos), got, dtype)


def test_rope_hard_coded_values():
    # x = e_0 + e_1 at position 1, D = 4: rotate-half pairs (0, 2) at frequency 1 and (1, 3) at 1e-2
    x = np.zeros((1, 1, 4), np.float32)
    x[..., 0], x[..., 1] = 1.0, 1.0
    got = np.asarray(pb.nn.rope(x, np.array([1.0]), theta=1e4))
    np.testing.assert_allclose(got[0, 0], [np.cos(1), np.cos(1e-2), np.sin(1), np.sin(1e-2)],
                               rtol=1e-6)
    x[..., 1] = 0.0  # e_0: interleaved pair (0, 1) at frequency 1
    got = np.asarray(pb.nn.rope(x, np.array([1.0]), theta=1e4, interleaved=True))
    np.testing.assert_allclose(got[0, 0], [np.cos(1), np.sin(1), 0, 0], rtol=1e-6, atol=1e-7)


def test_rope_keeps_norms_and_depends_on_relative_positions():
    q, k = normal((1, 1, 16), 3), normal((1, 1, 16), 4)
    for interleaved in (False, True):
        def score(p, s):
            a = pb.nn.rope(q, np.array([p]), interleaved=interleaved)
            b = pb.nn.rope(k, np.array([s]), interleaved=interleaved)
            return float(np.sum(np.asarray(a) * np.asarray(b)))
        np.testing.assert_allclose(score(7.0, 3.0), score(104.0, 100.0), rtol=1e-10)
        y = np.asarray(pb.nn.rope(q, np.array([12.5]), interleaved=interleaved))
        np.testing.assert_allclose(np.linalg.norm(y), np.linalg.norm(q), rtol=1e-12)


def test_rope_rotary_dim_passes_the_rest_through_bitwise():
    x = normal((2, 3, 2, 10), 5).astype(np.float32)
    y = np.asarray(pb.nn.rope(x, np.arange(3), rotary_dim=4))
    np.testing.assert_array_equal(y[..., 4:], x[..., 4:])
    assert not np.allclose(y[:, 1:, :, :4], x[:, 1:, :, :4])
    np.testing.assert_array_equal(np.asarray(pb.nn.rope(x, np.arange(3), rotary_dim=0)), x)
    # position 0 is the identity
    np.testing.assert_array_equal(np.asarray(pb.nn.rope(x, np.zeros(3)))[:, :, :, :], x * 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("grid", [(2, 3), (1, 1), (4, 1), (3, 5)])
def test_rope_axial_matches_sam2(dtype, grid):
    end_x, end_y = grid
    x = normal((2, end_x * end_y, 3, 8), 6).astype(dtype)
    got = pb.nn.rope_axial(x, end_x, end_y)
    assert got.dtype == x.dtype
    assert_close(got, sam2_axial_np(x, end_x, end_y), dtype)
    assert_close(pb.jit(lambda a: pb.nn.rope_axial(a, end_x, end_y, theta=100.0))(x),
                 sam2_axial_np(x, end_x, end_y, 100.0), dtype)


def test_rope_axial_layouts_and_empty():
    x = normal((6, 2, 3, 12), 7)  # T=6 after the transpose below
    xt = np.swapaxes(x, 0, 2)     # (3, 2, 6, 12) strided
    xt = np.swapaxes(xt, 1, 2)    # (3, 6, 2, 12)
    assert_close(pb.nn.rope_axial(xt, 3, 2), sam2_axial_np(xt, 3, 2), np.float64)
    assert pb.nn.rope_axial(np.zeros((0, 4, 1, 4)), 2, 2).shape == (0, 4, 1, 4)
    assert pb.nn.rope_axial(np.zeros((0, 1, 4), np.float32), 1, 0).shape == (0, 1, 4)


# ---- derivatives ----

X = normal((2, 3, 2, 6), 8)
P = np.random.default_rng(9).uniform(0, 4, (2, 3))

GRAD_CASES = [
    ("half", lambda x, p: pb.nn.rope(x, p, theta=10.0), (X, P)),
    ("interleaved", lambda x, p: pb.nn.rope(x, p, theta=10.0, interleaved=True), (X, P)),
    ("rotary_dim", lambda x, p: pb.nn.rope(x, p, theta=3.0, rotary_dim=4), (X, P)),
    ("positions-1d", lambda x, p: pb.nn.rope(x, p, theta=10.0), (X, P[0])),
    ("x-only", lambda x: pb.nn.rope(x, np.arange(3), theta=10.0), (X,)),
    ("positions-only", lambda p: pb.nn.rope(X, p, theta=5.0, interleaved=True), (P,)),
    ("axial", lambda x: pb.nn.rope_axial(x, 3, 1, theta=10.0), (normal((2, 3, 2, 8), 16),)),
    ("axial-4", lambda x: pb.nn.rope_axial(x, 2, 2, theta=10.0), (normal((4, 1, 8), 10),)),
]


@pytest.mark.parametrize("name,f,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_rope_second_order_derivatives(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_rope_derivatives_under_jit():
    f = lambda x, p: jnp.sum(pb.nn.rope(x, p, theta=10.0) ** 2 * jnp.arange(6.0))
    g = pb.grad(f, argnums=(0, 1))
    for a, b in zip(g(X, P), pb.jit(g)(X, P)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


def test_rope_position_derivative_is_the_analytic_one():
    # d/dp of the pair (a cos(p f) - b sin(p f), a sin(p f) + b cos(p f)) is f * (-y2, y1)
    x, p = normal((1, 1, 2), 11), np.array([0.7])
    f = 1.0  # D = 2: one pair, frequency 1
    y = np.asarray(pb.nn.rope(x, p))
    t = np.asarray(pb.jvp(lambda q: pb.nn.rope(x, q), (p,), (np.ones(1),))[1])
    np.testing.assert_allclose(t[0, 0], [-f * y[0, 0, 1], f * y[0, 0, 0]], rtol=1e-12)


def test_rope_integer_positions_have_no_tangent():
    out, t = pb.jvp(lambda x: pb.nn.rope(x, np.arange(3)), (X,), (np.ones_like(X),))
    np.testing.assert_allclose(np.asarray(t), np.asarray(pb.nn.rope(np.ones_like(X),
                                                                    np.arange(3))))


def test_rope_float32_grads():
    check_grads(lambda x, p: pb.nn.rope(x, p, theta=10.0), (X.astype(np.float32),
                                                           P.astype(np.float32)),
                order=1, atol=5e-2, rtol=5e-2)


# ---- vmap ----

def test_rope_vmap_against_a_loop():
    x, p = normal((3, 2, 4), 12), np.linspace(0, 2, 3)
    check_vmap(lambda x, p: pb.nn.rope(x, p, theta=10.0), (x, p), atol=1e-12, rtol=1e-12)
    check_vmap(lambda x, p: pb.nn.rope(x, p, rotary_dim=2, interleaved=True), (x, p),
               atol=1e-12, rtol=1e-12)
    check_vmap(lambda x: pb.nn.rope_axial(x, 3, 1), (normal((3, 2, 4), 13),), atol=1e-12,
               rtol=1e-12)
    # grad inside vmap (the transpose and the derivative members batch too)
    g = pb.grad(lambda x, p: jnp.sum(jnp.sin(pb.nn.rope(x, p, theta=10.0))), argnums=(0, 1))
    check_vmap(g, (x, p), atol=1e-12, rtol=1e-12)


# ---- the primitive's rules ----

def test_rope_transpose_is_the_inverse_rotation():
    x = normal((2, 3, 2, 8), 14)
    p = np.random.default_rng(15).uniform(0, 9, (2, 3))
    f = lambda v: pb.nn.rope(v, p, rotary_dim=6)
    y, f_vjp = pb.vjp(f, x)
    (back,) = f_vjp(y)
    np.testing.assert_allclose(np.asarray(back), x, rtol=1e-12, atol=1e-12)


def test_rope_primitive_rejects_transposing_positions():
    from pullback.primitives.rules import UndefPrimal
    from pullback.tracer.avals import ShapedArray
    x = np.ones((1, 1, 2))
    with pytest.raises(ValueError, match="rope: cannot transpose in argument 'positions'"):
        rope_p.transpose(x, x, UndefPrimal(ShapedArray((1,), np.dtype("float64"))),
                         theta=1e4, rotary_dim=2, interleaved=False, end_x=0, end_y=0,
                         order=0, sign=1)


# ---- errors ----

def test_rope_errors_name_the_argument():
    x = np.ones((2, 3, 2, 6), np.float32)
    with pytest.raises(ValueError, match=r"rope: the last dimension of argument 'x' must be even"):
        pb.nn.rope(np.ones((3, 1, 5), np.float32), np.arange(3))
    with pytest.raises(ValueError, match=r"rope: argument 'rotary_dim' must be an even int"):
        pb.nn.rope(x, np.arange(3), rotary_dim=3)
    with pytest.raises(ValueError, match=r"rope: argument 'rotary_dim' must be an even int"):
        pb.nn.rope(x, np.arange(3), rotary_dim=8)
    with pytest.raises(TypeError, match=r"rope: argument 'rotary_dim' must be an int"):
        pb.nn.rope(x, np.arange(3), rotary_dim=2.0)
    with pytest.raises(ValueError, match=r"rope: argument 'positions' must have shape"):
        pb.nn.rope(x, np.arange(4))
    with pytest.raises(ValueError, match=r"rope: argument 'positions' must have shape"):
        pb.nn.rope(x, np.zeros((3, 3)))
    with pytest.raises(TypeError, match=r"rope: argument 'positions' must be an integer or float"):
        pb.nn.rope(x, np.ones(3, bool))
    with pytest.raises(TypeError, match=r"rope: argument 'x' must be a floating array"):
        pb.nn.rope(np.ones((3, 1, 2), np.int32), np.arange(3))
    with pytest.raises(ValueError, match=r"rope: argument 'x' must have shape \(\.\.\., T, H, D\)"):
        pb.nn.rope(np.ones((3, 2)), np.arange(3))
    with pytest.raises(ValueError, match=r"rope: argument 'theta' must be positive"):
        pb.nn.rope(x, np.arange(3), theta=0.0)
    with pytest.raises(ValueError, match=r"rope_axial: the last dimension of argument 'x' must "
                                         r"be a multiple of 4"):
        pb.nn.rope_axial(x, 3, 1)
    with pytest.raises(ValueError, match=r"rope_axial: arguments 'end_x' \* 'end_y' must equal"):
        pb.nn.rope_axial(np.ones((2, 3, 2, 8)), 2, 2)
    with pytest.raises(TypeError, match=r"rope_axial: argument 'end_x' must be an int"):
        pb.nn.rope_axial(np.ones((2, 3, 2, 8)), 3.0, 1)
    with pytest.raises(ValueError, match=r"rope_axial: arguments 'end_x' and 'end_y' must be"):
        pb.nn.rope_axial(np.ones((2, 0, 2, 8)), 0, 0)
