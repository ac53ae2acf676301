"""``pullback.optim``: gradient transformations, optimizers, schedules and losses with
optax's API and semantics (code written for optax runs by changing its import)."""
from ._base import (EmptyState, GradientTransformation,  # noqa: F401
                    GradientTransformationExtraArgs, OptState, Params, Schedule,
                    ScalarOrSchedule, TransformInitFn, TransformUpdateExtraArgsFn,
                    TransformUpdateFn, Updates, apply_updates, chain, identity,
                    incremental_update, init_empty_state, named_chain, periodic_update,
                    set_to_zero, stateless, stateless_with_tree_map,
                    with_extra_args_support)
