"""The top level's JAX names (eval_shape, devices, device_put/get, custom_gradient,
linear_transpose, ensure_compile_time_eval, ...), pullback.tree, tree_util's remainder,
pullback.dtypes/errors/typing, nn.initializers' remainder and clean public namespaces. JAX
0.10.2's values are hard-coded where they matter; JAX itself is an optional oracle."""
from __future__ import annotations

import dataclasses
import importlib
import types

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import tree_util as tu

pytestmark = pytest.mark.x32


# ---- shapes ----

def test_eval_shape_computes_nothing_and_takes_shape_dtype_structs():
    calls = []

    def f(x, y, *, k):
        calls.append(1)
        return {"a": x @ y, "b": 1.0, "c": (x.sum(), k)}

    out = pb.eval_shape(f, pb.ShapeDtypeStruct((2, 3), jnp.float32),
                        np.ones((3, 4), np.float32), k=jnp.int32(1))
    assert out["a"] == pb.ShapeDtypeStruct((2, 4), jnp.float32)
    assert out["b"].shape == () and out["b"].weak_type  # as JAX: a weak float32
    assert out["c"][1].dtype == np.int32
    assert calls == [1]

    class Duck:  # anything with shape and dtype, as JAX accepts
        shape, dtype = (5,), np.dtype(np.float16)
    assert pb.eval_shape(jnp.sin, Duck()) == pb.ShapeDtypeStruct((5,), jnp.float16)
    with pytest.raises(TypeError, match="Expected a callable"):
        pb.eval_shape(3, 1.0)


def test_shape_dtype_struct_in_make_jaxpr_and_jit_lower():
    s = pb.ShapeDtypeStruct((3,), jnp.float32, sharding=None)  # JAX's keyword, accepted
    assert repr(pb.eval_shape(lambda: 1.0)) == \
        "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"  # JAX 0.10.2's text
    assert "sin" in str(pb.make_jaxpr(jnp.sin)(s))
    assert "sin" in pb.jit(jnp.sin).lower(s).as_text()


def test_typeof():
    a = pb.typeof(jnp.ones((2, 3), jnp.int32))
    assert a.shape == (2, 3) and a.dtype == np.int32
    assert pb.typeof(1.0).weak_type
    with pytest.raises(TypeError):
        pb.typeof("text")


# ---- devices ----

def test_one_cpu_device():
    (d,) = pb.devices()
    assert repr(d) == "CpuDevice(id=0)" and d.platform == "cpu" and d.id == 0
    assert pb.devices("cpu") == pb.local_devices() == [d]
    assert pb.device_count() == pb.local_device_count() == pb.process_count() == 1
    assert pb.process_index() == 0 and pb.default_backend() == "cpu"
    assert isinstance(d, pb.Device)
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu'"):
        pb.devices("gpu")
    with pb.default_device(d):
        assert float(jnp.ones(()) + 1) == 2.0
    with pytest.raises(ValueError, match="one device, the CPU"):
        with pb.default_device("tpu:0"):
            pass


def test_device_put_get_block_until_ready():
    host = np.arange(3.0, dtype=np.float32)
    tree = pb.device_put({"a": host, "b": [1, 2.5]}, pb.devices()[0])
    assert type(tree["a"]) is pb.Array and type(tree["b"][0]) is pb.Array
    host[0] = 100.0  # device_put copies
    assert float(tree["a"][0]) == 0.0
    a = jnp.ones(2)
    assert pb.device_put(a) is a
    back = pb.device_get(tree)
    assert type(back["a"]) is np.ndarray and back["a"].tolist() == [0.0, 1.0, 2.0]
    assert pb.block_until_ready(tree) is tree
    pb.effects_barrier()
    with pytest.raises(ValueError, match="device_put"):
        pb.device_put(host, "gpu")


def test_print_environment_info():
    info = pb.print_environment_info(return_string=True)
    assert "pullback" in info and "numpy" in info


# ---- scopes ----

def test_named_call_and_named_scope_keep_the_computation():
    f = pb.named_call(lambda x: x * 2, name="double")
    assert f.__name__ == "double" and float(pb.jit(f)(3.0)) == 6.0
    with pb.named_scope("layer"):
        assert float(jnp.ones(()) * 3) == 3.0
    with pytest.raises(TypeError, match="named_scope name argument must be a string"):
        with pb.named_scope(3):
            pass


def test_ensure_compile_time_eval_gives_concrete_values_under_jit():
    @pb.jit
    def f(x):
        with pb.ensure_compile_time_eval():
            n = jnp.arange(4).sum()
            assert type(n) is pb.Array  # computed, not traced
            k = int(n)
        return x * k
    assert float(f(1.0)) == 6.0
    with pytest.raises(pb.ConcretizationTypeError):
        pb.jit(lambda x: int(x))(1.0)  # outside the block, traced as usual


def test_clear_caches_retraces():
    traces = []

    @pb.jit
    def f(x):
        traces.append(1)
        return x + 1
    f(1.0)
    f(2.0)
    assert len(traces) == 1
    pb.clear_caches()
    assert float(f(3.0)) == 4.0 and len(traces) == 2


# ---- derivatives ----

@pb.custom_gradient
def _clip_grad(x):
    return jnp.sin(x), lambda g: (jnp.clip(g * 100.0, -1.0, 1.0) * 5.0,)


@pb.custom_gradient
def _two_args(x, y):
    return x * y, lambda g: (g * y, g * x * 3.0)


def test_custom_gradient():
    assert float(_clip_grad(0.5)) == pytest.approx(np.sin(0.5))
    assert float(pb.grad(_clip_grad)(0.5)) == 5.0
    assert float(pb.jit(pb.grad(_clip_grad))(0.5)) == 5.0
    # through an outer function: the rule's residuals are traced values
    # d/dx f(x) x = f'(x) x + f(x), the rule's f'(x) x being clip(2 * 100) * 5
    assert float(pb.grad(lambda x: _clip_grad(x) * x)(2.0)) == pytest.approx(
        5.0 + np.sin(2.0), rel=1e-6)
    gx, gy = pb.grad(_two_args, argnums=(0, 1))(2.0, 5.0)
    assert (float(gx), float(gy)) == (5.0, 6.0)
    g = pb.vmap(pb.grad(_two_args))(jnp.arange(3.0), jnp.ones(3) * 4)
    np.testing.assert_allclose(np.asarray(g), [4.0, 4.0, 4.0])


def test_linear_transpose():
    f = lambda x, y: 2.0 * x[:2] + x[1:] - y  # noqa: E731
    t = pb.linear_transpose(f, pb.ShapeDtypeStruct((3,), jnp.float32), jnp.zeros(2))
    ct_x, ct_y = t(jnp.array([1.0, 10.0]))
    np.testing.assert_allclose(np.asarray(ct_x), [2.0, 21.0, 10.0])
    np.testing.assert_allclose(np.asarray(ct_y), [-1.0, -10.0])
    m = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    (tm,) = pb.linear_transpose(lambda v: jnp.asarray(m) @ v, jnp.zeros(3))(jnp.ones(2))
    np.testing.assert_allclose(np.asarray(tm), m.T @ np.ones(2))
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        pb.linear_transpose(lambda v: v, jnp.zeros(2, jnp.int32))


def test_jacobian_is_jacrev_and_float0():
    np.testing.assert_allclose(np.asarray(pb.jacobian(lambda x: x ** 2)(jnp.arange(3.0))),
                               np.diag([0.0, 2.0, 4.0]))
    assert pb.float0 == pb.dtypes.float0 and pb.float0.itemsize == 0


# ---- pullback.tree / tree_util ----

def test_tree_module_is_jax_tree():
    t = {"a": 1, "b": (2, [3])}
    assert pb.tree.map(lambda x: x * 10, t) == {"a": 10, "b": (20, [30])}
    assert pb.tree.leaves(t) == [1, 2, 3]
    leaves, td = pb.tree.flatten(t)
    assert pb.tree.unflatten(td, leaves) == t and pb.tree.structure(t) == td
    assert pb.tree.reduce(lambda a, b: a + b, t) == 6 and pb.tree.all(t)
    assert pb.tree.map_with_path(lambda p, x: len(p), t) == {"a": 1, "b": (2, [3])}
    assert pb.tree.broadcast(0, t) == {"a": 0, "b": (0, [0])}
    assert pb.tree.reduce_associative(lambda a, b: a + b, t) == 6

    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: int
        op: str = pb.tree.static(default="add")
    assert pb.tree.leaves(Op(3)) == [3]
    assert pb.tree.structure(Op(3, "mul")) != pb.tree.structure(Op(3))


def test_partial_is_a_pytree_through_jit():
    add = tu.Partial(jnp.add, jnp.float32(1.0))
    assert pb.tree.leaves(add) == [add.args[0]]
    assert float(pb.jit(lambda f, x: f(x))(add, 2.0)) == 3.0
    mul = pb.jit(lambda x: tu.Partial(jnp.multiply, x))(jnp.float32(3.0))  # returned
    assert float(mul(2.0)) == 6.0


def test_flatten_one_level_and_node_queries_as_jax():
    # JAX 0.10.2's results
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert tu.flatten_one_level((1, [2])) == ((1, [2]), None)
    assert tu.flatten_one_level(None) == ((), None)
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level(1)
    kids, aux = tu.flatten_one_level_with_keys({"b": 1, "a": 2})
    assert kids == ((tu.DictKey("a"), 2), (tu.DictKey("b"), 1)) and aux == ("a", "b")
    assert tu.is_tree_node(list) and tu.is_tree_node(type(None)) and not tu.is_tree_node(int)
    assert not tu.all_leaves([None]) and tu.all_leaves([1, jnp.ones(2)])
    assert not tu.all_leaves([{"a": [1, 2]}])
    assert tu.all_leaves([(1,), 2], is_leaf=lambda x: isinstance(x, tuple))
    assert not tu.all_leaves([[1], 2], is_leaf=lambda x: isinstance(x, tuple))


def test_tree_broadcast_and_reduce_associative_as_jax():
    assert tu.tree_broadcast([1, 2], [(3, 4), {"a": 5}]) == [(1, 1), {"a": 2}]
    pair = lambda a, b: (a, b)  # noqa: E731  (shows the grouping)
    assert tu.tree_reduce_associative(pair, [1, 2, 3, 4, 5]) == ((1, 2), (3, (4, 5)))
    assert tu.tree_reduce_associative(pair, [1, 2, 3]) == (1, (2, 3))
    assert tu.tree_reduce_associative(pair, [], identity=0) == 0
    with pytest.raises(TypeError, match="Must specify identity"):
        tu.tree_reduce_associative(pair, [])


def test_treedef_children_and_tuple():
    td = tu.tree_structure((1, [2, 3]))
    kids = tu.treedef_children(td)
    assert kids == [tu.tree_structure(1), tu.tree_structure([2, 3])]
    assert tu.treedef_tuple(kids) == td
    assert tu.treedef_tuple([]) == tu.tree_structure(())


def test_register_static_and_keys_class():
    @tu.register_static
    class Cfg:
        def __init__(self, n):
            self.n = n

        def __eq__(self, o):
            return isinstance(o, Cfg) and o.n == self.n

        def __hash__(self):
            return hash(self.n)
    assert tu.tree_leaves([Cfg(1), 2]) == [2]
    assert tu.tree_structure(Cfg(1)) != tu.tree_structure(Cfg(2))

    @tu.register_pytree_with_keys_class
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)), None

        @classmethod
        def tree_unflatten(cls, aux, kids):
            return cls(*kids)
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(Box(1, [2]))[0]]
    assert paths == [".a", ".b[0]"]
    assert tu.tree_map(lambda x: x + 1, Box(1, 2)).b == 3


def test_is_leaf_takes_path_and_drop_fields():
    t = {"a": [1, 2], "b": [3]}
    pairs = tu.tree_leaves_with_path(t, is_leaf=lambda p, x: p == (tu.DictKey("a"),),
                                     is_leaf_takes_path=True)
    assert [x for _, x in pairs] == [[1, 2], 3]
    out = tu.tree_map_with_path(lambda p, x: len(p), t, is_leaf=lambda p, x: len(p) == 1,
                                is_leaf_takes_path=True)
    assert out == {"a": 1, "b": 1}

    @dataclasses.dataclass
    class Cache:
        x: int
        scratch: list = dataclasses.field(default_factory=list)
    tu.register_dataclass(Cache, data_fields=["x"], meta_fields=[], drop_fields=["scratch"])
    c = Cache(1, [9])
    assert tu.tree_leaves(c) == [1]
    assert tu.tree_map(lambda v: v + 1, c) == Cache(2, [])  # the dropped field: its default


# ---- dtypes, errors, typing ----

def test_dtypes_module():
    d = pb.dtypes
    assert d.canonicalize_dtype(np.float64) == np.float32  # x32 mode
    assert d.canonicalize_dtype(np.int8) == np.int8
    with pb.enable_x64():
        assert d.canonicalize_dtype(np.float64) == np.float64
    assert d.finfo(jnp.bfloat16).bits == 16 and d.iinfo(np.int8).max == 127
    assert d.issubdtype(jnp.bfloat16, np.floating)
    assert d.result_type(jnp.ones(1, jnp.int8), 1.0) == np.float32
    assert d.scalar_type_of(jnp.ones(2, jnp.int32)) is int
    assert d.scalar_type_of(1.5) is float and d.scalar_type_of(jnp.bfloat16(1)) is float
    assert d.itemsize_bits(np.float32) == 32 and d.itemsize_bits(jnp.bfloat16) == 16
    assert not d.issubdtype(np.float32, d.extended)
    assert issubclass(d.prng_key, d.extended)


def test_errors_are_the_classes_pullback_raises():
    e = pb.errors
    with pytest.raises(e.TracerBoolConversionError):
        pb.jit(lambda x: bool(x))(1.0)
    with pytest.raises(e.ConcretizationTypeError):
        pb.jit(lambda x: int(x))(1.0)
    with pytest.raises(e.NonConcreteBooleanIndexError):
        pb.jit(lambda x: x[x > 0])(jnp.ones(3))
    assert issubclass(e.ConcretizationTypeError, e.JAXTypeError)
    assert issubclass(e.JAXIndexError, IndexError)
    assert e.UnexpectedTracerError is pb.UnexpectedTracerError


def test_typing_module():
    import typing
    assert pb.Array in typing.get_args(pb.typing.ArrayLike)
    assert np.dtype in typing.get_args(pb.typing.DTypeLike)


# ---- nn.initializers ----

_INITS = [("orthogonal", (), (5, 3)), ("orthogonal", (), (3, 5)),
          ("orthogonal", (2.0, 0), (4, 2, 6)), ("delta_orthogonal", (), (3, 3, 4, 5)),
          ("delta_orthogonal", (), (3, 4, 4)), ("lecun_uniform", (), (40, 50)),
          ("truncated_normal", (0.5,), (2000,))]


@pytest.mark.parametrize("name,args,shape", _INITS)
def test_initializers(name, args, shape):
    init = getattr(pb.nn.initializers, name)(*args)
    w = np.asarray(init(pb.random.PRNGKey(0), shape))
    assert w.shape == shape and w.dtype == np.float32
    if name == "orthogonal":
        scale = args[0] if args else 1.0
        axis = args[1] if len(args) > 1 else -1
        m = np.moveaxis(w, axis, -1).reshape(-1, shape[axis]) / scale
        g = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
        np.testing.assert_allclose(g, np.eye(len(g)), atol=1e-5)
    elif name == "delta_orthogonal":
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        m = w[centre]
        np.testing.assert_allclose(m @ m.T, np.eye(shape[-2]), atol=1e-5)
        assert np.count_nonzero(w) == np.count_nonzero(m)
    elif name == "lecun_uniform":
        lim = np.sqrt(3.0 / shape[0])
        assert np.abs(w).max() <= lim and np.abs(w).max() > 0.9 * lim
    else:
        assert np.abs(w).max() <= 2 * 0.5 + 1e-6 and 0.3 < w.std() < 0.5


def test_initializer_errors():
    with pytest.raises(ValueError, match="at least a 2D shape"):
        pb.nn.initializers.orthogonal()(pb.random.PRNGKey(0), (3,))
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        pb.nn.initializers.delta_orthogonal()(pb.random.PRNGKey(0), (3, 3))
    with pytest.raises(ValueError, match="`fan_in` must be less or equal than `fan_out`"):
        pb.nn.initializers.delta_orthogonal()(pb.random.PRNGKey(0), (3, 5, 4))


@pytest.mark.parametrize("name,args,shape", _INITS)
def test_initializers_oracle_jax(name, args, shape):
    jax = pytest.importorskip("jax")
    a = np.asarray(getattr(pb.nn.initializers, name)(*args)(pb.random.PRNGKey(0), shape))
    b = np.asarray(getattr(jax.nn.initializers, name)(*args)(jax.random.PRNGKey(0), shape))
    np.testing.assert_allclose(a, b, atol=2e-6)


# ---- clean namespaces ----

_PUBLIC = ["pullback.numpy", "pullback.numpy.linalg", "pullback.lax", "pullback.nn",
           "pullback.nn.initializers", "pullback.random", "pullback.tree_util", "pullback.tree",
           "pullback.image", "pullback.debug", "pullback.dtypes", "pullback.typing",
           "pullback.errors", "pullback.scipy.linalg", "pullback.scipy.signal"]
_HELPERS = {"np", "Any", "Callable", "Sequence", "Iterable", "NamedTuple", "annotations",
            "math", "functools", "core", "lax_linalg", "np_linalg", "dataclasses", "operator"}


@pytest.mark.parametrize("name", _PUBLIC)
def test_public_modules_show_no_helper_imports(name):
    mod = importlib.import_module(name)
    shown = set(dir(mod))
    leaked = sorted(shown & _HELPERS)
    assert not leaked, f"{name} shows helper imports: {leaked}"
    modules = sorted(n for n in shown if not n.startswith("_") and
                     isinstance(getattr(mod, n), types.ModuleType) and
                     not getattr(mod, n).__name__.startswith(name + "."))
    assert not modules, f"{name} shows imported modules: {modules}"
    star: dict = {}
    exec(f"from {name} import *", star)  # noqa: S102
    assert not (set(star) & _HELPERS), f"from {name} import * brings helpers"
