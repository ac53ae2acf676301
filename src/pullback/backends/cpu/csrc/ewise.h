/* Loop generators for element-wise kernels. An op is one table row (name, arity, output dtype
 * kind, per-dtype loops); the loops come from these macros so every op gets the same contiguous,
 * scalar-broadcast and strided paths.
 *
 * A loop is generated from (T, C, TO, LD, ST, EXPR): elements of memory type T are loaded with
 * LD into the compute type C (the operands are the variables `a`, `b`, `c` in EXPR), and EXPR's
 * value is stored with ST(TO, v) as memory type TO. Native types load and store by plain
 * conversion; float16/bfloat16 load into float32 and round once on store. EXPR may read the op's
 * parameter block through `prm` (see PB_PARAM_I64).
 */
#ifndef PB_EWISE_H
#define PB_EWISE_H
#include "pb.h"
#include <math.h>
#include <complex.h>

typedef float _Complex pb_c64;
typedef double _Complex pb_c128;

/* Output dtype of an element-wise op relative to its (common) input dtype. */
enum {
  PB_OUT_SAME,
  PB_OUT_BOOL,
  PB_OUT_REAL,    /* complex -> its real type, real -> itself */
  PB_OUT_COMPLEX, /* float32 -> complex64, float64 -> complex128, complex -> itself */
};

typedef struct {
  const char *name;
  int nin;
  int out_kind;
  npy_intp grain;  /* elements per thread below which OpenMP is not worth it */
  int nparams;     /* trailing int64 arguments, read by the loops through prm */
  pb_loop_fn loops[PB_NDT];
} pb_ewise_op;

/* A loop's parameter block is int64_t[PB_EWISE_MAXPARAMS] (a compiled step's params). */
#define PB_EWISE_MAXPARAMS 4
#define PB_PARAM_I64 (*(const int64_t *)prm)
#define PB_PARAM_I64_AT(i) (((const int64_t *)prm)[i])

/* Attribute of the generated contiguous loops, read where a generator is instantiated: hot
 * vectorizable loops keep the target clones; a family file may redefine it to nothing around
 * loops that only call into libm, where three clones would cost build time and buy nothing. */
#ifndef PB_LOOP_ATTR
#define PB_LOOP_ATTR PB_CLONES
#endif
/* Attribute of the strided (dispatching) loops: none by default. A section whose contiguous
 * loops compile differently per clone (FMA contraction) clones these too, so a result never
 * depends on the operands' layout. */
#ifndef PB_STRIDED_ATTR
#define PB_STRIDED_ATTR
#endif

/* ---- loads and stores ---- */
#define PB_LD(x) (x)
#define PB_ST(TO, v) ((TO)(v))
#define PB_LD_F16(x) ((float)(x))
#define PB_ST_F16(TO, v) ((pb_f16)(float)(v))
#define PB_LD_BF16(x) pb_bf16_to_f32(x)
#define PB_ST_BF16(TO, v) pb_f32_to_bf16((float)(v))

/* y = EXPR(a) */
#define PB_UNARY_GEN(NAME, T, C, TO, LD, ST, EXPR)                                                 \
  static PB_LOOP_ATTR void NAME##_contig(const T *restrict x, TO *restrict y, npy_intp n,          \
                                      const void *prm) {                                           \
    for (npy_intp i = 0; i < n; ++i) { const C a = LD(x[i]); y[i] = ST(TO, EXPR); }                \
  }                                                                                                \
  PB_UNARY_STRIDED(NAME, T, C, TO, LD, ST, EXPR)

/* The strided entry point NAME of a unary loop: NAME##_contig when both sides are contiguous,
 * else y = EXPR(a) element by element */
#define PB_UNARY_STRIDED(NAME, T, C, TO, LD, ST, EXPR)                                             \
  static PB_STRIDED_ATTR void NAME(char **p, const npy_intp *s, npy_intp n,                        \
                                    const void *prm) {                                             \
    if (s[0] == (npy_intp)sizeof(T) && s[1] == (npy_intp)sizeof(TO)) {                             \
      NAME##_contig((const T *)p[0], (TO *)p[1], n, prm);                                          \
      return;                                                                                      \
    }                                                                                              \
    char *px = p[0], *py = p[1];                                                                   \
    for (npy_intp i = 0; i < n; ++i, px += s[0], py += s[1]) {                                     \
      const C a = LD(*(const T *)px); *(TO *)py = ST(TO, EXPR);                                    \
    }                                                                                              \
  }

/* y = EXPR(a, b), with fast paths for both contiguous and for either side a broadcast scalar */
#define PB_BINARY_GEN(NAME, T, C, TO, LD, ST, EXPR)                                                \
  static PB_LOOP_ATTR void NAME##_vv(const T *restrict x, const T *restrict z, TO *restrict y,     \
                                  npy_intp n, const void *prm) {                                   \
    for (npy_intp i = 0; i < n; ++i) { const C a = LD(x[i]), b = LD(z[i]); y[i] = ST(TO, EXPR); }  \
  }                                                                                                \
  static PB_LOOP_ATTR void NAME##_sv(const C a, const T *restrict z, TO *restrict y, npy_intp n,   \
                                  const void *prm) {                                               \
    for (npy_intp i = 0; i < n; ++i) { const C b = LD(z[i]); y[i] = ST(TO, EXPR); }                \
  }                                                                                                \
  static PB_LOOP_ATTR void NAME##_vs(const T *restrict x, const C b, TO *restrict y, npy_intp n,   \
                                  const void *prm) {                                               \
    for (npy_intp i = 0; i < n; ++i) { const C a = LD(x[i]); y[i] = ST(TO, EXPR); }                \
  }                                                                                                \
  static PB_STRIDED_ATTR void NAME(char **p, const npy_intp *s, npy_intp n,                        \
                                    const void *prm) {                                             \
    const npy_intp es = (npy_intp)sizeof(T);                                                       \
    if (s[2] == (npy_intp)sizeof(TO)) {                                                            \
      if (s[0] == es && s[1] == es) {                                                              \
        NAME##_vv((const T *)p[0], (const T *)p[1], (TO *)p[2], n, prm); return;                   \
      }                                                                                            \
      if (s[0] == 0 && s[1] == es) {                                                               \
        NAME##_sv(LD(*(const T *)p[0]), (const T *)p[1], (TO *)p[2], n, prm); return;              \
      }                                                                                            \
      if (s[0] == es && s[1] == 0) {                                                               \
        NAME##_vs((const T *)p[0], LD(*(const T *)p[1]), (TO *)p[2], n, prm); return;              \
      }                                                                                            \
    }                                                                                              \
    char *px = p[0], *pz = p[1], *py = p[2];                                                       \
    for (npy_intp i = 0; i < n; ++i, px += s[0], pz += s[1], py += s[2]) {                         \
      const C a = LD(*(const T *)px), b = LD(*(const T *)pz); *(TO *)py = ST(TO, EXPR);            \
    }                                                                                              \
  }

/* y = EXPR(a, b, c), with fast paths for all contiguous and for (scalar, vector, scalar): the
 * shape of clamp(lo, x, hi) with scalar bounds. */
#define PB_TERNARY_GEN(NAME, T, C, TO, LD, ST, EXPR)                                               \
  static PB_LOOP_ATTR void NAME##_vvv(const T *restrict u, const T *restrict v,                    \
                                      const T *restrict w, TO *restrict y, npy_intp n,             \
                                      const void *prm) {                                           \
    for (npy_intp i = 0; i < n; ++i) {                                                             \
      const C a = LD(u[i]), b = LD(v[i]), c = LD(w[i]); y[i] = ST(TO, EXPR);                       \
    }                                                                                              \
  }                                                                                                \
  static PB_LOOP_ATTR void NAME##_svs(const C a, const T *restrict v, const C c, TO *restrict y,   \
                                   npy_intp n, const void *prm) {                                  \
    for (npy_intp i = 0; i < n; ++i) { const C b = LD(v[i]); y[i] = ST(TO, EXPR); }                \
  }                                                                                                \
  static PB_STRIDED_ATTR void NAME(char **p, const npy_intp *s, npy_intp n,                        \
                                    const void *prm) {                                             \
    const npy_intp es = (npy_intp)sizeof(T);                                                       \
    if (s[3] == (npy_intp)sizeof(TO) && s[1] == es) {                                              \
      if (s[0] == es && s[2] == es) {                                                              \
        NAME##_vvv((const T *)p[0], (const T *)p[1], (const T *)p[2], (TO *)p[3], n, prm);         \
        return;                                                                                    \
      }                                                                                            \
      if (s[0] == 0 && s[2] == 0) {                                                                \
        NAME##_svs(LD(*(const T *)p[0]), (const T *)p[1], LD(*(const T *)p[2]), (TO *)p[3], n,     \
                   prm);                                                                           \
        return;                                                                                    \
      }                                                                                            \
    }                                                                                              \
    char *pu = p[0], *pv = p[1], *pw = p[2], *py = p[3];                                           \
    for (npy_intp i = 0; i < n; ++i, pu += s[0], pv += s[1], pw += s[2], py += s[3]) {             \
      const C a = LD(*(const T *)pu), b = LD(*(const T *)pv), c = LD(*(const T *)pw);              \
      *(TO *)py = ST(TO, EXPR);                                                                    \
    }                                                                                              \
  }

/* ---- instantiation of a 7-argument generator over dtype groups: NAME_<suffix> per dtype ----
 * Same output dtype as input: */
#define PB_FOR_BOOLS(GEN, NAME, EXPR) GEN(NAME##_b, uint8_t, uint8_t, uint8_t, PB_LD, PB_ST, EXPR)
#define PB_FOR_SINTS(GEN, NAME, EXPR)                                                              \
  GEN(NAME##_i8, int8_t, int8_t, int8_t, PB_LD, PB_ST, EXPR)                                       \
  GEN(NAME##_i16, int16_t, int16_t, int16_t, PB_LD, PB_ST, EXPR)                                   \
  GEN(NAME##_i32, int32_t, int32_t, int32_t, PB_LD, PB_ST, EXPR)                                   \
  GEN(NAME##_i64, int64_t, int64_t, int64_t, PB_LD, PB_ST, EXPR)
#define PB_FOR_UINTS(GEN, NAME, EXPR)                                                              \
  GEN(NAME##_u8, uint8_t, uint8_t, uint8_t, PB_LD, PB_ST, EXPR)                                    \
  GEN(NAME##_u16, uint16_t, uint16_t, uint16_t, PB_LD, PB_ST, EXPR)                                \
  GEN(NAME##_u32, uint32_t, uint32_t, uint32_t, PB_LD, PB_ST, EXPR)                                \
  GEN(NAME##_u64, uint64_t, uint64_t, uint64_t, PB_LD, PB_ST, EXPR)
#define PB_FOR_HALVES(GEN, NAME, EXPR)                                                             \
  GEN(NAME##_f16, pb_f16, float, pb_f16, PB_LD_F16, PB_ST_F16, EXPR)                               \
  GEN(NAME##_bf16, pb_bf16, float, pb_bf16, PB_LD_BF16, PB_ST_BF16, EXPR)
#define PB_FOR_REALS(GEN, NAME, EXPR)                                                              \
  GEN(NAME##_f32, float, float, float, PB_LD, PB_ST, EXPR)                                         \
  GEN(NAME##_f64, double, double, double, PB_LD, PB_ST, EXPR)
#define PB_FOR_COMPLEXES(GEN, NAME, EXPR)                                                          \
  GEN(NAME##_c64, pb_c64, pb_c64, pb_c64, PB_LD, PB_ST, EXPR)                                      \
  GEN(NAME##_c128, pb_c128, pb_c128, pb_c128, PB_LD, PB_ST, EXPR)
#define PB_FOR_INTS(GEN, NAME, EXPR) PB_FOR_SINTS(GEN, NAME, EXPR) PB_FOR_UINTS(GEN, NAME, EXPR)
#define PB_FOR_FLOATS(GEN, NAME, EXPR) PB_FOR_HALVES(GEN, NAME, EXPR) PB_FOR_REALS(GEN, NAME, EXPR)

/* Boolean output (comparisons, is_finite): */
#define PB_FOR_BOOLS_TO_BOOL(GEN, NAME, EXPR) PB_FOR_BOOLS(GEN, NAME, EXPR)
#define PB_FOR_SINTS_TO_BOOL(GEN, NAME, EXPR)                                                      \
  GEN(NAME##_i8, int8_t, int8_t, uint8_t, PB_LD, PB_ST, EXPR)                                      \
  GEN(NAME##_i16, int16_t, int16_t, uint8_t, PB_LD, PB_ST, EXPR)                                   \
  GEN(NAME##_i32, int32_t, int32_t, uint8_t, PB_LD, PB_ST, EXPR)                                   \
  GEN(NAME##_i64, int64_t, int64_t, uint8_t, PB_LD, PB_ST, EXPR)
#define PB_FOR_UINTS_TO_BOOL(GEN, NAME, EXPR)                                                      \
  GEN(NAME##_u8, uint8_t, uint8_t, uint8_t, PB_LD, PB_ST, EXPR)                                    \
  GEN(NAME##_u16, uint16_t, uint16_t, uint8_t, PB_LD, PB_ST, EXPR)                                 \
  GEN(NAME##_u32, uint32_t, uint32_t, uint8_t, PB_LD, PB_ST, EXPR)                                 \
  GEN(NAME##_u64, uint64_t, uint64_t, uint8_t, PB_LD, PB_ST, EXPR)
#define PB_FOR_FLOATS_TO_BOOL(GEN, NAME, EXPR)                                                     \
  GEN(NAME##_f16, pb_f16, float, uint8_t, PB_LD_F16, PB_ST, EXPR)                                  \
  GEN(NAME##_bf16, pb_bf16, float, uint8_t, PB_LD_BF16, PB_ST, EXPR)                               \
  GEN(NAME##_f32, float, float, uint8_t, PB_LD, PB_ST, EXPR)                                       \
  GEN(NAME##_f64, double, double, uint8_t, PB_LD, PB_ST, EXPR)
#define PB_FOR_COMPLEXES_TO_BOOL(GEN, NAME, EXPR)                                                  \
  GEN(NAME##_c64, pb_c64, pb_c64, uint8_t, PB_LD, PB_ST, EXPR)                                     \
  GEN(NAME##_c128, pb_c128, pb_c128, uint8_t, PB_LD, PB_ST, EXPR)

/* complex -> real (abs, real, imag) and real -> complex (complex, conj of a real) */
#define PB_FOR_COMPLEXES_TO_REAL(GEN, NAME, EXPR)                                                  \
  GEN(NAME##_c64, pb_c64, pb_c64, float, PB_LD, PB_ST, EXPR)                                       \
  GEN(NAME##_c128, pb_c128, pb_c128, double, PB_LD, PB_ST, EXPR)
#define PB_FOR_REALS_TO_COMPLEX(GEN, NAME, EXPR)                                                   \
  GEN(NAME##_f32, float, float, pb_c64, PB_LD, PB_ST, EXPR)                                        \
  GEN(NAME##_f64, double, double, pb_c128, PB_LD, PB_ST, EXPR)

/* ---- the first slice's 4-argument form, still used by other families (reduce.c, dot.c):
 * GEN(NAME, T, TO, EXTRA) over a dtype group, and plain-conversion loop generators. ---- */
#define PB_UNARY_LOOP(NAME, T, TO, EXPR) PB_UNARY_GEN(NAME, T, T, TO, PB_LD, PB_ST, EXPR)
#define PB_BINARY_LOOP(NAME, T, TO, EXPR) PB_BINARY_GEN(NAME, T, T, TO, PB_LD, PB_ST, EXPR)
#define PB_SINTS(GEN, NAME, EXPR)                                                                  \
  GEN(NAME##_i8, int8_t, int8_t, EXPR) GEN(NAME##_i16, int16_t, int16_t, EXPR)                     \
  GEN(NAME##_i32, int32_t, int32_t, EXPR) GEN(NAME##_i64, int64_t, int64_t, EXPR)
#define PB_UINTS(GEN, NAME, EXPR)                                                                  \
  GEN(NAME##_u8, uint8_t, uint8_t, EXPR) GEN(NAME##_u16, uint16_t, uint16_t, EXPR)                 \
  GEN(NAME##_u32, uint32_t, uint32_t, EXPR) GEN(NAME##_u64, uint64_t, uint64_t, EXPR)
#define PB_REALS(GEN, NAME, EXPR) GEN(NAME##_f32, float, float, EXPR) GEN(NAME##_f64, double, double, EXPR)
#define PB_COMPLEXES(GEN, NAME, EXPR) GEN(NAME##_c64, pb_c64, pb_c64, EXPR) GEN(NAME##_c128, pb_c128, pb_c128, EXPR)

/* ---- table slots matching the instantiations above ---- */
#define PB_BOOL_SLOTS(N) [PB_BOOL] = N##_b
#define PB_SINT_SLOTS(N) [PB_I8] = N##_i8, [PB_I16] = N##_i16, [PB_I32] = N##_i32, [PB_I64] = N##_i64
#define PB_UINT_SLOTS(N) [PB_U8] = N##_u8, [PB_U16] = N##_u16, [PB_U32] = N##_u32, [PB_U64] = N##_u64
#define PB_HALF_SLOTS(N) [PB_F16] = N##_f16, [PB_BF16] = N##_bf16
#define PB_REAL_SLOTS(N) [PB_F32] = N##_f32, [PB_F64] = N##_f64
#define PB_COMPLEX_SLOTS(N) [PB_C64] = N##_c64, [PB_C128] = N##_c128
#define PB_INT_SLOTS(N) PB_SINT_SLOTS(N), PB_UINT_SLOTS(N)
#define PB_FLOAT_SLOTS(N) PB_HALF_SLOTS(N), PB_REAL_SLOTS(N)

/* ---- integer bit views: the same-width unsigned / signed type of an integer value ---- */
#define PB_AS_UNSIGNED(v)                                                                          \
  _Generic((v), int8_t: (uint8_t)(v), uint8_t: (uint8_t)(v), int16_t: (uint16_t)(v),               \
           uint16_t: (uint16_t)(v), int32_t: (uint32_t)(v), uint32_t: (uint32_t)(v),               \
           int64_t: (uint64_t)(v), uint64_t: (uint64_t)(v))
#define PB_AS_SIGNED(v)                                                                            \
  _Generic((v), int8_t: (int8_t)(v), uint8_t: (int8_t)(v), int16_t: (int16_t)(v),                  \
           uint16_t: (int16_t)(v), int32_t: (int32_t)(v), uint32_t: (int32_t)(v),                  \
           int64_t: (int64_t)(v), uint64_t: (int64_t)(v))
#define PB_BITS(v) ((int)(8 * sizeof(v)))

#endif
