"""The kernel ABI (docs/kernel-abi.md): every registered kernel runs natively in compiled
programs ("kernel" steps, no Python callbacks), equals eager, takes any strides, survives empty
operands, raises its errors cleanly and releases the GIL; user kernels written in C against
pb_kernel.h register by name (pullback.ffi) and run eagerly and under jit."""
import ctypes
import os
import shutil
import struct
import subprocess
import threading
import time

import numpy as np
import pytest

import pullback as pb
import pullback.numpy as jnp
from pullback import lax, random
from pullback.backends.cpu import kernels as K
from pullback.primitives import windows


def _equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def _unfold(x, **geometry):
    return windows.unfold_p.bind(x, **geometry)


def _fold(x, **geometry):
    return windows.fold_p.bind(x, **geometry)


_GEO = dict(kernel_size=(2, 3), stride=(1, 2), dilation=(1, 1), padding=((1, 0), (0, 1)))


def _program(x, idx, key, img):
    cols = _unfold(img, **_GEO)
    return (jnp.sort(x, -1), jnp.argsort(x, -1), *lax.top_k(x, 3), jnp.argmax(x, 1),
            jnp.argmin(x, 0), jnp.cumsum(x, 1), jnp.cumprod(x, 0), lax.cummax(x, 1),
            lax.cummin(x, 0, reverse=True), x[idx], jnp.zeros(8).at[idx].add(x[:, 0]),
            jnp.ones(8).at[idx].mul(x[:, 1]), jnp.zeros(8).at[idx].min(x[:, 2]),
            jnp.zeros(8).at[idx].max(x[:, 3]), jnp.zeros(8).at[idx].set(x[:, 4]),
            random.bits(key, (4,)), random.uniform(key, (3,)), random.normal(key, (5,)),
            random.split(key, 3), random.fold_in(key, 7),
            random.uniform(key, (4,), minval=x[0, :4], maxval=2.0),
            cols, _fold(cols, output_size=(5, 6), **_GEO))


def _args():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    idx = np.array([1, 3, 5, 0, 2, 4, 6, 1])  # a duplicate: combiners and set order matter
    img = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    return x, idx, random.PRNGKey(0), img


def test_every_kernel_runs_natively_with_no_callback_step():
    text = pb.jit(_program).lower(*_args()).compile().as_text()
    steps = [ln.strip() for ln in text.splitlines()[1:] if ln.startswith("  ") and ":" in ln
             and ln.strip().split(":")[0].isdigit()]
    assert not [s for s in steps if " call " in f" {s.split(':', 1)[1]} " or "callback" in s], text
    kernels = {s.split()[2] for s in steps if s.split()[1] == "kernel"}
    assert {"sort", "argsort", "top_k", "argmax", "argmin", "cumsum", "cumprod", "cummax",
            "cummin", "gather", "scatter-add", "scatter-mul", "scatter-min", "scatter-max",
            "scatter", "random_bits", "random_split", "random_fold_in",
            "random_uniform_range", "unfold", "fold"} <= kernels, text


def test_compiled_results_equal_eager():
    args = _args()
    for got, want in zip(pb.jit(_program)(*args), _program(*args)):
        _equal(got, want)


def test_strided_flipped_and_broadcast_operands():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 10)).astype(np.float32)
    a = pb.Array(x)
    for view, ref in [(a[::-1, ::2], x[::-1, ::2]), (a.T, x.T),
                      (jnp.broadcast_to(a[2], (4, 10)), np.broadcast_to(x[2], (4, 10)))]:
        _equal(jnp.sort(view, -1), np.sort(ref, -1))
        _equal(jnp.argsort(view, 0), np.argsort(ref, 0, kind="stable"))  # int64: x64
        np.testing.assert_allclose(np.asarray(jnp.cumsum(view, 1)), np.cumsum(ref, 1), rtol=1e-6)
        _equal(jnp.argmax(view, 1), np.argmax(ref, 1))
        _equal(lax.top_k(view, 2)[0], -np.sort(-ref, -1)[:, :2])
    # inside a program: views of an input are strided operands of the kernel steps
    f = pb.jit(lambda x: (jnp.sort(x[::-1, ::2], -1), jnp.cumsum(x.T, 1), x[:, 3][jnp.array([2, 0])]))
    got = f(x)
    _equal(got[0], np.sort(x[::-1, ::2], -1))
    np.testing.assert_allclose(np.asarray(got[1]), np.cumsum(x.T, 1), rtol=1e-6)
    _equal(got[2], x[[2, 0], 3])


def test_zero_size_operands():
    e = np.zeros((0, 5), np.float32)
    idx = np.zeros((0,), np.int32)

    def f(e, x, idx):
        return (jnp.sort(e, 0), jnp.argsort(e.T, 1), jnp.cumsum(e, 0), lax.top_k(x, 0)[0],
                x[idx], jnp.zeros(3, np.float32).at[idx].add(jnp.zeros(0, np.float32)),
                random.bits(random.PRNGKey(1), (0,)),
                _unfold(e.reshape(0, 1, 5), kernel_size=(2,), stride=(1,), dilation=(1,),
                        padding=((0, 0),)))
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = [(0, 5), (5, 0), (0, 5), (3, 0), (0, 4), (3,), (0,), (0, 1, 2, 4)]
    for outs in (f(e, x, idx), pb.jit(f)(e, x, idx)):
        assert [tuple(np.shape(o)) for o in outs] == want
        _equal(outs[5], np.zeros(3, np.float32))


def test_the_generic_entry_checks_counts_and_params():
    sort = K.kernel("sort")
    assert (sort.name, sort.nin, sort.nout, sort.params_size) == ("sort", -1, -1, 12)
    assert "sort" in K.kernel_names() and "scatter-add" in K.kernel_names()
    with pytest.raises(KeyError, match="no kernel is registered under the name 'nope'"):
        K.kernel("nope")
    with pytest.raises(ValueError, match="argsort: the kernel takes 1 inputs and 1 outputs"):
        K.call(K.kernel("argsort"), (), ((np.dtype("i4"), (1,)),), struct.pack("=2i", 0, 0))
    with pytest.raises(ValueError, match="sort: an output shape has a negative dimension"):
        K.call(sort, (np.ones(3),), ((np.dtype("f8"), (-3,)),), struct.pack("=3i", 0, 1, 0))
    with pytest.raises(TypeError, match="expected a kernel handle"):
        K.call("sort", (np.ones(3),), ((np.dtype("f8"), (3,)),), b"")


def test_large_kernels_take_the_threaded_path_and_match():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    want = np.sort(x, -1)
    _equal(jnp.sort(x, -1), want)
    _equal(pb.jit(lambda x: jnp.sort(x, -1))(x), want)
    text = pb.jit(lambda x: jnp.sort(x, -1)).lower(x).compile().as_text()
    assert "GIL released" in text.splitlines()[0]


# ---- user kernels: C against pb_kernel.h, registered through pullback.ffi ----

_SOURCE = r"""
#include <pb_kernel.h>
#include <string.h>
#include <time.h>

volatile int pb_test_entered = 0, pb_test_go = 0;

typedef struct { float scale; } scale_params;

/* out = scale * x + y (float32, any strides; y broadcasts): an error for a negative x */
int scale_add(const pb_operand *ins, int nin, pb_operand *outs, int nout, const void *params,
              pb_kernel_ctx *ctx) {
  const scale_params *P = params;
  const pb_operand *x = &ins[0], *y = &ins[1], *o = &outs[0];
  int64_t ys[PB_KERNEL_MAXDIMS], at[PB_KERNEL_MAXDIMS] = {0};
  if (x->dtype != PB_F32 || y->dtype != PB_F32 || o->dtype != PB_F32 ||
      !pb_operand_same_shape(x, o) || pb_operand_broadcast(y, o->ndim, o->shape, ys) < 0)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "expected float32 x, y and out");
  const int64_t n = pb_operand_size(o);
  float *tmp = ctx->scratch(ctx, sizeof(float) * (size_t)(n ? n : 1));
  if (!tmp) return PB_KERNEL_ENOMEM;
  for (int64_t i = 0; i < n; ++i) {
    const char *px = x->data, *py = y->data;
    for (int d = 0; d < o->ndim; ++d) { px += at[d] * x->strides[d]; py += at[d] * ys[d]; }
    const float v = *(const float *)px;
    if (v < 0) return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "negative input %g", v);
    tmp[i] = P->scale * v + *(const float *)py;
    for (int d = o->ndim - 1; d >= 0 && ++at[d] == o->shape[d]; --d) at[d] = 0;
  }
  for (int64_t i = 0; i < n; ++i) {
    char *po = o->data;
    for (int d = 0; d < o->ndim; ++d) po += at[d] * o->strides[d];
    *(float *)po = tmp[i];
    for (int d = o->ndim - 1; d >= 0 && ++at[d] == o->shape[d]; --d) at[d] = 0;
  }
  return 0;
}

/* out = x once pb_test_go is set, which Python does while this runs: only possible with the
 * GIL released (10 s at most) */
int wait_go(const pb_operand *ins, int nin, pb_operand *outs, int nout, const void *params,
            pb_kernel_ctx *ctx) {
  pb_test_entered = 1;
  for (int i = 0; i < 10000 && !pb_test_go; ++i) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  pb_test_entered = 0;
  if (!pb_test_go) return pb_kernel_fail(ctx, PB_KERNEL_ERUNTIME, "the GIL was held");
  memcpy(outs[0].data, ins[0].data, (size_t)(pb_operand_size(&ins[0]) * ins[0].itemsize));
  return 0;
}

/* (threads, flags) of the ctx, and out1 = x */
int ctx_info(const pb_operand *ins, int nin, pb_operand *outs, int nout, const void *params,
             pb_kernel_ctx *ctx) {
  ((int32_t *)outs[0].data)[0] = ctx->threads;
  ((int32_t *)outs[0].data)[1] = (int32_t)ctx->flags;
  memcpy(outs[1].data, ins[0].data, (size_t)(pb_operand_size(&ins[0]) * ins[0].itemsize));
  return 0;
}
"""


@pytest.fixture(scope="module")
def user_lib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("ffi")
    src, lib = d / "user.c", d / "libuser.so"
    src.write_text(_SOURCE)
    subprocess.run([cc, "-O1", "-shared", "-fPIC", "-std=c11", "-D_POSIX_C_SOURCE=199309L",
                    f"-I{pb.ffi.include_dir()}", str(src), "-o", str(lib)], check=True)
    so = ctypes.CDLL(str(lib))
    pb.ffi.register_ffi_target("test_scale_add", so.scale_add, nin=2, nout=1, params_size=4)
    pb.ffi.register_ffi_target("test_wait_go", so.wait_go, nin=1, nout=1)
    pb.ffi.register_ffi_target("test_ctx_info", so.ctx_info, nin=1, nout=2)
    return so


def _scale_add(x, y, scale=2.0):
    call = pb.ffi.ffi_call("test_scale_add", pb.ShapeDtypeStruct(np.shape(x), np.float32))
    return call(x, y, params=struct.pack("=f", scale))


def test_a_user_kernel_runs_eagerly_and_under_jit(user_lib):
    rng = np.random.default_rng(3)
    x = rng.random((4, 6)).astype(np.float32)
    y = rng.random(6).astype(np.float32)
    want = 2.0 * x + y
    _equal(_scale_add(x, y), want)
    f = pb.jit(lambda x, y: _scale_add(x, y) + 1)
    _equal(f(x, y), want + 1)
    text = f.lower(x, y).compile().as_text()
    assert "kernel test_scale_add" in text and "callback" not in text
    # any strides: a flipped, strided x and a broadcast y
    a = pb.Array(x)
    _equal(_scale_add(a[::-1, ::2], y[:3], 3.0), 3.0 * x[::-1, ::2] + y[:3])
    with pytest.raises(ValueError, match="ffi_call.*already registered|already registered"):
        pb.ffi.register_ffi_target("test_scale_add", user_lib.scale_add, nin=2, nout=1,
                                   params_size=4)
    with pytest.raises(ValueError, match="test_scale_add: the kernel's params are 4 bytes"):
        pb.ffi.ffi_call("test_scale_add", pb.ShapeDtypeStruct((4, 6), np.float32))(x, y)


def test_a_kernel_error_raises_cleanly_eagerly_and_inside_programs(user_lib):
    x = np.ones((3, 4), np.float32)
    x[1, 2] = -5
    y = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="^test_scale_add: negative input -5$"):
        _scale_add(x, y)
    f = pb.jit(lambda x, y: jnp.sort(_scale_add(x, y), -1))
    with pytest.raises(ValueError, match="^test_scale_add: negative input -5$"):
        f(x, y)
    _equal(f(np.abs(x), y), np.sort(2 * np.abs(x), -1))  # the program still runs after it

    def body(i, c):  # inside a loop body: the failure leaves the loop and the program
        return _scale_add(c - i, y, 1.0)
    g = pb.jit(lambda c: lax.fori_loop(0, 5, body, c))
    with pytest.raises(ValueError, match="test_scale_add: negative input -1"):
        g(np.zeros((3, 4), np.float32) + 2)
    _equal(g(np.full((3, 4), 20, np.float32)), np.full((3, 4), 10, np.float32))


@pytest.mark.parametrize("compiled", [False, True])
def test_kernels_run_without_the_gil(user_lib, compiled):
    go = ctypes.c_int.in_dll(user_lib, "pb_test_go")
    entered = ctypes.c_int.in_dll(user_lib, "pb_test_entered")
    go.value = 0
    x = np.arange(20000, dtype=np.float32)  # large enough for the GIL to be released
    call = pb.ffi.ffi_call("test_wait_go", pb.ShapeDtypeStruct(x.shape, x.dtype))
    f = pb.jit(lambda x: call(x)) if compiled else call
    if compiled:
        f.lower(x).compile()
    out: list = []
    t = threading.Thread(target=lambda: out.append(f(x)))
    t.start()
    deadline = time.monotonic() + 10
    while not entered.value and time.monotonic() < deadline:  # Python runs meanwhile
        time.sleep(0.001)
    go.value = 1
    t.join()
    assert out, "the kernel failed: the GIL was held while it ran"
    _equal(out[0], x)


def test_the_ctx_says_where_a_kernel_runs(user_lib):
    x = np.ones(3, np.float32)
    call = pb.ffi.ffi_call("test_ctx_info", [pb.ShapeDtypeStruct((2,), np.int32),
                                             pb.ShapeDtypeStruct((3,), np.float32)])
    threads, flags = np.asarray(call(x)[0])
    eager_runs_compiled = os.environ.get("PULLBACK_TEST_JIT") == "1"  # (conftest.py)
    assert threads >= 1 and flags == (1 if eager_runs_compiled else 0)
    (threads, flags), y = (np.asarray(v) for v in pb.jit(lambda x: call(x))(x))
    assert flags == 1 and threads >= 1  # PB_KERNEL_IN_PROGRAM
    _equal(y, x)
