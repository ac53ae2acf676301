/* Fused dot-product attention (primitives/attention.py): forward, forward-mode tangent and
 * backward kernels, flash style.
 *
 * Layouts as jax.nn.dot_product_attention: query (B, T, N, H), key and value (B, S, K, H),
 * N = K * G (query head n reads key/value head n / G: GQA without repeating K/V). bias (compute
 * dtype) and mask (bool) are read broadcast to (B, N, T, S); query/key-value lengths are int32
 * (B,). The log-sum-exp is (B, N, T) in the compute dtype (float32, float64 for float64).
 *
 * Each task owns a block of queries of one head (the backward: one key/value head of one batch
 * element, so dK and dV are written by one thread) and walks tiles of keys: the scores of a
 * tile live in a per-thread scratch, never a T x S matrix. Key tiles outside every row's
 * causal / window / length range are skipped; a row that keeps no key at all is "fully masked"
 * and, as in JAX (masked logits at -0.7 * float32 max, so the softmax is uniform), gives the
 * mean of V over all S keys. Query rows past the query length give 0.
 *
 * This file is compiled once and includes itself twice: the body below "#else" per compute
 * type (R = float for float16/bfloat16/float32 operands, R = double for float64). */
#ifndef ATTN_BODY
#include "kernel_abi.h"
#include "ewise_math.h"
#include <float.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
  double scale;
  double softcap;       /* 0: none */
  int64_t left, right;  /* the window: key j kept for query i when i - left <= j <= i + right */
  int32_t causal, has_bias, has_mask, has_qlen, has_kvlen, has_window;
} attn_params;

#define BQ 64  /* queries per task */
#define BK 128 /* keys per tile */
#define UNBOUNDED ((int64_t)1 << 60)

/* the geometry of one call, operands broadcast to (B, N, T, S) where they are */
typedef struct {
  int64_t B, T, S, N, K, G, H;
  const pb_operand *q, *k, *v;
  const char *bias, *mask, *qlen, *kvlen;
  int64_t bs[4], ms[4], qls, kvls; /* bias/mask strides over (B, N, T, S); length strides */
  double scale, cap;
  int64_t left, right;
  int causal;
} geom;

static int attn_fail(pb_kernel_ctx *ctx, const char *what) {
  return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operands do not fit: %s", what);
}

/* Reads q, k, v, [bias], [mask], [qlen], [kvlen] from ins; *next: the index after them. */
static int geom_init(geom *g, const pb_operand *ins, int nin, const attn_params *p, int *next,
                     int compute_dtype, pb_kernel_ctx *ctx) {
  memset(g, 0, sizeof *g);
  int extra = !!p->has_bias + !!p->has_mask + !!p->has_qlen + !!p->has_kvlen;
  if (nin < 3 + extra) return attn_fail(ctx, "too few operands");
  const pb_operand *q = &ins[0], *k = &ins[1], *v = &ins[2];
  if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4) return attn_fail(ctx, "rank");
  g->B = q->shape[0]; g->T = q->shape[1]; g->N = q->shape[2]; g->H = q->shape[3];
  g->S = k->shape[1]; g->K = k->shape[2];
  if (k->shape[0] != g->B || k->shape[3] != g->H || !pb_operand_same_shape(k, v))
    return attn_fail(ctx, "key/value shape");
  if (q->dtype != k->dtype || q->dtype != v->dtype) return attn_fail(ctx, "dtypes");
  if (g->K == 0 ? g->N != 0 : g->N % g->K != 0) return attn_fail(ctx, "heads");
  g->G = g->K ? g->N / g->K : 1;
  g->q = q; g->k = k; g->v = v;
  int i = 3;
  const int64_t full[4] = {g->B, g->N, g->T, g->S};
  if (p->has_bias) {
    if (ins[i].dtype != compute_dtype || pb_operand_broadcast(&ins[i], 4, full, g->bs) < 0)
      return attn_fail(ctx, "bias");
    g->bias = ins[i++].data;
  }
  if (p->has_mask) {
    if (ins[i].dtype != PB_BOOL || pb_operand_broadcast(&ins[i], 4, full, g->ms) < 0)
      return attn_fail(ctx, "mask");
    g->mask = ins[i++].data;
  }
  if (p->has_qlen) {
    if (ins[i].dtype != PB_I32 || ins[i].ndim != 1 || ins[i].shape[0] != g->B)
      return attn_fail(ctx, "query_seq_lengths");
    g->qls = ins[i].strides[0];
    g->qlen = ins[i++].data;
  }
  if (p->has_kvlen) {
    if (ins[i].dtype != PB_I32 || ins[i].ndim != 1 || ins[i].shape[0] != g->B)
      return attn_fail(ctx, "key_value_seq_lengths");
    g->kvls = ins[i].strides[0];
    g->kvlen = ins[i++].data;
  }
  g->scale = p->scale; g->cap = p->softcap;
  g->causal = p->causal;
  g->left = p->has_window ? p->left : UNBOUNDED;
  g->right = p->has_window ? p->right : UNBOUNDED;
  if (g->left > UNBOUNDED) g->left = UNBOUNDED;
  if (g->right > UNBOUNDED) g->right = UNBOUNDED;
  if (g->left < -UNBOUNDED) g->left = -UNBOUNDED;
  if (g->right < -UNBOUNDED) g->right = -UNBOUNDED;
  *next = i;
  return 0;
}

/* rows [0, qlen) of batch element b are queries; keys [0, kvlen) are kept */
static int64_t geom_qlen(const geom *g, int64_t b) {
  if (!g->qlen) return g->T;
  int64_t n = *(const int32_t *)(g->qlen + b * g->qls);
  return n < 0 ? 0 : n > g->T ? g->T : n;
}
static int64_t geom_kvlen(const geom *g, int64_t b) {
  if (!g->kvlen) return g->S;
  int64_t n = *(const int32_t *)(g->kvlen + b * g->kvls);
  return n < 0 ? 0 : n > g->S ? g->S : n;
}
/* the keys [lo, hi] (inclusive) query row i keeps by the causal, window and length masks
 * (lo > hi: none); both are nondecreasing in i */
static inline void row_range(const geom *g, int64_t i, int64_t kvlen, int64_t *lo,
                             int64_t *hi) {
  int64_t l = i - g->left, h = i + g->right;
  if (g->causal && h > i) h = i;
  if (h > kvlen - 1) h = kvlen - 1;
  if (l < 0) l = 0;
  *lo = l; *hi = h;
}

static int threads_for(const pb_kernel_ctx *ctx, int64_t tasks, double flops) {
  int t = pb_kernel_threads(ctx, (int64_t)(flops > 9e18 ? 9e18 : flops), 1 << 20);
  if (t > tasks) t = (int)(tasks > 0 ? tasks : 1);
  return t < 1 ? 1 : t;
}
static inline int thread_id(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/* element loads and stores of the operand dtypes */
static inline double ld_any(const char *p, int dt) {
  switch (dt) {
    case PB_F16: return (double)*(const pb_f16 *)p;
    case PB_BF16: return pb_bf16_to_f32(*(const pb_bf16 *)p);
    case PB_F32: return *(const float *)p;
    default: return *(const double *)p;
  }
}

#include "attention_tiles.h" /* HAVE_F32_AVX512, nt_avx512, acc_avx512, cols_avx512 */

#define R_IS_FLOAT 1
#define ATTN_BODY 1
#define R float
#define SUF(x) x##_f32
#define EXP pb_expf
#define TANH pb_tanhf
#include "attention.c"
#undef R
#undef SUF
#undef EXP
#undef TANH
#undef R_IS_FLOAT
#define R_IS_FLOAT 0
#define R double
#define SUF(x) x##_f64
#define EXP pb_exp
#define TANH pb_tanh
#include "attention.c"
#undef R
#undef SUF
#undef EXP
#undef TANH

static int fwd_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                      const void *params, pb_kernel_ctx *ctx) {
  const attn_params *p = params;
  const int cdt = ins[0].dtype == PB_F64 ? PB_F64 : PB_F32;
  if (ins[0].dtype != PB_F16 && ins[0].dtype != PB_BF16 && ins[0].dtype != PB_F32 &&
      ins[0].dtype != PB_F64)
    return attn_fail(ctx, "dtype");
  geom g;
  int next, rc = geom_init(&g, ins, nin, p, &next, cdt, ctx);
  if (rc) return rc;
  if (nin != next || nout != 2 || outs[0].dtype != ins[0].dtype || outs[1].dtype != cdt)
    return attn_fail(ctx, "outputs");
  return cdt == PB_F64 ? fwd_f64(&g, &outs[0], &outs[1], ctx)
                       : fwd_f32(&g, &outs[0], &outs[1], ctx);
}

/* ins: q, k, v, [bias], [mask], [qlen], [kvlen], out (unused: the kernel sums p v itself, in
 * the compute dtype), lse, tq, tk, tv, [tbias]; out: the tangent */
static int jvp_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                      const void *params, pb_kernel_ctx *ctx) {
  const attn_params *p = params;
  const int cdt = ins[0].dtype == PB_F64 ? PB_F64 : PB_F32;
  geom g;
  int next, rc = geom_init(&g, ins, nin, p, &next, cdt, ctx);
  if (rc) return rc;
  if (nin != next + 5 + !!p->has_bias || nout != 1) return attn_fail(ctx, "operand count");
  const pb_operand *lse = &ins[next + 1], *tq = &ins[next + 2], *tk = &ins[next + 3],
                   *tv = &ins[next + 4];
  int64_t tbs[4] = {0, 0, 0, 0};
  const char *tb = NULL;
  if (p->has_bias) {
    const int64_t full[4] = {g.B, g.N, g.T, g.S};
    if (ins[next + 5].dtype != cdt || pb_operand_broadcast(&ins[next + 5], 4, full, tbs) < 0)
      return attn_fail(ctx, "bias tangent");
    tb = ins[next + 5].data;
  }
  if (!pb_operand_same_shape(tq, g.q) || !pb_operand_same_shape(tk, g.k) ||
      !pb_operand_same_shape(tv, g.v) || tq->dtype != g.q->dtype || tk->dtype != g.q->dtype ||
      tv->dtype != g.q->dtype || lse->dtype != cdt || lse->ndim != 3 ||
      lse->shape[0] != g.B || lse->shape[1] != g.N || lse->shape[2] != g.T ||
      outs[0].dtype != g.q->dtype)
    return attn_fail(ctx, "tangents");
  return cdt == PB_F64 ? jvp_f64(&g, lse, tq, tk, tv, tb, tbs, &outs[0], ctx)
                       : jvp_f32(&g, lse, tq, tk, tv, tb, tbs, &outs[0], ctx);
}

/* ins: q, k, v, [bias], [mask], [qlen], [kvlen], out, lse, dout; outs: dq, dk, dv, [dbias
 * (B, N, T, S)] */
static int bwd_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                      const void *params, pb_kernel_ctx *ctx) {
  const attn_params *p = params;
  const int cdt = ins[0].dtype == PB_F64 ? PB_F64 : PB_F32;
  geom g;
  int next, rc = geom_init(&g, ins, nin, p, &next, cdt, ctx);
  if (rc) return rc;
  if (nin != next + 3 || nout != 3 + !!p->has_bias) return attn_fail(ctx, "operand count");
  const pb_operand *o = &ins[next], *lse = &ins[next + 1], *d = &ins[next + 2];
  if (!pb_operand_same_shape(o, g.q) || !pb_operand_same_shape(d, g.q) ||
      o->dtype != g.q->dtype || d->dtype != g.q->dtype || lse->dtype != cdt ||
      lse->ndim != 3 || lse->shape[0] != g.B || lse->shape[1] != g.N || lse->shape[2] != g.T)
    return attn_fail(ctx, "out/lse/cotangent");
  for (int i = 0; i < 3; ++i)
    if (outs[i].dtype != g.q->dtype) return attn_fail(ctx, "gradient dtypes");
  if (p->has_bias && (outs[3].dtype != cdt || outs[3].ndim != 4)) return attn_fail(ctx, "dbias");
  pb_operand *db = p->has_bias ? &outs[3] : NULL;
  return cdt == PB_F64 ? bwd_f64(&g, o, lse, d, &outs[0], &outs[1], &outs[2], db, ctx)
                       : bwd_f32(&g, o, lse, d, &outs[0], &outs[1], &outs[2], db, ctx);
}

static const pb_kernel_def kernels[] = {
    {"dot_product_attention", fwd_kernel, -1, 2, sizeof(attn_params)},
    {"dot_product_attention_jvp", jvp_kernel, -1, 1, sizeof(attn_params)},
    {"dot_product_attention_bwd", bwd_kernel, -1, -1, sizeof(attn_params)},
};
PB_KERNELS(kernels)

#else /* ---- the body, per compute type R ---- */

/* dst[r * H + h] = src row r (rows `rs` bytes apart, elements `hs` apart), as R */
static void SUF(load_rows)(R *restrict dst, const char *src, int64_t rows, int64_t rs,
                           int64_t hs, int64_t H, int dt) {
  for (int64_t r = 0; r < rows; ++r) {
    const char *s = src + r * rs;
    R *restrict o = dst + r * H;
    if (dt == PB_F32 && hs == 4) {
      const float *f = (const float *)s;
      for (int64_t h = 0; h < H; ++h) o[h] = (R)f[h];
    } else if (dt == PB_F64 && hs == 8) {
      const double *f = (const double *)s;
      for (int64_t h = 0; h < H; ++h) o[h] = (R)f[h];
    } else {
      for (int64_t h = 0; h < H; ++h) o[h] = (R)ld_any(s + h * hs, dt);
    }
  }
}

/* dst[h * ld + r] = src row r element h (the transpose, for the score products) */
static void SUF(load_cols)(R *restrict dst, int64_t ld, const char *src, int64_t rows,
                           int64_t rs, int64_t hs, int64_t H, int dt) {
#if R_IS_FLOAT
  if (dt == PB_F32 && hs == 4 && rs % 4 == 0 && HAVE_F32_AVX512) {
    cols_avx512(dst, ld, (const float *)src, rows, rs / 4, H);
    return;
  }
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const char *s = src + r * rs;
    if (dt == PB_F32 && hs == 4) {
      const float *f = (const float *)s;
      for (int64_t h = 0; h < H; ++h) dst[h * ld + r] = (R)f[h];
    } else {
      for (int64_t h = 0; h < H; ++h) dst[h * ld + r] = (R)ld_any(s + h * hs, dt);
    }
  }
}

static void SUF(store_row)(char *dst, const R *src, int64_t H, int dt) {
  switch (dt) {
    case PB_F16: for (int64_t h = 0; h < H; ++h) ((pb_f16 *)dst)[h] = (pb_f16)src[h]; break;
    case PB_BF16:
      for (int64_t h = 0; h < H; ++h) ((pb_bf16 *)dst)[h] = pb_f32_to_bf16((float)src[h]);
      break;
    case PB_F32: for (int64_t h = 0; h < H; ++h) ((float *)dst)[h] = (float)src[h]; break;
    default: for (int64_t h = 0; h < H; ++h) ((double *)dst)[h] = (double)src[h]; break;
  }
}

/* c (m x n, ldc) = a (m x H) @ bt (H x n, ldb): the scores of a tile */
static PB_CLONES void SUF(gemm_nt)(int64_t m, int64_t n, int64_t H, const R *restrict a,
                                   const R *restrict bt, int64_t ldb, R *restrict c,
                                   int64_t ldc) {
#if R_IS_FLOAT
  if (HAVE_F32_AVX512) { nt_avx512(m, n, H, a, bt, ldb, c, ldc); return; }
#endif
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    R *c0 = c + i * ldc, *c1 = c0 + ldc, *c2 = c1 + ldc, *c3 = c2 + ldc;
    const R *a0 = a + i * H, *a1 = a0 + H, *a2 = a1 + H, *a3 = a2 + H;
    for (int64_t j = 0; j < n; ++j) c0[j] = c1[j] = c2[j] = c3[j] = 0;
    for (int64_t h = 0; h < H; ++h) {
      const R x0 = a0[h], x1 = a1[h], x2 = a2[h], x3 = a3[h];
      const R *restrict b = bt + h * ldb;
      for (int64_t j = 0; j < n; ++j) {
        c0[j] += x0 * b[j]; c1[j] += x1 * b[j]; c2[j] += x2 * b[j]; c3[j] += x3 * b[j];
      }
    }
  }
  for (; i < m; ++i) {
    R *c0 = c + i * ldc;
    const R *a0 = a + i * H;
    for (int64_t j = 0; j < n; ++j) c0[j] = 0;
    for (int64_t h = 0; h < H; ++h) {
      const R x0 = a0[h];
      const R *restrict b = bt + h * ldb;
      for (int64_t j = 0; j < n; ++j) c0[j] += x0 * b[j];
    }
  }
}

/* c (m x H) += a (m x n, lda) @ b (n x H) */
static PB_CLONES void SUF(gemm_nn)(int64_t m, int64_t n, int64_t H, const R *restrict a,
                                   int64_t lda, const R *restrict b, R *restrict c) {
#if R_IS_FLOAT
  if (HAVE_F32_AVX512) { acc_avx512(m, n, H, a, lda, 1, b, c); return; }
#endif
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    R *c0 = c + i * H, *c1 = c0 + H, *c2 = c1 + H, *c3 = c2 + H;
    const R *a0 = a + i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
    for (int64_t j = 0; j < n; ++j) {
      const R x0 = a0[j], x1 = a1[j], x2 = a2[j], x3 = a3[j];
      const R *restrict bj = b + j * H;
      for (int64_t h = 0; h < H; ++h) {
        c0[h] += x0 * bj[h]; c1[h] += x1 * bj[h]; c2[h] += x2 * bj[h]; c3[h] += x3 * bj[h];
      }
    }
  }
  for (; i < m; ++i) {
    R *c0 = c + i * H;
    const R *a0 = a + i * lda;
    for (int64_t j = 0; j < n; ++j) {
      const R x0 = a0[j];
      const R *restrict bj = b + j * H;
      for (int64_t h = 0; h < H; ++h) c0[h] += x0 * bj[h];
    }
  }
}

/* c (n x H) += a^T @ b: a (m x n, lda), b (m x H) */
static PB_CLONES void SUF(gemm_tn)(int64_t m, int64_t n, int64_t H, const R *restrict a,
                                   int64_t lda, const R *restrict b, R *restrict c) {
#if R_IS_FLOAT
  if (HAVE_F32_AVX512) { acc_avx512(n, m, H, a, 1, lda, b, c); return; }
#endif
  for (int64_t i = 0; i < m; ++i) {
    const R *ai = a + i * lda, *restrict bi = b + i * H;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const R x0 = ai[j], x1 = ai[j + 1], x2 = ai[j + 2], x3 = ai[j + 3];
      R *c0 = c + j * H, *c1 = c0 + H, *c2 = c1 + H, *c3 = c2 + H;
      for (int64_t h = 0; h < H; ++h) {
        c0[h] += x0 * bi[h]; c1[h] += x1 * bi[h]; c2[h] += x2 * bi[h]; c3[h] += x3 * bi[h];
      }
    }
    for (; j < n; ++j) {
      const R x0 = ai[j];
      R *c0 = c + j * H;
      for (int64_t h = 0; h < H; ++h) c0[h] += x0 * bi[h];
    }
  }
}

static PB_CLONES void SUF(exp_row)(R *restrict x, int64_t n, R m, R *restrict sum) {
  R s = 0;
  for (int64_t j = 0; j < n; ++j) {
    const R e = EXP(x[j] - m);
    x[j] = e;
    s += e;
  }
  *sum = s;
}

/* The large negative logit of masked entries (JAX: -0.7 * float32 max in the logits dtype). */
#define NEG ((R)(-0.7 * (double)FLT_MAX))

/* Turns the raw scores sc (m x n, ld) of rows i0.., keys j0.. of head (b, n) into the logits:
 * scaled, biased, soft-capped; entries the masks drop become -inf. th (when the cap is on)
 * receives tanh(a / cap) for the derivatives. any[r] |= row r keeps a key. */
static void SUF(logits)(const geom *g, R *restrict sc, int64_t ld, R *restrict th, int64_t b,
                        int64_t n, int64_t i0, int64_t m, int64_t j0, int64_t nk, int64_t kvlen,
                        int64_t qlen, unsigned char *any) {
  const R scale = (R)g->scale, cap = (R)g->cap, inv = g->cap != 0 ? (R)(1.0 / g->cap) : 0;
  for (int64_t r = 0; r < m; ++r) {
    const int64_t i = i0 + r;
    R *restrict x = sc + r * ld;
    int64_t lo, hi;
    row_range(g, i, kvlen, &lo, &hi);
    if (i >= qlen) lo = 1, hi = 0;
    for (int64_t c = 0; c < nk; ++c) x[c] *= scale;
    if (g->bias) {
      const char *bp = g->bias + b * g->bs[0] + n * g->bs[1] + i * g->bs[2] + j0 * g->bs[3];
      const int64_t st = g->bs[3];
      if (st == (int64_t)sizeof(R))
        for (int64_t c = 0; c < nk; ++c) x[c] += ((const R *)bp)[c];
      else
        for (int64_t c = 0; c < nk; ++c) x[c] += *(const R *)(bp + c * st);
    }
    if (cap != 0) {
      R *restrict t = th + r * ld;
      for (int64_t c = 0; c < nk; ++c) {
        t[c] = TANH(x[c] * inv);
        x[c] = cap * t[c];
      }
    }
    /* the masks: keys outside [lo, hi], or dropped by the boolean mask */
    int64_t a = lo - j0, e = hi - j0 + 1;
    if (a < 0) a = 0;
    if (e > nk) e = nk;
    if (a >= e) {
      for (int64_t c = 0; c < nk; ++c) x[c] = -INFINITY;
      continue;
    }
    for (int64_t c = 0; c < a; ++c) x[c] = -INFINITY;
    for (int64_t c = e; c < nk; ++c) x[c] = -INFINITY;
    if (g->mask) {
      const char *mp = g->mask + b * g->ms[0] + n * g->ms[1] + i * g->ms[2] + j0 * g->ms[3];
      const int64_t st = g->ms[3];
      int kept = 0;
      for (int64_t c = a; c < e; ++c) {
        const int k = mp[c * st] != 0;
        kept |= k;
        if (!k) x[c] = -INFINITY;
      }
      any[r] |= (unsigned char)kept;
    } else {
      any[r] = 1;
    }
  }
}

/* The key tiles [jlo, jhi] (inclusive) some row of [i0, i0 + m) keeps. */
static void SUF(tile_range)(const geom *g, int64_t i0, int64_t m, int64_t kvlen, int64_t qlen,
                            int64_t *jlo, int64_t *jhi) {
  int64_t last = i0 + m - 1;
  if (last > qlen - 1) last = qlen - 1;
  if (last < i0) { *jlo = 0; *jhi = -1; return; }
  int64_t lo, hi, lo2, hi2;
  row_range(g, i0, kvlen, &lo, &hi);
  row_range(g, last, kvlen, &lo2, &hi2);
  *jlo = lo; *jhi = hi2;
}

/* the mean of V over all S keys of (b, kv head kh): a fully masked row's output */
static void SUF(mean_v)(const geom *g, const pb_operand *v, int64_t b, int64_t kh,
                        R *restrict out) {
  const int64_t H = g->H;
  for (int64_t h = 0; h < H; ++h) out[h] = 0;
  for (int64_t j = 0; j < g->S; ++j) {
    const char *s = (const char *)v->data + b * v->strides[0] + j * v->strides[1] +
                    kh * v->strides[2];
    for (int64_t h = 0; h < H; ++h) out[h] += (R)ld_any(s + h * v->strides[3], v->dtype);
  }
  for (int64_t h = 0; h < H; ++h) out[h] /= (R)g->S;
}

#define OPND(o, b, i, n)                                                                     \
  ((const char *)(o)->data + (b) * (o)->strides[0] + (i) * (o)->strides[1] +                 \
   (n) * (o)->strides[2])

/* per-thread scratch of the forward and tangent kernels */
typedef struct {
  R *q, *kt, *v, *sc, *th, *acc, *aux, *tq, *tkt, *tv, *acc2, *mean;
  R *m, *l, *c;
  unsigned char *any;
  R *kall, *vall;   /* the forward's keys of one head, transposed (H x S), and values (S x H) */
  int64_t cached;   /* the (b, kv head) they hold, -1: none */
} SUF(fscratch);

static int SUF(fscratch_alloc)(SUF(fscratch) *s, int nt, int64_t H, int64_t S, int tangent,
                               pb_kernel_ctx *ctx) {
  const int64_t whole = tangent ? 0 : 2 * S * H;
  const size_t per = (size_t)(BQ * H * 3 + H * BK * 2 + BK * H * 2 + BQ * BK * 3 + BQ * H * 2 +
                              H + BQ * 3 + whole + 64);
  R *all = ctx->scratch(ctx, per * sizeof(R) * (size_t)nt);
  unsigned char *anyall = ctx->scratch(ctx, (size_t)BQ * (size_t)nt);
  if (!all || !anyall) return -1;
  for (int t = 0; t < nt; ++t) {
    R *p = all + per * (size_t)t;
    s[t].q = p; p += BQ * H;
    s[t].tq = p; p += BQ * H;
    s[t].acc = p; p += BQ * H;
    s[t].acc2 = p; p += BQ * H;
    s[t].aux = p; p += BQ * H;
    s[t].kt = p; p += H * BK;
    s[t].tkt = p; p += H * BK;
    s[t].v = p; p += BK * H;
    s[t].tv = p; p += BK * H;
    s[t].sc = p; p += BQ * BK;
    s[t].th = p; p += BQ * BK;
    s[t].c = p; p += BQ * BK; /* the tangent kernel's second score tile */
    s[t].mean = p; p += H;
    s[t].m = p; p += BQ;
    s[t].l = p; p += BQ;
    s[t].any = anyall + (size_t)BQ * (size_t)t;
    s[t].kall = p; p += whole / 2;
    s[t].vall = p; p += whole / 2;
    s[t].cached = -1;
  }
  (void)tangent;
  return 0;
}

static int SUF(fwd)(const geom *g, pb_operand *out, pb_operand *lse, pb_kernel_ctx *ctx) {
  const int64_t B = g->B, T = g->T, N = g->N, H = g->H, S = g->S;
  const int64_t nqb = (T + BQ - 1) / BQ, tasks = B * N * nqb;
  if (tasks == 0) return 0;
  const int nt = threads_for(ctx, tasks, 4.0 * (double)B * N * T * (double)S * (double)(H + 8));
  SUF(fscratch) *sc = ctx->scratch(ctx, sizeof(SUF(fscratch)) * (size_t)nt);
  if (!sc || SUF(fscratch_alloc)(sc, nt, H, S, 0, ctx) < 0)
    return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory for the attention scratch");
  const int odt = out->dtype;
  const int64_t osz = out->itemsize;
  R *lsed = lse->data;
  const pb_operand *q = g->q, *k = g->k, *v = g->v;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    SUF(fscratch) *s = &sc[thread_id()];
    const int64_t qb = task % nqb, n = (task / nqb) % N, b = task / (nqb * N);
    const int64_t kh = n / g->G, i0 = qb * BQ, m = T - i0 < BQ ? T - i0 : BQ;
    const int64_t qlen = geom_qlen(g, b), kvlen = geom_kvlen(g, b);
    SUF(load_rows)(s->q, OPND(q, b, i0, n), m, q->strides[1], q->strides[3], H, q->dtype);
    for (int64_t r = 0; r < m; ++r) {
      s->m[r] = -INFINITY;
      s->l[r] = 0;
      s->any[r] = 0;
    }
    memset(s->acc, 0, sizeof(R) * (size_t)(m * H));
    int64_t jlo, jhi;
    SUF(tile_range)(g, i0, m, kvlen, qlen, &jlo, &jhi);
    if (jlo <= jhi && s->cached != b * g->K + kh) { /* this head's keys and values, once */
      SUF(load_cols)(s->kall, S, OPND(k, b, 0, kh), kvlen, k->strides[1], k->strides[3], H,
                     k->dtype);
      SUF(load_rows)(s->vall, OPND(v, b, 0, kh), kvlen, v->strides[1], v->strides[3], H,
                     v->dtype);
      s->cached = b * g->K + kh;
    }
    for (int64_t j0 = jlo; j0 <= jhi; j0 += BK) {
      const int64_t nk = jhi + 1 - j0 < BK ? jhi + 1 - j0 : BK;
      SUF(gemm_nt)(m, nk, H, s->q, s->kall + j0, S, s->sc, BK);
      SUF(logits)(g, s->sc, BK, s->th, b, n, i0, m, j0, nk, kvlen, qlen, s->any);
      for (int64_t r = 0; r < m; ++r) {
        R *x = s->sc + r * BK;
        R mx = -INFINITY;
        for (int64_t c = 0; c < nk; ++c) mx = x[c] > mx ? x[c] : mx;
        if (mx == -INFINITY) { /* nothing kept in this tile: p = 0 */
          memset(x, 0, sizeof(R) * (size_t)nk);
          continue;
        }
        const R mnew = mx > s->m[r] ? mx : s->m[r];
        const R alpha = EXP(s->m[r] - mnew);
        R sum;
        SUF(exp_row)(x, nk, mnew, &sum);
        s->l[r] = s->l[r] * alpha + sum;
        s->m[r] = mnew;
        if (alpha != 1) {
          R *a = s->acc + r * H;
          for (int64_t h = 0; h < H; ++h) a[h] *= alpha;
        }
      }
      SUF(gemm_nn)(m, nk, H, s->sc, BK, s->vall + j0 * H, s->acc);
    }
    int have_mean = 0;
    for (int64_t r = 0; r < m; ++r) {
      const int64_t i = i0 + r;
      R *a = s->acc + r * H;
      R *lrow = lsed + (b * N + n) * T + i;
      if (i >= qlen || S == 0) { /* padded query rows are zeroed (JAX) */
        for (int64_t h = 0; h < H; ++h) a[h] = 0;
        *lrow = S == 0 ? -INFINITY : NEG + (R)log((double)S);
      } else if (!s->any[r]) { /* fully masked: the uniform softmax over all S keys */
        if (!have_mean) SUF(mean_v)(g, v, b, kh, s->mean), have_mean = 1;
        memcpy(a, s->mean, sizeof(R) * (size_t)H);
        *lrow = NEG + (R)log((double)S);
      } else {
        const R inv = 1 / s->l[r];
        for (int64_t h = 0; h < H; ++h) a[h] *= inv;
        *lrow = s->m[r] + (R)log((double)s->l[r]);
      }
      SUF(store_row)((char *)out->data + ((b * T + i) * N + n) * H * osz, a, H, odt);
    }
  }
  return 0;
}

/* The tangent of the output along (tq, tk, tv, tbias):
 * t_i = sum_j p_ij (dc_ij v_j + tv_j) - (sum_j p_ij dc_ij) o_i, o_i = sum_j p_ij v_j, where dc
 * is the logit's tangent (0 where masked). */
static int SUF(jvp)(const geom *g, const pb_operand *lse, const pb_operand *tq,
                    const pb_operand *tk, const pb_operand *tv, const char *tb,
                    const int64_t *tbs, pb_operand *out, pb_kernel_ctx *ctx) {
  const int64_t B = g->B, T = g->T, N = g->N, H = g->H, S = g->S;
  const int64_t nqb = (T + BQ - 1) / BQ, tasks = B * N * nqb;
  if (tasks == 0) return 0;
  const int nt = threads_for(ctx, tasks, 8.0 * (double)B * N * T * (double)S * (double)(H + 8));
  SUF(fscratch) *sc = ctx->scratch(ctx, sizeof(SUF(fscratch)) * (size_t)nt);
  if (!sc || SUF(fscratch_alloc)(sc, nt, H, S, 1, ctx) < 0)
    return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory for the attention scratch");
  const int odt = out->dtype;
  const int64_t osz = out->itemsize;
  const pb_operand *q = g->q, *k = g->k, *v = g->v;
  const R scale = (R)g->scale;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    SUF(fscratch) *s = &sc[thread_id()];
    const int64_t qb = task % nqb, n = (task / nqb) % N, b = task / (nqb * N);
    const int64_t kh = n / g->G, i0 = qb * BQ, m = T - i0 < BQ ? T - i0 : BQ;
    const int64_t qlen = geom_qlen(g, b), kvlen = geom_kvlen(g, b);
    /* the log-sum-exps of rows i0..: an operand, any strides (a batched tangent's broadcast) */
    const char *lrow = (const char *)lse->data + b * lse->strides[0] + n * lse->strides[1] +
                       i0 * lse->strides[2];
    SUF(load_rows)(s->q, OPND(q, b, i0, n), m, q->strides[1], q->strides[3], H, q->dtype);
    SUF(load_rows)(s->tq, OPND(tq, b, i0, n), m, tq->strides[1], tq->strides[3], H, tq->dtype);
    for (int64_t r = 0; r < m; ++r) s->any[r] = 0, s->m[r] = 0;  /* m: sum_j p dc */
    memset(s->acc, 0, sizeof(R) * (size_t)(m * H));   /* sum p (dc v + tv) */
    memset(s->acc2, 0, sizeof(R) * (size_t)(m * H));  /* sum p v */
    int64_t jlo, jhi;
    SUF(tile_range)(g, i0, m, kvlen, qlen, &jlo, &jhi);
    for (int64_t j0 = jlo; j0 <= jhi; j0 += BK) {
      const int64_t nk = jhi + 1 - j0 < BK ? jhi + 1 - j0 : BK;
      SUF(load_cols)(s->kt, BK, OPND(k, b, j0, kh), nk, k->strides[1], k->strides[3], H, k->dtype);
      SUF(load_cols)(s->tkt, BK, OPND(tk, b, j0, kh), nk, tk->strides[1], tk->strides[3], H,
                     tk->dtype);
      SUF(load_rows)(s->v, OPND(v, b, j0, kh), nk, v->strides[1], v->strides[3], H, v->dtype);
      SUF(load_rows)(s->tv, OPND(tv, b, j0, kh), nk, tv->strides[1], tv->strides[3], H, tv->dtype);
      SUF(gemm_nt)(m, nk, H, s->q, s->kt, BK, s->sc, BK);
      SUF(logits)(g, s->sc, BK, s->th, b, n, i0, m, j0, nk, kvlen, qlen, s->any);
      /* the scores' tangent: scale (tq k + q tk) (+ tbias), through the cap */
      SUF(gemm_nt)(m, nk, H, s->tq, s->kt, BK, s->c, BK);
      for (int64_t r = 0; r < m; ++r) {
        const int64_t i = i0 + r;
        R *x = s->sc + r * BK, *dc = s->c + r * BK;
        const R *qr = s->q + r * H;
        /* dc += q_r . tk_j */
        for (int64_t h = 0; h < H; ++h) {
          const R qh = qr[h];
          const R *tkh = s->tkt + h * BK;
          for (int64_t c = 0; c < nk; ++c) dc[c] += qh * tkh[c];
        }
        const R li = *(const R *)(lrow + r * lse->strides[2]);
        R cs = 0;
        for (int64_t c = 0; c < nk; ++c) {
          const R p = x[c] == -INFINITY ? 0 : EXP(x[c] - li);
          R d = dc[c] * scale;
          if (tb) d += *(const R *)(tb + b * tbs[0] + n * tbs[1] + i * tbs[2] + (j0 + c) * tbs[3]);
          if (g->cap != 0) {
            const R t = s->th[r * BK + c];
            d *= 1 - t * t;
          }
          x[c] = p;
          dc[c] = p * d;
          cs += dc[c];
        }
        s->m[r] += cs;
      }
      SUF(gemm_nn)(m, nk, H, s->c, BK, s->v, s->acc);
      SUF(gemm_nn)(m, nk, H, s->sc, BK, s->tv, s->acc);
      SUF(gemm_nn)(m, nk, H, s->sc, BK, s->v, s->acc2);
    }
    int have_mean = 0;
    for (int64_t r = 0; r < m; ++r) {
      const int64_t i = i0 + r;
      R *a = s->acc + r * H, *o = s->acc2 + r * H;
      if (i >= qlen || S == 0) {
        for (int64_t h = 0; h < H; ++h) a[h] = 0;
      } else if (!s->any[r]) { /* uniform weights, logits' tangents masked: the mean of tv */
        if (!have_mean) SUF(mean_v)(g, tv, b, kh, s->mean), have_mean = 1;
        memcpy(a, s->mean, sizeof(R) * (size_t)H);
      } else {
        const R cs = s->m[r];
        for (int64_t h = 0; h < H; ++h) a[h] -= cs * o[h];
      }
      SUF(store_row)((char *)out->data + ((b * T + i) * N + n) * H * osz, a, H, odt);
    }
  }
  return 0;
}

/* One row of a backward tile: x (logits, -inf where masked) becomes p = exp(x - lse), dp
 * (dO . v) becomes dA = p (dp - delta) (times 1 - t^2 under the cap). */
static PB_CLONES void SUF(bwd_row)(R *restrict x, R *restrict dp, const R *restrict th,
                                   int64_t n, R li, R de) {
  for (int64_t c = 0; c < n; ++c) {
    const R pr = EXP(x[c] - li); /* 0 for -inf */
    x[c] = pr;
    dp[c] = pr * (dp[c] - de);
  }
  if (th)
    for (int64_t c = 0; c < n; ++c) dp[c] *= 1 - th[c] * th[c];
}

/* The backward kernel. A task is one key/value head of one batch element and a chunk of its
 * keys (all S of them when there are enough heads to keep the threads busy), the G query heads
 * in turn: dK and dV of the chunk (per-thread accumulators) have one writer. With one chunk a
 * task also owns its rows of dQ; with several, each chunk sums its share of dQ into a buffer
 * of its own and the buffers are added at the end, in order. A fully masked query row (marked
 * by its log-sum-exp, NEG + log S) has uniform weights and no logit gradient: it adds dO / S
 * to every dV row. */
static int SUF(bwd)(const geom *g, const pb_operand *o, const pb_operand *lse,
                    const pb_operand *d, pb_operand *dq, pb_operand *dk, pb_operand *dv,
                    pb_operand *db, pb_kernel_ctx *ctx) {
  const int64_t B = g->B, T = g->T, N = g->N, H = g->H, S = g->S, K = g->K, G = g->G;
  const int64_t heads = B * K;
  const int64_t qsz = dq->itemsize;
  if (db) { /* the bias gradient is zero wherever no kept logit is */
    const size_t n = (size_t)(B * N * T * S) * sizeof(R);
    if (n) memset(db->data, 0, n);
  }
  if (heads == 0) return 0;
  if (T == 0 || S == 0 || H == 0) {
    if (B * T * N * H) memset(dq->data, 0, (size_t)(B * T * N * H) * (size_t)qsz);
    if (B * S * K * H) {
      memset(dk->data, 0, (size_t)(B * S * K * H) * (size_t)qsz);
      memset(dv->data, 0, (size_t)(B * S * K * H) * (size_t)qsz);
    }
    return 0;
  }
  const double flops = 10.0 * (double)B * N * T * (double)S * (double)(H + 8);
  /* chunks of keys (multiples of the tile) so that there are about 8 tasks: decided by the
   * sizes alone, so that the bits of dQ (summed over chunks in order) do not depend on the
   * threads */
  int64_t chunks = 1, kc = S;
  if (heads < 8 && S > BK && flops > 4e6) {
    const int64_t tiles = (S + BK - 1) / BK;
    /* at most 64 MiB of dQ shares (MQA: few key/value heads, many query heads) */
    const int64_t most = ((int64_t)64 << 20) / ((int64_t)sizeof(R) * B * T * N * H);
    chunks = (8 + heads - 1) / heads;
    if (chunks > tiles) chunks = tiles;
    if (chunks > most) chunks = most > 1 ? most : 1;
    kc = ((tiles + chunks - 1) / chunks) * BK;
    chunks = (S + kc - 1) / kc;
  }
  const int64_t tasks = heads * chunks;
  const int nt = threads_for(ctx, tasks, flops);
  const size_t per = (size_t)(BQ * H * 4 + kc * H * 5 + BQ * BK * 3 + H + BQ * 2 + 64);
  R *all = ctx->scratch(ctx, per * sizeof(R) * (size_t)nt);
  unsigned char *anyall = ctx->scratch(ctx, (size_t)BQ * (size_t)nt);
  const size_t qn = (size_t)(B * T * N * H);
  R *dqbuf = chunks > 1 ? ctx->scratch(ctx, qn * sizeof(R) * (size_t)chunks) : NULL;
  if (!all || !anyall || (chunks > 1 && !dqbuf))
    return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory for the attention scratch");
  if (dqbuf) memset(dqbuf, 0, qn * sizeof(R) * (size_t)chunks);
  const pb_operand *q = g->q, *k = g->k, *v = g->v;
  const R scale = (R)g->scale, marker = NEG + (R)log((double)S);
  const int qdt = dq->dtype;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int tid = thread_id();
    R *p = all + per * (size_t)tid;
    R *qs = p; p += BQ * H;
    R *dos = p; p += BQ * H;
    R *dqs = p; p += BQ * H;
    R *os = p; p += BQ * H;
    R *ktc = p; p += H * kc; /* the chunk's keys, transposed, and values, transposed */
    R *vtc = p; p += H * kc;
    R *krc = p; p += kc * H; /* and its keys as rows */
    R *sc = p; p += BQ * BK;
    R *th = p; p += BQ * BK;
    R *dp = p; p += BQ * BK;
    R *dks = p; p += kc * H;
    R *dvs = p; p += kc * H;
    R *dsum = p; p += H;
    R *delta = p; p += BQ;
    R *lrow = p; p += BQ;
    unsigned char *any = anyall + (size_t)BQ * (size_t)tid;
    const int64_t c = task % chunks, b = task / chunks / K, kh = (task / chunks) % K;
    const int64_t c0 = c * kc, c1 = c0 + kc < S ? c0 + kc : S; /* keys [c0, c1) */
    const int64_t qlen = geom_qlen(g, b), kvlen = geom_kvlen(g, b);
    R *dqt = dqbuf ? dqbuf + qn * (size_t)c : NULL; /* this chunk's share of dQ */
    memset(dks, 0, sizeof(R) * (size_t)((c1 - c0) * H));
    memset(dvs, 0, sizeof(R) * (size_t)((c1 - c0) * H));
    memset(dsum, 0, sizeof(R) * (size_t)H);
    const int64_t kend = c1 < kvlen ? c1 : kvlen > c0 ? kvlen : c0; /* keys any row keeps */
    SUF(load_cols)(ktc, kc, OPND(k, b, c0, kh), kend - c0, k->strides[1], k->strides[3], H,
                   k->dtype);
    SUF(load_rows)(krc, OPND(k, b, c0, kh), kend - c0, k->strides[1], k->strides[3], H, k->dtype);
    SUF(load_cols)(vtc, kc, OPND(v, b, c0, kh), kend - c0, v->strides[1], v->strides[3], H,
                   v->dtype);
    for (int64_t gi = 0; gi < G; ++gi) {
      const int64_t n = kh * G + gi;
      const char *lse_n = (const char *)lse->data + b * lse->strides[0] + n * lse->strides[1];
      const int64_t ls = lse->strides[2];
      for (int64_t i = 0; i < qlen; ++i) /* fully masked rows */
        if (*(const R *)(lse_n + i * ls) == marker) {
          const char *src = OPND(d, b, i, n);
          for (int64_t h = 0; h < H; ++h) dsum[h] += (R)ld_any(src + h * d->strides[3], d->dtype);
        }
      for (int64_t i0 = 0; i0 < T; i0 += BQ) {
        const int64_t m = T - i0 < BQ ? T - i0 : BQ;
        int64_t jlo, jhi;
        SUF(tile_range)(g, i0, m, kvlen, qlen, &jlo, &jhi);
        if (jlo < c0) jlo = c0;
        if (jhi > c1 - 1) jhi = c1 - 1;
        if (jlo > jhi) {
          if (chunks == 1) /* no key: no gradient for these rows */
            for (int64_t r = 0; r < m; ++r)
              memset((char *)dq->data + ((b * T + i0 + r) * N + n) * H * qsz, 0, (size_t)(H * qsz));
          continue;
        }
        SUF(load_rows)(qs, OPND(q, b, i0, n), m, q->strides[1], q->strides[3], H, q->dtype);
        SUF(load_rows)(dos, OPND(d, b, i0, n), m, d->strides[1], d->strides[3], H, d->dtype);
        SUF(load_rows)(os, OPND(o, b, i0, n), m, o->strides[1], o->strides[3], H, o->dtype);
        memset(dqs, 0, sizeof(R) * (size_t)(m * H));
        for (int64_t r = 0; r < m; ++r) {
          R acc = 0;
          for (int64_t h = 0; h < H; ++h) acc += dos[r * H + h] * os[r * H + h];
          delta[r] = acc;
          lrow[r] = *(const R *)(lse_n + (i0 + r) * ls);
        }
        for (int64_t j0 = jlo; j0 <= jhi; j0 += BK) {
          const int64_t nk = jhi + 1 - j0 < BK ? jhi + 1 - j0 : BK;
          const R *kt = ktc + (j0 - c0), *vt = vtc + (j0 - c0), *kr = krc + (j0 - c0) * H;
          SUF(gemm_nt)(m, nk, H, qs, kt, kc, sc, BK);
          SUF(logits)(g, sc, BK, th, b, n, i0, m, j0, nk, kvlen, qlen, any);
          SUF(gemm_nt)(m, nk, H, dos, vt, kc, dp, BK);
          for (int64_t r = 0; r < m; ++r) {
            const int64_t i = i0 + r;
            R *x = sc + r * BK, *dpr = dp + r * BK;
            SUF(bwd_row)(x, dpr, g->cap != 0 ? th + r * BK : NULL, nk, lrow[r], delta[r]);
            if (db) {
              R *dbr = (R *)db->data + ((b * N + n) * T + i) * S + j0;
              memcpy(dbr, dpr, sizeof(R) * (size_t)nk);
            }
            for (int64_t cc = 0; cc < nk; ++cc) dpr[cc] *= scale;
          }
          SUF(gemm_tn)(m, nk, H, sc, BK, dos, dvs + (j0 - c0) * H); /* dV += P^T dO */
          SUF(gemm_tn)(m, nk, H, dp, BK, qs, dks + (j0 - c0) * H);  /* dK += dS^T Q */
          SUF(gemm_nn)(m, nk, H, dp, BK, kr, dqs);                  /* dQ += dS K */
        }
        for (int64_t r = 0; r < m; ++r) {
          const int64_t at = ((b * T + i0 + r) * N + n) * H;
          if (dqt) {
            for (int64_t h = 0; h < H; ++h) dqt[at + h] += dqs[r * H + h];
          } else {
            SUF(store_row)((char *)dq->data + at * qsz, dqs + r * H, H, qdt);
          }
        }
      }
    }
    const R invS = 1 / (R)S;
    for (int64_t j = c0; j < c1; ++j) {
      R *dvr = dvs + (j - c0) * H;
      for (int64_t h = 0; h < H; ++h) dvr[h] += dsum[h] * invS;
      SUF(store_row)((char *)dk->data + ((b * S + j) * K + kh) * H * qsz, dks + (j - c0) * H, H,
                     qdt);
      SUF(store_row)((char *)dv->data + ((b * S + j) * K + kh) * H * qsz, dvr, H, qdt);
    }
  }
  if (dqbuf) { /* dQ: the chunks' shares, summed in order */
    const int64_t rows = B * T * N;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t r = 0; r < rows; ++r) {
      R *acc = dqbuf + r * H;
      for (int64_t t = 1; t < chunks; ++t) {
        const R *o2 = dqbuf + qn * (size_t)t + r * H;
        for (int64_t h = 0; h < H; ++h) acc[h] += o2[h];
      }
      SUF(store_row)((char *)dq->data + r * H * qsz, acc, H, qdt);
    }
  }
  return 0;
}

#undef NEG
#undef OPND
#endif
