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

/* ---- lu: getf2 on an m x n matrix (m, n <= lanes of VT), rows as vectors; out (m x n,
 * contiguous), 0-based pivots and the permutation (m). Returns 1 (outputs unusable) at a near
 * tie: getrf (OpenBLAS: left-looking, its own dot and gemv order) rounds the pivot column
 * differently, and where two candidates are within that rounding of each other the two could
 * pick different rows (~0.3% of small integer matrices did), so the caller factors that matrix
 * with getrf itself, keeping lu's pivots getrf's. The bound: G accumulates |a| + Σ |l||u| per
 * element (the magnitudes the rounding errors scale with), and candidates closer than
 * 8 (j + 2) eps (G_p + G_i) count as tied. Exact ties of exact values (G = 0, e.g. zero
 * columns) are not ambiguous. ---- */
#define SM_LU(NAME, T, VT, VI, TINY, ABS, EPS, MAXI)                                              \
  static PB_CLONES int NAME(const char *src, int64_t rs, int64_t cs, T *restrict out,             \
                            int32_t *restrict piv, int32_t *restrict perm, int m, int n) {        \
    VT A[SM_MAX], G[SM_MAX];                                                                      \
    VI iota;                                                                                      \
    for (int c = 0; c < (int)(sizeof(VI) / sizeof(iota[0])); ++c) iota[c] = c;                   \
    for (int i = 0; i < m; ++i) {                                                                 \
      A[i] = (VT){0};                                                                             \
      for (int c = 0; c < n; ++c) A[i][c] = SM_AT(T, src, rs, cs, i, c);                          \
      G[i] = (VT)((VI)A[i] & MAXI);                                                               \
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
      const T tol = 8 * (j + 2) * EPS;                                                            \
      for (int i = j; i < m; ++i)                                                                 \
        if (i != p && best - ABS(A[i][j]) < tol * (G[p][j] + G[i][j])) return 1;                  \
      piv[j] = p;                                                                                 \
      if (p != j) {                                                                               \
        const VT t = A[j]; A[j] = A[p]; A[p] = t;                                                 \
        const VT g = G[j]; G[j] = G[p]; G[p] = g;                                                 \
        const int32_t q = perm[j]; perm[j] = perm[p]; perm[p] = q;                                \
      }                                                                                           \
      const T d = A[j][j];                                                                        \
      if (d == 0) continue; /* singular: no multipliers, no update (getf2) */                    \
      /* row j right of the pivot; the lanes up to it are masked off the update */               \
      const VI right = iota > j;                                                                  \
      const VT uj = (VT)((VI)A[j] & right), gj = (VT)((VI)G[j] & right);                          \
      const int recip = ABS(d) >= TINY;                                                           \
      const T r = (T)1 / d;                                                                       \
      for (int i = j + 1; i < m; ++i) {                                                           \
        const T l = recip ? A[i][j] * r : A[i][j] / d;                                            \
        A[i] -= l * uj;                                                                           \
        G[i] += ABS(l) * gj;                                                                      \
        A[i][j] = l;                                                                              \
      }                                                                                           \
    }                                                                                             \
    for (int i = 0; i < m; ++i)                                                                   \
      for (int c = 0; c < n; ++c) out[i * n + c] = A[i][c];                                       \
    return 0;                                                                                     \
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

SM_LU(sm_lu_f8, float, sm_f8, sm_i8, FLT_MIN, fabsf, FLT_EPSILON, INT32_MAX)
SM_LU(sm_lu_f16, float, sm_f16, sm_i16, FLT_MIN, fabsf, FLT_EPSILON, INT32_MAX)
SM_LU(sm_lu_d4, double, sm_d4, sm_l4, DBL_MIN, fabs, DBL_EPSILON, INT64_MAX)
SM_LU(sm_lu_d8, double, sm_d8, sm_l8, DBL_MIN, fabs, DBL_EPSILON, INT64_MAX)
SM_LU(sm_lu_d16, double, sm_d16, sm_l16, DBL_MIN, fabs, DBL_EPSILON, INT64_MAX)
SM_INV(sm_inv_f16, float, sm_f16, fabsf)
SM_INV(sm_inv_f32, float, sm_f32, fabsf)
SM_INV(sm_inv_d8, double, sm_d8, fabs)
SM_INV(sm_inv_d16, double, sm_d16, fabs)
SM_INV(sm_inv_d32, double, sm_d32, fabs)

/* Dispatch by size class; dtype PB_F32 or PB_F64 */
/* 1 at a near tie of pivots (the caller runs getrf instead) */
static int sm_lu(int dtype, const char *src, int64_t rs, int64_t cs, void *out, int32_t *piv,
                 int32_t *perm, int m, int n) {
  if (dtype == PB_F32)
    return n <= 8 ? sm_lu_f8(src, rs, cs, out, piv, perm, m, n)
                  : sm_lu_f16(src, rs, cs, out, piv, perm, m, n);
  return n <= 4 ? sm_lu_d4(src, rs, cs, out, piv, perm, m, n)
       : n <= 8 ? sm_lu_d8(src, rs, cs, out, piv, perm, m, n)
                : sm_lu_d16(src, rs, cs, out, piv, perm, m, n);
}

static void sm_inv(int dtype, const char *src, int64_t rs, int64_t cs, void *out, int n) {
  if (dtype == PB_F32) {
    if (n <= 8) sm_inv_f16(src, rs, cs, out, n);
    else sm_inv_f32(src, rs, cs, out, n);
  } else if (n <= 4) sm_inv_d8(src, rs, cs, out, n);
  else if (n <= 8) sm_inv_d16(src, rs, cs, out, n);
  else sm_inv_d32(src, rs, cs, out, n);
}

/* ---- batch-interleaved kernels: NL matrices at once, lane l of every vector belonging to
 * matrix l (a vector per matrix element), so a step of the factorization is one vector
 * operation for NL matrices and no horizontal work or dependency chain within one matrix
 * remains (the row-vector kernels above spend most of a small solve's time waiting on them).
 * For cholesky and triangular solve, where no pivoting makes lanes diverge. ---- */

/* cholesky of NL matrices src[l] (byte strides rs, cs) into out + l * n * n (contiguous), the
 * first cnt of them stored (a batch's last group repeats a matrix in the other lanes, so a
 * matrix gets the same bits wherever it sits in a batch): the lower triangle packed, potf2's
 * column order (a pivot's reciprocal scales its column); a pivot not > 0 (or NaN) fills that
 * matrix with NaN, as potrf's failure does */
#define SM_CHOL_X(NAME, T, VT, VI, NL, SQRT)                                                      \
  static PB_CLONES void NAME(const char *const *src, int64_t rs, int64_t cs, T *restrict out,     \
                             int n, T nan, int cnt) {                                             \
    VT A[SM_MAX * (SM_MAX + 1) / 2];                                                              \
    /* element-major loops with the lane innermost: gathers and scatters, not one scalar move   \
     * per element (those were most of the time) */                                              \
    for (int i = 0, e = 0; i < n; ++i)                                                            \
      for (int j = 0; j <= i; ++j, ++e) {                                                         \
        const int64_t off = i * rs + j * cs;                                                      \
        VT v;                                                                                     \
        for (int l = 0; l < NL; ++l) v[l] = *(const T *)(src[l] + off);                           \
        A[e] = v;                                                                                 \
      }                                                                                           \
    VI bad = (VI){0};                                                                             \
    for (int j = 0; j < n; ++j) {                                                                 \
      const int jj = j * (j + 1) / 2 + j;                                                         \
      VT d = A[jj];                                                                               \
      bad |= ~(d > 0); /* not > 0, or NaN: potrf's failure */                                    \
      for (int l = 0; l < NL; ++l) d[l] = SQRT(d[l] > 0 ? d[l] : (T)1);                          \
      A[jj] = d;                                                                                  \
      const VT r = 1 / d;                                                                         \
      for (int i = j + 1; i < n; ++i) A[i * (i + 1) / 2 + j] *= r;                                \
      for (int i = j + 1; i < n; ++i) {                                                           \
        const VT lij = A[i * (i + 1) / 2 + j];                                                    \
        for (int k = j + 1; k <= i; ++k) A[i * (i + 1) / 2 + k] -= lij * A[k * (k + 1) / 2 + j];  \
      }                                                                                           \
    }                                                                                             \
    /* the upper triangles zeroed contiguously, the lower ones scattered */                     \
    const int64_t nn = (int64_t)n * n;                                                            \
    memset(out, 0, (size_t)(cnt * nn) * sizeof(T));                                              \
    for (int i = 0, e = 0; i < n; ++i)                                                            \
      for (int j = 0; j <= i; ++j) {                                                              \
        const VT v = A[e++];                                                                      \
        T *o = out + i * n + j;                                                                   \
        if (cnt == NL)                                                                            \
          for (int l = 0; l < NL; ++l) o[l * nn] = v[l];                                          \
        else                                                                                      \
          for (int l = 0; l < cnt; ++l) o[l * nn] = v[l];                                         \
      }                                                                                           \
    for (int l = 0; l < cnt; ++l)                                                                 \
      if (bad[l])                                                                                 \
        for (int64_t e = 0; e < nn; ++e) out[l * nn + e] = nan;                                   \
  }

/* M X = B for NL systems: M (k x k, triangular) element (r, c) at a[l] + r * mrs + c * mcs
 * (bytes: op(a)'s strides), B k x w at b[l] + r * srs + c * scs, X at x + l * xstep + r * drs
 * + c * dcs (elements); w <= SM_MAX; the first cnt systems stored */
#define SM_TRSM_X(NAME, T, VT, NL)                                                                \
  static PB_CLONES void NAME(const char *const *a, int64_t mrs, int64_t mcs, int k, int lower,    \
                             int unit, const char *const *b, int64_t srs, int64_t scs,            \
                             T *restrict x, int64_t xstep, int64_t drs, int64_t dcs, int w,       \
                             int cnt) {                                                           \
    VT M[SM_MAX * SM_MAX], X[SM_MAX * SM_MAX];                                                    \
    for (int r = 0; r < k; ++r) {                                                                 \
      const int c0 = lower ? 0 : r, c1 = lower ? r : k - 1;                                       \
      for (int c = c0; c <= c1; ++c) {                                                            \
        const int64_t off = r * mrs + c * mcs;                                                    \
        VT v;                                                                                     \
        for (int l = 0; l < NL; ++l) v[l] = *(const T *)(a[l] + off);                             \
        M[r * k + c] = v;                                                                         \
      }                                                                                           \
      for (int c = 0; c < w; ++c) {                                                               \
        const int64_t off = r * srs + c * scs;                                                    \
        VT v;                                                                                     \
        for (int l = 0; l < NL; ++l) v[l] = *(const T *)(b[l] + off);                             \
        X[r * w + c] = v;                                                                         \
      }                                                                                           \
    }                                                                                             \
    for (int s = 0; s < k; ++s) {                                                                 \
      const int i = lower ? s : k - 1 - s, j0 = lower ? 0 : i + 1, j1 = lower ? i : k;            \
      for (int c = 0; c < w; ++c) {                                                               \
        VT v = X[i * w + c];                                                                      \
        for (int j = j0; j < j1; ++j) v -= M[i * k + j] * X[j * w + c];                           \
        X[i * w + c] = unit ? v : v / M[i * k + i];                                               \
      }                                                                                           \
    }                                                                                             \
    for (int r = 0; r < k; ++r)                                                                   \
      for (int c = 0; c < w; ++c) {                                                               \
        const VT v = X[r * w + c];                                                                \
        T *o = x + r * drs + c * dcs;                                                             \
        if (cnt == NL)                                                                            \
          for (int l = 0; l < NL; ++l) o[l * xstep] = v[l];                                       \
        else                                                                                      \
          for (int l = 0; l < cnt; ++l) o[l * xstep] = v[l];                                      \
      }                                                                                           \
  }

enum { SM_XF = 16, SM_XD = 8 }; /* lanes: float32, float64 */
SM_CHOL_X(sm_cholx_f, float, sm_f16, sm_i16, SM_XF, sqrtf)
SM_CHOL_X(sm_cholx_d, double, sm_d8, sm_l8, SM_XD, sqrt)
SM_TRSM_X(sm_trsmx_f, float, sm_f16, SM_XF)
SM_TRSM_X(sm_trsmx_d, double, sm_d8, SM_XD)
