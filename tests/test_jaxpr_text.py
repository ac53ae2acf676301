"""make_jaxpr's text, pinned for representative programs (JAX's format)."""
import numpy as np

import pullback as pb
import pullback.numpy as jnp


def f32(*shape):
    return pb.ShapeDtypeStruct(shape, np.float32)


def test_one_equation_prints_on_one_line():
    assert str(pb.make_jaxpr(jnp.sin)(f32(3))) == \
        "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"


def test_literals_and_several_equations():
    text = str(pb.make_jaxpr(lambda x: jnp.exp(jnp.sin(x) * 2.0) + x)(f32(3)))
    assert text == """\
{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = mul b 2.0:f32[]
    d:f32[3] = exp c
    e:f32[3] = add d a
  in (e,) }"""


def test_constants_pytrees_and_several_outputs():
    w = jnp.asarray(np.ones((4, 2), np.float32))

    def f(inputs):
        h = inputs["x"] @ w
        return jnp.sum(h, axis=1), -inputs["y"]

    text = str(pb.make_jaxpr(f)({"x": f32(3, 4), "y": f32()}))
    assert text == """\
{ lambda a:f32[4,2]; b:f32[3,4] c:f32[]. let
    d:f32[3,2] = dot_general[dimension_numbers=(((1,), (0,)), ((), ())) precision=None preferred_element_type=None] b a
    e:f32[3] = reduce_sum[axes=(1,)] d
    f:f32[] = neg c
  in (e, f) }"""


def test_broadcasting_inserts_broadcast_in_dim():
    text = str(pb.make_jaxpr(lambda x, y: x + y)(f32(2, 3), f32(3)))
    assert text == """\
{ lambda ; a:f32[2,3] b:f32[3]. let
    c:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=(1,)] b
    d:f32[2,3] = add a c
  in (d,) }"""


def test_nested_jit_is_indented():
    inner = pb.jit(lambda x: jnp.sin(x) * 2.0)
    text = str(pb.make_jaxpr(lambda x: inner(x) + 1.0)(f32(3)))
    assert text == """\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[name=<lambda> jaxpr={ lambda ; c:f32[3]. let
            d:f32[3] = sin c
            e:f32[3] = mul d 2.0:f32[]
          in (e,) }] a
    f:f32[3] = add b 1.0:f32[]
  in (f,) }"""


def test_no_equations_and_an_input_passed_through():
    assert str(pb.make_jaxpr(lambda x, y: (y, x))(f32(2), f32())) == \
        "{ lambda ; a:f32[2] b:f32[]. let in (b, a) }"
