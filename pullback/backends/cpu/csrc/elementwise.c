/* Element-wise kernels: one table row per op. The frontend has already broadcast operands to
 * one shape (zero strides) and cast them to one dtype; the kernel checks both anyway, so a bad
 * call raises instead of reading out of bounds. */
#include "ewise.h"
#include <tgmath.h> /* sin/exp/... pick the float, double or complex version from the type */

/* ---- arithmetic ---- */
PB_SINTS(PB_BINARY_LOOP, add, a + b) PB_UINTS(PB_BINARY_LOOP, add, a + b)
PB_REALS(PB_BINARY_LOOP, add, a + b) PB_COMPLEXES(PB_BINARY_LOOP, add, a + b)
PB_SINTS(PB_BINARY_LOOP, mul, a * b) PB_UINTS(PB_BINARY_LOOP, mul, a * b)
PB_REALS(PB_BINARY_LOOP, mul, a * b) PB_COMPLEXES(PB_BINARY_LOOP, mul, a * b)
PB_SINTS(PB_UNARY_LOOP, neg, -a) PB_UINTS(PB_UNARY_LOOP, neg, -a)
PB_REALS(PB_UNARY_LOOP, neg, -a) PB_COMPLEXES(PB_UNARY_LOOP, neg, -a)

/* ---- transcendental ---- */
PB_REALS(PB_UNARY_LOOP, sin, sin(a)) PB_COMPLEXES(PB_UNARY_LOOP, sin, sin(a))
PB_REALS(PB_UNARY_LOOP, exp, exp(a)) PB_COMPLEXES(PB_UNARY_LOOP, exp, exp(a))

#define NUMERIC_SLOTS(N) PB_SINT_SLOTS(N), PB_UINT_SLOTS(N), PB_REAL_SLOTS(N), PB_COMPLEX_SLOTS(N)
#define INEXACT_SLOTS(N) PB_REAL_SLOTS(N), PB_COMPLEX_SLOTS(N)

static const pb_ewise_op ops[] = {
  {"add", 2, PB_OUT_SAME, PB_GRAIN_CHEAP, {NUMERIC_SLOTS(add)}},
  {"mul", 2, PB_OUT_SAME, PB_GRAIN_CHEAP, {NUMERIC_SLOTS(mul)}},
  {"neg", 1, PB_OUT_SAME, PB_GRAIN_CHEAP, {NUMERIC_SLOTS(neg)}},
  {"sin", 1, PB_OUT_SAME, PB_GRAIN_TRANSCENDENTAL, {INEXACT_SLOTS(sin)}},
  {"exp", 1, PB_OUT_SAME, PB_GRAIN_TRANSCENDENTAL, {INEXACT_SLOTS(exp)}},
};
#define NOPS ((int)(sizeof(ops) / sizeof(ops[0])))

static int out_slot(int kind, int slot) {
  if (kind == PB_OUT_BOOL) return PB_BOOL;
  if (kind == PB_OUT_REAL) return slot == PB_C64 ? PB_F32 : slot == PB_C128 ? PB_F64 : slot;
  return slot;
}

/* ewise(code, *operands) -> new C-contiguous array */
static PyObject *ewise(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError, "ewise: expected an op code");
    return NULL;
  }
  long code = PyLong_AsLong(args[0]);
  if (code == -1 && PyErr_Occurred()) return NULL;
  if (code < 0 || code >= NOPS) {
    PyErr_Format(PyExc_ValueError, "ewise: unknown op code %ld", code);
    return NULL;
  }
  const pb_ewise_op *op = &ops[code];
  if (nargs - 1 != op->nin) {
    PyErr_Format(PyExc_TypeError, "%s: expected %d operands, got %zd", op->name, op->nin, nargs - 1);
    return NULL;
  }
  PyArrayObject *in[4];
  static const char *argnames[4] = {"x", "y", "z", "w"};
  for (int i = 0; i < op->nin; ++i)
    if (!(in[i] = pb_arg_array(args[i + 1], op->name, argnames[i]))) return NULL;
  /* Operands share one shape, except that 0-d operands broadcast (stride 0) against it. */
  int ref = 0;
  for (int i = 1; i < op->nin; ++i)
    if (PyArray_NDIM(in[i]) > PyArray_NDIM(in[ref])) ref = i;
  int ndim = PyArray_NDIM(in[ref]);
  const npy_intp *shape = PyArray_SHAPE(in[ref]);
  int slot = pb_dtype_slot(PyArray_DESCR(in[0]));
  for (int i = 0; i < op->nin; ++i) {
    int nd = PyArray_NDIM(in[i]);
    if (nd != 0 && (nd != ndim || !PyArray_CompareLists(PyArray_SHAPE(in[i]), shape, ndim))) {
      PyErr_Format(PyExc_ValueError, "%s: operands must have equal shapes or be 0-d (broadcast first)", op->name);
      return NULL;
    }
    if (pb_dtype_slot(PyArray_DESCR(in[i])) != slot) {
      PyErr_Format(PyExc_TypeError, "%s: operands must have equal dtypes", op->name);
      return NULL;
    }
  }
  pb_loop_fn fn = slot >= 0 ? op->loops[slot] : NULL;
  if (!fn) {
    PyErr_Format(PyExc_TypeError, "%s: dtype %S is not supported", op->name,
                 (PyObject *)PyArray_DESCR(in[0]));
    return NULL;
  }
  PyArray_Descr *od = pb_descr_for_slot(out_slot(op->out_kind, slot));
  if (!od) return NULL;
  PyArrayObject *out = pb_new_array(ndim, shape, od);
  if (!out) return NULL;

  char *base[5];
  npy_intp strides[5 * PB_MAXDIMS];
  for (int i = 0; i < op->nin; ++i) {
    base[i] = PyArray_BYTES(in[i]);
    for (int d = 0; d < ndim; ++d)
      strides[i * ndim + d] = PyArray_NDIM(in[i]) ? PyArray_STRIDES(in[i])[d] : 0;
  }
  base[op->nin] = PyArray_BYTES(out);
  for (int d = 0; d < ndim; ++d) strides[op->nin * ndim + d] = PyArray_STRIDES(out)[d];
  npy_intp n = PyArray_SIZE(out);
  int threads = pb_threads_for(n, op->grain);
  if (n >= PB_NOGIL_MIN) {
    Py_BEGIN_ALLOW_THREADS
    pb_iterate(ndim, shape, op->nin + 1, base, strides, fn, NULL, threads);
    Py_END_ALLOW_THREADS
  } else {
    pb_iterate(ndim, shape, op->nin + 1, base, strides, fn, NULL, 1);
  }
  return (PyObject *)out;
}

static PyMethodDef methods[] = {
  {"ewise", (PyCFunction)(void (*)(void))ewise, METH_FASTCALL,
   "ewise(code, *operands): run element-wise op `code` (see EWISE_OPS) on same-shape, "
   "same-dtype arrays of any strides; returns a new C-contiguous array."},
  {NULL, NULL, 0, NULL}};

int pb_register_elementwise(PyObject *m) {
  if (PyModule_AddFunctions(m, methods) < 0) return -1;
  PyObject *codes = PyDict_New();
  if (!codes) return -1;
  for (int i = 0; i < NOPS; ++i) {
    PyObject *v = PyLong_FromLong(i);
    if (!v || PyDict_SetItemString(codes, ops[i].name, v) < 0) { Py_XDECREF(v); Py_DECREF(codes); return -1; }
    Py_DECREF(v);
  }
  return PyModule_AddObject(m, "EWISE_OPS", codes) < 0 ? (Py_DECREF(codes), -1) : 0;
}
