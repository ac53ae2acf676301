"""``pullback.nn``: activations and helpers with ``jax.nn``'s names."""
from . import initializers  # noqa: F401
from ._functions import (celu, elu, gelu, glu, hard_sigmoid, hard_swish, hard_tanh,  # noqa: F401
                         leaky_relu, log_sigmoid, log_softmax, logsumexp, one_hot, relu, relu6,
                         selu, sigmoid, silu, soft_sign, softmax, softplus, sparse_plus,
                         squareplus, standardize, swish)
from ._attention import dot_product_attention  # noqa: F401
