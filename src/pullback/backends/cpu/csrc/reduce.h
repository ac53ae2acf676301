/* Internals shared by the reduction runner (reduce.c) and its row and broadcast helpers
 * (reduce_rows.c): the index space a reduction walks and the task it runs over it. */
#ifndef PB_REDUCE_H
#define PB_REDUCE_H
#include "pb.h"

#define RD_MAXOPS 4

/* acc[0..n) = OP(acc, row) over `rows` rows of x xs bytes apart (x's and acc's rows
 * contiguous): a reduction over the outer dim of short rows in one call, not one per row */
typedef void (*rd_cols_fn)(const char *x, npy_intp xs, npy_intp rows, char *acc, npy_intp n);

typedef struct {
  int nop;                       /* operands: inputs first, then nacc accumulators (last) */
  int nacc;                      /* accumulators get private copies when a reduced axis is split */
  char *base[RD_MAXOPS];
  npy_intp item[RD_MAXOPS];      /* element size of each operand (the combine's strides) */
  npy_intp bytes[RD_MAXOPS];     /* bytes of each accumulator buffer (for private copies) */
  pb_loop_fn fn;
  rd_cols_fn cols;               /* fn over many short rows into one (nop 2), or NULL */
  pb_loop_fn combine;            /* (right accs..., left accs...) -> left; NULL: no reduced split */
  npy_intp grain;
  int threads;                   /* threads the runner may use (0: OpenMP's maximum) */
  bool pairwise;                 /* a float sum: rows of one output meet pairwise (walk) */
} rd_task;

typedef struct {
  int ndim;
  npy_intp shape[PB_MAXDIMS];
  npy_intp strides[RD_MAXOPS * PB_MAXDIMS]; /* op-major, dims in walking order */
  bool reduced[PB_MAXDIMS];
} rd_space;

/* pb_iterate over `shape` from `base`, the rows of a float sum (t->pairwise) meeting pairwise */
void pb_rd_walk_space(const rd_space *sp, const rd_task *t, const npy_intp *shape,
                      char *const *base);
/* acc = acc combined with itself n times (count accumulators; tmp holds as many) */
void pb_rd_op_power(pb_loop_fn combine, char *acc, char *tmp, npy_intp count, npy_intp item,
                    npy_intp n);
/* dst (C-contiguous, shape) from src (the same with the `copy` dims 1), repeated along them */
void pb_rd_expand(char *dst, const char *src, int nd, const npy_intp *shape, const bool *copy,
                  npy_intp item);
#endif
