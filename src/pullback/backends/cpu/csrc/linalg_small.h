/* Small real matrices (n <= 16) for linalg.c: cholesky, triangular solve, LU with partial
 * pivoting and the inverse, one matrix at a time with its rows held in GCC vectors (one row a
 * vector of 4..32 lanes, by size class), so each elimination step is a few vector operations
 * and no LAPACK call (whose per-call overhead is most of a small matrix's time: 4096 8x8
 * float32 cholesky + cho_solve took 1.3x jax.jit's time through potrf/trsm). Batches split over
 * threads in linalg.c. Included by linalg.c only.
 *
 * Rounding follows LAPACK's unblocked routines: getf2's pivot (the first largest |a|), its
 * multipliers by the pivot's reciprocal (a division below the safe minimum), potf2's failure
 * test (a pivot not > 0, or NaN). */

typedef float sm_f8 __attribute__((vector_size(32)));
typedef float sm_f16 __attribute__((vector_size(64)));
typedef float sm_f32 __attribute__((vector_size(128)));
typedef int32_t sm_i8 __attribute__((vector_size(32)));
typedef int32_t sm_i16 __attribute__((vector_size(64)));
typedef double sm_d4 __attribute__((vector_size(32)));
typedef double sm_d8 __attribute__((vector_size(64)));
typedef double sm_d16 __attribute__((vector_size(128)));
typedef double sm_d32 __attribute__((vector_size(256)));
typedef int64_t sm_l4 __attribute__((vector_size(32)));
typedef int64_t sm_l8 __attribute__((vector_size(64)));
typedef int64_t sm_l16 __attribute__((vector_size(128)));

enum { SM_MAX = 16 };

/* Element (r, c) of a matrix at base with byte strides */
#define SM_AT(T, base, rs, cs, r, c) (*(const T *)((const char *)(base) + (r) * (rs) + (c) * (cs)))

/* ---- cholesky: out (n x n, contiguous) = L of the lower triangle of src; 1 (out untouched)
 * where potrf fails. Rows of U = Lᵀ are vectors: row j is scaled by 1/sqrt(pivot) and
 * subtracted from the rows below (lanes left of a row's diagonal collect garbage never read) */
#define SM_CHOL(NAME, T, VT, SQRT)                                                                \
  static PB_CLONES int NAME(const char *src, int64_t rs, int64_t cs, T *restrict out, int n) {    \
    VT U[SM_MAX];                                                                                 \
    for (int j = 0; j < n; ++j) {                                                                 \
      U[j] = (VT){0};                                                                             \
      for (int k = j; k < n; ++k) U[j][k] = SM_AT(T, src, rs, cs, k, j);                          \
    }                                                                                             \
    for (int j = 0; j < n; ++j) {                                                                 \
      const T d = U[j][j];                                                                        \
      if (!(d > 0)) return 1;                                                                     \
      U[j] = U[j] / SQRT(d);                                                                      \
      for (int i = j + 1; i < n; ++i) U[i] -= U[j][i] * U[j];                                     \
    }                                                                                             \
    for (int k = 0; k < n; ++k)                                                                   \
      for (int j = 0; j < n; ++j) out[k * n + j] = j <= k ? U[j][k] : (T)0;                      \
    return 0;                                                                                     \
  }

/* ---- triangular solve: M X = B for a k x k triangular M (row-major, contiguous, already
 * op(a)), B k x w read at src with byte strides, X written at dst with element strides; w <=
 * the lanes of VT. Rows of X are vectors. */
#define SM_TRSM(NAME, T, VT)                                                                      \
  static PB_CLONES void NAME(const T *restrict M, int k, int lower, int unit, const char *src,    \
                             int64_t srs, int64_t scs, T *dst, int64_t drs, int64_t dcs, int w) { \
    VT X[SM_MAX];                                                                                 \
    for (int i = 0; i < k; ++i) {                                                                 \
      X[i] = (VT){0};                                                                             \
      for (int c = 0; c < w; ++c) X[i][c] = SM_AT(T, src, srs, scs, i, c);                        \
    }                                                                                             \
    if (lower)                                                                                    \
      for (int i = 0; i < k; ++i) {                                                               \
        VT x = X[i];                                                                              \
        for (int j = 0; j < i; ++j) x -= M[i * k + j] * X[j];                                     \
        X[i] = unit ? x : x / M[i * k + i];                                                       \
      }                                                                                           \
    else                                                                                          \
      for (int i = k - 1; i >= 0; --i) {                                                          \
        VT x = X[i];                                                                              \
        for (int j = i + 1; j < k; ++j) x -= M[i * k + j] * X[j];                                 \
        X[i] = unit ? x : x / M[i * k + i];                                                       \
      }                                                                                           \
    for (int i = 0; i < k; ++i)                                                                   \
      for (int c = 0; c < w; ++c) dst[i * drs + c * dcs] = X[i][c];                               \
  }

/* ---- lu: getf2 on an m x n matrix (m, n <= lanes of VT), rows as vectors; out (m x n,
 * contiguous), 0-based pivots and the permutation (m) ---- */
#define SM_LU(NAME, T, VT, VI, TINY, ABS)                                                         \
  static PB_CLONES void NAME(const char *src, int64_t rs, int64_t cs, T *restrict out,            \
                             int32_t *restrict piv, int32_t *restrict perm, int m, int n) {      \
    VT A[SM_MAX];                                                                                 \
    VI iota;                                                                                      \
    for (int c = 0; c < (int)(sizeof(VI) / sizeof(iota[0])); ++c) iota[c] = c;                   \
    for (int i = 0; i < m; ++i) {                                                                 \
      A[i] = (VT){0};                                                                             \
      for (int c = 0; c < n; ++c) A[i][c] = SM_AT(T, src, rs, cs, i, c);                          \
      perm[i] = i;                                                                                \
    }                                                                                             \
    const int kk = m < n ? m : n;                                                                 \
    for (int j = 0; j < kk; ++j) {                                                                \
      int p = j;                                                                                  \
      T best = ABS(A[j][j]);                                                                      \
      for (int i = j + 1; i < m; ++i) {                                                           \
        const T v = ABS(A[i][j]);                                                                 \
        if (v > best) best = v, p = i;                                                            \
      }                                                                                           \
      piv[j] = p;                                                                                 \
      if (p != j) {                                                                               \
        const VT t = A[j]; A[j] = A[p]; A[p] = t;                                                 \
        const int32_t q = perm[j]; perm[j] = perm[p]; perm[p] = q;                                \
      }                                                                                           \
      const T d = A[j][j];                                                                        \
      if (d == 0) continue; /* singular: no multipliers, no update (getf2) */                    \
      /* row j right of the pivot; the lanes up to it are masked off the update */               \
      const VT uj = (VT)((VI)A[j] & (iota > j));                                                  \
      const int recip = ABS(d) >= TINY;                                                           \
      const T r = (T)1 / d;                                                                       \
      for (int i = j + 1; i < m; ++i) {                                                           \
        const T l = recip ? A[i][j] * r : A[i][j] / d;                                            \
        A[i] -= l * uj;                                                                           \
        A[i][j] = l;                                                                              \
      }                                                                                           \
    }                                                                                             \
    for (int i = 0; i < m; ++i)                                                                   \
      for (int c = 0; c < n; ++c) out[i * n + c] = A[i][c];                                       \
  }

/* ---- inverse: Gauss-Jordan with getf2's pivot on rows [a | I] of 2n lanes; a singular matrix
 * divides by a zero pivot (infinities and NaNs, as solve(a, I) gives) ---- */
#define SM_INV(NAME, T, VT, ABS)                                                                  \
  static PB_CLONES void NAME(const char *src, int64_t rs, int64_t cs, T *restrict out, int n) {   \
    VT A[SM_MAX];                                                                                 \
    for (int i = 0; i < n; ++i) {                                                                 \
      A[i] = (VT){0};                                                                             \
      for (int c = 0; c < n; ++c) A[i][c] = SM_AT(T, src, rs, cs, i, c);                          \
      A[i][n + i] = 1;                                                                            \
    }                                                                                             \
    for (int k = 0; k < n; ++k) {                                                                 \
      int p = k;                                                                                  \
      T best = ABS(A[k][k]);                                                                      \
      for (int i = k + 1; i < n; ++i) {                                                           \
        const T v = ABS(A[i][k]);                                                                 \
        if (v > best) best = v, p = i;                                                            \
      }                                                                                           \
      if (p != k) { const VT t = A[k]; A[k] = A[p]; A[p] = t; }                                   \
      const VT rk = A[k] / A[k][k];                                                               \
      A[k] = rk;                                                                                  \
      for (int i = 0; i < n; ++i)                                                                 \
        if (i != k) A[i] -= A[i][k] * rk;                                                         \
    }                                                                                             \
    for (int i = 0; i < n; ++i)                                                                   \
      for (int c = 0; c < n; ++c) out[i * n + c] = A[i][n + c];                                   \
  }

SM_CHOL(sm_chol_f8, float, sm_f8, sqrtf)
SM_CHOL(sm_chol_f16, float, sm_f16, sqrtf)
SM_CHOL(sm_chol_d4, double, sm_d4, sqrt)
SM_CHOL(sm_chol_d8, double, sm_d8, sqrt)
SM_CHOL(sm_chol_d16, double, sm_d16, sqrt)
SM_TRSM(sm_trsm_f8, float, sm_f8)
SM_TRSM(sm_trsm_f16, float, sm_f16)
SM_TRSM(sm_trsm_d4, double, sm_d4)
SM_TRSM(sm_trsm_d8, double, sm_d8)
SM_TRSM(sm_trsm_d16, double, sm_d16)
SM_LU(sm_lu_f8, float, sm_f8, sm_i8, FLT_MIN, fabsf)
SM_LU(sm_lu_f16, float, sm_f16, sm_i16, FLT_MIN, fabsf)
SM_LU(sm_lu_d4, double, sm_d4, sm_l4, DBL_MIN, fabs)
SM_LU(sm_lu_d8, double, sm_d8, sm_l8, DBL_MIN, fabs)
SM_LU(sm_lu_d16, double, sm_d16, sm_l16, DBL_MIN, fabs)
SM_INV(sm_inv_f16, float, sm_f16, fabsf)
SM_INV(sm_inv_f32, float, sm_f32, fabsf)
SM_INV(sm_inv_d8, double, sm_d8, fabs)
SM_INV(sm_inv_d16, double, sm_d16, fabs)
SM_INV(sm_inv_d32, double, sm_d32, fabs)

/* Dispatch by size class; dtype PB_F32 or PB_F64 */
static int sm_chol(int dtype, const char *src, int64_t rs, int64_t cs, void *out, int n) {
  if (dtype == PB_F32) return n <= 8 ? sm_chol_f8(src, rs, cs, out, n)
                                     : sm_chol_f16(src, rs, cs, out, n);
  return n <= 4 ? sm_chol_d4(src, rs, cs, out, n)
       : n <= 8 ? sm_chol_d8(src, rs, cs, out, n) : sm_chol_d16(src, rs, cs, out, n);
}

/* M X = B with B k x w, w of any size (column chunks of the widest class) */
static void sm_trsm(int dtype, const void *M, int k, int lower, int unit, const char *src,
                    int64_t srs, int64_t scs, void *dst, int64_t drs, int64_t dcs, int64_t w) {
  for (int64_t c0 = 0; c0 < w; c0 += 16) {
    const int cw = w - c0 < 16 ? (int)(w - c0) : 16;
    const char *s = src + c0 * scs;
    if (dtype == PB_F32) {
      float *d = (float *)dst + c0 * dcs;
      if (cw <= 8) sm_trsm_f8(M, k, lower, unit, s, srs, scs, d, drs, dcs, cw);
      else sm_trsm_f16(M, k, lower, unit, s, srs, scs, d, drs, dcs, cw);
    } else {
      double *d = (double *)dst + c0 * dcs;
      if (cw <= 4) sm_trsm_d4(M, k, lower, unit, s, srs, scs, d, drs, dcs, cw);
      else if (cw <= 8) sm_trsm_d8(M, k, lower, unit, s, srs, scs, d, drs, dcs, cw);
      else sm_trsm_d16(M, k, lower, unit, s, srs, scs, d, drs, dcs, cw);
    }
  }
}

static void sm_lu(int dtype, const char *src, int64_t rs, int64_t cs, void *out, int32_t *piv,
                  int32_t *perm, int m, int n) {
  if (dtype == PB_F32) {
    if (n <= 8) sm_lu_f8(src, rs, cs, out, piv, perm, m, n);
    else sm_lu_f16(src, rs, cs, out, piv, perm, m, n);
  } else if (n <= 4) sm_lu_d4(src, rs, cs, out, piv, perm, m, n);
  else if (n <= 8) sm_lu_d8(src, rs, cs, out, piv, perm, m, n);
  else sm_lu_d16(src, rs, cs, out, piv, perm, m, n);
}

static void sm_inv(int dtype, const char *src, int64_t rs, int64_t cs, void *out, int n) {
  if (dtype == PB_F32) {
    if (n <= 8) sm_inv_f16(src, rs, cs, out, n);
    else sm_inv_f32(src, rs, cs, out, n);
  } else if (n <= 4) sm_inv_d8(src, rs, cs, out, n);
  else if (n <= 8) sm_inv_d16(src, rs, cs, out, n);
  else sm_inv_d32(src, rs, cs, out, n);
}
