/* Materializing a strided view: the kernel behind reshape-that-needs-a-copy and any op whose
 * input layout a consumer cannot take. Moves bytes, so one loop per element size serves every
 * dtype. */
#include "ewise.h"
#include <string.h>

typedef struct { char b[16]; } pb_b16;

#define PB_COPY_LOOP(NAME, T)                                                                     \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                   \
    (void)prm;                                                                                   \
    if (s[0] == (npy_intp)sizeof(T) && s[1] == (npy_intp)sizeof(T)) {                            \
      memcpy(p[1], p[0], (size_t)n * sizeof(T));                                                 \
      return;                                                                                    \
    }                                                                                            \
    char *px = p[0], *py = p[1];                                                                 \
    for (npy_intp i = 0; i < n; ++i, px += s[0], py += s[1]) *(T *)py = *(const T *)px;          \
  }
PB_COPY_LOOP(copy1, uint8_t) PB_COPY_LOOP(copy2, uint16_t) PB_COPY_LOOP(copy4, uint32_t)
PB_COPY_LOOP(copy8, uint64_t) PB_COPY_LOOP(copy16, pb_b16)

static pb_loop_fn copy_loop(npy_intp size) {
  switch (size) {
    case 1: return copy1; case 2: return copy2; case 4: return copy4;
    case 8: return copy8; case 16: return copy16; default: return NULL;
  }
}

PyArrayObject *pb_copy(PyArrayObject *x) {
  PyArray_Descr *d = PyArray_DESCR(x);
  pb_loop_fn fn = copy_loop(PyDataType_ELSIZE(d));
  if (!fn || PyDataType_REFCHK(d)) {
    PyErr_Format(PyExc_TypeError, "copy: dtype %S is not supported", (PyObject *)d);
    return NULL;
  }
  int ndim = PyArray_NDIM(x);
  Py_INCREF(d);
  PyArrayObject *out = pb_new_array(ndim, PyArray_SHAPE(x), d);
  if (!out) return NULL;
  npy_intp strides[2 * PB_MAXDIMS];
  for (int i = 0; i < ndim; ++i) {
    strides[i] = PyArray_STRIDES(x)[i];
    strides[ndim + i] = PyArray_STRIDES(out)[i];
  }
  char *base[2] = {PyArray_BYTES(x), PyArray_BYTES(out)};
  if (PyArray_SIZE(x) >= PB_NOGIL_MIN) {
    Py_BEGIN_ALLOW_THREADS
    pb_iterate(ndim, PyArray_SHAPE(x), 2, base, strides, fn, NULL, 1);
    Py_END_ALLOW_THREADS
  } else {
    pb_iterate(ndim, PyArray_SHAPE(x), 2, base, strides, fn, NULL, 1);
  }
  return out;
}

/* copy(x) -> C-contiguous copy of x */
static PyObject *copy(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "copy: expected one array");
    return NULL;
  }
  PyArrayObject *x = pb_arg_array(args[0], "copy", "x");
  return x ? (PyObject *)pb_copy(x) : NULL;
}

static PyMethodDef methods[] = {
  {"copy", (PyCFunction)(void (*)(void))copy, METH_FASTCALL,
   "copy(x): a C-contiguous copy of any strided array."},
  {NULL, NULL, 0, NULL}};

int pb_register_copy(PyObject *m) { return PyModule_AddFunctions(m, methods); }
