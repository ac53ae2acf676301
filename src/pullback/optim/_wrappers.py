"""Wrappers around gradient transformations (optax's ``partition``/``multi_transform``,
``inject_hyperparams``, ``MultiSteps`` and ``apply_if_finite``).

Their branching is data-dependent (``lax.cond``, ``jnp.where`` on counters in the state), so a
wrapped optimizer still traces into one ``jit`` program.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import (Any, Callable, Hashable, Iterable, Mapping, NamedTuple, Optional,
                    Protocol, Union, runtime_checkable)

import numpy as np

from .. import lax
from .. import numpy as jnp
from .. import tree_util
from ..tracer import core
from ..tracer import dtypes as _dtypes
from ..tracer.array import Array
from ._base import (GradientTransformation, GradientTransformationExtraArgs, OptState,
                    Params, Schedule, Updates, with_extra_args_support)
from ._numerics import safe_increment
from ._transform import masked


def _is_array(x: Any) -> bool:
    # concrete arrays and tracers alike (a jax.Array check in JAX)
    return isinstance(x, (Array, core.Tracer))


# ---------------------------------------------------------------------------------------------
# partition / multi_transform


class PartitionState(NamedTuple):
    """The state of :func:`partition`: each label's inner state (masked to its leaves)."""
    inner_states: Mapping[Hashable, OptState]


MultiTransformState = PartitionState


def partition(transforms: Mapping[Hashable, GradientTransformation],
              param_labels: Union[Any, Callable[[Any], Any]], *,
              mask_compatible_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """Applies a different transformation to each labelled subset of the parameters.

    Args:
      transforms: ``{label: transformation}``.
      param_labels: a pytree of labels with the structure of the params (or a prefix of
        it), or a function of the params (or updates) returning one. Each label must be a
        key of ``transforms``.
      mask_compatible_extra_args: also mask the extra args that have the structure of the
        updates, so each transformation sees only its own leaves of them.

    Returns:
      A :class:`GradientTransformationExtraArgs` whose state is a :class:`PartitionState`
      holding, per label, the inner state with the other labels' subtrees masked out.

    Raises:
      ValueError: at ``init``, if a label has no transformation.
    """
    transforms = {k: with_extra_args_support(v) for k, v in transforms.items()}

    def labels_of(tree):
        return param_labels(tree) if callable(param_labels) else param_labels

    def mask_of(labels, group):
        return tree_util.tree_map(lambda label: label == group, labels)

    def init_fn(params):
        labels = labels_of(params)
        label_set = set(tree_util.tree_leaves(labels))
        if not label_set.issubset(transforms.keys()):
            raise ValueError(
                "partition: some parameters have no corresponding transformation.\n"
                f"Parameter labels: {sorted(label_set, key=repr)} \n"
                f"Transforms keys: {sorted(transforms.keys(), key=repr)} \n")
        return PartitionState({
            group: masked(tx, mask_of(labels, group),
                          mask_compatible_extra_args=mask_compatible_extra_args).init(params)
            for group, tx in transforms.items()})

    def update_fn(updates, state, params=None, **extra_args):
        labels = labels_of(updates)
        new_inner = {}
        for group, tx in transforms.items():
            masked_tx = masked(tx, mask_of(labels, group),
                               mask_compatible_extra_args=mask_compatible_extra_args)
            updates, new_inner[group] = masked_tx.update(
                updates, state.inner_states[group], params, **extra_args)
        return updates, PartitionState(new_inner)
    return GradientTransformationExtraArgs(init_fn, update_fn)


multi_transform = partition


# ---------------------------------------------------------------------------------------------
# inject_hyperparams


@runtime_checkable
class StatefulSchedule(Protocol):
    """A schedule with a state: ``init() -> state``, ``update(state, **extra_args) ->
    state`` and ``__call__(state, **extra_args) -> value``."""

    def init(self) -> Any: ...

    def update(self, state: Any, **extra_args: Any) -> Any: ...

    def __call__(self, state: Any, **extra_args: Any) -> Any: ...


class WrappedScheduleState(NamedTuple):
    """The state of a :class:`WrappedSchedule`: the step count."""
    count: Any


class WrappedSchedule:
    """A plain schedule ``f(count)`` as a :class:`StatefulSchedule` counting the steps."""

    def __init__(self, schedule_fn: Schedule):
        self.schedule_fn = schedule_fn

    def init(self) -> WrappedScheduleState:
        """The initial state, count 0 (int32)."""
        return WrappedScheduleState(count=jnp.zeros([], jnp.int32))

    def update(self, state: WrappedScheduleState, **extra_args: Any) -> WrappedScheduleState:
        """The state one step later."""
        del extra_args
        return WrappedScheduleState(count=safe_increment(state.count))

    def __call__(self, state: WrappedScheduleState, **extra_args: Any) -> Any:
        """The schedule's value at the state's count."""
        del extra_args
        return self.schedule_fn(state.count)


class InjectHyperparamsState(NamedTuple):
    """The pre-0.1.9 state of :func:`inject_hyperparams` (kept, as optax keeps it, for code
    that names it); ``inject_hyperparams`` returns an
    :class:`InjectStatefulHyperparamsState`."""
    count: Any
    hyperparams: dict[str, Any]
    inner_state: OptState


class InjectStatefulHyperparamsState(NamedTuple):
    """The state of :func:`inject_hyperparams`.

    Attributes:
      count: the number of updates so far (int32 scalar).
      hyperparams: ``{name: value}`` of the numeric and scheduled hyperparameters used at
        the last update; editing a numeric one changes it for the next updates.
      hyperparams_states: ``{name: schedule state}`` of the scheduled ones.
      inner_state: the inner transformation's state.
    """
    count: Any
    hyperparams: dict[str, Any]
    hyperparams_states: dict[str, Any]
    inner_state: OptState


def _higher_dtype(a: Any, b: Any) -> Any:
    p = jnp.promote_types(a, b)
    if p == a:
        return a
    if p == b:
        return b
    raise ValueError(f"inject_hyperparams: the params' dtypes {a} and {b} cannot be ordered "
                     "by promotion; pass hyperparam_dtype")


def _highest_dtype(tree: Any) -> Any:
    leaves = tree_util.tree_leaves(tree)
    if not leaves:
        return jnp.asarray([]).dtype
    return functools.reduce(_higher_dtype, [jnp.asarray(x).dtype for x in leaves])


def _convert_floats(x: Any, dtype: Any) -> Any:
    # a strongly typed array keeps its dtype; floats (Python, NumPy, weak arrays) take dtype
    if _is_array(x) and not getattr(x, "weak_type", False):
        return x
    current = x.dtype if hasattr(x, "dtype") else type(x)
    if jnp.issubdtype(current, jnp.floating):
        return jnp.asarray(x, dtype=dtype)
    return x


def inject_hyperparams(inner_factory: Callable[..., GradientTransformation],
                       static_args: Union[str, Iterable[str]] = (),
                       hyperparam_dtype: Optional[Any] = None
                       ) -> Callable[..., GradientTransformationExtraArgs]:
    """Makes the numeric hyperparameters of ``inner_factory`` part of the optimizer state, so
    that they can be scheduled or edited between steps.

    The returned factory takes ``inner_factory``'s arguments; a callable argument is a
    schedule of the step count (or a :class:`StatefulSchedule`), a number or array becomes a
    state entry ``state.hyperparams[name]`` that a user may overwrite between updates; bools,
    ``static_args`` and other objects are passed through unchanged.

    Args:
      inner_factory: a function returning a gradient transformation.
      static_args: names of callable arguments that are not schedules.
      hyperparam_dtype: the dtype of float hyperparameters (default: the params' highest
        float dtype).

    Returns:
      A factory returning a :class:`GradientTransformationExtraArgs` whose state is an
      :class:`InjectStatefulHyperparamsState`.

    Raises:
      ValueError: if ``static_args`` names an argument ``inner_factory`` lacks.
    """
    static_args = {static_args} if isinstance(static_args, str) else set(static_args)
    signature = inspect.signature(inner_factory)
    if not static_args.issubset(signature.parameters):
        raise ValueError(
            "`static_args` must specify a subset of `inner_factory`'s parameters. Given "
            f"`static_args`: {static_args}. `inner_factory` parameters: "
            f"{set(signature.parameters.keys())}")

    @functools.wraps(inner_factory)
    def wrapped(*args: Any, **kwargs: Any) -> GradientTransformationExtraArgs:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        sched_hps, numeric_hps, other_hps = {}, {}, {}
        for name, value in bound.arguments.items():
            if name in static_args or isinstance(value, bool):
                other_hps[name] = value
            elif isinstance(value, StatefulSchedule):
                sched_hps[name] = value
            elif callable(value):
                sched_hps[name] = WrappedSchedule(value)
            elif isinstance(value, (int, float, np.ndarray)) or _is_array(value):
                numeric_hps[name] = value
            else:
                other_hps[name] = value

        def dtype_for(params):
            return hyperparam_dtype if hyperparam_dtype is not None else _highest_dtype(params)

        def init_fn(params):
            dtype = dtype_for(params)
            hparams = {k: jnp.asarray(_convert_floats(v, dtype)) for k, v in numeric_hps.items()}
            sched_states = {k: f.init() for k, f in sched_hps.items()}
            hparams.update({k: _convert_floats(f(sched_states[k]), dtype)
                            for k, f in sched_hps.items()})
            return InjectStatefulHyperparamsState(
                count=jnp.zeros([], jnp.int32), hyperparams=hparams,
                hyperparams_states=sched_states,
                inner_state=inner_factory(**other_hps, **hparams).init(params))

        def update_fn(updates, state, params=None, **extra_args):
            dtype = dtype_for(params)
            hparams = {k: _convert_floats(v, dtype) for k, v in state.hyperparams.items()}
            hparams.update({k: _convert_floats(f(state.hyperparams_states[k], **extra_args),
                                               dtype)
                            for k, f in sched_hps.items()})
            sched_states = {k: f.update(state.hyperparams_states[k], **extra_args)
                            for k, f in sched_hps.items()}
            updates, inner_state = with_extra_args_support(
                inner_factory(**other_hps, **hparams)).update(
                    updates, state.inner_state, params, **extra_args)
            return updates, InjectStatefulHyperparamsState(
                count=safe_increment(state.count), hyperparams=hparams,
                hyperparams_states=sched_states, inner_state=inner_state)
        return GradientTransformationExtraArgs(init_fn, update_fn)
    return wrapped


def inject_stateful_hyperparams(inner_factory: Callable[..., GradientTransformation],
                                static_args: Union[str, Iterable[str]] = (),
                                hyperparam_dtype: Optional[Any] = None
                                ) -> Callable[..., GradientTransformationExtraArgs]:
    """Deprecated in optax for :func:`inject_hyperparams`, which takes stateful schedules
    too.

    Args:
      inner_factory: a function returning a gradient transformation.
      static_args: names of callable arguments that are not schedules.
      hyperparam_dtype: the dtype of float hyperparameters.

    Returns:
      What :func:`inject_hyperparams` returns.
    """
    warnings.warn("inject_stateful_hyperparams is deprecated, use inject_hyperparams instead",
                  DeprecationWarning, stacklevel=2)
    return inject_hyperparams(inner_factory, static_args, hyperparam_dtype)


# ---------------------------------------------------------------------------------------------
# MultiSteps


ShouldSkipUpdateFunction = Callable[[Updates, Any, Optional[Params]], tuple[Any, Any]]


def skip_not_finite(updates: Updates, gradient_step: Any,
                    params: Optional[Params]) -> tuple[Any, Any]:
    """A ``should_skip_update_fn`` for :class:`MultiSteps`: skip updates holding an inf or a
    NaN.

    Args:
      updates: the mini-step's updates.
      gradient_step: the gradient step (unused).
      params: the params (unused).

    Returns:
      ``(should_skip, {'should_skip': ..., 'num_not_finite': ...})``.
    """
    del gradient_step, params
    counts = [jnp.sum(jnp.logical_not(jnp.isfinite(u))) for u in tree_util.tree_leaves(updates)]
    num_not_finite = jnp.sum(jnp.array(counts))
    should_skip = num_not_finite > 0
    return should_skip, {"should_skip": should_skip, "num_not_finite": num_not_finite}


def skip_large_updates(updates: Updates, gradient_step: Any, params: Optional[Params],
                       max_squared_norm: Any) -> tuple[Any, Any]:
    """A ``should_skip_update_fn`` for :class:`MultiSteps` (bind ``max_squared_norm`` with
    ``functools.partial``): skip updates whose squared norm is not below it (or is NaN).

    Args:
      updates: the mini-step's updates.
      gradient_step: the gradient step (unused).
      params: the params (unused).
      max_squared_norm: the bound on the squared global norm.

    Returns:
      ``(should_skip, {'should_skip': ..., 'norm_squared': ...})``.
    """
    del gradient_step, params
    norm_sq = jnp.sum(jnp.array([jnp.sum(u ** 2) for u in tree_util.tree_leaves(updates)]))
    should_skip = jnp.logical_not(norm_sq < max_squared_norm)
    return should_skip, {"should_skip": should_skip, "norm_squared": norm_sq}


class MultiStepsState(NamedTuple):
    """The state of :class:`MultiSteps`.

    Attributes:
      mini_step: the mini-steps accumulated since the last gradient step (int32).
      gradient_step: the gradient steps taken (int32).
      inner_opt_state: the wrapped optimizer's state.
      acc_grads: the gradients accumulated so far.
      skip_state: what ``should_skip_update_fn`` returned last.
    """
    mini_step: Any
    gradient_step: Any
    inner_opt_state: Any
    acc_grads: Any
    skip_state: Any = ()


def _never_skip(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
    return jnp.array(False, dtype=jnp.bool_), ()


class MultiSteps:
    """Gradient accumulation: runs the wrapped optimizer once every k mini-steps on the mean
    (or sum) of the k gradients, returning zero updates in between.

    Args:
      opt: the wrapped optimizer.
      every_k_schedule: k, an int or a function of the gradient step.
      use_grad_mean: average the accumulated gradients (True) or sum them.
      should_skip_update_fn: ``f(updates, gradient_step, params) -> (skip, skip_state)``;
        a skipped mini-step leaves the state as it was (e.g. :func:`skip_not_finite`).
      accumulator_dtype: the dtype of the accumulated gradients.
    """

    def __init__(self, opt: GradientTransformation,
                 every_k_schedule: Union[int, Callable[[Any], Any]],
                 use_grad_mean: bool = True,
                 should_skip_update_fn: Optional[ShouldSkipUpdateFunction] = None,
                 accumulator_dtype: Any = jnp.float32):
        self._opt = with_extra_args_support(opt)
        if isinstance(every_k_schedule, int):
            self._every_k_schedule = lambda step: every_k_schedule
        else:
            self._every_k_schedule = every_k_schedule
        self._use_grad_mean = use_grad_mean
        self._accumulator_dtype = _dtypes.canonical(_dtypes.canonicalize(accumulator_dtype))
        self._should_skip_update_fn = should_skip_update_fn or _never_skip

    def _acc_update(self, grad: Any, acc: Any, n_acc: Any) -> Any:
        if self._use_grad_mean:
            return acc + (grad - acc) / (n_acc + 1)
        return grad + acc

    @property
    def inner_opt(self) -> GradientTransformationExtraArgs:
        """The wrapped optimizer."""
        return self._opt

    def init(self, params: Params) -> MultiStepsState:
        """The initial :class:`MultiStepsState` for ``params``."""
        gradient_step = jnp.zeros([], dtype=jnp.int32)
        _, skip_state = self._should_skip_update_fn(
            tree_util.tree_map(jnp.zeros_like, params), gradient_step, params)
        return MultiStepsState(
            mini_step=jnp.zeros([], dtype=jnp.int32),
            gradient_step=gradient_step,
            inner_opt_state=self._opt.init(params),
            acc_grads=tree_util.tree_map(
                lambda p: jnp.zeros_like(p, dtype=self._accumulator_dtype), params),
            skip_state=skip_state)

    def update(self, updates: Updates, state: MultiStepsState,
               params: Optional[Params] = None, **extra_args: Any
               ) -> tuple[Updates, MultiStepsState]:
        """Accumulates ``updates``; every k-th mini-step returns the wrapped optimizer's
        updates of the accumulated gradients, zeros otherwise."""
        k_steps = self._every_k_schedule(state.gradient_step)
        should_skip, skip_state = self._should_skip_update_fn(updates, state.gradient_step,
                                                              params)
        if (jnp.asarray(should_skip).dtype, np.shape(should_skip)) != (jnp.bool_, ()):
            raise ValueError(
                "MultiSteps: `should_skip_update_fn` should return a boolean scalar array, "
                f"but it returned an array of dtype {jnp.asarray(should_skip).dtype} and "
                f"shape {np.shape(should_skip)}")
        acc_dtype = self._accumulator_dtype

        def cast_like(tree, like):
            return tree_util.tree_map(lambda t, u: jnp.asarray(t).astype(jnp.asarray(u).dtype),
                                      tree, like)

        def do_update(updates, state, params):
            acc_grads = tree_util.tree_map(
                lambda u, acc: self._acc_update(u, acc, state.mini_step),
                updates, state.acc_grads)
            final_updates, new_inner = self._opt.update(
                cast_like(acc_grads, updates), state.inner_opt_state, params=params,
                **extra_args)
            emit = state.mini_step == (k_steps - 1)
            new_state = MultiStepsState(
                mini_step=safe_increment(state.mini_step) % k_steps,
                gradient_step=(emit * safe_increment(state.gradient_step)
                               + (1 - emit) * state.gradient_step),
                inner_opt_state=tree_util.tree_map(
                    lambda st, nst: jnp.where(emit, nst, st).astype(jnp.asarray(st).dtype),
                    state.inner_opt_state, new_inner),
                acc_grads=tree_util.tree_map(lambda ga: ((1 - emit) * ga).astype(acc_dtype),
                                             acc_grads),
                skip_state=skip_state)
            return tree_util.tree_map(lambda u: emit * u, final_updates), new_state

        def skip_update(updates, state, params):
            # the inner update is traced only for its output's shapes and dtypes: the zeros
            # do not depend on its values
            shaped, _ = self._opt.update(cast_like(state.acc_grads, updates),
                                         state.inner_opt_state, params=params, **extra_args)
            zeros = tree_util.tree_map(jnp.zeros_like, shaped)
            return zeros, MultiStepsState(
                mini_step=state.mini_step, gradient_step=state.gradient_step,
                inner_opt_state=state.inner_opt_state, acc_grads=state.acc_grads,
                skip_state=skip_state)
        return lax.cond(should_skip, skip_update, do_update, updates, state, params)

    def has_updated(self, state: Union[MultiStepsState, Any]) -> Any:
        """Whether the last :meth:`update` emitted the wrapped optimizer's updates."""
        return jnp.logical_and(state.mini_step == 0, state.gradient_step > 0)

    def gradient_transformation(self) -> GradientTransformation:
        """This wrapper as a :class:`GradientTransformation`."""
        return GradientTransformation(init=self.init, update=self.update)


# ---------------------------------------------------------------------------------------------
# apply_if_finite


class ApplyIfFiniteState(NamedTuple):
    """The state of :func:`apply_if_finite`.

    Attributes:
      notfinite_count: consecutive updates holding an inf or a NaN (reset by a finite one).
      last_finite: whether the last update was finite.
      total_notfinite: all the non-finite updates so far.
      inner_state: the inner transformation's state.
    """
    notfinite_count: Any
    last_finite: Any
    total_notfinite: Any
    inner_state: Any


def apply_if_finite(inner: GradientTransformation,
                    max_consecutive_errors: int) -> GradientTransformationExtraArgs:
    """Skips updates holding an inf or a NaN (zero updates, inner state kept), unless more
    than ``max_consecutive_errors`` came in a row, in which case the update is applied.

    Args:
      inner: the wrapped transformation.
      max_consecutive_errors: how many consecutive non-finite updates are skipped.

    Returns:
      A :class:`GradientTransformationExtraArgs` whose state is an
      :class:`ApplyIfFiniteState`.
    """
    inner = with_extra_args_support(inner)

    def init_fn(params):
        return ApplyIfFiniteState(
            notfinite_count=jnp.zeros([], jnp.int32), last_finite=jnp.array(True, jnp.bool_),
            total_notfinite=jnp.zeros([], jnp.int32), inner_state=inner.init(params))

    def update_fn(updates, state, params=None, **extra_args):
        inner_state = state.inner_state
        isfinite = jnp.all(jnp.array(
            [jnp.all(jnp.isfinite(u)) for u in tree_util.tree_leaves(updates)]))
        notfinite_count = jnp.where(isfinite, jnp.zeros([], jnp.int32),
                                    safe_increment(state.notfinite_count))

        def do_update(_):
            return inner.update(updates, inner_state, params, **extra_args)

        def reject_update(_):
            return tree_util.tree_map(jnp.zeros_like, updates), inner_state
        updates, new_inner = lax.cond(
            jnp.logical_or(isfinite, notfinite_count > max_consecutive_errors),
            do_update, reject_update, None)
        return updates, ApplyIfFiniteState(
            notfinite_count=notfinite_count, last_finite=isfinite,
            total_notfinite=jnp.where(isfinite, state.total_notfinite,
                                      safe_increment(state.total_notfinite)),
            inner_state=new_inner)
    return GradientTransformationExtraArgs(init_fn, update_fn)
