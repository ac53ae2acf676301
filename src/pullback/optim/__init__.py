"""``pullback.optim``: gradient transformations, optimizers, schedules and losses with
optax's API and semantics (code written for optax runs by changing its import)."""
from ._base import (EmptyState, GradientTransformation,  # noqa: F401
                    GradientTransformationExtraArgs, OptState, Params, Schedule,
                    ScalarOrSchedule, TransformInitFn, TransformUpdateExtraArgsFn,
                    TransformUpdateFn, Updates, apply_updates, chain, identity,
                    incremental_update, init_empty_state, named_chain, periodic_update,
                    set_to_zero, stateless, stateless_with_tree_map,
                    with_extra_args_support)
from . import tree, tree_utils  # noqa: F401
from ._numerics import (safe_increment, safe_int32_increment, safe_norm,  # noqa: F401
                        safe_root_mean_squares)
from ._transform import (EmaState, MaskedNode, MaskedState,  # noqa: F401
                         ScaleByScheduleState, TraceState, WeightDecaySchedule,
                         add_decayed_weights, ema, masked, scale, scale_by_learning_rate,
                         scale_by_schedule, trace)
from ._scale_by import (ScaleByAdamState, ScaleByAmsgradState,  # noqa: F401
                        ScaleByLionState, ScaleByRmsState, ScaleByRmsWithCountState,
                        ScaleByRssState, ScaleByRStdDevState, ScaleByRStdDevWithCountState,
                        scale_by_adam, scale_by_adamax, scale_by_amsgrad, scale_by_lion,
                        scale_by_rms, scale_by_rss, scale_by_stddev)
from ._alias import (adagrad, adam, adamax, adamaxw, adamw, amsgrad, lion,  # noqa: F401
                     nadam, nadamw, rmsprop, sgd)
from ._adaptive import (ScaleByBeliefState, ScaleByNovogradState, adabelief,  # noqa: F401
                        lamb, lars, novograd, radam, scale_by_belief, scale_by_novograd,
                        scale_by_param_block_norm, scale_by_param_block_rms, scale_by_radam,
                        scale_by_trust_ratio)
from ._factorized import FactoredState, adafactor, scale_by_factored_rms  # noqa: F401
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
