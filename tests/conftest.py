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


# PULLBACK_TEST_JIT=1: every eager primitive call in the suite runs as a compiled one-equation
# jit program (test_util.jit_every_primitive), so the whole primitive suite checks the executor.
if os.environ.get("PULLBACK_TEST_JIT") == "1":
    import pytest  # noqa: E402

    from pullback.test_util import jit_every_primitive  # noqa: E402

    @pytest.fixture(autouse=True)
    def _run_under_jit(request):
        if request.node.get_closest_marker("eager_only"):
            pytest.skip("checks eager execution itself")
        with jit_every_primitive():
            yield
