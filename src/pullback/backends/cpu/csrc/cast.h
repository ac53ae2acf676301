/* What the conversion family knows about dtypes beyond pb.h's slots, shared with dot.c: the
 * float8 formats of ml_dtypes get slots after pb.h's, with their decode tables and encoders,
 * and the float-to-integer conversion every kernel uses (C casts of out-of-range values are
 * undefined behaviour, so pullback defines them: truncate toward zero, saturate, NaN -> 0). */
#ifndef PB_CAST_H
#define PB_CAST_H
#include "pb.h"

enum { PB_F8E4M3FN = PB_NDT, PB_F8E5M2, PB_F8E4M3FNUZ, PB_F8E5M2FNUZ, PB_NCAST };

/* Slot of any dtype the conversion kernels know (pb.h's plus the float8 formats), -1 if none. */
int pb_cast_slot(PyArray_Descr *d);
/* The dtype of a slot (new reference; NULL with an exception set). */
PyArray_Descr *pb_cast_descr(int slot);

/* float8 formats. The value of each of the 256 codes, exactly, as float32. */
extern float pb_f8_value[4][256];

/* Encoding a float32 as float8 with round-to-nearest-even. `kind` says how the format spends
 * its top codes: IEEE-like (e5m2: infinities, NaN 0x7e), FN (e4m3fn: no infinity, NaN 0x7f;
 * overflow and inf become NaN), FNUZ (no infinity, no -0, the one NaN is 0x80). These are
 * ml_dtypes' (and XLA's) non-saturating rules. */
enum { PB_F8_IEEE, PB_F8_FN, PB_F8_FNUZ };

static inline uint8_t pb_f8_encode(float f, int mbits, int bias, int kind, uint32_t maxcode) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 24) & 0x80u;
  u &= 0x7fffffffu;
  const uint32_t nan = kind == PB_F8_FNUZ ? 0x80u : sign | (kind == PB_F8_FN ? 0x7fu : 0x7eu);
  if (u > 0x7f800000u) return (uint8_t)nan;
  const int emin = 1 - bias;   /* exponent of the smallest normal */
  uint32_t r;
  if (u >= (uint32_t)(emin + 127) << 23) {
    /* normal: round the float's 23-bit mantissa to mbits bits (a carry bumps the exponent) */
    const int shift = 23 - mbits;
    r = (u + ((1u << (shift - 1)) - 1u) + ((u >> shift) & 1u)) >> shift;
    r -= (uint32_t)(127 - bias) << mbits;
    if (r > maxcode) return (uint8_t)(kind == PB_F8_IEEE ? sign | 0x7cu : nan);
  } else {
    /* subnormal: adding 2^(emin - mbits + 23) makes the FPU round at the subnormal quantum
     * (nearest even); the low bits of the sum are then the code (2^mbits = smallest normal) */
    uint32_t mu = (uint32_t)(emin - mbits + 23 + 127) << 23, su;
    float magic, a, s;
    __builtin_memcpy(&magic, &mu, 4);
    __builtin_memcpy(&a, &u, 4);
    s = a + magic;
    __builtin_memcpy(&su, &s, 4);
    r = su - mu;
  }
  if (kind == PB_F8_FNUZ && r == 0) return 0;
  return (uint8_t)(sign | r);
}

#define PB_F8_E4M3FN(f) pb_f8_encode((f), 3, 7, PB_F8_FN, 0x7eu)
#define PB_F8_E5M2(f) pb_f8_encode((f), 2, 15, PB_F8_IEEE, 0x7bu)
#define PB_F8_E4M3FNUZ(f) pb_f8_encode((f), 3, 8, PB_F8_FNUZ, 0x7fu)
#define PB_F8_E5M2FNUZ(f) pb_f8_encode((f), 2, 16, PB_F8_FNUZ, 0x7fu)

/* float16 <-> float32 on the bits, branch-free so that loops vectorize in every clone (GCC 12
 * turns _Float16 conversions into one scalar instruction or a libgcc call per element). */
static inline float pb_half_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu;
  uint32_t u = em << 13, r;
  float f;
  __builtin_memcpy(&f, &u, 4);
  f *= 0x1p112f; /* rebias 15 -> 127; exact for subnormal halves too */
  __builtin_memcpy(&r, &f, 4);
  r = em >= 0x7c00u ? u | 0x7f800000u : r; /* inf and NaN keep their mantissa */
  r |= sign;
  __builtin_memcpy(&f, &r, 4);
  return f;
}

static inline uint16_t pb_float_to_half(float f) {
  uint32_t u, su;
  __builtin_memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  /* subnormal halves: adding 0.5 makes the FPU round at the half subnormal quantum 2^-24 */
  float a, s;
  __builtin_memcpy(&a, &u, 4);
  s = a + 0.5f;
  __builtin_memcpy(&su, &s, 4);
  const uint32_t sub = su - 0x3f000000u;
  /* normal halves: rebias the exponent and round the mantissa to 10 bits, to nearest even (a
   * carry out of the mantissa bumps the exponent, up to infinity) */
  const uint32_t nrm = (u + 0xc8000fffu + ((u >> 13) & 1u)) >> 13;
  const uint32_t big = u > 0x7f800000u ? 0x7e00u | ((u >> 13) & 0x3ffu) : 0x7c00u;
  const uint32_t r = u >= 0x47800000u ? big : u < 0x38800000u ? sub : nrm;
  return (uint16_t)(r | sign);
}

/* float64 -> float32 rounding to odd: rounding that once more to a format at least two bits
 * narrower gives the correctly rounded result (used for float64 -> float16). */
static inline float pb_f64_to_f32_odd(double d) {
  float f = (float)d;
  const double back = (double)f;
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  const bool inexact = back != d && d == d;
  u -= inexact && __builtin_fabs(back) > __builtin_fabs(d); /* toward zero */
  u |= inexact;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

/* float (FT) -> integer (T): truncate toward zero; values at or beyond the range saturate to
 * it (inf included) and NaN gives 0. HI is 2^(bits-1) (signed) or 2^bits (unsigned), LO is
 * -2^(bits-1) or 0: both exact in every float type. Only in-range values reach the C cast. */
#define PB_SATURATE(NAME, FT, T, LO, HI, TMIN, TMAX)                                             \
  static inline T NAME(FT x) {                                                                  \
    T r = (T)(x > (FT)(LO) && x < (FT)(HI) ? x : (FT)0);                                        \
    r = x >= (FT)(HI) ? (T)(TMAX) : r;                                                          \
    return x <= (FT)(LO) ? (T)(TMIN) : r;                                                       \
  }
#define PB_SATURATE_ALL(FT, SFX)                                                                \
  PB_SATURATE(pb_##SFX##_to_i8, FT, int8_t, -128.0, 128.0, INT8_MIN, INT8_MAX)                  \
  PB_SATURATE(pb_##SFX##_to_i16, FT, int16_t, -32768.0, 32768.0, INT16_MIN, INT16_MAX)          \
  PB_SATURATE(pb_##SFX##_to_i32, FT, int32_t, -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX) \
  PB_SATURATE(pb_##SFX##_to_i64, FT, int64_t, -9223372036854775808.0, 9223372036854775808.0,    \
              INT64_MIN, INT64_MAX)                                                             \
  PB_SATURATE(pb_##SFX##_to_u8, FT, uint8_t, 0.0, 256.0, 0, UINT8_MAX)                          \
  PB_SATURATE(pb_##SFX##_to_u16, FT, uint16_t, 0.0, 65536.0, 0, UINT16_MAX)                     \
  PB_SATURATE(pb_##SFX##_to_u32, FT, uint32_t, 0.0, 4294967296.0, 0, UINT32_MAX)                \
  PB_SATURATE(pb_##SFX##_to_u64, FT, uint64_t, 0.0, 18446744073709551616.0, 0, UINT64_MAX)
PB_SATURATE_ALL(float, f32)
PB_SATURATE_ALL(double, f64)

#endif
