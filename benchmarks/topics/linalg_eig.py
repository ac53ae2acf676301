"""Linear algebra, the non-symmetric and tridiagonal part (issue 28): eig of one 256x256 and of
4096 8x8 matrices, schur 256x256, tridiagonal_solve of 1000 systems of 1000, expm 64x64;
against NumPy/SciPy, PyTorch and jax.jit. No targets in the issue: ratios for the record.
pullback runs jitted. The results compared are the sorted |eigenvalues| (NumPy's own LAPACK
orders them differently from SciPy's, which pullback and jaxlib call)."""
from __future__ import annotations

import importlib

import numpy as np
import scipy.linalg as sl

from case import Case
from timing import Impl


def _fw(fws, name):
    return next((f for f in fws if f.name == name), None)


def cases(fws) -> list[Case]:
    import pullback as pb
    import pullback.numpy as pnp
    import pullback.scipy.linalg as psl
    from pullback.lax import linalg as pll
    pb.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256))
    ab = rng.standard_normal((4096, 8, 8)).astype(np.float32)
    m = 1000
    dl, d, du = rng.standard_normal((3, m, m))
    d = d + 5
    rhs = rng.standard_normal((m, m, 1))
    e = 0.1 * rng.standard_normal((64, 64))
    eigvals = pb.jit(pnp.linalg.eigvals)
    absw = lambda r: np.sort(np.abs(np.asarray(r)), axis=-1)  # noqa: E731
    impls = {
        "eig": ({"pullback": Impl("f(x)", {"f": eigvals, "x": pnp.asarray(a)}, result=absw),
                 "numpy": Impl("f(x)", {"f": np.linalg.eigvals, "x": a}, result=absw)}, 1e-6),
        "eigb": ({"pullback": Impl("f(x)", {"f": eigvals, "x": pnp.asarray(ab)}, result=absw),
                  "numpy": Impl("f(x)", {"f": np.linalg.eigvals, "x": ab}, result=absw)}, 1e-3),
        "schur": ({"pullback": Impl("f(x)", {"f": pb.jit(lambda x: psl.schur(x)[0]),
                                             "x": pnp.asarray(a)},
                                    result=lambda r: np.sort(np.abs(np.diagonal(np.asarray(r))))),
                   "numpy": Impl("f(x)", {"f": lambda x: sl.schur(x)[0], "x": a},
                                 result=lambda r: np.sort(np.abs(np.diagonal(r))))}, 1e-6),
        "tsolve": ({"pullback": Impl("f(a, b, c, r)", {
            "f": pb.jit(pll.tridiagonal_solve), "a": pnp.asarray(dl), "b": pnp.asarray(d),
            "c": pnp.asarray(du), "r": pnp.asarray(rhs)}, result=np.asarray)}, 1e-8),
        "expm": ({"pullback": Impl("f(x)", {"f": pb.jit(psl.expm), "x": pnp.asarray(e)},
                                   result=np.asarray),
                  "numpy": Impl("f(x)", {"f": sl.expm, "x": e})}, 1e-8),
    }
    if _fw(fws, "torch"):
        torch = importlib.import_module("torch")
        for key, x in (("eig", a), ("eigb", ab)):
            impls[key][0]["torch"] = Impl("f(x)", {"f": torch.linalg.eigvals,
                                                   "x": torch.from_numpy(x)},
                                          result=lambda r: np.sort(np.abs(r.numpy()), axis=-1))
        impls["expm"][0]["torch"] = Impl("f(x)", {"f": torch.linalg.matrix_exp,
                                                  "x": torch.from_numpy(e)},
                                         result=lambda r: r.numpy())
    if _fw(fws, "jax"):
        jax = importlib.import_module("jax")
        jax.config.update("jax_enable_x64", True)
        jnp = jax.numpy
        jsl = importlib.import_module("jax.scipy.linalg")
        sync = lambda r: r.block_until_ready()  # noqa: E731
        jeig = jax.jit(jnp.linalg.eigvals)
        impls["eig"][0]["jax"] = Impl("f(x)", {"f": jeig, "x": jnp.asarray(a)}, sync=sync,
                                      result=absw)
        impls["eigb"][0]["jax"] = Impl("f(x)", {"f": jeig, "x": jnp.asarray(ab)}, sync=sync,
                                       result=absw)
        impls["schur"][0]["jax"] = Impl("f(x)", {"f": jax.jit(lambda x: jsl.schur(x)[0]),
                                                 "x": jnp.asarray(a)}, sync=sync,
                                        result=lambda r: np.sort(np.abs(np.diagonal(
                                            np.asarray(r)))))
        impls["tsolve"][0]["jax"] = Impl("f(a, b, c, r)", {
            "f": jax.jit(jax.lax.linalg.tridiagonal_solve), "a": jnp.asarray(dl),
            "b": jnp.asarray(d), "c": jnp.asarray(du), "r": jnp.asarray(rhs)}, sync=sync,
            result=np.asarray)
        impls["expm"][0]["jax"] = Impl("f(x)", {"f": jax.jit(jsl.expm), "x": jnp.asarray(e)},
                                       sync=sync, result=np.asarray)
    names = {"eig": "eigvals 256x256 float64", "eigb": "eigvals, 4096 x 8x8 float32",
             "schur": "schur 256x256 float64",
             "tsolve": f"tridiagonal_solve, {m} systems of {m} float64",
             "expm": "expm 64x64 float64"}
    refs = {"eig": "numpy", "eigb": "numpy", "schur": "numpy", "tsolve": "pullback",
            "expm": "numpy"}
    return [Case("linalg_eig", names[k], impls[k][0], "us", rtol=impls[k][1],
                 reference=refs[k]) for k in names]
