/* Rotary position embeddings (primitives/rope.py): one kernel, "rope", for pullback.nn.rope and
 * pullback.nn.rope_axial and for their derivatives.
 *
 * x is (..., T, H, D). Its features form pairs (a, b) that turn by an angle phi per pair:
 * rotate-half pairs (i, i + R/2) for i < R/2 (R = rotary_dim, features >= R pass through),
 * interleaved pairs (2i, 2i + 1); axial (SAM 2) pairs are interleaved over the whole of D, the
 * first D/4 turning with the column x = t mod end_x, the last D/4 with the row y = t div end_x.
 * Frequencies are 1/theta^(2i/R) (1/theta^(4i/D) per axis for axial); the angle is
 * position * frequency, computed in float32 (float64 for float64 x) as JAX-style reference code
 * computes it, cos and sin once per token and reused by every head.
 *
 * The derivative family: with order k and sign s the kernel writes
 *     f^k R(s (phi + k pi/2)) (a, b)   (the pass-through features: x for k = 0, else 0),
 * so d/dposition of member (k, s) is member (k + 1, s) times the position's tangent, and the
 * transpose in x of member (k, s) is member (k, -s): every rule of the primitive is itself. The
 * quarter turns are applied exactly (swaps and negations), not as an added pi/2.
 *
 * Rows (one token of one batch element: H*D values) run in parallel; each thread keeps its own
 * cos/sin table in the call's scratch. */
#include "kernel_abi.h"
#include "cast.h"
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
  double theta;
  int32_t rotary_dim, interleaved, end_x, order, sign, pad;
} rope_params;

#define ROPE_GRAIN 32768 /* elements per thread below which rows are not split */

/* One row: its angles' (scaled, quarter-turned) cosines and sines in cs[0..np), sn[0..np), then
 * every head. LD/ST load and store one element as CT. */
#define ROPE_ROW(NAME, T, CT, LD, ST)                                                             \
  static PB_CLONES void NAME(const char *xr, char *yr, int64_t H, int64_t D, int64_t sh, int64_t sd,        \
                   int64_t np, int64_t half, int interleaved, int64_t rot, int pass_zero,        \
                   const CT *cs, const CT *sn) {                                                  \
    for (int64_t h = 0; h < H; ++h) {                                                             \
      const char *xh = xr + h * sh;                                                               \
      T *y = (T *)(yr + h * D * (int64_t)sizeof(T));                                              \
      if (sd == (int64_t)sizeof(T)) { /* contiguous features: loops the compiler vectorizes */    \
        const T *xp = (const T *)xh;                                                              \
        if (interleaved) {                                                                        \
          for (int64_t i = 0; i < np; ++i) {                                                      \
            const CT a = LD(xp[2 * i]), b = LD(xp[2 * i + 1]);                                    \
            y[2 * i] = ST(a * cs[i] - b * sn[i]);                                                 \
            y[2 * i + 1] = ST(a * sn[i] + b * cs[i]);                                             \
          }                                                                                       \
        } else {                                                                                  \
          for (int64_t i = 0; i < np; ++i) {                                                      \
            const CT a = LD(xp[i]), b = LD(xp[i + half]);                                         \
            y[i] = ST(a * cs[i] - b * sn[i]);                                                     \
            y[i + half] = ST(a * sn[i] + b * cs[i]);                                              \
          }                                                                                       \
        }                                                                                         \
      } else if (interleaved) {                                                                   \
        for (int64_t i = 0; i < np; ++i) {                                                        \
          const CT a = LD(*(const T *)(xh + 2 * i * sd)), b = LD(*(const T *)(xh + (2 * i + 1) * sd)); \
          y[2 * i] = ST(a * cs[i] - b * sn[i]);                                                   \
          y[2 * i + 1] = ST(a * sn[i] + b * cs[i]);                                               \
        }                                                                                         \
      } else {                                                                                    \
        for (int64_t i = 0; i < np; ++i) {                                                        \
          const CT a = LD(*(const T *)(xh + i * sd)), b = LD(*(const T *)(xh + (i + half) * sd)); \
          y[i] = ST(a * cs[i] - b * sn[i]);                                                       \
          y[i + half] = ST(a * sn[i] + b * cs[i]);                                                \
        }                                                                                         \
      }                                                                                           \
      for (int64_t j = rot; j < D; ++j)                                                           \
        y[j] = pass_zero ? ST((CT)0) : *(const T *)(xh + j * sd);                                 \
    }                                                                                             \
  }

#define ID(v) (v)
ROPE_ROW(row_f32, float, float, ID, ID)
ROPE_ROW(row_f64, double, double, ID, ID)
ROPE_ROW(row_f16, uint16_t, float, pb_half_to_float, pb_float_to_half)
ROPE_ROW(row_bf16, uint16_t, float, pb_bf16_to_f32, pb_f32_to_bf16)

/* A position as CT (integers convert as JAX's astype does). */
static double load_pos(const char *p, int dtype) {
  switch (dtype) {
    case PB_I8: return *(const int8_t *)p;
    case PB_I16: return *(const int16_t *)p;
    case PB_I32: return *(const int32_t *)p;
    case PB_I64: return (double)*(const int64_t *)p;
    case PB_U8: return *(const uint8_t *)p;
    case PB_U16: return *(const uint16_t *)p;
    case PB_U32: return *(const uint32_t *)p;
    case PB_U64: return (double)*(const uint64_t *)p;
    case PB_F16: return pb_half_to_float(*(const uint16_t *)p);
    case PB_BF16: return pb_bf16_to_f32(*(const uint16_t *)p);
    case PB_F32: return *(const float *)p;
    default: return *(const double *)p;
  }
}

static float load_pos_f32(const char *p, int dtype) {
  switch (dtype) { /* integers and float64 round once to float32, as astype(float32) */
    case PB_I64: return (float)*(const int64_t *)p;
    case PB_U64: return (float)*(const uint64_t *)p;
    case PB_F64: return (float)*(const double *)p;
    case PB_F32: return *(const float *)p;
    default: return (float)load_pos(p, dtype);
  }
}

/* (c, s) * i^q for the quarter turns q (mod 4), then scaled. */
#define QUARTER(CT, c, s, q, scale)                                                               \
  do {                                                                                            \
    CT c0 = (c), s0 = (s);                                                                        \
    switch (q) {                                                                                  \
      case 1: c = -s0; s = c0; break;                                                             \
      case 2: c = -c0; s = -s0; break;                                                            \
      case 3: c = s0; s = -c0; break;                                                             \
      default: break;                                                                             \
    }                                                                                             \
    c *= (scale);                                                                                 \
    s *= (scale);                                                                                 \
  } while (0)

typedef struct {
  const pb_operand *pos; /* NULL: axial */
  const char *freq;
  int64_t np, end_x;
  int sign, order, q, f64;
} angle_job;

/* The (scaled, quarter-turned) cosines and sines of token t's angles into out[0..np) and
 * out[np..2np), in the compute type; p points at its position (NULL: axial). */
static void angles(const angle_job *A, const char *p, int64_t t, char *out) {
  const int64_t np = A->np;
  if (A->f64) {
    double pv = 0, px = 0, py = 0;
    if (p) pv = load_pos(p, A->pos->dtype);
    else { px = (double)(t % A->end_x); py = (double)(t / A->end_x); }
    double *cs = (double *)out, *sn = cs + np;
    for (int64_t i = 0; i < np; ++i) {
      const double f = ((const double *)A->freq)[i];
      const double a = (p ? pv : (i < np / 2 ? px : py)) * f;
      double c = cos(a), s = A->sign * sin(a), sc = 1;
      for (int k = 0; k < A->order; ++k) sc *= f;
      QUARTER(double, c, s, A->q, sc);
      cs[i] = c;
      sn[i] = s;
    }
  } else {
    float pv = 0, px = 0, py = 0;
    if (p) pv = load_pos_f32(p, A->pos->dtype);
    else { px = (float)(t % A->end_x); py = (float)(t / A->end_x); }
    float *cs = (float *)out, *sn = cs + np;
    for (int64_t i = 0; i < np; ++i) {
      const float f = ((const float *)A->freq)[i];
      const float a = (p ? pv : (i < np / 2 ? px : py)) * f;
      float c = cosf(a), s = (float)A->sign * sinf(a), sc = 1;
      for (int k = 0; k < A->order; ++k) sc *= f;
      QUARTER(float, c, s, A->q, sc);
      cs[i] = c;
      sn[i] = s;
    }
  }
}

static int rope_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                       const void *params, pb_kernel_ctx *ctx) {
  const rope_params *p = (const rope_params *)params;
  const pb_operand *x = &ins[0], *pos = nin > 1 ? &ins[1] : NULL;
  pb_operand *y = &outs[0];
  if (nin < 1 || nin > 2 || nout != 1 || x->ndim < 3 || !pb_operand_same_shape(x, y) ||
      x->dtype != y->dtype)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operands do not fit (x, positions) -> y");
  const int nd = x->ndim;
  const int64_t T = x->shape[nd - 3], H = x->shape[nd - 2], D = x->shape[nd - 1];
  const int axial = p->end_x > 0;
  if (axial ? (pos != NULL || D % 4 != 0 || T % p->end_x != 0)
            : (pos == NULL || pos->ndim != nd - 2 || p->rotary_dim < 0 || p->rotary_dim > D ||
               p->rotary_dim % 2 != 0))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "params do not fit the operands");
  if (pos)
    for (int d = 0; d < nd - 2; ++d)
      if (pos->shape[d] != x->shape[d])
        return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "positions do not fit x");
  if (x->dtype != PB_F16 && x->dtype != PB_BF16 && x->dtype != PB_F32 && x->dtype != PB_F64)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "x must be floating");
  const int64_t rot = axial ? D : p->rotary_dim, np = rot / 2, half = rot / 2;
  const int interleaved = axial || p->interleaved;
  int64_t rows = 1;
  for (int d = 0; d < nd - 2; ++d) rows *= x->shape[d];
  if (rows == 0 || H == 0 || D == 0) return 0;
  const int64_t q = (((int64_t)p->sign * p->order) % 4 + 4) % 4;
  const int f64 = x->dtype == PB_F64;
  const int pass_zero = p->order > 0;
  const int threads = pb_kernel_threads(ctx, rows * H * D, ROPE_GRAIN);
  const size_t esz = f64 ? sizeof(double) : sizeof(float);
  char *freq = np ? ctx->scratch(ctx, (size_t)np * esz) : NULL;
  if (np && !freq) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
  /* frequencies, rounded once to the compute type */
  for (int64_t i = 0; i < np; ++i) {
    const double e = axial ? (double)(4 * (i % (D / 4))) / (double)D : (double)(2 * i) / (double)rot;
    const double f = 1.0 / pow(p->theta, e);
    if (f64) ((double *)freq)[i] = f;
    else ((float *)freq)[i] = (float)f;
  }
  const int64_t *xs = x->strides, sh = xs[nd - 2], sd = xs[nd - 1];
  const int64_t rowbytes = H * D * (int64_t)y->itemsize;
  /* positions the same for every batch element (a (T,) broadcast, or axial): each token's
   * cos/sin once in a shared table, instead of once per row */
  int shared = rows > T;
  if (pos)
    for (int d = 0; d < nd - 3; ++d) shared &= pos->strides[d] == 0 || pos->shape[d] == 1;
  const size_t per = 2 * (size_t)np * esz;
  if (shared && (size_t)T * per > ((size_t)64 << 20)) shared = 0;
  char *table = NULL;
  if (np) {
    table = ctx->scratch(ctx, shared ? (size_t)T * per : (size_t)threads * per);
    if (!table) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
  }
  angle_job A = {pos, freq, np, p->end_x, p->sign < 0 ? -1 : 1, p->order, (int)q, f64};
  if (shared && np) {
    const int tt = pb_kernel_threads(ctx, T * np, ROPE_GRAIN / 16);
#pragma omp parallel for num_threads(tt) schedule(static) if (tt > 1)
    for (int64_t t = 0; t < T; ++t)
      angles(&A, pos ? (const char *)pos->data + t * pos->strides[nd - 3] : NULL, t,
             table + (size_t)t * per);
  }
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#ifdef _OPENMP
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      /* the row's offsets in x and positions (leading dims ..., T) */
      int64_t rem = r, xo = 0, po = 0;
      for (int d = nd - 3; d >= 0; --d) {
        const int64_t i = rem % x->shape[d];
        rem /= x->shape[d];
        xo += i * xs[d];
        if (pos) po += i * pos->strides[d];
      }
      const int64_t t = r % T;
      char *cs = table;
      if (np && shared) cs = table + (size_t)t * per;
      else if (np) {
        cs = table + (size_t)tid * per;
        angles(&A, pos ? (const char *)pos->data + po : NULL, t, cs);
      }
      const char *sn = cs + (size_t)np * esz;
      const char *xr = (const char *)x->data + xo;
      char *yr = (char *)y->data + r * rowbytes;
      switch (x->dtype) {
        case PB_F32: row_f32(xr, yr, H, D, sh, sd, np, half, interleaved, rot, pass_zero,
                             (const float *)cs, (const float *)sn); break;
        case PB_F64: row_f64(xr, yr, H, D, sh, sd, np, half, interleaved, rot, pass_zero,
                             (const double *)cs, (const double *)sn); break;
        case PB_F16: row_f16(xr, yr, H, D, sh, sd, np, half, interleaved, rot, pass_zero,
                             (const float *)cs, (const float *)sn); break;
        default: row_bf16(xr, yr, H, D, sh, sd, np, half, interleaved, rot, pass_zero,
                          (const float *)cs, (const float *)sn); break;
      }
    }
  }
  return 0;
}

static const pb_kernel_def kernels[] = {
  {"rope", rope_kernel, -1, 1, sizeof(rope_params)},
};
PB_KERNELS(kernels)
