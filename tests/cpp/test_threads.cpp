// Threads recording while others harvest, flush, summarize and reset: every pair is stored
// exactly once, every mark freed once. Built and run under ThreadSanitizer too (make cpp-test).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "doctest/doctest.h"
#include "rig.h"

namespace {

constexpr int kThreads = 4;
constexpr int kPairs = 500;

// Completes marks and harvests until `stop`, as the GPU and the report thread would.
std::thread harvester(Rig& rig, std::atomic<bool>& stop) {
  return std::thread([&rig, &stop] {
    for (int i = 0; !stop.load(); ++i) {
      rig.fake->complete_all();
      if (i % 3 == 0) rig.engine->flush();
      if (i % 5 == 0) (void)rig.engine->summaries();
      rig.engine->harvest();
      (void)rig.engine->pending();
      std::this_thread::yield();
    }
  });
}

}  // namespace

TEST_CASE("threads record pairs while another harvests: each pair is stored once") {
  Rig rig(/*synchronous=*/false, /*capacity=*/kThreads * kPairs);
  auto& e = *rig.engine;
  std::atomic<bool> stop{false};
  std::thread h = harvester(rig, stop);
  std::vector<std::thread> workers;
  for (int i = 0; i < kThreads; ++i) {
    workers.emplace_back([&e, i] {
      const auto stream = static_cast<std::uintptr_t>(100 + i);
      const int shared = e.timer_id("shared");
      const int own = e.timer_id("own" + std::to_string(i));
      for (int k = 0; k < kPairs; ++k) {
        e.start(shared, stream);
        e.start(own, stream);
        e.stop(own, stream);
        e.stop(shared, stream);
      }
    });
  }
  for (auto& w : workers) w.join();
  stop = true;
  h.join();
  rig.fake->complete_all();
  e.flush();
  CHECK(e.pending() == 0);
  CHECK(e.durations(e.timer_id("shared")).size() == kThreads * kPairs);
  for (int i = 0; i < kThreads; ++i) {
    CHECK(e.durations(e.timer_id("own" + std::to_string(i))).size() == kPairs);
  }
  e.close();
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->bad_frees() == 0);
  CHECK(rig.fake->discarded() == 0);
}

TEST_CASE("threads run busy scopes and ops while another harvests: counts add up") {
  Rig rig(/*synchronous=*/false, /*capacity=*/kThreads * kPairs * 4);
  auto& e = *rig.engine;
  std::atomic<bool> stop{false};
  std::thread h = harvester(rig, stop);
  std::vector<std::thread> workers;
  for (int i = 0; i < kThreads; ++i) {
    workers.emplace_back([&e, i] {
      const auto stream = static_cast<std::uintptr_t>(100 + i);
      const int sec = e.timer_id("sec" + std::to_string(i));
      const int op = e.timer_id("op");
      e.set_busy(sec, true);
      for (int k = 0; k < kPairs; ++k) {
        e.start(sec, stream);
        for (int j = 0; j < 3; ++j) {
          const long long token = e.op_begin(stream);
          e.op_end(token, op, stream);
        }
        if (k % 7 == 0) e.comm_end(stream);
        e.stop(sec, stream);
      }
    });
  }
  for (auto& w : workers) w.join();
  stop = true;
  h.join();
  rig.fake->complete_all();
  e.flush();
  CHECK(e.pending() == 0);
  CHECK(e.open_scopes() == 0);
  CHECK(e.durations(e.timer_id("op")).size() == kThreads * kPairs * 3);
  long long idle = 0;
  for (const auto& [name, n] : e.idle_entries()) idle += n;
  std::size_t entries = 0;
  for (int i = 0; i < kThreads; ++i) {
    entries += e.durations(e.timer_id("sec" + std::to_string(i))).size();
  }
  CHECK(entries + static_cast<std::size_t>(idle) == kThreads * kPairs);
  CHECK(idle == 0);  // every entry had three ops
  e.close();
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->bad_frees() == 0);
}
