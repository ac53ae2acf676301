/* The own float32 matrix product for CPUs with AVX-512: C (M, N) (+)= A (M, K) @ B (K, N).
 *
 * It beats single-threaded OpenBLAS 0.3.30 on the products a training step is made of (an MLP's
 * 128x784 @ 784x512 and its transposed gradient products: 1.43 ms against 1.89 ms for the five
 * of them, two threads each taking half the columns), because it packs less: A is read in place
 * when its rows are contiguous, and only when they are not is a strip of it copied.
 *
 * Layout: the micro-kernel holds an MR x 32 tile of C in 28 registers (MR rows, two 16-float
 * vectors each); per k it loads 32 floats of a packed B panel and broadcasts MR values of A, 28
 * fused multiply-adds. B is packed per (KC x NC) block into 32-wide k-major panels (zero padded
 * at the right edge, whose columns are stored under a mask); A's row strips are as even as MR
 * allows (128 rows: ten strips of 12 or 13), so no strip runs mostly empty.
 *
 * Order of the sums: every element sums its K products in k order with fused multiply-adds,
 * within blocks of K whose bounds depend on K alone (nk equal parts of at most KC), each block's
 * sum added to C in turn. So a product cut into row or column chunks (the executor's threads)
 * gives the same bits as the whole, eager and jit alike, and so does one whose strips of rows
 * the threads take as they come (opts->claim: each strip's passes over the blocks still in
 * order). */
#include "pb.h"
#include "gemm.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if PB_HAVE_AVX512
#include "avx512_regs.h"

#define MR 14
#define NR 32
#define KC 512
#define NC 512

/* A packed strip or A in place: a(i, k) = a[i * rs + k] (rows) or a[k * MR' + i] (packed, m
 * wide). Row pointers are four bases plus multiples of the stride, so the loop needs few
 * registers. */
static inline __attribute__((always_inline)) PB_AVX512 void kernel(
    const int m, const int rows, npy_intp kc, const float *a, npy_intp rs, const float *bp,
    float *c, npy_intp ldc, __mmask16 m0, __mmask16 m1, int acc) {
  /* the loops over rows fully unrolled: left to itself GCC keeps the tile in registers inside
   * the k loop but zeroes and spills it through the stack around it, ~3% of a 128-deep call */
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 14
  for (int i = 0; i < m; ++i) c0[i] = c1[i] = _mm512_setzero_ps();
  const float *p0 = a, *p4 = a + 4 * rs, *p8 = a + 8 * rs, *p12 = a + 12 * rs;
  const npy_intp r3 = 3 * rs;
  for (npy_intp k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
    _mm_prefetch((const char *)(bp + 8 * NR), _MM_HINT_T0);
    _mm_prefetch((const char *)(bp + 8 * NR + 16), _MM_HINT_T0);
#pragma GCC unroll 14
    for (int i = 0; i < m; ++i) {
      float v;
      if (rows) {
        const float *q = i < 4 ? p0 : i < 8 ? p4 : i < 12 ? p8 : p12;
        const int r = i & 3;
        v = r == 0 ? q[0] : r == 1 ? q[rs] : r == 2 ? q[2 * rs] : q[r3];
      } else {
        v = a[i];
      }
      const __m512 av = _mm512_set1_ps(v);
      c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
    }
    if (rows) { ++p0; ++p4; ++p8; ++p12; } else { a += m; }
    bp += NR;
  }
#pragma GCC unroll 14
  for (int i = 0; i < m; ++i) {
    float *r = c + i * ldc;
    if (acc) {
      c0[i] = _mm512_add_ps(c0[i], _mm512_maskz_loadu_ps(m0, r));
      c1[i] = _mm512_add_ps(c1[i], _mm512_maskz_loadu_ps(m1, r + 16));
    }
    _mm512_mask_storeu_ps(r, m0, c0[i]);
    _mm512_mask_storeu_ps(r + 16, m1, c1[i]);
  }
}

typedef void (*kernel_fn)(npy_intp, const float *, npy_intp, const float *, float *, npy_intp,
                          __mmask16, __mmask16, int);
/* one compiled kernel per strip height and A layout */
#define KERNELS(m)                                                                                \
  static PB_AVX512 void rows_##m(npy_intp kc, const float *a, npy_intp rs, const float *bp,       \
                                 float *c, npy_intp ldc, __mmask16 m0, __mmask16 m1, int acc) {   \
    kernel(m, 1, kc, a, rs, bp, c, ldc, m0, m1, acc);                                             \
  }                                                                                               \
  static PB_AVX512 void packed_##m(npy_intp kc, const float *a, npy_intp rs, const float *bp,     \
                                   float *c, npy_intp ldc, __mmask16 m0, __mmask16 m1, int acc) { \
    kernel(m, 0, kc, a, 1, bp, c, ldc, m0, m1, acc);                                              \
  }
KERNELS(1) KERNELS(2) KERNELS(3) KERNELS(4) KERNELS(5) KERNELS(6) KERNELS(7)
KERNELS(8) KERNELS(9) KERNELS(10) KERNELS(11) KERNELS(12) KERNELS(13) KERNELS(14)
static const kernel_fn rows_kernels[MR + 1] = {
    NULL, rows_1, rows_2, rows_3, rows_4, rows_5, rows_6, rows_7,
    rows_8, rows_9, rows_10, rows_11, rows_12, rows_13, rows_14};
static const kernel_fn packed_kernels[MR + 1] = {
    NULL, packed_1, packed_2, packed_3, packed_4, packed_5, packed_6, packed_7,
    packed_8, packed_9, packed_10, packed_11, packed_12, packed_13, packed_14};

/* B (k, j) = b[k * rs + j * cs] (strides in floats), k < kc, j < n: NR-wide k-major panels */
static PB_AVX512 void pack_b(npy_intp kc, npy_intp n, const float *b, npy_intp rs, npy_intp cs,
                             float *bp) {
  if (cs == 1) {
    /* rows of B contiguous: read row by row, each row's 32-float pieces to their panels. Row
     * after row is one forward stream the prefetchers follow; panel by panel, the reads would
     * jump a row's stride every 128 bytes (measured on two threads: 128x784 @ 784x512 9-36 us
     * faster of ~450, 128x512 @ 512x512 9-31 us of ~300) */
    const npy_intp full = n / NR * NR;
    for (npy_intp k = 0; k < kc; ++k) {
      const float *s = b + k * rs;
      float *d = bp + k * NR;
      npy_intp j = 0;
      for (; j < full; j += NR, d += kc * NR) {
        _mm512_store_ps(d, _mm512_loadu_ps(s + j));
        _mm512_store_ps(d + 16, _mm512_loadu_ps(s + j + 16));
      }
      if (j < n) { /* the last panel, zero padded */
        _mm512_store_ps(d, _mm512_maskz_loadu_ps(pb_lanes16(n - j), s + j));
        _mm512_store_ps(d + 16, _mm512_maskz_loadu_ps(pb_lanes16(n - j - 16), s + j + 16));
      }
    }
    return;
  }
  for (npy_intp j = 0; j < n; j += NR, bp += kc * NR) {
    const npy_intp w = n - j < NR ? n - j : NR;
    npy_intp k = 0;
    if (rs == 1 && w == NR) /* columns contiguous (B transposed): 16x16 blocks transposed */
      for (; k + 16 <= kc; k += 16)
        for (int h = 0; h < 2; ++h) {
          __m512 r[16];
          for (int t = 0; t < 16; ++t) r[t] = _mm512_loadu_ps(b + (j + h * 16 + t) * cs + k);
          pb_transpose16(r);
          for (int q = 0; q < 16; ++q) _mm512_store_ps(bp + (k + q) * NR + h * 16, r[q]);
        }
    for (; k < kc; ++k)
      for (npy_intp t = 0; t < NR; ++t) bp[k * NR + t] = t < w ? b[k * rs + (j + t) * cs] : 0.f;
  }
}

/* A (i, k) = a[i * rs + k * cs] (floats), i < m <= MR, k < kc: k-major, m wide */
static PB_AVX512 void pack_a(npy_intp m, npy_intp kc, const float *a, npy_intp rs, npy_intp cs,
                             float *ap) {
  if (rs == 1) { /* A transposed: its m values at each k are contiguous */
    const __mmask16 mk = pb_lanes16(m);
    for (npy_intp k = 0; k < kc; ++k)
      _mm512_mask_storeu_ps(ap + k * m, mk, _mm512_maskz_loadu_ps(mk, a + k * cs));
    return;
  }
  npy_intp k = 0;
  if (cs == 1) { /* rows contiguous: 16 columns of the strip at a time, transposed */
    const __mmask16 mk = pb_lanes16(m);
    for (; k + 16 <= kc; k += 16) {
      __m512 r[16];
      for (int t = 0; t < 16; ++t) r[t] = t < m ? _mm512_loadu_ps(a + t * rs + k) : _mm512_setzero_ps();
      pb_transpose16(r);
      for (int q = 0; q < 16; ++q) _mm512_mask_storeu_ps(ap + (k + q) * m, mk, r[q]);
    }
  }
  for (; k < kc; ++k)
    for (npy_intp i = 0; i < m; ++i) ap[k * m + i] = a[i * rs + k * cs];
}

/* Each thread's packing space, kept for the thread's life (a fresh megabyte per product would
 * fault its pages in every time) and freed when the thread ends. */
static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static void buf_free(void *p) { free(p); }
static void buf_init(void) { (void)pthread_key_create(&buf_key, buf_free); }
#define BUF_FLOATS ((npy_intp)KC * (NC + NR) + (npy_intp)KC * MR + (npy_intp)MR * NC)

static float *thread_buf(void) {
  pthread_once(&buf_once, buf_init);
  float *p = pthread_getspecific(buf_key);
  if (!p) {
    p = aligned_alloc(64, (size_t)BUF_FLOATS * sizeof(float));
    if (p && pthread_setspecific(buf_key, p)) { free(p); p = NULL; }
  }
  return p;
}

/* what this thread's packing space holds: block (p, j0) of product `product` (0: nothing) */
typedef struct { uint64_t product; npy_intp p, j0; } packed_b;
static _Thread_local packed_b packed;

static inline void relax(void) { __builtin_ia32_pause(); } /* a spin-wait's iteration */

/* rows [i0, i0 + m) of C's block (p, j0) (c points at its row i0, column j0): one kernel call
 * per 32-column panel of the packed block bp, A's rows read in place or, when they are not
 * contiguous, through a packed copy in ap */
static PB_AVX512 void strip_pass(npy_intp m, npy_intp kc, npy_intp nc, const float *a, npy_intp ars,
                                 npy_intp acs, const float *bp, float *ap, float *c, npy_intp ldc,
                                 int acc) {
  npy_intp rs = ars;
  kernel_fn f = rows_kernels[m];
  /* rows not contiguous, or a multiple of 4 KiB apart: every row's element k then falls in
   * the same L1 set, more rows than the cache has ways (1024-float rows: 80 against 104
   * GFLOP/s on one core at 1024^3, where 1000-float rows run at full speed): copy the strip */
  if (acs != 1 || ars % 1024 == 0) {
    pack_a(m, kc, a, ars, acs, ap);
    a = ap;
    rs = 1;
    f = packed_kernels[m];
  }
  for (npy_intp j = 0; j < nc; j += NR)
    f(kc, a, rs, bp + j * kc, c + j, ldc, pb_lanes16(nc - j), pb_lanes16(nc - j - 16), acc);
}

/* blocks of B packed so far, all threads (tests check that a block is packed once per call
 * or per thread, not once per strip of rows) */
static _Atomic uint64_t blocks_packed;

/* B's block (p, j0) of product `product` packed in bp, unless this thread's bp holds it
 * already (an earlier strip of this call, or of another call on the same product) */
static PB_AVX512 void pack_block(uint64_t product, npy_intp p, npy_intp j0, npy_intp kc,
                                 npy_intp nc, const float *b, npy_intp brs, npy_intp bcs,
                                 float *bp) {
  if (packed.product == product && packed.p == p && packed.j0 == j0) return;
  pack_b(kc, nc, b + p * brs + j0 * bcs, brs, bcs, bp);
  atomic_fetch_add_explicit(&blocks_packed, 1, memory_order_relaxed);
  packed = (packed_b){product, p, j0};
}

/* strips of rows, and passes over each (one per (column block, K block) of B): the tasks of
 * a product, as sgemm runs them and as pb_sgemm_claim_tasks counts them */
static inline npy_intp strips_of(npy_intp M) { return (M + MR - 1) / MR; }
static inline npy_intp k_blocks(npy_intp K) { return (K + KC - 1) / KC; }
static inline npy_intp passes_per_strip(npy_intp N, npy_intp K) {
  return (N + NC - 1) / NC * k_blocks(K);
}

static PB_AVX512 int sgemm(npy_intp M, npy_intp N, npy_intp K, const float *a, npy_intp ars,
                           npy_intp acs, const float *b, npy_intp brs, npy_intp bcs, float *c,
                           npy_intp ldc, int acc, const pb_sgemm_opts *o) {
  float *buf = thread_buf();
  if (!buf) return -1;
  float *bp = buf, *ap = buf + (npy_intp)KC * (NC + NR), *sc = ap + (npy_intp)KC * MR;
  const npy_intp strips = strips_of(M), nk = k_blocks(K);
  const pb_rows_done_fn done = o ? o->done : NULL;
  /* one pass makes each strip final: when nothing but done reads it, it need not leave this
   * core's cache (a scratch strip, rows ldc apart as in c) */
  const bool strip = done && o->unread && !acc && nk == 1 && N <= NC && ldc <= NC;
  /* passes over strips, (column block, K block) major: all of them in turn, or those this
   * thread takes from the shared counter (o->claim) */
  const npy_intp per = passes_per_strip(N, K);
  /* a call on a product without an id is a product of its own */
  const uint64_t product = o && o->product ? o->product : pb_sgemm_product_id();
  npy_intp next = 0;
  for (npy_intp q; (q = o && o->claim ? atomic_fetch_add(o->claim, 1) : next++) < per * strips;) {
    const npy_intp pass = q / strips, s = q % strips, j0 = pass / nk * NC, kb = pass % nk;
    const npy_intp nc = N - j0 < NC ? N - j0 : NC, p = K * kb / nk, kc = K * (kb + 1) / nk - p;
    const npy_intp i0 = M * s / strips, m = M * (s + 1) / strips - i0;
    /* a taken pass waits for the strip's earlier ones (taken before it: running or done) */
    if (o && o->passes && pass > 0)
      while (atomic_load_explicit(&o->passes[s], memory_order_acquire) < pass) relax();
    pack_block(product, p, j0, kc, nc, b, brs, bcs, bp);
    float *cr = strip ? sc : c + i0 * ldc + j0;
    strip_pass(m, kc, nc, a + i0 * ars + p * acs, ars, acs, bp, ap, cr, ldc, acc || kb > 0);
    /* the strip's last pass: its rows are final, and still in this core's cache */
    if (done && pass == per - 1)
      done(o->ctx, i0, i0 + m, (const char *)(strip ? sc : c + i0 * ldc));
    if (o && o->passes) atomic_store_explicit(&o->passes[s], pass + 1, memory_order_release);
  }
  return 0;
}
#endif

/* one id per product, so that a thread never takes its packed block of B for another
 * product's (the same address may hold other values by then) */
static _Atomic uint64_t last_product;

uint64_t pb_sgemm_product_id(void) { return atomic_fetch_add(&last_product, 1) + 1; }

npy_intp pb_sgemm_claim_tasks(npy_intp M, npy_intp N, npy_intp K, npy_intp *counters) {
#if PB_HAVE_AVX512
  const npy_intp strips = strips_of(M), per = passes_per_strip(N, K);
  *counters = per > 1 ? strips : 0;
  return strips * per;
#else
  (void)M; (void)N; (void)K;
  *counters = 0;
  return 0;
#endif
}

uint64_t pb_sgemm_blocks_packed(void) {
#if PB_HAVE_AVX512
  return atomic_load(&blocks_packed);
#else
  return 0;
#endif
}

static bool own_enabled = true;

bool pb_sgemm_set_enabled(bool on) {
  const bool old = own_enabled;
  own_enabled = on;
  return old;
}

bool pb_sgemm_takes(npy_intp M, npy_intp N, npy_intp K, const char *a, const npy_intp *as,
                    const char *b, const npy_intp *bs, const char *c, const npy_intp *cs) {
#if PB_HAVE_AVX512
  /* where it was measured to win: not below a million multiply-adds, nor under 64 columns
   * (a 10-column product would run in one third-full panel) */
  if (!own_enabled || !pb_avx512_usable() || N < 64 || (double)M * (double)N * (double)K < 1048576.0)
    return false;
  if (cs[2] != 4 || cs[1] % 4 || ((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) % 4) return false;
  for (int i = 1; i < 3; ++i)
    if (as[i] % 4 || bs[i] % 4) return false;
  return true;
#else
  (void)M; (void)N; (void)K; (void)a; (void)as; (void)b; (void)bs; (void)c; (void)cs;
  return false;
#endif
}

int pb_sgemm(npy_intp M, npy_intp N, npy_intp K, const char *a, const npy_intp *as, const char *b,
             const npy_intp *bs, char *c, const npy_intp *cs, int acc, const pb_sgemm_opts *o) {
#if PB_HAVE_AVX512
  if (M <= 0 || N <= 0) return 0;
  if (K <= 0) {
    if (o && o->claim && atomic_fetch_add(o->claim, 1) > 0) return 0; /* another thread's */
    for (npy_intp r = 0; r < M && !acc; ++r) memset(c + r * cs[1], 0, (size_t)N * 4);
    if (o && o->done) o->done(o->ctx, 0, M, c);
    return 0;
  }
  return sgemm(M, N, K, (const float *)a, as[1] / 4, as[2] / 4, (const float *)b, bs[1] / 4,
               bs[2] / 4, (float *)c, cs[1] / 4, acc, o);
#else
  return -1;
#endif
}
