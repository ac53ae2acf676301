"""The vocabulary of rule slots shared by every primitive module.

A primitive's slots are filled in its own module (see ``tracer.core.Primitive``); a slot left
for later work names the issue that fills it, so the registry test can tell "pending" from
"forgotten".
"""
from ..tracer.core import not_applicable, pending

AUTODIFF = pending("issue 4: jvp and transpose rules arrive with automatic differentiation")
BATCHING = pending("issue 4: batching rules arrive with vmap")
NONLINEAR = not_applicable("not linear in its operands, so it has no transpose")
