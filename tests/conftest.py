"""Test configuration: hypothesis profiles, and a guard that the C extension is built."""
import os

from hypothesis import HealthCheck, settings

# "ci" keeps the whole suite well inside CI's time on two cores; "dev" explores more.
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

import pullback.backends.cpu.kernels  # noqa: E402,F401  (fails loudly on an unbuilt tree)
import pytest  # noqa: E402

from pullback.config import enable_x64  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "x32: runs with jax_enable_x64 off, JAX's default mode "
                            "(32-bit defaults; 64-bit data and requests narrowed)")
    config.addinivalue_line("markers", "x64: runs with jax_enable_x64 on (the default here; "
                            "overrides a module's x32 mark)")


@pytest.fixture(autouse=True)
def _x64_mode(request):
    """As JAX's own suite, the tests run their float64 checks with x64 enabled; tests of the
    default (32-bit) mode are marked x32. (The notebooks, run in their own kernels, and
    tests/test_x64.py cover the default mode end to end.)"""
    mode = next((m.name for m in request.node.iter_markers() if m.name in ("x32", "x64")),
                "x64")
    with enable_x64(mode == "x64"):
        yield


@pytest.fixture
def concurrently():
    """``concurrently(fn, threads=2, times=3)``: fn() called ``times`` times on each of
    ``threads`` Python threads at once; returns every result (raises the first error)."""
    import threading

    def run(fn, threads=2, times=3):
        out, errors = [], []

        def loop():
            try:
                for _ in range(times):
                    out.append(fn())
            except Exception as e:  # surfaced below
                errors.append(e)
        ts = [threading.Thread(target=loop) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errors:
            raise errors[0]
        assert len(out) == threads * times
        return out
    return run


# PULLBACK_TEST_JIT=1: every eager primitive call in the suite runs as a compiled one-equation
# jit program (test_util.jit_every_primitive), so the whole primitive suite checks the executor.
if os.environ.get("PULLBACK_TEST_JIT") == "1":
    from pullback.test_util import jit_every_primitive  # noqa: E402

    @pytest.fixture(autouse=True)
    def _run_under_jit(request):
        if request.node.get_closest_marker("eager_only"):
            pytest.skip("checks eager execution itself")
        with jit_every_primitive():
            yield
