/* LD_PRELOAD shim counting malloc/calloc/realloc calls while switched on, for tests that prove
 * a code path allocates nothing. Controls (ctypes): malloc_count_start(), malloc_count_stop().
 * Built by tests/core/test_engine_alloc.py into a temporary directory. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

static long count_ = 0;
static int on_ = 0;

static void* (*real_malloc)(size_t) = NULL;
static void* (*real_calloc)(size_t, size_t) = NULL;
static void* (*real_realloc)(void*, size_t) = NULL;

/* dlsym may calloc while we resolve calloc: serve that from a static buffer. */
static char bootstrap_[4096];
static size_t bootstrap_used_ = 0;

static void tally(void) {
  if (on_) __atomic_add_fetch(&count_, 1, __ATOMIC_RELAXED);
}

void* malloc(size_t n) {
  if (real_malloc == NULL) real_malloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc");
  tally();
  return real_malloc(n);
}

void* calloc(size_t n, size_t size) {
  if (real_calloc == NULL) {
    static int resolving = 0;
    if (resolving) {
      void* p = bootstrap_ + bootstrap_used_;
      bootstrap_used_ += (n * size + 15) & ~(size_t)15;
      return bootstrap_used_ <= sizeof(bootstrap_) ? p : NULL;
    }
    resolving = 1;
    real_calloc = (void* (*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    resolving = 0;
  }
  tally();
  return real_calloc(n, size);
}

void* realloc(void* p, size_t n) {
  if (real_realloc == NULL) real_realloc = (void* (*)(void*, size_t))dlsym(RTLD_NEXT, "realloc");
  tally();
  return real_realloc(p, n);
}

void malloc_count_start(void) {
  __atomic_store_n(&count_, 0, __ATOMIC_RELAXED);
  on_ = 1;
}

long malloc_count_stop(void) {
  on_ = 0;
  return __atomic_load_n(&count_, __ATOMIC_RELAXED);
}
