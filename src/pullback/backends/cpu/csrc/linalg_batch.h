/* The batch helpers of the LAPACK kernels (linalg.c, linalg_eig.c, linalg_spectral.c): dtype to
 * LAPACK prefix, batch offsets, the tiled matrix copy, how many threads split a batch, the batch
 * loop that holds OpenBLAS to one thread per OpenMP thread, NaN fills and per-thread scratch.
 *
 * Batches: one kernel call loops over the leading dimensions. With more than one matrix and
 * threads to spare the batch is split over OpenMP threads, each running LAPACK held to one
 * thread (OpenBLAS's per-thread setting, dot.c's pb_blas_local_threads); a single matrix runs
 * LAPACK with the caller's thread allowance instead. Without the per-thread setting the batch
 * is not split (BLAS is never called inside an OpenMP region it could thread again). */
#ifndef PB_LINALG_BATCH_H
#define PB_LINALG_BATCH_H
#include "pb.h"
#include "kernel_abi.h"
#include "schedule.h"
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum { S, D, C, Z }; /* LAPACK's prefixes, the order of each file's name tables */

/* The LAPACK prefix of a dtype code, or -1 */
static inline int prefix_of(int dtype) {
  switch (dtype) {
  case PB_F32: return S;
  case PB_F64: return D;
  case PB_C64: return C;
  case PB_C128: return Z;
  default: return -1;
  }
}

/* Byte offset of batch element i of operand o whose last `core` dims are the matrix. */
static inline int64_t batch_offset(const pb_operand *o, int core, int64_t i) {
  int64_t off = 0;
  for (int d = o->ndim - core - 1; d > 0; --d) {
    off += (i % o->shape[d]) * o->strides[d];
    i /= o->shape[d];
  }
  /* the outermost index needs no division (a batch of small matrices computes 32 offsets per
   * group of 16: the divisions were 5% of a triangular solve) */
  return o->ndim > core ? off + i * o->strides[0] : off;
}

static inline int64_t batch_count(const pb_operand *o, int core) {
  int64_t n = 1;
  for (int d = 0; d < o->ndim - core; ++d) n *= o->shape[d];
  return n;
}

/* dst[i, j] = src[i, j] for an r x c matrix, byte strides per side; conj flips the imaginary
 * parts (es = 8 or 16 complex when cplx). A transposing copy runs in 32 x 32 tiles: a
 * power-of-two row length otherwise maps every column's writes to one cache set (lu of 256 x
 * 256 took 7x LAPACK's time untiled). */
#define PB_COPY_TILE(T)                                                                           \
  for (int64_t i = i0; i < i1; ++i)                                                               \
    for (int64_t j = j0; j < j1; ++j)                                                             \
      memcpy(dst + i * drs + j * dcs, src + i * srs + j * scs, sizeof(T));
typedef struct { double re, im; } pb_z;
static inline void copy_matrix(char *dst, int64_t drs, int64_t dcs, const char *src, int64_t srs,
                               int64_t scs, int64_t r, int64_t c, int es, int cplx, int conj) {
  if (dcs == es && scs == es && !(conj && cplx)) { /* rows contiguous on both sides */
    for (int64_t i = 0; i < r; ++i) memcpy(dst + i * drs, src + i * srs, (size_t)(c * es));
    return;
  }
  enum { TB = 32 };
  for (int64_t i0 = 0; i0 < r; i0 += TB)
    for (int64_t j0 = 0; j0 < c; j0 += TB) {
      const int64_t i1 = i0 + TB < r ? i0 + TB : r, j1 = j0 + TB < c ? j0 + TB : c;
      switch (es) {
      case 4: PB_COPY_TILE(float) break;
      case 8: PB_COPY_TILE(double) break;
      default: PB_COPY_TILE(pb_z) break;
      }
    }
  if (conj && cplx)
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        char *d = dst + i * drs + j * dcs;
        if (es == 8) ((float *)d)[1] = -((float *)d)[1];
        else ((double *)d)[1] = -((double *)d)[1];
      }
}

/* How many threads split a batch of nb matrices of `flops` each: >1 only with OpenBLAS's
 * per-thread setting (each thread then runs LAPACK on one thread). */
static inline int batch_threads(const pb_kernel_ctx *ctx, int64_t nb, double flops) {
  if (nb < 2 || ctx->threads <= 1) return 1;
  /* about 20 us of work per thread before a split pays; a small matrix costs LAPACK's call
   * overhead (~0.3 us) plus its flops at ~2 GFlop/s */
  const double ns = 300.0 + flops / 2.0;
  const int64_t grain = ns >= 2e4 ? 1 : (int64_t)(2e4 / ns) + 1;
  const int t = pb_kernel_threads(ctx, nb, grain);
  if (t <= 1) return 1;
  const int old = pb_blas_local_threads(1); /* probe: can threads be pinned? */
  if (old < 0) return 1;
  pb_blas_local_threads(old);
  return t;
}

#ifdef _OPENMP
#define PB_PRAGMA(x) _Pragma(#x)
#define OMP_FOR(t) PB_PRAGMA(omp parallel for num_threads(t) schedule(dynamic) if ((t) > 1))
/* contiguous shares of a batch of small matrices: one schedule decision per thread, and no
 * two threads writing neighbouring matrices */
#define OMP_FOR_STATIC(t) PB_PRAGMA(omp parallel for num_threads(t) schedule(static) if ((t) > 1))
#define THREAD_ID omp_get_thread_num()
#else
#define OMP_FOR(t)
#define OMP_FOR_STATIC(t)
#define THREAD_ID 0
#endif

/* LAPACK's threads for one matrix of `flops` on the calling thread: threaded OpenBLAS spin-waits
 * at every synchronisation for a descheduled thread (getrf of 256x256 took 420 ms instead of
 * 0.9 ms on a loaded 2-core machine), so below ~0.2 GFlop a matrix runs on one thread. At
 * 0.2 an inv of 512x512 (2n^3 = 0.27 GFlop) uses both threads, as SciPy's does (at one thread
 * it measured 1.06x SciPy's time on an idle machine). */
static inline int solo_threads(const pb_kernel_ctx *ctx, double flops) {
  return flops >= 2e8 && ctx->threads > 1 ? ctx->threads : 1;
}

/* Runs body(i, tid) for i in [0, nb): split over `threads` threads (LAPACK held to one thread
 * in each), or on the calling thread with LAPACK at the caller's allowance. */
#define FOR_BATCH(ctx, nb, threads, flops_, ...)                                                  \
  do {                                                                                            \
    if ((threads) > 1) {                                                                          \
      OMP_FOR(threads)                                                                            \
      for (int64_t i = 0; i < (nb); ++i) {                                                        \
        const int tid = THREAD_ID;                                                                \
        const int old_ = pb_blas_local_threads(1);                                                \
        __VA_ARGS__;                                                                              \
        if (old_ >= 0) pb_blas_local_threads(old_);                                               \
      }                                                                                           \
    } else {                                                                                      \
      const int tid = 0;                                                                          \
      const int old_ = pb_blas_local_threads(solo_threads(ctx, flops_));                          \
      for (int64_t i = 0; i < (nb); ++i) { __VA_ARGS__; }                                         \
      if (old_ >= 0) pb_blas_local_threads(old_);                                                 \
    }                                                                                             \
  } while (0)

/* NaN in n elements of dtype (complex: NaN + 0i, as JAX's full_like(nan)) */
static inline void fill_nan(char *p, int64_t n, int dtype) {
  for (int64_t k = 0; k < n; ++k) switch (dtype) {
    case PB_F32: ((float *)p)[k] = NAN; break;
    case PB_F64: ((double *)p)[k] = NAN; break;
    case PB_C64: ((float *)p)[2 * k] = NAN; ((float *)p)[2 * k + 1] = 0.0f; break;
    default: ((double *)p)[2 * k] = NAN; ((double *)p)[2 * k + 1] = 0.0; break;
    }
}

/* Per-thread scratch of `bytes` each: thread t's block at (*blocks)[t]. 0, or an error set on
 * ctx. */
static inline int thread_scratch(pb_kernel_ctx *ctx, int threads, size_t bytes,
                                 char ***blocks) {
  char **b = ctx->scratch(ctx, sizeof(char *) * (size_t)threads);
  if (!b) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
  for (int t = 0; t < threads; ++t)
    if (!(b[t] = ctx->scratch(ctx, bytes ? bytes : 64)))
      return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
  *blocks = b;
  return 0;
}

/* 0 once the file's LAPACK pointers are loaded (its prepare hook, with the GIL held, before any
 * kernel can first run), or -1 with ctx's error set (a caller that skipped the hook) */
static inline int lapack_ready(pb_kernel_ctx *ctx, atomic_int *loaded) {
  if (atomic_load_explicit(loaded, memory_order_acquire)) return 0;
  return pb_kernel_fail(ctx, PB_KERNEL_ERUNTIME, "SciPy's LAPACK is not loaded"), -1;
}

#endif
