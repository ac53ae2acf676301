/* Building a Program from the compiler's step tuples: every field parsed and every operand
 * checked against its buffer's extent, so a malformed schedule raises ValueError here instead of
 * touching memory at run time. */
#include "program.h"
#include "cast.h"
#include "move.h"
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---------------------------------------------------------------- construction */


int pb_parse_ints(PyObject *t, npy_intp *out, int max, const char *what) {
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) > max) {
    PyErr_Format(PyExc_ValueError, "Program: %s must be a tuple of at most %d ints", what, max);
    return -1;
  }
  int n = (int)PyTuple_GET_SIZE(t);
  for (int i = 0; i < n; ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    out[i] = (npy_intp)v;
  }
  return n;
}

static int parse_ref(Program *p, PyObject *o, ref_t *r) {
  long long off;
  PyObject *loops = NULL;
  if (!PyArg_ParseTuple(o, "iiL|O!", &r->kind, &r->index, &off, &PyTuple_Type, &loops)) return -1;
  r->offset = (npy_intp)off;
  r->nloop = 0;
  if (loops) { /* ((level, stride), ...): levels of the loops enclosing this operand */
    if (PyTuple_GET_SIZE(loops) > PB_MAXLOOP) {
      PyErr_SetString(PyExc_ValueError, "Program: too many loop terms in a reference");
      return -1;
    }
    for (Py_ssize_t l = 0; l < PyTuple_GET_SIZE(loops); ++l) {
      int lvl;
      long long st;
      if (!PyArg_ParseTuple(PyTuple_GET_ITEM(loops, l), "iL", &lvl, &st)) return -1;
      if (lvl < 0 || lvl >= p->depth) {
        PyErr_Format(PyExc_ValueError, "Program: a reference moves with loop level %d outside "
                     "its loops", lvl);
        return -1;
      }
      r->lvl[r->nloop] = lvl;
      r->lstr[r->nloop++] = (npy_intp)st;
    }
  }
  int count = r->kind == BUF_ARENA ? 1 : r->kind == BUF_INPUT ? p->nin
              : r->kind == BUF_OUTPUT ? p->nout : r->kind == BUF_CONST ? p->nconst : -1;
  if (count < 0 || r->index < 0 || r->index >= count) {
    PyErr_Format(PyExc_ValueError, "Program: bad buffer reference (%d, %d)", r->kind, r->index);
    return -1;
  }
  return 0;
}

/* The operand (ref, shape, strides, item) must stay inside its buffer. */
static int check_extent(Program *p, const ref_t *r, int nd, const npy_intp *shape,
                        const npy_intp *strides, npy_intp item) {
  npy_intp lo = r->offset, hi = r->offset + item;
  for (int l = 0; l < r->nloop; ++l) { /* every iteration's address */
    const npy_intp n = p->loop_len[r->lvl[l]];
    if (n == 0) return 0; /* the loop never runs */
    npy_intp span = (n - 1) * r->lstr[l];
    if (span < 0) lo += span; else hi += span;
  }
  for (int d = 0; d < nd; ++d) {
    if (shape[d] < 0) goto bad;
    if (shape[d] == 0) return 0;
    npy_intp span = (shape[d] - 1) * strides[d];
    if (span < 0) lo += span; else hi += span;
  }
  npy_intp lim;
  if (r->kind == BUF_CONST) {
    PyArrayObject *c = (PyArrayObject *)PyTuple_GET_ITEM(p->consts, r->index);
    /* constant operands address the constant's own memory: its data pointer is offset 0 */
    npy_intp clo = 0, chi = PyArray_ITEMSIZE(c);
    for (int d = 0; d < PyArray_NDIM(c); ++d) {
      if (PyArray_DIM(c, d) == 0) { chi = 0; break; }
      npy_intp span = (PyArray_DIM(c, d) - 1) * PyArray_STRIDE(c, d);
      if (span < 0) clo += span; else chi += span;
    }
    if (lo >= clo && hi <= chi) return 0;
    goto bad;
  }
  if (r->kind == BUF_ARENA) {
    lim = p->arena_bytes;
    if (lo >= 0 && hi <= lim) return 0;
  } else {
    const spec_t *sp = r->kind == BUF_INPUT ? &p->in[r->index] : &p->out[r->index];
    if (lo >= sp->lo && hi <= sp->hi) return 0;
  }
bad:
  PyErr_Format(PyExc_ValueError, "Program: an operand of buffer (%d, %d) at offset %zd leaves "
               "its buffer", r->kind, r->index, (Py_ssize_t)r->offset);
  return -1;
}

int pb_parse_ref(Program *p, PyObject *o, ref_t *r) { return parse_ref(p, o, r); }
int pb_check_extent(Program *p, const ref_t *r, int nd, const npy_intp *shape,
                    const npy_intp *strides, npy_intp item) {
  return check_extent(p, r, nd, shape, strides, item);
}

const pb_step_kind *const pb_step_kinds[] = {&pb_step_kernel, NULL};

static int parse_region(Program *p, thunk_t *t, PyObject *spec) {
  /* ("region", shape, refs, strides, items, steps, grain[, inits]) with inits a tuple of
   * (operand, reduce op, slot, elements): reduction accumulators (the region then runs on one
   * thread: its chunks would share them) */
  PyObject *shape, *refs, *strides, *items, *steps, *inits = NULL, *stream = NULL;
  long long grain;
  const char *kind;
  if (!PyArg_ParseTuple(spec, "sO!O!O!O!O!L|O!O!", &kind, &PyTuple_Type, &shape, &PyTuple_Type,
                        &refs, &PyTuple_Type, &strides, &PyTuple_Type, &items, &PyTuple_Type,
                        &steps, &grain, &PyTuple_Type, &inits, &PyTuple_Type, &stream))
    return -1;
  if (inits && PyTuple_GET_SIZE(inits) == 0) inits = NULL;
  t->kind = TH_REGION;
  t->grain = (npy_intp)(grain > 0 ? grain : 1);
  t->shape = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  if (!t->shape) { PyErr_NoMemory(); return -1; }
  if ((t->ndim = pb_parse_ints(shape, t->shape, PB_MAXDIMS, "a region shape")) < 0) return -1;
  t->nref = (int)PyTuple_GET_SIZE(refs);
  if (t->nref < 1 || t->nref > RG_MAXOPND || PyTuple_GET_SIZE(strides) != t->nref ||
      PyTuple_GET_SIZE(items) != t->nref) {
    PyErr_Format(PyExc_ValueError, "Program: a region takes 1 to %d operands with strides and "
                 "element sizes", RG_MAXOPND);
    return -1;
  }
  t->refs = PyMem_Calloc((size_t)t->nref, sizeof(ref_t));
  t->strides = PyMem_Calloc((size_t)(t->nref * (t->ndim ? t->ndim : 1)), sizeof(npy_intp));
  if (!t->refs || !t->strides) { PyErr_NoMemory(); return -1; }
  for (int i = 0; i < t->nref; ++i) {
    if (parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0) return -1;
    npy_intp st[PB_MAXDIMS];
    if (pb_parse_ints(PyTuple_GET_ITEM(strides, i), st, PB_MAXDIMS, "region strides") != t->ndim) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: region strides != ndim");
      return -1;
    }
    memcpy(t->strides + i * t->ndim, st, sizeof(npy_intp) * (size_t)t->ndim);
    long long item = PyLong_AsLongLong(PyTuple_GET_ITEM(items, i));
    if (item <= 0 || item > 16) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad element size");
      return -1;
    }
    if (check_extent(p, &t->refs[i], t->ndim, t->shape, st, (npy_intp)item) < 0) return -1;
  }
  t->rg.nsteps = (int)PyTuple_GET_SIZE(steps);
  t->rg.steps = PyMem_Calloc((size_t)(t->rg.nsteps ? t->rg.nsteps : 1), sizeof(rg_step));
  if (!t->rg.steps) { PyErr_NoMemory(); return -1; }
  t->rg.nslots = 0;
  for (int k = 0; k < t->rg.nsteps; ++k) {
    /* (loop kind, a, b, params tuple, operand ids, element sizes) */
    int lk, a, b;
    PyObject *prm, *opnd, *its;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(steps, k), "iiiO!O!O!", &lk, &a, &b, &PyTuple_Type,
                          &prm, &PyTuple_Type, &opnd, &PyTuple_Type, &its))
      return -1;
    rg_step *st = &t->rg.steps[k];
    pb_loop_fn fn = NULL;
    int nin = -1;
    switch (lk) {
      case LOOP_EWISE: fn = pb_ewise_loop(a, b); nin = pb_ewise_nin(a); break;
      case LOOP_CAST: fn = pb_cast_loop(a, b); nin = 1; break;
      case LOOP_COPY: fn = pb_move_copy_loop(a); nin = 1; break;
      case LOOP_SELECT: fn = pb_select_loop(a, b); nin = (int)PyTuple_GET_SIZE(opnd) - 1; break;
      case LOOP_REDUCE: fn = pb_reduce_loop(a, b); nin = 1; break;
      case LOOP_PAIR: fn = pb_pair_loop(a, b); nin = 2; break;
    }
    if (!fn || nin < 1 || nin > RG_MAXSTEPIN || PyTuple_GET_SIZE(opnd) != nin + 1 ||
        PyTuple_GET_SIZE(its) != nin + 1) {
      PyErr_Format(PyExc_ValueError, "Program: region step %d (kind %d, %d, %d) has no kernel or "
                   "the wrong operand count", k, lk, a, b);
      return -1;
    }
    st->fn = fn;
    st->nin = nin;
    npy_intp pv[4] = {0, 0, 0, 0};
    if (pb_parse_ints(prm, pv, 4, "step params") < 0) return -1;
    if (lk == LOOP_SELECT) {
      pb_select_params sp = {(int)pv[0], (int)pv[1], (int64_t)pv[2]};
      if (sp.count != nin - 1 || sp.count > PB_SELECT_MAX) {
        PyErr_SetString(PyExc_ValueError, "Program: bad select_n step");
        return -1;
      }
      memcpy(st->prm, &sp, sizeof(sp));
    } else {
      for (int i = 0; i < 4; ++i) st->prm[i] = (int64_t)pv[i];
    }
    npy_intp ids[RG_MAXSTEPIN + 1], sz[RG_MAXSTEPIN + 1];
    pb_parse_ints(opnd, ids, RG_MAXSTEPIN + 1, "step operands");
    if (pb_parse_ints(its, sz, RG_MAXSTEPIN + 1, "step element sizes") < 0) return -1;
    for (int i = 0; i <= nin; ++i) {
      if (ids[i] >= t->nref || sz[i] <= 0 || sz[i] > 16) {
        PyErr_SetString(PyExc_ValueError, "Program: bad region step operand");
        return -1;
      }
      if (ids[i] < 0 && -ids[i] > t->rg.nslots) t->rg.nslots = (int)-ids[i];
      st->opnd[i] = (int)ids[i];
      st->item[i] = sz[i];
    }
  }
  /* A large program output of a memory-bound region (cheap ops only) is written with
   * non-temporal stores: the caller gets it, no later step reads it while it is cached, and
   * streaming stores skip reading each line before writing it (measured: x * y + z on 4M
   * float32, 64 MB moved instead of 80 MB: 1.9 against 2.4 ms). A region with a costlier op
   * writes its output directly: staging a tile and streaming it out stalls on the write
   * buffers, where ordinary stores drain behind the arithmetic (4M float32, medians of 11
   * interleaved rounds, streamed against direct: exp(x) * y + sin(z) 2874-3124 against
   * 2457-2492 us, log(|x|) 2009-2097 against 1625-1706, x / y + z 1495-1549 against
   * 1460-1521). */
  npy_intp nel = 1;
  for (int d = 0; d < t->ndim; ++d) nel *= t->shape[d];
  t->rg.ntslot = -1;
  npy_intp in_loop[RG_MAXOPND];
  const int nloop = stream ? pb_parse_ints(stream, in_loop, RG_MAXOPND, "streamed operands") : 0;
  if (nloop < 0) return -1;
  for (int k = 0; k < t->rg.nsteps; ++k) {
    rg_step *st = &t->rg.steps[k];
    const int o = st->opnd[st->nin];
    int loop_slice = 0; /* Likewise a loop's ys[i] no step of the body reads (a residual for
                         * the backward pass): a scan step writes a few KB of a stacked array
                         * far too big to stay cached (run_scan fences once at the end) */
    for (int i = 0; i < nloop; ++i) loop_slice |= in_loop[i] == o && p->depth > 0;
    if (o >= 0 && !inits && ((t->refs[o].kind == BUF_OUTPUT && p->depth == 0 &&
                              t->grain >= PB_GRAIN_CHEAP &&
                              nel * st->item[st->nin] >= PB_NT_MIN_BYTES) ||
                             (loop_slice && nel * st->item[st->nin] >= 4096))) {
      st->nt = 1;
      t->rg.ntslot = t->rg.nslots;
      t->rg.ntloop |= loop_slice;
      p->nstream += !loop_slice;
    }
  }
  if (t->rg.ntslot >= 0) t->rg.nslots++;
  npy_intp need = (npy_intp)p->max_threads * t->rg.nslots * RG_SLOT_BYTES;
  if (need > p->scratch_bytes) p->scratch_bytes = need;
  t->ninit = inits ? (int)PyTuple_GET_SIZE(inits) : 0;
  t->nosplit = t->ninit > 0;
  if (t->ninit) {
    t->inits = PyMem_Calloc((size_t)t->ninit, sizeof(rg_init));
    if (!t->inits) { PyErr_NoMemory(); return -1; }
    for (int k = 0; k < t->ninit; ++k) {
      rg_init *in = &t->inits[k];
      long long ne;
      char one[16];
      if (!PyArg_ParseTuple(PyTuple_GET_ITEM(inits, k), "iiiL", &in->ext, &in->op, &in->slot, &ne))
        return -1;
      in->nelems = (npy_intp)ne;
      npy_intp item = pb_reduce_identity(in->op, in->slot, one);
      if (in->ext < 0 || in->ext >= t->nref || !item || ne < 0 ||
          check_extent(p, &t->refs[in->ext], 1, &in->nelems, &item, item) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad accumulator");
        return -1;
      }
    }
  }
  return 0;
}

static int parse_dot(Program *p, thunk_t *t, PyObject *spec) {
  /* ("dot", sa, sb, so, (Bt, M, N, K), refs(3), strides(3 x 3), epilogue region or None[,
   * reads: when the epilogue reads the product element for element, so that it may run on each
   * chunk's slice, the epilogue operands that read it (else empty)]) */
  const char *kind;
  PyObject *dims, *refs, *strides, *epi, *reads = NULL;
  if (!PyArg_ParseTuple(spec, "siiiO!O!O!O|O!", &kind, &t->sa, &t->sb, &t->so, &PyTuple_Type,
                        &dims, &PyTuple_Type, &refs, &PyTuple_Type, &strides, &epi,
                        &PyTuple_Type, &reads))
    return -1;
  t->kind = TH_DOT;
  if (pb_parse_ints(dims, t->dims, 4, "dot dims") != 4 || PyTuple_GET_SIZE(refs) != 3 ||
      PyTuple_GET_SIZE(strides) != 3) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad dot step");
    return -1;
  }
  t->nref = 3;
  t->refs = PyMem_Calloc(3, sizeof(ref_t));
  t->strides = PyMem_Calloc(9, sizeof(npy_intp));
  if (!t->refs || !t->strides) { PyErr_NoMemory(); return -1; }
  const npy_intp Bt = t->dims[0], M = t->dims[1], N = t->dims[2], K = t->dims[3];
  const npy_intp shp[3][3] = {{Bt, M, K}, {Bt, K, N}, {Bt, M, N}};
  const int slots[3] = {t->sa, t->sb, t->so};
  for (int i = 0; i < 3; ++i) {
    if (parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0) return -1;
    if (pb_parse_ints(PyTuple_GET_ITEM(strides, i), t->strides + 3 * i, 3, "dot strides") != 3) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad dot strides");
      return -1;
    }
    if (slots[i] < 0 || slots[i] >= pb_cast_nslots()) {
      PyErr_SetString(PyExc_ValueError, "Program: bad dot dtype slot");
      return -1;
    }
    PyArray_Descr *d = pb_cast_descr(slots[i]);
    if (!d) return -1;
    npy_intp item = PyDataType_ELSIZE(d);
    Py_DECREF(d);
    if (check_extent(p, &t->refs[i], 3, shp[i], t->strides + 3 * i, item) < 0) return -1;
  }
  if (t->strides[8] <= 0 || (N > 1 && t->strides[7] < N * t->strides[8])) {
    PyErr_SetString(PyExc_ValueError, "Program: a dot output must be row-major");
    return -1;
  }
  if (pb_dot_prepare() < 0) return -1;
  if (epi != Py_None) {
    t->epilogue = PyMem_Calloc(1, sizeof(thunk_t));
    if (!t->epilogue) { PyErr_NoMemory(); return -1; }
    if (parse_region(p, t->epilogue, epi) < 0) return -1;
  }
  const Py_ssize_t nr = reads ? PyTuple_GET_SIZE(reads) : 0;
  for (Py_ssize_t i = 0; i < nr; ++i) {
    const long r = PyLong_AsLong(PyTuple_GET_ITEM(reads, i));
    if (r == -1 && PyErr_Occurred()) return -1;
    if (!t->epilogue || r < 0 || r >= t->epilogue->nref) {
      PyErr_SetString(PyExc_ValueError, "Program: bad dot epilogue operand");
      return -1;
    }
    t->epilogue->reads |= 1u << r;
  }
  return 0;
}

static int parse_reduce(Program *p, thunk_t *t, PyObject *spec) {
  /* ("reduce", op, slot, shape, reduced, refs(x, acc, out), xstrides, item, acc_item) */
  const char *kind;
  PyObject *shape, *reduced, *refs, *xstrides;
  long long item, aitem;
  if (!PyArg_ParseTuple(spec, "siiO!O!O!O!LL", &kind, &t->op, &t->slot, &PyTuple_Type, &shape,
                        &PyTuple_Type, &reduced, &PyTuple_Type, &refs, &PyTuple_Type, &xstrides,
                        &item, &aitem))
    return -1;
  t->kind = TH_REDUCE;
  if (!pb_reduce_supported(t->op, t->slot)) {
    PyErr_Format(PyExc_ValueError, "Program: no reduction kernel (%d, %d)", t->op, t->slot);
    return -1;
  }
  t->shape = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  t->strides = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  t->refs = PyMem_Calloc(3, sizeof(ref_t));
  if (!t->shape || !t->strides || !t->refs) { PyErr_NoMemory(); return -1; }
  t->nref = 3;
  if ((t->ndim = pb_parse_ints(shape, t->shape, PB_MAXDIMS, "reduce shape")) < 0) return -1;
  npy_intp red[PB_MAXDIMS];
  if (pb_parse_ints(reduced, red, PB_MAXDIMS, "reduced") != t->ndim ||
      pb_parse_ints(xstrides, t->strides, PB_MAXDIMS, "reduce strides") != t->ndim ||
      PyTuple_GET_SIZE(refs) != 3) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad reduce step");
    return -1;
  }
  npy_intp oshape[PB_MAXDIMS], ostr[PB_MAXDIMS], onum = 1;
  int ond = 0;
  for (int d = 0; d < t->ndim; ++d) {
    t->reduced[d] = red[d] != 0;
    if (!t->reduced[d]) { oshape[ond++] = t->shape[d]; onum *= t->shape[d]; }
  }
  for (int d = 0; d < ond; ++d) ostr[d] = 0;
  for (int i = 0; i < 3; ++i)
    if (parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0) return -1;
  if (check_extent(p, &t->refs[0], t->ndim, t->shape, t->strides, item) < 0) return -1;
  /* acc and out are C-contiguous runs of the output's element count */
  npy_intp one = onum, st1 = aitem, st2 = item;
  (void)oshape; (void)ostr;
  if (check_extent(p, &t->refs[1], 1, &one, &st1, aitem) < 0 ||
      check_extent(p, &t->refs[2], 1, &one, &st2, item) < 0)
    return -1;
  return 0;
}

static int parse_py(Program *p, thunk_t *t, PyObject *spec) {
  /* ("py", callable, operands((ref, dtype, shape, strides) ...), nin): the callable gets the
   * input views and returns a tuple of arrays (a user callback) */
  const char *kind;
  PyObject *fn, *ops;
  if (!PyArg_ParseTuple(spec, "sOO!i", &kind, &fn, &PyTuple_Type, &ops, &t->npin)) return -1;
  t->kind = TH_PY;
  Py_INCREF(fn);
  t->callable = fn;
  t->nref = (int)PyTuple_GET_SIZE(ops);
  if (t->npin < 0 || t->npin > t->nref) {
    PyErr_SetString(PyExc_ValueError, "Program: bad callback step");
    return -1;
  }
  t->refs = PyMem_Calloc((size_t)t->nref + 1, sizeof(ref_t));
  t->descrs = PyMem_Calloc((size_t)t->nref + 1, sizeof(PyArray_Descr *));
  t->ndims = PyMem_Calloc((size_t)t->nref + 1, sizeof(int));
  t->shapes = PyMem_Calloc((size_t)t->nref + 1, sizeof(npy_intp *));
  t->pstrides = PyMem_Calloc((size_t)t->nref + 1, sizeof(npy_intp *));
  if (!t->refs || !t->descrs || !t->ndims || !t->shapes || !t->pstrides) {
    PyErr_NoMemory();
    return -1;
  }
  for (int i = 0; i < t->nref; ++i) {
    PyObject *ref, *dt, *shape, *strides;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(ops, i), "OOO!O!", &ref, &dt, &PyTuple_Type, &shape,
                          &PyTuple_Type, &strides))
      return -1;
    if (parse_ref(p, ref, &t->refs[i]) < 0) return -1;
    if (!PyArray_DescrConverter(dt, &t->descrs[i])) return -1;
    t->shapes[i] = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
    t->pstrides[i] = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
    if (!t->shapes[i] || !t->pstrides[i]) { PyErr_NoMemory(); return -1; }
    t->ndims[i] = pb_parse_ints(shape, t->shapes[i], PB_MAXDIMS, "callback shape");
    if (t->ndims[i] < 0 || pb_parse_ints(strides, t->pstrides[i], PB_MAXDIMS, "callback strides")
                               != t->ndims[i]) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad callback operand");
      return -1;
    }
    if (check_extent(p, &t->refs[i], t->ndims[i], t->shapes[i], t->pstrides[i],
                     PyDataType_ELSIZE(t->descrs[i])) < 0)
      return -1;
  }
  return 0;
}

static int parse_thunk(Program *p, thunk_t *t, PyObject *spec, int i);

/* A nested block: a tuple of thunk specs. */
int pb_parse_block(Program *p, PyObject *specs, int *n, thunk_t **out) {
  if (!PyTuple_Check(specs)) {
    PyErr_SetString(PyExc_ValueError, "Program: a block must be a tuple of steps");
    return -1;
  }
  *n = (int)PyTuple_GET_SIZE(specs);
  *out = PyMem_Calloc((size_t)*n + 1, sizeof(thunk_t));
  if (!*out) { PyErr_NoMemory(); return -1; }
  for (int i = 0; i < *n; ++i)
    if (parse_thunk(p, &(*out)[i], PyTuple_GET_ITEM(specs, i), i) < 0) return -1;
  return 0;
}

int pb_alloc_blocks(thunk_t *t, int n) {
  t->block_n = PyMem_Calloc((size_t)n + 1, sizeof(int));
  t->blocks = PyMem_Calloc((size_t)n + 1, sizeof(thunk_t *));
  if (!t->block_n || !t->blocks) { PyErr_NoMemory(); return -1; }
  t->nblock = n;
  return 0;
}

/* a 0-d operand of `item` bytes (a predicate or an index) */
static int parse_scalar_ref(Program *p, PyObject *o, ref_t *r, npy_intp item) {
  return parse_ref(p, o, r) < 0 ? -1 : check_extent(p, r, 0, NULL, NULL, item);
}

static int parse_scan(Program *p, thunk_t *t, PyObject *spec) {
  /* ("scan", level, length, reverse, body block): the body's slices move with `level`, which
   * is the number of loops around this one */
  const char *kind;
  long long length;
  PyObject *body;
  if (!PyArg_ParseTuple(spec, "siLpO", &kind, &t->level, &length, &t->reverse, &body)) return -1;
  t->kind = TH_SCAN;
  if (t->level != p->depth || t->level >= PB_MAXLOOP || length < 0) {
    PyErr_Format(PyExc_ValueError, "Program: a scan at depth %d has level %d (at most %d nested) "
                 "and length %lld", p->depth, t->level, PB_MAXLOOP, length);
    return -1;
  }
  t->length = (npy_intp)length;
  if (pb_alloc_blocks(t, 1) < 0) return -1;
  p->loop_len[p->depth++] = t->length;
  int rc = pb_parse_block(p, body, &t->block_n[0], &t->blocks[0]);
  p->depth--;
  return rc;
}

static int parse_par(Program *p, thunk_t *t, PyObject *spec) {
  /* ("par", block): steps that touch disjoint memory (the compiler checked), run concurrently */
  const char *kind;
  PyObject *block;
  if (!PyArg_ParseTuple(spec, "sO", &kind, &block)) return -1;
  t->kind = TH_PAR;
  if (pb_alloc_blocks(t, 1) < 0 || pb_parse_block(p, block, &t->block_n[0], &t->blocks[0]) < 0)
    return -1;
  for (int i = 0; i < t->block_n[0]; ++i)
    if (t->blocks[0][i].kind != TH_DOT && t->blocks[0][i].kind != TH_SCAN) {
      PyErr_SetString(PyExc_ValueError, "Program: a par step holds dot or scan steps only");
      return -1;
    }
  return 0;
}

static int parse_while(Program *p, thunk_t *t, PyObject *spec) {
  /* ("while", predicate ref (bool), cond block, body block) */
  const char *kind;
  PyObject *pred, *cond, *body;
  if (!PyArg_ParseTuple(spec, "sOOO", &kind, &pred, &cond, &body)) return -1;
  t->kind = TH_WHILE;
  if (parse_scalar_ref(p, pred, &t->sel, 1) < 0 || pb_alloc_blocks(t, 2) < 0 ||
      pb_parse_block(p, cond, &t->block_n[0], &t->blocks[0]) < 0 ||
      pb_parse_block(p, body, &t->block_n[1], &t->blocks[1]) < 0)
    return -1;
  return 0;
}

static int parse_cond(Program *p, thunk_t *t, PyObject *spec) {
  /* ("cond", index ref (int32), (branch blocks...)) */
  const char *kind;
  PyObject *index, *branches;
  if (!PyArg_ParseTuple(spec, "sOO!", &kind, &index, &PyTuple_Type, &branches)) return -1;
  t->kind = TH_COND;
  const int n = (int)PyTuple_GET_SIZE(branches);
  if (n < 1) {
    PyErr_SetString(PyExc_ValueError, "Program: a cond needs a branch");
    return -1;
  }
  if (parse_scalar_ref(p, index, &t->sel, 4) < 0 || pb_alloc_blocks(t, n) < 0) return -1;
  for (int k = 0; k < n; ++k)
    if (pb_parse_block(p, PyTuple_GET_ITEM(branches, k), &t->block_n[k], &t->blocks[k]) < 0)
      return -1;
  return 0;
}

static int parse_dcopy(Program *p, thunk_t *t, PyObject *spec) {
  /* ("dcopy", dst_moves, shape, (src ref, dst ref), (src strides, dst strides), item,
   *  ((start ref, start item, signed, limit, stride), ...)) */
  const char *kind;
  PyObject *shape, *refs, *strides, *starts;
  long long item;
  if (!PyArg_ParseTuple(spec, "spO!O!O!LO!", &kind, &t->reverse, &PyTuple_Type, &shape,
                        &PyTuple_Type, &refs, &PyTuple_Type, &strides, &item, &PyTuple_Type,
                        &starts))
    return -1;
  t->kind = TH_DCOPY;
  t->op = (int)item;
  t->shape = PyMem_Calloc(PB_MAXDIMS, sizeof(npy_intp));
  t->strides = PyMem_Calloc(2 * PB_MAXDIMS, sizeof(npy_intp));
  t->refs = PyMem_Calloc(2, sizeof(ref_t));
  t->nstart = (int)PyTuple_GET_SIZE(starts);
  t->starts = PyMem_Calloc((size_t)t->nstart + 1, sizeof(dstart_t));
  if (!t->shape || !t->strides || !t->refs || !t->starts) { PyErr_NoMemory(); return -1; }
  t->nref = 2;
  if ((t->ndim = pb_parse_ints(shape, t->shape, PB_MAXDIMS, "dcopy shape")) < 0) return -1;
  if (!pb_move_copy_loop(item) || PyTuple_GET_SIZE(refs) != 2 || PyTuple_GET_SIZE(strides) != 2) {
    PyErr_SetString(PyExc_ValueError, "Program: bad dcopy step");
    return -1;
  }
  for (int i = 0; i < 2; ++i) {
    if (parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0 ||
        pb_parse_ints(PyTuple_GET_ITEM(strides, i), t->strides + i * t->ndim, PB_MAXDIMS,
                   "dcopy strides") != t->ndim) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: dcopy strides != ndim");
      return -1;
    }
  }
  npy_intp lo = 0, hi = 0; /* the moving side's offsets over every clamped start */
  for (int k = 0; k < t->nstart; ++k) {
    dstart_t *d = &t->starts[k];
    long long lim, st;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(starts, k), "OiiLL", &refs, &d->item, &d->is_signed,
                          &lim, &st))
      return -1;
    if ((d->item != 1 && d->item != 2 && d->item != 4 && d->item != 8) || lim < 0 ||
        parse_scalar_ref(p, refs, &d->ref, d->item) < 0) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad dcopy start");
      return -1;
    }
    d->limit = (npy_intp)lim;
    d->stride = (npy_intp)st;
    if (d->stride < 0) lo += d->limit * d->stride; else hi += d->limit * d->stride;
  }
  const int mv = t->reverse;
  for (int i = 0; i < 2; ++i) {
    ref_t r = t->refs[i];
    if (check_extent(p, &r, t->ndim, t->shape, t->strides + i * t->ndim, item) < 0) return -1;
    if (i == mv) { /* and at both ends of its range */
      r.offset = t->refs[i].offset + lo;
      if (check_extent(p, &r, t->ndim, t->shape, t->strides + i * t->ndim, item) < 0) return -1;
      r.offset = t->refs[i].offset + hi;
      if (check_extent(p, &r, t->ndim, t->shape, t->strides + i * t->ndim, item) < 0) return -1;
    }
  }
  return 0;
}

static int parse_thunk(Program *p, thunk_t *t, PyObject *spec, int i) {
  if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 1 ||
      !PyUnicode_Check(PyTuple_GET_ITEM(spec, 0))) {
    PyErr_SetString(PyExc_TypeError, "Program: a step must be a tuple starting with its kind");
    return -1;
  }
  const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(spec, 0));
  if (!k) return -1;
  const pb_step_kind *kind = NULL;
  for (int j = 0; pb_step_kinds[j] && !kind; ++j)
    if (!strcmp(k, pb_step_kinds[j]->name)) kind = pb_step_kinds[j];
  if (kind) {
    t->kind = TH_TABLE;
    t->step = kind;
  }
  int rc = kind ? kind->parse(p, t, spec)
           : !strcmp(k, "region") ? parse_region(p, t, spec)
           : !strcmp(k, "dot") ? parse_dot(p, t, spec)
           : !strcmp(k, "reduce") ? parse_reduce(p, t, spec)
           : !strcmp(k, "py") ? parse_py(p, t, spec)
           : !strcmp(k, "scan") ? parse_scan(p, t, spec)
           : !strcmp(k, "while") ? parse_while(p, t, spec)
           : !strcmp(k, "cond") ? parse_cond(p, t, spec)
           : !strcmp(k, "dcopy") ? parse_dcopy(p, t, spec)
           : !strcmp(k, "par") ? parse_par(p, t, spec)
           : !strcmp(k, "pipe") ? pb_parse_pipe(p, t, spec)
           : (PyErr_Format(PyExc_ValueError, "Program: unknown step kind '%s'", k), -1);
  if (rc < 0 && !PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_TypeError))
    return -1; /* out of memory */
  if (rc < 0) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_Format(PyExc_ValueError, "Program: step %d ('%s') is malformed: %S", i, k,
                 ev ? ev : Py_None);
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
  }
  return rc;
}

static void thunk_clear(thunk_t *t) {
  if (t->kind == TH_TABLE && t->step) t->step->release(t);
  PyMem_Free(t->shape);
  PyMem_Free(t->refs);
  PyMem_Free(t->strides);
  PyMem_Free(t->rg.steps);
  PyMem_Free(t->inits);
  PyMem_Free(t->pipe_k);
  PyMem_Free(t->pipe_parts);
  if (t->epilogue) { thunk_clear(t->epilogue); PyMem_Free(t->epilogue); }
  for (int b = 0; t->blocks && b < t->nblock; ++b) {
    for (int i = 0; t->blocks[b] && i < t->block_n[b]; ++i) thunk_clear(&t->blocks[b][i]);
    PyMem_Free(t->blocks[b]);
  }
  PyMem_Free(t->blocks);
  PyMem_Free(t->block_n);
  Py_XDECREF(t->callable);
  PyMem_Free(t->starts);
  for (int i = 0; t->descrs && i < t->nref; ++i) Py_XDECREF(t->descrs[i]);
  for (int i = 0; t->shapes && i < t->nref; ++i) PyMem_Free(t->shapes[i]);
  for (int i = 0; t->pstrides && i < t->nref; ++i) PyMem_Free(t->pstrides[i]);
  PyMem_Free(t->descrs);
  PyMem_Free(t->ndims);
  PyMem_Free(t->shapes);
  PyMem_Free(t->pstrides);
  memset(t, 0, sizeof(*t));
}

void pb_program_dealloc(Program *self) {
  for (int i = 0; self->thunks && i < self->nthunk; ++i) thunk_clear(&self->thunks[i]);
  PyMem_Free(self->thunks);
  for (int i = 0; self->in && i < self->nin; ++i) Py_XDECREF(self->in[i].descr);
  for (int i = 0; self->out && i < self->nout; ++i) Py_XDECREF(self->out[i].descr);
  PyMem_Free(self->in);
  PyMem_Free(self->out);
  free(self->arena);
  PyMem_Free(self->prof);
  Py_XDECREF(self->consts);
  Py_XDECREF(self->name);
  Py_XDECREF(self->text);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The byte extent [lo, hi) of an array of this shape and these strides. */
static void extent_of(spec_t *sp) {
  npy_intp item = PyDataType_ELSIZE(sp->descr);
  sp->lo = 0;
  sp->hi = item;
  for (int d = 0; d < sp->ndim; ++d) {
    if (sp->shape[d] == 0) { sp->hi = 0; return; }
    npy_intp span = (sp->shape[d] - 1) * sp->strides[d];
    if (span < 0) sp->lo += span; else sp->hi += span;
  }
}

/* inputs: (dtype, shape, strides or None, alignment); outputs: (dtype, shape, donate, alias or
 * None) with alias = (kind, index, offset, strides) */
static int parse_specs(PyObject *specs, int n, spec_t *out, int outputs) {
  for (int i = 0; i < n; ++i) {
    PyObject *dt, *shp, *st = Py_None, *alias = Py_None;
    spec_t *sp = &out[i];
    sp->donate = -1;
    sp->alias.kind = -1;
    PyObject *it = PyTuple_GET_ITEM(specs, i);
    long long align = 1;
    if (outputs ? !PyArg_ParseTuple(it, "OO!iO", &dt, &PyTuple_Type, &shp, &sp->donate, &alias)
                : !PyArg_ParseTuple(it, "OO!O|L", &dt, &PyTuple_Type, &shp, &st, &align))
      return -1;
    if (align < 1 || align > 4096 || (align & (align - 1))) {
      PyErr_SetString(PyExc_ValueError, "Program: an alignment must be a power of two");
      return -1;
    }
    sp->align = (npy_intp)align;
    if (!PyArray_DescrConverter(dt, &sp->descr)) return -1;
    if ((sp->ndim = pb_parse_ints(shp, sp->shape, PB_MAXDIMS, "a shape")) < 0) return -1;
    npy_intp item = PyDataType_ELSIZE(sp->descr), acc = item;
    for (int d = sp->ndim - 1; d >= 0; --d) { /* C-contiguous by default */
      if (sp->shape[d] < 0) {
        PyErr_SetString(PyExc_ValueError, "Program: negative dimension");
        return -1;
      }
      sp->strides[d] = acc;
      acc *= sp->shape[d] > 0 ? sp->shape[d] : 1;
    }
    if (alias != Py_None) {
      PyObject *ref, *ast;
      if (!PyArg_ParseTuple(alias, "OO!", &ref, &PyTuple_Type, &ast)) return -1;
      long long off;
      if (!PyArg_ParseTuple(ref, "iiL", &sp->alias.kind, &sp->alias.index, &off)) return -1;
      sp->alias.offset = (npy_intp)off;
      st = ast;
    }
    if (st != Py_None) {
      if (!PyTuple_Check(st) || pb_parse_ints(st, sp->strides, PB_MAXDIMS, "strides") != sp->ndim) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: strides != ndim");
        return -1;
      }
      sp->has_strides = 1;
    }
    extent_of(sp);
  }
  return 0;
}

PyObject *pb_program_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  /* Program(name, arena_bytes, in_specs, out_specs, consts, thunks, nogil[, strict[, ftz]]) */
  PyObject *name, *ins, *outs, *consts, *thunks;
  long long arena;
  int nogil, strict = 0, ftz = 0;
  if (!PyArg_ParseTuple(args, "ULO!O!O!O!p|pp", &name, &arena, &PyTuple_Type, &ins, &PyTuple_Type,
                        &outs, &PyTuple_Type, &consts, &PyTuple_Type, &thunks, &nogil, &strict,
                        &ftz))
    return NULL;
  Program *p = (Program *)type->tp_alloc(type, 0);
  if (!p) return NULL;
  Py_INCREF(name);
  p->name = name;
  p->arena_bytes = (npy_intp)(arena > 0 ? (arena + 63) / 64 * 64 : 0);
  p->nogil = nogil;
  p->strict = strict;
  p->ftz = ftz;
  p->max_threads = 1;
#ifdef _OPENMP
  p->max_threads = omp_get_max_threads();
#endif
  p->nin = (int)PyTuple_GET_SIZE(ins);
  p->nout = (int)PyTuple_GET_SIZE(outs);
  p->nconst = (int)PyTuple_GET_SIZE(consts);
  p->nthunk = (int)PyTuple_GET_SIZE(thunks);
  for (int i = 0; i < p->nconst; ++i)
    if (!PyArray_Check(PyTuple_GET_ITEM(consts, i)) ||
        !PyArray_ISALIGNED((PyArrayObject *)PyTuple_GET_ITEM(consts, i))) {
      PyErr_SetString(PyExc_TypeError, "Program: constants must be aligned numpy arrays");
      goto fail;
    }
  Py_INCREF(consts);
  p->consts = consts;
  p->in = PyMem_Calloc((size_t)p->nin + 1, sizeof(spec_t));
  p->out = PyMem_Calloc((size_t)p->nout + 1, sizeof(spec_t));
  p->thunks = PyMem_Calloc((size_t)p->nthunk + 1, sizeof(thunk_t));
  if (!p->in || !p->out || !p->thunks) {
    PyErr_NoMemory();
    goto fail;
  }
  if (parse_specs(ins, p->nin, p->in, 0) < 0 || parse_specs(outs, p->nout, p->out, 1) < 0)
    goto fail;
  for (int k = 0; k < p->nout; ++k) {
    const spec_t *sp = &p->out[k];
    int j = sp->donate;
    if (j >= p->nin || (j >= 0 && (!PyArray_EquivTypes(p->in[j].descr, sp->descr) ||
                                   p->in[j].has_strides || sp->alias.kind >= 0 ||
                                   p->in[j].hi != sp->hi))) {
      PyErr_Format(PyExc_ValueError, "Program: output %d cannot reuse input %d", k, j);
      goto fail;
    }
    if (sp->alias.kind >= 0) { /* a view of an input, a constant or an earlier plain output */
      const ref_t *r = &sp->alias;
      int ok = (r->kind == BUF_INPUT && r->index >= 0 && r->index < p->nin) ||
               (r->kind == BUF_CONST && r->index >= 0 && r->index < p->nconst) ||
               (r->kind == BUF_OUTPUT && r->index >= 0 && r->index < p->nout &&
                p->out[r->index].alias.kind < 0);
      /* (the view's dtype may differ: a bitcast; its extent is what must hold) */
      if (!ok || check_extent(p, r, sp->ndim, sp->shape, sp->strides,
                              PyDataType_ELSIZE(sp->descr)) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "Program: output %d is a bad view", k);
        goto fail;
      }
    }
  }
  for (int i = 0; i < p->nthunk; ++i)
    if (parse_thunk(p, &p->thunks[i], PyTuple_GET_ITEM(thunks, i), i) < 0) goto fail;
  return (PyObject *)p;
fail:
  Py_DECREF(p);
  return NULL;
}
