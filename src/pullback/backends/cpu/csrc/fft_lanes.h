/* Moving FFT_LANES (8) lines between the user's interleaved complex arrays and split-complex
 * lanes (element t of line v at [8 t + v]), included by fft_impl.h once per precision after
 * SUF(vec) (8 R) and SUF(ivec) (8 integers of R's size) are defined.
 *
 * Two layouts have vector paths: contiguous lines (element stride one complex: 4 complex of
 * each of 8 lines are an 8x8 block, transposed in registers) and adjacent lines (line v at
 * line 0 + v complex, as the columns of a row-major array: 8 lanes of one element are 16
 * consecutive R, deinterleaved). Anything else is gathered element by element. The functions
 * are PB_CLONES so the shuffles compile to AVX-512/AVX2 permutes. */

/* adjacent lines: each element is on its own row (a stride of a row), which the hardware
 * prefetcher follows late; irfft2 1024x1024 float32 took 6% less with the rows 8 elements
 * ahead prefetched, rfft2 1-2% (one thread, interleaved in one process) */
#define FFT_PF 8
#define FFT_SHUF(a, b, ...) __builtin_shuffle((a), (b), (SUF(ivec)){__VA_ARGS__})

/* unaligned vector access to R data (a macro: a function returning a vector would warn of the
 * ABI outside the clones) */
typedef R SUF(uvec) __attribute__((vector_size(FFT_LANES * sizeof(R)), aligned(sizeof(R)), may_alias));
#define VLD(p) (*(const SUF(uvec) *)(const void *)(p))
#define VST(p, v) (*(SUF(uvec) *)(void *)(p) = (v))

/* Half a vector (4 R): an 8x8 transpose loads and stores its rows in halves */
typedef R SUF(hvec) __attribute__((vector_size(FFT_LANES / 2 * sizeof(R)), aligned(sizeof(R)), may_alias));
#define HLD(p) (*(const SUF(hvec) *)(const void *)(p))
#define HST(p, v) (*(SUF(hvec) *)(void *)(p) = (v))

/* The in-lane rounds of an 8x8 transpose: with the halves of rows i and i + 4 paired in a[i]
 * (first halves, i < 4) and a[4 + i] (second halves), two rounds of shuffles within each half
 * vector make a[j] column j, and the same rounds turn columns back into paired rows. Only the
 * pairing crosses the middle of a vector, done by the loads or stores of halves: a transpose
 * of whole rows took three rounds of two-source permutes (see docs/fft.md). */
static inline __attribute__((always_inline)) void SUF(transpose8_in)(SUF(vec) *a) {
  for (int h = 0; h < 8; h += 4) {
    const SUF(vec) t0 = FFT_SHUF(a[h], a[h + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    const SUF(vec) t1 = FFT_SHUF(a[h], a[h + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    const SUF(vec) t2 = FFT_SHUF(a[h + 2], a[h + 3], 0, 8, 1, 9, 4, 12, 5, 13);
    const SUF(vec) t3 = FFT_SHUF(a[h + 2], a[h + 3], 2, 10, 3, 11, 6, 14, 7, 15);
    a[h] = FFT_SHUF(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
    a[h + 1] = FFT_SHUF(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    a[h + 2] = FFT_SHUF(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
    a[h + 3] = FFT_SHUF(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
  }
}

/* a[j] = column j of the 8 rows of 8 R at row[0..7] */
static inline __attribute__((always_inline)) void SUF(load_t8)(const R *const *row, SUF(vec) *a) {
  for (int i = 0; i < 4; ++i)
    for (int h = 0; h < 2; ++h)
      a[4 * h + i] = __builtin_shufflevector(HLD(row[i] + 4 * h), HLD(row[i + 4] + 4 * h),
                                             0, 1, 2, 3, 4, 5, 6, 7);
  SUF(transpose8_in)(a);
}

/* the reverse: columns a[0..7] (overwritten) stored as the rows row[0..7] */
static inline __attribute__((always_inline)) void SUF(store_t8)(SUF(vec) *a, R *const *row) {
  SUF(transpose8_in)(a);
  for (int i = 0; i < 4; ++i)
    for (int h = 0; h < 2; ++h) {
      HST(row[i] + 4 * h, __builtin_shufflevector(a[4 * h + i], a[4 * h + i], 0, 1, 2, 3));
      HST(row[i + 4] + 4 * h, __builtin_shufflevector(a[4 * h + i], a[4 * h + i], 4, 5, 6, 7));
    }
}

/* Line type: 0 generic, 1 contiguous lines (element stride one complex), 2 adjacent lines. */
static inline int SUF(layout)(char *const *b, int64_t es) {
  const int64_t c = 2 * (int64_t)sizeof(R);
  int adj = 1;
  for (int v = 1; v < FFT_LANES; ++v) adj &= b[v] == b[0] + v * c;
  if (adj) return 2;
  return es == c ? 1 : 0;
}

/* m complex elements (stride es bytes) of 8 lines into split lanes xr, xi; pf (or NULL): the
 * next group's input lines, prefetched over the loop */
static PB_CLONES void SUF(gather8)(char *const *inb, int64_t es, int64_t m, R *restrict xr,
                                   R *restrict xi, const fft_next *pf) {
  const int L = FFT_LANES, lay = SUF(layout)(inb, es);
  int64_t t = 0;
  if (lay == 2) {
    for (; t < m; ++t) {
      const char *p = inb[0] + t * es;
      __builtin_prefetch(p + FFT_PF * es);
      __builtin_prefetch(p + FFT_PF * es + 2 * sizeof(SUF(vec)) - 1);
      const SUF(vec) lo = VLD(p), hi = VLD(p + sizeof(SUF(vec)));
      VST(xr + t * L, FFT_SHUF(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14));
      VST(xi + t * L, FFT_SHUF(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15));
    }
  } else if (lay == 1) {
    fft_pwalk pw = fft_pwalk_new(pf ? pf->in : NULL, pf ? pf->in_bytes : 0, m / 4);
    for (; t + 4 <= m; t += 4) {
      SUF(vec) a[8];
      const R *row[8];
      if (pf) fft_prefetch(&pw, 0);
      for (int v = 0; v < 8; ++v) row[v] = (const R *)(inb[v] + t * es);
      SUF(load_t8)(row, a);
      for (int j = 0; j < 4; ++j) {
        VST(xr + (t + j) * L, a[2 * j]);
        VST(xi + (t + j) * L, a[2 * j + 1]);
      }
    }
  }
  for (; t < m; ++t)
    for (int v = 0; v < L; ++v) {
      const R *p = (const R *)(inb[v] + t * es);
      xr[t * L + v] = p[0]; xi[t * L + v] = p[1];
    }
}

/* the reverse: split lanes zr, zi times scale into m complex elements of 8 lines; pf (or
 * NULL): the next group's output lines, prefetched for writing */
static PB_CLONES void SUF(scatter8)(const R *restrict zr, const R *restrict zi, int64_t m,
                                    char *const *outb, int64_t es, R scale, const fft_next *pf) {
  const int L = FFT_LANES, lay = SUF(layout)(outb, es);
  int64_t t = 0;
  if (lay == 2) {
    for (; t < m; ++t) {
      char *p = outb[0] + t * es;
      __builtin_prefetch(p + FFT_PF * es, 1);
      __builtin_prefetch(p + FFT_PF * es + 2 * sizeof(SUF(vec)) - 1, 1);
      const SUF(vec) r = VLD(zr + t * L) * scale, i = VLD(zi + t * L) * scale;
      VST(p, FFT_SHUF(r, i, 0, 8, 1, 9, 2, 10, 3, 11));
      VST(p + sizeof(SUF(vec)), FFT_SHUF(r, i, 4, 12, 5, 13, 6, 14, 7, 15));
    }
  } else if (lay == 1) {
    fft_pwalk pw = fft_pwalk_new(pf ? pf->out : NULL, pf ? pf->out_bytes : 0, m / 4);
    for (; t + 4 <= m; t += 4) {
      SUF(vec) a[8];
      R *row[8];
      if (pf) fft_prefetch(&pw, 1);
      for (int j = 0; j < 4; ++j) {
        a[2 * j] = VLD(zr + (t + j) * L) * scale;
        a[2 * j + 1] = VLD(zi + (t + j) * L) * scale;
      }
      for (int v = 0; v < 8; ++v) row[v] = (R *)(outb[v] + t * es);
      SUF(store_t8)(a, row);
    }
  }
  for (; t < m; ++t)
    for (int v = 0; v < L; ++v) {
      R *q = (R *)(outb[v] + t * es);
      q[0] = zr[t * L + v] * scale; q[1] = zi[t * L + v] * scale;
    }
}

/* The untangling of an even-length R2C on 8 lanes: z (the half-length complex transform, h
 * elements) to X[k], k <= h, into yr, yi (h + 1 elements), times scale. */
static PB_CLONES void SUF(untangle8)(const R *restrict zr, const R *restrict zi, int64_t h,
                                     const R *restrict wr_, const R *restrict wi_,
                                     R *restrict yr, R *restrict yi, R scale) {
  const int L = FFT_LANES;
  const R half = (R)0.5 * scale;
  for (int64_t k = 0; k <= h; ++k) {
    const int64_t a = k == h ? 0 : k, b = k == 0 ? 0 : h - k;
    const R wr = wr_[k], wi = wi_[k];
    const SUF(vec) pr = VLD(zr + a * L), pi = VLD(zi + a * L);
    const SUF(vec) qr = VLD(zr + b * L), qi = -VLD(zi + b * L);
    const SUF(vec) er = pr + qr, ei = pi + qi, dr = pr - qr, di = pi - qi;
    /* X = E + w O with E = (p + q) / 2, O = (p - q) / 2i */
    VST(yr + k * L, (er + wr * di + wi * dr) * half);
    VST(yi + k * L, (ei - wr * dr + wi * di) * half);
  }
}

/* The C2R's tangling on 8 lanes: X[k] (k <= h, in br, bi; the imaginary parts of X[0] and X[h]
 * ignored) to the half-length complex input z[k] = E + i O, k < h, into xr, xi. */
static PB_CLONES void SUF(tangle8)(const R *restrict br, const R *restrict bi, int64_t h,
                                   const R *restrict wr_, const R *restrict wi_,
                                   R *restrict xr, R *restrict xi) {
  const int L = FFT_LANES;
  const SUF(vec) zero = {0};
  for (int64_t k = 0; k < h; ++k) {
    const R wr = wr_[k], wi = -wi_[k]; /* conj(w^k) */
    const SUF(vec) pr = VLD(br + k * L), pi = k == 0 ? zero : (SUF(vec))VLD(bi + k * L);
    const SUF(vec) qr = VLD(br + (h - k) * L);
    const SUF(vec) qi = k == 0 ? zero : -(SUF(vec))VLD(bi + (h - k) * L);
    const SUF(vec) er = pr + qr, ei = pi + qi, dr = pr - qr, di = pi - qi;
    const SUF(vec) or_ = dr * wr - di * wi, oi = dr * wi + di * wr; /* (p - q) conj(w^k) */
    VST(xr + k * L, er - oi);
    VST(xi + k * L, ei + or_);
  }
}

/* A long even real line's untangling (R2C) and tangling (C2R) on contiguous interleaved
 * arrays, k in [k0, k1): 8 consecutive k at a time against their 8 mirrored partners h - k
 * (loaded as a block and reversed in registers); formulas and edge cases as fft_impl.h's
 * untangle_inplace and tangle_one, which split the range over threads. */
#define FFT_REV(a) FFT_SHUF((a), (a), 7, 6, 5, 4, 3, 2, 1, 0)
#define FFT_RE(lo, hi) FFT_SHUF((lo), (hi), 0, 2, 4, 6, 8, 10, 12, 14)
#define FFT_IM(lo, hi) FFT_SHUF((lo), (hi), 1, 3, 5, 7, 9, 11, 13, 15)
/* One pair: X = (E + w O) / 2 with E = p + q, O = (p - q) / i, p = z[k], q = conj(z[h - k]);
 * X[h - k] swaps p and q: E conjugated, O negated and conjugated (w = twiddle k, m = h - k). */
static inline void SUF(untangle_one)(R *u, R *v, R wr, R wi, R mr, R mi, R half) {
  const R pr = u[0], pi = u[1], qr = v[0], qi = -v[1];
  const R er = pr + qr, ei = pi + qi, dr = pr - qr, di = pi - qi;
  const R xr = (er + wr * di + wi * dr) * half, xi = (ei - wr * dr + wi * di) * half;
  const R yr = (er + mr * di - mi * dr) * half, yi = (mr * dr + mi * di - ei) * half;
  u[0] = xr; u[1] = xi;
  v[0] = yr; v[1] = yi;
}

static PB_CLONES void SUF(untangle_pairs)(R *y, int64_t h, const R *wr_, const R *wi_, R half,
                                          int64_t k0, int64_t k1) {
  for (int64_t k = k0; k < k1;) {
    R *u = y + 2 * k;
    if (k + 8 <= k1 && k + 7 < h - k - 7) {
      R *v = y + 2 * (h - k - 7);
      const SUF(vec) ul = VLD(u), uh = VLD(u + 8), vl = VLD(v), vh = VLD(v + 8);
      const SUF(vec) pr = FFT_RE(ul, uh), pi = FFT_IM(ul, uh);
      const SUF(vec) qr = FFT_REV(FFT_RE(vl, vh)), qi = -FFT_REV(FFT_IM(vl, vh));
      const SUF(vec) er = pr + qr, ei = pi + qi, dr = pr - qr, di = pi - qi;
      const SUF(vec) wr = VLD(wr_ + k), wi = VLD(wi_ + k);
      const SUF(vec) mr = FFT_REV(VLD(wr_ + h - k - 7)), mi = FFT_REV(VLD(wi_ + h - k - 7));
      const SUF(vec) xr = (er + wr * di + wi * dr) * half, xi = (ei - wr * dr + wi * di) * half;
      const SUF(vec) yr = FFT_REV((er + mr * di - mi * dr) * half);
      const SUF(vec) yi = FFT_REV((mr * dr + mi * di - ei) * half);
      VST(u, FFT_SHUF(xr, xi, 0, 8, 1, 9, 2, 10, 3, 11));
      VST(u + 8, FFT_SHUF(xr, xi, 4, 12, 5, 13, 6, 14, 7, 15));
      VST(v, FFT_SHUF(yr, yi, 0, 8, 1, 9, 2, 10, 3, 11));
      VST(v + 8, FFT_SHUF(yr, yi, 4, 12, 5, 13, 6, 14, 7, 15));
      k += 8;
      continue;
    }
    SUF(untangle_one)(u, y + 2 * (h - k), wr_[k], wi_[k], wr_[h - k], wi_[h - k], half);
    ++k;
  }
}
static PB_CLONES void SUF(tangle_range)(const R *x, int64_t h, const R *wr_, const R *wi_,
                                        R *restrict z, int64_t k0, int64_t k1) {
  for (int64_t k = k0; k < k1;) {
    const R *p = x + 2 * k;
    if (k > 0 && k + 8 <= k1 && k + 7 < h) {
      const R *q = x + 2 * (h - k - 7);
      const SUF(vec) ul = VLD(p), uh = VLD(p + 8), vl = VLD(q), vh = VLD(q + 8);
      const SUF(vec) pr = FFT_RE(ul, uh), pi = FFT_IM(ul, uh);
      const SUF(vec) qr = FFT_REV(FFT_RE(vl, vh)), qi = -FFT_REV(FFT_IM(vl, vh));
      const SUF(vec) wr = VLD(wr_ + k), wi = -VLD(wi_ + k);
      const SUF(vec) er = pr + qr, ei = pi + qi, dr = pr - qr, di = pi - qi;
      const SUF(vec) or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
      const SUF(vec) zr = er - oi, zi = ei + or_;
      VST(z + 2 * k, FFT_SHUF(zr, zi, 0, 8, 1, 9, 2, 10, 3, 11));
      VST(z + 2 * k + 8, FFT_SHUF(zr, zi, 4, 12, 5, 13, 6, 14, 7, 15));
      k += 8;
      continue;
    }
    const R *q = x + 2 * (h - k);
    const R wr = wr_[k], wi = -wi_[k];
    const R pr = p[0], pi = k ? p[1] : 0, qr = q[0], qi = k ? -q[1] : 0;
    const R er = pr + qr, ei = pi + qi, dr = pr - qr, di = pi - qi;
    const R or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
    z[2 * k] = er - oi; z[2 * k + 1] = ei + or_;
    ++k;
  }
}
#undef FFT_REV
#undef FFT_RE
#undef FFT_IM
