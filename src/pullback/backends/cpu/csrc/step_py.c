/* The "py" step: a user Python callback (pure_callback, io_callback, debug prints). It
 * reacquires the GIL, calls the callable on ndarray views of its inputs and copies the results
 * into their slots. Every primitive has a native step; this one is for user code only. */
#include "step.h"
#include "cast.h"
#include "move.h"
#include <stdlib.h>
#include <string.h>

static int parse_py(Program *p, thunk_t *t, PyObject *spec) {
  /* compiler/steps.py's Py: the callable gets views of the first nin operands (Operand specs)
   * and returns a tuple of arrays for the others (a user callback) */
  PyObject *fn, *ops;
  if (!(fn = pb_field(spec, "callable")) || !(ops = pb_field_tuple(spec, "operands")) ||
      pb_field_int(spec, "nin", &t->npin) < 0)
    return -1;
  t->kind = TH_PY;
  Py_INCREF(fn);
  t->callable = fn;
  t->nref = (int)PyTuple_GET_SIZE(ops);
  if (t->npin < 0 || t->npin > t->nref) {
    PyErr_SetString(PyExc_ValueError, "Program: bad callback step");
    return -1;
  }
  t->refs = PyMem_Calloc((size_t)t->nref + 1, sizeof(ref_t));
  t->descrs = PyMem_Calloc((size_t)t->nref + 1, sizeof(PyArray_Descr *));
  t->ndims = PyMem_Calloc((size_t)t->nref + 1, sizeof(int));
  t->shapes = PyMem_Calloc((size_t)t->nref + 1, sizeof(npy_intp *));
  t->pstrides = PyMem_Calloc((size_t)t->nref + 1, sizeof(npy_intp *));
  if (!t->refs || !t->descrs || !t->ndims || !t->shapes || !t->pstrides) {
    PyErr_NoMemory();
    return -1;
  }
  for (int i = 0; i < t->nref; ++i) {
    PyObject *ref, *dt, *shape, *strides;
    PyObject *o = PyTuple_GET_ITEM(ops, i);
    if (!(ref = pb_field(o, "ref")) || !(dt = pb_field(o, "dtype")) ||
        !(shape = pb_field_tuple(o, "shape")) || !(strides = pb_field_tuple(o, "strides")))
      return -1;
    if (pb_parse_ref(p, ref, &t->refs[i]) < 0) return -1;
    if (!PyArray_DescrConverter(dt, &t->descrs[i])) return -1;
    t->shapes[i] = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
    t->pstrides[i] = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
    if (!t->shapes[i] || !t->pstrides[i]) { PyErr_NoMemory(); return -1; }
    t->ndims[i] = pb_parse_ints(shape, t->shapes[i], PB_MAXDIMS, "callback shape");
    if (t->ndims[i] < 0 || pb_parse_ints(strides, t->pstrides[i], PB_MAXDIMS, "callback strides")
                               != t->ndims[i]) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad callback operand");
      return -1;
    }
    if (pb_check_extent(p, &t->refs[i], t->ndims[i], t->shapes[i], t->pstrides[i],
                     PyDataType_ELSIZE(t->descrs[i])) < 0)
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

static void release_py(thunk_t *t) {
  Py_XDECREF(t->callable);
  for (int i = 0; t->descrs && i < t->nref; ++i) Py_XDECREF(t->descrs[i]);
  for (int i = 0; t->shapes && i < t->nref; ++i) PyMem_Free(t->shapes[i]);
  for (int i = 0; t->pstrides && i < t->nref; ++i) PyMem_Free(t->pstrides[i]);
  PyMem_Free(t->descrs);
  PyMem_Free(t->ndims);
  PyMem_Free(t->shapes);
  PyMem_Free(t->pstrides);
}

const pb_step_kind pb_step_py = {"py", parse_py, run_py, release_py};
