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
 *            region run in place on its output while it is still in cache (products.c).
 *   reduce - a table reduction (reduce.c's runner) into the output.
 *   py     - a Python callback (a primitive without a native thunk yet): reacquires the GIL,
 *            calls the primitive's cpu rule on ndarray views, copies the result into its slot.
 *   scan   - a block of thunks run `length` times; operands inside it may move with the
 *            iteration number of their loop level (xs[i], ys[i]: see ref_t).
 *   while  - a cond block computing a bool, then a body block, until the bool is false.
 *   cond   - one of several blocks, picked by an int32 index (clamped).
 *   par    - independent products side by side on the pool's threads (products.c).
 *   pipe   - a scan with products over its iterations on another thread (pipe.c).
 *   kernel - any registered C kernel (pb_kernel.h), GIL released (kernel_step.c; a kind of the
 *            step table, see program.h).
 * Every reference is checked against its buffer's extent when the Program is built, so a bad
 * schedule raises instead of touching memory it does not own. */
#include "program.h"
#include "kernel_abi.h"
#include "loops.h"
#include "cast.h"
#include "move.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <structmember.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

PyObject *pb_layout_error;

/* ---------------------------------------------------------------- execution */

/* n bytes from src to dst with non-temporal stores where dst is 16-byte aligned (the caller
 * fences before the data is shared) */
static void stream_copy(char *dst, const char *src, npy_intp n) {
#if defined(__x86_64__) || defined(__i386__)
  npy_intp head = (npy_intp)((16 - ((uintptr_t)dst & 15)) & 15);
  if (head > n) head = n;
  memcpy(dst, src, (size_t)head);
  npy_intp i = head;
  for (; i + 64 <= n; i += 64) {
    _mm_stream_ps((float *)(dst + i), _mm_loadu_ps((const float *)(src + i)));
    _mm_stream_ps((float *)(dst + i + 16), _mm_loadu_ps((const float *)(src + i + 16)));
    _mm_stream_ps((float *)(dst + i + 32), _mm_loadu_ps((const float *)(src + i + 32)));
    _mm_stream_ps((float *)(dst + i + 48), _mm_loadu_ps((const float *)(src + i + 48)));
  }
  memcpy(dst + i, src + i, (size_t)(n - i));
#else
  memcpy(dst, src, (size_t)n);
#endif
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
      const int o = st->opnd[st->nin];
      if (st->nt && str[st->nin] == st->item[st->nin]) { /* staged in scratch, then streamed */
        ptrs[st->nin] = scr + (size_t)r->ntslot * RG_SLOT_BYTES;
        st->fn(ptrs, str, len, st->prm);
        stream_copy(p[o] + t0 * s[o], ptrs[st->nin], len * s[o]);
      } else {
        st->fn(ptrs, str, len, st->prm);
      }
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
void pb_region_slice(const thunk_t *t, char *const *base0, char *scratch, int dim,
                     npy_intp lo, npy_intp hi, int tid) {
  rg_params rg = t->rg;
  rg.scratch = scratch + (size_t)tid * (size_t)t->rg.nslots * RG_SLOT_BYTES;
  if (dim < 0) { /* the whole space (0-d included) */
    pb_iterate(t->ndim, t->shape, t->nref, base0, t->strides, region_loop, &rg, 1);
#if defined(__x86_64__) || defined(__i386__)
    if (t->rg.ntslot >= 0 && !t->rg.ntloop) _mm_sfence();
#endif
    return;
  }
  npy_intp shape[PB_MAXDIMS];
  char *base[RG_MAXOPND];
  memcpy(shape, t->shape, sizeof(npy_intp) * (size_t)t->ndim);
  shape[dim] = hi - lo;
  for (int i = 0; i < t->nref; ++i) base[i] = base0[i] + lo * t->strides[i * t->ndim + dim];
  if (hi > lo) pb_iterate(t->ndim, shape, t->nref, base, t->strides, region_loop, &rg, 1);
#if defined(__x86_64__) || defined(__i386__)
  /* streamed stores reach memory before others read (a loop's slices: at the loop's end) */
  if (t->rg.ntslot >= 0 && !t->rg.ntloop) _mm_sfence();
#endif
}

static void region_chunk(void *ctx, npy_intp ci, int tid) {
  const region_job *j = ctx;
  const npy_intp len = j->chunks > 1 ? j->t->shape[j->dim] : 0;
  pb_region_slice(j->t, j->base, j->scratch, j->chunks > 1 ? j->dim : -1, len * ci / j->chunks,
                  len * (ci + 1) / j->chunks, tid);
}

int pb_run_region(const thunk_t *t, run_ctx *c) {
  region_job j = {.t = t, .scratch = c->scratch, .dim = 0, .chunks = 1};
  for (int i = 0; i < t->nref; ++i) j.base[i] = pb_resolve(c, &t->refs[i]);
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
  if (j.chunks > 1) pb_pool_run(region_chunk, &j, j.chunks);
  else region_chunk(&j, 0, c->tid);
  return 0;
}

static int run_reduce(const thunk_t *t, run_ctx *c) {
  const char *x = pb_resolve(c, &t->refs[0]);
  char *acc = pb_resolve(c, &t->refs[1]), *out = pb_resolve(c, &t->refs[2]);
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

/* The call's arguments: the input views. */
static PyObject *py_args(const thunk_t *t, run_ctx *c) {
  PyObject *views = PyTuple_New(t->npin);
  if (!views) return NULL;
  for (int i = 0; i < t->npin; ++i) {
    PyObject *v = raw_view(t->descrs[i], t->ndims[i], t->shapes[i], t->pstrides[i],
                           pb_resolve(c, &t->refs[i]));
    if (!v) { Py_DECREF(views); return NULL; }
    PyTuple_SET_ITEM(views, i, v);
  }
  return views;
}

static int run_py_locked(const thunk_t *t, run_ctx *c) {
  int rc = -1;
  PyObject *args = py_args(t, c), *res = NULL;
  if (!args) return -1;
  res = PyObject_CallObject(t->callable, args);
  if (!res) goto done;
  if (PyList_Check(res)) {
    PyObject *tu = PyList_AsTuple(res);
    Py_DECREF(res);
    if (!(res = tu)) goto done;
  }
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
    char *b2[2] = {PyArray_BYTES(arr), pb_resolve(c, &t->refs[i])};
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

static int run_thunk(const thunk_t *t, run_ctx *c);

static int run_block(const thunk_t *ts, int n, run_ctx *c) {
  for (int i = 0; i < n; ++i)
    if (run_thunk(&ts[i], c) < 0) return -1;
  return 0;
}

/* The body once per iteration; its slices move with this loop's level. */
static int run_scan(const thunk_t *t, run_ctx *c) {
  pb_plan pl; /* the body's small regions as direct kernel calls (loops.c) */
  const bool plan = t->length > 1 &&
                    pb_plan_block(&pl, t->blocks[0], t->block_n[0], c, t->level) == 0;
  int rc = 0;
  for (npy_intp i = 0; i < t->length && rc == 0; ++i) {
    const npy_intp it = t->reverse ? t->length - 1 - i : i;
    c->iter[t->level] = it;
    if (t == c->watch && c->pipe && pb_pipe_wait(c, i) < 0) { rc = -1; break; }
    rc = plan ? pb_plan_run(&pl, c, it) : run_block(t->blocks[0], t->block_n[0], c);
    if (rc == 0 && t == c->watch) atomic_store_explicit(c->progress, i + 1, memory_order_release);
  }
  if (plan) pb_plan_free(&pl);
#if defined(__x86_64__) || defined(__i386__)
  _mm_sfence(); /* slices the body streamed (rg.ntloop) reach memory before others read them */
#endif
  return rc;
}

static int run_while(const thunk_t *t, run_ctx *c) {
  const npy_bool *pred = (const npy_bool *)pb_resolve(c, &t->sel);
  pb_plan cond, body; /* a while loop's operands stay put: resolved once (loops.c) */
  if (pb_plan_block(&cond, t->blocks[0], t->block_n[0], c, -1) < 0) goto unplanned;
  if (pb_plan_block(&body, t->blocks[1], t->block_n[1], c, -1) < 0) {
    pb_plan_free(&cond);
    goto unplanned;
  }
  const int rc = pb_plan_while(&cond, &body, pred, c);
  pb_plan_free(&cond);
  pb_plan_free(&body);
  return rc;
unplanned: /* out of memory for the plans: step by step */
  for (;;) {
    if (run_block(t->blocks[0], t->block_n[0], c) < 0) return -1;
    if (!*pred) return 0;
    if (run_block(t->blocks[1], t->block_n[1], c) < 0) return -1;
  }
}

static int run_cond(const thunk_t *t, run_ctx *c) {
  int32_t k;
  memcpy(&k, pb_resolve(c, &t->sel), sizeof k);
  k = k < 0 ? 0 : k >= t->nblock ? t->nblock - 1 : k; /* clamped, as lax.switch does */
  return run_block(t->blocks[k], t->block_n[k], c);
}

/* A copy whose source or destination moves by clamped start indices read now. */
static int run_dcopy(const thunk_t *t, run_ctx *c) {
  npy_intp off = 0;
  for (int k = 0; k < t->nstart; ++k) {
    const dstart_t *d = &t->starts[k];
    const char *p = pb_resolve(c, &d->ref);
    int64_t v;
    if (d->is_signed) {
      v = d->item == 1 ? *(const int8_t *)p : d->item == 2 ? *(const int16_t *)p
          : d->item == 4 ? *(const int32_t *)p : *(const int64_t *)p;
    } else {
      const uint64_t u = d->item == 1 ? *(const uint8_t *)p : d->item == 2 ? *(const uint16_t *)p
                         : d->item == 4 ? *(const uint32_t *)p : *(const uint64_t *)p;
      v = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    v = v < 0 ? 0 : v > d->limit ? d->limit : v;
    off += (npy_intp)v * d->stride;
  }
  char *ptrs[2] = {pb_resolve(c, &t->refs[0]), pb_resolve(c, &t->refs[1])};
  ptrs[t->reverse] += off;
  pb_iterate(t->ndim, t->shape, 2, ptrs, t->strides, pb_move_copy_loop(t->op), NULL, 1);
  return 0;
}

int pb_run_thunk(const thunk_t *t, run_ctx *c) { return run_thunk(t, c); }

static int run_thunk(const thunk_t *t, run_ctx *c) {
  switch (t->kind) {
    case TH_TABLE: return t->step->run(t, c);
    case TH_PAR: return pb_run_par(t, c);
    case TH_PIPE: return pb_run_pipe(t, c);
    case TH_DCOPY: return run_dcopy(t, c);
    case TH_REGION: return pb_run_region(t, c);
    case TH_DOT: return pb_run_dot(t, c);
    case TH_REDUCE: return run_reduce(t, c);
    case TH_SCAN: return run_scan(t, c);
    case TH_WHILE: return run_while(t, c);
    case TH_COND: return run_cond(t, c);
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
        PyErr_Format(pb_layout_error, "jit(%U): argument %zd has strides other than the compiled "
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
  pb_step_failure failure; /* (only its flag is set up: the rest is written on a failure) */
  atomic_init(&failure.set, 0);
  run_ctx c = {.base = {abase, inb, outb, constb}, .threads = 1, .ts = NULL, .error = NULL,
               .failure = &failure,
               .scratch = arena ? arena + self->arena_bytes : NULL};
  int rc = 0;
  const unsigned fpmode = pb_get_fpmode();
  if (self->ftz) pb_set_fpmode(fpmode | PB_FTZ_DAZ);
#ifdef _OPENMP
  const int omp_threads = omp_get_max_threads();
#endif
  if (self->nogil) {
    c.threads = pb_pool_threads(self->max_threads);
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
  pb_set_fpmode(fpmode);
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
    if (failure.set && !PyErr_Occurred()) pb_kernel_raise(failure.name, failure.rc, &failure.ctx);
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

static PyObject *program_get_arena(Program *self, void *unused) {
  return PyLong_FromSsize_t(self->arena_bytes);
}
static PyObject *program_get_scratch(Program *self, void *unused) {
  return PyLong_FromSsize_t(self->scratch_bytes);
}
static PyObject *program_get_nstream(Program *self, void *unused) {
  return PyLong_FromLong(self->nstream);
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
  {"streamed_outputs", (getter)program_get_nstream, NULL,
   "region outputs written with streaming (non-temporal) stores", NULL},
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
  .tp_dealloc = (destructor)pb_program_dealloc,
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "Program(name, arena_bytes, in_specs, out_specs, consts, steps, nogil): a compiled "
            "schedule of C kernels over one arena (see schedule.c).",
  .tp_methods = program_methods,
  .tp_getset = program_getset,
  .tp_new = pb_program_new,
};

/* for callpath.c */
PyObject *pb_program_run(PyObject *p, PyObject *const *args, Py_ssize_t n) {
  return program_run((Program *)p, args, n);
}
PyTypeObject *pb_program_type(void) { return &ProgramType; }
void pb_program_arity(PyObject *p, int *nin, int *nout) {
  *nin = ((Program *)p)->nin;
  *nout = ((Program *)p)->nout;
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

static PyObject *sched_pair_ops(PyObject *self, PyObject *unused) {
  PyObject *t = PyList_New(0);
  for (int i = 0; t && i < pb_ewise_nops(); ++i) {
    if (!pb_pair_loop(i, 0)) continue;
    PyObject *v = PyLong_FromLong(i);
    if (!v || PyList_Append(t, v) < 0) Py_CLEAR(t);
    Py_XDECREF(v);
  }
  return t;
}

static PyMethodDef methods[] = {
  {"schedule_slots", sched_slots, METH_O,
   "schedule_slots(dtype) -> (dtype slot, cast slot): the kernel tables' indices of a dtype."},
  {"schedule_max_threads", sched_max_threads, METH_NOARGS,
   "schedule_max_threads(): OpenMP threads a program may use."},
  {"schedule_ewise_grains", sched_ewise_grains, METH_NOARGS,
   "schedule_ewise_grains(): per EWISE_OPS row, elements per thread worth an OpenMP split."},
  {"schedule_pair_ops", sched_pair_ops, METH_NOARGS,
   "schedule_pair_ops(): the EWISE_OPS rows with float32 pair loops f(a) OP b (vecmath.h)."},
  {NULL, NULL, 0, NULL}};

int pb_register_schedule(PyObject *m) {
  if (PyType_Ready(&ProgramType) < 0) return -1;
  Py_INCREF(&ProgramType);
  if (PyModule_AddObject(m, "Program", (PyObject *)&ProgramType) < 0) {
    Py_DECREF(&ProgramType);
    return -1;
  }
  if (PyModule_AddFunctions(m, methods) < 0) return -1;
  pb_layout_error = PyErr_NewExceptionWithDoc(
      "pullback.backends.cpu._cpu.LayoutError",
      "An argument's memory layout differs from the one its program was compiled for.",
      PyExc_ValueError, NULL);
  if (!pb_layout_error || PyModule_AddObject(m, "LayoutError", pb_layout_error) < 0) return -1;
  Py_INCREF(pb_layout_error);
  if (pb_register_callpath(m) < 0) return -1;
  PyObject *consts = Py_BuildValue(
      "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "arena", BUF_ARENA, "input", BUF_INPUT,
      "output", BUF_OUTPUT, "const", BUF_CONST, "ewise", LOOP_EWISE, "cast", LOOP_CAST, "copy",
      LOOP_COPY, "select", LOOP_SELECT, "reduce", LOOP_REDUCE, "pair", LOOP_PAIR, "tile", RG_TILE);
  if (!consts) return -1;
  if (PyModule_AddObject(m, "SCHEDULE", consts) < 0) { Py_DECREF(consts); return -1; }
  return 0;
}
