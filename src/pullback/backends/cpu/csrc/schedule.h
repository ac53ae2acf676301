/* The compiled-program executor (schedule.c) and the C-level accessors it takes from the kernel
 * families: each family exposes its existing inner loops and runners, never a copy of them. */
#ifndef PB_SCHEDULE_H
#define PB_SCHEDULE_H
#include "pb.h"
#include "gemm.h"

/* ---- accessors into the kernel families (no GIL needed unless stated) ---- */

/* elementwise.c: the loop of table row `op` for dtype slot `slot` (NULL if none); the number of
 * rows; the select_n loop for a `which` slot (bool/int32) and an element size, with its params. */
int pb_ewise_nops(void);
pb_loop_fn pb_ewise_loop(int op, int slot);
npy_intp pb_ewise_grain(int op);
int pb_ewise_nin(int op);
int pb_ewise_row(const char *name); /* the table row of an op by name, -1 if none */
pb_loop_fn pb_select_loop(int which_slot, npy_intp itemsize);
/* the float32 loop y = f(a) OP b of unary row `op` (vecmath.h's pairs; NULL if it has none),
 * variant 0: f + b, 1: f - b, 2: b - f, 3: f * b */
pb_loop_fn pb_pair_loop(int op, int variant);
typedef struct { int first, count; int64_t last; } pb_select_params; /* = select_params */
#define PB_SELECT_MAX 6

/* cast.c: the conversion loop between two cast slots (pb_cast_slot numbering), NULL if none. */
pb_loop_fn pb_cast_loop(int src, int dst);
int pb_cast_nslots(void);

/* dot.c: load SciPy's BLAS (needs the GIL; -1 with an exception). */
int pb_dot_prepare(void);
/* dot.c: the function pointers SciPy's Cython module `module` exports as names[0..n) (needs the
 * GIL; -1 with an ImportError naming `who`), and OpenBLAS's thread count for the calling thread
 * (returns the previous count, -1 when it cannot be set; after pb_dot_prepare). */
int pb_capsule_pointers(const char *who, const char *module, const char *const *names, int n,
                        void **out);
int pb_blas_local_threads(int n);
/* out (Bt, M, N) = a (Bt, M, K) @ b (Bt, K, N), byte strides (batch, row, col) per operand, dtype
 * cast slots sa, sb, so (matmul's rules). Runs on the calling thread (plus OpenMP/BLAS threads);
 * no GIL needed. 0, or -1 when out of memory / no kernel for the dtypes. */
int pb_matmul_raw(int sa, int sb, int so, npy_intp Bt, npy_intp M, npy_intp N, npy_intp K,
                  const char *a, const npy_intp *as, const char *b, const npy_intp *bs, char *c,
                  const npy_intp *cs);

int pb_matmul_acc(int slot, npy_intp M, npy_intp N, npy_intp K, const char *a, const npy_intp *as,
                  const char *b, const npy_intp *bs, char *c, const npy_intp *cs, int acc);

/* dot.c: a large BLAS product cut into independent chunks for the executor's thread pool:
 * pb_matmul_chunks fills the job and returns the number of chunks (0: run pb_matmul_raw
 * instead, or -1: out of memory; with claim_only, 0 unless the threads would take strips of
 * rows of it, see pb_matmul_job.claim); pb_matmul_chunk runs one (BLAS single-threaded on the
 * calling thread); pb_matmul_done finishes the job after all chunks ran. A product whose shared
 * dimension K dwarfs the output (a gradient summed over a batch or a sequence) is cut along K
 * (by_k): chunk 0 sums into c, the others into partial buffers that pb_matmul_done adds. */
typedef struct {
  int slot, by_rows, by_k, own; /* own: float32 through gemm.c's kernel (pb_sgemm_takes) */
  npy_intp es, Bt, M, N, K, chunks; /* es: bytes per element */
  const char *a, *b;
  char *c;
  char *partial;              /* by_k: chunks - 1 contiguous (M, N) partial products */
  npy_intp as[3], bs[3], cs[3];
  /* claim: own, cut in rows; every chunk is then the whole product, of which a thread runs the
   * strips it takes (pb_sgemm_opts: product, claim = &taken, passes), tasks of them in all */
  int claim;
  uint64_t product;
  _Atomic npy_intp taken, *passes;
  npy_intp tasks;
} pb_matmul_job;
npy_intp pb_matmul_chunks(pb_matmul_job *j, int sa, int sb, int so, npy_intp Bt, npy_intp M,
                          npy_intp N, npy_intp K, const char *a, const npy_intp *as,
                          const char *b, const npy_intp *bs, char *c, const npy_intp *cs,
                          int threads, bool claim_only);
/* pb_matmul_chunk returns 0 (or -1 when out of memory); when done is given and the chunk's rows
 * finish strip by strip (the own kernel cutting rows), it calls done(ctx, r0, r1, rows) for
 * each as they do (rows of the whole product, at `rows`: see pb_sgemm, also for `unread`) and
 * returns 1 */
int pb_matmul_chunk(pb_matmul_job *j, npy_intp t, pb_rows_done_fn done, void *ctx,
                    bool unread);
/* one (M, N) = (M, K) @ (K, N) product by the own kernel with done(ctx, r0, r1, rows) called as
 * rows become final: 1, or 0 when the own kernel does not take it (nothing done), -1 out of
 * memory */
int pb_matmul_rows(int sa, int sb, int so, npy_intp M, npy_intp N, npy_intp K, const char *a,
                   const npy_intp *as, const char *b, const npy_intp *bs, char *c,
                   const npy_intp *cs, pb_rows_done_fn done, void *ctx, bool unread);
void pb_matmul_done(pb_matmul_job *j);
/* the batch element and the [lo, hi) rows (by_rows) or columns chunk t covers */
void pb_matmul_chunk_range(const pb_matmul_job *j, npy_intp t, npy_intp *bi, npy_intp *lo,
                           npy_intp *hi);

/* reduce.c: x (ndim, shape, byte strides) reduced by table row `op` over `reduced` axes into
 * `acc` (C-contiguous output shape in the accumulation dtype of `slot`: float32 for halves);
 * when `out` differs from acc, the result is rounded into out (C-contiguous, dtype `slot`).
 * 0, or -1 when out of memory. No GIL needed. */
int pb_reduce_nops(void);
#define PB_REDUCE_SUM 0 /* the table row of reduce_sum */
int pb_reduce_raw(int op, int slot, int ndim, const npy_intp *shape, const npy_intp *xstrides,
                  const bool *reduced, const char *x, char *acc, char *out);
int pb_reduce_supported(int op, int slot);
/* the (x, acc) loop of row `op` when slot accumulates in its own dtype (NULL otherwise), and
 * its identity element written to dst (returns its size, 0 when none) */
pb_loop_fn pb_reduce_loop(int op, int slot);
npy_intp pb_reduce_identity(int op, int slot, char *dst);

/* schedule.c: the Program type, for callpath.c */
extern PyObject *pb_layout_error;
PyObject *pb_program_run(PyObject *p, PyObject *const *args, Py_ssize_t n);
PyTypeObject *pb_program_type(void);
void pb_program_arity(PyObject *p, int *nin, int *nout);
int pb_register_schedule(PyObject *m);
/* callpath.c: FastCall, JitBase, jit_setup (after pb_register_schedule: they call Programs) */
int pb_register_callpath(PyObject *m);

#endif
