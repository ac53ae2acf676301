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
#include <string.h>

typedef struct {
  int K;
  npy_intp k[PB_MAXDIMS], s[PB_MAXDIMS], d[PB_MAXDIMS], lo[PB_MAXDIMS], hi[PB_MAXDIMS];
  npy_intp size[PB_MAXDIMS]; /* spatial sizes of the (unpadded) image */
  npy_intp L[PB_MAXDIMS];    /* window positions per spatial dimension */
  npy_intp nk, nl;           /* prod(k), prod(L) */
} geom;

/* Parses (kernel_size, stride, dilation, low, high) against the image's spatial `size`. */
static bool parse_geom(PyObject *const *args, const npy_intp *size, int K, geom *g,
                       const char *kernel) {
  static const char *names[5] = {"kernel_size", "stride", "dilation", "padding_low",
                                 "padding_high"};
  npy_intp *dst[5] = {g->k, g->s, g->d, g->lo, g->hi};
  g->K = K;
  for (int a = 0; a < 5; ++a) {
    int n = pb_move_ints(args[a], dst[a], PB_MAXDIMS, kernel, names[a]);
    if (n < 0) return false;
    if (n != K) {
      PyErr_Format(PyExc_ValueError, "%s: argument '%s' must have %d entries, got %d", kernel,
                   names[a], K, n);
      return false;
    }
    for (int i = 0; i < K; ++i)
      if (dst[a][i] < (a < 3 ? 1 : 0)) {
        PyErr_Format(PyExc_ValueError, "%s: argument '%s' must hold %s ints, got %zd", kernel,
                     names[a], a < 3 ? "positive" : "non-negative", (Py_ssize_t)dst[a][i]);
        return false;
      }
  }
  g->nk = g->nl = 1;
  for (int i = 0; i < K; ++i) {
    npy_intp padded, extent;
    g->size[i] = size[i];
    if (__builtin_add_overflow(size[i], g->lo[i], &padded) ||
        __builtin_add_overflow(padded, g->hi[i], &padded) ||
        __builtin_mul_overflow(g->d[i], g->k[i] - 1, &extent) || extent >= padded) {
      PyErr_Format(PyExc_ValueError, "%s: spatial dimension %d of size %zd (padded by %zd, %zd) "
                   "is smaller than the dilated kernel extent", kernel, i, (Py_ssize_t)size[i],
                   (Py_ssize_t)g->lo[i], (Py_ssize_t)g->hi[i]);
      return false;
    }
    g->L[i] = (padded - extent - 1) / g->s[i] + 1;
    if (__builtin_mul_overflow(g->nk, g->k[i], &g->nk) ||
        __builtin_mul_overflow(g->nl, g->L[i], &g->nl)) {
      PyErr_Format(PyExc_ValueError, "%s: the window count overflows", kernel);
      return false;
    }
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
                            bool img_is_src, pb_loop_fn fn) {
  offsets_plan U = {g, fn, img_is_src, img_str + nlead, col_str + nlead, {0}};
  grid_strides(g, col_str[nlead + 1], U.grid);
  npy_intp strides[2 * PB_MAXDIMS], work = g->nk * g->nl;
  for (int d = 0; d < nlead; ++d) {
    strides[d] = img_str[d];
    strides[nlead + d] = col_str[d];
    work *= lead[d];
  }
  char *base[2] = {img, col};
  pb_move_run(nlead, lead, 2, base, strides, offset_boxes, &U, work,
              pb_threads_for(work, 262144));
}

/* unfold(x, kernel_size, stride, dilation, padding_low, padding_high) */
static PyObject *unfold(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  const char *KN = "unfold";
  if (nargs != 6 || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "unfold: expected (x, kernel_size, stride, dilation, "
                    "padding_low, padding_high)");
    return NULL;
  }
  PyArrayObject *x = pb_arg_array(args[0], KN, "x");
  if (!x) return NULL;
  pb_loop_fn fn = pb_move_loop_for(x, KN, "x");
  if (!fn) return NULL;
  int K = (int)PyTuple_GET_SIZE(args[1]), nd = PyArray_NDIM(x), nlead = nd - K;
  if (K < 1 || nlead < 0 || nlead + 2 > PB_MAXDIMS) {
    PyErr_Format(PyExc_ValueError, "unfold: 'kernel_size' must have between 1 and %d entries "
                 "(the rank of x), got %d", nd, K);
    return NULL;
  }
  geom g;
  if (!parse_geom(args + 1, PyArray_SHAPE(x) + nlead, K, &g, KN)) return NULL;
  npy_intp oshape[PB_MAXDIMS];
  memcpy(oshape, PyArray_SHAPE(x), sizeof(npy_intp) * nlead);
  oshape[nlead] = g.nk;
  oshape[nlead + 1] = g.nl;
  PyArray_Descr *descr = PyArray_DESCR(x);
  Py_INCREF(descr);
  PyArrayObject *out = pb_new_array(nlead + 2, oshape, descr);
  if (!out || PyArray_SIZE(out) == 0) return (PyObject *)out;
  for_each_offset(&g, nlead, oshape, PyArray_BYTES(x), PyArray_STRIDES(x), PyArray_BYTES(out),
                  PyArray_STRIDES(out), true, fn);
  return (PyObject *)out;
}

/* fold(cols, output_size, kernel_size, stride, dilation, padding_low, padding_high) */
static PyObject *fold(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  const char *KN = "fold";
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError, "fold: expected (cols, output_size, kernel_size, stride, "
                    "dilation, padding_low, padding_high)");
    return NULL;
  }
  PyArrayObject *c = pb_arg_array(args[0], KN, "cols");
  if (!c) return NULL;
  PyArray_Descr *descr = PyArray_DESCR(c);
  /* overlapping windows add up; for bool, "adding" is or */
  pb_loop_fn fn = pb_move_combine_loop(
      pb_dtype_slot(descr) == PB_BOOL ? PB_COMBINE_MAX : PB_COMBINE_ADD, descr);
  if (!fn) {
    PyErr_Format(PyExc_TypeError, "fold: argument 'cols' has dtype %S, which is not supported",
                 (PyObject *)descr);
    return NULL;
  }
  npy_intp size[PB_MAXDIMS];
  int K = pb_move_ints(args[1], size, PB_MAXDIMS, KN, "output_size");
  if (K < 0) return NULL;
  int nlead = PyArray_NDIM(c) - 2;
  if (K < 1 || nlead < 0 || nlead + K > PB_MAXDIMS) {
    PyErr_SetString(PyExc_ValueError, "fold: 'cols' must be (lead..., prod(kernel_size), L) and "
                    "'output_size' non-empty");
    return NULL;
  }
  for (int i = 0; i < K; ++i)
    if (size[i] < 0) {
      PyErr_SetString(PyExc_ValueError, "fold: negative entry in 'output_size'");
      return NULL;
    }
  geom g;
  if (!parse_geom(args + 2, size, K, &g, KN)) return NULL;
  const npy_intp *cs = PyArray_SHAPE(c);
  if (cs[nlead] != g.nk || cs[nlead + 1] != g.nl) {
    PyErr_Format(PyExc_ValueError, "fold: 'cols' must end in (%zd, %zd) for this geometry, got "
                 "(%zd, %zd)", (Py_ssize_t)g.nk, (Py_ssize_t)g.nl, (Py_ssize_t)cs[nlead],
                 (Py_ssize_t)cs[nlead + 1]);
    return NULL;
  }
  npy_intp oshape[PB_MAXDIMS];
  memcpy(oshape, cs, sizeof(npy_intp) * nlead);
  memcpy(oshape + nlead, size, sizeof(npy_intp) * K);
  Py_INCREF(descr);
  PyArrayObject *out = pb_new_array(nlead + K, oshape, descr);
  if (!out || PyArray_SIZE(out) == 0) return (PyObject *)out;
  memset(PyArray_BYTES(out), 0, (size_t)PyArray_NBYTES(out)); /* 0 bits: zero in every dtype */
  for_each_offset(&g, nlead, cs, PyArray_BYTES(out), PyArray_STRIDES(out), PyArray_BYTES(c),
                  PyArray_STRIDES(c), false, fn);
  return (PyObject *)out;
}

static PyMethodDef methods[] = {
  {"unfold", (PyCFunction)(void (*)(void))unfold, METH_FASTCALL,
   "unfold(x, kernel_size, stride, dilation, padding_low, padding_high): sliding windows of "
   "the last K dimensions as (lead..., prod(kernel_size), L), zero padded (im2col)."},
  {"fold", (PyCFunction)(void (*)(void))fold, METH_FASTCALL,
   "fold(cols, output_size, kernel_size, stride, dilation, padding_low, padding_high): the "
   "transpose of unfold, summing overlapping windows (col2im)."},
  {NULL, NULL, 0, NULL}};

int pb_register_unfold(PyObject *m) { return PyModule_AddFunctions(m, methods); }
