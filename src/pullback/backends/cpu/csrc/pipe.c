/* pipe: a scan, the product that makes its stacked input and the steps that sum over its
 * stacked outputs, overlapped.
 *
 * A product summing over a scan's iterations (a weight gradient: hs^T @ gs, with K running over
 * (t, batch)) needs each ys[t] once the scan has written it. The scan runs on one thread; the
 * products run in chunks of `every` iterations along K on the other as soon as the chunks are
 * written, and on both once the scan is done; a float sum over the iterations (a bias
 * gradient) likewise. Each unit (a product's column block, or a sum) adds its chunks in a fixed
 * order, one thread at a time, so the result does not depend on which thread ran what. And a
 * product whose rows are the scan's xs (the input projection xs @ Wx of a recurrent layer) is
 * made chunk by chunk ahead of the scan, which waits for each chunk before its iterations
 * instead of for the whole product. Measured on the tanh RNN benchmark (T=1000, 16x128 steps):
 * backward, a 5.1 ms scan then 4.1 ms of weight gradients became 6.0 ms; forward, the 0.7 ms
 * projection and the 6.8 ms scan became 7.1 ms. */
#include "pool.h"
#include "step.h"
#include "pb.h"
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PIPE_PAUSE() _mm_pause()
#else
#define PIPE_PAUSE() ((void)0)
#endif

typedef struct {
  const thunk_t *step;        /* a product (TH_DOT), or a sum over the iterations (TH_REDUCE) */
  npy_intp n0, n1;            /* its columns */
  char *tmp;                  /* a sum's chunk before it is added */
  const char *a, *b;
  char *c;
  _Atomic int busy;           /* a thread is summing its next chunk */
  _Atomic npy_intp next;      /* chunks summed so far */
  npy_intp kper;              /* K per scan iteration */
} pipe_unit;

typedef struct {
  const thunk_t *t;
  const run_ctx *c;
  pipe_unit *units;
  int nunits;
  npy_intp nchunks;
  _Atomic npy_intp progress;  /* iterations the scan has finished; -1: it failed */
  _Atomic npy_intp claimed;   /* the producer's chunks taken by a thread */
  _Atomic char *made;         /* per producer chunk: 1 made, -1 failed */
  _Atomic(const char *) error;
} pipe_job;

/* [t0, t1): the iterations chunk ci covers (reverse scans write their last iterations first) */
static void chunk_iters(const thunk_t *scan, npy_intp every, npy_intp ci, npy_intp *t0,
                        npy_intp *t1) {
  const npy_intp L = scan->length, lo = ci * every, hi = lo + every < L ? lo + every : L;
  *t0 = scan->reverse ? L - hi : lo;
  *t1 = scan->reverse ? L - lo : hi;
}

/* A reduction's chunk of iterations [t0, t1) (its first axis) into c (chunk 0) or added to c. */
static int reduce_chunk(pipe_unit *u, npy_intp ci, npy_intp t0, npy_intp t1) {
  const thunk_t *r = u->step;
  npy_intp shape[PB_MAXDIMS];
  memcpy(shape, r->shape, sizeof(npy_intp) * (size_t)r->ndim);
  shape[0] = t1 - t0;
  char *dst = ci == 0 ? u->c : u->tmp;
  if (pb_reduce_raw(r->op, r->slot, r->ndim, shape, r->strides, r->reduced,
                    u->a + t0 * r->strides[0], dst, dst) < 0)
    return -1;
  if (ci > 0 && r->slot == PB_F64)
    for (npy_intp i = 0; i < u->n1; ++i) ((double *)u->c)[i] += ((const double *)u->tmp)[i];
  else if (ci > 0)
    for (npy_intp i = 0; i < u->n1; ++i) ((float *)u->c)[i] += ((const float *)u->tmp)[i];
  return 0;
}

static int sum_chunk(const pipe_job *j, pipe_unit *u, npy_intp ci) {
  const thunk_t *d = u->step, *scan = &j->t->blocks[0][0];
  npy_intp t0, t1;
  chunk_iters(scan, j->t->length, ci, &t0, &t1);
  if (d->kind == TH_REDUCE) return reduce_chunk(u, ci, t0, t1);
  const npy_intp k0 = t0 * u->kper, k1 = t1 * u->kper, *as = d->strides, *bs = d->strides + 3,
                 *cs = d->strides + 6;
  return pb_matmul_acc(d->sa, d->dims[1], u->n1 - u->n0, k1 - k0, u->a + k0 * as[2], as,
                       u->b + k0 * bs[1] + u->n0 * bs[2], bs, u->c + u->n0 * cs[2], cs, ci > 0);
}

/* Sums every chunk that is ready into its unit, until all are summed (or the scan failed). */
static void consume(pipe_job *j, int tid) {
  const npy_intp L = j->t->blocks[0][0].length, every = j->t->length;
  for (int idle = 0;;) {
    int left = 0, did = 0;
    const npy_intp done = atomic_load_explicit(&j->progress, memory_order_acquire);
    if (done < 0) return;
    for (int k = 0; k < j->nunits; ++k) {
      pipe_unit *u = &j->units[(k + tid) % j->nunits]; /* threads start on different units */
      npy_intp ci = atomic_load_explicit(&u->next, memory_order_acquire);
      if (ci >= j->nchunks) continue;
      left = 1;
      const npy_intp need = (ci + 1) * every < L ? (ci + 1) * every : L;
      int free = 0;
      if (done < need || !atomic_compare_exchange_strong(&u->busy, &free, 1)) continue;
      ci = atomic_load_explicit(&u->next, memory_order_acquire); /* as of holding it */
      if (ci < j->nchunks && ((ci + 1) * every < L ? (ci + 1) * every : L) <= done) {
        if (sum_chunk(j, u, ci) < 0) {
          atomic_store(&j->error, "dot_general: out of memory in a pipelined product");
          ci = j->nchunks - 1; /* give up on this unit */
        }
        atomic_store_explicit(&u->next, ci + 1, memory_order_release);
        did = 1;
      }
      atomic_store_explicit(&u->busy, 0, memory_order_release);
    }
    if (!left) return;
    if (did) idle = 0;
    else if (++idle < 256) PIPE_PAUSE();
    else sched_yield();
  }
}

/* Makes the producer's next unclaimed chunk (rows for `every` iterations, in the scan's order);
 * 0 when none was left. Any thread may: the scan's own when it would otherwise wait. */
static int produce_one(pipe_job *j) {
  const npy_intp ci = atomic_fetch_add(&j->claimed, 1);
  if (ci >= j->nchunks) return 0;
  const thunk_t *d = &j->t->blocks[2][0], *scan = &j->t->blocks[0][0];
  const npy_intp rper = j->t->pipe_rper, *as = d->strides, *bs = d->strides + 3,
                 *cs = d->strides + 6;
  npy_intp t0, t1;
  chunk_iters(scan, j->t->length, ci, &t0, &t1);
  const npy_intp r0 = t0 * rper;
  const int rc = pb_matmul_acc(d->sa, (t1 - t0) * rper, d->dims[2], d->dims[3],
                               pb_resolve(j->c, &d->refs[0]) + r0 * as[1], as,
                               pb_resolve(j->c, &d->refs[1]), bs,
                               pb_resolve(j->c, &d->refs[2]) + r0 * cs[1], cs, 0);
  if (rc < 0) atomic_store(&j->error, "dot_general: out of memory in a pipelined product");
  atomic_store_explicit(&j->made[ci], rc < 0 ? -1 : 1, memory_order_release);
  return 1;
}

static void produce(pipe_job *j) {
  while (produce_one(j)) {
  }
}

/* The scan, publishing its progress (and waiting for its input when there is a producer). */
static void run_scan_item(pipe_job *j, int tid) {
  run_ctx cc = *j->c;
  cc.threads = 1; /* its steps are small: they stay on this thread */
  cc.tid = tid;
  cc.error = NULL;
  cc.watch = &j->t->blocks[0][0];
  cc.progress = &j->progress;
  cc.pipe = j->t->block_n[2] ? j : NULL;
  if (pb_run_thunk(cc.watch, &cc) < 0) {
    atomic_store(&j->error, cc.error ? cc.error : "scan: a step failed");
    atomic_store_explicit(&j->progress, -1, memory_order_release);
    return;
  }
  atomic_store_explicit(&j->progress, cc.watch->length, memory_order_release);
}

/* Item 0 is the scan (on the calling thread, which claims it first: a worker the OS holds back
 * can then only delay a producer chunk or a sum, which the scan's thread takes over), item 1
 * the producer; both then sum. On one thread in turn, the scan makes its input itself. */
static void pipe_item(void *ctx, npy_intp i, int tid) {
  pipe_job *j = ctx;
#ifdef _OPENMP
  /* a reduction stays on this worker (the caller's own count is set around the whole run) */
  if (tid != 0 && omp_get_max_threads() > 1) omp_set_num_threads(1);
#endif
  if (i == 0) run_scan_item(j, tid);
  else if (j->t->block_n[2]) produce(j);
  consume(j, tid);
}

/* Before iteration i of the watched scan: its input made (0, or -1 when the producer failed),
 * making chunks itself rather than waiting for ones nobody has taken. */
int pb_pipe_wait(const run_ctx *c, npy_intp i) {
  pipe_job *j = c->pipe;
  const npy_intp ci = i / j->t->length;
  for (int idle = 0;;) {
    const char m = atomic_load_explicit(&j->made[ci], memory_order_acquire);
    if (m) return m < 0 ? -1 : 0;
    if (produce_one(j)) idle = 0;
    else if (++idle < 256) PIPE_PAUSE();
    else sched_yield();
  }
}

static int pb_run_pipe(const thunk_t *t, run_ctx *c) {
  const int nd = t->block_n[1];
  int nunits = 0;
  for (int i = 0; i < nd; ++i) nunits += t->pipe_parts[i];
  pipe_unit *units = calloc((size_t)nunits, sizeof(pipe_unit));
  if (!units) {
    c->error = "pipe: out of memory";
    return -1;
  }
  const thunk_t *scan = &t->blocks[0][0];
  pipe_job j = {.t = t, .c = c, .units = units, .nunits = nunits,
                .nchunks = (scan->length + t->length - 1) / t->length};
  atomic_init(&j.progress, 0);
  atomic_init(&j.claimed, 0);
  j.made = calloc((size_t)j.nchunks + 1, 1);
  atomic_init(&j.error, NULL);
  int failed = 0;
  for (int i = 0, u = 0; i < nd; ++i) {
    const thunk_t *d = &t->blocks[1][i];
    const npy_intp N = d->dims[2], parts = t->pipe_parts[i];
    for (npy_intp p = 0; p < parts; ++p, ++u) {
      pipe_unit *x = &units[u];
      x->step = d;
      if (d->kind == TH_REDUCE) { /* a sum over the iterations: its output whole, one unit */
        npy_intp n = 1;
        for (int k = 0; k < d->ndim; ++k) n *= d->reduced[k] ? 1 : d->shape[k];
        x->n1 = n;
        x->a = pb_resolve(c, &d->refs[0]);
        x->c = pb_resolve(c, &d->refs[2]);
        x->tmp = malloc((size_t)(n * (d->slot == PB_F64 ? 8 : 4)));
        if (!x->tmp) failed = 1;
        atomic_init(&x->busy, 0);
        atomic_init(&x->next, 0);
        continue;
      }
      x->kper = t->pipe_k[i];
      x->n0 = p == 0 ? 0 : N * p / parts / 16 * 16; /* vector-aligned column blocks */
      x->n1 = p == parts - 1 ? N : N * (p + 1) / parts / 16 * 16;
      x->a = pb_resolve(c, &d->refs[0]);
      x->b = pb_resolve(c, &d->refs[1]);
      x->c = pb_resolve(c, &d->refs[2]);
      atomic_init(&x->busy, 0);
      atomic_init(&x->next, x->n1 > x->n0 ? 0 : j.nchunks); /* an empty block: nothing to do */
    }
  }
  if (failed || !j.made) {
    atomic_store(&j.error, "pipe: out of memory");
  } else if (c->threads > 1) {
    pb_pool_run(pipe_item, &j, 2);
  } else {
    pipe_item(&j, 0, c->tid);
    pipe_item(&j, 1, c->tid);
  }
  for (int u = 0; u < nunits; ++u) free(units[u].tmp);
  free(units);
  free((void *)j.made);
  if ((c->error = atomic_load(&j.error))) return -1;
  for (int i = 0; i < nd; ++i) /* the products are whole: their epilogues run now */
    if (t->blocks[1][i].epilogue && pb_run_thunk(t->blocks[1][i].epilogue, c) < 0) return -1;
  return 0;
}

/* ---- building one ---- */

/* A batch-1 product of one float dtype throughout: what pb_matmul_acc takes. */
static int plain_float_dot(const thunk_t *d) {
  return d->kind == TH_DOT && d->dims[0] == 1 && d->sa == d->sb && d->sa == d->so &&
         (d->sa == PB_F32 || d->sa == PB_F64);
}

static int parse_pipe(Program *p, thunk_t *t, PyObject *spec) {
  /* compiler/steps.py's Pipe: a scan, the products (and sums) over its iterations with their
   * K per iteration and column blocks, iterations per chunk, a producer product or None and
   * its rows per iteration: products summing over the scan's iterations, run as it writes
   * them, and one making its input ahead of it. Each product's K (the producer's M) is a whole
   * number per iteration times the scan's length, so a chunk of iterations is a range of K (M)
   * within the operands the build checked. */
  PyObject *scan, *dots, *kper, *parts, *producer;
  long long every, rper;
  if (!(scan = pb_field(spec, "scan")) || !(dots = pb_field_tuple(spec, "dots")) ||
      !(kper = pb_field_tuple(spec, "kper")) || !(parts = pb_field_tuple(spec, "parts")) ||
      pb_field_ll(spec, "every", &every) < 0 || !(producer = pb_field(spec, "producer")) ||
      pb_field_ll(spec, "rper", &rper) < 0)
    return -1;
  t->kind = TH_PIPE;
  t->length = (npy_intp)every;
  const Py_ssize_t nd = PyTuple_GET_SIZE(dots);
  const Py_ssize_t np = producer != Py_None;
  if (p->depth != 0 || nd > 64 || nd + np < 1 || PyTuple_GET_SIZE(kper) != nd ||
      PyTuple_GET_SIZE(parts) != nd || every < 1) {
    PyErr_SetString(PyExc_ValueError, "Program: bad pipe step");
    return -1;
  }
  /* the scan and the producer as blocks of one step (none for no producer) */
  PyObject *scan1 = PyTuple_Pack(1, scan);
  PyObject *prod = np ? PyTuple_Pack(1, producer) : PyTuple_New(0);
  int rc = !scan1 || !prod || pb_alloc_blocks(t, 3) < 0 ||
           pb_parse_block(p, scan1, &t->block_n[0], &t->blocks[0]) < 0 ||
           pb_parse_block(p, dots, &t->block_n[1], &t->blocks[1]) < 0 ||
           pb_parse_block(p, prod, &t->block_n[2], &t->blocks[2]) < 0;
  Py_XDECREF(scan1);
  Py_XDECREF(prod);
  if (rc) return -1;
  t->pipe_k = PyMem_Calloc((size_t)nd, sizeof(npy_intp));
  t->pipe_parts = PyMem_Calloc((size_t)nd, sizeof(int));
  if (!t->pipe_k || !t->pipe_parts) { PyErr_NoMemory(); return -1; }
  npy_intp k[64], np_[64];
  if (pb_parse_ints(kper, k, 64, "pipe K per iteration") != nd ||
      pb_parse_ints(parts, np_, 64, "pipe column blocks") != nd)
    return -1;
  const thunk_t *sc = &t->blocks[0][0];
  if (sc->kind != TH_SCAN || sc->length < 1) {
    PyErr_SetString(PyExc_ValueError, "Program: a pipe starts with a scan of at least one step");
    return -1;
  }
  for (Py_ssize_t i = 0; i < nd; ++i) {
    const thunk_t *d = &t->blocks[1][i];
    if (d->kind == TH_REDUCE) { /* a sum over the iterations: the first axis, into its output */
      const ref_t *acc = &d->refs[1], *out = &d->refs[2];
      if (d->op != PB_REDUCE_SUM || !d->reduced[0] || d->ndim < 1 ||
          d->shape[0] != sc->length || (d->slot != PB_F32 && d->slot != PB_F64) || np_[i] != 1 ||
          acc->kind != out->kind || acc->index != out->index || acc->offset != out->offset) {
        PyErr_SetString(PyExc_ValueError, "Program: a pipe's reductions are float sums over "
                        "the scan's iterations into their output");
        return -1;
      }
      t->pipe_k[i] = 1;
      t->pipe_parts[i] = 1;
      continue;
    }
    if (!plain_float_dot(d) || k[i] < 1 || k[i] * sc->length != d->dims[3] || np_[i] < 1 ||
        np_[i] > 16) {
      PyErr_SetString(PyExc_ValueError, "Program: a pipe's products are float32 or float64 "
                      "dots whose K is the scan's length times their K per iteration");
      return -1;
    }
    t->pipe_k[i] = k[i];
    t->pipe_parts[i] = (int)np_[i];
  }
  if (np) { /* the producer: its rows are the scan's xs, rper of them per iteration */
    const thunk_t *d = &t->blocks[2][0];
    if (!plain_float_dot(d) || d->epilogue || rper < 1 || rper * sc->length != d->dims[1]) {
      PyErr_SetString(PyExc_ValueError, "Program: a pipe's producer is a float32 or float64 "
                      "dot without epilogue whose rows are the scan's length times rper");
      return -1;
    }
    t->pipe_rper = (npy_intp)rper;
  }
  return 0;
}

static void release_pipe(thunk_t *t) {
  PyMem_Free(t->pipe_k);
  PyMem_Free(t->pipe_parts);
}

const pb_step_kind pb_step_pipe = {"pipe", parse_pipe, pb_run_pipe, release_pipe};
