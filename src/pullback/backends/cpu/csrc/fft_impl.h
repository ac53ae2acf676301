/* The FFT's transforms for one real type, included by fft.c once per precision with
 *   R    float or double
 *   SUF(x) a name suffixed by the precision (x##_f32, x##_f64)
 *
 * Data is split complex (separate real and imaginary planes) with V lanes: element t of lane v
 * sits at [t * V + v]. Lanes are independent lines transformed together, so every butterfly's
 * innermost loop runs over lanes (V = FFT_LANES, vectorised) or, for one long line (V = 1),
 * over the contiguous index i of a stage. See docs/fft.md. */

/* ---- plans ---- */

typedef struct {
  int p;            /* radix */
  int64_t l1, ido;  /* transforms already split off before this stage; their length / p */
  R *twr, *twi;     /* twiddles [(j - 1) * ido + i] = w^(j i l1), j in 1..p-1 */
  R *cr, *ci;       /* odd radix constants cos/sin(2 pi q / p), q < p */
} SUF(stage);

typedef struct SUF(cplan) {
  int64_t n;
  int sign;              /* -1 forward, +1 backward (unnormalised) */
  int nst;
  SUF(stage) st[64];
  /* Bluestein: a convolution of length N through the owned forward plan `sub` */
  int64_t N;
  struct SUF(cplan) *sub;
  R *bcr, *bci;          /* chirp exp(sign i pi t^2 / n), t < n */
  R *bfr, *bfi;          /* FFT of the conjugate chirp, divided by N */
  /* six-step (long lengths): n = n1 n2, columns of n1 then twiddled rows of n2 */
  int64_t n1, n2;
  struct SUF(cplan) *p1, *p2;
  R *t6r, *t6i;          /* w^(k1 t2) at [k1 * n2 + t2] */
  R *t6lr, *t6li;        /* the same in lane order: k1 = 8 g + v at [(g n2 + t2) 8 + v] */
  void *mem;
} SUF(cplan);

static void SUF(cplan_free)(SUF(cplan) *p) {
  if (!p) return;
  SUF(cplan_free)(p->sub);
  SUF(cplan_free)(p->p1);
  SUF(cplan_free)(p->p2);
  free(p->mem);
  free(p);
}

/* exp(sign 2 pi i k / n), in long double so double twiddles are correctly rounded or nearly */
static inline void SUF(unit)(int64_t k, int64_t n, int sign, R *re, R *im) {
  k %= n;
  if (k < 0) k += n;
  /* reduce to the first half for accuracy: angle in [0, pi] */
  int neg = 0;
  if (2 * k > n) { k = n - k; neg = 1; }
  long double a = 2.0L * 3.14159265358979323846264338327950288L * (long double)k / (long double)n;
  long double s = sinl(a);
  *re = (R)cosl(a);
  *im = (R)((neg ? -s : s) * sign);
}

static SUF(cplan) *SUF(cplan_new)(int64_t n, int sign);
static void SUF(cexec)(const SUF(cplan) *P, int V, R *xr, R *xi, R *w, R **outr, R **outi, int nt);
static int64_t SUF(cwork)(const SUF(cplan) *P, int V, int nt);

/* Six-step: a long direct length split n = n1 n2 (n1 ~ sqrt n), so every pass works on lanes of
 * FFT_LANES short lines held in cache, instead of log n passes over the whole array with
 * power-of-two strides. */
static SUF(cplan) *SUF(cplan_six)(int64_t n, int sign, const int *f, int nf) {
  SUF(cplan) *P = calloc(1, sizeof *P);
  if (!P) return NULL;
  int64_t n1 = 1, n2 = 1;
  for (int i = nf - 1; i >= 0; --i) { if (n1 <= n2) n1 *= f[i]; else n2 *= f[i]; }
  P->n = n; P->sign = sign; P->n1 = n1; P->n2 = n2;
  P->p1 = SUF(cplan_new)(n1, sign);
  P->p2 = SUF(cplan_new)(n2, sign);
  R *m = malloc((size_t)(4 * n) * sizeof(R));
  if (!P->p1 || !P->p2 || !m) { free(m); SUF(cplan_free)(P); return NULL; }
  P->mem = m; P->t6r = m; P->t6i = m + n; P->t6lr = m + 2 * n; P->t6li = m + 3 * n;
  const int L = FFT_LANES;
  for (int64_t k1 = 0; k1 < n1; ++k1)
    for (int64_t t2 = 0; t2 < n2; ++t2) {
      R c, d;
      SUF(unit)(k1 * t2, n, sign, &c, &d);
      P->t6r[k1 * n2 + t2] = c; P->t6i[k1 * n2 + t2] = d;
      const int64_t g = k1 / L, v = k1 % L;
      if ((g + 1) * L > n1) continue; /* a last partial group of rows uses t6r, t6i */
      P->t6lr[(g * n2 + t2) * L + v] = c; P->t6li[(g * n2 + t2) * L + v] = d;
    }
  return P;
}

/* The distance, in R, from a split plane holding n elements of V lanes to its partner (the
 * imaginary plane after the real one; a stage's other buffer after its input).
 *
 * Planes start a quarter of a 4 KB page apart (mod 4 KB): a stage's butterflies run 8 or 16
 * streams in each of the two planes it reads and the two it writes, at strides of n / p
 * elements, a multiple of 4 KB for many powers of two, and planes at one offset put all those
 * streams in the same sets of the 8-way L1 cache, which thrash.
 *
 * On lanes of lines up to FFT_DMAX long the distance is one constant, SUF(DPLANE) (most of it
 * address space never touched): the stages compiled for it (stage_vd) address an element's
 * real and imaginary parts from one pointer, where two planes at a distance known only at run
 * time took a pointer each, more than the registers hold, and the butterflies reloaded them
 * from the stack (see docs/fft.md). */
enum { SUF(DPLANE) = FFT_DMAX * FFT_LANES + 1024 / (int)sizeof(R) };
static int64_t SUF(plane)(int64_t n, int V) {
  if (V == FFT_LANES && n <= FFT_DMAX) return SUF(DPLANE);
  const int64_t e = V * (int64_t)sizeof(R), q = 4096 / e, r = 1024 / e;
  return (n + ((r - n % q) % q + q) % q) * V;
}

/* lane workspace of one group of a six-step plan; a thread holds FFT_SIXW of them */
static int64_t SUF(six_lane1)(const SUF(cplan) *P) {
  const int64_t m = P->n1 > P->n2 ? P->n1 : P->n2;
  const int64_t a = SUF(cwork)(P->p1, FFT_LANES, 1), b = SUF(cwork)(P->p2, FFT_LANES, 1);
  return 2 * SUF(plane)(m, FFT_LANES) + (a > b ? a : b); /* see six_cols */
}
static int64_t SUF(six_lanes)(const SUF(cplan) *P) { return FFT_SIXW * SUF(six_lane1)(P); }

static void SUF(six_run)(const SUF(cplan) *P, const char *in, int64_t ies, R *xr, R *xi,
                         char *out, int64_t oes, R scale, R *w, int nt);

static SUF(cplan) *SUF(cplan_direct)(int64_t n, int sign, const int *f, int nf) {
  SUF(cplan) *P = calloc(1, sizeof *P);
  if (!P) return NULL;
  P->n = n; P->sign = sign; P->nst = nf;
  size_t count = 0;
  int64_t l1 = 1;
  for (int s = 0; s < nf; ++s) {
    int64_t ido = n / (l1 * f[s]);
    count += (size_t)(f[s] - 1) * (size_t)ido * 2 + (f[s] > 4 ? 2 * (size_t)f[s] : 0);
    l1 *= f[s];
  }
  R *m = malloc((count + 1) * sizeof(R));
  if (!m) { free(P); return NULL; }
  P->mem = m;
  l1 = 1;
  for (int s = 0; s < nf; ++s) {
    SUF(stage) *S = &P->st[s];
    const int p = f[s];
    S->p = p; S->l1 = l1; S->ido = n / (l1 * p);
    const int64_t ido = S->ido, cnt = (int64_t)(p - 1) * ido;
    S->twr = m; S->twi = m + cnt; m += 2 * cnt;
    for (int j = 1; j < p; ++j)
      for (int64_t i = 0; i < ido; ++i)
        SUF(unit)((int64_t)j * i * l1, n, sign, &S->twr[(j - 1) * ido + i], &S->twi[(j - 1) * ido + i]);
    if (p > 4) {
      S->cr = m; S->ci = m + p; m += 2 * p;
      for (int q = 0; q < p; ++q) SUF(unit)(q, p, sign, &S->cr[q], &S->ci[q]);
    }
    l1 *= p;
  }
  return P;
}

/* Bluestein: X[k] = c[k] sum_t (x[t] c[t]) conj(c[k - t]), c[t] = exp(sign i pi t^2 / n), the
 * sum a cyclic convolution of length N >= 2n - 1 done by FFTs of a smooth length. */
static SUF(cplan) *SUF(cplan_bluestein)(int64_t n, int sign, int64_t N) {
  SUF(cplan) *P = calloc(1, sizeof *P);
  if (!P) return NULL;
  P->n = n; P->sign = sign; P->N = N;
  P->sub = SUF(cplan_new)(N, -1);
  R *m = malloc((size_t)(2 * n + 2 * N) * sizeof(R));
  double *hr = malloc((size_t)N * 2 * sizeof(R));
  if (!P->sub || !m || !hr) { free(m); free(hr); SUF(cplan_free)(P); return NULL; }
  P->mem = m;
  P->bcr = m; P->bci = m + n; P->bfr = m + 2 * n; P->bfi = m + 2 * n + N;
  for (int64_t t = 0; t < n; ++t) {
    /* t^2 mod 2n exactly: the angle pi t^2 / n = 2 pi (t^2 mod 2n) / 2n */
    const int64_t q = (int64_t)(((unsigned __int128)t * (unsigned __int128)t) % (unsigned __int128)(2 * n));
    SUF(unit)(q, 2 * n, sign, &P->bcr[t], &P->bci[t]);
  }
  /* h[j] = conj(c[|j|]) on -(n-1)..n-1, cyclically; its FFT / N (the inverse's scale) */
  R *h_r = (R *)hr, *h_i = h_r + N;
  for (int64_t j = 0; j < N; ++j) { h_r[j] = 0; h_i[j] = 0; }
  for (int64_t t = 0; t < n; ++t) {
    h_r[t] = P->bcr[t]; h_i[t] = -P->bci[t];
    if (t) { h_r[N - t] = P->bcr[t]; h_i[N - t] = -P->bci[t]; }
  }
  R *w = malloc((size_t)SUF(cwork)(P->sub, 1, 1) * sizeof(R)), *outr, *outi;
  if (!w) { free(hr); SUF(cplan_free)(P); return NULL; }
  SUF(cexec)(P->sub, 1, h_r, h_i, w, &outr, &outi, 1);
  for (int64_t j = 0; j < N; ++j) { P->bfr[j] = outr[j] / (R)N; P->bfi[j] = outi[j] / (R)N; }
  free(w); free(hr);
  return P;
}

/* ---- passes: fft_passes.h on one element type T, a scalar R (one lane; the stage loops run
 * over the contiguous index i) or a vector of FFT_LANES R (lanes of independent lines, one
 * vector each: butterflies vectorise whatever the stage's shape) ---- */

typedef R SUF(vec) __attribute__((vector_size(FFT_LANES * sizeof(R)), aligned(sizeof(R))));
typedef RI SUF(ivec) __attribute__((vector_size(FFT_LANES * sizeof(R))));
#include "fft_lanes.h"
#include "fft_six.h"

/* The butterflies contract a product and a sum into one FMA where the clone has it (AVX2,
 * AVX-512): a complex twiddle product in 4 instructions, not 6, and one rounding fewer each
 * (the baseline clone rounds both, so the last bit may differ between machines). */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#define T R
#define PSUF(x) SUF(x##_s)
#include "fft_passes.h"
#undef T
#undef PSUF
#define T SUF(vec)
#define PSUF(x) SUF(x##_v)
#include "fft_passes.h"
#undef T
#undef PSUF

/* The stages of a direct plan, part `tid` of `nt` of each stage (barriers between stages are
 * the caller's): k split when there are enough k, else i. p_, ido_: S->p and S->ido, or the
 * same values as constants. */
#define STAGE_BODY(PART, T_, p_, ido_)                                                         \
  const int64_t l1 = S->l1, ido = ido_;                                                        \
  const T_ *x_r = (const T_ *)xr, *x_i = (const T_ *)xi;                                       \
  T_ *y_r = (T_ *)yr, *y_i = (T_ *)yi;                                                         \
  if (nt == 1) PART(P, S, p_, ido, 0, l1, 0, ido, x_r, x_i, y_r, y_i);                         \
  else if (l1 >= nt) PART(P, S, p_, ido, l1 * tid / nt, l1 * (tid + 1) / nt, 0, ido, x_r, x_i, y_r, y_i); \
  else PART(P, S, p_, ido, 0, l1, ido * tid / nt, ido * (tid + 1) / nt, x_r, x_i, y_r, y_i);

static PB_CLONES void SUF(stage_v1)(const SUF(cplan) *P, const SUF(stage) *S, const R *xr,
                                    const R *xi, R *yr, R *yi, int tid, int nt) {
  STAGE_BODY(SUF(stage_part_s), R, S->p, S->ido)
}
static PB_CLONES void SUF(stage_vl)(const SUF(cplan) *P, const SUF(stage) *S, const R *xr,
                                    const R *xi, R *yr, R *yi, int tid, int nt) {
  STAGE_BODY(SUF(stage_part_v), SUF(vec), S->p, S->ido)
}
/* Lanes whose imaginary planes sit SUF(DPLANE) after the real ones (see plane). The first stage
 * of 256 = 16 16 on one thread and every last radix-16 stage (ido 1) are compiled with their
 * radix and strides as constants: a butterfly's elements are then constant offsets from one
 * pointer, where run-time strides took a pointer per element, more than the registers hold
 * (see docs/fft.md). */
static PB_CLONES void SUF(stage_vd)(const SUF(cplan) *P, const SUF(stage) *S, const R *xr,
                                    R *yr, int tid, int nt) {
  const R *xi = xr + SUF(DPLANE);
  R *yi = yr + SUF(DPLANE);
  if (S->p == 16 && S->ido == 16 && S->l1 == 1 && nt == 1) {
    SUF(stage_part_v)(P, S, 16, 16, 0, 1, 0, 16, (const SUF(vec) *)xr, (const SUF(vec) *)xi,
                      (SUF(vec) *)yr, (SUF(vec) *)yi);
  } else if (S->p == 16 && S->ido == 1) {
    STAGE_BODY(SUF(stage_part_v), SUF(vec), 16, 1)
  } else {
    STAGE_BODY(SUF(stage_part_v), SUF(vec), S->p, S->ido)
  }
}
#undef STAGE_BODY
#pragma GCC pop_options

/* The unnormalised transform of plan P on V lanes (V: 1 or FFT_LANES) of x (n * V, split;
 * overwritten). w: workspace of SUF(cwork)(P, V) elements. The result is at *outr, *outi
 * (x or inside w). nt threads (the caller is not in a parallel region). */
static int64_t SUF(cwork)(const SUF(cplan) *P, int V, int nt) {
  if (P->p1) return 2 * P->n + (nt > 1 ? nt : 1) * SUF(six_lanes)(P);
  return P->sub ? 2 * SUF(plane)(P->N, V) + SUF(cwork)(P->sub, V, nt) : 2 * SUF(plane)(P->n, V);
}

static void SUF(cexec)(const SUF(cplan) *P, int V, R *xr, R *xi, R *w, R **outr, R **outi, int nt) {
  const int64_t n = P->n;
  if (P->p1) {
    SUF(six_run)(P, NULL, 0, xr, xi, NULL, 0, 1, w, nt);
    *outr = xr; *outi = xi;
    return;
  }
  if (P->sub) {
    const int64_t N = P->N, pn = SUF(plane)(N, V);
    R *ar = w, *ai = w + pn, *rest = w + 2 * pn, *cr, *ci;
    for (int64_t t = 0; t < n; ++t)
      for (int v = 0; v < V; ++v) {
        const R a = xr[t * V + v], b = xi[t * V + v], c = P->bcr[t], d = P->bci[t];
        ar[t * V + v] = a * c - b * d; ai[t * V + v] = a * d + b * c;
      }
    for (int64_t t = n * V; t < N * V; ++t) { ar[t] = 0; ai[t] = 0; }
    SUF(cexec)(P->sub, V, ar, ai, rest, &cr, &ci, nt);
    /* times FFT(h) / N, conjugated: the inverse transform as conj(FFT(conj(.))) */
    for (int64_t t = 0; t < N; ++t)
      for (int v = 0; v < V; ++v) {
        const R a = cr[t * V + v], b = ci[t * V + v], c = P->bfr[t], d = P->bfi[t];
        cr[t * V + v] = a * c - b * d; ci[t * V + v] = -(a * d + b * c);
      }
    R *er, *ei;
    R *w2 = cr == ar ? rest : ar; /* the buffer the first result is not in */
    SUF(cexec)(P->sub, V, cr, ci, w2, &er, &ei, nt);
    for (int64_t t = 0; t < n; ++t)
      for (int v = 0; v < V; ++v) {
        const R a = er[t * V + v], b = -ei[t * V + v], c = P->bcr[t], d = P->bci[t];
        xr[t * V + v] = a * c - b * d; xi[t * V + v] = a * d + b * c;
      }
    *outr = xr; *outi = xi;
    return;
  }
  R *ar = xr, *ai = xi, *br = w, *bi = w + SUF(plane)(n, V);
  const int vd = V == FFT_LANES && xi == xr + SUF(DPLANE) && bi == br + SUF(DPLANE);
  if (nt <= 1) {
    for (int s = 0; s < P->nst; ++s) {
      if (V == 1) SUF(stage_v1)(P, &P->st[s], ar, ai, br, bi, 0, 1);
      else if (vd) SUF(stage_vd)(P, &P->st[s], ar, br, 0, 1);
      else SUF(stage_vl)(P, &P->st[s], ar, ai, br, bi, 0, 1);
      R *t = ar; ar = br; br = t; t = ai; ai = bi; bi = t;
    }
  } else {
    PB_PRAGMA(omp parallel num_threads(nt))
    {
      R *pr = ar, *pi = ai, *qr = br, *qi = bi;
      const int tid = omp_get_thread_num();
      for (int s = 0; s < P->nst; ++s) {
        if (V == 1) SUF(stage_v1)(P, &P->st[s], pr, pi, qr, qi, tid, nt);
        else if (vd) SUF(stage_vd)(P, &P->st[s], pr, qr, tid, nt);
        else SUF(stage_vl)(P, &P->st[s], pr, pi, qr, qi, tid, nt);
        R *t = pr; pr = qr; qr = t; t = pi; pi = qi; qi = t;
        PB_PRAGMA(omp barrier)
      }
    }
    if (P->nst & 1) { ar = br; ai = bi; }
  }
  *outr = ar; *outi = ai;
}

/* A plan for n: direct over n's factors, or Bluestein when that is cheaper (fft_choose). */
static SUF(cplan) *SUF(cplan_new)(int64_t n, int sign) {
  int f[64], nf;
  const int64_t N = fft_choose(n, f, &nf);
  if (N) return SUF(cplan_bluestein)(n, sign, N);
  fft_radix8(f, &nf);
  return n >= FFT_SIX && nf > 1 ? SUF(cplan_six)(n, sign, f, nf) : SUF(cplan_direct)(n, sign, f, nf);
}

/* Real transforms: an even n through a complex transform of n / 2 (even samples as real parts,
 * odd ones as imaginary parts, then untangled with w^k = exp(-2 pi i k / n)); an odd n through
 * a complex transform of n. */
typedef struct {
  int64_t n;
  int c2r;
  SUF(cplan) *c;
  R *wr, *wi; /* k <= n / 2 */
} SUF(rplan);

static void SUF(rplan_free)(SUF(rplan) *p) {
  if (!p) return;
  SUF(cplan_free)(p->c);
  free(p->wr);
  free(p);
}

static SUF(rplan) *SUF(rplan_new)(int64_t n, int c2r) {
  SUF(rplan) *P = calloc(1, sizeof *P);
  if (!P) return NULL;
  P->n = n; P->c2r = c2r;
  const int64_t h = n / 2;
  P->c = SUF(cplan_new)(n % 2 ? n : h, c2r ? 1 : -1);
  P->wr = malloc((size_t)(2 * h + 2) * sizeof(R));
  if (!P->c || !P->wr) { SUF(rplan_free)(P); return NULL; }
  P->wi = P->wr + h + 1;
  for (int64_t k = 0; k <= h; ++k) SUF(unit)(k, n, -1, &P->wr[k], &P->wi[k]);
  return P;
}

/* Elements of workspace (R) one thread needs for V lanes of a transform whose complex plan is c */
static int64_t SUF(work)(int kind, const SUF(cplan) *c, int V, int nt) {
  if (kind == FFT_C2C && c->p1 && V == 1) return SUF(cwork)(c, V, nt); /* six_run on the user's arrays */
  if (kind == FFT_C2C && c->sub && c->sub->p1 && V == 1) /* blue_one: the padded line, six_run's */
    return 2 * c->N + SUF(cwork)(c->sub, 1, nt);
  return 6 * SUF(plane)(c->n + 1, V) + SUF(cwork)(c, V, nt); /* see group */
}

/* ---- long even real lines on the six-step: its column pass reads the samples' pairs as
 * complex elements straight from the input, its row pass writes straight into the output, so
 * the line never passes through split planes (two passes over the array fewer) ---- */

/* R2C's untangling in place over the output y (element stride es): z[k] (k < h) there becomes
 * X[k] (k <= h) times scale; X[k] and X[h - k] both need z[k] and z[h - k], so each pair is
 * read and written together (z[0] gives X[0] and X[h]). */
static void SUF(untangle_inplace)(char *y, int64_t es, int64_t h, const R *wr_, const R *wi_,
                                  R scale, int nt) {
  const R half = (R)0.5 * scale;
  R *z0 = (R *)y, *zh = (R *)(y + h * es);
  const R a = z0[0], b = z0[1];
  z0[0] = (a + b) * scale; z0[1] = 0;
  zh[0] = (a - b) * scale; zh[1] = 0;
  const int64_t m = h / 2 + 1; /* pairs k = 1 .. h / 2 */
  if (es == 2 * (int64_t)sizeof(R)) {
    PB_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (nt > 1))
    for (int c = 0; c < nt; ++c)
      SUF(untangle_pairs)((R *)y, h, wr_, wi_, half, 1 + (m - 1) * c / nt, 1 + (m - 1) * (c + 1) / nt);
    return;
  }
  PB_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (nt > 1))
  for (int64_t k = 1; k < m; ++k)
    SUF(untangle_one)((R *)(y + k * es), (R *)(y + (h - k) * es), wr_[k], wi_[k], wr_[h - k],
                      wi_[h - k], half);
}

/* C2R's tangling from the input X (element stride es; the imaginary parts of X[0] and X[h]
 * ignored) into z[k] = E + i O, k < h, interleaved */
static void SUF(tangle_one)(const char *x, int64_t es, int64_t h, const R *wr_, const R *wi_,
                            R *restrict z, int nt) {
  if (es == 2 * (int64_t)sizeof(R)) {
    PB_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (nt > 1))
    for (int c = 0; c < nt; ++c)
      SUF(tangle_range)((const R *)x, h, wr_, wi_, z, h * c / nt, h * (c + 1) / nt);
    return;
  }
  PB_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (nt > 1))
  for (int64_t k = 0; k < h; ++k) {
    const R *p = (const R *)(x + k * es), *q = (const R *)(x + (h - k) * es);
    const R wr = wr_[k], wi = -wi_[k]; /* conj(w^k) */
    const R pr = p[0], pi = k ? p[1] : 0, qr = q[0], qi = k ? -q[1] : 0;
    const R er = pr + qr, ei = pi + qi, dr = pr - qr, di = pi - qi;
    const R or_ = dr * wr - di * wi, oi = dr * wi + di * wr; /* (p - q) conj(w^k) */
    z[2 * k] = er - oi; z[2 * k + 1] = ei + or_;
  }
}

/* ---- one long line by Bluestein whose convolution length runs on the six-step: the chirp
 * multiplies read the user's input and write its output directly, every pass over the padded
 * length is split over the threads, and the two transforms run in place (no result copies) ---- */

/* a[t] = x[t] c[t] for t < n, 0 up to N, over [lo, hi) */
static PB_CLONES void SUF(blue_in)(const SUF(cplan) *P, const char *in, int64_t ies, R *restrict ar,
                                   R *restrict ai, int64_t lo, int64_t hi) {
  const int64_t n = P->n, e = hi < n ? hi : n;
  const R *restrict cr = P->bcr, *restrict ci = P->bci;
  if (ies == 2 * (int64_t)sizeof(R)) {
    const R *restrict x = (const R *)in;
    for (int64_t t = lo; t < e; ++t) {
      const R a = x[2 * t], b = x[2 * t + 1];
      ar[t] = a * cr[t] - b * ci[t]; ai[t] = a * ci[t] + b * cr[t];
    }
  } else {
    for (int64_t t = lo; t < e; ++t) {
      const R *x = (const R *)(in + t * ies);
      ar[t] = x[0] * cr[t] - x[1] * ci[t]; ai[t] = x[0] * ci[t] + x[1] * cr[t];
    }
  }
  for (int64_t t = lo > n ? lo : n; t < hi; ++t) { ar[t] = 0; ai[t] = 0; }
}

/* a = conj(a FFT(h) / N) over [lo, hi): the inverse transform as conj(FFT(conj(.))) */
static PB_CLONES void SUF(blue_mul)(const SUF(cplan) *P, R *restrict ar, R *restrict ai,
                                    int64_t lo, int64_t hi) {
  const R *restrict fr = P->bfr, *restrict fi = P->bfi;
  for (int64_t t = lo; t < hi; ++t) {
    const R a = ar[t], b = ai[t];
    ar[t] = a * fr[t] - b * fi[t]; ai[t] = -(a * fi[t] + b * fr[t]);
  }
}

/* y[t] = conj(e[t]) c[t] scale over [lo, hi) (hi <= n) */
static PB_CLONES void SUF(blue_out)(const SUF(cplan) *P, const R *restrict er, const R *restrict ei,
                                    char *out, int64_t oes, R scale, int64_t lo, int64_t hi) {
  const R *restrict cr = P->bcr, *restrict ci = P->bci;
  if (oes == 2 * (int64_t)sizeof(R)) {
    R *restrict y = (R *)out;
    for (int64_t t = lo; t < hi; ++t) {
      const R a = er[t] * scale, b = -ei[t] * scale;
      y[2 * t] = a * cr[t] - b * ci[t]; y[2 * t + 1] = a * ci[t] + b * cr[t];
    }
  } else {
    for (int64_t t = lo; t < hi; ++t) {
      const R a = er[t] * scale, b = -ei[t] * scale;
      R *y = (R *)(out + t * oes);
      y[0] = a * cr[t] - b * ci[t]; y[1] = a * ci[t] + b * cr[t];
    }
  }
}

static void SUF(blue_one)(const SUF(cplan) *P, const char *in, int64_t ies, char *out, int64_t oes,
                          R scale, R *w, int nt) {
  const int64_t n = P->n, N = P->N;
  R *ar = w, *ai = w + N, *rest = w + 2 * N;
  if (nt < 1) nt = 1;
  PB_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (nt > 1))
  for (int c = 0; c < nt; ++c) SUF(blue_in)(P, in, ies, ar, ai, N * c / nt, N * (c + 1) / nt);
  SUF(six_run)(P->sub, NULL, 0, ar, ai, NULL, 0, 1, rest, nt);
  PB_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (nt > 1))
  for (int c = 0; c < nt; ++c) SUF(blue_mul)(P, ar, ai, N * c / nt, N * (c + 1) / nt);
  SUF(six_run)(P->sub, NULL, 0, ar, ai, NULL, 0, 1, rest, nt);
  PB_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (nt > 1))
  for (int c = 0; c < nt; ++c) SUF(blue_out)(P, ar, ai, out, oes, scale, n * c / nt, n * (c + 1) / nt);
}

/* ---- one group of V lines: gather into split lanes, transform, scatter (PB_CLONES: the
 * one-lane loops of long real lines vectorise) ---- */

static PB_CLONES void SUF(group)(int kind, const void *plan, int V, char *const *inb, int64_t ies,
                       char *const *outb, int64_t oes, R scale, R *buf, int nt,
                       const fft_next *pf) {
  const SUF(cplan) *C = kind == FFT_C2C ? plan : ((const SUF(rplan) *)plan)->c;
  /* planes at 0, 1, 2, 3 quarters of a page (mod 4 KB): x, the stages' other buffer (work)
   * and br, bi, which share work's offsets but are used only outside the stages */
  const int64_t cn = C->n, W = SUF(plane)(cn + 1, V);
  R *xr = buf, *xi = buf + W, *br = buf + 2 * W, *bi = buf + 3 * W;
  R *work = buf + 6 * W, *zr, *zi;
  if (kind == FFT_C2C && C->p1 && V == 1) {
    SUF(six_run)(C, inb[0], ies, NULL, NULL, outb[0], oes, scale, buf, nt);
    return;
  }
  if (kind == FFT_C2C && C->sub && C->sub->p1 && V == 1) {
    SUF(blue_one)(C, inb[0], ies, outb[0], oes, scale, buf, nt);
    return;
  }
  if (kind == FFT_C2C && V == FFT_LANES) {
    SUF(gather8)(inb, ies, cn, xr, xi, pf);
    SUF(cexec)(C, V, xr, xi, work, &zr, &zi, nt);
    SUF(scatter8)(zr, zi, cn, outb, oes, scale, pf);
    return;
  }
  if (kind == FFT_C2C) {
    for (int64_t t = 0; t < cn; ++t)
      for (int v = 0; v < V; ++v) {
        const R *p = (const R *)(inb[v] + t * ies);
        xr[t * V + v] = p[0]; xi[t * V + v] = p[1];
      }
    SUF(cexec)(C, V, xr, xi, work, &zr, &zi, nt);
    for (int64_t t = 0; t < cn; ++t)
      for (int v = 0; v < V; ++v) {
        R *q = (R *)(outb[v] + t * oes);
        q[0] = zr[t * V + v] * scale; q[1] = zi[t * V + v] * scale;
      }
    return;
  }
  const SUF(rplan) *P = plan;
  const int64_t n = P->n, h = n / 2;
  if (n % 2 == 0 && V == 1 && C->p1 && kind == FFT_R2C && ies == (int64_t)sizeof(R)) {
    SUF(six_run)(C, inb[0], 2 * ies, NULL, NULL, outb[0], oes, 1, buf, nt);
    SUF(untangle_inplace)(outb[0], oes, h, P->wr, P->wi, scale, nt);
    return;
  }
  if (n % 2 == 0 && V == 1 && C->p1 && kind == FFT_C2R && oes == (int64_t)sizeof(R)) {
    SUF(tangle_one)(inb[0], ies, h, P->wr, P->wi, buf, nt);
    SUF(six_run)(C, (const char *)buf, 2 * oes, NULL, NULL, outb[0], 2 * oes, scale, work, nt);
    return;
  }
  if (kind == FFT_R2C) {
    if (n % 2) {
      for (int64_t t = 0; t < n; ++t)
        for (int v = 0; v < V; ++v) { xr[t * V + v] = *(const R *)(inb[v] + t * ies); xi[t * V + v] = 0; }
      SUF(cexec)(C, V, xr, xi, work, &zr, &zi, nt);
      for (int64_t k = 0; k <= h; ++k)
        for (int v = 0; v < V; ++v) {
          R *q = (R *)(outb[v] + k * oes);
          q[0] = zr[k * V + v] * scale; q[1] = zi[k * V + v] * scale;
        }
      return;
    }
    if (V == FFT_LANES && ies == (int64_t)sizeof(R)) {
      /* contiguous real lines: their sample pairs are complex elements */
      SUF(gather8)(inb, 2 * ies, h, xr, xi, pf);
      SUF(cexec)(C, V, xr, xi, work, &zr, &zi, nt);
      SUF(untangle8)(zr, zi, h, P->wr, P->wi, br, bi, scale);
      SUF(scatter8)(br, bi, h + 1, outb, oes, 1, pf);
      return;
    }
    for (int64_t t = 0; t < h; ++t)
      for (int v = 0; v < V; ++v) {
        xr[t * V + v] = *(const R *)(inb[v] + 2 * t * ies);
        xi[t * V + v] = *(const R *)(inb[v] + (2 * t + 1) * ies);
      }
    SUF(cexec)(C, V, xr, xi, work, &zr, &zi, nt);
    const R half = (R)0.5 * scale;
    for (int64_t k = 0; k <= h; ++k) {
      const int64_t a = k == h ? 0 : k, b = k == 0 ? 0 : h - k;
      const R wr = P->wr[k], wi = P->wi[k];
      for (int v = 0; v < V; ++v) {
        const R pr = zr[a * V + v], pi = zi[a * V + v], qr = zr[b * V + v], qi = -zi[b * V + v];
        /* E = (p + q) / 2, O = (p - q) / 2i, X = E + w O */
        const R er = pr + qr, ei = pi + qi, dr = pr - qr, di = pi - qi;
        const R or_ = di, oi = -dr; /* (p - q) / i */
        R *o = (R *)(outb[v] + k * oes);
        o[0] = (er + wr * or_ - wi * oi) * half;
        o[1] = (ei + wr * oi + wi * or_) * half;
      }
    }
    return;
  }
  /* C2R: only the real parts of X[0] (and X[n/2], n even) count, as pocketfft */
  if (n % 2) {
    for (int64_t k = 0; k <= h; ++k)
      for (int v = 0; v < V; ++v) {
        const R *p = (const R *)(inb[v] + k * ies);
        xr[k * V + v] = p[0]; xi[k * V + v] = k ? p[1] : 0;
        if (k) { xr[(n - k) * V + v] = p[0]; xi[(n - k) * V + v] = -p[1]; }
      }
    SUF(cexec)(C, V, xr, xi, work, &zr, &zi, nt);
    for (int64_t t = 0; t < n; ++t)
      for (int v = 0; v < V; ++v) *(R *)(outb[v] + t * oes) = zr[t * V + v] * scale;
    return;
  }
  if (V == FFT_LANES) {
    SUF(gather8)(inb, ies, h + 1, br, bi, pf);
    SUF(tangle8)(br, bi, h, P->wr, P->wi, xr, xi);
    SUF(cexec)(C, V, xr, xi, work, &zr, &zi, nt);
    if (oes == (int64_t)sizeof(R)) {
      SUF(scatter8)(zr, zi, h, outb, 2 * oes, scale, pf);
      return;
    }
    for (int64_t t = 0; t < h; ++t)
      for (int v = 0; v < V; ++v) {
        *(R *)(outb[v] + 2 * t * oes) = zr[t * V + v] * scale;
        *(R *)(outb[v] + (2 * t + 1) * oes) = zi[t * V + v] * scale;
      }
    return;
  }
  for (int64_t k = 0; k <= h; ++k)
    for (int v = 0; v < V; ++v) {
      const R *p = (const R *)(inb[v] + k * ies);
      br[k * V + v] = p[0]; bi[k * V + v] = (k == 0 || k == h) ? 0 : p[1];
    }
  for (int64_t k = 0; k < h; ++k) {
    const R wr = P->wr[k], wi = -P->wi[k]; /* conj(w^k) */
    for (int v = 0; v < V; ++v) {
      const R pr = br[k * V + v], pi = bi[k * V + v];
      const R qr = br[(h - k) * V + v], qi = -bi[(h - k) * V + v];
      const R er = pr + qr, ei = pi + qi, dr = pr - qr, di = pi - qi;
      const R or_ = dr * wr - di * wi, oi = dr * wi + di * wr; /* (p - q) conj(w^k) */
      xr[k * V + v] = er - oi; xi[k * V + v] = ei + or_;       /* E + i O */
    }
  }
  SUF(cexec)(C, V, xr, xi, work, &zr, &zi, nt);
  for (int64_t t = 0; t < h; ++t)
    for (int v = 0; v < V; ++v) {
      *(R *)(outb[v] + 2 * t * oes) = zr[t * V + v] * scale;
      *(R *)(outb[v] + (2 * t + 1) * oes) = zi[t * V + v] * scale;
    }
}

/* ---- one axis: every line of `in` transformed into the line of `out` at the same index ---- */

static void *SUF(plan_make)(int key_kind, int64_t n) {
  switch (key_kind) {
    case 0: return SUF(cplan_new)(n, -1);
    case 1: return SUF(cplan_new)(n, 1);
    default: return SUF(rplan_new)(n, key_kind == 3);
  }
}
static void SUF(plan_free)(int key_kind, void *p) {
  if (key_kind < 2) SUF(cplan_free)(p);
  else SUF(rplan_free)(p);
}

static int SUF(axis)(int kind, int inverse, int64_t n, const fft_lines *in, const fft_lines *out,
                     R scale, pb_kernel_ctx *ctx) {
  const int key_kind = kind == FFT_C2C ? inverse : kind == FFT_R2C ? 2 : 3;
  fft_handle hd = fft_plan_get(FFT_PREC, key_kind, n);
  if (!hd.plan) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory for the plan of length %lld", (long long)n);
  const SUF(cplan) *C = kind == FFT_C2C ? hd.plan : ((const SUF(rplan) *)hd.plan)->c;
  int64_t L = 1;
  for (int d = 0; d < in->nd; ++d) L *= in->shape[d];
  const int threads = pb_kernel_threads(ctx, L * n, FFT_GRAIN);
  /* lanes for short lines (whose lanes stay in cache) with enough of them; threads over lines
   * when there are enough lines, else inside each long line's stages */
  const int64_t eff = C->sub ? C->N : C->n; /* the longest transform run */
  const int V = (L >= FFT_LANES && eff < FFT_SIX) ? FFT_LANES : 1;
  const int64_t groups = V > 1 ? L / V : L;
  const int outer = groups >= 2 * threads ? threads : 1;
  const int inner = outer == 1 && n >= 4 * FFT_GRAIN ? threads : 1;
  const int64_t wsz = SUF(work)(kind, C, V, inner);
  const size_t wbytes = (size_t)wsz * sizeof(R) * (size_t)outer;
  int own;
  R *scratch = fft_ws_take(ctx, wbytes, &own);
  if (!scratch) { fft_plan_release(hd); return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory"); }
  /* the lines left over from the groups of lanes (L mod 8) go one by one after the groups;
   * each thread takes a contiguous run of items, so the group it does next is known and its
   * lines are prefetched (only groups of lanes small enough to stay in cache: FFT_PF_MAX) */
  const int64_t full = V > 1 ? groups * V : L, items = groups + (L - full);
  const int64_t in_bytes = (kind == FFT_C2R ? n / 2 + 1 : n) * in->es;
  const int64_t out_bytes = (kind == FFT_R2C ? n / 2 + 1 : n) * out->es;
  const int pref = V == FFT_LANES && in->es > 0 && out->es > 0 &&
                   8 * (in_bytes + out_bytes) <= FFT_PF_MAX;
  PB_PRAGMA(omp parallel num_threads(outer) if (outer > 1))
  {
    const int tid = outer > 1 ? omp_get_thread_num() : 0;
    R *buf = scratch + wsz * tid;
    const int64_t g0 = items * tid / outer, g1 = items * (tid + 1) / outer;
    for (int64_t g = g0; g < g1; ++g) {
      char *ib[FFT_LANES], *ob[FFT_LANES];
      if (g >= groups) {
        ib[0] = fft_line(in, full + g - groups);
        ob[0] = fft_line(out, full + g - groups);
        SUF(group)(kind, hd.plan, 1, ib, in->es, ob, out->es, scale, buf, 1, NULL);
        continue;
      }
      for (int v = 0; v < V; ++v) {
        ib[v] = fft_line(in, g * V + v);
        ob[v] = fft_line(out, g * V + v);
      }
      fft_next nx, *pf = NULL;
      if (pref && g + 1 < g1 && g + 1 < groups) {
        for (int v = 0; v < V; ++v) {
          nx.in[v] = fft_line(in, (g + 1) * V + v);
          nx.out[v] = fft_line(out, (g + 1) * V + v);
        }
        nx.in_bytes = in_bytes; nx.out_bytes = out_bytes;
        pf = &nx;
      }
      SUF(group)(kind, hd.plan, V, ib, in->es, ob, out->es, scale, buf, inner, pf);
    }
  }
  if (own) fft_ws_give(scratch, wbytes);
  fft_plan_release(hd);
  return 0;
}
