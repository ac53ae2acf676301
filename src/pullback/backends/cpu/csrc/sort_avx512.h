/* AVX-512 quicksort of 32- and 64-bit unsigned keys, for sort.c's single-operand sorts.
 *
 * In-place partitions (each vector's keys below the pivot compressed to the free slots at the
 * front, the others to those at the back), pivots from the median of 16 (or 8) spread samples
 * (of 3 for short parts), and leaves of up to two vectors sorted by in-register bitonic
 * networks. Equal keys are
 * identical values by the time they get here (sort.c takes NaNs out and records the signs of
 * zeros), so the sort need not be stable. A part that recurses too deep falls back to the radix
 * sort. Compiled for AVX-512F with target attributes; used only where the CPU has it. */
#ifndef PB_SORT_AVX512_H
#define PB_SORT_AVX512_H

#if PB_HAVE_AVX512
#define PB_HAVE_AVX512_SORT 1
#include <immintrin.h>

/* Bitonic network stages (block k, distance j): lane i pairs with lane i ^ j and keeps the
 * larger key when (i & j) != 0 differs from (i & k) != 0. */
typedef struct {
  uint32_t idx32[10][16], rev32[16];
  uint16_t max32[10];
  uint64_t idx64[6][8], rev64[8];
  uint8_t max64[6];
} pb_bitonic_tables;

static pb_bitonic_tables pb_bitonic;

static void pb_bitonic_init(void) {
  for (int i = 0; i < 16; ++i) pb_bitonic.rev32[i] = (uint32_t)(15 - i);
  for (int i = 0; i < 8; ++i) pb_bitonic.rev64[i] = (uint64_t)(7 - i);
  for (int lanes = 8, s = 0; lanes <= 16; lanes *= 2, s = 0)
    for (int k = 2; k <= lanes; k *= 2)
      for (int j = k / 2; j > 0; j /= 2, ++s) {
        unsigned mask = 0;
        for (int i = 0; i < lanes; ++i) {
          if (lanes == 16) pb_bitonic.idx32[s][i] = (uint32_t)(i ^ j);
          else pb_bitonic.idx64[s][i] = (uint64_t)(i ^ j);
          if (((i & j) != 0) != ((i & k) != 0)) mask |= 1u << i;
        }
        if (lanes == 16) pb_bitonic.max32[s] = (uint16_t)mask;
        else pb_bitonic.max64[s] = (uint8_t)mask;
      }
}

/* W: key bits; L: lanes; E: intrinsic element suffix; M: mask type; S: network stages */
#define PB_QSORT(W, L, E, M, S, POP)                                                              \
  /* network stages [from, S): all of them sort a vector; the last log2(L) merge a bitonic one */ \
  static PB_AVX512 __m512i pb_net##W(__m512i v, int from) {                                      \
    for (int s = from; s < S; ++s) {                                                             \
      __m512i idx = _mm512_loadu_si512(pb_bitonic.idx##W[s]);                                    \
      __m512i o = _mm512_permutexvar_##E(idx, v);                                                \
      v = _mm512_mask_blend_##E((M)pb_bitonic.max##W[s], _mm512_min_epu##W(v, o),                \
                                _mm512_max_epu##W(v, o));                                        \
    }                                                                                            \
    return v;                                                                                    \
  }                                                                                              \
  /* sorts n <= 2L keys from src into dst: two sorted vectors, then one bitonic merge */         \
  static PB_AVX512 void pb_leaf##W(const uint##W##_t *src, uint##W##_t *dst, npy_intp n) {       \
    const __m512i top = _mm512_set1_##E(-1);                                                     \
    if (n <= L) {                                                                                \
      M valid = (M)((1ull << n) - 1);                                                            \
      _mm512_mask_storeu_##E(dst, valid, pb_net##W(_mm512_mask_loadu_##E(top, valid, src), 0)); \
      return;                                                                                    \
    }                                                                                            \
    M valid = (M)((1ull << (n - L)) - 1);                                                        \
    __m512i a = pb_net##W(_mm512_loadu_si512(src), 0);                                           \
    __m512i b = pb_net##W(_mm512_mask_loadu_##E(top, valid, src + L), 0);                        \
    b = _mm512_permutexvar_##E(_mm512_loadu_si512(pb_bitonic.rev##W), b);                        \
    __m512i lo = _mm512_min_epu##W(a, b), hi = _mm512_max_epu##W(a, b);                         \
    _mm512_storeu_si512(dst, pb_net##W(lo, S - PB_LOG2_##L));                                   \
    _mm512_mask_storeu_##E(dst + L, valid, pb_net##W(hi, S - PB_LOG2_##L));                      \
  }                                                                                              \
  static PB_AVX512 uint##W##_t pb_pivot##W(const uint##W##_t *x, npy_intp n) {                   \
    if (n < 1024) { /* the median of three */                                                    \
      uint##W##_t a = x[n / 4], b = x[n / 2], c = x[3 * n / 4];                                  \
      if (a > b) { uint##W##_t t = a; a = b; b = t; }                                            \
      return c < a ? a : c > b ? b : c;                                                          \
    }                                                                                            \
    uint##W##_t sample[L];                                                                       \
    for (int i = 0; i < L; ++i) sample[i] = x[(n / L) * i + (n / (2 * L))];                      \
    _mm512_storeu_si512(sample, pb_net##W(_mm512_loadu_si512(sample), 0));                       \
    return sample[L / 2];                                                                        \
  }                                                                                              \
  /* One vector's keys below p (or, with le, not above p) to the free slots at the left, the    \
   * others to those at the right. */                                                            \
  static PB_AVX512 inline void pb_split##W(uint##W##_t *x, npy_intp *ls, npy_intp *rs,           \
                                           __m512i v, M valid, __m512i P, bool le) {             \
    M lo = (M)((le ? _mm512_cmple_epu##W##_mask(v, P) : _mm512_cmplt_epu##W##_mask(v, P)) & valid); \
    M hi = (M)(~lo & valid);                                                                     \
    int cl = POP(lo), ch = POP(hi);                                                              \
    _mm512_mask_storeu_##E(x + *ls, (M)((1ull << cl) - 1), _mm512_maskz_compress_##E(lo, v));   \
    *ls += cl;                                                                                   \
    *rs -= ch;                                                                                   \
    _mm512_mask_storeu_##E(x + *rs, (M)((1ull << ch) - 1), _mm512_maskz_compress_##E(hi, v));   \
  }                                                                                              \
  /* Partitions x[0..n) (n >= 2L) in place; returns the size of the left part. The first and   \
   * last vectors wait in registers, so there are always 2L free slots split between the two   \
   * ends; the next vector is read from the end with fewer, which keeps both ends at L or more. */ \
  static PB_AVX512 npy_intp pb_part##W(uint##W##_t *x, npy_intp n, uint##W##_t p, bool le) {    \
    const __m512i P = _mm512_set1_##E((int##W##_t)p);                                            \
    const M all = (M)~(M)0;                                                                      \
    __m512i first = _mm512_loadu_si512(x), last = _mm512_loadu_si512(x + n - L);                 \
    npy_intp ls = 0, rs = n, l = L, r = n - L;                                                   \
    while (r - l >= L) {                                                                         \
      __m512i v;                                                                                 \
      if (l - ls <= rs - r) { v = _mm512_loadu_si512(x + l); l += L; }                           \
      else { r -= L; v = _mm512_loadu_si512(x + r); }                                            \
      pb_split##W(x, &ls, &rs, v, all, P, le);                                                   \
    }                                                                                            \
    if (r > l) { /* the middle's last partial vector */                                          \
      M valid = (M)((1ull << (r - l)) - 1);                                                      \
      pb_split##W(x, &ls, &rs, _mm512_maskz_loadu_##E(valid, x + l), valid, P, le);              \
    }                                                                                            \
    pb_split##W(x, &ls, &rs, first, all, P, le);                                                 \
    pb_split##W(x, &ls, &rs, last, all, P, le);                                                  \
    return ls;                                                                                   \
  }                                                                                              \
  /* Sorts a[0..n) in place (t: scratch of n, for the fallback). */                              \
  static void pb_qsort##W(uint##W##_t *a, uint##W##_t *t, npy_intp n, int depth) {               \
    for (;;) {                                                                                   \
      if (n <= 2 * L) { pb_leaf##W(a, a, n); return; }                                           \
      if (depth-- == 0) { /* pathological pivots: the radix sort is linear */                    \
        uint##W##_t *r = vals_u##W##_msd(a, t, n, W / 8 - 1, KEY_SORT, 0, 1);                    \
        if (r != a) memcpy(a, r, sizeof(*a) * (size_t)n);                                        \
        return;                                                                                  \
      }                                                                                          \
      uint##W##_t p = pb_pivot##W(a, n);                                                         \
      npy_intp l = pb_part##W(a, n, p, false);                                                   \
      if (l == 0) l = pb_part##W(a, n, p, true); /* p is the minimum: [== p | > p] */            \
      else pb_qsort##W(a, t, l, depth);                                                          \
      a += l; t += l; n -= l;                                                                    \
      if (n == 0) return;                                                                        \
    }                                                                                            \
  }

#define PB_LOG2_16 4
#define PB_LOG2_8 3

static inline int pb_pop16(__mmask16 m) { return __builtin_popcount((unsigned)m); }
static inline int pb_pop8(__mmask8 m) { return __builtin_popcount((unsigned)m); }
PB_QSORT(32, 16, epi32, __mmask16, 10, pb_pop16)
PB_QSORT(64, 8, epi64, __mmask8, 6, pb_pop8)

#else
#define PB_HAVE_AVX512_SORT 0
static void pb_bitonic_init(void) {}
#endif

#endif
