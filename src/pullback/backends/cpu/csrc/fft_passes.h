/* One stage's butterflies on elements of type T (fft_impl.h includes it with T = R, one lane,
 * and T = a vector of FFT_LANES R, lanes of independent lines); PSUF(x) names them. Twiddles
 * and constants are scalars R (a vector times a scalar multiplies every lane).
 *
 * The FFTPACK layout: input CC(i, m, k) = x[i + ido (m + p k)], output
 * CH(i, k, j) = y[i + ido (k + l1 j)], y_j = (sum_m x_m w_p^(jm)) w^(j i l1). */

#define CCI(i, m, k) ((i) + ido * ((m) + (int64_t)P_ * (k)))
#define CHI(i, k, j) ((i) + ido * ((k) + l1 * (j)))

/* Output j of the butterfly at (i, k): z times twiddle j (none for j = 0 or without tw) */
static inline __attribute__((always_inline)) void PSUF(put)(
    const int tw, int j, int64_t i, int64_t k, int64_t ido, int64_t l1, T zr, T zi,
    T *restrict yr, T *restrict yi, const R *restrict twr, const R *restrict twi) {
  if (!tw || j == 0) { yr[CHI(i, k, j)] = zr; yi[CHI(i, k, j)] = zi; return; }
  const R wr = twr[(j - 1) * ido + i], wi = twi[(j - 1) * ido + i];
  yr[CHI(i, k, j)] = zr * wr - zi * wi; yi[CHI(i, k, j)] = zr * wi + zi * wr;
}

static inline __attribute__((always_inline)) void PSUF(pass2)(
    const int tw, int64_t k0, int64_t k1, int64_t i0, int64_t i1, int64_t ido, int64_t l1,
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
      if (!tw) { yr[CHI(i, k, 1)] = dr; yi[CHI(i, k, 1)] = di; continue; }
      yr[CHI(i, k, 1)] = dr * wr - di * wi; yi[CHI(i, k, 1)] = dr * wi + di * wr;
    }
}

static inline __attribute__((always_inline)) void PSUF(pass4)(
    int sign, const int tw, int64_t k0, int64_t k1, int64_t i0, int64_t i1, int64_t ido, int64_t l1,
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
      if (!tw) {
        yr[CHI(i, k, 1)] = t1r + ur; yi[CHI(i, k, 1)] = t1i + ui;
        yr[CHI(i, k, 2)] = t0r - t2r; yi[CHI(i, k, 2)] = t0i - t2i;
        yr[CHI(i, k, 3)] = t1r - ur; yi[CHI(i, k, 3)] = t1i - ui;
        continue;
      }
      T zr = t1r + ur, zi = t1i + ui;
      yr[CHI(i, k, 1)] = zr * w1r - zi * w1i; yi[CHI(i, k, 1)] = zr * w1i + zi * w1r;
      zr = t0r - t2r; zi = t0i - t2i;
      yr[CHI(i, k, 2)] = zr * w2r - zi * w2i; yi[CHI(i, k, 2)] = zr * w2i + zi * w2r;
      zr = t1r - ur; zi = t1i - ui;
      yr[CHI(i, k, 3)] = zr * w3r - zi * w3i; yi[CHI(i, k, 3)] = zr * w3i + zi * w3r;
    }
}

/* Radix 8 as radix 4 twice: a_m = x_m + x_{m+4} give the even outputs (a radix-4 DFT),
 * b_m = x_m - x_{m+4} times w8^m the odd ones. w8 = (1 + sign i) / sqrt 2. */
static inline __attribute__((always_inline)) void PSUF(pass8)(
    int sign, const int tw, int64_t k0, int64_t k1, int64_t i0, int64_t i1, int64_t ido,
    int64_t l1, const T *restrict xr, const T *restrict xi, T *restrict yr, T *restrict yi,
    const R *restrict twr, const R *restrict twi) {
  enum { P_ = 8 };
  const R h = (R)0.70710678118654752440084436210484903928L;
  const R s = (R)sign;
  for (int64_t k = k0; k < k1; ++k)
    for (int64_t i = i0; i < i1; ++i) {
      T ar[4], ai[4], br[4], bi[4];
      for (int m = 0; m < 4; ++m) {
        const T pr = xr[CCI(i, m, k)], pi = xi[CCI(i, m, k)];
        const T qr = xr[CCI(i, m + 4, k)], qi = xi[CCI(i, m + 4, k)];
        ar[m] = pr + qr; ai[m] = pi + qi; br[m] = pr - qr; bi[m] = pi - qi;
      }
      /* b_m w8^m: w8 z = (zr - s zi, zi + s zr) / sqrt 2; sign i z = (-s zi, s zr) */
      {
        const T r1 = (br[1] - s * bi[1]) * h, i1_ = (bi[1] + s * br[1]) * h;
        br[1] = r1; bi[1] = i1_;
        const T r2 = -s * bi[2], i2 = s * br[2];
        br[2] = r2; bi[2] = i2;
        const T r3 = (-br[3] - s * bi[3]) * h, i3 = (s * br[3] - bi[3]) * h;
        br[3] = r3; bi[3] = i3;
      }
      /* each half's four outputs j = half + 2 q stored as they are made (no array of all
       * eight: the compiler kept one on the stack) */
      for (int half = 0; half < 2; ++half) {
        const T *cr = half ? br : ar, *ci = half ? bi : ai;
        const T t0r = cr[0] + cr[2], t0i = ci[0] + ci[2], t1r = cr[0] - cr[2], t1i = ci[0] - ci[2];
        const T t2r = cr[1] + cr[3], t2i = ci[1] + ci[3], t3r = cr[1] - cr[3], t3i = ci[1] - ci[3];
        const T ur = -s * t3i, ui = s * t3r; /* sign i (c1 - c3) */
        PSUF(put)(tw, half, i, k, ido, l1, t0r + t2r, t0i + t2i, yr, yi, twr, twi);
        PSUF(put)(tw, half + 2, i, k, ido, l1, t1r + ur, t1i + ui, yr, yi, twr, twi);
        PSUF(put)(tw, half + 4, i, k, ido, l1, t0r - t2r, t0i - t2i, yr, yi, twr, twi);
        PSUF(put)(tw, half + 6, i, k, ido, l1, t1r - ur, t1i - ui, yr, yi, twr, twi);
      }
    }
}

/* Radix 16 as radix 4 twice: m = 4 a + b, j = c + 4 d, w16^(jm) = w4^(ac) w16^(bc) w4^(bd): a
 * radix-4 DFT over a for each b, the internal twiddles w16^(bc) (cs, sn: w16^q), a radix-4 DFT
 * over b for each c. One pass over the data where 4 4 took two (1024 = 16 8 8). */
static inline __attribute__((always_inline)) void PSUF(pass16)(
    int sign, const int tw, int64_t k0, int64_t k1, int64_t i0, int64_t i1, int64_t ido,
    int64_t l1, const T *restrict xr, const T *restrict xi, T *restrict yr, T *restrict yi,
    const R *restrict twr, const R *restrict twi, const R *restrict cs, const R *restrict sn) {
  enum { P_ = 16 };
  const R s = (R)sign;
  for (int64_t k = k0; k < k1; ++k)
    for (int64_t i = i0; i < i1; ++i) {
      T ur[16], ui[16]; /* u_b[c] at [4 b + c] */
      for (int b = 0; b < 4; ++b) {
        const T a0r = xr[CCI(i, b, k)], a0i = xi[CCI(i, b, k)];
        const T a1r = xr[CCI(i, b + 4, k)], a1i = xi[CCI(i, b + 4, k)];
        const T a2r = xr[CCI(i, b + 8, k)], a2i = xi[CCI(i, b + 8, k)];
        const T a3r = xr[CCI(i, b + 12, k)], a3i = xi[CCI(i, b + 12, k)];
        const T t0r = a0r + a2r, t0i = a0i + a2i, t1r = a0r - a2r, t1i = a0i - a2i;
        const T t2r = a1r + a3r, t2i = a1i + a3i, t3r = a1r - a3r, t3i = a1i - a3i;
        const T vr = -s * t3i, vi = s * t3r; /* sign i (a1 - a3) */
        ur[4 * b] = t0r + t2r; ui[4 * b] = t0i + t2i;
        ur[4 * b + 1] = t1r + vr; ui[4 * b + 1] = t1i + vi;
        ur[4 * b + 2] = t0r - t2r; ui[4 * b + 2] = t0i - t2i;
        ur[4 * b + 3] = t1r - vr; ui[4 * b + 3] = t1i - vi;
      }
      for (int b = 1; b < 4; ++b)
        for (int c = 1; c < 4; ++c) {
          const R wr = cs[b * c], wi = sn[b * c];
          const T zr = ur[4 * b + c], zi = ui[4 * b + c];
          ur[4 * b + c] = zr * wr - zi * wi; ui[4 * b + c] = zr * wi + zi * wr;
        }
      for (int c = 0; c < 4; ++c) { /* outputs j = c + 4 d, stored as made (see pass8) */
        const T t0r = ur[c] + ur[8 + c], t0i = ui[c] + ui[8 + c];
        const T t1r = ur[c] - ur[8 + c], t1i = ui[c] - ui[8 + c];
        const T t2r = ur[4 + c] + ur[12 + c], t2i = ui[4 + c] + ui[12 + c];
        const T t3r = ur[4 + c] - ur[12 + c], t3i = ui[4 + c] - ui[12 + c];
        const T vr = -s * t3i, vi = s * t3r;
        PSUF(put)(tw, c, i, k, ido, l1, t0r + t2r, t0i + t2i, yr, yi, twr, twi);
        PSUF(put)(tw, c + 4, i, k, ido, l1, t1r + vr, t1i + vi, yr, yi, twr, twi);
        PSUF(put)(tw, c + 8, i, k, ido, l1, t0r - t2r, t0i - t2i, yr, yi, twr, twi);
        PSUF(put)(tw, c + 12, i, k, ido, l1, t1r - vr, t1i - vi, yr, yi, twr, twi);
      }
    }
}

/* Any odd radix p (3, 5, 7 with p a constant, unrolled; others generic): pairs m, p - m give
 * y_j = x_0 + sum_m (x_m + x_{p-m}) cos(2 pi jm/p) + i (x_m - x_{p-m}) sign sin(2 pi jm/p) and
 * y_{p-j} the same with the sine term negated (sn carries the sign). */
static inline __attribute__((always_inline)) void PSUF(pass_odd)(
    const int p, const int tw, int64_t k0, int64_t k1, int64_t i0, int64_t i1, int64_t ido, int64_t l1,
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
        if (!tw) {
          yr[CHI(i, k, j)] = zr; yi[CHI(i, k, j)] = zi;
          yr[CHI(i, k, p - j)] = ar + bi; yi[CHI(i, k, p - j)] = ai - br;
          continue;
        }
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

/* One stage's butterflies on [k0, k1) x [i0, i1) with (tw 1) or without (tw 0: i = 0, where
 * every twiddle is 1) twiddles; p and ido are S's (constants in the copies that stage_vd
 * compiles for short strides). */
static inline __attribute__((always_inline)) void PSUF(stage_run)(
    const SUF(cplan) *P, const SUF(stage) *S, const int p, const int64_t ido, const int tw,
    int64_t k0, int64_t k1, int64_t i0, int64_t i1, const T *xr, const T *xi, T *yr, T *yi) {
  const int64_t l1 = S->l1;
  switch (p) {
    case 2: PSUF(pass2)(tw, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi); break;
    case 8: PSUF(pass8)(P->sign, tw, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi); break;
    case 16: PSUF(pass16)(P->sign, tw, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi, S->cr, S->ci); break;
    case 4: PSUF(pass4)(P->sign, tw, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi); break;
    case 3: {
      /* radix 3's constants inline: cos = -1/2, sin = sign sqrt(3)/2 */
      const R c3[3] = {1, (R)-0.5, (R)-0.5};
      const R s3[3] = {0, (R)(P->sign * 0.86602540378443864676),
                       (R)(-P->sign * 0.86602540378443864676)};
      PSUF(pass_odd)(3, tw, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi, c3, s3);
      break;
    }
    case 5: PSUF(pass_odd)(5, tw, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi, S->cr, S->ci); break;
    case 7: PSUF(pass_odd)(7, tw, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi, S->cr, S->ci); break;
    default: PSUF(pass_odd)(p, tw, k0, k1, i0, i1, ido, l1, xr, xi, yr, yi, S->twr, S->twi, S->cr, S->ci);
  }
}

/* One stage on the part [k0, k1) x [i0, i1) of its (k, i) space: a last stage (ido 1) without
 * twiddles; on lanes, i = 0 without twiddles too (for one long line, whose loop over i is the
 * vectorised one, a separate sweep over k for i = 0 would cost more than it saves). */
static inline __attribute__((always_inline)) void PSUF(stage_part)(
    const SUF(cplan) *P, const SUF(stage) *S, const int p, const int64_t ido, int64_t k0,
    int64_t k1, int64_t i0, int64_t i1, const T *xr, const T *xi, T *yr, T *yi) {
  if (ido == 1) {
    PSUF(stage_run)(P, S, p, ido, 0, k0, k1, i0, i1, xr, xi, yr, yi);
  } else if (sizeof(T) > sizeof(R) && i0 == 0 && i1 > 0) {
    PSUF(stage_run)(P, S, p, ido, 0, k0, k1, 0, 1, xr, xi, yr, yi);
    PSUF(stage_run)(P, S, p, ido, 1, k0, k1, 1, i1, xr, xi, yr, yi);
  } else {
    PSUF(stage_run)(P, S, p, ido, 1, k0, k1, i0, i1, xr, xi, yr, yi);
  }
}
