/* Dtype conversion kernels: convert (every pair of the 19 dtypes, one table-driven loop grid
 * over pb_iterate) and reinterpret (the zero-copy half of bitcast_convert_type).
 *
 * Semantics (documented in primitives/conversion.py): float -> int truncates toward zero,
 * saturates out-of-range values and infinities, NaN -> 0; int -> int wraps; int -> float rounds
 * to nearest even; x -> bool is x != 0; complex -> anything real (bool included, as in JAX)
 * takes the real part; real -> complex has imaginary part 0. bfloat16 and float8 targets are
 * reached through float32, as ml_dtypes and XLA do. */
#include "cast.h"
#include "schedule.h"
#include <complex.h>

/* ---- float8 tables and slots ---- */

float pb_f8_value[4][256];
static int f8_typenum[4] = {-1, -1, -1, -1};
static const char *const f8_names[4] = {"float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                        "float8_e5m2fnuz"};

static void fill_f8_table(float *t, int mbits, int bias, int kind) {
  const int ebits = 7 - mbits;
  for (int c = 0; c < 256; ++c) {
    const int e = (c >> mbits) & ((1 << ebits) - 1), m = c & ((1 << mbits) - 1);
    const float sign = c & 0x80 ? -1.0f : 1.0f;
    float v;
    if ((kind == PB_F8_FNUZ && c == 0x80) || (kind == PB_F8_FN && (c & 0x7f) == 0x7f) ||
        (kind == PB_F8_IEEE && e == (1 << ebits) - 1 && m))
      v = __builtin_nanf("");
    else if (kind == PB_F8_IEEE && e == (1 << ebits) - 1)
      v = __builtin_inff();
    else if (e == 0)
      v = __builtin_ldexpf((float)m, 1 - bias - mbits);
    else
      v = __builtin_ldexpf((float)((1 << mbits) + m), e - bias - mbits);
    t[c] = __builtin_copysignf(v, sign);
  }
}

int pb_cast_slot(PyArray_Descr *d) {
  int s = pb_dtype_slot(d);
  if (s >= 0) return s;
  for (int i = 0; i < 4; ++i)
    if (d->type_num == f8_typenum[i]) return PB_F8E4M3FN + i;
  return -1;
}

PyArray_Descr *pb_cast_descr(int slot) {
  if (slot >= PB_F8E4M3FN && slot < PB_NCAST) return PyArray_DescrFromType(f8_typenum[slot - PB_F8E4M3FN]);
  return pb_descr_for_slot(slot);
}

/* ---- the conversion grid ----
 * Each dtype X has a storage type X_T, a loader X_LOAD(v) giving its value in a natural C type
 * (ints as themselves, halves and float8 as float, complex as C complex) and a converter
 * X_CONV(v) from any such value; C11 _Generic picks the rule for the value's type. */

typedef float _Complex c64_t;
typedef double _Complex c128_t;

#define BOOL_T uint8_t
#define I8_T int8_t
#define I16_T int16_t
#define I32_T int32_t
#define I64_T int64_t
#define U8_T uint8_t
#define U16_T uint16_t
#define U32_T uint32_t
#define U64_T uint64_t
#define F16_T uint16_t /* float16 bits */
#define BF16_T pb_bf16
#define F32_T float
#define F64_T double
#define C64_T c64_t
#define C128_T c128_t
#define F8A_T uint8_t
#define F8B_T uint8_t
#define F8C_T uint8_t
#define F8D_T uint8_t

#define BOOL_LOAD(v) ((uint8_t)((v) != 0))
#define I8_LOAD(v) (v)
#define I16_LOAD(v) (v)
#define I32_LOAD(v) (v)
#define I64_LOAD(v) (v)
#define U8_LOAD(v) (v)
#define U16_LOAD(v) (v)
#define U32_LOAD(v) (v)
#define U64_LOAD(v) (v)
#define F16_LOAD(v) pb_half_to_float(v)
#define BF16_LOAD(v) pb_bf16_to_f32(v)
#define F32_LOAD(v) (v)
#define F64_LOAD(v) (v)
#define C64_LOAD(v) (v)
#define C128_LOAD(v) (v)
#define F8A_LOAD(v) pb_f8_value[0][v]
#define F8B_LOAD(v) pb_f8_value[1][v]
#define F8C_LOAD(v) pb_f8_value[2][v]
#define F8D_LOAD(v) pb_f8_value[3][v]

/* complex -> real takes the real part; every real target then sees a real value */
#define REAL(v) _Generic((v), c64_t: crealf((c64_t)(v)), c128_t: creal((c128_t)(v)), default: (v))

#define BOOL_CONV(v) ((uint8_t)(REAL(v) != 0))
#define INT_CONV(v, SFX, T)                                                                        \
  _Generic(REAL(v), float: pb_f32_to_##SFX, double: pb_f64_to_##SFX, default: int_id_##SFX)(REAL(v))
#define I8_CONV(v) INT_CONV(v, i8, int8_t)
#define I16_CONV(v) INT_CONV(v, i16, int16_t)
#define I32_CONV(v) INT_CONV(v, i32, int32_t)
#define I64_CONV(v) INT_CONV(v, i64, int64_t)
#define U8_CONV(v) INT_CONV(v, u8, uint8_t)
#define U16_CONV(v) INT_CONV(v, u16, uint16_t)
#define U32_CONV(v) INT_CONV(v, u32, uint32_t)
#define U64_CONV(v) INT_CONV(v, u64, uint64_t)
/* int -> int wraps (the extension is built with -fwrapv; unsigned arithmetic does the rest) */
#define INT_ID(SFX, T) static inline T int_id_##SFX(uint64_t v) { return (T)v; }
INT_ID(i8, int8_t) INT_ID(i16, int16_t) INT_ID(i32, int32_t) INT_ID(i64, int64_t)
INT_ID(u8, uint8_t) INT_ID(u16, uint16_t) INT_ID(u32, uint32_t) INT_ID(u64, uint64_t)

/* Integers reach float16 through float32 without a second rounding: every integer that float16
 * can hold finitely (|x| < 65520) is exact in float32. float64 rounds once (through float32
 * rounded to odd). */
#define F16_CONV(v)                                                                               \
  pb_float_to_half(_Generic(REAL(v), double: pb_f64_to_f32_odd, default: f32_of)(REAL(v)))
static inline float f32_of(float v) { return v; }
#define BF16_CONV(v) pb_f32_to_bf16((float)REAL(v))
#define F32_CONV(v) ((float)REAL(v))
#define F64_CONV(v) ((double)REAL(v))
#define C64_CONV(v) ((c64_t)(v))
#define C128_CONV(v) ((c128_t)(v))
#define F8A_CONV(v) PB_F8_E4M3FN((float)REAL(v))
#define F8B_CONV(v) PB_F8_E5M2((float)REAL(v))
#define F8C_CONV(v) PB_F8_E4M3FNUZ((float)REAL(v))
#define F8D_CONV(v) PB_F8_E5M2FNUZ((float)REAL(v))

/* One (source, destination) loop: a contiguous body and a strided one. ATTR is PB_CLONES for
 * the vectorizable pairs; pairs with a float8 side (table look-ups and branchy encodes that gain
 * little from AVX) are compiled once, which also halves this file's compile time. */
#define CAST_LOOP_ATTR(S, D, ATTR)                                                                \
  static ATTR void cast_##S##_##D##_c(const S##_T *restrict x, D##_T *restrict y, npy_intp n) {   \
    for (npy_intp i = 0; i < n; ++i) y[i] = D##_CONV(S##_LOAD(x[i]));                           \
  }                                                                                              \
  static void cast_##S##_##D(char **p, const npy_intp *s, npy_intp n, const void *prm) {         \
    (void)prm;                                                                                   \
    if (s[0] == (npy_intp)sizeof(S##_T) && s[1] == (npy_intp)sizeof(D##_T)) {                    \
      cast_##S##_##D##_c((const S##_T *)p[0], (D##_T *)p[1], n);                                 \
      return;                                                                                    \
    }                                                                                            \
    char *px = p[0], *py = p[1];                                                                 \
    for (npy_intp i = 0; i < n; ++i, px += s[0], py += s[1])                                     \
      *(D##_T *)py = D##_CONV(S##_LOAD(*(const S##_T *)px));                                     \
  }
#define CAST_LOOP(S, D) CAST_LOOP_ATTR(S, D, PB_CLONES)
#define CAST_LOOP_ONCE(S, D) CAST_LOOP_ATTR(S, D, )

/* The grid, in slot order (pb.h's enum, then cast.h's float8 slots). GEN8 makes the entries
 * with a float8 destination. */
#define FOR_EACH_DST(GEN, GEN8, S)                                                                \
  GEN(S, BOOL) GEN(S, I8) GEN(S, I16) GEN(S, I32) GEN(S, I64) GEN(S, U8) GEN(S, U16) GEN(S, U32) \
  GEN(S, U64) GEN(S, F16) GEN(S, BF16) GEN(S, F32) GEN(S, F64) GEN(S, C64) GEN(S, C128)          \
  GEN8(S, F8A) GEN8(S, F8B) GEN8(S, F8C) GEN8(S, F8D)
#define FOR_EACH_SRC(GEN, GEN8)                                                                   \
  GEN(BOOL) GEN(I8) GEN(I16) GEN(I32) GEN(I64) GEN(U8) GEN(U16) GEN(U32) GEN(U64) GEN(F16)        \
  GEN(BF16) GEN(F32) GEN(F64) GEN(C64) GEN(C128) GEN8(F8A) GEN8(F8B) GEN8(F8C) GEN8(F8D)

#define CAST_ROW(S) FOR_EACH_DST(CAST_LOOP, CAST_LOOP_ONCE, S)
#define CAST_ROW_ONCE(S) FOR_EACH_DST(CAST_LOOP_ONCE, CAST_LOOP_ONCE, S)
FOR_EACH_SRC(CAST_ROW, CAST_ROW_ONCE)

#define TABLE_ENTRY(S, D) cast_##S##_##D,
#define TABLE_ROW(S) {FOR_EACH_DST(TABLE_ENTRY, TABLE_ENTRY, S)},
static const pb_loop_fn casts[PB_NCAST][PB_NCAST] = {FOR_EACH_SRC(TABLE_ROW, TABLE_ROW)};

/* accessors for the compiled-program executor (schedule.c) */
pb_loop_fn pb_cast_loop(int src, int dst) {
  return src >= 0 && src < PB_NCAST && dst >= 0 && dst < PB_NCAST ? casts[src][dst] : NULL;
}
int pb_cast_nslots(void) { return PB_NCAST; }

/* Conversions are memory-bound: a thread needs this many elements before a second one pays. */
#define CAST_GRAIN 262144

static PyArray_Descr *arg_dtype(PyObject *obj, const char *kernel) {
  if (!PyArray_DescrCheck(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: argument 'dtype' must be a numpy.dtype, got %s", kernel,
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  return (PyArray_Descr *)obj;
}

/* convert(x, dtype) -> new C-contiguous array of x's values as dtype */
static PyObject *convert(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "convert: expected (x, dtype)");
    return NULL;
  }
  PyArrayObject *x = pb_arg_array(args[0], "convert", "x");
  PyArray_Descr *d = x ? arg_dtype(args[1], "convert") : NULL;
  if (!d) return NULL;
  int si = pb_cast_slot(PyArray_DESCR(x)), so = pb_cast_slot(d);
  if (si < 0 || so < 0) {
    PyErr_Format(PyExc_TypeError, "convert: %s dtype %S is not supported", si < 0 ? "argument 'x'" : "target",
                 si < 0 ? (PyObject *)PyArray_DESCR(x) : (PyObject *)d);
    return NULL;
  }
  PyArray_Descr *od = pb_cast_descr(so);
  if (!od) return NULL;
  int ndim = PyArray_NDIM(x);
  PyArrayObject *out = pb_new_array(ndim, PyArray_SHAPE(x), od);
  if (!out) return NULL;
  npy_intp strides[2 * PB_MAXDIMS];
  for (int i = 0; i < ndim; ++i) {
    strides[i] = PyArray_STRIDES(x)[i];
    strides[ndim + i] = PyArray_STRIDES(out)[i];
  }
  char *base[2] = {PyArray_BYTES(x), PyArray_BYTES(out)};
  npy_intp n = PyArray_SIZE(x);
  if (n >= PB_NOGIL_MIN) {
    int threads = pb_threads_for(n, CAST_GRAIN);
    Py_BEGIN_ALLOW_THREADS
    pb_iterate(ndim, PyArray_SHAPE(x), 2, base, strides, casts[si][so], NULL, threads);
    Py_END_ALLOW_THREADS
  } else {
    pb_iterate(ndim, PyArray_SHAPE(x), 2, base, strides, casts[si][so], NULL, 1);
  }
  return (PyObject *)out;
}

/* ---- reinterpret: x's bytes seen as another dtype, without copying ----
 * JAX's shape rule: equal widths keep the shape; a narrower dtype adds a trailing dimension of
 * the width ratio (the bytes of each element, in memory order); a wider one consumes a trailing
 * dimension of that size. Returns None when x's layout cannot be viewed that way (the trailing
 * dimension is not contiguous, or an address is misaligned for the new dtype): copy x first. */

static bool aligned_for(const char *data, int nd, const npy_intp *shape, const npy_intp *strides,
                        npy_intp align) {
  if ((uintptr_t)data % (uintptr_t)align) return false;
  for (int i = 0; i < nd; ++i)
    if (shape[i] > 1 && strides[i] % align) return false;
  return true;
}

static PyObject *reinterpret(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "reinterpret: expected (x, dtype)");
    return NULL;
  }
  PyArrayObject *x = pb_arg_array(args[0], "reinterpret", "x");
  PyArray_Descr *d = x ? arg_dtype(args[1], "reinterpret") : NULL;
  if (!d) return NULL;
  PyArray_Descr *xd = PyArray_DESCR(x);
  if (PyDataType_REFCHK(xd) || PyDataType_REFCHK(d) || PyDataType_ELSIZE(xd) == 0 ||
      PyDataType_ELSIZE(d) == 0 || PyDataType_ISBYTESWAPPED(d)) {
    PyErr_Format(PyExc_TypeError, "reinterpret: cannot reinterpret %S as %S", (PyObject *)xd, (PyObject *)d);
    return NULL;
  }
  npy_intp olds = PyDataType_ELSIZE(xd), news = PyDataType_ELSIZE(d);
  int nd = PyArray_NDIM(x);
  npy_intp shape[PB_MAXDIMS + 1], strides[PB_MAXDIMS + 1];
  for (int i = 0; i < nd; ++i) {
    shape[i] = PyArray_SHAPE(x)[i];
    strides[i] = PyArray_STRIDES(x)[i];
  }
  if (news < olds) {
    if (olds % news) {
      PyErr_Format(PyExc_ValueError, "reinterpret: cannot split %S elements into %S", (PyObject *)xd, (PyObject *)d);
      return NULL;
    }
    if (nd == PB_MAXDIMS) {
      PyErr_Format(PyExc_ValueError, "reinterpret: argument 'x' has %d dimensions; narrowing adds one "
                   "and at most %d are supported", nd, PB_MAXDIMS);
      return NULL;
    }
    shape[nd] = olds / news;
    strides[nd] = news;
    ++nd;
  } else if (news > olds) {
    if (news % olds) {
      PyErr_Format(PyExc_ValueError, "reinterpret: cannot combine %S elements into %S", (PyObject *)xd, (PyObject *)d);
      return NULL;
    }
    if (nd == 0 || shape[nd - 1] != news / olds) {
      PyErr_Format(PyExc_ValueError,
                   "reinterpret: %S from %S needs a trailing dimension of size %zd, got %zd",
                   (PyObject *)d, (PyObject *)xd, news / olds, nd ? shape[nd - 1] : (npy_intp)0);
      return NULL;
    }
    if (strides[nd - 1] != olds) Py_RETURN_NONE;
    --nd;
  }
  if (!aligned_for(PyArray_BYTES(x), nd, shape, strides, PyDataType_ALIGNMENT(d))) Py_RETURN_NONE;
  Py_INCREF(d);
  return pb_new_view(x, d, nd, shape, strides, PyArray_BYTES(x));
}

static PyMethodDef methods[] = {
  {"convert", (PyCFunction)(void (*)(void))convert, METH_FASTCALL,
   "convert(x, dtype): x's values converted to dtype (any of the 19 dtypes, any strides), as a "
   "new C-contiguous array."},
  {"reinterpret", (PyCFunction)(void (*)(void))reinterpret, METH_FASTCALL,
   "reinterpret(x, dtype): a zero-copy view of x's bytes as dtype with bitcast_convert_type's "
   "shape rule, or None if x's layout needs a copy first."},
  {NULL, NULL, 0, NULL}};

int pb_register_cast(PyObject *m) {
  static const int mbits[4] = {3, 2, 3, 2}, bias[4] = {7, 15, 8, 16};
  static const int kind[4] = {PB_F8_FN, PB_F8_IEEE, PB_F8_FNUZ, PB_F8_FNUZ};
  for (int i = 0; i < 4; ++i) fill_f8_table(pb_f8_value[i], mbits[i], bias[i], kind[i]);
  /* ml_dtypes assigns the float8 type numbers when it is imported */
  PyObject *mod = PyImport_ImportModule("ml_dtypes");
  if (!mod) return -1;
  for (int i = 0; i < 4; ++i) {
    PyObject *t = PyObject_GetAttrString(mod, f8_names[i]);
    PyArray_Descr *d = NULL;
    if (!t || !PyArray_DescrConverter(t, &d)) {
      Py_XDECREF(t);
      Py_DECREF(mod);
      return -1;
    }
    f8_typenum[i] = d->type_num;
    Py_DECREF(d);
    Py_DECREF(t);
  }
  Py_DECREF(mod);
  return PyModule_AddFunctions(m, methods);
}
