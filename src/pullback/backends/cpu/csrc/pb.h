/* pullback CPU backend: the shared contract of every kernel family.
 *
 * Arrays cross the boundary as NumPy ndarrays (the container); kernels read any strides (zero
 * for broadcast, negative for flips) and write fresh C-contiguous outputs. Every family walks
 * memory through the one iteration scheme below (pb_iterate), with a per-dtype inner loop.
 */
#ifndef PB_H
#define PB_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifndef PB_MODULE_INIT /* module.c owns NumPy's API table; every other file imports it */
#define NO_IMPORT_ARRAY
#endif
#define PY_ARRAY_UNIQUE_SYMBOL pb_ARRAY_API
#include <numpy/arrayobject.h>
#include <stdint.h>
#include <stdbool.h>
#include "pb_kernel.h" /* the kernel ABI: operands, dtype codes (PB_BOOL..PB_C128), ctx */

#define PB_MAXDIMS PB_KERNEL_MAXDIMS
_Static_assert(sizeof(npy_intp) == sizeof(int64_t), "shapes and strides cross the ABI as int64");

/* Hot contiguous loops are compiled three times and picked at load time, so the extension is
 * built for baseline x86-64 yet uses AVX2/AVX-512 where the machine has them. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(PB_NO_CLONES)
#define PB_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PB_CLONES
#endif

/* Kernels written for AVX-512 (the sort, the float32 matrix product) are compiled for it with
 * target attributes and called only where the CPU has it. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(PB_NO_CLONES)
#define PB_HAVE_AVX512 1
#define PB_AVX512 __attribute__((target("avx512f")))
static inline bool pb_avx512_usable(void) {
  static int usable = -1;
  if (usable < 0) {
    __builtin_cpu_init();
    usable = __builtin_cpu_supports("avx512f") != 0;
  }
  return usable;
}
#else
#define PB_HAVE_AVX512 0
#endif

/* Half types. float16 is the compiler's _Float16 (IEEE binary16; conversions round to nearest
 * even). bfloat16 is carried as its uint16 bits: the upper half of a float32. Kernels compute
 * both in float32 and round once on store. */
typedef _Float16 pb_f16;
typedef uint16_t pb_bf16;

static inline float pb_bf16_to_f32(pb_bf16 b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

static inline pb_bf16 pb_f32_to_bf16(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (pb_bf16)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);                                          /* nearest even */
  return (pb_bf16)(u >> 16);
}

/* Dtype slots of the per-op loop tables: the ABI's dtype codes (pb_kernel.h). */
int pb_dtype_slot(PyArray_Descr *d);       /* -1 when the dtype has no slot */
PyArray_Descr *pb_descr_for_slot(int slot); /* new reference */
int pb_set_bf16_typenum(int typenum);       /* ml_dtypes' bfloat16 number is known at run time */

/* Rough per-element costs, as OpenMP grains: memory-bound ops need much more work per thread
 * than transcendental ones before a second thread pays (and a compiled region of cheap ops
 * alone is memory-bound: program_build.c streams its large outputs). */
#define PB_GRAIN_CHEAP 262144
#define PB_GRAIN_TRANSCENDENTAL 16384

/* The inner loop of every strided kernel: n elements, operand i starts at ptrs[i] and advances
 * by strides[i] bytes. Inputs come first, outputs last. */
typedef void (*pb_loop_fn)(char **ptrs, const npy_intp *strides, npy_intp n, const void *params);

/* Walks an ndim-dimensional index space of `shape` over nop operands whose byte strides are
 * strides[op * ndim + d]: drops size-1 dimensions, merges dimensions that are contiguous for
 * every operand, then calls fn on the innermost dimension. With `threads` > 1 the space is split
 * into that many contiguous parts run under OpenMP (fn must then be safe to run concurrently on
 * disjoint output ranges). */
void pb_iterate(int ndim, const npy_intp *shape, int nop, char *const *base,
                const npy_intp *strides, pb_loop_fn fn, const void *params, int threads);
/* pb_iterate's merged space: the dims left (-1 for an empty space), their sizes in sh and
 * dim-major strides in st (st[d * nop + op]), the innermost last */
int pb_coalesce(int ndim, const npy_intp *shape, int nop, const npy_intp *strides, npy_intp *sh,
                npy_intp *st);

/* Number of OpenMP threads worth using for `n` elements of work when one thread should get at
 * least `grain` elements (1 below that). */
int pb_threads_for(npy_intp n, npy_intp grain);

/* Argument checking shared by the entry points: raise TypeError/ValueError naming the kernel
 * and the argument, return NULL/-1. */
PyArrayObject *pb_arg_array(PyObject *obj, const char *kernel, const char *arg);
/* alloc.c: a new C-contiguous array (steals descr); large ones reuse freed blocks */
PyArrayObject *pb_new_array(int ndim, const npy_intp *shape, PyArray_Descr *descr);
/* A read-only view of x's buffer starting at `data` (steals descr; keeps x alive as the view's
 * base; the caller has checked the view stays inside x). Read-only, so that no view an Array
 * holds or hands out can write the memory other Arrays share. */
PyObject *pb_new_view(PyArrayObject *x, PyArray_Descr *descr, int nd, const npy_intp *shape,
                      const npy_intp *strides, char *data);

/* A C-contiguous copy of any strided array (new reference, NULL with an exception set). */
PyArrayObject *pb_copy(PyArrayObject *x);

/* GIL release above this many elements: below it, the ~40 ns of releasing costs more than the
 * work. */
#define PB_NOGIL_MIN 16384

/* Family registration, called once from module init. */
int pb_register_elementwise(PyObject *m);
int pb_register_reduce(PyObject *m);
int pb_register_copy(PyObject *m);
int pb_register_dot(PyObject *m);
int pb_register_view(PyObject *m);
int pb_register_cast(PyObject *m);
int pb_register_sort(PyObject *m);
int pb_register_gather(PyObject *m);
int pb_register_movement(PyObject *m);
int pb_register_alloc(PyObject *m);
int pb_register_kernel_abi(PyObject *m);

#endif
