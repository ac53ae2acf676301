"""Bad-input probes (numerics): see test_probes.py."""

PROBES = [
    ('special_exp_log',
     'f = lambda x: (jnp.exp(x), jnp.log(x), jnp.log1p(x), jnp.expm1(x))\n'
     'args = (np.array([inf, -inf, nan, -0.0, 0.0, 3.0e37, 1.5e-38, -1.5e-38, 1.0, -2.0], '
     'np.float32),)',
     ('eq',
      '(arr([inf, 0.0, nan, 1.0, 1.0, inf, 1.0, 1.0, 2.7182817459106445, 0.1353352814912796], '
      "'float32'), arr([inf, nan, nan, -inf, -inf, 86.29425811767578, -87.09276580810547, nan, "
      "0.0, nan], 'float32'), arr([inf, nan, nan, -0.0, 0.0, 86.29425811767578, "
      "1.500000042698307e-38, -1.500000042698307e-38, 0.6931471824645996, nan], 'float32'), "
      'arr([inf, -1.0, nan, -0.0, 0.0, inf, 1.500000042698307e-38, -1.500000042698307e-38, '
      "1.7182817459106445, -0.8646647334098816], 'float32'), )")),
    ('special_sqrt_div',
     'f = lambda x: (jnp.sqrt(x), 1 / x, x / x, x * 0, x - x)\n'
     'args = (np.array([inf, -inf, nan, -0.0, 0.0, 3.0e37, 1.5e-38, -1.5e-38, 1.0, -2.0], '
     'np.float32),)',
     ('eq',
      '(arr([inf, nan, nan, -0.0, 0.0, 5.477225420103352e+18, 1.2247449406961802e-19, nan, 1.0, '
      "nan], 'float32'), arr([0.0, -0.0, nan, -inf, inf, 3.3333331168188013e-38, "
      "6.666666284503715e+37, -6.666666284503715e+37, 1.0, -0.5], 'float32'), arr([nan, nan, nan, "
      "nan, nan, 1.0, 1.0, 1.0, 1.0, 1.0], 'float32'), arr([nan, nan, nan, -0.0, 0.0, 0.0, 0.0, "
      "-0.0, 0.0, -0.0], 'float32'), arr([nan, nan, nan, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "
      "'float32'), )")),
    ('special_pow',
     'f = lambda x: (x ** 2, x ** -1.5, jnp.power(x, 0.5), jnp.power(2.0, x), jnp.power(x, 0))\n'
     'args = (np.array([inf, -inf, nan, -0.0, 0.0, 3.0e37, 1.5e-38, -1.5e-38, 1.0, -2.0], '
     'np.float32),)',
     ('eq',
      "(arr([inf, inf, nan, 0.0, 0.0, inf, 0.0, 0.0, 1.0, 4.0], 'float32'), arr([0.0, 0.0, nan, "
      "inf, inf, 0.0, inf, nan, 1.0, nan], 'float32'), arr([inf, inf, nan, 0.0, 0.0, "
      "5.477225420103352e+18, 1.2247449406961802e-19, nan, 1.0, nan], 'float32'), arr([inf, 0.0, "
      "nan, 1.0, 1.0, inf, 1.0, 1.0, 2.0, 0.25], 'float32'), arr([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, "
      "1.0, 1.0, 1.0, 1.0], 'float32'), )")),
    ('special_pow_edges',
     'f = lambda b, e: jnp.power(b, e)\n'
     'args = (np.array([0, 0, -2, -8, 1, -1, inf, -inf, nan, 1], np.float32), np.array([-1, 0, '
     '0.5, 1/3, nan, inf, -0.5, 3, 0, inf], np.float32))',
     ('eq', "arr([inf, 1.0, nan, nan, 1.0, 1.0, 0.0, -inf, 1.0, 1.0], 'float32')")),
    ('special_trig',
     'f = lambda x: (jnp.sin(x), jnp.cos(x), jnp.tanh(x), jnp.arctan(x), jnp.sinh(x), '
     'jnp.cosh(x))\n'
     'args = (np.array([inf, -inf, nan, -0.0, 0.0, 3.0e37, 1.5e-38, -1.5e-38, 1.0, -2.0], '
     'np.float32),)',
     ('eq',
      '(arr([nan, nan, nan, -0.0, 0.0, 0.954626202583313, 1.500000042698307e-38, '
      "-1.500000042698307e-38, 0.8414709568023682, -0.9092974066734314], 'float32'), arr([nan, "
      'nan, nan, 1.0, 1.0, -0.2978067100048065, 1.0, 1.0, 0.5403022766113281, -0.416146844625473], '
      "'float32'), arr([1.0, -1.0, nan, -0.0, 0.0, 1.0, 1.500000042698307e-38, "
      "-1.500000042698307e-38, 0.7615941762924194, -0.9640275835990906], 'float32'), "
      'arr([1.5707963705062866, -1.5707963705062866, nan, -0.0, 0.0, 1.5707963705062866, '
      '1.500000042698307e-38, -1.500000042698307e-38, 0.7853981256484985, -1.1071488857269287], '
      "'float32'), arr([inf, -inf, nan, -0.0, 0.0, inf, 1.500000042698307e-38, "
      "-1.500000042698307e-38, 1.175201177597046, -3.6268603801727295], 'float32'), arr([inf, inf, "
      "nan, 1.0, 1.0, inf, 1.0, 1.0, 1.5430805683135986, 3.7621958255767822], 'float32'), )")),
    ('special_rounding',
     'f = lambda x: (jnp.floor(x), jnp.ceil(x), jnp.round(x), jnp.trunc(x), jnp.sign(x), '
     'jnp.abs(x))\n'
     'args = (np.array([inf, -inf, nan, -0.0, 0.0, 3.0e37, 1.5e-38, -1.5e-38, 1.0, -2.0], '
     'np.float32),)',
     ('eq',
      "(arr([inf, -inf, nan, -0.0, 0.0, 3.000000106909804e+37, 0.0, -1.0, 1.0, -2.0], 'float32'), "
      "arr([inf, -inf, nan, -0.0, 0.0, 3.000000106909804e+37, 1.0, -0.0, 1.0, -2.0], 'float32'), "
      "arr([inf, -inf, nan, -0.0, 0.0, 3.000000106909804e+37, 0.0, -0.0, 1.0, -2.0], 'float32'), "
      "arr([inf, -inf, nan, -0.0, 0.0, 3.000000106909804e+37, 0.0, -0.0, 1.0, -2.0], 'float32'), "
      "arr([1.0, -1.0, nan, -0.0, 0.0, 1.0, 1.0, -1.0, 1.0, -1.0], 'float32'), arr([inf, inf, nan, "
      '0.0, 0.0, 3.000000106909804e+37, 1.500000042698307e-38, 1.500000042698307e-38, 1.0, 2.0], '
      "'float32'), )")),
    ('special_minmax',
     'f = lambda x: (jnp.maximum(x, 1.0), jnp.minimum(x, 1.0), jnp.clip(x, -1, 1), jnp.max(x), '
     'jnp.min(x), jnp.argmax(x))\n'
     'args = (np.array([inf, -inf, nan, -0.0, 0.0, 3.0e37, 1.5e-38, -1.5e-38, 1.0, -2.0], '
     'np.float32),)',
     ('eq',
      "(arr([inf, 1.0, nan, 1.0, 1.0, 3.000000106909804e+37, 1.0, 1.0, 1.0, 1.0], 'float32'), "
      'arr([1.0, -inf, nan, -0.0, 0.0, 1.0, 1.500000042698307e-38, -1.500000042698307e-38, 1.0, '
      "-2.0], 'float32'), arr([1.0, -1.0, nan, -0.0, 0.0, 1.0, 1.500000042698307e-38, "
      "-1.500000042698307e-38, 1.0, -1.0], 'float32'), arr(nan, 'float32'), arr(nan, 'float32'), "
      "arr(2, 'int32'), )")),
    ('special_compare',
     'f = lambda x: (x == x, x < 1, jnp.isnan(x), jnp.isinf(x), jnp.isfinite(x), jnp.signbit(x))\n'
     'args = (np.array([inf, -inf, nan, -0.0, 0.0, 3.0e37, 1.5e-38, -1.5e-38, 1.0, -2.0], '
     'np.float32),)',
     ('eq',
      "(arr([True, True, False, True, True, True, True, True, True, True], 'bool'), arr([False, "
      "True, False, True, True, False, True, True, False, True], 'bool'), arr([False, False, True, "
      "False, False, False, False, False, False, False], 'bool'), arr([True, True, False, False, "
      "False, False, False, False, False, False], 'bool'), arr([False, False, False, True, True, "
      "True, True, True, True, True], 'bool'), arr([False, True, False, True, False, False, False, "
      "True, False, True], 'bool'), )")),
    ('special_arctan2',
     'f = lambda y, x: jnp.arctan2(y, x)\n'
     'args = (np.array([0.0, -0.0, 0.0, -0.0, 1, inf, -inf, nan], np.float32), np.array([0.0, 0.0, '
     '-0.0, -0.0, 0, inf, inf, 1], np.float32))',
     ('eq',
      'arr([0.0, -0.0, 3.1415927410125732, -3.1415927410125732, 1.5707963705062866, '
      "0.7853981852531433, -0.7853981852531433, nan], 'float32')")),
    ('special_sum_inf',
     'f = lambda x: (x.sum(), jnp.cumsum(x), x.prod())\n'
     'args = (np.array([inf, -inf, 1.0], np.float32),)',
     ('eq', "(arr(nan, 'float32'), arr([inf, nan, nan], 'float32'), arr(-inf, 'float32'), )")),
    ('special_f16',
     'f = lambda x: (jnp.exp(x), x * x, jnp.sqrt(x), x + 65504)\n'
     'args = (np.array([12.0, -20.0, 300.0, -0.0, 1e-4, nan], np.float16),)',
     ('eq',
      "(arr([inf, 0.0, inf, 1.0, 1.0, nan], 'float16'), arr([144.0, 400.0, inf, 0.0, 0.0, nan], "
      "'float16'), arr([3.46484375, nan, 17.328125, -0.0, 0.01000213623046875, nan], 'float16'), "
      "arr([65504.0, 65472.0, inf, 65504.0, 65504.0, nan], 'float16'), )")),
    ('special_bf16',
     'f = lambda x: (jnp.exp(x), x * x, x + 1)\n'
     "args = (arr([100.0, -100.0, 3e38, -0.0, 1e-37, nan], 'bfloat16'),)",
     ('eq',
      "(arr([inf, 0.0, inf, 1.0, 1.0, nan], 'bfloat16'), arr([9984.0, 9984.0, inf, 0.0, 0.0, nan], "
      "'bfloat16'), arr([101.0, -99.0, 3.00405527047391e+38, 1.0, 1.0, nan], 'bfloat16'), )")),
    ('special_complex',
     'f = lambda z: (jnp.exp(z), jnp.abs(z), jnp.sqrt(z), z * 2)\n'
     'args = (np.array([complex(nan, 1), -0.0, 30 + 1e3j], np.complex64),)',
     ('eq',
      "(carr([nan, 1.0, 6009849380864.0], [nan, 0.0, 8836427546624.0], 'complex64'), arr([nan, "
      "0.0, 1000.4498901367188], 'float32'), carr([nan, 0.0, 22.69856834411621], [nan, 0.0, "
      "22.027820587158203], 'complex64'), carr([nan, -0.0, 60.0], [nan, 0.0, 2000.0], "
      "'complex64'), )")),
    ('huge_tiny_products',
     'f = lambda x: (x * x, x * 1e-30, x / 1e-30, jnp.exp(-x), jnp.log(x))\n'
     'args = (np.array([1e30, 1e-30, 2e-38, 1e38], np.float32),)',
     ('eq',
      "(arr([inf, 0.0, 0.0, inf], 'float32'), arr([1.0, 0.0, 0.0, 100000000.0], 'float32'), "
      "arr([inf, 1.0, 1.999999987845058e-08, inf], 'float32'), arr([0.0, 1.0, 1.0, 0.0], "
      "'float32'), arr([69.07755279541016, -69.07755279541016, -86.80508422851562, "
      "87.49822998046875], 'float32'), )")),
    ('int_pow_overflow',
     'f = lambda x: (x ** 2, x * x, -x, abs(x))\n'
     'args = (np.array([2**31 - 1, -2**31, 46341], np.int32),)',
     ('eq',
      "(arr([1, 0, -2147479015], 'int32'), arr([1, 0, -2147479015], 'int32'), arr([-2147483647, "
      "-2147483648, -46341], 'int32'), arr([2147483647, -2147483648, 46341], 'int32'), )")),
    ('integer_pow_neg',
     'f = lambda x: (lax.integer_pow(x, -1), lax.integer_pow(x, 0))\n'
     'args = (np.array([2.0, 0.0, -0.0, inf], np.float32),)',
     ('eq', "(arr([0.5, inf, -inf, 0.0], 'float32'), arr([1.0, 1.0, 1.0, 1.0], 'float32'), )")),
    # issue 24's added ops (JAX 0.10's values, its default 32-bit mode)
    ('added_ops_specials',
     'f = lambda x: (lax.square(x), lax.reduce_precision(x, 5, 10), lax.cumlogsumexp(x), '
     'jnp.diff(x))\n'
     'args = (np.array([3.0, -inf, nan, 1e20, -0.0, 65520.0, 1e-6, 2.5], np.float32),)',
     ('eq',
      "(arr([9.0, inf, nan, inf, 0.0, 4292870400.0, 9.999999960041972e-13, 6.25], 'float32'), "
      "arr([3.0, -inf, nan, inf, -0.0, inf, 0.0, 2.5], 'float32'), arr([3.0, 3.0, nan, nan, nan, "
      "nan, nan, nan], 'float32'), arr([-inf, nan, nan, -1.0000000200408773e+20, 65520.0, "
      "-65520.0, 2.4999990463256836], 'float32'), )")),
    ('gcd_lcm_signs',
     'f = lambda a, b: (jnp.gcd(a, b), jnp.lcm(a, b))\n'
     'args = (np.array([12, -18, 0, 0, -7, 2**31 - 1, 92682], np.int32), '
     'np.array([-18, -12, 0, -5, 0, 2**31 - 2, 92681], np.int32))',
     ('eq',
      "(arr([6, 6, 0, 5, 7, 1, 1], 'int32'), arr([36, 36, 0, 0, 0, -2147483646, -74150], "
      "'int32'), )")),
    ('bincount_clip_drop',
     'f = lambda x, w: (jnp.bincount(x, length=4), jnp.bincount(x, w, length=3))\n'
     'args = (np.array([-3, 0, 1, 3, 7, 1], np.int32), '
     'np.array([0.5, 1.0, 2.0, 4.0, 8.0, 16.0], np.float32))',
     ('eq', "(arr([2, 2, 0, 1], 'int32'), arr([1.5, 18.0, 0.0], 'float32'), )")),
]
