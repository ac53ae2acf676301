/* Vectorizable transcendentals with a guarded fast path, for elementwise.c.
 *
 * A guarded loop walks contiguous data in blocks of PB_VM_BLOCK elements: a first, cheap pass
 * over the block (an OR-reduction that vectorizes) asks whether any element lies outside the
 * fast path's range; if none does (the common case), the branch-free polynomial body runs as
 * one vector loop; otherwise the whole block runs scalar, each out-of-range element through
 * libm (so huge arguments, inf and NaN get libm's answer) and the others through the same
 * expression as the vector loop. Every pass reads an element before writing it, so the loops
 * are safe in place (a fused region may write its output over a dying input).
 */
#ifndef PB_VECMATH_H
#define PB_VECMATH_H
#include "ewise_math.h"

#define PB_VM_BLOCK 256

/* y = EXPR(a), or SLOWEXPR(a) where SLOW(a) (an int) holds: see the comment above. */
#define PB_UNARY_GEN_GUARDED(NAME, T, C, TO, LD, ST, EXPR, SLOW, SLOWEXPR)                         \
  PB_UNARY_GUARDED_CONTIG(NAME, T, C, TO, LD, ST, EXPR, SLOW, SLOWEXPR)                            \
  PB_UNARY_STRIDED(NAME, T, C, TO, LD, ST, SLOW(a) ? SLOWEXPR : EXPR)
/* its contiguous loop alone (the strided one may take another expression) */
#define PB_UNARY_GUARDED_CONTIG(NAME, T, C, TO, LD, ST, EXPR, SLOW, SLOWEXPR)                      \
  static PB_LOOP_ATTR void NAME##_contig(const T *restrict x, TO *restrict y, npy_intp n,          \
                                         const void *prm) {                                        \
    for (npy_intp i0 = 0; i0 < n; i0 += PB_VM_BLOCK) {                                             \
      const npy_intp m = n - i0 < PB_VM_BLOCK ? n - i0 : PB_VM_BLOCK;                              \
      const T *restrict xb = x + i0;                                                               \
      TO *restrict yb = y + i0;                                                                    \
      int bad = 0;                                                                                 \
      for (npy_intp i = 0; i < m; ++i) { const C a = LD(xb[i]); bad |= SLOW(a); }                  \
      if (__builtin_expect(!bad, 1)) {                                                             \
        for (npy_intp i = 0; i < m; ++i) { const C a = LD(xb[i]); yb[i] = ST(TO, EXPR); }          \
      } else {                                                                                     \
        for (npy_intp i = 0; i < m; ++i) {                                                         \
          const C a = LD(xb[i]); yb[i] = ST(TO, SLOW(a) ? SLOWEXPR : EXPR);                        \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

/* ---- pairs: y = f(a) OP b in one loop (float32) ----
 * A fused region's transcendental whose only reader is an add, subtract or multiply runs as
 * one step with it (compiler/fusion.py pairs them), so f(a) goes from registers straight into
 * the arithmetic instead of through scratch: one pass over the tile instead of two, and the
 * loads of a and b interleave with the polynomial (exp(x) * y + sin(z) on 4M float32, two
 * threads, medians of 11 interleaved rounds in each of five runs: 3019-3494 us paired against
 * 3782-5009 unpaired).
 * The bits are the unpaired steps' own: the fast expression is the unary loop's EXPR, whose last
 * operation is a select, a conversion or integer arithmetic (never a product an FMA could
 * absorb OP's addition into), and a block holding an out-of-range argument runs the unary loop
 * itself (NAME##_contig, with its fix-up) into a buffer first. b is contiguous or one value
 * broadcast (zs = 0); other layouts run the unary's strided loop by blocks. Safe in place: each
 * element, or each block, is read before it is written. */
#define PB_PAIR_ADD(f, b) ((f) + (b))
#define PB_PAIR_SUB(f, b) ((f) - (b))
#define PB_PAIR_RSUB(f, b) ((b) - (f))
#define PB_PAIR_MUL(f, b) ((f) * (b))
#define PB_PAIR_GEN(NAME, OPN, OP, EXPR, SLOW)                                                     \
  static PB_LOOP_ATTR void NAME##_##OPN##_contig(const float *restrict x,                          \
                                                 const float *restrict z, npy_intp zs,             \
                                                 float *restrict y, npy_intp n, const void *prm) { \
    float tmp[PB_VM_BLOCK];                                                                        \
    for (npy_intp i0 = 0; i0 < n; i0 += PB_VM_BLOCK) {                                             \
      const npy_intp m = n - i0 < PB_VM_BLOCK ? n - i0 : PB_VM_BLOCK;                              \
      const float *restrict xb = x + i0;                                                           \
      float *restrict yb = y + i0;                                                                 \
      int bad = 0;                                                                                 \
      for (npy_intp i = 0; i < m; ++i) { const float a = xb[i]; bad |= SLOW(a); }                  \
      if (__builtin_expect(bad, 0)) {                                                              \
        NAME##_contig(xb, tmp, m, prm);                                                            \
        for (npy_intp i = 0; i < m; ++i) yb[i] = OP(tmp[i], z[(i0 + i) * zs]);                     \
      } else if (zs) {                                                                             \
        const float *restrict zb = z + i0;                                                         \
        for (npy_intp i = 0; i < m; ++i) { const float a = xb[i]; yb[i] = OP((EXPR), zb[i]); }     \
      } else {                                                                                     \
        const float b = *z;                                                                        \
        for (npy_intp i = 0; i < m; ++i) { const float a = xb[i]; yb[i] = OP((EXPR), b); }         \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
  static PB_STRIDED_ATTR void NAME##_##OPN(char **p, const npy_intp *s, npy_intp n,                \
                                           const void *prm) {                                      \
    const npy_intp es = (npy_intp)sizeof(float);                                                   \
    if (s[0] == es && s[2] == es && (s[1] == es || s[1] == 0)) {                                   \
      NAME##_##OPN##_contig((const float *)p[0], (const float *)p[1], s[1] / es, (float *)p[2],    \
                            n, prm);                                                               \
      return;                                                                                      \
    }                                                                                              \
    float tmp[PB_VM_BLOCK];                                                                        \
    for (npy_intp i0 = 0; i0 < n; i0 += PB_VM_BLOCK) {                                             \
      const npy_intp m = n - i0 < PB_VM_BLOCK ? n - i0 : PB_VM_BLOCK;                              \
      char *q[2] = {p[0] + i0 * s[0], (char *)tmp};                                                \
      const npy_intp qs[2] = {s[0], es};                                                           \
      NAME(q, qs, m, prm);                                                                         \
      const char *pz = p[1] + i0 * s[1];                                                           \
      char *py = p[2] + i0 * s[2];                                                                 \
      for (npy_intp i = 0; i < m; ++i)                                                             \
        *(float *)(py + i * s[2]) = OP(tmp[i], *(const float *)(pz + i * s[1]));                   \
    }                                                                                              \
  }
/* the four pairs of unary loop NAME (float32), in pb_pair_loop's order */
#define PB_PAIRS_GEN(NAME, EXPR, SLOW)                                                             \
  PB_PAIR_GEN(NAME, add, PB_PAIR_ADD, EXPR, SLOW)                                                  \
  PB_PAIR_GEN(NAME, sub, PB_PAIR_SUB, EXPR, SLOW)                                                  \
  PB_PAIR_GEN(NAME, rsub, PB_PAIR_RSUB, EXPR, SLOW)                                                \
  PB_PAIR_GEN(NAME, mul, PB_PAIR_MUL, EXPR, SLOW)
#define PB_PAIRS_ROW(OP, NAME) {OP, {NAME##_add, NAME##_sub, NAME##_rsub, NAME##_mul}}
#define PB_NEVER_SLOW(a) ((void)(a), 0)

/* ---- sin and cos of float64 ----
 * x = n pi/2 + r with |r| <= ~pi/4, for |x| < 2^20 (beyond: libm). pi/2 is split in three
 * (fdlibm's pio2_1, pio2_2 with 33 significant bits each, so n * part is exact for |n| < 2^20,
 * and pio2_3 in full); the subtractions are error-free transformations (TwoSum), so r comes
 * out as a double-double hi + lo, good to ~2^-100 absolute, whatever the cancellation. The
 * kernels are fdlibm's minimax polynomials (|error| < 2^-58 relative on |r| <= pi/4) with
 * their first-order correction for lo; measured error < 1 ulp (tests/test_vecmath.py). */
#define PB_TRIG_LIMIT 0x1p20
#define PB_TRIG_SLOW(a) (!(fabs(a) < PB_TRIG_LIMIT))
static inline void pb_two_sum(double a, double b, double *s, double *e) {
  const double t = a + b, bb = t - a;
  *s = t;
  *e = (a - (t - bb)) + (b - bb);
}
static inline double pb_ksin(double x, double y) {
  const double z = x * x, v = z * x;
  double r = 1.58969099521155010221e-10;
  r = r * z - 2.50507602534068634195e-08;
  r = r * z + 2.75573137070700676789e-06;
  r = r * z - 1.98412698298579493134e-04;
  r = r * z + 8.33333333332248946124e-03;
  /* sin(x + y) = x + (x^3 S(x^2) + y cos x), cos x ~ 1 - z/2 to the needed order */
  return x - ((z * (0.5 * y - v * r) - y) - v * -1.66666666666666324348e-01);
}
static inline double pb_kcos(double x, double y) {
  const double z = x * x, w = z * z;
  const double r = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 +
                                                          z * 2.48015872894767294178e-05)) +
                   w * w * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 +
                                                               z * -1.13596475577881948265e-11));
  const double hz = 0.5 * z, u = 1.0 - hz;
  /* cos(x + y) = 1 - z/2 + z^2 C(z) - x y, with 1 - z/2's rounding error added back */
  return u + (((1.0 - u) - hz) + (z * r - x * y));
}
static inline double pb_sincos(double x, int cos) {
  const double shift = 0x1.8p52;
  const double t = x * 0x1.45f306dc9c883p-1 + shift; /* 2 / pi */
  const double n = t - shift;
  const double a = x - n * 0x1.921fb54400000p+0;     /* exact */
  double r2, e2, r, e3;
  pb_two_sum(a, -(n * 0x1.0b4611a600000p-34), &r2, &e2);  /* n * pio2_2 is exact */
  pb_two_sum(r2, -(n * 0x1.3198a2e037073p-69), &r, &e3);
  const double lo = e2 + e3;
  const uint32_t quad = (uint32_t)pb_f64_bits(t) + (uint32_t)cos;
  const double s = pb_ksin(r, lo), c = pb_kcos(r, lo);
  const double v = (quad & 1) ? c : s;
  return (quad & 2) ? -v : v;
}
static inline double pb_sin(double x) { return pb_sincos(x, 0); }
static inline double pb_cos(double x) { return pb_sincos(x, 1); }

/* ---- expm1 and log1p of float32, through float64 ----
 * expm1: e^x - 1 in double has absolute error ~2^-53 e^x, i.e. relative ~2^-53 / |x| near 0:
 * below float's half ulp for |x| >= 2^-25, and below that expm1(x) rounds to x in float.
 * log1p: 1 + x is exact in double for float x with 2^-29 <= |x| < 2^29 (and, beyond, off by
 * one double rounding, far below a float ulp); below 2^-25 log1p(x) rounds to x. Both then
 * round once to float; pb_exp/pb_log settle inf, -inf, NaN, -1 and < -1 branch-free. */
static inline float pb_expm1f(float x) {
  const float r = (float)(pb_exp((double)x) - 1.0);
  return fabsf(x) < 0x1p-25f ? x : r; /* keeps -0.0 */
}
static inline float pb_log1pf(float x) {
  const float r = (float)pb_log(1.0 + (double)x);
  return fabsf(x) < 0x1p-25f ? x : r;
}

/* ---- log1p of float64: log(u) + (x - (u - 1)) / u with u = 1 + x rounded ----
 * The quotient restores what the rounding of 1 + x dropped (first order in it, which is ample:
 * it is below an ulp of u). Tiny x returns x (keeps -0.0); inf, -1 and < -1 are selected. */
static inline double pb_log1p(double x) {
  const double u = 1.0 + x;
  double r = pb_log(u) + (x - (u - 1.0)) / u;
  r = fabs(x) < 0x1p-54 ? x : r;
  r = x == INFINITY ? x : r;
  return x == -1.0 ? -INFINITY : r; /* (x < -1: pb_log gives NaN; NaN propagates) */
}

/* ---- expm1 of float64: x = k ln2 + r (+ c, the reduction's rounding error), |r| <= ln2/2;
 * e^r - 1 = r + r^2 q(r) with pb_exp's polynomial, and expm1(x) = 2^k (e^r - 1) + (2^k - 1);
 * beyond |k| = 52, 2^k e^r - 1 (the -1 then only rounds).
 * 2^k is applied as two factors so that overflow gives inf. x is clamped to [-746, 710] first
 * (results -1 and inf there; k in [-1077, 1025], as in pb_exp); NaN passes the clamps. */
static inline double pb_expm1(double x) {
  double xc = x < -746.0 ? -746.0 : x;
  xc = xc > 710.0 ? 710.0 : xc;
  const double shift = 0x1.8p52;
  const double t = xc * 0x1.71547652b82fep+0 + shift;
  const double n = t - shift;
  const double hi = xc - n * 0x1.62e42fee00000p-1; /* exact: ln2's high part has 32 bits */
  const double lo = n * 0x1.a39ef35793c76p-33;
  const double r = hi - lo, c = (hi - r) - lo;
  const double q = pb_exp_q(r);
  /* e^(r + c) - 1 = r + (r^2 q + c (1 + r)) to first order in c */
  const double tail = r * r * q + c * (1.0 + r);
  const uint64_t kb = pb_f64_bits(t) - pb_f64_bits(shift) + 1100u;
  const int64_t k = (int64_t)kb - 1100, k1 = (int64_t)(kb >> 1) - 550, k2 = k - k1;
  const double s1 = pb_bits_f64((uint64_t)(k1 + 1023) << 52);
  const double s2 = pb_bits_f64((uint64_t)(k2 + 1023) << 52);
  /* |k| <= 52: 2^k ((1 - 2^-k) + r + tail), where 1 - 2^-k is exact and adding r first is
   * exact where it cancels (k = 1, r < 0: Sterbenz), so a result near 0.4 does not carry
   * twice the rounding error of e^r - 1 */
  const double m = 1.0 - pb_bits_f64((uint64_t)(1023 - k) << 52); /* (garbage if |k| > 52) */
  const double near = (((m + r) + tail) * s1) * s2;
  const double far = (((1.0 + r) + tail) * s1) * s2 - 1.0;
  const double res = fabs(n) <= 52.0 ? near : far;
  return fabs(x) < 0x1p-54 ? x : res;
}

#endif
