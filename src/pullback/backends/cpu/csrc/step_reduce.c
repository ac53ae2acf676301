/* The "reduce" step: a table reduction (reduce.c's runner) into its output; its parser and
 * runner. */
#include "step.h"
#include "cast.h"
#include "move.h"
#include <stdlib.h>
#include <string.h>

static int parse_reduce(Program *p, thunk_t *t, PyObject *spec) {
  /* compiler/steps.py's Reduce */
  PyObject *shape, *reduced, *refs, *xstrides;
  long long item, aitem;
  if (pb_field_int(spec, "op", &t->op) < 0 || pb_field_int(spec, "slot", &t->slot) < 0 ||
      !(shape = pb_field_tuple(spec, "shape")) || !(reduced = pb_field_tuple(spec, "reduced")) ||
      !(refs = pb_field_tuple(spec, "refs")) || !(xstrides = pb_field_tuple(spec, "xstrides")) ||
      pb_field_ll(spec, "item", &item) < 0 || pb_field_ll(spec, "acc_item", &aitem) < 0)
    return -1;
  t->kind = TH_REDUCE;
  if (!pb_reduce_supported(t->op, t->slot)) {
    PyErr_Format(PyExc_ValueError, "Program: no reduction kernel (%d, %d)", t->op, t->slot);
    return -1;
  }
  t->shape = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  t->strides = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  t->refs = PyMem_Calloc(3, sizeof(ref_t));
  if (!t->shape || !t->strides || !t->refs) { PyErr_NoMemory(); return -1; }
  t->nref = 3;
  if ((t->ndim = pb_parse_ints(shape, t->shape, PB_MAXDIMS, "reduce shape")) < 0) return -1;
  npy_intp red[PB_MAXDIMS];
  if (pb_parse_ints(reduced, red, PB_MAXDIMS, "reduced") != t->ndim ||
      pb_parse_ints(xstrides, t->strides, PB_MAXDIMS, "reduce strides") != t->ndim ||
      PyTuple_GET_SIZE(refs) != 3) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad reduce step");
    return -1;
  }
  npy_intp oshape[PB_MAXDIMS], ostr[PB_MAXDIMS], onum = 1;
  int ond = 0;
  for (int d = 0; d < t->ndim; ++d) {
    t->reduced[d] = red[d] != 0;
    if (!t->reduced[d]) { oshape[ond++] = t->shape[d]; onum *= t->shape[d]; }
  }
  for (int d = 0; d < ond; ++d) ostr[d] = 0;
  for (int i = 0; i < 3; ++i)
    if (pb_parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0) return -1;
  if (pb_check_extent(p, &t->refs[0], t->ndim, t->shape, t->strides, item) < 0) return -1;
  /* acc and out are C-contiguous runs of the output's element count */
  npy_intp one = onum, st1 = aitem, st2 = item;
  (void)oshape; (void)ostr;
  if (pb_check_extent(p, &t->refs[1], 1, &one, &st1, aitem) < 0 ||
      pb_check_extent(p, &t->refs[2], 1, &one, &st2, item) < 0)
    return -1;
  return 0;
}

static int run_reduce(const thunk_t *t, run_ctx *c) {
  const char *x = pb_resolve(c, &t->refs[0]);
  char *acc = pb_resolve(c, &t->refs[1]), *out = pb_resolve(c, &t->refs[2]);
  if (pb_reduce_raw(t->op, t->slot, t->ndim, t->shape, t->strides, t->reduced, x, acc, out) < 0) {
    c->error = "reduce: the reduction kernel failed (out of memory)";
    return -1;
  }
  return 0;
}

const pb_step_kind pb_step_reduce = {"reduce", parse_reduce, run_reduce, NULL};
