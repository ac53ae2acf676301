/* The executor's private data structures, shared by schedule.c (running a Program) and
 * program_build.c (building and validating one). */
#ifndef PB_PROGRAM_H
#define PB_PROGRAM_H
#include "schedule.h"
#include <stdatomic.h>
#include <time.h>

enum { BUF_ARENA, BUF_INPUT, BUF_OUTPUT, BUF_CONST, NBUF };
/* step kind ids: a thunk's index in the step table (pb_step_kinds) */
enum { TH_REGION, TH_DOT, TH_REDUCE, TH_PY, TH_SCAN, TH_WHILE, TH_COND, TH_DCOPY, TH_PAR, TH_PIPE,
       TH_KERNEL, TH_N };

enum { LOOP_EWISE, LOOP_CAST, LOOP_COPY, LOOP_SELECT, LOOP_REDUCE, LOOP_PAIR };

#define RG_MAXOPND 12       /* pb_iterate's operand limit: region inputs + outputs */
#define RG_TILE 1024        /* elements per tile: a few KB per intermediate, stays in L1/L2 */
#define RG_SLOT_BYTES (RG_TILE * 16)
#define PB_NT_MIN_BYTES ((npy_intp)4 << 20) /* outputs this large are streamed (region_loop) */
#define RG_MAXSTEPIN 7
#define RG_PERIOD_MAX 256   /* longest row a periodic operand may have (rg_params) */

#define PB_MAXLOOP 4        /* nested scans (compiler/control.py's MAX_LEVELS) */

/* An operand's address: buffer (kind, index) + offset, plus, inside loops, iteration number
 * of loop lvl[l] times lstr[l] for each l < nloop (a scan's xs[i] / ys[i]). */
typedef struct {
  int kind, index;
  npy_intp offset;
  int nloop;
  int lvl[PB_MAXLOOP];
  npy_intp lstr[PB_MAXLOOP];
} ref_t;

/* A dcopy's moving dimension: its start index (a 0-d integer operand), clamped to [0, limit],
 * moves the copy's source or destination by start * stride bytes. */
typedef struct { ref_t ref; int item, is_signed; npy_intp limit, stride; } dstart_t;

typedef struct {
  pb_loop_fn fn;
  int nin;
  int opnd[RG_MAXSTEPIN + 1]; /* inputs then output: >= 0 an external; < 0 scratch slot -(id+1) */
  npy_intp item[RG_MAXSTEPIN + 1];
  int64_t prm[4];             /* the loop's parameter block */
  int nt;                     /* the output streams to memory past the caches (see region_loop) */
} rg_step;

typedef struct {
  int nsteps, nslots, ntslot; /* ntslot: the scratch slot streamed outputs are staged in */
  int ntloop;                 /* some are a loop's slices: the loop fences once at its end */
  rg_step *steps;
  char *scratch;              /* per-thread scratch, set at run time */
  /* periodic operands (bit i: operand i): rows of `period` elements broadcast over every
   * other dimension (a bias along the channels). The last two dimensions then run as one,
   * these operands read from a copy repeated in scratch slots per_slot[i], per_slot[i] + 1 */
  unsigned per;
  npy_intp period;
  int per_slot[RG_MAXOPND];
  npy_intp per_item[RG_MAXOPND];
} rg_params;

/* A region's reduction accumulator: operand `ext` (nelems contiguous elements) starts as the
 * identity of table row op for dtype slot. */
typedef struct { int ext, op, slot; npy_intp nelems; } rg_init;

struct pb_step_kind;

typedef struct thunk {
  int kind;                   /* its entry in the step table, pb_step_kinds[kind] */
  void *data;                 /* a kind's own data (kernel); the fields below are shared by the
                               * older kinds and not yet split per kind */
  int ndim;
  npy_intp *shape;            /* ndim */
  int nref;
  ref_t *refs;                /* nref */
  npy_intp *strides;          /* nref * ndim (region) or 3 per operand (dot) */
  /* region */
  rg_params rg;
  npy_intp grain;
  int ninit, nosplit;         /* accumulators to reset; never cut the space (reductions) */
  unsigned splitdims;         /* region dims its chunks may cut (bit d: dimension d) */
  rg_init *inits;
  /* dot */
  int sa, sb, so;
  npy_intp dims[4];
  struct thunk *epilogue;
  int keep;                   /* the product is read again after its epilogue: written whole */
  /* reduce (op: the table row) */
  int op, slot;
  /* a dot's epilogue that may run on each chunk's slice of the product (else 0): the operands
   * that read the product, a bit mask */
  unsigned reads;
  bool reduced[PB_MAXDIMS];
  /* py */
  PyObject *callable;
  PyArray_Descr **descrs;     /* nref */
  int *ndims;                 /* nref */
  npy_intp **shapes, **pstrides;
  int npin;
  /* scan (blocks[0] = body), while (cond, body), cond (one block per branch), par (blocks[0]:
   * independent steps run at once, one per thread) */
  int nblock;
  int *block_n;
  struct thunk **blocks;
  npy_intp length;            /* scan: iterations; pipe: iterations per chunk */
  int level, reverse;         /* scan: the loop level its slices move with; backwards */
  /* pipe (blocks[0]: the scan, blocks[1]: products and sums over its iterations): per step,
   * a product's K per iteration and the column blocks it is cut into (1 and 1 for a sum) */
  npy_intp *pipe_k;
  int *pipe_parts;
  npy_intp pipe_rper;         /* blocks[2]: a product whose rows the scan reads, rper a step */
  ref_t sel;                  /* while: the bool predicate; cond: the int32 branch index */
  /* dcopy: refs[0] source, refs[1] destination (strides: 2 x ndim), op = element size,
   * reverse = 1 when the destination moves */
  int nstart;
  dstart_t *starts;
} thunk_t;

typedef struct {
  PyArray_Descr *descr;
  int ndim;
  npy_intp shape[PB_MAXDIMS];
  npy_intp strides[PB_MAXDIMS];
  int has_strides;            /* inputs: compiled for these strides (else C-contiguous) */
  npy_intp align;             /* inputs: the data pointer must be a multiple of this */
  int donate;                 /* outputs: a donated input whose buffer it may take, or -1 */
  ref_t alias;                /* outputs: alias.kind >= 0: a view of that buffer */
  npy_intp nbytes;            /* the extent of the data: [lo, hi) from the data pointer */
  npy_intp lo, hi;
} spec_t;


typedef struct {
  PyObject_HEAD
  PyObject *name;
  npy_intp arena_bytes, scratch_bytes;
  int nstream;                /* region outputs written with streaming stores */
  char *arena;
  int busy;
  int nin, nout, nconst, nthunk;
  spec_t *in, *out;
  int strict;
  int ftz;                    /* run with subnormals flushed to zero (config jit_flush_denormals) */
  PyObject *consts;           /* tuple of ndarrays */
  thunk_t *thunks;
  int nogil;
  int max_threads;
  double *prof;               /* per-step accumulated seconds while profiling (else NULL) */
  long long prof_calls;
  PyObject *text;             /* optional description, kept for introspection */
  /* while building: the loops enclosing the thunk being parsed (their lengths) */
  int depth;
  npy_intp loop_len[PB_MAXLOOP];
} Program;

typedef struct {
  char **base[NBUF];
  int threads;                /* pool threads this run may use (1: none) */
  int tid;                    /* this thread's pool index (its slice of the region scratch) */
  PyThreadState *ts;          /* non-NULL while the GIL is released */
  const char *error;          /* a failure without the GIL: raised after reacquiring it */
  char *scratch;
  npy_intp iter[PB_MAXLOOP];  /* the running loops' iteration numbers, by level */
  const struct thunk *watch;  /* a scan that publishes its finished iterations (pipe.c) */
  _Atomic npy_intp *progress;
  void *pipe;                 /* the watched scan's pipe when it waits for its input (pipe.c) */
  struct pb_step_failure *failure; /* the run's first step failure with a message (shared) */
} run_ctx;

/* A step that failed with its own exception (a kernel's error): the first one is kept and raised
 * by run() after the steps stop, as the same exception eager execution raises. */
typedef struct pb_step_failure {
  _Atomic int set;
  int rc;
  const char *name;
  pb_kernel_ctx ctx; /* the kernel's error kind and message */
} pb_step_failure;

static inline char *pb_resolve(const run_ctx *c, const ref_t *r) {
  char *p = c->base[r->kind][r->index] + r->offset;
  for (int l = 0; l < r->nloop; ++l) p += c->iter[r->lvl[l]] * r->lstr[l];
  return p;
}

/* program_build.c */
PyObject *pb_program_new(PyTypeObject *type, PyObject *args, PyObject *kw);
void pb_program_dealloc(Program *self);

#endif
