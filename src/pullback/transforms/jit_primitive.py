"""The ``jit`` call primitive, declared by name only.

The passes create and inline ``jit`` equations (scan hoisting calls a batched part of a loop
body through one), and jit.py, which gives the primitive its rules, runs those passes when it
compiles: so the primitive is named here, below both.
"""
from ..tracer.core import Primitive

jit_p = Primitive("jit", multiple_results=True)
