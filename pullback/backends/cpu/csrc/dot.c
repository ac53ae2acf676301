/* Batched matrix multiply, the kernel behind dot_general (the frontend moves batch, free and
 * contracting dimensions into (B, M, K) x (B, K, N) views first). Floating and complex dtypes go
 * to SciPy's BLAS through the function pointers its cython_blas module exports, so no BLAS is
 * linked at build time; integer dtypes use an own loop. */
#include "ewise.h"
#include <limits.h>
#include <string.h>

typedef void (*gemm_fn)(char *ta, char *tb, int *m, int *n, int *k, void *alpha, void *a, int *lda,
                        void *b, int *ldb, void *beta, void *c, int *ldc);
static gemm_fn gemm[PB_NDT]; /* indexed by dtype slot; filled on first use */

static int load_blas(void) {
  if (gemm[PB_F32]) return 0;
  PyObject *mod = PyImport_ImportModule("scipy.linalg.cython_blas");
  if (!mod) return -1;
  PyObject *capi = PyObject_GetAttrString(mod, "__pyx_capi__");
  Py_DECREF(mod);
  if (!capi) return -1;
  static const char *names[] = {"sgemm", "dgemm", "cgemm", "zgemm"};
  static const int slots[] = {PB_F32, PB_F64, PB_C64, PB_C128};
  gemm_fn found[4];
  for (int i = 0; i < 4; ++i) {
    PyObject *cap = PyDict_GetItemString(capi, names[i]); /* borrowed */
    found[i] = cap ? (gemm_fn)PyCapsule_GetPointer(cap, PyCapsule_GetName(cap)) : NULL;
    if (!found[i]) {
      Py_DECREF(capi);
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_ImportError, "dot_general: SciPy's BLAS has no %s", names[i]);
      return -1;
    }
  }
  Py_DECREF(capi);
  for (int i = 0; i < 4; ++i) gemm[slots[i]] = found[i];
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

/* Integer matmul on contiguous (M, K) x (K, N): i-k-j order so the inner loop is a vector axpy.
 * Products wrap, as in JAX. */
#define PB_IMATMUL(NAME, T, TO, UNUSED)                                                           \
  static PB_CLONES void NAME(const T *a, const T *b, T *c, npy_intp M, npy_intp K, npy_intp N) { \
    memset(c, 0, (size_t)(M * N) * sizeof(T));                                                   \
    for (npy_intp i = 0; i < M; ++i)                                                             \
      for (npy_intp k = 0; k < K; ++k) {                                                         \
        const T aik = a[i * K + k];                                                              \
        for (npy_intp j = 0; j < N; ++j) c[i * N + j] += aik * b[k * N + j];                     \
      }                                                                                          \
  }
PB_SINTS(PB_IMATMUL, imm, ) PB_UINTS(PB_IMATMUL, imm, )
typedef void (*imm_fn)(const void *, const void *, void *, npy_intp, npy_intp, npy_intp);
static const imm_fn imm[PB_NDT] = {
  [PB_I8] = (imm_fn)imm_i8, [PB_I16] = (imm_fn)imm_i16, [PB_I32] = (imm_fn)imm_i32, [PB_I64] = (imm_fn)imm_i64,
  [PB_U8] = (imm_fn)imm_u8, [PB_U16] = (imm_fn)imm_u16, [PB_U32] = (imm_fn)imm_u32, [PB_U64] = (imm_fn)imm_u64};

static PyArrayObject *contiguous(PyArrayObject *x) {
  if (PyArray_IS_C_CONTIGUOUS(x)) { Py_INCREF(x); return x; }
  return pb_copy(x);
}

/* matmul(a, b): a (B, M, K) @ b (B, K, N) -> (B, M, N), any strides, B may broadcast (stride 0) */
static PyObject *matmul(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "matmul: expected (a, b)");
    return NULL;
  }
  PyArrayObject *a = pb_arg_array(args[0], "matmul", "a"), *b = a ? pb_arg_array(args[1], "matmul", "b") : NULL;
  if (!b) return NULL;
  if (PyArray_NDIM(a) != 3 || PyArray_NDIM(b) != 3) {
    PyErr_SetString(PyExc_ValueError, "matmul: arguments 'a' and 'b' must be 3-D (batch, rows, cols)");
    return NULL;
  }
  const npy_intp *as = PyArray_SHAPE(a), *bs = PyArray_SHAPE(b);
  npy_intp Bt = as[0], M = as[1], K = as[2], N = bs[2];
  if (bs[0] != Bt || bs[1] != K) {
    PyErr_Format(PyExc_ValueError, "matmul: shapes (%zd, %zd, %zd) and (%zd, %zd, %zd) do not fit",
                 as[0], as[1], as[2], bs[0], bs[1], bs[2]);
    return NULL;
  }
  int slot = pb_dtype_slot(PyArray_DESCR(a));
  if (slot < 0 || slot != pb_dtype_slot(PyArray_DESCR(b))) {
    PyErr_SetString(PyExc_TypeError, "matmul: arguments 'a' and 'b' must have one supported dtype");
    return NULL;
  }
  bool blas = slot == PB_F32 || slot == PB_F64 || slot == PB_C64 || slot == PB_C128;
  if (!blas && !imm[slot]) {
    PyErr_Format(PyExc_TypeError, "matmul: dtype %S is not supported", (PyObject *)PyArray_DESCR(a));
    return NULL;
  }
  if (blas && load_blas() < 0) return NULL;
  npy_intp oshape[3] = {Bt, M, N};
  PyArray_Descr *od = PyArray_DESCR(a);
  Py_INCREF(od);
  PyArrayObject *out = (PyArrayObject *)PyArray_Zeros(3, oshape, od, 0);
  if (!out || Bt == 0 || M == 0 || N == 0 || K == 0) return (PyObject *)out;
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX) {
    Py_DECREF(out);
    PyErr_SetString(PyExc_ValueError, "matmul: a matrix dimension exceeds 2**31 - 1");
    return NULL;
  }
  npy_intp es = PyDataType_ELSIZE(PyArray_DESCR(a));
  char ta, tb;
  int lda, ldb;
  Py_INCREF(a); Py_INCREF(b);
  if (!blas || blas_layout(M, K, PyArray_STRIDES(a)[1], PyArray_STRIDES(a)[2], es, &ta, &lda) < 0) {
    PyArrayObject *t = contiguous(a); Py_DECREF(a); a = t;
    ta = 'N'; lda = (int)(K > 0 ? K : 1);
  }
  if (!a) { Py_DECREF(b); Py_DECREF(out); return NULL; }
  if (!blas || blas_layout(K, N, PyArray_STRIDES(b)[1], PyArray_STRIDES(b)[2], es, &tb, &ldb) < 0) {
    PyArrayObject *t = contiguous(b); Py_DECREF(b); b = t;
    tb = 'N'; ldb = (int)(N > 0 ? N : 1);
  }
  if (!b) { Py_DECREF(a); Py_DECREF(out); return NULL; }
  npy_intp sa = PyArray_STRIDES(a)[0], sb = PyArray_STRIDES(b)[0], sc = PyArray_STRIDES(out)[0];
  char *pa = PyArray_BYTES(a), *pb = PyArray_BYTES(b), *pc = PyArray_BYTES(out);
  Py_BEGIN_ALLOW_THREADS
  if (blas) {
    int m = (int)N, n = (int)M, k = (int)K, ldc = (int)N;
    double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    float onef[2] = {1.0f, 0.0f}, zerof[2] = {0.0f, 0.0f};
    bool single = slot == PB_F32 || slot == PB_C64;
    void *alpha = single ? (void *)onef : (void *)one, *beta = single ? (void *)zerof : (void *)zero;
    /* row-major C = A B is column-major C^T = B^T A^T */
    for (npy_intp i = 0; i < Bt; ++i)
      gemm[slot](&tb, &ta, &m, &n, &k, alpha, pb + i * sb, &ldb, pa + i * sa, &lda, beta, pc + i * sc, &ldc);
  } else {
    for (npy_intp i = 0; i < Bt; ++i) imm[slot](pa + i * sa, pb + i * sb, pc + i * sc, M, K, N);
  }
  Py_END_ALLOW_THREADS
  Py_DECREF(a);
  Py_DECREF(b);
  return (PyObject *)out;
}

static PyMethodDef methods[] = {
  {"matmul", (PyCFunction)(void (*)(void))matmul, METH_FASTCALL,
   "matmul(a, b): batched (B, M, K) @ (B, K, N) -> (B, M, N) through SciPy's BLAS (floating and "
   "complex) or an own loop (integers)."},
  {NULL, NULL, 0, NULL}};

int pb_register_dot(PyObject *m) { return PyModule_AddFunctions(m, methods); }
