/* Batched matrix multiply, the kernel behind dot_general (the frontend views both operands as
 * (B, M, K) x (B, K, N) first). Four paths:
 *
 * - float32 products of a million multiply-adds and more, on CPUs with AVX-512: the own kernel
 *   of gemm.c (it beats OpenBLAS there); large ones cut into chunks for the thread pool, eager
 *   and in programs alike.
 * - float32/float64/complex64/complex128 in and out otherwise: SciPy's BLAS through the
 *   function pointers its cython_blas module exports (no BLAS at build time). BLAS threads
 *   itself, so it is only ever called from the calling thread, never inside an OpenMP region.
 * - integers of any widths in, an integer out: an own cache-blocked kernel accumulating in 32 or
 *   64 bits (the output's width: products and sums wrap, which equals wrapping in the output
 *   dtype, as in JAX).
 * - float16/bfloat16/float8 in, one of those or float32 out: the same blocked kernel on float32,
 *   converting while packing and rounding once on store.
 *
 * The blocked kernel of the last two paths is Goto/BLIS-shaped: a task is an (MC x NC) output
 * tile of one batch element; for each KC slice it packs the A rows and B columns (converting to
 * the accumulator type) into aligned panels and runs an MR x NR register-blocked micro-kernel
 * over them, accumulating in a per-thread tile that is stored (converted) once. Tasks spread
 * over OpenMP threads. */
#include "pool.h"
#include "cast.h"
#include "gemm.h"
#include "move.h"
#include "schedule.h"
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- SciPy's BLAS ---- */

typedef void (*gemm_fn)(char *ta, char *tb, int *m, int *n, int *k, void *alpha, void *a, int *lda,
                        void *b, int *ldb, void *beta, void *c, int *ldc);
static gemm_fn gemm[PB_NDT]; /* indexed by dtype slot; filled on first use */

/* The function pointers SciPy's Cython module `module` (cython_blas, cython_lapack) exports in
 * its __pyx_capi__ capsules as names[0..n) into out (needs the GIL; -1 with an exception naming
 * `who` and the missing function). Shared by every kernel family that calls BLAS or LAPACK. */
int pb_capsule_pointers(const char *who, const char *module, const char *const *names, int n,
                        void **out) {
  PyObject *mod = PyImport_ImportModule(module);
  if (!mod) return -1;
  PyObject *capi = PyObject_GetAttrString(mod, "__pyx_capi__");
  Py_DECREF(mod);
  if (!capi) return -1;
  for (int i = 0; i < n; ++i) {
    PyObject *cap = PyDict_GetItemString(capi, names[i]); /* borrowed */
    out[i] = cap ? PyCapsule_GetPointer(cap, PyCapsule_GetName(cap)) : NULL;
    if (!out[i]) {
      Py_DECREF(capi);
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_ImportError, "%s: SciPy's %s has no %s", who, module, names[i]);
      return -1;
    }
  }
  Py_DECREF(capi);
  return 0;
}

static int load_blas(void) {
  if (gemm[PB_F32]) return 0;
  static const char *const names[] = {"sgemm", "dgemm", "cgemm", "zgemm"};
  static const int slots[] = {PB_F32, PB_F64, PB_C64, PB_C128};
  void *found[4];
  if (pb_capsule_pointers("dot_general", "scipy.linalg.cython_blas", names, 4, found) < 0)
    return -1;
  for (int i = 0; i < 4; ++i) gemm[slots[i]] = (gemm_fn)found[i];
  return 0;
}

/* How BLAS can read the row-major r x c matrix with byte strides (s0, s1) so that op(mem) is its
 * transpose (the operand order of a row-major product done by column-major gemm). */
static int blas_layout(npy_intp r, npy_intp c, npy_intp s0, npy_intp s1, npy_intp es, char *trans, int *ld) {
  if ((c == 1 || s1 == es) && (r == 1 || (s0 > 0 && s0 % es == 0))) {
    npy_intp l = r == 1 ? c : s0 / es;
    if (l >= (c > 1 ? c : 1) && l <= INT_MAX) { *trans = 'N'; *ld = (int)l; return 0; }
  }
  if ((r == 1 || s0 == es) && (c == 1 || (s1 > 0 && s1 % es == 0))) {
    npy_intp l = c == 1 ? r : s1 / es;
    if (l >= (r > 1 ? r : 1) && l <= INT_MAX) { *trans = 'T'; *ld = (int)l; return 0; }
  }
  return -1;
}

/* A C-contiguous malloc'ed copy of the (Bt, r, c) operand at p with byte strides st (NULL when
 * out of memory); no GIL needed. */
static char *contiguous_raw(const char *p, const npy_intp *st, npy_intp Bt, npy_intp r, npy_intp c,
                            npy_intp es) {
  char *buf = malloc((size_t)(Bt * r * c * es) + 1);
  if (!buf) return NULL;
  const npy_intp shape[3] = {Bt, r, c};
  const npy_intp strides[6] = {st[0], st[1], st[2], r * c * es, c * es, es};
  char *base[2] = {(char *)p, buf};
  pb_iterate(3, shape, 2, base, strides, pb_move_copy_loop(es), NULL, 1);
  return buf;
}

/* out (B, M, N) = a @ b (+= when acc) through BLAS; a, b and out of dtype slot `slot`, out
 * C-contiguous in each batch element. No GIL needed; -1 when out of memory or a dimension
 * exceeds int. */
static int blas_matmul_raw(int slot, npy_intp Bt, npy_intp M, npy_intp N, npy_intp K,
                           const char *pa, const npy_intp *as, const char *pb, const npy_intp *bs,
                           char *pc, const npy_intp *cs, int acc) {
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX) return -1;
  const npy_intp es = slot == PB_F32 ? 4 : slot == PB_F64 || slot == PB_C64 ? 8 : 16;
  char ta, tb;
  int lda, ldb;
  char *ca = NULL, *cb = NULL;
  npy_intp sa = as[0], sb = bs[0];
  if (blas_layout(M, K, as[1], as[2], es, &ta, &lda) < 0) {
    if (!(ca = contiguous_raw(pa, as, Bt, M, K, es))) return -1;
    pa = ca; sa = M * K * es; ta = 'N'; lda = (int)(K > 0 ? K : 1);
  }
  if (blas_layout(K, N, bs[1], bs[2], es, &tb, &ldb) < 0) {
    if (!(cb = contiguous_raw(pb, bs, Bt, K, N, es))) { free(ca); return -1; }
    pb = cb; sb = K * N * es; tb = 'N'; ldb = (int)(N > 0 ? N : 1);
  }
  int m = (int)N, n = (int)M, k = (int)K, ldc = (int)(cs[1] / es > 0 ? cs[1] / es : 1);
  double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
  float onef[2] = {1.0f, 0.0f}, zerof[2] = {0.0f, 0.0f};
  bool single = slot == PB_F32 || slot == PB_C64;
  void *alpha = single ? (void *)onef : (void *)one,
       *beta = acc ? alpha : single ? (void *)zerof : (void *)zero;
  /* row-major C = A B is column-major C^T = B^T A^T; one call per batch element, each threaded
   * by OpenBLAS itself */
  for (npy_intp i = 0; i < Bt; ++i)
    gemm[slot](&tb, &ta, &m, &n, &k, alpha, (char *)pb + i * sb, &ldb, (char *)pa + i * sa, &lda,
               beta, pc + i * cs[0], &ldc);
  free(ca);
  free(cb);
  return 0;
}

static int blas_matmul_1t(int slot, npy_intp Bt, npy_intp M, npy_intp N, npy_intp K,
                          const char *pa, const npy_intp *as, const char *pb, const npy_intp *bs,
                          char *pc, const npy_intp *cs, int acc);

/* out (B, M, N) = a @ b through BLAS (on this thread alone when one_thread); a, b of the
 * output's dtype */
static int blas_matmul(PyArrayObject *a, PyArrayObject *b, PyArrayObject *out, int slot,
                       bool one_thread) {
  const npy_intp *as = PyArray_SHAPE(a), *bs = PyArray_SHAPE(b);
  npy_intp Bt = as[0], M = as[1], K = as[2], N = bs[2];
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX) {
    PyErr_SetString(PyExc_ValueError, "matmul: a matrix dimension exceeds 2**31 - 1");
    return -1;
  }
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = (one_thread ? blas_matmul_1t : blas_matmul_raw)(
      slot, Bt, M, N, K, PyArray_BYTES(a), PyArray_STRIDES(a), PyArray_BYTES(b),
      PyArray_STRIDES(b), PyArray_BYTES(out), PyArray_STRIDES(out), 0);
  Py_END_ALLOW_THREADS
  if (rc < 0) PyErr_NoMemory();
  return rc;
}

/* ---- the own blocked kernel ---- */

#define MR 6  /* rows of the register tile; its columns are two 64-byte vectors */
#define KC 256
#define MC 120
#define NC_BYTES 2048 /* NC = 512 four-byte or 256 eight-byte accumulators */

typedef float vf32 __attribute__((vector_size(64)));
typedef uint32_t vu32 __attribute__((vector_size(64)));
typedef uint64_t vu64 __attribute__((vector_size(64)));

/* The micro-kernel: C[MR x NR] (+)= A-panel[kc x MR]^T B-panel[kc x NR]; panels and tile are
 * 64-byte aligned. ISO C mode turns off fused multiply-add contraction; matrix products want it
 * (BLAS uses it too), so it is enabled for these functions only. */
#define UKR(NAME, T, V)                                                                           \
  static PB_CLONES __attribute__((optimize("fp-contract=fast"))) void NAME(                       \
      npy_intp kc, const void *Av, const void *Bv, void *Cv, npy_intp ldc, int accumulate) {     \
    enum { L = 64 / sizeof(T) };                                                                 \
    const T *restrict A = (const T *)Av;                                                         \
    const V *restrict B = (const V *)Bv;                                                         \
    T *restrict C = (T *)Cv;                                                                     \
    V c0[MR], c1[MR];                                                                            \
    _Pragma("GCC unroll 6") for (int i = 0; i < MR; ++i) {                                       \
      c0[i] = accumulate ? *(const V *)(C + i * ldc) : (V){0};                                   \
      c1[i] = accumulate ? *(const V *)(C + i * ldc + L) : (V){0};                               \
    }                                                                                            \
    for (npy_intp k = 0; k < kc; ++k) {                                                          \
      const V b0 = B[2 * k], b1 = B[2 * k + 1];                                                  \
      _Pragma("GCC unroll 6") for (int i = 0; i < MR; ++i) {                                     \
        const T a = A[k * MR + i];                                                               \
        c0[i] += a * b0;                                                                         \
        c1[i] += a * b1;                                                                         \
      }                                                                                          \
    }                                                                                            \
    _Pragma("GCC unroll 6") for (int i = 0; i < MR; ++i) {                                       \
      *(V *)(C + i * ldc) = c0[i];                                                               \
      *(V *)(C + i * ldc + L) = c1[i];                                                           \
    }                                                                                            \
  }
UKR(ukr_f32, float, vf32)
UKR(ukr_u32, uint32_t, vu32)
UKR(ukr_u64, uint64_t, vu64)

/* Packing converts while it copies. A (rows = M, cols = K) becomes MR-row slivers, each
 * [kc][MR]; B (rows = K, cols = N) becomes NR-column slivers, each [kc][NR]; rows and columns
 * past the matrix edge are zero. rs/cs are byte strides. */
#define PACKERS(SFX, ACC, ST, LOAD)                                                               \
  static PB_CLONES void pack_a_##SFX(void *dst, const char *src, npy_intp rs, npy_intp cs, npy_intp rows,  \
                           npy_intp cols) {                                                      \
    ACC *d = (ACC *)dst;                                                                         \
    for (npy_intp r0 = 0; r0 < rows; r0 += MR, d += MR * cols)                                   \
      for (int r = 0; r < MR; ++r) {                                                             \
        if (r0 + r >= rows) {                                                                    \
          for (npy_intp k = 0; k < cols; ++k) d[k * MR + r] = (ACC)0;                            \
        } else if (cs == (npy_intp)sizeof(ST)) { /* row-major A: convert a row at a time */      \
          const ST *row = (const ST *)(src + (r0 + r) * rs);                                     \
          for (npy_intp k = 0; k < cols; ++k) d[k * MR + r] = (ACC)LOAD(row[k]);                 \
        } else {                                                                                 \
          const char *p = src + (r0 + r) * rs;                                                   \
          for (npy_intp k = 0; k < cols; ++k) d[k * MR + r] = (ACC)LOAD(*(const ST *)(p + k * cs)); \
        }                                                                                        \
      }                                                                                          \
  }                                                                                              \
  static PB_CLONES void pack_b_##SFX(void *dst, const char *src, npy_intp rs, npy_intp cs, npy_intp rows,  \
                           npy_intp cols) {                                                      \
    enum { NR = 128 / sizeof(ACC) };                                                             \
    ACC *d = (ACC *)dst;                                                                         \
    for (npy_intp c0 = 0; c0 < cols; c0 += NR)                                                   \
      for (npy_intp k = 0; k < rows; ++k) {                                                      \
        const char *p = src + k * rs + c0 * cs;                                                  \
        const npy_intp w = cols - c0 < NR ? cols - c0 : NR;                                      \
        if (cs == (npy_intp)sizeof(ST)) /* row-major B: a contiguous, vectorizable run */        \
          for (npy_intp c = 0; c < w; ++c) d[c] = (ACC)LOAD(((const ST *)p)[c]);                 \
        else                                                                                     \
          for (npy_intp c = 0; c < w; ++c) d[c] = (ACC)LOAD(*(const ST *)(p + c * cs));          \
        for (npy_intp c = w; c < NR; ++c) d[c] = (ACC)0;                                         \
        d += NR;                                                                                 \
      }                                                                                          \
  }
#define AS_IS(v) (v)
#define F8_0(v) pb_f8_value[0][v]
#define F8_1(v) pb_f8_value[1][v]
#define F8_2(v) pb_f8_value[2][v]
#define F8_3(v) pb_f8_value[3][v]
/* integers enter the 32/64-bit accumulators sign- or zero-extended (or wrapped): products and
 * sums modulo 2^32 or 2^64 are then exact in the output's width */
PACKERS(i8_32, uint32_t, int8_t, AS_IS) PACKERS(i16_32, uint32_t, int16_t, AS_IS)
PACKERS(i32_32, uint32_t, int32_t, AS_IS) PACKERS(i64_32, uint32_t, int64_t, AS_IS)
PACKERS(u8_32, uint32_t, uint8_t, AS_IS) PACKERS(u16_32, uint32_t, uint16_t, AS_IS)
PACKERS(u32_32, uint32_t, uint32_t, AS_IS) PACKERS(u64_32, uint32_t, uint64_t, AS_IS)
PACKERS(i8_64, uint64_t, int8_t, AS_IS) PACKERS(i16_64, uint64_t, int16_t, AS_IS)
PACKERS(i32_64, uint64_t, int32_t, AS_IS) PACKERS(i64_64, uint64_t, int64_t, AS_IS)
PACKERS(u8_64, uint64_t, uint8_t, AS_IS) PACKERS(u16_64, uint64_t, uint16_t, AS_IS)
PACKERS(u32_64, uint64_t, uint32_t, AS_IS) PACKERS(u64_64, uint64_t, uint64_t, AS_IS)
PACKERS(f16, float, uint16_t, pb_half_to_float) PACKERS(bf16, float, pb_bf16, pb_bf16_to_f32)
PACKERS(f8a, float, uint8_t, F8_0) PACKERS(f8b, float, uint8_t, F8_1)
PACKERS(f8c, float, uint8_t, F8_2) PACKERS(f8d, float, uint8_t, F8_3)
PACKERS(f32, float, float, AS_IS)

typedef void (*pack_fn)(void *dst, const char *src, npy_intp rs, npy_intp cs, npy_intp rows, npy_intp cols);
static const pack_fn pack_a32[PB_NCAST] = {
  [PB_I8] = pack_a_i8_32, [PB_I16] = pack_a_i16_32, [PB_I32] = pack_a_i32_32, [PB_I64] = pack_a_i64_32,
  [PB_U8] = pack_a_u8_32, [PB_U16] = pack_a_u16_32, [PB_U32] = pack_a_u32_32, [PB_U64] = pack_a_u64_32,
  [PB_F16] = pack_a_f16, [PB_BF16] = pack_a_bf16, [PB_F8E4M3FN] = pack_a_f8a, [PB_F8E5M2] = pack_a_f8b,
  [PB_F8E4M3FNUZ] = pack_a_f8c, [PB_F8E5M2FNUZ] = pack_a_f8d, [PB_F32] = pack_a_f32};
static const pack_fn pack_b32[PB_NCAST] = {
  [PB_I8] = pack_b_i8_32, [PB_I16] = pack_b_i16_32, [PB_I32] = pack_b_i32_32, [PB_I64] = pack_b_i64_32,
  [PB_U8] = pack_b_u8_32, [PB_U16] = pack_b_u16_32, [PB_U32] = pack_b_u32_32, [PB_U64] = pack_b_u64_32,
  [PB_F16] = pack_b_f16, [PB_BF16] = pack_b_bf16, [PB_F8E4M3FN] = pack_b_f8a, [PB_F8E5M2] = pack_b_f8b,
  [PB_F8E4M3FNUZ] = pack_b_f8c, [PB_F8E5M2FNUZ] = pack_b_f8d, [PB_F32] = pack_b_f32};
static const pack_fn pack_a64[PB_NCAST] = {
  [PB_I8] = pack_a_i8_64, [PB_I16] = pack_a_i16_64, [PB_I32] = pack_a_i32_64, [PB_I64] = pack_a_i64_64,
  [PB_U8] = pack_a_u8_64, [PB_U16] = pack_a_u16_64, [PB_U32] = pack_a_u32_64, [PB_U64] = pack_a_u64_64};
static const pack_fn pack_b64[PB_NCAST] = {
  [PB_I8] = pack_b_i8_64, [PB_I16] = pack_b_i16_64, [PB_I32] = pack_b_i32_64, [PB_I64] = pack_b_i64_64,
  [PB_U8] = pack_b_u8_64, [PB_U16] = pack_b_u16_64, [PB_U32] = pack_b_u32_64, [PB_U64] = pack_b_u64_64};

/* Storing the accumulator tile (ldt elements per row) into the C-contiguous output, converted
 * to the output dtype with one rounding. */
#define STORER(NAME, ACC, OT, CONV)                                                               \
  static void NAME(char *dst, npy_intp ld, const void *tile, npy_intp ldt, npy_intp rows,       \
                   npy_intp cols) {                                                              \
    const ACC *t = (const ACC *)tile;                                                            \
    for (npy_intp i = 0; i < rows; ++i) {                                                        \
      OT *o = (OT *)(dst + i * ld);                                                              \
      for (npy_intp j = 0; j < cols; ++j) o[j] = (OT)CONV(t[i * ldt + j]);                      \
    }                                                                                            \
  }
STORER(store_i8, uint32_t, int8_t, AS_IS) STORER(store_i16, uint32_t, int16_t, AS_IS)
STORER(store_i32, uint32_t, int32_t, AS_IS) STORER(store_u8, uint32_t, uint8_t, AS_IS)
STORER(store_u16, uint32_t, uint16_t, AS_IS) STORER(store_u32, uint32_t, uint32_t, AS_IS)
STORER(store_i64, uint64_t, int64_t, AS_IS) STORER(store_u64, uint64_t, uint64_t, AS_IS)
STORER(store_f32, float, float, AS_IS) STORER(store_f16, float, uint16_t, pb_float_to_half)
STORER(store_bf16, float, pb_bf16, pb_f32_to_bf16) STORER(store_f8a, float, uint8_t, PB_F8_E4M3FN)
STORER(store_f8b, float, uint8_t, PB_F8_E5M2) STORER(store_f8c, float, uint8_t, PB_F8_E4M3FNUZ)
STORER(store_f8d, float, uint8_t, PB_F8_E5M2FNUZ)

typedef void (*store_fn)(char *dst, npy_intp ld, const void *tile, npy_intp ldt, npy_intp rows, npy_intp cols);
static const store_fn storers[PB_NCAST] = {
  [PB_I8] = store_i8, [PB_I16] = store_i16, [PB_I32] = store_i32, [PB_I64] = store_i64,
  [PB_U8] = store_u8, [PB_U16] = store_u16, [PB_U32] = store_u32, [PB_U64] = store_u64,
  [PB_F16] = store_f16, [PB_BF16] = store_bf16, [PB_F32] = store_f32, [PB_F8E4M3FN] = store_f8a,
  [PB_F8E5M2] = store_f8b, [PB_F8E4M3FNUZ] = store_f8c, [PB_F8E5M2FNUZ] = store_f8d};

typedef void (*ukr_fn)(npy_intp kc, const void *A, const void *B, void *C, npy_intp ldc, int acc);

static bool is_int(int s) { return s >= PB_I8 && s <= PB_U64; }
static bool is_half(int s) { return s == PB_F16 || s == PB_BF16 || (s >= PB_F8E4M3FN && s < PB_NCAST); }
static bool is_blas(int s) { return s == PB_F32 || s == PB_F64 || s == PB_C64 || s == PB_C128; }

typedef struct {
  npy_intp Bt, M, N, K;
  npy_intp rows, nch, nc, nb;           /* rows per task (a multiple of MC), row chunks, NC, N blocks */
  const char *a, *b;
  npy_intp sab, sam, sak, sbb, sbk, sbn; /* operand byte strides (batch, row, col) */
  char *c;
  npy_intp scb, scm, ces;               /* output: batch and row byte strides, element size */
  pack_fn pa, pb;
  store_fn st;
  ukr_fn ukr;
  npy_intp es, nr;                      /* accumulator size and register-tile width */
} gemm_job;

static npy_intp round_up(npy_intp x, npy_intp m) { return (x + m - 1) / m * m; }
static npy_intp min_ip(npy_intp x, npy_intp y) { return x < y ? x : y; }

/* One task: all of K for up to j->rows rows and NC columns of one batch element. Each KC slice
 * of B is packed once and reused by every MC block of rows; the tile accumulates across slices
 * and is converted into the output once. */
static void gemm_task(const gemm_job *j, npy_intp t, char *Ap, char *Bp, char *Ct) {
  const npy_intp per = j->nch * j->nb, bi = t / per, ci = t % per / j->nb, jb = t % j->nb;
  const npy_intp i0 = ci * j->rows, j0 = jb * j->nc;
  const npy_intp m = min_ip(j->rows, j->M - i0), n = min_ip(j->nc, j->N - j0);
  const npy_intp np_ = round_up(n, j->nr), es = j->es;
  const char *a = j->a + bi * j->sab + i0 * j->sam, *b = j->b + bi * j->sbb + j0 * j->sbn;
  for (npy_intp pc = 0; pc < j->K; pc += KC) {
    const npy_intp k = min_ip(KC, j->K - pc);
    j->pb(Bp, b + pc * j->sbk, j->sbk, j->sbn, k, n);
    for (npy_intp ic = 0; ic < m; ic += MC) {
      const npy_intp mc = min_ip(MC, m - ic), mp = round_up(mc, MR);
      j->pa(Ap, a + ic * j->sam + pc * j->sak, j->sam, j->sak, mc, k);
      for (npy_intp jr = 0; jr < np_; jr += j->nr)
        for (npy_intp ir = 0; ir < mp; ir += MR)
          j->ukr(k, Ap + ir * k * es, Bp + jr * k * es, Ct + ((ic + ir) * np_ + jr) * es, np_, pc > 0);
    }
  }
  j->st(j->c + bi * j->scb + i0 * j->scm + j0 * j->ces, j->scm, Ct, np_, m, n);
}

/* A thread needs about this many multiply-adds before a second one pays; a task covers at most
 * this many MC blocks of rows (bounding its accumulator tile). */
#define GEMM_GRAIN (1 << 20)
#define MAX_BLOCKS_PER_TASK 8
/* below this many multiply-adds float32 skips BLAS (see matmul) */
#define SMALL_F32_MACS (4.0 * (1 << 20))

/* The own kernel on raw operands (byte strides (batch, row, col)); no GIL needed; -1 when out
 * of memory. */
static int own_matmul_raw(npy_intp Bt, npy_intp M, npy_intp N, npy_intp K, const char *a,
                          const npy_intp *as, const char *b, const npy_intp *bs, char *c,
                          const npy_intp *cs, npy_intp ces, int sa, int sb, int so, bool wide) {
  gemm_job j;
  j.Bt = Bt; j.M = M; j.K = K; j.N = N;
  j.a = a; j.b = b; j.c = c;
  j.sab = as[0]; j.sam = as[1]; j.sak = as[2];
  j.sbb = bs[0]; j.sbk = bs[1]; j.sbn = bs[2];
  j.scb = cs[0]; j.scm = cs[1];
  j.ces = ces;
  bool flt = so == PB_F32 || is_half(so);
  j.es = wide ? 8 : 4;
  j.nr = 128 / j.es;
  j.nc = NC_BYTES / j.es;
  j.pa = wide ? pack_a64[sa] : pack_a32[sa];
  j.pb = wide ? pack_b64[sb] : pack_b32[sb];
  j.st = storers[so];
  j.ukr = flt ? ukr_f32 : wide ? ukr_u64 : ukr_u32;
  j.nb = (j.N + j.nc - 1) / j.nc;
  const double work = (double)j.Bt * (double)j.M * (double)j.N * (double)j.K;
  int threads = 1;
#ifdef _OPENMP
  if (work >= 2.0 * GEMM_GRAIN) {
    threads = omp_get_max_threads();
    if (work / GEMM_GRAIN < threads) threads = (int)(work / GEMM_GRAIN);
  }
#endif
  /* split rows into as few chunks as the tile bound allows, more if threads would idle */
  const npy_intp mb = (j.M + MC - 1) / MC;
  npy_intp nch = (mb + MAX_BLOCKS_PER_TASK - 1) / MAX_BLOCKS_PER_TASK;
  while (nch < mb && j.Bt * nch * j.nb < 2 * threads) ++nch;
  j.rows = round_up((j.M + nch - 1) / nch, MC);
  j.nch = (j.M + j.rows - 1) / j.rows;
  const npy_intp ntasks = j.Bt * j.nch * j.nb;
  if (ntasks == 0) return 0;
  if (ntasks < threads) threads = (int)ntasks;
  /* per-thread panels and tile, allocated up front (never inside the parallel region) */
  const size_t apsz = (size_t)(MC * KC * j.es), bpsz = (size_t)(j.nc * KC * j.es);
  const size_t ctsz = (size_t)(j.rows * j.nc * j.es), per = apsz + bpsz + ctsz;
  char *buf = aligned_alloc(64, per * (size_t)threads);
  if (!buf) return -1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
#endif
  for (npy_intp t = 0; t < ntasks; ++t) {
    int id = 0;
#ifdef _OPENMP
    id = omp_get_thread_num();
#endif
    char *mine = buf + per * (size_t)id;
    gemm_task(&j, t, mine, mine + apsz, mine + apsz + bpsz);
  }
  free(buf);
  return 0;
}

static int own_matmul(PyArrayObject *a, PyArrayObject *b, PyArrayObject *out, int sa, int sb,
                      int so, bool wide) {
  const npy_intp *as = PyArray_SHAPE(a), *bs = PyArray_SHAPE(b);
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = own_matmul_raw(as[0], as[1], bs[2], as[2], PyArray_BYTES(a), PyArray_STRIDES(a),
                      PyArray_BYTES(b), PyArray_STRIDES(b), PyArray_BYTES(out),
                      PyArray_STRIDES(out), PyDataType_ELSIZE(PyArray_DESCR(out)), sa, sb, so,
                      wide);
  Py_END_ALLOW_THREADS
  if (rc < 0) PyErr_NoMemory();
  return rc;
}

/* ---- accessors for the compiled-program executor (schedule.c) ---- */

int pb_dot_prepare(void) { return load_blas(); }

/* Small products (the executor's per-step products in loops: a batch of 16 rows times a 128 x
 * 128 weight; the many 16x16 steps): direct loops on the calling thread, no packing and no
 * allocation. Blocks of 8 rows x two 64-byte vectors of columns accumulate in 16 registers
 * (enough independent chains to keep both FMA units busy; updating C in memory every k would
 * chain each step on a store-to-load round trip) while B's rows are read in place. Each output
 * element sums its products in k order with fused multiply-adds, as the blocked kernel's
 * micro-kernel does, so both give the same bits. */
#define TINY_MACS 65536.0
#define SMALL_M 32 /* up to this many rows, any product under SMALL_F32_MACS takes it */
#define TINY_IB 8
typedef float vf32u __attribute__((vector_size(64), aligned(4)));
#define TINY(NAME, T, V, VU)                                                                      \
  static PB_CLONES __attribute__((optimize("fp-contract=fast"))) void NAME(                       \
      npy_intp M, npy_intp N, npy_intp K, const char *a, const npy_intp *as, const char *b,      \
      const npy_intp *bs, char *c, const npy_intp *cs, int accumulate) {                         \
    enum { L = 64 / sizeof(T), JB = 2 * L };                                                     \
    for (npy_intp i0 = 0; i0 < M; i0 += TINY_IB) {                                               \
      const int ib = M - i0 < TINY_IB ? (int)(M - i0) : TINY_IB;                                 \
      const char *ar[TINY_IB];                                                                   \
      for (int i = 0; i < TINY_IB; ++i) ar[i] = a + (i0 + (i < ib ? i : 0)) * as[1];             \
      for (npy_intp j0 = 0; j0 < N; j0 += JB) {                                                  \
        const int jb = N - j0 < JB ? (int)(N - j0) : JB;                                         \
        const bool full = jb == JB && bs[2] == (npy_intp)sizeof(T);                              \
        V acc0[TINY_IB] = {{0}}, acc1[TINY_IB] = {{0}};                                          \
        for (int i = 0; accumulate && i < ib; ++i) { /* c += a @ b: go on from c's sums */         \
          T part[JB] = {0};                                                                      \
          memcpy(part, c + (i0 + i) * cs[1] + j0 * (npy_intp)sizeof(T), (size_t)jb * sizeof(T));  \
          memcpy(&acc0[i], part, sizeof(V));                                                     \
          memcpy(&acc1[i], part + L, sizeof(V));                                                 \
        }                                                                                        \
        for (npy_intp k = 0; k < K; ++k) {                                                       \
          const char *br = b + k * bs[1] + j0 * bs[2];                                           \
          V b0 = {0}, b1 = {0};                                                                  \
          if (full) {                                                                            \
            b0 = *(const VU *)br;                                                                \
            b1 = *(const VU *)(br + L * sizeof(T));                                              \
          } else {                                                                               \
            for (int j = 0; j < jb && j < L; ++j) b0[j] = *(const T *)(br + j * bs[2]);          \
            for (int j = L; j < jb; ++j) b1[j - L] = *(const T *)(br + j * bs[2]);               \
          }                                                                                      \
          _Pragma("GCC unroll 8") for (int i = 0; i < TINY_IB; ++i) {                            \
            const T aik = *(const T *)(ar[i] + k * as[2]);                                       \
            acc0[i] += aik * b0;                                                                 \
            acc1[i] += aik * b1;                                                                 \
          }                                                                                      \
        }                                                                                        \
        for (int i = 0; i < ib; ++i) {                                                           \
          T *cr = (T *)(c + (i0 + i) * cs[1]) + j0;                                              \
          if (jb == JB) { *(VU *)cr = acc0[i]; *(VU *)(cr + L) = acc1[i]; }                      \
          else { T part[JB]; memcpy(part, &acc0[i], sizeof(V));                                  \
                 memcpy(part + L, &acc1[i], sizeof(V));                                          \
                 for (int j = 0; j < jb; ++j) cr[j] = part[j]; }                                 \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
  }
TINY(tiny_f32, float, vf32, vf32u)

/* ---- long float32 contractions: summed pairwise, not in one running sum ----
 * One running float32 sum of K products loses about log2(K) bits more than a pairwise one: a
 * dot of 10^5 normal products was off by 5e-4 (XLA's blocked sums: 4e-5). Dots (N == 1) keep 64
 * independent partial sums over leaves of DOT_LEAF products and add leaves pairwise; the direct
 * loops' other products cut K in halves down to leaves of at most 2 * DIRECT_KB steps, adding
 * the second half's partial products from a scratch tile. */
#define DOT_LEAF 2048
#define DIRECT_KB 256

static PB_CLONES __attribute__((optimize("fp-contract=fast"))) float dot_leaf_f32(
    const char *x, npy_intp xs, const char *y, npy_intp ys, npy_intp n) {
  if (xs == 4 && ys == 4) {
    const float *p = (const float *)x, *q = (const float *)y;
    vf32 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, r = {0};
    npy_intp i = 0;
    for (; i + 64 <= n; i += 64) {
      s0 += *(const vf32u *)(p + i) * *(const vf32u *)(q + i);
      s1 += *(const vf32u *)(p + i + 16) * *(const vf32u *)(q + i + 16);
      s2 += *(const vf32u *)(p + i + 32) * *(const vf32u *)(q + i + 32);
      s3 += *(const vf32u *)(p + i + 48) * *(const vf32u *)(q + i + 48);
    }
    for (; i + 16 <= n; i += 16) s0 += *(const vf32u *)(p + i) * *(const vf32u *)(q + i);
    for (int j = 0; i + j < n; ++j) r[j] = p[i + j] * q[i + j];
    vf32 t = ((s0 + s1) + (s2 + s3)) + r;
    float h[16];
    memcpy(h, &t, sizeof(h));
    for (int w = 8; w; w >>= 1)
      for (int j = 0; j < w; ++j) h[j] += h[j + w];
    return h[0];
  }
  float s[8] = {0}, t = 0;
  npy_intp i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j)
      s[j] += *(const float *)(x + (i + j) * xs) * *(const float *)(y + (i + j) * ys);
  for (; i < n; ++i) t += *(const float *)(x + i * xs) * *(const float *)(y + i * ys);
  return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) + t;
}

static float dot_f32(const char *x, npy_intp xs, const char *y, npy_intp ys, npy_intp n) {
  if (n <= DOT_LEAF) return dot_leaf_f32(x, xs, y, ys, n);
  const npy_intp h = (n / 2) & ~(npy_intp)63;
  return dot_f32(x, xs, y, ys, h) + dot_f32(x + h * xs, xs, y + h * ys, ys, n - h);
}

/* c (M, N) = a @ b (c += a @ b when acc) by the direct loops, K summed pairwise (above). */
static void direct_product_f32(npy_intp M, npy_intp N, npy_intp K, const char *a,
                               const npy_intp *as, const char *b, const npy_intp *bs, char *c,
                               const npy_intp *cs, int acc) {
  if (N == 1) {
    for (npy_intp i = 0; i < M; ++i) {
      const float d = dot_f32(a + i * as[1], as[2], b, bs[1], K);
      float *ci = (float *)(c + i * cs[1]);
      *ci = acc ? *ci + d : d;
    }
    return;
  }
  float *tmp = K > 2 * DIRECT_KB ? malloc((size_t)(M * N) * sizeof(float)) : NULL;
  if (!tmp) { /* short, or no memory for the scratch tile: one running sum */
    tiny_f32(M, N, K, a, as, b, bs, c, cs, acc);
    return;
  }
  const npy_intp h = (K / 2) & ~(npy_intp)15, ts[3] = {0, N * (npy_intp)sizeof(float), sizeof(float)};
  direct_product_f32(M, N, h, a, as, b, bs, c, cs, acc);
  direct_product_f32(M, N, K - h, a + h * as[2], as, b + h * bs[1], bs, (char *)tmp, ts, 0);
  for (npy_intp i = 0; i < M; ++i) {
    float *ci = (float *)(c + i * cs[1]);
    for (npy_intp j = 0; j < N; ++j) ci[j] += tmp[i * N + j];
  }
  free(tmp);
}

/* float32 products the direct loops take, eager and in programs alike (same bits either way):
 * tiny ones, up to SMALL_M rows with a row-major B (they beat single-threaded BLAS there:
 * 4.5 us vs ~7 us at 16x128x128), and dots of up to SMALL_M rows of any length (the
 * vectorized pairwise dot is both faster and more accurate than gemm with one column) */
static bool direct_f32(npy_intp M, npy_intp N, double macs, npy_intp b_col_stride) {
  return macs <= TINY_MACS ||
         (M <= SMALL_M && (N == 1 || (macs < SMALL_F32_MACS && b_col_stride == 4)));
}

/* OpenBLAS's per-thread thread count (openblas_set_num_threads_local), when the library has it:
 * the executor runs BLAS single-threaded inside its own OpenMP chunks. */
typedef int (*set_local_fn)(int);
static set_local_fn set_local;
static int set_local_threads(void) {
  static int looked;
  if (!looked) {
    looked = 1;
    Dl_info info;
    if (gemm[PB_F32] && dladdr((void *)gemm[PB_F32], &info) && info.dli_fname) {
      void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
      if (h) {
        set_local = (set_local_fn)dlsym(h, "openblas_set_num_threads_local");
        if (!set_local) { /* the wrapper links the OpenBLAS that has it */
          void *g = dlsym(h, "scipy_openblas_get_num_threads");
          if (g && dladdr(g, &info) && info.dli_fname) {
            void *h2 = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
            if (h2) set_local = (set_local_fn)dlsym(h2, "openblas_set_num_threads_local");
          }
        }
      }
    }
  }
  return set_local != NULL;
}

/* Sets OpenBLAS's thread count for the calling thread only; returns the previous count, or -1
 * (nothing set) when the library lacks the per-thread setting (load BLAS first). */
int pb_blas_local_threads(int n) {
  /* before BLAS is loaded there is nothing to set (and probing then would record "absent") */
  return gemm[PB_F32] && set_local_threads() ? set_local(n) : -1;
}

/* blas_matmul_raw with OpenBLAS held to the calling thread (set_local_threads() must hold):
 * single-threaded OpenBLAS beats the own kernel at every float32 size measured (1.3 vs 2.2 us at
 * 32^3, 20 vs 52 us at 512x128x10) and, unlike its threaded mode, never spin-waits for a
 * descheduled thread. */
static int blas_matmul_1t(int slot, npy_intp Bt, npy_intp M, npy_intp N, npy_intp K,
                          const char *pa, const npy_intp *as, const char *pb, const npy_intp *bs,
                          char *pc, const npy_intp *cs, int acc) {
  const int old = set_local(1);
  int rc = blas_matmul_raw(slot, Bt, M, N, K, pa, as, pb, bs, pc, cs, acc);
  set_local(old);
  return rc;
}

static bool direct_f32(npy_intp M, npy_intp N, double macs, npy_intp b_col_stride);

/* Whether the own float32 kernel (gemm.c) takes a whole product of slot `slot` (not one the
 * direct loops take: every path asks this, so eager and jit pick the same kernel). */
static bool own_f32(int slot, npy_intp M, npy_intp N, npy_intp K, const char *a,
                    const npy_intp *as, const char *b, const npy_intp *bs, const char *c,
                    const npy_intp *cs) {
  return slot == PB_F32 && !direct_f32(M, N, (double)M * (double)N * (double)K, bs[2]) &&
         pb_sgemm_takes(M, N, K, a, as, b, bs, c, cs);
}

/* A product on the calling thread: the own kernel when `own`, else BLAS held to this thread
 * (set_local_threads() must hold). */
static int matmul_1t(bool own, int slot, npy_intp Bt, npy_intp M, npy_intp N, npy_intp K,
                     const char *a, const npy_intp *as, const char *b, const npy_intp *bs,
                     char *c, const npy_intp *cs, int acc) {
  if (!own) return blas_matmul_1t(slot, Bt, M, N, K, a, as, b, bs, c, cs, acc);
  for (npy_intp i = 0; i < Bt; ++i)
    if (pb_sgemm(M, N, K, a + i * as[0], as, b + i * bs[0], bs, c + i * cs[0], cs, acc, NULL) < 0)
      return -1;
  return 0;
}

/* Cut along K when K is this many times the longer output side and the partial products stay
 * small: each thread then streams its own part of both operands instead of all of one (measured
 * on the tanh RNN benchmark's gradient, whose weight gradients are 128x16000 @ 16000x128 and
 * 32x16000 @ 16000x128: 30.3 ms a step against 31.5 ms cut in output halves). */
#define SPLIT_K_RATIO 16
#define SPLIT_K_MAX_BYTES ((npy_intp)1 << 22)

#ifndef PB_MM_CHUNKS_PER_THREAD
#define PB_MM_CHUNKS_PER_THREAD 1
#endif
/* A large BLAS product split into independent chunks along its longer output side, each chunk
 * one single-threaded BLAS call, for the executor's thread pool to hand out dynamically.
 * OpenBLAS's own threading splits statically and spin-waits: when another process holds one of
 * the cores the whole product waits for the descheduled part (measured on 2 busy cores:
 * 2 GFLOP/s instead of 76). */
npy_intp pb_matmul_chunks(pb_matmul_job *j, int sa, int sb, int so, npy_intp Bt, npy_intp M,
                          npy_intp N, npy_intp K, const char *a, const npy_intp *as,
                          const char *b, const npy_intp *bs, char *c, const npy_intp *cs,
                          int threads, bool claim_only) {
  const double macs = (double)Bt * (double)M * (double)K * (double)N;
  if (threads < 2 || sa != sb || sa != so || !is_blas(sa) || macs < 4.0 * SMALL_F32_MACS ||
      M > INT_MAX || N > INT_MAX || K > INT_MAX)
    return 0;
  if (sa == PB_F32 && cs[2] == 4 && direct_f32(M, N, macs, bs[2]))
    return 0; /* long dots: the direct loops' pairwise sums, as pb_matmul_raw runs them */
  const bool own = own_f32(sa, M, N, K, a, as, b, bs, c, cs);
  if (!own && (!gemm[sa] || !set_local_threads())) return 0;
  const npy_intp es = sa == PB_F32 ? 4 : sa == PB_F64 || sa == PB_C64 ? 8 : 16;
  *j = (pb_matmul_job){.slot = sa, .own = own, .es = es, .Bt = Bt, .M = M, .N = N, .K = K,
                       .a = a, .b = b, .c = c};
  for (int i = 0; i < 3; ++i) { j->as[i] = as[i]; j->bs[i] = bs[i]; j->cs[i] = cs[i]; }
  const npy_intp side = M > N ? M : N, grain = 64;
  if (Bt == 1 && K >= SPLIT_K_RATIO * side && K / threads >= grain && cs[2] == es &&
      (threads - 1) * M * N * es <= SPLIT_K_MAX_BYTES) {
    if (claim_only) return 0;
    j->by_k = 1;
    j->chunks = threads;
    j->partial = malloc((size_t)((threads - 1) * M * N * es));
    return j->partial ? threads : -1;
  }
  /* the own kernel cuts rows where it can: each chunk's strips of rows then finish one by one,
   * for an epilogue to follow them (pb_matmul_chunk) */
  const bool by_rows = own ? M / threads >= grain || M >= N : M >= N;
  if (claim_only && !(own && by_rows && Bt == 1)) return 0;
  const npy_intp len = by_rows ? M : N;
  npy_intp chunks = PB_MM_CHUNKS_PER_THREAD * threads;
  if (len / chunks < grain) chunks = len / grain > 1 ? len / grain : 1;
  if (chunks < 2) return 0;
  j->chunks = chunks;
  j->by_rows = by_rows;
  /* rather than a fixed share each, every thread takes strips of rows as it comes (the spread
   * of a row-cut step's threads finishing: 25-40 us of 450 measured) */
  j->claim = own && by_rows && Bt == 1;
  j->product = j->claim ? pb_sgemm_product_id() : 0;
  npy_intp counters = 0;
  j->tasks = j->claim ? pb_sgemm_claim_tasks(M, N, K, &counters) : 0;
  if (counters > 0 && !(j->passes = calloc((size_t)counters, sizeof *j->passes))) return -1;
  return Bt * chunks;
}

void pb_matmul_chunk_range(const pb_matmul_job *j, npy_intp t, npy_intp *bi, npy_intp *lo,
                           npy_intp *hi) {
  const npy_intp len = j->by_k ? j->K : j->by_rows ? j->M : j->N, ci = t % j->chunks;
  *bi = t / j->chunks;
  /* column and K chunks start on a vector; row chunks split evenly (784 rows in two: 392
   * each, not 384 and 400) */
  const npy_intp q = j->by_rows && !j->by_k ? 1 : 16;
  *lo = len * ci / j->chunks / q * q;
  *hi = ci == j->chunks - 1 ? len : len * (ci + 1) / j->chunks / q * q;
}

int pb_matmul_chunk(pb_matmul_job *j, npy_intp t, pb_rows_done_fn done, void *ctx,
                    bool unread) {
  const int slot = j->slot;
  const npy_intp es = j->es;
  if (j->claim) { /* the whole product, of which this thread runs the strips it takes */
    const pb_sgemm_opts o = {done, ctx, unread, j->product, &j->taken, j->passes};
    if (pb_sgemm(j->M, j->N, j->K, j->a, j->as, j->b, j->bs, j->c, j->cs, 0, &o) < 0) return -1;
    return done ? 1 : 0;
  }
  npy_intp bi, lo, hi;
  pb_matmul_chunk_range(j, t, &bi, &lo, &hi);
  if (j->by_k) { /* a K range of both operands, into c (chunk 0) or a partial */
    char *pc = t == 0 ? j->c : j->partial + (t - 1) * j->M * j->N * es;
    const npy_intp pcs[3] = {0, j->N * es, es};
    const npy_intp *cs = t == 0 ? j->cs : pcs;
    if (hi <= lo) { /* an empty part of the sum */
      for (npy_intp r = 0; r < j->M; ++r) memset(pc + r * cs[1], 0, (size_t)(j->N * es));
      return 0;
    }
    return matmul_1t(j->own, slot, 1, j->M, j->N, hi - lo, j->a + lo * j->as[2], j->as,
                     j->b + lo * j->bs[1], j->bs, pc, cs, 0);
  }
  if (hi <= lo) return 0;
  const char *a = j->a + bi * j->as[0], *b = j->b + bi * j->bs[0];
  char *c = j->c + bi * j->cs[0];
  return j->by_rows
      ? matmul_1t(j->own, slot, 1, hi - lo, j->N, j->K, a + lo * j->as[1], j->as, b, j->bs,
                  c + lo * j->cs[1], j->cs, 0)
      : matmul_1t(j->own, slot, 1, j->M, hi - lo, j->K, a, j->as, b + lo * j->bs[2], j->bs,
                  c + lo * es, j->cs, 0);
}

void pb_matmul_done(pb_matmul_job *j) {
  free((void *)j->passes);
  j->passes = NULL;
  if (!j->by_k) return;
  /* c += the partials, as reals (a complex sum is its parts' sums) */
  const int dbl = j->slot == PB_F64 || j->slot == PB_C128;
  const npy_intp n = j->N * (j->slot == PB_C64 || j->slot == PB_C128 ? 2 : 1), es = j->es;
  for (npy_intp t = 1; t < j->chunks; ++t) {
    const char *p = j->partial + (t - 1) * j->M * j->N * es;
    for (npy_intp r = 0; r < j->M; ++r) {
      char *row = j->c + r * j->cs[1];
      const char *prow = p + r * j->N * es;
      if (dbl)
        for (npy_intp i = 0; i < n; ++i) ((double *)row)[i] += ((const double *)prow)[i];
      else
        for (npy_intp i = 0; i < n; ++i) ((float *)row)[i] += ((const float *)prow)[i];
    }
  }
  free(j->partial);
  j->partial = NULL;
}

int pb_matmul_rows(int sa, int sb, int so, npy_intp M, npy_intp N, npy_intp K, const char *a,
                   const npy_intp *as, const char *b, const npy_intp *bs, char *c,
                   const npy_intp *cs, pb_rows_done_fn done, void *ctx, bool unread) {
  if (!(sa == sb && sa == so && own_f32(sa, M, N, K, a, as, b, bs, c, cs))) return 0;
  const pb_sgemm_opts o = {done, ctx, unread, 0, NULL, NULL};
  return pb_sgemm(M, N, K, a, as, b, bs, c, cs, 0, &o) < 0 ? -1 : 1;
}

int pb_matmul_raw(int sa, int sb, int so, npy_intp Bt, npy_intp M, npy_intp N, npy_intp K,
                  const char *a, const npy_intp *as, const char *b, const npy_intp *bs, char *c,
                  const npy_intp *cs) {
  if (sa < 0 || sb < 0 || so < 0 || sa >= PB_NCAST || sb >= PB_NCAST || so >= PB_NCAST) return -1;
  bool blas = sa == sb && sa == so && is_blas(sa);
  bool ints = is_int(sa) && is_int(sb) && is_int(so);
  bool halves = is_half(sa) && is_half(sb) && (is_half(so) || so == PB_F32);
  if (!(blas || ints || halves) || (blas && !gemm[sa])) return -1;
  const npy_intp ces = so == PB_BOOL || so == PB_I8 || so == PB_U8 || so >= PB_F8E4M3FN ? 1
                       : so == PB_I16 || so == PB_U16 || so == PB_F16 || so == PB_BF16 ? 2
                       : so == PB_I32 || so == PB_U32 || so == PB_F32 ? 4
                       : so == PB_C128 ? 16 : 8;
  if (Bt * M * N == 0) return 0;
  if (K == 0) { /* an empty sum: zeros */
    for (npy_intp i = 0; i < Bt; ++i)
      for (npy_intp r = 0; r < M; ++r) memset(c + i * cs[0] + r * cs[1], 0, (size_t)(N * ces));
    return 0;
  }
  const double macs = (double)Bt * (double)M * (double)K * (double)N;
  /* float32 only: its eager products of these sizes take the blocked kernel, whose sums run in
   * the same order (float64 ones take BLAS, whose order differs in the last bit) */
  if (sa == sb && sa == so && sa == PB_F32 && cs[2] == ces && direct_f32(M, N, macs, bs[2])) {
    for (npy_intp i = 0; i < Bt; ++i)
      direct_product_f32(M, N, K, a + i * as[0], as, b + i * bs[0], bs, c + i * cs[0], cs, 0);
    return 0;
  }
  /* the executor parallelizes through its pool (pb_matmul_chunks): a product it runs whole
   * stays on this thread */
  if (blas && own_f32(sa, M, N, K, a, as, b, bs, c, cs))
    return matmul_1t(true, sa, Bt, M, N, K, a, as, b, bs, c, cs, 0);
  if (blas && set_local_threads())
    return blas_matmul_1t(sa, Bt, M, N, K, a, as, b, bs, c, cs, 0);
  bool small_f32 = blas && sa == PB_F32 && macs < SMALL_F32_MACS;
  if (blas && !small_f32) return blas_matmul_raw(sa, Bt, M, N, K, a, as, b, bs, c, cs, 0);
  return own_matmul_raw(Bt, M, N, K, a, as, b, bs, c, cs, ces, sa, sb, so,
                        ints && ces == 8);
}

/* c (M, N) += a (M, K) @ b (K, N) (c = a @ b when !acc), float32 or float64 throughout (the
 * executor's pipelined products, summed chunk by chunk along K): the direct loops or the own
 * kernel where pb_matmul_raw takes them, else BLAS held to the calling thread where OpenBLAS
 * allows it. Strides as [batch, row, column]. 0, or -1 for another dtype or when out of
 * memory. */
int pb_matmul_acc(int slot, npy_intp M, npy_intp N, npy_intp K, const char *a, const npy_intp *as,
                  const char *b, const npy_intp *bs, char *c, const npy_intp *cs, int acc) {
  if ((slot != PB_F32 && slot != PB_F64) || !gemm[slot]) return -1;
  if (M * N == 0) return 0;
  if (K == 0) {
    for (npy_intp r = 0; r < M && !acc; ++r) memset(c + r * cs[1], 0, (size_t)(N * cs[2]));
    return 0;
  }
  const double macs = (double)M * (double)K * (double)N;
  if (slot == PB_F32 && cs[2] == 4 && direct_f32(M, N, macs, bs[2])) {
    direct_product_f32(M, N, K, a, as, b, bs, c, cs, acc);
    return 0;
  }
  if (own_f32(slot, M, N, K, a, as, b, bs, c, cs))
    return pb_sgemm(M, N, K, a, as, b, bs, c, cs, acc, NULL);
  return set_local_threads() ? blas_matmul_1t(slot, 1, M, N, K, a, as, b, bs, c, cs, acc)
                             : blas_matmul_raw(slot, 1, M, N, K, a, as, b, bs, c, cs, acc);
}

/* An eager float32 product the own kernel takes, cut into chunks over the executor's thread
 * pool exactly as a program's would be (so eager and jit give the same bits). */
typedef struct {
  pb_matmul_job mm;
  _Atomic int failed;
} pooled_product;

static void pooled_chunk(void *ctx, npy_intp t, int tid) {
  pooled_product *p = ctx;
  if (pb_matmul_chunk(&p->mm, t, NULL, NULL, false) < 0) atomic_store(&p->failed, 1);
}

static int own_matmul_pooled(PyArrayObject *a, PyArrayObject *b, PyArrayObject *out) {
  const npy_intp *as = PyArray_SHAPE(a), *bsh = PyArray_SHAPE(b);
  const npy_intp Bt = as[0], M = as[1], K = as[2], N = bsh[2];
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  threads = pb_pool_threads(threads); /* with the GIL: may start the workers */
  pooled_product p = {.failed = 0};
  const npy_intp n = pb_matmul_chunks(&p.mm, PB_F32, PB_F32, PB_F32, Bt, M, N, K, PyArray_BYTES(a),
                                      PyArray_STRIDES(a), PyArray_BYTES(b), PyArray_STRIDES(b),
                                      PyArray_BYTES(out), PyArray_STRIDES(out), threads, false);
  int rc = n < 0 ? -1 : 0;
  Py_BEGIN_ALLOW_THREADS
  if (n > 0) {
    pb_pool_run(pooled_chunk, &p, n);
    pb_matmul_done(&p.mm);
    rc = atomic_load(&p.failed) ? -1 : 0;
  } else if (n == 0) {
    rc = matmul_1t(true, PB_F32, Bt, M, N, K, PyArray_BYTES(a), PyArray_STRIDES(a),
                   PyArray_BYTES(b), PyArray_STRIDES(b), PyArray_BYTES(out), PyArray_STRIDES(out),
                   0);
  }
  Py_END_ALLOW_THREADS
  if (rc < 0) PyErr_NoMemory();
  return rc;
}

/* matmul(a, b[, dtype]): a (B, M, K) @ b (B, K, N) -> (B, M, N) of `dtype` (default: a's),
 * any strides, B may broadcast (stride 0) */
static PyObject *matmul(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 && nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "matmul: expected (a, b[, dtype])");
    return NULL;
  }
  PyArrayObject *a = pb_arg_array(args[0], "matmul", "a"), *b = a ? pb_arg_array(args[1], "matmul", "b") : NULL;
  if (!b) return NULL;
  if (PyArray_NDIM(a) != 3 || PyArray_NDIM(b) != 3) {
    PyErr_SetString(PyExc_ValueError, "matmul: arguments 'a' and 'b' must be 3-D (batch, rows, cols)");
    return NULL;
  }
  const npy_intp *as = PyArray_SHAPE(a), *bs = PyArray_SHAPE(b);
  if (bs[0] != as[0] || bs[1] != as[2]) {
    PyErr_Format(PyExc_ValueError, "matmul: shapes (%zd, %zd, %zd) and (%zd, %zd, %zd) do not fit",
                 as[0], as[1], as[2], bs[0], bs[1], bs[2]);
    return NULL;
  }
  PyArray_Descr *od = PyArray_DESCR(a);
  if (nargs == 3 && args[2] != Py_None) {
    if (!PyArray_DescrCheck(args[2])) {
      PyErr_Format(PyExc_TypeError, "matmul: argument 'dtype' must be a numpy.dtype, got %s",
                   Py_TYPE(args[2])->tp_name);
      return NULL;
    }
    od = (PyArray_Descr *)args[2];
  }
  int sa = pb_cast_slot(PyArray_DESCR(a)), sb = pb_cast_slot(PyArray_DESCR(b)), so = pb_cast_slot(od);
  bool blas = sa == sb && sa == so && is_blas(sa);
  bool ints = is_int(sa) && is_int(sb) && is_int(so);
  bool halves = is_half(sa) && is_half(sb) && (is_half(so) || so == PB_F32);
  if (sa < 0 || sb < 0 || so < 0 || !(blas || ints || halves)) {
    PyErr_Format(PyExc_TypeError,
                 "matmul: no kernel for %S @ %S -> %S (BLAS takes one of float32, float64, "
                 "complex64, complex128 throughout; integers go to an integer; float16, bfloat16 "
                 "and float8 go to one of those or float32)",
                 (PyObject *)PyArray_DESCR(a), (PyObject *)PyArray_DESCR(b), (PyObject *)od);
    return NULL;
  }
  if (blas && load_blas() < 0) return NULL;
  PyArray_Descr *ocanon = pb_cast_descr(so);
  if (!ocanon) return NULL;
  npy_intp oshape[3] = {as[0], as[1], bs[2]};
  PyArrayObject *out = (PyArrayObject *)PyArray_Zeros(3, oshape, ocanon, 0);
  if (!out || PyArray_SIZE(out) == 0 || as[2] == 0) return (PyObject *)out;
  bool wide = ints && PyDataType_ELSIZE(ocanon) == 8;
  /* Small float32 products stay on this thread: OpenBLAS splits even a 64x128x128 product over
   * its threads, and when the other core is busy that costs ~1 ms instead of ~20 us (measured
   * on 2 cores). Single-threaded BLAS where OpenBLAS allows it, else the own kernel; tiny and
   * few-row ones take the executor's direct loops (so jit and eager agree bit for bit). */
  const double macs = (double)as[0] * (double)as[1] * (double)as[2] * (double)bs[2];
  bool small_f32 = blas && sa == PB_F32 && macs < SMALL_F32_MACS;
  int rc = 0;
  if (blas && sa == PB_F32 && direct_f32(as[1], bs[2], macs, PyArray_STRIDES(b)[2])) {
    Py_BEGIN_ALLOW_THREADS
    for (npy_intp i = 0; i < as[0]; ++i)
      direct_product_f32(as[1], bs[2], as[2], PyArray_BYTES(a) + i * PyArray_STRIDES(a)[0],
                         PyArray_STRIDES(a), PyArray_BYTES(b) + i * PyArray_STRIDES(b)[0],
                         PyArray_STRIDES(b), PyArray_BYTES(out) + i * PyArray_STRIDES(out)[0],
                         PyArray_STRIDES(out), 0);
    Py_END_ALLOW_THREADS
  } else if (blas && own_f32(sa, as[1], bs[2], as[2], PyArray_BYTES(a), PyArray_STRIDES(a),
                             PyArray_BYTES(b), PyArray_STRIDES(b), PyArray_BYTES(out),
                             PyArray_STRIDES(out))) {
    rc = own_matmul_pooled(a, b, out);
  } else if (blas && !small_f32) {
    rc = blas_matmul(a, b, out, sa, false);
  } else if (small_f32 && set_local_threads()) {
    rc = blas_matmul(a, b, out, sa, true);
  } else {
    rc = own_matmul(a, b, out, sa, sb, so, wide);
  }
  if (rc < 0) {
    Py_DECREF(out);
    return NULL;
  }
  return (PyObject *)out;
}

/* blas_info() -> {"library": path, "threads": n}: which OpenBLAS the float kernels use and how
 * many threads it runs (for benchmarks and diagnostics). */
static PyObject *blas_info(PyObject *self, PyObject *unused) {
  if (load_blas() < 0) return NULL;
  /* the capsules point into SciPy's cython_blas wrapper; its handle also finds the symbols of
   * the OpenBLAS it links */
  Dl_info info;
  if (!dladdr((void *)gemm[PB_F32], &info) || !info.dli_fname) return PyDict_New();
  const char *lib = info.dli_fname;
  long threads = -1;
  void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  if (h) {
    static const char *getters[] = {"scipy_openblas_get_num_threads", "openblas_get_num_threads"};
    for (size_t i = 0; i < sizeof(getters) / sizeof(getters[0]) && threads < 0; ++i) {
      int (*get)(void) = (int (*)(void))dlsym(h, getters[i]);
      if (!get) continue;
      threads = get();
      if (dladdr((void *)get, &info) && info.dli_fname) lib = info.dli_fname;
    }
    dlclose(h);
  }
  return Py_BuildValue("{s:s,s:l}", "library", lib, "threads", threads);
}

/* own_sgemm(enabled) -> the previous setting: whether float32 products may take the own AVX-512
 * kernel (gemm.c); tests turn it off to compare it with BLAS. */
static PyObject *own_sgemm(PyObject *self, PyObject *arg) {
  const int on = PyObject_IsTrue(arg);
  if (on < 0) return NULL;
  return PyBool_FromLong(pb_sgemm_set_enabled(on));
}

/* sgemm_blocks_packed() -> blocks of B the own kernel has packed so far (for tests) */
static PyObject *sgemm_blocks_packed(PyObject *self, PyObject *unused) {
  return PyLong_FromUnsignedLongLong(pb_sgemm_blocks_packed());
}

static PyMethodDef methods[] = {
  {"matmul", (PyCFunction)(void (*)(void))matmul, METH_FASTCALL,
   "matmul(a, b[, dtype]): batched (B, M, K) @ (B, K, N) -> (B, M, N) of dtype (default a's): "
   "the own AVX-512 kernel for larger float32 products where the CPU has it, else SciPy's BLAS "
   "for float32/float64/complex64/complex128; an own blocked kernel for integers "
   "(any widths, wrapping) and for float16/bfloat16/float8 (float32 accumulation)."},
  {"own_sgemm", own_sgemm, METH_O,
   "own_sgemm(enabled): lets float32 products take the own AVX-512 kernel (or not, for "
   "tests); returns the previous setting."},
  {"sgemm_blocks_packed", sgemm_blocks_packed, METH_NOARGS,
   "sgemm_blocks_packed(): blocks of B the own kernel has packed so far (for tests)."},
  {"blas_info", blas_info, METH_NOARGS,
   "blas_info(): the BLAS library behind matmul and its thread count."},
  {NULL, NULL, 0, NULL}};

int pb_register_dot(PyObject *m) {
  /* for compiler/parallel.py: products cut along K are not paired */
  if (PyModule_AddIntConstant(m, "SPLIT_K_RATIO", SPLIT_K_RATIO) < 0) return -1;
  return PyModule_AddFunctions(m, methods);
}
