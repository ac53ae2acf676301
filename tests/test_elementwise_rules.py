"""Element-wise primitives under the transformations: jvp, vjp (transpose), their second
orders, jit of derivatives and vmap.

Derivatives are checked three ways: against finite differences in float64 (``check_grads``,
order 2, forward and reverse), against an independent NumPy/SciPy formula of the derivative,
and at the points where JAX fixes a convention (max/min ties, pow at 0, abs at 0, the
transposes of real/imag/conj/complex, zero derivatives of floor and friends).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
import pullback.lax as lax
from pullback.primitives import elementwise as ew
from pullback.primitives.rules import UndefPrimal, Zero
from pullback.test_util import check_grads, check_vmap
from pullback.tracer.avals import ShapedArray
from pullback.tracer.core import NoRule, Primitive
from pullback.tracer.dtypes import float0

RNG = np.random.default_rng(1234)
F64 = np.float64

# the primitives declared by the element-wise family (not those it imports)
PRIMS = {p for p in vars(ew).values()
         if isinstance(p, Primitive) and p.abstract_eval.__module__ == ew.__name__}


def _needs(*rules: str) -> None:
    """Skip unless the other families' rules this test also runs through ("prim.slot") are on
    this branch (they arrive with their own families' issue-4 work)."""
    missing = [r for r in rules
               if isinstance(getattr(Primitive.registry[r.split(".")[0]], r.split(".")[1]),
                             NoRule)]
    if missing:
        pytest.skip("needs rules of other families: " + ", ".join(missing))


# ---------------------------------------------------------------------------------------------
# samplers: values inside each op's domain, away from its singularities

def uniform(lo, hi):
    return lambda shape: RNG.uniform(lo, hi, shape)


def away_from_zero(lo, hi):
    return lambda shape: RNG.uniform(lo, hi, shape) * RNG.choice([-1.0, 1.0], shape)


def off_grid(shape):
    """Away from integers and half-integers (where rounding functions jump)."""
    return RNG.integers(-3, 4, shape) + RNG.choice([0.2, 0.3, 0.7, 0.8], shape)


def gamma_domain(shape):
    """Positive and negative non-integers (negatives exercise the reflection formulas)."""
    return RNG.choice([-2.6, -1.3, -0.4, 0.35, 0.9, 1.7, 3.2, 7.5], shape) + \
        RNG.uniform(-0.05, 0.05, shape)


def _logistic(x):
    return 1 / (1 + np.exp(-x))


# name: (lax function, sampler, d/dx by an independent formula)
UNARY = {
    "neg": (lax.neg, uniform(-2, 2), lambda x: -np.ones_like(x)),
    "square": (lax.square, uniform(-2, 2), lambda x: 2 * x),
    # (11, 52): float64's own format, so the identity, whose finite differences are defined
    "reduce_precision": (lambda x: lax.reduce_precision(x, 11, 52), uniform(-2, 2),
                         np.ones_like),
    "sign": (lax.sign, away_from_zero(0.3, 2), np.zeros_like),
    "abs": (lax.abs, away_from_zero(0.3, 2), np.sign),
    "reciprocal": (lax.reciprocal, away_from_zero(0.5, 2), lambda x: -1 / x ** 2),
    "sqrt": (lax.sqrt, uniform(0.5, 2), lambda x: 0.5 / np.sqrt(x)),
    "rsqrt": (lax.rsqrt, uniform(0.5, 2), lambda x: -0.5 * x ** -1.5),
    "cbrt": (lax.cbrt, away_from_zero(0.5, 2), lambda x: np.abs(x) ** (-2 / 3) / 3),
    "exp": (lax.exp, uniform(-2, 2), np.exp),
    "exp2": (lax.exp2, uniform(-2, 2), lambda x: np.log(2) * 2 ** x),
    "expm1": (lax.expm1, uniform(-2, 2), np.exp),
    "log": (lax.log, uniform(0.5, 2), lambda x: 1 / x),
    "log1p": (lax.log1p, uniform(-0.5, 2), lambda x: 1 / (1 + x)),
    "logistic": (lax.logistic, uniform(-3, 3), lambda x: _logistic(x) * _logistic(-x)),
    "sin": (lax.sin, uniform(-3, 3), np.cos),
    "cos": (lax.cos, uniform(-3, 3), lambda x: -np.sin(x)),
    "tan": (lax.tan, uniform(-1.2, 1.2), lambda x: 1 / np.cos(x) ** 2),
    "asin": (lax.asin, uniform(-0.8, 0.8), lambda x: 1 / np.sqrt(1 - x * x)),
    "acos": (lax.acos, uniform(-0.8, 0.8), lambda x: -1 / np.sqrt(1 - x * x)),
    "atan": (lax.atan, uniform(-2, 2), lambda x: 1 / (1 + x * x)),
    "sinh": (lax.sinh, uniform(-2, 2), np.cosh),
    "cosh": (lax.cosh, uniform(-2, 2), np.sinh),
    "tanh": (lax.tanh, uniform(-2, 2), lambda x: 1 / np.cosh(x) ** 2),
    "asinh": (lax.asinh, uniform(-2, 2), lambda x: 1 / np.sqrt(x * x + 1)),
    "acosh": (lax.acosh, uniform(1.2, 3), lambda x: 1 / np.sqrt(x * x - 1)),
    "atanh": (lax.atanh, uniform(-0.8, 0.8), lambda x: 1 / (1 - x * x)),
    "floor": (lax.floor, off_grid, np.zeros_like),
    "ceil": (lax.ceil, off_grid, np.zeros_like),
    "trunc": (lax.trunc, off_grid, np.zeros_like),
    "round": (lax.round, off_grid, np.zeros_like),
    "round_even": (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), off_grid,
                   np.zeros_like),
    "erf": (lax.erf, uniform(-2, 2), lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x)),
    "erfc": (lax.erfc, uniform(-2, 2), lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x)),
    "erf_inv": (lax.erf_inv, uniform(-0.8, 0.8),
                lambda x: np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(x) ** 2)),
    "lgamma": (lax.lgamma, gamma_domain, sp.digamma),
    "digamma": (lax.digamma, gamma_domain, lambda x: sp.polygamma(1, x)),
    "integer_pow_3": (lambda x: lax.integer_pow(x, 3), uniform(-2, 2), lambda x: 3 * x * x),
    "integer_pow_-2": (lambda x: lax.integer_pow(x, -2), away_from_zero(0.5, 2),
                       lambda x: -2 * x ** -3.0),
    "integer_pow_1": (lambda x: lax.integer_pow(x, 1), uniform(-2, 2), np.ones_like),
    "integer_pow_0": (lambda x: lax.integer_pow(x, 0), uniform(-2, 2), np.zeros_like),
}


def rem_operands(shape):
    """x / y away from integers (where rem jumps)."""
    y = RNG.uniform(0.6, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)
    return y * (RNG.integers(-3, 4, shape) + RNG.uniform(0.2, 0.8, shape)), y


def distinct(shape):
    x = RNG.uniform(-2, 2, shape)
    return x, x + RNG.choice([-1.0, 1.0], shape) * RNG.uniform(0.2, 1, shape)


def generic(lo_x, hi_x, lo_y, hi_y):
    return lambda shape: (RNG.uniform(lo_x, hi_x, shape), RNG.uniform(lo_y, hi_y, shape))


# name: (lax function, sampler of (x, y), (d/dx, d/dy) by independent formulas)
BINARY = {
    "add": (lax.add, generic(-2, 2, -2, 2), (lambda x, y: 1 + 0 * x, lambda x, y: 1 + 0 * y)),
    "sub": (lax.sub, generic(-2, 2, -2, 2), (lambda x, y: 1 + 0 * x, lambda x, y: -1 + 0 * y)),
    "mul": (lax.mul, generic(-2, 2, -2, 2), (lambda x, y: y, lambda x, y: x)),
    "div": (lax.div, lambda s: (RNG.uniform(-2, 2, s), away_from_zero(0.5, 2)(s)),
            (lambda x, y: 1 / y, lambda x, y: -x / y ** 2)),
    "rem": (lax.rem, rem_operands, (lambda x, y: 1 + 0 * x, lambda x, y: -np.trunc(x / y))),
    "pow": (lax.pow, generic(0.5, 2, -2, 2),
            (lambda x, y: y * x ** (y - 1), lambda x, y: np.log(x) * x ** y)),
    "atan2": (lax.atan2, lambda s: (away_from_zero(0.3, 2)(s), away_from_zero(0.3, 2)(s)),
              (lambda x, y: y / (x * x + y * y), lambda x, y: -x / (x * x + y * y))),
    "max": (lax.max, distinct, (lambda x, y: (x > y) * 1.0, lambda x, y: (y > x) * 1.0)),
    "min": (lax.min, distinct, (lambda x, y: (x < y) * 1.0, lambda x, y: (y < x) * 1.0)),
}

# complex-capable unary ops, all holomorphic away from their branch cuts
HOLOMORPHIC = ["neg", "square", "reciprocal", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log1p",
               "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
               "asinh", "acosh", "atanh", "integer_pow_3", "integer_pow_-2"]

NOT_DIFFERENTIABLE = {"and", "or", "xor", "not", "shift_left", "shift_right_logical",
                      "shift_right_arithmetic", "eq", "ne", "lt", "le", "gt", "ge",
                      "is_finite", "population_count", "clz", "gcd", "lcm"}
LINEAR = {"add", "sub", "mul", "div", "neg", "real", "imag", "conj", "complex", "select_n",
          "reduce_precision"}


def _prim_name(name: str) -> str:
    if name.startswith("integer_pow"):
        return "integer_pow"
    return {"round_even": "round", "reduce_precision_half": "reduce_precision"}.get(name, name)


# ---------------------------------------------------------------------------------------------
# every rule slot is filled, or says why it cannot be

def test_every_elementwise_primitive_has_its_rules():
    for p in PRIMS:
        assert callable(p.batch) and not isinstance(p.batch, NoRule), p.name
        if p.name in NOT_DIFFERENTIABLE or p.name == "nextafter":
            assert isinstance(p.jvp, NoRule) and p.jvp.kind == "not_applicable", p.name
        else:
            assert callable(p.jvp) and not isinstance(p.jvp, NoRule), p.name
        if p.name in LINEAR:
            assert callable(p.transpose) and not isinstance(p.transpose, NoRule), p.name
        else:
            assert isinstance(p.transpose, NoRule) and p.transpose.kind == "not_applicable"


def test_the_tables_cover_every_primitive():
    differentiated = {_prim_name(n) for n in UNARY} | set(BINARY) | {
        "clamp", "select_n", "real", "imag", "conj", "complex", "nextafter"}
    assert {p.name for p in PRIMS} <= differentiated | NOT_DIFFERENTIABLE
    assert {p.name for p in PRIMS} <= {_prim_name(n) for n in VMAP_CASES}


# ---------------------------------------------------------------------------------------------
# real unary ops: finite differences (order 2), the derivative formula, jit

@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_grads_order_2(name):
    fn, sample, _ = UNARY[name]
    check_grads(fn, (sample((2, 3)),), order=2)
    check_grads(fn, (F64(sample(())),), order=2)  # a 0-d operand


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_derivative_matches_formula(name):
    fn, sample, deriv = UNARY[name]
    x = sample((7,))
    _, t = pb.jvp(fn, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(np.asarray(t), deriv(x), rtol=1e-9, atol=1e-12)
    (g,) = pb.vjp(fn, x)[1](np.ones_like(x))  # reverse mode: the same diagonal Jacobian
    np.testing.assert_allclose(np.asarray(g), deriv(x), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_jit_of_grad_equals_grad(name):
    fn, sample, _ = UNARY[name]
    x = F64(sample(()))
    for f in (pb.grad(fn), pb.grad(pb.grad(fn))):
        np.testing.assert_allclose(np.asarray(pb.jit(f)(x)), np.asarray(f(x)), rtol=1e-12)


def test_zero_derivative_ops_give_symbolic_zero_tangents():
    x = off_grid((4,))
    for fn in (lax.floor, lax.ceil, lax.trunc, lax.round, lax.sign):
        out, t = pb.jvp(fn, (x,), (np.ones_like(x),))
        assert np.asarray(t).dtype == np.float64 and not np.asarray(t).any()
        # nothing is computed from the tangent: it is known to be zero (and only materialized
        # at the end, by a broadcast)
        jaxpr = pb.make_jaxpr(lambda x, t: pb.jvp(fn, (x,), (t,))[1])(x, x)
        assert {e.primitive.name for e in jaxpr.jaxpr.eqns} <= {fn.__name__, "broadcast_in_dim"}


def test_abs_at_zero_has_derivative_one_as_jax():
    # JAX: select(x >= 0, g, -g)
    assert float(pb.grad(lax.abs)(F64(0.0))) == 1.0
    assert float(pb.grad(lax.abs)(F64(-0.0))) == 1.0


def test_trigamma_behind_digamma_is_accurate():
    x = np.array([-3.7, -2.5, -0.9, -0.3, 0.01, 0.2, 0.5, 0.51, 1.0, 3.3, 6.49, 6.5, 50.0, 1e4])
    _, t = pb.jvp(lax.digamma, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(np.asarray(t), sp.polygamma(1, x), rtol=1e-10)
    # and its own derivative (digamma's second) against polygamma(2, x)
    d2 = pb.jvp(lambda v: pb.jvp(lax.digamma, (v,), (pb.numpy.ones_like(v),))[1], (x,),
                (np.ones_like(x),))[1]
    np.testing.assert_allclose(np.asarray(d2), sp.polygamma(2, x), rtol=1e-8)
    # reverse mode at integers, where the reflection branch (unused there) would divide by
    # sin(pi x) = 0: the discarded branch must not put NaN into the cotangent
    for v in (1.0, 2.0, 7.0):
        np.testing.assert_allclose(float(pb.grad(pb.grad(lax.digamma))(F64(v))),
                                   sp.polygamma(2, v), rtol=1e-8)


def test_float32_grads_with_loose_tolerances():
    x = RNG.uniform(0.5, 1.5, (2, 3)).astype(np.float32)
    y = RNG.uniform(0.5, 1.5, (2, 3)).astype(np.float32)
    for fn in (lax.sin, lax.exp, lax.log, lax.tanh, lax.sqrt, lax.erf):
        check_grads(fn, (x,), order=2)
    for fn in (lax.mul, lax.div, lax.pow, lax.atan2):
        check_grads(fn, (x, y), order=2)
    g = pb.grad(lax.sin)(np.float32(0.5))
    assert np.asarray(g).dtype == np.float32 and abs(float(g) - np.cos(0.5)) < 1e-6


def test_half_precision_derivatives_compute():
    for dt in (np.float16, pb.numpy.bfloat16):
        x = np.array([0.5, 1.5], dt)
        _, t = pb.jvp(lax.sin, (x,), (np.ones_like(x),))
        assert np.asarray(t).dtype == np.dtype(dt)
        np.testing.assert_allclose(np.asarray(t).astype(np.float32), np.cos([0.5, 1.5]),
                                   rtol=1e-2)


# ---------------------------------------------------------------------------------------------
# binary ops

@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_grads_order_2(name):
    fn, sample, _ = BINARY[name]
    check_grads(fn, sample((2, 3)), order=2)
    check_grads(fn, tuple(F64(v) for v in sample(())), order=2)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_partials_match_formulas(name):
    fn, sample, (dx, dy) = BINARY[name]
    x, y = sample((7,))
    one = np.ones_like(x)
    np.testing.assert_allclose(np.asarray(pb.jvp(fn, (x, y), (one, 0 * one))[1]), dx(x, y),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(pb.jvp(fn, (x, y), (0 * one, one))[1]), dy(x, y),
                               rtol=1e-9, atol=1e-12)
    gx, gy = pb.vjp(fn, x, y)[1](one)
    np.testing.assert_allclose(np.asarray(gx), dx(x, y), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), dy(x, y), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_jit_of_grad_equals_grad(name):
    fn, sample, _ = BINARY[name]
    args = tuple(F64(v) for v in sample(()))
    for f in (pb.grad(fn, argnums=(0, 1)), pb.grad(pb.grad(fn, argnums=1), argnums=0)):
        np.testing.assert_allclose(np.asarray(pb.jit(f)(*args)), np.asarray(f(*args)),
                                   rtol=1e-12)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "atan2", "max", "rem"])
def test_binary_with_a_0d_operand(name):
    fn, sample, _ = BINARY[name]
    x, y = sample((2, 3))
    check_grads(fn, (F64(x[0, 0]), y), order=1)
    check_grads(fn, (x, F64(y[0, 0])), order=1)
    # a lone 0-d tangent is broadcast to the result's shape
    out, t = pb.jvp(lambda a: fn(a, y), (F64(x[0, 0]),), (F64(1.0),))
    assert np.asarray(t).shape == (2, 3)
    out, t = pb.jvp(lambda b: fn(x, b), (F64(y[0, 0]),), (F64(1.0),))
    assert np.asarray(t).shape == (2, 3)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "rem"])
def test_binary_with_a_0d_operand_second_order(name):
    _needs("reduce_sum.jvp", "reduce_sum.transpose", "broadcast_in_dim.transpose",
           "broadcast_in_dim.jvp")
    fn, sample, _ = BINARY[name]
    x, y = sample((2, 3))
    check_grads(fn, (F64(x[0, 0]), y), order=2)
    check_grads(lambda a: fn(a, y), (F64(x[0, 0]),), order=2)


def test_max_min_ties_split_the_tangent_evenly():
    x = np.array([1.0, 2.0, -3.0])
    y = np.array([1.0, 1.0, -3.0])
    for fn in (lax.max, lax.min):
        gx, gy = pb.grad(fn, argnums=(0, 1))(F64(1.0), F64(1.0))
        assert (float(gx), float(gy)) == (0.5, 0.5)
        _, t = pb.jvp(fn, (x, y), (np.full(3, 2.0), np.full(3, 4.0)))
        # ties (elements 0 and 2) take the mean of the two tangents
        np.testing.assert_array_equal(np.asarray(t), [3.0, 2.0 if fn is lax.max else 4.0, 3.0])


def test_pow_at_zero_as_jax():
    d = pb.grad(lax.pow, argnums=(0, 1))
    # d/dy = log(x) x^y with log(0) replaced by 0: zero instead of 0 * -inf = NaN
    assert float(d(F64(0.0), F64(2.5))[1]) == 0.0
    assert float(d(F64(0.0), F64(2.0))[0]) == 0.0    # 2 * 0^1
    assert float(d(F64(0.0), F64(1.0))[0]) == 1.0    # 1 * 0^0
    assert np.isnan(float(d(F64(0.0), F64(0.0))[0]))  # 0 * 0^-1, as JAX's y * x^(y - 1)
    np.testing.assert_allclose(float(d(F64(2.0), F64(3.0))[1]), np.log(2) * 8)


def test_rem_derivative_in_the_divisor_is_minus_truncated_quotient():
    d = pb.grad(lax.rem, argnums=(0, 1))
    assert [float(v) for v in d(F64(7.0), F64(2.0))] == [1.0, -3.0]
    assert [float(v) for v in d(F64(-7.0), F64(2.0))] == [1.0, 3.0]
    assert [float(v) for v in d(F64(7.5), F64(-2.0))] == [1.0, 3.0]


def test_atan2_first_operand_is_the_numerator():
    gx, gy = pb.grad(lax.atan2, argnums=(0, 1))(F64(1.0), F64(2.0))
    assert np.isclose(float(gx), 2 / 5) and np.isclose(float(gy), -1 / 5)


def test_nextafter_is_not_differentiable_as_in_jax():
    with pytest.raises(NotImplementedError, match="'nextafter' has no jvp rule.*not "
                                                  "differentiable in JAX either"):
        pb.grad(lax.nextafter)(F64(1.0), F64(2.0))
    with pytest.raises(NotImplementedError, match="nextafter"):
        pb.jvp(lambda y: lax.nextafter(F64(1.0), y), (F64(2.0),), (F64(1.0),))
    # without a tangent flowing in, it runs
    assert float(pb.grad(lambda x: x * lax.nextafter(F64(1.0), F64(2.0)))(F64(3.0))) > 1.0


def test_integer_valued_ops_give_float0_tangents():
    i = np.array([1, 2, 3], np.int32)
    out, t = pb.jvp(lambda v: lax.shift_left(v, v), (i,), (np.zeros(3, float0),))
    assert np.asarray(t).dtype == float0
    out, t = pb.jvp(lambda v: lax.integer_pow(v, 2), (i,), (np.zeros(3, float0),))
    assert np.asarray(t).dtype == float0
    # comparisons inside a differentiated function contribute nothing
    g = pb.grad(lambda x: lax.select_n(lax.gt(x, F64(0.0)), lax.neg(x), x))(F64(-2.0))
    assert float(g) == -1.0
    g = pb.grad(lambda x: lax.select_n(lax.is_finite(x), F64(0.0), lax.mul(x, x)))(F64(3.0))
    assert float(g) == 6.0


# ---------------------------------------------------------------------------------------------
# clamp, select_n

def test_clamp_grads_order_2():
    x = np.array([-2.0, -0.2, 0.3, 0.9, 2.5, 1.4])
    lo = np.array([-1.0, -1.0, -0.5, 0.0, 1.0, 1.6])  # last: x below min
    hi = np.array([1.0, 1.0, 1.0, 1.0, 2.0, 2.0])
    check_grads(lax.clamp, (lo, x, hi), order=2)
    check_grads(lambda v: lax.clamp(F64(-1.0), v, F64(1.0)), (x,), order=2)


def test_clamp_passes_the_tangent_inside_the_bounds():
    x = np.array([-2.0, 0.3, 2.5])
    lo, hi = np.full(3, -1.0), np.full(3, 1.0)
    glo, gx, ghi = pb.vjp(lax.clamp, lo, x, hi)[1](np.ones(3))
    np.testing.assert_array_equal(np.asarray(gx), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(np.asarray(glo), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(ghi), [0.0, 0.0, 1.0])
    _, t = pb.jvp(lambda lo, hi: lax.clamp(lo, x, hi), (F64(-1.0), F64(1.0)),
                  (F64(10.0), F64(100.0)))  # 0-d bounds: their tangents are broadcast
    np.testing.assert_array_equal(np.asarray(t), [10.0, 0.0, 100.0])


def test_clamp_at_its_bounds_has_zero_derivative_as_jax():
    # JAX's strict inequalities: at x == min or x == max no operand gets the tangent
    lo, hi = np.full(2, -1.0), np.full(2, 1.0)
    x = np.array([-1.0, 1.0])
    for g in pb.vjp(lax.clamp, lo, x, hi)[1](np.ones(2)):
        np.testing.assert_array_equal(np.asarray(g), [0.0, 0.0])


def test_clamp_with_0d_bounds_in_reverse_mode():
    _needs("broadcast_in_dim.transpose")
    x = np.array([-2.0, 0.3, 2.5])
    glo, gx, ghi = pb.vjp(lax.clamp, F64(-1.0), x, F64(1.0))[1](np.ones(3))
    assert float(glo) == 1.0 and float(ghi) == 1.0  # summed over the broadcast
    check_grads(lambda lo, hi: lax.clamp(lo, x, hi), (F64(-1.0), F64(1.0)), order=1)


def test_select_n_grads():
    a, b, c = (RNG.standard_normal((2, 3)) for _ in range(3))
    which = np.array([[True, False, True], [False, False, True]])
    check_grads(lambda u, v: lax.select_n(which, u, v), (a, b), order=2)
    idx = np.array([[0, 1, 2], [2, 7, -1]], np.int32)  # out of range clamps, grads follow
    check_grads(lambda u, v, w: lax.select_n(idx, u, v, w), (a, b, c), order=2)
    ga, gb, gc = pb.vjp(lambda u, v, w: lax.select_n(idx, u, v, w), a, b, c)[1](np.ones((2, 3)))
    np.testing.assert_array_equal(np.asarray(ga), [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(np.asarray(gb), [[0, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(np.asarray(gc), [[0, 0, 1], [1, 1, 0]])
    # a 0-d which selects whole cases; which itself gets a float0 cotangent
    check_grads(lambda u, v: lax.select_n(np.bool_(True), u, v), (a, b), order=2)
    gw, gu = pb.vjp(lambda w, u: lax.select_n(w, u, b), np.int32(0), a)[1](np.ones((2, 3)))
    assert np.asarray(gw).dtype == float0
    np.testing.assert_array_equal(np.asarray(gu), np.ones((2, 3)))


def test_select_n_jit_of_grad():
    def f(x):
        return lax.select_n(lax.lt(x, F64(0.0)), lax.sin(x), lax.mul(x, x))
    for x in (F64(-0.5), F64(0.7)):
        np.testing.assert_allclose(float(pb.jit(pb.grad(f))(x)), float(pb.grad(f)(x)))
        assert np.isclose(float(pb.grad(f)(x)), 2 * x if x < 0 else np.cos(x))


# ---------------------------------------------------------------------------------------------
# complex: holomorphic functions (tangent f'(z) dz) and JAX's linear real/imag/conj/complex

def _complex_sample(shape):
    return RNG.uniform(0.3, 0.9, shape) + 1j * RNG.uniform(0.1, 0.5, shape)


@pytest.mark.parametrize("name", HOLOMORPHIC)
def test_holomorphic_grads_order_2(name):
    fn = UNARY[name][0]
    z = _complex_sample((2, 3))
    check_grads(fn, (z,), order=2)
    # holomorphic: the tangent is C-linear, f'(z) * dz
    one = np.ones_like(z)
    _, t1 = pb.jvp(fn, (z,), (one,))
    _, ti = pb.jvp(fn, (z,), (1j * one,))
    np.testing.assert_allclose(np.asarray(ti), 1j * np.asarray(t1), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(pb.grad(lambda v: fn(v), holomorphic=True)(z[0, 0])),
                               np.asarray(t1)[0, 0], rtol=1e-12)


@pytest.mark.parametrize("fn,deriv", [(lax.exp, np.exp), (lax.log, lambda z: 1 / z),
                                      (lax.sin, np.cos), (lax.sqrt, lambda z: 0.5 / np.sqrt(z)),
                                      (lax.tanh, lambda z: 1 / np.cosh(z) ** 2)])
def test_holomorphic_derivative_formula(fn, deriv):
    z = _complex_sample((5,))
    t = RNG.standard_normal(5) + 1j * RNG.standard_normal(5)
    np.testing.assert_allclose(np.asarray(pb.jvp(fn, (z,), (t,))[1]), deriv(z) * t, rtol=1e-12)


@pytest.mark.parametrize("fn", [lax.add, lax.sub, lax.mul, lax.div, lax.pow])
def test_complex_binary_grads_order_2(fn):
    check_grads(fn, (_complex_sample((2, 3)), _complex_sample((2, 3))), order=2)


@pytest.mark.parametrize("fn", [lax.abs, lax.real, lax.imag, lax.conj])
def test_non_holomorphic_complex_grads_order_2(fn):
    check_grads(fn, (_complex_sample((2, 3)),), order=2)


def test_complex_sign_has_zero_derivative_as_jax():
    # JAX declares sign's derivative zero for every dtype (defjvp_zero), although z / |z| varies
    # along the unit circle; pullback keeps JAX's convention
    z = _complex_sample((3,))
    _, t = pb.jvp(lax.sign, (z,), (np.ones_like(z),))
    assert np.asarray(t).dtype == np.complex128 and not np.asarray(t).any()


def test_complex_transposes_are_jaxs():
    z = np.complex128(3 + 4j)
    ct = np.float64(1.0)
    assert complex(pb.vjp(lax.abs, z)[1](ct)[0]) == pytest.approx(0.6 - 0.8j)
    assert complex(pb.vjp(lax.real, z)[1](ct)[0]) == 1 + 0j          # complex(ct, 0)
    assert complex(pb.vjp(lax.imag, z)[1](ct)[0]) == -1j             # complex(0, -ct)
    c = np.complex128(2 - 5j)
    assert complex(pb.vjp(lax.conj, z)[1](c)[0]) == 2 + 5j           # conj(ct)
    (g,) = pb.vjp(lax.conj, F64(1.5))[1](c)                         # real input: real(ct)
    assert np.asarray(g).dtype == np.float64 and float(g) == 2.0
    gx, gy = pb.vjp(lax.complex, F64(1.0), F64(2.0))[1](c)
    assert (float(gx), float(gy)) == (2.0, 5.0)                      # (real(ct), -imag(ct))
    # abs at 0: zero (|z| replaced by 1 in conj(z) / |z|)
    assert complex(pb.vjp(lax.abs, np.complex128(0))[1](ct)[0]) == 0


def test_complex_constructor_grads():
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    check_grads(lax.complex, (x, y), order=2)
    check_grads(lambda a, b: lax.abs(lax.complex(a, b)), (x, y), order=2)
    check_grads(lax.conj, (x,), order=2)


# ---------------------------------------------------------------------------------------------
# transpose rules called directly: cotangents, symbolic zeros, the operands they refuse

def _undef(shape=(3,), dtype=np.float64):
    return UndefPrimal(ShapedArray(shape, np.dtype(dtype)))


def test_transpose_rules_directly():
    ct = np.array([1.0, 2.0, 3.0])
    y = pb.Array(np.array([2.0, 4.0, 8.0]))
    (cx, none) = ew.div_p.transpose(pb.Array(ct), _undef(), y)
    assert none is None
    np.testing.assert_array_equal(np.asarray(cx), [0.5, 0.5, 0.375])
    cx, cy = ew.sub_p.transpose(pb.Array(ct), _undef(), _undef(()))
    np.testing.assert_array_equal(np.asarray(cx), ct)
    assert float(cy) == -6.0  # summed down to the 0-d operand
    cx, cy = ew.mul_p.transpose(pb.Array(ct), y, _undef())
    assert cx is None
    np.testing.assert_array_equal(np.asarray(cy), [2.0, 8.0, 24.0])
    for p, ops in ((ew.add_p, (_undef(), _undef(()))), (ew.neg_p, (_undef(),)),
                   (ew.mul_p, (y, _undef()))):
        zs = p.transpose(Zero(ShapedArray((3,), np.dtype(np.float64))), *ops)
        assert all(z is None or type(z) is Zero for z in zs)
        assert [z.aval.shape for z in zs if z is not None] == \
            [o.aval.shape for o in ops if isinstance(o, UndefPrimal)]


def test_transpose_refuses_nonlinear_operands():
    ct = pb.Array(np.ones(3))
    with pytest.raises(ValueError, match="div: cannot transpose in operand.*'y'.*never in 'y'"):
        ew.div_p.transpose(ct, pb.Array(np.ones(3)), _undef())
    with pytest.raises(ValueError, match="mul: cannot transpose.*'x', 'y'"):
        ew.mul_p.transpose(ct, _undef(), _undef())
    with pytest.raises(ValueError, match="select_n: cannot transpose in argument 'which'"):
        ew.select_n_p.transpose(ct, _undef((3,), np.int32), pb.Array(np.ones(3)))
    with pytest.raises(NotImplementedError, match="'sin' has no transpose rule"):
        ew.sin_p.rule("transpose")


def test_linear_functions_transpose_through_jit():
    c = np.array([2.0, -1.0, 0.5])

    def f(x):
        return lax.sub(lax.div(lax.mul(x, c), F64(4.0)), lax.neg(x))
    x = RNG.standard_normal(3)
    g = pb.vjp(f, x)[1](np.ones(3))[0]
    np.testing.assert_allclose(np.asarray(g), c / 4 + 1)
    np.testing.assert_allclose(np.asarray(pb.jit(lambda v: pb.vjp(f, v)[1](np.ones(3))[0])(x)),
                               c / 4 + 1)


# ---------------------------------------------------------------------------------------------
# vmap: every primitive, its dtypes and 0-d operands

def _f(*shape):
    return RNG.uniform(0.3, 0.9, shape)


def _i(dtype, *shape, lo=0, hi=9):
    return RNG.integers(lo, hi, shape).astype(dtype)


VMAP_CASES = {}
for _n, (_fn, _s, _) in UNARY.items():
    VMAP_CASES[_n] = (_fn, [(_s((2, 3)),), (F64(_s(())),)])
for _n, (_fn, _s, _) in BINARY.items():
    _x, _y = _s((2, 3))
    VMAP_CASES[_n] = (_fn, [(_x, _y), (F64(_x[0, 0]), _y), (F64(_x[0, 0]), F64(_y[0, 0]))])
VMAP_CASES["add_int"] = (lax.add, [(_i(np.int32, 2, 3), _i(np.int32, 2, 3))])
VMAP_CASES["max_bool"] = (lax.max, [(_i(bool, 4, hi=2), _i(bool, 4, hi=2))])
VMAP_CASES["abs_int"] = (lax.abs, [(_i(np.int8, 4, lo=-9),)])
VMAP_CASES.update({
    "nextafter": (lax.nextafter, [(_f(2, 3), _f(2, 3)), (_f(2, 3), F64(0.5))]),
    "complex": (lax.complex, [(_f(2, 3), _f(2, 3)), (F64(0.5), _f(3))]),
    "real": (lax.real, [(_complex_sample((2, 3)),)]),
    "imag": (lax.imag, [(_complex_sample((2, 3)),), (np.complex128(1 + 2j),)]),
    "conj": (lax.conj, [(_complex_sample((2, 3)),), (_f(3),)]),
    "and": (lax.bitwise_and, [(_i(np.uint8, 2, 3, hi=255), _i(np.uint8, 2, 3, hi=255)),
                              (_i(bool, 4, hi=2), np.bool_(True))]),
    "or": (lax.bitwise_or, [(_i(np.int16, 4), _i(np.int16, 4))]),
    "xor": (lax.bitwise_xor, [(_i(np.int64, 4), np.int64(5))]),
    "not": (lax.bitwise_not, [(_i(np.uint32, 2, 3),), (_i(bool, 3, hi=2),)]),
    "shift_left": (lax.shift_left, [(_i(np.int32, 2, 3), _i(np.int32, 2, 3, hi=40))]),
    "shift_right_logical": (lax.shift_right_logical,
                            [(_i(np.int32, 4, lo=-99), _i(np.int32, 4, hi=33))]),
    "shift_right_arithmetic": (lax.shift_right_arithmetic,
                               [(_i(np.int8, 4, lo=-99, hi=99), np.int8(2))]),
    "eq": (lax.eq, [(_i(np.int32, 5, hi=3), _i(np.int32, 5, hi=3))]),
    "ne": (lax.ne, [(_f(4), F64(0.5))]),
    "lt": (lax.lt, [(_f(2, 3), _f(2, 3))]),
    "le": (lax.le, [(_i(np.uint16, 5, hi=3), _i(np.uint16, 5, hi=3))]),
    "gt": (lax.gt, [(F64(0.5), _f(4))]),
    "ge": (lax.ge, [(_i(bool, 4, hi=2), _i(bool, 4, hi=2))]),
    "is_finite": (lax.is_finite, [(np.array([1.0, np.inf, np.nan, -2.0], np.float32),)]),
    "population_count": (lax.population_count, [(_i(np.uint64, 2, 3, hi=10 ** 9),)]),
    "clz": (lax.clz, [(_i(np.int32, 2, 3, hi=10 ** 6),), (np.int32(7),)]),
    "gcd": (pb.numpy.gcd, [(_i(np.int32, 2, 3, lo=-30, hi=30), _i(np.int32, 2, 3, hi=30)),
                           (np.int32(12), _i(np.int64, 4, hi=40).astype(np.int32))]),
    "lcm": (pb.numpy.lcm, [(_i(np.uint16, 2, 3, hi=30), _i(np.uint16, 2, 3, hi=30)),
                           (_i(np.int8, 4, lo=-9), np.int8(6))]),
    "reduce_precision_half": (lambda x: lax.reduce_precision(x, 5, 10),
                              [(_f(2, 3),), (np.float32(0.3),)]),
    "clamp": (lax.clamp, [(F64(0.4), _f(2, 3), F64(0.6)), (_f(3) - 0.3, _f(3), _f(3) + 0.3),
                          (F64(0.4), F64(0.5), F64(0.6)),
                          (np.int32(2), _i(np.int32, 5), np.int32(6))]),
    "select_n": (lax.select_n, [(_i(bool, 2, 3, hi=2), _f(2, 3), _f(2, 3)),
                                (_i(np.int32, 4, hi=3), _f(4), _f(4), _f(4)),
                                (np.bool_(True), _f(2, 3), _f(2, 3)),
                                (np.int32(1), F64(0.5), F64(0.25)),
                                (_i(bool, 4, hi=2), _i(np.int8, 4), _i(np.int8, 4))]),
    "empty": (lax.mul, [(np.zeros((0, 3)), np.zeros((0, 3)))]),
})


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap(name):
    fn, arg_sets = VMAP_CASES[name]
    for args in arg_sets:
        check_vmap(fn, args)


@pytest.mark.parametrize("fn,args", [
    (lax.max, (F64(0.5), F64(0.5))),
    (lax.pow, (F64(1.5), F64(0.7))),
    (lax.rem, (F64(2.3), F64(0.7))),
    (lambda lo, x, hi: lax.clamp(lo, x, hi), (F64(0.2), F64(0.5), F64(0.9))),
    (lambda w, a, b: lax.select_n(w, a, b), (np.bool_(True), F64(0.3), F64(0.6))),
    (lax.digamma, (F64(0.7),)),
    (lax.abs, (F64(-0.7),)),
], ids=["max", "pow", "rem", "clamp", "select_n", "digamma", "abs"])
def test_vmap_of_derivatives(fn, args):
    nums = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    check_vmap(pb.grad(fn, argnums=nums), args)
    def tangent(v):
        return pb.numpy.ones_like(v) if v.dtype.kind == "f" else np.zeros(v.shape, float0)
    check_vmap(lambda *a: pb.jvp(fn, a, tuple(tangent(v) for v in a))[1], args)


@pytest.mark.parametrize("fn", [lax.real, lax.imag, lax.conj, lax.exp, lax.abs])
def test_vmap_of_complex_operands(fn):
    # check_vmap perturbs complex examples through float64 (dropping their imaginary parts),
    # so complex batches are also checked here, lane by lane
    z = _complex_sample((4, 3))
    got = pb.vmap(fn, in_axes=1)(z)
    want = np.stack([np.asarray(fn(z[:, i])) for i in range(3)])
    np.testing.assert_array_equal(np.asarray(got), want)
    got = pb.vmap(lambda a, b: lax.mul(fn(a), b), in_axes=(0, None))(z, fn(z[0]))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(fn(z)) * np.asarray(fn(z[0])))


# ---------------------------------------------------------------------------------------------
# the derivatives on the reference backend, under jit, and ties found by hypothesis

def _composite(x, y):
    """Many rules in one program: a real scalar from two real operands."""
    z = lax.complex(lax.sin(x), lax.max(x, y))
    a = lax.abs(lax.mul(z, lax.exp(lax.conj(z))))
    b = lax.clamp(F64(-0.5), lax.tanh(lax.sub(x, y)), F64(0.5))
    c = lax.select_n(lax.gt(x, y), lax.pow(lax.abs(y), x), lax.digamma(lax.add(x, F64(2.0))))
    return lax.add(lax.add(a, b), lax.add(c, lax.rem(lax.imag(z), F64(0.37))))


@pytest.mark.parametrize("x,y", [(0.7, 0.4), (0.2, 0.9), (0.5, 0.5)])
def test_composite_on_every_path(x, y):
    x, y = F64(x), F64(y)
    d = pb.grad(_composite, argnums=(0, 1))
    d2 = pb.grad(pb.grad(_composite), argnums=(0, 1))
    want, want2 = d(x, y), d2(x, y)
    for f, w in ((d, want), (d2, want2)):
        np.testing.assert_allclose(np.asarray(pb.jit(f)(x, y)), np.asarray(w), rtol=1e-12)
    try:
        pb.config.update("backend", "reference")
        np.testing.assert_allclose(np.asarray(d(x, y)), np.asarray(want), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(d2(x, y)), np.asarray(want2), rtol=1e-12)
    finally:
        pb.config.update("backend", "cpu")
    if x != y:  # the tie is a kink: finite differences only away from it
        check_grads(_composite, (x, y), order=2)


@given(st.lists(st.sampled_from([-1.0, 0.0, 2.0]), min_size=1, max_size=6),
       st.lists(st.sampled_from([-1.0, 0.0, 2.0]), min_size=1, max_size=6))
def test_max_min_tangent_shares_with_ties(xs, ys):
    n = min(len(xs), len(ys))
    x, y = np.array(xs[:n]), np.array(ys[:n])
    tx, ty = np.arange(1.0, n + 1), 10.0 * np.arange(1.0, n + 1)
    for fn, pick in ((lax.max, np.greater), (lax.min, np.less)):
        _, t = pb.jvp(fn, (x, y), (tx, ty))
        want = np.where(x == y, (tx + ty) / 2, np.where(pick(x, y), tx, ty))
        np.testing.assert_array_equal(np.asarray(t), want)
