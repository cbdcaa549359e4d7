// Stress driver for the NVML sampler in C++, built with -fsanitize=thread by
// tests/telemetry/test_nvml_sanitizers.py against the simulated NVML: the sampler thread started and
// stopped over and over while three threads take samples, read `unsupported` and drain. With
// argument "fails" the scenario makes NVML fail after a few samples, so the thread also stops
// itself (the error path) while the others go on. Prints OK; a race or deadlock is TSan's.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "telemetry/nvml_sampler.h"

int main(int argc, char** argv) {
  const bool fails = argc > 1 && std::strcmp(argv[1], "fails") == 0;
  for (int round = 0; round < 3; ++round) {
    // The simulated GPU 0's bus id (tests/sim/README.md); 1 ms period, small buffer (drops).
    straggler::NvmlSampler s("0000:10:00.0", 0.001, 64, 3);
    s.start();
    std::atomic<bool> go{true};
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i) {
      readers.emplace_back([&] {
        while (go) {
          s.sample_now();
          (void)s.unsupported();
          (void)s.drain();
          (void)s.samples_taken();
          (void)s.running();
        }
      });
    }
    for (int k = 0; k < 20; ++k) {
      s.stop();
      s.start();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    go = false;
    for (auto& t : readers) t.join();
    // Each start() begins a new count of failing samples: give the last thread time to reach
    // three in a row (1 + 2 + 4 ms of backoff) and stop itself.
    for (int k = 0; fails && s.error().empty() && k < 2000; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (fails == s.error().empty()) {
      std::printf("unexpected error state: '%s'\n", s.error().c_str());
      return 1;
    }
  }  // the destructor stops and joins
  std::printf("OK\n");
  return 0;
}
