"""Large arrays reuse freed blocks (csrc/alloc.c): a new output of the size of one just freed
takes that block instead of fresh pages, the arrays stay ordinary owning ndarrays, and the cache
stays bounded."""
import gc

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as pnp
from pullback.backends.cpu import _cpu

BIG = 1 << 20  # float32 elements: 4 MiB, over the cache's 1 MiB threshold


def _data_ptr(a) -> int:
    return np.asarray(a).__array_interface__["data"][0]


def _owner(a) -> np.ndarray:
    """The ndarray that owns a pullback Array's buffer (np.asarray gives a frozen view, whose
    base is not it: reached through the Array itself)."""
    v = a._value
    while isinstance(v.base, np.ndarray):
        v = v.base
    return v


def test_a_freed_block_is_reused_with_correct_results():
    x = pnp.asarray(np.linspace(-1, 1, BIG, dtype=np.float32))
    y = pnp.exp(x)
    ptr = _data_ptr(y)
    del y
    gc.collect()
    blocks, nbytes = _cpu.big_cache_info()
    assert blocks >= 1 and nbytes >= BIG * 4
    z = pnp.sin(x)  # the same size: the block just freed
    assert _data_ptr(z) == ptr
    np.testing.assert_allclose(np.asarray(z), np.sin(np.asarray(x)), rtol=2e-7, atol=1e-7)
    w = pb.jit(lambda v: v * 2.0 + 1.0)(x)  # compiled programs' outputs too
    del z
    gc.collect()
    w2 = pb.jit(lambda v: v * 3.0)(x)
    np.testing.assert_array_equal(np.asarray(w), np.asarray(x) * 2 + 1)
    np.testing.assert_array_equal(np.asarray(w2), np.asarray(x) * 3)


def test_reused_arrays_are_ordinary_owning_arrays():
    x = pnp.asarray(np.ones(BIG, np.float32))
    y = pnp.exp(x)
    a = _owner(y)
    del y
    assert a.flags.owndata and a.flags.c_contiguous and a.flags.writeable
    b = a.copy()
    a.resize(BIG // 2, refcheck=False)  # through the handler's realloc
    np.testing.assert_array_equal(a, b[: BIG // 2])
    a.resize(3 * BIG, refcheck=False)
    np.testing.assert_array_equal(a[: BIG // 2], b[: BIG // 2])
    del a
    gc.collect()
    y = pnp.exp(x)  # a block after a resize never serves a bigger request short
    c = _owner(y)
    c[:] = 7.0
    np.testing.assert_array_equal(c, np.full(BIG, 7.0, np.float32))


def test_the_cache_is_bounded():
    x = [pnp.asarray(np.ones(BIG + 4096 * k, np.float32)) for k in range(24)]
    ys = [pnp.exp(v) for v in x]  # 24 distinct sizes, 4-5 MiB each
    del ys
    gc.collect()
    blocks, nbytes = _cpu.big_cache_info()
    assert blocks <= 16 and nbytes <= 128 << 20


@pytest.mark.parametrize("n", [0, 1, 1000, BIG // 4 - 1])
def test_small_arrays_take_the_default_allocator(n):
    before = _cpu.big_cache_info()
    y = pnp.exp(pnp.asarray(np.zeros(n, np.float32)))
    del y
    gc.collect()
    assert _cpu.big_cache_info() == before
    np.testing.assert_array_equal(np.asarray(pnp.exp(pnp.zeros(n, np.float32))), np.ones(n))


def test_a_forked_child_allocates_from_its_copy_of_the_cache():
    import os
    x = pnp.asarray(np.ones(BIG, np.float32))
    f = pb.jit(lambda v: v * 2.0)  # compiled programs run on pullback's own pool, which a
    y = f(x)                       # child restarts (OpenMP's does not survive a fork)
    del y
    gc.collect()
    pid = os.fork()
    if pid == 0:  # the child: reuse, compute, exit without running the parent's atexit
        ok = np.array_equal(np.asarray(f(x)), np.full(BIG, 2.0, np.float32))
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
