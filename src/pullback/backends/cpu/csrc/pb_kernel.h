/* pullback's kernel ABI: the one calling convention of every C kernel (docs/kernel-abi.md).
 *
 * A kernel reads input operands and writes output operands, each a strided array (data pointer,
 * dtype code, shape, byte strides: zero strides broadcast, negative ones flip), guided by a
 * packed parameter struct its primitive module defines and packs (Python's `struct`). It runs
 * without the GIL and touches no Python object: eagerly through `_cpu.call`, in a compiled
 * program as a "kernel" step. Outputs the caller allocates are C-contiguous; their initial
 * contents are undefined.
 *
 * This header needs no Python.h: user custom ops are written against it alone and registered
 * by name with `pullback.extend.register_kernel`. */
#ifndef PB_KERNEL_H
#define PB_KERNEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PB_KERNEL_ABI_VERSION 1
#define PB_KERNEL_MAXDIMS 32 /* the most dimensions an operand has */

/* Dtype codes. PB_OPAQUE: a dtype without a code (the float8 formats, ...): only its bytes,
 * pb_operand.itemsize, are known. */
enum {
  PB_OPAQUE = -1,
  PB_BOOL, PB_I8, PB_I16, PB_I32, PB_I64, PB_U8, PB_U16, PB_U32, PB_U64,
  PB_F16, PB_BF16, PB_F32, PB_F64, PB_C64, PB_C128, PB_NDT
};

typedef struct {
  void *data;             /* element 0 (other elements may lie before it: negative strides) */
  int32_t dtype;          /* a PB_* code */
  int32_t itemsize;       /* bytes per element */
  int32_t ndim;
  const int64_t *shape;   /* ndim sizes */
  const int64_t *strides; /* ndim byte strides */
} pb_operand;

/* Error kinds a kernel returns (and records with pb_kernel_fail): the caller raises the Python
 * exception of that kind with "<kernel name>: <message>". */
enum {
  PB_KERNEL_OK = 0,
  PB_KERNEL_EVALUE = 1,   /* ValueError: bad data (a value only known at run time) */
  PB_KERNEL_ENOMEM = 2,   /* MemoryError */
  PB_KERNEL_EINDEX = 3,   /* IndexError */
  PB_KERNEL_ETYPE = 4,    /* TypeError: operands or params the kernel does not accept */
  PB_KERNEL_ERUNTIME = 5  /* RuntimeError */
};

/* ctx flags */
#define PB_KERNEL_IN_PROGRAM 1u /* a step of a compiled program (else an eager call) */

typedef struct pb_kernel_ctx pb_kernel_ctx;
struct pb_kernel_ctx {
  /* Threads the kernel may use, the calling one included (OpenMP num_threads, a BLAS thread
   * count). 1 when the caller already runs it beside other work (a parallel step): a kernel
   * never starts a pool of its own then, so thread pools never nest. */
  int threads;
  uint32_t flags;
  /* Scratch memory for this call: nbytes (64-byte aligned), or NULL when out of memory. The
   * caller frees it all after the kernel returns. Call it from the calling thread only. */
  void *(*scratch)(pb_kernel_ctx *ctx, size_t nbytes);
  /* Set by pb_kernel_fail. */
  int error;
  char message[512];
  void *caller; /* the caller's own state */
  /* NULL, or set by a compiled program's kernel step that fuses an epilogue (a bias add, an
   * activation) into a kernel registered with PB_KERNEL_FOLLOWS_ROWS: the kernel may then call
   * pb_kernel_rows_done for each slice of output 0's rows (C order, a row along its last dim)
   * as soon as the slice is final, from the thread that wrote it (tid: its OpenMP thread number,
   * below `threads`), so the epilogue runs on it while it is in that core's cache; the epilogue
   * may overwrite the rows, so the kernel never reads or writes them again. It sets `followed`
   * to 1 when it reported every row, and reports none otherwise (the step then runs the
   * epilogue after it). */
  void (*rows_done)(pb_kernel_ctx *ctx, int64_t r0, int64_t r1, int tid);
  void *rows_data;
  int followed;
};

/* Rows [r0, r1) of output 0 are final (see rows_done). */
static inline void pb_kernel_rows_done(pb_kernel_ctx *ctx, int64_t r0, int64_t r1, int tid) {
  if (ctx->rows_done && r1 > r0) ctx->rows_done(ctx, r0, r1, tid);
}

/* A kernel: 0, or an error kind (after pb_kernel_fail) on failure. */
typedef int (*pb_kernel_fn)(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                            const void *params, pb_kernel_ctx *ctx);

/* Records the error message and returns kind: `return pb_kernel_fail(ctx, PB_KERNEL_EVALUE,
 * "index %d is out of range", i);` */
static inline int pb_kernel_fail(pb_kernel_ctx *ctx, int kind, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static inline int pb_kernel_fail(pb_kernel_ctx *ctx, int kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->message, sizeof ctx->message, fmt, ap);
  va_end(ap);
  ctx->error = kind;
  return kind;
}

/* Elements of an operand. */
static inline int64_t pb_operand_size(const pb_operand *o) {
  int64_t n = 1;
  for (int d = 0; d < o->ndim; ++d) n *= o->shape[d];
  return n;
}

/* Whether two operands have one shape. */
static inline int pb_operand_same_shape(const pb_operand *a, const pb_operand *b) {
  if (a->ndim != b->ndim) return 0;
  for (int d = 0; d < a->ndim; ++d)
    if (a->shape[d] != b->shape[d]) return 0;
  return 1;
}

/* The byte strides that read operand `o` broadcast to `shape` (ndim dims, o right-aligned as
 * NumPy broadcasts: size-1 and missing dims get stride 0). 0, or -1 if o does not broadcast. */
static inline int pb_operand_broadcast(const pb_operand *o, int ndim, const int64_t *shape,
                                       int64_t *strides) {
  if (o->ndim > ndim) return -1;
  for (int d = 0; d < ndim; ++d) {
    const int k = d - (ndim - o->ndim);
    if (k < 0 || o->shape[k] == 1) strides[d] = 0;
    else if (o->shape[k] == shape[d]) strides[d] = o->strides[k];
    else return -1;
  }
  return 0;
}

#ifdef __cplusplus
}
#endif
#endif
