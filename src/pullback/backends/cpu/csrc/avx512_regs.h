/* Register-level AVX-512 helpers shared by the float32 tile kernels (gemm.c, attention.c):
 * lane masks and the 16 x 16 in-register transpose. Include after pb.h, under PB_HAVE_AVX512. */
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
#endif
