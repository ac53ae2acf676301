"""JAX's ``*_p`` names for the primitives pullback has: the primitive objects themselves (so
``jax.lax.add_p`` code that inspects or binds primitives finds them)."""
from __future__ import annotations

from ..tracer.core import Primitive

# JAX's name (without _p) -> pullback's registry name, where they differ
_RENAMED = {"scatter_add": "scatter-add", "scatter_mul": "scatter-mul",
            "scatter_min": "scatter-min", "scatter_max": "scatter-max"}
# special functions are h30-random's (lgamma, digamma, ...): their aliases live with them
_NAMES = (
    "abs acos acosh add all_gather and argmax argmin asin asinh atan2 atan atanh "
    "bitcast_convert_type broadcast_in_dim cbrt ceil clamp clz complex concatenate cond conj "
    "conv_general_dilated convert_element_type cos cosh cumlogsumexp cummax cummin cumprod "
    "cumsum div dot_general dynamic_slice dynamic_update_slice eq erf_inv erf erfc exp2 exp "
    "expm1 floor gather ge gt imag integer_pow iota is_finite le log1p log logistic lt max "
    "min mul ne neg nextafter not or pad pmax pmin population_count pow psum real reduce_and "
    "reduce_max reduce_min reduce_or reduce_precision reduce_prod reduce_sum "
    "reduce_window_max reduce_window_min reduce_window_sum reduce_xor rem reshape rev round "
    "rsqrt scan scatter scatter_add scatter_mul scatter_min scatter_max select_and_gather_add "
    "select_and_scatter_add select_n shift_left shift_right_arithmetic shift_right_logical "
    "sign sin sinh slice sort split sqrt square squeeze stop_gradient sub tan tanh top_k "
    "transpose while xor").split()

__all__ = [f"{n}_p" for n in _NAMES]
globals().update({f"{n}_p": Primitive.registry[_RENAMED.get(n, n)] for n in _NAMES})
