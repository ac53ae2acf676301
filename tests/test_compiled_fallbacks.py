"""Compiled programs run natively: the programs of the benchmark suite and of the examples (the
demo's MLP step, an RNN through scan, a transformer block) compile with no step that runs through
Python objects, and such a step, where one remains, is marked in the schedule text and counted.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import backends, demo, lax
from pullback import optim
from pullback.backends.cpu.compiler import lower
from pullback.backends.cpu.compiler.values import View
from pullback.primitives.elementwise import sin_p

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import block_data, block_loss  # noqa: E402

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _benchmark_cases() -> list:
    sys.path.insert(0, str(BENCH))
    try:
        frameworks = importlib.import_module("frameworks")
        topics = importlib.import_module("topics")
        fws = frameworks.available({"pullback", "numpy"})
        cases = []
        for m in pkgutil.iter_modules(topics.__path__):
            cases.extend(importlib.import_module(f"topics.{m.name}").cases(fws))
        return cases
    finally:
        sys.path.remove(str(BENCH))


def _run_without_fallbacks(run) -> None:
    before = sum(backends.compiled_fallbacks.values())
    run()
    added = sum(backends.compiled_fallbacks.values()) - before
    assert added == 0, f"{added} fallback steps: {backends.compiled_fallbacks}"


@pytest.mark.x32
def test_benchmark_programs_have_no_fallback_steps():
    cases = _benchmark_cases()
    assert len(cases) >= 10
    for case in cases:
        impl = case.impls["pullback"]

        def run(impl=impl):
            env = dict(impl.env)
            impl.sync(eval(impl.stmt, env))
        _run_without_fallbacks(run)


@pytest.mark.x32
def test_demo_mlp_step_has_no_fallback_steps():
    rng = np.random.default_rng(0)
    x = rng.random((32, 64), dtype=np.float32)
    y = rng.integers(0, 10, 32).astype(np.int32)
    params = demo.init_mlp(pb.random.PRNGKey(0), [64, 32, 10])
    optimizer = optim.adam(1e-3)
    state = optimizer.init(params)
    step = demo.make_step(optimizer)
    _run_without_fallbacks(lambda: step(params, state, x, y))
    _run_without_fallbacks(lambda: demo.accuracy(params, x, y))


@pytest.mark.x32
def test_rnn_scan_gradient_has_no_fallback_steps():
    rng = np.random.default_rng(0)
    w = jnp.asarray(rng.normal(size=(16, 16)).astype(np.float32) * 0.3)
    xs = jnp.asarray(rng.normal(size=(20, 4, 16)).astype(np.float32))

    def loss(w, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h.sum()
        h, ys = lax.scan(cell, jnp.zeros((4, 16), jnp.float32), xs)
        return (h ** 2).sum() + ys.sum()
    _run_without_fallbacks(lambda: pb.jit(pb.value_and_grad(loss))(w, xs))


@pytest.mark.x32
def test_transformer_block_has_no_fallback_steps():
    params, x = block_data()
    _run_without_fallbacks(lambda: pb.jit(pb.value_and_grad(block_loss))(params, x))


def test_a_fallback_step_is_marked_and_counted(monkeypatch):
    # a cpu rule that computes on its operands' data in Python cannot be recorded: it becomes a
    # callback step, marked in the text and counted
    monkeypatch.setattr(sin_p, "cpu", lambda k, x: np.sin(np.asarray(x)))
    before = backends.compiled_fallbacks["sin"]
    c = pb.jit(lambda x: jnp.sin(x) * 2).lower(np.ones(3, np.float32)).compile()
    text = c.as_text()
    assert "1 fallback steps through Python (sin)" in text.splitlines()[0]
    assert "callback sin" in text and "[fallback: Python callback, GIL held]" in text
    assert backends.compiled_fallbacks["sin"] == before + 1
    np.testing.assert_allclose(c(np.ones(3, np.float32)), 2 * np.sin(np.ones(3)), rtol=1e-6)


def test_a_bug_in_a_cpu_rule_propagates(monkeypatch):
    # any exception other than the recorder's own Unsupported is a bug: it is raised, not
    # hidden in a callback step
    def broken(k, x):
        raise KeyError("oops")
    monkeypatch.setattr(sin_p, "cpu", broken)
    with pytest.raises(KeyError, match="oops"):  # at compile time, not in a callback step
        pb.jit(lambda x: jnp.sin(x) + 1).lower(np.ones(3, np.float32)).compile()


def test_reading_a_compile_time_view_is_unsupported():
    v = View.fresh((2,), np.dtype(np.float32))
    with pytest.raises(lower.Unsupported):
        np.asarray(v)
