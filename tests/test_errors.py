"""Tracing errors: concretization and escaped tracers, by type and message."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp


def check_concretization_message(msg, what, aval, origin):
    assert f"{what} was called on a traced value of type {aval}" in msg
    assert origin in msg                      # where the value came from
    assert "lax.cond" in msg and "static_argnums" in msg  # what to do instead


@pytest.mark.parametrize("convert, what, err", [
    (bool, "bool()", pb.TracerBoolConversionError),
    (int, "int()", pb.TracerIntegerConversionError),
    (float, "float()", pb.ConcretizationTypeError),
])
@pytest.mark.x32
def test_python_conversions_of_traced_values(convert, what, err):
    def f(x):
        return convert(x)

    with pytest.raises(err) as info:
        pb.jit(f)(jnp.ones(()))
    check_concretization_message(str(info.value), what, "f32[]", "argument x of f")
    assert issubclass(err, pb.ConcretizationTypeError) and issubclass(err, TypeError)


@pytest.mark.x32
def test_if_on_a_traced_intermediate_names_the_op_and_line():
    def f(x):
        y = jnp.sum(x)
        if y:
            return x
        return -x

    with pytest.raises(pb.TracerBoolConversionError) as info:
        pb.jit(f)(jnp.ones(3))
    msg = str(info.value)
    check_concretization_message(msg, "bool()", "f32[]", "created by 'reduce_sum' at")
    assert "test_errors.py" in msg


def test_while_on_a_traced_value():
    def f(x):
        while x:
            x = x * 0.5
        return x

    with pytest.raises(pb.TracerBoolConversionError, match="bool\\(\\) was called"):
        pb.jit(f)(jnp.ones(()))


def test_index_and_numpy_conversion():
    with pytest.raises(pb.TracerIntegerConversionError, match="operator.index"):
        pb.jit(lambda x: [1, 2, 3][x])(jnp.asarray(np.int32(1)))
    with pytest.raises(pb.TracerArrayConversionError, match="np.asarray"):
        pb.jit(lambda x: np.asarray(x))(jnp.ones(2))


def test_concrete_values_convert_fine_outside_staging():
    assert bool(jnp.ones(())) and int(jnp.ones(()) * 3.0) == 3


@pytest.mark.x32
def test_escaped_tracer_names_its_function():
    leaked = []

    def remember(x):
        leaked.append(x)
        return x * 2.0

    pb.jit(remember)(jnp.ones(2))
    with pytest.raises(pb.UnexpectedTracerError) as info:
        jnp.sin(leaked[0])
    msg = str(info.value)
    assert "remember" in msg and "f32[2]" in msg and "after that transformation had returned" in msg
    # used inside a later trace, it is caught as well
    with pytest.raises(pb.UnexpectedTracerError, match="remember"):
        pb.jit(lambda y: y + leaked[0])(jnp.ones(2))


def test_traced_values_are_immutable_and_unhashable():
    def f(x):
        x[0] = 1.0

    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        pb.jit(f)(jnp.ones(2))
    with pytest.raises(TypeError, match="unhashable"):
        pb.jit(lambda x: {x: 1})(jnp.ones(2))
    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        jnp.ones(2)[0] = 1.0
