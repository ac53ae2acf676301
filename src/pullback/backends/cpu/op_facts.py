"""The C kernel tables, checked against the primitives' declarations when the backend loads.

An element-wise op's facts (arity, int parameters, accepted dtypes, output dtype rule) are
declared once, in ``primitives/elementwise.py`` (``KERNEL_ROWS``), and the reduction family's
(the dtypes of each reduction, cumulative op and arg-reduction) in ``primitives/reductions.py``
(``KERNEL_DTYPES``). The C tables export what they hold (``EWISE_ROWS``, ``REDUCE_LOOPS``):
importing this module fails if a row's name, arity or parameter count disagrees with the
declaration (cheap: one pass over the rows), and ``mismatches()`` lists every dtype whose loop
is missing, unexpected or of the wrong output dtype (tests/test_registry.py asserts it empty).

The compiler reads an element-wise row's facts from here (``EWISE_BY_CODE``), never from a list
of its own.
"""
from __future__ import annotations

import numpy as np

from ...primitives import elementwise as ew
from ...primitives import reductions as rd
from ...tracer import dtypes
from . import kernels

# The dtypes the kernel tables have slots for, by slot.
_KERNEL_DTYPES = (dtypes.bool_, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
                  dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.float16,
                  dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.complex64,
                  dtypes.complex128)
DTYPE_OF_SLOT = {kernels.schedule_slots(d)[0]: np.dtype(d) for d in _KERNEL_DTYPES}


class KernelTableMismatch(ImportError):
    """A C kernel table disagrees with the primitive declarations it implements."""


def _check_names_and_arity() -> list[ew.KernelRow]:
    """The declared row of each C element-wise row, by code; raises on a disagreement."""
    c_names = [row[0] for row in kernels.EWISE_ROWS]
    missing = sorted(set(ew.KERNEL_ROWS) - set(c_names))
    extra = sorted(set(c_names) - set(ew.KERNEL_ROWS))
    if missing or extra:
        raise KernelTableMismatch(
            "elementwise.c's table and primitives/elementwise.py's KERNEL_ROWS differ: "
            f"declared without a C row: {missing}; C rows without a declaration: {extra}")
    by_code = []
    for name, nin, nparams, _ in kernels.EWISE_ROWS:
        row = ew.KERNEL_ROWS[name]
        if (nin, nparams) != (row.nin, row.nparams):
            raise KernelTableMismatch(
                f"elementwise.c's row '{name}' takes {nin} operands and {nparams} int "
                f"parameters, but primitives/elementwise.py declares {row.nin} and {row.nparams}")
        by_code.append(row)
    declared = {kind: set(table) for kind, table in rd.KERNEL_DTYPES.items()}
    c_kinds = {"reduce": kernels.REDUCE_OPS, "cumulative": kernels.CUMULATIVE_OPS,
               "arg": kernels.ARG_OPS}
    for kind, codes in c_kinds.items():
        if set(codes) != declared[kind]:
            raise KernelTableMismatch(
                f"reduce.c's {kind} kernels {sorted(codes)} differ from the {kind} primitives "
                f"declared in primitives/reductions.py: {sorted(declared[kind])}")
    return by_code


EWISE_BY_CODE: list[ew.KernelRow] = _check_names_and_arity()


def mismatches() -> list[str]:
    """Every dtype on which a C table and a declaration disagree: a declared dtype without a
    loop, a loop for an undeclared dtype, or a loop whose output dtype is not the declared
    rule's."""
    out = []
    for name, _, _, loops in kernels.EWISE_ROWS:
        row = ew.KERNEL_ROWS[name]
        have = {DTYPE_OF_SLOT[i]: DTYPE_OF_SLOT[o] for i, o in loops}
        for d in sorted(row.dtypes - set(have), key=str):
            out.append(f"{name}: declared for {d}, but elementwise.c has no loop")
        for d in sorted(set(have) - row.dtypes, key=str):
            out.append(f"{name}: elementwise.c has a loop for {d}, which is not declared")
        for d, o in have.items():
            if d in row.dtypes and o != row.out(d):
                out.append(f"{name}: on {d} elementwise.c writes {o}, declared {row.out(d)}")
    for table in rd.KERNEL_DTYPES.values():
        for name, accepted in table.items():
            have = {DTYPE_OF_SLOT[s] for s in kernels.REDUCE_LOOPS.get(name, ())}
            for d in sorted(set(accepted) - have, key=str):
                out.append(f"{name}: declared for {d}, but reduce.c has no loop")
            for d in sorted(have - set(accepted), key=str):
                out.append(f"{name}: reduce.c has a loop for {d}, which is not declared")
    return out
