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
#include "kernel_abi.h"
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
  if (PyDataType_REFCHK(d)) return NULL;
  return pb_move_combine_loop_slot(op, pb_dtype_slot(d), PyDataType_ELSIZE(d));
}

pb_loop_fn pb_move_combine_loop_slot(int op, int slot, npy_intp itemsize) {
  if (op < 0 || op >= PB_NCOMBINE) return NULL;
  if (op == PB_COMBINE_SET) return pb_move_copy_loop(itemsize);
  return slot >= 0 && slot < PB_NDT ? combine_loops[op][slot] : NULL;
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

/* ---- the kernels (pb_kernel.h). Their primitives (primitives/indexing.py) check every
 * operand and dimension number when bound, with messages naming the argument; the kernels check
 * again everything memory safety needs, so no params blob and no index value can make them
 * touch memory outside their operands. ---- */

#define GS_DIMS PB_MAXDIMS

/* gather's params: dimension numbers, slice sizes, mode and the fill element (FILL mode) */
typedef struct {
  int64_t slice_sizes[GS_DIMS];
  int32_t mode, n_offset, n_collapsed, n_start_index_map, n_obd, n_ibd;
  int32_t offset_dims[GS_DIMS], collapsed[GS_DIMS], start_index_map[GS_DIMS], obd[GS_DIMS],
      ibd[GS_DIMS];
  uint8_t fill[16];
} gather_params;

/* scatter's params: dimension numbers and mode (the combiner is the kernel's) */
typedef struct {
  int32_t mode, n_uwd, n_iwd, n_sdod, n_obd, n_ibd;
  int32_t uwd[GS_DIMS], iwd[GS_DIMS], sdod[GS_DIMS], obd[GS_DIMS], ibd[GS_DIMS];
} scatter_params;

/* n distinct dimension numbers in [0, limit) (ascending when sorted) copied to out */
static bool dims_ok(const int32_t *v, int32_t n, int limit, bool sorted, int *out) {
  if (n < 0 || n > GS_DIMS) return false;
  for (int i = 0; i < n; ++i) {
    if (v[i] < 0 || v[i] >= limit || (sorted && i && v[i] <= v[i - 1])) return false;
    for (int j = 0; j < i; ++j)
      if (v[j] == v[i]) return false;
    out[i] = v[i];
  }
  return true;
}

static bool disjoint(const int *a, int na, const int *b, int nb) {
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j)
      if (a[i] == b[j]) return false;
  return true;
}

static bool member(int d, const int *set, int n) {
  for (int i = 0; i < n; ++i)
    if (set[i] == d) return true;
  return false;
}

static int bad_params(pb_kernel_ctx *ctx, const char *what) {
  return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "%s", what);
}

/* The index operand: an integer array with at least one dimension (its last: index vectors). */
static bool index_ok(const pb_operand *idx) {
  return idx->dtype >= PB_I8 && idx->dtype <= PB_U64 && idx->ndim >= 1;
}

/* The batching pairs: index dimension ibd[i] advances the base by base_strides[obd[i]]; the
 * paired sizes must agree. */
static bool batching_strides(const pb_operand *x, const pb_operand *idx, const int *obd,
                             const int *ibd, int nbd, const int64_t *base_strides,
                             npy_intp *out) {
  for (int t = 0; t < idx->ndim - 1; ++t) out[t] = 0;
  for (int i = 0; i < nbd; ++i) {
    if (idx->shape[ibd[i]] != x->shape[obd[i]]) return false;
    out[ibd[i]] = base_strides[obd[i]];
  }
  return true;
}

static void run_batches(gs_plan *P, const pb_operand *idx, char *bases[3], const npy_intp *bstr1,
                        const npy_intp *bstr2, npy_intp work, pb_loop_fn rows, int threads) {
  const int nb = idx->ndim - 1;
  npy_intp strides[3 * PB_MAXDIMS];
  for (int t = 0; t < nb; ++t) {
    strides[t] = idx->strides[t];
    strides[nb + t] = bstr1[t];
    strides[2 * nb + t] = bstr2[t];
  }
  (void)work;
  pb_iterate(nb, idx->shape, 3, bases, strides, rows, P, threads);
}

/* gather(operand, indices) -> output of the shape the dimension numbers give */
static int gather_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                         const void *params, pb_kernel_ctx *ctx) {
  const gather_params *G = params;
  const pb_operand *x = &ins[0], *idx = &ins[1], *out = &outs[0];
  gs_plan P;
  memset(&P, 0, sizeof P);
  P.fill = P.zero_elem; /* the element loops read a fill even where none is used */
  if (!index_ok(idx) || out->dtype != x->dtype || out->itemsize != x->itemsize ||
      !(P.move = pb_move_copy_loop(x->itemsize)))
    return bad_params(ctx, "expected integer indices and an output of the operand's dtype");
  P.X.islot = idx->dtype;
  const int nd = x->ndim, nb = idx->ndim - 1;
  const int64_t *xs = x->shape, *sizes = G->slice_sizes;
  int offs[GS_DIMS], coll[GS_DIMS], sim[GS_DIMS], obd[GS_DIMS], ibd[GS_DIMS];
  const int ncoll = G->n_collapsed, nobd = G->n_obd, nibd = G->n_ibd;
  P.X.K = G->n_start_index_map;
  bool ok = nd <= GS_DIMS && dims_ok(G->collapsed, ncoll, nd, true, coll) &&
            dims_ok(G->obd, nobd, nd, true, obd) && dims_ok(G->ibd, nibd, nb, false, ibd) &&
            dims_ok(G->start_index_map, P.X.K, nd, false, sim) && nibd == nobd &&
            P.X.K == idx->shape[nb] && disjoint(coll, ncoll, obd, nobd) &&
            disjoint(sim, P.X.K, obd, nobd) && (G->mode == MODE_CLIP || G->mode == MODE_FILL_OR_DROP);
  for (int d = 0; ok && d < nd; ++d) ok = sizes[d] >= 0 && sizes[d] <= xs[d];
  for (int i = 0; ok && i < ncoll; ++i) ok = sizes[coll[i]] == 1;
  for (int i = 0; ok && i < nobd; ++i) ok = sizes[obd[i]] == (xs[obd[i]] > 0 ? 1 : 0);
  const int noff = nd - ncoll - nobd, ond = noff + nb;
  ok = ok && noff >= 0 && ond <= GS_DIMS && out->ndim == ond &&
       dims_ok(G->offset_dims, G->n_offset, ond, true, offs) && G->n_offset == noff;
  if (!ok) return bad_params(ctx, "the dimension numbers do not fit the operands");
  P.X.mode = G->mode;
  if (G->mode == MODE_FILL_OR_DROP) P.fill = (char *)G->fill;
  /* output: window sizes at offset_dims (operand order), batch sizes elsewhere */
  int wd[GS_DIMS], nwd = 0, bpos[GS_DIMS], nbpos = 0;
  for (int d = 0; d < nd; ++d)
    if (!member(d, coll, ncoll) && !member(d, obd, nobd)) wd[nwd++] = d;
  for (int o = 0, j = 0; o < ond; ++o) {
    int64_t want;
    if (j < noff && offs[j] == o) {
      want = sizes[wd[j++]];
    } else {
      want = idx->shape[nbpos];
      bpos[nbpos++] = o;
    }
    if (out->shape[o] != want) return bad_params(ctx, "the output shape does not fit");
  }
  npy_intp bstr1[GS_DIMS];
  if (!batching_strides(x, idx, obd, ibd, nobd, x->strides, bstr1))
    return bad_params(ctx, "paired batching dimensions differ in size");
  if (pb_operand_size(out) == 0) return 0;
  const int64_t *os = out->strides;
  for (int k = 0; k < P.X.K; ++k) {
    P.X.hi[k] = xs[sim[k]] - sizes[sim[k]];
    P.X.step[k] = x->strides[sim[k]];
  }
  P.X.ivs = idx->strides[nb];
  npy_intp wsz[GS_DIMS], wss[GS_DIMS], wds[GS_DIMS];
  for (int j = 0; j < nwd; ++j) {
    wsz[j] = sizes[wd[j]];
    wss[j] = x->strides[wd[j]];
    wds[j] = os[offs[j]];
  }
  set_window(&P, nwd, wsz, wss, wds);
  npy_intp bstr2[GS_DIMS];
  for (int t = 0; t < nb; ++t) bstr2[t] = os[bpos[t]];
  char *bases[3] = {idx->data, x->data, out->data};
  const npy_intp work = pb_operand_size(out);
  run_batches(&P, idx, bases, bstr1, bstr2, work, rows_for(&P, x->itemsize, true),
              pb_kernel_threads(ctx, work, 262144));
  return 0;
}

/* scatter(operand, indices, updates) -> a copy of operand with the updates combined in by
 * `comb` (serial: duplicates resolve in row-major order) */
static int scatter(int comb, const pb_operand *ins, pb_operand *outs, const void *params,
                   pb_kernel_ctx *ctx) {
  const scatter_params *S = params;
  const pb_operand *x = &ins[0], *idx = &ins[1], *u = &ins[2], *out = &outs[0];
  gs_plan P;
  memset(&P, 0, sizeof P);
  P.fill = P.zero_elem;
  P.scatter = true;
  if (!index_ok(idx) || u->dtype != x->dtype || u->itemsize != x->itemsize ||
      out->dtype != x->dtype || out->itemsize != x->itemsize || !pb_operand_same_shape(x, out))
    return bad_params(ctx, "expected integer indices, updates and an output of the operand's "
                      "dtype, the output of its shape");
  if (!(P.move = pb_move_combine_loop_slot(comb, x->dtype, x->itemsize)))
    return bad_params(ctx, "the operand's dtype has no such combiner");
  P.X.islot = idx->dtype;
  const int nd = x->ndim, nb = idx->ndim - 1, und = u->ndim;
  const int64_t *xs = x->shape, *us = u->shape;
  int uwd[GS_DIMS], iwd[GS_DIMS], sdod[GS_DIMS], obd[GS_DIMS], ibd[GS_DIMS];
  const int nuwd = S->n_uwd, niwd = S->n_iwd, nobd = S->n_obd, nibd = S->n_ibd;
  P.X.K = S->n_sdod;
  bool ok = dims_ok(S->uwd, nuwd, und, true, uwd) && dims_ok(S->iwd, niwd, nd, true, iwd) &&
            dims_ok(S->obd, nobd, nd, true, obd) && dims_ok(S->ibd, nibd, nb, false, ibd) &&
            dims_ok(S->sdod, P.X.K, nd, false, sdod) && P.X.K == idx->shape[nb] &&
            nibd == nobd && und == nb + nuwd && nuwd + niwd + nobd == nd &&
            disjoint(iwd, niwd, obd, nobd) && disjoint(sdod, P.X.K, obd, nobd) &&
            (S->mode == MODE_CLIP || S->mode == MODE_FILL_OR_DROP);
  /* window size along every operand dimension: 1 for inserted and batching dimensions */
  npy_intp wsize[GS_DIMS];
  int wd[GS_DIMS], nwd = 0, spos[GS_DIMS];
  for (int d = 0; ok && d < nd; ++d) {
    wsize[d] = 1;
    if (member(d, iwd, niwd) || member(d, obd, nobd)) continue;
    wsize[d] = us[uwd[nwd]];
    ok = wsize[d] <= xs[d];
    wd[nwd++] = d;
  }
  for (int d = 0, t = 0; ok && d < und; ++d) {
    if (member(d, uwd, nuwd)) continue;
    ok = us[d] == idx->shape[t];
    spos[t++] = d;
  }
  if (!ok) return bad_params(ctx, "the dimension numbers do not fit the operands");
  P.X.mode = S->mode;
  npy_intp bstr1[GS_DIMS];
  const int64_t *os = out->strides;
  if (!batching_strides(x, idx, obd, ibd, nobd, os, bstr1))
    return bad_params(ctx, "paired batching dimensions differ in size");
  /* the output starts as the operand */
  if (pb_operand_size(x) > 0) {
    npy_intp cstr[2 * PB_MAXDIMS];
    for (int d = 0; d < nd; ++d) {
      cstr[d] = x->strides[d];
      cstr[nd + d] = os[d];
    }
    char *cb[2] = {x->data, out->data};
    pb_iterate(nd, xs, 2, cb, cstr, pb_move_copy_loop(x->itemsize), NULL,
               pb_kernel_threads(ctx, pb_operand_size(x), PB_GRAIN_CHEAP));
  }
  if (pb_operand_size(out) == 0 || pb_operand_size(u) == 0) return 0;
  for (int k = 0; k < P.X.K; ++k) {
    P.X.hi[k] = xs[sdod[k]] - wsize[sdod[k]]; /* >= 0: the operand is not empty */
    P.X.step[k] = os[sdod[k]];
  }
  P.X.ivs = idx->strides[nb];
  npy_intp wsz[GS_DIMS], wss[GS_DIMS], wds[GS_DIMS];
  for (int j = 0; j < nwd; ++j) {
    wsz[j] = wsize[wd[j]];
    wss[j] = u->strides[uwd[j]];
    wds[j] = os[wd[j]];
  }
  set_window(&P, nwd, wsz, wss, wds);
  npy_intp bstr2[GS_DIMS];
  for (int t = 0; t < nb; ++t) bstr2[t] = u->strides[spos[t]];
  char *bases[3] = {idx->data, out->data, u->data};
  run_batches(&P, idx, bases, bstr1, bstr2, pb_operand_size(u),
              rows_for(&P, x->itemsize, comb == PB_COMBINE_SET), 1);
  return 0;
}

#define SCATTER_KERNEL(NAME, COMB)                                                                \
  static int NAME(const pb_operand *ins, int nin, pb_operand *outs, int nout, const void *prm,   \
                  pb_kernel_ctx *ctx) {                                                           \
    return scatter(COMB, ins, outs, prm, ctx);                                                   \
  }
SCATTER_KERNEL(scatter_set, PB_COMBINE_SET)
SCATTER_KERNEL(scatter_add, PB_COMBINE_ADD)
SCATTER_KERNEL(scatter_mul, PB_COMBINE_MUL)
SCATTER_KERNEL(scatter_min, PB_COMBINE_MIN)
SCATTER_KERNEL(scatter_max, PB_COMBINE_MAX)

static const pb_kernel_def kernels[] = {
  {"gather", gather_kernel, 2, 1, sizeof(gather_params)},
  {"scatter", scatter_set, 3, 1, sizeof(scatter_params)},
  {"scatter-add", scatter_add, 3, 1, sizeof(scatter_params)},
  {"scatter-mul", scatter_mul, 3, 1, sizeof(scatter_params)},
  {"scatter-min", scatter_min, 3, 1, sizeof(scatter_params)},
  {"scatter-max", scatter_max, 3, 1, sizeof(scatter_params)},
};
PB_KERNELS(kernels)

int pb_register_gather(PyObject *m) {
  PyObject *comb = Py_BuildValue("{sisisisisi}", "set", PB_COMBINE_SET, "add", PB_COMBINE_ADD,
                                 "mul", PB_COMBINE_MUL, "min", PB_COMBINE_MIN, "max",
                                 PB_COMBINE_MAX);
  return comb ? PyModule_AddObject(m, "SCATTER_COMBINERS", comb) : -1;
}
