"""``pullback.errors``, as ``jax.errors``: the error classes pullback raises, under JAX's names
(``except jax.errors.ConcretizationTypeError`` keeps working after ``import pullback as jax``).
"""
from __future__ import annotations

from .numpy._indexing import NonConcreteBooleanIndexError
from .tracer.errors import (ConcretizationTypeError, TracerArrayConversionError,
                            TracerBoolConversionError, TracerIntegerConversionError,
                            UnexpectedTracerError)
from .tracer.errors import PullbackTypeError as JAXTypeError

__all__ = ["ConcretizationTypeError", "InconclusiveDimensionOperation", "JAXIndexError",
           "JAXTypeError", "JaxRuntimeError", "JaxprTypeError", "KeyReuseError",
           "NonConcreteBooleanIndexError", "TracerArrayConversionError",
           "TracerBoolConversionError", "TracerIntegerConversionError", "UnexpectedTracerError"]


class JAXIndexError(IndexError):
    """Base of JAX's indexing errors."""


class JaxRuntimeError(RuntimeError):
    """An error raised while a compiled program runs (JAX's ``XlaRuntimeError``)."""


class JaxprTypeError(TypeError):
    """A Jaxpr whose equations do not type-check."""


class KeyReuseError(RuntimeError):
    """A PRNG key used twice (JAX raises it under ``jax_debug_key_reuse``)."""


class InconclusiveDimensionOperation(Exception):
    """A comparison of symbolic dimensions JAX cannot decide (shape polymorphism)."""


def __dir__() -> list[str]:
    return sorted(__all__)
