/* Reductions, arg-reductions and cumulative ops: one table-driven mechanism.
 *
 * Every op here is the loop `acc = OP(acc, x)` walked by pb_iterate in the input's memory order,
 * where `acc` is a C-contiguous buffer of the output's shape whose strides are zero along the
 * reduced axes. When the innermost walked axis is reduced the loop folds a run into a scalar
 * (pairwise for float sums, 16 independent lanes otherwise, so it vectorizes); when it is not,
 * it is a vectorized row update. The same table row gives three kernels:
 *   reduce:      operands (x, acc)
 *   cumulative:  operands (x, acc, out): the running acc is also stored to out at every step
 *   arg-reduce:  operands (x, iota, best, idx) for the max/min rows: the first extreme wins
 * float16/bfloat16 accumulate in float32 and round once per stored element.
 *
 * Large work is split into chunks along one axis, chosen from the shape alone: a non-reduced
 * axis when one is long enough (chunks own disjoint outputs, so the result is the serial one),
 * else a reduced axis with a private accumulator per chunk, combined afterwards in a fixed tree
 * order. Results therefore never depend on the thread count or on timing. */
#include "ewise.h"
#include "reduce.h"
#include "schedule.h"
#include "kernel_abi.h"
#ifdef _OPENMP
#include <omp.h>
#endif

enum { RD_SUM, RD_PROD, RD_MAX, RD_MIN, RD_AND, RD_OR, RD_XOR, RD_LOGADDEXP, RD_NOPS };
_Static_assert(RD_SUM == PB_REDUCE_SUM, "schedule.h names reduce_sum's row");

/* ---- element access: halves load to float32 and round on store ---- */
#define LD_SAME(v) (v)
#define ST_SAME(v) (v)
#define LD_F16(v) ((float)(v))
#define ST_F16(v) ((pb_f16)(v))
#define LD_BF16(v) pb_bf16_to_f32(v)
#define ST_BF16(v) pb_f32_to_bf16(v)

/* ---- the binary operations: OP(acc, x). max/min keep a NaN once it appears. ---- */
static inline float logaddexp_f32(float a, float b) {
  if (a != a || b != b) return a + b;
  float m = a > b ? a : b;
  if (m == -INFINITY || m == INFINITY) return m; /* both -inf, or +inf anywhere */
  return m + log1pf(expf(-fabsf(a - b)));
}
static inline double logaddexp_f64(double a, double b) {
  if (a != a || b != b) return a + b;
  double m = a > b ? a : b;
  if (m == -INFINITY || m == INFINITY) return m;
  return m + log1p(exp(-fabs(a - b)));
}
#define OP_SUM(a, b) ((a) + (b))
#define OP_PROD(a, b) ((a) * (b))
#define OP_MAX(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define OP_MIN(a, b) (((a) <= (b) || (a) != (a)) ? (a) : (b))
#define OP_AND(a, b) ((a) & (b))
#define OP_OR(a, b) ((a) | (b))
#define OP_XOR(a, b) ((a) ^ (b))
#define OP_LAE(a, b) _Generic((a), float: logaddexp_f32, double: logaddexp_f64)((a), (b))

/* Arg-reductions: replace the best only when strictly better, or when x is the first NaN. */
#define BETTER_MAX(best, x) ((x) > (best) || ((x) != (x) && (best) == (best)))
#define BETTER_MIN(best, x) ((x) < (best) || ((x) != (x) && (best) == (best)))

/* ---- folding a run of x into one accumulator ---- */

#define RD_SCAN_BLOCK 64

/* 16 independent lanes per step: the compiler turns them into vector ops without reassociating
 * one serial chain. */
#define RD_FOLD(NAME, T, TA, LD, OP)                                                              \
  static PB_CLONES TA NAME##_fold(const T *x, npy_intp n, TA acc) {                              \
    npy_intp i = 0;                                                                              \
    if (n >= 32) {                                                                               \
      TA r[16];                                                                                  \
      for (int k = 0; k < 16; ++k) r[k] = LD(x[k]);                                              \
      for (i = 16; i + 16 <= n; i += 16)                                                         \
        for (int k = 0; k < 16; ++k) r[k] = OP(r[k], LD(x[i + k]));                              \
      for (int k = 0; k < 8; ++k) r[k] = OP(r[k], r[k + 8]);                                     \
      for (int k = 0; k < 4; ++k) r[k] = OP(r[k], r[k + 4]);                                     \
      acc = OP(acc, OP(OP(r[0], r[1]), OP(r[2], r[3])));                                         \
    }                                                                                            \
    for (; i < n; ++i) acc = OP(acc, LD(x[i]));                                                  \
    return acc;                                                                                  \
  }                                                                                              \
  static TA NAME##_fold_strided(const char *x, npy_intp s, npy_intp n, TA acc) {                 \
    for (npy_intp i = 0; i < n; ++i, x += s) acc = OP(acc, LD(*(const T *)x));                   \
    return acc;                                                                                  \
  }

/* Run folds: acc = OP(acc, x[0..n)). Exact ops fold directly; float sums are pairwise (as
 * NumPy's), so the error grows with log(n) rather than n, for strided runs too. */
#define RD_RUN_DIRECT(NAME, T, TA, LD, OP)                                                        \
  static TA NAME##_run(const char *x, npy_intp s, npy_intp n, TA acc) {                          \
    if (s == (npy_intp)sizeof(T)) return NAME##_fold((const T *)x, n, acc);                      \
    return NAME##_fold_strided(x, s, n, acc);                                                    \
  }                                                                                              \
  static TA NAME##_scan_run(const char *x, npy_intp sx, char *o, npy_intp so, npy_intp n,         \
                            TA v, T (*st)(TA)) {                                                 \
    for (npy_intp i = 0; i < n; ++i, x += sx, o += so) {                                         \
      v = OP(v, LD(*(const T *)x));                                                              \
      *(T *)o = st(v);                                                                           \
    }                                                                                            \
    return v;                                                                                    \
  }
#define RD_RUN_PAIRWISE(NAME, T, TA, LD, OP)                                                      \
  static TA NAME##_pairwise(const char *x, npy_intp s, npy_intp n) {                             \
    if (n <= 1024) {                                                                             \
      if (s == (npy_intp)sizeof(T)) return NAME##_fold((const T *)x, n, (TA)0);                  \
      TA r[8] = {0};                                                                             \
      npy_intp i = 0;                                                                            \
      for (; i + 8 <= n; i += 8)                                                                 \
        for (int k = 0; k < 8; ++k) r[k] += LD(*(const T *)(x + (i + k) * s));                  \
      TA acc = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));               \
      for (; i < n; ++i) acc += LD(*(const T *)(x + i * s));                                     \
      return acc;                                                                                \
    }                                                                                            \
    npy_intp h = (n / 2) & ~(npy_intp)15;                                                        \
    return NAME##_pairwise(x, s, h) + NAME##_pairwise(x + h * s, s, n - h);                      \
  }                                                                                              \
  static TA NAME##_run(const char *x, npy_intp s, npy_intp n, TA acc) {                          \
    return acc + NAME##_pairwise(x, s, n);                                                       \
  }                                                                                              \
  /* a running sum along a run: each element is (the sum before its block of RD_SCAN_BLOCK) +  \
   * (its prefix within the block); block sums merge as a binary counter, so the sum before a   \
   * block adds at most log2(blocks) pairwise group sums (a single running float32 sum of 10^7 \
   * ended 715 off, 1400 ulps) */                                                            \
  static TA NAME##_scan_run(const char *x, npy_intp sx, char *o, npy_intp so, npy_intp n,         \
                            TA v, T (*st)(TA)) {                                                 \
    TA level[64];                                                                                \
    npy_intp blocks = 0;                                                                         \
    for (npy_intp i0 = 0; i0 < n; i0 += RD_SCAN_BLOCK) {                                         \
      TA before = 0;                                                                             \
      for (int k = 63; k >= 0; --k)                                                              \
        if ((blocks >> k) & 1) before += level[k];                                               \
      const TA start = v + before;                                                               \
      TA local = 0;                                                                              \
      const npy_intp m = n - i0 < RD_SCAN_BLOCK ? n - i0 : RD_SCAN_BLOCK;                        \
      for (npy_intp i = 0; i < m; ++i, x += sx, o += so) {                                       \
        local += LD(*(const T *)x);                                                              \
        *(T *)o = st(start + local);                                                             \
      }                                                                                          \
      int k = 0;                                                                                 \
      for (; (blocks >> k) & 1; ++k) local = level[k] + local;                                   \
      level[k] = local;                                                                          \
      ++blocks;                                                                                  \
    }                                                                                            \
    TA total = 0;                                                                                \
    for (int k = 63; k >= 0; --k)                                                                \
      if ((blocks >> k) & 1) total += level[k];                                                  \
    return v + total;                                                                            \
  }

/* ---- the three loop kinds of one (op, dtype) ---- */

/* reduce: (x, acc) */
#define RD_REDUCE_LOOP(NAME, T, TA, LD, OP)                                                       \
  static PB_CLONES void NAME##_rows(const T *x, TA *a, npy_intp n) {                             \
    for (npy_intp i = 0; i < n; ++i) a[i] = OP(a[i], LD(x[i]));                                  \
  }                                                                                              \
  static PB_CLONES void NAME##_cols(const char *x, npy_intp xs, npy_intp rows, char *acc,         \
                                    npy_intp n) {                                                \
    TA *a = (TA *)acc;                                                                           \
    for (npy_intp r = 0; r < rows; ++r, x += xs)                                                 \
      for (npy_intp i = 0; i < n; ++i) a[i] = OP(a[i], LD(((const T *)x)[i]));                   \
  }                                                                                              \
  static void NAME(char **p, const npy_intp *s, npy_intp n, const void *prm) {                   \
    (void)prm;                                                                                   \
    if (s[1] == 0) {                                                                             \
      *(TA *)p[1] = NAME##_run(p[0], s[0], n, *(TA *)p[1]);                                      \
      return;                                                                                    \
    }                                                                                            \
    if (s[0] == (npy_intp)sizeof(T) && s[1] == (npy_intp)sizeof(TA)) {                           \
      NAME##_rows((const T *)p[0], (TA *)p[1], n);                                               \
      return;                                                                                    \
    }                                                                                            \
    char *px = p[0], *pa = p[1];                                                                 \
    for (npy_intp i = 0; i < n; ++i, px += s[0], pa += s[1])                                     \
      *(TA *)pa = OP(*(TA *)pa, LD(*(const T *)px));                                             \
  }

/* cumulative: (x, acc, out), out = the running acc at every step */
#define RD_SCAN_LOOP(NAME, T, TA, LD, ST, OP)                                                     \
  static inline T NAME##_store(TA v) { return ST(v); }                                           \
  static PB_CLONES void NAME##_scan_rows(const T *x, TA *a, T *o, npy_intp n) {                  \
    for (npy_intp i = 0; i < n; ++i) { TA v = OP(a[i], LD(x[i])); a[i] = v; o[i] = ST(v); }      \
  }                                                                                              \
  static void NAME##_scan(char **p, const npy_intp *s, npy_intp n, const void *prm) {            \
    (void)prm;                                                                                   \
    char *px = p[0], *pa = p[1], *po = p[2];                                                     \
    if (s[1] == 0) {                                                                             \
      *(TA *)pa = NAME##_scan_run(px, s[0], po, s[2], n, *(TA *)pa, NAME##_store);               \
      return;                                                                                    \
    }                                                                                            \
    if (s[0] == (npy_intp)sizeof(T) && s[1] == (npy_intp)sizeof(TA) && s[2] == (npy_intp)sizeof(T)) { \
      NAME##_scan_rows((const T *)px, (TA *)pa, (T *)po, n);                                     \
      return;                                                                                    \
    }                                                                                            \
    for (npy_intp i = 0; i < n; ++i, px += s[0], pa += s[1], po += s[2]) {                       \
      TA v = OP(*(TA *)pa, LD(*(const T *)px));                                                  \
      *(TA *)pa = v;                                                                             \
      *(T *)po = ST(v);                                                                          \
    }                                                                                            \
  }

/* arg-reduce: (x, iota, best, idx); iota holds each element's index along the reduced axis. A
 * contiguous run finds its extreme with the vectorized fold, then the first position holding
 * it. */
#define RD_ARG_LOOP(NAME, T, TA, LD, OP, BETTER)                                                  \
  static void NAME##_arg(char **p, const npy_intp *s, npy_intp n, const void *prm) {             \
    (void)prm;                                                                                   \
    char *px = p[0], *pi = p[1], *pb = p[2], *pk = p[3];                                         \
    if (s[2] == 0) {                                                                             \
      TA best = *(TA *)pb;                                                                       \
      if (s[0] == (npy_intp)sizeof(T)) {                                                         \
        const T *x = (const T *)px;                                                              \
        TA m = NAME##_fold(x, n, LD(x[0]));                                                      \
        if (!(BETTER(best, m))) return;                                                          \
        npy_intp i = 0;                                                                          \
        if (m != m) { while (LD(x[i]) == LD(x[i])) ++i; }                                        \
        else { while (!(LD(x[i]) == m)) ++i; }                                                   \
        *(TA *)pb = m;                                                                           \
        *(int64_t *)pk = *(const int64_t *)(pi + i * s[1]);                                      \
        return;                                                                                  \
      }                                                                                          \
      int64_t k = *(int64_t *)pk;                                                                \
      for (npy_intp i = 0; i < n; ++i, px += s[0], pi += s[1]) {                                 \
        TA v = LD(*(const T *)px);                                                               \
        if (BETTER(best, v)) { best = v; k = *(const int64_t *)pi; }                             \
      }                                                                                          \
      *(TA *)pb = best;                                                                          \
      *(int64_t *)pk = k;                                                                        \
      return;                                                                                    \
    }                                                                                            \
    for (npy_intp i = 0; i < n; ++i, px += s[0], pi += s[1], pb += s[2], pk += s[3]) {           \
      TA v = LD(*(const T *)px);                                                                 \
      if (BETTER(*(TA *)pb, v)) { *(TA *)pb = v; *(int64_t *)pk = *(const int64_t *)pi; }        \
    }                                                                                            \
  }

/* Instantiations. RUN is RD_RUN_DIRECT or RD_RUN_PAIRWISE. */
#define RD_BASIC(NAME, T, TA, LD, ST, OP, RUN)                                                    \
  RD_FOLD(NAME, T, TA, LD, OP) RUN(NAME, T, TA, LD, OP) RD_REDUCE_LOOP(NAME, T, TA, LD, OP)      \
  RD_SCAN_LOOP(NAME, T, TA, LD, ST, OP)
#define RD_WITH_ARG(NAME, T, TA, LD, ST, OP, RUN, BETTER)                                         \
  RD_BASIC(NAME, T, TA, LD, ST, OP, RUN) RD_ARG_LOOP(NAME, T, TA, LD, OP, BETTER)

#define RD_INTS(GEN, NAME, ...)                                                                   \
  GEN(NAME##_i8, int8_t, int8_t, LD_SAME, ST_SAME, __VA_ARGS__)                                  \
  GEN(NAME##_i16, int16_t, int16_t, LD_SAME, ST_SAME, __VA_ARGS__)                               \
  GEN(NAME##_i32, int32_t, int32_t, LD_SAME, ST_SAME, __VA_ARGS__)                               \
  GEN(NAME##_i64, int64_t, int64_t, LD_SAME, ST_SAME, __VA_ARGS__)                               \
  GEN(NAME##_u8, uint8_t, uint8_t, LD_SAME, ST_SAME, __VA_ARGS__)                                \
  GEN(NAME##_u16, uint16_t, uint16_t, LD_SAME, ST_SAME, __VA_ARGS__)                             \
  GEN(NAME##_u32, uint32_t, uint32_t, LD_SAME, ST_SAME, __VA_ARGS__)                             \
  GEN(NAME##_u64, uint64_t, uint64_t, LD_SAME, ST_SAME, __VA_ARGS__)
#define RD_BOOL(GEN, NAME, ...) GEN(NAME##_b, npy_bool, npy_bool, LD_SAME, ST_SAME, __VA_ARGS__)
#define RD_FLOATS(GEN, NAME, ...)                                                                 \
  GEN(NAME##_f16, pb_f16, float, LD_F16, ST_F16, __VA_ARGS__)                                    \
  GEN(NAME##_bf16, pb_bf16, float, LD_BF16, ST_BF16, __VA_ARGS__)                                \
  GEN(NAME##_f32, float, float, LD_SAME, ST_SAME, __VA_ARGS__)                                   \
  GEN(NAME##_f64, double, double, LD_SAME, ST_SAME, __VA_ARGS__)
#define RD_COMPLEX(GEN, NAME, ...)                                                                \
  GEN(NAME##_c64, pb_c64, pb_c64, LD_SAME, ST_SAME, __VA_ARGS__)                                 \
  GEN(NAME##_c128, pb_c128, pb_c128, LD_SAME, ST_SAME, __VA_ARGS__)

RD_INTS(RD_BASIC, sum, OP_SUM, RD_RUN_DIRECT)
RD_FLOATS(RD_BASIC, sum, OP_SUM, RD_RUN_PAIRWISE)
RD_COMPLEX(RD_BASIC, sum, OP_SUM, RD_RUN_PAIRWISE)
RD_INTS(RD_BASIC, prod, OP_PROD, RD_RUN_DIRECT)
RD_FLOATS(RD_BASIC, prod, OP_PROD, RD_RUN_DIRECT)
RD_COMPLEX(RD_BASIC, prod, OP_PROD, RD_RUN_DIRECT)
RD_BOOL(RD_WITH_ARG, max, OP_MAX, RD_RUN_DIRECT, BETTER_MAX)
RD_INTS(RD_WITH_ARG, max, OP_MAX, RD_RUN_DIRECT, BETTER_MAX)
RD_FLOATS(RD_WITH_ARG, max, OP_MAX, RD_RUN_DIRECT, BETTER_MAX)
RD_BOOL(RD_WITH_ARG, min, OP_MIN, RD_RUN_DIRECT, BETTER_MIN)
RD_INTS(RD_WITH_ARG, min, OP_MIN, RD_RUN_DIRECT, BETTER_MIN)
RD_FLOATS(RD_WITH_ARG, min, OP_MIN, RD_RUN_DIRECT, BETTER_MIN)
RD_BOOL(RD_BASIC, and, OP_AND, RD_RUN_DIRECT)
RD_INTS(RD_BASIC, and, OP_AND, RD_RUN_DIRECT)
RD_BOOL(RD_BASIC, or, OP_OR, RD_RUN_DIRECT)
RD_INTS(RD_BASIC, or, OP_OR, RD_RUN_DIRECT)
RD_BOOL(RD_BASIC, xor, OP_XOR, RD_RUN_DIRECT)
RD_INTS(RD_BASIC, xor, OP_XOR, RD_RUN_DIRECT)
RD_FLOATS(RD_BASIC, lae, OP_LAE, RD_RUN_DIRECT)

/* ---- the op table ---- */

typedef struct {
  const char *reduce_name, *scan_name, *arg_name; /* NULL: that kernel kind does not exist */
  npy_intp grain;                                 /* elements per chunk worth a thread */
  pb_loop_fn reduce[PB_NDT], scan[PB_NDT], arg[PB_NDT];
  rd_cols_fn cols[PB_NDT]; /* the reduce loop over many short rows */
} rd_op;

#define S_INTS(N, SUF)                                                                            \
  [PB_I8] = N##_i8##SUF, [PB_I16] = N##_i16##SUF, [PB_I32] = N##_i32##SUF,                       \
  [PB_I64] = N##_i64##SUF, [PB_U8] = N##_u8##SUF, [PB_U16] = N##_u16##SUF,                       \
  [PB_U32] = N##_u32##SUF, [PB_U64] = N##_u64##SUF
#define S_FLOATS(N, SUF)                                                                          \
  [PB_F16] = N##_f16##SUF, [PB_BF16] = N##_bf16##SUF, [PB_F32] = N##_f32##SUF,                   \
  [PB_F64] = N##_f64##SUF
#define S_COMPLEX(N, SUF) [PB_C64] = N##_c64##SUF, [PB_C128] = N##_c128##SUF
#define S_BOOL(N, SUF) [PB_BOOL] = N##_b##SUF

#define GRAIN_CHEAP 131072

static const rd_op rd_ops[RD_NOPS] = {
  [RD_SUM] = {"reduce_sum", "cumsum", NULL, GRAIN_CHEAP,
              {S_INTS(sum, ), S_FLOATS(sum, ), S_COMPLEX(sum, )},
              {S_INTS(sum, _scan), S_FLOATS(sum, _scan), S_COMPLEX(sum, _scan)}, {0},
              {S_INTS(sum, _cols), S_FLOATS(sum, _cols), S_COMPLEX(sum, _cols)}},
  [RD_PROD] = {"reduce_prod", "cumprod", NULL, GRAIN_CHEAP,
               {S_INTS(prod, ), S_FLOATS(prod, ), S_COMPLEX(prod, )},
               {S_INTS(prod, _scan), S_FLOATS(prod, _scan), S_COMPLEX(prod, _scan)}, {0},
               {S_INTS(prod, _cols), S_FLOATS(prod, _cols), S_COMPLEX(prod, _cols)}},
  [RD_MAX] = {"reduce_max", "cummax", "argmax", GRAIN_CHEAP,
              {S_BOOL(max, ), S_INTS(max, ), S_FLOATS(max, )},
              {S_INTS(max, _scan), S_FLOATS(max, _scan)},
              {S_BOOL(max, _arg), S_INTS(max, _arg), S_FLOATS(max, _arg)},
              {S_BOOL(max, _cols), S_INTS(max, _cols), S_FLOATS(max, _cols)}},
  [RD_MIN] = {"reduce_min", "cummin", "argmin", GRAIN_CHEAP,
              {S_BOOL(min, ), S_INTS(min, ), S_FLOATS(min, )},
              {S_INTS(min, _scan), S_FLOATS(min, _scan)},
              {S_BOOL(min, _arg), S_INTS(min, _arg), S_FLOATS(min, _arg)},
              {S_BOOL(min, _cols), S_INTS(min, _cols), S_FLOATS(min, _cols)}},
  [RD_AND] = {"reduce_and", NULL, NULL, GRAIN_CHEAP, {S_BOOL(and, ), S_INTS(and, )}, {0}, {0},
              {S_BOOL(and, _cols), S_INTS(and, _cols)}},
  [RD_OR] = {"reduce_or", NULL, NULL, GRAIN_CHEAP, {S_BOOL(or, ), S_INTS(or, )}, {0}, {0},
             {S_BOOL(or, _cols), S_INTS(or, _cols)}},
  [RD_XOR] = {"reduce_xor", NULL, NULL, GRAIN_CHEAP, {S_BOOL(xor, ), S_INTS(xor, )}, {0}, {0},
              {S_BOOL(xor, _cols), S_INTS(xor, _cols)}},
  [RD_LOGADDEXP] = {NULL, "cumlogsumexp", NULL, 16384, {0}, {S_FLOATS(lae, _scan)}, {0}},
};

/* The dtype slot accumulators use: halves accumulate in float32. */
static int acc_slot(int slot) { return slot == PB_F16 || slot == PB_BF16 ? PB_F32 : slot; }

static npy_intp slot_item(int slot) {
  static const npy_intp size[PB_NDT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return size[slot];
}

/* One element of the op's identity in dtype `slot` (an accumulator slot, never a half). */
static void identity(int op, int slot, char *dst) {
  static const npy_intp size[PB_NDT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  const bool is_signed = slot >= PB_I8 && slot <= PB_I64;
  const npy_intp n = size[slot];
  memset(dst, 0, (size_t)n);
  switch (op) {
    case RD_PROD:
      switch (slot) {
        case PB_I8: case PB_U8: *(uint8_t *)dst = 1; break;
        case PB_I16: case PB_U16: *(uint16_t *)dst = 1; break;
        case PB_I32: case PB_U32: *(uint32_t *)dst = 1; break;
        case PB_I64: case PB_U64: *(uint64_t *)dst = 1; break;
        case PB_F32: *(float *)dst = 1.0f; break;
        case PB_F64: *(double *)dst = 1.0; break;
        case PB_C64: *(float *)dst = 1.0f; break;   /* real part first */
        case PB_C128: *(double *)dst = 1.0; break;
      }
      break;
    case RD_AND:
      if (slot == PB_BOOL) *(npy_bool *)dst = 1;
      else memset(dst, 0xff, (size_t)n);
      break;
    case RD_MAX: case RD_LOGADDEXP:
      if (slot == PB_F32) *(float *)dst = -INFINITY;
      else if (slot == PB_F64) *(double *)dst = -INFINITY;
      else if (is_signed) dst[n - 1] = (char)0x80; /* little-endian: the most negative value */
      break;
    case RD_MIN:
      if (slot == PB_F32) *(float *)dst = INFINITY;
      else if (slot == PB_F64) *(double *)dst = INFINITY;
      else if (slot == PB_BOOL) *(npy_bool *)dst = 1;
      else {
        memset(dst, 0xff, (size_t)n);
        if (is_signed) dst[n - 1] = 0x7f;
      }
      break;
    default: break; /* sum, or, xor: zero */
  }
}

static void fill(char *buf, npy_intp n, npy_intp item, const char *value) {
  if (n <= 0) return;
  memcpy(buf, value, (size_t)item);
  npy_intp done = 1;
  while (done < n) { /* doubling copies */
    npy_intp c = done < n - done ? done : n - done;
    memcpy(buf + done * item, buf, (size_t)(c * item));
    done += c;
  }
}

/* ---- the runner: chunked, deterministic, optionally parallel ---- */

#define RD_MAXCHUNKS 16

typedef struct {
  int split, nchunks, threads;
  char *priv[RD_MAXCHUNKS][RD_MAXOPS]; /* private accumulators of chunks 1.. (reduced split) */
} rd_plan;

static npy_intp absp(npy_intp v) { return v < 0 ? -v : v; }

/* Dims ordered by decreasing |stride of x|, so the innermost loop walks x's smallest stride. */
static void walk_order(int ndim, const npy_intp *xs, int *order) {
  for (int d = 0; d < ndim; ++d) order[d] = d;
  for (int i = 1; i < ndim; ++i) /* insertion sort: ndim is small, and it keeps ties in order */
    for (int j = i; j > 0 && absp(xs[order[j - 1]]) < absp(xs[order[j]]); --j) {
      int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
    }
}

static npy_intp space_size(const rd_space *sp) {
  npy_intp n = 1;
  for (int d = 0; d < sp->ndim; ++d) n *= sp->shape[d];
  return n;
}

/* Choose the chunking (from the shape only) and allocate private accumulators; -1 when out of
 * memory (no exception set: the executor calls this without the GIL). */
static int plan(const rd_space *sp, const rd_task *t, npy_intp out_elems, rd_plan *pl) {
  memset(pl, 0, sizeof(*pl));
  pl->split = -1;
  pl->nchunks = 1;
  pl->threads = 1;
  npy_intp total = space_size(sp);
  if (total < 2 * t->grain) return 0;
  npy_intp want = total / t->grain;
  if (want > RD_MAXCHUNKS) want = RD_MAXCHUNKS;
  int maxt = t->threads > 0 ? t->threads : 1;
#ifdef _OPENMP
  if (t->threads <= 0) maxt = omp_get_max_threads();
#endif
  /* not the innermost dim: its chunks would cut every contiguous row into short strided
   * pieces (a (10000, 1000) sum over axis 0 ran at a 25th of NumPy's speed) */
  for (int d = 0; d < sp->ndim - 1 && pl->split < 0; ++d)
    if (!sp->reduced[d] && sp->shape[d] >= want) { pl->split = d; pl->nchunks = (int)want; }
  /* a reduced split pays for private accumulators and a combine: only for small outputs */
  if (pl->split < 0 && t->combine && out_elems * want <= total / 8)
    for (int d = 0; d < sp->ndim && pl->split < 0; ++d)
      if (sp->reduced[d] && sp->shape[d] >= 2) {
        pl->split = d;
        pl->nchunks = (int)(sp->shape[d] < want ? sp->shape[d] : want);
      }
  for (int d = 0; d < sp->ndim && pl->split < 0; ++d)
    if (!sp->reduced[d] && sp->shape[d] >= 2) {
      pl->split = d;
      pl->nchunks = (int)(sp->shape[d] < want ? sp->shape[d] : want);
    }
  if (pl->split < 0) { pl->nchunks = 1; return 0; }
  bool reduced_split = sp->reduced[pl->split];
  if (!reduced_split && maxt == 1) { pl->split = -1; pl->nchunks = 1; return 0; } /* same result */
  pl->threads = maxt < pl->nchunks ? maxt : pl->nchunks;
  if (reduced_split)
    for (int c = 1; c < pl->nchunks; ++c)
      for (int a = t->nop - t->nacc; a < t->nop; ++a) {
        char *b = PyMem_RawMalloc((size_t)(t->bytes[a] ? t->bytes[a] : 1));
        if (!b) return -1; /* the caller raises: this also runs without the GIL */
        memcpy(b, t->base[a], (size_t)t->bytes[a]); /* the initial (identity) contents */
        pl->priv[c][a] = b;
      }
  return 0;
}

static void plan_free(rd_plan *pl) {
  for (int c = 0; c < RD_MAXCHUNKS; ++c)
    for (int a = 0; a < RD_MAXOPS; ++a) PyMem_RawFree(pl->priv[c][a]);
}

static void run_chunk(const rd_space *sp, const rd_task *t, const rd_plan *pl, int c) {
  npy_intp shape[PB_MAXDIMS];
  char *base[RD_MAXOPS];
  memcpy(shape, sp->shape, sizeof(npy_intp) * (size_t)sp->ndim);
  for (int op = 0; op < t->nop; ++op) base[op] = t->base[op];
  if (pl->split >= 0) {
    int d = pl->split;
    npy_intp len = sp->shape[d], lo = len * c / pl->nchunks, hi = len * (c + 1) / pl->nchunks;
    shape[d] = hi - lo;
    for (int op = 0; op < t->nop; ++op) {
      if (pl->priv[c][op]) base[op] = pl->priv[c][op];
      else base[op] += lo * sp->strides[op * sp->ndim + d];
    }
  }
  pb_rd_walk_space(sp, t, shape, base);
}

/* Runs the task over the space; the accumulators end in t->base. Call without the GIL only
 * after plan(). */
static void execute(const rd_space *sp, const rd_task *t, const rd_plan *pl, npy_intp out_elems) {
  if (pl->nchunks <= 1) {
    pb_rd_walk_space(sp, t, sp->shape, t->base);
    return;
  }
  /* dynamic: a thread that is running takes the chunks of one the OS has not scheduled yet;
   * the chunks' results do not depend on which thread ran them */
#ifdef _OPENMP
#pragma omp parallel for num_threads(pl->threads) schedule(dynamic, 1) if (pl->threads > 1)
#endif
  for (int c = 0; c < pl->nchunks; ++c) run_chunk(sp, t, pl, c);
  if (!sp->reduced[pl->split]) return;
  /* combine private accumulators in a fixed tree order: chunk c absorbs chunk c + step */
  int first_acc = t->nop - t->nacc;
  for (int step = 1; step < pl->nchunks; step *= 2)
    for (int c = 0; c + step < pl->nchunks; c += 2 * step) {
      char *ptrs[2 * RD_MAXOPS];
      npy_intp st[2 * RD_MAXOPS];
      for (int a = 0; a < t->nacc; ++a) {
        int op = first_acc + a;
        ptrs[a] = pl->priv[c + step][op];
        ptrs[t->nacc + a] = c == 0 ? t->base[op] : pl->priv[c][op];
        st[a] = st[t->nacc + a] = t->item[op];
      }
      t->combine(ptrs, st, out_elems, NULL);
    }
}


/* ---- argument parsing shared by the entry points ---- */

static int parse_op(PyObject *o, const char *kernel) {
  long op = PyLong_AsLong(o);
  if (op == -1 && PyErr_Occurred()) return -1;
  if (op < 0 || op >= RD_NOPS) {
    PyErr_Format(PyExc_ValueError, "%s: argument 'op' is %ld, not an op of the table", kernel, op);
    return -1;
  }
  return (int)op;
}


static pb_loop_fn loop_for(const pb_loop_fn *loops, const char *name, PyArrayObject *x) {
  int slot = pb_dtype_slot(PyArray_DESCR(x));
  pb_loop_fn fn = slot >= 0 ? loops[slot] : NULL;
  if (!fn)
    PyErr_Format(PyExc_TypeError, "%s: argument 'operand' has dtype %S, which this op does not "
                 "support", name, (PyObject *)PyArray_DESCR(x));
  return fn;
}

/* C-contiguous byte strides of `shape`. */
static void contiguous_strides(int ndim, const npy_intp *shape, npy_intp item, npy_intp *out) {
  npy_intp s = item;
  for (int d = ndim - 1; d >= 0; --d) { out[d] = s; s *= shape[d] > 0 ? shape[d] : 1; }
}

/* The accumulator: an array of the output shape (x's shape without the reduced axes) in the
 * accumulation dtype, filled with the op's identity; acc_strides[d] is its byte stride for each
 * of x's dims (0 along reduced ones). */
static PyArrayObject *new_acc(PyArrayObject *x, const bool *reduced, int slot, int op,
                              npy_intp *acc_strides) {
  int ndim = PyArray_NDIM(x), ond = 0;
  npy_intp oshape[PB_MAXDIMS], ostr[PB_MAXDIMS];
  for (int d = 0; d < ndim; ++d)
    if (!reduced[d]) oshape[ond++] = PyArray_DIM(x, d);
  PyArray_Descr *descr = pb_descr_for_slot(slot);
  if (!descr) return NULL;
  npy_intp item = PyDataType_ELSIZE(descr);
  PyArrayObject *acc = pb_new_array(ond, oshape, descr);
  if (!acc) return NULL;
  char one[16];
  identity(op, slot, one);
  fill(PyArray_BYTES(acc), PyArray_SIZE(acc), item, one);
  contiguous_strides(ond, oshape, item, ostr);
  for (int d = 0, k = 0; d < ndim; ++d) acc_strides[d] = reduced[d] ? 0 : ostr[k++];
  return acc;
}

/* float32 accumulator -> the half output dtype, rounding once */
static PyArrayObject *round_to_half(PyArrayObject *acc, int slot) {
  PyArray_Descr *descr = pb_descr_for_slot(slot);
  if (!descr) return NULL;
  PyArrayObject *out = pb_new_array(PyArray_NDIM(acc), PyArray_SHAPE(acc), descr);
  if (!out) return NULL;
  const float *a = (const float *)PyArray_BYTES(acc);
  npy_intp n = PyArray_SIZE(acc);
  if (slot == PB_F16) {
    pb_f16 *o = (pb_f16 *)PyArray_BYTES(out);
    for (npy_intp i = 0; i < n; ++i) o[i] = (pb_f16)a[i];
  } else {
    pb_bf16 *o = (pb_bf16 *)PyArray_BYTES(out);
    for (npy_intp i = 0; i < n; ++i) o[i] = pb_f32_to_bf16(a[i]);
  }
  return out;
}

/* Lays out an index space of x's shape and the operands of per-dim strides `per_dim` (op-major
 * over x's dims, x first) in walking order. */
static void layout_raw(int ndim, const npy_intp *shape, const bool *reduced, int nop,
                       const npy_intp *per_dim, rd_space *sp) {
  int order[PB_MAXDIMS];
  walk_order(ndim, per_dim, order);
  sp->ndim = ndim;
  for (int i = 0; i < ndim; ++i) {
    sp->shape[i] = shape[order[i]];
    sp->reduced[i] = reduced[order[i]];
    for (int op = 0; op < nop; ++op) sp->strides[op * ndim + i] = per_dim[op * PB_MAXDIMS + order[i]];
  }
}


/* Reduces x (any strides) over `reduced` into acc: the C-contiguous output (x's shape without
 * the reduced dims) in the accumulator dtype `aslot`, already holding the op's identity.
 *
 * A dim along which x's stride is 0 (a broadcast) is walked once, not along its length: reduced
 * ones are folded in afterwards by op_power (n copies of the same partial result), others are
 * computed once and the results repeated. So the work is bounded by the elements x's memory
 * really holds, however large its broadcast shape (`zeros((2**40,)).sum()` is immediate and 0,
 * a sum of 2**36 broadcast ones is exactly 2**36, as XLA's). `gil`: the GIL is held and is
 * released for large walks. Returns 0, or -1 when out of memory (no exception set). */
static int reduce_into(int op, int slot, int aslot, int ndim, const npy_intp *shape,
                       const npy_intp *xstrides, const bool *reduced, const char *x, char *acc,
                       bool gil) {
  const npy_intp item = slot_item(slot), aitem = slot_item(aslot);
  npy_intp wshape[PB_MAXDIMS], oshape[PB_MAXDIMS], power = 1, out_elems = 1, walked_out = 1;
  bool copy[PB_MAXDIMS];
  int ond = 0;
  bool empty = false;
  for (int d = 0; d < ndim; ++d) empty |= shape[d] == 0;
  for (int d = 0; d < ndim; ++d) {
    const bool bcast = !empty && xstrides[d] == 0 && shape[d] > 1;
    wshape[d] = bcast ? 1 : shape[d];
    if (reduced[d]) {
      if (bcast) power *= shape[d];
      continue;
    }
    copy[ond] = bcast;
    oshape[ond++] = shape[d];
    out_elems *= shape[d];
    walked_out *= wshape[d];
  }
  /* the walked results go to acc itself unless some output dim is a broadcast */
  char *wacc = acc, *tmp = NULL;
  if (walked_out != out_elems || power > 1) {
    tmp = PyMem_RawMalloc((size_t)(2 * walked_out * aitem + 1));
    if (!tmp) return -1;
    if (walked_out != out_elems) {
      wacc = tmp + walked_out * aitem;
      char one[16];
      identity(op, aslot, one);
      fill(wacc, walked_out, aitem, one);
    }
  }
  npy_intp wostr[PB_MAXDIMS], wshape_out[PB_MAXDIMS], per_dim[RD_MAXOPS * PB_MAXDIMS];
  for (int d = 0, k = 0; d < ndim; ++d)
    if (!reduced[d]) wshape_out[k++] = wshape[d];
  contiguous_strides(ond, wshape_out, aitem, wostr);
  memcpy(per_dim, xstrides, sizeof(npy_intp) * (size_t)ndim);
  for (int d = 0, k = 0; d < ndim; ++d) per_dim[PB_MAXDIMS + d] = reduced[d] ? 0 : wostr[k++];
  rd_space sp;
  layout_raw(ndim, wshape, reduced, 2, per_dim, &sp);
  rd_task t = {.nop = 2, .nacc = 1, .base = {(char *)x, wacc}, .item = {item, aitem},
               .bytes = {0, walked_out * aitem}, .fn = rd_ops[op].reduce[slot],
               .cols = rd_ops[op].cols[slot],
               .combine = rd_ops[op].reduce[aslot], .grain = rd_ops[op].grain,
               .pairwise = op == RD_SUM && slot >= PB_F16};
  rd_plan pl;
  int rc = plan(&sp, &t, walked_out, &pl);
  if (rc == 0 && space_size(&sp) > 0) {
    if (gil && space_size(&sp) >= PB_NOGIL_MIN) {
      Py_BEGIN_ALLOW_THREADS
      execute(&sp, &t, &pl, walked_out);
      Py_END_ALLOW_THREADS
    } else {
      execute(&sp, &t, &pl, walked_out);
    }
  }
  plan_free(&pl);
  if (rc == 0) {
    pb_rd_op_power(t.combine, wacc, tmp, walked_out, aitem, power);
    if (wacc != acc) pb_rd_expand(acc, wacc, ond, oshape, copy, aitem);
  }
  PyMem_RawFree(tmp);
  return rc;
}

/* ---- accessors for the compiled-program executor (schedule.c) ---- */

int pb_reduce_nops(void) { return RD_NOPS; }

pb_loop_fn pb_reduce_loop(int op, int slot) {
  if (op < 0 || op >= RD_NOPS || slot < 0 || slot >= PB_NDT || acc_slot(slot) != slot) return NULL;
  return rd_ops[op].reduce[slot];
}

npy_intp pb_reduce_identity(int op, int slot, char *dst) {
  static const npy_intp size[PB_NDT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  if (!pb_reduce_loop(op, slot)) return 0;
  identity(op, slot, dst);
  return size[slot];
}

int pb_reduce_supported(int op, int slot) {
  return op >= 0 && op < RD_NOPS && slot >= 0 && slot < PB_NDT && rd_ops[op].reduce[slot] &&
         rd_ops[op].reduce[acc_slot(slot)];
}

int pb_reduce_raw(int op, int slot, int ndim, const npy_intp *shape, const npy_intp *xstrides,
                  const bool *reduced, const char *x, char *acc, char *out) {
  if (!pb_reduce_supported(op, slot) || ndim > PB_MAXDIMS) return -1;
  const int aslot = acc_slot(slot);
  const npy_intp aitem = slot_item(aslot);
  npy_intp out_elems = 1;
  for (int d = 0; d < ndim; ++d)
    if (!reduced[d]) out_elems *= shape[d];
  char one[16];
  identity(op, aslot, one);
  fill(acc, out_elems, aitem, one);
  if (reduce_into(op, slot, aslot, ndim, shape, xstrides, reduced, x, acc, false) < 0) return -1;
  if (out != acc) { /* float32 accumulator -> the half dtype, rounding once */
    const float *a = (const float *)acc;
    if (slot == PB_F16)
      for (npy_intp i = 0; i < out_elems; ++i) ((pb_f16 *)out)[i] = (pb_f16)a[i];
    else
      for (npy_intp i = 0; i < out_elems; ++i) ((pb_bf16 *)out)[i] = pb_f32_to_bf16(a[i]);
  }
  return 0;
}

/* ---- entry points ---- */

/* reduce(op, x, axes) -> x reduced over the tuple of distinct in-range axes by op */
static PyObject *reduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "reduce: expected (op, x, axes)");
    return NULL;
  }
  int op = parse_op(args[0], "reduce");
  if (op < 0) return NULL;
  const char *name = rd_ops[op].reduce_name ? rd_ops[op].reduce_name : "reduce";
  PyArrayObject *x = pb_arg_array(args[1], name, "operand");
  if (!x) return NULL;
  pb_loop_fn fn = loop_for(rd_ops[op].reduce, name, x);
  if (!fn) return NULL;
  if (!PyTuple_Check(args[2])) {
    PyErr_Format(PyExc_TypeError, "%s: argument 'axes' must be a tuple of ints", name);
    return NULL;
  }
  int ndim = PyArray_NDIM(x);
  bool reduced[PB_MAXDIMS] = {false};
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[2]); ++i) {
    long a = PyLong_AsLong(PyTuple_GET_ITEM(args[2], i));
    if (a == -1 && PyErr_Occurred()) return NULL;
    if (a < 0 || a >= ndim || reduced[a]) {
      PyErr_Format(PyExc_ValueError, "%s: argument 'axes' has %ld, which is out of range for %d "
                   "dimensions or repeated", name, a, ndim);
      return NULL;
    }
    reduced[a] = true;
  }
  int slot = pb_dtype_slot(PyArray_DESCR(x)), aslot = acc_slot(slot);
  npy_intp acc_strides[PB_MAXDIMS];
  PyArrayObject *acc = new_acc(x, reduced, aslot, op, acc_strides);
  if (!acc) return NULL;
  if (reduce_into(op, slot, aslot, ndim, PyArray_SHAPE(x), PyArray_STRIDES(x), reduced,
                  PyArray_BYTES(x), PyArray_BYTES(acc), true) < 0) {
    Py_DECREF(acc);
    PyErr_NoMemory();
    return NULL;
  }
  if (aslot == slot) return (PyObject *)acc;
  PyArrayObject *out = round_to_half(acc, slot);
  Py_DECREF(acc);
  return (PyObject *)out;
}

/* ---- the cumulative and arg-reduce kernels (pb_kernel.h); their primitives
 * (primitives/reductions.py) check operands and params when bound, the kernels what memory
 * safety needs ---- */

/* The accumulator of reducing `axis` of x: C-contiguous over x's other dims, `aslot` elements
 * holding op's identity, from the call's scratch; its byte stride along each of x's dims (0
 * along axis) in acc_strides. NULL when out of memory. */
static char *scratch_acc(pb_kernel_ctx *ctx, const pb_operand *x, int axis, int op, int aslot,
                         npy_intp *acc_strides, npy_intp *elems) {
  const npy_intp aitem = slot_item(aslot);
  npy_intp n = 1;
  for (int d = x->ndim - 1; d >= 0; --d) {
    acc_strides[d] = d == axis ? 0 : n * aitem;
    if (d != axis) n *= x->shape[d];
  }
  *elems = n;
  char *acc = ctx->scratch(ctx, (size_t)(n * aitem));
  if (acc) {
    char one[16];
    identity(op, aslot, one);
    fill(acc, n, aitem, one);
  }
  return acc;
}

/* Runs a task over its space within the ctx's threads; 0 or an error kind. */
static int run_task(const rd_space *sp, rd_task *t, npy_intp out_elems, pb_kernel_ctx *ctx) {
  rd_plan pl;
  t->threads = ctx->threads;
  if (plan(sp, t, out_elems, &pl) < 0) {
    plan_free(&pl);
    return pb_kernel_fail(ctx, PB_KERNEL_ENOMEM, "out of memory");
  }
  execute(sp, t, &pl, out_elems);
  plan_free(&pl);
  return 0;
}

/* cumsum, cumprod, cummax, cummin, cumlogsumexp: the inclusive scan of x along axis */
typedef struct { int32_t axis, reverse; } cumulative_params;

static int cumulative(int op, const pb_operand *ins, pb_operand *outs, const void *params,
                      pb_kernel_ctx *ctx) {
  const cumulative_params *P = params;
  const pb_operand *x = &ins[0], *o = &outs[0];
  const int slot = x->dtype, ndim = x->ndim, axis = P->axis;
  pb_loop_fn fn = slot >= 0 && slot < PB_NDT ? rd_ops[op].scan[slot] : NULL;
  if (!fn || o->dtype != slot || !pb_operand_same_shape(x, o) || axis < 0 || axis >= ndim)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "expected an operand of a supported dtype, an "
                          "output of its dtype and shape, and an axis in range");
  if (pb_operand_size(x) == 0) return 0;
  const int aslot = acc_slot(slot);
  bool reduced[PB_MAXDIMS] = {false};
  reduced[axis] = true;
  npy_intp per_dim[RD_MAXOPS * PB_MAXDIMS], acc_elems;
  char *acc = scratch_acc(ctx, x, axis, op, aslot, per_dim + PB_MAXDIMS, &acc_elems);
  if (!acc) return PB_KERNEL_ENOMEM;
  memcpy(per_dim, x->strides, sizeof(npy_intp) * (size_t)ndim);
  memcpy(per_dim + 2 * PB_MAXDIMS, o->strides, sizeof(npy_intp) * (size_t)ndim);
  char *bx = x->data, *bo = o->data;
  const npy_intp len = x->shape[axis];
  if (P->reverse) { /* walk the axis from its end: start there, negate its strides */
    bx += (len - 1) * per_dim[axis];
    bo += (len - 1) * per_dim[2 * PB_MAXDIMS + axis];
    per_dim[axis] = -per_dim[axis];
    per_dim[2 * PB_MAXDIMS + axis] = -per_dim[2 * PB_MAXDIMS + axis];
  }
  rd_space sp;
  layout_raw(ndim, x->shape, reduced, 3, per_dim, &sp);
  rd_task t = {.nop = 3, .nacc = 0, .base = {bx, acc, bo},
               .item = {x->itemsize, slot_item(aslot), o->itemsize}, .fn = fn,
               .combine = NULL, .grain = rd_ops[op].grain};
  return run_task(&sp, &t, acc_elems, ctx);
}

/* argmax, argmin: the index (the output's integer dtype) of the first extreme along axis; NaN
 * counts as the extreme */
typedef struct { int32_t axis; } argreduce_params;

static int argreduce(int op, const pb_operand *ins, pb_operand *outs, const void *params,
                     pb_kernel_ctx *ctx) {
  const argreduce_params *P = params;
  const pb_operand *x = &ins[0], *o = &outs[0];
  const int slot = x->dtype, ndim = x->ndim, axis = P->axis, islot = o->dtype;
  pb_loop_fn fn = slot >= 0 && slot < PB_NDT ? rd_ops[op].arg[slot] : NULL;
  bool ok = fn && islot >= PB_I8 && islot <= PB_U64 && axis >= 0 && axis < ndim &&
            o->ndim == ndim - 1;
  for (int d = 0, k = 0; ok && d < ndim; ++d)
    if (d != axis) ok = o->shape[k++] == x->shape[d];
  if (!ok)
    return pb_kernel_fail(ctx, PB_KERNEL_ETYPE, "expected a real operand, an axis in range and "
                          "an integer output of the operand's shape without the axis");
  const npy_intp len = x->shape[axis];
  if (len == 0)
    return pb_kernel_fail(ctx, PB_KERNEL_EVALUE, "the reduced axis %d is empty", axis);
  if (pb_operand_size(o) == 0) return 0;
  const int aslot = acc_slot(slot);
  bool reduced[PB_MAXDIMS] = {false};
  reduced[axis] = true;
  npy_intp per_dim[RD_MAXOPS * PB_MAXDIMS] = {0}, n;
  int64_t *iota = ctx->scratch(ctx, sizeof(int64_t) * (size_t)len);
  char *best = scratch_acc(ctx, x, axis, op, aslot, per_dim + 2 * PB_MAXDIMS, &n);
  char *idx = scratch_acc(ctx, x, axis, RD_SUM, PB_I64, per_dim + 3 * PB_MAXDIMS, &n); /* 0s */
  if (!iota || !best || !idx) return PB_KERNEL_ENOMEM;
  for (npy_intp i = 0; i < len; ++i) iota[i] = i;
  memcpy(per_dim, x->strides, sizeof(npy_intp) * (size_t)ndim);
  per_dim[PB_MAXDIMS + axis] = sizeof(int64_t);
  rd_space sp;
  layout_raw(ndim, x->shape, reduced, 4, per_dim, &sp);
  rd_task t = {.nop = 4, .nacc = 2, .base = {x->data, (char *)iota, best, idx},
               .item = {x->itemsize, sizeof(int64_t), slot_item(aslot), sizeof(int64_t)},
               .bytes = {0, 0, n * slot_item(aslot), n * (npy_intp)sizeof(int64_t)},
               .fn = fn, .combine = rd_ops[op].arg[aslot], .grain = rd_ops[op].grain};
  const int rc = run_task(&sp, &t, n, ctx);
  if (rc) return rc;
  /* int64 indices -> the output dtype, in C order over its strides */
  const int64_t *a = (const int64_t *)idx;
  npy_intp at[PB_MAXDIMS] = {0};
  for (npy_intp i = 0; i < n; ++i) {
    char *dst = o->data;
    for (int d = 0; d < o->ndim; ++d) dst += at[d] * o->strides[d];
    switch (o->itemsize) {
      case 1: *(uint8_t *)dst = (uint8_t)a[i]; break;
      case 2: *(uint16_t *)dst = (uint16_t)a[i]; break;
      case 4: *(uint32_t *)dst = (uint32_t)a[i]; break;
      default: *(uint64_t *)dst = (uint64_t)a[i]; break;
    }
    for (int d = o->ndim - 1; d >= 0 && ++at[d] == o->shape[d]; --d) at[d] = 0;
  }
  return 0;
}

#define PB_OP_KERNEL(NAME, IMPL, OP)                                                              \
  static int NAME##_kernel(const pb_operand *ins, int nin, pb_operand *outs, int nout,           \
                           const void *params, pb_kernel_ctx *ctx) {                              \
    return IMPL(OP, ins, outs, params, ctx);                                                     \
  }
PB_OP_KERNEL(cumsum, cumulative, RD_SUM)
PB_OP_KERNEL(cumprod, cumulative, RD_PROD)
PB_OP_KERNEL(cummax, cumulative, RD_MAX)
PB_OP_KERNEL(cummin, cumulative, RD_MIN)
PB_OP_KERNEL(cumlogsumexp, cumulative, RD_LOGADDEXP)
PB_OP_KERNEL(argmax, argreduce, RD_MAX)
PB_OP_KERNEL(argmin, argreduce, RD_MIN)

static const pb_kernel_def kernels[] = {
  {"cumsum", cumsum_kernel, 1, 1, sizeof(cumulative_params)},
  {"cumprod", cumprod_kernel, 1, 1, sizeof(cumulative_params)},
  {"cummax", cummax_kernel, 1, 1, sizeof(cumulative_params)},
  {"cummin", cummin_kernel, 1, 1, sizeof(cumulative_params)},
  {"cumlogsumexp", cumlogsumexp_kernel, 1, 1, sizeof(cumulative_params)},
  {"argmax", argmax_kernel, 1, 1, sizeof(argreduce_params)},
  {"argmin", argmin_kernel, 1, 1, sizeof(argreduce_params)},
};
PB_KERNELS(kernels)

static PyMethodDef methods[] = {
  {"reduce", (PyCFunction)(void (*)(void))reduce, METH_FASTCALL,
   "reduce(op, x, axes): x reduced by REDUCE_OPS[op] over the tuple of axes, as a new "
   "C-contiguous array."},
  {NULL, NULL, 0, NULL}};

/* name -> table row, one dict per kernel kind */
static int add_table(PyObject *m, const char *dict_name, int kind) {
  PyObject *d = PyDict_New();
  if (!d) return -1;
  for (int op = 0; op < RD_NOPS; ++op) {
    const char *n = kind == 0 ? rd_ops[op].reduce_name : kind == 1 ? rd_ops[op].scan_name
                                                                   : rd_ops[op].arg_name;
    if (!n) continue;
    PyObject *v = PyLong_FromLong(op);
    if (!v || PyDict_SetItemString(d, n, v) < 0) { Py_XDECREF(v); Py_DECREF(d); return -1; }
    Py_DECREF(v);
  }
  return PyModule_AddObject(m, dict_name, d) < 0 ? (Py_DECREF(d), -1) : 0;
}

/* REDUCE_LOOPS: each kernel's name -> the dtype slots it has a loop for, for the import-time
 * check against the primitives' declarations (backends/cpu/op_facts.py) */
static int add_loops(PyObject *m) {
  PyObject *d = PyDict_New();
  if (!d) return -1;
  for (int op = 0; op < RD_NOPS; ++op)
    for (int kind = 0; kind < 3; ++kind) {
      const char *n = kind == 0 ? rd_ops[op].reduce_name : kind == 1 ? rd_ops[op].scan_name
                                                                     : rd_ops[op].arg_name;
      const pb_loop_fn *loops = kind == 0 ? rd_ops[op].reduce : kind == 1 ? rd_ops[op].scan
                                                                          : rd_ops[op].arg;
      if (!n) continue;
      PyObject *slots = PyList_New(0);
      int bad = !slots;
      for (int slot = 0; !bad && slot < PB_NDT; ++slot) {
        if (!loops[slot]) continue;
        PyObject *v = PyLong_FromLong(slot);
        bad = !v || PyList_Append(slots, v) < 0;
        Py_XDECREF(v);
      }
      PyObject *t = bad ? NULL : PyList_AsTuple(slots);
      Py_XDECREF(slots);
      bad = !t || PyDict_SetItemString(d, n, t) < 0;
      Py_XDECREF(t);
      if (bad) { Py_DECREF(d); return -1; }
    }
  return PyModule_AddObject(m, "REDUCE_LOOPS", d) < 0 ? (Py_DECREF(d), -1) : 0;
}

int pb_register_reduce(PyObject *m) {
  if (PyModule_AddFunctions(m, methods) < 0) return -1;
  if (add_table(m, "REDUCE_OPS", 0) < 0 || add_table(m, "CUMULATIVE_OPS", 1) < 0 ||
      add_table(m, "ARG_OPS", 2) < 0 || add_loops(m) < 0)
    return -1;
  return 0;
}
