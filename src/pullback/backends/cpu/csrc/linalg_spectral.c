/* Orthogonal and spectral decompositions (primitives/linalg_spectral.py) on SciPy's LAPACK:
 * qr (geqrf + orgqr/ungqr, geqp3 with pivoting), geqrf, householder_product (orgqr/ungqr),
 * eigh (syevd/heevd) and svd (gesdd, or gesvd for SvdAlgorithm.QR).
 *
 * The conventions of linalg.c: pointers from SciPy's cython_lapack capsules read by the prepare
 * hook with the GIL held; one call loops over the leading batch dimensions, split over OpenMP
 * threads with LAPACK held to one thread each when there is more than one matrix and threads
 * to spare; a single matrix runs LAPACK at the caller's thread allowance (the batch helpers
 * of linalg_batch.h).
 *
 * Row-major operands, column-major LAPACK: a row-major buffer read column-major is the
 * transpose. qr needs the true matrix (Householder reflections act on columns), so it copies
 * into a column-major scratch; eigh factors the transpose (aᵀ = conj(a) for Hermitian a, whose
 * eigenvectors are the conjugates); svd factors aᵀ = U' S V'ᴴ, so a = conj(V') S U'ᵀ: LAPACK's
 * VT' read row-major is u and its U' read row-major is vh, written straight into the outputs. */
#include "pb.h"
#include "kernel_abi.h"
#include "schedule.h"
#include "linalg_batch.h"
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef void (*geqrf_fn)(int *m, int *n, void *a, int *lda, void *tau, void *work, int *lwork,
                         int *info);
typedef void (*orgqr_fn)(int *m, int *n, int *k, void *a, int *lda, void *tau, void *work,
                         int *lwork, int *info);
typedef void (*geqp3_r_fn)(int *m, int *n, void *a, int *lda, int *jpvt, void *tau, void *work,
                           int *lwork, int *info);
typedef void (*geqp3_c_fn)(int *m, int *n, void *a, int *lda, int *jpvt, void *tau, void *work,
                           int *lwork, void *rwork, int *info);
typedef void (*syevd_fn)(char *jobz, char *uplo, int *n, void *a, int *lda, void *w, void *work,
                         int *lwork, int *iwork, int *liwork, int *info);
typedef void (*heevd_fn)(char *jobz, char *uplo, int *n, void *a, int *lda, void *w, void *work,
                         int *lwork, void *rwork, int *lrwork, int *iwork, int *liwork,
                         int *info);
typedef void (*gesdd_r_fn)(char *jobz, int *m, int *n, void *a, int *lda, void *s, void *u,
                           int *ldu, void *vt, int *ldvt, void *work, int *lwork, int *iwork,
                           int *info);
typedef void (*gesdd_c_fn)(char *jobz, int *m, int *n, void *a, int *lda, void *s, void *u,
                           int *ldu, void *vt, int *ldvt, void *work, int *lwork, void *rwork,
                           int *iwork, int *info);
typedef void (*gesvd_r_fn)(char *jobu, char *jobvt, int *m, int *n, void *a, int *lda, void *s,
                           void *u, int *ldu, void *vt, int *ldvt, void *work, int *lwork,
                           int *info);
typedef void (*gesvd_c_fn)(char *jobu, char *jobvt, int *m, int *n, void *a, int *lda, void *s,
                           void *u, int *ldu, void *vt, int *ldvt, void *work, int *lwork,
                           void *rwork, int *info);

enum { F_GEQRF, F_ORGQR, F_GEQP3, F_EVD, F_GESDD, F_GESVD, NF };
static void *lapack[NF][4];
static atomic_int lapack_loaded;

/* The prepare hook (kernel_abi.h): reads the pointers with the GIL held, before any kernel of
 * this file can first run. 0, or -1 with a Python exception set. */
static int spectral_prepare(void) {
  if (atomic_load_explicit(&lapack_loaded, memory_order_acquire)) return 0;
  static const char *const names[NF * 4] = {
      "sgeqrf", "dgeqrf", "cgeqrf", "zgeqrf", "sorgqr", "dorgqr", "cungqr", "zungqr",
      "sgeqp3", "dgeqp3", "cgeqp3", "zgeqp3", "ssyevd", "dsyevd", "cheevd", "zheevd",
      "sgesdd", "dgesdd", "cgesdd", "zgesdd", "sgesvd", "dgesvd", "cgesvd", "zgesvd"};
  void *p[NF * 4];
  if (pb_dot_prepare() < 0 ||
      pb_capsule_pointers("linalg", "scipy.linalg.cython_lapack", names, NF * 4, p) < 0)
    return -1;
  for (int f = 0; f < NF; ++f)
    for (int i = 0; i < 4; ++i) lapack[f][i] = p[f * 4 + i];
  atomic_store_explicit(&lapack_loaded, 1, memory_order_release);
  return 0;
}

static int load_lapack(pb_kernel_ctx *ctx) { return lapack_ready(ctx, &lapack_loaded); }

/* ---- this file's helpers ---- */

/* An r x c row-major identity (ones on the main diagonal) at p, elements of es bytes. */
static void fill_eye(char *p, int64_t r, int64_t c, int es, int prefix) {
  memset(p, 0, (size_t)(r * c * es));
  for (int64_t i = 0; i < r && i < c; ++i) {
    char *d = p + (i * c + i) * es;
    if (prefix == S || prefix == C) *(float *)d = 1.0f;
    else *(double *)d = 1.0;
  }
}

/* A workspace query's answer (work[0]'s real part) as a count, rounded up (float32 rounds) */
static int64_t work_count(const void *w, int prefix) {
  const double v = (prefix == S || prefix == C) ? (double)*(const float *)w : *(const double *)w;
  return (int64_t)(v * (1.0 + 1e-6)) + 1;
}

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

static int too_large(pb_kernel_ctx *ctx, int64_t m, int64_t n) {
  if (m > INT32_MAX / 2 || n > INT32_MAX / 2 || m * n > INT32_MAX)
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "matrix too large for LAPACK");
  return 0;
}

/* ---- qr: a = q r (geqrf, then orgqr/ungqr forms q); with pivoting a[:, p] = q r (geqp3).
 * q is (m, m) with full_matrices, else (m, min(m, n)); r has q's column count of rows. ---- */

typedef struct {
  int32_t full_matrices, pivoting;
} qr_params;

static int qr_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                     const void *params, pb_kernel_ctx *ctx) {
  const qr_params *pp = params;
  const pb_operand *a = &ins[0];
  pb_operand *q = &outs[0], *r = &outs[1], *pv = pp->pivoting && nout > 2 ? &outs[2] : NULL;
  const int nd = a->ndim;
  const int p = prefix_of(a->dtype);
  if (nd < 2 || p < 0 || q->dtype != a->dtype || r->dtype != a->dtype ||
      (pp->pivoting && (!pv || pv->dtype != PB_I32)))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "qr: operands do not fit");
  const int64_t m = a->shape[nd - 2], n = a->shape[nd - 1], k = m < n ? m : n;
  const int64_t qc = pp->full_matrices ? m : k, nb = batch_count(a, 2);
  if (q->shape[nd - 1] != qc || r->shape[nd - 2] != qc || r->shape[nd - 1] != n)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "qr: outputs do not fit");
  if (too_large(ctx, m, n > m ? n : m)) return ctx->error;
  if (nb == 0) return 0;
  const int es = a->itemsize, cplx = p >= C;
  if (m == 0 || n == 0) { /* no reflectors: q is the identity, r empty or zero */
    for (int64_t i = 0; i < nb; ++i) {
      fill_eye((char *)q->data + i * m * qc * es, m, qc, es, p);
      memset((char *)r->data + i * qc * n * es, 0, (size_t)(qc * n * es));
      if (pv)
        for (int64_t j = 0; j < n; ++j) ((int32_t *)pv->data)[i * n + j] = (int32_t)j;
    }
    return 0;
  }
  if (load_lapack(ctx)) return ctx->error;
  const int64_t cols = n > qc ? n : qc;
  int mi = (int)m, ni = (int)n, ki = (int)k, qci = (int)qc, lw = -1, info = 0;
  double q1[4] = {0}, q2[4] = {0}, dummy[4] = {0};
  int idummy[2] = {0};
  if (pp->pivoting) {
    if (cplx) ((geqp3_c_fn)lapack[F_GEQP3][p])(&mi, &ni, dummy, &mi, idummy, dummy, q1, &lw, dummy, &info);
    else ((geqp3_r_fn)lapack[F_GEQP3][p])(&mi, &ni, dummy, &mi, idummy, dummy, q1, &lw, &info);
  } else {
    ((geqrf_fn)lapack[F_GEQRF][p])(&mi, &ni, dummy, &mi, dummy, q1, &lw, &info);
  }
  ((orgqr_fn)lapack[F_ORGQR][p])(&mi, &qci, &ki, dummy, &mi, dummy, q2, &lw, &info);
  int64_t lwork = work_count(q1, p), l2 = work_count(q2, p);
  if (l2 > lwork) lwork = l2;
  const size_t o_cm = 0, o_tau = align64((size_t)(m * cols * es)),
               o_work = o_tau + align64((size_t)(k * es)),
               o_jpvt = o_work + align64((size_t)(lwork * es)),
               o_rwork = o_jpvt + align64((size_t)(n * 4)),
               total = o_rwork + align64((size_t)(2 * n * es / (cplx ? 2 : 1)));
  const double flops = 2.0 * m * n * k + 2.0 * m * qc * k;
  const int threads = batch_threads(ctx, nb, flops);
  char **blk;
  if (thread_scratch(ctx, threads, total, &blk)) return ctx->error;
  const int64_t rs = a->strides[nd - 2], cs = a->strides[nd - 1];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *w = blk[tid], *cm = w + o_cm, *tau = w + o_tau, *work = w + o_work;
    int *jpvt = (int *)(w + o_jpvt);
    int mi_ = (int)m, ni_ = (int)n, ki_ = (int)k, qci_ = (int)qc, lw_ = (int)lwork, info_ = 0;
    copy_matrix(cm, es, m * es, (const char *)a->data + batch_offset(a, 2, i), rs, cs, m, n, es,
                cplx, 0);
    if (pp->pivoting) {
      memset(jpvt, 0, (size_t)(n * 4)); /* every column free */
      if (cplx)
        ((geqp3_c_fn)lapack[F_GEQP3][p])(&mi_, &ni_, cm, &mi_, jpvt, tau, work, &lw_,
                                         w + o_rwork, &info_);
      else ((geqp3_r_fn)lapack[F_GEQP3][p])(&mi_, &ni_, cm, &mi_, jpvt, tau, work, &lw_, &info_);
      int32_t *po = (int32_t *)pv->data + i * n;
      for (int64_t j = 0; j < n; ++j) po[j] = jpvt[j] - 1;
    } else {
      ((geqrf_fn)lapack[F_GEQRF][p])(&mi_, &ni_, cm, &mi_, tau, work, &lw_, &info_);
    }
    /* r: the upper triangle of the factored matrix (rows past m, with full_matrices on a
     * wide... never: qc <= m) */
    char *ro = (char *)r->data + i * qc * n * es;
    copy_matrix(ro, n * es, es, cm, es, m * es, qc, n, es, cplx, 0);
    for (int64_t row = 1; row < qc; ++row)
      memset(ro + row * n * es, 0, (size_t)((row < n ? row : n) * es));
    ((orgqr_fn)lapack[F_ORGQR][p])(&mi_, &qci_, &ki_, cm, &mi_, tau, work, &lw_, &info_);
    copy_matrix((char *)q->data + i * m * qc * es, qc * es, es, cm, es, m * es, m, qc, es, cplx,
                0);
  });
  return 0;
}

/* ---- geqrf: the packed reflectors (m, n) and taus (min(m, n)), as LAPACK leaves them ---- */

static int geqrf_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                        const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *a = &ins[0];
  pb_operand *h = &outs[0], *t = &outs[1];
  const int nd = a->ndim, p = prefix_of(a->dtype);
  if (nd < 2 || p < 0 || !pb_operand_same_shape(a, h) || h->dtype != a->dtype ||
      t->dtype != a->dtype)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "geqrf: operands do not fit");
  const int64_t m = a->shape[nd - 2], n = a->shape[nd - 1], k = m < n ? m : n,
                nb = batch_count(a, 2);
  if (too_large(ctx, m, n)) return ctx->error;
  if (nb == 0 || m == 0 || n == 0) return 0;
  if (load_lapack(ctx)) return ctx->error;
  const int es = a->itemsize, cplx = p >= C;
  int mi = (int)m, ni = (int)n, lw = -1, info = 0;
  double q1[4] = {0}, dummy[4] = {0};
  ((geqrf_fn)lapack[F_GEQRF][p])(&mi, &ni, dummy, &mi, dummy, q1, &lw, &info);
  const int64_t lwork = work_count(q1, p);
  const size_t o_work = align64((size_t)(m * n * es)), total = o_work + (size_t)(lwork * es);
  const double flops = 2.0 * m * n * k;
  const int threads = batch_threads(ctx, nb, flops);
  char **blk;
  if (thread_scratch(ctx, threads, total, &blk)) return ctx->error;
  const int64_t rs = a->strides[nd - 2], cs = a->strides[nd - 1];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *cm = blk[tid];
    int mi_ = (int)m, ni_ = (int)n, lw_ = (int)lwork, info_ = 0;
    copy_matrix(cm, es, m * es, (const char *)a->data + batch_offset(a, 2, i), rs, cs, m, n, es,
                cplx, 0);
    ((geqrf_fn)lapack[F_GEQRF][p])(&mi_, &ni_, cm, &mi_, (char *)t->data + i * k * es,
                                   cm + o_work, &lw_, &info_);
    copy_matrix((char *)h->data + i * m * n * es, n * es, es, cm, es, m * es, m, n, es, cplx, 0);
  });
  return 0;
}

/* ---- householder_product: the first n columns of H_1 ... H_k (orgqr/ungqr) from reflectors
 * below a's diagonal (m, n), m >= n >= k, and taus (k) ---- */

static int householder_product_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                      const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *a = &ins[0], *t = &ins[1];
  pb_operand *q = &outs[0];
  const int nd = a->ndim, p = prefix_of(a->dtype);
  if (nd < 2 || p < 0 || t->ndim != nd - 1 || !pb_operand_same_shape(a, q) ||
      t->dtype != a->dtype || q->dtype != a->dtype)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "householder_product: operands do not fit");
  const int64_t m = a->shape[nd - 2], n = a->shape[nd - 1], k = t->shape[nd - 2],
                nb = batch_count(a, 2);
  if (m < n || n < k) return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "householder_product: m >= n >= k");
  if (too_large(ctx, m, n)) return ctx->error;
  if (nb == 0 || m == 0) return 0;
  const int es = a->itemsize, cplx = p >= C;
  if (n == 0) return 0;
  if (load_lapack(ctx)) return ctx->error;
  int mi = (int)m, ni = (int)n, ki = (int)k, lw = -1, info = 0;
  double q1[4] = {0}, dummy[4] = {0};
  ((orgqr_fn)lapack[F_ORGQR][p])(&mi, &ni, &ki, dummy, &mi, dummy, q1, &lw, &info);
  const int64_t lwork = work_count(q1, p);
  const size_t o_tau = align64((size_t)(m * n * es)), o_work = o_tau + align64((size_t)(k * es)),
               total = o_work + (size_t)(lwork * es);
  const double flops = 4.0 * m * n * k;
  const int threads = batch_threads(ctx, nb, flops);
  char **blk;
  if (thread_scratch(ctx, threads, total, &blk)) return ctx->error;
  const int64_t rs = a->strides[nd - 2], cs = a->strides[nd - 1], ts = t->strides[nd - 2];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *cm = blk[tid], *tau = cm + o_tau;
    int mi_ = (int)m, ni_ = (int)n, ki_ = (int)k, lw_ = (int)lwork, info_ = 0;
    copy_matrix(cm, es, m * es, (const char *)a->data + batch_offset(a, 2, i), rs, cs, m, n, es,
                cplx, 0);
    copy_matrix(tau, es, es, (const char *)t->data + batch_offset(t, 1, i), ts, ts, k, 1, es,
                cplx, 0);
    ((orgqr_fn)lapack[F_ORGQR][p])(&mi_, &ni_, &ki_, cm, &mi_, tau, cm + o_work, &lw_, &info_);
    copy_matrix((char *)q->data + i * m * n * es, n * es, es, cm, es, m * es, m, n, es, cplx, 0);
  });
  return 0;
}

/* ---- eigh: v (n, n) with eigenvectors as columns and real w (n) ascending, of the Hermitian
 * matrix a's `lower` (else upper) triangle (syevd/heevd); no convergence: NaNs (as JAX) ---- */

typedef struct {
  int32_t lower;
} eigh_params;

static int eigh_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                       const void *params, pb_kernel_ctx *ctx) {
  const eigh_params *pp = params;
  const pb_operand *a = &ins[0];
  pb_operand *v = &outs[0], *w = &outs[1];
  const int nd = a->ndim, p = prefix_of(a->dtype);
  if (nd < 2 || p < 0 || !pb_operand_same_shape(a, v) || v->dtype != a->dtype ||
      a->shape[nd - 1] != a->shape[nd - 2] || w->ndim != nd - 1)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "eigh: operands do not fit");
  const int64_t n = a->shape[nd - 1], nb = batch_count(a, 2);
  if (too_large(ctx, n, n)) return ctx->error;
  if (nb == 0 || n == 0) return 0;
  if (load_lapack(ctx)) return ctx->error;
  const int es = a->itemsize, cplx = p >= C, rs_ = cplx ? es / 2 : es;
  char jobz = 'V', uplo = pp->lower ? 'U' : 'L'; /* a's lower triangle is aᵀ's upper one */
  int ni = (int)n, lw = -1, lrw = -1, liw = -1, info = 0;
  double q1[4] = {0}, q2[4] = {0}, dummy[4] = {0};
  int qi = 0;
  if (cplx)
    ((heevd_fn)lapack[F_EVD][p])(&jobz, &uplo, &ni, dummy, &ni, dummy, q1, &lw, q2, &lrw, &qi,
                                 &liw, &info);
  else
    ((syevd_fn)lapack[F_EVD][p])(&jobz, &uplo, &ni, dummy, &ni, dummy, q1, &lw, &qi, &liw, &info);
  const int64_t lwork = work_count(q1, p), lrwork = cplx ? work_count(q2, p - 2) : 0,
                liwork = qi > 0 ? qi : 1;
  const size_t o_work = align64((size_t)(n * n * es)),
               o_rwork = o_work + align64((size_t)(lwork * es)),
               o_iwork = o_rwork + align64((size_t)(lrwork * rs_)),
               total = o_iwork + (size_t)(liwork * 4);
  const double flops = 9.0 * n * n * n;
  const int threads = batch_threads(ctx, nb, flops);
  char **blk;
  if (thread_scratch(ctx, threads, total, &blk)) return ctx->error;
  const int64_t rs = a->strides[nd - 2], cs = a->strides[nd - 1];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *cm = blk[tid], *vo = (char *)v->data + i * n * n * es, *wo = (char *)w->data + i * n * rs_;
    char jobz_ = 'V', uplo_ = uplo;
    int ni_ = (int)n, lw_ = (int)lwork, lrw_ = (int)lrwork, liw_ = (int)liwork, info_ = 0;
    copy_matrix(cm, n * es, es, (const char *)a->data + batch_offset(a, 2, i), rs, cs, n, n, es,
                cplx, 0);
    if (cplx)
      ((heevd_fn)lapack[F_EVD][p])(&jobz_, &uplo_, &ni_, cm, &ni_, wo, cm + o_work, &lw_,
                                   cm + o_rwork, &lrw_, (int *)(cm + o_iwork), &liw_, &info_);
    else
      ((syevd_fn)lapack[F_EVD][p])(&jobz_, &uplo_, &ni_, cm, &ni_, wo, cm + o_work, &lw_,
                                   (int *)(cm + o_iwork), &liw_, &info_);
    if (info_ != 0) {
      fill_nan(vo, n * n, a->dtype);
      fill_nan(wo, n, p == S || p == C ? PB_F32 : PB_F64);
    } else {
      /* the eigenvectors V' of aᵀ = conj(a), column-major: v = conj(V') */
      copy_matrix(vo, n * es, es, cm, es, n * es, n, n, es, cplx, 1);
    }
  });
  return 0;
}

/* ---- svd: s (min(m, n)) descending, and with vectors u (m, m | k), vh (n | k, n) (gesdd, or
 * gesvd with algorithm 1); no convergence: NaNs (as JAX) ---- */

typedef struct {
  int32_t full_matrices, compute_uv, algorithm;
} svd_params;

static int svd_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                      const void *params, pb_kernel_ctx *ctx) {
  const svd_params *pp = params;
  const pb_operand *a = &ins[0];
  pb_operand *s = &outs[0], *u = pp->compute_uv ? &outs[1] : NULL,
             *vt = pp->compute_uv ? &outs[2] : NULL;
  const int nd = a->ndim, p = prefix_of(a->dtype);
  if (nd < 2 || p < 0 || (pp->compute_uv && nout != 3) || s->ndim != nd - 1)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "svd: operands do not fit");
  const int64_t m = a->shape[nd - 2], n = a->shape[nd - 1], k = m < n ? m : n,
                nb = batch_count(a, 2);
  const int64_t uc = pp->full_matrices ? m : k, vr = pp->full_matrices ? n : k;
  if (u && (u->shape[nd - 2] != m || u->shape[nd - 1] != uc || vt->shape[nd - 2] != vr ||
            vt->shape[nd - 1] != n || u->dtype != a->dtype || vt->dtype != a->dtype))
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "svd: outputs do not fit");
  if (too_large(ctx, m, n)) return ctx->error;
  if (nb == 0) return 0;
  const int es = a->itemsize, cplx = p >= C, rs_ = cplx ? es / 2 : es;
  const int rdt = p == S || p == C ? PB_F32 : PB_F64;
  if (k == 0) { /* no singular values: the vectors are identities (or empty) */
    if (u)
      for (int64_t i = 0; i < nb; ++i) {
        fill_eye((char *)u->data + i * m * uc * es, m, uc, es, p);
        fill_eye((char *)vt->data + i * vr * n * es, vr, n, es, p);
      }
    return 0;
  }
  if (load_lapack(ctx)) return ctx->error;
  /* the column-major problem is aᵀ: M = n rows, N = m columns */
  const int gesvd = pp->algorithm == 1;
  char jobz = !u ? 'N' : pp->full_matrices ? 'A' : 'S';
  int M = (int)n, N = (int)m, ldu = (int)(n > 0 ? n : 1), ldvt = (int)(uc > 0 ? uc : 1);
  int lw = -1, info = 0, idummy[2] = {0};
  double q1[4] = {0}, dummy[4] = {0};
  if (gesvd) {
    if (cplx)
      ((gesvd_c_fn)lapack[F_GESVD][p])(&jobz, &jobz, &M, &N, dummy, &M, dummy, dummy, &ldu,
                                       dummy, &ldvt, q1, &lw, dummy, &info);
    else
      ((gesvd_r_fn)lapack[F_GESVD][p])(&jobz, &jobz, &M, &N, dummy, &M, dummy, dummy, &ldu,
                                       dummy, &ldvt, q1, &lw, &info);
  } else {
    if (cplx)
      ((gesdd_c_fn)lapack[F_GESDD][p])(&jobz, &M, &N, dummy, &M, dummy, dummy, &ldu, dummy,
                                       &ldvt, q1, &lw, dummy, idummy, &info);
    else
      ((gesdd_r_fn)lapack[F_GESDD][p])(&jobz, &M, &N, dummy, &M, dummy, dummy, &ldu, dummy,
                                       &ldvt, q1, &lw, idummy, &info);
  }
  const int64_t mx = m > n ? m : n;
  int64_t lwork = work_count(q1, p);
  int64_t lrwork = 0;
  if (cplx) lrwork = gesvd ? 5 * k : (u ? k * (5 * k + 7 > 2 * mx + 2 * k + 1 ? 5 * k + 7
                                                                            : 2 * mx + 2 * k + 1)
                                        : 7 * k);
  const size_t o_work = align64((size_t)(m * n * es)),
               o_rwork = o_work + align64((size_t)(lwork * es)),
               o_iwork = o_rwork + align64((size_t)(lrwork * rs_)),
               total = o_iwork + (size_t)(8 * k * 4);
  const double flops = u ? 4.0 * m * n * k + 8.0 * k * k * k : 2.0 * m * n * k;
  const int threads = batch_threads(ctx, nb, flops);
  char **blk;
  if (thread_scratch(ctx, threads, total, &blk)) return ctx->error;
  const int64_t rs = a->strides[nd - 2], cs = a->strides[nd - 1];
  FOR_BATCH(ctx, nb, threads, flops, {
    char *cm = blk[tid], *so = (char *)s->data + i * k * rs_;
    char *uo = u ? (char *)u->data + i * m * uc * es : (char *)dummy;
    char *vo = u ? (char *)vt->data + i * vr * n * es : (char *)dummy;
    char jz = jobz;
    int M_ = (int)n, N_ = (int)m, ldu_ = ldu, ldvt_ = ldvt, lw_ = (int)lwork, info_ = 0;
    copy_matrix(cm, n * es, es, (const char *)a->data + batch_offset(a, 2, i), rs, cs, m, n, es,
                cplx, 0);
    /* LAPACK's U' (of aᵀ) is vh read row-major, its VT' is u */
    if (gesvd) {
      if (cplx)
        ((gesvd_c_fn)lapack[F_GESVD][p])(&jz, &jz, &M_, &N_, cm, &M_, so, vo, &ldu_, uo, &ldvt_,
                                         cm + o_work, &lw_, cm + o_rwork, &info_);
      else
        ((gesvd_r_fn)lapack[F_GESVD][p])(&jz, &jz, &M_, &N_, cm, &M_, so, vo, &ldu_, uo, &ldvt_,
                                         cm + o_work, &lw_, &info_);
    } else {
      if (cplx)
        ((gesdd_c_fn)lapack[F_GESDD][p])(&jz, &M_, &N_, cm, &M_, so, vo, &ldu_, uo, &ldvt_,
                                         cm + o_work, &lw_, cm + o_rwork, (int *)(cm + o_iwork),
                                         &info_);
      else
        ((gesdd_r_fn)lapack[F_GESDD][p])(&jz, &M_, &N_, cm, &M_, so, vo, &ldu_, uo, &ldvt_,
                                         cm + o_work, &lw_, (int *)(cm + o_iwork), &info_);
    }
    if (info_ != 0) {
      fill_nan(so, k, rdt);
      if (u) {
        fill_nan(uo, m * uc, a->dtype);
        fill_nan(vo, vr * n, a->dtype);
      }
    }
  });
  return 0;
}

static const pb_kernel_def kernels[] = {
  {"qr", qr_kernel, 1, 2, sizeof(qr_params), spectral_prepare},
  {"qr_pivoting", qr_kernel, 1, 3, sizeof(qr_params), spectral_prepare},
  {"geqrf", geqrf_kernel, 1, 2, 0, spectral_prepare},
  {"householder_product", householder_product_kernel, 2, 1, 0, spectral_prepare},
  {"eigh", eigh_kernel, 1, 2, sizeof(eigh_params), spectral_prepare},
  {"svd", svd_kernel, 1, 3, sizeof(svd_params), spectral_prepare},
  {"svd_values", svd_kernel, 1, 1, sizeof(svd_params), spectral_prepare},
};
PB_KERNELS(kernels)
