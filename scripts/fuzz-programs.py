#!/usr/bin/env python3
"""A long campaign of the random-program comparisons of tests/test_programs.py.

    python scripts/fuzz-programs.py                      # 20,000 programs over the five checks
    python scripts/fuzz-programs.py --programs 2000 --checks jit,grad --seed 7

Programs are split evenly over the checks. Failures do not stop the run: each distinct failure
(check, error type, message head, raising line, and which known compiler bug its program may
show: program_checks.known_bug) is counted and kept with its smallest program. Prints the
programs run and the time per check, then the failures; exits 1 if any.
"""
import argparse
import collections
import sys
import time
import traceback
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import pullback  # noqa: E402
import program_checks as pc  # noqa: E402

# the programs are typed for JAX's x64 mode (float64 inputs for the finite differences), as the
# test suite runs them
pullback.config.update("jax_enable_x64", True)
from programs import programs  # noqa: E402


def campaign(check: str, n: int, seed: int, failures: dict) -> int:
    ran = [0]

    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(programs(pc.MODES[check]))
    def run(p):
        ran[0] += 1
        try:
            pc.CHECKS[check](p)
        except Exception as e:  # every failure is recorded, the campaign goes on
            where = traceback.extract_tb(e.__traceback__)[-1]
            head = str(e).split("\n")[0][:160]
            known = pc.known_bug(p, check, str(e))
            key = (check, type(e).__name__, head.split(":")[0], where.filename, where.lineno,
                   known)
            src = p.source()
            count, _, best = failures.get(key, (0, "", None))
            if best is None or len(src) < len(best):
                best = src
            failures[key] = (count + 1, f"{type(e).__name__}: {head} [known bug: {known}]", best)

    run._hypothesis_internal_use_seed = seed
    run()
    return ran[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--programs", type=int, default=20000, help="total over all checks")
    ap.add_argument("--checks", default=",".join(pc.CHECKS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quiet", action="store_true", help="no programs, only the failure kinds")
    args = ap.parse_args()
    checks = args.checks.split(",")
    failures: dict = {}
    total_t = time.perf_counter()
    for check in checks:
        t = time.perf_counter()
        n = campaign(check, args.programs // len(checks), args.seed, failures)
        fails = sum(c for k, (c, _, _) in failures.items() if k[0] == check)
        print(f"{check:10s} {n:6d} programs  {time.perf_counter() - t:7.1f} s  "
              f"{fails} failing", flush=True)
    print(f"total {time.perf_counter() - total_t:.1f} s")
    by_check = collections.defaultdict(list)
    for key, val in failures.items():
        by_check[key[0]].append(val)
    for check, items in by_check.items():
        for count, what, src in sorted(items, key=lambda v: -v[0]):
            print(f"\n=== {check}: {count} x {what}")
            if not args.quiet:
                print(src)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
