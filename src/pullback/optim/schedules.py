"""``pullback.optim.schedules`` (optax's ``optax.schedules``): the schedules and the
hyperparameter injection that uses them."""
from ._base import Schedule  # noqa: F401
from ._schedules import (constant_schedule, cosine_decay_schedule,  # noqa: F401
                         cosine_onecycle_schedule, exponential_decay, join_schedules,
                         linear_onecycle_schedule, linear_schedule,
                         piecewise_constant_schedule, piecewise_interpolate_schedule,
                         polynomial_schedule, sgdr_schedule, warmup_constant_schedule,
                         warmup_cosine_decay_schedule, warmup_exponential_decay_schedule)
from ._wrappers import (InjectHyperparamsState, InjectStatefulHyperparamsState,  # noqa: F401
                        StatefulSchedule, WrappedSchedule, inject_hyperparams,
                        inject_stateful_hyperparams)
