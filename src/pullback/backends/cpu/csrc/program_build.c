/* Building a Program from the compiler's step tuples: every field parsed and every operand
 * checked against its buffer's extent, so a malformed schedule raises ValueError here instead of
 * touching memory at run time. */
#include "program.h"
#include "cast.h"
#include "move.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---------------------------------------------------------------- construction */


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

static int parse_ref(Program *p, PyObject *o, ref_t *r) {
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
static int check_extent(Program *p, const ref_t *r, int nd, const npy_intp *shape,
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

int pb_parse_ref(Program *p, PyObject *o, ref_t *r) { return parse_ref(p, o, r); }
int pb_check_extent(Program *p, const ref_t *r, int nd, const npy_intp *shape,
                    const npy_intp *strides, npy_intp item) {
  return check_extent(p, r, nd, shape, strides, item);
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

static int parse_thunk(Program *p, thunk_t *t, PyObject *spec, int i);

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
    if (parse_thunk(p, &(*out)[i], PyTuple_GET_ITEM(specs, i), i) < 0) return -1;
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
  return parse_ref(p, o, r) < 0 ? -1 : check_extent(p, r, 0, NULL, NULL, item);
}

static int parse_thunk(Program *p, thunk_t *t, PyObject *spec, int i) {
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

void pb_program_dealloc(Program *self) {
  for (int i = 0; self->thunks && i < self->nthunk; ++i) pb_thunk_clear(&self->thunks[i]);
  PyMem_Free(self->thunks);
  for (int i = 0; self->in && i < self->nin; ++i) Py_XDECREF(self->in[i].descr);
  for (int i = 0; self->out && i < self->nout; ++i) Py_XDECREF(self->out[i].descr);
  PyMem_Free(self->in);
  PyMem_Free(self->out);
  free(self->arena);
  PyMem_Free(self->prof);
  Py_XDECREF(self->consts);
  Py_XDECREF(self->name);
  Py_XDECREF(self->text);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The byte extent [lo, hi) of an array of this shape and these strides. */
static void extent_of(spec_t *sp) {
  npy_intp item = PyDataType_ELSIZE(sp->descr);
  sp->lo = 0;
  sp->hi = item;
  for (int d = 0; d < sp->ndim; ++d) {
    if (sp->shape[d] == 0) { sp->hi = 0; return; }
    npy_intp span = (sp->shape[d] - 1) * sp->strides[d];
    if (span < 0) sp->lo += span; else sp->hi += span;
  }
}

/* inputs: (dtype, shape, strides or None, alignment); outputs: (dtype, shape, donate, alias or
 * None) with alias = (kind, index, offset, strides) */
static int parse_specs(PyObject *specs, int n, spec_t *out, int outputs) {
  for (int i = 0; i < n; ++i) {
    PyObject *dt, *shp, *st = Py_None, *alias = Py_None;
    spec_t *sp = &out[i];
    sp->donate = -1;
    sp->alias.kind = -1;
    PyObject *it = PyTuple_GET_ITEM(specs, i);
    long long align = 1;
    if (outputs ? !PyArg_ParseTuple(it, "OO!iO", &dt, &PyTuple_Type, &shp, &sp->donate, &alias)
                : !PyArg_ParseTuple(it, "OO!O|L", &dt, &PyTuple_Type, &shp, &st, &align))
      return -1;
    if (align < 1 || align > 4096 || (align & (align - 1))) {
      PyErr_SetString(PyExc_ValueError, "Program: an alignment must be a power of two");
      return -1;
    }
    sp->align = (npy_intp)align;
    if (!PyArray_DescrConverter(dt, &sp->descr)) return -1;
    if ((sp->ndim = pb_parse_ints(shp, sp->shape, PB_MAXDIMS, "a shape")) < 0) return -1;
    npy_intp item = PyDataType_ELSIZE(sp->descr), acc = item;
    for (int d = sp->ndim - 1; d >= 0; --d) { /* C-contiguous by default */
      if (sp->shape[d] < 0) {
        PyErr_SetString(PyExc_ValueError, "Program: negative dimension");
        return -1;
      }
      sp->strides[d] = acc;
      acc *= sp->shape[d] > 0 ? sp->shape[d] : 1;
    }
    if (alias != Py_None) {
      PyObject *ref, *ast;
      if (!PyArg_ParseTuple(alias, "OO!", &ref, &PyTuple_Type, &ast)) return -1;
      long long off;
      if (!PyArg_ParseTuple(ref, "iiL", &sp->alias.kind, &sp->alias.index, &off)) return -1;
      sp->alias.offset = (npy_intp)off;
      st = ast;
    }
    if (st != Py_None) {
      if (!PyTuple_Check(st) || pb_parse_ints(st, sp->strides, PB_MAXDIMS, "strides") != sp->ndim) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: strides != ndim");
        return -1;
      }
      sp->has_strides = 1;
    }
    extent_of(sp);
  }
  return 0;
}

PyObject *pb_program_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  /* Program(name, arena_bytes, in_specs, out_specs, consts, thunks, nogil[, strict[, ftz]]) */
  PyObject *name, *ins, *outs, *consts, *thunks;
  long long arena;
  int nogil, strict = 0, ftz = 0;
  if (!PyArg_ParseTuple(args, "ULO!O!O!O!p|pp", &name, &arena, &PyTuple_Type, &ins, &PyTuple_Type,
                        &outs, &PyTuple_Type, &consts, &PyTuple_Type, &thunks, &nogil, &strict,
                        &ftz))
    return NULL;
  Program *p = (Program *)type->tp_alloc(type, 0);
  if (!p) return NULL;
  Py_INCREF(name);
  p->name = name;
  p->arena_bytes = (npy_intp)(arena > 0 ? (arena + 63) / 64 * 64 : 0);
  p->nogil = nogil;
  p->strict = strict;
  p->ftz = ftz;
  p->max_threads = 1;
#ifdef _OPENMP
  p->max_threads = omp_get_max_threads();
#endif
  p->nin = (int)PyTuple_GET_SIZE(ins);
  p->nout = (int)PyTuple_GET_SIZE(outs);
  p->nconst = (int)PyTuple_GET_SIZE(consts);
  p->nthunk = (int)PyTuple_GET_SIZE(thunks);
  for (int i = 0; i < p->nconst; ++i)
    if (!PyArray_Check(PyTuple_GET_ITEM(consts, i)) ||
        !PyArray_ISALIGNED((PyArrayObject *)PyTuple_GET_ITEM(consts, i))) {
      PyErr_SetString(PyExc_TypeError, "Program: constants must be aligned numpy arrays");
      goto fail;
    }
  Py_INCREF(consts);
  p->consts = consts;
  p->in = PyMem_Calloc((size_t)p->nin + 1, sizeof(spec_t));
  p->out = PyMem_Calloc((size_t)p->nout + 1, sizeof(spec_t));
  p->thunks = PyMem_Calloc((size_t)p->nthunk + 1, sizeof(thunk_t));
  if (!p->in || !p->out || !p->thunks) {
    PyErr_NoMemory();
    goto fail;
  }
  if (parse_specs(ins, p->nin, p->in, 0) < 0 || parse_specs(outs, p->nout, p->out, 1) < 0)
    goto fail;
  for (int k = 0; k < p->nout; ++k) {
    const spec_t *sp = &p->out[k];
    int j = sp->donate;
    if (j >= p->nin || (j >= 0 && (!PyArray_EquivTypes(p->in[j].descr, sp->descr) ||
                                   p->in[j].has_strides || sp->alias.kind >= 0 ||
                                   p->in[j].hi != sp->hi))) {
      PyErr_Format(PyExc_ValueError, "Program: output %d cannot reuse input %d", k, j);
      goto fail;
    }
    if (sp->alias.kind >= 0) { /* a view of an input, a constant or an earlier plain output */
      const ref_t *r = &sp->alias;
      int ok = (r->kind == BUF_INPUT && r->index >= 0 && r->index < p->nin) ||
               (r->kind == BUF_CONST && r->index >= 0 && r->index < p->nconst) ||
               (r->kind == BUF_OUTPUT && r->index >= 0 && r->index < p->nout &&
                p->out[r->index].alias.kind < 0);
      /* (the view's dtype may differ: a bitcast; its extent is what must hold) */
      if (!ok || check_extent(p, r, sp->ndim, sp->shape, sp->strides,
                              PyDataType_ELSIZE(sp->descr)) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "Program: output %d is a bad view", k);
        goto fail;
      }
    }
  }
  for (int i = 0; i < p->nthunk; ++i)
    if (parse_thunk(p, &p->thunks[i], PyTuple_GET_ITEM(thunks, i), i) < 0) goto fail;
  return (PyObject *)p;
fail:
  Py_DECREF(p);
  return NULL;
}
