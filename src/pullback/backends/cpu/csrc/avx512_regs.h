/* Register-level AVX-512 helpers shared by the float32 tile kernels (gemm.c, attention.c):
 * lane masks, the 16 x 16 in-register transpose and a strided block transpose on it. Include after pb.h, under PB_HAVE_AVX512. */
#ifndef PB_AVX512_REGS_H
#define PB_AVX512_REGS_H
#include <immintrin.h>

static inline PB_AVX512 __mmask16 pb_lanes16(int64_t w) { /* the first w of 16 lanes */
  return w >= 16 ? (__mmask16)0xffff : w <= 0 ? (__mmask16)0 : (__mmask16)((1u << w) - 1);
}

/* 16 vectors as the rows of a 16x16 matrix, transposed in place */
static inline PB_AVX512 void pb_transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]),
                  c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int i = 0; i < 8; ++i) { /* 128-bit lanes: pairs (0, 4), (1, 5), ..., (8, 12), ... */
    const int x = i / 4 * 8 + i % 4, y = x + 4;
    t[x] = _mm512_shuffle_f32x4(r[x], r[y], 0x88);
    t[y] = _mm512_shuffle_f32x4(r[x], r[y], 0xdd);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}

/* dst[c * ds + r] (+)= src[r * ss + c] for r < rows, c < cols (strides in floats), through
 * 16 x 16 register transposes: each side read and written 16 contiguous floats at a time
 * instead of single floats ds apart */
static inline PB_AVX512 void pb_transpose_f32(const float *src, int64_t ss, float *dst, int64_t ds,
                                              int64_t rows, int64_t cols, bool add) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t rn = rows - r0 < 16 ? rows - r0 : 16;
    const __mmask16 rm = pb_lanes16(rn);
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const int64_t cn = cols - c0 < 16 ? cols - c0 : 16;
      const __mmask16 cm = pb_lanes16(cn);
      __m512 t[16];
      for (int64_t i = 0; i < 16; ++i)
        t[i] = i < rn ? _mm512_maskz_loadu_ps(cm, src + (r0 + i) * ss + c0) : _mm512_setzero_ps();
      pb_transpose16(t);
      for (int64_t k = 0; k < cn; ++k) {
        float *d = dst + (c0 + k) * ds + r0;
        _mm512_mask_storeu_ps(d, rm, add ? _mm512_add_ps(_mm512_maskz_loadu_ps(rm, d), t[k]) : t[k]);
      }
    }
  }
}
#endif
