"""``pullback.optim.losses`` (optax's ``optax.losses``)."""
from ._losses import (convex_kl_divergence, cosine_distance,  # noqa: F401
                      cosine_similarity, generalized_kl_divergence, hinge_loss,
                      huber_loss, kl_divergence,
                      kl_divergence_with_log_targets, l2_loss, log_cosh,
                      safe_softmax_cross_entropy, sigmoid_binary_cross_entropy,
                      sigmoid_focal_loss, softmax_cross_entropy,
                      softmax_cross_entropy_with_integer_labels, squared_error)
