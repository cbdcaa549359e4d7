// Start/stop pairs: stored once both marks completed, in or out of order, never lost or counted
// twice; marks go back to the backend exactly once; the ring keeps the newest samples.
#include <stdexcept>
#include <vector>

#include "doctest/doctest.h"
#include "rig.h"

using straggler::HarvestScope;

TEST_CASE("a synchronous backend stores the pair at stop()") {
  Rig rig(/*synchronous=*/true);
  auto& e = *rig.engine;
  const int t = e.timer_id("step");
  rig.fake->set_now(1.0);
  e.start(t, 0);
  rig.fake->set_now(3.5);
  e.stop(t, 0);
  CHECK(e.pending() == 0);
  CHECK(e.durations(t) == std::vector<double>{2.5});
  CHECK(rig.fake->recorded() == 2);
}

TEST_CASE("an asynchronous pair waits for both marks, then is stored once") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("step");
  const auto first = rig.fake->next_id();
  rig.fake->set_now(10.0);
  e.start(t, 7);
  rig.fake->set_now(14.0);
  e.stop(t, 8);
  CHECK(e.pending() == 1);
  CHECK(e.harvest() == 0);  // neither mark complete
  rig.fake->complete(first + 1);
  CHECK(e.harvest() == 0);  // the start mark still runs (another, slower stream)
  rig.fake->complete(first);
  CHECK(e.harvest() == 1);
  CHECK(e.harvest() == 0);  // never twice
  CHECK(e.pending() == 0);
  CHECK(e.durations(t) == std::vector<double>{4.0});
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->bad_frees() == 0);
}

TEST_CASE("pairs completing out of order are each stored when theirs completes") {
  Rig rig;
  auto& e = *rig.engine;
  const int a = e.timer_id("a");
  const int b = e.timer_id("b");
  const auto first = rig.fake->next_id();
  rig.fake->set_now(0.0);
  e.start(a, 1);  // marks first, first + 1
  rig.fake->set_now(1.0);
  e.stop(a, 1);
  rig.fake->set_now(2.0);
  e.start(b, 2);  // marks first + 2, first + 3
  rig.fake->set_now(5.0);
  e.stop(b, 2);
  rig.fake->complete(first + 2);
  rig.fake->complete(first + 3);
  CHECK(e.harvest() == 1);  // b, behind the unfinished a
  CHECK(e.durations(b) == std::vector<double>{3.0});
  CHECK(e.durations(a).empty());
  CHECK(e.pending() == 1);
  rig.fake->complete_all();
  CHECK(e.harvest() == 1);
  CHECK(e.durations(a) == std::vector<double>{1.0});
  CHECK(rig.fake->live() == 0);
}

TEST_CASE("a pair that never completes stays pending and is released at close()") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("hung");
  e.start(t, 0);
  e.stop(t, 0);
  for (int i = 0; i < 3; ++i) CHECK(e.harvest() == 0);
  CHECK(e.pending() == 1);
  const auto s = e.summaries();
  CHECK(s.names.empty());
  e.close();
  CHECK(e.closed());
  CHECK(rig.fake->live() == 0);
  CHECK(rig.fake->discarded() == 0);
  CHECK(rig.fake->closes() == 1);
  e.close();  // idempotent
  CHECK(rig.fake->closes() == 1);
  CHECK(rig.fake->bad_frees() == 0);
}

TEST_CASE("a start left open is released at close()") {
  Rig rig;
  auto& e = *rig.engine;
  e.start(e.timer_id("open"), 0);
  e.close();
  CHECK(rig.fake->live() == 0);
  CHECK_THROWS_AS(e.start(0, 0), std::runtime_error);
  CHECK(e.harvest() == 0);
}

TEST_CASE("a timer is open once per thread") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("x");
  CHECK_THROWS_WITH_AS(e.stop(t, 0), doctest::Contains("was not started in this thread"),
                       std::invalid_argument);
  e.start(t, 0);
  CHECK_THROWS_WITH_AS(e.start(t, 0), doctest::Contains("already started in this thread"),
                       std::invalid_argument);
  e.stop(t, 0);
  CHECK_THROWS_WITH_AS(e.start(99, 0), doctest::Contains("`timer=99`"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(e.timer_id(""), doctest::Contains("`name=''`"), std::invalid_argument);
}

TEST_CASE("timer ids are stable, in order of first use") {
  Rig rig;
  auto& e = *rig.engine;
  CHECK(e.timer_id("a") == 0);
  CHECK(e.timer_id("b") == 1);
  CHECK(e.timer_id("a") == 0);
  CHECK(e.timer_name(1) == "b");
  CHECK(std::string(e.backend()) == "fake");
}

TEST_CASE("the ring keeps the newest `capacity` samples; reset() starts a new window") {
  Rig rig(/*synchronous=*/true, /*capacity=*/3);
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  for (int i = 1; i <= 5; ++i) {
    rig.fake->set_now(0.0);
    e.start(t, 0);
    rig.fake->set_now(static_cast<double>(i));
    e.stop(t, 0);
  }
  CHECK(e.capacity() == 3);
  CHECK(e.durations(t) == std::vector<double>{3.0, 4.0, 5.0});
  e.reset();
  CHECK(e.durations(t).empty());
  CHECK(e.summaries().names.empty());
}

TEST_CASE("pairs stopped before reset() land in the next window") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  e.start(t, 0);
  e.stop(t, 0);
  e.reset();
  rig.fake->complete_all();
  CHECK(e.summaries().names == std::vector<std::string>{"t"});
}

TEST_CASE("stop() harvests the head of the queue once 256 pairs are pending") {
  Rig rig(/*synchronous=*/false, /*capacity=*/1 << 12);
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  rig.fake->set_complete_on_record(true);  // the GPU keeps up
  for (int i = 0; i < 1000; ++i) {
    e.start(t, 0);
    e.stop(t, 0);
    CHECK(e.pending() < straggler::kAutoHarvestPending);
  }
  CHECK(e.durations(t).size() + e.pending() == 1000);
  CHECK(rig.fake->live() == static_cast<int>(2 * e.pending()));
}

TEST_CASE("the head harvest stops at the first unfinished pair") {
  Rig rig(/*synchronous=*/false, /*capacity=*/1 << 12);
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  e.start(t, 0);
  e.stop(t, 0);  // never completes
  rig.fake->set_complete_on_record(true);
  for (std::size_t i = 1; i < 2 * straggler::kAutoHarvestPending; ++i) {
    e.start(t, 0);
    e.stop(t, 0);
  }
  CHECK(e.durations(t).empty());  // all behind the unfinished head
  CHECK(e.pending() == 2 * straggler::kAutoHarvestPending);
  CHECK(e.harvest() == 2 * straggler::kAutoHarvestPending - 1);  // harvest() looks at all
  CHECK(e.pending() == 1);
}

TEST_CASE("flush() waits on this engine's marks (not holding its lock) and harvests") {
  Rig rig;
  auto& e = *rig.engine;
  const int t = e.timer_id("t");
  e.start(t, 1);
  e.stop(t, 1);
  e.start(t, 1);
  e.stop(t, 2);  // start and stop on different streams: both are waited on
  e.flush();
  CHECK(rig.fake->waits() == 3);
  CHECK(e.pending() == 0);
  CHECK(e.durations(t).size() == 2);
  CHECK(rig.fake->live() == 0);
}

TEST_CASE("bad arguments are rejected, naming the value") {
  CHECK_THROWS_WITH_AS(straggler::TimerEngine(std::make_unique<fake::FakeBackend>(), 0),
                       doctest::Contains("`capacity=0`"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(straggler::TimerEngine(std::make_unique<fake::FakeBackend>(), 1LL << 25),
                       doctest::Contains("must be an integer in [1, 16777216]"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(straggler::TimerEngine(nullptr, 8), doctest::Contains("`backend=nullptr`"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(straggler::TimerEngine("gpu", 8, 0), doctest::Contains("`backend='gpu'`"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(straggler::TimerEngine("host", 8, -1), doctest::Contains("`device=-1`"),
                       std::invalid_argument);
}

TEST_CASE("the backend is chosen by kind") {
  CHECK(straggler::parse_backend_kind("auto") == straggler::BackendKind::kAuto);
  CHECK(straggler::parse_backend_kind("cuda") == straggler::BackendKind::kCuda);
  CHECK(straggler::parse_backend_kind("host") == straggler::BackendKind::kHost);
  straggler::TimerEngine host(straggler::BackendKind::kHost, 8, 0);
  CHECK(std::string(host.backend()) == "host");
  const int t = host.timer_id("t");
  host.start(t, 0);
  host.stop(t, 0);
  CHECK(host.durations(t).size() == 1);
  CHECK(host.durations(t)[0] >= 0.0);
}
