"""``pullback.optim.tree``: the short names of :mod:`pullback.optim.tree_utils`
(optax's ``optax.tree``: ``tree.add`` for ``tree_utils.tree_add``, and so on)."""
from .tree_utils import (tree_add as add, tree_add_scale as add_scale,  # noqa: F401
                         tree_allclose as allclose, tree_batch_shape as batch_shape,
                         tree_bias_correction as bias_correction, tree_cast as cast,
                         tree_cast_like as cast_like, tree_clip as clip, tree_conj as conj,
                         tree_div as div, tree_dtype as dtype, tree_full_like as full_like,
                         tree_get as get, tree_get_all_with_path as get_all_with_path,
                         tree_map_params as map_params, tree_max as max, tree_min as min,
                         tree_mul as mul, tree_norm as norm, tree_ones_like as ones_like,
                         tree_real as real, tree_scale as scale, tree_set as set,
                         tree_size as size, tree_sub as sub, tree_sum as sum,
                         tree_update_infinity_moment as update_infinity_moment,
                         tree_update_moment as update_moment,
                         tree_update_moment_per_elem_norm as update_moment_per_elem_norm,
                         tree_vdot as vdot, tree_where as where,
                         tree_zeros_like as zeros_like)
