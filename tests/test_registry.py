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
