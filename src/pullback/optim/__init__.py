"""``pullback.optim``: gradient transformations, optimizers, schedules and losses with
optax's API and semantics (code written for optax runs by changing its import)."""
from ._base import (EmptyState, GradientTransformation,  # noqa: F401
                    GradientTransformationExtraArgs, OptState, Params, Schedule,
                    ScalarOrSchedule, TransformInitFn, TransformUpdateExtraArgsFn,
                    TransformUpdateFn, Updates, apply_updates, chain, identity,
                    incremental_update, init_empty_state, named_chain, periodic_update,
                    set_to_zero, stateless, stateless_with_tree_map,
                    with_extra_args_support)
from . import tree_utils  # noqa: F401
from ._numerics import (abs_sq, safe_increment, safe_int32_increment,  # noqa: F401
                        safe_norm, safe_root_mean_squares)
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
from ._factorized import FactoredState, scale_by_factored_rms  # noqa: F401
