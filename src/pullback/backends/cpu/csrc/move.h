/* Helpers shared by the data-moving families (copy.c, view.c, movement.c, gather.c, unfold.c):
 * byte-moving and typed combining inner loops for pb_iterate, and argument parsing. Every loop
 * has the pb_loop_fn shape with operand 0 the source and operand 1 the destination. */
#ifndef PB_MOVE_H
#define PB_MOVE_H
#include "pb.h"

/* y = x for an element size of 1, 2, 4, 8 or 16 bytes (NULL for any other size). Moving bytes
 * serves every dtype, including the float8 formats. */
pb_loop_fn pb_move_copy_loop(npy_intp itemsize);

/* y = y OP x for the dtype of `d` (defined in gather.c). SET is the byte copy; ADD/MUL cover
 * the numeric dtypes; MIN/MAX the numeric dtypes (NaN-propagating, complex compared
 * lexicographically) and bool (and/or). NULL when the dtype has no such loop. */
enum { PB_COMBINE_SET, PB_COMBINE_ADD, PB_COMBINE_MUL, PB_COMBINE_MIN, PB_COMBINE_MAX,
       PB_NCOMBINE };
pb_loop_fn pb_move_combine_loop(int op, PyArray_Descr *d);
/* the same for a dtype slot (the ABI's dtype code) and its element size */
pb_loop_fn pb_move_combine_loop_slot(int op, int slot, npy_intp itemsize);

/* The byte-moving loop for x's dtype, or NULL with a TypeError naming the kernel. */
pb_loop_fn pb_move_loop_for(PyArrayObject *x, const char *kernel, const char *arg);

/* A tuple of at most `max` ints into out; returns its length, or -1 with an exception. */
int pb_move_ints(PyObject *t, npy_intp *out, int max, const char *kernel, const char *arg);

/* A tuple of distinct dimension numbers in [0, limit) (ascending when `sorted`); returns its
 * length, or -1 with a ValueError naming kernel and argument. */
int pb_move_dims(PyObject *t, int *out, int limit, bool sorted, const char *kernel,
                 const char *arg);

/* pb_iterate with the GIL released (and `threads` OpenMP threads) when `work` elements make
 * it worthwhile. The loop must not touch Python objects. */
void pb_move_run(int ndim, const npy_intp *shape, int nop, char *const *base,
                 const npy_intp *strides, pb_loop_fn fn, const void *params, npy_intp work,
                 int threads);

/* Floor division for the window arithmetic of pad/unfold (b > 0). */
static inline npy_intp pb_floordiv(npy_intp a, npy_intp b) {
  npy_intp q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* n bytes from src to dst with non-temporal stores where dst is 16-byte aligned (defined in
 * copy.c); the writer fences (_mm_sfence) before the data is shared */
void pb_stream_copy(char *dst, const char *src, npy_intp n);

#endif
