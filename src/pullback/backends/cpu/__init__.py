"""The CPU backend: C kernels in one extension module (sources in csrc/)."""
from . import kernels, op_facts  # noqa: F401  (op_facts: the C tables checked at import)
