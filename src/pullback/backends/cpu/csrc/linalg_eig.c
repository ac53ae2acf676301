/* The non-symmetric and tridiagonal decompositions (primitives/linalg_eig.py) on SciPy's LAPACK:
 * eig (geev), schur (gees), hessenberg (gehrd), tridiagonal (sytrd/hetrd) and tridiagonal_solve
 * (gtsv), as linalg.c runs cholesky and lu: the capsule pointers read by the kernels' prepare
 * hook, one call looping over the leading batch dimensions, the batch split over OpenMP threads
 * with OpenBLAS held to one thread in each.
 *
 * Every kernel copies its matrix into a column-major scratch (the true matrix, not the transpose
 * a row-major buffer read column-major would be): eigenvalue order, Schur form and Householder
 * vectors then come out as LAPACK gives them for the matrix, as JAX's and NumPy's do. The copies
 * are O(n^2) against the factorizations' O(n^3).
 *
 * A factorization that fails (info > 0: QR iterations that did not converge, a singular
 * tridiagonal system) gives NaNs for that matrix, as JAX's results. */
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

/* ---- SciPy's LAPACK ---- */

typedef void (*geev_r_fn)(char *jobvl, char *jobvr, int *n, void *a, int *lda, void *wr,
                          void *wi, void *vl, int *ldvl, void *vr, int *ldvr, void *work,
                          int *lwork, int *info);
typedef void (*geev_c_fn)(char *jobvl, char *jobvr, int *n, void *a, int *lda, void *w, void *vl,
                          int *ldvl, void *vr, int *ldvr, void *work, int *lwork, void *rwork,
                          int *info);
typedef void (*gees_r_fn)(char *jobvs, char *sort, void *select, int *n, void *a, int *lda,
                          int *sdim, void *wr, void *wi, void *vs, int *ldvs, void *work,
                          int *lwork, int *bwork, int *info);
typedef void (*gees_c_fn)(char *jobvs, char *sort, void *select, int *n, void *a, int *lda,
                          int *sdim, void *w, void *vs, int *ldvs, void *work, int *lwork,
                          void *rwork, int *bwork, int *info);
typedef void (*gehrd_fn)(int *n, int *ilo, int *ihi, void *a, int *lda, void *tau, void *work,
                         int *lwork, int *info);
typedef void (*sytrd_fn)(char *uplo, int *n, void *a, int *lda, void *d, void *e, void *tau,
                         void *work, int *lwork, int *info);
typedef void (*gtsv_fn)(int *n, int *nrhs, void *dl, void *d, void *du, void *b, int *ldb,
                        int *info);
static struct {
  void *geev[4], *gees[4];
  gehrd_fn gehrd[4];
  sytrd_fn sytrd[4];
  gtsv_fn gtsv[4];
} lapack;
static atomic_int lapack_loaded;

/* Loads the pointers with the GIL held (the kernels' prepare hook, kernel_abi.h): 0, or -1 with
 * a Python exception set. */
static int linalg_eig_prepare(void) {
  if (atomic_load_explicit(&lapack_loaded, memory_order_acquire)) return 0;
  static const char *const names[] = {
      "sgeev",  "dgeev",  "cgeev",  "zgeev",  "sgees",  "dgees",  "cgees",  "zgees",
      "sgehrd", "dgehrd", "cgehrd", "zgehrd", "ssytrd", "dsytrd", "chetrd", "zhetrd",
      "sgtsv",  "dgtsv",  "cgtsv",  "zgtsv"};
  void *p[20];
  if (pb_dot_prepare() < 0 ||
      pb_capsule_pointers("linalg", "scipy.linalg.cython_lapack", names, 20, p) < 0)
    return -1;
  for (int i = 0; i < 4; ++i) {
    lapack.geev[i] = p[i];
    lapack.gees[i] = p[4 + i];
    lapack.gehrd[i] = (gehrd_fn)p[8 + i];
    lapack.sytrd[i] = (sytrd_fn)p[12 + i];
    lapack.gtsv[i] = (gtsv_fn)p[16 + i];
  }
  atomic_store_explicit(&lapack_loaded, 1, memory_order_release);
  return 0;
}

static int load_lapack(pb_kernel_ctx *ctx) { return lapack_ready(ctx, &lapack_loaded); }

/* The (n, n) matrix batch element i of a, into column-major w */
static void load_colmajor(char *w, const pb_operand *a, int64_t i, int64_t n, int es) {
  const int nd = a->ndim;
  copy_matrix(w, es, n * es, (const char *)a->data + batch_offset(a, 2, i), a->strides[nd - 2],
              a->strides[nd - 1], n, n, es, 0, 0);
}

/* Row-major (n, n) out from column-major w */
static void store_rowmajor(char *out, const char *w, int64_t n, int es) {
  copy_matrix(out, n * es, es, w, es, n * es, n, n, es, 0, 0);
}

/* The optimal lwork LAPACK's workspace query wrote to work[0] (real part; at least 1) */
static int64_t queried(const void *work, int p) {
  const double w = (p == S || p == C) ? (double)*(const float *)work : *(const double *)work;
  return w > 1 ? (int64_t)w + 1 : 1;
}

static int check_square(pb_kernel_ctx *ctx, const pb_operand *a, const char *who) {
  if (a->ndim < 2 || a->shape[a->ndim - 1] != a->shape[a->ndim - 2] || prefix_of(a->dtype) < 0)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "%s: operand must be float (..., n, n)", who);
  if (a->shape[a->ndim - 1] > 46340) /* n * n must fit LAPACK's int */
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "%s: matrix too large for LAPACK", who);
  return 0;
}

/* Whether o is a C-contiguous array of dtype with `batch` leading dims equal to a's and then
 * the trailing dims tail[0..ntail) */
static int fits(const pb_operand *o, int dtype, const pb_operand *a, int batch,
                const int64_t *tail, int ntail) {
  if (o->dtype != dtype || o->ndim != batch + ntail) return 0;
  for (int d = 0; d < batch; ++d)
    if (o->shape[d] != a->shape[d]) return 0;
  for (int d = 0; d < ntail; ++d)
    if (o->shape[batch + d] != tail[d]) return 0;
  return 1;
}

static int complex_of(int dtype) {
  return dtype == PB_F32 ? PB_C64 : dtype == PB_F64 ? PB_C128 : dtype;
}
static int real_of(int dtype) {
  return dtype == PB_C64 ? PB_F32 : dtype == PB_C128 ? PB_F64 : dtype;
}

/* ---- eig: eigenvalues w and left/right eigenvectors of general matrices (geev), complex ---- */

typedef struct {
  int32_t compute_left, compute_right;
} eig_params;

/* Complex (n, n) row-major out[r, j] = eigenvector j from real geev's packed columns v (a complex
 * pair j, j+1 (wi[j] > 0) is v[:, j] +- i v[:, j+1]) */
#define UNPACK_REAL(T)                                                                            \
  static void unpack_##T(T *out, const T *v, const T *wi, int64_t n) {                           \
    for (int64_t j = 0; j < n; ++j) {                                                             \
      if (wi[j] != 0 && j + 1 < n) {                                                              \
        for (int64_t r = 0; r < n; ++r) {                                                         \
          const T re = v[j * n + r], im = v[(j + 1) * n + r];                                     \
          out[2 * (r * n + j)] = re, out[2 * (r * n + j) + 1] = im;                               \
          out[2 * (r * n + j + 1)] = re, out[2 * (r * n + j + 1) + 1] = -im;                      \
        }                                                                                         \
        ++j;                                                                                      \
      } else                                                                                      \
        for (int64_t r = 0; r < n; ++r)                                                           \
          out[2 * (r * n + j)] = v[j * n + r], out[2 * (r * n + j) + 1] = 0;                      \
    }                                                                                             \
  }
UNPACK_REAL(float)
UNPACK_REAL(double)

static int eig_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                      const void *params, pb_kernel_ctx *ctx) {
  const eig_params *pp = params;
  const pb_operand *a = &ins[0];
  if (check_square(ctx, a, "eig")) return ctx->error;
  const int nd = a->ndim, p = prefix_of(a->dtype), cplx = p >= C;
  const int64_t n = a->shape[nd - 1], nb = batch_count(a, 2), sq[2] = {n, n};
  const int cdt = complex_of(a->dtype);
  if (nout != 1 + !!pp->compute_left + !!pp->compute_right ||
      !fits(&outs[0], cdt, a, nd - 2, sq, 1))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "eig: outputs do not fit");
  for (int k = 1; k < nout; ++k)
    if (!fits(&outs[k], cdt, a, nd - 2, sq, 2))
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "eig: outputs do not fit");
  if (nb == 0 || n == 0) return 0;
  if (load_lapack(ctx)) return ctx->error;
  pb_operand *wout = &outs[0];
  pb_operand *vlout = pp->compute_left ? &outs[1] : NULL;
  pb_operand *vrout = pp->compute_right ? &outs[1 + !!pp->compute_left] : NULL;
  const int es = a->itemsize, rs = cplx ? es / 2 : es, ces = cplx ? es : 2 * es;
  char jl = vlout ? 'V' : 'N', jr = vrout ? 'V' : 'N';
  int ni = (int)n, lwork = -1, info = 0;
  /* workspace query on the calling thread */
  double q[4] = {0}, dummy[4] = {0};
  if (cplx)
    ((geev_c_fn)lapack.geev[p])(&jl, &jr, &ni, dummy, &ni, dummy, dummy, &ni, dummy, &ni, q,
                                &lwork, dummy, &info);
  else
    ((geev_r_fn)lapack.geev[p])(&jl, &jr, &ni, dummy, &ni, dummy, dummy, dummy, &ni, dummy, &ni,
                                q, &lwork, &info);
  const int64_t lw = queried(q, p);
  if (lw > INT32_MAX) return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "eig: workspace too large");
  /* scratch: a, vl, vr (n*n es each), w (2n real, or n complex), work, rwork (2n real) */
  const int64_t off_vl = n * n * es, off_vr = 2 * n * n * es, off_w = 3 * n * n * es,
                off_work = off_w + 2 * n * rs, off_rwork = off_work + lw * es,
                bytes = off_rwork + 2 * n * rs + 64;
  const double flops = 25.0 * (double)n * n * n;
  const int threads = batch_threads(ctx, nb, flops);
  char **ws;
  if (thread_scratch(ctx, threads, (size_t)bytes, &ws)) return ctx->error;
  void *geev = lapack.geev[p];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *w = ws[tid], *vl = w + off_vl, *vr = w + off_vr, *ev = w + off_w;
    char *work = w + off_work, *rwork = w + off_rwork;
    load_colmajor(w, a, i, n, es);
    int nn = (int)n, lwk = (int)lw, inf = 0;
    char cl = jl, cr = jr;
    char *wo = (char *)wout->data + i * n * ces;
    if (cplx)
      ((geev_c_fn)geev)(&cl, &cr, &nn, w, &nn, wo, vl, &nn, vr, &nn, work, &lwk, rwork, &inf);
    else
      ((geev_r_fn)geev)(&cl, &cr, &nn, w, &nn, ev, ev + n * rs, vl, &nn, vr, &nn, work, &lwk,
                        &inf);
    char *vlo = vlout ? (char *)vlout->data + i * n * n * ces : NULL;
    char *vro = vrout ? (char *)vrout->data + i * n * n * ces : NULL;
    if (inf != 0) {
      fill_nan(wo, n, cdt);
      if (vlo) fill_nan(vlo, n * n, cdt);
      if (vro) fill_nan(vro, n * n, cdt);
    } else if (cplx) {
      if (vlo) store_rowmajor(vlo, vl, n, es);
      if (vro) store_rowmajor(vro, vr, n, es);
    } else {
      for (int64_t k = 0; k < n; ++k) { /* w = wr + i wi */
        if (p == S) {
          ((float *)wo)[2 * k] = ((float *)ev)[k];
          ((float *)wo)[2 * k + 1] = ((float *)ev)[n + k];
        } else {
          ((double *)wo)[2 * k] = ((double *)ev)[k];
          ((double *)wo)[2 * k + 1] = ((double *)ev)[n + k];
        }
      }
      if (p == S) {
        if (vlo) unpack_float((float *)vlo, (float *)vl, (float *)ev + n, n);
        if (vro) unpack_float((float *)vro, (float *)vr, (float *)ev + n, n);
      } else {
        if (vlo) unpack_double((double *)vlo, (double *)vl, (double *)ev + n, n);
        if (vro) unpack_double((double *)vro, (double *)vr, (double *)ev + n, n);
      }
    }
  });
  return 0;
}

/* ---- schur: T (quasi-)upper triangular and unitary Q with a = Q T Q^H (gees, unsorted) ---- */

typedef struct {
  int32_t compute_schur_vectors;
} schur_params;

static int schur_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                        const void *params, pb_kernel_ctx *ctx) {
  const schur_params *pp = params;
  const pb_operand *a = &ins[0];
  if (check_square(ctx, a, "schur")) return ctx->error;
  const int nd = a->ndim, p = prefix_of(a->dtype), cplx = p >= C;
  const int64_t n = a->shape[nd - 1], nb = batch_count(a, 2), sq[2] = {n, n};
  if (nout != 1 + !!pp->compute_schur_vectors)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "schur: outputs do not fit");
  for (int k = 0; k < nout; ++k)
    if (!fits(&outs[k], a->dtype, a, nd - 2, sq, 2))
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "schur: outputs do not fit");
  if (nb == 0 || n == 0) return 0;
  if (load_lapack(ctx)) return ctx->error;
  const int es = a->itemsize, rs = cplx ? es / 2 : es;
  char jv = pp->compute_schur_vectors ? 'V' : 'N', sort = 'N';
  int ni = (int)n, lwork = -1, info = 0, sdim = 0, bw[4] = {0};
  double q[4] = {0}, dummy[4] = {0};
  if (cplx)
    ((gees_c_fn)lapack.gees[p])(&jv, &sort, NULL, &ni, dummy, &ni, &sdim, dummy, dummy, &ni, q,
                                &lwork, dummy, bw, &info);
  else
    ((gees_r_fn)lapack.gees[p])(&jv, &sort, NULL, &ni, dummy, &ni, &sdim, dummy, dummy, dummy,
                                &ni, q, &lwork, bw, &info);
  const int64_t lw = queried(q, p);
  if (lw > INT32_MAX) return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "schur: workspace too large");
  /* scratch: a, vs (n*n es), w (2n real or n complex), work, rwork (n real), bwork (n int) */
  const int64_t off_vs = n * n * es, off_w = 2 * n * n * es, off_work = off_w + 2 * n * rs,
                off_rwork = off_work + lw * es, off_bwork = off_rwork + n * rs,
                bytes = off_bwork + n * 4 + 64;
  const double flops = 15.0 * (double)n * n * n;
  const int threads = batch_threads(ctx, nb, flops);
  char **ws;
  if (thread_scratch(ctx, threads, (size_t)bytes, &ws)) return ctx->error;
  void *gees = lapack.gees[p];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *w = ws[tid], *vs = w + off_vs, *ev = w + off_w, *work = w + off_work;
    load_colmajor(w, a, i, n, es);
    int nn = (int)n, lwk = (int)lw, inf = 0, sd = 0;
    char cv = jv, so = sort;
    if (cplx)
      ((gees_c_fn)gees)(&cv, &so, NULL, &nn, w, &nn, &sd, ev, vs, &nn, work, &lwk, w + off_rwork,
                        (int *)(w + off_bwork), &inf);
    else
      ((gees_r_fn)gees)(&cv, &so, NULL, &nn, w, &nn, &sd, ev, ev + n * rs, vs, &nn, work, &lwk,
                        (int *)(w + off_bwork), &inf);
    char *t = (char *)outs[0].data + i * n * n * es;
    char *qo = nout > 1 ? (char *)outs[1].data + i * n * n * es : NULL;
    if (inf != 0) {
      fill_nan(t, n * n, a->dtype);
      if (qo) fill_nan(qo, n * n, a->dtype);
    } else {
      store_rowmajor(t, w, n, es);
      if (qo) store_rowmajor(qo, vs, n, es);
    }
  });
  return 0;
}

/* ---- hessenberg: gehrd's packed (a, taus): H in the upper triangle and first subdiagonal,
 * the reflectors below ---- */

static int hessenberg_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                             const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *a = &ins[0];
  if (check_square(ctx, a, "hessenberg")) return ctx->error;
  const int nd = a->ndim, p = prefix_of(a->dtype);
  const int64_t n = a->shape[nd - 1], nb = batch_count(a, 2), sq[2] = {n, n};
  const int64_t nt = n > 0 ? n - 1 : 0;
  if (!fits(&outs[0], a->dtype, a, nd - 2, sq, 2) || !fits(&outs[1], a->dtype, a, nd - 2, &nt, 1))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "hessenberg: outputs do not fit");
  if (nb == 0 || n == 0) return 0;
  if (load_lapack(ctx)) return ctx->error;
  const int es = a->itemsize;
  int ni = (int)n, ilo = 1, ihi = (int)n, lwork = -1, info = 0;
  double q[4] = {0}, dummy[4] = {0};
  lapack.gehrd[p](&ni, &ilo, &ihi, dummy, &ni, dummy, q, &lwork, &info);
  const int64_t lw = queried(q, p);
  if (lw > INT32_MAX)
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "hessenberg: workspace too large");
  const int64_t off_tau = n * n * es, off_work = off_tau + n * es, bytes = off_work + lw * es;
  const double flops = 10.0 / 3 * (double)n * n * n;
  const int threads = batch_threads(ctx, nb, flops);
  char **ws;
  if (thread_scratch(ctx, threads, (size_t)bytes, &ws)) return ctx->error;
  gehrd_fn gehrd = lapack.gehrd[p];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *w = ws[tid], *tau = w + off_tau;
    load_colmajor(w, a, i, n, es);
    int nn = (int)n, lo = 1, hi = (int)n, lwk = (int)lw, inf = 0;
    gehrd(&nn, &lo, &hi, w, &nn, tau, w + off_work, &lwk, &inf);
    store_rowmajor((char *)outs[0].data + i * n * n * es, w, n, es);
    memcpy((char *)outs[1].data + i * nt * es, tau, (size_t)(nt * es));
  });
  return 0;
}

/* ---- tridiagonal: sytrd/hetrd's packed a, diagonal d, off-diagonal e (real) and taus ---- */

typedef struct {
  int32_t lower;
} tridiagonal_params;

static int tridiagonal_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                              const void *params, pb_kernel_ctx *ctx) {
  const tridiagonal_params *pp = params;
  const pb_operand *a = &ins[0];
  if (check_square(ctx, a, "tridiagonal")) return ctx->error;
  const int nd = a->ndim, p = prefix_of(a->dtype);
  const int64_t n = a->shape[nd - 1], nb = batch_count(a, 2), sq[2] = {n, n};
  const int64_t nt = n > 0 ? n - 1 : 0;
  const int rdt = real_of(a->dtype);
  if (!fits(&outs[0], a->dtype, a, nd - 2, sq, 2) || !fits(&outs[1], rdt, a, nd - 2, &n, 1) ||
      !fits(&outs[2], rdt, a, nd - 2, &nt, 1) || !fits(&outs[3], a->dtype, a, nd - 2, &nt, 1))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "tridiagonal: outputs do not fit");
  if (nb == 0 || n == 0) return 0;
  if (load_lapack(ctx)) return ctx->error;
  const int es = a->itemsize, rs = outs[1].itemsize;
  char uplo = pp->lower ? 'L' : 'U';
  int ni = (int)n, lwork = -1, info = 0;
  double q[4] = {0}, dummy[4] = {0};
  lapack.sytrd[p](&uplo, &ni, dummy, &ni, dummy, dummy, dummy, q, &lwork, &info);
  const int64_t lw = queried(q, p);
  if (lw > INT32_MAX)
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "tridiagonal: workspace too large");
  const int64_t off_e = n * n * es, off_tau = off_e + n * rs, off_work = off_tau + n * es,
                bytes = off_work + lw * es;
  const double flops = 4.0 / 3 * (double)n * n * n;
  const int threads = batch_threads(ctx, nb, flops);
  char **ws;
  if (thread_scratch(ctx, threads, (size_t)bytes, &ws)) return ctx->error;
  sytrd_fn sytrd = lapack.sytrd[p];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *w = ws[tid], *e = w + off_e, *tau = w + off_tau;
    load_colmajor(w, a, i, n, es);
    int nn = (int)n, lwk = (int)lw, inf = 0;
    char ul = uplo;
    sytrd(&ul, &nn, w, &nn, (char *)outs[1].data + i * n * rs, e, tau, w + off_work, &lwk, &inf);
    store_rowmajor((char *)outs[0].data + i * n * n * es, w, n, es);
    memcpy((char *)outs[2].data + i * nt * rs, e, (size_t)(nt * rs));
    memcpy((char *)outs[3].data + i * nt * es, tau, (size_t)(nt * es));
  });
  return 0;
}

/* ---- tridiagonal_solve: A x = b for tridiagonal A given as dl (A[i, i-1], dl[0] unused),
 * d and du (A[i, i+1], du[m-1] unused), (..., m) each, and b (..., m, k): gtsv (partial
 * pivoting); a singular A gives NaNs ---- */

typedef struct {
  int32_t perturb_singular;
} tridiagonal_solve_params;

/* perturb_singular: LU with partial pivoting as gttrf (U gets a second superdiagonal du2), then
 * every pivot smaller than tol = eps * max|U| is moved to magnitude tol (its phase kept, + tol
 * for an exact zero) before gtts2's substitutions, so a singular system gives a finite result
 * (inverse iteration, as JAX's perturbed CPU kernel). In place on the scratch; b column-major
 * (m x k). */
#define PERTURBED_SOLVE(NAME, T, R, ABS1, ABS, EPS)                                               \
  static void NAME(char *pdl, char *pd, char *pdu, char *pdu2, int *ipiv, char *pb, int64_t n,    \
                   int64_t k) {                                                                   \
    T *dl = (T *)pdl, *d = (T *)pd, *du = (T *)pdu, *du2 = (T *)pdu2, *b = (T *)pb;               \
    for (int64_t i = 0; i + 2 < n; ++i) du2[i] = 0;                                               \
    for (int64_t i = 0; i + 1 < n; ++i) {                                                         \
      if (ABS1(d[i]) >= ABS1(dl[i])) {                                                            \
        ipiv[i] = 0;                                                                              \
        if (d[i] != 0) {                                                                          \
          const T f = dl[i] / d[i];                                                               \
          dl[i] = f;                                                                              \
          d[i + 1] -= f * du[i];                                                                  \
        }                                                                                         \
      } else {                                                                                    \
        const T f = d[i] / dl[i];                                                                 \
        d[i] = dl[i];                                                                             \
        dl[i] = f;                                                                                \
        const T t = du[i];                                                                        \
        du[i] = d[i + 1];                                                                         \
        d[i + 1] = t - f * d[i + 1];                                                              \
        if (i + 2 < n) {                                                                          \
          du2[i] = du[i + 1];                                                                     \
          du[i + 1] = -f * du[i + 1];                                                             \
        }                                                                                         \
        ipiv[i] = 1;                                                                              \
      }                                                                                           \
    }                                                                                             \
    R big = 0;                                                                                    \
    for (int64_t i = 0; i < n; ++i) {                                                             \
      if (ABS(d[i]) > big) big = ABS(d[i]);                                                       \
      if (i + 1 < n && ABS(du[i]) > big) big = ABS(du[i]);                                        \
      if (i + 2 < n && ABS(du2[i]) > big) big = ABS(du2[i]);                                      \
    }                                                                                             \
    const R tol = EPS * big > 0 ? EPS * big : EPS;                                                \
    for (int64_t i = 0; i < n; ++i) {                                                             \
      const R a = ABS(d[i]);                                                                      \
      if (!(a >= tol)) d[i] = a > 0 ? d[i] * (tol / a) : (T)tol;                                  \
    }                                                                                             \
    for (int64_t c = 0; c < k; ++c) {                                                             \
      T *x = b + c * n;                                                                           \
      for (int64_t i = 0; i + 1 < n; ++i) {                                                       \
        if (ipiv[i]) {                                                                            \
          const T t = x[i];                                                                       \
          x[i] = x[i + 1];                                                                        \
          x[i + 1] = t - dl[i] * x[i];                                                            \
        } else                                                                                    \
          x[i + 1] -= dl[i] * x[i];                                                               \
      }                                                                                           \
      for (int64_t i = n - 1; i >= 0; --i) {                                                      \
        T t = x[i];                                                                               \
        if (i + 1 < n) t -= du[i] * x[i + 1];                                                     \
        if (i + 2 < n) t -= du2[i] * x[i + 2];                                                    \
        x[i] = t / d[i];                                                                          \
      }                                                                                           \
    }                                                                                             \
  }
#define ABS1_R(x) fabs((double)(x))
#define ABS1_C(x) (fabs((double)crealf(x)) + fabs((double)cimagf(x)))
#define ABS1_Z(x) (fabs(creal(x)) + fabs(cimag(x)))
PERTURBED_SOLVE(perturbed_s, float, float, ABS1_R, fabsf, FLT_EPSILON)
PERTURBED_SOLVE(perturbed_d, double, double, ABS1_R, fabs, DBL_EPSILON)
PERTURBED_SOLVE(perturbed_c, float complex, float, ABS1_C, cabsf, FLT_EPSILON)
PERTURBED_SOLVE(perturbed_z, double complex, double, ABS1_Z, cabs, DBL_EPSILON)
static void (*const perturbed[4])(char *, char *, char *, char *, int *, char *, int64_t,
                                  int64_t) = {perturbed_s, perturbed_d, perturbed_c, perturbed_z};

static int tridiagonal_solve_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                    const void *params, pb_kernel_ctx *ctx) {
  const tridiagonal_solve_params *pp = params;
  const pb_operand *dl = &ins[0], *d = &ins[1], *du = &ins[2], *b = &ins[3];
  pb_operand *x = &outs[0];
  const int nd = b->ndim, p = prefix_of(b->dtype);
  if (nd < 2 || p < 0 || !pb_operand_same_shape(b, x) || x->dtype != b->dtype)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "tridiagonal_solve: operands do not fit");
  for (int k = 0; k < 3; ++k) {
    const pb_operand *v = &ins[k];
    if (v->dtype != b->dtype || v->ndim != nd - 1)
      return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "tridiagonal_solve: operands do not fit");
    for (int q = 0; q < nd - 1; ++q)
      if (v->shape[q] != b->shape[q])
        return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "tridiagonal_solve: operands do not fit");
  }
  const int64_t m = b->shape[nd - 2], k = b->shape[nd - 1], nb = batch_count(b, 2);
  if (m > INT32_MAX || k > INT32_MAX || m * k > INT32_MAX)
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "tridiagonal_solve: system too large");
  if (nb == 0 || m == 0 || k == 0) return 0;
  if (load_lapack(ctx)) return ctx->error;
  const int es = b->itemsize;
  /* scratch: dl (m-1), d (m), du (m-1), du2 (m-2), b column-major (m x k), pivots (m) */
  const int64_t off_d = m * es, off_du = 2 * m * es, off_du2 = 3 * m * es, off_b = 4 * m * es,
                off_piv = off_b + m * k * es, bytes = off_piv + m * 4;
  const double flops = 8.0 * (double)m * k;
  const int threads = batch_threads(ctx, nb, flops);
  char **ws;
  if (thread_scratch(ctx, threads, (size_t)bytes, &ws)) return ctx->error;
  const int64_t sdl = dl->strides[nd - 2], sd = d->strides[nd - 2], sdu = du->strides[nd - 2];
  const int64_t brs = b->strides[nd - 2], bcs = b->strides[nd - 1];
  gtsv_fn gtsv = lapack.gtsv[p];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *w = ws[tid], *wd = w + off_d, *wdu = w + off_du, *wb = w + off_b;
    const char *pdl = (const char *)dl->data + batch_offset(dl, 1, i);
    const char *pd = (const char *)d->data + batch_offset(d, 1, i);
    const char *pdu = (const char *)du->data + batch_offset(du, 1, i);
    for (int64_t r = 0; r + 1 < m; ++r) {
      memcpy(w + r * es, pdl + (r + 1) * sdl, (size_t)es);
      memcpy(wdu + r * es, pdu + r * sdu, (size_t)es);
    }
    for (int64_t r = 0; r < m; ++r) memcpy(wd + r * es, pd + r * sd, (size_t)es);
    copy_matrix(wb, es, m * es, (const char *)b->data + batch_offset(b, 2, i), brs, bcs, m, k, es, 0, 0);
    int mi = (int)m, ki = (int)k, inf = 0;
    if (pp->perturb_singular)
      perturbed[p](w, wd, wdu, w + off_du2, (int *)(w + off_piv), wb, m, k);
    else
      gtsv(&mi, &ki, w, wd, wdu, wb, &mi, &inf);
    char *o = (char *)x->data + i * m * k * es;
    if (inf != 0) fill_nan(o, m * k, b->dtype);
    else copy_matrix(o, k * es, es, wb, es, m * es, m, k, es, 0, 0);
  });
  return 0;
}

static const pb_kernel_def kernels[] = {
  {"eig", eig_kernel, 1, -1, sizeof(eig_params), linalg_eig_prepare},
  {"schur", schur_kernel, 1, -1, sizeof(schur_params), linalg_eig_prepare},
  {"hessenberg", hessenberg_kernel, 1, 2, 0, linalg_eig_prepare},
  {"tridiagonal", tridiagonal_kernel, 1, 4, sizeof(tridiagonal_params), linalg_eig_prepare},
  {"tridiagonal_solve", tridiagonal_solve_kernel, 4, 1, sizeof(tridiagonal_solve_params),
   linalg_eig_prepare},
};
PB_KERNELS(kernels)
