"""Bad-input probes (indexing): see test_probes.py. (int64 indices beyond int32: x64.py.)"""

PROBES = [
    ('take_default',
     'f = lambda x, i: jnp.take(x, i)\n'
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq', "arr([0.0, 4.0, 0.0, 4.0, nan, nan, nan], 'float32')")),
    ('take_clip',
     "f = lambda x, i: jnp.take(x, i, mode='clip')\n"
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq', "arr([0.0, 0.0, 0.0, 4.0, 4.0, 4.0, 0.0], 'float32')")),
    ('take_wrap',
     "f = lambda x, i: jnp.take(x, i, mode='wrap')\n"
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq', "arr([0.0, 4.0, 0.0, 4.0, 0.0, 2.0, 2.0], 'float32')")),
    ('take_fill',
     "f = lambda x, i: jnp.take(x, i, mode='fill', fill_value=-1)\n"
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq', "arr([0.0, 4.0, 0.0, 4.0, -1.0, -1.0, -1.0], 'float32')")),
    ('getitem_array_oob',
     'f = lambda x, i: x[i]\n'
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq', "arr([0.0, 4.0, 0.0, 4.0, 4.0, 4.0, 0.0], 'float32')")),
    ('at_get_fill',
     "f = lambda x, i: x.at[i].get(mode='fill', fill_value=-1)\n"
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq', "arr([0.0, 4.0, 0.0, 4.0, -1.0, -1.0, -1.0], 'float32')")),
    ('at_get_clip',
     "f = lambda x, i: x.at[i].get(mode='clip')\n"
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq', "arr([0.0, 4.0, 0.0, 4.0, 4.0, 4.0, 0.0], 'float32')")),
    ('at_set_default',
     'f = lambda x, i: x.at[i].set(9.0)\n'
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq', "arr([9.0, 1.0, 2.0, 3.0, 9.0], 'float32')")),
    ('at_set_drop',
     "f = lambda x, i: x.at[i].set(9.0, mode='drop')\n"
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq', "arr([9.0, 1.0, 2.0, 3.0, 9.0], 'float32')")),
    ('at_set_clip',
     "f = lambda x, i: x.at[i].set(9.0, mode='clip')\n"
     'args = (np.arange(5, dtype=np.float32), np.array([-5, 7, 2], np.int32))',
     ('eq', "arr([9.0, 1.0, 9.0, 3.0, 9.0], 'float32')")),
    ('at_add_oob',
     'f = lambda x, i: (x.at[i].add(1.0), x.at[i].mul(2.0), x.at[i].min(-1.0), x.at[i].max(9.0))\n'
     'args = (np.arange(5, dtype=np.float32), np.array([-5, -1, 0, 4, 5, 2**31 - 1, -2**31], '
     'np.int32))',
     ('eq',
      "(arr([2.0, 1.0, 2.0, 3.0, 6.0], 'float32'), arr([0.0, 1.0, 2.0, 3.0, 16.0], 'float32'), "
      "arr([-1.0, 1.0, 2.0, 3.0, -1.0], 'float32'), arr([9.0, 1.0, 2.0, 3.0, 9.0], 'float32'), )")),
    ('take_along_axis_oob',
     'f = lambda x, i: jnp.take_along_axis(x, i, axis=1)\n'
     'args = (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([[5, -1], [0, -9]], '
     'np.int32))',
     ('eq', "arr([[nan, 2.0], [3.0, nan]], 'float32')")),
    ('dynamic_slice_huge',
     'f = lambda x, i: lax.dynamic_slice(x, (i,), (2,))\n'
     'args = (np.arange(5, dtype=np.float32), np.int32(2**31 - 1))',
     ('eq', "arr([3.0, 4.0], 'float32')")),
    ('dynamic_slice_neg',
     'f = lambda x, i: lax.dynamic_slice(x, (i,), (2,))\n'
     'args = (np.arange(5, dtype=np.float32), np.int32(-2**31))',
     ('eq', "arr([0.0, 1.0], 'float32')")),
    ('dynamic_update_slice_oob',
     'f = lambda x, i: lax.dynamic_update_slice(x, np.ones(2, np.float32), (i,))\n'
     'args = (np.arange(5, dtype=np.float32), np.int32(100))',
     ('eq', "arr([0.0, 1.0, 2.0, 1.0, 1.0], 'float32')")),
    ('dynamic_index_oob',
     'f = lambda x, i: lax.dynamic_index_in_dim(x, i, keepdims=False)\n'
     'args = (np.arange(5, dtype=np.float32), np.int32(-100))',
     ('eq', "arr(0.0, 'float32')")),
    ('getitem_traced_negative',
     'f = lambda x, i: (x[i], x[i:i + 2] if False else x[i])\n'
     'args = (np.arange(5, dtype=np.float32), np.int32(-1))',
     ('eq', "(arr(4.0, 'float32'), arr(4.0, 'float32'), )")),
    ('getitem_2d_oob',
     'f = lambda x, i, j: x[i, j]\n'
     'args = (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([0, 5, -3], np.int32), '
     'np.array([7, 1, -1], np.int32))',
     ('eq', "arr([2.0, 4.0, 2.0], 'float32')")),
    ('getitem_uint_index',
     'f = lambda x, i: x[i]\n'
     'args = (np.arange(5, dtype=np.float32), np.array([0, 4, 255], np.uint8))',
     ('eq', "arr([0.0, 4.0, 4.0], 'float32')")),
    ('getitem_bool_mask_static',
     'run = lambda: jnp.arange(5.0)[np.array([True, False, True, False, True])]',
     ('eq', "arr([0.0, 2.0, 4.0], 'float32')")),
    ('gather_empty_index',
     'f = lambda x, i: (jnp.take(x, i), x.at[i].set(1.0))\n'
     'args = (np.arange(5, dtype=np.float32), np.zeros((0,), np.int32))',
     ('eq', "(arr([], 'float32').reshape((0,)), arr([0.0, 1.0, 2.0, 3.0, 4.0], 'float32'), )")),
]
