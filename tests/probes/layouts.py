"""Bad-input probes (layouts): see test_probes.py."""

PROBES = [
    ('layout_strided_elementwise',
     'x = np.arange(12, dtype=np.float32)[::2]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sin(x), jnp.add(jnp.multiply(x, 2), 1), jnp.maximum(x, 2), '
     'jnp.subtract(jnp.flip(x, -1), x))',
     ('eq',
      '(arr([0.0, 0.9092974066734314, -0.756802499294281, -0.279415488243103, 0.9893582463264465, '
      "-0.5440211296081543], 'float32'), arr([1.0, 5.0, 9.0, 13.0, 17.0, 21.0], 'float32'), "
      "arr([2.0, 2.0, 4.0, 6.0, 8.0, 10.0], 'float32'), arr([10.0, 6.0, 2.0, -2.0, -6.0, -10.0], "
      "'float32'), )")),
    ('layout_strided_reduce',
     'x = np.arange(12, dtype=np.float32)[::2]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sum(x), jnp.cumsum(x, -1), jnp.sort(x, -1), jnp.max(x, -1), '
     'jnp.argmin(x))',
     ('eq',
      "(arr(30.0, 'float32'), arr([0.0, 2.0, 6.0, 12.0, 20.0, 30.0], 'float32'), arr([0.0, 2.0, "
      "4.0, 6.0, 8.0, 10.0], 'float32'), arr(10.0, 'float32'), arr(0, 'int32'), )")),
    ('layout_strided_move',
     'x = np.arange(12, dtype=np.float32)[::2]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.reshape(x, -1), jnp.take(jnp.ravel(x), jnp.array([0, 2, 1])), '
     'jnp.concatenate([x, x], -1), jnp.outer(x, x), jnp.transpose(x), jnp.matmul(x, '
     'jnp.transpose(x)))',
     ('eq',
      "(arr([0.0, 2.0, 4.0, 6.0, 8.0, 10.0], 'float32'), arr([0.0, 4.0, 2.0], 'float32'), "
      "arr([0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 0.0, 2.0, 4.0, 6.0, 8.0, 10.0], 'float32'), arr([[0.0, "
      '0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 4.0, 8.0, 12.0, 16.0, 20.0], [0.0, 8.0, 16.0, 24.0, 32.0, '
      '40.0], [0.0, 12.0, 24.0, 36.0, 48.0, 60.0], [0.0, 16.0, 32.0, 48.0, 64.0, 80.0], [0.0, '
      "20.0, 40.0, 60.0, 80.0, 100.0]], 'float32'), arr([0.0, 2.0, 4.0, 6.0, 8.0, 10.0], "
      "'float32'), arr(220.0, 'float32'), )")),
    ('layout_strided_grad',
     'x = np.arange(12, dtype=np.float32)[::2]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: jax.grad(lambda v: (jnp.sin(v) * v).sum())(jnp.multiply(x, 1.0))',
     ('eq',
      'arr([0.0, 0.07700371742248535, -3.3713769912719727, 5.4816060066223145, '
      "-0.17464202642440796, -8.934736251831055], 'float32')")),
    ('layout_negative_stride_elementwise',
     'x = np.arange(6, dtype=np.float32)[::-1]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sin(x), jnp.add(jnp.multiply(x, 2), 1), jnp.maximum(x, 2), '
     'jnp.subtract(jnp.flip(x, -1), x))',
     ('eq',
      '(arr([-0.9589242935180664, -0.756802499294281, 0.14112000167369843, 0.9092974066734314, '
      "0.8414709568023682, 0.0], 'float32'), arr([11.0, 9.0, 7.0, 5.0, 3.0, 1.0], 'float32'), "
      "arr([5.0, 4.0, 3.0, 2.0, 2.0, 2.0], 'float32'), arr([-5.0, -3.0, -1.0, 1.0, 3.0, 5.0], "
      "'float32'), )")),
    ('layout_negative_stride_reduce',
     'x = np.arange(6, dtype=np.float32)[::-1]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sum(x), jnp.cumsum(x, -1), jnp.sort(x, -1), jnp.max(x, -1), '
     'jnp.argmin(x))',
     ('eq',
      "(arr(15.0, 'float32'), arr([5.0, 9.0, 12.0, 14.0, 15.0, 15.0], 'float32'), arr([0.0, 1.0, "
      "2.0, 3.0, 4.0, 5.0], 'float32'), arr(5.0, 'float32'), arr(5, 'int32'), )")),
    ('layout_negative_stride_move',
     'x = np.arange(6, dtype=np.float32)[::-1]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.reshape(x, -1), jnp.take(jnp.ravel(x), jnp.array([0, 2, 1])), '
     'jnp.concatenate([x, x], -1), jnp.outer(x, x), jnp.transpose(x), jnp.matmul(x, '
     'jnp.transpose(x)))',
     ('eq',
      "(arr([5.0, 4.0, 3.0, 2.0, 1.0, 0.0], 'float32'), arr([5.0, 3.0, 4.0], 'float32'), arr([5.0, "
      "4.0, 3.0, 2.0, 1.0, 0.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0], 'float32'), arr([[25.0, 20.0, 15.0, "
      '10.0, 5.0, 0.0], [20.0, 16.0, 12.0, 8.0, 4.0, 0.0], [15.0, 12.0, 9.0, 6.0, 3.0, 0.0], '
      '[10.0, 8.0, 6.0, 4.0, 2.0, 0.0], [5.0, 4.0, 3.0, 2.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, '
      "0.0]], 'float32'), arr([5.0, 4.0, 3.0, 2.0, 1.0, 0.0], 'float32'), arr(55.0, 'float32'), )")),
    ('layout_negative_stride_grad',
     'x = np.arange(6, dtype=np.float32)[::-1]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: jax.grad(lambda v: (jnp.sin(v) * v).sum())(jnp.multiply(x, 1.0))',
     ('eq',
      'arr([0.4593867063522339, -3.3713769912719727, -2.828857421875, 0.07700371742248535, '
      "1.3817732334136963, 0.0], 'float32')")),
    ('layout_zero_stride_elementwise',
     'x = np.broadcast_to(np.float32(3), (6,))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sin(x), jnp.add(jnp.multiply(x, 2), 1), jnp.maximum(x, 2), '
     'jnp.subtract(jnp.flip(x, -1), x))',
     ('eq',
      '(arr([0.14112000167369843, 0.14112000167369843, 0.14112000167369843, 0.14112000167369843, '
      "0.14112000167369843, 0.14112000167369843], 'float32'), arr([7.0, 7.0, 7.0, 7.0, 7.0, 7.0], "
      "'float32'), arr([3.0, 3.0, 3.0, 3.0, 3.0, 3.0], 'float32'), arr([0.0, 0.0, 0.0, 0.0, 0.0, "
      "0.0], 'float32'), )")),
    ('layout_zero_stride_reduce',
     'x = np.broadcast_to(np.float32(3), (6,))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sum(x), jnp.cumsum(x, -1), jnp.sort(x, -1), jnp.max(x, -1), '
     'jnp.argmin(x))',
     ('eq',
      "(arr(18.0, 'float32'), arr([3.0, 6.0, 9.0, 12.0, 15.0, 18.0], 'float32'), arr([3.0, 3.0, "
      "3.0, 3.0, 3.0, 3.0], 'float32'), arr(3.0, 'float32'), arr(0, 'int32'), )")),
    ('layout_zero_stride_move',
     'x = np.broadcast_to(np.float32(3), (6,))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.reshape(x, -1), jnp.take(jnp.ravel(x), jnp.array([0, 2, 1])), '
     'jnp.concatenate([x, x], -1), jnp.outer(x, x), jnp.transpose(x), jnp.matmul(x, '
     'jnp.transpose(x)))',
     ('eq',
      "(arr([3.0, 3.0, 3.0, 3.0, 3.0, 3.0], 'float32'), arr([3.0, 3.0, 3.0], 'float32'), arr([3.0, "
      "3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0], 'float32'), arr([[9.0, 9.0, 9.0, "
      '9.0, 9.0, 9.0], [9.0, 9.0, 9.0, 9.0, 9.0, 9.0], [9.0, 9.0, 9.0, 9.0, 9.0, 9.0], [9.0, 9.0, '
      '9.0, 9.0, 9.0, 9.0], [9.0, 9.0, 9.0, 9.0, 9.0, 9.0], [9.0, 9.0, 9.0, 9.0, 9.0, 9.0]], '
      "'float32'), arr([3.0, 3.0, 3.0, 3.0, 3.0, 3.0], 'float32'), arr(54.0, 'float32'), )")),
    ('layout_zero_stride_grad',
     'x = np.broadcast_to(np.float32(3), (6,))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: jax.grad(lambda v: (jnp.sin(v) * v).sum())(jnp.multiply(x, 1.0))',
     ('eq',
      'arr([-2.828857421875, -2.828857421875, -2.828857421875, -2.828857421875, -2.828857421875, '
      "-2.828857421875], 'float32')")),
    ('layout_zero_stride_2d_elementwise',
     'x = np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sin(x), jnp.add(jnp.multiply(x, 2), 1), jnp.maximum(x, 2), '
     'jnp.subtract(jnp.flip(x, -1), x))',
     ('eq',
      '(arr([[0.0, 0.8414709568023682, 0.9092974066734314], [0.0, 0.8414709568023682, '
      "0.9092974066734314]], 'float32'), arr([[1.0, 3.0, 5.0], [1.0, 3.0, 5.0]], 'float32'), "
      "arr([[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]], 'float32'), arr([[2.0, 0.0, -2.0], [2.0, 0.0, "
      "-2.0]], 'float32'), )")),
    ('layout_zero_stride_2d_reduce',
     'x = np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sum(x), jnp.cumsum(x, -1), jnp.sort(x, -1), jnp.max(x, -1), '
     'jnp.argmin(x))',
     ('eq',
      "(arr(6.0, 'float32'), arr([[0.0, 1.0, 3.0], [0.0, 1.0, 3.0]], 'float32'), arr([[0.0, 1.0, "
      "2.0], [0.0, 1.0, 2.0]], 'float32'), arr([2.0, 2.0], 'float32'), arr(0, 'int32'), )")),
    ('layout_zero_stride_2d_move',
     'x = np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.reshape(x, -1), jnp.take(jnp.ravel(x), jnp.array([0, 2, 1])), '
     'jnp.concatenate([x, x], -1), jnp.outer(x, x), jnp.transpose(x), jnp.matmul(x, '
     'jnp.transpose(x)))',
     ('eq',
      "(arr([0.0, 1.0, 2.0, 0.0, 1.0, 2.0], 'float32'), arr([0.0, 2.0, 1.0], 'float32'), "
      "arr([[0.0, 1.0, 2.0, 0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]], 'float32'), "
      'arr([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 0.0, 1.0, 2.0], [0.0, 2.0, 4.0, 0.0, '
      '2.0, 4.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 0.0, 1.0, 2.0], [0.0, 2.0, 4.0, '
      "0.0, 2.0, 4.0]], 'float32'), arr([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], 'float32'), "
      "arr([[5.0, 5.0], [5.0, 5.0]], 'float32'), )")),
    ('layout_zero_stride_2d_grad',
     'x = np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: jax.grad(lambda v: (jnp.sin(v) * v).sum())(jnp.multiply(x, 1.0))',
     ('eq',
      'arr([[0.0, 1.3817732334136963, 0.07700371742248535], [0.0, 1.3817732334136963, '
      "0.07700371742248535]], 'float32')")),
    ('layout_misaligned_elementwise',
     'x = np.frombuffer(bytearray(1) + bytearray(np.arange(6, dtype=np.float32).tobytes()), '
     'np.float32, offset=1)\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sin(x), jnp.add(jnp.multiply(x, 2), 1), jnp.maximum(x, 2), '
     'jnp.subtract(jnp.flip(x, -1), x))',
     ('eq',
      '(arr([0.0, 0.8414709568023682, 0.9092974066734314, 0.14112000167369843, -0.756802499294281, '
      "-0.9589242935180664], 'float32'), arr([1.0, 3.0, 5.0, 7.0, 9.0, 11.0], 'float32'), "
      "arr([2.0, 2.0, 2.0, 3.0, 4.0, 5.0], 'float32'), arr([5.0, 3.0, 1.0, -1.0, -3.0, -5.0], "
      "'float32'), )")),
    ('layout_misaligned_reduce',
     'x = np.frombuffer(bytearray(1) + bytearray(np.arange(6, dtype=np.float32).tobytes()), '
     'np.float32, offset=1)\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sum(x), jnp.cumsum(x, -1), jnp.sort(x, -1), jnp.max(x, -1), '
     'jnp.argmin(x))',
     ('eq',
      "(arr(15.0, 'float32'), arr([0.0, 1.0, 3.0, 6.0, 10.0, 15.0], 'float32'), arr([0.0, 1.0, "
      "2.0, 3.0, 4.0, 5.0], 'float32'), arr(5.0, 'float32'), arr(0, 'int32'), )")),
    ('layout_misaligned_move',
     'x = np.frombuffer(bytearray(1) + bytearray(np.arange(6, dtype=np.float32).tobytes()), '
     'np.float32, offset=1)\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.reshape(x, -1), jnp.take(jnp.ravel(x), jnp.array([0, 2, 1])), '
     'jnp.concatenate([x, x], -1), jnp.outer(x, x), jnp.transpose(x), jnp.matmul(x, '
     'jnp.transpose(x)))',
     ('eq',
      "(arr([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 'float32'), arr([0.0, 2.0, 1.0], 'float32'), arr([0.0, "
      "1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 'float32'), arr([[0.0, 0.0, 0.0, "
      '0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 2.0, 4.0, 6.0, 8.0, 10.0], [0.0, 3.0, '
      '6.0, 9.0, 12.0, 15.0], [0.0, 4.0, 8.0, 12.0, 16.0, 20.0], [0.0, 5.0, 10.0, 15.0, 20.0, '
      "25.0]], 'float32'), arr([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 'float32'), arr(55.0, 'float32'), "
      ')')),
    ('layout_misaligned_grad',
     'x = np.frombuffer(bytearray(1) + bytearray(np.arange(6, dtype=np.float32).tobytes()), '
     'np.float32, offset=1)\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: jax.grad(lambda v: (jnp.sin(v) * v).sum())(jnp.multiply(x, 1.0))',
     ('eq',
      'arr([0.0, 1.3817732334136963, 0.07700371742248535, -2.828857421875, -3.3713769912719727, '
      "0.4593867063522339], 'float32')")),
    ('layout_read_only_elementwise',
     'x = (lambda a: (a.setflags(write=False), a)[1])(np.arange(6, dtype=np.float32))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sin(x), jnp.add(jnp.multiply(x, 2), 1), jnp.maximum(x, 2), '
     'jnp.subtract(jnp.flip(x, -1), x))',
     ('eq',
      '(arr([0.0, 0.8414709568023682, 0.9092974066734314, 0.14112000167369843, -0.756802499294281, '
      "-0.9589242935180664], 'float32'), arr([1.0, 3.0, 5.0, 7.0, 9.0, 11.0], 'float32'), "
      "arr([2.0, 2.0, 2.0, 3.0, 4.0, 5.0], 'float32'), arr([5.0, 3.0, 1.0, -1.0, -3.0, -5.0], "
      "'float32'), )")),
    ('layout_read_only_reduce',
     'x = (lambda a: (a.setflags(write=False), a)[1])(np.arange(6, dtype=np.float32))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sum(x), jnp.cumsum(x, -1), jnp.sort(x, -1), jnp.max(x, -1), '
     'jnp.argmin(x))',
     ('eq',
      "(arr(15.0, 'float32'), arr([0.0, 1.0, 3.0, 6.0, 10.0, 15.0], 'float32'), arr([0.0, 1.0, "
      "2.0, 3.0, 4.0, 5.0], 'float32'), arr(5.0, 'float32'), arr(0, 'int32'), )")),
    ('layout_read_only_move',
     'x = (lambda a: (a.setflags(write=False), a)[1])(np.arange(6, dtype=np.float32))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.reshape(x, -1), jnp.take(jnp.ravel(x), jnp.array([0, 2, 1])), '
     'jnp.concatenate([x, x], -1), jnp.outer(x, x), jnp.transpose(x), jnp.matmul(x, '
     'jnp.transpose(x)))',
     ('eq',
      "(arr([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 'float32'), arr([0.0, 2.0, 1.0], 'float32'), arr([0.0, "
      "1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 'float32'), arr([[0.0, 0.0, 0.0, "
      '0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 2.0, 4.0, 6.0, 8.0, 10.0], [0.0, 3.0, '
      '6.0, 9.0, 12.0, 15.0], [0.0, 4.0, 8.0, 12.0, 16.0, 20.0], [0.0, 5.0, 10.0, 15.0, 20.0, '
      "25.0]], 'float32'), arr([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 'float32'), arr(55.0, 'float32'), "
      ')')),
    ('layout_read_only_grad',
     'x = (lambda a: (a.setflags(write=False), a)[1])(np.arange(6, dtype=np.float32))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: jax.grad(lambda v: (jnp.sin(v) * v).sum())(jnp.multiply(x, 1.0))',
     ('eq',
      'arr([0.0, 1.3817732334136963, 0.07700371742248535, -2.828857421875, -3.3713769912719727, '
      "0.4593867063522339], 'float32')")),
    ('layout_fortran_elementwise',
     'x = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sin(x), jnp.add(jnp.multiply(x, 2), 1), jnp.maximum(x, 2), '
     'jnp.subtract(jnp.flip(x, -1), x))',
     ('eq',
      '(arr([[0.0, 0.8414709568023682, 0.9092974066734314], [0.14112000167369843, '
      "-0.756802499294281, -0.9589242935180664]], 'float32'), arr([[1.0, 3.0, 5.0], [7.0, 9.0, "
      "11.0]], 'float32'), arr([[2.0, 2.0, 2.0], [3.0, 4.0, 5.0]], 'float32'), arr([[2.0, 0.0, "
      "-2.0], [2.0, 0.0, -2.0]], 'float32'), )")),
    ('layout_fortran_reduce',
     'x = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sum(x), jnp.cumsum(x, -1), jnp.sort(x, -1), jnp.max(x, -1), '
     'jnp.argmin(x))',
     ('eq',
      "(arr(15.0, 'float32'), arr([[0.0, 1.0, 3.0], [3.0, 7.0, 12.0]], 'float32'), arr([[0.0, 1.0, "
      "2.0], [3.0, 4.0, 5.0]], 'float32'), arr([2.0, 5.0], 'float32'), arr(0, 'int32'), )")),
    ('layout_fortran_move',
     'x = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.reshape(x, -1), jnp.take(jnp.ravel(x), jnp.array([0, 2, 1])), '
     'jnp.concatenate([x, x], -1), jnp.outer(x, x), jnp.transpose(x), jnp.matmul(x, '
     'jnp.transpose(x)))',
     ('eq',
      "(arr([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 'float32'), arr([0.0, 2.0, 1.0], 'float32'), "
      "arr([[0.0, 1.0, 2.0, 0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 3.0, 4.0, 5.0]], 'float32'), "
      'arr([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 2.0, 4.0, 6.0, '
      '8.0, 10.0], [0.0, 3.0, 6.0, 9.0, 12.0, 15.0], [0.0, 4.0, 8.0, 12.0, 16.0, 20.0], [0.0, 5.0, '
      "10.0, 15.0, 20.0, 25.0]], 'float32'), arr([[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]], 'float32'), "
      "arr([[5.0, 14.0], [14.0, 50.0]], 'float32'), )")),
    ('layout_fortran_grad',
     'x = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: jax.grad(lambda v: (jnp.sin(v) * v).sum())(jnp.multiply(x, 1.0))',
     ('eq',
      'arr([[0.0, 1.3817732334136963, 0.07700371742248535], [-2.828857421875, -3.3713769912719727, '
      "0.4593867063522339]], 'float32')")),
    ('layout_transposed_elementwise',
     'x = np.arange(6, dtype=np.float32).reshape(3, 2).T\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sin(x), jnp.add(jnp.multiply(x, 2), 1), jnp.maximum(x, 2), '
     'jnp.subtract(jnp.flip(x, -1), x))',
     ('eq',
      '(arr([[0.0, 0.9092974066734314, -0.756802499294281], [0.8414709568023682, '
      "0.14112000167369843, -0.9589242935180664]], 'float32'), arr([[1.0, 5.0, 9.0], [3.0, 7.0, "
      "11.0]], 'float32'), arr([[2.0, 2.0, 4.0], [2.0, 3.0, 5.0]], 'float32'), arr([[4.0, 0.0, "
      "-4.0], [4.0, 0.0, -4.0]], 'float32'), )")),
    ('layout_transposed_reduce',
     'x = np.arange(6, dtype=np.float32).reshape(3, 2).T\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sum(x), jnp.cumsum(x, -1), jnp.sort(x, -1), jnp.max(x, -1), '
     'jnp.argmin(x))',
     ('eq',
      "(arr(15.0, 'float32'), arr([[0.0, 2.0, 6.0], [1.0, 4.0, 9.0]], 'float32'), arr([[0.0, 2.0, "
      "4.0], [1.0, 3.0, 5.0]], 'float32'), arr([4.0, 5.0], 'float32'), arr(0, 'int32'), )")),
    ('layout_transposed_move',
     'x = np.arange(6, dtype=np.float32).reshape(3, 2).T\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.reshape(x, -1), jnp.take(jnp.ravel(x), jnp.array([0, 2, 1])), '
     'jnp.concatenate([x, x], -1), jnp.outer(x, x), jnp.transpose(x), jnp.matmul(x, '
     'jnp.transpose(x)))',
     ('eq',
      "(arr([0.0, 2.0, 4.0, 1.0, 3.0, 5.0], 'float32'), arr([0.0, 4.0, 2.0], 'float32'), "
      "arr([[0.0, 2.0, 4.0, 0.0, 2.0, 4.0], [1.0, 3.0, 5.0, 1.0, 3.0, 5.0]], 'float32'), "
      'arr([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 4.0, 8.0, 2.0, 6.0, 10.0], [0.0, 8.0, 16.0, 4.0, '
      '12.0, 20.0], [0.0, 2.0, 4.0, 1.0, 3.0, 5.0], [0.0, 6.0, 12.0, 3.0, 9.0, 15.0], [0.0, 10.0, '
      "20.0, 5.0, 15.0, 25.0]], 'float32'), arr([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], 'float32'), "
      "arr([[20.0, 26.0], [26.0, 35.0]], 'float32'), )")),
    ('layout_transposed_grad',
     'x = np.arange(6, dtype=np.float32).reshape(3, 2).T\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: jax.grad(lambda v: (jnp.sin(v) * v).sum())(jnp.multiply(x, 1.0))',
     ('eq',
      'arr([[0.0, 0.07700371742248535, -3.3713769912719727], [1.3817732334136963, -2.828857421875, '
      "0.4593867063522339]], 'float32')")),
    ('layout_strided_int_elementwise',
     'x = np.arange(12, dtype=np.int32)[::-3]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sin(x), jnp.add(jnp.multiply(x, 2), 1), jnp.maximum(x, 2), '
     'jnp.subtract(jnp.flip(x, -1), x))',
     ('eq',
      '(arr([-0.9999902248382568, 0.9893582463264465, -0.9589242935180664, 0.9092974066734314], '
      "'float32'), arr([23, 17, 11, 5], 'int32'), arr([11, 8, 5, 2], 'int32'), arr([-9, -3, 3, 9], "
      "'int32'), )")),
    ('layout_strided_int_reduce',
     'x = np.arange(12, dtype=np.int32)[::-3]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.sum(x), jnp.cumsum(x, -1), jnp.sort(x, -1), jnp.max(x, -1), '
     'jnp.argmin(x))',
     ('eq',
      "(arr(26, 'int32'), arr([11, 19, 24, 26], 'int32'), arr([2, 5, 8, 11], 'int32'), arr(11, "
      "'int32'), arr(3, 'int32'), )")),
    ('layout_strided_int_move',
     'x = np.arange(12, dtype=np.int32)[::-3]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: (jnp.reshape(x, -1), jnp.take(jnp.ravel(x), jnp.array([0, 2, 1])), '
     'jnp.concatenate([x, x], -1), jnp.outer(x, x), jnp.transpose(x), jnp.matmul(x, '
     'jnp.transpose(x)))',
     ('eq',
      "(arr([11, 8, 5, 2], 'int32'), arr([11, 5, 8], 'int32'), arr([11, 8, 5, 2, 11, 8, 5, 2], "
      "'int32'), arr([[121, 88, 55, 22], [88, 64, 40, 16], [55, 40, 25, 10], [22, 16, 10, 4]], "
      "'int32'), arr([11, 8, 5, 2], 'int32'), arr(214, 'int32'), )")),
    ('layout_strided_int_grad',
     'x = np.arange(12, dtype=np.int32)[::-3]\n'
     'args = (x,)\n'
     'raw = True\n'
     'f = lambda x: jax.grad(lambda v: (jnp.sin(v) * v).sum())(jnp.multiply(x, 1.0))',
     ('eq',
      'arr([-0.9513075351715088, -0.17464202642440796, 0.4593867063522339, 0.07700371742248535], '
      "'float32')")),
]
