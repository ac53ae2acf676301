"""Every notebook in notebooks/ runs top to bottom without error (a failing cell fails), shows
its figures inline, and is stored without outputs.

Figures: each notebook declares how many it shows in its metadata (``"pullback": {"figures":
N}``, N >= 1); the executed notebook must hold at least N ``image/png`` outputs. In Jupyter
(and under nbclient) ipykernel's matplotlib-inline backend turns every ``plt.show()`` into such
an output, so a notebook that forces a non-inline backend (``matplotlib.use('Agg')``) or never
shows its figures fails here. The kernel gets an environment with the inline backend set
explicitly, so neither an inherited ``MPLBACKEND`` (CI machines often set Agg) nor a user
matplotlibrc can hide the figures.
"""
import os
import time
from pathlib import Path

import nbclient  # the test extras install these: no importorskip, a skip would hide a gap
import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
_INLINE = "module://matplotlib_inline.backend_inline"


def _kernel_env() -> dict:
    # the backend Jupyter's kernel uses; the variable beats any matplotlibrc's `backend`.
    # PULLBACK_NOTEBOOK_SMALL: notebooks that train for minutes take their small setting
    return {**os.environ, "MPLBACKEND": _INLINE, "PULLBACK_NOTEBOOK_SMALL": "1"}


def _declared_figures(nb) -> int:
    n = nb.metadata.get("pullback", {}).get("figures")
    assert isinstance(n, int) and n >= 1, (
        'a notebook declares its figures in its metadata: "pullback": {"figures": N}, N >= 1')
    return n


def _png_outputs(nb) -> int:
    return sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
               if o.get("output_type") in ("display_data", "execute_result")
               and "image/png" in o.get("data", {}))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    want = _declared_figures(nb)
    t0 = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute(
                                env=_kernel_env())
    seconds = time.perf_counter() - t0
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    got = _png_outputs(nb)
    assert got >= want, (
        f"{path.name}: {got} inline figure(s) in the executed notebook, {want} declared: does it "
        "force a non-inline matplotlib backend, or not call plt.show()?")
    print(f"{path.name}: {seconds:.1f} s, {got} figure(s)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_stored_clean(path):
    """Committed without outputs or execution counts (clean diffs), for the python3 kernel."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
             and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, f"{path.name}: cells {dirty} hold outputs; clear them before committing"
    _declared_figures(nb)


def test_there_are_notebooks():
    names = {p.name for p in NOTEBOOKS}
    assert "00_tour.ipynb" in names and len(NOTEBOOKS) >= 3, names
