/* attention.c's float32 tile products on AVX-512: register-blocked scores (8 x 32), products
 * accumulated into 4 x 64 blocks, and keys transposed through 16 x 16 register blocks. Included by
 * attention.c only (it defines the kernel ABI types and PB_AVX512 before). */
#ifndef PB_ATTENTION_TILES_H
#define PB_ATTENTION_TILES_H

/* (the generic loops of attention.c are the float64 and non-AVX-512 path) */
#if PB_HAVE_AVX512
#include "avx512_regs.h"
/* c (m x n, ldc) = a (m x H) @ bt (H x n, ldb): 8 rows x 32 columns of c in registers */
static PB_AVX512 void nt_avx512(int64_t m, int64_t n, int64_t H, const float *a,
                                const float *bt, int64_t ldb, float *c, int64_t ldc) {
  for (int64_t j = 0; j < n; j += 32) {
    const __mmask16 k0 = pb_lanes16(n - j), k1 = pb_lanes16(n - j - 16);
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
      __m512 x[8], y[8];
#pragma GCC unroll 8
      for (int r = 0; r < 8; ++r) x[r] = y[r] = _mm512_setzero_ps();
      const float *ar = a + i * H;
      for (int64_t h = 0; h < H; ++h) {
        const __m512 b0 = _mm512_maskz_loadu_ps(k0, bt + h * ldb + j);
        const __m512 b1 = _mm512_maskz_loadu_ps(k1, bt + h * ldb + j + 16);
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) {
          const __m512 s = _mm512_set1_ps(ar[r * H + h]);
          x[r] = _mm512_fmadd_ps(s, b0, x[r]);
          y[r] = _mm512_fmadd_ps(s, b1, y[r]);
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < 8; ++r) {
        _mm512_mask_storeu_ps(c + (i + r) * ldc + j, k0, x[r]);
        _mm512_mask_storeu_ps(c + (i + r) * ldc + j + 16, k1, y[r]);
      }
    }
    for (; i < m; ++i) {
      __m512 x = _mm512_setzero_ps(), y = _mm512_setzero_ps();
      for (int64_t h = 0; h < H; ++h) {
        const __m512 s = _mm512_set1_ps(a[i * H + h]);
        x = _mm512_fmadd_ps(s, _mm512_maskz_loadu_ps(k0, bt + h * ldb + j), x);
        y = _mm512_fmadd_ps(s, _mm512_maskz_loadu_ps(k1, bt + h * ldb + j + 16), y);
      }
      _mm512_mask_storeu_ps(c + i * ldc + j, k0, x);
      _mm512_mask_storeu_ps(c + i * ldc + j + 16, k1, y);
    }
  }
}

/* c (m x H) += sum_j a[r * ars + j * acs] b (n x H) row j: 4 rows x 64 columns of c in
 * registers (p @ v with a = p; p^T @ x with ars = 1, acs = lda) */
static PB_AVX512 void acc_avx512(int64_t m, int64_t n, int64_t H, const float *a, int64_t ars,
                                 int64_t acs, const float *b, float *c) {
  for (int64_t h0 = 0; h0 < H; h0 += 64) {
    __mmask16 k[4];
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) k[u] = pb_lanes16(H - h0 - 16 * u);
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) {
      __m512 acc[4][4];
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u)
          acc[r][u] = _mm512_maskz_loadu_ps(k[u], c + (i + r) * H + h0 + 16 * u);
      for (int64_t j = 0; j < n; ++j) {
        __m512 bv[4];
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) bv[u] = _mm512_maskz_loadu_ps(k[u], b + j * H + h0 + 16 * u);
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) {
          const __m512 s = _mm512_set1_ps(a[(i + r) * ars + j * acs]);
#pragma GCC unroll 4
          for (int u = 0; u < 4; ++u) acc[r][u] = _mm512_fmadd_ps(s, bv[u], acc[r][u]);
        }
      }
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u)
          _mm512_mask_storeu_ps(c + (i + r) * H + h0 + 16 * u, k[u], acc[r][u]);
    }
    for (; i < m; ++i) {
      __m512 acc[4];
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) acc[u] = _mm512_maskz_loadu_ps(k[u], c + i * H + h0 + 16 * u);
      for (int64_t j = 0; j < n; ++j) {
        const __m512 s = _mm512_set1_ps(a[i * ars + j * acs]);
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u)
          acc[u] = _mm512_fmadd_ps(s, _mm512_maskz_loadu_ps(k[u], b + j * H + h0 + 16 * u), acc[u]);
      }
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) _mm512_mask_storeu_ps(c + i * H + h0 + 16 * u, k[u], acc[u]);
    }
  }
}

/* dst[h * ld + r] = src[r * rs + h] (rs in floats): 16 x 16 blocks through registers instead
 * of stores ld apart */
static PB_AVX512 void cols_avx512(float *dst, int64_t ld, const float *src, int64_t rows,
                                  int64_t rs, int64_t H) {
  pb_transpose_f32(src, rs, dst, ld, rows, H, false);
}
#define HAVE_F32_AVX512 (pb_avx512_usable())
#else
#define HAVE_F32_AVX512 0
static void nt_avx512(int64_t m, int64_t n, int64_t H, const float *a, const float *bt,
                      int64_t ldb, float *c, int64_t ldc) {}
static void cols_avx512(float *dst, int64_t ld, const float *src, int64_t rows, int64_t rs,
                        int64_t H) {}
static void acc_avx512(int64_t m, int64_t n, int64_t H, const float *a, int64_t ars,
                       int64_t acs, const float *b, float *c) {}
#endif

#endif
