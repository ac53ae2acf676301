/* The "kernel" step: any registered kernel (pb_kernel.h) run natively in a compiled program,
 * GIL released, its operands fixed at compile time. The compiler emits it from
 * compiler/steps.py's KernelStep, as a Kernel spec: the kernel's handle, ins and outs (Operand
 * specs: ref, dtype, shape, strides) and params, the packed struct (bytes).
 * Every operand is checked against its buffer here, when the program is built. */
#include "kernel_abi.h"
#include "step.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  PyObject *handle;       /* keeps the kernel (and a user kernel's library) alive */
  const pb_kernel_def *k;
  int nin, nout;
  ref_t *refs;            /* per operand, inputs then outputs */
  pb_operand *ops;        /* per operand, without its data pointer (resolved per run) */
  int64_t *dims;          /* the operands' shapes and strides */
  char *params;
  thunk_t *epilogue;      /* a region run on output 0 (NULL: none): as the kernel reports its
                           * rows when it can (PB_KERNEL_FOLLOWS_ROWS), else after it */
  bool sliced;            /* the epilogue is (rows, row) over output 0, slice-able by rows */
} kernel_step;

/* The epilogue over output 0's rows as the kernel finishes them (pb_kernel.h's rows_done) */
typedef struct {
  const thunk_t *epi;
  char *base[RG_MAXOPND];
  char *scratch;
  int threads, tid; /* the step's thread allowance and its own pool index */
} rows_job;

static void kernel_rows_done(pb_kernel_ctx *ctx, int64_t r0, int64_t r1, int tid) {
  const rows_job *j = ctx->rows_data;
  /* a kernel with threads > 1 runs its OpenMP team in this step's place (pool indices 0..);
   * with one thread it runs on the step's own thread */
  pb_region_slice(j->epi, j->base, j->scratch, 0, r0, r1, j->threads > 1 ? tid : j->tid);
}

static void release_kernel(thunk_t *t) {
  kernel_step *s = t->data;
  if (!s) return;
  Py_XDECREF(s->handle);
  PyMem_Free(s->refs);
  PyMem_Free(s->ops);
  PyMem_Free(s->dims);
  PyMem_Free(s->params);
  if (s->epilogue) {
    pb_thunk_clear(s->epilogue);
    PyMem_Free(s->epilogue);
  }
  PyMem_Free(s);
  t->data = NULL;
}

static int parse_operand(Program *p, kernel_step *s, int i, PyObject *spec) {
  PyObject *ref, *dt, *shape, *strides;
  if (!(ref = pb_field(spec, "ref")) || !(dt = pb_field(spec, "dtype")) ||
      !(shape = pb_field_tuple(spec, "shape")) || !(strides = pb_field_tuple(spec, "strides")))
    return -1;
  if (pb_parse_ref(p, ref, &s->refs[i]) < 0) return -1;
  PyArray_Descr *d = NULL;
  if (!PyArray_DescrConverter(dt, &d)) return -1;
  const int code = pb_kernel_dtype(d);
  const npy_intp item = PyDataType_ELSIZE(d);
  Py_DECREF(d);
  int64_t *shp = s->dims + 2 * PB_MAXDIMS * i, *str = shp + PB_MAXDIMS;
  const int nd = pb_parse_ints(shape, (npy_intp *)shp, PB_MAXDIMS, "kernel operand shape");
  if (nd < 0) return -1;
  if (pb_parse_ints(strides, (npy_intp *)str, PB_MAXDIMS, "kernel operand strides") != nd) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "kernel operand strides != ndim");
    return -1;
  }
  if (item < 1 || pb_check_extent(p, &s->refs[i], nd, (npy_intp *)shp, (npy_intp *)str, item) < 0)
    return -1;
  s->ops[i] = (pb_operand){NULL, code, (int32_t)item, nd, shp, str};
  return 0;
}

static int parse_kernel(Program *p, thunk_t *t, PyObject *spec) {
  /* compiler/steps.py's Kernel */
  PyObject *handle, *ins, *outs, *params;
  if (!(handle = pb_field(spec, "kernel")) || !(ins = pb_field_tuple(spec, "ins")) ||
      !(outs = pb_field_tuple(spec, "outs")) || !(params = pb_field(spec, "params")))
    return -1;
  if (!PyBytes_Check(params)) {
    PyErr_SetString(PyExc_ValueError, "Program: a kernel step's params must be bytes");
    return -1;
  }
  const pb_kernel_def *k = pb_kernel_of(handle);
  const Py_ssize_t nin = PyTuple_GET_SIZE(ins), nout = PyTuple_GET_SIZE(outs);
  if (!k || pb_kernel_check(k, nin, nout, PyBytes_GET_SIZE(params)) < 0) return -1;
  kernel_step *s = PyMem_Calloc(1, sizeof(kernel_step));
  if (!s) { PyErr_NoMemory(); return -1; }
  t->data = s;
  s->handle = Py_NewRef(handle);
  s->k = k;
  s->nin = (int)nin;
  s->nout = (int)nout;
  const size_t n = (size_t)(nin + nout);
  s->refs = PyMem_Calloc(n + 1, sizeof(ref_t));
  s->ops = PyMem_Calloc(n + 1, sizeof(pb_operand));
  s->dims = PyMem_Calloc(2 * PB_MAXDIMS * (n + 1), sizeof(int64_t));
  s->params = PyMem_Malloc((size_t)PyBytes_GET_SIZE(params) + 1);
  if (!s->refs || !s->ops || !s->dims || !s->params) { PyErr_NoMemory(); return -1; }
  memcpy(s->params, PyBytes_AS_STRING(params), (size_t)PyBytes_GET_SIZE(params));
  for (Py_ssize_t i = 0; i < nin + nout; ++i)
    if (parse_operand(p, s, (int)i, PyTuple_GET_ITEM(i < nin ? ins : outs, i < nin ? i : i - nin)) < 0)
      return -1;
  /* the epilogue: a Region, and the operands of it that read output 0 element for element */
  PyObject *epi, *reads;
  if (!(epi = pb_field(spec, "epilogue")) || !(reads = pb_field_tuple(spec, "reads"))) return -1;
  if (epi == Py_None) return 0;
  if (nout < 1) {
    PyErr_SetString(PyExc_ValueError, "Program: a kernel epilogue needs an output");
    return -1;
  }
  s->epilogue = PyMem_Calloc(1, sizeof(thunk_t));
  if (!s->epilogue) { PyErr_NoMemory(); return -1; }
  s->epilogue->kind = TH_REGION;
  if (pb_parse_region(p, s->epilogue, epi) < 0) return -1;
  thunk_t *e = s->epilogue;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(reads); ++i) {
    const long r = PyLong_AsLong(PyTuple_GET_ITEM(reads, i));
    if (r == -1 && PyErr_Occurred()) return -1;
    if (r < 0 || r >= e->nref) {
      PyErr_SetString(PyExc_ValueError, "Program: bad kernel epilogue operand");
      return -1;
    }
    e->reads |= 1u << r;
  }
  const pb_operand *o = &s->ops[nin];
  const int64_t row = o->ndim ? o->shape[o->ndim - 1] : 1;
  s->sliced = (k->flags & PB_KERNEL_FOLLOWS_ROWS) && e->reads && !e->ninit && e->ndim == 2 &&
              row > 0 && e->shape[1] == row && e->shape[0] * row == pb_operand_size(o);
  return 0;
}

#define STACK_OPS 16

static int run_kernel(const thunk_t *t, run_ctx *c) {
  const kernel_step *s = t->data;
  const int n = s->nin + s->nout;
  pb_operand stack[STACK_OPS];
  pb_operand *ops = n <= STACK_OPS ? stack : malloc(sizeof(pb_operand) * (size_t)n);
  if (!ops) {
    c->error = "kernel: out of memory for its operands";
    return -1;
  }
  memcpy(ops, s->ops, sizeof(pb_operand) * (size_t)n);
  for (int i = 0; i < n; ++i) ops[i].data = pb_resolve(c, &s->refs[i]);
  pb_kernel_ctx ctx;
  pb_kernel_ctx_init(&ctx, c->threads, PB_KERNEL_IN_PROGRAM);
  rows_job job;
  if (s->sliced) {
    job.epi = s->epilogue;
    for (int i = 0; i < s->epilogue->nref; ++i) job.base[i] = pb_resolve(c, &s->epilogue->refs[i]);
    job.scratch = c->scratch;
    job.threads = c->threads;
    job.tid = c->tid;
    ctx.rows_done = kernel_rows_done;
    ctx.rows_data = &job;
  }
  const int rc = s->k->fn(ops, s->nin, ops + s->nin, s->nout, s->params, &ctx);
  pb_kernel_ctx_release(&ctx);
  if (ops != stack) free(ops);
  if (rc == 0) return s->epilogue && !ctx.followed ? pb_run_region(s->epilogue, c) : 0;
  pb_step_failure *f = c->failure;
  if (f && !atomic_exchange(&f->set, 1)) { /* the first failure is the one raised */
    f->rc = rc;
    f->name = s->k->name;
    f->ctx.error = ctx.error;
    memcpy(f->ctx.message, ctx.message, sizeof ctx.message);
  }
  c->error = "kernel: a kernel step failed";
  return -1;
}

const pb_step_kind pb_step_kernel = {"kernel", parse_kernel, run_kernel, release_kernel};
