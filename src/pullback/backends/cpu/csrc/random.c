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
#include "kernel_abi.h"
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

/* ---- the kernels (pb_kernel.h); their primitives (primitives/random_bits.py) check operands
 * when bound, the kernels again what memory safety needs. None takes params. ---- */

static int bad(pb_kernel_ctx *ctx, const char *what) {
  return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "%s", what);
}

static bool is_c_contiguous(const pb_operand *o) {
  if (pb_operand_size(o) == 0) return true; /* no element: any strides */
  int64_t s = o->itemsize;
  for (int d = o->ndim - 1; d >= 0; --d) {
    if (o->shape[d] != 1 && o->strides[d] != s) return false;
    s *= o->shape[d];
  }
  return true;
}

/* Runs tf_loop over ndim-dimensional operands: 4 inputs then 2 outputs, byte strides
 * strides[op * ndim + d]. */
static void run_threefry(int ndim, const npy_intp *shape, char *const *base,
                         const npy_intp *strides, const pb_kernel_ctx *ctx) {
  npy_intp n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  pb_iterate(ndim, shape, 6, base, strides, tf_loop, NULL, pb_kernel_threads(ctx, n, TF_GRAIN));
}

/* threefry2x32(key1, key2, x1, x2) -> (y1, y2): the inputs broadcast to the outputs' shape */
static int threefry_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                           const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *o = &outs[0];
  const int nd = o->ndim;
  npy_intp strides[6 * PB_MAXDIMS];
  char *base[6];
  bool ok = pb_operand_same_shape(&outs[0], &outs[1]) && outs[0].dtype == PB_U32 &&
            outs[1].dtype == PB_U32;
  for (int i = 0; ok && i < 4; ++i)
    ok = ins[i].dtype == PB_U32 &&
         pb_operand_broadcast(&ins[i], nd, o->shape, strides + i * nd) == 0;
  if (!ok) return bad(ctx, "expected uint32 operands that broadcast to the uint32 outputs");
  for (int i = 0; i < 6; ++i) base[i] = i < 4 ? ins[i].data : outs[i - 4].data;
  for (int i = 4; i < 6; ++i)
    for (int d = 0; d < nd; ++d) strides[i * nd + d] = outs[i - 4].strides[d];
  if (pb_operand_size(o) > 0) run_threefry(nd, o->shape, base, strides, ctx);
  return 0;
}

/* ---- key arrays: uint32[..., 2] of any strides ---- */

static bool keys_ok(const pb_operand *k) {
  return k->dtype == PB_U32 && k->ndim >= 1 && k->shape[k->ndim - 1] == 2;
}

/* Byte offset of batch element b (row-major over the first nb dimensions). */
static npy_intp batch_offset(const pb_operand *a, int nb, npy_intp b) {
  npy_intp off = 0;
  for (int d = nb - 1; d >= 0; --d) {
    const npy_intp n = a->shape[d];
    off += (b % n) * a->strides[d];
    b /= n;
  }
  return off;
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
static void gen_all(int mode, const pb_operand *keys, npy_intp nkeys, npy_intp n, char *out,
                    const pb_kernel_ctx *ctx) {
  const int nb = keys->ndim - 1;
  const npy_intp kstride = keys->strides[nb];
  const npy_intp block = n * gen_itemsize[mode];
  const char *kb = keys->data;
  const int threads = pb_kernel_threads(ctx, n, TF_GRAIN);
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

/* random_bits and random_split: out (C-contiguous) = batch + shape (+ (2,) for split), the
 * output's dtype picking the bit width */
static int generate(bool split, const pb_operand *keys, pb_operand *out, pb_kernel_ctx *ctx) {
  const int nb = keys->ndim - 1;
  int mode = split ? GEN_SPLIT : out->dtype == PB_U8 ? GEN_U8 : out->dtype == PB_U16 ? GEN_U16
             : out->dtype == PB_U32 ? GEN_U32 : out->dtype == PB_U64 ? GEN_U64 : -1;
  bool ok = keys_ok(keys) && mode >= 0 && out->ndim >= nb + (split ? 1 : 0) &&
            is_c_contiguous(out) && (!split || (out->dtype == PB_U32 &&
                                                out->shape[out->ndim - 1] == 2));
  for (int d = 0; ok && d < nb; ++d) ok = out->shape[d] == keys->shape[d];
  if (!ok)
    return bad(ctx, "expected uint32[..., 2] keys and a C-contiguous unsigned output of the "
               "keys' batch shape first");
  npy_intp nkeys = 1, n = 1;
  for (int d = 0; d < nb; ++d) nkeys *= keys->shape[d];
  for (int d = nb; d < out->ndim - (split ? 1 : 0); ++d) n *= out->shape[d];
  if (nkeys * n > 0) gen_all(mode, keys, nkeys, n, out->data, ctx);
  return 0;
}

static int random_bits_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                              const void *params, pb_kernel_ctx *ctx) {
  return generate(false, &ins[0], &outs[0], ctx);
}

static int random_split_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                               const void *params, pb_kernel_ctx *ctx) {
  return generate(true, &ins[0], &outs[0], ctx);
}

/* random_fold_in(keys, msgs) -> keys: msgs (uint32) broadcasts to the keys' batch shape */
static int random_fold_in_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                 const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *keys = &ins[0], *msgs = &ins[1], *out = &outs[0];
  const int nb = keys->ndim - 1;
  npy_intp strides[6 * PB_MAXDIMS];
  if (!keys_ok(keys) || msgs->dtype != PB_U32 || !pb_operand_same_shape(keys, out) ||
      out->dtype != PB_U32 || pb_operand_broadcast(msgs, nb, keys->shape, strides + 3 * nb) < 0)
    return bad(ctx, "expected uint32[..., 2] keys, uint32 messages of their batch shape and an "
               "output of the keys' shape");
  /* operands over the batch dims: key word 0, key word 1, counter word 0 (a zero), counter
   * word 1 (msg), out word 0, out word 1 */
  static const uint32_t zero = 0;
  const npy_intp kw = keys->strides[nb], ow = out->strides[nb];
  char *base[6] = {keys->data, (char *)keys->data + kw, (char *)&zero, msgs->data, out->data,
                   (char *)out->data + ow};
  for (int d = 0; d < nb; ++d) {
    strides[0 * nb + d] = strides[1 * nb + d] = keys->strides[d];
    strides[2 * nb + d] = 0;
    strides[4 * nb + d] = strides[5 * nb + d] = out->strides[d];
  }
  if (pb_operand_size(out) > 0) run_threefry(nb, keys->shape, base, strides, ctx);
  return 0;
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
static int random_seed_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                              const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *seeds = &ins[0], *out = &outs[0];
  const int nd = seeds->ndim;
  pb_loop_fn fn = seeds->dtype >= 0 && seeds->dtype < PB_NDT ? seed_loops[seeds->dtype] : NULL;
  bool ok = fn && out->dtype == PB_U32 && out->ndim == nd + 1 && out->shape[nd] == 2;
  for (int d = 0; ok && d < nd; ++d) ok = out->shape[d] == seeds->shape[d];
  if (!ok) return bad(ctx, "expected integer seeds and a uint32 output of their shape + (2,)");
  if (pb_operand_size(out) == 0) return 0;
  char *base[3] = {seeds->data, out->data, (char *)out->data + out->strides[nd]};
  npy_intp strides[3 * PB_MAXDIMS];
  for (int d = 0; d < nd; ++d) {
    strides[d] = seeds->strides[d];
    strides[nd + d] = strides[2 * nd + d] = out->strides[d];
  }
  pb_iterate(nd, seeds->shape, 3, base, strides, fn, NULL, 1);
  return 0;
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
static int uniform_range_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                                const void *params, pb_kernel_ctx *ctx) {
  const pb_operand *o = &outs[0];
  const int slot = ins[0].dtype, ndim = o->ndim;
  pb_loop_fn fn = slot >= 0 && slot < PB_NDT ? range_loops[slot] : NULL;
  npy_intp strides[4 * PB_MAXDIMS];
  bool ok = fn && o->dtype == slot && pb_operand_same_shape(&ins[0], o);
  for (int i = 0; ok && i < 3; ++i)
    ok = ins[i].dtype == slot && (ins[i].ndim == 0 || pb_operand_same_shape(&ins[i], o)) &&
         pb_operand_broadcast(&ins[i], ndim, o->shape, strides + i * ndim) == 0;
  if (!ok)
    return bad(ctx, "expected float operands of one dtype, minval and maxval 0-d or of u's "
               "shape");
  char *base[4] = {ins[0].data, ins[1].data, ins[2].data, o->data};
  for (int d = 0; d < ndim; ++d) strides[3 * ndim + d] = o->strides[d];
  const npy_intp n = pb_operand_size(o);
  if (n > 0) pb_iterate(ndim, o->shape, 4, base, strides, fn, NULL, pb_kernel_threads(ctx, n, 262144));
  return 0;
}

static const pb_kernel_def kernels[] = {
  {"threefry2x32", threefry_kernel, 4, 2, 0},
  {"random_bits", random_bits_kernel, 1, 1, 0},
  {"random_split", random_split_kernel, 1, 1, 0},
  {"random_fold_in", random_fold_in_kernel, 2, 1, 0},
  {"random_seed", random_seed_kernel, 1, 1, 0},
  {"random_uniform_range", uniform_range_kernel, 3, 1, 0},
};
PB_KERNELS(kernels)
