"""Weak types of integer/bool arrays combined with Python scalars, and of integer data made
inexact, in both 64-bit modes. Expected values are JAX 0.10's (``jnp.op(x, s).dtype`` and
``.weak_type``), hard-coded: JAX's lattice puts i32 ∨ f* at the *weak* float category, so
``0.5 * int_array`` is a weakly typed default float and ``(0.5 * count) * bf16`` stays bf16."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp

INTS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
BINARY = {
    "add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply,
    "maximum": jnp.maximum, "minimum": jnp.minimum, "power": jnp.power,
    "floor_divide": jnp.floor_divide, "remainder": jnp.remainder,
    "where": lambda a, b: jnp.where(True, a, b),
    "op_mul": lambda a, b: a * b, "op_sub": lambda a, b: a - b,
    "op_pow": lambda a, b: a ** b,
}
DIVIDE = {"true_divide": jnp.true_divide, "arctan2": jnp.arctan2, "op_div": lambda a, b: a / b}

# JAX 0.10, per mode: (array dtype, Python scalar kind) -> (dtype, weak) of every op in BINARY
# (both operand orders); Python complex skips floor_divide/remainder (TypeError in both).
_X32_CANON = {"int64": "int32", "uint64": "uint32"}


def _jax_binary(mode, d, kind):
    wide = mode == "x64"
    if kind == "float":
        return ("float64" if wide else "float32"), True
    if kind == "complex":
        return ("complex128" if wide else "complex64"), True
    if d == "bool":  # bool ∨ i* = i*: weak default int
        return ("int64" if wide else "int32"), True
    return (d if wide else _X32_CANON.get(d, d)), False  # the array's dtype, strong


# JAX 0.10: true_divide/arctan2/`/` of an int/bool array with a Python int
_JAX_DIVIDE_INT = {
    "x32": {d: ("float32", d == "bool") for d in INTS},
    "x64": {**{d: ("float32", False) for d in INTS},
            "bool": ("float64", True), "int64": ("float64", False), "uint64": ("float64", False)},
}


def _kind_of(r):
    return str(r.dtype), bool(r.aval.weak_type)


@pytest.mark.parametrize("mode", [pytest.param("x32", marks=pytest.mark.x32),
                                  pytest.param("x64", marks=pytest.mark.x64)])
@pytest.mark.parametrize("d", INTS)
@pytest.mark.parametrize("kind", ["int", "float", "complex"])
def test_int_array_with_python_scalar_matches_jax(mode, d, kind):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (int64 requested under x32 is truncated)
        x = jnp.ones([], d)
    s = {"int": 3, "float": 0.5, "complex": 0.5 + 1j}[kind]
    want = _jax_binary(mode, d, kind)
    for name, f in BINARY.items():
        if kind == "complex" and name in ("floor_divide", "remainder"):
            with pytest.raises(TypeError):
                f(x, s)
            continue
        # (JAX's `3 ** x` with a 0-d concrete int x takes its integer_pow path: not compared)
        orders = [(x, s)] if name in ("power", "op_pow") and kind == "int" else [(x, s), (s, x)]
        for a, b in orders:
            w = want
            if name in ("power", "op_pow") and kind == "int" and d == "bool":
                w = ("int32", False)  # bool ** 3: to_numeric(bool) is int32 in both modes
            assert _kind_of(f(a, b)) == w, (name, a, b)
            # (the scalar closed over, as in a traced function; an argument would be traced)
            g = (lambda v: f(v, s)) if a is x else (lambda v: f(s, v))
            assert _kind_of(pb.jit(g)(x)) == w, (name, "jit", a, b)
    if kind == "int":
        for name, f in DIVIDE.items():
            for a, b in [(x, s), (s, x)]:
                assert _kind_of(f(a, b)) == _JAX_DIVIDE_INT[mode][d], (name, a, b)
    elif kind == "float":
        for name, f in DIVIDE.items():
            for a, b in [(x, s), (s, x)]:
                assert _kind_of(f(a, b)) == want, (name, a, b)


@pytest.mark.x32
def test_weak_float_times_int_is_weak_in_the_jaxpr_and_defers_to_bf16():
    c = jnp.zeros([], jnp.int32)
    text = str(pb.make_jaxpr(lambda c: 0.5 * c)(c))
    assert "weak_type=True" in text and "weak_type=False" not in text, text
    p = jnp.ones([3], jnp.bfloat16)
    assert (0.5 * c).aval.weak_type
    assert ((0.5 * c) * p).dtype == jnp.bfloat16
    assert pb.jit(lambda c, p: (0.5 * c) * p)(c, p).dtype == jnp.bfloat16
    assert (jnp.where(True, c, 0.5) * p).dtype == jnp.bfloat16
    assert (jnp.maximum(c, 1.5) + p).dtype == jnp.bfloat16
    assert ((c + 1j) * jnp.ones([2], jnp.complex64)).dtype == jnp.complex64


@pytest.mark.x64
def test_x64_schedule_value_does_not_upcast_float32():
    """A schedule's ``lr * count`` (Python float times int32) is a weak float64 under x64, so
    it leaves float32 updates float32, as in JAX."""
    count = jnp.asarray(3, jnp.int32)
    s = 1e-3 * count
    assert (str(s.dtype), s.aval.weak_type) == ("float64", True)
    g = jnp.ones([4], jnp.float32)
    assert (s * g).dtype == jnp.float32
    assert pb.jit(lambda c, g: (1e-3 * c) * g)(count, g).dtype == jnp.float32


@pytest.mark.x64
def test_int8_with_python_int_stays_strong_int8():
    x = jnp.ones([2], jnp.int8)
    for r in (x + 1, 1 + x, x * 300, jnp.maximum(x, 2), pb.jit(lambda x: x - 1)(x)):
        assert _kind_of(r) == ("int8", False)


@pytest.mark.x64
@pytest.mark.parametrize("d, want", [("bool", "float32"), ("int8", "float32"),
                                     ("uint32", "float32"), ("int32", "float32"),
                                     ("int64", "float64"), ("uint64", "float64")])
def test_x64_inexact_of_integers_follows_their_width(d, want):
    """JAX 0.10 under x64: integers up to 32 bits become float32 (``to_inexact_dtype``),
    64-bit ones float64; bool ** 3 is int32."""
    x = jnp.ones([3], d)
    for f in (jnp.sin, jnp.sqrt, jnp.mean, jnp.var, jnp.std, jnp.median, jnp.average,
              lambda v: v / v):
        assert str(f(x).dtype) == want
    assert str((jnp.ones([2], bool) ** 3).dtype) == "int32"


def test_weak_only_joins_and_u64_i64():
    """All-weak operands join by their dtypes and stay weak; uint64 with int64 joins at the
    weak float category (JAX: weak float64 under x64)."""
    from pullback.tracer import dtypes as D
    assert D.promote(((D.int8, True), (D.uint8, True))) == (D.int16, True)
    assert D.promote(((D.int64, False), (D.uint64, False))) == (D.DEFAULT_FLOAT, True)
    assert D.promote(((D.int32, False), (D.float32, True))) == (D.DEFAULT_FLOAT, True)
    assert D.promote(((D.bool_, False), (D.int32, True))) == (D.DEFAULT_INT, True)
    assert D.promote(((D.int8, False), (D.int32, True))) == (D.int8, False)
    assert np.dtype(D.promote(((D.float32, False), (D.float32, True)))[0]) == D.float32


# ---- *_like and full keep JAX's weak types ----

LIKE = {"zeros_like": jnp.zeros_like, "ones_like": jnp.ones_like,
        "empty_like": jnp.empty_like, "full_like": lambda a, **k: jnp.full_like(a, 2.5, **k)}


@pytest.mark.parametrize("mode", [pytest.param("x32", marks=pytest.mark.x32),
                                  pytest.param("x64", marks=pytest.mark.x64)])
@pytest.mark.parametrize("name", list(LIKE))
def test_like_functions_keep_the_weak_type_as_jax(mode, name):
    """JAX 0.10: without dtype=, ``*_like(a)`` is weakly typed exactly when ``a`` is (a Python
    int/float/complex, or a weak array); with dtype= it is strong."""
    f = LIKE[name]
    wide = mode == "x64"
    fdt, idt, cdt = (("float64", "int64", "complex128") if wide
                     else ("float32", "int32", "complex64"))
    weak_vec = pb.lax.full((3,), 1.5)  # a weakly typed vector
    cases = [(1.5, (fdt, True)), (2, (idt, True)), (1j, (cdt, True)), (True, ("bool", False)),
             (jnp.asarray(1.5), (fdt, True)), (jnp.asarray(2), (idt, True)),
             (weak_vec, (fdt, True)), (jnp.zeros([], jnp.float32), ("float32", False)),
             (np.float32(1.5), ("float32", False))]
    for a, want in cases:
        assert _kind_of(f(a)) == want, (name, a)
        assert _kind_of(f(a, shape=(2,))) == want, (name, a, "shape")
        assert _kind_of(pb.jit(f)(a)) == want, (name, a, "jit")
        assert _kind_of(f(a, dtype="float32")) == ("float32", False), (name, a, "dtype")
        assert _kind_of(f(a, dtype=float)) == (fdt, False), (name, a, "dtype=float")
    assert _kind_of(f(weak_vec)) == (fdt, True) and f(weak_vec).shape == (3,)
    # a weak zeros_like(1.5) times bf16 stays bf16 (a strong float32 would promote it)
    assert (f(1.5) * jnp.ones([2], jnp.bfloat16)).dtype == jnp.bfloat16


@pytest.mark.x32
def test_full_and_asarray_keep_the_fill_values_weak_type():
    """JAX 0.10: ``full(shape, python_scalar)`` is weak without dtype=, strong with it;
    ``asarray``/``array`` of a Python scalar are weak unless a dtype is given."""
    assert _kind_of(jnp.full((2,), 0)) == ("int32", True)
    assert _kind_of(jnp.full((2,), 2.5)) == ("float32", True)
    assert _kind_of(jnp.full((2,), jnp.asarray(1.5))) == ("float32", True)
    assert _kind_of(jnp.full((2,), 2.5, dtype="float32")) == ("float32", False)
    assert _kind_of(jnp.zeros((2,))) == ("float32", False)
    for f in (jnp.asarray, jnp.array):
        assert _kind_of(f(1.5)) == ("float32", True)
        assert _kind_of(f(2)) == ("int32", True)
        assert _kind_of(f(1j)) == ("complex64", True)
        assert _kind_of(f(True)) == ("bool", False)
        assert _kind_of(f(1.5, dtype="float32")) == ("float32", False)
        assert _kind_of(f(1.5, dtype=float)) == ("float32", False)
        assert _kind_of(f(np.float32(1.5))) == ("float32", False)
        assert _kind_of(f(jnp.asarray(1.5))) == ("float32", True)
