"""Whole random programs compared across execution modes (the generator is tests/programs.py,
the comparisons tests/program_checks.py): eager against jit, against the reference backend,
grad against jit(grad) and finite differences, vmap against a loop, and outputs aliasing
inputs under jit with donate_argnums. A failure shrinks to a small program, printed as Python
source that runs as pasted. scripts/fuzz-programs.py runs a long campaign of the same checks.
"""
import math
import os
import sys
from pathlib import Path

import pytest
from hypothesis import Phase, assume, find, given, settings

from pullback.backends.cpu.compiler import fusion
from pullback.transforms.passes import remat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import program_checks as pc  # noqa: E402
from programs import programs  # noqa: E402

pytestmark = pytest.mark.skipif(os.environ.get("PULLBACK_TEST_JIT") == "1",
                                reason="compares jit with eager itself")

# examples per comparison under "ci" (25 per test elsewhere), in units of 25: programs run in
# milliseconds, so each comparison gets 600-1100 (about 80 s in all on two cores)
SCALE = {"jit": 45, "reference": 36, "grad": 24, "vmap": 30, "donate": 36}


@pytest.fixture(autouse=True, scope="module")
def every_size_rewritten():
    """The size thresholds of recomputed residuals (passes/remat.py), of regions a step
    would strand values of, and of epilogue sums moved apart (compiler/fusion.py) at 0, so
    that the generator's small programs go through those rewrites too."""
    saved = remat.min_bytes, fusion.STRAND_MIN_BYTES, fusion.SUMS_APART_MIN_BYTES
    remat.min_bytes = fusion.STRAND_MIN_BYTES = fusion.SUMS_APART_MIN_BYTES = 0
    yield
    remat.min_bytes, fusion.STRAND_MIN_BYTES, fusion.SUMS_APART_MIN_BYTES = saved


# the generator's own tests draw programs without running or shrinking them
GENERATE_ONLY = settings(max_examples=3000, database=None, phases=[Phase.generate])


def _run(check: str, p) -> None:
    try:
        pc.CHECKS[check](p)
    except Exception as e:
        assume(not (pc.SKIP_KNOWN and pc.known_bug(p, check, str(e))))
        raise


def _settings(check: str):
    # grows as the square root of the profile's examples ("dev" 2x "ci", "thorough" 6x):
    # longer campaigns are scripts/fuzz-programs.py's job
    return settings(max_examples=int(SCALE[check] * math.sqrt(25 * settings().max_examples)))


@_settings("jit")
@given(programs("any"))
def test_jit_matches_eager(p):
    _run("jit", p)


@_settings("reference")
@given(programs("any"))
def test_cpu_matches_reference_backend(p):
    _run("reference", p)


@_settings("grad")
@given(programs("grad"))
def test_grad_matches_jit_and_finite_differences(p):
    _run("grad", p)


@_settings("vmap")
@given(programs("vmap"))
def test_vmap_matches_loop(p):
    _run("vmap", p)


@_settings("donate")
@given(programs("alias"))
def test_aliased_and_donated_outputs_under_jit(p):
    _run("donate", p)


def test_programs_print_as_runnable_source():
    """The printed source is the program: executing it defines f and its arguments."""
    p = find(programs("vmap"), lambda p: len(p.ops) >= 5 and p.helpers
             and any(op.defs for op in p.ops), settings=GENERATE_ONLY)
    ns = {}
    exec(p.source(), ns)
    assert len(ns["args"]) == len(p.inputs) and ns["in_axes"] == p.in_axes()
    assert len(ns["f"](*[a[0] if ax == 0 else a for a, ax in zip(ns["args"], p.in_axes())])) \
        == len(p.outputs)
    assert repr(p) == p.source()


def test_generator_reaches_the_known_compiler_bug_shapes():
    """Programs of the shapes of known jit bugs are generated (so the comparisons above cover
    them): a pad/concatenate/dynamic_update_slice of a dot result, and donation of an input
    with a value returned twice."""
    p = find(programs("any"), lambda p: pc.known_bug(p, "jit") is not None,
             settings=GENERATE_ONLY)
    assert any(op.kind in pc.DOTS for op in p.ops) and any(op.kind in pc.MOVES for op in p.ops)
    p = find(programs("alias"), lambda p: p.donate and len(set(p.outputs)) < len(p.outputs),
             settings=GENERATE_ONLY)
    assert p.donate
