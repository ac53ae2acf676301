/* The "region" step (element-wise ops fused into one pass over memory): its parser and runner.
 * The index space is walked with pb_iterate and each row cut into tiles; each op runs its own
 * kernel loop on the tile, intermediates live in per-thread scratch (L1-sized), only region
 * outputs are written to memory. A single element-wise op, a copy or a conversion is a 1-op
 * region; a dot's epilogue is a region too (products.c). loops.c plans tiny regions of loop
 * bodies as direct kernel calls. */
#include "pool.h"
#include "step.h"
#include "cast.h"
#include "move.h"
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

/* A short last dimension (channels) with operands broadcast along every other one (a bias):
 * pb_iterate's rows would be that short, each op one kernel call per row. When every other
 * operand runs on across the last two dimensions, they are walked as one, and the broadcast
 * operands read a copy of their row repeated (measured: relu(h + b) on (64, 28, 28, 32)
 * float32 took 2.1x jax.jit's time with rows of 32). */
static void plan_periodic(thunk_t *t, bool reduces) {
  const int nd = t->ndim;
  t->rg.per = 0;
  if (nd < 2 || reduces) return;
  const npy_intp inner = t->shape[nd - 1];
  if (inner < 2 || inner > RG_PERIOD_MAX || t->shape[nd - 2] < 2) return;
  unsigned written = 0, per = 0;
  for (int k = 0; k < t->rg.nsteps; ++k) {
    const int o = t->rg.steps[k].opnd[t->rg.steps[k].nin];
    if (o >= 0) written |= 1u << o;
  }
  for (int i = 0; i < t->nref; ++i) {
    const npy_intp *st = t->strides + i * nd;
    if (st[nd - 2] == inner * st[nd - 1]) continue;
    bool bcast = !(written >> i & 1) && st[nd - 1] != 0;
    for (int d = 0; d < nd - 1 && bcast; ++d) bcast = st[d] == 0;
    if (!bcast) return;
    per |= 1u << i;
  }
  for (int i = 0; i < t->nref; ++i)
    if (per >> i & 1) {
      t->rg.per_slot[i] = t->rg.nslots;
      t->rg.nslots += 2; /* (RG_TILE + period) elements of up to 16 bytes */
    }
  t->rg.per = per;
  t->rg.period = inner;
}

int pb_parse_region(Program *p, thunk_t *t, PyObject *spec) {
  /* compiler/steps.py's Region: inits are reduction accumulators (the region's chunks then cut
   * only dimensions along which every accumulator moves: each chunk owns its accumulator
   * elements and adds into each in the order one thread would) */
  PyObject *shape, *refs, *strides, *items, *steps, *inits, *stream;
  long long grain;
  if (!(shape = pb_field_tuple(spec, "shape")) || !(refs = pb_field_tuple(spec, "refs")) ||
      !(strides = pb_field_tuple(spec, "strides")) || !(items = pb_field_tuple(spec, "items")) ||
      !(steps = pb_field_tuple(spec, "ops")) || pb_field_ll(spec, "grain", &grain) < 0 ||
      !(inits = pb_field_tuple(spec, "inits")) || !(stream = pb_field_tuple(spec, "stream")))
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
    if (pb_parse_ref(p, PyTuple_GET_ITEM(refs, i), &t->refs[i]) < 0) return -1;
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
    if (pb_check_extent(p, &t->refs[i], t->ndim, t->shape, st, (npy_intp)item) < 0) return -1;
    t->rg.per_item[i] = (npy_intp)item;
  }
  t->rg.nsteps = (int)PyTuple_GET_SIZE(steps);
  t->rg.steps = PyMem_Calloc((size_t)(t->rg.nsteps ? t->rg.nsteps : 1), sizeof(rg_step));
  if (!t->rg.steps) { PyErr_NoMemory(); return -1; }
  t->rg.nslots = 0;
  for (int k = 0; k < t->rg.nsteps; ++k) {
    /* steps.py's RegionOp */
    int lk, a, b;
    PyObject *prm, *opnd, *its, *o = PyTuple_GET_ITEM(steps, k);
    if (pb_field_int(o, "loop", &lk) < 0 || pb_field_int(o, "a", &a) < 0 ||
        pb_field_int(o, "b", &b) < 0 || !(prm = pb_field_tuple(o, "params")) ||
        !(opnd = pb_field_tuple(o, "operands")) || !(its = pb_field_tuple(o, "items")))
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
  plan_periodic(t, inits != NULL);
  npy_intp need = (npy_intp)p->max_threads * t->rg.nslots * RG_SLOT_BYTES;
  if (need > p->scratch_bytes) p->scratch_bytes = need;
  t->ninit = inits ? (int)PyTuple_GET_SIZE(inits) : 0;
  t->nosplit = 0;
  if (t->ninit) {
    t->inits = PyMem_Calloc((size_t)t->ninit, sizeof(rg_init));
    if (!t->inits) { PyErr_NoMemory(); return -1; }
    for (int k = 0; k < t->ninit; ++k) {
      rg_init *in = &t->inits[k];
      long long ne;
      char one[16];
      PyObject *o = PyTuple_GET_ITEM(inits, k); /* steps.py's RegionInit */
      if (pb_field_int(o, "operand", &in->ext) < 0 || pb_field_int(o, "op", &in->op) < 0 ||
          pb_field_int(o, "slot", &in->slot) < 0 || pb_field_ll(o, "nelems", &ne) < 0)
        return -1;
      in->nelems = (npy_intp)ne;
      npy_intp item = pb_reduce_identity(in->op, in->slot, one);
      if (in->ext < 0 || in->ext >= t->nref || !item || ne < 0 ||
          pb_check_extent(p, &t->refs[in->ext], 1, &in->nelems, &item, item) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Program: bad accumulator");
        return -1;
      }
    }
  }
  /* a dimension whose every index moves every accumulator to other elements: chunks along it
   * accumulate into disjoint elements, each over the same indices in the same order */
  t->splitdims = 0;
  for (int d = 0; d < t->ndim && d < 32; ++d) {
    bool ok = t->shape[d] > 1;
    for (int k = 0; k < t->ninit && ok; ++k) ok = t->strides[t->inits[k].ext * t->ndim + d] != 0;
    if (ok) t->splitdims |= 1u << d;
  }
  t->nosplit = t->splitdims == 0;
  return 0;
}

static void region_loop(char **p, const npy_intp *s, npy_intp n, const void *params) {
  const rg_params *r = params;
  char *scr = r->scratch; /* this thread's */
  for (npy_intp t0 = 0; t0 < n; t0 += RG_TILE) {
    const npy_intp len = n - t0 < RG_TILE ? n - t0 : RG_TILE;
    for (int k = 0; k < r->nsteps; ++k) {
      const rg_step *st = &r->steps[k];
      char *ptrs[RG_MAXSTEPIN + 1];
      npy_intp str[RG_MAXSTEPIN + 1];
      for (int i = 0; i <= st->nin; ++i) {
        const int id = st->opnd[i];
        if (id >= 0) {
          ptrs[i] = p[id] + (r->per >> id & 1 ? t0 % r->period : t0) * s[id];
          str[i] = s[id];
        } else {
          ptrs[i] = scr + (size_t)(-id - 1) * RG_SLOT_BYTES;
          str[i] = st->item[i];
        }
      }
      const int o = st->opnd[st->nin];
      if (st->nt && str[st->nin] == st->item[st->nin]) { /* staged in scratch, then streamed */
        ptrs[st->nin] = scr + (size_t)r->ntslot * RG_SLOT_BYTES;
        st->fn(ptrs, str, len, st->prm);
        pb_stream_copy(p[o] + t0 * s[o], ptrs[st->nin], len * s[o]);
      } else {
        st->fn(ptrs, str, len, st->prm);
      }
    }
  }
}

/* A region's index space cut into chunks along one dimension, for the pool. */
typedef struct {
  const thunk_t *t;
  char *base[RG_MAXOPND];
  char *scratch;
  int dim;
  npy_intp chunks;
} region_job;

/* The region over [lo, hi) of dimension dim < ndim - 1 (all of it when dim < 0), the last two
 * dimensions walked as one (plan_periodic) */
static void region_periodic(const thunk_t *t, const rg_params *rg, char *const *base0, int dim,
                            npy_intp lo, npy_intp hi) {
  const int nd = t->ndim;
  npy_intp shape[PB_MAXDIMS], strides[RG_MAXOPND * PB_MAXDIMS];
  char *base[RG_MAXOPND];
  for (int d = 0; d < nd - 1; ++d) shape[d] = d == dim ? hi - lo : t->shape[d];
  shape[nd - 2] *= t->rg.period;
  if (shape[nd - 2] == 0) return;
  for (int i = 0; i < t->nref; ++i) {
    const npy_intp *st = t->strides + i * nd;
    npy_intp *s2 = strides + i * (nd - 1);
    for (int d = 0; d < nd - 2; ++d) s2[d] = st[d];
    s2[nd - 2] = st[nd - 1];
    base[i] = base0[i] + (dim >= 0 ? lo * st[dim] : 0);
    if (!(t->rg.per >> i & 1)) continue;
    /* the row, repeated to cover any tile from any phase */
    const npy_intp item = t->rg.per_item[i], n = RG_TILE + t->rg.period;
    char *rep = rg->scratch + (size_t)t->rg.per_slot[i] * RG_SLOT_BYTES;
    for (npy_intp e = 0; e < t->rg.period; ++e)
      memcpy(rep + e * item, base0[i] + e * st[nd - 1], (size_t)item);
    for (npy_intp e = t->rg.period; e < n; e += t->rg.period)
      memcpy(rep + e * item, rep, (size_t)((n - e < t->rg.period ? n - e : t->rg.period) * item));
    base[i] = rep;
    s2[nd - 2] = item;
  }
  pb_iterate(nd - 1, shape, t->nref, base, strides, region_loop, rg, 1);
}

/* The region over [lo, hi) of dimension dim of its space (the whole space when dim < 0). */
void pb_region_slice(const thunk_t *t, char *const *base0, char *scratch, int dim,
                     npy_intp lo, npy_intp hi, int tid) {
  rg_params rg = t->rg;
  rg.scratch = scratch + (size_t)tid * (size_t)t->rg.nslots * RG_SLOT_BYTES;
  if (dim < 0) { /* the whole space (0-d included) */
    pb_iterate(t->ndim, t->shape, t->nref, base0, t->strides, region_loop, &rg, 1);
#if defined(__x86_64__) || defined(__i386__)
    if (t->rg.ntslot >= 0 && !t->rg.ntloop) _mm_sfence();
#endif
    return;
  }
  if (t->rg.per && dim < t->ndim - 1) {
    region_periodic(t, &rg, base0, dim, lo, hi);
#if defined(__x86_64__) || defined(__i386__)
    if (t->rg.ntslot >= 0 && !t->rg.ntloop) _mm_sfence();
#endif
    return;
  }
  npy_intp shape[PB_MAXDIMS];
  char *base[RG_MAXOPND];
  memcpy(shape, t->shape, sizeof(npy_intp) * (size_t)t->ndim);
  shape[dim] = hi - lo;
  for (int i = 0; i < t->nref; ++i) base[i] = base0[i] + lo * t->strides[i * t->ndim + dim];
  if (hi > lo) pb_iterate(t->ndim, shape, t->nref, base, t->strides, region_loop, &rg, 1);
#if defined(__x86_64__) || defined(__i386__)
  /* streamed stores reach memory before others read (a loop's slices: at the loop's end) */
  if (t->rg.ntslot >= 0 && !t->rg.ntloop) _mm_sfence();
#endif
}

static void region_chunk(void *ctx, npy_intp ci, int tid) {
  const region_job *j = ctx;
  const npy_intp len = j->chunks > 1 ? j->t->shape[j->dim] : 0;
  pb_region_slice(j->t, j->base, j->scratch, j->chunks > 1 ? j->dim : -1, len * ci / j->chunks,
                  len * (ci + 1) / j->chunks, tid);
}

int pb_run_region(const thunk_t *t, run_ctx *c) {
  region_job j = {.t = t, .scratch = c->scratch, .dim = 0, .chunks = 1};
  for (int i = 0; i < t->nref; ++i) j.base[i] = pb_resolve(c, &t->refs[i]);
  for (int k = 0; k < t->ninit; ++k) { /* reduction accumulators start at the identity */
    char one[16];
    const rg_init *in = &t->inits[k];
    const npy_intp item = pb_reduce_identity(in->op, in->slot, one);
    for (npy_intp e = 0; e < in->nelems; ++e) memcpy(j.base[in->ext] + e * item, one, (size_t)item);
  }
  npy_intp n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
  if (c->threads > 1 && n >= 2 * t->grain && t->ndim > 0 && !t->nosplit) {
    npy_intp want = n / t->grain, cap = 4 * (npy_intp)c->threads;
    if (want > cap) want = cap;
    int dim = -1; /* the outermost dimension long enough, else the longest (of those it may cut) */
    for (int d = 0; d < t->ndim && dim < 0; ++d)
      if (t->splitdims >> d & 1 && t->shape[d] >= want) dim = d;
    if (dim < 0) {
      for (int d = 0; d < t->ndim; ++d)
        if (t->splitdims >> d & 1 && (dim < 0 || t->shape[d] > t->shape[dim])) dim = d;
      if (want > t->shape[dim]) want = t->shape[dim];
    }
    /* cutting the contiguous dimension shortens every row the kernels loop over: as few
     * pieces as threads */
    if (dim == t->ndim - 1 && t->ndim > 1 && want > c->threads) want = c->threads;
    j.dim = dim;
    j.chunks = want > 1 ? want : 1;
  }
  if (j.chunks > 1) pb_pool_run(region_chunk, &j, j.chunks);
  else region_chunk(&j, 0, c->tid);
  return 0;
}

static void release_region(thunk_t *t) {
  PyMem_Free(t->rg.steps);
  PyMem_Free(t->inits);
}

const pb_step_kind pb_step_region = {"region", pb_parse_region, pb_run_region, release_region};
