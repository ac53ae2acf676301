/* Two helpers of the reduction runner (reduce.c): float sums whose rows meet pairwise, and the
 * folding of broadcast (zero-stride) dims without walking them. */
#include "reduce.h"

/* ---- pairwise rows ----
 * The run loop sums a contiguous run pairwise, but rows (runs, or row updates of a reduced axis
 * that is not innermost) reach an output one after another: a running float sum of 10^4 rows
 * was off by 54 ulps. So a float sum whose reduced dims outside the innermost run hold more than
 * RD_ROWS rows per output cuts the outermost such dim in halves, sums the second half into a
 * zeroed scratch accumulator of the same layout and adds it: rows meet in a tree (a few ulps),
 * for about 3/RD_ROWS more accumulator traffic. */
#define RD_ROWS 32
#define RD_MAXDEPTH 64

typedef struct {
  char *buf[RD_MAXDEPTH]; /* scratch accumulators by depth, of `span` bytes each */
  npy_intp span;
  bool failed;            /* no memory for scratch: the rest runs as one running sum */
} rd_scratch;

/* Rows per output of `shape`: the reduced dims that do not merge into the innermost run. */
static npy_intp outer_rows(const rd_space *sp, const npy_intp *shape, int nop, int *cut) {
  const int nd = sp->ndim;
  int d = nd - 1;
  while (d > 0) { /* dims pb_iterate merges into the innermost run */
    bool merge = sp->reduced[d - 1] == sp->reduced[d];
    for (int op = 0; merge && op < nop; ++op)
      merge = sp->strides[op * nd + d - 1] == sp->strides[op * nd + d] * shape[d];
    if (!merge && shape[d] != 1) break;
    --d;
  }
  npy_intp rows = 1;
  *cut = -1;
  for (int k = 0; k < d; ++k)
    if (sp->reduced[k] && shape[k] > 1) {
      rows *= shape[k];
      if (*cut < 0) *cut = k;
    }
  return rows;
}

/* rows of fewer elements than this go to the task's cols loop: one call for all of them */
#define RD_SHORT_ROW 256

/* pb_iterate with t->fn, or one t->cols call when the space is short contiguous rows reduced
 * into one (a bias gradient: (pixels, channels) -> channels, 8x faster than a call per row) */
static void leaf(const rd_space *sp, const rd_task *t, const npy_intp *shape, char **base) {
  npy_intp sh[PB_MAXDIMS], st[PB_MAXDIMS * 2];
  const int nd = t->cols && t->nop == 2
      ? pb_coalesce(sp->ndim, shape, 2, sp->strides, sh, st) : 0;
  if (nd == 2 && sh[1] < RD_SHORT_ROW && st[1] == 0 && st[2] == t->item[0] &&
      st[3] == t->item[1]) {
    t->cols(base[0], st[0], sh[0], base[1], sh[1]);
    return;
  }
  pb_iterate(sp->ndim, shape, t->nop, base, sp->strides, t->fn, NULL, 1);
}

static void walk(const rd_space *sp, const rd_task *t, const npy_intp *shape, char **base,
                 rd_scratch *sc, int depth) {
  int cut;
  if (!t->pairwise || sc->failed || depth >= RD_MAXDEPTH ||
      outer_rows(sp, shape, t->nop, &cut) <= RD_ROWS) {
    leaf(sp, t, shape, base);
    return;
  }
  const int nd = sp->ndim, acc = t->nop - 1;
  if (!sc->buf[depth] && !(sc->buf[depth] = PyMem_RawMalloc((size_t)sc->span))) {
    sc->failed = true;
    pb_iterate(nd, shape, t->nop, base, sp->strides, t->fn, NULL, 1);
    return;
  }
  npy_intp half[PB_MAXDIMS];
  memcpy(half, shape, sizeof(npy_intp) * (size_t)nd);
  const npy_intp h = shape[cut] / 2;
  half[cut] = h;
  walk(sp, t, half, base, sc, depth + 1);
  char *rest[RD_MAXOPS], *scr = sc->buf[depth];
  memset(scr, 0, (size_t)sc->span); /* float and complex zeros: the sum's identity */
  for (int op = 0; op < t->nop; ++op) rest[op] = base[op] + h * sp->strides[op * nd + cut];
  rest[acc] = scr;
  half[cut] = shape[cut] - h;
  walk(sp, t, half, rest, sc, depth + 1);
  /* acc += scratch over the outputs of this space (reduced dims walked once) */
  npy_intp outs[PB_MAXDIMS], st[2 * PB_MAXDIMS];
  for (int d = 0; d < nd; ++d) {
    outs[d] = sp->reduced[d] ? 1 : shape[d];
    st[d] = st[nd + d] = sp->strides[acc * nd + d];
  }
  char *pair[2] = {scr, base[acc]};
  pb_iterate(nd, outs, 2, pair, st, t->combine, NULL, 1);
}

/* pb_iterate over `shape` from `base`, a float sum's rows pairwise (walk) */
void pb_rd_walk_space(const rd_space *sp, const rd_task *t, const npy_intp *shape,
                       char *const *base) {
  char *b[RD_MAXOPS];
  for (int op = 0; op < t->nop; ++op) b[op] = base[op];
  rd_scratch sc = {.span = t->item[t->nop - 1], .failed = false};
  for (int d = 0; d < sp->ndim; ++d) /* the bytes this space's outputs span (strides >= 0) */
    if (shape[d] > 0) sc.span += (shape[d] - 1) * sp->strides[(t->nop - 1) * sp->ndim + d];
  walk(sp, t, shape, b, &sc, 0);
  for (int k = 0; k < RD_MAXDEPTH; ++k) PyMem_RawFree(sc.buf[k]);
}

/* ---- broadcast (zero-stride) dims: never walked ---- */

/* acc = OP(acc, acc, ...) n times over n identical operands, elementwise over `count`
 * accumulators, by binary powering through the op's own row loop (`combine`): doubling a sum
 * is exact, and max/min/and/or are idempotent, so this is the walk's value without the walk
 * (as XLA's reduce of a broadcast). `tmp` holds `count` accumulators. */
void pb_rd_op_power(pb_loop_fn combine, char *acc, char *tmp, npy_intp count, npy_intp item,
                     npy_intp n) {
  if (n <= 1 || count == 0) return;
  memcpy(tmp, acc, (size_t)(count * item)); /* the single copy: the base */
  int top = 62;
  while (!((n >> top) & 1)) --top;
  npy_intp st[2] = {item, item};
  for (int b = top - 1; b >= 0; --b) {
    char *sq[2] = {acc, acc};
    combine(sq, st, count, NULL); /* acc = acc (x) acc */
    if ((n >> b) & 1) {
      char *mul[2] = {tmp, acc};
      combine(mul, st, count, NULL); /* acc = acc (x) base */
    }
  }
}

/* dst (C-contiguous, `shape`) from src (C-contiguous, `shape` with the `copy` dims 1): each
 * value repeated along the copy dims. */
void pb_rd_expand(char *dst, const char *src, int nd, const npy_intp *shape, const bool *copy,
                   npy_intp item) {
  if (nd == 0) { memcpy(dst, src, (size_t)item); return; }
  npy_intp dinner = item, sinner = item;
  for (int d = 1; d < nd; ++d) { dinner *= shape[d]; sinner *= copy[d] ? 1 : shape[d]; }
  for (npy_intp i = 0; i < shape[0]; ++i) {
    if (copy[0] && i > 0) memcpy(dst + i * dinner, dst, (size_t)dinner);
    else pb_rd_expand(dst + i * dinner, src + i * sinner, nd - 1, shape + 1, copy + 1, item);
  }
}
