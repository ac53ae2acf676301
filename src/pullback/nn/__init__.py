"""``pullback.nn``: activations and helpers with ``jax.nn``'s names."""
from . import initializers  # noqa: F401
from ._functions import (celu, elu, gelu, glu, hard_sigmoid, hard_swish, hard_tanh,  # noqa: F401
                         leaky_relu, log_sigmoid, log_softmax, logsumexp, one_hot, relu, relu6,
                         selu, sigmoid, silu, soft_sign, softmax, softplus, sparse_plus,
                         squareplus, standardize, swish)
from ._norms import batch_norm, batch_stats, group_norm, layer_norm, rms_norm  # noqa: F401
