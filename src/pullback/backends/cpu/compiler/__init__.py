"""The jit compiler of the CPU backend: a Jaxpr becomes one schedule of C kernels.

values (buffers, views, steps) -> lower (cpu rules run symbolically) -> fusion (element-wise
regions, matmul epilogues) -> memory (liveness, arena offsets, in place, donation) -> program
(the C ``Program`` and its introspection).
"""
from .program import CompiledProgram, compile_jaxpr  # noqa: F401
from .lower import fallbacks  # noqa: F401
