"""PRNG keys: raw uint32[2] keys (``PRNGKey``) and typed key arrays (``key``).

A typed key array is a small pytree whose one leaf is its key data, uint32[*shape, 2], so it
passes through ``jit`` (and later ``vmap``/``grad``) like any array. Every function of
``pullback.random`` accepts either kind and returns keys of the kind it was given, as JAX does.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..lax._random_bits import random_seed
from ..tracer import core, dtypes
from ..tracer.array import Array
from ..tracer.pytree import register_pytree_node

IMPL = "threefry2x32"


class KeyTy:
    """The dtype of typed threefry key arrays, printed ``key<fry>`` as in JAX."""

    __slots__ = ()
    name = "key<fry>"
    impl = IMPL

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, KeyTy)

    def __hash__(self) -> int:
        return hash(KeyTy)


key_dtype_fry = KeyTy()


class PRNGKeyArray:
    """An array of typed PRNG keys, of shape ``key_data.shape[:-1]``.

    Create one with :func:`key` or :func:`wrap_key_data`; read its bits with :func:`key_data`.
    """

    __slots__ = ("_base_array",)

    def __init__(self, data: Any):
        self._base_array = data

    shape = property(lambda self: tuple(self._base_array.shape[:-1]))
    ndim = property(lambda self: len(self._base_array.shape) - 1)
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    dtype = property(lambda self: key_dtype_fry)

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of unsized object (a 0-d key array)")
        return self.shape[0]

    def __iter__(self) -> Iterator["PRNGKeyArray"]:
        if not self.ndim:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx: Any) -> "PRNGKeyArray":
        idx = idx if isinstance(idx, tuple) else (idx,)
        # the trailing key-data axis is never indexed
        full = idx + (slice(None),) if Ellipsis in idx else idx + (Ellipsis, slice(None))
        data = self._base_array
        if isinstance(data, Array):
            return PRNGKeyArray(Array(data._value[full]))  # a NumPy view of concrete data
        return PRNGKeyArray(data[full])

    def reshape(self, *shape: Any) -> "PRNGKeyArray":
        """The same keys in a new shape (row-major), as ``jax.Array.reshape``."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return PRNGKeyArray(self._base_array.reshape(tuple(shape) + (2,)))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("a PRNG key array cannot be converted to a NumPy array: use "
                        "pullback.random.key_data(keys) for its uint32 data")

    def __hash__(self) -> int:
        raise TypeError("unhashable type: PRNG key array")

    def block_until_ready(self) -> "PRNGKeyArray":
        return self

    def __repr__(self) -> str:
        data = self._base_array
        if isinstance(data, core.Tracer):
            return f"Traced<key<fry>[{','.join(map(str, self.shape))}]>"
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{np.asarray(data)}"


register_pytree_node(PRNGKeyArray, lambda k: ((k._base_array,), None),
                     lambda _, children: PRNGKeyArray(children[0]))


# ---- checking keys ----

def _is_arraylike(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, Array, core.Tracer))


def check_key_data(name: str, data: Any) -> Any:
    """``data`` as a pullback value if it is valid raw threefry key data, else a TypeError."""
    aval = core.get_aval(data)
    if aval.dtype != dtypes.uint32:
        raise TypeError(f"{name}: invalid PRNG key data: expected key_data.dtype = uint32; got "
                        f"dtype={aval.dtype}")
    if aval.ndim < 1 or aval.shape[-1] != 2:
        raise TypeError(f"{name}: invalid PRNG key data: expected key_data.shape to end with "
                        f"(2,); got shape={aval.shape} for impl={IMPL}")
    return Array(np.array(data)) if isinstance(data, (np.ndarray, np.generic)) else data


def check_key(name: str, key: Any, allow_batched: bool = False) -> tuple[Any, bool]:
    """(key data, whether ``key`` was a typed key array); validates raw keys and, unless
    ``allow_batched``, that ``key`` is a single key."""
    if isinstance(key, PRNGKeyArray):
        data, typed = key._base_array, True
    elif _is_arraylike(key):
        data, typed = check_key_data(name, key), False
    else:
        raise TypeError(f"{name}: unexpected PRNG key type {type(key).__name__}: pass a key "
                        "from pullback.random.key or PRNGKey")
    if not allow_batched and len(data.shape) > 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(data.shape[:-1])} != (). Use vmap for batching.")
    return data, typed


def like_input(typed: bool, data: Any) -> Any:
    """Keys of the kind the caller passed: typed key arrays or raw key data."""
    return PRNGKeyArray(data) if typed else data


# ---- constructors ----

# JAX's other implementations: known names, but no kernels here
_OTHER_IMPLS = ("threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32")


def _check_impl(name: str, impl: Any) -> None:
    if impl is None or impl == IMPL or isinstance(impl, KeyTy):
        return
    if isinstance(impl, str) and impl in _OTHER_IMPLS:
        raise ValueError(f'{name}: argument \'impl\': the PRNG implementation "{impl}" is not '
                         f'supported on this backend (CPU); use "{IMPL}" (or None)')
    raise ValueError(f'{name}: argument \'impl\': unrecognized PRNG implementation "{impl}". '
                     f'Did you mean one of: "{IMPL}", '
                     f'{", ".join(repr(i).replace(chr(39), chr(34)) for i in _OTHER_IMPLS)}? '
                     f'(pullback supports "{IMPL}" only)')


def _seed_value(name: str, seed: Any) -> Any:
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, int):  # bool too, as in JAX
        if not -2 ** 63 <= seed < 2 ** 63:
            raise OverflowError(f"{name}: seed {seed} does not fit in a 64-bit integer")
        # JAX's default (32-bit) mode: a Python int seed is truncated to int32
        return Array(np.asarray(np.int64(seed)).astype(np.int32))
    if not _is_arraylike(seed):
        raise TypeError(f"{name}: argument 'seed' must be an integer, got {type(seed).__name__}")
    aval = core.get_aval(seed)
    if aval.ndim:
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{aval.shape} != (). Use vmap for batching")
    if not dtypes.is_integer(aval.dtype):
        raise TypeError(f"{name}: argument 'seed' must be an integer, got dtype {aval.dtype}")
    return Array(np.array(seed)) if isinstance(seed, (np.ndarray, np.generic)) else seed


def key(seed: Any, *, impl: Any = None) -> PRNGKeyArray:
    """A typed PRNG key (a scalar key array) from an integer seed.

    Args:
      seed: a scalar integer. Python ints are truncated to int32 (JAX's default mode); a 64-bit
        integer array keeps its high word (JAX's x64 mode).
      impl: None or "threefry2x32", the only implementation.

    Returns:
      A key array of shape () and dtype ``key<fry>``.
    """
    _check_impl("key", impl)
    return PRNGKeyArray(random_seed(_seed_value("key", seed)))


def PRNGKey(seed: Any, *, impl: Any = None) -> Array:
    """A raw (legacy) PRNG key, uint32[2], from an integer seed.

    Args:
      seed: a scalar integer (see :func:`key`).
      impl: None or "threefry2x32".

    Returns:
      The key data: uint32[2], (0, seed) for 32-bit seeds.
    """
    _check_impl("PRNGKey", impl)
    return random_seed(_seed_value("PRNGKey", seed))


def key_data(keys: Any) -> Array:
    """The uint32[..., 2] data of a key array (raw key data is returned as it is).

    Args:
      keys: a typed key array or raw key data, of any batch shape.

    Returns:
      The key data.
    """
    return check_key("key_data", keys, allow_batched=True)[0]


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> PRNGKeyArray:
    """A typed key array over uint32[..., 2] key data.

    Args:
      key_bits_array: uint32 data whose last dimension is 2.
      impl: None or "threefry2x32".

    Returns:
      A key array of shape ``key_bits_array.shape[:-1]``.
    """
    _check_impl("wrap_key_data", impl)
    if isinstance(key_bits_array, PRNGKeyArray) or not _is_arraylike(key_bits_array):
        raise TypeError("wrap_key_data: argument 'key_bits_array' must be a uint32 array, got "
                        f"{type(key_bits_array).__name__}")
    return PRNGKeyArray(check_key_data("wrap_key_data", key_bits_array))


def key_impl(keys: Any) -> str:
    """The name of the PRNG implementation of ``keys``.

    Args:
      keys: a typed key array or raw key data.

    Returns:
      "threefry2x32", pullback's only implementation.
    """
    check_key("key_impl", keys, allow_batched=True)
    return IMPL
