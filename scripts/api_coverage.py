"""Coverage of JAX 0.10's public API by pullback, per module (issue 30).

    python scripts/api_coverage.py             # the table (and the missing names with -v)
    python scripts/api_coverage.py --regenerate  # rewrite tests/data/jax_0_10_names.json
                                                 # from the installed jax (0.10.x) only

The names JAX exports are checked in (tests/data/jax_0_10_names.json), the exclusions (with
their reasons) live in tests/test_api_coverage.py; neither needs jax installed.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "jax_0_10_names.json")

# The modules compared (jax.scipy.stats' distribution submodules are added by --regenerate).
MODULES = ["jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.nn",
           "jax.nn.initializers", "jax.random", "jax.tree_util", "jax.tree", "jax.image",
           "jax.debug", "jax.dtypes", "jax.typing", "jax.errors", "jax.scipy.special",
           "jax.scipy.stats", "jax.scipy.linalg", "jax.scipy.signal", "jax.scipy.fft",
           "jax.scipy.integrate", "jax.scipy.interpolate", "jax.scipy.ndimage",
           "jax.scipy.optimize", "jax.scipy.sparse", "jax.scipy.sparse.linalg",
           "jax.scipy.spatial", "jax.scipy.spatial.transform", "jax.scipy.cluster",
           "jax.scipy.cluster.vq"]


def regenerate() -> None:
    import jax  # noqa: F401  (only here: the checked-in list is made from it once)
    out = {"jax_version": jax.__version__, "modules": {}}
    mods = list(MODULES)
    stats = importlib.import_module("jax.scipy.stats")
    mods += sorted(v.__name__ for v in vars(stats).values()
                   if isinstance(v, types.ModuleType) and v.__name__.startswith("jax.scipy.stats."))
    for m in mods:
        mod = importlib.import_module(m)
        out["modules"][m] = sorted(n for n in dir(mod) if not n.startswith("_"))
    with open(DATA, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {DATA}: {sum(map(len, out['modules'].values()))} names")


def _test_module() -> types.ModuleType:
    path = os.path.join(ROOT, "tests", "test_api_coverage.py")
    spec = importlib.util.spec_from_file_location("_api_coverage_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the missing names")
    args = ap.parse_args()
    if args.regenerate:
        regenerate()
        return
    t = _test_module()
    rows = t.coverage()
    print(t.format_table(rows, missing=args.verbose))


if __name__ == "__main__":
    sys.exit(main())
