/* Image resizing kernels (primitives/resize.py, pullback.image): "resize_contract" and
 * "resize_repeat".
 *
 * resize_contract(x, w; axis): y = x contracted along `axis` with the (m, n) weight matrix w,
 *     y[..., j, ...] = sum_i w[i, j] x[..., i, ...]
 * jax.image's separable resampling applies one such contraction per spatial dimension. Its
 * weight columns are bands: only a few contiguous taps of each output are nonzero. The kernel
 * finds each column's nonzero band (first to last nonzero entry; a NaN counts as nonzero), packs
 * the bands into a (n, K) table in the compute type and runs only those taps, so a 2x linear
 * upsample costs two multiply-adds per output instead of m. Any w is correct (a zero inside a
 * band is multiplied like any weight): the transpose w.r.t. x is this kernel on w's transposed
 * view. float16/bfloat16 compute in float32 and round once on store, float32 in float32, float64
 * in float64.
 *   Layout: x is seen as (O, m, R) (outer dims, the axis, the inner dims). With R > 1, a task is
 *   one output row (o, j) of R values: the band's input rows are summed chunk by chunk in a
 *   stack accumulator (a vectorized multiply-add over contiguous rows). With R == 1 (the last
 *   axis), a task is one row o: short dot products per output.
 *
 * resize_repeat(x; factors): each element repeated factors[d] times along each dimension d
 *     y[..., i * f + k, ...] = x[..., i, ...]   (0 <= k < f)
 * (nearest-neighbour upsampling by integer factors, any dtype): the first copy of each block is
 * written element by element at the innermost dimension, then copied whole (memcpy) f - 1 times
 * at each dimension outwards, so each output byte is written once and x is read once. */
#include "kernel_abi.h"
#include "cast.h"
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define RESIZE_GRAIN 65536 /* multiply-adds per thread below which work is not split */
#define CHUNK 256          /* accumulator length of one inner-row pass (on the stack) */
#define MAX_REPEAT_DIMS 8  /* resize_repeat's params: a factor per dimension */

typedef struct {
  int32_t axis, pad;
} contract_params;

typedef struct {
  int32_t ndim;
  int32_t factors[MAX_REPEAT_DIMS];
} repeat_params;

/* ---- loads and stores in the compute type ---- */

#define LD_F32(p) (*(const float *)(p))
#define LD_F64(p) (*(const double *)(p))
#define LD_F16(p) pb_half_to_float(*(const uint16_t *)(p))
#define LD_BF16(p) pb_bf16_to_f32(*(const uint16_t *)(p))
#define ST_F32(p, v) (*(float *)(p) = (v))
#define ST_F64(p, v) (*(double *)(p) = (v))
#define ST_F16(p, v) (*(uint16_t *)(p) = pb_float_to_half(v))
#define ST_BF16(p, v) (*(uint16_t *)(p) = pb_f32_to_bf16(v))

/* Everything a task needs. */
typedef struct {
  const char *x;
  char *y;
  int nouter;                   /* outer dims (before the axis) */
  const int64_t *oshape, *ostr; /* their sizes and x's byte strides */
  int64_t m, n, R, K;
  int64_t sm, sr;               /* x's byte strides along the axis and the (merged) inner dims */
  int64_t isz;
  const int64_t *lo, *cnt;      /* each output's band: first input index, number of taps */
  const void *wt;               /* (n, K) taps in the compute type */
  const int32_t *lo32;          /* last axis, contiguous: K taps from lo32[j] for every j ... */
  const void *wpad;             /* ... with these (n, K) weights (zero-padded bands) */
} contract_job;

static inline int64_t outer_offset(const contract_job *J, int64_t o) {
  int64_t off = 0;
  for (int d = J->nouter - 1; d >= 0; --d) {
    const int64_t i = o % J->oshape[d];
    o /= J->oshape[d];
    off += i * J->ostr[d];
  }
  return off;
}

/* One output row (o, j) of R values: y_row = sum_t wt[j, t] x[o, lo_j + t, :]. */
#define ROW_TASK(NAME, T, CT, LD, ST)                                                             \
  static PB_CLONES int NAME(const contract_job *J, int64_t o, int64_t j, int64_t xoff) {         \
    const CT *w = (const CT *)J->wt + j * J->K;                                                   \
    int bad = 0;                                                                                  \
    const int64_t c = J->cnt[j], R = J->R, sr = J->sr;                                            \
    const char *xb = J->x + xoff + J->lo[j] * J->sm;                                             \
    T *yr = (T *)J->y + (o * J->n + j) * R;                                                       \
    CT acc[CHUNK];                                                                                \
    for (int64_t r0 = 0; r0 < R; r0 += CHUNK) {                                                   \
      const int64_t len = R - r0 < CHUNK ? R - r0 : CHUNK;                                        \
      for (int64_t k = 0; k < len; ++k) acc[k] = 0;                                               \
      for (int64_t t = 0; t < c; ++t) {                                                           \
        const CT wv = w[t];                                                                       \
        const char *xr = xb + t * J->sm + r0 * sr;                                                \
        if (sr == (int64_t)sizeof(T)) {                                                           \
          const T *xp = (const T *)xr;                                                            \
          for (int64_t k = 0; k < len; ++k) acc[k] += wv * LD(&xp[k]);                            \
        } else {                                                                                  \
          for (int64_t k = 0; k < len; ++k) acc[k] += wv * LD(xr + k * sr);                       \
        }                                                                                         \
      }                                                                                           \
      for (int64_t k = 0; k < len; ++k) {                                                         \
        bad |= acc[k] - acc[k] != 0; /* NaN or Inf */                                             \
        ST(&yr[r0 + k], acc[k]);                                                                  \
      }                                                                                           \
    }                                                                                             \
    return bad;                                                                                   \
  }

/* One row o along the last axis: y[o, j] = sum_t wt[j, t] x[o, lo_j + t]. Strided rows take
 * each band's own taps; contiguous rows take K taps for every output (the bands padded with
 * zero weights, lo32 moved left where a band would run past the row), with K a constant for
 * the common widths so the loop over outputs vectorizes (gathers of the taps). */
#define LAST_TASK(NAME, T, CT, LD, ST)                                                            \
  static inline __attribute__((always_inline)) int NAME##_k(                                     \
      const CT *wt, const int32_t *lo, const T *x, T *y, int64_t n, const int64_t K) {          \
    int bad = 0;                                                                                  \
    for (int64_t j = 0; j < n; ++j) {                                                             \
      const CT *w = wt + j * K;                                                                   \
      const T *xp = x + lo[j];                                                                    \
      CT acc = 0;                                                                                 \
      for (int64_t t = 0; t < K; ++t) acc += w[t] * LD(&xp[t]);                                   \
      bad |= acc - acc != 0;                                                                      \
      ST(&y[j], acc);                                                                             \
    }                                                                                             \
    return bad;                                                                                   \
  }                                                                                               \
  static PB_CLONES int NAME(const contract_job *J, int64_t o, int64_t xoff) {                    \
    T *yr = (T *)J->y + o * J->n;                                                                 \
    const int64_t K = J->K, sm = J->sm;                                                           \
    if (sm == (int64_t)sizeof(T) && J->lo32) {                                                    \
      const CT *wp = (const CT *)J->wpad;                                                         \
      const T *xr = (const T *)(J->x + xoff);                                                     \
      switch (K) {                                                                                \
        case 1: return NAME##_k(wp, J->lo32, xr, yr, J->n, 1);                                   \
        case 2: return NAME##_k(wp, J->lo32, xr, yr, J->n, 2);                                   \
        case 3: return NAME##_k(wp, J->lo32, xr, yr, J->n, 3);                                   \
        case 4: return NAME##_k(wp, J->lo32, xr, yr, J->n, 4);                                   \
        case 5: return NAME##_k(wp, J->lo32, xr, yr, J->n, 5);                                   \
        case 6: return NAME##_k(wp, J->lo32, xr, yr, J->n, 6);                                   \
        case 8: return NAME##_k(wp, J->lo32, xr, yr, J->n, 8);                                   \
        default: return NAME##_k(wp, J->lo32, xr, yr, J->n, K);                                  \
      }                                                                                           \
    }                                                                                             \
    const CT *wt = (const CT *)J->wt;                                                             \
    const char *xr = J->x + xoff;                                                                 \
    int bad = 0;                                                                                  \
    for (int64_t j = 0; j < J->n; ++j) {                                                          \
      const CT *w = wt + j * K;                                                                   \
      const char *xp = xr + J->lo[j] * sm;                                                        \
      CT acc = 0;                                                                                 \
      for (int64_t t = 0; t < J->cnt[j]; ++t) acc += w[t] * LD(xp + t * sm);                      \
      bad |= acc - acc != 0;                                                                      \
      ST(&yr[j], acc);                                                                            \
    }                                                                                             \
    return bad;                                                                                   \
  }

ROW_TASK(row_f32, float, float, LD_F32, ST_F32)
ROW_TASK(row_f64, double, double, LD_F64, ST_F64)
ROW_TASK(row_f16, uint16_t, float, LD_F16, ST_F16)
ROW_TASK(row_bf16, uint16_t, float, LD_BF16, ST_BF16)
LAST_TASK(last_f32, float, float, LD_F32, ST_F32)
LAST_TASK(last_f64, double, double, LD_F64, ST_F64)
LAST_TASK(last_f16, uint16_t, float, LD_F16, ST_F16)
LAST_TASK(last_bf16, uint16_t, float, LD_BF16, ST_BF16)

static double load_weight(const char *p, int dtype) {
  switch (dtype) {
    case PB_F32: return LD_F32(p);
    case PB_F64: return LD_F64(p);
    case PB_F16: return LD_F16(p);
    default: return LD_BF16(p);
  }
}

static int is_float_dtype(int d) {
  return d == PB_F16 || d == PB_BF16 || d == PB_F32 || d == PB_F64;
}

/* Copies a strided operand into contiguous memory (an odometer over its index space). */
static void gather_contiguous(const pb_operand *x, char *dst) {
  const int nd = x->ndim;
  const int64_t total = pb_operand_size(x), isz = x->itemsize;
  int64_t idx[PB_KERNEL_MAXDIMS] = {0};
  const char *src = (const char *)x->data;
  for (int64_t e = 0; e < total; ++e) {
    memcpy(dst + e * isz, src, (size_t)isz);
    for (int d = nd - 1; d >= 0; --d) {
      src += x->strides[d];
      if (++idx[d] < x->shape[d]) break;
      src -= x->strides[d] * x->shape[d];
      idx[d] = 0;
    }
  }
}

/* One weight matrix's bands: lo/cnt/wt as the job reads them; lo32/wpad when `padded`. */
typedef struct {
  int64_t m, n, K;
  int64_t *lo, *cnt;
  char *wt;
  int32_t *lo32;
  char *wpad;
} bands;

static int make_bands(const pb_operand *w, size_t csz, int padded, bands *B,
                      pb_kernel_ctx *ctx) {
  const int64_t m = w->shape[0], n = w->shape[1];
  const int f64 = csz == sizeof(double);
  B->m = m;
  B->n = n;
  B->lo32 = NULL;
  B->wpad = NULL;
  B->lo = ctx->scratch(ctx, 2 * (size_t)(n ? n : 1) * sizeof(int64_t));
  if (!B->lo) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
  B->cnt = B->lo + n;
  int64_t K = 0;
  const char *wd = (const char *)w->data;
  for (int64_t j = 0; j < n; ++j) {
    int64_t first = -1, last = -1;
    for (int64_t i = 0; i < m; ++i) {
      const double v = load_weight(wd + i * w->strides[0] + j * w->strides[1], w->dtype);
      if (v != 0) { /* NaN != 0 too */
        if (first < 0) first = i;
        last = i;
      }
    }
    B->lo[j] = first < 0 ? 0 : first;
    B->cnt[j] = first < 0 ? 0 : last - first + 1;
    if (B->cnt[j] > K) K = B->cnt[j];
  }
  B->K = K;
  B->wt = ctx->scratch(ctx, (size_t)(n * (K ? K : 1)) * csz);
  if (!B->wt) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
  for (int64_t j = 0; j < n; ++j)
    for (int64_t t = 0; t < B->cnt[j]; ++t) {
      const double v = load_weight(wd + (B->lo[j] + t) * w->strides[0] + j * w->strides[1],
                                   w->dtype);
      if (f64) ((double *)B->wt)[j * K + t] = v;
      else ((float *)B->wt)[j * K + t] = (float)v;
    }
  if (padded && K > 0 && m < INT32_MAX) {
    B->lo32 = ctx->scratch(ctx, (size_t)n * sizeof(int32_t));
    B->wpad = ctx->scratch(ctx, (size_t)(n * K) * csz);
    if (!B->lo32 || !B->wpad) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
    memset(B->wpad, 0, (size_t)(n * K) * csz);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t l = B->lo[j] < m - K ? B->lo[j] : m - K, shift = B->lo[j] - l;
      B->lo32[j] = (int32_t)l;
      memcpy(B->wpad + (size_t)(j * K + shift) * csz, B->wt + (size_t)(j * K) * csz,
             (size_t)B->cnt[j] * csz);
    }
  }
  return 0;
}

static contract_job job_of(const bands *B, const char *x, char *y, int nouter,
                           const int64_t *oshape, const int64_t *ostr, int64_t R, int64_t sm,
                           int64_t sr, int64_t isz) {
  contract_job J = {x, y, nouter, oshape, ostr, B->m, B->n, R, B->K, sm, sr, isz,
                    B->lo, B->cnt, B->wt, NULL, NULL};
  if (R == 1 && sm == isz) {
    J.lo32 = B->lo32;
    J.wpad = B->wpad;
  }
  return J;
}

/* Output row j of outer index o (R > 1), or all of row o (R == 1); whether an output is
 * NaN or Inf. */
static int run_task(const contract_job *J, int dtype, int64_t o, int64_t j, int64_t xoff) {
  if (J->R > 1) {
    switch (dtype) {
      case PB_F32: return row_f32(J, o, j, xoff);
      case PB_F64: return row_f64(J, o, j, xoff);
      case PB_F16: return row_f16(J, o, j, xoff);
      default: return row_bf16(J, o, j, xoff);
    }
  }
  switch (dtype) {
    case PB_F32: return last_f32(J, o, xoff);
    case PB_F64: return last_f64(J, o, xoff);
    case PB_F16: return last_f16(J, o, xoff);
    default: return last_bf16(J, o, xoff);
  }
}

/* ---- NaN and Inf outside the bands ----
 * The dense sum multiplies every input by its weight, and 0 * Inf or 0 * NaN is NaN: a
 * non-finite input outside output j's band makes y[j] NaN (as jax.image and the reference
 * compute it). A non-finite input inside some band makes that band's output non-finite, so the
 * kernel looks further only when an output came out non-finite or when some input row lies in
 * no band; then, per line along the axis, the first and last non-finite inputs decide which
 * outputs have one outside their band. */

static int nonfinite(const char *p, int dtype) {
  const double v = load_weight(p, dtype);
  return v - v != 0;
}

/* Whether an input row that no band covers holds a NaN or Inf. */
static int uncovered_nonfinite(const contract_job *J, const bands *B, int dtype, int64_t O) {
  const int64_t m = J->m;
  for (int64_t i = 0; i < m; ++i) {
    int covered = 0;
    for (int64_t j = 0; j < J->n && !covered; ++j)
      covered = i >= B->lo[j] && i < B->lo[j] + B->cnt[j];
    if (covered) continue;
    for (int64_t o = 0; o < O; ++o) {
      const char *xr = J->x + outer_offset(J, o) + i * J->sm;
      for (int64_t r = 0; r < J->R; ++r)
        if (nonfinite(xr + r * J->sr, dtype)) return 1;
    }
  }
  return 0;
}

static void store_nan(char *p, int dtype) {
  switch (dtype) {
    case PB_F32: ST_F32(p, NAN); break;
    case PB_F64: ST_F64(p, NAN); break;
    case PB_F16: ST_F16(p, NAN); break;
    default: ST_BF16(p, NAN); break;
  }
}

static void nan_outside_bands(const contract_job *J, int dtype, int64_t O) {
  const int64_t m = J->m, n = J->n, R = J->R, isz = J->isz;
  for (int64_t o = 0; o < O; ++o) {
    const char *xo = J->x + outer_offset(J, o);
    for (int64_t r = 0; r < R; ++r) {
      int64_t first = -1, last = -1;
      for (int64_t i = 0; i < m; ++i)
        if (nonfinite(xo + i * J->sm + r * J->sr, dtype)) {
          if (first < 0) first = i;
          last = i;
        }
      if (first < 0) continue;
      for (int64_t j = 0; j < n; ++j)
        if (J->cnt[j] == 0 || first < J->lo[j] || last >= J->lo[j] + J->cnt[j])
          store_nan(J->y + ((o * n + j) * R + r) * isz, dtype);
    }
  }
}

/* x's dims after `axis` merged into one stride (*sr), or x copied to contiguous memory: the
 * data and strides to read x with. */
static int inner_view(const pb_operand *x, int axis, const char **xd, const int64_t **xstr,
                      int64_t *cstr, int64_t *sr, pb_kernel_ctx *ctx) {
  const int nd = x->ndim;
  const int64_t isz = x->itemsize;
  int64_t expect = 0;
  int merged = 1, first = 1; /* (strides may be negative: no sentinel value) */
  *xd = (const char *)x->data;
  *xstr = x->strides;
  *sr = isz;
  for (int d = nd - 1; d > axis; --d) {
    if (x->shape[d] == 1) continue;
    if (first) *sr = x->strides[d];
    else if (x->strides[d] != expect) merged = 0;
    first = 0;
    expect = x->strides[d] * x->shape[d];
  }
  if (merged) return 0;
  char *c = ctx->scratch(ctx, (size_t)(pb_operand_size(x) * isz));
  if (!c) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
  gather_contiguous(x, c);
  int64_t s = isz;
  for (int d = nd - 1; d >= 0; --d) {
    cstr[d] = s;
    s *= x->shape[d];
  }
  *xd = c;
  *xstr = cstr;
  *sr = isz;
  return 0;
}

static int check_contract(const pb_operand *x, const pb_operand *w, const pb_operand *y,
                          int axis, pb_kernel_ctx *ctx) {
  if (axis < 0 || axis >= x->ndim || w->ndim != 2 || !is_float_dtype(x->dtype) ||
      w->dtype != x->dtype || w->shape[0] != x->shape[axis] || w->shape[1] != y->shape[axis])
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "params do not fit the operands");
  return 0;
}

static int contract_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                           const void *params, pb_kernel_ctx *ctx) {
  const contract_params *p = (const contract_params *)params;
  const pb_operand *x = &ins[0], *w = &ins[1];
  pb_operand *y = &outs[0];
  const int nd = x->ndim, axis = p->axis;
  if (y->ndim != nd || y->dtype != x->dtype || check_contract(x, w, y, axis, ctx))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "params do not fit the operands");
  for (int d = 0; d < nd; ++d)
    if (d != axis && y->shape[d] != x->shape[d])
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "the output does not fit x");
  const int64_t m = w->shape[0], n = w->shape[1], isz = x->itemsize;
  const int64_t total = pb_operand_size(y);
  if (total == 0) return 0;
  if (m == 0) { /* an empty sum */
    memset(y->data, 0, (size_t)(total * isz));
    return 0;
  }
  const size_t csz = x->dtype == PB_F64 ? sizeof(double) : sizeof(float);
  int64_t O = 1, R = 1;
  for (int d = 0; d < axis; ++d) O *= x->shape[d];
  for (int d = axis + 1; d < nd; ++d) R *= x->shape[d];
  const char *xd;
  const int64_t *xstr;
  int64_t cstr[PB_KERNEL_MAXDIMS], sr;
  if (inner_view(x, axis, &xd, &xstr, cstr, &sr, ctx)) return ctx->error;
  bands B;
  if (make_bands(w, csz, R == 1 && xstr[axis] == isz, &B, ctx)) return ctx->error;
  const contract_job J = job_of(&B, xd, (char *)y->data, axis, x->shape, xstr, R, xstr[axis],
                                sr, isz);
  const int threads = pb_kernel_threads(ctx, total * (B.K ? B.K : 1), RESIZE_GRAIN);
  const int64_t tasks = R > 1 ? O * n : O, per = R > 1 ? n : 1;
  int bad = 0;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1) reduction(|:bad)
  for (int64_t q = 0; q < tasks; ++q) {
    const int64_t o = q / per;
    bad |= run_task(&J, x->dtype, o, q % per, outer_offset(&J, o));
  }
  if (bad || uncovered_nonfinite(&J, &B, x->dtype, O)) nan_outside_bands(&J, x->dtype, O);
  return 0;
}

/* ---- resize_repeat ---- */

typedef struct {
  int nd;
  const int64_t *xshape, *xstr;
  int64_t ystr[PB_KERNEL_MAXDIMS]; /* the output's byte strides (C-contiguous) */
  int64_t f[PB_KERNEL_MAXDIMS];
  int64_t isz;
} repeat_job;

/* The innermost dimension: each element f times. */
#define REPEAT_LAST(NAME, T)                                                                      \
  static void NAME(const char *x, int64_t sx, int64_t n, int64_t f, char *y) {                   \
    T *yp = (T *)y;                                                                               \
    if (f == 2) {                                                                                 \
      for (int64_t i = 0; i < n; ++i) {                                                           \
        const T v = *(const T *)(x + i * sx);                                                     \
        yp[2 * i] = v;                                                                            \
        yp[2 * i + 1] = v;                                                                        \
      }                                                                                           \
      return;                                                                                     \
    }                                                                                             \
    for (int64_t i = 0; i < n; ++i) {                                                             \
      const T v = *(const T *)(x + i * sx);                                                       \
      for (int64_t k = 0; k < f; ++k) yp[i * f + k] = v;                                          \
    }                                                                                             \
  }
REPEAT_LAST(rep_last1, uint8_t)
REPEAT_LAST(rep_last2, uint16_t)
REPEAT_LAST(rep_last4, uint32_t)
REPEAT_LAST(rep_last8, uint64_t)

/* The block of dims d.. of one index prefix: x at `x`, its first output copy at `y`. */
static void repeat_block(const repeat_job *J, int d, const char *x, char *y) {
  const int64_t n = J->xshape[d], f = J->f[d], sx = J->xstr[d];
  if (d == J->nd - 1) {
    switch (J->isz) {
      case 1: rep_last1(x, sx, n, f, y); return;
      case 2: rep_last2(x, sx, n, f, y); return;
      case 4: rep_last4(x, sx, n, f, y); return;
      case 8: rep_last8(x, sx, n, f, y); return;
      default:
        for (int64_t i = 0; i < n; ++i)
          for (int64_t k = 0; k < f; ++k)
            memcpy(y + (i * f + k) * J->isz, x + i * sx, (size_t)J->isz);
        return;
    }
  }
  const int64_t ys = J->ystr[d];
  for (int64_t i = 0; i < n; ++i) {
    char *yb = y + i * f * ys;
    repeat_block(J, d + 1, x + i * sx, yb);
    for (int64_t k = 1; k < f; ++k) memcpy(yb + k * ys, yb, (size_t)ys);
  }
}

static int repeat_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                         const void *params, pb_kernel_ctx *ctx) {
  const repeat_params *p = (const repeat_params *)params;
  const pb_operand *x = &ins[0];
  pb_operand *y = &outs[0];
  const int nd = x->ndim;
  if (nd != p->ndim || nd > MAX_REPEAT_DIMS || y->ndim != nd || y->dtype != x->dtype ||
      y->itemsize != x->itemsize)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "params do not fit the operands");
  repeat_job J;
  J.nd = nd;
  J.xshape = x->shape;
  J.xstr = x->strides;
  J.isz = x->itemsize;
  for (int d = 0; d < nd; ++d) {
    J.f[d] = p->factors[d];
    if (J.f[d] < 1 || y->shape[d] != x->shape[d] * J.f[d])
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "params do not fit the operands");
  }
  const int64_t total = pb_operand_size(y);
  if (total == 0) return 0;
  if (nd == 0) {
    memcpy(y->data, x->data, (size_t)J.isz);
    return 0;
  }
  int64_t s = J.isz;
  for (int d = nd - 1; d >= 0; --d) {
    J.ystr[d] = s;
    s *= y->shape[d];
  }
  /* tasks: the index prefixes of the leading dims, enough of them to share among threads */
  const int threads = pb_kernel_threads(ctx, total, PB_GRAIN_CHEAP);
  int lead = 0;
  int64_t tasks = 1;
  while (lead < nd - 1 && tasks < 4 * (int64_t)threads) tasks *= x->shape[lead++];
  if (threads <= 1) {
    lead = 0;
    tasks = 1;
  }
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t q = 0; q < tasks; ++q) {
    int64_t rem = q, xo = 0, yo = 0, idx[MAX_REPEAT_DIMS];
    for (int d = lead - 1; d >= 0; --d) {
      idx[d] = rem % x->shape[d];
      rem /= x->shape[d];
      xo += idx[d] * J.xstr[d];
      yo += idx[d] * J.f[d] * J.ystr[d];
    }
    char *yb = (char *)y->data + yo;
    repeat_block(&J, lead, (const char *)x->data + xo, yb);
    /* the copies along the leading dims' factors: every other combination of offsets */
    int64_t combos = 1;
    for (int d = 0; d < lead; ++d) combos *= J.f[d];
    const size_t bytes = (size_t)(lead > 0 ? J.ystr[lead - 1] : 0);
    for (int64_t c = 1; c < combos; ++c) {
      int64_t r = c, off = 0;
      for (int d = lead - 1; d >= 0; --d) {
        off += (r % J.f[d]) * J.ystr[d];
        r /= J.f[d];
      }
      memcpy(yb + off, yb, bytes);
    }
  }
  return 0;
}

static const pb_kernel_def kernels[] = {
  {"resize_contract", contract_kernel, 2, 1, sizeof(contract_params)},
  {"resize_repeat", repeat_kernel, 1, 1, sizeof(repeat_params)},
};
PB_KERNELS(kernels)
