"""jit's Jaxpr passes: what each removes (pinned Jaxpr text before and after), that every pass
and the whole pipeline preserve the values bit for bit on random programs, and the pipeline's
contracts (no mutation, sub-jaxprs keep their signature, idempotence, size on 1000 eqns)."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pullback as pb
import pullback.numpy as jnp
from pullback import lax
from pullback.test_util import assert_bitwise_equal, reference_backend
from pullback.tracer import core
from pullback.tracer.avals import ShapedArray
from pullback.tracer.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from pullback.tracer.staging import eval_jaxpr, trace_to_jaxpr
from pullback.transforms.passes import (cse_jaxpr, dce_jaxpr, fold_constants, inline_jit_calls,
                                        optimize, simplify_jaxpr)
from pullback.transforms.passes.cse import eqn_key

F32 = np.zeros((2, 3), np.float32)
C = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5  # a captured constant
PASSES = [inline_jit_calls, simplify_jaxpr, fold_constants, cse_jaxpr, dce_jaxpr, optimize]


def trace(f, *args):
    return pb.make_jaxpr(f)(*args)


def check_pass(p, closed, before: str, after: str) -> ClosedJaxpr:
    """``closed`` prints as ``before``, ``p(closed)`` as ``after``; ``closed`` is untouched."""
    assert str(closed) == before.strip()
    out = p(closed)
    assert str(out) == after.strip()
    assert str(closed) == before.strip()
    return out


def evaluate(closed: ClosedJaxpr, *args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def assert_same_values(a: ClosedJaxpr, b: ClosedJaxpr, *args) -> None:
    got, want = evaluate(a, *args), evaluate(b, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_bitwise_equal(np.asarray(g), np.asarray(w))


# ---- inline ----

def test_inline_replaces_nested_calls_with_renamed_equations():
    inner = pb.jit(lambda a, b: lax.mul(lax.sin(a), b))
    outer = pb.jit(lambda a: lax.add(inner(a, a), 1.0))
    closed = trace(lambda x: lax.mul(outer(x), inner(x, np.float32(2.0))), F32)
    out = check_pass(inline_jit_calls, closed, """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = jit[name=<lambda> jaxpr={ lambda ; c:f32[2,3]. let
            d:f32[2,3] = jit[name=<lambda> jaxpr={ lambda ; e:f32[2,3] f:f32[2,3]. let
                    g:f32[2,3] = sin e
                    h:f32[2,3] = mul g f
                  in (h,) }] c c
            i:f32[2,3] = add d 1.0:f32[]
          in (i,) }] a
    j:f32[2,3] = jit[name=<lambda> jaxpr={ lambda ; k:f32[2,3] l:f32[]. let
            m:f32[2,3] = sin k
            n:f32[2,3] = mul m l
          in (n,) }] a 2.0:f32[]
    o:f32[2,3] = mul b j
  in (o,) }""", """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = sin a
    c:f32[2,3] = mul b a
    d:f32[2,3] = add c 1.0:f32[]
    e:f32[2,3] = sin a
    f:f32[2,3] = mul e 2.0:f32[]
    g:f32[2,3] = mul d f
  in (g,) }""")
    # the callee inlined twice defines fresh variables each time
    defined = [v for e in out.eqns for v in e.outvars]
    assert len(set(map(id, defined))) == len(defined)
    assert_same_values(out, closed, C)


def test_inline_moves_callee_constants_and_maps_outputs_to_inputs_and_literals():
    from pullback.transforms.jit import jit_p
    # a callee that still has a constant (not closure-converted), returning its input and a
    # literal directly
    callee = trace(lambda a: (a, lax.add(a, jnp.asarray(C)), np.float32(3.0)), F32)
    assert len(callee.consts) == 1
    x = Var(ShapedArray((2, 3), np.dtype(np.float32)))
    outs = [Var(a) for a in callee.out_avals]
    closed = ClosedJaxpr(Jaxpr([], [x], [Eqn(jit_p, [x], {"name": "g", "jaxpr": callee}, outs)],
                               outs), [])
    out = inline_jit_calls(closed)
    assert str(out) == ("{ lambda a:f32[2,3]; b:f32[2,3]. let c:f32[2,3] = add b a "
                        "in (b, c, 3.0:f32[]) }")
    assert out.consts[0] is callee.consts[0] and closed.consts == []
    assert_same_values(out, closed, F32 + 1)


def test_inline_keeps_a_call_whose_argument_differs_in_weak_type():
    from pullback.transforms.jit import jit_p
    callee = trace(lambda a: lax.neg(a), np.float32(0))
    weak_one = Literal(pb.Array(np.asarray(1.0, np.float32), weak_type=True),
                       ShapedArray((), np.dtype(np.float32), True))
    out = Var(callee.out_avals[0])
    closed = ClosedJaxpr(Jaxpr([], [], [Eqn(jit_p, [weak_one], {"name": "g", "jaxpr": callee},
                                            [out])], [out]), [])
    assert inline_jit_calls(closed) is closed


# ---- dce ----

def test_dce_drops_dead_equations_and_unused_constants_but_keeps_multi_result_eqns_whole():
    def f(x):
        lax.mul(lax.exp(x), jnp.asarray(C))  # dead, with a constant
        v, _ = lax.top_k(x, 2)  # the indices are unused: top_k stays whole
        return lax.mul(v, np.float32(2.0)), x

    check_pass(dce_jaxpr, trace(f, F32), """
{ lambda a:f32[2,3]; b:f32[2,3]. let
    c:f32[2,3] = exp b
    d:f32[2,3] = mul c a
    e:f32[2,2] f:i32[2,2] = top_k[k=2 axis=1] b
    g:f32[2,2] = mul e 2.0:f32[]
  in (g, b) }""", """
{ lambda ; a:f32[2,3]. let
    b:f32[2,2] c:i32[2,2] = top_k[k=2 axis=1] a
    d:f32[2,2] = mul b 2.0:f32[]
  in (d, a) }""")


def test_dce_keeps_unused_inputs_and_returns_live_programs_unchanged():
    closed = trace(lambda x, y: lax.sin(x), F32, F32)
    assert dce_jaxpr(closed) is closed
    assert len(closed.jaxpr.invars) == 2


# ---- cse ----

def test_cse_merges_equal_equations_only():
    def f(x):
        k = pb.random.PRNGKey(0)
        bits = lax.bitwise_xor(pb.random.bits(k, (2,)), pb.random.bits(k, (2,)))
        return (lax.add(lax.sin(x), lax.sin(x)),
                lax.add(x, 0.0), lax.add(x, -0.0), lax.add(x, 0.0),  # literals: by bits
                lax.transpose(x, (1, 0)), lax.transpose(x, (1, 0)),
                lax.reshape(x, (3, 2)), lax.reshape(x, (3, 2), (1, 0)),  # params differ
                bits)

    out = check_pass(cse_jaxpr, trace(f, F32), """
{ lambda ; a:f32[2,3]. let
    b:u32[2] = random_seed 0:i32[]
    c:u32[2] = random_bits[bit_width=32 shape=(2,)] b
    d:u32[2] = random_bits[bit_width=32 shape=(2,)] b
    e:u32[2] = xor c d
    f:f32[2,3] = sin a
    g:f32[2,3] = sin a
    h:f32[2,3] = add f g
    i:f32[2,3] = add a 0.0:f32[]
    j:f32[2,3] = add a -0.0:f32[]
    k:f32[2,3] = add a 0.0:f32[]
    l:f32[3,2] = transpose[permutation=(1, 0)] a
    m:f32[3,2] = transpose[permutation=(1, 0)] a
    n:f32[3,2] = reshape[new_sizes=(3, 2) dimensions=None] a
    o:f32[3,2] = reshape[new_sizes=(3, 2) dimensions=(1, 0)] a
  in (h, i, j, k, l, m, n, o, e) }""", """
{ lambda ; a:f32[2,3]. let
    b:u32[2] = random_seed 0:i32[]
    c:u32[2] = random_bits[bit_width=32 shape=(2,)] b
    d:u32[2] = xor c c
    e:f32[2,3] = sin a
    f:f32[2,3] = add e e
    g:f32[2,3] = add a 0.0:f32[]
    h:f32[2,3] = add a -0.0:f32[]
    i:f32[3,2] = transpose[permutation=(1, 0)] a
    j:f32[3,2] = reshape[new_sizes=(3, 2) dimensions=None] a
    k:f32[3,2] = reshape[new_sizes=(3, 2) dimensions=(1, 0)] a
  in (f, g, h, g, i, i, j, k, d) }""")
    assert_same_values(out, trace(f, F32), np.float32([[-0.0, 0.0, 1], [2, -3, np.nan]]))


def test_cse_param_keys_are_exact():
    prim = core.Primitive.registry["reshape"]
    x = Var(ShapedArray((2,), np.dtype(np.float32)))
    closed = trace(lambda a: a, F32)

    def key(**params):
        return eqn_key(Eqn(prim, [x], params, [Var(x.aval)]))

    assert key(a=(1, 2), b=np.dtype(np.float32)) == key(a=(1, 2), b=np.dtype(np.float32))
    assert key(a=0.0) != key(a=-0.0)
    assert key(a=1) != key(a=True) and key(a=(1,)) != key(a=(True,))
    assert key(a=np.float32(0.5)) == key(a=np.float32(0.5)) != key(a=0.5)
    assert key(a=closed) == key(a=closed)  # a Jaxpr param by identity
    assert key(a=closed) != key(a=trace(lambda a: a, F32))
    assert key(a=[1, 2]) == key(a=[1, 2]) != key(a=(1, 2))
    nan_key = key(a=float("nan"))
    assert nan_key == key(a=float("nan"))  # same bits: merging is right, not required
    lit = lambda v: Literal(np.float32(v), ShapedArray((), np.dtype(np.float32)))  # noqa: E731
    y = Var(x.aval)
    assert eqn_key(Eqn(prim, [lit(0.0)], {}, [y])) != eqn_key(Eqn(prim, [lit(-0.0)], {}, [y]))
    # a weak literal computes what a strong one does: its type shows in the output's, compared
    weak = Literal(np.float32(0.0), ShapedArray((), np.dtype(np.float32), True))
    assert eqn_key(Eqn(prim, [lit(0.0)], {}, [y])) == eqn_key(Eqn(prim, [weak], {}, [y]))
    y_weak = Var(ShapedArray((2,), np.dtype(np.float32), True))
    assert eqn_key(Eqn(prim, [weak], {}, [y])) != eqn_key(Eqn(prim, [weak], {}, [y_weak]))


# ---- fold ----

def test_fold_evaluates_small_constant_computations():
    big = np.ones((10, 10), np.float32)

    def f(x):
        s = lax.mul(lax.sin(np.float32(2.0)), np.float32(3.0))  # 0-d: a literal
        v = lax.add(lax.mul(jnp.asarray(C), np.float32(2.0)),
                    lax.broadcast_in_dim(lax.iota(np.float32, 3), (2, 3), (1,)))  # a constvar
        full = lax.broadcast_in_dim(np.float32(5.0), (2, 3), ())  # a scalar's broadcast stays
        return lax.add(lax.add(lax.mul(x, s), v), full), lax.mul(jnp.asarray(big), 2.0)  # big

    closed = trace(f, F32)
    out = check_pass(fold_constants, closed, """
{ lambda a:f32[2,3] b:f32[10,10]; c:f32[2,3]. let
    d:f32[] = sin 2.0:f32[]
    e:f32[] = mul d 3.0:f32[]
    f:f32[2,3] = mul a 2.0:f32[]
    g:f32[3] = iota[dtype=float32 shape=(3,) dimension=0]
    h:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=(1,)] g
    i:f32[2,3] = add f h
    j:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=()] 5.0:f32[]
    k:f32[2,3] = mul c e
    l:f32[2,3] = add k i
    m:f32[2,3] = add l j
    n:f32[10,10] = mul b 2.0:f32[]
  in (m, n) }""", """
{ lambda a:f32[2,3] b:f32[10,10] c:f32[2,3] d:f32[3] e:f32[2,3] f:f32[2,3]; g:f32[2,3]. let
    h:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=()] 5.0:f32[]
    i:f32[2,3] = mul g 2.7278921604156494:f32[]
    j:f32[2,3] = add i f
    k:f32[2,3] = add j h
    l:f32[10,10] = mul b 2.0:f32[]
  in (k, l) }""")
    # independently: the folded constant is 2*C + [0, 1, 2] and the literal sin(2)*3 in f32
    np.testing.assert_array_equal(np.asarray(out.consts[5]), 2 * C + np.arange(3))
    assert out.eqns[1].invars[1].val == np.float32(np.sin(np.float32(2.0)) * np.float32(3.0))
    assert_same_values(out, closed, C)
    assert str(dce_jaxpr(out)).startswith("{ lambda a:f32[10,10] b:f32[2,3]; c:f32[2,3]. let")


def test_fold_handles_zero_size_arrays_multi_results_and_integer_ops():
    def f(x):
        empty = lax.mul(jnp.asarray(np.zeros((0, 3), np.float32)), np.float32(2.0))
        vals, idx = lax.top_k(jnp.asarray(np.int32([3, 9, 1, 7])), 2)  # both folded
        return lax.concatenate([x, lax.add(empty, np.float32(1.0))], 0), vals, idx

    closed = trace(f, F32)
    out = optimize(closed)
    assert str(out) == """
{ lambda a:i32[2] b:i32[2] c:f32[0,3]; d:f32[2,3]. let
    e:f32[2,3] = concatenate[dimension=0] d c
  in (e, a, b) }""".strip()
    np.testing.assert_array_equal(np.asarray(out.consts[0]), [9, 7])
    np.testing.assert_array_equal(np.asarray(out.consts[1]), [1, 3])
    assert_same_values(out, closed, C)


def test_fold_inside_a_trace_evaluates_instead_of_staging():
    closed = trace(lambda x: lax.add(x, lax.exp(np.float32(0.0))), F32)
    seen = []

    def g(x):  # the compiler may optimize while an outer trace is active
        seen.append(optimize(closed))
        return lax.neg(x)

    outer = trace(g, F32)
    assert str(outer) == "{ lambda ; a:f32[2,3]. let b:f32[2,3] = neg a in (b,) }"
    assert str(seen[0]) == "{ lambda ; a:f32[2,3]. let b:f32[2,3] = add a 1.0:f32[] in (b,) }"


def test_fold_does_not_fold_traced_constants():
    def outer(y):
        # y is a tracer of the outer trace: inside, a constvar with no value yet
        inner, _ = trace_to_jaxpr(lambda x: lax.add(x, lax.mul(y, np.float32(2.0))),
                                  [ShapedArray((2, 3), np.dtype(np.float32))])
        assert len(inner.consts) == 1 and isinstance(inner.consts[0], core.Tracer)
        assert fold_constants(inner) is inner
        return y

    trace(outer, F32)


def test_fold_under_the_reference_backend_gives_the_same_program():
    closed = trace(lambda x: lax.add(x, lax.mul(jnp.asarray(np.int32([1, 2])), 3)),
                   np.int32([0, 0]))
    with reference_backend():
        ref = optimize(closed)
    cpu = optimize(closed)
    assert str(ref) == str(cpu)
    np.testing.assert_array_equal(np.asarray(ref.consts[0]), [3, 6])
    assert_bitwise_equal(np.asarray(ref.consts[0]), np.asarray(cpu.consts[0]))


# ---- simplify ----

def test_simplify_removes_identities_double_negations_and_movement_chains():
    def f(x):
        a = lax.add(lax.mul(x, 1.0), -0.0)
        b = lax.div(lax.sub(lax.mul(1.0, a), 0.0), 1.0)
        c = lax.neg(lax.neg(b))
        d = lax.transpose(lax.transpose(c, (1, 0)), (1, 0))
        e = lax.transpose(lax.transpose(lax.expand_dims(d, (0,)), (1, 0, 2)), (0, 2, 1))
        g = lax.reshape(lax.reshape(lax.reshape(e, (3, 2)), (6,)), (1, 6))
        h = lax.squeeze(lax.expand_dims(g, (0,)), (0,))
        return lax.convert_element_type(h, np.float32), lax.convert_element_type(h, np.float16)

    closed = trace(f, F32)
    out = check_pass(simplify_jaxpr, closed, """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = mul a 1.0:f32[]
    c:f32[2,3] = add b -0.0:f32[]
    d:f32[2,3] = mul 1.0:f32[] c
    e:f32[2,3] = sub d 0.0:f32[]
    f:f32[2,3] = div e 1.0:f32[]
    g:f32[2,3] = neg f
    h:f32[2,3] = neg g
    i:f32[3,2] = transpose[permutation=(1, 0)] h
    j:f32[2,3] = transpose[permutation=(1, 0)] i
    k:f32[1,2,3] = broadcast_in_dim[shape=(1, 2, 3) broadcast_dimensions=(1, 2)] j
    l:f32[2,1,3] = transpose[permutation=(1, 0, 2)] k
    m:f32[2,3,1] = transpose[permutation=(0, 2, 1)] l
    n:f32[3,2] = reshape[new_sizes=(3, 2) dimensions=None] m
    o:f32[6] = reshape[new_sizes=(6,) dimensions=None] n
    p:f32[1,6] = reshape[new_sizes=(1, 6) dimensions=None] o
    q:f32[1,1,6] = broadcast_in_dim[shape=(1, 1, 6) broadcast_dimensions=(1, 2)] p
    r:f32[1,6] = squeeze[dimensions=(0,)] q
    s:f32[1,6] = convert_element_type[new_dtype=float32 weak_type=False] r
    t:f16[1,6] = convert_element_type[new_dtype=float16 weak_type=False] r
  in (s, t) }""", """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = neg a
    c:f32[3,2] = transpose[permutation=(1, 0)] a
    d:f32[1,2,3] = broadcast_in_dim[shape=(1, 2, 3) broadcast_dimensions=(1, 2)] a
    e:f32[2,1,3] = transpose[permutation=(1, 0, 2)] d
    f:f32[2,3,1] = transpose[permutation=(1, 2, 0)] d
    g:f32[3,2] = reshape[new_sizes=(3, 2) dimensions=None] f
    h:f32[6] = reshape[new_sizes=(6,) dimensions=None] f
    i:f32[1,6] = reshape[new_sizes=(1, 6) dimensions=None] f
    j:f32[1,1,6] = reshape[new_sizes=(1, 1, 6) dimensions=None] f
    k:f32[1,6] = reshape[new_sizes=(1, 6) dimensions=None] f
    l:f16[1,6] = convert_element_type[new_dtype=float16 weak_type=False] k
  in (k, l) }""")
    assert_same_values(out, closed, C)
    assert str(dce_jaxpr(out)) == """
{ lambda ; a:f32[2,3]. let
    b:f32[1,2,3] = broadcast_in_dim[shape=(1, 2, 3) broadcast_dimensions=(1, 2)] a
    c:f32[2,3,1] = transpose[permutation=(1, 2, 0)] b
    d:f32[1,6] = reshape[new_sizes=(1, 6) dimensions=None] c
    e:f16[1,6] = convert_element_type[new_dtype=float16 weak_type=False] d
  in (d, e) }""".strip()


def test_simplify_drops_integer_pow_by_one_only():
    def f(x):
        return lax.integer_pow(x, 1) + lax.integer_pow(x, 2) + lax.integer_pow(x, 0)

    closed = trace(f, F32)
    out = simplify_jaxpr(closed)
    text = str(out)
    assert "y=1" not in text and "integer_pow[y=2]" in text and "integer_pow[y=0]" in text
    assert_same_values(out, closed, C)


def test_simplify_keeps_what_is_not_exact():
    def f(x, z, i):
        return (lax.add(x, 0.0),  # -0.0 + 0.0 is +0.0
                lax.add(0.0, x),
                lax.sub(x, -0.0),  # x - -0.0 = x + 0.0
                lax.mul(z, 1.0), lax.div(z, 1.0),  # complex: inf * (1 + 0j) has a nan part
                lax.add(z, -0.0),  # (-0.0 + 0j) has a +0.0 imaginary part
                lax.add(i, 0), lax.sub(0, i), lax.mul(i, 2))

    closed = trace(f, F32, F32.astype(np.complex64), np.int32(0))
    out = check_pass(simplify_jaxpr, closed, """
{ lambda ; a:f32[2,3] b:c64[2,3] c:i32[]. let
    d:f32[2,3] = add a 0.0:f32[]
    e:f32[2,3] = add 0.0:f32[] a
    f:f32[2,3] = sub a -0.0:f32[]
    g:c64[2,3] = mul b (1+0j):c64[]
    h:c64[2,3] = div b (1+0j):c64[]
    i:c64[2,3] = add b (-0+0j):c64[]
    j:i32[] = add c 0:i32[]
    k:i32[] = sub 0:i32[] c
    l:i32[] = mul c 2:i32[]
  in (d, e, f, g, h, i, j, k, l) }""", """
{ lambda ; a:f32[2,3] b:c64[2,3] c:i32[]. let
    d:f32[2,3] = add a 0.0:f32[]
    e:f32[2,3] = add 0.0:f32[] a
    f:f32[2,3] = sub a -0.0:f32[]
    g:c64[2,3] = mul b (1+0j):c64[]
    h:c64[2,3] = div b (1+0j):c64[]
    i:c64[2,3] = add b (-0+0j):c64[]
    j:i32[] = sub 0:i32[] c
    k:i32[] = mul c 2:i32[]
  in (d, e, f, g, h, i, c, j, k) }""")
    # the reasons, checked on the kernels: these really differ from the operand
    x = np.float32([[-0.0, 1, 2], [3, 4, 5]])
    z = np.complex64([[complex(np.inf, 0), -0.0, 1], [2, 3, 4]])
    got = evaluate(out, x, z, np.int32(5))
    assert not np.signbit(np.asarray(got[0])[0, 0]) and not np.signbit(np.asarray(got[2])[0, 0])
    assert np.isnan(np.asarray(got[3])[0, 0].imag)
    assert_same_values(out, closed, x, z, np.int32(5))


@pytest.mark.x32
def test_simplify_only_replaces_values_of_the_same_aval():
    def f(s, w, x):
        one = lax.broadcast_in_dim(np.float32(1.0), (2, 3), ())
        return (lax.mul(s, one),  # 0-d s times a (2,3) one: the shape would change
                lax.mul(w, 1.0),  # weak w times a weak one: weak, kept exactly
                lax.mul(x, one), lax.mul(s, np.float32(1.0)))  # strong one: s is strong

    closed = trace(f, np.float32(0), 0.0, F32)
    out = check_pass(simplify_jaxpr, closed, """
{ lambda ; a:f32[] b:f32[] c:f32[2,3]. let
    d:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=()] 1.0:f32[]
    e:f32[2,3] = mul a d
    f:f32[] = mul b 1.0:f32[]
    g:f32[2,3] = mul c d
    h:f32[] = mul a 1.0:f32[]
  in (e, f, g, h) }""", """
{ lambda ; a:f32[] b:f32[] c:f32[2,3]. let
    d:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=()] 1.0:f32[]
    e:f32[2,3] = mul a d
  in (e, b, c, a) }""")
    assert closed.jaxpr.invars[1].aval.weak_type and out.jaxpr.outvars[1].aval.weak_type
    weak_x = trace(lambda w: lax.mul(w, np.float32(1.0)), 0.0)  # weak * strong: strong
    assert simplify_jaxpr(weak_x) is weak_x
    assert_same_values(out, closed, np.float32(-0.0), np.float32(3), C)


def test_simplify_composes_broadcasts_and_broadcasts_of_reshaped_scalars():
    def f(x, v):
        a = lax.broadcast_in_dim(lax.broadcast_in_dim(v, (2, 3), (1,)), (4, 2, 3), (1, 2))
        b = lax.broadcast_in_dim(lax.reshape(np.float32(2.0), (1,)), (3,), (0,))
        return a, b, lax.broadcast_in_dim(x, (2, 3), (0, 1))

    closed = trace(f, F32, np.float32([1, 2, 3]))
    out = check_pass(optimize, closed, """
{ lambda ; a:f32[2,3] b:f32[3]. let
    c:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=(1,)] b
    d:f32[4,2,3] = broadcast_in_dim[shape=(4, 2, 3) broadcast_dimensions=(1, 2)] c
    e:f32[1] = reshape[new_sizes=(1,) dimensions=None] 2.0:f32[]
    f:f32[3] = broadcast_in_dim[shape=(3,) broadcast_dimensions=(0,)] e
    g:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=(0, 1)] a
  in (d, f, g) }""", """
{ lambda ; a:f32[2,3] b:f32[3]. let
    c:f32[4,2,3] = broadcast_in_dim[shape=(4, 2, 3) broadcast_dimensions=(2,)] b
    d:f32[3] = broadcast_in_dim[shape=(3,) broadcast_dimensions=()] 2.0:f32[]
  in (c, d, a) }""")
    assert_same_values(out, closed, C, np.float32([1, 2, 3]))


# ---- the pipeline ----

def test_optimize_runs_every_pass():
    g = pb.jit(lambda a: lax.mul(lax.sin(a), 2.0))

    def f(x):
        scale = lax.mul(lax.cos(np.float32(0.0)), np.float32(1.0))  # folds to 1.0 ...
        y = lax.mul(x, scale)  # ... so this is x
        lax.exp(y)  # dead
        return lax.add(g(y), g(lax.neg(lax.neg(x))))

    closed = trace(f, F32)
    check_pass(optimize, closed, """
{ lambda ; a:f32[2,3]. let
    b:f32[] = cos 0.0:f32[]
    c:f32[] = mul b 1.0:f32[]
    d:f32[2,3] = mul a c
    e:f32[2,3] = exp d
    f:f32[2,3] = jit[name=<lambda> jaxpr={ lambda ; g:f32[2,3]. let
            h:f32[2,3] = sin g
            i:f32[2,3] = mul h 2.0:f32[]
          in (i,) }] d
    j:f32[2,3] = neg a
    k:f32[2,3] = neg j
    l:f32[2,3] = jit[name=<lambda> jaxpr={ lambda ; g:f32[2,3]. let
            h:f32[2,3] = sin g
            i:f32[2,3] = mul h 2.0:f32[]
          in (i,) }] k
    m:f32[2,3] = add f l
  in (m,) }""", """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = sin a
    c:f32[2,3] = mul b 2.0:f32[]
    d:f32[2,3] = add c c
  in (d,) }""")


def test_optimize_does_not_mutate_its_input():
    g = pb.jit(lambda a: lax.neg(lax.neg(a)))
    closed = trace(lambda x: lax.add(g(lax.mul(x, 1.0)), lax.exp(np.float32(1.0))), F32)
    before = str(closed)
    eqns, invars = list(closed.eqns), [list(e.invars) for e in closed.eqns]
    consts = list(closed.consts)
    out = optimize(closed)
    assert str(closed) == before and str(out) != before
    assert closed.eqns == eqns and [e.invars for e in closed.eqns] == invars
    assert closed.consts == consts
    assert optimize(closed) is not closed and str(optimize(closed)) == str(out)


def test_optimize_optimizes_sub_jaxprs_keeping_their_signature():
    @pb.custom_jvp
    def h(x):
        return lax.mul(lax.neg(lax.neg(lax.sin(x))), 1.0), x

    h.defjvp(lambda p, t: (h(*p), (t[0], t[0])))
    closed = trace(lambda x: h(x)[0], F32)
    out = check_pass(optimize, closed, """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] c:f32[2,3] = custom_jvp_call[call_jaxpr={ lambda ; d:f32[2,3]. let
            e:f32[2,3] = sin d
            f:f32[2,3] = neg e
            g:f32[2,3] = neg f
            h:f32[2,3] = mul g 1.0:f32[]
          in (h, d) } jvp_flat=jvp_flat fun_flat=fun_flat num_consts=0 closure_traces=()] a
  in (b,) }""", """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] c:f32[2,3] = custom_jvp_call[call_jaxpr={ lambda ; d:f32[2,3]. let e:f32[2,3] = sin d in (e, d) } jvp_flat=jvp_flat fun_flat=fun_flat num_consts=0 closure_traces=()] a
  in (b,) }""")
    sub, old = out.eqns[0].params["call_jaxpr"], closed.eqns[0].params["call_jaxpr"]
    assert sub.jaxpr.invars == old.jaxpr.invars and sub.out_avals == old.out_avals
    assert_same_values(out, closed, C)
    # under jvp the custom rule still applies to the optimized call
    t = pb.jvp(lambda x: evaluate(out, x)[0], (C,), (np.ones_like(C),))[1]
    np.testing.assert_array_equal(np.asarray(t), np.ones_like(C))


@pytest.fixture
def switch_p():
    """A cond-like primitive with a tuple of branches, registered for one test only (the
    registry tests check every registered primitive's rules)."""
    def run(*args, branches, index):
        return evaluate(branches[index], *args)

    run.interpreted = True
    p = core.Primitive("test_passes_switch", multiple_results=True)
    p.abstract_eval = lambda *avals, branches, index: branches[index].out_avals
    p.cpu = p.reference = run
    try:
        yield p
    finally:
        del core.Primitive.registry[p.name]


def test_optimize_handles_tuples_of_shared_sub_jaxprs(switch_p):
    # a cond-like primitive: a tuple of branches; two equations share one branch tuple
    b0 = trace(lambda a: lax.add(lax.mul(a, 1.0), lax.exp(np.float32(0.0))), F32)
    b1 = trace(lambda a: lax.neg(lax.neg(lax.mul(a, jnp.asarray(C)))), F32)
    branches = (b0, b1)
    x = Var(ShapedArray((2, 3), np.dtype(np.float32)))
    o1, o2, o3 = (Var(x.aval) for _ in range(3))
    eqns = [Eqn(switch_p, [x], {"branches": branches, "index": 1}, [o1]),
            Eqn(switch_p, [x], {"branches": branches, "index": 1}, [o2]),
            Eqn(core.Primitive.registry["add"], [o1, o2], {}, [o3])]
    closed = ClosedJaxpr(Jaxpr([], [x], eqns, [o3]), [])
    out = optimize(closed)
    assert str(out) == """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = test_passes_switch[branches=({ lambda ; c:f32[2,3]. let d:f32[2,3] = add c 1.0:f32[] in (d,) }, { lambda e:f32[2,3]; f:f32[2,3]. let g:f32[2,3] = mul f e in (g,) }) index=1] a
    h:f32[2,3] = add b b
  in (h,) }""".strip()
    new = out.eqns[0].params["branches"]
    assert [b.out_avals for b in new] == [b.out_avals for b in branches]
    assert all(n.jaxpr.invars == o.jaxpr.invars for n, o in zip(new, branches))
    assert_same_values(out, closed, np.float32([[1, 2, 3], [-0.0, np.inf, np.nan]]))


def test_every_pass_accepts_literal_and_input_outvars_and_zero_size_arrays():
    def f(x, e):
        return x, np.float32(2.0), lax.mul(x, 1.0), lax.neg(lax.neg(e)), lax.sin(e)

    z = np.zeros((0, 4), np.float32)
    closed = trace(f, F32, z)
    for p in PASSES:
        out = p(closed)
        assert out.out_avals == closed.out_avals
        assert_same_values(out, closed, C, z)
    assert str(optimize(closed)) == """
{ lambda ; a:f32[2,3] b:f32[0,4]. let
    c:f32[0,4] = sin b
  in (a, 2.0:f32[], a, b, c) }""".strip()


def test_a_1000_equation_program_optimizes_to_the_expected_size():
    def f(x, y):
        for _ in range(200):
            s = lax.sin(y)  # the same every iteration: one after CSE
            x = lax.neg(lax.neg(lax.mul(x, 1.0)))  # removed
            x = lax.add(x, s)
            lax.exp(x)  # dead
        return x

    closed = trace(f, F32, F32)
    assert len(closed.eqns) == 1200
    out = optimize(closed)
    assert len(out.eqns) == 201
    assert [e.primitive.name for e in out.eqns[:3]] == ["sin", "add", "add"]
    assert_same_values(out, closed, C, C * 0.5)


# ---- random programs: every pass preserves the values bit for bit ----

_LITS = (0.0, -0.0, 1.0, 2.0, -1.5)
_SHAPES = ((6,), (2, 3), (3, 2), (1, 6), (6, 1), (1, 2, 3))
_OPS = ("add", "sub", "mul", "div", "neg", "unary", "transpose", "reshape", "expand",
        "squeeze", "broadcast", "convert", "jit", "const", "dup", "zeros")
_INNER = pb.jit(lambda a: lax.neg(lax.mul(a, 1.0)))
_CALL = pb.jit(lambda a, b: lax.add(_INNER(a), lax.mul(b, b)))


def _random_program(steps, dtype):
    """A function of two (2,3) arrays: each step applies one op to earlier values (or
    repeats an earlier step on the same operands, for CSE); most values end up dead."""
    inexact = np.dtype(dtype).kind in "fc"

    def apply(pool, op, i, j, k):
        a, b = pool[i], pool[j]
        lit = np.asarray(_LITS[k // 3 % len(_LITS)]).astype(dtype).item()
        if op in ("add", "sub", "mul", "div"):
            fn = getattr(lax, op)
            if b.shape == a.shape and k % 3 == 0:
                return fn(a, b)
            return fn(a, lit) if k % 3 == 1 else fn(lit, a)
        if op == "zeros":  # x*0.0 + x*-0.0 is -0.0 + 0.0 = +0.0 for negative x: no merging
            return lax.add(lax.mul(a, 0.0), lax.mul(a, -0.0))
        if op == "neg" or (op == "unary" and not inexact):
            return lax.neg(a)
        if op == "unary":
            return (lax.exp, lax.sin)[k % 2](a)
        if a.size != 6:  # a 0-d constant: movement ops see its broadcast
            return lax.broadcast_in_dim(a, (2, 3), ())
        if op == "transpose":
            perms = list(itertools.permutations(range(a.ndim)))
            return lax.transpose(a, perms[k % len(perms)])
        if op == "reshape":
            return lax.reshape(a, _SHAPES[k % len(_SHAPES)])
        if op == "expand":
            return lax.expand_dims(a, (k % (a.ndim + 1),))
        if op == "squeeze":
            ones = tuple(d for d, n in enumerate(a.shape) if n == 1)
            return lax.squeeze(a, ones[:1]) if ones else lax.expand_dims(a, (0,))
        if op == "broadcast":  # a real broadcast of a reshaped value, sliced back to 6 elements
            rows = lax.broadcast_in_dim(lax.reshape(a, (6,)), (2, 6), (1,))
            return lax.slice(rows, (k % 2, 0), (k % 2 + 1, 6))
        if op == "convert":
            return lax.convert_element_type(a, dtype)
        if op == "jit":
            return _CALL(a, a)
        # op == "const": computations on constants only
        if k % 2:
            return lax.mul(lax.sin(np.float32(k)).astype(dtype), lit) if inexact else \
                lax.mul(jnp.asarray(np.asarray(k, dtype)), lit)
        return lax.mul(jnp.asarray(C.astype(dtype)), lit)

    def f(x, y):
        pool, done = [x, y], []
        for op, i, j, k in steps:
            if op == "dup" and done:
                op, i, j, k = done[j % len(done)]
            else:
                op = "neg" if op == "dup" else op
                # operands counted from the newest value: small numbers make chains
                i, j = len(pool) - 1 - i % len(pool), len(pool) - 1 - j % len(pool)
            done.append((op, i, j, k))
            pool.append(apply(pool, op, i, j, k))
        return pool[-1], pool[-2], pool[len(pool) // 2], x, np.asarray(2, dtype)

    return f


_special = {np.float32: [-0.0, 0.0, np.inf, -np.inf, np.nan, 1e30, -3.5, 1.0],
            np.int32: [0, -1, 1, 2**31 - 1, -2**31, 7, -7, 3],
            np.complex64: [complex(np.inf, 0), complex(-0.0, -0.0), complex(0, np.inf),
                           complex(np.nan, 1), 1 + 1j, -2.5, 0, 3j]}

programs = st.tuples(
    st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 2) | st.integers(0, 50),
                       st.integers(0, 2) | st.integers(0, 50),
                       st.integers(0, 29)), min_size=8, max_size=30),
    st.sampled_from(sorted(_special, key=lambda t: t.__name__)), st.integers(0, 2**31 - 1))


def _inputs(dtype, seed):
    rng = np.random.default_rng(seed)
    vals = np.asarray(_special[dtype], dtype)
    return [rng.choice(vals, (2, 3)) for _ in range(2)]


@pytest.mark.parametrize("p", PASSES, ids=lambda p: p.__name__)
@given(programs)
def test_passes_preserve_values_of_random_programs(p, program):
    steps, dtype, seed = program
    closed = trace(_random_program(steps, dtype), *_inputs(dtype, seed))
    before = str(closed)
    out = p(closed)
    assert str(closed) == before
    assert out.jaxpr.invars == closed.jaxpr.invars and out.out_avals == closed.out_avals
    assert len(out.eqns) <= len(inline_jit_calls(closed).eqns)
    assert_same_values(out, closed, *_inputs(dtype, seed + 1))


@given(programs)
def test_optimize_is_idempotent_and_leaves_nothing_to_remove(program):
    steps, dtype, seed = program
    out = optimize(trace(_random_program(steps, dtype), *_inputs(dtype, seed)))
    again = optimize(out)
    assert str(again) == str(out)
    for p in PASSES[:-1]:
        assert p(out) is out, p.__name__  # a fixed point of every pass
    assert not any(e.primitive.name == "jit" for e in out.eqns)


def test_bare_jaxpr_params_fold_only_to_literals(switch_p):
    # a bare Jaxpr has no constants to hold a folded array: only the 0-d fold happens
    body = trace(lambda a: lax.add(lax.add(a, lax.broadcast_in_dim(
        lax.mul(lax.iota(np.float32, 3), 2.0), (2, 3), (1,))), lax.exp(np.float32(0.0))), F32)
    assert body.consts == []
    x = Var(ShapedArray((2, 3), np.dtype(np.float32)))
    o = Var(x.aval)
    closed = ClosedJaxpr(Jaxpr([], [x], [Eqn(switch_p, [x], {"branches": (body.jaxpr,),
                                                             "index": 0}, [o])], [o]), [])
    out = optimize(closed)
    assert str(out.eqns[0].params["branches"][0]) == """
{ lambda ; a:f32[2,3]. let
    b:f32[3] = iota[dtype=float32 shape=(3,) dimension=0]
    c:f32[3] = mul b 2.0:f32[]
    d:f32[2,3] = broadcast_in_dim[shape=(2, 3) broadcast_dimensions=(1,)] c
    e:f32[2,3] = add a d
    f:f32[2,3] = add e 1.0:f32[]
  in (f,) }""".strip()
    assert str(optimize(ClosedJaxpr(body.jaxpr, []))).startswith("{ lambda a:f32[2,3]; b:f32[2,3]")
