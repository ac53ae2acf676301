/* Element-wise kernels: one table row per op. The frontend has already broadcast operands to
 * one shape (zero strides) and cast them to one dtype; the kernel checks both anyway, so a bad
 * call raises instead of reading out of bounds. float16/bfloat16 compute in float32 and round
 * once on store. select_n has its own entry point (its operands differ in dtype and number).
 */
#include "vecmath.h"
#include "schedule.h"
#include "special_math.h"
#include <tgmath.h> /* sin/log/... pick the float, double or complex version from the type */

#define UN PB_UNARY_GEN
#define BIN PB_BINARY_GEN

/* Type-generic dispatch to our own functions (tgmath covers libm's). */
#define PB_EXP(a) _Generic((a), float: pb_expf, double: pb_exp)(a)
#define PB_LOGISTIC(a) _Generic((a), float: pb_logisticf, double: pb_logistic)(a)
#define PB_ERFINV(a) _Generic((a), float: pb_erfinvf, double: pb_erfinv)(a)
#define PB_LGAMMA(a) _Generic((a), float: pb_lgammaf, double: pb_lgamma)(a)
#define PB_DIGAMMA(a) pb_digamma((double)(a))
#define PB_SP_LOGMAX(a) _Generic((a), float: PB_SP_LOGMAX_F, double: PB_SP_LOGMAX_D)
#define PB_SP_IS_DOUBLE(a) _Generic((a), float: 0, double: 1)
#define PB_CFN(NAME, a) _Generic((a), pb_c64: NAME##_c64, pb_c128: NAME##_c128)(a)
#define PB_CPOW(a, b) _Generic((a), pb_c64: pb_cpow_c64, pb_c128: pb_cpow_c128)((a), (b))
#define PB_MAKE_COMPLEX(a, b) _Generic((a), float: CMPLXF((a), (b)), double: CMPLX((a), (b)))
#define PB_IMAX(a, b) ((a) > (b) ? (a) : (b))
#define PB_IMIN(a, b) ((a) < (b) ? (a) : (b))

/* Ops defined on every numeric dtype with one expression per kind. */
#define NUMERIC(GEN, N, IEXPR, FEXPR, CEXPR)                                                       \
  PB_FOR_INTS(GEN, N, IEXPR) PB_FOR_FLOATS(GEN, N, FEXPR) PB_FOR_COMPLEXES(GEN, N, CEXPR)
/* Ops on floating and complex dtypes. */
#define INEXACT(GEN, N, FEXPR, CEXPR) PB_FOR_FLOATS(GEN, N, FEXPR) PB_FOR_COMPLEXES(GEN, N, CEXPR)

/* ======== vectorizable loops: compiled per target clone ======== */
NUMERIC(BIN, add, a + b, a + b, a + b)
NUMERIC(BIN, sub, a - b, a - b, a - b)
/* Complex products by the plain formula, as NumPy and JAX compute them: C99's `a * b` also
 * recovers infinities where both parts come out NaN ((inf + nan i)(1 + i) gives inf + inf i
 * there, nan + nan i in NumPy and JAX), and that check kept the loops scalar (3x an add). */
#define PB_CMUL(a, b)                                                                              \
  PB_MAKE_COMPLEX(__real__(a) * __real__(b) - __imag__(a) * __imag__(b),                           \
                  __real__(a) * __imag__(b) + __imag__(a) * __real__(b))
NUMERIC(BIN, mul, a * b, a * b, PB_CMUL(a, b))
NUMERIC(UN, square, a * a, a * a, PB_CMUL(a, a))
PB_FOR_FLOATS(BIN, div, a / b)
BIN(div_c64, pb_c64, pb_c64, pb_c64, PB_LD, PB_ST, pb_cdiv_c64(a, b))
BIN(div_c128, pb_c128, pb_c128, pb_c128, PB_LD, PB_ST, a / b)
UN(abs_c64, pb_c64, pb_c64, float, PB_LD, PB_ST, pb_cabs_c64(a))
PB_FOR_BOOLS(BIN, max, PB_IMAX(a, b)) PB_FOR_INTS(BIN, max, PB_IMAX(a, b))
INEXACT(BIN, max, PB_FMAX(a, b), PB_CMAX(a, b))
PB_FOR_BOOLS(BIN, min, PB_IMIN(a, b)) PB_FOR_INTS(BIN, min, PB_IMIN(a, b))
INEXACT(BIN, min, PB_FMIN(a, b), PB_CMIN(a, b))
BIN(complex_f32, float, float, pb_c64, PB_LD, PB_ST, CMPLXF(a, b))
BIN(complex_f64, double, double, pb_c128, PB_LD, PB_ST, CMPLX(a, b))

/* bitwise and shifts */
PB_FOR_BOOLS(BIN, and, a & b) PB_FOR_INTS(BIN, and, a & b)
PB_FOR_BOOLS(BIN, or, a | b) PB_FOR_INTS(BIN, or, a | b)
PB_FOR_BOOLS(BIN, xor, a ^ b) PB_FOR_INTS(BIN, xor, a ^ b)
PB_FOR_INTS(BIN, shift_left, PB_SHL(a, b))
PB_FOR_INTS(BIN, shift_right_logical, PB_SHR_LOGICAL(a, b))
PB_FOR_INTS(BIN, shift_right_arithmetic, PB_SHR_ARITH(a, b))
PB_FOR_BOOLS(UN, not, !a) PB_FOR_INTS(UN, not, ~a)

/* comparisons (bool out; NaN compares false except for ne) */
#define ORDERED_CMP(N, EXPR)                                                                       \
  PB_FOR_BOOLS_TO_BOOL(BIN, N, EXPR) PB_FOR_SINTS_TO_BOOL(BIN, N, EXPR)                            \
  PB_FOR_UINTS_TO_BOOL(BIN, N, EXPR) PB_FOR_FLOATS_TO_BOOL(BIN, N, EXPR)
ORDERED_CMP(eq, a == b) PB_FOR_COMPLEXES_TO_BOOL(BIN, eq, a == b)
ORDERED_CMP(ne, a != b) PB_FOR_COMPLEXES_TO_BOOL(BIN, ne, a != b)
ORDERED_CMP(lt, a < b)
ORDERED_CMP(le, a <= b)
ORDERED_CMP(gt, a > b)
ORDERED_CMP(ge, a >= b)
PB_FOR_FLOATS_TO_BOOL(UN, is_finite, isfinite(a))

/* unary arithmetic and rounding */
NUMERIC(UN, neg, -a, -a, -a)
PB_FOR_SINTS(UN, sign, PB_ISIGN(a)) PB_FOR_UINTS(UN, sign, a > 0)
PB_FOR_FLOATS(UN, sign, PB_FSIGN(a))
PB_FOR_SINTS(UN, abs, a < 0 ? -a : a) PB_FOR_FLOATS(UN, abs, fabs(a))
INEXACT(UN, reciprocal, 1 / a, 1 / a)
PB_FOR_FLOATS(UN, sqrt, sqrt(a))
PB_FOR_FLOATS(UN, rsqrt, 1 / sqrt(a))
PB_FOR_FLOATS(UN, floor, floor(a))
PB_FOR_FLOATS(UN, ceil, ceil(a))
PB_FOR_FLOATS(UN, round, round(a))      /* half away from zero */
PB_FOR_FLOATS(UN, round_even, rint(a))  /* the default rounding mode: half to even */
PB_FOR_FLOATS(UN, trunc, trunc(a))

/* reduce_precision(x; exponent_bits, mantissa_bits) as XLA, on the bits of x's own format
 * (nbits wide, src_e exponent and src_m mantissa bits): the mantissa rounds to nearest even, then
 * exponents beyond the narrower format's range become inf (overflow) or a signed zero (underflow:
 * the narrower format has no subnormals here); a NaN passes unchanged, payload included. */
static inline uint64_t pb_reduce_precision(uint64_t x, int nbits, int src_e, int src_m,
                                           int64_t e, int64_t m) {
  const uint64_t sign = (uint64_t)1 << (nbits - 1);
  const uint64_t exp_mask = (((uint64_t)1 << src_e) - 1) << src_m;
  if ((x & ~sign) > exp_mask) return x;
  if (m < 0) m = 0; /* (the primitive rejects these; a direct kernel call must not shift by < 0) */
  if (e < 1) e = 1;
  if (m < src_m) {
    const int shift = src_m - (int)m;
    const uint64_t last = (uint64_t)1 << shift;
    x = (x + ((last >> 1) - 1) + ((x >> shift) & 1)) & ~(last - 1);
  }
  if (e < src_e) {
    const uint64_t bias = ((uint64_t)1 << (src_e - 1)) - 1, rbias = ((uint64_t)1 << (e - 1)) - 1;
    const uint64_t xe = x & exp_mask;
    if (xe > (bias + rbias) << src_m) x = (x & sign) | exp_mask;
    else if (xe <= (bias - rbias) << src_m) x &= sign;
  }
  return x;
}
#define RP(SUF, T, NB, E, M)                                                                       \
  UN(reduce_precision_##SUF, T, T, T, PB_LD, PB_ST,                                                \
     (T)pb_reduce_precision(a, NB, E, M, PB_PARAM_I64_AT(0), PB_PARAM_I64_AT(1)))
RP(f16, uint16_t, 16, 5, 10)
RP(bf16, uint16_t, 16, 8, 7)
RP(f32, uint32_t, 32, 8, 23)
RP(f64, uint64_t, 64, 11, 52)
#undef RP

/* complex parts */
PB_FOR_COMPLEXES_TO_REAL(UN, real, creal(a))
PB_FOR_COMPLEXES_TO_REAL(UN, imag, cimag(a))
PB_FOR_COMPLEXES(UN, conj, conj(a)) PB_FOR_REALS_TO_COMPLEX(UN, conj, PB_MAKE_COMPLEX(a, -0.0))

/* branch-free polynomial transcendentals (ewise_math.h); float16/bfloat16 go through the
 * float32 versions. Multiply-adds contract to FMA in the clones that have it (x86-64-v3/v4):
 * half the polynomial instructions, and a rounding fewer each; the baseline clone rounds both
 * (so results may differ in the last bit between machines, within the stated ulp bounds). */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#undef PB_STRIDED_ATTR
#define PB_STRIDED_ATTR PB_CLONES
PB_FOR_HALVES(UN, exp, PB_EXP(a))
/* float32 exp: the exponent-field scaling where a block lies in its range (same bits) */
PB_UNARY_GUARDED_CONTIG(exp_f32, float, float, float, PB_LD, PB_ST, pb_expf_normal(a),
                        PB_EXPF_SLOW, pb_expf(a))
PB_UNARY_STRIDED(exp_f32, float, float, float, PB_LD, PB_ST, pb_expf(a))
UN(exp_f64, double, double, double, PB_LD, PB_ST, pb_exp(a))
PB_FOR_FLOATS(UN, logistic, PB_LOGISTIC(a))
PB_FOR_HALVES(UN, log, pb_logf(a)) PB_FOR_HALVES(UN, tanh, pb_tanhf(a))
UN(log_f32, float, float, float, PB_LD, PB_ST, pb_logf(a))
UN(tanh_f32, float, float, float, PB_LD, PB_ST, pb_tanhf(a))
UN(log_f64, double, double, double, PB_LD, PB_ST, pb_log(a))
UN(tanh_f64, double, double, double, PB_LD, PB_ST, pb_tanh(a))
/* guarded loops (vecmath.h): sin/cos beyond their reduction's range (and inf, NaN) via libm */
#define GUARDED_F32(N, FAST, SLOW, SLOWFN)                                                         \
  PB_UNARY_GEN_GUARDED(N##_f16, pb_f16, float, pb_f16, PB_LD_F16, PB_ST_F16, FAST(a), SLOW,       \
                       SLOWFN(a))                                                                  \
  PB_UNARY_GEN_GUARDED(N##_bf16, pb_bf16, float, pb_bf16, PB_LD_BF16, PB_ST_BF16, FAST(a), SLOW,  \
                       SLOWFN(a))                                                                  \
  PB_UNARY_GEN_GUARDED(N##_f32, float, float, float, PB_LD, PB_ST, FAST(a), SLOW, SLOWFN(a))
GUARDED_F32(sin, pb_sinf, PB_TRIGF_SLOW, sinf)
GUARDED_F32(cos, pb_cosf, PB_TRIGF_SLOW, cosf)
PB_UNARY_GEN_GUARDED(sin_f64, double, double, double, PB_LD, PB_ST, pb_sin(a), PB_TRIG_SLOW, sin(a))
PB_UNARY_GEN_GUARDED(cos_f64, double, double, double, PB_LD, PB_ST, pb_cos(a), PB_TRIG_SLOW, cos(a))
/* expm1/log1p (vecmath.h): float32 through float64; branch-free, no fix-up needed */
PB_FOR_HALVES(UN, expm1, pb_expm1f(a)) PB_FOR_HALVES(UN, log1p, pb_log1pf(a))
UN(expm1_f32, float, float, float, PB_LD, PB_ST, pb_expm1f(a))
UN(log1p_f32, float, float, float, PB_LD, PB_ST, pb_log1pf(a))
UN(expm1_f64, double, double, double, PB_LD, PB_ST, pb_expm1(a))
UN(log1p_f64, double, double, double, PB_LD, PB_ST, pb_log1p(a))
/* pairs f(a) OP b of the float32 loops above (vecmath.h; a compiled region's "exp>mul") */
PB_PAIRS_GEN(exp_f32, pb_expf_normal(a), PB_EXPF_SLOW)
PB_PAIRS_GEN(sin_f32, pb_sinf(a), PB_TRIGF_SLOW)
PB_PAIRS_GEN(cos_f32, pb_cosf(a), PB_TRIGF_SLOW)
PB_PAIRS_GEN(log_f32, pb_logf(a), PB_NEVER_SLOW)
PB_PAIRS_GEN(tanh_f32, pb_tanhf(a), PB_NEVER_SLOW)
PB_PAIRS_GEN(logistic_f32, pb_logisticf(a), PB_NEVER_SLOW)
#pragma GCC pop_options
#undef PB_STRIDED_ATTR
#define PB_STRIDED_ATTR

/* clamp(lo, x, hi) = min(max(x, lo), hi), NaN-propagating for floats */
PB_FOR_BOOLS(PB_TERNARY_GEN, clamp, PB_IMIN(PB_IMAX(b, a), c))
PB_FOR_INTS(PB_TERNARY_GEN, clamp, PB_IMIN(PB_IMAX(b, a), c))
PB_FOR_FLOATS(PB_TERNARY_GEN, clamp, PB_FMIN(PB_FMAX(b, a), c))

/* ======== loops around libm calls or integer division: one plain version each ======== */
#undef PB_LOOP_ATTR
#define PB_LOOP_ATTR

PB_FOR_SINTS(BIN, div, PB_SDIV(a, b)) PB_FOR_UINTS(BIN, div, PB_UDIV(a, b))
PB_FOR_SINTS(BIN, rem, PB_SREM(a, b)) PB_FOR_UINTS(BIN, rem, PB_UREM(a, b))
PB_FOR_FLOATS(BIN, rem, fmod(a, b))
INEXACT(BIN, pow, pow(a, b), PB_CPOW(a, b))
PB_FOR_FLOATS(BIN, atan2, atan2(a, b))
BIN(nextafter_f16, pb_f16, pb_f16, pb_f16, PB_LD, PB_ST, pb_nextafter_f16(a, b))
BIN(nextafter_bf16, pb_bf16, pb_bf16, pb_bf16, PB_LD, PB_ST, pb_nextafter_bf16(a, b))
PB_FOR_REALS(BIN, nextafter, nextafter(a, b))
/* gcd/lcm of |a| and |b|: Euclid in uint64_t, where |INT_MIN| does not wrap; the result is cast
 * back, so gcd(INT_MIN, 0) = INT_MIN as JAX (whose loop never ends on gcd(INT_MIN, 6): here 2, as
 * NumPy). lcm = |a| * (|b| / gcd), wrapping as JAX's product; 0 where the gcd is 0. */
static inline uint64_t pb_gcd_u64(uint64_t x, uint64_t y) {
  while (y) {
    const uint64_t r = x % y;
    x = y;
    y = r;
  }
  return x;
}
static inline uint64_t pb_lcm_u64(uint64_t x, uint64_t y) {
  const uint64_t g = pb_gcd_u64(x, y);
  return g ? x * (y / g) : 0;
}
#define PB_SABS(a) ((uint64_t)PB_AS_UNSIGNED((a) < 0 ? -(a) : (a)))
PB_FOR_SINTS(BIN, gcd, pb_gcd_u64(PB_SABS(a), PB_SABS(b)))
PB_FOR_UINTS(BIN, gcd, pb_gcd_u64(a, b))
PB_FOR_SINTS(BIN, lcm, pb_lcm_u64(PB_SABS(a), PB_SABS(b)))
PB_FOR_UINTS(BIN, lcm, pb_lcm_u64(a, b))
PB_FOR_INTS(UN, population_count, PB_POPCOUNT(a))
PB_FOR_INTS(UN, clz, PB_CLZ(a))
/* x ** y (integer_pow, y static) as JAX computes it: binary exponentiation, each product
 * rounded to the dtype (R: float16/bfloat16 compute in float32 and round after every product,
 * as their own multiplications do), 1 / x^|y| for y < 0 (inexact x only). |y| <= 4 runs as its
 * own vectorized loop, picked once per call, so x**2 costs what x*x does; other y, and
 * strided operands, run the general chain (NAME##_one): the same products, the same bits.
 * Integers wrap (-fwrapv) and truncate on store, as mul does. */
#define PB_IPOW_EACH(C, TO, LD, ST, EXPR)                                                          \
  for (npy_intp i = 0; i < n; ++i) { const C a = LD(x[i]); y[i] = ST(TO, EXPR); }                  \
  return
#define PB_IPOW_LOOPS(NAME, T, C, TO, LD, ST, NEG)                                                 \
  static inline C NAME##_one(C a, int64_t e) {                                                     \
    uint64_t k = e < 0 ? -(uint64_t)e : (uint64_t)e;                                               \
    C acc = (C)1, base = a;                                                                        \
    for (; k; k >>= 1) {                                                                           \
      if (k & 1) acc = LD(ST(TO, acc * base));                                                     \
      if (k > 1) base = LD(ST(TO, base * base));                                                   \
    }                                                                                              \
    return NEG && e < 0 ? (C)1 / acc : acc;                                                        \
  }                                                                                                \
  static PB_CLONES void NAME##_contig(const T *restrict x, TO *restrict y, npy_intp n,             \
                                      const void *prm) {                                           \
    switch (PB_PARAM_I64) {                                                                        \
    case 0: PB_IPOW_EACH(C, TO, LD, ST, (C)1);                                                     \
    case 1: PB_IPOW_EACH(C, TO, LD, ST, a);                                                        \
    case 2: PB_IPOW_EACH(C, TO, LD, ST, a * a);                                                    \
    case 3: PB_IPOW_EACH(C, TO, LD, ST, a * LD(ST(TO, a * a)));                                    \
    case 4: PB_IPOW_EACH(C, TO, LD, ST, LD(ST(TO, a * a)) * LD(ST(TO, a * a)));                    \
    default: break;                                                                                \
    }                                                                                              \
    if (NEG) {                                                                                     \
      switch (PB_PARAM_I64) {                                                                      \
      case -1: PB_IPOW_EACH(C, TO, LD, ST, (C)1 / a);                                              \
      case -2: PB_IPOW_EACH(C, TO, LD, ST, (C)1 / LD(ST(TO, a * a)));                              \
      case -3: PB_IPOW_EACH(C, TO, LD, ST, (C)1 / LD(ST(TO, a * LD(ST(TO, a * a)))));              \
      case -4:                                                                                     \
        PB_IPOW_EACH(C, TO, LD, ST, (C)1 / LD(ST(TO, LD(ST(TO, a * a)) * LD(ST(TO, a * a)))));     \
      default: break;                                                                              \
      }                                                                                            \
    }                                                                                              \
    PB_IPOW_EACH(C, TO, LD, ST, NAME##_one(a, PB_PARAM_I64));                                      \
  }                                                                                                \
  PB_UNARY_STRIDED(NAME, T, C, TO, LD, ST, NAME##_one(a, PB_PARAM_I64))
#define PB_IPOW_INT(NAME, T, C, TO, LD, ST, EXPR) PB_IPOW_LOOPS(NAME, T, C, TO, LD, ST, 0)
#define PB_IPOW_INEXACT(NAME, T, C, TO, LD, ST, EXPR) PB_IPOW_LOOPS(NAME, T, C, TO, LD, ST, 1)
PB_FOR_INTS(PB_IPOW_INT, integer_pow, _)
INEXACT(PB_IPOW_INEXACT, integer_pow, _, _)

/* complex arithmetic through libm */
PB_FOR_COMPLEXES(UN, sign, PB_CFN(pb_csign, a))
UN(abs_c128, pb_c128, pb_c128, double, PB_LD, PB_ST, cabs(a))
PB_FOR_COMPLEXES(UN, sqrt, sqrt(a))
PB_FOR_COMPLEXES(UN, rsqrt, PB_CFN(pb_crsqrt, a))
PB_FOR_COMPLEXES(UN, exp, exp(a))
PB_FOR_COMPLEXES(UN, logistic, PB_CFN(pb_clogistic, a))
PB_FOR_FLOATS(UN, cbrt, cbrt(a))

/* transcendental */
INEXACT(UN, exp2, exp2(a), PB_CFN(pb_cexp2, a))
PB_FOR_COMPLEXES(UN, expm1, PB_CFN(pb_cexpm1, a))
PB_FOR_COMPLEXES(UN, log, log(a))
PB_FOR_COMPLEXES(UN, log1p, PB_CFN(pb_clog1p, a))
PB_FOR_COMPLEXES(UN, sin, sin(a))
PB_FOR_COMPLEXES(UN, cos, cos(a))
INEXACT(UN, tan, tan(a), tan(a))
INEXACT(UN, asin, asin(a), asin(a))
INEXACT(UN, acos, acos(a), acos(a))
INEXACT(UN, atan, atan(a), atan(a))
INEXACT(UN, sinh, sinh(a), sinh(a))
INEXACT(UN, cosh, cosh(a), cosh(a))
PB_FOR_COMPLEXES(UN, tanh, tanh(a))
INEXACT(UN, asinh, asinh(a), asinh(a))
INEXACT(UN, acosh, acosh(a), acosh(a))
INEXACT(UN, atanh, atanh(a), atanh(a))
PB_FOR_FLOATS(UN, erf, erf(a))
PB_FOR_FLOATS(UN, erfc, erfc(a))
PB_FOR_FLOATS(UN, erf_inv, PB_ERFINV(a))
PB_FOR_FLOATS(UN, lgamma, PB_LGAMMA(a))
PB_FOR_FLOATS(UN, digamma, PB_DIGAMMA(a))
/* special functions of lax (special_math.h): computed in double */
PB_FOR_FLOATS(BIN, igamma, pb_igamma(a, b, PB_SP_LOGMAX(a)))
PB_FOR_FLOATS(BIN, igammac, pb_igammac(a, b, PB_SP_LOGMAX(a)))
PB_FOR_FLOATS(BIN, igamma_grad_a, pb_igamma_grad(a, b, PB_SP_LOGMAX(a), PB_IG_DERIVATIVE))
PB_FOR_FLOATS(BIN, random_gamma_grad,
              pb_igamma_grad(a, b, PB_SP_LOGMAX(a), PB_IG_SAMPLE_DERIVATIVE))
PB_FOR_FLOATS(PB_TERNARY_GEN, regularized_incomplete_beta, pb_betainc(a, b, c, PB_SP_IS_DOUBLE(a)))
PB_FOR_FLOATS(BIN, zeta, pb_zeta(a, b))
PB_FOR_FLOATS(BIN, polygamma, pb_polygamma(a, b))
PB_FOR_FLOATS(UN, bessel_i0e, pb_bessel_ie(a, 0))
PB_FOR_FLOATS(UN, bessel_i1e, pb_bessel_ie(a, 1))

#define ALL_INT_SLOTS(N) PB_INT_SLOTS(N)
#define NUMERIC_SLOTS(N) PB_INT_SLOTS(N), PB_FLOAT_SLOTS(N), PB_COMPLEX_SLOTS(N)
#define INEXACT_SLOTS(N) PB_FLOAT_SLOTS(N), PB_COMPLEX_SLOTS(N)
#define LOGICAL_SLOTS(N) PB_BOOL_SLOTS(N), PB_INT_SLOTS(N)
#define ORDERED_SLOTS(N) PB_BOOL_SLOTS(N), PB_INT_SLOTS(N), PB_FLOAT_SLOTS(N)
#define ANY_SLOTS(N) ORDERED_SLOTS(N), PB_COMPLEX_SLOTS(N)

#define CHEAP PB_GRAIN_CHEAP
#define COSTLY PB_GRAIN_TRANSCENDENTAL

static const pb_ewise_op ops[] = {
  /* binary */
  {"add", 2, PB_OUT_SAME, CHEAP, 0, {NUMERIC_SLOTS(add)}},
  {"sub", 2, PB_OUT_SAME, CHEAP, 0, {NUMERIC_SLOTS(sub)}},
  {"mul", 2, PB_OUT_SAME, CHEAP, 0, {NUMERIC_SLOTS(mul)}},
  {"gcd", 2, PB_OUT_SAME, COSTLY, 0, {PB_INT_SLOTS(gcd)}},
  {"lcm", 2, PB_OUT_SAME, COSTLY, 0, {PB_INT_SLOTS(lcm)}},
  {"div", 2, PB_OUT_SAME, COSTLY, 0, {NUMERIC_SLOTS(div)}},
  {"rem", 2, PB_OUT_SAME, COSTLY, 0, {PB_INT_SLOTS(rem), PB_FLOAT_SLOTS(rem)}},
  {"pow", 2, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(pow)}},
  {"atan2", 2, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(atan2)}},
  {"max", 2, PB_OUT_SAME, CHEAP, 0, {ANY_SLOTS(max)}},
  {"min", 2, PB_OUT_SAME, CHEAP, 0, {ANY_SLOTS(min)}},
  {"nextafter", 2, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(nextafter)}},
  {"complex", 2, PB_OUT_COMPLEX, CHEAP, 0, {PB_REAL_SLOTS(complex)}},
  {"and", 2, PB_OUT_SAME, CHEAP, 0, {LOGICAL_SLOTS(and)}},
  {"or", 2, PB_OUT_SAME, CHEAP, 0, {LOGICAL_SLOTS(or)}},
  {"xor", 2, PB_OUT_SAME, CHEAP, 0, {LOGICAL_SLOTS(xor)}},
  {"shift_left", 2, PB_OUT_SAME, CHEAP, 0, {PB_INT_SLOTS(shift_left)}},
  {"shift_right_logical", 2, PB_OUT_SAME, CHEAP, 0, {PB_INT_SLOTS(shift_right_logical)}},
  {"shift_right_arithmetic", 2, PB_OUT_SAME, CHEAP, 0, {PB_INT_SLOTS(shift_right_arithmetic)}},
  {"eq", 2, PB_OUT_BOOL, CHEAP, 0, {ANY_SLOTS(eq)}},
  {"ne", 2, PB_OUT_BOOL, CHEAP, 0, {ANY_SLOTS(ne)}},
  {"lt", 2, PB_OUT_BOOL, CHEAP, 0, {ORDERED_SLOTS(lt)}},
  {"le", 2, PB_OUT_BOOL, CHEAP, 0, {ORDERED_SLOTS(le)}},
  {"gt", 2, PB_OUT_BOOL, CHEAP, 0, {ORDERED_SLOTS(gt)}},
  {"ge", 2, PB_OUT_BOOL, CHEAP, 0, {ORDERED_SLOTS(ge)}},
  /* ternary */
  {"clamp", 3, PB_OUT_SAME, CHEAP, 0, {ORDERED_SLOTS(clamp)}},
  /* unary */
  {"neg", 1, PB_OUT_SAME, CHEAP, 0, {NUMERIC_SLOTS(neg)}},
  {"square", 1, PB_OUT_SAME, CHEAP, 0, {NUMERIC_SLOTS(square)}},
  {"reduce_precision", 1, PB_OUT_SAME, CHEAP, 2, {PB_FLOAT_SLOTS(reduce_precision)}},
  {"sign", 1, PB_OUT_SAME, CHEAP, 0, {NUMERIC_SLOTS(sign)}},
  {"abs", 1, PB_OUT_REAL, CHEAP, 0, {PB_SINT_SLOTS(abs), INEXACT_SLOTS(abs)}},
  {"reciprocal", 1, PB_OUT_SAME, CHEAP, 0, {INEXACT_SLOTS(reciprocal)}},
  {"sqrt", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(sqrt)}},
  {"rsqrt", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(rsqrt)}},
  {"cbrt", 1, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(cbrt)}},
  /* (a few products: as cheap as mul for the small exponents it is written with) */
  {"integer_pow", 1, PB_OUT_SAME, CHEAP, 1, {NUMERIC_SLOTS(integer_pow)}},
  {"exp", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(exp)}},
  {"exp2", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(exp2)}},
  {"expm1", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(expm1)}},
  {"log", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(log)}},
  {"log1p", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(log1p)}},
  {"logistic", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(logistic)}},
  {"sin", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(sin)}},
  {"cos", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(cos)}},
  {"tan", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(tan)}},
  {"asin", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(asin)}},
  {"acos", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(acos)}},
  {"atan", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(atan)}},
  {"sinh", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(sinh)}},
  {"cosh", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(cosh)}},
  {"tanh", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(tanh)}},
  {"asinh", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(asinh)}},
  {"acosh", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(acosh)}},
  {"atanh", 1, PB_OUT_SAME, COSTLY, 0, {INEXACT_SLOTS(atanh)}},
  {"floor", 1, PB_OUT_SAME, CHEAP, 0, {PB_FLOAT_SLOTS(floor)}},
  {"ceil", 1, PB_OUT_SAME, CHEAP, 0, {PB_FLOAT_SLOTS(ceil)}},
  {"round", 1, PB_OUT_SAME, CHEAP, 0, {PB_FLOAT_SLOTS(round)}},
  {"round_even", 1, PB_OUT_SAME, CHEAP, 0, {PB_FLOAT_SLOTS(round_even)}},
  {"trunc", 1, PB_OUT_SAME, CHEAP, 0, {PB_FLOAT_SLOTS(trunc)}},
  {"is_finite", 1, PB_OUT_BOOL, CHEAP, 0, {PB_FLOAT_SLOTS(is_finite)}},
  {"erf", 1, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(erf)}},
  {"erfc", 1, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(erfc)}},
  {"erf_inv", 1, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(erf_inv)}},
  {"lgamma", 1, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(lgamma)}},
  {"digamma", 1, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(digamma)}},
  {"igamma", 2, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(igamma)}},
  {"igammac", 2, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(igammac)}},
  {"igamma_grad_a", 2, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(igamma_grad_a)}},
  {"random_gamma_grad", 2, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(random_gamma_grad)}},
  {"regularized_incomplete_beta", 3, PB_OUT_SAME, COSTLY, 0,
   {PB_FLOAT_SLOTS(regularized_incomplete_beta)}},
  {"zeta", 2, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(zeta)}},
  {"polygamma", 2, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(polygamma)}},
  {"bessel_i0e", 1, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(bessel_i0e)}},
  {"bessel_i1e", 1, PB_OUT_SAME, COSTLY, 0, {PB_FLOAT_SLOTS(bessel_i1e)}},
  {"not", 1, PB_OUT_SAME, CHEAP, 0, {LOGICAL_SLOTS(not)}},
  {"population_count", 1, PB_OUT_SAME, CHEAP, 0, {PB_INT_SLOTS(population_count)}},
  {"clz", 1, PB_OUT_SAME, CHEAP, 0, {PB_INT_SLOTS(clz)}},
  {"real", 1, PB_OUT_REAL, CHEAP, 0, {PB_COMPLEX_SLOTS(real)}},
  {"imag", 1, PB_OUT_REAL, CHEAP, 0, {PB_COMPLEX_SLOTS(imag)}},
  {"conj", 1, PB_OUT_COMPLEX, CHEAP, 0, {PB_REAL_SLOTS(conj), PB_COMPLEX_SLOTS(conj)}},
};
#define NOPS ((int)(sizeof(ops) / sizeof(ops[0])))

static int out_slot(int kind, int slot) {
  switch (kind) {
    case PB_OUT_BOOL: return PB_BOOL;
    case PB_OUT_REAL: return slot == PB_C64 ? PB_F32 : slot == PB_C128 ? PB_F64 : slot;
    case PB_OUT_COMPLEX: return slot == PB_F32 ? PB_C64 : slot == PB_F64 ? PB_C128 : slot;
    default: return slot;
  }
}

static const char *const argnames[4] = {"x", "y", "z", "w"};

/* The output shape of operands that share one shape, 0-d ones broadcasting (through *shape, which
 * NumPy leaves NULL for 0-d arrays); -1 with an exception when they don't. */
static int common_shape(const char *name, PyArrayObject *const *in, int nin, int *ndim,
                        const npy_intp **shape_out) {
  int ref = 0;
  for (int i = 1; i < nin; ++i)
    if (PyArray_NDIM(in[i]) > PyArray_NDIM(in[ref])) ref = i;
  *ndim = PyArray_NDIM(in[ref]);
  const npy_intp *shape = PyArray_SHAPE(in[ref]);
  for (int i = 0; i < nin; ++i) {
    int nd = PyArray_NDIM(in[i]);
    if (nd != 0 && (nd != *ndim || !PyArray_CompareLists(PyArray_SHAPE(in[i]), shape, nd))) {
      PyErr_Format(PyExc_ValueError,
                   "%s: operands must have equal shapes or be 0-d (broadcast first); argument "
                   "'%s' differs", name, argnames[i]);
      return -1;
    }
  }
  *shape_out = shape;
  return 0;
}

/* Runs fn over operands in[0..nin) and out, splitting over threads (and releasing the GIL)
 * when the work is large enough. */
static void run(int ndim, const npy_intp *shape, PyArrayObject *const *in, int nin,
                PyArrayObject *out, pb_loop_fn fn, const void *params, npy_intp grain) {
  char *base[PB_MAXDIMS];
  npy_intp strides[8 * PB_MAXDIMS];
  for (int i = 0; i < nin; ++i) {
    base[i] = PyArray_BYTES(in[i]);
    for (int d = 0; d < ndim; ++d)
      strides[i * ndim + d] = PyArray_NDIM(in[i]) ? PyArray_STRIDES(in[i])[d] : 0;
  }
  base[nin] = PyArray_BYTES(out);
  for (int d = 0; d < ndim; ++d) strides[nin * ndim + d] = PyArray_STRIDES(out)[d];
  npy_intp n = PyArray_SIZE(out);
  if (n >= PB_NOGIL_MIN) {
    int threads = pb_threads_for(n, grain);
    Py_BEGIN_ALLOW_THREADS
    pb_iterate(ndim, shape, nin + 1, base, strides, fn, params, threads);
    Py_END_ALLOW_THREADS
  } else {
    pb_iterate(ndim, shape, nin + 1, base, strides, fn, params, 1);
  }
}

/* ewise(code, *operands[, param]) -> new C-contiguous array */
static PyObject *ewise(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError, "ewise: expected an op code");
    return NULL;
  }
  long code = PyLong_AsLong(args[0]);
  if (code == -1 && PyErr_Occurred()) return NULL;
  if (code < 0 || code >= NOPS) {
    PyErr_Format(PyExc_ValueError, "ewise: unknown op code %ld", code);
    return NULL;
  }
  const pb_ewise_op *op = &ops[code];
  if (nargs - 1 != op->nin + op->nparams) {
    PyErr_Format(PyExc_TypeError, "%s: expected %d operands%s, got %zd arguments", op->name,
                 op->nin, op->nparams == 1 ? " and an int parameter"
                          : op->nparams ? " and int parameters" : "", nargs - 1);
    return NULL;
  }
  int64_t param[PB_EWISE_MAXPARAMS] = {0};
  for (int i = 0; i < op->nparams; ++i) {
    long long v = PyLong_AsLongLong(args[1 + op->nin + i]);
    if (v == -1 && PyErr_Occurred()) return NULL;
    param[i] = (int64_t)v;
  }
  PyArrayObject *in[3];
  for (int i = 0; i < op->nin; ++i)
    if (!(in[i] = pb_arg_array(args[i + 1], op->name, argnames[i]))) return NULL;
  int ndim;
  const npy_intp *shape;
  if (common_shape(op->name, in, op->nin, &ndim, &shape) < 0) return NULL;
  int slot = pb_dtype_slot(PyArray_DESCR(in[0]));
  for (int i = 1; i < op->nin; ++i)
    if (pb_dtype_slot(PyArray_DESCR(in[i])) != slot) {
      PyErr_Format(PyExc_TypeError, "%s: operands must have equal dtypes; argument '%s' is %S, "
                   "argument 'x' is %S", op->name, argnames[i], (PyObject *)PyArray_DESCR(in[i]),
                   (PyObject *)PyArray_DESCR(in[0]));
      return NULL;
    }
  pb_loop_fn fn = slot >= 0 ? op->loops[slot] : NULL;
  if (!fn) {
    PyErr_Format(PyExc_TypeError, "%s: dtype %S is not supported", op->name,
                 (PyObject *)PyArray_DESCR(in[0]));
    return NULL;
  }
  PyArray_Descr *od = pb_descr_for_slot(out_slot(op->out_kind, slot));
  if (!od) return NULL;
  PyArrayObject *out = pb_new_array(ndim, shape, od);
  if (!out) return NULL;
  run(ndim, shape, in, op->nin, out, fn, param, op->grain);
  return (PyObject *)out;
}

/* ---- select_n(which, *cases): cases[clamp(which, 0, n - 1)] ----
 * Loops go by element size (selection only moves bytes) and which's dtype (bool or int32). A
 * pass takes up to SELECT_MAX cases (pb_iterate's operand limit); more cases take more passes,
 * each writing only the elements whose index falls in its range, so every element is written
 * exactly once. */
#define SELECT_MAX 6
typedef struct { uint64_t lo, hi; } pb_b16;
typedef struct {
  int first, count; /* this pass's cases: [first, first + count) */
  int64_t last;     /* n - 1: indices clamp to [0, last] */
} select_params;

/* Two cases, each contiguous (i) or one broadcast element (0): the vectorizing loops (a relu's
 * derivative selects between a tile and a scalar 0 or 1) */
#define SELECT2(NAME, W, T, IA, IB)                                                                \
  static PB_CLONES void NAME(const W *restrict w, const T *restrict a, const T *restrict b,        \
                             T *restrict y, npy_intp n) {                                          \
    for (npy_intp i = 0; i < n; ++i) { /* both read first: branch-free, so it vectorizes */     \
      const T x0 = a[IA], x1 = b[IB];                                                              \
      y[i] = w[i] > 0 ? x1 : x0;                                                                   \
    }                                                                                              \
  }
#define SELECT_LOOP(NAME, W, T)                                                                    \
  SELECT2(NAME##_vv, W, T, i, i) SELECT2(NAME##_vs, W, T, i, 0) SELECT2(NAME##_sv, W, T, 0, i)     \
  SELECT2(NAME##_ss, W, T, 0, 0)                                                                   \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                     \
    const select_params *sp = prm;                                                                 \
    const int m = sp->count;                                                                       \
    const npy_intp es = (npy_intp)sizeof(T);                                                       \
    if (m == 2 && sp->first == 0 && sp->last == 1 && s[0] == (npy_intp)sizeof(W) &&                \
        s[3] == es && (s[1] == es || s[1] == 0) && (s[2] == es || s[2] == 0)) {                    \
      void (*f)(const W *, const T *, const T *, T *, npy_intp) =                                  \
          s[1] ? (s[2] ? NAME##_vv : NAME##_vs) : (s[2] ? NAME##_sv : NAME##_ss);                  \
      f((const W *)p[0], (const T *)p[1], (const T *)p[2], (T *)p[3], n);                          \
      return;                                                                                      \
    }                                                                                              \
    const char *pw = p[0];                                                                         \
    char *py = p[m + 1];                                                                           \
    for (npy_intp i = 0; i < n; ++i, pw += s[0], py += s[m + 1]) {                                 \
      int64_t k = (int64_t) * (const W *)pw;                                                       \
      k = (k < 0 ? 0 : k > sp->last ? sp->last : k) - sp->first;                                   \
      if (k >= 0 && k < m) *(T *)py = *(const T *)(p[1 + k] + i * s[1 + k]);                       \
    }                                                                                              \
  }
#define SELECT_SIZES(W, SUF)                                                                       \
  SELECT_LOOP(select_##SUF##_1, W, uint8_t) SELECT_LOOP(select_##SUF##_2, W, uint16_t)             \
  SELECT_LOOP(select_##SUF##_4, W, uint32_t) SELECT_LOOP(select_##SUF##_8, W, uint64_t)            \
  SELECT_LOOP(select_##SUF##_16, W, pb_b16)
SELECT_SIZES(uint8_t, b)
SELECT_SIZES(int32_t, i32)

static pb_loop_fn select_loop(int which_slot, npy_intp size) {
  static const pb_loop_fn b[] = {select_b_1, select_b_2, select_b_4, select_b_8, select_b_16};
  static const pb_loop_fn i[] = {select_i32_1, select_i32_2, select_i32_4, select_i32_8,
                                 select_i32_16};
  int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : size == 16 ? 4 : -1;
  if (k < 0) return NULL;
  return which_slot == PB_BOOL ? b[k] : i[k];
}

static PyObject *select_n(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 2) {
    PyErr_SetString(PyExc_TypeError, "select_n: expected 'which' and at least one case");
    return NULL;
  }
  PyArrayObject *which = pb_arg_array(args[0], "select_n", "which");
  if (!which) return NULL;
  int wslot = pb_dtype_slot(PyArray_DESCR(which));
  if (wslot != PB_BOOL && wslot != PB_I32) {
    PyErr_Format(PyExc_TypeError, "select_n: argument 'which' must be bool or int32, got %S",
                 (PyObject *)PyArray_DESCR(which));
    return NULL;
  }
  const int ncases = (int)(nargs - 1);
  if (wslot == PB_BOOL && ncases > 2) {
    PyErr_Format(PyExc_ValueError, "select_n: a bool 'which' selects between at most 2 cases, "
                 "got %d", ncases);
    return NULL;
  }
  PyArrayObject *c0 = pb_arg_array(args[1], "select_n", "cases");
  if (!c0) return NULL;
  const int ndim = PyArray_NDIM(c0);
  const npy_intp *shape = PyArray_SHAPE(c0);
  for (int i = 1; i < ncases; ++i) {
    PyArrayObject *c = pb_arg_array(args[i + 1], "select_n", "cases");
    if (!c) return NULL;
    if (PyArray_NDIM(c) != ndim || !PyArray_CompareLists(PyArray_SHAPE(c), shape, ndim)) {
      PyErr_Format(PyExc_ValueError, "select_n: argument 'cases' must have one shape; case %d "
                   "differs from case 0", i);
      return NULL;
    }
    if (!PyArray_EquivTypes(PyArray_DESCR(c), PyArray_DESCR(c0))) {
      PyErr_Format(PyExc_TypeError, "select_n: argument 'cases' must have one dtype; case %d "
                   "is %S, case 0 is %S", i, (PyObject *)PyArray_DESCR(c),
                   (PyObject *)PyArray_DESCR(c0));
      return NULL;
    }
  }
  if (PyArray_NDIM(which) != 0 &&
      (PyArray_NDIM(which) != ndim || !PyArray_CompareLists(PyArray_SHAPE(which), shape, ndim))) {
    PyErr_SetString(PyExc_ValueError, "select_n: argument 'which' must be 0-d or have the "
                    "cases' shape");
    return NULL;
  }
  pb_loop_fn fn = select_loop(wslot, PyArray_ITEMSIZE(c0));
  if (!fn || PyArray_DESCR(c0)->type_num == NPY_OBJECT) {
    PyErr_Format(PyExc_TypeError, "select_n: dtype %S is not supported",
                 (PyObject *)PyArray_DESCR(c0));
    return NULL;
  }
  Py_INCREF(PyArray_DESCR(c0));
  PyArrayObject *out = pb_new_array(ndim, shape, PyArray_DESCR(c0));
  if (!out) return NULL;
  for (int first = 0; first < ncases; first += SELECT_MAX) {
    select_params sp = {first, ncases - first < SELECT_MAX ? ncases - first : SELECT_MAX,
                        ncases - 1};
    PyArrayObject *in[SELECT_MAX + 1];
    in[0] = which;
    for (int k = 0; k < sp.count; ++k) in[1 + k] = (PyArrayObject *)args[1 + first + k];
    run(ndim, shape, in, 1 + sp.count, out, fn, &sp, PB_GRAIN_CHEAP);
  }
  return (PyObject *)out;
}

/* ---- accessors for the compiled-program executor (schedule.c) ---- */
int pb_ewise_nops(void) { return NOPS; }
pb_loop_fn pb_ewise_loop(int op, int slot) {
  return op >= 0 && op < NOPS && slot >= 0 && slot < PB_NDT ? ops[op].loops[slot] : NULL;
}
npy_intp pb_ewise_grain(int op) { return op >= 0 && op < NOPS ? ops[op].grain : PB_GRAIN_CHEAP; }
int pb_ewise_nin(int op) { return op >= 0 && op < NOPS ? ops[op].nin : -1; }
int pb_ewise_row(const char *name) {
  for (int i = 0; i < NOPS; ++i)
    if (!strcmp(ops[i].name, name)) return i;
  return -1;
}
static const struct {
  const char *op;
  pb_loop_fn loops[4];
} pairs[] = {PB_PAIRS_ROW("exp", exp_f32), PB_PAIRS_ROW("sin", sin_f32),
             PB_PAIRS_ROW("cos", cos_f32), PB_PAIRS_ROW("log", log_f32),
             PB_PAIRS_ROW("tanh", tanh_f32), PB_PAIRS_ROW("logistic", logistic_f32)};
pb_loop_fn pb_pair_loop(int op, int variant) {
  if (op < 0 || op >= NOPS || variant < 0 || variant >= 4) return NULL;
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); ++i)
    if (!strcmp(pairs[i].op, ops[op].name)) return pairs[i].loops[variant];
  return NULL;
}
pb_loop_fn pb_select_loop(int which_slot, npy_intp itemsize) {
  if (which_slot != PB_BOOL && which_slot != PB_I32) return NULL;
  return select_loop(which_slot, itemsize);
}
_Static_assert(sizeof(pb_select_params) == sizeof(select_params) && SELECT_MAX == PB_SELECT_MAX,
               "schedule.h mirrors select_n's parameter block");

static PyMethodDef methods[] = {
  {"ewise", (PyCFunction)(void (*)(void))ewise, METH_FASTCALL,
   "ewise(code, *operands[, param]): run element-wise op `code` (see EWISE_OPS) on same-shape "
   "(or 0-d), same-dtype arrays of any strides; returns a new C-contiguous array."},
  {"select_n", (PyCFunction)(void (*)(void))select_n, METH_FASTCALL,
   "select_n(which, *cases): cases[clamp(which, 0, len(cases) - 1)] element-wise; which is "
   "bool or int32, 0-d or of the cases' shape; returns a new C-contiguous array."},
  {NULL, NULL, 0, NULL}};

int pb_register_elementwise(PyObject *m) {
  if (PyModule_AddFunctions(m, methods) < 0) return -1;
  PyObject *codes = PyDict_New();
  if (!codes) return -1;
  for (int i = 0; i < NOPS; ++i) {
    PyObject *v = PyLong_FromLong(i);
    if (!v || PyDict_SetItemString(codes, ops[i].name, v) < 0) { Py_XDECREF(v); Py_DECREF(codes); return -1; }
    Py_DECREF(v);
  }
  if (PyModule_AddObject(m, "EWISE_OPS", codes) < 0) { Py_DECREF(codes); return -1; }
  /* Each row's facts, for the import-time check against the primitives' declarations
   * (backends/cpu/op_facts.py): (name, arity, int parameters, ((dtype slot, output slot), ...)
   * for every slot with a loop). */
  PyObject *rows = PyTuple_New(NOPS);
  if (!rows) return -1;
  for (int i = 0; i < NOPS; ++i) {
    PyObject *loops = PyList_New(0);
    if (!loops) { Py_DECREF(rows); return -1; }
    for (int slot = 0; slot < PB_NDT; ++slot) {
      if (!ops[i].loops[slot]) continue;
      PyObject *pair = Py_BuildValue("(ii)", slot, out_slot(ops[i].out_kind, slot));
      const int bad = !pair || PyList_Append(loops, pair) < 0;
      Py_XDECREF(pair);
      if (bad) { Py_DECREF(loops); Py_DECREF(rows); return -1; }
    }
    PyObject *row = Py_BuildValue("(siiN)", ops[i].name, ops[i].nin, ops[i].nparams,
                                  PyList_AsTuple(loops));
    Py_DECREF(loops);
    if (!row) { Py_DECREF(rows); return -1; }
    PyTuple_SET_ITEM(rows, i, row);
  }
  return PyModule_AddObject(m, "EWISE_ROWS", rows) < 0 ? (Py_DECREF(rows), -1) : 0;
}
