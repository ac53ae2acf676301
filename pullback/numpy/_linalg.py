"""Products: matmul and dot, lowered to dot_general."""
from __future__ import annotations

from typing import Any

from ..primitives.dot import dot_general_p
from ..tracer import core
from ..tracer.shapes import broadcast_shapes
from ._promotion import broadcast_to_shape, promote_dtypes
from ._shape import reshape
from ._ufuncs import multiply


def matmul(a: Any, b: Any, /) -> Any:
    """Matrix product with NumPy's ``@`` semantics (1-D operands promoted, batch dims
    broadcast)."""
    a, b = promote_dtypes("matmul", a, b)
    av, bv = core.get_aval(a), core.get_aval(b)
    if av.ndim == 0 or bv.ndim == 0:
        raise ValueError("matmul: operands must be at least 1-D (use multiply for scalars)")
    a2 = reshape(a, (1,) + av.shape) if av.ndim == 1 else a
    b2 = reshape(b, bv.shape + (1,)) if bv.ndim == 1 else b
    as_, bs = core.get_aval(a2).shape, core.get_aval(b2).shape
    if as_[-1] != bs[-2]:
        raise ValueError(f"matmul: contracting dimensions differ: {av.shape} @ {bv.shape}")
    batch = broadcast_shapes(as_[:-2], bs[:-2], op="matmul")
    a2 = broadcast_to_shape(a2, as_, batch + as_[-2:])
    b2 = broadcast_to_shape(b2, bs, batch + bs[-2:])
    nb = len(batch)
    out = dot_general_p.bind(a2, b2, dimension_numbers=(((nb + 1,), (nb,)),
                                                         (tuple(range(nb)), tuple(range(nb)))),
                             precision=None, preferred_element_type=None)
    shape = batch + (as_[-2],) * (av.ndim > 1) + (bs[-1],) * (bv.ndim > 1)
    return reshape(out, shape)


def dot(a: Any, b: Any) -> Any:
    """NumPy's ``dot``: scalars multiply, 1-D·1-D is an inner product, N-D contracts a's last
    axis with b's second-to-last."""
    a, b = promote_dtypes("dot", a, b)
    av, bv = core.get_aval(a), core.get_aval(b)
    if av.ndim == 0 or bv.ndim == 0:
        return multiply(a, b)
    if bv.ndim <= 2:
        return matmul(a, b)
    bc = bv.ndim - 2
    if av.shape[-1] != bv.shape[bc]:
        raise ValueError(f"dot: shapes {av.shape} and {bv.shape} are not aligned")
    return dot_general_p.bind(a, b, dimension_numbers=(((av.ndim - 1,), (bc,)), ((), ())),
                              precision=None, preferred_element_type=None)
