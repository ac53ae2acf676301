/* Data-moving kernels that cannot be views: pad, concatenate, dynamic_update_slice, iota. */
#include "pb.h"

int pb_register_movement(PyObject *m) {
  (void)m;
  return 0;
}
