"""``pullback.optim``: gradient transformations, optimizers, schedules and losses with
optax's API and semantics (code written for optax runs by changing its import)."""
from ._base import (EmptyState, GradientTransformation,  # noqa: F401
                    GradientTransformationExtraArgs, OptState, Params, Schedule,
                    ScalarOrSchedule, TransformInitFn, TransformUpdateExtraArgsFn,
                    TransformUpdateFn, Updates, apply_updates, chain, identity,
                    incremental_update, init_empty_state, named_chain, periodic_update,
                    set_to_zero, stateless, stateless_with_tree_map,
                    with_extra_args_support)
from ._clipping import (ZeroNansState, clip, clip_by_block_rms,  # noqa: F401
                        clip_by_global_norm, global_norm, zero_nans)
from ._losses import (convex_kl_divergence, cosine_distance,  # noqa: F401
                      cosine_similarity, generalized_kl_divergence, hinge_loss,
                      huber_loss, kl_divergence, l2_loss, log_cosh,
                      safe_softmax_cross_entropy, sigmoid_binary_cross_entropy,
                      sigmoid_focal_loss, softmax_cross_entropy,
                      softmax_cross_entropy_with_integer_labels, squared_error)
from ._schedules import (constant_schedule, cosine_decay_schedule,  # noqa: F401
                         cosine_onecycle_schedule, exponential_decay, join_schedules,
                         linear_onecycle_schedule, linear_schedule,
                         piecewise_constant_schedule, piecewise_interpolate_schedule,
                         polynomial_schedule, sgdr_schedule, warmup_constant_schedule,
                         warmup_cosine_decay_schedule, warmup_exponential_decay_schedule)
from ._wrappers import (ApplyIfFiniteState, InjectHyperparamsState,  # noqa: F401
                        InjectStatefulHyperparamsState, MultiSteps, MultiStepsState,
                        MultiTransformState, PartitionState, ShouldSkipUpdateFunction,
                        WrappedSchedule, apply_if_finite, inject_hyperparams,
                        inject_stateful_hyperparams, multi_transform, partition,
                        skip_large_updates, skip_not_finite)
from . import losses, schedules  # noqa: F401,E402
