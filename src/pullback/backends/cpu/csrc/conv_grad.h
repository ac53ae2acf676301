/* conv.c's float32 gradient and depthwise paths, included after conv_fast.h (whose image
 * buffers they use): the weight gradient JAX's transpose rule builds, depthwise convolutions and
 * their weight gradients. */

/* ---- the weight-gradient path ---- */

/* In this call's terms (JAX's kernel-cotangent convolution): y[b, o, p] = sum over images c and
 * positions t of x[b, c, p s + t - pl] k[o, c, t]. Per output position p (a forward kernel tap)
 * and image c: y_p^T (O x Nb) += k_c (O x wide t) @ x_c shifted (wide t x Nb), both operands
 * with contiguous rows, k_c zero in the wide columns past the kernel's width. */
#define WG_CHUNKS 8
/* at most this many (tap, batch row) products of an image run as one register-blocked pass
 * (wg_small): with few input channels (a first layer's 1 or 3) the per-tap products are GEMVs */
#define WG_SMALL 12

#if PB_HAVE_AVX512
#include "avx512_regs.h"
/* out[q] (O) (+)= sum over r < R of a[q][r] * kw[r] (O), for nq <= WG_SMALL rows q at once:
 * each row of kw is loaded once for every q, the sums stay in registers (32 columns a pass) */
static PB_AVX512 void wg_small(int nq, const float *const *a, int64_t R, const float *kw,
                               int64_t O, float *const *out, bool add) {
  for (int64_t o0 = 0; o0 < O; o0 += 32) {
    const __mmask16 m0 = pb_lanes16(O - o0), m1 = pb_lanes16(O - o0 - 16);
    __m512 acc[WG_SMALL][2];
    for (int q = 0; q < WG_SMALL; ++q) acc[q][0] = acc[q][1] = _mm512_setzero_ps();
    for (int64_t r = 0; r < R; ++r) {
      const float *kr = kw + r * O + o0;
      const __m512 k0 = _mm512_maskz_loadu_ps(m0, kr), k1 = _mm512_maskz_loadu_ps(m1, kr + 16);
#pragma GCC unroll 12
      for (int q = 0; q < WG_SMALL; ++q)
        if (q < nq) {
          const __m512 x = _mm512_set1_ps(a[q][r]);
          acc[q][0] = _mm512_fmadd_ps(x, k0, acc[q][0]);
          acc[q][1] = _mm512_fmadd_ps(x, k1, acc[q][1]);
        }
    }
    for (int q = 0; q < nq; ++q) {
      float *o = out[q] + o0;
      if (add) {
        acc[q][0] = _mm512_add_ps(acc[q][0], _mm512_maskz_loadu_ps(m0, o));
        acc[q][1] = _mm512_add_ps(acc[q][1], _mm512_maskz_loadu_ps(m1, o + 16));
      }
      _mm512_mask_storeu_ps(o, m0, acc[q][0]);
      _mm512_mask_storeu_ps(o + 16, m1, acc[q][1]);
    }
  }
}
#endif

typedef struct {
  const conv_geom *g;
  const view2 *v;
  pixbuf b;            /* one image of x, plane-major over this call's batch (ch = Nb) */
  int64_t kw_rows;     /* rows of the wide k: k_h * width */
  int64_t nimg, chunk; /* images, images per chunk */
  float *accs;         /* WG_CHUNKS x plane x O x Nb */
  float *scr;          /* per thread: the image buffer and the wide k */
  int64_t scr_len;
  int failed;
} wjob;

static void wg_chunk(wjob *j, int64_t ch, int tid) {
  const conv_geom *g = j->g;
  const view2 *v = j->v;
  const int64_t Nb = g->Nb, O = g->O, width = j->b.width, P = g->plane;
  float *buf = j->scr + (size_t)tid * (size_t)j->scr_len;
  float *kw = buf + j->b.image_px * Nb;
  float *acc = j->accs + (size_t)ch * (size_t)(P * O * Nb);
  const int64_t c0 = ch * j->chunk, c1 = c0 + j->chunk < j->nimg ? c0 + j->chunk : j->nimg;
  if (c0 >= c1) {
    memset(acc, 0, (size_t)(P * O * Nb) * 4);
    return;
  }
  /* y_p (Nb x O) += x_c's planes at p's offset (Nb x wide t, rows in place) @ k_c (wide t x O,
   * packed once per image for its P products: one product id) */
  const npy_intp as[3] = {0, (npy_intp)(j->b.image_px * 4), 4};
  const npy_intp bs[3] = {0, (npy_intp)(O * 4), 4};
  const npy_intp cs[3] = {0, (npy_intp)(O * 4), 4};
  for (int64_t c = c0; c < c1; ++c) {
    planebuf_fill(&j->b, buf, g->x + c * g->xs_c, g->xs_n, v->xs[0], v->xs[1], v->in[0],
                  v->in[1]);
    /* the wide k of image c, pixel-major: kw[(th * width + tw) * O + o], read along its rows
     * (o outermost) when o is not its innermost dimension */
    if (g->ws_o == 4) {
      for (int64_t th = 0; th < v->k[0]; ++th)
        for (int64_t tw = 0; tw < width; ++tw) {
          float *px = kw + (th * width + tw) * O;
          if (tw >= v->k[1]) memset(px, 0, (size_t)O * 4);
          else memcpy(px, g->w + c * g->ws_i + th * v->ws[0] + tw * v->ws[1], (size_t)O * 4);
        }
    } else {
      for (int64_t th = 0; th < v->k[0]; ++th)
        for (int64_t tw = v->k[1]; tw < width; ++tw)
          memset(kw + (th * width + tw) * O, 0, (size_t)O * 4);
      for (int64_t o = 0; o < O; ++o)
        for (int64_t th = 0; th < v->k[0]; ++th) {
          const char *src = g->w + o * g->ws_o + c * g->ws_i + th * v->ws[0];
          float *dst = kw + th * width * O + o;
          for (int64_t tw = 0; tw < v->k[1]; ++tw)
            dst[tw * O] = *(const float *)(src + tw * v->ws[1]);
        }
    }
#if PB_HAVE_AVX512
    if (P * Nb <= WG_SMALL) {
      const float *rows[WG_SMALL];
      float *outs[WG_SMALL];
      for (int64_t p = 0; p < P; ++p) {
        const int64_t uh = p / v->out[1] * v->s[0], uw = p % v->out[1] * v->s[1];
        const int64_t region = (uh % v->rd[0]) * v->rd[1] + uw % v->rd[1];
        for (int64_t bb = 0; bb < Nb; ++bb) {
          rows[p * Nb + bb] = buf + bb * j->b.image_px + region * j->b.region_px +
                              (uh / v->rd[0]) * width + uw / v->rd[1];
          outs[p * Nb + bb] = acc + (p * Nb + bb) * O;
        }
      }
      wg_small((int)(P * Nb), rows, j->kw_rows, kw, O, outs, c > c0);
      continue;
    }
#endif
    const pb_sgemm_opts opts = {NULL, NULL, false, pb_sgemm_product_id(), NULL, NULL};
    for (int64_t ph = 0; ph < v->out[0]; ++ph)
      for (int64_t pw = 0; pw < v->out[1]; ++pw) {
        const int64_t p = ph * v->out[1] + pw;
        const int64_t uh = ph * v->s[0], uw = pw * v->s[1];
        const int64_t region = (uh % v->rd[0]) * v->rd[1] + uw % v->rd[1];
        const float *a = buf + region * j->b.region_px + (uh / v->rd[0]) * width + uw / v->rd[1];
        if (pb_sgemm(Nb, O, j->kw_rows, (const char *)a, as, (const char *)kw, bs,
                     (char *)(acc + p * Nb * O), cs, c > c0, &opts))
          j->failed = 1;
      }
  }
}

static int conv_fast_wgrad(conv_geom *g, pb_kernel_ctx *ctx) {
  view2 v;
  view2_of(g, &v);
  if (g->in_dt != PB_F32 || g->out_dt != PB_F32 || g->nsp < 1 || g->nsp > 2 || !fast_usable())
    return 0;
  if (g->B != 1 || g->G != 1 || g->Nb < 1 || g->O < 16 || g->C < 1 || g->plane == 0 ||
      g->taps <= g->plane || g->plane > 1024)
    return 0;
  for (int d = 0; d < 2; ++d)
    if (v.ld[d] != 1) return 0;
  if ((double)g->plane * (double)g->O * (double)g->C * (double)g->taps * (double)g->Nb < 2e6)
    return 0;
  wjob j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.v = &v;
  pixbuf *b = &j.b;
  b->ch = g->Nb;
  /* a strided forward (this call's rhs dilation rd): x split into its rd phases, so that
   * output position p reads one phase image at a stride-1 window */
  if (pixbuf_phases(b, &v, v.rd[0], v.rd[1], ((v.out[1] - 1) * v.s[1]) / v.rd[1] + 1, ctx))
    return -1;
  j.kw_rows = v.k[0] * b->width;
  j.nimg = g->C;
  j.chunk = (j.nimg + WG_CHUNKS - 1) / WG_CHUNKS;
  const int64_t P = g->plane, O = g->O, Nb = g->Nb;
  const double work = (double)P * (double)O * (double)g->C * (double)g->taps * (double)Nb;
  const int nt = pb_kernel_threads(ctx, (int64_t)(work / 1e5) + 1, 8);
  j.scr_len = b->image_px * Nb + O * j.kw_rows + 16;
  j.scr = ctx->scratch(ctx, (size_t)nt * (size_t)j.scr_len * 4);
  j.accs = ctx->scratch(ctx, (size_t)WG_CHUNKS * (size_t)(P * O * Nb) * 4);
  if (!j.scr || !j.accs) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
  for (int64_t ch = 0; ch < WG_CHUNKS; ++ch) {
#ifdef _OPENMP
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    wg_chunk(&j, ch, tid);
  }
  if (j.failed) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory in a product"), -1;
  /* the chunks summed in order (the same bits whatever the threads), stored at y[b, o, p] */
  for (int64_t p = 0; p < P; ++p) {
    const int64_t ph = p / v.out[1], pw = p % v.out[1];
    for (int64_t o = 0; o < O; ++o) {
      char *yo = g->y + o * g->ys_o + ph * v.ys[0] + pw * v.ys[1];
      for (int64_t bb = 0; bb < Nb; ++bb) {
        float s = 0.0f;
        for (int64_t ch = 0; ch < WG_CHUNKS; ++ch)
          s += j.accs[(size_t)ch * (size_t)(P * O * Nb) + (p * Nb + bb) * O + o];
        put1(g, yo + bb * g->ys_n, s);
      }
    }
  }
  return 1;
}

/* ---- the depthwise path ---- */

static PB_CLONES void dw_axpy(float *restrict acc, const float *restrict src, float w, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = __builtin_fmaf(w, src[i], acc[i]);
}

static PB_CLONES void dw_scale(float *restrict acc, const float *restrict src, float w, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = w * src[i];
}

typedef struct {
  const conv_geom *g;
  const view2 *v;
  pixbuf b; /* one channel plane: ch = 1, regions = stride phases */
  ftap *taps;
  float *scr;
  int64_t scr_len;
} djob;

static void dw_task(djob *j, int64_t t, int tid) {
  const conv_geom *g = j->g;
  const view2 *v = j->v;
  const int64_t Og = g->O / g->G, n = t / g->G, gi = t % g->G;
  float *plane = j->scr + (size_t)tid * (size_t)j->scr_len;
  float *row = plane + j->b.image_px;
  pixbuf_fill(&j->b, plane, g->x + n * g->xs_n + gi * g->xs_c, 4, v->xs[0], v->xs[1], v->in[0],
              v->in[1]);
  const int64_t width = j->b.width, ow = v->out[1], K = g->taps;
  for (int64_t oo = 0; oo < Og; ++oo) {
    const int64_t o = gi * Og + oo;
    float wv[FAST_MAXTAPS];
    for (int64_t k = 0; k < K; ++k)
      wv[k] = *(const float *)(g->w + o * g->ws_o + j->taps[k].kh * v->ws[0] +
                               j->taps[k].kw * v->ws[1]);
    char *yo = g->y + n * g->ys_n + o * g->ys_o;
    /* a contiguous output row is the accumulator itself (it stays in L1 over the taps) */
    const bool direct = !g->accumulate && v->ys[1] == 4;
    for (int64_t oh = 0; oh < v->out[0]; ++oh) {
      char *yr = yo + oh * v->ys[0];
      float *acc = direct ? (float *)yr : row;
      dw_scale(acc, plane + j->taps[0].off + oh * width, wv[0], ow);
      for (int64_t k = 1; k < K; ++k) dw_axpy(acc, plane + j->taps[k].off + oh * width, wv[k], ow);
      if (!direct) put_f32(g, yr, v->ys[1], row, ow);
    }
  }
}

static int conv_fast_depthwise(conv_geom *g, pb_kernel_ctx *ctx) {
  view2 v;
  view2_of(g, &v);
  if (g->in_dt != PB_F32 || g->out_dt != PB_F32 || g->nsp < 1 || g->nsp > 2)
    return 0;
  if (g->B != 1 || g->Ci != 1 || g->G < 2 || g->Nb == 0 || g->plane == 0 || g->taps == 0 ||
      g->taps > FAST_MAXTAPS || v.ld[0] != 1 || v.ld[1] != 1)
    return 0;
  if ((double)g->plane * (double)g->O * (double)g->taps * (double)g->Nb < 2e5) return 0;
  djob j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.v = &v;
  pixbuf *b = &j.b;
  b->ch = 1;
  if (pixbuf_phases(b, &v, v.s[0], v.s[1], ((v.k[1] - 1) * v.rd[1]) / v.s[1] + 1, ctx))
    return -1;
  j.taps = ctx->scratch(ctx, (size_t)g->taps * sizeof(ftap));
  if (!j.taps) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
  int64_t nt = 0;
  for (int64_t kh = 0; kh < v.k[0]; ++kh)
    for (int64_t kw = 0; kw < v.k[1]; ++kw) {
      const int64_t uh = kh * v.rd[0], uw = kw * v.rd[1];
      const int64_t r = (uh % v.s[0]) * v.s[1] + uw % v.s[1];
      j.taps[nt++] = (ftap){r * b->region_px + (uh / v.s[0]) * b->width + uw / v.s[1], kh, kw};
    }
  const int64_t tasks = g->Nb * g->G;
  const double work = (double)g->plane * (double)g->O * (double)g->taps * (double)g->Nb;
  const int threads = pb_kernel_threads(ctx, (int64_t)(work / 1e4) + 1, 8);
  j.scr_len = b->image_px + v.out[1] + 16;
  j.scr = ctx->scratch(ctx, (size_t)threads * (size_t)j.scr_len * 4);
  if (!j.scr) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1)
  for (int64_t t = 0; t < tasks; ++t) {
#ifdef _OPENMP
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    dw_task(&j, t, tid);
  }
  return 1;
}

/* ---- the depthwise weight gradient ---- */

/* JAX's kernel cotangent of a depthwise convolution: batch groups, one per output feature
 * (B of them, one lhs batch row each; O / B output features per group): y[0, o, p] = sum over images c and positions t of
 * x[o / (O / B), c, p s + t rd - pl] k[o, c, t]. One task per o; per image, the phase-split padded plane
 * of x and the wide plane of k, and per p one dot product over the wide rows. */
static PB_CLONES float dw_dot(const float *restrict a, const float *restrict b, int64_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 = __builtin_fmaf(a[i], b[i], s0);
    s1 = __builtin_fmaf(a[i + 1], b[i + 1], s1);
    s2 = __builtin_fmaf(a[i + 2], b[i + 2], s2);
    s3 = __builtin_fmaf(a[i + 3], b[i + 3], s3);
  }
  for (; i < n; ++i) s0 = __builtin_fmaf(a[i], b[i], s0);
  return (s0 + s1) + (s2 + s3);
}

typedef struct {
  const conv_geom *g;
  const view2 *v;
  pixbuf b;
  int64_t kw_rows;
  float *scr;
  int64_t scr_len;
} dwjob;

static void dwg_task(dwjob *j, int64_t o, int tid) {
  const conv_geom *g = j->g;
  const view2 *v = j->v;
  const int64_t width = j->b.width, P = g->plane;
  float *plane = j->scr + (size_t)tid * (size_t)j->scr_len;
  float *kw = plane + j->b.image_px;
  float *acc = kw + j->kw_rows;
  for (int64_t p = 0; p < P; ++p) acc[p] = 0.0f;
  for (int64_t c = 0; c < g->C; ++c) {
    pixbuf_fill(&j->b, plane, g->x + (o / (g->O / g->B)) * g->xs_n + c * g->xs_c, 4, v->xs[0],
                v->xs[1], v->in[0], v->in[1]);
    for (int64_t th = 0; th < v->k[0]; ++th) {
      const char *src = g->w + o * g->ws_o + c * g->ws_i + th * v->ws[0];
      for (int64_t tw = 0; tw < width; ++tw)
        kw[th * width + tw] = tw < v->k[1] ? *(const float *)(src + tw * v->ws[1]) : 0.0f;
    }
    for (int64_t p = 0; p < P; ++p) {
      const int64_t uh = (p / v->out[1]) * v->s[0], uw = (p % v->out[1]) * v->s[1];
      const int64_t region = (uh % v->rd[0]) * v->rd[1] + uw % v->rd[1];
      acc[p] += dw_dot(plane + region * j->b.region_px + (uh / v->rd[0]) * width + uw / v->rd[1],
                       kw, j->kw_rows);
    }
  }
  char *yo = g->y + o * g->ys_o;
  for (int64_t p = 0; p < P; ++p)
    put1(g, yo + (p / v->out[1]) * v->ys[0] + (p % v->out[1]) * v->ys[1], acc[p]);
}

static int conv_fast_depthwise_wgrad(conv_geom *g, pb_kernel_ctx *ctx) {
  view2 v;
  view2_of(g, &v);
  if (g->in_dt != PB_F32 || g->out_dt != PB_F32 || g->nsp < 1 || g->nsp > 2)
    return 0;
  if (g->B < 2 || g->O % g->B || g->Nb != 1 || g->G != 1 || g->C < 1 || g->plane == 0 ||
      g->taps <= g->plane || g->plane > 1024 || v.ld[0] != 1 || v.ld[1] != 1)
    return 0;
  if ((double)g->plane * (double)g->O * (double)g->C * (double)g->taps < 1e5) return 0;
  dwjob j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.v = &v;
  pixbuf *b = &j.b;
  b->ch = 1;
  if (pixbuf_phases(b, &v, v.rd[0], v.rd[1], ((v.out[1] - 1) * v.s[1]) / v.rd[1] + 1, ctx))
    return -1;
  j.kw_rows = v.k[0] * b->width;
  const double work = (double)g->plane * (double)g->O * (double)g->C * (double)g->taps;
  const int threads = pb_kernel_threads(ctx, (int64_t)(work / 1e4) + 1, 8);
  j.scr_len = b->image_px + j.kw_rows + g->plane + 16;
  j.scr = ctx->scratch(ctx, (size_t)threads * (size_t)j.scr_len * 4);
  if (!j.scr) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
  for (int64_t o = 0; o < g->O; ++o) {
#ifdef _OPENMP
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    dwg_task(&j, o, tid);
  }
  return 1;
}

