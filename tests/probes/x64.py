"""Probes that need 64-bit values (int64 indices past 2**31, float64 edge cases): they run with
jax_enable_x64 on, as JAX's x64 mode. take_huge_int64 and at_add_huge hold the documented modes'
values (clip, fill, drop) for indices past 2**31, where JAX (even with x64) truncates int64
indices to 32 bits (2**40 reads and updates element 0); pullback does not.
"""
inf, nan = float("inf"), float("nan")

PROBES = [
    ('take_huge_int64',
     "f = lambda x, i: (jnp.take(x, i, mode='clip'), jnp.take(x, i, mode='fill'))\n"
     'args = (np.arange(5, dtype=np.float32), np.array([2**40, -2**40, 2**62], np.int64))',
     ('eq', "(arr([4.0, 0.0, 4.0], 'float32'), arr([nan, nan, nan], 'float32'))")),
    ('at_add_huge',
     'f = lambda x, i: x.at[i].add(1.0)\n'
     'args = (np.arange(5, dtype=np.float32), np.array([2**40, -2**40, 1], np.int64))',
     ('eq', "arr([0.0, 2.0, 2.0, 3.0, 4.0], 'float32')")),
    ('special_f64',
     'f = lambda x: (jnp.exp(x), jnp.log(x), jnp.sqrt(x), 1 / x, x ** 2)\n'
     'args = (np.array([inf, -inf, nan, -0.0, 0.0, 1.7e307, 3e-308, -3e-308, 1.0, -2.0]),)',
     ('eq',
      '(arr([inf, 0.0, nan, 1.0, 1.0, inf, 1.0, 1.0, 2.7182818284590455, 0.1353352832366127], '
      "'float64'), arr([inf, nan, nan, -inf, -inf, 707.4242518002342, -708.0975963534979, nan, "
      "0.0, nan], 'float64'), arr([inf, nan, nan, -0.0, 0.0, 4.1231056256176604e+153, "
      "1.7320508075688772e-154, nan, 1.0, nan], 'float64'), arr([0.0, -0.0, nan, -inf, inf, "
      '5.882352941176471e-308, 3.333333333333333e+307, -3.333333333333333e+307, 1.0, -0.5], '
      "'float64'), arr([inf, inf, nan, 0.0, 0.0, inf, 0.0, 0.0, 1.0, 4.0], 'float64'), )")),
]
