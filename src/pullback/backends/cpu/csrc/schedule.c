/* The compiled-program executor: `Program`, a list of thunks over one arena, run by one C call.
 *
 * The compiler (backends/cpu/compiler/) lowers a Jaxpr to thunks whose operands are references
 * (buffer kind, index, byte offset) plus static shapes and byte strides:
 *   arena  - the Program's one scratch block, reused across calls (64-byte aligned offsets)
 *   input  - the i-th array passed to run(). A program is compiled for its inputs' layouts: a
 *            C-contiguous one by default, or given strides (jit specializes on a non-contiguous
 *            argument's strides, so kernels read it in place, exactly as eager does). An input
 *            of another layout raises LayoutError when the program is strict or was compiled
 *            for given strides; a non-strict C-contiguous program copies it to a C-contiguous
 *            temporary instead.
 *   output - the i-th result, allocated fresh (C-contiguous) on every call, or a donated input;
 *            an output may also be a view of an input, a constant or another output (no copy)
 *   const  - an array held by the Program (any strides)
 * Thunk kinds:
 *   region - element-wise ops fused into one pass over memory: the index space is walked with
 *            pb_iterate and each row is cut into tiles; each op runs its own kernel loop on the
 *            tile, intermediates live in per-thread scratch (L1-sized), only region outputs are
 *            written to memory. A single element-wise op, a copy or a conversion is a 1-op region.
 *   dot    - batched matmul (BLAS / the own blocked kernel), optionally followed by an epilogue
 *            region run in place on its output while it is still in cache.
 *   reduce - a table reduction (reduce.c's runner) into the output.
 *   py     - a Python callback (a primitive without a native thunk yet): reacquires the GIL,
 *            calls the primitive's cpu rule on ndarray views, copies the result into its slot.
 * Every reference is checked against its buffer's extent when the Program is built, so a bad
 * schedule raises instead of touching memory it does not own. */
#include "schedule.h"
#include "cast.h"
#include "move.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <structmember.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum { BUF_ARENA, BUF_INPUT, BUF_OUTPUT, BUF_CONST, NBUF };
enum { TH_REGION, TH_DOT, TH_REDUCE, TH_PY };
enum { LOOP_EWISE, LOOP_CAST, LOOP_COPY, LOOP_SELECT, LOOP_REDUCE };

#define RG_MAXOPND 8        /* pb_iterate's operand limit: region inputs + outputs */
#define RG_TILE 1024        /* elements per tile: a few KB per intermediate, stays in L1/L2 */
#define RG_SLOT_BYTES (RG_TILE * 16)
#define RG_MAXSTEPIN 7

typedef struct { int kind, index; npy_intp offset; } ref_t;

typedef struct {
  pb_loop_fn fn;
  int nin;
  int opnd[RG_MAXSTEPIN + 1]; /* inputs then output: >= 0 an external; < 0 scratch slot -(id+1) */
  npy_intp item[RG_MAXSTEPIN + 1];
  int64_t prm[4];             /* the loop's parameter block */
} rg_step;

typedef struct {
  int nsteps, nslots;
  rg_step *steps;
  char *scratch;              /* per-thread scratch, set at run time */
} rg_params;

/* A region's reduction accumulator: operand `ext` (nelems contiguous elements) starts as the
 * identity of table row op for dtype slot. */
typedef struct { int ext, op, slot; npy_intp nelems; } rg_init;

typedef struct thunk {
  int kind;
  int ndim;
  npy_intp *shape;            /* ndim */
  int nref;
  ref_t *refs;                /* nref */
  npy_intp *strides;          /* nref * ndim (region) or 3 per operand (dot) */
  /* region */
  rg_params rg;
  npy_intp grain;
  int ninit, nosplit;         /* accumulators to reset; never cut the space (reductions) */
  rg_init *inits;
  /* dot */
  int sa, sb, so;
  npy_intp dims[4];
  struct thunk *epilogue;
  /* reduce (op: the table row); dot (op: the epilogue may run per chunk) */
  int op, slot;
  bool reduced[PB_MAXDIMS];
  /* py */
  PyObject *callable;
  PyArray_Descr **descrs;     /* nref */
  int *ndims;                 /* nref */
  npy_intp **shapes, **pstrides;
  int npin;
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

static PyObject *LayoutError;

typedef struct {
  PyObject_HEAD
  PyObject *name;
  npy_intp arena_bytes, scratch_bytes;
  char *arena;
  int busy;
  int nin, nout, nconst, nthunk;
  spec_t *in, *out;
  int strict;
  PyObject *consts;           /* tuple of ndarrays */
  thunk_t *thunks;
  int nogil;
  int max_threads;
  double *prof;               /* per-step accumulated seconds while profiling (else NULL) */
  long long prof_calls;
  PyObject *text;             /* optional description, kept for introspection */
} Program;

typedef struct {
  char **base[NBUF];
  int threads;                /* pool threads this run may use (1: none) */
  PyThreadState *ts;          /* non-NULL while the GIL is released */
  const char *error;          /* a failure without the GIL: raised after reacquiring it */
  char *scratch;
} run_ctx;

/* ---------------------------------------------------------------- the thread pool
 *
 * Programs parallelize through this pool, not OpenMP regions: a job is n independent chunks
 * handed out by an atomic counter; the calling thread works on them too and then waits only for
 * chunks other threads have actually claimed. A worker the OS has not scheduled yet simply finds
 * no chunk left when it wakes, so a busy machine costs parallelism, never a wait for a
 * descheduled thread (an OpenMP region's barrier waits for every thread: measured on 2 busy
 * cores, an MLP step took 13 ms with two OpenMP threads and 5.6 ms with one). Kernels called
 * inside a program run with one OpenMP thread (omp_set_num_threads(1) around the run). */

typedef void (*pool_fn)(void *ctx, npy_intp chunk, int tid);

static struct {
  pthread_mutex_t m, busy;
  pthread_cond_t cv;
  int nworkers, started;
  uint32_t gen;               /* the current job's generation (written under m) */
  _Atomic uint64_t next;      /* (generation << 32) | next chunk */
  _Atomic npy_intp done;
  _Atomic(pool_fn) fn;
  _Atomic(void *) ctx;
  _Atomic npy_intp n;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void pool_work(uint32_t gen, int tid) {
  for (;;) {
    uint64_t old = atomic_load_explicit(&pool.next, memory_order_acquire);
    if ((uint32_t)(old >> 32) != gen) return;
    const npy_intp n = atomic_load_explicit(&pool.n, memory_order_relaxed);
    if ((npy_intp)(old & 0xffffffffu) >= n) return;
    if (!atomic_compare_exchange_weak(&pool.next, &old, old + 1)) continue;
    /* claimed under this generation: its job stays valid until we report the chunk done */
    atomic_load(&pool.fn)(atomic_load(&pool.ctx), (npy_intp)(old & 0xffffffffu), tid);
    atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
  }
}

static void *pool_worker(void *arg) {
  const int tid = (int)(intptr_t)arg;
  uint32_t seen = 0;
  pthread_mutex_lock(&pool.m);
  seen = pool.gen;
  for (;;) {
    while (pool.gen == seen) pthread_cond_wait(&pool.cv, &pool.m);
    seen = pool.gen;
    pthread_mutex_unlock(&pool.m);
    pool_work(seen, tid);
    pthread_mutex_lock(&pool.m);
  }
  return NULL;
}

static void pool_after_fork(void) { /* the child has no workers: start them again on demand */
  pthread_mutex_init(&pool.m, NULL);
  pthread_mutex_init(&pool.busy, NULL);
  pthread_cond_init(&pool.cv, NULL);
  pool.started = 0;
  pool.nworkers = 0;
}

/* Threads a program may use (the pool's workers plus the caller), starting the workers on
 * first use; 1 when they cannot be started. Called with the GIL held. */
static int pool_threads(int want) {
  if (!pool.started) {
    pool.started = 1;
    pthread_atfork(NULL, NULL, pool_after_fork);
    for (int i = 1; i < want; ++i) {
      pthread_t th;
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      int rc = pthread_create(&th, &attr, pool_worker, (void *)(intptr_t)(pool.nworkers + 1));
      pthread_attr_destroy(&attr);
      if (rc) break;
      pool.nworkers++;
    }
  }
  return pool.nworkers + 1;
}

/* Runs fn(ctx, chunk, tid) for chunk in [0, n), tid < pool_threads(): on the pool when it is
 * free, else (another thread's program is using it) on the calling thread alone. */
static void pool_run(pool_fn fn, void *ctx, npy_intp n) {
  if (n <= 1 || pool.nworkers == 0 || n >= 0xffffffffLL || pthread_mutex_trylock(&pool.busy)) {
    for (npy_intp i = 0; i < n; ++i) fn(ctx, i, 0);
    return;
  }
  pthread_mutex_lock(&pool.m);
  const uint32_t gen = ++pool.gen;
  atomic_store(&pool.fn, fn);
  atomic_store(&pool.ctx, ctx);
  atomic_store(&pool.n, n);
  atomic_store(&pool.done, 0);
  atomic_store_explicit(&pool.next, (uint64_t)gen << 32, memory_order_release);
  pthread_cond_broadcast(&pool.cv);
  pthread_mutex_unlock(&pool.m);
  pool_work(gen, 0);
  for (int spin = 0; atomic_load_explicit(&pool.done, memory_order_acquire) < n; ++spin)
    if (spin > 64) sched_yield();
  pthread_mutex_unlock(&pool.busy);
}

/* ---------------------------------------------------------------- execution */

static inline char *resolve(const run_ctx *c, const ref_t *r) {
  return c->base[r->kind][r->index] + r->offset;
}

static void region_loop(char **p, const npy_intp *s, npy_intp n, const void *params) {
  const rg_params *r = params;
  char *scr = r->scratch; /* this thread's */
  for (npy_intp t0 = 0; t0 < n; t0 += RG_TILE) {
    const npy_intp len = n - t0 < RG_TILE ? n - t0 : RG_TILE;
    for (int k = 0; k < r->nsteps; ++k) {
      const rg_step *st = &r->steps[k];
      char *ptrs[RG_MAXSTEPIN + 1];
      npy_intp str[RG_MAXSTEPIN + 1];
      for (int i = 0; i <= st->nin; ++i) {
        const int id = st->opnd[i];
        if (id >= 0) {
          ptrs[i] = p[id] + t0 * s[id];
          str[i] = s[id];
        } else {
          ptrs[i] = scr + (size_t)(-id - 1) * RG_SLOT_BYTES;
          str[i] = st->item[i];
        }
      }
      st->fn(ptrs, str, len, st->prm);
    }
  }
}

/* A region's index space cut into chunks along one dimension, for the pool. */
typedef struct {
  const thunk_t *t;
  char *base[RG_MAXOPND];
  char *scratch;
  int dim;
  npy_intp chunks;
} region_job;

/* The region over [lo, hi) of dimension dim of its space (the whole space when dim < 0). */
static void region_slice(const thunk_t *t, char *const *base0, char *scratch, int dim,
                         npy_intp lo, npy_intp hi, int tid) {
  rg_params rg = t->rg;
  rg.scratch = scratch + (size_t)tid * (size_t)t->rg.nslots * RG_SLOT_BYTES;
  if (dim < 0) { /* the whole space (0-d included) */
    pb_iterate(t->ndim, t->shape, t->nref, base0, t->strides, region_loop, &rg, 1);
    return;
  }
  npy_intp shape[PB_MAXDIMS];
  char *base[RG_MAXOPND];
  memcpy(shape, t->shape, sizeof(npy_intp) * (size_t)t->ndim);
  shape[dim] = hi - lo;
  for (int i = 0; i < t->nref; ++i) base[i] = base0[i] + lo * t->strides[i * t->ndim + dim];
  if (hi > lo) pb_iterate(t->ndim, shape, t->nref, base, t->strides, region_loop, &rg, 1);
}

static void region_chunk(void *ctx, npy_intp ci, int tid) {
  const region_job *j = ctx;
  const npy_intp len = j->chunks > 1 ? j->t->shape[j->dim] : 0;
  region_slice(j->t, j->base, j->scratch, j->chunks > 1 ? j->dim : -1, len * ci / j->chunks,
               len * (ci + 1) / j->chunks, tid);
}

static int run_region(const thunk_t *t, run_ctx *c) {
  region_job j = {.t = t, .scratch = c->scratch, .dim = 0, .chunks = 1};
  for (int i = 0; i < t->nref; ++i) j.base[i] = resolve(c, &t->refs[i]);
  for (int k = 0; k < t->ninit; ++k) { /* reduction accumulators start at the identity */
    char one[16];
    const rg_init *in = &t->inits[k];
    const npy_intp item = pb_reduce_identity(in->op, in->slot, one);
    for (npy_intp e = 0; e < in->nelems; ++e) memcpy(j.base[in->ext] + e * item, one, (size_t)item);
  }
  npy_intp n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
  if (c->threads > 1 && n >= 2 * t->grain && t->ndim > 0 && !t->nosplit) {
    npy_intp want = n / t->grain, cap = 4 * (npy_intp)c->threads;
    if (want > cap) want = cap;
    int dim = -1; /* the outermost dimension long enough, else the longest */
    for (int d = 0; d < t->ndim && dim < 0; ++d)
      if (t->shape[d] >= want) dim = d;
    if (dim < 0) {
      dim = 0;
      for (int d = 1; d < t->ndim; ++d)
        if (t->shape[d] > t->shape[dim]) dim = d;
      if (want > t->shape[dim]) want = t->shape[dim];
    }
    j.dim = dim;
    j.chunks = want > 1 ? want : 1;
  }
  if (j.chunks > 1) pool_run(region_chunk, &j, j.chunks);
  else region_chunk(&j, 0, 0);
  return 0;
}

typedef struct {
  pb_matmul_job mm;
  const thunk_t *epi;         /* an epilogue run on each chunk's slice, or NULL */
  char *epi_base[RG_MAXOPND];
  char *scratch;
  int epi_dim;
  _Atomic int failed;
} dot_job;

static void dot_chunk(void *ctx, npy_intp ci, int tid) {
  dot_job *j = ctx;
  if (pb_matmul_chunk(&j->mm, ci) < 0) {
    atomic_store(&j->failed, 1);
    return;
  }
  if (j->epi) { /* the product's slice is in this core's cache: post-process it now */
    npy_intp bi, lo, hi;
    pb_matmul_chunk_range(&j->mm, ci, &bi, &lo, &hi);
    region_slice(j->epi, j->epi_base, j->scratch, j->epi_dim, lo, hi, tid);
  }
}

static int run_dot(const thunk_t *t, run_ctx *c) {
  const char *a = resolve(c, &t->refs[0]), *b = resolve(c, &t->refs[1]);
  char *o = resolve(c, &t->refs[2]);
  dot_job j = {.epi = NULL, .scratch = c->scratch};
  atomic_init(&j.failed, 0);
  npy_intp n = c->threads > 1
      ? pb_matmul_chunks(&j.mm, t->sa, t->sb, t->so, t->dims[0], t->dims[1], t->dims[2],
                         t->dims[3], a, t->strides, b, t->strides + 3, o, t->strides + 6,
                         c->threads)
      : 0;
  const thunk_t *e = t->epilogue;
  /* an epilogue over the (M, N) product slices along with it */
  if (n > 0 && e && t->op && !e->ninit && t->dims[0] == 1 && e->ndim == 2 &&
      e->shape[0] == t->dims[1] &&
      e->shape[1] == t->dims[2]) {
    j.epi = e;
    j.epi_dim = j.mm.by_rows ? 0 : 1;
    for (int i = 0; i < e->nref; ++i) j.epi_base[i] = resolve(c, &e->refs[i]);
  }
  int rc = 0;
  if (n > 0) {
    pool_run(dot_chunk, &j, n);
    rc = atomic_load(&j.failed) ? -1 : 0;
  } else {
    rc = pb_matmul_raw(t->sa, t->sb, t->so, t->dims[0], t->dims[1], t->dims[2], t->dims[3], a,
                       t->strides, b, t->strides + 3, o, t->strides + 6);
  }
  if (rc < 0) {
    c->error = "dot_general: the matmul kernel failed (out of memory)";
    return -1;
  }
  return e && !j.epi ? run_region(e, c) : 0;
}

static int run_reduce(const thunk_t *t, run_ctx *c) {
  const char *x = resolve(c, &t->refs[0]);
  char *acc = resolve(c, &t->refs[1]), *out = resolve(c, &t->refs[2]);
  if (pb_reduce_raw(t->op, t->slot, t->ndim, t->shape, t->strides, t->reduced, x, acc, out) < 0) {
    c->error = "reduce: the reduction kernel failed (out of memory)";
    return -1;
  }
  return 0;
}

/* A view of a buffer for the Python callback: not writeable, no owner (the callback's result
 * is copied out before the arena is touched again). */
static PyObject *raw_view(PyArray_Descr *d, int nd, npy_intp *shape, npy_intp *strides, char *p) {
  Py_INCREF(d);
  return PyArray_NewFromDescr(&PyArray_Type, d, nd, shape, strides, p, 0, NULL);
}

static int run_py_locked(const thunk_t *t, run_ctx *c);

static int run_py(const thunk_t *t, run_ctx *c) {
  PyThreadState *ts = c->ts;
  if (ts) { PyEval_RestoreThread(ts); c->ts = NULL; }
  int rc = run_py_locked(t, c);
  if (ts) c->ts = PyEval_SaveThread(); /* a pending exception stays with this thread's state */
  return rc;
}

static int run_py_locked(const thunk_t *t, run_ctx *c) {
  int rc = -1;
  PyObject *args = PyTuple_New(t->npin), *res = NULL;
  if (!args) return -1;
  for (int i = 0; i < t->npin; ++i) {
    PyObject *v = raw_view(t->descrs[i], t->ndims[i], t->shapes[i], t->pstrides[i],
                           resolve(c, &t->refs[i]));
    if (!v) goto done;
    PyTuple_SET_ITEM(args, i, v);
  }
  res = PyObject_CallObject(t->callable, args);
  if (!res) goto done;
  const int nout = t->nref - t->npin;
  if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != nout) {
    PyErr_Format(PyExc_RuntimeError, "jit: a Python-callback step returned %R, expected a tuple of "
                 "%d arrays", res, nout);
    goto done;
  }
  for (int k = 0; k < nout; ++k) {
    const int i = t->npin + k;
    PyObject *o = PyTuple_GET_ITEM(res, k);
    PyArrayObject *arr = (PyArrayObject *)PyArray_FROMANY(o, t->descrs[i]->type_num, 0, 0, 0);
    if (!arr) goto done;
    if (!PyArray_EquivTypes(PyArray_DESCR(arr), t->descrs[i]) || PyArray_NDIM(arr) != t->ndims[i] ||
        !PyArray_CompareLists(PyArray_SHAPE(arr), t->shapes[i], t->ndims[i])) {
      PyErr_Format(PyExc_RuntimeError, "jit: a Python-callback step returned an array of dtype "
                   "%S and %d dimensions, not the compiled one", (PyObject *)PyArray_DESCR(arr),
                   PyArray_NDIM(arr));
      Py_DECREF(arr);
      goto done;
    }
    const int nd = t->ndims[i];
    npy_intp strides[2 * PB_MAXDIMS];
    for (int d = 0; d < nd; ++d) {
      strides[d] = PyArray_STRIDES(arr)[d];
      strides[nd + d] = t->pstrides[i][d];
    }
    char *b2[2] = {PyArray_BYTES(arr), resolve(c, &t->refs[i])};
    pb_loop_fn fn = pb_move_copy_loop(PyArray_ITEMSIZE(arr));
    if (fn) pb_iterate(nd, t->shapes[i], 2, b2, strides, fn, NULL, 1);
    Py_DECREF(arr);
    if (!fn) {
      PyErr_SetString(PyExc_RuntimeError, "jit: unsupported element size in a callback result");
      goto done;
    }
  }
  rc = 0;
done:
  Py_XDECREF(res);
  Py_DECREF(args);
  return rc;
}

static int run_thunk(const thunk_t *t, run_ctx *c) {
  switch (t->kind) {
    case TH_REGION: return run_region(t, c);
    case TH_DOT: return run_dot(t, c);
    case TH_REDUCE: return run_reduce(t, c);
    default: return run_py(t, c);
  }
}

/* a's layout is the compiled one: its strides (ignoring size-1 dimensions, whose strides NumPy
 * leaves arbitrary) or C-contiguity, and alignment */
static int same_layout(PyArrayObject *a, const spec_t *sp) {
  if (!PyArray_ISALIGNED(a) || (uintptr_t)PyArray_BYTES(a) % (uintptr_t)sp->align) return 0;
  if (!sp->has_strides) return PyArray_IS_C_CONTIGUOUS(a);
  for (int d = 0; d < sp->ndim; ++d) {
    if (sp->shape[d] == 0) return 1;
    if (sp->shape[d] > 1 && PyArray_STRIDES(a)[d] != sp->strides[d]) return 0;
  }
  return 1;
}

static PyObject *program_run(Program *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != self->nin) {
    PyErr_Format(PyExc_TypeError, "jit(%U): the compiled program takes %d arrays, got %zd",
                 self->name, self->nin, nargs);
    return NULL;
  }
  PyObject *keep[64], *inarr_stack[64];
  PyObject **hold = nargs <= 64 ? keep : PyMem_Malloc(sizeof(PyObject *) * (size_t)nargs);
  PyObject **inarr = nargs <= 64 ? inarr_stack : PyMem_Malloc(sizeof(PyObject *) * (size_t)nargs);
  char *inb_stack[64], *outb_stack[64];
  char **inb = nargs <= 64 ? inb_stack : PyMem_Malloc(sizeof(char *) * (size_t)(nargs + 1));
  char **outb = self->nout <= 64 ? outb_stack : PyMem_Malloc(sizeof(char *) * (size_t)(self->nout + 1));
  PyObject *result = NULL;
  char *arena = NULL;
  int own_arena = 0, nheld = 0;
  if (!hold || !inb || !outb || !inarr) { PyErr_NoMemory(); goto fail; }
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    PyObject *o = args[i];
    if (!PyArray_Check(o)) {
      PyErr_Format(PyExc_TypeError, "jit(%U): argument %zd must be a numpy.ndarray, got %s",
                   self->name, i, Py_TYPE(o)->tp_name);
      goto fail;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    const spec_t *sp = &self->in[i];
    if (PyArray_DESCR(a) != sp->descr && !PyArray_EquivTypes(PyArray_DESCR(a), sp->descr)) {
      PyErr_Format(PyExc_TypeError, "jit(%U): argument %zd has dtype %S, the program was compiled "
                   "for %S", self->name, i, (PyObject *)PyArray_DESCR(a), (PyObject *)sp->descr);
      goto fail;
    }
    if (PyArray_NDIM(a) != sp->ndim || !PyArray_CompareLists(PyArray_SHAPE(a), sp->shape, sp->ndim)) {
      PyErr_Format(PyExc_TypeError, "jit(%U): argument %zd has %d dimensions or a shape other "
                   "than the compiled one", self->name, i, PyArray_NDIM(a));
      goto fail;
    }
    if (!same_layout(a, sp)) {
      if (sp->has_strides || self->strict) {
        PyErr_Format(LayoutError, "jit(%U): argument %zd has strides other than the compiled "
                     "ones", self->name, i);
        goto fail;
      }
      PyArrayObject *cc = pb_copy(a); /* the compiled (C-contiguous) layout */
      if (!cc) goto fail;
      hold[nheld++] = (PyObject *)cc;
      a = cc;
    }
    inarr[i] = (PyObject *)a;
    inb[i] = PyArray_BYTES(a);
  }
  result = PyTuple_New(self->nout);
  if (!result) goto fail;
  for (int k = 0; k < self->nout; ++k) {
    const spec_t *sp = &self->out[k];
    int j = sp->donate;
    PyArrayObject *out = NULL;
    outb[k] = NULL;
    if (sp->alias.kind >= 0) continue; /* a view, made after the steps ran */
    if (j >= 0) { /* a donated input of the same aval, when its buffer can be written */
      PyArrayObject *a = (PyArrayObject *)args[j];
      if (PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a) && PyArray_ISALIGNED(a) &&
          PyArray_BYTES(a) == inb[j]) {
        Py_INCREF(a);
        out = a;
      }
    }
    if (!out) {
      Py_INCREF(sp->descr);
      out = pb_new_array(sp->ndim, sp->shape, sp->descr);
      if (!out) goto fail;
    }
    PyTuple_SET_ITEM(result, k, (PyObject *)out);
    outb[k] = PyArray_BYTES(out);
  }
  const npy_intp need = self->arena_bytes + self->scratch_bytes;
  if (self->busy) { /* re-entered (another thread, or a callback step): a private arena */
    arena = need ? aligned_alloc(64, (size_t)((need + 63) / 64 * 64)) : NULL;
    if (need && !arena) { PyErr_NoMemory(); goto fail; }
    own_arena = 1;
  } else {
    if (!self->arena && need) {
      self->arena = aligned_alloc(64, (size_t)((need + 63) / 64 * 64));
      if (!self->arena) { PyErr_NoMemory(); goto fail; }
    }
    arena = self->arena;
    self->busy = 1;
  }
  char *cbase[1] = {NULL};
  char **constb = self->nconst ? PyMem_Malloc(sizeof(char *) * (size_t)self->nconst) : cbase;
  if (!constb) { PyErr_NoMemory(); goto release; }
  for (int i = 0; i < self->nconst; ++i)
    constb[i] = PyArray_BYTES((PyArrayObject *)PyTuple_GET_ITEM(self->consts, i));
  char *abase[1] = {arena};
  run_ctx c = {.base = {abase, inb, outb, constb}, .threads = 1, .ts = NULL, .error = NULL,
               .scratch = arena ? arena + self->arena_bytes : NULL};
  int rc = 0;
#ifdef _OPENMP
  const int omp_threads = omp_get_max_threads();
#endif
  if (self->nogil) {
    c.threads = pool_threads(self->max_threads);
#ifdef _OPENMP
    omp_set_num_threads(1); /* kernels inside stay on their thread: the pool parallelizes */
#endif
    c.ts = PyEval_SaveThread();
  }
  if (self->prof) {
    for (int i = 0; i < self->nthunk && rc == 0; ++i) {
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      rc = run_thunk(&self->thunks[i], &c);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      self->prof[i] += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    }
    self->prof_calls++;
  } else {
    for (int i = 0; i < self->nthunk && rc == 0; ++i) rc = run_thunk(&self->thunks[i], &c);
  }
  if (c.ts) PyEval_RestoreThread(c.ts);
#ifdef _OPENMP
  if (self->nogil) omp_set_num_threads(omp_threads);
#endif
  if (constb != cbase) PyMem_Free(constb);
  for (int k = 0; k < self->nout && rc == 0; ++k) { /* outputs that are views */
    const spec_t *sp = &self->out[k];
    if (sp->alias.kind < 0) continue;
    PyObject *base = sp->alias.kind == BUF_INPUT ? inarr[sp->alias.index]
                     : sp->alias.kind == BUF_CONST ? PyTuple_GET_ITEM(self->consts, sp->alias.index)
                     : PyTuple_GET_ITEM(result, sp->alias.index);
    Py_INCREF(sp->descr);
    PyObject *v = pb_new_view((PyArrayObject *)base, sp->descr, sp->ndim, sp->shape, sp->strides,
                              PyArray_BYTES((PyArrayObject *)base) + sp->alias.offset);
    if (!v) { rc = -1; break; }
    PyTuple_SET_ITEM(result, k, v);
  }
  if (rc < 0) {
    if (c.error && !PyErr_Occurred()) PyErr_SetString(PyExc_MemoryError, c.error);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "jit: a step failed");
    Py_CLEAR(result);
  }
release:
  if (own_arena) free(arena);
  else self->busy = 0;
fail:
  for (int i = 0; i < nheld; ++i) Py_DECREF(hold[i]);
  if (hold && hold != keep) PyMem_Free(hold);
  if (inarr && inarr != inarr_stack) PyMem_Free(inarr);
  if (inb && inb != inb_stack) PyMem_Free(inb);
  if (outb && outb != outb_stack) PyMem_Free(outb);
  if (PyErr_Occurred()) Py_CLEAR(result);
  return result;
}

/* ---------------------------------------------------------------- construction */


static int parse_ints(PyObject *t, npy_intp *out, int max, const char *what) {
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) > max) {
    PyErr_Format(PyExc_ValueError, "Program: %s must be a tuple of at most %d ints", what, max);
    return -1;
  }
  int n = (int)PyTuple_GET_SIZE(t);
  for (int i = 0; i < n; ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    out[i] = (npy_intp)v;
  }
  return n;
}

static int parse_ref(Program *p, PyObject *o, ref_t *r) {
  long long off;
  if (!PyArg_ParseTuple(o, "iiL", &r->kind, &r->index, &off)) return -1;
  r->offset = (npy_intp)off;
  int count = r->kind == BUF_ARENA ? 1 : r->kind == BUF_INPUT ? p->nin
              : r->kind == BUF_OUTPUT ? p->nout : r->kind == BUF_CONST ? p->nconst : -1;
  if (count < 0 || r->index < 0 || r->index >= count) {
    PyErr_Format(PyExc_ValueError, "Program: bad buffer reference (%d, %d)", r->kind, r->index);
    return -1;
  }
  return 0;
}

/* The operand (ref, shape, strides, item) must stay inside its buffer. */
static int check_extent(Program *p, const ref_t *r, int nd, const npy_intp *shape,
                        const npy_intp *strides, npy_intp item) {
  npy_intp lo = r->offset, hi = r->offset + item;
  for (int d = 0; d < nd; ++d) {
    if (shape[d] < 0) goto bad;
    if (shape[d] == 0) return 0;
    npy_intp span = (shape[d] - 1) * strides[d];
    if (span < 0) lo += span; else hi += span;
  }
  npy_intp lim;
  if (r->kind == BUF_CONST) {
    PyArrayObject *c = (PyArrayObject *)PyTuple_GET_ITEM(p->consts, r->index);
    /* constant operands address the constant's own memory: its data pointer is offset 0 */
    npy_intp clo = 0, chi = PyArray_ITEMSIZE(c);
    for (int d = 0; d < PyArray_NDIM(c); ++d) {
      if (PyArray_DIM(c, d) == 0) { chi = 0; break; }
      npy_intp span = (PyArray_DIM(c, d) - 1) * PyArray_STRIDE(c, d);
      if (span < 0) clo += span; else chi += span;
    }
    if (lo >= clo && hi <= chi) return 0;
    goto bad;
  }
  if (r->kind == BUF_ARENA) {
    lim = p->arena_bytes;
    if (lo >= 0 && hi <= lim) return 0;
  } else {
    const spec_t *sp = r->kind == BUF_INPUT ? &p->in[r->index] : &p->out[r->index];
    if (lo >= sp->lo && hi <= sp->hi) return 0;
  }
bad:
  PyErr_Format(PyExc_ValueError, "Program: an operand of buffer (%d, %d) at offset %zd leaves "
               "its buffer", r->kind, r->index, (Py_ssize_t)r->offset);
  return -1;
}

static int parse_region(Program *p, thunk_t *t, PyObject *spec) {
  /* ("region", shape, refs, strides, items, steps, grain[, inits]) with inits a tuple of
   * (operand, reduce op, slot, elements): reduction accumulators (the region then runs on one
   * thread: its chunks would share them) */
  PyObject *shape, *refs, *strides, *items, *steps, *inits = NULL;
  long long grain;
  const char *kind;
  if (!PyArg_ParseTuple(spec, "sO!O!O!O!O!L|O!", &kind, &PyTuple_Type, &shape, &PyTuple_Type,
                        &refs, &PyTuple_Type, &strides, &PyTuple_Type, &items, &PyTuple_Type,
                        &steps, &grain, &PyTuple_Type, &inits))
    return -1;
  t->kind = TH_REGION;
  t->grain = (npy_intp)(grain > 0 ? grain : 1);
  t->shape = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  if (!t->shape) { PyErr_NoMemory(); return -1; }
  if ((t->ndim = parse_ints(shape, t->shape, PB_MAXDIMS, "a region shape")) < 0) return -1;
  t->nref = (int)PyTuple_GET_SIZE(refs);
  if (t->nref < 1 || t->nref > RG_MAXOPND || PyTuple_GET_SIZE(strides) != t->nref ||
      PyTuple_GET_SIZE(items) != t->nref) {
    PyErr_Format(PyExc_ValueError, "Program: a region takes 1 to %d operands with strides and "
                 "element sizes", RG_MAXOPND);
    return -1;
  }
  t->refs = PyMem_Calloc((size_t)t->nref, sizeof(ref_t));
  t->strides = PyMem_Calloc((size_t)(t->nref * (t->ndim ? t->ndim : 1)), sizeof(npy_intp));
  if (!t->refs || !t->strides) { PyErr_NoMemory(); return -1; }
  for (int i = 0; i < t->nref; ++i) {
    if (parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0) return -1;
    npy_intp st[PB_MAXDIMS];
    if (parse_ints(PyTuple_GET_ITEM(strides, i), st, PB_MAXDIMS, "region strides") != t->ndim) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: region strides != ndim");
      return -1;
    }
    memcpy(t->strides + i * t->ndim, st, sizeof(npy_intp) * (size_t)t->ndim);
    long long item = PyLong_AsLongLong(PyTuple_GET_ITEM(items, i));
    if (item <= 0 || item > 16) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad element size");
      return -1;
    }
    if (check_extent(p, &t->refs[i], t->ndim, t->shape, st, (npy_intp)item) < 0) return -1;
  }
  t->rg.nsteps = (int)PyTuple_GET_SIZE(steps);
  t->rg.steps = PyMem_Calloc((size_t)(t->rg.nsteps ? t->rg.nsteps : 1), sizeof(rg_step));
  if (!t->rg.steps) { PyErr_NoMemory(); return -1; }
  t->rg.nslots = 0;
  for (int k = 0; k < t->rg.nsteps; ++k) {
    /* (loop kind, a, b, params tuple, operand ids, element sizes) */
    int lk, a, b;
    PyObject *prm, *opnd, *its;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(steps, k), "iiiO!O!O!", &lk, &a, &b, &PyTuple_Type,
                          &prm, &PyTuple_Type, &opnd, &PyTuple_Type, &its))
      return -1;
    rg_step *st = &t->rg.steps[k];
    pb_loop_fn fn = NULL;
    int nin = -1;
    switch (lk) {
      case LOOP_EWISE: fn = pb_ewise_loop(a, b); nin = pb_ewise_nin(a); break;
      case LOOP_CAST: fn = pb_cast_loop(a, b); nin = 1; break;
      case LOOP_COPY: fn = pb_move_copy_loop(a); nin = 1; break;
      case LOOP_SELECT: fn = pb_select_loop(a, b); nin = (int)PyTuple_GET_SIZE(opnd) - 1; break;
      case LOOP_REDUCE: fn = pb_reduce_loop(a, b); nin = 1; break;
    }
    if (!fn || nin < 1 || nin > RG_MAXSTEPIN || PyTuple_GET_SIZE(opnd) != nin + 1 ||
        PyTuple_GET_SIZE(its) != nin + 1) {
      PyErr_Format(PyExc_ValueError, "Program: region step %d (kind %d, %d, %d) has no kernel or "
                   "the wrong operand count", k, lk, a, b);
      return -1;
    }
    st->fn = fn;
    st->nin = nin;
    npy_intp pv[4] = {0, 0, 0, 0};
    if (parse_ints(prm, pv, 4, "step params") < 0) return -1;
    if (lk == LOOP_SELECT) {
      pb_select_params sp = {(int)pv[0], (int)pv[1], (int64_t)pv[2]};
      if (sp.count != nin - 1 || sp.count > PB_SELECT_MAX) {
        PyErr_SetString(PyExc_ValueError, "Program: bad select_n step");
        return -1;
      }
      memcpy(st->prm, &sp, sizeof(sp));
    } else {
      for (int i = 0; i < 4; ++i) st->prm[i] = (int64_t)pv[i];
    }
    npy_intp ids[RG_MAXSTEPIN + 1], sz[RG_MAXSTEPIN + 1];
    parse_ints(opnd, ids, RG_MAXSTEPIN + 1, "step operands");
    if (parse_ints(its, sz, RG_MAXSTEPIN + 1, "step element sizes") < 0) return -1;
    for (int i = 0; i <= nin; ++i) {
      if (ids[i] >= t->nref || sz[i] <= 0 || sz[i] > 16) {
        PyErr_SetString(PyExc_ValueError, "Program: bad region step operand");
        return -1;
      }
      if (ids[i] < 0 && -ids[i] > t->rg.nslots) t->rg.nslots = (int)-ids[i];
      st->opnd[i] = (int)ids[i];
      st->item[i] = sz[i];
    }
  }
  npy_intp need = (npy_intp)p->max_threads * t->rg.nslots * RG_SLOT_BYTES;
  if (need > p->scratch_bytes) p->scratch_bytes = need;
  t->ninit = inits ? (int)PyTuple_GET_SIZE(inits) : 0;
  t->nosplit = t->ninit > 0;
  if (t->ninit) {
    t->inits = PyMem_Calloc((size_t)t->ninit, sizeof(rg_init));
    if (!t->inits) { PyErr_NoMemory(); return -1; }
    for (int k = 0; k < t->ninit; ++k) {
      rg_init *in = &t->inits[k];
      long long ne;
      char one[16];
      if (!PyArg_ParseTuple(PyTuple_GET_ITEM(inits, k), "iiiL", &in->ext, &in->op, &in->slot, &ne))
        return -1;
      in->nelems = (npy_intp)ne;
      npy_intp item = pb_reduce_identity(in->op, in->slot, one);
      if (in->ext < 0 || in->ext >= t->nref || !item || ne < 0 ||
          check_extent(p, &t->refs[in->ext], 1, &in->nelems, &item, item) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad accumulator");
        return -1;
      }
    }
  }
  return 0;
}

static int parse_dot(Program *p, thunk_t *t, PyObject *spec) {
  /* ("dot", sa, sb, so, (Bt, M, N, K), refs(3), strides(3 x 3), epilogue region or None[,
   * sliceable: the epilogue reads the product element for element, so it may run on each
   * chunk's slice]) */
  const char *kind;
  PyObject *dims, *refs, *strides, *epi;
  int sliceable = 0;
  if (!PyArg_ParseTuple(spec, "siiiO!O!O!O|p", &kind, &t->sa, &t->sb, &t->so, &PyTuple_Type,
                        &dims, &PyTuple_Type, &refs, &PyTuple_Type, &strides, &epi, &sliceable))
    return -1;
  t->op = sliceable;
  t->kind = TH_DOT;
  if (parse_ints(dims, t->dims, 4, "dot dims") != 4 || PyTuple_GET_SIZE(refs) != 3 ||
      PyTuple_GET_SIZE(strides) != 3) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad dot step");
    return -1;
  }
  t->nref = 3;
  t->refs = PyMem_Calloc(3, sizeof(ref_t));
  t->strides = PyMem_Calloc(9, sizeof(npy_intp));
  if (!t->refs || !t->strides) { PyErr_NoMemory(); return -1; }
  const npy_intp Bt = t->dims[0], M = t->dims[1], N = t->dims[2], K = t->dims[3];
  const npy_intp shp[3][3] = {{Bt, M, K}, {Bt, K, N}, {Bt, M, N}};
  const int slots[3] = {t->sa, t->sb, t->so};
  for (int i = 0; i < 3; ++i) {
    if (parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0) return -1;
    if (parse_ints(PyTuple_GET_ITEM(strides, i), t->strides + 3 * i, 3, "dot strides") != 3) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad dot strides");
      return -1;
    }
    if (slots[i] < 0 || slots[i] >= pb_cast_nslots()) {
      PyErr_SetString(PyExc_ValueError, "Program: bad dot dtype slot");
      return -1;
    }
    PyArray_Descr *d = pb_cast_descr(slots[i]);
    if (!d) return -1;
    npy_intp item = PyDataType_ELSIZE(d);
    Py_DECREF(d);
    if (check_extent(p, &t->refs[i], 3, shp[i], t->strides + 3 * i, item) < 0) return -1;
  }
  if (t->strides[8] <= 0 || (N > 1 && t->strides[7] < N * t->strides[8])) {
    PyErr_SetString(PyExc_ValueError, "Program: a dot output must be row-major");
    return -1;
  }
  if (pb_dot_prepare() < 0) return -1;
  if (epi != Py_None) {
    t->epilogue = PyMem_Calloc(1, sizeof(thunk_t));
    if (!t->epilogue) { PyErr_NoMemory(); return -1; }
    if (parse_region(p, t->epilogue, epi) < 0) return -1;
  }
  return 0;
}

static int parse_reduce(Program *p, thunk_t *t, PyObject *spec) {
  /* ("reduce", op, slot, shape, reduced, refs(x, acc, out), xstrides, item, acc_item) */
  const char *kind;
  PyObject *shape, *reduced, *refs, *xstrides;
  long long item, aitem;
  if (!PyArg_ParseTuple(spec, "siiO!O!O!O!LL", &kind, &t->op, &t->slot, &PyTuple_Type, &shape,
                        &PyTuple_Type, &reduced, &PyTuple_Type, &refs, &PyTuple_Type, &xstrides,
                        &item, &aitem))
    return -1;
  t->kind = TH_REDUCE;
  if (!pb_reduce_supported(t->op, t->slot)) {
    PyErr_Format(PyExc_ValueError, "Program: no reduction kernel (%d, %d)", t->op, t->slot);
    return -1;
  }
  t->shape = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  t->strides = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  t->refs = PyMem_Calloc(3, sizeof(ref_t));
  if (!t->shape || !t->strides || !t->refs) { PyErr_NoMemory(); return -1; }
  t->nref = 3;
  if ((t->ndim = parse_ints(shape, t->shape, PB_MAXDIMS, "reduce shape")) < 0) return -1;
  npy_intp red[PB_MAXDIMS];
  if (parse_ints(reduced, red, PB_MAXDIMS, "reduced") != t->ndim ||
      parse_ints(xstrides, t->strides, PB_MAXDIMS, "reduce strides") != t->ndim ||
      PyTuple_GET_SIZE(refs) != 3) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad reduce step");
    return -1;
  }
  npy_intp oshape[PB_MAXDIMS], ostr[PB_MAXDIMS], onum = 1;
  int ond = 0;
  for (int d = 0; d < t->ndim; ++d) {
    t->reduced[d] = red[d] != 0;
    if (!t->reduced[d]) { oshape[ond++] = t->shape[d]; onum *= t->shape[d]; }
  }
  for (int d = 0; d < ond; ++d) ostr[d] = 0;
  for (int i = 0; i < 3; ++i)
    if (parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0) return -1;
  if (check_extent(p, &t->refs[0], t->ndim, t->shape, t->strides, item) < 0) return -1;
  /* acc and out are C-contiguous runs of the output's element count */
  npy_intp one = onum, st1 = aitem, st2 = item;
  (void)oshape; (void)ostr;
  if (check_extent(p, &t->refs[1], 1, &one, &st1, aitem) < 0 ||
      check_extent(p, &t->refs[2], 1, &one, &st2, item) < 0)
    return -1;
  return 0;
}

static int parse_py(Program *p, thunk_t *t, PyObject *spec) {
  /* ("py", callable, operands((ref, dtype, shape, strides) ...), nin) */
  const char *kind;
  PyObject *fn, *ops;
  if (!PyArg_ParseTuple(spec, "sOO!i", &kind, &fn, &PyTuple_Type, &ops, &t->npin)) return -1;
  t->kind = TH_PY;
  Py_INCREF(fn);
  t->callable = fn;
  t->nref = (int)PyTuple_GET_SIZE(ops);
  if (t->npin < 0 || t->npin > t->nref) {
    PyErr_SetString(PyExc_ValueError, "Program: bad callback step");
    return -1;
  }
  t->refs = PyMem_Calloc((size_t)t->nref + 1, sizeof(ref_t));
  t->descrs = PyMem_Calloc((size_t)t->nref + 1, sizeof(PyArray_Descr *));
  t->ndims = PyMem_Calloc((size_t)t->nref + 1, sizeof(int));
  t->shapes = PyMem_Calloc((size_t)t->nref + 1, sizeof(npy_intp *));
  t->pstrides = PyMem_Calloc((size_t)t->nref + 1, sizeof(npy_intp *));
  if (!t->refs || !t->descrs || !t->ndims || !t->shapes || !t->pstrides) {
    PyErr_NoMemory();
    return -1;
  }
  for (int i = 0; i < t->nref; ++i) {
    PyObject *ref, *dt, *shape, *strides;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(ops, i), "OOO!O!", &ref, &dt, &PyTuple_Type, &shape,
                          &PyTuple_Type, &strides))
      return -1;
    if (parse_ref(p, ref, &t->refs[i]) < 0) return -1;
    if (!PyArray_DescrConverter(dt, &t->descrs[i])) return -1;
    t->shapes[i] = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
    t->pstrides[i] = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
    if (!t->shapes[i] || !t->pstrides[i]) { PyErr_NoMemory(); return -1; }
    t->ndims[i] = parse_ints(shape, t->shapes[i], PB_MAXDIMS, "callback shape");
    if (t->ndims[i] < 0 || parse_ints(strides, t->pstrides[i], PB_MAXDIMS, "callback strides")
                               != t->ndims[i]) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad callback operand");
      return -1;
    }
    if (check_extent(p, &t->refs[i], t->ndims[i], t->shapes[i], t->pstrides[i],
                     PyDataType_ELSIZE(t->descrs[i])) < 0)
      return -1;
  }
  return 0;
}

static void thunk_clear(thunk_t *t) {
  PyMem_Free(t->shape);
  PyMem_Free(t->refs);
  PyMem_Free(t->strides);
  PyMem_Free(t->rg.steps);
  PyMem_Free(t->inits);
  if (t->epilogue) { thunk_clear(t->epilogue); PyMem_Free(t->epilogue); }
  Py_XDECREF(t->callable);
  for (int i = 0; t->descrs && i < t->nref; ++i) Py_XDECREF(t->descrs[i]);
  for (int i = 0; t->shapes && i < t->nref; ++i) PyMem_Free(t->shapes[i]);
  for (int i = 0; t->pstrides && i < t->nref; ++i) PyMem_Free(t->pstrides[i]);
  PyMem_Free(t->descrs);
  PyMem_Free(t->ndims);
  PyMem_Free(t->shapes);
  PyMem_Free(t->pstrides);
  memset(t, 0, sizeof(*t));
}

static void program_dealloc(Program *self) {
  for (int i = 0; self->thunks && i < self->nthunk; ++i) thunk_clear(&self->thunks[i]);
  PyMem_Free(self->thunks);
  for (int i = 0; self->in && i < self->nin; ++i) Py_XDECREF(self->in[i].descr);
  for (int i = 0; self->out && i < self->nout; ++i) Py_XDECREF(self->out[i].descr);
  PyMem_Free(self->in);
  PyMem_Free(self->out);
  free(self->arena);
  PyMem_Free(self->prof);
  Py_XDECREF(self->consts);
  Py_XDECREF(self->name);
  Py_XDECREF(self->text);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The byte extent [lo, hi) of an array of this shape and these strides. */
static void extent_of(spec_t *sp) {
  npy_intp item = PyDataType_ELSIZE(sp->descr);
  sp->lo = 0;
  sp->hi = item;
  for (int d = 0; d < sp->ndim; ++d) {
    if (sp->shape[d] == 0) { sp->hi = 0; return; }
    npy_intp span = (sp->shape[d] - 1) * sp->strides[d];
    if (span < 0) sp->lo += span; else sp->hi += span;
  }
}

/* inputs: (dtype, shape, strides or None, alignment); outputs: (dtype, shape, donate, alias or
 * None) with alias = (kind, index, offset, strides) */
static int parse_specs(PyObject *specs, int n, spec_t *out, int outputs) {
  for (int i = 0; i < n; ++i) {
    PyObject *dt, *shp, *st = Py_None, *alias = Py_None;
    spec_t *sp = &out[i];
    sp->donate = -1;
    sp->alias.kind = -1;
    PyObject *it = PyTuple_GET_ITEM(specs, i);
    long long align = 1;
    if (outputs ? !PyArg_ParseTuple(it, "OO!iO", &dt, &PyTuple_Type, &shp, &sp->donate, &alias)
                : !PyArg_ParseTuple(it, "OO!O|L", &dt, &PyTuple_Type, &shp, &st, &align))
      return -1;
    if (align < 1 || align > 4096 || (align & (align - 1))) {
      PyErr_SetString(PyExc_ValueError, "Program: an alignment must be a power of two");
      return -1;
    }
    sp->align = (npy_intp)align;
    if (!PyArray_DescrConverter(dt, &sp->descr)) return -1;
    if ((sp->ndim = parse_ints(shp, sp->shape, PB_MAXDIMS, "a shape")) < 0) return -1;
    npy_intp item = PyDataType_ELSIZE(sp->descr), acc = item;
    for (int d = sp->ndim - 1; d >= 0; --d) { /* C-contiguous by default */
      if (sp->shape[d] < 0) {
        PyErr_SetString(PyExc_ValueError, "Program: negative dimension");
        return -1;
      }
      sp->strides[d] = acc;
      acc *= sp->shape[d] > 0 ? sp->shape[d] : 1;
    }
    if (alias != Py_None) {
      PyObject *ref, *ast;
      if (!PyArg_ParseTuple(alias, "OO!", &ref, &PyTuple_Type, &ast)) return -1;
      long long off;
      if (!PyArg_ParseTuple(ref, "iiL", &sp->alias.kind, &sp->alias.index, &off)) return -1;
      sp->alias.offset = (npy_intp)off;
      st = ast;
    }
    if (st != Py_None) {
      if (!PyTuple_Check(st) || parse_ints(st, sp->strides, PB_MAXDIMS, "strides") != sp->ndim) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: strides != ndim");
        return -1;
      }
      sp->has_strides = 1;
    }
    extent_of(sp);
  }
  return 0;
}

static PyObject *program_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  /* Program(name, arena_bytes, in_specs, out_specs, consts, thunks, nogil[, strict]) */
  PyObject *name, *ins, *outs, *consts, *thunks;
  long long arena;
  int nogil, strict = 0;
  if (!PyArg_ParseTuple(args, "ULO!O!O!O!p|p", &name, &arena, &PyTuple_Type, &ins, &PyTuple_Type,
                        &outs, &PyTuple_Type, &consts, &PyTuple_Type, &thunks, &nogil, &strict))
    return NULL;
  Program *p = (Program *)type->tp_alloc(type, 0);
  if (!p) return NULL;
  Py_INCREF(name);
  p->name = name;
  p->arena_bytes = (npy_intp)(arena > 0 ? (arena + 63) / 64 * 64 : 0);
  p->nogil = nogil;
  p->strict = strict;
  p->max_threads = 1;
#ifdef _OPENMP
  p->max_threads = omp_get_max_threads();
#endif
  p->nin = (int)PyTuple_GET_SIZE(ins);
  p->nout = (int)PyTuple_GET_SIZE(outs);
  p->nconst = (int)PyTuple_GET_SIZE(consts);
  p->nthunk = (int)PyTuple_GET_SIZE(thunks);
  for (int i = 0; i < p->nconst; ++i)
    if (!PyArray_Check(PyTuple_GET_ITEM(consts, i)) ||
        !PyArray_ISALIGNED((PyArrayObject *)PyTuple_GET_ITEM(consts, i))) {
      PyErr_SetString(PyExc_TypeError, "Program: constants must be aligned numpy arrays");
      goto fail;
    }
  Py_INCREF(consts);
  p->consts = consts;
  p->in = PyMem_Calloc((size_t)p->nin + 1, sizeof(spec_t));
  p->out = PyMem_Calloc((size_t)p->nout + 1, sizeof(spec_t));
  p->thunks = PyMem_Calloc((size_t)p->nthunk + 1, sizeof(thunk_t));
  if (!p->in || !p->out || !p->thunks) {
    PyErr_NoMemory();
    goto fail;
  }
  if (parse_specs(ins, p->nin, p->in, 0) < 0 || parse_specs(outs, p->nout, p->out, 1) < 0)
    goto fail;
  for (int k = 0; k < p->nout; ++k) {
    const spec_t *sp = &p->out[k];
    int j = sp->donate;
    if (j >= p->nin || (j >= 0 && (!PyArray_EquivTypes(p->in[j].descr, sp->descr) ||
                                   p->in[j].has_strides || sp->alias.kind >= 0 ||
                                   p->in[j].hi != sp->hi))) {
      PyErr_Format(PyExc_ValueError, "Program: output %d cannot reuse input %d", k, j);
      goto fail;
    }
    if (sp->alias.kind >= 0) { /* a view of an input, a constant or an earlier plain output */
      const ref_t *r = &sp->alias;
      int ok = (r->kind == BUF_INPUT && r->index >= 0 && r->index < p->nin) ||
               (r->kind == BUF_CONST && r->index >= 0 && r->index < p->nconst) ||
               (r->kind == BUF_OUTPUT && r->index >= 0 && r->index < p->nout &&
                p->out[r->index].alias.kind < 0);
      /* (the view's dtype may differ: a bitcast; its extent is what must hold) */
      if (!ok || check_extent(p, r, sp->ndim, sp->shape, sp->strides,
                              PyDataType_ELSIZE(sp->descr)) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "Program: output %d is a bad view", k);
        goto fail;
      }
    }
  }
  for (int i = 0; i < p->nthunk; ++i) {
    PyObject *spec = PyTuple_GET_ITEM(thunks, i);
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 1 ||
        !PyUnicode_Check(PyTuple_GET_ITEM(spec, 0))) {
      PyErr_SetString(PyExc_TypeError, "Program: a step must be a tuple starting with its kind");
      goto fail;
    }
    const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(spec, 0));
    int rc = !strcmp(k, "region") ? parse_region(p, &p->thunks[i], spec)
             : !strcmp(k, "dot") ? parse_dot(p, &p->thunks[i], spec)
             : !strcmp(k, "reduce") ? parse_reduce(p, &p->thunks[i], spec)
             : !strcmp(k, "py") ? parse_py(p, &p->thunks[i], spec)
             : (PyErr_Format(PyExc_ValueError, "Program: unknown step kind '%s'", k), -1);
    if (rc < 0) {
      PyErr_Format(PyExc_ValueError, "Program: step %d ('%s') is malformed", i, k);
      goto fail;
    }
  }
  return (PyObject *)p;
fail:
  Py_DECREF(p);
  return NULL;
}

static PyObject *program_get_arena(Program *self, void *unused) {
  return PyLong_FromSsize_t(self->arena_bytes);
}
static PyObject *program_get_scratch(Program *self, void *unused) {
  return PyLong_FromSsize_t(self->scratch_bytes);
}
static PyObject *program_get_nsteps(Program *self, void *unused) {
  return PyLong_FromLong(self->nthunk);
}
static PyObject *program_get_nogil(Program *self, void *unused) {
  return PyBool_FromLong(self->nogil);
}

static PyGetSetDef program_getset[] = {
  {"arena_bytes", (getter)program_get_arena, NULL, "bytes of the arena (reused across calls)", NULL},
  {"scratch_bytes", (getter)program_get_scratch, NULL, "bytes of per-thread region scratch", NULL},
  {"num_steps", (getter)program_get_nsteps, NULL, "number of thunks", NULL},
  {"nogil", (getter)program_get_nogil, NULL, "whether run() releases the GIL", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

/* profile(on) -> None; profile() -> per-step mean seconds since profiling was switched on */
static PyObject *program_profile(Program *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs == 1) {
    int on = PyObject_IsTrue(args[0]);
    if (on < 0) return NULL;
    PyMem_Free(self->prof);
    self->prof = NULL;
    self->prof_calls = 0;
    if (on && !(self->prof = PyMem_Calloc((size_t)self->nthunk + 1, sizeof(double))))
      return PyErr_NoMemory();
    Py_RETURN_NONE;
  }
  PyObject *out = PyList_New(self->nthunk);
  for (int i = 0; out && i < self->nthunk; ++i)
    PyList_SET_ITEM(out, i, PyFloat_FromDouble(self->prof && self->prof_calls
                                                   ? self->prof[i] / (double)self->prof_calls
                                                   : 0.0));
  return out;
}

static PyMethodDef program_methods[] = {
  {"profile", (PyCFunction)(void (*)(void))program_profile, METH_FASTCALL,
   "profile(True) starts timing every step (profile(False) stops); profile() returns the mean "
   "seconds per step over the calls since."},
  {"run", (PyCFunction)(void (*)(void))program_run, METH_FASTCALL,
   "run(*inputs) -> tuple of outputs: checks the inputs' dtypes and shapes, allocates the "
   "outputs and runs every step in order (GIL released for large programs)."},
  {NULL, NULL, 0, NULL}};

static PyTypeObject ProgramType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "pullback.backends.cpu._cpu.Program",
  .tp_basicsize = sizeof(Program),
  .tp_dealloc = (destructor)program_dealloc,
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "Program(name, arena_bytes, in_specs, out_specs, consts, steps, nogil): a compiled "
            "schedule of C kernels over one arena (see schedule.c).",
  .tp_methods = program_methods,
  .tp_getset = program_getset,
  .tp_new = program_new,
};

/* ---------------------------------------------------------------- the fast call path
 *
 * FastCall(program, Array, ShapedArray, in_avals, out_avals, mode): calling it with Arrays runs
 * the program and returns the result Arrays (mode 0: the single output; 1: a tuple; 2: a list,
 * for the caller to unflatten), or NotImplemented when the arguments are not plain Arrays of
 * the compiled avals (or their layout differs): the caller then takes the general path. The
 * Arrays' and avals' fields are read through their __slots__ offsets, and result Arrays are
 * built the way Array._new builds them (no __init__). */

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  Program *prog;
  PyTypeObject *array_type, *aval_type;
  Py_ssize_t off_value, off_aval, off_shape, off_dtype, off_weak;
  PyObject *in_avals, *out_avals; /* tuples */
  int mode;
} FastCall;

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static int aval_equal(FastCall *f, PyObject *a, PyObject *b) {
  if (a == b) return 1;
  if (Py_TYPE(a) != f->aval_type || Py_TYPE(b) != f->aval_type)
    return PyObject_RichCompareBool(a, b, Py_EQ);
  PyObject *da = SLOT(a, f->off_dtype), *db = SLOT(b, f->off_dtype);
  PyObject *wa = SLOT(a, f->off_weak), *wb = SLOT(b, f->off_weak);
  if (!da || !db || !wa || !wb) return 0;
  if (wa != wb && PyObject_IsTrue(wa) != PyObject_IsTrue(wb)) return 0;
  if (da != db && !(PyArray_DescrCheck(da) && PyArray_DescrCheck(db) &&
                    PyArray_EquivTypes((PyArray_Descr *)da, (PyArray_Descr *)db)))
    return 0;
  PyObject *sa = SLOT(a, f->off_shape), *sb = SLOT(b, f->off_shape);
  return sa && sb && PyObject_RichCompareBool(sa, sb, Py_EQ) == 1;
}

static PyObject *fastcall_call(FastCall *f, PyObject *const *args, size_t nargsf, PyObject *kw) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (kw || n != PyTuple_GET_SIZE(f->in_avals) || n > 64) Py_RETURN_NOTIMPLEMENTED;
  PyObject *vals[64];
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *a = args[i];
    if (Py_TYPE(a) != f->array_type) Py_RETURN_NOTIMPLEMENTED;
    PyObject *aval = SLOT(a, f->off_aval), *v = SLOT(a, f->off_value);
    if (!aval || !v || !PyArray_CheckExact(v)) Py_RETURN_NOTIMPLEMENTED;
    int eq = aval_equal(f, aval, PyTuple_GET_ITEM(f->in_avals, i));
    if (eq < 0) return NULL;
    if (!eq) Py_RETURN_NOTIMPLEMENTED;
    vals[i] = v;
  }
  PyObject *outs = program_run(f->prog, vals, n);
  if (!outs) {
    if (PyErr_ExceptionMatches(LayoutError)) {
      PyErr_Clear();
      Py_RETURN_NOTIMPLEMENTED;
    }
    return NULL;
  }
  const Py_ssize_t nout = PyTuple_GET_SIZE(outs);
  PyObject *res = f->mode == 0 ? NULL : f->mode == 1 ? PyTuple_New(nout) : PyList_New(nout);
  if (f->mode != 0 && !res) { Py_DECREF(outs); return NULL; }
  for (Py_ssize_t k = 0; k < nout; ++k) {
    PyObject *arr = f->array_type->tp_alloc(f->array_type, 0);
    if (!arr) { Py_XDECREF(res); Py_DECREF(outs); return NULL; }
    PyObject *o = PyTuple_GET_ITEM(outs, k), *av = PyTuple_GET_ITEM(f->out_avals, k);
    Py_INCREF(o);
    Py_INCREF(av);
    SLOT(arr, f->off_value) = o;
    SLOT(arr, f->off_aval) = av;
    if (f->mode == 0) { Py_DECREF(outs); return arr; }
    if (f->mode == 1) PyTuple_SET_ITEM(res, k, arr); else PyList_SET_ITEM(res, k, arr);
  }
  Py_DECREF(outs);
  return res;
}

static Py_ssize_t slot_offset(PyTypeObject *t, const char *name) {
  PyObject *d = PyObject_GetAttrString((PyObject *)t, name);
  if (!d) return -1;
  Py_ssize_t off = -1;
  if (Py_IS_TYPE(d, &PyMemberDescr_Type)) {
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type == T_OBJECT_EX || m->type == T_OBJECT) off = m->offset;
  }
  Py_DECREF(d);
  if (off < 0) PyErr_Format(PyExc_TypeError, "FastCall: %s.%s is not a __slots__ field",
                            t->tp_name, name);
  return off;
}

static PyObject *fastcall_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *prog, *at, *vt, *ins, *outs;
  int mode;
  if (!PyArg_ParseTuple(args, "O!O!O!O!O!i", &ProgramType, &prog, &PyType_Type, &at, &PyType_Type,
                        &vt, &PyTuple_Type, &ins, &PyTuple_Type, &outs, &mode))
    return NULL;
  Program *p = (Program *)prog;
  if (PyTuple_GET_SIZE(ins) != p->nin || PyTuple_GET_SIZE(outs) != p->nout || mode < 0 ||
      mode > 2 || (mode == 0 && p->nout != 1)) {
    PyErr_SetString(PyExc_ValueError, "FastCall: avals do not match the program");
    return NULL;
  }
  FastCall *f = (FastCall *)type->tp_alloc(type, 0);
  if (!f) return NULL;
  f->vectorcall = (vectorcallfunc)fastcall_call;
  Py_INCREF(prog); f->prog = p;
  Py_INCREF(at); f->array_type = (PyTypeObject *)at;
  Py_INCREF(vt); f->aval_type = (PyTypeObject *)vt;
  Py_INCREF(ins); f->in_avals = ins;
  Py_INCREF(outs); f->out_avals = outs;
  f->mode = mode;
  if ((f->off_value = slot_offset(f->array_type, "_value")) < 0 ||
      (f->off_aval = slot_offset(f->array_type, "_aval")) < 0 ||
      (f->off_shape = slot_offset(f->aval_type, "shape")) < 0 ||
      (f->off_dtype = slot_offset(f->aval_type, "dtype")) < 0 ||
      (f->off_weak = slot_offset(f->aval_type, "weak_type")) < 0) {
    Py_DECREF(f);
    return NULL;
  }
  return (PyObject *)f;
}

static void fastcall_dealloc(FastCall *f) {
  Py_XDECREF(f->prog);
  Py_XDECREF(f->array_type);
  Py_XDECREF(f->aval_type);
  Py_XDECREF(f->in_avals);
  Py_XDECREF(f->out_avals);
  Py_TYPE(f)->tp_free((PyObject *)f);
}

static PyTypeObject FastCallType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "pullback.backends.cpu._cpu.FastCall",
  .tp_basicsize = sizeof(FastCall),
  .tp_dealloc = (destructor)fastcall_dealloc,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
  .tp_vectorcall_offset = offsetof(FastCall, vectorcall),
  .tp_call = PyVectorcall_Call,
  .tp_doc = "FastCall(program, Array, ShapedArray, in_avals, out_avals, mode): the common jit "
            "call (plain Arrays of the compiled avals) in one C call; NotImplemented otherwise.",
  .tp_new = fastcall_new,
};

/* ---------------------------------------------------------------- jit's dispatch
 *
 * JitBase is the C base of transforms.jit.JitFunction: calling a jitted function tries its
 * FastCalls (the `_fast` list of (FastCall, output tree or None)) when no keyword arguments are
 * given and no transformation is active with the cpu backend chosen, and otherwise calls the
 * Python method `_call(args, kwargs)` (tracing, caching, compiling, the general cases). */

typedef struct {
  PyObject_HEAD
  PyObject *fast; /* list */
} JitBase;

static PyObject *g_state, *g_config, *g_unflatten, *s_eager, *s_backend, *s_cpu, *s_call;

static PyObject *jitbase_call(JitBase *self, PyObject *args, PyObject *kw) {
  if ((!kw || PyDict_GET_SIZE(kw) == 0) && self->fast && PyList_GET_SIZE(self->fast) && g_state) {
    PyObject *eager = PyObject_GetAttr(g_state, s_eager);
    if (!eager) return NULL;
    int ok = eager == Py_True;
    Py_DECREF(eager);
    if (ok) {
      PyObject *b = PyObject_GetAttr(g_config, s_backend);
      if (!b) return NULL;
      ok = b == s_cpu || (PyUnicode_Check(b) && PyUnicode_Compare(b, s_cpu) == 0);
      Py_DECREF(b);
    }
    for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(self->fast); ++i) {
      PyObject *item = PyList_GET_ITEM(self->fast, i);
      if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 ||
          !Py_IS_TYPE(PyTuple_GET_ITEM(item, 0), &FastCallType))
        continue;
      FastCall *fc = (FastCall *)PyTuple_GET_ITEM(item, 0);
      PyObject *out = fastcall_call(fc, &PyTuple_GET_ITEM(args, 0),
                                    (size_t)PyTuple_GET_SIZE(args), NULL);
      if (!out) return NULL;
      if (out == Py_NotImplemented) { Py_DECREF(out); continue; }
      PyObject *tree = PyTuple_GET_ITEM(item, 1);
      if (tree == Py_None) return out;
      PyObject *r = PyObject_CallFunctionObjArgs(g_unflatten, tree, out, NULL);
      Py_DECREF(out);
      return r;
    }
  }
  PyObject *meth = PyObject_GetAttr((PyObject *)self, s_call);
  if (!meth) return NULL;
  PyObject *kwd = kw ? kw : PyDict_New();
  PyObject *r = kwd ? PyObject_CallFunctionObjArgs(meth, args, kwd, NULL) : NULL;
  if (!kw) Py_XDECREF(kwd);
  Py_DECREF(meth);
  return r;
}

static int jitbase_traverse(JitBase *self, visitproc visit, void *arg) {
  Py_VISIT(self->fast);
  return 0;
}

static int jitbase_clear(JitBase *self) {
  Py_CLEAR(self->fast);
  return 0;
}

static void jitbase_dealloc(JitBase *self) {
  PyObject_GC_UnTrack(self);
  jitbase_clear(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *jitbase_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  JitBase *self = (JitBase *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->fast = PyList_New(0);
  if (!self->fast) { Py_DECREF(self); return NULL; }
  return (PyObject *)self;
}

static PyMemberDef jitbase_members[] = {
  {"_fast", T_OBJECT_EX, offsetof(JitBase, fast), 0,
   "list of (FastCall, output tree or None) tried, in order, by a call"},
  {NULL, 0, 0, 0, NULL}};

static PyTypeObject JitBaseType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "pullback.backends.cpu._cpu.JitBase",
  .tp_basicsize = sizeof(JitBase),
  .tp_dealloc = (destructor)jitbase_dealloc,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
  .tp_traverse = (traverseproc)jitbase_traverse,
  .tp_clear = (inquiry)jitbase_clear,
  .tp_call = (ternaryfunc)jitbase_call,
  .tp_members = jitbase_members,
  .tp_doc = "The C base of jitted functions: the fast call path (see schedule.c).",
  .tp_new = jitbase_new,
};

static PyObject *jit_setup(PyObject *self, PyObject *args) {
  PyObject *state, *config, *unflatten;
  if (!PyArg_ParseTuple(args, "OOO", &state, &config, &unflatten)) return NULL;
  Py_XSETREF(g_state, Py_NewRef(state));
  Py_XSETREF(g_config, Py_NewRef(config));
  Py_XSETREF(g_unflatten, Py_NewRef(unflatten));
  Py_RETURN_NONE;
}

static PyObject *sched_slots(PyObject *self, PyObject *dt) {
  PyArray_Descr *d = NULL;
  if (!PyArray_DescrConverter(dt, &d)) return NULL;
  int s = pb_dtype_slot(d);
  int c = pb_cast_slot(d);
  Py_DECREF(d);
  return Py_BuildValue("ii", s, c);
}

static PyObject *sched_max_threads(PyObject *self, PyObject *unused) {
  int n = 1;
#ifdef _OPENMP
  n = omp_get_max_threads();
#endif
  return PyLong_FromLong(n);
}

static PyObject *sched_ewise_grains(PyObject *self, PyObject *unused) {
  PyObject *t = PyTuple_New(pb_ewise_nops());
  if (!t) return NULL;
  for (int i = 0; i < pb_ewise_nops(); ++i) {
    PyObject *v = PyLong_FromSsize_t(pb_ewise_grain(i));
    if (!v) { Py_DECREF(t); return NULL; }
    PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static PyMethodDef methods[] = {
  {"jit_setup", jit_setup, METH_VARARGS,
   "jit_setup(trace_state, config, tree_unflatten): what JitBase's fast path consults."},
  {"schedule_slots", sched_slots, METH_O,
   "schedule_slots(dtype) -> (dtype slot, cast slot): the kernel tables' indices of a dtype."},
  {"schedule_max_threads", sched_max_threads, METH_NOARGS,
   "schedule_max_threads(): OpenMP threads a program may use."},
  {"schedule_ewise_grains", sched_ewise_grains, METH_NOARGS,
   "schedule_ewise_grains(): per EWISE_OPS row, elements per thread worth an OpenMP split."},
  {NULL, NULL, 0, NULL}};

int pb_register_schedule(PyObject *m) {
  if (PyType_Ready(&ProgramType) < 0) return -1;
  Py_INCREF(&ProgramType);
  if (PyModule_AddObject(m, "Program", (PyObject *)&ProgramType) < 0) {
    Py_DECREF(&ProgramType);
    return -1;
  }
  s_eager = PyUnicode_InternFromString("eager");
  s_backend = PyUnicode_InternFromString("backend");
  s_cpu = PyUnicode_InternFromString("cpu");
  s_call = PyUnicode_InternFromString("_call");
  if (!s_eager || !s_backend || !s_cpu || !s_call) return -1;
  if (PyType_Ready(&JitBaseType) < 0) return -1;
  Py_INCREF(&JitBaseType);
  if (PyModule_AddObject(m, "JitBase", (PyObject *)&JitBaseType) < 0) {
    Py_DECREF(&JitBaseType);
    return -1;
  }
  if (PyType_Ready(&FastCallType) < 0) return -1;
  Py_INCREF(&FastCallType);
  if (PyModule_AddObject(m, "FastCall", (PyObject *)&FastCallType) < 0) {
    Py_DECREF(&FastCallType);
    return -1;
  }
  if (PyModule_AddFunctions(m, methods) < 0) return -1;
  LayoutError = PyErr_NewExceptionWithDoc(
      "pullback.backends.cpu._cpu.LayoutError",
      "An argument's memory layout differs from the one its program was compiled for.",
      PyExc_ValueError, NULL);
  if (!LayoutError || PyModule_AddObject(m, "LayoutError", LayoutError) < 0) return -1;
  Py_INCREF(LayoutError);
  PyObject *consts = Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "arena", BUF_ARENA,
                                   "input", BUF_INPUT, "output", BUF_OUTPUT, "const", BUF_CONST,
                                   "ewise", LOOP_EWISE, "cast", LOOP_CAST, "copy", LOOP_COPY,
                                   "select", LOOP_SELECT, "reduce", LOOP_REDUCE, "tile", RG_TILE);
  if (!consts) return -1;
  if (PyModule_AddObject(m, "SCHEDULE", consts) < 0) { Py_DECREF(consts); return -1; }
  return 0;
}
