/* Softmax cross-entropy (primitives/cross_entropy.py): one kernel, "softmax_cross_entropy", for
 * pullback.nn.softmax_cross_entropy (probability labels) and
 * softmax_cross_entropy_with_integer_labels, and for their derivatives. The class axis is the
 * last one; every other dimension is a row, rows run in parallel.
 *
 * Per row (logits l, optional mask m, labels y: one-hot of an integer label, or probabilities;
 * lse = log sum_{m_c} exp(l_c); p_c = m_c exp(l_c - lse)):
 *   LOSS   -> (...)     int: lse - l[label] (0 for a fully masked row, NaN for a label
 *                       outside [-C, C), negative labels counting from the end, as JAX's
 *                       take_along_axis); prob: sum_{m_c} y_c (lse - l_c)
 *   TAN    t -> (...)   sum_c (Y p_c - y_c m_c) t_c  (Y = sum_c m_c y_c; int: y is the label's
 *                       one-hot, unmasked, Y = 1, and a fully masked row gives 0)
 *   GRAD   g -> (..., C) g (Y p_c - y_c m_c)          (TAN's transpose)
 *   LGRAD  g -> (..., C) g m_c (lse - l_c)           (LOSS's transpose in probability labels)
 *   PROBS    -> (..., C) p_c                          (for the second-order rules)
 * The one-hot is never built: the label's column is one index. Each row is read from memory
 * once, into a buffer in the compute type (float32; float64 for float64 logits; strides and
 * 16-bit formats handled there); the max, the exp-sum and the output pass then run over that
 * buffer in cache, with the vectorizable exp of ewise_math.h. */
#include "kernel_abi.h"
#include "cast.h"
#include "ewise_math.h"
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
  int32_t mode, integer, has_where, pad;
} xent_params;

enum { XENT_LOSS, XENT_TAN, XENT_GRAD, XENT_LGRAD, XENT_PROBS };

#define XENT_GRAIN 16384 /* elements per thread below which rows are not split */

/* ---- element access ---- */

static inline double ld_f(const char *p, int dtype) {
  switch (dtype) {
    case PB_F16: return pb_half_to_float(*(const uint16_t *)p);
    case PB_BF16: return pb_bf16_to_f32(*(const uint16_t *)p);
    case PB_F32: return *(const float *)p;
    default: return *(const double *)p;
  }
}

static inline int64_t ld_i(const char *p, int dtype, int *ok) {
  *ok = 1;
  switch (dtype) {
    case PB_I8: return *(const int8_t *)p;
    case PB_I16: return *(const int16_t *)p;
    case PB_I32: return *(const int32_t *)p;
    case PB_I64: return *(const int64_t *)p;
    case PB_U8: return *(const uint8_t *)p;
    case PB_U16: return *(const uint16_t *)p;
    case PB_U32: return *(const uint32_t *)p;
    default: {
      const uint64_t u = *(const uint64_t *)p;
      if (u > (uint64_t)INT64_MAX) *ok = 0;
      return (int64_t)u;
    }
  }
}

static inline void st_f(char *p, int dtype, double v) {
  switch (dtype) {
    case PB_F16: *(uint16_t *)p = pb_float_to_half((float)v); break;
    case PB_BF16: *(uint16_t *)p = pb_f32_to_bf16((float)v); break;
    case PB_F32: *(float *)p = (float)v; break;
    default: *(double *)p = v; break;
  }
}

/* A row of n floats at p (byte stride s) into buf, as CT. */
#define LOAD_ROW(NAME, CT)                                                                        \
  static void NAME(const char *p, int64_t s, int64_t n, int dtype, CT *buf) {                    \
    switch (dtype) {                                                                              \
      case PB_F32:                                                                                \
        if (s == 4) { const float *q = (const float *)p;                                          \
          for (int64_t i = 0; i < n; ++i) buf[i] = (CT)q[i]; }                                    \
        else for (int64_t i = 0; i < n; ++i) buf[i] = (CT)*(const float *)(p + i * s);           \
        break;                                                                                    \
      case PB_F64:                                                                                \
        for (int64_t i = 0; i < n; ++i) buf[i] = (CT)*(const double *)(p + i * s);               \
        break;                                                                                    \
      case PB_F16:                                                                                \
        for (int64_t i = 0; i < n; ++i) buf[i] = (CT)pb_half_to_float(*(const uint16_t *)(p + i * s)); \
        break;                                                                                    \
      default:                                                                                    \
        for (int64_t i = 0; i < n; ++i) buf[i] = (CT)pb_bf16_to_f32(*(const uint16_t *)(p + i * s)); \
        break;                                                                                    \
    }                                                                                             \
  }
LOAD_ROW(load_row_f32, float)
LOAD_ROW(load_row_f64, double)

/* A row of n CT values into contiguous floats of dtype at p. */
#define STORE_ROW(NAME, CT)                                                                       \
  static void NAME(char *p, int64_t n, int dtype, const CT *buf) {                                \
    switch (dtype) {                                                                              \
      case PB_F32: { float *q = (float *)p; for (int64_t i = 0; i < n; ++i) q[i] = (float)buf[i]; } break; \
      case PB_F64: { double *q = (double *)p; for (int64_t i = 0; i < n; ++i) q[i] = (double)buf[i]; } break; \
      case PB_F16: { uint16_t *q = (uint16_t *)p;                                                 \
        for (int64_t i = 0; i < n; ++i) q[i] = pb_float_to_half((float)buf[i]); } break;          \
      default: { uint16_t *q = (uint16_t *)p;                                                     \
        for (int64_t i = 0; i < n; ++i) q[i] = pb_f32_to_bf16((float)buf[i]); } break;            \
    }                                                                                             \
  }
STORE_ROW(store_row_f32, float)
STORE_ROW(store_row_f64, double)

/* ---- the vector loops, per compute type ----
 * Reductions keep LANES independent partial results (a strict-IEEE build never reorders a
 * single sum, so one accumulator would run the exp polynomial one element at a time); the
 * target clones give them AVX2/AVX-512. */
#define XENT_VEC(CT, SUF, EXP, LANES)                                                             \
  static PB_CLONES CT max_##SUF(const CT *restrict b, int64_t n) {                                \
    CT m[LANES];                                                                                  \
    for (int j = 0; j < LANES; ++j) m[j] = -(CT)INFINITY;                                         \
    int64_t i = 0;                                                                                \
    for (; i + LANES <= n; i += LANES)                                                            \
      for (int j = 0; j < LANES; ++j) m[j] = b[i + j] > m[j] ? b[i + j] : m[j];                   \
    for (; i < n; ++i) m[0] = b[i] > m[0] ? b[i] : m[0];                                          \
    CT r = m[0];                                                                                  \
    for (int j = 1; j < LANES; ++j) r = m[j] > r ? m[j] : r;                                      \
    return r;                                                                                     \
  }                                                                                               \
  /* sum_i exp(b_i - sh) */                                                                      \
  static PB_CLONES CT sumexp_##SUF(const CT *restrict b, int64_t n, CT sh) {                      \
    CT s[LANES] = {0};                                                                            \
    int64_t i = 0;                                                                                \
    for (; i + LANES <= n; i += LANES)                                                            \
      for (int j = 0; j < LANES; ++j) s[j] += EXP(b[i + j] - sh);                                 \
    for (; i < n; ++i) s[0] += EXP(b[i] - sh);                                                    \
    CT r = 0;                                                                                     \
    for (int j = 0; j < LANES; ++j) r += s[j];                                                    \
    return r;                                                                                     \
  }                                                                                               \
  /* sum_i a_i * (c - b_i) */                                                                     \
  static PB_CLONES CT dotdiff_##SUF(const CT *restrict a, const CT *restrict b, int64_t n, CT c) { \
    CT s[LANES] = {0};                                                                            \
    int64_t i = 0;                                                                                \
    for (; i + LANES <= n; i += LANES)                                                            \
      for (int j = 0; j < LANES; ++j) s[j] += a[i + j] * (c - b[i + j]);                          \
    for (; i < n; ++i) s[0] += a[i] * (c - b[i]);                                                 \
    CT r = 0;                                                                                     \
    for (int j = 0; j < LANES; ++j) r += s[j];                                                    \
    return r;                                                                                     \
  }                                                                                               \
  /* out_i = exp(b_i - sh); returns their sum */                                                 \
  static PB_CLONES CT expstore_##SUF(const CT *restrict b, CT *restrict out, int64_t n, CT sh) {  \
    CT s[LANES] = {0};                                                                            \
    int64_t i = 0;                                                                                \
    for (; i + LANES <= n; i += LANES)                                                            \
      for (int j = 0; j < LANES; ++j) { out[i + j] = EXP(b[i + j] - sh); s[j] += out[i + j]; }    \
    for (; i < n; ++i) { out[i] = EXP(b[i] - sh); s[0] += out[i]; }                               \
    CT r = 0;                                                                                     \
    for (int j = 0; j < LANES; ++j) r += s[j];                                                    \
    return r;                                                                                     \
  }                                                                                               \
  /* sum_i exp(b_i - sh) (returned) and sum_i exp(b_i - sh) t_i (*dot), in one pass */            \
  static PB_CLONES CT expdot_##SUF(const CT *restrict b, const CT *restrict t, int64_t n, CT sh,  \
                                   CT *dot) {                                                     \
    CT s[LANES] = {0}, d[LANES] = {0};                                                            \
    int64_t i = 0;                                                                                \
    for (; i + LANES <= n; i += LANES)                                                            \
      for (int j = 0; j < LANES; ++j) {                                                           \
        const CT e = EXP(b[i + j] - sh);                                                          \
        s[j] += e;                                                                                \
        d[j] += e * t[i + j];                                                                     \
      }                                                                                           \
    for (; i < n; ++i) { const CT e = EXP(b[i] - sh); s[0] += e; d[0] += e * t[i]; }              \
    CT rs = 0, rd = 0;                                                                            \
    for (int j = 0; j < LANES; ++j) { rs += s[j]; rd += d[j]; }                                   \
    *dot = rd;                                                                                    \
    return rs;                                                                                    \
  }                                                                                               \
  static PB_CLONES void scale_##SUF(CT *restrict x, int64_t n, CT k) {                            \
    for (int64_t i = 0; i < n; ++i) x[i] *= k;                                                    \
  }                                                                                               \
  /* JAX's logsumexp shift: the max when it is finite, else 0 */                                  \
  static CT shift_##SUF(const CT *restrict b, int64_t n) {                                        \
    const CT mx = max_##SUF(b, n);                                                                \
    return isfinite(mx) ? mx : (CT)0;                                                             \
  }

XENT_VEC(float, f32, pb_expf, 16)
XENT_VEC(double, f64, pb_exp, 8)

typedef struct {
  const pb_operand *logits, *labels, *where, *extra; /* extra: t or g */
  pb_operand *out;
  int mode, integer, nlead;
  int64_t C;
} xent_job;

static inline int64_t lead_offset(const pb_operand *o, int nlead, int64_t r) {
  int64_t off = 0;
  for (int d = nlead - 1; d >= 0; --d) {
    const int64_t i = r % o->shape[d];
    r /= o->shape[d];
    off += i * o->strides[d];
  }
  return off;
}

/* One row in compute type CT: buf the logits (-inf where masked), yb the probability labels
 * (0 where masked), tb the tangent row or the output row, mk the mask (1: kept). A row with
 * some class kept has a finite or +inf lse, so exp(buf - lse) is 0 at masked classes. */
#define XENT_ROW(NAME, SUF, CT, LOADROW, STOREROW)                                                \
  static void NAME(const xent_job *J, int64_t r, CT *restrict buf, CT *restrict yb,               \
                   CT *restrict tb, uint8_t *restrict mk) {                                       \
    const int64_t C = J->C;                                                                       \
    const int nl = J->nlead, mode = J->mode;                                                      \
    const pb_operand *L = J->logits, *W = J->where, *Y = J->labels, *E = J->extra, *O = J->out;   \
    const int64_t cs = L->strides[nl];                                                            \
    const char *lrow = (const char *)L->data + lead_offset(L, nl, r);                             \
    /* contiguous logits of the compute type are read in place (buf is written only to mask) */   \
    const CT *lg = (const CT *)lrow;                                                              \
    if (W || cs != (int64_t)sizeof(CT) || L->itemsize != (int)sizeof(CT) ||                       \
        (sizeof(CT) == 4 && L->dtype != PB_F32)) {                                                \
      LOADROW(lrow, cs, C, L->dtype, buf);                                                        \
      lg = buf;                                                                                   \
    }                                                                                             \
    int64_t kept = C;                                                                             \
    if (W) {                                                                                      \
      const char *wrow = (const char *)W->data + lead_offset(W, nl, r);                           \
      const int64_t ws = W->strides[nl];                                                          \
      kept = 0;                                                                                   \
      for (int64_t c = 0; c < C; ++c) {                                                           \
        mk[c] = *(const uint8_t *)(wrow + c * ws) != 0;                                           \
        kept += mk[c];                                                                            \
        buf[c] = mk[c] ? buf[c] : -(CT)INFINITY;                                                  \
      }                                                                                           \
    }                                                                                             \
    const int row_out = mode == XENT_GRAD || mode == XENT_LGRAD || mode == XENT_PROBS;            \
    char *orow = (char *)O->data + (row_out ? r * C : r) * O->itemsize;                           \
    /* an output row of the compute type is written in place */                                   \
    const int direct_out = O->itemsize == (int)sizeof(CT) && (sizeof(CT) == 8 || O->dtype == PB_F32); \
    if (W && kept == 0) {                                                                         \
      /* optax: a fully masked row's loss is 0, and so are its derivatives */                     \
      if (row_out) { for (int64_t c = 0; c < C; ++c) tb[c] = 0; STOREROW(orow, C, O->dtype, tb); } \
      else st_f(orow, O->dtype, 0.0);                                                             \
      return;                                                                                     \
    }                                                                                             \
    /* the softmax's one exp pass: e = exp(l - sh) and its sum se; p = e / se */                \
    const CT sh = shift_##SUF(lg, C);                                                             \
    CT se = 0, et = 0;                                                                            \
    CT *dst = direct_out ? (CT *)orow : tb;                                                       \
    if (mode == XENT_GRAD || mode == XENT_PROBS) se = expstore_##SUF(lg, dst, C, sh);             \
    else if (mode != XENT_TAN) se = sumexp_##SUF(lg, C, sh);                                      \
    const CT lsh = (CT)log((double)se), lse = lsh + sh; /* (unused by TAN) */                    \
    int64_t label = -1;                                                                           \
    CT ysum = 1;                                                                                  \
    if (Y && J->integer) { /* JAX's take_along_axis: negative labels count from the end */       \
      int ok;                                                                                     \
      int64_t v = ld_i((const char *)Y->data + lead_offset(Y, nl, r), Y->dtype, &ok);             \
      if (ok && v < 0) v += C;                                                                    \
      if (ok && v >= 0 && v < C) label = v;                                                       \
    } else if (Y) {                                                                               \
      LOADROW((const char *)Y->data + lead_offset(Y, nl, r), Y->strides[nl], C, Y->dtype, yb);    \
      ysum = 0;                                                                                   \
      if (W) for (int64_t c = 0; c < C; ++c) yb[c] = mk[c] ? yb[c] : 0;                           \
      for (int64_t c = 0; c < C; ++c) ysum += yb[c];                                              \
    }                                                                                             \
    switch (mode) {                                                                               \
      case XENT_LOSS: {                                                                           \
        CT loss;                                                                                  \
        if (J->integer) {                                                                         \
          /* JAX's gather from an empty class axis reads 0: the loss is lse = -inf */           \
          loss = C == 0 ? lse : label < 0 ? (CT)NAN : lse - (CT)ld_f(lrow + label * cs, L->dtype); \
        } else if (W) { /* masked classes add nothing (not 0 * inf) */                           \
          for (int64_t c = 0; c < C; ++c) tb[c] = mk[c] ? lg[c] : sh;                            \
          loss = dotdiff_##SUF(yb, tb, C, sh) + ysum * lsh;                                       \
        } else { /* optax's log_softmax order: (sh - l) + log(se), exact at large logits */      \
          loss = dotdiff_##SUF(yb, lg, C, sh) + ysum * lsh;                                       \
        }                                                                                         \
        st_f(orow, O->dtype, (double)loss);                                                       \
        break;                                                                                    \
      }                                                                                           \
      case XENT_TAN: {                                                                            \
        LOADROW((const char *)E->data + lead_offset(E, nl, r), E->strides[nl], C, E->dtype, tb);  \
        se = expdot_##SUF(lg, tb, C, sh, &et);                                                    \
        const CT pt = et / se;                                                                    \
        CT yt = 0;                                                                                \
        if (J->integer) yt = label < 0 ? 0 : tb[label];                                           \
        else for (int64_t c = 0; c < C; ++c) yt += yb[c] * tb[c];                                 \
        st_f(orow, O->dtype, (double)(ysum * pt - yt));                                           \
        break;                                                                                    \
      }                                                                                           \
      case XENT_GRAD: {                                                                           \
        const CT g = (CT)ld_f((const char *)E->data + lead_offset(E, nl, r), E->dtype);           \
        scale_##SUF(dst, C, g * ysum / se);                                                       \
        if (J->integer) { if (label >= 0) dst[label] -= g; }                                      \
        else for (int64_t c = 0; c < C; ++c) dst[c] -= g * yb[c];                                 \
        if (!direct_out) STOREROW(orow, C, O->dtype, tb);                                         \
        break;                                                                                    \
      }                                                                                           \
      case XENT_LGRAD: {                                                                          \
        const CT g = (CT)ld_f((const char *)E->data + lead_offset(E, nl, r), E->dtype);           \
        if (W) for (int64_t c = 0; c < C; ++c) tb[c] = mk[c] ? g * ((sh - lg[c]) + lsh) : 0;     \
        else for (int64_t c = 0; c < C; ++c) tb[c] = g * ((sh - lg[c]) + lsh);                   \
        STOREROW(orow, C, O->dtype, tb);                                                          \
        break;                                                                                    \
      }                                                                                           \
      default: /* XENT_PROBS */                                                                   \
        scale_##SUF(dst, C, 1 / se);                                                              \
        if (!direct_out) STOREROW(orow, C, O->dtype, tb);                                         \
        break;                                                                                    \
    }                                                                                             \
  }

XENT_ROW(row_f32, f32, float, load_row_f32, store_row_f32)
XENT_ROW(row_f64, f64, double, load_row_f64, store_row_f64)

static int is_float(int dt) { return dt == PB_F16 || dt == PB_BF16 || dt == PB_F32 || dt == PB_F64; }

static int xent_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                       const void *params, pb_kernel_ctx *ctx) {
  const xent_params *p = (const xent_params *)params;
  const int mode = p->mode;
  if (mode < XENT_LOSS || mode > XENT_PROBS || nout != 1 || nin < 1)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "bad params");
  xent_job J = {0};
  J.mode = mode;
  J.integer = p->integer != 0;
  int k = 0;
  J.logits = &ins[k++];
  const int has_labels = mode != XENT_LGRAD && mode != XENT_PROBS;
  const int has_extra = mode == XENT_TAN || mode == XENT_GRAD || mode == XENT_LGRAD;
  if (nin != 1 + has_labels + (p->has_where != 0) + has_extra)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operand count does not fit the mode");
  if (has_labels) J.labels = &ins[k++];
  if (p->has_where) J.where = &ins[k++];
  if (has_extra) J.extra = &ins[k++];
  J.out = &outs[0];
  const pb_operand *L = J.logits;
  if (L->ndim < 1 || !is_float(L->dtype) || !is_float(J.out->dtype))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "logits must be floating, of rank >= 1");
  J.nlead = L->ndim - 1;
  J.C = L->shape[J.nlead];
  /* memory safety: every operand has the logits' leading shape (and its class axis) */
  const pb_operand *all[4] = {J.labels, J.where, J.extra, J.out};
  for (int i = 0; i < 4; ++i) {
    const pb_operand *o = all[i];
    if (!o) continue;
    const int rowwise = (o == J.labels && J.integer) || (o == J.extra && mode != XENT_TAN) ||
                        (o == J.out && (mode == XENT_LOSS || mode == XENT_TAN));
    if (o->ndim != J.nlead + !rowwise) return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operand ranks");
    for (int d = 0; d < o->ndim; ++d)
      if (o->shape[d] != L->shape[d]) return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operand shapes");
  }
  if (J.where && J.where->dtype != PB_BOOL) return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "where");
  if (J.labels && (J.integer ? (is_float(J.labels->dtype) || J.labels->dtype == PB_BOOL ||
                                J.labels->dtype < 0 || J.labels->dtype > PB_U64)
                             : !is_float(J.labels->dtype)))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "labels dtype");
  if (J.extra && !is_float(J.extra->dtype)) return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "t/g dtype");
  int64_t rows = 1;
  for (int d = 0; d < J.nlead; ++d) rows *= L->shape[d];
  if (rows == 0) return 0;
  const int f64 = L->dtype == PB_F64;
  const int threads = pb_kernel_threads(ctx, rows * (J.C > 0 ? J.C : 1), XENT_GRAIN);
  const size_t row = ((size_t)(J.C > 0 ? J.C : 1) * (f64 ? 8 : 4) + 63) & ~(size_t)63;
  const size_t per = 3 * row + (((size_t)(J.C > 0 ? J.C : 1) + 63) & ~(size_t)63);
  char *scratch = ctx->scratch(ctx, per * (size_t)threads);
  if (!scratch) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#ifdef _OPENMP
    char *buf = scratch + per * (size_t)omp_get_thread_num();
#else
    char *buf = scratch;
#endif
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      uint8_t *mk = (uint8_t *)(buf + 3 * row);
      if (f64) row_f64(&J, r, (double *)buf, (double *)(buf + row), (double *)(buf + 2 * row), mk);
      else row_f32(&J, r, (float *)buf, (float *)(buf + row), (float *)(buf + 2 * row), mk);
    }
  }
  return 0;
}

static const pb_kernel_def kernels[] = {
  {"softmax_cross_entropy", xent_kernel, -1, 1, sizeof(xent_params)},
};
PB_KERNELS(kernels)
