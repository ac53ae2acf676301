/* unfold / fold (im2col / col2im) kernels. */
#include "pb.h"

int pb_register_unfold(PyObject *m) {
  (void)m;
  return 0;
}
