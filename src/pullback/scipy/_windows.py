"""Window coefficients for ``pullback.scipy.signal``'s spectral functions: SciPy's
``get_window`` names, aliases and parameter tuples.

JAX asks SciPy's ``get_window`` for every named window but "hann" and casts the float64 result
to the data's dtype; the coefficients depend only on static Python values (the name, its
parameters and the length), so they are computed here once at trace time with NumPy in float64
and enter the program as constants, as JAX's do.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

__all__ = ["get_window"]


def _cosine_sum(m: int, coeffs: tuple[float, ...]) -> np.ndarray:
    # sum_k a_k cos(k t) over t in [-pi, pi]: the generalized cosine windows
    t = np.linspace(-np.pi, np.pi, m)
    return sum(a * np.cos(k * t) for k, a in enumerate(coeffs)) + np.zeros(m)


def _boxcar(m: int) -> np.ndarray:
    return np.ones(m)


def _triang(m: int) -> np.ndarray:
    n = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        half = (2 * n - 1.0) / m
        return np.concatenate([half, half[::-1]])
    half = 2 * n / (m + 1.0)
    return np.concatenate([half, half[-2::-1]])


def _bartlett(m: int) -> np.ndarray:
    n = np.arange(m)
    return np.where(n <= (m - 1) / 2.0, 2.0 * n / (m - 1), 2.0 - 2.0 * n / (m - 1))


def _parzen(m: int) -> np.ndarray:
    n = np.arange(-(m - 1) / 2.0, (m - 1) / 2.0 + 0.5, 1.0)
    outer = n[n < -(m - 1) / 4.0]
    inner = n[np.abs(n) <= (m - 1) / 4.0]
    w_out = 2 * (1 - np.abs(outer) / (m / 2.0)) ** 3.0
    r = np.abs(inner) / (m / 2.0)
    w_in = 1 - 6 * r ** 2.0 + 6 * r ** 3.0
    return np.concatenate([w_out, w_in, w_out[::-1]])


def _bohman(m: int) -> np.ndarray:
    f = np.abs(np.linspace(-1, 1, m)[1:-1])
    inner = (1 - f) * np.cos(np.pi * f) + 1.0 / np.pi * np.sin(np.pi * f)
    return np.concatenate([[0.0], inner, [0.0]])


def _barthann(m: int) -> np.ndarray:
    f = np.abs(np.arange(m) / (m - 1.0) - 0.5)
    return 0.62 - 0.48 * f + 0.38 * np.cos(2 * np.pi * f)


def _cosine(m: int) -> np.ndarray:
    return np.sin(np.pi / m * (np.arange(m) + 0.5))


def _lanczos(m: int) -> np.ndarray:
    def right(lo: float, hi: int) -> np.ndarray:
        return np.sinc(2.0 * np.arange(lo, hi) / (hi - 1) - 1.0)
    if m % 2 == 0:
        half = right(m / 2, m)
        return np.concatenate([half[::-1], half])
    half = right((m + 1) / 2, m)
    return np.concatenate([half[::-1], [1.0], half])


def _general_hamming(m: int, alpha: float) -> np.ndarray:
    return _cosine_sum(m, (alpha, 1.0 - alpha))


def _tukey(m: int, alpha: float = 0.5) -> np.ndarray:
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1.0:
        return _general_hamming(m, 0.5)
    n = np.arange(m)
    width = int(np.floor(alpha * (m - 1) / 2.0))
    n1, n3 = n[:width + 1], n[m - width - 1:]
    w1 = 0.5 * (1 + np.cos(np.pi * (-1 + 2.0 * n1 / alpha / (m - 1))))
    w3 = 0.5 * (1 + np.cos(np.pi * (-2.0 / alpha + 1 + 2.0 * n3 / alpha / (m - 1))))
    return np.concatenate([w1, np.ones(m - 2 * (width + 1)), w3])


def _kaiser(m: int, beta: float) -> np.ndarray:
    n = np.arange(m)
    half = (m - 1) / 2.0
    return np.i0(beta * np.sqrt(1 - ((n - half) / half) ** 2.0)) / np.i0(float(beta))


def _gaussian(m: int, std: float) -> np.ndarray:
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.exp(-n ** 2 / (2 * std * std))


def _general_gaussian(m: int, p: float, sig: float) -> np.ndarray:
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.exp(-0.5 * np.abs(n / sig) ** (2 * p))


def _exponential(m: int, center: float | None = None, tau: float = 1.0) -> np.ndarray:
    if center is None:
        center = (m - 1) / 2
    return np.exp(-np.abs(np.arange(m) - center) / tau)


def _general_cosine(m: int, a: Any) -> np.ndarray:
    return _cosine_sum(m, tuple(float(v) for v in np.ravel(a)))


def _chebwin(m: int, at: float) -> np.ndarray:
    # Dolph-Chebyshev: the inverse DFT of the Chebyshev polynomial sampled on the unit circle
    order = m - 1.0
    beta = np.cosh(np.arccosh(10 ** (abs(at) / 20.0)) / order)
    xk = beta * np.cos(np.pi * np.arange(m) / m)
    p = np.zeros(m)
    hi, lo, mid = xk > 1, xk < -1, np.abs(xk) <= 1
    p[hi] = np.cosh(order * np.arccosh(xk[hi]))
    p[lo] = (2 * (m % 2) - 1) * np.cosh(order * np.arccosh(-xk[lo]))
    p[mid] = np.cos(order * np.arccos(xk[mid]))
    if m % 2:
        w = np.real(np.fft.fft(p))[:(m + 1) // 2]
        w = np.concatenate([w[1:][::-1], w])
    else:
        w = np.real(np.fft.fft(p * np.exp(1j * np.pi / m * np.arange(m))))[1:m // 2 + 1]
        w = np.concatenate([w[::-1], w])
    return w / np.max(w)


def _taylor(m: int, nbar: int = 4, sll: float = 30, norm: bool = True) -> np.ndarray:
    a = np.arccosh(10 ** (sll / 20)) / np.pi
    s2 = nbar ** 2 / (a ** 2 + (nbar - 0.5) ** 2)
    ma = np.arange(1, nbar, dtype=np.float64)
    m2 = ma * ma
    fm = np.empty(nbar - 1)
    for i in range(nbar - 1):
        sign = 1.0 if i % 2 == 0 else -1.0
        numer = sign * np.prod(1 - m2[i] / s2 / (a ** 2 + (ma - 0.5) ** 2))
        denom = 2 * np.prod(1 - m2[i] / m2[:i]) * np.prod(1 - m2[i] / m2[i + 1:])
        fm[i] = numer / denom

    def at(n: Any) -> np.ndarray:
        return 1 + 2 * np.matmul(fm, np.cos(2 * np.pi * ma[:, None] * (n - m / 2.0 + 0.5) / m))
    w = at(np.arange(m))
    return w / at((m - 1) / 2) if norm else w


def _kbd(m: int, beta: float) -> np.ndarray:
    csum = np.cumsum(_kaiser(m // 2 + 1, beta))
    half = np.sqrt(csum[:-1] / csum[-1])
    return np.concatenate([half, half[::-1]])


def _fixed(coeffs: tuple[float, ...]) -> Callable[[int], np.ndarray]:
    return lambda m: _cosine_sum(m, coeffs)


# name -> (function, parameters: False none, True required, None optional); SciPy's aliases
_WINDOWS: dict[str, tuple[Callable[..., np.ndarray], bool | None]] = {}
for _names, _entry in [
        (("barthann", "brthan", "bth"), (_barthann, False)),
        (("bartlett", "bart", "brt"), (_bartlett, False)),
        (("blackman", "black", "blk"), (_fixed((0.42, 0.50, 0.08)), False)),
        (("blackmanharris", "blackharr", "bkh"),
         (_fixed((0.35875, 0.48829, 0.14128, 0.01168)), False)),
        (("bohman", "bman", "bmn"), (_bohman, False)),
        (("boxcar", "box", "ones", "rect", "rectangular"), (_boxcar, False)),
        (("cosine", "halfcosine"), (_cosine, False)),
        (("exponential", "poisson"), (_exponential, None)),
        (("flattop", "flat", "flt"),
         (_fixed((0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368)), False)),
        (("gaussian", "gauss", "gss"), (_gaussian, True)),
        (("general cosine", "general_cosine"), (_general_cosine, True)),
        (("general gaussian", "general_gaussian", "general gauss", "general_gauss", "ggs"),
         (_general_gaussian, True)),
        (("general hamming", "general_hamming"), (_general_hamming, True)),
        (("hamming", "hamm", "ham"), (_fixed((0.54, 0.46)), False)),
        (("hann", "han"), (_fixed((0.5, 0.5)), False)),
        (("kaiser", "ksr"), (_kaiser, True)),
        (("lanczos", "sinc"), (_lanczos, False)),
        (("nuttall", "nutl", "nut"),
         (_fixed((0.3635819, 0.4891775, 0.1365995, 0.0106411)), False)),
        (("parzen", "parz", "par"), (_parzen, False)),
        (("triang", "triangle", "tri"), (_triang, False)),
        (("tukey", "tuk"), (_tukey, None)),
        (("chebwin", "cheb"), (_chebwin, True)),
        (("taylor", "taylorwin"), (_taylor, None)),
        (("kaiser_bessel_derived", "kaiser bessel derived", "kbd"), (_kbd, True))]:
    for _n in _names:
        _WINDOWS[_n] = _entry
# SciPy's Slepian window needs a tridiagonal eigen-solve; not here yet
_UNSUPPORTED = ("dpss",)


def get_window(op: str, window: str | tuple, nx: int, fftbins: bool = True) -> np.ndarray:
    """SciPy's ``get_window(window, nx, fftbins)`` as float64 NumPy coefficients.

    ``window`` is a name or a tuple ``(name, *parameters)``; a name may end in ``_periodic`` or
    ``_symmetric``, overriding ``fftbins``. Periodic (``fftbins=True``) windows are the
    symmetric window of ``nx + 1`` points without its last point.
    """
    nx = operator.index(nx)
    if nx <= 0:
        raise ValueError(f"{op}: the window length must be a positive integer, got {nx}")
    if isinstance(window, tuple) and (not window or not isinstance(window[0], str)):
        raise ValueError(f"{op}: argument 'window' is a tuple whose first entry is not a "
                         f"window name: {window!r}")
    name = window if isinstance(window, str) else window[0]
    args = () if isinstance(window, str) else tuple(window[1:])
    sym = not fftbins
    if name.endswith("_symmetric"):
        sym, name = True, name[:-len("_symmetric")]
    elif name.endswith("_periodic"):
        sym, name = False, name[:-len("_periodic")]
    if name in _UNSUPPORTED:
        raise NotImplementedError(f"{op}: argument 'window': the {name!r} window is not "
                                  "supported; pass its coefficients as an array")
    if name not in _WINDOWS:
        raise ValueError(f"{op}: argument 'window' names an unknown window {window!r}")
    func, params = _WINDOWS[name]
    if params is False and args:
        raise ValueError(f"{op}: argument 'window': {name!r} takes no parameters, got "
                         f"{window!r}")
    if params is True and not args:
        raise ValueError(f"{op}: argument 'window': {name!r} needs parameters, e.g. "
                         f"({name!r}, value); got {window!r}")
    if func is _kbd and not sym:
        raise ValueError(f"{op}: argument 'window': Kaiser-Bessel Derived windows are only "
                         "defined for symmetric shapes")
    if func is _kbd and nx % 2:
        raise ValueError(f"{op}: argument 'window': Kaiser-Bessel Derived windows are only "
                         "defined for an even number of points")
    if func is _exponential and not sym and args and args[0] is not None:
        raise ValueError(f"{op}: argument 'window': an exponential window with a center "
                         "must be symmetric")
    if nx == 1:
        return np.ones(1)
    m = nx if sym else nx + 1
    w = np.asarray(func(m, *args), dtype=np.float64)
    return w if sym else w[:-1]


def hann_jax(nx: int) -> np.ndarray:
    """JAX's own "hann" (not SciPy's): sin(pi n / nx)**2, which JAX computes without SciPy."""
    if nx == 1:
        return np.ones(1)
    return np.sin(np.linspace(0, math.pi, nx, endpoint=False)) ** 2
