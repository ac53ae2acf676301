/* Gather and scatter in XLA's general dimension-numbers form (JAX's lax.gather / lax.scatter*).
 *
 * Both walk the batch space (the index array without its trailing index-vector dimension) with
 * pb_iterate over three operands: the index vector, the "batched base" (the operand, or the
 * scatter output, advanced along its batching dimensions) and the window in the gather output
 * (or in the scatter updates). For each batch element the loop reads the index vector, resolves
 * the window start (clamped, or checked and filled/dropped) and moves one window, itself a
 * strided box. Every dimension number and size is validated here, so no index value can make a
 * kernel touch memory outside its arrays. Scatter is serial: updates apply in row-major order of
 * the batch space, then of the window, so duplicates resolve deterministically (set: last wins).
 *
 * Also defines the typed combining loops (y = y OP x) shared with fold (unfold.c). */
#include "move.h"
#include "ewise.h"
#include <string.h>

/* ---- combining loops: y = EXPR(a = y, b = x) ---- */

#define PB_COMBINE(NAME, T, EXPR)                                                                 \
  static PB_CLONES void NAME##_contig(const T *restrict x, T *restrict y, npy_intp n) {          \
    for (npy_intp i = 0; i < n; ++i) { const T a = y[i], b = x[i]; y[i] = (EXPR); }             \
  }                                                                                              \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                   \
    (void)prm;                                                                                   \
    if (s[0] == (npy_intp)sizeof(T) && s[1] == (npy_intp)sizeof(T)) {                            \
      NAME##_contig((const T *)p[0], (T *)p[1], n);                                              \
      return;                                                                                    \
    }                                                                                            \
    char *px = p[0], *py = p[1];                                                                 \
    for (npy_intp i = 0; i < n; ++i, px += s[0], py += s[1]) {                                   \
      const T a = *(const T *)py, b = *(const T *)px; *(T *)py = (EXPR);                         \
    }                                                                                            \
  }

/* NaN-propagating min/max (as lax.min/lax.max); on ties the current value stays. */
#define F_MIN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (b) < (a) ? (b) : (a))
#define F_MAX(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (b) > (a) ? (b) : (a))
#define I_MIN(a, b) ((b) < (a) ? (b) : (a))
#define I_MAX(a, b) ((b) > (a) ? (b) : (a))

#define PB_COMBINE_ARITH(SUF, T, MIN, MAX)                                                        \
  PB_COMBINE(add_##SUF, T, (T)(a + b)) PB_COMBINE(mul_##SUF, T, (T)(a * b))                      \
  PB_COMBINE(min_##SUF, T, MIN(a, b)) PB_COMBINE(max_##SUF, T, MAX(a, b))

PB_COMBINE_ARITH(i8, int8_t, I_MIN, I_MAX) PB_COMBINE_ARITH(i16, int16_t, I_MIN, I_MAX)
PB_COMBINE_ARITH(i32, int32_t, I_MIN, I_MAX) PB_COMBINE_ARITH(i64, int64_t, I_MIN, I_MAX)
PB_COMBINE_ARITH(u8, uint8_t, I_MIN, I_MAX) PB_COMBINE_ARITH(u16, uint16_t, I_MIN, I_MAX)
PB_COMBINE_ARITH(u32, uint32_t, I_MIN, I_MAX) PB_COMBINE_ARITH(u64, uint64_t, I_MIN, I_MAX)
/* float16 arithmetic is evaluated in float and rounded once on store, as NumPy does */
PB_COMBINE_ARITH(f16, pb_f16, F_MIN, F_MAX)
PB_COMBINE_ARITH(f32, float, F_MIN, F_MAX) PB_COMBINE_ARITH(f64, double, F_MIN, F_MAX)

/* bfloat16: compute in float32, round to nearest even; min/max return one of the operands. */
#define BF(v) pb_bf16_to_f32(v)
static inline pb_bf16 bf_pick_min(pb_bf16 a, pb_bf16 b) {
  float x = BF(a), y = BF(b);
  return x != x ? a : y != y ? b : y < x ? b : a;
}
static inline pb_bf16 bf_pick_max(pb_bf16 a, pb_bf16 b) {
  float x = BF(a), y = BF(b);
  return x != x ? a : y != y ? b : y > x ? b : a;
}
PB_COMBINE(add_bf16, pb_bf16, pb_f32_to_bf16(BF(a) + BF(b)))
PB_COMBINE(mul_bf16, pb_bf16, pb_f32_to_bf16(BF(a) * BF(b)))
PB_COMBINE(min_bf16, pb_bf16, bf_pick_min(a, b))
PB_COMBINE(max_bf16, pb_bf16, bf_pick_max(a, b))

/* complex: NumPy's multiplication formula; min/max compare (real, imag) lexicographically and
 * propagate a NaN in either part. */
#define PB_COMPLEX_OPS(SUF, T)                                                                    \
  static inline T cmul_##SUF(T a, T b) {                                                         \
    T r;                                                                                         \
    __real__ r = __real__ a * __real__ b - __imag__ a * __imag__ b;                              \
    __imag__ r = __real__ a * __imag__ b + __imag__ a * __real__ b;                              \
    return r;                                                                                    \
  }                                                                                              \
  static inline bool cnan_##SUF(T a) { return __real__ a != __real__ a || __imag__ a != __imag__ a; } \
  static inline bool cless_##SUF(T a, T b) {                                                     \
    return __real__ a < __real__ b || (__real__ a == __real__ b && __imag__ a < __imag__ b);     \
  }                                                                                              \
  static inline T cmin_##SUF(T a, T b) {                                                         \
    return cnan_##SUF(a) ? a : cnan_##SUF(b) ? b : cless_##SUF(b, a) ? b : a;                    \
  }                                                                                              \
  static inline T cmax_##SUF(T a, T b) {                                                         \
    return cnan_##SUF(a) ? a : cnan_##SUF(b) ? b : cless_##SUF(a, b) ? b : a;                    \
  }                                                                                              \
  PB_COMBINE(add_##SUF, T, a + b) PB_COMBINE(mul_##SUF, T, cmul_##SUF(a, b))                     \
  PB_COMBINE(min_##SUF, T, cmin_##SUF(a, b)) PB_COMBINE(max_##SUF, T, cmax_##SUF(a, b))
PB_COMPLEX_OPS(c64, pb_c64) PB_COMPLEX_OPS(c128, pb_c128)

PB_COMBINE(min_b, npy_bool, (npy_bool)(a & b)) PB_COMBINE(max_b, npy_bool, (npy_bool)(a | b))

#define ARITH_SLOTS(OP)                                                                           \
  [PB_I8] = OP##_i8, [PB_I16] = OP##_i16, [PB_I32] = OP##_i32, [PB_I64] = OP##_i64,              \
  [PB_U8] = OP##_u8, [PB_U16] = OP##_u16, [PB_U32] = OP##_u32, [PB_U64] = OP##_u64,              \
  [PB_F16] = OP##_f16, [PB_BF16] = OP##_bf16, [PB_F32] = OP##_f32, [PB_F64] = OP##_f64,          \
  [PB_C64] = OP##_c64, [PB_C128] = OP##_c128

static const pb_loop_fn combine_loops[PB_NCOMBINE][PB_NDT] = {
  [PB_COMBINE_ADD] = {ARITH_SLOTS(add)},
  [PB_COMBINE_MUL] = {ARITH_SLOTS(mul)},
  [PB_COMBINE_MIN] = {ARITH_SLOTS(min), [PB_BOOL] = min_b},
  [PB_COMBINE_MAX] = {ARITH_SLOTS(max), [PB_BOOL] = max_b},
};

pb_loop_fn pb_move_combine_loop(int op, PyArray_Descr *d) {
  if (op < 0 || op >= PB_NCOMBINE || PyDataType_REFCHK(d)) return NULL;
  if (op == PB_COMBINE_SET) return pb_move_copy_loop(PyDataType_ELSIZE(d));
  int slot = pb_dtype_slot(d);
  return slot >= 0 ? combine_loops[op][slot] : NULL;
}

/* ---- the window walk shared by gather and scatter ---- */

enum { MODE_CLIP = 0, MODE_FILL_OR_DROP = 1 };

/* How an index vector becomes a window start. */
typedef struct {
  int K, islot, mode;
  npy_intp ivs;                    /* byte stride along the index vector */
  npy_intp hi[PB_MAXDIMS];         /* start component k must lie in [0, hi[k]] */
  npy_intp step[PB_MAXDIMS];       /* byte stride of the operand dimension it moves */
} gs_index;

typedef struct {
  gs_index X;
  int wnd;                         /* window dimensions of size > 1 */
  npy_intp wshape[PB_MAXDIMS];
  npy_intp wstr[2 * PB_MAXDIMS];   /* (source, destination) strides, pb_iterate layout */
  npy_intp fstr[2 * PB_MAXDIMS];   /* the same with a zero-stride source: a gather fill */
  pb_loop_fn move;
  char *fill;                      /* gather FILL: the fill element (else zero_elem) */
  char zero_elem[16];
  bool scatter;
} gs_plan;

/* An index value as int64; uint64 values past INT64_MAX saturate (they are out of range). */
static inline int64_t load_index(const char *p, int slot) {
  switch (slot) {
    case PB_I8: return *(const int8_t *)p;
    case PB_I16: return *(const int16_t *)p;
    case PB_I32: return *(const int32_t *)p;
    case PB_I64: return *(const int64_t *)p;
    case PB_U8: return *(const uint8_t *)p;
    case PB_U16: return *(const uint16_t *)p;
    case PB_U32: return *(const uint32_t *)p;
    default: {
      uint64_t v = *(const uint64_t *)p;
      return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    }
  }
}

/* The byte offset of the window start, or false when it is out of range in FILL_OR_DROP. */
static inline bool window_start(const gs_index *X, const char *pi, npy_intp *off) {
  npy_intp o = 0;
  for (int k = 0; k < X->K; ++k, pi += X->ivs) {
    int64_t v = load_index(pi, X->islot);
    if (v < 0 || v > X->hi[k]) {
      if (X->mode != MODE_CLIP) return false;
      v = v < 0 ? 0 : X->hi[k];
    }
    o += (npy_intp)v * X->step[k];
  }
  *off = o;
  return true;
}

static void move_window(const gs_plan *P, char *src, char *dst, const npy_intp *str) {
  char *b[2] = {src, dst};
  if (P->wnd <= 1)
    P->move(b, str, P->wshape[0], NULL);
  else
    pb_iterate(P->wnd, P->wshape, 2, b, str, P->move, NULL, 1);
}

/* operands: index vector, batched base (operand / scatter output), window (output / updates) */
static void gs_rows(char **p, const npy_intp *s, npy_intp n, const void *prm) {
  const gs_plan *P = prm;
  char *pi = p[0], *pb = p[1], *pw = p[2];
  for (npy_intp i = 0; i < n; ++i, pi += s[0], pb += s[1], pw += s[2]) {
    npy_intp off;
    bool in = window_start(&P->X, pi, &off);
    if (P->scatter) {
      if (in) move_window(P, pw, pb + off, P->wstr);
    } else if (in) {
      move_window(P, pb + off, pw, P->wstr);
    } else {
      move_window(P, P->fill, pw, P->fstr);
    }
  }
}

/* The common case of one-element windows (NumPy-style element indexing): elements move by
 * size without the indirect call of move_window. Scatter combiners still call their loop. */
typedef struct { char b[16]; } elem16;
#define PB_ELEMENT_ROWS(NAME, T)                                                                  \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                   \
    const gs_plan *P = prm;                                                                      \
    /* a private copy of the index plan: stores through T* could otherwise alias its fields   \
     * and force reloads per element */                                                          \
    const gs_index X = P->X;                                                                     \
    const bool scatter = P->scatter;                                                             \
    const T fill = *(const T *)P->fill;                                                          \
    char *pi = p[0], *pb = p[1], *pw = p[2];                                                     \
    for (npy_intp i = 0; i < n; ++i, pi += s[0], pb += s[1], pw += s[2]) {                       \
      npy_intp off;                                                                              \
      bool in = window_start(&X, pi, &off);                                                      \
      if (scatter) {                                                                             \
        if (in) *(T *)(pb + off) = *(const T *)pw;                                               \
      } else {                                                                                   \
        *(T *)pw = in ? *(const T *)(pb + off) : fill;                                           \
      }                                                                                          \
    }                                                                                            \
  }
PB_ELEMENT_ROWS(element_rows1, uint8_t) PB_ELEMENT_ROWS(element_rows2, uint16_t)
PB_ELEMENT_ROWS(element_rows4, uint32_t) PB_ELEMENT_ROWS(element_rows8, uint64_t)
PB_ELEMENT_ROWS(element_rows16, elem16)

/* One-element scatter windows with a combiner: one direct call of the combining loop each. */
static void element_combine_rows(char **p, const npy_intp *s, npy_intp n, const void *prm) {
  const gs_plan *P = prm;
  const gs_index X = P->X;
  const pb_loop_fn move = P->move;
  static const npy_intp zero[2] = {0, 0};
  char *pi = p[0], *pb = p[1], *pw = p[2];
  for (npy_intp i = 0; i < n; ++i, pi += s[0], pb += s[1], pw += s[2]) {
    npy_intp off;
    if (window_start(&X, pi, &off)) {
      char *b[2] = {pw, pb + off};
      move(b, zero, 1, NULL);
    }
  }
}

/* The batch loop for a plan: element moves when the window is one element and the move is a
 * plain copy (gather, scatter-set), else the general window walk. */
static pb_loop_fn rows_for(const gs_plan *P, npy_intp itemsize, bool plain_copy) {
  if (P->wnd == 0 && plain_copy) {
    switch (itemsize) {
      case 1: return element_rows1; case 2: return element_rows2; case 4: return element_rows4;
      case 8: return element_rows8; case 16: return element_rows16;
    }
  }
  return P->wnd == 0 && P->scatter ? element_combine_rows : gs_rows;
}

/* The window: its dimensions of size > 1 with source and destination byte strides, in the
 * pb_iterate layout (all source strides, then all destination strides). A window of one
 * element is walked as one dimension of size 1 with zero strides. */
static void set_window(gs_plan *P, int n, const npy_intp *size, const npy_intp *ss,
                       const npy_intp *ds) {
  npy_intp sh[PB_MAXDIMS], src[PB_MAXDIMS], dst[PB_MAXDIMS];
  int w = 0;
  for (int j = 0; j < n; ++j)
    if (size[j] != 1) {
      sh[w] = size[j];
      src[w] = ss[j];
      dst[w++] = ds[j];
    }
  P->wnd = w;
  int m = w > 0 ? w : 1;
  for (int d = 0; d < m; ++d) {
    P->wshape[d] = w ? sh[d] : 1;
    P->wstr[d] = w ? src[d] : 0;
    P->wstr[m + d] = P->fstr[m + d] = w ? dst[d] : 0;
    P->fstr[d] = 0;
  }
}

/* Shared argument checks: the index array and its batch dimensions. */
static PyArrayObject *index_arg(PyObject *o, const char *K, const char *arg, int *slot) {
  PyArrayObject *idx = pb_arg_array(o, K, arg);
  if (!idx) return NULL;
  *slot = pb_dtype_slot(PyArray_DESCR(idx));
  if (*slot < PB_I8 || *slot > PB_U64) {
    PyErr_Format(PyExc_TypeError, "%s: argument '%s' must have an integer dtype, got %S", K, arg,
                 (PyObject *)PyArray_DESCR(idx));
    return NULL;
  }
  if (PyArray_NDIM(idx) < 1) {
    PyErr_Format(PyExc_ValueError, "%s: argument '%s' must have at least one dimension (the "
                 "index vector is its last)", K, arg);
    return NULL;
  }
  return idx;
}

static bool disjoint(const int *a, int na, const int *b, int nb, const char *K, const char *an,
                     const char *bn) {
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j)
      if (a[i] == b[j]) {
        PyErr_Format(PyExc_ValueError, "%s: arguments '%s' and '%s' share dimension %d", K, an,
                     bn, a[i]);
        return false;
      }
  return true;
}

static bool member(int d, const int *set, int n) {
  for (int i = 0; i < n; ++i)
    if (set[i] == d) return true;
  return false;
}

/* The batching pairs: index dimension t advances the base by the operand's stride along the
 * paired operand batching dimension. */
static bool batching_strides(PyArrayObject *x, PyArrayObject *idx, const int *obd,
                             const int *ibd, int nbd, const npy_intp *base_strides,
                             npy_intp *out, const char *K) {
  int nb = PyArray_NDIM(idx) - 1;
  for (int t = 0; t < nb; ++t) out[t] = 0;
  for (int i = 0; i < nbd; ++i) {
    if (PyArray_SHAPE(idx)[ibd[i]] != PyArray_SHAPE(x)[obd[i]]) {
      PyErr_Format(PyExc_ValueError, "%s: batching dimension %d of the operand (size %zd) and "
                   "%d of the indices (size %zd) differ", K, obd[i],
                   (Py_ssize_t)PyArray_SHAPE(x)[obd[i]], ibd[i],
                   (Py_ssize_t)PyArray_SHAPE(idx)[ibd[i]]);
      return false;
    }
    out[ibd[i]] = base_strides[obd[i]];
  }
  return true;
}

static void run_batches(gs_plan *P, PyArrayObject *idx, char *bases[3], const npy_intp *bstr1,
                        const npy_intp *bstr2, npy_intp work, pb_loop_fn rows) {
  int nb = PyArray_NDIM(idx) - 1;
  npy_intp strides[3 * PB_MAXDIMS];
  for (int t = 0; t < nb; ++t) {
    strides[t] = PyArray_STRIDES(idx)[t];
    strides[nb + t] = bstr1[t];
    strides[2 * nb + t] = bstr2[t];
  }
  int threads = P->scatter ? 1 : pb_threads_for(work, 262144);
  pb_move_run(nb, PyArray_SHAPE(idx), 3, bases, strides, rows, P, work, threads);
}

/* ---- gather ---- */

/* gather(operand, indices, offset_dims, collapsed_slice_dims, start_index_map,
 *        operand_batching_dims, start_indices_batching_dims, slice_sizes, mode, fill) */
static PyObject *gather(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  const char *K = "gather";
  if (nargs != 10) {
    PyErr_SetString(PyExc_TypeError, "gather: expected (operand, indices, offset_dims, "
                    "collapsed_slice_dims, start_index_map, operand_batching_dims, "
                    "start_indices_batching_dims, slice_sizes, mode, fill)");
    return NULL;
  }
  gs_plan P;
  memset(&P, 0, sizeof P);
  P.fill = P.zero_elem; /* the element loops read a fill even where none is used */
  PyArrayObject *x = pb_arg_array(args[0], K, "operand");
  if (!x) return NULL;
  PyArrayObject *idx = index_arg(args[1], K, "indices", &P.X.islot);
  if (!idx || !(P.move = pb_move_loop_for(x, K, "operand"))) return NULL;
  int nd = PyArray_NDIM(x), nb = PyArray_NDIM(idx) - 1;
  const npy_intp *xs = PyArray_SHAPE(x);
  npy_intp sizes[PB_MAXDIMS];
  int offs[PB_MAXDIMS], coll[PB_MAXDIMS], sim[PB_MAXDIMS], obd[PB_MAXDIMS], ibd[PB_MAXDIMS];
  int nsz = pb_move_ints(args[7], sizes, PB_MAXDIMS, K, "slice_sizes");
  if (nsz < 0) return NULL;
  if (nsz != nd) {
    PyErr_Format(PyExc_ValueError, "gather: argument 'slice_sizes' must have %d entries, got %d",
                 nd, nsz);
    return NULL;
  }
  for (int d = 0; d < nd; ++d)
    if (sizes[d] < 0 || sizes[d] > xs[d]) {
      PyErr_Format(PyExc_ValueError, "gather: slice size %zd of dimension %d is outside [0, %zd]",
                   (Py_ssize_t)sizes[d], d, (Py_ssize_t)xs[d]);
      return NULL;
    }
  int ncoll = pb_move_dims(args[3], coll, nd, true, K, "collapsed_slice_dims");
  int nobd = ncoll < 0 ? -1 : pb_move_dims(args[5], obd, nd, true, K, "operand_batching_dims");
  int nibd = nobd < 0 ? -1 : pb_move_dims(args[6], ibd, nb, false, K,
                                          "start_indices_batching_dims");
  P.X.K = nibd < 0 ? -1 : pb_move_dims(args[4], sim, nd, false, K, "start_index_map");
  if (P.X.K < 0) return NULL;
  if (P.X.K != PyArray_SHAPE(idx)[nb] || nibd != nobd) {
    PyErr_SetString(PyExc_ValueError, "gather: 'start_index_map' must have one entry per index "
                    "vector element and the two batching tuples equal lengths");
    return NULL;
  }
  if (!disjoint(coll, ncoll, obd, nobd, K, "collapsed_slice_dims", "operand_batching_dims") ||
      !disjoint(sim, P.X.K, obd, nobd, K, "start_index_map", "operand_batching_dims"))
    return NULL;
  for (int i = 0; i < ncoll; ++i)
    if (sizes[coll[i]] != 1) {
      PyErr_Format(PyExc_ValueError, "gather: collapsed dimension %d must have slice size 1",
                   coll[i]);
      return NULL;
    }
  for (int i = 0; i < nobd; ++i)
    if (sizes[obd[i]] != (xs[obd[i]] > 0 ? 1 : 0)) {
      PyErr_Format(PyExc_ValueError, "gather: batching dimension %d must have slice size 1",
                   obd[i]);
      return NULL;
    }
  int noff = nd - ncoll - nobd, ond = noff + nb;
  if (ond > PB_MAXDIMS) {
    PyErr_SetString(PyExc_ValueError, "gather: the output would have too many dimensions");
    return NULL;
  }
  int n_offs = pb_move_dims(args[2], offs, ond, true, K, "offset_dims");
  if (n_offs < 0) return NULL;
  if (n_offs != noff) {
    PyErr_Format(PyExc_ValueError, "gather: 'offset_dims' must have %d entries (operand rank "
                 "minus collapsed and batching dimensions), got %d", noff, n_offs);
    return NULL;
  }
  long mode = PyLong_AsLong(args[8]);
  if (mode == -1 && PyErr_Occurred()) return NULL;
  if (mode != MODE_CLIP && mode != MODE_FILL_OR_DROP) {
    PyErr_SetString(PyExc_ValueError, "gather: argument 'mode' must be 0 (clip) or 1 (fill)");
    return NULL;
  }
  P.X.mode = (int)mode;
  if (mode == MODE_FILL_OR_DROP) {
    PyArrayObject *f = pb_arg_array(args[9], K, "fill");
    if (!f) return NULL;
    if (PyArray_NDIM(f) != 0 || !PyArray_EquivTypes(PyArray_DESCR(f), PyArray_DESCR(x))) {
      PyErr_SetString(PyExc_TypeError, "gather: argument 'fill' must be a 0-d array of the "
                      "operand's dtype");
      return NULL;
    }
    P.fill = PyArray_BYTES(f);
  }
  /* output: window sizes at offset_dims (operand order), batch sizes elsewhere */
  int wd[PB_MAXDIMS], nwd = 0, bpos[PB_MAXDIMS], nbpos = 0;
  for (int d = 0; d < nd; ++d)
    if (!member(d, coll, ncoll) && !member(d, obd, nobd)) wd[nwd++] = d;
  npy_intp oshape[PB_MAXDIMS];
  for (int o = 0, j = 0; o < ond; ++o) {
    if (j < noff && offs[j] == o) {
      oshape[o] = sizes[wd[j++]];
    } else {
      oshape[o] = PyArray_SHAPE(idx)[nbpos];
      bpos[nbpos++] = o;
    }
  }
  npy_intp bstr1[PB_MAXDIMS];
  if (!batching_strides(x, idx, obd, ibd, nobd, PyArray_STRIDES(x), bstr1, K)) return NULL;
  PyArray_Descr *descr = PyArray_DESCR(x);
  Py_INCREF(descr);
  PyArrayObject *out = pb_new_array(ond, oshape, descr);
  if (!out || PyArray_SIZE(out) == 0) return (PyObject *)out;
  const npy_intp *os = PyArray_STRIDES(out);
  for (int k = 0; k < P.X.K; ++k) {
    P.X.hi[k] = xs[sim[k]] - sizes[sim[k]];
    P.X.step[k] = PyArray_STRIDES(x)[sim[k]];
  }
  P.X.ivs = PyArray_STRIDES(idx)[nb];
  npy_intp wsz[PB_MAXDIMS], wss[PB_MAXDIMS], wds[PB_MAXDIMS];
  for (int j = 0; j < nwd; ++j) {
    wsz[j] = sizes[wd[j]];
    wss[j] = PyArray_STRIDES(x)[wd[j]];
    wds[j] = os[offs[j]];
  }
  set_window(&P, nwd, wsz, wss, wds);
  npy_intp bstr2[PB_MAXDIMS];
  for (int t = 0; t < nb; ++t) bstr2[t] = os[bpos[t]];
  char *bases[3] = {PyArray_BYTES(idx), PyArray_BYTES(x), PyArray_BYTES(out)};
  run_batches(&P, idx, bases, bstr1, bstr2, PyArray_SIZE(out),
              rows_for(&P, PyDataType_ELSIZE(descr), true));
  return (PyObject *)out;
}

/* ---- scatter ---- */

/* scatter(operand, indices, updates, update_window_dims, inserted_window_dims,
 *         scatter_dims_to_operand_dims, operand_batching_dims, scatter_indices_batching_dims,
 *         mode, combiner) -> a copy of operand with the updates combined in */
static PyObject *scatter(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  const char *K = "scatter";
  if (nargs != 10) {
    PyErr_SetString(PyExc_TypeError, "scatter: expected (operand, indices, updates, "
                    "update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, "
                    "operand_batching_dims, scatter_indices_batching_dims, mode, combiner)");
    return NULL;
  }
  gs_plan P;
  memset(&P, 0, sizeof P);
  P.fill = P.zero_elem; /* the element loops read a fill even where none is used */
  P.scatter = true;
  PyArrayObject *x = pb_arg_array(args[0], K, "operand");
  if (!x) return NULL;
  PyArrayObject *idx = index_arg(args[1], K, "indices", &P.X.islot);
  PyArrayObject *u = idx ? pb_arg_array(args[2], K, "updates") : NULL;
  if (!u) return NULL;
  if (!PyArray_EquivTypes(PyArray_DESCR(x), PyArray_DESCR(u))) {
    PyErr_Format(PyExc_TypeError, "scatter: argument 'updates' has dtype %S, expected %S",
                 (PyObject *)PyArray_DESCR(u), (PyObject *)PyArray_DESCR(x));
    return NULL;
  }
  long comb = PyLong_AsLong(args[9]);
  if (comb == -1 && PyErr_Occurred()) return NULL;
  if (!(P.move = pb_move_combine_loop((int)comb, PyArray_DESCR(x)))) {
    PyErr_Format(PyExc_TypeError, "scatter: combiner %ld is not supported for dtype %S", comb,
                 (PyObject *)PyArray_DESCR(x));
    return NULL;
  }
  int nd = PyArray_NDIM(x), nb = PyArray_NDIM(idx) - 1, und = PyArray_NDIM(u);
  const npy_intp *xs = PyArray_SHAPE(x), *us = PyArray_SHAPE(u);
  int uwd[PB_MAXDIMS], iwd[PB_MAXDIMS], sdod[PB_MAXDIMS], obd[PB_MAXDIMS], ibd[PB_MAXDIMS];
  int nuwd = pb_move_dims(args[3], uwd, und, true, K, "update_window_dims");
  int niwd = nuwd < 0 ? -1 : pb_move_dims(args[4], iwd, nd, true, K, "inserted_window_dims");
  int nobd = niwd < 0 ? -1 : pb_move_dims(args[6], obd, nd, true, K, "operand_batching_dims");
  int nibd = nobd < 0 ? -1 : pb_move_dims(args[7], ibd, nb, false, K,
                                          "scatter_indices_batching_dims");
  P.X.K = nibd < 0 ? -1 : pb_move_dims(args[5], sdod, nd, false, K,
                                     "scatter_dims_to_operand_dims");
  if (P.X.K < 0) return NULL;
  if (P.X.K != PyArray_SHAPE(idx)[nb] || nibd != nobd || und != nb + nuwd ||
      nuwd + niwd + nobd != nd) {
    PyErr_SetString(PyExc_ValueError, "scatter: the dimension numbers do not fit the shapes of "
                    "operand, indices and updates");
    return NULL;
  }
  if (!disjoint(iwd, niwd, obd, nobd, K, "inserted_window_dims", "operand_batching_dims") ||
      !disjoint(sdod, P.X.K, obd, nobd, K, "scatter_dims_to_operand_dims", "operand_batching_dims"))
    return NULL;
  /* window size along every operand dimension: 1 for inserted and batching dimensions */
  npy_intp wsize[PB_MAXDIMS];
  int wd[PB_MAXDIMS], nwd = 0;
  for (int d = 0; d < nd; ++d) {
    wsize[d] = 1;
    if (member(d, iwd, niwd) || member(d, obd, nobd)) continue;
    wsize[d] = us[uwd[nwd]];
    if (wsize[d] > xs[d]) {
      PyErr_Format(PyExc_ValueError, "scatter: update window dimension %d (size %zd) exceeds "
                   "operand dimension %d (size %zd)", uwd[nwd], (Py_ssize_t)wsize[d], d,
                   (Py_ssize_t)xs[d]);
      return NULL;
    }
    wd[nwd++] = d;
  }
  int spos[PB_MAXDIMS];
  for (int d = 0, t = 0; d < und; ++d) {
    if (member(d, uwd, nuwd)) continue;
    if (us[d] != PyArray_SHAPE(idx)[t]) {
      PyErr_Format(PyExc_ValueError, "scatter: update scatter dimension %d has size %zd, but "
                   "indices dimension %d has size %zd", d, (Py_ssize_t)us[d], t,
                   (Py_ssize_t)PyArray_SHAPE(idx)[t]);
      return NULL;
    }
    spos[t++] = d;
  }
  long mode = PyLong_AsLong(args[8]);
  if (mode == -1 && PyErr_Occurred()) return NULL;
  if (mode != MODE_CLIP && mode != MODE_FILL_OR_DROP) {
    PyErr_SetString(PyExc_ValueError, "scatter: argument 'mode' must be 0 (clip) or 1 (drop)");
    return NULL;
  }
  P.X.mode = (int)mode;
  npy_intp bstr1[PB_MAXDIMS];
  PyArrayObject *out = pb_copy(x);
  if (!out) return NULL;
  const npy_intp *os = PyArray_STRIDES(out);
  if (!batching_strides(x, idx, obd, ibd, nobd, os, bstr1, K)) {
    Py_DECREF(out);
    return NULL;
  }
  if (PyArray_SIZE(out) == 0 || PyArray_SIZE(u) == 0) return (PyObject *)out;
  for (int k = 0; k < P.X.K; ++k) {
    P.X.hi[k] = xs[sdod[k]] - wsize[sdod[k]]; /* >= 0: the operand is not empty */
    P.X.step[k] = os[sdod[k]];
  }
  P.X.ivs = PyArray_STRIDES(idx)[nb];
  npy_intp wsz[PB_MAXDIMS], wss[PB_MAXDIMS], wds[PB_MAXDIMS];
  for (int j = 0; j < nwd; ++j) {
    wsz[j] = wsize[wd[j]];
    wss[j] = PyArray_STRIDES(u)[uwd[j]];
    wds[j] = os[wd[j]];
  }
  set_window(&P, nwd, wsz, wss, wds);
  npy_intp bstr2[PB_MAXDIMS];
  for (int t = 0; t < nb; ++t) bstr2[t] = PyArray_STRIDES(u)[spos[t]];
  char *bases[3] = {PyArray_BYTES(idx), PyArray_BYTES(out), PyArray_BYTES(u)};
  run_batches(&P, idx, bases, bstr1, bstr2, PyArray_SIZE(u),
              rows_for(&P, PyArray_ITEMSIZE(x), comb == PB_COMBINE_SET));
  return (PyObject *)out;
}

static PyMethodDef methods[] = {
  {"gather", (PyCFunction)(void (*)(void))gather, METH_FASTCALL,
   "gather(operand, indices, offset_dims, collapsed_slice_dims, start_index_map, "
   "operand_batching_dims, start_indices_batching_dims, slice_sizes, mode, fill): XLA gather "
   "with the index vector last; mode 0 clamps, 1 fills out-of-range windows with `fill`."},
  {"scatter", (PyCFunction)(void (*)(void))scatter, METH_FASTCALL,
   "scatter(operand, indices, updates, update_window_dims, inserted_window_dims, "
   "scatter_dims_to_operand_dims, operand_batching_dims, scatter_indices_batching_dims, mode, "
   "combiner): XLA scatter; mode 0 clamps, 1 drops out-of-range windows; combiner 0 set, 1 add, "
   "2 mul, 3 min, 4 max."},
  {NULL, NULL, 0, NULL}};

int pb_register_gather(PyObject *m) {
  if (PyModule_AddFunctions(m, methods) < 0) return -1;
  PyObject *comb = Py_BuildValue("{sisisisisi}", "set", PB_COMBINE_SET, "add", PB_COMBINE_ADD,
                                 "mul", PB_COMBINE_MUL, "min", PB_COMBINE_MIN, "max",
                                 PB_COMBINE_MAX);
  return comb ? PyModule_AddObject(m, "SCATTER_COMBINERS", comb) : -1;
}
