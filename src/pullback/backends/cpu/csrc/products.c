/* The schedule's products (see schedule.c): a dot step, its matmul cut over the pool with its
 * epilogue following the rows the kernel finishes, and a par step, independent products side
 * by side (compiler/parallel.py). */
#include "pool.h"
#include "step.h"
#include "pb.h"
#include "cast.h"
#include <stdatomic.h>
#include <string.h>

typedef struct {
  pb_matmul_job mm;
  const char *a, *b;
  char *o;
  const thunk_t *epi;         /* an epilogue run on each chunk's slice, or NULL */
  char *epi_base[RG_MAXOPND];
  char *scratch;
  int epi_dim;
  bool sliced;                /* the epilogue can follow the product's rows */
  bool keep;                  /* the product is read after the epilogue too */
  _Atomic int failed;
  _Atomic int busy, tail;     /* a par's claimed product: threads in it; finished */
} dot_job;

/* the epilogue over rows of the product as the kernel finishes them (while they are in this
 * core's cache): a strip of rows is the epilogue's slice of dimension 0 */
typedef struct {
  const thunk_t *epi;
  char *const *base;
  char *scratch;
  int tid;
} rows_epilogue;

static void epilogue_rows(void *ctx, npy_intp r0, npy_intp r1, const char *rows) {
  const rows_epilogue *r = ctx;
  const thunk_t *e = r->epi;
  char *base[RG_MAXOPND];
  memcpy(base, r->base, sizeof(char *) * (size_t)e->nref);
  /* row r0 of the product is at rows (perhaps the kernel's scratch strip): based so that
   * region_slice's row r0 lands there (integer arithmetic: the base may lie outside it) */
  for (int i = 0; i < e->nref; ++i)
    if (e->reads >> i & 1)
      base[i] = (char *)((uintptr_t)rows - (uintptr_t)(r0 * e->strides[i * e->ndim]));
  pb_region_slice(e, base, r->scratch, 0, r0, r1, r->tid);
}

static void dot_chunk(void *ctx, npy_intp ci, int tid) {
  dot_job *j = ctx;
  rows_epilogue re = {j->epi, j->epi_base, j->scratch, tid};
  const int rc =
      pb_matmul_chunk(&j->mm, ci, j->epi && j->epi_dim == 0 ? epilogue_rows : NULL, &re,
                      !j->keep);
  if (rc < 0) {
    atomic_store(&j->failed, 1);
    return;
  }
  if (j->epi && rc == 0) { /* the chunk's slice of the product is in cache: post-process it now */
    npy_intp bi, lo, hi;
    pb_matmul_chunk_range(&j->mm, ci, &bi, &lo, &hi);
    pb_region_slice(j->epi, j->epi_base, j->scratch, j->epi_dim, lo, hi, tid);
  }
}

/* A dot step's product cut into chunks for `threads` threads: their number (0: it runs whole
 * on one thread), or -1 with c->error set. Only a product whose threads take strips of its
 * rows (mm.claim) when claim_only. */
static npy_intp dot_setup(const thunk_t *t, run_ctx *c, int threads, bool claim_only,
                          dot_job *j) {
  j->a = pb_resolve(c, &t->refs[0]);
  j->b = pb_resolve(c, &t->refs[1]);
  j->o = pb_resolve(c, &t->refs[2]);
  j->epi = NULL;
  j->keep = t->keep;
  j->scratch = c->scratch;
  atomic_init(&j->failed, 0);
  atomic_init(&j->busy, 0);
  atomic_init(&j->tail, 0);
  npy_intp n = threads > 1
      ? pb_matmul_chunks(&j->mm, t->sa, t->sb, t->so, t->dims[0], t->dims[1], t->dims[2],
                         t->dims[3], j->a, t->strides, j->b, t->strides + 3, j->o, t->strides + 6,
                         threads, claim_only)
      : 0;
  if (n < 0) {
    c->error = "dot_general: out of memory for the partial products";
    return -1;
  }
  const thunk_t *e = t->epilogue;
  /* an epilogue over the (M, N) product slices along with it (not when the chunks are parts
   * of one sum: it runs after them) */
  j->sliced = e && e->reads && !e->ninit && t->dims[0] == 1 && e->ndim == 2 &&
              e->shape[0] == t->dims[1] && e->shape[1] == t->dims[2];
  for (int i = 0; j->sliced && i < e->nref; ++i) j->epi_base[i] = pb_resolve(c, &e->refs[i]);
  if (n > 0 && j->sliced && !j->mm.by_k) {
    j->epi = e;
    j->epi_dim = j->mm.by_rows ? 0 : 1;
  }
  return n;
}

/* after the product: its kernel's failure reported, the epilogue run unless it followed it */
static int dot_finish(const thunk_t *t, run_ctx *c, const dot_job *j, int rc) {
  if (rc < 0 || atomic_load(&j->failed)) {
    c->error = "dot_general: the matmul kernel failed (out of memory)";
    return -1;
  }
  return t->epilogue && !j->epi ? pb_run_region(t->epilogue, c) : 0;
}

static int pb_run_dot(const thunk_t *t, run_ctx *c) {
  dot_job j;
  const npy_intp n = dot_setup(t, c, c->threads, false, &j);
  if (n < 0) return -1;
  int rc = 0;
  if (n > 0) {
    pb_pool_run(dot_chunk, &j, n);
    pb_matmul_done(&j.mm);
  } else {
    if (j.sliced) { /* whole on this thread: the epilogue follows the kernel's rows if it can */
      rows_epilogue re = {t->epilogue, j.epi_base, c->scratch, c->tid};
      rc = pb_matmul_rows(t->sa, t->sb, t->so, t->dims[1], t->dims[2], t->dims[3], j.a,
                          t->strides, j.b, t->strides + 3, j.o, t->strides + 6, epilogue_rows,
                          &re, !t->keep);
      if (rc > 0) j.epi = t->epilogue;
    }
    if (rc == 0)
      rc = pb_matmul_raw(t->sa, t->sb, t->so, t->dims[0], t->dims[1], t->dims[2], t->dims[3], j.a,
                         t->strides, j.b, t->strides + 3, j.o, t->strides + 6);
  }
  return dot_finish(t, c, &j, rc < 0 ? -1 : 0);
}

/* par: each step whole on one thread of the pool (a BLAS product runs single-threaded), rather
 * than each cut in chunks over all threads in turn (see compiler/parallel.py). */
typedef struct {
  const thunk_t *t;
  const run_ctx *c;
  _Atomic(const char *) error;
} par_job;

/* a par member's context: on pool thread tid alone, its own error */
static run_ctx member_ctx(const run_ctx *c, int tid) {
  run_ctx cc = *c;
  cc.threads = 1;
  cc.tid = tid;
  cc.error = NULL;
  return cc;
}

static void member_failed(_Atomic(const char *) *error, const run_ctx *cc) {
  atomic_store(error, cc->error ? cc->error : "par: a step failed");
}

static void par_item(void *ctx, npy_intp i, int tid) {
  par_job *j = ctx;
  run_ctx cc = member_ctx(j->c, tid);
  if (pb_run_thunk(&j->t->blocks[0][i], &cc) < 0) member_failed(&j->error, &cc);
}

/* Two products whose threads take strips of rows (pb_sgemm's claim): thread i starts on
 * product i, and when it has no strips of it left to take, takes the other's while a few remain
 * (joining costs it a packing of the other's B). So the pair still runs side by side, each B
 * packed once, yet a thread that starts late or is descheduled no longer holds the step up: a
 * busy core slowed a par step to its slower member's time, twice the pair's share. */
enum { PAR_HELP_MIN = 4 }; /* strips left that pay for a packing (~1 strip's time, 0.5-1.5) */

typedef struct {
  const thunk_t *t;
  const run_ctx *c;
  dot_job d[2];
  _Atomic(const char *) error;
} par_dots;

static void par_dot_part(par_dots *p, int i, int tid) {
  dot_job *j = &p->d[i];
  atomic_fetch_add(&j->busy, 1);
  dot_chunk(j, 0, tid);
  /* the last thread out of a product with nothing left to take runs what follows it */
  if (atomic_fetch_sub(&j->busy, 1) != 1 || atomic_load(&j->mm.taken) < j->mm.tasks ||
      atomic_exchange(&j->tail, 1))
    return;
  run_ctx cc = member_ctx(p->c, tid);
  if (dot_finish(&p->t->blocks[0][i], &cc, j, 0) < 0) member_failed(&p->error, &cc);
}

static void par_dot_item(void *ctx, npy_intp i, int tid) {
  par_dots *p = ctx;
  par_dot_part(p, (int)i, tid);
  dot_job *other = &p->d[1 - i];
  if (other->mm.tasks - atomic_load(&other->mm.taken) >= PAR_HELP_MIN)
    par_dot_part(p, 1 - (int)i, tid);
}

static int run_par_dots(run_ctx *c, par_dots *p) {
  pb_pool_run(par_dot_item, p, 2);
  for (int i = 0; i < 2; ++i) pb_matmul_done(&p->d[i].mm);
  c->error = atomic_load(&p->error);
  return c->error ? -1 : 0;
}

static int pb_run_par(const thunk_t *t, run_ctx *c) {
  const thunk_t *b = t->blocks[0];
  if (c->threads >= 2 && t->block_n[0] == 2 && b[0].kind == TH_DOT && b[1].kind == TH_DOT) {
    par_dots p = {.t = t, .c = c};
    atomic_init(&p.error, NULL);
    const npy_intp n0 = dot_setup(&b[0], c, 2, true, &p.d[0]);
    const npy_intp n1 = n0 > 0 ? dot_setup(&b[1], c, 2, true, &p.d[1]) : 0;
    if (n0 > 0 && n1 > 0) return run_par_dots(c, &p);
    if (n0 > 0) pb_matmul_done(&p.d[0].mm); /* set up for nothing */
    if (n0 < 0 || n1 < 0) return -1;
  }
  par_job j = {.t = t, .c = c};
  atomic_init(&j.error, NULL);
  pb_pool_run(par_item, &j, t->block_n[0]);
  c->error = atomic_load(&j.error);
  return c->error ? -1 : 0;
}

/* ---- parsers ---- */

static int parse_dot(Program *p, thunk_t *t, PyObject *spec) {
  /* compiler/steps.py's Dot: slots (a, b, out), dims (Bt, M, N, K), refs and strides (batch,
   * row, col) of a, b, out, an epilogue Region or None, and the epilogue operands that read
   * the product when it reads it element for element (it may then run on each chunk's slice),
   * keep: the product is read again after the epilogue */
  PyObject *slotv, *dims, *refs, *strides, *epi, *reads;
  npy_intp sl[3];
  if (!(slotv = pb_field_tuple(spec, "slots")) || !(dims = pb_field_tuple(spec, "dims")) ||
      !(refs = pb_field_tuple(spec, "refs")) || !(strides = pb_field_tuple(spec, "strides")) ||
      !(epi = pb_field(spec, "epilogue")) || !(reads = pb_field_tuple(spec, "reads")) ||
      pb_field_int(spec, "keep", &t->keep) < 0)
    return -1;
  if (pb_parse_ints(slotv, sl, 3, "dot slots") != 3) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: a dot has 3 slots");
    return -1;
  }
  t->sa = (int)sl[0];
  t->sb = (int)sl[1];
  t->so = (int)sl[2];
  t->kind = TH_DOT;
  if (pb_parse_ints(dims, t->dims, 4, "dot dims") != 4 || PyTuple_GET_SIZE(refs) != 3 ||
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
    if (pb_parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0) return -1;
    if (pb_parse_ints(PyTuple_GET_ITEM(strides, i), t->strides + 3 * i, 3, "dot strides") != 3) {
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
    if (pb_check_extent(p, &t->refs[i], 3, shp[i], t->strides + 3 * i, item) < 0) return -1;
  }
  if (t->strides[8] <= 0 || (N > 1 && t->strides[7] < N * t->strides[8])) {
    PyErr_SetString(PyExc_ValueError, "Program: a dot output must be row-major");
    return -1;
  }
  if (pb_dot_prepare() < 0) return -1;
  if (epi != Py_None) {
    t->epilogue = PyMem_Calloc(1, sizeof(thunk_t));
    if (!t->epilogue) { PyErr_NoMemory(); return -1; }
    t->epilogue->kind = TH_REGION;
    if (pb_parse_region(p, t->epilogue, epi) < 0) return -1;
  }
  const Py_ssize_t nr = PyTuple_GET_SIZE(reads);
  for (Py_ssize_t i = 0; i < nr; ++i) {
    const long r = PyLong_AsLong(PyTuple_GET_ITEM(reads, i));
    if (r == -1 && PyErr_Occurred()) return -1;
    if (!t->epilogue || r < 0 || r >= t->epilogue->nref) {
      PyErr_SetString(PyExc_ValueError, "Program: bad dot epilogue operand");
      return -1;
    }
    t->epilogue->reads |= 1u << r;
  }
  return 0;
}

static int parse_par(Program *p, thunk_t *t, PyObject *spec) {
  /* steps.py's Par: a block of steps that touch disjoint memory (the compiler checked), run
   * concurrently */
  PyObject *block = pb_field(spec, "block");
  if (!block) return -1;
  t->kind = TH_PAR;
  if (pb_alloc_blocks(t, 1) < 0 || pb_parse_block(p, block, &t->block_n[0], &t->blocks[0]) < 0)
    return -1;
  for (int i = 0; i < t->block_n[0]; ++i)
    if (t->blocks[0][i].kind != TH_DOT && t->blocks[0][i].kind != TH_SCAN) {
      PyErr_SetString(PyExc_ValueError, "Program: a par step holds dot or scan steps only");
      return -1;
    }
  return 0;
}

static void release_dot(thunk_t *t) {
  if (t->epilogue) {
    pb_thunk_clear(t->epilogue);
    PyMem_Free(t->epilogue);
  }
}

const pb_step_kind pb_step_dot = {"dot", parse_dot, pb_run_dot, release_dot};
const pb_step_kind pb_step_par = {"par", parse_par, pb_run_par, NULL};
