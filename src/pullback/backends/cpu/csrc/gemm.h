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
/* What a call of pb_sgemm may do besides the product (NULL: nothing).
 * - done(ctx, r0, r1, rows) is called on the calling thread as soon as rows [r0, r1) of the
 *   product are final (a strip of at most 14 rows; in order on each thread), so that an
 *   epilogue can read them while they are in cache; rows points at row r0, rows c's row stride
 *   apart.
 * - unread: nothing but done reads the product, so a strip may be a thread-local scratch
 *   instead of c's rows (c is then never written).
 * - product: nonzero, the same for every call on one product and never reused
 *   (pb_sgemm_product_id): a thread packs each block of B once for all its calls on it (0:
 *   the call is a product of its own, each block packed once for all its strips).
 * - claim: several threads share the product, each calling pb_sgemm on the whole of it with
 *   the same options (product id included; *claim starting at 0): each runs only the passes
 *   over strips of rows it takes from *claim, so a thread that runs late, or is descheduled,
 *   leaves its share to the others instead of holding them up. Where a strip takes more than
 *   one pass (pb_sgemm_claim_tasks), passes[s] (zeroed) counts strip s's finished ones. */
typedef void (*pb_rows_done_fn)(void *ctx, npy_intp r0, npy_intp r1, const char *rows);
typedef struct {
  pb_rows_done_fn done;
  void *ctx;
  bool unread;
  uint64_t product;
  _Atomic npy_intp *claim, *passes;
} pb_sgemm_opts;
uint64_t pb_sgemm_product_id(void);
/* the passes a claimed (M, N) = (M, K) @ (K, N) product's threads take in all; *counters: the
 * passes counters it needs, 0 when each strip is one pass (one block of B: N <= 512,
 * K <= 512), else one per strip of rows */
npy_intp pb_sgemm_claim_tasks(npy_intp M, npy_intp N, npy_intp K, npy_intp *counters);
/* c (+)= a @ b for one batch element pb_sgemm_takes accepted (or a chunk of it): 0, or -1 when
 * out of memory. No GIL needed. */
int pb_sgemm(npy_intp M, npy_intp N, npy_intp K, const char *a, const npy_intp *as, const char *b,
             const npy_intp *bs, char *c, const npy_intp *cs, int acc, const pb_sgemm_opts *o);
/* turns the own kernel off (tests compare it with BLAS); returns the previous setting */
bool pb_sgemm_set_enabled(bool on);
/* blocks of B packed since the process started */
uint64_t pb_sgemm_blocks_packed(void);

#endif
