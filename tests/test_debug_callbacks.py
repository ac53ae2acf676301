"""pullback.debug (print, callback, log, breakpoint) and pullback.pure_callback, as JAX 0.10's:
run where the program runs (eagerly, each call of a compiled program, once per batch element
under vmap, in the forward pass under grad), in program order, never dropped, merged or folded
by jit's passes."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax

pytestmark = pytest.mark.x32


def _lines(capsys):
    return capsys.readouterr().out.splitlines()


# ---- debug.print ----

def test_print_eager_formats_values_as_jax(capsys):
    pb.debug.print("x={x} s={s:.2f} {}", 7, x=jnp.arange(3.0), s=jnp.float32(1.5))
    assert _lines(capsys) == ["x=[0. 1. 2.] s=1.50 7"]  # JAX 0.10.2's text


def test_print_format_check_as_jax():
    with pytest.raises(ValueError, match="Unused positional arguments to `jax.debug.print`"):
        pb.debug.print("no placeholders", jnp.arange(2))
    with pytest.raises(ValueError, match="Unused keyword arguments.*f-string"):
        pb.debug.print("{x}", x=1, y=2)


def test_print_without_placeholders_and_skip_check(capsys):
    pb.debug.print("values:", jnp.arange(2), skip_format_check=True)
    assert _lines(capsys) == ["values: [0 1]"]


def test_print_two_call_form(capsys):
    pb.debug.print(ordered=True)("a={}", jnp.float32(2.0))
    assert _lines(capsys) == ["a=2.0"]
    with pytest.raises(TypeError, match="two-call form"):
        pb.debug.print(None, 1)


def _printing(x):
    pb.debug.print("a {}", x)
    y = jnp.sin(x)
    pb.debug.print("b {y}", y=y)
    pb.debug.print("const")
    pb.debug.print("a {}", x)  # equal to the first: CSE must not merge it
    return y * 2


def test_print_under_jit_runs_every_call_in_order(capsys):
    f = pb.jit(_printing)
    x = jnp.array([0.0, 1.0])
    for k in range(3):  # later calls take the fast path: the prints stay
        out = f(x + k)
        np.testing.assert_allclose(np.asarray(out), 2 * np.sin(np.array([0.0, 1.0]) + k),
                                   rtol=1e-6)
        a = np.array2string(np.asarray(x + k))
        b = np.array2string(np.asarray(out) / np.float32(2))  # (y * 2 is exact)
        assert _lines(capsys) == [f"a {a}", f"b {b}", "const", f"a {a}"]


def test_print_in_jaxpr_is_kept_by_the_passes():
    lowered = pb.jit(_printing).lower(jnp.ones(2)).as_text()
    assert lowered.count("debug_callback") == 4  # none dropped (DCE), merged (CSE), folded


def test_print_compiled_with_const_operands_runs_at_run_time(capsys):
    f = pb.jit(lambda x: (pb.debug.print("c={}", jnp.arange(2)), x + 1)[1])
    f(1.0)
    f(2.0)
    assert _lines(capsys) == ["c=[0 1]", "c=[0 1]"]  # not once, at compile time


def test_print_under_vmap_once_per_element(capsys):
    pb.vmap(lambda v, w: pb.debug.print("v={} w={}", v, w), in_axes=(0, None))(
        jnp.arange(3), jnp.float32(5.0))
    assert _lines(capsys) == ["v=0 w=5.0", "v=1 w=5.0", "v=2 w=5.0"]
    pb.jit(pb.vmap(lambda v: pb.debug.print("{}", v), in_axes=1))(jnp.arange(4).reshape(2, 2))
    assert _lines(capsys) == ["[0 2]", "[1 3]"]


def _loss_printing(v):
    pb.debug.print("v={}", v)
    return jnp.sin(v) * v


def test_print_under_grad_once_in_the_forward_pass(capsys):
    want = np.cos(3.0) * 3.0 + np.sin(3.0)
    np.testing.assert_allclose(float(pb.grad(_loss_printing)(3.0)), want, rtol=1e-6)
    assert _lines(capsys) == ["v=3.0"]
    np.testing.assert_allclose(float(pb.jit(pb.grad(_loss_printing))(3.0)), want, rtol=1e-6)
    assert _lines(capsys) == ["v=3.0"]
    _, t = pb.jvp(_loss_printing, (3.0,), (1.0,))
    np.testing.assert_allclose(float(t), want, rtol=1e-6)
    assert _lines(capsys) == ["v=3.0"]


def _body(c, x):
    pb.debug.print("c={} x={}", c, x)
    return c + x, c


def test_print_in_scan_body_eager_jit_and_grad(capsys):
    want = ["c=0.0 x=0.0", "c=0.0 x=1.0", "c=1.0 x=2.0"]
    xs = jnp.arange(3.0)
    lax.scan(_body, 0.0, xs)
    assert _lines(capsys) == want
    pb.jit(lambda xs: lax.scan(_body, 0.0, xs))(xs)
    assert _lines(capsys) == want
    g = pb.jit(pb.grad(lambda c: lax.scan(_body, c, xs)[0]))(0.0)
    assert float(g) == 1.0
    assert _lines(capsys) == want


def test_print_in_cond_and_while(capsys):
    def f(p, x):
        return lax.cond(p, lambda x: (pb.debug.print("yes {}", x), x)[1],
                        lambda x: (pb.debug.print("no {}", x), x)[1], x)
    pb.jit(f)(True, 1.0)
    pb.jit(f)(False, 2.0)
    assert _lines(capsys) == ["yes 1.0", "no 2.0"]

    def body(i):
        pb.debug.print("i={}", i)
        return i + 1
    pb.jit(lambda: lax.while_loop(lambda i: i < 3, body, 0))()
    assert _lines(capsys) == ["i=0", "i=1", "i=2"]


def test_log_goes_through_logging(caplog):
    with caplog.at_level(logging.INFO, logger="pullback.debug"):
        pb.jit(lambda x: pb.debug.log("x={}", x))(jnp.float32(1.5))
    assert [r.getMessage() for r in caplog.records] == ["x=1.5"]


# ---- debug.callback ----

def test_callback_gets_arrays_and_static_args_in_order():
    seen = []

    def cb(a, tag, *, b):
        seen.append((np.asarray(a).copy(), tag, np.asarray(b).copy()))

    @pb.jit
    def f(x):
        pb.debug.callback(cb, x, "first", b=x * 2)
        y = x + 1
        pb.debug.callback(cb, y, "second", b={"k": y}["k"])
        return y

    f(jnp.arange(2.0))
    f(jnp.arange(2.0) + 10)
    assert [t for _, t, _ in seen] == ["first", "second"] * 2
    np.testing.assert_array_equal(seen[0][0], [0.0, 1.0])
    np.testing.assert_array_equal(seen[0][2], [0.0, 2.0])
    np.testing.assert_array_equal(seen[3][0], [11.0, 12.0])
    # values are copies: the compiled program's buffers are reused by later calls
    np.testing.assert_array_equal(seen[1][0], [1.0, 2.0])


def test_callback_not_callable_names_it():
    with pytest.raises(TypeError, match="first argument to jax.debug.callback must be callable"):
        pb.debug.callback(3, jnp.ones(1))


def test_breakpoint_eager_enters_pdb_at_the_caller(monkeypatch):
    import pdb
    frames = []
    monkeypatch.setattr(pdb.Pdb, "interaction", lambda self, frame, tb: frames.append(frame))
    marker = 123  # noqa: F841  (the debugger sees the caller's locals)
    pb.debug.breakpoint()
    assert len(frames) == 1 and frames[0].f_locals.get("marker") == 123


# ---- pure_callback ----

def _host_sin(x):
    return np.sin(np.asarray(x))


def test_pure_callback_eager_and_jit():
    x = jnp.arange(3.0)
    spec = pb.ShapeDtypeStruct((3,), jnp.float32)
    np.testing.assert_allclose(np.asarray(pb.pure_callback(_host_sin, spec, x)), np.sin(x),
                               rtol=1e-6)
    f = pb.jit(lambda v: pb.pure_callback(_host_sin, spec, v) * 2)
    np.testing.assert_allclose(np.asarray(f(x)), 2 * np.sin(x), rtol=1e-6)
    out = pb.pure_callback(lambda a, b: {"s": np.asarray(a + b), "n": np.int32(3)},
                           {"s": spec, "n": pb.ShapeDtypeStruct((), jnp.int32)}, x, b=x)
    np.testing.assert_allclose(np.asarray(out["s"]), 2 * np.asarray(x))
    assert int(out["n"]) == 3


def test_pure_callback_result_mismatch_names_it():
    with pytest.raises(TypeError, match=r"pure_callback: callback output 0 has shape \(2,\)"):
        pb.pure_callback(lambda x: np.zeros(2, np.float32),
                         pb.ShapeDtypeStruct((3,), jnp.float32), jnp.ones(3))
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        pb.pure_callback(_host_sin, pb.ShapeDtypeStruct((3,), jnp.float32), jnp.ones(3),
                         vmap_method="loop")


@pytest.mark.parametrize("method,calls", [("sequential", [(), (), ()]),
                                          ("sequential_unrolled", [(), (), ()]),
                                          ("expand_dims", [((3,), (1, 2))]),
                                          ("broadcast_all", [((3,), (3, 2))])])
def test_pure_callback_vmap_methods(method, calls):
    shapes = []

    def cb(a, b):
        shapes.append((np.shape(a), np.shape(b)) if np.ndim(b) else ())
        a, b = np.asarray(a), np.asarray(b)
        return (a[..., None] * b).sum(-1).astype(np.float32)

    x, w = jnp.arange(3.0), jnp.array([1.0, 2.0])
    f = pb.vmap(lambda v: pb.pure_callback(cb, pb.ShapeDtypeStruct((), jnp.float32), v, w,
                                           vmap_method=method))
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(x) * 3.0)
    if method.startswith("sequential"):
        assert len(shapes) == 3
    else:
        assert shapes == [calls[0]]


def test_pure_callback_vmap_without_method_raises_as_jax():
    with pytest.raises(NotImplementedError, match="vmap is only supported for the "
                                                  "pure_callback primitive when vmap_method"):
        pb.vmap(lambda v: pb.pure_callback(_host_sin, pb.ShapeDtypeStruct((), jnp.float32),
                                           v))(jnp.ones(2))


def test_pure_callback_has_no_derivative():
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        pb.grad(lambda v: pb.pure_callback(_host_sin, pb.ShapeDtypeStruct((), jnp.float32),
                                           v))(1.0)


def test_pure_callback_unused_result_is_dropped_under_jit():
    calls = []

    def cb(x):
        calls.append(1)
        return np.asarray(x)

    f = pb.jit(lambda v: (pb.pure_callback(cb, pb.ShapeDtypeStruct((), jnp.float32), v), v)[1])
    f(1.0)
    assert calls == []  # pure: DCE drops it, as JAX does


def test_pure_callback_oracle_jax():
    jax = pytest.importorskip("jax")
    x = np.arange(4.0, dtype=np.float32)
    for method in ("sequential", "expand_dims", "broadcast_all"):
        def run(mod, xs):
            return mod.vmap(lambda v: mod.pure_callback(
                lambda a: np.asarray(np.cos(a), np.float32),
                mod.ShapeDtypeStruct((), np.float32), v, vmap_method=method))(xs)
        np.testing.assert_allclose(np.asarray(run(pb, x)), np.asarray(run(jax, x)), rtol=1e-6)
