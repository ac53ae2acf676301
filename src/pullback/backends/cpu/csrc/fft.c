/* The FFT kernel (lax.fft): complex FFT/IFFT, real RFFT/IRFFT over the trailing 1-3 axes, in
 * float32 and float64, of any length.
 *
 * A length n is factored into radices 4, 2, 3, 5, 7 and generic odd primes, run as FFTPACK-style
 * self-sorting stages with precomputed twiddles (fft_impl.h); a length whose large prime factor
 * makes that dearer than a convolution of a smooth length >= 2n - 1 runs as Bluestein's
 * algorithm instead (the cost model of fft_choose). Real transforms go through a complex
 * transform of half the length. An n-d transform is one axis after the other, each axis's
 * lines gathered FFT_LANES at a time into split-complex lanes so butterflies vectorise across
 * lines, groups of lines spread over threads (or, for a few long lines, each stage's butterflies).
 * Plans are cached per (precision, kind, length) behind a mutex: kernels run without the GIL,
 * possibly from several threads. See docs/fft.md. */
#include "kernel_abi.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_thread_num(void) { return 0; }
#endif

#ifdef _OPENMP
#define PB_PRAGMA(x) _Pragma(#x)
#else
#define PB_PRAGMA(x)
#endif

#define FFT_LANES 8        /* lines transformed together */
#define FFT_GRAIN 16384    /* elements per thread worth splitting for */
#define FFT_CACHE 64       /* plans kept */
#define FFT_SIX 32768      /* direct lengths from which the six-step split is used */
#define FFT_PF_MAX (256 << 10) /* bytes of a group of lanes (in and out) worth prefetching */
#define FFT_DMAX 4096       /* lane lines up to this long have their planes a constant apart */
#define FFT_SIXW 4         /* six-step groups of lanes moved together (4 x 8 columns) */

/* ---- factoring and the Bluestein cost model ---- */

static int64_t fft_largest_prime(int64_t n) {
  int64_t best = 1;
  for (int64_t p = 2; p * p <= n; p += (p == 2 ? 1 : 2))
    while (n % p == 0) { best = p; n /= p; }
  return n > 1 ? n : best;
}

/* n's radices: 4s, a 2, then odd primes ascending */
static int fft_factor(int64_t n, int *f) {
  int nf = 0;
  while (n % 4 == 0) { f[nf++] = 4; n /= 4; }
  if (n % 2 == 0) { f[nf++] = 2; n /= 2; }
  for (int64_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) { f[nf++] = (int)p; n /= p; }
  if (n > 1) f[nf++] = (int)n;
  return nf;
}

/* A plan's radices: fft_factor's 4s and 2 (2^k) regrouped into 8s (fewer passes over the data),
 * 2^k = 8^(k/3) times 16 (k = 1 mod 3, k > 1: one pass where 4 4 or 8 2 took two), times
 * 16 16 in place of 8 8 4 (k = 2 mod 3, k > 5: 256 in two passes, not three), else times 4
 * or 2. */
static void fft_radix8(int *f, int *nf) {
  int k = 0, j = 0;
  for (int i = 0; i < *nf; ++i) k += f[i] == 4 ? 2 : f[i] == 2 ? 1 : 0;
  int g[64], ng = 0;
  int e = k / 3, r = k % 3, sixteens = 0;
  if (r == 1 && e > 0) { e -= 1; r = 0; sixteens = 1; }      /* 8 2 -> 16 */
  else if (r == 2 && e >= 2) { e -= 2; r = 0; sixteens = 2; } /* 8 8 4 -> 16 16 */
  for (int i = 0; i < e; ++i) g[ng++] = 8;
  for (int i = 0; i < sixteens; ++i) g[ng++] = 16;
  if (r == 2) g[ng++] = 4;
  else if (r == 1) g[ng++] = 2;
  for (int i = 0; i < *nf; ++i)
    if (f[i] != 4 && f[i] != 2) g[ng++] = f[i];
  for (j = 0; j < ng; ++j) f[j] = g[j];
  *nf = ng;
}

/* Operations per element of a direct transform: about the radix for radices with their own
 * butterflies, a bit more for generic odd ones (O(p) work per element, no specialised code). */
static double fft_cost(int64_t n) {
  int f[64];
  const int nf = fft_factor(n, f);
  double c = 0;
  for (int i = 0; i < nf; ++i) c += f[i] <= 7 ? f[i] : 1.1 * f[i];
  return c * (double)n;
}

/* The smallest 2^a 3^b 5^c 7^d >= n */
static int64_t fft_good_size(int64_t n) {
  int64_t best = INT64_MAX;
  for (int64_t a = 1; a < 2 * n; a *= 2)
    for (int64_t b = a; b < 2 * n; b *= 3)
      for (int64_t c = b; c < 2 * n; c *= 5)
        for (int64_t d = c; d < 2 * n; d *= 7)
          if (d >= n && d < best) best = d;
  return best;
}

/* 0 and n's radices for a direct plan, or the convolution length for Bluestein, chosen where
 * its cost (two transforms of N and the chirp products, weighed 1.5x as pocketfft) is lower. */
static int64_t fft_choose(int64_t n, int *f, int *nf) {
  *nf = fft_factor(n, f);
  if (n < 50) return 0;
  const int64_t lpf = fft_largest_prime(n);
  if ((double)lpf * (double)lpf <= (double)n) return 0;
  const int64_t N = fft_good_size(2 * n - 1);
  const double blue = 1.5 * (2 * fft_cost(N) + 6.0 * (double)N);
  return blue < fft_cost(n) ? N : 0;
}

enum { FFT_C2C, FFT_R2C, FFT_C2R };

/* The lines of the group a thread transforms next, prefetched while it moves the current
 * group's: 8 separate short lines are 8 streams too short for the hardware prefetcher to learn,
 * and the next group's loads and stores then wait on memory (see docs/fft.md). */
typedef struct {
  const char *in[8], *out[8];
  int64_t in_bytes, out_bytes; /* per line; 0: nothing to prefetch */
} fft_next;

/* A walk over the cache lines of 8 lines of `bytes` each, in order, `step` of them per
 * fft_prefetch: a call per iteration of a gather or scatter loop spreads them over it. They
 * are fetched into L2 (locality 2), not L1, which a group's lanes fill (see docs/fft.md). */
typedef struct {
  const char *const *line;
  int64_t bytes, o;
  int v, step;
} fft_pwalk;

static inline fft_pwalk fft_pwalk_new(const char *const *line, int64_t bytes, int64_t calls) {
  const int64_t tot = 8 * ((bytes + 63) / 64), c = calls > 0 ? calls : 1;
  const fft_pwalk w = {line, bytes, 0, 0, (int)((tot + c - 1) / c)};
  return w;
}

static inline void fft_prefetch(fft_pwalk *w, int write) {
  for (int j = 0; j < w->step && w->v < 8; ++j) {
    const char *p = w->line[w->v] + w->o;
    if (write) __builtin_prefetch(p, 1, 2);
    else __builtin_prefetch(p, 0, 2);
    w->o += 64;
    if (w->o >= w->bytes) { w->o = 0; ++w->v; }
  }
}

/* ---- lines of an axis ---- */

typedef struct {
  char *base;
  int64_t es;   /* byte stride along the line */
  int nd;       /* the other axes: which line */
  int64_t shape[PB_KERNEL_MAXDIMS], st[PB_KERNEL_MAXDIMS];
} fft_lines;

static inline char *fft_line(const fft_lines *s, int64_t l) {
  char *p = s->base;
  for (int d = s->nd - 1; d >= 0; --d) {
    const int64_t q = l / s->shape[d];
    p += (l - q * s->shape[d]) * s->st[d];
    l = q;
  }
  return p;
}

/* the lines along `axis` of an array with these shape and strides */
static void fft_lines_of(fft_lines *s, char *base, int ndim, const int64_t *shape,
                         const int64_t *strides, int axis) {
  s->base = base; s->es = strides[axis]; s->nd = 0;
  for (int d = 0; d < ndim; ++d)
    if (d != axis) { s->shape[s->nd] = shape[d]; s->st[s->nd] = strides[d]; s->nd++; }
}

/* ---- the plan cache ---- */

typedef struct { int prec, kind; int64_t n; void *plan; int refs; uint64_t used; } fft_entry;
typedef struct { void *plan; int slot, prec, kind; } fft_handle;

static pthread_mutex_t fft_lock = PTHREAD_MUTEX_INITIALIZER;
static fft_entry fft_cache[FFT_CACHE];
static uint64_t fft_clock;

static void *fft_make(int prec, int kind, int64_t n);
static void fft_free(int prec, int kind, void *plan);

static fft_handle fft_plan_get(int prec, int kind, int64_t n) {
  fft_handle h = {NULL, -1, prec, kind};
  pthread_mutex_lock(&fft_lock);
  for (int i = 0; i < FFT_CACHE; ++i) {
    fft_entry *e = &fft_cache[i];
    if (e->plan && e->prec == prec && e->kind == kind && e->n == n) {
      e->refs++; e->used = ++fft_clock;
      h.plan = e->plan; h.slot = i;
      pthread_mutex_unlock(&fft_lock);
      return h;
    }
  }
  pthread_mutex_unlock(&fft_lock);
  void *plan = fft_make(prec, kind, n); /* outside the lock: a long plan does not block others */
  if (!plan) return h;
  h.plan = plan;
  pthread_mutex_lock(&fft_lock);
  int victim = -1;
  for (int i = 0; i < FFT_CACHE; ++i) {
    fft_entry *e = &fft_cache[i];
    if (!e->plan) { victim = i; break; }
    if (e->refs == 0 && (victim < 0 || e->used < fft_cache[victim].used)) victim = i;
  }
  if (victim >= 0) {
    fft_entry *e = &fft_cache[victim];
    if (e->plan) fft_free(e->prec, e->kind, e->plan);
    *e = (fft_entry){prec, kind, n, plan, 1, ++fft_clock};
    h.slot = victim;
  }
  pthread_mutex_unlock(&fft_lock);
  return h;
}

static void fft_plan_release(fft_handle h) {
  if (h.slot < 0) { fft_free(h.prec, h.kind, h.plan); return; }
  pthread_mutex_lock(&fft_lock);
  fft_cache[h.slot].refs--;
  pthread_mutex_unlock(&fft_lock);
}

/* ---- a kept workspace for long transforms ----
 * A workspace of tens of MB (Bluestein of 10^6 in float64: 4N doubles, 64 MB) is mapped fresh
 * by every call and each page faults in and is zeroed: perf put about 15% of such a call in the
 * page faults, and two threads faulting contend in the kernel. So one large block is kept
 * between calls (taken by one call at a time; a concurrent call allocates its own). */

#define FFT_WS_MIN ((size_t)4 << 20)    /* smaller workspaces come from ctx->scratch */
#define FFT_WS_MAX ((size_t)128 << 20)  /* larger ones are not kept (freed after the call) */

static pthread_mutex_t fft_ws_lock = PTHREAD_MUTEX_INITIALIZER;
static void *fft_ws;
static size_t fft_ws_size;

/* bytes of workspace: the kept block if it is large enough, else a new one (*own 1: give it
 * back with fft_ws_give) or, for small ones, the call's scratch (*own 0) */
static void *fft_ws_take(pb_kernel_ctx *ctx, size_t bytes, int *own) {
  *own = 0;
  if (bytes < FFT_WS_MIN) return ctx->scratch(ctx, bytes);
  pthread_mutex_lock(&fft_ws_lock);
  void *p = NULL;
  if (fft_ws && fft_ws_size >= bytes) { p = fft_ws; fft_ws = NULL; }
  pthread_mutex_unlock(&fft_ws_lock);
  if (!p) p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  *own = p != NULL;
  return p;
}

/* keeps the larger of the block and the kept one, frees the other */
static void fft_ws_give(void *p, size_t bytes) {
  if (bytes > FFT_WS_MAX) { free(p); return; }
  pthread_mutex_lock(&fft_ws_lock);
  if (!fft_ws || fft_ws_size < bytes) {
    void *old = fft_ws;
    fft_ws = p; fft_ws_size = bytes; p = old;
  }
  pthread_mutex_unlock(&fft_ws_lock);
  free(p);
}

/* ---- the transforms, per precision ---- */

#define R float
#define RI int32_t
#define SUF(x) x##_f32
#define FFT_PREC 0
#include "fft_impl.h"
#undef R
#undef RI
#undef SUF
#undef FFT_PREC
#define R double
#define RI int64_t
#define SUF(x) x##_f64
#define FFT_PREC 1
#include "fft_impl.h"
#undef R
#undef RI
#undef SUF
#undef FFT_PREC

static void *fft_make(int prec, int kind, int64_t n) {
  return prec ? plan_make_f64(kind, n) : plan_make_f32(kind, n);
}
static void fft_free(int prec, int kind, void *plan) {
  if (prec) plan_free_f64(kind, plan);
  else plan_free_f32(kind, plan);
}

static int fft_axis(int prec, int kind, int inverse, int64_t n, const fft_lines *in,
                    const fft_lines *out, double scale, pb_kernel_ctx *ctx) {
  return prec ? axis_f64(kind, inverse, n, in, out, scale, ctx)
              : axis_f32(kind, inverse, n, in, out, (float)scale, ctx);
}

/* ---- the kernel ---- */

/* fft_type: lax.FftType's value (0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT); n: the lengths of the last
 * `rank` axes (of the complex side's full length for RFFT/IRFFT). */
typedef struct { int64_t n[3]; int32_t fft_type, rank; } fft_params;

static int fft_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                      const void *params, pb_kernel_ctx *ctx) {
  const fft_params *P = params;
  const pb_operand *x = &ins[0], *y = &outs[0];
  const int type = P->fft_type, r = P->rank, D = x->ndim;
  if (type < 0 || type > 3 || r < 1 || r > 3 || D < r || y->ndim != D)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "bad fft_type %d or rank %d for %d dims", type, r, D);
  const int xc = type != 2, yc = type != 3;
  const int prec = (x->dtype == PB_F64 || x->dtype == PB_C128);
  const int want_x = xc ? (prec ? PB_C128 : PB_C64) : (prec ? PB_F64 : PB_F32);
  const int want_y = yc ? (prec ? PB_C128 : PB_C64) : (prec ? PB_F64 : PB_F32);
  if (x->dtype != want_x || y->dtype != want_y)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operand dtypes do not fit fft_type %d", type);
  for (int d = 0; d < D; ++d) {
    int64_t want = y->shape[d];
    if (d >= D - r) {
      const int64_t n = P->n[d - (D - r)];
      if (n < 0) return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "fft length %lld < 0", (long long)n);
      const int last = d == D - 1;
      const int64_t nx = (type == 3 && last) ? n / 2 + 1 : n, ny = (type == 2 && last) ? n / 2 + 1 : n;
      if (x->shape[d] != nx || y->shape[d] != ny)
        return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operand shapes do not fit the fft lengths");
    } else if (x->shape[d] != want) {
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "batch dimensions differ");
    }
  }
  if (pb_operand_size(y) == 0) return 0;
  for (int i = 0; i < r; ++i)
    if (P->n[i] < 1 || (type == 2 && pb_operand_size(x) == 0))
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "an empty transform with a non-empty output");
  const int inverse = type == 1 || type == 3;
  fft_lines li, lo;
  int rc;
  if (type != 3) {
    /* the last axis from x into y, then the other axes in place in y */
    const int64_t n = P->n[r - 1];
    fft_lines_of(&li, x->data, D, x->shape, x->strides, D - 1);
    fft_lines_of(&lo, y->data, D, y->shape, y->strides, D - 1);
    rc = fft_axis(prec, type == 2 ? FFT_R2C : FFT_C2C, inverse, n, &li, &lo,
                  inverse ? 1.0 / (double)n : 1.0, ctx);
    for (int a = D - 2; rc == 0 && a >= D - r; --a) {
      const int64_t m = P->n[a - (D - r)];
      fft_lines_of(&lo, y->data, D, y->shape, y->strides, a);
      rc = fft_axis(prec, FFT_C2C, inverse, m, &lo, &lo, inverse ? 1.0 / (double)m : 1.0, ctx);
    }
    return rc;
  }
  /* IRFFT: the other axes first (into a complex scratch copy when there are any), then the
   * last axis complex-to-real */
  const pb_operand *src = x;
  pb_operand tmp;
  int64_t tst[PB_KERNEL_MAXDIMS];
  if (r > 1) {
    const int64_t item = x->itemsize;
    int64_t s = item;
    for (int d = D - 1; d >= 0; --d) { tst[d] = s; s *= x->shape[d]; }
    int own;
    char *buf = fft_ws_take(ctx, (size_t)s, &own);
    if (!buf) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
    tmp = *x; tmp.data = buf; tmp.strides = tst;
    for (int a = D - 2; a >= D - r; --a) {
      const int64_t m = P->n[a - (D - r)];
      const pb_operand *from = a == D - 2 ? x : &tmp;
      fft_lines_of(&li, from->data, D, from->shape, from->strides, a);
      fft_lines_of(&lo, tmp.data, D, tmp.shape, tmp.strides, a);
      rc = fft_axis(prec, FFT_C2C, 1, m, &li, &lo, 1.0 / (double)m, ctx);
      if (rc) break;
    }
    src = &tmp;
    if (rc == 0) {
      const int64_t n = P->n[r - 1];
      fft_lines_of(&li, src->data, D, src->shape, src->strides, D - 1);
      fft_lines_of(&lo, y->data, D, y->shape, y->strides, D - 1);
      rc = fft_axis(prec, FFT_C2R, 1, n, &li, &lo, 1.0 / (double)n, ctx);
    }
    if (own) fft_ws_give(buf, (size_t)s);
    return rc;
  }
  const int64_t n = P->n[r - 1];
  fft_lines_of(&li, src->data, D, src->shape, src->strides, D - 1);
  fft_lines_of(&lo, y->data, D, y->shape, y->strides, D - 1);
  return fft_axis(prec, FFT_C2R, 1, n, &li, &lo, 1.0 / (double)n, ctx);
}

static const pb_kernel_def kernels[] = {
  {"fft", fft_kernel, 1, 1, sizeof(fft_params)},
};
PB_KERNELS(kernels)
