"""The scan hoisting pass (passes/scan_hoist.py): carry-independent products leave the loop
batched over time; carries that only accumulate products become one product after it."""
import numpy as np

import pullback as pb
from pullback import lax
from pullback.transforms.passes import hoist_scans, optimize
from pullback.tracer.staging import eval_jaxpr

rng = np.random.default_rng(0)


def rnn_like(h, xs, w, acc):
    def body(c, x):
        h, acc = c
        u = x @ w                                       # no carry: batched before the loop
        h = lax.tanh(h + u)
        acc = acc + (x.reshape(2, 1) @ h.reshape(1, 3)).T  # sums a product over time
        return (h, acc), None
    return lax.scan(body, (h, acc), xs)[0]


ARGS = [np.zeros(3, np.float32), np.zeros((4, 2), np.float32), np.zeros((2, 3), np.float32),
        np.zeros((3, 2), np.float32)]

BEFORE = """
{ lambda ; a:f32[3] b:f32[4,2] c:f32[2,3] d:f32[3,2]. let
    e:f32[3] f:f32[3,2] = scan[jaxpr={ lambda ; g:f32[2,3] h:f32[3] i:f32[3,2] j:f32[2]. let
            k:f32[3] = dot_general[dimension_numbers=(((0,), (0,)), ((), ())) precision=None preferred_element_type=None] j g
            l:f32[3] = add h k
            m:f32[3] = tanh l
            n:f32[2,1] = reshape[new_sizes=(2, 1) dimensions=None] j
            o:f32[1,3] = reshape[new_sizes=(1, 3) dimensions=None] m
            p:f32[2,3] = dot_general[dimension_numbers=(((1,), (0,)), ((), ())) precision=None preferred_element_type=None] n o
            q:f32[3,2] = transpose[permutation=(1, 0)] p
            r:f32[3,2] = add i q
          in (m, r) } num_consts=1 num_carry=2 length=4 reverse=False unroll=1] c a d b
  in (e, f) }
"""

AFTER = """
{ lambda ; a:f32[3] b:f32[4,2] c:f32[2,3] d:f32[3,2]. let
    e:f32[4,3] = dot_general[dimension_numbers=(((1,), (0,)), ((), ())) precision=None preferred_element_type=None] b c
    f:f32[3] g:f32[4,2,1] h:f32[4,1,3] = scan[jaxpr={ lambda ; i:f32[2,3] j:f32[3] k:f32[2] l:f32[3]. let
            m:f32[3] = add j l
            n:f32[3] = tanh m
            o:f32[2,1] = reshape[new_sizes=(2, 1) dimensions=None] k
            p:f32[1,3] = reshape[new_sizes=(1, 3) dimensions=None] n
          in (n, o, p) } num_consts=1 num_carry=1 length=4 reverse=False unroll=1] c a b e
    q:f32[2,3] = dot_general[dimension_numbers=(((0, 2), (0, 1)), ((), ())) precision=None preferred_element_type=None] g h
    r:f32[3,2] = transpose[permutation=(1, 0)] q
    s:f32[3,2] = add d r
  in (f, s) }
"""


def test_pinned_text():
    closed = pb.make_jaxpr(rnn_like)(*ARGS)
    assert str(closed) == BEFORE.strip()
    out = hoist_scans(closed)
    assert str(out) == AFTER.strip()
    assert str(closed) == BEFORE.strip()  # the input is not modified


def test_values_match_the_loop_within_summation_order():
    args = [rng.normal(size=a.shape).astype(np.float32) for a in ARGS]
    closed = pb.make_jaxpr(rnn_like)(*args)
    want = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    for prog in (hoist_scans(closed), optimize(closed)):
        got = eval_jaxpr(prog.jaxpr, prog.consts, *args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_accumulators_read_elsewhere_stay_in_the_loop():
    def f(acc, xs):
        def body(acc, x):
            new = acc + x.reshape(2, 1) @ x.reshape(1, 2)
            return new, acc.sum()  # the running value is observed: not a pure sum
        return lax.scan(body, acc, xs)
    closed = pb.make_jaxpr(f)(np.zeros((2, 2), np.float32), np.zeros((5, 2), np.float32))
    out = str(hoist_scans(closed))
    assert "num_carry=1" in out and "(((0," not in out  # still a carry; no sum over time
    assert "f32[5,2,2] = dot_general" in out  # (the carry-free product is batched over time)


def test_products_reading_the_carry_stay_in_the_loop():
    f = lambda h, xs, w: lax.scan(lambda h, x: (lax.tanh(h @ w + x), None), h, xs)[0]  # noqa: E731
    closed = pb.make_jaxpr(f)(np.zeros(3, np.float32), np.zeros((6, 3), np.float32),
                              np.zeros((3, 3), np.float32))
    assert hoist_scans(closed) is closed
