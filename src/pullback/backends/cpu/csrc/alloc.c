/* New arrays, and the cache that large ones are allocated from.
 *
 * A fresh large allocation is memory the kernel maps on first touch: every page faults in and is
 * zeroed, which costs about as much as writing the array once more (measured on 4M float32,
 * against a copy of the same bytes in the same run: a jitted x * y + z took 0.94x the copy with
 * fresh pages and 0.45x with the pages kept; exp(x) * y + sin(z) 1.32x and 1.19x). So arrays
 * of at least PB_BIG_BYTES are allocated through NumPy's memory-handler hooks
 * (PyDataMem_SetHandler, around that one allocation): when such an array is freed, its block
 * goes to a small cache instead of back to the system, and the next array of the same size
 * (rounded up to pages) takes it. The arrays stay ordinary ndarrays that own their data. The
 * cache holds at most PB_CACHE_BLOCKS blocks and PB_CACHE_BYTES in all; the block freed longest
 * ago leaves first.
 */
#include "pb.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PB_BIG_BYTES ((size_t)1 << 20)
#define PB_PAGE ((size_t)4096)
#define PB_CACHE_BLOCKS 16
#define PB_CACHE_BYTES ((size_t)128 << 20)

static struct {
  pthread_mutex_t m;
  int n;                          /* blocks held, oldest first */
  size_t bytes;
  void *ptr[PB_CACHE_BLOCKS];
  size_t cap[PB_CACHE_BLOCKS];
} cache = {PTHREAD_MUTEX_INITIALIZER};

static size_t page_round(size_t n) { return (n + PB_PAGE - 1) / PB_PAGE * PB_PAGE; }

/* Every block handed out has at least page_round(size) usable bytes, whichever function made
 * it, so a block freed with `size` can serve any later request that rounds to the same. */
static void *big_malloc(void *ctx, size_t size) {
  const size_t cap = page_round(size ? size : 1);
  pthread_mutex_lock(&cache.m);
  for (int i = cache.n - 1; i >= 0; --i) { /* the most recently freed first: warmest */
    if (cache.cap[i] != cap) continue;
    void *p = cache.ptr[i];
    memmove(cache.ptr + i, cache.ptr + i + 1, sizeof(void *) * (size_t)(cache.n - 1 - i));
    memmove(cache.cap + i, cache.cap + i + 1, sizeof(size_t) * (size_t)(cache.n - 1 - i));
    cache.n--;
    cache.bytes -= cap;
    pthread_mutex_unlock(&cache.m);
    return p;
  }
  pthread_mutex_unlock(&cache.m);
  return aligned_alloc(64, cap);
}

static void *big_calloc(void *ctx, size_t nelem, size_t elsize) {
  if (elsize && nelem > SIZE_MAX / elsize) return NULL;
  void *p = big_malloc(ctx, nelem * elsize);
  if (p) memset(p, 0, nelem * elsize);
  return p;
}

static void *big_realloc(void *ctx, void *ptr, size_t new_size) {
  return realloc(ptr, page_round(new_size ? new_size : 1));
}

static void big_free(void *ctx, void *ptr, size_t size) {
  if (!ptr) return;
  const size_t cap = page_round(size ? size : 1);
  if (size < PB_BIG_BYTES || cap > PB_CACHE_BYTES) { /* (a block shrunk by realloc: plain) */
    free(ptr);
    return;
  }
  void *evict[PB_CACHE_BLOCKS + 1];
  int ne = 0;
  pthread_mutex_lock(&cache.m);
  while (cache.n > 0 && (cache.n == PB_CACHE_BLOCKS || cache.bytes + cap > PB_CACHE_BYTES)) {
    evict[ne++] = cache.ptr[0];
    cache.bytes -= cache.cap[0];
    cache.n--;
    memmove(cache.ptr, cache.ptr + 1, sizeof(void *) * (size_t)cache.n);
    memmove(cache.cap, cache.cap + 1, sizeof(size_t) * (size_t)cache.n);
  }
  cache.ptr[cache.n] = ptr;
  cache.cap[cache.n++] = cap;
  cache.bytes += cap;
  pthread_mutex_unlock(&cache.m);
  for (int i = 0; i < ne; ++i) free(evict[i]);
}

static PyDataMem_Handler big_handler = {
    "pullback_big_block_cache", 1, {NULL, big_malloc, big_calloc, big_realloc, big_free}};
static PyObject *big_capsule;

PyArrayObject *pb_new_array(int ndim, const npy_intp *shape, PyArray_Descr *descr) {
  /* steals descr */
  size_t nbytes = (size_t)PyDataType_ELSIZE(descr);
  for (int i = 0; i < ndim; ++i) nbytes *= (size_t)(shape[i] > 0 ? shape[i] : 0);
  PyObject *old = NULL;
  if (nbytes >= PB_BIG_BYTES && !PyDataType_REFCHK(descr)) {
    if (!big_capsule) big_capsule = PyCapsule_New(&big_handler, "mem_handler", NULL);
    old = big_capsule ? PyDataMem_SetHandler(big_capsule) : NULL;
    if (!old) PyErr_Clear(); /* no cache then: the default allocator */
  }
  PyArrayObject *out = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim,
                                                             (npy_intp *)shape, NULL, NULL, 0,
                                                             NULL);
  if (old) {
    PyObject *mine = PyDataMem_SetHandler(old);
    if (mine) Py_DECREF(mine);
    else if (out) PyErr_Clear();
    Py_DECREF(old);
  }
  return out;
}

static PyObject *big_cache_info(PyObject *self, PyObject *unused) {
  pthread_mutex_lock(&cache.m);
  const int n = cache.n;
  const size_t bytes = cache.bytes;
  pthread_mutex_unlock(&cache.m);
  return Py_BuildValue("(in)", n, (Py_ssize_t)bytes);
}

static PyMethodDef methods[] = {
  {"big_cache_info", big_cache_info, METH_NOARGS,
   "big_cache_info() -> (blocks, bytes): the freed large-array blocks kept for reuse."},
  {NULL, NULL, 0, NULL}};

/* A child forked while another thread held the lock would find it locked forever: the child
 * starts with a fresh lock (the blocks stay valid copies). */
static void cache_after_fork(void) { pthread_mutex_init(&cache.m, NULL); }

int pb_register_alloc(PyObject *m) {
  pthread_atfork(NULL, NULL, cache_after_fork);
  return PyModule_AddFunctions(m, methods);
}
