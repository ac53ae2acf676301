"""grad / value_and_grad / jvp / vjp / linearize / jacobians / custom rules: the API, its
compositions and its errors."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.test_util import check_grads

RNG = np.random.default_rng(0)


def f64(*shape):
    return jnp.asarray(RNG.normal(size=shape))


def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2) + 0.5 * jnp.sum(w * w)


def test_grad_against_finite_differences_and_closed_form():
    w, x = f64(3, 2), f64(4, 3)
    check_grads(loss, (w, x), order=2)
    x0 = jnp.asarray(np.array([0.3, -1.2, 2.0]))
    np.testing.assert_allclose(np.asarray(pb.grad(lambda v: jnp.sum(jnp.sin(v) * v))(x0)),
                               np.cos([0.3, -1.2, 2.0]) * [0.3, -1.2, 2.0] + np.sin([0.3, -1.2, 2.0]),
                               rtol=1e-12)


def test_value_and_grad_argnums_has_aux():
    w, x = f64(3, 2), f64(4, 3)
    (val, aux), (gw, gx) = pb.value_and_grad(lambda w, x: (loss(w, x), {"n": 3}), argnums=(0, 1),
                                             has_aux=True)(w, x)
    assert aux == {"n": 3}
    np.testing.assert_allclose(float(val), float(loss(w, x)))
    assert gw.shape == w.shape and gx.shape == x.shape
    g0 = pb.grad(loss)(w, x)
    np.testing.assert_allclose(np.asarray(g0), np.asarray(gw))


def test_grad_of_pytrees():
    params = {"w": f64(3, 2), "b": f64(2)}
    g = pb.grad(lambda p, x: jnp.sum((x @ p["w"] + p["b"]) ** 2))(params, f64(4, 3))
    assert set(g) == {"w", "b"} and g["w"].shape == (3, 2) and g["b"].shape == (2,)


def test_grad_of_grad_and_hessian_agree():
    def f(x):
        return jnp.sum(jnp.sin(x) * jnp.exp(x[::-1]) + x[0] * x ** 3)
    x = f64(4)
    h1 = pb.jacfwd(pb.jacrev(f))(x)
    h2 = pb.jacrev(pb.jacfwd(f))(x)
    h3 = pb.hessian(f)(x)
    np.testing.assert_allclose(np.asarray(h1), np.asarray(h2), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(h1), np.asarray(h3), rtol=1e-10, atol=1e-12)
    # grad of grad along a direction equals the Hessian-vector product
    v = f64(4)
    hvp = pb.grad(lambda y: jnp.vdot(pb.grad(f)(y), v))(x)
    np.testing.assert_allclose(np.asarray(hvp), np.asarray(h3) @ np.asarray(v), rtol=1e-9)


def test_jacobians_layout():
    f = lambda x, y: {"a": x * y[0], "b": jnp.sum(x)}
    x, y = f64(3), f64(2)
    jf = pb.jacfwd(f, argnums=(0, 1))(x, y)
    jr = pb.jacrev(f, argnums=(0, 1))(x, y)
    assert jf["a"][0].shape == (3, 3) and jf["a"][1].shape == (3, 2) and jf["b"][0].shape == (3,)
    for k in ("a", "b"):
        for i in range(2):
            np.testing.assert_allclose(np.asarray(jf[k][i]), np.asarray(jr[k][i]), rtol=1e-12)


def test_jvp_linearize_vjp():
    x, t = f64(3), f64(3)
    f = lambda v: jnp.sin(v) * v
    y, ty = pb.jvp(f, (x,), (t,))
    y2, f_jvp = pb.linearize(f, x)
    np.testing.assert_allclose(np.asarray(f_jvp(t)), np.asarray(ty), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(y2), np.asarray(y))
    y3, pullback = pb.vjp(f, x)
    (ct,) = pullback(jnp.ones(3, jnp.float64))
    np.testing.assert_allclose(np.asarray(ct), np.cos(np.asarray(x)) * np.asarray(x) + np.sin(np.asarray(x)))


def test_integer_inputs_get_float0_tangents():
    f = lambda x, n: x * n
    x, n = f64(3), jnp.asarray(np.array([1, 2, 3], np.int32))
    float0 = np.dtype([("float0", np.void, 0)])
    g = pb.grad(lambda x, n: jnp.sum(f(x, n)), argnums=(0, 1), allow_int=True)(x, n)
    assert np.asarray(g[1]).dtype == float0 and g[1].shape == (3,)
    np.testing.assert_allclose(np.asarray(g[0]), [1, 2, 3])
    _, pullback = pb.vjp(f, x, n)
    gx, gn = pullback(jnp.ones(3, jnp.float64))
    assert np.asarray(gn).dtype == float0


def test_stop_gradient_and_python_control_flow():
    f = lambda x: jnp.sum(x * lax.stop_gradient(x))
    x = f64(3)
    np.testing.assert_allclose(np.asarray(pb.grad(f)(x)), np.asarray(x))

    def g(x):
        return jnp.sum(x ** 2) if float(jnp.sum(x)) > 0 else jnp.sum(-x)
    np.testing.assert_allclose(np.asarray(pb.grad(g)(jnp.ones(2, jnp.float64))), [2.0, 2.0])
    np.testing.assert_allclose(np.asarray(pb.grad(g)(-jnp.ones(2, jnp.float64))), [-1.0, -1.0])


def test_jit_of_grad_equals_grad():
    w, x = f64(3, 2), f64(4, 3)
    np.testing.assert_allclose(np.asarray(pb.jit(pb.grad(loss))(w, x)),
                               np.asarray(pb.grad(loss)(w, x)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(pb.grad(pb.jit(loss))(w, x)),
                               np.asarray(pb.grad(loss)(w, x)), rtol=1e-12)


def test_per_example_gradients_with_vmap_of_grad():
    w = f64(3, 2)
    xs = f64(5, 4, 3)
    per_ex = pb.vmap(pb.grad(loss), in_axes=(None, 0))(w, xs)
    assert per_ex.shape == (5, 3, 2)
    for i in range(5):
        np.testing.assert_allclose(np.asarray(per_ex[i]), np.asarray(pb.grad(loss)(w, xs[i])),
                                   rtol=1e-10)
    # grad of vmap: the gradient of the summed batch loss is the sum of per-example grads
    g = pb.grad(lambda w: jnp.sum(pb.vmap(lambda x: loss(w, x))(xs)))(w)
    np.testing.assert_allclose(np.asarray(g), np.asarray(per_ex).sum(0), rtol=1e-10)


# ---- errors ----

def test_grad_of_non_scalar_output_raises():
    with pytest.raises(TypeError, match=r"scalar-output.*shape: \(3,\)"):
        pb.grad(lambda x: x * 2.0)(f64(3))


def test_grad_of_integer_input_without_allow_int_raises():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs.*int32.*allow_int"):
        pb.grad(lambda n: jnp.sum(n * 1.0))(jnp.asarray(np.array([1, 2], np.int32)))


def test_grad_of_integer_output_raises():
    with pytest.raises(TypeError, match="real-valued outputs"):
        pb.grad(lambda x: jnp.sum(x).astype(jnp.int32))(f64(3))


# ---- custom rules ----

@pb.custom_jvp
def softclip(x):
    return jnp.tanh(x) * 3.0


@softclip.defjvp
def _softclip_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softclip(x), t * 7.0  # a deliberately wrong derivative, to see it used


@pb.custom_vjp
def scaled(x, y):
    return x * y


def _scaled_fwd(x, y):
    return x * y, (x, y)


def _scaled_bwd(res, ct):
    x, y = res
    return (ct * y * 10.0, ct * x * 10.0)  # deliberately 10x, to see it used


scaled.defvjp(_scaled_fwd, _scaled_bwd)


@pytest.mark.parametrize("order", ["grad", "jit(grad)", "grad(jit)", "vmap(grad)", "grad(vmap)",
                                   "jit(vmap(grad))", "vmap(jit(grad))"])
def test_custom_rules_compose_in_every_order(order):
    def f(x):
        return jnp.sum(softclip(x)) + jnp.sum(scaled(x, x + 1.0))
    xs = f64(4, 3)
    want = np.stack([np.full(3, 7.0) + 10.0 * (2 * np.asarray(x) + 1) for x in xs])
    g = pb.grad(f)
    fns = {
        "grad": lambda: np.stack([np.asarray(g(x)) for x in xs]),
        "jit(grad)": lambda: np.stack([np.asarray(pb.jit(g)(x)) for x in xs]),
        "grad(jit)": lambda: np.stack([np.asarray(pb.grad(pb.jit(f))(x)) for x in xs]),
        "vmap(grad)": lambda: np.asarray(pb.vmap(g)(xs)),
        "grad(vmap)": lambda: np.asarray(pb.grad(lambda X: jnp.sum(pb.vmap(f)(X)))(xs)),
        "jit(vmap(grad))": lambda: np.asarray(pb.jit(pb.vmap(g))(xs)),
        "vmap(jit(grad))": lambda: np.asarray(pb.vmap(pb.jit(g))(xs)),
    }
    np.testing.assert_allclose(fns[order](), want, rtol=1e-10)


def _closing_over(k):
    """A custom_vjp closing over ``k``, whose rule is deliberately 100x (to see it used)."""
    @pb.custom_vjp
    def f(y):
        return jnp.sin(y) * k

    f.defvjp(lambda y: (f(y), y), lambda y, g: (g * 100.0,))
    return f


def test_custom_vjp_closing_over_an_enclosing_transformations_value_keeps_its_rule():
    # k is a value of the enclosing jit (or vmap), a constant to the differentiation: the
    # rule applies, as JAX's; it used to be inlined (the rule silently dropped) under jit
    x, c = f64(3), np.float64(0.5)

    def loss(x, c):
        return jnp.sum(_closing_over(c * 2.0)(x))

    def scanned(x, c):
        f = _closing_over(c * 2.0)
        return lax.scan(lambda a, y: (a + jnp.sum(f(y)), None), 0.0, jnp.stack([x, x]))[0]
    np.testing.assert_allclose(np.asarray(pb.jit(pb.grad(loss))(x, c)), np.full(3, 100.0))
    np.testing.assert_allclose(np.asarray(pb.jit(pb.grad(scanned))(x, c)), np.full(3, 200.0))
    np.testing.assert_allclose(np.asarray(pb.vmap(pb.grad(loss))(np.stack([x, x]),
                                                                 np.array([c, c]))),
                               np.full((2, 3), 100.0))
    # the rule's derivative (of g * 100) is zero
    np.testing.assert_allclose(
        np.asarray(pb.jit(pb.grad(lambda x: jnp.sum(pb.grad(loss)(x, c))))(x)), np.zeros(3))
    # forward mode differentiates the function itself, also on the closed-over operand
    _, t = pb.jit(lambda x: pb.jvp(lambda x: loss(x, c), (x,), (jnp.ones_like(x),)))(x)
    np.testing.assert_allclose(float(t), np.sum(np.cos(np.asarray(x)) * 2 * c), rtol=1e-12)
    # a value being differentiated itself: the function is differentiated (pullback's rule)
    got = pb.jit(pb.grad(lambda x: jnp.sum(_closing_over(jnp.sum(x))(x))))(x)
    xv = np.asarray(x)
    want = np.cos(xv) * xv.sum() + np.sum(np.sin(xv))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def _jvp_closing_over(k):
    """A custom_jvp closing over ``k``, whose rule is deliberately 100x (to see it used)."""
    @pb.custom_jvp
    def f(y):
        return jnp.sin(y) * k

    f.defjvp(lambda p, t: (f(p[0]), t[0] * 100.0))
    return f


def test_custom_jvp_closing_over_an_enclosing_transformations_value_keeps_its_rule():
    x, c = f64(3), np.float64(0.5)

    def loss(x, c):
        return jnp.sum(_jvp_closing_over(c * 2.0)(x))
    np.testing.assert_allclose(np.asarray(pb.jit(pb.grad(loss))(x, c)), np.full(3, 100.0))
    np.testing.assert_allclose(np.asarray(pb.vmap(pb.grad(loss))(np.stack([x, x]),
                                                                 np.array([c, c]))),
                               np.full((2, 3), 100.0))
    _, t = pb.jit(lambda x, c: pb.jvp(lambda x: loss(x, c), (x,), (jnp.ones_like(x),)))(x, c)
    np.testing.assert_allclose(float(t), 300.0)
    # vmap inside the differentiation, over the closed-over value: the function is vmapped
    got = pb.jit(lambda x, cs: pb.vmap(lambda c: loss(x, c))(cs))(x, np.array([c, 2 * c]))
    want = [np.sum(np.sin(np.asarray(x))) * 2 * v for v in (c, 2 * c)]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    # a value being differentiated itself: the function is differentiated
    got = pb.jit(pb.grad(lambda x: jnp.sum(_jvp_closing_over(jnp.sum(x))(x))))(x)
    xv = np.asarray(x)
    np.testing.assert_allclose(np.asarray(got), np.cos(xv) * xv.sum() + np.sum(np.sin(xv)),
                               rtol=1e-12)


def test_forward_mode_through_custom_vjp_differentiates_the_primal():
    x, y, tx, ty = f64(3), f64(3), f64(3), f64(3)
    _, t_out = pb.jvp(scaled, (x, y), (tx, ty))
    np.testing.assert_allclose(np.asarray(t_out), np.asarray(tx * y + x * ty), rtol=1e-12)
    jf = pb.jacfwd(lambda v: scaled(v, v))(x)
    np.testing.assert_allclose(np.asarray(jf), np.diag(2 * np.asarray(x)), rtol=1e-12)


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @pb.custom_jvp
    def f(x, y):
        return x * y
    f.defjvps(lambda t, ans, x, y: t * 2.0, lambda t, ans, x, y: t * 3.0)
    np.testing.assert_allclose(np.asarray(pb.grad(lambda a: jnp.sum(f(a, a)))(f64(2))), [5.0, 5.0])

    from functools import partial

    @partial(pb.custom_vjp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)
    apply.defvjp(lambda fn, x: (fn(x), x), lambda fn, x, ct: (ct * 0.5,))
    np.testing.assert_allclose(np.asarray(pb.grad(lambda x: jnp.sum(apply(jnp.sin, x)))(f64(3))),
                               [0.5, 0.5, 0.5])


def test_custom_rules_called_on_concrete_values_run_the_function_itself():
    """Outside any transformation the function runs on its concrete operands (no trace to a
    call primitive, which doubled the cost of a small eager function such as nn.relu)."""
    seen = []

    @pb.custom_jvp
    def f(x):
        seen.append(isinstance(x, pb.Array))
        return x * 2.0
    f.defjvps(lambda t, ans, x: t * 3.0)

    @pb.custom_vjp
    def g(x):
        seen.append(isinstance(x, pb.Array))
        return x * 2.0
    g.defvjp(lambda x: (x * 2.0, None), lambda res, ct: (ct * 3.0,))
    x = f64(3)
    np.testing.assert_allclose(np.asarray(f(x)), 2 * np.asarray(x))
    np.testing.assert_allclose(np.asarray(g(x)), 2 * np.asarray(x))
    assert seen == [True, True]
    np.testing.assert_allclose(np.asarray(pb.grad(lambda v: jnp.sum(f(v)))(x)), 3.0)
    np.testing.assert_allclose(np.asarray(pb.grad(lambda v: jnp.sum(g(v)))(x)), 3.0)
    assert len(seen) > 2 and not any(seen[2:])  # traced under grad


def test_custom_jvp_under_vmap_with_an_unmapped_operand():
    """A custom_jvp call whose operands are partly unmapped (a constant beside a batched x, a
    tangent of 1.0 beside a batched primal) keeps its per-example shapes."""
    @pb.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y
    f.defjvps(lambda t, ans, x, y: jnp.cos(x) * y * t * 10.0, lambda t, ans, x, y: jnp.sin(x) * t)
    xs = f64(5)
    one = jnp.asarray(1.0, jnp.float64)
    out, tan = pb.vmap(lambda x: pb.jvp(lambda v: f(v, 2.0), (x,), (one,)))(xs)
    assert out.shape == tan.shape == (5,)
    np.testing.assert_allclose(np.asarray(tan), 20.0 * np.cos(np.asarray(xs)), rtol=1e-12)
    grads = pb.vmap(pb.grad(lambda x: f(x, 3.0)))(xs)
    np.testing.assert_allclose(np.asarray(grads), 30.0 * np.cos(np.asarray(xs)), rtol=1e-12)
    out, tan = pb.jvp(pb.vmap(lambda x: f(x, 2.0)), (xs,), (jnp.ones(5, jnp.float64),))
    np.testing.assert_allclose(np.asarray(tan), 20.0 * np.cos(np.asarray(xs)), rtol=1e-12)


def test_custom_vjp_bwd_with_wrong_structure_or_shape_raises():
    @pb.custom_vjp
    def f(x, y):
        return x * y
    f.defvjp(lambda x, y: (x * y, None), lambda res, ct: (ct,))
    with pytest.raises(TypeError, match="bwd rule of f must return a tuple of length 2"):
        pb.grad(lambda x: jnp.sum(f(x, x)))(f64(3))

    @pb.custom_vjp
    def g(x):
        return x * 2.0
    g.defvjp(lambda x: (x * 2.0, None), lambda res, ct: (jnp.ones(5, jnp.float64),))
    with pytest.raises(ValueError, match=r"bwd rule of g returned a cotangent of shape \(5,\) "
                                         r"for argument 0, whose primal has shape \(3,\)"):
        pb.grad(lambda x: jnp.sum(g(x)))(f64(3))

    @pb.custom_vjp
    def h(p):
        return p["a"] * 2.0
    h.defvjp(lambda p: (p["a"] * 2.0, None), lambda res, ct: ({"b": ct},))
    with pytest.raises(TypeError, match="structure"):
        pb.grad(lambda a: jnp.sum(h({"a": a})))(f64(3))


def test_custom_rules_nest():
    @pb.custom_jvp
    def outer(x):
        return scaled(x, x)

    @outer.defjvp
    def _(p, t):
        (x,), (tx,) = p, t
        return outer(x), tx * 4.0 * x
    np.testing.assert_allclose(np.asarray(pb.grad(lambda x: jnp.sum(outer(x)))(f64(3) * 0 + 1.0)),
                               [4.0, 4.0, 4.0])
