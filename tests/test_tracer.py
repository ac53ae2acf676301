import pytest
"""The interpreter stack, tracing to Jaxprs, eval_jaxpr and source locations."""
import collections

import numpy as np

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.tracer import core
from pullback.tracer.staging import eval_jaxpr


# A minimal transformation for exercising the stack: it logs each primitive it sees, then binds
# it again on the level below (the pattern every real transformation follows).
class LogTracer(core.Tracer):
    __slots__ = ("val",)

    def __init__(self, trace, val):
        self._trace = trace
        self.val = val

    @property
    def aval(self):
        return core.get_aval(self.val)

    def to_concrete_value(self):
        v = self.val
        return v.to_concrete_value() if hasattr(v, "to_concrete_value") else None


class LogTrace(core.Trace):
    def pure(self, val):
        return LogTracer(self, val)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        log, tag = self.main.payload
        log.append((tag, prim.name, self.main.level))
        out = prim.bind(*[t.val for t in tracers], **params)
        if prim.multiple_results:
            return [LogTracer(self, o) for o in out]
        return LogTracer(self, out)


def logged(f, log, tag):
    def wrapped(*args):
        with core.new_main(LogTrace, (log, tag), debug_name=f"logged({tag})") as main:
            trace = LogTrace(main)
            out = f(*[LogTracer(trace, a) for a in args])
            return trace.full_raise(out).val
    return wrapped


def x3():
    return jnp.asarray(np.array([0.5, 1.0, 2.0], np.float32))


def test_eval_level_runs_kernels():
    out = jnp.sin(x3()) * 2.0
    assert isinstance(out, pb.Array)
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin([0.5, 1.0, 2.0]), rtol=1e-6)
    assert len(core.state.stack) == 1


def test_nested_levels_each_see_every_primitive():
    log = []
    f = lambda x: jnp.exp(jnp.sin(x))
    g = logged(logged(f, log, "inner"), log, "outer")
    out = g(x3())
    np.testing.assert_allclose(np.asarray(out), np.exp(np.sin([0.5, 1.0, 2.0])), rtol=1e-6)
    # the inner level (higher) interprets first and binds below, so outer sees each op after it
    assert log == [("inner", "sin", 2), ("outer", "sin", 1), ("inner", "exp", 2),
                   ("outer", "exp", 1)]
    assert len(core.state.stack) == 1  # every level popped


def test_lower_level_value_is_lifted_into_higher_level():
    log = []
    c = x3()
    # the closure mixes a level-1 tracer with a level-0 constant: the constant is raised
    out = logged(lambda x: x + c, log, "t")(x3())
    assert log == [("t", "add", 1)]
    np.testing.assert_allclose(np.asarray(out), 2 * np.array([0.5, 1, 2]))


def test_staging_inside_a_transformation_and_a_transformation_inside_staging():
    log = []
    f = lambda x: jnp.sin(x) + 1.0
    jaxpr = pb.make_jaxpr(logged(f, log, "t"))(x3())
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "add"]
    assert [name for _, name, _ in log] == ["sin", "add"]
    log.clear()
    out = logged(pb.jit(f), log, "t")(x3())
    assert [name for _, name, _ in log] == ["jit"]  # jit is one call primitive to the level
    np.testing.assert_allclose(np.asarray(out), np.sin([0.5, 1, 2]) + 1, rtol=1e-6)


def test_concrete_value_is_visible_through_a_non_staging_level():
    seen = []

    def f(x):
        if x.sum():  # bool() works too
            seen.append(float(x.sum()))  # float() works: the value is concrete below this level
        return x

    logged(f, [], "t")(x3())
    assert seen == [3.5]


def test_closure_over_constants_becomes_constvars():
    c = jnp.asarray(np.arange(3, dtype=np.float32))
    n = np.ones(3, np.float32)
    closed = pb.make_jaxpr(lambda x: x * c + n)(x3())
    assert len(closed.jaxpr.constvars) == 2
    assert [np.asarray(v).tolist() for v in closed.consts] == [[0, 1, 2], [1, 1, 1]]
    out = eval_jaxpr(closed.jaxpr, closed.consts, x3())
    np.testing.assert_allclose(np.asarray(out[0]), np.array([0.5, 1, 2]) * [0, 1, 2] + 1)


def test_pytrees_in_and_out_of_jit():
    Out = collections.namedtuple("Out", "total parts")

    @pb.jit
    def f(params, xs):
        a = params["w"] * xs[0]
        b = params["b"] + xs[1]
        return Out(total=jnp.sum(a) + jnp.sum(b), parts={"a": a, "b": (b, None)})

    params = {"w": jnp.ones(3) * 2.0, "b": jnp.ones(3)}
    out = f(params, (x3(), x3()))
    assert isinstance(out, Out) and isinstance(out.parts, dict) and out.parts["b"][1] is None
    np.testing.assert_allclose(np.asarray(out.parts["a"]), [1, 2, 4])
    np.testing.assert_allclose(float(out.total), 7 + 6.5)


def test_jit_inside_jit_is_a_nested_equation_and_computes_the_same():
    inner = pb.jit(lambda x: jnp.exp(x) * 2.0)

    @pb.jit
    def outer(x):
        return inner(x) + inner(x * 3.0)

    x = x3()
    want = np.exp([0.5, 1, 2]) * 2 + np.exp(np.array([0.5, 1, 2]) * 3) * 2
    np.testing.assert_allclose(np.asarray(outer(x)), want, rtol=1e-6)
    closed = pb.make_jaxpr(outer)(x)
    (call,) = closed.eqns
    assert call.primitive.name == "jit"
    inner_eqns = call.params["jaxpr"].eqns
    assert [e.primitive.name for e in inner_eqns] == ["jit", "mul", "jit", "add"]


def test_jit_closing_over_an_outer_tracer():
    @pb.jit
    def outer(x):
        y = jnp.sin(x)
        return pb.jit(lambda z: z * y)(x)  # the inner program captures y, a tracer of outer

    x = x3()
    np.testing.assert_allclose(np.asarray(outer(x)), np.asarray(x) * np.sin(np.asarray(x)),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(outer(x * 2.0)),
                               2 * np.asarray(x) * np.sin(2 * np.asarray(x)), rtol=1e-6)


def test_equations_record_the_users_source_line():
    def f(x):
        return jnp.sin(x)  # this line

    import inspect
    line = inspect.getsourcelines(f)[1] + 1
    (eqn,) = pb.make_jaxpr(f)(x3()).eqns
    assert eqn.source_info.line == line
    assert eqn.source_info.file == __file__
    assert eqn.source_info.function == "f"


def test_make_jaxpr_accepts_shape_dtype_structs_and_static_args():
    closed = pb.make_jaxpr(lambda x, n: jnp.reshape(x, (n, -1)), static_argnums=1)(
        pb.ShapeDtypeStruct((2, 6), np.float64), 3)
    assert str(closed) == ("{ lambda ; a:f64[2,6]. let\n"
                           "    b:f64[3,4] = reshape[new_sizes=(3, 4) dimensions=None] a\n"
                           "  in (b,) }")


@pytest.mark.x32
def test_literals_and_weak_types():
    closed = pb.make_jaxpr(lambda x: x * 2)(jnp.asarray(np.ones(2, np.float16)))
    (eqn,) = closed.eqns
    assert eqn.outvars[0].aval.dtype == np.float16  # the weak int takes the array's dtype
    assert float(eqn.invars[1].val) == 2 and eqn.invars[1].aval.dtype == np.float16
    out = lax.add(2.0, 3.0)
    assert out.dtype == np.float32 and out.weak_type
