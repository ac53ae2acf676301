/* Plans of loop blocks (scan and while bodies, while conditions): on entry to a loop, each
 * small region of its block becomes its kernel calls with every operand pointer resolved, so an
 * iteration runs those calls directly instead of resolving references, walking the index space
 * (pb_iterate) and tiling (region_loop) for a single element again. The pointers of a scan's
 * slices move by a fixed number of bytes per iteration of its level; everything else in a block
 * (the arena, the inputs, the enclosing loops' slices) stays put while the loop runs. Other
 * steps (products, reductions, nested loops, large regions) run as they would outside a plan. */
#include "loops.h"
#include "move.h"
#include <pthread.h>
#include <stdatomic.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

/* One element of these ops runs inline (a loop counter, a bound check, a scalar update): a
 * kernel call costs more than the arithmetic. Integers wrap (computed unsigned), as the
 * kernels do; floats compute in their own type, as the kernels do. */
#define SCALAR_TYPES(X, OP, SYM)                                                                   \
  X(OP, SYM, I32, int32_t, uint32_t) X(OP, SYM, I64, int64_t, uint64_t)                            \
  X(OP, SYM, U32, uint32_t, uint32_t) X(OP, SYM, U64, uint64_t, uint64_t)                          \
  X(OP, SYM, F32, float, float) X(OP, SYM, F64, double, double)
#define ARITH_OPS(Y) Y(add, +) Y(sub, -) Y(mul, *)
#define CMP_OPS(Y) Y(lt, <) Y(le, <=) Y(gt, >) Y(ge, >=) Y(eq, ==) Y(ne, !=)

#define SC_ENUM(OP, SYM, S, T, W) SC_##OP##_##S,
#define SC_ENUM_OP(OP, SYM) SCALAR_TYPES(SC_ENUM, OP, SYM)
enum { SC_THUNK, SC_CALL, SC_COPY1, SC_COPY2, SC_COPY4, SC_COPY8,
       ARITH_OPS(SC_ENUM_OP) CMP_OPS(SC_ENUM_OP) SC_N };

static struct { pb_loop_fn fn; int code; } scalar_ops[SC_N];
static int nscalar;
static pthread_once_t scalar_once = PTHREAD_ONCE_INIT;

static void scalar_add(pb_loop_fn fn, int code) {
  if (fn) scalar_ops[nscalar++] = (__typeof__(scalar_ops[0])){fn, code};
}

static void scalar_init(void) {
  scalar_add(pb_move_copy_loop(1), SC_COPY1);
  scalar_add(pb_move_copy_loop(2), SC_COPY2);
  scalar_add(pb_move_copy_loop(4), SC_COPY4);
  scalar_add(pb_move_copy_loop(8), SC_COPY8);
#define SC_REG(OP, SYM, S, T, W) scalar_add(pb_ewise_loop(pb_ewise_row(#OP), PB_##S), SC_##OP##_##S);
#define SC_REG_OP(OP, SYM) SCALAR_TYPES(SC_REG, OP, SYM)
  ARITH_OPS(SC_REG_OP) CMP_OPS(SC_REG_OP)
}

/* the inline code of a one-element call of loop fn, else SC_CALL */
static int scalar_code(pb_loop_fn fn) {
  pthread_once(&scalar_once, scalar_init);
  for (int i = 0; i < nscalar; ++i)
    if (scalar_ops[i].fn == fn) return scalar_ops[i].code;
  return SC_CALL;
}

static pb_plan_call *add_call(pb_plan *pl) {
  if (pl->n == pl->cap) {
    const int cap = pl->cap * 2;
    pb_plan_call *m = malloc(sizeof(pb_plan_call) * (size_t)cap);
    if (!m) return NULL;
    memcpy(m, pl->calls, sizeof(pb_plan_call) * (size_t)pl->n);
    if (pl->calls != pl->local) free(pl->calls);
    pl->calls = m;
    pl->cap = cap;
  }
  return &pl->calls[pl->n++];
}

/* The bytes a reference moves per iteration of loop `level`. */
static npy_intp moves_by(const ref_t *r, int level) {
  npy_intp d = 0;
  for (int l = 0; l < r->nloop; ++l)
    if (r->lvl[l] == level) d += r->lstr[l];
  return d;
}

/* A region's kernel calls appended to the plan: 1, or 0 when it does not run as one tile of
 * one row on this thread (it then runs as a step), -1 when out of memory. */
static int plan_region(pb_plan *pl, const thunk_t *t, const run_ctx *c, int level) {
  if (t->ninit || t->rg.ntslot >= 0) return 0;
  /* the index space merged into one row, as pb_iterate would */
  npy_intp len = 1, st[RG_MAXOPND] = {0};
  int nd = 0;
  for (int d = 0; d < t->ndim; ++d) {
    const npy_intp sh = t->shape[d];
    if (sh == 0) return 1; /* empty: nothing to run */
    if (sh == 1) continue;
    bool merge = nd > 0;
    for (int i = 0; merge && i < t->nref; ++i) merge = st[i] == t->strides[i * t->ndim + d] * sh;
    if (nd > 0 && !merge) return 0;
    len *= sh;
    for (int i = 0; i < t->nref; ++i) st[i] = t->strides[i * t->ndim + d];
    nd = 1;
  }
  if (len > RG_TILE || (c->threads > 1 && len >= 2 * t->grain)) return 0;
  char *base[RG_MAXOPND], *scr = c->scratch + (size_t)c->tid * (size_t)t->rg.nslots * RG_SLOT_BYTES;
  npy_intp dl[RG_MAXOPND];
  for (int i = 0; i < t->nref; ++i) {
    base[i] = pb_resolve(c, &t->refs[i]);
    dl[i] = level >= 0 ? moves_by(&t->refs[i], level) : 0;
  }
  for (int k = 0; k < t->rg.nsteps; ++k) {
    const rg_step *s = &t->rg.steps[k];
    pb_plan_call *q = add_call(pl);
    if (!q) return -1;
    *q = (pb_plan_call){.code = len == 1 ? scalar_code(s->fn) : SC_CALL, .fn = s->fn,
                        .prm = s->prm, .n = len, .nop = s->nin + 1};
    for (int i = 0; i <= s->nin; ++i) {
      const int id = s->opnd[i];
      if (id >= 0) {
        q->p[i] = base[id];
        q->s[i] = st[id];
        q->d[i] = dl[id];
        pl->moves |= dl[id] != 0;
      } else {
        q->p[i] = scr + (size_t)(-id - 1) * RG_SLOT_BYTES;
        q->s[i] = s->item[i];
      }
    }
  }
  return 1;
}

int pb_plan_block(pb_plan *pl, const thunk_t *ts, int n, const run_ctx *c, int level) {
  pl->n = 0;
  pl->cap = PB_PLAN_LOCAL;
  pl->moves = 0;
  pl->calls = pl->local;
  run_ctx c0 = *c; /* references resolved at the loop's iteration 0 */
  if (level >= 0) c0.iter[level] = 0;
  for (int i = 0; i < n; ++i) {
    const int r = ts[i].kind == TH_REGION ? plan_region(pl, &ts[i], &c0, level) : 0;
    pb_plan_call *q = r == 0 ? add_call(pl) : NULL;
    if (r < 0 || (r == 0 && !q)) {
      pb_plan_free(pl);
      return -1;
    }
    if (q) *q = (pb_plan_call){.code = SC_THUNK, .thunk = &ts[i]};
  }
  return 0;
}

/* One run of a plan; `moves` is a constant in each caller, so that a plan whose pointers stay
 * put (a while loop's) reads them in place. */
static inline __attribute__((always_inline)) int plan_exec(const pb_plan *pl, run_ctx *c,
                                                           npy_intp it, bool moves) {
  for (int k = 0; k < pl->n; ++k) {
    const pb_plan_call *q = &pl->calls[k];
    if (q->code == SC_THUNK) {
      if (pb_run_thunk(q->thunk, c) < 0) return -1;
      continue;
    }
    char *mv[RG_MAXSTEPIN + 1];
    char *const *p = q->p;
    if (moves) {
      for (int i = 0; i < RG_MAXSTEPIN + 1; ++i) /* unused places: NULL + 0, as integers */
        mv[i] = (char *)((uintptr_t)q->p[i] + (uintptr_t)(it * q->d[i]));
      p = mv;
    }
    switch (q->code) {
      case SC_COPY1: memcpy(p[1], p[0], 1); break;
      case SC_COPY2: memcpy(p[1], p[0], 2); break;
      case SC_COPY4: memcpy(p[1], p[0], 4); break;
      case SC_COPY8: memcpy(p[1], p[0], 8); break;
#define SC_ARITH(OP, SYM, S, T, W)                                                                 \
  case SC_##OP##_##S: {                                                                            \
    T a, b, r;                                                                                     \
    memcpy(&a, p[0], sizeof a);                                                                    \
    memcpy(&b, p[1], sizeof b);                                                                    \
    r = (T)((W)a SYM (W)b);                                                                        \
    memcpy(p[2], &r, sizeof r);                                                                    \
    break;                                                                                         \
  }
#define SC_CMP(OP, SYM, S, T, W)                                                                   \
  case SC_##OP##_##S: {                                                                            \
    T a, b;                                                                                        \
    memcpy(&a, p[0], sizeof a);                                                                    \
    memcpy(&b, p[1], sizeof b);                                                                    \
    *(npy_bool *)p[2] = a SYM b;                                                                   \
    break;                                                                                         \
  }
#define SC_ARITH_OP(OP, SYM) SCALAR_TYPES(SC_ARITH, OP, SYM)
#define SC_CMP_OP(OP, SYM) SCALAR_TYPES(SC_CMP, OP, SYM)
      ARITH_OPS(SC_ARITH_OP)
      CMP_OPS(SC_CMP_OP)
      default: { /* a copy: a kernel may advance the pointers it gets */
        char *cp[RG_MAXSTEPIN + 1];
        memcpy(cp, p, sizeof cp); /* a fixed size: inlined, not a library call */
        q->fn(cp, q->s, q->n, q->prm);
      }
    }
  }
  return 0;
}

int pb_plan_run(const pb_plan *pl, run_ctx *c, npy_intp it) {
  return pl->moves ? plan_exec(pl, c, it, true) : plan_exec(pl, c, 0, false);
}

int pb_plan_while(const pb_plan *cond, const pb_plan *body, const npy_bool *pred, run_ctx *c) {
  int rc;
  while ((rc = plan_exec(cond, c, 0, false)) == 0 && *pred && (rc = plan_exec(body, c, 0, false)) == 0) {
  }
  return rc;
}

void pb_plan_free(pb_plan *pl) {
  if (pl->calls != pl->local) free(pl->calls);
  pl->calls = pl->local;
  pl->n = 0;
}

/* ---- the loop steps: "scan", "while", "cond" (parsers and runners) ---- */

static int parse_scan(Program *p, thunk_t *t, PyObject *spec) {
  /* compiler/steps.py's Scan: the body's slices move with `level`, which is the number of
   * loops around this one */
  long long length;
  PyObject *body;
  if (pb_field_int(spec, "level", &t->level) < 0 || pb_field_ll(spec, "length", &length) < 0 ||
      pb_field_int(spec, "reverse", &t->reverse) < 0 || !(body = pb_field(spec, "body")))
    return -1;
  t->kind = TH_SCAN;
  if (t->level != p->depth || t->level >= PB_MAXLOOP || length < 0) {
    PyErr_Format(PyExc_ValueError, "Program: a scan at depth %d has level %d (at most %d nested) "
                 "and length %lld", p->depth, t->level, PB_MAXLOOP, length);
    return -1;
  }
  t->length = (npy_intp)length;
  if (pb_alloc_blocks(t, 1) < 0) return -1;
  p->loop_len[p->depth++] = t->length;
  int rc = pb_parse_block(p, body, &t->block_n[0], &t->blocks[0]);
  p->depth--;
  return rc;
}

static int parse_while(Program *p, thunk_t *t, PyObject *spec) {
  /* steps.py's While: a bool predicate, cond and body blocks */
  PyObject *pred, *cond, *body;
  if (!(pred = pb_field(spec, "pred")) || !(cond = pb_field(spec, "cond")) ||
      !(body = pb_field(spec, "body")))
    return -1;
  t->kind = TH_WHILE;
  if (pb_parse_scalar_ref(p, pred, &t->sel, 1) < 0 || pb_alloc_blocks(t, 2) < 0 ||
      pb_parse_block(p, cond, &t->block_n[0], &t->blocks[0]) < 0 ||
      pb_parse_block(p, body, &t->block_n[1], &t->blocks[1]) < 0)
    return -1;
  return 0;
}

static int parse_cond(Program *p, thunk_t *t, PyObject *spec) {
  /* steps.py's Cond: an int32 index, branch blocks */
  PyObject *index, *branches;
  if (!(index = pb_field(spec, "index")) || !(branches = pb_field_tuple(spec, "branches")))
    return -1;
  t->kind = TH_COND;
  const int n = (int)PyTuple_GET_SIZE(branches);
  if (n < 1) {
    PyErr_SetString(PyExc_ValueError, "Program: a cond needs a branch");
    return -1;
  }
  if (pb_parse_scalar_ref(p, index, &t->sel, 4) < 0 || pb_alloc_blocks(t, n) < 0) return -1;
  for (int k = 0; k < n; ++k)
    if (pb_parse_block(p, PyTuple_GET_ITEM(branches, k), &t->block_n[k], &t->blocks[k]) < 0)
      return -1;
  return 0;
}

static int run_block(const thunk_t *ts, int n, run_ctx *c) {
  for (int i = 0; i < n; ++i)
    if (pb_run_thunk(&ts[i], c) < 0) return -1;
  return 0;
}

/* The body once per iteration; its slices move with this loop's level. */
static int run_scan(const thunk_t *t, run_ctx *c) {
  pb_plan pl; /* the body's small regions as direct kernel calls (loops.c) */
  const bool plan = t->length > 1 &&
                    pb_plan_block(&pl, t->blocks[0], t->block_n[0], c, t->level) == 0;
  int rc = 0;
  for (npy_intp i = 0; i < t->length && rc == 0; ++i) {
    const npy_intp it = t->reverse ? t->length - 1 - i : i;
    c->iter[t->level] = it;
    if (t == c->watch && c->pipe && pb_pipe_wait(c, i) < 0) { rc = -1; break; }
    rc = plan ? pb_plan_run(&pl, c, it) : run_block(t->blocks[0], t->block_n[0], c);
    if (rc == 0 && t == c->watch) atomic_store_explicit(c->progress, i + 1, memory_order_release);
  }
  if (plan) pb_plan_free(&pl);
#if defined(__x86_64__) || defined(__i386__)
  _mm_sfence(); /* slices the body streamed (rg.ntloop) reach memory before others read them */
#endif
  return rc;
}

static int run_while(const thunk_t *t, run_ctx *c) {
  const npy_bool *pred = (const npy_bool *)pb_resolve(c, &t->sel);
  pb_plan cond, body; /* a while loop's operands stay put: resolved once (loops.c) */
  if (pb_plan_block(&cond, t->blocks[0], t->block_n[0], c, -1) < 0) goto unplanned;
  if (pb_plan_block(&body, t->blocks[1], t->block_n[1], c, -1) < 0) {
    pb_plan_free(&cond);
    goto unplanned;
  }
  const int rc = pb_plan_while(&cond, &body, pred, c);
  pb_plan_free(&cond);
  pb_plan_free(&body);
  return rc;
unplanned: /* out of memory for the plans: step by step */
  for (;;) {
    if (run_block(t->blocks[0], t->block_n[0], c) < 0) return -1;
    if (!*pred) return 0;
    if (run_block(t->blocks[1], t->block_n[1], c) < 0) return -1;
  }
}

static int run_cond(const thunk_t *t, run_ctx *c) {
  int32_t k;
  memcpy(&k, pb_resolve(c, &t->sel), sizeof k);
  k = k < 0 ? 0 : k >= t->nblock ? t->nblock - 1 : k; /* clamped, as lax.switch does */
  return run_block(t->blocks[k], t->block_n[k], c);
}

const pb_step_kind pb_step_scan = {"scan", parse_scan, run_scan, NULL};
const pb_step_kind pb_step_while = {"while", parse_while, run_while, NULL};
const pb_step_kind pb_step_cond = {"cond", parse_cond, run_cond, NULL};
