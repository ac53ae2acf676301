"""Bad-input probes (threads): see test_probes.py."""

PROBES = [
    ('threads_one_jit',
     'def run():\n'
     '    g = jax.jit(lambda x, y: jnp.sin(x) @ y + jnp.cumsum(y, 0))\n'
     '    xs = [np.random.RandomState(i).rand(64, 64).astype(np.float32) for i in range(4)]\n'
     '    serial = [np.asarray(g(x, x)) for x in xs]\n'
     '    out = [None] * 4\n'
     '    def work(i):\n'
     '        for _ in range(20):\n'
     '            out[i] = np.asarray(g(xs[i], xs[i]))\n'
     '    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]\n'
     '    [t.start() for t in ts]\n'
     '    [t.join() for t in ts]\n'
     '    assert all(np.array_equal(a, b) for a, b in zip(out, serial)), "threaded results '
     'differ"\n'
     '    return True',
     ('eq', 'True')),
    ('threads_first_call',
     'def run():\n'
     '    g = jax.jit(lambda x: (x * 2).sum())\n'
     '    xs = [np.full((100,), i, np.float32) for i in range(4)]\n'
     '    out = [None] * 4\n'
     '    barrier = threading.Barrier(4)\n'
     '    def work(i):\n'
     '        barrier.wait()\n'
     '        out[i] = float(g(xs[i]))\n'
     '    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]\n'
     '    [t.start() for t in ts]\n'
     '    [t.join() for t in ts]\n'
     '    assert out == [0.0, 200.0, 400.0, 600.0], out\n'
     '    return True',
     ('eq', 'True')),
    ('threads_eager_and_grad',
     'def run():\n'
     '    g = jax.jit(jax.grad(lambda x: (jnp.tanh(x) ** 2).sum()))\n'
     '    xs = [np.linspace(-2, 2, 1000).astype(np.float32) * (i + 1) for i in range(4)]\n'
     '    serial = [np.asarray(g(x)) for x in xs] + [np.asarray(jnp.exp(x) + 1) for x in xs]\n'
     '    out = [None] * 8\n'
     '    def work(i):\n'
     '        for _ in range(10):\n'
     '            out[i] = np.asarray(g(xs[i]))\n'
     '            out[i + 4] = np.asarray(jnp.exp(xs[i]) + 1)\n'
     '    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]\n'
     '    [t.start() for t in ts]\n'
     '    [t.join() for t in ts]\n'
     '    assert all(np.array_equal(a, b) for a, b in zip(out, serial)), "threaded results '
     'differ"\n'
     '    return True',
     ('eq', 'True')),
]
