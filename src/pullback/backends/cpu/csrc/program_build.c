/* Building a Program from the compiler's step specs (compiler/steps.py): the input and output
 * specs here, each step through its kind's parser (step.h), every operand checked against its
 * buffer's extent, so a malformed schedule raises ValueError here instead of touching memory at
 * run time. */
#include "step.h"
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

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
      if (!ok || pb_check_extent(p, r, sp->ndim, sp->shape, sp->strides,
                              PyDataType_ELSIZE(sp->descr)) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "Program: output %d is a bad view", k);
        goto fail;
      }
    }
  }
  for (int i = 0; i < p->nthunk; ++i)
    if (pb_parse_step(p, &p->thunks[i], PyTuple_GET_ITEM(thunks, i), i) < 0) goto fail;
  return (PyObject *)p;
fail:
  Py_DECREF(p);
  return NULL;
}
