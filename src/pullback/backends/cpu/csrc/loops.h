/* A loop block's steps resolved once per run of the loop (loops.c), so that an iteration of a
 * small body is a few kernel calls: see docs/compiler.md, "Loops". */
#ifndef PB_LOOPS_H
#define PB_LOOPS_H
#include "step.h"

/* One entry of a plan: a step run as usual (thunk), or a kernel call on pointers that move by
 * d bytes per iteration of the loop: through its loop fn, or for one element of a few common
 * ops (code > 1), inline. */
typedef struct {
  int code;
  pb_loop_fn fn;
  const thunk_t *thunk;
  const void *prm;
  npy_intp n;
  int nop;
  char *p[RG_MAXSTEPIN + 1];
  npy_intp s[RG_MAXSTEPIN + 1], d[RG_MAXSTEPIN + 1];
} pb_plan_call;

#define PB_PLAN_LOCAL 8 /* entries held in the plan itself (more are allocated) */

typedef struct {
  int n, cap, moves;          /* moves: some pointer moves with the iteration */
  pb_plan_call *calls;
  pb_plan_call local[PB_PLAN_LOCAL];
} pb_plan;

/* The block's plan for a loop at `level` (-1: a while loop, whose operands never move), its
 * pointers resolved as at iteration 0 of that level. -1 when out of memory (nothing to free):
 * the caller then runs the block step by step. */
int pb_plan_block(pb_plan *pl, const thunk_t *ts, int n, const run_ctx *c, int level);
/* one run of the block at iteration it (0 for a while loop) */
int pb_plan_run(const pb_plan *pl, run_ctx *c, npy_intp it);
/* a while loop: cond, then body while *pred holds (plans made with level -1) */
int pb_plan_while(const pb_plan *cond, const pb_plan *body, const npy_bool *pred, run_ctx *c);
void pb_plan_free(pb_plan *pl);

#endif
