"""Bad-input probes (dtypes): see test_probes.py."""

PROBES = [
    ('bool_arith',
     "x = arr([True, False, True, False], 'bool')\n"
     "y = arr([True, True, False, False], 'bool')\n"
     'f = lambda x, y: (x + y, x * y, x & y, x | y, ~x, x == y)\n'
     'args = (x, y)',
     ('eq',
      "(arr([True, True, True, False], 'bool'), arr([True, False, False, False], 'bool'), "
      "arr([True, False, False, False], 'bool'), arr([True, True, True, False], 'bool'), "
      "arr([False, True, False, True], 'bool'), arr([True, False, False, True], 'bool'), )")),
    ('bool_reduce',
     "x = arr([True, False, True, False], 'bool')\n"
     "y = arr([True, True, False, False], 'bool')\n"
     'f = lambda x, y: (x.sum(), x.any(), x.all(), x.max(), jnp.sort(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr(2, 'int64'), arr(True, 'bool'), arr(False, 'bool'), arr(True, 'bool'), arr([False, "
      "False, True, True], 'bool'), )")),
    ('int8_arith',
     "x = arr([100, -100, 7, 0], 'int8')\n"
     "y = arr([100, -100, -3, 1], 'int8')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([-56, 56, 4, 1], 'int8'), arr([16, 16, -21, 0], 'int8'), arr([0, 0, 10, -1], 'int8'), "
      "arr([-100, 100, -7, 0], 'int8'), arr([False, False, False, True], 'bool'), arr([True, True, "
      "False, False], 'bool'), arr([100, 100, 7, 0], 'int8'), )")),
    ('int8_reduce',
     "x = arr([100, -100, 7, 0], 'int8')\n"
     "y = arr([100, -100, -3, 1], 'int8')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq', "(arr(7, 'int64'), arr(100, 'int8'), arr(-100, 'int8'), arr(0, 'int64'), )")),
    ('int8_convert',
     "x = arr([100, -100, 7, 0], 'int8')\n"
     "y = arr([100, -100, -3, 1], 'int8')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([100.0, -100.0, 7.0, 0.0], 'float32'), arr([-100, 0, 7, 100], 'int8'), arr([100, -100, "
      "7, 1], 'int8'), arr([100, -100, 7, 1], 'int8'), )")),
    ('int16_arith',
     "x = arr([30000, -30000, 7, 0], 'int16')\n"
     "y = arr([30000, -30000, -3, 1], 'int16')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([-5536, 5536, 4, 1], 'int16'), arr([-5888, -5888, -21, 0], 'int16'), arr([0, 0, 10, "
      "-1], 'int16'), arr([-30000, 30000, -7, 0], 'int16'), arr([False, False, False, True], "
      "'bool'), arr([True, True, False, False], 'bool'), arr([30000, 30000, 7, 0], 'int16'), )")),
    ('int16_reduce',
     "x = arr([30000, -30000, 7, 0], 'int16')\n"
     "y = arr([30000, -30000, -3, 1], 'int16')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq', "(arr(7, 'int64'), arr(30000, 'int16'), arr(-30000, 'int16'), arr(0, 'int64'), )")),
    ('int16_convert',
     "x = arr([30000, -30000, 7, 0], 'int16')\n"
     "y = arr([30000, -30000, -3, 1], 'int16')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([30000.0, -30000.0, 7.0, 0.0], 'float32'), arr([-30000, 0, 7, 30000], 'int16'), "
      "arr([30000, -30000, 7, 1], 'int16'), arr([30000, -30000, 7, 1], 'int16'), )")),
    ('int32_arith',
     "x = arr([2**31 - 1, -2**31, 7, 0], 'int32')\n"
     "y = arr([1, -1, -3, 1], 'int32')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([-2147483648, 2147483647, 4, 1], 'int32'), arr([2147483647, -2147483648, -21, 0], "
      "'int32'), arr([2147483646, -2147483647, 10, -1], 'int32'), arr([-2147483647, -2147483648, "
      "-7, 0], 'int32'), arr([False, True, False, True], 'bool'), arr([False, False, False, "
      "False], 'bool'), arr([2147483647, -2147483648, 7, 0], 'int32'), )")),
    ('int32_reduce',
     "x = arr([2**31 - 1, -2**31, 7, 0], 'int32')\n"
     "y = arr([1, -1, -3, 1], 'int32')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq',
      "(arr(6, 'int64'), arr(2147483647, 'int32'), arr(-2147483648, 'int32'), arr(0, 'int64'), )")),
    ('int32_convert',
     "x = arr([2**31 - 1, -2**31, 7, 0], 'int32')\n"
     "y = arr([1, -1, -3, 1], 'int32')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([2147483648.0, -2147483648.0, 7.0, 0.0], 'float32'), arr([-2147483648, 0, 7, "
      "2147483647], 'int32'), arr([2147483647, -1, 7, 1], 'int32'), arr([2147483647, -1, 7, 1], "
      "'int32'), )")),
    ('int64_arith',
     "x = arr([2**63 - 1, -2**63, 7, 0], 'int64')\n"
     "y = arr([1, -1, -3, 1], 'int64')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([-9223372036854775808, 9223372036854775807, 4, 1], 'int64'), arr([9223372036854775807, "
      "-9223372036854775808, -21, 0], 'int64'), arr([9223372036854775806, -9223372036854775807, "
      "10, -1], 'int64'), arr([-9223372036854775807, -9223372036854775808, -7, 0], 'int64'), "
      "arr([False, True, False, True], 'bool'), arr([False, False, False, False], 'bool'), "
      "arr([9223372036854775807, -9223372036854775808, 7, 0], 'int64'), )")),
    ('int64_reduce',
     "x = arr([2**63 - 1, -2**63, 7, 0], 'int64')\n"
     "y = arr([1, -1, -3, 1], 'int64')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq',
      "(arr(6, 'int64'), arr(9223372036854775807, 'int64'), arr(-9223372036854775808, 'int64'), "
      "arr(0, 'int64'), )")),
    ('int64_convert',
     "x = arr([2**63 - 1, -2**63, 7, 0], 'int64')\n"
     "y = arr([1, -1, -3, 1], 'int64')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([9.223372036854776e+18, -9.223372036854776e+18, 7.0, 0.0], 'float32'), "
      "arr([-9223372036854775808, 0, 7, 9223372036854775807], 'int64'), arr([9223372036854775807, "
      "-1, 7, 1], 'int64'), arr([9223372036854775807, -1, 7, 1], 'int64'), )")),
    ('uint8_arith',
     "x = arr([200, 100, 7, 0], 'uint8')\n"
     "y = arr([100, 200, 3, 1], 'uint8')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([44, 44, 10, 1], 'uint8'), arr([32, 32, 21, 0], 'uint8'), arr([100, 156, 4, 255], "
      "'uint8'), arr([56, 156, 249, 0], 'uint8'), arr([False, True, False, True], 'bool'), "
      "arr([False, False, False, False], 'bool'), arr([200, 100, 7, 0], 'uint8'), )")),
    ('uint8_reduce',
     "x = arr([200, 100, 7, 0], 'uint8')\n"
     "y = arr([100, 200, 3, 1], 'uint8')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq', "(arr(307, 'uint64'), arr(200, 'uint8'), arr(0, 'uint8'), arr(0, 'uint64'), )")),
    ('uint8_convert',
     "x = arr([200, 100, 7, 0], 'uint8')\n"
     "y = arr([100, 200, 3, 1], 'uint8')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([200.0, 100.0, 7.0, 0.0], 'float32'), arr([0, 7, 100, 200], 'uint8'), arr([200, 200, "
      "7, 1], 'uint8'), arr([200, 200, 7, 1], 'uint8'), )")),
    ('uint16_arith',
     "x = arr([60000, 100, 7, 0], 'uint16')\n"
     "y = arr([10000, 200, 3, 1], 'uint16')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([4464, 300, 10, 1], 'uint16'), arr([17920, 20000, 21, 0], 'uint16'), arr([50000, "
      "65436, 4, 65535], 'uint16'), arr([5536, 65436, 65529, 0], 'uint16'), arr([False, True, "
      "False, True], 'bool'), arr([False, False, False, False], 'bool'), arr([60000, 100, 7, 0], "
      "'uint16'), )")),
    ('uint16_reduce',
     "x = arr([60000, 100, 7, 0], 'uint16')\n"
     "y = arr([10000, 200, 3, 1], 'uint16')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq', "(arr(60107, 'uint64'), arr(60000, 'uint16'), arr(0, 'uint16'), arr(0, 'uint64'), )")),
    ('uint16_convert',
     "x = arr([60000, 100, 7, 0], 'uint16')\n"
     "y = arr([10000, 200, 3, 1], 'uint16')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([60000.0, 100.0, 7.0, 0.0], 'float32'), arr([0, 7, 100, 60000], 'uint16'), arr([60000, "
      "200, 7, 1], 'uint16'), arr([60000, 200, 7, 1], 'uint16'), )")),
    ('uint32_arith',
     "x = arr([2**32 - 1, 100, 7, 0], 'uint32')\n"
     "y = arr([1, 200, 3, 1], 'uint32')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([0, 300, 10, 1], 'uint32'), arr([4294967295, 20000, 21, 0], 'uint32'), "
      "arr([4294967294, 4294967196, 4, 4294967295], 'uint32'), arr([1, 4294967196, 4294967289, 0], "
      "'uint32'), arr([False, True, False, True], 'bool'), arr([False, False, False, False], "
      "'bool'), arr([4294967295, 100, 7, 0], 'uint32'), )")),
    ('uint32_reduce',
     "x = arr([2**32 - 1, 100, 7, 0], 'uint32')\n"
     "y = arr([1, 200, 3, 1], 'uint32')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq',
      "(arr(4294967402, 'uint64'), arr(4294967295, 'uint32'), arr(0, 'uint32'), arr(0, 'uint64'), )")),
    ('uint32_convert',
     "x = arr([2**32 - 1, 100, 7, 0], 'uint32')\n"
     "y = arr([1, 200, 3, 1], 'uint32')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([4294967296.0, 100.0, 7.0, 0.0], 'float32'), arr([0, 7, 100, 4294967295], 'uint32'), "
      "arr([4294967295, 200, 7, 1], 'uint32'), arr([4294967295, 200, 7, 1], 'uint32'), )")),
    ('uint64_arith',
     "x = arr([2**64 - 1, 100, 7, 0], 'uint64')\n"
     "y = arr([1, 200, 3, 1], 'uint64')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([0, 300, 10, 1], 'uint64'), arr([18446744073709551615, 20000, 21, 0], 'uint64'), "
      "arr([18446744073709551614, 18446744073709551516, 4, 18446744073709551615], 'uint64'), "
      "arr([1, 18446744073709551516, 18446744073709551609, 0], 'uint64'), arr([False, True, False, "
      "True], 'bool'), arr([False, False, False, False], 'bool'), arr([18446744073709551615, 100, "
      "7, 0], 'uint64'), )")),
    ('uint64_reduce',
     "x = arr([2**64 - 1, 100, 7, 0], 'uint64')\n"
     "y = arr([1, 200, 3, 1], 'uint64')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq',
      "(arr(106, 'uint64'), arr(18446744073709551615, 'uint64'), arr(0, 'uint64'), arr(0, "
      "'uint64'), )")),
    ('uint64_convert',
     "x = arr([2**64 - 1, 100, 7, 0], 'uint64')\n"
     "y = arr([1, 200, 3, 1], 'uint64')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([1.8446744073709552e+19, 100.0, 7.0, 0.0], 'float32'), arr([0, 7, 100, "
      "18446744073709551615], 'uint64'), arr([18446744073709551615, 200, 7, 1], 'uint64'), "
      "arr([18446744073709551615, 200, 7, 1], 'uint64'), )")),
    ('float16_arith',
     "x = arr([65504.0, -1.5, 0.1, -0.0], 'float16')\n"
     "y = arr([65504.0, 2.0, 3.0, 0.0], 'float16')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([inf, 0.5, 3.099609375, 0.0], 'float16'), arr([inf, -3.0, 0.2998046875, -0.0], "
      "'float16'), arr([0.0, -3.5, -2.900390625, -0.0], 'float16'), arr([-65504.0, 1.5, "
      "-0.0999755859375, 0.0], 'float16'), arr([False, True, True, False], 'bool'), arr([True, "
      "False, False, True], 'bool'), arr([65504.0, 1.5, 0.0999755859375, 0.0], 'float16'), )")),
    ('float16_reduce',
     "x = arr([65504.0, -1.5, 0.1, -0.0], 'float16')\n"
     "y = arr([65504.0, 2.0, 3.0, 0.0], 'float16')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq',
      "(arr(65504.0, 'float16'), arr(65504.0, 'float16'), arr(-1.5, 'float16'), arr(0.0, "
      "'float16'), )")),
    ('float16_convert',
     "x = arr([65504.0, -1.5, 0.1, -0.0], 'float16')\n"
     "y = arr([65504.0, 2.0, 3.0, 0.0], 'float16')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([65504.0, -1.5, 0.0999755859375, -0.0], 'float32'), arr([-1.5, -0.0, 0.0999755859375, "
      "65504.0], 'float16'), arr([65504.0, 2.0, 3.0, 0.0], 'float16'), arr([65504.0, 2.0, 3.0, "
      "0.0], 'float16'), )")),
    ('bfloat16_arith',
     "x = arr([3.0e38, -1.5, 0.1, -0.0], 'bfloat16')\n"
     "y = arr([3.0e38, 2.0, 3.0, 0.0], 'bfloat16')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([inf, 0.5, 3.09375, 0.0], 'bfloat16'), arr([inf, -3.0, 0.30078125, -0.0], 'bfloat16'), "
      "arr([0.0, -3.5, -2.90625, -0.0], 'bfloat16'), arr([-3.00405527047391e+38, 1.5, "
      "-0.10009765625, 0.0], 'bfloat16'), arr([False, True, True, False], 'bool'), arr([True, "
      "False, False, True], 'bool'), arr([3.00405527047391e+38, 1.5, 0.10009765625, 0.0], "
      "'bfloat16'), )")),
    ('bfloat16_reduce',
     "x = arr([3.0e38, -1.5, 0.1, -0.0], 'bfloat16')\n"
     "y = arr([3.0e38, 2.0, 3.0, 0.0], 'bfloat16')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq',
      "(arr(3.00405527047391e+38, 'bfloat16'), arr(3.00405527047391e+38, 'bfloat16'), arr(-1.5, "
      "'bfloat16'), arr(nan, 'bfloat16'), )")),
    ('bfloat16_convert',
     "x = arr([3.0e38, -1.5, 0.1, -0.0], 'bfloat16')\n"
     "y = arr([3.0e38, 2.0, 3.0, 0.0], 'bfloat16')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([3.00405527047391e+38, -1.5, 0.10009765625, -0.0], 'float32'), arr([-1.5, -0.0, "
      "0.10009765625, 3.00405527047391e+38], 'bfloat16'), arr([3.00405527047391e+38, 2.0, 3.0, "
      "0.0], 'bfloat16'), arr([3.00405527047391e+38, 2.0, 3.0, 0.0], 'bfloat16'), )")),
    ('float32_arith',
     "x = arr([3.0e38, -1.5, 0.1, -0.0], 'float32')\n"
     "y = arr([3.0e38, 2.0, 3.0, 0.0], 'float32')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([inf, 0.5, 3.0999999046325684, 0.0], 'float32'), arr([inf, -3.0, 0.30000001192092896, "
      "-0.0], 'float32'), arr([0.0, -3.5, -2.9000000953674316, -0.0], 'float32'), "
      "arr([-3.0000000054977558e+38, 1.5, -0.10000000149011612, 0.0], 'float32'), arr([False, "
      "True, True, False], 'bool'), arr([True, False, False, True], 'bool'), "
      "arr([3.0000000054977558e+38, 1.5, 0.10000000149011612, 0.0], 'float32'), )")),
    ('float32_reduce',
     "x = arr([3.0e38, -1.5, 0.1, -0.0], 'float32')\n"
     "y = arr([3.0e38, 2.0, 3.0, 0.0], 'float32')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq',
      "(arr(3.0000000054977558e+38, 'float32'), arr(3.0000000054977558e+38, 'float32'), arr(-1.5, "
      "'float32'), arr(nan, 'float32'), )")),
    ('float32_convert',
     "x = arr([3.0e38, -1.5, 0.1, -0.0], 'float32')\n"
     "y = arr([3.0e38, 2.0, 3.0, 0.0], 'float32')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([3.0000000054977558e+38, -1.5, 0.10000000149011612, -0.0], 'float32'), arr([-1.5, "
      "-0.0, 0.10000000149011612, 3.0000000054977558e+38], 'float32'), "
      "arr([3.0000000054977558e+38, 2.0, 3.0, 0.0], 'float32'), arr([3.0000000054977558e+38, 2.0, "
      "3.0, 0.0], 'float32'), )")),
    ('float64_arith',
     "x = arr([1.7e308, -1.5, 0.1, -0.0], 'float64')\n"
     "y = arr([1.7e308, 2.0, 3.0, 0.0], 'float64')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x < y, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(arr([inf, 0.5, 3.1, 0.0], 'float64'), arr([inf, -3.0, 0.30000000000000004, -0.0], "
      "'float64'), arr([0.0, -3.5, -2.9, -0.0], 'float64'), arr([-1.7e+308, 1.5, -0.1, 0.0], "
      "'float64'), arr([False, True, True, False], 'bool'), arr([True, False, False, True], "
      "'bool'), arr([1.7e+308, 1.5, 0.1, 0.0], 'float64'), )")),
    ('float64_reduce',
     "x = arr([1.7e308, -1.5, 0.1, -0.0], 'float64')\n"
     "y = arr([1.7e308, 2.0, 3.0, 0.0], 'float64')\n"
     'f = lambda x, y: (x.sum(), x.max(), x.min(), x.prod())\n'
     'args = (x, y)',
     ('eq',
      "(arr(1.7e+308, 'float64'), arr(1.7e+308, 'float64'), arr(-1.5, 'float64'), arr(nan, "
      "'float64'), )")),
    ('float64_convert',
     "x = arr([1.7e308, -1.5, 0.1, -0.0], 'float64')\n"
     "y = arr([1.7e308, 2.0, 3.0, 0.0], 'float64')\n"
     'f = lambda x, y: (x.astype(jnp.float32), jnp.sort(x), jnp.where(x > y, x, y), jnp.maximum(x, '
     'y))\n'
     'args = (x, y)',
     ('eq',
      "(arr([inf, -1.5, 0.10000000149011612, -0.0], 'float32'), arr([-1.5, -0.0, 0.1, 1.7e+308], "
      "'float64'), arr([1.7e+308, 2.0, 3.0, 0.0], 'float64'), arr([1.7e+308, 2.0, 3.0, 0.0], "
      "'float64'), )")),
    ('complex64_arith',
     "x = arr([1+2j, -1.5j, 0.1, 0.5], 'complex64')\n"
     "y = arr([3-1j, 2.0, 3.0j, 0.0], 'complex64')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(carr([4.0, 2.0, 0.10000000149011612, 0.5], [1.0, -1.5, 3.0, 0.0], 'complex64'), carr([5.0, "
      "0.0, 0.0, 0.0], [5.0, -3.0, 0.30000001192092896, 0.0], 'complex64'), carr([-2.0, -2.0, "
      "0.10000000149011612, 0.5], [3.0, -1.5, -3.0, 0.0], 'complex64'), carr([-1.0, 0.0, "
      "-0.10000000149011612, -0.5], [-2.0, 1.5, -0.0, -0.0], 'complex64'), arr([False, False, "
      "False, False], 'bool'), arr([2.2360680103302, 1.5, 0.10000000149011612, 0.5], 'float32'), "
      ')')),
    ('complex64_reduce',
     "x = arr([1+2j, -1.5j, 0.1, 0.5], 'complex64')\n"
     "y = arr([3-1j, 2.0, 3.0j, 0.0], 'complex64')\n"
     'f = lambda x, y: (x.sum(), x.prod(), x.real, x.imag)\n'
     'args = (x, y)',
     ('eq',
      "(carr(1.600000023841858, 0.5, 'complex64'), carr(0.15000000596046448, -0.07500000298023224, "
      "'complex64'), arr([1.0, -0.0, 0.10000000149011612, 0.5], 'float32'), arr([2.0, -1.5, 0.0, "
      "0.0], 'float32'), )")),
    ('complex64_convert',
     "x = arr([1+2j, -1.5j, 0.1, 0.5], 'complex64')\n"
     "y = arr([3-1j, 2.0, 3.0j, 0.0], 'complex64')\n"
     'f = lambda x, y: (jnp.where(x == y, x, y), x.astype(jnp.complex64), jnp.conj(x))\n'
     'args = (x, y)',
     ('eq',
      "(carr([3.0, 2.0, 0.0, 0.0], [-1.0, 0.0, 3.0, 0.0], 'complex64'), carr([1.0, -0.0, "
      "0.10000000149011612, 0.5], [2.0, -1.5, 0.0, 0.0], 'complex64'), carr([1.0, -0.0, "
      "0.10000000149011612, 0.5], [-2.0, 1.5, -0.0, -0.0], 'complex64'), )")),
    ('complex128_arith',
     "x = arr([1+2j, -1.5j, 0.1, 0.5], 'complex128')\n"
     "y = arr([3-1j, 2.0, 3.0j, 0.0], 'complex128')\n"
     'f = lambda x, y: (x + y, x * y, x - y, -x, x == y, abs(x))\n'
     'args = (x, y)',
     ('eq',
      "(carr([4.0, 2.0, 0.1, 0.5], [1.0, -1.5, 3.0, 0.0], 'complex128'), carr([5.0, 0.0, 0.0, "
      "0.0], [5.0, -3.0, 0.30000000000000004, 0.0], 'complex128'), carr([-2.0, -2.0, 0.1, 0.5], "
      "[3.0, -1.5, -3.0, 0.0], 'complex128'), carr([-1.0, 0.0, -0.1, -0.5], [-2.0, 1.5, -0.0, "
      "-0.0], 'complex128'), arr([False, False, False, False], 'bool'), arr([2.23606797749979, "
      "1.5, 0.1, 0.5], 'float64'), )")),
    ('complex128_reduce',
     "x = arr([1+2j, -1.5j, 0.1, 0.5], 'complex128')\n"
     "y = arr([3-1j, 2.0, 3.0j, 0.0], 'complex128')\n"
     'f = lambda x, y: (x.sum(), x.prod(), x.real, x.imag)\n'
     'args = (x, y)',
     ('eq',
      "(carr(1.6, 0.5, 'complex128'), carr(0.15000000000000002, -0.07500000000000001, "
      "'complex128'), arr([1.0, -0.0, 0.1, 0.5], 'float64'), arr([2.0, -1.5, 0.0, 0.0], "
      "'float64'), )")),
    ('complex128_convert',
     "x = arr([1+2j, -1.5j, 0.1, 0.5], 'complex128')\n"
     "y = arr([3-1j, 2.0, 3.0j, 0.0], 'complex128')\n"
     'f = lambda x, y: (jnp.where(x == y, x, y), x.astype(jnp.complex64), jnp.conj(x))\n'
     'args = (x, y)',
     ('eq',
      "(carr([3.0, 2.0, 0.0, 0.0], [-1.0, 0.0, 3.0, 0.0], 'complex128'), carr([1.0, -0.0, "
      "0.10000000149011612, 0.5], [2.0, -1.5, 0.0, 0.0], 'complex64'), carr([1.0, -0.0, 0.1, 0.5], "
      "[-2.0, 1.5, -0.0, -0.0], 'complex128'), )")),
    ('added_ops_dtypes',
     'f = lambda h, b, u, l: (lax.square(h), lax.reduce_precision(b, 5, 2), '
     'lax.cumlogsumexp(h), jnp.gcd(u, u[::-1]), jnp.lcm(l, l[::-1]), jnp.diff(u), '
     'jnp.bincount(u, length=4))\n'
     "args = (arr([1.5, -300.0, 0.1], 'float16'), arr([1.5, -300.0, 1e-6], 'bfloat16'), "
     "arr([6, 0, 255], 'uint8'), arr([-2**62, 3, 2**40], 'int64'))",
     ('eq',
      "(arr([2.25, inf, 0.0099945068359375], 'float16'), arr([1.5, -320.0, 0.0], 'bfloat16'), "
      "arr([1.5, 1.5, 1.720703125], 'float16'), arr([3, 0, 3], 'uint8'), "
      "arr([4611686018427387904, 3, 4611686018427387904], 'int64'), arr([250, 255], 'uint8'), "
      "arr([1, 0, 0, 0], 'int64'), )")),
]
