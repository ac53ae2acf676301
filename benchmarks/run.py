"""Benchmarks: pullback next to NumPy (and PyTorch and JAX when importable), in one process.

    python benchmarks/run.py                      # every topic, every available framework
    python benchmarks/run.py --topics matmul --reps 25 --json out.json

Each case runs every framework's implementation in interleaved repetitions (see timing.py) and
reports medians and the ratio pullback / other of the case's metric (for times lower is better,
for throughputs higher). A case's targets say which ratio pullback should reach. Timings are
measurements, never test assertions.
"""
from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import frameworks  # noqa: E402
import timing  # noqa: E402
import topics  # noqa: E402
from case import METRICS, Case  # noqa: E402


def topic_names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(topics.__path__))


def check_agreement(case: Case) -> None:
    """Every implementation must compute what the reference (NumPy unless the case names
    another) computes: a benchmark of a wrong result is worthless."""
    ref = case.impls.get(case.reference)
    want = None if ref is None else np.asarray(ref.result(ref.run_once()), np.float64)
    for name, impl in case.impls.items():
        got = np.asarray(impl.result(impl.run_once()), np.float64)
        if want is not None and not np.allclose(got, want, rtol=case.rtol, atol=case.rtol):
            raise AssertionError(f"{case.name}: {name} disagrees with {case.reference}")


def run_case(case: Case, reps: int, min_sample_s: float, warm_s: float = 0.15) -> dict:
    check_agreement(case)
    samples = timing.measure(case.impls, reps=reps, min_sample_s=min_sample_s, warm_s=warm_s)
    values = {n: case.value(s.median) for n, s in samples.items()}
    pb = values["pullback"]
    ratios = {n: pb / v for n, v in values.items() if n != "pullback"}
    higher = case.higher_is_better
    targets = [{"target": t.describe(higher), "ratio": ratios[t.other],
                "met": t.met(ratios[t.other], higher)} for t in case.targets if t.other in ratios]
    if case.limit is not None:
        targets.append({"target": f"pullback {'>=' if higher else '<='} {case.limit:g} "
                        f"{METRICS[case.metric][0]}", "ratio": pb,
                        "met": pb >= case.limit if higher else pb <= case.limit})
    return {"topic": case.topic, "case": case.name, "metric": METRICS[case.metric][0],
            "higher_is_better": higher, "values": values, "ratios": ratios, "targets": targets,
            "samples": {n: {"seconds_per_iteration": s.seconds, "iterations_per_sample": s.inner}
                        for n, s in samples.items()}}


def fmt(v: float) -> str:
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def print_table(results: list[dict], names: list[str]) -> None:
    others = [n for n in names if n != "pullback"]
    head = ["case", "metric"] + names + [f"pb/{o}" for o in others] + ["targets"]
    rows = []
    for r in results:
        arrow = "higher" if r["higher_is_better"] else "lower"
        targets = "; ".join(f"{t['target']}: {'met' if t['met'] else 'MISSED'}" for t in r["targets"])
        rows.append([r["case"], f"{r['metric']} ({arrow} better)"]
                    + [fmt(r["values"][n]) if n in r["values"] else "-" for n in names]
                    + [f"{r['ratios'][o]:.2f}" if o in r["ratios"] else "-" for o in others]
                    + [targets])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    print(line(head))
    print(line("-" * w for w in widths))
    for row in rows:
        print(line(row))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topics", help=f"comma-separated subset of: {', '.join(topic_names())}")
    p.add_argument("--frameworks", help="comma-separated subset of: numpy, torch, jax "
                   "(pullback always runs)")
    p.add_argument("--reps", type=int, default=15, help="samples per implementation (default 15)")
    p.add_argument("--min-sample", type=float, default=0.02,
                   help="seconds one sample should last at least (default 0.02)")
    p.add_argument("--warm", type=float, default=0.15,
                   help="seconds each implementation runs untimed before each of its samples, "
                   "so that the previous framework's spinning thread pools go quiet while this "
                   "one's are hot (default 0.15; 0: back to back)")
    p.add_argument("--json", help="also write the results (with every sample) to this file")
    args = p.parse_args(argv)
    chosen = args.topics.split(",") if args.topics else topic_names()
    unknown = set(chosen) - set(topic_names())
    if unknown:
        p.error(f"unknown topics: {', '.join(sorted(unknown))}")
    only = set(args.frameworks.split(",")) | {"pullback"} if args.frameworks else None
    fws = frameworks.available(only)
    names = [f.name for f in fws]
    env = frameworks.environment(fws)
    env["warm_s"] = args.warm
    print("environment:", json.dumps(env))
    results = []
    for topic in chosen:
        module = importlib.import_module(f"topics.{topic}")
        for case in module.cases(fws):
            results.append(run_case(case, args.reps, args.min_sample, args.warm))
            print(f"  measured {case.topic}: {case.name}", file=sys.stderr)
    print()
    # (implementations that are not frameworks, e.g. "pullback jit", get columns too)
    extra = [n for r in results for n in r["values"] if n not in names]
    print_table(results, names + list(dict.fromkeys(extra)))
    if args.json:
        Path(args.json).write_text(json.dumps({"environment": env, "results": results}, indent=1))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
