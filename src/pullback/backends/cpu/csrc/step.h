/* The step contract: a step kind is one pb_step_kind entry {parse, run, release} in its own file
 * (step_region.c, products.c, step_reduce.c, step_dcopy.c, loops.c, pipe.c, kernel_step.c,
 * step_py.c), listed in the step table (step_common.c); step_common.c offers the helpers every
 * kind's parser uses. The executor (schedule.c) runs a step through pb_run_thunk. */
#ifndef PB_STEP_H
#define PB_STEP_H
#include "program.h"

/* The step table: each step kind in its own file with its parser, runner and release together.
 * parse fills t (t->kind already set; t->data or the thunk's fields) from the compiler's spec
 * (-1 with ValueError or TypeError; what it allocated is released even then); run executes it
 * (0, or -1 with c->error / c->failure set; no GIL); release (may be NULL) frees what parse made
 * beyond the shared parsing helpers' allocations (shape, refs, strides, blocks). */
typedef struct pb_step_kind {
  const char *name;
  int (*parse)(Program *p, thunk_t *t, PyObject *spec);
  int (*run)(const thunk_t *t, run_ctx *c);
  void (*release)(thunk_t *t);
} pb_step_kind;
extern const pb_step_kind *const pb_step_kinds[TH_N]; /* by kind id (step_common.c) */
extern const pb_step_kind pb_step_region;                  /* step_region.c */
extern const pb_step_kind pb_step_dot, pb_step_par;        /* products.c */
extern const pb_step_kind pb_step_reduce;                  /* step_reduce.c */
extern const pb_step_kind pb_step_py;                      /* step_py.c */
extern const pb_step_kind pb_step_scan, pb_step_while, pb_step_cond; /* loops.c */
extern const pb_step_kind pb_step_dcopy;                   /* step_dcopy.c */
extern const pb_step_kind pb_step_pipe;                    /* pipe.c */
extern const pb_step_kind pb_step_kernel;                  /* kernel_step.c */


/* one step, through its kind's runner */
static inline int pb_run_thunk(const thunk_t *t, run_ctx *c) {
  return pb_step_kinds[t->kind]->run(t, c);
}
/* step_region.c: a region step's parser and runner (for a dot's epilogue, products.c), and the
 * region over [lo, hi) of dimension dim of its space (all of it when dim < 0) */
int pb_parse_region(Program *p, thunk_t *t, PyObject *spec);
int pb_run_region(const thunk_t *t, run_ctx *c);
void pb_region_slice(const thunk_t *t, char *const *base0, char *scratch, int dim, npy_intp lo,
                     npy_intp hi, int tid);
/* pipe.c: a watched scan (loops.c) waits for its input's chunk before iteration i */
int pb_pipe_wait(const run_ctx *c, npy_intp i);

/* step_common.c: parsing helpers (an int tuple into out: its length, or -1; a block of
 * steps; a thunk's nested blocks) */
int pb_parse_ints(PyObject *t, npy_intp *out, int max, const char *what);
/* a step spec's field by name (borrowed; NULL with ValueError), checked as a tuple, or read as an
 * int (0, or -1 with ValueError) */
PyObject *pb_field(PyObject *spec, const char *name);
PyObject *pb_field_tuple(PyObject *spec, const char *name);
int pb_field_ll(PyObject *spec, const char *name, long long *out);
int pb_field_int(PyObject *spec, const char *name, int *out);
int pb_parse_block(Program *p, PyObject *specs, int *n, thunk_t **out);
int pb_alloc_blocks(thunk_t *t, int n);
int pb_parse_scalar_ref(Program *p, PyObject *o, ref_t *r, npy_intp item); /* a 0-d operand */
void pb_thunk_clear(thunk_t *t);
/* an operand reference, and the check that an operand of it stays inside its buffer */
int pb_parse_ref(Program *p, PyObject *o, ref_t *r);
int pb_check_extent(Program *p, const ref_t *r, int nd, const npy_intp *shape,
                    const npy_intp *strides, npy_intp item);

/* step_common.c: one step spec parsed through the table (i: its index, for messages) */
int pb_parse_step(Program *p, thunk_t *t, PyObject *spec, int i);

#endif
