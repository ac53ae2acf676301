/* Scalar math for the element-wise kernels, written so the loop generators of ewise.h can
 * vectorize it: the hot real functions are branch-free (clamps and selects instead of branches,
 * bit casts instead of library calls), so one polynomial body becomes an AVX2/AVX-512 loop in
 * each target clone. The build is strict ISO C, so a * b + c is two roundings unless the
 * including file enables contraction (elementwise.c does around its polynomial loops, so the
 * x86-64-v3/v4 clones use FMA); the stated error bounds hold either way.
 */
#ifndef PB_EWISE_MATH_H
#define PB_EWISE_MATH_H
#include "ewise.h"

static inline uint32_t pb_f32_bits(float f) { uint32_t u; __builtin_memcpy(&u, &f, 4); return u; }
static inline float pb_bits_f32(uint32_t u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
static inline uint64_t pb_f64_bits(double f) { uint64_t u; __builtin_memcpy(&u, &f, 8); return u; }
static inline double pb_bits_f64(uint64_t u) { double f; __builtin_memcpy(&f, &u, 8); return f; }

/* ---- exp: e^x = 2^k e^r with k = round(x / ln 2), |r| <= ln2 / 2 ---- */
/* p = e^r in [0.7, 1.42], and *k */
static inline float pb_expf_parts(float x, int32_t *k) {
  const float shift = 0x1.8p23f; /* adding it rounds to an integer held in the low bits */
  const float t = x * 0x1.715476p+0f + shift;
  const float n = t - shift;
  float r = x - n * 0x1.62e4p-1f; /* ln2 high part: n * it is exact */
  r = r - n * 0x1.7f7d1cp-20f;    /* ln2 low part */
  /* e^r = 1 + r + r^2 q(r): a near-minimax fit, relative error 4e-9 on |r| <= ln2/2 */
  float q = 0x1.6a239cp-10f;
  q = q * r + 0x1.1239d6p-7f;
  q = q * r + 0x1.5558f2p-5f;
  q = q * r + 0x1.555492p-3f;
  q = q * r + 0x1.fffffcp-2f;
  *k = (int32_t)(pb_f32_bits(t) - pb_f32_bits(shift));
  return 1.0f + (r + r * r * q);
}
/* The input is clamped to where the result is already 0 or inf (NaN passes the clamps), and
 * 2^k is applied as two factors so that subnormal results round once and overflow gives inf. */
static inline float pb_expf(float x) {
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  int32_t k; /* in [-150, 129] */
  const float p = pb_expf_parts(xc, &k);
  const int32_t k1 = k >> 1, k2 = k - k1;
  return p * pb_bits_f32((uint32_t)(k1 + 127) << 23) * pb_bits_f32((uint32_t)(k2 + 127) << 23);
}
/* The same for -86.5 < x < 88 (k in [-125, 127]), where p 2^k is a normal float: adding k to
 * p's exponent field is then the exact product pb_expf rounds to, in 3 integer operations
 * instead of 9 (elementwise.c's guarded exp loop takes it where a block lies in the range) */
#define PB_EXPF_SLOW(a) (!((a) > -86.5f && (a) < 88.0f))
static inline float pb_expf_normal(float x) {
  int32_t k;
  const float p = pb_expf_parts(x, &k);
  return pb_bits_f32(pb_f32_bits(p) + ((uint32_t)k << 23));
}

/* q(r) with e^r = 1 + r + r^2 q(r), degree 11: Chebyshev interpolation (near-minimax),
 * relative error 1.7e-17 on |r| <= ln2/2 (float64 exp and expm1) */
static inline double pb_exp_q(double r) {
  double q = 0x1.af631d0059becp-26;
  q = q * r + 0x1.28b4057f44145p-22;
  q = q * r + 0x1.71ddf5749d126p-19;
  q = q * r + 0x1.a01991ac8730ap-16;
  q = q * r + 0x1.a01a01b14378fp-13;
  q = q * r + 0x1.6c16c187fbe02p-10;
  q = q * r + 0x1.111111110f225p-7;
  q = q * r + 0x1.555555554f0cfp-5;
  q = q * r + 0x1.555555555555ap-3;
  return q * r + 0x1.0000000000011p-1;
}

/* e^x as hi + *lo (the rounding error of 1 + (r + r^2 q), taken by Fast2Sum, scaled): */
static inline double pb_exp_dd(double x, double *lo) {
  /* No clamp up front: GCC would specialise the clamped paths. Out-of-range x computes garbage
   * (every integer step wraps harmlessly) that the final select replaces; NaN propagates. */
  const double shift = 0x1.8p52;
  const double t = x * 0x1.71547652b82fep+0 + shift;
  const double n = t - shift;
  double r = x - n * 0x1.62e42fee00000p-1;
  r = r - n * 0x1.a39ef35793c76p-33;
  const double q = pb_exp_q(r);
  const double s = r + r * r * q, p = 1.0 + s;
  /* k + 1100 >= 0 for x in [-746, 710] (k in [-1077, 1025]), so it splits in halves unsigned
   * (AVX2 has no 64-bit arithmetic shift) */
  const uint64_t kb = pb_f64_bits(t) - pb_f64_bits(shift) + 1100u;
  const int64_t k = (int64_t)kb - 1100, k1 = (int64_t)(kb >> 1) - 550, k2 = k - k1;
  const double s1 = pb_bits_f64((uint64_t)(k1 + 1023) << 52);
  const double s2 = pb_bits_f64((uint64_t)(k2 + 1023) << 52);
  const double res = p * s1 * s2, res_lo = ((1.0 - p) + s) * s1 * s2;
  *lo = x > 710.0 || x < -746.0 ? 0.0 : res_lo;
  return x > 710.0 ? INFINITY : x < -746.0 ? 0.0 : res;
}
static inline double pb_exp(double x) {
  double lo;
  return pb_exp_dd(x, &lo);
}

/* ---- log: x = 2^k m with m in [sqrt(1/2), sqrt(2)), log x = k ln2 + log1p(m - 1) ----
 * Subnormals are scaled up first; 0, negatives, inf and NaN are settled by the final selects. */
static inline float pb_logf(float x) {
  /* (written as straight-line selects: GCC if-converts these, not a chain of ternaries) */
  const float sub = x < 0x1p-126f ? 1.0f : 0.0f;
  const float xs = x * (1.0f + sub * (0x1p23f - 1.0f));
  /* moving the mantissa range to start at sqrt(1/2): (bits + (1.0 - sqrt(1/2))) keeps the
   * exponent field = k + 127 for m in [sqrt(1/2), sqrt(2)) */
  const uint32_t u = pb_f32_bits(xs) + (0x3f800000u - 0x3f3504f3u);
  const float k = (float)((int32_t)(u >> 23) - 127) - 23.0f * sub;
  const float f = pb_bits_f32((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
  /* log1p(f) = f - f^2/2 + f^3 P(f): a near-minimax fit, relative error 8e-9 */
  float q = -0x1.38b34ep-4f;
  q = q * f + 0x1.055af4p-3f;
  q = q * f - 0x1.0d8576p-3f;
  q = q * f + 0x1.22da32p-3f;
  q = q * f - 0x1.547242p-3f;
  q = q * f + 0x1.99a008p-3f;
  q = q * f - 0x1.000228p-2f;
  q = q * f + 0x1.555554p-2f;
  const float hf2 = 0.5f * f * f;
  float r = k * 0x1.62e4p-1f + ((f - hf2) + (f * f * f * q + k * 0x1.7f7d1cp-20f));
  r = x == INFINITY ? x : r;
  r = x == 0 ? -INFINITY : r;
  r = x < 0 ? NAN : r;
  return x != x ? x : r;
}

/* float64: log1p(f) = f - (f^2/2 - s (f^2/2 + R(s^2))) with s = f / (2 + f), the classical
 * arrangement in which the division's rounding only touches the small correction term;
 * R(t) = 2 (atanh(sqrt t) / sqrt t - 1) by a degree-6 Chebyshev fit in t (relative error 5e-16
 * on R, which is under 1% of the result). */
static inline double pb_log(double x) {
  const double sub = x < 0x1p-1022 ? 1.0 : 0.0;
  const double xs = x * (1.0 + sub * (0x1p54 - 1.0));
  const uint64_t u = pb_f64_bits(xs) + (0x3ff0000000000000ull - 0x3fe6a09e667f3bcdull);
  /* the exponent field as a double without int64 -> double conversions (none in AVX2) */
  const double k = pb_bits_f64(0x4330000000000000ull | (u >> 52)) - (0x1p52 + 1023.0) - 54.0 * sub;
  const double f = pb_bits_f64((u & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull) - 1.0;
  const double s = f / (2.0 + f), t = s * s;
  double R = 0x1.2b584aae78a57p-3;
  R = R * t + 0x1.39fe606542ddep-3;
  R = R * t + 0x1.7462b4ab2ef6bp-3;
  R = R * t + 0x1.c71c62e5800a1p-3;
  R = R * t + 0x1.2492492df148dp-2;
  R = R * t + 0x1.99999999952e2p-2;
  R = R * t + 0x1.5555555555558p-1;
  R = R * t;
  const double hfsq = 0.5 * f * f;
  double r = k * 0x1.62e42fee00000p-1 +
             (f - (hfsq - (s * (hfsq + R) + k * 0x1.a39ef35793c76p-33)));
  r = x == INFINITY ? x : r;
  r = x == 0 ? -INFINITY : r;
  r = x < 0 ? NAN : r;
  return x != x ? x : r;
}

/* ---- tanh: x + x^3 P(x^2) below 0.55, else sign(x) (1 - 2 / (e^{2|x|} + 1)) ---- */
static inline float pb_tanhf(float x) {
  const float ax = fabsf(x), x2 = x * x;
  float q = -0x1.9b3074p-8f;
  q = q * x2 + 0x1.593d1p-6f;
  q = q * x2 - 0x1.b9287cp-5f;
  q = q * x2 + 0x1.110d26p-3f;
  q = q * x2 - 0x1.55554ap-2f;
  const float small = x + x * x2 * q;
  const float big = 1.0f - 2.0f / (pb_expf(2.0f * ax) + 1.0f);
  /* tanh x = x in float below 2^-12 (this also keeps -0.0); NaN fails the tests: big is NaN */
  return ax < 0x1p-12f ? x : ax < 0.55f ? small : copysignf(big, x);
}

/* float64: x + x^3 P(x^2) below 0.55 (degree-10 Chebyshev fit, relative error 5e-18), else
 * through pb_exp as for float32 */
static inline double pb_tanh(double x) {
  const double ax = fabs(x), t = x * x;
  double q = -0x1.59a834187ce22p-16;
  q = q * t + 0x1.64fd88e9900a5p-14;
  q = q * t - 0x1.ec1091436eb2ap-13;
  q = q * t + 0x1.34c5a8a996cd4p-11;
  q = q * t - 0x1.7d97cfd138c28p-10;
  q = q * t + 0x1.d6d339333f329p-9;
  q = q * t - 0x1.226e32f00cf0cp-7;
  q = q * t + 0x1.664f487713373p-6;
  q = q * t - 0x1.ba1ba1b9fec84p-5;
  q = q * t + 0x1.1111111111032p-3;
  q = q * t - 0x1.5555555555555p-2;
  const double small = x + x * t * q;
  double r = copysign(1.0 - 2.0 / (pb_exp(2.0 * ax) + 1.0), x);
  r = ax < 0.55 ? small : r;
  return ax < 0x1p-27 ? x : r; /* keeps -0.0 */
}

/* ---- sin and cos of float32, all in float ----
 * x = n pi/2 + (hi + lo) with |hi| <= ~pi/4. pi/2 is split in three floats C1 + C2 + C3; n C1 is
 * subtracted exactly (one FMA: x and n C1 are multiples of 2^-23, or of 2^-24 when n = +-1, and
 * the difference is below 1), n C2 exactly as the FMA pair p + pe, and the rounding of
 * r1 - p is kept by TwoSum, so hi + lo is x - n pi/2 to ~2^-50 absolute for |x| < 2^19; larger
 * |x| (and inf/NaN) take libm in the guarded loop's fix-up. The Taylor series to r^9 (sin) and
 * r^10 (cos) are within 0.05 ulp on |r| <= pi/4; lo enters to first order. Measured error
 * 0.78 ulp (tests/test_vecmath.py; reducing and evaluating in double gave 0.5). All in float,
 * a vector holds twice the lanes and needs no conversions: 0.58 against 0.85 ns per element
 * (with FMA contraction, see meson.build). FMA is explicit in the reduction, where it must be
 * exact whatever the compiler contracts. */
#define PB_TRIGF_LIMIT 0x1p19f
static inline float pb_sin_polyf(float r2) {
  float q = 1.0f / 362880.0f;
  q = fmaf(q, r2, -1.0f / 5040.0f);
  q = fmaf(q, r2, 1.0f / 120.0f);
  return fmaf(q, r2, -1.0f / 6.0f);
}
static inline float pb_cos_polyf(float r2) {
  float q = -1.0f / 3628800.0f;
  q = fmaf(q, r2, 1.0f / 40320.0f);
  q = fmaf(q, r2, -1.0f / 720.0f);
  return fmaf(q, r2, 1.0f / 24.0f);
}
/* quadrant n mod 4 and r; `cos` adds one quadrant: cos x = sin(x + pi/2) */
static inline float pb_sincosf(float x, int cos) {
  const float shift = 0x1.8p23f;
  const float t = fmaf(x, 0x1.45f306p-1f, shift); /* n = rint(x 2/pi) sits in t's low bits */
  const float n = t - shift;
  const float r1 = fmaf(-n, 0x1.921fb6p+0f, x);
  const float p = n * -0x1.777a5cp-25f, pe = fmaf(n, -0x1.777a5cp-25f, -p);
  const float hi = r1 - p, bb = hi - r1, e = (r1 - (hi - bb)) + (-p - bb);
  const float lo = e - fmaf(n, -0x1.ee59dap-50f, pe);
  const float r2 = hi * hi;
  /* sin(hi + lo) ~ hi + (hi r2 S + lo); where r2 underflows (n = 0: no float lies that near
   * another multiple of pi/2), x itself, which keeps sin(-0.0) = -0.0 */
  const float s = r2 == 0.0f ? x : hi + fmaf(hi * r2, pb_sin_polyf(r2), lo);
  /* cos(hi + lo) ~ 1 - r2/2 + r2^2 C - hi lo, with 1 - r2/2's rounding error added back */
  const float hz = 0.5f * r2, u = 1.0f - hz;
  const float c = u + (((1.0f - u) - hz) + fmaf(r2 * r2, pb_cos_polyf(r2), -hi * lo));
  const uint32_t quad = pb_f32_bits(t) + (uint32_t)cos;
  const float v = (quad & 1) ? c : s;
  return (quad & 2) ? -v : v;
}
static inline float pb_sinf(float x) { return pb_sincosf(x, 0); }
static inline float pb_cosf(float x) { return pb_sincosf(x, 1); }
#define PB_TRIGF_SLOW(a) (!(fabsf(a) < PB_TRIGF_LIMIT))

/* ---- integer arithmetic with XLA's total semantics (no trap, wrap on overflow) ----
 * x / 0 = -1 (all bits set), x % 0 = x, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0. */
#define PB_SDIV(a, b) ((b) == 0 ? -1 : (b) == -1 ? -(a) : (a) / (b))
#define PB_UDIV(a, b) ((b) == 0 ? -1 : (a) / (b))
#define PB_SREM(a, b) ((b) == 0 ? (a) : (b) == -1 ? 0 : (a) % (b))
#define PB_UREM(a, b) ((b) == 0 ? (a) : (a) % (b))

/* Shifts: the amount is read as unsigned; amounts >= the bit width give 0 (left, logical) or
 * the sign fill (arithmetic), as XLA. */
#define PB_SHL(a, b) (PB_AS_UNSIGNED(b) >= PB_BITS(a) ? 0 : PB_AS_UNSIGNED(a) << PB_AS_UNSIGNED(b))
#define PB_SHR_LOGICAL(a, b)                                                                       \
  (PB_AS_UNSIGNED(b) >= PB_BITS(a) ? 0 : PB_AS_UNSIGNED(a) >> PB_AS_UNSIGNED(b))
#define PB_SHR_ARITH(a, b)                                                                         \
  (PB_AS_SIGNED(a) >> (PB_AS_UNSIGNED(b) >= PB_BITS(a) ? PB_BITS(a) - 1 : (int)PB_AS_UNSIGNED(b)))
#define PB_POPCOUNT(a) __builtin_popcountll((unsigned long long)PB_AS_UNSIGNED(a))
#define PB_CLZ(a)                                                                                  \
  ((a) == 0 ? PB_BITS(a)                                                                          \
            : __builtin_clzll((unsigned long long)PB_AS_UNSIGNED(a)) - (64 - PB_BITS(a)))

/* ---- NaN-propagating max/min; complex ones compare (real, imag) lexicographically ---- */
#define PB_FMAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define PB_FMIN(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
#define PB_CLEX_GT(a, b) (creal(a) > creal(b) || (creal(a) == creal(b) && cimag(a) > cimag(b)))
#define PB_CMAX(a, b) (((a) != (a) || PB_CLEX_GT(a, b)) ? (a) : (b))
#define PB_CMIN(a, b) (((a) != (a) || PB_CLEX_GT(b, a)) ? (a) : (b))

/* ---- nextafter on the 16-bit formats, in their own bits (not through float32) ---- */
static inline uint16_t pb_next16(uint16_t ua, uint16_t ub, float a, float b, uint16_t qnan) {
  if (a != a || b != b) return qnan;
  if (a == b) return ub;
  if (a == 0) return (uint16_t)((ub & 0x8000u) | 1u);
  return (a < b) == (a > 0) ? (uint16_t)(ua + 1) : (uint16_t)(ua - 1);
}
static inline pb_f16 pb_nextafter_f16(pb_f16 a, pb_f16 b) {
  uint16_t ua, ub, r;
  __builtin_memcpy(&ua, &a, 2);
  __builtin_memcpy(&ub, &b, 2);
  r = pb_next16(ua, ub, (float)a, (float)b, 0x7e00u);
  pb_f16 out;
  __builtin_memcpy(&out, &r, 2);
  return out;
}
static inline pb_bf16 pb_nextafter_bf16(pb_bf16 a, pb_bf16 b) {
  return pb_next16(a, b, pb_bf16_to_f32(a), pb_bf16_to_f32(b), 0x7fc0u);
}

/* ---- complex64 |z| and a / b in double: no overflow or underflow is possible there for float
 * parts, so the plain formulas are exact to a float ulp and vectorize; C99's cabsf/division
 * (libm hypot, __divsc3) only where a part is infinite or NaN or b is 0, for Annex G's
 * values. ---- */
static inline float pb_cabs_c64(pb_c64 z) {
  const double re = crealf(z), im = cimagf(z);
  const float r = (float)sqrt(re * re + im * im);
  /* branch-free (it vectorizes): only an infinite part needs C99's value, inf even beside a
   * NaN, where the sum gives NaN; a NaN part alone gives NaN either way */
  return (fabs(re) == INFINITY) | (fabs(im) == INFINITY) ? INFINITY : r;
}
static inline pb_c64 pb_cdiv_c64(pb_c64 a, pb_c64 b) {
  const double ar = crealf(a), ai = cimagf(a), br = crealf(b), bi = cimagf(b);
  const double d = br * br + bi * bi;
  const double re = (ar * br + ai * bi) / d, im = (ai * br - ar * bi) / d;
  if (!(isfinite(re) && isfinite(im)) || d == 0) return a / b;
  return CMPLXF((float)re, (float)im);
}

/* ---- sign: -1, 0, 1 keeping -0.0 and NaN; complex x / |x| ---- */
#define PB_ISIGN(a) (((a) > 0) - ((a) < 0))
#define PB_FSIGN(a) ((a) > 0 ? 1 : (a) < 0 ? -1 : (a))
static inline pb_c128 pb_csign_c128(pb_c128 z) { return z == 0 ? 0 : z / cabs(z); }
static inline pb_c64 pb_csign_c64(pb_c64 z) { return (pb_c64)pb_csign_c128(z); }

/* ---- logistic 1 / (1 + e^-x) ----
 * float32 computes in double (e^-x to 2^-52, far below a float ulp; e^-x = inf gives 0).
 * float64: e = e^-|x| (never overflows) as a double-double e + el; 1 / (1 + e) for x >= 0,
 * e / (1 + e) below, with the rounding error c of d = 1 + e (Fast2Sum, 1 >= e) and el taken
 * back: num / (d + c) = (num - (num / d) c) / d to first order; two divisions' errors remain. */
static inline float pb_logisticf(float x) { return (float)(1.0 / (1.0 + pb_exp(-(double)x))); }
static inline double pb_logistic(double x) {
  double el;
  const double e = pb_exp_dd(-fabs(x), &el);
  const double d = 1.0 + e, c = ((1.0 - d) + e) + el;
  const double num = x >= 0 ? 1.0 : e, num_lo = x >= 0 ? 0.0 : el;
  return (num + (num_lo - (num / d) * c)) / d;
}

/* ---- complex functions C lacks (complex64 computes in complex128 and rounds once) ---- */
static inline pb_c128 pb_cexpm1_c128(pb_c128 z) {
  /* Re: e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2), without cancellation near 0 */
  const double x = creal(z), y = cimag(z), s = sin(0.5 * y);
  return CMPLX(expm1(x) * cos(y) - 2.0 * s * s, exp(x) * sin(y));
}
static inline pb_c128 pb_clog1p_c128(pb_c128 z) {
  const double x = creal(z), y = cimag(z);
  if (fabs(x) + fabs(y) > 0x1p500 || !isfinite(x) || !isfinite(y)) return clog(1.0 + z);
  /* |1 + z|^2 = 1 + (2x + x^2 + y^2) */
  return CMPLX(0.5 * log1p(x * (2.0 + x) + y * y), atan2(y, 1.0 + x));
}
static inline pb_c128 pb_cexp2_c128(pb_c128 z) { return cexp(z * M_LN2); }
static inline pb_c128 pb_crsqrt_c128(pb_c128 z) { return 1.0 / csqrt(z); }
static inline pb_c128 pb_clogistic_c128(pb_c128 z) { return 1.0 / (1.0 + cexp(-z)); }
static inline pb_c128 pb_cpow_c128(pb_c128 a, pb_c128 b) {
  if (a == 0) {
    if (b == 0) return 1.0;
    if (creal(b) > 0) return 0.0;
  }
  return cpow(a, b);
}
#define PB_C64_VIA_C128(NAME)                                                                      \
  static inline pb_c64 NAME##_c64(pb_c64 z) { return (pb_c64)NAME##_c128((pb_c128)z); }
PB_C64_VIA_C128(pb_cexpm1)
PB_C64_VIA_C128(pb_clog1p)
PB_C64_VIA_C128(pb_cexp2)
PB_C64_VIA_C128(pb_crsqrt)
PB_C64_VIA_C128(pb_clogistic)
static inline pb_c64 pb_cpow_c64(pb_c64 a, pb_c64 b) { return (pb_c64)pb_cpow_c128(a, b); }

/* ---- digamma (psi): reflection below 0.5, recurrence up to 10, then the asymptotic series.
 * Poles (x a non-positive integer) give NaN, as XLA. float32 computes in double. */
static inline double pb_digamma(double x) {
  if (x != x || x == INFINITY) return x;
  if (x == -INFINITY) return NAN;
  double acc = 0.0;
  if (x < 0.5) {
    if (x == floor(x)) return NAN;
    /* psi(x) = psi(1 - x) - pi / tan(pi x); tan has period 1, so reduce x exactly first */
    const double f = x - round(x);
    acc = -M_PI / tan(M_PI * f);
    x = 1.0 - x;
  }
  for (; x < 10.0; x += 1.0) acc -= 1.0 / x;
  const double f = 1.0 / (x * x);
  double t = -1.0 / 12.0;
  t = t * f + 691.0 / 32760.0;
  t = t * f - 1.0 / 132.0;
  t = t * f + 1.0 / 240.0;
  t = t * f - 1.0 / 252.0;
  t = t * f + 1.0 / 120.0;
  t = t * f - 1.0 / 12.0;
  return acc + (log(x) - 0.5 / x + t * f);
}

/* ---- lgamma without the global signgam (thread-safe under OpenMP) ---- */
static inline float pb_lgammaf(float x) { int s; return lgammaf_r(x, &s); }
static inline double pb_lgamma(double x) { int s; return lgamma_r(x, &s); }

/* ---- erf_inv ----
 * float32: Giles' single-precision approximation ("Approximating the erfinv function", GPU
 * Computing Gems, 2011), on w = -log1p(-x^2) as XLA evaluates it, so results match XLA's to an
 * ulp or two. float64: Giles' double-precision approximation, then one Newton step on
 * erf(y) = x that brings it to full double accuracy. |x| = 1 gives +-inf, |x| > 1 NaN. */
static inline float pb_erfinvf(float x) {
  float w = -log1pf(-x * x), p;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w;
    p = -3.5233877e-06f + p * w;
    p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w;
    p = -0.00125372503f + p * w;
    p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w;
    p = 1.50140941f + p * w;
  } else {
    w = sqrtf(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w;
    p = 0.00134934322f + p * w;
    p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w;
    p = -0.0076224613f + p * w;
    p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w;
    p = 2.83297682f + p * w;
  }
  return fabsf(x) == 1.0f ? x * INFINITY : p * x;
}

static inline double pb_erfinv_giles(double x) {
  double w = -log((1.0 - x) * (1.0 + x)), p;
  if (w < 6.25) {
    w -= 3.125;
    p = -3.6444120640178196996e-21;
    p = -1.685059138182016589e-19 + p * w;
    p = 1.2858480715256400167e-18 + p * w;
    p = 1.115787767802518096e-17 + p * w;
    p = -1.333171662854620906e-16 + p * w;
    p = 2.0972767875968561637e-17 + p * w;
    p = 6.6376381343583238325e-15 + p * w;
    p = -4.0545662729752068639e-14 + p * w;
    p = -8.1519341976054721522e-14 + p * w;
    p = 2.6335093153082322977e-12 + p * w;
    p = -1.2975133253453532498e-11 + p * w;
    p = -5.4154120542946279317e-11 + p * w;
    p = 1.051212273321532285e-09 + p * w;
    p = -4.1126339803469836976e-09 + p * w;
    p = -2.9070369957882005086e-08 + p * w;
    p = 4.2347877827932403518e-07 + p * w;
    p = -1.3654692000834678645e-06 + p * w;
    p = -1.3882523362786468719e-05 + p * w;
    p = 0.0001867342080340571352 + p * w;
    p = -0.00074070253416626697512 + p * w;
    p = -0.0060336708714301490533 + p * w;
    p = 0.24015818242558961693 + p * w;
    p = 1.6536545626831027356 + p * w;
  } else if (w < 16.0) {
    w = sqrt(w) - 3.25;
    p = 2.2137376921775787049e-09;
    p = 9.0756561938885390979e-08 + p * w;
    p = -2.7517406297064545428e-07 + p * w;
    p = 1.8239629214389227755e-08 + p * w;
    p = 1.5027403968909827627e-06 + p * w;
    p = -4.013867526981545969e-06 + p * w;
    p = 2.9234449089955446044e-06 + p * w;
    p = 1.2475304481671778723e-05 + p * w;
    p = -4.7318229009055733981e-05 + p * w;
    p = 6.8284851459573175448e-05 + p * w;
    p = 2.4031110387097893999e-05 + p * w;
    p = -0.0003550375203628474796 + p * w;
    p = 0.00095328937973738049703 + p * w;
    p = -0.0016882755560235047313 + p * w;
    p = 0.0024914420961078508066 + p * w;
    p = -0.0037512085075692412107 + p * w;
    p = 0.005370914553590063617 + p * w;
    p = 1.0052589676941592334 + p * w;
    p = 3.0838856104922207635 + p * w;
  } else {
    w = sqrt(w) - 5.0;
    p = -2.7109920616438573243e-11;
    p = -2.5556418169965252055e-10 + p * w;
    p = 1.5076572693500548083e-09 + p * w;
    p = -3.7894654401267369937e-09 + p * w;
    p = 7.6157012080783393804e-09 + p * w;
    p = -1.4960026627149240478e-08 + p * w;
    p = 2.9147953450901080826e-08 + p * w;
    p = -6.7711997758452339498e-08 + p * w;
    p = 2.2900482228026654717e-07 + p * w;
    p = -9.9298272942317002539e-07 + p * w;
    p = 4.5260625972231537039e-06 + p * w;
    p = -1.9681778105531670567e-05 + p * w;
    p = 7.5995277030017761139e-05 + p * w;
    p = -0.00021503011930044477347 + p * w;
    p = -0.00013871931833623122026 + p * w;
    p = 1.0103004648645343977 + p * w;
    p = 4.8499064014085844221 + p * w;
  }
  return p * x;
}

static inline double pb_erfinv(double x) {
  const double ax = fabs(x);
  if (!(ax < 1.0)) return ax == 1.0 ? x * INFINITY : NAN;
  double y = pb_erfinv_giles(x);
  /* Newton on f(y) = erf(y) - x, f' = 2/sqrt(pi) e^{-y^2}; near |x| = 1 the residual is taken
   * from erfc so it keeps its digits. */
  const double r = ax < 0.5 ? erf(y) - x : (x < 0 ? -1.0 : 1.0) * ((1.0 - ax) - erfc(fabs(y)));
  return y - r / (M_2_SQRTPI * exp(-y * y));
}

#endif
