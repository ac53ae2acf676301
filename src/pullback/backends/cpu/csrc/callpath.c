/* jit's call path in C: FastCall (one compiled signature: Arrays in, Arrays out) and JitBase
 * (the base of jitted functions, trying their FastCalls before the Python path). */
#include "schedule.h"
#include <structmember.h>

/* ---------------------------------------------------------------- the fast call path
 *
 * FastCall(program, Array, ShapedArray, in_avals, out_avals, mode): calling it with Arrays runs
 * the program and returns the result Arrays (mode 0: the single output; 1: a tuple; 2: a list,
 * for the caller to unflatten), or NotImplemented when the arguments are not plain Arrays of
 * the compiled avals (or their layout differs): the caller then takes the general path. The
 * Arrays' and avals' fields are read through their __slots__ offsets, and result Arrays are
 * built the way Array._new builds them (no __init__). */

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject *prog;   /* a Program */
  PyTypeObject *array_type, *aval_type;
  Py_ssize_t off_value, off_aval, off_shape, off_dtype, off_weak;
  PyObject *in_avals, *out_avals; /* tuples */
  int mode;
} FastCall;

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static int aval_equal(FastCall *f, PyObject *a, PyObject *b) {
  if (a == b) return 1;
  if (Py_TYPE(a) != f->aval_type || Py_TYPE(b) != f->aval_type)
    return PyObject_RichCompareBool(a, b, Py_EQ);
  PyObject *da = SLOT(a, f->off_dtype), *db = SLOT(b, f->off_dtype);
  PyObject *wa = SLOT(a, f->off_weak), *wb = SLOT(b, f->off_weak);
  if (!da || !db || !wa || !wb) return 0;
  if (wa != wb && PyObject_IsTrue(wa) != PyObject_IsTrue(wb)) return 0;
  if (da != db && !(PyArray_DescrCheck(da) && PyArray_DescrCheck(db) &&
                    PyArray_EquivTypes((PyArray_Descr *)da, (PyArray_Descr *)db)))
    return 0;
  PyObject *sa = SLOT(a, f->off_shape), *sb = SLOT(b, f->off_shape);
  return sa && sb && PyObject_RichCompareBool(sa, sb, Py_EQ) == 1;
}

static PyObject *fastcall_call(FastCall *f, PyObject *const *args, size_t nargsf, PyObject *kw) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (kw || n != PyTuple_GET_SIZE(f->in_avals) || n > 64) Py_RETURN_NOTIMPLEMENTED;
  PyObject *vals[64];
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *a = args[i];
    if (Py_TYPE(a) != f->array_type) Py_RETURN_NOTIMPLEMENTED;
    PyObject *aval = SLOT(a, f->off_aval), *v = SLOT(a, f->off_value);
    if (!aval || !v || !PyArray_CheckExact(v)) Py_RETURN_NOTIMPLEMENTED;
    int eq = aval_equal(f, aval, PyTuple_GET_ITEM(f->in_avals, i));
    if (eq < 0) return NULL;
    if (!eq) Py_RETURN_NOTIMPLEMENTED;
    vals[i] = v;
  }
  PyObject *outs = pb_program_run((PyObject *)f->prog, vals, n);
  if (!outs) {
    if (PyErr_ExceptionMatches(pb_layout_error)) {
      PyErr_Clear();
      Py_RETURN_NOTIMPLEMENTED;
    }
    return NULL;
  }
  const Py_ssize_t nout = PyTuple_GET_SIZE(outs);
  PyObject *res = f->mode == 0 ? NULL : f->mode == 1 ? PyTuple_New(nout) : PyList_New(nout);
  if (f->mode != 0 && !res) { Py_DECREF(outs); return NULL; }
  for (Py_ssize_t k = 0; k < nout; ++k) {
    PyObject *arr = f->array_type->tp_alloc(f->array_type, 0);
    if (!arr) { Py_XDECREF(res); Py_DECREF(outs); return NULL; }
    PyObject *o = PyTuple_GET_ITEM(outs, k), *av = PyTuple_GET_ITEM(f->out_avals, k);
    Py_INCREF(o);
    Py_INCREF(av);
    SLOT(arr, f->off_value) = o;
    SLOT(arr, f->off_aval) = av;
    if (f->mode == 0) { Py_DECREF(outs); return arr; }
    if (f->mode == 1) PyTuple_SET_ITEM(res, k, arr); else PyList_SET_ITEM(res, k, arr);
  }
  Py_DECREF(outs);
  return res;
}

static Py_ssize_t slot_offset(PyTypeObject *t, const char *name) {
  PyObject *d = PyObject_GetAttrString((PyObject *)t, name);
  if (!d) return -1;
  Py_ssize_t off = -1;
  if (Py_IS_TYPE(d, &PyMemberDescr_Type)) {
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type == T_OBJECT_EX || m->type == T_OBJECT) off = m->offset;
  }
  Py_DECREF(d);
  if (off < 0) PyErr_Format(PyExc_TypeError, "FastCall: %s.%s is not a __slots__ field",
                            t->tp_name, name);
  return off;
}

static PyObject *fastcall_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *prog, *at, *vt, *ins, *outs;
  int mode;
  if (!PyArg_ParseTuple(args, "O!O!O!O!O!i", pb_program_type(), &prog, &PyType_Type, &at,
                        &PyType_Type, &vt, &PyTuple_Type, &ins, &PyTuple_Type, &outs, &mode))
    return NULL;
  int nin, nout;
  pb_program_arity(prog, &nin, &nout);
  if (PyTuple_GET_SIZE(ins) != nin || PyTuple_GET_SIZE(outs) != nout || mode < 0 ||
      mode > 2 || (mode == 0 && nout != 1)) {
    PyErr_SetString(PyExc_ValueError, "FastCall: avals do not match the program");
    return NULL;
  }
  FastCall *f = (FastCall *)type->tp_alloc(type, 0);
  if (!f) return NULL;
  f->vectorcall = (vectorcallfunc)fastcall_call;
  Py_INCREF(prog); f->prog = prog;
  Py_INCREF(at); f->array_type = (PyTypeObject *)at;
  Py_INCREF(vt); f->aval_type = (PyTypeObject *)vt;
  Py_INCREF(ins); f->in_avals = ins;
  Py_INCREF(outs); f->out_avals = outs;
  f->mode = mode;
  if ((f->off_value = slot_offset(f->array_type, "_value")) < 0 ||
      (f->off_aval = slot_offset(f->array_type, "_aval")) < 0 ||
      (f->off_shape = slot_offset(f->aval_type, "shape")) < 0 ||
      (f->off_dtype = slot_offset(f->aval_type, "dtype")) < 0 ||
      (f->off_weak = slot_offset(f->aval_type, "weak_type")) < 0) {
    Py_DECREF(f);
    return NULL;
  }
  return (PyObject *)f;
}

static void fastcall_dealloc(FastCall *f) {
  Py_XDECREF(f->prog);
  Py_XDECREF(f->array_type);
  Py_XDECREF(f->aval_type);
  Py_XDECREF(f->in_avals);
  Py_XDECREF(f->out_avals);
  Py_TYPE(f)->tp_free((PyObject *)f);
}

static PyTypeObject FastCallType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "pullback.backends.cpu._cpu.FastCall",
  .tp_basicsize = sizeof(FastCall),
  .tp_dealloc = (destructor)fastcall_dealloc,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
  .tp_vectorcall_offset = offsetof(FastCall, vectorcall),
  .tp_call = PyVectorcall_Call,
  .tp_doc = "FastCall(program, Array, ShapedArray, in_avals, out_avals, mode): the common jit "
            "call (plain Arrays of the compiled avals) in one C call; NotImplemented otherwise.",
  .tp_new = fastcall_new,
};

/* ---------------------------------------------------------------- jit's dispatch
 *
 * JitBase is the C base of transforms.jit.JitFunction: calling a jitted function tries its
 * FastCalls (the `_fast` list of (FastCall, output tree or None)) when no keyword arguments are
 * given and no transformation is active with the cpu backend chosen, and otherwise calls the
 * Python method `_call(args, kwargs)` (tracing, caching, compiling, the general cases). */

typedef struct {
  PyObject_HEAD
  PyObject *fast; /* list */
} JitBase;

static PyObject *g_state, *g_config, *g_unflatten, *s_eager, *s_backend, *s_cpu, *s_call;

static PyObject *jitbase_call(JitBase *self, PyObject *args, PyObject *kw) {
  if ((!kw || PyDict_GET_SIZE(kw) == 0) && self->fast && PyList_GET_SIZE(self->fast) && g_state) {
    PyObject *eager = PyObject_GetAttr(g_state, s_eager);
    if (!eager) return NULL;
    int ok = eager == Py_True;
    Py_DECREF(eager);
    if (ok) {
      PyObject *b = PyObject_GetAttr(g_config, s_backend);
      if (!b) return NULL;
      ok = b == s_cpu || (PyUnicode_Check(b) && PyUnicode_Compare(b, s_cpu) == 0);
      Py_DECREF(b);
    }
    for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(self->fast); ++i) {
      PyObject *item = PyList_GET_ITEM(self->fast, i);
      if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 ||
          !Py_IS_TYPE(PyTuple_GET_ITEM(item, 0), &FastCallType))
        continue;
      FastCall *fc = (FastCall *)PyTuple_GET_ITEM(item, 0);
      PyObject *out = fastcall_call(fc, &PyTuple_GET_ITEM(args, 0),
                                    (size_t)PyTuple_GET_SIZE(args), NULL);
      if (!out) return NULL;
      if (out == Py_NotImplemented) { Py_DECREF(out); continue; }
      PyObject *tree = PyTuple_GET_ITEM(item, 1);
      if (tree == Py_None) return out;
      PyObject *r = PyObject_CallFunctionObjArgs(g_unflatten, tree, out, NULL);
      Py_DECREF(out);
      return r;
    }
  }
  PyObject *meth = PyObject_GetAttr((PyObject *)self, s_call);
  if (!meth) return NULL;
  PyObject *kwd = kw ? kw : PyDict_New();
  PyObject *r = kwd ? PyObject_CallFunctionObjArgs(meth, args, kwd, NULL) : NULL;
  if (!kw) Py_XDECREF(kwd);
  Py_DECREF(meth);
  return r;
}

static int jitbase_traverse(JitBase *self, visitproc visit, void *arg) {
  Py_VISIT(self->fast);
  return 0;
}

static int jitbase_clear(JitBase *self) {
  Py_CLEAR(self->fast);
  return 0;
}

static void jitbase_dealloc(JitBase *self) {
  PyObject_GC_UnTrack(self);
  jitbase_clear(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *jitbase_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  JitBase *self = (JitBase *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->fast = PyList_New(0);
  if (!self->fast) { Py_DECREF(self); return NULL; }
  return (PyObject *)self;
}

static PyMemberDef jitbase_members[] = {
  {"_fast", T_OBJECT_EX, offsetof(JitBase, fast), 0,
   "list of (FastCall, output tree or None) tried, in order, by a call"},
  {NULL, 0, 0, 0, NULL}};

static PyTypeObject JitBaseType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "pullback.backends.cpu._cpu.JitBase",
  .tp_basicsize = sizeof(JitBase),
  .tp_dealloc = (destructor)jitbase_dealloc,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
  .tp_traverse = (traverseproc)jitbase_traverse,
  .tp_clear = (inquiry)jitbase_clear,
  .tp_call = (ternaryfunc)jitbase_call,
  .tp_members = jitbase_members,
  .tp_doc = "The C base of jitted functions: the fast call path (see schedule.c).",
  .tp_new = jitbase_new,
};

static PyObject *jit_setup(PyObject *self, PyObject *args) {
  PyObject *state, *config, *unflatten;
  if (!PyArg_ParseTuple(args, "OOO", &state, &config, &unflatten)) return NULL;
  Py_XSETREF(g_state, Py_NewRef(state));
  Py_XSETREF(g_config, Py_NewRef(config));
  Py_XSETREF(g_unflatten, Py_NewRef(unflatten));
  Py_RETURN_NONE;
}

int pb_register_callpath(PyObject *m) {
  s_eager = PyUnicode_InternFromString("eager");
  s_backend = PyUnicode_InternFromString("backend");
  s_cpu = PyUnicode_InternFromString("cpu");
  s_call = PyUnicode_InternFromString("_call");
  if (!s_eager || !s_backend || !s_cpu || !s_call) return -1;
  PyTypeObject *types[2] = {&JitBaseType, &FastCallType};
  const char *names[2] = {"JitBase", "FastCall"};
  for (int i = 0; i < 2; ++i) {
    if (PyType_Ready(types[i]) < 0) return -1;
    Py_INCREF(types[i]);
    if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) {
      Py_DECREF(types[i]);
      return -1;
    }
  }
  static PyMethodDef methods[] = {
    {"jit_setup", jit_setup, METH_VARARGS,
     "jit_setup(trace_state, config, tree_unflatten): what JitBase's fast path consults."},
    {NULL, NULL, 0, NULL}};
  return PyModule_AddFunctions(m, methods);
}
