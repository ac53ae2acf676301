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
