/* The kernel registry and the callers' side of the kernel ABI (pb_kernel.h): kernel_abi.c holds
 * the registry, the `Kernel` handle type and the eager entry `call`; kernel_step.c the compiled
 * "kernel" step.
 *
 * A C file registers its kernels itself, with a table and one PB_KERNELS line:
 *
 *     static const pb_kernel_def kernels[] = {{"sort", sort_kernel, -1, -1, sizeof(sort_params)}};
 *     PB_KERNELS(kernels)
 *
 * PB_KERNELS links the table into a list at load time (a constructor function), before the
 * module initialises, so no central list names the files or their kernels. */
#ifndef PB_KERNEL_ABI_H
#define PB_KERNEL_ABI_H
#include "pb.h"

typedef struct {
  const char *name;
  pb_kernel_fn fn;
  int nin, nout;          /* operand counts, -1: any */
  int64_t params_size;    /* the exact size of the params blob in bytes */
  /* NULL, or run with the GIL held before the kernel can first run (an eager call, a compiled
   * step being built), e.g. to load library pointers through Python: 0, or -1 with a Python
   * exception set. A kernel runs without the GIL, and taking it from a worker of a parallel
   * step whose program holds it would deadlock. */
  int (*prepare)(void);
  unsigned flags;         /* PB_KERNEL_FOLLOWS_ROWS: it may report output 0's finished rows */
} pb_kernel_def;

#define PB_KERNEL_FOLLOWS_ROWS 1u /* pb_kernel.h's rows_done: a compiled step may fuse an epilogue */

typedef struct pb_kernel_table {
  const pb_kernel_def *defs;
  int n;
  struct pb_kernel_table *next;
} pb_kernel_table;

extern pb_kernel_table *pb_kernel_tables; /* every linked table (kernel_abi.c) */

#define PB_KERNELS(defs)                                                                          \
  static pb_kernel_table pb_kernel_table_ = {defs, (int)(sizeof(defs) / sizeof((defs)[0])),     \
                                             NULL};                                              \
  __attribute__((constructor)) static void pb_kernel_table_link_(void) {                         \
    pb_kernel_table_.next = pb_kernel_tables;                                                    \
    pb_kernel_tables = &pb_kernel_table_;                                                        \
  }

/* Threads worth using for n elements of work at `grain` elements per thread, within the
 * caller's allowance ctx->threads. */
static inline int pb_kernel_threads(const pb_kernel_ctx *ctx, int64_t n, int64_t grain) {
  if (ctx->threads <= 1 || n < 2 * grain) return 1;
  const int64_t t = n / grain;
  return t < ctx->threads ? (int)t : ctx->threads;
}

/* ---- for callers (GIL held unless stated) ---- */

/* The kernel a handle names (NULL with a TypeError when `handle` is not a Kernel). */
const pb_kernel_def *pb_kernel_of(PyObject *handle);
/* 0, or -1 with a ValueError when nin/nout/params_size do not fit the kernel. */
int pb_kernel_check(const pb_kernel_def *k, Py_ssize_t nin, Py_ssize_t nout,
                    Py_ssize_t params_size);
/* The ABI's dtype code of a dtype (PB_OPAQUE when it has none). */
int pb_kernel_dtype(PyArray_Descr *d);
/* A ctx for one call (no GIL needed) and its release (frees the call's scratch). */
void pb_kernel_ctx_init(pb_kernel_ctx *ctx, int threads, uint32_t flags);
void pb_kernel_ctx_release(pb_kernel_ctx *ctx);
/* Raises the Python exception of a failed call: rc's kind, "<name>: <message>". */
void pb_kernel_raise(const char *name, int rc, const pb_kernel_ctx *ctx);

#endif
