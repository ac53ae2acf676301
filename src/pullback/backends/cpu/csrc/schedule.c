/* The compiled-program executor: `Program`, a list of thunks over one arena, run by one C call.
 *
 * The compiler (backends/cpu/compiler/) lowers a Jaxpr to thunks whose operands are references
 * (buffer kind, index, byte offset) plus static shapes and byte strides:
 *   arena  - the Program's one scratch block, reused across calls (64-byte aligned offsets)
 *   input  - the i-th array passed to run(). A program is compiled for its inputs' layouts: a
 *            C-contiguous one by default, or given strides (jit specializes on a non-contiguous
 *            argument's strides, so kernels read it in place, exactly as eager does). An input
 *            of another layout raises LayoutError when the program is strict or was compiled
 *            for given strides; a non-strict C-contiguous program copies it to a C-contiguous
 *            temporary instead.
 *   output - the i-th result, allocated fresh (C-contiguous) on every call, or a donated input;
 *            an output may also be a view of an input, a constant or another output (no copy)
 *   const  - an array held by the Program (any strides)
 * Step kinds: each is one entry of the step table (program.h's pb_step_kind: parse, run,
 * release), in its own file with its parser and runner together; pb_run_thunk dispatches
 * through the table:
 *   region - element-wise ops fused into one pass over memory (step_region.c).
 *   dot    - batched matmul, optionally with an epilogue region on its output (products.c).
 *   par    - independent products side by side on the pool's threads (products.c).
 *   reduce - a table reduction (step_reduce.c).
 *   dcopy  - a copy moved by start indices read at run time (step_dcopy.c).
 *   scan, while, cond - loops and branches over nested blocks, run from plans (loops.c).
 *   pipe   - a scan with products over its iterations on another thread (pipe.c).
 *   kernel - any registered C kernel (pb_kernel.h), GIL released (kernel_step.c).
 *   py     - a user Python callback, GIL reacquired (step_py.c).
 * Every reference is checked against its buffer's extent when the Program is built, so a bad
 * schedule raises instead of touching memory it does not own. */
#include "pool.h"
#include "step.h"
#include "kernel_abi.h"
#include "cast.h"
#include "move.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <structmember.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

PyObject *pb_layout_error;

/* ---------------------------------------------------------------- execution */

/* a's layout is the compiled one: its strides (ignoring size-1 dimensions, whose strides NumPy
 * leaves arbitrary) or C-contiguity, and alignment */
static int same_layout(PyArrayObject *a, const spec_t *sp) {
  if (!PyArray_ISALIGNED(a) || (uintptr_t)PyArray_BYTES(a) % (uintptr_t)sp->align) return 0;
  if (!sp->has_strides) return PyArray_IS_C_CONTIGUOUS(a);
  for (int d = 0; d < sp->ndim; ++d) {
    if (sp->shape[d] == 0) return 1;
    if (sp->shape[d] > 1 && PyArray_STRIDES(a)[d] != sp->strides[d]) return 0;
  }
  return 1;
}

static PyObject *program_run(Program *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != self->nin) {
    PyErr_Format(PyExc_TypeError, "jit(%U): the compiled program takes %d arrays, got %zd",
                 self->name, self->nin, nargs);
    return NULL;
  }
  PyObject *keep[64], *inarr_stack[64];
  PyObject **hold = nargs <= 64 ? keep : PyMem_Malloc(sizeof(PyObject *) * (size_t)nargs);
  PyObject **inarr = nargs <= 64 ? inarr_stack : PyMem_Malloc(sizeof(PyObject *) * (size_t)nargs);
  char *inb_stack[64], *outb_stack[64];
  char **inb = nargs <= 64 ? inb_stack : PyMem_Malloc(sizeof(char *) * (size_t)(nargs + 1));
  char **outb = self->nout <= 64 ? outb_stack : PyMem_Malloc(sizeof(char *) * (size_t)(self->nout + 1));
  PyObject *result = NULL;
  char *arena = NULL;
  int own_arena = 0, nheld = 0;
  if (!hold || !inb || !outb || !inarr) { PyErr_NoMemory(); goto fail; }
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    PyObject *o = args[i];
    if (!PyArray_Check(o)) {
      PyErr_Format(PyExc_TypeError, "jit(%U): argument %zd must be a numpy.ndarray, got %s",
                   self->name, i, Py_TYPE(o)->tp_name);
      goto fail;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    const spec_t *sp = &self->in[i];
    if (PyArray_DESCR(a) != sp->descr && !PyArray_EquivTypes(PyArray_DESCR(a), sp->descr)) {
      PyErr_Format(PyExc_TypeError, "jit(%U): argument %zd has dtype %S, the program was compiled "
                   "for %S", self->name, i, (PyObject *)PyArray_DESCR(a), (PyObject *)sp->descr);
      goto fail;
    }
    if (PyArray_NDIM(a) != sp->ndim || !PyArray_CompareLists(PyArray_SHAPE(a), sp->shape, sp->ndim)) {
      PyErr_Format(PyExc_TypeError, "jit(%U): argument %zd has %d dimensions or a shape other "
                   "than the compiled one", self->name, i, PyArray_NDIM(a));
      goto fail;
    }
    if (!same_layout(a, sp)) {
      if (sp->has_strides || self->strict) {
        PyErr_Format(pb_layout_error, "jit(%U): argument %zd has strides other than the compiled "
                     "ones", self->name, i);
        goto fail;
      }
      PyArrayObject *cc = pb_copy(a); /* the compiled (C-contiguous) layout */
      if (!cc) goto fail;
      hold[nheld++] = (PyObject *)cc;
      a = cc;
    }
    inarr[i] = (PyObject *)a;
    inb[i] = PyArray_BYTES(a);
  }
  result = PyTuple_New(self->nout);
  if (!result) goto fail;
  for (int k = 0; k < self->nout; ++k) {
    const spec_t *sp = &self->out[k];
    int j = sp->donate;
    PyArrayObject *out = NULL;
    outb[k] = NULL;
    if (sp->alias.kind >= 0) continue; /* a view, made after the steps ran */
    if (j >= 0) { /* a donated input of the same aval, when its buffer can be written */
      PyArrayObject *a = (PyArrayObject *)args[j];
      if (PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a) && PyArray_ISALIGNED(a) &&
          PyArray_BYTES(a) == inb[j]) {
        Py_INCREF(a);
        out = a;
      }
    }
    if (!out) {
      Py_INCREF(sp->descr);
      out = pb_new_array(sp->ndim, sp->shape, sp->descr);
      if (!out) goto fail;
    }
    PyTuple_SET_ITEM(result, k, (PyObject *)out);
    outb[k] = PyArray_BYTES(out);
  }
  const npy_intp need = self->arena_bytes + self->scratch_bytes;
  if (self->busy) { /* re-entered (another thread, or a callback step): a private arena */
    arena = need ? aligned_alloc(64, (size_t)((need + 63) / 64 * 64)) : NULL;
    if (need && !arena) { PyErr_NoMemory(); goto fail; }
    own_arena = 1;
  } else {
    if (!self->arena && need) {
      self->arena = aligned_alloc(64, (size_t)((need + 63) / 64 * 64));
      if (!self->arena) { PyErr_NoMemory(); goto fail; }
    }
    arena = self->arena;
    self->busy = 1;
  }
  char *cbase[1] = {NULL};
  char **constb = self->nconst ? PyMem_Malloc(sizeof(char *) * (size_t)self->nconst) : cbase;
  if (!constb) { PyErr_NoMemory(); goto release; }
  for (int i = 0; i < self->nconst; ++i)
    constb[i] = PyArray_BYTES((PyArrayObject *)PyTuple_GET_ITEM(self->consts, i));
  char *abase[1] = {arena};
  pb_step_failure failure; /* (only its flag is set up: the rest is written on a failure) */
  atomic_init(&failure.set, 0);
  run_ctx c = {.base = {abase, inb, outb, constb}, .threads = 1, .ts = NULL, .error = NULL,
               .failure = &failure,
               .scratch = arena ? arena + self->arena_bytes : NULL};
  int rc = 0;
  const unsigned fpmode = pb_get_fpmode();
  if (self->ftz) pb_set_fpmode(fpmode | PB_FTZ_DAZ);
#ifdef _OPENMP
  const int omp_threads = omp_get_max_threads();
#endif
  if (self->nogil) {
    c.threads = pb_pool_threads(self->max_threads);
#ifdef _OPENMP
    omp_set_num_threads(1); /* kernels inside stay on their thread: the pool parallelizes */
#endif
    c.ts = PyEval_SaveThread();
  }
  if (self->prof) {
    for (int i = 0; i < self->nthunk && rc == 0; ++i) {
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      rc = pb_run_thunk(&self->thunks[i], &c);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      self->prof[i] += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    }
    self->prof_calls++;
  } else {
    for (int i = 0; i < self->nthunk && rc == 0; ++i) rc = pb_run_thunk(&self->thunks[i], &c);
  }
  if (c.ts) PyEval_RestoreThread(c.ts);
  pb_set_fpmode(fpmode);
#ifdef _OPENMP
  if (self->nogil) omp_set_num_threads(omp_threads);
#endif
  if (constb != cbase) PyMem_Free(constb);
  for (int k = 0; k < self->nout && rc == 0; ++k) { /* outputs that are views */
    const spec_t *sp = &self->out[k];
    if (sp->alias.kind < 0) continue;
    PyObject *base = sp->alias.kind == BUF_INPUT ? inarr[sp->alias.index]
                     : sp->alias.kind == BUF_CONST ? PyTuple_GET_ITEM(self->consts, sp->alias.index)
                     : PyTuple_GET_ITEM(result, sp->alias.index);
    Py_INCREF(sp->descr);
    PyObject *v = pb_new_view((PyArrayObject *)base, sp->descr, sp->ndim, sp->shape, sp->strides,
                              PyArray_BYTES((PyArrayObject *)base) + sp->alias.offset);
    if (!v) { rc = -1; break; }
    PyTuple_SET_ITEM(result, k, v);
  }
  if (rc < 0) {
    if (failure.set && !PyErr_Occurred()) pb_kernel_raise(failure.name, failure.rc, &failure.ctx);
    if (c.error && !PyErr_Occurred()) PyErr_SetString(PyExc_MemoryError, c.error);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "jit: a step failed");
    Py_CLEAR(result);
  }
release:
  if (own_arena) free(arena);
  else self->busy = 0;
fail:
  for (int i = 0; i < nheld; ++i) Py_DECREF(hold[i]);
  if (hold && hold != keep) PyMem_Free(hold);
  if (inarr && inarr != inarr_stack) PyMem_Free(inarr);
  if (inb && inb != inb_stack) PyMem_Free(inb);
  if (outb && outb != outb_stack) PyMem_Free(outb);
  if (PyErr_Occurred()) Py_CLEAR(result);
  return result;
}

static PyObject *program_get_arena(Program *self, void *unused) {
  return PyLong_FromSsize_t(self->arena_bytes);
}
static PyObject *program_get_scratch(Program *self, void *unused) {
  return PyLong_FromSsize_t(self->scratch_bytes);
}
static PyObject *program_get_nstream(Program *self, void *unused) {
  return PyLong_FromLong(self->nstream);
}
static PyObject *program_get_nsteps(Program *self, void *unused) {
  return PyLong_FromLong(self->nthunk);
}
static PyObject *program_get_nogil(Program *self, void *unused) {
  return PyBool_FromLong(self->nogil);
}

static PyGetSetDef program_getset[] = {
  {"arena_bytes", (getter)program_get_arena, NULL, "bytes of the arena (reused across calls)", NULL},
  {"scratch_bytes", (getter)program_get_scratch, NULL, "bytes of per-thread region scratch", NULL},
  {"num_steps", (getter)program_get_nsteps, NULL, "number of thunks", NULL},
  {"streamed_outputs", (getter)program_get_nstream, NULL,
   "region outputs written with streaming (non-temporal) stores", NULL},
  {"nogil", (getter)program_get_nogil, NULL, "whether run() releases the GIL", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

/* profile(on) -> None; profile() -> per-step mean seconds since profiling was switched on */
static PyObject *program_profile(Program *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs == 1) {
    int on = PyObject_IsTrue(args[0]);
    if (on < 0) return NULL;
    PyMem_Free(self->prof);
    self->prof = NULL;
    self->prof_calls = 0;
    if (on && !(self->prof = PyMem_Calloc((size_t)self->nthunk + 1, sizeof(double))))
      return PyErr_NoMemory();
    Py_RETURN_NONE;
  }
  PyObject *out = PyList_New(self->nthunk);
  for (int i = 0; out && i < self->nthunk; ++i)
    PyList_SET_ITEM(out, i, PyFloat_FromDouble(self->prof && self->prof_calls
                                                   ? self->prof[i] / (double)self->prof_calls
                                                   : 0.0));
  return out;
}

/* split_dims() -> per step: the dimensions a region's chunks may cut (a tuple), None for
 * other kinds (introspection: regions with reduction accumulators cut only some) */
static PyObject *program_split_dims(Program *self, PyObject *unused) {
  PyObject *out = PyList_New(self->nthunk);
  for (int i = 0; out && i < self->nthunk; ++i) {
    const thunk_t *t = &self->thunks[i];
    PyObject *dims = Py_None;
    if (t->kind == TH_REGION) {
      if (!(dims = PyTuple_New(0))) { Py_CLEAR(out); break; }
      for (int d = 0; d < t->ndim && !t->nosplit; ++d) {
        if (!(t->splitdims >> d & 1)) continue;
        PyObject *v = PyLong_FromLong(d);
        if (!v || _PyTuple_Resize(&dims, PyTuple_GET_SIZE(dims) + 1) < 0) {
          Py_XDECREF(v);
          Py_XDECREF(dims);
          dims = NULL;
          break;
        }
        PyTuple_SET_ITEM(dims, PyTuple_GET_SIZE(dims) - 1, v);
      }
      if (!dims) { Py_CLEAR(out); break; }
    } else {
      Py_INCREF(dims);
    }
    PyList_SET_ITEM(out, i, dims);
  }
  return out;
}

static PyMethodDef program_methods[] = {
  {"split_dims", (PyCFunction)program_split_dims, METH_NOARGS,
   "split_dims() -> per step, the dimensions a region step's chunks may cut (None for other "
   "kinds): a region with reduction accumulators cuts only those along which every "
   "accumulator moves."},
  {"profile", (PyCFunction)(void (*)(void))program_profile, METH_FASTCALL,
   "profile(True) starts timing every step (profile(False) stops); profile() returns the mean "
   "seconds per step over the calls since."},
  {"run", (PyCFunction)(void (*)(void))program_run, METH_FASTCALL,
   "run(*inputs) -> tuple of outputs: checks the inputs' dtypes and shapes, allocates the "
   "outputs and runs every step in order (GIL released for large programs)."},
  {NULL, NULL, 0, NULL}};

static PyTypeObject ProgramType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "pullback.backends.cpu._cpu.Program",
  .tp_basicsize = sizeof(Program),
  .tp_dealloc = (destructor)pb_program_dealloc,
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "Program(name, arena_bytes, in_specs, out_specs, consts, steps, nogil): a compiled "
            "schedule of C kernels over one arena (see schedule.c).",
  .tp_methods = program_methods,
  .tp_getset = program_getset,
  .tp_new = pb_program_new,
};

/* for callpath.c */
PyObject *pb_program_run(PyObject *p, PyObject *const *args, Py_ssize_t n) {
  return program_run((Program *)p, args, n);
}
PyTypeObject *pb_program_type(void) { return &ProgramType; }
void pb_program_arity(PyObject *p, int *nin, int *nout) {
  *nin = ((Program *)p)->nin;
  *nout = ((Program *)p)->nout;
}

static PyObject *sched_slots(PyObject *self, PyObject *dt) {
  PyArray_Descr *d = NULL;
  if (!PyArray_DescrConverter(dt, &d)) return NULL;
  int s = pb_dtype_slot(d);
  int c = pb_cast_slot(d);
  Py_DECREF(d);
  return Py_BuildValue("ii", s, c);
}

static PyObject *sched_max_threads(PyObject *self, PyObject *unused) {
  int n = 1;
#ifdef _OPENMP
  n = omp_get_max_threads();
#endif
  return PyLong_FromLong(n);
}

static PyObject *sched_ewise_grains(PyObject *self, PyObject *unused) {
  PyObject *t = PyTuple_New(pb_ewise_nops());
  if (!t) return NULL;
  for (int i = 0; i < pb_ewise_nops(); ++i) {
    PyObject *v = PyLong_FromSsize_t(pb_ewise_grain(i));
    if (!v) { Py_DECREF(t); return NULL; }
    PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static PyObject *sched_pair_ops(PyObject *self, PyObject *unused) {
  PyObject *t = PyList_New(0);
  for (int i = 0; t && i < pb_ewise_nops(); ++i) {
    if (!pb_pair_loop(i, 0)) continue;
    PyObject *v = PyLong_FromLong(i);
    if (!v || PyList_Append(t, v) < 0) Py_CLEAR(t);
    Py_XDECREF(v);
  }
  return t;
}

static PyMethodDef methods[] = {
  {"schedule_slots", sched_slots, METH_O,
   "schedule_slots(dtype) -> (dtype slot, cast slot): the kernel tables' indices of a dtype."},
  {"schedule_max_threads", sched_max_threads, METH_NOARGS,
   "schedule_max_threads(): OpenMP threads a program may use."},
  {"schedule_ewise_grains", sched_ewise_grains, METH_NOARGS,
   "schedule_ewise_grains(): per EWISE_OPS row, elements per thread worth an OpenMP split."},
  {"schedule_pair_ops", sched_pair_ops, METH_NOARGS,
   "schedule_pair_ops(): the EWISE_OPS rows with float32 pair loops f(a) OP b (vecmath.h)."},
  {NULL, NULL, 0, NULL}};

int pb_register_schedule(PyObject *m) {
  if (PyType_Ready(&ProgramType) < 0) return -1;
  Py_INCREF(&ProgramType);
  if (PyModule_AddObject(m, "Program", (PyObject *)&ProgramType) < 0) {
    Py_DECREF(&ProgramType);
    return -1;
  }
  if (PyModule_AddFunctions(m, methods) < 0) return -1;
  pb_layout_error = PyErr_NewExceptionWithDoc(
      "pullback.backends.cpu._cpu.LayoutError",
      "An argument's memory layout differs from the one its program was compiled for.",
      PyExc_ValueError, NULL);
  if (!pb_layout_error || PyModule_AddObject(m, "LayoutError", pb_layout_error) < 0) return -1;
  Py_INCREF(pb_layout_error);
  PyObject *consts = Py_BuildValue(
      "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "arena", BUF_ARENA, "input", BUF_INPUT,
      "output", BUF_OUTPUT, "const", BUF_CONST, "ewise", LOOP_EWISE, "cast", LOOP_CAST, "copy",
      LOOP_COPY, "select", LOOP_SELECT, "reduce", LOOP_REDUCE, "pair", LOOP_PAIR, "tile", RG_TILE);
  if (!consts) return -1;
  if (PyModule_AddObject(m, "SCHEDULE", consts) < 0) { Py_DECREF(consts); return -1; }
  return 0;
}
