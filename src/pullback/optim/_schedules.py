"""Schedules (optax's ``schedules``): functions from a step count to a hyperparameter value.

Every schedule takes a Python int or an integer array (possibly traced inside ``jit``) and
computes with array ops only, so a scheduled learning rate is part of the compiled step.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from .. import numpy as jnp
from ._base import Schedule


def constant_schedule(value: Any) -> Schedule:
    """A schedule returning ``value`` at every step.

    Args:
      value: the value held throughout.

    Returns:
      A function mapping a step count to ``value``.
    """
    return lambda count: value


def polynomial_schedule(init_value: Any, end_value: Any, power: Any, transition_steps: int,
                        transition_begin: int = 0) -> Schedule:
    """Polynomial transition from ``init_value`` to ``end_value``.

    The value is ``init_value`` before ``transition_begin``, then
    ``(init_value - end_value) * (1 - t / transition_steps) ** power + end_value`` with ``t``
    the steps since ``transition_begin``, and ``end_value`` from
    ``transition_begin + transition_steps`` on.

    Args:
      init_value: the value at the start.
      end_value: the value at the end of the transition.
      power: the power of the polynomial.
      transition_steps: the length of the transition; if ``<= 0`` the schedule is the
        constant ``init_value``.
      transition_begin: the steps before the transition starts (a negative value counts
        as 0).

    Returns:
      A function mapping a step count to a value.
    """
    if transition_steps <= 0:
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)

    def schedule(count):
        t = jnp.clip(count - transition_begin, 0, transition_steps)
        frac = 1 - t / transition_steps
        return (init_value - end_value) * (frac ** power) + end_value
    return schedule


def linear_schedule(init_value: Any, end_value: Any, transition_steps: int,
                    transition_begin: int = 0) -> Schedule:
    """Linear transition from ``init_value`` to ``end_value``
    (:func:`polynomial_schedule` with ``power=1``).

    Args:
      init_value: the value at the start.
      end_value: the value at the end of the transition.
      transition_steps: the length of the transition; if ``<= 0`` the schedule is the
        constant ``init_value``.
      transition_begin: the steps before the transition starts.

    Returns:
      A function mapping a step count to a value.
    """
    return polynomial_schedule(init_value=init_value, end_value=end_value, power=1,
                               transition_steps=transition_steps,
                               transition_begin=transition_begin)


def piecewise_constant_schedule(init_value: Any,
                                boundaries_and_scales: Optional[dict[int, float]] = None
                                ) -> Schedule:
    """``init_value`` times the product of the scales of every boundary already reached.

    Args:
      init_value: the value before the first boundary.
      boundaries_and_scales: ``{step: scale}``; from ``step`` on, the value is multiplied by
        ``scale``. Scales must be non-negative.

    Returns:
      A function mapping a step count to a value.

    Raises:
      ValueError: if a scale is negative.
    """
    if boundaries_and_scales is not None:
        if not all(scale >= 0.0 for scale in boundaries_and_scales.values()):
            raise ValueError("`piecewise_constant_schedule` expects non-negative scale factors")
    items = sorted(boundaries_and_scales.items()) if boundaries_and_scales is not None else []

    def schedule(count):
        v = init_value
        for boundary, scale in items:
            # 1 before the boundary, 0 from it on
            before = jnp.maximum(0.0, jnp.sign(boundary - count))
            v = v * before + (1 - before) * scale * v
        return v
    return schedule


def exponential_decay(init_value: Any, transition_steps: int, decay_rate: float,
                      transition_begin: int = 0, staircase: bool = False,
                      end_value: Optional[Any] = None) -> Schedule:
    """Exponential decay: ``init_value * decay_rate ** ((count - transition_begin) /
    transition_steps)`` from ``transition_begin`` on, ``init_value`` before.

    Args:
      init_value: the initial value.
      transition_steps: the steps per factor of ``decay_rate``; if ``<= 0`` the schedule is
        the constant ``init_value``.
      decay_rate: the decay rate; 0 gives the constant ``init_value``.
      transition_begin: the steps before the decay starts (a negative value counts as 0).
      staircase: decay in whole steps of ``transition_steps`` (integer exponent).
      end_value: a lower bound on the value if ``decay_rate < 1``, an upper bound otherwise.

    Returns:
      A function mapping a step count to a value.
    """
    if transition_steps <= 0 or decay_rate == 0:
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)
    bound = None
    if end_value is not None:
        bound = jnp.maximum if decay_rate < 1.0 else jnp.minimum

    def schedule(count):
        since = count - transition_begin
        p = since / transition_steps
        if staircase:
            p = jnp.floor(p)
        value = jnp.where(since <= 0, init_value, init_value * jnp.power(decay_rate, p))
        if bound is not None:
            value = bound(value, end_value)
        return value
    return schedule


def cosine_decay_schedule(init_value: Any, decay_steps: int, alpha: Any = 0.0,
                          exponent: Any = 1.0) -> Schedule:
    """Cosine decay: ``init_value * ((1 - alpha) * c ** exponent + alpha)`` with
    ``c = (1 + cos(pi * min(count, decay_steps) / decay_steps)) / 2``.

    Args:
      init_value: the initial value.
      decay_steps: the length of the decay (positive).
      alpha: the final value as a fraction of ``init_value``.
      exponent: the power applied to the cosine factor.

    Returns:
      A function mapping a step count to a value.

    Raises:
      ValueError: if ``decay_steps`` is not positive.
    """
    if not decay_steps > 0:
        raise ValueError("The cosine_decay_schedule requires positive decay_steps, got "
                         f"decay_steps={decay_steps!r}.")
    # Python ints become floats so that the ratio is a (weakly typed) float
    steps = float(decay_steps) if isinstance(decay_steps, int) else decay_steps

    def schedule(count):
        count = jnp.minimum(count, steps)
        cosine = 0.5 * (1 + jnp.cos(jnp.pi * count / steps))
        return init_value * ((1 - alpha) * cosine ** exponent + alpha)
    return schedule


def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    """Runs ``schedules`` one after the other; each is called with the steps since its
    boundary.

    Args:
      schedules: the schedules, in order.
      boundaries: the steps at which to switch to the next schedule (one fewer than
        ``schedules``).

    Returns:
      A function mapping a step count to a value.
    """
    def schedule(step):
        out = schedules[0](step)
        for boundary, nxt in zip(boundaries, schedules[1:]):
            out = jnp.where(step < boundary, out, nxt(step - boundary))
        return out
    return schedule


def _linear_interpolate(start: Any, end: Any, pct: Any) -> Any:
    return (end - start) * pct + start


def _cosine_interpolate(start: Any, end: Any, pct: Any) -> Any:
    return end + (start - end) / 2.0 * (jnp.cos(jnp.pi * pct) + 1)


def piecewise_interpolate_schedule(interpolate_type: str, init_value: Any,
                                   boundaries_and_scales: Optional[dict[int, float]] = None
                                   ) -> Schedule:
    """Interpolates (linearly or by a half cosine) between the values reached at each
    boundary, the value at a boundary being ``init_value`` times the product of the scales
    up to it.

    Args:
      interpolate_type: ``'linear'`` or ``'cosine'``.
      init_value: the value at step 0.
      boundaries_and_scales: ``{step: scale}``, scales non-negative.

    Returns:
      A function mapping a step count to a value.

    Raises:
      ValueError: for another ``interpolate_type`` or a negative scale.
    """
    if interpolate_type == "linear":
        interpolate = _linear_interpolate
    elif interpolate_type == "cosine":
        interpolate = _cosine_interpolate
    else:
        raise ValueError("`interpolate_type` must be either 'cosine' or 'linear'")
    if boundaries_and_scales:
        boundaries, scales = zip(*sorted(boundaries_and_scales.items()))
        if not all(scale >= 0.0 for scale in scales):
            raise ValueError(
                "`piecewise_interpolate_schedule` expects non-negative scale factors")
    else:
        boundaries, scales = (), ()

    def schedule(count):
        bounds = jnp.stack((0,) + boundaries)
        values = jnp.cumprod(jnp.stack((init_value,) + scales))
        sizes = jnp.maximum(bounds[1:] - bounds[:-1], 1)
        inside = jnp.logical_and(bounds[:-1] <= count, count < bounds[1:])
        pct = (count - bounds[:-1]) / sizes
        interp = interpolate(values[:-1], values[1:], pct)
        return inside.dot(interp) + (bounds[-1] <= count) * values[-1]
    return schedule


def linear_onecycle_schedule(transition_steps: int, peak_value: Any, pct_start: float = 0.3,
                             pct_final: float = 0.85, div_factor: float = 25.0,
                             final_div_factor: float = 1e4) -> Schedule:
    """One-cycle schedule in three linear phases: up from ``peak_value / div_factor`` to
    ``peak_value`` until ``pct_start * transition_steps``, back down until
    ``pct_final * transition_steps``, then down to
    ``peak_value / div_factor / final_div_factor`` at ``transition_steps``.

    Args:
      transition_steps: the length of the cycle (positive).
      peak_value: the peak value.
      pct_start: the fraction of the cycle spent rising.
      pct_final: the fraction of the cycle at which the descent to the initial value ends.
      div_factor: ``peak_value / div_factor`` is the initial value.
      final_div_factor: the final value is the initial value over this.

    Returns:
      A function mapping a step count to a value.

    Raises:
      ValueError: if ``transition_steps`` is not positive.
    """
    if transition_steps <= 0:
        raise ValueError("A linear onecycle schedule was set with a non-positive "
                         "`transition_steps`")
    return piecewise_interpolate_schedule(
        "linear", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(pct_final * transition_steps): 1.0 / div_factor,
         transition_steps: 1.0 / final_div_factor})


def cosine_onecycle_schedule(transition_steps: int, peak_value: Any, pct_start: float = 0.3,
                             div_factor: float = 25.0, final_div_factor: float = 1e4
                             ) -> Schedule:
    """One-cycle schedule with half-cosine phases: up from ``peak_value / div_factor`` to
    ``peak_value`` until ``pct_start * transition_steps``, then down to
    ``peak_value / (div_factor * final_div_factor)`` at ``transition_steps``.

    Args:
      transition_steps: the length of the cycle (positive).
      peak_value: the peak value.
      pct_start: the fraction of the cycle spent rising.
      div_factor: ``peak_value / div_factor`` is the initial value.
      final_div_factor: the final value is the initial value over this.

    Returns:
      A function mapping a step count to a value.

    Raises:
      ValueError: if ``transition_steps`` is not positive.
    """
    if transition_steps <= 0:
        raise ValueError("A cosine onecycle schedule was set with a non-positive "
                         "`transition_steps`")
    return piecewise_interpolate_schedule(
        "cosine", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(transition_steps): 1.0 / (div_factor * final_div_factor)})


def warmup_constant_schedule(init_value: Any, peak_value: Any, warmup_steps: int) -> Schedule:
    """Linear warmup from ``init_value`` to ``peak_value``, then constant.

    Args:
      init_value: the value at step 0.
      peak_value: the value from ``warmup_steps`` on.
      warmup_steps: the length of the warmup.

    Returns:
      A function mapping a step count to a value.
    """
    return linear_schedule(init_value=init_value, end_value=peak_value,
                           transition_steps=warmup_steps)


def warmup_cosine_decay_schedule(init_value: Any, peak_value: Any, warmup_steps: int,
                                 decay_steps: int, end_value: Any = 0.0,
                                 exponent: Any = 1.0) -> Schedule:
    """Linear warmup from ``init_value`` to ``peak_value`` over ``warmup_steps``, then
    cosine decay to ``end_value`` at ``decay_steps`` (which counts the warmup).

    Args:
      init_value: the value at step 0.
      peak_value: the value at the end of the warmup.
      warmup_steps: the length of the warmup.
      decay_steps: the total length of the schedule, warmup included.
      end_value: the final value.
      exponent: the power applied to the cosine factor.

    Returns:
      A function mapping a step count to a value.

    Raises:
      ValueError: if ``decay_steps - warmup_steps`` is not positive.
    """
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    return join_schedules(
        [linear_schedule(init_value=init_value, end_value=peak_value,
                         transition_steps=warmup_steps),
         cosine_decay_schedule(init_value=peak_value, decay_steps=decay_steps - warmup_steps,
                               alpha=alpha, exponent=exponent)],
        [warmup_steps])


def warmup_exponential_decay_schedule(init_value: Any, peak_value: Any, warmup_steps: int,
                                      transition_steps: int, decay_rate: Any,
                                      transition_begin: int = 0, staircase: bool = False,
                                      end_value: Optional[Any] = None) -> Schedule:
    """Linear warmup from ``init_value`` to ``peak_value`` over ``warmup_steps``, then
    :func:`exponential_decay` from ``peak_value``.

    Args:
      init_value: the value at step 0.
      peak_value: the value at the end of the warmup.
      warmup_steps: the length of the warmup.
      transition_steps: see :func:`exponential_decay`.
      decay_rate: see :func:`exponential_decay`.
      transition_begin: steps after the warmup before the decay starts.
      staircase: see :func:`exponential_decay`.
      end_value: see :func:`exponential_decay`.

    Returns:
      A function mapping a step count to a value.
    """
    return join_schedules(
        [linear_schedule(init_value=init_value, end_value=peak_value,
                         transition_steps=warmup_steps),
         exponential_decay(init_value=peak_value, transition_steps=transition_steps,
                           decay_rate=decay_rate, transition_begin=transition_begin,
                           staircase=staircase, end_value=end_value)],
        [warmup_steps])


def sgdr_schedule(cosine_kwargs: Iterable[dict[str, Any]]) -> Schedule:
    """SGD with warm restarts: :func:`warmup_cosine_decay_schedule` cycles one after the
    other, each lasting its ``decay_steps``.

    Args:
      cosine_kwargs: the keyword arguments of each cycle's
        :func:`warmup_cosine_decay_schedule`.

    Returns:
      A function mapping a step count to a value.
    """
    schedules, boundaries, step = [], [], 0
    for kwargs in cosine_kwargs:
        schedules.append(warmup_cosine_decay_schedule(**kwargs))
        step += kwargs["decay_steps"]
        boundaries.append(step)
    return join_schedules(schedules, boundaries[:-1])
