"""The CPU backend: C kernels in one extension module (sources in csrc/)."""
from . import kernels  # noqa: F401
