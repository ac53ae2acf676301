"""The primitive suite under jit: a representative subset of the primitive tests re-run with
PULLBACK_TEST_JIT=1, where every eager primitive call is a compiled one-equation program (see
test_util.jit_every_primitive). The whole suite runs that way with
``PULLBACK_TEST_JIT=1 pytest tests``."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SUBSET = ["test_reductions.py", "test_movement.py", "test_dot.py", "test_conversion.py"]


@pytest.mark.x32
@pytest.mark.skipif(os.environ.get("PULLBACK_TEST_JIT") == "1", reason="already under jit")
def test_primitive_subset_passes_under_jit(tmp_path):
    env = {**os.environ, "PULLBACK_TEST_JIT": "1", "CI": "1"}
    # run outside the source tree, so the installed (built) package is imported
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(TESTS), *[str(TESTS / f) for f in SUBSET]],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "[100%]" in proc.stdout and "F" not in proc.stdout.split("[")[0]


def test_switch_routes_eager_primitives_through_the_compiler():
    import numpy as np

    import pullback.numpy as jnp
    from pullback.backends import fallbacks
    from pullback.test_util import jit_every_primitive
    from pullback.tracer import core
    seen = []
    with jit_every_primitive():
        impl = core._eval_impl
        assert impl is not None and impl.__name__ == "impl"
        out = jnp.sin(jnp.arange(4.0)) + 1.0
        seen.append(type(out).__name__)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(4.0)) + 1, rtol=1e-6)
    assert core._eval_impl is not impl and seen == ["Array"]
    assert not fallbacks
