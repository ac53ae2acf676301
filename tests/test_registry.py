"""Every primitive declares every rule of the contract, or says why it cannot (yet)."""
import pytest

import pullback  # noqa: F401  (imports every primitive)
from pullback.tracer.core import RULE_SLOTS, NoRule, Primitive

PRIMS = sorted(Primitive.registry.values(), key=lambda p: p.name)


def test_the_first_slice_is_registered():
    names = {p.name for p in PRIMS}
    assert {"add", "mul", "neg", "sin", "exp", "reduce_sum", "broadcast_in_dim", "reshape",
            "dot_general", "jit"} <= names


@pytest.mark.parametrize("prim", PRIMS, ids=lambda p: p.name)
def test_every_rule_slot_is_filled_or_explained(prim):
    for slot in RULE_SLOTS:
        rule = getattr(prim, slot)
        if isinstance(rule, NoRule):
            assert rule.kind in ("pending", "not_applicable")
            assert len(rule.reason) > 15, f"{prim.name}.{slot}: the reason must say why"
            if rule.kind == "pending":
                assert "issue" in rule.reason, f"{prim.name}.{slot}: name the issue"
        else:
            assert callable(rule), f"{prim.name} has no {slot} rule and no stated reason"
    # what every primitive must have now: its checking and both backends
    for slot in ("abstract_eval", "cpu", "reference"):
        assert callable(getattr(prim, slot)) and not isinstance(getattr(prim, slot), NoRule)


def test_calling_an_empty_rule_names_the_op_and_reason():
    prim = Primitive.registry["sin"]
    with pytest.raises(NotImplementedError, match="'sin' has no transpose rule: not linear"):
        prim.rule("transpose")


def test_a_primitive_cannot_be_declared_twice():
    with pytest.raises(ValueError, match="declared twice"):
        Primitive("sin")


@pytest.mark.parametrize("prim", PRIMS, ids=lambda p: p.name)
def test_every_primitive_has_its_autodiff_and_batching_rules(prim):
    # issue 4's contract: jvp, transpose (linear ops) and batching exist, or say why they cannot
    for slot in ("jvp", "transpose", "batch"):
        rule = getattr(prim, slot)
        if isinstance(rule, NoRule):
            assert rule.kind == "not_applicable", \
                f"{prim.name}.{slot} is still pending: {rule.reason}"
        else:
            assert callable(rule)


# ---- the C kernel tables agree with the primitives' declarations (op facts written once) ----

def test_the_c_tables_have_a_loop_for_every_declared_dtype_and_no_other():
    from pullback.backends.cpu import op_facts
    assert op_facts.mismatches() == []


def test_a_disagreeing_declaration_is_reported(monkeypatch):
    import dataclasses

    from pullback.backends.cpu import op_facts
    from pullback.primitives import elementwise as ew
    from pullback.primitives import reductions as rd
    from pullback.tracer import dtypes as D
    original = ew.KERNEL_ROWS
    rows = dict(original)
    rows["gcd"] = dataclasses.replace(rows["gcd"], dtypes=rows["gcd"].dtypes | {D.bool_})
    rows["abs"] = dataclasses.replace(rows["abs"], out=lambda d: d)   # complex -> complex?
    rows["square"] = dataclasses.replace(rows["square"], dtypes=rows["square"].dtypes - {D.int8})
    monkeypatch.setattr(ew, "KERNEL_ROWS", rows)
    tables = {k: dict(v) for k, v in rd.KERNEL_DTYPES.items()}
    tables["cumulative"]["cumlogsumexp"] = tables["cumulative"]["cumlogsumexp"] + (D.int32,)
    monkeypatch.setattr(rd, "KERNEL_DTYPES", tables)
    found = op_facts.mismatches()
    assert "gcd: declared for bool, but elementwise.c has no loop" in found
    assert "square: elementwise.c has a loop for int8, which is not declared" in found
    assert "abs: on complex64 elementwise.c writes float32, declared complex64" in found
    assert "cumlogsumexp: declared for int32, but reduce.c has no loop" in found
    assert len(found) == 5  # (abs on complex128 too)
    # arity, parameters and names fail the import-time check
    rows["gcd"] = dataclasses.replace(rows["gcd"], nin=1)
    with pytest.raises(op_facts.KernelTableMismatch, match="row 'gcd' takes 2 operands"):
        op_facts._check_names_and_arity()
    rows["gcd"] = dataclasses.replace(rows["gcd"], nin=2)
    rows["reduce_precision"] = dataclasses.replace(rows["reduce_precision"], nparams=1)
    with pytest.raises(op_facts.KernelTableMismatch, match="reduce_precision.*2 int parameters"):
        op_facts._check_names_and_arity()
    del rows["reduce_precision"]
    rows["cube"] = rows["square"]
    with pytest.raises(op_facts.KernelTableMismatch,
                       match=r"without a C row: \['cube'\]; C rows without a declaration: "
                             r"\['reduce_precision'\]"):
        op_facts._check_names_and_arity()
    monkeypatch.setattr(ew, "KERNEL_ROWS", original)
    tables["reduce"]["reduce_mean"] = ()
    with pytest.raises(op_facts.KernelTableMismatch, match="reduce.c's reduce kernels"):
        op_facts._check_names_and_arity()


def test_the_compiler_takes_arity_and_output_dtype_from_the_declarations():
    # the lowering has no op lists of its own: each C row's compiled step follows its declaration
    import numpy as np

    from pullback.backends.cpu import kernels, op_facts
    from pullback.backends.cpu.compiler import lower
    from pullback.primitives import elementwise as ew
    assert not any(hasattr(lower, n) for n in ("_BOOL_OUT", "_REAL_OUT", "_COMPLEX_OUT", "_UNARY"))
    assert [r.name for r in op_facts.EWISE_BY_CODE] == \
        sorted(kernels.EWISE_OPS, key=kernels.EWISE_OPS.get)
    assert op_facts.EWISE_BY_CODE[kernels.EWISE_OPS["reduce_precision"]] is \
        ew.KERNEL_ROWS["reduce_precision"]
    low = lower.Lowering()
    x = lower.View.fresh((3,), np.dtype(np.complex64), "input", 0)
    assert low.kernels.ewise(kernels.EWISE_OPS["abs"], x).dtype == np.float32
    step = low.steps[-1]
    assert step.label == "abs" and len(step.ins) == 1
    y = lower.View.fresh((3,), np.dtype(np.float32), "input", 1)
    low.kernels.ewise(kernels.EWISE_OPS["reduce_precision"], y, 5, 10)
    assert low.steps[-1].info["params"] == (5, 10)
