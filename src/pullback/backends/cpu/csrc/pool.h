/* The executor's thread pool (pool.c), and the floating-point mode its workers adopt. */
#ifndef PB_POOL_H
#define PB_POOL_H
#include "pb.h"

/* pool.c: the executor's thread pool. pb_pool_threads(want) starts want - 1 workers on first
 * use (GIL held) and returns the threads a job may use; pb_pool_run runs fn(ctx, chunk, tid) for
 * every chunk in [0, n), tid < pb_pool_threads(), the caller working too and waiting only for
 * chunks other threads claimed (on the calling thread alone when the pool is busy). */
typedef void (*pb_pool_fn)(void *ctx, npy_intp chunk, int tid);
int pb_pool_threads(int want);
void pb_pool_run(pb_pool_fn fn, void *ctx, npy_intp n);

/* The calling thread's floating-point mode (MXCSR on x86: rounding, flush-to-zero,
 * denormals-are-zero); pool workers adopt the caller's for each job. */
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define PB_FTZ_DAZ 0x8040u
static inline unsigned pb_get_fpmode(void) { return _mm_getcsr(); }
static inline void pb_set_fpmode(unsigned m) { if (_mm_getcsr() != m) _mm_setcsr(m); }
#else
#define PB_FTZ_DAZ 0u
static inline unsigned pb_get_fpmode(void) { return 0; }
static inline void pb_set_fpmode(unsigned m) { (void)m; }
#endif

#endif
