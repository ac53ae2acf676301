/* Threefry-2x32 kernels: the counter-based generator behind pullback.random.
 *
 * threefry2x32 is Salmon et al.'s Threefry with two 32-bit words and 20 rounds (Random123's
 * default), as JAX's threefry2x32 primitive computes it. Besides the plain hash over strided
 * operands, the key-level operations of JAX's default (partitionable) PRNG get fused kernels
 * that generate their counters in registers instead of reading them from memory:
 *   random_bits  : out[b, i] = y0 ^ y1 (or y0:y1 for 64 bits)  where (y0, y1) = F(key_b, (hi(i), lo(i)))
 *   random_split : out[b, i, :] = F(key_b, (hi(i), lo(i)))
 *   random_fold_in: out[b, :] = F(key_b, (0, msg_b))
 *   random_seed  : out[b, :] = (seed_b >> 32, seed_b & 0xffffffff)  (high word 0 below 64 bits)
 * with i the row-major index of the output element (a 64-bit counter split into two words). */
#include "pb.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- the hash ---- */

#define PB_ROTL32(x, r) (((x) << (r)) | ((x) >> (32 - (r))))
#define PB_TF_ROUND(r) \
  do { x0 += x1; x1 = PB_ROTL32(x1, r); x1 ^= x0; } while (0)
#define PB_TF_ROUNDS_A PB_TF_ROUND(13); PB_TF_ROUND(15); PB_TF_ROUND(26); PB_TF_ROUND(6)
#define PB_TF_ROUNDS_B PB_TF_ROUND(17); PB_TF_ROUND(29); PB_TF_ROUND(16); PB_TF_ROUND(24)

/* Threefry-2x32, 20 rounds: five groups of four rounds, each followed by a key injection. */
static inline __attribute__((always_inline)) void threefry(uint32_t k0, uint32_t k1,
                                                           uint32_t *p0, uint32_t *p1) {
  const uint32_t k2 = k0 ^ k1 ^ 0x1BD11BDAu;
  uint32_t x0 = *p0 + k0, x1 = *p1 + k1;
  PB_TF_ROUNDS_A; x0 += k1; x1 += k2 + 1u;
  PB_TF_ROUNDS_B; x0 += k2; x1 += k0 + 2u;
  PB_TF_ROUNDS_A; x0 += k0; x1 += k1 + 3u;
  PB_TF_ROUNDS_B; x0 += k1; x1 += k2 + 4u;
  PB_TF_ROUNDS_A; x0 += k2; x1 += k0 + 5u;
  *p0 = x0;
  *p1 = x1;
}

/* Elements per thread below which a second OpenMP thread does not pay (~2-4 ns each). */
#define TF_GRAIN 32768

/* ---- threefry2x32(key1, key2, x1, x2) over same-shape strided operands ---- */

static PB_CLONES void tf_contig(const uint32_t *restrict k0, const uint32_t *restrict k1,
                                const uint32_t *restrict a, const uint32_t *restrict b,
                                uint32_t *restrict y0, uint32_t *restrict y1, npy_intp n) {
  for (npy_intp i = 0; i < n; ++i) {
    uint32_t x0 = a[i], x1 = b[i];
    threefry(k0[i], k1[i], &x0, &x1);
    y0[i] = x0;
    y1[i] = x1;
  }
}

/* The common case: one key (zero strides) over contiguous counters. */
static PB_CLONES void tf_scalar_key(uint32_t k0, uint32_t k1, const uint32_t *restrict a,
                                    const uint32_t *restrict b, uint32_t *restrict y0,
                                    uint32_t *restrict y1, npy_intp n) {
  for (npy_intp i = 0; i < n; ++i) {
    uint32_t x0 = a[i], x1 = b[i];
    threefry(k0, k1, &x0, &x1);
    y0[i] = x0;
    y1[i] = x1;
  }
}

static void tf_loop(char **p, const npy_intp *s, npy_intp n, const void *prm) {
  (void)prm;
  const npy_intp e = 4;
  if (s[2] == e && s[3] == e && s[4] == e && s[5] == e) {
    if (s[0] == e && s[1] == e) {
      tf_contig((const uint32_t *)p[0], (const uint32_t *)p[1], (const uint32_t *)p[2],
                (const uint32_t *)p[3], (uint32_t *)p[4], (uint32_t *)p[5], n);
      return;
    }
    if (s[0] == 0 && s[1] == 0) {
      tf_scalar_key(*(const uint32_t *)p[0], *(const uint32_t *)p[1], (const uint32_t *)p[2],
                    (const uint32_t *)p[3], (uint32_t *)p[4], (uint32_t *)p[5], n);
      return;
    }
  }
  char *q[6] = {p[0], p[1], p[2], p[3], p[4], p[5]};
  for (npy_intp i = 0; i < n; ++i) {
    uint32_t x0 = *(const uint32_t *)q[2], x1 = *(const uint32_t *)q[3];
    threefry(*(const uint32_t *)q[0], *(const uint32_t *)q[1], &x0, &x1);
    *(uint32_t *)q[4] = x0;
    *(uint32_t *)q[5] = x1;
    for (int k = 0; k < 6; ++k) q[k] += s[k];
  }
}

/* Runs tf_loop over ndim-dimensional operands: 4 inputs then 2 outputs, byte strides
 * strides[op * ndim + d]. */
static void run_threefry(int ndim, const npy_intp *shape, char *const *base,
                         const npy_intp *strides) {
  npy_intp n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  int threads = pb_threads_for(n, TF_GRAIN);
  if (n >= PB_NOGIL_MIN) {
    Py_BEGIN_ALLOW_THREADS
    pb_iterate(ndim, shape, 6, base, strides, tf_loop, NULL, threads);
    Py_END_ALLOW_THREADS
  } else {
    pb_iterate(ndim, shape, 6, base, strides, tf_loop, NULL, 1);
  }
}

/* An input that must be a uint32 ndarray. */
static PyArrayObject *u32_arg(PyObject *obj, const char *kernel, const char *arg) {
  PyArrayObject *a = pb_arg_array(obj, kernel, arg);
  if (a && pb_dtype_slot(PyArray_DESCR(a)) != PB_U32) {
    PyErr_Format(PyExc_TypeError, "%s: argument '%s' must have dtype uint32, got %S", kernel, arg,
                 (PyObject *)PyArray_DESCR(a));
    return NULL;
  }
  return a;
}

/* threefry2x32(key1, key2, x1, x2) -> (y1, y2); equal shapes (broadcast with zero strides
 * first). */
static PyObject *py_threefry2x32(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  static const char *names[4] = {"key1", "key2", "x1", "x2"};
  if (nargs != 4) {
    PyErr_Format(PyExc_TypeError, "threefry2x32: expected 4 arguments (key1, key2, x1, x2), got %zd",
                 nargs);
    return NULL;
  }
  PyArrayObject *in[4];
  for (int i = 0; i < 4; ++i)
    if (!(in[i] = u32_arg(args[i], "threefry2x32", names[i]))) return NULL;
  int ndim = PyArray_NDIM(in[2]);
  const npy_intp *shape = PyArray_SHAPE(in[2]);
  for (int i = 0; i < 4; ++i)
    if (PyArray_NDIM(in[i]) != ndim || !PyArray_CompareLists(PyArray_SHAPE(in[i]), shape, ndim)) {
      PyErr_Format(PyExc_ValueError,
                   "threefry2x32: argument '%s' must have the shape of 'x1' (broadcast first)",
                   names[i]);
      return NULL;
    }
  PyArrayObject *out[2] = {NULL, NULL};
  for (int i = 0; i < 2; ++i) {
    PyArray_Descr *d = pb_descr_for_slot(PB_U32);
    if (!d || !(out[i] = pb_new_array(ndim, shape, d))) {
      Py_XDECREF(out[0]);
      return NULL;
    }
  }
  char *base[6];
  npy_intp strides[6 * PB_MAXDIMS];
  for (int i = 0; i < 6; ++i) {
    PyArrayObject *a = i < 4 ? in[i] : out[i - 4];
    base[i] = PyArray_BYTES(a);
    for (int d = 0; d < ndim; ++d) strides[i * ndim + d] = PyArray_STRIDES(a)[d];
  }
  run_threefry(ndim, shape, base, strides);
  return Py_BuildValue("(NN)", out[0], out[1]);
}

/* ---- key arrays: uint32[..., 2] of any strides ---- */

static PyArrayObject *keys_arg(PyObject *obj, const char *kernel) {
  PyArrayObject *k = u32_arg(obj, kernel, "keys");
  if (k && (PyArray_NDIM(k) < 1 || PyArray_DIM(k, PyArray_NDIM(k) - 1) != 2)) {
    PyErr_Format(PyExc_ValueError, "%s: argument 'keys' must have shape (..., 2)", kernel);
    return NULL;
  }
  return k;
}

/* Byte offset of batch element b (row-major over the first nb dimensions). */
static npy_intp batch_offset(PyArrayObject *a, int nb, npy_intp b) {
  npy_intp off = 0;
  for (int d = nb - 1; d >= 0; --d) {
    npy_intp n = PyArray_DIM(a, d);
    off += (b % n) * PyArray_STRIDE(a, d);
    b /= n;
  }
  return off;
}

/* Reads a shape tuple of non-negative ints into dims; returns the count or -1. */
static int shape_arg(PyObject *obj, const char *kernel, npy_intp *dims, int maxd) {
  if (!PyTuple_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: argument 'shape' must be a tuple of ints", kernel);
    return -1;
  }
  Py_ssize_t nd = PyTuple_GET_SIZE(obj);
  if (nd > maxd) {
    PyErr_Format(PyExc_ValueError, "%s: argument 'shape' has too many dimensions", kernel);
    return -1;
  }
  for (Py_ssize_t i = 0; i < nd; ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(obj, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0) {
      PyErr_Format(PyExc_ValueError, "%s: argument 'shape' has a negative dimension", kernel);
      return -1;
    }
    dims[i] = (npy_intp)v;
  }
  return (int)nd;
}

/* ---- counter-mode generation: element i of a key's block uses the counter (hi(i), lo(i)) ---- */

enum { GEN_U8, GEN_U16, GEN_U32, GEN_U64, GEN_SPLIT, GEN_NMODES };

/* One run with a constant high word: lo + j never wraps within it (the caller splits there). */
#define PB_GEN_LOOP(NAME, T, STORE)                                                             \
  static PB_CLONES void NAME(uint32_t k0, uint32_t k1, uint32_t hi, uint32_t lo, T *out,       \
                             npy_intp n) {                                                      \
    for (npy_intp j = 0; j < n; ++j) {                                                          \
      uint32_t x0 = hi, x1 = lo + (uint32_t)j;                                                  \
      threefry(k0, k1, &x0, &x1);                                                               \
      STORE;                                                                                    \
    }                                                                                           \
  }
PB_GEN_LOOP(gen_u8, uint8_t, out[j] = (uint8_t)(x0 ^ x1))
PB_GEN_LOOP(gen_u16, uint16_t, out[j] = (uint16_t)(x0 ^ x1))
PB_GEN_LOOP(gen_u32, uint32_t, out[j] = x0 ^ x1)
PB_GEN_LOOP(gen_u64, uint64_t, out[j] = ((uint64_t)x0 << 32) | x1)
PB_GEN_LOOP(gen_split, uint32_t, (out[2 * j] = x0, out[2 * j + 1] = x1))

static const int gen_itemsize[GEN_NMODES] = {1, 2, 4, 8, 8};

/* Counters [start, start + n) of one key into out (element `start` of the block at out). */
static void gen_range(int mode, uint32_t k0, uint32_t k1, uint64_t start, npy_intp n, char *out) {
  while (n > 0) {
    uint32_t hi = (uint32_t)(start >> 32), lo = (uint32_t)start;
    uint64_t room = ((uint64_t)1 << 32) - lo; /* counters left before the low word wraps */
    npy_intp m = (uint64_t)n < room ? n : (npy_intp)room;
    char *p = out + (npy_intp)start * gen_itemsize[mode];
    switch (mode) {
      case GEN_U8: gen_u8(k0, k1, hi, lo, (uint8_t *)p, m); break;
      case GEN_U16: gen_u16(k0, k1, hi, lo, (uint16_t *)p, m); break;
      case GEN_U32: gen_u32(k0, k1, hi, lo, (uint32_t *)p, m); break;
      case GEN_U64: gen_u64(k0, k1, hi, lo, (uint64_t *)p, m); break;
      default: gen_split(k0, k1, hi, lo, (uint32_t *)p, m); break;
    }
    start += (uint64_t)m;
    n -= m;
  }
}

/* Fills out (C-contiguous, nkeys blocks of n elements) for every key of `keys`. */
static void gen_all(int mode, PyArrayObject *keys, npy_intp nkeys, npy_intp n, char *out) {
  int nb = PyArray_NDIM(keys) - 1;
  npy_intp kstride = PyArray_STRIDE(keys, nb);
  npy_intp block = n * gen_itemsize[mode];
  const char *kb = PyArray_BYTES(keys);
  int threads = pb_threads_for(n, TF_GRAIN);
  (void)threads;
  for (npy_intp b = 0; b < nkeys; ++b) {
    const char *kp = kb + batch_offset(keys, nb, b);
    uint32_t k0 = *(const uint32_t *)kp, k1 = *(const uint32_t *)(kp + kstride);
    char *ob = out + b * block;
#ifdef _OPENMP
    if (threads > 1) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int t = 0; t < threads; ++t) {
        npy_intp lo = n * t / threads, hi = n * (t + 1) / threads;
        gen_range(mode, k0, k1, (uint64_t)lo, hi - lo, ob);
      }
      continue;
    }
#endif
    gen_range(mode, k0, k1, 0, n, ob);
  }
}

/* Shared body of random_bits and random_split: out shape = batch + shape (+ (2,) for split). */
static PyObject *generate(const char *kernel, int mode, PyObject *keys_obj, PyObject *shape_obj) {
  PyArrayObject *keys = keys_arg(keys_obj, kernel);
  if (!keys) return NULL;
  int nb = PyArray_NDIM(keys) - 1;
  npy_intp dims[PB_MAXDIMS];
  for (int d = 0; d < nb; ++d) dims[d] = PyArray_DIM(keys, d);
  int ns = shape_arg(shape_obj, kernel, dims + nb, PB_MAXDIMS - nb - 1);
  if (ns < 0) return NULL;
  npy_intp nkeys = 1, n = 1;
  for (int d = 0; d < nb; ++d) nkeys *= dims[d];
  for (int d = 0; d < ns; ++d) {
    if (dims[nb + d] && n > NPY_MAX_INTP / 8 / dims[nb + d]) {
      PyErr_Format(PyExc_ValueError, "%s: argument 'shape' is too large", kernel);
      return NULL;
    }
    n *= dims[nb + d];
  }
  int nd = nb + ns;
  if (mode == GEN_SPLIT) dims[nd++] = 2;
  static const int slots[GEN_NMODES] = {PB_U8, PB_U16, PB_U32, PB_U64, PB_U32};
  PyArray_Descr *descr = pb_descr_for_slot(slots[mode]);
  if (!descr) return NULL;
  PyArrayObject *out = pb_new_array(nd, dims, descr);
  if (!out) return NULL;
  if (nkeys * n >= PB_NOGIL_MIN) {
    Py_BEGIN_ALLOW_THREADS
    gen_all(mode, keys, nkeys, n, PyArray_BYTES(out));
    Py_END_ALLOW_THREADS
  } else if (nkeys * n > 0) {
    gen_all(mode, keys, nkeys, n, PyArray_BYTES(out));
  }
  return (PyObject *)out;
}

/* random_bits(keys, shape, bit_width) -> uint{bit_width}[*keys.shape[:-1], *shape] */
static PyObject *py_random_bits(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "random_bits: expected (keys, shape, bit_width)");
    return NULL;
  }
  long bw = PyLong_AsLong(args[2]);
  if (bw == -1 && PyErr_Occurred()) return NULL;
  int mode = bw == 8 ? GEN_U8 : bw == 16 ? GEN_U16 : bw == 32 ? GEN_U32 : bw == 64 ? GEN_U64 : -1;
  if (mode < 0) {
    PyErr_Format(PyExc_ValueError, "random_bits: argument 'bit_width' must be 8, 16, 32 or 64, got %ld", bw);
    return NULL;
  }
  return generate("random_bits", mode, args[0], args[1]);
}

/* random_split(keys, shape) -> uint32[*keys.shape[:-1], *shape, 2] */
static PyObject *py_random_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "random_split: expected (keys, shape)");
    return NULL;
  }
  return generate("random_split", GEN_SPLIT, args[0], args[1]);
}

/* A fresh C-contiguous uint32 array of the keys' shape. */
static PyArrayObject *new_keys_like(PyArrayObject *shape_of, int extra_pair) {
  npy_intp dims[PB_MAXDIMS];
  int nd = PyArray_NDIM(shape_of);
  for (int d = 0; d < nd; ++d) dims[d] = PyArray_DIM(shape_of, d);
  if (extra_pair) dims[nd++] = 2;
  PyArray_Descr *descr = pb_descr_for_slot(PB_U32);
  return descr ? pb_new_array(nd, dims, descr) : NULL;
}

/* random_fold_in(keys, msgs) -> uint32[..., 2]: msgs (uint32) has the keys' batch shape. */
static PyObject *py_random_fold_in(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "random_fold_in: expected (keys, msgs)");
    return NULL;
  }
  PyArrayObject *keys = keys_arg(args[0], "random_fold_in");
  PyArrayObject *msgs = keys ? u32_arg(args[1], "random_fold_in", "msgs") : NULL;
  if (!msgs) return NULL;
  int nb = PyArray_NDIM(keys) - 1;
  if (PyArray_NDIM(msgs) != nb || !PyArray_CompareLists(PyArray_SHAPE(msgs), PyArray_SHAPE(keys), nb)) {
    PyErr_SetString(PyExc_ValueError,
                    "random_fold_in: argument 'msgs' must have the batch shape of 'keys' "
                    "(broadcast first)");
    return NULL;
  }
  PyArrayObject *out = new_keys_like(keys, 0);
  if (!out) return NULL;
  /* operands over the batch dims: key word 0, key word 1, counter word 0 (a zero), counter
   * word 1 (msg), out word 0, out word 1 */
  static const uint32_t zero = 0;
  const npy_intp kw = PyArray_STRIDE(keys, nb), ow = PyArray_STRIDE(out, nb);
  char *base[6] = {PyArray_BYTES(keys), PyArray_BYTES(keys) + kw, (char *)&zero,
                   PyArray_BYTES(msgs), PyArray_BYTES(out), PyArray_BYTES(out) + ow};
  npy_intp strides[6 * PB_MAXDIMS];
  for (int d = 0; d < nb; ++d) {
    strides[0 * nb + d] = strides[1 * nb + d] = PyArray_STRIDE(keys, d);
    strides[2 * nb + d] = 0;
    strides[3 * nb + d] = PyArray_STRIDE(msgs, d);
    strides[4 * nb + d] = strides[5 * nb + d] = PyArray_STRIDE(out, d);
  }
  run_threefry(nb, PyArray_SHAPE(keys), base, strides);
  return (PyObject *)out;
}

/* ---- random_seed: integer seeds -> keys ---- */

/* out words (hi, lo) of each seed: 64-bit seeds give both halves, narrower ones (sign-extended
 * to 32 bits) give (0, seed mod 2**32). */
#define PB_SEED_LOOP(NAME, T, HI)                                                               \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                 \
    (void)prm;                                                                                  \
    char *a = p[0], *h = p[1], *l = p[2];                                                       \
    for (npy_intp i = 0; i < n; ++i, a += s[0], h += s[1], l += s[2]) {                         \
      const T v = *(const T *)a;                                                                \
      *(uint32_t *)h = (HI);                                                                    \
      *(uint32_t *)l = (uint32_t)v;                                                             \
    }                                                                                           \
  }
PB_SEED_LOOP(seed_i8, int8_t, 0u)
PB_SEED_LOOP(seed_i16, int16_t, 0u)
PB_SEED_LOOP(seed_i32, int32_t, 0u)
PB_SEED_LOOP(seed_i64, int64_t, (uint32_t)((uint64_t)v >> 32))
PB_SEED_LOOP(seed_u8, uint8_t, 0u)
PB_SEED_LOOP(seed_u16, uint16_t, 0u)
PB_SEED_LOOP(seed_u32, uint32_t, 0u)
PB_SEED_LOOP(seed_u64, uint64_t, (uint32_t)(v >> 32))

static const pb_loop_fn seed_loops[PB_NDT] = {
    [PB_I8] = seed_i8, [PB_I16] = seed_i16, [PB_I32] = seed_i32, [PB_I64] = seed_i64,
    [PB_U8] = seed_u8, [PB_U16] = seed_u16, [PB_U32] = seed_u32, [PB_U64] = seed_u64};

/* random_seed(seeds) -> uint32[*seeds.shape, 2] */
static PyObject *py_random_seed(PyObject *self, PyObject *arg) {
  (void)self;
  PyArrayObject *seeds = pb_arg_array(arg, "random_seed", "seeds");
  if (!seeds) return NULL;
  if (PyArray_NDIM(seeds) >= PB_MAXDIMS) {
    PyErr_SetString(PyExc_ValueError, "random_seed: argument 'seeds' has too many dimensions");
    return NULL;
  }
  int slot = pb_dtype_slot(PyArray_DESCR(seeds));
  pb_loop_fn fn = slot >= 0 ? seed_loops[slot] : NULL;
  if (!fn) {
    PyErr_Format(PyExc_TypeError, "random_seed: argument 'seeds' must be an integer array, got %S",
                 (PyObject *)PyArray_DESCR(seeds));
    return NULL;
  }
  PyArrayObject *out = new_keys_like(seeds, 1);
  if (!out) return NULL;
  int nd = PyArray_NDIM(seeds);
  char *base[3] = {PyArray_BYTES(seeds), PyArray_BYTES(out), PyArray_BYTES(out) + 4};
  npy_intp strides[3 * PB_MAXDIMS];
  for (int d = 0; d < nd; ++d) {
    strides[d] = PyArray_STRIDE(seeds, d);
    strides[nd + d] = strides[2 * nd + d] = PyArray_STRIDE(out, d);
  }
  pb_iterate(nd, PyArray_SHAPE(seeds), 3, base, strides, fn, NULL, 1);
  return (PyObject *)out;
}

/* ---- random_uniform_range: max(lo, u * (hi - lo) + lo), rounded as XLA's CPU backend does ----
 *
 * JAX's uniform ends with sub, mul, add, max; XLA contracts the mul and add into one fused
 * multiply-add for float32 and float64, evaluates float16 in float32 (one f32 FMA, then one
 * rounding to f16) and rounds bfloat16 after every operation. These loops reproduce each. */

#define PB_RANGE_LOOP(NAME, T, EXPR)                                                            \
  static PB_CLONES void NAME##_contig(const T *u, const T *lo, const T *hi, T *y, npy_intp n,   \
                                      npy_intp ls, npy_intp hs) {                               \
    for (npy_intp i = 0; i < n; ++i) {                                                          \
      const T a = u[i], l = lo[i * ls], h = hi[i * hs];                                         \
      y[i] = EXPR;                                                                              \
    }                                                                                           \
  }                                                                                             \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                 \
    (void)prm;                                                                                  \
    const npy_intp e = (npy_intp)sizeof(T);                                                     \
    if (s[0] == e && s[3] == e && (s[1] == 0 || s[1] == e) && (s[2] == 0 || s[2] == e)) {       \
      NAME##_contig((const T *)p[0], (const T *)p[1], (const T *)p[2], (T *)p[3], n, s[1] / e,  \
                    s[2] / e);                                                                  \
      return;                                                                                   \
    }                                                                                           \
    char *pu = p[0], *pl = p[1], *ph = p[2], *py = p[3];                                        \
    for (npy_intp i = 0; i < n; ++i, pu += s[0], pl += s[1], ph += s[2], py += s[3]) {           \
      const T a = *(const T *)pu, l = *(const T *)pl, h = *(const T *)ph;                       \
      *(T *)py = EXPR;                                                                          \
    }                                                                                           \
  }

/* lax.max: NaN if either is NaN, else the larger */
static inline float max_f32(float a, float b) { return a != a ? a : b != b ? b : a > b ? a : b; }
static inline double max_f64(double a, double b) { return a != a ? a : b != b ? b : a > b ? a : b; }
static inline float f16r(float x) { return (float)(pb_f16)x; }
static inline float bf16r(float x) { return pb_bf16_to_f32(pb_f32_to_bf16(x)); }

PB_RANGE_LOOP(range_f32, float, max_f32(l, __builtin_fmaf(a, h - l, l)))
PB_RANGE_LOOP(range_f64, double, max_f64(l, __builtin_fma(a, h - l, l)))
PB_RANGE_LOOP(range_f16, pb_f16,
              (pb_f16)max_f32((float)l, f16r(__builtin_fmaf((float)a, f16r((float)h - (float)l),
                                                            (float)l))))
PB_RANGE_LOOP(range_bf16, pb_bf16,
              pb_f32_to_bf16(max_f32(pb_bf16_to_f32(l),
                                     bf16r(bf16r(pb_bf16_to_f32(a) *
                                                 bf16r(pb_bf16_to_f32(h) - pb_bf16_to_f32(l))) +
                                           pb_bf16_to_f32(l)))))

static const pb_loop_fn range_loops[PB_NDT] = {
    [PB_F16] = range_f16, [PB_BF16] = range_bf16, [PB_F32] = range_f32, [PB_F64] = range_f64};

/* random_uniform_range(u, lo, hi) -> array of u's shape: lo and hi have u's shape or are 0-d */
static PyObject *py_uniform_range(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  static const char *names[3] = {"u", "minval", "maxval"};
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "random_uniform_range: expected (u, minval, maxval)");
    return NULL;
  }
  PyArrayObject *in[3];
  for (int i = 0; i < 3; ++i)
    if (!(in[i] = pb_arg_array(args[i], "random_uniform_range", names[i]))) return NULL;
  int ndim = PyArray_NDIM(in[0]);
  const npy_intp *shape = PyArray_SHAPE(in[0]);
  int slot = pb_dtype_slot(PyArray_DESCR(in[0]));
  for (int i = 0; i < 3; ++i) {
    int nd = PyArray_NDIM(in[i]);
    if (nd && (nd != ndim || !PyArray_CompareLists(PyArray_SHAPE(in[i]), shape, ndim))) {
      PyErr_Format(PyExc_ValueError, "random_uniform_range: argument '%s' must have the shape "
                   "of 'u' or be 0-d", names[i]);
      return NULL;
    }
    if (pb_dtype_slot(PyArray_DESCR(in[i])) != slot) {
      PyErr_Format(PyExc_TypeError, "random_uniform_range: argument '%s' must have the dtype of "
                   "'u'", names[i]);
      return NULL;
    }
  }
  pb_loop_fn fn = slot >= 0 ? range_loops[slot] : NULL;
  if (!fn) {
    PyErr_Format(PyExc_TypeError, "random_uniform_range: dtype %S is not supported (float16, "
                 "bfloat16, float32 or float64)", (PyObject *)PyArray_DESCR(in[0]));
    return NULL;
  }
  PyArray_Descr *d = pb_descr_for_slot(slot);
  PyArrayObject *out = d ? pb_new_array(ndim, shape, d) : NULL;
  if (!out) return NULL;
  char *base[4];
  npy_intp strides[4 * PB_MAXDIMS];
  for (int i = 0; i < 4; ++i) {
    PyArrayObject *a = i < 3 ? in[i] : out;
    base[i] = PyArray_BYTES(a);
    for (int k = 0; k < ndim; ++k) strides[i * ndim + k] = PyArray_NDIM(a) ? PyArray_STRIDES(a)[k] : 0;
  }
  npy_intp n = PyArray_SIZE(out);
  if (n >= PB_NOGIL_MIN) {
    Py_BEGIN_ALLOW_THREADS
    pb_iterate(ndim, shape, 4, base, strides, fn, NULL, pb_threads_for(n, 262144));
    Py_END_ALLOW_THREADS
  } else {
    pb_iterate(ndim, shape, 4, base, strides, fn, NULL, 1);
  }
  return (PyObject *)out;
}

static PyMethodDef methods[] = {
    {"random_uniform_range", (PyCFunction)(void (*)(void))py_uniform_range, METH_FASTCALL,
     "random_uniform_range(u, minval, maxval): max(minval, u * (maxval - minval) + minval) "
     "with XLA's CPU rounding (fused multiply-add for f32/f64, f32 FMA for f16)."},
    {"threefry2x32", (PyCFunction)(void (*)(void))py_threefry2x32, METH_FASTCALL,
     "threefry2x32(key1, key2, x1, x2) -> (y1, y2): Threefry-2x32 (20 rounds) of same-shape "
     "uint32 arrays of any strides."},
    {"random_bits", (PyCFunction)(void (*)(void))py_random_bits, METH_FASTCALL,
     "random_bits(keys, shape, bit_width): JAX's partitionable threefry bits for every key of "
     "uint32[..., 2] `keys`."},
    {"random_split", (PyCFunction)(void (*)(void))py_random_split, METH_FASTCALL,
     "random_split(keys, shape): JAX's partitionable threefry split of every key."},
    {"random_fold_in", (PyCFunction)(void (*)(void))py_random_fold_in, METH_FASTCALL,
     "random_fold_in(keys, msgs): threefry of each key over the counter (0, msg)."},
    {"random_seed", py_random_seed, METH_O,
     "random_seed(seeds): threefry keys uint32[..., 2] from integer seeds."},
    {NULL, NULL, 0, NULL}};

int pb_register_random(PyObject *m) { return PyModule_AddFunctions(m, methods); }
