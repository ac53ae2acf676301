"""Special functions of ``jax.lax``: incomplete gamma and beta functions, zeta, polygamma and
the exponentially scaled Bessel functions (lgamma, digamma, erf, erfc and erf_inv are in
``_elementwise``). Element-wise: operands share a shape and dtype, 0-d operands broadcast."""
from __future__ import annotations

from ..primitives import special as sp
from ..tracer.array import Array
from ..tracer.core import Primitive
from ._elementwise import _unary
from ._operands import ArrayLike, scalars_to



def _binary(name: str, prim: Primitive, summary: str, args: tuple[str, str]):
    """A binary element-wise op with jax.lax's parameter names (for keyword calls)."""
    first, second = args

    def op(*pos: ArrayLike, **kw: ArrayLike) -> Array:
        vals = list(pos) + [kw.pop(k) for k in args[len(pos):] if k in kw]
        if kw or len(vals) != 2:
            raise TypeError(f"{name}() takes arguments ({first}, {second}), got "
                            f"{len(pos)} positional and {sorted(kw)} keyword")
        return prim.bind(*scalars_to(vals))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{summary}\n\n    Args:\n      {first}, {second}: operands of one float dtype "
                  "and shape (or scalars).\n\n    Returns:\n      The element-wise result.\n    ")
    return op


__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc", "zeta",
           "polygamma", "bessel_i0e", "bessel_i1e"]

igamma = _binary("igamma", sp.igamma_p,
                 "Element-wise regularized lower incomplete gamma function P(a, x).", ("a", "x"))
igammac = _binary("igammac", sp.igammac_p,
                  "Element-wise regularized upper incomplete gamma function Q(a, x) = 1 - P.",
                  ("a", "x"))
igamma_grad_a = _binary("igamma_grad_a", sp.igamma_grad_a_p,
                        "Element-wise derivative of ``igamma(a, x)`` with respect to ``a``.",
                        ("a", "x"))
random_gamma_grad = _binary(
    "random_gamma_grad", sp.random_gamma_grad_p,
    "Element-wise derivative of a Gamma(a, 1) sample ``x`` with respect to ``a`` (implicit "
    "reparameterization: ``-dP(a, x)/da / dP(a, x)/dx``).", ("a", "x"))
zeta = _binary("zeta", sp.zeta_p, "Element-wise Hurwitz zeta function sum_k (k + q) ** -x.",
               ("x", "q"))
polygamma = _binary("polygamma", sp.polygamma_p,
                    "Element-wise polygamma function psi^(m)(x) (NaN for m not a natural "
                    "number).", ("m", "x"))
bessel_i0e = _unary("bessel_i0e", sp.bessel_i0e_p,
                    "Element-wise exponentially scaled modified Bessel function of order 0: "
                    "``exp(-|x|) I0(x)``.")
bessel_i1e = _unary("bessel_i1e", sp.bessel_i1e_p,
                    "Element-wise exponentially scaled modified Bessel function of order 1: "
                    "``exp(-|x|) I1(x)``.")


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """Element-wise regularized incomplete beta function I_x(a, b).

    Args:
      a, b: positive shape parameters.
      x: points in [0, 1].

    Returns:
      ``B(x; a, b) / B(a, b)``; differentiable in ``x`` only (as JAX).
    """
    return sp.regularized_incomplete_beta_p.bind(*scalars_to((a, b, x)))
