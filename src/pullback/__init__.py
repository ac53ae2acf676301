"""pullback: JAX-style function transformations on C kernels for the CPU.

Write NumPy-style code with ``pullback.numpy``; transform it with ``jit``, ``grad``, ``vmap``,
``custom_vjp``, ``checkpoint``, the control flow of ``pullback.lax``; inspect what is traced with ``make_jaxpr``.
"""
from . import backends as _backends  # noqa: F401  (installs level-0 evaluation)
from . import dtypes, lax, numpy, tree_util  # noqa: F401
from . import nn  # noqa: F401,E402
from . import image  # noqa: F401,E402  (pullback.image, as jax.image)
from .config import config  # noqa: F401
from .config import (debug_infs, debug_nans, default_matmul_precision,  # noqa: F401
                     default_prng_impl, disable_jit, enable_x64, numpy_dtype_promotion,
                     numpy_rank_promotion, threefry_partitionable)
from .tracer.array import Array  # noqa: F401
from .tracer.avals import ShapeDtypeStruct, ShapedArray  # noqa: F401
from .tracer.errors import (ConcretizationTypeError, TracerArrayConversionError,  # noqa: F401
                            TracerBoolConversionError, TracerIntegerConversionError,
                            UnexpectedTracerError)
from .transforms.custom_derivatives import closure_convert, custom_jvp, custom_vjp  # noqa: F401
from .transforms.jacobians import hessian, jacfwd, jacrev  # noqa: F401
from .transforms.jit import jit  # noqa: F401
from .transforms.jvp import jvp  # noqa: F401
from .transforms.make_jaxpr import make_jaxpr  # noqa: F401
from .transforms.reverse import grad, linearize, value_and_grad, vjp  # noqa: F401
from .transforms.vmap import vmap  # noqa: F401
from .lax import stop_gradient  # noqa: F401
from .transforms.control_flow.policies import checkpoint_policies  # noqa: F401
from .transforms.control_flow.remat import checkpoint, remat  # noqa: F401
from . import ad_checkpoint  # noqa: F401,E402
from . import random  # noqa: F401,E402  (pullback.random, as jax.random)
from . import scipy  # noqa: F401,E402  (pullback.scipy.signal, as jax.scipy.signal)
from . import ffi  # noqa: F401,E402  (pullback.ffi, as jax.ffi: custom C kernels)
from . import io  # noqa: F401,E402  (pullback.io: safetensors checkpoints, no pickle)
from . import errors, tree, typing  # noqa: F401,E402  (as jax.errors, jax.tree, jax.typing)
from ._api import (Device, block_until_ready, clear_caches, custom_gradient,  # noqa: F401,E402
                   default_backend, default_device, device_count, device_get, device_put,
                   devices, effects_barrier, ensure_compile_time_eval, eval_shape,
                   linear_transpose, local_device_count, local_devices, named_call,
                   named_scope, print_environment_info, process_count, process_index,
                   pure_callback, typeof)
from . import debug  # noqa: F401,E402  (pullback.debug: print, callback, breakpoint)
from .tracer.dtypes import float0  # noqa: F401,E402
from .transforms.jacobians import jacrev as jacobian  # noqa: F401,E402
from .tracer.public import hide_helpers as _hide_helpers  # noqa: E402

# dir() and star imports of these list their API only, not the helpers they import (JAX's
# names, when a module re-exports a function defined elsewhere, stay)
_hide_helpers(numpy.linalg, keep=(
    "cholesky cond cross det diagonal eig eigh eigvals eigvalsh inv lstsq matmul matrix_norm "
    "matrix_power matrix_rank matrix_transpose multi_dot norm outer pinv qr slogdet solve svd "
    "svdvals tensordot tensorinv tensorsolve trace vecdot vector_norm").split())

__version__ = "0.1.0"
