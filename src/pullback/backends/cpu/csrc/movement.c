/* Data-moving kernels that cannot be views: pad, concatenate, dynamic_update_slice, iota.
 *
 * Each is "fill or copy the whole output, then copy boxes into it": a box is a strided region of
 * the output paired with a strided region of an input, walked by pb_iterate with the byte-moving
 * loop of the element size, so one code path serves every dtype. */
#include "move.h"
#include "ewise.h"
#include <string.h>

/* Copies the box `shape` from src (byte strides ss) to dst (byte strides ds). */
static void copy_box(int nd, const npy_intp *shape, char *src, const npy_intp *ss, char *dst,
                     const npy_intp *ds, pb_loop_fn fn) {
  npy_intp strides[2 * PB_MAXDIMS], n = 1;
  for (int d = 0; d < nd; ++d) {
    strides[d] = ss[d];
    strides[nd + d] = ds[d];
    n *= shape[d];
  }
  char *base[2] = {src, dst};
  pb_move_run(nd, shape, 2, base, strides, fn, NULL, n, 1);
}

static PyArrayObject *new_like(PyArrayObject *x, int nd, const npy_intp *shape) {
  PyArray_Descr *d = PyArray_DESCR(x);
  Py_INCREF(d);
  return pb_new_array(nd, shape, d);
}

static bool same_dtype(PyArrayObject *a, PyArrayObject *b, const char *kernel, const char *arg) {
  if (PyArray_EquivTypes(PyArray_DESCR(a), PyArray_DESCR(b))) return true;
  PyErr_Format(PyExc_TypeError, "%s: argument '%s' has dtype %S, expected %S", kernel, arg,
               (PyObject *)PyArray_DESCR(b), (PyObject *)PyArray_DESCR(a));
  return false;
}

/* ---- pad ---- */

/* pad(x, value, low, high, interior) -> x with `low`/`high` elements of the 0-d `value` added
 * before/after each dimension (negative: cropped) and `interior` between neighbours. */
static PyObject *pad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  const char *K = "pad";
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "pad: expected (x, value, low, high, interior)");
    return NULL;
  }
  PyArrayObject *x = pb_arg_array(args[0], K, "x"), *v = pb_arg_array(args[1], K, "value");
  if (!x || !v || !same_dtype(x, v, K, "value")) return NULL;
  if (PyArray_NDIM(v) != 0) {
    PyErr_SetString(PyExc_ValueError, "pad: argument 'value' must be 0-d");
    return NULL;
  }
  pb_loop_fn fn = pb_move_loop_for(x, K, "x");
  if (!fn) return NULL;
  int nd = PyArray_NDIM(x);
  npy_intp lo[PB_MAXDIMS], hi[PB_MAXDIMS], in[PB_MAXDIMS], oshape[PB_MAXDIMS];
  const char *names[3] = {"low", "high", "interior"};
  npy_intp *cfg[3] = {lo, hi, in};
  for (int k = 0; k < 3; ++k) {
    int n = pb_move_ints(args[2 + k], cfg[k], PB_MAXDIMS, K, names[k]);
    if (n < 0) return NULL;
    if (n != nd) {
      PyErr_Format(PyExc_ValueError, "pad: argument '%s' must have %d entries, got %d",
                   names[k], nd, n);
      return NULL;
    }
  }
  const npy_intp *xs = PyArray_SHAPE(x);
  for (int d = 0; d < nd; ++d) {
    npy_intp inner, size;
    if (in[d] < 0 || in[d] == NPY_MAX_INTP || lo[d] == NPY_MIN_INTP ||
        __builtin_mul_overflow(xs[d] > 0 ? xs[d] - 1 : 0, in[d], &inner) ||
        __builtin_add_overflow(inner, xs[d], &size) || __builtin_add_overflow(size, lo[d], &size) ||
        __builtin_add_overflow(size, hi[d], &size) || size < 0) {
      PyErr_Format(PyExc_ValueError, "pad: the padding of dimension %d (low %zd, high %zd, "
                   "interior %zd) is negative or overflows for size %zd", d, (Py_ssize_t)lo[d],
                   (Py_ssize_t)hi[d], (Py_ssize_t)in[d], (Py_ssize_t)xs[d]);
      return NULL;
    }
    oshape[d] = size;
  }
  PyArrayObject *out = new_like(x, nd, oshape);
  if (!out) return NULL;
  const npy_intp *os = PyArray_STRIDES(out);
  npy_intp zeros[PB_MAXDIMS] = {0};
  copy_box(nd, oshape, PyArray_BYTES(v), zeros, PyArray_BYTES(out), os, fn);
  /* Element i of dimension d lands at low + i * (interior + 1); keep those inside the output. */
  npy_intp box[PB_MAXDIMS], ds[PB_MAXDIMS];
  char *src = PyArray_BYTES(x), *dst = PyArray_BYTES(out);
  for (int d = 0; d < nd; ++d) {
    npy_intp step = in[d] + 1;
    npy_intp first = lo[d] >= 0 ? 0 : pb_floordiv(-lo[d] + step - 1, step);
    npy_intp last = oshape[d] - 1 - lo[d] < 0 ? -1 : pb_floordiv(oshape[d] - 1 - lo[d], step);
    if (last > xs[d] - 1) last = xs[d] - 1;
    box[d] = last >= first ? last - first + 1 : 0;
    if (box[d] == 0) return (PyObject *)out;
    src += first * PyArray_STRIDES(x)[d];
    dst += (lo[d] + first * step) * os[d];
    ds[d] = step * os[d];
  }
  copy_box(nd, box, src, PyArray_STRIDES(x), dst, ds, fn);
  return (PyObject *)out;
}

/* ---- concatenate ---- */

/* concatenate(arrays, axis) -> the arrays (a non-empty tuple of one dtype and rank, equal
 * shapes except along `axis`) joined along `axis`. */
static PyObject *concatenate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  const char *K = "concatenate";
  if (nargs != 2 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) == 0) {
    PyErr_SetString(PyExc_TypeError, "concatenate: expected (non-empty tuple of arrays, axis)");
    return NULL;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(args[0]);
  PyArrayObject *first = pb_arg_array(PyTuple_GET_ITEM(args[0], 0), K, "operands");
  if (!first) return NULL;
  pb_loop_fn fn = pb_move_loop_for(first, K, "operands");
  if (!fn) return NULL;
  int nd = PyArray_NDIM(first);
  long axis = PyLong_AsLong(args[1]);
  if (axis == -1 && PyErr_Occurred()) return NULL;
  if (axis < 0 || axis >= nd) {
    PyErr_Format(PyExc_ValueError, "concatenate: argument 'axis' is %ld, out of range for %d "
                 "dimensions", axis, nd);
    return NULL;
  }
  npy_intp oshape[PB_MAXDIMS];
  memcpy(oshape, PyArray_SHAPE(first), sizeof(npy_intp) * nd);
  oshape[axis] = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyArrayObject *a = pb_arg_array(PyTuple_GET_ITEM(args[0], i), K, "operands");
    if (!a || !same_dtype(first, a, K, "operands")) return NULL;
    bool ok = PyArray_NDIM(a) == nd;
    for (int d = 0; ok && d < nd; ++d)
      ok = d == axis || PyArray_SHAPE(a)[d] == oshape[d];
    if (!ok) {
      PyErr_Format(PyExc_ValueError, "concatenate: operand %zd has a shape that differs from "
                   "operand 0 outside axis %ld", i, axis);
      return NULL;
    }
    oshape[axis] += PyArray_SHAPE(a)[axis];
  }
  PyArrayObject *out = new_like(first, nd, oshape);
  if (!out) return NULL;
  char *dst = PyArray_BYTES(out);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyArrayObject *a = (PyArrayObject *)PyTuple_GET_ITEM(args[0], i);
    copy_box(nd, PyArray_SHAPE(a), PyArray_BYTES(a), PyArray_STRIDES(a), dst,
             PyArray_STRIDES(out), fn);
    dst += PyArray_SHAPE(a)[axis] * PyArray_STRIDES(out)[axis];
  }
  return (PyObject *)out;
}

/* ---- dynamic_update_slice ---- */

/* dynamic_update_slice(x, update, starts) -> a copy of x with `update` written at `starts`
 * (ints already clamped by the frontend to [0, x.shape - update.shape]; checked here). */
static PyObject *dynamic_update_slice(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  const char *K = "dynamic_update_slice";
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "dynamic_update_slice: expected (x, update, starts)");
    return NULL;
  }
  PyArrayObject *x = pb_arg_array(args[0], K, "x"), *u = pb_arg_array(args[1], K, "update");
  if (!x || !u || !same_dtype(x, u, K, "update")) return NULL;
  pb_loop_fn fn = pb_move_loop_for(x, K, "x");
  if (!fn) return NULL;
  int nd = PyArray_NDIM(x);
  npy_intp st[PB_MAXDIMS];
  int ns = pb_move_ints(args[2], st, PB_MAXDIMS, K, "starts");
  if (ns < 0) return NULL;
  if (PyArray_NDIM(u) != nd || ns != nd) {
    PyErr_Format(PyExc_ValueError, "dynamic_update_slice: 'update' and 'starts' must match the "
                 "rank %d of 'x'", nd);
    return NULL;
  }
  char *dst;
  PyArrayObject *out = pb_copy(x);
  if (!out) return NULL;
  dst = PyArray_BYTES(out);
  for (int d = 0; d < nd; ++d) {
    npy_intp room = PyArray_SHAPE(x)[d] - PyArray_SHAPE(u)[d];
    if (room < 0 || st[d] < 0 || st[d] > room) {
      Py_DECREF(out);
      PyErr_Format(PyExc_ValueError, "dynamic_update_slice: update of size %zd at start %zd "
                   "does not fit dimension %d of size %zd", (Py_ssize_t)PyArray_SHAPE(u)[d],
                   (Py_ssize_t)st[d], d, (Py_ssize_t)PyArray_SHAPE(x)[d]);
      return NULL;
    }
    dst += st[d] * PyArray_STRIDES(out)[d];
  }
  copy_box(nd, PyArray_SHAPE(u), PyArray_BYTES(u), PyArray_STRIDES(u), dst,
           PyArray_STRIDES(out), fn);
  return (PyObject *)out;
}

/* ---- iota ---- */

/* ramp[i] = i in the dtype of the slot, for i < n. */
#define PB_RAMP(T, CONV)                                                                          \
  { T *r = (T *)ramp; for (npy_intp i = 0; i < n; ++i) r[i] = CONV; } break;

static bool fill_ramp(int slot, char *ramp, npy_intp n) {
  switch (slot) {
    case PB_I8: PB_RAMP(int8_t, (int8_t)i) case PB_I16: PB_RAMP(int16_t, (int16_t)i)
    case PB_I32: PB_RAMP(int32_t, (int32_t)i) case PB_I64: PB_RAMP(int64_t, (int64_t)i)
    case PB_U8: PB_RAMP(uint8_t, (uint8_t)i) case PB_U16: PB_RAMP(uint16_t, (uint16_t)i)
    case PB_U32: PB_RAMP(uint32_t, (uint32_t)i) case PB_U64: PB_RAMP(uint64_t, (uint64_t)i)
    case PB_F16: PB_RAMP(pb_f16, (pb_f16)(double)i)
    case PB_BF16: PB_RAMP(pb_bf16, pb_f32_to_bf16((float)i))
    case PB_F32: PB_RAMP(float, (float)i) case PB_F64: PB_RAMP(double, (double)i)
    case PB_C64: PB_RAMP(pb_c64, (float)i) case PB_C128: PB_RAMP(pb_c128, (double)i)
    default: return false;
  }
  return true;
}

/* iota(dtype, shape, dimension) -> array of `shape` whose elements are their index along
 * `dimension`, in a numeric dtype. */
static PyObject *iota(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  const char *K = "iota";
  if (nargs != 3 || !PyArray_DescrCheck(args[0])) {
    PyErr_SetString(PyExc_TypeError, "iota: expected (numpy.dtype, shape, dimension)");
    return NULL;
  }
  PyArray_Descr *descr = (PyArray_Descr *)args[0];
  npy_intp shape[PB_MAXDIMS];
  int nd = pb_move_ints(args[1], shape, PB_MAXDIMS, K, "shape");
  if (nd < 0) return NULL;
  long dim = PyLong_AsLong(args[2]);
  if (dim == -1 && PyErr_Occurred()) return NULL;
  if (dim < 0 || dim >= nd) {
    PyErr_Format(PyExc_ValueError, "iota: argument 'dimension' is %ld, out of range for %d "
                 "dimensions", dim, nd);
    return NULL;
  }
  for (int d = 0; d < nd; ++d)
    if (shape[d] < 0) {
      PyErr_SetString(PyExc_ValueError, "iota: negative dimension in 'shape'");
      return NULL;
    }
  int slot = pb_dtype_slot(descr);
  if (slot < 0 || slot == PB_BOOL) {
    PyErr_Format(PyExc_TypeError, "iota: argument 'dtype' must be a numeric dtype, got %S",
                 (PyObject *)descr);
    return NULL;
  }
  Py_INCREF(descr);
  PyArrayObject *out = pb_new_array(nd, shape, descr);
  if (!out) return NULL;
  npy_intp es = PyDataType_ELSIZE(descr), n = shape[dim];
  if (n == PyArray_SIZE(out)) { /* every other dimension has size 1: the output is the ramp */
    fill_ramp(slot, PyArray_BYTES(out), n);
    return (PyObject *)out;
  }
  char *ramp = PyMem_Malloc((size_t)(n > 0 ? n : 1) * (size_t)es);
  if (!ramp) {
    Py_DECREF(out);
    return PyErr_NoMemory();
  }
  fill_ramp(slot, ramp, n);
  /* broadcast the ramp: stride es along `dimension`, 0 elsewhere */
  npy_intp ss[PB_MAXDIMS] = {0};
  ss[dim] = es;
  copy_box(nd, shape, ramp, ss, PyArray_BYTES(out), PyArray_STRIDES(out),
           pb_move_copy_loop(es));
  PyMem_Free(ramp);
  return (PyObject *)out;
}

static PyMethodDef methods[] = {
  {"pad", (PyCFunction)(void (*)(void))pad, METH_FASTCALL,
   "pad(x, value, low, high, interior): x padded with the 0-d value (negative low/high crop)."},
  {"concatenate", (PyCFunction)(void (*)(void))concatenate, METH_FASTCALL,
   "concatenate(arrays, axis): the tuple of arrays joined along axis."},
  {"dynamic_update_slice", (PyCFunction)(void (*)(void))dynamic_update_slice, METH_FASTCALL,
   "dynamic_update_slice(x, update, starts): a copy of x with update written at starts."},
  {"iota", (PyCFunction)(void (*)(void))iota, METH_FASTCALL,
   "iota(dtype, shape, dimension): each element's index along dimension."},
  {NULL, NULL, 0, NULL}};

int pb_register_movement(PyObject *m) { return PyModule_AddFunctions(m, methods); }
