"""JAX 0.10's public API, name by name: which names pullback has (issue 30).

The names JAX exports are checked in (tests/data/jax_0_10_names.json, made once from jax 0.10.2
by ``scripts/api_coverage.py --regenerate``), so this test never needs jax. ``EXCLUDED`` lists,
with reasons, what pullback does not aim to have; every other name must exist at the same place
under ``pullback``. ``scripts/api_coverage.py`` prints the table quoted in the issue's closing
note; the test writes it to build/api_coverage.txt too.
"""
from __future__ import annotations

import importlib
import json
import os
import re

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_DATA = os.path.join(_HERE, "data", "jax_0_10_names.json")
_REPORT = os.path.join(os.path.dirname(_HERE), "build", "api_coverage.txt")

TARGET = 0.95  # the issue's bar: 95% of the non-excluded names, per module

# ---- what pullback does not aim to have (module -> {name: reason}) ----
_SHARDING = "sharding / several devices or processes (pullback runs on one CPU device)"
_REFS = "mutable array references (jax.new_ref and friends)"
_INTERNAL = "a JAX-internal or experimental submodule, not part of the user API"
_CONFIG = ("a config switch of a JAX feature pullback has no counterpart of (tracer-leak and "
           "key-reuse checking, transfer guards, compile logging, custom PRNGs)")
_XLA = "XLA-specific: tokens, dead-code sinks, pipelining stages, dynamic shapes"
_NPIO = "I/O of NumPy's binary formats or DLPack (the issue leaves them out)"
_EFFECTS = "JAX's effect-system types (pullback orders callbacks without effect objects)"


def _names(reason: str, names: str) -> dict[str, str]:
    return {n: reason for n in names.split()}


EXCLUDED: dict[str, dict[str, str]] = {
    "jax": {
        **_names(_SHARDING, "NamedSharding P Shard sharding reshard set_mesh make_mesh "
                 "shard_map smap pmap auto_pcast remove_size_one_mesh_axis_from_type "
                 "make_array_from_callback make_array_from_process_local_data "
                 "make_array_from_single_device_arrays process_indices host_count host_id "
                 "host_ids distributed copy_to_host_async transfer_guard memory live_arrays "
                 "transfer_guard_device_to_device transfer_guard_device_to_host "
                 "transfer_guard_host_to_device"),
        **_names(_REFS, "Ref new_ref empty_ref free_ref freeze ref ds"),
        **_names(_INTERNAL, "ad api_util core custom_batching custom_derivatives interpreters "
                 "lib experimental export dlpack profiler monitoring stages ops version "
                 "make_user_context fwd_and_bwd"),
        **_names(_CONFIG, "check_tracer_leaks checking_leaks debug_key_reuse enable_checks "
                 "enable_custom_prng log_compiles explain_cache_misses no_execution "
                 "no_tracing thread_guard array_garbage_collection_guard "
                 "allow_f16_reductions jax2tf_associative_scan_reductions "
                 "softmax_custom_jvp legacy_prng_key"),
    },
    "jax.lax": {
        **_names(_SHARDING, "pbroadcast pcast psend precv pshuffle pswapaxes ragged_all_to_all "
                 "with_sharding_constraint"),
        **_names(_XLA, "create_token after_all dce_sink stage shape_as_value"),
        # JAX's docstring: "Stateful PRNG generator. Experimental and its use is discouraged
        # ... This API may be removed at any time"; its results are implementation-defined
        **_names("experimental (JAX marks it so): a stateful PRNG with implementation-"
                 "defined results; use pullback.random", "rng_uniform"),
        # and every ``*_p``: see _excluded()
    },
    "jax.numpy": _names(_NPIO, "load save savez fromfile from_dlpack"),
    "jax.debug": {
        **_names(_SHARDING, "inspect_array_sharding visualize_array_sharding "
                 "visualize_sharding"),
        **_names(_EFFECTS, "DebugEffect OrderedDebugEffect"),
    },
}

# JAX's primitive objects (``lax.add_p``, ``random.random_gamma_p``) are its tracer's
# internals: pullback has its own primitives (pullback.primitives), and a program binding JAX's
# primitives does not move over by changing imports.
_PRIMITIVE = re.compile(r"^[a-z0-9_]+_p$")
_PRIMITIVE_REASON = "a JAX primitive object (JAX's tracer internals)"


def _excluded(module: str, name: str) -> str | None:
    if _PRIMITIVE.match(name):
        return _PRIMITIVE_REASON
    return EXCLUDED.get(module, {}).get(name)


def jax_names() -> dict[str, list[str]]:
    with open(_DATA) as f:
        return json.load(f)["modules"]


def _pullback_module(module: str):
    try:
        return importlib.import_module("pullback" + module[len("jax"):])
    except ImportError:
        return None


def coverage() -> list[tuple[str, int, int, list[str]]]:
    """Per JAX module: (module, names pullback has, non-excluded names, the missing names)."""
    rows = []
    for module, names in jax_names().items():
        mod = _pullback_module(module)
        wanted = [n for n in names if _excluded(module, n) is None]
        missing = [n for n in wanted if mod is None or not hasattr(mod, n)]
        rows.append((module, len(wanted) - len(missing), len(wanted), missing))
    return rows


def format_table(rows, missing: bool = False) -> str:
    lines = [f"{'JAX 0.10 module':34} {'has':>5} {'of':>5} {'coverage':>9}"]
    tot_has = tot = 0
    for module, has, wanted, miss in rows:
        tot_has += has
        tot += wanted
        pct = 100.0 * has / wanted if wanted else 100.0
        lines.append(f"{module:34} {has:5d} {wanted:5d} {pct:8.1f}%")
        if missing and miss:
            lines.append("    missing: " + " ".join(miss))
    lines.append(f"{'total':34} {tot_has:5d} {tot:5d} {100.0 * tot_has / max(tot, 1):8.1f}%")
    excl = sum(1 for m, ns in jax_names().items() for n in ns if _excluded(m, n) is not None)
    lines.append(f"(excluded, with reasons in tests/test_api_coverage.py: {excl} names)")
    return "\n".join(lines)


def test_exclusions_name_real_jax_names():
    names = jax_names()
    for module, excl in EXCLUDED.items():
        assert module in names, module
        stale = sorted(set(excl) - set(names[module]))
        assert not stale, f"{module}: excluded names JAX 0.10 does not have: {stale}"


def test_names_list_is_jax_0_10():
    with open(_DATA) as f:
        data = json.load(f)
    assert data["jax_version"].startswith("0.10.")
    mods = data["modules"]
    assert "eval_shape" in mods["jax"] and "map" in mods["jax.tree"]
    assert "logpdf" in mods["jax.scipy.stats.norm"]
    assert all(not n.startswith("_") for ns in mods.values() for n in ns)


def test_coverage_report(capsys):
    """Prints the table (and writes build/api_coverage.txt for the closing note)."""
    table = format_table(coverage(), missing=True)
    os.makedirs(os.path.dirname(_REPORT), exist_ok=True)
    with open(_REPORT, "w") as f:
        f.write(table + "\n")
    with capsys.disabled():
        print("\n" + table)


@pytest.mark.parametrize("module", sorted(jax_names()))
def test_coverage_at_target(module):
    """Every public JAX 0.10 module: at least TARGET of its non-excluded names exist."""
    (row,) = [r for r in coverage() if r[0] == module]
    _, has, wanted, missing = row
    assert has >= TARGET * wanted, f"{module}: {has}/{wanted}; missing {missing}"
