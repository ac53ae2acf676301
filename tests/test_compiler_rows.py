"""compiler/rows.py: a scan whose batch rows never mix runs as two scans over row halves side by
side (a par step), with the same bits as the whole scan; anything that mixes rows keeps the
scan whole."""
import numpy as np
import pytest

import pullback as pb
import pullback.numpy as pnp
from pullback import lax
from pullback.backends.cpu.compiler import planner

RNG = np.random.default_rng(3)
H, T = 128, 300


def _arr(*shape, scale=1.0):
    return (scale * RNG.standard_normal(shape)).astype(np.float32)


def _rnn(wh, b, h0, xs):
    def step(h, x):
        h = pnp.tanh(h @ wh + x + b)
        return h, (1.0 - h) * (1.0 + h)
    return lax.scan(step, h0, xs)


def _args(rows):
    return _arr(H, H, scale=H ** -0.5), _arr(H, scale=0.1), _arr(rows, H), _arr(T, rows, H)


def _whole(monkeypatch, f, *args):
    with planner.disabled("row-halves"):
        g = pb.jit(f)
        assert ": par " not in g.lower(*args).compile().as_text()
        return g(*args)


def test_an_rnn_scan_runs_on_row_halves():
    args = _args(16)
    text = pb.jit(_rnn).lower(*args).compile().as_text()
    lines = text.splitlines()
    head = next(i for i, s in enumerate(lines) if ": par " in s)
    assert lines[head].endswith("par (the scan's 16 rows never mix: each thread runs it on its "
                                "own; rows 0:8, 8:16):")
    scans = [s for s in lines[head + 1:] if s.startswith("       scan[length=300]")]
    assert len(scans) == 2
    # each copy's product has 8 rows, the weight whole; the second starts 8 rows (4096 bytes) on
    products = [s for s in lines if s.strip().startswith("0: dot_general (")]
    assert len(products) == 2 and all("f32[1,8,128] strides=(8192, 512, 4), input0:f32[1,128,128]"
                                      in p for p in products)
    assert "[+0 + i0*8192]+4096:f32[8,128]" in products[1]


@pytest.mark.parametrize("rows", [16, 24, 20])
def test_row_halves_give_the_bits_of_the_whole_scan(monkeypatch, rows):
    args = _args(rows)
    got = pb.jit(_rnn)(*args)
    assert ": par " in pb.jit(_rnn).lower(*args).compile().as_text()
    want = _whole(monkeypatch, _rnn, *args)
    for g, w in zip(pb.tree_util.tree_leaves(got), pb.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    wh, b, h0, xs = (a.astype(np.float64) for a in args)
    h = h0
    for x in xs:
        h = np.tanh(h @ wh + x + b)
    np.testing.assert_allclose(np.asarray(got[0]), h, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mix", ["sum over rows", "rows flipped", "carry as the weight",
                                 "row-shaped weight"])
def test_steps_that_mix_rows_keep_the_scan_whole(mix):
    wh, b, h0, xs = _args(16)

    def f(wh, b, h0, xs):
        def step(h, x):
            if mix == "sum over rows":
                u = h @ wh + h.sum(axis=0)
            elif mix == "rows flipped":
                u = h[::-1] @ wh + x
            elif mix == "carry as the weight":
                u = h @ (wh + h[:1].T)  # the product's B operand depends on the carry
            else:
                u = (h @ wh) * h[:1]  # one row broadcast over all rows
            return pnp.tanh(u + b), None
        return lax.scan(step, h0, xs)[0]
    jf = pb.jit(f)
    assert ": par " not in jf.lower(wh, b, h0, xs).compile().as_text()
    w64, b64, h, x64 = (a.astype(np.float64) for a in (wh, b, h0, xs))
    for x in x64:
        if mix == "sum over rows":
            u = h @ w64 + h.sum(axis=0)
        elif mix == "rows flipped":
            u = h[::-1] @ w64 + x
        elif mix == "carry as the weight":
            u = h @ (w64 + h[:1].T)
        else:
            u = (h @ w64) * h[:1]
        h = np.tanh(u + b64)
    np.testing.assert_allclose(np.asarray(jf(wh, b, h0, xs)), h, rtol=1e-3, atol=1e-3)


def test_few_rows_or_little_work_keep_the_scan_whole():
    wh, b, h0, xs = _args(8)
    assert ": par " not in pb.jit(_rnn).lower(wh, b, h0, xs).compile().as_text()
    small = (_arr(8, 8), _arr(8), _arr(16, 8), _arr(10, 16, 8))
    assert ": par " not in pb.jit(_rnn).lower(*small).compile().as_text()


def test_concurrent_calls_with_row_halves(concurrently):
    args = _args(16)
    f = pb.jit(_rnn)
    want = [np.asarray(v) for v in pb.tree_util.tree_leaves(f(*args))]
    for got in concurrently(lambda: [np.asarray(v) for v in pb.tree_util.tree_leaves(f(*args))]):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
