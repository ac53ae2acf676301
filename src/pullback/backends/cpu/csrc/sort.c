/* Sorting kernels: sort (one or several operands, lexicographic over the first num_keys),
 * argsort and top_k, all along one axis.
 *
 * Every element becomes an unsigned key whose unsigned order is the wanted order, and rows are
 * sorted by a stable radix sort on those keys, 8 bits per digit: most significant digit first
 * while a part of the row is larger than the caches (one scatter pass each, into 256 buckets),
 * then least significant digit first within each bucket, in cache. A digit that is the same
 * for a whole part is skipped. The buckets of a long row's first split are sorted in parallel.
 * On AVX-512 machines, long rows of one 32- or 64-bit operand take a vector quicksort instead
 * (sort_avx512.h), made exact for the tie of -0.0 with 0.0 and for NaN payloads.
 * Stability makes the multi-key sort simple: sort the permutation by the last key first, then
 * by each earlier key. Descending order flips the key bits, which keeps equal keys in input
 * order.
 *
 * Two key orders:
 *   SORT  (lax.sort): -0.0 == 0.0 and every NaN (any sign or payload) equals every other NaN and
 *         sorts after +inf; complex compares real parts, then imaginary parts, each this way.
 *   TOTAL (lax.top_k): IEEE totalOrder: -NaN < -inf < ... < -0.0 < 0.0 < ... < +inf < +NaN.
 *
 * Rows are walked with pb_iterate over the shape without the sorted axis (a row per element of
 * that space); rows run in parallel when there are enough of them, each thread with its own
 * scratch. */
#include "kernel_abi.h"
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum { KEY_SORT, KEY_TOTAL };

#define SMALL_ROW 16          /* insertion sort at or below this many elements */
#define LSD_ROW 4096          /* parts at or below this many elements sort LSD, in cache */
#define SORT_GRAIN 32768      /* elements per thread below which work is not split */

/* ---- keys ---- */

static inline uint8_t key_bool(npy_bool v, int mode) { (void)mode; return v != 0; }
static inline uint8_t key_i8(int8_t v, int mode) { (void)mode; return (uint8_t)v ^ 0x80u; }
static inline uint16_t key_i16(int16_t v, int mode) { (void)mode; return (uint16_t)v ^ 0x8000u; }
static inline uint32_t key_i32(int32_t v, int mode) { (void)mode; return (uint32_t)v ^ 0x80000000u; }
static inline uint64_t key_i64(int64_t v, int mode) {
  (void)mode;
  return (uint64_t)v ^ 0x8000000000000000ull;
}
static inline uint8_t key_u8(uint8_t v, int mode) { (void)mode; return v; }
static inline uint16_t key_u16(uint16_t v, int mode) { (void)mode; return v; }
static inline uint32_t key_u32(uint32_t v, int mode) { (void)mode; return v; }
static inline uint64_t key_u64(uint64_t v, int mode) { (void)mode; return v; }

/* Floats from their bits: in SORT mode NaNs become one quiet NaN and -0.0 becomes 0.0; then
 * negative values have all bits flipped and positive ones their sign bit set, which makes the
 * unsigned order the numeric one. */
#define FLOAT_KEY(NAME, T, KT, SIGN, INF, QNAN)                                                   \
  static inline KT NAME(T v, int mode) {                                                         \
    KT u;                                                                                        \
    memcpy(&u, &v, sizeof(KT));                                                                  \
    if (mode == KEY_SORT) {                                                                      \
      KT a = u & (KT)~(KT)(SIGN);                                                                \
      u = a > (KT)(INF) ? (KT)(QNAN) : a == 0 ? (KT)0 : u;                                       \
    }                                                                                            \
    return u ^ ((u & (KT)(SIGN)) ? (KT)~(KT)0 : (KT)(SIGN));                                     \
  }
FLOAT_KEY(key_f16, pb_f16, uint16_t, 0x8000u, 0x7c00u, 0x7e00u)
FLOAT_KEY(key_bf16, pb_bf16, uint16_t, 0x8000u, 0x7f80u, 0x7fc0u)
FLOAT_KEY(key_f32, float, uint32_t, 0x80000000u, 0x7f800000u, 0x7fc00000u)
FLOAT_KEY(key_f64, double, uint64_t, 0x8000000000000000ull, 0x7ff0000000000000ull,
          0x7ff8000000000000ull)

/* (key, index) pairs: what a permutation is sorted as */
typedef struct { uint8_t k; uint32_t i; } pair_u8;
typedef struct { uint16_t k; uint32_t i; } pair_u16;
typedef struct { uint32_t k; uint32_t i; } pair_u32;
typedef struct { uint64_t k; uint32_t i; } pair_u64;

/* ---- the stable radix sort, for items of any kind ----
 * KEYOF(item) gives the item's key; it may use the functions' `mode` and `f` (bits to flip). */
#define DIGIT(k, b) ((unsigned)((k) >> (8 * (b))) & 0xffu)
#define RADIX(NAME, ITEM, KT, KEYOF)                                                              \
  static void NAME##_small(ITEM *a, npy_intp n, int mode, KT f) {                                \
    for (npy_intp i = 1; i < n; ++i) {                                                           \
      ITEM v = a[i];                                                                             \
      KT kv = KEYOF(v);                                                                          \
      npy_intp j = i;                                                                            \
      for (; j > 0 && (KT)(KEYOF(a[j - 1])) > kv; --j) a[j] = a[j - 1];                          \
      a[j] = v;                                                                                  \
    }                                                                                            \
  }                                                                                              \
  /* digits top..0, least significant first; returns the buffer holding the result */           \
  static ITEM *NAME##_lsd(ITEM *a, ITEM *t, npy_intp n, int top, int mode, KT f) {               \
    uint32_t cnt[sizeof(KT)][256];                                                               \
    memset(cnt, 0, sizeof(cnt[0]) * (size_t)(top + 1));                                          \
    for (npy_intp i = 0; i < n; ++i) {                                                           \
      KT k = KEYOF(a[i]);                                                                        \
      for (int b = 0; b <= top; ++b) cnt[b][DIGIT(k, b)]++;                                      \
    }                                                                                            \
    const KT k0 = KEYOF(a[0]);                                                                   \
    for (int b = 0; b <= top; ++b) {                                                             \
      uint32_t *c = cnt[b];                                                                      \
      if (c[DIGIT(k0, b)] == (uint32_t)n) continue; /* one digit value: nothing moves */         \
      uint32_t sum = 0;                                                                          \
      for (int d = 0; d < 256; ++d) { uint32_t s = c[d]; c[d] = sum; sum += s; }                 \
      for (npy_intp i = 0; i < n; ++i) { ITEM v = a[i]; t[c[DIGIT(KEYOF(v), b)]++] = v; }        \
      ITEM *s = a; a = t; t = s;                                                                 \
    }                                                                                            \
    return a;                                                                                    \
  }                                                                                              \
  /* digits top..0, most significant first while a part is large; result in the returned      \
   * buffer (a or t) */                                                                          \
  static ITEM *NAME##_msd(ITEM *a, ITEM *t, npy_intp n, int top, int mode, KT f, int threads) {  \
    if (n <= SMALL_ROW) { NAME##_small(a, n, mode, f); return a; }                               \
    if (top < 0) return a; /* every digit consumed: the keys are equal */                        \
    if (n <= LSD_ROW) return NAME##_lsd(a, t, n, top, mode, f);                                  \
    uint32_t cnt[256] = {0}, start[257];                                                         \
    for (npy_intp i = 0; i < n; ++i) cnt[DIGIT(KEYOF(a[i]), top)]++;                             \
    if (cnt[DIGIT(KEYOF(a[0]), top)] == (uint32_t)n)                                             \
      return NAME##_msd(a, t, n, top - 1, mode, f, threads);                                     \
    start[0] = 0;                                                                                \
    for (int d = 0; d < 256; ++d) { start[d + 1] = start[d] + cnt[d]; cnt[d] = start[d]; }       \
    for (npy_intp i = 0; i < n; ++i) { ITEM v = a[i]; t[cnt[DIGIT(KEYOF(v), top)]++] = v; }      \
    /* buckets are independent: with threads, each is sorted by one of them */                  \
    PB_OMP_FOR_BUCKETS(threads)                                                                  \
    for (int d = 0; d < 256; ++d) {                                                              \
      npy_intp s = start[d], m = (npy_intp)start[d + 1] - s;                                     \
      if (m == 0) continue;                                                                      \
      ITEM *r = NAME##_msd(t + s, a + s, m, top - 1, mode, f, 1);                                \
      if (r != t + s) memcpy(t + s, r, sizeof(ITEM) * (size_t)m);                                \
    }                                                                                            \
    return t;                                                                                    \
  }

#ifdef _OPENMP
#define PB_PRAGMA(x) _Pragma(#x)
#define PB_OMP_FOR_BUCKETS(threads) \
  PB_PRAGMA(omp parallel for num_threads(threads) schedule(dynamic) if ((threads) > 1))
#else
#define PB_OMP_FOR_BUCKETS(threads)
#endif

/* Pairs carry their key; values compute theirs (so sorted values keep their exact bits). */
#define PAIR_KEY(it) ((it).k)
RADIX(pairs8, pair_u8, uint8_t, PAIR_KEY)
RADIX(pairs16, pair_u16, uint16_t, PAIR_KEY)
RADIX(pairs32, pair_u32, uint32_t, PAIR_KEY)
RADIX(pairs64, pair_u64, uint64_t, PAIR_KEY)

/* Sorts n pairs in a (scratch t); returns the buffer that holds the result. */
typedef void *(*pairs_fn)(void *a, npy_intp n, void *t, int threads);
#define PAIRS_ENTRY(W)                                                                            \
  static void *sort_pairs##W(void *a, npy_intp n, void *t, int threads) {                        \
    return pairs##W##_msd((pair_u##W *)a, (pair_u##W *)t, n, W / 8 - 1, 0, 0, threads);         \
  }
PAIRS_ENTRY(8) PAIRS_ENTRY(16) PAIRS_ENTRY(32) PAIRS_ENTRY(64)

/* items[i] = (key(x[perm[i]]) ^ flip, perm[i]) (x[i] and i without a perm), for a row of n
 * elements of stride s */
typedef void (*key_fn)(const char *x, npy_intp s, const uint32_t *perm, npy_intp n, void *items,
                       uint64_t flip, int mode);
/* Sorts n values in a (scratch t); returns the buffer that holds the result. */
typedef char *(*values_fn)(char *a, npy_intp n, char *t, uint64_t flip, int mode, int threads);

#define PER_DTYPE(GEN)                                                                            \
  GEN(bool, npy_bool, uint8_t, 8) GEN(i8, int8_t, uint8_t, 8) GEN(i16, int16_t, uint16_t, 16)    \
  GEN(i32, int32_t, uint32_t, 32) GEN(i64, int64_t, uint64_t, 64) GEN(u8, uint8_t, uint8_t, 8)   \
  GEN(u16, uint16_t, uint16_t, 16) GEN(u32, uint32_t, uint32_t, 32)                              \
  GEN(u64, uint64_t, uint64_t, 64) GEN(f16, pb_f16, uint16_t, 16)                                \
  GEN(bf16, pb_bf16, uint16_t, 16) GEN(f32, float, uint32_t, 32) GEN(f64, double, uint64_t, 64)

#define GEN_KERNELS(SUF, T, KT, W)                                                                \
  static void keys_##SUF(const char *x, npy_intp s, const uint32_t *perm, npy_intp n,            \
                         void *items, uint64_t flip, int mode) {                                 \
    pair_u##W *p = (pair_u##W *)items;                                                           \
    const KT f = (KT)flip;                                                                       \
    for (npy_intp i = 0; i < n; ++i) {                                                           \
      uint32_t j = perm ? perm[i] : (uint32_t)i;                                                 \
      p[i].k = key_##SUF(*(const T *)(x + (npy_intp)j * s), mode) ^ f;                           \
      p[i].i = j;                                                                                \
    }                                                                                            \
  }                                                                                              \
  RADIX(vals_##SUF, T, KT, VALUE_KEY_##SUF)                                                      \
  static char *values_##SUF(char *a, npy_intp n, char *t, uint64_t flip, int mode, int threads) { \
    return (char *)vals_##SUF##_msd((T *)a, (T *)t, n, (int)sizeof(KT) - 1, mode, (KT)flip,      \
                                    threads);                                                    \
  }
#define VALUE_KEY_bool(v) ((uint8_t)(key_bool(v, mode) ^ f))
#define VALUE_KEY_i8(v) ((uint8_t)(key_i8(v, mode) ^ f))
#define VALUE_KEY_i16(v) ((uint16_t)(key_i16(v, mode) ^ f))
#define VALUE_KEY_i32(v) (key_i32(v, mode) ^ f)
#define VALUE_KEY_i64(v) (key_i64(v, mode) ^ f)
#define VALUE_KEY_u8(v) ((uint8_t)(key_u8(v, mode) ^ f))
#define VALUE_KEY_u16(v) ((uint16_t)(key_u16(v, mode) ^ f))
#define VALUE_KEY_u32(v) (key_u32(v, mode) ^ f)
#define VALUE_KEY_u64(v) (key_u64(v, mode) ^ f)
#define VALUE_KEY_f16(v) ((uint16_t)(key_f16(v, mode) ^ f))
#define VALUE_KEY_bf16(v) ((uint16_t)(key_bf16(v, mode) ^ f))
#define VALUE_KEY_f32(v) (key_f32(v, mode) ^ f)
#define VALUE_KEY_f64(v) (key_f64(v, mode) ^ f)
PER_DTYPE(GEN_KERNELS)

#include "sort_avx512.h"

/* ---- single-operand sorts by the vector quicksort (AVX-512 machines) ----
 * Its keys must identify values, so a row's NaNs are taken out (their bits kept, in input
 * order, at nans_end[-1], nans_end[-2], ...) and every zero gets 0.0's key while its sign is
 * recorded in input order. Writing the values back from the sorted keys then gives exactly the
 * stable sort's result: NaNs last (first when descending) in input order, and the run of zeros
 * with its signs in input order. */
typedef npy_intp (*vkeys_fn)(const char *x, npy_intp s, npy_intp n, void *keys, void *nans_end,
                             uint8_t *zsign, uint64_t flip);
typedef void (*vvals_fn)(const void *keys, npy_intp m, const void *nans_end, npy_intp nn,
                         const uint8_t *zsign, uint64_t flip, char *o, npy_intp so);
#define VEC_FLOAT(SUF, T, KT, SIGN, INF)                                                          \
  static npy_intp vkeys_##SUF(const char *x, npy_intp s, npy_intp n, void *keys, void *nans_end, \
                              uint8_t *zsign, uint64_t flip) {                                   \
    KT *k = (KT *)keys, *nan = (KT *)nans_end;                                                   \
    const KT f = (KT)flip;                                                                       \
    npy_intp m = 0, z = 0;                                                                       \
    for (npy_intp i = 0; i < n; ++i, x += s) {                                                   \
      KT u;                                                                                      \
      memcpy(&u, x, sizeof(KT));                                                                 \
      KT a = u & (KT)~(KT)(SIGN);                                                                \
      if (a > (KT)(INF)) { *--nan = u; continue; }                                               \
      if (a == 0) { zsign[z++] = u != 0; u = 0; }                                                \
      k[m++] = (u ^ ((u & (KT)(SIGN)) ? (KT)~(KT)0 : (KT)(SIGN))) ^ f;                           \
    }                                                                                            \
    return m;                                                                                    \
  }                                                                                              \
  static void vvals_##SUF(const void *keys, npy_intp m, const void *nans_end, npy_intp nn,       \
                          const uint8_t *zsign, uint64_t flip, char *o, npy_intp so) {           \
    const KT *k = (const KT *)keys, *nan = (const KT *)nans_end;                                 \
    const KT f = (KT)flip;                                                                       \
    if (flip) for (npy_intp j = 0; j < nn; ++j, o += so) memcpy(o, &nan[-1 - j], sizeof(KT));   \
    for (npy_intp i = 0, z = 0; i < m; ++i, o += so) {                                           \
      KT v = k[i] ^ f;                                                                           \
      KT u = (v & (KT)(SIGN)) ? (KT)(v ^ (KT)(SIGN)) : (KT)~v;                                   \
      if (u == 0) u = zsign[z++] ? (KT)(SIGN) : 0;                                               \
      memcpy(o, &u, sizeof(KT));                                                                 \
    }                                                                                            \
    if (!flip) for (npy_intp j = 0; j < nn; ++j, o += so) memcpy(o, &nan[-1 - j], sizeof(KT));  \
  }
#define VEC_INT(SUF, T, KT, BIAS)                                                                 \
  static npy_intp vkeys_##SUF(const char *x, npy_intp s, npy_intp n, void *keys, void *nans_end, \
                              uint8_t *zsign, uint64_t flip) {                                   \
    KT *k = (KT *)keys;                                                                          \
    const KT f = (KT)flip ^ (KT)(BIAS);                                                          \
    for (npy_intp i = 0; i < n; ++i, x += s) k[i] = (KT)(*(const T *)x) ^ f;                     \
    return n;                                                                                    \
  }                                                                                              \
  static void vvals_##SUF(const void *keys, npy_intp m, const void *nans_end, npy_intp nn,       \
                          const uint8_t *zsign, uint64_t flip, char *o, npy_intp so) {           \
    const KT *k = (const KT *)keys;                                                              \
    const KT f = (KT)flip ^ (KT)(BIAS);                                                          \
    for (npy_intp i = 0; i < m; ++i, o += so) *(T *)o = (T)(k[i] ^ f);                           \
  }
VEC_FLOAT(f32, float, uint32_t, 0x80000000u, 0x7f800000u)
VEC_FLOAT(f64, double, uint64_t, 0x8000000000000000ull, 0x7ff0000000000000ull)
VEC_INT(i32, int32_t, uint32_t, 0x80000000u)
VEC_INT(u32, uint32_t, uint32_t, 0)
VEC_INT(i64, int64_t, uint64_t, 0x8000000000000000ull)
VEC_INT(u64, uint64_t, uint64_t, 0)

#if PB_HAVE_AVX512_SORT
static void vsort32(void *a, void *t, npy_intp n, int depth) {
  pb_qsort32((uint32_t *)a, (uint32_t *)t, n, depth);
}
static void vsort64(void *a, void *t, npy_intp n, int depth) {
  pb_qsort64((uint64_t *)a, (uint64_t *)t, n, depth);
}
#define VEC(SUF, W) .vkeys = vkeys_##SUF, .vvals = vvals_##SUF, .vsort = vsort##W
#else
#define VEC(SUF, W) .vkeys = NULL
#endif
#define VEC_MIN_ROW 64 /* shorter rows: the radix sort's insertion and in-cache passes win */

/* Per dtype slot: key width and kernels. Complex sorts by its parts, each a real key. */
typedef struct {
  int width;      /* key bits */
  key_fn keys;
  values_fn values;
  pairs_fn pairs;
  vkeys_fn vkeys; /* the vector quicksort's (32- and 64-bit types; NULL: radix only) */
  vvals_fn vvals;
  void (*vsort)(void *a, void *t, npy_intp n, int depth);
} sort_dtype;
#define ROW(SLOT, SUF, W, ...) [SLOT] = {W, keys_##SUF, values_##SUF, sort_pairs##W, __VA_ARGS__}
static const sort_dtype sort_dtypes[PB_NDT] = {
  ROW(PB_BOOL, bool, 8, NULL), ROW(PB_I8, i8, 8, NULL), ROW(PB_I16, i16, 16, NULL),
  ROW(PB_I32, i32, 32, VEC(i32, 32)), ROW(PB_I64, i64, 64, VEC(i64, 64)),
  ROW(PB_U8, u8, 8, NULL), ROW(PB_U16, u16, 16, NULL), ROW(PB_U32, u32, 32, VEC(u32, 32)),
  ROW(PB_U64, u64, 64, VEC(u64, 64)), ROW(PB_F16, f16, 16, NULL), ROW(PB_BF16, bf16, 16, NULL),
  ROW(PB_F32, f32, 32, VEC(f32, 32)), ROW(PB_F64, f64, 64, VEC(f64, 64)),
  ROW(PB_C64, f32, 32, NULL), ROW(PB_C128, f64, 64, NULL)};

/* ---- per-thread scratch ---- */

#define PAIR_BYTES 16 /* the largest pair: a 64-bit key and its index, padded */

typedef struct {
  char *buf[2];   /* n items each */
  uint32_t *perm; /* a row's current permutation */
} scratch;

typedef struct {
  int nthreads;
  scratch *s;
} scratch_set;

/* Two buffers of n items of `item` bytes and a permutation of n, per thread, from the call's
 * scratch (freed by the caller). -1 when out of memory. */
static int scratch_alloc(scratch_set *ss, int nthreads, npy_intp n, npy_intp item,
                         pb_kernel_ctx *ctx) {
  ss->nthreads = nthreads;
  ss->s = ctx->scratch(ctx, sizeof(scratch) * (size_t)nthreads);
  if (!ss->s) return -1;
  const size_t m = (size_t)(n > 0 ? n : 1);
  for (int t = 0; t < nthreads; ++t) {
    scratch *s = &ss->s[t];
    s->buf[0] = ctx->scratch(ctx, m * (size_t)item);
    s->buf[1] = ctx->scratch(ctx, m * (size_t)item);
    s->perm = ctx->scratch(ctx, m * sizeof(uint32_t));
    if (!s->buf[0] || !s->buf[1] || !s->perm) return -1;
  }
  return 0;
}

static scratch *my_scratch(const scratch_set *ss) {
#ifdef _OPENMP
  int t = omp_get_thread_num();
  return &ss->s[t < ss->nthreads ? t : 0];
#else
  return &ss->s[0];
#endif
}

/* ---- row passes, run by pb_iterate over the rows (one row per element of the outer space) ---- */

typedef struct {
  npy_intp n;              /* row length */
  npy_intp s[3];           /* each operand's stride along the sorted axis */
  npy_intp item;           /* element size of the copied operand */
  npy_intp k;              /* top_k: how many to keep */
  uint64_t flip;           /* all ones for descending */
  int mode;
  bool first;              /* the first key pass: the perm is the identity */
  int inner_threads;       /* threads for one row (when rows are not split) */
  const sort_dtype *dt;
  npy_intp part;           /* byte offset of the key within an element (complex parts) */
  scratch_set *ss;
} row_params;

static inline void copy_item(char *dst, const char *src, npy_intp item) {
  switch (item) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, 16); break;
  }
}

/* The index of item i of a sorted pair buffer, whatever the key width. */
static inline uint32_t pair_index(const void *items, int width, npy_intp i) {
  switch (width) {
    case 8: return ((const pair_u8 *)items)[i].i;
    case 16: return ((const pair_u16 *)items)[i].i;
    case 32: return ((const pair_u32 *)items)[i].i;
    default: return ((const pair_u64 *)items)[i].i;
  }
}

static bool pb_vector_sort_usable(void) {
#if PB_HAVE_AVX512_SORT
  return pb_avx512_usable();
#else
  return false;
#endif
}

/* (x, out): one operand sorted by its own values (by the vector quicksort where it can) */
static void pass_values(char **p, const npy_intp *s, npy_intp rows, const void *prm) {
  const row_params *rp = prm;
  scratch *sc = my_scratch(rp->ss);
  const npy_intp n = rp->n, item = rp->item;
  const bool vector = rp->dt->vkeys && n > VEC_MIN_ROW && pb_vector_sort_usable();
  int depth = 8; /* quicksort levels before the radix fallback: about 2 log2(n) */
  for (npy_intp m = n; m > 1; m >>= 1) depth += 2;
  for (npy_intp r = 0; r < rows; ++r) {
    const char *x = p[0] + r * s[0];
    char *o = p[1] + r * s[1], *a = sc->buf[0];
    if (vector) {
      char *nans_end = sc->buf[1] + n * item;
      npy_intp m = rp->dt->vkeys(x, rp->s[0], n, a, nans_end, (uint8_t *)sc->perm, rp->flip);
      if (m > 0) rp->dt->vsort(a, sc->buf[1], m, depth);
      rp->dt->vvals(a, m, nans_end, n - m, (const uint8_t *)sc->perm, rp->flip, o, rp->s[1]);
      continue;
    }
    if (rp->s[0] == item) memcpy(a, x, (size_t)(n * item));
    else for (npy_intp i = 0; i < n; ++i) copy_item(a + i * item, x + i * rp->s[0], item);
    char *res = rp->dt->values(a, n, sc->buf[1], rp->flip, rp->mode, rp->inner_threads);
    if (rp->s[1] == item) memcpy(o, res, (size_t)(n * item));
    else for (npy_intp i = 0; i < n; ++i) copy_item(o + i * rp->s[1], res + i * item, item);
  }
}

/* (key operand, perm): the row's permutation, stably re-sorted by this key */
static void pass_key(char **p, const npy_intp *s, npy_intp rows, const void *prm) {
  const row_params *rp = prm;
  scratch *sc = my_scratch(rp->ss);
  const npy_intp n = rp->n;
  for (npy_intp r = 0; r < rows; ++r) {
    const char *x = p[0] + r * s[0] + rp->part;
    char *perm = p[1] + r * s[1];
    const uint32_t *q = NULL;
    if (!rp->first) {
      for (npy_intp i = 0; i < n; ++i) sc->perm[i] = *(const uint32_t *)(perm + i * rp->s[1]);
      q = sc->perm;
    }
    rp->dt->keys(x, rp->s[0], q, n, sc->buf[0], rp->flip, rp->mode);
    void *res = rp->dt->pairs(sc->buf[0], n, sc->buf[1], rp->inner_threads);
    for (npy_intp i = 0; i < n; ++i)
      *(uint32_t *)(perm + i * rp->s[1]) = pair_index(res, rp->dt->width, i);
  }
}

/* (x, perm, out): out = x permuted along the row */
static void pass_gather(char **p, const npy_intp *s, npy_intp rows, const void *prm) {
  const row_params *rp = prm;
  const npy_intp n = rp->n, item = rp->item;
  for (npy_intp r = 0; r < rows; ++r) {
    const char *x = p[0] + r * s[0], *perm = p[1] + r * s[1];
    char *o = p[2] + r * s[2];
    for (npy_intp i = 0; i < n; ++i) {
      npy_intp j = *(const uint32_t *)(perm + i * rp->s[1]);
      copy_item(o + i * rp->s[2], x + j * rp->s[0], item);
    }
  }
}

/* (x, values, indices): the k first of the row in descending total order, ties by index */
static void pass_top_k(char **p, const npy_intp *s, npy_intp rows, const void *prm) {
  const row_params *rp = prm;
  scratch *sc = my_scratch(rp->ss);
  const npy_intp n = rp->n, item = rp->item;
  for (npy_intp r = 0; r < rows; ++r) {
    const char *x = p[0] + r * s[0];
    char *v = p[1] + r * s[1], *ix = p[2] + r * s[2];
    rp->dt->keys(x, rp->s[0], NULL, n, sc->buf[0], rp->flip, rp->mode);
    void *res = rp->dt->pairs(sc->buf[0], n, sc->buf[1], rp->inner_threads);
    for (npy_intp i = 0; i < rp->k; ++i) {
      uint32_t j = pair_index(res, rp->dt->width, i);
      copy_item(v + i * rp->s[1], x + (npy_intp)j * rp->s[0], item);
      *(int32_t *)(ix + i * rp->s[2]) = (int32_t)j;
    }
  }
}

/* ---- driving the passes ---- */

/* Each operand's layout as pb_iterate operands over the shape without the sorted axis. */
typedef struct {
  int ndim;                                    /* of the outer space */
  npy_intp shape[PB_MAXDIMS];
  npy_intp strides[3 * PB_MAXDIMS];            /* op-major */
  char *base[3];
  int threads;                                 /* over rows */
  int inner_threads;                           /* within a row, when rows are not split */
} rows_space;

static void rows_operand(rows_space *rs, int op, char *base, const int64_t *strides, int ndim,
                         int axis) {
  rs->base[op] = base;
  for (int d = 0, k = 0; d < ndim; ++d)
    if (d != axis) rs->strides[op * rs->ndim + k++] = strides[d];
}

static void rows_run(rows_space *rs, int nop, pb_loop_fn fn, const row_params *rp) {
  pb_iterate(rs->ndim, rs->shape, nop, rs->base, rs->strides, fn, rp, rs->threads);
}

static void rows_init(rows_space *rs, int ndim, const int64_t *shape, int axis,
                      const pb_kernel_ctx *ctx) {
  rs->ndim = ndim - 1;
  npy_intp total = 1, rows = 1;
  for (int d = 0, k = 0; d < ndim; ++d) {
    total *= shape[d];
    if (d != axis) { rs->shape[k++] = shape[d]; rows *= shape[d]; }
  }
  int t = pb_kernel_threads(ctx, total, SORT_GRAIN);
  /* split the rows when there are enough of them, else the buckets of each row */
  rs->threads = rows >= 2 * t ? t : 1;
  rs->inner_threads = rs->threads == 1 ? t : 1;
}

/* ---- the kernels (pb_kernel.h). Their primitives (primitives/sort.py) check every operand
 * and parameter when they are bound; the kernels check again what memory safety needs. ---- */

/* the operand's sort dtype, or -1 */
static int sort_slot(const pb_operand *x, bool allow_complex) {
  const int slot = x->dtype;
  if (slot < 0 || slot >= PB_NDT || (!allow_complex && (slot == PB_C64 || slot == PB_C128)))
    return -1;
  return slot;
}

static int bad(pb_kernel_ctx *ctx, const char *what) {
  return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "%s", what);
}

/* Checks axis and the row length; the axis or -1. */
static int row_axis(const pb_operand *x, int32_t axis, pb_kernel_ctx *ctx) {
  if (axis < 0 || axis >= x->ndim) {
    bad(ctx, "the axis is out of range");
    return -1;
  }
  if ((uint64_t)x->shape[axis] > UINT32_MAX) {
    pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "rows of more than 2**32 - 1 elements are not "
                   "supported");
    return -1;
  }
  return axis;
}

/* Fills `perm` (uint32, strides pstr, x's shape) with the stable order of the rows by the keys
 * ops[0..nkeys), the first key primary. */
static void sort_perm(const pb_operand *ops, int nkeys, int axis, char *perm,
                      const int64_t *pstr, uint64_t flip, scratch_set *ss,
                      const pb_kernel_ctx *ctx) {
  const int ndim = ops[0].ndim;
  bool first = true;
  for (int j = nkeys - 1; j >= 0; --j) {
    const int slot = ops[j].dtype;
    const bool cplx = slot == PB_C64 || slot == PB_C128;
    /* LSD over keys: a complex key is its imaginary part, then its real part */
    for (int part = cplx ? 1 : 0; part >= 0; --part) {
      rows_space rs;
      rows_init(&rs, ndim, ops[j].shape, axis, ctx);
      rows_operand(&rs, 0, ops[j].data, ops[j].strides, ndim, axis);
      rows_operand(&rs, 1, perm, pstr, ndim, axis);
      row_params rp = {.n = ops[j].shape[axis], .s = {ops[j].strides[axis], pstr[axis]},
                       .flip = flip, .mode = KEY_SORT, .first = first,
                       .inner_threads = rs.inner_threads, .dt = &sort_dtypes[slot],
                       .part = part * ops[j].itemsize / 2, .ss = ss};
      rows_run(&rs, 2, pass_key, &rp);
      first = false;
    }
  }
}

/* C-contiguous byte strides of `shape` for `item`-byte elements. */
static void c_strides(int ndim, const int64_t *shape, int64_t item, int64_t *out) {
  for (int d = ndim - 1; d >= 0; --d) {
    out[d] = item;
    item *= shape[d] > 0 ? shape[d] : 1;
  }
}

/* sort: the n operands sorted together along `dimension` by the first num_keys,
 * lexicographically; stable; NaN last (first when descending) */
typedef struct { int32_t dimension, num_keys, descending; } sort_params;

static int sort_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                       const void *params, pb_kernel_ctx *ctx) {
  const sort_params *P = params;
  if (nin < 1 || nout != nin || P->num_keys < 1 || P->num_keys > nin)
    return bad(ctx, "expected n >= 1 operands, as many outputs and 1 <= num_keys <= n");
  for (int i = 0; i < nin; ++i)
    if (sort_slot(&ins[i], true) < 0 || !pb_operand_same_shape(&ins[i], &ins[0]) ||
        !pb_operand_same_shape(&outs[i], &ins[0]) || outs[i].dtype != ins[i].dtype ||
        outs[i].itemsize != ins[i].itemsize)
      return bad(ctx, "the operands must have one shape and sortable dtypes, the outputs theirs");
  const int ndim = ins[0].ndim;
  const int axis = row_axis(&ins[0], P->dimension, ctx);
  if (axis < 0) return ctx->error;
  if (pb_operand_size(&ins[0]) == 0) return 0;
  const npy_intp n = ins[0].shape[axis];
  const uint64_t flip = P->descending ? ~(uint64_t)0 : 0;
  const int slot0 = ins[0].dtype;
  rows_space rs;
  rows_init(&rs, ndim, ins[0].shape, axis, ctx);
  const bool by_value = nin == 1 && slot0 != PB_C64 && slot0 != PB_C128;
  scratch_set ss;
  if (scratch_alloc(&ss, rs.threads, n, by_value ? ins[0].itemsize : PAIR_BYTES, ctx) < 0)
    return PB_KERNEL_ENOMEM;
  if (by_value) { /* one operand: sort its values directly */
    rows_operand(&rs, 0, ins[0].data, ins[0].strides, ndim, axis);
    rows_operand(&rs, 1, outs[0].data, outs[0].strides, ndim, axis);
    row_params rp = {.n = n, .s = {ins[0].strides[axis], outs[0].strides[axis]},
                     .item = ins[0].itemsize, .flip = flip, .mode = KEY_SORT,
                     .inner_threads = rs.inner_threads, .dt = &sort_dtypes[slot0], .ss = &ss};
    rows_run(&rs, 2, pass_values, &rp);
    return 0;
  }
  /* several operands or a complex key: sort a permutation by the keys, then gather */
  int64_t pstr[PB_MAXDIMS];
  c_strides(ndim, ins[0].shape, sizeof(uint32_t), pstr);
  char *perm = ctx->scratch(ctx, (size_t)pb_operand_size(&ins[0]) * sizeof(uint32_t));
  if (!perm) return PB_KERNEL_ENOMEM;
  sort_perm(ins, P->num_keys, axis, perm, pstr, flip, &ss, ctx);
  for (int i = 0; i < nin; ++i) {
    rows_space g;
    rows_init(&g, ndim, ins[0].shape, axis, ctx);
    rows_operand(&g, 0, ins[i].data, ins[i].strides, ndim, axis);
    rows_operand(&g, 1, perm, pstr, ndim, axis);
    rows_operand(&g, 2, outs[i].data, outs[i].strides, ndim, axis);
    row_params rp = {.n = n, .s = {ins[i].strides[axis], pstr[axis], outs[i].strides[axis]},
                     .item = ins[i].itemsize};
    rows_run(&g, 3, pass_gather, &rp);
  }
  return 0;
}

/* argsort: indices (the output's integer dtype) that stably sort the operand along dimension */
typedef struct { int32_t dimension, descending; } argsort_params;

static int argsort_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                          const void *params, pb_kernel_ctx *ctx) {
  const argsort_params *P = params;
  const pb_operand *x = &ins[0], *o = &outs[0];
  const int islot = o->dtype;
  if (sort_slot(x, true) < 0 || !pb_operand_same_shape(x, o) || islot < PB_I8 || islot > PB_U64)
    return bad(ctx, "expected a sortable operand and an integer output of its shape");
  const int ndim = x->ndim;
  const int axis = row_axis(x, P->dimension, ctx);
  if (axis < 0) return ctx->error;
  const npy_intp n = x->shape[axis], total = pb_operand_size(x);
  if (total == 0) return 0;
  rows_space rs;
  rows_init(&rs, ndim, x->shape, axis, ctx);
  scratch_set ss;
  if (scratch_alloc(&ss, rs.threads, n, PAIR_BYTES, ctx) < 0) return PB_KERNEL_ENOMEM;
  const uint64_t flip = P->descending ? ~(uint64_t)0 : 0;
  /* the permutation is built in place when the index dtype is 32-bit and holds every index */
  if (islot == PB_U32 || (islot == PB_I32 && n <= INT32_MAX)) {
    sort_perm(x, 1, axis, o->data, o->strides, flip, &ss, ctx);
    return 0;
  }
  int64_t pstr[PB_MAXDIMS];
  c_strides(ndim, x->shape, sizeof(uint32_t), pstr);
  uint32_t *q = ctx->scratch(ctx, (size_t)total * sizeof(uint32_t));
  if (!q) return PB_KERNEL_ENOMEM;
  sort_perm(x, 1, axis, (char *)q, pstr, flip, &ss, ctx);
  /* widen or narrow into the output, walked in C order over its strides */
  npy_intp idx[PB_MAXDIMS] = {0};
  for (npy_intp i = 0; i < total; ++i) {
    char *dst = o->data;
    for (int d = 0; d < ndim; ++d) dst += idx[d] * o->strides[d];
    switch (islot) {
      case PB_I8: case PB_U8: *(uint8_t *)dst = (uint8_t)q[i]; break;
      case PB_I16: case PB_U16: *(uint16_t *)dst = (uint16_t)q[i]; break;
      case PB_I32: case PB_U32: *(uint32_t *)dst = q[i]; break;
      default: *(uint64_t *)dst = q[i]; break; /* int64 and uint64 alike */
    }
    for (int d = ndim - 1; d >= 0 && ++idx[d] == x->shape[d]; --d) idx[d] = 0;
  }
  return 0;
}

/* top_k: (values, int32 indices) of the k largest along axis (k: the outputs' size there) in
 * IEEE total order (+NaN first, -NaN last), largest first, equal values by lower index */
typedef struct { int32_t axis; } top_k_params;

static int top_k_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,
                        const void *params, pb_kernel_ctx *ctx) {
  const top_k_params *P = params;
  const pb_operand *x = &ins[0], *v = &outs[0], *ix = &outs[1];
  const int slot = sort_slot(x, false);
  const int ndim = x->ndim;
  const int axis = row_axis(x, P->axis, ctx);
  if (axis < 0) return ctx->error;
  bool ok = slot >= 0 && v->dtype == slot && v->itemsize == x->itemsize && ix->dtype == PB_I32 &&
            pb_operand_same_shape(v, ix) && v->ndim == ndim;
  for (int d = 0; ok && d < ndim; ++d)
    ok = d == axis ? v->shape[d] <= x->shape[d] : v->shape[d] == x->shape[d];
  if (!ok)
    return bad(ctx, "expected a real operand, outputs of its dtype and int32 of its shape with "
               "k <= n along the axis");
  const npy_intp n = x->shape[axis], k = v->shape[axis];
  if (pb_operand_size(v) == 0) return 0;
  rows_space rs;
  rows_init(&rs, ndim, x->shape, axis, ctx);
  scratch_set ss;
  if (scratch_alloc(&ss, rs.threads, n, PAIR_BYTES, ctx) < 0) return PB_KERNEL_ENOMEM;
  rows_operand(&rs, 0, x->data, x->strides, ndim, axis);
  rows_operand(&rs, 1, v->data, v->strides, ndim, axis);
  rows_operand(&rs, 2, ix->data, ix->strides, ndim, axis);
  row_params rp = {.n = n, .s = {x->strides[axis], v->strides[axis], ix->strides[axis]},
                   .item = x->itemsize, .k = k, .flip = ~(uint64_t)0, .mode = KEY_TOTAL,
                   .inner_threads = rs.inner_threads, .dt = &sort_dtypes[slot], .ss = &ss};
  rows_run(&rs, 3, pass_top_k, &rp);
  return 0;
}

static const pb_kernel_def kernels[] = {
  {"sort", sort_kernel, -1, -1, sizeof(sort_params)},
  {"argsort", argsort_kernel, 1, 1, sizeof(argsort_params)},
  {"top_k", top_k_kernel, 1, 2, sizeof(top_k_params)},
};
PB_KERNELS(kernels)

int pb_register_sort(PyObject *m) {
  (void)m;
  pb_bitonic_init();
  return 0;
}
