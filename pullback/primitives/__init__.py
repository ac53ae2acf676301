"""Every primitive, one module per op family; importing this package fills the registry."""
from . import (collectives, conversion, dot, elementwise, indexing, movement, random_bits,  # noqa: F401
               reductions, sort, windows)
from ..tracer.core import Primitive

registry = Primitive.registry
