// Stress driver for the timer engine in C++, built with -fsanitize=thread by
// tests/core/test_engine_sanitizers.py together with csrc/ and the simulated driver. Threads share one
// engine: start/stop on their own streams, harvest, flush, summaries, a flusher thread, and in
// the second phase injected driver errors. The busy phases run busy scopes with op_begin/op_end
// (per-op timers too) and comm_end on several threads, ops from a thread without a scope (they
// join the only open chain or are not timed), and a thread calling harvest/reset/idle_entries/
// open_scopes meanwhile; the last one with injected errors. Prints "OK" and exits 0 when the
// counts add up.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "timing/timer_engine.h"

using straggler::TimerEngine;

namespace {

constexpr int kThreads = 4;
constexpr int kPairs = 2000;

int (*sim_enqueue)(void*, double);
int (*sim_live_events)();
int (*sim_fail)(const char*, int, int);
void (*sim_reset)();

template <class F>
F sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (p == nullptr) {
    std::fprintf(stderr, "missing %s\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(p);
}

// One phase; returns the number of CudaErrors seen (never lets one escape a thread).
long run_phase(TimerEngine& e, bool inject) {
  std::atomic<long> errors{0};
  std::atomic<bool> done{false};
  auto guarded = [&](auto&& fn) {
    try {
      fn();
    } catch (const straggler::CudaError&) {
      errors.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const auto stream = static_cast<std::uintptr_t>(100 + i);
      const int shared = e.timer_id("shared");
      const int own = e.timer_id("own" + std::to_string(i));
      for (int k = 0; k < kPairs; ++k) {
        if (inject && k % 97 == 0) sim_fail(k % 2 ? "cuEventQuery" : "cuEventRecord", 719, 1);
        guarded([&] { e.start(shared, stream); });
        guarded([&] { e.start(own, stream); });
        if (k % 400 == 0) sim_enqueue(reinterpret_cast<void*>(stream), 0.5);
        guarded([&] {
          try {
            e.stop(own, stream);
          } catch (const std::invalid_argument&) {  // its start failed: not open
          }
        });
        guarded([&] {
          try {
            e.stop(shared, stream);
          } catch (const std::invalid_argument&) {
          }
        });
        if (k % 100 == 0) guarded([&] { e.harvest(); });
        if (k % 700 == 0) guarded([&] { e.flush(); });
        if (k % 900 == 0) guarded([&] { (void)e.summaries(); });
      }
    });
  }
  std::thread flusher([&] {
    while (!done.load()) {
      guarded([&] { e.flush(); });
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  for (auto& t : threads) t.join();
  done.store(true);
  flusher.join();
  sim_reset();
  e.flush();
  return errors.load();
}

// Busy scopes on kThreads threads (each its own stream), kOps ops per scope, a collective
// after every third op; an orphan thread reports ops without a scope of its own. With `churn`,
// a thread harvests, resets and reads idle_entries/open_scopes all along (counts then vary),
// and driver errors are injected. Returns the number of CudaErrors seen.
constexpr int kScopes = 500;
constexpr int kOps = 4;

long run_busy_phase(TimerEngine& e, bool churn) {
  std::atomic<long> errors{0};
  std::atomic<bool> done{false};
  auto guarded = [&](auto&& fn) {
    try {
      fn();
    } catch (const straggler::CudaError&) {
      errors.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const auto stream = static_cast<std::uintptr_t>(200 + i);
      const int scope = e.timer_id("busy" + std::to_string(i));
      const int op_timer = e.timer_id("op" + std::to_string(i));
      e.set_busy(scope, true);
      for (int k = 0; k < kScopes; ++k) {
        if (churn && k % 97 == 0) sim_fail(k % 2 ? "cuEventQuery" : "cuEventRecord", 719, 1);
        bool open = false;
        guarded([&] {
          e.start(scope, stream);
          open = true;
        });
        for (int j = 0; j < kOps; ++j) {
          guarded([&] {
            const long long token = e.op_begin(stream);
            if (k % 50 == 0) sim_enqueue(reinterpret_cast<void*>(stream), 0.2);
            e.op_end(token, j % 2 ? op_timer : -1, stream);
          });
          if (j % 3 == 2) guarded([&] { e.comm_end(stream); });
        }
        if (open) {
          guarded([&] {
            try {
              e.stop(scope, stream);
            } catch (const std::invalid_argument&) {
            }
          });
        }
      }
    });
  }
  std::thread orphan([&] {  // autograd's worker thread: ops without a scope of its own
    while (!done.load()) {
      guarded([&] {
        const long long token = e.op_begin(300);
        e.op_end(token, -1, 300);
      });
      std::this_thread::yield();
    }
  });
  std::thread churner([&] {
    while (churn && !done.load()) {
      guarded([&] { e.harvest(); });
      (void)e.idle_entries();
      (void)e.open_scopes();
      guarded([&] { e.reset(); });
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  for (auto& t : threads) t.join();
  done.store(true);
  orphan.join();
  churner.join();
  sim_reset();
  e.flush();
  return errors.load();
}

}  // namespace

int main() {
  const char* path = std::getenv("STRAGGLER_LIBCUDA");
  void* lib = dlopen(path != nullptr ? path : "libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  sim_enqueue = sym<int (*)(void*, double)>(lib, "simcuda_enqueue");
  sim_live_events = sym<int (*)()>(lib, "simcuda_live_events");
  sim_fail = sym<int (*)(const char*, int, int)>(lib, "simcuda_fail");
  sim_reset = sym<void (*)()>(lib, "simcuda_reset");

  {
    TimerEngine e("cuda", kThreads * kPairs, 0);
    if (run_phase(e, false) != 0) {
      std::fprintf(stderr, "errors without injection\n");
      return 1;
    }
    std::vector<double> shared = e.durations(e.timer_id("shared"));
    if (shared.size() != static_cast<std::size_t>(kThreads * kPairs) || e.pending() != 0) {
      std::fprintf(stderr, "shared: %zu samples, %zu pending\n", shared.size(), e.pending());
      return 1;
    }
    for (int i = 0; i < kThreads; ++i) {
      if (e.durations(e.timer_id("own" + std::to_string(i))).size() !=
          static_cast<std::size_t>(kPairs)) {
        std::fprintf(stderr, "own%d: wrong count\n", i);
        return 1;
      }
    }
    e.reset();
    const long injected = run_phase(e, true);
    if (injected == 0 || e.pending() != 0) {
      std::fprintf(stderr, "injected errors seen: %ld, pending %zu\n", injected, e.pending());
      return 1;
    }
    e.close();
  }
  {
    TimerEngine e("cuda", kThreads * kScopes * kOps, 0);
    if (run_busy_phase(e, false) != 0 || e.open_scopes() != 0 || e.pending() != 0) {
      std::fprintf(stderr, "busy phase: errors without injection, open scopes or pending\n");
      return 1;
    }
    for (int i = 0; i < kThreads; ++i) {
      // Every scope had ops, so every scope stored one sample; half the ops had a timer.
      const std::size_t scopes = e.durations(e.timer_id("busy" + std::to_string(i))).size();
      const std::size_t ops = e.durations(e.timer_id("op" + std::to_string(i))).size();
      if (scopes != static_cast<std::size_t>(kScopes) ||
          ops != static_cast<std::size_t>(kScopes * kOps / 2)) {
        std::fprintf(stderr, "busy%d: %zu scope samples, %zu op samples\n", i, scopes, ops);
        return 1;
      }
    }
    e.reset();
    const long injected = run_busy_phase(e, true);
    if (injected == 0 || e.open_scopes() != 0 || e.pending() != 0) {
      std::fprintf(stderr, "busy phase with churn: %ld errors, %d open scopes, %zu pending\n",
                   injected, e.open_scopes(), e.pending());
      return 1;
    }
    e.close();
  }
  if (sim_live_events() != 0) {
    std::fprintf(stderr, "%d events leaked\n", sim_live_events());
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
