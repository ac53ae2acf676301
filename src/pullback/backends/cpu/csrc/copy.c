/* Materializing a strided view: the kernel behind reshape-that-needs-a-copy and any op whose
 * input layout a consumer cannot take. Moves bytes, so one loop per element size serves every
 * dtype. Also home of the helpers the data-moving families share (move.h). */
#include "move.h"
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

typedef struct { char b[16]; } pb_b16;

#define PB_COPY_LOOP(NAME, T)                                                                     \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                   \
    (void)prm;                                                                                   \
    if (s[0] == (npy_intp)sizeof(T) && s[1] == (npy_intp)sizeof(T)) {                            \
      memcpy(p[1], p[0], (size_t)n * sizeof(T));                                                 \
      return;                                                                                    \
    }                                                                                            \
    char *px = p[0], *py = p[1];                                                                 \
    if (s[0] == 0) { /* a fill: one source element (a contiguous one vectorizes: regions fill \
                        select_n's broadcast scalar cases this way, tile after tile) */          \
      const T v = *(const T *)px;                                                                \
      if (s[1] == (npy_intp)sizeof(T)) {                                                         \
        T *y = (T *)py;                                                                          \
        for (npy_intp i = 0; i < n; ++i) y[i] = v;                                               \
        return;                                                                                  \
      }                                                                                          \
      for (npy_intp i = 0; i < n; ++i, py += s[1]) *(T *)py = v;                                 \
      return;                                                                                    \
    }                                                                                            \
    for (npy_intp i = 0; i < n; ++i, px += s[0], py += s[1]) *(T *)py = *(const T *)px;          \
  }
PB_COPY_LOOP(copy1, uint8_t) PB_COPY_LOOP(copy2, uint16_t) PB_COPY_LOOP(copy4, uint32_t)
PB_COPY_LOOP(copy8, uint64_t) PB_COPY_LOOP(copy16, pb_b16)

pb_loop_fn pb_move_copy_loop(npy_intp size) {
  switch (size) {
    case 1: return copy1; case 2: return copy2; case 4: return copy4;
    case 8: return copy8; case 16: return copy16; default: return NULL;
  }
}

pb_loop_fn pb_move_loop_for(PyArrayObject *x, const char *kernel, const char *arg) {
  PyArray_Descr *d = PyArray_DESCR(x);
  pb_loop_fn fn = pb_move_copy_loop(PyDataType_ELSIZE(d));
  if (!fn || PyDataType_REFCHK(d)) {
    PyErr_Format(PyExc_TypeError, "%s: argument '%s' has dtype %S, which is not supported",
                 kernel, arg, (PyObject *)d);
    return NULL;
  }
  return fn;
}

int pb_move_ints(PyObject *t, npy_intp *out, int max, const char *kernel, const char *arg) {
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) > max) {
    PyErr_Format(PyExc_TypeError, "%s: argument '%s' must be a tuple of at most %d ints",
                 kernel, arg, max);
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); ++i) {
    out[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, i));
    if (out[i] == -1 && PyErr_Occurred()) return -1;
  }
  return (int)PyTuple_GET_SIZE(t);
}

int pb_move_dims(PyObject *t, int *out, int limit, bool sorted, const char *kernel,
                 const char *arg) {
  npy_intp v[PB_MAXDIMS];
  int n = pb_move_ints(t, v, PB_MAXDIMS, kernel, arg);
  if (n < 0) return -1;
  bool seen[PB_MAXDIMS] = {false};
  for (int i = 0; i < n; ++i) {
    if (v[i] < 0 || v[i] >= limit || seen[v[i]] || (sorted && i > 0 && v[i] < v[i - 1])) {
      PyErr_Format(PyExc_ValueError, "%s: argument '%s' must hold distinct%s dimensions in "
                   "[0, %d), got %zd at position %d", kernel, arg, sorted ? " ascending" : "",
                   limit, (Py_ssize_t)v[i], i);
      return -1;
    }
    seen[v[i]] = true;
    out[i] = (int)v[i];
  }
  return n;
}

void pb_move_run(int ndim, const npy_intp *shape, int nop, char *const *base,
                 const npy_intp *strides, pb_loop_fn fn, const void *params, npy_intp work,
                 int threads) {
  if (work >= PB_NOGIL_MIN) {
    Py_BEGIN_ALLOW_THREADS
    pb_iterate(ndim, shape, nop, base, strides, fn, params, threads);
    Py_END_ALLOW_THREADS
  } else {
    pb_iterate(ndim, shape, nop, base, strides, fn, params, 1);
  }
}

PyArrayObject *pb_copy(PyArrayObject *x) {
  pb_loop_fn fn = pb_move_loop_for(x, "copy", "x");
  if (!fn) return NULL;
  PyArray_Descr *d = PyArray_DESCR(x);
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
  pb_move_run(ndim, PyArray_SHAPE(x), 2, base, strides, fn, NULL, PyArray_SIZE(x), 1);
  return out;
}

/* copy(x) -> C-contiguous copy of x */
/* n bytes from src to dst with non-temporal stores where dst is 16-byte aligned (move.h) */
void pb_stream_copy(char *dst, const char *src, npy_intp n) {
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
