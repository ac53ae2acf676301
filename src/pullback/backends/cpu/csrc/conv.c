/* conv_general_dilated (primitives/conv.py): XLA's general convolution, any layout, any real
 * dtype, lhs and rhs dilation, padding (negative crops), feature and batch groups.
 *
 * Generic path (every dtype, rank and geometry): one task per (output batch, output feature),
 * accumulating its whole output plane in a per-thread buffer of the accumulation type. Each
 * spatial dimension gets a table, per kernel tap and output position, of the input position it
 * reads (-1 where it reads padding or a hole of the lhs dilation), so that strides, dilations
 * and padding cost a lookup and no zero is ever inserted or multiplied. float16/bfloat16
 * accumulate in float32 (float64 for a float64 result), integers in 64 bits (wrapping), float32
 * in float32, float64 in float64.
 *
 * Fast float32 paths (conv_fast.h: forward tap GEMM, Winograd; conv_grad.h: weight gradient,
 * depthwise) take the common geometries before it. */
#include "kernel_abi.h"
#include "cast.h"
#include <complex.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define CONV_MAXSP 6

typedef struct {
  int64_t nsp, fgc, bgc;
  int64_t lhs_spec[CONV_MAXSP + 2], rhs_spec[CONV_MAXSP + 2], out_spec[CONV_MAXSP + 2];
  int64_t stride[CONV_MAXSP], pad_lo[CONV_MAXSP], lhs_dil[CONV_MAXSP], rhs_dil[CONV_MAXSP];
} conv_params;

/* The geometry of one call, read through the dimension numbers. */
typedef struct {
  int nsp;
  int64_t N, C, O, Ci, G, B, Nb; /* lhs batch, features; kernel out, in features; groups */
  int64_t in[CONV_MAXSP], k[CONV_MAXSP], out[CONV_MAXSP];
  int64_t xs_n, xs_c, xs[CONV_MAXSP], ws_o, ws_i, ws[CONV_MAXSP], ys_n, ys_o, ys[CONV_MAXSP];
  int64_t stride[CONV_MAXSP], pad_lo[CONV_MAXSP], lhs_dil[CONV_MAXSP], rhs_dil[CONV_MAXSP];
  int64_t plane, taps; /* output positions, kernel taps */
  const char *x, *w;
  char *y;
  int32_t in_dt, out_dt;
  int accumulate; /* fast paths: add to y (a 3-D convolution's later depth taps), else store */
  const int64_t *idx[CONV_MAXSP]; /* idx[d][tap * out[d] + j]: input position or -1 */
  pb_kernel_ctx *follow; /* a fused epilogue's ctx when y's rows are pixels (channels last,
                          * pixel-major): the fast paths report finished pixels; else NULL */
} conv_geom;

static int conv_geometry(const pb_operand *ins, const pb_operand *out, const conv_params *p,
                         conv_geom *g, pb_kernel_ctx *ctx) {
  const pb_operand *x = &ins[0], *w = &ins[1];
  const int64_t nsp = p->nsp, nd = nsp + 2;
  if (nsp < 0 || nsp > CONV_MAXSP || x->ndim != nd || w->ndim != nd || out->ndim != nd)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operand ranks do not fit the parameters");
  for (int i = 0; i < nd; ++i)
    if (p->lhs_spec[i] < 0 || p->lhs_spec[i] >= nd || p->rhs_spec[i] < 0 ||
        p->rhs_spec[i] >= nd || p->out_spec[i] < 0 || p->out_spec[i] >= nd)
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "dimension numbers out of range");
  memset(g, 0, sizeof *g);
  g->nsp = (int)nsp;
  g->N = x->shape[p->lhs_spec[0]];
  g->C = x->shape[p->lhs_spec[1]];
  g->O = w->shape[p->rhs_spec[0]];
  g->Ci = w->shape[p->rhs_spec[1]];
  g->G = p->fgc;
  g->B = p->bgc;
  if (g->G < 1 || g->B < 1 || g->C != g->G * g->Ci || g->O % (g->G * g->B) || g->N % g->B)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "feature or batch groups do not fit");
  g->Nb = g->N / g->B;
  if (out->shape[p->out_spec[0]] != g->Nb || out->shape[p->out_spec[1]] != g->O)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "the output shape does not fit");
  g->xs_n = x->strides[p->lhs_spec[0]];
  g->xs_c = x->strides[p->lhs_spec[1]];
  g->ws_o = w->strides[p->rhs_spec[0]];
  g->ws_i = w->strides[p->rhs_spec[1]];
  g->ys_n = out->strides[p->out_spec[0]];
  g->ys_o = out->strides[p->out_spec[1]];
  g->plane = 1;
  g->taps = 1;
  for (int d = 0; d < nsp; ++d) {
    g->in[d] = x->shape[p->lhs_spec[2 + d]];
    g->k[d] = w->shape[p->rhs_spec[2 + d]];
    g->out[d] = out->shape[p->out_spec[2 + d]];
    g->xs[d] = x->strides[p->lhs_spec[2 + d]];
    g->ws[d] = w->strides[p->rhs_spec[2 + d]];
    g->ys[d] = out->strides[p->out_spec[2 + d]];
    g->stride[d] = p->stride[d];
    g->pad_lo[d] = p->pad_lo[d];
    g->lhs_dil[d] = p->lhs_dil[d];
    g->rhs_dil[d] = p->rhs_dil[d];
    if (g->stride[d] < 1 || g->lhs_dil[d] < 1 || g->rhs_dil[d] < 1)
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "strides and dilations must be positive");
    g->plane *= g->out[d];
    g->taps *= g->k[d];
  }
  g->x = x->data;
  g->w = w->data;
  g->y = out->data;
  g->in_dt = x->dtype;
  g->out_dt = out->dtype;
  if (w->dtype != x->dtype)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "lhs and rhs must share a dtype");
  return 0;
}

/* The position tables (scratch): every entry is an input position inside the operand or -1,
 * which is what keeps every read in bounds. */
static int conv_tables(conv_geom *g, pb_kernel_ctx *ctx) {
  for (int d = 0; d < g->nsp; ++d) {
    const int64_t n = g->k[d] * g->out[d];
    int64_t *t = ctx->scratch(ctx, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (!t) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory for position tables");
    for (int64_t kk = 0; kk < g->k[d]; ++kk)
      for (int64_t j = 0; j < g->out[d]; ++j) {
        const int64_t q = j * g->stride[d] + kk * g->rhs_dil[d] - g->pad_lo[d];
        int64_t i = -1;
        if (q >= 0 && q % g->lhs_dil[d] == 0 && q / g->lhs_dil[d] < g->in[d]) i = q / g->lhs_dil[d];
        t[kk * g->out[d] + j] = i;
      }
    g->idx[d] = t;
  }
  return 0;
}

/* ---- the generic loop, one per (input dtype, accumulation type) ---- */

#define LD_SELF(T) (*(const T *)(p))
#define LD_HALF(p) pb_half_to_float(*(const uint16_t *)(p))
#define LD_BF16(p) pb_bf16_to_f32(*(const pb_bf16 *)(p))

/* acc[plane] += sum over the group's input features and the taps, for output feature o of
 * output batch n */
#define GENERIC(NAME, TACC, LOAD)                                                                 \
  static void NAME(const conv_geom *g, int64_t n, int64_t o, TACC *acc) {                         \
    const int nsp = g->nsp;                                                                       \
    const int64_t opg = g->O / g->G, opb = g->O / g->B;                                           \
    const int64_t lhs_n = (o / opb) * g->Nb + n, c0 = (o / opg) * g->Ci;                           \
    const int64_t last = nsp ? g->out[nsp - 1] : 1, rows = last ? g->plane / last : 0;           \
    for (int64_t i = 0; i < (int64_t)g->plane; ++i) acc[i] = 0;                                   \
    if (!g->plane) return;                                                                        \
    for (int64_t ci = 0; ci < g->Ci; ++ci) {                                                       \
      const char *xb = g->x + lhs_n * g->xs_n + (c0 + ci) * g->xs_c;                              \
      const char *wb = g->w + o * g->ws_o + ci * g->ws_i;                                         \
      int64_t tap[CONV_MAXSP] = {0};                                                              \
      for (int64_t t = 0; t < g->taps; ++t) {                                                     \
        const char *wp = wb;                                                                      \
        for (int d = 0; d < nsp; ++d) wp += tap[d] * g->ws[d];                                    \
        const TACC wv = (TACC)LOAD(wp);                                                           \
        if (nsp == 0) {                                                                           \
          acc[0] += wv * (TACC)LOAD(xb);                                                          \
        } else {                                                                                  \
          const int L = nsp - 1;                                                                  \
          const int64_t *tl = g->idx[L] + tap[L] * last, xsl = g->xs[L];                          \
          int64_t j[CONV_MAXSP] = {0};                                                            \
          for (int64_t r = 0; r < rows; ++r) {                                                    \
            const char *xr = xb;                                                                  \
            int ok = 1;                                                                           \
            for (int d = 0; d < L; ++d) {                                                         \
              const int64_t ii = g->idx[d][tap[d] * g->out[d] + j[d]];                            \
              if (ii < 0) { ok = 0; break; }                                                      \
              xr += ii * g->xs[d];                                                                \
            }                                                                                     \
            if (ok) {                                                                             \
              TACC *ar = acc + r * last;                                                          \
              for (int64_t jj = 0; jj < last; ++jj) {                                             \
                const int64_t ii = tl[jj];                                                        \
                if (ii >= 0) {                                                                    \
                  const char *p = xr + ii * xsl;                                                  \
                  ar[jj] += wv * (TACC)LOAD(p);                                                   \
                }                                                                                 \
              }                                                                                   \
            }                                                                                     \
            for (int d = L - 1; d >= 0; --d) { /* next row */                                     \
              if (++j[d] < g->out[d]) break;                                                      \
              j[d] = 0;                                                                           \
            }                                                                                     \
          }                                                                                       \
        }                                                                                         \
        for (int d = nsp - 1; d >= 0; --d) { /* next tap */                                       \
          if (++tap[d] < g->k[d]) break;                                                          \
          tap[d] = 0;                                                                             \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }

#define LD_T(T) LD_##T
#define LD_i8(p) (*(const int8_t *)(p))
#define LD_i16(p) (*(const int16_t *)(p))
#define LD_i32(p) (*(const int32_t *)(p))
#define LD_i64(p) (*(const int64_t *)(p))
#define LD_u8(p) (*(const uint8_t *)(p))
#define LD_u16(p) (*(const uint16_t *)(p))
#define LD_u32(p) (*(const uint32_t *)(p))
#define LD_u64(p) (*(const uint64_t *)(p))
#define LD_f32(p) (*(const float *)(p))
#define LD_f64(p) (*(const double *)(p))
/* signed integers widen with their sign, then wrap as uint64 */
#define LD_i8w(p) ((uint64_t)(int64_t)LD_i8(p))
#define LD_i16w(p) ((uint64_t)(int64_t)LD_i16(p))
#define LD_i32w(p) ((uint64_t)(int64_t)LD_i32(p))
#define LD_i64w(p) ((uint64_t)LD_i64(p))

GENERIC(gen_i8_u, uint64_t, LD_i8w)
GENERIC(gen_i16_u, uint64_t, LD_i16w)
GENERIC(gen_i32_u, uint64_t, LD_i32w)
GENERIC(gen_i64_u, uint64_t, LD_i64w)
GENERIC(gen_u8_u, uint64_t, LD_u8)
GENERIC(gen_u16_u, uint64_t, LD_u16)
GENERIC(gen_u32_u, uint64_t, LD_u32)
GENERIC(gen_u64_u, uint64_t, LD_u64)
GENERIC(gen_i8_d, double, LD_i8)
GENERIC(gen_i16_d, double, LD_i16)
GENERIC(gen_i32_d, double, LD_i32)
GENERIC(gen_i64_d, double, LD_i64)
GENERIC(gen_u8_d, double, LD_u8)
GENERIC(gen_u16_d, double, LD_u16)
GENERIC(gen_u32_d, double, LD_u32)
GENERIC(gen_u64_d, double, LD_u64)
GENERIC(gen_f16_f, float, LD_HALF)
GENERIC(gen_bf16_f, float, LD_BF16)
GENERIC(gen_f32_f, float, LD_f32)
GENERIC(gen_f16_d, double, LD_HALF)
GENERIC(gen_bf16_d, double, LD_BF16)
GENERIC(gen_f32_d, double, LD_f32)
GENERIC(gen_f64_d, double, LD_f64)
#define LD_c64(p) (*(const float _Complex *)(p))
#define LD_c128(p) (*(const double _Complex *)(p))
GENERIC(gen_c64_c, float _Complex, LD_c64)
GENERIC(gen_c64_z, double _Complex, LD_c64)
GENERIC(gen_c128_z, double _Complex, LD_c128)

enum { ACC_U64, ACC_F32, ACC_F64, ACC_C64, ACC_C128 };

static int is_int(int dt) { return dt >= PB_I8 && dt <= PB_U64; }

/* the accumulation kind of (input, output) dtypes, or -1 */
static int acc_kind(int in, int out) {
  if (is_int(in)) return is_int(out) ? ACC_U64 : (out >= PB_F16 && out <= PB_F64) ? ACC_F64 : -1;
  if (in == PB_F16 || in == PB_BF16 || in == PB_F32)
    return (out == PB_F16 || out == PB_BF16 || out == PB_F32) ? ACC_F32 : out == PB_F64 ? ACC_F64 : -1;
  if (in == PB_F64) return out == PB_F64 ? ACC_F64 : (out >= PB_F16 && out <= PB_F32) ? ACC_F64 : -1;
  if (in == PB_C64) return out == PB_C64 ? ACC_C64 : out == PB_C128 ? ACC_C128 : -1;
  if (in == PB_C128) return out == PB_C128 || out == PB_C64 ? ACC_C128 : -1;
  return -1;
}

static void store_u64(int dt, char *p, uint64_t v) {
  switch (dt) {
    case PB_I8: case PB_U8: *(uint8_t *)p = (uint8_t)v; break;
    case PB_I16: case PB_U16: *(uint16_t *)p = (uint16_t)v; break;
    case PB_I32: case PB_U32: *(uint32_t *)p = (uint32_t)v; break;
    default: *(uint64_t *)p = v; break;
  }
}

static void store_f64(int dt, char *p, double v) {
  switch (dt) {
    case PB_F16: *(uint16_t *)p = pb_float_to_half(pb_f64_to_f32_odd(v)); break;
    case PB_BF16: *(pb_bf16 *)p = pb_f32_to_bf16(pb_f64_to_f32_odd(v)); break;
    case PB_F32: *(float *)p = (float)v; break;
    default: *(double *)p = v; break;
  }
}

static void store_f32(int dt, char *p, float v) {
  switch (dt) {
    case PB_F16: *(uint16_t *)p = pb_float_to_half(v); break;
    case PB_BF16: *(pb_bf16 *)p = pb_f32_to_bf16(v); break;
    default: *(float *)p = v; break;
  }
}

/* writes one accumulated plane to the output at (n, o) */
static void store_plane(const conv_geom *g, int64_t n, int64_t o, const void *acc, int kind) {
  char *yb = g->y + n * g->ys_n + o * g->ys_o;
  int64_t j[CONV_MAXSP] = {0};
  for (int64_t i = 0; i < g->plane; ++i) {
    char *p = yb;
    for (int d = 0; d < g->nsp; ++d) p += j[d] * g->ys[d];
    if (kind == ACC_U64) store_u64(g->out_dt, p, ((const uint64_t *)acc)[i]);
    else if (kind == ACC_F32) store_f32(g->out_dt, p, ((const float *)acc)[i]);
    else if (kind == ACC_F64) store_f64(g->out_dt, p, ((const double *)acc)[i]);
    else if (kind == ACC_C64) *(float _Complex *)p = ((const float _Complex *)acc)[i];
    else if (g->out_dt == PB_C64) *(float _Complex *)p = (float _Complex)((const double _Complex *)acc)[i];
    else *(double _Complex *)p = ((const double _Complex *)acc)[i];
    for (int d = g->nsp - 1; d >= 0; --d) {
      if (++j[d] < g->out[d]) break;
      j[d] = 0;
    }
  }
}

typedef void (*gen_u_fn)(const conv_geom *, int64_t, int64_t, uint64_t *);
typedef void (*gen_f_fn)(const conv_geom *, int64_t, int64_t, float *);
typedef void (*gen_d_fn)(const conv_geom *, int64_t, int64_t, double *);
typedef void (*gen_c_fn)(const conv_geom *, int64_t, int64_t, float _Complex *);
typedef void (*gen_z_fn)(const conv_geom *, int64_t, int64_t, double _Complex *);

static int conv_generic(conv_geom *g, pb_kernel_ctx *ctx) {
  const int kind = acc_kind(g->in_dt, g->out_dt);
  gen_u_fn fu = NULL;
  gen_f_fn ff = NULL;
  gen_d_fn fd = NULL;
  gen_c_fn fc = NULL;
  gen_z_fn fz = NULL;
  switch (g->in_dt) {
    case PB_I8: fu = gen_i8_u; fd = gen_i8_d; break;
    case PB_I16: fu = gen_i16_u; fd = gen_i16_d; break;
    case PB_I32: fu = gen_i32_u; fd = gen_i32_d; break;
    case PB_I64: fu = gen_i64_u; fd = gen_i64_d; break;
    case PB_U8: fu = gen_u8_u; fd = gen_u8_d; break;
    case PB_U16: fu = gen_u16_u; fd = gen_u16_d; break;
    case PB_U32: fu = gen_u32_u; fd = gen_u32_d; break;
    case PB_U64: fu = gen_u64_u; fd = gen_u64_d; break;
    case PB_F16: ff = gen_f16_f; fd = gen_f16_d; break;
    case PB_BF16: ff = gen_bf16_f; fd = gen_bf16_d; break;
    case PB_F32: ff = gen_f32_f; fd = gen_f32_d; break;
    case PB_F64: fd = gen_f64_d; break;
    case PB_C64: fc = gen_c64_c; fz = gen_c64_z; break;
    case PB_C128: fz = gen_c128_z; break;
    default: break;
  }
  if (kind < 0 || (kind == ACC_U64 && !fu) || (kind == ACC_F32 && !ff) || (kind == ACC_F64 && !fd) ||
      (kind == ACC_C64 && !fc) || (kind == ACC_C128 && !fz))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "unsupported dtypes");
  const int64_t tasks = g->Nb * g->O;
  if (tasks == 0) return 0;
  int rc = conv_tables(g, ctx);
  if (rc) return rc;
  const double work = (double)tasks * (double)g->plane * (double)(g->Ci * g->taps + 1);
  const int nt = pb_kernel_threads(ctx, (int64_t)(work < 9e18 ? work : 9e18), 1 << 16);
  const size_t esz = kind == ACC_F32 ? 4 : kind == ACC_C128 ? 16 : 8;
  char *bufs = ctx->scratch(ctx, (size_t)nt * (size_t)(g->plane ? g->plane : 1) * esz + 64);
  if (!bufs) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory for accumulators");
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
  for (int64_t t = 0; t < tasks; ++t) {
#ifdef _OPENMP
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    void *acc = bufs + (size_t)tid * (size_t)(g->plane ? g->plane : 1) * esz;
    const int64_t n = t / g->O, o = t % g->O;
    if (kind == ACC_U64) fu(g, n, o, acc);
    else if (kind == ACC_F32) ff(g, n, o, acc);
    else if (kind == ACC_F64) fd(g, n, o, acc);
    else if (kind == ACC_C64) fc(g, n, o, acc);
    else fz(g, n, o, acc);
    store_plane(g, n, o, acc, kind);
  }
  return 0;
}

/* the fast paths' float32 stores: y = v, or y += v when accumulating */
static inline void put1(const conv_geom *g, char *dst, float v) {
  float *p = (float *)dst;
  *p = g->accumulate ? *p + v : v;
}

static inline void put_f32(const conv_geom *g, char *dst, int64_t st, const float *src, int64_t n) {
  if (!g->accumulate && st == 4) memcpy(dst, src, (size_t)n * 4);
  else for (int64_t i = 0; i < n; ++i) put1(g, dst + i * st, src[i]);
}

#include "conv_fast.h"
#include "conv_grad.h"

/* a 1-D or 2-D geometry's fast path: 1 (done), 0 (none takes it), -1 (error) */
static int conv_fast2(conv_geom *g, pb_kernel_ctx *ctx) {
  int rc;
  if (!(rc = conv_fast_depthwise(g, ctx)) && !(rc = conv_fast_winograd_wgrad(g, ctx)) &&
      !(rc = conv_fast_wgrad(g, ctx)) && !(rc = conv_fast_depthwise_wgrad(g, ctx)) &&
      !(rc = conv_fast_winograd(g, ctx)))
    rc = conv_fast_forward(g, ctx);
  return rc;
}

/* A 3-D float32 convolution as 2-D ones: output depth slice od is the sum over the depth taps
 * kd that land on an input slice of the 2-D convolution of that slice with kernel slice kd (the
 * first stores, the others add, in kd order). 0 when the 2-D paths do not take its slices. */
static int conv_fast3(const conv_geom *g, pb_kernel_ctx *ctx) {
  if (g->nsp != 3 || g->in_dt != PB_F32 || g->out_dt != PB_F32) return 0;
  conv_geom s = *g;
  s.nsp = 2;
  s.follow = NULL; /* later depth taps add to a slice */
  for (int d = 0; d < 2; ++d) {
    s.in[d] = g->in[d + 1]; s.k[d] = g->k[d + 1]; s.out[d] = g->out[d + 1];
    s.xs[d] = g->xs[d + 1]; s.ws[d] = g->ws[d + 1]; s.ys[d] = g->ys[d + 1];
    s.stride[d] = g->stride[d + 1]; s.pad_lo[d] = g->pad_lo[d + 1];
    s.lhs_dil[d] = g->lhs_dil[d + 1]; s.rhs_dil[d] = g->rhs_dil[d + 1];
  }
  s.plane = s.out[0] * s.out[1];
  s.taps = s.k[0] * s.k[1];
  bool tried = false;
  for (int64_t od = 0; od < g->out[0]; ++od) {
    s.accumulate = 0;
    s.y = g->y + od * g->ys[0];
    for (int64_t kd = 0; kd < g->k[0]; ++kd) {
      const int64_t q = od * g->stride[0] + kd * g->rhs_dil[0] - g->pad_lo[0];
      if (q < 0 || q % g->lhs_dil[0] || q / g->lhs_dil[0] >= g->in[0]) continue;
      s.x = g->x + (q / g->lhs_dil[0]) * g->xs[0];
      s.w = g->w + kd * g->ws[0];
      const int rc = conv_fast2(&s, ctx);
      if (rc < 0) return -1;
      if (rc == 0) {
        if (!tried) return 0; /* the first slice: nothing written yet */
        return pb_kernel_fail(ctx, PB_KERNEL_ERUNTIME, "a 3-D slice left the fast paths"), -1;
      }
      tried = true;
      s.accumulate = 1;
    }
    if (!s.accumulate && s.plane) { /* no depth tap reads an input slice: zeros */
      if (!tried) {
        /* decide on a slice that has taps first, so that a declined geometry writes nothing */
        continue;
      }
      for (int64_t n = 0; n < g->Nb; ++n)
        for (int64_t o = 0; o < g->O; ++o)
          for (int64_t i = 0; i < s.out[0]; ++i)
            for (int64_t j = 0; j < s.out[1]; ++j)
              *(float *)(s.y + n * g->ys_n + o * g->ys_o + i * s.ys[0] + j * s.ys[1]) = 0.0f;
    }
  }
  if (!tried) return 0;
  /* the zero slices skipped before the first taken one */
  for (int64_t od = 0; od < g->out[0]; ++od) {
    bool any = false;
    for (int64_t kd = 0; kd < g->k[0] && !any; ++kd) {
      const int64_t q = od * g->stride[0] + kd * g->rhs_dil[0] - g->pad_lo[0];
      any = q >= 0 && q % g->lhs_dil[0] == 0 && q / g->lhs_dil[0] < g->in[0];
    }
    if (any) break;
    char *y = g->y + od * g->ys[0];
    for (int64_t n = 0; n < g->Nb; ++n)
      for (int64_t o = 0; o < g->O; ++o)
        for (int64_t i = 0; i < s.out[0]; ++i)
          for (int64_t j = 0; j < s.out[1]; ++j)
            *(float *)(y + n * g->ys_n + o * g->ys_o + i * s.ys[0] + j * s.ys[1]) = 0.0f;
  }
  return 1;
}

/* y's C-order rows (along its last dim) are its pixels: the output features innermost and
 * the pixels pixel-major, so a fast path's finished pixels are rows a fused epilogue can take */
static bool rows_are_pixels(const conv_geom *g) {
  if (g->nsp > 2 || g->out_dt != PB_F32 || g->ys_o != 4 || g->B != 1) return false;
  int64_t expect = 4 * g->O;
  for (int d = g->nsp - 1; d >= 0; --d) {
    if (g->ys[d] != expect && g->out[d] > 1) return false;
    expect *= g->out[d];
  }
  return g->ys_n == expect || g->Nb <= 1;
}

static int conv_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                       const void *params, pb_kernel_ctx *ctx) {
  (void)nin;
  (void)nout;
  conv_geom g;
  int rc = conv_geometry(ins, &outs[0], (const conv_params *)params, &g, ctx);
  if (rc) return rc;
  g.follow = ctx->rows_done && rows_are_pixels(&g) ? ctx : NULL;
  rc = g.nsp == 3 ? conv_fast3(&g, ctx) : conv_fast2(&g, ctx);
  if (rc) return rc < 0 ? ctx->error : 0;
  return conv_generic(&g, ctx);
}

static const pb_kernel_def kernels[] = {
  {"conv_general_dilated", conv_kernel, 2, 1, sizeof(conv_params), NULL, PB_KERNEL_FOLLOWS_ROWS},
};
PB_KERNELS(kernels)
