"""``pullback.nn``: activations and helpers with ``jax.nn``'s names."""
from . import initializers  # noqa: F401
from ._functions import (celu, elu, gelu, glu, hard_sigmoid, hard_swish, hard_tanh,  # noqa: F401
                         leaky_relu, log_sigmoid, log_softmax, logsumexp, one_hot, relu, relu6,
                         selu, sigmoid, silu, soft_sign, softmax, softplus, sparse_plus,
                         squareplus, standardize, swish)
from ._rope import rope, rope_axial  # noqa: F401
from ._cross_entropy import (softmax_cross_entropy,  # noqa: F401
                             softmax_cross_entropy_with_integer_labels)
from ._functions import (hard_silu, identity, log1mexp, logmeanexp, mish,  # noqa: F401
                         sparse_sigmoid, tanh)
from ._scaled_matmul import (get_scaled_dot_general_config, scaled_dot_general,  # noqa: F401
                             scaled_matmul)
from ._norms import batch_norm, batch_stats, group_norm, layer_norm, rms_norm  # noqa: F401
from ._attention import dot_product_attention  # noqa: F401
from ._pooling import avg_pool, max_pool, min_pool  # noqa: F401
