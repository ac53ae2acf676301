"""Bad-input probes: shapes (zero-size, huge, negative, non-integer), every dtype through a few
ops, NumPy layouts (strided, negative and zero strides, misaligned, read-only), API misuse,
numerical edge cases and threads, each run eagerly and under ``jit`` where it applies.

Each category runs in child processes (``_probe_runner.py``) under a memory limit and a
timeout, so that a crash (segfault, abort) or a hang fails the test naming the probe instead
of taking pytest down; the probes after a crashed one run again in a fresh child. The probes
and their expected outcomes (JAX's values and error types) live in ``probes/<category>.py``:
values are JAX 0.10's, looked up once by running JAX; errors are JAX's exception types with
words of pullback's messages (the function and argument). The probe files are generated data:
when editing a probe, take its expectation from JAX again.
"""
from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "_probe_runner.py")
CATEGORIES = ["shapes", "dtypes", "layouts", "asarray", "misuse", "numerics", "threads", "indexing",
              "x64"]
TIMEOUT = 60  # seconds per child


# The probes' expectations are JAX's in its default (32-bit) mode, except the dtype probes',
# which cover every dtype, 64-bit ones included: JAX's x64 mode.
X64_CATEGORIES = ("dtypes", "x64")


def _probes(category: str) -> list[dict]:
    out = []
    for name, src, expect in runpy.run_path(os.path.join(HERE, "probes", f"{category}.py"))[
            "PROBES"]:
        defines_run = "run = " in src or "def run(" in src
        out.append(dict(name=name, src=src, expect=list(expect),
                        modes=["eager"] if defines_run else ["eager", "jit"]))
    return out


def _run_children(probes: list[dict], x64: bool = False) -> tuple[dict, list[str]]:
    """Results by probe name, and the problems of probes that crashed or hung their child."""
    results: dict = {}
    problems = []
    todo = list(probes)
    env = dict(os.environ, PYTHONFAULTHANDLER="1", JAX_ENABLE_X64=str(int(x64)))
    while todo:
        try:
            proc = subprocess.run([sys.executable, RUNNER], input=json.dumps(todo),
                                  capture_output=True, text=True, timeout=TIMEOUT, env=env)
            out, rc, why = proc.stdout, proc.returncode, proc.stderr[-2000:]
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, why = None, f"timed out after {TIMEOUT} s"
        for line in out.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                results[r["name"]] = r
        todo = [p for p in todo if p["name"] not in results]
        if todo:  # the first probe without a result crashed or hung the child
            bad = todo.pop(0)
            problems.append(f"{bad['name']}: the child died (exit {rc}): {why}")
    return results, problems


@pytest.mark.parametrize("category", CATEGORIES)
def test_probes(category):
    probes = _probes(category)
    assert len({p["name"] for p in probes}) == len(probes), "probe names must be unique"
    results, problems = _run_children(probes, category in X64_CATEGORIES)
    for p in probes:
        r = results.get(p["name"])
        if r:
            problems.extend(f"{p['name']} [{mode}]: {why}" for mode, why in r["failures"].items())
    assert not problems, f"{len(problems)} of {len(probes)} probes failed:\n" + "\n".join(problems)


def test_a_crash_is_reported_by_name():
    """The harness itself: a probe that kills its child is named, and the probes after it
    still run."""
    probes = [dict(name="dies", src="import os\nrun = lambda: os.abort()", expect=["ok"],
                   modes=["eager"]),
              dict(name="fine", src="run = lambda: 1", expect=["eq", "1"], modes=["eager"])]
    results, problems = _run_children(probes)
    assert len(problems) == 1 and problems[0].startswith("dies: the child died")
    assert results["fine"]["failures"] == {}
