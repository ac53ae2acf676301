"""Adaptive-moment and trust-ratio transformations (optax's ``scale_by_belief``,
``scale_by_radam``, ``scale_by_novograd``, ``scale_by_trust_ratio``, the parameter-block
scalings) and their aliases ``adabelief``, ``radam``, ``novograd``, ``lamb`` and ``lars``.

The update math follows optax 0.2.8 operation by operation (same order of additions, same
casts), so float32 results agree with optax's to rounding; the states are the same NamedTuples.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

from .. import lax
from .. import numpy as jnp
from .. import tree_util
from ._base import (NO_PARAMS_MSG, GradientTransformation, GradientTransformationExtraArgs,
                    ScalarOrSchedule, Updates, chain, init_empty_state)
from ._numerics import safe_increment, safe_norm, safe_root_mean_squares
from ._scale_by import ScaleByAdamState, scale_by_adam
from ._transform import MaskOrFn, add_decayed_weights, masked, scale_by_learning_rate, trace
from .tree_utils import (canonicalize_dtype, tree_bias_correction, tree_cast, tree_norm,
                         tree_sub, tree_update_moment, tree_update_moment_per_elem_norm,
                         tree_zeros_like)


def _is_none(x: Any) -> bool:
    return x is None


def _nesterov_mu_hat(mu: Updates, updates: Updates, b1: Any, count_inc: Any) -> Updates:
    """The Nesterov look-ahead first moment: ``b1 * mu_hat(t+1) + (1 - b1) * g_hat(t)``."""
    return tree_util.tree_map(
        lambda m, g: b1 * m + (1 - b1) * g,
        tree_bias_correction(mu, b1, safe_increment(count_inc)),
        tree_bias_correction(updates, b1, count_inc))


# ---------------------------------------------------------------------------------------------
# AdaBelief


class ScaleByBeliefState(NamedTuple):
    """The state of :func:`scale_by_belief`."""
    count: Any   # int32 scalar: the number of updates so far
    mu: Updates  # EMA of the gradients
    nu: Updates  # EMA of the squared prediction error (g - mu)**2


def scale_by_belief(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-16,
                    eps_root: float = 1e-16, *, nesterov: bool = False
                    ) -> GradientTransformation:
    """Rescales updates as AdaBelief does: by the bias-corrected first moment over the root
    of the bias-corrected EMA of the squared deviation of the gradient from that moment.

    Args:
      b1: the decay rate of the gradients' EMA.
      b2: the decay rate of the EMA of the squared prediction error.
      eps: added to the denominator's root.
      eps_root: added to the second moment (keeps its root differentiable at 0).
      nesterov: use Nesterov momentum.

    Returns:
      A :class:`GradientTransformation` with state :class:`ScaleByBeliefState`.
    """
    def init_fn(params):
        return ScaleByBeliefState(count=jnp.zeros([], jnp.int32), mu=tree_zeros_like(params),
                                  nu=tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        mu = tree_update_moment(updates, state.mu, b1, 1)
        prediction_error = tree_sub(updates, mu)
        nu = tree_update_moment_per_elem_norm(prediction_error, state.nu, b2, 2)
        nu = tree_util.tree_map(lambda v: v + eps_root, nu)
        count_inc = safe_increment(state.count)
        if nesterov:
            mu_hat = _nesterov_mu_hat(mu, updates, b1, count_inc)
        else:
            mu_hat = tree_bias_correction(mu, b1, count_inc)
        nu_hat = tree_bias_correction(nu, b2, count_inc)
        updates = tree_util.tree_map(
            lambda m, v: None if m is None else m / (jnp.sqrt(v) + eps),
            mu_hat, nu_hat, is_leaf=_is_none)
        return updates, ScaleByBeliefState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


def adabelief(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
              eps: float = 1e-16, eps_root: float = 1e-16, *, nesterov: bool = False
              ) -> GradientTransformationExtraArgs:
    """The AdaBelief optimizer: :func:`scale_by_belief` then the (negative) learning rate.

    Args:
      learning_rate: a float or a schedule ``step -> learning rate``.
      b1: the decay rate of the gradients' EMA.
      b2: the decay rate of the EMA of the squared prediction error.
      eps: added to the denominator's root.
      eps_root: added to the second moment.
      nesterov: use Nesterov momentum.

    Returns:
      A :class:`GradientTransformationExtraArgs`; its state is
      ``(ScaleByBeliefState, <learning-rate state>)``.
    """
    return chain(scale_by_belief(b1=b1, b2=b2, eps=eps, eps_root=eps_root, nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


# ---------------------------------------------------------------------------------------------
# Rectified Adam


def scale_by_radam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
                   eps_root: float = 0.0, threshold: float = 5.0, *, nesterov: bool = False
                   ) -> GradientTransformation:
    """Rescales updates as Rectified Adam does: Adam's step times the variance rectification
    term ``r_t`` once the approximated SMA length ``rho_t`` reaches ``threshold``, the
    bias-corrected momentum alone before that.

    Args:
      b1: the decay rate of the gradients' EMA.
      b2: the decay rate of the squared gradients' EMA.
      eps: added to the denominator's root.
      eps_root: added inside the root.
      threshold: the ``rho_t`` from which the variance is considered tractable.
      nesterov: use Nesterov momentum.

    Returns:
      A :class:`GradientTransformation` with state ``ScaleByAdamState``.
    """
    ro_inf = 2.0 / (1.0 - b2) - 1.0

    def rectified(ro, mu_hat, nu_hat):
        r = jnp.sqrt((ro - 4.0) * (ro - 2.0) * ro_inf / ((ro_inf - 4.0) * (ro_inf - 2.0) * ro))
        return tree_util.tree_map(
            lambda m, v: r.astype(m.dtype) * m / (jnp.sqrt(v + eps_root) + eps),
            mu_hat, nu_hat)

    def init_fn(params):
        return ScaleByAdamState(count=jnp.zeros([], jnp.int32), mu=tree_zeros_like(params),
                                nu=tree_zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        mu = tree_update_moment(updates, state.mu, b1, 1)
        nu = tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = safe_increment(state.count)
        b2t = b2 ** count_inc
        ro = ro_inf - 2 * count_inc * b2t / (1 - b2t)
        if nesterov:
            mu_hat = _nesterov_mu_hat(mu, updates, b1, count_inc)
        else:
            mu_hat = tree_bias_correction(mu, b1, count_inc)
        nu_hat = tree_bias_correction(nu, b2, count_inc)
        # both branches are computed (as optax does) so the step stays one traced program
        updates = tree_util.tree_map(lambda t, f: jnp.where(ro >= threshold, t, f),
                                     rectified(ro, mu_hat, nu_hat), mu_hat)
        return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


def radam(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
          eps: float = 1e-8, eps_root: float = 0.0, threshold: float = 5.0, *,
          nesterov: bool = False) -> GradientTransformationExtraArgs:
    """The Rectified Adam optimizer: :func:`scale_by_radam` then the (negative) learning rate.

    Args:
      learning_rate: a float or a schedule ``step -> learning rate``.
      b1: the decay rate of the gradients' EMA.
      b2: the decay rate of the squared gradients' EMA.
      eps: added to the denominator's root.
      eps_root: added inside the root.
      threshold: the ``rho_t`` from which the rectified step is used.
      nesterov: use Nesterov momentum.

    Returns:
      A :class:`GradientTransformationExtraArgs`.
    """
    return chain(scale_by_radam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, threshold=threshold,
                                nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


# ---------------------------------------------------------------------------------------------
# NovoGrad


class ScaleByNovogradState(NamedTuple):
    """The state of :func:`scale_by_novograd`."""
    count: Any   # int32 scalar
    mu: Updates  # the momentum of the normalized gradients (mu_dtype)
    nu: Updates  # per leaf, a scalar: the EMA of the squared norm of that leaf's gradient


def scale_by_novograd(b1: float = 0.9, b2: float = 0.25, eps: float = 1e-8,
                      eps_root: float = 0.0, weight_decay: float = 0.0,
                      mu_dtype: Optional[Any] = None) -> GradientTransformation:
    """NovoGrad's rescaling: each leaf's gradient is divided by the root of a layer-wise EMA
    of its squared norm, decoupled weight decay added, and accumulated with momentum ``b1``.

    Args:
      b1: the momentum decay.
      b2: the decay of the EMA of the squared gradient norms.
      eps: added to the denominator's root.
      eps_root: added inside the root.
      weight_decay: the weight-decay rate.
      mu_dtype: the dtype of the momentum (None: that of the updates).

    Returns:
      A :class:`GradientTransformation` with state :class:`ScaleByNovogradState`; its
      ``update`` needs ``params``.
    """
    mu_dtype = canonicalize_dtype(mu_dtype)

    def init_fn(params):
        return ScaleByNovogradState(
            count=jnp.zeros([], jnp.int32), mu=tree_zeros_like(params, dtype=mu_dtype),
            nu=tree_util.tree_map(lambda p: jnp.asarray(0.0, dtype=p.dtype), params))

    def nu_addition(g):
        # jnp.linalg.norm(g) ** 2, as optax computes it (the root, then the square)
        return tree_norm(g) ** 2

    def mu_addition(g, p, n):
        return g / (jnp.sqrt(n + eps_root) + eps) + weight_decay * p

    def init_nu(grads, nu):
        return tree_util.tree_map(lambda g, n: nu_addition(g).astype(n.dtype), grads, nu)

    def update_nu(grads, nu):
        return tree_update_moment(tree_util.tree_map(nu_addition, grads), nu, b2, 1)

    def init_mu(grads, params, mu, nu):
        del mu
        return tree_util.tree_map(mu_addition, grads, params, nu)

    def update_mu(grads, params, mu, nu):
        added = tree_util.tree_map(mu_addition, grads, params, nu)
        return tree_util.tree_map(lambda m, u: None if m is None else b1 * m + u, mu, added,
                                  is_leaf=_is_none)

    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError(f"scale_by_novograd: {NO_PARAMS_MSG}")
        count_inc = safe_increment(state.count)
        # the first step starts both EMAs from the first gradient, not from zero
        nu = lax.cond(count_inc == 1, init_nu, update_nu, updates, state.nu)
        mu = lax.cond(count_inc == 1, init_mu, update_mu, updates, params, state.mu, nu)
        mu = tree_cast(mu, mu_dtype)
        return mu, ScaleByNovogradState(count=count_inc, mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


def novograd(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.25,
             eps: float = 1e-6, eps_root: float = 0.0, weight_decay: float = 0.0
             ) -> GradientTransformationExtraArgs:
    """The NovoGrad optimizer: :func:`scale_by_novograd` then the (negative) learning rate.

    Args:
      learning_rate: a float or a schedule ``step -> learning rate``.
      b1: the momentum decay.
      b2: the decay of the EMA of the squared gradient norms.
      eps: added to the denominator's root.
      eps_root: added inside the root.
      weight_decay: the weight-decay rate.

    Returns:
      A :class:`GradientTransformationExtraArgs`; its ``update`` needs ``params``.
    """
    return chain(scale_by_novograd(b1=b1, b2=b2, eps=eps, eps_root=eps_root,
                                   weight_decay=weight_decay),
                 scale_by_learning_rate(learning_rate))


# ---------------------------------------------------------------------------------------------
# Trust ratio (LAMB, LARS) and parameter-block scaling


def scale_by_trust_ratio(min_norm: float = 0.0, trust_coefficient: float = 1.0,
                         eps: float = 0.0) -> GradientTransformation:
    """Scales each leaf's update by the trust ratio
    ``trust_coefficient * ||param|| / (||update|| + eps)`` (1 where either norm is 0).

    Args:
      min_norm: the norms are clipped from below to this value.
      trust_coefficient: multiplies the ratio.
      eps: added to the update norm.

    Returns:
      A stateless :class:`GradientTransformation` (state ``EmptyState``); its ``update``
      needs ``params``.
    """
    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError(f"scale_by_trust_ratio: {NO_PARAMS_MSG}")

        def scale_leaf(update, param):
            param_norm = safe_norm(param, min_norm)
            update_norm = safe_norm(update, min_norm)
            trust_ratio = trust_coefficient * param_norm / (update_norm + eps)
            # a zero norm would freeze (or blow up) the leaf: leave its update unscaled
            zero_norm = jnp.logical_or(param_norm == 0.0, update_norm == 0.0)
            safe_ratio = jnp.where(zero_norm, jnp.array(1.0, dtype=param.dtype), trust_ratio)
            return update * safe_ratio
        return tree_util.tree_map(scale_leaf, updates, params), state
    return GradientTransformation(init_empty_state, update_fn)


def scale_by_param_block_norm(min_scale: float = 1e-3) -> GradientTransformation:
    """Scales each leaf's update by the 2-norm of its parameter (at least ``min_scale``).

    Args:
      min_scale: the smallest scale.

    Returns:
      A stateless :class:`GradientTransformation`; its ``update`` needs ``params``.
    """
    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError(f"scale_by_param_block_norm: {NO_PARAMS_MSG}")
        return tree_util.tree_map(lambda u, p: u * safe_norm(p, min_scale),
                                  updates, params), state
    return GradientTransformation(init_empty_state, update_fn)


def scale_by_param_block_rms(min_scale: float = 1e-3) -> GradientTransformation:
    """Scales each leaf's update by the root mean square of its parameter (at least
    ``min_scale``).

    Args:
      min_scale: the smallest scale.

    Returns:
      A stateless :class:`GradientTransformation`; its ``update`` needs ``params``.
    """
    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError(f"scale_by_param_block_rms: {NO_PARAMS_MSG}")
        return tree_util.tree_map(lambda u, p: u * safe_root_mean_squares(p, min_scale),
                                  updates, params), state
    return GradientTransformation(init_empty_state, update_fn)


def lamb(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-6, eps_root: float = 0.0, weight_decay: float = 0.0,
         mask: MaskOrFn = None) -> GradientTransformationExtraArgs:
    """The LAMB optimizer: Adam's step plus decoupled weight decay, scaled per leaf by the
    trust ratio, then by the (negative) learning rate.

    Args:
      learning_rate: a float or a schedule ``step -> learning rate``.
      b1: the decay rate of the gradients' EMA.
      b2: the decay rate of the squared gradients' EMA.
      eps: added to the denominator's root.
      eps_root: added inside the root.
      weight_decay: the weight-decay rate.
      mask: a tree of bools (or a function of the params returning one) choosing the leaves
        that get weight decay; None decays all.

    Returns:
      A :class:`GradientTransformationExtraArgs`; its ``update`` needs ``params``.
    """
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root),
                 add_decayed_weights(weight_decay=weight_decay, mask=mask),
                 scale_by_trust_ratio(),
                 scale_by_learning_rate(learning_rate))


def lars(learning_rate: ScalarOrSchedule, weight_decay: float = 0.0,
         weight_decay_mask: MaskOrFn = True, trust_coefficient: float = 0.001,
         eps: float = 0.0, trust_ratio_mask: MaskOrFn = True, momentum: float = 0.9,
         nesterov: bool = False) -> GradientTransformationExtraArgs:
    """The LARS optimizer: weight decay, the layer-wise trust ratio, the (negative) learning
    rate, then momentum.

    Args:
      learning_rate: a float or a schedule ``step -> learning rate``.
      weight_decay: the weight-decay rate.
      weight_decay_mask: a tree of bools (or a function of the params returning one)
        choosing the leaves that get weight decay; True decays all.
      trust_coefficient: multiplies the trust ratio.
      eps: added to the update norm in the trust ratio.
      trust_ratio_mask: chooses the leaves scaled by the trust ratio; True scales all.
      momentum: the momentum decay.
      nesterov: use Nesterov momentum.

    Returns:
      A :class:`GradientTransformationExtraArgs`; its ``update`` needs ``params``.
    """
    return chain(add_decayed_weights(weight_decay, mask=weight_decay_mask),
                 masked(inner=scale_by_trust_ratio(trust_coefficient=trust_coefficient,
                                                   eps=eps),
                        mask=trust_ratio_mask),
                 scale_by_learning_rate(learning_rate),
                 trace(decay=momentum, nesterov=nesterov))
