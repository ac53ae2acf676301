/* Reductions over any set of axes. A reduction is the binary loop out += x with the output's
 * strides zero along the reduced axes, walked by pb_iterate in the input's memory order: when
 * the innermost axis is reduced the loop is a blocked pairwise sum into a scalar, otherwise it is
 * a vectorized row accumulation. */
#include "ewise.h"

/* Pairwise summation (as NumPy does): 16 independent partial sums per 128-element block, which
 * the compiler turns into vector adds without reassociating a serial chain. */
#define PB_PAIRWISE_SUM(NAME, T)                                                                  \
  static PB_CLONES T NAME##_block(const T *x, npy_intp n) {                                      \
    T r[16] = {0};                                                                               \
    npy_intp i = 0;                                                                              \
    for (; i + 16 <= n; i += 16)                                                                 \
      for (int k = 0; k < 16; ++k) r[k] += x[i + k];                                             \
    for (int k = 0; k < 8; ++k) r[k] += r[k + 8];                                                \
    for (int k = 0; k < 4; ++k) r[k] += r[k + 4];                                                \
    T s = (r[0] + r[1]) + (r[2] + r[3]);                                                         \
    for (; i < n; ++i) s += x[i];                                                                \
    return s;                                                                                    \
  }                                                                                              \
  static T NAME##_pairwise(const T *x, npy_intp n) {                                             \
    if (n <= 1024) return NAME##_block(x, n);                                                    \
    npy_intp h = (n / 2) & ~(npy_intp)15;                                                        \
    return NAME##_pairwise(x, h) + NAME##_pairwise(x + h, n - h);                                \
  }

#define PB_SUM_LOOP(NAME, T, TO, UNUSED)                                                          \
  static PB_CLONES void NAME##_rows(const T *x, T *y, npy_intp n) {                              \
    for (npy_intp i = 0; i < n; ++i) y[i] += x[i];                                               \
  }                                                                                              \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                   \
    (void)prm;                                                                                   \
    const npy_intp es = (npy_intp)sizeof(T);                                                     \
    if (s[1] == 0) {                                                                             \
      T acc;                                                                                     \
      if (s[0] == es) acc = NAME##_sum((const T *)p[0], n);                                      \
      else { acc = 0; char *px = p[0]; for (npy_intp i = 0; i < n; ++i, px += s[0]) acc += *(const T *)px; } \
      *(T *)p[1] += acc;                                                                         \
      return;                                                                                    \
    }                                                                                            \
    if (s[0] == es && s[1] == es) { NAME##_rows((const T *)p[0], (T *)p[1], n); return; }         \
    char *px = p[0], *py = p[1];                                                                 \
    for (npy_intp i = 0; i < n; ++i, px += s[0], py += s[1]) *(T *)py += *(const T *)px;         \
  }

/* Exact types sum in any order; inexact ones pairwise. */
#define PB_PLAIN_SUM(NAME, T)                                                                     \
  static PB_CLONES T NAME(const T *x, npy_intp n) { T s = 0; for (npy_intp i = 0; i < n; ++i) s += x[i]; return s; }

PB_PLAIN_SUM(sum_i8_sum, int8_t) PB_PLAIN_SUM(sum_i16_sum, int16_t)
PB_PLAIN_SUM(sum_i32_sum, int32_t) PB_PLAIN_SUM(sum_i64_sum, int64_t)
PB_PLAIN_SUM(sum_u8_sum, uint8_t) PB_PLAIN_SUM(sum_u16_sum, uint16_t)
PB_PLAIN_SUM(sum_u32_sum, uint32_t) PB_PLAIN_SUM(sum_u64_sum, uint64_t)
PB_PAIRWISE_SUM(sum_f32, float) PB_PAIRWISE_SUM(sum_f64, double)
PB_PAIRWISE_SUM(sum_c64, pb_c64) PB_PAIRWISE_SUM(sum_c128, pb_c128)
#define sum_f32_sum sum_f32_pairwise
#define sum_f64_sum sum_f64_pairwise
#define sum_c64_sum sum_c64_pairwise
#define sum_c128_sum sum_c128_pairwise

PB_SINTS(PB_SUM_LOOP, sum, ) PB_UINTS(PB_SUM_LOOP, sum, )
PB_REALS(PB_SUM_LOOP, sum, ) PB_COMPLEXES(PB_SUM_LOOP, sum, )

static const pb_loop_fn sum_loops[PB_NDT] = {
  PB_SINT_SLOTS(sum), PB_UINT_SLOTS(sum), PB_REAL_SLOTS(sum), PB_COMPLEX_SLOTS(sum)};

static npy_intp absp(npy_intp v) { return v < 0 ? -v : v; }

/* reduce_sum(x, axes) -> x summed over `axes` (a tuple of distinct in-range ints) */
static PyObject *reduce_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "reduce_sum: expected (x, axes)");
    return NULL;
  }
  PyArrayObject *x = pb_arg_array(args[0], "reduce_sum", "x");
  if (!x) return NULL;
  if (!PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "reduce_sum: argument 'axes' must be a tuple of ints");
    return NULL;
  }
  int ndim = PyArray_NDIM(x);
  bool reduced[PB_MAXDIMS] = {false};
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[1]); ++i) {
    long a = PyLong_AsLong(PyTuple_GET_ITEM(args[1], i));
    if (a == -1 && PyErr_Occurred()) return NULL;
    if (a < 0 || a >= ndim || reduced[a]) {
      PyErr_Format(PyExc_ValueError, "reduce_sum: argument 'axes' has %ld, which is out of range "
                   "for %d dimensions or repeated", a, ndim);
      return NULL;
    }
    reduced[a] = true;
  }
  int slot = pb_dtype_slot(PyArray_DESCR(x));
  pb_loop_fn fn = slot >= 0 ? sum_loops[slot] : NULL;
  if (!fn) {
    PyErr_Format(PyExc_TypeError, "reduce_sum: dtype %S is not supported", (PyObject *)PyArray_DESCR(x));
    return NULL;
  }
  const npy_intp *shape = PyArray_SHAPE(x);
  npy_intp oshape[PB_MAXDIMS];
  int ond = 0;
  for (int d = 0; d < ndim; ++d)
    if (!reduced[d]) oshape[ond++] = shape[d];
  PyArray_Descr *od = PyArray_DESCR(x);
  Py_INCREF(od);
  PyArrayObject *out = (PyArrayObject *)PyArray_Zeros(ond, oshape, od, 0);
  if (!out) return NULL;

  /* Iterate in the input's memory order: sort axes by decreasing |stride| so the innermost loop
   * walks the input's smallest stride. */
  int order[PB_MAXDIMS];
  npy_intp ostr[PB_MAXDIMS];
  for (int d = 0, k = 0; d < ndim; ++d) {
    order[d] = d;
    ostr[d] = reduced[d] ? 0 : PyArray_STRIDES(out)[k++];
  }
  const npy_intp *xs = PyArray_STRIDES(x);
  for (int i = 1; i < ndim; ++i) /* insertion sort: ndim is small */
    for (int j = i; j > 0 && absp(xs[order[j - 1]]) < absp(xs[order[j]]); --j) {
      int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
    }
  npy_intp sh[PB_MAXDIMS], strides[2 * PB_MAXDIMS];
  for (int i = 0; i < ndim; ++i) {
    sh[i] = shape[order[i]];
    strides[i] = xs[order[i]];
    strides[ndim + i] = ostr[order[i]];
  }
  char *base[2] = {PyArray_BYTES(x), PyArray_BYTES(out)};
  if (PyArray_SIZE(x) >= PB_NOGIL_MIN) {
    Py_BEGIN_ALLOW_THREADS
    pb_iterate(ndim, sh, 2, base, strides, fn, NULL, 1);
    Py_END_ALLOW_THREADS
  } else {
    pb_iterate(ndim, sh, 2, base, strides, fn, NULL, 1);
  }
  return (PyObject *)out;
}

static PyMethodDef methods[] = {
  {"reduce_sum", (PyCFunction)(void (*)(void))reduce_sum, METH_FASTCALL,
   "reduce_sum(x, axes): sum of x over the tuple of axes, as a new C-contiguous array."},
  {NULL, NULL, 0, NULL}};

int pb_register_reduce(PyObject *m) { return PyModule_AddFunctions(m, methods); }
