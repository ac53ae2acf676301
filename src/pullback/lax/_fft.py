"""The FFT: ``lax.fft`` with ``lax.FftType``, as ``jax.lax.fft``."""
from __future__ import annotations

from typing import Any, Sequence

from ..primitives.fft import FftType, fft_p
from ..tracer import core, dtypes
from ._conversion import _convert_element_type
from ._operands import ArrayLike

__all__ = ["fft", "FftType", "fft_p"]

_TYPES = {"FFT": FftType.FFT, "IFFT": FftType.IFFT, "RFFT": FftType.RFFT,
          "IRFFT": FftType.IRFFT}


def fft(x: ArrayLike, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """The fast Fourier transform of ``x`` over its ``len(fft_lengths)`` trailing dimensions.

    Args:
      x: the operand. RFFT takes a real array (integers become floating); the other types a
        complex one (real and integer operands become complex).
      fft_type: a :class:`FftType` or its name ("FFT", "IFFT", "RFFT", "IRFFT").
      fft_lengths: the lengths of the transformed dimensions (1 to 3 of them). For IRFFT the
        last is the real output's length n; ``x``'s last dimension must be n // 2 + 1.

    Returns:
      The transform: complex64/complex128 for FFT, IFFT and RFFT, float32/float64 for IRFFT.
      IFFT and IRFFT are normalised by 1 / prod(fft_lengths).
    """
    if isinstance(fft_type, str):
        if fft_type not in _TYPES:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        typ = _TYPES[fft_type]
    elif isinstance(fft_type, FftType):
        typ = fft_type
    else:
        raise TypeError(f"Unknown FFT type value '{fft_type}'")
    if dtypes.is_python_scalar(x):
        x = _convert_element_type(x, dtypes.dtype_of_python(x)[0], weak_type=True)
    dt = core.get_aval(x).dtype
    if typ == FftType.RFFT:
        if dtypes.is_complex(dt):
            raise ValueError("only real valued inputs supported for rfft")
        new = dtypes.to_inexact(dt)  # (float16/bfloat16 stay, and fail: JAX's ValueError)
    else:
        new = dt if dtypes.is_complex(dt) else (
            dtypes.complex128 if dtypes.to_inexact(dt) == dtypes.float64 else dtypes.complex64)
    x = _convert_element_type(x, new, weak_type=core.get_aval(x).weak_type)
    if len(fft_lengths) == 0:
        return x
    lengths = []
    for n in fft_lengths:
        if isinstance(n, bool) or not hasattr(n, "__index__"):
            raise TypeError(f"fft: argument 'fft_lengths' must hold integers, got {fft_lengths!r}")
        lengths.append(int(n))
    return fft_p.bind(x, fft_type=typ, fft_lengths=tuple(lengths))
