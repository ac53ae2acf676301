"""stop_gradient: the identity whose derivative is zero."""
from __future__ import annotations

from .rules import Zero, not_applicable
from ..tracer.core import Primitive

stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.abstract_eval = lambda x: x
stop_gradient_p.reference = lambda x: x
stop_gradient_p.cpu = lambda k, x: x  # an identity: the same (immutable) buffer
stop_gradient_p.jvp = lambda primals, tangents: (stop_gradient_p.bind(primals[0]),
                                                 Zero.from_primal(primals[0]))
stop_gradient_p.transpose = not_applicable("its jvp emits a zero tangent, so it is never "
                                           "part of a linear program")
stop_gradient_p.batch = lambda vals, dims: (stop_gradient_p.bind(vals[0]), dims[0])
