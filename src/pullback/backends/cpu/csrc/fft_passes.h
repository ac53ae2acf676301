/* One stage's butterflies on elements of type T (fft_impl.h includes it with T = R, one lane,
 * and T = a vector of FFT_LANES R, lanes of independent lines); PSUF(x) names them. Twiddles
 * and constants are scalars R (a vector times a scalar multiplies every lane).
 *
 * The FFTPACK layout: input CC(i, m, k) = x[i + ido (m + p k)], output
 * CH(i, k, j) = y[i + ido (k + l1 j)], y_j = (sum_m x_m w_p^(jm)) w^(j i l1). */

#define CCI(i, m, k) ((i) + ido * ((m) + (int64_t)P_ * (k)))
#define CHI(i, k, j) ((i) + ido * ((k) + l1 * (j)))

static inline __attribute__((always_inline)) void PSUF(pass2)(
    int64_t k0, int64_t k1, int64_t i0, int64_t i1, int64_t ido, int64_t l1,
    const T *restrict xr, const T *restrict xi, T *restrict yr, T *restrict yi,
    const R *restrict twr, const R *restrict twi) {
  enum { P_ = 2 };
  for (int64_t k = k0; k < k1; ++k)
    for (int64_t i = i0; i < i1; ++i) {
      const R wr = twr[i], wi = twi[i];
      const T ar = xr[CCI(i, 0, k)], ai = xi[CCI(i, 0, k)];
      const T br = xr[CCI(i, 1, k)], bi = xi[CCI(i, 1, k)];
      yr[CHI(i, k, 0)] = ar + br; yi[CHI(i, k, 0)] = ai + bi;
      const T dr = ar - br, di = ai - bi;
      yr[CHI(i, k, 1)] = dr * wr - di * wi; yi[CHI(i, k, 1)] = dr * wi + di * wr;
    }
}

static inline __attribute__((always_inline)) void PSUF(pass4)(
    int sign, int64_t k0, int64_t k1, int64_t i0, int64_t i1, int64_t ido, int64_t l1,
    const T *restrict xr, const T *restrict xi, T *restrict yr, T *restrict yi,
    const R *restrict twr, const R *restrict twi) {
  enum { P_ = 4 };
  for (int64_t k = k0; k < k1; ++k)
    for (int64_t i = i0; i < i1; ++i) {
      const R w1r = twr[i], w1i = twi[i], w2r = twr[ido + i], w2i = twi[ido + i];
      const R w3r = twr[2 * ido + i], w3i = twi[2 * ido + i];
      const T ar = xr[CCI(i, 0, k)], ai = xi[CCI(i, 0, k)];
      const T br = xr[CCI(i, 1, k)], bi = xi[CCI(i, 1, k)];
      const T cr = xr[CCI(i, 2, k)], ci = xi[CCI(i, 2, k)];
      const T dr = xr[CCI(i, 3, k)], di = xi[CCI(i, 3, k)];
      const T t0r = ar + cr, t0i = ai + ci, t1r = ar - cr, t1i = ai - ci;
      const T t2r = br + dr, t2i = bi + di, t3r = br - dr, t3i = bi - di;
      /* sign i (b - d) */
      const T ur = sign < 0 ? t3i : -t3i, ui = sign < 0 ? -t3r : t3r;
      yr[CHI(i, k, 0)] = t0r + t2r; yi[CHI(i, k, 0)] = t0i + t2i;
      T zr = t1r + ur, zi = t1i + ui;
      yr[CHI(i, k, 1)] = zr * w1r - zi * w1i; yi[CHI(i, k, 1)] = zr * w1i + zi * w1r;
      zr = t0r - t2r; zi = t0i - t2i;
      yr[CHI(i, k, 2)] = zr * w2r - zi * w2i; yi[CHI(i, k, 2)] = zr * w2i + zi * w2r;
      zr = t1r - ur; zi = t1i - ui;
      yr[CHI(i, k, 3)] = zr * w3r - zi * w3i; yi[CHI(i, k, 3)] = zr * w3i + zi * w3r;
    }
}

/* Any odd radix p (3, 5, 7 with p a constant, unrolled; others generic): pairs m, p - m give
 * y_j = x_0 + sum_m (x_m + x_{p-m}) cos(2 pi jm/p) + i (x_m - x_{p-m}) sign sin(2 pi jm/p) and
 * y_{p-j} the same with the sine term negated (sn carries the sign). */
static inline __attribute__((always_inline)) void PSUF(pass_odd)(
    const int p, int64_t k0, int64_t k1, int64_t i0, int64_t i1, int64_t ido, int64_t l1,
    const T *restrict xr, const T *restrict xi, T *restrict yr, T *restrict yi,
    const R *restrict twr, const R *restrict twi, const R *restrict cs, const R *restrict sn) {
  const int P_ = p, h = (p - 1) / 2;
  for (int64_t k = k0; k < k1; ++k)
    for (int64_t i = i0; i < i1; ++i) {
      const T x0r = xr[CCI(i, 0, k)], x0i = xi[CCI(i, 0, k)];
      T y0r = x0r, y0i = x0i;
      for (int m = 1; m <= h; ++m) {
        y0r += xr[CCI(i, m, k)] + xr[CCI(i, p - m, k)];
        y0i += xi[CCI(i, m, k)] + xi[CCI(i, p - m, k)];
      }
      yr[CHI(i, k, 0)] = y0r; yi[CHI(i, k, 0)] = y0i;
      for (int j = 1; j <= h; ++j) {
        T ar = x0r, ai = x0i, br = x0r * 0, bi = x0r * 0;
        int q = 0;
        for (int m = 1; m <= h; ++m) {
          q += j; if (q >= p) q -= p;
          const T sr = xr[CCI(i, m, k)] + xr[CCI(i, p - m, k)];
          const T si = xi[CCI(i, m, k)] + xi[CCI(i, p - m, k)];
          const T dr = xr[CCI(i, m, k)] - xr[CCI(i, p - m, k)];
          const T di = xi[CCI(i, m, k)] - xi[CCI(i, p - m, k)];
          ar += sr * cs[q]; ai += si * cs[q];
          br += dr * sn[q]; bi += di * sn[q];
        }
        /* y_j = a + i b, y_{p-j} = a - i b */
        T zr = ar - bi, zi = ai + br;
        const int64_t t1 = (int64_t)(j - 1) * ido + i, t2 = (int64_t)(p - j - 1) * ido + i;
        yr[CHI(i, k, j)] = zr * twr[t1] - zi * twi[t1];
        yi[CHI(i, k, j)] = zr * twi[t1] + zi * twr[t1];
        zr = ar + bi; zi = ai - br;
        yr[CHI(i, k, p - j)] = zr * twr[t2] - zi * twi[t2];
        yi[CHI(i, k, p - j)] = zr * twi[t2] + zi * twr[t2];
      }
    }
}
#undef CCI
#undef CHI

/* One stage on the part [k0, k1) x [i0, i1) of its (k, i) space. */
static inline __attribute__((always_inline)) void PSUF(stage_part)(
    const SUF(cplan) *P, const SUF(stage) *S, int64_t k0, int64_t k1, int64_t i0, int64_t i1,
    const T *xr, const T *xi, T *yr, T *yi) {
  const int64_t ido = S->ido, l1 = S->l1;
  switch (S->p) {
    case 2: PSUF(pass2)(k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi); break;
    case 4: PSUF(pass4)(P->sign, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi); break;
    case 3: {
      /* radix 3's constants inline: cos = -1/2, sin = sign sqrt(3)/2 */
      const R c3[3] = {1, (R)-0.5, (R)-0.5};
      const R s3[3] = {0, (R)(P->sign * 0.86602540378443864676),
                       (R)(-P->sign * 0.86602540378443864676)};
      PSUF(pass_odd)(3, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi, c3, s3);
      break;
    }
    case 5: PSUF(pass_odd)(5, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi, S->cr, S->ci); break;
    case 7: PSUF(pass_odd)(7, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi, S->cr, S->ci); break;
    default: PSUF(pass_odd)(S->p, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi, S->cr, S->ci);
  }
}
