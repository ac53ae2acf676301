"""dot_general's jvp, transpose and batching rules.

Random dimension numbers (batch, contracting and free dimensions at any positions, sizes 0-3)
are checked against einsum: the tangent is ``dot(t_lhs, rhs) + dot(lhs, t_rhs)``, each
operand's cotangent is the einsum of the output cotangent with the other operand back to the
operand's own letters, and vmap with any batch dimension on either or both operands equals a
loop. check_grads (order 2, both modes) covers the compositions.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pullback as pb
from pullback import lax
from pullback.primitives.dot import dot_general_p
from pullback.primitives.rules import UndefPrimal, Zero
from pullback.test_util import check_grads, check_vmap, check_vmap_exact
from pullback.tracer import dtypes
from pullback.tracer.avals import ShapedArray

F64 = np.float64


# ---- cases ----

@st.composite
def dot_cases(draw, max_rank=4):
    """(lhs shape, rhs shape, dimension numbers, einsum letters) with every kind of dimension
    at random positions: batch dims pair up in order, contracting dims too."""
    nb, nc, nl, nr = (draw(st.integers(0, 2)) for _ in range(4))
    if nb + nc + nl > max_rank or nb + nc + nr > max_rank:
        nl, nr = min(nl, max_rank - nb - nc), min(nr, max_rank - nb - nc)
    size = st.integers(0, 3)
    batch = [draw(size) for _ in range(nb)]
    contract = [draw(size) for _ in range(nc)]
    lfree, rfree = [draw(size) for _ in range(nl)], [draw(size) for _ in range(nr)]
    letters = iter("abcdefghijklmnop")
    b_l, c_l = [next(letters) for _ in batch], [next(letters) for _ in contract]
    lf_l, rf_l = [next(letters) for _ in lfree], [next(letters) for _ in rfree]

    def place(sizes, names):
        perm = draw(st.permutations(range(len(sizes))))
        shape, letters_, where = [0] * len(sizes), [""] * len(sizes), []
        for i, p in enumerate(perm):
            shape[p], letters_[p] = sizes[i], names[i]
            where.append(p)
        return tuple(shape), "".join(letters_), where

    lshape, ls, lw = place(batch + contract + lfree, b_l + c_l + lf_l)
    rshape, rs, rw = place(batch + contract + rfree, b_l + c_l + rf_l)
    dn = ((tuple(lw[nb:nb + nc]), tuple(rw[nb:nb + nc])), (tuple(lw[:nb]), tuple(rw[:nb])))
    out = "".join(b_l) + "".join(sorted(lf_l, key=ls.index)) + "".join(sorted(rf_l, key=rs.index))
    return lshape, rshape, dn, (ls, rs, out)


def normal(rng, shape, dtype=F64):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def dot(dn, **kw):
    return lambda x, y: lax.dot_general(x, y, dn, **kw)


# ---- jvp and transpose against einsum ----

@given(dot_cases(), st.integers(0, 2 ** 32 - 1))
def test_jvp_is_the_sum_of_both_partial_contractions(case, seed):
    lshape, rshape, dn, (ls, rs, os_) = case
    rng = np.random.default_rng(seed)
    x, y, tx, ty = (normal(rng, s) for s in (lshape, rshape, lshape, rshape))
    out, t = pb.jvp(dot(dn), (x, y), (tx, ty))
    want = np.einsum(f"{ls},{rs}->{os_}", tx, y) + np.einsum(f"{ls},{rs}->{os_}", x, ty)
    np.testing.assert_allclose(np.asarray(t), want, rtol=1e-12, atol=1e-12)
    # one tangent only: the other partial contraction
    _, t = pb.jvp(lambda a: lax.dot_general(a, y, dn), (x,), (tx,))
    np.testing.assert_allclose(np.asarray(t), np.einsum(f"{ls},{rs}->{os_}", tx, y),
                               rtol=1e-12, atol=1e-12)


@given(dot_cases(), st.integers(0, 2 ** 32 - 1))
def test_transposes_contract_the_cotangent_back_to_each_operands_layout(case, seed):
    lshape, rshape, dn, (ls, rs, os_) = case
    rng = np.random.default_rng(seed)
    x, y = normal(rng, lshape), normal(rng, rshape)
    out, pull = pb.vjp(dot(dn), x, y)
    ct = normal(rng, np.shape(out))
    gx, gy = pull(ct)
    assert np.shape(gx) == lshape and np.shape(gy) == rshape
    # einsum sums the letters missing from the output, and repeats batch letters: exactly J^T
    np.testing.assert_allclose(np.asarray(gx), np.einsum(f"{os_},{rs}->{ls}", ct, y),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), np.einsum(f"{os_},{ls}->{rs}", ct, x),
                               rtol=1e-12, atol=1e-12)


@given(dot_cases(), st.integers(0, 2 ** 32 - 1))
def test_each_operands_transpose_alone(case, seed):
    # differentiating one operand: the other is a known value in the transpose rule
    lshape, rshape, dn, (ls, rs, os_) = case
    rng = np.random.default_rng(seed)
    x, y = normal(rng, lshape, np.complex128), normal(rng, rshape, np.complex128)
    out, pull_x = pb.vjp(lambda a: lax.dot_general(a, y, dn), x)
    ct = normal(rng, np.shape(out), np.complex128)
    np.testing.assert_allclose(np.asarray(pull_x(ct)[0]), np.einsum(f"{os_},{rs}->{ls}", ct, y),
                               rtol=1e-12, atol=1e-12)
    _, pull_y = pb.vjp(lambda b: lax.dot_general(x, b, dn), y)
    np.testing.assert_allclose(np.asarray(pull_y(ct)[0]), np.einsum(f"{os_},{ls}->{rs}", ct, x),
                               rtol=1e-12, atol=1e-12)


# ---- check_grads on chosen dimension numbers ----

GRAD_CASES = [
    ((3, 4), (4, 2), (((1,), (0,)), ((), ()))),                     # matmul
    ((2, 3, 4), (2, 4, 3), (((2,), (1,)), ((0,), (0,)))),            # batched matmul
    ((3, 2, 4), (4, 3, 2), (((2, 0), (0, 1)), ((1,), (2,)))),        # two contracting, batch
    ((3,), (3,), (((0,), (0,)), ((), ()))),                          # inner product -> 0-d
    ((), (2, 3), (((), ()), ((), ()))),                              # 0-d times matrix
    ((2, 3), (3,), (((), ()), ((1,), (0,)))),                        # batch only (elementwise)
    ((0, 3), (3, 2), (((1,), (0,)), ((), ()))),                      # a 0-size free dim
    ((2, 0), (0, 2), (((1,), (0,)), ((), ()))),                      # a 0-size contraction
]


@pytest.mark.parametrize("lshape,rshape,dn", GRAD_CASES, ids=str)
def test_check_grads_order_2_float64(lshape, rshape, dn):
    rng = np.random.default_rng(0)
    x, y = normal(rng, lshape), normal(rng, rshape)
    check_grads(dot(dn), (x, y), order=2)
    check_grads(lambda a: lax.dot_general(a, y, dn), (x,), order=2)
    check_grads(lambda b: lax.dot_general(x, b, dn), (y,), order=2)


def test_check_grads_complex_and_float32():
    rng = np.random.default_rng(1)
    dn = (((1,), (0,)), ((), ()))
    x, y = normal(rng, (2, 3), np.complex128), normal(rng, (3, 2), np.complex128)
    check_grads(dot(dn), (x, y), order=2)
    x, y = normal(rng, (2, 3), np.float32), normal(rng, (3, 2), np.float32)
    check_grads(dot(dn), (x, y), order=2, atol=5e-2, rtol=5e-2)


# ---- dtypes: cotangents come back in each operand's dtype ----

@pytest.mark.parametrize("ldt,rdt,preferred", [
    (np.float32, np.float64, None),          # mixed: result float64
    (np.float32, np.float32, np.float64),    # preferred wider than the operands
    (np.float16, np.float16, np.float32),    # half operands, float32 result
    (np.float32, np.complex64, None),        # real times complex
    (np.float64, np.float64, np.float32),    # preferred narrower
])
def test_cotangents_have_the_operand_dtypes(ldt, rdt, preferred):
    rng = np.random.default_rng(2)
    dn = (((1,), (0,)), ((), ()))
    x, y = normal(rng, (2, 3), ldt), normal(rng, (3, 4), rdt)
    out, pull = pb.vjp(dot(dn, preferred_element_type=preferred), x, y)
    ct = normal(rng, np.shape(out), np.asarray(out).dtype)
    gx, gy = pull(ct)
    assert np.asarray(gx).dtype == ldt and np.asarray(gy).dtype == rdt
    wide = np.complex128
    want_x = np.einsum("ik,jk->ij", ct.astype(wide), y.astype(wide))
    want_y = np.einsum("ik,ij->jk", ct.astype(wide), x.astype(wide))
    if np.dtype(ldt).kind != "c":
        want_x = want_x.real  # a real operand's cotangent is the real part
    tol = 2e-2 if np.float16 in (ldt, rdt) else 1e-5
    np.testing.assert_allclose(np.asarray(gx), want_x, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(gy), want_y, rtol=tol, atol=tol)
    # the tangent has the result's dtype
    _, t = pb.jvp(dot(dn, preferred_element_type=preferred), (x, y), (x, y))
    assert np.asarray(t).dtype == np.asarray(out).dtype


def test_integer_operands_have_no_derivative():
    dn = (((1,), (0,)), ((), ()))
    x, y = np.arange(6, dtype=np.int32).reshape(2, 3), np.ones((3, 2), np.int32)
    zeros = (np.zeros((2, 3), dtypes.float0), np.zeros((3, 2), dtypes.float0))
    out, t = pb.jvp(dot(dn), (x, y), zeros)
    assert np.asarray(t).dtype == dtypes.float0 and np.shape(t) == (2, 2)
    # an integer lhs with a float rhs: only the rhs is differentiated
    yf = np.ones((3, 2))
    g = pb.grad(lambda b: lax.dot_general(x, b, dn).sum())(yf)
    np.testing.assert_array_equal(np.asarray(g), np.broadcast_to(x.sum(0)[:, None], (3, 2)))


def test_transpose_rule_with_zero_cotangent_and_its_errors():
    dn = (((1,), (0,)), ((), ()))
    la, ra = ShapedArray((2, 3), np.dtype(F64)), ShapedArray((3, 4), np.dtype(F64))
    y = pb.Array(np.ones((3, 4)))
    ct = Zero(ShapedArray((2, 4), np.dtype(F64)))
    gx, gy = dot_general_p.transpose(ct, UndefPrimal(la), y, dimension_numbers=dn)
    assert type(gx) is Zero and gx.aval.shape == (2, 3) and gy is None
    with pytest.raises(ValueError, match="dot_general transpose: both operands are linear"):
        dot_general_p.transpose(pb.Array(np.ones((2, 4))), UndefPrimal(la), UndefPrimal(ra),
                                dimension_numbers=dn)


def test_jit_of_grad_equals_grad():
    rng = np.random.default_rng(3)
    dn = (((2, 0), (0, 1)), ((1,), (2,)))
    x, y = normal(rng, (3, 2, 4)), normal(rng, (4, 3, 2))

    def f(a, b):
        o = lax.dot_general(a, b, dn)
        return (o * o).sum()

    g = pb.grad(f, argnums=(0, 1))
    for got, want in zip(pb.jit(g)(x, y), g(x, y)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-13)


def test_hessian_of_a_quadratic_form():
    rng = np.random.default_rng(7)
    a, x = normal(rng, (3, 3)), normal(rng, (3,))
    # x^T A x: the Hessian is A + A^T
    h = pb.hessian(lambda v: lax.dot_general(v, lax.dot_general(a, v, (((1,), (0,)), ((), ()))),
                                             (((0,), (0,)), ((), ()))))(x)
    np.testing.assert_allclose(np.asarray(h), a + a.T, rtol=1e-12)


# ---- batching ----

@given(dot_cases(max_rank=3), st.integers(0, 2 ** 32 - 1), st.data())
def test_vmap_with_any_batch_dims_equals_a_loop(case, seed, data):
    lshape, rshape, dn, _ = case
    rng = np.random.default_rng(seed)
    bl = data.draw(st.sampled_from([None] + list(range(len(lshape) + 1))), "lhs batch dim")
    br = data.draw(st.sampled_from(([None] if bl is not None else []) +
                                   list(range(len(rshape) + 1))), "rhs batch dim")
    n = 3

    def batched(shape, bdim):
        x = normal(rng, (n,) + shape)
        return x[0] if bdim is None else np.moveaxis(x, 0, bdim)

    x, y = batched(lshape, bl), batched(rshape, br)
    got = pb.vmap(dot(dn), in_axes=(bl, br))(x, y)
    xs = [x if bl is None else np.take(x, i, bl) for i in range(n)]
    ys = [y if br is None else np.take(y, i, br) for i in range(n)]
    want = np.stack([np.asarray(lax.dot_general(a, b, dn)) for a, b in zip(xs, ys)])
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lshape,rshape,dn", GRAD_CASES[:6], ids=str)
def test_check_vmap(lshape, rshape, dn):
    rng = np.random.default_rng(4)
    check_vmap(dot(dn), (normal(rng, lshape), normal(rng, rshape)))


@pytest.mark.parametrize("dt,preferred", [(np.int8, np.int32), (np.int32, None),
                                          (np.uint8, np.float32)])
def test_vmap_of_integer_contractions_is_exact(dt, preferred):
    rng = np.random.default_rng(5)
    dn = (((1,), (0,)), ((0,), (1,)))  # examples x: (2, 4, 5), y: (4, 2, 6)
    lo = -50 if np.dtype(dt).kind == "i" else 0
    xs = rng.integers(lo, 50, (3, 2, 4, 5)).astype(dt)  # different lanes
    ys = rng.integers(lo, 50, (3, 4, 2, 6)).astype(dt)
    f = dot(dn, preferred_element_type=preferred)
    for ax in range(4):
        check_vmap_exact(f, (np.moveaxis(xs, 0, ax), ys[0]), (ax, None))
        check_vmap_exact(f, (xs[0], np.moveaxis(ys, 0, ax)), (None, ax))
        check_vmap_exact(f, (np.moveaxis(xs, 0, ax), np.moveaxis(ys, 0, 3 - ax)), (ax, 3 - ax))


def test_vmap_of_grad_and_grad_of_vmap():
    rng = np.random.default_rng(6)
    dn = (((1,), (0,)), ((), ()))
    xs, y = normal(rng, (3, 2, 4)), normal(rng, (4, 5))

    def f(a, b):
        o = lax.dot_general(a, b, dn)
        return (o * o).sum()

    got = pb.vmap(pb.grad(f), in_axes=(0, None))(xs, y)
    want = np.stack([np.asarray(pb.grad(f)(x, y)) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    g = pb.grad(lambda b: pb.vmap(f, in_axes=(0, None))(xs, b).sum())(y)
    want = sum(np.asarray(pb.grad(f, argnums=1)(x, y)) for x in xs)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12)
