"""The errors users meet when tracing goes wrong, with JAX's names and fuller messages."""
from __future__ import annotations


class PullbackTypeError(TypeError):
    """Base of the tracing errors that are TypeErrors in JAX."""


class ConcretizationTypeError(PullbackTypeError):
    """A traced value was used where Python needs a concrete one (``if``, ``bool()``, ``int()``)."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` (an ``if`` or ``while`` test) on a traced value."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """``int()``/``operator.index()`` on a traced value."""


class TracerArrayConversionError(PullbackTypeError):
    """A traced value was handed to NumPy (``np.asarray``)."""


class UnexpectedTracerError(Exception):
    """A tracer was used after the transformation that created it had returned."""


def concretization_message(what: str, tracer: object) -> str:
    aval = tracer.aval.str_short()
    where = tracer._source_description()
    return (
        f"{what} was called on a traced value of type {aval}{where}. Its value is not known "
        "while the function is being traced, so Python control flow and conversions cannot "
        "depend on it.\n"
        "  - for control flow on traced values, use lax.cond, lax.switch, lax.while_loop or "
        "lax.fori_loop;\n"
        "  - if the value is a configuration rather than data, mark the argument static with "
        "jit's static_argnums or static_argnames."
    )


def check_callable(fun: object) -> None:
    """JAX's TypeError for a transformation (jit, grad, vmap, ...) given a non-callable."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
