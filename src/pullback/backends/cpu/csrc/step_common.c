/* What every step kind shares, below the kinds (step.h): the step table, parsing a step through
 * it, spec fields by name, operand references checked against their buffers, nested blocks,
 * and releasing a step. The kinds' own files call these; these reach a kind only through the
 * table. */
#include "step.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>


int pb_parse_ints(PyObject *t, npy_intp *out, int max, const char *what) {
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) > max) {
    PyErr_Format(PyExc_ValueError, "Program: %s must be a tuple of at most %d ints", what, max);
    return -1;
  }
  int n = (int)PyTuple_GET_SIZE(t);
  for (int i = 0; i < n; ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    out[i] = (npy_intp)v;
  }
  return n;
}

int pb_parse_ref(Program *p, PyObject *o, ref_t *r) {
  long long off;
  PyObject *loops = NULL;
  if (!PyArg_ParseTuple(o, "iiL|O!", &r->kind, &r->index, &off, &PyTuple_Type, &loops)) return -1;
  r->offset = (npy_intp)off;
  r->nloop = 0;
  if (loops) { /* ((level, stride), ...): levels of the loops enclosing this operand */
    if (PyTuple_GET_SIZE(loops) > PB_MAXLOOP) {
      PyErr_SetString(PyExc_ValueError, "Program: too many loop terms in a reference");
      return -1;
    }
    for (Py_ssize_t l = 0; l < PyTuple_GET_SIZE(loops); ++l) {
      int lvl;
      long long st;
      if (!PyArg_ParseTuple(PyTuple_GET_ITEM(loops, l), "iL", &lvl, &st)) return -1;
      if (lvl < 0 || lvl >= p->depth) {
        PyErr_Format(PyExc_ValueError, "Program: a reference moves with loop level %d outside "
                     "its loops", lvl);
        return -1;
      }
      r->lvl[r->nloop] = lvl;
      r->lstr[r->nloop++] = (npy_intp)st;
    }
  }
  int count = r->kind == BUF_ARENA ? 1 : r->kind == BUF_INPUT ? p->nin
              : r->kind == BUF_OUTPUT ? p->nout : r->kind == BUF_CONST ? p->nconst : -1;
  if (count < 0 || r->index < 0 || r->index >= count) {
    PyErr_Format(PyExc_ValueError, "Program: bad buffer reference (%d, %d)", r->kind, r->index);
    return -1;
  }
  return 0;
}

/* The operand (ref, shape, strides, item) must stay inside its buffer. */
int pb_check_extent(Program *p, const ref_t *r, int nd, const npy_intp *shape,
                        const npy_intp *strides, npy_intp item) {
  npy_intp lo = r->offset, hi = r->offset + item;
  for (int l = 0; l < r->nloop; ++l) { /* every iteration's address */
    const npy_intp n = p->loop_len[r->lvl[l]];
    if (n == 0) return 0; /* the loop never runs */
    npy_intp span = (n - 1) * r->lstr[l];
    if (span < 0) lo += span; else hi += span;
  }
  for (int d = 0; d < nd; ++d) {
    if (shape[d] < 0) goto bad;
    if (shape[d] == 0) return 0;
    npy_intp span = (shape[d] - 1) * strides[d];
    if (span < 0) lo += span; else hi += span;
  }
  npy_intp lim;
  if (r->kind == BUF_CONST) {
    PyArrayObject *c = (PyArrayObject *)PyTuple_GET_ITEM(p->consts, r->index);
    /* constant operands address the constant's own memory: its data pointer is offset 0 */
    npy_intp clo = 0, chi = PyArray_ITEMSIZE(c);
    for (int d = 0; d < PyArray_NDIM(c); ++d) {
      if (PyArray_DIM(c, d) == 0) { chi = 0; break; }
      npy_intp span = (PyArray_DIM(c, d) - 1) * PyArray_STRIDE(c, d);
      if (span < 0) clo += span; else chi += span;
    }
    if (lo >= clo && hi <= chi) return 0;
    goto bad;
  }
  if (r->kind == BUF_ARENA) {
    lim = p->arena_bytes;
    if (lo >= 0 && hi <= lim) return 0;
  } else {
    const spec_t *sp = r->kind == BUF_INPUT ? &p->in[r->index] : &p->out[r->index];
    if (lo >= sp->lo && hi <= sp->hi) return 0;
  }
bad:
  PyErr_Format(PyExc_ValueError, "Program: an operand of buffer (%d, %d) at offset %zd leaves "
               "its buffer", r->kind, r->index, (Py_ssize_t)r->offset);
  return -1;
}

/* Fields of a spec (compiler/steps.py's Spec) by name: borrowed (the spec's slot holds it),
 * NULL with ValueError naming the field when it is missing or of the wrong type. */
PyObject *pb_field(PyObject *spec, const char *name) {
  PyObject *v = PyObject_GetAttrString(spec, name);
  if (!v) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "Program: a step has no field '%s'", name);
    return NULL;
  }
  Py_DECREF(v);
  return v;
}

PyObject *pb_field_tuple(PyObject *spec, const char *name) {
  PyObject *v = pb_field(spec, name);
  if (v && !PyTuple_Check(v)) {
    PyErr_Format(PyExc_ValueError, "Program: a step's field '%s' must be a tuple", name);
    return NULL;
  }
  return v;
}

int pb_field_ll(PyObject *spec, const char *name, long long *out) {
  PyObject *v = pb_field(spec, name);
  if (!v) return -1;
  *out = PyLong_AsLongLong(v);
  if (*out == -1 && PyErr_Occurred()) {
    PyErr_Format(PyExc_ValueError, "Program: a step's field '%s' must be an int", name);
    return -1;
  }
  return 0;
}

int pb_field_int(PyObject *spec, const char *name, int *out) {
  long long v;
  if (pb_field_ll(spec, name, &v) < 0) return -1;
  if (v < INT_MIN || v > INT_MAX) {
    PyErr_Format(PyExc_ValueError, "Program: a step's field '%s' is out of range", name);
    return -1;
  }
  *out = (int)v;
  return 0;
}

/* The step table, by kind id (thunk_t.kind): each entry lives in its kind's own file. */
const pb_step_kind *const pb_step_kinds[TH_N] = {
    [TH_REGION] = &pb_step_region, [TH_DOT] = &pb_step_dot,     [TH_REDUCE] = &pb_step_reduce,
    [TH_PY] = &pb_step_py,         [TH_SCAN] = &pb_step_scan,   [TH_WHILE] = &pb_step_while,
    [TH_COND] = &pb_step_cond,     [TH_DCOPY] = &pb_step_dcopy, [TH_PAR] = &pb_step_par,
    [TH_PIPE] = &pb_step_pipe,     [TH_KERNEL] = &pb_step_kernel};


/* A nested block: a tuple of thunk specs. */
int pb_parse_block(Program *p, PyObject *specs, int *n, thunk_t **out) {
  if (!PyTuple_Check(specs)) {
    PyErr_SetString(PyExc_ValueError, "Program: a block must be a tuple of steps");
    return -1;
  }
  *n = (int)PyTuple_GET_SIZE(specs);
  *out = PyMem_Calloc((size_t)*n + 1, sizeof(thunk_t));
  if (!*out) { PyErr_NoMemory(); return -1; }
  for (int i = 0; i < *n; ++i)
    if (pb_parse_step(p, &(*out)[i], PyTuple_GET_ITEM(specs, i), i) < 0) return -1;
  return 0;
}

int pb_alloc_blocks(thunk_t *t, int n) {
  t->block_n = PyMem_Calloc((size_t)n + 1, sizeof(int));
  t->blocks = PyMem_Calloc((size_t)n + 1, sizeof(thunk_t *));
  if (!t->block_n || !t->blocks) { PyErr_NoMemory(); return -1; }
  t->nblock = n;
  return 0;
}

/* a 0-d operand of `item` bytes (a predicate or an index) */
int pb_parse_scalar_ref(Program *p, PyObject *o, ref_t *r, npy_intp item) {
  return pb_parse_ref(p, o, r) < 0 ? -1 : pb_check_extent(p, r, 0, NULL, NULL, item);
}

int pb_parse_step(Program *p, thunk_t *t, PyObject *spec, int i) {
  PyObject *kobj = PyObject_GetAttrString(spec, "kind");
  if (!kobj || !PyUnicode_Check(kobj)) {
    Py_XDECREF(kobj);
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "Program: a step must be a spec with a kind "
                    "(compiler/steps.py's Spec)");
    return -1;
  }
  const char *k = PyUnicode_AsUTF8(kobj);
  Py_DECREF(kobj); /* (the kind string is the class's: it outlives this call) */
  if (!k) return -1;
  int id = -1;
  for (int j = 0; j < TH_N && id < 0; ++j)
    if (!strcmp(k, pb_step_kinds[j]->name)) id = j;
  if (id < 0) {
    PyErr_Format(PyExc_ValueError, "Program: unknown step kind '%s'", k);
    return -1;
  }
  t->kind = id; /* before parsing: a half-parsed thunk is released by its own kind */
  int rc = pb_step_kinds[id]->parse(p, t, spec);
  if (rc < 0 && !PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_TypeError))
    return -1; /* out of memory */
  if (rc < 0) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_Format(PyExc_ValueError, "Program: step %d ('%s') is malformed: %S", i, k,
                 ev ? ev : Py_None);
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
  }
  return rc;
}

/* The kind's own release, then what the shared parsing helpers allocate (operand arrays,
 * nested blocks). */
void pb_thunk_clear(thunk_t *t) {
  const pb_step_kind *k = t->kind >= 0 && t->kind < TH_N ? pb_step_kinds[t->kind] : NULL;
  if (k && k->release) k->release(t);
  PyMem_Free(t->shape);
  PyMem_Free(t->refs);
  PyMem_Free(t->strides);
  for (int b = 0; t->blocks && b < t->nblock; ++b) {
    for (int i = 0; t->blocks[b] && i < t->block_n[b]; ++i) pb_thunk_clear(&t->blocks[b][i]);
    PyMem_Free(t->blocks[b]);
  }
  PyMem_Free(t->blocks);
  PyMem_Free(t->block_n);
  memset(t, 0, sizeof(*t));
}

