/* The kernel registry, `Kernel` handles and the generic eager entry (see kernel_abi.h).
 *
 *   kernel(name) -> Kernel          the handle of a registered kernel (KeyError if none)
 *   kernel_names() -> tuple         every registered name
 *   register_kernel(name, fn, nin, nout, params_size, owner=None)
 *                                   a user kernel (fn: address or capsule of a pb_kernel_fn)
 *   call(kernel, ins, outs, params) -> tuple of arrays
 *                                   runs a kernel on ndarrays: outs are (dtype, shape) pairs,
 *                                   allocated C-contiguous; params is the packed struct (bytes)
 */
#include "kernel_abi.h"
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

pb_kernel_table *pb_kernel_tables = NULL;

/* ---- ctx: scratch blocks chained through a 64-byte header ---- */

#define SCRATCH_HEAD 64

static void *ctx_scratch(pb_kernel_ctx *ctx, size_t nbytes) {
  if (nbytes > ((size_t)1 << 60)) return NULL;
  const size_t size = (nbytes + SCRATCH_HEAD + 63) / 64 * 64;
  char *b = aligned_alloc(64, size);
  if (!b) return NULL;
  *(void **)b = ctx->caller;
  ctx->caller = b;
  return b + SCRATCH_HEAD;
}

void pb_kernel_ctx_init(pb_kernel_ctx *ctx, int threads, uint32_t flags) {
  ctx->threads = threads > 0 ? threads : 1;
  ctx->flags = flags;
  ctx->scratch = ctx_scratch;
  ctx->error = 0;
  ctx->message[0] = 0;
  ctx->caller = NULL;
  ctx->rows_done = NULL;
  ctx->rows_data = NULL;
  ctx->followed = 0;
}

void pb_kernel_ctx_release(pb_kernel_ctx *ctx) {
  for (void *b = ctx->caller; b;) {
    void *next = *(void **)b;
    free(b);
    b = next;
  }
  ctx->caller = NULL;
}

void pb_kernel_raise(const char *name, int rc, const pb_kernel_ctx *ctx) {
  const int kind = ctx->error ? ctx->error : rc;
  PyObject *type = kind == PB_KERNEL_EVALUE ? PyExc_ValueError
                   : kind == PB_KERNEL_ENOMEM ? PyExc_MemoryError
                   : kind == PB_KERNEL_EINDEX ? PyExc_IndexError
                   : kind == PB_KERNEL_ETYPE ? PyExc_TypeError : PyExc_RuntimeError;
  if (ctx->message[0])
    PyErr_Format(type, "%s: %s", name, ctx->message);
  else if (kind == PB_KERNEL_ENOMEM)
    PyErr_Format(type, "%s: out of memory", name);
  else
    PyErr_Format(type, "%s: the kernel failed (code %d)", name, rc);
}

int pb_kernel_dtype(PyArray_Descr *d) {
  const int slot = pb_dtype_slot(d);
  return slot >= 0 ? slot : PB_OPAQUE;
}

/* ---- Kernel handles ---- */

typedef struct {
  PyObject_HEAD
  pb_kernel_def def;
  PyObject *name;   /* str (def.name points into it) */
  PyObject *owner;  /* keeps a user kernel's library alive, or NULL */
} KernelObject;

static void kernel_dealloc(KernelObject *self) {
  Py_XDECREF(self->name);
  Py_XDECREF(self->owner);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *kernel_repr(KernelObject *self) {
  return PyUnicode_FromFormat("<pullback kernel '%U' (nin=%d, nout=%d, params=%lld bytes)>",
                              self->name, self->def.nin, self->def.nout,
                              (long long)self->def.params_size);
}

static PyObject *kernel_get_name(KernelObject *self, void *u) { return Py_NewRef(self->name); }
static PyObject *kernel_get_nin(KernelObject *self, void *u) { return PyLong_FromLong(self->def.nin); }
static PyObject *kernel_get_nout(KernelObject *self, void *u) { return PyLong_FromLong(self->def.nout); }
static PyObject *kernel_get_psize(KernelObject *self, void *u) {
  return PyLong_FromLongLong(self->def.params_size);
}

static PyObject *kernel_get_follows(KernelObject *self, void *u) {
  return PyBool_FromLong(self->def.flags & PB_KERNEL_FOLLOWS_ROWS);
}

static PyGetSetDef kernel_getset[] = {
  {"follows_rows", (getter)kernel_get_follows, NULL,
   "whether it reports output 0's finished rows (a compiled step may fuse an epilogue)", NULL},
  {"name", (getter)kernel_get_name, NULL, "the registered name", NULL},
  {"nin", (getter)kernel_get_nin, NULL, "number of input operands (-1: any)", NULL},
  {"nout", (getter)kernel_get_nout, NULL, "number of output operands (-1: any)", NULL},
  {"params_size", (getter)kernel_get_psize, NULL, "bytes of the packed params struct", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject KernelType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "pullback.backends.cpu._cpu.Kernel",
  .tp_basicsize = sizeof(KernelObject),
  .tp_dealloc = (destructor)kernel_dealloc,
  .tp_repr = (reprfunc)kernel_repr,
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "A registered C kernel (pb_kernel.h); get one with kernel(name).",
  .tp_getset = kernel_getset,
};

const pb_kernel_def *pb_kernel_of(PyObject *handle) {
  if (Py_TYPE(handle) != &KernelType) {
    PyErr_Format(PyExc_TypeError, "expected a kernel handle (kernel(name)), got %s",
                 Py_TYPE(handle)->tp_name);
    return NULL;
  }
  return &((KernelObject *)handle)->def;
}

int pb_kernel_check(const pb_kernel_def *k, Py_ssize_t nin, Py_ssize_t nout,
                    Py_ssize_t params_size) {
  if ((k->nin >= 0 && nin != k->nin) || (k->nout >= 0 && nout != k->nout) || nin > 1024 ||
      nout > 1024) {
    PyErr_Format(PyExc_ValueError, "%s: the kernel takes %d inputs and %d outputs, got %zd and "
                 "%zd", k->name, k->nin, k->nout, nin, nout);
    return -1;
  }
  if (params_size != k->params_size) {
    PyErr_Format(PyExc_ValueError, "%s: the kernel's params are %lld bytes, got %zd", k->name,
                 (long long)k->params_size, params_size);
    return -1;
  }
  return k->prepare ? k->prepare() : 0; /* (both callers hold the GIL) */
}

static PyObject *registry; /* name -> Kernel */

static PyObject *new_kernel(const char *name, pb_kernel_fn fn, int nin, int nout,
                            int64_t params_size, int (*prepare)(void), unsigned flags,
                            PyObject *owner) {
  KernelObject *k = PyObject_New(KernelObject, &KernelType);
  if (!k) return NULL;
  k->owner = Py_XNewRef(owner);
  k->name = PyUnicode_FromString(name);
  if (!k->name) { Py_DECREF(k); return NULL; }
  k->def = (pb_kernel_def){PyUnicode_AsUTF8(k->name), fn, nin, nout, params_size, prepare,
                           flags};
  return (PyObject *)k;
}

static PyObject *py_kernel(PyObject *self, PyObject *name) {
  PyObject *k = PyDict_GetItemWithError(registry, name);
  if (!k && !PyErr_Occurred())
    PyErr_Format(PyExc_KeyError, "no kernel is registered under the name %R", name);
  return Py_XNewRef(k);
}

static PyObject *py_kernel_names(PyObject *self, PyObject *unused) {
  PyObject *keys = PyDict_Keys(registry);
  if (!keys) return NULL;
  if (PyList_Sort(keys) < 0) { Py_DECREF(keys); return NULL; }
  PyObject *t = PyList_AsTuple(keys);
  Py_DECREF(keys);
  return t;
}

static PyObject *py_register_kernel(PyObject *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"name", "fn", "nin", "nout", "params_size", "owner", NULL};
  const char *name;
  PyObject *fn, *owner = NULL;
  int nin, nout;
  long long psize;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "sOiiL|O", names, &name, &fn, &nin, &nout, &psize,
                                   &owner))
    return NULL;
  void *ptr = NULL;
  if (PyCapsule_CheckExact(fn)) {
    ptr = PyCapsule_GetPointer(fn, PyCapsule_GetName(fn));
    if (!ptr) return NULL;
  } else {
    ptr = PyLong_AsVoidPtr(fn);
    if (!ptr && PyErr_Occurred()) return NULL;
  }
  if (!ptr || !*name || nin < -1 || nout < -1 || nout == 0 || psize < 0) {
    PyErr_Format(PyExc_ValueError, "register_kernel: kernel %s needs a function pointer, nin and "
                 "nout >= -1 (nout != 0) and params_size >= 0", name);
    return NULL;
  }
  int has = PyDict_Contains(registry, PyTuple_GET_ITEM(args, 0));
  if (has) {
    if (has > 0)
      PyErr_Format(PyExc_ValueError, "register_kernel: a kernel named '%s' is already "
                   "registered", name);
    return NULL;
  }
  PyObject *k = new_kernel(name, (pb_kernel_fn)ptr, nin, nout, (int64_t)psize, NULL, 0, owner);
  if (!k) return NULL;
  if (PyDict_SetItemString(registry, name, k) < 0) { Py_DECREF(k); return NULL; }
  return k;
}

/* ---- the generic eager entry ---- */

/* A shape tuple into dims: its length, or -1 with an exception naming the kernel. */
static int pb_parse_ints_checked(PyObject *t, npy_intp *dims, const char *name) {
  const Py_ssize_t n = PyTuple_GET_SIZE(t);
  if (n > PB_MAXDIMS) {
    PyErr_Format(PyExc_ValueError, "%s: an output has more than %d dimensions", name, PB_MAXDIMS);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    const Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0) {
      PyErr_Format(PyExc_ValueError, "%s: an output shape has a negative dimension", name);
      return -1;
    }
    dims[i] = v;
  }
  return (int)n;
}

#define CALL_STACK_OPS 16

static PyObject *py_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "call: expected (kernel, ins, outs, params)");
    return NULL;
  }
  const pb_kernel_def *k = pb_kernel_of(args[0]);
  if (!k) return NULL;
  PyObject *ins = args[1], *outs = args[2], *prm = args[3];
  if (!(PyTuple_Check(ins) || PyList_Check(ins)) || !PyTuple_Check(outs)) {
    PyErr_Format(PyExc_TypeError, "%s: call takes a tuple or list of input arrays and a tuple "
                 "of (dtype, shape) outputs", k->name);
    return NULL;
  }
  char *pdata = NULL;
  Py_ssize_t plen = 0;
  if (prm != Py_None && PyBytes_AsStringAndSize(prm, &pdata, &plen) < 0) return NULL;
  const Py_ssize_t nin = PySequence_Fast_GET_SIZE(ins), nout = PyTuple_GET_SIZE(outs);
  if (pb_kernel_check(k, nin, nout, plen) < 0) return NULL;
  pb_operand stack[CALL_STACK_OPS];
  pb_operand *ops = nin + nout <= CALL_STACK_OPS
                        ? stack : PyMem_Malloc(sizeof(pb_operand) * (size_t)(nin + nout));
  if (!ops) return PyErr_NoMemory();
  PyObject *result = PyTuple_New(nout);
  if (!result) goto fail;
  npy_intp work = 0;
  PyObject **in_items = PySequence_Fast_ITEMS(ins);
  for (Py_ssize_t i = 0; i < nin; ++i) {
    PyArrayObject *a = pb_arg_array(in_items[i], k->name, "operand");
    if (!a) goto fail;
    const npy_intp n = PyArray_SIZE(a);
    work = n > work ? n : work;
    ops[i] = (pb_operand){PyArray_BYTES(a), pb_kernel_dtype(PyArray_DESCR(a)),
                          (int32_t)PyArray_ITEMSIZE(a), PyArray_NDIM(a),
                          (const int64_t *)PyArray_SHAPE(a), (const int64_t *)PyArray_STRIDES(a)};
  }
  for (Py_ssize_t i = 0; i < nout; ++i) {
    PyObject *spec = PyTuple_GET_ITEM(outs, i), *shp;
    PyArray_Descr *d = NULL;
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 ||
        !PyTuple_Check(shp = PyTuple_GET_ITEM(spec, 1))) {
      PyErr_Format(PyExc_TypeError, "%s: an output must be a (dtype, shape tuple) pair", k->name);
      goto fail;
    }
    npy_intp dims[PB_MAXDIMS];
    const int nd = pb_parse_ints_checked(shp, dims, k->name);
    if (nd < 0) goto fail;
    PyObject *dt = PyTuple_GET_ITEM(spec, 0);
    if (PyArray_DescrCheck(dt)) {
      d = (PyArray_Descr *)dt;
      Py_INCREF(d);
    } else if (!PyArray_DescrConverter(dt, &d)) {
      goto fail;
    }
    PyArrayObject *o = pb_new_array(nd, dims, d); /* steals d */
    if (!o) goto fail;
    PyTuple_SET_ITEM(result, i, (PyObject *)o);
    const npy_intp n = PyArray_SIZE(o);
    work = n > work ? n : work;
    ops[nin + i] = (pb_operand){PyArray_BYTES(o), pb_kernel_dtype(PyArray_DESCR(o)),
                                (int32_t)PyArray_ITEMSIZE(o), nd,
                                (const int64_t *)PyArray_SHAPE(o),
                                (const int64_t *)PyArray_STRIDES(o)};
  }
  pb_kernel_ctx ctx;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  pb_kernel_ctx_init(&ctx, threads, 0);
  int rc;
  if (work >= PB_NOGIL_MIN) {
    Py_BEGIN_ALLOW_THREADS
    rc = k->fn(ops, (int)nin, ops + nin, (int)nout, pdata, &ctx);
    pb_kernel_ctx_release(&ctx);
    Py_END_ALLOW_THREADS
  } else {
    rc = k->fn(ops, (int)nin, ops + nin, (int)nout, pdata, &ctx);
    pb_kernel_ctx_release(&ctx);
  }
  if (rc != 0) {
    pb_kernel_raise(k->name, rc, &ctx);
    goto fail;
  }
  if (ops != stack) PyMem_Free(ops);
  return result;
fail:
  Py_XDECREF(result);
  if (ops != stack) PyMem_Free(ops);
  return NULL;
}

static PyMethodDef methods[] = {
  {"kernel", py_kernel, METH_O, "kernel(name) -> the handle of the kernel registered as name."},
  {"kernel_names", py_kernel_names, METH_NOARGS, "kernel_names() -> every registered name."},
  {"register_kernel", (PyCFunction)(void (*)(void))py_register_kernel,
   METH_VARARGS | METH_KEYWORDS,
   "register_kernel(name, fn, nin, nout, params_size, owner=None) -> Kernel: registers a "
   "pb_kernel_fn (an address or a capsule) under name; owner is kept alive with it."},
  {"call", (PyCFunction)(void (*)(void))py_call, METH_FASTCALL,
   "call(kernel, ins, outs, params) -> tuple of arrays: runs kernel on the input arrays into new "
   "C-contiguous outputs, outs being (dtype, shape) pairs and params the packed struct."},
  {NULL, NULL, 0, NULL}};

int pb_register_kernel_abi(PyObject *m) {
  if (PyType_Ready(&KernelType) < 0) return -1;
  if (!(registry = PyDict_New())) return -1;
  for (const pb_kernel_table *t = pb_kernel_tables; t; t = t->next)
    for (int i = 0; i < t->n; ++i) {
      const pb_kernel_def *d = &t->defs[i];
      if (PyDict_GetItemString(registry, d->name)) {
        PyErr_Format(PyExc_ImportError, "pullback: two kernels are registered as '%s'", d->name);
        return -1;
      }
      PyObject *k = new_kernel(d->name, d->fn, d->nin, d->nout, d->params_size, d->prepare,
                               d->flags, NULL);
      if (!k || PyDict_SetItemString(registry, d->name, k) < 0) { Py_XDECREF(k); return -1; }
      Py_DECREF(k);
    }
  Py_INCREF(&KernelType);
  if (PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType) < 0) return -1;
  return PyModule_AddFunctions(m, methods);
}
