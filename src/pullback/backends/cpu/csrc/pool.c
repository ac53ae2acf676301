/* The executor's thread pool (pool.h). */
#include "pool.h"
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the thread pool
 *
 * Programs parallelize through this pool, not OpenMP regions: a job is n independent chunks
 * handed out by an atomic counter; the calling thread works on them too and then waits only for
 * chunks other threads have actually claimed. A worker the OS has not scheduled yet simply finds
 * no chunk left when it wakes, so a busy machine costs parallelism, never a wait for a
 * descheduled thread (an OpenMP region's barrier waits for every thread: measured on 2 busy
 * cores, an MLP step took 13 ms with two OpenMP threads and 5.6 ms with one). Kernels called
 * inside a program run with one OpenMP thread (omp_set_num_threads(1) around the run).
 *
 * A worker that runs out of chunks spins a while for the next job before it sleeps: waking a
 * sleeping thread took 26-57 us (median) on the 2-core VM this was measured on, an idle virtual
 * CPU being halted, and a training step's parallel products come every few hundred
 * microseconds (spinning made an MLP step 6% faster there). It spins only while the machine
 * has a core to spare: when more threads are runnable than there are CPUs (another library's
 * spinning BLAS threads, say), a spinning worker would take CPU time from the threads doing
 * the work and then be descheduled in the middle of a chunk the caller waits for (measured
 * right after NumPy's OpenBLAS, whose threads spin ~0.1 s after a call: an MLP step 1.3x
 * slower with an unconditional spin, 3% faster with this check). */

enum { SPIN_NS = 500000, LOAD_CHECK_NS = 100000 };

static struct {
  pthread_mutex_t m, busy;
  pthread_cond_t cv;
  int nworkers, started;
  long cpus;                  /* online CPUs, read as the workers start (machine_busy) */
  uint32_t gen;               /* the current job's generation (written under m) */
  _Atomic uint64_t next;      /* (generation << 32) | next chunk */
  _Atomic npy_intp done;
  _Atomic(pb_pool_fn) fn;
  _Atomic(void *) ctx;
  _Atomic npy_intp n;
  _Atomic unsigned csr;       /* the caller's floating-point mode (MXCSR), for the workers */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void pool_work(uint32_t gen, int tid) {
  for (;;) {
    uint64_t old = atomic_load_explicit(&pool.next, memory_order_acquire);
    if ((uint32_t)(old >> 32) != gen) return;
    const npy_intp n = atomic_load_explicit(&pool.n, memory_order_relaxed);
    if ((npy_intp)(old & 0xffffffffu) >= n) return;
    if (!atomic_compare_exchange_weak(&pool.next, &old, old + 1)) continue;
    /* claimed under this generation: its job stays valid until we report the chunk done */
    pb_set_fpmode(atomic_load_explicit(&pool.csr, memory_order_relaxed));
    atomic_load(&pool.fn)(atomic_load(&pool.ctx), (npy_intp)(old & 0xffffffffu), tid);
    atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
  }
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Whether more threads are runnable than there are CPUs (the 4th field of /proc/loadavg,
 * "running/total", counts this thread too); where that cannot be read, busy. */
static bool machine_busy(void) {
  char buf[128];
  const int fd = open("/proc/loadavg", O_RDONLY);
  if (fd < 0) return true;
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return true;
  buf[n] = 0;
  const char *p = buf;
  for (int field = 0; field < 3 && p; ++field) {
    p = strchr(p, ' ');
    if (p) ++p;
  }
  return !p || pool.cpus < 1 || atol(p) > pool.cpus;
}

/* Spins until a job newer than `seen` is posted (its generation is returned) or SPIN_NS pass
 * (`seen` is returned), giving up as soon as the machine is busy. */
static uint32_t spin_for_job(uint32_t seen) {
  const int64_t t0 = now_ns();
  int64_t checked = t0 - LOAD_CHECK_NS;
  for (unsigned i = 0;; ++i) {
    const uint32_t g = (uint32_t)(atomic_load_explicit(&pool.next, memory_order_acquire) >> 32);
    if (g != seen) return g;
    if (i % 16 == 0) {
      const int64_t t = now_ns();
      if (t - t0 > SPIN_NS) return seen;
      if (t - checked >= LOAD_CHECK_NS) {
        if (machine_busy()) return seen;
        checked = t;
      }
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

static void *pool_worker(void *arg) {
  const int tid = (int)(intptr_t)arg;
  uint32_t seen = 0;
  pthread_mutex_lock(&pool.m);
  seen = pool.gen;
  for (;;) {
    while (pool.gen == seen) pthread_cond_wait(&pool.cv, &pool.m);
    seen = pool.gen;
    pthread_mutex_unlock(&pool.m);
    for (uint32_t next = seen;; seen = next) {
      pool_work(seen, tid);
      if ((next = spin_for_job(seen)) == seen) break;
    }
    pthread_mutex_lock(&pool.m);
  }
  return NULL;
}

static void pool_after_fork(void) { /* the child has no workers: start them again on demand */
  pthread_mutex_init(&pool.m, NULL);
  pthread_mutex_init(&pool.busy, NULL);
  pthread_cond_init(&pool.cv, NULL);
  pool.started = 0;
  pool.nworkers = 0;
}

/* Threads a program may use (the pool's workers plus the caller), starting the workers on
 * first use; 1 when they cannot be started. Called with the GIL held. */
int pb_pool_threads(int want) {
  if (!pool.started) {
    pool.started = 1;
    pool.cpus = sysconf(_SC_NPROCESSORS_ONLN);
    pthread_atfork(NULL, NULL, pool_after_fork);
    for (int i = 1; i < want; ++i) {
      pthread_t th;
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      int rc = pthread_create(&th, &attr, pool_worker, (void *)(intptr_t)(pool.nworkers + 1));
      pthread_attr_destroy(&attr);
      if (rc) break;
      pool.nworkers++;
    }
  }
  return pool.nworkers + 1;
}

/* Runs fn(ctx, chunk, tid) for chunk in [0, n), tid < pool_threads(): on the pool when it is
 * free, else (another thread's program is using it) on the calling thread alone. */
void pb_pool_run(pb_pool_fn fn, void *ctx, npy_intp n) {
  if (n <= 1 || pool.nworkers == 0 || n >= 0xffffffffLL || pthread_mutex_trylock(&pool.busy)) {
    for (npy_intp i = 0; i < n; ++i) fn(ctx, i, 0);
    return;
  }
  pthread_mutex_lock(&pool.m);
  const uint32_t gen = ++pool.gen;
  atomic_store(&pool.fn, fn);
  atomic_store(&pool.ctx, ctx);
  atomic_store(&pool.n, n);
  atomic_store(&pool.csr, pb_get_fpmode());
  atomic_store(&pool.done, 0);
  atomic_store_explicit(&pool.next, (uint64_t)gen << 32, memory_order_release);
  pthread_cond_broadcast(&pool.cv);
  pthread_mutex_unlock(&pool.m);
  pool_work(gen, 0);
  for (int spin = 0; atomic_load_explicit(&pool.done, memory_order_acquire) < n; ++spin)
    if (spin > 64) sched_yield();
  pthread_mutex_unlock(&pool.busy);
}
