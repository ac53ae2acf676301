"""The 64-bit policy, as JAX's (``jax_enable_x64``): in the default mode 64-bit data becomes
32-bit silently and an explicitly requested 64-bit dtype is truncated with JAX's warning; in x64
mode 64-bit values are kept and Python values default to 64 bits. Expectations recorded from
JAX 0.10.2 in each mode."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import pullback as pb
import pullback.lax as lax
import pullback.numpy as jnp
from pullback import random

F64_WARNING = ("Explicitly requested dtype float64 requested in {} is not available, and will "
               "be truncated to dtype float32")


def _no_warning(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


_X = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], np.float32)
_I = np.array([1, 0, 1, 3], np.int32)

# (what, computation, dtype in the default mode, dtype in x64 mode)
DATA = [
    ("numpy float64", lambda: jnp.asarray(np.ones(3)), np.float32, np.float64),
    ("numpy int64", lambda: jnp.asarray(np.ones(3, np.int64)), np.int32, np.int64),
    ("numpy uint64", lambda: jnp.asarray(np.ones(3, np.uint64)), np.uint32, np.uint64),
    ("numpy complex128", lambda: jnp.asarray(np.ones(3, np.complex128)), np.complex64,
     np.complex128),
    ("numpy float64 scalar", lambda: jnp.ones(3) * np.float64(2), np.float32, np.float64),
    ("numpy operand", lambda: jnp.ones(3, np.float32) + np.ones(3), np.float32, np.float64),
    ("Python float", lambda: jnp.asarray(1.5), np.float32, np.float64),
    ("Python int", lambda: jnp.asarray(3), np.int32, np.int64),
    ("Python list", lambda: jnp.asarray([1.0, 2.0]), np.float32, np.float64),
    ("zeros", lambda: jnp.zeros(3), np.float32, np.float64),
    ("zeros(float)", lambda: jnp.zeros(3, float), np.float32, np.float64),
    ("arange", lambda: jnp.arange(3), np.int32, np.int64),
    ("linspace", lambda: jnp.linspace(0, 1, 3), np.float32, np.float64),
    ("jit of numpy float64", lambda: pb.jit(lambda x: x * 2)(np.ones(3)), np.float32, np.float64),
    ("jit of numpy int64", lambda: pb.jit(lambda x: x * 2)(np.ones(3, np.int64)), np.int32,
     np.int64),
    ("grad of numpy float64", lambda: pb.grad(lambda x: (x ** 2).sum())(np.ones(3)), np.float32,
     np.float64),
    ("uniform", lambda: random.uniform(random.key(0), (2,)), np.float32, np.float64),
    ("int / int", lambda: jnp.arange(3) / 2, np.float32, np.float64),
    # indices and integer accumulations take the default int (jnp.int_), as JAX's
    ("argmax", lambda: jnp.argmax(_X), np.int32, np.int64),
    ("argmin axis", lambda: jnp.argmin(_X, axis=1), np.int32, np.int64),
    ("nanargmax", lambda: jnp.nanargmax(_X), np.int32, np.int64),
    ("argsort", lambda: jnp.argsort(_X), np.int32, np.int64),
    ("lexsort", lambda: jnp.lexsort((_X[0], _X[1])), np.int32, np.int64),
    ("nonzero", lambda: jnp.nonzero(_X)[0], np.int32, np.int64),
    ("argwhere", lambda: jnp.argwhere(_X), np.int32, np.int64),
    ("unique inverse", lambda: jnp.unique(_I, return_inverse=True)[1], np.int32, np.int64),
    ("unique counts", lambda: jnp.unique_counts(_I).counts, np.int32, np.int64),
    ("intersect1d indices", lambda: jnp.intersect1d(_I, _I, return_indices=True)[1], np.int32,
     np.int64),
    ("count_nonzero", lambda: jnp.count_nonzero(_X), np.int32, np.int64),
    ("tril_indices", lambda: jnp.tril_indices(3)[0], np.int32, np.int64),
    ("diag_indices", lambda: jnp.diag_indices(3)[0], np.int32, np.int64),
    ("sum of int8", lambda: jnp.sum(_I.astype(np.int8)), np.int32, np.int64),
    ("sum of int32", lambda: jnp.sum(_I), np.int32, np.int64),
    ("prod of uint16", lambda: jnp.prod(_I.astype(np.uint16)), np.uint32, np.uint64),
    ("sum of uint32", lambda: jnp.asarray(_I, np.uint32).sum(), np.uint32, np.uint64),
    ("cumsum of bool", lambda: jnp.cumsum(_X > 1), np.int32, np.int64),
    ("cumsum of int32", lambda: jnp.cumsum(_I), np.int32, np.int32),
    ("argpartition", lambda: jnp.argpartition(_I, 1), np.int32, np.int32),
    ("searchsorted", lambda: jnp.searchsorted(_I, 1), np.int32, np.int32),
    ("permutation", lambda: random.permutation(random.key(0), 4), np.int32, np.int64),
    ("categorical", lambda: random.categorical(random.key(0), jnp.zeros(3, np.float32)),
     np.int32, np.int64),
]


@pytest.mark.x32
@pytest.mark.parametrize("what, fn, x32, x64", DATA, ids=[d[0] for d in DATA])
def test_default_mode_is_32_bit(what, fn, x32, x64):
    assert _no_warning(fn).dtype == x32


@pytest.mark.parametrize("what, fn, x32, x64", DATA, ids=[d[0] for d in DATA])
def test_x64_mode_keeps_64_bits(what, fn, x32, x64):
    assert _no_warning(fn).dtype == x64


REQUESTS = [
    ("asarray", lambda: jnp.asarray([1.0, 2.0], dtype=jnp.float64)),
    ("asarray", lambda: jnp.array(1.0, dtype="float64")),
    ("zeros", lambda: jnp.zeros(3, jnp.float64)),
    ("ones", lambda: jnp.ones(3, np.float64)),
    ("astype", lambda: jnp.ones(3).astype(jnp.float64)),
    ("convert_element_type", lambda: lax.convert_element_type(jnp.ones(3), jnp.float64)),
    ("sum", lambda: jnp.sum(jnp.ones(3), dtype=jnp.float64)),
]


@pytest.mark.x32
@pytest.mark.parametrize("where, fn", REQUESTS, ids=[f"{w}{i}" for i, (w, _) in
                                                       enumerate(REQUESTS)])
def test_explicit_64_bit_request_warns_and_truncates(where, fn):
    with pytest.warns(UserWarning, match=F64_WARNING.format(where)):
        assert fn().dtype == np.float32


@pytest.mark.parametrize("where, fn", REQUESTS, ids=[f"{w}{i}" for i, (w, _) in
                                                       enumerate(REQUESTS)])
def test_explicit_64_bit_request_is_kept_with_x64(where, fn):
    assert _no_warning(fn).dtype == np.float64


@pytest.mark.x32
def test_random_request_warns_as_jax():
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64 is not available"):
        assert random.uniform(random.key(0), (2,), dtype=jnp.float64).dtype == np.float32


@pytest.mark.x32
def test_python_int_out_of_int32_range_overflows():
    with pytest.raises(OverflowError):
        jnp.asarray(2 ** 40)
    with pb.enable_x64():
        assert jnp.asarray(2 ** 40).dtype == np.int64


@pytest.mark.x32
def test_context_manager_around_jit_and_grad():
    f = pb.jit(lambda x: x * 2 + jnp.ones(3))  # jnp.ones follows the mode
    x = np.arange(3.0)
    assert f(x).dtype == np.float32
    with pb.enable_x64():
        assert f(x).dtype == np.float64  # retraced: the mode is part of the cache key
        g = pb.grad(lambda x: jnp.sum(jnp.sin(x)))(x)
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, np.cos(x), rtol=1e-15)
        kept = jnp.asarray(np.ones(2))
    assert f(x).dtype == np.float32
    assert kept.dtype == np.float64  # an existing 64-bit Array stays so (as JAX)
    assert not pb.config.jax_enable_x64


def test_environment_variable_is_read_at_import():
    code = "import pullback as pb, numpy as np, pullback.numpy as jnp; " \
           "print(pb.config.jax_enable_x64, jnp.asarray(np.ones(2)).dtype)"
    for value, want in (("1", "True float64"), ("0", "False float32")):
        env = {**os.environ, "JAX_ENABLE_X64": value}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.split("\n")[0]
        assert out == want
