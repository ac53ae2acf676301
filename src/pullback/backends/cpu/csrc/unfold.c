/* unfold (im2col) and fold (col2im) over the last K dimensions, as seed 000 defines them:
 * unfold maps (lead..., spatial...) to (lead..., prod(kernel), L) where L counts the window
 * positions (row-major over the K spatial window grids) and the kernel offset is row-major over
 * the kernel; positions in the zero padding read 0. fold is its transpose: it sums each
 * column back into (lead..., output_size...), overlapping windows adding up.
 *
 * For one kernel offset, window position l reads spatial coordinate l*stride + k*dilation - low:
 * an affine, injective map, so each offset is one strided box copy (unfold) or one box
 * accumulation (fold) over the window positions whose coordinate lies inside the input. */
#include "move.h"
#include "kernel_abi.h"
#include <string.h>

typedef struct {
  int K;
  npy_intp k[PB_MAXDIMS], s[PB_MAXDIMS], d[PB_MAXDIMS], lo[PB_MAXDIMS], hi[PB_MAXDIMS];
  npy_intp size[PB_MAXDIMS]; /* spatial sizes of the (unpadded) image */
  npy_intp L[PB_MAXDIMS];    /* window positions per spatial dimension */
  npy_intp nk, nl;           /* prod(k), prod(L) */
} geom;

/* The geometry (kernel_size, stride, dilation, low, high) against the image's spatial `size`:
 * false when it is invalid or its counts overflow. */
static bool parse_geom(const void *params, const int64_t *size, int K, geom *g) {
  const int64_t *src = params; /* window_params: five arrays of PB_MAXDIMS */
  npy_intp *dst[5] = {g->k, g->s, g->d, g->lo, g->hi};
  g->K = K;
  for (int a = 0; a < 5; ++a)
    for (int i = 0; i < K; ++i) {
      dst[a][i] = src[a * PB_MAXDIMS + i];
      if (dst[a][i] < (a < 3 ? 1 : 0)) return false;
    }
  g->nk = g->nl = 1;
  for (int i = 0; i < K; ++i) {
    npy_intp padded, extent;
    g->size[i] = size[i];
    if (size[i] < 0 || __builtin_add_overflow(size[i], g->lo[i], &padded) ||
        __builtin_add_overflow(padded, g->hi[i], &padded) ||
        __builtin_mul_overflow(g->d[i], g->k[i] - 1, &extent) || extent >= padded)
      return false;
    g->L[i] = (padded - extent - 1) / g->s[i] + 1;
    if (__builtin_mul_overflow(g->nk, g->k[i], &g->nk) ||
        __builtin_mul_overflow(g->nl, g->L[i], &g->nl))
      return false;
  }
  return true;
}

/* For kernel offset `kk`: per spatial dimension the window positions [first, first + count)
 * that read inside the image, and the image coordinate of `first`. False if some count is 0. */
static bool offset_box(const geom *g, npy_intp kk, npy_intp *first, npy_intp *count,
                       npy_intp *coord) {
  bool any = true;
  for (int i = g->K - 1; i >= 0; --i) {
    npy_intp ki = kk % g->k[i];
    kk /= g->k[i];
    npy_intp off = ki * g->d[i] - g->lo[i]; /* coordinate of window position 0 */
    npy_intp f = off >= 0 ? 0 : pb_floordiv(-off + g->s[i] - 1, g->s[i]);
    npy_intp l = g->size[i] - 1 - off < 0 ? -1 : pb_floordiv(g->size[i] - 1 - off, g->s[i]);
    if (l > g->L[i] - 1) l = g->L[i] - 1;
    if (f > g->L[i]) f = g->L[i];
    first[i] = f;
    count[i] = l >= f ? l - f + 1 : 0;
    coord[i] = off + f * g->s[i];
    any = any && count[i] > 0;
  }
  return any;
}

/* Zeros the window positions of one unfold row outside the box [first, first + count): the
 * complement of a box is K slabs, slab i being inside the box along dimensions < i, outside
 * it along i, anything along > i. */
static void zero_outside(const geom *g, char *row, const npy_intp *grid, const npy_intp *first,
                         const npy_intp *count, pb_loop_fn copy) {
  static const char zero[16] = {0}; /* 0 bits: zero in every dtype */
  const int K = g->K;
  npy_intp shape[PB_MAXDIMS], strides[2 * PB_MAXDIMS] = {0};
  for (int i = 0; i < K; ++i) strides[K + i] = grid[i];
  for (int i = 0; i < K; ++i) {
    char *base = row;
    for (int j = 0; j < i; ++j) {
      shape[j] = count[j];
      base += first[j] * grid[j];
    }
    for (int j = i + 1; j < K; ++j) shape[j] = g->L[j];
    npy_intp before = first[i], after = g->L[i] - first[i] - count[i];
    char *b[2] = {(char *)zero, base};
    shape[i] = before;
    pb_iterate(K, shape, 2, b, strides, copy, NULL, 1);
    shape[i] = after;
    b[1] = base + (first[i] + count[i]) * grid[i];
    pb_iterate(K, shape, 2, b, strides, copy, NULL, 1);
  }
}

/* Strides of the L axis (byte stride `ls`) seen as the K-dimensional window grid. */
static void grid_strides(const geom *g, npy_intp ls, npy_intp *out) {
  for (int i = g->K - 1; i >= 0; --i) {
    out[i] = ls;
    ls *= g->L[i];
  }
}

typedef struct {
  const geom *g;
  pb_loop_fn fn;
  bool img_is_src;                   /* unfold (image to columns), which also zero-fills */
  const npy_intp *img_str, *col_str; /* the spatial strides of the image, the (K, L) strides */
  npy_intp grid[PB_MAXDIMS];         /* the L axis seen as the window grid */
} offsets_plan;

/* For each leading element: every kernel offset's box, moved by the plan's loop. */
static void offset_boxes(char **p, const npy_intp *s, npy_intp n, const void *prm) {
  const offsets_plan *U = prm;
  const geom *g = U->g;
  const int K = g->K, si = U->img_is_src ? 0 : K, sc = U->img_is_src ? K : 0;
  npy_intp first[PB_MAXDIMS], count[PB_MAXDIMS], coord[PB_MAXDIMS], strides[2 * PB_MAXDIMS];
  for (int i = 0; i < K; ++i) {
    strides[si + i] = g->s[i] * U->img_str[i];
    strides[sc + i] = U->grid[i];
  }
  char *img = p[0], *col = p[1];
  for (npy_intp e = 0; e < n; ++e, img += s[0], col += s[1])
    for (npy_intp kk = 0; kk < g->nk; ++kk) {
      bool any = offset_box(g, kk, first, count, coord);
      if (U->img_is_src) zero_outside(g, col + kk * U->col_str[0], U->grid, first, count, U->fn);
      if (!any) continue;
      char *pi = img, *pc = col + kk * U->col_str[0];
      for (int i = 0; i < K; ++i) {
        pi += coord[i] * U->img_str[i];
        pc += first[i] * U->grid[i];
      }
      char *base[2] = {U->img_is_src ? pi : pc, U->img_is_src ? pc : pi};
      pb_iterate(K, count, 2, base, strides, U->fn, NULL, 1);
    }
}

/* Runs fn over every kernel offset's box of every leading element: `img` is the image side
 * (lead..., spatial...), `col` the column side (lead..., prod(kernel), L). Threads take
 * disjoint leading elements, so fold's sums stay in kernel-offset order. */
static void for_each_offset(const geom *g, int nlead, const npy_intp *lead, char *img,
                            const npy_intp *img_str, char *col, const npy_intp *col_str,
                            bool img_is_src, pb_loop_fn fn, const pb_kernel_ctx *ctx) {
  offsets_plan U = {g, fn, img_is_src, img_str + nlead, col_str + nlead, {0}};
  grid_strides(g, col_str[nlead + 1], U.grid);
  npy_intp strides[2 * PB_MAXDIMS], work = g->nk * g->nl;
  for (int d = 0; d < nlead; ++d) {
    strides[d] = img_str[d];
    strides[nlead + d] = col_str[d];
    work *= lead[d];
  }
  char *base[2] = {img, col};
  pb_iterate(nlead, lead, 2, base, strides, offset_boxes, &U, pb_kernel_threads(ctx, work, 262144));
}

/* ---- the kernels (pb_kernel.h); primitives/windows.py checks the geometry when bound, the
 * kernels again what memory safety needs ---- */

/* the window geometry of the last K dimensions (unfold_params = fold_params) */
typedef struct {
  int64_t kernel_size[PB_MAXDIMS], stride[PB_MAXDIMS], dilation[PB_MAXDIMS],
      padding_low[PB_MAXDIMS], padding_high[PB_MAXDIMS];
  int32_t K, unused;
} window_params;

/* unfold: x (lead..., spatial...) -> (lead..., prod(kernel_size), L) */
static int unfold_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                         const void *params, pb_kernel_ctx *ctx) {
  const window_params *W = params;
  const pb_operand *x = &ins[0], *out = &outs[0];
  const int K = W->K, nlead = x->ndim - K;
  pb_loop_fn fn = pb_move_copy_loop(x->itemsize);
  geom g;
  if (!fn || K < 1 || nlead < 0 || nlead + 2 > PB_MAXDIMS || out->dtype != x->dtype ||
      out->itemsize != x->itemsize || out->ndim != nlead + 2 ||
      !parse_geom(W, x->shape + nlead, K, &g) || out->shape[nlead] != g.nk ||
      out->shape[nlead + 1] != g.nl)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "the geometry does not fit the operands");
  for (int d = 0; d < nlead; ++d)
    if (out->shape[d] != x->shape[d])
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "the geometry does not fit the operands");
  if (pb_operand_size(out) == 0) return 0;
  for_each_offset(&g, nlead, out->shape, x->data, x->strides, out->data, out->strides, true, fn,
                  ctx);
  return 0;
}

/* fold: cols (lead..., prod(kernel_size), L) -> (lead..., output_size...), the output's last K
 * dimensions being output_size */
static int fold_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                       const void *params, pb_kernel_ctx *ctx) {
  const window_params *W = params;
  const pb_operand *c = &ins[0], *out = &outs[0];
  const int K = W->K, nlead = c->ndim - 2;
  /* overlapping windows add up; for bool, "adding" is or */
  pb_loop_fn fn = pb_move_combine_loop_slot(c->dtype == PB_BOOL ? PB_COMBINE_MAX : PB_COMBINE_ADD,
                                            c->dtype, c->itemsize);
  geom g;
  if (!fn || K < 1 || nlead < 0 || nlead + K > PB_MAXDIMS || out->ndim != nlead + K ||
      out->dtype != c->dtype || out->itemsize != c->itemsize ||
      !parse_geom(W, out->shape + nlead, K, &g) || c->shape[nlead] != g.nk ||
      c->shape[nlead + 1] != g.nl)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "the geometry does not fit the operands");
  for (int d = 0; d < nlead; ++d)
    if (out->shape[d] != c->shape[d])
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "the geometry does not fit the operands");
  const npy_intp n = pb_operand_size(out);
  if (n == 0) return 0;
  /* zero the output (0 bits: zero in every dtype), then add every column in */
  static const char zero[16] = {0};
  npy_intp zs[2 * PB_MAXDIMS] = {0};
  memcpy(zs + out->ndim, out->strides, sizeof(npy_intp) * (size_t)out->ndim);
  char *zb[2] = {(char *)zero, out->data};
  pb_iterate(out->ndim, out->shape, 2, zb, zs, pb_move_copy_loop(out->itemsize), NULL, 1);
  for_each_offset(&g, nlead, c->shape, out->data, out->strides, c->data, c->strides, false, fn,
                  ctx);
  return 0;
}

static const pb_kernel_def kernels[] = {
  {"unfold", unfold_kernel, 1, 1, sizeof(window_params)},
  {"fold", fold_kernel, 1, 1, sizeof(window_params)},
};
PB_KERNELS(kernels)
