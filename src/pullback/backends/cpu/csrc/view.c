/* Zero-copy views (seed 001, Nx View): a new shape, byte strides and byte offset over an
 * existing array's buffer. Broadcast (zero strides), transpose, slice, flip (negative strides)
 * and reshape-without-copy are all this one constructor; it checks that every element the view
 * can reach lies inside the source's memory, so no view can read out of bounds. */
#include "move.h"

/* The byte range [lo, hi) that an array's elements occupy relative to its data pointer; false
 * when the arithmetic overflows (a view that large cannot lie inside any buffer). */
static bool extent(int nd, const npy_intp *shape, const npy_intp *strides, npy_intp es,
                   npy_intp *lo, npy_intp *hi) {
  npy_intp l = 0, h = 0;
  for (int d = 0; d < nd; ++d) {
    if (shape[d] == 0) { *lo = 0; *hi = 0; return true; }
    npy_intp span;
    if (__builtin_mul_overflow(shape[d] - 1, strides[d], &span)) return false;
    if (span < 0 ? __builtin_add_overflow(l, span, &l) : __builtin_add_overflow(h, span, &h))
      return false;
  }
  *lo = l;
  return !__builtin_add_overflow(h, es, hi);
}

/* view(x, shape, strides, offset) -> ndarray sharing x's buffer */
static PyObject *view(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "view: expected (x, shape, strides, offset)");
    return NULL;
  }
  PyArrayObject *x = pb_arg_array(args[0], "view", "x");
  if (!x) return NULL;
  npy_intp shape[PB_MAXDIMS], strides[PB_MAXDIMS];
  int nd = pb_move_ints(args[1], shape, PB_MAXDIMS, "view", "shape");
  if (nd < 0) return NULL;
  int ns = pb_move_ints(args[2], strides, PB_MAXDIMS, "view", "strides");
  if (ns < 0) return NULL;
  npy_intp offset = PyLong_AsSsize_t(args[3]);
  if (offset == -1 && PyErr_Occurred()) return NULL;
  if (ns != nd) {
    PyErr_SetString(PyExc_ValueError, "view: 'shape' and 'strides' differ in length");
    return NULL;
  }
  for (int d = 0; d < nd; ++d)
    if (shape[d] < 0) {
      PyErr_SetString(PyExc_ValueError, "view: negative dimension in 'shape'");
      return NULL;
    }
  PyArray_Descr *descr = PyArray_DESCR(x);
  npy_intp es = PyDataType_ELSIZE(descr);
  /* a broadcast view reads little memory, but its logical size must stay addressable: NumPy
   * (and every kernel's index arithmetic) counts its bytes in npy_intp */
  npy_intp nbytes = es;
  bool over = false;
  for (int d = 0; d < nd; ++d) over |= __builtin_mul_overflow(nbytes, shape[d], &nbytes);
  for (int d = 0; d < nd && over; ++d) over = shape[d] != 0;
  if (over) {
    char dims[PB_MAXDIMS * 21 + 8];
    int len = 0;
    for (int d = 0; d < nd; ++d)
      len += snprintf(dims + len, sizeof(dims) - (size_t)len, d ? ", %zd" : "%zd", shape[d]);
    long double bytes = (long double)es;
    for (int d = 0; d < nd; ++d) bytes *= (long double)shape[d];
    char total[64];
    snprintf(total, sizeof(total), "%.4Le", bytes);
    PyErr_Format(PyExc_ValueError, "view: an array of shape (%s%s) and %zd-byte elements would "
                 "span %s bytes, past the 2**63 - 1 bytes an array can address",
                 dims, nd == 1 ? "," : "", es, total);
    return NULL;
  }
  npy_intp slo, shi, vlo, vhi;
  npy_intp first, last;
  if (!extent(PyArray_NDIM(x), PyArray_SHAPE(x), PyArray_STRIDES(x), es, &slo, &shi) ||
      !extent(nd, shape, strides, es, &vlo, &vhi) ||
      (vhi > vlo && (__builtin_add_overflow(offset, vlo, &first) ||
                     __builtin_add_overflow(offset, vhi, &last) || first < slo || last > shi))) {
    PyErr_SetString(PyExc_ValueError, "view: the view reaches outside the source array");
    return NULL;
  }
  Py_INCREF(descr);
  return pb_new_view(x, descr, nd, shape, strides, PyArray_BYTES(x) + offset);
}

static PyMethodDef methods[] = {
  {"view", (PyCFunction)(void (*)(void))view, METH_FASTCALL,
   "view(x, shape, strides, offset): a zero-copy view of x's buffer (byte strides and offset), "
   "checked to stay inside x's memory."},
  {NULL, NULL, 0, NULL}};

int pb_register_view(PyObject *m) { return PyModule_AddFunctions(m, methods); }
