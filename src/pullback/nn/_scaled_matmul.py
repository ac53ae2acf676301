"""Block-scaled matmul (``jax.nn.scaled_matmul``, ``scaled_dot_general``,
``get_scaled_dot_general_config``), computed on the CPU from existing primitives.

JAX 0.10 runs these only through cuDNN (on CPU its ``scaled_matmul`` has no lowering and
raises ``NotImplementedError``); pullback computes the same mathematics: each operand
block-dequantised in float32 (``x * repeat(scales, block)``), one float32 dot, the result in
``preferred_element_type``. ``scaled_dot_general`` quantises like JAX's
``jax/_src/cudnn/scaled_matmul_stablehlo.py``: MXFP8 (float8_e4m3fn data, power-of-two E8M0
scales rounded up, blocks of 32) and NVFP4 (E2M1 data, float8_e4m3fn scales, blocks of 16, a
float32 global scale), with the same custom VJP (the cotangent quantised with the third config;
NVFP4's straight-through estimator zeroes the gradient of clipped inputs).

pullback has no float8_e8m0fnu or float4_e2m1fn arrays: NumPy arrays of those ml_dtypes types
given to ``scaled_matmul`` are read as float32 (every value of both formats is exact there);
the quantised values inside ``scaled_dot_general`` are held as float32 with the formats'
rounding (E2M1: to nearest even on its grid 0, 0.5, 1, 1.5, 2, 3, 4, 6).
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..tracer import dtypes
from ..transforms.custom_derivatives import custom_vjp

ArrayLike = Any
_E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
_E2M1 = np.dtype(ml_dtypes.float4_e2m1fn)


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
    """A block-scaled quantisation format (JAX's ``BlockScaleConfig``)."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def get_scaled_dot_general_config(mode: str, global_scale: ArrayLike | None = None
                                  ) -> BlockScaleConfig:
    """The quantisation config of ``mode`` for :func:`scaled_dot_general`.

    Args:
      mode: ``"nvfp4"`` or ``"mxfp8"``.
      global_scale: NVFP4's float32 global scale, shape (1,) (default 1).

    Returns:
      A :class:`BlockScaleConfig`.

    Raises:
      ValueError: for another mode.
    """
    if mode == "nvfp4":
        one = jnp.ones((1,), dtype=np.float32)
        return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=ml_dtypes.float4_e2m1fn,
                                scale_type=ml_dtypes.float8_e4m3fn,
                                global_scale=one if global_scale is None else global_scale,
                                infer_only=False)
    if mode == "mxfp8":
        return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=ml_dtypes.float8_e4m3fn,
                                scale_type=ml_dtypes.float8_e8m0fnu, global_scale=None,
                                infer_only=False)
    raise ValueError(f"Unsupported mode: {mode}")


def _as_array(x: ArrayLike) -> Any:
    if isinstance(x, np.ndarray) and x.dtype in (_E8M0, _E2M1):
        x = x.astype(np.float32)  # formats pullback has no arrays of; exact in float32
    return jnp.asarray(x)


def _dequantize(x: Any, scales: Any) -> Any:
    """``x * repeat(scales, K // K_s, axis=-1)`` in float32."""
    B, M, K = x.shape
    Ks = scales.shape[-1]
    xb = jnp.reshape(x.astype(np.float32), (B, M, Ks, K // Ks if Ks else 0))
    return jnp.reshape(xb * scales.astype(np.float32)[..., None], (B, M, K))


def _matmul(a: Any, b: Any, a_scales: Any, b_scales: Any, out_dtype: Any) -> Any:
    out = lax.dot_general(_dequantize(a, a_scales), _dequantize(b, b_scales),
                          (((2,), (2,)), ((0,), (0,))), preferred_element_type=np.float32)
    return out.astype(out_dtype)


def scaled_matmul(lhs: ArrayLike, rhs: ArrayLike, lhs_scales: ArrayLike, rhs_scales: ArrayLike,
                  preferred_element_type: Any = np.float32) -> Any:
    """Block-scaled matmul: ``einsum('BMK,BNK->BMN', lhs * repeat(lhs_scales), rhs *
    repeat(rhs_scales))`` with the block sizes ``K // lhs_scales.shape[-1]`` and
    ``K // rhs_scales.shape[-1]``, computed in float32.

    Args:
      lhs: shape (B, M, K).
      rhs: shape (B, N, K).
      lhs_scales: shape (B, M, K_s), ``K % K_s == 0``.
      rhs_scales: shape (B, N, K_s).
      preferred_element_type: the result's dtype (default float32).

    Returns:
      The (B, M, N) product.
    """
    a, b = _as_array(lhs), _as_array(rhs)
    a_scales, b_scales = _as_array(lhs_scales), _as_array(rhs_scales)
    if not all(x.ndim == 3 for x in (a, b, a_scales, b_scales)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    B_a, M_a, K_a = a.shape
    B_b, N_b, K_b = b.shape
    if K_a != K_b or B_a != B_b:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) "
                         f"and contract (K) dimensions, but got shapes {a.shape} and {b.shape}")
    B_as, M_as, K_as = a_scales.shape
    B_bs, N_bs, K_bs = b_scales.shape
    if K_as != K_bs or B_as != B_bs:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a_scales.shape} and "
                         f"{b_scales.shape}")
    if M_as != M_a or N_bs != N_b:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                         f"inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
                         f"{a_scales.shape}, b_scales: {b_scales.shape}")
    if K_as == 0 and K_a or K_as and K_a % K_as:
        raise ValueError(f"scaled_matmul requires the contract dimension K = {K_a} to be a "
                         f"multiple of the scales' K_s = {K_as}")
    out_dtype = dtypes.requested(preferred_element_type, "scaled_matmul")
    return _matmul(a, b, a_scales, b_scales, out_dtype)


# ---- scaled_dot_general ----

def _normalize(x: Any, contracting: tuple, batch: tuple) -> Any:
    """``x`` as (batch, rows, contracted), each group flattened."""
    # batch and contracting dimensions pair up in the order given (JAX's shape_normalization
    # takes them in increasing order, which pairs wrong dimensions when the two operands list
    # theirs in different orders: the results agree wherever JAX's are right)
    b, k = list(batch), list(contracting)
    m = [d for d in range(x.ndim) if d not in contracting and d not in batch]
    sizes = [math.prod(x.shape[d] for d in g) for g in (b, m, k)]
    return jnp.reshape(jnp.transpose(x, b + m + k), tuple(sizes))


def _out_shape(lhs_shape, rhs_shape, lhs_dn, rhs_dn) -> tuple:
    (lc, lb), (rc, rb) = lhs_dn, rhs_dn
    return (tuple(lhs_shape[i] for i in lb)
            + tuple(n for i, n in enumerate(lhs_shape) if i not in lc and i not in lb)
            + tuple(n for i, n in enumerate(rhs_shape) if i not in rc and i not in rb))


def _e8m0_round_up(v: Any) -> Any:
    """The E8M0 exponent (uint32) of ``v >= 0`` rounded up, as JAX's
    ``cast_to_e8m0_with_rounding_up``."""
    bits = lax.bitcast_convert_type(v.astype(np.float32), np.uint32)
    exp, mant = bits >> 23, bits & 0x7FFFFF
    up = (mant > 0) & (exp != 0xFE) & ~((exp == 0) & (mant <= 0x400000))
    return jnp.where(up, exp + 1, exp) & 0xFF


def _e8m0_value(exp: Any, dtype: Any, for_division: bool) -> Any:
    """2^(exp - 127); exponent 0 reads as JAX's stand-ins (2^-15 for float16 data, else
    2^-127) when dividing, as the format's own 2^-127 when multiplying."""
    v = lax.bitcast_convert_type((exp << 23).astype(np.uint32), np.float32)
    tiny = 2.0 ** -15 if for_division and dtype == np.float16 else 2.0 ** -127
    return jnp.where(v == 0, jnp.asarray(tiny, np.float32), v)


def _round_e2m1(x: Any) -> Any:
    """Float32 ``x`` in [-6, 6] rounded to nearest even on E2M1's grid."""
    a = jnp.abs(x)
    step = jnp.where(a < 2, 0.5, jnp.where(a < 4, 1.0, 2.0)).astype(x.dtype)
    return jnp.sign(x) * jnp.round(a / step) * step


def _quantize(x: Any, config: BlockScaleConfig) -> tuple[Any, Any]:
    """(values, per-block scales), both float32, as JAX's ``quantize`` of (B, M, K) ``x``."""
    B, M, K = x.shape
    bs = config.block_size
    if not (K >= bs and K % bs == 0):
        raise ValueError(f"scaled_dot_general: the contracting size {K} must be a positive "
                         f"multiple of the block size {bs} ({config.mode})")
    xb = jnp.reshape(x, (B, M, K // bs, bs))
    MAX = jnp.asarray(float(ml_dtypes.finfo(config.data_type).max), x.dtype)
    if config.mode == "mxfp8":
        exp = _e8m0_round_up(jnp.max(jnp.abs(xb), axis=-1, keepdims=True) / MAX)
        scaled = xb / _e8m0_value(exp, x.dtype, True).astype(x.dtype)
        scales = _e8m0_value(exp, x.dtype, False)
        q = jnp.clip(scaled, -MAX, MAX).astype(config.data_type).astype(np.float32)
    elif config.mode == "nvfp4":
        SCALE_MAX = jnp.asarray(float(ml_dtypes.finfo(config.scale_type).max), x.dtype)
        xb = xb / config.global_scale
        s = jnp.clip(jnp.max(jnp.abs(xb), axis=-1, keepdims=True) / MAX, 0, SCALE_MAX)
        scales = s.astype(config.scale_type).astype(np.float32)
        scaled = xb / scales
        q = _round_e2m1(jnp.clip(scaled, -MAX, MAX).astype(np.float32))
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    return jnp.reshape(q, (B, M, K)), jnp.reshape(scales, (B, M, K // bs))


def _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_q, lhs_s = _quantize(_normalize(lhs, lc, lb), configs[0])
    rhs_q, rhs_s = _quantize(_normalize(rhs, rc, rb), configs[1])
    nvfp4 = configs[0].mode == "nvfp4"
    out = _matmul(lhs_q, rhs_q, lhs_s, rhs_s, np.float32 if nvfp4 else preferred_element_type)
    if nvfp4:
        out = (out * (configs[0].global_scale * configs[1].global_scale)).astype(
            preferred_element_type)
    return jnp.reshape(out, _out_shape(lhs.shape, rhs.shape, (lc, lb), (rc, rb)))


def _transpose_lhs(g, x, y, dimension_numbers, preferred_element_type, configs,
                   swap_ans=False):
    """The cotangent of ``x`` in ``scaled_dot(x, y)``: ``g`` and ``y`` quantised (NVFP4: a
    plain float32 matmul), as JAX's ``scaled_dot_general_transpose_lhs``."""
    (xc, yc), (xb, yb) = dimension_numbers
    x_kept = [i for i in range(x.ndim) if i not in xc and i not in xb]
    y_kept = [i for i in range(y.ndim) if i not in yc and i not in yb]
    nb = len(xb)
    ans_batch = tuple(range(nb))
    if swap_ans:
        ans_y = tuple(range(nb, nb + len(y_kept)))
    else:
        ans_y = tuple(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    xc_by_y = list(np.take(xc, np.argsort(yc)))
    out_axes = tuple(int(a) for a in np.argsort(list(xb) + x_kept + xc_by_y))
    y_dn, g_dn = (tuple(y_kept), tuple(yb)), (ans_y, ans_batch)
    y3, g3 = _normalize(y, *y_dn), _normalize(g, *g_dn)
    if configs[0].mode != "nvfp4":
        g_q, g_s = _quantize(g3, configs[0])
        y_q, y_s = _quantize(y3, configs[1])
        out = _matmul(g_q, y_q, g_s, y_s, preferred_element_type)
    else:
        out = jnp.matmul(g3, jnp.transpose(y3, (0, 2, 1)),
                         preferred_element_type=preferred_element_type)
    out = jnp.reshape(out, _out_shape(g.shape, y.shape, g_dn, y_dn))
    return jnp.transpose(out, out_axes)


def _scaled_dot_fwd(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs), (lhs, rhs)


def _scaled_dot_bwd(dimension_numbers, preferred_element_type, configs, res, g):
    lhs, rhs = res
    (lc, rc), (lb, rb) = dimension_numbers
    g_lhs = _transpose_lhs(g, lhs, rhs, dimension_numbers, preferred_element_type,
                           [configs[2], configs[1]])
    g_rhs = _transpose_lhs(g, rhs, lhs, ((rc, lc), (rb, lb)), preferred_element_type,
                           [configs[2], configs[0]], swap_ans=True)
    if configs[2].mode == "nvfp4":  # straight-through estimator: clipped inputs get no gradient
        MAX = float(ml_dtypes.finfo(configs[0].data_type).max)
        SCALE_MAX = float(ml_dtypes.finfo(configs[0].scale_type).max)
        g_lhs = jnp.where(jnp.abs(lhs) <= configs[0].global_scale * MAX * SCALE_MAX, g_lhs, 0)
        g_rhs = jnp.where(jnp.abs(rhs) <= configs[1].global_scale * MAX * SCALE_MAX, g_rhs, 0)
    return g_lhs, g_rhs


_scaled_dot_vjp = custom_vjp(_scaled_dot, nondiff_argnums=(2, 3, 4))
_scaled_dot_vjp.defvjp(_scaled_dot_fwd, _scaled_dot_bwd)


def scaled_dot_general(lhs: ArrayLike, rhs: ArrayLike, dimension_numbers: Any,
                       preferred_element_type: Any = np.float32,
                       configs: list[BlockScaleConfig] | None = None,
                       implementation: str | None = None) -> Any:
    """``lax.dot_general`` with block-scaled quantisation of both operands (and of the
    cotangent in the backward pass), as JAX's ``jax.nn.scaled_dot_general``.

    Args:
      lhs: input array.
      rhs: input array.
      dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
      preferred_element_type: the result's dtype: float32 (default), bfloat16 or float16.
      configs: three :class:`BlockScaleConfig` (lhs, rhs, cotangent) from
        :func:`get_scaled_dot_general_config`; None runs ``lax.dot_general`` unquantised.
      implementation: deprecated and ignored (as in JAX).

    Returns:
      Batch dimensions, then lhs's free dimensions, then rhs's.
    """
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    pet = np.dtype(preferred_element_type)
    if pet not in (np.dtype(np.float32), dtypes.bfloat16, np.dtype(np.float16)):
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        f"{pet}")
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = tuple(lc), tuple(rc), tuple(lb), tuple(rb)
    squeeze = False
    if lb == ():  # a trailing unit batch dimension each, squeezed from the result
        lhs, lb = jnp.expand_dims(lhs, lhs.ndim), (lhs.ndim,)
        squeeze = True
    if rb == ():
        rhs, rb = jnp.expand_dims(rhs, rhs.ndim), (rhs.ndim,)
        squeeze = True
    out = _scaled_dot_vjp(lhs, rhs, ((lc, rc), (lb, rb)), pet, list(configs))
    return jnp.squeeze(out, axis=0) if squeeze else out
