"""Bad-input probes (misuse): see test_probes.py."""

PROBES = [
    ('jit_static_str',
     "run = lambda: jax.jit(lambda x, n: x * n, static_argnums='1')(1., 2)",
     ('raises', 'TypeError', ('jit', "'static_argnums'"))),
    ('jit_static_float',
     'run = lambda: jax.jit(lambda x, n: x * n, static_argnums=1.0)(1., 2)',
     ('raises', 'TypeError', ('jit', "'static_argnums'"))),
    ('jit_static_oob',
     'run = lambda: jax.jit(lambda x, n: x * n, static_argnums=5)(1., 2)',
     ('raises', 'ValueError', ('static_argnums=(5,)', '2 positional'))),
    ('jit_static_names_int',
     'run = lambda: jax.jit(lambda x, n: x * n, static_argnames=1)(1., 2)',
     ('raises', 'TypeError', ('jit', "'static_argnames'"))),
    ('jit_donate_str',
     "run = lambda: jax.jit(lambda x: x, donate_argnums='0')(1.)",
     ('raises', 'TypeError', ('jit', "'donate_argnums'"))),
    ('jit_not_callable', 'run = lambda: jax.jit(3)', ('raises', 'TypeError', ('callable',))),
    ('grad_not_callable', 'run = lambda: jax.grad(3)', ('raises', 'TypeError', ('callable',))),
    ('vmap_not_callable', 'run = lambda: jax.vmap(3)', ('raises', 'TypeError', ('callable',))),
    ('vmap_in_axes_str',
     "run = lambda: jax.vmap(lambda x: x, in_axes='0')(jnp.ones(3))",
     ('raises', 'TypeError', ('vmap in_axes', "'0'"))),
    ('vmap_in_axes_float',
     'run = lambda: jax.vmap(lambda x: x, in_axes=0.5)(jnp.ones(3))',
     ('raises', 'TypeError', ('vmap in_axes', '0.5'))),
    ('vmap_in_axes_tuple_float',
     'run = lambda: jax.vmap(lambda x, y: x, in_axes=(0, 1.0))(jnp.ones(3), jnp.ones(3))',
     ('raises', 'TypeError', ('vmap in_axes',))),
    ('vmap_out_axes_str',
     "run = lambda: jax.vmap(lambda x: x, out_axes='0')(jnp.ones(3))",
     ('raises', 'TypeError', ('vmap out_axes',))),
    ('vmap_axis_size_neg',
     'run = lambda: jax.vmap(lambda: 1., axis_size=-1, in_axes=())()',
     ('raises', 'TypeError', ('vmap', "'axis_size'"))),
    ('vmap_axis_size_float',
     'run = lambda: jax.vmap(lambda: 1., axis_size=2.0, in_axes=())()',
     ('raises', 'TypeError', ('vmap', "'axis_size'"))),
    ('vmap_in_axes_list',
     'run = lambda: jax.vmap(lambda x, y: x + y, in_axes=[0, None])(jnp.ones(3), 1.0)',
     ('eq', "arr([2.0, 2.0, 2.0], 'float32')")),
    ('vmap_axis_oob',
     'run = lambda: jax.vmap(lambda x: x, in_axes=2)(jnp.ones(3))',
     ('raises', 'ValueError', ('axis 2',))),
    ('vmap_size_mismatch',
     'run = lambda: jax.vmap(lambda x, y: x + y)(jnp.ones(3), jnp.ones(4))',
     ('raises', 'ValueError', ('inconsistent sizes',))),
    ('grad_none',
     'run = lambda: jax.grad(lambda x: None)(1.)',
     ('raises', 'TypeError', ('scalar-output', 'None'))),
    ('grad_vector_out',
     'run = lambda: jax.grad(lambda x: x)(jnp.ones(3))',
     ('raises', 'TypeError', ('scalar-output', '(3,)'))),
    ('grad_int_input',
     'run = lambda: jax.grad(lambda x: x)(1)',
     ('raises', 'TypeError', ('grad', 'int32'))),
    ('grad_argnums_str',
     "run = lambda: jax.grad(lambda x: x, argnums='0')(1.)",
     ('raises', 'TypeError', ('grad', "'argnums'"))),
    ('grad_argnums_oob',
     'run = lambda: jax.grad(lambda x: x, argnums=3)(1.)',
     ('raises', 'TypeError', ('argnums',))),
    ('grad_str_input', "run = lambda: jax.grad(lambda x: x)('a')", ('raises', 'TypeError', ())),
    ('vjp_wrong_cotangent',
     'run = lambda: jax.vjp(lambda x: x * 2, jnp.ones(3))[1](jnp.ones(4))',
     ('raises', 'ValueError', ('vjp', '(3,)'))),
    ('vjp_wrong_structure',
     'run = lambda: jax.vjp(lambda x: (x, x), jnp.ones(3))[1](jnp.ones(3))',
     ('raises', 'ValueError', ('vjp', 'structure'))),
    ('jvp_wrong_tangent_shape',
     'run = lambda: jax.jvp(lambda x: x * 2, (jnp.ones(3),), (jnp.ones(4),))',
     ('raises', 'ValueError', ('jvp', '(3,)'))),
    ('jvp_wrong_tangent_dtype',
     'run = lambda: jax.jvp(lambda x: x * 2, (jnp.ones(3),), (jnp.ones(3, jnp.int32),))',
     ('raises', 'TypeError', ('jvp', 'float32'))),
    ('jvp_not_tuples',
     'run = lambda: jax.jvp(lambda x: x, jnp.ones(3), jnp.ones(3))',
     ('raises', 'TypeError', ('jvp',))),
    ('scan_length_neg',
     'run = lambda: lax.scan(lambda c, x: (c, c), 0., None, length=-1)',
     ('raises', 'ValueError', ('scan', "'length'"))),
    ('scan_length_float',
     'run = lambda: lax.scan(lambda c, x: (c + 1, c), 0., None, length=2.0)',
     ('eq', "(arr(2.0, 'float32'), arr([0.0, 1.0], 'float32'), )")),
    ('scan_carry_dtype',
     'run = lambda: lax.scan(lambda c, x: (c.astype(jnp.int32), x), 0., jnp.ones(3))',
     ('raises', 'TypeError', ('scan', 'carry', 'int32'))),
    ('scan_weak_int_carry',
     'run = lambda: lax.scan(lambda c, x: (c + x, c), 0, jnp.ones(3))',
     ('eq', "(arr(3.0, 'float32'), arr([0.0, 1.0, 2.0], 'float32'), )")),
    ('scan_not_pair',
     'run = lambda: lax.scan(lambda c, x: c, 0., jnp.ones(3))',
     ('raises', 'TypeError', ('scan', 'pair'))),
    ('fori_float_bound',
     'run = lambda: lax.fori_loop(0, 2.5, lambda i, c: c, 0.)',
     ('raises', 'TypeError', ('fori_loop',))),
    ('while_cond_not_bool',
     'run = lambda: lax.while_loop(lambda c: c, lambda c: c - 1, 3.)',
     ('raises', 'TypeError', ('while_loop', 'boolean'))),
    ('cond_pred_vector',
     'run = lambda: lax.cond(jnp.ones(2), lambda: 1., lambda: 2.)',
     ('raises', 'TypeError', ('cond', 'scalar'))),
    ('cond_branch_mismatch',
     'run = lambda: lax.cond(True, lambda: 1., lambda: jnp.ones(2))',
     ('raises', 'TypeError', ('cond', 'branches'))),
    ('switch_float_index',
     'run = lambda: lax.switch(1.5, [lambda: 1., lambda: 2.])',
     ('raises', 'TypeError', ('switch', 'integer'))),
    ('jit_returns_str',
     "run = lambda: jax.jit(lambda x: 'a')(1.)",
     ('raises', 'TypeError', ('str',))),
    ('jit_str_arg', "run = lambda: jax.jit(lambda x: x)('a')", ('raises', 'TypeError', ('str',))),
    ('jit_unhashable_static',
     'run = lambda: jax.jit(lambda x, n: x, static_argnums=1)(1., [2])',
     ('raises', 'TypeError', ('hashable',))),
    ('custom_jvp_shape',
     '@jax.custom_jvp\n'
     'def g(x): return jnp.sin(x)\n'
     'g.defjvp(lambda p, t: (jnp.sin(p[0]), jnp.ones(4)))\n'
     'f = lambda x: jax.jvp(g, (x,), (x,))\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('raises', 'TypeError', ('Custom JVP rule', 'float32[3]', 'float32[4]'))),
    ('custom_jvp_dtype',
     '@jax.custom_jvp\n'
     'def g(x): return jnp.sin(x)\n'
     'g.defjvp(lambda p, t: (jnp.sin(p[0]), jnp.ones(3, jnp.int32)))\n'
     'f = lambda x: jax.jvp(g, (x,), (x,))\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('raises', 'TypeError', ('Custom JVP rule', 'int32[3]'))),
    ('custom_jvp_grad_shape',
     '@jax.custom_jvp\n'
     'def g(x): return jnp.sin(x)\n'
     'g.defjvp(lambda p, t: (jnp.sin(p[0]), jnp.ones(4)))\n'
     'f = jax.grad(lambda x: g(x).sum())\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('raises', 'TypeError', ('Custom JVP rule',))),
    ('custom_jvp_not_pair',
     '@jax.custom_jvp\n'
     'def g(x): return jnp.sin(x)\n'
     'g.defjvp(lambda p, t: jnp.sin(p[0]))\n'
     'f = lambda x: jax.jvp(g, (x,), (x,))\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('raises', 'TypeError', ('Custom JVP rule', 'pair'))),
    ('custom_jvp_structure',
     '@jax.custom_jvp\n'
     'def g(x): return jnp.sin(x)\n'
     'g.defjvp(lambda p, t: (jnp.sin(p[0]), (t[0], t[0])))\n'
     'f = lambda x: jax.jvp(g, (x,), (x,))\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('raises', 'TypeError', ('Custom JVP rule', 'structure'))),
    ('custom_vjp_bwd_shape',
     '@jax.custom_vjp\n'
     'def g(x, y): return x * y\n'
     'g.defvjp(lambda x, y: (x * y, (x, y)), lambda r, ct: (jnp.ones(4), ct))\n'
     'f = jax.grad(lambda x: g(x, x).sum())\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('raises', 'ValueError', ('Custom VJP bwd rule', '(4,)'))),
    ('custom_vjp_bwd_length',
     '@jax.custom_vjp\n'
     'def g(x, y): return x * y\n'
     'g.defvjp(lambda x, y: (x * y, (x, y)), lambda r, ct: (ct,))\n'
     'f = jax.grad(lambda x: g(x, x).sum())\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('raises', 'TypeError', ('Custom VJP bwd rule', 'tuple'))),
    ('custom_vjp_bwd_not_tuple',
     '@jax.custom_vjp\n'
     'def g(x, y): return x * y\n'
     'g.defvjp(lambda x, y: (x * y, (x, y)), lambda r, ct: ct)\n'
     'f = jax.grad(lambda x: g(x, x).sum())\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('raises', 'TypeError', ('Custom VJP bwd rule', 'tuple'))),
    ('custom_vjp_fwd_not_pair',
     '@jax.custom_vjp\n'
     'def g(x, y): return x * y\n'
     'g.defvjp(lambda x, y: x * y, lambda r, ct: (ct, ct))\n'
     'f = jax.grad(lambda x: g(x, x).sum())\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('raises', 'TypeError', ('Custom VJP fwd rule', 'pair'))),
    ('custom_vjp_bwd_none',
     '@jax.custom_vjp\n'
     'def g(x, y): return x * y\n'
     'g.defvjp(lambda x, y: (x * y, (x, y)), lambda r, ct: (None, ct))\n'
     'f = jax.grad(lambda x: g(x, x).sum())\n'
     'args = (np.arange(3, dtype=np.float32),)',
     ('eq', "arr([1.0, 1.0, 1.0], 'float32')")),
    ('pytree_flatten_not_pair',
     'class A:\n'
     '    def __init__(s, x): s.x = x\n'
     'tree_util.register_pytree_node(A, lambda a: [a.x], lambda aux, ch: A(ch[0]))\n'
     'run = lambda: tree_util.tree_leaves(A(1.0))',
     ('raises', 'ValueError', ('(children, aux_data)',))),
    ('pytree_flatten_triple',
     'class A:\n'
     '    def __init__(s, x): s.x = x\n'
     'tree_util.register_pytree_node(A, lambda a: ((a.x,), None, 3), lambda aux, ch: A(ch[0]))\n'
     'run = lambda: jax.jit(lambda a: a.x)(A(1.0))',
     ('raises', 'ValueError', ('(children, aux_data)',))),
    ('pytree_flatten_children_not_iterable',
     'class A:\n'
     '    def __init__(s, x): s.x = x\n'
     'tree_util.register_pytree_node(A, lambda a: (a.x, None), lambda aux, ch: A(ch[0]))\n'
     'run = lambda: tree_util.tree_structure(A(1.0))',
     ('raises', 'ValueError', ("'children' is iterable",))),
    ('pytree_cyclic_list',
     'c = [1.0]\nc.append(c)\nrun = lambda: tree_util.tree_leaves(c)',
     ('raises', 'ValueError', ('tree_leaves', 'contains itself'))),
    ('pytree_cyclic_dict_jit',
     "c = {'a': 1.0}\nc['b'] = c\nrun = lambda: jax.jit(lambda t: t['a'])(c)",
     ('raises', 'ValueError', ('contains itself',))),
    ('pytree_cyclic_map',
     'c = [1.0]\nc.append(c)\nrun = lambda: tree_util.tree_map(lambda x: x, c)',
     ('raises', 'ValueError', ('contains itself',))),
    ('pytree_deep_500',
     'import functools\n'
     'run = lambda: tree_util.tree_leaves(functools.reduce(lambda a, _: [a], range(500), 1.0))',
     ('eq', '[1.0]')),
    ('nested_jit_200',
     'def run():\n'
     '    g = lambda x: x + 1\n'
     '    for _ in range(200):\n'
     '        g = jax.jit(g)\n'
     '    return g(1.0), jax.grad(g)(1.0)',
     ('eq', "(arr(2.0, 'float32'), arr(1.0, 'float32'))")),
    ('misaligned_numpy',
     'b = bytearray(1) + bytearray(np.arange(4, dtype=np.float32).tobytes())\n'
     'x = np.frombuffer(b, np.float32, offset=1)\n'
     'f = lambda x: (jnp.sin(x), jnp.add(x, 1), jnp.sum(x), lax.add(x, x))\n'
     'args = (x,)\n'
     'raw = True',
     ('eq',
      "(arr([0.0, 0.8414709568023682, 0.9092974066734314, 0.14112000167369843], 'float32'), "
      "arr([1.0, 2.0, 3.0, 4.0], 'float32'), arr(6.0, 'float32'), arr([0.0, 2.0, 4.0, 6.0], "
      "'float32'), )")),
    ('bincount_traced_without_length',
     'run = lambda: jax.jit(jnp.bincount)(jnp.arange(3))',
     ('raises', 'ConcretizationTypeError', ('bincount', "'length'"))),
]
