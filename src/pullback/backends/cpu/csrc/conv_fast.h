/* conv.c's float32 fast paths (1-D and 2-D, AVX-512; more in conv_grad.h), included by conv.c
 * after its geometry. Each returns 1 when it took the call (0: the generic path runs), or a negative
 * error after pb_kernel_fail.
 *
 * Forward ("tap GEMM"): the input is copied once into a pixel-major, zero-padded buffer per
 * image (channels innermost: NCHW input is transposed on the way; a strided convolution's input
 * is split into its stride phases, so every tap reads a stride-1 window of one phase image; an
 * lhs-dilated one is padded only, in the undilated domain). With rows of the buffer `width`
 * pixels wide, the output over a block of rows, computed `width` pixels wide (the extra columns
 * discarded), is for each kernel tap one product of a shifted window of the buffer (rows:
 * pixels, contiguous channels) with the tap's (Cin x Cout) weights: the own AVX-512 GEMM
 * (gemm.c), accumulating over the taps in the block's cache-resident output. No im2col matrix,
 * no zero insertion: an lhs-dilated (transposed) convolution is split into its output phases,
 * each a stride-1 convolution with the taps that land on input elements.
 *
 * Weight gradient: the convolution JAX's transpose rule builds for a kernel's cotangent (output
 * spatial = the forward kernel, its own kernel = the forward output) runs as, per forward tap,
 * one GEMM per image contracting over the image's pixels: (Cin x pixels) @ (pixels x Cout),
 * over the same padded buffer and the cotangent in the same wide layout (zeros in the discarded
 * columns), images summed in fixed chunks so the bits do not depend on the thread count.
 *
 * Depthwise: one task per (image, channel) plane, the phase-split padded plane in a thread's
 * buffer, each tap one vectorized multiply-add over output rows. */
#include "gemm.h"

#define FAST_MAXTAPS 4096

static bool fast_usable(void) {
#if PB_HAVE_AVX512
  return pb_avx512_usable();
#else
  return false;
#endif
}

/* the 2-D view of a 1-D or 2-D geometry (1-D: a height of 1) */
typedef struct {
  int64_t in[2], k[2], out[2], xs[2], ws[2], ys[2], s[2], pl[2], ld[2], rd[2];
} view2;

static void view2_of(const conv_geom *g, view2 *v) {
  const int off = 2 - g->nsp;
  for (int d = 0; d < 2; ++d) {
    const int e = d - off;
    const bool real = e >= 0;
    v->in[d] = real ? g->in[e] : 1;
    v->k[d] = real ? g->k[e] : 1;
    v->out[d] = real ? g->out[e] : 1;
    v->xs[d] = real ? g->xs[e] : 0;
    v->ws[d] = real ? g->ws[e] : 0;
    v->ys[d] = real ? g->ys[e] : 0;
    v->s[d] = real ? g->stride[e] : 1;
    v->pl[d] = real ? g->pad_lo[e] : 0;
    v->ld[d] = real ? g->lhs_dil[e] : 1;
    v->rd[d] = real ? g->rhs_dil[e] : 1;
  }
}

/* ---- the padded, pixel-major image buffers ---- */

/* A buffer: `regions` images of rows x width pixels (+ tail zero pixels), each pixel `ch`
 * floats; region pixel (u, v) holds input (rsrc[region][u], csrc[region][v]) or zero (-1). */
typedef struct {
  int64_t regions, rows, width, tail, ch, region_px, image_px;
  int64_t *rsrc, *csrc; /* [regions * rows], [regions * width] */
} pixbuf;

static int pixbuf_alloc_tables(pixbuf *b, pb_kernel_ctx *ctx) {
  b->region_px = b->rows * b->width + b->tail;
  b->image_px = b->regions * b->region_px;
  b->rsrc = ctx->scratch(ctx, (size_t)(b->regions * b->rows + 1) * sizeof(int64_t));
  b->csrc = ctx->scratch(ctx, (size_t)(b->regions * b->width + 1) * sizeof(int64_t));
  if (b->rsrc && b->csrc) return 0;
  return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
}

/* one region of rows x width pixels (and tail), pixel (u, w) reading input (u + lo0, w + lo1);
 * 0, or -1 with the error set */
static int pixbuf_window(pixbuf *b, int64_t rows, int64_t width, int64_t tail, int64_t lo0,
                         int64_t lo1, pb_kernel_ctx *ctx) {
  b->regions = 1;
  b->rows = rows;
  b->width = width;
  b->tail = tail;
  if (pixbuf_alloc_tables(b, ctx)) return -1;
  for (int64_t u = 0; u < rows; ++u) b->rsrc[u] = u + lo0;
  for (int64_t w = 0; w < width; ++w) b->csrc[w] = w + lo1;
  return 0;
}

/* the input split into its p0 x p1 phases (region (a, c) holds input pixels (u p0 + a,
 * w p1 + c)), each tall and wide enough for the window the outputs read at stride 1 there
 * (strided forwards: p = the stride; strided weight gradients: p = this call's rhs dilation);
 * 0, or -1 with the error set */
static int pixbuf_phases(pixbuf *b, const view2 *v, int64_t p0, int64_t p1, int64_t tail,
                         pb_kernel_ctx *ctx) {
  int64_t need[2];
  for (int d = 0; d < 2; ++d) need[d] = (v->out[d] - 1) * v->s[d] + (v->k[d] - 1) * v->rd[d] + 1;
  b->regions = p0 * p1;
  b->rows = (need[0] + p0 - 1) / p0;
  b->width = (need[1] + p1 - 1) / p1;
  b->tail = tail;
  if (pixbuf_alloc_tables(b, ctx)) return -1;
  for (int64_t a = 0; a < p0; ++a)
    for (int64_t c = 0; c < p1; ++c) {
      const int64_t r = a * p1 + c;
      for (int64_t u = 0; u < b->rows; ++u) b->rsrc[r * b->rows + u] = u * p0 + a - v->pl[0];
      for (int64_t w = 0; w < b->width; ++w) b->csrc[r * b->width + w] = w * p1 + c - v->pl[1];
    }
  return 0;
}

/* ---- channel-major <-> pixel-major moves ---- */

#if PB_HAVE_AVX512
#include "avx512_regs.h"
#endif

/* dst[c * ds + r] (+)= src[r * ss + c] for r < rows, c < cols (strides in floats): AVX-512
 * register transposes when usable, else 8 x 8 blocks of scalars */
static void tr_f32(const float *src, int64_t ss, float *dst, int64_t ds, int64_t rows,
                   int64_t cols, bool add) {
#if PB_HAVE_AVX512
  if (fast_usable()) {
    pb_transpose_f32(src, ss, dst, ds, rows, cols, add);
    return;
  }
#endif
  for (int64_t r0 = 0; r0 < rows; r0 += 8)
    for (int64_t c0 = 0; c0 < cols; c0 += 8)
      for (int64_t c = c0; c < c0 + 8 && c < cols; ++c)
        for (int64_t r = r0; r < r0 + 8 && r < rows; ++r)
          dst[c * ds + r] = add ? dst[c * ds + r] + src[r * ss + c] : src[r * ss + c];
}

/* fills image n's buffer (ch floats per pixel) from x (channel c at x + c xs_c). The columns of
 * a region that read the input are one run (its column table is arithmetic): zeros around it,
 * and the run moved as contiguous copies (pixel-major input, or one channel) or 16 x 16
 * transposes (channel-major input with contiguous rows: NCHW) */
static void pixbuf_fill(const pixbuf *b, float *dst, const char *x, int64_t xs_c, int64_t xs_h,
                        int64_t xs_w, int64_t in_h, int64_t in_w) {
  const int64_t ch = b->ch, width = b->width;
  for (int64_t r = 0; r < b->regions; ++r) {
    float *reg = dst + r * b->region_px * ch;
    const int64_t *cs = b->csrc + r * width;
    int64_t v0 = 0;
    while (v0 < width && (cs[v0] < 0 || cs[v0] >= in_w)) ++v0;
    int64_t v1 = v0;
    while (v1 < width && cs[v1] >= 0 && cs[v1] < in_w) ++v1;
    const int64_t n = v1 - v0, sw = n > 1 ? (cs[v0 + 1] - cs[v0]) * xs_w : xs_w;
    for (int64_t u = 0; u < b->rows; ++u) {
      float *row = reg + u * width * ch;
      const int64_t h = b->rsrc[r * b->rows + u];
      if (h < 0 || h >= in_h || n == 0) {
        memset(row, 0, (size_t)(width * ch) * 4);
        continue;
      }
      memset(row, 0, (size_t)(v0 * ch) * 4);
      memset(row + v1 * ch, 0, (size_t)((width - v1) * ch) * 4);
      const char *xr = x + h * xs_h + cs[v0] * xs_w;
      float *px = row + v0 * ch;
      if ((ch == 1 || xs_c == 4) && sw == ch * 4) {
        memcpy(px, xr, (size_t)(n * ch) * 4);
      } else if (xs_c == 4) {
        for (int64_t i = 0; i < n; ++i) memcpy(px + i * ch, xr + i * sw, (size_t)ch * 4);
      } else if (sw == 4 && xs_c % 4 == 0) {
        tr_f32((const float *)xr, xs_c / 4, px, ch, ch, n, false);
      } else {
        for (int64_t i = 0; i < n; ++i)
          for (int64_t c = 0; c < ch; ++c) px[i * ch + c] = *(const float *)(xr + i * sw + c * xs_c);
      }
    }
    memset(reg + b->rows * width * ch, 0, (size_t)(b->tail * ch) * 4);
  }
}

/* the same buffer plane-major: channel c's regions at dst + c * image_px, pixels contiguous */
static void planebuf_fill(const pixbuf *b, float *dst, const char *x, int64_t xs_c, int64_t xs_h,
                          int64_t xs_w, int64_t in_h, int64_t in_w) {
  for (int64_t c = 0; c < b->ch; ++c) {
    float *pl = dst + c * b->image_px;
    const char *xc = x + c * xs_c;
    for (int64_t r = 0; r < b->regions; ++r) {
      float *reg = pl + r * b->region_px;
      const int64_t *cs = b->csrc + r * b->width;
      for (int64_t u = 0; u < b->rows; ++u) {
        float *row = reg + u * b->width;
        const int64_t h = b->rsrc[r * b->rows + u];
        if (h < 0 || h >= in_h) {
          memset(row, 0, (size_t)b->width * 4);
          continue;
        }
        const char *xr = xc + h * xs_h;
        for (int64_t v = 0; v < b->width; ++v)
          row[v] = cs[v] >= 0 && cs[v] < in_w ? *(const float *)(xr + cs[v] * xs_w) : 0.0f;
      }
      memset(reg + b->rows * b->width, 0, (size_t)b->tail * 4);
    }
  }
}

/* ---- the forward tap-GEMM path ---- */

typedef struct { int64_t off, kh, kw; } ftap; /* off: pixels into the image's buffer */
typedef struct {
  int64_t rows, cols;        /* output rows and valid columns of this part */
  int64_t oh0, ohs, ow0, ows; /* output position of (m, mw): (oh0 + ohs m, ow0 + ows mw) */
  int64_t ntaps;
  ftap *taps;
} fpart;

typedef struct {
  const conv_geom *g;
  const view2 *v;
  pixbuf b;
  float *bufs;      /* N images */
  fpart *parts;
  int64_t nparts, block_rows, tasks_per_image, *part_task0;
  float *wide;      /* per thread: block_rows * width * O */
  int64_t wide_len;
  int failed;       /* a GEMM ran out of memory */
  /* kcat: one group, taps along a row reading consecutive pixels (stride and dilation 1 along
   * the width): the row's taps are one product with K = k_w * C, over weights packed as
   * [kh][kw][c][o] (wpack), so the block's output is loaded and stored k_h times, not k_h k_w */
  int kcat;
  float *wpack;
  pb_kernel_ctx *follow; /* report each block's finished pixels (rows of y) */
} fjob;

static void fast_store(const fjob *j, const fpart *p, int64_t n, int64_t m0, int64_t nrows,
                       const float *wide) {
  const conv_geom *g = j->g;
  const view2 *v = j->v;
  const int64_t O = g->O, width = j->b.width;
  char *yb = g->y + n * g->ys_n;
  for (int64_t m = 0; m < nrows; ++m) {
    const int64_t oh = p->oh0 + p->ohs * (m0 + m);
    char *yr = yb + oh * v->ys[0];
    const float *wr = wide ? wide + m * width * O : NULL;
    if (g->ys_o == 4 && p->ows == 1 && v->ys[1] == O * 4) {
      if (wide) put_f32(g, yr + p->ow0 * v->ys[1], 4, wr, p->cols * O);
      else if (!g->accumulate) memset(yr + p->ow0 * v->ys[1], 0, (size_t)(p->cols * O) * 4);
      continue;
    }
    if (wide && p->ows == 1 && v->ys[1] == 4 && g->ys_o % 4 == 0) { /* channel-major rows */
      tr_f32(wr, O, (float *)(yr + p->ow0 * 4), g->ys_o / 4, p->cols, O, g->accumulate);
      continue;
    }
    for (int64_t o = 0; o < O; ++o) {
      char *yo = yr + o * g->ys_o + p->ow0 * v->ys[1];
      const int64_t st = p->ows * v->ys[1];
      if (!wide) {
        if (!g->accumulate)
          for (int64_t mw = 0; mw < p->cols; ++mw) *(float *)(yo + mw * st) = 0.0f;
      } else {
        for (int64_t mw = 0; mw < p->cols; ++mw) put1(g, yo + mw * st, wr[mw * O + o]);
      }
    }
  }
}

/* kernels with few taps x input channels (a first layer's 1-3 channels: K = 3 or 9 per row of
 * taps) make GEMMs too thin to run well; at most this many products per output pixel run as
 * one register-blocked pass (fwd_small) instead */
#define FWD_SMALL 64
#define FWD_PX 12

#if PB_HAVE_AVX512
/* wide[m] (O) = sum over kh < KH, r < R of a[kh][m C + r] * kw[(kh R + r) O] for m < M:
 * FWD_PX pixels at a time, 32 output columns a pass, the sums in registers */
static PB_AVX512 void fwd_small(int64_t M, int64_t KH, const float *const *a, int64_t C,
                                int64_t R, const float *kw, int64_t O, float *wide) {
  for (int64_t m0 = 0; m0 < M; m0 += FWD_PX) {
    const int nq = M - m0 < FWD_PX ? (int)(M - m0) : FWD_PX;
    for (int64_t o0 = 0; o0 < O; o0 += 32) {
      const __mmask16 k0m = pb_lanes16(O - o0), k1m = pb_lanes16(O - o0 - 16);
      __m512 acc[FWD_PX][2];
      for (int q = 0; q < FWD_PX; ++q) acc[q][0] = acc[q][1] = _mm512_setzero_ps();
      for (int64_t kh = 0; kh < KH; ++kh) {
        const float *ak = a[kh] + m0 * C;
        for (int64_t r = 0; r < R; ++r) {
          const float *kr = kw + (kh * R + r) * O + o0;
          const __m512 k0 = _mm512_maskz_loadu_ps(k0m, kr), k1 = _mm512_maskz_loadu_ps(k1m, kr + 16);
#pragma GCC unroll 12
          for (int q = 0; q < FWD_PX; ++q)
            if (q < nq) {
              const __m512 x = _mm512_set1_ps(ak[q * C + r]);
              acc[q][0] = _mm512_fmadd_ps(x, k0, acc[q][0]);
              acc[q][1] = _mm512_fmadd_ps(x, k1, acc[q][1]);
            }
        }
      }
      for (int q = 0; q < nq; ++q) {
        float *o = wide + (m0 + q) * O + o0;
        _mm512_mask_storeu_ps(o, k0m, acc[q][0]);
        _mm512_mask_storeu_ps(o + 16, k1m, acc[q][1]);
      }
    }
  }
}
#endif

/* stores a block's rows and reports them to a fused epilogue */
static void fast_finish(const fjob *j, const fpart *p, int64_t n, int64_t m0, int64_t nrows,
                        const float *wide, int tid) {
  const view2 *v = j->v;
  fast_store(j, p, n, m0, nrows, wide);
  if (j->follow)
    pb_kernel_rows_done(j->follow, (n * v->out[0] + m0) * v->out[1],
                        (n * v->out[0] + m0 + nrows) * v->out[1], tid);
}

/* task t of the call (image t / tasks_per_image); img: that image's buffer */
static void fast_task(fjob *j, int64_t t, int tid, const float *img) {
  const conv_geom *g = j->g;
  const view2 *v = j->v;
  const int64_t n = t / j->tasks_per_image, rest = t % j->tasks_per_image;
  int64_t pi = 0;
  while (pi + 1 < j->nparts && j->part_task0[pi + 1] <= rest) ++pi;
  const fpart *p = &j->parts[pi];
  const int64_t m0 = (rest - j->part_task0[pi]) * j->block_rows;
  const int64_t nrows = p->rows - m0 < j->block_rows ? p->rows - m0 : j->block_rows;
  if (nrows <= 0) return;
  if (!p->ntaps) {
    fast_finish(j, p, n, m0, nrows, NULL, tid);
    return;
  }
  const int64_t C = g->C, O = g->O, G = g->G, Cg = g->Ci, Og = O / G, width = j->b.width;
  float *wide = j->wide + (size_t)tid * (size_t)j->wide_len;
  const npy_intp M = nrows * width;
  const npy_intp as[3] = {0, (npy_intp)(C * 4), 4}, bs[3] = {0, (npy_intp)g->ws_i,
                                                             (npy_intp)g->ws_o};
  const npy_intp cs[3] = {0, (npy_intp)(O * 4), 4};
  if (j->kcat) {
    const int64_t kwn = v->k[1];
#if PB_HAVE_AVX512
    if (p->ntaps * C <= FWD_SMALL) {
      const float *rows[FWD_SMALL];
      for (int64_t k = 0; k < p->ntaps; k += kwn)
        rows[k / kwn] = img + (p->taps[k].off + m0 * width) * C;
      fwd_small(M, p->ntaps / kwn, rows, C, kwn * C, j->wpack, O, wide);
      fast_finish(j, p, n, m0, nrows, wide, tid);
      return;
    }
#endif
    const npy_intp ps[3] = {0, (npy_intp)(O * 4), 4};
    for (int64_t k = 0; k < p->ntaps; k += kwn) {
      const ftap *tp = &p->taps[k];
      if (pb_sgemm(M, O, kwn * C, (const char *)(img + (tp->off + m0 * width) * C), as,
                   (const char *)(j->wpack + tp->kh * kwn * C * O), ps, (char *)wide, cs, k > 0,
                   NULL))
        j->failed = 1;
    }
    fast_finish(j, p, n, m0, nrows, wide, tid);
    return;
  }
  for (int64_t k = 0; k < p->ntaps; ++k) {
    const ftap *tp = &p->taps[k];
    const float *a = img + (tp->off + m0 * width) * C;
    const char *b = g->w + tp->kh * v->ws[0] + tp->kw * v->ws[1];
    for (int64_t gi = 0; gi < G; ++gi)
      if (pb_sgemm(M, Og, Cg, (const char *)(a + gi * Cg), as, b + gi * Og * g->ws_o, bs,
                   (char *)(wide + gi * Og), cs, k > 0, NULL))
        j->failed = 1;
  }
  fast_finish(j, p, n, m0, nrows, wide, tid);
}

static int64_t floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static int conv_fast_forward(conv_geom *g, pb_kernel_ctx *ctx) {
  view2 v;
  view2_of(g, &v);
  const int64_t Og = g->G ? g->O / g->G : 0;
  if (g->in_dt != PB_F32 || g->out_dt != PB_F32 || g->nsp < 1 || g->nsp > 2 ||
      !fast_usable())
    return 0;
  if (g->B != 1 || g->Ci < 1 || Og < 16 || g->Nb == 0 || g->plane == 0 || g->taps == 0 ||
      g->taps > FAST_MAXTAPS || g->taps > 4 * g->plane)
    return 0;
  const bool dil = v.ld[0] > 1 || v.ld[1] > 1;
  if (dil && (v.s[0] > 1 || v.s[1] > 1)) return 0;
  if ((double)g->plane * (double)g->O * (double)g->Ci * (double)g->taps * (double)g->Nb < 2e6)
    return 0;
  fjob j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.v = &v;
  pixbuf *b = &j.b;
  b->ch = g->C;
  ftap *taps = ctx->scratch(ctx, (size_t)g->taps * sizeof(ftap));
  if (!taps) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
  if (!dil) {
    /* stride phases: tap (kh, kw) reads phase (uh % s, uw % s) at (uh / s, uw / s) */
    if (pixbuf_phases(b, &v, v.s[0], v.s[1], ((v.k[1] - 1) * v.rd[1]) / v.s[1] + 1, ctx))
      return -1;
    int64_t nt = 0;
    for (int64_t kh = 0; kh < v.k[0]; ++kh)
      for (int64_t kw = 0; kw < v.k[1]; ++kw) {
        const int64_t uh = kh * v.rd[0], uw = kw * v.rd[1];
        const int64_t r = (uh % v.s[0]) * v.s[1] + uw % v.s[1];
        taps[nt++] = (ftap){r * b->region_px + (uh / v.s[0]) * b->width + uw / v.s[1], kh, kw};
      }
    fpart *part = ctx->scratch(ctx, sizeof(fpart));
    if (!part) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
    *part = (fpart){v.out[0], v.out[1], 0, 1, 0, 1, nt, taps};
    j.parts = part;
    j.nparts = 1;
  } else {
    /* output phases of the lhs dilation: output (ph + d m) reads input m + e for the taps
     * with (ph + k rd - pl) = d e */
    int64_t emin[2], emax[2], mmax[2];
    for (int d = 0; d < 2; ++d) {
      emin[d] = INT64_MAX;
      emax[d] = INT64_MIN;
      mmax[d] = (v.out[d] + v.ld[d] - 1) / v.ld[d];
      for (int64_t ph = 0; ph < v.ld[d]; ++ph)
        for (int64_t k = 0; k < v.k[d]; ++k) {
          const int64_t q0 = ph + k * v.rd[d] - v.pl[d];
          if (floordiv(q0, v.ld[d]) * v.ld[d] != q0) continue;
          const int64_t e = floordiv(q0, v.ld[d]);
          if (e < emin[d]) emin[d] = e;
          if (e > emax[d]) emax[d] = e;
        }
      if (emin[d] > emax[d]) emin[d] = emax[d] = 0;
    }
    if (pixbuf_window(b, mmax[0] + emax[0] - emin[0], mmax[1] + emax[1] - emin[1],
                      emax[1] - emin[1] + 1, emin[0], emin[1], ctx))
      return -1;
    j.nparts = v.ld[0] * v.ld[1];
    j.parts = ctx->scratch(ctx, (size_t)j.nparts * sizeof(fpart));
    if (!j.parts) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
    int64_t nt = 0;
    for (int64_t ph = 0; ph < v.ld[0]; ++ph)
      for (int64_t pw = 0; pw < v.ld[1]; ++pw) {
        fpart *p = &j.parts[ph * v.ld[1] + pw];
        p->rows = ph < v.out[0] ? (v.out[0] - ph + v.ld[0] - 1) / v.ld[0] : 0;
        p->cols = pw < v.out[1] ? (v.out[1] - pw + v.ld[1] - 1) / v.ld[1] : 0;
        p->oh0 = ph;
        p->ohs = v.ld[0];
        p->ow0 = pw;
        p->ows = v.ld[1];
        p->taps = taps + nt;
        p->ntaps = 0;
        for (int64_t kh = 0; kh < v.k[0]; ++kh) {
          const int64_t qh = ph + kh * v.rd[0] - v.pl[0];
          if (floordiv(qh, v.ld[0]) * v.ld[0] != qh) continue;
          for (int64_t kw = 0; kw < v.k[1]; ++kw) {
            const int64_t qw = pw + kw * v.rd[1] - v.pl[1];
            if (floordiv(qw, v.ld[1]) * v.ld[1] != qw) continue;
            const int64_t eh = floordiv(qh, v.ld[0]) - emin[0], ew = floordiv(qw, v.ld[1]) - emin[1];
            taps[nt++] = (ftap){eh * b->width + ew, kh, kw};
            p->ntaps++;
          }
        }
        if (p->cols == 0) p->rows = 0;
      }
  }
  /* blocks of output rows of about 512 wide pixels: the block's output stays in cache */
  j.block_rows = 512 / b->width > 0 ? 512 / b->width : 1;
  j.part_task0 = ctx->scratch(ctx, (size_t)(j.nparts + 1) * sizeof(int64_t));
  if (!j.part_task0) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
  int64_t tpi = 0;
  for (int64_t i = 0; i < j.nparts; ++i) {
    j.part_task0[i] = tpi;
    tpi += (j.parts[i].rows + j.block_rows - 1) / j.block_rows;
  }
  j.part_task0[j.nparts] = tpi;
  j.tasks_per_image = tpi;
  if (!dil && g->G == 1 && v.s[1] == 1 && v.rd[1] == 1 && v.k[1] > 1) {
    j.kcat = 1;
    const int64_t C = g->C, O = g->O;
    j.wpack = ctx->scratch(ctx, (size_t)(g->taps * C * O) * 4);
    if (!j.wpack) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
    for (int64_t kh = 0; kh < v.k[0]; ++kh)
      for (int64_t kw = 0; kw < v.k[1]; ++kw)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t o = 0; o < O; ++o)
            j.wpack[((kh * v.k[1] + kw) * C + c) * O + o] =
                *(const float *)(g->w + o * g->ws_o + c * g->ws_i + kh * v.ws[0] + kw * v.ws[1]);
  }
  const int64_t N = g->Nb;
  /* one part (no lhs dilation) stores whole rows of pixels, each once */
  j.follow = !dil && !g->accumulate ? g->follow : NULL;
  const size_t img_floats = (size_t)(b->image_px * g->C);
  const double work = (double)g->plane * (double)g->O * (double)g->Ci * (double)g->taps *
                      (double)N;
  const int nt = pb_kernel_threads(ctx, (int64_t)(work / 1e5) + 1, 8);
  /* enough images for every thread: each thread copies an image and convolves it while the copy
   * is in cache; else all images are copied first and the threads share each image's blocks */
  const bool per_image = N >= 2 * nt;
  j.bufs = ctx->scratch(ctx, (size_t)(per_image ? nt : N) * img_floats * 4 + 64);
  j.wide_len = j.block_rows * b->width * g->O + 16;
  j.wide = ctx->scratch(ctx, (size_t)nt * (size_t)j.wide_len * 4);
  if (!j.bufs || !j.wide) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
#ifdef _OPENMP
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    if (per_image) {
      float *own = j.bufs + (size_t)tid * img_floats;
#pragma omp for schedule(dynamic, 1)
      for (int64_t n = 0; n < N; ++n) {
        pixbuf_fill(b, own, g->x + n * g->xs_n, g->xs_c, v.xs[0], v.xs[1], v.in[0], v.in[1]);
        for (int64_t t = n * tpi; t < (n + 1) * tpi; ++t) fast_task(&j, t, tid, own);
      }
    } else {
#pragma omp for schedule(dynamic, 1)
      for (int64_t n = 0; n < N; ++n)
        pixbuf_fill(b, j.bufs + (size_t)n * img_floats, g->x + n * g->xs_n, g->xs_c, v.xs[0],
                    v.xs[1], v.in[0], v.in[1]);
#pragma omp for schedule(dynamic, 1)
      for (int64_t t = 0; t < N * tpi; ++t)
        fast_task(&j, t, tid, j.bufs + (size_t)(t / tpi) * img_floats);
    }
  }
  if (j.failed) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory in a product"), -1;
  if (j.follow) ctx->followed = 1;
  return 1;
}

/* ---- Winograd F(2x2, 3x3): 3x3 stride-1 convolutions in 16 products instead of 36 ----
 *
 * Each 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A over its 4x4 input tile d: the 16
 * transformed positions are 16 independent products (tiles x Cin) @ (Cin x Cout) on the own
 * GEMM, 2.25x fewer multiply-adds than the direct form. Input tiles come from the same padded
 * pixel-major image copy (channels contiguous, so the transforms vectorize over channels); the
 * 16 transformed weight matrices are made once per call and packed once per thread (one product
 * id each). The transforms' additions round differently from the direct sum: errors stay at a
 * few float32 ulps of the output's scale for these small tiles. */
#define WINO_TILES 128

static PB_CLONES void wino_in(const float *restrict d, int64_t rs, int64_t C, float *restrict V,
                              int64_t vs) {
  const float *r0 = d, *r1 = d + rs, *r2 = d + 2 * rs, *r3 = d + 3 * rs;
#define WROW(k) const float a##k = r0[k * C + c] - r2[k * C + c], b##k = r1[k * C + c] + r2[k * C + c], \
                e##k = r2[k * C + c] - r1[k * C + c], f##k = r1[k * C + c] - r3[k * C + c];
#define WCOL(i, x)                                                                                \
  V[(i * 4 + 0) * vs + c] = x##0 - x##2;                                                          \
  V[(i * 4 + 1) * vs + c] = x##1 + x##2;                                                          \
  V[(i * 4 + 2) * vs + c] = x##2 - x##1;                                                          \
  V[(i * 4 + 3) * vs + c] = x##1 - x##3;
  for (int64_t c = 0; c < C; ++c) {
    WROW(0) WROW(1) WROW(2) WROW(3)
    WCOL(0, a) WCOL(1, b) WCOL(2, e) WCOL(3, f)
  }
#undef WROW
#undef WCOL
}

/* the 2x2 outputs of one tile from its 16 products (m[xi * ms + o]) into out[4][O] */
static PB_CLONES void wino_out(const float *restrict m, int64_t ms, int64_t O, float *restrict out) {
#define MCOL(k) const float p##k = m[(0 * 4 + k) * ms + o] + m[(1 * 4 + k) * ms + o] + m[(2 * 4 + k) * ms + o], \
                q##k = m[(1 * 4 + k) * ms + o] - m[(2 * 4 + k) * ms + o] - m[(3 * 4 + k) * ms + o];
  for (int64_t o = 0; o < O; ++o) {
    MCOL(0) MCOL(1) MCOL(2) MCOL(3)
    out[0 * O + o] = p0 + p1 + p2;
    out[1 * O + o] = p1 - p2 - p3;
    out[2 * O + o] = q0 + q1 + q2;
    out[3 * O + o] = q1 - q2 - q3;
  }
#undef MCOL
}

typedef struct {
  const conv_geom *g;
  const view2 *v;
  pixbuf b;
  int64_t th, tw, T, blocks;
  float *U; /* [16][C][O] */
  uint64_t pid[16];
  float *bufs, *scr;
  int64_t scr_len;
  int failed;
} wjob2;

/* block blk of the tiles of images n0 .. n0 + ng - 1 taken in order (image n0 + i's buffer at
 * img + i * img_floats): small images share a block, so the products have enough rows */
static void wino_block(wjob2 *j, int64_t n0, int64_t ng, int64_t blk, int tid, const float *img,
                       size_t img_floats) {
  const conv_geom *g = j->g;
  const view2 *v = j->v;
  const int64_t C = g->C, O = g->O, width = j->b.width, T = j->T;
  const int64_t t0 = blk * WINO_TILES, nt = ng * T - t0 < WINO_TILES ? ng * T - t0 : WINO_TILES;
  /* the 16 planes of V and M a little more than a power of two apart: 16 streams a power of two
   * apart would share cache sets */
  const int64_t vs = WINO_TILES * C + 16, ms = WINO_TILES * O + 16;
  float *V = j->scr + (size_t)tid * (size_t)j->scr_len;
  float *M = V + 16 * vs;
  float *out = M + 16 * ms;
  for (int64_t k = 0; k < nt; ++k) {
    const int64_t t = (t0 + k) % T, ti = t / j->tw, tj = t % j->tw;
    wino_in(img + (size_t)((t0 + k) / T) * img_floats + ((2 * ti) * width + 2 * tj) * C,
            width * C, C, V + k * C, vs);
  }
  const npy_intp as[3] = {0, (npy_intp)(C * 4), 4}, bs[3] = {0, (npy_intp)(O * 4), 4};
  const npy_intp cs[3] = {0, (npy_intp)(O * 4), 4};
  for (int xi = 0; xi < 16; ++xi) {
    const pb_sgemm_opts opts = {NULL, NULL, false, j->pid[xi], NULL, NULL};
    if (pb_sgemm(nt, O, C, (const char *)(V + xi * vs), as, (const char *)(j->U + xi * C * O), bs,
                 (char *)(M + xi * ms), cs, 0, &opts))
      j->failed = 1;
  }
  if (v->ys[1] == 4 && g->ys_o != 4 && g->ys_o % 4 == 0) {
    /* channel-major output: each tile row's run of tiles into two pixel-major output rows,
     * then moved by transposes */
    float *st = out + 4 * O;
    for (int64_t k = 0; k < nt;) {
      char *yb = g->y + (n0 + (t0 + k) / T) * g->ys_n;
      const int64_t t = (t0 + k) % T, ti = t / j->tw, tj0 = t % j->tw;
      const int64_t run = j->tw - tj0 < nt - k ? j->tw - tj0 : nt - k;
      for (int64_t e = 0; e < run; ++e) {
        wino_out(M + (k + e) * O, ms, O, out);
        for (int q = 0; q < 4; ++q)
          memcpy(st + ((q >> 1) * 2 * j->tw + 2 * e + (q & 1)) * O, out + q * O, (size_t)O * 4);
      }
      const int64_t ow0 = 2 * tj0, npx = (2 * (tj0 + run) < v->out[1] ? 2 * (tj0 + run) : v->out[1]) - ow0;
      for (int64_t d = 0; d < 2 && 2 * ti + d < v->out[0]; ++d)
        tr_f32(st + d * 2 * j->tw * O, O, (float *)(yb + (2 * ti + d) * v->ys[0] + ow0 * 4),
               g->ys_o / 4, npx, O, g->accumulate);
      k += run;
    }
    return;
  }
  for (int64_t k = 0; k < nt; ++k) {
    const int64_t t = (t0 + k) % T, ti = t / j->tw, tj = t % j->tw;
    char *yb = g->y + (n0 + (t0 + k) / T) * g->ys_n;
    wino_out(M + k * O, ms, O, out);
    for (int q = 0; q < 4; ++q) {
      const int64_t oh = 2 * ti + (q >> 1), ow = 2 * tj + (q & 1);
      if (oh >= v->out[0] || ow >= v->out[1]) continue;
      char *yp = yb + oh * v->ys[0] + ow * v->ys[1];
      put_f32(g, yp, g->ys_o, out + q * O, O);
    }
  }
}

static int conv_fast_winograd(conv_geom *g, pb_kernel_ctx *ctx) {
  view2 v;
  view2_of(g, &v);
  if (g->in_dt != PB_F32 || g->out_dt != PB_F32 || g->nsp != 2 || !fast_usable()) return 0;
  if (g->B != 1 || g->G != 1 || g->C < 16 || g->O < 16 || g->Nb == 0 || v.k[0] != 3 ||
      v.k[1] != 3 || v.out[0] < 4 || v.out[1] < 4)
    return 0;
  for (int d = 0; d < 2; ++d)
    if (v.s[d] != 1 || v.rd[d] != 1 || v.ld[d] != 1) return 0;
  if ((double)g->plane * (double)g->O * (double)g->C * (double)g->Nb < 1e6) return 0;
  wjob2 j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.v = &v;
  const int64_t C = g->C, O = g->O, N = g->Nb;
  j.th = (v.out[0] + 1) / 2;
  j.tw = (v.out[1] + 1) / 2;
  j.T = j.th * j.tw;
  j.blocks = (j.T + WINO_TILES - 1) / WINO_TILES;
  pixbuf *b = &j.b;
  b->ch = C;
  if (pixbuf_window(b, 2 * j.th + 2, 2 * j.tw + 2, 1, -v.pl[0], -v.pl[1], ctx)) return -1;
  /* U = G g G^T per (c, o), G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]] */
  j.U = ctx->scratch(ctx, (size_t)(16 * C * O) * 4);
  if (!j.U) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t o = 0; o < O; ++o) {
      float w3[3][3], t[4][3];
      for (int a = 0; a < 3; ++a)
        for (int e = 0; e < 3; ++e)
          w3[a][e] = *(const float *)(g->w + o * g->ws_o + c * g->ws_i + a * v.ws[0] + e * v.ws[1]);
      for (int e = 0; e < 3; ++e) {
        t[0][e] = w3[0][e];
        t[1][e] = 0.5f * (w3[0][e] + w3[1][e] + w3[2][e]);
        t[2][e] = 0.5f * (w3[0][e] - w3[1][e] + w3[2][e]);
        t[3][e] = w3[2][e];
      }
      for (int i = 0; i < 4; ++i) {
        const float u[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]),
                            0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
        for (int k = 0; k < 4; ++k) j.U[((i * 4 + k) * C + c) * O + o] = u[k];
      }
    }
  for (int xi = 0; xi < 16; ++xi) j.pid[xi] = pb_sgemm_product_id();
  const double work = (double)g->plane * (double)O * (double)C * 9.0 * (double)N;
  const int nt = pb_kernel_threads(ctx, (int64_t)(work / 1e5) + 1, 8);
  const bool per_image = N >= 2 * nt;
  /* per thread, groups of images whose tiles fill a block (as many groups as threads twice) */
  int64_t grp = WINO_TILES / j.T > 1 ? WINO_TILES / j.T : 1;
  while (grp > 1 && (N + grp - 1) / grp < 2 * nt) --grp;
  const int64_t ngroups = (N + grp - 1) / grp;
  const size_t img_floats = (size_t)(b->image_px * C);
  j.bufs = ctx->scratch(ctx, (size_t)(per_image ? nt * grp : N) * img_floats * 4 + 64);
  j.scr_len = 16 * (WINO_TILES * (C + O) + 32) + 4 * O + 4 * j.tw * O + 16;
  j.scr = ctx->scratch(ctx, (size_t)nt * (size_t)j.scr_len * 4);
  if (!j.bufs || !j.scr) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
  /* an image's pixels are finished when its blocks are: only when one thread does them all */
  pb_kernel_ctx *follow = per_image && !g->accumulate ? g->follow : NULL;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
#ifdef _OPENMP
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    if (per_image) {
      float *own = j.bufs + (size_t)tid * grp * img_floats;
#pragma omp for schedule(dynamic, 1)
      for (int64_t gi = 0; gi < ngroups; ++gi) {
        const int64_t n0 = gi * grp, ng = N - n0 < grp ? N - n0 : grp;
        for (int64_t i = 0; i < ng; ++i)
          pixbuf_fill(b, own + i * img_floats, g->x + (n0 + i) * g->xs_n, g->xs_c, v.xs[0],
                      v.xs[1], v.in[0], v.in[1]);
        for (int64_t blk = 0; blk * WINO_TILES < ng * j.T; ++blk)
          wino_block(&j, n0, ng, blk, tid, own, img_floats);
        if (follow) pb_kernel_rows_done(follow, n0 * g->plane, (n0 + ng) * g->plane, tid);
      }
    } else {
#pragma omp for schedule(dynamic, 1)
      for (int64_t n = 0; n < N; ++n)
        pixbuf_fill(b, j.bufs + (size_t)n * img_floats, g->x + n * g->xs_n, g->xs_c, v.xs[0],
                    v.xs[1], v.in[0], v.in[1]);
#pragma omp for schedule(dynamic, 1)
      for (int64_t t = 0; t < N * j.blocks; ++t)
        wino_block(&j, t / j.blocks, 1, t % j.blocks, tid, j.bufs + (size_t)(t / j.blocks) * img_floats,
                   img_floats);
    }
  }
  if (j.failed) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory in a product"), -1;
  if (follow) ctx->followed = 1;
  return 1;
}

/* ---- the Winograd weight gradient (the kernel cotangent of a 3x3 stride-1 convolution) ----
 *
 * In the forward's terms: with M = U . V per tile (U = G g G^T, V = B^T d B) and Y = A^T M A,
 * dM = A dY A^T per tile and dU[xi] (Cin x Cout) = sum over tiles V[xi]^T dM[xi]; then
 * dg = G^T dU G. In this call's terms (JAX's transpose: lhs = the forward input with batch and
 * feature swapped, rhs = the output cotangent, output = the 3x3 kernel), per image: the input
 * tiles' V (as the forward), the cotangent's 2x2 tiles' dM, and 16 products (Cin x tiles) @
 * (tiles x Cout) accumulated in fixed chunks of images (the same bits whatever the threads). */
#define WGW_CHUNKS 8
#define WGW_TILES 128

static PB_CLONES void wino_dy(const float *restrict y, int64_t rs, int64_t O, float *restrict Z,
                              int64_t zs) {
  /* y: the 2x2 cotangent tile, pixel-major (rows rs floats apart, O per pixel); per column b,
   * A (y0b, y1b) = (y0b, y0b + y1b, y0b - y1b, -y1b), then the same along the rows */
#define DROW(i, x0, x1)                                                                           \
  Z[(i * 4 + 0) * zs + o] = x0;                                                                   \
  Z[(i * 4 + 1) * zs + o] = x0 + x1;                                                              \
  Z[(i * 4 + 2) * zs + o] = x0 - x1;                                                              \
  Z[(i * 4 + 3) * zs + o] = -x1;
  for (int64_t o = 0; o < O; ++o) {
    const float y00 = y[o], y01 = y[O + o], y10 = y[rs + o], y11 = y[rs + O + o];
    const float a1 = y00 + y10, b1 = y01 + y11, a2 = y00 - y10, b2 = y01 - y11;
    DROW(0, y00, y01) DROW(1, a1, b1) DROW(2, a2, b2) DROW(3, -y10, -y11)
  }
#undef DROW
}

typedef struct {
  const conv_geom *g;
  const view2 *v;
  pixbuf b;                 /* one image of the forward input, pixel-major (ch = Cin) */
  int64_t th, tw, T, nimg, chunk, ywidth;
  float *accs;              /* WGW_CHUNKS x 16 x Cin x Cout */
  float *scr;
  int64_t scr_len;
  int failed;
} wgw;

static void wgw_chunk(wgw *j, int64_t ch, int tid) {
  const conv_geom *g = j->g;
  const view2 *v = j->v;
  const int64_t C = g->Nb, O = g->O, width = j->b.width, T = j->T;
  /* tiles in blocks whose transforms stay in cache until their products read them; a block
   * takes the tiles of consecutive images (small images: 49 tiles each at 14 x 14), so the
   * products contract over up to WGW_TILES tiles */
  const int64_t vs = WGW_TILES * C + 16, zs = WGW_TILES * O + 16;
  float *img = j->scr + (size_t)tid * (size_t)j->scr_len;
  float *ybuf = img + j->b.image_px * C;           /* the cotangent, pixel-major, even-sized */
  float *V = ybuf + 2 * j->th * j->ywidth * O + 16;
  float *Z = V + 16 * vs;
  float *acc = j->accs + (size_t)ch * (size_t)(16 * C * O);
  const int64_t c0 = ch * j->chunk, c1 = c0 + j->chunk < j->nimg ? c0 + j->chunk : j->nimg;
  if (c0 >= c1) {
    memset(acc, 0, (size_t)(16 * C * O) * 4);
    return;
  }
  const npy_intp as[3] = {0, 4, (npy_intp)(C * 4)}; /* V[xi]^T: (Cin x tiles) */
  const npy_intp bs[3] = {0, (npy_intp)(O * 4), 4};
  const npy_intp cs[3] = {0, (npy_intp)(O * 4), 4};
  int64_t nt = 0;       /* tiles in the block */
  bool started = false; /* acc holds a product */
  for (int64_t c = c0; c < c1; ++c) {
    pixbuf_fill(&j->b, img, g->x + c * g->xs_c, g->xs_n, v->xs[0], v->xs[1], v->in[0], v->in[1]);
    /* the cotangent of image c: ybuf[(oh * ywidth + ow) * O + o], zero past the output */
    memset(ybuf, 0, (size_t)(2 * j->th * j->ywidth * O) * 4);
    for (int64_t oh = 0; oh < v->k[0]; ++oh) {
      const char *src = g->w + c * g->ws_i + oh * v->ws[0];
      float *dst = ybuf + oh * j->ywidth * O;
      if (g->ws_o == 4) {
        for (int64_t ow = 0; ow < v->k[1]; ++ow)
          memcpy(dst + ow * O, src + ow * v->ws[1], (size_t)O * 4);
      } else {
        for (int64_t ow = 0; ow < v->k[1]; ++ow)
          for (int64_t o = 0; o < O; ++o)
            dst[ow * O + o] = *(const float *)(src + o * g->ws_o + ow * v->ws[1]);
      }
    }
    for (int64_t t = 0; t < T; ++t) {
      const int64_t ti = t / j->tw, tj = t % j->tw;
      wino_in(img + ((2 * ti) * width + 2 * tj) * C, width * C, C, V + nt * C, vs);
      wino_dy(ybuf + ((2 * ti) * j->ywidth + 2 * tj) * O, j->ywidth * O, O, Z + nt * O, zs);
      if (++nt < WGW_TILES && !(c == c1 - 1 && t == T - 1)) continue;
      for (int xi = 0; xi < 16; ++xi)
        if (pb_sgemm(C, O, nt, (const char *)(V + xi * vs), as, (const char *)(Z + xi * zs), bs,
                     (char *)(acc + xi * C * O), cs, started, NULL))
          j->failed = 1;
      started = true;
      nt = 0;
    }
  }
}

static int conv_fast_winograd_wgrad(conv_geom *g, pb_kernel_ctx *ctx) {
  view2 v;
  view2_of(g, &v);
  if (g->in_dt != PB_F32 || g->out_dt != PB_F32 || g->nsp != 2 || !fast_usable()) return 0;
  if (g->B != 1 || g->G != 1 || g->Nb < 16 || g->O < 16 || g->C < 1 || v.out[0] != 3 ||
      v.out[1] != 3 || v.k[0] < 4 || v.k[1] < 4)
    return 0;
  for (int d = 0; d < 2; ++d)
    if (v.s[d] != 1 || v.rd[d] != 1 || v.ld[d] != 1) return 0;
  if ((double)g->Nb * (double)g->O * (double)g->C * (double)g->taps * 9.0 < 2e6) return 0;
  wgw j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.v = &v;
  const int64_t C = g->Nb, O = g->O;
  j.th = (v.k[0] + 1) / 2;
  j.tw = (v.k[1] + 1) / 2;
  j.T = j.th * j.tw;
  j.ywidth = 2 * j.tw;
  pixbuf *b = &j.b;
  b->ch = C;
  if (pixbuf_window(b, 2 * j.th + 2, 2 * j.tw + 2, 1, -v.pl[0], -v.pl[1], ctx)) return -1;
  j.nimg = g->C;
  j.chunk = (j.nimg + WGW_CHUNKS - 1) / WGW_CHUNKS;
  const double work = (double)C * (double)O * (double)g->C * (double)g->taps * 9.0;
  const int nt = pb_kernel_threads(ctx, (int64_t)(work / 1e5) + 1, 8);
  j.scr_len = b->image_px * C + 2 * j.th * j.ywidth * O + 16 * (WGW_TILES * (C + O) + 32) + 64;
  j.scr = ctx->scratch(ctx, (size_t)nt * (size_t)j.scr_len * 4);
  j.accs = ctx->scratch(ctx, (size_t)WGW_CHUNKS * (size_t)(16 * C * O) * 4);
  if (!j.scr || !j.accs) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"), -1;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
  for (int64_t ch = 0; ch < WGW_CHUNKS; ++ch) {
#ifdef _OPENMP
    const int tid = omp_get_thread_num();
#else
    const int tid = 0;
#endif
    wgw_chunk(&j, ch, tid);
  }
  if (j.failed) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory in a product"), -1;
  /* the chunks summed in order (into the first), then dg = G^T dU G per (c, o), stored at
   * y[c, o, kh, kw] */
  const size_t csz = (size_t)(16 * C * O);
  for (int64_t ch = 1; ch < WGW_CHUNKS; ++ch) {
    const float *src = j.accs + (size_t)ch * csz;
    for (size_t i = 0; i < csz; ++i) j.accs[i] += src[i];
  }
  for (int64_t c = 0; c < C; ++c)
    for (int64_t o = 0; o < O; ++o) {
      float du[4][4], t[3][4];
      for (int xi = 0; xi < 16; ++xi) du[xi / 4][xi % 4] = j.accs[(xi * C + c) * O + o];
      /* G^T rows: (1, 1/2, 1/2, 0), (0, 1/2, -1/2, 0), (0, 1/2, 1/2, 1) */
      for (int k = 0; k < 4; ++k) {
        t[0][k] = du[0][k] + 0.5f * (du[1][k] + du[2][k]);
        t[1][k] = 0.5f * (du[1][k] - du[2][k]);
        t[2][k] = 0.5f * (du[1][k] + du[2][k]) + du[3][k];
      }
      char *yo = g->y + c * g->ys_n + o * g->ys_o;
      for (int a = 0; a < 3; ++a) {
        const float r[3] = {t[a][0] + 0.5f * (t[a][1] + t[a][2]), 0.5f * (t[a][1] - t[a][2]),
                            0.5f * (t[a][1] + t[a][2]) + t[a][3]};
        for (int e = 0; e < 3; ++e) put1(g, yo + a * v.ys[0] + e * v.ys[1], r[e]);
      }
    }
  return 1;
}
