"""Every primitive, one module per op family; importing this package fills the registry."""
from . import dot, elementwise, movement, reductions  # noqa: F401
from ..tracer.core import Primitive

registry = Primitive.registry
