"""JAX's type-promotion lattice with weak types (pullback.tracer.dtypes)."""
import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback.numpy as jnp
from pullback.tracer import dtypes as D

STRONG = [D.bool_, D.int8, D.int16, D.int32, D.int64, D.uint8, D.uint16, D.uint32, D.uint64,
          D.bfloat16, D.float16, D.float32, D.float64, D.complex64, D.complex128]

# JAX's documented table (x64 semantics; pullback keeps 64-bit types): a few rows, pinned
PINNED = [
    ((D.bool_, D.int8), D.int8), ((D.int8, D.uint8), D.int16), ((D.uint8, D.int16), D.int16),
    ((D.uint32, D.int32), D.int64), ((D.uint16, D.int8), D.int32), ((D.int64, D.uint64), D.float32),
    ((D.bfloat16, D.float16), D.float32), ((D.bfloat16, D.int32), D.bfloat16),
    ((D.float16, D.uint64), D.float16), ((D.float32, D.complex64), D.complex64),
    ((D.float64, D.complex64), D.complex128), ((D.int32, D.float32), D.float32),
    ((D.int64, D.float16), D.float16), ((D.uint8, D.bool_), D.uint8),
]


@pytest.mark.x32
@pytest.mark.parametrize("pair, want", PINNED, ids=str)
def test_pinned_table_entries(pair, want):
    assert D.promote_types(*pair) == want
    assert D.promote_types(*reversed(pair)) == want


def test_table_is_symmetric_idempotent_and_associative():
    for a, b in itertools.product(STRONG, repeat=2):
        assert D.promote_types(a, b) == D.promote_types(b, a)
    for a in STRONG:
        assert D.promote_types(a, a) == a
    # associative on the lattice: carry the weak flag of intermediate joins (int8 with uint64
    # joins at the weak float node, which then defers to bfloat16)
    def p(x, y):
        return D.promote((x, y))
    for a, b, c in itertools.product(STRONG, repeat=3):
        a, b, c = (a, False), (b, False), (c, False)
        assert p(p(a, b), c) == p(a, p(b, c))


@given(st.sampled_from(STRONG), st.sampled_from([int, float, complex]))
def test_python_scalars_are_weak_and_defer_to_arrays(dt, kind):
    py = {int: 1, float: 1.5, complex: 1j}[kind]
    pdt, weak = D.dtype_of_python(py)
    out, out_weak = D.promote(((dt, False), (pdt, weak)))
    kind_rank = {"b": 0, "i": 1, "u": 1, "f": 2, "V": 2, "c": 3}
    if kind_rank[dt.kind] >= {int: 1, float: 2, complex: 3}[kind]:
        assert out == dt and not out_weak  # the array's dtype wins (e.g. f16 * 2.0 is f16)
    else:  # the scalar's kind wins: int arrays with a Python float give a (weak) float32
        assert out.kind == {int: "i", float: "f", complex: "c"}[kind]
        if dt.kind in "biu":
            assert out_weak and out == pdt


def test_all_weak_inputs_stay_weak_with_default_dtypes():
    assert D.promote(((D.int32, True), (D.float32, True))) == (D.float32, True)
    assert D.promote(((D.int32, True), (D.int32, True))) == (D.int32, True)
    assert D.promote(((D.float32, True), (D.complex64, True))) == (D.complex64, True)


def test_float8_only_meets_weak_floats():
    f8 = D.float8_e4m3fn
    assert D.promote(((f8, False), (D.float32, True))) == (f8, False)
    with pytest.raises(TypeError, match="no implicit promotion"):
        D.promote_types(f8, D.float32)


@pytest.mark.x32
def test_result_type_and_promote_types_in_the_numpy_namespace():
    assert jnp.promote_types(jnp.int8, jnp.uint8) == np.dtype("int16")
    assert jnp.result_type(jnp.ones(2, jnp.float16), 2.0) == np.dtype("float16")
    assert jnp.result_type(np.ones(2, np.int8), 3) == np.dtype("int8")
    assert jnp.result_type(1, 2.0) == np.dtype("float32")
    assert jnp.issubdtype(ml_dtypes.bfloat16, jnp.floating)
    assert not jnp.issubdtype(np.int32, jnp.floating)
    assert jnp.dtype(float) == np.dtype("float32") and jnp.dtype(int) == np.dtype("int32")


def test_canonicalize_rejects_unsupported_dtypes():
    with pytest.raises(TypeError, match="not supported"):
        D.canonicalize(np.dtype("U3"))


def test_python_zero_keeps_its_sign():
    # -0.0 == 0.0: the cache of scalar operands must still tell them apart
    import pullback.numpy as jnp
    x = jnp.asarray(np.array([-0.0], np.float32))
    assert not np.signbit(np.asarray(x + 0.0))[0]
    assert np.signbit(np.asarray(x + -0.0))[0]
