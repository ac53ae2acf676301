"""pullback.scipy.signal's FFT convolution and spectral functions (fftconvolve, detrend, stft,
istft, csd, welch) against scipy.signal, with grads, vmap, jit and JAX's quirks (issue 30)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pullback as pb
import pullback.numpy as jnp
from pullback.scipy import signal as ps
from pullback.scipy._windows import get_window
from pullback.test_util import check_grads

ss = pytest.importorskip("scipy.signal")

RNG = np.random.default_rng(30)
TOL = {np.float32: 2e-4, np.float64: 1e-10, np.complex64: 2e-4, np.complex128: 1e-10}


def _data(shape, dtype, rng=RNG):
    x = rng.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.normal(size=shape)
    return x.astype(dtype)


def _close(got, want, dtype, scale=1.0):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    tol = TOL[np.dtype(dtype).type]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(scale, 1e-30))


def _scale(a):
    # the inputs are O(1), so an O(1) floor keeps rounding noise around zeros in tolerance
    a = np.asarray(a)
    return max(float(np.abs(a).max()) if a.size else 1.0, 1.0)


# ------------------------------------------------------------------------------ windows

_WINDOWS = ["barthann", "bartlett", "blackman", "blackmanharris", "bohman", "boxcar", "cosine",
            "exponential", "flattop", "hamming", "hann", "lanczos", "nuttall", "parzen",
            "triang", "tukey", ("tukey", 0.25), ("tukey", 0.0), ("tukey", 1.0), ("kaiser", 8.6),
            ("gaussian", 2.5), ("general_gaussian", 1.5, 3.0), ("general_hamming", 0.6),
            ("general_cosine", [0.5, 0.3, 0.2]), ("exponential", None, 2.0), "hann_symmetric",
            "blk", "rect", "tri", ("chebwin", 50), ("chebwin", 100), "taylor", ("taylor", 5, 40),
            ("taylor", 4, 30, False)]


@pytest.mark.parametrize("window", _WINDOWS, ids=str)
@pytest.mark.parametrize("fftbins", [True, False])
def test_windows_match_scipy(window, fftbins):
    for n in (1, 2, 3, 4, 7, 16, 33):
        np.testing.assert_allclose(get_window("t", window, n, fftbins),
                                   ss.get_window(window, n, fftbins=fftbins),
                                   rtol=1e-13, atol=1e-15)


def test_window_errors():
    with pytest.raises(ValueError, match="welch: argument 'window' names an unknown window"):
        ps.welch(np.ones(16), window="nope")
    with pytest.raises(ValueError, match="'kaiser' needs parameters"):
        ps.welch(np.ones(16), window="kaiser")
    with pytest.raises(ValueError, match="'hann' takes no parameters"):
        ps.stft(np.ones(16), window=("hann", 3))
    with pytest.raises(NotImplementedError, match="argument 'window'.*'dpss'"):
        ps.welch(np.ones(16), window=("dpss", 3))
    with pytest.raises(ValueError, match="only defined for symmetric shapes"):
        ps.welch(np.ones(16), window=("kbd", 3.0))  # get_window's windows are periodic
    np.testing.assert_allclose(get_window("t", ("kbd", 3.0), 8, False),
                               ss.get_window(("kbd", 3.0), 8, fftbins=False), rtol=1e-13)
    with pytest.raises(ValueError, match="even number of points"):
        get_window("t", ("kbd", 3.0), 7, False)
    with pytest.raises(ValueError, match="argument 'window' must be 1-D"):
        ps.welch(np.ones(16), window=np.ones((2, 2)))
    with pytest.raises(ValueError, match="longer than the input"):
        ps.welch(np.ones(4), window=np.ones(8))
    with pytest.raises(ValueError, match="different from the length of window"):
        ps.welch(np.ones(16), window=np.ones(8), nperseg=4)


# -------------------------------------------------------------------------- fftconvolve

@given(st.integers(1, 3), st.data())
@settings(max_examples=25, deadline=None)
def test_fftconvolve_matches_scipy(ndim, data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.complex64, np.complex128]))
    mode = data.draw(st.sampled_from(["full", "same", "valid"]))
    s1 = data.draw(st.lists(st.integers(1, 7), min_size=ndim, max_size=ndim))
    if mode == "valid":  # one input at least as large along every axis
        s2 = [data.draw(st.integers(1, s)) for s in s1]
        if data.draw(st.booleans()):
            s1, s2 = s2, s1
    else:
        s2 = data.draw(st.lists(st.integers(1, 7), min_size=ndim, max_size=ndim))
    a, b = _data(s1, dtype), _data(s2, dtype)
    got = ps.fftconvolve(a, b, mode)
    want = ss.fftconvolve(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64),
                          b.astype(np.complex128 if np.iscomplexobj(b) else np.float64), mode)
    assert got.dtype == dtype
    _close(got, want, dtype, _scale(want))


@pytest.mark.parametrize("axes", [(1,), (-1,), (0, 2), 2])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_axes(axes, mode):
    a, b = _data((3, 6, 5), np.float64), _data((3, 6, 5), np.float64)
    ax = (axes,) if isinstance(axes, int) else axes
    shape_b = [2 if i % 3 in [x % 3 for x in ax] else s for i, s in enumerate(a.shape)]
    b = _data(shape_b, np.float64)
    _close(ps.fftconvolve(a, b, mode, axes=axes), ss.fftconvolve(a, b, mode, axes=axes),
           np.float64, 10)


def test_fftconvolve_dtypes_and_convolve_fft():
    x, y = np.array([1, 2, 3, 2, 1]), np.array([1, 1, 1])
    out = ps.fftconvolve(x, y)  # integers promote to the default float
    assert out.dtype == np.float64
    np.testing.assert_allclose(np.asarray(out), [1, 3, 6, 7, 6, 3, 1], atol=1e-12)
    np.testing.assert_allclose(np.asarray(ps.convolve(x, y, "same", method="fft")),
                               [3, 6, 7, 6, 3], atol=1e-12)
    mixed = ps.fftconvolve(np.ones(4, np.float32), np.ones(3, np.complex64))
    assert mixed.dtype == np.complex64


@pytest.mark.x32
def test_fftconvolve_x32_dtype():
    assert ps.fftconvolve(np.arange(4.0), np.ones(2)).dtype == np.float32


def test_fftconvolve_errors():
    with pytest.raises(ValueError, match="fftconvolve: argument 'mode'"):
        ps.fftconvolve(np.ones(3), np.ones(2), mode="circular")
    with pytest.raises(ValueError, match="same dimensionality"):
        ps.fftconvolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="for 'valid' mode, one input must be at least"):
        ps.fftconvolve(np.ones((3, 2)), np.ones((2, 3)), mode="valid")
    with pytest.raises(ValueError, match="mapped axes must have same shape"):
        ps.fftconvolve(np.ones((3, 4)), np.ones((2, 4)), axes=1)
    with pytest.raises(ValueError, match="argument 'axes'"):
        ps.fftconvolve(np.ones((3, 4)), np.ones((2, 4)), axes=5)


def test_fftconvolve_grads_vmap_jit():
    a, b = RNG.normal(size=7), RNG.normal(size=4)
    for mode in ("full", "same", "valid"):
        check_grads(lambda a, b: ps.fftconvolve(a, b, mode), (a, b), order=2)
    ac, bc = _data(5, np.complex128), _data(3, np.complex128)
    check_grads(lambda a, b: ps.fftconvolve(a, b, "same"), (ac, bc), order=2)
    A, B = RNG.normal(size=(4, 7)), RNG.normal(size=(3, 4))
    got = pb.vmap(ps.fftconvolve, in_axes=(0, 1))(A, B)
    want = np.stack([ss.fftconvolve(A[i], B[:, i]) for i in range(4)])
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-12)
    got = pb.vmap(lambda a: ps.fftconvolve(a, b, "valid"))(A)
    np.testing.assert_allclose(np.asarray(got), [ss.fftconvolve(r, b, "valid") for r in A],
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(pb.jit(ps.fftconvolve, static_argnums=2)(a, b, "same")),
                               np.asarray(ps.fftconvolve(a, b, "same")), rtol=1e-14, atol=1e-14)


# ------------------------------------------------------------------------------ detrend

@given(st.data())
@settings(max_examples=25, deadline=None)
def test_detrend_matches_scipy(data):
    ndim = data.draw(st.integers(1, 3))
    shape = data.draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim))
    axis = data.draw(st.integers(-ndim, ndim - 1))
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.complex128]))
    kind = data.draw(st.sampled_from(["linear", "constant"]))
    n = shape[axis]
    bp = data.draw(st.lists(st.integers(0, n), min_size=1, max_size=3)) if kind == "linear" else 0
    x = _data(shape, dtype)
    got = ps.detrend(x, axis=axis, type=kind, bp=bp)
    want = ss.detrend(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64),
                      axis=axis, type=kind, bp=bp)
    assert got.dtype == dtype
    _close(got, want, dtype, 10 * _scale(x))


def test_detrend_ints_grads_errors():
    got = ps.detrend(np.array([1, 4, 8, 8, 9]))
    np.testing.assert_allclose(np.asarray(got), [-1, 0, 2, 0, -1], atol=1e-12)
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(ps.detrend(np.array([1., 4., 8., 8., 9.]),
                                                     type="constant")), [-5, -2, 2, 2, 3])
    check_grads(lambda x: ps.detrend(x, axis=0, bp=[3]), (RNG.normal(size=(8, 2)),), order=2)
    with pytest.raises(ValueError, match="detrend: argument 'type'"):
        ps.detrend(np.ones(4), type="quadratic")
    with pytest.raises(ValueError, match="argument 'bp'"):
        ps.detrend(np.ones(4), bp=[7])
    with pytest.raises(NotImplementedError, match="overwrite_data"):
        ps.detrend(np.ones(4), overwrite_data=True)


# -------------------------------------------------------------------------- welch / csd

_welch_kw = st.fixed_dictionaries({}, optional={
    "window": st.sampled_from(["hann", "hamming", ("tukey", 0.3), "boxcar", ("kaiser", 4.0)]),
    "detrend": st.sampled_from(["constant", "linear", False]),
    "return_onesided": st.booleans(),
    "scaling": st.sampled_from(["density", "spectrum"]),
    "average": st.sampled_from(["mean", "median"]),
    "fs": st.sampled_from([1.0, 2.5]),
})


def _segment_args(data, n, cap=None):
    nperseg = data.draw(st.one_of(st.none(), st.integers(1, n + 3)) if cap is None else
                        st.integers(1, cap))
    eff = min(256 if nperseg is None else nperseg, n)
    noverlap = data.draw(st.one_of(st.none(), st.integers(0, max(eff - 1, 0))))
    nfft = data.draw(st.one_of(st.none(), st.integers(eff, eff + 5)))
    return dict(nperseg=nperseg, noverlap=noverlap, nfft=nfft)


@given(st.data(), _welch_kw)
@settings(max_examples=40, deadline=None)
def test_welch_matches_scipy(data, kw):
    ndim = data.draw(st.integers(1, 3))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    axis = data.draw(st.integers(-ndim, ndim - 1))
    shape[axis] = data.draw(st.integers(1, 60))
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    kw = dict(kw, **_segment_args(data, shape[axis]), axis=axis)
    x = _data(shape, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, p = ps.welch(x, **kw)
        f2, p2 = ss.welch(x.astype(np.float64), **kw)
    assert p.dtype == dtype and f.dtype == dtype
    _close(f, f2, dtype, _scale(f2))
    _close(p, p2, dtype, _scale(p2))


@given(st.data(), _welch_kw)
@settings(max_examples=40, deadline=None)
def test_csd_matches_scipy(data, kw):
    n = data.draw(st.integers(1, 50))
    ny = data.draw(st.integers(1, 50))
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.complex64, np.complex128]))
    batch = data.draw(st.sampled_from([((), ()), ((2,), (2,)), ((3,), (1,))]))
    if batch[0] != batch[1]:
        ny = n  # SciPy cannot zero-pad a broadcast y
    # JAX caps nperseg at x's length before zero-padding the shorter input (SciPy after):
    # where they differ, draw nperseg within both
    kw = dict(kw, **_segment_args(data, n, cap=n if n < ny else None))
    x, y = _data(batch[0] + (n,), dtype), _data(batch[1] + (ny,), np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, p = ps.csd(x, y, **kw)
        f2, p2 = ss.csd(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64), y, **kw)
    assert p.dtype == np.complex128  # y is float64: the pair promotes
    _close(f, f2, np.float64, _scale(f2))
    _close(p, p2, np.float64, _scale(p2))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_csd_single_precision(dtype):
    x, y = _data((2, 100), dtype), _data((2, 100), dtype)
    f, p = ps.csd(x, y, nperseg=32, average="median")
    assert p.dtype == np.complex64 and f.dtype == np.float32
    f2, p2 = ss.csd(x.astype(np.complex128), y.astype(np.complex128), nperseg=32,
                    average="median", return_onesided=False) if np.iscomplexobj(x) else \
        ss.csd(x.astype(np.float64), y.astype(np.float64), nperseg=32, average="median")
    _close(p, p2, np.float32, _scale(p2))


def test_welch_short_and_empty_signals():
    with pytest.warns(UserWarning, match="nperseg=256 is greater than input_length=10"):
        f, p = ps.welch(np.arange(10.0))
    f2, p2 = ss.welch(np.arange(10.0), nperseg=10)
    _close(p, p2, np.float64, _scale(p2))
    f, p = ps.welch(np.zeros((3, 0)))  # SciPy's empty case: zeros of the input's shape
    assert p.shape == (3, 0) and f.shape == (3, 0)
    f, p = ps.csd(np.zeros((2, 0)), np.zeros((2, 5)))
    assert p.shape == (2, 0) and p.dtype == np.complex128
    f, p = ps.welch(np.array([1.0, 2.0, 3.0]), nperseg=1, noverlap=0)
    np.testing.assert_allclose(np.asarray(p), ss.welch(np.array([1.0, 2.0, 3.0]), nperseg=1, noverlap=0)[1])
    f, p = ps.welch(np.arange(8.0), window=np.ones(8))  # one segment: no averaging axis
    np.testing.assert_allclose(np.asarray(p), ss.welch(np.arange(8.0), window=np.ones(8))[1],
                               atol=1e-12)


def test_welch_csd_x_none_complex_warns():
    x = _data(64, np.complex128)
    with pytest.warns(UserWarning, match="Input data is complex"):
        f, p = ps.welch(x, nperseg=16)
    _close(p, ss.welch(x, nperseg=16, return_onesided=False)[1], np.float64, 1)
    f, p = ps.csd(x, None, nperseg=16, return_onesided=False)
    assert p.dtype == np.float64  # csd(x, None): the PSD, real as JAX's
    _close(p, ss.welch(x, nperseg=16, return_onesided=False)[1], np.float64, 1)


def test_welch_grads_vmap_jit():
    x = RNG.normal(size=40)
    check_grads(lambda x: ps.welch(x, nperseg=16)[1], (x,), order=2)
    check_grads(lambda x: ps.welch(x, nperseg=10, noverlap=3, detrend="linear",
                                   scaling="spectrum", return_onesided=False)[1], (x,), order=2)
    y = RNG.normal(size=40)
    check_grads(lambda x, y: ps.csd(x, y, nperseg=12)[1], (x, y), order=2)
    check_grads(lambda fs: ps.welch(x, fs=fs, nperseg=16)[1], (np.float64(2.0),), order=2)
    X = RNG.normal(size=(3, 40))
    got = pb.vmap(lambda r: ps.welch(r, nperseg=16)[1], in_axes=1)(X.T)
    np.testing.assert_allclose(np.asarray(got), [ss.welch(r, nperseg=16)[1] for r in X],
                               rtol=1e-10)
    got = pb.vmap(lambda r, s: ps.csd(r, s, nperseg=16)[1], in_axes=(0, None))(X, y)
    np.testing.assert_allclose(np.asarray(got), [ss.csd(r, y, nperseg=16)[1] for r in X],
                               rtol=1e-10, atol=1e-14)
    jitted = pb.jit(lambda x, fs: ps.welch(x, fs, nperseg=16, average="median"))
    for a, b in zip(jitted(x, 3.0), ps.welch(x, 3.0, nperseg=16, average="median")):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13, atol=1e-15)


def test_welch_csd_errors():
    x = np.ones(32)
    with pytest.raises(ValueError, match="welch: argument 'noverlap' \\(8\\) must be less than "
                                         "nperseg \\(8\\)"):
        ps.welch(x, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="argument 'nfft' \\(4\\) must be greater"):
        ps.welch(x, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="argument 'nperseg' must be a positive integer"):
        ps.welch(x, nperseg=0)
    with pytest.raises(ValueError, match="argument 'scaling'"):
        ps.welch(x, nperseg=8, scaling="power")
    with pytest.raises(ValueError, match="argument 'average'"):
        ps.welch(x, nperseg=8, average="max")
    with pytest.raises(ValueError, match="argument 'detrend'"):
        ps.welch(x, nperseg=8, detrend=True)
    with pytest.raises(ValueError, match="x and y must have the same rank"):
        ps.csd(np.ones((2, 8)), np.ones(8))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        ps.csd(np.ones((2, 8)), np.ones((3, 8)))
    with pytest.raises(ValueError, match="argument 'axis'"):
        ps.welch(x, axis=2)
    with pytest.raises(pb.ConcretizationTypeError):
        pb.jit(lambda x, n: ps.welch(x, nperseg=n))(x, 8)


# -------------------------------------------------------------------------------- stft

@given(st.data())
@settings(max_examples=40, deadline=None)
def test_stft_matches_scipy(data):
    n = data.draw(st.integers(2, 60))
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.complex64, np.complex128]))
    batch = data.draw(st.sampled_from([(), (2,)]))
    axis = data.draw(st.sampled_from([-1, 0] if batch else [-1]))
    boundary = data.draw(st.sampled_from(["zeros", "even", "odd", "constant", None]))
    nperseg = data.draw(st.integers(1, n))
    if boundary == "odd":  # the extension needs nperseg // 2 < n
        nperseg = min(nperseg, 2 * (n - 1) + 1)
    kw = dict(nperseg=nperseg, boundary=boundary, padded=data.draw(st.booleans()),
              noverlap=data.draw(st.one_of(st.none(), st.integers(0, nperseg - 1))),
              nfft=data.draw(st.one_of(st.none(), st.integers(nperseg, nperseg + 4))),
              detrend=data.draw(st.sampled_from([False, "constant", "linear"])),
              return_onesided=data.draw(st.booleans()),
              window=data.draw(st.sampled_from(["hann", "hamming", ("tukey", 0.5)])),
              fs=data.draw(st.sampled_from([1.0, 4.0])))
    x = _data(batch + (n,), dtype)
    if axis == 0:
        x = np.moveaxis(x, -1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, t, z = ps.stft(x, axis=axis, **kw)
        f2, t2, z2 = ss.stft(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64),
                             axis=axis, **kw)
    assert z.dtype == (np.complex64 if np.dtype(dtype) in (np.float32, np.complex64)
                       else np.complex128)
    _close(f, f2, dtype, _scale(f2))
    _close(t, t2, dtype, _scale(t2))
    _close(z, z2, dtype, _scale(z2))


def test_stft_grads_vmap_jit_errors():
    x = RNG.normal(size=30)
    check_grads(lambda x: ps.stft(x, nperseg=8, boundary="odd")[2], (x,), order=2)
    X = RNG.normal(size=(3, 30))
    got = pb.vmap(lambda r: ps.stft(r, nperseg=8)[2])(X)
    np.testing.assert_allclose(np.asarray(got), [ss.stft(r, nperseg=8)[2] for r in X],
                               atol=1e-13)
    a = pb.jit(lambda x: ps.stft(x, nperseg=8, window="blackman")[2])(x)
    np.testing.assert_allclose(np.asarray(a), np.asarray(ps.stft(x, nperseg=8,
                                                                 window="blackman")[2]),
                               rtol=1e-13, atol=1e-15)
    with pytest.raises(ValueError, match="stft: argument 'boundary'"):
        ps.stft(x, nperseg=8, boundary="periodic")
    with pytest.raises(ValueError, match="stft: argument 'noverlap' \\(9\\) must be less"):
        ps.stft(x, nperseg=8, noverlap=9)


# ------------------------------------------------------------------------------- istft

@given(st.data())
@settings(max_examples=40, deadline=None)
def test_istft_matches_scipy_and_round_trips(data):
    n = data.draw(st.integers(8, 60))
    nperseg = data.draw(st.integers(2, min(n, 24)))
    noverlap = data.draw(st.integers(1, nperseg - 1))  # JAX reads noverlap=0 as the default
    window = data.draw(st.sampled_from(["hann", "hamming", "boxcar", ("tukey", 0.5)]))
    if window == "boxcar" or window == ("tukey", 0.5):
        nfft = data.draw(st.one_of(st.none(), st.integers(nperseg, nperseg + 3)))
    else:
        nfft = None
    onesided = data.draw(st.booleans())
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    if nfft is None and nperseg % 2 and onesided:
        nfft = nperseg
    x = _data((2, n), dtype)
    kw = dict(nperseg=nperseg, noverlap=noverlap, nfft=nfft, window=window)
    _, _, z = ss.stft(x.astype(np.float64), return_onesided=onesided, **kw)
    z = z.astype(np.complex64 if dtype == np.float32 else np.complex128)
    t, y = ps.istft(z, input_onesided=onesided, **kw)
    t2, y2 = ss.istft(z.astype(np.complex128), input_onesided=onesided, **kw)
    want_dt = dtype if onesided else np.dtype(dtype).type(0).astype(z.dtype).dtype
    assert y.dtype == want_dt
    _close(y, y2, dtype, _scale(y2))
    _close(t, t2, dtype, _scale(t2))
    if ss.check_NOLA(window, nperseg, noverlap):
        _close(np.real(np.asarray(y))[..., :n], x, dtype, 10 * _scale(x))


def test_istft_round_trip_axes_and_batch():
    x = RNG.normal(size=(3, 4, 50))
    f, t, z = ps.stft(x, nperseg=16, axis=-1)  # (3, 4, nfreq, nseg)
    zt = np.moveaxis(np.asarray(z), (-2, -1), (0, 2))  # freq first, time in the middle
    _, y = ps.istft(zt, nperseg=16, freq_axis=0, time_axis=2)
    _, y2 = ss.istft(zt, nperseg=16, freq_axis=0, time_axis=2)
    np.testing.assert_allclose(np.asarray(y), y2, atol=1e-12)
    _, y = ps.istft(z, nperseg=16)
    np.testing.assert_allclose(np.asarray(y)[..., :50], x, atol=1e-12)


def test_istft_jax_quirks():
    # JAX reads ``noverlap or nperseg // 2``: noverlap=0 is the default overlap, where SciPy
    # would take no overlap (values recorded from jax 0.10.2).
    z = np.asarray(ss.stft(np.arange(16.0), nperseg=4, noverlap=2)[2])
    _, y = ps.istft(z, nperseg=4, noverlap=0)
    _, y_default = ps.istft(z, nperseg=4)
    np.testing.assert_allclose(np.asarray(y), np.asarray(y_default))
    np.testing.assert_allclose(np.asarray(y), np.arange(16.0), atol=1e-12)
    # the times count the first axis of the result (SciPy's and JAX's behaviour)
    t, y = ps.istft(np.ones((3, 5, 4), np.complex128))
    assert t.shape == (3,) and y.shape == (3, 12)


def test_istft_grads_vmap_jit_errors():
    z = ss.stft(RNG.normal(size=30), nperseg=8)[2]
    check_grads(lambda z: ps.istft(z, nperseg=8)[1], (z,), order=2)
    Z = np.stack([ss.stft(RNG.normal(size=30), nperseg=8)[2] for _ in range(3)], -1)
    got = pb.vmap(lambda z: ps.istft(z)[1], in_axes=2)(Z)
    np.testing.assert_allclose(np.asarray(got), [ss.istft(Z[..., i])[1] for i in range(3)],
                               atol=1e-12)
    a = pb.jit(lambda z: ps.istft(z, window=("kaiser", 2.0))[1])(z)
    np.testing.assert_allclose(np.asarray(a), np.asarray(ps.istft(z, window=("kaiser", 2.0))[1]),
                               rtol=1e-13, atol=1e-15)
    with pytest.raises(ValueError, match="istft: argument 'Zxx'.*at least 2d"):
        ps.istft(np.ones(5, np.complex128))
    with pytest.raises(ValueError, match="differing time and frequency axes"):
        ps.istft(z, time_axis=0, freq_axis=-2)
    with pytest.raises(ValueError, match="istft: argument 'noverlap' \\(8\\) must be less"):
        ps.istft(z, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="argument 'nfft': FFT length \\(8\\) must be longer"):
        ps.istft(z, nperseg=9, nfft=8)
    with pytest.raises(ValueError, match="argument 'window' must have length of 8"):
        ps.istft(z, window=np.ones(7))


# ---------------------------------------------------------------------- JAX as an oracle

@pytest.fixture
def jax_x64():
    """JAX with x64 on for one test, restored after (other tests use JAX in its default mode)."""
    jax = pytest.importorskip("jax")
    saved = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", saved)


def test_against_jax_quirks(jax_x64):
    jsig = pytest.importorskip("jax.scipy.signal")
    x = RNG.normal(size=(3, 40))

    def cb(d):  # a detrend callable that sees JAX's segment layout
        return d - 0.5 * d.mean(axis=-1, keepdims=True) - 0.1 * d[..., :1]
    for axis in (-1, 0):
        xx = x if axis == -1 else x.T
        np.testing.assert_allclose(np.asarray(ps.welch(xx, nperseg=8, detrend=cb, axis=axis)[1]),
                                   np.asarray(jsig.welch(xx, nperseg=8, detrend=cb,
                                                         axis=axis)[1]), rtol=1e-12)
    z = np.asarray(jsig.stft(x[0], nperseg=8, noverlap=0)[2])
    np.testing.assert_allclose(np.asarray(ps.istft(z, noverlap=0)[1]),
                               np.asarray(jsig.istft(z, noverlap=0)[1]), atol=1e-12)
    np.testing.assert_allclose(np.asarray(ps.welch(x[0], nperseg=1, noverlap=0)[1]),
                               np.asarray(jsig.welch(x[0], nperseg=1, noverlap=0)[1]))


@pytest.mark.x32
def test_x32_dtypes_as_jax():
    # dtypes and shapes recorded from jax 0.10.2 with x64 off (float64 data becomes float32)
    x, y = RNG.normal(size=(2, 100)), RNG.normal(size=(2, 90))
    f, p = ps.welch(x, nperseg=32)
    assert (f.dtype, p.dtype, p.shape) == (np.float32, np.float32, (2, 17))
    f, p = ps.csd(x, y, nperseg=32, average="median")
    assert (f.dtype, p.dtype, p.shape) == (np.float32, np.complex64, (2, 17))
    f, t, z = ps.stft(x, fs=np.float64(3.0), nperseg=16)
    assert (f.dtype, t.dtype, z.dtype, z.shape) == (np.float32, np.float32, np.complex64,
                                                    (2, 9, 14))
    t, r = ps.istft(np.asarray(z).astype(np.complex128), window=np.hanning(16))
    assert (t.dtype, r.dtype, r.shape) == (np.float32, np.float32, (2, 104))
    assert ps.detrend(np.arange(10)).dtype == np.float32
    f, p = ps.welch(np.arange(64), nperseg=16)
    assert (f.dtype, p.dtype) == (np.float32, np.float32)
