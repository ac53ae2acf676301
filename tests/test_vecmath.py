"""The vectorized transcendentals of the CPU backend (csrc/vecmath.h, csrc/ewise_math.h).

exp, sin, cos, tanh, log, logistic, expm1 and log1p run as branch-free polynomial loops that
GCC vectorizes per target clone; sin and cos check each block of 256 elements for arguments
beyond their range reduction (|x| >= 2^19 in float32, 2^20 in float64, inf, NaN) and redo only
such blocks through libm; float32 exp likewise takes a cheaper scaling where a block lies in
(-86.5, 88), with the same bits. Checked here:

* accuracy, in ulps of the result dtype, over sweeps of ~1M float32 values (a stride through
  every bit pattern, uniform ranges, neighbours of multiples of pi/2, tiny and subnormal inputs,
  the edges of overflow) against float64 NumPy rounded to float32, and of float64 values against
  long double NumPy (x87 80-bit libm: 11 more bits than the result). The bounds asserted are
  the measured maxima rounded up (MEASURED below); every one is within 2 ulp;
* special values exactly as libm: NaN stays NaN, +-inf, signed zeros, overflow to inf,
  underflow to 0 and subnormal results;
* every layout (contiguous, strided, broadcast, flipped, transposed) gives the contiguous
  result bit for bit: the strided loop computes the same expression as the vector loop;
* a block holding one out-of-range element changes no other element's bits;
* the same results from pullback.lax and pullback.numpy names, eagerly and under pullback.jit
  (fused element-wise regions, and a region computed in place over a dying input).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pullback as pb
import pullback.lax as lax
import pullback.numpy as pnp
from pullback.test_util import LAYOUTS, layout

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
NAMES = ("exp", "sin", "cos", "tanh", "log", "logistic", "expm1", "log1p")

# Oracles, evaluated in a wider type by the caller (float64 for float32, long double for float64)
ORACLES = {
    "exp": np.exp, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "log": np.log,
    "logistic": lambda x: 1 / (1 + np.exp(-x)), "expm1": np.expm1, "log1p": np.log1p,
}

# Measured maximum errors (ulp) over the sweeps below (x86-64-v4 clone, FMA), rounded up; the
# asserted bounds. Measured: float32 exp 0.97, sin 0.76, cos 0.78, tanh 1.39, log 1.07, logistic 0.50,
# expm1 0.53, log1p 0.50; float64 exp 1.03, sin 0.77, cos 0.75, tanh 1.39, log 0.74,
# logistic 1.48, expm1 1.41, log1p 1.43.
MEASURED = {
    F32: {"exp": 1.0, "sin": 0.8, "cos": 0.8, "tanh": 1.5, "log": 1.2, "logistic": 0.6,
          "expm1": 0.6, "log1p": 0.6},
    F64: {"exp": 1.1, "sin": 0.8, "cos": 0.8, "tanh": 1.5, "log": 0.8, "logistic": 1.6,
          "expm1": 1.5, "log1p": 1.5},
}


def ev(name: str, x: np.ndarray) -> np.ndarray:
    """lax.<name> of exactly this NumPy layout, eagerly."""
    return np.asarray(getattr(lax, name)(pb.Array(x)))


def ulps(got: np.ndarray, x: np.ndarray, name: str) -> np.ndarray:
    """|got - exact| in ulps of got's dtype at |exact| (subnormal results: the smallest
    subnormal); results that should be non-finite must match exactly (0 or inf error)."""
    wide = np.float64 if got.dtype == F32 else np.longdouble
    with np.errstate(all="ignore"):
        exact = ORACLES[name](x.astype(wide))
        want = exact.astype(got.dtype)
        spacing = np.spacing(np.abs(np.where(np.isfinite(want), want, 1))).astype(wide)
        spacing = np.maximum(spacing, np.finfo(got.dtype).smallest_subnormal)
        err = np.abs(got.astype(wide) - exact) / spacing
    special = ~np.isfinite(want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    return np.where(special, np.where(same, 0.0, np.inf), err)


def domain(name: str, x: np.ndarray) -> np.ndarray:
    """x restricted to where the function is finite and not trivially saturated."""
    if name in ("log",):
        return x[x > 0]
    if name == "log1p":
        return x[x > -1]
    return x


def sweep(dt: np.dtype, name: str, n: int) -> np.ndarray:
    """About n finite inputs: a stride through the bit patterns, uniform ranges, neighbours of
    multiples of pi/2, tiny/subnormal values and the edges of overflow."""
    rng = np.random.default_rng(sum(map(ord, name)))
    bits = np.uint32 if dt == F32 else np.uint64
    nbits = 32 if dt == F32 else 64
    k = n // 4
    patterns = (np.arange(k, dtype=np.uint64) * np.uint64((2**nbits - 1) // k)).astype(bits)
    parts = [patterns.view(dt),
             rng.uniform(-1, 1, k).astype(dt), rng.uniform(-40, 40, k).astype(dt),
             (rng.uniform(-1, 1, k // 4) * 10.0 ** rng.uniform(-45 if dt == F32 else -320, 0,
                                                               k // 4)).astype(dt)]
    m = np.arange(1, k // 4 + 1, dtype=np.float64) * (1 if dt == F32 else 7)
    near = (m * (np.pi / 2)).astype(dt)
    parts += [near, np.nextafter(near, dt.type(np.inf)), np.nextafter(near, dt.type(-np.inf))]
    big = np.log(np.finfo(dt).max)
    tiny = np.log(np.finfo(dt).smallest_subnormal)
    parts += [np.linspace(big - 1, big + 1, 2000).astype(dt),
              np.linspace(tiny - 1, np.log(np.finfo(dt).smallest_normal) + 1, 2000).astype(dt)]
    x = np.concatenate(parts)
    x = x[np.isfinite(x)]
    if name in ("sin", "cos"):  # the fast path's range: beyond it is libm's answer
        x = x[np.abs(x) < (2.0**19 if dt == F32 else 2.0**20)]
    return domain(name, x)


@pytest.mark.parametrize("name", NAMES)
def test_float32_sweep(name):
    x = sweep(F32, name, 1_000_000)
    err = ulps(ev(name, x), x, name)
    assert err.max() <= MEASURED[F32][name], (err.max(), x[err.argmax()])


@pytest.mark.parametrize("name", NAMES)
def test_float64_sweep(name):
    x = sweep(F64, name, 300_000)
    err = ulps(ev(name, x), x, name)
    assert err.max() <= MEASURED[F64][name], (err.max(), x[err.argmax()])


@pytest.mark.parametrize("dt", [F32, F64])
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_trig_beyond_the_fast_range_is_libm(name, dt):
    # huge arguments take libm's path, whose reduction is exact: still within an ulp
    x = np.concatenate([np.geomspace(2.0**18, 1e30, 3000), -np.geomspace(2.0**19, 3e38, 3000)])
    x = np.concatenate([x, [2.0**19, 2.0**20, np.finfo(dt).max]]).astype(dt)
    x = x[np.isfinite(x)]
    assert ulps(ev(name, x), x, name).max() <= 1.0


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 2.0**-149, -(2.0**-149),
            1e-40, -1e-40, 1e-30, 88.7, 88.8, 89.0, -87.0, -103.0, -104.0, 709.7, 709.8, 710.0,
            -745.0, -746.0, 1e30, -1e30, 3e38, -3e38, 1e300, -1e300, 5e-324, -5e-324, 1e-310,
            2.0**19, 2.0**20, -(2.0**20), 0.5, -0.5, -1.5, 20.0, -20.0, 40.0, -40.0]


@pytest.mark.parametrize("dt", [F32, F64])
@pytest.mark.parametrize("name", NAMES)
def test_special_values(name, dt):
    """As libm (the float64 oracle rounded for float32): non-finite results and results of
    non-finite inputs exactly, zeros with their sign, everything else within the bound."""
    with np.errstate(all="ignore"):
        x = np.array(SPECIALS, np.float64).astype(dt)
        got = ev(name, x)
        want = ORACLES[name](x.astype(np.float64 if dt == F32 else np.longdouble)).astype(dt)
    exact = ~np.isfinite(want) | ~np.isfinite(x) | (want == 0)
    assert ((got == want) | (np.isnan(got) & np.isnan(want)))[exact].all(), (
        x[exact], got[exact], want[exact])
    zero = want == 0
    assert (np.signbit(got[zero]) == np.signbit(want[zero])).all(), (x[zero], got[zero])
    assert ulps(got, x, name)[~exact].max(initial=0) <= MEASURED[dt][name]


@pytest.mark.parametrize("dt", [F32, F64])
def test_exp_edges(dt):
    info = np.finfo(dt)
    if dt == F32:
        x = np.array([89.0, 88.8, -104.0, -103.9, -87.4, -100.0, -np.inf, np.inf], dt)
    else:
        x = np.array([710.0, 709.8, -746.0, -744.6, -708.5, -740.0, -np.inf, np.inf], dt)
    got = ev("exp", x)
    assert got[0] == np.inf and got[1] == np.inf and got[2] == 0 and got[6] == 0
    assert got[7] == np.inf
    assert 0 < got[3] < info.smallest_normal and 0 < got[5] < info.smallest_normal
    assert 0 < got[4] < 2 * info.smallest_normal  # near the normal/subnormal border
    assert ulps(got, x, "exp").max() <= MEASURED[dt]["exp"]


@pytest.mark.parametrize("dt", [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)])
@pytest.mark.parametrize("name", NAMES)
def test_half_types_round_the_float32_result_once(name, dt):
    x = domain(name, np.linspace(-20, 20, 4001).astype(dt))
    x = np.concatenate([x, np.array([np.inf, -np.inf, np.nan, -0.0], dt)])
    with np.errstate(all="ignore"):
        want = ev(name, x.astype(F32)).astype(dt)
    got = ev(name, x)
    assert ((got == want) | (np.isnan(got) & np.isnan(want))).all()


def layout_input(dt: np.dtype, name: str) -> np.ndarray:
    """A (37, 300) array of in-range values with a few that leave sin/cos's fast range."""
    rng = np.random.default_rng(7)
    x = rng.uniform(0.01 if name in ("log", "log1p") else -30, 30, (37, 300)).astype(dt)
    x[3, 5], x[20, 299], x[36, 0] = 1e30, np.inf, np.nan
    return x


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dt", [F32, F64])
@pytest.mark.parametrize("name", NAMES)
def test_every_layout_gives_the_contiguous_bits(name, dt, kind):
    x = layout(layout_input(dt, name), kind)
    with np.errstate(all="ignore"):
        want = ev(name, np.ascontiguousarray(x))
        got = ev(name, x)
    np.testing.assert_array_equal(got, want)
    assert ulps(got, np.ascontiguousarray(x), name).max() <= max(1.0, MEASURED[dt][name])


def test_float32_exp_fast_path_gives_the_general_bits_at_its_edges():
    """float32 exp scales by adding to the exponent field where a block lies in (-86.5, 88)
    and through two multiplies elsewhere (and in the strided loop): the same bits either way,
    on both sides of the bounds, down to subnormal results and up to overflow."""
    edges = np.array([-86.5, 88.0, -87.33, 88.72, -103.97, 0.0], F32)
    x = np.concatenate([edges + d for d in np.linspace(-2, 2, 4001, dtype=F32)])
    x = np.concatenate([x, np.nextafter(edges, F32.type(np.inf)),
                        np.nextafter(edges, F32.type(-np.inf))])
    contiguous = ev("exp", x)
    strided = ev("exp", np.repeat(x, 2)[::2])  # the general expression everywhere
    np.testing.assert_array_equal(contiguous.view(np.uint32), strided.view(np.uint32))
    assert ulps(contiguous, x, "exp").max() <= MEASURED[F32]["exp"]
    inside = x[(x > -86.5) & (x < 88.0)][:256]  # one block all in range: the fast path
    np.testing.assert_array_equal(ev("exp", inside).view(np.uint32),
                                  ev("exp", np.repeat(inside, 2)[::2]).view(np.uint32))


@pytest.mark.parametrize("dt", [F32, F64])
@pytest.mark.parametrize("name", ["sin", "cos", "exp"])
def test_an_out_of_range_lane_changes_no_other_lane(name, dt):
    """A block with one huge element runs scalar: its other elements keep the vector bits."""
    x = np.random.default_rng(3).uniform(-10, 10, 1000).astype(dt)
    clean = ev(name, x)
    for i in (0, 255, 256, 700, 999):
        y = x.copy()
        y[i] = 1e30
        got = ev(name, y)
        np.testing.assert_array_equal(np.delete(got, i), np.delete(clean, i))
        assert ulps(got[i:i + 1], y[i:i + 1], name).max() <= 1.0


@pytest.mark.parametrize("dt", [F32, F64])
def test_numpy_names_match_lax(dt):
    x = layout_input(dt, "log")
    for name in ("exp", "sin", "cos", "tanh", "log", "expm1", "log1p"):
        np.testing.assert_array_equal(np.asarray(getattr(pnp, name)(pb.Array(x))), ev(name, x))


@pytest.mark.parametrize("dt", [F32, F64])
@pytest.mark.parametrize("n", [1, 1000, 5001])
def test_fused_region_under_jit_matches_eager(dt, n):
    rng = np.random.default_rng(n)
    x, y, z = (rng.uniform(-5, 5, n).astype(dt) for _ in range(3))
    z[n // 2] = 3e7  # a block of the fused sin takes the libm path

    def f(x, y, z):
        a = pnp.exp(x) * y + pnp.sin(z)
        b = lax.logistic(pnp.cos(x)) - pnp.tanh(y) * pnp.expm1(x * 0.1)
        return a, b + pnp.log1p(pnp.abs(z)) * pnp.log(pnp.abs(y) + 1)

    args = [pnp.asarray(v) for v in (x, y, z)]
    jf = pb.jit(f)
    assert "region" in jf.lower(*args).compile().as_text()
    for got, want in zip(jf(*args), f(*args)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_in_place_region_under_jit():
    # sin over the product's buffer, which dies there: the region may write over its input
    rng = np.random.default_rng(5)
    x = rng.uniform(-50, 50, (64, 64)).astype(np.float32)
    x[7, 7] = 1e30
    eye = np.eye(64, dtype=np.float32)

    def f(x, w):
        return pnp.sin(x @ w), pnp.cos(x @ w + 1.0)

    for got, want in zip(pb.jit(f)(x, eye), f(pb.Array(x), pb.Array(eye))):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(pb.jit(f)(x, eye)[0]), ev("sin", x))


@given(hnp.arrays(np.float32, st.integers(0, 600),
                  elements=st.floats(-1e6, 1e6, width=32, allow_subnormal=True)),
       st.sampled_from(NAMES))
def test_hypothesis_float32(x, name):
    x = domain(name, x)
    err = ulps(ev(name, x), x, name)
    assert err.max(initial=0) <= MEASURED[F32][name], (err.max(), x[err.argmax()])


@given(hnp.arrays(np.float64, st.integers(0, 600),
                  elements=st.floats(-1e5, 1e5, allow_subnormal=True)),
       st.sampled_from(NAMES))
def test_hypothesis_float64(x, name):
    x = domain(name, x)
    err = ulps(ev(name, x), x, name)
    assert err.max(initial=0) <= MEASURED[F64][name], (err.max(), x[err.argmax()])
