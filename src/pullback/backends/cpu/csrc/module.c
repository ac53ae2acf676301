/* The pullback._cpu extension module: each kernel family registers its own entry points, so a
 * new op touches only its family's file. */
#define PB_MODULE_INIT
#include "pb.h"
#include "schedule.h"

static PyObject *set_bf16(PyObject *self, PyObject *arg) {
  long num = PyLong_AsLong(arg);
  if (num == -1 && PyErr_Occurred()) return NULL;
  pb_set_bf16_typenum((int)num);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
  {"_set_bf16_typenum", set_bf16, METH_O, "Tell the kernels ml_dtypes' bfloat16 type number."},
  {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_cpu",
                                    "pullback's C kernels for the CPU backend.", -1, methods};

PyMODINIT_FUNC PyInit__cpu(void) {
  import_array();
  PyObject *m = PyModule_Create(&moddef);
  if (!m) return NULL;
  int (*const families[])(PyObject *) = {
      pb_register_elementwise, pb_register_reduce, pb_register_copy, pb_register_dot,
      pb_register_view, pb_register_cast, pb_register_sort, pb_register_gather,
      pb_register_movement, pb_register_schedule, pb_register_callpath,
      pb_register_alloc, pb_register_kernel_abi};
  for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); ++i)
    if (families[i](m) < 0) {
      Py_DECREF(m);
      return NULL;
    }
  return m;
}
