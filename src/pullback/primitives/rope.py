"""Rotary position embeddings (backends/cpu/csrc/rope.c): the ``rope`` primitive behind
``pullback.nn.rope`` and ``pullback.nn.rope_axial``.

``rope(x, positions)`` turns pairs of x's features (x is (..., T, H, D), positions
x.shape[:-2]) by ``position * frequency``: rotate-half pairs (i, i + R/2), or interleaved
pairs (2i, 2i + 1); features past ``rotary_dim`` R pass through. With ``end_x > 0`` there are
no positions: SAM 2's axial 2-D form (interleaved, the first D/4 pairs turn with
t mod end_x, the last D/4 with t div end_x).

The primitive is a family indexed by ``order`` k and ``sign`` s (rope.c's header): member
(k, s) is ``f^k R(s (phi + k pi/2))`` on the rotated pairs and, for k > 0, zero on the
pass-through features. It is linear in x; d/d positions of (k, s) is (k + 1, s) times the
positions' tangent, and the transpose in x of (k, s) is (k, -s), so jvp, vjp, vmap and every
higher order are this one kernel.
"""
from __future__ import annotations

import struct

import numpy as np

from ..tracer import dtypes
from ..tracer.avals import ShapedArray
from ..tracer.core import Primitive, get_aval
from . import conversion as _cv
from .building_blocks import broadcast_in_dim_p, mul_p
from .reductions import FLOATING, _INTS, check_dtype
from .rules import (Kernel, Zero, add_tangents, batch_size, is_undefined, move_bdim,
                    tangent_aval)

POSITIONS = (FLOATING[0] + _INTS, "an integer or floating")


# ---- the NumPy oracle ----

def _angles(x: np.ndarray, positions: np.ndarray | None, theta: float, rotary_dim: int,
            end_x: int, end_y: int):
    """(angles (..., T, P), frequencies (P,)) in the compute type (float64 for float64 x)."""
    ct = np.float64 if x.dtype == np.float64 else np.float32
    D, T = x.shape[-1], x.shape[-3]
    if end_x:
        i = np.arange(D // 2) % (D // 4)
        freq = (1.0 / theta ** (4.0 * i / D)).astype(ct)
        t = np.arange(T)
        p = np.where(np.arange(D // 2) < D // 4, (t % end_x)[:, None], (t // end_x)[:, None])
        return p.astype(ct) * freq, freq
    freq = (1.0 / theta ** (2.0 * np.arange(rotary_dim // 2) / rotary_dim)).astype(ct)
    return positions.astype(ct)[..., None] * freq, freq


def rope_reference(x: np.ndarray, positions: np.ndarray | None = None, *, theta: float,
                   rotary_dim: int, interleaved: bool, end_x: int, end_y: int, order: int,
                   sign: int) -> np.ndarray:
    with np.errstate(all="ignore"):  # inf positions or x: IEEE results, as the kernel's
        return _rope_reference(x, positions, theta, rotary_dim, interleaved, end_x, end_y,
                               order, sign)


def _rope_reference(x, positions, theta, rotary_dim, interleaved, end_x, end_y, order, sign):
    ct = np.float64 if x.dtype == np.float64 else np.float32
    ang, freq = _angles(x, positions, theta, rotary_dim, end_x, end_y)
    ang = ang[..., None, :]  # over heads
    c, s = np.cos(ang).astype(ct), sign * np.sin(ang).astype(ct)
    for _ in range((sign * order) % 4):  # quarter turns: (c, s) * i
        c, s = -s, c
    scale = freq.astype(ct) ** order
    c, s = c * scale, s * scale
    xf = x.astype(ct)
    R = ang.shape[-1] * 2
    if interleaved or end_x:
        a, b = xf[..., 0:R:2], xf[..., 1:R:2]
    else:
        a, b = xf[..., :R // 2], xf[..., R // 2:R]
    ya, yb = a * c - b * s, a * s + b * c
    y = xf.copy() if order == 0 else np.zeros_like(xf)
    if interleaved or end_x:
        y[..., 0:R:2], y[..., 1:R:2] = ya, yb
    else:
        y[..., :R // 2], y[..., R // 2:R] = ya, yb
    return y.astype(x.dtype)


# ---- checking ----

def _rope_aval(x: ShapedArray, positions: ShapedArray | None = None, *, theta, rotary_dim,
               interleaved, end_x, end_y, order, sign) -> ShapedArray:
    name = "rope_axial" if end_x else "rope"
    check_dtype(name, x, FLOATING, "x")
    if x.ndim < 3:
        raise ValueError(f"{name}: argument 'x' must have shape (..., T, H, D), got {x.shape}")
    T, D = x.shape[-3], x.shape[-1]
    if end_x:
        if positions is not None:
            raise TypeError("rope_axial: takes no positions")
        if D % 4:
            raise ValueError(f"rope_axial: the last dimension of argument 'x' must be a multiple "
                             f"of 4, got {D} (x of shape {x.shape})")
        if end_x * end_y != T:
            raise ValueError(f"rope_axial: arguments 'end_x' * 'end_y' must equal the number of "
                             f"tokens T = {T} (x of shape {x.shape}), got {end_x} * {end_y}")
    else:
        if positions is None:
            raise TypeError("rope: argument 'positions' is missing")
        check_dtype(name, positions, POSITIONS, "positions")
        if positions.shape != x.shape[:-2]:
            raise ValueError(f"rope: argument 'positions' must have shape {x.shape[:-2]} "
                             f"(x.shape[:-2]), got {positions.shape}")
        if not (isinstance(rotary_dim, int) and 0 <= rotary_dim <= D and rotary_dim % 2 == 0):
            raise ValueError(f"rope: argument 'rotary_dim' must be an even int in [0, {D}] "
                             f"(the last dimension of x), got {rotary_dim!r}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


# ---- rules ----

def _bind(x, positions, params, **changes):
    p = dict(params, **changes)
    return rope_p.bind(x, **p) if positions is None else rope_p.bind(x, positions, **p)


def _rope_jvp(primals, tangents, **params):
    x, positions = primals[0], (primals[1] if len(primals) > 1 else None)
    out = _bind(x, positions, params)
    t = Zero.from_primal(out) if type(tangents[0]) is Zero else _bind(tangents[0], positions,
                                                                       params)
    if (positions is not None and type(tangents[1]) is not Zero
            and dtypes.is_float(get_aval(positions).dtype)):
        dpos = tangents[1]
        if get_aval(dpos).dtype != get_aval(x).dtype:
            dpos = _cv.convert_element_type_p.bind(dpos, new_dtype=get_aval(x).dtype,
                                                   weak_type=False)
        xa = get_aval(x)
        dpos = broadcast_in_dim_p.bind(dpos, shape=xa.shape,
                                       broadcast_dimensions=tuple(range(xa.ndim - 2)))
        turned = _bind(x, positions, params, order=params["order"] + 1)
        t = add_tangents(t, mul_p.bind(turned, dpos))
    return out, t


def _rope_transpose(ct, x, positions=None, **params):
    if positions is not None and is_undefined(positions):
        raise ValueError("rope: cannot transpose in argument 'positions': rope is linear in "
                         "'x' only")
    if type(ct) is Zero:
        res = Zero(tangent_aval(x.aval))
    else:
        res = _bind(ct, positions, params, sign=-params["sign"])
    return [res] if positions is None else [res, None]


def _rope_batch(vals, dims, **params):
    size = batch_size(vals, dims)
    vals = [move_bdim(v, d, 0, size) for v, d in zip(vals, dims)]
    return rope_p.bind(*vals, **params), 0


# the kernel's parameter struct (csrc/rope.c: rope_params)
_ROPE_PARAMS = struct.Struct("=d6i")  # theta, rotary_dim, interleaved, end_x, order, sign, pad


def _pack(x, positions=None, *, theta, rotary_dim, interleaved, end_x, end_y, order, sign):
    return _ROPE_PARAMS.pack(float(theta), int(rotary_dim), int(bool(interleaved)), int(end_x),
                             int(order), int(sign), 0)


# ---- the primitive ----

rope_p = Primitive("rope")
rope_p.abstract_eval = _rope_aval
rope_p.reference = rope_reference
rope_p.jvp = _rope_jvp
rope_p.transpose = _rope_transpose
rope_p.batch = _rope_batch
rope_p.cpu = Kernel(rope_p, "rope", _pack)
