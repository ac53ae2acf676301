/* Windowed reductions (primitives/reduce_window.py): reduce_window sum/max/min/mul, sum's
 * transpose, and the first-extreme select_and_gather_add / select_and_scatter_add.
 *
 * Geometry (XLA's ReduceWindow): output position o along dimension i reads the window element
 * k at dilated-and-padded coordinate p = o*stride + k*wdil - low; p is an operand element when
 * p >= 0, p % bdil == 0 and p / bdil < size (else padding or a hole, holding the identity).
 *
 * Layout of the work: an output "row" is all output positions along the last dimension for
 * fixed leading positions. For a row, the window offsets of the leading dimensions that land
 * on operand elements are listed once ("taps": byte offsets of operand rows); then for each tap
 * and each window offset kw of the last dimension, the output positions whose element is
 * inside the operand form one range [f, l] (without base dilation), a loop the compiler
 * vectorises: contiguous for a non-window last dimension (NHWC's channels), stride 2 for
 * 2x2/2 pooling along NCHW's W. Each output element thus sees its window in row-major order.
 * Threads take disjoint output rows; the scattering kernels (sum's transpose, select-and-
 * scatter) take disjoint groups of rows that differ in a leading pass-through dimension
 * (window 1, stride 1, no padding or dilation: N and C of pooling), so their sums never race
 * and keep one order. float16/bfloat16 accumulate in float32 and round once. */
#include "kernel_abi.h"
#include "cast.h"
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MAXD PB_MAXDIMS
#define RW_GRAIN 32768 /* window elements per thread worth a split */
#define NONE INT64_MIN /* no selected position */

enum { OP_SUM = 0, OP_MAX = 1, OP_MIN = 2, OP_MUL = 3 };

typedef struct {
  int64_t w[MAXD], s[MAXD], lo[MAXD], hi[MAXD], bd[MAXD], wd[MAXD];
  int32_t ndim, op;
} rw_params;

typedef struct {
  int nd, m;          /* dimensions (>= 1), m = nd - 1 leading ones */
  int64_t w[MAXD], s[MAXD], lo[MAXD], bd[MAXD], wd[MAXD];
  int64_t n[MAXD];    /* operand shape */
  int64_t on[MAXD];   /* output shape */
  int64_t rows, OW;   /* output rows, row length */
  int64_t ntaps_max;  /* prod of the leading window dims */
  int64_t groups;     /* row groups whose operand regions are disjoint */
  int64_t group_elems; /* operand elements per group */
} geom;

/* The geometry of params against operand shape `n` (nd dims, 0-d as one dimension of 1); the
 * output shape must equal `on`. False if they disagree. */
static bool make_geom(const rw_params *P, int nd, const int64_t *n, const int64_t *on, geom *g) {
  if (P->ndim != nd || nd > MAXD) return false;
  if (nd == 0) {
    g->nd = 1;
    g->w[0] = g->s[0] = g->bd[0] = g->wd[0] = 1;
    g->lo[0] = 0;
    g->n[0] = g->on[0] = 1;
  } else {
    g->nd = nd;
    for (int i = 0; i < nd; ++i) {
      g->w[i] = P->w[i], g->s[i] = P->s[i], g->lo[i] = P->lo[i];
      g->bd[i] = P->bd[i], g->wd[i] = P->wd[i], g->n[i] = n[i], g->on[i] = on[i];
      if (g->w[i] < 1 || g->s[i] < 1 || g->bd[i] < 1 || g->wd[i] < 1 || n[i] < 0) return false;
      int64_t dil = n[i] ? (n[i] - 1) * g->bd[i] + 1 : 0;
      int64_t padded = dil + P->lo[i] + P->hi[i], ext = (g->w[i] - 1) * g->wd[i] + 1;
      int64_t want = padded < ext ? 0 : (padded - ext) / g->s[i] + 1;
      if (want != on[i]) return false;
    }
  }
  g->m = g->nd - 1;
  g->rows = 1;
  g->ntaps_max = 1;
  for (int i = 0; i < g->m; ++i) {
    g->rows *= g->on[i];
    g->ntaps_max *= g->w[i];
  }
  g->OW = g->on[g->m];
  /* leading pass-through dimensions: rows differing there touch disjoint operand regions */
  int P_ = 0;
  while (P_ < g->m && g->w[P_] == 1 && g->s[P_] == 1 && g->lo[P_] == 0 && g->bd[P_] == 1 &&
         g->on[P_] == g->n[P_])
    ++P_;
  g->groups = 1;
  for (int i = 0; i < P_; ++i) g->groups *= g->on[i];
  g->group_elems = 1;
  for (int i = P_; i < g->nd; ++i) g->group_elems *= g->n[i];
  return true;
}

/* The taps of output row r: for each leading window offset (row-major) landing on an operand
 * element, its offset under strides `sa` (into ta) and `sb` (into tb, if not NULL). */
static int64_t row_taps(const geom *g, int64_t r, const int64_t *sa, int64_t *ta,
                        const int64_t *sb, int64_t *tb) {
  const int m = g->m;
  int64_t o[MAXD], k[MAXD];
  for (int i = m - 1; i >= 0; --i) {
    o[i] = r % g->on[i];
    r /= g->on[i];
    k[i] = 0;
  }
  int64_t cnt = 0;
  for (;;) {
    int64_t a = 0, b = 0;
    bool ok = true;
    for (int i = 0; i < m && ok; ++i) {
      int64_t p = o[i] * g->s[i] + k[i] * g->wd[i] - g->lo[i];
      if (p < 0 || p % g->bd[i]) { ok = false; break; }
      int64_t q = p / g->bd[i];
      if (q >= g->n[i]) { ok = false; break; }
      a += q * sa[i];
      if (sb) b += q * sb[i];
    }
    if (ok) {
      ta[cnt] = a;
      if (tb) tb[cnt] = b;
      ++cnt;
    }
    int i = m - 1;
    while (i >= 0 && ++k[i] == g->w[i]) k[i--] = 0;
    if (i < 0) break;
  }
  return cnt;
}

/* Along the last dimension, for window offset kw: the output positions [*f, *l] reading an
 * operand element (without base dilation), and c with coordinate = ow * s + c. */
static inline void last_range(const geom *g, int64_t kw, int64_t *f, int64_t *l, int64_t *c) {
  const int m = g->m;
  const int64_t s = g->s[m], cc = kw * g->wd[m] - g->lo[m], n = g->n[m];
  *c = cc;
  *f = cc >= 0 ? 0 : (-cc + s - 1) / s;
  *l = n - 1 - cc < 0 ? -1 : (n - 1 - cc) / s;
  if (*l > g->OW - 1) *l = g->OW - 1;
}

static inline int64_t floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

#define CMB_SUM(a, b) ((a) + (b))
#define CMB_MUL(a, b) ((a) * (b))
/* NaN-propagating, the accumulator kept on ties; nested selects, no `||`: branch-free */
#define CMB_MAX(a, b) ((b) != (b) ? (b) : (b) > (a) ? (b) : (a))
#define CMB_MIN(a, b) ((b) != (b) ? (b) : (b) < (a) ? (b) : (a))

/* acc[ow] = CMB(acc[ow], element) over [f, l]: contiguous rows get constant-stride loops */
#define RW_LOOP(T, ACC, LD, CMB)                                                                  \
  do {                                                                                            \
    if (contig) {                                                                                 \
      const T *src = (const T *)base + c;                                                         \
      if (s == 1)                                                                                 \
        for (int64_t ow = f; ow <= l; ++ow) acc[ow] = CMB(acc[ow], (ACC)LD(src[ow]));             \
      else if (s == 2)                                                                            \
        for (int64_t ow = f; ow <= l; ++ow) acc[ow] = CMB(acc[ow], (ACC)LD(src[2 * ow]));         \
      else                                                                                        \
        for (int64_t ow = f; ow <= l; ++ow) acc[ow] = CMB(acc[ow], (ACC)LD(src[ow * s]));         \
    } else                                                                                        \
      for (int64_t ow = f; ow <= l; ++ow)                                                         \
        acc[ow] = CMB(acc[ow], (ACC)LD(*(const T *)(base + (ow * s + c) * str)));                 \
  } while (0)

#define GT(a, b) ((a) > (b))
/* k = the index (0..3, as a float) of the first best of a, b, c, d, NaN counting as best; float
 * flags: GCC vectorises these selects, not int ones */
#define FIRST_BEST4(BETTER, a, b, c, d, k)                                                        \
  do {                                                                                            \
    float best_ = (a);                                                                            \
    (k) = 0.0f;                                                                                   \
    const float tb_ = BETTER((b), best_) || ((b) != (b) && best_ == best_) ? 1.0f : 0.0f;         \
    best_ = tb_ != 0.0f ? (b) : best_;                                                            \
    (k) = tb_ != 0.0f ? 1.0f : (k);                                                               \
    const float tc_ = BETTER((c), best_) || ((c) != (c) && best_ == best_) ? 1.0f : 0.0f;         \
    best_ = tc_ != 0.0f ? (c) : best_;                                                            \
    (k) = tc_ != 0.0f ? 2.0f : (k);                                                               \
    const float td_ = BETTER((d), best_) || ((d) != (d) && best_ == best_) ? 1.0f : 0.0f;         \
    (k) = td_ != 0.0f ? 3.0f : (k);                                                               \
  } while (0)
#define LT(a, b) ((a) < (b))
/* one window element's selection update over [f, l] of a contiguous row, stride S: float flags
 * (GCC vectorises those selects) */
#define SEL_LOOP(T, ACC, LD, BETTER, S)                                                           \
  do {                                                                                            \
    const T *src = (const T *)base;                                                               \
    for (int64_t ow = f; ow <= l; ++ow) {                                                         \
      const ACC v = (ACC)LD(src[(S) * ow]), b = best[ow];                                         \
      const float cur = kk[ow];                                                                   \
      const float tk = cur < 0.0f || BETTER(v, b) || (v != v && b == b) ? 1.0f : 0.0f;            \
      best[ow] = tk != 0.0f ? v : b;                                                              \
      kk[ow] = tk != 0.0f ? kf : cur;                                                             \
    }                                                                                             \
  } while (0)

#define LD_ID(v) (v)
#define ST_ID(v) (v)
#define LD_F16(v) pb_half_to_float(v)
#define ST_F16(v) pb_float_to_half(v)
#define LD_BF16(v) pb_bf16_to_f32(v)
#define ST_BF16(v) pb_f32_to_bf16(v)

/* Per operand dtype: the forward row, the selection row (first extreme per window). */
#define RW_TYPE(NAME, T, ACC, LD, LOWEST, HIGHEST)                                                \
  static PB_CLONES void NAME##_fwd_row(const geom *g, int op, const char *x, const int64_t *taps, \
                                       int64_t ntaps, int64_t str, ACC *acc) {                   \
    const int m = g->m;                                                                           \
    const int64_t OW = g->OW, s = g->s[m], bd = g->bd[m], n = g->n[m];                            \
    const bool contig = str == (int64_t)sizeof(T);                                                \
    const ACC id = op == OP_SUM ? (ACC)0 : op == OP_MUL ? (ACC)1 : op == OP_MAX ? LOWEST : HIGHEST;\
    for (int64_t ow = 0; ow < OW; ++ow) acc[ow] = id;                                             \
    for (int64_t t = 0; t < ntaps; ++t) {                                                         \
      const char *base = x + taps[t];                                                             \
      for (int64_t kw = 0; kw < g->w[m]; ++kw) {                                                  \
        int64_t f, l, c;                                                                          \
        if (bd == 1) {                                                                            \
          last_range(g, kw, &f, &l, &c);                                                          \
          switch (op) {                                                                           \
          case OP_SUM: RW_LOOP(T, ACC, LD, CMB_SUM); break;                                       \
          case OP_MUL: RW_LOOP(T, ACC, LD, CMB_MUL); break;                                       \
          case OP_MAX: RW_LOOP(T, ACC, LD, CMB_MAX); break;                                       \
          default: RW_LOOP(T, ACC, LD, CMB_MIN); break;                                           \
          }                                                                                       \
        } else {                                                                                  \
          c = kw * g->wd[m] - g->lo[m];                                                           \
          for (int64_t ow = 0; ow < OW; ++ow) {                                                   \
            int64_t p = ow * s + c;                                                               \
            if (p < 0 || p % bd || p / bd >= n) continue;                                         \
            ACC v = (ACC)LD(*(const T *)(base + (p / bd) * str));                                 \
            acc[ow] = op == OP_SUM ? CMB_SUM(acc[ow], v) : op == OP_MUL ? CMB_MUL(acc[ow], v)     \
                    : op == OP_MAX ? CMB_MAX(acc[ow], v) : CMB_MIN(acc[ow], v);                   \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  /* pick[ow]: tb-offset of the window's first extreme (+ its last coordinate * bstr), or NONE. \
   * Without base dilation the window element's number k (tap * w + kw, exact in a float below \
   * 2^24) is tracked in `kk` with float flags, a loop GCC vectorises, then turned to offsets. */ \
  static PB_CLONES void NAME##_select_row(const geom *g, bool is_max, const char *x,             \
                                          const int64_t *ta, const int64_t *tb, int64_t ntaps,    \
                                          int64_t str, int64_t bstr, ACC *restrict best,          \
                                          int64_t *restrict pick, float *restrict kk) {           \
    const int m = g->m;                                                                           \
    const int64_t OW = g->OW, s = g->s[m], bd = g->bd[m], n = g->n[m], W = g->w[m];              \
    if (bd == 1 && ntaps * W < (1 << 24)) {                                                       \
      for (int64_t ow = 0; ow < OW; ++ow) { kk[ow] = -1.0f; best[ow] = 0; }                       \
      for (int64_t t = 0; t < ntaps; ++t)                                                         \
        for (int64_t kw = 0; kw < W; ++kw) {                                                      \
          int64_t f, l, c;                                                                        \
          last_range(g, kw, &f, &l, &c);                                                          \
          const char *base = x + ta[t] + c * str;                                                 \
          const float kf = (float)(t * W + kw);                                                   \
          if (str == (int64_t)sizeof(T) && s == 1) {                                              \
            if (is_max) SEL_LOOP(T, ACC, LD, GT, 1); else SEL_LOOP(T, ACC, LD, LT, 1);            \
          } else if (str == (int64_t)sizeof(T) && s == 2) {                                       \
            if (is_max) SEL_LOOP(T, ACC, LD, GT, 2); else SEL_LOOP(T, ACC, LD, LT, 2);            \
          } else {                                                                                \
            const int64_t step = s * str;                                                         \
            for (int64_t ow = f; ow <= l; ++ow) {                                                 \
              const ACC v = (ACC)LD(*(const T *)(base + ow * step)), b = best[ow];                \
              const float cur = kk[ow];                                                           \
              const bool tk = cur < 0.0f || (is_max ? v > b : v < b) || (v != v && b == b);       \
              best[ow] = tk ? v : b;                                                              \
              kk[ow] = tk ? kf : cur;                                                             \
            }                                                                                     \
          }                                                                                       \
        }                                                                                         \
      for (int64_t ow = 0; ow < OW; ++ow) {                                                       \
        if (kk[ow] < 0.0f) { pick[ow] = NONE; continue; }                                         \
        const int64_t k = (int64_t)kk[ow], t = k / W, kw = k % W;                                 \
        pick[ow] = tb[t] + (ow * s + kw * g->wd[m] - g->lo[m]) * bstr;                            \
      }                                                                                           \
      return;                                                                                     \
    }                                                                                             \
    for (int64_t ow = 0; ow < OW; ++ow) pick[ow] = NONE;                                          \
    for (int64_t t = 0; t < ntaps; ++t)                                                           \
      for (int64_t kw = 0; kw < W; ++kw) {                                                        \
        const int64_t c = kw * g->wd[m] - g->lo[m];                                               \
        for (int64_t ow = 0; ow < OW; ++ow) {                                                     \
          int64_t p = ow * s + c;                                                                 \
          if (p < 0 || p % bd || p / bd >= n) continue;                                           \
          p /= bd;                                                                                \
          ACC v = (ACC)LD(*(const T *)(x + ta[t] + p * str)), b = best[ow];                       \
          bool take = pick[ow] == NONE || (is_max ? v > b : v < b) || (v != v && b == b);         \
          if (take) {                                                                             \
            best[ow] = v;                                                                         \
            pick[ow] = tb[t] + p * bstr;                                                          \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
  }

RW_TYPE(u8, uint8_t, uint8_t, LD_ID, 0, UINT8_MAX)
RW_TYPE(b8, uint8_t, uint8_t, LD_ID, 0, 1)
RW_TYPE(i8, int8_t, int8_t, LD_ID, INT8_MIN, INT8_MAX)
RW_TYPE(i16, int16_t, int16_t, LD_ID, INT16_MIN, INT16_MAX)
RW_TYPE(i32, int32_t, int32_t, LD_ID, INT32_MIN, INT32_MAX)
RW_TYPE(i64, int64_t, int64_t, LD_ID, INT64_MIN, INT64_MAX)
RW_TYPE(u16, uint16_t, uint16_t, LD_ID, 0, UINT16_MAX)
RW_TYPE(u32, uint32_t, uint32_t, LD_ID, 0, UINT32_MAX)
RW_TYPE(u64, uint64_t, uint64_t, LD_ID, 0, UINT64_MAX)
RW_TYPE(f16, uint16_t, float, LD_F16, -INFINITY, INFINITY)
RW_TYPE(bf16, uint16_t, float, LD_BF16, -INFINITY, INFINITY)
RW_TYPE(f32, float, float, LD_ID, -INFINITY, INFINITY)
RW_TYPE(f64, double, double, LD_ID, -INFINITY, INFINITY)

/* bool (1 byte, 0/1) runs as uint8 with identities 0/1: max is or, min is and */
static int type_slot(int dtype) {
  switch (dtype) {
  case PB_BOOL: return 12;
  case PB_U8: return 0;
  case PB_I8: return 1;
  case PB_I16: return 2;
  case PB_I32: return 3;
  case PB_I64: return 4;
  case PB_U16: return 5;
  case PB_U32: return 6;
  case PB_U64: return 7;
  case PB_F16: return 8;
  case PB_BF16: return 9;
  case PB_F32: return 10;
  case PB_F64: return 11;
  default: return -1;
  }
}
static const int acc_size[13] = {1, 1, 2, 4, 8, 2, 4, 8, 4, 4, 4, 8, 1};
static const bool acc_direct[13] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1}; /* acc = dtype */

static void fwd_row(int slot, const geom *g, int op, const char *x, const int64_t *taps,
                    int64_t ntaps, int64_t str, void *acc) {
  switch (slot) {
  case 0: u8_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 1: i8_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 2: i16_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 3: i32_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 4: i64_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 5: u16_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 6: u32_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 7: u64_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 8: f16_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 9: bf16_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 10: f32_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  case 12: b8_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  default: f64_fwd_row(g, op, x, taps, ntaps, str, acc); break;
  }
}

static void select_row(int slot, const geom *g, bool is_max, const char *x, const int64_t *ta,
                       const int64_t *tb, int64_t ntaps, int64_t str, int64_t bstr, void *best,
                       int64_t *pick, float *kk) {
#define SEL(NAME) NAME##_select_row(g, is_max, x, ta, tb, ntaps, str, bstr, best, pick, kk)
  switch (slot) {
  case 0: SEL(u8); break;
  case 1: SEL(i8); break;
  case 2: SEL(i16); break;
  case 3: SEL(i32); break;
  case 4: SEL(i64); break;
  case 5: SEL(u16); break;
  case 6: SEL(u32); break;
  case 7: SEL(u64); break;
  case 8: SEL(f16); break;
  case 9: SEL(bf16); break;
  case 10: SEL(f32); break;
  case 12: SEL(b8); break;
  default: SEL(f64); break;
  }
#undef SEL
}

/* Stores an accumulator row (float for halves) as dtype `slot`. */
static void store_row(int slot, const void *acc, char *out, int64_t n) {
  const float *a = acc;
  if (slot == 8)
    for (int64_t i = 0; i < n; ++i) ((uint16_t *)out)[i] = pb_float_to_half(a[i]);
  else if (slot == 9)
    for (int64_t i = 0; i < n; ++i) ((uint16_t *)out)[i] = pb_f32_to_bf16(a[i]);
  else
    memcpy(out, acc, (size_t)n * (size_t)acc_size[slot]);
}

/* A float operand element as double (the four float dtypes), and back. */
static inline double ld_float(int dtype, const char *p) {
  switch (dtype) {
  case PB_F16: return pb_half_to_float(*(const uint16_t *)p);
  case PB_BF16: return pb_bf16_to_f32(*(const uint16_t *)p);
  case PB_F32: return *(const float *)p;
  default: return *(const double *)p;
  }
}

static bool is_float(int dtype) {
  return dtype == PB_F16 || dtype == PB_BF16 || dtype == PB_F32 || dtype == PB_F64;
}

static int check_params(const pb_operand *x, const pb_operand *out, const void *params,
                        geom *g, pb_kernel_ctx *ctx, const char *what) {
  if (!make_geom(params, x->ndim, x->shape, out->shape, g))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "%s: the window geometry does not fit the "
                          "operand and output shapes", what);
  return 0;
}

/* per-thread scratch: taps (two sets) and a row of `row_bytes` bytes, 64-byte rounded */
typedef struct { char *base; size_t each; } per_thread;

static int thread_scratch(pb_kernel_ctx *ctx, const geom *g, int threads, size_t row_bytes,
                          per_thread *pt) {
  size_t taps = (size_t)g->ntaps_max * 2 * sizeof(int64_t);
  pt->each = ((taps + row_bytes + 2 * sizeof(int64_t) * (size_t)g->OW) + 63) & ~(size_t)63;
  pt->base = ctx->scratch(ctx, pt->each * (size_t)threads + 64);
  if (!pt->base) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory for scratch");
  return 0;
}

#ifdef _OPENMP
#define RW_PARALLEL(threads) _Pragma("omp parallel num_threads(threads) if (threads > 1)")
#define RW_TID omp_get_thread_num()
#define RW_NT omp_get_num_threads()
#else
#define RW_PARALLEL(threads)
#define RW_TID 0
#define RW_NT 1
#endif

static void chunk(int64_t n, int tid, int nt, int64_t *a, int64_t *b) {
  *a = n * tid / nt;
  *b = n * (tid + 1) / nt;
}


/* ---- 2x2 windows with stride 2 over the last two dimensions (NCHW pooling) ----
 * No padding or dilation there and every leading dimension pass-through: each output row
 * reads two operand rows, and each window element lands in one window (no overlap), so the
 * forward writes its output in one pass and select-and-scatter writes every operand position
 * of a window at once (the chosen one the source, the others 0), without a zeroing pass. */
/* dimensions h and h + 1 have 2x2 windows at stride 2 (no padding or dilation), every
 * dimension before h passes through */
static bool windows2x2_at(const geom *g, int h) {
  for (int i = h; i <= h + 1; ++i)
    if (g->w[i] != 2 || g->s[i] != 2 || g->lo[i] != 0 || g->bd[i] != 1 || g->wd[i] != 1 ||
        2 * g->on[i] > g->n[i])
      return false;
  for (int i = 0; i < h; ++i)
    if (g->w[i] != 1 || g->s[i] != 1 || g->lo[i] != 0 || g->bd[i] != 1 || g->on[i] != g->n[i])
      return false;
  return true;
}

static bool pool2x2(const geom *g) { return g->nd >= 2 && windows2x2_at(g, g->m - 1); }

/* the offset (under `st`) of output row r's first operand row, r = (leading position, oh)
 * with oh along dimension h: the leading position and 2*oh */
static inline int64_t row_at(const geom *g, int h, int64_t r, const int64_t *st, int64_t *oh) {
  *oh = r % g->on[h];
  r /= g->on[h];
  int64_t off = 2 * *oh * st[h];
  for (int i = h - 1; i >= 0; --i) {
    off += (r % g->on[i]) * st[i];
    r /= g->on[i];
  }
  return off;
}

static inline int64_t pool2x2_row(const geom *g, int64_t r, const int64_t *st, int64_t *oh) {
  return row_at(g, g->m - 1, r, st, oh);
}

static inline float mx_f(float a, float b) { return CMB_MAX(a, b); }
static inline float mn_f(float a, float b) { return CMB_MIN(a, b); }

static PB_CLONES void pool2x2_fwd_f32(const float *restrict r0, const float *restrict r1,
                                      float *restrict out, int64_t n, int op) {
  if (op == OP_MAX)
    for (int64_t i = 0; i < n; ++i)
      out[i] = mx_f(mx_f(mx_f(r0[2 * i], r0[2 * i + 1]), r1[2 * i]), r1[2 * i + 1]);
  else if (op == OP_MIN)
    for (int64_t i = 0; i < n; ++i)
      out[i] = mn_f(mn_f(mn_f(r0[2 * i], r0[2 * i + 1]), r1[2 * i]), r1[2 * i + 1]);
  else if (op == OP_SUM)
    for (int64_t i = 0; i < n; ++i) out[i] = ((r0[2 * i] + r0[2 * i + 1]) + r1[2 * i]) + r1[2 * i + 1];
  else
    for (int64_t i = 0; i < n; ++i) out[i] = ((r0[2 * i] * r0[2 * i + 1]) * r1[2 * i]) * r1[2 * i + 1];
}

/* each window's source value at its first max (min), 0 at its other three positions:
 * branch-free (a NaN wins unless the best so far is NaN), so the loop vectorises */
#define POOL2X2_SCATTER(NAME, BETTER)                                                             \
  static PB_CLONES void NAME(const float *restrict r0, const float *restrict r1,                  \
                             const float *restrict src, float *restrict o0, float *restrict o1,   \
                             int64_t n) {                                                         \
    for (int64_t i = 0; i < n; ++i) {                                                             \
      const float a = r0[2 * i], b = r0[2 * i + 1], c = r1[2 * i], d = r1[2 * i + 1];             \
      float k;                                                                                    \
      FIRST_BEST4(BETTER, a, b, c, d, k);                                                         \
      const float v = src[i];                                                                     \
      o0[2 * i] = k == 0.0f ? v : 0.0f;                                                           \
      o0[2 * i + 1] = k == 1.0f ? v : 0.0f;                                                       \
      o1[2 * i] = k == 2.0f ? v : 0.0f;                                                           \
      o1[2 * i + 1] = k == 3.0f ? v : 0.0f;                                                       \
    }                                                                                             \
  }
POOL2X2_SCATTER(pool2x2_scatter_max_f32, GT)
POOL2X2_SCATTER(pool2x2_scatter_min_f32, LT)

/* each window's tangent at its first max (min): the forward's selection, gathering */
#define POOL2X2_GATHER(NAME, BETTER)                                                              \
  static PB_CLONES void NAME(const float *restrict r0, const float *restrict r1,                  \
                             const float *restrict t0, const float *restrict t1,                  \
                             float *restrict out, int64_t n) {                                    \
    for (int64_t i = 0; i < n; ++i) {                                                             \
      const float a = r0[2 * i], b = r0[2 * i + 1], c = r1[2 * i], d = r1[2 * i + 1];             \
      const float u0 = t0[2 * i], u1 = t0[2 * i + 1], u2 = t1[2 * i], u3 = t1[2 * i + 1];         \
      float best = a, v = u0; /* loads first: conditional loads would not vectorise */            \
      const float tb = BETTER(b, best) || (b != b && best == best) ? 1.0f : 0.0f;                 \
      best = tb != 0.0f ? b : best;                                                               \
      v = tb != 0.0f ? u1 : v;                                                                    \
      const float tc = BETTER(c, best) || (c != c && best == best) ? 1.0f : 0.0f;                 \
      best = tc != 0.0f ? c : best;                                                               \
      v = tc != 0.0f ? u2 : v;                                                                    \
      const float td = BETTER(d, best) || (d != d && best == best) ? 1.0f : 0.0f;                 \
      out[i] = td != 0.0f ? u3 : v;                                                               \
    }                                                                                             \
  }
POOL2X2_GATHER(pool2x2_gather_max_f32, GT)
POOL2X2_GATHER(pool2x2_gather_min_f32, LT)

/* sum's transpose: every operand position of a window gets the window's cotangent */
static PB_CLONES void pool2x2_spread_f32(const float *restrict src, float *restrict o0,
                                         float *restrict o1, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = src[i];
    o0[2 * i] = o0[2 * i + 1] = o1[2 * i] = o1[2 * i + 1] = v;
  }
}

static void pool2x2_gather(const geom *g, const pb_operand *t, const pb_operand *x,
                           pb_operand *out, bool is_max, const int64_t *xs, const int64_t *ts,
                           int threads) {
  const int h = g->m - 1;
  const char *xd = x->data, *td = t->data;
  float *od = out->data;
  RW_PARALLEL(threads) {
    int64_t r0, r1, oh;
    chunk(g->rows, RW_TID, RW_NT, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const char *a = xd + pool2x2_row(g, r, xs, &oh), *b = td + pool2x2_row(g, r, ts, &oh);
      (is_max ? pool2x2_gather_max_f32 : pool2x2_gather_min_f32)(
          (const float *)a, (const float *)(a + xs[h]), (const float *)b,
          (const float *)(b + ts[h]), od + r * g->OW, g->OW);
    }
  }
}

/* sum's transpose into out (contiguous, the operand's shape); uncovered positions get 0 */
static void pool2x2_spread(const geom *g, const pb_operand *ct, pb_operand *out,
                           const int64_t *cs_in, int threads) {
  const int m = g->m, h = m - 1;
  const int64_t W = g->n[m], H = g->n[h], OW = g->OW, OH = g->on[h];
  int64_t cs[MAXD];
  for (int i = g->nd - 1, st = 1; i >= 0; --i) {
    cs[i] = st * 4;
    st *= g->n[i];
  }
  char *od = out->data;
  if (OH == 0) {
    memset(od, 0, (size_t)pb_operand_size(out) * sizeof(float));
    return;
  }
  const char *cd = ct->data;
  RW_PARALLEL(threads) {
    int64_t r0, r1, oh;
    chunk(g->rows, RW_TID, RW_NT, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const float *s = (const float *)(cd + pool2x2_row(g, r, cs_in, &oh) - oh * cs_in[h]);
      float *o0 = (float *)(od + pool2x2_row(g, r, cs, &oh)), *o1 = o0 + W;
      pool2x2_spread_f32(s, o0, o1, OW);
      for (int64_t j = 2 * OW; j < W; ++j) o0[j] = o1[j] = 0.0f;
      if (oh == OH - 1 && 2 * OH < H)
        memset(o1 + W, 0, (size_t)((H - 2 * OH) * W) * sizeof(float));
    }
  }
}

static void pool2x2_forward(const geom *g, const pb_operand *x, pb_operand *out, int op,
                            const int64_t *xs, int threads) {
  const char *xd = x->data;
  float *od = out->data;
  const int h = g->m - 1;
  RW_PARALLEL(threads) {
    int64_t r0, r1, oh;
    chunk(g->rows, RW_TID, RW_NT, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const char *a = xd + pool2x2_row(g, r, xs, &oh);
      pool2x2_fwd_f32((const float *)a, (const float *)(a + xs[h]), od + r * g->OW, g->OW, op);
    }
  }
}

/* out is contiguous of the operand's shape; positions past the last full window are zeroed */
static void pool2x2_scatter(const geom *g, const pb_operand *src, const pb_operand *x,
                            pb_operand *out, bool is_max, const int64_t *xs, const int64_t *ss,
                            int threads) {
  const int m = g->m, h = m - 1;
  const int64_t W = g->n[m], H = g->n[h], OW = g->OW, OH = g->on[h];
  int64_t cs[MAXD];
  for (int i = g->nd - 1, st = 1; i >= 0; --i) {
    cs[i] = st * 4;
    st *= g->n[i];
  }
  const char *xd = x->data, *sd = src->data;
  char *od = out->data;
  if (OH == 0) { /* no window: every position is uncovered */
    memset(od, 0, (size_t)pb_operand_size(out) * sizeof(float));
    return;
  }
  RW_PARALLEL(threads) {
    int64_t r0, r1, oh;
    chunk(g->rows, RW_TID, RW_NT, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const char *a = xd + pool2x2_row(g, r, xs, &oh);
      const float *s = (const float *)(sd + pool2x2_row(g, r, ss, &oh) - 2 * oh * ss[h] +
                                       oh * ss[h]);
      float *o0 = (float *)(od + pool2x2_row(g, r, cs, &oh)), *o1 = o0 + W;
      (is_max ? pool2x2_scatter_max_f32 : pool2x2_scatter_min_f32)(
          (const float *)a, (const float *)(a + xs[h]), s, o0, o1, OW);
      for (int64_t j = 2 * OW; j < W; ++j) o0[j] = o1[j] = 0.0f;
      if (oh == OH - 1 && 2 * OH < H) /* the plane's rows below the last window */
        memset(o1 + W, 0, (size_t)((H - 2 * OH) * W) * sizeof(float));
    }
  }
}

/* ---- the same over dimensions -3 and -2 with a pass-through last dimension (NHWC) ----
 * An output row (leading position, oh) reads two operand rows of W*C contiguous elements;
 * the loops run along C, contiguous and vectorised. */
static bool pool2x2_nhwc(const geom *g, const int64_t *xs) {
  const int m = g->m;
  if (g->nd < 3 || g->w[m] != 1 || g->s[m] != 1 || g->lo[m] != 0 || g->bd[m] != 1 ||
      g->on[m] != g->n[m] || xs[m] != 4 || xs[m - 1] != 4 * g->n[m])
    return false;
  return windows2x2_at(g, m - 2);
}

/* offset (under st) of the first operand row of output row r2 = (leading position, oh) */
static inline int64_t nhwc_row(const geom *g, int64_t r2, const int64_t *st, int64_t *oh) {
  return row_at(g, g->m - 2, r2, st, oh);
}

/* one output row: window ow reads pixels 2 ow and 2 ow + 1 of operand rows a and b (C each) */
#define NHWC_FWD(NAME, EXPR)                                                                      \
  static PB_CLONES void NAME(const float *restrict a, const float *restrict b,                    \
                             float *restrict out, int64_t OW, int64_t C) {                        \
    for (int64_t ow = 0; ow < OW; ++ow, a += 2 * C, b += 2 * C, out += C)                         \
      for (int64_t i = 0; i < C; ++i) {                                                           \
        const float w = a[i], x = a[C + i], y = b[i], z = b[C + i];                               \
        out[i] = EXPR;                                                                            \
      }                                                                                           \
  }
NHWC_FWD(nhwc_max_f32, mx_f(mx_f(mx_f(w, x), y), z))
NHWC_FWD(nhwc_min_f32, mn_f(mn_f(mn_f(w, x), y), z))
NHWC_FWD(nhwc_sum_f32, ((w + x) + y) + z)
NHWC_FWD(nhwc_mul_f32, ((w * x) * y) * z)

static void pool2x2_nhwc_forward(const geom *g, const pb_operand *x, pb_operand *out, int op,
                                 const int64_t *xs, int threads) {
  const int m = g->m;
  const int64_t C = g->n[m], OW = g->on[m - 1], rows2 = g->rows / (OW ? OW : 1);
  const char *xd = x->data;
  float *od = out->data;
  if (OW == 0) return;
  RW_PARALLEL(threads) {
    int64_t r0, r1, oh;
    chunk(rows2, RW_TID, RW_NT, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const float *a = (const float *)(xd + nhwc_row(g, r, xs, &oh));
      const float *b = (const float *)((const char *)a + xs[m - 2]);
      (op == OP_MAX ? nhwc_max_f32 : op == OP_MIN ? nhwc_min_f32 : op == OP_SUM ? nhwc_sum_f32
                                                                         : nhwc_mul_f32)(
          a, b, od + r * OW * C, OW, C);
    }
  }
}

/* select-and-scatter over one output row (float flags, as pool2x2's): window ow's source
 * value goes to the first best of pixels 2 ow, 2 ow + 1 of rows a and b, zeros elsewhere */
#define NHWC_SCATTER(NAME, BETTER)                                                                \
  static PB_CLONES void NAME(const float *restrict a, const float *restrict b,                    \
                             const float *restrict src, float *restrict oa, float *restrict ob,   \
                             int64_t OW, int64_t C) {                                             \
    for (int64_t ow = 0; ow < OW; ++ow, a += 2 * C, b += 2 * C, src += C, oa += 2 * C,           \
                 ob += 2 * C)                                                                     \
      for (int64_t i = 0; i < C; ++i) {                                                           \
        const float va = a[i], vb = a[C + i], vc = b[i], vd = b[C + i];                           \
        float k;                                                                                  \
        FIRST_BEST4(BETTER, va, vb, vc, vd, k);                                                   \
        const float v = src[i];                                                                   \
        oa[i] = k == 0.0f ? v : 0.0f;                                                             \
        oa[C + i] = k == 1.0f ? v : 0.0f;                                                         \
        ob[i] = k == 2.0f ? v : 0.0f;                                                             \
        ob[C + i] = k == 3.0f ? v : 0.0f;                                                         \
      }                                                                                           \
  }
NHWC_SCATTER(nhwc_scatter_max_f32, GT)
NHWC_SCATTER(nhwc_scatter_min_f32, LT)

/* out contiguous, the operand's shape; ss: the source's strides (its last two contiguous) */
static void pool2x2_nhwc_scatter(const geom *g, const pb_operand *src, const pb_operand *x,
                                 pb_operand *out, bool is_max, const int64_t *xs,
                                 const int64_t *ss, int threads) {
  const int m = g->m, h = m - 2;
  const int64_t C = g->n[m], W = g->n[m - 1], H = g->n[h], OW = g->on[m - 1], OH = g->on[h];
  int64_t cs[MAXD];
  for (int i = g->nd - 1, st = 1; i >= 0; --i) {
    cs[i] = st * 4;
    st *= g->n[i];
  }
  char *o_d = out->data;
  if (OH == 0 || OW == 0) {
    memset(o_d, 0, (size_t)pb_operand_size(out) * sizeof(float));
    return;
  }
  const int64_t rows2 = g->rows / OW;
  const char *xd = x->data, *sd = src->data;
  RW_PARALLEL(threads) {
    int64_t r0, r1, oh;
    chunk(rows2, RW_TID, RW_NT, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      const float *a = (const float *)(xd + nhwc_row(g, r, xs, &oh));
      const float *b = (const float *)((const char *)a + xs[h]);
      const float *s = (const float *)(sd + nhwc_row(g, r, ss, &oh) - oh * ss[h]);
      float *o0 = (float *)(o_d + nhwc_row(g, r, cs, &oh)), *o1 = o0 + W * C;
      (is_max ? nhwc_scatter_max_f32 : nhwc_scatter_min_f32)(a, b, s, o0, o1, OW, C);
      if (2 * OW < W) {
        memset(o0 + 2 * OW * C, 0, (size_t)((W - 2 * OW) * C) * sizeof(float));
        memset(o1 + 2 * OW * C, 0, (size_t)((W - 2 * OW) * C) * sizeof(float));
      }
      if (oh == OH - 1 && 2 * OH < H)
        memset(o1 + W * C, 0, (size_t)((H - 2 * OH) * W * C) * sizeof(float));
    }
  }
}

/* ---- reduce_window: out = op over each window of x ---- */
static int reduce_window_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *x = &ins[0];
  pb_operand *out = &outs[0];
  geom g;
  int err = check_params(x, out, params, &g, ctx, "reduce_window");
  if (err) return err;
  const int op = ((const rw_params *)params)->op, slot = type_slot(x->dtype);
  if (slot < 0 || out->dtype != x->dtype || op < 0 || op > 3)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "unsupported dtype or op");
  if (g.rows * g.OW == 0) return 0;
  int64_t one_stride = x->itemsize, xs[MAXD];
  for (int i = 0; i < g.nd; ++i) xs[i] = x->ndim ? x->strides[i] : one_stride;
  const int threads = pb_kernel_threads(ctx, g.rows * g.OW * g.ntaps_max * g.w[g.m], RW_GRAIN);
  if (x->dtype == PB_F32 && xs[g.m] == 4 && pool2x2(&g)) {
    pool2x2_forward(&g, x, out, op, xs, threads);
    return 0;
  }
  if (x->dtype == PB_F32 && pool2x2_nhwc(&g, xs)) {
    pool2x2_nhwc_forward(&g, x, out, op, xs, threads);
    return 0;
  }
  per_thread pt;
  if ((err = thread_scratch(ctx, &g, threads, (size_t)g.OW * 8, &pt))) return err;
  const char *xd = x->data;
  char *od = out->data;
  const int64_t orow = g.OW * x->itemsize;
  RW_PARALLEL(threads) {
    char *mine = pt.base + pt.each * (size_t)RW_TID;
    int64_t *taps = (int64_t *)mine;
    void *acc = mine + (size_t)g.ntaps_max * 2 * sizeof(int64_t);
    int64_t r0, r1;
    chunk(g.rows, RW_TID, RW_NT, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
      int64_t nt = row_taps(&g, r, xs, taps, NULL, NULL);
      char *orow_p = od + r * orow;
      void *a = acc_direct[slot] ? (void *)orow_p : acc;
      fwd_row(slot, &g, op, xd, taps, nt, xs[g.m], a);
      if (!acc_direct[slot]) store_row(slot, acc, orow_p, g.OW);
    }
  }
  return 0;
}

/* The scatter kernels' frame: each group of rows owns operand block [grp * group_elems, ...);
 * halves accumulate in a float32 copy of the output. */
typedef struct {
  float *wide; /* float32 accumulators (halves), else NULL */
  int64_t celem[MAXD]; /* contiguous element strides of the operand shape */
} scatter_frame;

static int scatter_setup(pb_kernel_ctx *ctx, const geom *g, const pb_operand *out,
                         scatter_frame *F) {
  int64_t st = 1;
  for (int i = g->nd - 1; i >= 0; --i) {
    F->celem[i] = st;
    st *= g->n[i];
  }
  F->wide = NULL;
  if (out->dtype == PB_F16 || out->dtype == PB_BF16) {
    F->wide = ctx->scratch(ctx, (size_t)(st ? st : 1) * sizeof(float));
    if (!F->wide) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory for scratch");
  }
  return 0;
}

/* adds v at element e of the output (or its float32 copy) */
#define SCATTER_ADD(T, ACC)                                                                       \
  do {                                                                                            \
    ((ACC *)dst)[e] += (ACC)v;                                                                    \
  } while (0)

static void finish_group(const scatter_frame *F, const pb_operand *out, int64_t e0, int64_t e1) {
  if (!F->wide) return;
  uint16_t *o = out->data;
  if (out->dtype == PB_F16)
    for (int64_t e = e0; e < e1; ++e) o[e] = pb_float_to_half(F->wide[e]);
  else
    for (int64_t e = e0; e < e1; ++e) o[e] = pb_f32_to_bf16(F->wide[e]);
}

static void zero_group(const scatter_frame *F, const pb_operand *out, int64_t e0, int64_t e1) {
  if (F->wide) memset(F->wide + e0, 0, (size_t)(e1 - e0) * sizeof(float));
  else memset((char *)out->data + e0 * out->itemsize, 0, (size_t)(e1 - e0) * out->itemsize);
}

/* element type tag of the accumulators of a scatter into `dtype` */
#define DISPATCH_ADD(dtype, e, vexpr)                                                             \
  do {                                                                                            \
    switch (dtype) {                                                                              \
    case PB_F16: case PB_BF16: F.wide[e] += (float)(vexpr); break;                                \
    case PB_F32: ((float *)od)[e] += (float)(vexpr); break;                                       \
    case PB_F64: ((double *)od)[e] += (double)(vexpr); break;                                     \
    }                                                                                             \
  } while (0)

/* ---- reduce_window_sum_transpose: out (operand shape) = each ct element added over its window */
#define ST_ROW(T, ACC, LD)                                                                        \
  static PB_CLONES void T##_st_row(const geom *g, const char *ct, int64_t cstr, const int64_t *taps, \
                                   int64_t ntaps, ACC *dst) {                                    \
    const int m = g->m;                                                                           \
    const int64_t s = g->s[m], bd = g->bd[m], n = g->n[m], OW = g->OW;                            \
    for (int64_t t = 0; t < ntaps; ++t) {                                                         \
      ACC *row = dst + taps[t];                                                                   \
      for (int64_t kw = 0; kw < g->w[m]; ++kw) {                                                  \
        int64_t f, l, c;                                                                          \
        if (bd == 1) {                                                                            \
          last_range(g, kw, &f, &l, &c);                                                          \
          if (cstr == (int64_t)sizeof(T) && s == 1)                                               \
            for (int64_t ow = f; ow <= l; ++ow) row[ow + c] += (ACC)LD(((const T *)ct)[ow]);      \
          else                                                                                    \
            for (int64_t ow = f; ow <= l; ++ow)                                                   \
              row[ow * s + c] += (ACC)LD(*(const T *)(ct + ow * cstr));                           \
        } else {                                                                                  \
          c = kw * g->wd[m] - g->lo[m];                                                           \
          for (int64_t ow = 0; ow < OW; ++ow) {                                                   \
            int64_t p = ow * s + c;                                                               \
            if (p < 0 || p % bd || p / bd >= n) continue;                                         \
            row[p / bd] += (ACC)LD(*(const T *)(ct + ow * cstr));                                 \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }

typedef uint8_t u8_t;
typedef int8_t i8_t;
typedef int16_t i16_t;
typedef int32_t i32_t;
typedef int64_t i64_t;
typedef uint16_t u16_t;
typedef uint32_t u32_t;
typedef uint64_t u64_t;
typedef uint16_t f16_t;
typedef uint16_t bf16_t;
typedef float f32_t;
typedef double f64_t;
#define ST_ROW_T(NAME, ACC, LD) ST_ROW(NAME##_t, ACC, LD)
ST_ROW_T(u8, uint8_t, LD_ID)
ST_ROW_T(i8, int8_t, LD_ID)
ST_ROW_T(i16, int16_t, LD_ID)
ST_ROW_T(i32, int32_t, LD_ID)
ST_ROW_T(i64, int64_t, LD_ID)
ST_ROW_T(u16, uint16_t, LD_ID)
ST_ROW_T(u32, uint32_t, LD_ID)
ST_ROW_T(u64, uint64_t, LD_ID)
ST_ROW_T(f16, float, LD_F16)
ST_ROW_T(bf16, float, LD_BF16)
ST_ROW_T(f32, float, LD_ID)
ST_ROW_T(f64, double, LD_ID)

static void st_row(int slot, const geom *g, const char *ct, int64_t cstr, const int64_t *taps,
                   int64_t ntaps, void *dst) {
  switch (slot) {
  case 0: u8_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 1: i8_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 2: i16_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 3: i32_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 4: i64_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 5: u16_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 6: u32_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 7: u64_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 8: f16_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 9: bf16_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 10: f32_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  case 12: u8_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  default: f64_t_st_row(g, ct, cstr, taps, ntaps, dst); break;
  }
}

/* a row's operand offsets in the row's group block: taps are relative to the group start */
static int sum_transpose_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *ct = &ins[0];
  pb_operand *out = &outs[0];
  geom g;
  int err = check_params(out, ct, params, &g, ctx, "reduce_window_sum_transpose");
  if (err) return err;
  const int slot = type_slot(ct->dtype);
  if (slot < 0 || out->dtype != ct->dtype || ct->dtype == PB_BOOL)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "unsupported dtype");
  scatter_frame F;
  if ((err = scatter_setup(ctx, &g, out, &F))) return err;
  int threads = pb_kernel_threads(ctx, g.rows * g.OW * g.ntaps_max * g.w[g.m] + 1, RW_GRAIN);
  if (threads > g.groups) threads = (int)(g.groups > 0 ? g.groups : 1);
  per_thread pt;
  if ((err = thread_scratch(ctx, &g, threads, 0, &pt))) return err;
  int64_t cs[MAXD];
  for (int i = 0; i < g.nd; ++i) cs[i] = ct->ndim ? ct->strides[i] : ct->itemsize;
  if (ct->dtype == PB_F32 && cs[g.m] == 4 && pool2x2(&g)) {
    pool2x2_spread(&g, ct, out, cs, threads);
    return 0;
  }
  const int64_t rpg = g.groups ? g.rows / g.groups : 0;
  const char *cd = ct->data;
  char *base = F.wide ? (char *)F.wide : (char *)out->data;
  RW_PARALLEL(threads) {
    int64_t *taps = (int64_t *)(pt.base + pt.each * (size_t)RW_TID);
    int64_t g0, g1;
    chunk(g.groups, RW_TID, RW_NT, &g0, &g1);
    for (int64_t grp = g0; grp < g1; ++grp) {
      int64_t e0 = grp * g.group_elems, e1 = e0 + g.group_elems;
      zero_group(&F, out, e0, e1);
      for (int64_t r = grp * rpg; r < (grp + 1) * rpg && g.OW; ++r) {
        int64_t nt = row_taps(&g, r, F.celem, taps, NULL, NULL);
        int64_t ct_off = 0, rr = r;
        for (int i = g.m - 1; i >= 0; --i) {
          ct_off += (rr % g.on[i]) * cs[i];
          rr /= g.on[i];
        }
        st_row(slot, &g, cd + ct_off, cs[g.m], taps, nt, base);
      }
      finish_group(&F, out, e0, e1);
    }
  }
  return 0;
}

/* ---- select_and_gather_add(t, x) -> window grid; select_and_scatter_add(src, x) -> x's shape */
static int select_kernel(const pb_operand *ins, pb_operand *outs, const void *params,
                         pb_kernel_ctx *ctx, bool scatter) {
  const pb_operand *a = &ins[0], *x = &ins[1];
  pb_operand *out = &outs[0];
  const pb_operand *grid = scatter ? a : out; /* the operand shaped as the window grid */
  geom g;
  const char *what = scatter ? "select_and_scatter_add" : "select_and_gather_add";
  int err = check_params(x, grid, params, &g, ctx, what);
  if (err) return err;
  const int op = ((const rw_params *)params)->op, slot = type_slot(x->dtype);
  if (slot < 0 || !is_float(a->dtype) || out->dtype != a->dtype || (op != OP_MAX && op != OP_MIN))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "unsupported dtype or op");
  if (!scatter && !pb_operand_same_shape(a, x))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "tangents and operand shapes differ");
  int64_t xs[MAXD], as[MAXD];
  for (int i = 0; i < g.nd; ++i) {
    xs[i] = x->ndim ? x->strides[i] : x->itemsize;
    as[i] = a->ndim ? a->strides[i] : a->itemsize;
  }
  scatter_frame F;
  if (scatter && (err = scatter_setup(ctx, &g, out, &F))) return err;
  const int64_t work = g.rows * g.OW * g.ntaps_max * g.w[g.m] + 1;
  int threads = pb_kernel_threads(ctx, work, RW_GRAIN);
  if (scatter && x->dtype == PB_F32 && a->dtype == PB_F32 && xs[g.m] == 4 && as[g.m] == 4 &&
      pool2x2(&g)) {
    pool2x2_scatter(&g, a, x, out, op == OP_MAX, xs, as, threads);
    return 0;
  }
  if (scatter && x->dtype == PB_F32 && a->dtype == PB_F32 && pool2x2_nhwc(&g, xs) &&
      as[g.m] == 4 && as[g.m - 1] == 4 * g.n[g.m]) {
    pool2x2_nhwc_scatter(&g, a, x, out, op == OP_MAX, xs, as, threads);
    return 0;
  }
  if (!scatter && x->dtype == PB_F32 && a->dtype == PB_F32 && xs[g.m] == 4 && as[g.m] == 4 &&
      pool2x2(&g)) {
    pool2x2_gather(&g, a, x, out, op == OP_MAX, xs, as, threads);
    return 0;
  }
  if (scatter && threads > g.groups) threads = (int)(g.groups > 0 ? g.groups : 1);
  per_thread pt;
  if ((err = thread_scratch(ctx, &g, threads, (size_t)g.OW * 8, &pt))) return err;
  const bool is_max = op == OP_MAX;
  const int adt = a->dtype;
  const char *xd = x->data, *ad = a->data;
  char *od = out->data;
  const int64_t rpg = scatter ? (g.groups ? g.rows / g.groups : 0) : 0;
  const int64_t ntasks = scatter ? g.groups : g.rows;
  RW_PARALLEL(threads) {
    char *mine = pt.base + pt.each * (size_t)RW_TID;
    int64_t *ta = (int64_t *)mine, *tb = ta + g.ntaps_max;
    void *best = mine + (size_t)g.ntaps_max * 2 * sizeof(int64_t);
    int64_t *pick = (int64_t *)((char *)best + (size_t)g.OW * 8);
    int64_t t0, t1;
    chunk(ntasks, RW_TID, RW_NT, &t0, &t1);
    for (int64_t task = t0; task < t1; ++task) {
      int64_t r0 = scatter ? task * rpg : task, r1 = scatter ? r0 + rpg : task + 1;
      int64_t e0 = task * g.group_elems, e1 = e0 + g.group_elems;
      if (scatter) zero_group(&F, out, e0, e1);
      for (int64_t r = r0; r < r1 && g.OW; ++r) {
        /* gather: picks are byte offsets into t; scatter: element offsets into the output */
        int64_t nt = row_taps(&g, r, xs, ta, scatter ? F.celem : as, tb);
        select_row(slot, &g, is_max, xd, ta, tb, nt, xs[g.m], scatter ? 1 : as[g.m], best,
                   pick, (float *)(pick + g.OW));
        if (scatter) {
          int64_t so = 0, rr = r;
          for (int i = g.m - 1; i >= 0; --i) {
            so += (rr % g.on[i]) * as[i];
            rr /= g.on[i];
          }
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            if (pick[ow] == NONE) continue;
            const int64_t e = pick[ow];
            DISPATCH_ADD(adt, e, ld_float(adt, ad + so + ow * as[g.m]));
          }
        } else {
          char *orow = od + r * g.OW * out->itemsize;
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            double v = pick[ow] == NONE ? 0.0 : ld_float(adt, ad + pick[ow]);
            switch (adt) {
            case PB_F16: ((uint16_t *)orow)[ow] = pb_float_to_half((float)v); break;
            case PB_BF16: ((uint16_t *)orow)[ow] = pb_f32_to_bf16((float)v); break;
            case PB_F32: ((float *)orow)[ow] = (float)v; break;
            default: ((double *)orow)[ow] = v; break;
            }
          }
        }
      }
      if (scatter) finish_group(&F, out, e0, e1);
    }
  }
  return 0;
}

static int gather_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                         const void *params, pb_kernel_ctx *ctx) {
  return select_kernel(ins, outs, params, ctx, false);
}

static int scatter_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                          const void *params, pb_kernel_ctx *ctx) {
  return select_kernel(ins, outs, params, ctx, true);
}

static const pb_kernel_def kernels[] = {
  {"reduce_window", reduce_window_kernel, 1, 1, sizeof(rw_params)},
  {"reduce_window_sum_transpose", sum_transpose_kernel, 1, 1, sizeof(rw_params)},
  {"select_and_gather_add", gather_kernel, 2, 1, sizeof(rw_params)},
  {"select_and_scatter_add", scatter_kernel, 2, 1, sizeof(rw_params)},
};
PB_KERNELS(kernels)
