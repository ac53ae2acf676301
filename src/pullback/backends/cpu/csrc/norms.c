/* Normalisation kernels (primitives/norms.py): layer, RMS, group and batch norms are one
 * `normalize` over a set of reduced axes (a "row" is one index of the kept axes; its elements,
 * the "columns", run over the reduced axes), with scale and bias varying along any set of
 * axes. Three kernels share one layout:
 *
 *   normalize           x, [scale], [bias]              -> y = xhat * scale + bias
 *   normalize_tangent   dx, [dscale], [dbias], x, [s]   -> dy (the jvp, linear in dx, ds, db)
 *   normalize_backward  g, x, [s]                       -> dx, [dscale], [dbias] (its transpose)
 *   add_normalize       a, b, [scale], [bias]           -> h = a + b, y = normalize(h)
 *
 * (add_normalize: a compiled program's residual add feeding a norm, rewritten by
 * transforms/passes/norm_fusion.py, so h is written in the norm's row pass instead of a
 * separate element-wise pass over memory.)
 * with xhat = (x - mean) * rstd (rms: x * rstd), rstd = 1 / sqrt(var + eps) (rms: of mean(x^2)).
 * Statistics per row are computed in blocks of NB columns loaded into cache: each block's mean
 * and centred sum of squares in two in-cache passes, blocks combined with Chan's formula in
 * double, so a row is read from memory once and long rows lose no precision. The backward
 * recomputes them (a row of a layer norm is in cache by then; saving them would make every
 * derivative rule carry two more operands) and makes one pass for its two row reductions
 * (mean(s g), mean(xhat s g)) and one for dx, as PyTorch's layer_norm_kernel.cpp does;
 * dscale/dbias go to per-chunk partial sums (the chunks a function of the shape only, so the
 * result does not depend on the thread count) reduced in a second pass parallel over the
 * parameters. Rows run in parallel. float16/bfloat16 compute in float32, float64 in double.
 *
 * The file includes itself twice (NORM_TEMPLATE) to instantiate the row code for both compute
 * types. */
#ifndef NORM_TEMPLATE
#pragma GCC diagnostic ignored "-Wpsabi" /* vector helpers are inlined: no ABI crosses them */
#include "kernel_abi.h"
#include "cast.h"
#include "move.h"
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#define NB 2048         /* columns per block: a block of every operand stays in L2 */
#define NMAXOP 8        /* operands of the layout (the partial-sum pseudo operand included) */
#define NORM_GRAIN 32768 /* elements per thread */
#define NMAXCHUNK 16    /* row chunks of the backward's partial sums */
#define NTILE 64        /* the most rows of a tile (channels-first layouts) */
#define NT_MIN_BYTES ((int64_t)4 << 20) /* add_normalize streams h from this size (as regions do:
                                           program.h's PB_NT_MIN_BYTES) */

typedef struct {
  int64_t rmask;   /* bit d: axis d of x is reduced */
  int64_t pmask;   /* bit d: scale and bias vary along axis d of x */
  double epsilon;
  int32_t rms, has_scale, has_bias, pad;
} norm_params;

/* An operand seen in the (rows, columns) space, strides in bytes. */
typedef struct {
  char *base;
  int isz;
  int contig;    /* contiguous along the whole row */
  int incompute; /* holds compute-type values (a tile), whatever the dtype */
  int64_t rstr[PB_MAXDIMS], cstr[PB_MAXDIMS];
} norm_op;

typedef struct {
  int dt;
  int nrd, ncd;
  int64_t rshape[PB_MAXDIMS], cshape[PB_MAXDIMS];
  int64_t nrows, ncols;
  int nops;
  int nt_h; /* add_normalize: rows are one block and h is streamed out of scratch (row_add) */
  norm_op op[NMAXOP];
} norm_layout;

static void nt_fence(void) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_sfence();
#endif
}

/* x-space strides of every operand (xstr[o][d], bytes) -> the layout: kept axes become row
 * dims, reduced ones column dims, size-1 dims dropped and neighbours merged where every
 * operand allows. */
static void layout_build(norm_layout *L, int ndim, const int64_t *shape, int64_t rmask, int nops,
                         char *const *base, const int *isz, int64_t xstr[][PB_MAXDIMS]) {
  L->nops = nops;
  for (int pass = 0; pass < 2; ++pass) {
    int n = 0;
    int64_t *sh = pass ? L->cshape : L->rshape;
    int64_t st[NMAXOP][PB_MAXDIMS];
    for (int d = 0; d < ndim; ++d) {
      if (((rmask >> d) & 1) != pass || shape[d] == 1) continue;
      bool merge = n > 0;
      for (int o = 0; o < nops && merge; ++o)
        merge = st[o][n - 1] == xstr[o][d] * shape[d];
      if (merge) {
        sh[n - 1] *= shape[d];
        for (int o = 0; o < nops; ++o) st[o][n - 1] = xstr[o][d];
      } else {
        sh[n] = shape[d];
        for (int o = 0; o < nops; ++o) st[o][n] = xstr[o][d];
        ++n;
      }
    }
    if (n == 0) { /* one dummy dim keeps the walks simple */
      sh[0] = 1;
      for (int o = 0; o < nops; ++o) st[o][0] = 0;
      n = 1;
    }
    int64_t total = 1;
    for (int i = 0; i < n; ++i) total *= sh[i];
    for (int o = 0; o < nops; ++o)
      memcpy(pass ? L->op[o].cstr : L->op[o].rstr, st[o], sizeof(int64_t) * (size_t)n);
    if (pass) { L->ncd = n; L->ncols = total; }
    else { L->nrd = n; L->nrows = total; }
  }
  for (int o = 0; o < nops; ++o) {
    L->op[o].base = base[o];
    L->op[o].isz = isz[o];
    /* contiguous along the whole row, whatever dims the other operands kept apart (a group
     * norm's x is, while its scale is constant along the spatial dims) */
    bool c = L->ncols == 1 || L->op[o].cstr[L->ncd - 1] == isz[o];
    for (int d = L->ncd - 2; d >= 0 && c; --d)
      c = L->op[o].cstr[d] == L->op[o].cstr[d + 1] * L->cshape[d + 1];
    L->op[o].contig = c;
    L->op[o].incompute = 0;
  }
}

/* Row odometer: the byte offset of every operand for consecutive rows. */
typedef struct { int64_t idx[PB_MAXDIMS]; int64_t off[NMAXOP]; } row_iter;

static void row_start(const norm_layout *L, row_iter *it, int64_t r) {
  for (int o = 0; o < L->nops; ++o) it->off[o] = 0;
  for (int d = L->nrd - 1; d >= 0; --d) {
    it->idx[d] = r % L->rshape[d];
    r /= L->rshape[d];
    for (int o = 0; o < L->nops; ++o) it->off[o] += it->idx[d] * L->op[o].rstr[d];
  }
}

static void row_next(const norm_layout *L, row_iter *it) {
  for (int d = L->nrd - 1; d >= 0; --d) {
    for (int o = 0; o < L->nops; ++o) it->off[o] += L->op[o].rstr[d];
    if (++it->idx[d] < L->rshape[d]) return;
    for (int o = 0; o < L->nops; ++o) it->off[o] -= it->idx[d] * L->op[o].rstr[d];
    it->idx[d] = 0;
  }
}

/* Walks columns [c0, c0 + n) of operand o from byte offset `off`, calling RUN(byte offset,
 * stride, count, done) on each run along the innermost column dim. */
#define COL_WALK(L, o, off, c0, n, RUN)                                                          \
  do {                                                                                           \
    const int ncd_ = (L)->ncd, last_ = ncd_ - 1;                                                 \
    const int64_t *cs_ = (L)->op[o].cstr;                                                        \
    int64_t idx_[PB_MAXDIMS], c_ = (c0), p_ = (off);                                             \
    for (int d_ = last_; d_ >= 0; --d_) {                                                        \
      idx_[d_] = c_ % (L)->cshape[d_];                                                           \
      c_ /= (L)->cshape[d_];                                                                     \
      p_ += idx_[d_] * cs_[d_];                                                                  \
    }                                                                                            \
    int64_t done_ = 0;                                                                           \
    while (done_ < (n)) {                                                                        \
      int64_t run_ = (L)->cshape[last_] - idx_[last_];                                           \
      if (run_ > (n) - done_) run_ = (n) - done_;                                                \
      RUN(p_, cs_[last_], run_, done_);                                        \
      done_ += run_;                                                                             \
      p_ += run_ * cs_[last_];                                                                   \
      idx_[last_] += run_;                                                                       \
      for (int d_ = last_; d_ > 0 && idx_[d_] == (L)->cshape[d_]; --d_) {                        \
        p_ -= idx_[d_] * cs_[d_];                                                                \
        idx_[d_] = 0;                                                                            \
        ++idx_[d_ - 1];                                                                          \
        p_ += cs_[d_ - 1];                                                                       \
      }                                                                                          \
    }                                                                                            \
  } while (0)

/* The kernels' operand roles */
enum { K_FWD, K_TAN, K_BWD, K_ADD };

/* Thread scratch: the blocks of one row (x, the other x-shaped input, two parameter blocks,
 * the output, two temporaries). */
enum { B_X, B_G, B_S, B_B, B_S2, B_OUT, B_T1, B_T2, B_N };

#define NORM_TEMPLATE
#define CT float
#define SUF f
#include "norms.c"
#undef CT
#undef SUF
#define CT double
#define SUF d
#include "norms.c"
#undef CT
#undef SUF
#undef NORM_TEMPLATE

/* x-space strides of a parameter-shaped operand (shape x.shape[P], the axes of pmask) */
static void param_strides(int ndim, int64_t pmask, const int64_t *pstr, int64_t *xstr) {
  int k = 0;
  for (int d = 0; d < ndim; ++d) xstr[d] = ((pmask >> d) & 1) ? pstr[k++] : 0;
}

static int norm_kernel(int kind, const pb_operand *ins, int nin, pb_operand *outs, int nout,
                       const void *params, pb_kernel_ctx *ctx) {
  const norm_params *p = params;
  const int hs = p->has_scale != 0, hb = p->has_bias != 0, np = hs + hb;
  const int want_in = kind == K_FWD ? 1 + np : kind == K_TAN ? 2 + np + hs
                                                              : kind == K_ADD ? 2 + np : 2 + hs;
  const int want_out = kind == K_BWD ? 1 + np : kind == K_ADD ? 2 : 1;
  if (nin != want_in || nout != want_out)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "expected %d inputs and %d outputs, got %d and %d",
                          want_in, want_out, nin, nout);
  /* x: the operand whose statistics are taken */
  const pb_operand *x = kind == K_FWD ? &ins[0] : kind == K_TAN ? &ins[1 + np] : &ins[1];
  const int ndim = x->ndim, dt = x->dtype;
  if (dt != PB_F16 && dt != PB_BF16 && dt != PB_F32 && dt != PB_F64)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "x must be floating, got dtype code %d", dt);
  int psz_nd = 0;
  int64_t pshape[PB_MAXDIMS], psize = 1;
  for (int d = 0; d < ndim; ++d)
    if ((p->pmask >> d) & 1) { pshape[psz_nd++] = x->shape[d]; psize *= x->shape[d]; }
  /* every operand: x-shaped or parameter-shaped, checked before any memory is touched */
  const pb_operand *all[NMAXOP];
  int isparam[NMAXOP], n = 0;
  for (int i = 0; i < nin; ++i) {
    all[n] = &ins[i];
    isparam[n++] = kind == K_FWD ? i > 0 : kind == K_TAN ? (i >= 1 && i <= np) || i > 1 + np
                                                         : i > 1;
  }
  for (int i = 0; i < nout; ++i) { all[n] = &outs[i]; isparam[n++] = kind == K_BWD && i > 0; }
  for (int i = 0; i < n; ++i) {
    const pb_operand *o = all[i];
    bool ok = o->dtype == dt && o->ndim == (isparam[i] ? psz_nd : ndim);
    for (int d = 0; ok && d < o->ndim; ++d)
      ok = o->shape[d] == (isparam[i] ? pshape[d] : x->shape[d]);
    if (!ok) return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operand %d does not fit x", i);
  }
  const int64_t size = pb_operand_size(x);
  const bool dbl = dt == PB_F64;
  if (size == 0) { /* nothing to normalise; parameter gradients are empty sums */
    if (kind == K_BWD)
      for (int i = 1; i < nout; ++i) memset(outs[i].data, 0, (size_t)(psize * outs[i].itemsize));
    return 0;
  }
  /* the layout: every operand but the backward's parameter gradients, which are written by
   * the reduction of the partial sums; those appear as one pseudo operand (the partial sums,
   * contiguous in the compute type) */
  norm_layout L;
  L.dt = dt;
  char *base[NMAXOP];
  int isz[NMAXOP];
  int64_t xstr[NMAXOP][PB_MAXDIMS];
  int nl = 0;
  for (int i = 0; i < n; ++i) {
    if (kind == K_BWD && i >= nin + 1) break;
    base[nl] = all[i]->data;
    isz[nl] = all[i]->itemsize;
    if (isparam[i]) param_strides(ndim, p->pmask, all[i]->strides, xstr[nl]);
    else memcpy(xstr[nl], all[i]->strides, sizeof(int64_t) * (size_t)ndim);
    ++nl;
  }
  if (kind == K_BWD) {
    int64_t pst[PB_MAXDIMS], s = dbl ? 8 : 4;
    for (int k = psz_nd - 1; k >= 0; --k) { pst[k] = s; s *= pshape[k]; }
    base[nl] = NULL;
    isz[nl] = dbl ? 8 : 4;
    param_strides(ndim, p->pmask, pst, xstr[nl]);
    ++nl;
  }
  layout_build(&L, ndim, x->shape, p->rmask, nl, base, isz, xstr);
  /* add_normalize on rows of one block, h contiguous float32/float64 (its values are the
   * compute type's): h stays in scratch for the norm and goes to memory with streaming stores
   * (no read of each line before it is written: 5 passes over memory become 4 for a large h) */
  L.nt_h = kind == K_ADD && L.ncols <= NB && (dt == PB_F32 || dt == PB_F64) &&
           L.op[2 + np].contig && size * x->itemsize >= NT_MIN_BYTES;
  const int threads = pb_kernel_threads(ctx, size, NORM_GRAIN);
  const int nt = (int64_t)threads > L.nrows ? (int)L.nrows : threads;
  if (dbl) return norm_run_d(kind, &L, p, nt, nin, outs, nout, psize, ctx);
  return norm_run_f(kind, &L, p, nt, nin, outs, nout, psize, ctx);
}

static int normalize_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                            const void *params, pb_kernel_ctx *ctx) {
  return norm_kernel(K_FWD, ins, nin, outs, nout, params, ctx);
}
static int normalize_tangent_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                    const void *params, pb_kernel_ctx *ctx) {
  return norm_kernel(K_TAN, ins, nin, outs, nout, params, ctx);
}
static int normalize_backward_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                     const void *params, pb_kernel_ctx *ctx) {
  return norm_kernel(K_BWD, ins, nin, outs, nout, params, ctx);
}

static int add_normalize_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                const void *params, pb_kernel_ctx *ctx) {
  return norm_kernel(K_ADD, ins, nin, outs, nout, params, ctx);
}

static const pb_kernel_def kernels[] = {
  {"normalize", normalize_kernel, -1, 1, sizeof(norm_params)},
  {"normalize_tangent", normalize_tangent_kernel, -1, 1, sizeof(norm_params)},
  {"normalize_backward", normalize_backward_kernel, -1, -1, sizeof(norm_params)},
  {"add_normalize", add_normalize_kernel, -1, 2, sizeof(norm_params)},
};
PB_KERNELS(kernels)

#else /* ---- NORM_TEMPLATE: the row code for compute type CT (suffix SUF) ---- */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(name, SUF)

/* Loads n strided elements of dtype dt as CT. */
/* contiguous 16-bit runs: loops the compiler vectorises (the strided ones below do not) */
static PB_CLONES void F(ld_f16)(const uint16_t *p, int64_t n, CT *out) {
  for (int64_t i = 0; i < n; ++i) out[i] = (CT)pb_half_to_float(p[i]);
}
static PB_CLONES void F(ld_bf16)(const uint16_t *p, int64_t n, CT *out) {
  for (int64_t i = 0; i < n; ++i) out[i] = (CT)pb_bf16_to_f32(p[i]);
}
static PB_CLONES void F(st_f16)(uint16_t *p, int64_t n, const CT *v) {
  for (int64_t i = 0; i < n; ++i) p[i] = pb_float_to_half((float)v[i]);
}
static PB_CLONES void F(st_bf16)(uint16_t *p, int64_t n, const CT *v) {
  for (int64_t i = 0; i < n; ++i) { /* pb_f32_to_bf16 without its early return */
    const float f = (float)v[i];
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint32_t nan = (u & 0x7fffffffu) > 0x7f800000u;
    p[i] = (uint16_t)(nan ? (u >> 16) | 0x40u : (u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
}

static void F(load_run)(int dt, const char *p, int64_t s, int64_t n, CT *out) {
  if (s == 2 && (dt == PB_F16 || dt == PB_BF16)) {
    if (dt == PB_F16) F(ld_f16)((const uint16_t *)p, n, out);
    else F(ld_bf16)((const uint16_t *)p, n, out);
    return;
  }
  if (s == 0 && n > 1) { /* a parameter constant along these columns */
    F(load_run)(dt, p, 0, 1, out);
    for (int64_t i = 1; i < n; ++i) out[i] = out[0];
    return;
  }
  if (s == (int64_t)sizeof(CT) && dt == (sizeof(CT) == 8 ? PB_F64 : PB_F32)) {
    memcpy(out, p, sizeof(CT) * (size_t)n);
    return;
  }
  switch (dt) {
    case PB_F32: for (int64_t i = 0; i < n; ++i) out[i] = (CT)*(const float *)(p + i * s); break;
    case PB_F64: for (int64_t i = 0; i < n; ++i) out[i] = (CT)*(const double *)(p + i * s); break;
    case PB_F16:
      for (int64_t i = 0; i < n; ++i) out[i] = (CT)pb_half_to_float(*(const uint16_t *)(p + i * s));
      break;
    default:
      for (int64_t i = 0; i < n; ++i) out[i] = (CT)pb_bf16_to_f32(*(const uint16_t *)(p + i * s));
  }
}

static void F(store_run)(int dt, char *p, int64_t s, int64_t n, const CT *v) {
  if (s == 2 && (dt == PB_F16 || dt == PB_BF16)) {
    if (dt == PB_F16) F(st_f16)((uint16_t *)p, n, v);
    else F(st_bf16)((uint16_t *)p, n, v);
    return;
  }
  switch (dt) {
    case PB_F32: for (int64_t i = 0; i < n; ++i) *(float *)(p + i * s) = (float)v[i]; break;
    case PB_F64: for (int64_t i = 0; i < n; ++i) *(double *)(p + i * s) = (double)v[i]; break;
    case PB_F16:
      for (int64_t i = 0; i < n; ++i) *(uint16_t *)(p + i * s) = pb_float_to_half((float)v[i]);
      break;
    default:
      for (int64_t i = 0; i < n; ++i) *(uint16_t *)(p + i * s) = pb_f32_to_bf16((float)v[i]);
  }
}

static inline bool F(native)(int dt) { return sizeof(CT) == 8 ? dt == PB_F64 : dt == PB_F32; }

/* Columns [c0, c0 + n) of operand o in the row at `off`: a pointer into it when it is
 * contiguous in CT, else gathered (converted) into buf. */
static const CT *F(get)(const norm_layout *L, int o, int64_t off, int64_t c0, int64_t n, CT *buf) {
  if (L->op[o].contig && (F(native)(L->dt) || L->op[o].incompute))
    return (const CT *)(L->op[o].base + off) + c0;
  const int dt = L->dt;
#define LOAD_RUN(at, st, cnt, done) F(load_run)(dt, L->op[o].base + (at), st, cnt, buf + (done))
  COL_WALK(L, o, off, c0, n, LOAD_RUN);
#undef LOAD_RUN
  return buf;
}

/* A row's blocks, remembered when the row is one block: its passes then gather (or convert) a
 * strided row once, not once per pass. */
typedef struct { const CT *p[B_N]; } F(memo);

static const CT *F(get1)(const norm_layout *L, int o, int64_t off, int64_t c0, int64_t n,
                         CT **buf, int bi, F(memo) *m) {
  if (m->p[bi]) return m->p[bi];
  const CT *r = F(get)(L, o, off, c0, n, buf[bi]);
  if (L->ncols <= NB) m->p[bi] = r;
  return r;
}

/* Where to compute output columns: the output itself when contiguous in CT, else buf. */
static CT *F(dst)(const norm_layout *L, int o, int64_t off, int64_t c0, CT *buf) {
  if (L->op[o].contig && (F(native)(L->dt) || L->op[o].incompute))
    return (CT *)(L->op[o].base + off) + c0;
  return buf;
}

static void F(put)(const norm_layout *L, int o, int64_t off, int64_t c0, int64_t n, const CT *v) {
  if (L->op[o].contig && (F(native)(L->dt) || L->op[o].incompute)) return;
  const int dt = L->dt;
#define STORE_RUN(at, st, cnt, done) F(store_run)(dt, L->op[o].base + (at), st, cnt, v + (done))
  COL_WALK(L, o, off, c0, n, STORE_RUN);
#undef STORE_RUN
}

/* partial[...] += v over columns [c0, c0 + n) (the pseudo operand o: byte offsets into the
 * partial sums of CT at `part`) */
static void F(accumulate)(const norm_layout *L, int o, CT *part, int64_t off, int64_t c0,
                          int64_t n, const CT *v) {
  const norm_op *op = &L->op[o];
  char *pb = (char *)part + off;
  if (op->contig) {
    CT *d = (CT *)pb + c0;
    for (int64_t i = 0; i < n; ++i) d[i] += v[i];
    return;
  }
  bool constant = true;
  for (int d = 0; d < L->ncd; ++d) constant = constant && op->cstr[d] == 0;
  if (constant) {
    CT s = 0;
    for (int64_t i = 0; i < n; ++i) s += v[i];
    *(CT *)pb += s;
    return;
  }
#define ADD_RUN(at, st, cnt, done)                                                              \
  for (int64_t i_ = 0; i_ < (cnt); ++i_) *(CT *)((char *)part + (at) + i_ * (st)) += v[(done) + i_]
  COL_WALK(L, o, off, c0, n, ADD_RUN);
#undef ADD_RUN
}

/* ---- vector loops: GCC vectors of 64 bytes (one zmm on AVX-512, two ymm or four xmm on the
 * other clones), unaligned loads through memcpy, a scalar tail ---- */
typedef CT F(vec) __attribute__((vector_size(64)));
#define VW ((int64_t)(64 / sizeof(CT)))
static inline F(vec) F(ld)(const CT *p) { F(vec) v; memcpy(&v, p, sizeof v); return v; }
static inline void F(st)(CT *p, F(vec) v) { memcpy(p, &v, sizeof v); }
static inline F(vec) F(splat)(CT c) { return (F(vec)){0} + c; }
static inline CT F(hsum)(F(vec) v) {
  CT s = 0;
  for (int i = 0; i < (int)VW; ++i) s += v[i];
  return s;
}

/* sum of (v[i] - k), shifted so a large mean costs no digits */
static PB_CLONES CT F(sum_shift)(const CT *v, int64_t n, CT k) {
  F(vec) a0 = F(splat)(0), a1 = a0, kk = F(splat)(k);
  int64_t i = 0;
  for (; i + 2 * VW <= n; i += 2 * VW) { a0 += F(ld)(v + i) - kk; a1 += F(ld)(v + i + VW) - kk; }
  CT s = F(hsum)(a0 + a1);
  for (; i < n; ++i) s += v[i] - k;
  return s;
}

/* sum of (v[i] - k) and of (v[i] - k)^2 in one pass */
static PB_CLONES void F(sums_shift)(const CT *v, int64_t n, CT k, CT *s1, CT *s2) {
  F(vec) a0 = F(splat)(0), a1 = a0, q0 = a0, q1 = a0, kk = F(splat)(k);
  int64_t i = 0;
  for (; i + 2 * VW <= n; i += 2 * VW) {
    const F(vec) d0 = F(ld)(v + i) - kk, d1 = F(ld)(v + i + VW) - kk;
    a0 += d0;
    a1 += d1;
    q0 += d0 * d0;
    q1 += d1 * d1;
  }
  CT t1 = F(hsum)(a0 + a1), t2 = F(hsum)(q0 + q1);
  for (; i < n; ++i) { const CT d = v[i] - k; t1 += d; t2 += d * d; }
  *s1 = t1;
  *s2 = t2;
}

/* sum of (v[i] - m)^2 */
static PB_CLONES CT F(sqdev)(const CT *v, int64_t n, CT m) {
  F(vec) a0 = F(splat)(0), a1 = a0, mm = F(splat)(m);
  int64_t i = 0;
  for (; i + 2 * VW <= n; i += 2 * VW) {
    F(vec) d0 = F(ld)(v + i) - mm, d1 = F(ld)(v + i + VW) - mm;
    a0 += d0 * d0;
    a1 += d1 * d1;
  }
  CT s = F(hsum)(a0 + a1);
  for (; i < n; ++i) s += (v[i] - m) * (v[i] - m);
  return s;
}

/* y = ((x - hi) - lo) * rstd [* s] [+ b] */
static PB_CLONES void F(fwd_block)(const CT *x, const CT *s, const CT *b, int64_t n, CT hi,
                                   CT lo, CT rstd, CT *y) {
  const F(vec) h = F(splat)(hi), l = F(splat)(lo), r = F(splat)(rstd);
  int64_t i = 0;
  if (s && b) {
    for (; i + VW <= n; i += VW)
      F(st)(y + i, ((F(ld)(x + i) - h) - l) * r * F(ld)(s + i) + F(ld)(b + i));
    for (; i < n; ++i) y[i] = ((x[i] - hi) - lo) * rstd * s[i] + b[i];
  } else if (s) {
    for (; i + VW <= n; i += VW) F(st)(y + i, ((F(ld)(x + i) - h) - l) * r * F(ld)(s + i));
    for (; i < n; ++i) y[i] = ((x[i] - hi) - lo) * rstd * s[i];
  } else if (b) {
    for (; i + VW <= n; i += VW) F(st)(y + i, ((F(ld)(x + i) - h) - l) * r + F(ld)(b + i));
    for (; i < n; ++i) y[i] = ((x[i] - hi) - lo) * rstd + b[i];
  } else {
    for (; i + VW <= n; i += VW) F(st)(y + i, ((F(ld)(x + i) - h) - l) * r);
    for (; i < n; ++i) y[i] = ((x[i] - hi) - lo) * rstd;
  }
}

/* The row reductions of the tangent and backward: with xh = ((x - hi) - lo) * rstd and
 * v = a [* s]: *sv = sum(v), *svx = sum(v * xh); and, where given (contiguous parameter
 * partial sums), ps[i] += a * xh and pb[i] += a. xh_out (if given) receives xh. */
static PB_CLONES void F(reduce2)(const CT *x, const CT *a, const CT *s, int64_t n, CT hi, CT lo,
                                 CT rstd, CT *ps, CT *pb, CT *xh_out, CT *sv, CT *svx) {
  const F(vec) h = F(splat)(hi), l = F(splat)(lo), r = F(splat)(rstd);
  F(vec) s1 = F(splat)(0), s2 = s1;
  int64_t i = 0;
  for (; i + VW <= n; i += VW) {
    const F(vec) xh = ((F(ld)(x + i) - h) - l) * r, av = F(ld)(a + i);
    const F(vec) v = s ? av * F(ld)(s + i) : av;
    s1 += v;
    s2 += v * xh;
    if (ps) F(st)(ps + i, F(ld)(ps + i) + av * xh);
    if (pb) F(st)(pb + i, F(ld)(pb + i) + av);
    if (xh_out) F(st)(xh_out + i, xh);
  }
  CT t1 = F(hsum)(s1), t2 = F(hsum)(s2);
  for (; i < n; ++i) {
    const CT xh = ((x[i] - hi) - lo) * rstd, v = s ? a[i] * s[i] : a[i];
    t1 += v;
    t2 += v * xh;
    if (ps) ps[i] += a[i] * xh;
    if (pb) pb[i] += a[i];
    if (xh_out) xh_out[i] = xh;
  }
  *sv = t1;
  *svx = t2;
}

/* out = rstd * (v - c1 - xh * c2) [* s2] [+ xh * ds] [+ db], v = a [* s], xh from x: the
 * tangent's and the backward's output pass */
static PB_CLONES void F(proj)(const CT *x, const CT *a, const CT *s, int64_t n, CT hi, CT lo,
                              CT rstd, CT c1, CT c2, const CT *s2, const CT *ds, const CT *db,
                              CT *out) {
  const F(vec) h = F(splat)(hi), l = F(splat)(lo), r = F(splat)(rstd), k1 = F(splat)(c1),
               k2 = F(splat)(c2);
  int64_t i = 0;
  for (; i + VW <= n; i += VW) {
    const F(vec) xh = ((F(ld)(x + i) - h) - l) * r, av = F(ld)(a + i);
    const F(vec) v = s ? av * F(ld)(s + i) : av;
    F(vec) o = r * (v - k1 - xh * k2);
    if (s2) o *= F(ld)(s2 + i);
    if (ds) o += xh * F(ld)(ds + i);
    if (db) o += F(ld)(db + i);
    F(st)(out + i, o);
  }
  for (; i < n; ++i) {
    const CT xh = ((x[i] - hi) - lo) * rstd, v = s ? a[i] * s[i] : a[i];
    CT o = rstd * (v - c1 - xh * c2);
    if (s2) o *= s2[i];
    if (ds) o += xh * ds[i];
    if (db) o += db[i];
    out[i] = o;
  }
}

/* The statistics of the row at byte offset `off` of operand xo: the mean as a sum hi + lo of
 * two CT (0 for rms; x - hi is exact for x near the mean, so a float32 row with a large mean
 * keeps its digits) and rstd. Each block's sums are taken about its first element (shifted
 * data: no cancellation), and blocks are combined in double with Chan's formula. */
static void F(row_stats)(const norm_layout *L, int xo, int64_t off, int rms, double eps, CT **buf,
                         F(memo) *m, CT *mean_hi, CT *mean_lo, CT *rstd) {
  double cnt = 0, mu = 0, m2 = 0;
  for (int64_t c0 = 0; c0 < L->ncols; c0 += NB) {
    const int64_t nb = L->ncols - c0 < NB ? L->ncols - c0 : NB;
    const CT *x = F(get1)(L, xo, off, c0, nb, buf, B_X, m);
    if (rms) {
      m2 += (double)F(sqdev)(x, nb, 0);
      continue;
    }
    /* one pass of sums about the block's first element; when that element is far from the
     * mean (the sum of squares about it is mostly the offset: digits would cancel), a second
     * in-cache pass about the mean */
    const CT k = x[0];
    CT t1, t2;
    F(sums_shift)(x, nb, k, &t1, &t2);
    const double mb = (double)k + (double)t1 / (double)nb;
    double m2b = (double)t2 - (double)t1 * (double)t1 / (double)nb;
    if (!(16 * m2b >= (double)t2)) {
      const CT c = (CT)mb;
      const double dc = mb - (double)c;
      m2b = (double)F(sqdev)(x, nb, c) - (double)nb * dc * dc;
    }
    const double delta = mb - mu, tot = cnt + (double)nb;
    mu += delta * (double)nb / tot;
    m2 += (m2b > 0 ? m2b : 0) + delta * delta * cnt * (double)nb / tot;
    cnt = tot;
  }
  *mean_hi = (CT)mu;
  *mean_lo = (CT)(mu - (double)*mean_hi);
  *rstd = (CT)(1.0 / sqrt(m2 / (double)L->ncols + eps));
}

/* One row of each kernel. o: operand numbers in the layout. */
static void F(row_fwd)(const norm_layout *L, const norm_params *p, const int64_t *off, CT **buf) {
  const int hs = p->has_scale != 0, hb = p->has_bias != 0;
  const int xo = 0, so = 1, bo = 1 + hs, yo = 1 + hs + hb;
  CT mhi, mlo, rstd;
  F(memo) m = {{0}};
  F(row_stats)(L, xo, off[xo], p->rms, p->epsilon, buf, &m, &mhi, &mlo, &rstd);
  for (int64_t c0 = 0; c0 < L->ncols; c0 += NB) {
    const int64_t nb = L->ncols - c0 < NB ? L->ncols - c0 : NB;
    const CT *x = F(get1)(L, xo, off[xo], c0, nb, buf, B_X, &m);
    const CT *s = hs ? F(get1)(L, so, off[so], c0, nb, buf, B_S, &m) : NULL;
    const CT *b = hb ? F(get1)(L, bo, off[bo], c0, nb, buf, B_B, &m) : NULL;
    CT *y = F(dst)(L, yo, off[yo], c0, buf[B_OUT]);
    F(fwd_block)(x, s, b, nb, mhi, mlo, rstd, y);
    F(put)(L, yo, off[yo], c0, nb, y);
  }
}

/* add_normalize: h = a + b written block by block, then the forward of the row of h (read
 * back from h, in cache: for 16-bit types that is the rounded sum, as a separate add gives).
 * Layout operands a, b, [s], [bias], h, y; X is L with operands h, [s], [bias], y. */
static PB_CLONES void F(add_block)(const CT *a, const CT *b, int64_t n, CT *h) {
  for (int64_t i = 0; i < n; ++i) h[i] = a[i] + b[i];
}

/* h = a + b into scratch and, with streaming stores, into dst (16-byte aligned): one pass */
static PB_CLONES void F(add_nt)(const CT *a, const CT *b, int64_t n, CT *h, char *dst) {
  int64_t i = 0;
#if defined(__x86_64__) || defined(__i386__)
  for (; i + VW <= n; i += VW) {
    const F(vec) v = F(ld)(a + i) + F(ld)(b + i);
    F(st)(h + i, v);
    __m128 q[4];
    memcpy(q, &v, sizeof q);
    char *d = dst + i * (int64_t)sizeof(CT);
    _mm_stream_ps((float *)d, q[0]);
    _mm_stream_ps((float *)(d + 16), q[1]);
    _mm_stream_ps((float *)(d + 32), q[2]);
    _mm_stream_ps((float *)(d + 48), q[3]);
  }
#endif
  const int64_t tail = i;
  for (; i < n; ++i) h[i] = a[i] + b[i];
  memcpy(dst + tail * (int64_t)sizeof(CT), h + tail, sizeof(CT) * (size_t)(n - tail));
}

static void F(row_add)(const norm_layout *L, const norm_layout *X, const norm_params *p,
                       const int64_t *off, CT **buf) {
  const int np = (p->has_scale != 0) + (p->has_bias != 0), ho = 2 + np;
  int64_t xoff[NMAXOP];
  for (int o = 0; o < np; ++o) xoff[1 + o] = off[2 + o];
  xoff[1 + np] = off[ho + 1];
  if (L->nt_h) { /* X's h is this thread's buf[B_T2] (norm_run) */
    const CT *a = F(get)(L, 0, off[0], 0, L->ncols, buf[B_G]);
    const CT *b = F(get)(L, 1, off[1], 0, L->ncols, buf[B_T1]);
    char *dst = L->op[ho].base + off[ho];
    if (((uintptr_t)dst & 15) == 0) {
      F(add_nt)(a, b, L->ncols, buf[B_T2], dst);
    } else {
      F(add_block)(a, b, L->ncols, buf[B_T2]);
      pb_stream_copy(dst, (const char *)buf[B_T2], L->ncols * (int64_t)sizeof(CT));
    }
    xoff[0] = 0;
    F(row_fwd)(X, p, xoff, buf);
    return;
  }
  for (int64_t c0 = 0; c0 < L->ncols; c0 += NB) {
    const int64_t nb = L->ncols - c0 < NB ? L->ncols - c0 : NB;
    const CT *a = F(get)(L, 0, off[0], c0, nb, buf[B_G]);
    const CT *b = F(get)(L, 1, off[1], c0, nb, buf[B_T1]);
    CT *h = F(dst)(L, ho, off[ho], c0, buf[B_T2]);
    F(add_block)(a, b, nb, h);
    F(put)(L, ho, off[ho], c0, nb, h);
  }
  xoff[0] = off[ho];
  F(row_fwd)(X, p, xoff, buf);
}

static void F(row_tan)(const norm_layout *L, const norm_params *p, const int64_t *off, CT **buf) {
  const int hs = p->has_scale != 0, hb = p->has_bias != 0, np = hs + hb;
  const int dxo = 0, dso = 1, dbo = 1 + hs, xo = 1 + np, so = 2 + np, yo = 2 + np + hs;
  CT mhi, mlo, rstd;
  F(memo) m = {{0}};
  F(row_stats)(L, xo, off[xo], p->rms, p->epsilon, buf, &m, &mhi, &mlo, &rstd);
  /* a = mean(dx) (0 for rms), b = mean(xhat dx) */
  CT sa = 0, sb = 0;
  for (int64_t c0 = 0; c0 < L->ncols; c0 += NB) {
    const int64_t nb = L->ncols - c0 < NB ? L->ncols - c0 : NB;
    const CT *x = F(get1)(L, xo, off[xo], c0, nb, buf, B_X, &m);
    const CT *dx = F(get1)(L, dxo, off[dxo], c0, nb, buf, B_G, &m);
    CT s1, s2;
    F(reduce2)(x, dx, NULL, nb, mhi, mlo, rstd, NULL, NULL, NULL, &s1, &s2);
    sa += s1;
    sb += s2;
  }
  const CT a = p->rms ? 0 : sa / (CT)L->ncols, b = sb / (CT)L->ncols;
  for (int64_t c0 = 0; c0 < L->ncols; c0 += NB) {
    const int64_t nb = L->ncols - c0 < NB ? L->ncols - c0 : NB;
    const CT *x = F(get1)(L, xo, off[xo], c0, nb, buf, B_X, &m);
    const CT *dx = F(get1)(L, dxo, off[dxo], c0, nb, buf, B_G, &m);
    const CT *s = hs ? F(get1)(L, so, off[so], c0, nb, buf, B_S, &m) : NULL;
    const CT *ds = hs ? F(get1)(L, dso, off[dso], c0, nb, buf, B_S2, &m) : NULL;
    const CT *db = hb ? F(get1)(L, dbo, off[dbo], c0, nb, buf, B_B, &m) : NULL;
    CT *y = F(dst)(L, yo, off[yo], c0, buf[B_OUT]);
    F(proj)(x, dx, NULL, nb, mhi, mlo, rstd, a, b, s, ds, db, y);
    F(put)(L, yo, off[yo], c0, nb, y);
  }
}

static void F(row_bwd)(const norm_layout *L, const norm_params *p, const int64_t *off, CT **buf,
                       CT *pscale, CT *pbias) {
  const int hs = p->has_scale != 0, hb = p->has_bias != 0;
  const int go = 0, xo = 1, so = 2, dxo = 2 + hs, po = 3 + hs;
  const bool direct = L->op[po].contig; /* the partial sums run along the columns */
  CT mhi, mlo, rstd;
  F(memo) m = {{0}};
  F(row_stats)(L, xo, off[xo], p->rms, p->epsilon, buf, &m, &mhi, &mlo, &rstd);
  /* c1 = mean(s g) (0 for rms), c2 = mean(xhat s g); the parameter sums on the way */
  CT s1 = 0, s2 = 0;
  for (int64_t c0 = 0; c0 < L->ncols; c0 += NB) {
    const int64_t nb = L->ncols - c0 < NB ? L->ncols - c0 : NB;
    const CT *x = F(get1)(L, xo, off[xo], c0, nb, buf, B_X, &m);
    const CT *g = F(get1)(L, go, off[go], c0, nb, buf, B_G, &m);
    const CT *s = hs ? F(get1)(L, so, off[so], c0, nb, buf, B_S, &m) : NULL;
    CT *ps = hs && direct ? (CT *)((char *)pscale + off[po]) + c0 : NULL;
    CT *pb = hb && direct ? (CT *)((char *)pbias + off[po]) + c0 : NULL;
    CT *xh = hs && !direct ? buf[B_T1] : NULL;
    CT a, b;
    F(reduce2)(x, g, s, nb, mhi, mlo, rstd, ps, pb, xh, &a, &b);
    s1 += a;
    s2 += b;
    if (!direct) {
      if (hs) {
        CT *gx = buf[B_T2];
        for (int64_t i = 0; i < nb; ++i) gx[i] = g[i] * xh[i];
        F(accumulate)(L, po, pscale, off[po], c0, nb, gx);
      }
      if (hb) F(accumulate)(L, po, pbias, off[po], c0, nb, g);
    }
  }
  const CT c1 = p->rms ? 0 : s1 / (CT)L->ncols, c2 = s2 / (CT)L->ncols;
  for (int64_t c0 = 0; c0 < L->ncols; c0 += NB) {
    const int64_t nb = L->ncols - c0 < NB ? L->ncols - c0 : NB;
    const CT *x = F(get1)(L, xo, off[xo], c0, nb, buf, B_X, &m);
    const CT *g = F(get1)(L, go, off[go], c0, nb, buf, B_G, &m);
    const CT *s = hs ? F(get1)(L, so, off[so], c0, nb, buf, B_S, &m) : NULL;
    CT *dx = F(dst)(L, dxo, off[dxo], c0, buf[B_OUT]);
    F(proj)(x, g, s, nb, mhi, mlo, rstd, c1, c2, NULL, NULL, NULL, dx);
    F(put)(L, dxo, off[dxo], c0, nb, dx);
  }
}

static int F(norm_run)(int kind, const norm_layout *L, const norm_params *p, int nt, int nin,
                       pb_operand *outs, int nout, int64_t psize, pb_kernel_ctx *ctx) {
  const int64_t nrows = L->nrows;
  const int64_t blk = L->ncols < NB ? L->ncols : NB;
  /* row chunks: fixed by the shape (so is every sum's order), taken by the threads */
  int nchunks = nt;
  CT *parts = NULL;
  const int hs = p->has_scale != 0, hb = p->has_bias != 0;
  const int nparts = kind == K_BWD ? hs + hb : 0;
  /* padded: partial sums 4 KiB apart would alias x's and g's rows in L1 (4K aliasing made
   * their read-modify-write cost as much as the rest of the backward) */
  const int64_t pstride = psize + 48;
  if (kind == K_BWD) {
    nchunks = nrows < NMAXCHUNK ? (int)nrows : NMAXCHUNK;
    /* partial sums cost chunks x psize: fewer chunks when the parameters are as large as x */
    while (nchunks > 1 && (int64_t)nchunks * psize > 4 * nrows * L->ncols + 65536) nchunks /= 2;
    if (nparts) {
      parts = ctx->scratch(ctx, sizeof(CT) * (size_t)(nchunks * nparts) * (size_t)pstride);
      if (!parts) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "no memory for partial sums");
      memset(parts, 0, sizeof(CT) * (size_t)(nchunks * nparts) * (size_t)pstride);
    }
  }
  if (nchunks < 1) nchunks = 1;
  CT *scratch = ctx->scratch(ctx, sizeof(CT) * (size_t)(B_N * blk) * (size_t)(nt > 0 ? nt : 1));
  if (!scratch) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "no memory for row blocks");
  const int chunks = kind == K_BWD ? nchunks : nt;
  /* The x-shaped operands: inputs xin[0..nxin) and the output xo. Rows strided along their
   * columns but contiguous along the innermost row dim (a channels-first layer norm,
   * LayerNorm2d: each element of a row on its own cache line) go TILE rows at a time through
   * row-major tiles: gathered and scattered column by column, TILE contiguous elements each,
   * so every line read serves TILE rows instead of one. */
  const int np = hs + hb;
  const int nxin = kind == K_FWD ? 1 : 2;
  /* add_normalize: the row forward runs on the view X of operands h, [s], [bias], y */
  norm_layout X = *L;
  if (kind == K_ADD) {
    X.nops = L->nops - 2;
    X.op[0] = L->op[2 + np];
    for (int o = 0; o < np; ++o) X.op[1 + o] = L->op[2 + o];
    X.op[1 + np] = L->op[3 + np];
  }
  norm_layout *Xs = NULL; /* per thread copies of X */
  if (kind == K_ADD) {
    Xs = ctx->scratch(ctx, sizeof(norm_layout) * (size_t)(nt > 0 ? nt : 1));
    if (!Xs) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "no memory for row views");
  }
  const int xin[2] = {0, kind == K_TAN ? 1 + np : 1};
  const int xo = kind == K_FWD ? 1 + np : kind == K_TAN ? 2 + np + hs : 2 + hs;
  const int last = L->nrd - 1;
  bool tiled = kind != K_ADD && L->ncols > 1 && L->ncols <= NB && L->rshape[last] >= 2;
  for (int k = 0; k <= nxin && tiled; ++k) {
    const norm_op *op = &L->op[k < nxin ? xin[k] : xo];
    tiled = op->rstr[last] == op->isz && !op->contig;
  }
  int64_t *coff = NULL; /* byte offset of every column, per tiled operand */
  /* rows per tile: each column read is ntile contiguous elements (whole lines, which the
   * adjacent-line prefetcher pairs), a tile of one operand at most 32 Ki elements (in L2):
   * measured with the prefetch below, 8.4 -> 6.4 ms CPU time for a LayerNorm2d of
   * 8x256x32x32 float32, against 0.9 ms channels-last: the transposing copies remain) */
  int64_t ntile = 32768 / (L->ncols > 1 ? L->ncols : 1);
  ntile = ntile < 16 ? 16 : ntile > NTILE ? NTILE : ntile;
  CT *tiles = NULL;
  if (tiled) {
    coff = ctx->scratch(ctx, sizeof(int64_t) * (size_t)(nxin + 1) * (size_t)L->ncols);
    tiles = ctx->scratch(ctx, sizeof(CT) * (size_t)((nxin + 1) * ntile) * (size_t)L->ncols *
                                  (size_t)(nt > 0 ? nt : 1));
    if (!coff || !tiles) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "no memory for tiles");
    for (int k = 0; k <= nxin; ++k) {
      const norm_op *op = &L->op[k < nxin ? xin[k] : xo];
      int64_t idx[PB_MAXDIMS] = {0}, off = 0, *co = coff + (size_t)k * (size_t)L->ncols;
      for (int64_t c = 0; c < L->ncols; ++c) {
        co[c] = off;
        for (int d = L->ncd - 1; d >= 0; --d) {
          off += op->cstr[d];
          if (++idx[d] < L->cshape[d]) break;
          off -= idx[d] * op->cstr[d];
          idx[d] = 0;
        }
      }
    }
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
  for (int c = 0; c < chunks; ++c) {
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    CT *buf[B_N];
    for (int b = 0; b < B_N; ++b) buf[b] = scratch + ((size_t)tid * B_N + (size_t)b) * (size_t)blk;
    CT *pscale = parts ? parts + (size_t)c * (size_t)(nparts * pstride) : NULL;
    CT *pbias = parts ? pscale + (hs ? pstride : 0) : NULL;
    const int64_t r0 = nrows * c / chunks, r1 = nrows * (c + 1) / chunks;
    row_iter it;
    row_start(L, &it, r0);
    norm_layout *Xt = NULL; /* add_normalize's view, h in this thread's scratch if streamed */
    if (kind == K_ADD) {
      Xt = &Xs[tid];
      *Xt = X;
      if (L->nt_h) {
        Xt->op[0].base = (char *)buf[B_T2];
        Xt->op[0].contig = Xt->op[0].incompute = 1;
      }
    }
    if (!tiled) {
      for (int64_t r = r0; r < r1; ++r) {
        if (kind == K_FWD) F(row_fwd)(L, p, it.off, buf);
        else if (kind == K_ADD) F(row_add)(L, Xt, p, it.off, buf);
        else if (kind == K_TAN) F(row_tan)(L, p, it.off, buf);
        else F(row_bwd)(L, p, it.off, buf, pscale, pbias);
        if (r + 1 < r1) row_next(L, &it);
      }
      if (L->nt_h) nt_fence();
      continue;
    }
    /* the tiled walk: the same row functions on a layout whose x-shaped operands are the
     * thread's tiles (contiguous rows of ncols) */
    norm_layout T = *L;
    const int64_t nc = L->ncols, rowb = nc * (int64_t)sizeof(CT);
    CT *tile[3];
    for (int k = 0; k <= nxin; ++k) {
      tile[k] = tiles + ((size_t)tid * (size_t)(nxin + 1) + (size_t)k) * (size_t)ntile * (size_t)nc;
      norm_op *op = &T.op[k < nxin ? xin[k] : xo];
      op->base = (char *)tile[k];
      op->contig = 1;
      op->incompute = 1;
    }
    for (int64_t r = r0; r < r1;) {
      int64_t n = L->rshape[last] - it.idx[last];
      if (n > r1 - r) n = r1 - r;
      if (n > ntile) n = ntile;
      for (int k = 0; k < nxin; ++k) { /* gather: column c of the tile's rows is contiguous */
        const char *src = L->op[xin[k]].base + it.off[xin[k]];
        const int64_t *co = coff + (size_t)k * (size_t)nc;
        for (int64_t cc = 0; cc < nc; ++cc) {
          CT col[NTILE];
          /* the next tile's part of this column: no hardware prefetcher follows ncols
           * streams at once */
          for (int64_t b = 0; b < n * L->op[xin[k]].isz; b += 64)
            __builtin_prefetch(src + co[cc] + n * L->op[xin[k]].isz + b, 0, 3);
          F(load_run)(L->dt, src + co[cc], L->op[xin[k]].isz, n, col);
          for (int64_t j = 0; j < n; ++j) tile[k][j * nc + cc] = col[j];
        }
      }
      char *dst = L->op[xo].base + it.off[xo];
      int64_t off[NMAXOP];
      for (int64_t j = 0; j < n; ++j) {
        for (int o = 0; o < L->nops; ++o) off[o] = it.off[o];
        for (int k = 0; k < nxin; ++k) off[xin[k]] = j * rowb;
        off[xo] = j * rowb;
        if (kind == K_FWD) F(row_fwd)(&T, p, off, buf);
        else if (kind == K_TAN) F(row_tan)(&T, p, off, buf);
        else F(row_bwd)(&T, p, off, buf, pscale, pbias);
        if (r + j + 1 < r1) row_next(L, &it);
      }
      const int64_t *co = coff + (size_t)nxin * (size_t)nc;
      for (int64_t cc = 0; cc < nc; ++cc) { /* scatter the output tile back */
        CT col[NTILE];
        for (int64_t j = 0; j < n; ++j) col[j] = tile[nxin][j * nc + cc];
        F(store_run)(L->dt, dst + co[cc], L->op[xo].isz, n, col);
      }
      r += n;
    }
  }
  if (!nparts) return 0;
  /* dscale, dbias: the chunks' partial sums in chunk order, parallel over the parameters */
  const int rt = pb_kernel_threads(ctx, psize * nchunks, NORM_GRAIN);
  for (int k = 0; k < nparts; ++k) {
    pb_operand *o = &outs[1 + k];
#ifdef _OPENMP
#pragma omp parallel for num_threads(rt) if (rt > 1)
#endif
    for (int64_t j0 = 0; j0 < psize; j0 += 1024) {
      const int64_t m = psize - j0 < 1024 ? psize - j0 : 1024;
      CT acc[1024];
      memcpy(acc, parts + (size_t)k * (size_t)pstride + (size_t)j0, sizeof(CT) * (size_t)m);
      for (int c = 1; c < nchunks; ++c) {
        const CT *src = parts + ((size_t)c * (size_t)nparts + (size_t)k) * (size_t)pstride + j0;
        for (int64_t j = 0; j < m; ++j) acc[j] += src[j];
      }
      F(store_run)(L->dt, (char *)o->data + j0 * o->itemsize, o->itemsize, m, acc);
    }
  }
  return 0;
}

#undef VW
#undef F
#undef CAT
#undef CAT_
#endif
