"""The FFT primitive (backends/cpu/csrc/fft.c): ``fft`` with ``fft_type`` in :class:`FftType`
and ``fft_lengths`` over the 1-3 trailing dimensions, as JAX's ``lax.fft_p``.

Types (as XLA): FFT and IFFT map complex to complex of one shape (IFFT normalised by
1/prod(lengths)); RFFT maps real (float32/float64) to complex (complex64/complex128), the last
dimension n becoming n // 2 + 1; IRFFT the reverse (only the real parts of the zero and, for
even n, Nyquist frequencies count).

Derivatives: the primitive is linear. Its transpose is JAX's (no conjugation except where a
real side meets a complex one): FFT and IFFT are symmetric matrices, so each transposes to
itself; IRFFT transposes to conj(mask * RFFT(ct)) / N (mask 2 on the frequencies that stand
for a Hermitian pair, 1 on the zero and Nyquist ones); RFFT transposes to
N * IRFFT(conj(ct) / mask), which is real(F^T [ct, 0]) computed in O(N log N).
"""
from __future__ import annotations

import enum
import math
import struct

import numpy as np

from ..tracer import dtypes
from ..tracer.array import Array
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from . import elementwise as _ew, movement as _mv
from .rules import Kernel, linear_jvp, linear_transpose, move_bdim


class FftType(enum.IntEnum):
    """The kind of transform (``jax.lax.FftType``)."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


_COMPLEX = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
_REAL = {v: k for k, v in _COMPLEX.items()}


# ---- checking ----

def _fft_aval(x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]
              ) -> ShapedArray:
    fft_type = FftType(fft_type)
    lengths = tuple(fft_lengths)
    r = len(lengths)
    if not 1 <= r <= 3:
        raise ValueError(f"fft: argument 'fft_lengths' must hold 1 to 3 lengths, got {lengths}")
    if any(not isinstance(n, (int, np.integer)) or n < 0 for n in lengths):
        raise ValueError(f"fft: argument 'fft_lengths' must hold non-negative lengths, got "
                         f"{lengths}")
    if r > x.ndim:
        raise ValueError(f"fft: argument 'operand' of shape {x.shape} must have at least as many "
                         f"dimensions as fft_lengths {lengths}")
    if fft_type == FftType.RFFT:
        if x.dtype not in _REAL:
            raise ValueError(f"fft: argument 'operand' of an RFFT must be float32 or float64, "
                             f"got {x.dtype}")
        if lengths[-1] == 0:
            raise ValueError(f"fft: an RFFT's last length in 'fft_lengths' must be positive, "
                             f"got {lengths}")
        if x.shape[-r:] != lengths:
            raise ValueError(f"fft: RFFT argument 'operand' of shape {x.shape} must end in the "
                             f"fft_lengths {lengths}")
        return ShapedArray(x.shape[:-1] + (lengths[-1] // 2 + 1,), _REAL[x.dtype], x.weak_type)
    if x.dtype not in _COMPLEX:
        raise ValueError(f"fft: argument 'operand' of an {fft_type.name} must be complex64 or "
                         f"complex128, got {x.dtype}")
    if fft_type == FftType.IRFFT:
        if x.shape[-r:-1] != lengths[:-1] or x.shape[-1] != lengths[-1] // 2 + 1:
            raise ValueError(f"fft: IRFFT argument 'operand' of shape {x.shape} must end in "
                             f"{lengths[:-1] + (lengths[-1] // 2 + 1,)} for fft_lengths {lengths}")
        return ShapedArray(x.shape[:-r] + lengths, _COMPLEX[x.dtype], x.weak_type)
    if x.shape[-r:] != lengths:
        raise ValueError(f"fft: {fft_type.name} argument 'operand' of shape {x.shape} must end "
                         f"in the fft_lengths {lengths}")
    return x


# ---- the NumPy oracle ----

def _fft_reference(x: np.ndarray, *, fft_type: FftType, fft_lengths: tuple[int, ...]
                   ) -> np.ndarray:
    fft_type = FftType(fft_type)
    axes = tuple(range(-len(fft_lengths), 0))
    if fft_type == FftType.FFT:
        out = np.fft.fftn(x, axes=axes)
        dt = x.dtype
    elif fft_type == FftType.IFFT:
        out = np.fft.ifftn(x, axes=axes)
        dt = x.dtype
    elif fft_type == FftType.RFFT:
        out = np.fft.rfftn(x, axes=axes)
        dt = _REAL[x.dtype]
    else:
        out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
        dt = _COMPLEX[x.dtype]
    return np.asarray(out).astype(dt)


# ---- rules ----

def _mask(ct, n: int, value: float, ndim: int, shape: tuple[int, ...], scale: float = 1.0):
    """``ct``'s dtype array over ``shape``: ``scale`` at frequency 0 (and n/2 for even n) of the
    last axis, ``value * scale`` at the frequencies standing for a Hermitian pair."""
    h = n // 2 + 1
    m = np.full(h, value * scale, get_aval(ct).dtype)
    m[0] = scale
    if n % 2 == 0:
        m[-1] = scale
    return _mv.broadcast_in_dim_p.bind(Array(m), shape=shape, broadcast_dimensions=(ndim - 1,))


def _fft_transpose(ct, x, *, fft_type: FftType, fft_lengths: tuple[int, ...]):
    fft_type = FftType(fft_type)
    N = math.prod(fft_lengths)
    if fft_type == FftType.RFFT:
        # N folded into the half-spectrum's mask: IRFFT's output is the largest array here, so
        # scaling it afterwards would cost a pass of its own over twice as many values
        aval = get_aval(ct)
        y = _ew.mul_p.bind(_ew.conj_p.bind(ct), _mask(ct, fft_lengths[-1], 0.5, aval.ndim,
                                                      aval.shape, N))
        return [fft_p.bind(y, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)]
    if fft_type == FftType.IRFFT:
        y = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
        aval = get_aval(y)
        y = _ew.mul_p.bind(y, _mask(y, fft_lengths[-1], 2.0, aval.ndim, aval.shape, 1.0 / N))
        return [_ew.conj_p.bind(y)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


def _fft_batch(vals, dims, *, fft_type, fft_lengths):
    (x,), (d,) = vals, dims
    # the transformed dimensions are trailing: a leading batch dimension is one more batch
    x = move_bdim(x, d, 0, get_aval(x).shape[d])
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


# ---- the primitive ----

fft_p = Primitive("fft")
fft_p.abstract_eval = _fft_aval
fft_p.reference = _fft_reference
# csrc/fft.c: fft_params {int64 n[3]; int32 fft_type, rank}
_FFT_PARAMS = struct.Struct("=3q2i")


def _pack(x, *, fft_type, fft_lengths) -> bytes:
    n = tuple(int(v) for v in fft_lengths) + (0,) * (3 - len(fft_lengths))
    return _FFT_PARAMS.pack(*n, int(fft_type), len(fft_lengths))


fft_p.cpu = Kernel(fft_p, "fft", _pack)
fft_p.jvp = linear_jvp(fft_p)
fft_p.transpose = linear_transpose(_fft_transpose)
fft_p.batch = _fft_batch
