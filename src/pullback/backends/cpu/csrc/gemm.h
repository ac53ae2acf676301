/* gemm.c: the own float32 matrix product (AVX-512), used by dot.c where it wins. */
#ifndef PB_GEMM_H
#define PB_GEMM_H
#include "pb.h"

/* Whether the own kernel takes this (M, N) = (M, K) @ (K, N) float32 product, strides in bytes
 * ([batch, row, column]): AVX-512 present, the size where it was measured to beat BLAS, C's
 * rows contiguous, every stride and pointer a whole float. Decided on a whole product, so that
 * all its chunks sum alike. */
bool pb_sgemm_takes(npy_intp M, npy_intp N, npy_intp K, const char *a, const npy_intp *as,
                    const char *b, const npy_intp *bs, const char *c, const npy_intp *cs);
/* c (+)= a @ b for one batch element pb_sgemm_takes accepted (or a chunk of it): 0, or -1 when
 * out of memory. No GIL needed. When done is given, done(ctx, r0, r1) is called on the calling
 * thread as soon as rows [r0, r1) of c are final (a strip of at most 14 rows, in order), so
 * that an epilogue can read them while they are in cache. */
typedef void (*pb_rows_done_fn)(void *ctx, npy_intp r0, npy_intp r1);
int pb_sgemm(npy_intp M, npy_intp N, npy_intp K, const char *a, const npy_intp *as, const char *b,
             const npy_intp *bs, char *c, const npy_intp *cs, int acc, pb_rows_done_fn done,
             void *ctx);
/* turns the own kernel off (tests compare it with BLAS); returns the previous setting */
bool pb_sgemm_set_enabled(bool on);

#endif
