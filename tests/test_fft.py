"""The FFT (primitives/fft.py, csrc/fft.c): lax.fft, jnp.fft and pullback.scipy.fft against
numpy.fft/scipy.fft over hypothesis-drawn sizes (1, 2, primes, prime powers, products of large
primes, 0-size batches), axes, norms, dtypes and layouts; accuracy against a float64 reference;
derivatives (check_grads order 2, both modes) of every transform; vmap; jit; errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pullback as pb
import pullback.lax as lax
import pullback.numpy as jnp
from pullback.primitives.fft import fft_p
from pullback.config import enable_x64
from pullback.test_util import check_grads, check_vmap

# lengths that exercise every path: radices 4/2/3/5/7, generic odd radices, Bluestein
SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 16, 17, 25, 27, 30, 31, 49, 53, 64, 97, 100, 101,
         121, 128, 169, 210, 243, 256, 331, 343, 360, 509, 1000, 1009, 1024, 2 * 1009, 101 * 103,
         4096, 4099]
SMALL_SIZES = [s for s in SIZES if s <= 600]
REAL = [np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]


def _tol(dt, n=2):
    lg = max(np.log2(max(n, 2)), 1)
    if np.dtype(dt) in (np.float32, np.complex64):
        return dict(rtol=2e-5 * lg, atol=2e-5 * lg)
    return dict(rtol=1e-12 * lg, atol=1e-12 * lg)


def _rand(rng, shape, dt):
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def _layout(x, kind):
    if kind == "strided":
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    if kind == "flipped":
        return np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    if kind == "transposed" and x.ndim >= 2:
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    return x


def _close(got, want, dt, n=2):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(np.max(np.abs(want)), 1.0) if want.size else 1.0
    t = _tol(dt, n)
    np.testing.assert_allclose(got, want, rtol=t["rtol"], atol=t["atol"] * scale)


# ---- the 1-d transforms against numpy.fft ----

@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from(SIZES), batch=st.sampled_from([(), (0,), (1,), (3,), (2, 0)]),
       dt=st.sampled_from(COMPLEX), kind=st.sampled_from(["contiguous", "strided", "flipped",
                                                           "transposed"]),
       seed=st.integers(0, 99))
def test_fft_ifft_match_numpy(n, batch, dt, kind, seed):
    x = _rand(np.random.default_rng(seed), batch + (n,), dt)
    xl = _layout(x, kind)
    got = jnp.fft.fft(xl)
    assert got.dtype == dt
    _close(got, np.fft.fft(x.astype(np.complex128)), dt, n)
    _close(jnp.fft.ifft(xl), np.fft.ifft(x.astype(np.complex128)), dt, n)


@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from(SIZES), batch=st.sampled_from([(), (0,), (2,), (3, 1)]),
       dt=st.sampled_from(REAL), kind=st.sampled_from(["contiguous", "strided", "flipped"]),
       seed=st.integers(0, 99))
def test_rfft_irfft_match_numpy(n, batch, dt, kind, seed):
    rng = np.random.default_rng(seed)
    x = _rand(rng, batch + (n,), dt)
    got = jnp.fft.rfft(_layout(x, kind))
    assert got.dtype == (np.complex64 if dt == np.float32 else np.complex128)
    _close(got, np.fft.rfft(x.astype(np.float64)), dt, n)
    # irfft of an arbitrary half spectrum (imaginary parts of DC/Nyquist ignored, as numpy)
    cdt = np.complex64 if dt == np.float32 else np.complex128
    y = _rand(rng, batch + (n // 2 + 1,), cdt)
    got = jnp.fft.irfft(_layout(y, kind), n=n)
    assert got.dtype == dt
    _close(got, np.fft.irfft(y.astype(np.complex128), n=n), dt, n)


@settings(max_examples=40, deadline=None)
@given(shape=st.sampled_from([(3, 4), (5, 7), (1, 1), (4, 0, 3), (2, 6, 5), (8, 9), (17, 16),
                              (3, 4, 5, 6)]),
       dt=st.sampled_from(COMPLEX + REAL), norm=st.sampled_from([None, "backward", "ortho",
                                                                  "forward"]),
       seed=st.integers(0, 99), data=st.data())
def test_nd_transforms_match_numpy(shape, dt, norm, seed, data):
    x = _rand(np.random.default_rng(seed), shape, dt)
    nd = len(shape)
    k = data.draw(st.integers(1, min(3, nd)))
    axes = tuple(data.draw(st.permutations(range(-nd, 0)))[:k])
    if 0 in [shape[a] for a in axes]:
        return
    x64 = x.astype(np.complex128 if np.dtype(dt).kind == "c" else np.float64)
    _close(jnp.fft.fftn(x, axes=axes, norm=norm), np.fft.fftn(x64, axes=axes, norm=norm), dt, x.size)
    _close(jnp.fft.ifftn(x, axes=axes, norm=norm), np.fft.ifftn(x64, axes=axes, norm=norm), dt,
           x.size)
    if np.dtype(dt).kind == "f":
        _close(jnp.fft.rfftn(x, axes=axes, norm=norm), np.fft.rfftn(x64, axes=axes, norm=norm),
               dt, x.size)
        y = np.fft.rfftn(x64, axes=axes)
        s = [shape[a] for a in axes]
        _close(jnp.fft.irfftn(y.astype(np.complex64 if dt == np.float32 else np.complex128),
                              s=s, axes=axes, norm=norm),
               np.fft.irfftn(y, s=s, axes=axes, norm=norm), dt, x.size)


def test_more_than_3_axes():
    x = _rand(np.random.default_rng(9), (2, 3, 4, 5, 3), np.float64)
    for axes in [None, (0, 1, 2, 4), (4, 3, 2, 1, 0)]:
        _close(jnp.fft.fftn(x, axes=axes), np.fft.fftn(x, axes=axes), np.float64, x.size)
        _close(jnp.fft.ifftn(x, axes=axes), np.fft.ifftn(x, axes=axes), np.float64, x.size)
        _close(jnp.fft.rfftn(x, axes=axes), np.fft.rfftn(x, axes=axes), np.float64, x.size)
        y = np.fft.rfftn(x, axes=axes)
        ax = axes or tuple(range(5))
        s = [x.shape[a] for a in ax]
        _close(jnp.fft.irfftn(y, s=s, axes=axes), np.fft.irfftn(y, s=s, axes=ax),
               np.float64, x.size)


@pytest.mark.parametrize("dt", REAL)
def test_2d_and_padded_variants(dt):
    rng = np.random.default_rng(1)
    x = _rand(rng, (2, 6, 10), dt)
    x64 = x.astype(np.float64)
    _close(jnp.fft.fft2(x), np.fft.fft2(x64), dt, 60)
    _close(jnp.fft.ifft2(x, s=(4, 12)), np.fft.ifft2(x64, s=(4, 12)), dt, 60)
    _close(jnp.fft.rfft2(x, axes=(0, 2)), np.fft.rfft2(x64, axes=(0, 2)), dt, 60)
    y = np.fft.rfft2(x64)
    _close(jnp.fft.irfft2(y.astype(np.complex128 if dt == np.float64 else np.complex64),
                          s=(6, 10)), np.fft.irfft2(y, s=(6, 10)), dt, 60)
    for n in (3, 10, 17):  # crop and pad
        _close(jnp.fft.fft(x, n=n, axis=1), np.fft.fft(x64, n=n, axis=1), dt, n)
        _close(jnp.fft.rfft(x, n=n, axis=1, norm="ortho"),
               np.fft.rfft(x64, n=n, axis=1, norm="ortho"), dt, n)
        _close(jnp.fft.irfft(x, n=n, axis=1, norm="forward"),
               np.fft.irfft(x64, n=n, axis=1, norm="forward"), dt, n)
        _close(jnp.fft.hfft(x, n=n, norm="ortho"), np.fft.hfft(x64, n=n, norm="ortho"), dt, n)
        _close(jnp.fft.ihfft(x, n=n), np.fft.ihfft(x64, n=n), dt, n)
    _close(jnp.fft.hfft(x), np.fft.hfft(x64), dt, 18)
    _close(jnp.fft.ihfft(x, norm="forward"), np.fft.ihfft(x64, norm="forward"), dt, 10)


def test_dtype_rules():
    assert jnp.fft.fft(np.ones(4, np.float32)).dtype == np.complex64
    assert jnp.fft.fft(np.ones(4, np.float64)).dtype == np.complex128
    assert jnp.fft.fft(np.ones(4, np.int32)).dtype == np.complex64
    with pytest.raises(ValueError, match="float32 or float64"):  # as JAX
        jnp.fft.rfft(np.ones(4, np.float16))
    assert jnp.fft.fft(np.ones(4, np.float16)).dtype == np.complex64
    assert jnp.fft.fft(np.ones(0)).shape == (0,)
    assert jnp.fft.irfft(np.ones(1, np.complex64)).shape == (0,)
    assert jnp.fft.irfft(np.ones(3, np.complex64)).dtype == np.float32
    assert jnp.fft.irfft(np.ones(3, np.complex128)).dtype == np.float64
    with enable_x64(False):
        assert jnp.fft.fft(np.ones(4, np.float64)).dtype == np.complex64
        assert jnp.fft.fftfreq(4).dtype == np.float32
    assert lax.fft(np.ones((2, 4), np.float32), "FFT", (4,)).dtype == np.complex64


def test_freqs_and_shifts():
    for n in (1, 4, 5, 8):
        np.testing.assert_allclose(np.asarray(jnp.fft.fftfreq(n, 0.1)), np.fft.fftfreq(n, 0.1),
                                   rtol=1e-12)
        np.testing.assert_allclose(np.asarray(jnp.fft.rfftfreq(n, 2.0)),
                                   np.fft.rfftfreq(n, 2.0), rtol=1e-12)
    assert jnp.fft.fftfreq(4, dtype=np.float32).dtype == np.float32
    x = np.arange(30.0).reshape(5, 6)
    for axes in (None, 0, 1, (0, 1), (1,)):
        np.testing.assert_array_equal(np.asarray(jnp.fft.fftshift(x, axes)),
                                      np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(np.asarray(jnp.fft.ifftshift(x, axes)),
                                      np.fft.ifftshift(x, axes))


# ---- accuracy against a float64 reference ----

def _rms_rel(got, want):
    return np.sqrt(np.mean(np.abs(got - want) ** 2) / np.mean(np.abs(want) ** 2))


def _exact_dft(x):
    """numpy.fft in float64 (pocketfft, accurate to ~1e-16 log n) as the reference."""
    return np.fft.fft(x.astype(np.complex128))


@pytest.mark.parametrize("stride", [7, 1])
def test_accuracy_sampled_sizes(stride):
    """RMS relative error <= 2e-7 log2(n) (float32), 1e-15 log2(n) (float64); a sample of
    1..4096 here (scripts/fft_accuracy.py sweeps every size)."""
    rng = np.random.default_rng(0)
    sizes = range(1, 4097, 61) if stride == 7 else [2, 3, 1009, 2039, 4093, 4096, 3 ** 7]
    for n in sizes:
        x = _rand(rng, (n,), np.complex128)
        want = _exact_dft(x)
        lg = max(np.log2(n), 1)
        e32 = _rms_rel(np.asarray(jnp.fft.fft(x.astype(np.complex64))), want)
        e64 = _rms_rel(np.asarray(jnp.fft.fft(x)), want)
        assert e32 <= 2e-7 * lg, (n, e32)
        assert e64 <= 1e-15 * lg, (n, e64)
        r = x.real.copy()
        e64r = _rms_rel(np.asarray(jnp.fft.rfft(r)), np.fft.rfft(r))
        assert e64r <= 1e-15 * lg, (n, e64r)


@pytest.mark.parametrize("n", [10007, 65537, 1000003])
def test_accuracy_large_primes(n):
    x = _rand(np.random.default_rng(n), (n,), np.complex128)
    want = _exact_dft(x)
    lg = np.log2(n)
    assert _rms_rel(np.asarray(jnp.fft.fft(x)), want) <= 1e-15 * lg
    assert _rms_rel(np.asarray(jnp.fft.fft(x.astype(np.complex64))), want) <= 2e-7 * lg
    back = np.asarray(jnp.fft.ifft(jnp.fft.fft(x)))
    assert _rms_rel(back, x) <= 2e-15 * lg


@pytest.mark.parametrize("n", [2 ** 15, 3 * 2 ** 15, 5 ** 7, 2 ** 10 * 3 * 5 * 7])
def test_six_step_lengths_and_layouts(n):
    """Long direct lengths (the six-step, csrc/fft_six.h): n1, n2 multiples of 8 or not (a last
    partial group of lanes), a number of full groups not a multiple of 4, contiguous, strided
    and flipped inputs, the inverse, and the real transforms through a half length."""
    rng = np.random.default_rng(n)
    x = _rand(rng, (2 * n,), np.complex128)
    for v in (x[:n], x[::2], x[:n][::-1]):
        want = _exact_dft(v)
        lg = np.log2(n)
        assert _rms_rel(np.asarray(jnp.fft.fft(v)), want) <= 1e-15 * lg
        assert _rms_rel(np.asarray(jnp.fft.fft(v.astype(np.complex64))), want) <= 2e-7 * lg
    assert _rms_rel(np.asarray(jnp.fft.ifft(x[:n])), np.fft.ifft(x[:n])) <= 1e-15 * lg
    r = x.real.copy()
    assert _rms_rel(np.asarray(jnp.fft.rfft(r)), np.fft.rfft(r)) <= 1e-15 * lg
    assert _rms_rel(np.asarray(jnp.fft.irfft(x[:n + 1])), np.fft.irfft(x[:n + 1])) <= 1e-15 * lg
    # the long real lines' own path (the six-step reading and writing the user's arrays, the
    # untangling in place): scaled, float32, and a strided input (the split-plane path)
    assert _rms_rel(np.asarray(jnp.fft.rfft(r, norm="ortho")),
                    np.fft.rfft(r, norm="ortho")) <= 1e-15 * lg
    assert _rms_rel(np.asarray(jnp.fft.rfft(r.astype(np.float32))), np.fft.rfft(r)) <= 2e-7 * lg
    assert _rms_rel(np.asarray(jnp.fft.rfft(x.real[::2])), np.fft.rfft(x.real[::2])) <= 1e-15 * lg
    assert _rms_rel(np.asarray(jnp.fft.irfft(x[:n + 1], norm="forward")),
                    np.fft.irfft(x[:n + 1], norm="forward")) <= 1e-15 * lg
    assert _rms_rel(np.asarray(jnp.fft.irfft(x[:n + 1].astype(np.complex64))),
                    np.fft.irfft(x[:n + 1])) <= 2e-7 * lg


@pytest.mark.parametrize("n", [16411, 20011, 40009, 131 * 257])
def test_bluestein_long_lengths_and_layouts(n):
    """Bluestein whose padded length runs on the six-step (csrc/fft_impl.h's blue_one: the chirp
    products read and write the user's arrays, passes split over threads): lengths whose padded
    N differ, contiguous, strided and flipped inputs, a strided output, the inverse (scaled),
    both precisions, a batch of lines (threads over lines, or inside one line), and the real
    transforms of the same lengths."""
    rng = np.random.default_rng(n)
    x = _rand(rng, (2 * n,), np.complex128)
    lg = np.log2(n)
    for v in (x[:n], x[::2], x[:n][::-1]):
        want = _exact_dft(v)
        assert _rms_rel(np.asarray(jnp.fft.fft(v)), want) <= 1e-15 * lg
        assert _rms_rel(np.asarray(jnp.fft.fft(v.astype(np.complex64))), want) <= 2e-7 * lg
        assert _rms_rel(np.asarray(jnp.fft.ifft(v)), np.fft.ifft(v)) <= 1e-15 * lg
        assert _rms_rel(np.asarray(jnp.fft.ifft(v.astype(np.complex64), norm="ortho")),
                        np.fft.ifft(v, norm="ortho")) <= 2e-7 * lg
    # fft2 of a (n, 2) array: the columns are transformed in place in the output (strided lines)
    m = _rand(rng, (n, 2), np.complex128)
    assert _rms_rel(np.asarray(jnp.fft.fft2(m)), np.fft.fft2(m)) <= 1e-15 * lg
    for rows in (3, 5):
        b = _rand(rng, (rows, n), np.complex64)
        assert _rms_rel(np.asarray(jnp.fft.fft(b)), np.fft.fft(b.astype(np.complex128))) <= 2e-7 * lg
    r = x.real[:n].copy()
    assert _rms_rel(np.asarray(jnp.fft.rfft(r)), np.fft.rfft(r)) <= 1e-15 * lg
    assert _rms_rel(np.asarray(jnp.fft.irfft(x[:n // 2 + 1], n)), np.fft.irfft(x[:n // 2 + 1], n)) <= 1e-15 * lg


@pytest.mark.parametrize("dt", COMPLEX)
def test_radix16_lengths(dt):
    """Powers of two 2^k with k = 1 mod 3 run a radix-16 stage (csrc/fft_passes.h's pass16; 1024
    = 8 8 16), with k = 2 mod 3 two of them (256 = 16 16, 2048 = 8 16 16): one line (the scalar
    stage loop) and 9 lines (8 lanes and a leftover; up to 4096 on the stages compiled for the
    constant plane distance, 8192 on those for a run-time one), forward and inverse, with other
    factors beside it, and the 2-D real transform whose columns use it."""
    rng = np.random.default_rng(16)
    tol = 2e-7 if dt == np.complex64 else 1e-15
    with enable_x64():
        for n in (16, 48, 128, 256, 1024, 2048, 8192, 16 * 35):
            for rows in (1, 9):
                x = _rand(rng, (rows, n), dt)
                lg = np.log2(n)
                assert _rms_rel(np.asarray(jnp.fft.fft(x)), np.fft.fft(x)) <= tol * lg, n
                assert _rms_rel(np.asarray(jnp.fft.ifft(x)), np.fft.ifft(x)) <= tol * lg, n
        r = _rand(rng, (1024, 64), np.float32 if dt == np.complex64 else np.float64)
        assert _rms_rel(np.asarray(jnp.fft.rfft2(r)), np.fft.rfft2(r)) <= tol * 16
        assert _rms_rel(np.asarray(jnp.fft.irfft2(jnp.fft.rfft2(r), s=r.shape)), r) <= tol * 16


@pytest.mark.parametrize("dt", COMPLEX)
def test_leftover_lines_spread_over_threads(dt):
    """Lines left over from the groups of 8 (L mod 8) run as iterations of the threads' loop
    (csrc/fft_impl.h's axis): enough groups for threads over lines, every transform kind, the
    columns of a 2-D transform (adjacent lines, in place in the output)."""
    rng = np.random.default_rng(9)
    rt = np.float32 if dt == np.complex64 else np.float64
    tol = 2e-7 if dt == np.complex64 else 1e-15
    with enable_x64():
        for rows in (37, 45):
            x = _rand(rng, (rows, 1024), dt)
            r = _rand(rng, (rows, 2048), rt)
            assert _rms_rel(np.asarray(jnp.fft.fft(x)), np.fft.fft(x)) <= tol * 10
            assert _rms_rel(np.asarray(jnp.fft.rfft(r)), np.fft.rfft(r)) <= tol * 11
            assert _rms_rel(np.asarray(jnp.fft.irfft(x, 2046)), np.fft.irfft(x, 2046)) <= tol * 11
            assert _rms_rel(np.asarray(jnp.fft.fft2(x.T)), np.fft.fft2(x.T)) <= tol * 16
            assert _rms_rel(np.asarray(jnp.fft.rfft2(r.T)), np.fft.rfft2(r.T)) <= tol * 16


def test_kept_workspace_concurrent_calls():
    """Workspaces of at least 4 MB (csrc/fft.c's fft_ws_take: Bluestein of 65537 in float64,
    irfft2's complex copy of 1024 x 513) are kept between calls and taken by one call at a
    time: calls from several threads at once (the kernel runs without the GIL) each get a
    workspace of their own and compute the right values; sizes alternate, so a kept block is
    too small for the next call half the time."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(5)
    with enable_x64():
        x = _rand(rng, (65537,), np.complex128)
        y = _rand(rng, (1024, 513), np.complex64)
        z = _rand(rng, (2, 65537), np.complex128)
        want = [np.fft.fft(x), np.fft.irfft2(y.astype(np.complex128), s=(1024, 1024)),
                np.fft.ifft(z)]

        def work(i):
            out = []
            for j in range(3):
                k = (i + j) % 3
                got = (jnp.fft.fft(x) if k == 0 else
                       jnp.fft.irfft2(y, s=(1024, 1024)) if k == 1 else jnp.fft.ifft(z))
                out.append((k, np.asarray(got)))
            return out

        with ThreadPoolExecutor(4) as ex:
            for res in ex.map(work, range(8)):
                for k, got in res:
                    tol = 2e-7 if k == 1 else 1e-15
                    assert _rms_rel(got, want[k]) <= tol * 20, k


@pytest.mark.parametrize("dt", COMPLEX)
def test_lane_layouts(dt):
    """Groups of 8 lines moved through registers (csrc/fft_lanes.h): contiguous lines (with
    lengths not a multiple of 4), adjacent lines (the columns of a row-major array), lines of
    other strides, and the leftover lines past the last group of 8."""
    rng = np.random.default_rng(1)
    for shape in [(19, 256), (8, 6), (17, 30), (9, 1)]:
        x = _rand(rng, shape, dt)
        for ax in (0, 1):
            _close(jnp.fft.fft(x, axis=ax), np.fft.fft(x, axis=ax), dt, shape[ax])
            _close(jnp.fft.ifft(x[:, ::-1], axis=ax), np.fft.ifft(x[:, ::-1], axis=ax), dt, shape[ax])
            r = x.real.copy()
            _close(jnp.fft.rfft(r, axis=ax), np.fft.rfft(r, axis=ax), dt, shape[ax])
            m = 2 * (shape[ax] - 1) or 1
            _close(jnp.fft.irfft(x, n=m, axis=ax), np.fft.irfft(x, n=m, axis=ax), dt, m)
        _close(jnp.fft.rfft2(x.real.copy()), np.fft.rfft2(x.real), dt, x.size)
        _close(jnp.fft.irfft2(x, s=(shape[0], 2 * shape[1])),
               np.fft.irfft2(x, s=(shape[0], 2 * shape[1])), dt, 2 * x.size)


# ---- derivatives ----

def _as_real(f):
    """A real -> real function of ``f`` on complex values: (re, im) in, (re, im) out."""
    def g(xr, xi):
        y = f(lax.complex(xr, xi))
        return jnp.stack([jnp.real(y), jnp.imag(y)])
    return g


@pytest.mark.parametrize("name,shape,kw", [
    ("fft", (3, 5), {}), ("ifft", (2, 8), {}), ("fft", (7,), {"n": 9}),
    ("fftn", (3, 4, 5), {"axes": (0, 2)}), ("ifftn", (4, 6), {"norm": "ortho"}),
    ("fft2", (3, 4), {"norm": "forward"}), ("fft", (53,), {}),
])
def test_grads_complex_transforms(name, shape, kw):
    rng = np.random.default_rng(0)
    f = getattr(jnp.fft, name)
    xr, xi = rng.standard_normal(shape), rng.standard_normal(shape)
    check_grads(_as_real(lambda z: f(z, **kw)), (xr, xi), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,shape,kw", [
    ("rfft", (3, 8), {}), ("rfft", (7,), {}), ("rfft", (6,), {"n": 5}), ("rfftn", (4, 6), {}),
    ("rfftn", (3, 5, 4), {"axes": (0, 1)}), ("rfft2", (5, 5), {"norm": "ortho"}),
    ("ihfft", (6,), {}),
])
def test_grads_real_to_complex(name, shape, kw):
    x = np.random.default_rng(1).standard_normal(shape)
    f = getattr(jnp.fft, name)

    def g(x):
        y = f(x, **kw)
        return jnp.stack([jnp.real(y), jnp.imag(y)])
    check_grads(g, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,shape,kw", [
    ("irfft", (3, 5), {}), ("irfft", (4,), {"n": 7}), ("irfft", (5,), {"n": 8}),
    ("irfftn", (4, 5), {}), ("irfftn", (3, 4, 3), {"axes": (0, 2)}),
    ("irfft2", (4, 4), {"s": (4, 5), "norm": "forward"}), ("hfft", (5,), {}),
])
def test_grads_complex_to_real(name, shape, kw):
    rng = np.random.default_rng(2)
    f = getattr(jnp.fft, name)
    xr, xi = rng.standard_normal(shape), rng.standard_normal(shape)
    check_grads(lambda a, b: f(lax.complex(a, b), **kw), (xr, xi), order=2,
                modes=("fwd", "rev"))


def test_grad_of_spectral_energy_is_parseval():
    x = np.random.default_rng(3).standard_normal(64)
    g = pb.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.fft(x)) ** 2))(x)
    np.testing.assert_allclose(np.asarray(g), 2 * 64 * x, rtol=1e-10)


@pytest.mark.parametrize("n", [64, 2 ** 17])
def test_grad_of_half_spectrum_energy(n):
    """sum(|rfft(x)|^2) = (n sum(x^2) + X_0^2 + X_h^2) / 2 (Parseval over the Hermitian half),
    so its gradient is n x + X_0 + (-1)^t X_h; 2^17 runs the six-step's real path both ways
    (rfft, and irfft in the transpose)."""
    x = np.random.default_rng(4).standard_normal(n)
    alt = (-1.0) ** np.arange(n)
    want = n * x + x.sum() + alt * (alt @ x)
    g = pb.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2))
    with enable_x64():
        np.testing.assert_allclose(np.asarray(g(x)), want, rtol=1e-9, atol=1e-9 * n)
    got = np.asarray(pb.jit(g)(x.astype(np.float32)))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("ft", ["FFT", "IFFT", "RFFT", "IRFFT"])
@pytest.mark.parametrize("n", [5, 6])
def test_transpose_is_jaxs(ft, n):
    """The vjp (the transpose) is the bilinear adjoint of the R-linear map in JAX's pairing
    <a, b> = Re(a) Re(b) - Im(a) Im(b) (FFT, IFFT symmetric; RFFT and IRFFT through the
    Hermitian mask), checked against the pairing and, when JAX is installed, against JAX."""
    rng = np.random.default_rng(4)
    h = n // 2 + 1
    if ft == "RFFT":
        x = rng.standard_normal((2, n))
    elif ft == "IRFFT":
        x = rng.standard_normal((2, h)) + 1j * rng.standard_normal((2, h))
    else:
        x = rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))
    f = lambda v: lax.fft(v, ft, (n,))
    y, vjp = pb.vjp(f, x)
    y = np.asarray(y)
    ct = rng.standard_normal(y.shape) + (1j * rng.standard_normal(y.shape)
                                         if np.iscomplexobj(y) else 0)
    (t,) = vjp(ct)
    t = np.asarray(t)
    pair = lambda a, b: np.sum(np.real(a) * np.real(b) - np.imag(a) * np.imag(b))
    # the tangent direction d: <f(d), ct> == <d, t> for any d (f linear)
    d = rng.standard_normal(x.shape) + (1j * rng.standard_normal(x.shape)
                                        if np.iscomplexobj(x) else 0)
    np.testing.assert_allclose(pair(np.asarray(f(d)), ct), pair(d, t), rtol=1e-10)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    try:
        (tj,) = jax.vjp(lambda v: jax.lax.fft(v, ft, (n,)), x)[1](ct)
    finally:
        jax.config.update("jax_enable_x64", False)
    np.testing.assert_allclose(t, np.asarray(tj), rtol=1e-10, atol=1e-12)


# ---- vmap, jit ----

@pytest.mark.parametrize("fn", [
    lambda x: jnp.fft.fft(x), lambda x: jnp.fft.rfft(x, axis=0), lambda x: jnp.fft.irfft(x),
    lambda x: jnp.fft.fft2(x, norm="ortho"), lambda x: jnp.fft.irfftn(x, axes=(0, 1)),
])
def test_vmap(fn):
    x = np.random.default_rng(5).standard_normal((4, 6))
    check_vmap(fn, (x,), atol=1e-9, rtol=1e-9)


def test_vmap_complex_operand_and_in_axes():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 5, 8)) + 1j * rng.standard_normal((3, 5, 8))
    got = pb.vmap(lambda v: jnp.fft.fft(v), in_axes=1)(x)
    want = np.stack([np.fft.fft(x[:, i]) for i in range(5)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)
    got = pb.vmap(lambda v: lax.fft(v, "IFFT", (3, 8)), in_axes=1)(x)
    want = np.stack([np.fft.ifft2(x[:, i]) for i in range(5)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fn", [jnp.fft.fft, jnp.fft.rfft, jnp.fft.irfft, jnp.fft.fft2,
                                jnp.fft.rfftn, jnp.fft.ihfft])
def test_jit_equals_eager(fn):
    x = np.random.default_rng(7).standard_normal((6, 10)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(pb.jit(fn)(x)), np.asarray(fn(x)))


def test_reference_rule_matches_kernel():
    rng = np.random.default_rng(8)
    for ft, x, lens in [("FFT", _rand(rng, (3, 12), np.complex128), (12,)),
                        ("IFFT", _rand(rng, (4, 5), np.complex64), (4, 5)),
                        ("RFFT", _rand(rng, (2, 9), np.float64), (9,)),
                        ("IRFFT", _rand(rng, (3, 5), np.complex128), (3, 8))]:
        t = lax.FftType[ft]
        ref = fft_p.reference(x, fft_type=t, fft_lengths=lens)
        got = np.asarray(lax.fft(x, ft, lens))
        assert got.dtype == ref.dtype
        np.testing.assert_allclose(got, ref, **_tol(x.dtype, 16))


# ---- errors ----

def test_bad_inputs_name_the_argument():
    x = np.ones((4, 6), np.complex64)
    with pytest.raises(ValueError, match="repeated axes"):
        jnp.fft.fftn(x, axes=(0, 0))
    with pytest.raises(ValueError, match="'n'"):
        jnp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="Shape should be positive"):
        jnp.fft.fft(x, n=-1)
    with pytest.raises(ValueError, match="'s'"):
        jnp.fft.fftn(x, s=(2, 0))
    with pytest.raises(ValueError, match="fft_lengths"):
        lax.fft(x, "FFT", (-1,))
    with pytest.raises(ValueError, match="fft_lengths"):
        lax.fft(x, "FFT", (5,))
    # an IRFFT whose last length does not give the input's n // 2 + 1 (odd/even mismatch)
    with pytest.raises(ValueError, match="IRFFT"):
        lax.fft(np.ones((4, 4), np.complex64), "IRFFT", (9,))
    with pytest.raises(ValueError, match="only real valued"):
        lax.fft(x, "RFFT", (6,))
    with pytest.raises(ValueError, match="Unknown FFT type"):
        lax.fft(x, "DCT", (6,))
    with pytest.raises(ValueError, match="only supports 2 axes"):
        jnp.fft.fft2(x, axes=(0,))
    with pytest.raises(ValueError, match="multiple axes"):
        jnp.fft.fft(x, axis=(0, 1))
    with pytest.raises(ValueError, match="Invalid norm"):
        jnp.fft.fft(x, norm="bad")
    with pytest.raises(ValueError, match="Shape and axes"):
        jnp.fft.fftn(x, s=(2, 3), axes=(0,))


# ---- pullback.scipy.fft ----

@settings(max_examples=30, deadline=None)
@given(shape=st.sampled_from([(1,), (2,), (7,), (8,), (3, 5), (4, 6, 3)]),
       dt=st.sampled_from(REAL + [np.complex128]), norm=st.sampled_from([None, "ortho"]),
       seed=st.integers(0, 99), data=st.data())
def test_dct_matches_scipy(shape, dt, norm, seed, data):
    sf = pytest.importorskip("scipy.fft")
    import pullback.scipy.fft as psf
    x = _rand(np.random.default_rng(seed), shape, dt)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.sampled_from([None, 1, 4, 9]))
    _close(psf.dct(x, n=n, axis=axis, norm=norm), sf.dct(x, n=n, axis=axis, norm=norm), dt, 16)
    _close(psf.idct(x, n=n, axis=axis, norm=norm), sf.idct(x, n=n, axis=axis, norm=norm), dt, 16)
    axes = tuple(data.draw(st.permutations(range(len(shape)))))[:data.draw(
        st.integers(1, len(shape)))]
    _close(psf.dctn(x, axes=axes, norm=norm), sf.dctn(x, axes=axes, norm=norm), dt, 64)
    _close(psf.idctn(x, axes=axes, norm=norm), sf.idctn(x, axes=axes, norm=norm), dt, 64)


def test_dct_grads_and_errors():
    import pullback.scipy.fft as psf
    x = np.random.default_rng(10).standard_normal((3, 6))
    check_grads(lambda v: psf.dct(v, norm="ortho"), (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: psf.idctn(v), (x,), order=2, modes=("fwd", "rev"))
    with pytest.raises(NotImplementedError, match="type 2"):
        psf.dct(x, type=3)
    with pytest.raises(ValueError, match="'norm'"):
        psf.dct(x, norm="forward")
    with pytest.raises(ValueError, match="'n'"):
        psf.idct(x, n=0)
