/* jit's call path in C: FastCall (one compiled signature: Arrays in, Arrays out) and JitBase
 * (the base of jitted functions, trying their FastCalls before the Python path). */
#include "schedule.h"
#include <structmember.h>

/* ---------------------------------------------------------------- the fast call path
 *
 * FastCall(program, Array, ShapedArray, in_avals, out_avals, in_spec, out_spec): calling it runs
 * the program on the Arrays found in its positional arguments and returns the result Arrays laid
 * out as out_spec, or NotImplemented when the arguments are not laid out as in_spec with Arrays
 * of the compiled avals (or their layout differs): the caller then takes the general path.
 *
 * A spec is a pytree made only of tuples, lists, dicts, namedtuples and None, with Ellipsis for
 * each Array leaf (a training step's `(params, opt_state, x, y)`); in_spec is the tuple of the
 * positional arguments' specs. A dict spec holds its keys in the order the leaves are numbered
 * (sorted), whatever the order of the argument's keys; a namedtuple spec is an instance of the
 * type (tuple-built: the caller vouches the type is not a custom pytree node). out_spec None
 * returns the results as a flat list, for the caller to unflatten into a tree with other node
 * types. The Arrays' and avals' fields are read
 * through their __slots__ offsets, and result Arrays are built the way Array._new builds them
 * (no __init__). */

#define FAST_MAX_LEAVES 256
#define FAST_MAX_DEPTH 32

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject *prog;   /* a Program */
  PyTypeObject *array_type, *aval_type;
  Py_ssize_t off_value, off_aval, off_shape, off_dtype, off_weak;
  PyObject *in_avals, *out_avals; /* tuples */
  PyObject *in_spec, *out_spec;
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

/* The ndarrays of the Arrays in `obj`, laid out as `spec`, appended to vals[*n...]: 1 when obj
 * matches (structure, leaf types, avals), 0 when not, -1 on error. */
static int gather(FastCall *f, PyObject *spec, PyObject *obj, PyObject **vals, Py_ssize_t *n,
                  int depth) {
  if (spec == Py_Ellipsis) {
    if (*n >= PyTuple_GET_SIZE(f->in_avals) || Py_TYPE(obj) != f->array_type) return 0;
    PyObject *aval = SLOT(obj, f->off_aval), *v = SLOT(obj, f->off_value);
    if (!aval || !v || !PyArray_CheckExact(v)) return 0;
    const int eq = aval_equal(f, aval, PyTuple_GET_ITEM(f->in_avals, *n));
    if (eq <= 0) return eq;
    vals[(*n)++] = v;
    return 1;
  }
  if (spec == Py_None) return obj == Py_None;
  if (Py_TYPE(obj) != Py_TYPE(spec) || depth >= FAST_MAX_DEPTH) return 0;
  if (PyDict_CheckExact(spec)) {
    if (PyDict_GET_SIZE(obj) != PyDict_GET_SIZE(spec)) return 0;
    Py_ssize_t pos = 0;
    PyObject *key, *sub;
    while (PyDict_Next(spec, &pos, &key, &sub)) {
      PyObject *item = PyDict_GetItemWithError(obj, key); /* borrowed */
      if (!item) return PyErr_Occurred() ? -1 : 0;
      Py_INCREF(item); /* comparing avals may run Python code that changes the dict */
      const int r = gather(f, sub, item, vals, n, depth + 1);
      Py_DECREF(item);
      if (r <= 0) return r;
    }
    return 1;
  }
  /* a tuple, a list or a namedtuple (the spec's nodes, checked when it was made):
   * PySequence_Fast_* read them all */
  const Py_ssize_t m = PySequence_Fast_GET_SIZE(spec);
  for (Py_ssize_t i = 0; i < m; ++i) {
    /* sizes re-read each time: comparing avals may run Python code */
    if (PySequence_Fast_GET_SIZE(obj) != m) return 0;
    const int r = gather(f, PySequence_Fast_GET_ITEM(spec, i), PySequence_Fast_GET_ITEM(obj, i),
                         vals, n, depth + 1);
    if (r <= 0) return r;
  }
  return 1;
}

/* result k as an Array (a new reference) */
static PyObject *wrap(FastCall *f, PyObject *outs, Py_ssize_t k) {
  if (k >= PyTuple_GET_SIZE(outs)) {
    PyErr_SetString(PyExc_RuntimeError, "FastCall: the output spec has more leaves than results");
    return NULL;
  }
  PyObject *arr = f->array_type->tp_alloc(f->array_type, 0);
  if (!arr) return NULL;
  PyObject *o = PyTuple_GET_ITEM(outs, k), *av = PyTuple_GET_ITEM(f->out_avals, k);
  SLOT(arr, f->off_value) = Py_NewRef(o);
  SLOT(arr, f->off_aval) = Py_NewRef(av);
  return arr;
}

/* the results laid out as `spec` (a new reference) */
static PyObject *build(FastCall *f, PyObject *spec, PyObject *outs, Py_ssize_t *k) {
  if (spec == Py_Ellipsis) return wrap(f, outs, (*k)++);
  if (spec == Py_None) Py_RETURN_NONE;
  if (PyDict_CheckExact(spec)) {
    PyObject *r = PyDict_New(), *key, *sub;
    Py_ssize_t pos = 0;
    while (r && PyDict_Next(spec, &pos, &key, &sub)) {
      PyObject *item = build(f, sub, outs, k);
      if (!item || PyDict_SetItem(r, key, item) < 0) Py_CLEAR(r);
      Py_XDECREF(item);
    }
    return r;
  }
  const bool tuple = PyTuple_Check(spec);
  const Py_ssize_t m = PySequence_Fast_GET_SIZE(spec);
  PyObject *r = tuple ? PyTuple_New(m) : PyList_New(m);
  for (Py_ssize_t i = 0; r && i < m; ++i) {
    PyObject *item = build(f, PySequence_Fast_GET_ITEM(spec, i), outs, k);
    if (!item) Py_CLEAR(r);
    else if (tuple) PyTuple_SET_ITEM(r, i, item);
    else PyList_SET_ITEM(r, i, item);
  }
  if (r && tuple && !PyTuple_CheckExact(spec)) { /* a namedtuple, built as unflatten does */
    PyObject *nt = PyObject_Call((PyObject *)Py_TYPE(spec), r, NULL);
    Py_DECREF(r);
    r = nt;
  }
  return r;
}

static PyObject *fastcall_call(FastCall *f, PyObject *const *args, size_t nargsf, PyObject *kw) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (kw || n != PyTuple_GET_SIZE(f->in_spec)) Py_RETURN_NOTIMPLEMENTED;
  PyObject *vals[FAST_MAX_LEAVES];
  Py_ssize_t nv = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const int r = gather(f, PyTuple_GET_ITEM(f->in_spec, i), args[i], vals, &nv, 0);
    if (r < 0) return NULL;
    if (!r) Py_RETURN_NOTIMPLEMENTED;
  }
  if (nv != PyTuple_GET_SIZE(f->in_avals)) Py_RETURN_NOTIMPLEMENTED;
  PyObject *outs = pb_program_run((PyObject *)f->prog, vals, nv);
  if (!outs) {
    if (PyErr_ExceptionMatches(pb_layout_error)) {
      PyErr_Clear();
      Py_RETURN_NOTIMPLEMENTED;
    }
    return NULL;
  }
  PyObject *res;
  Py_ssize_t k = 0;
  if (f->out_spec != Py_None) {
    res = build(f, f->out_spec, outs, &k);
  } else { /* a flat list, for the caller's unflatten */
    const Py_ssize_t nout = PyTuple_GET_SIZE(outs);
    res = PyList_New(nout);
    for (k = 0; res && k < nout; ++k) {
      PyObject *a = wrap(f, outs, k);
      if (!a) Py_CLEAR(res);
      else PyList_SET_ITEM(res, k, a);
    }
  }
  Py_DECREF(outs);
  return res;
}

/* the leaves of a spec (Ellipsis), -1 when it holds anything but tuples (or their subclasses:
 * namedtuples), lists, dicts, None and Ellipsis or nests deeper than FAST_MAX_DEPTH */
static Py_ssize_t spec_leaves(PyObject *spec, int depth) {
  if (spec == Py_Ellipsis) return 1;
  if (spec == Py_None) return 0;
  if (depth >= FAST_MAX_DEPTH) return -1;
  Py_ssize_t total = 0;
  if (PyDict_CheckExact(spec)) {
    Py_ssize_t pos = 0;
    PyObject *key, *sub;
    while (PyDict_Next(spec, &pos, &key, &sub)) {
      const Py_ssize_t c = spec_leaves(sub, depth + 1);
      if (c < 0) return -1;
      total += c;
    }
    return total;
  }
  if (!(PyTuple_Check(spec) || PyList_CheckExact(spec))) return -1;
  const Py_ssize_t m = PySequence_Fast_GET_SIZE(spec);
  for (Py_ssize_t i = 0; i < m; ++i) {
    const Py_ssize_t c = spec_leaves(PySequence_Fast_GET_ITEM(spec, i), depth + 1);
    if (c < 0) return -1;
    total += c;
  }
  return total;
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
  PyObject *prog, *at, *vt, *ins, *outs, *in_spec, *out_spec;
  if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O", pb_program_type(), &prog, &PyType_Type, &at,
                        &PyType_Type, &vt, &PyTuple_Type, &ins, &PyTuple_Type, &outs,
                        &PyTuple_Type, &in_spec, &out_spec))
    return NULL;
  int nin, nout;
  pb_program_arity(prog, &nin, &nout);
  /* a spec the walk cannot follow is refused here, not misread on a call */
  if (PyTuple_GET_SIZE(ins) != nin || PyTuple_GET_SIZE(outs) != nout || nin > FAST_MAX_LEAVES ||
      spec_leaves(in_spec, 0) != nin ||
      (out_spec != Py_None && spec_leaves(out_spec, 0) != nout)) {
    PyErr_SetString(PyExc_ValueError, "FastCall: avals or specs do not match the program");
    return NULL;
  }
  FastCall *f = (FastCall *)type->tp_alloc(type, 0);
  if (!f) return NULL;
  f->vectorcall = (vectorcallfunc)fastcall_call;
  f->prog = Py_NewRef(prog);
  f->array_type = (PyTypeObject *)Py_NewRef(at);
  f->aval_type = (PyTypeObject *)Py_NewRef(vt);
  f->in_avals = Py_NewRef(ins);
  f->out_avals = Py_NewRef(outs);
  f->in_spec = Py_NewRef(in_spec);
  f->out_spec = Py_NewRef(out_spec);
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
  Py_XDECREF(f->in_spec);
  Py_XDECREF(f->out_spec);
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
  .tp_doc = "FastCall(program, Array, ShapedArray, in_avals, out_avals, in_spec, out_spec): the "
            "common jit call (Arrays of the compiled avals in tuples, lists, dicts and namedtuples "
            "laid out as in_spec) in one C call; NotImplemented otherwise.",
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
  /* jit leaves a signature with more arrays than this to the general path */
  if (PyModule_AddIntConstant(m, "FAST_MAX_LEAVES", FAST_MAX_LEAVES) < 0) return -1;
  static PyMethodDef methods[] = {
    {"jit_setup", jit_setup, METH_VARARGS,
     "jit_setup(trace_state, config, tree_unflatten): what JitBase's fast path consults."},
    {NULL, NULL, 0, NULL}};
  return PyModule_AddFunctions(m, methods);
}
