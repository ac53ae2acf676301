/* Loop generators for element-wise kernels. An op is one table row (name, arity, output dtype
 * kind, per-dtype loops); the loops come from these macros so every op gets the same contiguous,
 * scalar-broadcast and strided paths. */
#ifndef PB_EWISE_H
#define PB_EWISE_H
#include "pb.h"
#include <math.h>
#include <complex.h>

typedef float _Complex pb_c64;
typedef double _Complex pb_c128;

/* Output dtype of an element-wise op relative to its (common) input dtype. */
enum { PB_OUT_SAME, PB_OUT_BOOL, PB_OUT_REAL };

typedef struct {
  const char *name;
  int nin;
  int out_kind;
  npy_intp grain; /* elements per thread below which OpenMP is not worth it */
  pb_loop_fn loops[PB_NDT];
} pb_ewise_op;

/* Rough per-element costs, as OpenMP grains: memory-bound ops need much more work per thread
 * than transcendental ones before a second thread pays. */
#define PB_GRAIN_CHEAP 262144
#define PB_GRAIN_TRANSCENDENTAL 16384

/* y = EXPR(a) */
#define PB_UNARY_LOOP(NAME, T, TO, EXPR)                                                          \
  static PB_CLONES void NAME##_contig(const T *x, TO *y, npy_intp n) {                           \
    for (npy_intp i = 0; i < n; ++i) { const T a = x[i]; y[i] = (TO)(EXPR); }                   \
  }                                                                                              \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                   \
    (void)prm;                                                                                   \
    if (s[0] == (npy_intp)sizeof(T) && s[1] == (npy_intp)sizeof(TO)) {                           \
      NAME##_contig((const T *)p[0], (TO *)p[1], n);                                             \
      return;                                                                                    \
    }                                                                                            \
    char *px = p[0], *py = p[1];                                                                 \
    for (npy_intp i = 0; i < n; ++i, px += s[0], py += s[1]) {                                   \
      const T a = *(const T *)px; *(TO *)py = (TO)(EXPR);                                        \
    }                                                                                            \
  }

/* y = EXPR(a, b), with fast paths for both contiguous and for either side a broadcast scalar */
#define PB_BINARY_LOOP(NAME, T, TO, EXPR)                                                         \
  static PB_CLONES void NAME##_vv(const T *x, const T *z, TO *y, npy_intp n) {                   \
    for (npy_intp i = 0; i < n; ++i) { const T a = x[i], b = z[i]; y[i] = (TO)(EXPR); }         \
  }                                                                                              \
  static PB_CLONES void NAME##_sv(const T a, const T *z, TO *y, npy_intp n) {                    \
    for (npy_intp i = 0; i < n; ++i) { const T b = z[i]; y[i] = (TO)(EXPR); }                   \
  }                                                                                              \
  static PB_CLONES void NAME##_vs(const T *x, const T b, TO *y, npy_intp n) {                    \
    for (npy_intp i = 0; i < n; ++i) { const T a = x[i]; y[i] = (TO)(EXPR); }                   \
  }                                                                                              \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                   \
    (void)prm;                                                                                   \
    const npy_intp es = (npy_intp)sizeof(T);                                                     \
    if (s[2] == (npy_intp)sizeof(TO)) {                                                          \
      if (s[0] == es && s[1] == es) { NAME##_vv((const T *)p[0], (const T *)p[1], (TO *)p[2], n); return; } \
      if (s[0] == 0 && s[1] == es) { NAME##_sv(*(const T *)p[0], (const T *)p[1], (TO *)p[2], n); return; } \
      if (s[0] == es && s[1] == 0) { NAME##_vs((const T *)p[0], *(const T *)p[1], (TO *)p[2], n); return; } \
    }                                                                                            \
    char *px = p[0], *pz = p[1], *py = p[2];                                                     \
    for (npy_intp i = 0; i < n; ++i, px += s[0], pz += s[1], py += s[2]) {                       \
      const T a = *(const T *)px, b = *(const T *)pz; *(TO *)py = (TO)(EXPR);                   \
    }                                                                                            \
  }

/* Instantiate a loop for a list of dtypes: NAME_<suffix> for each. */
#define PB_SINTS(GEN, NAME, EXPR)                                                                 \
  GEN(NAME##_i8, int8_t, int8_t, EXPR) GEN(NAME##_i16, int16_t, int16_t, EXPR)                   \
  GEN(NAME##_i32, int32_t, int32_t, EXPR) GEN(NAME##_i64, int64_t, int64_t, EXPR)
#define PB_UINTS(GEN, NAME, EXPR)                                                                 \
  GEN(NAME##_u8, uint8_t, uint8_t, EXPR) GEN(NAME##_u16, uint16_t, uint16_t, EXPR)               \
  GEN(NAME##_u32, uint32_t, uint32_t, EXPR) GEN(NAME##_u64, uint64_t, uint64_t, EXPR)
#define PB_REALS(GEN, NAME, EXPR) GEN(NAME##_f32, float, float, EXPR) GEN(NAME##_f64, double, double, EXPR)
#define PB_COMPLEXES(GEN, NAME, EXPR) GEN(NAME##_c64, pb_c64, pb_c64, EXPR) GEN(NAME##_c128, pb_c128, pb_c128, EXPR)

/* Table slots matching the instantiations above. */
#define PB_SINT_SLOTS(NAME) [PB_I8] = NAME##_i8, [PB_I16] = NAME##_i16, [PB_I32] = NAME##_i32, [PB_I64] = NAME##_i64
#define PB_UINT_SLOTS(NAME) [PB_U8] = NAME##_u8, [PB_U16] = NAME##_u16, [PB_U32] = NAME##_u32, [PB_U64] = NAME##_u64
#define PB_REAL_SLOTS(NAME) [PB_F32] = NAME##_f32, [PB_F64] = NAME##_f64
#define PB_COMPLEX_SLOTS(NAME) [PB_C64] = NAME##_c64, [PB_C128] = NAME##_c128

#endif
