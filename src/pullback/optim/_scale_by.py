"""Adaptive rescalings of the updates (optax's ``scale_by_adam``, ``scale_by_adamax``,
``scale_by_amsgrad``, ``scale_by_rss``, ``scale_by_rms``, ``scale_by_stddev`` and
``scale_by_lion``), with optax's state pytrees and order of operations."""
from __future__ import annotations

from typing import Any, Literal, NamedTuple, Optional

from .. import lax
from .. import numpy as jnp
from .. import tree_util
from ._base import GradientTransformation, Updates
from ._numerics import abs_sq, safe_increment
from .tree_utils import (canonicalize_dtype, tree_bias_correction, tree_cast, tree_cast_like,
                         tree_full_like, tree_mul, tree_update_infinity_moment,
                         tree_update_moment, tree_update_moment_per_elem_norm,
                         tree_zeros_like)

_tmap = tree_util.tree_map


def _is_none(x: Any) -> bool:
    return x is None


def _zero_count() -> Any:
    return jnp.zeros([], jnp.int32)


def _adam_step(mu_hat: Any, nu_hat: Any, eps: Any, eps_root: Any) -> Any:
    # eps_root == 0 (the default): sqrt(v + 0) + eps equals sqrt(v) + eps for every v
    # (also -0.0 and NaN), so the add is skipped
    if isinstance(eps_root, (int, float)) and eps_root == 0:
        def denom(v):
            return jnp.sqrt(v) + eps
    else:
        def denom(v):
            return jnp.sqrt(v + eps_root) + eps
    return _tmap(lambda m, v: None if m is None else m / denom(v), mu_hat, nu_hat,
                 is_leaf=_is_none)


class ScaleByAdamState(NamedTuple):
    """The state of :func:`scale_by_adam` (and :func:`scale_by_adamax`)."""
    count: Any  # int32 scalar
    mu: Updates
    nu: Updates


def scale_by_adam(b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8, eps_root: Any = 0.0,
                  mu_dtype: Optional[Any] = None, *,
                  nesterov: bool = False) -> GradientTransformation:
    """Rescales the updates by Adam's bias-corrected moments:
    ``m_hat / (sqrt(v_hat + eps_root) + eps)``.

    Args:
      b1: decay rate of the first moment.
      b2: decay rate of the second moment.
      eps: added to the denominator outside the square root.
      eps_root: added inside the square root.
      mu_dtype: dtype of the first moment (None: the params').
      nesterov: use Nesterov momentum (NAdam).

    Returns:
      A :class:`GradientTransformation` with a :class:`ScaleByAdamState`.
    """
    mu_dtype = canonicalize_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByAdamState(count=_zero_count(),
                                mu=tree_zeros_like(params, dtype=mu_dtype),
                                nu=tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = safe_increment(state.count)
        if nesterov:
            mu_hat = _tmap(lambda m, g: b1 * m + (1 - b1) * g,
                           tree_bias_correction(mu, b1, safe_increment(count_inc)),
                           tree_bias_correction(updates, b1, count_inc))
        else:
            mu_hat = tree_bias_correction(mu, b1, count_inc)
        nu_hat = tree_bias_correction(nu, b2, count_inc)
        updates = _adam_step(mu_hat, nu_hat, eps, eps_root)
        return updates, ScaleByAdamState(count=count_inc, mu=tree_cast(mu, mu_dtype),
                                         nu=tree_cast_like(nu, state.nu))
    return GradientTransformation(init_fn, update_fn)


class ScaleByAmsgradState(NamedTuple):
    """The state of :func:`scale_by_amsgrad`."""
    count: Any  # int32 scalar
    mu: Updates
    nu: Updates
    nu_max: Updates


def scale_by_amsgrad(b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8, eps_root: Any = 0.0,
                     mu_dtype: Optional[Any] = None, bias_correction_mu: bool = True,
                     bias_correction_nu: bool = True) -> GradientTransformation:
    """AMSGrad: Adam with the running maximum of the (bias-corrected) second moment in the
    denominator.

    Args:
      b1: decay rate of the first moment.
      b2: decay rate of the second moment.
      eps: added to the denominator outside the square root.
      eps_root: added inside the square root.
      mu_dtype: dtype of the first moment (None: the params').
      bias_correction_mu: bias-correct the first moment.
      bias_correction_nu: bias-correct the second moment before the maximum.

    Returns:
      A :class:`GradientTransformation` with a :class:`ScaleByAmsgradState`.
    """
    mu_dtype = canonicalize_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByAmsgradState(count=_zero_count(),
                                   mu=tree_zeros_like(params, dtype=mu_dtype),
                                   nu=tree_zeros_like(params), nu_max=tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = safe_increment(state.count)
        mu_hat = tree_bias_correction(mu, b1, count_inc) if bias_correction_mu else mu
        nu_eff = tree_bias_correction(nu, b2, count_inc) if bias_correction_nu else nu
        nu_max = _tmap(jnp.maximum, state.nu_max, nu_eff)
        updates = _adam_step(mu_hat, nu_max, eps, eps_root)
        return updates, ScaleByAmsgradState(count=count_inc, mu=tree_cast(mu, mu_dtype),
                                            nu=nu, nu_max=nu_max)
    return GradientTransformation(init_fn, update_fn)


def scale_by_adamax(b1: Any = 0.9, b2: Any = 0.999, eps: Any = 1e-8) -> GradientTransformation:
    """Adamax: Adam with the infinity norm, ``m_hat / max(|g| + eps, b2 * u)``.

    Args:
      b1: decay rate of the first moment.
      b2: decay rate of the infinity norm.
      eps: added to ``|g|``.

    Returns:
      A :class:`GradientTransformation` with a :class:`ScaleByAdamState` (``nu`` holds the
      infinity norm).
    """
    def init_fn(params):
        return ScaleByAdamState(count=_zero_count(), mu=tree_zeros_like(params),
                                nu=tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        count_inc = safe_increment(state.count)
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_infinity_moment(updates, state.nu, b2, eps)
        mu_hat = tree_bias_correction(mu, b1, count_inc)
        updates = _tmap(lambda m, v: m / v, mu_hat, nu)
        return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByRssState(NamedTuple):
    """The state of :func:`scale_by_rss`: the running sum of squared gradients."""
    sum_of_squares: Updates


def scale_by_rss(initial_accumulator_value: Any = 0.1,
                 eps: Any = 1e-7) -> GradientTransformation:
    """Adagrad's rescaling: ``g / sqrt(sum of g**2 + eps)`` (0 where the sum is 0).

    Args:
      initial_accumulator_value: the starting sum.
      eps: added inside the square root.

    Returns:
      A :class:`GradientTransformation` with a :class:`ScaleByRssState`.
    """
    def init_fn(params):
        return ScaleByRssState(sum_of_squares=tree_full_like(params,
                                                             initial_accumulator_value))

    def update_fn(updates, state, params=None):
        sum_of_squares = _tmap(lambda g, t: abs_sq(g) + t, updates, state.sum_of_squares)
        inv_sqrt = _tmap(lambda t: jnp.where(t > 0, lax.rsqrt(t + eps), 0.0), sum_of_squares)
        return tree_mul(inv_sqrt, updates), ScaleByRssState(sum_of_squares=sum_of_squares)
    return GradientTransformation(init_fn, update_fn)


class ScaleByRmsState(NamedTuple):
    """The state of :func:`scale_by_rms`."""
    nu: Updates


class ScaleByRmsWithCountState(NamedTuple):
    """The state of :func:`scale_by_rms` with ``bias_correction``."""
    count: Any  # int32 scalar
    nu: Updates


def _rms_scaling(eps_in_sqrt: bool, eps: Any, m: Any, n: Any) -> Any:
    var = n if m is None else n - abs_sq(m)
    return lax.rsqrt(var + eps) if eps_in_sqrt else 1 / (jnp.sqrt(var) + eps)


def scale_by_rms(decay: Any = 0.9, eps: Any = 1e-8, initial_scale: Any = 0.0,
                 eps_in_sqrt: bool = True,
                 bias_correction: bool = False) -> GradientTransformation:
    """RMSProp's rescaling by the moving average of the squared gradients:
    ``g / sqrt(nu + eps)`` (or ``g / (sqrt(nu) + eps)``).

    Args:
      decay: decay rate of the average.
      eps: the small constant of the denominator.
      initial_scale: the starting average.
      eps_in_sqrt: put ``eps`` inside the square root.
      bias_correction: bias-correct the average (the state then counts steps).

    Returns:
      A :class:`GradientTransformation` with a :class:`ScaleByRmsState` (or
      :class:`ScaleByRmsWithCountState`).
    """
    def init_fn(params):
        nu = tree_full_like(params, initial_scale)
        if bias_correction:
            return ScaleByRmsWithCountState(count=_zero_count(), nu=nu)
        return ScaleByRmsState(nu=nu)

    def update_fn(updates, state, params=None):
        nu = tree_update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count_inc = safe_increment(state.count)
            nu_hat = tree_bias_correction(nu, decay, count_inc)
        else:
            nu_hat = nu
        scaling = _tmap(lambda n: _rms_scaling(eps_in_sqrt, eps, None, n), nu_hat)
        updates = _tmap(lambda s, g: s * g, scaling, updates)
        if bias_correction:
            return updates, ScaleByRmsWithCountState(count=count_inc, nu=nu)
        return updates, ScaleByRmsState(nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByRStdDevState(NamedTuple):
    """The state of :func:`scale_by_stddev`."""
    mu: Updates
    nu: Updates


class ScaleByRStdDevWithCountState(NamedTuple):
    """The state of :func:`scale_by_stddev` with ``bias_correction``."""
    count: Any  # int32 scalar
    mu: Updates
    nu: Updates


def scale_by_stddev(decay: Any = 0.9, eps: Any = 1e-8, initial_scale: Any = 0.0,
                    eps_in_sqrt: bool = True,
                    bias_correction: bool = False) -> GradientTransformation:
    """Centered RMSProp's rescaling by the running standard deviation of the gradients:
    ``g / sqrt(nu - mu**2 + eps)``.

    Args:
      decay: decay rate of the averages.
      eps: the small constant of the denominator.
      initial_scale: the starting second moment.
      eps_in_sqrt: put ``eps`` inside the square root.
      bias_correction: bias-correct the averages (the state then counts steps).

    Returns:
      A :class:`GradientTransformation` with a :class:`ScaleByRStdDevState` (or
      :class:`ScaleByRStdDevWithCountState`).
    """
    def init_fn(params):
        mu, nu = tree_zeros_like(params), tree_full_like(params, initial_scale)
        if bias_correction:
            return ScaleByRStdDevWithCountState(count=_zero_count(), mu=mu, nu=nu)
        return ScaleByRStdDevState(mu=mu, nu=nu)

    def update_fn(updates, state, params=None):
        mu = tree_update_moment(updates, state.mu, decay, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count_inc = safe_increment(state.count)
            mu_hat = tree_bias_correction(mu, decay, count_inc)
            nu_hat = tree_bias_correction(nu, decay, count_inc)
        else:
            mu_hat, nu_hat = mu, nu
        scaling = _tmap(lambda m, n: _rms_scaling(eps_in_sqrt, eps, m, n), mu_hat, nu_hat)
        updates = _tmap(lambda s, g: s * g, scaling, updates)
        if bias_correction:
            return updates, ScaleByRStdDevWithCountState(count=count_inc, mu=mu, nu=nu)
        return updates, ScaleByRStdDevState(mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


class ScaleByLionState(NamedTuple):
    """The state of :func:`scale_by_lion`."""
    count: Any  # int32 scalar
    mu: Updates


def scale_by_lion(b1: Any = 0.9, b2: Any = 0.99, mu_dtype: Optional[Any] = None, *,
                  mode: Literal["hard", "smooth", "refined"] = "hard",
                  smooth_beta: float = 1.0) -> GradientTransformation:
    """Lion's update: the sign of ``(1 - b1) * g + b1 * m``, with the momentum ``m``
    tracked at rate ``b2``.

    Args:
      b1: interpolation rate of the update direction.
      b2: decay rate of the momentum.
      mu_dtype: dtype of the momentum (None: the params').
      mode: ``'hard'`` (sign), ``'smooth'`` (``tanh(smooth_beta * x)``) or ``'refined'``
        (``x`` where ``|x| < 1``, else its sign).
      smooth_beta: the slope of the ``'smooth'`` mode.

    Returns:
      A :class:`GradientTransformation` with a :class:`ScaleByLionState`.
    """
    if mode not in ("hard", "smooth", "refined"):
        raise ValueError(f"scale_by_lion: unknown mode {mode!r}; expected 'hard', 'smooth' "
                         "or 'refined'")
    mu_dtype = canonicalize_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByLionState(count=_zero_count(),
                                mu=tree_zeros_like(params, dtype=mu_dtype))

    def update_fn(updates, state, params=None):
        def comb(g, m):
            x = (1.0 - b1) * g + b1 * m
            if mode == "hard":
                return jnp.sign(x)
            if mode == "smooth":
                return jnp.tanh(smooth_beta * x)
            return jnp.where(jnp.abs(x) < 1.0, x, jnp.sign(x))
        new_updates = _tmap(comb, updates, state.mu)
        mu = tree_cast(tree_update_moment(updates, state.mu, b2, 1), mu_dtype)
        return new_updates, ScaleByLionState(count=safe_increment(state.count), mu=mu)
    return GradientTransformation(init_fn, update_fn)
