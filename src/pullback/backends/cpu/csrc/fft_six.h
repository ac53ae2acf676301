/* The six-step transform of one long line, n = n1 n2 (fft_impl.h's cplan_six), included once
 * per precision after fft_lanes.h.
 *
 * Columns: FFT over t1 of x[n2 t1 + c] into t[n2 k1 + c], 8 adjacent columns at a time (each
 * element of the 8 is 8 consecutive complex: one deinterleave, or one vector load from split
 * planes). Rows: t[k1, t2] w^(k1 t2), FFT over t2, into x[k1 + n1 k2], 8 rows at a time (8x8
 * blocks of t transposed in registers, twiddles read in lane order, the 8 outputs of one k2
 * adjacent again). The input is the user's interleaved array (in, element stride ies bytes) or
 * split planes (xr, xi, in NULL); the output likewise (out, oes, times scale; or xr, xi).
 * in may be out: the columns pass reads all of it before the rows pass writes. */

/* column groups g .. g + gw - 1 (columns 8 g ..; gw <= FFT_SIXW, all full, or one last partial
 * group) into tr, ti; ws: this thread's FFT_SIXW lane workspaces. The groups are gathered
 * together, so every row of the input is read 8 gw complex at a time. */
static PB_CLONES void SUF(six_cols)(const SUF(cplan) *P, int64_t g, int gw, const char *in,
                                    int64_t ies, const R *xr, const R *xi, R *tr, R *ti, R *ws) {
  const int64_t n1 = P->n1, n2 = P->n2, big = n1 > n2 ? n1 : n2, cs = 2 * (int64_t)sizeof(R);
  const int64_t l1s = SUF(six_lane1)(P), pp = SUF(plane)(big, FFT_LANES);
  const int L = FFT_LANES;
  R *br = ws, *bi = br + n1 * L, *wk = br + 2 * pp, *zr, *zi;
  const int64_t c0 = g * L;
  {
    if (c0 + L <= n2) {
      for (int64_t t = 0; t < n1; ++t)
        for (int q = 0; q < gw; ++q) {
          const int64_t e = n2 * t + c0 + q * L;
          R *qr = ws + q * l1s + t * L, *qi = qr + pp;
          if (!in) {
            VST(qr, VLD(xr + e)); VST(qi, VLD(xi + e));
          } else if (ies == cs) {
            const char *p = in + e * cs;
            const SUF(vec) lo = VLD(p), hi = VLD(p + sizeof(SUF(vec)));
            VST(qr, FFT_SHUF(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14));
            VST(qi, FFT_SHUF(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15));
          } else {
            for (int v = 0; v < L; ++v) {
              const R *p = (const R *)(in + (e + v) * ies);
              qr[v] = p[0]; qi[v] = p[1];
            }
          }
        }
      R *outr[FFT_SIXW], *outi[FFT_SIXW];
      for (int q = 0; q < gw; ++q) {
        R *qr = ws + q * l1s;
        SUF(cexec)(P->p1, L, qr, qr + pp, qr + 2 * pp, &outr[q], &outi[q], 1);
      }
      for (int64_t k = 0; k < n1; ++k)
        for (int q = 0; q < gw; ++q) {
          VST(tr + n2 * k + c0 + q * L, VLD(outr[q] + k * L));
          VST(ti + n2 * k + c0 + q * L, VLD(outi[q] + k * L));
        }
      return;
    }
    for (int64_t c = c0; c < n2; ++c) {
      for (int64_t t = 0; t < n1; ++t) {
        if (in) {
          const R *q = (const R *)(in + (n2 * t + c) * ies);
          br[t] = q[0]; bi[t] = q[1];
        } else {
          br[t] = xr[n2 * t + c]; bi[t] = xi[n2 * t + c];
        }
      }
      SUF(cexec)(P->p1, 1, br, bi, wk, &zr, &zi, 1);
      for (int64_t k = 0; k < n1; ++k) { tr[n2 * k + c] = zr[k]; ti[n2 * k + c] = zi[k]; }
    }
  }
}

/* row groups g .. g + gw - 1 (rows 8 g ..; as six_cols) of tr, ti into out or xr, xi: each
 * group twiddled and transformed in its own workspace, then the groups' outputs written
 * together (8 gw adjacent complex per output frequency). */
static PB_CLONES void SUF(six_rows)(const SUF(cplan) *P, int64_t g, int gw, const R *tr,
                                    const R *ti, R *xr, R *xi, char *out, int64_t oes, R scale,
                                    R *ws) {
  const int64_t n1 = P->n1, n2 = P->n2, big = n1 > n2 ? n1 : n2, cs = 2 * (int64_t)sizeof(R);
  const int64_t l1s = SUF(six_lane1)(P), pp = SUF(plane)(big, FFT_LANES);
  const int L = FFT_LANES;
  R *br = ws, *bi = br + n2 * L, *wk = br + 2 * pp, *zr, *zi;
  const int64_t r0 = g * L;
  {
    if (r0 + L <= n1) {
      R *outr[FFT_SIXW], *outi[FFT_SIXW];
      for (int q = 0; q < gw; ++q) {
        const int64_t rq = r0 + q * L;
        const R *wr = P->t6lr + (g + q) * n2 * L, *wi = P->t6li + (g + q) * n2 * L;
        R *qr = ws + q * l1s, *qi = qr + pp;
        int64_t t = 0;
        for (; t + 8 <= n2; t += 8) {
          SUF(vec) a[8], b[8];
          const R *ra[8], *rb[8];
          for (int v = 0; v < 8; ++v) { ra[v] = tr + (rq + v) * n2 + t; rb[v] = ti + (rq + v) * n2 + t; }
          SUF(load_t8)(ra, a);
          SUF(load_t8)(rb, b);
          for (int j = 0; j < 8; ++j) {
            const SUF(vec) c = VLD(wr + (t + j) * L), d = VLD(wi + (t + j) * L);
            VST(qr + (t + j) * L, a[j] * c - b[j] * d);
            VST(qi + (t + j) * L, a[j] * d + b[j] * c);
          }
        }
        for (; t < n2; ++t)
          for (int v = 0; v < L; ++v) {
            const int64_t e = (rq + v) * n2 + t;
            const R a = tr[e], b = ti[e], c = wr[t * L + v], d = wi[t * L + v];
            qr[t * L + v] = a * c - b * d; qi[t * L + v] = a * d + b * c;
          }
        SUF(cexec)(P->p2, L, qr, qi, qr + 2 * pp, &outr[q], &outi[q], 1);
      }
      for (int64_t k = 0; k < n2; ++k)
        for (int q = 0; q < gw; ++q) {
          const R *zr = outr[q], *zi = outi[q];
          const int64_t e = r0 + q * L + n1 * k;
          if (!out) {
            VST(xr + e, VLD(zr + k * L)); VST(xi + e, VLD(zi + k * L));
          } else if (oes == cs) {
            const SUF(vec) r = VLD(zr + k * L) * scale, i = VLD(zi + k * L) * scale;
            VST(out + e * cs, FFT_SHUF(r, i, 0, 8, 1, 9, 2, 10, 3, 11));
            VST(out + e * cs + sizeof(SUF(vec)), FFT_SHUF(r, i, 4, 12, 5, 13, 6, 14, 7, 15));
          } else {
            for (int v = 0; v < L; ++v) {
              R *p = (R *)(out + (e + v) * oes);
              p[0] = zr[k * L + v] * scale; p[1] = zi[k * L + v] * scale;
            }
          }
        }
      return;
    }
    for (int64_t r = r0; r < n1; ++r) {
      for (int64_t t = 0; t < n2; ++t) {
        const int64_t q = r * n2 + t;
        const R a = tr[q], b = ti[q], c = P->t6r[q], d = P->t6i[q];
        br[t] = a * c - b * d; bi[t] = a * d + b * c;
      }
      SUF(cexec)(P->p2, 1, br, bi, wk, &zr, &zi, 1);
      for (int64_t k = 0; k < n2; ++k) {
        if (out) {
          R *q = (R *)(out + (r + n1 * k) * oes);
          q[0] = zr[k] * scale; q[1] = zi[k] * scale;
        } else {
          xr[r + n1 * k] = zr[k]; xi[r + n1 * k] = zi[k];
        }
      }
    }
  }
}

/* super-groups of FFT_SIXW full groups of lanes, then a last partial group (gw 1) */
static void SUF(six_run)(const SUF(cplan) *P, const char *in, int64_t ies, R *xr, R *xi,
                         char *out, int64_t oes, R scale, R *w, int nt) {
  const int64_t n = P->n, ls = SUF(six_lanes)(P), L = FFT_LANES, W = FFT_SIXW;
  R *tr = w, *ti = w + n, *lanes = w + 2 * n;
  const int64_t f1 = P->n2 / L, f2 = P->n1 / L;
  const int64_t s1 = (f1 + W - 1) / W + (P->n2 % L != 0), s2 = (f2 + W - 1) / W + (P->n1 % L != 0);
  PB_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (nt > 1))
  for (int64_t s = 0; s < s1; ++s) {
    const int64_t g = s * W < f1 ? s * W : f1;
    const int gw = g < f1 ? (int)(f1 - g < W ? f1 - g : W) : 1;
    SUF(six_cols)(P, g, gw, in, ies, xr, xi, tr, ti, lanes + ls * (nt > 1 ? omp_get_thread_num() : 0));
  }
  PB_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (nt > 1))
  for (int64_t s = 0; s < s2; ++s) {
    const int64_t g = s * W < f2 ? s * W : f2;
    const int gw = g < f2 ? (int)(f2 - g < W ? f2 - g : W) : 1;
    SUF(six_rows)(P, g, gw, tr, ti, xr, xi, out, oes, scale, lanes + ls * (nt > 1 ? omp_get_thread_num() : 0));
  }
}
#undef FFT_SHUF
#undef FFT_PF
#undef VLD
#undef VST
