/* Linear algebra kernels (primitives/linalg.py) on SciPy's LAPACK and BLAS: the function
 * pointers SciPy's cython_lapack / cython_blas export (as dot.c's matmul), fetched at first use.
 *
 * Every kernel takes leading batch dimensions and loops over them in one call. With threads to
 * spare and more than one matrix, the batch is split over OpenMP threads, each running LAPACK
 * held to one thread (OpenBLAS's per-thread setting); a single matrix runs LAPACK with the
 * caller's thread allowance instead. Without the per-thread setting the batch is not split
 * (BLAS is never called inside an OpenMP region it could thread again).
 *
 * LAPACK is column-major and the operands row-major: a row-major buffer read column-major is the
 * transpose, so cholesky and triangular_solve pick the transposed problem (no transposing copy),
 * and lu transposes into a column-major scratch (getrf's row pivoting needs the real matrix).
 *
 * Real matrices with n <= 16 run on own kernels (linalg_small.h), no LAPACK call. */
#include "pb.h"
#include "kernel_abi.h"
#include "schedule.h"
#include "linalg_batch.h"
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- SciPy's LAPACK and BLAS ---- */

typedef void (*potrf_fn)(char *uplo, int *n, void *a, int *lda, int *info);
typedef void (*getrf_fn)(int *m, int *n, void *a, int *lda, int *ipiv, int *info);
typedef void (*getri_fn)(int *n, void *a, int *lda, int *ipiv, void *work, int *lwork,
                         int *info);
typedef void (*getrs_fn)(char *trans, int *n, int *nrhs, void *a, int *lda, int *ipiv, void *b,
                         int *ldb, int *info);
typedef void (*trsm_fn)(char *side, char *uplo, char *transa, char *diag, int *m, int *n,
                        void *alpha, void *a, int *lda, void *b, int *ldb);
typedef void (*trsv_fn)(char *uplo, char *trans, char *diag, int *n, void *a, int *lda, void *x,
                        int *incx);
static struct {
  potrf_fn potrf[4];
  getrf_fn getrf[4];
  getri_fn getri[4];
  getrs_fn getrs[4];
  trsm_fn trsm[4];
  trsv_fn trsv[4];
} lapack;
static atomic_int lapack_loaded;

/* Loads the pointers, with the GIL held: the kernels' prepare hook (kernel_abi.h), run before
 * any of them can first run. 0, or -1 with a Python exception set. */
static int linalg_prepare(void) {
  if (atomic_load_explicit(&lapack_loaded, memory_order_acquire)) return 0;
  static const char *const lapack_names[] = {
      "spotrf", "dpotrf", "cpotrf", "zpotrf", "sgetrf", "dgetrf", "cgetrf", "zgetrf",
      "sgetri", "dgetri", "cgetri", "zgetri", "sgetrs", "dgetrs", "cgetrs", "zgetrs"};
  static const char *const blas_names[] = {"strsm", "dtrsm", "ctrsm", "ztrsm",
                                           "strsv", "dtrsv", "ctrsv", "ztrsv"};
  void *lp[16], *bp[8];
  if (pb_dot_prepare() < 0 ||
      pb_capsule_pointers("linalg", "scipy.linalg.cython_lapack", lapack_names, 16, lp) < 0 ||
      pb_capsule_pointers("linalg", "scipy.linalg.cython_blas", blas_names, 8, bp) < 0)
    return -1;
  for (int i = 0; i < 4; ++i) {
    lapack.potrf[i] = (potrf_fn)lp[i];
    lapack.getrf[i] = (getrf_fn)lp[4 + i];
    lapack.getri[i] = (getri_fn)lp[8 + i];
    lapack.getrs[i] = (getrs_fn)lp[12 + i];
    lapack.trsm[i] = (trsm_fn)bp[i];
    lapack.trsv[i] = (trsv_fn)bp[4 + i];
  }
  atomic_store_explicit(&lapack_loaded, 1, memory_order_release);
  return 0;
}

static int load_lapack(pb_kernel_ctx *ctx) { return lapack_ready(ctx, &lapack_loaded); }

static int check_float(pb_kernel_ctx *ctx, const pb_operand *o, const char *what) {
  if (prefix_of(o->dtype) < 0)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "%s must be float32/float64/complex64/complex128",
                          what);
  return 0;
}

#include "linalg_small.h"

/* Whether the own kernels of linalg_small.h take a real matrix of this size (n <= 16: below
 * that LAPACK's per-call overhead and the copies around it dominate) */
static int small_real(int dtype, int64_t m, int64_t n) {
  return (dtype == PB_F32 || dtype == PB_F64) && m <= SM_MAX && n <= SM_MAX;
}

/* Threads for a batch of nb small matrices of ~flops each: ~20 us of work per thread at
 * ~2 GFlop/s before a split pays */
static int small_threads(const pb_kernel_ctx *ctx, int64_t nb, double flops) {
  const int64_t grain = (int64_t)(4e4 / (flops + 50.0)) + 1;
  return pb_kernel_threads(ctx, nb, grain);
}

/* ---- cholesky: L (lower, L L^H = a) of each (n, n) matrix, from its lower triangle; a matrix
 * that is not positive definite gives NaNs (as JAX) ---- */

/* Own complex Cholesky for n <= SMALL_N, in place on the row-major copy o (lower triangle read
 * and written, column by column): LAPACK's per-call overhead is most of a small matrix's time
 * (4096 8x8 float32: 1.0 ms through potrf). Fails (1) where potrf would (a pivot not > 0, or
 * NaN). */
enum { SMALL_N = 16 };
#define SMALL_CHOL(NAME, T, R, CONJ, RE, SQRT)                                                   \
  static int NAME(char *p, int64_t n) {                                                          \
    T *a = (T *)p;                                                                               \
    for (int64_t j = 0; j < n; ++j) {                                                            \
      R d = RE(a[j * n + j]);                                                                    \
      for (int64_t k = 0; k < j; ++k) d -= RE(a[j * n + k] * CONJ(a[j * n + k]));                \
      if (!(d > 0)) return 1;                                                                    \
      const R l = SQRT(d);                                                                       \
      a[j * n + j] = l;                                                                          \
      for (int64_t i = j + 1; i < n; ++i) {                                                      \
        T t = a[i * n + j];                                                                      \
        for (int64_t k = 0; k < j; ++k) t -= a[i * n + k] * CONJ(a[j * n + k]);                  \
        a[i * n + j] = t / l;                                                                    \
      }                                                                                          \
    }                                                                                            \
    return 0;                                                                                    \
  }
#define ID(x) (x)
SMALL_CHOL(small_chol_c, float complex, float, conjf, crealf, sqrtf)
SMALL_CHOL(small_chol_z, double complex, double, conj, creal, sqrt)
/* complex only: real matrices take linalg_small.h's kernels */
static int (*const small_chol[4])(char *, int64_t) = {NULL, NULL, small_chol_c, small_chol_z};

static int cholesky_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                           const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *a = &ins[0];
  pb_operand *l = &outs[0];
  if (a->ndim < 2 || !pb_operand_same_shape(a, l) || a->dtype != l->dtype ||
      a->shape[a->ndim - 1] != a->shape[a->ndim - 2] || check_float(ctx, a, "cholesky's operand"))
    return ctx->error ? ctx->error
                      : pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operand must be (..., n, n)");
  const int64_t n = a->shape[a->ndim - 1], nb = batch_count(a, 2);
  if (n > INT32_MAX) return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "matrix too large for LAPACK");
  if (nb == 0 || n == 0) return 0;
  const int es = a->itemsize, p = prefix_of(a->dtype), cplx = p >= C;
  const int64_t rs = a->strides[a->ndim - 2], cs = a->strides[a->ndim - 1];
  if (small_real(a->dtype, n, n)) {
    /* groups of NL matrices interleaved (the last one padded by repeating its last matrix) */
    const int NL = a->dtype == PB_F32 ? SM_XF : SM_XD;
    const int64_t ng = (nb + NL - 1) / NL;
    const int t = small_threads(ctx, ng, (double)n * n * n / 3 * NL);
    OMP_FOR_STATIC(t)
    for (int64_t g = 0; g < ng; ++g) {
      const int cnt = nb - g * NL < NL ? (int)(nb - g * NL) : NL;
      const char *src[SM_XF];
      for (int q = 0; q < NL; ++q)
        src[q] = (const char *)a->data + batch_offset(a, 2, g * NL + (q < cnt ? q : cnt - 1));
      char *o = (char *)l->data + g * NL * n * n * es;
      if (a->dtype == PB_F32) sm_cholx_f(src, rs, cs, (float *)o, (int)n, NAN, cnt);
      else sm_cholx_d(src, rs, cs, (double *)o, (int)n, NAN, cnt);
    }
    return 0;
  }
  const int small = n <= SMALL_N;
  if (!small && load_lapack(ctx)) return ctx->error;
  const int threads = small ? pb_kernel_threads(ctx, nb * n * n * n, 1 << 16)
                            : batch_threads(ctx, nb, (double)n * n * n / 3);
  potrf_fn potrf = lapack.potrf[p];
  FOR_BATCH(ctx, nb, threads, (double)n * n * n / 3, {
    (void)tid;
    char *o = (char *)l->data + i * n * n * es;
    copy_matrix(o, n * es, es, (const char *)a->data + batch_offset(a, 2, i), rs, cs, n, n, es,
                cplx, 0);
    /* row-major o read column-major is a^T: its upper triangle is a's lower one, and U^H U =
     * a^T gives a = L L^H with L = U^T, which is U read row-major */
    int ni = (int)n, info = 0;
    char up = 'U';
    if (small) info = small_chol[p](o, n);
    else potrf(&up, &ni, o, &ni, &info);
    /* OpenBLAS's potrf takes a NaN pivot (reference LAPACK's fails there): a NaN anywhere in
     * the triangle reaches a later diagonal, so one there fails as the small kernels do */
    for (int64_t r = 0; info == 0 && r < n; ++r)
      if (isnan(cplx ? (es == 8 ? ((float *)o)[2 * (r * n + r)] : ((double *)o)[2 * (r * n + r)])
                     : (es == 4 ? ((float *)o)[r * n + r] : ((double *)o)[r * n + r])))
        info = (int)r + 1;
    if (info != 0) fill_nan(o, n * n, a->dtype);
    else
      for (int64_t r = 0; r < n; ++r) memset(o + (r * n + r + 1) * es, 0, (size_t)((n - r - 1) * es));
  });
  return 0;
}

/* ---- triangular_solve: op(a) x = b (left_side) or x op(a) = b, a triangular ---- */

typedef struct {
  int32_t left_side, lower, transpose_a, conjugate_a, unit_diagonal;
} trsm_params;

static int triangular_solve_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                   const void *params, pb_kernel_ctx *ctx) {
  const trsm_params *pp = params;
  const pb_operand *a = &ins[0], *b = &ins[1];
  pb_operand *x = &outs[0];
  if (a->ndim < 2 || b->ndim != a->ndim || !pb_operand_same_shape(b, x) || a->dtype != b->dtype ||
      b->dtype != x->dtype || check_float(ctx, a, "triangular_solve's operands"))
    return ctx->error ? ctx->error : pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operands do not fit");
  const int nd = a->ndim;
  const int64_t m = b->shape[nd - 2], n = b->shape[nd - 1], k = a->shape[nd - 1];
  if (a->shape[nd - 2] != k || k != (pp->left_side ? m : n))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "a does not fit b");
  for (int d = 0; d < nd - 2; ++d)
    if (a->shape[d] != b->shape[d])
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "batch dimensions differ");
  if (m > INT32_MAX || n > INT32_MAX)
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "matrix too large for BLAS");
  const int64_t nb = batch_count(b, 2);
  if (nb == 0 || m == 0 || n == 0) return 0;
  const int64_t ars = a->strides[nd - 2], acs = a->strides[nd - 1];
  const int64_t brs = b->strides[nd - 2], bcs = b->strides[nd - 1];
  if (small_real(a->dtype, k, k)) {
    /* left: op(a) x = b; right: x op(a) = b is op(a)ᵀ xᵀ = bᵀ, a left solve on the transposed
     * views of b and x; M = the left solve's matrix (op(a), or its transpose). */
    const int tr = pp->left_side ? pp->transpose_a : !pp->transpose_a;
    const int low = pp->lower ^ (tr != 0), es = a->itemsize, kk = (int)k;
    const int64_t w = pp->left_side ? n : m;
    /* M's strides in a (op(a) or its transpose), B's and X's as the left solve sees them */
    const int64_t mrs = tr ? acs : ars, mcs = tr ? ars : acs;
    const int64_t srs = pp->left_side ? brs : bcs, scs = pp->left_side ? bcs : brs;
    const int64_t drs = pp->left_side ? n : 1, dcs = pp->left_side ? 1 : n;
    const int NL = a->dtype == PB_F32 ? SM_XF : SM_XD;
    const int64_t ng = (nb + NL - 1) / NL;
    const int t = small_threads(ctx, ng, (double)k * k * w * NL);
    OMP_FOR_STATIC(t)
    for (int64_t g = 0; g < ng; ++g) {
      const int cnt = nb - g * NL < NL ? (int)(nb - g * NL) : NL;
      const char *ap[SM_XF], *bp[SM_XF];
      for (int q = 0; q < NL; ++q) {
        const int64_t i = g * NL + (q < cnt ? q : cnt - 1);
        ap[q] = (const char *)a->data + batch_offset(a, 2, i);
        bp[q] = (const char *)b->data + batch_offset(b, 2, i);
      }
      /* B's columns in chunks of SM_MAX */
      for (int64_t c0 = 0; c0 < w; c0 += SM_MAX) {
        const int cw = w - c0 < SM_MAX ? (int)(w - c0) : SM_MAX;
        const char *bc[SM_XF];
        for (int q = 0; q < NL; ++q) bc[q] = bp[q] + c0 * scs;
        char *o = (char *)x->data + (g * NL * m * n + c0 * dcs) * es;
        if (a->dtype == PB_F32)
          sm_trsmx_f(ap, mrs, mcs, kk, low, pp->unit_diagonal, bc, srs, scs, (float *)o, m * n,
                     drs, dcs, cw, cnt);
        else
          sm_trsmx_d(ap, mrs, mcs, kk, low, pp->unit_diagonal, bc, srs, scs, (double *)o, m * n,
                     drs, dcs, cw, cnt);
      }
    }
    return 0;
  }
  if (load_lapack(ctx)) return ctx->error;
  const int es = a->itemsize, p = prefix_of(a->dtype), cplx = p >= C;
  /* the scratch copy of a conjugates it when conjugate_a comes without transpose_a (BLAS has no
   * conjugate-only op); with transpose_a, 'C' does it */
  const int conj_copy = pp->conjugate_a && !pp->transpose_a && cplx;
  const int threads = batch_threads(ctx, nb, (double)k * k * (pp->left_side ? n : m));
  char **ac;
  if (thread_scratch(ctx, threads, (size_t)(k * k * es), &ac)) return ctx->error;
  /* row-major x (m, n) read column-major is x^T: op(a) x = b is x^T op(a)^T = b^T, a right-side
   * solve of the column-major a^T; x op(a) = b is op(a)^T x^T = b^T, a left-side one. op(a)^T
   * of the column-major a^T is: a^T ('N'), a ('T' for op = transpose), a^H ('C' for op =
   * conjugate transpose); a's lower triangle is a^T's upper one. */
  char side = pp->left_side ? 'R' : 'L', uplo = pp->lower ? 'U' : 'L',
       trans = !pp->transpose_a ? 'N' : (pp->conjugate_a && cplx) ? 'C' : 'T',
       diag = pp->unit_diagonal ? 'U' : 'N';
  const double one[2] = {1.0, 0.0};
  const float onef[2] = {1.0f, 0.0f};
  void *alpha = (p == S || p == C) ? (void *)onef : (void *)one;
  /* a row-contiguous a needs no copy (its row stride is the column-major leading dimension) */
  const int direct = !conj_copy && acs == es && ars >= k * es && ars % es == 0 &&
                     ars / es <= INT32_MAX;
  trsm_fn trsm = lapack.trsm[p];
  /* One right-hand side: trsv, ~6x faster than a one-row trsm (256 x 256: 5 vs 35-50 us). The
   * left solve's matrix M (op(a), or op(a)ᵀ for a right-side solve) is the column-major aᵀ
   * ('N'), its transpose a ('T') or a's conjugate ('C'); conj(aᵀ) has no BLAS op and stays
   * with trsm. */
  const int at = pp->left_side ? pp->transpose_a : !pp->transpose_a; /* M is aᵀ up to conj */
  const int cj = pp->conjugate_a && cplx;
  const int vec = (pp->left_side ? n : m) == 1 && !(cj && at);
  char vtrans = at ? 'N' : cj ? 'C' : 'T';
  trsv_fn trsv = lapack.trsv[p];
  FOR_BATCH(ctx, nb, threads, (double)k * k * (pp->left_side ? n : m), {
    char *o = (char *)x->data + i * m * n * es, *w = ac[tid];
    copy_matrix(o, n * es, es, (const char *)b->data + batch_offset(b, 2, i), brs, bcs, m, n, es,
                cplx, 0);
    const char *ai = (const char *)a->data + batch_offset(a, 2, i);
    if (vec) {
      const int vd = acs == es && ars >= k * es && ars % es == 0 && ars / es <= INT32_MAX;
      if (vd) w = (char *)ai;
      else copy_matrix(w, k * es, es, ai, ars, acs, k, k, es, cplx, 0);
      int kn = (int)k, lda = vd ? (int)(ars / es) : (int)k, inc = 1;
      trsv(&uplo, &vtrans, &diag, &kn, w, &lda, o, &inc);
    } else {
      if (direct) w = (char *)ai;
      else copy_matrix(w, k * es, es, ai, ars, acs, k, k, es, cplx, conj_copy);
      int bm = (int)n, bn = (int)m, lda = direct ? (int)(ars / es) : (int)k, ldb = (int)n;
      trsm(&side, &uplo, &trans, &diag, &bm, &bn, alpha, w, &lda, o, &ldb);
    }
  });
  return 0;
}

/* ---- lu: P a = L U with partial pivoting (getrf); outputs lu (m, n), pivots (min(m, n)) and
 * the permutation (m), int32, 0-based as JAX's ---- */

static int lu_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                     const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *a = &ins[0];
  pb_operand *lu = &outs[0], *piv = &outs[1], *perm = &outs[2];
  const int nd = a->ndim;
  if (nd < 2 || !pb_operand_same_shape(a, lu) || a->dtype != lu->dtype ||
      piv->dtype != PB_I32 || perm->dtype != PB_I32 || piv->ndim != nd - 1 ||
      perm->ndim != nd - 1 || check_float(ctx, a, "lu's operand"))
    return ctx->error ? ctx->error : pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operands do not fit");
  const int64_t m = a->shape[nd - 2], n = a->shape[nd - 1], kk = m < n ? m : n;
  if (piv->shape[nd - 2] != kk || perm->shape[nd - 2] != m)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "outputs do not fit");
  if (m > INT32_MAX || n > INT32_MAX)
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "matrix too large for LAPACK");
  const int64_t nb = batch_count(a, 2);
  if (nb == 0) return 0;
  int32_t *pv = piv->data, *pm = perm->data;
  if (m == 0 || n == 0) { /* no factorization: the identity permutation */
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t r = 0; r < m; ++r) pm[i * m + r] = (int32_t)r;
    return 0;
  }
  /* small real matrices: the own kernel, then getrf for those it found a near pivot tie in
   * (list: their indices; NULL = every matrix through getrf) */
  int64_t nl = nb, *list = NULL;
  if (small_real(a->dtype, m, n)) {
    const int64_t rs = a->strides[nd - 2], cs = a->strides[nd - 1];
    uint8_t *redo = ctx->scratch(ctx, (size_t)nb);
    if (!redo) return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
    const int t = small_threads(ctx, nb, (double)m * n * kk);
    OMP_FOR_STATIC(t)
    for (int64_t i = 0; i < nb; ++i)
      redo[i] = (uint8_t)sm_lu(a->dtype, (const char *)a->data + batch_offset(a, 2, i), rs, cs,
                               (char *)lu->data + i * m * n * a->itemsize, pv + i * kk,
                               pm + i * m, (int)m, (int)n);
    nl = 0;
    for (int64_t i = 0; i < nb; ++i) nl += redo[i];
    if (nl == 0) return 0;
    if (!(list = ctx->scratch(ctx, sizeof(int64_t) * (size_t)nl)))
      return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
    for (int64_t i = 0, q = 0; i < nb; ++i)
      if (redo[i]) list[q++] = i;
  }
  if (load_lapack(ctx)) return ctx->error;
  const int es = a->itemsize, p = prefix_of(a->dtype), cplx = p >= C;
  const int threads = batch_threads(ctx, nl, (double)m * n * kk);
  char **w;
  if (thread_scratch(ctx, threads, (size_t)(m * n * es + kk * 4), &w)) return ctx->error;
  const int64_t rs = a->strides[nd - 2], cs = a->strides[nd - 1];
  getrf_fn getrf = lapack.getrf[p];
  FOR_BATCH(ctx, nl, threads, (double)m * n * kk, {
    const int64_t bi = list ? list[i] : i;
    char *cm = w[tid], *o = (char *)lu->data + bi * m * n * es;
    int *ip = (int *)(cm + m * n * es);
    /* column-major copy: element (r, c) at (c * m + r) */
    copy_matrix(cm, es, m * es, (const char *)a->data + batch_offset(a, 2, bi), rs, cs, m, n,
                es, cplx, 0);
    int mi = (int)m, ni = (int)n, info = 0;
    getrf(&mi, &ni, cm, &mi, ip, &info); /* info > 0: exactly singular U, still a result */
    copy_matrix(o, n * es, es, cm, es, m * es, m, n, es, cplx, 0);
    int32_t *pvi = pv + bi * kk, *pmi = pm + bi * m;
    for (int64_t r = 0; r < m; ++r) pmi[r] = (int32_t)r;
    for (int64_t r = 0; r < kk; ++r) {
      pvi[r] = ip[r] - 1;
      const int32_t t = pmi[r];
      pmi[r] = pmi[pvi[r]];
      pmi[pvi[r]] = t;
    }
  });
  return 0;
}

/* ---- inv: the inverse of each (n, n) matrix. Small real matrices by Gauss-Jordan
 * (linalg_small.h); otherwise getrf + getri (SciPy's inv) on the row-major copy read
 * column-major, aᵀ, whose inverse (a⁻¹)ᵀ read row-major is a⁻¹: no transposing copy. An exactly
 * singular matrix (getri refuses it) is solved against the identity with getrs instead, giving
 * the infinities and NaNs solve(a, I) gives. ---- */

static int inv_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                      const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *a = &ins[0];
  pb_operand *x = &outs[0];
  const int nd = a->ndim;
  if (nd < 2 || !pb_operand_same_shape(a, x) || a->dtype != x->dtype ||
      a->shape[nd - 1] != a->shape[nd - 2] || check_float(ctx, a, "inv's operand"))
    return ctx->error ? ctx->error
                      : pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "operand must be (..., n, n)");
  const int64_t n = a->shape[nd - 1], nb = batch_count(a, 2);
  if (n > INT32_MAX / 64)
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "matrix too large for LAPACK");
  if (nb == 0 || n == 0) return 0;
  const int es = a->itemsize, p = prefix_of(a->dtype), cplx = p >= C;
  const int64_t rs = a->strides[nd - 2], cs = a->strides[nd - 1];
  if (small_real(a->dtype, n, n)) {
    const int t = small_threads(ctx, nb, 2.0 * n * n * n);
    OMP_FOR_STATIC(t)
    for (int64_t i = 0; i < nb; ++i)
      sm_inv(a->dtype, (const char *)a->data + batch_offset(a, 2, i), rs, cs,
             (char *)x->data + i * n * n * es, (int)n);
    return 0;
  }
  if (load_lapack(ctx)) return ctx->error;
  const double flops = 2.0 * n * n * n;
  const int threads = batch_threads(ctx, nb, flops);
  /* getri's blocked work (n * its block), or the singular path's n + n * n */
  const int64_t lwork = 64 * n > n * (n + 1) ? 64 * n : n * (n + 1);
  char **w;
  if (thread_scratch(ctx, threads, (size_t)(lwork * es + n * 4), &w)) return ctx->error;
  getrf_fn getrf = lapack.getrf[p];
  getri_fn getri = lapack.getri[p];
  getrs_fn getrs = lapack.getrs[p];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *o = (char *)x->data + i * n * n * es, *work = w[tid];
    int *ip = (int *)(work + lwork * es);
    copy_matrix(o, n * es, es, (const char *)a->data + batch_offset(a, 2, i), rs, cs, n, n, es,
                cplx, 0);
    int ni = (int)n, lw = (int)(64 * n), info = 0;
    getrf(&ni, &ni, o, &ni, ip, &info);
    if (info == 0) getri(&ni, o, &ni, ip, work, &lw, &info);
    else { /* exactly singular: getrs against the identity's columns, into the scratch's
            * tail (X = (aᵀ)⁻¹ column-major), then copied out */
      char tn = 'N';
      int one = 1, r = 0;
      char *cols = work + n * es;
      memset(cols, 0, (size_t)(n * n * es));
      for (int64_t c = 0; c < n; ++c) {
        char *e = cols + (c * n + c) * es; /* the 1 of column c: the real part */
        if (p == S || p == C) *(float *)e = 1.0f;
        else *(double *)e = 1.0;
        getrs(&tn, &ni, &one, o, &ni, ip, cols + c * n * es, &ni, &r);
      }
      memcpy(o, cols, (size_t)(n * n * es));
    }
  });
  return 0;
}

/* ---- lu_inverse: a⁻¹ (or a⁻ᵀ when transpose) from lu(a)'s packed factors (row-major, the true
 * matrix's) and 0-based pivots, by getri. getri wants the factors column-major: one tiled
 * transposing copy; its result is a⁻¹ column-major, i.e. a⁻ᵀ read row-major, so a⁻ᵀ is written
 * in place in the output and a⁻¹ takes one more transposing copy. A zero on U's diagonal (getri
 * refuses it) is solved against the identity with getrs, as inv; pivots outside [0, n) give a
 * NaN matrix (they come from lu, but nothing is read out of bounds). ---- */

static int lu_inverse_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                             const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *a = &ins[0], *pv = &ins[1];
  pb_operand *x = &outs[0];
  const int transpose = *(const int32_t *)params;
  const int nd = a->ndim;
  if (nd < 2 || !pb_operand_same_shape(a, x) || a->dtype != x->dtype ||
      a->shape[nd - 1] != a->shape[nd - 2] || pv->dtype != PB_I32 || pv->ndim != nd - 1 ||
      pv->shape[nd - 2] != a->shape[nd - 1] || check_float(ctx, a, "lu_inverse's operand"))
    return ctx->error ? ctx->error
                      : pb_kernel_fail(ctx, PB_KERNEL_ETYPE,
                                       "operands must be lu (..., n, n) and int32 pivots (..., n)");
  for (int d = 0; d < nd - 2; ++d)
    if (pv->shape[d] != a->shape[d])
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "batch dimensions differ");
  const int64_t n = a->shape[nd - 1], nb = batch_count(a, 2);
  if (n > INT32_MAX / 64)
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "matrix too large for LAPACK");
  if (nb == 0 || n == 0) return 0;
  if (load_lapack(ctx)) return ctx->error;
  const int es = a->itemsize, p = prefix_of(a->dtype), cplx = p >= C;
  const int64_t rs = a->strides[nd - 2], cs = a->strides[nd - 1], ps = pv->strides[nd - 2];
  const double flops = 4.0 / 3.0 * n * n * n;
  const int threads = batch_threads(ctx, nb, flops);
  /* getri's blocked work (n * its block) or the singular path's n * n columns, the column-major
   * result when it is transposed out, the 1-based pivots */
  const int64_t lwork = 64 * n > n * n ? 64 * n : n * n;
  const int64_t bytes = (lwork + (transpose ? 0 : n * n)) * es + n * 4;
  char **w;
  if (thread_scratch(ctx, threads, (size_t)bytes, &w)) return ctx->error;
  getri_fn getri = lapack.getri[p];
  getrs_fn getrs = lapack.getrs[p];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *o = (char *)x->data + i * n * n * es, *work = w[tid];
    char *cm = transpose ? o : work + lwork * es;
    int *ip = (int *)(work + bytes - n * 4);
    const char *pi = (const char *)pv->data + batch_offset(pv, 1, i);
    int ok = 1;
    for (int64_t r = 0; r < n; ++r) {
      const int32_t q = *(const int32_t *)(pi + r * ps);
      ok &= q >= 0 && q < n;
      ip[r] = q + 1;
    }
    if (!ok) {
      fill_nan(o, n * n, a->dtype);
    } else {
      copy_matrix(cm, es, n * es, (const char *)a->data + batch_offset(a, 2, i), rs, cs, n, n,
                  es, cplx, 0);
      int ni = (int)n, lw = (int)lwork, info = 0;
      getri(&ni, cm, &ni, ip, work, &lw, &info);
      if (info > 0) { /* a zero on U's diagonal: getrs against the identity's columns */
        char tn = 'N';
        int one = 1, r = 0;
        memset(work, 0, (size_t)(n * n * es));
        for (int64_t c = 0; c < n; ++c) {
          char *e = work + (c * n + c) * es;
          if (p == S || p == C) *(float *)e = 1.0f;
          else *(double *)e = 1.0;
          getrs(&tn, &ni, &one, cm, &ni, ip, work + c * n * es, &ni, &r);
        }
        memcpy(cm, work, (size_t)(n * n * es));
      }
      if (!transpose) copy_matrix(o, n * es, es, cm, es, n * es, n, n, es, cplx, 0);
    }
  });
  return 0;
}

/* ---- lu_pivots_to_permutation: the permutation (..., m) the row swaps pivots (..., k) make
 * of 0..m-1 (pivots outside [0, m) swap nothing: nothing is read out of bounds) ---- */

static int lu_pivots_to_permutation_kernel(const pb_operand *ins, int nin, pb_operand *outs,
                                           int nout, const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *pv = &ins[0];
  pb_operand *pm = &outs[0];
  if (pv->ndim < 1 || pm->ndim != pv->ndim || pv->dtype != PB_I32 || pm->dtype != PB_I32)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "pivots must be int32 (..., k)");
  for (int d = 0; d < pv->ndim - 1; ++d)
    if (pv->shape[d] != pm->shape[d])
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "batch dimensions differ");
  const int64_t k = pv->shape[pv->ndim - 1], m = pm->shape[pm->ndim - 1], nb = batch_count(pv, 1);
  const int64_t ks = pv->strides[pv->ndim - 1];
  for (int64_t i = 0; i < nb; ++i) {
    const char *src = (const char *)pv->data + batch_offset(pv, 1, i);
    int32_t *o = (int32_t *)pm->data + i * m;
    for (int64_t r = 0; r < m; ++r) o[r] = (int32_t)r;
    for (int64_t r = 0; r < k && r < m; ++r) {
      const int32_t p = *(const int32_t *)(src + r * ks);
      if (p < 0 || p >= m) continue;
      const int32_t t = o[r];
      o[r] = o[p];
      o[p] = t;
    }
  }
  return 0;
}

static const pb_kernel_def kernels[] = {
  {"lu_pivots_to_permutation", lu_pivots_to_permutation_kernel, 1, 1, 0, NULL},
  {"cholesky", cholesky_kernel, 1, 1, 0, linalg_prepare},
  {"triangular_solve", triangular_solve_kernel, 2, 1, sizeof(trsm_params), linalg_prepare},
  {"lu", lu_kernel, 1, 3, 0, linalg_prepare},
  {"inv", inv_kernel, 1, 1, 0, linalg_prepare},
  {"lu_inverse", lu_inverse_kernel, 2, 1, sizeof(int32_t), linalg_prepare},
};
PB_KERNELS(kernels)
