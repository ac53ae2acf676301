/* The "dcopy" step: a copy whose source or destination moves by clamped start indices read
 * at run time (dynamic_slice / dynamic_update_slice); its parser and runner. */
#include "step.h"
#include "cast.h"
#include "move.h"
#include <stdlib.h>
#include <string.h>

static int parse_dcopy(Program *p, thunk_t *t, PyObject *spec) {
  /* compiler/steps.py's DCopy: refs and strides are (source, destination); reverse = 1 when
   * the destination moves */
  PyObject *shape, *refs, *strides, *starts;
  long long item;
  if (pb_field_int(spec, "dst_moves", &t->reverse) < 0 || !(shape = pb_field_tuple(spec, "shape")) ||
      !(refs = pb_field_tuple(spec, "refs")) || !(strides = pb_field_tuple(spec, "strides")) ||
      pb_field_ll(spec, "item", &item) < 0 || !(starts = pb_field_tuple(spec, "starts")))
    return -1;
  t->kind = TH_DCOPY;
  t->op = (int)item;
  t->shape = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  t->strides = PyMem_Calloc(2 * PB_MAXDIMS, sizeof(npy_intp));
  t->refs = PyMem_Calloc(2, sizeof(ref_t));
  t->nstart = (int)PyTuple_GET_SIZE(starts);
  t->starts = PyMem_Calloc((size_t)t->nstart + 1, sizeof(dstart_t));
  if (!t->shape || !t->strides || !t->refs || !t->starts) { PyErr_NoMemory(); return -1; }
  t->nref = 2;
  if ((t->ndim = pb_parse_ints(shape, t->shape, PB_MAXDIMS, "dcopy shape")) < 0) return -1;
  if (!pb_move_copy_loop(item) || PyTuple_GET_SIZE(refs) != 2 || PyTuple_GET_SIZE(strides) != 2) {
    PyErr_SetString(PyExc_ValueError, "Program: bad dcopy step");
    return -1;
  }
  for (int i = 0; i < 2; ++i) {
    if (pb_parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0 ||
        pb_parse_ints(PyTuple_GET_ITEM(strides, i), t->strides + i * t->ndim, PB_MAXDIMS,
                   "dcopy strides") != t->ndim) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: dcopy strides != ndim");
      return -1;
    }
  }
  npy_intp lo = 0, hi = 0; /* the moving side's offsets over every clamped start */
  for (int k = 0; k < t->nstart; ++k) {
    dstart_t *d = &t->starts[k];
    long long lim, st;
    PyObject *o = PyTuple_GET_ITEM(starts, k); /* steps.py's DStart */
    if (!(refs = pb_field(o, "ref")) || pb_field_int(o, "item", &d->item) < 0 ||
        pb_field_int(o, "signed", &d->is_signed) < 0 || pb_field_ll(o, "limit", &lim) < 0 ||
        pb_field_ll(o, "stride", &st) < 0)
      return -1;
    if ((d->item != 1 && d->item != 2 && d->item != 4 && d->item != 8) || lim < 0 ||
        pb_parse_scalar_ref(p, refs, &d->ref, d->item) < 0) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad dcopy start");
      return -1;
    }
    d->limit = (npy_intp)lim;
    d->stride = (npy_intp)st;
    if (d->stride < 0) lo += d->limit * d->stride; else hi += d->limit * d->stride;
  }
  const int mv = t->reverse;
  for (int i = 0; i < 2; ++i) {
    ref_t r = t->refs[i];
    if (pb_check_extent(p, &r, t->ndim, t->shape, t->strides + i * t->ndim, item) < 0) return -1;
    if (i == mv) { /* and at both ends of its range */
      r.offset = t->refs[i].offset + lo;
      if (pb_check_extent(p, &r, t->ndim, t->shape, t->strides + i * t->ndim, item) < 0) return -1;
      r.offset = t->refs[i].offset + hi;
      if (pb_check_extent(p, &r, t->ndim, t->shape, t->strides + i * t->ndim, item) < 0) return -1;
    }
  }
  return 0;
}

/* A copy whose source or destination moves by clamped start indices read now. */
static int run_dcopy(const thunk_t *t, run_ctx *c) {
  npy_intp off = 0;
  for (int k = 0; k < t->nstart; ++k) {
    const dstart_t *d = &t->starts[k];
    const char *p = pb_resolve(c, &d->ref);
    int64_t v;
    if (d->is_signed) {
      v = d->item == 1 ? *(const int8_t *)p : d->item == 2 ? *(const int16_t *)p
          : d->item == 4 ? *(const int32_t *)p : *(const int64_t *)p;
    } else {
      const uint64_t u = d->item == 1 ? *(const uint8_t *)p : d->item == 2 ? *(const uint16_t *)p
                         : d->item == 4 ? *(const uint32_t *)p : *(const uint64_t *)p;
      v = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    v = v < 0 ? 0 : v > d->limit ? d->limit : v;
    off += (npy_intp)v * d->stride;
  }
  char *ptrs[2] = {pb_resolve(c, &t->refs[0]), pb_resolve(c, &t->refs[1])};
  ptrs[t->reverse] += off;
  pb_iterate(t->ndim, t->shape, 2, ptrs, t->strides, pb_move_copy_loop(t->op), NULL, 1);
  return 0;
}

static void release_dcopy(thunk_t *t) { PyMem_Free(t->starts); }

const pb_step_kind pb_step_dcopy = {"dcopy", parse_dcopy, run_dcopy, release_dcopy};
