"""The FFT's accuracy sweep (issue 29): RMS relative error of jnp.fft.fft / rfft against a float64
reference (numpy.fft, pocketfft) for every length 1..4096 and a few primes up to 10^6, float32
and float64; prints the worst ratio to the bound (2e-7 log2 n for float32, 1e-15 log2 n for
float64) and exits non-zero if any length exceeds it.

    python scripts/fft_accuracy.py [max_n]
"""
from __future__ import annotations

import sys

import numpy as np

import pullback as pb
import pullback.numpy as jnp


def rms_rel(got, want):
    return np.sqrt(np.mean(np.abs(got - want) ** 2) / np.mean(np.abs(want) ** 2))


def main() -> int:
    pb.config.update("jax_enable_x64", True)
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    rng = np.random.default_rng(0)
    worst = {"f32": (0.0, 0), "f64": (0.0, 0), "f64 rfft": (0.0, 0)}
    sizes = list(range(1, top + 1)) + [10007, 65537, 131071, 524287, 999983, 1000003]
    for n in sizes:
        x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        want = np.fft.fft(x)
        lg = max(np.log2(n), 1)
        for key, got, bound in (
                ("f32", np.asarray(jnp.fft.fft(x.astype(np.complex64))), 2e-7),
                ("f64", np.asarray(jnp.fft.fft(x)), 1e-15),
                ("f64 rfft", np.asarray(jnp.fft.rfft(x.real)), 1e-15)):
            ref = want if key != "f64 rfft" else np.fft.rfft(x.real)
            r = rms_rel(got, ref) / (bound * lg)
            if r > worst[key][0]:
                worst[key] = (r, n)
    bad = False
    for key, (r, n) in worst.items():
        print(f"{key}: worst error / bound = {r:.3f} (n = {n})")
        bad |= r > 1
    return int(bad)


if __name__ == "__main__":
    sys.exit(main())
